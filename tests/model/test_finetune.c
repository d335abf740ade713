/*
 * Tests of the model states of the optimizers and of LoRA / QLoRA fine-tuning (states.c and its
 * use in model_stage.c, model_step.c and cost.c; doc/model.md sections 3.5, 3.6, 10.2 and 12.1),
 * with the published counts of Llama-3.1-8B worked out in the comments.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/cost.h"
#include "model/model.h"
#include "model_fixtures.h"
#include "random_scenario.h"
#include "model/states.h"

/* Llama-3.1-8B (meta-llama/Llama-3.1-8B config.json): L = 32, h = 4096, a = 32, g = 8,
 * f = 14336, V = 128256, untied; Psi = 8,030,261,248. One 80 GB GPU, s = 4096, b = 1. */
static struct scenario llama31_8b(void)
{
    struct scenario sc;
    scenario_lesson_example(&sc);
    sc.arch = ARCH_LLAMA;
    sc.layers = 32;
    sc.hidden = 4096;
    sc.heads = 32;
    sc.kv_heads = 8;
    sc.vocab = 128256;
    sc.ffn = 14336;
    sc.tied = false;
    sc.dropout = false;
    sc.seq = 4096;
    sc.micro_batch = sc.global_batch = 1;
    sc.attention = ATTENTION_FLASH;
    return sc;
}

static struct scenario lora(enum finetune ft, enum lora_targets targets)
{
    struct scenario sc = llama31_8b();
    sc.finetune = ft;
    sc.lora_rank = 16;
    sc.lora_targets = targets;
    return sc;
}

#define PSI_8B 8030261248ull
#define ADAPTERS_QV 6815744ull

static void published_adapter_counts(void **state)
{
    (void)state;
    struct terms t;
    /* q: 16 (4096 + 4096), v: 16 (4096 + 1024): 212,992 a layer, 6,815,744 in 32. */
    struct scenario sc = lora(FINETUNE_LORA, LORA_QV);
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.adapter_params, ADAPTERS_QV);
    assert_int_equal(t.params, PSI_8B); /* Psi stays the model's */
    /* + k 16 (4096 + 1024), o 16 (4096 + 4096), gate, up, down 16 (4096 + 14336) each:
     * 1,310,720 a layer, 41,943,040 in 32. */
    sc = lora(FINETUNE_LORA, LORA_ALL_LINEAR);
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.adapter_params, 41943040);
    /* QLoRA trains the same adapters. */
    sc = lora(FINETUNE_QLORA, LORA_QV);
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.adapter_params, ADAPTERS_QV);
}

static void nf4_bytes_per_tensor(void **state)
{
    (void)state;
    struct checked ck = {false};
    /* 4096 x 4096: 8,388,608 + 262,144 (8-bit absmax per 64) + 4 * 1024 (fp32 per 256 of them). */
    assert_int_equal(states_nf4_bytes(16777216, &ck), 8388608 + 262144 + 4096);
    /* Rounded up per tensor: 65 elements take 33 bytes of codes, 2 absmax, one fp32. */
    assert_int_equal(states_nf4_bytes(65, &ck), 33 + 2 + 4);
    assert_int_equal(states_nf4_bytes(1, &ck), 1 + 1 + 4);
    assert_false(ck.overflow);
}

static void qlora_block_weights_published(void **state)
{
    (void)state;
    /* The linear weights of a Llama-3.1-8B layer, 218,103,808 parameters, in NF4 with double
     * quantisation: 0.5 + 1/64 + 4/16384 bytes each, 112,513,024 bytes; 3,600,416,768 for the
     * 32 layers. The layer's two norms stay fp32: 2 * 4096 * 4. */
    struct scenario sc = lora(FINETUNE_QLORA, LORA_QV);
    struct layer_inventory inv;
    struct states_layer st;
    assert_true(layer_inventory(&sc, LAYER_DENSE, &inv));
    assert_true(states_layer(&sc, &inv, &st));
    assert_int_equal(st.pool[0].frozen_bytes, 112513024 + 32768);
    assert_int_equal(32 * (st.pool[0].frozen_bytes - 32768), 3600416768ull);
    assert_int_equal(st.pool[0].frozen, 218112000); /* + the norms, 2 * 4096 */
    assert_int_equal(st.pool[0].trained, 212992);
    assert_int_equal(st.adapters, 212992);
}

