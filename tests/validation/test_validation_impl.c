/*
 * test_validation_impl: memfit's implementation profiles (doc/model.md section 4.12) against
 * PyTorch (tests/validation/impl.csv, measured by impl.py with saved-tensor hooks, bf16, CPU):
 * one layer written op for op as Megatron-Core (fused norms and SwiGLU, FlashAttention, the MoE
 * layer's argsort permute, experts weighting their rows in the SwiGLU, unpermute; GPT layers),
 * transformers (LlamaRMSNorm, eager, sdpa and flash_attention_2 attention, LlamaMLP, Mixtral's MoE
 * block, Qwen3's q and k norms; in bf16 and with fp32 weights under autocast, as Trainer's
 * bf16=True runs it) and PEFT (fp32 LoRA adapters under autocast, on q and v or on every linear)
 * write it. Every row must agree with memfit under the row's profile within 2%, the rows of shapes
 * measured after the profiles were written (held_out) included; the count also holds PEFT's bf16
 * copies of the adapters, which memfit adds to the weights. memfit's own profile misses the Llama
 * and MoE rows by more than 2%, so the agreement is the profiles', and --peak lesson keeps
 * memfit's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fixture_csv.h"
#include "model/impl.h"
#include "model/layer.h"
#include "model/model.h"

#define IMPL_PATH "tests/validation/impl.csv"
#define TOLERANCE 0.02
#define MIN_ROWS 8      /* rows of each profile */
#define MIN_HELD_OUT 24 /* rows of held-out shapes */

struct row {
    char layer[160];
    bool held_out;
    struct scenario sc;
    uint64_t saved_bytes;
};

/* The scenario of one measured layer: one GPU, one layer, the step's peak (the profiles'), the
 * row's profile, attention, sizes and adapters. */
static void row_of(const struct csvin_record *rec, const struct fixture_header *h, struct row *r)
{
    struct scenario *sc = &r->sc;
    snprintf(r->layer, sizeof r->layer, "%s", fixture_cell(rec, h, "layer"));
    scenario_lesson_example(sc);
    sc->peak = PEAK_STEP;
    sc->layers = 1;
    sc->tied = false;
    bool gpt = fixture_is(rec, h, "kind", "gpt");
    sc->arch = gpt ? ARCH_GPT : ARCH_LLAMA;
    sc->dropout = gpt; /* Megatron's GPT layer with its dropout */
    static const char *const sizes[] = {"seq", "micro_batch", "hidden", "heads",      "kv_heads",
                                        "ffn", "experts",     "top_k",  "expert_ffn", "shared_ffn"};
    uint64_t *at[] = {&sc->seq, &sc->micro_batch, &sc->hidden, &sc->heads,      &sc->kv_heads,
                      &sc->ffn, &sc->experts,     &sc->top_k,  &sc->expert_ffn, &sc->shared_ffn};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
        *at[i] = fixture_u64(rec, h, sizes[i]);
    if (sc->experts > 0)
        sc->ffn = sc->expert_ffn; /* no dense layer: unused */
    sc->impl = fixture_is(rec, h, "impl", "megatron") ? IMPL_MEGATRON
               : fixture_is(rec, h, "impl", "hf")     ? IMPL_HF
                                                      : IMPL_HF_PEFT;
    bool eager = fixture_is(rec, h, "attention", "eager");
    sc->attention = eager ? ATTENTION_PLAIN : ATTENTION_FLASH;
    sc->sdpa = fixture_is(rec, h, "attention", "sdpa");
    sc->lora_rank = fixture_u64(rec, h, "lora_rank");
    if (sc->lora_rank > 0) {
        sc->finetune = FINETUNE_LORA;
        sc->lora_targets = fixture_is(rec, h, "lora_targets", "qv") ? LORA_QV : LORA_ALL_LINEAR;
    }
    sc->qk_norm = fixture_u64(rec, h, "qk_norm") ? QK_NORM_HEAD : QK_NORM_NONE; /* Qwen3 */
    if (fixture_is(rec, h, "precision", "autocast")) /* fp32 weights under autocast */
        sc->precision = PRECISION_AUTOCAST;
    r->held_out = fixture_u64(rec, h, "held_out") != 0;
    r->saved_bytes = fixture_u64(rec, h, "saved_bytes");
}

/* fixture_rows' row function. */
static void fill_row(const struct csvin_record *rec, const struct fixture_header *h, void *out)
{
    row_of(rec, h, out);
}

static int setup(void **state)
{
    static struct fixture_rows fx = {NULL, sizeof(struct row), 0, 0, fill_row};
    *state = &fx;
    return fixture_load(IMPL_PATH, &fx);
}

static int teardown(void **state)
{
    fixture_free(*state);
    return 0;
}

/* The bytes memfit counts for the measured layer under sc's profile: its activations; under
 * precision=autocast autocast's bf16 copies of the layer's GEMM weights, which the step model
 * counts (doc/model.md 10.2); and the adapters' bf16 copies that hf-peft adds to the weights
 * (the weights against the same scenario without them: hf keeps the hf-peft layer's tensors but
 * for them). */
