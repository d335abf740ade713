#!/bin/sh
# memfit report on the command line: the PDF, --split, --paper, templates, exit status.
. tests/cli/common.inc

expect_status "report of the examples" 0 report configs/examples.csv -o "$T/r"
check "report.pdf written" test -s "$T/r/report.pdf"
check "qpdf --check passes" sh -c "qpdf --check '$T/r/report.pdf' >/dev/null"
check "DejaVu Sans embedded" sh -c "pdffonts '$T/r/report.pdf' | grep -q 'DejaVuSans.*yes *yes *yes'"
pdftotext "$T/r/report.pdf" "$T/r/report.txt" 2>"$T/pdftotext.err"
check "pdftotext without warnings" test ! -s "$T/pdftotext.err"
for want in 116.1 51.7 27.0 35.6 20.3 1,311,528,960 'Ψ' '≤' '×' '√' lesson-1.3b llama3-70b-8xh200; do
    check "the text has $want" grep -qF -- "$want" "$T/r/report.txt"
done
check "A4 pages" sh -c "pdfinfo '$T/r/report.pdf' | grep -q 'Page size: *595.* x 841.*'"
check "a document title" sh -c "pdfinfo '$T/r/report.pdf' | grep -q '^Title: *GPU memory capacity report'"
check "no temporary file left" test "$(ls -A "$T/r" | wc -l)" -eq 2

expect_status "same input, same bytes" 0 report configs/examples.csv -o "$T/r2"
check "byte-identical" cmp "$T/r/report.pdf" "$T/r2/report.pdf"

expect_status "--split and --paper letter" 0 report --split --paper letter configs/examples.csv -o "$T/s"
check "one PDF per scenario and the combined one" test "$(ls "$T/s"/*.pdf | wc -l)" -eq 13
check "letter pages" sh -c "pdfinfo '$T/s/report.pdf' | grep -q 'Page size: *612 x 792'"
check "split names are the scenario names" test -s "$T/s/lesson-1.3b-8x40-zero2.pdf"

printf 'name,model,seq,micro_batch,gpu_mem_gb\n../../etc/passwd,gpt-1.3b,2048,8,80\n.hidden,gpt-1.3b,2048,8,80\n' >"$T/evil.csv"
expect_status "hostile names" 0 report --split "$T/evil.csv" -o "$T/e"
check "nothing written outside --out" test ! -e "$T/etc"
check "no file name starts with a dot" test "$(ls -A "$T/e" | grep -c '^\.')" -eq 0
check "three files" test "$(ls "$T/e" | wc -l)" -eq 3

printf '# {{name}}\n{{peek}}\n@chart fit\n' >"$T/bad.tmpl"
echo "old" >"$T/r/keep"
cp "$T/r/report.pdf" "$T/before.pdf"
expect_status "a bad template: exit 2" 2 report --template "$T/bad.tmpl" configs/examples.csv -o "$T/r"
expect_err "template error with its line" "$T/bad.tmpl:2: unknown placeholder '{{peek}}' (did you mean '{{peak}}'?)"
check "the previous report is untouched" cmp "$T/r/report.pdf" "$T/before.pdf"

cat >"$T/mixed.csv" <<'CSV'
name,model,seq,micro_batch,gpu_mem_gb
ok,gpt-1.3b,2048,8,80
bad,gpt-1.3b,-1,8,80
CSV
expect_status "a rejected row: exit 1, the rest reported" 1 report "$T/mixed.csv" -o "$T/m"
check "the report still written" test -s "$T/m/report.pdf"
expect_status "an unwritable folder: exit 2" 2 report configs/examples.csv -o /dev/null/x
expect_status "a nested new folder is made" 0 report -q configs/examples.csv -o "$T/n/e/s/t"
check "report in the nested folder" test -s "$T/n/e/s/t/report.pdf"
