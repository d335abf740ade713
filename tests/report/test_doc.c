/* Tests of doc.c's word wrapping: a word longer than the line is broken at character boundaries
 * in a few measures per line (it was cubic in the word's length), and a word too long for
 * libharu to measure is laid out all the same; and of its tables: no cell is cut with an
 * ellipsis, a long one wraps and its row (a header's too) is as tall as its tallest cell. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/doc.h"

/* The canvas of the document with its text_width counted. */
struct counting {
    struct canvas_ops ops;
    const struct canvas_ops *real;
    size_t measures, longest; /* the longest string measured, in bytes */
};

static struct counting counter;

static double counted_width(struct canvas *c, double size_pt, const char *utf8)
{
    counter.measures++;
    size_t len = strlen(utf8);
    counter.longest = len > counter.longest ? len : counter.longest;
    return counter.real->text_width(c, size_pt, utf8);
}

static void count_measures(struct doc *doc)
{
    counter.real = doc->c.ops;
    counter.ops = *doc->c.ops;
    counter.ops.text_width = counted_width;
    counter.measures = counter.longest = 0;
    doc->c.ops = &counter.ops;
}

struct lines {
    size_t n, longest, total;
    double widest;
    double width;
};

static void take_line(struct doc *doc, const char *line, void *ctx)
{
    struct lines *l = ctx;
    size_t len = strlen(line);
    l->n++;
    l->total += len;
    l->longest = len > l->longest ? len : l->longest;
    /* Measured with the real width, not counted. */
    double w = counter.real->text_width(&doc->c, DOC_BODY_PT, line);
    l->widest = w > l->widest ? w : l->widest;
}

static char *word(size_t n, char ch)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    memset(s, ch, n);
    s[n] = '\0';
    return s;
}

static void a_long_word_takes_a_few_measures_a_line(void **state)
{
    (void)state;
    struct diag d;
    diag_init(&d, NULL, NULL);
    struct doc doc;
    assert_int_equal(doc_init(&doc, "t", false, NULL, &d), 0);
    doc_new_page(&doc);
    count_measures(&doc);
    char *s = word(3000, 'x');
    struct lines l = {0};
    l.width = doc_width(&doc);
    doc_wrap(&doc, s, DOC_BODY_PT, false, l.width, take_line, &l);
    assert_int_equal(l.total, 3000); /* every character, once */
    assert_true(l.n > 10);
    assert_true(l.widest <= l.width);
    /* A binary search per line: about log2(3000) = 12 measures, not one per character cut. */
    assert_true(counter.measures <= 16 * l.n);
    assert_int_equal(doc.error, 0);
    free(s);
    doc_release(&doc);
}

/* 70,000 bytes without a space (libharu measures at most 65,535) and as many zero-width
 * characters (which never fill a line): laid out in lines of bounded length, no error. */
static void a_word_beyond_libharu_is_laid_out(void **state)
{
    (void)state;
    struct diag d;
    diag_init(&d, NULL, NULL);
    struct doc doc;
    assert_int_equal(doc_init(&doc, "t", false, NULL, &d), 0);
    doc_new_page(&doc);
    count_measures(&doc);
    char *s = word(70000, 'i');
    struct lines l = {0};
    l.width = doc_width(&doc);
    doc_wrap(&doc, s, DOC_BODY_PT, false, l.width, take_line, &l);
    assert_int_equal(l.total, 70000);
    assert_true(l.widest <= l.width);
    assert_int_equal(doc.error, 0);
    free(s);
    /* U+200B ZERO WIDTH SPACE, 3 bytes each. */
    size_t n = 30000;
    s = malloc(3 * n + 1);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++)
        memcpy(s + 3 * i, "\xe2\x80\x8b", 3);
    s[3 * n] = '\0';
    memset(&l, 0, sizeof l);
    l.width = doc_width(&doc);
    doc_wrap(&doc, s, DOC_BODY_PT, false, l.width, take_line, &l);
    assert_int_equal(l.total, 3 * n);
    assert_true(l.longest <= 4096);
    assert_int_equal(doc.error, 0);
    assert_true(counter.longest <= 4096); /* never the whole word measured */
    free(s);
    doc_release(&doc);
}

