/* cost: see cost.h, which writes the model out with its sources; doc/model.md section 12. */
#include "model/cost.h"

#include <ctype.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "model/layer.h"
#include "model/pipeline.h"
#include "model/states.h"

#define COST_GPU_ROW(name, gemm_eff, fp8_eff, net_gb_s) {name, gemm_eff, fp8_eff, net_gb_s},
static const struct cost_gpu cost_gpus[] = {COST_GPUS(COST_GPU_ROW)};
static const struct cost_gpu cost_gpu_other = {COST_GPU_OTHER};
#undef COST_GPU_ROW

const struct cost_gpu *cost_gpu_of(const struct scenario *sc)
{
    const char *name = sc->gpu_preset;
    for (size_t i = 0; i < sizeof cost_gpus / sizeof *cost_gpus; i++) {
        size_t n = strlen(cost_gpus[i].name);
        /* "L4-24GB" is an L4; "L40S-48GB" is not. */
        if (strncasecmp(name, cost_gpus[i].name, n) == 0 && !isalnum((unsigned char)name[n]))
            return &cost_gpus[i];
    }
    return sc->speed.bf16_tflops > 0 ? &cost_gpu_other : &cost_gpus[0];
}

static double or_fallback(double v, double fallback)
{
    return v > 0 ? v : fallback;
}

/* Bytes one GPU sends in a ring all-reduce of `bytes` over n GPUs: 2 (n-1)/n of them. */
static double ring_allreduce(double bytes, uint64_t n)
{
    return n > 1 ? 2.0 * (double)(n - 1) / (double)n * bytes : 0.0;
}

/* ... in a ring reduce-scatter or all-gather: (n-1)/n of them. */
static double ring_half(double bytes, uint64_t n)
{
    return n > 1 ? (double)(n - 1) / (double)n * bytes : 0.0;
}

/* The pipeline bubble of a step (doc/model.md 12.7; DeepSeek-V3 report, Table 2) from the
 * stage's work of the m micro-batches (a micro-batch's F + B: its forward and full backward,
 * with their communication), a micro-batch's backward B and the backward's weight-gradient part
 * W: 1F1B (p - 1)(F + B), / v interleaved; ZB1P (p - 1)(F + B - 2W); DualPipe
 * (p/2 - 1)(F&B + B - 3W), where the overlapped pair F&B computes both, F + B. */
static double bubble(const struct scenario *sc, double work, double m, double b, double w)
{
    double pp = (double)(sc->pp ? sc->pp : 1), vpp = (double)(sc->vpp ? sc->vpp : 1);
    double f_b = work / m;
    if (sc->schedule == SCHEDULE_DUALPIPE)
        return (pp / 2 - 1) * (f_b + b - 3 * w > 0 ? f_b + b - 3 * w : 0);
    if (sc->schedule == SCHEDULE_ZB1P)
        return (pp - 1) * (f_b - 2 * w > 0 ? f_b - 2 * w : 0);
    return (pp - 1) / (m * vpp) * work;
}

static double max0(double x)
{
    return x > 0 ? x : 0;
}

/* Whether every group of `size` GPUs `stride` ranks apart lies inside a node, in Megatron-LM's
 * rank order (tp innermost, then cp, ep, dp, pp; doc/model.md 12.6): only when the block of
 * stride * size ranks a group lies in divides the node. */
static bool group_in_node(const struct scenario *sc, uint64_t stride, uint64_t size)
{
    uint64_t node = sc->gpus_per_node ? sc->gpus_per_node : 1, span = stride * size;
    return size <= 1 || (span <= node && node % span == 0);
}

/* The bandwidth of such a group: the node link, else - a group wider than the node, or one that
 * straddles two (tp 3 or 6 on nodes of 8) - the network's. */
static double group_bw(const struct scenario *sc, uint64_t stride, uint64_t size, double link,
                       double net)
{
    return group_in_node(sc, stride, size) ? link : net;
}

/* The latency of a collective of `steps` ring steps (doc/model.md 12.4): NCCL's own model of it. */
static double latency(double steps)
{
    return COST_COLL_BASE_S + steps * COST_COLL_STEP_S;
}

/* ... of a ring all-reduce over n GPUs (2 (n-1) steps), and of a reduce-scatter or all-gather
 * (n - 1); 0 for one GPU. */
static double allreduce_latency(uint64_t n)
{
    return n > 1 ? latency(2.0 * (double)(n - 1)) : 0;
}

static double half_latency(uint64_t n)
{
    return n > 1 ? latency((double)(n - 1)) : 0;
}

/* Whether the schedule overlaps the experts' all-to-alls with computation: DeepSeek-V3's
 * DualPipe runs one micro-batch's all-to-all under another's forward and backward (DeepSeek-V3
 * report, 3.2.1; doc/model.md 12.4); 1F1B, its interleaving and ZB1P do not. */
static bool a2a_overlapped(const struct scenario *sc)
{
    return sc->schedule == SCHEDULE_DUALPIPE;
}

/* One all-to-all (dispatch or combine) of a MoE layer for one micro-batch on one GPU, seconds
 * (doc/model.md 12.4): `tokens` of its own, `rows` routed copies of them, h wide in bf16, over
 * an expert group of ep GPUs etp apart. Inside a node: (e - 1)/e of the rows over the node link.
 * Across n nodes: each token's k experts lie on n (1 - (1 - 1/n)^k) nodes on average (uniform
 * routing), at most moe_max_nodes with node-limited routing, (n - 1)/n of them remote; with
 * node-limited routing a token crosses the network once a node and is forwarded inside it
 * (DeepSeek-V3 report, 3.2.2), without it every routed copy for another node crosses it. The
 * network's part and the node link's run at once; the slower decides. */
