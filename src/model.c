/* model: see model.h. Comments cite doc/model.md sections, which name the primary sources. */
#include "model.h"

#include <math.h>

#include "checked.h"
#include "layer.h"
#include "step.h"

struct model_bytes_per_param model_bytes_per_param(enum precision p)
{
    /* doc/model.md section 3.1 (Rajbhandari et al. 2020, 3.1; Micikevicius et al. 2018, 3.1):
     * mixed-precision Adam 2 + 2 + 12 (bf16 weights and gradients; fp32 master weights and two
     * moments), autocast 4 + 4 + 8, Megatron-LM with fp32 gradient buffers 2 + 4 + 12, a frozen
     * base (LoRA) keeps only its bf16 weights. */
    static const struct model_bytes_per_param table[] = {
        [PRECISION_MIXED] = {2, 2, 12},    [PRECISION_AUTOCAST] = {4, 4, 8},
        [PRECISION_MEGATRON] = {2, 4, 12}, [PRECISION_FROZEN] = {2, 0, 0},
        [PRECISION_FP32] = {4, 4, 8},
    };
    return (unsigned)p <= PRECISION_FP32 ? table[p] : table[PRECISION_MIXED];
}

uint64_t model_kv_width(const struct scenario *sc)
{
    /* heads divides hidden and kv_heads divides heads (checked by config), so this is exact. */
    return sc->hidden / sc->heads * sc->kv_heads;
}

enum model_status model_layer_params(const struct scenario *sc, uint64_t *out)
{
    /* The sum of the layer's parameter tensors (doc/model.md section 2; layer.h lists them). */
    struct layer_inventory inv;
    if (!layer_inventory_sums(sc, LAYER_DENSE, &inv) || !layer_params_of(&inv, LAYER_PARTS, out))
        return MODEL_OVERFLOW;
    return MODEL_OK;
}

static uint64_t final_norm_params(const struct scenario *sc)
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
    struct layer_act_sums sums[2];
};

static enum model_status layer_kinds(const struct scenario *sc, struct kinds *k)
{
    struct layer_inventory inv;
    static const struct kinds none;
    *k = none;
    k->count[LAYER_DENSE] = sc->experts ? sc->dense_layers : sc->layers;
    k->count[LAYER_MOE] = sc->layers - k->count[LAYER_DENSE];
    for (int kind = 0; kind < 2; kind++) {
        if (k->count[kind] == 0)
            continue;
        if (!layer_inventory_sums(sc, (enum layer_kind)kind, &inv) ||
            !layer_params_of(&inv, LAYER_PARTS, &k->params[kind]) ||
            !layer_params_of(&inv, LAYER_PART_SMALL, &k->small[kind]) ||
            !layer_act_sums(sc, &inv, &k->sums[kind]))
            return MODEL_OVERFLOW;
        if (kind == LAYER_MOE && !layer_params_of(&inv, LAYER_PART_EXPERTS, &k->routed))
            return MODEL_OVERFLOW;
    }
    return MODEL_OK;
}

/* The kind whose layer the scenario's per-layer terms describe: MoE when there are MoE layers. */
static enum layer_kind main_kind(const struct kinds *k)
{
    return k->count[LAYER_MOE] > 0 ? LAYER_MOE : LAYER_DENSE;
}

/* Psi and the active parameters (k of the E routed experts of each MoE layer; doc/model.md
 * section 2.3): the layers + embedding (twice when untied) + final norm + learned positions. */
static enum model_status params_of(const struct scenario *sc, const struct kinds *k, uint64_t *all,
                                   uint64_t *active)
{
    struct checked ck = {false};
    uint64_t emb = ck_mul(&ck, sc->vocab, sc->hidden);
    uint64_t n =
        ck_add(&ck, ck_mul(&ck, k->count[0], k->params[0]), ck_mul(&ck, k->count[1], k->params[1]));
    n = ck_add(&ck, n, sc->tied ? emb : ck_mul(&ck, 2, emb));
    n = ck_add(&ck, n, final_norm_params(sc));
    n = ck_add(&ck, n, ck_mul(&ck, sc->positions, sc->hidden));
    *all = n;
    /* routed / E is one expert's 3 h f_e: exact. */
    uint64_t idle = sc->experts ? k->routed / sc->experts * (sc->experts - sc->top_k) : 0;
    *active = n - ck_mul(&ck, k->count[LAYER_MOE], idle);
    return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
}

enum model_status model_params(const struct scenario *sc, uint64_t *out)
{
    struct kinds k;
    uint64_t active;
    if (layer_kinds(sc, &k) != MODEL_OK)
        return MODEL_OVERFLOW;
    return params_of(sc, &k, out, &active);
}

enum model_status model_active_params(const struct scenario *sc, uint64_t *out)
{
    struct kinds k;
    uint64_t all;
    if (layer_kinds(sc, &k) != MODEL_OK)
        return MODEL_OVERFLOW;
    return params_of(sc, &k, &all, out);
}

/*
 * The routed rows' activations on one GPU (doc/model.md section 4.7): an expert-tensor-parallel
 * group of u GPUs holds the distinct tokens of its members - u sets with sequence parallelism (each
 * rank its s b / t), else one set per tensor-parallel group it spans - and splits the expert
 * width by u; expert parallelism trades rows between GPUs and removes none.
 */
static uint64_t routed_act(const struct scenario *sc, const struct layer_act_sums *s, uint64_t sb,
                           struct checked *ck)
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
static enum model_status layer_act_from(const struct scenario *sc, const struct layer_act_sums *s,
                                        uint64_t b, struct model_layer_act *out)
{
    struct checked ck = {false};
    uint64_t sb = ck_mul(&ck, sc->seq, b);
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
        out->total = ck_add(&ck, out->total, routed_act(sc, s, sb, &ck));
    return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
}

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
    return layer_act_from(sc, &sums, sc->micro_batch, out);
}

