/*
 * scenario: one training configuration, typed and validated.
 *
 * A scenario is plain data: config (src/input/config*.c) fills it from a CSV row (presets merged,
 * defaults applied, every rule checked), the model (model.h) and plan.c read it. Sizes are counts
 * (uint64_t); the GPU is described by its memory and the speeds the planner's cost model needs.
 */
#ifndef MEMFIT_SCENARIO_H
#define MEMFIT_SCENARIO_H

#include <stdbool.h>
#include <stdint.h>

#define SCENARIO_NAME_MAX 64 /* characters (UTF-8 code points) of a scenario name */
#define SCENARIO_NAME_BYTES (4 * SCENARIO_NAME_MAX + 1) /* room for them in UTF-8, and a NUL */

enum arch { ARCH_GPT, ARCH_LLAMA };

/* Bytes per parameter of weights + gradients + optimizer states (doc/model.md section 3.1). */
enum precision {
    PRECISION_MIXED,
    PRECISION_AUTOCAST,
    PRECISION_MEGATRON,
    PRECISION_FROZEN,
    PRECISION_FP32 /* 4 + 4 + 8, activations in fp32 */
};

/* How a real training step is run (doc/model.md section 10.2): the loss, the gradient buffer and
 * the optimizer's implementation decide what is alive at each phase of the step. */
enum loss_impl { LOSS_EAGER, LOSS_FUSED };
enum grad_buffer { GRAD_ON_DEMAND, GRAD_PERSISTENT };
enum optimizer_impl { OPTIMIZER_FOREACH, OPTIMIZER_FUSED, OPTIMIZER_SINGLE };

/* Which peak decides: the lesson's sum (states + activations + logits) or the maximum over the
 * phases of a real step (--peak). The lesson's is 0, so a scenario built in code keeps it. */
enum peak_model { PEAK_LESSON, PEAK_STEP };

enum attention { ATTENTION_PLAIN, ATTENTION_FLASH };

/* The implementation the activations follow (column impl; doc/model.md section 4.12): memfit's
 * own assumptions (the lesson's), Megatron-Core with Transformer Engine, Hugging Face
 * transformers' Llama-family code, or that with PEFT's LoRA adapters. model/impl.h holds what
 * each keeps. */
enum impl { IMPL_MEMFIT, IMPL_MEGATRON, IMPL_HF, IMPL_HF_PEFT, IMPL_COUNT };

/* The pipeline schedule (doc/model.md 6.4; DeepSeek-V3 report, Table 2): 1F1B (interleaved when
 * vpp > 1), zero bubble ZB1P (ZB-H1), or DualPipe (two stages per GPU, one of each direction). */
enum schedule { SCHEDULE_1F1B, SCHEDULE_ZB1P, SCHEDULE_DUALPIPE };
#define SCHEDULES 3 /* how many */

/* RECOMPUTE_EVERY_K with ckpt_every = 1 is full checkpointing. */
enum recompute { RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_EVERY_K };

/* The modules selective recomputation rebuilds (bits of scenario.recompute_modules; Megatron-Core
 * --recompute-modules; doc/model.md 5.5): the attention core, the two layer norms' outputs, a
 * dense layer's MLP, an MoE MLP's expert activations, the whole MoE MLP, its shared experts, the
 * latent attention's up-projections with their rotary embedding. */
enum recompute_module {
    RECOMPUTE_CORE_ATTN = 1u << 0,
    RECOMPUTE_LAYERNORM = 1u << 1,
    RECOMPUTE_MLP = 1u << 2,
    RECOMPUTE_MOE_ACT = 1u << 3,
    RECOMPUTE_MOE = 1u << 4,
    RECOMPUTE_SHARED_EXPERTS = 1u << 5,
    RECOMPUTE_MLA_UP_PROJ = 1u << 6,
    RECOMPUTE_MODULES = 7 /* how many */
};

/* What moves to CPU memory: nothing, the optimizer states, or the checkpoints of M(k). */
enum offload { OFFLOAD_NONE, OFFLOAD_OPTIMIZER, OFFLOAD_CHECKPOINTS };

/* FP8 training with Transformer Engine (doc/model.md section 8): per-tensor scaling or MXFP8. */
enum fp8 { FP8_NONE, FP8_TENSOR, FP8_MXFP8 };

/* The optimizer's states (doc/model.md section 3.1): fp32 AdamW moments, bf16 moments,
 * bitsandbytes' blockwise 8-bit moments, or SGD's fp32 momentum. */
enum optimizer { OPTIM_ADAMW, OPTIM_ADAMW_BF16, OPTIM_ADAMW8BIT, OPTIM_SGD };

/* What is trained: every parameter, or low-rank adapters on a frozen bf16 (LoRA) or NF4 (QLoRA)
 * base; the adapters go on q and v, or on every linear layer of the blocks. */
enum finetune { FINETUNE_FULL, FINETUNE_LORA, FINETUNE_QLORA };
enum lora_targets { LORA_QV, LORA_ALL_LINEAR };

