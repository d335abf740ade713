#!/bin/sh
# What -o names is never destroyed, and every input costs a bounded time (issue 29): -o writes
# a regular file whole or not at all and never replaces anything else; an interrupted run leaves
# no temporary file; a FIFO read whole is refused, not waited on; --quiet never hides a failure;
# a write to a full or closed standard output fails the run; a job's GPU range is answered within
# its work limit. The checks that need root (a private mount namespace, a device node) are skipped
# with a note elsewhere.
. tests/cli/common.inc

# expect_status_within NAME STATUS ARGS...: expect_status, a run past 20 s counted as a hang.
expect_status_within() {
    name=$1; want=$2; shift 2
    timeout 20 $VALGRIND "$MEMFIT" "$@" >"$T/out" 2>"$T/err"
    got=$?
    if [ "$got" -eq "$want" ]; then echo "ok $name"; else
        echo "not ok $name: exit $got, expected $want"; sed 's/^/# /' "$T/err" | head -5; fi
}

printf 'name,model,seq,micro_batch,gpu\nok,llama2-7b,2048,1,H100-80GB\n' >"$T/one.csv"
run eval "$T/one.csv" >"$T/want.csv"

# ---- -o: a symbolic link writes its target; a FIFO is written in place; a folder refused ----
echo old >"$T/target.csv"
ln -s target.csv "$T/link.csv"
expect_status "eval -o a symbolic link: exit 0" 0 eval "$T/one.csv" -o "$T/link.csv"
check "the link stays a link" test -L "$T/link.csv"
check "its target holds the rows" cmp -s "$T/target.csv" "$T/want.csv"
ln -s nowhere "$T/dangling.csv"
expect_status "eval -o a link to nothing: exit 2" 2 eval "$T/one.csv" -o "$T/dangling.csv"
expect_err "and says so" "cannot write '$T/dangling.csv': a symbolic link to nothing"
check "the dangling link stays" test -L "$T/dangling.csv"
mkfifo "$T/pipe"
timeout 20 cat "$T/pipe" >"$T/through" & # a FIFO memfit replaced is never written
reader=$!
expect_status "search -o a FIFO with a reader: exit 0" 0 eval "$T/one.csv" -o "$T/pipe"
wait "$reader"
check "the reader got the rows" cmp -s "$T/through" "$T/want.csv"
check "the FIFO stays a FIFO" test -p "$T/pipe"

# /dev/null itself, in a private mount namespace whose /dev is a fresh tmpfs (root only).
if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
    unshare -m sh -c "mount -t tmpfs none /dev && mknod -m 666 /dev/null c 1 3 &&
        $MEMFIT eval '$T/one.csv' -o /dev/null && test -c /dev/null && echo kept" >"$T/ns" 2>&1
    check "eval -o /dev/null as root: /dev/null stays a device" grep -qx kept "$T/ns"
    unshare -m sh -c "mount -t tmpfs none /dev && mknod -m 666 /dev/null c 1 3 &&
        $MEMFIT search configs/jobs.csv --top 1 -o /dev/null && test -c /dev/null && echo kept" \
        >"$T/ns" 2>&1
    check "search -o /dev/null as root: /dev/null stays a device" grep -qx kept "$T/ns"
    # A full disk: a tmpfs of 64 KiB.
    mkdir "$T/small"
    unshare -m sh -c "mount -t tmpfs -o size=64k none '$T/small' &&
        { $MEMFIT figures -o '$T/small/figs'; echo \"figures \$?\";
          ls -A '$T/small' | wc -l; 
          $MEMFIT report configs/examples.csv -o '$T/small/r/s'; echo \"report \$?\";
          ls -A '$T/small' | wc -l; }" >"$T/full" 2>&1
    check "figures on a full disk: exit 2" grep -qx "figures 2" "$T/full"
    check "report on a full disk: exit 2" grep -qx "report 2" "$T/full"
    check "and neither leaves a file or a folder it made" \
        test "$(grep -cx 0 "$T/full")" -eq 2
else
    echo "ok # skipped: -o /dev/null and a full disk need root and a private mount namespace"
fi

# ---- an interrupted run leaves no temporary file ----
mkfifo "$T/slow"
mkdir "$T/int"
for sig in INT TERM HUP; do
    # A shell starts background commands with SIGINT ignored: env gives it back its default.
    env --default-signal="$sig" "$MEMFIT" eval - -o "$T/int/rows.csv" <"$T/slow" 2>/dev/null &
    pid=$!
    exec 3>"$T/slow"
    printf 'name,model,seq,micro_batch,gpu\na,llama2-7b,2048,1,H100-80GB\n' >&3
    n=0
    while [ -z "$(ls -A "$T/int")" ] && [ $n -lt 400 ]; do sleep 0.05; n=$((n + 1)); done
    check "SIG$sig: the temporary file was there while eval ran" test -n "$(ls -A "$T/int")"
    kill -s "$sig" "$pid"
    # A run that did not die would wait on the FIFO forever: closing it ends the check.
    (sleep 30 && kill -s KILL "$pid") >/dev/null 2>&1 &
    guard=$!
    wait "$pid"
    status=$?
    kill "$guard" 2>/dev/null
    exec 3>&-
    check "SIG$sig: eval dies of the signal (status $status)" test "$status" -gt 128
    check "SIG$sig: no temporary file, no output left" test -z "$(ls -A "$T/int")"
done
# What SIGKILL leaves is removed by the next write into the folder.
touch -d '2 hours ago' "$T/int/.memfit-tmp-Ab3dE9"
expect_status "eval -o after a killed run: exit 0" 0 eval "$T/one.csv" -o "$T/int/rows.csv"
check "the killed run's temporary file is gone" test ! -e "$T/int/.memfit-tmp-Ab3dE9"

