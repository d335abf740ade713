/* config: see config.h. */
#include "input/config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/suggest.h"
#include "input/columns.h"
#include "input/csvin.h"
#include "input/modeljson.h"
#include "model/model.h"
#include "plan/plan.h"

/* ---- the column table (doc/model.md section 13.1) ---- */

/* Every column (columns.h); the model columns (a model preset sets them) are COL_ARCH to
 * COL_V_HEAD_DIM. */
enum col {
#define COLUMN_ENUM(id, name, written, kind) COL_##id,
    SCENARIO_COLUMNS(COLUMN_ENUM)
#undef COLUMN_ENUM
        COL_COUNT
};

/* struct row marks the cells that came from a preset with one bit per column. */
_Static_assert(COL_COUNT <= 64, "a column needs a bit of row.from_preset");

static const char *const column_names[COL_COUNT] = {
#define COLUMN_NAME(id, name, written, kind) name,
    SCENARIO_COLUMNS(COLUMN_NAME)
#undef COLUMN_NAME
};

/* Columns a model preset may set. */
static bool is_model_column(enum col c)
{
    return c >= COL_ARCH && c <= COL_V_HEAD_DIM;
}

const char *const *config_column_names(size_t *n)
{
    *n = COL_COUNT;
    return column_names;
}

static int column_lookup(const char *name)
{
    for (int i = 0; i < COL_COUNT; i++)
        if (strcasecmp(name, column_names[i]) == 0)
            return i;
    return -1;
}

/* ---- presets ---- */

/* The numbers of a GPU preset besides mem_gb: its speeds, and (the last, not a speed) mem_mib, the
 * capacity the device itself reports (nvidia-smi, rocm-smi) in MiB, which wins over mem_gb. */
#define GPU_SPEED_COLUMNS 6
static const char *const gpu_speed_names[GPU_SPEED_COLUMNS] = {
    "bf16_tflops", "hbm_tb_s", "link_gb_s", "pcie_gb_s", "fp8_tflops", "mem_mib"};

/* What a GPU preset says of FP8 (doc/model.md sections 3.7 and 13.3), each yes or no (empty:
 * unknown, which allows it): FP8 tensor cores (Ada, Hopper, Blackwell), MXFP8 (Blackwell), one
 * FP8 copy serving both GEMM orientations (Blackwell). Preset file columns COL_COUNT +
 * GPU_SPEED_COLUMNS + i. */
enum gpu_flag { GPU_FLAG_FP8, GPU_FLAG_MXFP8, GPU_FLAG_FP8_ONE_COPY, GPU_FLAG_COLUMNS };
static const char *const gpu_flag_names[GPU_FLAG_COLUMNS] = {"fp8", "mxfp8", "fp8_one_copy"};
enum gpu_flag_value { GPU_FLAG_UNKNOWN, GPU_FLAG_NO, GPU_FLAG_YES };

/* A cell parsed by its column's rules (which member: see parse_column). */
union cell_value {
    uint64_t u;
    double d;
    bool b;
    int word;
};

/*
 * A preset keeps its cells as text, for the messages, and parsed: the rows of a file name the
 * same few presets again and again, and parsing their cells for every row was a third of config's
 * time. A cell that does not parse stays untyped and goes through the row's parsers, which report
 * it for each row that uses it (with "from preset"), as if it had been written in the row.
 */
struct preset {
    char *name;
    char *path;   /* a config.json's preset: the model cell that named it (doc/model.md 13.3) */
    uint64_t key; /* name_key(name), to find the preset without a strcasecmp per preset */
    char *cells[COL_COUNT]; /* model columns, or COL_GPU_MEM_GB for a GPU */
    union cell_value value[COL_COUNT];
    bool typed[COL_COUNT];          /* value[c] holds cells[c], parsed */
    unsigned char given[COL_COUNT]; /* the columns whose cells are not empty, n_given of them */
    unsigned n_given;
    struct gpu_speed speed;
    double mem_mib; /* a GPU's capacity as the device reports it, MiB; 0: none (mem_gb) */
    unsigned char flag[GPU_FLAG_COLUMNS]; /* a GPU's FP8 support (enum gpu_flag_value) */
    unsigned long long sliding_window;    /* a config.json's attention window (0: none) */
    unsigned long line;                   /* where the preset file defines it */
};

struct preset_table {
    struct preset *rows;
    size_t n, cap;
    /* The rows by key: open addressing, row index + 1 (0: empty), at most half full. A scan of
     * the rows' keys touched a cache line per preset for every cell that names one. */
    uint32_t *index;
    size_t index_cap;
    const char **names; /* for suggestions */
    bool loaded;        /* read from a file; false: no file was found (config_presets_load) */
};

struct config_presets {
    struct preset_table models, gpus;
};

static void preset_table_release(struct preset_table *t)
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
    preset_table_release(&p->models);
    preset_table_release(&p->gpus);
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
    int c = column_lookup(name);
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
    return c == COL_GPU_MEM_GB ? "mem_gb" : c >= 0 ? column_names[c] : "?";
}

static void preset_type_cells(struct preset *p);

/* A case-insensitive hash of a name (FNV-1a over tolower, which is how strcasecmp compares):
 * equal names under strcasecmp have equal keys. */
static inline unsigned char fold(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c | 0x20) : c; /* tolower of the C locale */
}

static uint64_t name_key(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ fold((unsigned char)*s)) * 1099511628211ull;
    return h;
}

static const struct preset *preset_find(const struct preset_table *t, const char *name);
static bool preset_index(struct preset_table *t, size_t i);

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
    double *speeds[GPU_SPEED_COLUMNS] = {&p->speed.bf16_tflops, &p->speed.hbm_tb_s,
                                         &p->speed.link_gb_s,   &p->speed.pcie_gb_s,
                                         &p->speed.fp8_tflops,  &p->mem_mib};
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
    const struct preset *first = p->name && *p->name ? preset_find(t, p->name) : NULL;
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
    p->key = name_key(p->name);
    if (!preset_index(t, t->n)) {
        diag_report(d, path, rec->line, "out of memory");
        preset_release(p);
        return false;
    }
    preset_type_cells(p);
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
    FILE *f = fopen(path, "r");
    if (!f) {
        diag_report(d, path, 0, "cannot open preset table: %s", strerror(errno));
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

/* strcasecmp(s, word) == 0, the first letters compared inline first (ASCII case folding, as
 * strcasecmp in the C locale): most words a cell is tried against differ in the first letter,
 * and a library call per word tried was a tenth of config's time. A cell mostly is the word as
 * written: strcmp, several times faster, says so before strcasecmp is asked. */
static bool is_word(const char *s, const char *word)
{
    return ((unsigned char)*s | 0x20) == ((unsigned char)*word | 0x20) &&
           (strcmp(s, word) == 0 || strcasecmp(s, word) == 0);
}

static const struct preset *preset_find(const struct preset_table *t, const char *name)
{
    if (!t->index_cap)
        return NULL;
    uint64_t key = name_key(name);
    for (size_t j = key & (t->index_cap - 1); t->index[j]; j = (j + 1) & (t->index_cap - 1)) {
        const struct preset *p = &t->rows[t->index[j] - 1];
        if (p->key == key && is_word(p->name, name))
            return p;
    }
    return NULL;
}

/* Puts row i (its key set) in the index. False when out of memory. */
static bool preset_index(struct preset_table *t, size_t i)
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
            preset_index(t, r); /* room enough: no recursion beyond one level */
    }
    size_t j = t->rows[i].key & (t->index_cap - 1);
    while (t->index[j])
        j = (j + 1) & (t->index_cap - 1);
    t->index[j] = (uint32_t)(i + 1);
    return true;
}

