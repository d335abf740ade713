/*
 * model_batch: the largest micro-batch that fits the budget (doc/model.md section 8.3; under the
 * step model, section 10.2): each stage's peak at any b from the model states of the scenario's
 * terms, an estimate from the peak's slope in b, then a search up from it. model.h declares the
 * public functions, model_internal.h model_max_micro_batch_from, which model_eval uses. Comments
 * cite doc/model.md sections, which name the primary sources.
 */
#include "model/model.h"

#include "base/checked.h"
#include "model/model_internal.h"
#include "model/step.h"

/* The peak of each pipeline stage at micro-batch b, reusing the model states of `base` (they do
 * not depend on b), each layer kind's activations from sums (sc's; base's own when it is sc's
 * peak). lesson_too: the lesson's sum is computed in the step model as well, as model_peak does
 * (its overflow is an overflow). false on overflow, and as soon as a stage's peak is above
 * `above` (base's peak stage first, the likeliest). */
static bool stage_peaks_at(const struct scenario *sc, const struct terms *base,
                           const struct layer_act_sums sums[2], bool lesson_too, uint64_t above,
                           uint64_t b, uint64_t peak[MODEL_STAGES])
{
    uint64_t kind_act[2] = {0, 0}, c, logits;
    for (int i = 0; i < 2; i++) {
        struct model_layer_act act;
        if (base->kind_act[i] == 0)
            continue; /* no layer of that kind */
        if (model_layer_act_from(sc, &sums[i], b, &act))
            return false;
        kind_act[i] = act.total;
    }
    if (model_ckpt_bytes_at(sc, b, &c) || model_logits_bytes_at(sc, b, &logits))
        return false;
    uint64_t k = sc->recompute == RECOMPUTE_EVERY_K ? sc->ckpt_every : 0;
    struct checked ck = {false};
    uint64_t ring = model_context_ring_bytes(sc, b, &ck);
    for (unsigned j = 0; j < base->n_stages; j++) {
        unsigned i = (base->peak_stage + j) % base->n_stages;
        if (sc->peak == PEAK_LESSON || lesson_too) {
            uint64_t act_bytes;
            if (model_stage_act_of(sc, &base->stage[i].pipe, kind_act, c, k, &act_bytes))
                return false;
            uint64_t l = model_loss_term(sc, &base->stage[i].pipe, logits, kind_act, &ck);
            act_bytes = ck_add(&ck, act_bytes, ring);
            peak[i] = ck_add(&ck, base->stage[i].states_bytes, ck_add(&ck, act_bytes, l));
        }
        if (sc->peak == PEAK_STEP) {
            struct step_gpu sg;
            struct step_peak sp;
            model_step_gpu_at(sc, base, (int)i, b, kind_act, c, &sg, NULL, &ck);
            if (!step_phases(&sg, &sp))
                return false;
            peak[i] = sp.bytes;
        }
        if (peak[i] > above)
            return false;
    }
    return !ck.overflow;
}

/* Whether every stage's peak at b (stage_peaks_at) is within base's budget: false at the first
 * that is not. */
static bool peaks_fit(const struct scenario *sc, const struct terms *base,
                      const struct layer_act_sums sums[2], bool lesson_too, uint64_t b)
{
    uint64_t peak[MODEL_STAGES];
    return stage_peaks_at(sc, base, sums, lesson_too, base->budget_bytes, b, peak);
}

static bool fits_with_micro_batch(const struct scenario *sc, const struct terms *base, uint64_t b)
{
    return peaks_fit(sc, base, base->act_sums, false, b);
}

bool model_fits_like(const struct scenario *sc, struct model_cache *cache, const struct terms *like,
                     uint64_t b)
{
    struct kinds built;
    struct states_layer st[2];
    const struct kinds *kinds = model_layer_kinds_cached(sc, cache, &built, st);
    if (!kinds)
        return false;
    if (sc->offload != OFFLOAD_CHECKPOINTS)
        return like->host_fits && peaks_fit(sc, like, kinds->sums, true, b);
    /* The offloaded checkpoints' host memory grows with b (doc/model.md 5.3, 12.5). */
    struct checked ck = {false};
    uint64_t c, heaviest = 0;
    if (model_ckpt_bytes_at(sc, b, &c))
        return false;
    for (unsigned i = 0; i < like->n_stages; i++) {
        uint64_t host = model_ckpt_host_bytes(sc, &like->stage[i].pipe, c, &ck);
        heaviest = host > heaviest ? host : heaviest;
    }
    uint64_t node = model_node_host_bytes(sc, heaviest, &ck);
    if (ck.overflow || (sc->host_mem_bytes && node > sc->host_mem_bytes))
        return false;
    return peaks_fit(sc, like, kinds->sums, true, b);
}

