/* Tests of suggest: the names offered for a mistyped one (commands, columns, placeholders). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "base/suggest.h"

static const char *const commands[] = {"eval", "report", "figures", "help"};

static void test_closest_command(void **state)
{
    (void)state;
    assert_string_equal(suggest_closest("evl", commands, 4), "eval");
    assert_string_equal(suggest_closest("reprot", commands, 4), "report");
    assert_string_equal(suggest_closest("figure", commands, 4), "figures");
    assert_null(suggest_closest("frobnicate", commands, 4));
}

/* The nearest k, nearest first; a tie keeps the candidates' order; k larger than n gives n. */
static void test_nearest_few_in_order(void **state)
{
    (void)state;
    static const char *const names[] = {"peak", "params", "heads", "pp", "peak_cf", "seq"};
    const char *got[6];
    assert_int_equal(suggest_nearest("pek", names, 6, got, 3), 3);
    assert_string_equal(got[0], "peak");
    assert_string_equal(got[1], "pp"); /* distance 2, before "seq" (2) by order */
    assert_string_equal(got[2], "seq");
    assert_int_equal(suggest_nearest("x", names, 2, got, 5), 2);
    assert_int_equal(suggest_nearest("x", names, 6, got, 0), 0);
}

static void test_join(void **state)
{
    (void)state;
    char buf[64];
    assert_string_equal(suggest_join(commands, 3, " or ", buf, sizeof buf),
                        "eval, report or figures");
    assert_string_equal(suggest_join(commands, 1, " or ", buf, sizeof buf), "eval");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_closest_command),
        cmocka_unit_test(test_nearest_few_in_order),
        cmocka_unit_test(test_join),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
