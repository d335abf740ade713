/*
 * cost: the time of one training step on one GPU, the planner's cost model (doc/model.md
 * section 12). The ladder orders rung 4 by it and shows each rung's extra time; memfit search
 * ranks layouts by total_s.
 *
 * Pure: cost_step reads a scenario and its model terms and fills a struct cost. Every constant is
 * below with its source, and the report's notes repeat them. Per GPU, per optimizer step of m
 * micro-batches of b sequences of s tokens (t, p, v, c, d, e, u: tp, pp, vpp, cp, dp, ep, etp):
 *
 *   T        = m b s                               tokens of one data-parallel rank
 *   flops    = 6 Psi_act T / (t p c)               2 forward + 4 backward per active parameter
 *                                                  and token (Kaplan et al. 2020, 2.1); a frozen
 *                                                  base 4 Psi_act + 6 per LoRA adapter parameter
 *                                                  (Hu et al. 2021, 4.2)
 *   GEMMs    = flops * stage / (peak * eta)        eta from the matrix sizes: each GEMM of the
 *                                                  slowest stage (M = s b / c tokens; K, N = h,
 *                                                  (a + 2g) d_h / t, f / t, ...; an expert's
 *                                                  k T e / E rows) takes
 *                                                  max(2MKN / (peak eff_gpu COST_GEMM_IN_TRAINING),
 *                                                      bytes / (hbm COST_HBM_EFFICIENCY))
 *                                                  + COST_GEMM_FIXED_S; stage = the slowest
 *                                                  stage's GEMM FLOPs over the average (the
 *                                                  output layer sits on the last)
 *   attention core                                 flash: 2 (a/t) s (d_qk + d_v) / 2 FLOPs a token
 *                                                  forward (causal), 2.5x that backward, at
 *                                                  COST_FLASH_RELATIVE of the GEMMs' rate; plain:
 *                                                  QK^T and PV as batched GEMMs, and the softmax
 *                                                  and dropout over the scores at the HBM rate
 *   memory   = elementwise bytes / (hbm COST_HBM_EFFICIENCY)   norms, residual adds, dropout,
 *                                                  activation, rotary, counted op by op (12.1)
 *   recompute                                      full or every k: the layers' forward again;
 *                                                  selective: the plain attention core's forward
 *   bubble   = (p - 1) / (m v) * (everything a micro-batch does on a stage, its sends included)
 *   tp       = m (L/p) n (2 (t-1)/t 2 (s b / c) h / link + lat)   n = 4 all-reduces (reduce-
 *                                                  scatter + all-gather with sp) a layer, 6 with
 *                                                  full recomputation; not overlapped
 *   pp       = m v 2 (2 (s b / c) h / t / link + lat)  each micro-batch's activations and their
 *                                                  gradient over each stage boundary, v times
 *                                                  interleaved; on the stage's path
 *   cp       = ring exchange of K and V, (c-1) steps of s/c tokens, 2x in the backward pass,
 *              each send hidden behind its own step's block of the attention core (1/c of it):
 *              only the excess is exposed; each step's merges and kernels join the core
 *   ep       = 4 all-to-alls (6 with full recomputation) of the routed rows' h a MoE layer,
 *              (e-1)/e of them leave the GPU; overlapped under DualPipe, whose all-to-all
 *              kernels keep COST_A2A_SM_SHARE of the SMs from the GEMMs and attention
 *   fp8 casts = each FP8 GEMM's input (forward) and output gradient (backward) cast from bf16,
 *              COST_FP8_CAST_BYTES (+1 for Hopper's transposed copy) an element
 *   dp       = ring all-reduce 2 (n-1)/n G of the trained parameters' gradients over the
 *              n = d c GPUs of the ZeRO group (ZeRO-1/2: the same volume), ZeRO-3 per
 *              micro-batch 2 gathers of the weights and a reduce-scatter of the gradients,
 *              one a layer; overlap (an assumption, the frameworks' bucketed reduction): the
 *              gradient reduction hides behind the last micro-batch's backward pass; ZeRO-3's
 *              forward gather behind COST_ZERO3_OVERLAP of the forward pass, its backward
 *              gather and reduce-scatter behind that share of the backward; the rest is exposed
 *   offload  = (g + w) P_shard / pcie (ZeRO-Offload, Ren et al. 2021), + the CPU's Adam:
 *              n_node P_shard COST_CPU_ADAM_BYTES / (COST_HOST_MEM_GB_S COST_HBM_EFFICIENCY),
 *              the node's GPUs sharing its memory; checkpoints 2 m c / pcie
 *   links    = the node link (link_gb_s * COST_LINK_EFFICIENCY) when the group lies inside a
 *              node in Megatron-LM's rank order (tp, cp, ep, dp, pp: its block of stride * size
 *              ranks divides gpus_per_node), else the network, the GPU's net_gb_s per GPU *
 *              COST_NET_EFFICIENCY
 *   lat      = COST_COLL_BASE_S + steps COST_COLL_STEP_S a collective (NCCL's model)
 *
 *   total    = compute + recompute + bubble + tp + cp + ep + pp + dp exposed + offload
 *   overhead = recompute + bubble + tp + cp + ep + pp + the ZeRO-3 part of dp exposed + offload
 *   mfu      = (6 Psi_act + 6 L a s (d_qk + d_v)) B s / (total GPUs peak): PaLM's model FLOPs
 *              (Chowdhery et al. 2022, appendix B: 6N + 12 L H Q T a token), at the dense bf16
 *              peak even with fp8; tokens_per_s = B s / total
 *
 * The per-GPU constants (eff_gpu, the network per GPU) are a table of GPU generations,
 * COST_GPUS below, found by the GPU preset's name; speeds a preset leaves at 0 fall back to the
 * A100's: COST_FALLBACK_*. Calibrated on Narayanan et al. 2021, Tables 1 and 2, and checked
 * against Llama 3 (Table 4) and held-out runs: tests/model/calibration.csv (doc/model.md 12.8).
 */
