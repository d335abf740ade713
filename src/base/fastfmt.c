/* fastfmt: see fastfmt.h. */
#include "base/fastfmt.h"

#include <math.h>
#include <stdint.h>

/* 10^0 .. 10^22: every one exact in a double. */
static const double pow10_table[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A scaled value below this has an absolute rounding error below TIE_MARGIN (2^33 2^-53 < 1e-6),
 * so a rounding decision made on it at least TIE_MARGIN from a tie is the exact value's. */
#define SCALED_MAX 8589934592.0 /* 2^33 */
#define TIE_MARGIN 1e-6

/* s rounded to the nearest integer, or -1 when s is within TIE_MARGIN of a tie (or too large). */
static double round_clear_of_ties(double s)
{
    if (!(s < SCALED_MAX))
        return -1;
    double whole = floor(s), frac = s - whole; /* exact */
    if (fabs(frac - 0.5) < TIE_MARGIN)
        return -1;
    return frac > 0.5 ? whole + 1 : whole;
}

/* The decimal digits of n into buf, exactly `width` of them (leading zeros); returns width. */
static size_t put_digits(char *buf, uint64_t n, size_t width)
{
    for (size_t i = width; i-- > 0; n /= 10)
        buf[i] = (char)('0' + n % 10);
    return width;
}

static size_t digits_of(uint64_t n)
{
    size_t d = 1;
    while (n >= 10) {
        n /= 10;
        d++;
    }
    return d;
}

size_t fastfmt_fixed(char *buf, double x, int decimals)
{
    if (!isfinite(x) || decimals < 0 || decimals > 6)
        return 0;
    size_t len = 0;
    if (signbit(x))
        buf[len++] = '-';
    double ax = fabs(x), r;
    if (decimals == 0) /* no scaling: nearbyint rounds the exact value, ties to even */
        r = ax < 9.2e18 ? nearbyint(ax) : -1;
    else
        r = round_clear_of_ties(ax * pow10_table[decimals]);
    if (r < 0)
        return 0;
    uint64_t n = (uint64_t)r, scale = (uint64_t)pow10_table[decimals];
    uint64_t whole = n / scale;
    len += put_digits(buf + len, whole, digits_of(whole));
    if (decimals > 0) {
        buf[len++] = '.';
        len += put_digits(buf + len, n % scale, (size_t)decimals);
    }
    buf[len] = '\0';
    return len;
}

size_t fastfmt_general(char *buf, double x, int digits)
{
    if (!isfinite(x) || x == 0 || digits < 1 || digits > 6)
        return 0;
    double ax = fabs(x), low = pow10_table[digits - 1], high = pow10_table[digits];
    int e = (int)floor(log10(ax)), k = 0;
    double s = 0;
    /* s = ax 10^(digits - 1 - e) in [low, high); log10 may be one off near a power of 10. */
    for (int tries = 0; tries < 3; tries++) {
        k = digits - 1 - e;
        if (k < 0 || k > 22) /* large values take %g's exponent form below anyway */
            return 0;
        s = ax * pow10_table[k];
        if (s < low)
            e--;
        else if (s >= high)
            e++;
        else
            break;
    }
    if (!(s >= low && s < high))
        return 0;
    double r = round_clear_of_ties(s);
    if (r < 0)
        return 0;
    if (r >= high) { /* 9.9995 to 4 digits: 10.00 */
        r = low;
        e++;
    }
    if (e < -4 || e >= digits) /* %g writes these with an exponent */
        return 0;
    char d[8];
    put_digits(d, (uint64_t)r, (size_t)digits);
    size_t len = 0;
    if (signbit(x))
        buf[len++] = '-';
    size_t point; /* digits before the decimal point */
    if (e >= 0) {
        point = (size_t)e + 1;
        for (size_t i = 0; i < point; i++)
            buf[len++] = d[i];
    } else {
        point = 0;
        buf[len++] = '0';
    }
    /* The fraction: -e - 1 zeros, then the digits after the point, trailing zeros dropped. */
    size_t last = (size_t)digits;
    while (last > point && d[last - 1] == '0')
        last--;
    if (last > point) {
        buf[len++] = '.';
        for (int z = 0; z < -e - 1; z++)
            buf[len++] = '0';
        for (size_t i = point; i < last; i++)
            buf[len++] = d[i];
    }
    buf[len] = '\0';
    return len;
}
