/*
 * Tests of scenario_csv.c: the columns are config's but gpus, and every scenario config
 * reads - the shipped examples, every model preset, a row for each value of each enum, latent
 * attention, experts, adapters, GPU presets whose capacity is in MiB - is written as a row that
 * config reads back to the same struct scenario, byte for byte (the model preset's name too; but
 * for a config.json's name and attention window, which no column carries), with the same peak.
 */
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
#include "input/scenario_csv.h"
#include "testutil.h"

#define MAX_ROWS 64

static struct config_presets *presets;

static int load_presets(void **state)
{
    (void)state;
    struct diag d;
    diag_init(&d, NULL, NULL);
    presets = config_presets_load("configs/models.csv", "configs/gpus.csv", &d);
    return presets ? 0 : -1;
}

static int free_presets(void **state)
{
    (void)state;
    config_presets_free(presets);
    return 0;
}

struct read {
    struct scenario sc[MAX_ROWS]; /* zeroed before each row: padding compares equal */
    size_t n;
    char messages[2048];
};

static void collect(void *ctx, const char *msg, const char *file, unsigned long line)
{
    (void)file;
    (void)line;
    struct read *r = ctx;
    size_t used = strlen(r->messages);
    snprintf(r->messages + used, sizeof r->messages - used, "%s\n", msg);
}

/* Reads csv as "in.csv" under peak; every row valid. */
static void read_csv(struct read *r, const char *csv, enum peak_model peak)
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
    unsigned long line;
    int rc;
    while (r->n < MAX_ROWS && (rc = config_reader_next(rd, &r->sc[r->n], &line)) != 0) {
        assert_int_not_equal(rc, -2);
        if (rc == 1)
            r->n++;
    }
    config_reader_free(rd);
    fclose(f);
    nameset_release(&names);
    if (r->messages[0])
        fail_msg("config rejected rows:\n%s", r->messages);
}

/* A CSV field, quoted when it must be (RFC 4180). */
static void put_field(char *buf, size_t size, const char *s)
{
    size_t used = strlen(buf);
    if (!s[strcspn(s, ",\"\r\n")]) {
        snprintf(buf + used, size - used, "%s", s);
        return;
    }
    for (buf[used++] = '"'; *s && used + 3 < size; s++) {
        if (*s == '"')
            buf[used++] = '"';
        buf[used++] = *s;
    }
    snprintf(buf + used, size - used, "\"");
}

/* The header and the row of sc, as memfit search writes them. */
static void scenario_text(const struct scenario *sc, char *buf, size_t size)
{
    size_t n;
    const char *const *cols = scenario_csv_columns(&n);
    struct scenario_csv_row row;
    scenario_csv_row(sc, &row);
    buf[0] = '\0';
    for (size_t c = 0; c < n; c++)
        snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", c ? "," : "", cols[c]);
    snprintf(buf + strlen(buf), size - strlen(buf), "\n");
    for (size_t c = 0; c < n; c++) {
        if (c)
            snprintf(buf + strlen(buf), size - strlen(buf), ",");
        assert_true((row.type[c] == SCENARIO_CSV_EMPTY) == (row.cell[c][0] == '\0'));
        put_field(buf, size, row.cell[c]);
    }
    snprintf(buf + strlen(buf), size - strlen(buf), "\n");
}

/* sc written and read back is sc, but for what no column carries; and its peak is the same. */
static void assert_round_trip(const struct scenario *sc)
{
    static char text[16384];
    static struct read back;
    scenario_text(sc, text, sizeof text);
    read_csv(&back, text, sc->peak);
    assert_int_equal(back.n, 1);
    struct scenario got = back.sc[0];
    if (sc->model_file) { /* a config.json named by its path: no preset to name */
        memcpy(got.model_preset, sc->model_preset, sizeof got.model_preset);
        got.model_file = true;
    }
    got.sliding_window = sc->sliding_window;
    got.gpus = sc->gpus;
    if (memcmp(&got, sc, sizeof got) != 0)
        fail_msg("'%s' does not read back the same:\n%s", sc->name, text);
    struct terms a, b;
    assert_int_equal(model_peak(sc, &a), MODEL_OK);
    assert_int_equal(model_peak(&got, &b), MODEL_OK);
    assert_int_equal(a.peak_bytes, b.peak_bytes);
    assert_int_equal(a.fits, b.fits);
}