/* Bytes of an element of the residual stream a checkpoint keeps: bf16, or fp32 under the step
 * model with fp32 weights (precision fp32 or autocast; doc/model.md section 10.2). */
static uint64_t residual_bytes(const struct scenario *sc)
{
    bool fp32 = sc->precision == PRECISION_FP32 || sc->precision == PRECISION_AUTOCAST;
    return sc->peak == PEAK_STEP && fp32 ? 4 : 2;
}

static enum model_status ckpt_bytes_at(const struct scenario *sc, uint64_t b, uint64_t *out)
{
    struct checked ck = {false};
    uint64_t c = ck_mul(&ck, ck_mul3(&ck, residual_bytes(sc), sc->seq, b), sc->hidden);
    *out = sc->sp && sc->tp > 1 ? div_up(c, sc->tp) : c;
    return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
}

enum model_status model_ckpt_bytes(const struct scenario *sc, uint64_t *out)
{
    return ckpt_bytes_at(sc, sc->micro_batch, out);
}

static enum model_status logits_bytes_at(const struct scenario *sc, uint64_t b, uint64_t *out)
{
    /* doc/model.md section 7: the loss in fp32 keeps 4sbV (Korthikanti et al. 2022, 4.3);
     * the output layer is vocabulary-parallel under tensor parallelism. */
    struct checked ck = {false};
    uint64_t l = ck_mul(&ck, ck_mul3(&ck, 4, sc->seq, b), sc->vocab);
    *out = div_up(l, sc->tp);
    return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
}

enum model_status model_logits_bytes(const struct scenario *sc, uint64_t *out)
{
    return logits_bytes_at(sc, sc->micro_batch, out);
}

/*
 * The activations of a stage holding count[kind] layers of each kind, each kind's layer keeping
 * act[kind], with `micro_batches` in flight, checkpointing every k layers (0: none). Without
 * checkpointing every layer keeps its own A; with it, M(k) = ceil(n/k) c + k A, the peak at the
 * end of the first rebuild, with A the largest of the stage's kinds (doc/model.md sections 5.1
 * and 6.2; Chen et al. 2016, 4); a segment never crosses a pipeline stage.
 */
static inline enum model_status stage_act_mix(const uint64_t count[2], const uint64_t act[2],
                                              uint64_t ckpt, uint64_t micro_batches, uint64_t k,
                                              uint64_t *out)
{
    struct checked ck = {false};
    uint64_t stage_layers = count[0] + count[1];
    if (k == 0) {
        uint64_t one = ck_add(&ck, ck_mul(&ck, count[0], act[0]), ck_mul(&ck, count[1], act[1]));
        *out = ck_mul(&ck, micro_batches, one);
    } else {
        uint64_t a = 0;
        for (int i = 0; i < 2; i++)
            if (count[i] > 0 && act[i] > a)
                a = act[i];
        uint64_t kk = k < stage_layers ? k : stage_layers;
        uint64_t segments = div_up(stage_layers, kk);
        *out = ck_add(&ck, ck_mul3(&ck, micro_batches, segments, ckpt), ck_mul(&ck, kk, a));
    }
    return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
}

enum model_status model_stage_act(const struct scenario *sc, uint64_t layer_act, uint64_t ckpt,
                                  uint64_t micro_batches, uint64_t k, uint64_t *out)
{
    const uint64_t count[2] = {sc->layers / sc->pp, 0}, act[2] = {layer_act, 0};
    return stage_act_mix(count, act, ckpt, micro_batches, k, out);
}

/* Layers of each kind on pipeline stage `stage` (the first holds layers [0, L/pp), the last
 * [L - L/pp, L)); the dense kind comes first in the model. */
static void stage_mix(const struct scenario *sc, const uint64_t kind_count[2],
                      enum model_stage stage, uint64_t out[2])
{
    uint64_t per = sc->layers / sc->pp;
    uint64_t lo = stage == MODEL_STAGE_FIRST ? 0 : sc->layers - per;
    uint64_t dense = kind_count[LAYER_DENSE] > lo ? kind_count[LAYER_DENSE] - lo : 0;
    out[LAYER_DENSE] = dense < per ? dense : per;
    out[LAYER_MOE] = per - out[LAYER_DENSE];
}

static void step_gpu_at(const struct scenario *sc, const struct terms *t, int stage, uint64_t b,
                        const uint64_t kind_act[2], uint64_t c, struct step_gpu *g,
                        struct step_gpu *fixed, struct checked *ck);

enum model_status model_ckpt_peak(const struct scenario *sc, const struct terms *t, uint64_t k,
                                  uint64_t *out)
{
    struct checked ck = {false};
    *out = 0;
    if (sc->peak == PEAK_STEP) { /* the step's phases with checkpointing every k (or none) */
        struct scenario at_k = *sc;
        at_k.recompute = k ? RECOMPUTE_EVERY_K : RECOMPUTE_NONE;
        at_k.ckpt_every = k;
        for (int i = 0; i < (sc->pp == 1 ? 1 : 2); i++) {
            struct step_gpu sg;
            struct step_peak sp;
            step_gpu_at(&at_k, t, i, sc->micro_batch, t->kind_act, t->ckpt_bytes, &sg, NULL, &ck);
            if (!step_phases(&sg, &sp))
                return MODEL_OVERFLOW;
            *out = sp.bytes > *out ? sp.bytes : *out;
        }
        return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
    }
    for (int i = 0; i < 2; i++) {
        uint64_t act, in_flight = i == MODEL_STAGE_FIRST ? sc->pp : 1;
        if (stage_act_mix(t->stage[i].layers, t->kind_act, t->ckpt_bytes, in_flight, k, &act) !=
            MODEL_OK)
            return MODEL_OVERFLOW;
        uint64_t p =
            ck_add(&ck, t->stage[i].states_bytes, ck_add(&ck, act, t->stage[i].logits_bytes));
        if (p > *out)
            *out = p;
    }
    return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
}

