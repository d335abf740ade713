/* diag: see diag.h. */
#include "base/diag.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

void diag_init(struct diag *d, diag_sink_fn *sink, void *ctx)
{
    memset(d, 0, sizeof *d);
    d->sink = sink;
    d->sink_ctx = ctx;
}

char *diag_escape(char *dst, size_t size, const char *src)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)src; *p; p++) {
        bool ctl = *p < 0x20 || *p == 0x7f;
        size_t need = ctl ? 4 : 1;
        if (n + need >= size)
            break;
        if (ctl) {
            dst[n++] = '\\';
            dst[n++] = 'x';
            dst[n++] = hex[*p >> 4];
            dst[n++] = hex[*p & 15];
        } else {
            dst[n++] = (char)*p;
        }
    }
    dst[n] = '\0';
    return dst;
}

void diag_report(struct diag *d, const char *file, unsigned long line, const char *fmt, ...)
{
    char msg[DIAG_MSG_MAX];
    int n = 0;
    if (file && line)
        n = snprintf(msg, sizeof msg, "%s:%lu: ", file, line);
    else if (file)
        n = snprintf(msg, sizeof msg, "%s: ", file);
    if (n < 0 || (size_t)n >= sizeof msg)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    char raw[DIAG_MSG_MAX];
    memcpy(raw, msg, sizeof raw);
    diag_escape(msg, sizeof msg, raw);
    if (d->count == 0)
        memcpy(d->first, msg, sizeof msg);
    memcpy(d->last, msg, sizeof msg);
    d->count++;
    if (d->sink)
        d->sink(d->sink_ctx, msg, file, line);
}
