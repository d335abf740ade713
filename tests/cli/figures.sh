#!/bin/sh
# memfit figures: the lesson's five figures as PNG, SVG and PDF, byte-identical on every run.
. tests/cli/common.inc

expect_status "figures into a new folder" 0 figures -o "$T/a/b"
check "fifteen files" test "$(ls "$T/a/b" | wc -l)" -eq 15
for f in step-timeline params-per-layer layer-walk checkpoint-k does-it-fit; do
    check "$f.png is a PNG" sh -c "file '$T/a/b/$f.png' | grep -q 'PNG image'"
    check "$f.svg is SVG" grep -q '<svg' "$T/a/b/$f.svg"
    check "$f.pdf passes qpdf --check" sh -c "qpdf --check '$T/a/b/$f.pdf' >/dev/null"
done
expect_status "figures again" 0 figures -q -o "$T/c"
check "byte-identical on a second run" diff -r "$T/a/b" "$T/c"
check "the does-it-fit PDF shows the lesson's numbers" sh -c "pdftotext '$T/c/does-it-fit.pdf' - | grep -q '116.1'"
check "fonts embedded" sh -c "pdffonts '$T/c/step-timeline.pdf' | grep -q 'DejaVuSans.*yes'"
expect_status "an unwritable folder: exit 2" 2 figures -o /dev/null/figs
expect_err "says why" "/dev/null/figs"
expect_status "figures takes no file" 2 figures x.csv
SOURCE_DATE_EPOCH=abc run figures -o "$T/d" >"$T/out" 2>"$T/err"
check "an invalid SOURCE_DATE_EPOCH: exit 2, as for the report" test $? -eq 2
expect_err "says so" "SOURCE_DATE_EPOCH: 'abc' is not a number of seconds since 1970"
SOURCE_DATE_EPOCH=1700000000 run figures -q -o "$T/e"
check "SOURCE_DATE_EPOCH sets the PDF date" sh -c "pdfinfo '$T/e/does-it-fit.pdf' | grep -q 'CreationDate:.*Nov 14 .*2023'"
check "no temporary file left" test "$(ls -A "$T/e" | grep -c tmp)" -eq 0
