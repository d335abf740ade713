#!/bin/sh
# memfit search (doc/memfit.1: COMMANDS, OUTPUT): every layout it lists, fed back to memfit eval,
# fits with the same peak and budget; --top, --gpus-range (and a job's range A:B), the three
# formats and --report; bad jobs (gpus that cannot be split, a pinned column that contradicts
# gpus, a range with A > B, no gpus) get a located message and exit 1 while the other jobs are
# still searched. And the report of a scenario that no rung fits names the fewest GPUs on which
# search finds a layout.
. tests/cli/common.inc

# The columns: job, rank, step_time_s, layouts_tried, layouts_fit, [gpus], the scenario's 68
# (name .. loss_in_split), peak_bytes, budget_bytes.
SC_FIRST=6
SC_LAST=73

cat >"$T/jobs.csv" <<'EOF'
name,model,seq,global_batch,gpu,gpus,tp,zero
small,gpt2-small,1024,32,L4-24GB,8,,
8b,llama3.1-8b,8192,64,H100-80GB,8,,
8b-tp2,llama3.1-8b,8192,64,H100-80GB,8,2,1
moe,mixtral-8x7b,4096,64,H100-80GB,16,,
EOF

# ---- help ----
expect_status "search -h" 0 search -h
cp "$T/out" "$T/help"
expect_status "help search" 0 help search
check "help search is search -h" cmp -s "$T/out" "$T/help"
check "help search: its usage" grep -q '^usage: memfit search \[OPTIONS\] FILE.csv' "$T/help"
for opt in '--top N' '--gpus-range A:B' '--format csv|json|table' '-o, --out FILE' '--peak lesson|step'; do
    check "help search lists $opt" grep -q -- "$opt" "$T/help"
done
check "help search: not --split" sh -c "! grep -q -- '--split' '$T/help'"
expect_status "the general help lists search" 0 --help
expect_out "its usage line" "memfit search [OPTIONS] FILE.csv..."
expect_status "search without a file: exit 2" 2 search
expect_err "says what is needed" "search: at least one FILE.csv (or -) is needed"
expect_status "eval --top: exit 2" 2 eval --top 3 "$T/jobs.csv"
expect_err "--top is search's" "--top is not an option of eval (it is one of search)"

# ---- CSV, and every layout back through eval ----
expect_status "search: exit 0" 0 search "$T/jobs.csv" --top 4
cp "$T/out" "$T/csv"
head -n 1 "$T/csv" | tr ',' '\n' >"$T/header"
check "the header starts job,rank,step_time_s,layouts_tried,layouts_fit,name,model" \
    sh -c "head -n 1 '$T/csv' | grep -q '^job,rank,step_time_s,layouts_tried,layouts_fit,name,model,arch,'"
check "the header ends peak_bytes,budget_bytes" \
    sh -c "head -n 1 '$T/csv' | grep -q ',gpus_per_node,impl,mtp_layers,embedding_in_split,loss_in_split,peak_bytes,budget_bytes\$'"
check "no gpus column without a range" sh -c "! grep -qx gpus '$T/header'"
check "the scenario's columns are $SC_FIRST to $SC_LAST" \
    sh -c "test \"\$(sed -n '${SC_FIRST}p;${SC_LAST}p' '$T/header' | tr '\n' ' ')\" = 'name loss_in_split '"
# Every column eval reads (src/input/columns.h) but gpus, and none else.
grep -o 'X([A-Z_0-9]*, "[a-z_0-9]*"' src/input/columns.h | grep -o '"[a-z_0-9]*"' | tr -d '"' |
    grep -vx -e gpus >"$T/columns"
sed -n "${SC_FIRST},${SC_LAST}p" "$T/header" >"$T/written"
check "the scenario's columns are eval's, but gpus" cmp -s "$T/columns" "$T/written"
rows=$(($(wc -l <"$T/csv") - 1))
check "4 layouts of each of 4 jobs ($rows rows)" test "$rows" -eq 16
check "ranks 1-4 of each job, named JOB-RANK" sh -c "awk -F, 'NR > 1 && (\$2 < 1 || \$2 > 4 || \$6 != \$1 \"-\" \$2) { bad = 1 } END { exit bad }' '$T/csv'"
check "fastest first within a job" sh -c "awk -F, 'NR > 1 && \$1 == job && \$3 + 0 < last + 0 { bad = 1 } { job = \$1; last = \$3 } END { exit bad }' '$T/csv'"
check "layouts_fit <= layouts_tried, both > 0" sh -c "awk -F, 'NR > 1 && !(\$5 > 0 && \$5 <= \$4) { bad = 1 } END { exit bad }' '$T/csv'"
check "gpu_mem_gb always written" sh -c "awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if (\$i == \"gpu_mem_gb\") c = i } NR > 1 && \$c == \"\" { bad = 1 } END { exit bad }' '$T/csv'"
check "a pinned column is kept (8b-tp2: tp 2, zero 1)" sh -c "awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if (\$i == \"tp\") t = i; if (\$i == \"zero\") z = i } } NR > 1 && \$1 == \"8b-tp2\" && (\$t != 2 || \$z != 1) { bad = 1 } END { exit bad }' '$T/csv'"

