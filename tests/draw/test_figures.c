/*
 * Tests of figures and canvas_cairo: the five figures in three formats, byte-identical from run
 * to run, PNG at twice the size in points, PDFs that qpdf accepts, dated by SOURCE_DATE_EPOCH,
 * every text on the page and apart, errors reported. How the figures look is the golden PNGs'
 * (tests/cli/golden.sh); the command line's files and exit statuses tests/cli/figures.sh's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "draw/canvas_cairo.h"
#include "draw/canvas_rec.h"
#include "draw/figures.h"
#include "base/out.h"
#include "testutil.h"

static const char *const EXTS[] = {"png", "svg", "pdf"};

struct blob {
    char *data;
    size_t size;
};

static struct blob slurp(const char *path)
{
    struct blob b = {NULL, 0};
    b.data = test_read_file(path, &b.size);
    return b;
}

static bool blob_contains(const struct blob *b, const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i + n <= b->size; i++)
        if (memcmp(b->data + i, s, n) == 0)
            return true;
    return false;
}

static void path_of(char *buf, size_t size, const char *dir, const char *name, const char *ext)
{
    assert_true(snprintf(buf, size, "%s/%s.%s", dir, name, ext) < (int)size);
}

/* Removes the files of a folder, then the folder. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[512];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        remove(path);
    }
    closedir(d);
    rmdir(dir);
}

static unsigned be32(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (unsigned)u[0] << 24 | (unsigned)u[1] << 16 | (unsigned)u[2] << 8 | u[3];
}

/* Two runs into two folders: the same files, byte for byte; every file well-formed. */
static void test_figures_reproducible(void **state)
{
    (void)state;
    char a[] = "/tmp/memfit-figures-aXXXXXX", b[] = "/tmp/memfit-figures-bXXXXXX";
    assert_non_null(mkdtemp(a));
    assert_non_null(mkdtemp(b));
    struct diag d;
    diag_init(&d, NULL, NULL);
    assert_int_equal(figures_write(a, NULL, &d), 0);
    assert_int_equal(figures_write(b, NULL, &d), 0);
    assert_int_equal(d.count, 0);
    assert_int_equal(test_count_entries(a), 3 * FIGURES_COUNT); /* no temporary file left */
    for (unsigned i = 0; i < FIGURES_COUNT; i++) {
        for (int x = 0; x < 3; x++) {
            char pa[600], pb[600];
            path_of(pa, sizeof pa, a, figures_name(i), EXTS[x]);
            path_of(pb, sizeof pb, b, figures_name(i), EXTS[x]);
            struct blob ba = slurp(pa), bb = slurp(pb);
            assert_non_null(ba.data);
            assert_non_null(bb.data);
            assert_true(ba.size > 1000 && ba.size < 400000);
            assert_int_equal(ba.size, bb.size);
            assert_memory_equal(ba.data, bb.data, ba.size);
            if (x == 0) {
                assert_memory_equal(ba.data, "\x89PNG", 4);
                /* 2 pixels per point: every figure is at least 1000 x 500 pixels. */
                assert_true(be32(ba.data + 16) >= 1000 && be32(ba.data + 20) >= 500);
            } else if (x == 1) {
                assert_true(blob_contains(&ba, "<svg"));
            } else {
                assert_memory_equal(ba.data, "%PDF", 4);
                assert_true(blob_contains(&ba, "/CreationDate (20240101000000Z)"));
                assert_true(blob_contains(&ba, "DejaVuSans"));
                assert_string_equal(test_sh("qpdf --check '%s' >/dev/null 2>&1 && echo ok", pa),
                                    "ok\n");
            }
            free(ba.data);
            free(bb.data);
        }
    }
    remove_dir(a);
    remove_dir(b);
}

static bool is_text(enum canvas_rec_op op)
{
    return op == CANVAS_REC_TEXT || op == CANVAS_REC_TEXT_VERTICAL;
}

/* Every figure through the recording canvas: the libharu rule kept, everything on the page, and
 * no two texts overlapping anywhere in the figure (panels included); does-it-fit labels its first
 * bar with the worked example's peak (doc/model.md section 9.4: 116.1 GB). */
