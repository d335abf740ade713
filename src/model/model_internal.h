/*
 * model_internal: what the files of the model share beyond its public interface (model.h).
 *
 * model.h's functions are split by concern: the parameter counts and the layer kinds with their
 * memo (model_params.c, doc/model.md section 2), the activations, logits and checkpointing every
 * k (model_acts.c, sections 4, 5 and 7), each pipeline stage's parameters and model states and
 * the most loaded stage (model_stage.c, sections 2.4, 3, 6 and 8.1-8.2), what a GPU holds for
 * the step model (model_step.c, section 10.2), the largest micro-batch (model_batch.c, section
 * 8.3) and the entry points (model_eval.c). This header holds their shared declarations, and inline
 * the helpers that every evaluation calls (eval runs them for millions of rows: a call across
 * files was measurably slower). Not for use outside src/model/model_*.c.
 */
#ifndef MEMFIT_MODEL_INTERNAL_H
#define MEMFIT_MODEL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/checked.h"
#include "model/layer.h"
#include "model/model.h"
#include "model/pipeline.h"
#include "model/scenario.h"
#include "model/states.h"
#include "model/step.h"

/* -- parameters and layer kinds (model_params.c) -- */

static inline uint64_t model_final_norm_params(const struct scenario *sc)
{
    return sc->arch == ARCH_GPT ? 2 * sc->hidden : sc->hidden;
}

/*
 * The layer kinds of a scenario (layer.h): a dense model has L dense layers; a mixture of experts
 * has its leading dense_layers dense and the others MoE. One inventory per kind gives its
 * parameters and the sums of its kept tensors (model_peak builds them once: building them for
 * every term was a sizeable part of its time).
 */
struct kinds {
    uint64_t count[2];  /* layers of each kind, LAYER_DENSE and LAYER_MOE */
    uint64_t params[2]; /* one layer of each kind, whole, routed experts included */
    uint64_t routed;    /* the routed experts of one MoE layer (all E of them) */
    uint64_t small[2];  /* of params: biases and norm scales */
    /* With FP8: one layer's GEMM weights and of them the routed experts' (layer_gemm_params),
     * which every stage's FP8 copies and the step's FP8 share read (0 without FP8). */
    uint64_t gemm[2], gemm_routed[2];
    struct layer_act_sums sums[2];
    /* With states_per_tensor (LoRA, QLoRA, 8-bit AdamW; doc/model.md 3.5 and 3.6): each kind's
     * states on a GPU, in the caller's array (not cleared with the rest: the common case needs
     * none of it). */
    bool per_tensor;
    struct states_layer *st;
};

/* The kinds of sc: the memo's entry (cache NULL: none), or *k built (then memoised); NULL on
 * overflow. */
const struct kinds *model_layer_kinds_cached(const struct scenario *sc, struct model_cache *cache,
                                             struct kinds *k, struct states_layer st[2]);

/* The kind of the multi-token-prediction modules' layers: the model's last layer's (doc/model.md
 * 2.6). */
static inline enum layer_kind model_mtp_kind(const struct kinds *k)
{
    return k->count[LAYER_MOE] > 0 ? LAYER_MOE : LAYER_DENSE;
}

/* The parameters of a multi-token-prediction module besides its transformer layer (doc/model.md
 * 2.6): the norms of the hidden state, of the embedding and before the shared output layer, and
 * the projection from 2h to h (no bias), a column-parallel linear: divided by t on a GPU (t = 1:
 * the whole module's). */
static inline uint64_t model_mtp_proj_params(const struct scenario *sc, uint64_t t,
                                             struct checked *ck)
{
    return div_up(ck_mul(ck, 2, ck_mul(ck, sc->hidden, sc->hidden)), t);
}

static inline uint64_t model_mtp_extra_params(const struct scenario *sc, uint64_t t,
                                              struct checked *ck)
{
    return ck_add(ck, ck_mul(ck, 3, model_final_norm_params(sc)), model_mtp_proj_params(sc, t, ck));
}

/* Psi and the active parameters (k of the E routed experts of each MoE layer; doc/model.md
 * section 2.3): the layers + embedding (twice when untied) + final norm + learned positions,
 * and the multi-token-prediction modules (2.6). */