# back_through_eval NAME FILE NAMECOL [EVAL OPTIONS]: the search's CSV FILE, as it is, is a
# scenario CSV that eval reads without a message (the search's own columns ignored); every row
# fits (fits = 1) with the peak and budget the search gave (the layout's name in NAMECOL).
back_through_eval() {
    name=$1 file=$2 namecol=$3
    shift 3
    run eval "$file" "$@" >"$T/eval" 2>"$T/evalerr"
    check "$name: eval reads every layout" sh -c "test ! -s '$T/evalerr' && test \$(wc -l <'$T/eval') -eq \$(wc -l <'$file')"
    # search: name at NAMECOL, peak_bytes and budget_bytes by the header; eval: name, peak 10,
    # budget 11, fits 12.
    awk -F, -v f="$namecol" 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "peak_bytes") p = i; if ($i == "budget_bytes") b = i }; next }
        { print $f, $p, $b, 1 }' "$file" >"$T/want"
    awk -F, 'NR > 1 { print $1, $10, $11, $12 }' "$T/eval" >"$T/got"
    if cmp -s "$T/want" "$T/got"; then echo "ok $name: each fits in eval with the search's peak and budget"; else
        echo "not ok $name: each fits in eval with the search's peak and budget"
        diff "$T/want" "$T/got" | head -5 | sed 's/^/# /'; fi
}
back_through_eval "search" "$T/csv" "$SC_FIRST"
run search "$T/jobs.csv" --top 3 --peak lesson --reserve 0.3 >"$T/lesson" 2>/dev/null
back_through_eval "--peak lesson --reserve 0.3" "$T/lesson" "$SC_FIRST" \
    --peak lesson
check "--reserve reaches the rows" sh -c "cut -d, -f$((SC_LAST - 5)) '$T/lesson' | sed -n 2p | grep -qx 0.3"

# Block and per-module recomputation a job gives (doc/model.md 5.4, 5.5) are pinned: every
# layout keeps them, and eval reads each with the search's peak.
printf 'name,model,seq,global_batch,gpu,gpus,recompute,recompute_layers,recompute_modules\n%s\n%s\n' \
    "blk,llama3.1-8b,8192,64,H100-80GB,16,full,3," \
    "mods,mixtral-8x7b,4096,64,H100-80GB,16,selective,,layernorm moe_act" >"$T/rjobs.csv"
run search "$T/rjobs.csv" --top 3 >"$T/rsearch" 2>/dev/null
check "recompute_layers and recompute_modules are kept (3 and layernorm+moe_act)" sh -c "awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if (\$i == \"recompute_layers\") l = i; if (\$i == \"recompute_modules\") m = i } } NR > 1 && !((\$1 == \"blk\" && \$l == 3) || (\$1 == \"mods\" && \$m == \"layernorm+moe_act\")) { bad = 1 } NR > 1 { n++ } END { exit bad || n != 6 }' '$T/rsearch'"
back_through_eval "pinned recomputation" "$T/rsearch" "$SC_FIRST"

# The implementation profile (doc/model.md 4.12) is the job's: every layout keeps it and
# transformers' attention name, and eval reads each with the search's peak; --impl is the
# default of the column. Under hf the same job's peaks are those of another model than memfit's.
printf 'name,model,seq,global_batch,gpu,gpus,impl,attention\n%s\n%s\n' \
    "hf8b,llama3.1-8b,4096,32,H100-80GB,8,hf,sdpa" "mg8b,llama3.1-8b,4096,32,H100-80GB,8,megatron," \
    >"$T/ijobs.csv"
