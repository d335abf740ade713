#!/bin/sh
# memfit report on the command line: the files it writes (--out, --split), what --paper and
# SOURCE_DATE_EPOCH reach, and the exit status of each outcome. The document itself is
# tests/report/test_report.c's; its words and its looks are tests/cli/golden.sh's.
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

# ---- -o FILE.pdf, and what was written said on stderr ----
expect_status "-o FILE.pdf into a new folder: exit 0" 0 report "$T/two.csv" -o "$T/p/q/review.pdf"
check "exactly that file" test "$(ls -A "$T/p/q")" = "review.pdf"
pages=$(pdfinfo "$T/p/q/review.pdf" | sed -n 's/^Pages: *//p')
expect_err "says what it wrote: path, pages, scenarios" "memfit: wrote $T/p/q/review.pdf ($pages pages, 2 scenarios)"
check "one line on stderr" test "$(wc -l <"$T/err")" -eq 1
check "nothing on stdout" test ! -s "$T/out"
expect_status "-o FILE.PDF, any case" 0 report -q "$T/two.csv" -o "$T/p/UPPER.PDF"
check "that file" test -s "$T/p/UPPER.PDF"
expect_status "-q: exit 0" 0 report -q "$T/two.csv" -o "$T/p/quiet.pdf"
check "-q: nothing said" test ! -s "$T/err"
mkdir -p "$T/folder.pdf"
expect_status "-o an existing folder named .pdf stays a folder" 0 report "$T/two.csv" -o "$T/folder.pdf"
check "report.pdf inside it" test -s "$T/folder.pdf/report.pdf"
expect_err "says so" "memfit: wrote $T/folder.pdf/report.pdf ("
expect_status "--split -o FILE.pdf: exit 2" 2 report --split "$T/two.csv" -o "$T/p/s.pdf"
expect_err "--split needs a folder" "--split writes a file per scenario: -o names their folder, not '$T/p/s.pdf'"
check "nothing written" test ! -e "$T/p/s.pdf"
expect_status "--split into a folder: exit 0" 0 report --split "$T/two.csv" -o "$T/sp"
expect_err "the combined report" "memfit: wrote $T/sp/report.pdf ("
expect_err "and the scenarios' own files" "memfit: wrote 2 reports of one scenario into $T/sp ("
m=$(cd "$(dirname "$MEMFIT")" && pwd)/$(basename "$MEMFIT")
(cd "$T" && $VALGRIND "$m" report -q two.csv -o here.pdf) >"$T/out" 2>"$T/err"
check "-o FILE.pdf without a folder: the current one" test -s "$T/here.pdf"

# ---- the progress bar counts the scenarios drawn, not the bytes read ----
expect_status "--progress always" 0 report --progress always "$T/two.csv" -o "$T/pr"
expect_err "half way after the first of two scenarios" "$T/pr/report.pdf [###############               ]  50%"
expect_err "done after the second" "$T/pr/report.pdf [##############################] 100%"
expect_status "--progress always --split" 0 report --split --progress always "$T/two.csv" -o "$T/pr"
expect_err "four sections: a quarter after the first" " 25%"
check "the message on the line after the bar's" \
    sh -c "grep -A1 '100%\$' '$T/err' | tail -n 1 | grep -q '^memfit: wrote $T/pr/report.pdf'"
expect_status "--progress auto off a terminal" 0 report "$T/two.csv" -o "$T/pr"
check "no bar" sh -c "! grep -q '%' '$T/err'"

# ---- nothing fits: what does not (doc/model.md 11.3), with correct counts and plurals ----
printf 'name,model,seq,micro_batch,gpu,dp,zero\nacts2,gpt2-small,1048576,1,L4-24GB,2,3\nacts1,gpt2-small,1048576,1,L4-24GB,1,0\nstates,llama2-70b,4096,1,H100-80GB,1,0\n' >"$T/nothing.csv"
expect_status "nothing fits: exit 0" 0 report "$T/nothing.csv" -o "$T/nothing.pdf"
pdftotext "$T/nothing.pdf" - | tr -s '[:space:]' ' ' >"$T/nothing.txt"
check "2 GPUs with ZeRO-3: the activations, on these 2 GPUs" \
    grep -q 'The model states, fully sharded, would fit on these 2 GPUs of 24.2 GB; the activations do not' "$T/nothing.txt"
check "one GPU: this GPU" \
    grep -q 'would fit on this GPU of 24.2 GB; the activations do not' "$T/nothing.txt"
check "the states: the GPUs they need" \
    grep -q 'The model states alone, fully sharded, need at least 13 GPUs of ' "$T/nothing.txt"
check "the summary names the activations" grep -q 'none fits (activations)' "$T/nothing.txt"
check "the summary names the states' GPUs" grep -q 'none fits (states need 13 GPUs)' "$T/nothing.txt"
check "no '1 GPUs'" sh -c "! grep -q ' 1 GPUs' '$T/nothing.txt'"

# ---- the fix's notes, never applied (doc/model.md 11.6): 8-bit Adam's, and FP8's where the GPU
# has FP8 tensor cores and the row trains without FP8 ----
printf 'name,model,seq,micro_batch,global_batch,attention,dp,gpu,fp8\nh100,llama3-8b,8192,8,8,flash,1,H100-80GB,\nh100-fp8,llama3-8b,8192,8,8,flash,1,H100-80GB,tensor\na100,llama3-8b,8192,8,8,flash,1,A100-80GB,\n' >"$T/notes.csv"
expect_status "notes: exit 0" 0 report --split "$T/notes.csv" -o "$T/notes"
for n in h100 h100-fp8 a100; do pdftotext "$T/notes/$n.pdf" - | tr -s '[:space:]' ' ' >"$T/notes-$n.txt"; done
check "h100: both notes" grep -q "; 8-bit Adam would take [0-9.]* GB off the peak, and FP8 training would take [0-9.]* GB off the peak, [0-9.]* s off each step (not applied: they change the training's arithmetic)\." "$T/notes-h100.txt"
check "h100-fp8: 8-bit Adam's alone" grep -q "; 8-bit Adam would take [0-9.]* GB off the peak (not applied: it changes the training's arithmetic)\." "$T/notes-h100-fp8.txt"
check "a100: no FP8 note" sh -c "grep -q '8-bit Adam would take' '$T/notes-a100.txt' && ! grep -q 'FP8 training would take' '$T/notes-a100.txt'"
