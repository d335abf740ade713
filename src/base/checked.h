/*
 * checked: uint64_t arithmetic that records overflow instead of wrapping.
 *
 * A chain of byte-count formulas shares one `struct checked`; after the chain, `overflow` says
 * whether any step overflowed (the results are then meaningless and must be rejected).
 */
#ifndef MEMFIT_CHECKED_H
#define MEMFIT_CHECKED_H

#include <stdbool.h>
#include <stdint.h>

struct checked {
    bool overflow;
};

static inline uint64_t ck_mul(struct checked *ck, uint64_t a, uint64_t b)
{
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
        ck->overflow = true;
        return UINT64_MAX;
    }
    return r;
}

static inline uint64_t ck_add(struct checked *ck, uint64_t a, uint64_t b)
{
    uint64_t r;
    if (__builtin_add_overflow(a, b, &r)) {
        ck->overflow = true;
        return UINT64_MAX;
    }
    return r;
}

static inline uint64_t ck_mul3(struct checked *ck, uint64_t a, uint64_t b, uint64_t c)
{
    return ck_mul(ck, ck_mul(ck, a, b), c);
}

/* ceil(a / d) for d > 0, without overflow. */
static inline uint64_t div_up(uint64_t a, uint64_t d)
{
    return a / d + (a % d != 0);
}

#endif
