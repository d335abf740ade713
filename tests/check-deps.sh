#!/bin/sh
# Fails early, with the fix, when a library header or tool the build needs is missing.
for h in hpdf.h csv.h cmocka.h cairo/cairo.h; do
    [ -f "/usr/include/$h" ] || { echo "memfit: missing /usr/include/$h: run 'make deps' (as root)" >&2; exit 2; }
done
exit 0
