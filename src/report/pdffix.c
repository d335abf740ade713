/* pdffix: see pdffix.h. */
#include "report/pdffix.h"

#include "base/strbuf.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XREF_ENTRY 20 /* "oooooooooo ggggg n\r\n" */
#define PDFFIX_MAX_FONTS 16

/* The last occurrence of needle in hay[0..len). */
static const unsigned char *last_of(const unsigned char *hay, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = len >= n ? len - n + 1 : 0; i-- > 0;)
        if (memcmp(hay + i, needle, n) == 0)
            return hay + i;
    return NULL;
}

/* The first occurrence of needle in hay[from..len). */
static const unsigned char *first_of(const unsigned char *hay, size_t len, size_t from,
                                     const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = from; i + n <= len; i++)
        if (memcmp(hay + i, needle, n) == 0)
            return hay + i;
    return NULL;
}

/* Reads decimal digits at p (at most `max` of them, stopping before end). */
static bool read_num(const unsigned char *p, const unsigned char *end, size_t max, size_t *out,
                     const unsigned char **after)
{
    size_t v = 0, k = 0;
    while (p < end && k < max && *p >= '0' && *p <= '9') {
        v = v * 10 + (size_t)(*p - '0');
        p++;
        k++;
    }
    if (k == 0)
        return false;
    *out = v;
    if (after)
        *after = p;
    return true;
}

/* The cross-reference table of a libharu document. */
struct xref {
    size_t at;      /* offset of "xref" */
    size_t entries; /* offset of entry 0 */
    size_t count;
};

static bool xref_parse(const unsigned char *in, size_t len, struct xref *x)
{
    const unsigned char *sx = last_of(in, len, "startxref\n");
    const unsigned char *p;
    if (!sx || !read_num(sx + 10, in + len, 20, &x->at, NULL) || x->at + 7 > len ||
        memcmp(in + x->at, "xref\n0 ", 7) != 0)
        return false;
    if (!read_num(in + x->at + 7, in + len, 10, &x->count, &p) || p >= in + len || *p != '\n')
        return false;
    x->entries = (size_t)(p + 1 - in);
    return x->entries + x->count * XREF_ENTRY <= len;
}

static bool xref_offset(const unsigned char *in, const struct xref *x, size_t obj, size_t *off)
{
    if (obj == 0 || obj >= x->count)
        return false;
    const unsigned char *e = in + x->entries + obj * XREF_ENTRY;
    return e[17] == 'n' && read_num(e, e + 10, 10, off, NULL);
}

/* The identity ToUnicode CMap of the BMP (surrogates left out), as one stream object. */
static void identity_object(struct strbuf *b, size_t obj)
{
    struct strbuf cm;
    strbuf_init(&cm);
    strbuf_puts(&cm, "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
                     "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
                     "/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
                     "1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n");
    unsigned hi[256];
    size_t n = 0;
    for (unsigned h = 0; h < 256; h++)
        if (h < 0xD8 || h > 0xDF)
            hi[n++] = h;
    for (size_t i = 0; i < n; i += 100) {
        size_t k = n - i < 100 ? n - i : 100;
        strbuf_printf(&cm, "%zu beginbfrange\n", k);
        for (size_t j = i; j < i + k; j++)
            strbuf_printf(&cm, "<%02X00> <%02XFF> <%02X00>\n", hi[j], hi[j], hi[j]);
        strbuf_puts(&cm, "endbfrange\n");
    }
    strbuf_puts(&cm, "endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend");
    if (cm.err && !b->err)
        b->err = cm.err;
    strbuf_printf(b, "%zu 0 obj\n<<\n/Length %zu\n>>\nstream\n", obj, cm.len);
    strbuf_append(b, cm.buf, cm.len);
    strbuf_puts(b, "\nendstream\nendobj\n");
    strbuf_release(&cm);
}

/*
 * Replaces object `obj` of in by the identity CMap; writes the new document into b. Returns 0,
 * 1 when the object is already an unfiltered stream (done before), -1 on an unexpected layout.
 */
