#!/bin/sh
# memfit figures on the command line: the files it writes into --out, and the exit status of each
# outcome (an invalid SOURCE_DATE_EPOCH among them: the variable reaches figures_write). The files
# themselves are tests/draw/test_figures.c's; their looks are tests/cli/golden.sh's.
. tests/cli/common.inc

expect_status "figures into a new nested folder: exit 0" 0 figures -o "$T/a/b"
check "fifteen files" test "$(ls -A "$T/a/b" | wc -l)" -eq 15
expect_status "an unwritable folder: exit 2" 2 figures -o /dev/null/figs
expect_err "says which" "/dev/null/figs"
expect_status "figures takes no file: exit 2" 2 figures x.csv
export SOURCE_DATE_EPOCH=abc
expect_status "an invalid SOURCE_DATE_EPOCH: exit 2, as for the report" 2 figures -o "$T/d"
expect_err "says so" "SOURCE_DATE_EPOCH: 'abc'"
check "nothing written" test ! -e "$T/d"

# Options of other commands are usage errors, and write nothing.
expect_status "figures --split: exit 2" 2 figures --split -o "$T/e"
expect_err "says whose option it is" "--split is not an option of figures (it is one of report)"
check "nothing written" test ! -e "$T/e"
expect_status "figures -h: its own help" 0 figures -h
expect_out "its usage" "usage: memfit figures [OPTIONS]"
