/*
 * search: the best layouts of a training job on the GPUs it has (memfit search; doc/model.md
 * section 11.5).
 *
 * A job is a scenario row with `gpus` (the total number of GPUs) instead of dp: the model, seq,
 * global_batch, precision, fp8, optimizer, finetune, gpu, gpus_per_node and reserve are fixed; the
 * search varies every layout choice that keeps tp * pp * cp * dp = gpus - tp (dividing heads and
 * kv_heads, <= gpus_per_node), pp and vpp (layers divisible by pp * vpp), cp (dividing seq), ep
 * and etp (MoE), dp (the rest), the ZeRO stage, attention, recompute (none, selective, full, every
 * k), offload and the micro-batch b (global_batch divisible by b * dp); sp is on whenever tp > 1.
 * A choice the job's row gave (scenario.pinned) is kept. A layout is one value of every varied
 * choice, b included: layouts_tried counts them all, layouts_fit those whose exact peak (the
 * model's, sections 3-10, the scenario's --peak) is within the budget, whether or not each was
 * evaluated one by one. The fitting ones are ranked by the step time of the cost model
 * (cost.h), the fastest first.
 *
 * Pure: no I/O; the caller owns every buffer.
 */
#ifndef MEMFIT_SEARCH_H
#define MEMFIT_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "model/scenario.h"
#include "plan/toplist.h" /* struct search_layout */

/* One layout for the report's scatter and tp x pp map: evaluated, fitting or not. */
struct search_point {
    uint64_t tp, pp, cp, dp;
    uint64_t peak_bytes, budget_bytes;
    double step_time_s; /* of the cost model, also for a layout that does not fit */
    bool fits;
};

/* Called for each evaluated layout (not for those counted without evaluation); may be NULL. */
typedef void search_point_fn(void *ctx, const struct search_point *p);

struct search_result {
    uint64_t layouts_tried, layouts_fit;
    size_t n_top;               /* of the caller's top array, the best first */
    uint64_t layouts_evaluated; /* peaks computed one by one (model_peak_cached calls) */
    uint64_t range_last; /* search_min_gpus: the last count searched when its work ran out before
                            the range's end (SEARCH_RANGE_WORK); 0: the range was searched whole */
};

/*
 * The work search_min_gpus spends on a range before it stops and says how far it got: the
 * layouts evaluated, plus SEARCH_PROBE_WORK for each count probed (its lists of divisors and the
 * count of its layouts, about 25 evaluations' time), summed over the counts. About a second on
 * one core (100,000 counts with nothing to evaluate); a range that needs more is narrowed.
 */
#define SEARCH_RANGE_WORK 2500000u
#define SEARCH_PROBE_WORK 25u

enum search_status {
    SEARCH_OK = 0,
    SEARCH_NO_SPLIT,  /* no layout: no tp, pp, cp (and ep) whose dp divides the global batch */
    SEARCH_PIN_CLASH, /* layouts exist, but none keeps the pinned choices */
    SEARCH_OVERFLOW,  /* the default global batch (b dp pp) overflowed */
    SEARCH_NO_MEMORY, /* the lists of divisors could not be allocated */
    SEARCH_TOO_LARGE  /* more than 2^24 layouts but b (a model of a million layers): not
                       * searched; layouts_tried is counted */
};

/*
 * Searches every layout of job on job->gpus GPUs. top[0..top_cap) receives the best fitting
 * layouts, fastest first (ties: the lower peak, then the earlier in the enumeration); *out the
 * counts. memo: model_cache_new's memo of layer inventories, or NULL (the search makes its own).
 */
enum search_status search_run(const struct scenario *job, size_t top_cap, struct search_layout *top,
                              search_point_fn *each, void *ctx, struct model_cache *memo,
                              struct search_result *out);

/* search_fix keeps the layouts within this fraction of the fastest step (and prunes by it). */
#define SEARCH_FIX_NEAR 0.02

/*
 * search_run for the verdict's fix (doc/model.md 11.6): of checkpointing every k, only k = 1
 * (full) and k = keep_k (the row's; 0: none) are searched - the cost model prices every k alike
 * but for offloaded checkpoints - and a family none of whose layouts can come within
 * SEARCH_FIX_NEAR of the fastest so far is not listed; so top holds every layout within it of
 * the fastest, up to top_cap, and the fix of a row costs a few milliseconds. seed_s: the step of
 * a layout of the job known to fit (0: none), which bounds the fastest from the start. The counts
 * in *out are of the layouts searched.
 */
enum search_status search_fix(const struct scenario *job, uint64_t keep_k, double seed_s,
                              size_t top_cap, struct search_layout *top, struct model_cache *memo,
                              struct search_result *out);

/*
 * --gpus-range a:b: the smallest GPU count in [a, b], multiples of the job's gpus_per_node, at
 * which a layout fits (0: none), with the search's result there as search_run gives it. When the
 * counts searched without a fit used up SEARCH_RANGE_WORK, it stops: 0, with out->range_last the
 * last count searched.
 */
uint64_t search_min_gpus(const struct scenario *job, uint64_t a, uint64_t b, size_t top_cap,
                         struct search_layout *top, struct model_cache *memo,
                         struct search_result *out);

#endif
