/* toplist: see toplist.h. */
#include "plan/toplist.h"

#include <stdlib.h>

bool toplist_init(struct toplist *l, struct search_layout *top, size_t cap)
{
    *l = (struct toplist){.top = top, .cap = cap};
    if (cap == 0)
        return true;
    l->place = malloc(cap * sizeof *l->place);
    l->heap = malloc(cap * sizeof *l->heap);
    if (l->place && l->heap)
        return true;
    toplist_free(l);
    return false;
}

void toplist_free(struct toplist *l)
{
    free(l->place);
    free(l->heap);
    l->place = NULL;
    l->heap = NULL;
}

static bool place_before(const struct place *a, const struct place *b)
{
    if (a->structure != b->structure)
        return a->structure < b->structure;
    if (a->zero != b->zero)
        return a->zero < b->zero;
    if (a->offload != b->offload)
        return a->offload < b->offload;
    if (a->option != b->option)
        return a->option < b->option;
    if (a->attention != b->attention)
        return a->attention < b->attention;
    return a->b < b->b;
}

/* Whether a layout ranks before the one in slot i: the faster, then the lower peak, then the
 * earlier. */
static bool ranks_before(const struct toplist *l, double time_s, uint64_t peak,
                         const struct place *pl, size_t i)
{
    const struct search_layout *o = &l->top[i];
    if (time_s != o->step_time_s)
        return time_s < o->step_time_s;
    if (peak != o->peak_bytes)
        return peak < o->peak_bytes;
    return place_before(pl, &l->place[i]);
}

/* Whether the layout in slot a ranks after the one in slot b (no two tie). */
static bool ranks_after(const struct toplist *l, size_t a, size_t b)
{
    return ranks_before(l, l->top[b].step_time_s, l->top[b].peak_bytes, &l->place[b], a);
}

/* Restores the heap from position i upwards, then downwards over its first n slots. */
static void heap_up(struct toplist *l, size_t i)
{
    size_t *h = l->heap;
    for (; i > 0 && ranks_after(l, h[i], h[(i - 1) / 2]); i = (i - 1) / 2) {
        size_t t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
    }
}

static void heap_down(struct toplist *l, size_t i, size_t n)
{
    size_t *h = l->heap;
    for (;;) {
        size_t worst = i, c = 2 * i + 1;
        if (c < n && ranks_after(l, h[c], h[worst]))
            worst = c;
        if (c + 1 < n && ranks_after(l, h[c + 1], h[worst]))
            worst = c + 1;
        if (worst == i)
            return;
        size_t t = h[i];
        h[i] = h[worst];
        h[worst] = t;
        i = worst;
    }
}

double toplist_worst_s(const struct toplist *l)
{
    return l->top[l->heap[0]].step_time_s;
}

void toplist_offer(struct toplist *l, const struct scenario *sc, uint64_t peak_bytes,
                   uint64_t budget_bytes, double time_s, const struct place *pl)
{
    bool full = l->n == l->cap;
    if (full && !ranks_before(l, time_s, peak_bytes, pl, l->heap[0]))
        return;
    size_t slot = full ? l->heap[0] : l->n;
    l->top[slot].sc = *sc;
    l->top[slot].peak_bytes = peak_bytes;
    l->top[slot].budget_bytes = budget_bytes;
    l->top[slot].step_time_s = time_s;
    l->place[slot] = *pl;
    if (full) {
        heap_down(l, 0, l->n);
    } else {
        l->heap[l->n] = slot;
        heap_up(l, l->n++);
    }
}

/* The heap sorted in place (the last-ranked popped to the end each time), then the layouts moved
 * along the cycles of that order. */
void toplist_order(struct toplist *l)
{
    size_t n = l->n, *h = l->heap;
    for (size_t end = n; end > 1; end--) {
        size_t t = h[0];
        h[0] = h[end - 1];
        h[end - 1] = t;
        heap_down(l, 0, end - 1);
    }
    /* h[k] is the slot of rank k: move each cycle once (a moved position is marked h[k] = k). */
    for (size_t k = 0; k < n; k++) {
        if (h[k] == k)
            continue;
        struct search_layout lay = l->top[k];
        struct place pl = l->place[k];
        size_t j = k;
        while (h[j] != k) {
            size_t from = h[j];
            l->top[j] = l->top[from];
            l->place[j] = l->place[from];
            h[j] = j;
            j = from;
        }
        l->top[j] = lay;
        l->place[j] = pl;
        h[j] = j;
    }
}
