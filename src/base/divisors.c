/* divisors: see divisors.h. */
#include "base/divisors.h"

#include <stdlib.h>

static uint64_t mul_mod(uint64_t a, uint64_t b, uint64_t m)
{
    return (uint64_t)((unsigned __int128)a * b % m);
}

static uint64_t pow_mod(uint64_t a, uint64_t e, uint64_t m)
{
    uint64_t r = 1 % m;
    for (a %= m; e; e >>= 1) {
        if (e & 1)
            r = mul_mod(r, a, m);
        a = mul_mod(a, a, m);
    }
    return r;
}

/* The first twelve primes: as Miller-Rabin bases they decide every n < 3.3 * 10^24. */
static const uint64_t small_primes[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};

bool divisors_is_prime(uint64_t n)
{
    if (n < 2)
        return false;
    for (size_t i = 0; i < sizeof small_primes / sizeof *small_primes; i++)
        if (n % small_primes[i] == 0)
            return n == small_primes[i];
    uint64_t d = n - 1;
    int s = 0;
    for (; (d & 1) == 0; d >>= 1)
        s++;
    for (size_t i = 0; i < sizeof small_primes / sizeof *small_primes; i++) {
        uint64_t x = pow_mod(small_primes[i], d, n);
        if (x == 1 || x == n - 1)
            continue;
        int r = 1;
        for (; r < s; r++) {
            x = mul_mod(x, x, n);
            if (x == n - 1)
                break;
        }
        if (r == s)
            return false;
    }
    return true;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* A nontrivial factor of n, odd and composite (Pollard's rho, Brent's cycle finding). */
static uint64_t rho(uint64_t n)
{
    for (uint64_t c = 1;; c++) {
        uint64_t y = 2, x = 2, q = 1, g = 1, ys = 2;
        const uint64_t batch = 128;
        for (uint64_t r = 1; g == 1; r <<= 1) {
            x = y;
            for (uint64_t i = 0; i < r; i++)
                y = (mul_mod(y, y, n) + c) % n;
            for (uint64_t k = 0; k < r && g == 1; k += batch) {
                ys = y;
                for (uint64_t i = 0; i < batch && i < r - k; i++) {
                    y = (mul_mod(y, y, n) + c) % n;
                    q = mul_mod(q, x > y ? x - y : y - x, n);
                }
                g = gcd(q, n);
            }
        }
        if (g == n) { /* the batch overshot: step one at a time from its start */
            do {
                ys = (mul_mod(ys, ys, n) + c) % n;
                g = gcd(x > ys ? x - ys : ys - x, n);
            } while (g == 1);
        }
        if (g != n)
            return g;
    }
}

/* The prime factors of n > 1 appended to f (with repetition; at most 64 of them). */
static void factor(uint64_t n, uint64_t *f, size_t *nf)
{
    if (n == 1)
        return;
    if (divisors_is_prime(n)) {
        f[(*nf)++] = n;
        return;
    }
    uint64_t d = rho(n);
    factor(d, f, nf);
    factor(n / d, f, nf);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

uint64_t *divisors_of(uint64_t n, size_t *count)
{
    *count = 0;
    if (n == 0)
        return NULL;
    uint64_t f[64];
    size_t nf = 0;
    uint64_t m = n;
    for (uint64_t p = 2; p < 1000 && p * p <= m; p += p > 2 ? 2 : 1)
        for (; m % p == 0; m /= p)
            f[nf++] = p;
    factor(m, f, &nf);
    qsort(f, nf, sizeof *f, cmp_u64);
    size_t total = 1;
    for (size_t i = 0; i < nf;) {
        size_t j = i;
        while (j < nf && f[j] == f[i])
            j++;
        total *= j - i + 1;
        i = j;
    }
    uint64_t *d = malloc(total * sizeof *d);
    if (!d)
        return NULL;
    size_t nd = 1;
    d[0] = 1;
    for (size_t i = 0; i < nf;) {
        size_t j = i;
        while (j < nf && f[j] == f[i])
            j++;
        /* Every divisor so far times p, p^2, ..., p^(j - i). */
        size_t base = nd;
        uint64_t pk = 1;
        for (size_t e = 0; e < j - i; e++) {
            pk *= f[i];
            for (size_t k = 0; k < base; k++)
                d[nd++] = d[k] * pk;
        }
        i = j;
    }
    qsort(d, nd, sizeof *d, cmp_u64);
    *count = nd;
    return d;
}
