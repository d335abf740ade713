#!/bin/sh
# The parts of src/ and the one-way rule between them (doc/architecture.md): every include of a
# project header names its part ("model/layer.h"), a part includes only its own headers and those
# of the parts below it, and no chain of includes between modules comes back to where it began.
. tests/cli/common.inc

# allowed PART: the parts whose headers PART may include (its own first).
allowed() {
    case $1 in
    base) echo "base" ;;
    model) echo "model base" ;;
    plan) echo "plan model base" ;;
    input) echo "input plan model base" ;;
    draw) echo "draw plan model base" ;;
    report) echo "report draw plan model base" ;;
    cli) echo "cli report draw input plan model base" ;;
    esac
}
parts="base model plan input draw report cli"

# Every folder of src/ is a part (a new one must be placed in the rule above).
for d in src/*/; do
    p=$(basename "$d")
    check "src/$p is a known part" test -n "$(allowed "$p")"
    check "src/$p says what it owns (README.md)" test -s "src/$p/README.md"
done
check "nothing left in src/ outside the parts" test -z "$(find src -maxdepth 1 -type f)"

# edges: "FILE PART-OF-HEADER HEADER" for each project include.
for p in $parts; do
    for f in src/$p/*.[ch]; do
        sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while read -r h; do echo "$f $h"; done
    done
done >"$T/includes"
check "includes found" test "$(wc -l <"$T/includes")" -ge 150

# violations INCLUDES: each include of INCLUDES ("FILE HEADER" lines) that breaks the rule.
violations() {
    while read -r f h; do
        p=$(echo "$f" | cut -d/ -f2)
        case $h in
        */*) q=${h%%/*} ;;
        *) echo "$f: '$h' names no part"; continue ;;
        esac
        [ -f "src/$h" ] || { echo "$f: 'src/$h' does not exist"; continue; }
        case " $(allowed "$p") " in
        *" $q "*) ;;
        *) echo "$f: $p includes $h, from a part above it or beside it" ;;
        esac
    done <"$1"
}
violations "$T/includes" >"$T/bad"
check "every include names an existing header of the same part or a part below" \
    test ! -s "$T/bad"
sed 's/^/# /' "$T/bad"

# loops INCLUDES: the cycles of the module graph of INCLUDES (a module is src/PART/NAME without
# .c or .h: a file including its own header is no edge), as tsort reports them; nothing when none.
loops() {
    awk '{ m = $1; sub(/^src\//, "", m); sub(/\.[ch]$/, "", m); h = $2; sub(/\.h$/, "", h);
           if (m != h) print m, h }' "$1" | sort -u >"$T/edges"
    tsort "$T/edges" 2>&1 >/dev/null
}
loops "$T/includes" >"$T/loops"
check "no cycle between modules" test ! -s "$T/loops"
sed 's/^/# /' "$T/loops"

# The rule catches what it should: a lower part including a higher one, and a cycle.
printf 'src/model/x.c report/report.h\nsrc/draw/x.c report/doc.h\nsrc/base/x.c strbuf.h\n' >"$T/probe"
violations "$T/probe" >"$T/probe.bad"
check "the rule refuses model -> report, draw -> report and an unqualified include" \
    test "$(wc -l <"$T/probe.bad")" -eq 3
printf 'src/report/a.c report/b.h\nsrc/report/b.c report/a.h\n' >"$T/probe"
check "a cycle between two modules is found" test -n "$(loops "$T/probe")"
printf 'src/report/a.c report/a.h\nsrc/report/a.h report/b.h\n' >"$T/probe"
check "a file including its own header is no cycle" test -z "$(loops "$T/probe")"
