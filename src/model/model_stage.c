/*
 * model_stage: what one GPU of each pipeline stage holds - its parameters (after tensor, expert
 * and pipeline division; doc/model.md section 2.4), their model states (bytes per parameter 3.1,
 * ZeRO and the expert data-parallel size 3.2, offload 3.3, the trained and frozen pools of the
 * optimizers and fine-tuning 3.5 and 3.6, the FP8 weight copies 3.7), its activations and
 * logits - the most loaded stage, whose peak is the scenario's (sections 6.1 and 8.1), and the
 * budget it must fit (8.2); and the GPUs the states alone need (3.4). model.h declares the public
 * functions, model_internal.h model_peak_terms, which model_eval.c calls. Comments cite
 * doc/model.md sections, which name the primary sources.
 */
#include "model/model.h"

#include <math.h>

#include "base/checked.h"
#include "model/layer.h"
#include "model/impl.h"
#include "model/model_internal.h"
#include "model/step.h"

struct model_bytes_per_param model_bytes_per_param(enum precision p)
{
    /* doc/model.md section 3.1 (Rajbhandari et al. 2020, 3.1; Micikevicius et al. 2018, 3.1):
     * mixed-precision Adam 2 + 2 + 12 (bf16 weights and gradients; fp32 master weights and two
     * moments), autocast 4 + 4 + 8, Megatron-LM with fp32 gradient buffers 2 + 4 + 12, a frozen
     * base (LoRA) keeps only its bf16 weights. */
    static const struct model_bytes_per_param table[] = {
        [PRECISION_MIXED] = {2, 2, 12},    [PRECISION_AUTOCAST] = {4, 4, 8},
        [PRECISION_MEGATRON] = {2, 4, 12}, [PRECISION_FROZEN] = {2, 0, 0},
        [PRECISION_FP32] = {4, 4, 8},
    };
    return (unsigned)p <= PRECISION_FP32 ? table[p] : table[PRECISION_MIXED];
}

uint64_t model_budget_bytes(const struct scenario *sc)
{
    double budget = nearbyint((double)sc->gpu_mem_bytes * (1.0 - sc->reserve));
    if (budget <= 0)
        return 0;
    if (budget >= (double)UINT64_MAX)
        return UINT64_MAX;
    return (uint64_t)budget;
}

/* The expert data-parallel size: the GPUs of a stage (dp * tp) over the expert group (etp * ep),
 * which ZeRO shards the routed experts' states over (doc/model.md section 3.2). */
uint64_t model_expert_dp(const struct scenario *sc)
{
    uint64_t etp = sc->etp ? sc->etp : sc->tp, ep = sc->ep ? sc->ep : 1;
    uint64_t edp = sc->dp * (sc->cp ? sc->cp : 1) * sc->tp / (etp * ep);
    return edp ? edp : 1;
}

uint64_t model_zero_group(const struct scenario *sc)
{
    /* doc/model.md 3.2: ZeRO and the distributed optimizer shard over the data- and
     * context-parallel GPUs, dp cp; HSDP over zero_group of them, replicated. */
    return sc->zero_group ? sc->zero_group : sc->dp * (sc->cp ? sc->cp : 1);
}

/* The bytes of the FP8 copies of n weights on a GPU (doc/model.md section 3.7). */
static uint64_t fp8_copy_bytes(const struct scenario *sc, uint64_t n, struct checked *ck)
{
    if (sc->fp8 == FP8_MXFP8) /* two orientations, each with a 1-byte scale per 32 elements */
        return ck_mul(ck, 2, ck_add(ck, n, div_up(n, 32)));
    return sc->fp8_one_copy ? n : ck_mul(ck, 2, n);
}

/*
 * The cached FP8 copies of the GEMM weights GPU g holds (doc/model.md section 3.7; Transformer
 * Engine's performance considerations): per GEMM parameter 2 bytes with per-tensor scaling (a
 * row-wise copy and a transposed one), 1 on a GPU whose FP8 GEMMs read one copy both ways
 * (Blackwell), and with MXFP8 2 (n + ceil(n / 32)) for the n GEMM parameters of each part of a
 * layer (both orientations, a 1-byte scale per block of 32 each). A layer's GEMMs on the GPU are
 * divided as its parameters are (section 2.4): the dense part by tp, the routed experts by
 * etp ep, each rounded up; ZeRO-3 shards the copies as it shards the weights. The embedding and
 * the output layer stay in bf16. Added to the weights (and the routed ones to the experts').
 */
