#!/bin/sh
# tools/pgo-train.sh, the profile-guided build's training run, with stand-ins for memfit: the
# sweep's rejected rows (exit 1) are expected, a crash or a failing command fails the build.
. tests/cli/common.inc

# A stand-in that logs its arguments, keeps the sweep, and exits with $STATUS_SWEEP for the
# sweep's evals, $STATUS_OTHER for the other commands.
cat >"$T/memfit" <<'SH'
#!/bin/sh
echo "$*" >>"$LOG"
case "$*" in
*sweep.csv) for a; do last=$a; done; cp "$last" "$KEEP"; exit "$STATUS_SWEEP" ;;
*) exit "$STATUS_OTHER" ;;
esac
SH
chmod +x "$T/memfit"
export LOG="$T/log" KEEP="$T/sweep.csv"

train() { STATUS_SWEEP=$1 STATUS_OTHER=$2 sh tools/pgo-train.sh "$T/memfit" >"$T/out" 2>"$T/err"; }

: >"$LOG"
train 1 0
check "rows rejected by config (exit 1): the training succeeds" test $? -eq 0
check "the sweep is evaluated under both peaks" \
    test "$(grep -c 'sweep.csv' "$LOG")" -eq 2 -a "$(grep -c -- '--peak lesson' "$LOG")" -eq 1
check "then JSON, the table and search" \
    test "$(grep -c 'format json\|format table\|^search configs/jobs.csv' "$LOG")" -eq 3
check "the sweep: a header and 20,000 rows" test "$(wc -l <"$KEEP")" -eq 20001
check "every preset model in it" sh -c "awk -F, 'NR > 1 {print \$1}' configs/models.csv |
    while read -r m; do grep -q \",\$m,\" '$KEEP' || exit 1; done"
cp "$KEEP" "$T/first.csv"
train 1 0
check "the same sweep on every run" cmp -s "$KEEP" "$T/first.csv"

train 139 0
check "a crash in the sweep's eval: the training fails" test $? -ne 0
check "and says which command" grep -q "eval .*sweep.csv exited with status 139" "$T/err"
train 0 1
check "a failing command outside the sweep: the training fails" test $? -ne 0