run search "$T/ijobs.csv" --top 3 >"$T/isearch" 2>/dev/null
check "impl and hf's attention name are kept (hf with sdpa, megatron)" sh -c "awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if (\$i == \"impl\") p = i; if (\$i == \"attention\") a = i } } NR > 1 && !((\$1 == \"hf8b\" && \$p == \"hf\" && \$a == \"sdpa\") || (\$1 == \"mg8b\" && \$p == \"megatron\")) { bad = 1 } NR > 1 { n++ } END { exit bad || n != 6 }' '$T/isearch'"
back_through_eval "a job's profile" "$T/isearch" "$SC_FIRST"
printf 'name,model,seq,global_batch,gpu,gpus\nopt8b,llama3.1-8b,4096,32,H100-80GB,8\n' >"$T/ojob.csv"
run search "$T/ojob.csv" --top 1 --impl hf-peft >"$T/osearch" 2>/dev/null
check "--impl reaches the rows" sh -c "awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if (\$i == \"impl\") p = i } NR == 2 && \$p == \"hf-peft\" { ok = 1 } END { exit !ok }' '$T/osearch'"

# A job's name of 64 characters (two bytes each): JOB-RANK is cut to 64 characters, at a
# character, and eval takes every one.
long=$(printf '\303\251%.0s' $(seq 1 64))
printf 'name,model,seq,global_batch,gpu,gpus\n%s,gpt2-small,1024,32,L4-24GB,8\n' "$long" >"$T/long.csv"
run search "$T/long.csv" --top 12 >"$T/longrows" 2>/dev/null
back_through_eval "a name of 64 characters" "$T/longrows" "$SC_FIRST"
check "JOB-RANK cut to 64 characters" sh -c "cut -d, -f$SC_FIRST '$T/longrows' | sed -n 13p | grep -qx '$(printf '\303\251%.0s' $(seq 1 61))-12'"

# ---- --top ----
run search "$T/jobs.csv" --top 1 >"$T/top1"
check "--top 1: one row a job" test "$(tail -n +2 "$T/top1" | cut -d, -f1 | sort -u | wc -l)" -eq 4
check "--top 1: rank 1 each" test "$(tail -n +2 "$T/top1" | cut -d, -f2 | sort -u)" = 1
check "--top 1 is the first of --top 4" sh -c "grep '^8b,1,' '$T/csv' | cmp -s - '$T/top1' 2>/dev/null || test \"\$(grep '^8b,1,' '$T/csv')\" = \"\$(grep '^8b,1,' '$T/top1')\""
for bad in 0 -1 abc 100001 1.5; do
    expect_status "--top $bad: exit 2" 2 search --top "$bad" "$T/jobs.csv"
done
expect_err "says what it takes" "--top: '1.5' is not a count from 1 to 100000"

# ---- a job that nothing fits: one row, rank 0, the counts ----
printf 'name,model,seq,global_batch,gpu,gpus\nhuge,llama3.1-405b,8192,64,L4-24GB,8\ntiny,gpt2-small,1024,8,L4-24GB,8\n' >"$T/huge.csv"
expect_status "a job that nothing fits: exit 0" 0 search "$T/huge.csv"
check "one row of rank 0" test "$(grep -c '^huge,' "$T/out")" -eq 1
check "rank 0, tried > 0, fit 0, no step time" sh -c "grep -q '^huge,0,,[1-9][0-9]*,0,,' '$T/out'"
check "no scenario and no peak, the budget" sh -c "grep '^huge,' '$T/out' | grep -q ',,,,,,,,,,,,,[1-9][0-9]*\$'"
check "the other job is listed" grep -q '^tiny,1,' "$T/out"

# ---- bad jobs: located, exit 1, the others still searched ----
cat >"$T/bad.csv" <<'EOF'
name,model,seq,global_batch,gpu,gpus,tp
ok1,llama3.1-8b,8192,64,H100-80GB,8,
unsplittable,llama3.1-8b,8192,64,H100-80GB,37,
clash,llama3.1-8b,8192,64,H100-80GB,64,3
backwards,llama3.1-8b,8192,64,H100-80GB,512:64,
none,llama3.1-8b,8192,64,H100-80GB,,
ok2,gpt2-small,1024,32,L4-24GB,8,
EOF
expect_status "bad jobs: exit 1" 1 search "$T/bad.csv" --top 2
expect_err "gpus that cannot be split" "$T/bad.csv:3: column 'gpus': '37' cannot be split"
expect_err "a pinned column that contradicts gpus" "$T/bad.csv:4: column 'tp': '3' does not divide gpus (64)"
expect_err "a range with A > B" "$T/bad.csv:5: column 'gpus': '512:64' is a range A:B with A > B"
expect_err "no gpus" "$T/bad.csv:6: column 'gpus': a value is required"
expect_err "and how many jobs were searched" "memfit: 2 of 6 jobs searched, 4 rejected"
check "four messages and that count" test "$(wc -l <"$T/err")" -eq 5
check "the other jobs are searched" sh -c "grep -q '^ok1,2,' '$T/out' && grep -q '^ok2,2,' '$T/out'"
check "and only they" test "$(tail -n +2 "$T/out" | cut -d, -f1 | sort -u | tr '\n' ' ')" = "ok1 ok2 "
expect_status "-q: exit 1, no message" 1 search -q "$T/bad.csv"
check "nothing on stderr" test ! -s "$T/err"