/* ---- one row ---- */

struct row {
    const char *file;
    unsigned long line;
    struct diag *diag;
    const char *cell[COL_COUNT]; /* NULL: empty */
    /* Bit c: cell c came from the model preset (COL_GPU_MEM_GB: the GPU preset). A mask, not an
     * array per column, so that nothing but cell[] is set for every row. */
    uint64_t from_preset;
    uint64_t present; /* bit c: cell c is not empty (from the row or a preset) */
    const struct preset *model, *gpu;
    bool quiet; /* errors are not reported (parsing a preset's cells at load time) */
    bool job;   /* a job of memfit search (config_reader_read_jobs) */
};

/* The preset cell c of the row came from, or NULL. */
static const struct preset *cell_preset(const struct row *r, enum col c)
{
    if (!(r->from_preset >> c & 1u))
        return NULL;
    return c == COL_GPU_MEM_GB ? r->gpu : r->model;
}

/* The value of cell c parsed at load time (a valid preset cell), or NULL. */
static const union cell_value *typed_cell(const struct row *r, enum col c)
{
    const struct preset *p = cell_preset(r, c);
    return p && p->typed[c] ? &p->value[c] : NULL;
}

static bool row_error(struct row *r, enum col c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool row_error(struct row *r, enum col c, const char *fmt, ...)
{
    char msg[DIAG_MSG_MAX];
    va_list ap;
    if (r->quiet)
        return false;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const struct preset *p = cell_preset(r, c);
    if (p)
        diag_report(r->diag, r->file, r->line, "column '%s': %s (from %s%s%s)", column_names[c],
                    msg, p->path ? "" : "preset '", p->name, p->path ? "" : "'");
    else
        diag_report(r->diag, r->file, r->line, "column '%s': %s", column_names[c], msg);
    return false;
}

static bool require(struct row *r, enum col c)
{
    if (r->cell[c])
        return true;
    return row_error(r, c, "a value is required");
}

/* Explains why `s` is not a valid integer for column c (the slow path of parse_uint). */
static bool uint_error(struct row *r, enum col c, const char *s, bool allow_zero)
{
    const char *what = allow_zero ? "a non-negative integer" : "a positive integer";
    char *end;
    strtod(s, &end);
    bool number = end != s && !*end;
    if (number && *s == '-')
        return row_error(r, c, "'%s' is negative: expected %s", s, what);
    if (number && strpbrk(s, ".eE"))
        return row_error(r, c, "'%s' is not an integer: expected %s", s, what);
    return row_error(r, c, "'%s' is not %s", s, what);
}

static bool parse_uint(struct row *r, enum col c, uint64_t *out, bool allow_zero)
{
    const union cell_value *typed = typed_cell(r, c);
    if (typed) {
        *out = typed->u;
        return true;
    }
    /* Digits only, accumulated with an overflow check: strtoull was a tenth of eval's time. */
    const char *s = r->cell[c], *p = s;
    uint64_t v = 0;
    if (!*p)
        return uint_error(r, c, s, allow_zero);
    for (; *p >= '0' && *p <= '9'; p++) {
        if (__builtin_mul_overflow(v, 10, &v) ||
            __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v)) {
            while (*p >= '0' && *p <= '9')
                p++;
            if (*p)
                return uint_error(r, c, s, allow_zero);
            return row_error(r, c, "'%s' is too large (more than 64 bits)", s);
        }
    }
    if (*p)
        return uint_error(r, c, s, allow_zero);
    if (v == 0 && !allow_zero)
        return row_error(r, c, "'%s' is zero: expected %s", s,
                         allow_zero ? "a non-negative integer" : "a positive integer");
    *out = v;
    return true;
}

/* An optional positive integer: *out keeps its default when the cell is empty. */
static bool opt_uint(struct row *r, enum col c, uint64_t *out, bool allow_zero)
{
    return !r->cell[c] || parse_uint(r, c, out, allow_zero);
}

static bool parse_bool_cell(struct row *r, enum col c, bool *out)
{
    static const char *const yes[] = {"1", "yes", "true", "y", "on"};
    static const char *const no[] = {"0", "no", "false", "n", "off"};
    const union cell_value *typed = typed_cell(r, c);
    if (typed) {
        *out = typed->b;
        return true;
    }
    for (size_t i = 0; i < 5; i++) {
        if (is_word(r->cell[c], yes[i])) {
            *out = true;
            return true;
        }
        if (is_word(r->cell[c], no[i])) {
            *out = false;
            return true;
        }
    }
    return row_error(r, c, "'%s' is not a boolean (0/1/yes/no/true/false)", r->cell[c]);
}

/* An optional boolean: *out keeps its default when the cell is empty. */
static bool opt_bool(struct row *r, enum col c, bool *out)
{
    return !r->cell[c] || parse_bool_cell(r, c, out);
}

static bool parse_double(struct row *r, enum col c, double *out)
{
    const union cell_value *typed = typed_cell(r, c);
    if (typed) {
        *out = typed->d;
        return true;
    }
    char *end;
    errno = 0;
    double v = strtod(r->cell[c], &end);
    if (end == r->cell[c] || *end || !isfinite(v))
        return row_error(r, c, "'%s' is not a number", r->cell[c]);
    *out = v;
    return true;
}

/* One of a list of words; returns the index or -1 after reporting. */
static int parse_word(struct row *r, enum col c, const char *const *words, size_t n)
{
    const union cell_value *typed = typed_cell(r, c);
    if (typed)
        return typed->word;
    for (size_t i = 0; i < n; i++)
        if (is_word(r->cell[c], words[i]))
            return (int)i;
    char list[160];
    row_error(r, c, "'%s' is not one of %s", r->cell[c],
              suggest_join(words, n, ", ", list, sizeof list));
    return -1;
}

static const char *const arch_words[] = {"gpt", "llama"};

/* A cell of a preset column by that column's rules (those of parse_model_shape, parse_layer_shape
 * and parse_gpu): the two must agree, as a typed preset cell skips the row's parser. */
static bool parse_column(struct row *r, enum col c, union cell_value *v)
{
    switch (c) {
    case COL_ARCH:
        v->word = parse_word(r, c, arch_words, 2);
        return v->word >= 0;
    case COL_TIED:
    case COL_DROPOUT:
    case COL_QKV_BIAS:
    case COL_QK_NORM:
    case COL_SHARED_GATE:
    case COL_ROUTER_BIAS:
        return parse_bool_cell(r, c, &v->b);
    case COL_POSITIONS:
    case COL_EXPERTS:
    case COL_SHARED_FFN:
    case COL_DENSE_LAYERS:
    case COL_Q_LORA_RANK:
    case COL_KV_LORA_RANK:
        return parse_uint(r, c, &v->u, true);
    case COL_GPU_MEM_GB:
        return parse_double(r, c, &v->d);
    default: /* layers, hidden, heads, kv_heads, vocab, ffn, head_dim, layer_norms, top_k,
              * expert_ffn, qk_nope_dim, qk_rope_dim, v_head_dim */
        return parse_uint(r, c, &v->u, false);
    }
}

