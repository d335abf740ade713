/*
 * Tests of the report's words for what a scenario trains and how: a mixture of experts (its
 * words, none for a dense model, and the formulas of its states evaluating to the bytes beside
 * them), FP8, optimizers and fine-tuning, and the step's peak under --peak step (none under
 * --peak lesson).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "phrase_scenarios.h"
#include "input/config.h"
#include "report/report.h"
#include "report/report_phrases.h"
#include "report/report_values.h"
#include "base/strbuf.h"
#include "report/template.h"
#include "testutil.h"

/* ---- Mixture of experts: their words, and none for a dense model ---------------------------- */

/* The text of the shipped report of scenario `name` of scenarios_csv. */
static const char *report_text_of(struct scenario *scs, size_t n, const char *name, const char *dir)
{
    size_t i = 0;
    while (i < n && strcmp(scs[i].name, name) != 0)
        i++;
    assert_true(i < n);
    struct report_options opt;
    report_options_init(&opt);
    opt.out_dir = dir;
    struct diag d;
    diag_init(&d, NULL, NULL);
    if (report_write(&scs[i], 1, &opt, &d) != 0)
        fail_msg("%s", d.first);
    return test_sh("pdftotext '%s/report.pdf' - 2>/dev/null | tr -s ' \\n' '  '", dir);
}