# ---- ranges: --gpus-range A:B, or a job's gpus A:B ----
printf 'name,model,seq,global_batch,gpu,gpus\n405b,llama3.1-405b,4096,64,H100-80GB,8\n8b,llama3.1-8b,4096,64,H100-80GB,8\n' >"$T/range.csv"
expect_status "--gpus-range: exit 0" 0 search "$T/range.csv" --gpus-range 8:256 --top 2
cp "$T/out" "$T/range"
check "the rows carry gpus after layouts_fit" sh -c "head -n 1 '$T/range' | grep -q '^job,rank,step_time_s,layouts_tried,layouts_fit,gpus,name,'"
g405=$(awk -F, '$1 == "405b" && $2 == 1 { print $6; exit }' "$T/range")
g8=$(awk -F, '$1 == "8b" && $2 == 1 { print $6; exit }' "$T/range")
check "405b: a count, a multiple of 8 ($g405)" sh -c "test -n '$g405' && test \$(($g405 % 8)) -eq 0 && test $g405 -gt 8"
check "8b fits on 8" test "$g8" = 8
# Feeding gpus to eval too: it checks gpus = dp * tp * pp * cp.
back_through_eval "--gpus-range" "$T/range" "$((SC_FIRST + 1))"
prev=$((g405 - 8))
printf 'name,model,seq,global_batch,gpu,gpus\n405b,llama3.1-405b,4096,64,H100-80GB,%s\n' "$prev" >"$T/prev.csv"
run search "$T/prev.csv" --top 1 >"$T/out" 2>&1
check "405b: nothing fits on $prev GPUs (the count is the fewest)" grep -q '^405b,0,' "$T/out"
printf 'name,model,seq,global_batch,gpu,gpus\n405b,llama3.1-405b,4096,64,H100-80GB,8:256\n8b,llama3.1-8b,4096,64,H100-80GB,8:256\n' >"$T/own.csv"
run search "$T/own.csv" --top 2 >"$T/own" 2>&1
check "a job's own range: the same rows as --gpus-range" cmp -s "$T/own" "$T/range"
expect_status "a range where nothing fits: exit 0" 0 search "$T/range.csv" --gpus-range 8:8 --top 1
check "its row: rank 0, no count" grep -q '^405b,0,,[0-9]*,0,,' "$T/out"
expect_status "--gpus-range with A > B: exit 2" 2 search "$T/range.csv" --gpus-range 64:8
expect_err "says what it takes" "--gpus-range: '64:8' is not A:B with 0 < A <= B"
expect_status "--gpus-range 0:8: exit 2" 2 search "$T/range.csv" --gpus-range 0:8
expect_status "--gpus-range 8: exit 2" 2 search "$T/range.csv" --gpus-range 8
printf 'name,model,seq,global_batch,gpu\n8b,llama3.1-8b,4096,64,H100-80GB\n' >"$T/nogpus.csv"
expect_status "--gpus-range for jobs without gpus: exit 0" 0 search "$T/nogpus.csv" --gpus-range 1:64
check "the fewest: 8" grep -q '^8b,1,[^,]*,[0-9]*,[0-9]*,8,' "$T/out"

# ---- the scaling curve: after the fewest, each doubled count's fastest layout, up to B ----
check "the curve's rows are named JOB-COUNTgpus" grep -q '^8b,1,.*,8b-16gpus,' "$T/range"
check "the curve: 8b at 8, 16, ..., 256, one row each after its fewest" test \
    "$(awk -F, '$1 == "8b" && $2 == 1 { printf "%s ", $6 }' "$T/range")" = "8 16 32 64 128 256 "