/* Parses the preset's cells once, at load time; see struct preset. */
static void preset_type_cells(struct preset *p)
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

/* ---- the reader ---- */

struct config_reader {
    const char *file;
    struct diag *diag;
    const struct config_presets *presets;
    struct config_options opt;
    struct nameset *names;
    struct csvin *in;
    int *map; /* header field index -> column, -1 unknown */
    size_t n_cols;
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
    if (!r->in) {
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
    preset_table_release(&r->json);
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
        int c = column_lookup(name);
        r->map[i] = c;
        if (c < 0) {
            const char *near = suggest_closest(name, column_names, COL_COUNT);
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
                        column_names[c]);
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
        diag_report(r->diag, r->file, rec->line, "column '%s': the cell holds a NUL byte",
                    column_names[r->map[rec->nul_field - 1]]);
        return false;
    }
    /* One memset: cheaper than clearing the columns the header lacks, most of them. */
    memset(row->cell, 0, sizeof row->cell);
    for (size_t i = 0; i < rec->n_fields; i++) {
        const char *v = trimmed_field(rec, i);
        row->cell[r->map[i]] = v;
        row->present |= (uint64_t)(v != NULL) << r->map[i];
    }
    return true;
}

/* The preset named in column c of the row, or NULL after reporting it unknown. */
static const struct preset *row_preset(struct row *row, enum col c, const struct preset_table *t,
                                       const char *kind)
{
    const struct preset *p = t ? preset_find(t, row->cell[c]) : NULL;
    if (p)
        return p;
    if (t && !t->loaded) { /* a binary without its data files: say so, not "unknown" */
        bool model = c == COL_MODEL;
        row_error(row, c,
                  "cannot look up '%s': the presets file %s was not found (%s FILE names one)",
                  row->cell[c], model ? "configs/models.csv" : "configs/gpus.csv",
                  model ? "--models" : "--gpus");
        return NULL;
    }
    const char *near = t ? suggest_closest(row->cell[c], t->names, t->n) : NULL;
    if (near)
        row_error(row, c, "unknown %s preset '%s' (did you mean '%s'?)", kind, row->cell[c], near);
    else
        row_error(row, c, "unknown %s preset '%s'", kind, row->cell[c]);
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
            row->from_preset |= (uint64_t)1 << c;
            row->present |= (uint64_t)1 << c;
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
        row_error(row, COL_MODEL, "%s", why);
        return NULL;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 4;
        struct preset *rows = realloc(t->rows, cap * sizeof *rows);
        if (!rows) {
            row_error(row, COL_MODEL, "out of memory");
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
        int c = column_lookup(cols[i]); /* a model column (test_modeljson.c) */
        if (m.value[i][0] && c >= 0)
            ok = (p->cells[c] = strdup(m.value[i])) != NULL;
    }
    if (ok) {
        p->key = name_key(p->name);
        ok = preset_index(t, t->n);
    }
    if (!ok) {
        free(p->path);
        free(p->name);
        for (int c = 0; c < COL_COUNT; c++)
            free(p->cells[c]);
        row_error(row, COL_MODEL, "out of memory");
        return NULL;
    }
    t->n++;
    p->sliding_window = m.sliding_window;
    preset_type_cells(p);
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
    if (!require(row, COL_NAME))
        return false;
    const char *name = row->cell[COL_NAME];
    size_t shown;
    long chars = utf8_length(name, 20, &shown);
    if (chars < 0)
        return row_error(row, COL_NAME, "the name is not valid UTF-8");
    if (chars > SCENARIO_NAME_MAX)
        return row_error(row, COL_NAME, "'%.*s...' is longer than %d characters", (int)shown, name,
                         SCENARIO_NAME_MAX);
    memcpy(sc->name, name, strlen(name) + 1); /* at most 4 bytes a character: it fits */
    return true;
}

static bool parse_model_shape(struct row *row, struct scenario *sc)
{
    if (row->cell[COL_ARCH]) {
        int a = parse_word(row, COL_ARCH, arch_words, 2);
        if (a < 0)
            return false;
        sc->arch = (enum arch)a;
    }
    if (!require(row, COL_LAYERS) || !parse_uint(row, COL_LAYERS, &sc->layers, false) ||
        !require(row, COL_HIDDEN) || !parse_uint(row, COL_HIDDEN, &sc->hidden, false) ||
        !require(row, COL_HEADS) || !parse_uint(row, COL_HEADS, &sc->heads, false) ||
        !require(row, COL_VOCAB) || !parse_uint(row, COL_VOCAB, &sc->vocab, false))
        return false;
    sc->kv_heads = sc->heads;
    /* Llama's SwiGLU width: 8h/3 rounded up to a multiple of 256 (doc/model.md section 2.2;
     * meta-llama/llama llama/model.py, FeedForward). */
    sc->ffn = sc->arch == ARCH_GPT ? 4 * sc->hidden : 256 * ((8 * sc->hidden / 3 + 255) / 256);
    sc->tied = sc->arch == ARCH_GPT;
    sc->dropout = sc->arch == ARCH_GPT;
    sc->qkv_bias = sc->arch == ARCH_GPT;
    sc->positions = 0;
    if (sc->hidden > UINT64_MAX / 8)
        return row_error(row, COL_HIDDEN, "'%s' is too large", row->cell[COL_HIDDEN]);
    return opt_uint(row, COL_KV_HEADS, &sc->kv_heads, false) &&
           opt_uint(row, COL_FFN, &sc->ffn, false) &&
           opt_uint(row, COL_POSITIONS, &sc->positions, true) &&
           opt_bool(row, COL_TIED, &sc->tied) && opt_bool(row, COL_DROPOUT, &sc->dropout);
}

/* The columns of modern layers (doc/model.md section 13.1): head width, biases and norms, the
 * experts, latent attention. Only their syntax; the rules between them are check_attention's and
 * check_experts'. */
