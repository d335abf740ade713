/*
 * Tests of the model (model.h) against the formulas of doc/model.md sections 2-4 and 8
 * (parameters, model states, activations, peak, budget, overflow and the largest micro-batch) and
 * every number of its worked example, section 9, with the reference numbers of section 9.9.
 * Checkpointing and the layouts (sections 5, 6, 3.2, 4.11, 3.7) are in test_model_layouts.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "model/model.h"
#include "model_fixtures.h"
#include "random_scenario.h"
#include "testutil.h"

/* ---- parameters (doc/model.md section 2; worked example 9.1) ---- */

static void gpt_layer_params_are_12h2_plus_13h(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    uint64_t n;
    assert_int_equal(model_layer_params(&sc, &n), MODEL_OK);
    assert_int_equal(n, 50358272); /* 12 * 2048^2 + 13 * 2048 */
}

static void check_yourself_1_layer_of_h1024(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.hidden = 1024;
    sc.ffn = 4096;
    uint64_t n;
    assert_int_equal(model_layer_params(&sc, &n), MODEL_OK);
    assert_int_equal(n, 12596224);
}

static void worked_example_psi(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    uint64_t n;
    assert_int_equal(model_params(&sc, &n), MODEL_OK);
    assert_int_equal(n, 1311528960);
    /* 12Lh^2 is only 92% of Psi at this size. */
    assert_true(fabs(12.0 * 24 * 2048 * 2048 / (double)n - 0.921) < 0.0005);
}

static void llama2_7b_params(void **state)
{
    (void)state;
    struct scenario sc = llama2_7b();
    uint64_t n;
    assert_int_equal(model_params(&sc, &n), MODEL_OK);
    assert_int_equal(n, 6738415616);
}

static void llama2_70b_params_with_gqa(void **state)
{
    (void)state;
    struct scenario sc = llama2_70b();
    uint64_t n;
    assert_int_equal(model_params(&sc, &n), MODEL_OK);
    assert_int_equal(n, 68976648192);
}

static void gpt2_small_params_with_learned_positions(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.layers = 12;
    sc.hidden = 768;
    sc.heads = sc.kv_heads = 12;
    sc.ffn = 3072;
    sc.positions = 1024;
    uint64_t n;
    assert_int_equal(model_params(&sc, &n), MODEL_OK);
    assert_int_equal(n, 124439808);
}

static void mistral_and_llama3_params(void **state)
{
    (void)state;
    struct scenario sc = llama2_7b();
    sc.kv_heads = 8;
    sc.ffn = 14336;
    uint64_t n;
    assert_int_equal(model_params(&sc, &n), MODEL_OK);
    assert_int_equal(n, 7241732096); /* Mistral 7B */
    sc.vocab = 128256;
    assert_int_equal(model_params(&sc, &n), MODEL_OK);
    assert_int_equal(n, 8030261248); /* Llama 3 8B */
}

/* ---- model states (doc/model.md section 3, 16 bytes per parameter) ---- */

static void worked_example_states_21gb(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    struct terms t = peak_of(&sc);
    assert_int_equal(t.weights_bytes, 2ull * 1311528960);
    assert_int_equal(t.grads_bytes, 2ull * 1311528960);
    assert_int_equal(t.optimizer_bytes, 12ull * 1311528960);
    assert_int_equal(t.states_bytes, 16ull * 1311528960);
    assert_gb1(t.states_bytes, 21.0);
}

static void precisions_bytes_per_parameter(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    const unsigned want[] = {16, 16, 18, 2};
    const enum precision ps[] = {PRECISION_MIXED, PRECISION_AUTOCAST, PRECISION_MEGATRON,
                                 PRECISION_FROZEN};
    for (int i = 0; i < 4; i++) {
        sc.precision = ps[i];
        struct terms t = peak_of(&sc);
        assert_int_equal(t.states_bytes, want[i] * 1311528960ull);
    }
}