check "the curve: 405b from its fewest, doubled" sh -c \
    "awk -F, '\$1 == \"405b\" && \$2 == 1 { print \$6 }' '$T/range' | awk 'NR > 1 && \$1 != 2 * p { bad = 1 } { p = \$1 } END { exit bad }'"
check "the range's rows end with tokens_per_s,days,gpu_hours,cost" \
    sh -c "head -n 1 '$T/range' | grep -q ',peak_bytes,budget_bytes,tokens_per_s,days,gpu_hours,cost\$'"
check "tokens_per_s = global_batch * seq / step_time_s; no days without --tokens" awk -F, \
    'NR > 1 && $2 > 0 { want = 64 * 4096 / $3; if ($(NF - 3) == "" || ($(NF - 3) - want) / want > 1e-5 || ($(NF - 3) - want) / want < -1e-5 || $(NF - 2) != "") bad = 1 } END { exit bad }' "$T/range"

# ---- --tokens N --days D [--price P]: the fewest GPUs that meet the deadline ----
printf 'name,model,seq,global_batch,gpu\n8b,llama3.1-8b,4096,512,H100-80GB\n' >"$T/deadline.csv"
expect_status "--tokens 1T --days 30: exit 0" 0 search "$T/deadline.csv" --tokens 1T --days 30 --price 2.5 --top 1
cp "$T/out" "$T/dl"
gdl=$(awk -F, 'NR == 2 { print $6 }' "$T/dl")
check "a count, a multiple of 8 ($gdl)" sh -c "test -n '$gdl' && test \$(($gdl % 8)) -eq 0"
check "it meets the deadline: days <= 30, = 1e12 / tokens_per_s / 86400" awk -F, \
    'NR == 2 { d = 1e12 / $(NF - 3) / 86400; exit !($(NF - 2) <= 30 && (d - $(NF - 2)) / d < 1e-5 && (d - $(NF - 2)) / d > -1e-5) }' "$T/dl"
check "gpu_hours = gpus * days * 24, cost = gpu_hours * 2.5" awk -F, \
    'NR == 2 { h = $6 * $(NF - 2) * 24; exit !((h - $(NF - 1)) / h < 1e-5 && (h - $(NF - 1)) / h > -1e-5 && ($NF - 2.5 * $(NF - 1)) / $NF < 1e-5 && ($NF - 2.5 * $(NF - 1)) / $NF > -1e-5) }' "$T/dl"
prev=$((gdl - 8))
printf 'name,model,seq,global_batch,gpu,gpus\n8b,llama3.1-8b,4096,512,H100-80GB,%s\n' "$prev" >"$T/dlprev.csv"
run search "$T/dlprev.csv" --gpus-range "$prev:$prev" --tokens 1T --days 1000000 --top 1 >"$T/out" 2>&1
check "the count a node below ($prev) misses it: no layout, or more than 30 days" awk -F, \
    'NR == 2 { exit !($2 == 0 || $(NF - 2) > 30) }' "$T/out"
expect_status "suffixes: 1000B is 1T" 0 search "$T/deadline.csv" --tokens 1000B --days 30 --price 2.5 --top 1
check "... the same rows" cmp -s "$T/out" "$T/dl"
expect_status "2e12 tokens in 60 days" 0 search "$T/deadline.csv" --tokens 2e12 --days 60 --top 1
check "... no price: cost empty" awk -F, 'NR == 2 { exit !($NF == "" && $(NF - 1) != "") }' "$T/out"
expect_status "a deadline nothing meets: exit 0" 0 search "$T/deadline.csv" --tokens 15T --days 0.001 --gpus-range 8:64 --top 1 --format table
expect_out "says so" "no count of 8-64 GPUs trains 1.5e+13 tokens within 0.001 days"
expect_status "table: the fewest and the count below" 0 search "$T/deadline.csv" --tokens 1T --days 30 --top 1 --format table
expect_out "... the fewest" "the fewest GPUs that train 1e+12 tokens within 30 days: $gdl ("
for bad in "--tokens abc --days 30" "--tokens 0 --days 30" "--tokens 1X --days 30" "--tokens 1T --days -1" \
    "--tokens 1T --days 0" "--tokens 1T --days 30 --price -1" "--tokens 1T" "--days 30" "--price 2"; do
    # shellcheck disable=SC2086
    expect_status "$bad: exit 2" 2 search "$T/deadline.csv" $bad