#ifndef MEMFIT_COST_H
#define MEMFIT_COST_H

#include "model/model.h"
#include "model/scenario.h"

/* Speeds when the GPU preset has none (0): the A100's (NVIDIA A100 datasheet, SXM4 80GB). */
#define COST_FALLBACK_TFLOPS 312.0    /* dense bf16, TFLOP/s */
#define COST_FALLBACK_LINK_GB_S 300.0 /* NVLink 3, 600 GB/s both directions */
#define COST_FALLBACK_PCIE_GB_S 32.0  /* PCIe 4.0 x16, per direction */
#define COST_FALLBACK_HBM_TB_S 2.039  /* HBM2e of the 80 GB A100 */
/* The network per GPU of a GPU outside the table: one 400 Gb/s port per GPU (DGX H100 and B200:
 * eight 400 Gb/s ConnectX-7 ports for eight GPUs). */
#define COST_INTERNODE_GB_S 50.0

/* FLOPs per parameter and token (doc/model.md 12.1): a trained parameter's forward (2) and
 * backward (2 for the input's gradient, 2 for its own: Kaplan et al. 2020, 2.1); a frozen one's
 * backward computes only the input's gradient (Hu et al. 2021, 4.2). */
#define COST_TRAINED_FLOPS 6.0
#define COST_FROZEN_FLOPS 4.0
#define COST_FP8_SPEEDUP 2.0 /* dense FP8 over dense bf16 (H100, H200, B200, L4 datasheets) */

/* The share of the best measured matmul rate that the GEMMs of a training step reach: fitted to
 * the ten rows of Narayanan et al. 2021, Table 1 (doc/model.md 12.8). It holds what a benchmark
 * of one matmul leaves out: sustained clocks, the layouts of the backward GEMMs, the software of
 * the day. */
#define COST_GEMM_IN_TRAINING 0.76
/* A fixed time per GEMM, seconds: the launch and the last, partly filled wave of tiles. Calculon's
 * A100 efficiency curve (calculon-ai/calculon examples/a100_80g.json: 1 GFLOP at 0.6 of peak,
 * 16 GFLOP at 0.9) amounts to 2 to 6 us a matmul. */
