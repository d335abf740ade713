/*
 * modeljson_rows: what import-config prints of a model read from a config.json (modeljson.h):
 * its name for the report ("FILE (model_type T)") and its row of models.csv, the preset's name
 * taken from the file's folder or name.
 */
#include "input/modeljson.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/strbuf.h"

/* The length of s[0..n) cut back to a UTF-8 character boundary. */
static size_t utf8_cut(const char *s, size_t n)
{
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

char *modeljson_describe(const struct modeljson *m, const char *file, char *buf, size_t size)
{
    char tail[64];
    snprintf(tail, sizeof tail, " (model_type %s)", m->model_type);
    size_t n = strlen(file), t = strlen(tail);
    if (size == 0)
        return buf;
    if (n + t < size) {
        snprintf(buf, size, "%s%s", file, tail);
        return buf;
    }
    if (t + 4 >= size) { /* no room for any of the path */
        snprintf(buf, size, "%s", tail + 1);
        return buf;
    }
    /* "..." and the last bytes of the path, from a character's first byte. */
    const char *from = file + n - (size - 1 - t - 3);
    while (((unsigned char)*from & 0xC0) == 0x80)
        from++;
    snprintf(buf, size, "...%s%s", from, tail);
    return buf;
}

/* A field of a CSV row, quoted when RFC 4180 needs it (and when spaces around it would be
 * trimmed). */
static void csv_field(struct strbuf *out, const char *s)
{
    size_t n = strlen(s);
    if (!strpbrk(s, ",\"\r\n") && !(n && (s[0] == ' ' || s[n - 1] == ' '))) {
        strbuf_puts(out, s);
        return;
    }
    strbuf_puts(out, "\"");
    for (const char *q; (q = strchr(s, '"')) != NULL; s = q + 1) {
        strbuf_append(out, s, (size_t)(q - s));
        strbuf_puts(out, "\"\"");
    }
    strbuf_puts(out, s);
    strbuf_puts(out, "\"");
}

int modeljson_csv_header(struct strbuf *out)
{
    size_t n;
    const char *const *names = modeljson_columns(&n);
    strbuf_puts(out, "name");
    for (size_t c = 0; c < n; c++)
        strbuf_printf(out, ",%s", names[c]);
    return strbuf_puts(out, ",source\n");
}

/* The preset name of a file: its folder for dir/config.json, else its name without .json; the
 * model_type when the path has neither (./config.json). At most 64 bytes. */
static void row_name(const struct modeljson *m, const char *file, char *buf, size_t size)
{
    const char *base = strrchr(file, '/'), *from, *to;
    base = base ? base + 1 : file;
    if (strcmp(base, "config.json") != 0) {
        from = base;
        to = base + strlen(base);
        if (to - from > 5 && strcasecmp(to - 5, ".json") == 0)
            to -= 5;
    } else {
        to = base > file ? base - 1 : file; /* the '/' before it, or nothing */
        while (to > file && to[-1] == '/')
            to--;
        from = to;
        while (from > file && from[-1] != '/')
            from--;
    }
    size_t n = (size_t)(to - from);
    if (n == 0 || (n == 1 && *from == '.') || (n == 2 && from[0] == '.' && from[1] == '.')) {
        from = m->model_type;
        n = strlen(from);
    }
    if (n > 64)
        n = utf8_cut(from, 64);
    snprintf(buf, size, "%.*s", (int)n, from);
}

int modeljson_csv_row(const struct modeljson *m, const char *file, struct strbuf *out)
{
    char name[80], source[MODELJSON_FILE_MAX + 160];
    row_name(m, file, name, sizeof name);
    csv_field(out, name);
    for (size_t c = 0; c < MODELJSON_COLUMNS; c++) {
        strbuf_puts(out, ",");
        csv_field(out, m->value[c]);
    }
    snprintf(source, sizeof source, "%s (model_type %s; transformers models/%s)", file,
             m->model_type, m->follows ? m->follows : "?");
    strbuf_puts(out, ",");
    csv_field(out, source);
    return strbuf_puts(out, "\n");
}
