#!/bin/sh
# The README's examples are what the program prints: every block that starts with
# "$ ./memfit ARGS" is run, and each line it shows must come out, in the order shown ("..." stands
# for lines left out); the messages it quotes inline are checked the same way.
. tests/cli/common.inc

awk -v dir="$T" '
/^```/ { if (inblock) { inblock = 0; close(out) } else { fence = 1 }; next }
fence && /^\$ \.\/memfit / { n++; out = dir "/ex" n; inblock = 1; fence = 0
                             sub(/^\$ \.\/memfit /, ""); print > (out ".cmd"); next }
{ fence = 0 }
inblock { print > out }
' README.md
count=$(ls "$T"/ex*.cmd 2>/dev/null | wc -l)
check "the README's examples found" test "$count" -ge 2

# shows_in_order SHOWN ACTUAL: each line of SHOWN but "..." is a line of ACTUAL, in order.
shows_in_order() {
    awk 'NR == FNR { if ($0 != "...") want[++n] = $0; next }
         { sub(/[ \t]+$/, ""); if (i < n && $0 == want[i + 1]) i++ }
         END { if (i < n) { print "# missing: " want[i + 1]; exit 1 } }' "$1" "$2"
}

for cmd in "$T"/ex*.cmd; do
    ex=${cmd%.cmd}
    args=$(cat "$cmd")
    # shellcheck disable=SC2086
    run $args >"$ex.out" 2>&1
    check "README: memfit $args" shows_in_order "$ex" "$ex.out"
done

# The report's message, quoted inline.
quoted=$(sed -n 's/.*`\(memfit: wrote out\/report.pdf ([^`]*)\)`.*/\1/p' README.md)
check "README quotes report's message" test -n "$quoted"
run report configs/examples.csv -o "$T/out" 2>&1 >/dev/null | sed "s|$T/out|out|" >"$T/report.err"
check "README: $quoted" grep -qxF "$quoted" "$T/report.err"
