/* layer: see layer.h. */
#include "model/layer.h"

#include <math.h>

#include "base/checked.h"
#include "model/impl.h"

/* The list being filled: entries past the capacity are counted and make layer_inventory fail. */
struct filler {
    struct layer_inventory *inv;
    const struct scenario *sc;
    struct checked ck;
    bool full;
    bool recomputing;  /* the entries being added are dropped by the recomputation */
    bool listing;      /* keep the entries themselves, not only their sums */
    unsigned scale[3]; /* bytes of an element of each dtype class (enum dtype) */
    bool step;         /* the step model: also the norms' per-row statistics */
    struct tuning {    /* what fine-tuning leaves of the linears' inputs (tuning_of) */
        bool qkv_input, proj_input, mlp_input, down_input;
        uint64_t attn_adapters, mlp_adapters; /* LoRA adapters on attention's, the MLP's linears */
        uint64_t qkv_copies;                  /* of attn_adapters, on q, k or v */
    } tune;
    bool fp8; /* FP8 training: the linears keep their inputs in FP8 (linear_input) */
    const struct impl_profile *impl; /* the implementation's choices (impl_of; 4.12) */
    bool casts; /* PEFT's fp32 adapters under autocast: each adapter its own bf16 input (4.12) */
    bool split; /* autocast: each of q, k, v and gate, up its own bf16 copy of its input (4.12) */
};

/*
 * What a kept tensor's element takes, by class: the layer's activations (bf16; fp32 under
 * precision=fp32), the residual stream the norms read (fp32 under fp32 and autocast), or a fixed
 * size (1-byte masks, fp32 statistics, int64 indices). The lesson counts every activation in
 * bf16; the step model (--peak step) follows the precision (doc/model.md section 10.2).
 */
enum dtype { DT_ACT, DT_RESIDUAL, DT_FIXED };

/* Adds a kept tensor's bytes to the sums of its group (layer_act_sums), unless recomputed. */
static inline __attribute__((always_inline)) void add_to_sums(struct filler *f,
                                                              const struct layer_tensor *t)
{
    struct layer_act_sums *sums = &f->inv->sums;
    if (t->recomputed)
        return;
    bool per_head = t->extent == LAYER_PER_HEAD_ROW || t->extent == LAYER_PER_HEAD_SCORE;
    uint64_t per = per_head ? ck_mul(&f->ck, t->per, f->sc->heads) : t->per;
    uint64_t *sum = t->extent == LAYER_PER_HEAD_SCORE ? &sums->attn_per_score
                    : t->extent == LAYER_PER_HEAD_ROW ? &sums->attn_per_token
                    : t->split == LAYER_EXPERT_ROWS   ? &sums->rows_per_routed
                    : t->split == LAYER_EXPERT_WIDTH  ? &sums->width_per_routed
                    : t->split == LAYER_WHOLE         ? &sums->whole_per_token
                                                      : &sums->split_per_token;
    *sum = ck_add(&f->ck, *sum, per);
}

/* Adds a parameter entry (p->count of p->part) to the sums, and to the list when listing. */
static inline __attribute__((always_inline)) void param(struct filler *f,
                                                        const struct layer_param *p)
{
    struct layer_inventory *inv = f->inv;
    inv->part_params[p->part] = ck_add(&f->ck, inv->part_params[p->part], p->count);
    inv->total_params = ck_add(&f->ck, inv->total_params, p->count);
    if (!f->listing)
        return;
    if (inv->n_params == LAYER_PARAMS_MAX) {
        f->full = true;
        return;
    }
    inv->params[inv->n_params++] = *p;
}

/* The weight of a linear layer: `copies` matrices of d_in x d_out, split by tensor parallelism
 * as `tp` says; qv marks W_Q and W_V. */
static inline __attribute__((always_inline)) void linear(struct filler *f, const char *name,
                                                         uint64_t d_in, uint64_t d_out,
                                                         uint64_t copies, enum layer_part part,
                                                         enum layer_tp tp, bool qv)
{
    uint64_t each = ck_mul(&f->ck, d_in, d_out);
    const struct layer_param p = {
        name, ck_mul(&f->ck, copies, each), part, {each, 0}, {copies, 0}, d_in, d_out, tp, qv};
    param(f, &p);
}

/* Vectors (biases, norm scales): n1 of e1 elements and n2 of e2. */
static inline __attribute__((always_inline)) void vectors(struct filler *f, const char *name,
                                                          enum layer_part part, uint64_t n1,
                                                          uint64_t e1, uint64_t n2, uint64_t e2)
{
    uint64_t count = ck_add(&f->ck, ck_mul(&f->ck, n1, e1), ck_mul(&f->ck, n2, e2));
    struct layer_param p = {name, count, part, {e1, e2}, {n1, n2}, 0, 0, LAYER_TP_COLUMN, false};
    param(f, &p);
}

static inline __attribute__((always_inline)) void kept_dt(struct filler *f, const char *name,
                                                          uint64_t per, enum layer_extent extent,
                                                          enum layer_split split, enum dtype dt)
{
    if (f->scale[dt] != 2)
        per = ck_mul(&f->ck, per, f->scale[dt]) / 2;
    struct layer_inventory *inv = f->inv;
    struct layer_tensor t = {name, per, extent, split, f->recomputing};
    add_to_sums(f, &t);
    if (!f->listing)
        return;
    if (inv->n_kept == LAYER_KEPT_MAX) {
        f->full = true;
        return;
    }
    inv->kept[inv->n_kept++] = t;
}

