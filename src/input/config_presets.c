/*
 * config_presets: the preset tables of config (config_internal.h): configs/models.csv (the model
 * columns) and configs/gpus.csv (gpu_mem_gb, the speeds, mem_mib, the FP8 flags) loaded, each
 * preset's cells parsed once, and a preset found by its name.
 */
#include "input/config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/infile.h"
#include "input/config_internal.h"
#include "input/csvin.h"

/* Columns a model preset may set. */
static bool is_model_column(enum col c)
{
    return c >= COL_ARCH && c <= COL_V_HEAD_DIM;
}

/* The numbers of a GPU preset besides mem_gb: its speeds, and (the last two, not speeds) mem_mib,
 * the capacity the device itself reports (nvidia-smi, rocm-smi) in MiB, which wins over mem_gb,
 * and host_mem_gb, the CPU memory of one node of such GPUs (doc/model.md 12.5). */
#define GPU_SPEED_COLUMNS 7
static const char *const gpu_speed_names[GPU_SPEED_COLUMNS] = {
    "bf16_tflops", "hbm_tb_s", "link_gb_s", "pcie_gb_s", "fp8_tflops", "mem_mib", "host_mem_gb"};

/* The columns of what a GPU preset says of FP8 (enum gpu_flag, config_internal.h). */
static const char *const gpu_flag_names[GPU_FLAG_COLUMNS] = {"fp8", "mxfp8", "fp8_one_copy"};

void config_preset_table_release(struct preset_table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->rows[i].name);
        free(t->rows[i].path);
        for (int c = 0; c < COL_COUNT; c++)
            free(t->rows[i].cells[c]);
    }
    free(t->rows);
    free(t->names);
    free(t->index);
}

void config_presets_free(struct config_presets *p)
{
    if (!p)
        return;
    config_preset_table_release(&p->models);
    config_preset_table_release(&p->gpus);
    free(p);
}

static char *dup_trimmed(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    char *r = malloc(n + 1);
    if (r) {
        memcpy(r, s, n);
        r[n] = '\0';
    }
    return r;
}

/* Column index of a preset file: a scenario column, a GPU speed (COL_COUNT + i), source (-2). */
static int preset_column(const char *name, bool gpu)
{
    if (strcasecmp(name, "source") == 0)
        return -2;
    if (strcasecmp(name, "name") == 0)
        return COL_NAME;
    if (gpu) {
        if (strcasecmp(name, "mem_gb") == 0 || strcasecmp(name, "gpu_mem_gb") == 0)
            return COL_GPU_MEM_GB;
        for (int i = 0; i < GPU_SPEED_COLUMNS; i++)
            if (strcasecmp(name, gpu_speed_names[i]) == 0)
                return COL_COUNT + i;
        for (int i = 0; i < GPU_FLAG_COLUMNS; i++)
            if (strcasecmp(name, gpu_flag_names[i]) == 0)
                return COL_COUNT + GPU_SPEED_COLUMNS + i;
        return -1;
    }
    int c = config_column_lookup(name);
    return c >= 0 && is_model_column((enum col)c) ? c : -1;
}

/* No GPU's speed comes near this in the units of gpus.csv (TFLOP/s, TB/s, GB/s): a larger value
 * is a typo, and would make the cost model's times vanish. */
#define SPEED_MAX 1e6

/* A speed cell: NULL when *out is set, else what is wrong with it. */
static const char *parse_speed(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || isnan(v))
        return "is not a number";
    if (v < 0)
        return "is negative: expected a positive speed";
    if (v == 0)
        return "is zero: leave the cell empty when the speed is not known";
    if (errno || !(v <= SPEED_MAX))
        return "is too large (more than 10^6)";
    *out = v;
    return NULL;
}

/* A GPU preset's yes/no cell (white space around it allowed): false when it is neither. */
static bool parse_gpu_flag(const char *s, unsigned char *out)
{
    char *v = dup_trimmed(s);
    bool yes = v && strcasecmp(v, "yes") == 0, no = v && strcasecmp(v, "no") == 0;
    free(v);
    if (yes || no)
        *out = yes ? GPU_FLAG_YES : GPU_FLAG_NO;
    return yes || no;
}

/* The name of column c of a preset file (preset_column's numbering). */
static const char *preset_column_name(int c)
{
    if (c == -2)
        return "source";
    if (c >= COL_COUNT + GPU_SPEED_COLUMNS)
        return gpu_flag_names[c - COL_COUNT - GPU_SPEED_COLUMNS];
    if (c >= COL_COUNT)
        return gpu_speed_names[c - COL_COUNT];
    return c == COL_GPU_MEM_GB ? "mem_gb" : c >= 0 ? config_col_names[c] : "?";
}

/* A case-insensitive hash of a name (FNV-1a over tolower, which is how strcasecmp compares):
 * equal names under strcasecmp have equal keys. */
static inline unsigned char fold(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c | 0x20) : c; /* tolower of the C locale */
}

