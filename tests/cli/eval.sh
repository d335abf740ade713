#!/bin/sh
# memfit eval on the command line: formats, messages, exit status (doc/memfit.1: OPTIONS,
# THE SCENARIO CSV, OUTPUT, EXIT STATUS).
. tests/cli/common.inc

expect_status "examples evaluate" 0 eval configs/examples.csv
check "csv header is the column order of doc/memfit.1" test "$(head -n 1 "$T/out")" = \
"name,params,weights_bytes,grads_bytes,optimizer_bytes,states_bytes,act_layer_bytes,act_bytes,logits_bytes,peak_bytes,budget_bytes,fits,k_best,max_micro_batch,fix,fix_peak_bytes,fix_micro_batch,fix_plan,active_params,expert_bytes"
expect_out "worked example row" "lesson-1.3b,1311528960,2623057920,2623057920,15738347520,20984463360,"
check "one row per scenario" test "$(wc -l <"$T/out")" -eq "$(( $(wc -l <configs/examples.csv) ))"

expect_status "table format" 0 eval --format table configs/examples.csv
expect_out "table shows 116.1 GB" "116.1"
expect_out "table shows 51.7 GB" "51.7"
expect_out "table shows 27.0 GB" "27.0"
expect_out "table shows 35.6 GB" "35.6"
expect_out "table shows 20.3 GB" "20.3"
expect_status "GiB units" 0 eval --format table --units GiB configs/examples.csv
expect_out "GiB header" "peak GiB"
expect_out "116.1 GB is 108.1 GiB" "108.1"

expect_status "json format" 0 eval --format json configs/examples.csv
check "json parses with 14 objects" /usr/bin/python3 -c "import json,sys; d=json.load(open('$T/out')); assert len(d)==14 and d[0]['params']==1311528960 and d[0]['fits']==0"

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
# rationals).
/usr/bin/python3 tests/independent/model_ref.py "$MEMFIT" 400 2026

# The planner's columns (doc/model.md section 11).
run eval configs/examples.csv >"$T/out" 2>"$T/err"
check "fits as it is: fix none" grep -q '^lesson-1.3b-flash,.*,none,51683688448,8,,1311528960,0$' "$T/out"
check "worked example (doc/model.md 9.5): the cheapest fix is flash at 51.7 GB" grep -q '^lesson-1.3b,.*,flash,51683688448,8,attention=flash,1311528960,0$' "$T/out"
printf 'name,model,seq,micro_batch,gpu,gpus_per_node\nhuge,llama2-70b,4096,1,H100-80GB,1\n' >"$T/nothing.csv"
expect_status "nothing fits" 0 eval --format table "$T/nothing.csv"
expect_out "nothing fits names the GPUs the states need" "nothing fits: the model states alone need 14 GPUs"

# A progress bar on stderr when asked (auto: only on a terminal), never in the output.
expect_status "--progress always" 0 eval --progress always configs/examples.csv
expect_err "progress bar drawn" "configs/examples.csv ["
expect_err "progress reaches 100%" "100%"
check "stdout is the plain CSV" test "$(grep -c '%' "$T/out")" -eq 0
expect_status "--progress auto off a terminal" 0 eval configs/examples.csv
check "no progress off a terminal" test ! -s "$T/err"
expect_status "--progress bad" 2 eval --progress sometimes configs/examples.csv