static double all_to_all(const struct scenario *sc, double tokens, double rows, uint64_t ep,
                         uint64_t etp, double link, double net)
{
    double h = (double)sc->hidden, row = 2 * h;
    uint64_t node = sc->gpus_per_node ? sc->gpus_per_node : 1, span = ep * etp;
    if (group_in_node(sc, etp, ep))
        return ring_half(rows * row, ep) / link + latency(1);
    double nodes = span > node ? (double)span / (double)node : 2;
    double k = tokens > 0 ? rows / tokens : 0;
    double reached = nodes * (1 - pow(1 - 1 / nodes, k));
    double remote = (nodes - 1) / nodes;
    double net_bytes = rows * remote * row;
    if (sc->moe_max_nodes > 0) {
        double limit = (double)sc->moe_max_nodes;
        net_bytes = tokens * (reached < limit ? reached : limit) * remote * row;
    }
    uint64_t per_node = node / (etp ? etp : 1), inside = ep < per_node ? ep : per_node;
    double link_bytes = ring_half(rows * row / nodes, inside > 1 ? inside : 1);
    double t_net = net_bytes / net, t_link = link_bytes / link;
    return (t_net > t_link ? t_net : t_link) + latency(1);
}

/* The rates of one GPU in the step: its GEMMs' (peak * eff_gpu * COST_GEMM_IN_TRAINING) and its
 * memory's (hbm * COST_HBM_EFFICIENCY), per second, and their inverses (memfit search calls
 * cost_step for every layout it times). */
struct rates {
    double gemm_flop_s, hbm_byte_s;
    double s_per_flop, s_per_byte;
};

/* GEMM FLOPs and seconds, added up; and the elements of the GEMMs' inputs (m k) and outputs
 * (m n), which FP8 casts before the forward's and the backward's GEMMs (doc/model.md 12.1). */
struct work {
    double flops, s;
    double in_elems, out_elems;
};

/* A (batched) GEMM of m x k by k x n in bf16 (doc/model.md 12.1): at the GEMM rate, or at the
 * memory's when its inputs and output take longer to move, plus a fixed time. */
static void gemm(struct work *w, const struct rates *r, double batch, double m, double k, double n)
{
    double flops = 2.0 * m * k * n * batch, bytes = 2.0 * (m * k + k * n + m * n) * batch;
    double compute = flops * r->s_per_flop, memory = bytes * r->s_per_byte;
    w->flops += flops;
    w->s += (compute > memory ? compute : memory) + COST_GEMM_FIXED_S;
    w->in_elems += m * k * batch;
    w->out_elems += m * n * batch;
}

static bool has_mla(const struct scenario *sc)
{
    return sc->kv_lora_rank > 0;
}

/* The forward GEMMs of one layer of `kind` on one GPU for `tokens` tokens (a micro-batch's s b /
 * c), their shapes after tensor and expert parallelism (Shoeybi et al. 2019, section 3; layer.h):
 * attention's projections, the dense MLP, or the router, the routed experts (each GPU holds
 * E / e of them, each taking k T e / E rows, width f_e / u) and the shared experts. */
static void layer_gemms(const struct scenario *sc, enum layer_kind kind, const struct rates *r,
                        double tokens, struct work *w)
{
    double h = (double)sc->hidden, t = (double)(sc->tp ? sc->tp : 1), a = (double)sc->heads;
    if (has_mla(sc)) { /* DeepSeek-V2/V3: the down projections are replicated (layer.h) */
        double dn = (double)sc->qk_nope_dim, dr = (double)sc->qk_rope_dim;
        double dv = (double)sc->v_head_dim, rkv = (double)sc->kv_lora_rank;
        if (sc->q_lora_rank) {
            gemm(w, r, 1, tokens, h, (double)sc->q_lora_rank);
            gemm(w, r, 1, tokens, (double)sc->q_lora_rank, a * (dn + dr) / t);
        } else {
            gemm(w, r, 1, tokens, h, a * (dn + dr) / t);
        }
        gemm(w, r, 1, tokens, h, rkv + dr);
        gemm(w, r, 1, tokens, rkv, a * (dn + dv) / t);
        gemm(w, r, 1, tokens, a * dv / t, h);
    } else {
        double dh = (double)layer_head_dim(sc), g = (double)sc->kv_heads;
        gemm(w, r, 1, tokens, h, (a + 2 * g) * dh / t);
        gemm(w, r, 1, tokens, a * dh / t, h);
    }
    bool gated = sc->arch == ARCH_LLAMA;
    if (kind == LAYER_DENSE) {
        double f = (double)sc->ffn;
        gemm(w, r, 1, tokens, h, (gated ? 2 : 1) * f / t);
        gemm(w, r, 1, tokens, f / t, h);
        return;
    }
    double e = (double)(sc->ep ? sc->ep : 1), u = (double)(sc->etp ? sc->etp : sc->tp);
    double experts = (double)sc->experts, fe = (double)sc->expert_ffn;
    double rows = (double)layer_routed_rows(sc, (uint64_t)tokens) * e / experts;
    /* The router stays in bf16 under FP8 (DeepSeek-V3 report, 3.3): nothing of it is cast. */
    double in = w->in_elems, out = w->out_elems;
    gemm(w, r, 1, tokens, h, experts);
    w->in_elems = in;
    w->out_elems = out;
    gemm(w, r, experts / e, rows, h, 2 * fe / u);
    gemm(w, r, experts / e, rows, fe / u, h);
    if (sc->shared_ffn) {
        double fs = (double)sc->shared_ffn;
        gemm(w, r, 1, tokens, h, 2 * fs / t);
        gemm(w, r, 1, tokens, fs / t, h);
    }
}

