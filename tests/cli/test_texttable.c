/* Tests of texttable.c: widths, the columns kept on a narrow terminal, the names cut. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/texttable.h"

static const char *const heads[] = {"name", "a", "bb", "c"};
static const char *const row[] = {"a-long-name", "1", "22", "333"};

static struct texttable layout(size_t term_cols)
{
    struct texttable t;
    texttable_start(&t, 4, heads, term_cols);
    t.keep[2] = 2; /* optional, wanted more than c */
    t.keep[3] = 1;
    texttable_measure(&t, row);
    texttable_fit(&t, heads);
    return t;
}

/* Wide enough: every column at its widest cell. */
static void every_column_when_it_fits(void **state)
{
    (void)state;
    struct texttable t = layout(0);
    assert_int_equal(t.width[0], 11);
    assert_int_equal(t.width[3], 3);
    assert_true(t.shown[2] && t.shown[3] && !t.narrowed);
}

/* 11 + 2 + 1 + 2 + 2 = 18 columns: bb fits, c does not; at 10 neither, and the names are cut
 * to what is left, never below their header. */
static void narrow_keeps_the_most_wanted_then_cuts_names(void **state)
{
    (void)state;
    struct texttable t = layout(18);
    assert_true(t.shown[2] && !t.shown[3] && t.narrowed);
    assert_int_equal(t.first_cols, 11);
    t = layout(10);
    assert_true(!t.shown[2] && !t.shown[3]);
    assert_int_equal(t.first_cols, 7); /* 11 + 2 + 1 = 14 columns, 4 too many */
    t = layout(3);
    assert_int_equal(t.first_cols, 4); /* the header's width */
}

/* A line: the name cut in the middle, two spaces, the last column unpadded. */
static void a_line_as_laid_out(void **state)
{
    (void)state;
    struct texttable t = layout(10);
    char buf[128] = "";
    FILE *f = fmemopen(buf, sizeof buf, "w");
    assert_non_null(f);
    texttable_line(&t, f, row);
    texttable_rule(&t, f);
    fclose(f);
    assert_string_equal(buf, "a-l\xe2\x80\xa6"
                             "ame  1\n-------  -\n"); /* cut in the middle */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_column_when_it_fits),
        cmocka_unit_test(narrow_keeps_the_most_wanted_then_cuts_names),
        cmocka_unit_test(a_line_as_laid_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
