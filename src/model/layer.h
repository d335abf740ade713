/*
 * layer: the inventory of one transformer layer - the one place that says what a layer holds.
 *
 * A layer is two lists: its parameter tensors (name, count, which part of the layer: attention,
 * norms and biases, dense MLP, shared experts, router, routed experts) and the tensors it keeps
 * for the backward pass (name, bytes per token or per attention score, what tensor and sequence
 * parallelism do to it, whether the scenario's recomputation drops it). The model's totals, the
 * report's layer walk and parameter charts and their tests all read these lists; a new layer kind
 * is new entries here, not new code in three places.
 *
 * Formulas and sources: doc/model.md sections 2 (parameters) and 4 (activations). A scenario has
 * up to two layer kinds: dense layers (every layer of a dense model; the leading dense_layers of
 * a mixture-of-experts model) and MoE layers.
 *
 * Pure: reads a const scenario, fills a caller's struct; no I/O, no allocation, no globals.
 * Counts are checked: a function returning false met a count that overflows 64 bits.
 */
#ifndef MEMFIT_LAYER_H
#define MEMFIT_LAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/scenario.h"

enum layer_kind { LAYER_DENSE, LAYER_MOE };

/* Which part of a layer a parameter tensor belongs to. Routed experts are divided by etp * ep on
 * a GPU, everything else by tp. */
enum layer_part {
    LAYER_PART_ATTENTION, /* the projection matrices of attention */
    LAYER_PART_SMALL,     /* biases and norm scales */
    LAYER_PART_MLP,       /* the dense MLP */
    LAYER_PART_SHARED,    /* the shared experts and their gate */
    LAYER_PART_ROUTER,    /* the router's matrix and score bias */
    LAYER_PART_EXPERTS,   /* the routed experts, all E of them */
    LAYER_PARTS
};

/*
 * How tensor parallelism splits a linear layer's weight (Shoeybi et al. 2019, section 3): by its
 * output (column-parallel: W_Q, W_K, W_V, an MLP's first matrices), by its input (row-parallel:
 * W_O, an MLP's last matrix), or not at all (replicated: latent attention's down projections,
 * the router, a shared gate). A LoRA adapter is split as its base linear is (doc/model.md 3.6).
 */
enum layer_tp { LAYER_TP_COLUMN, LAYER_TP_ROW, LAYER_TP_REPLICATED };

/*
 * A parameter entry: its count, and for what is sized tensor by tensor (bitsandbytes' 8-bit
 * optimizer states, NF4 weights, LoRA adapters; doc/model.md 3.5 and 3.6) the tensors it is made
 * of - tensors[i] tensors of elements[i] elements each (count is their sum) - and, for the weight
 * of a linear layer, its shape: tensors[0] copies (3 E for the routed experts' gated MLPs) of a
 * d_in x d_out matrix. Biases and norm scales have d_in = d_out = 0. The gated MLPs of the
 * experts are listed as 3 copies of h x f: the down projection f x h, row-parallel, takes the
 * same adapter sizes as a column-parallel h x f.
 */
struct layer_param {
    const char *name; /* static string: "W_Q", "gate", "experts (routed)" */
    uint64_t count;
    enum layer_part part;
    uint64_t elements[2], tensors[2];
    uint64_t d_in, d_out;
    enum layer_tp tp;
    bool qv; /* W_Q or W_V of multi-head attention: LoRA's default targets */
};

/* How many bytes a kept tensor takes, per unit of what it grows with. */
enum layer_extent {
    LAYER_PER_TOKEN,        /* bytes = per * s * b */
    LAYER_PER_HEAD_ROW,     /* per query row and head: bytes = per * a * s * b */
    LAYER_PER_HEAD_SCORE,   /* per attention score and head: bytes = per * a * s^2 * b */
    LAYER_PER_ROUTED_TOKEN, /* per token-expert pair: bytes = per * routed tokens */
};

/*
 * What tensor (t), sequence and expert tensor (u) parallelism do to a kept tensor. The routed
 * rows of an MoE layer live on the GPUs of an expert-tensor-parallel group of u, which holds the
 * distinct tokens of its members (D sets of them: u with sp, else u / t when u > t, else 1);
 * expert parallelism moves rows between GPUs without removing any (doc/model.md section 4.7).
 */
