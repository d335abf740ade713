/* cost: see cost.h, which writes the model out with its sources. */
#include "cost.h"

static double or_fallback(double v, double fallback)
{
    return v > 0 ? v : fallback;
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
    uint64_t dp = sc->dp ? sc->dp : 1, tp = sc->tp ? sc->tp : 1, pp = sc->pp ? sc->pp : 1;
    double global =
        sc->global_batch ? (double)sc->global_batch : (double)sc->micro_batch * (double)dp;
    out->tokens = global * (double)sc->seq / (double)dp;

    /* FLOPs: 6 Psi per token (2 forward, 4 backward), split over the tp * pp GPUs of one
     * replica; a frozen base (LoRA) skips the weight gradients, half of the backward: 4 Psi. */
    double psi = (double)t->params, gpus = (double)tp * (double)pp;
    double per_token = sc->precision == PRECISION_FROZEN ? 4.0 : 6.0;
    double useful = per_token * psi * out->tokens / gpus;
    double extra = 0.0;
    if (sc->recompute == RECOMPUTE_EVERY_K)
        extra = 2.0 * psi * out->tokens / gpus;
    else if (sc->recompute == RECOMPUTE_SELECTIVE && sc->attention == ATTENTION_PLAIN)
        extra = useful * model_selective_overhead(sc->seq, sc->hidden);
    out->flops = useful + extra;
    out->compute_s = useful / flop_s;
    out->recompute_s = extra / flop_s;

    /* Data parallelism: an all-reduce of the gradients of the parameters this GPU holds. */
    struct model_bytes_per_param bpp = model_bytes_per_param(sc->precision);
    double gpu_params = (double)t->stage[t->peak_stage].params;
    double grads = (double)bpp.grads * gpu_params;
    double dp_link = tp * dp <= sc->gpus_per_node ? out->link_gb_s : COST_INTERNODE_GB_S;
    double plain = ring_allreduce(grads, dp) / (dp_link * 1e9);
    out->dp_s = sc->zero >= 3 ? 1.5 * plain : plain;
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
    if (sc->offload == OFFLOAD_OPTIMIZER && bpp.optimizer > 0) {
        double shard = sc->zero >= 1 ? gpu_params / (double)dp : gpu_params;
        double bytes = (double)(bpp.grads + bpp.weights) * shard;
        out->offload_s = bytes / (out->pcie_gb_s * 1e9);
    }
    out->overhead_s = out->recompute_s + out->dp_extra_s + out->tp_s + out->offload_s;
    out->total_s = out->compute_s + out->recompute_s + out->dp_s + out->tp_s + out->offload_s;
}
