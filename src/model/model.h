/*
 * model: the memory formulas of doc/model.md sections 2-8, exact to the byte.
 *
 * Pure: every function reads a const scenario and writes into the caller's structures; no I/O,
 * no allocation, no globals. Byte counts are uint64_t and every product is checked: a function
 * that returns MODEL_OVERFLOW has met a count that does not fit in 64 bits, and its outputs must
 * not be used. Divisions by a parallel degree round up to the byte.
 *
 * Sources: doc/model.md, which gives each formula with its primary source and its tests
 * (parameters section 2, model states 3, activations 4, checkpointing every k 5, pipeline 6,
 * logits 7, peak and budget 8, the worked example 9); above all Korthikanti et al. 2022,
 * "Reducing Activation Recomputation in Large Transformer Models", Section 4.
 *
 * Implemented by concern (model_internal.h holds what the files share): parameter counts and
 * layer kinds in model_params.c, activations, logits and M(k) in model_acts.c, each stage's
 * terms, the most loaded stage and the budget in model_stage.c, the step model's GPU in
 * model_step.c, the largest micro-batch in model_batch.c, the entry points in model_eval.c.
 */
#ifndef MEMFIT_MODEL_H
#define MEMFIT_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "model/layer.h"
#include "model/pipeline.h"
#include "model/scenario.h"
#include "model/states.h"
#include "model/step.h"

enum model_status { MODEL_OK = 0, MODEL_OVERFLOW = 1 };

/* Which pipeline stage a per-GPU figure belongs to: terms.stage[] holds the first and the last
 * stage (the same GPU with pp = 1), then the stages where the layer mix changes
 * (pipeline.h); any of them can be the most loaded. */
enum model_stage { MODEL_STAGE_FIRST = 0, MODEL_STAGE_LAST = 1 };
#define MODEL_STAGES PIPELINE_CANDIDATES

/* Bytes per parameter of each model state, by precision (doc/model.md section 3.1). */
struct model_bytes_per_param {
    unsigned weights, grads, optimizer;
};

/* One layer's activations in bytes, on one tensor-parallel rank (doc/model.md section 4). */
struct model_layer_act {
    uint64_t whole; /* what tensor parallelism leaves on every rank (10 sbh for GPT with dropout) */
    uint64_t split; /* the rest of the linear part, on one rank */
    uint64_t attn;  /* the attention term (core s^2 or flash log-sum-exp), on one rank */
    uint64_t total; /* A = whole + split + attn, rounded as doc/model.md section 4.3 says */
};

/* The memory of one GPU: model states, activations, logits. */
struct model_gpu {
    struct pipeline_stage pipe; /* its stage: rank, layers, micro-batches in flight */
    uint64_t params;            /* parameters held (after tp, ep and pp, before ZeRO) */
    uint64_t expert_params;     /* of which routed experts */
    /* What is trained and what frozen (doc/model.md 3.5, 3.6): [0] the dense parameters and
     * those outside the layers, [1] the routed experts; before ZeRO. */
    struct states_pool pool[2];
    uint64_t trained_params; /* trained on the GPU: params, or its LoRA adapters (not in params) */
    uint64_t weights_bytes, grads_bytes, optimizer_bytes, states_bytes;
    uint64_t fp8_bytes;    /* of weights_bytes: the cached FP8 weight copies (doc/model.md 3.7) */
    uint64_t expert_bytes; /* the routed experts' share of the states */
    uint64_t act_bytes;    /* L*A, or M(k) with checkpointing */
    uint64_t logits_bytes; /* 0 on a stage without the output layer */
    uint64_t host_bytes;   /* in CPU memory: the checkpoints (offload=checkpoints), the optimizer
                            * states and pinned buffers (offload=optimizer; 12.5) */
    uint64_t lesson_peak_bytes;  /* states + activations + logits (the step's A under step) */
    struct step_peak step;       /* the phases of a real step (--peak step only) */
    struct step_peak step_fixed; /* ... at micro-batch 0 (what does not grow with b): set by
                                  * model_eval and model_max_micro_batch only */
    uint64_t peak_bytes;         /* the lesson's or the step's, as the scenario's peak says */
};

/* Every term of a scenario, on its most loaded GPU. (model_stage.c's model_peak_terms sets each
 * member by name: a new member must be set there too.) */