static void assert_all_round_trip(const char *csv, enum peak_model peak, size_t want)
{
    static struct read r;
    read_csv(&r, csv, peak);
    assert_int_equal(r.n, want);
    for (size_t i = 0; i < r.n; i++)
        assert_round_trip(&r.sc[i]);
}

static void columns_are_configs_but_gpus(void **state)
{
    (void)state;
    size_t n, n_config;
    const char *const *cols = scenario_csv_columns(&n);
    const char *const *config = config_column_names(&n_config);
    size_t k = 0;
    for (size_t i = 0; i < n_config; i++) {
        if (strcmp(config[i], "gpus") == 0)
            continue;
        assert_true(k < n);
        assert_string_equal(cols[k], config[i]);
        k++;
    }
    assert_int_equal(k, n);
    assert_int_equal(n, SCENARIO_CSV_COLUMNS);
}

static void the_examples_round_trip(void **state)
{
    (void)state;
    size_t len = 0;
    char *csv = test_read_file("configs/examples.csv", &len);
    assert_non_null(csv);
    size_t rows = 0;
    for (size_t i = 0; i < len; i++)
        rows += csv[i] == '\n';
    assert_all_round_trip(csv, PEAK_STEP, rows - 1);
    assert_all_round_trip(csv, PEAK_LESSON, rows - 1);
    free(csv);
}

/* Every model preset (dense, GQA, Gemma's four norms, experts, latent attention) on each GPU. */
static void every_model_preset_round_trips(void **state)
{
    (void)state;
    static const char *const models[] = {
        "gpt2-small",  "gpt-1.3b",       "gpt3-175b",    "llama2-7b",    "llama3.1-405b",
        "mistral-7b",  "qwen2.5-7b",     "gemma2-9b",    "mixtral-8x7b", "qwen3-30b-a3b",
        "deepseek-v3", "qwen2-57b-a14b", "llama3.1-70b", "gpt2-xl",      "llama3-8b"};
    static const char *const gpus[] = {"H100-80GB", "A100-40GB", "B200-192GB", "MI300X-192GB"};
    static char csv[8192];
    snprintf(csv, sizeof csv, "name,model,seq,micro_batch,gpu\n");
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        snprintf(csv + strlen(csv), sizeof csv - strlen(csv), "m%zu,%s,4096,1,%s\n", i, models[i],
                 gpus[i % 4]);
    assert_all_round_trip(csv, PEAK_STEP, sizeof models / sizeof models[0]);
}

