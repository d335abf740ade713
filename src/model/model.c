/* model: see model.h. Comments cite doc/model.md sections, which name the primary sources. */
#include "model/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "model/layer.h"
#include "model/step.h"

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
    /* With states_per_tensor (LoRA, QLoRA, 8-bit AdamW; doc/model.md 3.5 and 3.6): each kind's
     * states on a GPU, in the caller's array (not cleared with the rest: the common case needs
     * none of it). */
    bool per_tensor;
    struct states_layer *st;
};

static enum model_status layer_kinds(const struct scenario *sc, struct kinds *k,
                                     struct states_layer st[2])
{
    struct layer_inventory inv;
    static const struct kinds none;
    *k = none;
    k->count[LAYER_DENSE] = sc->experts ? sc->dense_layers : sc->layers;
    k->count[LAYER_MOE] = sc->layers - k->count[LAYER_DENSE];
    k->per_tensor = st != NULL && states_per_tensor(sc);
    k->st = st;
    for (int kind = 0; kind < 2; kind++) {
        static const struct states_layer no_layer;
        if (k->per_tensor)
            st[kind] = no_layer;
        if (k->count[kind] == 0)
            continue;
        /* The states sized tensor by tensor need the inventory's list. */
        if (k->per_tensor && (!layer_inventory(sc, (enum layer_kind)kind, &inv) ||
                              !states_layer(sc, &inv, &k->st[kind])))
            return MODEL_OVERFLOW;
        if ((!k->per_tensor && !layer_inventory_sums(sc, (enum layer_kind)kind, &inv)) ||
            !layer_params_of(&inv, LAYER_PARTS, &k->params[kind]) ||
            !layer_params_of(&inv, LAYER_PART_SMALL, &k->small[kind]) ||
            !layer_act_sums(sc, &inv, &k->sums[kind]))
            return MODEL_OVERFLOW;
        if (kind == LAYER_MOE && !layer_params_of(&inv, LAYER_PART_EXPERTS, &k->routed))
            return MODEL_OVERFLOW;
    }
    return MODEL_OK;
}

/*
 * A memo of layer_kinds for eval, whose rows repeat a few models in many layouts: building the
 * inventories was a sixth of a row's time. The key is every member of the scenario that
 * layer_kinds reads (through layer.c and states_per_tensor): a hit is a scenario equal to the
 * entry's in all of them, so it gives the very same kinds. A new member read by layer.c must be
 * added here; test_model.c's memo_matches_the_model changes every other member of random
 * scenarios and checks that the memo still answers as layer_kinds does. Scenarios whose states
 * are sized tensor by tensor (states_per_tensor) are not memoised.
 */
#define MODEL_CACHE_ENTRIES 512

struct layer_key {
    uint64_t layers, hidden, heads, kv_heads, ffn, head_dim, layer_norms, experts, top_k;
    uint64_t expert_ffn, shared_ffn, dense_layers, q_lora_rank, kv_lora_rank, qk_nope_dim;
    uint64_t qk_rope_dim, v_head_dim, lora_rank;
    double capacity_factor;
    int arch, attention, recompute, precision, peak, fp8, finetune, lora_targets, optimizer;
    bool dropout, qkv_bias, qk_norm, shared_gate, router_bias;
};

struct model_cache_entry {
    bool used;
    struct layer_key key;
    struct kinds kinds;
};

struct model_cache {
    struct model_cache_entry e[MODEL_CACHE_ENTRIES];
};

struct model_cache *model_cache_new(void)
{
    return calloc(1, sizeof(struct model_cache));
}

void model_cache_free(struct model_cache *c)
{
    free(c);
}

static void cache_key(const struct scenario *sc, struct layer_key *k)
{
    memset(k, 0, sizeof *k); /* the padding too: keys are compared byte by byte */
    k->layers = sc->layers;
    k->hidden = sc->hidden;
    k->heads = sc->heads;
    k->kv_heads = sc->kv_heads;
    k->ffn = sc->ffn;
    k->head_dim = sc->head_dim;
    k->layer_norms = sc->layer_norms;
    k->experts = sc->experts;
    k->top_k = sc->top_k;
    k->expert_ffn = sc->expert_ffn;
    k->shared_ffn = sc->shared_ffn;
    k->dense_layers = sc->dense_layers;
    k->q_lora_rank = sc->q_lora_rank;
    k->kv_lora_rank = sc->kv_lora_rank;
    k->qk_nope_dim = sc->qk_nope_dim;
    k->qk_rope_dim = sc->qk_rope_dim;
    k->v_head_dim = sc->v_head_dim;
    k->lora_rank = sc->lora_rank;
    k->capacity_factor = sc->capacity_factor;
    k->arch = (int)sc->arch;
    k->attention = (int)sc->attention;
    k->recompute = (int)sc->recompute;
    k->precision = (int)sc->precision;
    k->peak = (int)sc->peak;
    k->fp8 = (int)sc->fp8;
    k->finetune = (int)sc->finetune;
    k->lora_targets = (int)sc->lora_targets;
    k->optimizer = (int)sc->optimizer;
    k->dropout = sc->dropout;
    k->qkv_bias = sc->qkv_bias;
    k->qk_norm = sc->qk_norm;
    k->shared_gate = sc->shared_gate;
    k->router_bias = sc->router_bias;
}

