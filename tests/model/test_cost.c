/* Tests of cost, the planner's cost model (doc/model.md section 12): its parts worked out by hand
 * in the comments, and its calibration on the published throughput of Narayanan et al. 2021,
 * Table 1 (section 12.8). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/cost.h"
#include "model/model.h"
#include "model_fixtures.h"

/* NCCL's latency of a collective of n ring steps (cost.h: 3.6 us + 2.5 us a step). */
static double lat(double steps)
{
    return 3.6e-6 + 2.5e-6 * steps;
}

/* cmocka 1.1.5 has no assert_double_equal. */
static void assert_close(double got, double want, double rel)
{
    if (fabs(got - want) > rel * fabs(want)) {
        print_error("got %.9g, want %.9g (rel %.1g)\n", got, want, rel);
        fail();
    }
}

/* ---- Narayanan et al. 2021, Table 1 (doc/model.md 12.8) ----
 * GPT models of 1.7 B to 1 T parameters on up to 3,072 A100 80 GB GPUs (DGX A100 nodes of 8,
 * NVLink inside, 8 x 200 Gb/s HDR InfiniBand between), s = 2048, V = 51,200, fp16, activation
 * recomputation of every layer, no sequence parallelism or FlashAttention (2021). The
 * micro-batch and the interleaving come from the paper's scripts, NVIDIA/Megatron-LM
 * examples/sc21/run_table_1.sh (MBS; --num-layers-per-virtual-pipeline-stage gives vpp =
 * layers / (pp * that)). Achieved: teraFLOP/s per GPU as the paper counts them, equation (3):
 * F = 96 B s l h^2 (1 + s / (6h) + V / (16 l h)) per iteration. */
struct table1_row {
    double billions;
    unsigned heads, hidden, layers, tp, pp, gpus, batch;
    double tflops; /* achieved per GPU */
    unsigned pct;  /* of the 312 TFLOP/s peak */
    unsigned micro_batch, vpp;
    double model; /* the model's teraFLOP/s per GPU, doc/model.md 12.8 */
};

static const struct table1_row table1[] = {
    {1.7, 24, 2304, 24, 1, 1, 32, 512, 137, 44, 16, 1, 145.825},
    {3.6, 32, 3072, 30, 2, 1, 64, 512, 138, 44, 16, 1, 144.585},
    {7.5, 32, 4096, 36, 4, 1, 128, 512, 142, 46, 16, 1, 144.974},
    {18.4, 48, 6144, 40, 8, 1, 256, 1024, 135, 43, 8, 1, 136.182},
    {39.1, 64, 8192, 48, 8, 2, 512, 1536, 138, 44, 4, 1, 135.217},
    {76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140, 45, 2, 3, 146.265},
    {145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148, 47, 2, 2, 146.539},
    {310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155, 50, 1, 2, 154.939},
    {529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163, 52, 1, 3, 158.601},
    {1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 163, 52, 1, 1, 150.793},
};

static void table1_scenario(const struct table1_row *row, struct scenario *sc)
{
    scenario_lesson_example(sc);
    snprintf(sc->name, sizeof sc->name, "table1-%.1fB", row->billions);
    sc->layers = row->layers;
    sc->hidden = row->hidden;
    sc->heads = sc->kv_heads = row->heads;
    sc->ffn = 4ull * row->hidden;
    sc->vocab = 51200;
    sc->positions = 2048; /* learned, as GPT-2 */
    sc->seq = 2048;
    sc->micro_batch = row->micro_batch;
    sc->global_batch = row->batch;
    sc->tp = row->tp;
    sc->pp = row->pp;
    sc->vpp = row->vpp;
    sc->dp = row->gpus / (row->tp * row->pp);
    sc->recompute = RECOMPUTE_EVERY_K;
    sc->ckpt_every = 1;
    sc->gpu_mem_bytes = 85899345920ull; /* A100 80GB: 81,920 MiB */
    sc->speed = (struct gpu_speed){312, 2.039, 300, 32, 0};
    snprintf(sc->gpu_preset, sizeof sc->gpu_preset, "A100-80GB");
}

/* The model's teraFLOP/s per GPU for a row, counted as the paper counts them. */
static double table1_predicted(const struct table1_row *row)
{
    struct scenario sc;
    struct terms t;
    struct cost c;
    table1_scenario(row, &sc);
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &c);
    double B = row->batch, s = 2048, l = row->layers, h = row->hidden, V = 51200;
    double F = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
    return F / c.total_s / row->gpus / 1e12;
}

