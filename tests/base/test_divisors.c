/* Tests of divisors: every divisor of a 64-bit integer, exact and fast where trial division is
 * not (a prime near 2^64, 2^64 - 1). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>

#include "base/divisors.h"

/* The oracle: trial division, ascending. */
static size_t slow_divisors(uint64_t n, uint64_t *d, size_t cap)
{
    size_t k = 0;
    for (uint64_t i = 1; i <= n && k < cap; i++)
        if (n % i == 0)
            d[k++] = i;
    return k;
}

static void test_small_numbers_match_trial_division(void **state)
{
    (void)state;
    uint64_t want[256];
    for (uint64_t n = 1; n <= 5000; n++) {
        size_t nw = slow_divisors(n, want, 256), ng;
        uint64_t *got = divisors_of(n, &ng);
        assert_non_null(got);
        assert_int_equal(ng, nw);
        for (size_t i = 0; i < ng; i++)
            assert_int_equal(got[i], want[i]);
        free(got);
    }
}

/* Each divisor divides, they ascend, and their count is the product of (exponent + 1). */
static void check_large(uint64_t n, size_t want_count)
{
    size_t ng;
    uint64_t *got = divisors_of(n, &ng);
    assert_non_null(got);
    assert_int_equal(ng, want_count);
    assert_int_equal(got[0], 1);
    assert_true(got[ng - 1] == n);
    for (size_t i = 0; i < ng; i++) {
        assert_int_equal(n % got[i], 0);
        if (i)
            assert_true(got[i] > got[i - 1]);
        /* Divisors come in pairs d, n / d. */
        assert_true(got[ng - 1 - i] == n / got[i]);
    }
    free(got);
}

static void test_large_numbers(void **state)
{
    (void)state;
    check_large(UINT64_MAX, 128);          /* 3 5 17 257 641 65537 6700417 */
    check_large(18446744073709551557u, 2); /* the largest 64-bit prime */
    check_large(UINT64_C(1) << 63, 64);
    check_large(UINT64_C(1018081) * 1026169, 9);   /* 1009^2 1013^2: past the trial division */
    check_large(UINT64_C(4611686014132420609), 3); /* (2^31 - 1)^2 */
    check_large(UINT64_C(18401055938125660800), 184320); /* 2^7 3^4 5^2 7^2 11 13 ... 41 */
    check_large(16384, 15);
    check_large(15360, 44); /* 2^10 3 5 */
}

static void test_primes(void **state)
{
    (void)state;
    assert_false(divisors_is_prime(0));
    assert_false(divisors_is_prime(1));
    assert_true(divisors_is_prime(2));
    assert_true(divisors_is_prime(37));
    assert_false(divisors_is_prime(561));         /* a Carmichael number */
    assert_false(divisors_is_prime(3215031751u)); /* a strong pseudoprime to bases 2, 3, 5, 7 */
    assert_true(divisors_is_prime((UINT64_C(1) << 61) - 1));
    assert_true(divisors_is_prime(18446744073709551557u));
    assert_false(divisors_is_prime(UINT64_MAX));
    size_t n;
    assert_null(divisors_of(0, &n));
    assert_int_equal(n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_numbers_match_trial_division),
        cmocka_unit_test(test_large_numbers),
        cmocka_unit_test(test_primes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
