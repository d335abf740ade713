/*
 * model_step: what one GPU of a stage holds for the step model of doc/model.md section 10.2 -
 * its states, activations and checkpoints, the bf16 weight copies, the logits and the loss, the
 * gradients as the backward runs, its last GEMM's and the embedding's backward, the optimizer's
 * temporaries - as a struct step_gpu, whose phases step.c sums. model.h declares the public
 * functions, model_internal.h model_step_gpu_at, which the peak, M(k) and the largest
 * micro-batch use. Comments cite doc/model.md sections, which name the primary sources.
 */
#include "model/model.h"

#include "base/checked.h"
#include "model/model_internal.h"
#include "model/step.h"

/* The embedding's backward at the end of the step (doc/model.md 10.2): a tied embedding holds the
 * output layer's partial gradient, its own and their sum (and .grad when persistent); an untied
 * one the gradient of its output. With dropout, its backward (the gradient in and out, the
 * position ids and the mask) may be higher: g->dropout_end_add - g->dropout_end_less on top of
 * the gradients (on demand, the embedding's own and the position table's are not there yet). */
static void embedding_end(const struct scenario *sc, uint64_t b, uint64_t gb, bool pers,
                          struct step_gpu *g, struct checked *ck)
{
    uint64_t h = sc->hidden, sbh = ck_mul3(ck, model_local_seq(sc), b, h),
             r = model_residual_bytes(sc);
    uint64_t vh = div_up(ck_mul3(ck, gb, sc->vocab, h), sc->tp);
    g->embedding_end =
        sc->tied ? ck_mul(ck, pers ? 3 : 2, vh) : ck_add(ck, ck_mul(ck, r, sbh), pers ? vh : 0);
    if (sc->arch != ARCH_GPT || !sc->dropout)
        return;
    g->dropout_end_add =
        ck_add(ck, ck_add(ck, 8 * (sc->positions > 0 ? model_local_seq(sc) : 0), sbh),
               ck_add(ck, ck_mul3(ck, 2, r, sbh), sc->tied ? vh : 0));
    g->dropout_end_less = pers ? 0 : ck_add(ck, vh, ck_mul3(ck, gb, sc->positions, h));
}

/* The optimizer step's temporaries on a GPU (doc/model.md 10.2): foreach AdamW allocates two fp32
 * tensors per parameter of the shard (PyTorch 1.13, measured), the single-tensor loop two of one
 * tensor with the previous one's denominator, the fused kernel none; with bf16 moments, tensors
 * of bf16. bitsandbytes' 8-bit AdamW updates each tensor in one kernel and SGD its momentum in
 * place: none (section 3.5). Under LoRA the single-tensor loop is counted as foreach, a bound of
 * the adapters' few MB. */
static uint64_t optimizer_temps(const struct scenario *sc, const struct model_gpu *m,
                                struct checked *ck)
{
    struct states_per_param b = states_per_param(sc);
    unsigned per_param = b.master + b.moments, elem = b.moments / 2; /* AdamW: 4, bf16: 2 */
    if (sc->offload == OFFLOAD_OPTIMIZER || per_param == 0 || m->trained_params == 0)
        return 0;
    if (sc->optimizer_impl == OPTIMIZER_FUSED || sc->optimizer == OPTIM_ADAMW8BIT ||
        sc->optimizer == OPTIM_SGD)
        return 0;
    if (sc->optimizer_impl == OPTIMIZER_FOREACH || sc->finetune != FINETUNE_FULL)
        return ck_mul(ck, 2 * elem, m->optimizer_bytes / per_param);
    uint64_t h = sc->hidden, f = sc->ffn, t = sc->tp, vh = div_up(ck_mul(ck, sc->vocab, h), t);
    uint64_t big = ck_mul(ck, 2, vh); /* the embedding, first */
    uint64_t mlp = sc->arch == ARCH_GPT ? ck_add(ck, ck_mul3(ck, 2, h, f) / t, f / t)
                                        : ck_mul3(ck, 3, h, f) / t;
    uint64_t cand[] = {mlp, sc->positions ? ck_add(ck, ck_mul3(ck, 2, sc->positions, h), vh) : 0,
                       sc->tied ? 0 : ck_add(ck, ck_mul(ck, 2, vh), h)};
    for (int i = 0; i < 3; i++)
        big = cand[i] > big ? cand[i] : big;
    uint64_t n = sc->zero >= 1 ? model_zero_group(sc) : 1;
    return ck_mul(ck, elem, div_up(big, n));
}