/* The kinds of sc: the memo's entry, or *k built (then memoised) ; NULL on overflow. */
static const struct kinds *layer_kinds_cached(const struct scenario *sc, struct model_cache *cache,
                                              struct kinds *k, struct states_layer st[2])
{
    if (!cache || states_per_tensor(sc))
        return layer_kinds(sc, k, st) == MODEL_OK ? k : NULL;
    struct layer_key key;
    cache_key(sc, &key);
    /* The slot: a mix of the members that tell models and modes apart (equality is memcmp's). */
    uint64_t h = key.hidden * 0x9E3779B97F4A7C15ull ^ key.layers * 0xBF58476D1CE4E5B9ull ^
                 key.ffn * 0x94D049BB133111EBull ^ key.experts * 31 ^ key.heads * 7 ^
                 (uint64_t)(unsigned)(key.precision * 64 + key.attention * 16 + key.recompute * 4 +
                                      key.finetune) *
                     0xD6E8FEB86659FD93ull;
    struct model_cache_entry *e = &cache->e[(h ^ h >> 32) % MODEL_CACHE_ENTRIES];
    if (e->used && memcmp(&e->key, &key, sizeof key) == 0)
        return &e->kinds;
    if (layer_kinds(sc, k, st) != MODEL_OK)
        return NULL;
    if (!k->per_tensor) {
        e->used = true;
        e->key = key;
        e->kinds = *k;
    }
    return k;
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
    if (layer_kinds(sc, &k, NULL) != MODEL_OK)
        return MODEL_OVERFLOW;
    return params_of(sc, &k, out, &active);
}

enum model_status model_active_params(const struct scenario *sc, uint64_t *out)
{
    struct kinds k;
    uint64_t all;
    if (layer_kinds(sc, &k, NULL) != MODEL_OK)
        return MODEL_OVERFLOW;
    return params_of(sc, &k, &all, out);
}

/* The tokens of a sequence one GPU holds: s / cp under context parallelism (cp divides s;
 * doc/model.md 4.11). Every per-token activation, checkpoint and logit counts these; plain
 * attention's scores pair them with all s keys. */
static uint64_t local_seq(const struct scenario *sc)
{
    return sc->cp > 1 ? sc->seq / sc->cp : sc->seq;
}

/* Context parallelism's ring exchange: while a GPU computes attention against one block of keys
 * and values it receives the next, two buffers of K and V of s/cp tokens in bf16,
 * 4 (s/cp) b (w_K + w_V) / t bytes: 8 (s/cp) b h_kv / t, or with latent attention K of
 * a (d_n + d_r) and V of a d_v per token (doc/model.md 4.11; Liu et al. 2023, Ring Attention;
 * Megatron-LM's context parallelism). 0 without context parallelism. */
static uint64_t context_ring_bytes(const struct scenario *sc, uint64_t b, struct checked *ck)
{
    if (sc->cp <= 1)
        return 0;
    uint64_t kv = sc->kv_lora_rank > 0
                      ? ck_mul(ck, sc->heads, sc->qk_nope_dim + sc->qk_rope_dim + sc->v_head_dim)
                      : ck_mul3(ck, 2, sc->kv_heads, layer_head_dim(sc));
    return div_up(ck_mul(ck, ck_mul3(ck, 4, local_seq(sc), b), kv), sc->tp);
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
    uint64_t sb = ck_mul(&ck, local_seq(sc), b);
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
    uint64_t c = ck_mul(&ck, ck_mul3(&ck, residual_bytes(sc), local_seq(sc), b), sc->hidden);
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
    uint64_t l = ck_mul(&ck, ck_mul3(&ck, 4, local_seq(sc), b), sc->vocab);
    *out = div_up(l, sc->tp);
    return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
}

enum model_status model_logits_bytes(const struct scenario *sc, uint64_t *out)
{
    return logits_bytes_at(sc, sc->micro_batch, out);
}

/* The checkpoints a stage keeps on the GPU with checkpointing every k: all of them, or with
 * offload=checkpoints the one in transit to or from the host (doc/model.md 5.3). */