uint64_t config_name_key(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ fold((unsigned char)*s)) * 1099511628211ull;
    return h;
}

/* Frees what preset_add copied of a row it then rejected. */
static void preset_release(struct preset *p)
{
    free(p->name);
    for (int c = 0; c < COL_COUNT; c++)
        free(p->cells[c]);
}

static bool preset_add(struct preset_table *t, const struct csvin_record *rec, const int *map,
                       const char *path, struct diag *d)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 32;
        struct preset *rows = realloc(t->rows, cap * sizeof *rows);
        if (!rows) {
            diag_report(d, path, rec->line, "out of memory");
            return false;
        }
        t->rows = rows;
        t->cap = cap;
    }
    struct preset *p = &t->rows[t->n];
    memset(p, 0, sizeof *p);
    p->line = rec->line;
    double *speeds[GPU_SPEED_COLUMNS] = {
        &p->speed.bf16_tflops, &p->speed.hbm_tb_s, &p->speed.link_gb_s, &p->speed.pcie_gb_s,
        &p->speed.fp8_tflops,  &p->mem_mib,        &p->host_mem_gb};
    if (rec->nul_field) {
        diag_report(d, path, rec->line, "column '%s': the cell holds a NUL byte",
                    preset_column_name(map[rec->nul_field - 1]));
        return false;
    }
    for (size_t i = 0; i < rec->n_fields; i++) {
        int c = map[i];
        const char *v = rec->fields[i], *problem;
        if (c == COL_NAME) {
            p->name = dup_trimmed(v);
        } else if (c >= COL_COUNT + GPU_SPEED_COLUMNS) {
            if (*v && !parse_gpu_flag(v, &p->flag[c - COL_COUNT - GPU_SPEED_COLUMNS])) {
                diag_report(d, path, rec->line, "column '%s': '%s' is not yes or no",
                            gpu_flag_names[c - COL_COUNT - GPU_SPEED_COLUMNS], v);
                preset_release(p);
                return false;
            }
        } else if (c >= COL_COUNT) {
            if (*v && (problem = parse_speed(v, speeds[c - COL_COUNT])) != NULL) {
                diag_report(d, path, rec->line, "column '%s': '%s' %s",
                            gpu_speed_names[c - COL_COUNT], v, problem);
                preset_release(p);
                return false;
            }
        } else if (c >= 0 && *v) {
            p->cells[c] = dup_trimmed(v);
        }
    }
    const struct preset *first = p->name && *p->name ? config_preset_find(t, p->name) : NULL;
    if (!p->name || !*p->name || first) {
        if (first)
            diag_report(d, path, rec->line,
                        "column 'name': '%s' is a duplicate preset (first on line %lu)", p->name,
                        first->line);
        else
            diag_report(d, path, rec->line, "column 'name': a preset needs a name");
        preset_release(p);
        return false;
    }
    p->key = config_name_key(p->name);
    if (!config_preset_index(t, t->n)) {
        diag_report(d, path, rec->line, "out of memory");
        preset_release(p);
        return false;
    }
    config_preset_type_cells(p);
    t->n++;
    return true;
}

/* The header of a preset file into map[0..n): a column may appear once. */
static bool preset_header(const struct csvin_record *rec, int *map, bool gpu, const char *path,
                          struct diag *d)
{
    bool seen[COL_COUNT + GPU_SPEED_COLUMNS + GPU_FLAG_COLUMNS + 1] = {false};
    if (rec->nul_field) {
        diag_report(d, path, rec->line, "column %zu: the header name holds a NUL byte",
                    rec->nul_field);
        return false;
    }
    for (size_t i = 0; i < rec->n_fields; i++) {
        map[i] = preset_column(rec->fields[i], gpu);
        if (map[i] == -1) {
            diag_report(d, path, rec->line, "unknown preset column '%s'", rec->fields[i]);
            return false;
        }
        size_t k = map[i] == -2 ? COL_COUNT + GPU_SPEED_COLUMNS + GPU_FLAG_COLUMNS : (size_t)map[i];
        if (seen[k]) {
            diag_report(d, path, rec->line, "column '%s' appears twice in the header",
                        rec->fields[i]);
            return false;
        }
        seen[k] = true;
    }
    return true;
}

