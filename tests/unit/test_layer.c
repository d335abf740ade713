/*
 * Tests of layer.c (the inventory of a layer) and of the parameter counts model.c sums from it:
 * every published total and active count of doc/model.md section 2.5 comes out exactly, the
 * inventory's sums are the model's totals, and the states of routed experts are divided by
 * etp * ep and sharded over the expert data-parallel size.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "layer.h"
#include "model.h"

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
    sc.router_bias = true;
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
    sc.qkv_bias = true;
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
    sc.qk_norm = true;
    sc.experts = 128;
    sc.top_k = 8;
    sc.expert_ffn = 768;
    counts(&sc, 30532122624ull, 3353032704ull);
    /* Qwen2-57B-A14B: shared experts of 20480 with a sigmoid gate, qkv biases. */
    sc = llama(28, 3584, 28, 4, 18944, 151936);
    sc.qkv_bias = true;
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

/*
 * Routed experts are divided by etp * ep on a GPU and their states sharded by ZeRO over the
 * expert data-parallel size dp * tp / (etp * ep); the dense states over dp (doc/model.md 3.2).
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
    assert_int_equal(t.stage[0].layers[LAYER_DENSE], 3);
    assert_int_equal(t.stage[0].layers[LAYER_MOE], 58);
    sc.layers = 64; /* 4 stages of 16 */
    sc.pp = 4;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.stage[MODEL_STAGE_FIRST].layers[LAYER_DENSE], 3);
    assert_int_equal(t.stage[MODEL_STAGE_FIRST].layers[LAYER_MOE], 13);
    assert_int_equal(t.stage[MODEL_STAGE_LAST].layers[LAYER_DENSE], 0);
    assert_int_equal(t.stage[MODEL_STAGE_LAST].layers[LAYER_MOE], 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_published_counts),
        cmocka_unit_test(test_moe_published_counts),
        cmocka_unit_test(test_mla_attention_params),
        cmocka_unit_test(test_moe_layer_parts),
        cmocka_unit_test(test_inventory_sums_are_the_model),
        cmocka_unit_test(test_selective_marks_the_core),
        cmocka_unit_test(test_expert_states_sharding),
        cmocka_unit_test(test_layer_kinds_per_stage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
