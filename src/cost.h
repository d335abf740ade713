/*
 * cost: the time of one training step on one GPU, as the planner's cost model (doc/model.md
 * section 12).
 *
 * Pure: cost_step reads a scenario and its model terms and fills a struct cost. The model is
 * deliberately simple and written out here so that the report's notes can repeat it:
 *
 *   tokens T    = global_batch * s / dp          (tokens of one data-parallel rank per step;
 *                                                 global_batch 0 means b * dp)
 *   compute     = 6 Psi T / (tp pp)               FLOPs per GPU (2 Psi forward + 4 Psi backward
 *                                                 per token, Kaplan et al. 2020, 2.1); with a
 *                                                 frozen base 4 Psi T (no weight gradients) + 6 T
 *                                                 per LoRA adapter parameter
 *   recompute   = 2 Psi T / (tp pp)               checkpointing every k: one extra forward pass
 *                                                 whatever k (8 Psi instead of 6 Psi, +33%)
 *               = 6 Psi T s/(18h+3s) / (tp pp)    selective recomputation with plain attention
 *                                                 (doc/model.md 12.2; 0 with flash, whose backward
 *                                                 rebuilds the core anyway)
 *   seconds     = FLOPs / (bf16_tflops 1e12 * COST_UTILISATION)
 *                 with fp8, the share of Psi in the layers' GEMM weights (doc/model.md 3.7) at
 *                 fp8_tflops instead (COST_FP8_SPEEDUP x bf16_tflops when the preset has none)
 *   dp traffic  = 2 (dp-1)/dp * G                 ring all-reduce of the gradients G = grad bytes
 *                                                 per parameter * parameters the GPU trains
 *                                                 (all, or its LoRA adapters; ZeRO-3 also gathers
 *                                                 a frozen base's weights, 2 (dp-1)/dp of them)
 *                                                 (Patarasuk & Yuan 2009); ZeRO-1/2 move the same
 *                                                 volume (reduce-scatter + all-gather), ZeRO-3
 *                                                 1.5x (ZeRO paper, Rajbhandari et al. 2020, 7.2)
 *   tp traffic  = (L/pp) * n_ar * 2 (t-1)/t * 2 s h * T/s
 *                                                 Megatron-LM (Shoeybi et al. 2019, section 3):
 *                                                 2 all-reduces of the bf16 layer output in the
 *                                                 forward and 2 in the backward of every layer,
 *                                                 n_ar = 4, 6 when checkpointing reruns the
 * forward; sequence parallelism moves the same volume (Korthikanti et al. 2022, 4.2.2) offload = (g
 * + w) P_shard / pcie          ZeRO-Offload (Ren et al. 2021): the gradients go to the CPU and the
 * bf16 weights come back once per step, for the optimizer shard of the GPU (g, w: gradient and
 * weight bytes per parameter; P_shard = P / dp with ZeRO >= 1, else P); CPU Adam time not counted
 *   link        = link_gb_s when the group fits in a node (tp * dp <= gpus_per_node for dp,
 *                 tp <= gpus_per_node for tp), else COST_INTERNODE_GB_S
 *
 * Nothing overlaps (a pessimistic bound). Unknown speeds (0 in the GPU table) fall back to the
 * A100's: COST_FALLBACK_*. The overhead of a step is everything a fix can add: recomputation,
 * the ZeRO-3 share of dp traffic above plain data parallelism, tp traffic and offload.
 */
#ifndef MEMFIT_COST_H
#define MEMFIT_COST_H

#include "model.h"
#include "scenario.h"

#define COST_UTILISATION 0.40         /* assumed model FLOPs utilisation of the GPU */
#define COST_FALLBACK_TFLOPS 312.0    /* A100 dense bf16, TFLOP/s */
#define COST_FALLBACK_LINK_GB_S 300.0 /* A100 NVLink 3, 600 GB/s both directions */
#define COST_FALLBACK_PCIE_GB_S 32.0  /* PCIe 4.0 x16, per direction */
#define COST_INTERNODE_GB_S 50.0      /* one 400 Gb/s network port per GPU, between nodes */
/* FLOPs per parameter and token (doc/model.md 12.1): a trained parameter's forward (2) and
 * backward (2 for the input's gradient, 2 for its own: Kaplan et al. 2020, 2.1); a frozen one's
 * backward computes only the input's gradient (Hu et al. 2021, 4.2). */
#define COST_TRAINED_FLOPS 6.0
#define COST_FROZEN_FLOPS 4.0
#define COST_FP8_SPEEDUP 2.0 /* dense FP8 over dense bf16 (H100, H200, B200, L4 datasheets) */

struct cost {
    double tokens;      /* T: tokens of one data-parallel rank per step */
    double flops;       /* per GPU per step, recomputation included */
    double compute_s;   /* the 6 Psi T useful work */
    double recompute_s; /* extra forward passes (checkpointing or selective) */
    double dp_s;        /* data-parallel gradient traffic, ZeRO-3 included */
    double dp_extra_s;  /* the part of dp_s above plain data parallelism (ZeRO-3's 0.5x) */
    double tp_s;        /* tensor-parallel all-reduces */
    double offload_s;   /* PCIe traffic of the optimizer offload */
    double total_s;     /* compute + recompute + dp + tp + offload */
    double overhead_s;  /* recompute + dp_extra + tp + offload: what the fixes add */
    /* The speeds used, after fallbacks: */
    double tflops, link_gb_s, pcie_gb_s;
    double fp8_tflops; /* with fp8: the FP8 GEMMs' rate (0 without) */
    double fp8_share;  /* with fp8: the share of Psi whose FLOPs run in FP8 (0 without) */
};

/* Fills *out for sc, whose model_peak terms are *t (for the parameters on the GPU). */
void cost_step(const struct scenario *sc, const struct terms *t, struct cost *out);

#endif
