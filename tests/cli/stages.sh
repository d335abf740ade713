#!/bin/sh
# Published pipeline layouts (configs/published.csv; doc/model.md 6.3 and 6.4): uneven stages,
# the stage eval names, and what each schedule keeps.
. tests/cli/common.inc

expect_status "the published layouts evaluate" 0 eval --peak lesson configs/published.csv
check "one row each" test "$(wc -l <"$T/out")" -eq 5
cp "$T/out" "$T/pub.csv"
# stage NAME: eval's stage column of a row.
stage() { awk -F, -v n="$1" '$1 == n { print $22 }' "$T/pub.csv"; }
# Llama 3 405B, 126 layers on 16: 7, 8 x 14, 7. Stage 1 holds one layer more than stage 0 and
# one micro-batch fewer in flight: 8 x 15 layer-micro-batches against 7 x 16, and 8 layers'
# states against 7 and the embedding (a layer has 3.3 billion parameters, the embedding 2.1).
check "Llama 3 405B: stage 1 is the heaviest" test "$(stage llama3.1-405b-tp8-pp16-dp128)" = 1
# BLOOM, 70 on 12: 5, 6 x 10, 5; stage 0 holds the 250,880 x 14,336 embedding (3.6 billion
# parameters, more than a layer's 2.5), and 5 x 12 checkpoints against 6 x 11.
check "BLOOM: stage 0 is the heaviest" test "$(stage bloom-176b-tp4-pp12-dp8)" = 0
# MT-NLG, 105 on 35: 3 layers each, so the first stage, with the embedding and the most in flight.
check "MT-NLG: stage 0 is the heaviest" test "$(stage mt-nlg-530b-tp8-pp35-dp8)" = 0
# DeepSeek-V3, 61 on 16: 3, 3, 4 x 13, 3, the first three layers dense. Under DualPipe GPU r holds
# stages r and 15 - r: GPU 2 (stages 2 and 13, 8 MoE layers) is the first with the most.
check "DeepSeek-V3 under DualPipe: GPU 2 is the heaviest" \
    test "$(stage deepseek-v3-pp16-ep64-dualpipe)" = 2

# The same split written out: 7 on the first and last stage, the rest even.
sed -n '1p; /^llama3.1/p' configs/published.csv >"$T/llama.csv"
sed 's/^name,/name,first_stage_layers,last_stage_layers,/; 2s/^/7,7,/; 2s/^7,7,\([^,]*\)/\1,7,7/' \
    "$T/llama.csv" >"$T/given.csv"
expect_status "first_stage_layers and last_stage_layers given" 0 eval --peak lesson "$T/given.csv"
check "7, 8 x 14, 7 given is the automatic split" \
    test "$(cut -d, -f2- "$T/out" | tail -n 1)" = "$(sed -n '/^llama3.1/p' "$T/pub.csv" | cut -d, -f2-)"
# And as the Llama 3 paper (3.3.2) splits it: the embedding and the loss each a slot of the 128,
# 8 a stage; without interleaving the same split again, and with 8 chunks a stage (one slot
# each: the embedding's chunk and the loss's hold no layer) stage 1 still the heaviest.
sed 's/^name,/name,embedding_in_split,loss_in_split,/; 2s/^\([^,]*\),/\1,yes,yes,/' \
    "$T/llama.csv" >"$T/slots.csv"
expect_status "the embedding's and the loss's slots" 0 eval --peak lesson "$T/slots.csv"
check "the slots without interleaving are the automatic split" \
    test "$(cut -d, -f2- "$T/out" | tail -n 1)" = "$(sed -n '/^llama3.1/p' "$T/pub.csv" | cut -d, -f2-)"
sed 's/^name,/name,vpp,/; 2s/^\([^,]*\),/\1,8,/' "$T/slots.csv" >"$T/slots8.csv"
expect_status "the slots with 8 chunks a stage" 0 eval --peak lesson "$T/slots8.csv"
check "Llama 3 405B with 8 chunks a stage: stage 1 is the heaviest" \
    test "$(awk -F, 'NR == 2 { print $22 }' "$T/out")" = 1

# Schedules (DeepSeek-V3 report, Table 2). GPU 2 under 1F1B holds stage 2 alone: 4 MoE layers,
# 14 micro-batches in flight; under DualPipe stages 2 and 13: twice the states, 14 + 3 = 17.
sed -n '1p; /^deepseek/p' configs/published.csv >"$T/ds.csv"
sed 's/,dualpipe$/,1f1b/' "$T/ds.csv" >"$T/ds1.csv"
sed 's/,dualpipe$/,zb1p/' "$T/ds.csv" >"$T/dszb.csv"
run eval --peak lesson "$T/ds.csv" | tail -n 1 >"$T/dual"
run eval --peak lesson "$T/ds1.csv" | tail -n 1 >"$T/one"
run eval --peak lesson "$T/dszb.csv" | tail -n 1 >"$T/zb"
col() { cut -d, -f"$1" "$2"; }
check "1F1B: stage 2 is the heaviest" test "$(col 22 "$T/one")" = 2
check "DualPipe keeps two copies of the parameters: twice the states" \
    test "$(col 6 "$T/dual")" -eq "$(($(col 6 "$T/one") * 2))"
check "DualPipe keeps pp + 1 micro-batches in flight: 17/14 of 1F1B's activations on GPU 2" \
    test "$(($(col 8 "$T/dual") * 14))" -eq "$(($(col 8 "$T/one") * 17))"
check "ZB1P keeps 1F1B's memory (its step is shorter)" test "$(cut -d, -f2-22 "$T/zb")" = "$(cut -d, -f2-22 "$T/one")"