#define COST_GEMM_FIXED_S 4e-6
/* FlashAttention's rate over the GEMMs': FlashAttention-2 reaches 225 TFLOP/s forward and backward
 * on an A100 (Dao 2023, section 4.1), 0.83 of its best measured matmul (271.2 TFLOP/s). */
#define COST_FLASH_RELATIVE 0.83
/* FlashAttention-2's backward pass: 2.5 times the forward's FLOPs (it recomputes the scores;
 * Dao 2023, section 4.1). */
#define COST_FLASH_BACKWARD 2.5
/* The share of the HBM bandwidth a streaming kernel reaches: 842.7 GB/s of an RTX 4090's 1,008
 * (binbinsh/gpu-bench README, "Memory Streaming"). */
#define COST_HBM_EFFICIENCY 0.84
/* The share of a link's bandwidth that NCCL's ring collectives reach: all_reduce_perf bus
 * bandwidth 200 to 208 GB/s on eight NVLink A100s of 300 (NVIDIA/nccl-tests issues 149, 178);
 * 84.8 GB/s of 100 over HDR InfiniBand (NVIDIA/nccl-tests issue 119). */
#define COST_LINK_EFFICIENCY 0.70
#define COST_NET_EFFICIENCY 0.85
/* The CPU's Adam step (doc/model.md 12.5) is bound by the host memory's bandwidth: a parameter
 * reads its gradient (2 bytes), reads and writes its fp32 master weight and two fp32 moments
 * (24) and writes its bf16 weight for the GPU (2). The host memory of a node: a DGX A100's two
 * AMD EPYC 7742, eight channels of DDR4-3200 each, 204.8 GB/s a socket (AMD EPYC 7742 product
 * page; NVIDIA DGX A100 datasheet), at the streaming share of COST_HBM_EFFICIENCY (assumed the
 * same as a GPU's); taken for every GPU's node. */
#define COST_CPU_ADAM_BYTES 28.0
#define COST_HOST_MEM_GB_S 409.6
/* A collective's latency, NCCL's own model of it (NVIDIA/nccl src/graph/tuning.cc, the ring's
 * LL128 entries of baseLat and hwLat): a base of 3.6 us and 2.5 us a ring step, in a node and
 * between nodes. A ring all-reduce over n GPUs takes 2 (n - 1) steps, a reduce-scatter or
 * all-gather n - 1; a send or an all-to-all one. */
#define COST_COLL_BASE_S 3.6e-6
#define COST_COLL_STEP_S 2.5e-6
/* The share of a pass's work behind which ZeRO-3's prefetching hides that pass's gathers (and the
 * backward's reduce-scatters): fitted to Narayanan et al. 2021, Table 2 (GPT-3 175B under ZeRO-3
 * on 384 and 768 A100s; doc/model.md 12.8). Below 1: the prefetch covers a bucket, not a layer,
 * and the collectives take SMs and memory bandwidth from the GEMMs they overlap. */
#define COST_ZERO3_OVERLAP 0.5

/* The share of the SMs DualPipe's all-to-all kernels keep while the computation they overlap runs
 * on the rest: 20 of an H800's 132 (DeepSeek-V3 report, 3.2.2; the GEMM kernels of the training
 * profile of deepseek-ai/profile-data, train.json, run on grids of 112 blocks), taken as the
 * same share of any GPU. */
#define COST_A2A_SM_SHARE (20.0 / 132.0)
/* An FP8 GEMM's operand cast from bf16 (doc/model.md 12.1): read in bf16 (2 bytes), written in
 * FP8 (1), the per-tile scales aside; a Hopper GPU writes a transposed copy as well (1 more) for
 * the backward's other GEMM (DeepSeek-V3 report, 3.5.2: the activations read from HBM, quantized
 * and written back before the GEMM reads them again; Transformer Engine's cast-transpose). */