static void test_moe_words(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-moe-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct scenario *scs = calloc(32, sizeof *scs);
    assert_non_null(scs);
    size_t n = read_scenarios(scs, 32);
    /* Mixtral, dropless, ZeRO-3 over 8 GPUs that are one expert-parallel group of 8. */
    const char *text = report_text_of(scs, n, "moe-dropless", dir);
    static const char *const mixtral[] = {
        "(46.7 B), 12.9 B active per token, trained on",
        "dp=8, tp=1, pp=1, ep=8, ZeRO-3",
        "E = 8, top 2, f_e = 14336",
        "Ψ = 46.7 B, 12.9 B active",
        "2 B × (1,605,636,096 dense / dp + 5,637,144,576 routed / edp) 11,675,698,176 11.7 GB",
        "states of the dense part dense (params ÷ tp) × (2 + 2 + 12) B / dp 3,211,272,192",
        "states of the routed experts routed (params ÷ etp·ep) × (2 + 2 + 12) B, edp = 1",
        "each of the T = 4,096 tokens of a micro-batch goes to k = 2 of the E = 8 routed experts",
        "get k·T = 8,192 token copies",
        "up to ep·k·T = 65,536 copies to one GPU (ep = 8)",
        "Parameters of one MoE layer, matrix by matrix: one of the 8 routed experts drawn",
    };
    for (size_t i = 0; i < sizeof mixtral / sizeof *mixtral; i++)
        if (!strstr(text, mixtral[i]))
            fail_msg("the Mixtral report lacks '%s'", mixtral[i]);
    /* DeepSeek-V3 with its own capacity factor, etp = 1 under tp = 2. */
    text = report_text_of(scs, n, "moe-capacity", dir);
    static const char *const deepseek[] = {
        "L = 61, h = 7168, a = 128, MLA",
        "E = 256, top 8, f_e = 2048, f_s = 2048",
        "dense MLP first 3 layers, f = 18432",
        "ep=4, etp=1, ZeRO-1",
        "B, edp = 4",
        "Routing with a capacity factor of 1.25",
    };
    for (size_t i = 0; i < sizeof deepseek / sizeof *deepseek; i++)
        if (!strstr(text, deepseek[i]))
            fail_msg("the DeepSeek-V3 report lacks '%s'", deepseek[i]);
    /* A dense model has none of them. */
    text = report_text_of(scs, n, "tp-sp", dir);
    static const char *const none[] = {"active per token", "ep=", "routed (params", "Routing",
                                       "MoE"};
    for (size_t i = 0; i < sizeof none / sizeof *none; i++)
        if (strstr(text, none[i]))
            fail_msg("a dense model's report says '%s'", none[i]);
    free(scs);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- The formulas of a mixture of experts' states evaluate to the bytes beside them --------- */

/* A reader's evaluation of a formula cell of the table of terms: numbers (with thousands
 * separators), +, /, ×, parentheses, the names dp, edp, dense, routed and params; "B" and a
 * parenthesised "(params ÷ ...)" are read as words; "1,234 dense" names a count. */
struct formula_reader {
    const char *p;
    long double dp, edp, dense, routed;
    bool bad;
};

static void fr_space(struct formula_reader *f)
{
    while (*f->p == ' ')
        f->p++;
}

static bool fr_word(struct formula_reader *f, const char *w)
{
    fr_space(f);
    size_t n = strlen(w);
    if (strncmp(f->p, w, n) != 0 || (f->p[n] >= 'a' && f->p[n] <= 'z'))
        return false;
    f->p += n;
    return true;
}

static long double fr_number(struct formula_reader *f)
{
    long double v = 0;
    while ((*f->p >= '0' && *f->p <= '9') || (*f->p == ',' && f->p[1] >= '0' && f->p[1] <= '9'))
        if (*f->p++ != ',')
            v = v * 10 + (f->p[-1] - '0');
    return v;
}

static long double fr_sum(struct formula_reader *f);

static long double fr_factor(struct formula_reader *f)
{
    fr_space(f);
    long double v;
    if (*f->p >= '0' && *f->p <= '9') {
        v = fr_number(f);
        if (fr_word(f, "dense"))
            f->dense = v;
        else if (fr_word(f, "routed"))
            f->routed = v;
    } else if (*f->p == '(') {
        f->p++;
        v = fr_sum(f);
        fr_space(f);
        f->bad |= *f->p != ')';
        f->p++;
    } else if (fr_word(f, "dense")) {
        v = f->dense;
        fr_space(f);
        if (strncmp(f->p, "(params ÷", strlen("(params ÷")) == 0) /* what divided them */
            f->p = strchr(f->p, ')') + 1;
    } else if (fr_word(f, "routed")) {
        v = f->routed;
        fr_space(f);
        if (strncmp(f->p, "(params ÷", strlen("(params ÷")) == 0)
            f->p = strchr(f->p, ')') + 1;
    } else if (fr_word(f, "params")) {
        v = f->dense + f->routed;
    } else if (fr_word(f, "edp")) {
        v = f->edp;
    } else if (fr_word(f, "dp")) {
        v = f->dp;
    } else {
        f->bad = true;
        return 0;
    }
    fr_word(f, "params");
    fr_word(f, "B");
    return v;
}

static long double fr_product(struct formula_reader *f)
{
    long double v = fr_factor(f);
    for (;;) {
        fr_space(f);
        if (*f->p == '/') {
            f->p++;
            v /= fr_factor(f);
        } else if (strncmp(f->p, "×", strlen("×")) == 0) {
            f->p += strlen("×");
            v *= fr_factor(f);
        } else {
            return v;
        }
    }
}

static long double fr_sum(struct formula_reader *f)
{
    long double v = fr_product(f);
    for (;;) {
        fr_space(f);
        if (*f->p != '+')
            return v;
        f->p++;
        v += fr_product(f);
    }
}

/* Evaluates the formula of the row labelled `label` in text (pdftotext, blanks squeezed) and
 * returns it; *shown gets the bytes the row shows. */
static long double formula_of_row(const char *text, const char *label, struct formula_reader *f,
                                  long double *shown)
{
    const char *row = strstr(strstr(text, "term formula (this GPU)"), label);
    if (!row)
        fail_msg("no row '%s' in %s", label, text);
    f->p = row + strlen(label);
    long double v = fr_sum(f);
    if (strncmp(f->p, ", edp = ", 8) == 0) { /* the routed experts' row names edp */
        f->p += 8;
        fr_number(f);
    }
    fr_space(f);
    *shown = fr_number(f);
    if (f->bad || *shown == 0)
        fail_msg("cannot read the formula of '%s': %s", label, row);
    return v;
}

static void test_moe_formulas_evaluate(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-moe-formula-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct scenario *scs = calloc(48, sizeof *scs);
    assert_non_null(scs);
    size_t n = read_scenarios(scs, 48);
    n += read_csv(step_csv, sizeof step_csv - 1, PEAK_STEP, scs + n, 48 - n);
    n += read_csv(parallel_csv, sizeof parallel_csv - 1, PEAK_STEP, scs + n, 48 - n);
    /* Mixtral under ZeRO-3 (edp = 1), DeepSeek-V3 under ZeRO-1 (edp = 4), a small MoE on four
     * pipeline stages without ZeRO. */
    static const struct {
        const char *name;
        long double dp, edp;
    } cases[] = {{"moe-dropless", 8, 1}, {"moe-capacity", 8, 4}, {"middle-stage", 1, 1}};
    static const char *const rows[] = {"weights ", "gradients ", "optimizer states ",
                                       "states of the dense part ",
                                       "states of the routed experts "};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        report_text_of(scs, n, cases[c].name, dir);
        /* In the order of drawing: a wrapped cell's lines follow each other. */
        const char *text =
            test_sh("pdftotext -raw '%s/report.pdf' - 2>/dev/null | tr -s ' \\n' '  '", dir);
        struct formula_reader f = {NULL, cases[c].dp, cases[c].edp, 0, 0, false};
        long double states = 0, parts = 0;
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
            long double shown, v = formula_of_row(text, rows[i], &f, &shown);
            /* each state is rounded up to the byte on its own: a byte or two per part */
            if (v < shown - 4 || v > shown + 4)
                fail_msg("%s: '%s' evaluates to %.0Lf, the row shows %.0Lf", cases[c].name, rows[i],
                         v, shown);
            if (i == 0)
                assert_true(f.dense > 0 && f.routed > 0); /* the weights name both counts */
            if (i < 3)
                states += shown;
            else
                parts += shown;
        }
        assert_true(states == parts); /* the two parts are the three states */
    }
    free(scs);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- FP8 training: the configuration, the weights' formula and the note (doc/model.md 3.7) -- */