static inline __attribute__((always_inline)) void kept(struct filler *f, const char *name,
                                                       uint64_t per, enum layer_extent extent,
                                                       enum layer_split split)
{
    kept_dt(f, name, per, extent, split, DT_ACT);
}

uint64_t layer_head_dim(const struct scenario *sc)
{
    return sc->head_dim ? sc->head_dim : sc->hidden / sc->heads;
}

static bool has_mla(const struct scenario *sc)
{
    return sc->kv_lora_rank > 0;
}

/* Whether selective recomputation rebuilds module m (enum recompute_module; doc/model.md 5.5). */
static bool recomputes(const struct scenario *sc, unsigned m)
{
    return (scenario_recompute_modules(sc) & m) != 0;
}

/* ---- parameters (doc/model.md section 2) ---- */

/* Multi-head attention with grouped K and V heads of width d_h: W_Q and W_O are h x a d_h, W_K
 * and W_V h x g d_h; GPT layers (and llama ones with qkv_bias, Qwen2) have biases on Q, K and V,
 * GPT (and qkv_bias=all or sinks) also on the output projection; qkv_bias=sinks (gpt-oss) adds
 * a learned sink logit per head; qk_norm (Qwen3) adds an RMSNorm scale of d_h for q and one for
 * k, qk_norm=width (OLMo 2) one of a d_h for q and one of g d_h for k. */
static void attention_params(struct filler *f, const struct scenario *sc)
{
    struct checked *ck = &f->ck;
    uint64_t h = sc->hidden, dh = layer_head_dim(sc), a = sc->heads, g = sc->kv_heads;
    uint64_t q = ck_mul(ck, a, dh), kv = ck_mul(ck, g, dh);
    bool gpt = sc->arch == ARCH_GPT;
    linear(f, "W_Q", h, q, 1, LAYER_PART_ATTENTION, LAYER_TP_COLUMN, true);
    linear(f, "W_K", h, kv, 1, LAYER_PART_ATTENTION, LAYER_TP_COLUMN, false);
    linear(f, "W_V", h, kv, 1, LAYER_PART_ATTENTION, LAYER_TP_COLUMN, true);
    linear(f, "W_O", q, h, 1, LAYER_PART_ATTENTION, LAYER_TP_ROW, false);
    if (gpt || sc->qkv_bias != QKV_BIAS_NONE)
        vectors(f, "Q, K, V biases", LAYER_PART_SMALL, 1, q, 2, kv);
    if (gpt || sc->qkv_bias >= QKV_BIAS_ALL)
        vectors(f, "output bias", LAYER_PART_SMALL, 1, h, 0, 0);
    if (sc->qkv_bias == QKV_BIAS_SINKS)
        vectors(f, "attention sinks", LAYER_PART_SMALL, 1, a, 0, 0);
    if (sc->qk_norm == QK_NORM_HEAD)
        vectors(f, "q, k norms", LAYER_PART_SMALL, 2, dh, 0, 0);
    else if (sc->qk_norm == QK_NORM_WIDTH)
        vectors(f, "q, k norms", LAYER_PART_SMALL, 1, q, 1, kv);
}

/* Multi-head latent attention (DeepSeek-V2/V3; Megatron-LM theoretical_memory_usage.py, the same
 * count as DeepSeek-V3 inference/model.py): Q through a rank-r_q bottleneck with its norm (or
 * directly from h), K and V through a rank-r_kv bottleneck with its norm, one rotary key head of
 * d_r shared by all heads, the output projection from a d_v. */
static void mla_params(struct filler *f, const struct scenario *sc)
{
    struct checked *ck = &f->ck;
    uint64_t h = sc->hidden, a = sc->heads, rq = sc->q_lora_rank, rkv = sc->kv_lora_rank;
    uint64_t qk = ck_mul(ck, a, ck_add(ck, sc->qk_nope_dim, sc->qk_rope_dim));
    uint64_t kv = ck_mul(ck, a, ck_add(ck, sc->qk_nope_dim, sc->v_head_dim));
    if (rq > 0) {
        linear(f, "W_Q down", h, rq, 1, LAYER_PART_ATTENTION, LAYER_TP_REPLICATED, false);
        vectors(f, "q norm", LAYER_PART_SMALL, 1, rq, 0, 0);
        linear(f, "W_Q up", rq, qk, 1, LAYER_PART_ATTENTION, LAYER_TP_COLUMN, false);
    } else {
        linear(f, "W_Q", h, qk, 1, LAYER_PART_ATTENTION, LAYER_TP_COLUMN, false);
    }
    linear(f, "W_KV down", h, ck_add(ck, rkv, sc->qk_rope_dim), 1, LAYER_PART_ATTENTION,
           LAYER_TP_REPLICATED, false);
    vectors(f, "kv norm", LAYER_PART_SMALL, 1, rkv, 0, 0);
    linear(f, "W_KV up", rkv, kv, 1, LAYER_PART_ATTENTION, LAYER_TP_COLUMN, false);
    linear(f, "W_O", ck_mul(ck, a, sc->v_head_dim), h, 1, LAYER_PART_ATTENTION, LAYER_TP_ROW,
           false);
}

