#!/bin/sh
# Golden files, compared with tests/golden/; GOLDEN_UPDATE=1 (make golden-update) rewrites them
# for review in the diff. Each is compared as tightly as the libraries outside our code allow:
# - eval of the examples in every format: our own text, byte for byte;
# - the text of the examples' report (pdftotext -layout): word for word, every run of white
#   space (form feeds included) counting as one, so that poppler's layout may change, a word not;
# - three pages of that report (40 dpi) and the five figures (72 dpi, so that the thin slices of
#   their bars count), rendered by pdftoppm: pixel for pixel within the tolerance of
#   tests/tools/pngcmp.h, which absorbs antialiasing and one-pixel shifts, not a changed colour.
. tests/cli/common.inc
: "${PNGCMP:=build/tests/pngcmp}"

update() { # NAME FILE: under GOLDEN_UPDATE, FILE becomes tests/golden/NAME
    if [ -n "${GOLDEN_UPDATE:-}" ]; then cp "$2" "tests/golden/$1"; fi
}

golden() { # NAME FILE: FILE is tests/golden/NAME, byte for byte
    update "$1" "$2"
    if cmp -s "$2" "tests/golden/$1"; then echo "ok golden $1"; else
        echo "not ok golden $1 (make golden-update rewrites it)"
        diff "tests/golden/$1" "$2" | head -10 | sed 's/^/# /'
    fi
}

words() { tr -s '[:space:]' '\n' <"$1" | grep -v '^$'; } # one word a line

golden_text() { # NAME FILE: FILE has the words of tests/golden/NAME, in the same order
    update "$1" "$2"
    words "tests/golden/$1" >"$T/want.words"
    words "$2" >"$T/got.words"
    if cmp -s "$T/want.words" "$T/got.words"; then echo "ok golden $1 (white space aside)"; else
        echo "not ok golden $1 (make golden-update rewrites it; one word a line below)"
        diff -U2 "$T/want.words" "$T/got.words" | sed -n '3,14s/^/# /p'
    fi
}

golden_png() { # NAME FILE: FILE looks like tests/golden/NAME, within pngcmp's tolerance
    update "$1" "$2"
    if "$PNGCMP" "tests/golden/$1" "$2" >"$T/cmp" 2>&1; then echo "ok golden $1: $(cat "$T/cmp")"
    else echo "not ok golden $1: $(cat "$T/cmp") (make golden-update rewrites it)"; fi
}

for fmt in csv json table; do
    run eval --format $fmt configs/examples.csv >"$T/eval.$fmt" 2>"$T/err"
    golden "eval-examples.$fmt" "$T/eval.$fmt"
done

# The examples' report, rendered once: its text, the summary page, and the first scenario's
# page of the phases and fit charts (after the summary and the glossary) and its page of the
# checkpointing chart and the step timelines.
run report -q configs/examples.csv -o "$T/r"
pdftotext -layout "$T/r/report.pdf" "$T/report.txt"
golden_text report-examples.txt "$T/report.txt"
for p in 1 4 5; do
    pdftoppm -png -r 40 -f $p -l $p -singlefile "$T/r/report.pdf" "$T/report-page-$p"
    golden_png "report-page-$p.png" "$T/report-page-$p.png"
done

run figures -q -o "$T/f"
for f in step-timeline params-per-layer layer-walk checkpoint-k does-it-fit; do
    pdftoppm -png -r 72 -singlefile "$T/f/$f.pdf" "$T/$f"
    golden_png "$f.png" "$T/$f.png"
done
