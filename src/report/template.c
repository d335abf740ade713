/* template: see template.h. */
#include "report/template.h"

#include "base/infile.h"
#include "base/strbuf.h"
#include "base/suggest.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEMPLATE_NAME_MAX 64

void template_error(struct template_errors *e, unsigned long line, const char *fmt, ...)
{
    if (e->count++ >= TEMPLATE_ERRORS_SHOWN)
        return;
    char msg[DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_report(e->d, e->file, line, "%s", msg);
}

void template_errors_end(const struct template_errors *e)
{
    if (e->count > TEMPLATE_ERRORS_SHOWN) {
        unsigned long more = e->count - TEMPLATE_ERRORS_SHOWN;
        diag_report(e->d, NULL, 0, "... and %lu more error%s in %s", more, more == 1 ? "" : "s",
                    e->file);
    }
}

void template_init(struct template *t)
{
    memset(t, 0, sizeof *t);
}

void template_release(struct template *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->blocks[i].text);
    free(t->blocks);
    template_init(t);
}

/*
 * Finds the next "{{" in p. Returns 0 when there is none, 1 with the trimmed name in
 * [*name, *name + *name_len) and *open / *after around the braces, -1 when the braces do not close
 * on this text.
 */
static int template_next(const char *p, const char **open, const char **name, size_t *name_len,
                         const char **after)
{
    const char *o = strstr(p, "{{");
    if (!o)
        return 0;
    const char *c = strstr(o + 2, "}}");
    const char *nl = strchr(o + 2, '\n');
    if (!c || (nl && nl < c))
        return -1;
    const char *s = o + 2, *e = c;
    while (s < e && *s == ' ')
        s++;
    while (e > s && e[-1] == ' ')
        e--;
    *open = o;
    *name = s;
    *name_len = (size_t)(e - s);
    *after = c + 2;
    return 1;
}

static bool template_name_ok(const char *s, size_t n)
{
    if (n == 0 || n > TEMPLATE_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '.'))
            return false;
    }
    return true;
}

/* The known name closest to s[0..n) (NULL when none is a plausible typo), via suggest. */
static const char *template_closest(const char *s, size_t n, const char *const *known, size_t nk)
{
    char word[TEMPLATE_NAME_MAX + 1];
    if (n > TEMPLATE_NAME_MAX)
        return NULL;
    memcpy(word, s, n);
    word[n] = '\0';
    return suggest_closest(word, known, nk);
}

static bool template_known(const char *s, size_t n, const char *const *known, size_t nk)
{
    for (size_t i = 0; i < nk; i++)
        if (strlen(known[i]) == n && memcmp(known[i], s, n) == 0)
            return true;
    return false;
}

/* names[0..n) joined by ", ", each wrapped in pre and post, into buf. */
static void template_join(char *buf, size_t size, const char *const *names, size_t n,
                          const char *pre, const char *post)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < size; i++) {
        int w = snprintf(buf + used, size - used, "%s%s%s%s", i ? ", " : "", pre, names[i], post);
        used += w > 0 ? (size_t)w : 0;
    }
}

/* Up to this many known names, an unknown one's message lists them all. */
#define TEMPLATE_LIST_ALL 8

/*
 * Reports "unknown WHAT 'NAME'" with help: the known name it is a typo of; else all the known
 * names when they are few (none: nothing more) (charts, tables, directives); else the three closest
 * and where the whole list is. `pre`/`post` wrap names, e.g. "{{" "}}".
 */
