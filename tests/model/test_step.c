/*
 * test_step: the step model (doc/model.md section 10.2) against whole training steps measured
 * with PyTorch (tests/validation/step.csv: forward, fp32 cross-entropy, backward and AdamW of the
 * lesson's GPT stack, every live storage tracked; method in tests/validation/README.md). Every
 * measured peak within 0.5% and at the same phase. The CPU run's RNG states of checkpointing are
 * host memory on a GPU: the comparison leaves them out, as the model does.
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
#include "model/model.h"

#define STEP_PATH "tests/validation/step.csv"
#define TOLERANCE 0.005

struct row {
    char config[160], phase[32];
    struct scenario sc;
    uint64_t peak_bytes;
};

/* The scenario of one measured step: the lesson's GPT layer, one GPU, the row's settings. */
static void row_of(const struct csvin_record *rec, const struct fixture_header *h, struct row *r)
{
    struct scenario *sc = &r->sc;
    snprintf(r->config, sizeof r->config, "%s", fixture_cell(rec, h, "config"));
    snprintf(r->phase, sizeof r->phase, "%s", fixture_cell(rec, h, "peak_phase"));
    scenario_lesson_example(sc);
    sc->layers = fixture_u64(rec, h, "layers");
    sc->hidden = fixture_u64(rec, h, "hidden");
    sc->heads = sc->kv_heads = fixture_u64(rec, h, "heads");
    sc->vocab = fixture_u64(rec, h, "vocab");
    sc->ffn = 4 * sc->hidden;
    sc->seq = fixture_u64(rec, h, "seq");
    sc->micro_batch = sc->global_batch = fixture_u64(rec, h, "micro_batch");
    sc->tied = fixture_u64(rec, h, "tied") != 0;
    sc->dropout = fixture_u64(rec, h, "dropout") != 0;
    sc->positions = fixture_is(rec, h, "positions", "learned") ? sc->seq : 0;
    sc->precision = fixture_is(rec, h, "precision", "fp32") ? PRECISION_FP32 : PRECISION_AUTOCAST;
    bool full = fixture_is(rec, h, "recompute", "full");
    sc->recompute = full ? RECOMPUTE_EVERY_K : RECOMPUTE_NONE;
    sc->ckpt_every = full ? 1 : 0;
    sc->loss = fixture_is(rec, h, "loss", "fused") ? LOSS_FUSED : LOSS_EAGER;
    sc->grad_buffer =
        fixture_is(rec, h, "grad_buffer", "persistent") ? GRAD_PERSISTENT : GRAD_ON_DEMAND;
    sc->optimizer_impl = fixture_is(rec, h, "optimizer_impl", "fused")    ? OPTIMIZER_FUSED
                         : fixture_is(rec, h, "optimizer_impl", "single") ? OPTIMIZER_SINGLE
                                                                          : OPTIMIZER_FOREACH;
    sc->peak = PEAK_STEP;
    sc->gpu_mem_bytes = 1000000000000ull;
    r->peak_bytes = fixture_u64(rec, h, "peak_bytes") - fixture_u64(rec, h, "rng_states_bytes");
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
    return fixture_load(STEP_PATH, &fx);
}

static int teardown(void **state)
{
    fixture_free(*state);
    return 0;
}

/* Every measured step within 0.5% of the model, at the same phase; every phase is the peak of
 * some row, so none passes vacuously. */
static void test_every_step_within_tolerance(void **state)
{
    const struct fixture_rows *fx = *state;
    const struct row *all = fx->rows;
    size_t failures = 0, seen[STEP_PHASES] = {0};
    double worst = 0;
    for (size_t i = 0; i < fx->count; i++) {
        const struct row *r = &all[i];
        struct terms t;
        assert_int_equal(model_peak(&r->sc, &t), MODEL_OK);
        double m = (double)r->peak_bytes, p = (double)t.peak_bytes;
        double gap = (m > p ? m - p : p - m) / m;
        const char *phase = step_phase_name(t.peak_phase);
        worst = gap > worst ? gap : worst;
        seen[t.peak_phase]++;
        if (gap > TOLERANCE || strcmp(phase, r->phase) != 0) {
            failures++;
            printf("FAIL %s: measured %llu at %s, model %llu at %s (%.3f%%)\n", r->config,
                   (unsigned long long)r->peak_bytes, r->phase, (unsigned long long)t.peak_bytes,
                   phase, 100 * gap);
        }
    }
    printf("%zu steps, worst gap %.3f%%\n", fx->count, 100 * worst);
    assert_int_equal(failures, 0);
    for (int ph = 0; ph < STEP_PHASES; ph++)
        assert_true(seen[ph] > 0);
}

/* Under --peak lesson nothing changes: the worked example's 116.1 GB. */
static void test_lesson_peak_unchanged(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    struct terms t;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.peak_bytes, 116083032064ull);
    sc.peak = PEAK_STEP;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    /* A real step of the worked example peaks at the start of the backward pass, at 120.2 GB:
     * the sum (with the norms' statistics, 16 s b a layer), less the gradients that do not
     * exist yet (2.6 GB), plus two more fp32 s b V tensors of the loss (2 x 3.3 GB), the inputs
     * of the final norm and the output layer and the embedding's dropout mask (5 sbh), the
     * token ids and targets and the final norm's statistics (24 s b). */
    uint64_t sb = 2048 * 8, sbh = sb * 2048;
    assert_int_equal(t.peak_phase, STEP_BACKWARD_START);
    assert_int_equal(t.lesson_peak_bytes, 116083032064ull + 24 * 16 * sb);
    assert_int_equal(t.peak_bytes,
                     t.lesson_peak_bytes - t.grads_bytes + 2 * t.logits_bytes + 5 * sbh + 24 * sb);
    assert_int_equal(t.peak_bytes, 120221716480ull);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_step_within_tolerance),
        cmocka_unit_test(test_lesson_peak_unchanged),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
