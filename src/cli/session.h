/*
 * session: what the commands' drivers share: the modules' messages printed as they come (the
 * sink of a diag), the scenarios of the command line's files read with the presets (--models,
 * --gpus) and the uniqueness of names shared, the width of a table for the terminal, and whether
 * what was printed reached standard output.
 */
#ifndef MEMFIT_SESSION_H
#define MEMFIT_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "base/diag.h"
#include "cli/options.h"
#include "model/scenario.h"

/*
 * Prints every message at once (so a million-row run keeps no list), with the program name; under
 * --quiet, not those about a row of a scenario CSV (they carry its line), never a fatal one.
 */
void session_print_message(void *ctx, const char *msg, const char *file, unsigned long line);

/* Called for each valid scenario; returns false to stop reading (a fatal error, reported). */
typedef bool scenario_fn(void *ctx, const struct scenario *sc, const char *file, unsigned long line,
                         struct diag *d);

/* What a command does with the scenarios it reads. */
struct reading {
    scenario_fn *row;
    void (*opened)(void *ctx); /* a file was opened and is about to be read; may be NULL */
    /* Where the next row is parsed (row gets it back); NULL: the reader's own. It returns NULL
     * when no more rows are wanted. */
    struct scenario *(*next)(void *ctx);
    void *ctx;
    bool bar;            /* reading is the work: a progress bar over each file's bytes */
    bool rows_on_stdout; /* the rows go to stdout as they are read */
    /* Filled by session_read_files: the rows handed to row, and those config rejected. */
    unsigned long accepted, rejected;
};

/* Reads every file of the command line, with the presets and the uniqueness of names shared. */
bool session_read_files(const struct options *o, struct reading *rd, struct diag *d);

/* After a run with rejected rows: "N of M rows written, K rejected" (noun "row", verb
 * "written"; not with --quiet). */
void session_say_rejected(const struct options *o, const char *noun, const char *verb,
                          unsigned long done, unsigned long rejected);

/* The table's width: COLUMNS when set, as for ls(1); else the terminal's when the table goes to
 * one; else 80. 0 (every column) with --wide. */
size_t session_table_cols(const struct options *o, bool to_stdout);

/* Flushes standard output: true when all that was printed to it reached it; else says so with the
 * reason ("memfit: cannot write to standard output: No space left on device") and returns false. */
bool session_flush_stdout(void);

#endif