/* The largest b the budget allows if each stage's peak grows by `slope[i]` bytes per micro-batch
 * above its model states; 0 when the states alone do not fit. */
static uint64_t micro_batch_estimate(const struct terms *base, const uint64_t slope[MODEL_STAGES])
{
    uint64_t budget = base->budget_bytes, est = UINT64_MAX;
    for (unsigned i = 0; i < base->n_stages; i++) {
        uint64_t states = base->stage[i].states_bytes;
        if (states >= budget)
            return 0;
        uint64_t b = slope[i] ? (budget - states) / slope[i] : UINT64_MAX;
        if (b < est)
            est = b;
    }
    return est;
}

/* A micro-batch known to fit, to search up from (*exact: the largest that fits); 0 when not even
 * b = 1 fits. The peak is affine
 * in b up to the rounding of divisions. First the slope measured at base_b, the micro-batch of
 * `base`'s peaks, rounded up: usually the answer itself, known without computing another peak
 * (the eval hot path). Without tensor parallelism nothing that grows with b is rounded (no
 * division by tp): each stage's peak is exactly states + b * slope, so the estimate is the
 * largest b that fits, and the search above it finds nothing (every count on the way is at
 * most the peak, itself at most the budget: no overflow either). Failing that, the slope at
 * b = 1, where rounding can only overstate it. */
static uint64_t step_micro_batch_start(const struct scenario *sc, const struct terms *base,
                                       uint64_t base_b, bool *exact);

static uint64_t micro_batch_start(const struct scenario *sc, const struct terms *base,
                                  uint64_t base_b, bool *exact)
{
    uint64_t slope[MODEL_STAGES], peak1[MODEL_STAGES];
    if (sc->peak == PEAK_STEP)
        return step_micro_batch_start(sc, base, base_b, exact);
    /* A capacity factor rounds the routed rows up per expert: not affine in b either. */
    *exact = sc->tp == 1 && sc->capacity_factor <= 0 && sc->peak == PEAK_LESSON;
    for (unsigned i = 0; i < base->n_stages; i++) {
        uint64_t grown = base->stage[i].peak_bytes - base->stage[i].states_bytes;
        slope[i] = div_up(grown, base_b);
        *exact = *exact && grown % base_b == 0;
    }
    uint64_t b = micro_batch_estimate(base, slope);
    if (*exact)
        return b;
    if (b >= 1 && fits_with_micro_batch(sc, base, b))
        return b;
    if (!stage_peaks_at(sc, base, base->act_sums, false, UINT64_MAX, 1, peak1))
        return 0;
    for (unsigned i = 0; i < base->n_stages; i++) {
        if (peak1[i] > base->budget_bytes)
            return 0;
        slope[i] = peak1[i] - base->stage[i].states_bytes;
    }
    b = micro_batch_estimate(base, slope);
    return b > 1 && fits_with_micro_batch(sc, base, b) ? b : 1;
}

/*
 * The step model's micro-batch to search up from: every point of the step is affine in b but for
 * the rounding of divisions (and a capacity factor's), so its values at b = 0 (model_peak keeps
 * them) and at the scenario's own b give each point's largest b, and the smallest of those is
 * the answer when it checks out (one more check above it, by the caller). No step is evaluated
 * here on eval's hot path. 0 when not even b = 1 fits.
 */
