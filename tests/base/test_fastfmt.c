/*
 * Tests of fastfmt.c: whenever it writes a value, it writes what snprintf writes ("%.Nf" and
 * "%.Ng"), over a million values drawn across their ranges, at ties and next to them; and it
 * does write the values eval prints (it is not a function that always gives up).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fastfmt.h"

/* A small deterministic generator (xorshift64*), so that a failure can be reproduced. */
static uint64_t next(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 2685821657736338717ULL;
}

static double uniform(uint64_t *state)
{
    return (double)(next(state) >> 11) / 9007199254740992.0;
}

/* Checks x in both forms at every precision; counts the values written fast. */
static void check(double x, size_t *fast, size_t *all)
{
    char want[64], got[64];
    for (int p = 0; p <= 6; p++) {
        snprintf(want, sizeof want, "%.*f", p, x);
        size_t n = fastfmt_fixed(got, x, p);
        if (n) {
            if (strcmp(got, want) != 0 || n != strlen(want))
                fail_msg("%%.%df of %.17g: '%s', snprintf '%s'", p, x, got, want);
            (*fast)++;
        }
        (*all)++;
        if (p == 0)
            continue;
        snprintf(want, sizeof want, "%.*g", p, x);
        n = fastfmt_general(got, x, p);
        if (n) {
            if (strcmp(got, want) != 0 || n != strlen(want))
                fail_msg("%%.%dg of %.17g: '%s', snprintf '%s'", p, x, got, want);
            (*fast)++;
        }
        (*all)++;
    }
}

static void test_random_values_as_snprintf(void **state)
{
    (void)state;
    uint64_t seed = 0x9E3779B97F4A7C15ULL;
    size_t fast = 0, all = 0;
    for (int i = 0; i < 150000; i++) {
        /* a mantissa in [1, 10) times 10^-7 .. 10^12, either sign */
        double m = 1 + 9 * uniform(&seed);
        int e = (int)(next(&seed) % 20) - 7;
        double x = m * pow(10, e) * ((next(&seed) & 1) ? -1 : 1);
        check(x, &fast, &all);
    }
    assert_true(fast * 2 > all); /* more than half, over ranges much wider than eval's */
}

/* In the ranges of eval's numbers (0.001 to 10,000 for %.4g, which writes larger values with an
 * exponent, and to 100,000 for %.0f and %.3f) the fast path writes all but the values next to a
 * tie: more than 99.9% of them. */
static void test_evals_ranges_are_fast(void **state)
{
    (void)state;
    uint64_t seed = 12345;
    size_t fast = 0, all = 0;
    char buf[64];
    for (int i = 0; i < 100000; i++) {
        double x = (1 + 9 * uniform(&seed)) * pow(10, (int)(next(&seed) % 8) - 3);
        fast += fastfmt_general(buf, x < 9999 ? x : x / 100, 4) > 0;
        fast += fastfmt_fixed(buf, x, 0) > 0;
        fast += fastfmt_fixed(buf, x, 3) > 0;
        all += 3;
    }
    assert_true(fast * 1000 > all * 999);
}

/* Ties and their neighbours: decimal halves (exact or not in binary), powers of ten, the
 * rounding that carries into a new digit, zero of either sign, the largest and smallest. */
static void test_edges_as_snprintf(void **state)
{
    (void)state;
    static const double base[] = {
        0.5,      1.5,    2.5,     0.125,        0.0005,     0.00015, 1.2345, 9999.5,
        99.995,   9.9995, 0.99995, 0.0001,       0.00009999, 1e-5,    1e4,    1e-4,
        123456.5, 2.675,  1.005,   8589934592.0, 4.35,       0.945,   100,    1000,
        0.0,      -0.0,   1e15,    1e22,         1e300,      5e-324,  0.9443, 17350.4,
    };
    size_t fast = 0, all = 0;
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) {
        double x = base[i];
        check(x, &fast, &all);
        check(-x, &fast, &all);
        check(nextafter(x, INFINITY), &fast, &all);
        check(nextafter(x, -INFINITY), &fast, &all);
    }
    char buf[64];
    assert_int_equal(fastfmt_fixed(buf, NAN, 3), 0);
    assert_int_equal(fastfmt_general(buf, INFINITY, 4), 0);
}

/* What eval writes: seconds to 4 digits, tokens a second whole, MFU to 3 decimals. */
static void test_evals_numbers_are_fast(void **state)
{
    (void)state;
    char buf[64];
    assert_int_equal(fastfmt_general(buf, 0.94431, 4), 6);
    assert_string_equal(buf, "0.9443");
    assert_int_equal(fastfmt_general(buf, 12.0, 4), 2);
    assert_string_equal(buf, "12");
    assert_int_equal(fastfmt_fixed(buf, 17350.4, 0), 5);
    assert_string_equal(buf, "17350");
    assert_int_equal(fastfmt_fixed(buf, 0.50512, 3), 5);
    assert_string_equal(buf, "0.505");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_values_as_snprintf),
        cmocka_unit_test(test_edges_as_snprintf),
        cmocka_unit_test(test_evals_ranges_are_fast),
        cmocka_unit_test(test_evals_numbers_are_fast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