/* GPT: h x f and f x h with biases f and h; llama: SwiGLU's gate, up and down. */
static void mlp_params(struct filler *f, const struct scenario *sc)
{
    uint64_t h = sc->hidden, ffn = sc->ffn;
    if (sc->arch == ARCH_GPT) {
        linear(f, "MLP in", h, ffn, 1, LAYER_PART_MLP, LAYER_TP_COLUMN, false);
        linear(f, "MLP out", ffn, h, 1, LAYER_PART_MLP, LAYER_TP_ROW, false);
        vectors(f, "MLP biases", LAYER_PART_SMALL, 1, ffn, 1, h);
    } else {
        linear(f, "gate", h, ffn, 1, LAYER_PART_MLP, LAYER_TP_COLUMN, false);
        linear(f, "up", h, ffn, 1, LAYER_PART_MLP, LAYER_TP_COLUMN, false);
        linear(f, "down", ffn, h, 1, LAYER_PART_MLP, LAYER_TP_ROW, false);
    }
}

/* An MoE layer's MLP: E routed gated experts of width f_e (with gpt-oss's biases on gate, up and
 * down, 2 f_e + h each), shared experts of total width f_s (with Qwen2-MoE's sigmoid gate, h),
 * the router h x E (with DeepSeek-V3's score bias or gpt-oss's bias, E). */
static void moe_params(struct filler *f, const struct scenario *sc)
{
    struct checked *ck = &f->ck;
    uint64_t h = sc->hidden, e = sc->experts;
    linear(f, "experts (routed)", h, sc->expert_ffn, ck_mul(ck, 3, e), LAYER_PART_EXPERTS,
           LAYER_TP_COLUMN, false);
    if (sc->shared_ffn > 0)
        linear(f, "shared experts", h, sc->shared_ffn, 3, LAYER_PART_SHARED, LAYER_TP_COLUMN,
               false);
    if (sc->shared_gate)
        linear(f, "shared gate", h, 1, 1, LAYER_PART_SHARED, LAYER_TP_REPLICATED, false);
    if (sc->router_bias == ROUTER_BIAS_EXPERTS)
        vectors(f, "expert biases", LAYER_PART_EXPERTS, e, ck_mul(ck, 2, sc->expert_ffn), e, h);
    linear(f, "router", h, e, 1, LAYER_PART_ROUTER, LAYER_TP_REPLICATED, false);
    if (sc->router_bias != ROUTER_BIAS_NONE)
        vectors(f, "router bias", LAYER_PART_ROUTER, 1, e, 0, 0);
}

/* GPT LayerNorms have a scale and a shift (2h), RMSNorms a scale (h). */
static void norm_params(struct filler *f, const struct scenario *sc)
{
    uint64_t norms = sc->layer_norms ? sc->layer_norms : 2;
    vectors(f, "norms", LAYER_PART_SMALL, sc->arch == ARCH_GPT ? 2 * norms : norms, sc->hidden, 0,
            0);
}

/* ---- kept tensors (doc/model.md section 4) ---- */

/*
 * LoRA and QLoRA (doc/model.md 4.9; measured, tests/validation/lora.csv): a frozen linear keeps
 * nothing for its weight gradient, so its input stays only where something trainable reads it -
 * an adapter's A (which keeps it, one tensor for the linears sharing it) or full training. Each
 * adapter's B keeps x A, r wide. qv targets q and v; all-linear every linear of the layer.
 * precision=frozen is the frozen base without adapters. QLoRA keeps the same: the NF4 weight is
 * dequantised into a temporary per GEMM. Only with a frozen base does this change anything.
 */
static struct tuning tuning_of(const struct scenario *sc)
{
    bool lora = sc->finetune != FINETUNE_FULL;
    if (!lora && sc->precision != PRECISION_FROZEN)
        return (struct tuning){true, true, true, true, 0, 0, 0};
    bool every = lora && sc->lora_targets == LORA_ALL_LINEAR;
    uint64_t attn = !lora ? 0 : every ? 4 : 2, mlp = every ? (sc->arch == ARCH_GPT ? 2u : 3u) : 0;
    return (struct tuning){lora, every, every, every, attn, mlp, every ? 3u : lora ? 2u : 0u};
}

/* The x A of `adapters` LoRA adapters of rank r, 2r bytes a token each: whole under tensor
 * parallelism (r is not split: A is replicated, or its output gathered or all-reduced). */
static void adapters_kept(struct filler *f, const char *name, uint64_t adapters)
{
    if (adapters > 0)
        kept(f, name, ck_mul3(&f->ck, 2, adapters, f->sc->lora_rank), LAYER_PER_TOKEN, LAYER_WHOLE);
}

/*
 * A linear layer's saved input, `per` bytes a unit in bf16 (doc/model.md 4.10): under FP8 training
 * Transformer Engine saves its 1-byte FP8 copy instead (per / 2), and beside the bf16 tensor when
 * another op keeps that anyway (`bf16_kept`: FlashAttention its output, the router its input).
 */
static inline __attribute__((always_inline)) void
linear_input(struct filler *f, const char *name, const char *fp8_name, uint64_t per,
             enum layer_extent extent, enum layer_split split, bool bf16_kept)
{
    if (!f->fp8 || bf16_kept)
        kept(f, name, per, extent, split);
    if (f->fp8)
        kept_dt(f, fp8_name, per / 2, extent, split, DT_FIXED);
}

/*
 * The attention core of plain attention: the softmax output 2as^2b (with gpt-oss's sinks one
 * column more, 2asb); with GPT's dropout also the mask (1 byte) and the dropout output
 * (doc/model.md 4.2; Korthikanti et al. 2022, 4.1). Selective recomputation drops them.
 * FlashAttention keeps one fp32 log-sum-exp per row and head instead (the sink only enters it).
 */