struct terms {
    uint64_t params;              /* Psi of the whole model */
    uint64_t active_params;       /* Psi with k of the E routed experts of each MoE layer */
    uint64_t layer_params;        /* one layer, whole (an MoE layer when there are any) */
    uint64_t act_layer_bytes;     /* A of that layer in the scenario's attention mode and tp/sp */
    uint64_t kind_act[2];         /* A of a dense and of an MoE layer (0: no such layer) */
    uint64_t kind_params[2];      /* one layer of each kind, whole */
    uint64_t kind_small[2];       /* of which biases and norm scales */
    uint64_t kind_routed;         /* of an MoE layer's, its routed experts (all E) */
    uint64_t kind_gemm[2];        /* with FP8, one layer's GEMM weights (layer.h; else 0) */
    uint64_t kind_adapters[2][2]; /* one layer of each kind on one GPU: its LoRA adapters, of the
                                   * dense part and of the routed experts (0 without LoRA) */
    uint64_t adapter_params;      /* the LoRA adapters of the whole model (not in params) */
    uint64_t ckpt_bytes;          /* c: one stored layer input, 2sbh (/t with sp) */
    struct model_gpu stage[MODEL_STAGES]; /* the first, the last pipeline stage, the others */
    unsigned n_stages;                    /* of stage[] computed: 1 with pp = 1 */
    unsigned peak_stage;                  /* the most loaded (the first on a tie) */
    /* The most loaded GPU, copied from stage[peak_stage]: */
    uint64_t weights_bytes, grads_bytes, optimizer_bytes, states_bytes, expert_bytes;
    uint64_t act_bytes, logits_bytes, peak_bytes, host_bytes;
    uint64_t ring_bytes;        /* context parallelism's K/V receive buffers, in act_bytes (4.11) */
    uint64_t lesson_peak_bytes; /* the lesson's sum on that GPU */
    uint64_t fp8_bytes;         /* of weights_bytes: the FP8 weight copies (3.7) */
    enum step_phase peak_phase; /* with --peak step: the phase at the peak */
    uint64_t budget_bytes;      /* GPU memory * (1 - reserve) */
    struct layer_act_sums act_sums[2]; /* each kind's kept bytes per token (any b) */
    uint64_t host_node_bytes; /* the largest stage host_bytes times the GPUs of a node (12.5) */
    bool host_fits;           /* host_node_bytes within the preset's host_mem_gb (or unknown) */
    bool fits;                /* the peak within the budget, and host_fits */
    /* Checkpointing every k (filled by model_eval only): */
    double k_star;             /* sqrt(L c / A) */
    uint64_t k_best;           /* integer k in 1..L with the smallest M(k) (smallest k on a tie) */
    uint64_t act_k_best_bytes; /* M(k_best) on the first stage */
    uint64_t max_micro_batch;  /* largest b that fits with the scenario's settings (0: none) */
};

struct model_bytes_per_param model_bytes_per_param(enum precision p);

/* h_kv = h * kv_heads / heads: the width of K and of V. */
uint64_t model_kv_width(const struct scenario *sc);

/* Parameters of one layer (GPT: 12h^2 + 13h with f = 4h and no GQA; Llama: 2h^2 + 2h h_kv + 3hf +
 * 2h). */
enum model_status model_layer_params(const struct scenario *sc, uint64_t *out);

/* Psi: L layers + embedding (twice when untied) + final norm + learned positions. */
enum model_status model_params(const struct scenario *sc, uint64_t *out);

/* Psi with only k of the E routed experts of each MoE layer (= Psi for a dense model). */
enum model_status model_active_params(const struct scenario *sc, uint64_t *out);

/* One layer's activations for the scenario's attention, recomputation, dropout, tp and sp. */
enum model_status model_layer_act(const struct scenario *sc, struct model_layer_act *out);

/* c = 2sbh, divided by t with sequence parallelism. */
enum model_status model_ckpt_bytes(const struct scenario *sc, uint64_t *out);

/* 4 s b V / t: the fp32 logits of the loss. */
enum model_status model_logits_bytes(const struct scenario *sc, uint64_t *out);

/*
 * Activations held by a pipeline stage that keeps `micro_batches` micro-batches of its L/pp
 * layers, checkpointing every k layers (k = 0: no checkpointing, every layer keeps A):
 * m * ceil((L/pp)/k') * c + k' * A with k' = min(k, L/pp), or m * (L/pp) * A.
 */
enum model_status model_stage_act(const struct scenario *sc, uint64_t layer_act, uint64_t ckpt,
                                  uint64_t micro_batches, uint64_t k, uint64_t *out);

/*
 * The peak of the most loaded GPU of t's scenario (its model states and logits kept, t from
 * model_peak) when checkpointing every k layers (k = 0: no checkpointing) - one point of the
 * M(k) curve (doc/model.md section 5). MODEL_OVERFLOW when a count overflows.
 */
enum model_status model_ckpt_peak(const struct scenario *sc, const struct terms *t, uint64_t k,
                                  uint64_t *out);

/* The expert data-parallel size ZeRO shards the routed experts' states over: the GPUs of a
 * stage over the expert group, dp tp / (etp ep) (doc/model.md section 3.2). */
uint64_t model_expert_dp(const struct scenario *sc);

/* The GPUs one ZeRO shard spans: zero_group (HSDP), else dp * cp (doc/model.md 3.2). */
uint64_t model_zero_group(const struct scenario *sc);

/* GPU memory * (1 - reserve), rounded to the byte. */
uint64_t model_budget_bytes(const struct scenario *sc);

/* Every term except k_best, k_star and max_micro_batch: cheap enough for searches. */
enum model_status model_peak(const struct scenario *sc, struct terms *t);