static void quick_check_13b_needs_208gb(void **state)
{
    (void)state;
    /* 13B parameters with mixed-precision Adam: 16 * 13e9 = 208 GB (Llama 2 13B: 208.3). */
    struct scenario sc = llama2_7b();
    sc.layers = 40;
    sc.hidden = 5120;
    sc.heads = sc.kv_heads = 40;
    sc.ffn = 13824;
    struct terms t = peak_of(&sc);
    assert_int_equal(t.params, 13015864320);
    assert_gb1(t.states_bytes, 208.3);
}

static void seven_b_needs_112gb(void **state)
{
    (void)state;
    struct scenario sc = llama2_7b();
    struct terms t = peak_of(&sc);
    /* 16 bytes per parameter: 112 GB for 7B parameters (doc/model.md section 9.9); Llama 2 7B
     * has 6.74B parameters: 107.8 GB. */
    assert_gb1(t.states_bytes, 107.8);
    assert_int_equal(model_gpus_for_states(7000000000ull, PRECISION_MIXED, 80000000000ull), 2);
}

static void check_yourself_2_70b_needs_14_gpus(void **state)
{
    (void)state;
    assert_int_equal(model_gpus_for_states(70000000000ull, PRECISION_MIXED, 80000000000ull), 14);
}

static void zero_stages_divide_states(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.dp = 8;
    uint64_t psi = 1311528960;
    sc.zero = 1;
    assert_int_equal(peak_of(&sc).states_bytes, 4 * psi + 12 * psi / 8);
    sc.zero = 2;
    assert_int_equal(peak_of(&sc).states_bytes, 2 * psi + 14 * psi / 8);
    sc.zero = 3;
    assert_int_equal(peak_of(&sc).states_bytes, 16 * psi / 8);
}

static void zero_rounds_up_to_the_byte(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.dp = 7; /* 12 * Psi is not a multiple of 7 */
    sc.zero = 1;
    uint64_t psi = 1311528960;
    assert_int_equal(peak_of(&sc).optimizer_bytes, (12 * psi + 6) / 7);
}

static void offload_moves_optimizer_states(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.offload = OFFLOAD_OPTIMIZER;
    struct terms t = peak_of(&sc);
    assert_int_equal(t.optimizer_bytes, 0);
    assert_int_equal(t.states_bytes, 4ull * 1311528960);
}

static void frozen_base_keeps_two_bytes(void **state)
{
    (void)state;
    /* Fine-tuning with LoRA: about 2 bytes per frozen parameter; each layer keeps 14 sbh less,
     * the inputs of its frozen linears (QKV, projection, fc1, fc2; doc/model.md 4.9). */
    struct scenario sc = lesson();
    sc.precision = PRECISION_FROZEN;
    struct terms frozen = peak_of(&sc);
    sc.precision = PRECISION_MIXED;
    struct terms full = peak_of(&sc);
    assert_int_equal(frozen.states_bytes, 2ull * 1311528960);
    assert_int_equal(full.act_bytes - frozen.act_bytes, 24 * 14 * sbh_of(&sc));
}

/* ---- activations (doc/model.md section 4) ---- */

static void activation_theorem_34_plus_5as_over_h(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    struct model_layer_act a;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    /* 5as/h = 80: 114 sbh = 3.83 GB per layer. */
    assert_int_equal(a.total, 114 * sbh_of(&sc));
    assert_int_equal(a.total, 34 * sbh_of(&sc) + 5ull * 16 * 2048 * 2048 * 8);
    assert_gb2(a.total, 3.83);
    /* The attention core is 80/114 = 70% of it. */
    assert_true(fabs((double)a.attn / (double)a.total - 80.0 / 114) < 1e-12);
}

static void worked_example_activations_91_8gb(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    struct terms t = peak_of(&sc);
    assert_int_equal(t.act_bytes, 24 * 114 * sbh_of(&sc));
    assert_gb1(t.act_bytes, 91.8);
}

