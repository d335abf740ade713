/*
 * config_model: the model's shape of a row (config_internal.h): arch, layers, hidden, heads,
 * kv_heads, vocab, ffn, positions, tied, dropout, and the modern layers' columns (head_dim,
 * biases and norms, the experts, latent attention), read and then checked against each other.
 */
#include "input/config_internal.h"

#include <stdbool.h>
#include <stdint.h>

const char *const config_arch_words[] = {"gpt", "llama"};
const char *const config_qkv_bias_words[] = {"all", "sinks"};
const char *const config_qk_norm_words[] = {"width"};
const char *const config_router_bias_words[] = {"experts"};

bool config_parse_model_shape(struct row *row, struct scenario *sc)
{
    if (row->cell[COL_ARCH]) {
        int a = config_parse_word(row, COL_ARCH, config_arch_words, 2);
        if (a < 0)
            return false;
        sc->arch = (enum arch)a;
    }
    if (!config_require(row, COL_LAYERS) ||
        !config_parse_uint(row, COL_LAYERS, &sc->layers, false) ||
        !config_require(row, COL_HIDDEN) ||
        !config_parse_uint(row, COL_HIDDEN, &sc->hidden, false) ||
        !config_require(row, COL_HEADS) || !config_parse_uint(row, COL_HEADS, &sc->heads, false) ||
        !config_require(row, COL_VOCAB) || !config_parse_uint(row, COL_VOCAB, &sc->vocab, false))
        return false;
    sc->kv_heads = sc->heads;
    /* Llama's SwiGLU width: 8h/3 rounded up to a multiple of 256 (doc/model.md section 2.2;
     * meta-llama/llama llama/model.py, FeedForward). */
    sc->ffn = sc->arch == ARCH_GPT ? 4 * sc->hidden : 256 * ((8 * sc->hidden / 3 + 255) / 256);
    sc->tied = sc->arch == ARCH_GPT;
    sc->dropout = sc->arch == ARCH_GPT;
    sc->qkv_bias = sc->arch == ARCH_GPT ? QKV_BIAS_QKV : QKV_BIAS_NONE;
    sc->positions = 0;
    if (sc->hidden > UINT64_MAX / 8)
        return config_row_error(row, COL_HIDDEN, "'%s' is too large", row->cell[COL_HIDDEN]);
    return config_opt_uint(row, COL_KV_HEADS, &sc->kv_heads, false) &&
           config_opt_uint(row, COL_FFN, &sc->ffn, false) &&
           config_opt_uint(row, COL_POSITIONS, &sc->positions, true) &&
           config_opt_bool(row, COL_TIED, &sc->tied) &&
           config_opt_bool(row, COL_DROPOUT, &sc->dropout);
}

/* The columns of modern layers (doc/model.md section 13.1): head width, biases and norms, the
 * experts, latent attention. Only their syntax; the rules between them are config_check_attention's
 * and config_check_experts'. */
bool config_parse_layer_shape(struct row *row, struct scenario *sc)
{
    /* Most rows are dense models that give none of them. */
    col_mask modern =
        (COL_BIT(COL_V_HEAD_DIM + 1) - COL_BIT(COL_HEAD_DIM)) | COL_BIT(COL_CAPACITY_FACTOR);
    if (!(row->present & modern))
        return true;
    int qkv_bias = (int)sc->qkv_bias, qk_norm = (int)sc->qk_norm,
        router_bias = (int)sc->router_bias;
    if (!config_opt_uint(row, COL_HEAD_DIM, &sc->head_dim, false) ||
        !config_opt_level(row, COL_QKV_BIAS, config_qkv_bias_words, 2, &qkv_bias) ||
        !config_opt_level(row, COL_QK_NORM, config_qk_norm_words, 1, &qk_norm) ||
        !config_opt_uint(row, COL_LAYER_NORMS, &sc->layer_norms, false) ||
        !config_opt_uint(row, COL_EXPERTS, &sc->experts, true) ||
        !config_opt_uint(row, COL_TOP_K, &sc->top_k, false) ||
        !config_opt_uint(row, COL_EXPERT_FFN, &sc->expert_ffn, false) ||
        !config_opt_uint(row, COL_SHARED_FFN, &sc->shared_ffn, true) ||
        !config_opt_bool(row, COL_SHARED_GATE, &sc->shared_gate) ||
        !config_opt_level(row, COL_ROUTER_BIAS, config_router_bias_words, 1, &router_bias) ||
        !config_opt_uint(row, COL_DENSE_LAYERS, &sc->dense_layers, true) ||
        !config_opt_uint(row, COL_Q_LORA_RANK, &sc->q_lora_rank, true) ||
        !config_opt_uint(row, COL_KV_LORA_RANK, &sc->kv_lora_rank, true) ||
        !config_opt_uint(row, COL_QK_NOPE_DIM, &sc->qk_nope_dim, false) ||
        !config_opt_uint(row, COL_QK_ROPE_DIM, &sc->qk_rope_dim, false) ||
        !config_opt_uint(row, COL_V_HEAD_DIM, &sc->v_head_dim, false))
        return false;
    sc->qkv_bias = (enum qkv_bias)qkv_bias;
    sc->qk_norm = (enum qk_norm)qk_norm;
    sc->router_bias = (enum router_bias)router_bias;
    if (!row->cell[COL_CAPACITY_FACTOR])
        return true; /* 0: dropless */
    if (!config_parse_double(row, COL_CAPACITY_FACTOR, &sc->capacity_factor))
        return false;
    if (!(sc->capacity_factor > 0))
        return config_row_error(row, COL_CAPACITY_FACTOR,
                                "'%s' must be a positive number (empty: dropless)",
                                row->cell[COL_CAPACITY_FACTOR]);
    return true;
}

