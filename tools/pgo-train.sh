#!/bin/sh
# The training run of the profile-guided build (Makefile, PGO=1): the instrumented memfit does
# what users run most, and its counts steer the real build's optimisation.
#   sh tools/pgo-train.sh MEMFIT
# - eval of a sweep of 20,000 generated rows: every preset model and GPU, the parallelism degrees,
#   ZeRO stages, recomputation, attention, sequence lengths and micro-batches, about a third of
#   rows that do not fit (the fix ladder) and a few that config rejects; CSV under both --peak
#   models, JSON and the table;
# - search of the shipped jobs (configs/jobs.csv).
# The rows are a fixed pseudo-random sweep (Park-Miller generator, exact in awk's doubles), the
# same on every machine; they are not the benchmark's rows (bench/eval_throughput.py).
set -eu
memfit=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
models=$(awk -F, 'NR > 1 {printf "%s ", $1}' configs/models.csv)
gpus=$(awk -F, 'NR > 1 {printf "%s ", $1}' configs/gpus.csv)
awk -v rows=20000 -v models="$models" -v gpus="$gpus" '
function pick(n) { x = (x * 16807) % 2147483647; return x % n }
function one(list, n) { return list[pick(n) + 1] }
BEGIN {
    x = 20261201
    nm = split(models, m, " "); ng = split(gpus, g, " ")
    ns = split("1024 2048 4096 4096 8192 8192 16384 32768", s, " ")
    na = split("flash flash flash plain", a, " ")
    nr = split("none selective full 2 4", r, " ")
    nd = split("1 2 8 16 64 128", d, " ")
    nt = split("1 1 2 4 8", t, " ")
    np = split("1 1 1 2 4", p, " ")
    print "name,model,seq,micro_batch,attention,recompute,dp,tp,pp,zero,gpu"
    for (i = 0; i < rows; i++)
        printf "t%d,%s,%s,%d,%s,%s,%s,%s,%s,%d,%s\n", i, one(m, nm), one(s, ns), 1 + pick(8),
            one(a, na), one(r, nr), one(d, nd), one(t, nt), one(p, np), pick(4), one(g, ng)
}' > "$dir/sweep.csv"
# Exit status 1: the rows config rejects (their messages are not wanted here); anything else,
# a crash included, fails the build.
rejected() {
    status=0
    "$@" > /dev/null 2>&1 || status=$?
    [ "$status" -le 1 ] || { echo "pgo-train: $* exited with status $status" >&2; exit 1; }
}
rejected "$memfit" eval "$dir/sweep.csv"
rejected "$memfit" eval --peak lesson "$dir/sweep.csv"
"$memfit" eval --format json configs/examples.csv > /dev/null
"$memfit" eval --format table configs/examples.csv > /dev/null
"$memfit" search configs/jobs.csv > /dev/null