static void worked_example_logits_3_29gb(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    uint64_t l;
    assert_int_equal(model_logits_bytes(&sc, &l), MODEL_OK);
    assert_int_equal(l, 4ull * 2048 * 8 * 50257);
    assert_gb2(l, 3.29);
}

static void worked_example_total_116_1gb_does_not_fit(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    struct terms t = peak_of(&sc);
    assert_gb1(t.peak_bytes, 116.1);
    assert_int_equal(t.budget_bytes, 68000000000);
    assert_false(t.fits);
}

static void worked_example_flash_51_7gb_fits(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.attention = ATTENTION_FLASH;
    struct terms t = peak_of(&sc);
    assert_gb1(t.act_bytes, 27.4);
    assert_gb1(t.peak_bytes, 51.7);
    assert_true(t.fits);
    /* 28 GB (35%) of the 80 GB GPU stay free (doc/model.md section 9.5). */
    assert_true(fabs((80e9 - (double)t.peak_bytes) / 80e9 - 0.35) < 0.005);
}

static void worked_example_full_checkpointing_27gb(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.attention = ATTENTION_FLASH;
    sc.recompute = RECOMPUTE_EVERY_K;
    sc.ckpt_every = 1;
    struct terms t = peak_of(&sc);
    /* Layer inputs 2sbh * 24 = 1.6 GB plus one rebuilt layer 34 sbh = 1.1 GB. */
    assert_int_equal(t.act_bytes, (2 * 24 + 34) * sbh_of(&sc) + 4ull * 16 * 2048 * 8);
    assert_gb1(t.peak_bytes, 27.0);
}

static void worked_example_largest_micro_batch_12_and_62(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.attention = ATTENTION_FLASH;
    assert_int_equal(model_max_micro_batch(&sc), 12);
    sc.recompute = RECOMPUTE_EVERY_K;
    sc.ckpt_every = 1;
    assert_int_equal(model_max_micro_batch(&sc), 62);
}

static void worked_example_zero2_on_8x40gb(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.attention = ATTENTION_FLASH;
    sc.gpu_mem_bytes = 40000000000;
    sc.dp = 8;
    assert_gb1(peak_of(&sc).peak_bytes, 51.7); /* plain data parallelism: no change */
    sc.zero = 2;
    struct terms t = peak_of(&sc);
    assert_gb2(t.states_bytes, 4.92);
    assert_gb1(t.peak_bytes, 35.6);
    /* Only 4.4 GB (11%) of the 40 GB GPU stay free (doc/model.md section 9.8). */
    assert_true(fabs((40e9 - (double)t.peak_bytes) / 1e9 - 4.4) < 0.05);
    sc.micro_batch = 4;
    assert_gb1(peak_of(&sc).peak_bytes, 20.3);
}

/* The lesson's verdict for ZeRO-2 on eight "40 GB" GPUs, "it fits", under the default 15% reserve:
 * only on the 40,960 MiB an A100 40GB reports (the A100-40GB preset), not on 40 x 10^9 bytes. */
static void worked_example_zero2_fits_the_a100_40gb_as_it_reports_itself(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.attention = ATTENTION_FLASH;
    sc.dp = 8;
    sc.zero = 2;
    sc.reserve = 0.15;
    sc.gpu_mem_bytes = 40000000000;
    assert_false(peak_of(&sc).fits); /* budget 34.0 GB < 35.6 GB */
    sc.gpu_mem_bytes = 40960ull << 20;
    struct terms t = peak_of(&sc);
    assert_true(t.fits);
    assert_gb1(t.budget_bytes, 36.5);
    assert_gb1(t.peak_bytes, 35.6);
}

