/*
 * config: see config.h. The row driver: the column table, the reader (the header, each row's
 * cells, the presets merged into them, duplicate names) and a row -> a scenario, which calls the
 * parsers and checks of the other files of config (config_internal.h) in their order.
 */
#include "input/config.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/suggest.h"
#include "input/config_internal.h"
#include "input/csvin.h"
#include "input/modeljson.h"
#include "model/model.h"
#include "plan/plan.h"

/* ---- the column table (doc/model.md section 13.1) ---- */

const char *const config_col_names[COL_COUNT] = {
#define COLUMN_NAME(id, name, written, kind) name,
    SCENARIO_COLUMNS(COLUMN_NAME)
#undef COLUMN_NAME
};

const char *const *config_column_names(size_t *n)
{
    *n = COL_COUNT;
    return config_col_names;
}

int config_column_lookup(const char *name)
{
    for (int i = 0; i < COL_COUNT; i++)
        if (strcasecmp(name, config_col_names[i]) == 0)
            return i;
    return -1;
}

/* ---- the reader ---- */

struct config_reader {
    const char *file;
    struct diag *diag;
    const struct config_presets *presets;
    struct config_options opt;
    struct nameset *names;
    struct csvin *in;
    int *map; /* header field index -> column, -1: one of search's own (ignored) */
    size_t n_cols;
    size_t rank_field, job_field; /* 1 + the field of search's rank and job columns; 0: none */
    bool header_done, header_bad;
    bool jobs; /* config_reader_read_jobs */
    unsigned long rejected;
    struct preset_table json; /* the config.json files read so far, by the cell naming them */
};

struct config_reader *config_reader_new(FILE *in, const char *file_name,
                                        const struct config_presets *presets,
                                        const struct config_options *opt, struct nameset *names,
                                        struct diag *d)
{
    struct config_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->file = file_name;
    r->diag = d;
    r->presets = presets;
    r->opt = *opt;
    r->names = names;
    r->in = csvin_new(in, file_name, d);
    if (!r->in || nameset_begin_file(names, file_name) != 0) {
        csvin_free(r->in);
        free(r);
        return NULL;
    }
    return r;
}

void config_reader_free(struct config_reader *r)
{
    if (!r)
        return;
    csvin_free(r->in);
    free(r->map);
    config_preset_table_release(&r->json);
    free(r);
}

void config_reader_read_jobs(struct config_reader *r)
{
    r->jobs = true;
}

unsigned long config_reader_rejected(const struct config_reader *r)
{
    return r->rejected;
}

/* A column that memfit search writes besides the scenario's: read and ignored. */
static bool search_result_column(const char *name)
{
#define RESULT_NAME(n) n,
    static const char *const names[] = {SEARCH_RESULT_COLUMNS(RESULT_NAME)};
#undef RESULT_NAME
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0)
            return true;
    return false;
}

static void read_header(struct config_reader *r, const struct csvin_record *rec)
{
    bool seen[COL_COUNT] = {false};
    r->header_done = true;
    r->n_cols = rec->n_fields;
    r->map = malloc(rec->n_fields * sizeof *r->map);
    if (!r->map) {
        r->header_bad = true;
        return;
    }
    if (rec->nul_field) {
        diag_report(r->diag, r->file, rec->line,
                    "column %zu: the header name holds a NUL byte; the file's rows are skipped",
                    rec->nul_field);
        r->header_bad = true;
        return;
    }
    for (size_t i = 0; i < rec->n_fields; i++) {
        char *name = rec->fields[i];
        int c = config_column_lookup(name);
        r->map[i] = c;
        if (c < 0 && search_result_column(name)) {
            if (strcmp(name, "rank") == 0)
                r->rank_field = i + 1;
            else if (strcmp(name, "job") == 0)
                r->job_field = i + 1;
            continue;
        } else if (c < 0) {
            const char *near = suggest_closest(name, config_col_names, COL_COUNT);
            if (!*name)
                diag_report(r->diag, r->file, rec->line, "column %zu has an empty name", i + 1);
            else if (near)
                diag_report(r->diag, r->file, rec->line,
                            "unknown column '%s' (did you mean '%s'?); the file's rows are skipped",
                            name, near);
            else
                diag_report(r->diag, r->file, rec->line,
                            "unknown column '%s'; the file's rows are skipped", name);
            r->header_bad = true;
        } else if (seen[c]) {
            diag_report(r->diag, r->file, rec->line,
                        "column '%s' appears twice in the header; the file's rows are skipped",
                        config_col_names[c]);
            r->header_bad = true;
        } else {
            seen[c] = true;
        }
    }
    if (!r->header_bad && !seen[COL_NAME]) {
        diag_report(r->diag, r->file, rec->line,
                    "the header has no 'name' column; the file's rows are skipped");
        r->header_bad = true;
    }
}

