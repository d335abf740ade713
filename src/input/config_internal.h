/*
 * config_internal: what the files of config share, private to src/input/config*.c (config.h is
 * the interface; doc/model.md section 13). Owns the column enum (enum col), the preset tables'
 * types, a row being read (struct row), and the functions one file of config gives the others:
 * - config.c: the row driver (the column table, the reader: header, rows, presets merged,
 *   duplicate names, a row -> a scenario, the checks called in their order);
 * - config_presets.c: the preset tables (configs/models.csv, configs/gpus.csv), loaded and looked
 *   up, their cells parsed once;
 * - config_cells.c: a cell parsed (integers, numbers, booleans, words) and the row's messages;
 * - config_model.c: the model's shape (arch to v_head_dim: layers, heads, MoE, latent attention);
 * - config_training.c: seq, batches, precision, fp8, attention, offload, recompute, the step's
 *   implementation, the optimizer and fine-tuning;
 * - config_parallel.c: gpus and the layout (dp, tp, pp, cp, vpp, sp, ep, etp, zero, zero_group),
 *   a job's pinned degrees, and the rules between columns (every degree divides what it splits);
 * - config_hardware.c: the GPU (gpu_mem_gb or the GPU preset's capacity, reserve, its FP8).
 */
#ifndef MEMFIT_CONFIG_INTERNAL_H
#define MEMFIT_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "input/columns.h"
#include "model/scenario.h"

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
/* A set of columns, bit c for column c (one bit per column: up to 128). */
typedef unsigned __int128 col_mask;
#define COL_BIT(c) ((col_mask)1 << (c))
_Static_assert(COL_COUNT <= 128, "a column needs a bit of a col_mask");

/* The column names, in the table order (config.c). */
extern const char *const config_col_names[COL_COUNT];

/* The column named `name` (any case), or -1. */
int config_column_lookup(const char *name);

/* ---- presets (config_presets.c) ---- */

/* What a GPU preset says of FP8 (doc/model.md sections 3.7 and 13.3), each yes or no (empty:
 * unknown, which allows it): FP8 tensor cores (Ada, Hopper, Blackwell), MXFP8 (Blackwell), one
 * FP8 copy serving both GEMM orientations (Blackwell). Preset file columns COL_COUNT +
 * GPU_SPEED_COLUMNS + i. */
enum gpu_flag { GPU_FLAG_FP8, GPU_FLAG_MXFP8, GPU_FLAG_FP8_ONE_COPY, GPU_FLAG_COLUMNS };
enum gpu_flag_value { GPU_FLAG_UNKNOWN, GPU_FLAG_NO, GPU_FLAG_YES };

/* A cell parsed by its column's rules (which member: see parse_column, config_presets.c). */
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
    uint64_t key; /* config_name_key(name), to find the preset without a strcasecmp per preset */
    char *cells[COL_COUNT]; /* model columns, or COL_GPU_MEM_GB for a GPU */
    union cell_value value[COL_COUNT];
    bool typed[COL_COUNT];          /* value[c] holds cells[c], parsed */
    unsigned char given[COL_COUNT]; /* the columns whose cells are not empty, n_given of them */
    unsigned n_given;
    struct gpu_speed speed;
    double mem_mib;     /* a GPU's capacity as the device reports it, MiB; 0: none (mem_gb) */
    double host_mem_gb; /* the CPU memory of a node of these GPUs, GB; 0: not known */
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

void config_preset_table_release(struct preset_table *t);

/* A case-insensitive hash of a name: equal names under strcasecmp have equal keys. */
uint64_t config_name_key(const char *s);

/* The preset named `name` (any case), or NULL. */
const struct preset *config_preset_find(const struct preset_table *t, const char *name);

/* Puts row i (its key set) in the index. False when out of memory. */
bool config_preset_index(struct preset_table *t, size_t i);

/* Parses the preset's cells once, at load time; see struct preset. */
void config_preset_type_cells(struct preset *p);

/* ---- one row ---- */

struct row {
    const char *file;
    unsigned long line;
    struct diag *diag;
    const char *cell[COL_COUNT]; /* NULL: empty */
    /* Bit c: cell c came from the model preset (COL_GPU_MEM_GB: the GPU preset). A mask, not an
     * array per column, so that nothing but cell[] is set for every row. */
    col_mask from_preset;
    col_mask present; /* bit c: cell c is not empty (from the row or a preset) */
    const struct preset *model, *gpu;
    bool quiet; /* errors are not reported (parsing a preset's cells at load time) */
    bool job;   /* a job of memfit search (config_reader_read_jobs) */
};

/* For the messages' %llu. */
#define ULL(x) ((unsigned long long)(x))

/* ---- a cell (config_cells.c) ---- */

/* strcasecmp(s, word) == 0, quicker. */
bool config_is_word(const char *s, const char *word);

/* The preset cell c of the row came from, or NULL. */
const struct preset *config_cell_preset(const struct row *r, enum col c);

/* Reports "column 'X': MESSAGE" for the row (unless it is quiet); returns false. */
bool config_row_error(struct row *r, enum col c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* False after reporting when cell c is empty. */
bool config_require(struct row *r, enum col c);

/* The cells of each kind: false after reporting what is wrong. An opt_ cell may be empty (*out
 * keeps its default). */
bool config_parse_uint(struct row *r, enum col c, uint64_t *out, bool allow_zero);
bool config_opt_uint(struct row *r, enum col c, uint64_t *out, bool allow_zero);
bool config_parse_bool_cell(struct row *r, enum col c, bool *out);
bool config_opt_bool(struct row *r, enum col c, bool *out);
bool config_parse_double(struct row *r, enum col c, double *out);

/* One of a list of words; returns the index or -1 after reporting. */
int config_parse_word(struct row *r, enum col c, const char *const *words, size_t n);

/* A boolean that has more values than two (qkv_bias, qk_norm, router_bias): a boolean's words
 * give 0 or 1, more[i] gives 2 + i; returns the value or -1 after reporting. config_opt_level:
 * an empty cell leaves *out. */
int config_parse_level(struct row *r, enum col c, const char *const *more, size_t n_more);
bool config_opt_level(struct row *r, enum col c, const char *const *more, size_t n_more, int *out);

/* The words past yes of those columns (config_model.c). */
extern const char *const config_qkv_bias_words[2];
extern const char *const config_qk_norm_words[1];
extern const char *const config_router_bias_words[1];

/* ---- the families of columns, each read then checked (the files named) ---- */

/* config_model.c */
extern const char *const config_arch_words[2];
bool config_parse_model_shape(struct row *row, struct scenario *sc);
bool config_parse_layer_shape(struct row *row, struct scenario *sc);
bool config_check_attention(struct row *row, const struct scenario *sc);
bool config_check_experts(struct row *row, const struct scenario *sc);

/* config_training.c */
bool config_parse_training(struct row *row, struct scenario *sc);
bool config_check_tuning(struct row *row, const struct scenario *sc);

/* config_parallel.c */
bool config_parse_gpus(struct row *row, struct scenario *sc);
bool config_check_consistency(struct row *row, const struct scenario *sc);

/* config_hardware.c */
bool config_parse_gpu(struct row *row, struct scenario *sc);
bool config_check_fp8(struct row *row, struct scenario *sc);

#endif