static void test_fp8_words(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-fp8-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct scenario scs[3];
    assert_int_equal(read_csv(fp8_csv, sizeof fp8_csv - 1, PEAK_STEP, scs, 3), 3);
    /* Llama 3.1 8B on H100s: 2 bytes of copies for each of its 6,979,321,856 GEMM parameters. */
    const char *text = report_text_of(scs, 3, "fp8-h100", dir);
    static const char *const h100[] = {
        "mixed + fp8 tensor: 2+2+12 B/param",
        "2 B × 8,030,261,248 params + 14.0 GB FP8 copies",
        "keeps a cached FP8 copy and its transpose, 2 bytes per GEMM parameter, 14.0 GB on this "
        "GPU with the weights",
        "The GEMMs, 87% of the", /* a page break, */
        "run at 1979 TFLOP/s.",
    };
    for (size_t i = 0; i < sizeof h100 / sizeof *h100; i++)
        if (!strstr(text, h100[i]))
            fail_msg("the FP8 report on H100s lacks '%s'", h100[i]);
    text = report_text_of(scs, 3, "fp8-b200", dir);
    if (!strstr(text, "one cached FP8 copy, which Blackwell reads both ways, 1 byte per GEMM "
                      "parameter, 7.0 GB on this GPU"))
        fail_msg("the FP8 report on B200s lacks its one copy: %s", text);
    text = report_text_of(scs, 3, "fp8-mxfp8", dir);
    if (!strstr(text, "2 (1 + 1/32) bytes per GEMM parameter, 14.4 GB on this GPU"))
        fail_msg("the MXFP8 report lacks its copies: %s", text);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- Optimizers and fine-tuning: the configuration, the states' formulas, the notes --------- */

static void test_tuning_words(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-tuning-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct scenario scs[5];
    assert_int_equal(read_csv(tuning_csv, sizeof tuning_csv - 1, PEAK_STEP, scs, 5), 5);
    /* Llama 3.1 8B with q, v adapters of rank 16: 6,815,744 of them (doc/model.md 3.6). */
    const char *text = report_text_of(scs, 5, "lora-qv", dir);
    static const char *const lora[] = {
        "mixed: 6.82 M adapters × 2+2+12 B",
        "LoRA r = 16 on q, v; bf16 base",
        "16.1 GB frozen + 2 B × 6.82 M adapters",
        "12 B × adapters",
        "the base is frozen - its weights only, no gradients, no optimizer",
    };
    for (size_t i = 0; i < sizeof lora / sizeof *lora; i++)
        if (!strstr(text, lora[i]))
            fail_msg("the LoRA report lacks '%s'", lora[i]);
    text = report_text_of(scs, 5, "qlora-offload", dir);
    static const char *const qlora[] = {
        "QLoRA r = 64 on q, v; NF4 base",
        "12 B × adapters, in CPU memory",
        "35.3 GB on this", /* the NF4 blocks of Llama 3.1 70B, */
        "upcast to fp32, 8.4 GB, as PEFT's",
    };
    for (size_t i = 0; i < sizeof qlora / sizeof *qlora; i++)
        if (!strstr(text, qlora[i]))
            fail_msg("the QLoRA report lacks '%s'", qlora[i]);
    text = report_text_of(scs, 5, "full-8bit", dir);
    if (!strstr(text, "mixed: 2 + 2 + 6.03 bytes/param") ||
        !strstr(text, "AdamW 8-bit (bitsandbytes)") || !strstr(text, "6.03 B × params"))
        fail_msg("the 8-bit AdamW report lacks its bytes: %s", text);
    text = report_text_of(scs, 5, "lora-all", dir);
    if (!strstr(text, "LoRA r = 8 on all linears; fp32 base") ||
        !strstr(text, "SGD, fp32 momentum") || !strstr(text, "4 B × adapters / dp"))
        fail_msg("the sharded LoRA report lacks its words: %s", text);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- The step's peak: its words under --peak step, none under --peak lesson ---------------- */

static void test_step_words(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-step-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct scenario *scs = calloc(40, sizeof *scs);
    assert_non_null(scs);
    size_t n = read_scenarios(scs, 40);
    n += read_csv(step_csv, sizeof step_csv - 1, PEAK_STEP, scs + n, 40 - n);
    n += read_csv(parallel_csv, sizeof parallel_csv - 1, PEAK_STEP, scs + n, 40 - n);
    /* The worked example under --peak step: the step's peak beside the lesson's sum, in the
     * verdict box, the table of terms and the phases chart; the choices in the notes. */
    const char *text = report_text_of(scs, n, "step-lesson", dir);
    static const char *const step[] = {
        "Does not fit: step peak 120.2 GB > budget 68.0 GB",
        "Step peak 120.2 GB at the start of the backward pass (the static sum, states + "
        "activations + logits: 116.1 GB).",
        "peak highest phase: the start of the backward pass",
        "the static sum states + activations + logits (--peak lesson) 116,083,032,064 116.1 GB",
        "What the most loaded GPU holds at each phase of a step: peak 120.2 GB at the start of the "
        "backward pass",
        "forward end backward start backward end optimizer step the static sum",
        "as configured: peak 120.2 GB at the start of the backward pass",
        "The step's peak assumes impl=memfit (the kernels of doc/model.md 4); loss=eager",
        "(cross-entropy on fp32 logits: three s·b·V/t tensors); grad_buffer=on_demand",
        "optimizer_impl=foreach (two fp32 temporaries per",
        "precision=mixed",
        "the columns of those names change them",
        "tracked; tests/validation/step.csv): every measured peak within 0.5% of the model's, at "
        "the same "
        "phase.",
    };
    for (size_t i = 0; i < sizeof step / sizeof *step; i++)
        if (!strstr(text, step[i]))
            fail_msg("the step report lacks '%s'", step[i]);
    /* Peaking at the optimizer step, where no activations are alive: the checkpointing chart says
     * why its curve of the peak is flat, and what k changes. */
    text = report_text_of(scs, n, "step-optimizer", dir);
    if (!strstr(text, "The peak is at the optimizer step, where the activations are gone:") ||
        !strstr(text, "checkpointing does not change it, and its curve is flat at") ||
        !strstr(text, "What k changes is"))
        fail_msg("the optimizer-step report does not say why the peak's curve is flat: %s", text);
    if (strstr(report_text_of(scs, n, "step-lesson", dir), "The peak is at the optimizer step"))
        fail_msg("a peak at the backward pass is said to be at the optimizer step");
    /* The same scenario under --peak lesson reads as before the step model. */
    text = report_text_of(scs, n, "lesson", dir);
    static const char *const lesson[] = {"Does not fit: peak 116.1 GB > budget 68.0 GB",
                                         "peak states + activations + logits",
                                         "The formulas count model states"};
    for (size_t i = 0; i < sizeof lesson / sizeof *lesson; i++)
        if (!strstr(text, lesson[i]))
            fail_msg("the lesson report lacks '%s'", lesson[i]);
    static const char *const none[] = {"step peak",  "Step peak", "the static sum states",
                                       "phase",      "loss=",     "step.csv",
                                       "temporaries"};
    for (size_t i = 0; i < sizeof none / sizeof *none; i++)
        if (strstr(text, none[i]))
            fail_msg("the lesson report says '%s'", none[i]);
    free(scs);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_moe_words),  cmocka_unit_test(test_moe_formulas_evaluate),
        cmocka_unit_test(test_fp8_words),  cmocka_unit_test(test_tuning_words),
        cmocka_unit_test(test_step_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
