/* plan: see plan.h. The ladder, its order and the re-picked micro-batch are doc/model.md
 * section 11; rung 4's order comes from the cost model of section 12. */
#include "plan/plan.h"

#include <string.h>

#include "base/strbuf.h"
#include "model/pipeline.h"

/* The ladder's running state: the cumulative settings and where the next rung goes. */
struct ladder {
    const struct scenario *orig;
    struct scenario cur;
    struct plan *p;
    bool repick;              /* from rung 3 on, every rung re-picks the micro-batch */
    struct model_cache *memo; /* the caller's memo of layer inventories, or NULL */
    bool overflow;            /* a byte count overflowed: the plan is unusable */
};

const char *plan_fix_name(enum plan_fix fix)
{
    static const char *const names[] = {"none",        "flash",     "zero1",   "zero2",
                                        "micro_batch", "full_ckpt", "zero3",   "tp",
                                        "pp",          "offload",   "nothing", "layout"};
    return (unsigned)fix <= PLAN_FIX_LAYOUT ? names[fix] : "?";
}

/* The largest b' <= the scenario's b that fits with sc's other settings; 1 when none does (the
 * lowest peak). b_fails: b is already known not to fit (the micro_batch rung has the settings of
 * the rung before it). Below b the rank's batch takes several micro-batches: the search keeps
 * the scenario's m micro-batches a step, at least 2 - gradient accumulation, whose earlier
 * micro-batches' gradients the step holds as its backward starts, and a pipeline's micro-batches
 * in flight (doc/model.md 6.1, 10.2, 11.2); with m fixed the peak grows with b', so b' is the
 * whole answer. The rung itself keeps the scenario's global batch. */
static uint64_t repick_micro_batch(const struct scenario *sc, uint64_t b, bool b_fails,
                                   struct model_cache *memo, struct terms *at_b, bool *known)
{
    struct scenario trial = *sc;
    trial.micro_batch = b;
    *known = false;
    if (!b_fails && model_peak_cached(&trial, memo, at_b) == MODEL_OK && at_b->fits) {
        *known = true; /* the rung's terms: no second model_peak */
        return b;
    }
    uint64_t m = pipeline_micro_batches(&trial);
    trial.global_batch = b * trial.dp * (m > 1 ? m : 2);
    uint64_t best = model_max_micro_batch_cached(&trial, memo);
    if (best == 0)
        return 1;
    return best < b ? best : b;
}

/* Records a rung for the current settings; returns true when the ladder stops (it fits, or a
 * count overflowed). */
static bool try_rung(struct ladder *ld, enum plan_fix fix)
{
    struct plan *p = ld->p;
    if (p->n_rungs >= PLAN_MAX_RUNGS)
        return false; /* cannot happen: see PLAN_MAX_RUNGS */
    struct plan_rung *r = &p->rungs[p->n_rungs];
    r->fix = fix;
    r->sc = ld->cur;
    bool known = false;
    if (ld->repick)
        r->sc.micro_batch =
            repick_micro_batch(&ld->cur, ld->orig->micro_batch, fix == PLAN_FIX_MICRO_BATCH,
                               ld->memo, &r->terms, &known);
    if (!known && model_peak_cached(&r->sc, ld->memo, &r->terms) != MODEL_OK) {
        ld->overflow = true;
        return true;
    }
    p->n_rungs++;
    r->fits = r->terms.fits;
    uint64_t b = r->sc.micro_batch;
    r->thin_matmuls = b < ld->orig->micro_batch && r->sc.seq * b < PLAN_THIN_TOKENS;
    return r->fits;
}

/* The step-time overhead of sc, for choosing between full_ckpt and zero3 (rung 4). */
static double overhead_of(const struct scenario *sc, struct model_cache *memo, bool *overflow)
{
    struct terms t;
    struct cost c;
    if (model_peak_cached(sc, memo, &t) != MODEL_OK) {
        *overflow = true;
        return 0.0;
    }
    cost_step(sc, &t, &c);
    return c.overhead_s;
}

static void apply(struct scenario *sc, enum plan_fix fix)
{
    if (fix == PLAN_FIX_FULL_CKPT) { /* every layer (no block recomputation, 5.4) */
        sc->recompute = RECOMPUTE_EVERY_K;
        sc->ckpt_every = 1;
        sc->recompute_layers = 0;
    } else if (fix == PLAN_FIX_ZERO3) {
        sc->zero = 3;
    }
}

/* Rung 4: full checkpointing (+33% FLOPs) and ZeRO-3 (1.5x dp traffic), the cheaper first by
 * the cost model (full_ckpt on a tie: it needs no other GPU), then both. */
