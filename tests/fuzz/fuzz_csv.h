/*
 * The CSV fuzz target: any bytes, read as a scenario file, evaluated and planned. It must never
 * crash, leak or hit undefined behaviour; every row is either a scenario or one message, and a
 * row that config accepts must be evaluated, planned and charted (plan_check, the k-curve): an
 * accepted row that cannot be is a failure of the target (FUZZ_FAIL), not a row to skip.
 * Built two ways: into tests/fuzz/test_fuzz_csv.c (a deterministic mutation run in `make test`,
 * under ASan/UBSan in `make asan`) and with libFuzzer by `make fuzz` (clang -fsanitize=fuzzer).
 */
#ifndef MEMFIT_FUZZ_CSV_H
#define MEMFIT_FUZZ_CSV_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw/chart.h"
#include "input/config.h"
#include "fuzz_common.h"
#include "model/model.h"
#include "plan/plan.h"

static struct config_presets *fuzz_presets;
static struct plan fuzz_plan;
static struct chart_kcurve fuzz_kcurve;

/* The shipped presets, once; a target without them would fuzz much less than it seems. */
static struct config_presets *fuzz_load_presets(void)
{
    if (!fuzz_presets) {
        struct diag d;
        diag_init(&d, NULL, NULL);
        fuzz_presets = config_presets_load(FUZZ_DATA_DIR "/configs/models.csv",
                                           FUZZ_DATA_DIR "/configs/gpus.csv", &d);
        if (!fuzz_presets)
            FUZZ_FAIL("cannot load the presets: %s", d.first);
    }
    return fuzz_presets;
}

/* What must hold for every scenario config accepts. */
static void fuzz_check_scenario(const struct scenario *sc, const char *what)
{
    struct terms t;
    if (model_eval(sc, &t) != MODEL_OK)
        FUZZ_FAIL("%s: '%s' is accepted but model_eval overflows", what, sc->name);
    if (plan_build_from(sc, &t, &fuzz_plan) != 0)
        FUZZ_FAIL("%s: '%s' is accepted but the ladder overflows", what, sc->name);
    if (plan_check(sc) != 0)
        FUZZ_FAIL("%s: '%s' is accepted but plan_check fails", what, sc->name);
    memset(&fuzz_kcurve, 0, sizeof fuzz_kcurve);
    if (chart_kcurve_fill(sc, &fuzz_kcurve) != 0)
        FUZZ_FAIL("%s: '%s' is accepted but its k-curve overflows", what, sc->name);
}

/* Returns the number of valid scenarios read. */
static int fuzz_csv_one(const uint8_t *data, size_t size)
{
    struct config_presets *presets = fuzz_load_presets();
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
    struct config_options opt = {0.15, PEAK_STEP, IMPL_MEMFIT}; /* the command line's default */
    struct config_reader *r = config_reader_new(f, "fuzz.csv", presets, &opt, &names, &d);
    struct scenario sc;
    unsigned long line;
    int rc, valid = 0;
    while (r && (rc = config_reader_next(r, &sc, &line)) != 0 && rc != -2) {
        if (rc != 1)
            continue;
        fuzz_check_scenario(&sc, "fuzz.csv");
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
