#!/bin/sh
# The report's words on the command line: a --template whose own '@phrase' blocks reword the
# verdict box, and the errors of a phrase (unknown phrase, unknown placeholder, a placeholder the
# phrase does not have, a wrong number of cells), each with file:line, which write nothing; each
# problem said once, and the first 20 of a file, then how many more.
. tests/cli/common.inc

# text PDF: the PDF's text on one line, every run of white space one space.
text() { pdftotext "$1" - 2>/dev/null | tr -s '[:space:]' ' '; }

cat >"$T/mine.tmpl" <<'TMPL'
# {{name}}

@table verdict

% The scenario's own words for the verdict box.
@phrase verdict_oom
Out of memory: {{peak}} needed,
{{budget}} at hand

@phrase verdict_body_oom
{{fix_sentence}} That leaves {{headroom}}.
TMPL
# The lesson's numbers under --peak lesson (doc/model.md 9.4, 9.5); by default the verdict box
# has phrases of its own, with the step's peak and its phase.
cat >"$T/mine-step.tmpl" <<'TMPL'
# {{name}}

@table verdict

@phrase verdict_step_oom
OOM: {{peak}}, {{peak_phase}}
TMPL
expect_status "a template with its own phrases, the step's peak" 0 report --template "$T/mine-step.tmpl" configs/examples.csv -o "$T/s"
text "$T/s/report.pdf" >"$T/s.txt"
check "the verdict box reworded, with the step's peak" grep -qF "OOM: 120.2 GB, the start of the backward pass" "$T/s.txt"
expect_status "a template with its own phrases" 0 report --peak lesson --template "$T/mine.tmpl" configs/examples.csv -o "$T/r"
text "$T/r/report.pdf" >"$T/r.txt"
check "the verdict box reworded" grep -qF "Out of memory: 116.1 GB needed, 68.0 GB at hand" "$T/r.txt"
check "its body reworded" grep -qF "peak 51.7 GB at micro-batch 8; no extra compute or traffic in the cost model. That leaves 48.1 GB over the budget." "$T/r.txt"
check "the shipped sentence gone" sh -c "! grep -qF 'Does not fit' '$T/r.txt'"
check "the phrases not redefined stay" grep -qF "Fits: peak 51.7 GB ≤ budget 68.0 GB" "$T/r.txt"
check "the summary keeps its words" sh -c "pdftotext -layout -f 1 -l 1 '$T/r/report.pdf' - | tr -s '[:space:]' ' ' | grep -qF 'scenario GPUs verdict peak budget cheapest fix'"

cp "$T/r/report.pdf" "$T/before.pdf"
bad() { # NAME LINE MESSAGE TEMPLATE-TEXT: exit 2, MESSAGE at $T/bad.tmpl:LINE, nothing written
    printf '%s' "$4" >"$T/bad.tmpl"
    expect_status "$1: exit 2" 2 report --template "$T/bad.tmpl" configs/examples.csv -o "$T/r"
    expect_err "$1: the message" "$T/bad.tmpl:$2: $3"
    check "$1: the previous report untouched" cmp "$T/r/report.pdf" "$T/before.pdf"
}
bad "an unknown phrase" 3 "unknown phrase 'verdict_omm' (did you mean 'verdict_oom'?)" \
    '# {{name}}

@phrase verdict_omm
Out of memory
'
bad "an unknown placeholder in a phrase" 4 "unknown placeholder '{{peek}}' (did you mean '{{peak}}'?)" \
    '# {{name}}
@phrase verdict_oom
Out of memory:
{{peek}} needed
'
bad "a placeholder the phrase does not have" 2 "unknown placeholder '{{peak}}'" \
    '@phrase headroom_over
{{peak}} over the budget
'
bad "a wrong number of cells" 1 "phrase 'terms_columns' has 3 cells, needs 5 (separated by '|')" \
    '@phrase terms_columns
term | formula | bytes
'
bad "a phrase defined twice" 4 "phrase 'title' defined twice (first on line 1)" \
    '@phrase title
A

@phrase title
B
'
check "no file but the report" test "$(ls -A "$T/r" | wc -l)" -eq 1

# One problem, one message: a phrase's placeholder repeated on its line, a placeholder among a
# directive's words (it was said twice, or as two problems).
printf '# {{name}}\n\n@phrase verdict_oom\n{{peek}} needed, {{peek}} at hand\n\n@phrase title {{x}}\n' \
    >"$T/twice.tmpl"
expect_status "a repeated error: exit 2" 2 report --template "$T/twice.tmpl" configs/examples.csv -o "$T/r"
check "... said once" test "$(grep -c "twice.tmpl:4: unknown placeholder '{{peek}}'" "$T/err")" -eq 1
expect_err "... the directive's problem said" \
    "twice.tmpl:6: '@phrase title': the phrase's text goes on the lines below"
check "... and nothing else" test "$(wc -l <"$T/err")" -eq 2

# 100,000 errors: the first 20, then how many more, in one line; nothing written.
awk 'BEGIN { for (i = 0; i < 100000; i++) print "{{peek}}" }' >"$T/many.tmpl"
expect_status "100,000 errors in a template: exit 2" 2 report --template "$T/many.tmpl" configs/examples.csv -o "$T/r"
check "... 21 lines" test "$(wc -l <"$T/err")" -eq 21
expect_err "... the first with its line" "many.tmpl:1: unknown placeholder '{{peek}}'"
check "... the last says how many more" \
    test "$(tail -n 1 "$T/err")" = "memfit: ... and 99980 more errors in $T/many.tmpl"
check "... the previous report untouched" cmp "$T/r/report.pdf" "$T/before.pdf"
