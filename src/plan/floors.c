/* floors: see floors.h. */
#include "plan/floors.h"

static uint64_t or_one(uint64_t v)
{
    return v ? v : 1;
}

double floor_with_bubble(const struct scenario *sc, double m)
{
    if (sc->schedule != SCHEDULE_1F1B)
        return 1;
    return 1 + (double)(or_one(sc->pp) - 1) / (m * (double)or_one(sc->vpp));
}

double floor_least_over_stages(const struct scenario *sc, struct terms *t, const struct cost *c,
                               bool dp)
{
    double least = (dp ? c->dp_exposed_s : 0) + c->offload_s;
    unsigned peak = t->peak_stage;
    for (unsigned i = 0; i < t->n_stages; i++) {
        if (i == peak)
            continue;
        struct cost other;
        t->peak_stage = i;
        cost_step(sc, t, &other);
        double v = (dp ? other.dp_exposed_s : 0) + other.offload_s;
        least = v < least ? v : least;
    }
    t->peak_stage = peak;
    return least;
}

double floor_least_exposed(const struct scenario *sc, struct terms *t, const struct cost *c)
{
    return floor_least_over_stages(sc, t, c, true);
}

/* sc's peak (t) and step (c) at micro-batch b; false when the peak cannot be computed. */
static bool priced(struct scenario *sc, struct model_cache *memo, uint64_t b, struct terms *t,
                   struct cost *c, uint64_t *evaluated)
{
    sc->micro_batch = b;
    ++*evaluated;
    if (model_peak_cached(sc, memo, t) != MODEL_OK)
        return false;
    cost_step(sc, t, c);
    return true;
}

double floor_of_family(const struct scenario *sc0, struct model_cache *memo, uint64_t b_min,
                       uint64_t b_max, uint64_t gb, bool tight, uint64_t *evaluated)
{
    struct scenario sc = *sc0;
    struct terms t;
    struct cost c;
    double cp_s = 0;
    if (tight && or_one(sc.cp) > 1) { /* the ring's exposed traffic does not fall as b grows */
        if (!priced(&sc, memo, b_min, &t, &c, evaluated))
            return 0;
        cp_s = c.cp_s;
    }
    if (!priced(&sc, memo, b_max, &t, &c, evaluated))
        return 0;
    double m = (double)(gb / (b_min * sc.dp));
    double work = c.compute_s + c.recompute_s + c.tp_s + c.ep_s + c.pp_s + cp_s;
    return work * floor_with_bubble(&sc, m) + (tight ? floor_least_exposed(&sc, &t, &c) : 0);
}
