/*
 * Tests of layer.c (the inventory of a layer) and of the parameter counts model_params.c sums from
 * it: every published total and active count of doc/model.md section 2.5 comes out exactly, the
 * inventory's sums are the model's totals, and the states of routed experts are divided by
 * etp * ep and sharded over the expert data-parallel size.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "model/layer.h"
#include "model/model.h"

/* A llama-style model on one GPU; the caller sets its sizes. */
static struct scenario llama(uint64_t layers, uint64_t hidden, uint64_t heads, uint64_t kv_heads,
                             uint64_t ffn, uint64_t vocab)
{
    struct scenario sc;
    scenario_lesson_example(&sc);
    sc.arch = ARCH_LLAMA;
    sc.dropout = sc.tied = false;
    sc.layers = layers;
    sc.hidden = hidden;
    sc.heads = heads;
    sc.kv_heads = kv_heads;
    sc.ffn = ffn;
    sc.vocab = vocab;
    sc.seq = 4096;
    sc.micro_batch = 1;
    return sc;
}

static struct scenario mixtral_8x7b(void)
{
    struct scenario sc = llama(32, 4096, 32, 8, 14336, 32000);
    sc.experts = 8;
    sc.top_k = 2;
    sc.expert_ffn = 14336;
    return sc;
}

static struct scenario deepseek_v3(void)
{
    struct scenario sc = llama(61, 7168, 128, 128, 18432, 129280);
    sc.dense_layers = 3;
    sc.experts = 256;
    sc.top_k = 8;
    sc.expert_ffn = 2048;
    sc.shared_ffn = 2048;
    sc.router_bias = ROUTER_BIAS_SCORE;
    sc.q_lora_rank = 1536;
    sc.kv_lora_rank = 512;
    sc.qk_nope_dim = 128;
    sc.qk_rope_dim = 64;
    sc.v_head_dim = 128;
    return sc;
}

static void counts(const struct scenario *sc, uint64_t total, uint64_t active)
{
    uint64_t n;
    assert_int_equal(model_params(sc, &n), MODEL_OK);
    assert_int_equal(n, total);
    assert_int_equal(model_active_params(sc, &n), MODEL_OK);
    assert_int_equal(n, active);
    struct terms t;
    assert_int_equal(model_peak(sc, &t), MODEL_OK);
    assert_int_equal(t.params, total);
    assert_int_equal(t.active_params, active);
}

/* Dense models with the architecture columns of section 2 (published counts of each model). */
static void test_dense_published_counts(void **state)
{
    (void)state;
    /* Llama 3.1 8B and 405B: GQA with 8 KV heads, untied. */
    struct scenario sc = llama(32, 4096, 32, 8, 14336, 128256);
    counts(&sc, 8030261248ull, 8030261248ull);
    sc = llama(126, 16384, 128, 8, 53248, 128256);
    counts(&sc, 405853388800ull, 405853388800ull);
    /* Qwen2.5-7B: biases on Q, K and V. */
    sc = llama(28, 3584, 28, 4, 18944, 152064);
    sc.qkv_bias = QKV_BIAS_QKV;
    counts(&sc, 7615616512ull, 7615616512ull);
    /* Gemma 2 9B: head_dim 256 with h / a = 224, four norms per layer, tied. */
    sc = llama(42, 3584, 16, 8, 14336, 256000);
    sc.head_dim = 256;
    sc.layer_norms = 4;
    sc.tied = true;
    counts(&sc, 9241705984ull, 9241705984ull);
}

static void test_moe_published_counts(void **state)
{
    (void)state;
    struct scenario sc = mixtral_8x7b();
    counts(&sc, 46702792704ull, 12879925248ull);
    /* Qwen3-30B-A3B: q/k norms, head_dim 128 with h / a = 64. */
    sc = llama(48, 2048, 32, 4, 6144, 151936);
    sc.head_dim = 128;
    sc.qk_norm = QK_NORM_HEAD;
    sc.experts = 128;
    sc.top_k = 8;
    sc.expert_ffn = 768;
    counts(&sc, 30532122624ull, 3353032704ull);
    /* Qwen2-57B-A14B: shared experts of 20480 with a sigmoid gate, qkv biases. */
    sc = llama(28, 3584, 28, 4, 18944, 151936);
    sc.qkv_bias = QKV_BIAS_QKV;
    sc.experts = 64;
    sc.top_k = 8;
    sc.expert_ffn = 2560;
    sc.shared_ffn = 20480;
    sc.shared_gate = true;
    counts(&sc, 57408658944ull, 14249270784ull);
    /* DeepSeek-V3 without its multi-token-prediction module. */
    sc = deepseek_v3();
    counts(&sc, 671026419200ull, 37552297472ull);
}

