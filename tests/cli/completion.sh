#!/bin/sh
# doc/memfit.bash, the bash completion: sourced in bash, its function called as bash calls it
# (COMP_WORDS, COMP_CWORD), what it offers for commands, options, option values and file names;
# that it knows every command and option the program's help lists; and that `make install`
# puts it where bash-completion looks.
. tests/cli/common.inc
COMPLETION=$PWD/doc/memfit.bash

if ! command -v bash >/dev/null 2>&1; then
    echo "not ok bash is installed"
    exit 1
fi
check "bash -n doc/memfit.bash" bash -n "$COMPLETION"

# offers WORD...: the completions, sorted, on one line, of the last WORD (may be empty) of the
# command line "WORD..." (the first being memfit), run from the current folder.
offers() {
    bash -c '. "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _memfit
             printf "%s\n" "${COMPREPLY[@]}"' "$COMPLETION" "$@" | sort | tr '\n' ' ' | sed 's/ $//'
}
# expect_offers WANT WORD...: offers WORD... is exactly WANT.
expect_offers() {
    want=$1; shift
    got=$(offers "$@")
    if [ "$got" = "$want" ]; then echo "ok completes '$*' to '$want'"; else
        echo "not ok completes '$*' to '$want': got '$got'"; fi
}

# ---- commands, options, values ----
expect_offers "figures" memfit fi
expect_offers "eval" memfit ev
expect_offers "report" memfit help rep
expect_offers "--format" memfit eval --fo
expect_offers "--split" memfit report --sp
expect_offers "" memfit eval --sp
expect_offers "--wide" memfit -q eval --wi
expect_offers "--wide" memfit --units GB eval --wi
expect_offers "csv json table" memfit eval --format ""
expect_offers "json" memfit eval --format j
expect_offers "json" memfit eval --format = j
expect_offers "csv json table" memfit eval --format =
expect_offers "GB GiB" memfit eval --units G
expect_offers "a4 letter" memfit report --paper ""
expect_offers "always auto" memfit report --progress a
expect_offers "--peak" memfit eval --pe
expect_offers "search" memfit se
expect_offers "--tokens --top" memfit search --to
expect_offers "--gpus --gpus-range" memfit search --gp
expect_offers "" memfit eval --to
expect_offers "csv json table" memfit search --format ""
expect_offers "--peak" memfit report --pe
expect_offers "" memfit figures --pe
expect_offers "lesson step" memfit eval --peak ""
expect_offers "lesson" memfit report --peak l
expect_offers "step" memfit eval --peak = s
expect_offers "eval" memfit --peak lesson ev
expect_offers "--help --quiet --version" memfit --
expect_offers "eval" memfit --units GB ev

# ---- file names ----
mkdir -p "$T/files/sub"
: >"$T/files/a.csv"
: >"$T/files/notes.txt"
: >"$T/files/r.tmpl"
: >"$T/files/old.pdf"
cd "$T/files" || exit 1
expect_offers "a.csv sub" memfit eval ""
expect_offers "a.csv" memfit report a
expect_offers "r.tmpl sub" memfit report --template ""
expect_offers "a.csv sub" memfit eval --models ""
expect_offers "a.csv sub" memfit eval --peak step ""
expect_offers "a.csv sub" memfit search --top 3 ""
expect_offers "old.pdf sub" memfit search --report ""
expect_offers "a.csv sub" memfit search --gpus-range 8:64 ""
expect_offers "old.pdf sub" memfit report -o ""
expect_offers "sub" memfit figures --out ""
cd - >/dev/null || exit 1

# ---- the same commands and options as the program ----
# The commands of `memfit --help`'s usage lines, and each one's options in `memfit help CMD`.
run --help | sed -n 's/^\(usage:\)\{0,1\} *memfit \([a-z][a-z-]*\) .*/\2/p' | sort | tr '\n' ' ' |
    sed 's/ $//' >"$T/commands"
expect_offers "$(cat "$T/commands")" memfit ""
for c in $(cat "$T/commands"); do
    run help "$c" | sed -n 's/^  \(-[a-z]\), \(--[a-z-]*\).*/\1 \2/p; s/^      \(--[a-z-]*\).*/\1/p' |
        tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//' >"$T/opts"
    check "help $c lists options" test -s "$T/opts"
    expect_offers "$(cat "$T/opts")" memfit "$c" -
done

# ---- make install / uninstall ----
b=$(dirname "$MEMFIT")
if make -s -o "$MEMFIT" install BUILD="$b" DESTDIR="$T/root" PREFIX=/usr >"$T/make" 2>&1; then
    echo "ok make install DESTDIR=... succeeds"; else
    echo "not ok make install DESTDIR=... succeeds"; tail -n 5 "$T/make" | sed 's/^/# /'; fi
check "make install puts it in share/bash-completion/completions/memfit" \
    cmp -s "$COMPLETION" "$T/root/usr/share/bash-completion/completions/memfit"
make -s -o "$MEMFIT" uninstall BUILD="$b" DESTDIR="$T/root" PREFIX=/usr >>"$T/make" 2>&1
check "make uninstall removes it" test ! -e "$T/root/usr/share/bash-completion/completions/memfit"