static void qlora_states_8b(void **state)
{
    (void)state;
    struct terms t;
    struct scenario sc = lora(FINETUNE_QLORA, LORA_QV);
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    /* Weights: the blocks' NF4 3,600,416,768; the embedding, output layer, norms in fp32
     * 4 (2 * 128256 * 4096 + 4096 + 32 * 2 * 4096) = 4,203,757,568 (PEFT's
     * prepare_model_for_kbit_training upcast); the adapters' bf16 weights 2 * 6,815,744. */
    assert_int_equal(t.weights_bytes, 7817805824ull);
    assert_int_equal(t.grads_bytes, 2 * ADAPTERS_QV);
    assert_int_equal(t.optimizer_bytes, 12 * ADAPTERS_QV);
    assert_int_equal(t.stage[0].trained_params, ADAPTERS_QV);
    assert_int_equal(t.stage[0].params, PSI_8B);
}

static void lora_states_8b(void **state)
{
    (void)state;
    struct terms t;
    struct scenario sc = lora(FINETUNE_LORA, LORA_QV);
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    /* The frozen base in bf16, 2 Psi; the adapters 2 + 2 + 12 (mixed-precision AdamW). */
    assert_int_equal(t.weights_bytes, 2 * PSI_8B + 2 * ADAPTERS_QV);
    assert_int_equal(t.grads_bytes, 2 * ADAPTERS_QV);
    assert_int_equal(t.optimizer_bytes, 12 * ADAPTERS_QV);
    /* Under autocast the base is fp32 and the adapters 4 + 4 + 8. */
    sc.precision = PRECISION_AUTOCAST;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.weights_bytes, 4 * PSI_8B + 4 * ADAPTERS_QV);
    assert_int_equal(t.grads_bytes, 4 * ADAPTERS_QV);
    assert_int_equal(t.optimizer_bytes, 8 * ADAPTERS_QV);
    /* The optimizer changes the 12: 8-bit AdamW keeps 4 (master) + per tensor 2 n + 8 n / 256:
     * A 16 x 4096 (both), B 4096 x 16 (q) and 1024 x 16 (v), every one >= 4096 elements. */
    sc.precision = PRECISION_MIXED;
    sc.optimizer = OPTIM_ADAMW8BIT;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.optimizer_bytes,
                     4 * ADAPTERS_QV + 32 * (3 * (2 * 65536 + 8 * 256) + 2 * 16384 + 8 * 64));
}

static void moment_bytes_of_each_optimizer(void **state)
{
    (void)state;
    struct checked ck = {false};
    assert_int_equal(states_moment_bytes(OPTIM_ADAMW, 1000, &ck), 8000);
    assert_int_equal(states_moment_bytes(OPTIM_ADAMW_BF16, 1000, &ck), 4000);
    assert_int_equal(states_moment_bytes(OPTIM_SGD, 1000, &ck), 4000);
    /* bitsandbytes: under 4096 elements fp32 moments; from 4096 two uint8 and two fp32 absmax
     * per block of 256, the last block partial. */
    assert_int_equal(states_moment_bytes(OPTIM_ADAMW8BIT, 4095, &ck), 8 * 4095);
    assert_int_equal(states_moment_bytes(OPTIM_ADAMW8BIT, 4096, &ck), 8192 + 8 * 16);
    assert_int_equal(states_moment_bytes(OPTIM_ADAMW8BIT, 4097, &ck), 8194 + 8 * 17);
    assert_false(ck.overflow);
}

