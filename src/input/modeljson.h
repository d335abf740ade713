/*
 * modeljson: a published model's config.json (the Hugging Face layout) -> the model columns of a
 * scenario (doc/model.md section 13.3; doc/memfit.1, THE SCENARIO CSV, model).
 *
 * One table in modeljson.c maps each supported model_type (gpt2, llama, mistral, mixtral, qwen2,
 * qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, deepseek_v3) onto the columns, following the
 * transformers modeling file it names; a field the file leaves out takes the default of that
 * type's transformers configuration class, except the sizes, which are required. The result is a
 * set of cells written as a CSV row would write them ("32", "yes"), which config.c merges as it
 * merges a preset: the row's own cells still win, and config's rules check the whole.
 *
 * The JSON is read with jansson (the only user of <jansson.h>). Everything is pure apart from
 * modeljson_read, which reads the file. A problem is described in the caller's err buffer as
 * "field 'hidden_size' is missing" (modeljson_read adds the file: "dir/config.json: ..."),
 * lowercase, without a final full stop; nothing is printed.
 *
 * Ownership: a struct modeljson is plain data, filled in place; `follows` points into the static
 * table.
 */
#ifndef MEMFIT_MODELJSON_H
#define MEMFIT_MODELJSON_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

#define MODELJSON_COLUMNS 26    /* the model columns, arch to v_head_dim (modeljson_columns) */
#define MODELJSON_VALUE_MAX 24  /* a cell: a 64-bit integer or a word, and its NUL */
#define MODELJSON_TYPE_MAX 32   /* a model_type as a message may show it */
#define MODELJSON_FILE_MAX 4096 /* the path of the file read */
#define MODELJSON_BYTES_MAX (1u << 20) /* a larger file is not a model's config.json */

enum modeljson_status {
    MODELJSON_OK = 0,
    MODELJSON_BAD = -1,        /* the file was read but does not describe a model memfit plans */
    MODELJSON_UNREADABLE = -2, /* the file cannot be opened or read */
};

struct modeljson {
    char model_type[MODELJSON_TYPE_MAX]; /* "llama" */
    const char *follows;                 /* the transformers modeling file the mapping follows */
    /* The cell of each column of modeljson_columns(), "" where the file leaves the column to
     * memfit's default (which is then the transformers default too). */
    char value[MODELJSON_COLUMNS][MODELJSON_VALUE_MAX];
    /* The attention window of sliding-window layers (0: none): it changes nothing for training
     * memory (FlashAttention skips the work, plain attention masks the same scores), which the
     * report's notes say. */
    unsigned long long sliding_window;
};

/* The model columns the cells fill, in the order of columns.h (arch ...
 * v_head_dim); *n = MODELJSON_COLUMNS. */
const char *const *modeljson_columns(size_t *n);

/* The supported model_types, in the table's order. */
const char *const *modeljson_types(size_t *n);

/* Whether a `model` cell names a file or a folder rather than a preset: it holds a '/' or ends
 * in ".json" (case-insensitive). Preset names have neither. */
bool modeljson_is_path(const char *cell);

/* Maps the JSON text text[0..len) (need not be NUL-terminated). MODELJSON_OK, or MODELJSON_BAD
 * with the reason in err[0..err_size) ("field 'hidden_size' is missing", "line 3, column 5: not
 * valid JSON: ..."). */
enum modeljson_status modeljson_parse(const char *text, size_t len, struct modeljson *out,
                                      char *err, size_t err_size);

/* Reads path: a config.json, or a folder that holds one (relative paths are relative to the
 * current directory). file[0..file_size) gets the path of the file read; err gets "FILE:
 * reason" on failure. */
enum modeljson_status modeljson_read(const char *path, struct modeljson *out, char *file,
                                     size_t file_size, char *err, size_t err_size);

/* "FILE (model_type T)" in buf[0..size), its front cut to "..." when it is too long (at a UTF-8
 * character boundary): the model's name in the report. Returns buf. */
char *modeljson_describe(const struct modeljson *m, const char *file, char *buf, size_t size);

/* The header of a models table (name, the model columns, source), with its newline. */
int modeljson_csv_header(struct strbuf *out);

/* One row of a models table for the file read: its name is the file's folder (or the file's own
 * name when it is not config.json; the model_type when the path has neither), its source names
 * the file, the model_type and the modeling file. Fields are quoted as RFC 4180 needs. */
int modeljson_csv_row(const struct modeljson *m, const char *file, struct strbuf *out);

#endif