/* The table of GPU generations (doc/model.md 12.6), by the start of the preset's name. */
static void test_gpu_table(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    static const struct {
        const char *preset;
        const char *row;
        double gemm_eff, net_gb_s;
    } cases[] = {
        {"A100-80GB", "A100", 0.869, 25},  {"a100-40gb", "A100", 0.869, 25},
        {"H100-80GB", "H100", 0.803, 50},  {"H200-141GB", "H200", 0.803, 50},
        {"B200-192GB", "B200", 0.776, 50}, {"MI300X-192GB", "MI300X", 0.514, 50},
        {"L4-24GB", "L4", 0.70, 1.5625},   {"RTX4090-24GB", "RTX4090", 1.0, 1.5625},
        {"L40S-48GB", "other", 0.803, 50}, {"H100NVL", "other", 0.803, 50},
    };
    sc.speed.bf16_tflops = 1; /* a preset with speeds: "other" when the name is not in the table */
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(sc.gpu_preset, sizeof sc.gpu_preset, "%s", cases[i].preset);
        const struct cost_gpu *g = cost_gpu_of(&sc);
        assert_string_equal(g->name, cases[i].row);
        assert_true(g->gemm_eff == cases[i].gemm_eff && g->net_gb_s == cases[i].net_gb_s);
    }
    /* No preset and no speeds: the fallback speeds are the A100's, and so is the row. */
    scenario_lesson_example(&sc);
    assert_string_equal(cost_gpu_of(&sc)->name, "A100");
    assert_true(cost_gpu_of(&sc)->fp8_eff == 0);
}

/* The worked example (doc/model.md section 9) on one GPU without a preset (A100 speeds and row):
 * T = 8 * 2048 = 16,384 tokens. The GEMMs, each max(2MKN / (312e12 * 0.869 * 0.76),
 * 2 (MK + KN + MN) / (2.039e12 * 0.84)) + 4 us: QKV 16384 x 2048 x 6144, out 16384 x 2048 x 2048,
 * fc1 16384 x 2048 x 8192, fc2 16384 x 8192 x 2048 in 24 layers and the output layer 16384 x
 * 2048 x 50257, all compute-bound: eta = 0.6592130393. The plain attention core of a layer:
 * QK^T, 128 batched 2048 x 128 x 2048 GEMMs, moves 1,207,959,552 bytes, 0.7053 ms at the memory's
 * rate against 0.6670 ms of FLOPs: memory-bound; with PV and the softmax and dropout over
 * 536,870,912 scores (9 bytes each forward, 11 backward) 4.2396 ms forward, 6.2851 ms backward.
 * Elementwise: (4 * 2 + 2 * 7) h + 4 * 4h + 4 (a + a) d_h (rotary) = 94,208 bytes a token
 * forward, 3x with the backward. */
static void test_lesson_example(void **state)
{
    (void)state;
    struct scenario sc;
    struct terms t;
    struct cost c;
    scenario_lesson_example(&sc);
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &c);
    double psi = 1311528960.0, mem_rate = 2.039e12 * 0.84;
    assert_close(c.tokens, 16384, 0);
    assert_close(c.micro_batches, 1, 0);
    assert_close(c.flops, 6 * psi * 16384, 1e-15);
    assert_close(c.gemm_eff, 0.6592130393, 1e-9);
    assert_close(c.stage_factor, 1, 0);
    assert_close(c.gemm_s, 6 * psi * 16384 / (312e12 * 0.6592130393), 1e-9);
    assert_close(c.attention_s, 24 * (0.004239624578 + 0.006285073449), 1e-9);
    assert_close(c.memory_s, 3 * 24 * 94208.0 * 16384 / mem_rate, 1e-12);
    assert_close(c.compute_s, c.gemm_s + c.attention_s + c.memory_s, 1e-15);
    assert_true(c.recompute_s == 0 && c.bubble_s == 0 && c.tp_s == 0 && c.cp_s == 0);
    assert_true(c.ep_s == 0 && c.dp_s == 0 && c.offload_s == 0 && c.overhead_s == 0);
    assert_close(c.total_s, 0.9443349678, 1e-9);
    assert_close(c.mb_fwd_s + c.mb_bwd_s, c.compute_s, 1e-12);
    assert_close(c.link_gb_s, COST_FALLBACK_LINK_GB_S, 0);
    assert_close(c.hbm_tb_s, COST_FALLBACK_HBM_TB_S, 0);
    /* Throughput (12.7): B s = 16,384 tokens a step on one GPU; PaLM's model FLOPs 6 Psi + 12 L a
     * d_h s a token (L = 24, a = 16, d_h = 128, s = 2048) over the 312 TFLOP/s peak. */
    double model_flops = (6 * psi + 12.0 * 24 * 16 * 128 * 2048) * 16384;
    assert_close(c.model_flops, model_flops, 1e-15);
    assert_close(c.tokens_per_s, 16384 / c.total_s, 1e-15);
    assert_close(c.mfu, model_flops / (c.total_s * 312e12), 1e-15);
    /* Full checkpointing (12.2): the layers' forward again - the GEMMs' 2 Psi T (8 Psi in all),
     * the attention core's and the elementwise forward. */
    sc.recompute = RECOMPUTE_EVERY_K;
    sc.ckpt_every = 1;
    cost_step(&sc, &t, &c);
    assert_close(c.flops, 8 * psi * 16384, 1e-15);
    assert_close(c.recompute_s, 0.3323317283, 1e-9);
    assert_close(c.overhead_s, c.recompute_s, 0);
    /* ... which are hardware FLOPs, not model FLOPs: the same count, a longer step. */
    assert_close(c.model_flops, model_flops, 1e-15);
    assert_close(c.mfu, model_flops / (c.total_s * 312e12), 1e-15);
    /* Block recomputation of 6 of the 24 layers: a quarter of that forward again; 24 or more
     * layers are all of them. */
    sc.recompute_layers = 6;
    cost_step(&sc, &t, &c);
    assert_close(c.flops, 6.5 * psi * 16384, 1e-15);
    assert_close(c.recompute_s, 0.3323317283 / 4, 1e-9);
    sc.recompute_layers = 24;
    cost_step(&sc, &t, &c);
    assert_close(c.recompute_s, 0.3323317283, 1e-9);
    sc.recompute_layers = 0;
    /* Selective: the plain core's forward, 24 * 4.2396 ms; with flash, nothing. */
    sc.recompute = RECOMPUTE_SELECTIVE;
    cost_step(&sc, &t, &c);
    assert_close(c.recompute_s, 24 * 0.004239624578, 1e-9);
    assert_close(c.flops, 6 * psi * 16384, 1e-15);
    /* Modules (5.5): layernorm adds the two norms' 4h bytes a token each at the memory's rate;
     * mlp its GEMMs' forward, more than nothing and less than the whole layer's. */
    sc.recompute_modules = RECOMPUTE_CORE_ATTN | RECOMPUTE_LAYERNORM;
    cost_step(&sc, &t, &c);
    assert_close(c.recompute_s, 24 * (0.004239624578 + 2 * 4 * 2048.0 * 16384 / mem_rate), 1e-9);
    sc.recompute_modules = RECOMPUTE_CORE_ATTN | RECOMPUTE_MLP;
    cost_step(&sc, &t, &c);
    double mlp = c.recompute_s - 24 * 0.004239624578;
    assert_true(mlp > 0 && mlp < 0.3323317283 - 24 * 0.004239624578);
    sc.recompute_modules = RECOMPUTE_MLP; /* the core kept: only the MLP again */
    cost_step(&sc, &t, &c);
    assert_close(c.recompute_s, mlp, 1e-9);
    sc.recompute_modules = 0;
    sc.attention = ATTENTION_FLASH;
    cost_step(&sc, &t, &c);
    assert_true(c.recompute_s == 0);
    /* FlashAttention: causal, half of 2 (a/t) s (d_qk + d_v) FLOPs a token forward, 2.5x that
     * backward, at 0.83 of the GEMMs' rate. */
    double core = 2.0 * 8 * 16 * 2048 * 2048 * 256 / 2;
    assert_close(c.attention_s, 24 * 3.5 * core / (312e12 * 0.869 * 0.76 * 0.83), 1e-12);
}

