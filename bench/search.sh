#!/bin/sh
# Quality bar (doc/model.md 11.5): memfit search goes through Llama-3.1-405B on 16,384 GPUs and
# DeepSeek-V3 on 2,048 (configs/jobs.csv) in well under a second on one core; the reference,
# measured in the same run, is the brute force of the tests (every layout one by one).
: "${BUILD:=build}"
exec "$BUILD/bench/search_bench" configs/jobs.csv "${RUNS:-5}" \
    llama3.1-405b-16384xH100 deepseek-v3-2048xH100