static void quick_check_doubling_b_doubles_activations_only(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    struct terms t8 = peak_of(&sc);
    sc.micro_batch = 16;
    struct terms t16 = peak_of(&sc);
    assert_int_equal(t16.states_bytes, t8.states_bytes);
    assert_int_equal(t16.act_bytes, 2 * t8.act_bytes);
    assert_int_equal(t16.logits_bytes, 2 * t8.logits_bytes);
}

static void section1_doubling_s_doubles_linear_part_per_token_core_grows(void **state)
{
    (void)state;
    /* doc/model.md section 4.2: per token, 34sbh stays and the core 5as^2b = 5as(sb) doubles. */
    struct scenario sc = lesson();
    struct model_layer_act a1, a2;
    assert_int_equal(model_layer_act(&sc, &a1), MODEL_OK);
    sc.seq *= 2;
    sc.micro_batch /= 2;
    assert_int_equal(model_layer_act(&sc, &a2), MODEL_OK);
    assert_int_equal(a2.whole + a2.split, a1.whole + a1.split);
    assert_int_equal(a2.attn, 2 * a1.attn);
}

static void quick_check_core_crossover_870_tokens(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.hidden = 4096;
    sc.heads = sc.kv_heads = 32;
    sc.ffn = 4 * 4096;
    sc.micro_batch = 1;
    assert_true(fabs(model_core_crossover_seq(&sc) - 870.4) < 0.01); /* 34h/(5a) */
    /* And it is where the two parts meet. */
    struct model_layer_act a;
    sc.seq = 870;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_true(a.attn < a.whole + a.split);
    sc.seq = 871;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_true(a.attn > a.whole + a.split);
    sc.dropout = false; /* 32 sbh against 2as^2b: 16h/a */
    assert_true(fabs(model_core_crossover_seq(&sc) - 16.0 * 4096 / 32) < 1e-9);
    struct scenario ll = llama2_70b(); /* ((12 + 4/8) h + 8f) / (2a) */
    assert_true(fabs(model_core_crossover_seq(&ll) - (12.5 * 8192 + 8.0 * 28672) / 128) < 1e-9);
}

static void check_yourself_4_no_dropout(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.dropout = false;
    struct model_layer_act a;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(a.total, 32 * sbh_of(&sc) + 2ull * 16 * 2048 * 2048 * 8);
}

static void selective_keeps_34sbh(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.recompute = RECOMPUTE_SELECTIVE;
    struct model_layer_act a;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(a.total, 34 * sbh_of(&sc));
    sc.attention = ATTENTION_FLASH; /* selective with flash keeps the flash term */
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(a.total, 34 * sbh_of(&sc) + 4ull * 16 * 2048 * 8);
}

static void flash_keeps_fp32_logsumexp(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.attention = ATTENTION_FLASH;
    struct model_layer_act a;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(a.attn, 4ull * 16 * 2048 * 8);
}

static void gpt3_selective_core_is_70_percent_and_costs_0_9_percent(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.hidden = 12288;
    sc.heads = sc.kv_heads = 96;
    sc.ffn = 4 * 12288;
    sc.micro_batch = 1;
    struct model_layer_act a;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(a.attn, 80 * sbh_of(&sc)); /* 5as/h = 80 */
    assert_true(fabs((double)a.attn / (double)a.total - 0.70) < 0.005);
    assert_true(fabs(model_selective_overhead(2048, 12288) - 0.009) < 0.0005);
}

static void long_context_32k(void **state)
{
    (void)state;
    /* s = 32768, a = 32, h = 4096, b = 1: 5as/h = 1280; 34sbh = 4.6 GB per layer, 146 GB for 32. */
    struct scenario sc = lesson();
    sc.seq = 32768;
    sc.micro_batch = 1;
    sc.hidden = 4096;
    sc.heads = sc.kv_heads = 32;
    sc.ffn = 4 * 4096;
    sc.layers = 32;
    sc.recompute = RECOMPUTE_SELECTIVE;
    struct model_layer_act a;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_gb1(a.total, 4.6);
    assert_gb0(32 * a.total, 146);
    sc.recompute = RECOMPUTE_NONE;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(a.attn, 1280 * sbh_of(&sc));
}

