/*
 * pngcmp: two images compared with a tolerance, as Cairo's own test suite compares its renders
 * with reference images, so that a golden PNG survives a rasteriser's new antialiasing or a
 * one-pixel shift but not a changed colour or a missing shape.
 *
 * A pixel differs when no pixel of the other image within one pixel of it (its 3 x 3
 * neighbourhood) is within PNGCMP_THRESHOLD on each of red, green, blue and alpha; two images of
 * the same size match when at most PNGCMP_MAX_FRACTION of their pixels differ. Header-only, for
 * the command tests/tools/pngcmp.c (run by tests/cli/golden.sh) and tests/tools/test_pngcmp.c.
 * The caller owns the surfaces.
 */
#ifndef MEMFIT_PNGCMP_H
#define MEMFIT_PNGCMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cairo.h>

#define PNGCMP_THRESHOLD 48       /* of 255, per channel */
#define PNGCMP_MAX_FRACTION 0.005 /* of the pixels */

struct pngcmp_result {
    int width, height;
    size_t differ; /* pixels without a match in the other image */
};

/* The PNG file at path as an image surface the caller destroys; NULL when it cannot be read. */
static __attribute__((unused)) cairo_surface_t *pngcmp_load(const char *path)
{
    cairo_surface_t *s = cairo_image_surface_create_from_png(path);
    if (cairo_surface_status(s) == CAIRO_STATUS_SUCCESS)
        return s;
    cairo_surface_destroy(s);
    return NULL;
}

/* Pixel (x, y) as 0xAARRGGBB (premultiplied); an RGB image is opaque. */
static uint32_t pngcmp_pixel(cairo_surface_t *s, int x, int y)
{
    const unsigned char *row =
        cairo_image_surface_get_data(s) + (size_t)y * (size_t)cairo_image_surface_get_stride(s);
    uint32_t p;
    memcpy(&p, row + 4 * (size_t)x, sizeof p);
    return cairo_image_surface_get_format(s) == CAIRO_FORMAT_RGB24 ? p | 0xff000000u : p;
}

static bool pngcmp_close(uint32_t a, uint32_t b)
{
    for (unsigned shift = 0; shift < 32; shift += 8) {
        int d = (int)((a >> shift) & 0xff) - (int)((b >> shift) & 0xff);
        if (d > PNGCMP_THRESHOLD || d < -PNGCMP_THRESHOLD)
            return false;
    }
    return true;
}

/* Whether pixel (x, y) of a is close to some pixel of b within one pixel of (x, y). */
static bool pngcmp_matched(cairo_surface_t *a, cairo_surface_t *b, int x, int y, int w, int h)
{
    uint32_t p = pngcmp_pixel(a, x, y);
    if (pngcmp_close(p, pngcmp_pixel(b, x, y)))
        return true;
    for (int v = y - 1; v <= y + 1; v++)
        for (int u = x - 1; u <= x + 1; u++)
            if (u >= 0 && v >= 0 && u < w && v < h && pngcmp_close(p, pngcmp_pixel(b, u, v)))
                return true;
    return false;
}

/* Compares two images into *r. Returns 0, or -1 when their sizes or formats make them
 * incomparable (r->width and r->height are then want's). */
static __attribute__((unused)) int pngcmp_compare(cairo_surface_t *want, cairo_surface_t *got,
                                                  struct pngcmp_result *r)
{
    r->width = cairo_image_surface_get_width(want);
    r->height = cairo_image_surface_get_height(want);
    r->differ = 0;
    for (int i = 0; i < 2; i++) {
        cairo_surface_t *s = i ? got : want;
        cairo_format_t f = cairo_image_surface_get_format(s);
        if (f != CAIRO_FORMAT_RGB24 && f != CAIRO_FORMAT_ARGB32)
            return -1;
        cairo_surface_flush(s);
    }
    if (cairo_image_surface_get_width(got) != r->width ||
        cairo_image_surface_get_height(got) != r->height)
        return -1;
    for (int y = 0; y < r->height; y++)
        for (int x = 0; x < r->width; x++)
            if (!pngcmp_matched(want, got, x, y, r->width, r->height) ||
                !pngcmp_matched(got, want, x, y, r->width, r->height))
                r->differ++;
    return 0;
}

/* Whether the compared images match: at most PNGCMP_MAX_FRACTION of the pixels differ. */
static __attribute__((unused)) bool pngcmp_match(const struct pngcmp_result *r)
{
    return (double)r->differ <= PNGCMP_MAX_FRACTION * r->width * r->height;
}

#endif