/* DeepSeek-V3's latent attention: 187,107,328 parameters per layer (Megatron-LM's count). */
static void test_mla_attention_params(void **state)
{
    (void)state;
    struct scenario sc = deepseek_v3();
    struct layer_inventory inv;
    assert_true(layer_inventory(&sc, LAYER_DENSE, &inv));
    uint64_t attn, small, mlp, all;
    assert_true(layer_params_of(&inv, LAYER_PART_ATTENTION, &attn));
    assert_true(layer_params_of(&inv, LAYER_PART_SMALL, &small));
    assert_true(layer_params_of(&inv, LAYER_PART_MLP, &mlp));
    assert_true(layer_params_of(&inv, LAYER_PARTS, &all));
    /* The q and kv norms (1536 + 512) are small parts, with the layer's two norms (2h). */
    assert_int_equal(attn + 1536 + 512, 187107328ull);
    assert_int_equal(small, 1536 + 512 + 2 * 7168);
    assert_int_equal(mlp, 3ull * 7168 * 18432);
    assert_int_equal(all, attn + small + mlp);
}

/* The parts of an MoE layer: routed experts, shared experts and gate, router and its bias. */
static void test_moe_layer_parts(void **state)
{
    (void)state;
    struct scenario sc = deepseek_v3();
    struct layer_inventory inv;
    assert_true(layer_inventory(&sc, LAYER_MOE, &inv));
    uint64_t n;
    assert_true(layer_params_of(&inv, LAYER_PART_EXPERTS, &n));
    assert_int_equal(n, 3ull * 7168 * 2048 * 256);
    assert_true(layer_params_of(&inv, LAYER_PART_SHARED, &n));
    assert_int_equal(n, 3ull * 7168 * 2048);
    assert_true(layer_params_of(&inv, LAYER_PART_ROUTER, &n));
    assert_int_equal(n, 7168ull * 256 + 256);
    assert_true(layer_params_of(&inv, LAYER_PART_MLP, &n));
    assert_int_equal(n, 0);
}

/* The inventory's sums are the model's: parameters and one layer's activations. */
static void test_inventory_sums_are_the_model(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    struct layer_inventory inv;
    assert_true(layer_inventory(&sc, LAYER_DENSE, &inv));
    uint64_t params, layer;
    assert_true(layer_params_of(&inv, LAYER_PARTS, &params));
    assert_int_equal(model_layer_params(&sc, &layer), MODEL_OK);
    assert_int_equal(params, layer);
    assert_int_equal(params, 12ull * 2048 * 2048 + 13 * 2048);
    /* Kept bytes: sum of every entry at s = 2048, b = 8 is A = 34 sbh + 5 as^2 b. */
    uint64_t s = sc.seq, b = sc.micro_batch, sum = 0;
    for (size_t i = 0; i < inv.n_kept; i++) {
        const struct layer_tensor *t = &inv.kept[i];
        uint64_t unit = t->extent == LAYER_PER_TOKEN      ? s * b
                        : t->extent == LAYER_PER_HEAD_ROW ? sc.heads * s * b
                                                          : sc.heads * s * s * b;
        sum += t->per * unit;
    }
    struct model_layer_act a;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(sum, a.total);
    assert_int_equal(sum, 34 * s * b * 2048 + 5 * sc.heads * s * s * b);
}

/* Selective recomputation marks the core, and only the core, as recomputed. */
static void test_selective_marks_the_core(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    sc.recompute = RECOMPUTE_SELECTIVE;
    struct layer_inventory inv;
    assert_true(layer_inventory(&sc, LAYER_DENSE, &inv));
    size_t recomputed = 0;
    for (size_t i = 0; i < inv.n_kept; i++) {
        recomputed += inv.kept[i].recomputed;
        assert_true(inv.kept[i].recomputed == (inv.kept[i].extent == LAYER_PER_HEAD_SCORE));
    }
    assert_int_equal(recomputed, 3); /* softmax output, dropout mask and output */
}

