/* nameset: see nameset.h. */
#include "nameset.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct nameset_slot {
    uint64_t hash; /* 0: empty */
    unsigned long line;
};

void nameset_init(struct nameset *n)
{
    memset(n, 0, sizeof *n);
}

void nameset_release(struct nameset *n)
{
    free(n->slots);
    memset(n, 0, sizeof *n);
}

uint64_t nameset_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a, then a final mix */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h ? h : 1;
}

static bool nameset_grow(struct nameset *n)
{
    size_t cap = n->cap ? 2 * n->cap : 1024;
    struct nameset_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < n->cap; i++) {
        if (!n->slots[i].hash)
            continue;
        size_t j = n->slots[i].hash & (cap - 1);
        while (slots[j].hash)
            j = (j + 1) & (cap - 1);
        slots[j] = n->slots[i];
    }
    free(n->slots);
    n->slots = slots;
    n->cap = cap;
    return true;
}

void nameset_prefetch(const struct nameset *n, uint64_t h)
{
    /* With a million names the table is tens of MB, and waiting for the slot at nameset_add
     * was a seventh of eval's time: the row is parsed between the two calls. */
    if (n->cap)
        __builtin_prefetch(&n->slots[h & (n->cap - 1)]);
}

unsigned long nameset_add(struct nameset *n, uint64_t h, unsigned long line)
{
    if (2 * (n->count + 1) > n->cap && !nameset_grow(n))
        return 0;
    size_t j = h & (n->cap - 1);
    while (n->slots[j].hash) {
        if (n->slots[j].hash == h)
            return n->slots[j].line;
        j = (j + 1) & (n->cap - 1);
    }
    n->slots[j].hash = h;
    n->slots[j].line = line;
    n->count++;
    return 0;
}