static bool rung_recompute_or_shard(struct ladder *ld)
{
    const struct scenario *sc = &ld->cur;
    /* block recomputation (5.4) leaves layers to recompute: full is a rung above it */
    bool full_ok =
        !(sc->recompute == RECOMPUTE_EVERY_K && sc->ckpt_every == 1 && sc->recompute_layers == 0);
    bool zero3_ok = sc->dp > 1 && sc->zero < 3;
    enum plan_fix order[2];
    int n = 0;
    if (full_ok && zero3_ok) {
        struct scenario full = *sc, z3 = *sc;
        apply(&full, PLAN_FIX_FULL_CKPT);
        apply(&z3, PLAN_FIX_ZERO3);
        double t_full = overhead_of(&full, ld->memo, &ld->overflow);
        double t_z3 = overhead_of(&z3, ld->memo, &ld->overflow);
        if (ld->overflow)
            return true;
        order[n++] = t_z3 < t_full ? PLAN_FIX_ZERO3 : PLAN_FIX_FULL_CKPT;
        order[n++] = t_z3 < t_full ? PLAN_FIX_FULL_CKPT : PLAN_FIX_ZERO3;
    } else if (full_ok) {
        order[n++] = PLAN_FIX_FULL_CKPT;
    } else if (zero3_ok) {
        order[n++] = PLAN_FIX_ZERO3;
    }
    for (int i = 0; i < n; i++) {
        apply(&ld->cur, order[i]);
        if (try_rung(ld, order[i]))
            return true;
    }
    return false;
}

/* Whether a layout of the same GPUs keeps config's rules for the degrees the tp and pp rungs
 * change (doc/model.md 13.2): the expert groups tile a stage (dp cp tp), an HSDP group divides
 * dp * cp. */
static bool layout_ok(const struct scenario *sc)
{
    uint64_t etp = sc->etp ? sc->etp : sc->tp, ep = sc->ep ? sc->ep : 1;
    uint64_t cp = sc->cp ? sc->cp : 1;
    if ((sc->dp * cp * sc->tp) % (etp * ep) != 0)
        return false;
    return !sc->zero_group || (sc->dp * cp) % sc->zero_group == 0;
}

/* Rung 5: tensor + sequence parallelism inside a node, t = 2, 4, 8, ... above the scenario's tp,
 * t <= gpus_per_node, t dividing heads and kv_heads (config's rule for tp), on the same GPUs:
 * t dp' = tp dp, so only where t divides dp tp (doc/model.md 11.1). */
static bool rung_tensor_parallel(struct ladder *ld)
{
    uint64_t gpus = ld->orig->dp * ld->orig->tp; /* of a pipeline stage and context group */
    for (uint64_t t = 2; t <= ld->orig->gpus_per_node && t <= ld->orig->heads; t *= 2) {
        if (t <= ld->orig->tp || ld->orig->heads % t != 0 || ld->orig->kv_heads % t != 0 ||
            gpus % t != 0)
            continue;
        struct scenario next = ld->cur;
        next.tp = t;
        next.dp = gpus / t;
        next.sp = true;
        if (!layout_ok(&next))
            continue;
        ld->cur = next;
        if (try_rung(ld, PLAN_FIX_TP))
            return true;
    }
    return false;
}

/* Rung 6: pipeline stages across nodes on the same GPUs, p = 2, 4, ... above the scenario's pp,
 * p dividing dp pp (p dp' = pp dp), the layers split over p stages as the scenario's first and
 * last stages say, or evenly, or ceil and floor (doc/model.md 6.3, 11.1). */
static bool rung_pipeline_parallel(struct ladder *ld)
{
    uint64_t gpus = ld->cur.dp * ld->cur.pp;
    for (uint64_t p = 2; p <= ld->orig->layers && p <= gpus; p *= 2) {
        if (p <= ld->orig->pp || gpus % p != 0)
            continue;
        struct scenario next = ld->cur;
        next.pp = p;
        next.dp = gpus / p;
        if (!pipeline_split_valid(&next) || !layout_ok(&next))
            continue;
        ld->cur = next;
        if (try_rung(ld, PLAN_FIX_PP))
            return true;
    }
    return false;
}

/* Rungs 1 to 7 in order; returns true when one fits (or on overflow). */
static bool run_ladder(struct ladder *ld)
{
    struct scenario *cur = &ld->cur;
    /* flash drops the scores, unless selective recomputation already does (core_attn, 5.5) */
    if (cur->attention == ATTENTION_PLAIN &&
        !(scenario_recompute_modules(cur) & RECOMPUTE_CORE_ATTN)) {
        cur->attention = ATTENTION_FLASH;
        if (try_rung(ld, PLAN_FIX_FLASH))
            return true;
    }
    for (unsigned stage = 1; stage <= 2 && cur->dp > 1; stage++) {
        if (cur->zero >= stage)
            continue;
        cur->zero = stage;
        if (try_rung(ld, stage == 1 ? PLAN_FIX_ZERO1 : PLAN_FIX_ZERO2))
            return true;
    }
    ld->repick = true;
    if (ld->orig->micro_batch > 1 && try_rung(ld, PLAN_FIX_MICRO_BATCH))
        return true;
    if (rung_recompute_or_shard(ld) || rung_tensor_parallel(ld) || rung_pipeline_parallel(ld))
        return true;
    if (cur->offload == OFFLOAD_NONE) {
        cur->offload = OFFLOAD_OPTIMIZER;
        if (try_rung(ld, PLAN_FIX_OFFLOAD))
            return true;
    }
    return false;
}

