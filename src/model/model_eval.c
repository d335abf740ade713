/*
 * model_eval: the entry points that gather every term of a scenario - model_peak (each stage's
 * terms and the most loaded one, model_stage.c) and model_eval (with checkpointing's k* and best
 * k, model_acts.c, and the largest micro-batch, model_batch.c), each also with a memo of the
 * layer kinds - and the cheap bound that no count of model_peak overflows (doc/model.md section
 * 1.2). See model.h. Comments cite doc/model.md sections, which name the primary sources.
 */
#include "model/model.h"

#include "base/checked.h"
#include "model/layer.h"
#include "model/model_internal.h"

/* fixed_too: also each stage's step at b = 0 (step_fixed), for the largest micro-batch. */
enum model_status model_peak_with(const struct scenario *sc, struct model_cache *cache,
                                  bool fixed_too, struct terms *t)
{
    /* Member by member: clearing the whole struct first (about 300 bytes, a rep stos) was a
     * fifth of the time of model_peak. After an overflow every member is 0. */
    t->k_star = 0.0;
    t->k_best = t->act_k_best_bytes = t->max_micro_batch = 0;
    if (model_peak_terms(sc, cache, fixed_too, t) != MODEL_OK) {
        *t = (struct terms){0};
        return MODEL_OVERFLOW;
    }
    return MODEL_OK;
}

enum model_status model_peak(const struct scenario *sc, struct terms *t)
{
    return model_peak_with(sc, NULL, false, t);
}

enum model_status model_peak_cached(const struct scenario *sc, struct model_cache *cache,
                                    struct terms *t)
{
    return model_peak_with(sc, cache, false, t);
}

bool model_peak_cannot_overflow(const struct scenario *sc)
{
    /* Every count model_peak computes is a sum of products of the sizes (each >= 1, but
     * positions and the optional widths) and small constants, so each step's value is at most
     * the whole term it belongs to; the terms are bounded here from above, in double (relative
     * error ~1e-15), for every layer kind at once. Below 2^62 no uint64_t step can overflow. */
    double h = (double)sc->hidden, f = (double)sc->ffn, a = (double)sc->heads;
    double dh = (double)layer_head_dim(sc), g = (double)sc->kv_heads;
    double v = (double)sc->vocab, l = (double)sc->layers;
    double s = (double)sc->seq, b = (double)sc->micro_batch, m = (double)sc->pp;
    double norms = sc->layer_norms ? (double)sc->layer_norms : 2;
    double attn = 2 * h * dh * (a + g) + 2 * (a + 2 * g) * dh + 2 * h;
    double mlp = 3 * h * f + f + h;
    double width = 16 * h + 6 * (a + g) * dh + 8 * f + 8 * a + 4 * norms * h; /* A / (s b) */
    if (sc->kv_lora_rank > 0) {                                               /* latent attention */
        double rq = (double)sc->q_lora_rank, rkv = (double)sc->kv_lora_rank;
        double dn = (double)sc->qk_nope_dim, dr = (double)sc->qk_rope_dim;
        double dv = (double)sc->v_head_dim;
        attn += (rq + h) * (h + a * (dn + dr) + 1) + rkv * (h + a * (dn + dv) + 1) + h * dr +
                a * dv * h;
        width += 4 * (rq + rkv + dr) + 6 * a * (dn + dr + dv);
    }
    if (sc->experts > 0) { /* routed rows padded to capacity: at most k cf T + E, times etp */
        double e = (double)sc->experts, fe = (double)sc->expert_ffn, fs = (double)sc->shared_ffn;
        double k = (double)sc->top_k, cf = sc->capacity_factor > 1 ? sc->capacity_factor : 1;
        double u = (double)(sc->etp ? sc->etp : sc->tp);
        mlp += 3 * h * fe * e + 3 * h * fs + 2 * h * e + e + h;
        width +=
            4 * e + 12 * k + 4 + (k * cf + e) * u * (8 * h + 10 * fe + 18) + 10 * fs + 2 * h + 2;
    }
    double layer = attn + mlp + 2 * norms * h;
    /* D multi-token-prediction modules (2.6): a layer, three norms and 2h h each; their
     * activations and logits stand with the loss's. */
    double mtp = (double)sc->mtp_layers;
    double params = (l + mtp) * layer + mtp * (2 * h * h + 6 * h) + 2 * v * h + 2 * h +
                    (double)sc->positions * h;
    double states = 18 * params; /* Megatron's 2 + 4 + 12 bytes per parameter, the most */
    states += sc->fp8 != FP8_NONE ? 3 * params : 0; /* FP8 copies: 2 (1 + 1/32) at most */
    if (sc->finetune != FINETUNE_FULL) { /* LoRA adapters: r (d_in + d_out) <= r (d_in d_out + 1)
                                          * per matrix, at most 16 bytes and 8 per tensor each */
        double r = (double)sc->lora_rank, matrices = 64 + 3 * (double)sc->experts;
        states += 32 * r * l * (layer + matrices);
    }
    double sb = s * b;
    double act = sb * (width + 5 * a * s); /* A of any kind, before tp */
    double ckpt = 2 * sb * h;
    double logits = (1 + mtp) * 24 * sb * v + mtp * (act + 16 * sb * h);
    /* Activations of the first stage: m (L/pp) A without checkpointing, m ceil((L/pp)/k) c + k A
     * with: both at most m L (A + c). */
    double peak = states + m * l * (act + ckpt) + logits;
    /* A node's CPU memory under offload (12.5): each of its GPUs' optimizer states or
     * checkpoints. */
    if (sc->offload != OFFLOAD_NONE) {
        double gpus =
            (double)sc->dp * (double)sc->tp * (double)sc->pp * (double)(sc->cp ? sc->cp : 1);
        double node = sc->gpus_per_node && (double)sc->gpus_per_node < gpus
                          ? (double)sc->gpus_per_node
                          : gpus;
        peak += node * (states + m * l * (act + ckpt));
    }
    return peak < 4611686018427387904.0; /* 2^62 */
}

enum model_status model_eval(const struct scenario *sc, struct terms *t)
{
    return model_eval_cached(sc, NULL, t);
}

enum model_status model_eval_cached(const struct scenario *sc, struct model_cache *cache,
                                    struct terms *t)
{
    if (model_peak_with(sc, cache, true, t) != MODEL_OK)
        return MODEL_OVERFLOW;
    uint64_t a = model_first_stage_act(t);
    if (model_k_best_from(sc, &t->stage[MODEL_STAGE_FIRST].pipe, a, t->ckpt_bytes, &t->k_best,
                          &t->act_k_best_bytes) != MODEL_OK)
        return MODEL_OVERFLOW;
    t->k_star = model_k_star(sc, t);
    t->max_micro_batch = model_max_micro_batch_from(sc, t, sc->micro_batch);
    return MODEL_OK;
}