static inline enum model_status model_params_of(const struct scenario *sc, const struct kinds *k,
                                                uint64_t *all, uint64_t *active)
{
    struct checked ck = {false};
    uint64_t emb = ck_mul(&ck, sc->vocab, sc->hidden);
    uint64_t n =
        ck_add(&ck, ck_mul(&ck, k->count[0], k->params[0]), ck_mul(&ck, k->count[1], k->params[1]));
    n = ck_add(&ck, n, sc->tied ? emb : ck_mul(&ck, 2, emb));
    n = ck_add(&ck, n, model_final_norm_params(sc));
    n = ck_add(&ck, n, ck_mul(&ck, sc->positions, sc->hidden));
    enum layer_kind mk = model_mtp_kind(k);
    uint64_t module = ck_add(&ck, k->params[mk], model_mtp_extra_params(sc, 1, &ck));
    n = ck_add(&ck, n, ck_mul(&ck, sc->mtp_layers, module));
    *all = n;
    /* routed / E is one expert's 3 h f_e: exact. */
    uint64_t idle = sc->experts ? k->routed / sc->experts * (sc->experts - sc->top_k) : 0;
    uint64_t moe = k->count[LAYER_MOE] + (mk == LAYER_MOE ? sc->mtp_layers : 0);
    *active = n - ck_mul(&ck, moe, idle);
    return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
}

/* -- activations, logits and checkpointing every k (model_acts.c) -- */

/* The tokens of a sequence one GPU holds: s / cp under context parallelism (cp divides s;
 * doc/model.md 4.11). Every per-token activation, checkpoint and logit counts these; plain
 * attention's scores pair them with all s keys. */
static inline uint64_t model_local_seq(const struct scenario *sc)
{
    return sc->cp > 1 ? sc->seq / sc->cp : sc->seq;
}

/* Context parallelism's ring exchange: while a GPU computes attention against one block of keys
 * and values it receives the next, two buffers of K and V of s/cp tokens in bf16,
 * 4 (s/cp) b (w_K + w_V) / t bytes: 8 (s/cp) b h_kv / t, or with latent attention K of
 * a (d_n + d_r) and V of a d_v per token (doc/model.md 4.11; Liu et al. 2023, Ring Attention;
 * Megatron-LM's context parallelism). 0 without context parallelism. */
static inline uint64_t model_context_ring_bytes(const struct scenario *sc, uint64_t b,
                                                struct checked *ck)
{
    if (sc->cp <= 1)
        return 0;
    uint64_t kv = sc->kv_lora_rank > 0
                      ? ck_mul(ck, sc->heads, sc->qk_nope_dim + sc->qk_rope_dim + sc->v_head_dim)
                      : ck_mul3(ck, 2, sc->kv_heads, layer_head_dim(sc));
    return div_up(ck_mul(ck, ck_mul3(ck, 4, model_local_seq(sc), b), kv), sc->tp);
}

/*
 * The routed rows' activations on one GPU (doc/model.md section 4.7): an expert-tensor-parallel
 * group of u GPUs holds the distinct tokens of its members - u sets with sequence parallelism (each
 * rank its s b / t), else one set per tensor-parallel group it spans - and splits the expert
 * width by u; expert parallelism trades rows between GPUs and removes none.
 */
static inline uint64_t model_routed_act(const struct scenario *sc, const struct layer_act_sums *s,
                                        uint64_t sb, struct checked *ck)
{
    uint64_t t = sc->tp, u = sc->etp ? sc->etp : t;
    bool sp = t > 1 && sc->sp;
    uint64_t sets = sp ? u : u > t ? u / t : 1, local = sp ? t : 1;
    uint64_t rows = ck_mul(ck, layer_routed_rows(sc, sb), sets);
    uint64_t hwide = div_up(ck_mul(ck, s->rows_per_routed, rows), local);
    uint64_t ewide = div_up(ck_mul(ck, s->width_per_routed, rows), ck_mul(ck, local, u));
    return ck_add(ck, hwide, ewide);
}

/*
 * One layer's activations at micro-batch b from the sums of its kept tensors (layer.h): the
 * search for the largest micro-batch evaluates several b of one scenario, and the sums do not
 * depend on b. Tensor parallelism divides the split part and the attention term; sequence
 * parallelism the whole layer (doc/model.md section 4.3). Each division rounds up.
 */