/* One layer's activations under sc with finetune, targets and rank set (lora_rank 0: frozen). */
static struct model_layer_act tuned(struct scenario sc, enum finetune ft, enum lora_targets tg,
                                    uint64_t rank)
{
    if (rank == 0) {
        sc.precision = PRECISION_FROZEN;
    } else {
        sc.finetune = ft;
        sc.lora_targets = tg;
        sc.lora_rank = rank;
    }
    struct model_layer_act a;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    return a;
}

/*
 * LoRA (doc/model.md 4.9), Llama-3.1-8B's layer (h = 4096, a = 32, 8 KV heads: 4/g = 1,
 * f = 14336), s = 4096, b = 1, flash, r = 16. Full training: 13 sbh + 8 sbf + 4asb. The frozen
 * base drops the norm outputs and the down input: 9 sbh + 6 sbf + 4asb (flash keeps the
 * projection input); q, v adapters keep the norm 1 output and x A twice: + 2 sbh + 4 r sb;
 * adapters on all seven linears: full training + 14 r sb. QLoRA keeps what LoRA keeps.
 */
static void test_lora_llama_layer(void **state)
{
    (void)state;
    struct scenario sc = llama(32, 4096, 32, 8, 14336, 128256);
    sc.attention = ATTENTION_FLASH;
    uint64_t sb = 4096, sbh = sb * 4096, sbf = sb * 14336, core = 4 * 32 * sb;
    struct model_layer_act a;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(a.total, 13 * sbh + 8 * sbf + core);
    assert_int_equal(tuned(sc, FINETUNE_FULL, LORA_QV, 0).total, 9 * sbh + 6 * sbf + core);
    assert_int_equal(tuned(sc, FINETUNE_LORA, LORA_QV, 16).total,
                     11 * sbh + 6 * sbf + core + 4 * 16 * sb);
    assert_int_equal(tuned(sc, FINETUNE_QLORA, LORA_QV, 16).total,
                     11 * sbh + 6 * sbf + core + 4 * 16 * sb);
    assert_int_equal(tuned(sc, FINETUNE_LORA, LORA_ALL_LINEAR, 16).total,
                     13 * sbh + 8 * sbf + core + 14 * 16 * sb);
    /* Plain attention: the projection input goes too without an adapter on o. */
    sc.attention = ATTENTION_PLAIN;
    assert_int_equal(tuned(sc, FINETUNE_FULL, LORA_QV, 0).total,
                     7 * sbh + 6 * sbf + 2ull * 32 * 4096 * sb);
    /* tp = 8: the norm inputs and outputs and the adapters' x A stay whole. */
    sc.tp = 8;
    struct model_layer_act t8 = tuned(sc, FINETUNE_LORA, LORA_ALL_LINEAR, 16);
    assert_int_equal(t8.whole, 8 * sbh + 14 * 16 * sb);
    assert_int_equal(tuned(sc, FINETUNE_LORA, LORA_QV, 16).whole, 6 * sbh + 4 * 16 * sb);
}

/* A GPT layer (the lesson's: dropout, plain attention, f = 4h) keeps 34 sbh + 5as^2b; frozen,
 * 20 sbh + 5as^2b (no QKV, projection, fc1 or fc2 input: -14 sbh); q, v adapters: + 2 sbh + 4 r
 * sb; all six linears: 34 sbh + 12 r sb + 5as^2b. The inventory lists the x A entries whole. */
static void test_lora_gpt_layer(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    uint64_t sb = sc.seq * sc.micro_batch, sbh = sb * 2048, core = 5 * 16 * sc.seq * sb;
    assert_int_equal(tuned(sc, FINETUNE_FULL, LORA_QV, 0).total, 20 * sbh + core);
    assert_int_equal(tuned(sc, FINETUNE_LORA, LORA_QV, 8).total, 22 * sbh + core + 4 * 8 * sb);
    assert_int_equal(tuned(sc, FINETUNE_LORA, LORA_ALL_LINEAR, 64).total,
                     34 * sbh + core + 12 * 64 * sb);
    sc.finetune = FINETUNE_LORA;
    sc.lora_targets = LORA_ALL_LINEAR;
    sc.lora_rank = 64;
    struct layer_inventory inv;
    assert_true(layer_inventory(&sc, LAYER_DENSE, &inv));
    uint64_t adapters = 0;
    for (size_t i = 0; i < inv.n_kept; i++)
        if (strncmp(inv.kept[i].name, "LoRA", 4) == 0) {
            assert_int_equal(inv.kept[i].split, LAYER_WHOLE);
            adapters += inv.kept[i].per;
        }
    assert_int_equal(adapters, 12 * 64);
}

