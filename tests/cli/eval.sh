#!/bin/sh
# memfit eval on the command line: formats, messages, exit status (doc/memfit.1: OPTIONS,
# THE SCENARIO CSV, OUTPUT, EXIT STATUS).
. tests/cli/common.inc

expect_status "examples evaluate" 0 eval configs/examples.csv
check "csv header is the column order of doc/memfit.1" test "$(head -n 1 "$T/out")" = \
"name,params,weights_bytes,grads_bytes,optimizer_bytes,states_bytes,act_layer_bytes,act_bytes,logits_bytes,peak_bytes,budget_bytes,fits,k_best,max_micro_batch,fix,fix_peak_bytes,fix_micro_batch,fix_plan,active_params,expert_bytes,peak_phase,stage,step_time_s,tokens_per_s,mfu,host_node_bytes,fix_step_time_s,fix_time_added_s"
expect_out "worked example row" "lesson-1.3b,1311528960,2623057920,2623057920,15738347520,20984463360,"
check "one row per scenario" test "$(wc -l <"$T/out")" -eq "$(( $(wc -l <configs/examples.csv) ))"

# ---- which peak decides (doc/model.md 10.2): a real step's, the default, or the lesson's ----
cp "$T/out" "$T/step.csv"
# peak NAME FILE: the scenario's peak in GB (one decimal) and its peak_phase, from eval's CSV.
peak() { awk -F, -v n="$1" '$1 == n { printf "%.1f %s", $10 / 1e9, $21 }' "$2"; }
check "default: the worked example's step peak, 120.2 GB at backward_start" \
    test "$(peak lesson-1.3b "$T/step.csv")" = "120.2 backward_start"
check "default: every row names its phase" awk -F, \
    'NR > 1 && $21 !~ /^(forward|backward_start|recompute|backward_end|optimizer)$/ { bad = 1 } END { exit bad }' \
    "$T/step.csv"
check "default: the examples peak at four of the phases" test \
    "$(tail -n +2 "$T/step.csv" | awk -F, '{ print $21 }' | sort -u | tr '\n' ' ')" = \
    "backward_start forward optimizer "
expect_status "--peak step" 0 eval --peak step configs/examples.csv
check "--peak step is the default" cmp -s "$T/out" "$T/step.csv"
expect_status "--peak lesson" 0 eval --peak lesson configs/examples.csv
cp "$T/out" "$T/lesson.csv"
check "--peak lesson: the lesson's 116.1 GB (doc/model.md 9.4), no phase" \
    grep -q '^lesson-1.3b,\([^,]*,\)\{8\}116083032064,68000000000,0,.*,,0,[0-9.e+-]*,[0-9]*,[0-9.]*,0,,$' "$T/lesson.csv"
check "--peak lesson: peak_phase empty in every row" awk -F, 'NR > 1 && $21 != "" { bad = 1 } END { exit bad }' \
    "$T/lesson.csv"
check "--peak lesson: the same header" test "$(head -n 1 "$T/lesson.csv")" = "$(head -n 1 "$T/step.csv")"
check "--peak lesson: the same states" test \
    "$(cut -d, -f1-6 "$T/lesson.csv")" = "$(cut -d, -f1-6 "$T/step.csv")"
check "--peak lesson: largest micro-batch 12 with flash, 62 with full checkpointing (9.7)" test \
    "$(awk -F, '$1 ~ /^lesson-1.3b-flash/ { printf "%s ", $14 }' "$T/lesson.csv")" = "12 62 "
expect_status "--peak=lesson" 0 eval --peak=lesson configs/examples.csv
check "--peak=lesson is --peak lesson" cmp -s "$T/out" "$T/lesson.csv"
expect_status "a bad --peak: exit 2" 2 eval --peak real configs/examples.csv
expect_err "lists the choices" "memfit: --peak: 'real' is not lesson or step"
check "nothing on stdout" test ! -s "$T/out"
expect_status "--peak without a value: exit 2" 2 eval configs/examples.csv --peak
expect_err "says which" "option '--peak' needs a value"

