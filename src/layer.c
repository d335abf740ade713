/* layer: see layer.h. */
#include "layer.h"

#include <math.h>

#include "checked.h"

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

static inline __attribute__((always_inline)) void param(struct filler *f, const char *name,
                                                        uint64_t count, enum layer_part part)
{
    struct layer_inventory *inv = f->inv;
    inv->part_params[part] = ck_add(&f->ck, inv->part_params[part], count);
    inv->total_params = ck_add(&f->ck, inv->total_params, count);
    if (!f->listing)
        return;
    if (inv->n_params == LAYER_PARAMS_MAX) {
        f->full = true;
        return;
    }
    inv->params[inv->n_params++] = (struct layer_param){name, count, part};
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

/* ---- parameters (doc/model.md section 2) ---- */

/* Multi-head attention with grouped K and V heads of width d_h: W_Q and W_O are h x a d_h, W_K
 * and W_V h x g d_h; GPT layers (and llama ones with qkv_bias, Qwen2) have biases on Q, K and V,
 * GPT also on the output projection; qk_norm (Qwen3) adds an RMSNorm scale of d_h for q and
 * one for k. */
static void attention_params(struct filler *f, const struct scenario *sc)
{
    struct checked *ck = &f->ck;
    uint64_t h = sc->hidden, dh = layer_head_dim(sc), a = sc->heads, g = sc->kv_heads;
    uint64_t q = ck_mul(ck, a, dh), kv = ck_mul(ck, g, dh);
    bool gpt = sc->arch == ARCH_GPT;
    param(f, "W_Q", ck_mul(ck, h, q), LAYER_PART_ATTENTION);
    param(f, "W_K", ck_mul(ck, h, kv), LAYER_PART_ATTENTION);
    param(f, "W_V", ck_mul(ck, h, kv), LAYER_PART_ATTENTION);
    param(f, "W_O", ck_mul(ck, q, h), LAYER_PART_ATTENTION);
    if (gpt || sc->qkv_bias)
        param(f, "Q, K, V biases", ck_add(ck, q, ck_mul(ck, 2, kv)), LAYER_PART_SMALL);
    if (gpt)
        param(f, "output bias", h, LAYER_PART_SMALL);
    if (sc->qk_norm)
        param(f, "q, k norms", ck_mul(ck, 2, dh), LAYER_PART_SMALL);
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
        param(f, "W_Q down", ck_mul(ck, h, rq), LAYER_PART_ATTENTION);
        param(f, "q norm", rq, LAYER_PART_SMALL);
        param(f, "W_Q up", ck_mul(ck, rq, qk), LAYER_PART_ATTENTION);
    } else {
        param(f, "W_Q", ck_mul(ck, h, qk), LAYER_PART_ATTENTION);
    }
    param(f, "W_KV down", ck_mul(ck, h, ck_add(ck, rkv, sc->qk_rope_dim)), LAYER_PART_ATTENTION);
    param(f, "kv norm", rkv, LAYER_PART_SMALL);
    param(f, "W_KV up", ck_mul(ck, rkv, kv), LAYER_PART_ATTENTION);
    param(f, "W_O", ck_mul3(ck, a, sc->v_head_dim, h), LAYER_PART_ATTENTION);
}

/* GPT: h x f and f x h with biases f and h; llama: SwiGLU's gate, up and down. */
static void mlp_params(struct filler *f, const struct scenario *sc)
{
    struct checked *ck = &f->ck;
    uint64_t hf = ck_mul(ck, sc->hidden, sc->ffn);
    if (sc->arch == ARCH_GPT) {
        param(f, "MLP in", hf, LAYER_PART_MLP);
        param(f, "MLP out", hf, LAYER_PART_MLP);
        param(f, "MLP biases", ck_add(ck, sc->ffn, sc->hidden), LAYER_PART_SMALL);
    } else {
        param(f, "gate", hf, LAYER_PART_MLP);
        param(f, "up", hf, LAYER_PART_MLP);
        param(f, "down", hf, LAYER_PART_MLP);
    }
}

/* An MoE layer's MLP: E routed gated experts of width f_e, shared experts of total width f_s
 * (with Qwen2-MoE's sigmoid gate, h), the router h x E (with DeepSeek-V3's score bias, E). */