static void tensor_parallel_10_plus_24_over_t(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.tp = 4;
    struct model_layer_act a;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    /* sbh(10 + 24/t + 5as/(ht)) */
    assert_int_equal(a.whole, 10 * sbh_of(&sc));
    assert_int_equal(a.total, 10 * sbh_of(&sc) + (24 + 80) * sbh_of(&sc) / 4);
    sc.dropout = false; /* doc/model.md 4.3: the two masks are part of the 10 */
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(a.whole, 8 * sbh_of(&sc));
}

static void sequence_parallel_divides_everything(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.tp = 8;
    sc.sp = true;
    struct model_layer_act a;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(a.total, 114 * sbh_of(&sc) / 8);
    uint64_t c;
    assert_int_equal(model_ckpt_bytes(&sc, &c), MODEL_OK);
    assert_int_equal(c, 2 * sbh_of(&sc) / 8);
}

static void tp_division_rounds_up(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.seq = 7;
    sc.micro_batch = 1;
    sc.hidden = 16;
    sc.heads = sc.kv_heads = 3 * 1; /* tp = 3 divides heads */
    sc.hidden = 18;
    sc.ffn = 72;
    sc.tp = 3;
    struct model_layer_act a;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    uint64_t sbh = 7 * 18, split = 24 * sbh, attn = 5ull * 3 * 7 * 7;
    assert_int_equal(a.total, 10 * sbh + (split + attn + 2) / 3);
    uint64_t l;
    sc.vocab = 50257;
    assert_int_equal(model_logits_bytes(&sc, &l), MODEL_OK);
    assert_int_equal(l, (4ull * 7 * 50257 + 2) / 3);
}

static void gqa_keeps_k_and_v_once(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.kv_heads = 4; /* g = 4: 30 + 4/g = 31 sbh */
    struct model_layer_act a;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(a.whole + a.split, 31 * sbh_of(&sc));
}

static void llama_layer_activations(void **state)
{
    (void)state;
    struct scenario sc = llama2_70b(); /* g = 8 */
    sc.seq = 4096;
    sc.micro_batch = 1;
    struct model_layer_act a;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    uint64_t sbh = sbh_of(&sc), sbf = 4096ull * 28672;
    /* (12 + 4/g) sbh + 8 sbf + 2as^2b */
    assert_int_equal(a.total, 12 * sbh + sbh / 2 + 8 * sbf + 2ull * 64 * 4096 * 4096);
    sc.attention = ATTENTION_FLASH;
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(a.total, 12 * sbh + sbh / 2 + 8 * sbf + 4ull * 64 * 4096);
    sc.tp = 8; /* the two norm inputs and outputs stay whole */
    assert_int_equal(model_layer_act(&sc, &a), MODEL_OK);
    assert_int_equal(a.whole, 8 * sbh);
}

/* ---- budget, overflow, micro-batch ---- */

static void reserve_sets_the_budget(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.reserve = 0;
    assert_int_equal(model_budget_bytes(&sc), 80000000000);
    sc.reserve = 0.2;
    assert_int_equal(model_budget_bytes(&sc), 64000000000);
}

static void overflow_is_reported_not_wrapped(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.seq = 1ull << 40; /* a s^2 b overflows */
    struct terms t;
    assert_int_equal(model_peak(&sc, &t), MODEL_OVERFLOW);
    sc = lesson();
    sc.vocab = 1ull << 62;
    assert_int_equal(model_peak(&sc, &t), MODEL_OVERFLOW);
    sc = lesson();
    sc.layers = 1ull << 60;
    assert_int_equal(model_peak(&sc, &t), MODEL_OVERFLOW);
}

/* The cheap bound config uses instead of model_peak: whenever it says no overflow, model_peak
 * agrees, on random scenarios scaled towards and past 64 bits. */