static void core_kept(struct filler *f, const struct scenario *sc)
{
    if (sc->attention == ATTENTION_FLASH) {
        kept_dt(f, "log-sum-exp (fp32)", 4, LAYER_PER_HEAD_ROW, LAYER_SPLIT, DT_FIXED);
        return;
    }
    f->recomputing = recomputes(sc, RECOMPUTE_CORE_ATTN);
    kept(f, "softmax output", 2, LAYER_PER_HEAD_SCORE, LAYER_SPLIT);
    if (f->impl->softmax_fp32 && f->scale[DT_ACT] == 2) /* its fp32 input to the cast (4.12) */
        kept_dt(f, "softmax output (fp32)", 4, LAYER_PER_HEAD_SCORE, LAYER_SPLIT, DT_FIXED);
    if (sc->qkv_bias == QKV_BIAS_SINKS) /* the softmax runs over s + 1 columns, the sink's last */
        kept(f, "softmax sink column", 2, LAYER_PER_HEAD_ROW, LAYER_SPLIT);
    if (sc->arch == ARCH_GPT && sc->dropout) {
        kept_dt(f, "dropout mask", 1, LAYER_PER_HEAD_SCORE, LAYER_SPLIT, DT_FIXED);
        kept(f, "dropout output", 2, LAYER_PER_HEAD_SCORE, LAYER_SPLIT);
    }
    f->recomputing = false;
}

/* A pre-LN GPT layer (doc/model.md 4.1 and 4.4): norm inputs, the QKV and fc1 inputs and the
 * dropout masks stay whole under tp; Q, K, V, the projection input and the MLP's inner tensors
 * are split. V is kept after the core with plain attention (the product reads it then). A
 * frozen base drops the linears' inputs no adapter reads (4.9; flash keeps its output, the
 * projection input, itself). */
static void gpt_kept(struct filler *f, const struct scenario *sc)
{
    struct checked *ck = &f->ck;
    uint64_t h = sc->hidden, dh = layer_head_dim(sc);
    uint64_t q = ck_mul3(ck, 2, sc->heads, dh), kv = ck_mul3(ck, 2, sc->kv_heads, dh);
    uint64_t fb = ck_mul(ck, 2, sc->ffn);
    bool flash = sc->attention == ATTENTION_FLASH, drop = sc->dropout;
    bool norms = recomputes(sc, RECOMPUTE_LAYERNORM), mlp = recomputes(sc, RECOMPUTE_MLP);
    kept_dt(f, "LN1 input", 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE, DT_RESIDUAL);
    f->recomputing = norms; /* layernorm: the norms' outputs rebuilt (5.5) */
    if (f->tune.qkv_input)
        linear_input(f, "QKV input", "QKV input (FP8)", 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE, false);
    f->recomputing = false;
    kept(f, "Q", q, LAYER_PER_TOKEN, LAYER_SPLIT);
    kept(f, "K", kv, LAYER_PER_TOKEN, LAYER_SPLIT);
    if (flash)
        kept(f, "V", kv, LAYER_PER_TOKEN, LAYER_SPLIT);
    core_kept(f, sc);
    if (!flash)
        kept(f, "V", kv, LAYER_PER_TOKEN, LAYER_SPLIT);
    if (flash || f->tune.proj_input)
        linear_input(f, "projection input", "projection input (FP8)", q, LAYER_PER_TOKEN,
                     LAYER_SPLIT, flash);
    adapters_kept(f, "LoRA x A (attention)", f->tune.attn_adapters);
    if (drop)
        kept_dt(f, "projection dropout mask", h, LAYER_PER_TOKEN, LAYER_WHOLE, DT_FIXED);
    kept_dt(f, "LN2 input", 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE, DT_RESIDUAL);
    f->recomputing = norms;
    if (f->tune.mlp_input)
        linear_input(f, "fc1 input", "fc1 input (FP8)", 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE, false);
    f->recomputing = mlp; /* mlp: what the MLP keeps beyond its input (5.5) */
    kept(f, "GeLU input", fb, LAYER_PER_TOKEN, LAYER_SPLIT);
    if (f->tune.down_input)
        linear_input(f, "fc2 input", "fc2 input (FP8)", fb, LAYER_PER_TOKEN, LAYER_SPLIT, false);
    adapters_kept(f, "LoRA x A (MLP)", f->tune.mlp_adapters);
    f->recomputing = false;
    if (drop)
        kept_dt(f, "MLP dropout mask", h, LAYER_PER_TOKEN, LAYER_WHOLE, DT_FIXED);
    if (f->step) /* two LayerNorms' fp32 mean and 1/std per row (measured: step.csv) */
        kept_dt(f, "norm statistics (fp32)", 16, LAYER_PER_TOKEN, LAYER_WHOLE, DT_FIXED);
}

/* Whether the norms' weights are trained: full training of an unfrozen model (4.9). */
static bool norms_trained(const struct scenario *sc)
{
    return sc->finetune == FINETUNE_FULL && sc->precision != PRECISION_FROZEN;
}

/* A Llama-family norm's input (doc/model.md 4.5): the fused norm keeps it as the residual stream
 * holds it; transformers' LlamaRMSNorm (4.12) upcasts it and keeps the fp32 x and x^2 (what its
 * pow and, in PyTorch 1.13, its mean save) and, when its weight is trained, x-hat in the
 * input's dtype (the weight's product saves it for the weight's gradient), which a
 * recomputation of the norms rebuilds. */
