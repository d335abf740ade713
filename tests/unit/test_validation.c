/*
 * test_validation: memfit's per-layer activation formulas against PyTorch.
 *
 * tests/validation/activations.csv holds the bytes that autograd saves for backward in one GPT
 * layer and one Llama layer, measured by tests/validation/measure.py (`make validate`) with
 * saved-tensor hooks, in bf16 on the CPU (lesson section 5, "In code"). Each row is turned into a
 * scenario and compared with model_layer_act (SPEC section 3), or with model_ckpt_bytes for a
 * checkpointed layer, which keeps only its input. Every row must agree within 2%.
 *
 * Where the small gap comes from (the formulas leave out O(sb) terms, as the lesson's proof says):
 * - each GPT LayerNorm saves its mean and 1/std per row; PyTorch 1.13 keeps them in the input's
 *   dtype on the CPU (bf16: 2 + 2 bytes per row per norm; CUDA kernels keep fp32, 8 bytes);
 * - each fused RMSNorm saves one fp32 1/rms per row (4 bytes per row per norm);
 * - the written-out RMSNorm keeps its 1/rms in bf16 (2 bytes per row per norm);
 * - plain attention divides the scores by a Python float, which autograd keeps as an 8-byte
 *   0-dim double tensor.
 * So a layer keeps 8 s b bytes (4 s b with the written-out norm; + 8 with plain attention) more
 * than the formula, at most 8/(32h) of a GPT layer: under 0.2% for h >= 128. In the committed
 * fixture every row's residual is exactly that. The fp32 log-sum-exp of fused attention is in the
 * formula (4asb), and a checkpointed layer matches 2sbh exactly.
 *
 * MEMFIT_VALIDATION_CSV names another fixture with the same columns (e.g. other shapes).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <csv.h>

#include "model.h"
#include "report_values.h"

#define FIXTURE_PATH "tests/validation/activations.csv"
#define TOLERANCE 0.02
#define MIN_SHAPES 8

enum norm { NORM_LAYERNORM, NORM_FUSED, NORM_WRITTEN };

/* The columns the test reads; `layer` and `variant` are labels for people. */
enum column {
    COL_ARCH, COL_SEQ, COL_MICRO_BATCH, COL_HIDDEN, COL_HEADS, COL_KV_HEADS, COL_FFN,
    COL_DROPOUT, COL_ATTENTION, COL_CHECKPOINT, COL_NORM, COL_SAVED_BYTES, COL_LAYER,
    COL_COUNT
};

static const char *const column_names[COL_COUNT] = {
    "arch", "seq", "micro_batch", "hidden", "heads", "kv_heads", "ffn",
    "dropout", "attention", "checkpoint", "norm", "saved_bytes", "layer",
};

struct fixture_row {
    char layer[96];
    enum arch arch;
    uint64_t seq, micro_batch, hidden, heads, kv_heads, ffn;
    bool dropout, checkpoint;
    enum attention attention;
    enum norm norm;
    uint64_t saved_bytes;
};

struct fixture {
    struct fixture_row *rows;
    size_t count, cap;
    /* parser state */
    int column_of_field[64]; /* field index -> enum column, -1 when ignored */
    size_t field;            /* index of the field being read in the current record */
    size_t record;           /* 0: the header */
    struct fixture_row cur;
    unsigned seen;           /* bit per enum column read in the current record */
    char error[256];         /* first error, "" when none */
};

static void fixture_fail(struct fixture *fx, const char *what, const char *value)
{
    if (fx->error[0] == '\0')
        snprintf(fx->error, sizeof fx->error, "record %zu: %s '%s'", fx->record, what, value);
}

static bool parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (s[0] < '0' || s[0] > '9')
        return false;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *out = (uint64_t)v;
    return true;
}

static bool parse_flag(const char *s, bool *out)
{
    if (strcmp(s, "0") == 0 || strcmp(s, "1") == 0) {
        *out = s[0] == '1';
        return true;
    }
    return false;
}