/* Head width, biases and latent attention (doc/model.md section 13.2). */
bool config_check_attention(struct row *row, const struct scenario *sc)
{
    static const enum col mla_dims[] = {COL_QK_NOPE_DIM, COL_QK_ROPE_DIM, COL_V_HEAD_DIM};
    static const enum col mla_cols[] = {COL_Q_LORA_RANK, COL_QK_NOPE_DIM, COL_QK_ROPE_DIM,
                                        COL_V_HEAD_DIM};
    if (sc->arch == ARCH_GPT && !sc->qkv_bias)
        return config_row_error(
            row, COL_QKV_BIAS,
            "'%s' is not possible with arch=gpt (a gpt layer has biases on every "
            "linear)",
            row->cell[COL_QKV_BIAS]);
    if (sc->arch == ARCH_GPT && sc->qkv_bias > QKV_BIAS_QKV)
        return config_row_error(row, COL_QKV_BIAS,
                                "'%s' is not possible with arch=gpt (a gpt layer has biases on "
                                "every linear, and no attention sinks)",
                                row->cell[COL_QKV_BIAS]);
    /* The layers modelled (doc/model.md section 4): a pre-LN GPT layer with its two LayerNorms;
     * llama-style layers with two norms or Gemma 2's four, q/k norms on multi-head attention. */
    if (sc->layer_norms != 2 && (sc->arch == ARCH_GPT || sc->layer_norms != 4))
        return config_row_error(row, COL_LAYER_NORMS, "'%llu' is not modelled: %s",
                                ULL(sc->layer_norms),
                                sc->arch == ARCH_GPT ? "a gpt layer has 2 norms"
                                                     : "a llama layer has 2 norms, or 4 (Gemma 2)");
    if (sc->qk_norm && sc->arch == ARCH_GPT)
        return config_row_error(
            row, COL_QK_NORM,
            "'%s' is not possible with arch=gpt (q/k norms are modelled on llama "
            "layers)",
            row->cell[COL_QK_NORM]);
    if (sc->kv_lora_rank > 0 && sc->arch == ARCH_GPT)
        return config_row_error(
            row, COL_KV_LORA_RANK,
            "'%llu' is not possible with arch=gpt (latent attention is modelled on "
            "llama layers)",
            ULL(sc->kv_lora_rank));
    if (sc->kv_lora_rank > 0 && (sc->qk_norm || sc->qkv_bias))
        return config_row_error(
            row, sc->qk_norm ? COL_QK_NORM : COL_QKV_BIAS,
            "'%s' is not possible with multi-head latent attention (kv_lora_rank)",
            row->cell[sc->qk_norm ? COL_QK_NORM : COL_QKV_BIAS]
                ? row->cell[sc->qk_norm ? COL_QK_NORM : COL_QKV_BIAS]
                : "yes");
    if (sc->kv_lora_rank == 0) {
        for (size_t i = 0; i < sizeof mla_cols / sizeof mla_cols[0]; i++)
            if (row->cell[mla_cols[i]])
                return config_row_error(
                    row, mla_cols[i],
                    "'%s' needs kv_lora_rank > 0 (a multi-head latent attention "
                    "column)",
                    row->cell[mla_cols[i]]);
        return true;
    }
    for (size_t i = 0; i < sizeof mla_dims / sizeof mla_dims[0]; i++)
        if (!row->cell[mla_dims[i]])
            return config_row_error(row, mla_dims[i],
                                    "a value is required with kv_lora_rank (multi-head latent "
                                    "attention)");
    /* MLA's widths are its own: d_n + d_r for q and k, d_v for v, one head of each per query
     * head (doc/model.md section 2). */
    if (sc->kv_heads != sc->heads)
        return config_row_error(
            row, COL_KV_HEADS,
            "'%llu' is not possible with multi-head latent attention (kv_lora_rank): "
            "kv_heads must equal heads (%llu)",
            ULL(sc->kv_heads), ULL(sc->heads));
    if (row->cell[COL_HEAD_DIM])
        return config_row_error(
            row, COL_HEAD_DIM,
            "'%s' is not possible with multi-head latent attention (kv_lora_rank), "
            "whose widths are qk_nope_dim, qk_rope_dim and v_head_dim",
            row->cell[COL_HEAD_DIM]);
    return true;
}

