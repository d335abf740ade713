/*
 * cheapest: the verdict's fix under the step's peak (doc/model.md section 11.6) - the fastest
 * layout that fits on the row's own GPUs, with its global batch, model, precision, optimizer,
 * fine-tuning and fp8 kept: search_fix of the row with every layout choice free. It is reported
 * as the fewest changes: among the layouts within CHEAPEST_TOLERANCE of the fastest step, the
 * one that changes the fewest settings of the row (cheapest_changes), ties by the step time,
 * then the search's order.
 *
 * A memo keeps the layouts within the tolerance of each distinct job (the row less its layout):
 * the rows of an eval that do not fit share few jobs, and a job's search takes milliseconds.
 * The memo allocates; one per thread, or one shared under the caller's lock (cheapest_memo_share).
 */
#ifndef MEMFIT_CHEAPEST_H
#define MEMFIT_CHEAPEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "model/scenario.h"
#include "plan/plan.h"
#include "plan/search.h"

/* Layouts within 2% of the fastest step count as fast as it (doc/model.md 11.6). */
#define CHEAPEST_TOLERANCE SEARCH_FIX_NEAR
/* The fastest layouts a job's search keeps; those within the tolerance among them are the
 * candidates. */
#define CHEAPEST_TOP 64
/* A buffer this long always holds cheapest_settings' text whole. */
#define CHEAPEST_SETTINGS_MAX 512

enum cheapest_status {
    CHEAPEST_FOUND,     /* sc is the fix */
    CHEAPEST_NONE,      /* no layout of these GPUs fits */
    CHEAPEST_UNSEARCHED /* the search could not run (too large, no memory): no answer */
};

struct cheapest {
    enum cheapest_status status;
    struct scenario sc; /* the fix: the row with the chosen layout, its name kept */
    uint64_t peak_bytes, budget_bytes;
    double step_time_s;      /* of the fix (cost.h) */
    double base_step_time_s; /* of the row as given, which does not fit (cost.h) */
    unsigned changes;        /* cheapest_changes(row, sc) */
    /* A note, never applied (it changes the training's arithmetic): the bytes 8-bit Adam would
     * take off the row's peak as configured (0: not AdamW, or no saving). */
    uint64_t adam8_saving_bytes;
    /* A note, never applied (the same): where the GPU has FP8 tensor cores (its preset's
     * fp8_tflops) and the row trains a full model without FP8, the bytes FP8 training with
     * per-tensor scaling (fp8=tensor, doc/model.md 3.7, 4.10) would take off its peak as
     * configured (0: no saving, or no note) and the seconds it would take off its step (cost.h,
     * section 12.1; 0: none). */
    uint64_t fp8_saving_bytes;
    double fp8_time_saved_s;
};

struct cheapest_memo;
/* NULL when out of memory (cheapest_fix then searches every time). */
struct cheapest_memo *cheapest_memo_new(void);
void cheapest_memo_free(struct cheapest_memo *m);

/* The caller's lock around a memo that threads share (a mutex's lock and unlock). */
struct cheapest_lock {
    void (*lock)(void *ctx);
    void (*unlock)(void *ctx);
    void (*wait)(void *ctx); /* locked: until a wake, unlocked meanwhile (a condition's wait) */
    void (*wake)(void *ctx); /* every waiting thread (a condition's broadcast) */
    void *ctx;
};

/* Makes m shareable by threads: its table is read and written under lk (a search runs outside
 * it; a thread that needs a job another is searching waits for that search), and an answer once
 * kept is never replaced (a full neighbourhood keeps the new answer the caller's only). */
void cheapest_memo_share(struct cheapest_memo *m, const struct cheapest_lock *lk);

/*
 * The fix of sc (t: its terms, model_eval or model_peak), into *out. memo and cache (the layer
 * inventories, model_cache_new) may be NULL. Returns 0, or -1 when a count overflowed.
 */
int cheapest_fix(const struct scenario *sc, const struct terms *t, struct cheapest_memo *memo,
                 struct model_cache *cache, struct cheapest *out);

/* The notes of a fix already in *out (cheapest_fix of sc and t, which leaves them 0): what
 * 8-bit Adam and FP8 would save. Apart, since only the table and the report say them, and each
 * costs a row another peak. */
void cheapest_notes(const struct scenario *sc, const struct terms *t, struct model_cache *cache,
                    struct cheapest *out);

/* How many settings fix changes from row: tp, sp (when tp stays), pp, vpp, cp, ep, etp, dp,
 * zero, zero_group, attention, loss, recompute (with its k), offload, micro_batch. */
unsigned cheapest_changes(const struct scenario *row, const struct scenario *fix);

/* The name of the fix in eval's `fix` column: the ladder's rung when fix changes what one rung
 * does and nothing else (flash, zero1-3, micro_batch, full_ckpt, tp or pp with the dp they
 * leave, offload of the optimizer), else PLAN_FIX_LAYOUT. */
enum plan_fix cheapest_kind(const struct scenario *row, const struct scenario *fix);

/* The settings fix changes, `column=value` joined by spaces in the order above, then the GPU
 * count kept ("tp=2 sp=yes dp=4 offload=optimizer gpus=8"). Returns 0, or -1 when cut. */
int cheapest_settings(const struct scenario *row, const struct scenario *fix, char *buf,
                      size_t size);

#endif