static void peak_bound_implies_no_overflow(void **state)
{
    (void)state;
    uint64_t st = 2026;
    int sure = 0, overflow = 0;
    for (int i = 0; i < 20000; i++) {
        struct scenario sc;
        struct terms t;
        random_scenario(&st, &sc);
        sc.seq <<= rs_range(&st, 0, 20);
        sc.micro_batch <<= rs_range(&st, 0, 16);
        sc.vocab <<= rs_range(&st, 0, 20);
        sc.layers <<= rs_range(&st, 0, 12);
        rs_keep_split(&sc);
        uint64_t wider = rs_range(&st, 0, 10);
        sc.hidden <<= wider;
        sc.ffn <<= wider;
        enum model_status status = model_peak(&sc, &t);
        if (model_peak_cannot_overflow(&sc)) {
            sure++;
            assert_int_equal(status, MODEL_OK);
        }
        overflow += status == MODEL_OVERFLOW;
    }
    assert_true(sure > 2000);     /* the bound is useful... */
    assert_true(overflow > 2000); /* ...and the test reaches the limit */
    struct scenario sc = lesson();
    assert_true(model_peak_cannot_overflow(&sc));
}

static void max_micro_batch_is_exact(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.attention = ATTENTION_FLASH;
    sc.tp = 2;
    sc.pp = 2;
    sc.dp = 4;
    sc.zero = 1;
    uint64_t b = model_max_micro_batch(&sc);
    assert_true(b > 0);
    sc.micro_batch = b;
    assert_true(peak_of(&sc).fits);
    sc.micro_batch = b + 1;
    assert_false(peak_of(&sc).fits);
}

/* The largest micro-batch of model_eval (solved from the scenario's own b) and of
 * model_max_micro_batch is the last b that fits, on random scenarios, under both peaks (the
 * step's with every implementation choice). */
static void max_micro_batch_is_exact_on_random_scenarios(void **state)
{
    (void)state;
    uint64_t st = 7;
    for (int i = 0; i < 6000; i++) {
        struct scenario sc;
        struct terms t;
        random_scenario(&st, &sc);
        if (i % 2) {
            sc.peak = PEAK_STEP;
            sc.loss = (enum loss_impl)rs_range(&st, 0, 1);
            sc.grad_buffer = (enum grad_buffer)rs_range(&st, 0, 1);
            sc.optimizer_impl = (enum optimizer_impl)rs_range(&st, 0, 2);
        }
        if (model_eval(&sc, &t) != MODEL_OK)
            continue;
        assert_int_equal(t.max_micro_batch, model_max_micro_batch(&sc));
        assert_max_micro_batch_exact(&sc, &t);
    }
}

/* model_stage_lesson evaluates any stage as model_peak evaluates its candidates: on an uneven
 * split (3, 7, 7, 7 layers) under 1F1B and on DualPipe with MoE layers, every stage's lesson sum
 * is at most the peak, which one stage (the one model_peak names, the lowest of a tie) reaches. */
static void every_stage_at_most_the_peak(void **state)
{
    (void)state;
    for (int c = 0; c < 2; c++) {
        struct scenario sc;
        scenario_lesson_example(&sc);
        sc.pp = 4;
        sc.global_batch = 8 * 8;
        if (c == 0) {
            sc.first_stage_layers = 3;
        } else {
            sc.schedule = SCHEDULE_DUALPIPE;
            sc.arch = ARCH_LLAMA;
            sc.dropout = false;
            sc.experts = 8;
            sc.top_k = 2;
            sc.expert_ffn = 1024;
            sc.dense_layers = 9;
        }
        struct terms t;
        assert_int_equal(model_peak(&sc, &t), MODEL_OK);
        uint64_t most = 0, at = 0;
        for (uint64_t r = 0; r < sc.pp; r++) {
            struct model_gpu g;
            assert_int_equal(model_stage_lesson(&sc, r, &g), MODEL_OK);
            assert_int_equal(g.pipe.rank, r);
            for (unsigned i = 0; i < t.n_stages; i++)
                if (t.stage[i].pipe.rank == r)
                    assert_int_equal(g.lesson_peak_bytes, t.stage[i].lesson_peak_bytes);
            if (g.lesson_peak_bytes > most) {
                most = g.lesson_peak_bytes;
                at = r;
            }
        }
        assert_int_equal(most, t.peak_bytes);
        assert_int_equal(at, t.stage[t.peak_stage].pipe.rank);
    }
}