static void test_figures_layout(void **state)
{
    (void)state;
    for (unsigned i = 0; i < FIGURES_COUNT; i++) {
        double w, h;
        figures_size(i, &w, &h);
        struct canvas_rec r;
        canvas_rec_init(&r, w, h);
        assert_int_equal(figures_draw(i, &r.canvas), 0);
        assert_int_equal(r.violations, 0);
        assert_int_equal(r.depth, 0);
        size_t texts = 0;
        bool peak = false;
        for (size_t a = 0; a < r.n; a++) {
            const struct canvas_rec_call *k = &r.calls[a];
            if (k->op == CANVAS_REC_FILL || k->op == CANVAS_REC_STROKE || is_text(k->op))
                if (k->box.x0 < -0.5 || k->box.y0 < -0.5 || k->box.x1 > w + 0.5 ||
                    k->box.y1 > h + 0.5)
                    fail_msg("%s: call %zu leaves the page", figures_name(i), a);
            if (!is_text(k->op))
                continue;
            texts++;
            peak = peak || strcmp(k->text, "116.1") == 0;
            for (size_t b = 0; b < a; b++) {
                const struct canvas_box *p = &r.calls[b].box, *q = &k->box;
                if (is_text(r.calls[b].op) && p->x0 < q->x1 - 0.25 && q->x0 < p->x1 - 0.25 &&
                    p->y0 < q->y1 - 0.25 && q->y0 < p->y1 - 0.25)
                    fail_msg("%s: '%s' overlaps '%s'", figures_name(i), k->text, r.calls[b].text);
            }
        }
        assert_true(texts > 20); /* titles, legends, ticks, labels */
        if (strcmp(figures_name(i), "does-it-fit") == 0)
            assert_true(peak);
        canvas_rec_release(&r);
    }
    assert_int_equal(figures_draw(FIGURES_COUNT, NULL), -1);
}

/* SOURCE_DATE_EPOCH sets the PDF's creation date. */
static void test_source_date_epoch(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-figures-eXXXXXX", path[600];
    assert_non_null(mkdtemp(dir));

    struct diag d;
    diag_init(&d, NULL, NULL);
    assert_int_equal(figures_write(dir, "1000000000", &d), 0); /* 2001-09-09T01:46:40Z */
    path_of(path, sizeof path, dir, figures_name(0), "pdf");
    struct blob b = slurp(path);
    assert_non_null(b.data);
    assert_true(blob_contains(&b, "/CreationDate (20010909014640Z)"));
    free(b.data);
    remove_dir(dir);
}

/* A folder that cannot be made is reported with its path; nothing is written. */
static void test_unwritable(void **state)
{
    (void)state;
    struct diag d;
    diag_init(&d, NULL, NULL);
    assert_int_equal(figures_write("/dev/null/figures", NULL, &d), -1);
    assert_int_equal(d.count, 1);
    assert_non_null(strstr(d.first, "/dev/null"));
    assert_int_equal(figures_write("", NULL, &d), -1);
    assert_int_equal(d.count, 2);
    assert_string_equal(d.last, "empty output folder name");
    assert_null(figures_name(FIGURES_COUNT));
}

/* canvas_cairo directly: Unicode text, widths from DejaVu Sans, finish twice is harmless,
 * free(NULL) a no-op, a stream that refuses writes an error in every format. */
static void test_canvas_cairo(void **state)
{
    (void)state;
    FILE *ro = fopen("/dev/null", "rb"); /* every write to it fails */
    assert_non_null(ro);
    struct canvas *c = canvas_cairo_new(CANVAS_CAIRO_PNG, ro, OUT_DEFAULT_EPOCH, 10, 10);
    assert_non_null(c);
    c->ops->set_fill(c, (struct canvas_rgb){1, 0, 0});
    c->ops->text(c, 1, 8, 8, CANVAS_ALIGN_LEFT, "\xce\xa8 \xe2\x89\xa4 \xe2\x88\x9a");
    double w = c->ops->text_width(c, 10, "memfit");
    assert_true(w > 20 && w < 50);                /* DejaVu Sans: about 3.5 em */
    assert_int_equal(canvas_cairo_finish(c), -1); /* the PNG cannot be written there */
    assert_int_equal(canvas_cairo_finish(c), -1);
    canvas_cairo_free(c);
    canvas_cairo_free(NULL);
    for (int fmt = CANVAS_CAIRO_SVG; fmt <= CANVAS_CAIRO_PDF; fmt++) {
        c = canvas_cairo_new((enum canvas_cairo_format)fmt, ro, OUT_DEFAULT_EPOCH, 10, 10);
        assert_non_null(c);
        assert_int_equal(canvas_cairo_finish(c), -1);
        assert_true(c->error != 0);
        canvas_cairo_free(c);
    }
    fclose(ro);
}

static int teardown(void **state)
{
    (void)state;
    canvas_cairo_shutdown();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_figures_reproducible), cmocka_unit_test(test_source_date_epoch),
        cmocka_unit_test(test_unwritable),           cmocka_unit_test(test_canvas_cairo),
        cmocka_unit_test(test_figures_layout),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
