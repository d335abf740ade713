/* csvin: see csvin.h. */
#include "input/csvin.h"

#include <csv.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct field_buf {
    char *data;
    size_t cap;
};

struct csvin {
    FILE *in;
    const char *name;
    struct diag *diag;
    struct csv_parser parser;
    char *line; /* getline buffer */
    size_t line_cap;
    unsigned long line_no;  /* physical lines read so far */
    unsigned long rec_line; /* where the record being parsed started */
    struct field_buf *bufs; /* one buffer per field of the current record, reused */
    char **fields;          /* into bufs (quoted records) or into line (plain lines) */
    size_t *lengths;
    size_t n_fields, cap_fields;
    size_t nul_field; /* see csvin_record */
    bool record_done, oom, eof;
    bool in_record; /* a record started on an earlier line is still open (quoted newline) */
};

/* Doubles the field arrays; false (and oom set) when out of memory. */
static bool fields_grow(struct csvin *r)
{
    size_t cap = r->cap_fields ? 2 * r->cap_fields : 32;
    struct field_buf *bufs = realloc(r->bufs, cap * sizeof *bufs);
    if (bufs)
        r->bufs = bufs;
    char **fields = bufs ? realloc(r->fields, cap * sizeof *fields) : NULL;
    if (fields)
        r->fields = fields;
    size_t *lengths = fields ? realloc(r->lengths, cap * sizeof *lengths) : NULL;
    if (!lengths) {
        r->oom = true;
        return false;
    }
    r->lengths = lengths;
    memset(r->bufs + r->cap_fields, 0, (cap - r->cap_fields) * sizeof *bufs);
    r->cap_fields = cap;
    return true;
}

/* Room for one more field; false when out of memory. Split from fields_grow so that this, called
 * for every field, is inlined. */
static inline bool field_room(struct csvin *r)
{
    return !r->oom && (r->n_fields < r->cap_fields || fields_grow(r));
}

/* libcsv's field callback: the field is copied into a buffer of the reader. */
static void on_field(void *data, size_t len, void *ctx)
{
    struct csvin *r = ctx;
    if (!field_room(r))
        return;
    struct field_buf *b = &r->bufs[r->n_fields];
    if (b->cap < len + 1) {
        char *p = realloc(b->data, len + 1);
        if (!p) {
            r->oom = true;
            return;
        }
        b->data = p;
        b->cap = len + 1;
    }
    if (len)
        memcpy(b->data, data, len);
    b->data[len] = '\0';
    r->lengths[r->n_fields] = strlen(b->data); /* a NUL byte in the input ends the string */
    if (r->lengths[r->n_fields] != len && !r->nul_field)
        r->nul_field = r->n_fields + 1;
    r->fields[r->n_fields++] = b->data;
}

static void on_record(int terminator, void *ctx)
{
    (void)terminator;
    struct csvin *r = ctx;
    r->record_done = true;
}