/* The forward again of the modules selective recomputation rebuilds in one layer of `kind`
 * (doc/model.md 5.5, 12.2), beyond the attention core: their GEMMs as layer_gemms shapes them
 * (mlp, moe, shared_experts, mla_up_proj) and the bytes of their elementwise work at the memory's
 * rate (layernorm: two norms reading and writing h a token; moe_act: the gated activation,
 * 6 f_e / u a routed row). */
static struct work module_forward(const struct scenario *sc, enum layer_kind kind,
                                  const struct rates *r, double tokens)
{
    struct work w = {0};
    unsigned mods = scenario_recompute_modules(sc);
    double h = (double)sc->hidden, t = (double)(sc->tp ? sc->tp : 1), a = (double)sc->heads;
    double split = sc->sp && t > 1 ? t : 1, bytes = 0;
    if (mods & RECOMPUTE_LAYERNORM)
        bytes += 2 * 4 * h * tokens / split;
    if (mods & RECOMPUTE_MLA_UP_PROJ && has_mla(sc)) {
        double dn = (double)sc->qk_nope_dim, dr = (double)sc->qk_rope_dim;
        double rq = sc->q_lora_rank ? (double)sc->q_lora_rank : h;
        gemm(&w, r, 1, tokens, rq, a * (dn + dr) / t);
        gemm(&w, r, 1, tokens, (double)sc->kv_lora_rank, a * (dn + (double)sc->v_head_dim) / t);
    }
    if (kind == LAYER_DENSE && mods & RECOMPUTE_MLP) {
        double f = (double)sc->ffn;
        gemm(&w, r, 1, tokens, h, (sc->arch == ARCH_LLAMA ? 2 : 1) * f / t);
        gemm(&w, r, 1, tokens, f / t, h);
    }
    if (kind == LAYER_MOE &&
        mods & (RECOMPUTE_MOE | RECOMPUTE_MOE_ACT | RECOMPUTE_SHARED_EXPERTS)) {
        double e = (double)(sc->ep ? sc->ep : 1), u = (double)(sc->etp ? sc->etp : sc->tp);
        double experts = (double)sc->experts, fe = (double)sc->expert_ffn;
        double rows = (double)layer_routed_rows(sc, (uint64_t)tokens) * e / experts;
        if (mods & RECOMPUTE_MOE) {
            gemm(&w, r, 1, tokens, h, experts);
            gemm(&w, r, experts / e, rows, h, 2 * fe / u);
            gemm(&w, r, experts / e, rows, fe / u, h);
        } else if (mods & RECOMPUTE_MOE_ACT) {
            bytes += 6 * fe / u * rows * experts / e;
        }
        if (sc->shared_ffn && mods & (RECOMPUTE_MOE | RECOMPUTE_SHARED_EXPERTS)) {
            gemm(&w, r, 1, tokens, h, 2 * (double)sc->shared_ffn / t);
            gemm(&w, r, 1, tokens, (double)sc->shared_ffn / t, h);
        }
    }
    w.s += bytes * r->s_per_byte;
    return w;
}

/* Bytes the elementwise operations of one layer of `kind` move per token in the forward pass on
 * one GPU, counted op by op for Megatron-LM's fused kernels (Narayanan et al. 2021, section 4.2;
 * doc/model.md 12.1): each norm reads and writes h (4h bytes), each residual add reads two and
 * writes one (6h; GPT's bias-dropout-add also writes its 1-byte mask, 7h) - both divided by t with
 * sequence parallelism; the activation reads 2 (GeLU: 1) f / t wide inputs and writes f / t
 * (6f / t gated, 4f / t); rotary reads and writes q and k (4 (a + g) d_h / t); a MoE layer's
 * experts do the same per routed row, and permuting the rows reads and writes them twice (8h). */
static double layer_elementwise_bytes(const struct scenario *sc, enum layer_kind kind,
                                      double tokens)
{
    double h = (double)sc->hidden, t = (double)(sc->tp ? sc->tp : 1), a = (double)sc->heads;
    bool gated = sc->arch == ARCH_LLAMA;
    double norms = (double)(sc->layer_norms ? sc->layer_norms : 2);
    double adds = sc->arch == ARCH_GPT && sc->dropout ? 7.0 : 6.0;
    double split = sc->sp && t > 1 ? t : 1;
    double bytes = (4 * norms + 2 * adds) * h / split;
    if (sc->positions == 0) { /* rotary positions */
        if (has_mla(sc))
            bytes += 4 * (a + 1) * (double)sc->qk_rope_dim / t;
        else
            bytes += 4 * (a + (double)sc->kv_heads) * (double)layer_head_dim(sc) / t;
    }
    if (kind == LAYER_DENSE)
        return bytes + (gated ? 6.0 : 4.0) * (double)sc->ffn / t;
    /* The experts, routed and shared, are gated MLPs (layer.h). */
    double u = (double)(sc->etp ? sc->etp : sc->tp);
    double k = tokens > 0 ? (double)layer_routed_rows(sc, (uint64_t)tokens) / tokens : 0;
    bytes += k * (6.0 * (double)sc->expert_ffn / u + 8 * h);
    return bytes + 6.0 * (double)sc->shared_ffn / t;
}

/* The attention core of one layer on one GPU for one micro-batch: its forward and backward
 * seconds (doc/model.md 12.1). */
struct core {
    double fwd_s, bwd_s;
};