uint64_t model_budget_bytes(const struct scenario *sc)
{
    double budget = nearbyint((double)sc->gpu_mem_bytes * (1.0 - sc->reserve));
    if (budget <= 0)
        return 0;
    if (budget >= (double)UINT64_MAX)
        return UINT64_MAX;
    return (uint64_t)budget;
}

/* Model states of a GPU holding `params` parameters: ZeRO over dp shards the optimizer states
 * (stage 1), the gradients too (stage 2) and the weights too (stage 3), each rounded up to the
 * byte; offload moves the optimizer states to the CPU. doc/model.md sections 3.2 and 3.3
 * (Rajbhandari et al. 2020, section 5; Ren et al. 2021). */
struct states {
    uint64_t weights, grads, optimizer;
};

/* The states of `params` parameters sharded by ZeRO over n GPUs. */
static struct states sharded_states(const struct scenario *sc, uint64_t params, uint64_t n,
                                    struct checked *ck)
{
    struct model_bytes_per_param bpp = model_bytes_per_param(sc->precision);
    struct states st = {ck_mul(ck, bpp.weights, params), ck_mul(ck, bpp.grads, params),
                        ck_mul(ck, bpp.optimizer, params)};
    if (sc->zero >= 1)
        st.optimizer = div_up(st.optimizer, n);
    if (sc->zero >= 2)
        st.grads = div_up(st.grads, n);
    if (sc->zero >= 3)
        st.weights = div_up(st.weights, n);
    if (sc->offload == OFFLOAD_OPTIMIZER)
        st.optimizer = 0;
    return st;
}

/* The expert data-parallel size: the GPUs of a stage (dp * tp) over the expert group (etp * ep),
 * which ZeRO shards the routed experts' states over (doc/model.md section 3.2). */
uint64_t model_expert_dp(const struct scenario *sc)
{
    uint64_t etp = sc->etp ? sc->etp : sc->tp, ep = sc->ep ? sc->ep : 1;
    uint64_t edp = sc->dp * sc->tp / (etp * ep);
    return edp ? edp : 1;
}

/* Model states of a GPU holding g->params parameters, g->expert_params of them routed experts:
 * ZeRO shards the dense states over dp and the experts' over the expert data-parallel size;
 * stage 1 the optimizer states, stage 2 the gradients too, stage 3 the weights too, each rounded
 * up to the byte; offload moves the optimizer states to the CPU. doc/model.md sections 3.2 and
 * 3.3 (Rajbhandari et al. 2020, section 5; Ren et al. 2021). */
static void gpu_states(const struct scenario *sc, struct model_gpu *g, struct checked *ck)
{
    struct states d = sharded_states(sc, g->params - g->expert_params, sc->dp, ck);
    struct states e = {0, 0, 0};
    if (g->expert_params > 0)
        e = sharded_states(sc, g->expert_params, model_expert_dp(sc), ck);
    g->weights_bytes = ck_add(ck, d.weights, e.weights);
    g->grads_bytes = ck_add(ck, d.grads, e.grads);
    g->optimizer_bytes = ck_add(ck, d.optimizer, e.optimizer);
    g->expert_bytes = ck_add(ck, e.weights, ck_add(ck, e.grads, e.optimizer));
    g->states_bytes = ck_add(ck, g->weights_bytes, ck_add(ck, g->grads_bytes, g->optimizer_bytes));
}

/* Parameters on one GPU of each stage: tp divides every layer and the (vocabulary-parallel)
 * embedding; the first stage holds the embedding and learned positions, the last the output
 * layer (a copy of a tied embedding when pp > 1) and the final norm. */
static void stage_params(const struct scenario *sc, const struct kinds *k, struct terms *t,
                         struct checked *ck)
{
    uint64_t etp = sc->etp ? sc->etp : sc->tp, ep = sc->ep ? sc->ep : 1;
    /* Per layer: the dense part / tp, the routed experts / (etp * ep), each rounded up. */
    uint64_t dense_part[2], routed = div_up(k->routed, ck_mul(ck, etp, ep));
    dense_part[LAYER_DENSE] = div_up(k->params[LAYER_DENSE], sc->tp);
    dense_part[LAYER_MOE] = div_up(k->params[LAYER_MOE] - k->routed, sc->tp);
    uint64_t emb = div_up(ck_mul(ck, sc->vocab, sc->hidden), sc->tp);
    uint64_t positions = ck_mul(ck, sc->positions, sc->hidden);
    for (int i = 0; i < 2; i++) {
        struct model_gpu *g = &t->stage[i];
        stage_mix(sc, k->count, (enum model_stage)i, g->layers);
        g->expert_params = ck_mul(ck, g->layers[LAYER_MOE], routed);
        uint64_t layers = ck_add(ck, ck_mul(ck, g->layers[LAYER_DENSE], dense_part[LAYER_DENSE]),
                                 ck_mul(ck, g->layers[LAYER_MOE], dense_part[LAYER_MOE]));
        layers = ck_add(ck, layers, g->expert_params);
        if (sc->pp == 1) {
            uint64_t all =
                ck_add(ck, layers, ck_add(ck, emb, ck_add(ck, positions, final_norm_params(sc))));
            g->params = sc->tied ? all : ck_add(ck, all, emb);
        } else if (i == MODEL_STAGE_FIRST) {
            g->params = ck_add(ck, layers, ck_add(ck, emb, positions));
        } else {
            g->params = ck_add(ck, layers, ck_add(ck, emb, final_norm_params(sc)));
        }
    }
}

