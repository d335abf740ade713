/*
 * floors: the search's step-time floors (doc/model.md 11.5, 11.6): the least a stage's work with
 * its bubble can be, as a factor of the work, the least exposed data-parallel and offload time
 * over the stages that can be the most loaded, and a family's floor from its ends.
 *
 * Pure: no I/O, no allocation.
 */
#ifndef MEMFIT_FLOORS_H
#define MEMFIT_FLOORS_H

#include <stdbool.h>

#include "model/cost.h"
#include "model/model.h"
#include "model/scenario.h"

/* A stage's work with the bubble, as a factor of the work, at m micro-batches or fewer: 1F1B's
 * bubble is (pp - 1) / (m vpp) of it; ZB1P's and DualPipe's, whose backward splits off the
 * weight gradients to fill it, can fall to none (doc/model.md 6.4): 1. */
double floor_with_bubble(const struct scenario *sc, double m);

/* The least exposed data-parallel (with dp) and offload time of sc's step over the stages that
 * can be the most loaded: the cost model reads the parameters of that stage, and which one it is
 * can change with b. c is sc's own cost, t its terms (its peak_stage left as it was). */
double floor_least_over_stages(const struct scenario *sc, struct terms *t, const struct cost *c,
                               bool dp);

/* floor_least_over_stages with the data-parallel time. */
double floor_least_exposed(const struct scenario *sc, struct terms *t, const struct cost *c);

/*
 * A floor of the step of every layout of sc's family (all but b), whose valid micro-batches run
 * from b_min to b_max at the global batch gb: a stage's work but context parallelism at b_max,
 * the bubble at the most micro-batches - and when tight, the least exposed data-parallel and
 * offload time at b_max and context parallelism's exposed traffic at b_min (doc/model.md 11.5,
 * 11.6). One peak priced through memo, two at most when tight, each counted in *evaluated; 0 (no
 * floor) when a peak cannot be computed.
 */
double floor_of_family(const struct scenario *sc, struct model_cache *memo, uint64_t b_min,
                       uint64_t b_max, uint64_t gb, bool tight, uint64_t *evaluated);

#endif