static void bytes_per_parameter_by_precision_and_optimizer(void **state)
{
    (void)state;
    /* weights, gradients, master, moments (doc/model.md 3.5): the master follows the precision,
     * the moments the optimizer. */
    static const struct {
        enum precision p;
        enum optimizer o;
        unsigned w, g, master, moments;
    } rows[] = {
        {PRECISION_MIXED, OPTIM_ADAMW, 2, 2, 4, 8},
        {PRECISION_MIXED, OPTIM_ADAMW_BF16, 2, 2, 4, 4},
        {PRECISION_MIXED, OPTIM_ADAMW8BIT, 2, 2, 4, 2},
        {PRECISION_MIXED, OPTIM_SGD, 2, 2, 4, 4},
        {PRECISION_MEGATRON, OPTIM_ADAMW, 2, 4, 4, 8},
        {PRECISION_AUTOCAST, OPTIM_ADAMW, 4, 4, 0, 8},
        {PRECISION_AUTOCAST, OPTIM_SGD, 4, 4, 0, 4},
        {PRECISION_FP32, OPTIM_ADAMW_BF16, 4, 4, 0, 4},
        {PRECISION_FROZEN, OPTIM_ADAMW, 2, 0, 0, 0},
        {PRECISION_FROZEN, OPTIM_SGD, 2, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct scenario sc = llama31_8b();
        sc.precision = rows[i].p;
        sc.optimizer = rows[i].o;
        struct states_per_param b = states_per_param(&sc);
        assert_int_equal(b.weights, rows[i].w);
        assert_int_equal(b.grads, rows[i].g);
        assert_int_equal(b.master, rows[i].master);
        assert_int_equal(b.moments, rows[i].moments);
        /* The same totals from the model, full training (8-bit AdamW aside: per tensor). */
        struct terms t;
        assert_int_equal(model_peak(&sc, &t), MODEL_OK);
        if (rows[i].o != OPTIM_ADAMW8BIT) {
            assert_int_equal(t.weights_bytes, rows[i].w * PSI_8B);
            assert_int_equal(t.grads_bytes, rows[i].g * PSI_8B);
            assert_int_equal(t.optimizer_bytes, (rows[i].master + rows[i].moments) * PSI_8B);
        }
    }
}

static void adamw8bit_full_training_8b(void **state)
{
    (void)state;
    struct terms t;
    struct scenario sc = llama31_8b();
    sc.optimizer = OPTIM_ADAMW8BIT;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    /* Every tensor has at least 4096 elements and a multiple of 256: 2.03125 bytes per element
     * (the norms, 4096, too: 8192 + 128), 16,311,468,160 bytes of moments, with the fp32 master
     * 4 Psi. */
    assert_int_equal(t.optimizer_bytes, 4 * PSI_8B + 16311468160ull);
    assert_int_equal(t.weights_bytes, 2 * PSI_8B);
    assert_int_equal(t.grads_bytes, 2 * PSI_8B);
    /* A small model's norms (h = 2048 < 4096) keep fp32 moments: the lesson's 1.3B GPT. */
    struct scenario gpt;
    scenario_lesson_example(&gpt);
    gpt.optimizer = OPTIM_ADAMW8BIT;
    struct layer_inventory inv;
    struct states_layer st;
    assert_true(layer_inventory(&gpt, LAYER_DENSE, &inv));
    assert_true(states_layer(&gpt, &inv, &st));
    /* Matrices 12 h^2 = 50,331,648 at 2 + 8/256; biases 3h + h + 4h + h (each < 4096 but the
     * 8192-wide MLP-in bias and 6144 of QKV: Q, K, V biases are 2048 each) and norms at 8. */
    uint64_t matrices = 50331648ull * 2 + 50331648ull / 256 * 8;
    uint64_t small = 8 * (3 * 2048 + 2048 + 2048 + 4 * 2048) + (2 * 8192 + 32 * 8);
    assert_int_equal(st.pool[0].moments, matrices + small);
}

static void tensor_parallel_splits_adapters_like_their_linear(void **state)
{
    (void)state;
    struct terms t;
    /* tp = 2: q and v are column-parallel, B split: q 16 * 4096 + 16 * 2048, v 16 * 4096 +
     * 16 * 512; 172,032 a layer. */
    struct scenario sc = lora(FINETUNE_LORA, LORA_QV);
    sc.tp = 2;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.stage[0].trained_params, 5505024);
    assert_int_equal(t.adapter_params, ADAPTERS_QV); /* whole */
    /* all-linear: o and down are row-parallel, A split: o 16 * 2048 + 16 * 4096, down
     * 16 * 7168 + 16 * 4096. */
    sc.lora_targets = LORA_ALL_LINEAR;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.stage[0].trained_params, 28311552);
}