static void template_unknown(struct template_errors *e, unsigned long line, const char *what,
                             const char *pre, const char *post, const char *s, size_t n,
                             const char *const *known, size_t nk)
{
    if (e->count >= TEMPLATE_ERRORS_SHOWN) { /* only counted: no need of the closest names */
        e->count++;
        return;
    }
    int len = n > 80 ? 80 : (int)n;
    const char *close = template_closest(s, n, known, nk);
    char list[256];
    if (close) {
        template_error(e, line, "unknown %s '%s%.*s%s' (did you mean '%s%s%s'?)", what, pre, len, s,
                       post, pre, close, post);
    } else if (nk == 0) {
        template_error(e, line, "unknown %s '%s%.*s%s'", what, pre, len, s, post);
    } else if (nk <= TEMPLATE_LIST_ALL) {
        template_join(list, sizeof list, known, nk, pre, post);
        template_error(e, line, "unknown %s '%s%.*s%s' (valid: %s)", what, pre, len, s, post, list);
    } else {
        char word[TEMPLATE_NAME_MAX + 1];
        const char *near[3];
        snprintf(word, sizeof word, "%.*s", len, s);
        size_t m = suggest_nearest(word, known, nk, near, 3);
        template_join(list, sizeof list, near, m, pre, post);
        const char *all = strcmp(what, "placeholder") == 0 ? "; 'memfit help report' lists all"
                          : strcmp(what, "phrase") == 0    ? "; templates/phrases.tmpl has all"
                                                           : "";
        template_error(e, line, "unknown %s '%s%.*s%s' (closest: %s%s)", what, pre, len, s, post,
                       list, all);
    }
}

/* Checks every placeholder of one line against known[0..nk), into e. A placeholder that comes
 * again on the line is not reported again (its message would be the same). */
static void template_check_line(const char *line, unsigned long lineno, const char *const *known,
                                size_t nk, struct template_errors *e)
{
    /* The placeholders reported on this line: at most TEMPLATE_ERRORS_SHOWN are reported in all
     * (past them every problem is only counted, as it comes). */
    const char *said[TEMPLATE_ERRORS_SHOWN];
    size_t said_len[TEMPLATE_ERRORS_SHOWN], n_said = 0;
    const char *p = line, *open, *name, *after;
    size_t n;
    int r;
    for (; (r = template_next(p, &open, &name, &n, &after)) != 0; p = after) {
        if (r < 0) {
            template_error(e, lineno, "unclosed placeholder: '{{' without '}}'");
            return;
        }
        bool bad = !template_name_ok(name, n);
        if (!bad && template_known(name, n, known, nk))
            continue;
        const char *key = bad ? open : name; /* a bad one as written, braces and all */
        size_t kn = bad ? (size_t)(after - open) : n, k = 0;
        while (k < n_said && !(said_len[k] == kn && memcmp(said[k], key, kn) == 0))
            k++;
        if (k < n_said)
            continue;
        if (e->count < TEMPLATE_ERRORS_SHOWN) {
            said[n_said] = key;
            said_len[n_said++] = kn;
        }
        if (bad)
            template_error(e, lineno, "bad placeholder '%.*s'", kn > 80 ? 80 : (int)kn, open);
        else
            template_unknown(e, lineno, "placeholder", "{{", "}}", name, n, known, nk);
    }
}