/* A row for each value of each enum and the columns with a default of 0 or a rule between them. */
static void every_value_round_trips(void **state)
{
    (void)state;
    static const char csv[] =
        "name,model,seq,micro_batch,global_batch,precision,fp8,attention,recompute,dp,tp,pp,vpp,"
        "cp,sp,ep,etp,zero,zero_group,offload,loss,grad_buffer,optimizer_impl,optimizer,finetune,"
        "lora_rank,lora_targets,gpu,gpu_mem_gb,reserve,gpus_per_node,capacity_factor,head_dim\n"
        "a,llama3-8b,8192,2,64,mixed,none,plain,none,4,2,2,2,2,yes,,,1,,none,eager,on_demand,"
        "foreach,adamw,full,,,,80,0.1,8,,\n"
        "b,llama3-8b,4096,1,16,autocast,tensor,flash,selective,8,1,1,1,1,no,,,2,4,optimizer,fused,"
        "persistent,fused,adamw-bf16,full,,,H100-80GB,,0.123456789,4,,\n"
        "c,gpt-1.3b,2048,4,32,megatron,,flash,full,8,2,1,1,1,yes,,,3,8,checkpoints,,,single,"
        "adamw8bit,full,,,A100-80GB,79.5,0,8,,\n"
        "d,llama2-7b,2048,1,8,frozen,,flash,3,8,1,1,1,1,no,,,0,,none,,,,sgd,full,,,L4-24GB,,0.2,"
        "16,,\n"
        "e,llama2-7b,2048,1,8,fp32,,plain,5,1,1,1,1,1,no,,,0,,none,,,,,full,,,RTX4090-24GB,,,8,,"
        "160\n"
        "f,llama3-8b,2048,1,8,mixed,,flash,none,2,1,1,1,1,no,,,1,,none,,,,,lora,64,all-linear,"
        "H200-141GB,,,8,,\n"
        "g,llama3-8b,2048,1,8,mixed,,flash,none,2,1,1,1,1,no,,,0,,none,,,,,qlora,8,qv,,24,,8,,\n"
        "h,mixtral-8x7b,4096,1,64,mixed,mxfp8,flash,full,8,2,4,1,1,yes,8,1,1,,none,,,,,full,,,"
        "B200-192GB,,,8,1.25,\n"
        "i,deepseek-v3,4096,1,128,megatron,tensor,flash,full,16,4,1,1,2,yes,32,2,1,,none,,,,,"
        "full,,,H100-80GB,,,8,,\n"
        "j,deepseek-v3,4096,1,64,mixed,,flash,selective,8,1,1,1,1,no,8,,1,,none,,,,,lora,16,"
        "all-linear,MI300X-192GB,,0.05,8,,\n"
        "\"k \"\"quoted\"\", name\",gpt2-small,1024,3,,mixed,,plain,none,,,,,,,,,,,,,,,,,,,,"
        "16.000000001,,,,\n";
    assert_all_round_trip(csv, PEAK_STEP, 11);
    assert_all_round_trip(csv, PEAK_LESSON, 11);
    /* block and per-module recomputation (doc/model.md 5.4, 5.5) */
    static const char recompute[] =
        "name,model,seq,micro_batch,recompute,recompute_layers,recompute_modules,gpu,pp\n"
        "l,llama3-8b,4096,1,full,5,,H100-80GB,4\n"
        "m,deepseek-v3,4096,1,selective,,layernorm moe_act+mla_up_proj,H100-80GB,1\n"
        "n,gpt-1.3b,2048,8,selective,,core_attn,H100-80GB,1\n"
        "o,gpt-1.3b,2048,8,selective,,mlp,H100-80GB,1\n";
    assert_all_round_trip(recompute, PEAK_STEP, 4);
    assert_all_round_trip(recompute, PEAK_LESSON, 4);
    /* the implementation profiles and transformers' attention names (doc/model.md 4.12) */
    static const char impls[] = "name,model,seq,micro_batch,impl,attention,finetune,gpu\n"
                                "p,llama3-8b,4096,1,megatron,flash,,H100-80GB\n"
                                "q,llama3-8b,4096,1,hf,eager,,H100-80GB\n"
                                "r,llama3-8b,4096,1,hf,sdpa,,H100-80GB\n"
                                "s,llama3-8b,4096,1,hf-peft,flash_attention_2,lora,H100-80GB\n"
                                "t,gpt-1.3b,2048,8,memfit,plain,,H100-80GB\n";
    assert_all_round_trip(impls, PEAK_STEP, 5);
    assert_all_round_trip(impls, PEAK_LESSON, 5);
}

/* The GPU's memory is written in GB exactly, however it was given (mem_mib, a fraction). */
static void gpu_memory_is_exact(void **state)
{
    (void)state;
    static struct read r;
    read_csv(&r, "name,model,seq,micro_batch,gpu_mem_gb\nlesson,gpt-1.3b,2048,8,80\n", PEAK_STEP);
    struct scenario sc = r.sc[0];
    const uint64_t bytes[] = {80000000000ull, 85520809984ull, 1ull,
                              999999999ull,   1000000001ull,  206141652992ull};
    for (size_t i = 0; i < sizeof bytes / sizeof bytes[0]; i++) {
        sc.gpu_mem_bytes = bytes[i];
        assert_round_trip(&sc);
    }
    struct scenario_csv_row row;
    sc.gpu_mem_bytes = 85520809984ull;
    scenario_csv_row(&sc, &row);
    size_t n;
    const char *const *cols = scenario_csv_columns(&n);
    for (size_t c = 0; c < n; c++)
        if (strcmp(cols[c], "gpu_mem_gb") == 0)
            assert_string_equal(row.cell[c], "85.520809984");
        else if (strcmp(cols[c], "reserve") == 0)
            assert_string_equal(row.cell[c], "0.15");
        else if (strcmp(cols[c], "tied") == 0)
            assert_int_equal(row.type[c], SCENARIO_CSV_BOOL);
        else if (strcmp(cols[c], "top_k") == 0)
            assert_int_equal(row.type[c], SCENARIO_CSV_EMPTY);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(columns_are_configs_but_gpus),
        cmocka_unit_test(the_examples_round_trip),
        cmocka_unit_test(every_model_preset_round_trips),
        cmocka_unit_test(every_value_round_trips),
        cmocka_unit_test(gpu_memory_is_exact),
    };
    return cmocka_run_group_tests(tests, load_presets, free_presets);
}
