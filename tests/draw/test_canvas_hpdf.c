/* Tests of canvas_hpdf: the y flip, UTF-8 text with DejaVu embedded, state rules, dashes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "draw/canvas_hpdf.h"
#include "testutil.h"

struct fixture {
    HPDF_Doc pdf;
    HPDF_Page page;
    struct canvas_hpdf_fonts fonts;
    char path[64];
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    f->pdf = HPDF_New(NULL, NULL);
    if (!f->pdf || canvas_hpdf_load_fonts(f->pdf, NULL, &f->fonts) != 0)
        return -1;
    f->page = HPDF_AddPage(f->pdf);
    HPDF_Page_SetSize(f->page, HPDF_PAGE_SIZE_A4, HPDF_PAGE_PORTRAIT);
    snprintf(f->path, sizeof f->path, "/tmp/memfit-canvas-XXXXXX");
    int fd = mkstemp(f->path);
    if (fd < 0)
        return -1;
    close(fd);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    HPDF_Free(f->pdf);
    canvas_hpdf_free_fonts(&f->fonts);
    unlink(f->path);
    free(f);
    return 0;
}

static void test_text_lands_where_asked(void **state)
{
    struct fixture *f = *state;
    struct canvas c;
    struct canvas_hpdf h;
    /* The canvas sits at (50, 200) on the page; the text at (100, 100) inside it. */
    canvas_hpdf_init(&c, &h, f->page, &f->fonts, 50, 200, 400, 300);
    c.ops->set_fill(&c, (struct canvas_rgb){0, 0, 0});
    c.ops->text(&c, 100, 100, 12, CANVAS_ALIGN_LEFT, "Ψ=1.3B");
    c.ops->text(&c, 300, 250, 10, CANVAS_ALIGN_RIGHT, "≤×√");
    c.ops->text_vertical(&c, 20, 150, 10, CANVAS_ALIGN_CENTER, "GB");
    canvas_hpdf_set_bold(&c, true);
    c.ops->text(&c, 10, 20, 14, CANVAS_ALIGN_LEFT, "Verdict");
    assert_int_equal(c.error, 0);
    assert_int_equal(HPDF_SaveToFile(f->pdf, f->path), HPDF_OK);

    char cmd[256], out[4096];
    snprintf(cmd, sizeof cmd, "pdftotext -bbox %s - 2>/dev/null | grep 'Ψ=1.3B'", f->path);
    snprintf(out, sizeof out, "%s", test_sh("%s", cmd));
    double x0, y0, x1, y1;
    const char *p = strstr(out, "xMin=\"");
    assert_non_null(p);
    x0 = strtod(p + 6, NULL);
    y0 = strtod(strstr(out, "yMin=\"") + 6, NULL);
    x1 = strtod(strstr(out, "xMax=\"") + 6, NULL);
    y1 = strtod(strstr(out, "yMax=\"") + 6, NULL);
    assert_true(x0 > 149 && x0 < 151); /* 50 + 100 */
    assert_true(y0 < 300 && y1 > 300); /* the baseline 200 + 100 lies inside the box */
    assert_true(y1 - y0 < 16);
    canvas_hpdf_set_bold(&c, false);
    double w = c.ops->text_width(&c, 12, "Ψ=1.3B");
    assert_true(x1 - x0 > w - 1 && x1 - x0 < w + 1);

    snprintf(cmd, sizeof cmd, "pdftotext %s - 2>/dev/null | tr -d '\\n\\f '", f->path);
    snprintf(out, sizeof out, "%s", test_sh("%s", cmd));
    assert_non_null(strstr(out, "≤×√"));

    snprintf(cmd, sizeof cmd,
             "pdffonts %s 2>/dev/null | grep -c 'DejaVuSans.*CID TrueType.*yes yes'", f->path);
    snprintf(out, sizeof out, "%s", test_sh("%s", cmd));
    assert_string_equal(out, "2\n");

    snprintf(cmd, sizeof cmd, "qpdf --check %s >/dev/null 2>&1; echo $?", f->path);
    snprintf(out, sizeof out, "%s", test_sh("%s", cmd));
    assert_string_equal(out, "0\n");
}

static void test_text_width_utf8(void **state)
{
    struct fixture *f = *state;
    struct canvas c;
    struct canvas_hpdf h;
    canvas_hpdf_init(&c, &h, f->page, &f->fonts, 0, 0, 100, 100);
    double w1 = c.ops->text_width(&c, 10, "Ψ");
    double w2 = c.ops->text_width(&c, 10, "ΨΨ");
    assert_true(w1 > 3 && w1 < 12);
    assert_true(w2 > 2 * w1 - 0.01 && w2 < 2 * w1 + 0.01);
    assert_true(c.ops->text_width(&c, 20, "W") > 1.99 * c.ops->text_width(&c, 10, "W"));
    assert_true(c.ops->text_width(&c, 10, "") == 0);
    canvas_hpdf_set_bold(&c, true);
    assert_true(c.ops->text_width(&c, 10, "memfit") > 0);
}

/* The widths kept per character add up to libharu's own measure of the whole text, in both
 * faces, the first time a character is met and after (ASCII, Greek, math, 4-byte and malformed
 * sequences, which libharu measures itself). */