static void norm_input(struct filler *f, const struct scenario *sc, const char *name,
                       const char *fp32_name, const char *hat_name)
{
    uint64_t h = sc->hidden;
    if (!f->impl->norm_upcast) {
        kept_dt(f, name, 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE, DT_RESIDUAL);
        return;
    }
    kept_dt(f, fp32_name, ck_mul(&f->ck, 8, h), LAYER_PER_TOKEN, LAYER_WHOLE, DT_FIXED);
    if (!norms_trained(sc))
        return; /* a frozen weight's product keeps the weight alone */
    bool was = f->recomputing;
    f->recomputing = was || recomputes(sc, RECOMPUTE_LAYERNORM);
    kept_dt(f, hat_name, 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE, DT_RESIDUAL);
    f->recomputing = was;
}

/* Llama-style attention (doc/model.md 4.5): rotary q and k, GQA with K and V of g d_h, Qwen3's
 * q/k norms keeping their inputs, Gemma 2's post-attention norm keeping the output projection's
 * result; a qkv bias keeps nothing. Measured: tests/validation/modern.csv. A frozen base drops
 * the inputs no adapter reads (4.9; measured: lora.csv). */
static void llama_attention_kept(struct filler *f, const struct scenario *sc)
{
    struct checked *ck = &f->ck;
    uint64_t h = sc->hidden, dh = layer_head_dim(sc);
    uint64_t q = ck_mul3(ck, 2, sc->heads, dh), kv = ck_mul3(ck, 2, sc->kv_heads, dh);
    bool flash = sc->attention == ATTENTION_FLASH;
    /* repeat_kv (4.12): the core keeps K and V of every head, not of the g groups */
    uint64_t kv_core = f->impl->repeat_kv && (!flash || sc->sdpa) ? q : kv;
    norm_input(f, sc, "norm 1 input", "norm 1 input, its square (fp32)", "norm 1 x-hat");
    f->recomputing = recomputes(sc, RECOMPUTE_LAYERNORM);
    if (f->casts) /* each adapter's own bf16 copy, the norm's output kept by none (4.12) */
        kept(f, "adapter input copies (q, k, v)", ck_mul(ck, 2 * h, f->tune.qkv_copies),
             LAYER_PER_TOKEN, LAYER_WHOLE);
    else if (f->tune.qkv_input && f->split)
        kept(f, "norm 1 output, cast for q, k, v", 6 * h, LAYER_PER_TOKEN, LAYER_WHOLE);
    else if (f->tune.qkv_input)
        linear_input(f, "norm 1 output", "norm 1 output (FP8)", 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE,
                     false);
    f->recomputing = false;
    if (sc->qk_norm == QK_NORM_HEAD && f->impl->norm_upcast) { /* Qwen3RMSNorm (4.12) */
        kept_dt(f, "q, k norm inputs, squares (fp32)", ck_mul(ck, 4, ck_add(ck, q, kv)),
                LAYER_PER_TOKEN, LAYER_SPLIT, DT_FIXED);
        if (norms_trained(sc))
            kept(f, "q, k norm x-hat", ck_add(ck, q, kv), LAYER_PER_TOKEN, LAYER_SPLIT);
    } else if (sc->qk_norm) {
        kept(f, "q, k norm inputs", ck_add(ck, q, kv), LAYER_PER_TOKEN, LAYER_SPLIT);
    }
    kept(f, "Q (rotary)", q, LAYER_PER_TOKEN, LAYER_SPLIT);
    kept(f, "K (rotary)", kv_core, LAYER_PER_TOKEN, LAYER_SPLIT);
    kept(f, "V", kv_core, LAYER_PER_TOKEN, LAYER_SPLIT);
    core_kept(f, sc);
    if (flash || (f->tune.proj_input && !f->casts))
        linear_input(f, "projection input", "projection input (FP8)", q, LAYER_PER_TOKEN,
                     LAYER_SPLIT, flash);
    if (f->casts && f->tune.proj_input)
        kept(f, "adapter input copy (o)", q, LAYER_PER_TOKEN, LAYER_SPLIT);
    adapters_kept(f, "LoRA x A (attention)", f->tune.attn_adapters);
}

/*
 * Multi-head latent attention (doc/model.md 4.8; DeepSeek-V3 inference/model.py): the down
 * projections are replicated under tensor parallelism, so their outputs (the q bottleneck and its
 * norm, the kv bottleneck with the rotary key, its norm) stay whole; q, k, the kv up-projection's
 * output (V is a view of it), the core and the output projection's input are split by heads.
 */
