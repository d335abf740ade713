/* shapes: see shapes.h. */
#include "plan/shapes.h"

#include <stdlib.h>

bool shapes_push(struct shapes *l, const struct scenario *sc, uint64_t index, double floor_s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        struct shape *grown = realloc(l->at, cap * sizeof *grown);
        if (!grown)
            return false;
        l->at = grown;
        l->cap = cap;
    }
    l->at[l->n++] = (struct shape){sc->tp,  sc->pp,       sc->vpp, sc->cp, sc->dp, sc->ep,
                                   sc->etp, sc->schedule, sc->sp,  index,  floor_s};
    return true;
}

static int by_floor(const void *pa, const void *pb)
{
    const struct shape *a = pa, *b = pb;
    if (a->floor_s != b->floor_s)
        return a->floor_s < b->floor_s ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

void shapes_sort(struct shapes *l)
{
    if (l->n > 1)
        qsort(l->at, l->n, sizeof *l->at, by_floor);
}

void shape_apply(const struct shape *s, struct scenario *sc)
{
    sc->tp = s->tp;
    sc->pp = s->pp;
    sc->vpp = s->vpp;
    sc->cp = s->cp;
    sc->dp = s->dp;
    sc->ep = s->ep;
    sc->etp = s->etp;
    sc->sp = s->sp;
    sc->schedule = s->schedule;
}

void shapes_free(struct shapes *l)
{
    free(l->at);
    *l = (struct shapes){0};
}