/* The largest kind's A among the layers a stage holds. */
static uint64_t stage_max_act(const uint64_t layers[2], const uint64_t act[2])
{
    uint64_t a = 0;
    for (int i = 0; i < 2; i++)
        if (layers[i] > 0 && act[i] > a)
            a = act[i];
    return a;
}

/* The embedding's backward at the end of the step (doc/model.md 10.2): a tied embedding holds the
 * output layer's partial gradient, its own and their sum (and .grad when persistent); an untied
 * one the gradient of its output. With dropout, its backward (the gradient in and out, the
 * position ids and the mask) may be higher: g->dropout_end_add - g->dropout_end_less on top of
 * the gradients (on demand, the embedding's own and the position table's are not there yet). */
static void embedding_end(const struct scenario *sc, uint64_t b, uint64_t gb, bool pers,
                          struct step_gpu *g, struct checked *ck)
{
    uint64_t h = sc->hidden, sbh = ck_mul3(ck, sc->seq, b, h), r = residual_bytes(sc);
    uint64_t vh = div_up(ck_mul3(ck, gb, sc->vocab, h), sc->tp);
    g->embedding_end =
        sc->tied ? ck_mul(ck, pers ? 3 : 2, vh) : ck_add(ck, ck_mul(ck, r, sbh), pers ? vh : 0);
    if (sc->arch != ARCH_GPT || !sc->dropout)
        return;
    g->dropout_end_add = ck_add(ck, ck_add(ck, 8 * (sc->positions > 0 ? sc->seq : 0), sbh),
                                ck_add(ck, ck_mul3(ck, 2, r, sbh), sc->tied ? vh : 0));
    g->dropout_end_less = pers ? 0 : ck_add(ck, vh, ck_mul3(ck, gb, sc->positions, h));
}

/* The optimizer step's temporaries on a GPU (doc/model.md 10.2): foreach AdamW allocates two fp32
 * tensors per parameter of the shard (PyTorch 1.13, measured), the single-tensor loop two of one
 * tensor with the previous one's denominator, the fused kernel none. */
static uint64_t optimizer_temps(const struct scenario *sc, const struct model_gpu *m,
                                struct checked *ck)
{
    struct model_bytes_per_param bpp = model_bytes_per_param(sc->precision);
    if (sc->offload == OFFLOAD_OPTIMIZER || bpp.optimizer == 0)
        return 0;
    if (sc->optimizer_impl == OPTIMIZER_FUSED)
        return 0;
    if (sc->optimizer_impl == OPTIMIZER_FOREACH)
        return ck_mul(ck, 8, m->optimizer_bytes / bpp.optimizer);
    uint64_t h = sc->hidden, f = sc->ffn, t = sc->tp, vh = div_up(ck_mul(ck, sc->vocab, h), t);
    uint64_t big = ck_mul(ck, 2, vh); /* the embedding, first */
    uint64_t mlp = sc->arch == ARCH_GPT ? ck_add(ck, ck_mul3(ck, 2, h, f) / t, f / t)
                                        : ck_mul3(ck, 3, h, f) / t;
    uint64_t cand[] = {mlp, sc->positions ? ck_add(ck, ck_mul3(ck, 2, sc->positions, h), vh) : 0,
                       sc->tied ? 0 : ck_add(ck, ck_mul(ck, 2, vh), h)};
    for (int i = 0; i < 3; i++)
        big = cand[i] > big ? cand[i] : big;
    uint64_t n = sc->zero >= 1 ? sc->dp : 1;
    return ck_mul(ck, 4, div_up(big, n));
}

/* One layer's gradients on a GPU (kind 1: an MoE layer): its dense part / tp and its routed
 * experts / (etp ep), each sharded by ZeRO-2 and above as the states are (section 3.2). */
static uint64_t layer_gpu_grads(const struct scenario *sc, const struct terms *t, int kind,
                                uint64_t gb, struct checked *ck)
{
    uint64_t etp = sc->etp ? sc->etp : sc->tp, ep = sc->ep ? sc->ep : 1;
    uint64_t routed = kind ? t->kind_routed : 0;
    uint64_t dense = ck_mul(ck, gb, div_up(t->kind_params[kind] - routed, sc->tp));
    uint64_t experts = ck_mul(ck, gb, div_up(routed, ck_mul(ck, etp, ep)));
    if (sc->zero >= 2) {
        dense = div_up(dense, sc->dp);
        experts = div_up(experts, model_expert_dp(sc));
    }
    return ck_add(ck, dense, experts);
}

/* A layer's backward at its last GEMM (kind: the one whose A is amax): the input's gradient,
 * the weight's and bias's, and what its dropout or autocast keeps then. */
static uint64_t backward_transient(const struct scenario *sc, const struct terms *t, uint64_t amax,
                                   const uint64_t kind_act[2], uint64_t b, struct checked *ck)
{
    bool gpt = sc->arch == ARCH_GPT;
    uint64_t tp = sc->tp, tl = sc->sp && tp > 1 ? tp : 1, h = sc->hidden;
    uint64_t e = sc->precision == PRECISION_FP32 ? 4 : 2;
    uint64_t sb = ck_mul(ck, sc->seq, b), sbh = ck_mul(ck, sb, h);
    uint64_t f = t->kind_act[1] && amax == kind_act[1] ? sc->top_k * sc->expert_ffn : sc->ffn;
    uint64_t x =
        ck_add(ck, div_up(ck_mul(ck, e, ck_add(ck, ck_mul(ck, sb, f), ck_mul(ck, h, f))), tp),
               gpt ? e * h : 0);
    if (gpt && sc->dropout)
        return ck_add(ck, x, ck_mul(ck, e - 1, div_up(sbh, tl)));
    if (sc->precision == PRECISION_AUTOCAST)
        return ck_add(ck, x, ck_mul(ck, 2, div_up(sbh, tl)));
    return x;
}