static uint64_t predicted(const struct scenario *sc)
{
    struct model_layer_act a;
    assert_int_equal(model_layer_act(sc, &a), MODEL_OK);
    if (sc->precision == PRECISION_AUTOCAST) {
        uint64_t gemm, routed;
        assert_true(layer_gemm_params(sc, LAYER_DENSE, &gemm, &routed));
        return a.total + 2 * gemm;
    }
    if (sc->impl != IMPL_HF_PEFT)
        return a.total;
    struct scenario no_copies = *sc;
    no_copies.impl = IMPL_HF;
    struct terms with, without;
    assert_int_equal(model_eval(sc, &with), MODEL_OK);
    assert_int_equal(model_eval(&no_copies, &without), MODEL_OK);
    assert_true(with.weights_bytes > without.weights_bytes);
    return a.total + (with.weights_bytes - without.weights_bytes);
}

/* Every measured layer within 2%; the worst gap of each profile, held-out shapes apart. */
static void test_every_row_within_tolerance(void **state)
{
    const struct fixture_rows *fx = *state;
    const struct row *all = fx->rows;
    double worst[IMPL_COUNT][2] = {{0}};
    size_t rows[IMPL_COUNT][2] = {{0}}, failures = 0;
    for (size_t i = 0; i < fx->count; i++) {
        const struct row *r = &all[i];
        uint64_t p = predicted(&r->sc);
        double g = fixture_gap(r->saved_bytes, p);
        rows[r->sc.impl][r->held_out]++;
        if (g > worst[r->sc.impl][r->held_out])
            worst[r->sc.impl][r->held_out] = g;
        if (g > TOLERANCE) {
            failures++;
            printf("FAIL %s: measured %llu, memfit %llu, gap %.3f%%\n", r->layer,
                   (unsigned long long)r->saved_bytes, (unsigned long long)p, 100 * g);
        }
    }
    size_t held_out = 0;
    for (int k = IMPL_MEGATRON; k < IMPL_COUNT; k++) {
        for (int held = 0; held < 2; held++)
            printf("%s%s: %zu rows, worst gap %.3f%%\n", impl_name((enum impl)k),
                   held ? " (held-out shapes)" : "", rows[k][held], 100 * worst[k][held]);
        assert_true(rows[k][0] >= MIN_ROWS && rows[k][1] >= MIN_ROWS / 2);
        held_out += rows[k][1];
    }
    assert_true(held_out >= MIN_HELD_OUT);
    assert_int_equal(failures, 0);
}

/* The agreement is the profiles': memfit's own assumptions miss every Llama and MoE row by more
 * than 2% (a GPT layer is the same under memfit and megatron: doc/model.md 4.12). */
static void test_memfit_profile_misses(void **state)
{
    const struct fixture_rows *fx = *state;
    const struct row *all = fx->rows;
    size_t checked = 0, missed = 0;
    for (size_t i = 0; i < fx->count; i++) {
        const struct row *r = &all[i];
        struct scenario own = r->sc;
        own.impl = IMPL_MEMFIT;
        own.sdpa = false;
        if (own.arch == ARCH_GPT) {
            assert_int_equal(predicted(&own), predicted(&r->sc));
            continue;
        }
        checked++;
        missed += fixture_gap(r->saved_bytes, predicted(&own)) > TOLERANCE;
    }
    assert_true(checked > 0);
    assert_int_equal(missed, checked);
}

/* Megatron-Core weights the routed rows inside the experts' activation (doc/model.md 4.12): its
 * MoE rows are not those of the older unpermute that multiplied the expert outputs by the
 * probabilities and kept them (2h a routed row more): counted so, every one misses by more than
 * 2%. */
static void test_megatron_moe_keeps_no_expert_outputs(void **state)
{
    const struct fixture_rows *fx = *state;
    const struct row *all = fx->rows;
    size_t rows = 0, rejected = 0;
    for (size_t i = 0; i < fx->count; i++) {
        const struct row *r = &all[i];
        if (r->sc.impl != IMPL_MEGATRON || r->sc.experts == 0)
            continue;
        uint64_t routed = layer_routed_rows(&r->sc, r->sc.seq * r->sc.micro_batch);
        rows++;
        rejected +=
            fixture_gap(r->saved_bytes, predicted(&r->sc) + 2 * r->sc.hidden * routed) > TOLERANCE;
    }
    assert_true(rows >= MIN_ROWS / 2);
    assert_int_equal(rejected, rows);
}

/* --peak lesson follows memfit's assumptions whatever the profile (doc/model.md 4.12). */
static void test_lesson_keeps_memfit(void **state)
{
    const struct fixture_rows *fx = *state;
    const struct row *all = fx->rows;
    for (size_t i = 0; i < fx->count; i++) {
        struct scenario lesson = all[i].sc, own;
        lesson.peak = PEAK_LESSON;
        own = lesson;
        own.impl = IMPL_MEMFIT;
        own.sdpa = false;
        struct model_layer_act a, b;
        assert_int_equal(model_layer_act(&lesson, &a), MODEL_OK);
        assert_int_equal(model_layer_act(&own, &b), MODEL_OK);
        assert_int_equal(a.total, b.total);
        struct terms ta, tb;
        assert_int_equal(model_eval(&lesson, &ta), MODEL_OK);
        assert_int_equal(model_eval(&own, &tb), MODEL_OK);
        assert_int_equal(ta.peak_bytes, tb.peak_bytes);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_row_within_tolerance),
        cmocka_unit_test(test_memfit_profile_misses),
        cmocka_unit_test(test_megatron_moe_keeps_no_expert_outputs),
        cmocka_unit_test(test_lesson_keeps_memfit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
