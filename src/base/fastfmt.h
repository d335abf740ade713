/*
 * fastfmt: a double as printf's "%.Nf" and "%.Ng" write it, without printf's arbitrary-precision
 * decimal conversion (a fifth of eval's time went to printing three numbers a row). Each
 * function writes exactly the text snprintf would, or returns 0 when it cannot be sure of that
 * (a value within a millionth of a rounding tie, too large, too small, not finite, or one that
 * "%g" writes with an exponent): the caller then uses snprintf. Round to nearest, ties to even,
 * as glibc's printf in the default rounding mode.
 *
 * Pure: no I/O, no allocation, no locale (the decimal point is '.').
 */
#ifndef MEMFIT_FASTFMT_H
#define MEMFIT_FASTFMT_H

#include <stddef.h>

/* "%.<decimals>f" of x (decimals 0 to 6) into buf (at least 32 bytes); its length, or 0. */
size_t fastfmt_fixed(char *buf, double x, int decimals);

/* "%.<digits>g" of x (digits 1 to 6) into buf (at least 32 bytes); its length, or 0. */
size_t fastfmt_general(char *buf, double x, int digits);

#endif