static void fp8_copies(const struct scenario *sc, const struct kinds *k, struct model_gpu *g,
                       struct checked *ck)
{
    uint64_t etp = sc->etp ? sc->etp : sc->tp, ep = sc->ep ? sc->ep : 1;
    uint64_t dense = 0, routed = 0;
    for (int kind = 0; kind < 2; kind++) {
        uint64_t gemm = k->gemm[kind], rt = k->gemm_routed[kind];
        uint64_t n = pipeline_gpu_layers(&g->pipe, kind);
        if (n == 0)
            continue;
        uint64_t d = fp8_copy_bytes(sc, div_up(gemm - rt, sc->tp), ck);
        uint64_t r = fp8_copy_bytes(sc, div_up(rt, ck_mul(ck, etp, ep)), ck);
        dense = ck_add(ck, dense, ck_mul(ck, n, d));
        routed = ck_add(ck, routed, ck_mul(ck, n, r));
    }
    /* The multi-token-prediction modules' projections (2.6) run in FP8 as well. */
    uint64_t mtp = g->pipe.mtp[LAYER_DENSE] + g->pipe.mtp[LAYER_MOE];
    if (mtp > 0) {
        uint64_t proj = model_mtp_proj_params(sc, sc->tp, ck);
        dense = ck_add(ck, dense, ck_mul(ck, mtp, fp8_copy_bytes(sc, proj, ck)));
    }
    if (sc->zero >= 3) {
        dense = div_up(dense, model_zero_group(sc));
        routed = div_up(routed, model_expert_dp(sc));
    }
    g->fp8_bytes = ck_add(ck, dense, routed);
    g->weights_bytes = ck_add(ck, g->weights_bytes, g->fp8_bytes);
    g->expert_bytes = ck_add(ck, g->expert_bytes, routed);
    g->states_bytes = ck_add(ck, g->states_bytes, g->fp8_bytes);
}

/* Model states of a GPU from its two pools (g->pool, set by stage_params): ZeRO shards the dense
 * states over the ZeRO group and the experts' over the expert data-parallel size; stage 1 the
 * optimizer states, stage 2 the gradients too, stage 3 the weights too, each rounded up to the
 * byte; offload moves the optimizer states to the CPU. doc/model.md sections 3.2, 3.3, 3.5 and
 * 3.6 (Rajbhandari et al. 2020, section 5; Ren et al. 2021); states.h. */
static void gpu_states(const struct scenario *sc, const struct kinds *k, struct model_gpu *g,
                       struct checked *ck)
{
    struct states_bytes d = states_sharded(sc, &g->pool[0], model_zero_group(sc), ck);
    struct states_bytes e = {0, 0, 0};
    if (g->expert_params > 0)
        e = states_sharded(sc, &g->pool[1], model_expert_dp(sc), ck);
    g->weights_bytes = ck_add(ck, d.weights, e.weights);
    g->grads_bytes = ck_add(ck, d.grads, e.grads);
    g->optimizer_bytes = ck_add(ck, d.optimizer, e.optimizer);
    g->expert_bytes = ck_add(ck, e.weights, ck_add(ck, e.grads, e.optimizer));
    g->states_bytes = ck_add(ck, g->weights_bytes, ck_add(ck, g->grads_bytes, g->optimizer_bytes));
    g->fp8_bytes = 0;
    if (sc->fp8 != FP8_NONE)
        fp8_copies(sc, k, g, ck); /* with the weights (doc/model.md section 3.7) */
    /* PEFT's fp32 adapters on a bf16 base (4.12): autocast's bf16 copies of them, kept by their
     * layers' graphs; with precision=autocast the step counts them (10.2), fp32 has none. */
    if (impl_of(sc)->adapter_casts && sc->finetune != FINETUNE_FULL &&
        sc->precision != PRECISION_FP32 && sc->precision != PRECISION_AUTOCAST) {
        uint64_t copies = ck_mul(ck, 2, g->trained_params);
        g->weights_bytes = ck_add(ck, g->weights_bytes, copies);
        g->states_bytes = ck_add(ck, g->states_bytes, copies);
    }
}