static uint64_t gpu_checkpoints(const struct scenario *sc, const struct pipeline_stage *st,
                                uint64_t k)
{
    uint64_t n = pipeline_checkpoints(st, k);
    return sc->offload == OFFLOAD_CHECKPOINTS && n > 1 ? 1 : n;
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

/*
 * M(k) of a stage: its chunk-micro-batches in flight keep their activations, each kind's layer
 * act[kind] (k = 0: no checkpointing), or with checkpointing every k layers one checkpoint c per
 * segment and the activations of the segment rebuilt, k A with A the largest of the stage's
 * kinds: the peak at the end of the first rebuild (doc/model.md sections 5.1 and 6.2; Chen et
 * al. 2016, 4); a segment never crosses a chunk.
 */
static enum model_status stage_act(const struct scenario *sc, const struct pipeline_stage *st,
                                   const uint64_t act[2], uint64_t ckpt, uint64_t k, uint64_t *out)
{
    struct checked ck = {false};
    if (k == 0)
        *out = ck_add(&ck, ck_mul(&ck, st->act_layers[0], act[0]),
                      ck_mul(&ck, st->act_layers[1], act[1]));
    else
        *out = ck_add(&ck, ck_mul(&ck, gpu_checkpoints(sc, st, k), ckpt),
                      ck_mul(&ck, pipeline_segment_layers(st, k), stage_max_act(st->layers, act)));
    return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
}

enum model_status model_stage_act(const struct scenario *sc, uint64_t layer_act, uint64_t ckpt,
                                  uint64_t micro_batches, uint64_t k, uint64_t *out)
{
    /* One stage of uniform layers, all L / pp in one chunk. */
    uint64_t n = sc->layers / sc->pp;
    struct pipeline_stage st = {.layers = {n, 0},
                                .in_flight = micro_batches,
                                .act_layers = {micro_batches * n, 0},
                                .chunk_layers = n};
    const uint64_t act[2] = {layer_act, 0};
    return stage_act(sc, &st, act, ckpt, k, out);
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
        for (unsigned i = 0; i < t->n_stages; i++) {
            struct step_gpu sg;
            struct step_peak sp;
            step_gpu_at(&at_k, t, (int)i, sc->micro_batch, t->kind_act, t->ckpt_bytes, &sg, NULL,
                        &ck);
            if (!step_phases(&sg, &sp))
                return MODEL_OVERFLOW;
            *out = sp.bytes > *out ? sp.bytes : *out;
        }
        return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
    }
    for (unsigned i = 0; i < t->n_stages; i++) {
        uint64_t act;
        if (stage_act(sc, &t->stage[i].pipe, t->kind_act, t->ckpt_bytes, k, &act) != MODEL_OK)
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

/* The expert data-parallel size: the GPUs of a stage (dp * tp) over the expert group (etp * ep),
 * which ZeRO shards the routed experts' states over (doc/model.md section 3.2). */
uint64_t model_expert_dp(const struct scenario *sc)
{
    uint64_t etp = sc->etp ? sc->etp : sc->tp, ep = sc->ep ? sc->ep : 1;
    uint64_t edp = sc->dp * (sc->cp ? sc->cp : 1) * sc->tp / (etp * ep);
    return edp ? edp : 1;
}

uint64_t model_zero_group(const struct scenario *sc)
{
    /* doc/model.md 3.2: ZeRO and the distributed optimizer shard over the data- and
     * context-parallel GPUs, dp cp; HSDP over zero_group of them, replicated. */
    return sc->zero_group ? sc->zero_group : sc->dp * (sc->cp ? sc->cp : 1);
}

/* The bytes of the FP8 copies of n weights on a GPU (doc/model.md section 3.7). */
static uint64_t fp8_copy_bytes(const struct scenario *sc, uint64_t n, struct checked *ck)
{
    if (sc->fp8 == FP8_MXFP8) /* two orientations, each with a 1-byte scale per 32 elements */
        return ck_mul(ck, 2, ck_add(ck, n, div_up(n, 32)));
    return sc->fp8_one_copy ? n : ck_mul(ck, 2, n);
}

/*
 * The cached FP8 copies of the GEMM weights GPU g holds (doc/model.md section 3.7; Transformer
 * Engine's performance considerations): per GEMM parameter 2 bytes with per-tensor scaling (a
 * row-wise copy and a transposed one), 1 on a GPU whose FP8 GEMMs read one copy both ways
 * (Blackwell), and with MXFP8 2 (n + ceil(n / 32)) for the n GEMM parameters of each part of a
 * layer (both orientations, a 1-byte scale per block of 32 each). A layer's GEMMs on the GPU are
 * divided as its parameters are (section 2.4): the dense part by tp, the routed experts by
 * etp ep, each rounded up; ZeRO-3 shards the copies as it shards the weights. The embedding and
 * the output layer stay in bf16. Added to the weights (and the routed ones to the experts').
 */
static void fp8_copies(const struct scenario *sc, struct model_gpu *g, struct checked *ck)
{
    uint64_t etp = sc->etp ? sc->etp : sc->tp, ep = sc->ep ? sc->ep : 1;
    uint64_t dense = 0, routed = 0;
    for (int kind = 0; kind < 2; kind++) {
        uint64_t gemm, rt;
        if (g->pipe.layers[kind] == 0)
            continue;
        if (!layer_gemm_params(sc, (enum layer_kind)kind, &gemm, &rt)) {
            ck->overflow = true;
            return;
        }
        uint64_t d = fp8_copy_bytes(sc, div_up(gemm - rt, sc->tp), ck);
        uint64_t r = fp8_copy_bytes(sc, div_up(rt, ck_mul(ck, etp, ep)), ck);
        dense = ck_add(ck, dense, ck_mul(ck, g->pipe.layers[kind], d));
        routed = ck_add(ck, routed, ck_mul(ck, g->pipe.layers[kind], r));
    }
    if (sc->zero >= 3) {
        dense = div_up(dense, model_zero_group(sc));
        routed = div_up(routed, model_expert_dp(sc));
    }
    g->fp8_bytes = ck_add(ck, dense, routed);
    g->weights_bytes = ck_add(ck, g->weights_bytes, g->fp8_bytes);
    g->expert_bytes = ck_add(ck, g->expert_bytes, routed);
    g->states_bytes = ck_add(ck, g->states_bytes, g->fp8_bytes);
}

/* Model states of a GPU from its two pools (g->pool, set by stage_params): ZeRO shards the dense
 * states over the ZeRO group and the experts' over the expert data-parallel size; stage 1 the
 * optimizer states, stage 2 the gradients too, stage 3 the weights too, each rounded up to the
 * byte; offload moves the optimizer states to the CPU. doc/model.md sections 3.2, 3.3, 3.5 and
 * 3.6 (Rajbhandari et al. 2020, section 5; Ren et al. 2021); states.h. */
static void gpu_states(const struct scenario *sc, struct model_gpu *g, struct checked *ck)
{
    struct states_bytes d = states_sharded(sc, &g->pool[0], model_zero_group(sc), ck);
    struct states_bytes e = {0, 0, 0};
    if (g->expert_params > 0)
        e = states_sharded(sc, &g->pool[1], model_expert_dp(sc), ck);
    g->weights_bytes = ck_add(ck, d.weights, e.weights);
    g->grads_bytes = ck_add(ck, d.grads, e.grads);
    g->optimizer_bytes = ck_add(ck, d.optimizer, e.optimizer);
    g->expert_bytes = ck_add(ck, e.weights, ck_add(ck, e.grads, e.optimizer));
    g->states_bytes = ck_add(ck, g->weights_bytes, ck_add(ck, g->grads_bytes, g->optimizer_bytes));
    g->fp8_bytes = 0;
    if (sc->fp8 != FP8_NONE)
        fp8_copies(sc, g, ck); /* with the weights (doc/model.md section 3.7) */
}

/* What GPU g trains and freezes (doc/model.md 3.5 and 3.6): its parameters alike, or tensor by
 * tensor from its layers' states (kinds) and the parameters outside the layers it holds. */
static void stage_pools(const struct scenario *sc, const struct kinds *k, struct model_gpu *g,
                        struct checked *ck)
{
    if (!k->per_tensor) {
        g->pool[0] = states_uniform(sc, g->params - g->expert_params, ck);
        g->pool[1] = states_uniform(sc, g->expert_params, ck);
    } else {
        states_outside(sc, sc->pp == 1 || g->pipe.first, sc->pp == 1 || g->pipe.last, &g->pool[0],
                       ck);
        g->pool[1] = (struct states_pool){0, 0, 0, 0, 0};
        for (int kind = 0; kind < 2; kind++) {
            if (g->pipe.layers[kind] == 0)
                continue;
            states_add(&g->pool[0], g->pipe.layers[kind], &k->st[kind].pool[0], ck);
            states_add(&g->pool[1], g->pipe.layers[kind], &k->st[kind].pool[1], ck);
        }
    }
    g->trained_params = ck_add(ck, g->pool[0].trained, g->pool[1].trained);
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
    for (unsigned i = 0; i < t->n_stages; i++) {
        struct model_gpu *g = &t->stage[i];
        g->expert_params = ck_mul(ck, g->pipe.layers[LAYER_MOE], routed);
        uint64_t layers =
            ck_add(ck, ck_mul(ck, g->pipe.layers[LAYER_DENSE], dense_part[LAYER_DENSE]),
                   ck_mul(ck, g->pipe.layers[LAYER_MOE], dense_part[LAYER_MOE]));
        layers = ck_add(ck, layers, g->expert_params);
        if (sc->pp == 1) {
            uint64_t all =
                ck_add(ck, layers, ck_add(ck, emb, ck_add(ck, positions, final_norm_params(sc))));
            g->params = sc->tied ? all : ck_add(ck, all, emb);
        } else if (g->pipe.first) {
            g->params = ck_add(ck, layers, ck_add(ck, emb, positions));
        } else if (g->pipe.last) {
            g->params = ck_add(ck, layers, ck_add(ck, emb, final_norm_params(sc)));
        } else {
            g->params = layers;
        }
        stage_pools(sc, k, g, ck);
    }
}

/* The embedding's backward at the end of the step (doc/model.md 10.2): a tied embedding holds the
 * output layer's partial gradient, its own and their sum (and .grad when persistent); an untied
 * one the gradient of its output. With dropout, its backward (the gradient in and out, the
 * position ids and the mask) may be higher: g->dropout_end_add - g->dropout_end_less on top of
 * the gradients (on demand, the embedding's own and the position table's are not there yet). */
static void embedding_end(const struct scenario *sc, uint64_t b, uint64_t gb, bool pers,
                          struct step_gpu *g, struct checked *ck)
{
    uint64_t h = sc->hidden, sbh = ck_mul3(ck, local_seq(sc), b, h), r = residual_bytes(sc);
    uint64_t vh = div_up(ck_mul3(ck, gb, sc->vocab, h), sc->tp);
    g->embedding_end =
        sc->tied ? ck_mul(ck, pers ? 3 : 2, vh) : ck_add(ck, ck_mul(ck, r, sbh), pers ? vh : 0);
    if (sc->arch != ARCH_GPT || !sc->dropout)
        return;
    g->dropout_end_add = ck_add(ck, ck_add(ck, 8 * (sc->positions > 0 ? local_seq(sc) : 0), sbh),
                                ck_add(ck, ck_mul3(ck, 2, r, sbh), sc->tied ? vh : 0));
    g->dropout_end_less = pers ? 0 : ck_add(ck, vh, ck_mul3(ck, gb, sc->positions, h));
}

/* The optimizer step's temporaries on a GPU (doc/model.md 10.2): foreach AdamW allocates two fp32
 * tensors per parameter of the shard (PyTorch 1.13, measured), the single-tensor loop two of one
 * tensor with the previous one's denominator, the fused kernel none; with bf16 moments, tensors
 * of bf16. bitsandbytes' 8-bit AdamW updates each tensor in one kernel and SGD its momentum in
 * place: none (section 3.5). Under LoRA the single-tensor loop is counted as foreach, a bound of
 * the adapters' few MB. */
static uint64_t optimizer_temps(const struct scenario *sc, const struct model_gpu *m,
                                struct checked *ck)
{
    struct states_per_param b = states_per_param(sc);
    unsigned per_param = b.master + b.moments, elem = b.moments / 2; /* AdamW: 4, bf16: 2 */
    if (sc->offload == OFFLOAD_OPTIMIZER || per_param == 0 || m->trained_params == 0)
        return 0;
    if (sc->optimizer_impl == OPTIMIZER_FUSED || sc->optimizer == OPTIM_ADAMW8BIT ||
        sc->optimizer == OPTIM_SGD)
        return 0;
    if (sc->optimizer_impl == OPTIMIZER_FOREACH || sc->finetune != FINETUNE_FULL)
        return ck_mul(ck, 2 * elem, m->optimizer_bytes / per_param);
    uint64_t h = sc->hidden, f = sc->ffn, t = sc->tp, vh = div_up(ck_mul(ck, sc->vocab, h), t);
    uint64_t big = ck_mul(ck, 2, vh); /* the embedding, first */
    uint64_t mlp = sc->arch == ARCH_GPT ? ck_add(ck, ck_mul3(ck, 2, h, f) / t, f / t)
                                        : ck_mul3(ck, 3, h, f) / t;
    uint64_t cand[] = {mlp, sc->positions ? ck_add(ck, ck_mul3(ck, 2, sc->positions, h), vh) : 0,
                       sc->tied ? 0 : ck_add(ck, ck_mul(ck, 2, vh), h)};
    for (int i = 0; i < 3; i++)
        big = cand[i] > big ? cand[i] : big;
    uint64_t n = sc->zero >= 1 ? model_zero_group(sc) : 1;
    return ck_mul(ck, elem, div_up(big, n));
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
    if (sc->finetune != FINETUNE_FULL) { /* only the adapters have gradients (section 3.6) */
        dense = ck_mul(ck, gb, t->kind_adapters[kind][0]);
        experts = ck_mul(ck, gb, t->kind_adapters[kind][1]);
    }
    if (sc->zero >= 2) {
        dense = div_up(dense, model_zero_group(sc));
        experts = div_up(experts, model_expert_dp(sc));
    }
    return ck_add(ck, dense, experts);
}

/* A layer's backward at its last GEMM (kind: the one whose A is amax): the input's gradient,
 * the weight's and bias's, and what its dropout or autocast keeps then. A frozen base computes
 * no weight or bias gradient; QLoRA's GEMM reads its NF4 weight dequantised into a bf16
 * temporary of the same size instead (bitsandbytes' 4-bit matmul; doc/model.md 3.6). */
static uint64_t backward_transient(const struct scenario *sc, const struct terms *t, uint64_t amax,
                                   const uint64_t kind_act[2], uint64_t b, struct checked *ck)
{
    bool gpt = sc->arch == ARCH_GPT;
    uint64_t tp = sc->tp, tl = sc->sp && tp > 1 ? tp : 1, h = sc->hidden;
    uint64_t e = sc->precision == PRECISION_FP32 ? 4 : 2;
    uint64_t sb = ck_mul(ck, local_seq(sc), b), sbh = ck_mul(ck, sb, h);
    uint64_t f = t->kind_act[1] && amax == kind_act[1] ? sc->top_k * sc->expert_ffn : sc->ffn;
    bool frozen = sc->finetune != FINETUNE_FULL || sc->precision == PRECISION_FROZEN;
    uint64_t weight = frozen && sc->finetune != FINETUNE_QLORA ? 0 : ck_mul(ck, h, f);
    uint64_t x = ck_add(ck, div_up(ck_mul(ck, e, ck_add(ck, ck_mul(ck, sb, f), weight)), tp),
                        gpt && !frozen ? e * h : 0);
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
    uint64_t sb = ck_mul(ck, local_seq(sc), b), sbh = ck_mul(ck, sb, h);
    uint64_t sbv = div_up(ck_mul(ck, sb, sc->vocab), tp), vh = div_up(ck_mul(ck, sc->vocab, h), tp);
    uint64_t n = m->pipe.layers[0] + m->pipe.layers[1];
    uint64_t k = sc->recompute == RECOMPUTE_EVERY_K ? sc->ckpt_every : 0;
    uint64_t kk = pipeline_segment_layers(&m->pipe, k);
    *g = (struct step_gpu){0};
    g->first = m->pipe.first;
    g->last = m->pipe.last;
    g->weights = m->weights_bytes;
    g->grads = m->grads_bytes;
    g->optimizer = m->optimizer_bytes;
    /* Gradient accumulation of the scenario itself, m > 1 micro-batches a step (the trial b of a
     * search keeps it). */
    bool accumulating = pipeline_micro_batches(sc) > 1;
    g->grads_at_start = pers || accumulating ? m->grads_bytes : 0;
    g->tokens = ck_mul(ck, 8, ck_mul(ck, sb, (uint64_t)g->first + g->last)); /* int64 */
    if (g->first)
        g->embedding_inputs = ck_add(ck, sc->positions ? 8 * local_seq(sc) : 0,
                                     gpt && sc->dropout ? div_up(sbh, tl) : 0);
    if (g->last) /* the final norm's input and statistics, the output layer's input */
        g->outside = div_up(ck_add(ck, ck_mul(ck, r + e, sbh), ck_mul(ck, gpt ? 8 : 4, sb)), tl);
    uint64_t amax = stage_max_act(m->pipe.layers, kind_act);
    g->ring = context_ring_bytes(sc, b, ck);
    if (kk) {
        g->recompute = true;
        g->ckpt_in_flight = ck_mul(ck, gpu_checkpoints(sc, &m->pipe, k), c);
        g->acts = g->ckpt_in_flight;
        g->ckpt = c;
        g->segment_act = ck_mul(ck, kk, amax);
    } else {
        for (int i = 0; i < 2; i++)
            g->acts = ck_add(ck, g->acts, ck_mul(ck, m->pipe.act_layers[i], kind_act[i]));
    }
    /* The bf16 copies of the weights computed from fp32 (doc/model.md 10.2, 3.6): autocast's of
     * every GEMM weight (and GPT's biases) and LoRA adapter; QLoRA's blocks read NF4 weights
     * (dequantised per GEMM, not kept), its output layer is upcast to fp32. */
    bool qlora = sc->finetune == FINETUNE_QLORA;
    if (ac || qlora) {
        uint64_t copy[2], most = 0;
        for (int i = 0; i < 2; i++) {
            uint64_t gemm = t->kind_params[i] - t->kind_small[i];
            uint64_t bias = gpt && t->kind_small[i] > 4 * h ? t->kind_small[i] - 4 * h : 0;
            copy[i] =
                qlora || !ac ? 0 : ck_add(ck, ck_mul(ck, 2, div_up(gemm, tp)), ck_mul(ck, 2, bias));
            if (ac)
                copy[i] = ck_add(ck, copy[i],
                                 ck_mul(ck, 2, t->kind_adapters[i][0] + t->kind_adapters[i][1]));
            g->all_copies = ck_add(ck, g->all_copies, ck_mul(ck, m->pipe.act_layers[i], copy[i]));
            most = m->pipe.layers[i] > 0 && copy[i] > most ? copy[i] : most;
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
    /* A frozen base (LoRA, QLoRA, precision=frozen): the head has no gradient (section 3.6). */
    bool frozen = sc->finetune != FINETUNE_FULL || sc->precision == PRECISION_FROZEN;
    if (pers || accumulating)
        g->head_grads =
            ck_add(ck, m->grads_bytes, g->last && sc->tied && !frozen ? ck_mul(ck, gb, vh) : 0);
    else if (g->last && !frozen)
        g->head_grads = ck_mul(ck, gb, ck_add(ck, final_norm, vh));
    if (!pers && !accumulating && kk)
        g->done_grads = ck_mul(ck, n - kk, layer_gpu_grads(sc, t, amax == kind_act[1], gb, ck));
    g->transient = backward_transient(sc, t, amax, kind_act, b, ck);
    g->optimizer_temps = optimizer_temps(sc, m, ck);
    if (fixed) {
        *fixed = *g;
        fixed->tokens = fixed->outside = fixed->acts = fixed->ckpt_in_flight = fixed->ring = 0;
        fixed->ckpt = fixed->segment_act = fixed->logits_forward = fixed->loss = 0;
        fixed->embedding_inputs = g->first && sc->positions ? 8 * local_seq(sc) : 0;
        fixed->transient = backward_transient(sc, t, amax, kind_act, 0, ck);
        if (g->first && !frozen)
            embedding_end(sc, 0, gb, pers, fixed, ck);
    }
    /* A frozen embedding's output needs no gradient: its backward never runs (section 3.6). */
    if (g->first && !frozen)
        embedding_end(sc, b, gb, pers, g, ck);
}

/* model_peak's work: sets every member of *t but model_eval's own (k_star, k_best,
 * act_k_best_bytes, max_micro_batch). */
static enum model_status peak_terms(const struct scenario *sc, struct model_cache *cache,
                                    bool fixed_too, struct terms *t)
{
    struct checked ck = {false};
    struct kinds built;
    uint64_t logits;
    /* One inventory per layer kind serves its parameters and its activations at every b. */
    struct states_layer st[2];
    const struct kinds *kinds = layer_kinds_cached(sc, cache, &built, st);
    if (!kinds || params_of(sc, kinds, &t->params, &t->active_params) != MODEL_OK ||
        model_ckpt_bytes(sc, &t->ckpt_bytes) || model_logits_bytes(sc, &logits))
        return MODEL_OVERFLOW;
    for (int i = 0; i < 2; i++) {
        struct model_layer_act act = {0, 0, 0, 0};
        t->act_sums[i] = kinds->sums[i];
        if (kinds->count[i] > 0 && layer_act_from(sc, &kinds->sums[i], sc->micro_batch, &act))
            return MODEL_OVERFLOW;
        t->kind_act[i] = act.total;
    }
    for (int i = 0; i < 2; i++) {
        t->kind_params[i] = kinds->params[i];
        t->kind_small[i] = kinds->small[i];
    }
    t->kind_routed = kinds->routed;
    t->adapter_params = 0;
    for (int i = 0; i < 2; i++) {
        bool lora = kinds->per_tensor && sc->finetune != FINETUNE_FULL;
        t->kind_adapters[i][0] = lora ? kinds->st[i].pool[0].trained : 0;
        t->kind_adapters[i][1] = lora ? kinds->st[i].pool[1].trained : 0;
        if (lora)
            t->adapter_params =
                ck_add(&ck, t->adapter_params, ck_mul(&ck, kinds->count[i], kinds->st[i].adapters));
    }
    t->layer_params = kinds->params[main_kind(kinds)];
    t->act_layer_bytes = t->kind_act[main_kind(kinds)];
    /* The stages that can be the most loaded (doc/model.md section 6.1): the first and the last,
     * and where the mix of layer kinds changes; with pp = 1 one GPU. */
    struct pipeline_stage pipe[MODEL_STAGES];
    t->n_stages = pipeline_candidates(sc, kinds->count[LAYER_DENSE], pipe);
    for (unsigned i = 0; i < t->n_stages; i++)
        t->stage[i].pipe = pipe[i];
    stage_params(sc, kinds, t, &ck);
    uint64_t k = sc->recompute == RECOMPUTE_EVERY_K ? sc->ckpt_every : 0;
    uint64_t ring = context_ring_bytes(sc, sc->micro_batch, &ck);
    t->peak_stage = MODEL_STAGE_FIRST;
    for (unsigned i = 0; i < t->n_stages; i++) {
        struct model_gpu *g = &t->stage[i];
        gpu_states(sc, g, &ck);
        if (stage_act(sc, &g->pipe, t->kind_act, t->ckpt_bytes, k, &g->act_bytes))
            return MODEL_OVERFLOW;
        g->act_bytes = ck_add(&ck, g->act_bytes, ring);
        g->logits_bytes = g->pipe.last ? logits : 0;
        g->host_bytes = sc->offload == OFFLOAD_CHECKPOINTS && k
                            ? ck_mul(&ck, pipeline_checkpoints(&g->pipe, k), t->ckpt_bytes)
                            : 0;
        g->lesson_peak_bytes =
            ck_add(&ck, g->states_bytes, ck_add(&ck, g->act_bytes, g->logits_bytes));
        g->peak_bytes = g->lesson_peak_bytes;
        if (sc->peak == PEAK_STEP) {
            struct step_gpu sg, fixed;
            step_gpu_at(sc, t, (int)i, sc->micro_batch, t->kind_act, t->ckpt_bytes, &sg,
                        fixed_too ? &fixed : NULL, &ck);
            if (!step_phases(&sg, &g->step) || (fixed_too && !step_phases(&fixed, &g->step_fixed)))
                return MODEL_OVERFLOW;
            g->peak_bytes = g->step.bytes;
        }
        if (g->peak_bytes > t->stage[t->peak_stage].peak_bytes)
            t->peak_stage = i;
    }
    if (ck.overflow)
        return MODEL_OVERFLOW;
    const struct model_gpu *g = &t->stage[t->peak_stage];
    t->weights_bytes = g->weights_bytes;
    t->grads_bytes = g->grads_bytes;
    t->optimizer_bytes = g->optimizer_bytes;
    t->states_bytes = g->states_bytes;
    t->expert_bytes = g->expert_bytes;
    t->act_bytes = g->act_bytes;
    t->logits_bytes = g->logits_bytes;
    t->host_bytes = g->host_bytes;
    t->ring_bytes = ring;
    t->peak_bytes = g->peak_bytes;
    t->lesson_peak_bytes = g->lesson_peak_bytes;
    t->fp8_bytes = g->fp8_bytes;
    t->peak_phase = g->step.phase;
    t->budget_bytes = model_budget_bytes(sc);
    t->fits = t->peak_bytes <= t->budget_bytes;
    return MODEL_OK;
}

/* fixed_too: also each stage's step at b = 0 (step_fixed), for the largest micro-batch. */
static enum model_status peak_with(const struct scenario *sc, struct model_cache *cache,
                                   bool fixed_too, struct terms *t)
{
    /* Member by member: clearing the whole struct first (about 300 bytes, a rep stos) was a
     * fifth of the time of model_peak. After an overflow every member is 0. */
    t->k_star = 0.0;
    t->k_best = t->act_k_best_bytes = t->max_micro_batch = 0;
    if (peak_terms(sc, cache, fixed_too, t) != MODEL_OK) {
        *t = (struct terms){0};
        return MODEL_OVERFLOW;
    }
    return MODEL_OK;
}

enum model_status model_peak(const struct scenario *sc, struct terms *t)
{
    return peak_with(sc, NULL, false, t);
}

enum model_status model_peak_cached(const struct scenario *sc, struct model_cache *cache,
                                    struct terms *t)
{
    return peak_with(sc, cache, false, t);
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
    states += sc->fp8 != FP8_NONE ? 3 * params : 0; /* FP8 copies: 2 (1 + 1/32) at most */
    if (sc->finetune != FINETUNE_FULL) { /* LoRA adapters: r (d_in + d_out) <= r (d_in d_out + 1)
                                          * per matrix, at most 16 bytes and 8 per tensor each */
        double r = (double)sc->lora_rank, matrices = 64 + 3 * (double)sc->experts;
        states += 32 * r * l * (layer + matrices);
    }
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
        if (g->pipe.layers[i] > 0 && t->kind_act[i] > a)
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

/* model_k_best with the first stage, one layer's activations A and checkpoint c known
 * (model_eval has them). */
static enum model_status k_best_from(const struct scenario *sc, const struct pipeline_stage *st,
                                     uint64_t A, uint64_t c, uint64_t *k_best, uint64_t *act_bytes)
{
    /* M(k) = m ceil(n/k) c + k A for the n layers of a chunk and m chunk-micro-batches in
     * flight (stage_act, inline: eval computes k_best for every row). With the checkpoints
     * offloaded M(k) = c + k A: k = 1. Else start at the continuous optimum sqrt(m n c / A); any
     * k with k A or m n c / k above the best M found cannot win, which bounds the scan to a few
     * values around it. */
    uint64_t n = st->chunk_layers, m = st->in_flight;
    struct checked ck = {false};
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
    return k_best_from(sc, &t.stage[MODEL_STAGE_FIRST].pipe, first_stage_act(&t), t.ckpt_bytes,
                       k_best, act_bytes);
}

/* The peak of each pipeline stage at micro-batch b, reusing the model states of `base` (they do
 * not depend on b). false on overflow. */
static bool stage_peaks_at(const struct scenario *sc, const struct terms *base, uint64_t b,
                           uint64_t peak[MODEL_STAGES])
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
    uint64_t ring = context_ring_bytes(sc, b, &ck);
    for (unsigned i = 0; i < base->n_stages; i++) {
        uint64_t act_bytes;
        if (sc->peak == PEAK_STEP) {
            struct step_gpu sg;
            struct step_peak sp;
            step_gpu_at(sc, base, (int)i, b, kind_act, c, &sg, NULL, &ck);
            if (!step_phases(&sg, &sp))
                return false;
            peak[i] = sp.bytes;
            continue;
        }
        if (stage_act(sc, &base->stage[i].pipe, kind_act, c, k, &act_bytes))
            return false;
        uint64_t l = base->stage[i].pipe.last ? logits : 0;
        act_bytes = ck_add(&ck, act_bytes, ring);
        peak[i] = ck_add(&ck, base->stage[i].states_bytes, ck_add(&ck, act_bytes, l));
    }
    return !ck.overflow;
}

static bool fits_with_micro_batch(const struct scenario *sc, const struct terms *base, uint64_t b)
{
    uint64_t peak[MODEL_STAGES];
    if (!stage_peaks_at(sc, base, b, peak))
        return false;
    for (unsigned i = 0; i < base->n_stages; i++)
        if (peak[i] > base->budget_bytes)
            return false;
    return true;
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
    if (!stage_peaks_at(sc, base, 1, peak1))
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
    return model_max_micro_batch_cached(sc, NULL);
}

uint64_t model_max_micro_batch_cached(const struct scenario *sc, struct model_cache *cache)
{
    struct terms base;
    uint64_t base_b = sc->micro_batch;
    if (peak_with(sc, cache, true, &base) != MODEL_OK) {
        /* Too large at its own b: the states may still fit at b = 1. */
        struct scenario one = *sc;
        one.micro_batch = base_b = 1;
        if (peak_with(&one, cache, true, &base) != MODEL_OK)
            return 0;
    }
    return max_micro_batch_from(sc, &base, base_b);
}

enum model_status model_eval(const struct scenario *sc, struct terms *t)
{
    return model_eval_cached(sc, NULL, t);
}

enum model_status model_eval_cached(const struct scenario *sc, struct model_cache *cache,
                                    struct terms *t)
{
    if (peak_with(sc, cache, true, t) != MODEL_OK)
        return MODEL_OVERFLOW;
    uint64_t a = first_stage_act(t);
    if (k_best_from(sc, &t->stage[MODEL_STAGE_FIRST].pipe, a, t->ckpt_bytes, &t->k_best,
                    &t->act_k_best_bytes) != MODEL_OK)
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

uint64_t model_states_gpus(const struct scenario *sc, uint64_t params)
{
    /* The states of every parameter on one GPU, as without any parallelism (sections 3.4-3.6):
     * bytes per parameter, or (tensor by tensor) the states of the scenario on one GPU. */
    struct checked ck = {false};
    uint64_t states;
    if (!states_per_tensor(sc)) {
        struct states_per_param b = states_per_param(sc);
        states = ck_mul(&ck, params, b.weights + b.grads + b.master + b.moments);
    } else {
        struct scenario one = *sc;
        struct terms t;
        one.dp = one.tp = one.pp = one.cp = one.vpp = one.ep = 1;
        one.etp = one.zero_group = 0;
        one.zero = 0;
        one.offload = OFFLOAD_NONE;
        one.fp8 = FP8_NONE;
        one.micro_batch = one.global_batch = 1;
        one.peak = PEAK_LESSON;
        if (model_peak(&one, &t) != MODEL_OK)
            return UINT64_MAX;
        states = t.states_bytes;
    }
    if (sc->gpu_mem_bytes == 0 || ck.overflow)
        return UINT64_MAX;
    return div_up(states, sc->gpu_mem_bytes);
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

enum model_status model_step_gpu(const struct scenario *sc, const struct terms *t, unsigned stage,
                                 struct step_gpu *out)
{
    struct checked ck = {false};
    unsigned s = sc->pp == 1 ? MODEL_STAGE_FIRST : stage;
    step_gpu_at(sc, t, (int)s, sc->micro_batch, t->kind_act, t->ckpt_bytes, out, NULL, &ck);
    return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
}

enum model_status model_step_parts(const struct scenario *sc, const struct terms *t, unsigned stage,
                                   struct step_parts *out)
{
    struct step_gpu g;
    if (model_step_gpu(sc, t, stage, &g) != MODEL_OK || !step_phase_parts(&g, out))
        return MODEL_OVERFLOW;
    return MODEL_OK;
}
