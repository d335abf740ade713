/* suggest: see suggest.h. */
#include "base/suggest.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define SUGGEST_MAX_LEN 64

size_t suggest_distance(const char *a, const char *b)
{
    /* Optimal string alignment: Levenshtein plus the swap of two neighbours ("modle"). */
    size_t la = strlen(a), lb = strlen(b);
    if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN)
        return la > lb ? la : lb;
    size_t d[SUGGEST_MAX_LEN + 1][SUGGEST_MAX_LEN + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            int ai = tolower((unsigned char)a[i - 1]), bj = tolower((unsigned char)b[j - 1]);
            size_t best = d[i - 1][j - 1] + (ai != bj);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && ai == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == bj && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb];
}

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return 1;
    return 0;
}

const char *suggest_closest(const char *word, const char *const *candidates, size_t n)
{
    size_t len = strlen(word), allowed = len / 3 > 0 ? len / 3 : 1;
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        size_t d = suggest_distance(word, candidates[i]);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    if (best && best_d <= allowed)
        return best;
    for (size_t i = 0; len >= 3 && i < n; i++)
        if (contains_nocase(candidates[i], word) || contains_nocase(word, candidates[i]))
            return candidates[i];
    return NULL;
}

size_t suggest_nearest(const char *word, const char *const *candidates, size_t n, const char **out,
                       size_t k)
{
    size_t dist[16], m = 0;
    if (k > sizeof dist / sizeof dist[0])
        k = sizeof dist / sizeof dist[0];
    /* Insertion into a short sorted list: a later candidate passes an earlier one only when it
     * is strictly nearer, so ties keep the candidates' order. */
    for (size_t i = 0; i < n && k > 0; i++) {
        size_t d = suggest_distance(word, candidates[i]), j = m < k ? m++ : k;
        if (j == k && d >= dist[k - 1])
            continue;
        if (j == k)
            j = k - 1;
        for (; j > 0 && dist[j - 1] > d; j--) {
            dist[j] = dist[j - 1];
            out[j] = out[j - 1];
        }
        dist[j] = d;
        out[j] = candidates[i];
    }
    return m;
}

char *suggest_join(const char *const *words, size_t n, const char *last_sep, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < size; i++) {
        const char *sep = i == 0 ? "" : i + 1 < n ? ", " : last_sep;
        int w = snprintf(buf + used, size - used, "%s%s", sep, words[i]);
        used += w > 0 ? (size_t)w : 0;
    }
    return buf;
}