static void header_field(struct fixture *fx, const char *s)
{
    if (fx->field >= sizeof fx->column_of_field / sizeof fx->column_of_field[0]) {
        fixture_fail(fx, "too many columns at", s);
        return;
    }
    fx->column_of_field[fx->field] = -1;
    for (int c = 0; c < COL_COUNT; c++)
        if (strcmp(s, column_names[c]) == 0)
            fx->column_of_field[fx->field] = c;
}

static bool set_enum_field(struct fixture_row *r, int col, const char *s)
{
    if (col == COL_ARCH) {
        r->arch = strcmp(s, "llama") == 0 ? ARCH_LLAMA : ARCH_GPT;
        return strcmp(s, "gpt") == 0 || strcmp(s, "llama") == 0;
    }
    if (col == COL_ATTENTION) {
        r->attention = strcmp(s, "flash") == 0 ? ATTENTION_FLASH : ATTENTION_PLAIN;
        return strcmp(s, "plain") == 0 || strcmp(s, "flash") == 0;
    }
    /* COL_NORM */
    if (strcmp(s, "layernorm") == 0)
        r->norm = NORM_LAYERNORM;
    else if (strcmp(s, "fused") == 0)
        r->norm = NORM_FUSED;
    else if (strcmp(s, "written") == 0)
        r->norm = NORM_WRITTEN;
    else
        return false;
    return true;
}

static bool set_field(struct fixture_row *r, int col, const char *s)
{
    uint64_t *num[COL_COUNT] = {NULL};
    num[COL_SEQ] = &r->seq;
    num[COL_MICRO_BATCH] = &r->micro_batch;
    num[COL_HIDDEN] = &r->hidden;
    num[COL_HEADS] = &r->heads;
    num[COL_KV_HEADS] = &r->kv_heads;
    num[COL_FFN] = &r->ffn;
    num[COL_SAVED_BYTES] = &r->saved_bytes;
    if (num[col] != NULL)
        return parse_u64(s, num[col]) && *num[col] > 0;
    if (col == COL_DROPOUT)
        return parse_flag(s, &r->dropout);
    if (col == COL_CHECKPOINT)
        return parse_flag(s, &r->checkpoint);
    if (col == COL_LAYER) {
        snprintf(r->layer, sizeof r->layer, "%s", s);
        return true;
    }
    return set_enum_field(r, col, s);
}

static void on_field(void *data, size_t len, void *user)
{
    struct fixture *fx = user;
    const char *s = data ? data : "";
    (void)len; /* CSV_APPEND_NULL terminates every field */
    if (fx->record == 0) {
        header_field(fx, s);
    } else if (fx->field < sizeof fx->column_of_field / sizeof fx->column_of_field[0] &&
               fx->column_of_field[fx->field] >= 0) {
        int col = fx->column_of_field[fx->field];
        if (!set_field(&fx->cur, col, s))
            fixture_fail(fx, column_names[col], s);
        fx->seen |= 1u << col;
    }
    fx->field++;
}

/* A row is usable when every column was read and it describes a layer SPEC section 3 allows. */
static void check_row(struct fixture *fx)
{
    const struct fixture_row *r = &fx->cur;
    if (fx->seen != (1u << COL_COUNT) - 1)
        fixture_fail(fx, "missing a column in", r->layer);
    else if (r->hidden % r->heads != 0 || r->heads % r->kv_heads != 0)
        fixture_fail(fx, "heads must divide hidden and kv_heads heads in", r->layer);
    else if (r->arch == ARCH_LLAMA && r->dropout)
        fixture_fail(fx, "a llama layer has no dropout:", r->layer);
    else if ((r->arch == ARCH_GPT) != (r->norm == NORM_LAYERNORM))
        fixture_fail(fx, "gpt uses layernorm, llama fused or written:", r->layer);
}