/* Field i of the record without the white space around it; NULL when that leaves nothing. */
/* isspace of the C locale, inline: every field of every row passes here twice. */
static inline bool is_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static const char *trimmed_field(const struct csvin_record *rec, size_t i)
{
    char *v = rec->fields[i], *end = v + rec->lengths[i];
    while (v < end && is_space(*v))
        v++;
    while (end > v && is_space(end[-1]))
        *--end = '\0';
    return v < end ? v : NULL;
}

/* Every member of *row is set here, each cell from its field or NULL when the header has no such
 * column (no memset of the whole row: a rep stos, it was a tenth of config's time). */
static bool fill_cells(struct config_reader *r, const struct csvin_record *rec, struct row *row)
{
    row->file = r->file;
    row->line = rec->line;
    row->diag = r->diag;
    row->from_preset = row->present = 0;
    row->model = row->gpu = NULL;
    row->quiet = false;
    row->job = r->jobs;
    if (rec->n_fields != r->n_cols) {
        diag_report(r->diag, r->file, rec->line,
                    "malformed CSV record: %zu fields where the header has %zu", rec->n_fields,
                    r->n_cols);
        return false;
    }
    if (rec->nul_field) { /* the cell's string would end there: "2\0" read as 2 */
        int c = r->map[rec->nul_field - 1];
        if (c >= 0)
            diag_report(r->diag, r->file, rec->line, "column '%s': the cell holds a NUL byte",
                        config_col_names[c]);
        else
            diag_report(r->diag, r->file, rec->line, "column %zu: the cell holds a NUL byte",
                        rec->nul_field);
        return false;
    }
    /* A search's job that nothing fits: its one row, of rank 0, holds no scenario. */
    if (r->rank_field && strcmp(rec->fields[r->rank_field - 1], "0") == 0) {
        diag_report(
            r->diag, r->file, rec->line,
            "job '%s': memfit search found no layout that fits (rank 0); no scenario to read",
            r->job_field ? rec->fields[r->job_field - 1] : "");
        return false;
    }
    /* One memset: cheaper than clearing the columns the header lacks, most of them. */
    memset(row->cell, 0, sizeof row->cell);
    for (size_t i = 0; i < rec->n_fields; i++) {
        const char *v = trimmed_field(rec, i);
        if (r->map[i] < 0) /* one of search's own columns */
            continue;
        row->cell[r->map[i]] = v;
        row->present |= (col_mask)(v != NULL) << r->map[i];
    }
    return true;
}

/* The preset named in column c of the row, or NULL after reporting it unknown. */
static const struct preset *row_preset(struct row *row, enum col c, const struct preset_table *t,
                                       const char *kind)
{
    const struct preset *p = t ? config_preset_find(t, row->cell[c]) : NULL;
    if (p)
        return p;
    if (t && !t->loaded) { /* a binary without its data files: say so, not "unknown" */
        bool model = c == COL_MODEL;
        config_row_error(
            row, c, "cannot look up '%s': the presets file %s was not found (%s FILE names one)",
            row->cell[c], model ? "configs/models.csv" : "configs/gpus.csv",
            model ? "--models" : "--gpus");
        return NULL;
    }
    const char *near = t ? suggest_closest(row->cell[c], t->names, t->n) : NULL;
    if (near)
        config_row_error(row, c, "unknown %s preset '%s' (did you mean '%s'?)", kind, row->cell[c],
                         near);
    else
        config_row_error(row, c, "unknown %s preset '%s'", kind, row->cell[c]);
    return NULL;
}

/* Fills the row's empty cells of columns first..last from preset p (explicit cells win). */
static void fill_from_preset(struct row *row, const struct preset *p, enum col first, enum col last)
{
    /* Only the preset's own cells: most presets leave most of the model columns empty. */
    for (unsigned i = 0; i < p->n_given; i++) {
        int c = p->given[i];
        if (c >= (int)first && c <= (int)last && !row->cell[c]) {
            row->cell[c] = p->cells[c];
            row->from_preset |= COL_BIT(c);
            row->present |= COL_BIT(c);
        }
    }
}