static inline enum model_status model_layer_act_from(const struct scenario *sc,
                                                     const struct layer_act_sums *s, uint64_t b,
                                                     struct model_layer_act *out)
{
    struct checked ck = {false};
    uint64_t sb = ck_mul(&ck, model_local_seq(sc), b);
    uint64_t whole = ck_mul(&ck, s->whole_per_token, sb);
    uint64_t split = ck_mul(&ck, s->split_per_token, sb);
    uint64_t attn = ck_add(&ck, ck_mul(&ck, s->attn_per_token, sb),
                           ck_mul3(&ck, s->attn_per_score, sc->seq, sb));
    uint64_t t = sc->tp;
    out->whole = whole;
    out->split = t > 1 ? div_up(split, t) : split;
    out->attn = t > 1 ? div_up(attn, t) : attn;
    if (t > 1 && sc->sp) {
        out->total = div_up(ck_add(&ck, whole, ck_add(&ck, split, attn)), t);
        out->whole = div_up(whole, t);
    } else if (t > 1) {
        /* sbh(10 + 24/t + 5as/(ht)): one division of everything tensor parallelism splits. */
        out->total = ck_add(&ck, whole, div_up(ck_add(&ck, split, attn), t));
    } else {
        out->total = ck_add(&ck, whole, ck_add(&ck, split, attn));
    }
    if (s->rows_per_routed || s->width_per_routed)
        out->total = ck_add(&ck, out->total, model_routed_act(sc, s, sb, &ck));
    return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
}

/* Bytes of an element of the residual stream a checkpoint keeps: bf16, or fp32 under the step
 * model with fp32 weights (precision fp32 or autocast; doc/model.md section 10.2). */
static inline uint64_t model_residual_bytes(const struct scenario *sc)
{
    bool fp32 = sc->precision == PRECISION_FP32 || sc->precision == PRECISION_AUTOCAST;
    return sc->peak == PEAK_STEP && fp32 ? 4 : 2;
}

static inline enum model_status model_ckpt_bytes_at(const struct scenario *sc, uint64_t b,
                                                    uint64_t *out)
{
    struct checked ck = {false};
    uint64_t c =
        ck_mul(&ck, ck_mul3(&ck, model_residual_bytes(sc), model_local_seq(sc), b), sc->hidden);
    *out = sc->sp && sc->tp > 1 ? div_up(c, sc->tp) : c;
    return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
}

static inline enum model_status model_logits_bytes_at(const struct scenario *sc, uint64_t b,
                                                      uint64_t *out)
{
    /* doc/model.md section 7: the loss in fp32 keeps 4sbV (Korthikanti et al. 2022, 4.3);
     * the output layer is vocabulary-parallel under tensor parallelism. */
    struct checked ck = {false};
    uint64_t l = ck_mul(&ck, ck_mul3(&ck, 4, model_local_seq(sc), b), sc->vocab);
    *out = div_up(l, sc->tp);
    return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
}

/* The loss's term of a GPU of the last stage, given its logits and each kind's A (doc/model.md
 * sections 7 and 2.6): the logits and, for each multi-token-prediction module, its own logits
 * and its layer's activations, alive from its forward to its backward, which precede the other
 * layers' (one micro-batch of the last stage in flight). 0 on the other stages. The modules'
 * layers' activations alone: model_mtp_layers_act. */
static inline uint64_t model_mtp_layers_act(const struct pipeline_stage *st,
                                            const uint64_t kind_act[2], struct checked *ck)
{
    return ck_add(ck, ck_mul(ck, st->mtp[0], kind_act[0]), ck_mul(ck, st->mtp[1], kind_act[1]));
}

static inline uint64_t model_loss_term(const struct scenario *sc, const struct pipeline_stage *st,
                                       uint64_t logits, const uint64_t kind_act[2],
                                       struct checked *ck)
{
    if (!st->last)
        return 0;
    return ck_add(ck, ck_mul(ck, sc->mtp_layers + 1, logits),
                  model_mtp_layers_act(st, kind_act, ck));
}

/* The checkpoints a stage keeps on the GPU with checkpointing every k: all of them, or with
 * offload=checkpoints the one in transit to or from the host (doc/model.md 5.3). */
static inline uint64_t model_gpu_checkpoints(const struct scenario *sc,
                                             const struct pipeline_stage *st, uint64_t k)
{
    uint64_t n = pipeline_checkpoints(st, k);
    return sc->offload == OFFLOAD_CHECKPOINTS && n > 1 ? 1 : n;
}

/* The largest kind's A among the layers a stage holds. */
static inline uint64_t model_stage_max_act(const uint64_t layers[2], const uint64_t act[2])
{
    uint64_t a = 0;
    for (int i = 0; i < 2; i++)
        if (layers[i] > 0 && act[i] > a)
            a = act[i];
    return a;
}

/* Block recomputation (doc/model.md 5.4): the N layers of each chunk a stage recomputes when it
 * keeps the other L_s - N whole (recompute=full with recompute_layers N < L_s), else 0 - with
 * N >= L_s every layer is recomputed, which is full checkpointing, M(1). */
static inline uint64_t model_block_layers(const struct scenario *sc,
                                          const struct pipeline_stage *st, uint64_t k)
{
    uint64_t n = sc->recompute_layers;
    return k == 1 && n > 0 && n < st->chunk_layers ? n : 0;
}

