/*
 * deadline: how many GPUs train N tokens in D days (memfit search --tokens N --days D;
 * doc/model.md section 11.7).
 *
 * A step of a layout trains global_batch * seq tokens (tokens_per_s = that / step time); N tokens
 * take N / tokens_per_s / 86400 days, G GPUs that long G * days * 24 GPU-hours, at P a GPU-hour
 * GPU-hours * P. deadline_min_gpus finds the fewest GPUs of a job's kind, in multiples of its
 * gpus_per_node, whose fastest layout (search_run) meets the deadline.
 *
 * Pure: no I/O; the search allocates as search_run does.
 */
#ifndef MEMFIT_DEADLINE_H
#define MEMFIT_DEADLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "model/scenario.h"
#include "plan/search.h"

/* The last count --tokens searches when no range bounds it (the report's cap, doc/model.md 11.3).
 */
#define SEARCH_DEADLINE_MAX_GPUS 65536u

/* What training N tokens on a layout of G GPUs takes. */
struct deadline_cost {
    double tokens_per_s; /* global_batch * seq / step time */
    double days;         /* tokens / tokens_per_s / 86400 (0 without tokens) */
    double gpu_hours;    /* gpus * days * 24 */
    double cost;         /* gpu_hours * price */
};

/* The cost of training `tokens` (0: none) on `gpus` GPUs of layout sc whose step takes step_s
 * seconds, at `price` a GPU-hour. */
void deadline_cost_of(const struct scenario *sc, uint64_t gpus, double step_s, double tokens,
                      double price, struct deadline_cost *out);

/* The fewest GPUs of a deadline search and the count just below it, each with its fastest step. */
struct deadline_result {
    uint64_t gpus;     /* the fewest that meet the deadline (0: none up to the range's end) */
    uint64_t below;    /* the next smaller count (gpus - gpus_per_node; 0 when gpus is the first) */
    double below_days; /* the days on `below` GPUs (infinity: no layout fits there) */
    uint64_t counts;   /* GPU counts searched */
};

/*
 * The fewest GPUs in [a, b], multiples of job->gpus_per_node, on which the fastest layout trains
 * `tokens` within `days`: counts doubled from the first until one meets it, then bisected between
 * the last that missed and it, so that the answer meets the deadline and the count a node below
 * it does not (a count with no layout that fits misses). top, top_cap and *res: search_run's at
 * the answer. memo as search_run's.
 */
void deadline_min_gpus(const struct scenario *job, uint64_t a, uint64_t b, double tokens,
                       double days, size_t top_cap, struct search_layout *top,
                       struct model_cache *memo, struct search_result *res,
                       struct deadline_result *out);

/* The GPU counts of a scaling curve over [a, b]: the first multiple of node >= a, then doubled
 * while <= b, into counts[0..cap); returns how many. */
size_t deadline_curve_counts(uint64_t a, uint64_t b, uint64_t node, uint64_t *counts, size_t cap);

#endif
