#!/bin/sh
# memfit report on the command line: the files it writes (--out, --split), what --paper and
# SOURCE_DATE_EPOCH reach, and the exit status of each outcome. The document itself is
# tests/unit/test_report.c's; its words and its looks are tests/cli/golden.sh's.
. tests/cli/common.inc

cat >"$T/two.csv" <<'CSV'
name,model,seq,micro_batch,attention,gpu_mem_gb
lesson-1.3b,gpt-1.3b,2048,8,plain,80
lesson-1.3b-flash,gpt-1.3b,2048,8,flash,80
CSV
export SOURCE_DATE_EPOCH=1700000000
expect_status "--split --paper letter into a new nested folder: exit 0" 0 \
    report --split --paper letter "$T/two.csv" -o "$T/n/e/s/t"
unset SOURCE_DATE_EPOCH
check "the combined report and one per scenario, named after it, nothing else" \
    test "$(ls -A "$T/n/e/s/t" | tr '\n' ' ')" = "lesson-1.3b-flash.pdf lesson-1.3b.pdf report.pdf "
check "letter pages" sh -c "pdfinfo '$T/n/e/s/t/report.pdf' | grep -q 'Page size: *612 x 792'"
check "SOURCE_DATE_EPOCH dates the report" \
    grep -aq 'CreationDate (D:20231114221320Z' "$T/n/e/s/t/report.pdf"

printf '# {{name}}\n{{peek}}\n@chart fit\n' >"$T/bad.tmpl"
expect_status "a bad template: exit 2" 2 report --template "$T/bad.tmpl" "$T/two.csv" -o "$T/b"
expect_err "the template error, with its line" "$T/bad.tmpl:2: unknown placeholder"

cat >"$T/mixed.csv" <<'CSV'
name,model,seq,micro_batch,gpu_mem_gb
ok,gpt-1.3b,2048,8,80
bad,gpt-1.3b,-1,8,80
CSV
expect_status "a rejected row: exit 1" 1 report "$T/mixed.csv" -o "$T/m"
expect_err "the row's error, with its line" "$T/mixed.csv:3: column 'seq'"
check "the other rows still reported" test -s "$T/m/report.pdf"
head -n 1 "$T/mixed.csv" >"$T/none.csv" && tail -n 1 "$T/mixed.csv" >>"$T/none.csv"
expect_status "every row rejected: exit 1" 1 report "$T/none.csv" -o "$T/z"
expect_err "says so" "no valid scenario to report"
check "nothing written" test ! -e "$T/z"
expect_status "an unwritable folder: exit 2" 2 report "$T/two.csv" -o /dev/null/x