/* What the planner's cost model knows of a GPU (configs/gpus.csv); 0 when unknown. */
struct gpu_speed {
    double bf16_tflops; /* dense bf16 peak, TFLOP/s */
    double hbm_tb_s;    /* memory bandwidth, TB/s */
    double link_gb_s;   /* GPU-to-GPU link (NVLink or the like), GB/s per direction */
    double pcie_gb_s;   /* host link, GB/s per direction */
    double fp8_tflops;  /* dense FP8 peak (doc/model.md section 12.1), TFLOP/s */
};

/* The layout choices a row can pin for memfit search (bits of scenario.pinned). */
enum scenario_pin {
    SCENARIO_PIN_DP = 1u << 0,
    SCENARIO_PIN_TP = 1u << 1,
    SCENARIO_PIN_PP = 1u << 2,
    SCENARIO_PIN_VPP = 1u << 3,
    SCENARIO_PIN_CP = 1u << 4,
    SCENARIO_PIN_EP = 1u << 5,
    SCENARIO_PIN_ETP = 1u << 6,
    SCENARIO_PIN_SP = 1u << 7,
    SCENARIO_PIN_ZERO = 1u << 8,
    SCENARIO_PIN_ATTENTION = 1u << 9,
    SCENARIO_PIN_RECOMPUTE = 1u << 10,
    SCENARIO_PIN_OFFLOAD = 1u << 11,
    SCENARIO_PIN_MICRO_BATCH = 1u << 12,
    SCENARIO_PIN_ZERO_GROUP = 1u << 13,
    SCENARIO_PIN_SCHEDULE = 1u << 14
};

/* The attention's biases (column qkv_bias: no, yes, all, sinks; doc/model.md section 2.2). */
enum qkv_bias {
    QKV_BIAS_NONE,
    QKV_BIAS_QKV,   /* on q, k and v (Qwen2) */
    QKV_BIAS_ALL,   /* on q, k, v and o */
    QKV_BIAS_SINKS, /* on q, k, v and o, and a learned sink logit per head (gpt-oss) */
};

/* Norms on q and k (column qk_norm: no, yes, width). */
enum qk_norm {
    QK_NORM_NONE,
    QK_NORM_HEAD,  /* an RMSNorm of d_h on each head, shared by the heads (Qwen3, Gemma 3) */
    QK_NORM_WIDTH, /* one RMSNorm over all of q (a d_h) and one over all of k (OLMo 2) */
};

/* The router's biases (column router_bias: no, yes, experts). */
enum router_bias {
    ROUTER_BIAS_NONE,
    ROUTER_BIAS_SCORE,   /* a bias per expert on the router's scores (DeepSeek-V3's score bias, or
                          * a bias on the router's linear) */
    ROUTER_BIAS_EXPERTS, /* that, and biases on every routed expert's gate, up and down
                          * (gpt-oss) */
};