static bool parse_layer_shape(struct row *row, struct scenario *sc)
{
    /* Most rows are dense models that give none of them. */
    uint64_t modern = (((uint64_t)1 << (COL_V_HEAD_DIM + 1)) - ((uint64_t)1 << COL_HEAD_DIM)) |
                      (uint64_t)1 << COL_CAPACITY_FACTOR;
    if (!(row->present & modern))
        return true;
    if (!opt_uint(row, COL_HEAD_DIM, &sc->head_dim, false) ||
        !opt_bool(row, COL_QKV_BIAS, &sc->qkv_bias) || !opt_bool(row, COL_QK_NORM, &sc->qk_norm) ||
        !opt_uint(row, COL_LAYER_NORMS, &sc->layer_norms, false) ||
        !opt_uint(row, COL_EXPERTS, &sc->experts, true) ||
        !opt_uint(row, COL_TOP_K, &sc->top_k, false) ||
        !opt_uint(row, COL_EXPERT_FFN, &sc->expert_ffn, false) ||
        !opt_uint(row, COL_SHARED_FFN, &sc->shared_ffn, true) ||
        !opt_bool(row, COL_SHARED_GATE, &sc->shared_gate) ||
        !opt_bool(row, COL_ROUTER_BIAS, &sc->router_bias) ||
        !opt_uint(row, COL_DENSE_LAYERS, &sc->dense_layers, true) ||
        !opt_uint(row, COL_Q_LORA_RANK, &sc->q_lora_rank, true) ||
        !opt_uint(row, COL_KV_LORA_RANK, &sc->kv_lora_rank, true) ||
        !opt_uint(row, COL_QK_NOPE_DIM, &sc->qk_nope_dim, false) ||
        !opt_uint(row, COL_QK_ROPE_DIM, &sc->qk_rope_dim, false) ||
        !opt_uint(row, COL_V_HEAD_DIM, &sc->v_head_dim, false))
        return false;
    if (!row->cell[COL_CAPACITY_FACTOR])
        return true; /* 0: dropless */
    if (!parse_double(row, COL_CAPACITY_FACTOR, &sc->capacity_factor))
        return false;
    if (!(sc->capacity_factor > 0))
        return row_error(row, COL_CAPACITY_FACTOR,
                         "'%s' must be a positive number (empty: dropless)",
                         row->cell[COL_CAPACITY_FACTOR]);
    return true;
}

static bool parse_recompute(struct row *row, struct scenario *sc)
{
    sc->recompute = RECOMPUTE_NONE;
    sc->ckpt_every = 0;
    const char *v = row->cell[COL_RECOMPUTE];
    if (!v || is_word(v, "none"))
        return true;
    if (is_word(v, "selective")) {
        sc->recompute = RECOMPUTE_SELECTIVE;
        return true;
    }
    sc->recompute = RECOMPUTE_EVERY_K;
    if (is_word(v, "full")) {
        sc->ckpt_every = 1;
        return true;
    }
    if (!isdigit((unsigned char)*v) && *v != '-')
        return row_error(row, COL_RECOMPUTE,
                         "'%s' is not none, selective, full or a positive integer k", v);
    return parse_uint(row, COL_RECOMPUTE, &sc->ckpt_every, false);
}

/* How the step is run (doc/model.md section 10.2); the defaults follow precision: Megatron-LM
 * fuses its cross-entropy and optimizer and keeps a persistent gradient buffer, PyTorch's eager
 * loop computes the loss eagerly, creates the gradients on demand and runs foreach AdamW. */
static bool parse_step_impl(struct row *row, struct scenario *sc)
{
    static const char *const losses[] = {"eager", "fused"};
    static const char *const buffers[] = {"on_demand", "persistent"};
    static const char *const impls[] = {"foreach", "fused", "single"};
    bool megatron = sc->precision == PRECISION_MEGATRON;
    int w;
    sc->loss = megatron ? LOSS_FUSED : LOSS_EAGER;
    sc->grad_buffer = megatron ? GRAD_PERSISTENT : GRAD_ON_DEMAND;
    sc->optimizer_impl = megatron ? OPTIMIZER_FUSED : OPTIMIZER_FOREACH;
    if (row->cell[COL_LOSS]) {
        if ((w = parse_word(row, COL_LOSS, losses, 2)) < 0)
            return false;
        sc->loss = (enum loss_impl)w;
    }
    if (row->cell[COL_GRAD_BUFFER]) {
        if ((w = parse_word(row, COL_GRAD_BUFFER, buffers, 2)) < 0)
            return false;
        sc->grad_buffer = (enum grad_buffer)w;
    }
    if (row->cell[COL_OPTIMIZER_IMPL]) {
        if ((w = parse_word(row, COL_OPTIMIZER_IMPL, impls, 3)) < 0)
            return false;
        sc->optimizer_impl = (enum optimizer_impl)w;
    }
    return true;
}

/* What is trained and by which optimizer (doc/model.md sections 3.5 and 3.6): only the syntax;
 * the rules between them and the other columns are check_tuning's. Most rows give none. */
static bool parse_tuning(struct row *row, struct scenario *sc)
{
    static const char *const optimizers[] = {"adamw", "adamw-bf16", "adamw8bit", "sgd"};
    static const char *const finetunes[] = {"full", "lora", "qlora"};
    static const char *const targets[] = {"qv", "all-linear"};
    int w;
    if (row->cell[COL_OPTIMIZER]) {
        if ((w = parse_word(row, COL_OPTIMIZER, optimizers, 4)) < 0)
            return false;
        sc->optimizer = (enum optimizer)w;
    }
    if (row->cell[COL_FINETUNE]) {
        if ((w = parse_word(row, COL_FINETUNE, finetunes, 3)) < 0)
            return false;
        sc->finetune = (enum finetune)w;
    }
    if (row->cell[COL_LORA_TARGETS]) {
        if ((w = parse_word(row, COL_LORA_TARGETS, targets, 2)) < 0)
            return false;
        sc->lora_targets = (enum lora_targets)w;
    }
    return opt_uint(row, COL_LORA_RANK, &sc->lora_rank, false);
}

/* For the messages' %llu. */
#define ULL(x) ((unsigned long long)(x))

/* The layout columns a job's row may give, each pinning a choice of the search. */
static const struct {
    enum col col;
    enum scenario_pin pin;
} job_pins[] = {{COL_DP, SCENARIO_PIN_DP},
                {COL_TP, SCENARIO_PIN_TP},
                {COL_PP, SCENARIO_PIN_PP},
                {COL_VPP, SCENARIO_PIN_VPP},
                {COL_CP, SCENARIO_PIN_CP},
                {COL_EP, SCENARIO_PIN_EP},
                {COL_ETP, SCENARIO_PIN_ETP},
                {COL_SP, SCENARIO_PIN_SP},
                {COL_ZERO, SCENARIO_PIN_ZERO},
                {COL_ATTENTION, SCENARIO_PIN_ATTENTION},
                {COL_RECOMPUTE, SCENARIO_PIN_RECOMPUTE},
                {COL_OFFLOAD, SCENARIO_PIN_OFFLOAD},
                {COL_MICRO_BATCH, SCENARIO_PIN_MICRO_BATCH},
                {COL_ZERO_GROUP, SCENARIO_PIN_ZERO_GROUP}};

/* Whether a job's row pins column c (a preset never sets a layout column). */
static bool pinned(const struct row *row, enum col c)
{
    return row->job && row->cell[c];
}

/*
 * A job's gpus (doc/model.md 13.1): a count, or a range A:B (A <= B, holding a multiple of
 * gpus_per_node) for the smallest count at which a layout fits, or nothing (0, for the
 * command line's range). Sets gpus, gpus_from, pinned, and
 * dp when the row leaves it out: gpus / (tp pp cp) of a count, 1 for a range. Each pinned degree
 * must divide a count, and so must the product of the pinned tp, pp, cp and dp (equal to it when
 * all four are pinned).
 */