static void mla_kept(struct filler *f, const struct scenario *sc)
{
    struct checked *ck = &f->ck;
    uint64_t h = sc->hidden, a = sc->heads, dn = sc->qk_nope_dim, dr = sc->qk_rope_dim;
    uint64_t dv = sc->v_head_dim, rkv = sc->kv_lora_rank;
    uint64_t qk = ck_mul3(ck, 2, a, ck_add(ck, dn, dr));
    norm_input(f, sc, "norm 1 input", "norm 1 input, its square (fp32)", "norm 1 x-hat");
    f->recomputing = recomputes(sc, RECOMPUTE_LAYERNORM);
    linear_input(f, "norm 1 output", "norm 1 output (FP8)", 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE,
                 false);
    f->recomputing = false;
    if (sc->q_lora_rank > 0 && !f->fp8)
        kept(f, "q down, q norm outputs", ck_mul(ck, 4, sc->q_lora_rank), LAYER_PER_TOKEN,
             LAYER_WHOLE);
    if (sc->q_lora_rank > 0 && f->fp8) { /* the q norm's input, and W_Q up's in FP8 (4.10) */
        kept(f, "q down output", ck_mul(ck, 2, sc->q_lora_rank), LAYER_PER_TOKEN, LAYER_WHOLE);
        kept_dt(f, "q norm output (FP8)", sc->q_lora_rank, LAYER_PER_TOKEN, LAYER_WHOLE, DT_FIXED);
    }
    kept(f, "kv down output", ck_mul(ck, 2, ck_add(ck, rkv, dr)), LAYER_PER_TOKEN, LAYER_WHOLE);
    linear_input(f, "kv norm output", "kv norm output (FP8)", ck_mul(ck, 2, rkv), LAYER_PER_TOKEN,
                 LAYER_WHOLE, false);
    f->recomputing = recomputes(sc, RECOMPUTE_MLA_UP_PROJ); /* the up-projections, rotary (5.5) */
    kept(f, "Q (rotary)", qk, LAYER_PER_TOKEN, LAYER_SPLIT);
    kept(f, "K (rotary)", qk, LAYER_PER_TOKEN, LAYER_SPLIT);
    kept(f, "kv up output (V)", ck_mul3(ck, 2, a, ck_add(ck, dn, dv)), LAYER_PER_TOKEN,
         LAYER_SPLIT);
    f->recomputing = false;
    core_kept(f, sc);
    linear_input(f, "projection input", "projection input (FP8)", ck_mul3(ck, 2, a, dv),
                 LAYER_PER_TOKEN, LAYER_SPLIT, sc->attention == ATTENTION_FLASH);
}

/* SwiGLU keeps gate, up, silu(gate) and the product, 2f each (doc/model.md 4.5), fused
 * (Megatron-Core, 4.12) gate and up and the product; the product, the down projection's input,
 * only if down is trained (4.9), PEFT's adapter on down its own copy of it instead (4.12). */
static void swiglu_kept(struct filler *f, const struct scenario *sc)
{
    uint64_t fb = ck_mul(&f->ck, 2, sc->ffn);
    f->recomputing = recomputes(sc, RECOMPUTE_MLP); /* what the MLP keeps beyond its input */
    if (f->impl->swiglu_fused) { /* bias_swiglu: its input, gate and up, alone (4.12) */
        kept(f, "gate, up (fused SwiGLU input)", 2 * fb, LAYER_PER_TOKEN, LAYER_SPLIT);
    } else {
        kept(f, "gate", fb, LAYER_PER_TOKEN, LAYER_SPLIT);
        kept(f, "up", fb, LAYER_PER_TOKEN, LAYER_SPLIT);
        kept(f, "silu(gate)", fb, LAYER_PER_TOKEN, LAYER_SPLIT);
    }
    if (f->tune.down_input && f->casts)
        kept(f, "adapter input copy (down)", fb, LAYER_PER_TOKEN, LAYER_SPLIT);
    else if (f->tune.down_input)
        linear_input(f, "silu(gate) \xc3\x97 up", "silu(gate) \xc3\x97 up (FP8)", fb,
                     LAYER_PER_TOKEN, LAYER_SPLIT, false);
    adapters_kept(f, "LoRA x A (MLP)", f->tune.mlp_adapters);
    f->recomputing = false;
}

/*
 * An eager MoE MLP (doc/model.md 4.7; measured, tests/validation/modern.csv): the router's fp32
 * softmax (4E per token) and its top-k bookkeeping (int64 indices, fp32 weights and their sum:
 * 12k + 4) - gpt-oss's router (router_bias=experts) keeps the int64 indices and a bf16 softmax
 * over the k (10k); per routed row the gathered input, the expert's SwiGLU (8 f_e; gpt-oss's
 * clamped one 14 f_e), its output kept by
 * the weighting and the weighted output kept by the index_add combine (2h each; neither when the
 * profile weights the rows inside the activation, 4.12), and the dispatch indices and weight (18);
 * the shared experts' SwiGLU (8 f_s per token) and Qwen2-MoE's gate (the shared output and the
 * sigmoid: 2h + 2). Under FP8 (4.10) the experts' inputs and products are 1 byte an element, and
 * shared experts add an FP8 copy of the norm 2 output, which the router keeps in bf16.
 */