static int replace_object(const unsigned char *in, size_t len, size_t obj, struct strbuf *b)
{
    struct xref x;
    size_t off;
    char head[40];
    if (!xref_parse(in, len, &x) || !xref_offset(in, &x, obj, &off))
        return -1;
    int hn = snprintf(head, sizeof head, "%zu 0 obj\n", obj);
    if (off + (size_t)hn > len || memcmp(in + off, head, (size_t)hn) != 0)
        return -1;
    const unsigned char *st = first_of(in, len, off, "stream\n");
    const unsigned char *eo = first_of(in, len, off, "endobj\n");
    if (!st || !eo || st > eo)
        return -1;
    if (!first_of(in, (size_t)(st - in), off, "/Filter"))
        return 1;
    size_t end = (size_t)(eo - in) + 7;
    if (end > x.at)
        return -1;
    strbuf_append(b, in, off);
    identity_object(b, obj);
    size_t new_obj_len = b->len - off;
    strbuf_append(b, in + end, x.at - end);
    long long delta = (long long)new_obj_len - (long long)(end - off);
    size_t xref_at = b->len;
    size_t entries = xref_at + (x.entries - x.at);
    strbuf_append(b, in + x.at, x.entries + x.count * XREF_ENTRY - x.at);
    if (b->err)
        return -1;
    for (size_t i = 1; i < x.count; i++) {
        unsigned char *e = (unsigned char *)b->buf + entries + i * XREF_ENTRY;
        size_t o;
        if (e[17] != 'n' || !read_num(e, e + 10, 10, &o, NULL) || o <= off)
            continue;
        char num[16];
        snprintf(num, sizeof num, "%010llu", (unsigned long long)((long long)o + delta));
        memcpy(e, num, 10);
    }
    /* The trailer, then the new position of the table. */
    const unsigned char *sx = last_of(in, len, "startxref\n");
    size_t tail = x.entries + x.count * XREF_ENTRY;
    strbuf_append(b, in + tail, (size_t)(sx - in) - tail);
    strbuf_printf(b, "startxref\n%zu\n%%%%EOF\n", xref_at);
    return b->err ? -1 : 0;
}

/* The object numbers N of every "/ToUnicode N 0 R" (at most cap, without repeats). */
static size_t tounicode_refs(const unsigned char *in, size_t len, size_t *objs, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i + 11 < len; i++) {
        if (memcmp(in + i, "/ToUnicode ", 11) != 0)
            continue;
        size_t obj;
        const unsigned char *p;
        if (!read_num(in + i + 11, in + len, 10, &obj, &p) || p + 4 > in + len ||
            memcmp(p, " 0 R", 4) != 0)
            continue;
        bool seen = false;
        for (size_t k = 0; k < n; k++)
            seen |= objs[k] == obj;
        if (!seen && n < cap)
            objs[n++] = obj;
    }
    return n;
}

int pdffix_tounicode(const unsigned char *in, size_t len, unsigned char **out, size_t *out_len)
{
    size_t objs[PDFFIX_MAX_FONTS];
    size_t n = tounicode_refs(in, len, objs, PDFFIX_MAX_FONTS);
    unsigned char *cur = NULL;
    size_t cur_len = len;
    int changed = 0;
    *out = NULL;
    *out_len = 0;
    for (size_t i = 0; i < n; i++) {
        struct strbuf b;
        strbuf_init(&b);
        int rc = replace_object(cur ? cur : in, cur_len, objs[i], &b);
        if (rc < 0) {
            strbuf_release(&b);
            free(cur);
            return -1;
        }
        if (rc > 0) {
            strbuf_release(&b);
            continue;
        }
        free(cur);
        cur_len = b.len;
        cur = (unsigned char *)strbuf_detach(&b, NULL);
        changed = 1;
    }
    if (!changed)
        return 1;
    *out = cur;
    *out_len = cur_len;
    return 0;
}