static bool parse_job_gpus(struct row *row, struct scenario *sc)
{
    char cell[64];
    const char *text = row->cell[COL_GPUS], *colon;
    for (size_t i = 0; i < sizeof job_pins / sizeof job_pins[0]; i++)
        if (row->cell[job_pins[i].col])
            sc->pinned |= (unsigned)job_pins[i].pin;
    if (!text) /* 0: the caller's --gpus-range (memfit search says so when there is none) */
        return true;
    colon = strchr(text, ':');
    if (colon && (size_t)(colon - text) < sizeof cell) {
        /* Each end is parsed as a cell of its own, for parse_uint's messages. */
        memcpy(cell, text, (size_t)(colon - text));
        cell[colon - text] = '\0';
        row->cell[COL_GPUS] = cell;
        bool ok = parse_uint(row, COL_GPUS, &sc->gpus_from, false);
        row->cell[COL_GPUS] = colon + 1;
        ok = ok && parse_uint(row, COL_GPUS, &sc->gpus, false);
        row->cell[COL_GPUS] = text;
        if (!ok)
            return false;
        uint64_t n = sc->gpus_per_node, first = sc->gpus_from / n + (sc->gpus_from % n != 0);
        if (sc->gpus_from > sc->gpus)
            return row_error(row, COL_GPUS, "'%s' is a range A:B with A > B", text);
        if (first > sc->gpus / n)
            return row_error(row, COL_GPUS,
                             "'%s' holds no multiple of gpus_per_node (%llu): the counts searched",
                             text, ULL(n));
        return true;
    }
    if (!parse_uint(row, COL_GPUS, &sc->gpus, false))
        return false;
    static const enum col degrees[] = {COL_TP, COL_PP, COL_CP, COL_DP, COL_EP, COL_ZERO_GROUP};
    const uint64_t value[] = {sc->tp, sc->pp, sc->cp, sc->dp, sc->ep, sc->zero_group};
    uint64_t product = 1;
    unsigned n_pinned = 0;
    for (size_t i = 0; i < sizeof degrees / sizeof degrees[0]; i++) {
        if (!row->cell[degrees[i]])
            continue;
        if (sc->gpus % value[i])
            return row_error(row, degrees[i], "'%llu' does not divide gpus (%llu)", ULL(value[i]),
                             ULL(sc->gpus));
        if (i > 3)
            continue;
        n_pinned++;
        if (__builtin_mul_overflow(product, value[i], &product) || sc->gpus % product)
            return row_error(row, degrees[i],
                             "'%llu' times the other pinned degrees of tp, pp, cp and dp does not "
                             "divide gpus (%llu)",
                             ULL(value[i]), ULL(sc->gpus));
    }
    if (n_pinned == 4 && product != sc->gpus)
        return row_error(row, COL_DP, "dp * tp * pp * cp (%llu) is not gpus (%llu)", ULL(product),
                         ULL(sc->gpus));
    if (!row->cell[COL_DP])
        sc->dp = sc->gpus / (sc->tp * sc->pp * sc->cp);
    return true;
}

/* gpus, the GPUs of the layout, dp tp pp cp (doc/model.md 13.1): with dp left out it sets dp,
 * as search's jobs and fix_plan write it; with dp given it must agree. A job's: parse_job_gpus. */
static bool parse_gpus(struct row *row, struct scenario *sc)
{
    if (row->job)
        return parse_job_gpus(row, sc);
    uint64_t gpus = 0, other;
    if (!opt_uint(row, COL_GPUS, &gpus, false))
        return false;
    sc->gpus = gpus;
    if (!gpus)
        return true;
    if (__builtin_mul_overflow(sc->tp * sc->pp, sc->cp, &other) || other == 0)
        return row_error(row, COL_GPUS, "'%llu': tp * pp * cp is too large", ULL(gpus));
    if (!row->cell[COL_DP]) {
        if (gpus % other)
            return row_error(row, COL_GPUS, "'%llu' is not a multiple of tp * pp * cp (%llu)",
                             ULL(gpus), ULL(other));
        sc->dp = gpus / other;
        return true;
    }
    uint64_t have;
    if (__builtin_mul_overflow(sc->dp, other, &have) || have != gpus)
        return row_error(row, COL_GPUS, "'%llu' is not dp * tp * pp * cp (%llu * %llu)", ULL(gpus),
                         ULL(sc->dp), ULL(other));
    return true;
}

static bool parse_training(struct row *row, struct scenario *sc)
{
    static const char *const precisions[] = {"mixed", "autocast", "megatron", "frozen", "fp32"};
    static const char *const attentions[] = {"plain", "flash"};
    static const char *const offloads[] = {"none", "optimizer", "checkpoints"};
    int w;
    if (!require(row, COL_SEQ) || !parse_uint(row, COL_SEQ, &sc->seq, false))
        return false;
    sc->micro_batch = 1; /* a job's, until the search picks it (unless its row pins it) */
    if ((!row->job || row->cell[COL_MICRO_BATCH]) &&
        (!require(row, COL_MICRO_BATCH) ||
         !parse_uint(row, COL_MICRO_BATCH, &sc->micro_batch, false)))
        return false;
    if (row->cell[COL_PRECISION]) {
        if ((w = parse_word(row, COL_PRECISION, precisions, 5)) < 0)
            return false;
        sc->precision = (enum precision)w;
    }
    if (row->cell[COL_FP8]) {
        static const char *const fp8s[] = {"none", "tensor", "mxfp8"};
        if ((w = parse_word(row, COL_FP8, fp8s, 3)) < 0)
            return false;
        sc->fp8 = (enum fp8)w;
    }
    if (row->cell[COL_ATTENTION]) {
        if ((w = parse_word(row, COL_ATTENTION, attentions, 2)) < 0)
            return false;
        sc->attention = (enum attention)w;
    }
    if (row->cell[COL_OFFLOAD]) {
        if ((w = parse_word(row, COL_OFFLOAD, offloads, 3)) < 0)
            return false;
        sc->offload = (enum offload)w;
    }
    if (!parse_step_impl(row, sc) || !parse_tuning(row, sc))
        return false;
    uint64_t zero = 0;
    if (!parse_recompute(row, sc) || !opt_uint(row, COL_DP, &sc->dp, false) ||
        !opt_uint(row, COL_TP, &sc->tp, false) || !opt_uint(row, COL_PP, &sc->pp, false) ||
        !opt_bool(row, COL_SP, &sc->sp) || !opt_uint(row, COL_EP, &sc->ep, false) ||
        !opt_uint(row, COL_ETP, &sc->etp, false) || !opt_uint(row, COL_ZERO, &zero, true) ||
        !opt_uint(row, COL_GPUS_PER_NODE, &sc->gpus_per_node, false) ||
        !opt_uint(row, COL_CP, &sc->cp, false) || !opt_uint(row, COL_VPP, &sc->vpp, false) ||
        !opt_uint(row, COL_ZERO_GROUP, &sc->zero_group, false))
        return false;
    if (zero > 3)
        return row_error(row, COL_ZERO, "'%s' is not a ZeRO stage 0-3", row->cell[COL_ZERO]);
    if (!parse_gpus(row, sc))
        return false;
    sc->zero = (unsigned)zero;
    /* A job's batch is fixed (the search divides it): no default from a layout it has not. */
    if ((row->job && !require(row, COL_GLOBAL_BATCH)) ||
        !opt_uint(row, COL_GLOBAL_BATCH, &sc->global_batch, false))
        return false;
    return true;
}

