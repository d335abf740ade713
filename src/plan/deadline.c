/* deadline: see deadline.h. The counts searched and why bisection is enough are doc/model.md
 * section 11.7. */
#include "plan/deadline.h"

#include <math.h>

static uint64_t or_one(uint64_t v)
{
    return v ? v : 1;
}

void deadline_cost_of(const struct scenario *sc, uint64_t gpus, double step_s, double tokens,
                      double price, struct deadline_cost *out)
{
    double per_step = (double)sc->global_batch * (double)sc->seq;
    out->tokens_per_s = step_s > 0 ? per_step / step_s : 0;
    out->days = tokens > 0 && out->tokens_per_s > 0 ? tokens / out->tokens_per_s / 86400.0 : 0;
    out->gpu_hours = (double)gpus * out->days * 24.0;
    out->cost = out->gpu_hours * price;
}

/* The days the fastest layout on g GPUs takes for `tokens` (infinity when none fits). */
static double days_on(const struct scenario *job, uint64_t g, double tokens,
                      struct model_cache *memo)
{
    struct scenario at = *job;
    at.gpus = g;
    at.gpus_from = 0;
    struct search_layout best;
    struct search_result res;
    if (search_run(&at, 1, &best, NULL, NULL, memo, &res) != SEARCH_OK || res.n_top == 0)
        return INFINITY;
    struct deadline_cost c;
    deadline_cost_of(&best.sc, g, best.step_time_s, tokens, 0, &c);
    return c.days;
}

void deadline_min_gpus(const struct scenario *job, uint64_t a, uint64_t b, double tokens,
                       double days, size_t top_cap, struct search_layout *top,
                       struct model_cache *memo, struct search_result *res,
                       struct deadline_result *out)
{
    uint64_t node = or_one(job->gpus_per_node);
    *out = (struct deadline_result){0, 0, INFINITY, 0};
    *res = (struct search_result){0};
    uint64_t first = a % node ? a + (node - a % node) : a;
    first = first ? first : node;
    uint64_t lo = 0, hi = 0; /* lo: a count that misses (0: none yet); hi: one that meets */
    double lo_days = INFINITY;
    uint64_t last = b - b % node; /* the range's last count */
    for (uint64_t g = first; g && g <= last;) {
        double d = days_on(job, g, tokens, memo);
        out->counts++;
        if (d <= days) {
            hi = g;
            break;
        }
        lo = g;
        lo_days = d;
        if (g == last)
            break;
        g = g > last / 2 ? last : g * 2; /* doubled, the range's last count once */
    }
    if (!hi)
        return;
    while (lo && hi - lo > node) {
        uint64_t mid = lo + (hi - lo) / node / 2 * node;
        double d = days_on(job, mid, tokens, memo);
        out->counts++;
        if (d <= days) {
            hi = mid;
        } else {
            lo = mid;
            lo_days = d;
        }
    }
    out->gpus = hi;
    out->below = lo;
    out->below_days = lo ? lo_days : INFINITY;
    struct scenario at = *job;
    at.gpus = hi;
    at.gpus_from = 0;
    search_run(&at, top_cap, top, NULL, NULL, memo, res);
}

size_t deadline_curve_counts(uint64_t a, uint64_t b, uint64_t node, uint64_t *counts, size_t cap)
{
    node = or_one(node);
    uint64_t g = a % node ? a + (node - a % node) : a;
    g = g ? g : node;
    size_t n = 0;
    for (; g <= b && n < cap; g *= 2) {
        counts[n++] = g;
        if (g > UINT64_MAX / 2)
            break;
    }
    return n;
}