expect_status "table format, --peak lesson" 0 eval --format table --peak lesson configs/examples.csv
expect_out "table shows 116.1 GB" "116.1"
expect_out "table shows 51.7 GB" "51.7"
expect_out "table shows 27.0 GB" "27.0"
expect_out "table shows 35.6 GB" "35.6"
expect_out "table shows 20.3 GB" "20.3"
expect_out "the table says which peak" "peak = states + activations + logits (--peak"
check "no phase column under --peak lesson" sh -c "! grep -q 'phase' '$T/out'"
expect_status "GiB units, --peak lesson" 0 eval --format table --units GiB --peak lesson configs/examples.csv
expect_out "GiB header" "peak GiB"
expect_out "116.1 GB is 108.1 GiB" "108.1"
expect_status "table format" 0 eval --format table configs/examples.csv
check "table shows the step's 120.2 GB" grep -q '^lesson-1.3b  *120.2  *68.0  OOM  *flash (55.8)$' "$T/out"
expect_out "the table says which peak" "peak = the highest phase of a real step"
expect_status "GiB units" 0 eval --format table --units GiB configs/examples.csv
expect_out "120.2 GB is 112.0 GiB" "112.0"

expect_status "json format" 0 eval --format json configs/examples.csv
rows=$(( $(wc -l <configs/examples.csv) - 1 ))
check "json parses with one object a scenario ($rows)" /usr/bin/python3 -c "import json,sys; d=json.load(open('$T/out')); assert len(d)==$rows and d[0]['params']==1311528960 and d[0]['fits'] is False and d[0]['peak_phase'] == 'backward_start'"
expect_status "json format, --peak lesson" 0 eval --format json --peak lesson configs/examples.csv
check "json: peak_phase null under --peak lesson" /usr/bin/python3 -c "import json,sys; d=json.load(open('$T/out')); assert len(d)==$rows and d[0]['peak_bytes']==116083032064 and all(r['peak_phase'] is None for r in d)"

printf 'name,model,seq,micro_batch,gpu_mem_gb\nx,gpt-1.3b,2048,8,80\n' | run eval - >"$T/out" 2>"$T/err"
check "stdin with -" grep -q '^x,1311528960,' "$T/out"

cat >"$T/bad.csv" <<'CSV'
name,model,seq,micro_batch,gpu_mem_gb
good,gpt-1.3b,2048,8,80
bad,gpt-1.3b,abc,8,80
also-good,gpt-1.3b,1024,8,80
CSV
expect_status "a rejected row gives exit 1" 1 eval "$T/bad.csv"
expect_err "FILE:LINE: column message" "memfit: $T/bad.csv:3: column 'seq': 'abc' is not a positive integer"
check "valid rows still written" test "$(grep -c good "$T/out")" -eq 2

printf 'name,modle,seq\nx,gpt-1.3b,1\n' >"$T/unknown.csv"
expect_status "unknown column: exit 1, other files still processed" 1 eval "$T/unknown.csv" configs/examples.csv
expect_err "unknown column suggests" "unknown column 'modle' (did you mean 'model'?)"
check "other file's rows present" grep -q '^lesson-1.3b,' "$T/out"

expect_status "missing file: exit 2" 2 eval "$T/nope.csv"
expect_err "missing file message" "$T/nope.csv: cannot open"
expect_status "no command: exit 2" 2
expect_status "unknown command: exit 2" 2 frobnicate x.csv
expect_err "unknown command message" "unknown command 'frobnicate'"
expect_status "bad --format: exit 2" 2 eval --format xml configs/examples.csv
expect_status "bad --reserve: exit 2" 2 eval --reserve 1.5 configs/examples.csv
expect_status "--help" 0 --help
expect_out "--help lists eval" "memfit eval"
expect_status "--version" 0 --version

expect_status "--reserve changes the budget" 0 eval --reserve 0 configs/examples.csv
expect_out "budget 80 GB" ",80000000000,"
expect_status "quiet suppresses messages" 1 eval -q "$T/bad.csv"
check "quiet stderr is empty" test ! -s "$T/err"

# Every number agrees with an independent implementation of doc/model.md sections 2-8 (exact
# rationals): the lesson's formulas, so memfit runs under --peak lesson there.
/usr/bin/python3 tests/independent/model_ref.py "$MEMFIT" 400 2026 || echo "not ok model_ref.py exited with status $?"

