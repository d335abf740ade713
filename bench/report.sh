#!/bin/sh
# Quality bar: `report` at least 50x faster per scenario than the same pages drawn with
# Python + matplotlib (see bench/report_vs_matplotlib.py; prints "skipped" without matplotlib).
: "${MEMFIT:=build/memfit}"
exec /usr/bin/python3 bench/report_vs_matplotlib.py "$MEMFIT" "${SCENARIOS:-48}" "${RUNS:-7}" "${MPL_RUNS:-3}"