/* The lesson's example as a Llama-style mixture of 8 experts, top 2, f_e = 1,024, with
 * FlashAttention on H100s. */
static void small_moe_h100(struct scenario *sc)
{
    scenario_lesson_example(sc);
    sc->speed = (struct gpu_speed){989, 3.35, 450, 64, 1979};
    snprintf(sc->gpu_preset, sizeof sc->gpu_preset, "H100-80GB");
    sc->arch = ARCH_LLAMA;
    sc->dropout = false;
    sc->attention = ATTENTION_FLASH;
    sc->experts = 8;
    sc->top_k = 2;
    sc->expert_ffn = 1024;
}

/* Tensor, context and expert parallelism (12.4) on the worked example with an H100 preset
 * (450 GB/s NVLink at 0.7, 50 GB/s a GPU between nodes at 0.85). */
static void test_tensor_context_expert(void **state)
{
    (void)state;
    struct scenario sc;
    struct terms t;
    struct cost c;
    scenario_lesson_example(&sc);
    sc.speed = (struct gpu_speed){989, 3.35, 450, 64, 1979};
    snprintf(sc.gpu_preset, sizeof sc.gpu_preset, "H100-80GB");
    double link = 450e9 * 0.7, net = 50e9 * 0.85;
    /* tp = 4 with sp: 24 layers * 4 collectives * 2 * 3/4 * 2 s b h bytes, each with the latency
     * of 2 * 3 ring steps. */
    sc.tp = 4;
    sc.sp = true;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &c);
    assert_close(c.tp_s, 24 * 4 * (1.5 * 2 * 16384.0 * 2048 / link + lat(6)), 1e-12);
    assert_close(c.overhead_s, c.tp_s, 1e-15);
    sc.recompute = RECOMPUTE_EVERY_K; /* 6 with the forward run again */
    sc.ckpt_every = 1;
    cost_step(&sc, &t, &c);
    assert_close(c.tp_s, 24 * 6 * (1.5 * 2 * 16384.0 * 2048 / link + lat(6)), 1e-12);
    /* tp = 8 on nodes of 6 GPUs: wider than a node, the network; tp = 4 on nodes of 6 (groups 0-3,
     * 4-7: the second straddles two nodes), the network too; tp = 2 on nodes of 6, NVLink. */
    scenario_lesson_example(&sc);
    sc.speed = (struct gpu_speed){989, 3.35, 450, 64, 1979};
    snprintf(sc.gpu_preset, sizeof sc.gpu_preset, "H100-80GB");
    sc.sp = true;
    sc.gpus_per_node = 6;
    uint64_t degrees[3] = {8, 4, 2};
    double bws[3] = {net, net, link};
    for (int i = 0; i < 3; i++) {
        sc.tp = degrees[i];
        assert_int_equal(model_peak(&sc, &t), MODEL_OK);
        cost_step(&sc, &t, &c);
        double n = (double)degrees[i];
        assert_close(c.tp_s,
                     24 * 4 * (2 * (n - 1) / n * 2 * 16384.0 * 2048 / bws[i] + lat(2 * (n - 1))),
                     1e-12);
    }
    /* cp = 2, flash, across nodes (gpus_per_node 1): one step of the ring passes the K and V of
     * s/c = 1024 tokens (b = 8), 2 * 16 * 128 values of 2 bytes a token, once forward and twice
     * backward, each less the step's block of the core, half of it: forward 2 b 16 (s/c) s
     * (128 + 128) / 2 FLOPs at the flash rate, backward 2.5 times that. The step merges its
     * output (b s/c 16 * 128 elements) and its dq, dk, dv (b s/c (16 + 2 * 16) 128) at 10 bytes
     * an element, with 3 kernels of 4 us a pass, in the attention's time. */
    scenario_lesson_example(&sc);
    sc.speed = (struct gpu_speed){989, 3.35, 450, 64, 1979};
    snprintf(sc.gpu_preset, sizeof sc.gpu_preset, "H100-80GB");
    sc.attention = ATTENTION_FLASH;
    sc.cp = 2;
    sc.gpus_per_node = 1;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &c);
    double block = 1024 * 8 * 2.0 * (2 * 16 * 128) / net;
    double flash = 989e12 * 0.803 * 0.76 * 0.83,
           core = 2.0 * 8 * 16 * 1024 * 2048 * 256 / 2 / flash;
    assert_close(c.cp_s, 24 * ((block - core / 2) + (2 * block - 2.5 * core / 2)), 1e-12);
    /* The sends exceed their blocks: their latency, lat(1) each, shows too. */
    double hbm = 3.35e12 * 0.84;
    double merges = 10 * 8192.0 * (16 * 128 + 48 * 128) / hbm + 2 * (3 * 4e-6 + lat(1));
    assert_close(c.attention_s, 24 * (3.5 * core + merges), 1e-12);
    assert_close(c.tokens, 16384, 0); /* a rank's tokens; each GPU computes half of them */
    assert_close(c.flops, 6 * 1311528960.0 * 16384 / 2, 1e-15);
    /* ep = 4 over dp = 4 in a node: a mixture of 8 experts, top 2, dropless: 4 all-to-alls a
     * MoE layer of the 2 * 16,384 rows of h bytes * 2, 3/4 of them leaving the GPU. */
    small_moe_h100(&sc);
    sc.ep = 4;
    sc.dp = 4;
    sc.global_batch = 32;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &c);
    assert_close(c.ep_s, 24 * 4 * (0.75 * 2 * 16384.0 * 2 * 2048 / link + lat(1)), 1e-12);
    /* FLOPs of the active parameters: 2 of the 8 experts a token. */
    assert_close(c.flops, 6 * (double)t.active_params * 16384, 1e-15);
    assert_true(t.active_params < t.params);
    /* The same over 2 nodes of 2 GPUs: every routed copy for the other node, half of them,
     * crosses the network (the node link's share runs at once and is shorter). */
    sc.gpus_per_node = 2;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &c);
    assert_close(c.ep_s, 24 * 4 * (2 * 16384.0 * 0.5 * 2 * 2048 / net + lat(1)), 1e-12);
    /* Node-limited routing to 1 node: a token's 2 experts lie on 2 (1 - 1/4) = 1.5 nodes on
     * average, capped at 1; one copy a node crosses the network, half of them remote. */
    sc.moe_max_nodes = 1;
    cost_step(&sc, &t, &c);
    assert_close(c.ep_s, 24 * 4 * (16384.0 * 1 * 0.5 * 2 * 2048 / net + lat(1)), 1e-12);
    sc.moe_max_nodes = 2; /* not binding: 1.5 nodes */
    cost_step(&sc, &t, &c);
    assert_close(c.ep_s, 24 * 4 * (16384.0 * 1.5 * 0.5 * 2 * 2048 / net + lat(1)), 1e-12);
}

