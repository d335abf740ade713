/*
 * strbuf: a string that grows as text is appended (the template's paragraphs and expansions,
 * pdffix's rewritten document, Cairo's SVG stream), or that fills a caller's fixed buffer and
 * is cut safely when full (the report's placeholder values).
 *
 * The text is always NUL-terminated once anything was appended (a growing buffer) or once the
 * fixed buffer has room for the NUL. The first error is kept in err and later calls do nothing,
 * so a caller appends a run of pieces and checks once at the end (Cairo's habit).
 */
#ifndef MEMFIT_STRBUF_H
#define MEMFIT_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

enum strbuf_error {
    STRBUF_OK = 0,
    STRBUF_NOMEM,     /* a growing buffer could not grow */
    STRBUF_TRUNCATED, /* a fixed buffer was full: the text was cut at a UTF-8 character boundary */
    STRBUF_FORMAT,    /* vsnprintf failed */
};

struct strbuf {
    char *buf;  /* NULL until the first append (growing); the caller's array (fixed) */
    size_t len; /* bytes of text, not counting the NUL */
    size_t cap; /* bytes of buf */
    bool fixed; /* buf belongs to the caller and never grows */
    enum strbuf_error err;
};

/* An empty growing buffer; nothing is allocated yet. */
void strbuf_init(struct strbuf *sb);

/* A buffer over the caller's buf[0..size): buf becomes "" (when size > 0); appends that do not
 * fit are cut at a UTF-8 character boundary and set STRBUF_TRUNCATED. */
void strbuf_init_fixed(struct strbuf *sb, char *buf, size_t size);

/* Frees a growing buffer's text (a fixed one is the caller's) and makes sb empty again. NULL is
 * a no-op. */
void strbuf_release(struct strbuf *sb);

/* Empties the text but keeps the memory and the error. */
void strbuf_reset(struct strbuf *sb);

/*
 * Hands the growing buffer's text to the caller (free it), "" when nothing was appended; NULL on
 * an error or for a fixed buffer. *len (when len is not NULL) gets its length. sb is empty after.
 */
char *strbuf_detach(struct strbuf *sb, size_t *len);

/* Appends n bytes of s. Returns 0, or the (kept) error. */
int strbuf_append(struct strbuf *sb, const void *s, size_t n);

/* Appends the string s. */
int strbuf_puts(struct strbuf *sb, const char *s);

/* Appends printf-formatted text. */
int strbuf_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
