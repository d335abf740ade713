/*
 * fixture.h: the activation fixture of tests/validation (activations.csv, written by measure.py)
 * read into rows, each row's bytes as memfit predicts them, and the summary the report's notes
 * quote (the worst gap of each layer, the counts). Shared by tests/validation/test_validation.c,
 * which holds memfit to the measurements, and tests/validation/summary.c, which `make validate`
 * runs to write src/report/validation_summary.h from the fixture. Static functions: include it in
 * one file of a program.
 */
#ifndef MEMFIT_VALIDATION_FIXTURE_H
#define MEMFIT_VALIDATION_FIXTURE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <csv.h>

#include "model/model.h"

#define FIXTURE_PATH "tests/validation/activations.csv"

enum norm { NORM_LAYERNORM, NORM_FUSED, NORM_WRITTEN };

/* The columns the test reads; `layer` and `variant` are labels for people. */
enum column {
    COL_ARCH,
    COL_SEQ,
    COL_MICRO_BATCH,
    COL_HIDDEN,
    COL_HEADS,
    COL_KV_HEADS,
    COL_FFN,
    COL_DROPOUT,
    COL_ATTENTION,
    COL_CHECKPOINT,
    COL_NORM,
    COL_SAVED_BYTES,
    COL_LAYER,
    COL_COUNT
};

static const char *const column_names[COL_COUNT] = {
    "arch",    "seq",       "micro_batch", "hidden", "heads",       "kv_heads", "ffn",
    "dropout", "attention", "checkpoint",  "norm",   "saved_bytes", "layer",
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
    unsigned seen;   /* bit per enum column read in the current record */
    char error[256]; /* first error, "" when none */
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

/* A row is usable when every column was read and it describes a layer memfit models
 * (doc/model.md section 4). */
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

/* The scenario of one measured layer: the worked example (doc/model.md section 9) with the row's
 * sizes, one GPU. */
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
 * memfit's bytes for the layer into *out: c = 2sbh for a checkpointed layer (it keeps only its
 * input), else A (doc/model.md sections 4.1 and 4.2); a written-out RMSNorm keeps its fp32 upcast
 * (4 sbh) and the normalised bf16 tensor (2 sbh) instead of its bf16 input (2 sbh): +4 sbh per
 * norm, +8 sbh. Returns false when the model rejects the row's sizes.
 */
static bool predicted_bytes(const struct fixture_row *r, bool dropout, enum norm norm,
                            uint64_t *out)
{
    struct scenario sc;
    struct model_layer_act act;
    row_scenario(r, dropout, &sc);
    if (r->checkpoint)
        return model_ckpt_bytes(&sc, out) == MODEL_OK;
    if (model_layer_act(&sc, &act) != MODEL_OK)
        return false;
    *out = act.total;
    if (norm == NORM_WRITTEN)
        *out += 8 * r->seq * r->micro_batch * r->hidden;
    return true;
}

/* |measured - predicted| / measured. */
static double gap(uint64_t measured, uint64_t predicted)
{
    double m = (double)measured, p = (double)predicted;
    return (m > p ? m - p : p - m) / m;
}

static bool same_shape(const struct fixture_row *x, const struct fixture_row *y)
{
    return x->seq == y->seq && x->micro_batch == y->micro_batch && x->hidden == y->hidden &&
           x->heads == y->heads && x->kv_heads == y->kv_heads && x->ffn == y->ffn;
}

/* Distinct layer shapes of one architecture. */
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

/* What the report's notes quote: per architecture (0 GPT, 1 Llama) the worst gap and its row,
 * and the shapes; the rows measured. */
struct fixture_summary {
    size_t measurements;
    size_t shapes[2];
    double worst[2];
    size_t worst_row[2];
};

/* Summarises fx into *s. Returns false when a row cannot be predicted. */
static bool fixture_summarise(const struct fixture *fx, struct fixture_summary *s)
{
    memset(s, 0, sizeof *s);
    s->measurements = fx->count;
    s->shapes[0] = distinct_shapes(fx, ARCH_GPT);
    s->shapes[1] = distinct_shapes(fx, ARCH_LLAMA);
    for (size_t i = 0; i < fx->count; i++) {
        const struct fixture_row *r = &fx->rows[i];
        uint64_t p;
        if (!predicted_bytes(r, r->dropout, r->norm, &p))
            return false;
        int a = r->arch == ARCH_LLAMA;
        double g = gap(r->saved_bytes, p);
        if (g > s->worst[a]) {
            s->worst[a] = g;
            s->worst_row[a] = i;
        }
    }
    return true;
}

/* A worst gap as the report quotes it: "0.195%". */
static void fixture_gap_text(double g, char *buf, size_t size)
{
    snprintf(buf, size, "%.3f%%", 100 * g);
}

#endif