/* The experts and their parallelism (doc/model.md section 13.2). */
bool config_check_experts(struct row *row, const struct scenario *sc)
{
    static const enum col moe_cols[] = {COL_TOP_K,           COL_EXPERT_FFN,  COL_SHARED_FFN,
                                        COL_SHARED_GATE,     COL_ROUTER_BIAS, COL_DENSE_LAYERS,
                                        COL_CAPACITY_FACTOR, COL_ETP,         COL_MOE_MAX_NODES};
    if (sc->experts == 0) {
        for (size_t i = 0; i < sizeof moe_cols / sizeof moe_cols[0]; i++)
            if (row->cell[moe_cols[i]])
                return config_row_error(row, moe_cols[i],
                                        "'%s' needs experts > 0 (a mixture-of-experts column)",
                                        row->cell[moe_cols[i]]);
        if (sc->ep > 1)
            return config_row_error(
                row, COL_EP, "'%llu' needs experts > 0 (a mixture-of-experts column)", ULL(sc->ep));
        return true;
    }
    if (sc->arch == ARCH_GPT)
        return config_row_error(
            row, COL_EXPERTS,
            "'%llu' is not possible with arch=gpt (MoE layers are modelled as gated "
            "llama-style experts: use arch=llama)",
            ULL(sc->experts));
    if (!row->cell[COL_TOP_K])
        return config_row_error(row, COL_TOP_K, "a value is required with experts");
    if (!row->cell[COL_EXPERT_FFN])
        return config_row_error(row, COL_EXPERT_FFN, "a value is required with experts");
    if (sc->top_k > sc->experts)
        return config_row_error(row, COL_TOP_K, "'%llu' is more than experts (%llu)",
                                ULL(sc->top_k), ULL(sc->experts));
    if (sc->dense_layers > sc->layers)
        return config_row_error(row, COL_DENSE_LAYERS, "'%llu' is more than layers (%llu)",
                                ULL(sc->dense_layers), ULL(sc->layers));
    if (sc->experts % sc->ep)
        return config_row_error(row, COL_EP, "'%llu' does not divide experts (%llu)", ULL(sc->ep),
                                ULL(sc->experts));
    /* The expert groups tile the GPUs of a pipeline stage, context parallelism folded in
     * (dp cp tp: Megatron-Core's MoE parallel folding), and an expert-tensor-parallel group nests
     * with a tensor-parallel one (doc/model.md sections 4.7 and 13.2). */
    uint64_t etp = sc->etp ? sc->etp : sc->tp, group, stage;
    if (sc->tp % etp && etp % sc->tp)
        return config_row_error(row, COL_ETP,
                                "'%llu' neither divides tp (%llu) nor is a multiple of it",
                                ULL(etp), ULL(sc->tp));
    if (row->job) /* the search tiles the stage (parse_job_gpus: ep divides gpus) */
        return true;
    if (__builtin_mul_overflow(sc->dp, sc->tp, &stage) ||
        __builtin_mul_overflow(stage, sc->cp ? sc->cp : 1, &stage))
        return config_row_error(row, COL_DP, "'%llu' times tp and cp is too large", ULL(sc->dp));
    if (__builtin_mul_overflow(sc->ep, etp, &group) || stage % group) {
        if (sc->ep > 1)
            return config_row_error(
                row, COL_EP,
                "'%llu' times etp (%llu) does not divide dp * cp * tp (%llu), the "
                "GPUs of a pipeline stage",
                ULL(sc->ep), ULL(etp), ULL(stage));
        return config_row_error(
            row, COL_ETP,
            "'%llu' times ep (%llu) does not divide dp * cp * tp (%llu), the GPUs of a "
            "pipeline stage",
            ULL(etp), ULL(sc->ep), ULL(stage));
    }
    return true;
}