/* The bytes a unit of kept tensor `name` of sc's layer of `kind` (0 when there is none). */
static uint64_t kept_per(const struct scenario *sc, enum layer_kind kind, const char *name)
{
    struct layer_inventory inv;
    assert_true(layer_inventory(sc, kind, &inv));
    for (size_t i = 0; i < inv.n_kept; i++)
        if (strcmp(inv.kept[i].name, name) == 0)
            return inv.kept[i].per;
    return 0;
}

/*
 * FP8 (doc/model.md 4.10), the lesson's GPT layer (h = 2048, a = 16, s = 2048, b = 8, dropout),
 * flash: 34 sbh + 4asb in bf16, 29 sbh + 4asb in FP8 - the QKV input 2 -> 1, the projection input
 * 2 + 1 (flash keeps its output), the fc1 input 2 -> 1, the fc2 input 8 -> 4:
 * 29 * 33,554,432 + 1,048,576 = 974,127,104 bytes. Plain attention: the projection input 2 -> 1,
 * 27 sbh + 5as^2b. tp = 8: whole 10 -> 8 sbh (the norm outputs in FP8).
 */
static void test_fp8_gpt_layer(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    sc.attention = ATTENTION_FLASH;
    uint64_t sb = sc.seq * sc.micro_batch, sbh = sb * 2048, flash = 4 * 16 * sb;
    struct model_layer_act a;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(a.total, 34 * sbh + flash);
    sc.fp8 = FP8_TENSOR;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(a.total, 29 * sbh + flash);
    assert_int_equal(a.total, 974127104);
    /* Tensor by tensor, bytes per token: FP8 copies of 1 byte an element. */
    assert_int_equal(kept_per(&sc, LAYER_DENSE, "QKV input"), 0);
    assert_int_equal(kept_per(&sc, LAYER_DENSE, "QKV input (FP8)"), 2048);
    assert_int_equal(kept_per(&sc, LAYER_DENSE, "projection input"), 2 * 2048);
    assert_int_equal(kept_per(&sc, LAYER_DENSE, "projection input (FP8)"), 2048);
    assert_int_equal(kept_per(&sc, LAYER_DENSE, "fc1 input (FP8)"), 2048);
    assert_int_equal(kept_per(&sc, LAYER_DENSE, "GeLU input"), 2 * 8192);
    assert_int_equal(kept_per(&sc, LAYER_DENSE, "fc2 input (FP8)"), 8192);
    /* The per-tensor and MXFP8 recipes keep the same inputs. */
    sc.fp8 = FP8_MXFP8;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(a.total, 29 * sbh + flash);
    sc.attention = ATTENTION_PLAIN;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(a.total, 27 * sbh + 5 * 16 * sc.seq * sb);
    assert_int_equal(kept_per(&sc, LAYER_DENSE, "projection input"), 0);
    sc.attention = ATTENTION_FLASH;
    sc.tp = 8;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(a.whole, 8 * sbh);
    assert_int_equal(a.total, 8 * sbh + (21 * sbh + flash) / 8);
    /* Under --peak step with fp32 activations an FP8 copy stays 1 byte an element. */
    sc.tp = 1;
    sc.peak = PEAK_STEP;
    sc.precision = PRECISION_FP32;
    assert_int_equal(kept_per(&sc, LAYER_DENSE, "QKV input (FP8)"), 2048);
    assert_int_equal(kept_per(&sc, LAYER_DENSE, "projection input"), 4 * 2048);
}

/*
 * FP8 (doc/model.md 4.10), Llama-3.1-8B's layer (h = 4096, 32 heads, 8 KV heads: 4/g = 1,
 * f = 14336), s = 4096, b = 1, flash: (12 + 4/g) sbh + 8 sbf + 4asb in bf16, (11 + 4/g) sbh +
 * 7 sbf + 4asb in FP8 - the norm 1 output 2 -> 1, the projection input 2 + 1, the norm 2 output
 * 2 -> 1, silu(gate) x up 2f -> f: 12 * 16,777,216 + 7 * 58,720,256 + 524,288 = 612,892,672
 * bytes. Plain attention, the projection input 2 -> 1: (9 + 4/g) sbh + 7 sbf + 2as^2b.
 */
