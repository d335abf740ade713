/*
 * suggest: "did you mean" for names the user mistyped (unknown columns, presets, placeholders).
 */
#ifndef MEMFIT_SUGGEST_H
#define MEMFIT_SUGGEST_H

#include <stddef.h>

/* Edit distance (Levenshtein, case-insensitive) between two short strings. */
size_t suggest_distance(const char *a, const char *b);

/* The candidate closest to `word`, or NULL when none is close enough to be a plausible typo
 * (distance at most a third of the word's length, and at least 1 allowed; a candidate that
 * starts with the word or contains it also counts). */
const char *suggest_closest(const char *word, const char *const *candidates, size_t n);

/* The k candidates nearest to `word` (edit distance, then the order of candidates) into out[0..k),
 * nearest first; returns how many were written (min(k, n)). For a message that cannot name one
 * "did you mean" but should not list a hundred names either. */
size_t suggest_nearest(const char *word, const char *const *candidates, size_t n, const char **out,
                       size_t k);

/* The words joined for a message into buf: "a, b, c", or with last_sep " or " as the last
 * separator "a, b or c". Returns buf. */
char *suggest_join(const char *const *words, size_t n, const char *last_sep, char *buf,
                   size_t size);

#endif