static void moe_params(struct filler *f, const struct scenario *sc)
{
    struct checked *ck = &f->ck;
    uint64_t h = sc->hidden, e = sc->experts;
    param(f, "experts (routed)", ck_mul(ck, ck_mul3(ck, 3, h, sc->expert_ffn), e),
          LAYER_PART_EXPERTS);
    if (sc->shared_ffn > 0)
        param(f, "shared experts", ck_mul3(ck, 3, h, sc->shared_ffn), LAYER_PART_SHARED);
    if (sc->shared_gate)
        param(f, "shared gate", h, LAYER_PART_SHARED);
    param(f, "router", ck_mul(ck, h, e), LAYER_PART_ROUTER);
    if (sc->router_bias)
        param(f, "router bias", e, LAYER_PART_ROUTER);
}

/* GPT LayerNorms have a scale and a shift (2h), RMSNorms a scale (h). */
static void norm_params(struct filler *f, const struct scenario *sc)
{
    uint64_t norms = sc->layer_norms ? sc->layer_norms : 2;
    uint64_t each = sc->arch == ARCH_GPT ? 2 * sc->hidden : sc->hidden;
    param(f, "norms", ck_mul(&f->ck, norms, each), LAYER_PART_SMALL);
}

/* ---- kept tensors (doc/model.md section 4) ---- */

/*
 * The attention core of plain attention: the softmax output 2as^2b; with GPT's dropout also the
 * mask (1 byte) and the dropout output (doc/model.md 4.2; Korthikanti et al. 2022, 4.1). Selective
 * recomputation drops them. FlashAttention keeps one fp32 log-sum-exp per row and head instead.
 */
static void core_kept(struct filler *f, const struct scenario *sc)
{
    if (sc->attention == ATTENTION_FLASH) {
        kept_dt(f, "log-sum-exp (fp32)", 4, LAYER_PER_HEAD_ROW, LAYER_SPLIT, DT_FIXED);
        return;
    }
    f->recomputing = sc->recompute == RECOMPUTE_SELECTIVE;
    kept(f, "softmax output", 2, LAYER_PER_HEAD_SCORE, LAYER_SPLIT);
    if (sc->arch == ARCH_GPT && sc->dropout) {
        kept_dt(f, "dropout mask", 1, LAYER_PER_HEAD_SCORE, LAYER_SPLIT, DT_FIXED);
        kept(f, "dropout output", 2, LAYER_PER_HEAD_SCORE, LAYER_SPLIT);
    }
    f->recomputing = false;
}

/* A pre-LN GPT layer (doc/model.md 4.1 and 4.4): norm inputs, the QKV and fc1 inputs and the
 * dropout masks stay whole under tp; Q, K, V, the projection input and the MLP's inner tensors
 * are split. V is kept after the core with plain attention (the product reads it then). */
static void gpt_kept(struct filler *f, const struct scenario *sc)
{
    struct checked *ck = &f->ck;
    uint64_t h = sc->hidden, dh = layer_head_dim(sc);
    uint64_t q = ck_mul3(ck, 2, sc->heads, dh), kv = ck_mul3(ck, 2, sc->kv_heads, dh);
    uint64_t fb = ck_mul(ck, 2, sc->ffn);
    bool flash = sc->attention == ATTENTION_FLASH, drop = sc->dropout;
    kept_dt(f, "LN1 input", 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE, DT_RESIDUAL);
    kept(f, "QKV input", 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE);
    kept(f, "Q", q, LAYER_PER_TOKEN, LAYER_SPLIT);
    kept(f, "K", kv, LAYER_PER_TOKEN, LAYER_SPLIT);
    if (flash)
        kept(f, "V", kv, LAYER_PER_TOKEN, LAYER_SPLIT);
    core_kept(f, sc);
    if (!flash)
        kept(f, "V", kv, LAYER_PER_TOKEN, LAYER_SPLIT);
    kept(f, "projection input", q, LAYER_PER_TOKEN, LAYER_SPLIT);
    if (drop)
        kept_dt(f, "projection dropout mask", h, LAYER_PER_TOKEN, LAYER_WHOLE, DT_FIXED);
    kept_dt(f, "LN2 input", 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE, DT_RESIDUAL);
    kept(f, "fc1 input", 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE);
    kept(f, "GeLU input", fb, LAYER_PER_TOKEN, LAYER_SPLIT);
    kept(f, "fc2 input", fb, LAYER_PER_TOKEN, LAYER_SPLIT);
    if (drop)
        kept_dt(f, "MLP dropout mask", h, LAYER_PER_TOKEN, LAYER_WHOLE, DT_FIXED);
    if (f->step) /* two LayerNorms' fp32 mean and 1/std per row (measured: step.csv) */
        kept_dt(f, "norm statistics (fp32)", 16, LAYER_PER_TOKEN, LAYER_WHOLE, DT_FIXED);
}

