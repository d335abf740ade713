/*
 * floors: the pieces of the search's step-time floors that depend on one layout only (doc/model.md
 * 11.5, 11.6): the least a stage's work with its bubble can be, as a factor of the work, and the
 * least exposed data-parallel and offload time over the stages that can be the most loaded.
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

#endif
