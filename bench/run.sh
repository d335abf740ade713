#!/bin/sh
# Runs every benchmark; each prints medians and ratios against a reference measured in the same run.
set -e
: "${MEMFIT:=build/memfit}"
/usr/bin/python3 bench/eval_throughput.py "$MEMFIT" "${ROWS:-1000000}" "${RUNS:-5}"
for b in bench/*.sh; do
    [ "$b" = bench/run.sh ] || sh "$b"
done
