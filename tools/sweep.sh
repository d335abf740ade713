#!/bin/sh
# A fixed pseudo-random sweep of scenario rows, to standard output: every preset model and GPU,
# sequence lengths, micro-batches, attention, recomputation, the parallelism degrees and ZeRO
# stages; about a third of its rows do not fit (the fix ladder) and a few are rejected by config.
# The same rows on every machine (Park-Miller generator, exact in awk's doubles).
#   sh tools/sweep.sh [ROWS]      (default 20000)
# Used by tools/pgo-train.sh (the profile-guided build's training run) and
# tools/same-outputs.sh (outputs compared before and after a change).
set -eu
rows=${1:-20000}
models=$(awk -F, 'NR > 1 {printf "%s ", $1}' configs/models.csv)
gpus=$(awk -F, 'NR > 1 {printf "%s ", $1}' configs/gpus.csv)
awk -v rows="$rows" -v models="$models" -v gpus="$gpus" '
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
}'