done
expect_status "--tokens abc: exit 2" 2 search "$T/deadline.csv" --tokens abc --days 30
expect_err "says what it takes" "--tokens: 'abc' is not a count of tokens (e.g. 1T, 15T, 2e12; at least 1)"
expect_status "--days x: exit 2" 2 search "$T/deadline.csv" --tokens 1T --days x
expect_err "says what it takes" "--days: 'x' is not a positive number of days"
expect_status "--price x: exit 2" 2 search "$T/deadline.csv" --tokens 1T --days 3 --price x
expect_err "says what it takes" "--price: 'x' is not a price (a number >= 0)"
expect_status "--tokens alone: exit 2" 2 search "$T/deadline.csv" --tokens 1T
expect_err "says they go together" "--tokens and --days go together"
expect_status "--price alone: exit 2" 2 search "$T/deadline.csv" --price 2
expect_err "says what it is for" "--price is for --tokens and --days"

# ---- JSON and the table ----
expect_status "--format json: exit 0" 0 search "$T/jobs.csv" "$T/huge.csv" --top 2 --format json
cat >"$T/json_types.py" <<'EOF'
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 4 * 2 + 1 + 2, len(rows)
for r in rows:
    assert list(r)[:6] == ["job", "rank", "step_time_s", "layouts_tried", "layouts_fit", "name"]
    assert list(r)[-2:] == ["peak_bytes", "budget_bytes"]
    assert isinstance(r["budget_bytes"], int)
    if r["rank"] == 0:
        assert r["job"] == "huge" and r["name"] is None and r["peak_bytes"] is None
        assert r["step_time_s"] is None and r["layouts_fit"] == 0
        continue
    assert r["name"] == "%s-%d" % (r["job"], r["rank"])
    assert isinstance(r["step_time_s"], float) and isinstance(r["peak_bytes"], int)
    assert r["peak_bytes"] <= r["budget_bytes"]
    assert isinstance(r["tied"], bool) and isinstance(r["sp"], bool)
    assert isinstance(r["tp"], int) and isinstance(r["reserve"], float)
    assert isinstance(r["recompute"], str) and isinstance(r["gpu_mem_gb"], (int, float))
    assert (r["top_k"] is None) == (r["experts"] == 0)
EOF
check "json: CSV's keys with JSON's types, null for what a row lacks" /usr/bin/python3 "$T/json_types.py" "$T/out"
expect_status "--format table: exit 0" 0 search "$T/jobs.csv" "$T/huge.csv" --top 2 --format table
cp "$T/out" "$T/table"
check "table: its header" grep -q '^job  *#  *step s  *tp  *pp  .*  peak GB$' "$T/table"
check "table: a line per job with its counts" grep -q '^  8b  *on 8 GPUs: [0-9]* layouts tried, [0-9]* fit; the fastest 2 shown' "$T/table"
check "table: the job that nothing fits" grep -q '^  huge  *no layout fits on 8 GPUs ([0-9]* layouts tried)' "$T/table"
check "table: no line passes 80 columns" sh -c "! grep -q '.\{81\}' '$T/table'"
COLUMNS=50 run search "$T/jobs.csv" --top 1 --format table >"$T/narrow"
check "table: COLUMNS=50 is kept" sh -c "! grep -q '.\{51\}' '$T/narrow'"
check "table: says what --wide adds" grep -q '^--wide adds ' "$T/narrow"
run search "$T/jobs.csv" --top 1 --format table --wide >"$T/wide"
check "table --wide: every column" grep -Eq 'vpp  (schedule  )?cp  ep  dp  zero  attention  recompute  offload  b  peak GB  budget GB' "$T/wide"
run search "$T/jobs.csv" --top 1 --format table --units GiB >"$T/gib"
check "table --units GiB" grep -q 'peak GiB' "$T/gib"
expect_status "--wide without table: exit 2" 2 search "$T/jobs.csv" --wide

# ---- -o, standard input ----
expect_status "-o FILE: exit 0" 0 search "$T/jobs.csv" --top 4 -o "$T/best.csv"
check "-o: the rows in the file, nothing on stdout" sh -c "cmp -s '$T/best.csv' '$T/csv' && test ! -s '$T/out'"
mkdir -p "$T/dir"
expect_status "-o a folder: exit 2" 2 search "$T/jobs.csv" -o "$T/dir"
expect_status "an unreadable file: exit 2" 2 search "$T/missing.csv" -o "$T/never.csv"
check "nothing written" test ! -e "$T/never.csv"
run search - --top 4 <"$T/jobs.csv" >"$T/out" 2>"$T/err"
check "- reads standard input" cmp -s "$T/out" "$T/csv"

