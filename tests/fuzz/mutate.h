/*
 * mutate: a deterministic mutation engine for the fuzz runs inside `make test` (fixed-seed
 * xorshift64*; byte flips, deletions, insertions of tokens that matter to the parsers).
 */
#ifndef MEMFIT_FUZZ_MUTATE_H
#define MEMFIT_FUZZ_MUTATE_H

#include <stdint.h>
#include <string.h>

struct mutator {
    uint64_t state;
    const char *const *tokens; /* inserted at random places */
    size_t n_tokens;
};

static uint64_t mutator_next(struct mutator *m)
{
    m->state ^= m->state >> 12;
    m->state ^= m->state << 25;
    m->state ^= m->state >> 27;
    return m->state * 2685821657736338717ull;
}

/* One mutation of buf[0..len) in place (at most cap bytes); returns the new length. */
static size_t mutator_apply(struct mutator *m, char *buf, size_t len, size_t cap)
{
    int kind = (int)(mutator_next(m) % 4);
    size_t pos = len ? mutator_next(m) % (len + 1) : 0;
    if (kind == 0 && len) { /* flip a byte */
        buf[pos % len] = (char)(mutator_next(m) & 0xff);
    } else if (kind == 1 && len) { /* delete a run */
        size_t n = mutator_next(m) % 8;
        if (pos + n > len)
            n = len - pos;
        memmove(buf + pos, buf + pos + n, len - pos - n);
        len -= n;
    } else if (m->n_tokens) { /* insert a token */
        const char *t = m->tokens[mutator_next(m) % m->n_tokens];
        size_t n = strlen(t);
        if (len + n <= cap) {
            memmove(buf + pos + n, buf + pos, len - pos);
            memcpy(buf + pos, t, n);
            len += n;
        }
    }
    return len;
}

/* 1..max_rounds mutations of seed into buf; returns the length. */
static size_t mutator_derive(struct mutator *m, const char *seed, size_t seed_len, char *buf,
                             size_t cap, int max_rounds)
{
    size_t len = seed_len < cap ? seed_len : cap;
    memcpy(buf, seed, len);
    int rounds = 1 + (int)(mutator_next(m) % (uint64_t)max_rounds);
    for (int k = 0; k < rounds; k++)
        len = mutator_apply(m, buf, len, cap);
    return len;
}

#endif
