/*
 * diag: error messages with file:line positions.
 *
 * Modules report problems here instead of printing. Each message is formatted once as
 * "FILE:LINE: TEXT" (or "FILE: TEXT" when the line is 0) and handed to the sink, if one is set
 * (cli/session.c prints it at once, so a stream of a million rows keeps no list); the first
 * message is kept for callers and tests, and every message is counted.
 *
 * A message quotes what the user wrote (cells, header names, file names), so control characters
 * in it are written escaped, as "\x1b": a cell cannot move the cursor, clear the terminal or set
 * its title through a message.
 */
#ifndef MEMFIT_DIAG_H
#define MEMFIT_DIAG_H

#include <stddef.h>

#define DIAG_MSG_MAX 512

/* A message, formatted, with the position it names (file NULL: none; line 0: the whole file). */
typedef void diag_sink_fn(void *ctx, const char *msg, const char *file, unsigned long line);

struct diag {
    size_t count;
    char first[DIAG_MSG_MAX];
    char last[DIAG_MSG_MAX];
    diag_sink_fn *sink;
    void *sink_ctx;
};

void diag_init(struct diag *d, diag_sink_fn *sink, void *ctx);

/* Reports one message at file:line (line 0: no line; file NULL: no position). */
void diag_report(struct diag *d, const char *file, unsigned long line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Copies src into dst (size >= 1) with every control character (bytes 0x01-0x1f and 0x7f) written
 * as "\xNN", cut at an escape's boundary when dst is too small. Returns dst. */
char *diag_escape(char *dst, size_t size, const char *src);

#endif