/* The text a table draws, line by line, with its type size. */
struct drawn {
    struct canvas_ops ops;
    const struct canvas_ops *real;
    char lines[64][256];
    double sizes[64];
    size_t n;
};

static struct drawn drawn;

static void drawn_text(struct canvas *c, double x, double y, double size_pt,
                       enum canvas_align align, const char *utf8)
{
    if (drawn.n < 64) {
        snprintf(drawn.lines[drawn.n], sizeof drawn.lines[0], "%s", utf8);
        drawn.sizes[drawn.n++] = size_pt;
    }
    drawn.real->text(c, x, y, size_pt, align, utf8);
}

/* From now on (again), the text drawn on doc's page is recorded. */
static void record_text(struct doc *doc)
{
    if (doc->c.ops != &drawn.ops) {
        drawn.real = doc->c.ops;
        drawn.ops = *doc->c.ops;
        drawn.ops.text = drawn_text;
        doc->c.ops = &drawn.ops;
    }
    drawn.n = 0;
}

/* The lines drawn since record_text, joined with spaces. */
static const char *drawn_joined(void)
{
    static char buf[64 * 256];
    buf[0] = '\0';
    for (size_t i = 0; i < drawn.n; i++) {
        if (i)
            strcat(buf, " ");
        strcat(buf, drawn.lines[i]);
    }
    return buf;
}

static void a_long_cell_wraps_and_is_never_cut(void **state)
{
    (void)state;
    struct diag d;
    diag_init(&d, NULL, NULL);
    struct doc doc;
    assert_int_equal(doc_init(&doc, "t", false, NULL, &d), 0);
    doc_new_page(&doc);
    /* A column that does not wrap, a header far too wide for it, a formula that does not fit
     * even set small; a column that wraps; a number a little too wide, set smaller. */
    static const struct doc_col cols[] = {
        {"a header far too long for its column", 0.12, CANVAS_ALIGN_LEFT, false},
        {"formula", 0.3, CANVAS_ALIGN_LEFT, false},
        {"text", 0.3, CANVAS_ALIGN_LEFT, true},
        {"bytes", 0.08, CANVAS_ALIGN_RIGHT, false}};
    struct doc_table t = {cols, 4, 0};
    double y0 = doc.y;
    record_text(&doc);
    doc_table_start(&doc, &t, 1);
    /* The header row: taller than one line, every word of the header drawn whole. */
    double head_h = doc.y - y0;
    assert_true(head_h > DOC_ROW_H);
    assert_non_null(strstr(drawn_joined(), "a header far too long for its column"));
    assert_null(strstr(drawn_joined(), "…"));
    const char *cells[] = {"x", "A = 114.0 sbh, kept tensors in the step's dtypes, and more",
                           "a sentence of many words that wraps onto a few lines of its column",
                           "120,221,716,480"};
    record_text(&doc);
    double y1 = doc.y;
    doc_table_row(&doc, &t, cells, DOC_ROW_PLAIN);
    const char *got = drawn_joined();
    assert_null(strstr(got, "…"));
    /* Broken at spaces, never inside the number "114.0". */
    assert_non_null(strstr(got, "A = 114.0 sbh,"));
    assert_non_null(strstr(got, "step's dtypes, and more"));
    assert_non_null(strstr(got, "wraps onto a few lines of its column"));
    /* The row follows its tallest cell: the wrapped text's lines, DOC_CELL_LEAD apart. */
    size_t text_lines = 0;
    for (size_t i = 0; i < drawn.n; i++) {
        if (strstr("a sentence of many words that wraps onto a few lines of its column",
                   drawn.lines[i]))
            text_lines++;
        if (strcmp(drawn.lines[i], "120,221,716,480") == 0) { /* one line, set smaller */
            assert_true(drawn.sizes[i] < DOC_TABLE_PT);
            assert_true(drawn.sizes[i] >= DOC_TABLE_MIN_PT);
        }
    }
    assert_true(text_lines >= 2);
    assert_true(doc.y - y1 >= DOC_ROW_H + (double)(text_lines - 1) * DOC_CELL_LEAD - 1e-9);
    assert_int_equal(doc.error, 0);
    doc_release(&doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_long_word_takes_a_few_measures_a_line),
        cmocka_unit_test(a_word_beyond_libharu_is_laid_out),
        cmocka_unit_test(a_long_cell_wraps_and_is_never_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