static void test_kept_widths_are_libharus(void **state)
{
    struct fixture *f = *state;
    static const char *const texts[] = {
        "peak 116.1 GB > budget 68.0 GB", "Ψ = 1,311,528,960 ≤ √x × 2",
        "sbh · as²b → k* = 0.89",         "ZeRO-3 (dp 8) – offload",
        "emoji \xF0\x9F\x98\x80 end",     "bad \xC3 byte",
        "lone \x80 continuation",         "€ … ‰ ∑ ∞",
    };
    for (int face = 0; face < 2; face++) {
        HPDF_Font font = face ? f->fonts.bold : f->fonts.regular;
        for (int pass = 0; pass < 2; pass++) {
            for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
                struct canvas c;
                struct canvas_hpdf h;
                canvas_hpdf_init(&c, &h, f->page, &f->fonts, 0, 0, 100, 100);
                canvas_hpdf_set_bold(&c, face == 1);
                HPDF_TextWidth tw = HPDF_Font_TextWidth(font, (const HPDF_BYTE *)texts[i],
                                                        (HPDF_UINT)strlen(texts[i]));
                assert_true(c.ops->text_width(&c, 1000, texts[i]) == (double)tw.width);
            }
        }
    }
}

/* How often op (e.g. " Tf") ends a line of the saved page's uncompressed content. */
static int count_ops(const char *path, const char *op)
{
    FILE *fp = fopen(path, "rb");
    char line[512];
    int n = 0;
    assert_non_null(fp);
    while (fgets(line, sizeof line, fp)) {
        size_t len = strlen(line), k = strlen(op);
        if (len > k && strncmp(line + len - k - 1, op, k) == 0 && line[len - 1] == '\n')
            n++;
    }
    fclose(fp);
    return n;
}

/* A font and a fill colour the page already has are not written again; after a restore, which
 * may have brought back others, they are. */
static void test_state_written_once_until_restore(void **state)
{
    struct fixture *f = *state;
    struct canvas c;
    struct canvas_hpdf h;
    struct canvas_rgb grey = {0.5, 0.5, 0.5};
    canvas_hpdf_init(&c, &h, f->page, &f->fonts, 0, 0, 400, 400);
    c.ops->set_fill(&c, grey);
    c.ops->text(&c, 10, 10, 9, CANVAS_ALIGN_LEFT, "one");
    c.ops->set_fill(&c, grey);
    c.ops->text(&c, 10, 30, 9, CANVAS_ALIGN_LEFT, "two");    /* same font, same colour */
    c.ops->text(&c, 10, 50, 10, CANVAS_ALIGN_LEFT, "three"); /* another size: Tf */
    c.ops->save(&c);
    canvas_hpdf_set_bold(&c, true);
    c.ops->text(&c, 10, 70, 10, CANVAS_ALIGN_LEFT, "four"); /* bold: Tf */
    c.ops->restore(&c);
    c.ops->set_fill(&c, grey); /* after restore: rg again */
    canvas_hpdf_set_bold(&c, false);
    c.ops->text(&c, 10, 90, 10, CANVAS_ALIGN_LEFT, "five"); /* after restore: Tf again */
    assert_int_equal(c.error, 0);
    assert_int_equal(HPDF_SaveToFile(f->pdf, f->path), HPDF_OK);
    assert_int_equal(count_ops(f->path, " Tf"), 4);
    assert_int_equal(count_ops(f->path, " rg"), 2);
}

static void test_state_change_inside_path_is_an_error(void **state)
{
    struct fixture *f = *state;
    struct canvas c;
    struct canvas_hpdf h;
    canvas_hpdf_init(&c, &h, f->page, &f->fonts, 0, 0, 100, 100);
    double dash[] = {3.4, 2};
    c.ops->set_dash(&c, dash, 2);
    c.ops->set_line_width(&c, 1);
    c.ops->move_to(&c, 0, 0);
    c.ops->line_to(&c, 10, 10);
    c.ops->stroke(&c);
    c.ops->rect(&c, 1, 1, 5, 5);
    c.ops->fill(&c);
    c.ops->save(&c);
    c.ops->rect(&c, 0, 0, 50, 50);
    c.ops->clip(&c);
    c.ops->restore(&c);
    assert_int_equal(c.error, 0);
    c.ops->move_to(&c, 0, 0);
    c.ops->set_stroke(&c, (struct canvas_rgb){1, 0, 0});
    assert_int_not_equal(c.error, 0);
    int first = c.error;
    c.ops->restore(&c); /* later calls do nothing and keep the first error */
    assert_int_equal(c.error, first);
}

static void test_save_depth_is_bounded(void **state)
{
    struct fixture *f = *state;
    struct canvas c;
    struct canvas_hpdf h;
    canvas_hpdf_init(&c, &h, f->page, &f->fonts, 0, 0, 100, 100);
    for (int i = 0; i < 27; i++)
        c.ops->save(&c);
    assert_int_equal(c.error, 0);
    c.ops->save(&c);
    assert_int_not_equal(c.error, 0);
    /* libharu frees only restored graphics states: unwind them on the page directly. */
    for (int i = 0; i < 27; i++)
        assert_int_equal(HPDF_Page_GRestore(f->page), HPDF_OK);
}

static void test_missing_font_dir(void **state)
{
    (void)state;
    HPDF_Doc pdf = HPDF_New(NULL, NULL);
    struct canvas_hpdf_fonts fonts;
    assert_int_not_equal(canvas_hpdf_load_fonts(pdf, "/nonexistent", &fonts), 0);
    HPDF_Free(pdf);
    canvas_hpdf_free_fonts(&fonts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_text_lands_where_asked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_width_utf8, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kept_widths_are_libharus, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_written_once_until_restore, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_change_inside_path_is_an_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_save_depth_is_bounded, setup, teardown),
        cmocka_unit_test(test_missing_font_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