# The planner's columns (doc/model.md section 11), with the lesson's peak and with a real step's.
run eval --peak lesson configs/examples.csv >"$T/out" 2>"$T/err"
check "fits as it is: fix none" grep -q '^lesson-1.3b-flash,.*,none,51683688448,8,,1311528960,0,,0,[0-9.e+-]*,[0-9]*,[0-9.]*,0,,$' "$T/out"
check "worked example (doc/model.md 9.5): the cheapest fix is flash at 51.7 GB" grep -q '^lesson-1.3b,.*,flash,51683688448,8,attention=flash gpus=1,1311528960,0,,0,[0-9.e+-]*,[0-9]*,[0-9.]*,0,,$' "$T/out"
check "the lesson's ladder (9.8): 8 x 40 GB, ZeRO-2 at 35.6 GB" grep -q '^lesson-1.3b-8x40-dp,.*,zero2,35617458688,8,zero=2 gpus=8,1311528960,0,,0,[0-9.e+-]*,[0-9]*,[0-9.]*,0,,$' "$T/out"
run eval configs/examples.csv >"$T/out" 2>"$T/err"
check "step: the fix is still flash, at 55.8 GB, the step's peak" \
    sh -c "awk -F, '\$1 == \"lesson-1.3b\" { printf \"%s %.1f %s %s\", \$15, \$16 / 1e9, \$17, \$18 }' '$T/out' | grep -qx 'flash 55.8 8 attention=flash gpus=1'"
check "step: the fix's peak is the scenario's own when it fits as it is" \
    sh -c "awk -F, '\$1 == \"lesson-1.3b-flash\" && \$15 == \"none\" && \$16 == \$10 { ok = 1 } END { exit !ok }' '$T/out'"
# The implementation profile (doc/model.md 4.12): transformers' eager Llama keeps more a layer
# than memfit's kernels, and the cheapest fix, searched under the row's profile, has a higher
# peak; --impl is the column's default; under --peak lesson both are memfit's.
printf 'name,model,seq,micro_batch,gpu,impl,attention\n%s\n%s\n%s\n' "own,llama3.1-8b,4096,1,H100-80GB,,plain" \
    "hf,llama3.1-8b,4096,1,H100-80GB,hf,eager" "opt,llama3.1-8b,4096,1,H100-80GB,,plain" >"$T/impl.csv"
run eval "$T/impl.csv" >"$T/out" 2>"$T/err"
check "impl=hf: more activations a layer and a higher fix peak than memfit's" \
    sh -c "awk -F, '\$1 == \"own\" { a = \$7; f = \$16 } \$1 == \"hf\" { b = \$7; g = \$16 } END { exit !(b > a && g > f) }' '$T/out'"
run eval --impl hf "$T/impl.csv" >"$T/out" 2>"$T/err"
check "--impl hf reaches a row without its own" \
    sh -c "awk -F, '\$1 == \"hf\" { b = \$7 } \$1 == \"opt\" { c = \$7 } END { exit !(b == c) }' '$T/out'"
expect_status "--impl hf on a GPT row: exit 1" 1 eval --impl hf configs/examples.csv
expect_err "... with the row and the option named" \
    "examples.csv:2: column 'impl': 'hf' (--impl) follows transformers' Llama-family layer"
run eval --peak lesson "$T/impl.csv" >"$T/out" 2>"$T/err"
check "--peak lesson: memfit's activations whatever the profile" \
    sh -c "awk -F, '\$1 == \"own\" { a = \$7 } \$1 == \"hf\" { b = \$7 } END { exit !(a == b) }' '$T/out'"
printf 'name,model,seq,micro_batch,gpu,gpus_per_node\nhuge,llama2-70b,4096,1,H100-80GB,1\n' >"$T/nothing.csv"
expect_status "nothing fits" 0 eval --format table "$T/nothing.csv"
expect_out "nothing fits names the GPUs the states need" "nothing fits: the model states alone need 13 GPUs"
expect_out "... and the run's own" "(this run has 1)"
printf 'name,model,seq,micro_batch,gpu,dp,zero\nacts,gpt2-small,1048576,1,L4-24GB,2,3\n' >"$T/acts.csv"
expect_status "nothing fits where the states would: exit 0" 0 eval --format table "$T/acts.csv"
expect_out "says the activations are what does not fit" \
    "nothing fits on these 2 GPUs: the model states would, fully sharded, but"

# A progress bar on stderr when asked (auto: only on a terminal), never in the output.
expect_status "--progress always" 0 eval --progress always configs/examples.csv
expect_err "progress bar drawn" "configs/examples.csv ["
expect_err "progress reaches 100%" "100%"
check "stdout is the plain CSV" test "$(grep -c '%' "$T/out")" -eq 0
expect_status "--progress auto off a terminal" 0 eval configs/examples.csv
check "no progress off a terminal" test ! -s "$T/err"
expect_status "--progress bad" 2 eval --progress sometimes configs/examples.csv