static void test_fp8_llama_layer(void **state)
{
    (void)state;
    struct scenario sc = llama(32, 4096, 32, 8, 14336, 128256);
    sc.attention = ATTENTION_FLASH;
    uint64_t sb = 4096, sbh = sb * 4096, sbf = sb * 14336, flash = 4 * 32 * sb;
    struct model_layer_act a;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(a.total, 13 * sbh + 8 * sbf + flash);
    sc.fp8 = FP8_TENSOR;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(a.total, 12 * sbh + 7 * sbf + flash);
    assert_int_equal(a.total, 612892672);
    assert_int_equal(kept_per(&sc, LAYER_DENSE, "norm 1 output (FP8)"), 4096);
    assert_int_equal(kept_per(&sc, LAYER_DENSE, "norm 2 output (FP8)"), 4096);
    assert_int_equal(kept_per(&sc, LAYER_DENSE, "silu(gate) \xc3\x97 up (FP8)"), 14336);
    assert_int_equal(kept_per(&sc, LAYER_DENSE, "silu(gate)"), 2 * 14336);
    sc.attention = ATTENTION_PLAIN;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(a.total, 10 * sbh + 7 * sbf + 2ull * 32 * 4096 * sb);
}

/*
 * FP8 in an MoE layer and in latent attention (doc/model.md 4.10): a routed row's gathered input
 * 2h -> h and its SwiGLU 8 f_e -> 7 f_e; the norm 2 output stays bf16 for the router, and only
 * shared experts add its FP8 copy (h, whole) with their SwiGLU 8 f_s -> 7 f_s. MLA: the norm 1,
 * q norm and kv norm outputs in FP8, the projection input 2 + 1 with flash.
 */
static void test_fp8_moe_and_mla(void **state)
{
    (void)state;
    struct scenario sc = mixtral_8x7b();
    sc.attention = ATTENTION_FLASH;
    struct layer_inventory bf, f8;
    assert_true(layer_inventory_sums(&sc, LAYER_MOE, &bf));
    sc.fp8 = FP8_TENSOR;
    assert_true(layer_inventory_sums(&sc, LAYER_MOE, &f8));
    uint64_t h = 4096, fe = 14336;
    assert_int_equal(f8.sums.rows_per_routed, bf.sums.rows_per_routed - h);
    assert_int_equal(f8.sums.width_per_routed, bf.sums.width_per_routed - fe);
    assert_int_equal(f8.sums.whole_per_token, bf.sums.whole_per_token - h); /* norm 1 output */
    assert_int_equal(f8.sums.split_per_token, bf.sums.split_per_token + 32 * 128); /* proj */
    assert_int_equal(kept_per(&sc, LAYER_MOE, "norm 2 output"), 2 * h);
    assert_int_equal(kept_per(&sc, LAYER_MOE, "norm 2 output (FP8)"), 0);
    /* DeepSeek-V3: shared experts, MLA (h = 7168, r_q = 1536, r_kv = 512, a d_v = 16384). */
    sc = deepseek_v3();
    sc.attention = ATTENTION_FLASH;
    assert_true(layer_inventory_sums(&sc, LAYER_MOE, &bf));
    sc.fp8 = FP8_TENSOR;
    assert_true(layer_inventory_sums(&sc, LAYER_MOE, &f8));
    h = 7168;
    uint64_t fs = 2048, rq = 1536, rkv = 512, proj = 128 * 128;
    /* whole: norm 1 output - h, q norm output - r_q, kv norm output - r_kv, norm 2 copy + h */
    assert_int_equal(f8.sums.whole_per_token, bf.sums.whole_per_token - rq - rkv);
    /* split: the projection input's copy, the shared product 2 f_s -> f_s */
    assert_int_equal(f8.sums.split_per_token, bf.sums.split_per_token + proj - fs);
    assert_int_equal(kept_per(&sc, LAYER_MOE, "norm 2 output (FP8)"), h);
    assert_int_equal(kept_per(&sc, LAYER_MOE, "q norm output (FP8)"), rq);
    assert_int_equal(kept_per(&sc, LAYER_MOE, "kv norm output (FP8)"), rkv);
    /* A dense layer of it: the product of its SwiGLU too, f = 18432. */
    assert_true(layer_inventory_sums(&sc, LAYER_DENSE, &f8));
    sc.fp8 = FP8_NONE;
    assert_true(layer_inventory_sums(&sc, LAYER_DENSE, &bf));
    assert_int_equal(f8.sums.whole_per_token, bf.sums.whole_per_token - h - rq - rkv - h);
    assert_int_equal(f8.sums.split_per_token, bf.sums.split_per_token + proj - 18432);
}

