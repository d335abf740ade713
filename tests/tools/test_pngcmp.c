/*
 * Tests of pngcmp.h, the tolerance of the golden PNGs (tests/cli/golden.sh), on two of them
 * changed here: recolouring one chart's bars (the activations, orange, painted blue) is
 * rejected; what a rasteriser's upgrade may do (the coverage of every edge pixel computed a
 * little differently, or the whole image one pixel off) is accepted, although it changes far more
 * pixels than the 0.5% allowed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "pngcmp.h"

static const char *const GOLDEN[] = {"tests/golden/does-it-fit.png",
                                     "tests/golden/report-page-4.png"};

/* The activations' orange and the weights' blue of chart_term_colour, in 0-255. */
static const int ORANGE[3] = {245, 140, 33};
static const int BLUE[3] = {56, 115, 204};

static cairo_surface_t *load(const char *path)
{
    cairo_surface_t *s = pngcmp_load(path);
    if (!s)
        fail_msg("cannot read %s (make golden-update writes it)", path);
    cairo_surface_flush(s);
    return s;
}

/* A copy of s, w x h (a crop when smaller), whose pixel (x, y) is f(s, x, y). */
static cairo_surface_t *transform(cairo_surface_t *s, int w, int h,
                                  uint32_t (*f)(cairo_surface_t *, int, int))
{
    cairo_surface_t *t = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
    unsigned char *data = cairo_image_surface_get_data(t);
    size_t stride = (size_t)cairo_image_surface_get_stride(t);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint32_t p = f(s, x, y);
            memcpy(data + (size_t)y * stride + 4 * (size_t)x, &p, sizeof p);
        }
    cairo_surface_mark_dirty(t);
    return t;
}

static int channel(uint32_t p, int c)
{
    return (int)(p >> (16 - 8 * c) & 0xff); /* c: 0 red, 1 green, 2 blue */
}

static uint32_t rgb(const int c[3])
{
    return 0xff000000u | (uint32_t)c[0] << 16 | (uint32_t)c[1] << 8 | (uint32_t)c[2];
}

static uint32_t same(cairo_surface_t *s, int x, int y)
{
    return pngcmp_pixel(s, x, y);
}

/* Orange, give or take antialiasing's last bits, becomes blue. */
static uint32_t orange_to_blue(cairo_surface_t *s, int x, int y)
{
    uint32_t p = pngcmp_pixel(s, x, y);
    for (int c = 0; c < 3; c++)
        if (abs(channel(p, c) - ORANGE[c]) > 8)
            return p;
    return rgb(BLUE);
}

/* The image one pixel right and one down, its first row and column repeated. */
static uint32_t shifted(cairo_surface_t *s, int x, int y)
{
    return pngcmp_pixel(s, x > 0 ? x - 1 : 0, y > 0 ? y - 1 : 0);
}

/* Each pixel moved up to 40 (of 255) on each channel towards its right neighbour: every
 * vertical edge antialiased with a coverage up to 16% off, as another rasteriser may compute it. */
static uint32_t antialiased(cairo_surface_t *s, int x, int y)
{
    int w = cairo_image_surface_get_width(s);
    uint32_t p = pngcmp_pixel(s, x, y), q = pngcmp_pixel(s, x + 1 < w ? x + 1 : x, y);
    int c[3];
    for (int i = 0; i < 3; i++) {
        int d = channel(q, i) - channel(p, i);
        c[i] = channel(p, i) + (d > 40 ? 40 : d < -40 ? -40 : d);
    }
    return rgb(c);
}

/* Pixels that are not the same in both images, by position. */
static size_t changed(cairo_surface_t *a, cairo_surface_t *b)
{
    size_t n = 0;
    for (int y = 0; y < cairo_image_surface_get_height(a); y++)
        for (int x = 0; x < cairo_image_surface_get_width(a); x++)
            n += pngcmp_pixel(a, x, y) != pngcmp_pixel(b, x, y);
    return n;
}

static void compare(const char *path, uint32_t (*f)(cairo_surface_t *, int, int),
                    struct pngcmp_result *r, size_t *changed_pixels)
{
    cairo_surface_t *want = load(path);
    cairo_surface_t *got = transform(want, cairo_image_surface_get_width(want),
                                     cairo_image_surface_get_height(want), f);
    assert_int_equal(pngcmp_compare(want, got, r), 0);
    *changed_pixels = changed(want, got);
    cairo_surface_destroy(want);
    cairo_surface_destroy(got);
}

static void test_identical_images_match(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof GOLDEN / sizeof GOLDEN[0]; i++) {
        struct pngcmp_result r;
        size_t n_changed;
        compare(GOLDEN[i], same, &r, &n_changed);
        assert_int_equal(r.differ, 0);
        assert_true(pngcmp_match(&r));
    }
}

static void test_recoloured_bars_are_rejected(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof GOLDEN / sizeof GOLDEN[0]; i++) {
        struct pngcmp_result r;
        size_t n_changed;
        compare(GOLDEN[i], orange_to_blue, &r, &n_changed);
        print_message("%s, blue activations: %zu pixels differ\n", GOLDEN[i], r.differ);
        if (pngcmp_match(&r))
            fail_msg("%s: blue activations pass (%zu pixels differ)", GOLDEN[i], r.differ);
    }
}

static void test_antialiasing_and_shifts_are_accepted(void **state)
{
    (void)state;
    uint32_t (*const change[])(cairo_surface_t *, int, int) = {shifted, antialiased};
    for (size_t i = 0; i < sizeof GOLDEN / sizeof GOLDEN[0]; i++)
        for (size_t k = 0; k < 2; k++) {
            struct pngcmp_result r;
            size_t n_changed;
            compare(GOLDEN[i], change[k], &r, &n_changed);
            print_message("%s, %s: %zu pixels changed, %zu differ\n", GOLDEN[i],
                          k ? "antialiased" : "shifted", n_changed, r.differ);
            if (!pngcmp_match(&r))
                fail_msg("%s, %s: %zu pixels differ", GOLDEN[i], k ? "antialiased" : "shifted",
                         r.differ);
            /* Not a small change: a comparison byte for byte would have failed it. */
            assert_true((double)n_changed > 2 * PNGCMP_MAX_FRACTION * r.width * r.height);
        }
}

static void test_sizes_must_agree(void **state)
{
    (void)state;
    cairo_surface_t *want = load(GOLDEN[0]);
    int w = cairo_image_surface_get_width(want), h = cairo_image_surface_get_height(want);
    cairo_surface_t *cropped = transform(want, w - 1, h, same);
    struct pngcmp_result r;
    assert_int_equal(pngcmp_compare(want, cropped, &r), -1);
    assert_int_equal(r.width, w);
    assert_null(pngcmp_load("tests/golden/eval-examples.csv")); /* not a PNG */
    cairo_surface_destroy(want);
    cairo_surface_destroy(cropped);
}

static int teardown(void **state)
{
    (void)state;
    cairo_debug_reset_static_data(); /* valgrind */
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical_images_match),
        cmocka_unit_test(test_recoloured_bars_are_rejected),
        cmocka_unit_test(test_antialiasing_and_shifts_are_accepted),
        cmocka_unit_test(test_sizes_must_agree),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