# ---- --report: the PDF ----
text() { pdftotext "$1" - 2>/dev/null | tr -s '[:space:]' ' '; }
expect_status "--report: exit 0" 0 search "$T/jobs.csv" --top 4 --report "$T/search.pdf"
check "--report: a PDF" sh -c "head -c 5 '$T/search.pdf' | grep -q '^%PDF-'"
check "--report: no rows on stdout" test ! -s "$T/out"
expect_err "--report: says what it wrote" "memfit: wrote $T/search.pdf (4 jobs)"
text "$T/search.pdf" >"$T/search.txt"
check "--report: a section per job" sh -c "for j in small 8b 8b-tp2 moe; do grep -qw -- \"\$j\" '$T/search.txt' || exit 1; done"
expect_status "--report and -o: exit 0" 0 search "$T/jobs.csv" --top 4 --report "$T/search2.pdf" -o "$T/rows.csv"
check "-o still writes the rows" cmp -s "$T/rows.csv" "$T/csv"
check "the same PDF" cmp -s "$T/search.pdf" "$T/search2.pdf"
expect_status "--report with bad jobs: exit 1" 1 search "$T/bad.csv" --report "$T/bad.pdf"
check "the jobs searched are reported" sh -c "pdftotext '$T/bad.pdf' - | grep -q ok2"
expect_status "--report into a missing folder: made, exit 0" 0 search "$T/jobs.csv" \
    --report "$T/no/such/x.pdf"
expect_status "--report under a file: exit 2" 2 search "$T/jobs.csv" --report "$T/range.csv/x.pdf"
expect_status "--report with a range: exit 0" 0 search "$T/range.csv" --gpus-range 8:256 --report "$T/range.pdf"
# The scaling curve drawn (doc/model.md 11.7): its title, the first count's perfect scaling, the
# counts of the rows under its axis, and the last count's tokens/s per GPU as a share of the
# first's, from the rows' own step times (tokens_per_s = global_batch * seq / step time).
pdftotext "$T/range.pdf" "$T/range.txt"
check "--report with a range: the scaling curve of each job" \
    test "$(grep -c 'Scaling: the fastest layout at each GPU count' "$T/range.txt")" = 2