/* The GEMM weights of FP8 training (doc/model.md 3.7): attention, MLP and experts, not the
 * norms, biases, router or shared gate. */
static void test_fp8_gemm_params(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    uint64_t gemm, routed;
    assert_true(layer_gemm_params(&sc, LAYER_DENSE, &gemm, &routed));
    assert_int_equal(gemm, 12ull * 2048 * 2048); /* 12h^2 of 12h^2 + 13h */
    assert_int_equal(routed, 0);
    sc = mixtral_8x7b();
    sc.shared_ffn = 1024;
    sc.shared_gate = true;
    sc.router_bias = ROUTER_BIAS_SCORE;
    assert_true(layer_gemm_params(&sc, LAYER_MOE, &gemm, &routed));
    uint64_t attn = 2ull * 4096 * 4096 + 2ull * 4096 * 1024;
    assert_int_equal(routed, 3ull * 4096 * 14336 * 8);
    assert_int_equal(gemm, attn + 3ull * 4096 * 1024 + routed);
}

/*
 * Routed experts are divided by etp * ep on a GPU and their states sharded by ZeRO over the
 * expert data-parallel size dp * cp * tp / (etp * ep); the dense states over dp (doc/model.md 3.2).
 */
static void test_expert_states_sharding(void **state)
{
    (void)state;
    struct scenario sc = mixtral_8x7b();
    sc.dp = 8;
    sc.tp = 2;
    sc.ep = 8;
    sc.etp = 1;
    sc.zero = 1;
    struct terms t;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    uint64_t routed_layer = 3ull * 4096 * 14336 * 8, per_gpu = routed_layer / 8;
    uint64_t edp = 8 * 2 / 8;
    assert_int_equal(t.stage[0].expert_params, 32 * per_gpu);
    /* 2 + 2 bytes of weights and gradients, 12 of optimizer states sharded over edp = 2. */
    assert_int_equal(t.expert_bytes, 32 * per_gpu * 4 + 32 * per_gpu * 12 / edp);
    uint64_t dense = t.stage[0].params - t.stage[0].expert_params;
    assert_int_equal(t.states_bytes, t.expert_bytes + dense * 4 + (dense * 12 + 7) / 8);
    /* A dense model has no expert states. */
    scenario_lesson_example(&sc);
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.expert_bytes, 0);
    assert_int_equal(t.active_params, t.params);
}

/* A stage of DeepSeek-V3 holds the dense layers first: with pp = 1 three dense and 58 MoE. */
static void test_layer_kinds_per_stage(void **state)
{
    (void)state;
    struct scenario sc = deepseek_v3();
    struct terms t;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.stage[0].pipe.layers[LAYER_DENSE], 3);
    assert_int_equal(t.stage[0].pipe.layers[LAYER_MOE], 58);
    sc.layers = 64; /* 4 stages of 16 */
    sc.pp = 4;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.stage[MODEL_STAGE_FIRST].pipe.layers[LAYER_DENSE], 3);
    assert_int_equal(t.stage[MODEL_STAGE_FIRST].pipe.layers[LAYER_MOE], 13);
    assert_int_equal(t.stage[MODEL_STAGE_LAST].pipe.layers[LAYER_DENSE], 0);
    assert_int_equal(t.stage[MODEL_STAGE_LAST].pipe.layers[LAYER_MOE], 16);
}

/* ---- per-module selective recomputation (doc/model.md 5.5) ---- */

/* The sums of sc's kept tensors of one kind with recompute=selective and the modules m. */
static struct layer_act_sums sums_with(struct scenario sc, enum layer_kind kind, unsigned m)
{
    struct layer_inventory inv;
    sc.recompute = RECOMPUTE_SELECTIVE;
    sc.recompute_modules = m;
    assert_true(layer_inventory(&sc, kind, &inv));
    return inv.sums;
}