static bool preset_table_load(struct preset_table *t, const char *path, bool gpu, struct diag *d)
{
    char why[128];
    FILE *f = infile_open(path, why, sizeof why);
    if (!f) {
        diag_report(d, path, 0, "cannot open preset table: %s", why);
        return false;
    }
    bool ok = true;
    int *map = NULL;
    struct csvin *in = csvin_new(f, path, d);
    struct csvin_record rec;
    size_t n_cols = 0;
    int rc;
    if (!in) {
        diag_report(d, path, 0, "out of memory");
        ok = false;
    }
    while (in && (rc = csvin_next(in, &rec)) != 0) {
        if (rc < 0) {
            ok = false;
            break;
        }
        if (!map) {
            n_cols = rec.n_fields;
            map = calloc(n_cols, sizeof *map);
            if (!map)
                diag_report(d, path, rec.line, "out of memory");
            if (!map || !preset_header(&rec, map, gpu, path, d)) {
                ok = false;
                break;
            }
            continue;
        }
        if (rec.n_fields != n_cols || !preset_add(t, &rec, map, path, d)) {
            if (rec.n_fields != n_cols)
                diag_report(d, path, rec.line, "preset row has %zu fields, the header %zu",
                            rec.n_fields, n_cols);
            ok = false;
            break;
        }
    }
    if (ok && !map) {
        diag_report(d, path, 0, "empty file: a header row is required");
        ok = false;
    }
    free(map);
    csvin_free(in);
    fclose(f);
    if (!ok)
        return false;
    t->names = malloc((t->n ? t->n : 1) * sizeof *t->names);
    if (!t->names)
        return false;
    for (size_t i = 0; i < t->n; i++)
        t->names[i] = t->rows[i].name;
    return true;
}

struct config_presets *config_presets_load(const char *models_path, const char *gpus_path,
                                           struct diag *d)
{
    struct config_presets *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    if ((models_path && !preset_table_load(&p->models, models_path, false, d)) ||
        (gpus_path && !preset_table_load(&p->gpus, gpus_path, true, d))) {
        config_presets_free(p);
        return NULL;
    }
    p->models.loaded = models_path != NULL;
    p->gpus.loaded = gpus_path != NULL;
    return p;
}

const struct preset *config_preset_find(const struct preset_table *t, const char *name)
{
    if (!t->index_cap)
        return NULL;
    uint64_t key = config_name_key(name);
    for (size_t j = key & (t->index_cap - 1); t->index[j]; j = (j + 1) & (t->index_cap - 1)) {
        const struct preset *p = &t->rows[t->index[j] - 1];
        if (p->key == key && config_is_word(p->name, name))
            return p;
    }
    return NULL;
}

/* Puts row i (its key set) in the index. False when out of memory. */
bool config_preset_index(struct preset_table *t, size_t i)
{
    if (2 * (i + 1) > t->index_cap) {
        size_t cap = t->index_cap ? 2 * t->index_cap : 64;
        uint32_t *index = calloc(cap, sizeof *index);
        if (!index)
            return false;
        free(t->index);
        t->index = index;
        t->index_cap = cap;
        for (size_t r = 0; r < i; r++)
            config_preset_index(t, r); /* room enough: no recursion beyond one level */
    }
    size_t j = t->rows[i].key & (t->index_cap - 1);
    while (t->index[j])
        j = (j + 1) & (t->index_cap - 1);
    t->index[j] = (uint32_t)(i + 1);
    return true;
}

/* A cell of a preset column by that column's rules (those of config_parse_model_shape,
 * config_parse_layer_shape and config_parse_gpu): the two must agree, as a typed preset cell skips
 * the row's parser. */
static bool parse_column(struct row *r, enum col c, union cell_value *v)
{
    switch (c) {
    case COL_ARCH:
        v->word = config_parse_word(r, c, config_arch_words, 2);
        return v->word >= 0;
    case COL_QKV_BIAS:
        v->word = config_parse_level(r, c, config_qkv_bias_words, 2);
        return v->word >= 0;
    case COL_QK_NORM:
        v->word = config_parse_level(r, c, config_qk_norm_words, 1);
        return v->word >= 0;
    case COL_ROUTER_BIAS:
        v->word = config_parse_level(r, c, config_router_bias_words, 1);
        return v->word >= 0;
    case COL_TIED:
    case COL_DROPOUT:
    case COL_SHARED_GATE:
        return config_parse_bool_cell(r, c, &v->b);
    case COL_POSITIONS:
    case COL_EXPERTS:
    case COL_SHARED_FFN:
    case COL_DENSE_LAYERS:
    case COL_Q_LORA_RANK:
    case COL_KV_LORA_RANK:
        return config_parse_uint(r, c, &v->u, true);
    case COL_GPU_MEM_GB:
        return config_parse_double(r, c, &v->d);
    default: /* layers, hidden, heads, kv_heads, vocab, ffn, head_dim, layer_norms, top_k,
              * expert_ffn, qk_nope_dim, qk_rope_dim, v_head_dim */
        return config_parse_uint(r, c, &v->u, false);
    }
}

/* Parses the preset's cells once, at load time; see struct preset. */
void config_preset_type_cells(struct preset *p)
{
    p->n_given = 0;
    for (int c = 0; c < COL_COUNT; c++) {
        if (!p->cells[c])
            continue;
        p->given[p->n_given++] = (unsigned char)c;
        struct row r = {.quiet = true};
        r.cell[c] = p->cells[c];
        p->typed[c] = parse_column(&r, (enum col)c, &p->value[c]);
    }
}
