/* Tests of nameset.c: duplicates found with the line first seen, across growth of the table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>

#include "nameset.h"

static void duplicates_are_found_with_their_first_line(void **state)
{
    (void)state;
    struct nameset n;
    nameset_init(&n);
    char name[32];
    for (unsigned long i = 0; i < 5000; i++) { /* grows from 1024 slots several times */
        snprintf(name, sizeof name, "scenario-%lu", i);
        assert_int_equal(nameset_add(&n, nameset_hash(name), i + 2), 0);
    }
    assert_int_equal(n.count, 5000);
    assert_true(n.cap >= 10000);
    for (unsigned long i = 0; i < 5000; i += 97) {
        snprintf(name, sizeof name, "scenario-%lu", i);
        nameset_prefetch(&n, nameset_hash(name));
        assert_int_equal(nameset_add(&n, nameset_hash(name), 9999), i + 2);
    }
    assert_int_equal(n.count, 5000);
    assert_true(nameset_hash("") != 0);
    assert_true(nameset_hash("a") != nameset_hash("b"));
    nameset_release(&n);
    nameset_release(&n); /* twice is harmless */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(duplicates_are_found_with_their_first_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