static void max_micro_batch_zero_when_states_do_not_fit(void **state)
{
    (void)state;
    struct scenario sc = llama2_70b();
    assert_int_equal(model_max_micro_batch(&sc), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpt_layer_params_are_12h2_plus_13h),
        cmocka_unit_test(check_yourself_1_layer_of_h1024),
        cmocka_unit_test(worked_example_psi),
        cmocka_unit_test(llama2_7b_params),
        cmocka_unit_test(llama2_70b_params_with_gqa),
        cmocka_unit_test(gpt2_small_params_with_learned_positions),
        cmocka_unit_test(mistral_and_llama3_params),
        cmocka_unit_test(worked_example_states_21gb),
        cmocka_unit_test(precisions_bytes_per_parameter),
        cmocka_unit_test(quick_check_13b_needs_208gb),
        cmocka_unit_test(seven_b_needs_112gb),
        cmocka_unit_test(check_yourself_2_70b_needs_14_gpus),
        cmocka_unit_test(zero_stages_divide_states),
        cmocka_unit_test(zero_rounds_up_to_the_byte),
        cmocka_unit_test(offload_moves_optimizer_states),
        cmocka_unit_test(frozen_base_keeps_two_bytes),
        cmocka_unit_test(activation_theorem_34_plus_5as_over_h),
        cmocka_unit_test(worked_example_activations_91_8gb),
        cmocka_unit_test(worked_example_logits_3_29gb),
        cmocka_unit_test(worked_example_total_116_1gb_does_not_fit),
        cmocka_unit_test(worked_example_flash_51_7gb_fits),
        cmocka_unit_test(worked_example_full_checkpointing_27gb),
        cmocka_unit_test(worked_example_largest_micro_batch_12_and_62),
        cmocka_unit_test(worked_example_zero2_on_8x40gb),
        cmocka_unit_test(worked_example_zero2_fits_the_a100_40gb_as_it_reports_itself),
        cmocka_unit_test(quick_check_doubling_b_doubles_activations_only),
        cmocka_unit_test(section1_doubling_s_doubles_linear_part_per_token_core_grows),
        cmocka_unit_test(quick_check_core_crossover_870_tokens),
        cmocka_unit_test(check_yourself_4_no_dropout),
        cmocka_unit_test(selective_keeps_34sbh),
        cmocka_unit_test(flash_keeps_fp32_logsumexp),
        cmocka_unit_test(gpt3_selective_core_is_70_percent_and_costs_0_9_percent),
        cmocka_unit_test(long_context_32k),
        cmocka_unit_test(tensor_parallel_10_plus_24_over_t),
        cmocka_unit_test(sequence_parallel_divides_everything),
        cmocka_unit_test(tp_division_rounds_up),
        cmocka_unit_test(gqa_keeps_k_and_v_once),
        cmocka_unit_test(llama_layer_activations),
        cmocka_unit_test(reserve_sets_the_budget),
        cmocka_unit_test(overflow_is_reported_not_wrapped),
        cmocka_unit_test(peak_bound_implies_no_overflow),
        cmocka_unit_test(max_micro_batch_is_exact),
        cmocka_unit_test(max_micro_batch_is_exact_on_random_scenarios),
        cmocka_unit_test(max_micro_batch_zero_when_states_do_not_fit),
        cmocka_unit_test(every_stage_at_most_the_peak),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