/* One layer's gradients on a GPU (kind 1: an MoE layer): its dense part / tp and its routed
 * experts / (etp ep), each sharded by ZeRO-2 and above as the states are (section 3.2). */
static uint64_t layer_gpu_grads(const struct scenario *sc, const struct terms *t, int kind,
                                uint64_t gb, struct checked *ck)
{
    uint64_t etp = sc->etp ? sc->etp : sc->tp, ep = sc->ep ? sc->ep : 1;
    uint64_t routed = kind ? t->kind_routed : 0;
    uint64_t dense = ck_mul(ck, gb, div_up(t->kind_params[kind] - routed, sc->tp));
    uint64_t experts = ck_mul(ck, gb, div_up(routed, ck_mul(ck, etp, ep)));
    if (sc->finetune != FINETUNE_FULL) { /* only the adapters have gradients (section 3.6) */
        dense = ck_mul(ck, gb, t->kind_adapters[kind][0]);
        experts = ck_mul(ck, gb, t->kind_adapters[kind][1]);
    }
    if (sc->zero >= 2) {
        dense = div_up(dense, model_zero_group(sc));
        experts = div_up(experts, model_expert_dp(sc));
    }
    return ck_add(ck, dense, experts);
}

/* What the multi-token-prediction modules of GPU st keep at micro-batch b besides their logits
 * (doc/model.md 2.6), each: its layer's A, the embedding's output (its norm's input), the
 * projection's input [norm(h); norm(embedding)] (2h wide, 1 byte an element in FP8), its final
 * norm's input and the output layer's input, and the statistics of its three norms; divided by
 * t under sequence parallelism. */
static uint64_t mtp_activations(const struct scenario *sc, const struct pipeline_stage *st,
                                const uint64_t kind_act[2], uint64_t b, struct checked *ck)
{
    bool fp32 = sc->precision == PRECISION_FP32, gpt = sc->arch == ARCH_GPT;
    uint64_t e = fp32 ? 4 : 2, r = model_residual_bytes(sc), proj = sc->fp8 != FP8_NONE ? 1 : e;
    uint64_t tl = sc->sp && sc->tp > 1 ? sc->tp : 1, sb = ck_mul(ck, model_local_seq(sc), b);
    uint64_t wide = ck_mul(ck, 2 * r + e + 2 * proj, ck_mul(ck, sb, sc->hidden));
    uint64_t each = div_up(ck_add(ck, wide, ck_mul(ck, gpt ? 24 : 12, sb)), tl);
    return ck_add(ck, model_mtp_layers_act(st, kind_act, ck), ck_mul(ck, sc->mtp_layers, each));
}

/* The gradients of GPU st's multi-token-prediction modules (2.6), whose backward runs before the
 * layers': each layer's, its norms' and projection's, and a copy of an untied embedding's. */
static uint64_t mtp_grads(const struct scenario *sc, const struct terms *t,
                          const struct pipeline_stage *st, uint64_t gb, struct checked *ck)
{
    uint64_t n = 0;
    for (int k = 0; k < 2; k++)
        n = ck_add(ck, n, ck_mul(ck, st->mtp[k], layer_gpu_grads(sc, t, k, gb, ck)));
    n = ck_add(ck, n, ck_mul3(ck, gb, sc->mtp_layers, model_mtp_extra_params(sc, sc->tp, ck)));
    if (sc->mtp_layers > 0 && sc->pp > 1 && !sc->tied && !st->first)
        n = ck_add(ck, n, ck_mul(ck, gb, div_up(ck_mul(ck, sc->vocab, sc->hidden), sc->tp)));
    return n;
}