# ---- files read whole must be regular: a FIFO is refused at once ----
mkfifo "$T/fifo"
expect_status_within "import-config of a FIFO: exit 2, at once" 2 import-config "$T/fifo"
expect_err "it says why" "$T/fifo: cannot open: not a regular file"
expect_status "--template a FIFO: exit 2" 2 report configs/examples.csv --template "$T/fifo" \
    -o "$T/r1"
expect_err "it says why" "cannot read '$T/fifo': not a regular file"
printf 'name,model,seq,micro_batch,gpu\nx,%s,1024,1,H100-80GB\n' "$T/fifo" >"$T/fifomodel.csv"
expect_status "a FIFO as the model path: the row rejected" 1 eval "$T/fifomodel.csv"
expect_err "with its column" "column 'model': $T/fifo: cannot open: not a regular file"
expect_status "--models a FIFO: exit 2" 2 eval configs/examples.csv --models "$T/fifo"
expect_status "--template a folder: exit 2" 2 report configs/examples.csv --template "$T" -o "$T/r2"
expect_err "with the reason" "cannot read '$T': is a folder"
expect_status "--template -: exit 2" 2 report configs/examples.csv --template - -o "$T/r3"
expect_err "says what - is for" "a template is read from a file (standard input is for the"
check "no report folder made for nothing" test ! -e "$T/r1" -a ! -e "$T/r2" -a ! -e "$T/r3"

# ---- --quiet hides rows' notes, never a failure ----
expect_status "eval -q of a missing file: exit 2" 2 eval -q "$T/nonexistent.csv"
expect_err "and says why" "nonexistent.csv: cannot open"
expect_status "report -q with a missing --template: exit 2" 2 report -q configs/examples.csv \
    --template "$T/none.tmpl" -o "$T/r4"
expect_err "and says why" "cannot read '$T/none.tmpl'"
printf 'name,model,seq,micro_batch,gpu\nbad,llama2-7b,abc,1,H100-80GB\n' >"$T/bad.csv"
expect_status "eval -q with a rejected row: exit 1" 1 eval -q "$T/bad.csv"
check "the row's note is hidden" test ! -s "$T/err"
sed -n 2p "$T/one.csv" >>"$T/bad.csv"
sed -n 2p "$T/one.csv" | sed 's/^ok,/ok2,/' >>"$T/bad.csv"
expect_status "eval with a rejected row among good ones: exit 1" 1 eval "$T/bad.csv"
expect_err "says how many rows were written" "memfit: 2 of 3 rows written, 1 rejected"
expect_status "--threads 1: the same" 1 eval --threads 1 "$T/bad.csv"
expect_err "the same count" "memfit: 2 of 3 rows written, 1 rejected"

# ---- standard output full or closed: never a silent exit 0, and the reason said ----
printf '{"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100}\n' \
    >"$T/config.json"
for args in "help" "--version" "eval $T/one.csv" "search configs/jobs.csv --top 1" \
    "import-config $T/config.json"; do
    # shellcheck disable=SC2086
    run $args >/dev/full 2>"$T/err"
    check "memfit $args >/dev/full: exit 2" test $? -eq 2
    expect_err "memfit $args >/dev/full says so, and why" \
        "memfit: cannot write to standard output: No space left on device"
    check "... once" test "$(wc -l <"$T/err")" -eq 1
    # shellcheck disable=SC2086
    run $args >&- 2>"$T/err"
    check "memfit $args >&-: exit 2" test $? -eq 2
done
run eval "$T/one.csv" -o "$T/closed.csv" >&- 2>"$T/err"
check "eval -o FILE with stdout closed: exit 0, the rows in FILE" cmp -s "$T/closed.csv" \
    "$T/want.csv"

# ---- a GPU range is answered within its work limit ----
printf 'name,model,seq,global_batch,gpu_mem_gb,gpus\nnever,llama3.1-8b,4096,64,0.0000001,8:1000000000000\n' \
    >"$T/never.csv"
expect_status_within "a range of a trillion GPUs that never fits: answered (exit 0)" 0 search \
    --format table "$T/never.csv"
expect_out "it says where it stopped" "the search stopped there, short of"
printf 'name,model,seq,global_batch,gpu,gpus\np,llama3.1-8b,4096,1024,H100-80GB,18446744073709551557\n' \
    >"$T/prime.csv"
expect_status_within "a prime count near 2^64: refused at once (exit 1)" 1 search "$T/prime.csv"
expect_err "with the reason" "cannot be split"

# ---- one rule for -o: the missing folders are made, and removed again by a run that fails ----
expect_status "eval -o into missing folders: exit 0" 0 eval "$T/one.csv" -o "$T/new/a/rows.csv"
check "the folders are made and the rows written" cmp -s "$T/new/a/rows.csv" "$T/want.csv"
expect_status "search --report into missing folders: exit 0" 0 search --top 1 \
    --report "$T/new/b/s.pdf" configs/jobs.csv
check "the PDF is written" test -s "$T/new/b/s.pdf"
expect_status "eval -o into missing folders, nothing to read: exit 2" 2 eval "$T/none.csv" \
    -o "$T/gone/c/rows.csv"
check "no folder is left behind" test ! -e "$T/gone"
expect_status "search --report with --format table: exit 0" 0 search --top 1 --format table \
    --report "$T/s2.pdf" configs/jobs.csv
expect_out "the table is printed as asked" "layouts tried"
check "and the PDF written" test -s "$T/s2.pdf"
