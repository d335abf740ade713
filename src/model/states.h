/*
 * states: what a parameter keeps on a GPU, by precision, optimizer and fine-tuning (doc/model.md
 * sections 3.1, 3.5 and 3.6).
 *
 * A parameter is trained - its weights, its gradients and the optimizer's states: the fp32 master
 * copy the precision keeps and the optimizer's moments - or frozen, its weights alone. Full
 * training trains every parameter of the model; LoRA and QLoRA freeze the model (the base) and
 * train low-rank adapters on its linear layers, which the model's parameter count Psi does not
 * include. Most of it is bytes per parameter; bitsandbytes' 8-bit moments and QLoRA's NF4 weights
 * are sized tensor by tensor, and the adapters from the linear layers' shapes, all read from the
 * layer inventory (layer.h).
 *
 * A pool is a set of parameters on one GPU, before ZeRO: model_stage.c adds up a stage's pools (the
 * layers' dense parts and the parameters outside the layers, sharded over the ZeRO group; the
 * routed experts, over the expert data-parallel group) and shards them with states_sharded.
 *
 * Pure: no I/O, no allocation, no globals. Counts are checked (checked.h): after a call, an
 * overflow is recorded in the caller's struct checked, or the function returns false.
 */
#ifndef MEMFIT_STATES_H
#define MEMFIT_STATES_H

#include <stdbool.h>
#include <stdint.h>

#include "base/checked.h"
#include "model/layer.h"
#include "model/scenario.h"

/* Bytes of a trained parameter (doc/model.md 3.1 and 3.5). */
struct states_per_param {
    unsigned weights; /* its weights: 2 (bf16) or 4 (fp32), by precision */
    unsigned grads;   /* its gradient: 2 or 4, by precision; 0 under precision=frozen */
    unsigned master;  /* the optimizer's fp32 master copy: 4 beside bf16 weights, else 0 */
    unsigned moments; /* the optimizer's moments: AdamW 8, bf16 AdamW 4, SGD 4, 8-bit AdamW 2
                       * (and an absmax per block: states_moment_bytes); 0 under frozen */
};

/* Inline: the model's totals ask for it several times a scenario. */
static inline struct states_per_param states_per_param(const struct scenario *sc)
{
    /* doc/model.md 3.1 and 3.5: the weights and gradients by precision; the fp32 master copy
     * an optimizer keeps beside bf16 weights (mixed, megatron; Micikevicius et al. 2018, 3.1);
     * with fp32 weights (autocast, fp32) the weights are the master. precision=frozen trains
     * nothing. */
    static const struct states_per_param by_precision[] = {
        [PRECISION_MIXED] = {2, 2, 4, 0},    [PRECISION_AUTOCAST] = {4, 4, 0, 0},
        [PRECISION_MEGATRON] = {2, 4, 4, 0}, [PRECISION_FROZEN] = {2, 0, 0, 0},
        [PRECISION_FP32] = {4, 4, 0, 0},
    };
    /* The moments (3.5): AdamW's m and v in fp32 or bf16, bitsandbytes' two uint8 states (and
     * their absmax per block, states_moment_bytes), SGD's fp32 momentum buffer. */
    static const unsigned moments[] = {
        [OPTIM_ADAMW] = 8, [OPTIM_ADAMW_BF16] = 4, [OPTIM_ADAMW8BIT] = 2, [OPTIM_SGD] = 4};
    enum precision p = (unsigned)sc->precision <= PRECISION_FP32 ? sc->precision : PRECISION_MIXED;
    struct states_per_param b = by_precision[p];
    if (p != PRECISION_FROZEN)
        b.moments = moments[(unsigned)sc->optimizer <= OPTIM_SGD ? sc->optimizer : OPTIM_ADAMW];
    return b;
}

/* Bytes of the optimizer moments of one trained tensor of n elements: moments * n, and for
 * bitsandbytes' 8-bit AdamW 2 n + 8 ceil(n / 256) when n >= 4096, else 8 n (fp32 moments). */
uint64_t states_moment_bytes(enum optimizer o, uint64_t n, struct checked *ck);

/* Bytes of a tensor of n elements in NF4 with double quantisation (bitsandbytes, QLoRA):
 * ceil(n / 2) + ceil(n / 64) + 4 ceil(ceil(n / 64) / 256). */
uint64_t states_nf4_bytes(uint64_t n, struct checked *ck);

/* A set of parameters on one GPU, before ZeRO. */
struct states_pool {
    uint64_t trained;      /* parameters trained: every one of the set, or its LoRA adapters */
    uint64_t moments;      /* bytes of their optimizer moments */
    uint64_t frozen;       /* parameters frozen: the base under LoRA, QLoRA, precision=frozen */
    uint64_t frozen_bytes; /* bytes of their weights */
    uint64_t nf4_bytes;    /* of frozen_bytes, the NF4 weights (QLoRA) */
};

/* One layer's states on one GPU (states_layer). */
struct states_layer {
    struct states_pool pool[2]; /* [0] the dense part (each tensor / tp), [1] the routed experts
                                 * (E / ep experts, each matrix / etp) */
    uint64_t adapters;          /* the layer's LoRA adapters, whole (before any division) */
};

/* true when a scenario's states need the inventory's tensors: LoRA, QLoRA or 8-bit AdamW. */
static inline bool states_per_tensor(const struct scenario *sc)
{
    return sc->finetune != FINETUNE_FULL || sc->optimizer == OPTIM_ADAMW8BIT;
}

/* The pool of `params` parameters trained (or, under precision=frozen, frozen) alike: full
 * training with any optimizer but 8-bit AdamW. */
struct states_pool states_uniform(const struct scenario *sc, uint64_t params, struct checked *ck);

/* One layer of inv's kind on one GPU, tensor by tensor (inv from layer_inventory, with its
 * list). false when a count overflows. */
bool states_layer(const struct scenario *sc, const struct layer_inventory *inv,
                  struct states_layer *out);

/* The parameters outside the layers on a GPU of a stage holding the embedding (first: with the
 * learned positions) and the output layer (last: with the final norm; a tied embedding's copy
 * when the two are on different stages). */
void states_outside(const struct scenario *sc, bool first, bool last, struct states_pool *out,
                    struct checked *ck);

/* a + n b, member by member. */
void states_add(struct states_pool *a, uint64_t n, const struct states_pool *b, struct checked *ck);

/* The bytes of a pool's states sharded by ZeRO over n GPUs (stage 1 the optimizer states,
 * 2 the gradients too, 3 the weights too, frozen ones included; each rounded up to the byte),
 * the optimizer states 0 when offloaded. */
struct states_bytes {
    uint64_t weights, grads, optimizer;
};
struct states_bytes states_sharded(const struct scenario *sc, const struct states_pool *p,
                                   uint64_t n, struct checked *ck);

#endif
