#!/bin/sh
# Quality bar (doc/model.md 11.5): memfit search goes through Llama-3.1-405B on 16,384 GPUs and
# DeepSeek-V3 on 2,048 (configs/jobs.csv; and as its report ran it, FP8 on H800s with tokens
# routed to at most 4 nodes) in well under a second on one core; the reference, measured in the
# same run, is the brute force of the tests (every layout one by one). Then --top 100000 on the
# 405B job (the top list is a heap): its 100,000 rows in seconds.
: "${BUILD:=build}"
jobs=$(mktemp)
trap 'rm -f "$jobs"' EXIT
"$BUILD/bench/search_bench" configs/jobs.csv "${RUNS:-5}" \
    llama3.1-405b-16384xH100 deepseek-v3-2048xH100 || exit 1
cat >"$jobs" <<'CSV'
name,model,seq,global_batch,gpu,gpus,fp8,moe_max_nodes
deepseek-v3-fp8-2048xH800,deepseek-v3,4096,15360,H800-80GB,2048,tensor,4
CSV
"$BUILD/bench/search_bench" "$jobs" "${RUNS:-5}" deepseek-v3-fp8-2048xH800 || exit 1
head -n 1 configs/jobs.csv >"$jobs"
grep '^llama3.1-405b-16384xH100,' configs/jobs.csv >>"$jobs"
start=$(date +%s.%N)
rows=$("$BUILD/memfit" search --top 100000 --format csv "$jobs" | wc -l)
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" -v r="$rows" 'BEGIN {
    t = e - s
    printf "search --top 100000, 405B on 16,384 GPUs: %d rows in %.2f s (bar: 10 s)\n", r - 1, t
    exit !(r - 1 == 100000 && t < 10) }'
