/*
 * divisors: every divisor of a 64-bit integer, from its prime factors. search varies each degree
 * of a layout over the divisors of the GPU count and the micro-batch over those of the global
 * batch; a count such as a prime near 2^64 must be answered at once, not after 2^32 trial
 * divisions.
 *
 * Factors by trial division by the small primes, then Miller-Rabin (deterministic for every
 * 64-bit integer with the first twelve primes as bases) and Pollard's rho (Brent's variant) on
 * what remains.
 *
 * Pure: no I/O, no globals; the caller frees the array.
 */
#ifndef MEMFIT_DIVISORS_H
#define MEMFIT_DIVISORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether n is prime (exact for every 64-bit n). */
bool divisors_is_prime(uint64_t n);

/*
 * The divisors of n > 0, ascending, in a new array the caller frees, *count of them; NULL when
 * out of memory (or n is 0).
 */
uint64_t *divisors_of(uint64_t n, size_t *count);

#endif
