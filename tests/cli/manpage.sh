#!/bin/sh
# doc/memfit.1: renders without warnings, documents every option, CSV column, output column,
# template name, environment variable and data file the program knows, and `make install` puts it
# in share/man/man1. The lists come from the program (--help, the eval header, the CSV reader's
# verdict on each column) or from the tables of src/ that the program uses.
. tests/cli/common.inc

PAGE=doc/memfit.1
check "$PAGE exists" test -f "$PAGE"

# ---- rendering ----
if ! command -v groff >/dev/null 2>&1; then
    echo "not ok groff is installed (tools/deps.sh installs groff-base)"
    exit 1
fi
for dev in ascii utf8; do
    groff -man -ww -z -T"$dev" "$PAGE" >"$T/warn" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ] && [ ! -s "$T/warn" ]; then echo "ok renders without warnings (-T$dev)"; else
        echo "not ok renders without warnings (-T$dev): exit $rc"; head -5 "$T/warn" | sed 's/^/# /'; fi
done
if command -v man >/dev/null 2>&1; then
    man --warnings -l "$PAGE" >/dev/null 2>"$T/warn"
    check "man --warnings -l: no warnings" test ! -s "$T/warn"
fi

# Plain text, no hyphenation, no bold or underline: what a reader sees and greps.
groff -man -Tascii -P-cbou -rHY=0 "$PAGE" >"$T/page" 2>/dev/null
check "renders to text" test -s "$T/page"

# section NAME: the rendered text of section NAME, up to the next section heading.
section() {
    awk -v s="$1" '/^[A-Z]/ { on = ($0 == s); next } on' "$T/page"
}
# has_tag FILE WORD: WORD is the tag of an entry (an indented paragraph) of FILE, alone or in a
# comma-separated list of tags ("-o DIR, --out DIR", "weights_bytes, grads_bytes"), not merely a
# word of running text.
has_tag() {
    grep -qE "^       ([^ ,]+( [A-Z]+)?, )*$2( |,|\$)" "$1"
}
for s in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS "THE SCENARIO CSV" OUTPUT "THE FIX LADDER" \
    "EXIT STATUS" ENVIRONMENT FILES EXAMPLES "SEE ALSO"; do
    check "section $s" grep -qx "$s" "$T/page"
done

# ---- the command line ----
run --help >"$T/help" 2>&1
check "memfit --help" test -s "$T/help"
section SYNOPSIS >"$T/synopsis"
for c in $(sed -n 's/^\(usage:\)\{0,1\} *memfit \([a-z][a-z]*\) .*/\2/p' "$T/help"); do
    check "SYNOPSIS shows the command $c" grep -q "^ *memfit $c" "$T/synopsis"
done
check "SYNOPSIS shows --help and --version" sh -c "grep -q 'memfit --help' '$T/synopsis' && grep -q 'memfit --version' '$T/synopsis'"
check "SYNOPSIS shows -h" grep -q 'memfit --help | -h' "$T/synopsis"

# Options: those --help lists, those of the option table (src/cli/help.c) and the short options
# of getopt_long's string (src/cli/options.c), read from every file of src/cli.
section OPTIONS >"$T/options"
{
    sed -n 's/^ *{"\([a-z][a-z-]*\)", *[a-z_]*_argument.*/--\1/p' src/cli/*.c
    sed -n 's/.*getopt_long([^"]*"\([^"]*\)".*/\1/p' src/cli/*.c | tr -d ':' | sed 's/./-&\n/g'
} | grep -v '^$' | sort -u >"$T/srcopts"
n_long=$(grep -c -- '^--' "$T/srcopts")
n_short=$(grep -c -- '^-[a-z]$' "$T/srcopts")
check "options found in src/cli/*.c (the table's long names, getopt_long's letters)" \
    test "$n_long" -ge 15 -a "$n_short" -ge 3
{
    grep -oE -- '(^|[ ,|])--?[a-z][a-z-]*' "$T/help" | sed 's/^[ ,|]//'
    cat "$T/srcopts"
    # and those of each command's own help
    for c in $(sed -n 's/^\(usage:\)\{0,1\} *memfit \([a-z][a-z-]*\) .*/\2/p' "$T/help"); do
        run help "$c" | grep -oE -- '^ +(-[a-z], )?--[a-z][a-z-]*' | tr ',' '\n' | tr -d ' '
    done
} | grep -v '^$' | sort -u >"$T/optlist"
check "options found (--help and src/cli/*.c)" test "$(wc -l <"$T/optlist")" -ge 10
while read -r opt; do
    if has_tag "$T/options" "$opt"; then echo "ok OPTIONS documents $opt"; else
        echo "not ok OPTIONS documents $opt"; fi