#define COST_FP8_CAST_BYTES 3.0

/* Context parallelism's ring (doc/model.md 12.4; Transformer Engine's AttnFuncWithCPAndKVP2P):
 * each step after the first merges its partial result into the accumulators, reading the step's
 * bf16 values (2 bytes) and reading and writing the accumulator, taken in fp32 (8); and launches
 * the block's attention kernel and two merges a pass. */
#define COST_CP_MERGE_BYTES 10.0
#define COST_CP_STEP_KERNELS 3.0

/* How far the model is from Narayanan et al. 2021, Table 1, on average and at worst (doc/model.md
 * 12.8; test_cost.c holds them), for the report's notes. */
#define COST_TABLE1_MEAN_GAP 0.032
#define COST_TABLE1_WORST_GAP 0.075

/*
 * The GPU generations (doc/model.md 12.6): X(name, gemm_eff, fp8_eff, net_gb_s), struct cost_gpu
 * below. gemm_eff and fp8_eff: the Maximum Achievable Matmul FLOPS of stas00/ml-engineering
 * (compute/accelerator/README.md, BF16 and FP8 tables, the best shape of a brute-force search)
 * over the datasheet's dense rate, unless said otherwise; net_gb_s: the compute network's ports,
 * GB/s per GPU and direction.
 */
#define COST_GPUS(X)                                                                               \
    /* MAMF 271.2 of 312 TFLOP/s; DGX A100: eight 200 Gb/s HDR InfiniBand ports for eight GPUs     \
     * (Narayanan et al. 2021, section 5). No FP8. */                                              \
    X("A100", 0.869, 0, 25.0)                                                                      \
    /* MAMF 794.5 of 989, FP8 1402.6 of 1979; DGX H100: eight 400 Gb/s ConnectX-7 ports. */        \
    X("H100", 0.803, 0.709, 50.0)                                                                  \
    /* "H200 is the same" as the H100 in BF16; FP8 1453.4 of 1979; DGX H200: as DGX H100. */       \
    X("H200", 0.803, 0.734, 50.0)                                                                  \
    /* The H100's silicon, assumed its MAMF; InfiniBand 50 GB/s a GPU (DeepSeek-V3 report, 3.2.2). \
     */                                                                                            \
    X("H800", 0.803, 0.709, 50.0)                                                                  \
    /* MAMF 1745.0 of 2250, FP8 3432.5 of 4500; DGX B200: eight 400 Gb/s ConnectX-7 ports. */      \
    X("B200", 0.776, 0.763, 50.0)                                                                  \
    /* MAMF 668.4 of 1300 (PyTorch TunableOp, ROCm 6.3); FP8 unmeasured. Azure ND MI300X v5:       \
     * InfiniBand 8 x 400 Gb NDR for eight GPUs (MicrosoftDocs/azure-docs nd-mi300x-v5-series). */ \
    X("MI300X", 0.514, 0, 50.0)                                                                    \
    /* No published matmul measurement found: assumed 0.70, below the H100's, as the L4 runs under \
     * a 72 W limit (L4 datasheet). Assumed: 100 Gb/s for eight L4s (Google Cloud's G2). */        \
    X("L4", 0.70, 0, 1.5625)                                                                       \
    /* cuBLASLt bf16 GEMM at 8192^3: 175.1 TFLOP/s (binbinsh/gpu-bench README) against the Ada     \
     * whitepaper's 165.2 with FP32 accumulate - the card boosts above its rated clock - taken as  \
     * 1. No data-centre network: assumed 100 Gb/s Ethernet for eight GPUs, as the L4's. */        \
    X("RTX4090", 1.0, 0, 1.5625)
/* A GPU outside the table: the median of the measured rows (0.803), one 400 Gb/s port per GPU. */
#define COST_GPU_OTHER "other", 0.803, 0, COST_INTERNODE_GB_S