static struct core attention_core(const struct scenario *sc, const struct rates *r)
{
    double t = (double)(sc->tp ? sc->tp : 1), c = (double)(sc->cp ? sc->cp : 1);
    double s = (double)sc->seq, b = (double)sc->micro_batch, heads = (double)sc->heads / t;
    double dqk = (double)layer_head_dim(sc), dv = dqk;
    if (has_mla(sc)) {
        dqk = (double)(sc->qk_nope_dim + sc->qk_rope_dim);
        dv = (double)sc->v_head_dim;
    }
    struct core out;
    if (sc->attention == ATTENTION_FLASH) {
        /* Causal: FlashAttention skips the blocks above the diagonal, half the scores. */
        double flops = 2.0 * b * heads * (s / c) * s * (dqk + dv) / 2;
        double rate = r->gemm_flop_s * COST_FLASH_RELATIVE;
        out.fwd_s = flops / rate;
        out.bwd_s = COST_FLASH_BACKWARD * flops / rate;
        return out;
    }
    /* Plain: QK^T and PV as batched GEMMs (the scores written and read back), then the softmax
     * and the dropout over the b (a/t) (s/c) s scores: forward 2 + 2 bytes a score (read the
     * scores, write the probabilities), + 5 with dropout (read, write, the 1-byte mask);
     * backward 6 (the softmax's gradient reads two, writes one), + 5 with dropout. */
    struct work w = {0};
    gemm(&w, r, b * heads, s / c, dqk, s);
    gemm(&w, r, b * heads, s / c, s, dv);
    double scores = b * heads * (s / c) * s;
    out.fwd_s = w.s + scores * (sc->dropout ? 9.0 : 4.0) / r->hbm_byte_s;
    out.bwd_s = 2 * w.s + scores * (sc->dropout ? 11.0 : 6.0) / r->hbm_byte_s;
    return out;
}

/* Context parallelism's ring, a layer and micro-batch on one GPU (doc/model.md 12.4): Transformer
 * Engine's AttnFuncWithCPAndKVP2P (transformer_engine/pytorch/attention/dot_product_attention/
 * context_parallel.py) runs the attention core in c steps, each on the block of K and V received
 * in the step before, and sends that block on while it computes: a step's send, with its latency
 * (a send's, lat(1)), hides behind that step's block of the core (1/c of it) only, the excess is
 * exposed - c - 1 sends of the s/c tokens' K and V forward, K, V and their gradients backward. Each
 * step after the first merges its partial result into the accumulators
 * (flash_attn_fwd_out_correction: the output; the backward's dq, dk and dv), COST_CP_MERGE_BYTES an
 * element at the memory's rate, and launches COST_CP_STEP_KERNELS kernels a pass (the block's
 * attention and two merges), each COST_GEMM_FIXED_S. */
struct ring {
    double fwd_s, bwd_s;                 /* the merges and the steps' kernels */
    double fwd_exposed_s, bwd_exposed_s; /* the sends beyond their steps' blocks of the core */
};

static struct ring cp_ring(const struct scenario *sc, const struct rates *r,
                           const struct core *core, double tokens, double bw)
{
    struct ring g = {0};
    double c = (double)(sc->cp ? sc->cp : 1), t = (double)(sc->tp ? sc->tp : 1);
    if (c <= 1)
        return g;
    double heads = (double)sc->heads / t, dqk = (double)layer_head_dim(sc), dv = dqk;
    /* K and V, values a token: MLA's expanded a (d_qk + d_v), else 2 g d_h. */
    double kv = 2.0 * (double)sc->kv_heads * dqk;
    if (has_mla(sc)) {
        dqk = (double)(sc->qk_nope_dim + sc->qk_rope_dim);
        dv = (double)sc->v_head_dim;
        kv = (double)sc->heads * (dqk + dv);
    }
    double block = tokens * 2.0 * kv / t, steps = c - 1;
    double fwd_send = block / bw, bwd_send = 2 * block / bw;
    double fwd_blk = core->fwd_s / c, bwd_blk = core->bwd_s / c;
    g.fwd_exposed_s = steps * max0(fwd_send - fwd_blk);
    g.bwd_exposed_s = steps * max0(bwd_send - bwd_blk);
    /* A send's latency shows where its block is too short to hide it too: counted with the
     * steps' work, not the exposed traffic (it is m times a time that does not rise with b). */
    double lat_f = max0(fwd_send + latency(1) - fwd_blk) - max0(fwd_send - fwd_blk);
    double lat_b = max0(bwd_send + latency(1) - bwd_blk) - max0(bwd_send - bwd_blk);
    double kernels = COST_CP_STEP_KERNELS * COST_GEMM_FIXED_S;
    g.fwd_s = steps * (COST_CP_MERGE_BYTES * tokens * heads * dv * r->s_per_byte + kernels + lat_f);
    g.bwd_s = steps * (COST_CP_MERGE_BYTES * tokens * (heads * dqk + kv / t) * r->s_per_byte +
                       kernels + lat_b);
    return g;
}

/* The model's layers of each kind (dense, MoE), its multi-token-prediction modules' included: of
 * the last layer's kind (doc/model.md 2.6). */
static void layer_counts(const struct scenario *sc, uint64_t count[2])
{
    uint64_t dense = sc->experts ? sc->dense_layers : sc->layers;
    count[0] = dense;
    count[1] = sc->layers - dense;
    count[count[1] > 0] += sc->mtp_layers;
}

/* The share of Psi in the layers' FP8 GEMM weights (doc/model.md sections 3.7 and 12.1): the
 * embedding, the output layer, norms, biases and routers stay in bf16. 0 on overflow. */
