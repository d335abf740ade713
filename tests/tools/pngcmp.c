/*
 * pngcmp WANT.png GOT.png: compares a render with its golden image within the tolerance of
 * tests/tools/pngcmp.h and prints how many pixels differ. Exit 0: they match; 1: they differ;
 * 2: an image cannot be read or the sizes differ.
 */
#include <stdio.h>

#include "pngcmp.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: pngcmp WANT.png GOT.png\n");
        return 2;
    }
    cairo_surface_t *want = pngcmp_load(argv[1]), *got = pngcmp_load(argv[2]);
    struct pngcmp_result r;
    int rc = 2;
    if (!want || !got) {
        fprintf(stderr, "pngcmp: cannot read '%s'\n", want ? argv[2] : argv[1]);
    } else if (pngcmp_compare(want, got, &r) != 0) {
        fprintf(stderr, "pngcmp: cannot compare '%s' (%dx%d) with '%s' (%dx%d)\n", argv[1], r.width,
                r.height, argv[2], cairo_image_surface_get_width(got),
                cairo_image_surface_get_height(got));
    } else {
        int pixels = r.width * r.height;
        rc = pngcmp_match(&r) ? 0 : 1;
        printf("%zu of %d pixels differ (%.2f%%, at most %.2f%% allowed)\n", r.differ, pixels,
               100.0 * (double)r.differ / pixels, 100.0 * PNGCMP_MAX_FRACTION);
    }
    cairo_surface_destroy(want); /* NULL: a no-op */
    cairo_surface_destroy(got);
    return rc;
}