/* The CPU memory of GPU g's optimizer offload (doc/model.md 12.5): the optimizer states its GPU
 * memory does not hold (the same states unsharded by the offload: master weights and moments of
 * its ZeRO shard) and the pinned buffers its gradients go down and its weights come back through,
 * (gradient + weight bytes) a parameter of the shard (Ren et al. 2021, section 4). */
static uint64_t offload_host_bytes(const struct scenario *sc, const struct model_gpu *g,
                                   struct checked *ck)
{
    struct scenario kept = *sc;
    kept.offload = OFFLOAD_NONE;
    struct states_bytes d = states_sharded(&kept, &g->pool[0], model_zero_group(sc), ck);
    struct states_bytes e = {0, 0, 0};
    if (g->expert_params > 0)
        e = states_sharded(&kept, &g->pool[1], model_expert_dp(sc), ck);
    struct states_per_param b = states_per_param(sc);
    uint64_t shard = g->trained_params;
    if (sc->zero >= 1)
        shard = shard / model_zero_group(sc) + (shard % model_zero_group(sc) != 0);
    uint64_t pinned = ck_mul(ck, shard, (uint64_t)b.grads + b.weights);
    return ck_add(ck, ck_add(ck, d.optimizer, e.optimizer), pinned);
}

uint64_t model_ckpt_host_bytes(const struct scenario *sc, const struct pipeline_stage *pipe,
                               uint64_t c, struct checked *ck)
{
    uint64_t k = sc->recompute == RECOMPUTE_EVERY_K ? sc->ckpt_every : 0;
    return sc->offload == OFFLOAD_CHECKPOINTS && k ? ck_mul(ck, pipeline_checkpoints(pipe, k), c)
                                                   : 0;
}

uint64_t model_node_host_bytes(const struct scenario *sc, uint64_t heaviest, struct checked *ck)
{
    uint64_t gpus = ck_mul(ck, ck_mul(ck, sc->dp ? sc->dp : 1, sc->tp ? sc->tp : 1),
                           ck_mul(ck, sc->pp ? sc->pp : 1, sc->cp ? sc->cp : 1));
    uint64_t node = sc->gpus_per_node && sc->gpus_per_node < gpus ? sc->gpus_per_node : gpus;
    return ck_mul(ck, heaviest, node);
}

/* What GPU g trains and freezes (doc/model.md 3.5 and 3.6): its parameters alike, or tensor by
 * tensor from its layers' states (kinds) and the parameters outside the layers it holds. */
static void stage_pools(const struct scenario *sc, const struct kinds *k, struct model_gpu *g,
                        struct checked *ck)
{
    if (!k->per_tensor) {
        g->pool[0] = states_uniform(sc, g->params - g->expert_params, ck);
        g->pool[1] = states_uniform(sc, g->expert_params, ck);
    } else {
        states_outside(sc, sc->pp == 1 || g->pipe.first, sc->pp == 1 || g->pipe.last, &g->pool[0],
                       ck);
        g->pool[1] = (struct states_pool){0, 0, 0, 0, 0};
        for (int kind = 0; kind < 2; kind++) {
            if (g->pipe.layers[kind] == 0)
                continue;
            states_add(&g->pool[0], g->pipe.layers[kind], &k->st[kind].pool[0], ck);
            states_add(&g->pool[1], g->pipe.layers[kind], &k->st[kind].pool[1], ck);
        }
    }
    g->trained_params = ck_add(ck, g->pool[0].trained, g->pool[1].trained);
}

/* Parameters on one GPU of each stage: tp divides every layer and the (vocabulary-parallel)
 * embedding; the first stage holds the embedding and learned positions, the last the output
 * layer (a copy of a tied embedding when pp > 1) and the final norm; under DualPipe GPUs 0 and
 * pp - 1 hold both. The last also holds the multi-token-prediction modules (doc/model.md 2.6):
 * each a layer, its norms and projection (split by tp as a column-parallel linear), and with
 * pp > 1 a copy of an untied embedding, which the modules read, unless the GPU holds the first
 * stage too. */