/* Data-parallel traffic and its overlap (12.3): the worked example, b = 1, on 16 H100s in nodes
 * of 8 (the network). */
static void test_data_parallel(void **state)
{
    (void)state;
    struct scenario sc;
    struct terms t;
    struct cost c;
    scenario_lesson_example(&sc);
    sc.speed = (struct gpu_speed){989, 3.35, 450, 64, 1979};
    snprintf(sc.gpu_preset, sizeof sc.gpu_preset, "H100-80GB");
    sc.attention = ATTENTION_FLASH;
    sc.micro_batch = 1;
    sc.dp = 16;
    sc.global_batch = 16;
    double psi = 1311528960.0, link = 450e9 * 0.7, net = 50e9 * 0.85;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &c);
    /* A ring all-reduce of the 2 Psi bytes of gradients (30 ring steps); the last micro-batch's
     * backward pass hides what it can. */
    double plain = 2 * 15.0 / 16 * 2 * psi / net + lat(30);
    assert_close(c.dp_s, plain, 1e-12);
    assert_true(c.mb_bwd_s < plain);
    assert_close(c.dp_overlapped_s, c.mb_bwd_s, 1e-12);
    assert_close(c.dp_exposed_s, plain - c.mb_bwd_s, 1e-12);
    assert_true(c.dp_extra_s == 0 && c.overhead_s == 0);
    assert_close(c.total_s, c.compute_s + c.dp_exposed_s, 1e-15);
    /* ZeRO-1 and -2 move the same volume. */
    sc.zero = 2;
    cost_step(&sc, &t, &c);
    assert_close(c.dp_s, plain, 1e-12);
    assert_true(c.dp_extra_s == 0);
    /* ZeRO-3 with 4 micro-batches: each gathers the 2 Psi bytes of weights twice and
     * reduce-scatters its gradients, 15/16 * 2 Psi each, a collective of 15 steps a layer;
     * the forward's gather behind half the forward, the rest behind half the backward. */
    sc.zero = 3;
    sc.global_batch = 64;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &c);
    double one = 15.0 / 16 * 2 * psi / net + 24 * lat(15);
    assert_close(c.micro_batches, 4, 0);
    assert_close(c.dp_s, 4 * 3 * one, 1e-12);
    assert_true(one > 0.5 * c.mb_fwd_s && 2 * one > 0.5 * c.mb_bwd_s);
    assert_close(c.dp_exposed_s, 4 * (3 * one - 0.5 * (c.mb_fwd_s + c.mb_bwd_s)), 1e-12);
    assert_close(c.dp_extra_s, c.dp_exposed_s - (plain - c.mb_bwd_s), 1e-12);
    assert_close(c.overhead_s, c.dp_extra_s, 1e-15);
    /* HSDP: ZeRO-3 inside a node of 8 (NVLink), then an all-reduce of the 1/8 shard of the
     * gradients between the 2 replicas over the network. */
    sc.zero_group = 8;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &c);
    double cross = 2 * 0.5 * 2 * psi / 8 / net + lat(2);
    assert_close(c.dp_s, 4 * (3 * (7.0 / 8 * 2 * psi / link + 24 * lat(7)) + cross), 1e-12);
}