/* What GPU `stage` holds at micro-batch b for the step model, each kind's A and c at b given.
 * With `fixed`, also what it holds at b = 0 (what does not grow with the micro-batch): every
 * point of the step is the line through the two, but for the rounding of divisions. */
static void step_gpu_at(const struct scenario *sc, const struct terms *t, int stage, uint64_t b,
                        const uint64_t kind_act[2], uint64_t c, struct step_gpu *g,
                        struct step_gpu *fixed, struct checked *ck)
{
    const struct model_gpu *m = &t->stage[stage];
    struct model_bytes_per_param bpp = model_bytes_per_param(sc->precision);
    bool fp32 = sc->precision == PRECISION_FP32, ac = sc->precision == PRECISION_AUTOCAST;
    bool gpt = sc->arch == ARCH_GPT, eager = sc->loss == LOSS_EAGER;
    bool pers = sc->grad_buffer == GRAD_PERSISTENT;
    uint64_t tp = sc->tp, tl = sc->sp && tp > 1 ? tp : 1, h = sc->hidden;
    uint64_t e = fp32 ? 4 : 2, r = residual_bytes(sc), gb = bpp.grads;
    uint64_t sb = ck_mul(ck, sc->seq, b), sbh = ck_mul(ck, sb, h);
    uint64_t sbv = div_up(ck_mul(ck, sb, sc->vocab), tp), vh = div_up(ck_mul(ck, sc->vocab, h), tp);
    uint64_t n = m->layers[0] + m->layers[1];
    uint64_t in_flight = stage == MODEL_STAGE_FIRST ? sc->pp : 1;
    uint64_t k = sc->recompute == RECOMPUTE_EVERY_K ? sc->ckpt_every : 0;
    uint64_t kk = k == 0 ? 0 : k < n ? k : n;
    *g = (struct step_gpu){0};
    g->first = stage == MODEL_STAGE_FIRST || sc->pp == 1;
    g->last = stage == MODEL_STAGE_LAST || sc->pp == 1;
    g->weights = m->weights_bytes;
    g->grads = m->grads_bytes;
    g->optimizer = m->optimizer_bytes;
    /* Gradient accumulation of the scenario itself (the trial b of a search keeps it). */
    bool accumulating = sc->global_batch > ck_mul(ck, sc->micro_batch, sc->dp);
    g->grads_at_start = pers || accumulating ? m->grads_bytes : 0;
    g->tokens = ck_mul(ck, 8, ck_mul(ck, sb, (uint64_t)g->first + g->last)); /* int64 */
    if (g->first)
        g->embedding_inputs =
            ck_add(ck, sc->positions ? 8 * sc->seq : 0, gpt && sc->dropout ? div_up(sbh, tl) : 0);
    if (g->last) /* the final norm's input and statistics, the output layer's input */
        g->outside = div_up(ck_add(ck, ck_mul(ck, r + e, sbh), ck_mul(ck, gpt ? 8 : 4, sb)), tl);
    uint64_t amax = stage_max_act(m->layers, kind_act);
    if (kk) {
        g->recompute = true;
        g->ckpt_in_flight = ck_mul3(ck, in_flight, div_up(n, kk), c);
        g->acts = g->ckpt_in_flight;
        g->ckpt = c;
        g->segment_act = ck_mul(ck, kk, amax);
    } else {
        const uint64_t none[2] = {m->layers[0], m->layers[1]};
        uint64_t a = 0;
        for (int i = 0; i < 2; i++)
            a = ck_add(ck, a, ck_mul(ck, none[i], kind_act[i]));
        g->acts = ck_mul(ck, in_flight, a);
    }
    if (ac) { /* the autocast cache: a bf16 copy of every GEMM weight (and GPT's biases) */
        uint64_t copy[2], most = 0;
        for (int i = 0; i < 2; i++) {
            uint64_t gemm = t->kind_params[i] - t->kind_small[i];
            uint64_t bias = gpt && t->kind_small[i] > 4 * h ? t->kind_small[i] - 4 * h : 0;
            copy[i] = ck_add(ck, ck_mul(ck, 2, div_up(gemm, tp)), ck_mul(ck, 2, bias));
            g->all_copies =
                ck_add(ck, g->all_copies, ck_mul3(ck, in_flight, m->layers[i], copy[i]));
            most = m->layers[i] > 0 && copy[i] > most ? copy[i] : most;
        }
        g->layer_copies = ck_mul(ck, kk, most);
        if (g->last)
            g->head_copy = ck_mul(ck, 2, vh);
    }
    if (g->last) {
        g->logits_forward = ck_mul(ck, eager ? 8 : 4, sbv);
        g->loss = ck_mul(ck, eager ? 12 : 4, sbv);
    }
    /* The gradients as the layers' backward starts: all of them (a persistent buffer, or
     * accumulation's earlier micro-batches), with a tied embedding's partial; or, on demand, the
     * final norm's and the output layer's, and the other layers' as their backward completes. */
    uint64_t final_norm = gpt ? 2 * h : h;
    if (pers || accumulating)
        g->head_grads = ck_add(ck, m->grads_bytes, g->last && sc->tied ? ck_mul(ck, gb, vh) : 0);
    else if (g->last)
        g->head_grads = ck_mul(ck, gb, ck_add(ck, final_norm, vh));
    if (!pers && !accumulating && kk)
        g->done_grads = ck_mul(ck, n - kk, layer_gpu_grads(sc, t, amax == kind_act[1], gb, ck));
    g->transient = backward_transient(sc, t, amax, kind_act, b, ck);
    g->optimizer_temps = optimizer_temps(sc, m, ck);
    if (fixed) {
        *fixed = *g;
        fixed->tokens = fixed->outside = fixed->acts = fixed->ckpt_in_flight = 0;
        fixed->ckpt = fixed->segment_act = fixed->logits_forward = fixed->loss = 0;
        fixed->embedding_inputs = g->first && sc->positions ? 8 * sc->seq : 0;
        fixed->transient = backward_transient(sc, t, amax, kind_act, 0, ck);
        if (g->first)
            embedding_end(sc, 0, gb, pers, fixed, ck);
    }
    if (g->first)
        embedding_end(sc, b, gb, pers, g, ck);
}