static void zero_shards_what_is_trained_and_stage_3_the_base(void **state)
{
    (void)state;
    struct terms t;
    struct scenario sc = lora(FINETUNE_LORA, LORA_QV);
    sc.dp = 8;
    sc.global_batch = 8;
    sc.zero = 2;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.weights_bytes, 2 * PSI_8B + 2 * ADAPTERS_QV);
    assert_int_equal(t.grads_bytes, 2 * ADAPTERS_QV / 8);
    assert_int_equal(t.optimizer_bytes, 12 * ADAPTERS_QV / 8);
    sc.zero = 3; /* FSDP and ZeRO-3 partition every parameter, frozen or not */
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.weights_bytes, (2 * PSI_8B + 2 * ADAPTERS_QV) / 8);
    sc.offload = OFFLOAD_OPTIMIZER;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.optimizer_bytes, 0);
}

static void step_model_trains_only_the_adapters(void **state)
{
    (void)state;
    struct terms t;
    struct step_gpu g;
    struct scenario sc = lora(FINETUNE_LORA, LORA_QV);
    sc.peak = PEAK_STEP;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(model_step_gpu(&sc, &t, MODEL_STAGE_FIRST, &g), MODEL_OK);
    /* foreach AdamW: two fp32 temporaries per trained parameter; no gradient of the head or of
     * the embedding's output; the last GEMM's backward without its weight's gradient. */
    assert_int_equal(g.optimizer_temps, 8 * ADAPTERS_QV);
    assert_int_equal(g.head_grads, 0);
    assert_int_equal(g.embedding_end, 0);
    assert_int_equal(g.head_copy, 0);
    assert_int_equal(g.transient, 2ull * 4096 * 14336); /* e s b f: the input's gradient */
    /* QLoRA: the fp32 output layer's bf16 copy, and the dequantised weight of the last GEMM. */
    sc.finetune = FINETUNE_QLORA;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(model_step_gpu(&sc, &t, MODEL_STAGE_FIRST, &g), MODEL_OK);
    assert_int_equal(g.head_copy, 2ull * 128256 * 4096);
    assert_int_equal(g.transient, 2ull * 4096 * 14336 + 2ull * 4096 * 14336);
    /* 8-bit AdamW and SGD update in place: no temporaries. */
    sc.optimizer = OPTIM_ADAMW8BIT;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(model_step_gpu(&sc, &t, MODEL_STAGE_FIRST, &g), MODEL_OK);
    assert_int_equal(g.optimizer_temps, 0);
    /* Full training with bf16 moments: two bf16 temporaries per parameter. */
    sc = llama31_8b();
    sc.peak = PEAK_STEP;
    sc.optimizer = OPTIM_ADAMW_BF16;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(model_step_gpu(&sc, &t, MODEL_STAGE_FIRST, &g), MODEL_OK);
    assert_int_equal(g.optimizer_temps, 4 * PSI_8B);
}

static void frozen_base_flops(void **state)
{
    (void)state;
    struct terms t;
    struct cost c;
    /* 4 Psi per token for the frozen base, 6 per adapter parameter (doc/model.md 12.1). */
    struct scenario sc = lora(FINETUNE_LORA, LORA_QV);
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &c);
    assert_true(c.flops == (4.0 * (double)PSI_8B + 6.0 * (double)ADAPTERS_QV) * 4096.0);
    sc = llama31_8b();
    sc.optimizer = OPTIM_ADAMW8BIT; /* changes nothing there */
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    cost_step(&sc, &t, &c);
    assert_true(c.flops == 6.0 * (double)PSI_8B * 4096.0);
}

static void gpus_for_the_states_alone(void **state)
{
    (void)state;
    /* Llama 3.1 70B: 70,553,706,496 parameters; 16 Psi of full training need 15 GPUs of 80 GB;
     * QLoRA's 35.3 GB of NF4 blocks and 8.4 GB of fp32 rest, one. */
    struct scenario sc = llama31_8b();
    sc.layers = 80;
    sc.hidden = 8192;
    sc.heads = 64;
    sc.ffn = 28672;
    sc.gpu_mem_bytes = 80000000000ull;
    uint64_t psi;
    assert_int_equal(model_params(&sc, &psi), MODEL_OK);
    assert_int_equal(psi, 70553706496ull);
    assert_int_equal(model_states_gpus(&sc, psi), 15);
    sc.finetune = FINETUNE_QLORA;
    assert_int_equal(model_states_gpus(&sc, psi), 1);
    struct terms t;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.weights_bytes, 35311779840ull + 8410660864ull + 2 * 32768000ull);
}