int plan_build(const struct scenario *sc, struct plan *out)
{
    struct terms base;
    if (model_peak(sc, &base) != MODEL_OK)
        return -1;
    return plan_build_from(sc, &base, out);
}

int plan_build_from(const struct scenario *sc, const struct terms *base, struct plan *out)
{
    if (plan_build_memo(sc, base, NULL, out) != 0)
        return -1;
    plan_add_costs(sc, base, out);
    return 0;
}

void plan_add_costs(const struct scenario *sc, const struct terms *base, struct plan *p)
{
    if (p->base_fits)
        return;
    cost_step(sc, base, &p->base_cost);
    for (size_t i = 0; i < p->n_rungs; i++) {
        struct plan_rung *r = &p->rungs[i];
        cost_step(&r->sc, &r->terms, &r->cost);
        r->extra_time_s = r->cost.overhead_s - p->base_cost.overhead_s;
    }
}

int plan_build_memo(const struct scenario *sc, const struct terms *base, struct model_cache *memo,
                    struct plan *out)
{
    /* Only the scalar fields are set: the rungs array is large and a fitting scenario (the eval
     * hot path) leaves it empty. */
    out->base_params = base->params;
    out->base_peak_bytes = base->peak_bytes;
    out->base_fits = base->fits;
    out->n_rungs = 0;
    out->fix_rung = -1;
    out->base_micro_batch = sc->micro_batch;
    out->base_sp = sc->sp;
    out->base_dp = sc->dp;
    out->gpus_for_states = model_states_gpus(sc, out->base_params);
    out->fix_peak_bytes = out->base_peak_bytes;
    out->fix_micro_batch = sc->micro_batch;
    if (out->base_fits) {
        out->fix = PLAN_FIX_NONE;
        return 0;
    }
    struct ladder ld = {sc, *sc, out, false, memo, false};
    bool found = run_ladder(&ld);
    if (ld.overflow)
        return -1;
    if (!found) {
        out->fix = PLAN_FIX_NOTHING;
        if (out->n_rungs > 0) {
            const struct plan_rung *last = &out->rungs[out->n_rungs - 1];
            out->fix_peak_bytes = last->terms.peak_bytes;
            out->fix_micro_batch = last->sc.micro_batch;
        }
        return 0;
    }
    const struct plan_rung *r = &out->rungs[out->n_rungs - 1];
    out->fix = r->fix;
    out->fix_rung = (int)(out->n_rungs - 1);
    out->fix_peak_bytes = r->terms.peak_bytes;
    out->fix_micro_batch = r->sc.micro_batch;
    return 0;
}

/* The decimal digits of v, into the end of a buffer of 24; returns where they start. */
static const char *u64_text(uint64_t v, char digits[24])
{
    char *d = digits + 23;
    *d = '\0';
    do
        *--d = (char)('0' + v % 10);
    while ((v /= 10) > 0);
    return d;
}

/* " key=value" (no space first): by hand, not printf, as every row of eval that does not fit
 * comes here. */
static void put_setting(struct strbuf *w, const char *key, const char *value)
{
    if (w->len)
        strbuf_puts(w, " ");
    strbuf_puts(w, key);
    strbuf_puts(w, "=");
    strbuf_puts(w, value);
}

static void put_setting_u64(struct strbuf *w, const char *key, uint64_t value)
{
    char digits[24];
    put_setting(w, key, u64_text(value, digits));
}

