/*
 * The config.json fuzz target: any bytes, read as a model's config.json (modeljson_parse); when
 * they map, the file goes through config.c as the model of CSV rows (its folder twice, so the
 * second row takes the reader's copy, then the file itself), and each valid scenario is evaluated
 * and planned. It must never crash, leak or hit undefined behaviour; a file either maps or gives
 * one message, and a scenario config accepts must be evaluated and planned (FUZZ_FAIL otherwise).
 * Built two ways, as the CSV target (fuzz_csv.h): into tests/fuzz/test_fuzz_modeljson.c (a
 * deterministic mutation run of the published configs of modeljson_seeds.h in `make test`, under
 * ASan/UBSan in `make asan`) and with libFuzzer by `make fuzz`, whose entry point also splices its
 * input into one of those configs, so that it reaches the mapping without a corpus.
 */
#ifndef MEMFIT_FUZZ_MODELJSON_H
#define MEMFIT_FUZZ_MODELJSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input/config.h"
#include "fuzz_common.h"
#include "model/model.h"
#include "input/modeljson.h"
#include "modeljson_seeds.h"
#include "plan/plan.h"

static struct config_presets *fuzzj_presets;
static struct plan fuzzj_plan;
static char fuzzj_dir[64]; /* a temporary folder for config.json, made once */

/* Removes the temporary folder (at exit, or from a test's teardown). */
static void fuzz_modeljson_cleanup(void)
{
    char path[96];
    if (!fuzzj_dir[0])
        return;
    snprintf(path, sizeof path, "%s/config.json", fuzzj_dir);
    unlink(path);
    rmdir(fuzzj_dir);
    fuzzj_dir[0] = '\0';
}

/* The CSV rows naming the file in `dir`, read through config.c; returns the valid scenarios. */
static int fuzz_modeljson_rows(const char *dir)
{
    char csv[512];
    int n = snprintf(csv, sizeof csv,
                     "name,model,seq,micro_batch,gpu_mem_gb,tp\n"
                     "a,%s,2048,1,80,\nb,%s,4096,2,80,2\nc,%s/config.json,1024,1,80,\n",
                     dir, dir, dir);
    FILE *f = tmpfile();
    if (!f)
        return 0;
    if (fwrite(csv, 1, (size_t)n, f) != (size_t)n || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return 0;
    }
    struct diag d;
    diag_init(&d, NULL, NULL);
    struct nameset names;
    nameset_init(&names);
    struct config_options opt = {0.15, PEAK_STEP, IMPL_MEMFIT}; /* the command line's default */
    struct config_reader *r = config_reader_new(f, "fuzz.csv", fuzzj_presets, &opt, &names, &d);
    struct scenario sc;
    unsigned long line;
    int rc, valid = 0;
    while (r && (rc = config_reader_next(r, &sc, &line)) != 0 && rc != -2) {
        struct terms t;
        if (rc != 1)
            continue;
        if (model_eval(&sc, &t) != MODEL_OK || plan_build_from(&sc, &t, &fuzzj_plan) != 0)
            FUZZ_FAIL("'%s' of a config.json is accepted but cannot be evaluated", sc.name);
        valid++;
    }
    config_reader_free(r);
    nameset_release(&names);
    fclose(f);
    return valid;
}

/* Returns the number of valid scenarios the bytes gave as a config.json (0 when they do not
 * map). */
static int fuzz_modeljson_one(const uint8_t *data, size_t size)
{
    struct modeljson m;
    char err[512];
    if (modeljson_parse((const char *)data, size, &m, err, sizeof err) != MODELJSON_OK)
        return 0;
    struct strbuf sb;
    strbuf_init(&sb);
    modeljson_csv_row(&m, "fuzz/config.json", &sb);
    strbuf_release(&sb);
    if (!fuzzj_presets) {
        struct diag d;
        diag_init(&d, NULL, NULL);
        fuzzj_presets = config_presets_load(FUZZ_DATA_DIR "/configs/models.csv",
                                            FUZZ_DATA_DIR "/configs/gpus.csv", &d);
        if (!fuzzj_presets)
            FUZZ_FAIL("cannot load the presets: %s", d.first);
    }
    if (!fuzzj_dir[0]) {
        snprintf(fuzzj_dir, sizeof fuzzj_dir, "%s", "/tmp/memfit-fuzz-XXXXXX");
        if (!mkdtemp(fuzzj_dir)) {
            fuzzj_dir[0] = '\0';
            return 0;
        }
    }
    char path[96];
    snprintf(path, sizeof path, "%s/config.json", fuzzj_dir);
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    bool written = (size == 0 || fwrite(data, 1, size, f) == size);
    if (fclose(f) != 0 || !written)
        return 0;
    int valid = fuzz_modeljson_rows(fuzzj_dir);
    unlink(path);
    return valid;
}

#ifdef MEMFIT_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool registered;
    if (!registered) {
        atexit(fuzz_modeljson_cleanup);
        registered = true;
    }
    fuzz_modeljson_one(data, size);
    /* The input spliced into a published config: data[0] picks the seed (low bits) and how many
     * of its bytes the input replaces (high bits), data[1..2] where. */
    if (size < 3)
        return 0;
    const char *seed = modeljson_seeds[(data[0] & 15) % MODELJSON_SEEDS].json;
    size_t len = strlen(seed), pos = ((size_t)data[1] << 8 | data[2]) % (len + 1);
    size_t cut = (size_t)(data[0] >> 4), rest = len - pos < cut ? 0 : len - pos - cut;
    uint8_t *buf = malloc(len + size);
    if (!buf)
        return 0;
    memcpy(buf, seed, pos);
    memcpy(buf + pos, data + 3, size - 3);
    memcpy(buf + pos + size - 3, seed + len - rest, rest);
    fuzz_modeljson_one(buf, pos + size - 3 + rest);
    free(buf);
    return 0;
}
#endif

#endif
