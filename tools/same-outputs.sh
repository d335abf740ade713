#!/bin/sh
# Are memfit's outputs byte for byte those of an earlier commit? For a change meant to change no
# output (a restructuring, a speed-up): every command's files, standard output, standard error
# and exit status on the shipped examples, jobs, a generated sweep and some bad input.
#   sh tools/same-outputs.sh [REV]       (default HEAD; run from the repository root)
# REV is built in a temporary worktree and the working tree in build/same, both with PGO=0 (the
# profile changes speed, never a byte). Prints one line per differing output and exits 1 if any;
# KEEP=1 keeps the outputs (the folder is named at the end).
set -eu
rev=${1:-HEAD}
root=$(pwd)
tmp=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tmp/before" >/dev/null 2>&1 || true; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
git worktree add --detach "$tmp/before" "$rev" >/dev/null 2>&1
make -s -C "$tmp/before" PGO=0 BUILD=build/same build/same/memfit >/dev/null
make -s PGO=0 BUILD=build/same build/same/memfit >/dev/null

sh tools/sweep.sh 4000 >"$tmp/sweep.csv"
cat >"$tmp/bad.csv" <<'CSV'
name,model,seq,micro_batch,gpu,heads,tp
ok,llama2-7b,4096,1,H100-80GB,,
bad-heads,llama2-7b,4096,1,H100-80GB,abc,
bad-tp,llama2-7b,4096,1,H100-80GB,,3
ok,gpt2-small,1024,1,A100-40GB,,
CSV
cat >"$tmp/config.json" <<'JSON'
{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
 "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
 "vocab_size": 128256, "tie_word_embeddings": false}
JSON

# outputs MEMFIT DIR: every command's outputs into DIR (run inside DIR: paths in messages agree).
outputs() {
    m=$1 d=$2
    mkdir -p "$d" && cd "$d"
    n=0
    # one NAME ARGS...: stdout, stderr and exit status of memfit ARGS into NAME.*
    one() {
        name=$1; shift
        rc=0
        COLUMNS=100 "$m" "$@" >"$name.out" 2>"$name.err" || rc=$?
        echo "$rc" >"$name.rc"
    }
    one eval-csv eval "$root/configs/examples.csv"
    one eval-json eval --format json "$root/configs/examples.csv"
    one eval-table eval --format table "$root/configs/examples.csv"
    one eval-lesson eval --peak lesson --units GiB "$root/configs/examples.csv"
    one eval-sweep eval "$tmp/sweep.csv"
    one eval-sweep-lesson eval --peak lesson --format json "$tmp/sweep.csv"
    one eval-bad eval "$tmp/bad.csv"
    one search-csv search "$root/configs/jobs.csv"
    one search-json search --format json --top 3 "$root/configs/jobs.csv"
    one search-table search --format table "$root/configs/jobs.csv"
    one search-report search --report search.pdf "$root/configs/jobs.csv"
    one report report --split -o report "$root/configs/examples.csv"
    one figures figures -o figures
    one import import-config "$tmp/config.json"
    for c in "" eval report figures search import-config; do one "help-$c" help $c; done
    one version --version
    one usage eval --no-such-option
    cd "$root"
}
outputs "$tmp/before/build/same/memfit" "$tmp/a"
outputs "$root/build/same/memfit" "$tmp/b"

differ=0
for f in $(cd "$tmp/a" && find . -type f | sort); do
    cmp -s "$tmp/a/$f" "$tmp/b/$f" || { echo "differs: $f"; differ=1; }
done
for f in $(cd "$tmp/b" && find . -type f | sort); do
    [ -f "$tmp/a/$f" ] || { echo "new: $f"; differ=1; }
done
count=$(cd "$tmp/a" && find . -type f | wc -l)
[ "$differ" -eq 0 ] && echo "same-outputs: $count outputs identical to $rev"
[ -z "${KEEP:-}" ] || echo "same-outputs: outputs kept in $tmp/a and $tmp/b"
exit "$differ"