/* True when s[0..n) is well-formed UTF-8 without NUL or control characters other than tab. */
static bool template_utf8_ok(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        size_t more;
        unsigned long cp;
        if (c < 0x80) {
            if ((c < 0x20 && c != '\t') || c == 0x7F)
                return false;
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            more = 1;
            cp = c & 0x1Fu;
        } else if (c >= 0xE0 && c <= 0xEF) {
            more = 2;
            cp = c & 0x0Fu;
        } else if (c >= 0xF0 && c <= 0xF4) {
            more = 3;
            cp = c & 0x07u;
        } else {
            return false;
        }
        if (i + more >= n)
            return false; /* the sequence is cut short */
        for (size_t k = 1; k <= more; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + k] & 0x3Fu);
        }
        if ((more == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (more == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return false;
        i += more + 1;
    }
    return true;
}

/* The longest list of a phrase's own placeholders (struct template_phrase), in bytes. */
#define TEMPLATE_PHRASE_NAMES_MAX 512

/*
 * Parser state: the block being gathered (a paragraph, an item or a phrase) and the error count.
 * While a phrase is open, `allowed` holds the names its text may use: its own (in `own`, split
 * from template_phrase.placeholders) and, for a scoped phrase, phrases->scope.
 */
struct template_parser {
    struct template *t;
    const struct template_names *names;
    const struct template_phrases *phrases; /* never NULL */
    struct template_errors err;             /* the file's problems: any rejects the template */
    struct strbuf text;
    enum template_kind kind; /* TEMPLATE_PARAGRAPH or TEMPLATE_ITEM while text.len > 0 */
    unsigned long line;
    bool in_phrase;   /* a phrase is open (its text may be empty so far) */
    bool skip_phrase; /* a bad '@phrase' line: its text is skipped, not checked */
    size_t phrase;    /* its index in phrases->list */
    const char **allowed;
    size_t n_allowed;
    char own[TEMPLATE_PHRASE_NAMES_MAX];
    bool oom;
};

static int template_push(struct template_parser *ps, enum template_kind kind, int level,
                         const char *text, size_t n, unsigned long line)
{
    struct template *t = ps->t;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        struct template_block *b = realloc(t->blocks, cap * sizeof *b);
        if (!b)
            return -1;
        t->blocks = b;
        t->cap = cap;
    }
    char *copy = NULL;
    if (text) {
        copy = malloc(n + 1);
        if (!copy)
            return -1;
        memcpy(copy, text, n);
        copy[n] = '\0';
    }
    t->blocks[t->n++] = (struct template_block){kind, level, copy, line, 0};
    return 0;
}

/* Ends the phrase being gathered: checks its cells and keeps it (text may be empty). */
static void template_flush_phrase(struct template_parser *ps)
{
    const struct template_phrase *def = &ps->phrases->list[ps->phrase];
    const char *text = ps->text.len ? ps->text.buf : "";
    ps->in_phrase = false;
    free(ps->allowed);
    ps->allowed = NULL;
    ps->n_allowed = 0;
    if (def->cells > 0) {
        unsigned cells = 1;
        for (const char *c = text; *c; c++)
            cells += *c == '|';
        if (cells != def->cells)
            template_error(&ps->err, ps->line,
                           "phrase '%s' has %u cell%s, needs %u (separated by '|')", def->name,
                           cells, cells == 1 ? "" : "s", def->cells);
    }
    if (template_push(ps, TEMPLATE_PHRASE, 0, text, strlen(text), ps->line) != 0)
        ps->oom = true;
    else
        ps->t->blocks[ps->t->n - 1].phrase = ps->phrase;
    strbuf_reset(&ps->text);
}

/* Ends the paragraph, item or phrase being gathered, if any. */
static void template_flush(struct template_parser *ps)
{
    ps->skip_phrase = false;
    if (ps->in_phrase) {
        template_flush_phrase(ps);
        return;
    }
    if (ps->text.len == 0)
        return;
    if (template_push(ps, ps->kind, 0, ps->text.buf, ps->text.len, ps->line) != 0)
        ps->oom = true;
    strbuf_reset(&ps->text);
}

/* Adds a line of text to the paragraph or item being gathered (a new one when kind differs). */
static void template_gather(struct template_parser *ps, enum template_kind kind, bool start,
                            const char *s, size_t n, unsigned long line)
{
    if (start || ps->kind != kind)
        template_flush(ps);
    if (ps->text.len == 0) {
        ps->kind = kind;
        ps->line = line;
    } else if (strbuf_append(&ps->text, " ", 1) != 0) {
        ps->oom = true;
    }
    if (strbuf_append(&ps->text, s, n) != 0)
        ps->oom = true;
}

static const char *const template_directives[] = {"chart", "table", "pagebreak", "phrase"};