struct scenario {
    char name[SCENARIO_NAME_BYTES];
    enum arch arch;
    uint64_t layers, hidden, heads, kv_heads, vocab, ffn, positions;
    bool tied, dropout;
    /* Attention and norms (doc/model.md section 2): */
    uint64_t head_dim;      /* d_h, per-head width (Gemma: 256); 0: h / heads */
    enum qkv_bias qkv_bias; /* biases of a llama layer's attention (Qwen2: q, k, v; gpt-oss: also
                             * o, and sinks); a gpt layer has biases on every linear whatever this
                             * says */
    enum qk_norm qk_norm;   /* RMSNorms on q and k: per head (Qwen3) or the whole width (OLMo 2) */
    uint64_t layer_norms;   /* norms per layer: 2, or 4 with post-norms (Gemma 2); 0: 2 */
    /* Mixture of experts (experts = 0: a dense model): */
    uint64_t experts;             /* E, routed experts per MoE layer */
    uint64_t top_k;               /* k, experts per token */
    uint64_t expert_ffn;          /* f_e, width of one routed expert (a gated MLP) */
    uint64_t shared_ffn;          /* f_s, total width of the shared experts (0: none) */
    bool shared_gate;             /* a sigmoid gate on the shared experts (Qwen2-MoE): +h */
    enum router_bias router_bias; /* a per-expert score bias (DeepSeek-V3): +E; with biases on
                                   * the experts too (gpt-oss): + E (2 f_e + h) */
    uint64_t dense_layers;  /* leading layers with a dense MLP of width ffn (DeepSeek-V3: 3) */
    double capacity_factor; /* tokens per expert capped at ceil(k T cf / E); 0: dropless */
    /* Multi-head latent attention (kv_lora_rank > 0 turns it on; DeepSeek-V2/V3): */
    uint64_t q_lora_rank;  /* r_q; 0: Q projected directly from h */
    uint64_t kv_lora_rank; /* r_kv */
    uint64_t qk_nope_dim;  /* d_n, per-head width of q and k without rotary */
    uint64_t qk_rope_dim;  /* d_r, per-head rotary width (one shared rotary k) */
    uint64_t v_head_dim;   /* d_v */
    /* Multi-token prediction (DeepSeek-V3 report 2.2; Megatron-Core --mtp-num-layers): D modules
     * on the last pipeline stage, each a projection of [norm(h); norm(embedding)], a transformer
     * layer of the model's last kind, a norm and the shared output layer (doc/model.md 2.6). */
    uint64_t mtp_layers;
    uint64_t seq, micro_batch, global_batch;
    enum precision precision;
    enum attention attention;
    bool sdpa;      /* impl hf: attention=sdpa, PyTorch's scaled_dot_product_attention (a flash
                     * kernel on K and V repeated to every head); with attention=flash */
    enum impl impl; /* the implementation profile (model/impl.h) */
    enum recompute recompute;
    uint64_t ckpt_every;        /* k of RECOMPUTE_EVERY_K */
    unsigned recompute_modules; /* with RECOMPUTE_SELECTIVE: enum recompute_module bits;
                                 * 0: RECOMPUTE_CORE_ATTN (scenario_recompute_modules) */
    uint64_t recompute_layers;  /* block recomputation (full, k = 1): N layers of each chunk
                                 * recomputed, the others keep everything; 0: all of them */
    uint64_t dp, tp, pp;
    uint64_t cp;  /* context parallel degree: each GPU holds s / cp of a sequence; 0: 1 */
    uint64_t vpp; /* virtual pipeline chunks per stage (interleaved 1F1B); 0: 1 */
    uint64_t first_stage_layers, last_stage_layers; /* layers of the first and last pipeline
                                                     * stage; 0: automatic (pipeline.h) */
    /* The embedding and the loss each counted as a layer in the split of the stages, in the
     * first and the last slot (Megatron-LM's --account-for-embedding/loss-in-pipeline-split;
     * pipeline.h). */
    bool embedding_in_split, loss_in_split;
    enum schedule schedule;
    bool sp;
    uint64_t ep;            /* expert parallel degree (1 without experts) */
    uint64_t etp;           /* expert tensor parallel degree; 0: = tp */
    uint64_t moe_max_nodes; /* node-limited routing: the nodes a token may be sent to; 0: any */
    unsigned zero;          /* ZeRO stage 0..3 over the ZeRO group */
    uint64_t zero_group;    /* GPUs one ZeRO shard spans (HSDP); 0: dp * cp */
    enum offload offload;
    enum loss_impl loss;
    enum grad_buffer grad_buffer;
    enum optimizer_impl optimizer_impl;
    enum optimizer optimizer;
    enum fp8 fp8;
    enum finetune finetune;
    uint64_t lora_rank; /* r of the adapters (finetune lora or qlora) */
    enum lora_targets lora_targets;
    enum peak_model peak;
    uint64_t gpu_mem_bytes;
    double reserve; /* fraction of GPU memory kept free, [0, 1) */
    uint64_t gpus_per_node;
    struct gpu_speed speed;
    uint64_t host_mem_bytes; /* the CPU memory of a node, the GPU preset's host_mem_gb (0: not
                              * known, not checked) */
    char model_preset[SCENARIO_NAME_MAX + 1]; /* "" when none */
    bool model_file; /* model_preset names a config.json the row gave by its path, no preset */
    uint64_t sliding_window; /* a config.json's attention window (0: none; changes nothing) */
    /* memfit search (doc/model.md section 11.5): the job's GPUs (0: dp tp pp cp) and the layout
     * choices its row gave, which the search keeps (SCENARIO_PIN_* bits). */
    uint64_t gpus;
    uint64_t gpus_from; /* a job's range gpus_from:gpus, its smallest count that fits wanted
                         * (0: gpus alone) */
    unsigned pinned;
    char gpu_preset[SCENARIO_NAME_MAX + 1];
    bool fp8_one_copy; /* the GPU preset's FP8 GEMMs read one copy of a tensor both ways
                        * (Blackwell; doc/model.md section 3.7) */
};

/* The 1.3B GPT model of doc/model.md section 9 (the worked example) on one 80 GB GPU, s = 2048,
 * b = 8: a base for tests. */
void scenario_lesson_example(struct scenario *sc);

const char *scenario_precision_name(enum precision p);
const char *scenario_attention_name(enum attention a);
const char *scenario_fp8_name(enum fp8 f);
/* The modules sc's recomputation rebuilds (enum recompute_module bits): none but with
 * recompute=selective, its recompute_modules, core_attn by default. */
static inline unsigned scenario_recompute_modules(const struct scenario *sc)
{
    if (sc->recompute != RECOMPUTE_SELECTIVE)
        return 0;
    return sc->recompute_modules ? sc->recompute_modules : RECOMPUTE_CORE_ATTN;
}

/* The name of module bit i (0 .. RECOMPUTE_MODULES - 1): "core_attn", "layernorm", ... */
const char *scenario_recompute_module_name(unsigned i);

/* recompute_modules as written in a CSV cell, the names joined by '+' in the order of enum
 * recompute_module ("" for the default, core_attn alone), into buf. */
const char *scenario_recompute_modules_name(const struct scenario *sc, char *buf,
                                            unsigned long size);

const char *scenario_schedule_name(enum schedule s);
/* "none", "selective", "full" (k = 1) or the integer k, into buf. */
const char *scenario_recompute_name(const struct scenario *sc, char *buf, unsigned long size);

#endif