# ---- JSON's types: fits a boolean, null where a value does not apply ----
run eval --format json configs/examples.csv >"$T/json" 2>"$T/err"
run eval configs/examples.csv >"$T/csv" 2>"$T/err"
cat >"$T/json_types.py" <<'PY'
import csv, json, sys
rows = json.load(open(sys.argv[1]))
ref = {r["name"]: r for r in csv.DictReader(open(sys.argv[2]))}
for r in rows:
    c = ref[r["name"]]
    assert r["fits"] is (c["fits"] == "1"), r["name"]
    if c["fix"] == "none":  # fits as it is: no fix applies
        assert r["fix"] is None and r["fix_plan"] is None, r["name"]
        assert r["fix_peak_bytes"] is None and r["fix_micro_batch"] is None, r["name"]
    else:
        assert r["fix"] == c["fix"] and r["fix_peak_bytes"] == int(c["fix_peak_bytes"]), r["name"]
        assert r["fix_plan"] == (None if c["fix"] == "nothing" else c["fix_plan"]), r["name"]
    for k in ("params", "peak_bytes", "budget_bytes", "k_best", "max_micro_batch"):
        assert r[k] == int(c[k]), (r["name"], k)
    assert r["peak_phase"] == (c["peak_phase"] or None), r["name"]
assert any(r["fits"] for r in rows) and not all(r["fits"] for r in rows)
PY
check "json: fits is true or false, fix keys null when it fits as it is" /usr/bin/python3 "$T/json_types.py" "$T/json" "$T/csv"
if command -v jq >/dev/null 2>&1; then
    check "jq 'select(.fits)' keeps the scenarios that fit" test \
        "$(jq -r '.[] | select(.fits) | .name' "$T/json" | tr '\n' ' ')" = \
        "$(awk -F, 'NR > 1 && $12 == 1 { printf "%s ", $1 }' "$T/csv")"
fi
printf 'name,model,seq,micro_batch,gpu,gpus_per_node\nhuge,llama2-70b,4096,1,H100-80GB,1\n' |
    run eval --format json - >"$T/json" 2>"$T/err"
check "json: nothing fits: fix 'nothing', fix_plan null" /usr/bin/python3 -c "
import json; r = json.load(open('$T/json'))[0]
assert r['fix'] == 'nothing' and r['fix_plan'] is None and r['fits'] is False and r['fix_peak_bytes'] > 0"

# ---- a name is unique in the run: a duplicate says where its first was seen ----
printf 'name,model,seq,micro_batch,gpu_mem_gb\nx,gpt-1.3b,2048,1,80\ny,gpt-1.3b,2048,1,80\n' >"$T/a.csv"
printf 'name,model,seq,micro_batch,gpu_mem_gb\nz,gpt-1.3b,2048,1,80\ny,gpt-1.3b,2048,1,80\nz,gpt-1.3b,2048,1,80\n' >"$T/b.csv"
expect_status "a name of another file again: exit 1" 1 eval "$T/a.csv" "$T/b.csv"
expect_err "... says the file and line of the first" \
    "b.csv:3: column 'name': 'y' is a duplicate (first seen in $T/a.csv, line 3)"
expect_err "... a duplicate in the same file keeps its wording" \
    "b.csv:4: column 'name': 'z' is a duplicate (first seen on line 2)"
expect_status "the same file twice: exit 1" 1 eval "$T/a.csv" "$T/a.csv"
expect_err "... its second reading names the first" \
    "a.csv:2: column 'name': 'x' is a duplicate (first seen in $T/a.csv, line 2)"
check "... every row of the second reading rejected" test "$(grep -c 'is a duplicate' "$T/err")" -eq 2
printf 'name,model,seq,micro_batch,gpu_mem_gb\nx,gpt-1.3b,2048,1,80\n' |
    run eval "$T/a.csv" - >/dev/null 2>"$T/err"
expect_err "standard input names the file it repeats" \
    "<stdin>:2: column 'name': 'x' is a duplicate (first seen in $T/a.csv, line 2)"