/*
 * The preset of the config.json that the model cell names (a file, or a folder holding one,
 * relative to the current directory; doc/model.md section 13.3), read once per file of scenarios.
 * Its name, "FILE (model_type T)", is the model's name in the report. NULL after reporting why the
 * file gives no model.
 */
static const struct preset *json_preset(struct config_reader *r, struct row *row)
{
    const char *cell = row->cell[COL_MODEL];
    struct preset_table *t = &r->json;
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->rows[i].path, cell) == 0)
            return &t->rows[i];
    struct modeljson m;
    char file[MODELJSON_FILE_MAX], why[DIAG_MSG_MAX], name[SCENARIO_NAME_MAX + 1];
    if (modeljson_read(cell, &m, file, sizeof file, why, sizeof why) != MODELJSON_OK) {
        config_row_error(row, COL_MODEL, "%s", why);
        return NULL;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 4;
        struct preset *rows = realloc(t->rows, cap * sizeof *rows);
        if (!rows) {
            config_row_error(row, COL_MODEL, "out of memory");
            return NULL;
        }
        t->rows = rows;
        t->cap = cap;
    }
    struct preset *p = &t->rows[t->n];
    size_t n;
    const char *const *cols = modeljson_columns(&n);
    memset(p, 0, sizeof *p);
    bool ok = (p->path = strdup(cell)) != NULL &&
              (p->name = strdup(modeljson_describe(&m, file, name, sizeof name))) != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        int c = config_column_lookup(cols[i]); /* a model column (test_modeljson.c) */
        if (m.value[i][0] && c >= 0)
            ok = (p->cells[c] = strdup(m.value[i])) != NULL;
    }
    if (ok) {
        p->key = config_name_key(p->name);
        ok = config_preset_index(t, t->n);
    }
    if (!ok) {
        free(p->path);
        free(p->name);
        for (int c = 0; c < COL_COUNT; c++)
            free(p->cells[c]);
        config_row_error(row, COL_MODEL, "out of memory");
        return NULL;
    }
    t->n++;
    p->sliding_window = m.sliding_window;
    config_preset_type_cells(p);
    return p;
}

/* Fills empty cells from the named model and GPU presets. */
static bool merge_presets(struct config_reader *r, struct row *row, struct gpu_speed *speed)
{
    const struct preset *p;
    *speed = (struct gpu_speed){0};
    if (row->cell[COL_MODEL]) {
        p = modeljson_is_path(row->cell[COL_MODEL])
                ? json_preset(r, row)
                : row_preset(row, COL_MODEL, r->presets ? &r->presets->models : NULL, "model");
        if (!p)
            return false;
        row->model = p;
        fill_from_preset(row, p, COL_ARCH, COL_V_HEAD_DIM);
    }
    if (row->cell[COL_GPU]) {
        p = row_preset(row, COL_GPU, r->presets ? &r->presets->gpus : NULL, "GPU");
        if (!p)
            return false;
        row->gpu = p;
        fill_from_preset(row, p, COL_GPU_MEM_GB, COL_GPU_MEM_GB);
        *speed = p->speed;
    }
    return true;
}

/* The number of characters of a UTF-8 string, or -1 when it is not valid UTF-8 (a stray or
 * missing continuation byte, an overlong form, a surrogate, beyond U+10FFFF). *prefix_bytes gets
 * the length in bytes of its first `prefix` characters. */
static long utf8_length(const char *str, size_t prefix, size_t *prefix_bytes)
{
    const unsigned char *s = (const unsigned char *)str;
    long chars = 0;
    size_t i = 0;
    *prefix_bytes = 0;
    while (s[i]) {
        unsigned c = s[i];
        int more = c < 0x80             ? 0
                   : (c & 0xE0) == 0xC0 ? 1
                   : (c & 0xF0) == 0xE0 ? 2
                   : (c & 0xF8) == 0xF0 ? 3
                                        : -1;
        if (more < 0 || (more == 1 && c < 0xC2) || (c == 0xE0 && (s[i + 1] & 0xE0) == 0x80) ||
            (c == 0xED && s[i + 1] >= 0xA0) || (c == 0xF0 && s[i + 1] < 0x90) ||
            (c == 0xF4 && s[i + 1] >= 0x90) || c > 0xF4)
            return -1;
        for (int k = 1; k <= more; k++)
            if ((s[i + (size_t)k] & 0xC0) != 0x80)
                return -1;
        i += (size_t)more + 1;
        if ((size_t)++chars == prefix)
            *prefix_bytes = i;
    }
    if ((size_t)chars < prefix)
        *prefix_bytes = i;
    return chars;
}