/* model_peak's work: sets every member of *t but model_eval's own (k_star, k_best,
 * act_k_best_bytes, max_micro_batch). */
static enum model_status peak_terms(const struct scenario *sc, struct terms *t)
{
    struct checked ck = {false};
    struct kinds kinds;
    uint64_t logits;
    /* One inventory per layer kind serves its parameters and its activations at every b. */
    if (layer_kinds(sc, &kinds) != MODEL_OK ||
        params_of(sc, &kinds, &t->params, &t->active_params) != MODEL_OK ||
        model_ckpt_bytes(sc, &t->ckpt_bytes) || model_logits_bytes(sc, &logits))
        return MODEL_OVERFLOW;
    for (int i = 0; i < 2; i++) {
        struct model_layer_act act = {0, 0, 0, 0};
        t->act_sums[i] = kinds.sums[i];
        if (kinds.count[i] > 0 && layer_act_from(sc, &kinds.sums[i], sc->micro_batch, &act))
            return MODEL_OVERFLOW;
        t->kind_act[i] = act.total;
    }
    for (int i = 0; i < 2; i++) {
        t->kind_params[i] = kinds.params[i];
        t->kind_small[i] = kinds.small[i];
    }
    t->kind_routed = kinds.routed;
    t->layer_params = kinds.params[main_kind(&kinds)];
    t->act_layer_bytes = t->kind_act[main_kind(&kinds)];
    stage_params(sc, &kinds, t, &ck);
    uint64_t k = sc->recompute == RECOMPUTE_EVERY_K ? sc->ckpt_every : 0;
    /* 1F1B (doc/model.md section 6.1): the first stage holds pp micro-batches in flight,
     * the last one; with pp = 1 the two are the same GPU, computed once. */
    for (int i = 0; i < (sc->pp == 1 ? 1 : 2); i++) {
        struct model_gpu *g = &t->stage[i];
        uint64_t in_flight = i == MODEL_STAGE_FIRST ? sc->pp : 1;
        gpu_states(sc, g, &ck);
        if (stage_act_mix(g->layers, t->kind_act, t->ckpt_bytes, in_flight, k, &g->act_bytes))
            return MODEL_OVERFLOW;
        g->logits_bytes = (i == MODEL_STAGE_LAST || sc->pp == 1) ? logits : 0;
        g->lesson_peak_bytes =
            ck_add(&ck, g->states_bytes, ck_add(&ck, g->act_bytes, g->logits_bytes));
        g->peak_bytes = g->lesson_peak_bytes;
        if (sc->peak == PEAK_STEP) {
            struct step_gpu sg, fixed;
            step_gpu_at(sc, t, i, sc->micro_batch, t->kind_act, t->ckpt_bytes, &sg, &fixed, &ck);
            if (!step_phases(&sg, &g->step) || !step_phases(&fixed, &g->step_fixed))
                return MODEL_OVERFLOW;
            g->peak_bytes = g->step.bytes;
        }
    }
    if (sc->pp == 1)
        t->stage[MODEL_STAGE_LAST] = t->stage[MODEL_STAGE_FIRST];
    if (ck.overflow)
        return MODEL_OVERFLOW;
    t->peak_stage = t->stage[MODEL_STAGE_LAST].peak_bytes > t->stage[MODEL_STAGE_FIRST].peak_bytes
                        ? MODEL_STAGE_LAST
                        : MODEL_STAGE_FIRST;
    const struct model_gpu *g = &t->stage[t->peak_stage];
    t->weights_bytes = g->weights_bytes;
    t->grads_bytes = g->grads_bytes;
    t->optimizer_bytes = g->optimizer_bytes;
    t->states_bytes = g->states_bytes;
    t->expert_bytes = g->expert_bytes;
    t->act_bytes = g->act_bytes;
    t->logits_bytes = g->logits_bytes;
    t->peak_bytes = g->peak_bytes;
    t->lesson_peak_bytes = g->lesson_peak_bytes;
    t->peak_phase = g->step.phase;
    t->budget_bytes = model_budget_bytes(sc);
    t->fits = t->peak_bytes <= t->budget_bytes;
    return MODEL_OK;
}