/* Llama-style attention (doc/model.md 4.5): rotary q and k, GQA with K and V of g d_h, Qwen3's
 * q/k norms keeping their inputs, Gemma 2's post-attention norm keeping the output projection's
 * result; a qkv bias keeps nothing. Measured: tests/validation/modern.csv. */
static void llama_attention_kept(struct filler *f, const struct scenario *sc)
{
    struct checked *ck = &f->ck;
    uint64_t h = sc->hidden, dh = layer_head_dim(sc);
    uint64_t q = ck_mul3(ck, 2, sc->heads, dh), kv = ck_mul3(ck, 2, sc->kv_heads, dh);
    kept_dt(f, "norm 1 input", 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE, DT_RESIDUAL);
    kept(f, "norm 1 output", 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE);
    if (sc->qk_norm)
        kept(f, "q, k norm inputs", ck_add(ck, q, kv), LAYER_PER_TOKEN, LAYER_SPLIT);
    kept(f, "Q (rotary)", q, LAYER_PER_TOKEN, LAYER_SPLIT);
    kept(f, "K (rotary)", kv, LAYER_PER_TOKEN, LAYER_SPLIT);
    kept(f, "V", kv, LAYER_PER_TOKEN, LAYER_SPLIT);
    core_kept(f, sc);
    kept(f, "projection input", q, LAYER_PER_TOKEN, LAYER_SPLIT);
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
    kept_dt(f, "norm 1 input", 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE, DT_RESIDUAL);
    kept(f, "norm 1 output", 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE);
    if (sc->q_lora_rank > 0)
        kept(f, "q down, q norm outputs", ck_mul(ck, 4, sc->q_lora_rank), LAYER_PER_TOKEN,
             LAYER_WHOLE);
    kept(f, "kv down output", ck_mul(ck, 2, ck_add(ck, rkv, dr)), LAYER_PER_TOKEN, LAYER_WHOLE);
    kept(f, "kv norm output", ck_mul(ck, 2, rkv), LAYER_PER_TOKEN, LAYER_WHOLE);
    kept(f, "Q (rotary)", qk, LAYER_PER_TOKEN, LAYER_SPLIT);
    kept(f, "K (rotary)", qk, LAYER_PER_TOKEN, LAYER_SPLIT);
    kept(f, "kv up output (V)", ck_mul3(ck, 2, a, ck_add(ck, dn, dv)), LAYER_PER_TOKEN,
         LAYER_SPLIT);
    core_kept(f, sc);
    kept(f, "projection input", ck_mul3(ck, 2, a, dv), LAYER_PER_TOKEN, LAYER_SPLIT);
}

/* SwiGLU keeps gate, up, silu(gate) and the product, 2f each (doc/model.md 4.5). */
static void swiglu_kept(struct filler *f, const struct scenario *sc)
{
    uint64_t fb = ck_mul(&f->ck, 2, sc->ffn);
    kept(f, "gate", fb, LAYER_PER_TOKEN, LAYER_SPLIT);
    kept(f, "up", fb, LAYER_PER_TOKEN, LAYER_SPLIT);
    kept(f, "silu(gate)", fb, LAYER_PER_TOKEN, LAYER_SPLIT);
    kept(f, "silu(gate) \xc3\x97 up", fb, LAYER_PER_TOKEN, LAYER_SPLIT);
}