/* The names phrase i may use, into ps->allowed (see struct template_parser). */
static int template_phrase_names(struct template_parser *ps, size_t i)
{
    const struct template_phrase *def = &ps->phrases->list[i];
    size_t own = 0, len = strlen(def->placeholders);
    if (len >= sizeof ps->own)
        return -1;
    memcpy(ps->own, def->placeholders, len + 1);
    for (size_t k = 0; k < len; k++)
        own += ps->own[k] != ' ' && (k == 0 || ps->own[k - 1] == ' ');
    size_t scope = def->scoped ? ps->phrases->n_scope : 0;
    ps->allowed = malloc((own + scope + 1) * sizeof *ps->allowed);
    if (!ps->allowed)
        return -1;
    ps->n_allowed = 0;
    for (size_t k = 0; k < len; k++) {
        if (ps->own[k] == ' ')
            ps->own[k] = '\0';
        else if (k == 0 || ps->own[k - 1] == '\0')
            ps->allowed[ps->n_allowed++] = ps->own + k;
    }
    for (size_t k = 0; k < scope; k++)
        ps->allowed[ps->n_allowed++] = ps->phrases->scope[k];
    return 0;
}

/* "@phrase NAME": opens phrase NAME, whose text follows on the next lines. */
static void template_phrase_start(struct template_parser *ps, const char *arg, size_t an,
                                  unsigned long line)
{
    size_t wn = 0;
    while (wn < an && arg[wn] != ' ' && arg[wn] != '\t')
        wn++;
    const struct template_phrase *defs = ps->phrases->list;
    size_t nd = ps->phrases->n, i = 0;
    ps->skip_phrase = true; /* until the phrase is known to be good */
    if (an == 0) {
        template_error(&ps->err, line, "'@phrase' needs a name");
        return;
    }
    if (wn < an) {
        template_error(&ps->err, line, "'@phrase %.*s': the phrase's text goes on the lines below",
                       (int)wn, arg);
        return;
    }
    while (i < nd && !(strlen(defs[i].name) == wn && memcmp(defs[i].name, arg, wn) == 0))
        i++;
    if (i == nd) {
        const char **known = malloc((nd + 1) * sizeof *known);
        if (!known) {
            ps->oom = true;
            return;
        }
        for (size_t k = 0; k < nd; k++)
            known[k] = defs[k].name;
        template_unknown(&ps->err, line, "phrase", "", "", arg, wn, known, nd);
        free(known);
        return;
    }
    for (size_t b = 0; b < ps->t->n; b++) {
        if (ps->t->blocks[b].kind == TEMPLATE_PHRASE && ps->t->blocks[b].phrase == i) {
            template_error(&ps->err, line, "phrase '%s' defined twice (first on line %lu)",
                           defs[i].name, ps->t->blocks[b].line);
            return;
        }
    }
    if (template_phrase_names(ps, i) != 0) {
        ps->oom = true;
        return;
    }
    ps->skip_phrase = false;
    ps->in_phrase = true;
    ps->phrase = i;
    ps->line = line;
}

static void template_directive(struct template_parser *ps, const char *s, size_t n,
                               unsigned long line)
{
    const char *word = s + 1, *end = s + n;
    const char *w = word;
    while (w < end && *w != ' ' && *w != '\t')
        w++;
    size_t wn = (size_t)(w - word);
    const char *arg = w;
    while (arg < end && (*arg == ' ' || *arg == '\t'))
        arg++;
    const char *arg_end = end;
    while (arg_end > arg && (arg_end[-1] == ' ' || arg_end[-1] == '\t'))
        arg_end--;
    size_t an = (size_t)(arg_end - arg);
    template_flush(ps);
    if (wn == 9 && memcmp(word, "pagebreak", 9) == 0) {
        if (an)
            template_error(&ps->err, line, "'@pagebreak' takes no argument");
        else if (template_push(ps, TEMPLATE_PAGEBREAK, 0, NULL, 0, line) != 0)
            ps->oom = true;
        return;
    }
    if (wn == 6 && memcmp(word, "phrase", 6) == 0) {
        template_phrase_start(ps, arg, an, line);
        return;
    }
    bool chart = wn == 5 && memcmp(word, "chart", 5) == 0;
    bool table = wn == 5 && memcmp(word, "table", 5) == 0;
    if (!chart && !table) {
        template_unknown(&ps->err, line, "directive", "@", "", word, wn, template_directives,
                         sizeof template_directives / sizeof *template_directives);
        return;
    }
    const char *what = chart ? "chart" : "table";
    const char *const *known = chart ? ps->names->charts : ps->names->tables;
    size_t nk = chart ? ps->names->n_charts : ps->names->n_tables;
    if (an == 0)
        template_error(&ps->err, line, "'@%s' needs a name", what);
    else if (!template_known(arg, an, known, nk))
        template_unknown(&ps->err, line, what, "", "", arg, an, known, nk);
    else if (template_push(ps, chart ? TEMPLATE_CHART : TEMPLATE_TABLE, 0, arg, an, line) != 0) {
        ps->oom = true;
    }
}

