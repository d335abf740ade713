/*
 * The CSV fuzz target: any bytes, read as a scenario file, evaluated and planned. It must never
 * crash, leak or hit undefined behaviour; every row is either a scenario or one message.
 * Built two ways: into tests/unit/test_fuzz_csv.c (a deterministic mutation run in `make test`,
 * under ASan/UBSan in `make asan`) and with libFuzzer by `make fuzz` (clang -fsanitize=fuzzer).
 */
#ifndef MEMFIT_FUZZ_CSV_H
#define MEMFIT_FUZZ_CSV_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "model.h"
#include "plan.h"

static struct config_presets *fuzz_presets;
static struct plan fuzz_plan;

/* Returns the number of valid scenarios read. */
static int fuzz_csv_one(const uint8_t *data, size_t size)
{
    if (!fuzz_presets) {
        struct diag d;
        diag_init(&d, NULL, NULL);
        fuzz_presets = config_presets_load("configs/models.csv", "configs/gpus.csv", &d);
    }
    /* A real temporary file, not fmemopen: glibc's fmemopen reads NUL bytes oddly. */
    FILE *f = tmpfile();
    if (!f)
        return 0;
    if ((size && fwrite(data, 1, size, f) != size) || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return 0;
    }
    struct diag d;
    diag_init(&d, NULL, NULL);
    struct nameset names;
    nameset_init(&names);
    struct config_options opt = {0.15};
    struct config_reader *r = config_reader_new(f, "fuzz.csv", fuzz_presets, &opt, &names, &d);
    struct scenario sc;
    unsigned long line;
    int rc, valid = 0;
    while (r && (rc = config_reader_next(r, &sc, &line)) != 0 && rc != -2) {
        if (rc != 1)
            continue;
        struct terms t;
        if (model_eval(&sc, &t) == MODEL_OK && plan_build(&sc, &fuzz_plan) == 0)
            valid++;
    }
    config_reader_free(r);
    nameset_release(&names);
    fclose(f);
    return valid;
}

#ifdef MEMFIT_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_csv_one(data, size);
    return 0;
}
#endif

#endif