enum model_status model_peak(const struct scenario *sc, struct terms *t)
{
    /* Member by member: clearing the whole struct first (about 300 bytes, a rep stos) was a
     * fifth of the time of model_peak. After an overflow every member is 0. */
    t->k_star = 0.0;
    t->k_best = t->act_k_best_bytes = t->max_micro_batch = 0;
    if (peak_terms(sc, t) != MODEL_OK) {
        *t = (struct terms){0};
        return MODEL_OVERFLOW;
    }
    return MODEL_OK;
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
    double params = l * layer + 2 * v * h + 2 * h + (double)sc->positions * h;
    double states = 18 * params; /* Megatron's 2 + 4 + 12 bytes per parameter, the most */
    double sb = s * b;
    double act = sb * (width + 5 * a * s); /* A of any kind, before tp */
    double ckpt = 2 * sb * h;
    double logits = 4 * sb * v;
    /* Activations of the first stage: m (L/pp) A without checkpointing, m ceil((L/pp)/k) c + k A
     * with: both at most m L (A + c). */
    double peak = states + m * l * (act + ckpt) + logits;
    return peak < 4611686018427387904.0; /* 2^62 */
}

/* The A of checkpointing on the first stage: the largest of the layer kinds it holds (M(k) keeps
 * one segment's activations; doc/model.md sections 5.1 and 6.2). */
static uint64_t first_stage_act(const struct terms *t)
{
    const struct model_gpu *g = &t->stage[MODEL_STAGE_FIRST];
    uint64_t a = 0;
    for (int i = 0; i < 2; i++)
        if (g->layers[i] > 0 && t->kind_act[i] > a)
            a = t->kind_act[i];
    return a;
}

double model_k_star(const struct scenario *sc, const struct terms *t)
{
    uint64_t a = first_stage_act(t);
    return a ? sqrt((double)sc->layers * (double)t->ckpt_bytes / (double)a) : 0;
}

double model_act_k_star(const struct scenario *sc, const struct terms *t)
{
    return 2 * sqrt((double)sc->layers * (double)t->ckpt_bytes * (double)first_stage_act(t));
}

/* model_k_best with one layer's activations A and checkpoint c known (model_eval has them). */
static enum model_status k_best_from(const struct scenario *sc, uint64_t A, uint64_t c,
                                     uint64_t *k_best, uint64_t *act_bytes)
{
    uint64_t stage_layers = sc->layers / sc->pp, m = sc->pp;
    /* Start at the continuous optimum k* = sqrt(Lc/A); any k with k A or m (L/pp) c / k above
     * the best M found cannot win, which bounds the scan to a few values around k*. */
    double kc = sqrt((double)m * (double)stage_layers * (double)c / (double)A);
    uint64_t k0 = kc < 1 ? 1 : kc > (double)stage_layers ? stage_layers : (uint64_t)kc;
    uint64_t best_k = k0, best;
    if (model_stage_act(sc, A, c, m, k0, &best))
        return MODEL_OVERFLOW;
    struct checked ck = {false};
    uint64_t all_ckpt = ck_mul3(&ck, m, stage_layers, c);
    uint64_t lo = ck.overflow ? 1 : all_ckpt / (best + 1);
    uint64_t hi = best / A;
    if (lo < 1)
        lo = 1;
    if (hi > stage_layers)
        hi = stage_layers;
    for (uint64_t k = lo; k <= hi; k++) {
        uint64_t mk;
        if (model_stage_act(sc, A, c, m, k, &mk))
            return MODEL_OVERFLOW;
        if (mk < best || (mk == best && k < best_k)) {
            best = mk;
            best_k = k;
        }
    }
    *k_best = best_k;
    *act_bytes = best;
    return MODEL_OK;
}

enum model_status model_k_best(const struct scenario *sc, uint64_t *k_best, uint64_t *act_bytes)
{
    struct terms t;
    if (model_peak(sc, &t) != MODEL_OK)
        return MODEL_OVERFLOW;
    return k_best_from(sc, first_stage_act(&t), t.ckpt_bytes, k_best, act_bytes);
}

/* The peak of each pipeline stage at micro-batch b, reusing the model states of `base` (they do
 * not depend on b). false on overflow. */
static bool stage_peaks_at(const struct scenario *sc, const struct terms *base, uint64_t b,
                           uint64_t peak[2])
{
    uint64_t kind_act[2] = {0, 0}, c, logits;
    for (int i = 0; i < 2; i++) {
        struct model_layer_act act;
        if (base->kind_act[i] == 0)
            continue; /* no layer of that kind */
        if (layer_act_from(sc, &base->act_sums[i], b, &act))
            return false;
        kind_act[i] = act.total;
    }
    if (ckpt_bytes_at(sc, b, &c) || logits_bytes_at(sc, b, &logits))
        return false;
    uint64_t k = sc->recompute == RECOMPUTE_EVERY_K ? sc->ckpt_every : 0;
    struct checked ck = {false};
    /* With pp = 1 both stages are the same GPU (see model_peak). */
    for (int i = 0; i < (sc->pp == 1 ? 1 : 2); i++) {
        uint64_t act_bytes;
        uint64_t in_flight = i == MODEL_STAGE_FIRST ? sc->pp : 1;
        if (sc->peak == PEAK_STEP) {
            struct step_gpu sg;
            struct step_peak sp;
            step_gpu_at(sc, base, i, b, kind_act, c, &sg, NULL, &ck);
            if (!step_phases(&sg, &sp))
                return false;
            peak[i] = sp.bytes;
            continue;
        }
        if (stage_act_mix(base->stage[i].layers, kind_act, c, in_flight, k, &act_bytes))
            return false;
        uint64_t l = (i == MODEL_STAGE_LAST || sc->pp == 1) ? logits : 0;
        peak[i] = ck_add(&ck, base->stage[i].states_bytes, ck_add(&ck, act_bytes, l));
    }
    if (sc->pp == 1)
        peak[MODEL_STAGE_LAST] = peak[MODEL_STAGE_FIRST];
    return !ck.overflow;
}