static void stage_params(const struct scenario *sc, const struct kinds *k, struct terms *t,
                         struct checked *ck)
{
    uint64_t etp = sc->etp ? sc->etp : sc->tp, ep = sc->ep ? sc->ep : 1;
    /* Per layer: the dense part / tp, the routed experts / (etp * ep), each rounded up. */
    uint64_t dense_part[2], routed = div_up(k->routed, ck_mul(ck, etp, ep));
    dense_part[LAYER_DENSE] = div_up(k->params[LAYER_DENSE], sc->tp);
    dense_part[LAYER_MOE] = div_up(k->params[LAYER_MOE] - k->routed, sc->tp);
    uint64_t emb = div_up(ck_mul(ck, sc->vocab, sc->hidden), sc->tp);
    uint64_t positions = ck_mul(ck, sc->positions, sc->hidden);
    for (unsigned i = 0; i < t->n_stages; i++) {
        struct model_gpu *g = &t->stage[i];
        uint64_t n_dense = pipeline_gpu_layers(&g->pipe, LAYER_DENSE);
        uint64_t n_moe = pipeline_gpu_layers(&g->pipe, LAYER_MOE);
        g->expert_params = ck_mul(ck, n_moe, routed);
        uint64_t layers = ck_add(ck, ck_mul(ck, n_dense, dense_part[LAYER_DENSE]),
                                 ck_mul(ck, n_moe, dense_part[LAYER_MOE]));
        layers = ck_add(ck, layers, g->expert_params);
        uint64_t mtp = g->pipe.mtp[LAYER_DENSE] + g->pipe.mtp[LAYER_MOE];
        if (mtp > 0) {
            layers = ck_add(ck, layers, ck_mul(ck, mtp, model_mtp_extra_params(sc, sc->tp, ck)));
            if (sc->pp > 1 && !sc->tied && !g->pipe.first)
                layers = ck_add(ck, layers, emb);
        }
        if (sc->pp == 1) {
            uint64_t all = ck_add(
                ck, layers, ck_add(ck, emb, ck_add(ck, positions, model_final_norm_params(sc))));
            g->params = sc->tied ? all : ck_add(ck, all, emb);
        } else { /* DualPipe's GPUs 0 and pp - 1 hold both ends (pipeline.h) */
            g->params = layers;
            if (g->pipe.first)
                g->params = ck_add(ck, g->params, ck_add(ck, emb, positions));
            if (g->pipe.last)
                g->params = ck_add(ck, g->params, ck_add(ck, emb, model_final_norm_params(sc)));
        }
        stage_pools(sc, k, g, ck);
    }
}

/* The kind whose layer the scenario's per-layer terms describe: MoE when there are MoE layers. */
static enum layer_kind main_kind(const struct kinds *k)
{
    return k->count[LAYER_MOE] > 0 ? LAYER_MOE : LAYER_DENSE;
}

/* model_peak's work: sets every member of *t but model_eval's own (k_star, k_best,
 * act_k_best_bytes, max_micro_batch). */
