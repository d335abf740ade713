/*
 * toplist: the best layouts a search has met, at most `cap` of them, in rank order at the end
 * (doc/model.md 11.5): the faster step first, then the lower peak, then the earlier place in the
 * search's enumeration - a total order, so that the list does not depend on the order in which
 * the layouts come. The slots form a binary heap with the one that ranks last at its root, so a
 * layout enters in O(log cap) (an insertion into a sorted list was quadratic: 93 s for
 * --top 30000).
 *
 * Pure: no I/O; it allocates its heap and places.
 */
#ifndef MEMFIT_TOPLIST_H
#define MEMFIT_TOPLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/scenario.h"

/* One layout that fits: a complete scenario that eval reads back (its name is the caller's),
 * with the peak and budget eval gives it and its step time. */
struct search_layout {
    struct scenario sc;
    uint64_t peak_bytes, budget_bytes;
    double step_time_s;
};

/* A layout's place in the enumeration, which breaks a tie of step time and peak: the structure,
 * then ZeRO, offload, recompute option, attention and b, each ascending. */
struct place {
    uint64_t structure;
    unsigned zero, offload;
    uint64_t option;
    unsigned attention;
    size_t b;
};

struct toplist {
    struct search_layout *top; /* the caller's, cap of them */
    struct place *place;       /* of each layout in top */
    size_t *heap;              /* the slots of top, the one that ranks last at the root */
    size_t cap, n;
};

/* A list into the caller's top[cap]; false when out of memory (nothing to free then). */
bool toplist_init(struct toplist *l, struct search_layout *top, size_t cap);

/* Keeps a layout if there is room, or it ranks before the last. */
void toplist_offer(struct toplist *l, const struct scenario *sc, uint64_t peak_bytes,
                   uint64_t budget_bytes, double time_s, const struct place *pl);

/* The step time of the layout that ranks last (the list not empty). */
double toplist_worst_s(const struct toplist *l);

/* Puts top[0..n) in rank order, the first first. */
void toplist_order(struct toplist *l);

void toplist_free(struct toplist *l);

#endif