static void on_record(int c, void *user)
{
    struct fixture *fx = user;
    (void)c;
    if (fx->record > 0 && fx->error[0] == '\0') {
        check_row(fx);
        if (fx->count == fx->cap) {
            size_t cap = fx->cap ? 2 * fx->cap : 64;
            struct fixture_row *rows = realloc(fx->rows, cap * sizeof *rows);
            if (rows == NULL) {
                fixture_fail(fx, "out of memory at", fx->cur.layer);
                return;
            }
            fx->rows = rows;
            fx->cap = cap;
        }
        fx->rows[fx->count++] = fx->cur;
    }
    fx->record++;
    fx->field = 0;
    fx->seen = 0;
    memset(&fx->cur, 0, sizeof fx->cur);
}

/* Reads the fixture into fx; false with fx->error set when it cannot. The caller frees rows. */
static bool fixture_load(struct fixture *fx, const char *path)
{
    struct csv_parser p;
    char buf[4096];
    size_t n;
    memset(fx, 0, sizeof *fx);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fixture_fail(fx, "cannot open", path);
        return false;
    }
    if (csv_init(&p, CSV_STRICT | CSV_APPEND_NULL | CSV_STRICT_FINI) != 0) {
        fclose(f);
        fixture_fail(fx, "csv_init failed for", path);
        return false;
    }
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        if (csv_parse(&p, buf, n, on_field, on_record, fx) != n) {
            fixture_fail(fx, csv_strerror(csv_error(&p)), path);
            break;
        }
    }
    if (csv_fini(&p, on_field, on_record, fx) != 0)
        fixture_fail(fx, "malformed csv", path);
    csv_free(&p);
    fclose(f);
    return fx->error[0] == '\0';
}

/* FNV-1a of the committed fixture's bytes (tests/validation/activations.csv as `make validate`
 * writes it). The checks of the fixture's own coverage and of the report's note that quotes its
 * worst gaps run on that file only: another set of measurements (MEMFIT_VALIDATION_CSV, or a
 * replaced file) is held to the 2% agreement alone. After `make validate` changes the fixture,
 * update this value and the note together (the test prints the new value). */
#define COMMITTED_FIXTURE_HASH 0x3da6fdd7ae37e039ull

static uint64_t file_hash(const char *path)
{
    uint64_t h = 1469598103934665603ull;
    FILE *f = fopen(path, "rb");
    int ch;
    if (!f)
        return 0;
    while ((ch = getc(f)) != EOF)
        h = (h ^ (unsigned char)ch) * 1099511628211ull;
    fclose(f);
    return h;
}

/* True for the committed fixture (see COMMITTED_FIXTURE_HASH); prints the hash otherwise. */
static bool committed_fixture(const char *path)
{
    uint64_t h = file_hash(path);
    if (h == COMMITTED_FIXTURE_HASH)
        return true;
    printf("%s: not the committed fixture (hash 0x%016llxull): only the 2%% agreement is "
           "checked\n", path, (unsigned long long)h);
    return false;
}

static const char *fixture_path(void)
{
    const char *env = getenv("MEMFIT_VALIDATION_CSV");
    return env != NULL && env[0] != '\0' ? env : FIXTURE_PATH;
}

static int setup(void **state)
{
    static struct fixture fx;
    if (!fixture_load(&fx, fixture_path())) {
        fprintf(stderr, "%s: %s\n", fixture_path(), fx.error);
        free(fx.rows);
        fx.rows = NULL;
        return -1;
    }
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state; /* NULL when setup failed */
    if (fx != NULL) {
        free(fx->rows);
        fx->rows = NULL;
    }
    return 0;
}

