/*
 * model_acts: the activations of doc/model.md section 4 - one layer's, by kind, with tensor,
 * sequence and context parallelism (4.3, 4.11) and the routed experts' rows (4.7) - the
 * checkpoint c and the logits (section 7), M(k) with checkpointing every k layers (sections 5.1
 * and 6.2), k* and the best integer k (5.2), and where the attention core outgrows the rest of
 * the layer (4.6). model.h declares the public functions, model_internal.h the helpers the other
 * model files share (the small ones inline). Comments cite doc/model.md sections, which name the
 * primary sources.
 */
#include "model/model.h"

#include <math.h>

#include "base/checked.h"
#include "model/layer.h"
#include "model/model_internal.h"
#include "model/step.h"

/* The sums of the kept tensors of sc's main layer kind (MoE when it has MoE layers). */
static enum model_status act_sums(const struct scenario *sc, struct layer_act_sums *out)
{
    struct layer_inventory inv;
    bool moe = sc->experts > 0 && sc->dense_layers < sc->layers;
    if (!layer_inventory_sums(sc, moe ? LAYER_MOE : LAYER_DENSE, &inv) ||
        !layer_act_sums(sc, &inv, out))
        return MODEL_OVERFLOW;
    return MODEL_OK;
}

enum model_status model_layer_act(const struct scenario *sc, struct model_layer_act *out)
{
    struct layer_act_sums sums;
    if (act_sums(sc, &sums) != MODEL_OK)
        return MODEL_OVERFLOW;
    return model_layer_act_from(sc, &sums, sc->micro_batch, out);
}

enum model_status model_ckpt_bytes(const struct scenario *sc, uint64_t *out)
{
    return model_ckpt_bytes_at(sc, sc->micro_batch, out);
}

enum model_status model_logits_bytes(const struct scenario *sc, uint64_t *out)
{
    return model_logits_bytes_at(sc, sc->micro_batch, out);
}

enum model_status model_stage_act(const struct scenario *sc, uint64_t layer_act, uint64_t ckpt,
                                  uint64_t micro_batches, uint64_t k, uint64_t *out)
{
    /* The first stage's layers, all of one kind, in one chunk. */
    uint64_t n = pipeline_layers_of(sc, 0);
    struct pipeline_stage st = {.layers = {n, 0},
                                .in_flight = micro_batches,
                                .act_layers = {micro_batches * n, 0},
                                .chunk_layers = n};
    const uint64_t act[2] = {layer_act, 0};
    return model_stage_act_of(sc, &st, act, ckpt, k, out);
}

enum model_status model_ckpt_peak(const struct scenario *sc, const struct terms *t, uint64_t k,
                                  uint64_t *out)
{
    struct checked ck = {false};
    /* Checkpointing every k of every layer: not the scenario's block recomputation, if any. */
    struct scenario at_k = *sc;
    at_k.recompute = k ? RECOMPUTE_EVERY_K : RECOMPUTE_NONE;
    at_k.ckpt_every = k;
    at_k.recompute_layers = 0;
    *out = 0;
    if (sc->peak == PEAK_STEP) { /* the step's phases with checkpointing every k (or none) */
        for (unsigned i = 0; i < t->n_stages; i++) {
            struct step_gpu sg;
            struct step_peak sp;
            model_step_gpu_at(&at_k, t, (int)i, sc->micro_batch, t->kind_act, t->ckpt_bytes, &sg,
                              NULL, &ck);
            if (!step_phases(&sg, &sp))
                return MODEL_OVERFLOW;
            *out = sp.bytes > *out ? sp.bytes : *out;
        }
        return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
    }
    for (unsigned i = 0; i < t->n_stages; i++) {
        uint64_t act;
        if (model_stage_act_of(&at_k, &t->stage[i].pipe, t->kind_act, t->ckpt_bytes, k, &act) !=
            MODEL_OK)
            return MODEL_OVERFLOW;
        uint64_t p =
            ck_add(&ck, t->stage[i].states_bytes, ck_add(&ck, act, t->stage[i].logits_bytes));
        if (p > *out)
            *out = p;
    }
    return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
}

double model_k_star(const struct scenario *sc, const struct terms *t)
{
    uint64_t a = model_first_stage_act(t);
    return a ? sqrt((double)sc->layers * (double)t->ckpt_bytes / (double)a) : 0;
}

double model_act_k_star(const struct scenario *sc, const struct terms *t)
{
    return 2 * sqrt((double)sc->layers * (double)t->ckpt_bytes * (double)model_first_stage_act(t));
}

/* M(k) = (the checkpoints of its chunks) c + min(k, the largest chunk) A for every k up to the
 * largest chunk: the smallest, the first on a tie. For a GPU whose chunks differ: two stages
 * under DualPipe, or a chunk a layer short (the embedding's or the loss's slot, 6.3). */