/* The pipeline (12.1, 12.7): pp = 4 stages of 6 layers, vpp = 2, m = 4 micro-batches; the last
 * stage holds the output layer and sets the pace; the bubble is (p - 1) / (m v) of its work. */
static void test_pipeline(void **state)
{
    (void)state;
    struct scenario sc;
    struct terms t;
    struct cost c;
    scenario_lesson_example(&sc);
    sc.attention = ATTENTION_FLASH;
    sc.pp = 4;
    sc.vpp = 2;
    sc.global_batch = 32;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &c);
    assert_close(c.micro_batches, 4, 0);
    assert_close(c.tokens, 4 * 8 * 2048.0, 0);
    /* The GEMM FLOPs of a micro-batch: 2 * 16384 * 2048 * 12h a layer (QKV, out, fc1, fc2),
     * 2 * 16384 * 2048 * 50257 the output layer; the last stage's 6 layers and the output
     * layer over a quarter of all of them. */
    double layer = 2 * 16384.0 * 2048 * 24576, out = 2 * 16384.0 * 2048 * 50257;
    assert_close(c.stage_factor, (6 * layer + out) * 4 / (24 * layer + out), 1e-12);
    /* Each of the 4 micro-batches crosses the stage's boundaries v = 2 times, forward and
     * backward: 2 s b h bytes each; the stages are 1 GPU apart, inside a node of 8. */
    double link = 300e9 * 0.7;
    assert_close(c.pp_s, 4 * 2 * 2 * (2 * 16384.0 * 2048 / link + lat(1)), 1e-12);
    double work = c.compute_s + c.recompute_s + c.tp_s + c.cp_s + c.ep_s + c.pp_s;
    assert_close(c.bubble_s, 3.0 / (4 * 2) * work, 1e-12);
    assert_close(c.overhead_s, c.bubble_s + c.pp_s, 1e-15);
    assert_close(c.total_s, work + c.bubble_s, 1e-15);
    /* dp = 4 and tp = 2 put the stages 8 GPUs apart: the network between them. */
    sc.dp = 4;
    sc.tp = 2;
    sc.global_batch = 128;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &c);
    assert_close(c.pp_s, 4 * 2 * 2 * (2 * 16384.0 * 2048 / 2 / (25e9 * 0.85) + lat(1)), 1e-12);
}

