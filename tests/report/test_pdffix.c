/* Tests of pdffix: libharu's UTF-8 ToUnicode map repaired, the document still valid. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hpdf.h>

#include "draw/canvas_hpdf.h"
#include "report/pdffix.h"

/* A one-page libharu document with UTF-8 text in both faces, saved into memory. */
static unsigned char *make_pdf(size_t *len)
{
    HPDF_Doc pdf = HPDF_New(NULL, NULL);
    struct canvas_hpdf_fonts fonts;
    HPDF_SetCompressionMode(pdf, HPDF_COMP_ALL);
    assert_int_equal(canvas_hpdf_load_fonts(pdf, NULL, &fonts), 0);
    HPDF_Page page = HPDF_AddPage(pdf);
    struct canvas c;
    struct canvas_hpdf h;
    canvas_hpdf_init(&c, &h, page, &fonts, 0, 0, 500, 500);
    c.ops->text(&c, 50, 50, 12, CANVAS_ALIGN_LEFT, "Ψ = 1,311,528,960 ≤ √x × 2");
    canvas_hpdf_set_bold(&c, true);
    c.ops->text(&c, 50, 80, 12, CANVAS_ALIGN_LEFT, "peak 116.1 GB > budget");
    assert_int_equal(HPDF_SaveToStream(pdf), HPDF_OK);
    *len = HPDF_GetStreamSize(pdf);
    unsigned char *buf = malloc(*len);
    HPDF_UINT32 n = (HPDF_UINT32)*len;
    HPDF_ResetStream(pdf);
    HPDF_ReadFromStream(pdf, buf, &n);
    assert_int_equal(n, *len);
    HPDF_Free(pdf);
    canvas_hpdf_free_fonts(&fonts);
    return buf;
}

/* Writes buf to a temporary file and runs cmd (with %s for the file); returns its output. */
static const char *run_on(const unsigned char *buf, size_t len, const char *cmd_fmt)
{
    static char out[8192];
    char path[] = "/tmp/memfit-pdffix-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, buf, len), (ssize_t)len);
    close(fd);
    char cmd[512];
    snprintf(cmd, sizeof cmd, cmd_fmt, path);
    FILE *p = popen(cmd, "r");
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    pclose(p);
    unlink(path);
    return out;
}

static void test_repairs_tounicode(void **state)
{
    (void)state;
    size_t len, fixed_len;
    unsigned char *pdf = make_pdf(&len), *fixed;
    /* The bug is there before: poppler complains. */
    assert_non_null(strstr(run_on(pdf, len, "pdftotext %s - 2>&1"), "begincidrange"));
    assert_int_equal(pdffix_tounicode(pdf, len, &fixed, &fixed_len), 0);
    const char *text = run_on(fixed, fixed_len, "pdftotext %s - 2>&1");
    assert_null(strstr(text, "Warning"));
    assert_non_null(strstr(text, "Ψ = 1,311,528,960 ≤ √x × 2"));
    assert_non_null(strstr(text, "peak 116.1 GB > budget"));
    assert_string_equal(run_on(fixed, fixed_len, "qpdf --check %s >/dev/null 2>&1 && echo ok"),
                        "ok\n");
    assert_non_null(strstr(run_on(fixed, fixed_len, "pdffonts %s 2>&1"),
                           "CID TrueType      Identity-H       yes yes yes"));
    /* A second pass finds nothing left to do. */
    unsigned char *again;
    size_t again_len;
    assert_int_equal(pdffix_tounicode(fixed, fixed_len, &again, &again_len), 1);
    assert_null(again);
    free(fixed);
    free(pdf);
}

static void test_leaves_other_input_alone(void **state)
{
    (void)state;
    unsigned char *out;
    size_t out_len;
    const char plain[] = "%PDF-1.3\nno fonts here\n%%EOF\n";
    assert_int_equal(
        pdffix_tounicode((const unsigned char *)plain, sizeof plain - 1, &out, &out_len), 1);
    assert_null(out);
    const char broken[] = "%PDF-1.3\n/ToUnicode 5 0 R\nstartxref\n999999\n%%EOF\n";
    assert_int_equal(
        pdffix_tounicode((const unsigned char *)broken, sizeof broken - 1, &out, &out_len), -1);
    assert_null(out);
    /* Every prefix of a real document is refused or left alone, never read out of bounds. */
    size_t len;
    unsigned char *pdf = make_pdf(&len);
    for (size_t cut = 0; cut + 32 < len; cut += len / 97 + 1) {
        int rc = pdffix_tounicode(pdf, cut, &out, &out_len);
        assert_true(rc == -1 || rc == 1);
        assert_null(out);
    }
    free(pdf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repairs_tounicode),
        cmocka_unit_test(test_leaves_other_input_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