done <"$T/optlist"
v=$(run --version)
check "the page's version is that of --version ($v)" grep -q "^\.TH MEMFIT 1 [^ ]* \"$v\"" "$PAGE"

# ---- the scenario CSV ----
# The column table (src/input/columns.h), checked against the program: a header of all those
# columns draws no complaint about its columns, while a made-up column is reported unknown.
grep -o 'X([A-Z_0-9]*, "[a-z_0-9]*"' src/input/columns.h | grep -o '"[a-z_0-9]*"' | tr -d '"' \
    >"$T/columns"
check "columns found in src/input/columns.h" test "$(wc -l <"$T/columns")" -ge 20
printf 'name,no_such_column\n' | run eval - >/dev/null 2>"$T/err"
expect_err "the reader reports an unknown column" "unknown column 'no_such_column'"
paste -s -d, "$T/columns" | run eval - >/dev/null 2>"$T/err"
check "memfit eval accepts a header of every column of src/input/columns.h" \
    sh -c "! grep -q 'column' '$T/err'"
section "THE SCENARIO CSV" >"$T/csv"
while read -r col; do
    if has_tag "$T/csv" "$col"; then echo "ok THE SCENARIO CSV documents the column $col"; else
        echo "not ok THE SCENARIO CSV documents the column $col"; fi
done <"$T/columns"

# The preset tables: the columns the preset reader knows and those of the shipped files.
{
    sed -n '/^static int preset_column/,/^}/p' src/input/config_presets.c | grep -o '"[a-z_0-9]*"'
    sed -n '/gpu_speed_names\[GPU_SPEED_COLUMNS\] = {/,/};/p' src/input/config_presets.c | grep -o '"[a-z_0-9]*"'
} | tr -d '"' >"$T/presetcols"
head -n 1 configs/models.csv configs/gpus.csv | grep -v '^==>' | tr -d '\r' | tr ',' '\n' \
    >>"$T/presetcols"
sort -u "$T/presetcols" | grep -v '^$' >"$T/presetcols.u"
check "preset columns found" test "$(wc -l <"$T/presetcols.u")" -ge 8
missing=""
while read -r col; do grep -qw -- "$col" "$T/csv" || missing="$missing $col"; done <"$T/presetcols.u"
check "THE SCENARIO CSV documents every preset column${missing:+ (missing:$missing)}" test -z "$missing"
missing=""
for p in $(tail -n +2 configs/models.csv configs/gpus.csv | grep -v '^==>' | cut -d, -f1); do
    grep -qF -- "$p" "$T/csv" || missing="$missing $p"
done
check "THE SCENARIO CSV names every shipped preset${missing:+ (missing:$missing)}" test -z "$missing"

# ---- outputs ----
section OUTPUT >"$T/output"
printf 'name\n' | run eval - 2>/dev/null | head -n 1 | tr -d '\r' | tr ',' '\n' >"$T/evalcols"
check "eval's header read" test "$(wc -l <"$T/evalcols")" -ge 10
while read -r col; do
    if has_tag "$T/output" "$col"; then echo "ok OUTPUT documents eval's column $col"; else
        echo "not ok OUTPUT documents eval's column $col"; fi