static void moe_kept(struct filler *f, const struct scenario *sc)
{
    struct checked *ck = &f->ck;
    uint64_t h = sc->hidden, k = sc->top_k;
    bool moe = recomputes(sc, RECOMPUTE_MOE), act = recomputes(sc, RECOMPUTE_MOE_ACT);
    bool shared = moe || recomputes(sc, RECOMPUTE_SHARED_EXPERTS);
    f->recomputing = moe; /* moe: everything the MoE MLP keeps beyond its input (5.5) */
    bool gpt_oss = sc->router_bias == ROUTER_BIAS_EXPERTS;
    if (gpt_oss) /* top-k over the logits, then a softmax over the k in bf16 (4.7) */
        kept_dt(f, "top-k indices, softmax of k", ck_mul(ck, 10, k), LAYER_PER_TOKEN, LAYER_WHOLE,
                DT_FIXED);
    else {
        kept_dt(f, "router softmax (fp32)", ck_mul(ck, 4, sc->experts), LAYER_PER_TOKEN,
                LAYER_WHOLE, DT_FIXED);
        kept_dt(f, "top-k indices, weights", ck_add(ck, ck_mul(ck, 12, k), 4), LAYER_PER_TOKEN,
                LAYER_WHOLE, DT_FIXED);
    }
    linear_input(f, "expert inputs", "expert inputs (FP8)", 2 * h, LAYER_PER_ROUTED_TOKEN,
                 LAYER_EXPERT_ROWS, false);
    /* FP8 (4.10): the product, the down projection's input, in 1 byte of its 2. gpt-oss's
     * clamped SwiGLU keeps 14 f_e (4.7): gate_up's output, the sigmoid, the clamped gate,
     * up + 1, glu and their product. */
    uint64_t glu = gpt_oss ? 14 : f->impl->swiglu_fused ? 6 : 8, all = f->fp8 ? glu - 2 : glu;
    if (!act) {
        kept(f, gpt_oss ? "expert clamped SwiGLU" : "expert SwiGLU",
             ck_mul(ck, all, sc->expert_ffn), LAYER_PER_ROUTED_TOKEN, LAYER_EXPERT_WIDTH);
    } else { /* moe_act: the activation's input (gate, up) kept, its outputs rebuilt (5.5) */
        kept(f, "expert gate, up", ck_mul(ck, 4, sc->expert_ffn), LAYER_PER_ROUTED_TOKEN,
             LAYER_EXPERT_WIDTH);
        f->recomputing = true;
        kept(f, "expert activation outputs", ck_mul(ck, all - 4, sc->expert_ffn),
             LAYER_PER_ROUTED_TOKEN, LAYER_EXPERT_WIDTH);
    }
    if (f->fp8)
        kept_dt(f, "expert products (FP8)", sc->expert_ffn, LAYER_PER_ROUTED_TOKEN,
                LAYER_EXPERT_WIDTH, DT_FIXED);
    f->recomputing = moe;
    if (!f->impl->probs_in_act) { /* weighted in the activation: scatter_add_ keeps none (4.12) */
        kept(f, "expert outputs", 2 * h, LAYER_PER_ROUTED_TOKEN, LAYER_EXPERT_ROWS);
        kept(f, "weighted outputs", 2 * h, LAYER_PER_ROUTED_TOKEN, LAYER_EXPERT_ROWS);
    }
    if (f->impl->argsort_permute) { /* the token index and the weight; the argsort (4.12) */
        kept_dt(f, "dispatch indices", 10, LAYER_PER_ROUTED_TOKEN, LAYER_EXPERT_ROWS, DT_FIXED);
        kept_dt(f, "permute argsort (int64)", ck_mul(ck, 8, sc->experts), LAYER_PER_TOKEN,
                LAYER_WHOLE, DT_FIXED);
    } else {
        kept_dt(f, "dispatch indices", 18, LAYER_PER_ROUTED_TOKEN, LAYER_EXPERT_ROWS, DT_FIXED);
    }
    f->recomputing = shared; /* shared_experts: theirs, the gate's too (5.5) */
    if (sc->shared_ffn > 0)
        kept(f, "shared SwiGLU",
             ck_mul(ck, (f->fp8 ? 6u : 8u) - (f->impl->swiglu_fused ? 2u : 0u), sc->shared_ffn),
             LAYER_PER_TOKEN, LAYER_SPLIT);
    if (sc->shared_ffn > 0 && f->fp8) { /* the inputs of gate and up, and of down (4.10) */
        kept_dt(f, "norm 2 output (FP8)", h, LAYER_PER_TOKEN, LAYER_WHOLE, DT_FIXED);
        kept_dt(f, "shared products (FP8)", sc->shared_ffn, LAYER_PER_TOKEN, LAYER_SPLIT, DT_FIXED);
    }
    if (sc->shared_gate)
        kept(f, "shared gate", ck_add(ck, 2 * h, 2), LAYER_PER_TOKEN, LAYER_WHOLE);
    f->recomputing = false;
}

/* The fused RMSNorms' one fp32 1/rms per row: the layer's norms, MLA's q and kv norms (per
 * token), Qwen3's q/k norms (per token and head; measured: modern.csv). */
static void norm_statistics(struct filler *f, const struct scenario *sc)
{
    uint64_t norms = sc->layer_norms ? sc->layer_norms : 2;
    if (has_mla(sc))
        norms += sc->q_lora_rank > 0 ? 2u : 1u;
    kept_dt(f, "norm statistics (fp32)", 4 * norms, LAYER_PER_TOKEN, LAYER_WHOLE, DT_FIXED);
    if (sc->qk_norm == QK_NORM_HEAD && !has_mla(sc))
        kept_dt(f, "q, k norm statistics", 4 * (sc->heads + sc->kv_heads), LAYER_PER_TOKEN,
                LAYER_SPLIT, DT_FIXED);
    else if (sc->qk_norm == QK_NORM_WIDTH && !has_mla(sc)) /* one row each, whole on every rank */
        kept_dt(f, "q, k norm statistics", 8, LAYER_PER_TOKEN, LAYER_WHOLE, DT_FIXED);
}

/* A llama-style layer: attention (GQA or latent), norm 2, then a dense SwiGLU or an MoE MLP;
 * Gemma 2's post-MLP norm keeps the MLP's output. Under LoRA (4.9) latent attention and the MoE
 * MLP keep what full training keeps (not measured; an upper bound: the frozen linears' inputs
 * counted there exceed the adapters' x A when r is small against h). */