/* Each module drops what it keeps beyond its input, tensor by tensor (per token, bf16): on the
 * lesson's GPT layer layernorm the QKV and fc1 inputs (2h each), mlp the GeLU and fc2 inputs
 * (2f each); on a Llama layer mlp the SwiGLU's 8f; on Mixtral's MoE layer moe_act the experts'
 * silu(gate) and product (4 f_e per routed row), moe everything but the norms; on DeepSeek-V3
 * mla_up_proj q, k (2 a (d_n + d_r) each) and the kv up output (2 a (d_n + d_v)),
 * shared_experts their SwiGLU (8 f_s). core_attn alone is the default. */
static void test_recompute_modules_drop_their_tensors(void **state)
{
    (void)state;
    struct scenario gpt;
    scenario_lesson_example(&gpt);
    uint64_t h = gpt.hidden, f = gpt.ffn;
    struct layer_act_sums base = sums_with(gpt, LAYER_DENSE, 0);
    struct layer_act_sums core = sums_with(gpt, LAYER_DENSE, RECOMPUTE_CORE_ATTN);
    assert_memory_equal(&base, &core, sizeof base);
    struct layer_act_sums norms = sums_with(gpt, LAYER_DENSE, RECOMPUTE_LAYERNORM);
    assert_int_equal(norms.whole_per_token, base.whole_per_token - 4 * h);
    assert_true(norms.attn_per_score > 0); /* the core is kept: core_attn is not on the list */
    struct layer_act_sums mlp = sums_with(gpt, LAYER_DENSE, RECOMPUTE_MLP);
    assert_int_equal(mlp.split_per_token, base.split_per_token - 4 * f);
    struct scenario l7 = llama(32, 4096, 32, 32, 11008, 32000);
    base = sums_with(l7, LAYER_DENSE, RECOMPUTE_CORE_ATTN);
    mlp = sums_with(l7, LAYER_DENSE, RECOMPUTE_CORE_ATTN | RECOMPUTE_MLP);
    assert_int_equal(mlp.split_per_token, base.split_per_token - 8 * 11008);
    norms = sums_with(l7, LAYER_DENSE, RECOMPUTE_CORE_ATTN | RECOMPUTE_LAYERNORM);
    assert_int_equal(norms.whole_per_token, base.whole_per_token - 4 * 4096);
    struct scenario mx = mixtral_8x7b();
    base = sums_with(mx, LAYER_MOE, RECOMPUTE_CORE_ATTN);
    struct layer_act_sums act = sums_with(mx, LAYER_MOE, RECOMPUTE_MOE_ACT);
    assert_int_equal(act.width_per_routed, base.width_per_routed - 4 * 14336);
    struct layer_act_sums moe = sums_with(mx, LAYER_MOE, RECOMPUTE_MOE);
    assert_int_equal(moe.width_per_routed, 0);
    assert_int_equal(moe.rows_per_routed, 0);
    assert_int_equal(moe.whole_per_token, base.whole_per_token - 4 * 8 - (12 * 2 + 4));
    struct scenario ds = deepseek_v3();
    base = sums_with(ds, LAYER_MOE, RECOMPUTE_CORE_ATTN);
    struct layer_act_sums up = sums_with(ds, LAYER_MOE, RECOMPUTE_MLA_UP_PROJ);
    assert_int_equal(up.split_per_token,
                     base.split_per_token - 2 * 2 * 128 * (128 + 64) - 2 * 128 * (128 + 128));
    struct layer_act_sums shared = sums_with(ds, LAYER_MOE, RECOMPUTE_SHARED_EXPERTS);
    assert_int_equal(shared.split_per_token, base.split_per_token - 8 * 2048);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_published_counts),
        cmocka_unit_test(test_recompute_modules_drop_their_tensors),
        cmocka_unit_test(test_moe_published_counts),
        cmocka_unit_test(test_mla_attention_params),
        cmocka_unit_test(test_moe_layer_parts),
        cmocka_unit_test(test_inventory_sums_are_the_model),
        cmocka_unit_test(test_selective_marks_the_core),
        cmocka_unit_test(test_lora_llama_layer),
        cmocka_unit_test(test_lora_gpt_layer),
        cmocka_unit_test(test_fp8_gpt_layer),
        cmocka_unit_test(test_fp8_llama_layer),
        cmocka_unit_test(test_fp8_moe_and_mla),
        cmocka_unit_test(test_fp8_gemm_params),
        cmocka_unit_test(test_expert_states_sharding),
        cmocka_unit_test(test_layer_kinds_per_stage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