static int parser_init(struct csvin *r)
{
    if (csv_init(&r->parser, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0)
        return -1;
    return 0;
}

struct csvin *csvin_new(FILE *f, const char *name, struct diag *d)
{
    struct csvin *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->in = f;
    r->name = name;
    r->diag = d;
    if (parser_init(r) != 0) {
        free(r);
        return NULL;
    }
    return r;
}

/* Drops the record in progress and restarts the parser at the next physical line. */
static void resync(struct csvin *r)
{
    csv_free(&r->parser);
    parser_init(r);
    r->n_fields = 0;
    r->nul_field = 0;
    r->record_done = false;
    r->in_record = false;
}

static bool is_blank(char ch)
{
    return ch == ' ' || ch == '\t';
}

/*
 * The fast path for a line without quotes, which is almost every line: split at commas and trim
 * spaces and tabs around each field, as libcsv does for unquoted fields, without a call per byte.
 * The fields are cut in place in the line buffer (a NUL after each), not copied. Lines with a
 * quote, or inside a quoted field, go through libcsv. Returns false for a blank line (libcsv
 * skips those too).
 */
static bool split_plain_line(struct csvin *r, char *p, size_t n)
{
    bool nul = memchr(p, '\0', n) != NULL; /* a NUL byte in the input ends a field's string */
    while (n && (p[n - 1] == '\n' || p[n - 1] == '\r'))
        n--;
    if (n == 0)
        return false;
    char *end = p + n;
    for (;;) {
        char *comma = memchr(p, ',', (size_t)(end - p));
        char *stop = comma ? comma : end, *a = p, *b = stop;
        while (a < b && is_blank(*a))
            a++;
        while (b > a && is_blank(b[-1]))
            b--;
        if (!field_room(r))
            return true; /* reported by the caller */
        *b = '\0';       /* at the comma, a trimmed blank or the line's end: the field is done */
        r->lengths[r->n_fields] = nul ? strlen(a) : (size_t)(b - a);
        if (r->lengths[r->n_fields] != (size_t)(b - a) && !r->nul_field)
            r->nul_field = r->n_fields + 1;
        r->fields[r->n_fields++] = a;
        if (!comma)
            break;
        p = comma + 1;
    }
    on_record('\n', r);
    return true;
}

static const char *parse_error_text(struct csvin *r)
{
    return csv_error(&r->parser) == CSV_EPARSE ? "malformed CSV record (stray or unbalanced quote)"
                                               : csv_strerror(csv_error(&r->parser));
}

/* End of input: the last record may still be open in libcsv. 1: it completed a record;
 * 0: nothing left; -1: an unclosed quote (reported); -2: a read error (reported). */
static int finish_input(struct csvin *r)
{
    r->eof = true;
    if (ferror(r->in)) {
        diag_report(r->diag, r->name, 0, "read error");
        return -2;
    }
    size_t pending = r->n_fields;
    if (csv_fini(&r->parser, on_field, on_record, r) != 0) {
        diag_report(r->diag, r->name, r->rec_line,
                    "malformed CSV record: a quoted field is not closed");
        return -1;
    }
    return r->record_done && (pending || r->n_fields) ? 1 : 0;
}

/* Feeds one physical line p[0..n). 1: a record is complete; 0: read on (a blank line, or a
 * quoted field goes on); -1: a malformed record (reported, skipped); -2: out of memory. */
static int feed_line(struct csvin *r, char *p, size_t n)
{
    if (!r->in_record)
        r->rec_line = r->line_no;
    if (!r->in_record && !memchr(p, '"', n)) {
        bool record = split_plain_line(r, p, n);
        if (r->oom)
            return -2;
        return record ? 1 : 0;
    }
    if (csv_parse(&r->parser, p, n, on_field, on_record, r) != n) {
        diag_report(r->diag, r->name, r->line_no, "%s", parse_error_text(r));
        resync(r);
        return -1;
    }
    if (r->oom)
        return -2;
    if (r->record_done)
        return 1;
    if (n > strspn(p, "\r\n"))
        r->in_record = true;
    return 0;
}

int csvin_next(struct csvin *r, struct csvin_record *rec)
{
    if (r->record_done) { /* the previous record was handed out: start a new one */
        r->record_done = false;
        r->n_fields = 0;
        r->nul_field = 0;
    }
    int rc = 0;
    while (rc == 0) {
        if (r->eof)
            return 0;
        ssize_t len = getline(&r->line, &r->line_cap, r->in);
        if (len < 0) {
            rc = finish_input(r);
            if (rc <= 0)
                return rc;
            break;
        }
        r->line_no++;
        char *p = r->line;
        size_t n = (size_t)len;
        if (r->line_no == 1 && n >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) {
            p += 3;
            n -= 3;
        }
        rc = feed_line(r, p, n);
        if (rc == -2)
            diag_report(r->diag, r->name, r->line_no, "out of memory");
        if (rc < 0)
            return rc;
    }
    r->in_record = false;
    rec->n_fields = r->n_fields;
    rec->fields = r->fields;
    rec->lengths = r->lengths;
    rec->line = r->rec_line;
    rec->nul_field = r->nul_field;
    return 1;
}

void csvin_free(struct csvin *r)
{
    if (!r)
        return;
    csv_free(&r->parser);
    for (size_t i = 0; i < r->cap_fields; i++)
        free(r->bufs[i].data);
    free(r->bufs);
    free(r->fields);
    free(r->lengths);
    free(r->line);
    free(r);
}