/* The scenario of one measured layer: the lesson's example with the row's sizes, one GPU. */
static void row_scenario(const struct fixture_row *r, bool dropout, struct scenario *sc)
{
    scenario_lesson_example(sc);
    sc->arch = r->arch;
    sc->seq = r->seq;
    sc->micro_batch = r->micro_batch;
    sc->hidden = r->hidden;
    sc->heads = r->heads;
    sc->kv_heads = r->kv_heads;
    sc->ffn = r->ffn;
    sc->dropout = dropout;
    sc->attention = r->attention;
    sc->recompute = r->checkpoint ? RECOMPUTE_EVERY_K : RECOMPUTE_NONE;
    sc->ckpt_every = r->checkpoint ? 1 : 0;
    sc->tp = sc->pp = sc->dp = 1;
    sc->sp = false;
}

/*
 * memfit's bytes for the layer: c = 2sbh for a checkpointed layer (it keeps only its input),
 * else A of SPEC section 3; a written-out RMSNorm keeps its fp32 upcast (4 sbh) and the
 * normalised bf16 tensor (2 sbh) instead of its bf16 input (2 sbh): +4 sbh per norm, +8 sbh.
 */
static uint64_t predicted_bytes(const struct fixture_row *r, bool dropout, enum norm norm)
{
    struct scenario sc;
    struct model_layer_act act;
    uint64_t c;
    row_scenario(r, dropout, &sc);
    if (r->checkpoint) {
        assert_int_equal(model_ckpt_bytes(&sc, &c), MODEL_OK);
        return c;
    }
    assert_int_equal(model_layer_act(&sc, &act), MODEL_OK);
    if (norm == NORM_WRITTEN)
        return act.total + 8 * r->seq * r->micro_batch * r->hidden;
    return act.total;
}

static double gap(uint64_t measured, uint64_t predicted)
{
    double m = (double)measured, p = (double)predicted;
    return (m > p ? m - p : p - m) / m;
}

/* Every measured layer agrees with memfit within 2%; prints the worst gap of each architecture. */
static void test_every_row_within_tolerance(void **state)
{
    const struct fixture *fx = *state;
    double worst[2] = {0, 0};
    size_t worst_row[2] = {0, 0}, failures = 0;
    assert_true(fx->count > 0);
    for (size_t i = 0; i < fx->count; i++) {
        const struct fixture_row *r = &fx->rows[i];
        uint64_t p = predicted_bytes(r, r->dropout, r->norm);
        double g = gap(r->saved_bytes, p);
        int a = r->arch == ARCH_LLAMA;
        if (g > worst[a]) {
            worst[a] = g;
            worst_row[a] = i;
        }
        if (g > TOLERANCE) {
            failures++;
            printf("FAIL %s: measured %llu, memfit %llu, gap %.3f%%\n", r->layer,
                   (unsigned long long)r->saved_bytes, (unsigned long long)p, 100 * g);
        }
    }
    for (int a = 0; a < 2; a++)
        printf("%s: worst gap %.4f%% (%s)\n", a ? "llama" : "gpt", 100 * worst[a],
               fx->rows[worst_row[a]].layer);
    assert_int_equal(failures, 0);
    /* The report's notes quote the committed fixture's worst gaps. */
    if (committed_fixture(fixture_path())) {
        for (int a = 0; a < 2; a++) {
            char quoted[64];
            snprintf(quoted, sizeof quoted, "%.3f%% (%s)", 100 * worst[a], a ? "Llama" : "GPT");
            if (!strstr(report_validation_note(), quoted))
                fail_msg("the report's validation note does not quote '%s'", quoted);
        }
    }
}

static bool same_shape(const struct fixture_row *x, const struct fixture_row *y)
{
    return x->seq == y->seq && x->micro_batch == y->micro_batch && x->hidden == y->hidden &&
           x->heads == y->heads && x->kv_heads == y->kv_heads && x->ffn == y->ffn;
}

static size_t distinct_shapes(const struct fixture *fx, enum arch arch)
{
    size_t n = 0;
    for (size_t i = 0; i < fx->count; i++) {
        bool seen = fx->rows[i].arch != arch;
        for (size_t j = 0; j < i && !seen; j++)
            seen = fx->rows[j].arch == arch && same_shape(&fx->rows[i], &fx->rows[j]);
        n += !seen;
    }
    return n;
}