/* The capacity of the row's GPU preset as the device reports it (its mem_mib, 2^20 bytes each),
 * unless the row writes its own gpu_mem_gb (10^9 bytes per GB); false when there is none. */
static bool gpu_preset_capacity(const struct row *row, uint64_t *bytes)
{
    if (!row->gpu || !(row->gpu->mem_mib > 0) ||
        (row->cell[COL_GPU_MEM_GB] && !cell_preset(row, COL_GPU_MEM_GB)))
        return false;
    *bytes = (uint64_t)nearbyint(row->gpu->mem_mib * 1048576.0);
    return true;
}

/* The row's gpu_mem_gb (its own, or the GPU preset's mem_gb), 10^9 bytes per GB. */
static bool parse_gpu_mem_gb(struct row *row, struct scenario *sc)
{
    double gb = 0;
    if (!require(row, COL_GPU_MEM_GB) || !parse_double(row, COL_GPU_MEM_GB, &gb))
        return false;
    if (gb <= 0)
        return row_error(row, COL_GPU_MEM_GB, "'%s' must be a positive number of GB",
                         row->cell[COL_GPU_MEM_GB]);
    if (gb * 1e9 >= 1.8e19)
        return row_error(row, COL_GPU_MEM_GB, "'%s' is too large", row->cell[COL_GPU_MEM_GB]);
    sc->gpu_mem_bytes = (uint64_t)nearbyint(gb * 1e9);
    return true;
}

static bool parse_gpu(struct row *row, struct scenario *sc)
{
    if (!gpu_preset_capacity(row, &sc->gpu_mem_bytes) && !parse_gpu_mem_gb(row, sc))
        return false;
    if (row->cell[COL_RESERVE]) {
        if (!parse_double(row, COL_RESERVE, &sc->reserve))
            return false;
        if (!(sc->reserve >= 0 && sc->reserve < 1))
            return row_error(row, COL_RESERVE, "'%s' is outside [0, 1)", row->cell[COL_RESERVE]);
    }
    return true;
}

/* Head width, biases and latent attention (doc/model.md section 13.2). */
static bool check_attention(struct row *row, const struct scenario *sc)
{
    static const enum col mla_dims[] = {COL_QK_NOPE_DIM, COL_QK_ROPE_DIM, COL_V_HEAD_DIM};
    static const enum col mla_cols[] = {COL_Q_LORA_RANK, COL_QK_NOPE_DIM, COL_QK_ROPE_DIM,
                                        COL_V_HEAD_DIM};
    if (sc->arch == ARCH_GPT && !sc->qkv_bias)
        return row_error(row, COL_QKV_BIAS,
                         "'%s' is not possible with arch=gpt (a gpt layer has biases on every "
                         "linear)",
                         row->cell[COL_QKV_BIAS]);
    /* The layers modelled (doc/model.md section 4): a pre-LN GPT layer with its two LayerNorms;
     * llama-style layers with two norms or Gemma 2's four, q/k norms on multi-head attention. */
    if (sc->layer_norms != 2 && (sc->arch == ARCH_GPT || sc->layer_norms != 4))
        return row_error(row, COL_LAYER_NORMS, "'%llu' is not modelled: %s", ULL(sc->layer_norms),
                         sc->arch == ARCH_GPT ? "a gpt layer has 2 norms"
                                              : "a llama layer has 2 norms, or 4 (Gemma 2)");
    if (sc->qk_norm && sc->arch == ARCH_GPT)
        return row_error(row, COL_QK_NORM,
                         "'%s' is not possible with arch=gpt (q/k norms are modelled on llama "
                         "layers)",
                         row->cell[COL_QK_NORM]);
    if (sc->kv_lora_rank > 0 && sc->arch == ARCH_GPT)
        return row_error(row, COL_KV_LORA_RANK,
                         "'%llu' is not possible with arch=gpt (latent attention is modelled on "
                         "llama layers)",
                         ULL(sc->kv_lora_rank));
    if (sc->kv_lora_rank > 0 && (sc->qk_norm || sc->qkv_bias))
        return row_error(row, sc->qk_norm ? COL_QK_NORM : COL_QKV_BIAS,
                         "'%s' is not possible with multi-head latent attention (kv_lora_rank)",
                         row->cell[sc->qk_norm ? COL_QK_NORM : COL_QKV_BIAS]
                             ? row->cell[sc->qk_norm ? COL_QK_NORM : COL_QKV_BIAS]
                             : "yes");
    if (sc->kv_lora_rank == 0) {
        for (size_t i = 0; i < sizeof mla_cols / sizeof mla_cols[0]; i++)
            if (row->cell[mla_cols[i]])
                return row_error(row, mla_cols[i],
                                 "'%s' needs kv_lora_rank > 0 (a multi-head latent attention "
                                 "column)",
                                 row->cell[mla_cols[i]]);
        return true;
    }
    for (size_t i = 0; i < sizeof mla_dims / sizeof mla_dims[0]; i++)
        if (!row->cell[mla_dims[i]])
            return row_error(row, mla_dims[i],
                             "a value is required with kv_lora_rank (multi-head latent "
                             "attention)");
    /* MLA's widths are its own: d_n + d_r for q and k, d_v for v, one head of each per query
     * head (doc/model.md section 2). */
    if (sc->kv_heads != sc->heads)
        return row_error(row, COL_KV_HEADS,
                         "'%llu' is not possible with multi-head latent attention (kv_lora_rank): "
                         "kv_heads must equal heads (%llu)",
                         ULL(sc->kv_heads), ULL(sc->heads));
    if (row->cell[COL_HEAD_DIM])
        return row_error(row, COL_HEAD_DIM,
                         "'%s' is not possible with multi-head latent attention (kv_lora_rank), "
                         "whose widths are qk_nope_dim, qk_rope_dim and v_head_dim",
                         row->cell[COL_HEAD_DIM]);
    return true;
}

