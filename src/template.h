/*
 * template: the report's template language (SPEC section 5), parsed and checked once.
 *
 * A template is UTF-8 text, read line by line:
 *
 *   % a comment line (the '%' is the first character of the line)
 *   # Heading            a level-1 heading ("## " level 2, "### " level 3)
 *   - item               one item of a bulleted list; indented lines that follow continue it
 *   @chart NAME          a chart that the caller knows by NAME
 *   @table NAME          a table (or box) that the caller knows by NAME
 *   @pagebreak           start a new page
 *   any other text       a paragraph: consecutive lines, ended by a blank line or a block above
 *
 * Headings, items and paragraphs may hold {{placeholder}}s (spaces inside the braces allowed).
 * template_parse() checks every placeholder and every directive against the names the caller
 * knows and reports each problem as "FILE:LINE: ..." with the closest known name; a template with
 * any problem is rejected as a whole, so nothing is drawn from it. template_expand() fills the
 * placeholders of one block's text through the caller's lookup.
 *
 * Ownership: a struct template owns its blocks and their strings; template_release() frees them.
 */
#ifndef MEMFIT_TEMPLATE_H
#define MEMFIT_TEMPLATE_H

#include <stddef.h>

#include "diag.h"

/* Longest template file accepted, in bytes. */
#define TEMPLATE_MAX_BYTES (1u << 20)

enum template_kind {
    TEMPLATE_HEADING,
    TEMPLATE_PARAGRAPH,
    TEMPLATE_ITEM,
    TEMPLATE_CHART,
    TEMPLATE_TABLE,
    TEMPLATE_PAGEBREAK,
};

struct template_block {
    enum template_kind kind;
    int level;          /* heading level 1..3; 0 otherwise */
    char *text;         /* heading, item or paragraph text with its {{placeholders}}; the NAME of
                           a chart or table; NULL for a page break */
    unsigned long line; /* first line of the block in the template */
};

struct template {
    struct template_block *blocks;
    size_t n, cap;
};

/* The names a template may use; each list may be empty. */
struct template_names {
    const char *const *placeholders;
    size_t n_placeholders;
    const char *const *charts;
    size_t n_charts;
    const char *const *tables;
    size_t n_tables;
};

void template_init(struct template *t);
void template_release(struct template *t);

/*
 * Parses text[0..len) named `file` (for messages) into t, checking every name against `names`.
 * Returns 0, or -1 after reporting every problem into d (t is then empty).
 */
int template_parse(struct template *t, const char *file, const char *text, size_t len,
                   const struct template_names *names, struct diag *d);

/* Reads and parses the file at path (at most TEMPLATE_MAX_BYTES). Returns 0 or -1. */
int template_load(struct template *t, const char *path, const struct template_names *names,
                  struct diag *d);

/* Returns the value of placeholder `name` (never NULL for a name the template was checked with). */
typedef const char *template_lookup_fn(void *ctx, const char *name);

/*
 * The text with each {{name}} replaced by lookup(ctx, name), as a new string the caller frees;
 * NULL when out of memory.
 */
char *template_expand(const char *text, template_lookup_fn *lookup, void *ctx);

#endif