/* The schedules' bubbles (12.7, 6.4; DeepSeek-V3 report, Table 2) on 4 stages of m = 8: with
 * F + B a micro-batch's work, B its backward and W its weight gradients (the forward's GEMMs):
 * ZB1P (p - 1)(F + B - 2W), DualPipe (p/2 - 1)(F + B + B - 3W); the rest of the step unchanged. */
static void test_schedule_bubbles(void **state)
{
    (void)state;
    struct scenario sc;
    struct terms t;
    struct cost one, zb, dual;
    scenario_lesson_example(&sc);
    sc.attention = ATTENTION_FLASH;
    sc.pp = 4;
    sc.global_batch = 64;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &one);
    sc.schedule = SCHEDULE_ZB1P;
    cost_step(&sc, &t, &zb);
    sc.schedule = SCHEDULE_DUALPIPE; /* its GPUs hold two stages: their own terms */
    struct terms td;
    assert_int_equal(model_peak(&sc, &td), MODEL_OK);
    cost_step(&sc, &td, &dual);
    double work = one.compute_s + one.recompute_s + one.tp_s + one.cp_s + one.ep_s + one.pp_s;
    double f_b = work / 8, w = one.gemm_s * (2.0 / 6.0) / 8; /* 2 of the 6 Psi FLOPs a token */
    assert_close(one.bubble_s, 3 * f_b, 1e-12);
    assert_close(zb.bubble_s, 3 * (f_b - 2 * w), 1e-12);
    double dual_work =
        dual.compute_s + dual.recompute_s + dual.tp_s + dual.cp_s + dual.ep_s + dual.pp_s;
    double dual_w = dual.gemm_s * (2.0 / 6.0) / 8;
    assert_close(dual.bubble_s, 1 * (dual_work / 8 + dual.mb_bwd_s - 3 * dual_w), 1e-12);
    /* Each micro-batch runs through one of the GPU's two stages (6 + 6 of the 24 layers): about
     * one stage's work, as under 1F1B, not two (GPU 0 has half of the output layer's GEMMs, 1F1B's
     * last stage all of them: 0.89 of it here). */
    assert_true(dual.compute_s > 0.8 * one.compute_s && dual.compute_s < 1.1 * one.compute_s);
    assert_true(zb.bubble_s < one.bubble_s && dual.bubble_s < zb.bubble_s);
    assert_close(zb.total_s - zb.bubble_s, one.total_s - one.bubble_s, 1e-12);
}

/* Llama 3.1 8B at 8,192 tokens, one sequence, with FlashAttention on one H100. */
static void llama31_8b_h100(struct scenario *sc)
{
    scenario_lesson_example(sc);
    sc->arch = ARCH_LLAMA;
    sc->tied = sc->dropout = false;
    sc->layers = 32;
    sc->hidden = 4096;
    sc->heads = 32;
    sc->kv_heads = 8;
    sc->ffn = 14336;
    sc->vocab = 128256;
    sc->seq = 8192;
    sc->micro_batch = sc->global_batch = 1;
    sc->attention = ATTENTION_FLASH;
    sc->speed = (struct gpu_speed){989, 3.35, 450, 64, 1979};
    snprintf(sc->gpu_preset, sizeof sc->gpu_preset, "H100-80GB");
}

/* FP8 (12.1): the layers' GEMMs, q = 6,979,321,856 / 8,030,261,248 of Llama 3.1 8B's Psi, at
 * the FP8 rate (H100: 1979 TFLOP/s at its measured 0.709 instead of bf16's 0.803), the rest at
 * bf16's; the FLOPs do not change. Without an FP8 rate, twice bf16's. */
static void test_fp8(void **state)
{
    (void)state;
    struct scenario sc;
    llama31_8b_h100(&sc);
    struct terms t;
    struct cost bf, c;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &bf);
    assert_true(bf.fp8_share == 0 && bf.fp8_tflops == 0);
    sc.fp8 = FP8_TENSOR;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &c);
    double q = 6979321856.0 / 8030261248.0;
    assert_close(c.fp8_share, q, 1e-12);
    assert_close(c.fp8_tflops, 1979, 0);
    assert_close(c.flops, bf.flops, 1e-15);
    assert_close(c.gemm_s / bf.gemm_s, (1 - q) + q * 989 * 0.803 / (1979 * 0.709), 1e-12);
    sc.speed.fp8_tflops = 0; /* unknown: twice the bf16 rate */
    cost_step(&sc, &t, &c);
    assert_close(c.fp8_tflops, 2 * 989, 0);
    assert_close(c.gemm_s / bf.gemm_s, (1 - q) + q * 0.803 / (2 * 0.709), 1e-12);
}

/* The FP8 casts (12.1): each FP8 GEMM's input cast before the forward's GEMM and its output's
 * gradient before the backward's, 2 + 1 bytes an element and 1 more for the transposed copy of a
 * Hopper GPU. Llama 3.1 8B (tp 1, 8,192 tokens): a layer's GEMM inputs h, h, a d_h, f = 26,624
 * elements a token (QKV, up and gate share one), outputs (a + 2g) d_h, h, 2f, h = 43,008. */