check "... perfect scaling from the fewest that fit" grep -q "perfect scaling from $g405 GPUs" "$T/range.txt"
eff=$(awk -F, '$1 == "8b" && $2 == 1 { g[++n] = $6; s[n] = $3 }
    END { printf "%.0f%%", 100 * (s[1] * g[1]) / (s[n] * g[n]) }' "$T/range")
check "... at 256 GPUs each GPU trains $eff of the tokens it trains at 8" \
    sh -c "tr '\n' ' ' <'$T/range.txt' | grep -q 'at 256 GPUs each GPU trains $eff of the tokens per second it trains at 8'"
check "a report without a range draws no curve" sh -c "! grep -q 'Scaling:' '$T/search.txt'"

# --report keeps what its pages draw, not the layouts: its memory does not grow with them. Each of
# these jobs evaluates 115,296 layouts (7 MB of them kept, before); under an address-space limit
# (ulimit -v, KB) that the report of one fits in, the report of sixteen must fit too. Skipped
# under valgrind or a sanitizer, whose own reservations exceed any such limit.
printf 'name,model,seq,global_batch,gpu,gpus\n' >"$T/many.csv"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
    printf 'j%s,llama3.1-70b,8192,512,H100-80GB,64\n' "$i" >>"$T/many.csv"
done
head -n 2 "$T/many.csv" >"$T/one.csv"
limited() { (ulimit -v 81920 && exec "$MEMFIT" search -q --report "$@" -o /dev/null); }
if [ -z "$VALGRIND" ] && limited "$T/one.pdf" "$T/one.csv" 2>/dev/null; then
    check "--report of 16 jobs within the memory of one's" limited "$T/many.pdf" "$T/many.csv"
    check "--report of 16 jobs: every job's section" \
        sh -c "test \"\$(pdftotext '$T/many.pdf' - | grep -c '^Each of the [0-9,]* layouts evaluated')\" -eq 16"
else
    echo "ok --report of 16 jobs within the memory of one's # skip: no address-space limit here"
fi

# ---- the ladder's verdict: where nothing fits, the fewest GPUs on which search finds a layout ----
printf 'name,model,seq,micro_batch,global_batch,gpu,dp
405b,llama3.1-405b,8192,1,64,H100-80GB,8
' >"$T/nothing.csv"
run eval "$T/nothing.csv" | cut -d, -f15 >"$T/fix"
check "eval: nothing fits" grep -qx nothing "$T/fix"
run report "$T/nothing.csv" -o "$T/nothing.pdf" 2>/dev/null
n=$(text "$T/nothing.pdf" | sed -n 's/.*finds a layout that fits on \([0-9,]*\) GPUs of this kind, and on no fewer.*/\1/p' | tr -d ,)
printf 'name,model,seq,global_batch,gpu\n405b,llama3.1-405b,8192,64,H100-80GB\n' |
    run search - --gpus-range 1:65536 --top 1 2>/dev/null | awk -F, 'NR == 2 { print $6 }' >"$T/fewest"
check "report: the verdict's count ($n) is search's fewest ($(cat "$T/fewest"))" test -n "$n" -a "$n" = "$(cat "$T/fewest")"
printf 'name,layers,hidden,heads,vocab,seq,micro_batch,global_batch,gpu,arch\nwall,1,1000000,1,32000,8191,1,1,H100-80GB,llama\n' >"$T/wall.csv"
run report "$T/wall.csv" -o "$T/wall.pdf" 2>/dev/null
check "report: no layout up to a cap, said" sh -c "pdftotext '$T/wall.pdf' - | tr -s '[:space:]' ' ' | grep -q 'memfit search finds no layout that fits on any number of them up to [0-9,]*\.'"

# ---- the shipped jobs ----
expect_status "configs/jobs.csv: exit 0" 0 search configs/jobs.csv --top 2
cp "$T/out" "$T/shipped"
check "configs/jobs.csv: every job has a layout" sh -c "! grep -q '^[^,]*,0,' '$T/shipped'"
back_through_eval "configs/jobs.csv" "$T/shipped" "$SC_FIRST"
check "the rows name each job's model preset" sh -c "awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if (\$i == \"model\") m = i } NR > 1 && \$1 == \"llama3.1-70b-64xH100\" && \$m != \"llama3.1-70b\" { bad = 1 } END { exit bad + !m }' '$T/shipped'"
# A report of the search's rows, piped as they are: the model named by its preset, the input
# called standard input.
head -n 3 "$T/shipped" | run report -q -o "$T/fromsearch.pdf" - 2>"$T/err"
pdftotext "$T/fromsearch.pdf" - 2>/dev/null | tr -s '[:space:]' ' ' >"$T/fromsearch.txt"
check "search | report -: read without a message" test ! -s "$T/err"
check "search | report -: the model is its preset" grep -q 'llama3.1-8b (Llama-style)' "$T/fromsearch.txt"
check "search | report -: the input is standard input" grep -q 'Input: standard input\.' "$T/fromsearch.txt"

# The default table shows every degree above 1 and the offload, cutting names to make room: its
# degrees multiply to the job's GPUs.
run search configs/jobs.csv --top 1 --format table >"$T/degrees"
check "table: cp and ep shown where a layout uses them" \
    grep -q '^job .*  tp  pp  cp  ep  *dp  zero ' "$T/degrees"
check "table: a schedule other than 1F1B named, or --wide said to add it" \
    grep -q 'schedule' "$T/degrees"
printf 'name,model,seq,global_batch,gpu,gpus\nl70,llama3.1-70b,8192,64,H100-80GB,8\n' >"$T/l70.csv"
run search "$T/l70.csv" --top 1 --format table >"$T/offload"
check "table: the offload shown where a layout uses it" \
    grep -q '^job .*  tp  pp .*  dp  zero .* offload ' "$T/offload"
check "table: tp pp vpp cp dp multiply to each job's GPUs" awk '
    NR == 1 { sub(/step s/, "step_s"); $0 = $0; for (i = 1; i <= NF; i++) col[$i] = i; next }
    /^---/ { on = 1; next } /^$/ { on = 0 }
    on { n++; g[n] = $col["tp"] * $col["pp"] * $col["cp"] * $col["dp"] }
    /on [0-9]+ GPUs:/ { for (i = 1; i <= NF; i++) if ($i == "on") { m++; want[m] = $(i + 1) } }
    END { if (n == 0 || n != m || !col["cp"]) exit 1; for (i = 1; i <= n; i++) if (g[i] != want[i]) exit 1 }' \
    "$T/degrees"