static bool parse_name(struct row *row, struct scenario *sc)
{
    if (!config_require(row, COL_NAME))
        return false;
    const char *name = row->cell[COL_NAME];
    size_t shown;
    long chars = utf8_length(name, 20, &shown);
    if (chars < 0)
        return config_row_error(row, COL_NAME, "the name is not valid UTF-8");
    if (chars > SCENARIO_NAME_MAX)
        return config_row_error(row, COL_NAME, "'%.*s...' is longer than %d characters", (int)shown,
                                name, SCENARIO_NAME_MAX);
    memcpy(sc->name, name, strlen(name) + 1); /* at most 4 bytes a character: it fits */
    return true;
}

/* A scenario whose byte counts overflow: blame the largest size, the likely typo. */
static bool report_overflow(struct row *row)
{
    static const enum col sizes[] = {
        COL_LAYERS,       COL_HIDDEN,      COL_HEADS,       COL_VOCAB,      COL_FFN,
        COL_SEQ,          COL_MICRO_BATCH, COL_POSITIONS,   COL_HEAD_DIM,   COL_LAYER_NORMS,
        COL_EXPERTS,      COL_TOP_K,       COL_EXPERT_FFN,  COL_SHARED_FFN, COL_Q_LORA_RANK,
        COL_KV_LORA_RANK, COL_QK_NOPE_DIM, COL_QK_ROPE_DIM, COL_V_HEAD_DIM, COL_LORA_RANK};
    enum col worst = COL_SEQ;
    unsigned long long worst_v = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const char *v = row->cell[sizes[i]];
        unsigned long long x = v ? strtoull(v, NULL, 10) : 0;
        if (x > worst_v) {
            worst_v = x;
            worst = sizes[i];
        }
    }
    return config_row_error(row, worst,
                            "'%llu' is so large that a byte count would overflow 64 bits", worst_v);
}