static void test_fp8_casts(void **state)
{
    (void)state;
    struct scenario sc;
    llama31_8b_h100(&sc);
    struct terms t;
    struct cost bf, c;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &bf);
    assert_true(bf.fp8_cast_s == 0);
    sc.fp8 = FP8_TENSOR;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &c);
    double hbm = 3.35e12 * 0.84, elems = 8192.0 * 32 * (26624 + 43008);
    assert_close(c.fp8_cast_s, 4 * elems / hbm, 1e-12);
    assert_close(c.memory_s - bf.memory_s, c.fp8_cast_s, 1e-12);
    sc.fp8_one_copy = true; /* Blackwell: no transposed copy */
    cost_step(&sc, &t, &c);
    assert_close(c.fp8_cast_s, 3 * elems / hbm, 1e-12);
}

/* DualPipe's all-to-alls (12.4, 12.7): their kernels keep 20 of the 132 SMs, so the GEMMs and the
 * attention core they overlap run at 112/132 of the rate; the memory's rate is kept. Only with
 * expert parallelism (the all-to-alls to overlap) and only under DualPipe. */
static void test_dualpipe_sms(void **state)
{
    (void)state;
    struct scenario sc;
    struct terms t;
    struct cost one, dual, dual_ep;
    small_moe_h100(&sc);
    sc.pp = 4;
    sc.dp = 4;
    sc.global_batch = 64;
    sc.ep = 4;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &one);
    assert_true(one.comm_sm_share == 0);
    sc.schedule = SCHEDULE_DUALPIPE;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &dual_ep);
    assert_close(dual_ep.comm_sm_share, 20.0 / 132, 1e-15);
    sc.ep = 1;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &dual);
    assert_true(dual.comm_sm_share == 0);
    /* The attention core does not depend on ep: its time grows by 132/112 exactly. */
    assert_close(dual_ep.attention_s, dual.attention_s * 132.0 / 112.0, 1e-12);
}

/* DeepSeek's training profile (deepseek-ai/profile-data, train.json; doc/model.md 12.8): a
 * DualPipe pair of a forward and a backward chunk of 4 MoE layers of DeepSeek-V3, 4,096 tokens,
 * EP 64, TP 1, FP8, on H800s, takes 128.5 ms of GPU time from its first kernel to its last
 * (balanced routing, no pipeline sends). memfit's forward and backward of one micro-batch through
 * 4 such layers under DualPipe (8 layers on pp 2: half of each GPU's two stages), 110 ms, is held
 * within 20% of it, as a run the model was not fitted to (90 ms, 0.70, before the SMs the
 * all-to-alls keep and the FP8 casts were priced). */
static void test_deepseek_profile_pair(void **state)
{
    (void)state;
    struct scenario sc;
    deepseek_v3(&sc);
    sc.layers = 8;
    sc.vocab = 128; /* the output layer left out: the profile's chunks are MoE layers */
    sc.dense_layers = 0;
    sc.attention = ATTENTION_FLASH;
    sc.recompute = RECOMPUTE_SELECTIVE;
    sc.recompute_modules = RECOMPUTE_LAYERNORM | RECOMPUTE_MLA_UP_PROJ;
    sc.fp8 = FP8_TENSOR;
    sc.pp = 2;
    sc.schedule = SCHEDULE_DUALPIPE;
    sc.dp = sc.ep = 64;
    sc.zero = 1;
    sc.moe_max_nodes = 4;
    sc.gpus_per_node = 8;
    sc.global_batch = 8 * 64; /* m = 8 micro-batches */
    sc.speed = (struct gpu_speed){989, 3.35, 200, 64, 1979};
    snprintf(sc.gpu_preset, sizeof sc.gpu_preset, "H800-80GB");
    struct terms t;
    struct cost c;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &c);
    assert_close(c.micro_batches, 8, 0);
    double pair = (c.compute_s + c.recompute_s) / c.micro_batches;
    assert_true(pair > 0.80 * 0.1285 && pair < 1.20 * 0.1285);
    /* The all-to-alls of the pair hide under it (DualPipe). */
    assert_true(c.ep_s == 0);
}

/* Multi-token prediction (doc/model.md 2.6, 12.1): DeepSeek-V3 with one module, on H800s (dp =
 * ep = 64, 8 micro-batches of 4,096 tokens). Without a pipeline the module's active parameters
 * and the output layer it runs again add 6 FLOPs a token each, and time; on 8 stages the last,
 * which holds the module, becomes the slowest, and the stage factor grows. */