enum layer_split {
    LAYER_WHOLE,        /* outside the tensor-parallel regions: whole on every rank, / t with sp */
    LAYER_SPLIT,        /* inside: / t */
    LAYER_EXPERT_ROWS,  /* h-wide per routed row: * D, / t with sp */
    LAYER_EXPERT_WIDTH, /* expert-wide per routed row: * D / u, / t with sp */
};

struct layer_tensor {
    const char *name; /* static string: "Q (rotary)", "softmax output" */
    uint64_t per;     /* bytes per unit of extent, the whole layer (before any division) */
    enum layer_extent extent;
    enum layer_split split;
    bool recomputed; /* dropped by the scenario's recomputation (selective: the attention core) */
};

/*
 * The kept tensors summed by how they grow and divide, the whole layer (before tp and sp), for
 * the tensors the recomputation keeps: bytes = whole_per_token * s b (the whole group),
 * + split_per_token * s b (the split linear part), + attn_per_token * s b + attn_per_score * s^2 b
 * (the attention term: scores, or FlashAttention's per-row statistics), + (rows_per_routed +
 * width_per_routed) * routed rows (an MoE layer's experts). Per-head entries are multiplied by
 * a.
 */
struct layer_act_sums {
    uint64_t whole_per_token;
    uint64_t split_per_token;
    uint64_t attn_per_token;
    uint64_t attn_per_score;
    uint64_t rows_per_routed;  /* LAYER_EXPERT_ROWS: bytes per routed row */
    uint64_t width_per_routed; /* LAYER_EXPERT_WIDTH */
};

#define LAYER_PARAMS_MAX 24
#define LAYER_KEPT_MAX 32

struct layer_inventory {
    enum layer_kind kind;
    struct layer_param params[LAYER_PARAMS_MAX];
    size_t n_params;
    struct layer_tensor kept[LAYER_KEPT_MAX]; /* in the order of the forward pass */
    size_t n_kept;
    struct layer_act_sums sums;        /* of kept, summed as it is built */
    uint64_t part_params[LAYER_PARTS]; /* of params, by part */
    uint64_t total_params;             /* of params */
};

/* The inventory of a layer of `kind` in sc (LAYER_MOE only when sc has experts). Returns false
 * when a count overflows 64 bits. */
bool layer_inventory(const struct scenario *sc, enum layer_kind kind, struct layer_inventory *inv);

/* The same with the sums only (sums, part_params; no lists): the model's totals, which need
 * nothing else, at a fraction of the cost. */
bool layer_inventory_sums(const struct scenario *sc, enum layer_kind kind,
                          struct layer_inventory *inv);

/* d_h: sc->head_dim, or h / heads. */
uint64_t layer_head_dim(const struct scenario *sc);

/* The sums of inv's kept tensors (struct layer_act_sums), as layer_inventory added them up. */
bool layer_act_sums(const struct scenario *sc, const struct layer_inventory *inv,
                    struct layer_act_sums *out);

/* The parameters of part p (LAYER_PARTS: all of them). false on overflow. */
bool layer_params_of(const struct layer_inventory *inv, enum layer_part p, uint64_t *out);

/*
 * Routed rows of an MoE layer for T tokens: k T with dropless routing (balanced), else the
 * padded capacity E ceil(k T cf / E) (Megatron-LM moe_utils.get_capacity). 0 without experts.
 */
uint64_t layer_routed_rows(const struct scenario *sc, uint64_t tokens);

/*
 * The weights of a layer of `kind` that FP8 training runs through FP8 GEMMs (doc/model.md section
 * 3.7), whole (before any division): the attention projections, the MLP and the experts' matrices;
 * not the norms, the biases, the router or Qwen2-MoE's shared gate. *routed: of them, the routed
 * experts'. false when a count overflows.
 */
bool layer_gemm_params(const struct scenario *sc, enum layer_kind kind, uint64_t *gemm,
                       uint64_t *routed);

#endif
