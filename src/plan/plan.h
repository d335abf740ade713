/*
 * plan: the cheapest fix (the ladder of doc/model.md section 11), the largest micro-batch per
 * activation mode (section 8.4).
 *
 * Pure: plan_build reads a const scenario and fills a caller's struct plan; no I/O, no allocation,
 * no globals. A scenario that fits as it is costs one model_peak, none with plan_build_from
 * (the eval hot path).
 *
 * The ladder, applied cumulatively; a rung that does not apply is skipped (not recorded); the
 * first rung that fits is the fix:
 *   1. flash       attention=flash, when attention is plain and recompute is not selective
 *   2. zero1       zero=1, when dp > 1 and zero < 1
 *      zero2       zero=2, when dp > 1 and zero < 2
 *   3. micro_batch the largest b' < b that fits, when b > 1 (gradient accumulation keeps the
 *                  global batch); thin_matmuls when s * b' < 4096 tokens
 *   4. full_ckpt   recompute=full (every layer), unless it already is
 *      zero3       zero=3, when dp > 1 and zero < 3
 *                  the one with the smaller cost-model overhead first (full_ckpt on a tie),
 *                  then the other on top of it
 *   5. tp          tp=t sp=yes for t = 2, 4, 8, ... > the scenario's tp, t <= gpus_per_node,
 *                  t dividing heads and kv_heads, on the same GPUs (dp' = tp dp / t);
 *                  smallest first, one rung per t
 *   6. pp          pp=p for p = 2, 4, ... > the scenario's pp, p dividing the layers, on the
 *                  same GPUs (dp' = pp dp / p); smallest first, one rung per p
 *   7. offload     offload=optimizer, when offload is none
 * From rung 3 on every rung re-picks the largest b' <= b (the scenario's b) that fits; when not
 * even b' = 1 fits, the rung is recorded at b' = 1 (its lowest peak) and does not fit.
 */
#ifndef MEMFIT_PLAN_H
#define MEMFIT_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/cost.h"
#include "model/model.h"
#include "model/scenario.h"

/* Rungs 1-4 and 7 give at most 7; tp gives one per power of two that divides heads (< 2^17),
 * pp one per power of two that divides layers (< 2^21: config bounds the sizes). */
#define PLAN_MAX_RUNGS 48

/* A buffer this long always holds a fix_plan string whole (the longest: every column changed,
 * 20-digit tp, pp, dp, micro_batch and gpus, is under 230 characters). */
#define PLAN_SETTINGS_MAX 256

/* Below this many tokens per micro-batch the matmuls get thin (doc/model.md 11.2). */
#define PLAN_THIN_TOKENS 4096

enum plan_fix {
    PLAN_FIX_NONE, /* fits as it is */
    PLAN_FIX_FLASH,
    PLAN_FIX_ZERO1,
    PLAN_FIX_ZERO2,
    PLAN_FIX_MICRO_BATCH,
    PLAN_FIX_FULL_CKPT,
    PLAN_FIX_ZERO3,
    PLAN_FIX_TP,
    PLAN_FIX_PP,
    PLAN_FIX_OFFLOAD,
    PLAN_FIX_NOTHING, /* no rung fits */
    PLAN_FIX_LAYOUT   /* not a rung: the cheapest layout on the same GPUs (cheapest.h) */
};

struct plan_rung {
    enum plan_fix fix;  /* what this rung added */
    struct scenario sc; /* the cumulative settings, micro-batch re-picked from rung 3 on */
    struct terms terms; /* model_peak of sc */
    bool fits;
    bool thin_matmuls;   /* b' < b and s * b' < PLAN_THIN_TOKENS */
    struct cost cost;    /* the step of sc */
    double extra_time_s; /* cost.overhead_s - the baseline's overhead_s: seconds per step added */
};

/* About 20 KB (the rungs): keep one per thread and reuse it, not one per row. */
struct plan {
    uint64_t base_params, base_peak_bytes; /* Psi and the peak of the scenario (model_peak) */
    bool base_fits;
    enum plan_fix fix;
    int fix_rung;             /* index in rungs of the fix; -1 for none and nothing */
    uint64_t fix_peak_bytes;  /* none: the base peak; nothing: the last rung's (all fixes) */
    uint64_t fix_micro_batch; /* likewise */
    /* Model states alone, fully sharded, on GPUs of the raw memory (doc/model.md section 3.4:
     * 70B needs 14 x 80 GB). Filled for every scenario. */
    uint64_t gpus_for_states;
    struct plan_rung rungs[PLAN_MAX_RUNGS]; /* rungs[0..n_rungs) are valid */
    size_t n_rungs;                         /* 0 when the scenario fits */
    struct cost base_cost;     /* filled only when the ladder runs (the scenario does not fit), and
                                  not by plan_build_memo */
    uint64_t base_micro_batch; /* the scenario's b, sp and dp, for plan_fix_settings */
    bool base_sp;
    uint64_t base_dp;
};