/* plan_rung_settings into w (rung < n_rungs). */
static void rung_settings(const struct plan *p, size_t rung, struct strbuf *w)
{
    const struct scenario *fin = &p->rungs[rung].sc;
    bool zero = false, tp = false, pp = false;
    for (size_t i = 0; i <= rung; i++) {
        switch (p->rungs[i].fix) {
        case PLAN_FIX_FLASH:
            put_setting(w, "attention", "flash");
            break;
        case PLAN_FIX_ZERO1:
        case PLAN_FIX_ZERO2:
        case PLAN_FIX_ZERO3:
            if (!zero)
                put_setting_u64(w, "zero", fin->zero);
            zero = true;
            break;
        case PLAN_FIX_FULL_CKPT:
            put_setting(w, "recompute", "full");
            break;
        case PLAN_FIX_TP:
            if (!tp) {
                put_setting_u64(w, "tp", fin->tp);
                if (!p->base_sp)
                    put_setting(w, "sp", "yes");
            }
            tp = true;
            break;
        case PLAN_FIX_PP:
            if (!pp)
                put_setting_u64(w, "pp", fin->pp);
            pp = true;
            break;
        case PLAN_FIX_OFFLOAD:
            put_setting(w, "offload", "optimizer");
            break;
        default: /* micro_batch: printed last, with its final value */
            break;
        }
    }
    if (fin->micro_batch != p->base_micro_batch)
        put_setting_u64(w, "micro_batch", fin->micro_batch);
    /* tp and pp re-assign data-parallel GPUs: dp follows. */
    if (fin->dp != p->base_dp)
        put_setting_u64(w, "dp", fin->dp);
}

int plan_rung_settings(const struct plan *p, size_t rung, char *buf, size_t size)
{
    struct strbuf w;
    strbuf_init_fixed(&w, buf, size);
    if (rung < p->n_rungs)
        rung_settings(p, rung, &w);
    return w.err == STRBUF_OK ? 0 : -1;
}

int plan_fix_settings(const struct plan *p, char *buf, size_t size)
{
    if (p->fix_rung < 0) {
        if (size > 0)
            buf[0] = '\0';
        return 0;
    }
    struct strbuf w;
    strbuf_init_fixed(&w, buf, size);
    rung_settings(p, (size_t)p->fix_rung, &w);
    /* The GPU count the fix keeps (no rung adds GPUs; doc/model.md 11.4). */
    put_setting_u64(&w, "gpus", plan_gpus(&p->rungs[p->fix_rung].sc));
    return w.err == STRBUF_OK ? 0 : -1;
}

uint64_t plan_gpus(const struct scenario *sc)
{
    return sc->dp * sc->tp * sc->pp * (sc->cp ? sc->cp : 1);
}

const char *plan_mode_name(enum plan_mode mode)
{
    static const char *const names[] = {"plain", "flash", "selective", "full"};
    return (unsigned)mode < PLAN_MODES ? names[mode] : "?";
}

void plan_mode_scenario(const struct scenario *sc, enum plan_mode mode, struct scenario *out)
{
    *out = *sc;
    out->attention =
        mode == PLAN_MODE_FLASH || mode == PLAN_MODE_FULL ? ATTENTION_FLASH : ATTENTION_PLAIN;
    out->recompute = mode == PLAN_MODE_SELECTIVE ? RECOMPUTE_SELECTIVE
                     : mode == PLAN_MODE_FULL    ? RECOMPUTE_EVERY_K
                                                 : RECOMPUTE_NONE;
    out->ckpt_every = mode == PLAN_MODE_FULL ? 1 : 0;
    out->recompute_layers = 0; /* the lesson's modes: every layer, the core alone (5.4, 5.5) */
    out->recompute_modules = 0;
}

void plan_max_micro_batches(const struct scenario *sc, uint64_t out[PLAN_MODES])
{
    for (int m = 0; m < PLAN_MODES; m++) {
        struct scenario trial;
        plan_mode_scenario(sc, (enum plan_mode)m, &trial);
        out[m] = model_max_micro_batch(&trial);
    }
}

void plan_step_comparison(const struct scenario *sc, uint64_t k_best, struct scenario *out)
{
    *out = *sc;
    out->recompute_layers = 0;
    out->recompute_modules = 0;
    if (sc->recompute == RECOMPUTE_EVERY_K) {
        out->recompute = RECOMPUTE_NONE;
        out->ckpt_every = 0;
        return;
    }
    out->recompute = RECOMPUTE_EVERY_K;
    out->ckpt_every = k_best ? k_best : 1;
}

int plan_check(const struct scenario *sc)
{
    struct terms t, cmp_t;
    struct plan p; /* about 20 KB: config calls this only for rows near the limit */
    if (sc->pp == 0 || model_eval(sc, &t) != MODEL_OK || plan_build_from(sc, &t, &p) != 0)
        return -1;
    struct scenario cmp;
    plan_step_comparison(sc, t.k_best, &cmp);
    if (model_peak(&cmp, &cmp_t) != MODEL_OK)
        return -1;
    /* M(k) = m ceil(n/k) c + k A for a stage of n layers: each term is at most its value at one
     * end of k = 1..n, so M(1) + M(n) bounds every point of the curve. */
    uint64_t first, last, sum;
    if (model_ckpt_peak(sc, &t, 1, &first) != MODEL_OK ||
        model_ckpt_peak(sc, &t, pipeline_max_stage_layers(sc), &last) != MODEL_OK ||
        __builtin_add_overflow(first, last, &sum))
        return -1;
    return 0;
}