static uint64_t step_micro_batch_start(const struct scenario *sc, const struct terms *base,
                                       uint64_t base_b, bool *exact)
{
    uint64_t budget = base->budget_bytes, est = UINT64_MAX;
    uint64_t first[MODEL_STAGES * STEP_POINTS], slopes[MODEL_STAGES * STEP_POINTS];
    int n_points = 0;
    /* Without tensor parallelism and a capacity factor nothing is rounded: every point is
     * exactly affine in b, and the estimate is the answer. */
    *exact = sc->tp == 1 && sc->capacity_factor <= 0;
    bool affine = true; /* but for the rounding of divisions by tp */
    for (unsigned i = 0; i < base->n_stages; i++) {
        const struct step_peak *p0 = &base->stage[i].step_fixed, *pb = &base->stage[i].step;
        for (int ph = 0; ph < STEP_POINTS; ph++) {
            uint64_t v0 = p0->point_bytes[ph], vb = pb->point_bytes[ph], grown, at_est;
            if (vb == 0 && v0 == 0)
                continue; /* a point that does not happen (no rebuild) */
            if (v0 > budget)
                return 0; /* not even the states fit */
            if (v0 == 0 || vb < v0)
                *exact = affine = false; /* a point clamped at 0 for b = 0: not affine there */
            grown = vb > v0 ? vb - v0 : 0;
            uint64_t slope = base_b == 1 ? grown : grown / base_b;
            if (base_b > 1 && slope * base_b != grown)
                *exact = false; /* rounded somewhere */
            first[n_points] = v0;
            slopes[n_points++] = slope;
            /* The division only where this point binds tighter than the estimate so far. */
            if (slope > 0 && (est == UINT64_MAX || __builtin_mul_overflow(slope, est, &at_est) ||
                              at_est > budget - v0))
                est = (budget - v0) / slope;
        }
    }
    if (*exact || est == UINT64_MAX)
        return est;
    /* With tp each point is off its line by at most the rounding of its divisions, a byte each
     * before a count of layers and micro-batches multiplies it (bounded generously by err; the
     * line through b = 0 and base_b is off by err (b / base_b + 1) at b). Clear of the budget
     * by more than that at est and at est + 1, the estimate is the answer without another
     * check. */
    double err = 64.0 * ((double)sc->layers * (double)sc->pp + 64.0) * (2.0 * (double)est + 1.0);
    double room = (double)budget, e = (double)est;
    bool below = affine && est > 0, above = false;
    for (int j = 0; j < n_points && below; j++)
        below = (double)first[j] + (double)slopes[j] * e + err < room;
    for (int j = 0; j < n_points && below && !above; j++)
        above = (double)first[j] + (double)slopes[j] * (e + 1.0) - err > room;
    if (below && above) {
        *exact = true;
        return est;
    }
    if (est > 0 && fits_with_micro_batch(sc, base, est))
        return est;
    /* rounding: the caller searches up from b = 1, if that fits */
    return fits_with_micro_batch(sc, base, 1) ? 1 : 0;
}

/* model_max_micro_batch with the scenario's terms already known (model_peak of sc at micro-batch
 * base_b). */
uint64_t model_max_micro_batch_from(const struct scenario *sc, const struct terms *base,
                                    uint64_t base_b)
{
    bool exact;
    uint64_t lo = micro_batch_start(sc, base, base_b, &exact);
    if (lo == 0 || exact)
        return lo;
    /* lo fits: step up while lo + step still fits. */
    uint64_t step = 1;
    while (lo <= UINT64_MAX - step && fits_with_micro_batch(sc, base, lo + step)) {
        lo += step;
        step *= 2;
    }
    /* lo fits, lo + step does not: bisect the gap. */
    uint64_t hi = lo + step;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (fits_with_micro_batch(sc, base, mid))
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

uint64_t model_max_micro_batch(const struct scenario *sc)
{
    return model_max_micro_batch_cached(sc, NULL);
}

uint64_t model_max_micro_batch_cached(const struct scenario *sc, struct model_cache *cache)
{
    struct terms base;
    uint64_t base_b = sc->micro_batch;
    if (model_peak_with(sc, cache, true, &base) != MODEL_OK) {
        /* Too large at its own b: the states may still fit at b = 1. */
        struct scenario one = *sc;
        one.micro_batch = base_b = 1;
        if (model_peak_with(&one, cache, true, &base) != MODEL_OK)
            return 0;
    }
    return model_max_micro_batch_from(sc, &base, base_b);
}