static void test_mtp_cost(void **state)
{
    (void)state;
    struct scenario sc;
    deepseek_v3(&sc);
    sc.attention = ATTENTION_FLASH;
    sc.dp = sc.ep = 64;
    sc.global_batch = 8 * 64;
    sc.gpus_per_node = 8;
    sc.speed = (struct gpu_speed){989, 3.35, 200, 64, 1979};
    snprintf(sc.gpu_preset, sizeof sc.gpu_preset, "H800-80GB");
    struct terms t0, t1;
    struct cost c0, c1;
    assert_int_equal(model_peak(&sc, &t0), MODEL_OK);
    cost_step(&sc, &t0, &c0);
    sc.mtp_layers = 1;
    assert_int_equal(model_peak(&sc, &t1), MODEL_OK);
    cost_step(&sc, &t1, &c1);
    double module = (double)(t1.active_params - t0.active_params) + 129280.0 * 7168;
    assert_close(c1.flops - c0.flops, 6 * module * c0.tokens, 1e-9);
    assert_true(c1.total_s > c0.total_s && c1.gemm_s > c0.gemm_s);
    sc.pp = 8;
    sc.dp = 8;
    sc.global_batch = 8 * 8;
    sc.mtp_layers = 0;
    assert_int_equal(model_peak(&sc, &t0), MODEL_OK);
    cost_step(&sc, &t0, &c0);
    sc.mtp_layers = 1;
    assert_int_equal(model_peak(&sc, &t1), MODEL_OK);
    cost_step(&sc, &t1, &c1);
    assert_true(c1.stage_factor > c0.stage_factor && c1.total_s > c0.total_s);
}

/* Optimizer offload (12.5) with ZeRO-1 over dp = 2 (FlashAttention: the GPU's memory holds it):
 * (2 + 2) bytes of the GPU's Psi / 2 over 64 GB/s, the CPU's Adam, the host's memory. */
static void test_offload(void **state)
{
    (void)state;
    struct scenario sc;
    struct terms t;
    struct cost c;
    scenario_lesson_example(&sc);
    sc.speed = (struct gpu_speed){989, 3.35, 450, 64, 1979};
    sc.dp = 2;
    sc.zero = 1;
    sc.global_batch = 16;
    sc.attention = ATTENTION_FLASH;
    sc.offload = OFFLOAD_OPTIMIZER;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &c);
    /* Each GPU's half of Psi: 4 bytes a parameter over PCIe, and the CPU's Adam: both GPUs'
     * halves (one node), 28 bytes a parameter at 0.84 of the node's 409.6 GB/s. */
    double shard = 1311528960.0 / 2;
    assert_close(c.offload_s, 4 * shard / 64e9 + 2 * shard * 28 / (409.6e9 * 0.84), 1e-12);
    assert_close(c.overhead_s, c.offload_s, 1e-15);
    /* Host memory (doc/model.md 12.5): a GPU's shard of the fp32 master weights and moments (12
     * bytes) and the pinned gradient and weight buffers (4), for the node's 2 GPUs; checked
     * against the GPU preset's host_mem_gb when there is one. */
    assert_int_equal(t.host_bytes, 16 * 1311528960ull / 2);
    assert_int_equal(t.host_node_bytes, 16 * 1311528960ull);
    assert_true(t.host_fits && t.fits);
    sc.host_mem_bytes = 16 * 1311528960ull; /* exactly enough */
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_true(t.host_fits && t.fits);
    sc.host_mem_bytes--;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_true(!t.host_fits && !t.fits && t.peak_bytes <= t.budget_bytes);
    /* Without the offload the host holds nothing, whatever its memory. */
    sc.offload = OFFLOAD_NONE;
    sc.host_mem_bytes = 1;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_true(t.host_bytes == 0 && t.host_fits);
}

/* Every row within 8% of the measurement, 3.1% on average; the worst are the smallest and the
 * largest model (doc/model.md 12.8 says why). The model's numbers are pinned to 0.01% so that the
 * table of section 12.8 stays the code's. */
static void test_table1_calibration(void **state)
{
    (void)state;
    double sum = 0, worst = 0;
    size_t n = sizeof table1 / sizeof *table1;
    for (size_t i = 0; i < n; i++) {
        double pred = table1_predicted(&table1[i]);
        double gap = (pred - table1[i].tflops) / table1[i].tflops;
        assert_close(pred, table1[i].model, 1e-4);
        assert_true(fabs(gap) <= 0.08);
        sum += fabs(gap);
        worst = fabs(gap) > worst ? fabs(gap) : worst;
    }
    /* As the report's notes say them (cost.h). */
    assert_true(fabs(sum / (double)n - COST_TABLE1_MEAN_GAP) < 0.0005);
    assert_true(fabs(worst - COST_TABLE1_WORST_GAP) < 0.0005);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_table),
        cmocka_unit_test(test_lesson_example),
        cmocka_unit_test(test_tensor_context_expert),
        cmocka_unit_test(test_data_parallel),
        cmocka_unit_test(test_pipeline),
        cmocka_unit_test(test_schedule_bubbles),
        cmocka_unit_test(test_fp8),
        cmocka_unit_test(test_fp8_casts),
        cmocka_unit_test(test_dualpipe_sms),
        cmocka_unit_test(test_deepseek_profile_pair),
        cmocka_unit_test(test_mtp_cost),
        cmocka_unit_test(test_offload),
        cmocka_unit_test(test_table1_calibration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
