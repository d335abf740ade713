/*
 * impl: the implementation profiles - which tensors the framework a run trains with keeps for
 * the backward pass where it differs from memfit's own assumptions (doc/model.md section 4.12).
 *
 * A profile is one row of choices, read by the layer inventory (model/layer.c) and nowhere else:
 * the norms' fp32 upcast (transformers' LlamaRMSNorm), the eager attention's fp32 softmax
 * and K and V repeated to every head (repeat_kv), a SwiGLU fused to keep only its input
 * (Megatron-Core's bias_swiglu), the routing probabilities applied inside the experts'
 * activation so that the MoE combine keeps no h-wide tensor (Megatron-Core's weighted SwiGLU
 * and unpermute's scatter_add_), the tokens permuted by an argsort over every (expert, token)
 * pair (Megatron-Core's permute), PEFT's fp32 adapters under autocast (a bf16 copy of each
 * adapter's input and weights), and autocast's cast of a norm's fp32 output once per linear
 * that reads it (transformers' separate q, k, v and gate, up projections). memfit's profile chooses
 * none of them; `--peak lesson` always uses it.
 *
 * Pure: static tables, no state.
 */
#ifndef MEMFIT_IMPL_H
#define MEMFIT_IMPL_H

#include <stdbool.h>

#include "model/scenario.h"

struct impl_profile {
    const char *name;     /* the impl column's word */
    bool norm_upcast;     /* RMSNorm in fp32: keeps x (fp32), x^2 (fp32), x-hat (bf16) */
    bool softmax_fp32;    /* plain attention: the fp32 softmax kept beside its bf16 cast */
    bool repeat_kv;       /* plain attention and sdpa: K and V kept repeated to a heads */
    bool swiglu_fused;    /* SwiGLU keeps its input (gate, up) only: 4 f, not 6 f */
    bool probs_in_act;    /* the experts' activation applies the routing probabilities: the
                           * combine keeps neither the expert outputs nor weighted ones */
    bool argsort_permute; /* the permutation's int64 argsort of all E x T (expert, token)
                           * pairs kept whole: 8 E a token, and 10 (not 18) a routed row */
    bool adapter_casts;   /* LoRA: each adapter keeps a bf16 copy of its input and weights */
    bool split_casts;     /* q, k, v and gate, up are separate linears: under autocast each
                           * keeps its own bf16 copy of the fp32 norm output */
};

/* The profile of impl (memfit's for an unknown value). */
const struct impl_profile *impl_profile(enum impl impl);

/* The profile sc's activations follow: its impl, memfit's under --peak lesson. */
static inline const struct impl_profile *impl_of(const struct scenario *sc)
{
    return impl_profile(sc->peak == PEAK_LESSON ? IMPL_MEMFIT : sc->impl);
}

/* The impl column's word: "memfit", "megatron", "hf", "hf-peft". */
const char *impl_name(enum impl impl);

/* The attention column's word for sc: plain or flash, or under hf and hf-peft transformers'
 * attn_implementation (eager, sdpa, flash_attention_2). */
const char *impl_attention_name(const struct scenario *sc);

#endif