/* Runs the ladder for sc. Returns 0, or -1 when a byte count overflows (the plan is unusable). */
int plan_build(const struct scenario *sc, struct plan *out);

/* plan_build for a scenario whose terms are known already (model_peak or model_eval of sc, e.g.
 * eval's row): saves the model_peak of the base, a third of the time of a fitting row. */
int plan_build_from(const struct scenario *sc, const struct terms *base, struct plan *out);

/* plan_build_from with the caller's memo of layer inventories (model_eval_cached; NULL: none),
 * without the step times: base_cost and each rung's cost and extra_time_s are left unset (eval's
 * columns need none; the cost model was a fifth of a not-fitting row's time). */
int plan_build_memo(const struct scenario *sc, const struct terms *base, struct model_cache *memo,
                    struct plan *out);

/* The step times plan_build_memo leaves out, for p = plan_build_memo(sc, base, ...). */
void plan_add_costs(const struct scenario *sc, const struct terms *base, struct plan *p);

/* "none", "flash", "zero1", "zero2", "micro_batch", "full_ckpt", "zero3", "tp", "pp",
 * "offload", "nothing", "layout": the `fix` column of eval. */
const char *plan_fix_name(enum plan_fix fix);

/* The GPUs of sc's layout, dp tp pp cp: no rung of the ladder changes it. */
uint64_t plan_gpus(const struct scenario *sc);

/*
 * The `fix_plan` column: the settings the fix changed, `column=value` joined by spaces in the
 * order first applied, each with its final value, the re-picked micro_batch and the dp that tp
 * and pp leave after them, then the GPU count the fix keeps, e.g. "attention=flash zero=3
 * recompute=full tp=4 sp=yes micro_batch=1 dp=2 gpus=8"; "" for none and nothing.
 * Writes at most size bytes with the final NUL. Returns 0, or -1 when the text was cut (at a
 * character boundary) to fit; PLAN_SETTINGS_MAX bytes always hold it.
 */
int plan_fix_settings(const struct plan *p, char *buf, size_t size);

/* The same for the cumulative settings of rungs[rung], without the GPU count (a label for its
 * bar in the report); "" when rung >= n_rungs. */
int plan_rung_settings(const struct plan *p, size_t rung, char *buf, size_t size);

/* Activation modes for the largest micro-batch (doc/model.md sections 8.4 and 9.7). */
enum plan_mode {
    PLAN_MODE_PLAIN,     /* attention=plain recompute=none */
    PLAN_MODE_FLASH,     /* attention=flash recompute=none */
    PLAN_MODE_SELECTIVE, /* attention=plain recompute=selective (34sbh, doc/model.md 4.2) */
    PLAN_MODE_FULL,      /* attention=flash recompute=full (b <= 62 in doc/model.md 9.7) */
    PLAN_MODES
};

const char *plan_mode_name(enum plan_mode mode);

/* sc with the attention and recomputation of `mode`, every other setting kept. */
void plan_mode_scenario(const struct scenario *sc, enum plan_mode mode, struct scenario *out);

/* Largest micro-batch that fits in each mode (model_max_micro_batch; 0: not even 1). */
void plan_max_micro_batches(const struct scenario *sc, uint64_t out[PLAN_MODES]);

/* The step the report compares sc's step with (its second step chart): checkpointing every
 * k_best layers (model_eval's k_best; 1 when 0), or, when sc already checkpoints every k, the same
 * step without checkpointing. */
void plan_step_comparison(const struct scenario *sc, uint64_t k_best, struct scenario *out);

/*
 * 0 when every count that eval and the report compute for sc fits in 64 bits: model_eval, the
 * ladder (whose rungs may bring back what sc leaves out, e.g. the attention scores that selective
 * recomputation drops come back with full checkpointing), the comparison step, and M(k) for every
 * k of the k-curve; -1 otherwise. Config rejects the rows for which it fails, so that what it
 * accepts is always evaluated, planned and charted. Costs a plan_build.
 */
int plan_check(const struct scenario *sc);

#endif