done <"$T/evalcols"
# search's columns (with a range, so that gpus is one): those not of the scenario CSV, which
# THE SCENARIO CSV documents, are documented in OUTPUT (gpus means more there).
grep -vx gpus "$T/columns" >"$T/scenariocols"
printf 'name,model,seq,global_batch,gpu_mem_gb\nj,gpt2-small,1024,8,80\n' |
    run search - --gpus-range 8:8 --top 1 2>/dev/null | head -n 1 | tr -d '\r' | tr ',' '\n' |
    grep -vxF -f "$T/scenariocols" >"$T/searchcols"
check "search's header read" test "$(wc -l <"$T/searchcols")" -ge 8
while read -r col; do
    if has_tag "$T/output" "$col"; then echo "ok OUTPUT documents search's column $col"; else
        echo "not ok OUTPUT documents search's column $col"; fi
done <"$T/searchcols"
# Template names: placeholders (src/report/report_placeholders.h), charts and tables (their tables in src/).
{
    grep -o 'X([A-Z_0-9]*, *"[a-z_0-9]*")' src/report/report_placeholders.h | sed 's/.*"\(.*\)")/\1/'
    sed -n '/report_charts_all\[\] = {/,/};/p' src/report/report_charts.c | grep -o '"[a-z_0-9]*"'
    sed -n '/report_tables_s[a-z]*\[\] = {/,/};/p' src/report/report_tables.c | grep -o '"[a-z_0-9]*"'
} | tr -d '"' | sort -u >"$T/tmplnames"
check "template names found" test "$(wc -l <"$T/tmplnames")" -ge 30
missing=""
while read -r n; do grep -qw -- "$n" "$T/output" || missing="$missing $n"; done <"$T/tmplnames"
check "OUTPUT documents every placeholder, chart and table${missing:+ (missing:$missing)}" \
    test -z "$missing"
missing=""
for f in $(sed -n 's/^ *{"\([a-z-]*\)", [0-9]*, [0-9]*, draw_.*/\1/p' src/draw/figures.c); do
    grep -qF -- "$f" "$T/output" || missing="$missing $f"
done
check "OUTPUT names every figure${missing:+ (missing:$missing)}" test -z "$missing"
for w in $(sed -n '/^enum plan_fix {/,/};/p' src/plan/plan.h | grep -o 'PLAN_FIX_[A-Z_0-9]*' |
    sed 's/PLAN_FIX_//' | tr '[:upper:]' '[:lower:]'); do
    check "OUTPUT names the fix $w" grep -qw -- "$w" "$T/output"
done

# ---- exit status, environment, files ----
section "EXIT STATUS" >"$T/exit"
for s in 0 1 2; do check "EXIT STATUS documents $s" has_tag "$T/exit" "$s"; done

# ---- which peak: --peak's words and the phases eval's peak_phase names ----
check "OPTIONS: --peak lesson|step" grep -q '^       --peak lesson|step$' "$T/options"
check "OPTIONS: --peak's default is step" grep -q 'step (the default)' "$T/options"
sed -n '/^const char \*step_phase_name/,/^}/p' src/model/step.c | grep -o '"[a-z_]*"' | tr -d '"' >"$T/phases"
check "the phases found in src/model/step.c" test "$(wc -l <"$T/phases")" -ge 5
while read -r p; do
    check "OPTIONS documents the phase $p" grep -qx " *$p" "$T/options"
    check "OUTPUT names the phase $p" grep -qw -- "$p" "$T/output"
done <"$T/phases"
section ENVIRONMENT >"$T/env"
grep -ho 'getenv("[A-Za-z_0-9]*")' src/*/*.c | sed 's/getenv("\(.*\)")/\1/' | sort -u >"$T/vars"
check "the variables read by src/ found" test "$(wc -l <"$T/vars")" -ge 2
while read -r v; do
    check "ENVIRONMENT documents $v (read by src/)" has_tag "$T/env" "$v"
done <"$T/vars"
section FILES >"$T/files"
grep -ho '"\(configs\|templates\)/[a-z_.]*"' src/*/*.c | tr -d '"' | sort -u >"$T/datafiles"
check "the data files looked up by src/ found" test "$(wc -l <"$T/datafiles")" -ge 5
while read -r f; do
    check "FILES documents $f (looked up by src/)" has_tag "$T/files" "$f"
