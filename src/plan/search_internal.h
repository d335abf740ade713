/*
 * search_internal: what the files of the search share, private to src/plan/search*.c (search.h is
 * the public interface). The space, its order, what is counted and what is pruned are
 * doc/model.md section 11.5.
 * - search.c: the enumeration - every tp, pp, schedule, vpp, cp, dp, ep and etp of the job, each
 *   structure collected with its floor and searched fastest floor first - and the public
 *   functions;
 * - search_structure.c: one structure - its ZeRO stages, offloads, recompute options, attentions
 *   and micro-batches, each family's fitting micro-batches found from the families that bound
 *   it, the fitting layouts offered to the top list.
 */
#ifndef MEMFIT_SEARCH_INTERNAL_H
#define MEMFIT_SEARCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "model/scenario.h"
#include "plan/shapes.h"
#include "plan/toplist.h"

/* Declared by search.h, which this header leaves out: search.c includes both, and no chain of
 * includes between modules may come back to where it began (tests/arch/layers.sh). */
struct search_layout;
struct search_point;

/* The relative margin of the step-time floor, for the rounding of the cost model's floating
 * point: a time below the floor by less than this is not below it. */
#define SEARCH_FLOOR_MARGIN 1e-9

/* One micro-batch of the current family, once evaluated. */
struct probe {
    uint64_t family; /* the family it belongs to (0: none yet) */
    uint64_t peak_bytes, budget_bytes;
    double time_s; /* the step time, when timed */
    /* When it fits, the parts of the step-time floor (doc/model.md 11.5): a stage's work but
     * context parallelism (compute, recompute, tensor- and expert-parallel traffic, the
     * pipeline's sends; m times a latency or a per-micro-batch volume, none rises with b), context
     * parallelism's exposed traffic, the least exposed data-parallel time (a cost_step per stage
     * that can be the most loaded: computed when a floor needs it, negative until then). */
    double work_s, cp_s, dp_s;
    bool fits, timed;
};

/* What fits in a family of the current recompute option, once searched. */
struct known {
    uint64_t serial; /* the option_serial it belongs to (0: none yet) */
    size_t prefix;   /* the fitting prefix of the monotone range */
    uint64_t beyond; /* the fitting b beyond it, bit i for b[nr + i] (the first 64) */
};

/* A peak of a structure, ZeRO stage and offload, at b[i] (doc/model.md 11.5). */
struct like {
    struct terms t;
    uint64_t structure; /* its structure_serial (0: none) */
    size_t i;
};

/* The likes' slots by ZeRO stage and offload: the monotone range and the first b beyond it. */
#define SEARCH_LIKE_SLOTS 65

/* One run of search_run: the job, the caller's buffers and how far the enumeration has come. */
struct run {
    const struct scenario *job;
    unsigned pins; /* the job's pinned choices (none when only counting splits) */
    struct model_cache *memo;
    void (*each)(void *ctx, const struct search_point *p); /* search.h's search_point_fn */
    void *ctx;
    struct search_layout *top_buf; /* the caller's, top_cap of them */
    size_t top_cap;
    struct toplist top;
    uint64_t tried, fit, evaluated;
    uint64_t gb;    /* the global batch every layout keeps */
    uint64_t *divs; /* the divisors of gb, ascending: a layout's b divides gb / dp */
    size_t n_divs;
    uint64_t *bs;         /* the structure's valid micro-batches, ascending */
    size_t nb, nr;        /* how many; of which the first nr are in the monotone range */
    struct probe *probes; /* what the current family has evaluated, by b's index */
    uint64_t family;      /* the current family's number (the probes of another are stale) */
    struct known known[4 * 3 * 2]; /* by ZeRO stage, offload and attention */
    uint64_t option_serial;        /* the current recompute option's number, structure by
                                    * structure (the knowns of another are stale) */
    uint64_t families;             /* layouts but b, counted */
    struct place at;               /* the current family's place (b aside) */
    size_t hint[4][3][2]; /* the fitting prefix of the last family of each ZeRO stage, offload
                           * and attention (its neighbour in k) */
    bool floors;          /* step-time floors prune the top list (not with a capacity factor) */
    bool count_only;      /* count the layouts, evaluate none */
    bool no_memory;       /* a list of divisors could not be allocated */
    bool first_fit_only;  /* stop at the first layout that fits (search_min_gpus' probes) */
    bool few_k;           /* of checkpointing every k, only k = 1 and keep_k (search_fix) */
    uint64_t keep_k;
    double near;   /* search_fix: only layouts within this factor of the fastest matter */
    double best_s; /* the fastest step offered so far (search_fix) */
    /* The enumeration collects the structures with their floors (shapes.h), then searches them
     * fastest floor first (best_first()); untimed: none of the current one can enter the top
     * list, its layouts are only counted. */
    bool best_first, untimed;
    /* Peaks of the current structure that answer an untimed family's fits (model_fits_like),
     * by ZeRO stage, offload and slot: 0 the monotone range, 1 + j the j-th b beyond it. */
    struct like *likes;
    uint64_t structure_serial; /* the current structure's number (likes of another are stale) */
    /* search_fix: the floor of the current recompute option of the structure (no ZeRO, no
     * offload; 0: none), and the least offload time of the optimizer offload at each ZeRO stage
     * (0: none known), which add up to a floor of an offload's families. */
    double option_floor, offload_least[4];
    signed char host_fits[4]; /* optimizer_host_fits' of the structure by ZeRO (-1: unknown) */
    struct shapes shapes;
    bool stop;
};

static inline bool pinned(const struct run *r, enum scenario_pin pin)
{
    return (r->pins & (unsigned)pin) != 0;
}

static inline uint64_t or_one(uint64_t v)
{
    return v ? v : 1;
}

/* Every ZeRO stage, offload (none, optimizer, checkpoints), recompute, attention and b of the
 * structure in sc (tp, pp, vpp, cp, dp, ep and etp set, its micro-batches in r): counted, and the
 * fitting layouts offered to the top list (search_structure.c). */
void search_structure(struct run *r, struct scenario *sc);

/* search_fix: a floor of the step of every layout of sc's structure with recompute option
 * `option` (0: none, the floor of every option); tight: the fix's tighter floor. */
double search_step_floor(struct run *r, const struct scenario *sc0, uint64_t option, bool tight);

/* search_fix: whether a floor rules a step out, against the fastest so far and r->near. */
bool search_ruled_out(const struct run *r, double floor_s);

/* search_fix: whether no layout of sc's structure with recompute option `option` can come
 * within r->near of the fastest so far. */
bool search_too_slow(struct run *r, const struct scenario *sc, uint64_t option);

#endif
