/*
 * config: CSV rows -> validated struct scenario (doc/memfit.1, THE SCENARIO CSV; doc/model.md
 * section 13).
 *
 * Owns the column table (names from columns.h, defaults, parsers), the preset tables of
 * configs/models.csv and configs/gpus.csv, and every validation rule. A row is merged in three
 * layers: defaults, then the model / GPU preset it names, then its own non-empty cells. Each
 * rejected row gives one message "FILE:LINE: column 'X': ..." through the diag and is skipped; the
 * reader goes on. An unknown column or a malformed header rejects every row of that file.
 *
 * Ownership: config_presets and config_reader own their memory (free with the _free/_release
 * functions; NULL is accepted); scenarios are plain values copied out to the caller.
 */
#ifndef MEMFIT_CONFIG_H
#define MEMFIT_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include "base/diag.h"
#include "base/nameset.h"
#include "model/scenario.h"

/* The preset tables. */
struct config_presets;

/* Loads both tables (either path may be NULL: no file was found, and a row that names a preset
 * of that table is rejected with that reason). NULL on failure (reported). */
struct config_presets *config_presets_load(const char *models_path, const char *gpus_path,
                                           struct diag *d);
void config_presets_free(struct config_presets *p);

struct config_options {
    double reserve;       /* --reserve: the default of the reserve column */
    enum peak_model peak; /* --peak: the lesson's sum or a real step's phases */
    enum impl impl;       /* --impl: the default of the impl column */
};

/* Reads one CSV file of scenarios. */
struct config_reader;

/* NULL when out of memory. Nothing is read until the first config_reader_next. `names` holds the
 * names of the run: this file's are added to it under file_name (nameset_begin_file), so that a
 * duplicate says the file of the first when it is another one. */
struct config_reader *config_reader_new(FILE *in, const char *file_name,
                                        const struct config_presets *presets,
                                        const struct config_options *opt, struct nameset *names,
                                        struct diag *d);

/*
 * The rows are memfit search's jobs (doc/model.md section 13.1), not scenarios: gpus is a count or
 * a range A:B (empty: 0, for the caller's range), global_batch is required and micro_batch is
 * not (1 unless given); the layout columns a row
 * gives pin those choices (scenario.pinned: a pinned degree must divide gpus), and the rules
 * between layout columns apply only to what is pinned: the search picks the rest. Call before the
 * first config_reader_next. (An eval row's pinned is 0: nothing searches it.)
 */
void config_reader_read_jobs(struct config_reader *r);

/* 1: *out is a valid scenario; 0: end of file; -1: a row was rejected (reported; call again);
 * -2: the file cannot be read further (reported). */
int config_reader_next(struct config_reader *r, struct scenario *out, unsigned long *line);

/* Rows rejected so far in this file (counting a rejected header's rows). */
unsigned long config_reader_rejected(const struct config_reader *r);

void config_reader_free(struct config_reader *r);

/* The column names, in the table order (for --help and tests). */
const char *const *config_column_names(size_t *n);

#endif