/*
 * An eager MoE MLP (doc/model.md 4.7; measured, tests/validation/modern.csv): the router's fp32
 * softmax (4E per token) and its top-k bookkeeping (int64 indices, fp32 weights and their sum:
 * 12k + 4); per routed row the gathered input, the expert's SwiGLU (8 f_e), its output kept by
 * the weighting and the weighted output kept by the index_add combine (2h each), and the
 * dispatch indices and weight (18); the shared experts' SwiGLU (8 f_s per token) and Qwen2-MoE's
 * gate (the shared output and the sigmoid: 2h + 2).
 */
static void moe_kept(struct filler *f, const struct scenario *sc)
{
    struct checked *ck = &f->ck;
    uint64_t h = sc->hidden, k = sc->top_k;
    kept_dt(f, "router softmax (fp32)", ck_mul(ck, 4, sc->experts), LAYER_PER_TOKEN, LAYER_WHOLE,
            DT_FIXED);
    kept_dt(f, "top-k indices, weights", ck_add(ck, ck_mul(ck, 12, k), 4), LAYER_PER_TOKEN,
            LAYER_WHOLE, DT_FIXED);
    kept(f, "expert inputs", 2 * h, LAYER_PER_ROUTED_TOKEN, LAYER_EXPERT_ROWS);
    kept(f, "expert SwiGLU", ck_mul(ck, 8, sc->expert_ffn), LAYER_PER_ROUTED_TOKEN,
         LAYER_EXPERT_WIDTH);
    kept(f, "expert outputs", 2 * h, LAYER_PER_ROUTED_TOKEN, LAYER_EXPERT_ROWS);
    kept(f, "weighted outputs", 2 * h, LAYER_PER_ROUTED_TOKEN, LAYER_EXPERT_ROWS);
    kept_dt(f, "dispatch indices", 18, LAYER_PER_ROUTED_TOKEN, LAYER_EXPERT_ROWS, DT_FIXED);
    if (sc->shared_ffn > 0)
        kept(f, "shared SwiGLU", ck_mul(ck, 8, sc->shared_ffn), LAYER_PER_TOKEN, LAYER_SPLIT);
    if (sc->shared_gate)
        kept(f, "shared gate", ck_add(ck, 2 * h, 2), LAYER_PER_TOKEN, LAYER_WHOLE);
}

/* The fused RMSNorms' one fp32 1/rms per row: the layer's norms, MLA's q and kv norms (per
 * token), Qwen3's q/k norms (per token and head; measured: modern.csv). */
static void norm_statistics(struct filler *f, const struct scenario *sc)
{
    uint64_t norms = sc->layer_norms ? sc->layer_norms : 2;
    if (has_mla(sc))
        norms += sc->q_lora_rank > 0 ? 2u : 1u;
    kept_dt(f, "norm statistics (fp32)", 4 * norms, LAYER_PER_TOKEN, LAYER_WHOLE, DT_FIXED);
    if (sc->qk_norm && !has_mla(sc))
        kept_dt(f, "q, k norm statistics", 4 * (sc->heads + sc->kv_heads), LAYER_PER_TOKEN,
                LAYER_SPLIT, DT_FIXED);
}

/* A llama-style layer: attention (GQA or latent), norm 2, then a dense SwiGLU or an MoE MLP;
 * Gemma 2's post-MLP norm keeps the MLP's output. */
static void llama_kept(struct filler *f, const struct scenario *sc, enum layer_kind kind)
{
    uint64_t h = sc->hidden;
    if (has_mla(sc))
        mla_kept(f, sc);
    else
        llama_attention_kept(f, sc);
    if (sc->layer_norms >= 4)
        kept_dt(f, "post-attention norm input", 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE, DT_RESIDUAL);
    kept_dt(f, "norm 2 input", 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE, DT_RESIDUAL);
    kept(f, "norm 2 output", 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE);
    if (kind == LAYER_MOE)
        moe_kept(f, sc);
    else
        swiglu_kept(f, sc);
    if (sc->layer_norms >= 4)
        kept_dt(f, "post-MLP norm input", 2 * h, LAYER_PER_TOKEN, LAYER_WHOLE, DT_RESIDUAL);
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
                       step};
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
