/*
 * textwidth: the columns a UTF-8 string takes on a terminal, to align text for people (eval's
 * table). A code point takes one column; an East Asian wide or fullwidth one two (the W and F
 * ranges of Unicode's EastAsianWidth.txt, the large blocks only: CJK, Hangul, kana, fullwidth
 * forms, the emoji blocks); a combining mark, a zero-width space or joiner and a variation
 * selector none. A byte that does not start a valid UTF-8 sequence counts as one column, so a
 * width is never less than the code points shown.
 *
 * Pure: no locale, no I/O (wcwidth() would follow the locale, and memfit sets none).
 */
#ifndef MEMFIT_TEXTWIDTH_H
#define MEMFIT_TEXTWIDTH_H

#include <stddef.h>

/* The columns of the code point cp: 0, 1 or 2. */
unsigned textwidth_char(unsigned long cp);

/* The columns of the NUL-terminated string s. */
size_t textwidth_cols(const char *s);

/*
 * The length in bytes of the longest prefix of s, cut between code points (a zero-width mark
 * stays with the character before it), that takes at most max_cols columns; its columns into
 * *cols when cols is not NULL.
 */
size_t textwidth_prefix(const char *s, size_t max_cols, size_t *cols);

/* s itself when it takes at most cols columns; else s cut in the middle to cols columns: its
 * beginning (the larger half), an ellipsis (U+2026) and its end, into buf (size bytes), cut
 * between characters. For a table's names: a sweep's names that share a long beginning stay
 * told apart by their ends. */
const char *textwidth_fit(const char *s, size_t cols, char *buf, size_t size);

/* The same, the beginning taking at most head_cols columns (at most cols - 1) and the end the
 * rest. */
const char *textwidth_fit_split(const char *s, size_t cols, size_t head_cols, char *buf,
                                size_t size);

/*
 * The head_cols of textwidth_fit_split that keeps the most of names[0..n) told apart when each is
 * cut to cols columns (on a tie, the nearest the middle): "llama3.1-8b-8xH100" and
 * "llama3.1-70b-64xH100" in 12 columns differ in their beginnings, a sweep's "...-b1" and "-b2"
 * at their ends.
 */
size_t textwidth_best_head(const char *const *names, size_t n, size_t cols);

#endif
