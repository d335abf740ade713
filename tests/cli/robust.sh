#!/bin/sh
# memfit against hostile or extreme input (issue 13): rows the planner and the charts cannot
# handle, unreadable files among readable ones, control characters, a killed run's temporary
# files, a word longer than a page in a template. Each check failed before its fix.
. tests/cli/common.inc

ESC=$(printf '\033')

# A row that fits as given, but not the ladder's full checkpointing (5as^2b comes back): rejected
# with its column, and the other scenarios are reported.
cat >"$T/big.csv" <<'CSV'
name,layers,hidden,heads,vocab,seq,micro_batch,recompute,gpu_mem_gb
big,24,16,16,32000,600000000,2,selective,80
ok,24,2048,16,50257,2048,1,full,80
CSV
expect_status "a row the ladder overflows on: eval exits 1" 1 eval "$T/big.csv"
expect_err "it names the column" "$T/big.csv:2: column 'seq': '600000000' is so large"
expect_out "the other row is evaluated" "ok,1311528960,"
expect_status "the same in a report: exit 1" 1 report "$T/big.csv" -o "$T/big"
check "the other scenario is written" test -s "$T/big/report.pdf"

# An unreadable file among readable ones: the readable ones are reported, exit 2 (as eval).
printf 'name,model,seq,micro_batch,gpu_mem_gb\nfine,gpt-1.3b,2048,8,80\n' >"$T/good.csv"
expect_status "report good.csv missing.csv: exit 2" 2 report "$T/good.csv" "$T/missing.csv" \
    -o "$T/partial"
expect_err "the missing file named" "$T/missing.csv: cannot open"
check "the readable file is reported" test -s "$T/partial/report.pdf"

# Control characters from cells and headers are shown escaped, never sent to the terminal.
printf 'name,model,seq,micro_batch,gpu_mem_gb,x%s]0;owned\007\n' "$ESC" >"$T/ctl-head.csv"
printf 'a,gpt-1.3b,2048,8,80,1\n' >>"$T/ctl-head.csv"
expect_status "a header with control characters: exit 1" 1 eval "$T/ctl-head.csv"
expect_err "shown escaped" "unknown column 'x\\x1b]0;owned\\x07'"
check "no escape character on stderr" sh -c "! grep -q '$ESC' '$T/err'"
printf 'name,model,seq,micro_batch,gpu_mem_gb\n"t%s[2J",gpt-1.3b,2048,8,80\n' "$ESC" >"$T/ctl.csv"
printf '"t%s[2J",gpt-1.3b,2048,8,80\n' "$ESC" >>"$T/ctl.csv"
expect_status "a duplicate name with control characters: exit 1" 1 eval --format table "$T/ctl.csv"
expect_err "the message escapes it" "column 'name': 't\\x1b[2J' is a duplicate"
check "no escape character on stderr" sh -c "! grep -q '$ESC' '$T/err'"
check "the table escapes it" grep -qF 't\x1b[2J' "$T/out"
check "no escape character in the table" sh -c "! grep -q '$ESC' '$T/out'"

# A NUL byte in a cell rejects its row ("2\0" was read as 2).
printf 'name,model,seq,micro_batch,gpu_mem_gb\nn,gpt-1.3b,2048,8\00000,80\nm,gpt-1.3b,2048,8,80\n' \
    >"$T/nul.csv"
expect_status "a NUL byte in a cell: exit 1" 1 eval "$T/nul.csv"
expect_err "located" "$T/nul.csv:2: column 'micro_batch': the cell holds a NUL byte"
check "the other row is evaluated" grep -q '^m,' "$T/out"

# A killed run's temporary files are removed by the next run into the folder; nothing else is.
mkdir -p "$T/tmp"
: >"$T/tmp/.memfit-tmp-AbC123"
: >"$T/tmp/.memfit-tmp-keep.me"
touch -d '2 hours ago' "$T/tmp/.memfit-tmp-AbC123" "$T/tmp/.memfit-tmp-keep.me"
expect_status "a report into a folder with a killed run's file" 0 report "$T/good.csv" -o "$T/tmp"
check "the stale temporary file is gone" test ! -e "$T/tmp/.memfit-tmp-AbC123"
check "a file of another pattern stays" test -e "$T/tmp/.memfit-tmp-keep.me"
check "the report is there" test -s "$T/tmp/report.pdf"

# A word longer than the page (70,000 characters) in a template: broken into lines, no error.
{
    printf '# {{name}}\n'
    head -c 70000 /dev/zero | tr '\0' 'x'
    printf '\n\n@chart fit\n'
} >"$T/long.tmpl"
expect_status "a 70,000-character word in a template" 0 report --template "$T/long.tmpl" \
    "$T/good.csv" -o "$T/long"
check "written" test -s "$T/long/report.pdf"