/* The experts and their parallelism (doc/model.md section 13.2). */
static bool check_experts(struct row *row, const struct scenario *sc)
{
    static const enum col moe_cols[] = {COL_TOP_K,           COL_EXPERT_FFN,  COL_SHARED_FFN,
                                        COL_SHARED_GATE,     COL_ROUTER_BIAS, COL_DENSE_LAYERS,
                                        COL_CAPACITY_FACTOR, COL_ETP};
    if (sc->experts == 0) {
        for (size_t i = 0; i < sizeof moe_cols / sizeof moe_cols[0]; i++)
            if (row->cell[moe_cols[i]])
                return row_error(row, moe_cols[i],
                                 "'%s' needs experts > 0 (a mixture-of-experts column)",
                                 row->cell[moe_cols[i]]);
        if (sc->ep > 1)
            return row_error(row, COL_EP, "'%llu' needs experts > 0 (a mixture-of-experts column)",
                             ULL(sc->ep));
        return true;
    }
    if (sc->arch == ARCH_GPT)
        return row_error(row, COL_EXPERTS,
                         "'%llu' is not possible with arch=gpt (MoE layers are modelled as gated "
                         "llama-style experts: use arch=llama)",
                         ULL(sc->experts));
    if (!row->cell[COL_TOP_K])
        return row_error(row, COL_TOP_K, "a value is required with experts");
    if (!row->cell[COL_EXPERT_FFN])
        return row_error(row, COL_EXPERT_FFN, "a value is required with experts");
    if (sc->top_k > sc->experts)
        return row_error(row, COL_TOP_K, "'%llu' is more than experts (%llu)", ULL(sc->top_k),
                         ULL(sc->experts));
    if (sc->dense_layers > sc->layers)
        return row_error(row, COL_DENSE_LAYERS, "'%llu' is more than layers (%llu)",
                         ULL(sc->dense_layers), ULL(sc->layers));
    if (sc->experts % sc->ep)
        return row_error(row, COL_EP, "'%llu' does not divide experts (%llu)", ULL(sc->ep),
                         ULL(sc->experts));
    /* The expert groups tile the GPUs of a pipeline stage, and an expert-tensor-parallel group
     * nests with a tensor-parallel one (doc/model.md sections 4.7 and 13.2). */
    uint64_t etp = sc->etp ? sc->etp : sc->tp, group, stage;
    if (sc->tp % etp && etp % sc->tp)
        return row_error(row, COL_ETP, "'%llu' neither divides tp (%llu) nor is a multiple of it",
                         ULL(etp), ULL(sc->tp));
    if (row->job) /* the search tiles the stage (parse_job_gpus: ep divides gpus) */
        return true;
    if (__builtin_mul_overflow(sc->dp, sc->tp, &stage))
        return row_error(row, COL_DP, "'%llu' times tp is too large", ULL(sc->dp));
    if (__builtin_mul_overflow(sc->ep, etp, &group) || stage % group) {
        if (sc->ep > 1)
            return row_error(row, COL_EP,
                             "'%llu' times etp (%llu) does not divide dp * tp (%llu), the GPUs "
                             "of a pipeline stage",
                             ULL(sc->ep), ULL(etp), ULL(stage));
        return row_error(row, COL_ETP,
                         "'%llu' times ep (%llu) does not divide dp * tp (%llu), the GPUs of a "
                         "pipeline stage",
                         ULL(etp), ULL(sc->ep), ULL(stage));
    }
    return true;
}

/* Fine-tuning (doc/model.md sections 3.6 and 13.2): the adapter columns need adapters; a frozen
 * base without adapters (precision=frozen) contradicts them; QLoRA computes in bf16; latent
 * attention has no q and v projections to take qv adapters. */
static bool check_tuning(struct row *row, const struct scenario *sc)
{
    static const char *const names[] = {"full", "lora", "qlora"};
    if (sc->finetune == FINETUNE_FULL) {
        static const enum col adapter_cols[] = {COL_LORA_RANK, COL_LORA_TARGETS};
        for (size_t i = 0; i < 2; i++)
            if (row->cell[adapter_cols[i]])
                return row_error(row, adapter_cols[i],
                                 "'%s' needs finetune=lora or qlora (an adapter column)",
                                 row->cell[adapter_cols[i]]);
        return true;
    }
    const char *ft = names[sc->finetune];
    if (sc->precision == PRECISION_FROZEN)
        return row_error(row, COL_FINETUNE,
                         "'%s' is not possible with precision=frozen, a frozen base without "
                         "adapters: finetune freezes the base, and precision says how the "
                         "adapters train",
                         ft);
    if (sc->finetune == FINETUNE_QLORA && sc->precision == PRECISION_FP32)
        return row_error(row, COL_FINETUNE,
                         "'%s' needs a bf16 compute precision (mixed, autocast or megatron), not "
                         "precision=fp32",
                         ft);
    if (sc->kv_lora_rank > 0 && sc->lora_targets == LORA_QV)
        return row_error(row, COL_LORA_TARGETS,
                         "'%s' is not possible with multi-head latent attention (kv_lora_rank), "
                         "which has no v projection (V comes out of the kv up-projection with K): "
                         "use all-linear",
                         row->cell[COL_LORA_TARGETS] ? row->cell[COL_LORA_TARGETS] : "qv");
    return true;
}

/* Context and pipeline parallelism, HSDP and the offload of checkpoints (doc/model.md 13.2). */
static bool check_parallel(struct row *row, const struct scenario *sc)
{
    if (sc->seq % sc->cp)
        return row_error(row, COL_CP, "'%llu' does not divide seq (%llu)", ULL(sc->cp),
                         ULL(sc->seq));
    /* A job's rules between layout columns hold for what its row pins; the search picks the rest
     * so that they hold. */
    bool job = row->job;
    if (sc->vpp > 1 && sc->pp == 1 && (!job || pinned(row, COL_PP)))
        return row_error(row, COL_VPP, "'%llu' needs pipeline parallelism (pp > 1)", ULL(sc->vpp));
    uint64_t chunks;
    if (__builtin_mul_overflow(sc->pp, sc->vpp, &chunks) || sc->layers % chunks)
        return row_error(row, COL_VPP, "pp * vpp (%llu * %llu) does not divide layers (%llu)",
                         ULL(sc->pp), ULL(sc->vpp), ULL(sc->layers));
    uint64_t group;
    if (__builtin_mul_overflow(sc->dp, sc->cp, &group))
        return row_error(row, COL_CP, "'%llu' times dp is too large", ULL(sc->cp));
    if (sc->zero_group && group % sc->zero_group && (!job || pinned(row, COL_DP)))
        return row_error(row, COL_ZERO_GROUP, "'%llu' does not divide dp * cp (%llu)",
                         ULL(sc->zero_group), ULL(group));
    if (sc->zero_group && sc->zero == 0 && (!job || pinned(row, COL_ZERO)))
        return row_error(row, COL_ZERO_GROUP, "'%llu' needs zero >= 1 (a ZeRO shard to span)",
                         ULL(sc->zero_group));
    if (sc->offload == OFFLOAD_CHECKPOINTS && sc->recompute != RECOMPUTE_EVERY_K &&
        (!job || pinned(row, COL_RECOMPUTE)))
        return row_error(row, COL_OFFLOAD,
                         "'checkpoints' needs recompute=full or every k (checkpoints to move)");
    return true;
}

/* The interleaved schedule runs the micro-batches in groups of pp (Megatron-LM's
 * get_pp_rank_microbatches): m = global_batch / (micro_batch dp) must be a multiple of pp. */
static bool check_interleaving(struct row *row, const struct scenario *sc, uint64_t step)
{
    uint64_t m = sc->global_batch / step;
    if (row->job) /* m follows the search's micro-batch and dp */
        return true;
    if (sc->vpp > 1 && m % sc->pp)
        return row_error(row, COL_VPP,
                         "'%llu' needs micro-batches per step (global_batch / (micro_batch * dp) "
                         "= %llu) to be a multiple of pp (%llu)",
                         ULL(sc->vpp), ULL(m), ULL(sc->pp));
    return true;
}