# ---- no input could be opened: no header ----
expect_status "a missing file: exit 2" 2 eval "$T/nope.csv"
check "no header written" test ! -s "$T/out"
expect_status "a missing file, json: exit 2" 2 eval --format json "$T/nope.csv"
check "no bracket written" test ! -s "$T/out"
expect_status "a missing file, then a good one: exit 2" 2 eval "$T/nope.csv" configs/examples.csv
check "the header and the good file's rows" test "$(grep -c '^name,' "$T/out")$(grep -c '^lesson-1.3b,' "$T/out")" = 11

# ---- -o FILE ----
run eval configs/examples.csv >"$T/stdout.csv"
expect_status "-o FILE: exit 0" 0 eval configs/examples.csv -o "$T/rows.csv"
check "nothing on stdout" test ! -s "$T/out"
check "the file holds what stdout would" cmp -s "$T/rows.csv" "$T/stdout.csv"
expect_status "-o FILE, json" 0 eval --format json configs/examples.csv -o "$T/rows.json"
check "the file is the JSON" /usr/bin/python3 -c "import json; assert len(json.load(open('$T/rows.json'))) == $rows"
expect_status "-o FILE over a file, no input opened: exit 2" 2 eval "$T/nope.csv" -o "$T/rows.csv"
check "the previous file is kept" cmp -s "$T/rows.csv" "$T/stdout.csv"
check "the only message is the input's" test "$(wc -l <"$T/err")" -eq 1
expect_status "-o FILE with a rejected row: exit 1" 1 eval "$T/bad.csv" -o "$T/rows.csv"
expect_err "how many rows were written and rejected" " rows written, "
check "the valid rows are written" test "$(grep -c good "$T/rows.csv")" -eq 2
check "no temporary file left" test -z "$(ls -A "$T" | grep memfit-tmp)"
expect_status "-o into a missing folder: made, exit 0" 0 eval configs/examples.csv \
    -o "$T/no/such/rows.csv"
check "the rows are there" test -s "$T/no/such/rows.csv"
expect_status "-o under a file: exit 2" 2 eval configs/examples.csv -o "$T/rows.csv/such/x.csv"
expect_err "says which" "$T/rows.csv/such: cannot create folder: Not a directory"
mkdir -p "$T/adir"
expect_status "-o a folder: exit 2" 2 eval configs/examples.csv -o "$T/adir"
expect_err "says it is a folder" "'$T/adir': it is a folder"
expect_status "-o -: standard output" 0 eval configs/examples.csv -o -
check "the rows on stdout" cmp -s "$T/out" "$T/stdout.csv"

# ---- the table fits the terminal ----
# longest FILE: the widest line, in terminal columns (the names here are ASCII, the ellipsis one).
longest() { sed 's/…/./g' "$1" | awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }'; }
run eval --format table configs/examples.csv >"$T/t80" 2>"$T/err"
check "off a terminal: at most 80 columns" test "$(longest "$T/t80")" -le 80
check "narrow: peak, budget, verdict and fix" grep -q '^scenario  *peak GB  budget GB  verdict  fix (peak)' "$T/t80"
check "narrow: says what --wide adds" grep -q '^--wide adds .*params.*activations.*peak phase' "$T/t80"
check "narrow: the worked example's fix" grep -q '^  lesson-1.3b  *attention=flash gpus=1 -> 55.8 GB at micro-batch 8,$' "$T/t80"
run eval --format table --peak lesson configs/examples.csv >"$T/t80l" 2>"$T/err"
check "narrow, --peak lesson: at most 80 columns" test "$(longest "$T/t80l")" -le 80
check "narrow, --peak lesson: no phase to add" sh -c "grep -q '^--wide adds .*params.*activations' '$T/t80l' && ! grep -q 'phase' '$T/t80l'"
check "narrow, --peak lesson: the worked example's fix" grep -q '^  lesson-1.3b  *attention=flash gpus=1 -> 51.7 GB at micro-batch 8$' "$T/t80l"
printf 'name,model,seq,micro_batch,gpu_mem_gb\nlesson,gpt-1.3b,2048,8,80\n' >"$T/short.csv"
run eval --format table "$T/short.csv" >"$T/tshort" 2>"$T/err"
check "narrow, a short name: the phase is the first column kept, then the step time" \
    grep -q '^scenario  .*peak GB  peak phase      budget GB  verdict  fix (peak)    s/step$' "$T/tshort"
