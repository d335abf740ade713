/* cost: see cost.h, which writes the model out with its sources. */
#include "cost.h"

static double or_fallback(double v, double fallback)
{
    return v > 0 ? v : fallback;
}

/* The share of Psi in the layers' FP8 GEMM weights (doc/model.md sections 3.7 and 12.1): the
 * embedding, the output layer, norms, biases and routers stay in bf16. 0 on overflow. */
static double fp8_gemm_share(const struct scenario *sc, const struct terms *t)
{
    uint64_t dense = sc->experts ? sc->dense_layers : sc->layers;
    uint64_t count[2] = {dense, sc->layers - dense};
    double gemm = 0;
    for (int kind = 0; kind < 2; kind++) {
        uint64_t g, routed;
        if (count[kind] == 0)
            continue;
        if (!layer_gemm_params(sc, (enum layer_kind)kind, &g, &routed))
            return 0;
        gemm += (double)count[kind] * (double)g;
    }
    return t->params ? gemm / (double)t->params : 0;
}

/* Bytes one GPU sends in a ring all-reduce of `bytes` over n GPUs: 2 (n-1)/n of them. */
static double ring_allreduce(double bytes, uint64_t n)
{
    return n > 1 ? 2.0 * (double)(n - 1) / (double)n * bytes : 0.0;
}

void cost_step(const struct scenario *sc, const struct terms *t, struct cost *out)
{
    *out = (struct cost){0};
    out->tflops = or_fallback(sc->speed.bf16_tflops, COST_FALLBACK_TFLOPS);
    out->link_gb_s = or_fallback(sc->speed.link_gb_s, COST_FALLBACK_LINK_GB_S);
    out->pcie_gb_s = or_fallback(sc->speed.pcie_gb_s, COST_FALLBACK_PCIE_GB_S);
    double flop_s = out->tflops * 1e12 * COST_UTILISATION;
    if (sc->fp8 != FP8_NONE) { /* the GEMMs' share of the FLOPs at the FP8 rate */
        out->fp8_tflops = or_fallback(sc->speed.fp8_tflops, COST_FP8_SPEEDUP * out->tflops);
        out->fp8_share = fp8_gemm_share(sc, t);
        flop_s = 1e12 * COST_UTILISATION /
                 ((1 - out->fp8_share) / out->tflops + out->fp8_share / out->fp8_tflops);
    }
    uint64_t dp = sc->dp ? sc->dp : 1, tp = sc->tp ? sc->tp : 1, pp = sc->pp ? sc->pp : 1;
    double global =
        sc->global_batch ? (double)sc->global_batch : (double)sc->micro_batch * (double)dp;
    out->tokens = global * (double)sc->seq / (double)dp;

    /* FLOPs: 6 Psi per token (2 forward, 4 backward), split over the tp * pp GPUs of one
     * replica; a frozen base (LoRA, QLoRA, precision frozen) skips the weight gradients, half of
     * the backward: 4 Psi, and its adapters take 6 each (doc/model.md 12.1). */
    double psi = (double)t->params, gpus = (double)tp * (double)pp * (double)(sc->cp ? sc->cp : 1);
    double adapters = (double)t->adapter_params;
    bool frozen = sc->precision == PRECISION_FROZEN || sc->finetune != FINETUNE_FULL;
    double per_token =
        frozen ? COST_FROZEN_FLOPS * psi + COST_TRAINED_FLOPS * adapters : COST_TRAINED_FLOPS * psi;
    double useful = per_token * out->tokens / gpus;
    double extra = 0.0;
    if (sc->recompute == RECOMPUTE_EVERY_K)
        extra = 2.0 * (psi + adapters) * out->tokens / gpus;
    else if (sc->recompute == RECOMPUTE_SELECTIVE && sc->attention == ATTENTION_PLAIN)
        extra = useful * model_selective_overhead(sc->seq, sc->hidden);
    out->flops = useful + extra;
    out->compute_s = useful / flop_s;
    out->recompute_s = extra / flop_s;

    /* Data parallelism: an all-reduce of the gradients of the parameters this GPU trains (all
     * of them, or its LoRA adapters). ZeRO-3 also gathers a frozen base's weights for the
     * forward and the backward pass, 2 (dp-1)/dp of them (doc/model.md 12.3). */
    struct states_per_param bpp = states_per_param(sc);
    const struct model_gpu *g = &t->stage[t->peak_stage];
    double gpu_params = (double)g->trained_params;
    double grads = (double)bpp.grads * gpu_params;
    double dp_link = tp * dp <= sc->gpus_per_node ? out->link_gb_s : COST_INTERNODE_GB_S;
    double plain = ring_allreduce(grads, dp) / (dp_link * 1e9);
    out->dp_s = sc->zero >= 3 ? 1.5 * plain : plain;
    if (sc->zero >= 3)
        out->dp_s +=
            ring_allreduce((double)g->pool[0].frozen_bytes + (double)g->pool[1].frozen_bytes, dp) /
            (dp_link * 1e9);
    out->dp_extra_s = out->dp_s - plain;

    /* Tensor parallelism: 4 all-reduces of 2sbh bytes per layer and micro-batch (6 when the
     * forward is rerun), i.e. of 2h bytes per token. */
    if (tp > 1) {
        double per_layer = sc->recompute == RECOMPUTE_EVERY_K ? 6.0 : 4.0;
        double bytes = per_layer * ring_allreduce(2.0 * (double)sc->hidden * out->tokens, tp);
        double tp_link = tp <= sc->gpus_per_node ? out->link_gb_s : COST_INTERNODE_GB_S;
        out->tp_s = (double)(sc->layers / pp) * bytes / (tp_link * 1e9);
    }

    /* Optimizer offload: the gradients of the GPU's optimizer shard go down, its bf16 weights
     * come back, over the host link. */
    if (sc->offload == OFFLOAD_OPTIMIZER && bpp.master + bpp.moments > 0) {
        double shard = sc->zero >= 1 ? gpu_params / (double)dp : gpu_params;
        double bytes = (double)(bpp.grads + bpp.weights) * shard;
        out->offload_s = bytes / (out->pcie_gb_s * 1e9);
    }
    /* Offloaded checkpoints (doc/model.md 5.3): each crosses the host link twice a micro-batch,
     * the stage's L/pp layers' checkpoints of each of its m micro-batches. */
    if (sc->offload == OFFLOAD_CHECKPOINTS && sc->recompute == RECOMPUTE_EVERY_K &&
        sc->ckpt_every > 0) {
        const struct pipeline_stage *st = &t->stage[t->peak_stage].pipe;
        uint64_t kk = pipeline_segment_layers(st, sc->ckpt_every);
        double per_mb = (double)(sc->layers / pp / st->chunk_layers) *
                        (double)((st->chunk_layers + kk - 1) / kk) * (double)t->ckpt_bytes;
        double m = (double)pipeline_micro_batches(sc);
        out->offload_s += 2.0 * m * per_mb / (out->pcie_gb_s * 1e9);
    }
    out->overhead_s = out->recompute_s + out->dp_extra_s + out->tp_s + out->offload_s;
    out->total_s = out->compute_s + out->recompute_s + out->dp_s + out->tp_s + out->offload_s;
}
