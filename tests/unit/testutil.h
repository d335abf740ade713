/*
 * testutil: helpers shared by the cmocka tests. cmocka 1.1.5 has no assert_double_equal, so
 * numbers printed by the lesson ("116.1 GB") are compared after the same rounding.
 */
#ifndef MEMFIT_TESTUTIL_H
#define MEMFIT_TESTUTIL_H

#include <math.h>

/* bytes, in GB (10^9), rounded to `digits` decimals, equals `gb` rounded the same way. */
#define assert_gb_rounded(bytes, gb, digits)                                                     \
    assert_int_equal(llround((double)(bytes) / 1e9 * pow(10, digits)),                           \
                     llround((gb) * pow(10, digits)))
#define assert_gb0(bytes, gb) assert_gb_rounded(bytes, gb, 0)
#define assert_gb1(bytes, gb) assert_gb_rounded(bytes, gb, 1)
#define assert_gb2(bytes, gb) assert_gb_rounded(bytes, gb, 2)

/* |a - b| <= tol * |b| */
#define assert_close(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (tol)*fabs((double)(b)))

#endif
