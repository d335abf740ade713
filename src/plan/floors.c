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