enum model_status model_peak_terms(const struct scenario *sc, struct model_cache *cache,
                                   bool fixed_too, struct terms *t)
{
    struct checked ck = {false};
    struct kinds built;
    uint64_t logits;
    /* One inventory per layer kind serves its parameters and its activations at every b. */
    struct states_layer st[2];
    const struct kinds *kinds = model_layer_kinds_cached(sc, cache, &built, st);
    if (!kinds || model_params_of(sc, kinds, &t->params, &t->active_params) != MODEL_OK ||
        model_ckpt_bytes(sc, &t->ckpt_bytes) || model_logits_bytes(sc, &logits))
        return MODEL_OVERFLOW;
    for (int i = 0; i < 2; i++) {
        struct model_layer_act act = {0, 0, 0, 0};
        t->act_sums[i] = kinds->sums[i];
        if (kinds->count[i] > 0 && model_layer_act_from(sc, &kinds->sums[i], sc->micro_batch, &act))
            return MODEL_OVERFLOW;
        t->kind_act[i] = act.total;
    }
    for (int i = 0; i < 2; i++) {
        t->kind_params[i] = kinds->params[i];
        t->kind_small[i] = kinds->small[i];
    }
    t->kind_routed = kinds->routed;
    for (int i = 0; i < 2; i++)
        t->kind_gemm[i] = kinds->gemm[i];
    t->adapter_params = 0;
    for (int i = 0; i < 2; i++) {
        bool lora = kinds->per_tensor && sc->finetune != FINETUNE_FULL;
        t->kind_adapters[i][0] = lora ? kinds->st[i].pool[0].trained : 0;
        t->kind_adapters[i][1] = lora ? kinds->st[i].pool[1].trained : 0;
        if (lora)
            t->adapter_params =
                ck_add(&ck, t->adapter_params, ck_mul(&ck, kinds->count[i], kinds->st[i].adapters));
    }
    t->layer_params = kinds->params[main_kind(kinds)];
    t->act_layer_bytes = t->kind_act[main_kind(kinds)];
    /* The stages that can be the most loaded (doc/model.md section 6.1): the first and the last,
     * and where the mix of layer kinds changes; with pp = 1 one GPU. */
    struct pipeline_stage pipe[MODEL_STAGES];
    t->n_stages = pipeline_candidates(sc, kinds->count[LAYER_DENSE], pipe);
    for (unsigned i = 0; i < t->n_stages; i++)
        t->stage[i].pipe = pipe[i];
    stage_params(sc, kinds, t, &ck);
    uint64_t k = sc->recompute == RECOMPUTE_EVERY_K ? sc->ckpt_every : 0;
    uint64_t ring = model_context_ring_bytes(sc, sc->micro_batch, &ck);
    t->peak_stage = MODEL_STAGE_FIRST;
    for (unsigned i = 0; i < t->n_stages; i++) {
        struct model_gpu *g = &t->stage[i];
        gpu_states(sc, kinds, g, &ck);
        if (model_stage_act_of(sc, &g->pipe, t->kind_act, t->ckpt_bytes, k, &g->act_bytes))
            return MODEL_OVERFLOW;
        g->act_bytes = ck_add(&ck, g->act_bytes, ring);
        g->logits_bytes = model_loss_term(sc, &g->pipe, logits, t->kind_act, &ck);
        g->host_bytes = model_ckpt_host_bytes(sc, &g->pipe, t->ckpt_bytes, &ck);
        if (sc->offload == OFFLOAD_OPTIMIZER)
            g->host_bytes = offload_host_bytes(sc, g, &ck);
        g->lesson_peak_bytes =
            ck_add(&ck, g->states_bytes, ck_add(&ck, g->act_bytes, g->logits_bytes));
        g->peak_bytes = g->lesson_peak_bytes;
        if (sc->peak == PEAK_STEP) {
            struct step_gpu sg, fixed;
            model_step_gpu_at(sc, t, (int)i, sc->micro_batch, t->kind_act, t->ckpt_bytes, &sg,
                              fixed_too ? &fixed : NULL, &ck);
            if (!step_phases(&sg, &g->step) || (fixed_too && !step_phases(&fixed, &g->step_fixed)))
                return MODEL_OVERFLOW;
            g->peak_bytes = g->step.bytes;
        }
        const struct model_gpu *top = &t->stage[t->peak_stage];
        if (g->peak_bytes > top->peak_bytes ||
            (g->peak_bytes == top->peak_bytes && g->pipe.rank < top->pipe.rank))
            t->peak_stage = i; /* the lowest rank on a tie */
    }
    if (ck.overflow)
        return MODEL_OVERFLOW;
    const struct model_gpu *g = &t->stage[t->peak_stage];
    t->weights_bytes = g->weights_bytes;
    t->grads_bytes = g->grads_bytes;
    t->optimizer_bytes = g->optimizer_bytes;
    t->states_bytes = g->states_bytes;
    t->expert_bytes = g->expert_bytes;
    t->act_bytes = g->act_bytes;
    t->logits_bytes = g->logits_bytes;
    t->host_bytes = g->host_bytes;
    t->ring_bytes = ring;
    t->peak_bytes = g->peak_bytes;
    t->lesson_peak_bytes = g->lesson_peak_bytes;
    t->fp8_bytes = g->fp8_bytes;
    t->peak_phase = g->step.phase;
    t->budget_bytes = model_budget_bytes(sc);
    /* against the GPU preset's host_mem_gb when it has one */
    uint64_t heaviest = 0; /* the node of the stage that offloads the most */
    for (unsigned i = 0; i < t->n_stages; i++)
        heaviest = t->stage[i].host_bytes > heaviest ? t->stage[i].host_bytes : heaviest;
    t->host_node_bytes = model_node_host_bytes(sc, heaviest, &ck);
    if (ck.overflow)
        return MODEL_OVERFLOW;
    t->host_fits = sc->host_mem_bytes == 0 || t->host_node_bytes <= sc->host_mem_bytes;
    t->fits = t->peak_bytes <= t->budget_bytes && t->host_fits;
    return MODEL_OK;
}

