#!/bin/sh
# Golden files: eval of the examples in every format and the report's text (pdftotext), compared
# with tests/golden/; GOLDEN_UPDATE=1 (make golden-update) rewrites them for review in the diff.
. tests/cli/common.inc

golden() { # NAME FILE: compare FILE with tests/golden/NAME
    if [ -n "${GOLDEN_UPDATE:-}" ]; then cp "$2" "tests/golden/$1"; fi
    if cmp -s "$2" "tests/golden/$1"; then echo "ok golden $1"; else
        echo "not ok golden $1 (make golden-update rewrites it)"
        diff "tests/golden/$1" "$2" | head -10 | sed 's/^/# /'
    fi
}

for fmt in csv json table; do
    run eval --format $fmt configs/examples.csv >"$T/eval.$fmt" 2>"$T/err"
    golden "eval-examples.$fmt" "$T/eval.$fmt"
done
run report -q configs/examples.csv -o "$T/r" && pdftotext -layout "$T/r/report.pdf" "$T/report.txt"
golden "report-examples.txt" "$T/report.txt"