static double fp8_gemm_share(const struct scenario *sc, const struct terms *t)
{
    uint64_t count[2];
    layer_counts(sc, count);
    double h = (double)sc->hidden, mtp = (double)sc->mtp_layers;
    double gemm_params = mtp * 2 * h * h; /* and their projections */
    for (int kind = 0; kind < 2; kind++)
        gemm_params += (double)count[kind] * (double)t->kind_gemm[kind];
    /* Each module runs the shared output layer again, in bf16. */
    double params = (double)t->params + mtp * (double)sc->vocab * h;
    return params > 0 ? gemm_params / params : 0;
}

/* One layer's work of each kind per micro-batch on one GPU, the output layer's and a
 * multi-token-prediction module's projection (doc/model.md 2.6). */
struct layer_work {
    struct work gemm[2], out, proj;
    double bytes[2]; /* elementwise, forward */
    struct core core;
};

/* The share of a stage's layers whose forward runs again with recompute=full: all of them, or
 * with block recomputation N of each chunk's L_s (doc/model.md 12.2). */
static double recomputed_share(const struct scenario *sc, const struct pipeline_stage *st)
{
    uint64_t n = sc->recompute_layers;
    if (n == 0 || st->chunk_layers == 0 || n >= st->chunk_layers)
        return 1;
    return (double)n / (double)st->chunk_layers;
}

/* The slowest pipeline stage of the candidates (pipeline.h): its GEMM FLOPs and seconds per
 * micro-batch (forward), and its layers of each kind. */

/* The share of a GPU's layers one micro-batch runs through: all of them, or under DualPipe,
 * whose GPU r holds stage r of one direction and stage pp - 1 - r of the other, each micro-batch
 * going one way, half of them on average (doc/model.md 6.4). */
static double layer_share(const struct scenario *sc)
{
    return sc->schedule == SCHEDULE_DUALPIPE ? 0.5 : 1.0;
}

static const struct model_gpu *slowest_stage(const struct terms *t, const struct layer_work *lw,
                                             struct work *out)
{
    const struct model_gpu *best = &t->stage[0];
    *out = (struct work){.flops = -1, .s = -1};
    for (unsigned i = 0; i < t->n_stages && i < MODEL_STAGES; i++) {
        const struct model_gpu *g = &t->stage[i];
        struct work w = {0};
        for (int k = 0; k < 2; k++) {
            w.flops += (double)pipeline_gpu_layers(&g->pipe, k) * lw->gemm[k].flops;
            w.s += (double)pipeline_gpu_layers(&g->pipe, k) * lw->gemm[k].s;
        }
        if (g->pipe.last) { /* the output layer, again for each module with its projection */
            double mtp = (double)(g->pipe.mtp[0] + g->pipe.mtp[1]);
            w.flops += (1 + mtp) * lw->out.flops + mtp * lw->proj.flops;
            w.s += (1 + mtp) * lw->out.s + mtp * lw->proj.s;
        }
        if (w.s > out->s) {
            *out = w;
            best = g;
        }
    }
    return best;
}

/* The data-parallel traffic (doc/model.md 12.3): dp_s, dp_exposed_s, dp_overlapped_s and
 * dp_extra_s of out, whose micro-batch takes mb_fwd_s and mb_bwd_s. */
static void data_parallel(const struct scenario *sc, const struct terms *t, double link, double net,
                          struct cost *out)
{
    double fwd_s = out->mb_fwd_s, bwd_s = out->mb_bwd_s;
    uint64_t tp = sc->tp ? sc->tp : 1, n = (sc->dp ? sc->dp : 1) * (sc->cp ? sc->cp : 1);
    uint64_t z = sc->zero >= 1 && sc->zero_group && sc->zero_group < n ? sc->zero_group : n;
    uint64_t replicas = n / z;
    struct states_per_param bpp = states_per_param(sc);
    const struct model_gpu *g = &t->stage[t->peak_stage];
    double trained = (double)g->trained_params;
    double grads = (double)bpp.grads * trained;
    double weights = (double)bpp.weights * trained + (double)g->pool[0].frozen_bytes +
                     (double)g->pool[1].frozen_bytes;
    /* The ZeRO group's GPUs are tp apart (Megatron-LM's rank order puts tp first), the replicas'
     * tp z apart. */
    double bw_z = group_bw(sc, tp, z, link, net);
    double bw_n = group_bw(sc, tp * z, replicas, link, net);
    double cross = replicas > 1 ? ring_allreduce(grads / (double)z, replicas) / bw_n +
                                      allreduce_latency(replicas)
                                : 0;
    double plain = ring_allreduce(grads, z) / bw_z + allreduce_latency(z) + cross;
    /* The gradients' reduction hides behind the last micro-batch's backward pass. */
    double plain_exposed = max0(plain - bwd_s);
    if (sc->zero < 3) {
        out->dp_s = plain;
        out->dp_exposed_s = plain_exposed;
    } else {
        /* ZeRO-3 gathers the weights for the forward and for the backward pass of every
         * micro-batch and reduce-scatters its gradients (Rajbhandari et al. 2020, 7.2 per
         * micro-batch), a collective of each a layer. Prefetching hides a pass's traffic behind
         * COST_ZERO3_OVERLAP of that pass's work: the forward's gather behind the forward, the
         * backward's gather and reduce-scatter behind the backward. It cannot do better than the
         * plain reduction of the last micro-batch. */
        double m = out->micro_batches;
        double layers = layer_share(sc) * (double)(pipeline_gpu_layers(&g->pipe, 0) +
                                                   pipeline_gpu_layers(&g->pipe, 1));
        double gather = ring_half(weights, z) / bw_z + layers * half_latency(z);
        double scatter = ring_half(grads, z) / bw_z + layers * half_latency(z) + cross;
        out->dp_s = m * (2 * gather + scatter);
        double exposed = m * (max0(gather - COST_ZERO3_OVERLAP * fwd_s) +
                              max0(gather + scatter - COST_ZERO3_OVERLAP * bwd_s));
        out->dp_exposed_s = exposed > plain_exposed ? exposed : plain_exposed;
        out->dp_extra_s = out->dp_exposed_s - plain_exposed;
    }
    out->dp_overlapped_s = out->dp_s - out->dp_exposed_s;
}

