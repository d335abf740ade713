#!/bin/sh
# Nothing a reviewer needs is cut: no cell of the tables of the examples' report or of the
# search report of configs/jobs.csv ends in an ellipsis (a long value wraps onto more lines,
# doc.h), and the long values that were once cut are there whole.
. tests/cli/common.inc

expect_status "report of the examples: exit 0" 0 report -q configs/examples.csv -o "$T/r"
pdftotext "$T/r/report.pdf" "$T/report.txt"
check "no ellipsis anywhere in the report" sh -c "! grep -q '…' '$T/report.txt'"
tr -s ' \n' '  ' <"$T/report.txt" >"$T/report.flat"
check "a long formula whole: kept tensors in the step's dtypes" \
    grep -qF "A = 114.0 sbh, kept tensors in the step's dtypes" "$T/report.flat"
check "a long parallelism whole" grep -qF "dp=2048, tp=1, pp=1, ep=64, ZeRO-1" "$T/report.flat"

expect_status "search --report of configs/jobs.csv: exit 0" 0 \
    search --top 3 --report "$T/s.pdf" configs/jobs.csv
pdftotext "$T/s.pdf" "$T/search.txt"
check "no ellipsis anywhere in the search report" sh -c "! grep -q '…' '$T/search.txt'"
tr -s ' \n' '  ' <"$T/search.txt" >"$T/search.flat"
check "the search report's headers whole" grep -qF "dp ZeRO attention recompute" "$T/search.flat"