check "... with its value" grep -q '^lesson  .*  120.2  backward_start  *68.0  OOM  *flash (55.8)  *[0-9.]*$' "$T/tshort"
check "... and not offered by --wide" sh -c "! grep -q '^--wide adds.*phase' '$T/tshort'"
COLUMNS=60 run eval --format table configs/examples.csv >"$T/t60" 2>"$T/err"
check "COLUMNS=60: at most 60 columns" test "$(longest "$T/t60")" -le 60
check "COLUMNS=60: long names cut with an ellipsis, both ends kept" grep -q '^le…3b-flash ' "$T/t60"
check "COLUMNS=60: the cut names stay told apart" \
    test -z "$(awk '/^---/ { on = 1; next } /^$/ { on = 0 } on { print $1 }' "$T/t60" | sort |
        uniq -d)"
COLUMNS=200 run eval --format table configs/examples.csv >"$T/t200" 2>"$T/err"
check "COLUMNS=200: every column" grep -q '^scenario  *params  states GB  activations GB  logits GB  peak GB  peak phase  *budget GB  verdict  k_best  max b  fix (peak)  *s/step$' "$T/t200"
check "COLUMNS=200: the worked example's phase" grep -q '^lesson-1.3b  .*  120.2  backward_start  *68.0  ' "$T/t200"
check "COLUMNS=200: nothing left out" sh -c "! grep -q -- '--wide adds' '$T/t200'"
run eval --format table --wide configs/examples.csv >"$T/twide" 2>"$T/err"
check "--wide: every column, past 80" sh -c "grep -q '^scenario  *params  states GB' '$T/twide' && test $(longest "$T/twide") -gt 80"
# (the lines below the table wrap at COLUMNS, and never with --wide: a fix with its note can pass 200)
check "--wide: the table is COLUMNS=200's" sh -c "sed '/^To make it fit/,\$d' '$T/twide' >'$T/twide.t' && sed '/^To make it fit/,\$d' '$T/t200' >'$T/t200.t' && cmp -s '$T/twide.t' '$T/t200.t'"

# Names of other scripts align by what a terminal shows: a CJK character takes two columns.
printf 'name,model,seq,micro_batch,gpu_mem_gb\n\346\250\241\345\236\213-7b,gpt-1.3b,2048,8,80\ncaf\303\251,gpt-1.3b,2048,8,80\nplain,gpt-1.3b,2048,8,80\n' >"$T/utf8.csv"
run eval --format table --wide "$T/utf8.csv" >"$T/tu" 2>"$T/err"
cat >"$T/width.py" <<'PY'
import sys, unicodedata
def cols(s):
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
rows = [l for l in lines[2:5]]
assert len({cols(l) for l in rows}) == 1, [cols(l) for l in rows]          # same cells, same width
assert len({cols(l[: l.index("1.31B")]) for l in rows}) == 1              # params start together
head = lines[0]
assert cols(head[: head.index("params") + 6]) == cols(rows[0][: rows[0].index("1.31B") + 5])
PY
check "UTF-8 names align by display width" /usr/bin/python3 "$T/width.py" "$T/tu"

# ---- the progress bar is never drawn into the rows ----
run eval --progress always configs/examples.csv >"$T/both" 2>&1
check "stdout and stderr one file: no bar in the rows" sh -c "! grep -q '%' '$T/both'"
check "... the rows as they are" cmp -s "$T/both" "$T/stdout.csv"
run eval --progress always configs/examples.csv -o "$T/rows.csv" >"$T/out" 2>"$T/err"
expect_err "with -o FILE the bar is drawn" "100%"
if command -v script >/dev/null 2>&1; then
    # A terminal for stdout and stderr both (script's pseudo-terminal).
    m=$(cd "$(dirname "$MEMFIT")" && pwd)/$(basename "$MEMFIT")
    script -qec "$m eval --progress always configs/examples.csv" /dev/null </dev/null >"$T/tty" 2>&1
    check "one terminal for both: no bar" sh -c "! grep -q '\[##' '$T/tty'"
    check "... and the rows" grep -q '^lesson-1.3b,' "$T/tty"
fi