done <"$T/datafiles"
check "FILES gives the search order of src/base/paths.c" grep -q 'share/memfit' "$T/files"

# ---- the examples print what the page says ----
section EXAMPLES >"$T/examples"
# example TEXT: a line the program printed appears, as printed, in EXAMPLES.
example() {
    if grep -qxF -- "       $1" "$T/examples"; then echo "ok EXAMPLES shows: $1"; else
        echo "not ok EXAMPLES shows: $1"; fi
}
printf 'name,model,seq,micro_batch,gpu_mem_gb\nlesson,gpt-1.3b,2048,8,80\n' >"$T/lesson.csv"
example "$(run eval "$T/lesson.csv" | cut -d, -f1,6,10,11,21 | head -n 1)"
example "$(run eval "$T/lesson.csv" | cut -d, -f1,6,10,11,21 | tail -n 1)"
example "$(run eval "$T/lesson.csv" --peak lesson | cut -d, -f1,6,8,9,10,11 | head -n 1)"
example "$(run eval "$T/lesson.csv" --peak lesson | cut -d, -f1,6,8,9,10,11 | tail -n 1)"
example "$(run eval "$T/lesson.csv" --format table | tail -n 3 | head -n 1)"
example "$(run eval "$T/lesson.csv" --format table | tail -n 2 | head -n 1)"
example "$(run eval "$T/lesson.csv" --format table | tail -n 1)"
example "$(run eval "$T/lesson.csv" --format table --units GiB | tail -n 3 | head -n 1)"
example "$(run eval "$T/lesson.csv" --format table --peak lesson | tail -n 1)"
# (The page count follows the templates: the line is checked with the page's count.)
run report "$T/lesson.csv" -o "$T/review.pdf" >/dev/null 2>"$T/err"
pages=$(sed -n 's/^ *memfit: wrote review.pdf (\([0-9]*\) pages.*/\1/p' "$T/examples")
example "$(sed "s|$T/||; s/([0-9]* pages,/($pages pages,/" "$T/err")"
# What the jq example selects, read from the CSV rows (the column fits is 0).
run eval configs/examples.csv | awk -F, 'NR > 1 && $12 == 0 { print $1 }' | head -n 2 >"$T/out"
example "$(head -n 1 "$T/out")"
example "$(tail -n 1 "$T/out")"
printf 'name,model,seq,micro_batch,gpu\n7b,llama2-7b,4096,4,H100-80GB\n' |
    run eval - | cut -d, -f1,10,15,18 >"$T/out"
example "$(tail -n 1 "$T/out")"
printf 'name,model,seq,micro_batch,gpu\n7b,llama2-7b,4O96,1,H100-80GB\n' >"$T/typo.csv"
run eval "$T/typo.csv" >/dev/null 2>"$T/err"
example "$(sed "s|$T/||" "$T/err" | head -n 1)"
example "$(tail -n 1 "$T/err")"

# ---- make install / uninstall ----
# -o: the program is taken as it is (the suite's build), never rebuilt here.
b=$(dirname "$MEMFIT")
if make -s -o "$MEMFIT" install BUILD="$b" DESTDIR="$T/root" PREFIX=/usr >"$T/make" 2>&1; then
    echo "ok make install DESTDIR=... succeeds"; else
    echo "not ok make install DESTDIR=... succeeds"; tail -n 5 "$T/make" | sed 's/^/# /'; fi
check "make install puts the page in share/man/man1" cmp -s "$PAGE" "$T/root/usr/share/man/man1/memfit.1"
make -s -o "$MEMFIT" uninstall BUILD="$b" DESTDIR="$T/root" PREFIX=/usr >>"$T/make" 2>&1
check "make uninstall removes it" test ! -e "$T/root/usr/share/man/man1/memfit.1"
