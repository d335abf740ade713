#!/bin/sh
# Runs the unit-test binaries given as arguments, then every tests/cli/*.sh script, and prints
# one closing line "N passed, N failed". VALGRIND, when set, prefixes every program run.
set -u
export LC_ALL=C
: "${VALGRIND:=}"
: "${MEMFIT:=build/memfit}"
export VALGRIND MEMFIT
passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "$@"; do
    $VALGRIND "$t" >"$log" 2>&1
    rc=$?
    run=$(sed -n "s/.*\[==========\] \([0-9]*\) test(s) run\..*/\1/p" "$log" | tail -n 1)
    run=${run:-0}
    if [ "$rc" -ne 0 ]; then
        cat "$log"
        nfail=$(sed -n "s/.*\[  FAILED  \] \([0-9]*\) test(s).*/\1/p" "$log" | tail -n 1)
        nfail=${nfail:-1}
        [ "$nfail" -gt "$run" ] && run=$nfail
        failed=$((failed + nfail))
        passed=$((passed + run - nfail))
        echo "FAIL $(basename "$t") (exit $rc)"
    else
        passed=$((passed + run))
        echo "ok   $(basename "$t"): $run tests"
    fi
done
for s in tests/cli/*.sh tests/arch/*.sh; do
    [ -f "$s" ] || continue
    sh "$s" >"$log" 2>&1
    rc=$?
    p=$(grep -c '^ok ' "$log")
    f=$(grep -c '^not ok ' "$log")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$f" -ne 0 ]; then
        grep -v '^ok ' "$log"
        echo "FAIL $(basename "$s")"
    else
        echo "ok   $(basename "$s"): $p checks"
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