/* The fixture cannot pass vacuously: at least 8 shapes of each layer. */
static void test_enough_shapes(void **state)
{
    const struct fixture *fx = *state;
    if (!committed_fixture(fixture_path()))
        skip();
    assert_true(distinct_shapes(fx, ARCH_GPT) >= MIN_SHAPES);
    assert_true(distinct_shapes(fx, ARCH_LLAMA) >= MIN_SHAPES);
}

/* Rows of one kind: arch, attention, dropout, checkpoint, norm. */
static size_t count_kind(const struct fixture *fx, enum arch arch, enum attention attn,
                         bool dropout, bool ckpt, enum norm norm)
{
    size_t n = 0;
    for (size_t i = 0; i < fx->count; i++) {
        const struct fixture_row *r = &fx->rows[i];
        n += r->arch == arch && r->attention == attn && r->dropout == dropout &&
             r->checkpoint == ckpt && r->norm == norm;
    }
    return n;
}

/* Every variant the issue names is measured (the committed fixture has each on 10 shapes), and
 * some Llama rows have kv_heads < heads (9 of 10 shapes in the committed fixture). */
static void test_every_variant_measured(void **state)
{
    const struct fixture *fx = *state;
    if (!committed_fixture(fixture_path()))
        skip();
    for (int attn = 0; attn < 2; attn++) {
        for (int drop = 0; drop < 2; drop++)
            assert_true(count_kind(fx, ARCH_GPT, (enum attention)attn, drop, false,
                                   NORM_LAYERNORM) > 0);
        assert_true(count_kind(fx, ARCH_LLAMA, (enum attention)attn, false, false, NORM_FUSED) >
                    0);
        assert_true(count_kind(fx, ARCH_LLAMA, (enum attention)attn, false, false,
                               NORM_WRITTEN) > 0);
    }
    assert_true(count_kind(fx, ARCH_GPT, ATTENTION_PLAIN, true, true, NORM_LAYERNORM) > 0);
    size_t gqa = 0;
    for (size_t i = 0; i < fx->count; i++)
        gqa += fx->rows[i].arch == ARCH_LLAMA && fx->rows[i].kv_heads < fx->rows[i].heads;
    assert_true(gqa > 0);
}

/*
 * The 2% tolerance tells the variants apart: on at least 8 measured rows of each layer, the
 * formula of a wrong variant (dropout terms for a layer without dropout and the reverse; the
 * fused norm for the written-out one and the reverse) misses by more than 2%. So the agreement
 * above is not slack. (At very long sequences the s^2 core can hide the 2-8 sbh difference, so
 * not every row of another fixture need tell them apart.)
 */
static void test_wrong_variant_is_rejected(void **state)
{
    const struct fixture *fx = *state;
    if (!committed_fixture(fixture_path()))
        skip();
    size_t rejected[2] = {0, 0};
    for (size_t i = 0; i < fx->count; i++) {
        const struct fixture_row *r = &fx->rows[i];
        uint64_t wrong;
        if (r->checkpoint)
            continue;
        if (r->arch == ARCH_GPT)
            wrong = predicted_bytes(r, !r->dropout, r->norm);
        else
            wrong = predicted_bytes(r, false, r->norm == NORM_WRITTEN ? NORM_FUSED : NORM_WRITTEN);
        rejected[r->arch == ARCH_LLAMA] += gap(r->saved_bytes, wrong) > TOLERANCE;
    }
    assert_true(rejected[0] >= MIN_SHAPES);
    assert_true(rejected[1] >= MIN_SHAPES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_row_within_tolerance),
        cmocka_unit_test(test_enough_shapes),
        cmocka_unit_test(test_every_variant_measured),
        cmocka_unit_test(test_wrong_variant_is_rejected),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