static enum model_status every_k_best(const struct pipeline_stage *st, uint64_t A, uint64_t c,
                                      uint64_t *k_best, uint64_t *act_bytes)
{
    struct checked ck = {false};
    uint64_t most = pipeline_segment_layers(st, UINT64_MAX), best = UINT64_MAX, best_k = 1;
    for (uint64_t k = 1; k <= most; k++) {
        uint64_t mk = ck_add(&ck, ck_mul(&ck, pipeline_checkpoints(st, k), c), ck_mul(&ck, k, A));
        if (mk < best) {
            best = mk;
            best_k = k;
        }
    }
    *k_best = best_k;
    *act_bytes = best;
    return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
}

/* model_k_best with the first stage, one layer's activations A and checkpoint c known
 * (model_eval has them). */
enum model_status model_k_best_from(const struct scenario *sc, const struct pipeline_stage *st,
                                    uint64_t A, uint64_t c, uint64_t *k_best, uint64_t *act_bytes)
{
    /* M(k) = m ceil(n/k) c + k A for the n layers of a chunk and m chunk-micro-batches in
     * flight (model_stage_act_of, inline: eval computes k_best for every row). With the checkpoints
     * offloaded M(k) = c + k A: k = 1. Else start at the continuous optimum sqrt(m n c / A); any
     * k with k A or m n c / k above the best M found cannot win, which bounds the scan to a few
     * values around it. */
    uint64_t n = st->chunk_layers, m = st->in_flight;
    struct checked ck = {false};
    if (sc->offload != OFFLOAD_CHECKPOINTS && (st->twin_in_flight > 0 || st->short_chunk))
        return every_k_best(st, A, c, k_best, act_bytes); /* chunks that differ: every k */
    if (sc->offload == OFFLOAD_CHECKPOINTS || n <= 1) {
        *k_best = 1;
        *act_bytes = ck_add(&ck, sc->offload == OFFLOAD_CHECKPOINTS ? c : ck_mul(&ck, m, c), A);
        return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
    }
    double kc = sqrt((double)m * (double)n * (double)c / (double)A);
    uint64_t k0 = kc < 1 ? 1 : kc > (double)n ? n : (uint64_t)kc;
    uint64_t best_k = k0;
    uint64_t best = ck_add(&ck, ck_mul3(&ck, m, div_up(n, k0), c), ck_mul(&ck, k0, A));
    uint64_t all_ckpt = ck_mul3(&ck, m, n, c);
    if (ck.overflow)
        return MODEL_OVERFLOW;
    uint64_t lo = all_ckpt / (best + 1), hi = best / A;
    lo = lo < 1 ? 1 : lo;
    hi = hi > n ? n : hi;
    for (uint64_t k = lo; k <= hi; k++) {
        uint64_t mk = ck_add(&ck, ck_mul3(&ck, m, div_up(n, k), c), ck_mul(&ck, k, A));
        if (mk < best || (mk == best && k < best_k)) {
            best = mk;
            best_k = k;
        }
    }
    *k_best = best_k;
    *act_bytes = best;
    return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
}

enum model_status model_k_best(const struct scenario *sc, uint64_t *k_best, uint64_t *act_bytes)
{
    struct terms t;
    if (model_peak(sc, &t) != MODEL_OK)
        return MODEL_OVERFLOW;
    return model_k_best_from(sc, &t.stage[MODEL_STAGE_FIRST].pipe, model_first_stage_act(&t),
                             t.ckpt_bytes, k_best, act_bytes);
}

bool model_core_coefficients(const struct scenario *sc, uint64_t *linear, uint64_t *core)
{
    /* At s = 1, b = 1 without tp: the linear part (every tensor but the scores; routed rows at
     * one token) and the core, a coefficient times a. */
    struct scenario one = *sc;
    one.seq = one.micro_batch = one.tp = 1;
    one.sp = false;
    one.attention = ATTENTION_PLAIN;
    one.recompute = RECOMPUTE_NONE;
    struct model_layer_act a;
    if (model_layer_act(&one, &a) != MODEL_OK || a.attn == 0)
        return false;
    *linear = a.total - a.attn;
    *core = a.attn;
    return true;
}

double model_core_crossover_seq(const struct scenario *sc)
{
    /* The linear part grows as s b L1 and the core as C s^2 b: equal at s = L1 / C. */
    uint64_t linear, core;
    if (!model_core_coefficients(sc, &linear, &core))
        return 0;
    return (double)linear / (double)core;
}

double model_selective_overhead(uint64_t seq, uint64_t hidden)
{
    /* Recomputing the core costs 4bs^2h FLOPs per layer against 3(24bsh^2 + 4bs^2h) per step. */
    return (double)seq / (18.0 * (double)hidden + 3.0 * (double)seq);
}
