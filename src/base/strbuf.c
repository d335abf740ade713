/* strbuf: see strbuf.h. */
#include "base/strbuf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STRBUF_FIRST_CAP 64

void strbuf_init(struct strbuf *sb)
{
    memset(sb, 0, sizeof *sb);
}

void strbuf_init_fixed(struct strbuf *sb, char *buf, size_t size)
{
    strbuf_init(sb);
    sb->buf = buf;
    sb->cap = size;
    sb->fixed = true;
    if (size > 0)
        buf[0] = '\0';
}

void strbuf_release(struct strbuf *sb)
{
    if (!sb)
        return;
    if (!sb->fixed)
        free(sb->buf);
    strbuf_init(sb);
}

void strbuf_reset(struct strbuf *sb)
{
    sb->len = 0;
    if (sb->cap > 0)
        sb->buf[0] = '\0';
}

char *strbuf_detach(struct strbuf *sb, size_t *len)
{
    if (len)
        *len = 0;
    if (sb->fixed || sb->err || strbuf_append(sb, "", 0) != 0) {
        strbuf_release(sb);
        return NULL;
    }
    char *s = sb->buf;
    if (len)
        *len = sb->len;
    strbuf_init(sb);
    return s;
}

/* Makes room for n more bytes and the NUL in a growing buffer. */
static int strbuf_grow(struct strbuf *sb, size_t n)
{
    if (n > SIZE_MAX - 1 - sb->len) {
        sb->err = STRBUF_NOMEM;
        return -1;
    }
    size_t need = sb->len + n + 1;
    if (need <= sb->cap)
        return 0;
    size_t cap = sb->cap ? sb->cap : STRBUF_FIRST_CAP;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : 2 * cap;
    char *p = realloc(sb->buf, cap);
    if (!p) {
        sb->err = STRBUF_NOMEM;
        return -1;
    }
    sb->buf = p;
    sb->cap = cap;
    return 0;
}

/* The length of a UTF-8 sequence from its lead byte (1 for ASCII and stray bytes). */
static size_t utf8_seq_len(unsigned char c)
{
    if (c >= 0xF0 && c <= 0xF7)
        return 4;
    if (c >= 0xE0)
        return c <= 0xEF ? 3 : 1;
    if (c >= 0xC0)
        return 2;
    return 1;
}

/* After a cut at sb->len: drops a character whose last bytes were cut off, and ends the text. */
static void strbuf_trim_cut(struct strbuf *sb, size_t from)
{
    size_t i = sb->len;
    while (i > from && sb->len - i < 3 && ((unsigned char)sb->buf[i - 1] & 0xC0) == 0x80)
        i--;
    if (i > from && utf8_seq_len((unsigned char)sb->buf[i - 1]) > sb->len - (i - 1))
        sb->len = i - 1;
    sb->buf[sb->len] = '\0';
    sb->err = STRBUF_TRUNCATED;
}

/* A fixed buffer's append: what fits, cut at a character boundary. */
static int strbuf_append_fixed(struct strbuf *sb, const void *s, size_t n)
{
    size_t room = sb->cap > sb->len ? sb->cap - sb->len - 1 : 0;
    if (n <= room) {
        memcpy(sb->buf + sb->len, s, n);
        sb->len += n;
        sb->buf[sb->len] = '\0';
        return 0;
    }
    if (sb->cap == 0) {
        sb->err = STRBUF_TRUNCATED;
        return (int)sb->err;
    }
    size_t from = sb->len;
    memcpy(sb->buf + sb->len, s, room);
    sb->len += room;
    strbuf_trim_cut(sb, from);
    return (int)sb->err;
}

int strbuf_append(struct strbuf *sb, const void *s, size_t n)
{
    if (sb->err)
        return (int)sb->err;
    if (sb->fixed)
        return strbuf_append_fixed(sb, s, n);
    if (strbuf_grow(sb, n) != 0)
        return (int)sb->err;
    if (n > 0)
        memcpy(sb->buf + sb->len, s, n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
    return 0;
}

int strbuf_puts(struct strbuf *sb, const char *s)
{
    return strbuf_append(sb, s, strlen(s));
}

/* vsnprintf into the room left; a fixed buffer that is too small keeps what fits. */
static int strbuf_vprintf(struct strbuf *sb, const char *fmt, va_list ap)
{
    /* Straight into the room left (one formatting pass when it fits: the common case). */
    size_t room = sb->buf ? sb->cap - sb->len : 0;
    va_list aq;
    va_copy(aq, ap);
    int k = vsnprintf(room ? sb->buf + sb->len : NULL, room, fmt, aq);
    va_end(aq);
    if (k < 0) {
        sb->err = STRBUF_FORMAT;
        return (int)sb->err;
    }
    size_t n = (size_t)k;
    if (n < room) {
        sb->len += n;
        return 0;
    }
    if (!sb->fixed) {
        if (strbuf_grow(sb, n) != 0)
            return (int)sb->err;
        vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
        sb->len += n;
        return 0;
    }
    if (room == 0) {
        sb->err = n ? STRBUF_TRUNCATED : STRBUF_OK;
        return (int)sb->err;
    }
    /* A full fixed buffer: the first room - 1 bytes were written, cut at a character. */
    size_t from = sb->len;
    sb->len += room - 1;
    strbuf_trim_cut(sb, from);
    return (int)sb->err;
}

int strbuf_printf(struct strbuf *sb, const char *fmt, ...)
{
    if (sb->err)
        return (int)sb->err;
    va_list ap;
    va_start(ap, fmt);
    int rc = strbuf_vprintf(sb, fmt, ap);
    va_end(ap);
    return rc;
}