/* The offload traffic over the host link (doc/model.md 12.5). */
static double offload(const struct scenario *sc, const struct terms *t, double pcie)
{
    struct states_per_param bpp = states_per_param(sc);
    const struct model_gpu *g = &t->stage[t->peak_stage];
    double s = 0;
    /* Optimizer offload: the gradients of the GPU's optimizer shard go down, its bf16 weights
     * come back (Ren et al. 2021); the CPU's Adam streams each parameter's COST_CPU_ADAM_BYTES
     * through the node's memory, shared by the node's GPUs. */
    if (sc->offload == OFFLOAD_OPTIMIZER && bpp.master + bpp.moments > 0) {
        double shard =
            sc->zero >= 1 ? (double)g->trained_params / (double)sc->dp : (double)g->trained_params;
        s += (double)(bpp.grads + bpp.weights) * shard / pcie;
        uint64_t gpus = (sc->dp ? sc->dp : 1) * (sc->tp ? sc->tp : 1) * (sc->pp ? sc->pp : 1) *
                        (sc->cp ? sc->cp : 1);
        uint64_t node = sc->gpus_per_node && sc->gpus_per_node < gpus ? sc->gpus_per_node : gpus;
        s += (double)node * shard * COST_CPU_ADAM_BYTES /
             (COST_HOST_MEM_GB_S * 1e9 * COST_HBM_EFFICIENCY);
    }
    /* Offloaded checkpoints (doc/model.md 5.3): each crosses the host link twice a micro-batch,
     * the checkpoints of the stage's chunks for each of its m micro-batches. */
    if (sc->offload == OFFLOAD_CHECKPOINTS && sc->recompute == RECOMPUTE_EVERY_K &&
        sc->ckpt_every > 0) {
        const struct pipeline_stage *st = &g->pipe;
        uint64_t kk = pipeline_segment_layers(st, sc->ckpt_every);
        double per_mb =
            (double)pipeline_micro_batch_checkpoints(st, sc->vpp, kk) * (double)t->ckpt_bytes;
        s += 2.0 * (double)pipeline_micro_batches(sc) * per_mb / pcie;
    }
    return s;
}

/* The job's model FLOPs a step, tokens a second and MFU (doc/model.md 12.7): PaLM's count
 * (Chowdhery et al. 2022, appendix B), 6 (or 4 frozen, 6 per adapter) per active parameter and
 * token plus 6 L a s (d_qk + d_v) for the attention scores and their use, the whole sequence
 * counted (no causal half), recomputation not counted; per_token is the parameters' part. */
static void throughput(const struct scenario *sc, double per_token, struct cost *out)
{
    double dqk = (double)layer_head_dim(sc), dv = dqk;
    if (has_mla(sc)) {
        dqk = (double)(sc->qk_nope_dim + sc->qk_rope_dim);
        dv = (double)sc->v_head_dim;
    }
    double s = (double)sc->seq;
    double attention = 6.0 * (double)sc->layers * (double)sc->heads * s * (dqk + dv);
    double dp = (double)(sc->dp ? sc->dp : 1), tokens = out->tokens * dp;
    double gpus = dp * (double)(sc->tp ? sc->tp : 1) * (double)(sc->pp ? sc->pp : 1) *
                  (double)(sc->cp ? sc->cp : 1);
    out->model_flops = (per_token + attention) * tokens;
    if (out->total_s <= 0)
        return;
    out->tokens_per_s = tokens / out->total_s;
    out->mfu = out->model_flops / (out->total_s * gpus * out->tflops * 1e12);
}

