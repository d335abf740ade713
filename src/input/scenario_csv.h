/*
 * scenario_csv: a scenario as the cells of a scenario CSV row (doc/memfit.1, THE SCENARIO CSV),
 * such that config reads the row back to the same scenario: memfit search writes each layout it
 * lists this way, so that `memfit eval` on those columns gives the same peak.
 *
 * The columns are config's (config_column_names) but for `gpus`, which dp * tp * pp * cp are.
 * The model's shape is written column by column, so that a config.json need not be found again;
 * the model preset's name is written too (a preset of --models must be given again, as a GPU
 * preset's), so that a report of search's rows names the model; a config.json named by its
 * path in the row is not (its name is no preset's). Every value is written out, the GPU's memory
 * included, but where a column must be left empty: the expert columns of a dense model, the
 * latent-attention columns without kv_lora_rank, the adapter columns of full fine-tuning, head_dim,
 * etp, moe_max_nodes, zero_group and global_batch at 0 (their defaults), gpu without a preset. The
 * GPU preset's name is written when the scenario has one: its speeds and FP8 flags come from the
 * preset table
 * (--gpus). What no column holds is not carried: a config.json's name and attention window (which
 * change nothing), and --peak.
 *
 * Pure: no I/O, no allocation; the caller owns the row.
 */
#ifndef MEMFIT_SCENARIO_CSV_H
#define MEMFIT_SCENARIO_CSV_H

#include <stddef.h>

#include "model/scenario.h"

#define SCENARIO_CSV_COLUMNS 68

/* What a cell holds, for JSON: a number, a boolean (yes or no in CSV), a text (a name or a
 * word), or nothing (null). */
enum scenario_csv_type {
    SCENARIO_CSV_EMPTY,
    SCENARIO_CSV_NUMBER,
    SCENARIO_CSV_BOOL,
    SCENARIO_CSV_TEXT
};

struct scenario_csv_row {
    const char *cell[SCENARIO_CSV_COLUMNS]; /* "" when empty; into text or static words */
    enum scenario_csv_type type[SCENARIO_CSV_COLUMNS];
    char text[SCENARIO_NAME_BYTES + SCENARIO_NAME_MAX + 1 + 2048];
};

/* The column names, in the order of the cells (config's order). */
const char *const *scenario_csv_columns(size_t *n);

/* The cells of sc, its name as it is. */
void scenario_csv_row(const struct scenario *sc, struct scenario_csv_row *out);

/* The offload column's word: none, optimizer or checkpoints. */
const char *scenario_csv_offload(enum offload o);

#endif
