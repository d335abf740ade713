/*
 * template: the report's template language, parsed and checked once.
 *
 * A template is UTF-8 text, read line by line:
 *
 *   % a comment line (the '%' is the first character of the line)
 *   # Heading            a level-1 heading ("## " level 2, "### " level 3)
 *   - item               one item of a bulleted list; indented lines that follow continue it
 *   @chart NAME          a chart that the caller knows by NAME
 *   @table NAME          a table (or box) that the caller knows by NAME
 *   @pagebreak           start a new page
 *   @phrase NAME         a phrase the caller knows by NAME: its text is the lines below, up to a
 *                        blank line or the next '@' line, joined by single spaces, each line's
 *                        leading and trailing blanks dropped (so a phrase may be empty)
 *   any other text       a paragraph: consecutive lines, ended by a blank line or a block above
 *
 * Headings, items, paragraphs and phrases may hold {{placeholder}}s (spaces inside the braces
 * allowed). A phrase's placeholders are its own, not the template's: the caller lists for each
 * phrase the names it fills (struct template_phrase). A phrase with cells is a table row whose
 * cells are separated by '|', and must have exactly that many. A phrase is defined at most once
 * in a template; the caller decides what a definition replaces.
 *
 * template_parse_with_phrases() checks every placeholder, directive and phrase against the names
 * the caller knows and reports each problem once as "FILE:LINE: ..." with the closest known name
 * (the first TEMPLATE_ERRORS_SHOWN of a file, then one line saying how many more); a template
 * with any problem is rejected as a whole, so nothing is drawn from it.
 * template_expand() fills the placeholders of one block's text through the caller's lookup.
 *
 * Ownership: a struct template owns its blocks and their strings; template_release() frees them.
 */
#ifndef MEMFIT_TEMPLATE_H
#define MEMFIT_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/diag.h"
#include "base/strbuf.h"

/* Longest template file accepted, in bytes. */
#define TEMPLATE_MAX_BYTES (1u << 20)

enum template_kind {
    TEMPLATE_HEADING,
    TEMPLATE_PARAGRAPH,
    TEMPLATE_ITEM,
    TEMPLATE_CHART,
    TEMPLATE_TABLE,
    TEMPLATE_PAGEBREAK,
    TEMPLATE_PHRASE,
};

struct template_block {
    enum template_kind kind;
    int level;          /* heading level 1..3; 0 otherwise */
    char *text;         /* heading, item, paragraph or phrase text with its {{placeholders}}
                           (a phrase's may be ""); the NAME of a chart or table; NULL for a page
                           break */
    unsigned long line; /* first line of the block in the template (a phrase's '@phrase' line) */
    size_t phrase;      /* TEMPLATE_PHRASE: its index in template_phrases.list; 0 otherwise */
};

struct template
{
    struct template_block *blocks;
    size_t n, cap;
};

/* The names a template may use; each list may be empty. */
struct template_names {
    const char *const *placeholders; /* of headings, items and paragraphs */
    size_t n_placeholders;
    const char *const *charts;
    size_t n_charts;
    const char *const *tables;
    size_t n_tables;
};

/* A phrase a template may define with '@phrase NAME'. */
struct template_phrase {
    const char *name;
    const char *placeholders; /* the names its text may use, separated by spaces ("": none;
                                 at most 511 bytes) */
    bool scoped;              /* it may also use every name of template_phrases.scope */
    unsigned cells;           /* > 0: a table row of exactly this many cells separated by '|' */
};

/* The phrases a template may define; both lists may be empty. */
struct template_phrases {
    const struct template_phrase *list;
    size_t n;
    const char *const *scope; /* the names a scoped phrase may use besides its own */
    size_t n_scope;
};

/* The problems of one file said one by one; the rest are counted, and one line says how many
 * ("... and 80 more errors in FILE"): a file of errors (a binary, the wrong file) says enough in
 * a screenful. */
#define TEMPLATE_ERRORS_SHOWN 20

/* One file's problems as they are reported (the parser's, and those its callers find in what
 * it parsed, such as report_phrases' missing phrases). */
struct template_errors {
    struct diag *d;
    const char *file;
    unsigned long count; /* found so far, said or not */
};

/* Counts one problem at line (0: the whole file's) of e->file, and reports it into e->d while
 * fewer than TEMPLATE_ERRORS_SHOWN were. */
void template_error(struct template_errors *e, unsigned long line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Reports how many problems were not said, if any; once, after the last template_error. */
void template_errors_end(const struct template_errors *e);

void template_init(struct template *t);
void template_release(struct template *t);

/*
 * Parses text[0..len) named `file` (for messages) into t, checking every name against `names`
 * and every '@phrase' against `phrases` (NULL: none may be defined). Returns 0, or -1 after
 * reporting every problem into d (t is then empty).
 */
int template_parse_with_phrases(struct template *t, const char *file, const char *text, size_t len,
                                const struct template_names *names,
                                const struct template_phrases *phrases, struct diag *d);

/* template_parse_with_phrases without phrases. */
int template_parse(struct template *t, const char *file, const char *text, size_t len,
                   const struct template_names *names, struct diag *d);

/* Reads and parses the file at path (at most TEMPLATE_MAX_BYTES). Returns 0 or -1. */
int template_load_with_phrases(struct template *t, const char *path,
                               const struct template_names *names,
                               const struct template_phrases *phrases, struct diag *d);
int template_load(struct template *t, const char *path, const struct template_names *names,
                  struct diag *d);

/* Returns the value of placeholder `name` (never NULL for a name the template was checked with). */
typedef const char *template_lookup_fn(void *ctx, const char *name);

/*
 * The text with each {{name}} replaced by lookup(ctx, name) ("?" where it returns NULL), as a
 * new string the caller frees; NULL when out of memory.
 */
char *template_expand(const char *text, template_lookup_fn *lookup, void *ctx);

/* The same, appended to out (a growing or a fixed strbuf). Returns out's error (0: none). */
int template_expand_to(struct strbuf *out, const char *text, template_lookup_fn *lookup, void *ctx);

#endif
