/*
 * fixture_csv.h: the measured fixtures of tests/validation (modern.csv, step.csv) read as CSV by
 * name of column, through csvin: each data record is handed to the caller's function, which
 * turns it into a row of its own, kept in a growing array (struct fixture_rows). Shared by
 * test_validation_modern.c, test_validation_lora.c and test_step.c. Static functions: include it
 * in one file of a test.
 */
#ifndef MEMFIT_FIXTURE_CSV_H
#define MEMFIT_FIXTURE_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/csvin.h"
#include "model/scenario.h"

#define FIXTURE_COLUMNS_MAX 48

/* The header of a fixture: its column names, in order. */
struct fixture_header {
    char name[FIXTURE_COLUMNS_MAX][32];
    size_t n;
};

/* The cell of column `name` in rec ("" and a failed test when the fixture lacks it). */
static inline const char *fixture_cell(const struct csvin_record *rec,
                                       const struct fixture_header *h, const char *name)
{
    for (size_t i = 0; i < h->n && i < rec->n_fields; i++)
        if (strcmp(h->name[i], name) == 0)
            return rec->fields[i];
    fail_msg("fixture: no column '%s'", name);
    return "";
}

static inline uint64_t fixture_u64(const struct csvin_record *rec, const struct fixture_header *h,
                                   const char *name)
{
    return strtoull(fixture_cell(rec, h, name), NULL, 10);
}

/* The layer's sizes of a measured row (modern.csv, recompute.csv): s, b, h, heads, kv heads,
 * head_dim, f, the experts' and latent attention's columns; 0 where they do not apply. */
static inline void fixture_layer_sizes(const struct csvin_record *rec,
                                       const struct fixture_header *h, struct scenario *sc)
{
    sc->seq = fixture_u64(rec, h, "seq");
    sc->micro_batch = fixture_u64(rec, h, "micro_batch");
    sc->hidden = fixture_u64(rec, h, "hidden");
    sc->heads = fixture_u64(rec, h, "heads");
    sc->kv_heads = fixture_u64(rec, h, "kv_heads");
    sc->head_dim = fixture_u64(rec, h, "head_dim");
    sc->ffn = fixture_u64(rec, h, "ffn");
    sc->experts = fixture_u64(rec, h, "experts");
    sc->top_k = fixture_u64(rec, h, "top_k");
    sc->expert_ffn = fixture_u64(rec, h, "expert_ffn");
    sc->shared_ffn = fixture_u64(rec, h, "shared_ffn");
    sc->q_lora_rank = fixture_u64(rec, h, "q_lora_rank");
    sc->kv_lora_rank = fixture_u64(rec, h, "kv_lora_rank");
    sc->qk_nope_dim = fixture_u64(rec, h, "qk_nope_dim");
    sc->qk_rope_dim = fixture_u64(rec, h, "qk_rope_dim");
    sc->v_head_dim = fixture_u64(rec, h, "v_head_dim");
}

static inline bool fixture_is(const struct csvin_record *rec, const struct fixture_header *h,
                              const char *name, const char *word)
{
    return strcmp(fixture_cell(rec, h, name), word) == 0;
}

/* Reads the fixture at path: row(rec, header, ctx) for every data record. The number of data
 * records read, or -1 when the file cannot be read or holds a malformed record. */
static inline long fixture_read(const char *path,
                                void (*row)(const struct csvin_record *,
                                            const struct fixture_header *, void *),
                                void *ctx)
{
    static struct fixture_header h;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    struct diag d;
    diag_init(&d, NULL, NULL);
    struct csvin *in = csvin_new(f, path, &d);
    struct csvin_record rec;
    long count = 0;
    int rc;
    h.n = 0;
    while (in != NULL && (rc = csvin_next(in, &rec)) != 0 && rc != -2) {
        if (rc < 0)
            continue;
        if (rec.line == 1) {
            for (h.n = 0; h.n < rec.n_fields && h.n < FIXTURE_COLUMNS_MAX; h.n++)
                snprintf(h.name[h.n], sizeof h.name[h.n], "%s", rec.fields[h.n]);
            continue;
        }
        row(&rec, &h, ctx);
        count++;
    }
    csvin_free(in);
    fclose(f);
    return d.count == 0 ? count : -1;
}

/* The rows of a fixture in a growing array: `size` bytes each, made by `fill` from a record. */
struct fixture_rows {
    void *rows;
    size_t size, count, cap;
    void (*fill)(const struct csvin_record *rec, const struct fixture_header *h, void *row);
};

/* fixture_read's row function for a struct fixture_rows: one more row (a failed test when out
 * of memory). */
static inline void fixture_add_row(const struct csvin_record *rec, const struct fixture_header *h,
                                   void *ctx)
{
    struct fixture_rows *fx = ctx;
    if (fx->count == fx->cap) {
        size_t cap = fx->cap ? 2 * fx->cap : 64;
        void *rows = realloc(fx->rows, cap * fx->size);
        if (rows == NULL) {
            fail_msg("fixture: out of memory");
            return;
        }
        fx->rows = rows;
        fx->cap = cap;
    }
    fx->fill(rec, h, (char *)fx->rows + fx->count++ * fx->size);
}

/* Reads the fixture at path into fx (its size and fill set): 0, or -1 when it cannot be read or
 * holds no row (a cmocka group setup's answer). */
static inline int fixture_load(const char *path, struct fixture_rows *fx)
{
    fx->rows = NULL;
    fx->count = fx->cap = 0;
    return fixture_read(path, fixture_add_row, fx) > 0 && fx->count > 0 ? 0 : -1;
}

static inline void fixture_free(struct fixture_rows *fx)
{
    free(fx->rows);
    fx->rows = NULL;
    fx->count = fx->cap = 0;
}

/* |measured - predicted| / measured. */
static inline double fixture_gap(uint64_t measured, uint64_t predicted)
{
    double m = (double)measured, p = (double)predicted;
    return (m > p ? m - p : p - m) / m;
}

#endif