enum model_status model_stage_lesson(const struct scenario *sc, uint64_t r, struct model_gpu *out)
{
    struct checked ck = {false};
    struct kinds built;
    struct states_layer st[2];
    struct terms t;
    uint64_t logits, act[2] = {0, 0};
    const struct kinds *kinds = model_layer_kinds_cached(sc, NULL, &built, st);
    if (!kinds || model_ckpt_bytes(sc, &t.ckpt_bytes) || model_logits_bytes(sc, &logits))
        return MODEL_OVERFLOW;
    for (int i = 0; i < 2; i++) {
        struct model_layer_act a = {0, 0, 0, 0};
        if (kinds->count[i] > 0 && model_layer_act_from(sc, &kinds->sums[i], sc->micro_batch, &a))
            return MODEL_OVERFLOW;
        act[i] = a.total;
    }
    /* One stage, as model_peak_terms evaluates each of its candidates. */
    t.n_stages = 1;
    struct model_gpu *g = &t.stage[0];
    pipeline_stage_at(sc, kinds->count[LAYER_DENSE], r, &g->pipe);
    stage_params(sc, kinds, &t, &ck);
    gpu_states(sc, kinds, g, &ck);
    uint64_t k = sc->recompute == RECOMPUTE_EVERY_K ? sc->ckpt_every : 0;
    if (model_stage_act_of(sc, &g->pipe, act, t.ckpt_bytes, k, &g->act_bytes))
        return MODEL_OVERFLOW;
    g->act_bytes = ck_add(&ck, g->act_bytes, model_context_ring_bytes(sc, sc->micro_batch, &ck));
    g->logits_bytes = model_loss_term(sc, &g->pipe, logits, act, &ck);
    g->lesson_peak_bytes = ck_add(&ck, g->states_bytes, ck_add(&ck, g->act_bytes, g->logits_bytes));
    g->peak_bytes = g->lesson_peak_bytes;
    if (ck.overflow)
        return MODEL_OVERFLOW;
    *out = *g;
    return MODEL_OK;
}

uint64_t model_gpus_for_states(uint64_t params, enum precision p, uint64_t mem_bytes)
{
    struct model_bytes_per_param bpp = model_bytes_per_param(p);
    struct checked ck = {false};
    uint64_t states = ck_mul(&ck, params, bpp.weights + bpp.grads + bpp.optimizer);
    if (mem_bytes == 0 || ck.overflow)
        return UINT64_MAX;
    return div_up(states, mem_bytes);
}

uint64_t model_states_gpus(const struct scenario *sc, uint64_t params)
{
    /* The states of every parameter on one GPU, as without any parallelism (sections 3.4-3.6):
     * bytes per parameter, or (tensor by tensor) the states of the scenario on one GPU. */
    struct checked ck = {false};
    uint64_t states;
    if (!states_per_tensor(sc)) {
        struct states_per_param b = states_per_param(sc);
        states = ck_mul(&ck, params, b.weights + b.grads + b.master + b.moments);
    } else {
        struct scenario one = *sc;
        struct terms t;
        one.dp = one.tp = one.pp = one.cp = one.vpp = one.ep = 1;
        one.etp = one.zero_group = 0;
        one.zero = 0;
        one.offload = OFFLOAD_NONE;
        one.fp8 = FP8_NONE;
        one.micro_batch = one.global_batch = 1;
        one.peak = PEAK_LESSON;
        if (model_peak(&one, &t) != MODEL_OK)
            return UINT64_MAX;
        states = t.states_bytes;
    }
    if (sc->gpu_mem_bytes == 0 || ck.overflow)
        return UINT64_MAX;
    return div_up(states, sc->gpu_mem_bytes);
}