/* strlcpy: at most size - 1 bytes and a NUL. */
static void copy_bounded(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* The defaults of the members a row may leave out (doc/model.md 13.1). The others are set by the
 * parse_* functions on every valid row: a memset of the whole scenario (about 400 bytes, mostly
 * names) first was a noticeable part of config's time. A new member of struct scenario must be
 * set here or there. */
static void scenario_defaults(struct scenario *sc, double reserve, enum peak_model peak,
                              enum impl impl)
{
    sc->arch = ARCH_GPT;
    sc->precision = PRECISION_MIXED;
    sc->attention = ATTENTION_PLAIN;
    sc->sdpa = false;
    sc->impl = impl;
    sc->offload = OFFLOAD_NONE;
    sc->sp = false;
    sc->dp = sc->tp = sc->pp = 1;
    sc->cp = sc->vpp = 1;
    sc->first_stage_layers = sc->last_stage_layers = 0;
    sc->mtp_layers = 0;
    sc->embedding_in_split = sc->loss_in_split = false;
    sc->schedule = SCHEDULE_1F1B;
    sc->ep = 1;
    sc->etp = sc->head_dim = 0;
    sc->moe_max_nodes = 0;
    sc->zero_group = 0;
    sc->optimizer = OPTIM_ADAMW;
    sc->fp8 = FP8_NONE;
    sc->fp8_one_copy = false;
    sc->finetune = FINETUNE_FULL;
    sc->lora_rank = 16;
    sc->lora_targets = LORA_QV;
    sc->qk_norm = QK_NORM_NONE;
    sc->shared_gate = false;
    sc->router_bias = ROUTER_BIAS_NONE;
    sc->layer_norms = 2;
    sc->experts = sc->top_k = sc->expert_ffn = sc->shared_ffn = sc->dense_layers = 0;
    sc->capacity_factor = 0;
    sc->q_lora_rank = sc->kv_lora_rank = sc->qk_nope_dim = sc->qk_rope_dim = sc->v_head_dim = 0;
    sc->gpus_per_node = 8;
    sc->reserve = reserve;
    sc->peak = peak;
    sc->model_preset[0] = sc->gpu_preset[0] = '\0';
    sc->gpus = sc->gpus_from = 0;
    sc->pinned = 0;
}

static bool row_to_scenario(struct config_reader *r, struct row *row, struct scenario *sc)
{
    struct gpu_speed speed;
    scenario_defaults(sc, r->opt.reserve, r->opt.peak, r->opt.impl);
    if (!parse_name(row, sc) || !merge_presets(r, row, &speed) ||
        !config_parse_model_shape(row, sc) || !config_parse_layer_shape(row, sc) ||
        !config_parse_training(row, sc) || !config_parse_gpu(row, sc))
        return false;
    sc->speed = speed;
    sc->host_mem_bytes = row->gpu ? (uint64_t)nearbyint(row->gpu->host_mem_gb * 1e9) : 0;
    /* The default keeps pp micro-batches a step in the pipeline (doc/model.md 6.1); a product
     * past 64 bits leaves 0, which means the same (pipeline_micro_batches). */
    if (!row->cell[COL_GLOBAL_BATCH] &&
        (__builtin_mul_overflow(sc->micro_batch, sc->dp, &sc->global_batch) ||
         __builtin_mul_overflow(sc->global_batch, sc->pp, &sc->global_batch)))
        sc->global_batch = 0;
    if (row->cell[COL_MODEL]) { /* a config.json's preset is named after its file */
        copy_bounded(sc->model_preset, sizeof sc->model_preset,
                     row->model->path ? row->model->name : row->cell[COL_MODEL]);
        sc->model_file = row->model->path != NULL;
    }
    sc->sliding_window = row->cell[COL_MODEL] ? row->model->sliding_window : 0;
    if (row->cell[COL_GPU])
        copy_bounded(sc->gpu_preset, sizeof sc->gpu_preset, row->cell[COL_GPU]);
    if (!config_check_consistency(row, sc) || !config_check_fp8(row, sc))
        return false;
    /* The exact check runs only near the limit: it cost as much as the rest of the row. It covers
     * what eval and the report compute besides the scenario itself (the ladder's rungs, the
     * k-curve, the comparison step), so that an accepted row is always evaluated and charted. */
    if (!model_peak_cannot_overflow(sc) && plan_check(sc) != 0)
        return report_overflow(row);
    return true;
}

int config_reader_next(struct config_reader *r, struct scenario *out, unsigned long *line)
{
    struct csvin_record rec;
    struct row row;
    for (;;) {
        int rc = csvin_next(r->in, &rec);
        if (rc == 0) {
            if (!r->header_done) {
                diag_report(r->diag, r->file, 0, "empty file: a header row is required");
                r->header_done = r->header_bad = true;
                r->rejected++;
            }
            return 0;
        }
        if (rc == -2)
            return -2;
        if (rc == -1) {
            r->rejected++;
            return -1;
        }
        if (!r->header_done) {
            read_header(r, &rec);
            continue;
        }
        if (r->header_bad) { /* already reported once at the header */
            r->rejected++;
            continue;
        }
        *line = rec.line;
        if (!fill_cells(r, &rec, &row)) {
            r->rejected++;
            return -1;
        }
        /* The name becomes out->name unchanged when the row is valid. */
        uint64_t name_h = row.cell[COL_NAME] ? nameset_hash(row.cell[COL_NAME]) : 0;
        nameset_prefetch(r->names, name_h);
        if (!row_to_scenario(r, &row, out)) {
            r->rejected++;
            return -1;
        }
        struct nameset_seen first;
        int added = nameset_add(r->names, out->name, name_h, rec.line, &first);
        if (added < 0) { /* the check cannot go on, and is never skipped: stop */
            diag_report(r->diag, r->file, rec.line,
                        "out of memory: the names seen so far cannot be kept to check that "
                        "names are unique");
            return -2;
        }
        if (added == 0) {
            if (first.same_file)
                config_row_error(&row, COL_NAME, "'%s' is a duplicate (first seen on line %lu)",
                                 out->name, first.line);
            else
                config_row_error(&row, COL_NAME, "'%s' is a duplicate (first seen in %s, line %lu)",
                                 out->name, first.file, first.line);
            r->rejected++;
            return -1;
        }
        return 1;
    }
}