static bool fits_with_micro_batch(const struct scenario *sc, const struct terms *base, uint64_t b)
{
    uint64_t peak[2];
    return stage_peaks_at(sc, base, b, peak) && peak[0] <= base->budget_bytes &&
           peak[1] <= base->budget_bytes;
}

/* The largest b the budget allows if each stage's peak grows by `slope[i]` bytes per micro-batch
 * above its model states; 0 when the states alone do not fit. */
static uint64_t micro_batch_estimate(const struct terms *base, const uint64_t slope[2])
{
    uint64_t budget = base->budget_bytes, est = UINT64_MAX;
    for (int i = 0; i < 2; i++) {
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
    uint64_t slope[2], peak1[2];
    if (sc->peak == PEAK_STEP)
        return step_micro_batch_start(sc, base, base_b, exact);
    /* A capacity factor rounds the routed rows up per expert: not affine in b either. */
    *exact = sc->tp == 1 && sc->capacity_factor <= 0 && sc->peak == PEAK_LESSON;
    for (int i = 0; i < 2; i++) {
        uint64_t grown = base->stage[i].peak_bytes - base->stage[i].states_bytes;
        slope[i] = div_up(grown, base_b);
        *exact = *exact && grown % base_b == 0;
    }
    uint64_t b = micro_batch_estimate(base, slope);
    if (*exact)
        return b;
    if (b >= 1 && fits_with_micro_batch(sc, base, b))
        return b;
    if (!stage_peaks_at(sc, base, 1, peak1) || peak1[0] > base->budget_bytes ||
        peak1[1] > base->budget_bytes)
        return 0;
    for (int i = 0; i < 2; i++)
        slope[i] = peak1[i] - base->stage[i].states_bytes;
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
    uint64_t first[2 * STEP_POINTS], slopes[2 * STEP_POINTS];
    int n_points = 0;
    /* Without tensor parallelism and a capacity factor nothing is rounded: every point is
     * exactly affine in b, and the estimate is the answer. */
    *exact = sc->tp == 1 && sc->capacity_factor <= 0;
    bool affine = true; /* but for the rounding of divisions by tp */
    for (int i = 0; i < (sc->pp == 1 ? 1 : 2); i++) {
        const struct step_peak *p0 = &base->stage[i].step_fixed, *pb = &base->stage[i].step;
        for (int ph = 0; ph < STEP_POINTS; ph++) {
            uint64_t v0 = p0->point_bytes[ph], vb = pb->point_bytes[ph];
            if (v0 > budget)
                return 0; /* not even the states fit */
            if ((v0 == 0 && vb > 0) || vb < v0)
                *exact = affine = false; /* a point clamped at 0 for b = 0: not affine there */
            uint64_t slope = vb > v0 ? (vb - v0) / base_b : 0;
            if (slope * base_b != (vb > v0 ? vb - v0 : 0))
                *exact = false; /* rounded somewhere */
            first[n_points] = v0;
            slopes[n_points++] = slope;
            if (slope > 0 && (budget - v0) / slope < est)
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
    bool below = affine && est > 0, above = false;
    for (int j = 0; j < n_points; j++) {
        double at = (double)first[j] + (double)slopes[j] * (double)est;
        below = below && at + err < (double)budget;
        above = above || at + (double)slopes[j] - err > (double)budget;
    }
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
static uint64_t max_micro_batch_from(const struct scenario *sc, const struct terms *base,
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
    struct terms base;
    uint64_t base_b = sc->micro_batch;
    if (model_peak(sc, &base) != MODEL_OK) {
        /* Too large at its own b: the states may still fit at b = 1. */
        struct scenario one = *sc;
        one.micro_batch = base_b = 1;
        if (model_peak(&one, &base) != MODEL_OK)
            return 0;
    }
    return max_micro_batch_from(sc, &base, base_b);
}

enum model_status model_eval(const struct scenario *sc, struct terms *t)
{
    if (model_peak(sc, t) != MODEL_OK)
        return MODEL_OVERFLOW;
    uint64_t a = first_stage_act(t);
    if (k_best_from(sc, a, t->ckpt_bytes, &t->k_best, &t->act_k_best_bytes) != MODEL_OK)
        return MODEL_OVERFLOW;
    t->k_star = model_k_star(sc, t);
    t->max_micro_batch = max_micro_batch_from(sc, t, sc->micro_batch);
    return MODEL_OK;
}

uint64_t model_gpus_for_states(uint64_t params, enum precision p, uint64_t mem_bytes)
{
    struct model_bytes_per_param bpp = model_bytes_per_param(p);
    struct checked ck = {false};
    uint64_t states = ck_mul(&ck, params, bpp.weights + bpp.grads + bpp.optimizer);
    if (mem_bytes == 0 || ck.overflow)
        return UINT64_MAX;
    return div_up(states, mem_bytes);
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

enum model_status model_step_gpu(const struct scenario *sc, const struct terms *t,
                                 enum model_stage stage, struct step_gpu *out)
{
    struct checked ck = {false};
    enum model_stage s = sc->pp == 1 ? MODEL_STAGE_FIRST : stage;
    step_gpu_at(sc, t, (int)s, sc->micro_batch, t->kind_act, t->ckpt_bytes, out, NULL, &ck);
    return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
}

enum model_status model_step_parts(const struct scenario *sc, const struct terms *t,
                                   enum model_stage stage, struct step_parts *out)
{
    struct step_gpu g;
    if (model_step_gpu(sc, t, stage, &g) != MODEL_OK || !step_phase_parts(&g, out))
        return MODEL_OVERFLOW;
    return MODEL_OK;
}
