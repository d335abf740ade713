/*
 * config_run: the harness of the config tests. A CSV text is read as the file "in.csv" through
 * config's reader with the shipped presets (configs/models.csv, configs/gpus.csv; load_presets
 * and free_presets are the group's setup and teardown), the scenarios read and every message
 * kept.
 */
#ifndef MEMFIT_CONFIG_RUN_H
#define MEMFIT_CONFIG_RUN_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/config.h"
#include "model/model.h"

#define MAX_ROWS 16

struct run {
    struct scenario sc[MAX_ROWS];
    unsigned long line[MAX_ROWS];
    size_t n;
    unsigned long rejected;
    char messages[4096];
    size_t n_messages;
};

static __attribute__((unused)) void collect(void *ctx, const char *msg, const char *file,
                                            unsigned long line)
{
    (void)file;
    (void)line;
    struct run *r = ctx;
    size_t used = strlen(r->messages);
    snprintf(r->messages + used, sizeof r->messages - used, "%s\n", msg);
    r->n_messages++;
}

static __attribute__((unused)) struct config_presets *presets;

static __attribute__((unused)) int load_presets(void **state)
{
    (void)state;
    struct diag d;
    diag_init(&d, NULL, NULL);
    presets = config_presets_load("configs/models.csv", "configs/gpus.csv", &d);
    return presets ? 0 : -1;
}

static __attribute__((unused)) int free_presets(void **state)
{
    (void)state;
    config_presets_free(presets);
    return 0;
}

/* Reads `csv` as the file "in.csv" with the default --reserve and the given --peak; its rows are
 * memfit search's jobs when jobs is true. */
static __attribute__((unused)) void run_csv_mode(struct run *r, const char *csv,
                                                 enum peak_model peak, bool jobs)
{
    memset(r, 0, sizeof *r);
    struct diag d;
    diag_init(&d, collect, r);
    struct nameset names;
    nameset_init(&names);
    FILE *f = fmemopen((void *)csv, strlen(csv), "r");
    assert_non_null(f);
    struct config_options opt = {0.15, peak, IMPL_MEMFIT};
    struct config_reader *rd = config_reader_new(f, "in.csv", presets, &opt, &names, &d);
    assert_non_null(rd);
    if (jobs)
        config_reader_read_jobs(rd);
    int rc;
    struct scenario sc;
    unsigned long line;
    while ((rc = config_reader_next(rd, &sc, &line)) != 0) {
        if (rc == -2)
            break;
        if (rc == 1 && r->n < MAX_ROWS) {
            r->line[r->n] = line;
            r->sc[r->n++] = sc;
        }
    }
    r->rejected = config_reader_rejected(rd);
    config_reader_free(rd);
    fclose(f);
    nameset_release(&names);
}

static __attribute__((unused)) void run_csv_peak(struct run *r, const char *csv,
                                                 enum peak_model peak)
{
    run_csv_mode(r, csv, peak, false);
}

/* Reads `csv` as "in.csv" under --peak lesson: the tests of this file hold the lesson's numbers
 * (doc/model.md section 9), which --peak lesson keeps. */
static __attribute__((unused)) void run_csv(struct run *r, const char *csv)
{
    run_csv_peak(r, csv, PEAK_LESSON);
}

static __attribute__((unused)) void assert_message(const struct run *r, const char *want)
{
    if (!strstr(r->messages, want))
        fail_msg("expected message containing \"%s\", got:\n%s", want, r->messages);
}

#define HEADER_NO_NL "name,layers,hidden,heads,vocab,seq,micro_batch,gpu_mem_gb"
#define HEADER HEADER_NO_NL "\n"

/* A Llama-layer row's header and values, for the columns of modern architectures. */
#define LLAMA "name,arch,layers,hidden,heads,vocab,seq,micro_batch,gpu_mem_gb"
#define LLAMA_ROW "llama,4,256,4,1000,64,1,80"

#endif
