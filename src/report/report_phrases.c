/* report_phrases: see report_phrases.h. */
#include "report/report_phrases.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"
#include "report/report_placeholders.h"

#define REPORT_PHRASE_DEF(id, name, own, scoped, cells) {name, own, scoped, cells},
static const struct template_phrase report_phrase_defs[] = {REPORT_PHRASES(REPORT_PHRASE_DEF)};
#undef REPORT_PHRASE_DEF

_Static_assert(sizeof report_phrase_defs / sizeof *report_phrase_defs == REPORT_PHRASE_COUNT,
               "one definition per phrase");

const struct template_phrase *report_phrases_defs(size_t *n)
{
    *n = REPORT_PHRASE_COUNT;
    return report_phrase_defs;
}

void report_phrases_known(struct template_phrases *known)
{
    known->list = report_phrase_defs;
    known->n = REPORT_PHRASE_COUNT;
    known->scope = report_placeholders_names(&known->n_scope);
}

void report_phrases_init(struct report_phrases *ph)
{
    memset(ph, 0, sizeof *ph);
    template_init(&ph->shipped);
}

void report_phrases_release(struct report_phrases *ph)
{
    if (!ph)
        return;
    template_release(&ph->shipped);
    report_phrases_init(ph);
}

void report_phrases_override(struct report_phrases *ph, const struct template *t)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->blocks[i].kind == TEMPLATE_PHRASE && t->blocks[i].phrase < REPORT_PHRASE_COUNT)
            ph->text[t->blocks[i].phrase] = t->blocks[i].text;
}

/* A catalogue holds phrases only, each of them: the rest is reported (as many as a template's
 * problems, then how many more). Returns the problems. */
static unsigned long report_phrases_check(const struct report_phrases *ph, const char *file,
                                          struct diag *d)
{
    struct template_errors e = {d, file, 0};
    for (size_t i = 0; i < ph->shipped.n; i++)
        if (ph->shipped.blocks[i].kind != TEMPLATE_PHRASE)
            template_error(&e, ph->shipped.blocks[i].line,
                           "text outside a phrase (a phrase ends at a blank line)");
    for (size_t i = 0; i < REPORT_PHRASE_COUNT; i++)
        if (!ph->text[i])
            template_error(&e, 0, "phrase '%s' is missing", report_phrase_defs[i].name);
    template_errors_end(&e);
    return e.count;
}

int report_phrases_parse(struct report_phrases *ph, const char *file, const char *text, size_t len,
                         struct diag *d)
{
    report_phrases_release(ph);
    struct template_names names;
    struct template_phrases known;
    memset(&names, 0, sizeof names);
    report_phrases_known(&known);
    if (template_parse_with_phrases(&ph->shipped, file, text, len, &names, &known, d) != 0)
        return -1;
    report_phrases_override(ph, &ph->shipped);
    if (report_phrases_check(ph, file, d) != 0) {
        report_phrases_release(ph);
        return -1;
    }
    return 0;
}

int report_phrases_load(struct report_phrases *ph, const char *path, struct diag *d)
{
    report_phrases_release(ph);
    struct template_names names;
    struct template_phrases known;
    memset(&names, 0, sizeof names);
    report_phrases_known(&known);
    if (template_load_with_phrases(&ph->shipped, path, &names, &known, d) != 0)
        return -1;
    report_phrases_override(ph, &ph->shipped);
    if (report_phrases_check(ph, path, d) != 0) {
        report_phrases_release(ph);
        return -1;
    }
    return 0;
}

#define REPORT_SAY_ARGS 10

/* What one expansion may read: the (name, value) pairs C gave, and the scenario's values. */
struct report_say_ctx {
    struct report_phrases *ph;
    enum report_phrase id;
    const char *names[REPORT_SAY_ARGS], *values[REPORT_SAY_ARGS];
    size_t n;
    const struct report_values *vals; /* NULL unless the phrase is scoped */
};

static const char *report_say_lookup(void *ctx, const char *name)
{
    struct report_say_ctx *c = ctx;
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->names[i], name) == 0)
            return c->values[i];
    const char *v = c->vals ? report_placeholders_lookup((void *)c->vals, name) : NULL;
    if (!v && c->ph->misses++ == 0)
        snprintf(c->ph->first_miss, sizeof c->ph->first_miss,
                 "phrase '%s' has no value for '{{%s}}'", report_phrase_defs[c->id].name, name);
    return v;
}

/* Expands text (a phrase's, or one of its cells) into buf[0..size). */
static void report_say_text(char *buf, size_t size, const char *text, struct report_say_ctx *c)
{
    struct strbuf sb;
    strbuf_init_fixed(&sb, buf, size);
    template_expand_to(&sb, text ? text : "", report_say_lookup, c);
}

void report_say(char *buf, size_t size, struct report_phrases *ph, const struct report_values *vals,
                enum report_phrase id, ...)
{
    struct report_say_ctx c = {.ph = ph, .id = id};
    c.vals = report_phrase_defs[id].scoped ? vals : NULL;
    va_list ap;
    va_start(ap, id);
    const char *name;
    while ((name = va_arg(ap, const char *)) != NULL && c.n < REPORT_SAY_ARGS) {
        c.names[c.n] = name;
        c.values[c.n++] = va_arg(ap, const char *);
    }
    va_end(ap);
    report_say_text(buf, size, ph->text[id], &c);
}

void report_cells(struct report_phrases *ph, const struct report_values *vals,
                  enum report_phrase id, char (*cells)[REPORT_CELL_MAX], size_t n)
{
    struct report_say_ctx c = {.ph = ph, .id = id};
    c.vals = report_phrase_defs[id].scoped ? vals : NULL;
    const char *p = ph->text[id] ? ph->text[id] : "";
    for (size_t i = 0; i < n; i++) {
        size_t len = strcspn(p, "|");
        const char *s = p, *e = p + len;
        while (s < e && *s == ' ')
            s++;
        while (e > s && e[-1] == ' ')
            e--;
        char cell[REPORT_VALUE_MAX];
        struct strbuf sb;
        strbuf_init_fixed(&sb, cell, sizeof cell);
        strbuf_append(&sb, s, (size_t)(e - s));
        report_say_text(cells[i], REPORT_CELL_MAX, cell, &c);
        p += len + (p[len] == '|');
    }
}