/* A layer's backward at its last GEMM (kind: the one whose A is amax): the input's gradient,
 * the weight's and bias's, and what its dropout or autocast keeps then. A frozen base computes
 * no weight or bias gradient; QLoRA's GEMM reads its NF4 weight dequantised into a bf16
 * temporary of the same size instead (bitsandbytes' 4-bit matmul; doc/model.md 3.6). */
static uint64_t backward_transient(const struct scenario *sc, const struct terms *t, uint64_t amax,
                                   const uint64_t kind_act[2], uint64_t b, struct checked *ck)
{
    bool gpt = sc->arch == ARCH_GPT;
    uint64_t tp = sc->tp, tl = sc->sp && tp > 1 ? tp : 1, h = sc->hidden;
    uint64_t e = sc->precision == PRECISION_FP32 ? 4 : 2;
    uint64_t sb = ck_mul(ck, model_local_seq(sc), b), sbh = ck_mul(ck, sb, h);
    uint64_t f = t->kind_act[1] && amax == kind_act[1] ? sc->top_k * sc->expert_ffn : sc->ffn;
    bool frozen = sc->finetune != FINETUNE_FULL || sc->precision == PRECISION_FROZEN;
    uint64_t weight = frozen && sc->finetune != FINETUNE_QLORA ? 0 : ck_mul(ck, h, f);
    uint64_t x = ck_add(ck, div_up(ck_mul(ck, e, ck_add(ck, ck_mul(ck, sb, f), weight)), tp),
                        gpt && !frozen ? e * h : 0);
    if (gpt && sc->dropout)
        return ck_add(ck, x, ck_mul(ck, e - 1, div_up(sbh, tl)));
    if (sc->precision == PRECISION_AUTOCAST)
        return ck_add(ck, x, ck_mul(ck, 2, div_up(sbh, tl)));
    return x;
}

/* Block recomputation of n < L_s layers of each chunk (n = 0: none; doc/model.md 5.4): each
 * chunk-micro-batch in flight keeps n checkpoints and L_s - n whole layers at the largest A; a
 * recomputed layer is rebuilt after the kept layers' backward, so at the first rebuild the other
 * chunk-micro-batches' kept layers are alive beside the checkpoints. */
static void block_terms(const struct model_gpu *m, uint64_t n, uint64_t amax, uint64_t c,
                        struct step_gpu *g, struct checked *ck)
{
    if (n == 0)
        return;
    uint64_t flight = m->pipe.in_flight, kept = ck_mul(ck, m->pipe.chunk_layers - n, amax);
    uint64_t ckpts = ck_mul3(ck, flight, n, c);
    g->acts = ck_add(ck, ckpts, ck_mul(ck, flight, kept));
    g->ckpt_in_flight = ck_add(ck, ckpts, ck_mul(ck, flight - 1, kept));
}

/* What GPU `stage` holds at micro-batch b for the step model, each kind's A and c at b given.
 * With `fixed`, also what it holds at b = 0 (what does not grow with the micro-batch): every
 * point of the step is the line through the two, but for the rounding of divisions. */
