#!/bin/sh
# The training run of the profile-guided build (Makefile, PGO=1): the instrumented memfit does
# what users run most, and its counts steer the real build's optimisation.
#   sh tools/pgo-train.sh MEMFIT
# - eval of a sweep of 20,000 generated rows: every preset model and GPU, the parallelism degrees,
#   ZeRO stages, recomputation, attention, sequence lengths and micro-batches, about a third of
#   rows that do not fit (the fix ladder, or the cheapest fix's search under the step's peak, on
#   the first 2,000 rows) and a few that config rejects; CSV under both --peak models, JSON and
#   the table;
# - search of the shipped jobs (configs/jobs.csv).
# The rows are tools/sweep.sh's fixed pseudo-random sweep, the same on every machine; they are
# not the benchmark's rows (bench/eval_throughput.py).
set -eu
memfit=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sh "$(dirname "$0")/sweep.sh" 20000 > "$dir/sweep.csv"
# Exit status 1: the rows config rejects (their messages are not wanted here); anything else,
# a crash included, fails the build.
rejected() {
    status=0
    "$@" > /dev/null 2>&1 || status=$?
    [ "$status" -le 1 ] || { echo "pgo-train: $* exited with status $status" >&2; exit 1; }
}
# Under the step's peak each row that does not fit searches its cheapest fix (milliseconds a
# distinct job): the first 2,000 rows are enough there; under --peak lesson all of them.
head -n 2001 "$dir/sweep.csv" > "$dir/step-sweep.csv"
rejected "$memfit" eval "$dir/step-sweep.csv"
rejected "$memfit" eval --peak lesson "$dir/sweep.csv"
"$memfit" eval --format json configs/examples.csv > /dev/null
"$memfit" eval --format table configs/examples.csv > /dev/null
"$memfit" search configs/jobs.csv > /dev/null
