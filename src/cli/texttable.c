/* texttable: see texttable.h. */
#include "cli/texttable.h"

#include <stdlib.h>
#include <string.h>

#include "base/textwidth.h"
#include "model/scenario.h"

void texttable_start(struct texttable *t, size_t n, const char *const *heads, size_t term_cols)
{
    memset(t, 0, sizeof *t);
    t->n = n < TEXTTABLE_MAX_COLS ? n : TEXTTABLE_MAX_COLS;
    t->term_cols = term_cols;
    for (size_t c = 0; c < t->n; c++)
        t->width[c] = textwidth_cols(heads[c]);
}

void texttable_measure(struct texttable *t, const char *const *cells)
{
    for (size_t c = 0; c < t->n; c++) {
        size_t cols = textwidth_cols(cells[c]);
        if (cols > t->width[c])
            t->width[c] = cols;
    }
}

/* The width of the columns shown and the two spaces between them. */
static size_t total_width(const struct texttable *t)
{
    size_t total = 0;
    for (size_t c = 0; c < t->n; c++)
        if (t->shown[c])
            total += t->width[c] + (total ? 2 : 0);
    return total;
}

void texttable_fit(struct texttable *t, const char *const *heads)
{
    unsigned most = 0;
    for (size_t c = 0; c < t->n; c++) {
        t->shown[c] = !t->absent[c] && (t->keep[c] == 0 || t->term_cols == 0);
        most = t->keep[c] > most ? t->keep[c] : most;
    }
    t->narrowed = false;
    t->first_cols = t->width[0];
    t->first_head = t->first_cols / 2;
    if (t->term_cols == 0)
        return;
    /* The columns that may go, the most wanted first, each taken when it still fits - an
     * essential one when it fits with the names cut to TEXTTABLE_NAME_FLOOR columns. */
    size_t floor_cols = textwidth_cols(heads[0]);
    floor_cols = floor_cols > TEXTTABLE_NAME_FLOOR ? floor_cols : TEXTTABLE_NAME_FLOOR;
    size_t name_give = t->width[0] > floor_cols ? t->width[0] - floor_cols : 0;
    for (unsigned keep = most; keep > 0; keep--)
        for (size_t c = 0; c < t->n; c++)
            if (t->keep[c] == keep && !t->absent[c]) {
                size_t give = keep >= TEXTTABLE_ESSENTIAL ? name_give : 0;
                t->shown[c] = total_width(t) + 2 + t->width[c] <= t->term_cols + give;
                t->narrowed |= !t->shown[c];
            }
    /* Still too wide: the names give way, down to the header's width. */
    size_t total = total_width(t), floor = textwidth_cols(heads[0]);
    if (total > t->term_cols) {
        size_t over = total - t->term_cols, name = t->width[0];
        t->first_cols = over < name && name - over > floor ? name - over : floor;
        t->width[0] = t->first_cols;
        t->first_head = t->first_cols / 2;
    }
}

void texttable_choose_cut(struct texttable *t, texttable_name_fn *name, const void *rows, size_t n)
{
    n = n < 1024 ? n : 1024;
    const char **names = malloc(n * sizeof *names);
    if (!names)
        return; /* the middle, as texttable_fit left it */
    for (size_t i = 0; i < n; i++)
        names[i] = name(rows, i);
    t->first_head = textwidth_best_head(names, n, t->first_cols);
    free(names);
}

/* name cut as the first column's cells are, to cols columns (into buf, size bytes). */
static const char *fit_name(const struct texttable *t, const char *name, size_t cols, char *buf,
                            size_t size)
{
    return textwidth_fit_split(name, cols, t->first_head, buf, size);
}

void texttable_put_padded(FILE *out, const char *text, size_t cols, bool left)
{
    size_t have = textwidth_cols(text);
    if (!left)
        for (size_t k = have; k < cols; k++)
            putc(' ', out);
    fputs(text, out);
    if (left)
        for (size_t k = have; k < cols; k++)
            putc(' ', out);
}

void texttable_put_named(const struct texttable *t, FILE *out, const char *name, size_t name_cols,
                         const char *text, size_t width)
{
    char cut[SCENARIO_NAME_BYTES + 4];
    fputs("  ", out);
    texttable_put_padded(out, fit_name(t, name, name_cols, cut, sizeof cut), name_cols, true);
    fputs("  ", out);
    texttable_put_words(out, text, name_cols + 4, name_cols + 4, width);
}

void texttable_line(const struct texttable *t, FILE *out, const char *const *cells)
{
    size_t last = t->n ? t->n - 1 : 0;
    while (last > 0 && !t->shown[last])
        last--;
    bool first = true;
    for (size_t c = 0; c <= last && c < t->n; c++) {
        if (!t->shown[c])
            continue;
        if (!first)
            fputs("  ", out);
        first = false;
        char cut[SCENARIO_NAME_BYTES + 4];
        const char *text =
            c == 0 ? fit_name(t, cells[c], t->first_cols, cut, sizeof cut) : cells[c];
        texttable_put_padded(out, text, c == last ? 0 : t->width[c], t->left[c]);
    }
    putc('\n', out);
}

void texttable_rule(const struct texttable *t, FILE *out)
{
    bool first = true;
    for (size_t c = 0; c < t->n; c++) {
        if (!t->shown[c])
            continue;
        fputs(first ? "" : "  ", out);
        first = false;
        for (size_t k = 0; k < t->width[c]; k++)
            putc('-', out);
    }
    putc('\n', out);
}

void texttable_put_words(FILE *out, const char *text, size_t col, size_t indent, size_t width)
{
    bool line_start = true;
    while (*text) {
        size_t len = strcspn(text, " ");
        char word[1024];
        snprintf(word, sizeof word, "%.*s", (int)len, text);
        size_t cols = textwidth_cols(word);
        if (!line_start && width && col + 1 + cols > width) {
            fprintf(out, "\n%*s", (int)indent, "");
            col = indent;
            line_start = true;
        }
        if (!line_start) {
            putc(' ', out);
            col++;
        }
        fputs(word, out);
        col += cols;
        line_start = false;
        text += len;
        text += strspn(text, " ");
    }
    putc('\n', out);
}