void model_step_gpu_at(const struct scenario *sc, const struct terms *t, int stage, uint64_t b,
                       const uint64_t kind_act[2], uint64_t c, struct step_gpu *g,
                       struct step_gpu *fixed, struct checked *ck)
{
    const struct model_gpu *m = &t->stage[stage];
    struct model_bytes_per_param bpp = model_bytes_per_param(sc->precision);
    bool fp32 = sc->precision == PRECISION_FP32, ac = sc->precision == PRECISION_AUTOCAST;
    bool gpt = sc->arch == ARCH_GPT, eager = sc->loss == LOSS_EAGER;
    bool pers = sc->grad_buffer == GRAD_PERSISTENT;
    uint64_t tp = sc->tp, tl = sc->sp && tp > 1 ? tp : 1, h = sc->hidden;
    uint64_t e = fp32 ? 4 : 2, r = model_residual_bytes(sc), gb = bpp.grads;
    uint64_t sb = ck_mul(ck, model_local_seq(sc), b), sbh = ck_mul(ck, sb, h);
    uint64_t sbv = div_up(ck_mul(ck, sb, sc->vocab), tp), vh = div_up(ck_mul(ck, sc->vocab, h), tp);
    uint64_t n = m->pipe.layers[0] + m->pipe.layers[1];
    uint64_t k = sc->recompute == RECOMPUTE_EVERY_K ? sc->ckpt_every : 0;
    uint64_t kk = pipeline_segment_layers(&m->pipe, k);
    *g = (struct step_gpu){0};
    g->first = m->pipe.first;
    g->last = m->pipe.last;
    g->weights = m->weights_bytes;
    g->grads = m->grads_bytes;
    g->optimizer = m->optimizer_bytes;
    /* Gradient accumulation of the scenario itself, m > 1 micro-batches a step (the trial b of a
     * search keeps it). */
    bool accumulating = pipeline_micro_batches(sc) > 1;
    g->grads_at_start = pers || accumulating ? m->grads_bytes : 0;
    g->tokens = ck_mul(ck, 8, ck_mul(ck, sb, (uint64_t)g->first + g->last)); /* int64 */
    if (g->first)
        g->embedding_inputs = ck_add(ck, sc->positions ? 8 * model_local_seq(sc) : 0,
                                     gpt && sc->dropout ? div_up(sbh, tl) : 0);
    if (g->last) /* the final norm's input and statistics, the output layer's input */
        g->outside = div_up(ck_add(ck, ck_mul(ck, r + e, sbh), ck_mul(ck, gpt ? 8 : 4, sb)), tl);
    if (g->last && sc->mtp_layers > 0)
        g->outside = ck_add(ck, g->outside, mtp_activations(sc, &m->pipe, kind_act, b, ck));
    uint64_t amax = model_stage_max_act(m->pipe.layers, kind_act);
    g->ring = model_context_ring_bytes(sc, b, ck);
    if (kk) {
        g->recompute = true;
        g->ckpt_in_flight = ck_mul(ck, model_gpu_checkpoints(sc, &m->pipe, k), c);
        g->acts = g->ckpt_in_flight;
        g->ckpt = c;
        g->segment_act = ck_mul(ck, kk, amax);
        block_terms(m, model_block_layers(sc, &m->pipe, k), amax, c, g, ck);
    } else {
        for (int i = 0; i < 2; i++)
            g->acts = ck_add(ck, g->acts, ck_mul(ck, m->pipe.act_layers[i], kind_act[i]));
    }
    /* The bf16 copies of the weights computed from fp32 (doc/model.md 10.2, 3.6): autocast's of
     * every GEMM weight (and GPT's biases) and LoRA adapter; QLoRA's blocks read NF4 weights
     * (dequantised per GEMM, not kept), its output layer is upcast to fp32. */
    bool qlora = sc->finetune == FINETUNE_QLORA;
    if (ac || qlora) {
        uint64_t copy[2], most = 0;
        for (int i = 0; i < 2; i++) {
            uint64_t gemm = t->kind_params[i] - t->kind_small[i];
            uint64_t bias = gpt && t->kind_small[i] > 4 * h ? t->kind_small[i] - 4 * h : 0;
            copy[i] =
                qlora || !ac ? 0 : ck_add(ck, ck_mul(ck, 2, div_up(gemm, tp)), ck_mul(ck, 2, bias));
            if (ac)
                copy[i] = ck_add(ck, copy[i],
                                 ck_mul(ck, 2, t->kind_adapters[i][0] + t->kind_adapters[i][1]));
            uint64_t held = ck_add(ck, m->pipe.act_layers[i], m->pipe.mtp[i]);
            g->all_copies = ck_add(ck, g->all_copies, ck_mul(ck, held, copy[i]));
            most = m->pipe.layers[i] > 0 && copy[i] > most ? copy[i] : most;
        }
        g->layer_copies = ck_mul(ck, kk, most);
        if (model_block_layers(sc, &m->pipe, k))
            g->kept_copies =
                ck_mul3(ck, m->pipe.in_flight,
                        m->pipe.chunk_layers - model_block_layers(sc, &m->pipe, k), most);
        if (g->last)
            g->head_copy = ck_mul(ck, 2, vh);
        if (g->last && ac) /* the multi-token-prediction modules' projections (2.6) */
            g->all_copies =
                ck_add(ck, g->all_copies,
                       ck_mul3(ck, sc->mtp_layers, 2, model_mtp_proj_params(sc, tp, ck)));
    }
    if (g->last) { /* and each multi-token-prediction module's own (doc/model.md 2.6) */
        g->logits_forward = ck_mul3(ck, sc->mtp_layers + 1, eager ? 8 : 4, sbv);
        g->loss = ck_mul3(ck, sc->mtp_layers + 1, eager ? 12 : 4, sbv);
    }
    /* The gradients as the layers' backward starts: all of them (a persistent buffer, or
     * accumulation's earlier micro-batches), with a tied embedding's partial; or, on demand, the
     * final norm's and the output layer's, and the other layers' as their backward completes. */
    uint64_t final_norm = gpt ? 2 * h : h;
    /* A frozen base (LoRA, QLoRA, precision=frozen): the head has no gradient (section 3.6). */
    bool frozen = sc->finetune != FINETUNE_FULL || sc->precision == PRECISION_FROZEN;
    if (pers || accumulating)
        g->head_grads =
            ck_add(ck, m->grads_bytes, g->last && sc->tied && !frozen ? ck_mul(ck, gb, vh) : 0);
    else if (g->last && !frozen)
        g->head_grads = ck_add(ck, ck_mul(ck, gb, ck_add(ck, final_norm, vh)),
                               mtp_grads(sc, t, &m->pipe, gb, ck));
    if (!pers && !accumulating && kk) {
        uint64_t one = layer_gpu_grads(sc, t, amax == kind_act[1], gb, ck);
        uint64_t blk = model_block_layers(sc, &m->pipe, k);
        g->done_grads = ck_mul(ck, n - kk, one);
        g->kept_grads = blk ? ck_mul(ck, m->pipe.chunk_layers - blk, one) : 0;
    }
    g->transient = backward_transient(sc, t, amax, kind_act, b, ck);
    g->optimizer_temps = optimizer_temps(sc, m, ck);
    if (fixed) {
        *fixed = *g;
        fixed->tokens = fixed->outside = fixed->acts = fixed->ckpt_in_flight = fixed->ring = 0;
        fixed->ckpt = fixed->segment_act = fixed->logits_forward = fixed->loss = 0;
        fixed->embedding_inputs = g->first && sc->positions ? 8 * model_local_seq(sc) : 0;
        fixed->transient = backward_transient(sc, t, amax, kind_act, 0, ck);
        if (g->first && !frozen)
            embedding_end(sc, 0, gb, pers, fixed, ck);
    }
    /* A frozen embedding's output needs no gradient: its backward never runs (section 3.6). */
    if (g->first && !frozen)
        embedding_end(sc, b, gb, pers, g, ck);
}

enum model_status model_step_gpu(const struct scenario *sc, const struct terms *t, unsigned stage,
                                 struct step_gpu *out)
{
    struct checked ck = {false};
    unsigned s = sc->pp == 1 ? MODEL_STAGE_FIRST : stage;
    model_step_gpu_at(sc, t, (int)s, sc->micro_batch, t->kind_act, t->ckpt_bytes, out, NULL, &ck);
    return ck.overflow ? MODEL_OVERFLOW : MODEL_OK;
}

enum model_status model_step_parts(const struct scenario *sc, const struct terms *t, unsigned stage,
                                   struct step_parts *out)
{
    struct step_gpu g;
    if (model_step_gpu(sc, t, stage, &g) != MODEL_OK || !step_phase_parts(&g, out))
        return MODEL_OVERFLOW;
    return MODEL_OK;
}