/* Checks the placeholders of one line on their own, so a message points at the right line: a
 * phrase's against its own names, any other line's against the template's. */
static void template_check_placeholders(struct template_parser *ps, const char *s, size_t n,
                                        unsigned long line)
{
    char *copy = malloc(n + 1);
    if (!copy) {
        ps->oom = true;
        return;
    }
    memcpy(copy, s, n);
    copy[n] = '\0';
    if (ps->in_phrase)
        template_check_line(copy, line, ps->allowed, ps->n_allowed, &ps->err);
    else
        template_check_line(copy, line, ps->names->placeholders, ps->names->n_placeholders,
                            &ps->err);
    free(copy);
}

/* Adds a line of a phrase's text, its blanks at both ends dropped. */
static void template_phrase_line(struct template_parser *ps, const char *s, size_t n,
                                 unsigned long line)
{
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    template_check_placeholders(ps, s, n, line);
    if (ps->text.len > 0 && strbuf_append(&ps->text, " ", 1) != 0)
        ps->oom = true;
    if (strbuf_append(&ps->text, s, n) != 0)
        ps->oom = true;
}

/* "# Title" to "### Title": a heading block. False when the line is not a heading. */
static bool template_heading(struct template_parser *ps, const char *s, size_t n,
                             unsigned long line)
{
    int level = 0;
    while ((size_t)level < n && s[level] == '#')
        level++;
    if (level == 0 || (size_t)level >= n || s[level] != ' ')
        return false;
    if (level > 3) {
        template_error(&ps->err, line, "heading level %d: at most '###'", level);
        return true;
    }
    template_flush(ps);
    const char *h = s + level + 1;
    size_t hn = n - (size_t)level - 1;
    while (hn && *h == ' ') {
        h++;
        hn--;
    }
    if (template_push(ps, TEMPLATE_HEADING, level, h, hn, line) != 0)
        ps->oom = true;
    return true;
}

static void template_line(struct template_parser *ps, const char *s, size_t n, unsigned long line)
{
    if (n && s[n - 1] == '\r')
        n--;
    if (!template_utf8_ok((const unsigned char *)s, n)) {
        template_error(&ps->err, line, "not UTF-8 text (or a control character)");
        return;
    }
    if (n && s[0] == '%')
        return;
    size_t lead = 0;
    while (lead < n && (s[lead] == ' ' || s[lead] == '\t'))
        lead++;
    if (lead == n) {
        template_flush(ps);
        return;
    }
    if (s[0] == '@') {
        /* A phrase ends here. The directive's words are names, never expanded: a '{{' among them
         * is the directive's problem, said once there, not also an unknown placeholder. */
        template_flush(ps);
        template_directive(ps, s, n, line);
        return;
    }
    if (ps->skip_phrase)
        return;
    if (ps->in_phrase) {
        template_phrase_line(ps, s + lead, n - lead, line);
        return;
    }
    template_check_placeholders(ps, s, n, line);
    if (ps->oom)
        return;
    if (template_heading(ps, s, n, line))
        return;
    if (n >= 2 && s[0] == '-' && s[1] == ' ') {
        template_gather(ps, TEMPLATE_ITEM, true, s + 2, n - 2, line);
        return;
    }
    if (lead > 0 && ps->text.len > 0 && ps->kind == TEMPLATE_ITEM) {
        template_gather(ps, TEMPLATE_ITEM, false, s + lead, n - lead, line);
        return;
    }
    template_gather(ps, TEMPLATE_PARAGRAPH, false, s + lead, n - lead, line);
}