static void llama_kept(struct filler *f, const struct scenario *sc, enum layer_kind kind)
{
    uint64_t h = sc->hidden;
    if (has_mla(sc))
        mla_kept(f, sc);
    else
        llama_attention_kept(f, sc);
    if (sc->layer_norms >= 4)
        norm_input(f, sc, "post-attention norm input", "post-attention norm input, square (fp32)",
                   "post-attention norm x-hat");
    norm_input(f, sc, "norm 2 input", "norm 2 input, its square (fp32)", "norm 2 x-hat");
    f->recomputing = recomputes(sc, RECOMPUTE_LAYERNORM);
    if (kind == LAYER_MOE) /* the router keeps it in bf16 (with FP8, see moe_kept) */
        kept(f, "norm 2 output", 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE);
    else if (f->tune.mlp_input && f->casts) /* PEFT: gate's and up's adapters, a copy each */
        kept(f, "adapter input copies (gate, up)", 4 * h, LAYER_PER_TOKEN, LAYER_WHOLE);
    else if (f->tune.mlp_input && f->split) /* autocast casts it for gate and for up (4.12) */
        kept(f, "norm 2 output, cast for gate, up", 4 * h, LAYER_PER_TOKEN, LAYER_WHOLE);
    else if (f->tune.mlp_input)
        linear_input(f, "norm 2 output", "norm 2 output (FP8)", 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE,
                     false);
    f->recomputing = false;
    if (kind == LAYER_MOE)
        moe_kept(f, sc);
    else
        swiglu_kept(f, sc);
    if (sc->layer_norms >= 4)
        norm_input(f, sc, "post-MLP norm input", "post-MLP norm input, square (fp32)",
                   "post-MLP norm x-hat");
    if (f->step)
        norm_statistics(f, sc);
}

/* Fills inv, with its lists or only their sums. */
static bool inventory(const struct scenario *sc, enum layer_kind kind, bool listing,
                      struct layer_inventory *inv)
{
    bool step = sc->peak == PEAK_STEP, fp32 = sc->precision == PRECISION_FP32;
    bool fp32_residual = fp32 || sc->precision == PRECISION_AUTOCAST;
    struct filler f = {inv,
                       sc,
                       {false},
                       false,
                       false,
                       listing,
                       {step && fp32 ? 4u : 2u, step && fp32_residual ? 4u : 2u, 2u},
                       step,
                       tuning_of(sc),
                       sc->fp8 != FP8_NONE,
                       impl_of(sc),
                       false,
                       false};
    f.casts = f.impl->adapter_casts && sc->finetune != FINETUNE_FULL && !fp32;
    f.split = f.impl->split_casts && step && sc->precision == PRECISION_AUTOCAST && !f.fp8 &&
              sc->finetune == FINETUNE_FULL;
    inv->kind = kind;
    inv->n_params = inv->n_kept = 0;
    inv->sums = (struct layer_act_sums){0, 0, 0, 0, 0, 0};
    for (int p = 0; p < LAYER_PARTS; p++)
        inv->part_params[p] = 0;
    inv->total_params = 0;
    if (has_mla(sc))
        mla_params(&f, sc);
    else
        attention_params(&f, sc);
    if (kind == LAYER_MOE)
        moe_params(&f, sc);
    else
        mlp_params(&f, sc);
    norm_params(&f, sc);
    if (sc->arch == ARCH_GPT)
        gpt_kept(&f, sc);
    else
        llama_kept(&f, sc, kind);
    return !f.ck.overflow && !f.full;
}

bool layer_inventory(const struct scenario *sc, enum layer_kind kind, struct layer_inventory *inv)
{
    return inventory(sc, kind, true, inv);
}

bool layer_inventory_sums(const struct scenario *sc, enum layer_kind kind,
                          struct layer_inventory *inv)
{
    return inventory(sc, kind, false, inv);
}

bool layer_params_of(const struct layer_inventory *inv, enum layer_part p, uint64_t *out)
{
    *out = p == LAYER_PARTS ? inv->total_params : inv->part_params[p];
    return true; /* layer_inventory checked the sums */
}

bool layer_act_sums(const struct scenario *sc, const struct layer_inventory *inv,
                    struct layer_act_sums *out)
{
    (void)sc; /* summed as the inventory was built (layer_inventory checked the counts) */
    *out = inv->sums;
    return true;
}

uint64_t layer_routed_rows(const struct scenario *sc, uint64_t tokens)
{
    if (sc->experts == 0)
        return 0;
    if (sc->capacity_factor <= 0)
        return sc->top_k * tokens;
    /* Exactly, as the decimal the user wrote: cf in millionths (1.1 is 1100000 / 10^6, where
     * the nearest double would put ceil(k T cf / E) one above for some T). */
    unsigned __int128 cf = (unsigned __int128)llround(sc->capacity_factor * 1e6);
    unsigned __int128 num = (unsigned __int128)sc->top_k * tokens * cf;
    unsigned __int128 den = (unsigned __int128)sc->experts * 1000000u;
    unsigned __int128 rows = (num / den + (num % den != 0)) * sc->experts;
    return rows <= UINT64_MAX ? (uint64_t)rows : UINT64_MAX; /* overflows later, checked */
}

bool layer_gemm_params(const struct scenario *sc, enum layer_kind kind, uint64_t *gemm,
                       uint64_t *routed)
{
    /* The router and the shared gate are not Transformer Engine modules in Megatron-LM (a plain
     * F.linear of moe/router.py, moe/shared_experts.py): they stay in bf16 (or fp32). */
    struct layer_inventory inv;
    if (!layer_inventory_sums(sc, kind, &inv))
        return false;
    const uint64_t *part = inv.part_params;
    uint64_t gate = kind == LAYER_MOE && sc->shared_gate ? sc->hidden : 0;
    *routed = part[LAYER_PART_EXPERTS];
    *gemm = part[LAYER_PART_ATTENTION] + part[LAYER_PART_MLP] + (part[LAYER_PART_SHARED] - gate) +
            part[LAYER_PART_EXPERTS]; /* at most the layer's total, which did not overflow */
    return true;
}
