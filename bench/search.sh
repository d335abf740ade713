#!/bin/sh
# Quality bar (doc/model.md 11.5): memfit search goes through Llama-3.1-405B on 16,384 GPUs and
# DeepSeek-V3 on 2,048 (configs/jobs.csv) in well under a second on one core; the reference,
# measured in the same run, is the brute force of the tests (every layout one by one). Then
# --top 100000 on the 405B job (the top list is a heap): its 100,000 rows in seconds.
: "${BUILD:=build}"
"$BUILD/bench/search_bench" configs/jobs.csv "${RUNS:-5}" \
    llama3.1-405b-16384xH100 deepseek-v3-2048xH100 || exit 1
jobs=$(mktemp)
trap 'rm -f "$jobs"' EXIT
head -n 1 configs/jobs.csv >"$jobs"
grep '^llama3.1-405b-16384xH100,' configs/jobs.csv >>"$jobs"
start=$(date +%s.%N)
rows=$("$BUILD/memfit" search --top 100000 --format csv "$jobs" | wc -l)
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" -v r="$rows" 'BEGIN {
    t = e - s
    printf "search --top 100000, 405B on 16,384 GPUs: %d rows in %.2f s (bar: 10 s)\n", r - 1, t
    exit !(r - 1 == 100000 && t < 10) }'