void cost_step(const struct scenario *sc, const struct terms *t, struct cost *out)
{
    *out = (struct cost){0};
    const struct cost_gpu *gen = cost_gpu_of(sc);
    out->gpu = gen;
    out->tflops = or_fallback(sc->speed.bf16_tflops, COST_FALLBACK_TFLOPS);
    out->hbm_tb_s = or_fallback(sc->speed.hbm_tb_s, COST_FALLBACK_HBM_TB_S);
    out->link_gb_s = or_fallback(sc->speed.link_gb_s, COST_FALLBACK_LINK_GB_S);
    out->pcie_gb_s = or_fallback(sc->speed.pcie_gb_s, COST_FALLBACK_PCIE_GB_S);
    out->net_gb_s = gen->net_gb_s;
    double peak = out->tflops * 1e12;
    uint64_t tp = sc->tp ? sc->tp : 1, pp = sc->pp ? sc->pp : 1;
    uint64_t cp = sc->cp ? sc->cp : 1, vpp = sc->vpp ? sc->vpp : 1, ep = sc->ep ? sc->ep : 1;
    /* Under DualPipe the all-to-alls' kernels keep their share of the SMs for the whole step, so
     * the compute-bound kernels they overlap run on the rest (12.4): the GEMMs and attention. */
    out->comm_sm_share = a2a_overlapped(sc) && ep > 1 && sc->experts ? COST_A2A_SM_SHARE : 0;
    struct rates r = {peak * gen->gemm_eff * COST_GEMM_IN_TRAINING * (1 - out->comm_sm_share),
                      out->hbm_tb_s * 1e12 * COST_HBM_EFFICIENCY, 0, 0};
    r.s_per_flop = 1 / r.gemm_flop_s;
    r.s_per_byte = 1 / r.hbm_byte_s;
    double link = out->link_gb_s * 1e9 * COST_LINK_EFFICIENCY;
    double net = out->net_gb_s * 1e9 * COST_NET_EFFICIENCY;

    double m = (double)pipeline_micro_batches(sc), b = (double)sc->micro_batch;
    double s = (double)sc->seq, mb_tokens = s * b / (double)cp; /* a micro-batch on one GPU */
    out->micro_batches = m;
    out->tokens = m * b * s;

    /* FLOPs (doc/model.md 12.1): 6 Psi_act per token (2 forward, 4 backward), split over the
     * t p c GPUs of one replica; a frozen base (LoRA, QLoRA, precision frozen) skips the weight
     * gradients, half of the backward: 4 Psi_act, and its adapters take 6 each. */
    /* Each multi-token-prediction module runs the shared output layer again (2.6): V h more. */
    double psi =
        (double)t->active_params + (double)sc->mtp_layers * (double)sc->vocab * (double)sc->hidden;
    double gpus = (double)(tp * pp * cp);
    double adapters = (double)t->adapter_params;
    bool frozen = sc->precision == PRECISION_FROZEN || sc->finetune != FINETUNE_FULL;
    double per_token =
        frozen ? COST_FROZEN_FLOPS * psi + COST_TRAINED_FLOPS * adapters : COST_TRAINED_FLOPS * psi;
    double fwd_share = per_token > 0 ? 2 * (psi + adapters) / per_token : 0;
    double useful = per_token * out->tokens / gpus;
    bool full = sc->recompute == RECOMPUTE_EVERY_K;
    double extra = full ? 2.0 * (psi + adapters) * out->tokens / gpus : 0;

    /* The GEMMs' efficiency from their sizes, on the slowest stage (12.1). */
    struct layer_work lw = {0};
    uint64_t count[2];
    layer_counts(sc, count);
    for (int k = 0; k < 2; k++) {
        if (count[k] == 0)
            continue;
        layer_gemms(sc, (enum layer_kind)k, &r, mb_tokens, &lw.gemm[k]);
        lw.bytes[k] = layer_elementwise_bytes(sc, (enum layer_kind)k, mb_tokens) * mb_tokens;
    }
    gemm(&lw.out, &r, 1, mb_tokens, (double)sc->hidden, (double)sc->vocab / (double)tp);
    gemm(&lw.proj, &r, 1, mb_tokens, 2.0 * (double)sc->hidden, (double)sc->hidden / (double)tp);
    lw.core = attention_core(sc, &r);
    struct work slow;
    const struct model_gpu *st = slowest_stage(t, &lw, &slow);
    slow.flops *= layer_share(sc);
    slow.s *= layer_share(sc);
    /* Block recomputation (12.2): the forward again of N of each chunk's L_s layers only. */
    double rf = full ? recomputed_share(sc, &st->pipe) : 0;
    extra *= rf;
    out->flops = useful + extra;
    out->gemm_eff = slow.s > 0 ? slow.flops / (peak * slow.s) : 0;
    out->stage_factor = 1;
    if (pp > 1) {
        double mtp = (double)sc->mtp_layers;
        double all = (double)count[0] * lw.gemm[0].flops + (double)count[1] * lw.gemm[1].flops +
                     (1 + mtp) * lw.out.flops + mtp * lw.proj.flops;
        out->stage_factor = all > 0 ? slow.flops * (double)pp / all : 1;
    }
    double gemm_rate = peak * out->gemm_eff;
    if (sc->fp8 != FP8_NONE) { /* the GEMMs' share of the FLOPs at the FP8 rate */
        out->fp8_tflops = or_fallback(sc->speed.fp8_tflops, COST_FP8_SPEEDUP * out->tflops);
        out->fp8_share = fp8_gemm_share(sc, t);
        double fp8_eff = (gen->fp8_eff > 0 ? gen->fp8_eff : gen->gemm_eff) / gen->gemm_eff;
        double fp8_rate = out->fp8_tflops * 1e12 * out->gemm_eff * fp8_eff;
        gemm_rate = 1 / ((1 - out->fp8_share) / gemm_rate + out->fp8_share / fp8_rate);
    }
    /* The stage's layers, its multi-token-prediction modules' included (2.6). */
    double n_layers[2] = {(double)pipeline_gpu_layers(&st->pipe, 0),
                          (double)pipeline_gpu_layers(&st->pipe, 1)};
    double layers = layer_share(sc) * (n_layers[0] + n_layers[1]);
    out->gemm_s = gemm_rate > 0 ? useful * out->stage_factor / gemm_rate : 0;
    /* Context parallelism's ring (12.4): its merges and kernels join the attention core. */
    struct ring ring = cp_ring(sc, &r, &lw.core, mb_tokens, group_bw(sc, tp, cp, link, net));
    out->attention_s = m * layers * (lw.core.fwd_s + lw.core.bwd_s + ring.fwd_s + ring.bwd_s);
    double mem_fwd =
        layer_share(sc) * (n_layers[0] * lw.bytes[0] + n_layers[1] * lw.bytes[1]) / r.hbm_byte_s;
    out->memory_s = m * 3 * mem_fwd; /* the backward pass moves twice the forward's bytes */
    /* FP8 (12.1): each FP8 GEMM's input is cast before the forward's GEMM and its output's
     * gradient before the backward's: the bf16 tensor read, the FP8 one written, and a transposed
     * copy for the other GEMM of the backward unless the GPU reads one copy both ways. */
    double cast_fwd = 0, cast_bwd = 0;
    if (sc->fp8 != FP8_NONE) {
        double per_elem = COST_FP8_CAST_BYTES + (sc->fp8_one_copy ? 0 : 1);
        for (int k = 0; k < 2; k++) {
            double n_k = layer_share(sc) * n_layers[k];
            cast_fwd += n_k * lw.gemm[k].in_elems * per_elem * r.s_per_byte;
            cast_bwd += n_k * lw.gemm[k].out_elems * per_elem * r.s_per_byte;
        }
        out->fp8_cast_s = m * (cast_fwd + cast_bwd);
        out->memory_s += out->fp8_cast_s;
    }
    out->compute_s = out->gemm_s + out->attention_s + out->memory_s;

    /* Recomputation (12.2): the layers' forward again, or the plain attention core's. */
    double gemm_fwd = out->gemm_s * fwd_share;
    if (full)
        out->recompute_s = (gemm_rate > 0 ? extra * out->stage_factor / gemm_rate : 0) +
                           rf * m * (layers * (lw.core.fwd_s + ring.fwd_s) + mem_fwd);
    else if (sc->recompute == RECOMPUTE_SELECTIVE) { /* the modules' forward again (5.5) */
        bool core = scenario_recompute_modules(sc) & RECOMPUTE_CORE_ATTN;
        out->recompute_s =
            core && sc->attention == ATTENTION_PLAIN ? m * layers * lw.core.fwd_s : 0;
        for (int k = 0; k < 2; k++)
            if (n_layers[k] > 0 && scenario_recompute_modules(sc) != RECOMPUTE_CORE_ATTN)
                out->recompute_s += m * layer_share(sc) * n_layers[k] *
                                    module_forward(sc, (enum layer_kind)k, &r, mb_tokens).s;
    }

    /* Tensor (and sequence) parallelism (12.4): 4 all-reduces of the layer's s b h output a
     * layer and micro-batch, 6 when the forward is run again; not overlapped. */
    double h = (double)sc->hidden;
    if (tp > 1) {
        double bw = group_bw(sc, 1, tp, link, net);
        double n_coll = 4.0 + 2.0 * rf;
        out->tp_s = m * layers * n_coll *
                    (ring_allreduce(2.0 * mb_tokens * h, tp) / bw + allreduce_latency(tp));
    }
    /* Context parallelism (12.4): what the ring's sends leave exposed beyond their steps' blocks
     * of the core, forward (again with recomputation) and backward: m times a volume beyond a
     * time, both proportional to b, so it does not fall as b grows, which the search's floor
     * relies on (the sends' latency is with the steps' work, in the attention's time). */
    out->cp_s = m * layers * ((1 + rf) * ring.fwd_exposed_s + ring.bwd_exposed_s);
    /* Expert parallelism (12.4): dispatch and combine, forward and backward (and the forward
     * again), of the routed rows the GPU's tokens send, unless the schedule hides them. */
    if (ep > 1 && n_layers[LAYER_MOE] > 0) {
        uint64_t etp = sc->etp ? sc->etp : tp;
        double own = sc->sp && tp > 1 ? mb_tokens / (double)tp : mb_tokens;
        double rows = (double)layer_routed_rows(sc, (uint64_t)own);
        double n_a2a = 4.0 + 2.0 * rf;
        out->ep_s = m * layer_share(sc) * n_layers[LAYER_MOE] * n_a2a *
                    all_to_all(sc, own, rows, ep, etp, link, net);
        /* Overlapped (DualPipe): only what exceeds the computation it hides under is exposed. */
        if (a2a_overlapped(sc))
            out->ep_s = max0(out->ep_s - out->compute_s - out->recompute_s);
    }
    /* Pipeline sends (12.4): each micro-batch crosses each stage boundary forward (its
     * activations) and backward (their gradient), v times when interleaved; with tensor
     * parallelism each GPU sends its 1/t of s b h (Megatron-LM's scatter/gather, Narayanan et al.
     * 2021, 4.1; the sequence-parallel split). The stages are tp cp dp ranks apart. */
    if (pp > 1) {
        uint64_t dp = sc->dp ? sc->dp : 1;
        double bytes = 2.0 * mb_tokens * h / (double)tp;
        double bw = group_bw(sc, tp * cp * dp, pp, link, net);
        out->pp_s = m * (double)vpp * 2 * (bytes / bw + latency(1));
    }

    /* One micro-batch's forward and backward on the stage, for the overlap of the data-parallel
     * traffic; then the data-parallel traffic (12.3), the offload (12.5), the bubble (12.7). */
    out->mb_fwd_s = gemm_fwd / m + layers * lw.core.fwd_s + mem_fwd + cast_fwd;
    out->mb_bwd_s = (out->compute_s + out->recompute_s) / m - out->mb_fwd_s;
    data_parallel(sc, t, link, net, out);
    out->offload_s = offload(sc, t, out->pcie_gb_s * 1e9);
    double stage_work =
        out->compute_s + out->recompute_s + out->tp_s + out->cp_s + out->ep_s + out->pp_s;
    double w_s = frozen ? 0 : gemm_fwd / m; /* W: the weight gradients' GEMMs, a forward's FLOPs */
    out->bubble_s = bubble(sc, stage_work, m, out->mb_bwd_s, w_s);

    out->overhead_s = out->recompute_s + out->bubble_s + out->tp_s + out->cp_s + out->ep_s +
                      out->pp_s + out->dp_extra_s + out->offload_s;
    out->total_s = stage_work + out->bubble_s + out->dp_exposed_s + out->offload_s;
    throughput(sc, per_token, out);
}