int template_parse_with_phrases(struct template *t, const char *file, const char *text, size_t len,
                                const struct template_names *names,
                                const struct template_phrases *phrases, struct diag *d)
{
    static const struct template_phrases none = {NULL, 0, NULL, 0};
    template_init(t);
    struct template_parser ps = {
        .t = t, .names = names, .phrases = phrases ? phrases : &none, .err = {d, file, 0}};
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        len -= 3;
    }
    unsigned long line = 1;
    for (size_t i = 0; i < len && !ps.oom; line++) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) : len;
        template_line(&ps, text + i, end - i, line);
        i = end + 1;
    }
    template_flush(&ps);
    strbuf_release(&ps.text);
    free(ps.allowed);
    template_errors_end(&ps.err);
    if (ps.oom)
        diag_report(d, file, 0, "out of memory");
    if (ps.err.count || ps.oom) {
        template_release(t);
        return -1;
    }
    return 0;
}

int template_parse(struct template *t, const char *file, const char *text, size_t len,
                   const struct template_names *names, struct diag *d)
{
    return template_parse_with_phrases(t, file, text, len, names, NULL, d);
}

int template_load_with_phrases(struct template *t, const char *path,
                               const struct template_names *names,
                               const struct template_phrases *phrases, struct diag *d)
{
    template_init(t);
    if (strcmp(path, "-") == 0) {
        diag_report(d, NULL, 0,
                    "cannot read '-': a template is read from a file (standard input is for the "
                    "scenarios)");
        return -1;
    }
    char why[128];
    FILE *f = infile_open(path, why, sizeof why);
    if (!f) {
        diag_report(d, NULL, 0, "cannot read '%s': %s", path, why);
        return -1;
    }
    char *buf = malloc(TEMPLATE_MAX_BYTES + 1);
    if (!buf) {
        fclose(f);
        diag_report(d, path, 0, "out of memory");
        return -1;
    }
    size_t n = fread(buf, 1, TEMPLATE_MAX_BYTES + 1, f);
    int bad = ferror(f);
    fclose(f);
    int rc = -1;
    if (bad)
        diag_report(d, NULL, 0, "cannot read '%s': %s", path, strerror(EIO));
    else if (n > TEMPLATE_MAX_BYTES)
        diag_report(d, path, 0, "template larger than %u bytes", TEMPLATE_MAX_BYTES);
    else
        rc = template_parse_with_phrases(t, path, buf, n, names, phrases, d);
    free(buf);
    return rc;
}

int template_load(struct template *t, const char *path, const struct template_names *names,
                  struct diag *d)
{
    return template_load_with_phrases(t, path, names, NULL, d);
}

int template_expand_to(struct strbuf *out, const char *text, template_lookup_fn *lookup, void *ctx)
{
    const char *p = text, *open, *name, *after;
    size_t n;
    int r;
    while ((r = template_next(p, &open, &name, &n, &after)) > 0) {
        char key[TEMPLATE_NAME_MAX + 1];
        size_t kn = n > TEMPLATE_NAME_MAX ? TEMPLATE_NAME_MAX : n;
        memcpy(key, name, kn);
        key[kn] = '\0';
        const char *value = lookup(ctx, key);
        if (!value)
            value = "?";
        strbuf_append(out, p, (size_t)(open - p));
        strbuf_puts(out, value);
        p = after;
    }
    strbuf_puts(out, p);
    return (int)out->err;
}

char *template_expand(const char *text, template_lookup_fn *lookup, void *ctx)
{
    struct strbuf out;
    strbuf_init(&out);
    template_expand_to(&out, text, lookup, ctx);
    return strbuf_detach(&out, NULL);
}
