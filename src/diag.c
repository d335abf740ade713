/* diag: see diag.h. */
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void diag_init(struct diag *d, diag_sink_fn *sink, void *ctx)
{
    memset(d, 0, sizeof *d);
    d->sink = sink;
    d->sink_ctx = ctx;
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
    if (d->count == 0)
        memcpy(d->first, msg, sizeof msg);
    memcpy(d->last, msg, sizeof msg);
    d->count++;
    if (d->sink)
        d->sink(d->sink_ctx, msg);
}