# ---- a binary without its data files ----
if [ ! -e /usr/local/share/memfit/configs/models.csv ]; then
    mkdir -p "$T/bare"
    cp "$MEMFIT" "$T/bare/memfit"
    printf 'name,model,seq,micro_batch,gpu_mem_gb\nx,gpt-1.3b,2048,8,80\n' >"$T/preset.csv"
    (cd "$T" && $VALGRIND "$T/bare/memfit" eval "$T/preset.csv") >"$T/out" 2>"$T/err"
    expect_err "no presets file: says so, not 'unknown model preset'" \
        "column 'model': cannot look up 'gpt-1.3b': the presets file configs/models.csv was not found (--models FILE names one)"
    check "... and not 'unknown'" sh -c "! grep -q 'unknown model preset' '$T/err'"
fi

# ---- --threads: the same rows and messages, in the same order, on any number of threads ----
# Enough rows for many batches of each thread, with bad rows and a duplicate among them, in two
# files (the header once).
awk 'BEGIN {
    split("gpt-1.3b llama2-7b llama3-8b mistral-7b gpt2-medium", m, " ")
    print "name,model,seq,micro_batch,attention,recompute,dp,zero,gpu_mem_gb"
    for (i = 0; i < 3000; i++) {
        seq = i % 7 == 0 ? "not-a-number" : 1024 * (1 + i % 8)
        printf "r%d,%s,%s,%d,%s,%s,%d,%d,%d\n", i, m[1 + i % 5], seq, 1 + i % 8,
            i % 4 ? "flash" : "plain", i % 3 ? "none" : "full", 8 * (1 + i % 3), i % 4, 40 * (1 + i % 2)
    }
    print "r5,gpt-1.3b,2048,1,flash,none,8,1,80"
}' >"$T/many.csv"
sed -n '1p;2,400p' "$T/many.csv" >"$T/many2.csv"
sed -i 's/^r/s/; 1s/^s/r/' "$T/many2.csv"
run eval --threads 1 "$T/many.csv" "$T/many2.csv" >"$T/one.out" 2>"$T/one.err"
check "--threads 1: the rows" test "$(wc -l <"$T/one.out")" -gt 2000
check "--threads 1: the bad rows and the duplicate reported" \
    grep -q "many.csv:3002: column 'name': 'r5' is a duplicate" "$T/one.err"
for n in 2 3 8; do
    run eval --threads "$n" "$T/many.csv" "$T/many2.csv" >"$T/n.out" 2>"$T/n.err"
    check "--threads $n: the same rows in the same order" cmp -s "$T/one.out" "$T/n.out"
    check "--threads $n: the same messages" cmp -s "$T/one.err" "$T/n.err"
done
expect_status "--threads 0: a usage error" 2 eval --threads 0 configs/examples.csv
expect_err "... saying the range" "--threads: '0' is not a count from 1 to 64"
expect_status "--threads 65: a usage error" 2 eval --threads 65 configs/examples.csv
expect_status "--threads 64: accepted" 0 eval --threads 64 configs/examples.csv
expect_status "--threads 3 with --format json (one evaluating thread)" 0 \
    eval --threads 3 --format json configs/examples.csv
expect_out "... its rows" '"name": "lesson-1.3b"'
expect_status "--threads is eval's only" 2 search --threads 2 configs/jobs.csv

# ---- the host's memory (doc/model.md 12.5): an optimizer offload's CPU memory a node ----
printf 'name,model,seq,micro_batch,global_batch,attention,recompute,dp,zero,offload,gpu\nq30,qwen3-30b-a3b,2048,1,8,flash,full,8,3,optimizer,L4-24GB\nq30h,qwen3-30b-a3b,2048,1,8,flash,full,8,3,optimizer,H100-80GB\n' >"$T/host.csv"
run eval "$T/host.csv" >"$T/host.out" 2>"$T/err"
# host NAME: fits and host_node_bytes of the row.
host() { awk -F, -v n="$1" '$1 == n { print $12, $26 }' "$T/host.out"; }
check "offload: 8 GPUs' 16 bytes a parameter of their shards in the node's memory" \
    test "$(host q30h | cut -d' ' -f2)" = "$(awk -F, '$1 == "q30h" { printf "%.0f", 16 * $2 }' "$T/host.out")"
check "offload on 8 H100s: the DGX's 2 TB hold it" test "$(host q30h | cut -d' ' -f1)" = 1
check "offload on 8 L4s: more than the node's 384 GB, it does not fit" \
    test "$(host q30 | cut -d' ' -f1)" = 0
run eval --format table "$T/host.csv" >"$T/host.table" 2>"$T/err"
check "the table's verdict says it is the host's memory" grep -q '^q30  .* host OOM ' "$T/host.table"
