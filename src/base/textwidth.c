/* textwidth: see textwidth.h. */
#include "base/textwidth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct textwidth_range {
    unsigned long first, last;
};

/* Combining marks and invisible format characters: no column of their own. */
static const struct textwidth_range zero_width[] = {
    {0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x0610, 0x061A}, {0x064B, 0x065F},
    {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF}, {0x200B, 0x200F}, {0x2060, 0x2064}, {0x20D0, 0x20FF},
    {0x3099, 0x309A}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F}, {0xFEFF, 0xFEFF}, {0xE0100, 0xE01EF},
};

/* East Asian wide (W) and fullwidth (F) blocks. */
static const struct textwidth_range wide[] = {
    {0x1100, 0x115F},   {0x2E80, 0x303E},   {0x3041, 0x33FF},   {0x3400, 0x4DBF},
    {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},   {0xA960, 0xA97F},   {0xAC00, 0xD7A3},
    {0xF900, 0xFAFF},   {0xFE10, 0xFE19},   {0xFE30, 0xFE6F},   {0xFF00, 0xFF60},
    {0xFFE0, 0xFFE6},   {0x1F300, 0x1F64F}, {0x1F680, 0x1F6FF}, {0x1F900, 0x1F9FF},
    {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
};

static int textwidth_in(unsigned long cp, const struct textwidth_range *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cp >= r[i].first && cp <= r[i].last)
            return 1;
    return 0;
}

unsigned textwidth_char(unsigned long cp)
{
    if (textwidth_in(cp, zero_width, sizeof zero_width / sizeof zero_width[0]))
        return 0;
    if (textwidth_in(cp, wide, sizeof wide / sizeof wide[0]))
        return 2;
    return 1;
}

/* Decodes the code point at s into *cp; returns its length in bytes (1 for an invalid byte,
 * whose value is then *cp, 0 at the end of the string). */
static size_t textwidth_decode(const char *s, unsigned long *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    *cp = u[0];
    if (u[0] == 0)
        return 0;
    size_t len = u[0] < 0x80             ? 1
                 : (u[0] & 0xE0) == 0xC0 ? 2
                 : (u[0] & 0xF0) == 0xE0 ? 3
                 : (u[0] & 0xF8) == 0xF0 ? 4
                                         : 0;
    if (len <= 1)
        return 1;
    unsigned long v = u[0] & (0x7Fu >> len);
    for (size_t i = 1; i < len; i++) {
        if ((u[i] & 0xC0) != 0x80)
            return 1;
        v = v << 6 | (u[i] & 0x3Fu);
    }
    *cp = v;
    return len;
}

size_t textwidth_cols(const char *s)
{
    size_t cols = 0;
    textwidth_prefix(s, (size_t)-1, &cols);
    return cols;
}

size_t textwidth_prefix(const char *s, size_t max_cols, size_t *cols)
{
    size_t used = 0, bytes = 0, n;
    unsigned long cp;
    while ((n = textwidth_decode(s + bytes, &cp)) != 0) {
        unsigned w = textwidth_char(cp);
        if (used + w > max_cols)
            break;
        used += w;
        bytes += n;
    }
    if (cols)
        *cols = used;
    return bytes;
}

/* The byte where the longest suffix of s (total columns) that takes at most max_cols begins. */
static size_t textwidth_suffix(const char *s, size_t total, size_t max_cols)
{
    size_t skip = total - max_cols, used;
    size_t bytes = textwidth_prefix(s, skip, &used);
    unsigned long cp;
    while (used < skip) { /* a wide character straddles the cut: it goes with the prefix */
        size_t n = textwidth_decode(s + bytes, &cp);
        if (n == 0)
            break;
        used += textwidth_char(cp);
        bytes += n;
    }
    return bytes;
}

const char *textwidth_fit_split(const char *s, size_t cols, size_t head_cols, char *buf,
                                size_t size)
{
    size_t total = textwidth_cols(s);
    if (total <= cols)
        return s;
    size_t room = cols > 0 ? cols - 1 : 0;
    if (head_cols > room)
        head_cols = room;
    size_t head = textwidth_prefix(s, head_cols, &head_cols);
    size_t tail = textwidth_suffix(s, total, room - head_cols);
    snprintf(buf, size, "%.*s%s%s", (int)head, s, "\xe2\x80\xa6", s + tail); /* U+2026 */
    return buf;
}

const char *textwidth_fit(const char *s, size_t cols, char *buf, size_t size)
{
    /* Cut in the middle: names of a sweep share their beginning ("l3-8b-qlora-4090-b1",
     * "...-b2") and often differ at the end, so both ends stay. */
    size_t room = cols > 0 ? cols - 1 : 0;
    return textwidth_fit_split(s, cols, (room + 1) / 2, buf, size);
}

#define TEXTWIDTH_CUT_MAX 96 /* bytes of a cut name (a scenario's name is at most 64) */

static int textwidth_cmp(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

size_t textwidth_best_head(const char *const *names, size_t n, size_t cols)
{
    size_t room = cols > 0 ? cols - 1 : 0, middle = (room + 1) / 2, best = middle, most = 0;
    char(*cut)[TEXTWIDTH_CUT_MAX] = n ? malloc(n * sizeof *cut) : NULL;
    if (!cut)
        return middle;
    for (size_t h = 0; h <= room; h++) {
        for (size_t i = 0; i < n; i++) {
            const char *c = textwidth_fit_split(names[i], cols, h, cut[i], sizeof cut[i]);
            if (c != cut[i])
                snprintf(cut[i], sizeof cut[i], "%s", c);
        }
        qsort(cut, n, sizeof *cut, textwidth_cmp);
        size_t distinct = 1;
        for (size_t i = 1; i < n; i++)
            distinct += strcmp(cut[i], cut[i - 1]) != 0;
        size_t from_middle = h > middle ? h - middle : middle - h;
        size_t best_from = best > middle ? best - middle : middle - best;
        if (distinct > most || (distinct == most && from_middle < best_from)) {
            most = distinct;
            best = h;
        }
    }
    free(cut);
    return best;
}