/* Rules between columns: every degree divides what it splits (doc/model.md section 13.2). */
static bool check_consistency(struct row *row, const struct scenario *sc)
{
    if (!check_attention(row, sc))
        return false;
    /* A head width of its own (head_dim, or latent attention's) frees heads from hidden. */
    if (!row->cell[COL_HEAD_DIM] && sc->kv_lora_rank == 0 && sc->hidden % sc->heads)
        return row_error(row, COL_HEADS, "'%llu' does not divide hidden (%llu)", ULL(sc->heads),
                         ULL(sc->hidden));
    if (sc->heads % sc->kv_heads)
        return row_error(row, COL_KV_HEADS, "'%llu' does not divide heads (%llu)",
                         ULL(sc->kv_heads), ULL(sc->heads));
    if (sc->heads % sc->tp || sc->kv_heads % sc->tp)
        return row_error(row, COL_TP, "'%llu' does not divide heads (%llu) and kv_heads (%llu)",
                         ULL(sc->tp), ULL(sc->heads), ULL(sc->kv_heads));
    if (sc->layers % sc->pp)
        return row_error(row, COL_PP, "'%llu' does not divide layers (%llu)", ULL(sc->pp),
                         ULL(sc->layers));
    if (sc->recompute == RECOMPUTE_EVERY_K && sc->ckpt_every > sc->layers)
        return row_error(row, COL_RECOMPUTE,
                         "checkpointing every %llu layers is more than layers (%llu)",
                         ULL(sc->ckpt_every), ULL(sc->layers));
    if (sc->arch == ARCH_LLAMA && sc->dropout)
        return row_error(row, COL_DROPOUT, "'%s' is not possible with arch=llama (no dropout)",
                         row->cell[COL_DROPOUT] ? row->cell[COL_DROPOUT] : "yes");
    if (!check_experts(row, sc) || !check_parallel(row, sc) || !check_tuning(row, sc))
        return false;
    /* A job's: of its pinned micro_batch and dp, the search's b * dp a multiple of them. */
    uint64_t step, b = sc->micro_batch, dp = sc->dp;
    if (row->job) {
        b = pinned(row, COL_MICRO_BATCH) ? b : 1;
        dp = pinned(row, COL_DP) ? dp : 1;
    }
    if (__builtin_mul_overflow(b, dp, &step))
        return row_error(row, COL_DP, "'%llu' times micro_batch is too large", ULL(sc->dp));
    if (row->cell[COL_GLOBAL_BATCH] && sc->global_batch % step)
        return row_error(row, COL_GLOBAL_BATCH,
                         "'%llu' is not a multiple of micro_batch * dp (%llu)",
                         ULL(sc->global_batch), ULL(step));
    return check_interleaving(row, sc, step);
}

/*
 * FP8 training (doc/model.md sections 3.7, 4.10 and 13.2): the GPU preset must have FP8 tensor
 * cores (Ada, Hopper, Blackwell), and MXFP8 is Blackwell's (Transformer Engine's mxfp8 docs:
 * SM 10.0); a row without a GPU preset, or whose preset leaves a cell empty, is not checked. A
 * frozen base (LoRA, QLoRA, precision frozen) in FP8 is not modelled. Also notes whether the
 * GPU's FP8 GEMMs read one copy of a weight both ways (Blackwell).
 */
static bool check_fp8(struct row *row, struct scenario *sc)
{
    const struct preset *g = row->gpu;
    const char *v = row->cell[COL_FP8];
    sc->fp8_one_copy = g && g->flag[GPU_FLAG_FP8_ONE_COPY] == GPU_FLAG_YES;
    if (sc->fp8 == FP8_NONE)
        return true;
    if (g && g->flag[GPU_FLAG_FP8] == GPU_FLAG_NO)
        return row_error(row, COL_FP8,
                         "'%s' needs FP8 tensor cores (Ada, Hopper or Blackwell): GPU '%s' has "
                         "none",
                         v, g->name);
    if (sc->fp8 == FP8_MXFP8 && g && g->flag[GPU_FLAG_MXFP8] == GPU_FLAG_NO)
        return row_error(row, COL_FP8, "'%s' needs a Blackwell GPU: GPU '%s' has no MXFP8", v,
                         g->name);
    if (sc->finetune != FINETUNE_FULL || sc->precision == PRECISION_FROZEN)
        return row_error(row, COL_FP8,
                         "'%s' is not modelled with a frozen base (finetune lora or qlora, "
                         "precision frozen)",
                         v);
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
    return row_error(row, worst, "'%llu' is so large that a byte count would overflow 64 bits",
                     worst_v);
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
static void scenario_defaults(struct scenario *sc, double reserve, enum peak_model peak)
{
    sc->arch = ARCH_GPT;
    sc->precision = PRECISION_MIXED;
    sc->attention = ATTENTION_PLAIN;
    sc->offload = OFFLOAD_NONE;
    sc->sp = false;
    sc->dp = sc->tp = sc->pp = 1;
    sc->cp = sc->vpp = 1;
    sc->ep = 1;
    sc->etp = sc->head_dim = 0;
    sc->zero_group = 0;
    sc->optimizer = OPTIM_ADAMW;
    sc->fp8 = FP8_NONE;
    sc->fp8_one_copy = false;
    sc->finetune = FINETUNE_FULL;
    sc->lora_rank = 16;
    sc->lora_targets = LORA_QV;
    sc->qk_norm = sc->shared_gate = sc->router_bias = false;
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
    scenario_defaults(sc, r->opt.reserve, r->opt.peak);
    if (!parse_name(row, sc) || !merge_presets(r, row, &speed) || !parse_model_shape(row, sc) ||
        !parse_layer_shape(row, sc) || !parse_training(row, sc) || !parse_gpu(row, sc))
        return false;
    sc->speed = speed;
    /* The default keeps pp micro-batches a step in the pipeline (doc/model.md 6.1); a product
     * past 64 bits leaves 0, which means the same (pipeline_micro_batches). */
    if (!row->cell[COL_GLOBAL_BATCH] &&
        (__builtin_mul_overflow(sc->micro_batch, sc->dp, &sc->global_batch) ||
         __builtin_mul_overflow(sc->global_batch, sc->pp, &sc->global_batch)))
        sc->global_batch = 0;
    if (row->cell[COL_MODEL]) /* a config.json's preset is named after its file */
        copy_bounded(sc->model_preset, sizeof sc->model_preset,
                     row->model->path ? row->model->name : row->cell[COL_MODEL]);
    sc->sliding_window = row->cell[COL_MODEL] ? row->model->sliding_window : 0;
    if (row->cell[COL_GPU])
        copy_bounded(sc->gpu_preset, sizeof sc->gpu_preset, row->cell[COL_GPU]);
    if (!check_consistency(row, sc) || !check_fp8(row, sc))
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
        unsigned long first;
        int added = nameset_add(r->names, out->name, name_h, rec.line, &first);
        if (added < 0) { /* the check cannot go on, and is never skipped: stop */
            diag_report(r->diag, r->file, rec.line,
                        "out of memory: the names seen so far cannot be kept to check that "
                        "names are unique");
            return -2;
        }
        if (added == 0) {
            row_error(&row, COL_NAME, "'%s' is a duplicate (first seen on line %lu)", out->name,
                      first);
            r->rejected++;
            return -1;
        }
        return 1;
    }
}
