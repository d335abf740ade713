/* numfmt: seconds for people, in each of their ranges (numfmt.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "base/numfmt.h"

static void seconds_in_each_range(void **state)
{
    (void)state;
    char buf[32];
    numfmt_seconds(buf, sizeof buf, 1.234);
    assert_string_equal(buf, "1.23 s");
    numfmt_seconds(buf, sizeof buf, 0.045);
    assert_string_equal(buf, "45 ms");
    numfmt_seconds(buf, sizeof buf, 0.00025);
    assert_string_equal(buf, "0.25 ms");
    numfmt_seconds(buf, sizeof buf, 0);
    assert_string_equal(buf, "0 s");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(seconds_in_each_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
