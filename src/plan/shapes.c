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
    l->at[l->n++] = (struct shape){sc->tp,  sc->pp,       sc->vpp, sc->cp, sc->dp,  sc->ep,
                                   sc->etp, sc->schedule, sc->sp,  index,  floor_s, false};
    return true;
}

/* Whether a comes before b: the lower floor, then the earlier. */
static bool before(const struct shape *a, const struct shape *b)
{
    if (a->floor_s != b->floor_s)
        return a->floor_s < b->floor_s;
    return a->index < b->index;
}

static void sift_down(struct shapes *l, size_t i)
{
    for (;;) {
        size_t least = i, c = 2 * i + 1;
        if (c < l->n && before(&l->at[c], &l->at[least]))
            least = c;
        if (c + 1 < l->n && before(&l->at[c + 1], &l->at[least]))
            least = c + 1;
        if (least == i)
            return;
        struct shape t = l->at[i];
        l->at[i] = l->at[least];
        l->at[least] = t;
        i = least;
    }
}

void shapes_heapify(struct shapes *l)
{
    for (size_t i = l->n / 2; i-- > 0;)
        sift_down(l, i);
}

struct shape shapes_pop(struct shapes *l)
{
    struct shape top = l->at[0];
    l->at[0] = l->at[--l->n];
    sift_down(l, 0);
    return top;
}

void shapes_put(struct shapes *l, const struct shape *s)
{
    size_t i = l->n++;
    l->at[i] = *s;
    while (i > 0 && before(&l->at[i], &l->at[(i - 1) / 2])) {
        struct shape t = l->at[i];
        l->at[i] = l->at[(i - 1) / 2];
        l->at[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
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
