/* Tests of textwidth: the columns of UTF-8 text on a terminal (eval's table aligns by them). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "base/textwidth.h"

static void test_ascii_is_one_column_a_byte(void **state)
{
    (void)state;
    assert_int_equal(textwidth_cols(""), 0);
    assert_int_equal(textwidth_cols("lesson-1.3b"), 11);
}

/* Two-byte letters (é, Ψ) take one column, not two. */
static void test_accented_and_greek_letters_take_one_column(void **state)
{
    (void)state;
    assert_int_equal(textwidth_cols("caf\xc3\xa9"), 4);
    assert_int_equal(textwidth_cols("\xce\xa8-7b"), 4);
}

/* CJK ideographs, Hangul and fullwidth forms take two; an emoji of the pictographs block too. */
static void test_east_asian_wide_takes_two(void **state)
{
    (void)state;
    assert_int_equal(textwidth_cols("\xe6\xa8\xa1\xe5\x9e\x8b"), 4); /* 模型 */
    assert_int_equal(textwidth_cols("\xed\x95\x9c"), 2);             /* 한 */
    assert_int_equal(textwidth_cols("\xef\xbc\xa1"), 2);             /* Ａ (fullwidth A) */
    assert_int_equal(textwidth_cols("\xf0\x9f\x9a\x80"), 2);         /* 🚀 */
    assert_int_equal(textwidth_char(0x3000), 2);                     /* ideographic space */
    assert_int_equal(textwidth_char(0x303F), 1);                     /* half fill space */
}

/* A combining accent adds nothing: e + U+0301 is one column, as é is. */
static void test_combining_marks_take_none(void **state)
{
    (void)state;
    assert_int_equal(textwidth_cols("e\xcc\x81"), 1);
    assert_int_equal(textwidth_cols("a\xe2\x80\x8b"
                                    "b"),
                     2); /* zero-width space */
}

/* A byte outside UTF-8 (Latin-1 é) or a cut sequence still shows: one column each. */
static void test_invalid_bytes_take_one(void **state)
{
    (void)state;
    assert_int_equal(textwidth_cols("caf\xe9"), 4);
    assert_int_equal(textwidth_cols("\xe6\xa8"), 2);
}

/* The prefix that fits: whole characters only, a wide one left out when one column remains,
 * a combining mark kept with its letter. */
static void test_prefix_cuts_between_characters(void **state)
{
    (void)state;
    size_t cols;
    assert_int_equal(textwidth_prefix("abcdef", 4, &cols), 4);
    assert_int_equal(cols, 4);
    assert_int_equal(textwidth_prefix("a\xe6\xa8\xa1\xe5\x9e\x8b", 4, &cols), 4);
    assert_int_equal(cols, 3);
    assert_int_equal(textwidth_prefix("e\xcc\x81x", 1, &cols), 3);
    assert_int_equal(cols, 1);
    assert_int_equal(textwidth_prefix("\xce\xa8\xce\xa8", 1, NULL), 2);
    assert_int_equal(textwidth_prefix("abc", 0, &cols), 0);
    assert_int_equal(cols, 0);
}

/* A name that fits is itself; a longer one is cut in the middle, both ends kept around an
 * ellipsis, between characters (a wide one is not split). */
static void test_fit_cuts_with_an_ellipsis(void **state)
{
    (void)state;
    char buf[64];
    assert_string_equal(textwidth_fit("abc", 3, buf, sizeof buf), "abc");
    assert_string_equal(textwidth_fit("abcdef", 4, buf, sizeof buf), "ab\xe2\x80\xa6"
                                                                     "f");
    assert_int_equal(textwidth_cols(textwidth_fit("abcdef", 4, buf, sizeof buf)), 4);
    assert_string_equal(textwidth_fit("abcdef", 1, buf, sizeof buf), "\xe2\x80\xa6");
    /* A sweep's names stay distinguishable (they used to come out as the same prefix). */
    assert_string_equal(textwidth_fit("l3-8b-qlora-4090-b1", 12, buf, sizeof buf),
                        "l3-8b-\xe2\x80\xa6"
                        "90-b1");
    assert_string_equal(textwidth_fit("l3-8b-qlora-4090-b2", 12, buf, sizeof buf),
                        "l3-8b-\xe2\x80\xa6"
                        "90-b2");
    /* Three wide characters (2 columns each) in 4 columns: one and the ellipsis; the end gets
     * none, as its one column cannot hold a wide character. */
    assert_string_equal(textwidth_fit("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 4, buf, sizeof buf),
                        "\xe6\x97\xa5\xe2\x80\xa6");
    assert_int_equal(
        textwidth_cols(textwidth_fit("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 5, buf, sizeof buf)),
        5);
}

/* The cut that keeps the most names apart: their beginnings where the ends agree, their ends
 * where the beginnings do; the middle on a tie. */
static void test_best_head_tells_names_apart(void **state)
{
    (void)state;
    const char *jobs[] = {"llama3.1-8b-8xH100", "llama3.1-70b-64xH100", "llama3.1-405b-16384xH100"};
    char buf[64];
    size_t h = textwidth_best_head(jobs, 3, 12);
    assert_string_not_equal(textwidth_fit_split(jobs[0], 12, h, buf, sizeof buf),
                            textwidth_fit_split(jobs[1], 12, h, buf + 32, 32));
    const char *sweep[] = {"l3-8b-qlora-4090-b1", "l3-8b-qlora-4090-b2", "l3-8b-qlora-4090-b4"};
    h = textwidth_best_head(sweep, 3, 12);
    assert_string_equal(textwidth_fit_split(sweep[2], 12, h, buf, sizeof buf), "l3-8b-\xe2\x80\xa6"
                                                                               "90-b4");
    assert_int_equal(textwidth_best_head(sweep, 1, 12), 6); /* one name: the middle */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ascii_is_one_column_a_byte),
        cmocka_unit_test(test_fit_cuts_with_an_ellipsis),
        cmocka_unit_test(test_best_head_tells_names_apart),
        cmocka_unit_test(test_accented_and_greek_letters_take_one_column),
        cmocka_unit_test(test_east_asian_wide_takes_two),
        cmocka_unit_test(test_combining_marks_take_none),
        cmocka_unit_test(test_invalid_bytes_take_one),
        cmocka_unit_test(test_prefix_cuts_between_characters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
