#!/bin/sh
# The command line's own behaviour (doc/memfit.1: SYNOPSIS, COMMANDS, OPTIONS, EXIT STATUS): the
# general help and each command's, -h and `help COMMAND`, and the usage errors with what they
# suggest: unknown commands and options, options that do not apply to the command.
. tests/cli/common.inc

# ---- help ----
expect_status "-h" 0 -h
cp "$T/out" "$T/general"
check "-h is the general help" grep -q '^ *memfit help \[COMMAND\]' "$T/out"
expect_status "--help" 0 --help
check "--help is -h" cmp -s "$T/out" "$T/general"
expect_status "help" 0 help
check "help is -h" cmp -s "$T/out" "$T/general"
for c in eval report figures search help; do
    expect_status "help $c" 0 help "$c"
    cp "$T/out" "$T/help-$c"
    check "help $c: its usage first" test "$(head -n 1 "$T/help-$c" | cut -d' ' -f1-3)" = "usage: memfit $c"
    check "help $c: an example" grep -q '^Example:' "$T/help-$c"
    check "help $c: its exit status" grep -q '^Exit status: 0 ' "$T/help-$c"
    check "help $c is not the general help" sh -c "! cmp -s '$T/help-$c' '$T/general'"
    expect_status "$c --help" 0 "$c" --help
    check "$c --help is help $c" cmp -s "$T/out" "$T/help-$c"
    expect_status "$c -h" 0 "$c" -h
    check "$c -h is help $c" cmp -s "$T/out" "$T/help-$c"
done
expect_status "--help before the command" 0 --help report
check "--help report is help report" cmp -s "$T/out" "$T/help-report"
# Each command lists its own options only.
check "help eval: --format" grep -q -- '--format csv|json|table' "$T/help-eval"
check "help eval: not --split" sh -c "! grep -q -- '--split' '$T/help-eval'"
check "help report: --split and --paper" sh -c "grep -q -- '--split' '$T/help-report' && grep -q -- '--paper a4|letter' '$T/help-report'"
check "help report: not --format" sh -c "! grep -q -- '--format' '$T/help-report'"
check "help figures: -o DIR, not --units" sh -c "grep -q -- '-o, --out DIR' '$T/help-figures' && ! grep -q -- '--units' '$T/help-figures'"
check "help eval: -o names a file" grep -q -- '-o, --out FILE' "$T/help-eval"
check "help eval: --peak lesson|step, default step" sh -c "grep -A1 -- '--peak lesson|step' '$T/help-eval' | grep -q '(default step)'"
check "help report: --peak lesson|step, default step" sh -c "grep -A1 -- '--peak lesson|step' '$T/help-report' | grep -q '(default step)'"
check "help figures: not --peak" sh -c "! grep -q -- '--peak' '$T/help-figures'"
check "help report: -o names a folder or a .pdf" grep -q -- '-o, --out DIR|FILE.pdf' "$T/help-report"
check "help report lists the template's placeholders" grep -q 'fix_sentence' "$T/help-report"
check "help report lists the charts" grep -Eq '@chart NAME: fit, (.*, )?step, ' "$T/help-report"
check "no help line passes 80 columns" sh -c "! cat '$T'/help-* '$T/general' | grep -q '.\{81\}'"
expect_status "help of an unknown command: exit 2" 2 help evl
expect_err "suggests the closest" "help: unknown command 'evl' (did you mean 'eval'?)"
check "nothing on stdout" test ! -s "$T/out"
expect_status "help takes one command" 2 help eval report
expect_status "no command: exit 2" 2
check "the usage on stderr" grep -q '^usage: memfit eval' "$T/err"

# ---- usage errors ----
expect_status "an unknown command: exit 2" 2 evl configs/examples.csv
expect_err "suggests the closest command" "unknown command 'evl' (did you mean 'eval'?)"
expect_status "a far unknown command: exit 2" 2 frobnicate
expect_err "lists the commands" "unknown command 'frobnicate' (the commands: eval, report, figures"
expect_status "an unknown option: exit 2" 2 eval --splt configs/examples.csv
expect_err "suggests the closest option" "unknown option '--splt' (did you mean '--split'?)"
expect_err "points to the command's help" "Try 'memfit help eval'."
expect_status "an ambiguous prefix: exit 2" 2 report --p a4 configs/examples.csv
expect_err "names the options it could be" "option '--p' is ambiguous: --price, --paper, --peak, --progress"
expect_status "a prefix of one option only: --pe is --peak" 0 eval --pe lesson configs/examples.csv
expect_status "a unique prefix is the option" 0 eval --form json configs/examples.csv
expect_status "a missing value: exit 2" 2 eval configs/examples.csv --format
expect_err "says which" "option '--format' needs a value"
expect_status "a value for a flag: exit 2" 2 report --split=yes configs/examples.csv
expect_err "says so" "option '--split' takes no value"
expect_status "an unknown short option: exit 2" 2 eval -x configs/examples.csv
expect_err "names it" "unknown option '-x'"
expect_status "eval --split: exit 2" 2 eval --split configs/examples.csv
expect_err "--split is report's" "--split is not an option of eval (it is one of report)"
check "nothing on stdout" test ! -s "$T/out"
expect_status "figures --format: exit 2" 2 figures --format json
expect_err "--format is eval's and search's" "--format is not an option of figures (it is one of eval and search)"
expect_status "figures --units: exit 2" 2 figures --units GiB
expect_err "--units is eval's, report's and search's" "--units is not an option of figures (it is one of eval, report and search)"
expect_status "figures --peak: exit 2" 2 figures --peak step
expect_err "--peak is eval's, report's and search's" "--peak is not an option of figures (it is one of eval, report and search)"
expect_status "a bad --peak: exit 2" 2 report --peak max configs/examples.csv -o "$T/never"
expect_err "lists the choices" "--peak: 'max' is not lesson or step"
check "nothing written" test ! -e "$T/never"
expect_status "report --format, given before the command: exit 2" 2 --format csv report configs/examples.csv
expect_err "--format is not report's" "--format is not an option of report"
expect_status "eval --template: exit 2" 2 eval --template x.tmpl configs/examples.csv
expect_status "eval --wide without the table: exit 2" 2 eval --wide configs/examples.csv
expect_err "--wide is the table's" "--wide is only for --format table"
expect_status "a bad choice: exit 2" 2 eval --units gb2 configs/examples.csv
expect_err "lists the choices" "--units: 'gb2' is not GB or GiB"
expect_status "-q applies to every command" 0 figures -q -o "$T/figs"
expect_status "--version" 0 --version
expect_out "the version" "memfit "