/* Pipeline stage (GPU) r of sc, whichever its load (doc/model.md 6.1, 6.3, 6.4): its layers,
 * parameters, states, activations, logits and the lesson's sum of them (lesson_peak_bytes; the
 * step's phases are left out). For the report's drawing of every stage. */
enum model_status model_stage_lesson(const struct scenario *sc, uint64_t r, struct model_gpu *out);

/* true when no byte count of model_peak(sc) can overflow 64 bits, by a bound in double that is
 * much cheaper than model_peak; false means nothing (call model_peak to know). */
bool model_peak_cannot_overflow(const struct scenario *sc);

/* Every term. */
enum model_status model_eval(const struct scenario *sc, struct terms *t);

/* model_eval with a memo of the layer inventories of recent scenarios (eval's rows repeat a few
 * models in many layouts): the same terms, faster. The caller owns the memo: model_cache_new
 * (NULL when out of memory: pass NULL, which memoises nothing), model_cache_free. */
struct model_cache;
struct model_cache *model_cache_new(void);
void model_cache_free(struct model_cache *c);
enum model_status model_eval_cached(const struct scenario *sc, struct model_cache *cache,
                                    struct terms *t);
enum model_status model_peak_cached(const struct scenario *sc, struct model_cache *cache,
                                    struct terms *t);
uint64_t model_max_micro_batch_cached(const struct scenario *sc, struct model_cache *cache);

/* k* = sqrt(L c / A), the continuous optimum of checkpointing every k layers, with A the largest
 * layer kind of the first stage (doc/model.md section 5.2); t from model_peak of sc. */
double model_k_star(const struct scenario *sc, const struct terms *t);

/* M(k*) = 2 sqrt(L c A), the activations at the continuous optimum (pp = 1; doc/model.md 5.2). */
double model_act_k_star(const struct scenario *sc, const struct terms *t);

/* The best integer k for checkpointing every k layers, and M(k) there (first stage). */
enum model_status model_k_best(const struct scenario *sc, uint64_t *k_best, uint64_t *act_bytes);

/* Largest micro-batch b >= 1 whose peak fits the budget with every other setting kept; 0 if none.
 */
uint64_t model_max_micro_batch(const struct scenario *sc);

/* Whether sc fits at micro-batch b, from like: model_peak of a scenario equal to sc but for the
 * attention, the recomputation and the micro-batch, whose step accumulates and keeps as many
 * micro-batches in flight on every stage as sc's at b (doc/model.md 11.5's monotone range). Its
 * model states, stages, budget and host memory are sc's (none depends on those three, 3, 6.1,
 * 12.5); each stage's peak at b is computed over them with sc's own layer activations (8.3),
 * and offloaded checkpoints' host memory at b. The same answer as model_peak of sc at b; the
 * layer kinds through cache (NULL: none). Overflow does not fit. */
bool model_fits_like(const struct scenario *sc, struct model_cache *cache, const struct terms *like,
                     uint64_t b);

/*
 * Whole GPUs of `mem_bytes` needed to hold the model states alone when every state is sharded
 * (ZeRO-3 over all of them): ceil(states_per_param * Psi / mem_bytes). doc/model.md section 3.4.
 */
uint64_t model_gpus_for_states(uint64_t params, enum precision p, uint64_t mem_bytes);

/* The same for sc's precision, optimizer and fine-tuning, Psi = params (doc/model.md sections
 * 3.4-3.6): its whole model's states on one GPU of sc's memory, without ZeRO, offload or FP8
 * copies, over the memory, rounded up; UINT64_MAX when a count overflows. */
uint64_t model_states_gpus(const struct scenario *sc, uint64_t params);

/* The bytes per token of one layer's linear part (every kept tensor but the scores) and per
 * query-key pair of its plain-attention core, whole (s = b = 1, no tp); false on overflow. */
bool model_core_coefficients(const struct scenario *sc, uint64_t *linear, uint64_t *core);

/* The sequence length above which the attention core of plain attention outgrows the rest of
 * the layer (doc/model.md section 4.6): 34h/(5a) for GPT with dropout, 16h/a without,
 * ((12 + 4/g)h + 8f)/(2a) for Llama; 0 on overflow. */
double model_core_crossover_seq(const struct scenario *sc);

/* Extra FLOPs of selective recomputation, as a fraction of a step: s / (18h + 3s)
 * (doc/model.md section 12.2). */
double model_selective_overhead(uint64_t seq, uint64_t hidden);

/* What GPU `stage` of sc holds for the step model, and its phases part by part (step.h), t from
 * model_peak of sc under --peak step: the report's phase bars and step timeline (the phases'
 * sums are t's stage[stage].step). MODEL_OVERFLOW when a count overflows. */
enum model_status model_step_gpu(const struct scenario *sc, const struct terms *t, unsigned stage,
                                 struct step_gpu *out);
enum model_status model_step_parts(const struct scenario *sc, const struct terms *t, unsigned stage,
                                   struct step_parts *out);

#endif