/*
 * M(k) of a stage: its chunk-micro-batches in flight keep their activations, each kind's layer
 * act[kind] (k = 0: no checkpointing), or with checkpointing every k layers one checkpoint c per
 * segment and the activations of the segment rebuilt, k A with A the largest of the stage's
 * kinds: the peak at the end of the first rebuild (doc/model.md sections 5.1 and 6.2; Chen et
 * al. 2016, 4); a segment never crosses a chunk. Block recomputation of N < L_s layers keeps
 * m (N c + (L_s - N) A), A the largest kind's (doc/model.md 5.4).
 */
static inline enum model_status model_stage_act_of(const struct scenario *sc,
                                                   const struct pipeline_stage *st,
                                                   const uint64_t act[2], uint64_t ckpt, uint64_t k,
                                                   uint64_t *out)
{
    struct checked ck = {false};
    uint64_t n = model_block_layers(sc, st, k);
    if (k == 0)
        *out = ck_add(&ck, ck_mul(&ck, st->act_layers[0], act[0]),
                      ck_mul(&ck, st->act_layers[1], act[1]));
    else if (n) /* block: m (N c + (L_s - N) A), a rebuild after the kept layers' backward */
        *out =
            ck_mul(&ck, st->in_flight,
                   ck_add(&ck, ck_mul(&ck, n, ckpt),
                          ck_mul(&ck, st->chunk_layers - n, model_stage_max_act(st->layers, act))));
    else
        *out = ck_add(
            &ck, ck_mul(&ck, model_gpu_checkpoints(sc, st, k), ckpt),
            ck_mul(&ck, pipeline_segment_layers(st, k), model_stage_max_act(st->layers, act)));
    return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
}

/* The A of checkpointing on the first stage: the largest of the layer kinds it holds (M(k) keeps
 * one segment's activations; doc/model.md sections 5.1 and 6.2). */
static inline uint64_t model_first_stage_act(const struct terms *t)
{
    const struct model_gpu *g = &t->stage[MODEL_STAGE_FIRST];
    uint64_t a = 0;
    for (int i = 0; i < 2; i++)
        if (g->pipe.layers[i] > 0 && t->kind_act[i] > a)
            a = t->kind_act[i];
    return a;
}

/* model_k_best with the first stage, one layer's activations A and checkpoint c known. */
enum model_status model_k_best_from(const struct scenario *sc, const struct pipeline_stage *st,
                                    uint64_t A, uint64_t c, uint64_t *k_best, uint64_t *act_bytes);

/* -- each stage's terms and the most loaded stage (model_stage.c) -- */

/* model_peak's work: sets every member of *t but model_eval's own (k_star, k_best,
 * act_k_best_bytes, max_micro_batch). */
enum model_status model_peak_terms(const struct scenario *sc, struct model_cache *cache,
                                   bool fixed_too, struct terms *t);

/* -- what a GPU holds for the step model (model_step.c) -- */

/* What GPU `stage` holds at micro-batch b for the step model, each kind's A and c at b given;
 * with `fixed`, also what it holds at b = 0. */
void model_step_gpu_at(const struct scenario *sc, const struct terms *t, int stage, uint64_t b,
                       const uint64_t kind_act[2], uint64_t c, struct step_gpu *g,
                       struct step_gpu *fixed, struct checked *ck);

/* The CPU memory of a GPU of stage `pipe` for its offloaded checkpoints, c bytes each (the
 * checkpoints of every k layers, doc/model.md 5.3; 0 without that offload), and of a node: its
 * GPUs' offloads, each as that of the stage that offloads the most, `heaviest` (12.5). */
uint64_t model_ckpt_host_bytes(const struct scenario *sc, const struct pipeline_stage *pipe,
                               uint64_t c, struct checked *ck);
uint64_t model_node_host_bytes(const struct scenario *sc, uint64_t heaviest, struct checked *ck);

/* -- the largest micro-batch (model_batch.c) -- */

/* model_max_micro_batch with the scenario's terms already known (model_peak of sc at micro-batch
 * base_b). */
uint64_t model_max_micro_batch_from(const struct scenario *sc, const struct terms *base,
                                    uint64_t base_b);

/* -- the entry points (model_eval.c) -- */

/* model_peak through the memo (cache NULL: none); fixed_too: also each stage's step at b = 0
 * (step_fixed), for the largest micro-batch. */
enum model_status model_peak_with(const struct scenario *sc, struct model_cache *cache,
                                  bool fixed_too, struct terms *t);

#endif