/* One GPU generation of the table (doc/model.md 12.6). */
struct cost_gpu {
    const char *name; /* the GPU presets it serves, by the start of their name: "A100" */
    double gemm_eff;  /* the best measured dense bf16 matmul rate over the datasheet's */
    double fp8_eff;   /* the same for FP8 (0: unmeasured, gemm_eff) */
    double net_gb_s;  /* the network between nodes, GB/s per GPU and direction */
};

/* The generation of sc's GPU preset: the table's row whose name starts it (case-insensitive);
 * without one, the A100's when the preset has no speeds (the fallback speeds are the A100's),
 * else a row of the measured rows' median ("other"). Never NULL. */
const struct cost_gpu *cost_gpu_of(const struct scenario *sc);

struct cost {
    double tokens;          /* T: tokens of one data-parallel rank per step, m b s */
    double micro_batches;   /* m */
    double flops;           /* per GPU per step: the parameters' 6 Psi_act T (4 frozen, 6 per
                             * adapter) / (t p c), plus recomputation's 2 (Psi_act + Psi_A) T */
    double gemm_eff;        /* eta: the GEMMs' share of the bf16 peak for these matrix sizes */
    double stage_factor;    /* the slowest pipeline stage's GEMM FLOPs over the average */
    double compute_s;       /* the step's useful work: gemm_s + attention_s + memory_s */
    double gemm_s;          /* of which the parameters' GEMMs */
    double attention_s;     /* the attention core (QK^T, softmax, PV) */
    double memory_s;        /* the elementwise operations (norms, adds, activations) */
    double recompute_s;     /* the forward passes run again (checkpointing or selective) */
    double mb_fwd_s;        /* one micro-batch's forward pass on the slowest stage */
    double mb_bwd_s;        /* ... its backward pass, the forward run again included */
    double bubble_s;        /* the pipeline bubble, (p - 1) / (m v) of a stage's work */
    double tp_s;            /* tensor- and sequence-parallel collectives, exposed */
    double cp_s;            /* context parallelism's ring exchange, the part not hidden */
    double ep_s;            /* expert parallelism's all-to-alls, exposed */
    double pp_s;            /* the pipeline's sends between stages, exposed */
    double dp_s;            /* data-parallel traffic, all of it (exposed + overlapped) */
    double dp_exposed_s;    /* of which not hidden behind the backward pass */
    double dp_overlapped_s; /* of which hidden */
    double dp_extra_s;      /* of dp_exposed, the part above plain data parallelism (ZeRO-3) */
    double offload_s;       /* PCIe traffic of the optimizer or checkpoint offload */
    double total_s;         /* compute + recompute + bubble + tp + cp + ep + pp + dp exposed +
                             * offload */
    double overhead_s;      /* recompute + bubble + tp + cp + ep + pp + dp_extra + offload: what
                             * the fixes add */
    /* The whole job's throughput (doc/model.md 12.7): */
    double model_flops;  /* per step, all GPUs: (6 Psi_act + 6 L a s (d_qk + d_v)) s B, PaLM's
                          * model FLOPs (Chowdhery et al. 2022, appendix B); 4 per frozen
                          * parameter and 6 per adapter under LoRA; recomputation not counted */
    double tokens_per_s; /* B s / total_s */
    double mfu;          /* model_flops / (total_s * GPUs * dense bf16 peak) */
    /* The speeds used, after fallbacks: */
    double tflops, hbm_tb_s, link_gb_s, net_gb_s, pcie_gb_s;
    double fp8_tflops;          /* with fp8: the FP8 GEMMs' rate (0 without) */
    double fp8_share;           /* with fp8: the share of Psi whose FLOPs run in FP8 (0 without) */
    double fp8_cast_s;          /* with fp8: the casts of the FP8 GEMMs' operands (in memory_s) */
    double comm_sm_share;       /* the SMs the overlapped all-to-alls keep (DualPipe; 0 else) */
    const struct cost_gpu *gpu; /* the generation's row */
};

/* Fills *out for sc, whose model_peak terms are *t (for the parameters on the GPU). */
void cost_step(const struct scenario *sc, const struct terms *t, struct cost *out);

#endif
