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

#include "csvin.h"
#include "model.h"

#define STEP_PATH "tests/validation/step.csv"
#define TOLERANCE 0.005
#define COLUMNS_MAX 48

struct row {
    char config[160], phase[32];
    struct scenario sc;
    uint64_t peak_bytes;
};

static const char *field(const struct csvin_record *rec, char header[][32], size_t n,
                         const char *name)
{
    for (size_t i = 0; i < n && i < rec->n_fields; i++)
        if (strcmp(header[i], name) == 0)
            return rec->fields[i];
    fail_msg("step.csv: no column '%s'", name);
    return "";
}

static uint64_t num(const struct csvin_record *rec, char header[][32], size_t n, const char *name)
{
    return strtoull(field(rec, header, n, name), NULL, 10);
}

static bool is(const struct csvin_record *rec, char header[][32], size_t n, const char *name,
               const char *word)
{
    return strcmp(field(rec, header, n, name), word) == 0;
}

/* The scenario of one measured step: the lesson's GPT layer, one GPU, the row's settings. */
static void row_of(const struct csvin_record *rec, char header[][32], size_t n, struct row *r)
{
    struct scenario *sc = &r->sc;
    snprintf(r->config, sizeof r->config, "%s", field(rec, header, n, "config"));
    snprintf(r->phase, sizeof r->phase, "%s", field(rec, header, n, "peak_phase"));
    scenario_lesson_example(sc);
    sc->layers = num(rec, header, n, "layers");
    sc->hidden = num(rec, header, n, "hidden");
    sc->heads = sc->kv_heads = num(rec, header, n, "heads");
    sc->vocab = num(rec, header, n, "vocab");
    sc->ffn = 4 * sc->hidden;
    sc->seq = num(rec, header, n, "seq");
    sc->micro_batch = sc->global_batch = num(rec, header, n, "micro_batch");
    sc->tied = num(rec, header, n, "tied") != 0;
    sc->dropout = num(rec, header, n, "dropout") != 0;
    sc->positions = is(rec, header, n, "positions", "learned") ? sc->seq : 0;
    sc->precision = is(rec, header, n, "precision", "fp32") ? PRECISION_FP32 : PRECISION_AUTOCAST;
    bool full = is(rec, header, n, "recompute", "full");
    sc->recompute = full ? RECOMPUTE_EVERY_K : RECOMPUTE_NONE;
    sc->ckpt_every = full ? 1 : 0;
    sc->loss = is(rec, header, n, "loss", "fused") ? LOSS_FUSED : LOSS_EAGER;
    sc->grad_buffer =
        is(rec, header, n, "grad_buffer", "persistent") ? GRAD_PERSISTENT : GRAD_ON_DEMAND;
    sc->optimizer_impl = is(rec, header, n, "optimizer_impl", "fused")    ? OPTIMIZER_FUSED
                         : is(rec, header, n, "optimizer_impl", "single") ? OPTIMIZER_SINGLE
                                                                          : OPTIMIZER_FOREACH;
    sc->peak = PEAK_STEP;
    sc->gpu_mem_bytes = 1000000000000ull;
    r->peak_bytes = num(rec, header, n, "peak_bytes") - num(rec, header, n, "rng_states_bytes");
}

struct fixture {
    struct row *rows;
    size_t count;
};

static int setup(void **state)
{
    static struct fixture fx;
    static char header[COLUMNS_MAX][32];
    FILE *f = fopen(STEP_PATH, "rb");
    if (f == NULL)
        return -1;
    struct diag d;
    diag_init(&d, NULL, NULL);
    struct csvin *in = csvin_new(f, STEP_PATH, &d);
    struct csvin_record rec;
    size_t n = 0, cap = 0;
    int rc;
    fx.rows = NULL;
    fx.count = 0;
    while (in != NULL && (rc = csvin_next(in, &rec)) != 0 && rc != -2) {
        if (rc < 0)
            continue;
        if (rec.line == 1) {
            for (n = 0; n < rec.n_fields && n < COLUMNS_MAX; n++)
                snprintf(header[n], sizeof header[n], "%s", rec.fields[n]);
            continue;
        }
        if (!is(&rec, header, n, "device", "cpu"))
            continue; /* a GPU's rows run softmax and LayerNorm in fp32: not this model */
        if (fx.count == cap) {
            cap = cap ? 2 * cap : 64;
            struct row *rows = realloc(fx.rows, cap * sizeof *rows);
            if (rows == NULL)
                break;
            fx.rows = rows;
        }
        row_of(&rec, header, n, &fx.rows[fx.count++]);
    }
    csvin_free(in);
    fclose(f);
    *state = &fx;
    return fx.count > 0 && d.count == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    free(fx->rows);
    return 0;
}

/* Every measured step within 0.5% of the model, at the same phase; every phase is the peak of
 * some row, so none passes vacuously. */
static void test_every_step_within_tolerance(void **state)
{
    const struct fixture *fx = *state;
    size_t failures = 0, seen[STEP_PHASES] = {0};
    double worst = 0;
    for (size_t i = 0; i < fx->count; i++) {
        const struct row *r = &fx->rows[i];
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
