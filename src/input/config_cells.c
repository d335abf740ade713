/*
 * config_cells: a cell of a row parsed by its kind (config_internal.h): integers, numbers,
 * booleans, one of a list of words, with the messages that say what is wrong with one (a preset's
 * cell parsed at load time is taken as it is).
 */
#include "input/config_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/diag.h"
#include "base/suggest.h"

/* strcasecmp(s, word) == 0, the first letters compared inline first (ASCII case folding, as
 * strcasecmp in the C locale): most words a cell is tried against differ in the first letter,
 * and a library call per word tried was a tenth of config's time. A cell mostly is the word as
 * written: strcmp, several times faster, says so before strcasecmp is asked. */
bool config_is_word(const char *s, const char *word)
{
    return ((unsigned char)*s | 0x20) == ((unsigned char)*word | 0x20) &&
           (strcmp(s, word) == 0 || strcasecmp(s, word) == 0);
}

/* The preset cell c of the row came from, or NULL. */
const struct preset *config_cell_preset(const struct row *r, enum col c)
{
    if (!(r->from_preset & COL_BIT(c)))
        return NULL;
    return c == COL_GPU_MEM_GB ? r->gpu : r->model;
}

/* The value of cell c parsed at load time (a valid preset cell), or NULL. */
static const union cell_value *typed_cell(const struct row *r, enum col c)
{
    const struct preset *p = config_cell_preset(r, c);
    return p && p->typed[c] ? &p->value[c] : NULL;
}

bool config_row_error(struct row *r, enum col c, const char *fmt, ...)
{
    char msg[DIAG_MSG_MAX];
    va_list ap;
    if (r->quiet)
        return false;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const struct preset *p = config_cell_preset(r, c);
    if (p)
        diag_report(r->diag, r->file, r->line, "column '%s': %s (from %s%s%s)", config_col_names[c],
                    msg, p->path ? "" : "preset '", p->name, p->path ? "" : "'");
    else
        diag_report(r->diag, r->file, r->line, "column '%s': %s", config_col_names[c], msg);
    return false;
}

bool config_require(struct row *r, enum col c)
{
    if (r->cell[c])
        return true;
    return config_row_error(r, c, "a value is required");
}

/* Explains why `s` is not a valid integer for column c (the slow path of config_parse_uint). */
static bool uint_error(struct row *r, enum col c, const char *s, bool allow_zero)
{
    const char *what = allow_zero ? "a non-negative integer" : "a positive integer";
    char *end;
    strtod(s, &end);
    bool number = end != s && !*end;
    if (number && *s == '-')
        return config_row_error(r, c, "'%s' is negative: expected %s", s, what);
    if (number && strpbrk(s, ".eE"))
        return config_row_error(r, c, "'%s' is not an integer: expected %s", s, what);
    return config_row_error(r, c, "'%s' is not %s", s, what);
}

bool config_parse_uint(struct row *r, enum col c, uint64_t *out, bool allow_zero)
{
    const union cell_value *typed = typed_cell(r, c);
    if (typed) {
        *out = typed->u;
        return true;
    }
    /* Digits only, accumulated with an overflow check: strtoull was a tenth of eval's time. */
    const char *s = r->cell[c], *p = s;
    uint64_t v = 0;
    if (!*p)
        return uint_error(r, c, s, allow_zero);
    for (; *p >= '0' && *p <= '9'; p++) {
        if (__builtin_mul_overflow(v, 10, &v) ||
            __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v)) {
            while (*p >= '0' && *p <= '9')
                p++;
            if (*p)
                return uint_error(r, c, s, allow_zero);
            return config_row_error(r, c, "'%s' is too large (more than 64 bits)", s);
        }
    }
    if (*p)
        return uint_error(r, c, s, allow_zero);
    if (v == 0 && !allow_zero)
        return config_row_error(r, c, "'%s' is zero: expected %s", s,
                                allow_zero ? "a non-negative integer" : "a positive integer");
    *out = v;
    return true;
}

/* An optional positive integer: *out keeps its default when the cell is empty. */
bool config_opt_uint(struct row *r, enum col c, uint64_t *out, bool allow_zero)
{
    return !r->cell[c] || config_parse_uint(r, c, out, allow_zero);
}

bool config_parse_bool_cell(struct row *r, enum col c, bool *out)
{
    static const char *const yes[] = {"1", "yes", "true", "y", "on"};
    static const char *const no[] = {"0", "no", "false", "n", "off"};
    const union cell_value *typed = typed_cell(r, c);
    if (typed) {
        *out = typed->b;
        return true;
    }
    for (size_t i = 0; i < 5; i++) {
        if (config_is_word(r->cell[c], yes[i])) {
            *out = true;
            return true;
        }
        if (config_is_word(r->cell[c], no[i])) {
            *out = false;
            return true;
        }
    }
    return config_row_error(r, c, "'%s' is not a boolean (0/1/yes/no/true/false)", r->cell[c]);
}

/* An optional boolean: *out keeps its default when the cell is empty. */
bool config_opt_bool(struct row *r, enum col c, bool *out)
{
    return !r->cell[c] || config_parse_bool_cell(r, c, out);
}

bool config_parse_double(struct row *r, enum col c, double *out)
{
    const union cell_value *typed = typed_cell(r, c);
    if (typed) {
        *out = typed->d;
        return true;
    }
    char *end;
    errno = 0;
    double v = strtod(r->cell[c], &end);
    if (end == r->cell[c] || *end || !isfinite(v))
        return config_row_error(r, c, "'%s' is not a number", r->cell[c]);
    *out = v;
    return true;
}

int config_parse_level(struct row *r, enum col c, const char *const *more, size_t n_more)
{
    const union cell_value *typed = typed_cell(r, c);
    if (typed)
        return typed->word;
    for (size_t i = 0; i < n_more; i++)
        if (config_is_word(r->cell[c], more[i]))
            return (int)(2 + i);
    static const char *const yes[] = {"1", "yes", "true", "y", "on"};
    static const char *const no[] = {"0", "no", "false", "n", "off"};
    for (size_t i = 0; i < 5; i++) {
        if (config_is_word(r->cell[c], yes[i]))
            return 1;
        if (config_is_word(r->cell[c], no[i]))
            return 0;
    }
    char list[80];
    config_row_error(r, c, "'%s' is not a boolean (0/1/yes/no/true/false) or %s", r->cell[c],
                     suggest_join(more, n_more, ", ", list, sizeof list));
    return -1;
}

bool config_opt_level(struct row *r, enum col c, const char *const *more, size_t n_more, int *out)
{
    if (!r->cell[c])
        return true;
    int v = config_parse_level(r, c, more, n_more);
    if (v < 0)
        return false;
    *out = v;
    return true;
}

/* One of a list of words; returns the index or -1 after reporting. */
int config_parse_word(struct row *r, enum col c, const char *const *words, size_t n)
{
    const union cell_value *typed = typed_cell(r, c);
    if (typed)
        return typed->word;
    for (size_t i = 0; i < n; i++)
        if (config_is_word(r->cell[c], words[i]))
            return (int)i;
    char list[160];
    config_row_error(r, c, "'%s' is not one of %s", r->cell[c],
                     suggest_join(words, n, ", ", list, sizeof list));
    return -1;
}
