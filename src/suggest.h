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

/* The words joined for a message into buf: "a, b, c", or with last_sep " or " as the last
 * separator "a, b or c". Returns buf. */
char *suggest_join(const char *const *words, size_t n, const char *last_sep, char *buf,
                   size_t size);

#endif