/* Random valid scenarios with every optimizer and fine-tuning: the pools add up to the model's
 * parameters, the largest micro-batch is exact, and the overflow bound holds. */
static void random_scenarios_with_every_optimizer(void **state)
{
    (void)state;
    uint64_t st = 11;
    static const uint64_t ranks[] = {1, 8, 16, 64, 256};
    for (int i = 0; i < 3000; i++) {
        struct scenario sc;
        struct terms t;
        random_scenario(&st, &sc);
        sc.optimizer = (enum optimizer)rs_range(&st, 0, 3);
        sc.finetune = (enum finetune)rs_range(&st, 0, 2);
        sc.lora_rank = rs_pick(&st, ranks, 5);
        sc.lora_targets =
            sc.kv_lora_rank > 0 ? LORA_ALL_LINEAR : (enum lora_targets)rs_range(&st, 0, 1);
        if (sc.finetune != FINETUNE_FULL && sc.precision == PRECISION_FROZEN)
            sc.precision = PRECISION_MIXED;
        /* Multi-token prediction is modelled with full training and per-parameter states (2.6). */
        if (sc.finetune != FINETUNE_FULL || sc.optimizer == OPTIM_ADAMW8BIT)
            sc.mtp_layers = 0;
        if (sc.finetune == FINETUNE_QLORA && sc.precision == PRECISION_FP32)
            sc.precision = PRECISION_AUTOCAST;
        sc.fp8 = sc.finetune != FINETUNE_FULL ? FP8_NONE : sc.fp8;
        if (i % 2)
            sc.peak = PEAK_STEP;
        /* Every entry of the inventory is the sum of its tensors; a matrix is d_in x d_out. */
        for (int kind = 0; kind < (sc.experts ? 2 : 1); kind++) {
            struct layer_inventory inv;
            if (!layer_inventory(&sc, (enum layer_kind)kind, &inv))
                continue;
            for (size_t e = 0; e < inv.n_params; e++) {
                const struct layer_param *p = &inv.params[e];
                assert_int_equal(p->count,
                                 p->elements[0] * p->tensors[0] + p->elements[1] * p->tensors[1]);
                if (p->d_in)
                    assert_int_equal(p->elements[0], p->d_in * p->d_out);
            }
        }
        bool bound = model_peak_cannot_overflow(&sc);
        if (model_eval(&sc, &t) != MODEL_OK) {
            assert_false(bound);
            continue;
        }
        for (unsigned s = 0; s < t.n_stages; s++) {
            const struct model_gpu *g = &t.stage[s];
            uint64_t base = g->pool[0].frozen + g->pool[1].frozen;
            if (sc.finetune == FINETUNE_FULL)
                base += g->pool[0].trained + g->pool[1].trained;
            assert_int_equal(base, g->params);
        }
        assert_max_micro_batch_exact(&sc, &t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(published_adapter_counts),
        cmocka_unit_test(nf4_bytes_per_tensor),
        cmocka_unit_test(qlora_block_weights_published),
        cmocka_unit_test(qlora_states_8b),
        cmocka_unit_test(lora_states_8b),
        cmocka_unit_test(moment_bytes_of_each_optimizer),
        cmocka_unit_test(bytes_per_parameter_by_precision_and_optimizer),
        cmocka_unit_test(adamw8bit_full_training_8b),
        cmocka_unit_test(tensor_parallel_splits_adapters_like_their_linear),
        cmocka_unit_test(zero_shards_what_is_trained_and_stage_3_the_base),
        cmocka_unit_test(step_model_trains_only_the_adapters),
        cmocka_unit_test(frozen_base_flops),
        cmocka_unit_test(gpus_for_the_states_alone),
        cmocka_unit_test(random_scenarios_with_every_optimizer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
