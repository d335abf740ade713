/*
 * texttable: a table for people on a terminal (eval's and search's --format table). Every column
 * is as wide as its widest cell, measured in terminal columns (textwidth.h); on a narrow
 * terminal the optional columns are kept, the most wanted first, while they fit, and the first
 * column (the names) is cut in the middle, with an ellipsis, down to its header's width. Cells
 * are the caller's strings; this module lays them out and writes them.
 */
#ifndef MEMFIT_TEXTTABLE_H
#define MEMFIT_TEXTTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define TEXTTABLE_MAX_COLS 32
/* An optional column of keep >= TEXTTABLE_ESSENTIAL is shown at the cost of the names' width,
 * down to TEXTTABLE_NAME_FLOOR columns (or the header's); the others only beside whole names. */
#define TEXTTABLE_ESSENTIAL 10
#define TEXTTABLE_NAME_FLOOR 12

struct texttable {
    size_t n;         /* columns */
    size_t term_cols; /* the terminal's width; 0: every column, however wide */
    size_t width[TEXTTABLE_MAX_COLS];
    unsigned keep[TEXTTABLE_MAX_COLS]; /* 0: always shown; else the higher, the more wanted */
    bool left[TEXTTABLE_MAX_COLS];     /* aligned left (else right) */
    bool absent[TEXTTABLE_MAX_COLS];   /* no row has a value for it: never shown */
    bool shown[TEXTTABLE_MAX_COLS];
    size_t first_cols; /* the first column's width: a longer cell is cut */
    size_t first_head; /* of a cut cell, the columns its beginning keeps (textwidth_fit_split) */
    bool narrowed;     /* optional columns were left out */
};

/* n (<= TEXTTABLE_MAX_COLS) columns at their headers' widths, none optional or absent yet: the
 * caller sets keep, left and absent, then measures the rows and fits. */
void texttable_start(struct texttable *t, size_t n, const char *const *heads, size_t term_cols);

/* Widens the columns to a row's cells. */
void texttable_measure(struct texttable *t, const char *const *cells);

/* Chooses the columns shown and the first column's width; heads as for texttable_start. */
void texttable_fit(struct texttable *t, const char *const *heads);

/* The name of row i of the caller's rows. */
typedef const char *texttable_name_fn(const void *rows, size_t i);

/*
 * Chooses how the names of the first column are cut (first_head), after texttable_fit: where it
 * keeps the most of the n rows' names told apart (textwidth_best_head; the first 1,024 decide).
 */
void texttable_choose_cut(struct texttable *t, texttable_name_fn *name, const void *rows, size_t n);

/*
 * A line under the table: two spaces, name cut as the first column's are and padded to
 * name_cols, two spaces, then text wrapped between words at width (0: no limit), its new lines
 * indented under its start.
 */
void texttable_put_named(const struct texttable *t, FILE *out, const char *name, size_t name_cols,
                         const char *text, size_t width);

/* One line: the columns shown, two spaces apart, the first cut to first_cols, the last not
 * padded. */
void texttable_line(const struct texttable *t, FILE *out, const char *const *cells);

/* The dashes under the header. */
void texttable_rule(const struct texttable *t, FILE *out);

/* text padded with spaces to cols terminal columns (a wide character takes fewer bytes a column
 * than ASCII, so printf's byte widths would not do). */
void texttable_put_padded(FILE *out, const char *text, size_t cols, bool left);

/* text from terminal column col, wrapped between words at width (0: no limit), new lines
 * indented by indent. */
void texttable_put_words(FILE *out, const char *text, size_t col, size_t indent, size_t width);

#endif
