/*
 * Tests of modeljson.c and of config.c's use of it (doc/model.md section 13.3): one test per
 * supported model_type, whose published config.json (tests/fuzz/modeljson_seeds.h) must give the
 * scenario of the matching preset and the published parameter counts; `memfit eval` on those
 * files gives the terms of the presets; the rows of import-config load as presets; the defaults
 * of missing fields; and a table of bad files, each with its exact message, skipping only its row.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input/config.h"
#include "model/model.h"
#include "input/modeljson.h"
#include "testutil.h"

#include "modeljson_seeds.h"

#define MAX_ROWS 16

static struct config_presets *presets;
static char dir[64]; /* a temporary folder: one folder per seed, holding its config.json */

struct run {
    struct scenario sc[MAX_ROWS];
    size_t n;
    char messages[4096];
};

static void collect(void *ctx, const char *msg, const char *file, unsigned long line)
{
    (void)file;
    (void)line;
    struct run *r = ctx;
    size_t used = strlen(r->messages);
    snprintf(r->messages + used, sizeof r->messages - used, "%s\n", msg);
}

/* Reads `csv` as the file "in.csv" with the presets p. */
static void run_csv_with(struct run *r, const char *csv, const struct config_presets *p)
{
    memset(r, 0, sizeof *r);
    struct diag d;
    diag_init(&d, collect, r);
    struct nameset names;
    nameset_init(&names);
    FILE *f = fmemopen((void *)csv, strlen(csv), "r");
    assert_non_null(f);
    struct config_options opt = {0.15, PEAK_LESSON, IMPL_MEMFIT};
    struct config_reader *rd = config_reader_new(f, "in.csv", p, &opt, &names, &d);
    assert_non_null(rd);
    struct scenario sc;
    unsigned long line;
    int rc;
    while ((rc = config_reader_next(rd, &sc, &line)) != 0 && rc != -2)
        if (rc == 1 && r->n < MAX_ROWS)
            r->sc[r->n++] = sc;
    config_reader_free(rd);
    fclose(f);
    nameset_release(&names);
}

static void run_csv(struct run *r, const char *csv)
{
    run_csv_with(r, csv, presets);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* Writes text as the config.json of the folder dir/name. */
static void write_config(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/config.json", dir, name);
    write_file(path, text);
}

static int setup(void **state)
{
    (void)state;
    struct diag d;
    diag_init(&d, NULL, NULL);
    presets = config_presets_load("configs/models.csv", "configs/gpus.csv", &d);
    snprintf(dir, sizeof dir, "%s", "/tmp/memfit-modeljson-XXXXXX");
    if (!presets || !mkdtemp(dir))
        return -1;
    for (size_t i = 0; i < MODELJSON_SEEDS; i++)
        write_config(modeljson_seeds[i].name, modeljson_seeds[i].json);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    config_presets_free(presets);
    test_sh("rm -rf '%s'", dir);
    return 0;
}

/* Every member of a model and its run but the names; prints each difference. */
static int scenario_differences(const struct scenario *a, const struct scenario *b,
                                const char *what)
{
    int n = 0;
#define SAME(m)                                                                                    \
    do {                                                                                           \
        if (a->m != b->m) {                                                                        \
            print_error("%s: " #m " is %g, expected %g\n", what, (double)a->m, (double)b->m);      \
            n++;                                                                                   \
        }                                                                                          \
    } while (0)
    SAME(arch);
    SAME(layers);
    SAME(hidden);
    SAME(heads);
    SAME(kv_heads);
    SAME(vocab);
    SAME(ffn);
    SAME(positions);
    SAME(tied);
    SAME(dropout);
    SAME(head_dim);
    SAME(qkv_bias);
    SAME(qk_norm);
    SAME(layer_norms);
    SAME(experts);
    SAME(top_k);
    SAME(expert_ffn);
    SAME(shared_ffn);
    SAME(shared_gate);
    SAME(router_bias);
    SAME(dense_layers);
    SAME(capacity_factor);
    SAME(q_lora_rank);
    SAME(kv_lora_rank);
    SAME(qk_nope_dim);
    SAME(qk_rope_dim);
    SAME(v_head_dim);
    SAME(seq);
    SAME(micro_batch);
    SAME(global_batch);
    SAME(precision);
    SAME(attention);
    SAME(recompute);
    SAME(ckpt_every);
    SAME(dp);
    SAME(tp);
    SAME(pp);
    SAME(sp);
    SAME(ep);
    SAME(etp);
    SAME(zero);
    SAME(offload);
    SAME(gpu_mem_bytes);
    SAME(reserve);
    SAME(gpus_per_node);
#undef SAME
    return n;
}

/* ---- one test per model_type ---- */

/*
 * Seed i read through a CSV row naming its folder: the scenario of its match (a preset, or the
 * explicit columns), the published total and active counts, the report's name for the model.
 */
static void check_seed(size_t i)
{
    const struct modeljson_seed *s = &modeljson_seeds[i];
    char csv[512], want_name[64];
    struct run json, match;
    snprintf(csv, sizeof csv, "name,model,seq,micro_batch,gpu\nj,%s/%s,4096,1,H100-80GB\n", dir,
             s->name);
    run_csv(&json, csv);
    if (json.n != 1)
        fail_msg("%s: not read:\n%s", s->name, json.messages);
    snprintf(csv, sizeof csv,
             "name," MODELJSON_SEED_MATCH_HEADER ",seq,micro_batch,gpu\nm,%s,4096,1,H100-80GB\n",
             s->match);
    run_csv(&match, csv);
    if (match.n != 1)
        fail_msg("%s: its match not read:\n%s", s->name, match.messages);
    const struct scenario *sc = &json.sc[0];
    assert_int_equal(scenario_differences(sc, &match.sc[0], s->name), 0);
    uint64_t n;
    assert_int_equal(model_params(sc, &n), MODEL_OK);
    assert_int_equal(n, s->total);
    assert_int_equal(model_active_params(sc, &n), MODEL_OK);
    assert_int_equal(n, s->active);
    /* The report names the file and its model_type. */
    snprintf(want_name, sizeof want_name, " (model_type %s)", s->model_type);
    size_t len = strlen(sc->model_preset), wl = strlen(want_name);
    assert_true(len >= wl && strcmp(sc->model_preset + len - wl, want_name) == 0);
    assert_non_null(strstr(sc->model_preset, "/config.json"));
}

/* The seed of a folder name (a test of a missing seed fails). */
static size_t seed_named(const char *folder)
{
    for (size_t i = 0; i < MODELJSON_SEEDS; i++)
        if (strcmp(modeljson_seeds[i].name, folder) == 0)
            return i;
    fail_msg("no seed %s", folder);
    return 0;
}

#define TYPE_TEST(fn, folder)                                                                      \
    static void fn(void **state)                                                                   \
    {                                                                                              \
        (void)state;                                                                               \
        check_seed(seed_named(folder));                                                            \
    }

TYPE_TEST(gpt2_is_gpt2_small, "gpt2")
TYPE_TEST(llama_is_llama3_1_8b, "Llama-3.1-8B")
TYPE_TEST(llama_is_llama3_1_405b, "Llama-3.1-405B")
TYPE_TEST(mistral_is_mistral_7b, "Mistral-7B-v0.1")
TYPE_TEST(mixtral_is_mixtral_8x7b, "Mixtral-8x7B-v0.1")
TYPE_TEST(qwen2_is_qwen2_5_7b, "Qwen2.5-7B")
TYPE_TEST(qwen2_moe_is_qwen2_57b_a14b, "Qwen2-57B-A14B")
TYPE_TEST(qwen3_is_qwen3_8b, "Qwen3-8B")
TYPE_TEST(qwen3_moe_is_qwen3_30b_a3b, "Qwen3-30B-A3B")
TYPE_TEST(gemma_is_gemma_7b, "gemma-7b")
TYPE_TEST(gemma2_is_gemma2_9b, "gemma-2-9b")
TYPE_TEST(deepseek_v3_is_deepseek_v3, "DeepSeek-V3")
TYPE_TEST(phi3_is_phi3_mini, "Phi-3-mini-4k-instruct")
TYPE_TEST(gemma3_text_is_gemma3_1b, "gemma-3-1b-pt")
TYPE_TEST(gemma3_is_gemma3_4b_language_model, "gemma-3-4b-pt")
TYPE_TEST(olmo2_is_olmo2_7b, "OLMo-2-1124-7B")
TYPE_TEST(gpt_oss_is_gpt_oss_20b, "gpt-oss-20b")
TYPE_TEST(deepseek_v2_is_deepseek_v2_lite, "DeepSeek-V2-Lite")
TYPE_TEST(granite_is_granite_8b, "granite-8b")

/* Every supported model_type has its published config among the seeds, and every seed maps. */
static void every_type_has_a_test(void **state)
{
    (void)state;
    size_t n;
    const char *const *types = modeljson_types(&n);
    assert_int_equal(n, 18);
    for (size_t t = 0; t < n; t++) {
        bool found = false;
        for (size_t i = 0; i < MODELJSON_SEEDS; i++)
            found |= strcmp(modeljson_seeds[i].model_type, types[t]) == 0;
        if (!found)
            fail_msg("no published config.json of model_type %s", types[t]);
    }
}

/* Gemma 7B as its report counts it: 7,751,248,896 parameters besides the (tied) embedding. */
static void gemma_7b_without_its_embedding(void **state)
{
    (void)state;
    char csv[256];
    struct run r;
    snprintf(csv, sizeof csv, "name,model,seq,micro_batch,gpu\ng,%s/gemma-7b,4096,1,A100-80GB\n",
             dir);
    run_csv(&r, csv);
    assert_int_equal(r.n, 1);
    uint64_t n;
    assert_int_equal(model_params(&r.sc[0], &n), MODEL_OK);
    assert_int_equal(n - r.sc[0].vocab * r.sc[0].hidden, 7751248896ull);
}

/* The acceptance of issue 15: memfit eval on config.json files gives the presets' terms. */
static void eval_of_config_files_equals_eval_of_presets(void **state)
{
    (void)state;
    char path_a[128], path_b[128];
    snprintf(path_a, sizeof path_a, "%s/configs.csv", dir);
    snprintf(path_b, sizeof path_b, "%s/presets.csv", dir);
    FILE *a = fopen(path_a, "w"), *b = fopen(path_b, "w");
    assert_non_null(a);
    assert_non_null(b);
    fputs("name,model,seq,micro_batch,gpu,attention,recompute,tp\n", a);
    fputs("name," MODELJSON_SEED_MATCH_HEADER ",seq,micro_batch,gpu,attention,recompute,tp\n", b);
    for (size_t i = 0; i < MODELJSON_SEEDS; i++) {
        const char *name = modeljson_seeds[i].name;
        /* tp = 2, but for gemma-3-1b, whose one KV head does not split */
        int tp = strcmp(name, "gemma-3-1b-pt") == 0 ? 1 : 2;
        fprintf(a, "%s,%s/%s,4096,1,H100-80GB,,,\n", name, dir, name);
        fprintf(a, "%s-flash,%s/%s/config.json,8192,2,H100-80GB,flash,selective,%d\n", name, dir,
                name, tp);
        fprintf(b, "%s,%s,4096,1,H100-80GB,,,\n", name, modeljson_seeds[i].match);
        fprintf(b, "%s-flash,%s,8192,2,H100-80GB,flash,selective,%d\n", name,
                modeljson_seeds[i].match, tp);
    }
    assert_int_equal(fclose(a), 0);
    assert_int_equal(fclose(b), 0);
    const char *memfit = getenv("MEMFIT") ? getenv("MEMFIT") : "build/memfit";
    char *from_configs = strdup(test_sh("'%s' eval '%s' 2>&1; echo \"exit $?\"", memfit, path_a));
    const char *from_presets = test_sh("'%s' eval '%s' 2>&1; echo \"exit $?\"", memfit, path_b);
    assert_non_null(from_configs);
    assert_non_null(strstr(from_configs, "\nexit 0\n"));
    assert_string_equal(from_configs, from_presets);
    free(from_configs);
}

/* ---- import-config ---- */

/* The rows import-config prints load as a models table whose presets equal the files. */
static void import_config_rows_load_as_presets(void **state)
{
    (void)state;
    struct strbuf sb;
    char file[256], models[128], csv[512];
    strbuf_init(&sb);
    modeljson_csv_header(&sb);
    for (size_t i = 0; i < MODELJSON_SEEDS; i++) {
        struct modeljson m;
        char got[MODELJSON_FILE_MAX], err[512];
        snprintf(file, sizeof file, "%s/%s", dir, modeljson_seeds[i].name);
        assert_int_equal(modeljson_read(file, &m, got, sizeof got, err, sizeof err), MODELJSON_OK);
        modeljson_csv_row(&m, got, &sb);
    }
    assert_int_equal(sb.err, STRBUF_OK);
    snprintf(models, sizeof models, "%s/models.csv", dir);
    write_file(models, sb.buf);
    /* The header: name, the model columns as config.c orders them (from arch), source. */
    size_t n_all, n;
    const char *const *all = config_column_names(&n_all);
    const char *const *cols = modeljson_columns(&n);
    size_t arch = 0;
    while (arch < n_all && strcmp(all[arch], "arch") != 0)
        arch++;
    assert_true(arch + n <= n_all);
    for (size_t c = 0; c < n; c++)
        assert_string_equal(cols[c], all[arch + c]);
    assert_true(strcmp(all[arch + n - 1], "v_head_dim") == 0);
    /* DeepSeek-V3's row, cell by cell. */
    char row[512];
    snprintf(row, sizeof row,
             "\nDeepSeek-V3,llama,61,7168,128,,129280,18432,no,,,,,,,256,8,2048,2048,,yes,3,1536,"
             "512,128,64,128,%s/DeepSeek-V3/config.json (model_type deepseek_v3; transformers "
             "models/deepseek_v3/modeling_deepseek_v3.py)\n",
             dir);
    assert_non_null(strstr(sb.buf, row));
    strbuf_release(&sb);

    struct diag d;
    diag_init(&d, NULL, NULL);
    struct config_presets *mine = config_presets_load(models, "configs/gpus.csv", &d);
    if (!mine)
        fail_msg("the imported table does not load: %s", d.first);
    for (size_t i = 0; i < MODELJSON_SEEDS; i++) {
        struct run by_name, by_file;
        snprintf(csv, sizeof csv, "name,model,seq,micro_batch,gpu\np,%s,4096,1,H100-80GB\n",
                 modeljson_seeds[i].name);
        run_csv_with(&by_name, csv, mine);
        snprintf(csv, sizeof csv, "name,model,seq,micro_batch,gpu\nf,%s/%s,4096,1,H100-80GB\n", dir,
                 modeljson_seeds[i].name);
        run_csv(&by_file, csv);
        assert_int_equal(by_name.n, 1);
        assert_int_equal(by_file.n, 1);
        assert_int_equal(
            scenario_differences(&by_name.sc[0], &by_file.sc[0], modeljson_seeds[i].name), 0);
    }
    config_presets_free(mine);
}

/* A preset's name: the folder of config.json, or the file's own name, or the model_type. */
static void import_config_names(void **state)
{
    (void)state;
    static const struct {
        const char *file, *name;
    } cases[] = {
        {"models/Llama-3.1-8B/config.json", "Llama-3.1-8B"},
        {"models//x//config.json", "x"},
        {"llama-tiny.json", "llama-tiny"},
        {"a/b/My.JSON", "My"},
        {"config.json", "llama"},
        {"./config.json", "llama"},
        {"\"q,x\"/config.json", "\"\"\"q,x\"\"\""},
    };
    struct modeljson m;
    char err[256];
    const char *json = "{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
                       "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": "
                       "100}";
    assert_int_equal(modeljson_parse(json, strlen(json), &m, err, sizeof err), MODELJSON_OK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct strbuf sb;
        strbuf_init(&sb);
        modeljson_csv_row(&m, cases[i].file, &sb);
        size_t n = strlen(cases[i].name);
        if (strncmp(sb.buf, cases[i].name, n) != 0 || sb.buf[n] != ',')
            fail_msg("%s: row %s", cases[i].file, sb.buf);
        strbuf_release(&sb);
    }
}

/* ---- defaults, aliases, variants ---- */

#define LLAMA_SIZES                                                                                \
    "\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, "                  \
    "\"intermediate_size\": 128, \"vocab_size\": 100"

/* The cells of json, as "column=value" for the columns it sets, joined by spaces. */
static const char *cells_of(const char *json)
{
    static char out[512];
    struct modeljson m;
    char err[256];
    if (modeljson_parse(json, strlen(json), &m, err, sizeof err) != MODELJSON_OK)
        fail_msg("%s: %s", json, err);
    size_t n, used = 0;
    const char *const *cols = modeljson_columns(&n);
    out[0] = '\0';
    for (size_t c = 0; c < n; c++)
        if (m.value[c][0])
            used += (size_t)snprintf(out + used, sizeof out - used, "%s%s=%s", used ? " " : "",
                                     cols[c], m.value[c]);
    return out;
}

/* A field the file leaves out takes its transformers configuration class's default; null means
 * what None means there. */
static void missing_fields_take_the_transformers_defaults(void **state)
{
    (void)state;
    static const struct {
        const char *json, *cells;
    } cases[] = {
        /* LlamaConfig: num_key_value_heads None = heads, untied. */
        {"{\"model_type\": \"llama\", " LLAMA_SIZES "}",
         "arch=llama layers=2 hidden=64 heads=4 kv_heads=4 vocab=100 ffn=128 tied=no"},
        /* MistralConfig: 8 key/value heads; null = heads. */
        {"{\"model_type\": \"mistral\", " LLAMA_SIZES "}",
         "arch=llama layers=2 hidden=64 heads=4 kv_heads=8 vocab=100 ffn=128 tied=no"},
        {"{\"model_type\": \"mistral\", \"num_key_value_heads\": null, " LLAMA_SIZES "}",
         "arch=llama layers=2 hidden=64 heads=4 kv_heads=4 vocab=100 ffn=128 tied=no"},
        /* Gemma: head_dim 256, 16 key/value heads, tied. */
        {"{\"model_type\": \"gemma\", " LLAMA_SIZES "}",
         "arch=llama layers=2 hidden=64 heads=4 kv_heads=16 vocab=100 ffn=128 tied=yes "
         "head_dim=256"},
        /* Gemma 2: four norms a layer, 4 key/value heads. */
        {"{\"model_type\": \"gemma2\", \"num_key_value_heads\": 2, " LLAMA_SIZES "}",
         "arch=llama layers=2 hidden=64 heads=4 kv_heads=2 vocab=100 ffn=128 tied=yes "
         "head_dim=256 layer_norms=4"},
        /* Qwen3: head_dim 128, q/k norms; a head_dim of h / a is the column's default. */
        {"{\"model_type\": \"qwen3\", \"num_key_value_heads\": 2, \"head_dim\": 16, " LLAMA_SIZES
         "}",
         "arch=llama layers=2 hidden=64 heads=4 kv_heads=2 vocab=100 ffn=128 tied=no qk_norm=yes"},
        {"{\"model_type\": \"qwen3\", \"num_key_value_heads\": 2, " LLAMA_SIZES "}",
         "arch=llama layers=2 hidden=64 heads=4 kv_heads=2 vocab=100 ffn=128 tied=no "
         "head_dim=128 qk_norm=yes"},
        /* Qwen2: biases on q, k, v. Qwen2-MoE: a shared expert of 5632 with its gate. */
        {"{\"model_type\": \"qwen2\", \"num_key_value_heads\": 2, " LLAMA_SIZES "}",
         "arch=llama layers=2 hidden=64 heads=4 kv_heads=2 vocab=100 ffn=128 tied=no "
         "qkv_bias=yes"},
        {"{\"model_type\": \"qwen2_moe\", \"num_key_value_heads\": 2, \"num_experts\": 4, "
         "\"num_experts_per_tok\": 2, \"moe_intermediate_size\": 32, " LLAMA_SIZES "}",
         "arch=llama layers=2 hidden=64 heads=4 kv_heads=2 vocab=100 ffn=128 tied=no "
         "qkv_bias=yes experts=4 top_k=2 expert_ffn=32 shared_ffn=5632 shared_gate=yes"},
        {"{\"model_type\": \"qwen2_moe\", \"qkv_bias\": false, \"num_key_value_heads\": 2, "
         "\"num_experts\": 4, \"num_experts_per_tok\": 2, \"moe_intermediate_size\": 32, "
         "\"shared_expert_intermediate_size\": 0, " LLAMA_SIZES "}",
         "arch=llama layers=2 hidden=64 heads=4 kv_heads=2 vocab=100 ffn=128 tied=no experts=4 "
         "top_k=2 expert_ffn=32"},
        /* Qwen3-MoE: leading dense layers from mlp_only_layers. */
        {"{\"model_type\": \"qwen3_moe\", \"mlp_only_layers\": [0], \"num_experts\": 4, "
         "\"num_experts_per_tok\": 2, \"moe_intermediate_size\": 32, " LLAMA_SIZES "}",
         "arch=llama layers=2 hidden=64 heads=4 kv_heads=4 vocab=100 ffn=128 tied=no qk_norm=yes "
         "experts=4 top_k=2 expert_ffn=32 dense_layers=1"},
        /* Mixtral: its experts as intermediate_size; num_experts is another name of
         * num_local_experts. */
        {"{\"model_type\": \"mixtral\", \"num_experts\": 4, \"num_experts_per_tok\": 2, "
         "\"num_key_value_heads\": 2, " LLAMA_SIZES "}",
         "arch=llama layers=2 hidden=64 heads=4 kv_heads=2 vocab=100 ffn=128 tied=no experts=4 "
         "top_k=2 expert_ffn=128"},
        /* DeepSeek-V3: DeepseekV3Config's ranks, 3 dense layers, one shared expert, the score
         * bias of noaux_tc; q_lora_rank null: q projected from h. */
        {"{\"model_type\": \"deepseek_v3\", \"n_routed_experts\": 8, \"num_experts_per_tok\": 2, "
         "\"moe_intermediate_size\": 32, \"kv_lora_rank\": 16, " LLAMA_SIZES "}",
         "arch=llama layers=2 hidden=64 heads=4 vocab=100 ffn=128 tied=no experts=8 top_k=2 "
         "expert_ffn=32 shared_ffn=32 router_bias=yes dense_layers=3 q_lora_rank=1536 "
         "kv_lora_rank=16 qk_nope_dim=128 qk_rope_dim=64 v_head_dim=128"},
        {"{\"model_type\": \"deepseek_v3\", \"n_routed_experts\": 8, \"num_experts_per_tok\": 2, "
         "\"moe_intermediate_size\": 32, \"kv_lora_rank\": 16, \"q_lora_rank\": null, "
         "\"n_shared_experts\": 2, \"first_k_dense_replace\": 0, \"topk_method\": \"greedy\", "
         "\"qk_nope_head_dim\": 8, \"qk_rope_head_dim\": 4, \"v_head_dim\": 8, " LLAMA_SIZES "}",
         "arch=llama layers=2 hidden=64 heads=4 vocab=100 ffn=128 tied=no experts=8 top_k=2 "
         "expert_ffn=32 shared_ffn=64 kv_lora_rank=16 qk_nope_dim=8 qk_rope_dim=4 v_head_dim=8"},
        /* GPT-2: n_inner null = 4 n_embd, 1024 positions, tied, dropout (0.1) unless all three
         * dropouts are 0; hidden_size is another name of n_embd. */
        {"{\"model_type\": \"gpt2\", \"n_layer\": 2, \"n_embd\": 64, \"n_head\": 4, "
         "\"n_inner\": null, \"vocab_size\": 100}",
         "arch=gpt layers=2 hidden=64 heads=4 kv_heads=4 vocab=100 ffn=256 tied=yes "
         "positions=1024"},
        {"{\"model_type\": \"gpt2\", \"n_layer\": 2, \"hidden_size\": 64, \"n_head\": 4, "
         "\"n_inner\": 100, \"n_positions\": 0, \"tie_word_embeddings\": false, \"resid_pdrop\": "
         "0, "
         "\"embd_pdrop\": 0.0, \"attn_pdrop\": 0, \"vocab_size\": 100}",
         "arch=gpt layers=2 hidden=64 heads=4 kv_heads=4 vocab=100 ffn=100 tied=no positions=0 "
         "dropout=no"},
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = cells_of(cases[i].json);
        if (strcmp(got, cases[i].cells) != 0) {
            print_error("case %zu: expected\n  %s\ngot\n  %s\n", i, cases[i].cells, got);
            failed++;
        }
    }
    assert_int_equal(failed, 0);
}

/* Rotary scalings, sliding windows and soft-capping change no tensor memfit counts: accepted,
 * with the cells of the plain file. */
static void rope_scalings_and_sliding_windows_are_accepted(void **state)
{
    (void)state;
    char plain[512];
    snprintf(
        plain, sizeof plain, "%s",
        cells_of("{\"model_type\": \"mistral\", \"num_key_value_heads\": 2, " LLAMA_SIZES "}"));
    assert_string_equal(
        cells_of("{\"model_type\": \"mistral\", \"num_key_value_heads\": 2, \"sliding_window\": "
                 "4096, \"use_sliding_window\": true, \"layer_types\": [\"sliding_attention\", "
                 "\"full_attention\"], \"rope_parameters\": {\"full_attention\": {\"rope_type\": "
                 "\"default\"}, \"sliding_attention\": {\"rope_type\": \"linear\", \"factor\": "
                 "8}}, \"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 2.0}, " LLAMA_SIZES
                 "}"),
        plain);
}

/* The window the report's notes name: a sliding_window not switched off (Qwen2's
 * use_sliding_window: false), or sliding layers in layer_types without a size (1). */
static unsigned long long window_of(const char *json)
{
    struct modeljson m;
    char err[256];
    if (modeljson_parse(json, strlen(json), &m, err, sizeof err) != MODELJSON_OK)
        fail_msg("%s: %s", json, err);
    return m.sliding_window;
}

static void sliding_windows_are_reported(void **state)
{
    (void)state;
    assert_int_equal(window_of("{\"model_type\": \"mistral\", " LLAMA_SIZES "}"), 0);
    assert_int_equal(
        window_of("{\"model_type\": \"mistral\", \"sliding_window\": 4096, " LLAMA_SIZES "}"),
        4096);
    assert_int_equal(window_of("{\"model_type\": \"qwen2\", \"sliding_window\": 4096, "
                               "\"use_sliding_window\": false, " LLAMA_SIZES "}"),
                     0);
    assert_int_equal(window_of("{\"model_type\": \"mistral\", \"sliding_window\": null, "
                               "\"layer_types\": [\"sliding_attention\"], " LLAMA_SIZES "}"),
                     1);
}

/* A byte-order mark before the JSON, as some editors save UTF-8: the same model as without it. */
static void a_byte_order_mark_is_skipped(void **state)
{
    (void)state;
    char plain[512];
    snprintf(plain, sizeof plain, "%s", cells_of("{\"model_type\": \"llama\", " LLAMA_SIZES "}"));
    assert_string_equal(cells_of("\xEF\xBB\xBF{\"model_type\": \"llama\", " LLAMA_SIZES "}"),
                        plain);
}

/* ---- bad files ---- */

#define LLAMA_HEAD "{\"model_type\": \"llama\", "

static const struct {
    const char *json, *message;
} BAD[] = {
    {"", "line 1, column 0: not valid JSON: '[' or '{' expected near end of file"},
    {"{\"model_type\": \"llama\",\n \"hidden_size\": 64,\n}",
     "line 3, column 1: not valid JSON: string or '}' expected near '}'"},
    {LLAMA_HEAD "\"hidden_size\": 64, \"hidden_size\": 64}",
     "line 1, column 56: not valid JSON: duplicate object key near '\"hidden_size\"'"},
    {"[]", "not a JSON object"},
    {"{}",
     "field 'model_type' is missing (supported: gpt2, llama, mistral, mixtral, qwen2, "
     "qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, deepseek_v3, deepseek_v2, phi3, gemma3_text, "
     "gemma3, olmo2, gpt_oss, granite)"},
    {"{\"model_type\": [\"llama\"]}", "field 'model_type' is an array: expected a string"},
    {"{\"model_type\": \"xlnet\"}",
     "model_type 'xlnet' is not supported (supported: gpt2, llama, mistral, mixtral, qwen2, "
     "qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, deepseek_v3, deepseek_v2, phi3, gemma3_text, "
     "gemma3, olmo2, gpt_oss, granite)"},
    {"{\"model_type\": \"qwen2-moe\"}",
     "model_type 'qwen2-moe' is not supported (did you mean 'qwen2_moe'?)"},
    {"{\"model_type\": \"llama\\u001b[2J\"}",
     "model_type 'llama\\x1b[2J' is not supported (did you mean 'llama'?)"},
    /* Bytes other than printable ASCII shown escaped, never as '?'; a byte-order mark skipped. */
    {"{\"model_type\": \"llama\xce\xbb\"}",
     "model_type 'llama\\xce\\xbb' is not supported (did you mean 'llama'?)"},
    {"{\"model_type\": \xce\xbb}", "line 1, column 16: not valid JSON: invalid token near "
                                   "'\\xce\\xbb'"},
    {"\xEF\xBB\xBF[]", "not a JSON object"},
    {"\xEF\xBB\xBF{\"model_type\": \"llama\",\n \"hidden_size\": 64,\n}",
     "line 3, column 1: not valid JSON: string or '}' expected near '}'"},
    /* A missing required field; each wrong type. */
    {LLAMA_HEAD "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"intermediate_size\": "
                "128, \"vocab_size\": 100}",
     "field 'hidden_size' is missing (required for model_type 'llama')"},
    {LLAMA_HEAD "\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, "
                "\"intermediate_size\": 128}",
     "field 'vocab_size' is missing (required for model_type 'llama')"},
    {LLAMA_HEAD "\"num_hidden_layers\": 2, \"hidden_size\": \"4096\"}",
     "field 'hidden_size' is a string: expected a positive integer"},
    {LLAMA_HEAD "\"num_hidden_layers\": 2, \"hidden_size\": 4096.0}",
     "field 'hidden_size' is 4096.0: expected a positive integer"},
    {LLAMA_HEAD "\"num_hidden_layers\": 0}",
     "field 'num_hidden_layers' is 0: expected a positive integer"},
    {LLAMA_HEAD "\"num_hidden_layers\": -2}",
     "field 'num_hidden_layers' is -2: expected a positive integer"},
    {LLAMA_HEAD "\"num_hidden_layers\": null}",
     "field 'num_hidden_layers' is null: expected a positive integer"},
    {LLAMA_HEAD LLAMA_SIZES ", \"num_key_value_heads\": true}",
     "field 'num_key_value_heads' is true: expected a positive integer"},
    {LLAMA_HEAD LLAMA_SIZES ", \"tie_word_embeddings\": \"no\"}",
     "field 'tie_word_embeddings' is a string: expected true or false"},
    {LLAMA_HEAD LLAMA_SIZES ", \"attention_dropout\": \"0\"}",
     "field 'attention_dropout' is a string: expected a number"},
    /* Variants memfit does not model. */
    {LLAMA_HEAD LLAMA_SIZES ", \"attention_bias\": true}",
     "field 'attention_bias' is true: biases on q, k, v and o are not modelled (those on q, k and "
     "v are: qkv_bias)"},
    {LLAMA_HEAD LLAMA_SIZES ", \"mlp_bias\": true}",
     "field 'mlp_bias' is true: biases on the MLP of a llama-style layer are not modelled"},
    {LLAMA_HEAD LLAMA_SIZES ", \"attention_dropout\": 0.1}",
     "field 'attention_dropout' is 0.1: dropout in a llama-style layer is not modelled"},
    {LLAMA_HEAD LLAMA_SIZES ", \"rope_scaling\": {\"rope_type\": \"mrope\"}}",
     "field 'rope_scaling': rope type 'mrope' is not modelled (known: default, linear, dynamic, "
     "yarn, longrope, llama3)"},
    {LLAMA_HEAD LLAMA_SIZES ", \"rope_parameters\": {\"full_attention\": {\"type\": 3}}}",
     "field 'rope_parameters': its rope type is 3: expected a string"},
    {LLAMA_HEAD LLAMA_SIZES ", \"rope_scaling\": \"yarn\"}",
     "field 'rope_scaling' is a string: expected an object"},
    {LLAMA_HEAD LLAMA_SIZES ", \"layer_types\": [\"full_attention\", \"chunked_attention\"]}",
     "field 'layer_types': attention 'chunked_attention' is not modelled (full_attention and "
     "sliding_attention are)"},
    {LLAMA_HEAD LLAMA_SIZES ", \"layer_types\": \"full_attention\"}",
     "field 'layer_types' is a string: expected an array of strings"},
    {"{\"model_type\": \"gpt2\", \"n_layer\": 2, \"n_embd\": 64, \"n_head\": 4, "
     "\"add_cross_attention\": true, \"vocab_size\": 100}",
     "field 'add_cross_attention' is true: cross-attention is not modelled"},
    {"{\"model_type\": \"gpt2\", \"n_layer\": 2, \"n_embd\": 64, \"n_head\": 4, \"n_positions\": "
     "null, \"vocab_size\": 100}",
     "field 'n_positions' is null: expected a non-negative integer"},
    {"{\"model_type\": \"mixtral\", " LLAMA_SIZES "}",
     "field 'num_local_experts' is missing (required for model_type 'mixtral')"},
    {"{\"model_type\": \"qwen2_moe\", \"num_experts\": 4, \"num_experts_per_tok\": 2, "
     "\"moe_intermediate_size\": 32, \"decoder_sparse_step\": 2, " LLAMA_SIZES "}",
     "field 'decoder_sparse_step' is 2: MoE layers between dense ones are not modelled (only "
     "leading dense layers are)"},
    {"{\"model_type\": \"qwen3_moe\", \"num_experts\": 4, \"num_experts_per_tok\": 2, "
     "\"moe_intermediate_size\": 32, \"mlp_only_layers\": [1], " LLAMA_SIZES "}",
     "field 'mlp_only_layers': dense layers other than the leading ones (0, 1, ..., n - 1) are "
     "not modelled"},
    {"{\"model_type\": \"qwen3_moe\", \"num_experts\": 4, \"num_experts_per_tok\": 2, "
     "\"moe_intermediate_size\": 32, \"mlp_only_layers\": [\"0\"], " LLAMA_SIZES "}",
     "field 'mlp_only_layers' holds a string: expected layer numbers"},
    {"{\"model_type\": \"deepseek_v3\", \"n_routed_experts\": 8, \"num_experts_per_tok\": 2, "
     "\"moe_intermediate_size\": 32, " LLAMA_SIZES "}",
     "field 'kv_lora_rank' is missing (required for model_type 'deepseek_v3')"},
    {"{\"model_type\": \"deepseek_v3\", \"n_routed_experts\": 8, \"num_experts_per_tok\": 2, "
     "\"moe_intermediate_size\": 32, \"kv_lora_rank\": 16, \"moe_layer_freq\": 2, " LLAMA_SIZES "}",
     "field 'moe_layer_freq' is 2: MoE layers between dense ones are not modelled (only leading "
     "dense layers are)"},
    {"{\"model_type\": \"deepseek_v3\", \"n_routed_experts\": 8, \"num_experts_per_tok\": 2, "
     "\"moe_intermediate_size\": 32, \"kv_lora_rank\": 16, \"topk_method\": \"sparse\", "
     "" LLAMA_SIZES "}",
     "field 'topk_method' is 'sparse': expected noaux_tc, greedy or group_limited_greedy"},
};

/* Every row of BAD: exactly its message. */
static void bad_configs(void **state)
{
    (void)state;
    int failed = 0;
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        struct modeljson m;
        char err[512] = "";
        enum modeljson_status rc =
            modeljson_parse(BAD[i].json, strlen(BAD[i].json), &m, err, sizeof err);
        if (rc != MODELJSON_BAD || strcmp(err, BAD[i].message) != 0) {
            print_error("BAD[%zu]: expected\n  %s\ngot (%d)\n  %s\n", i, BAD[i].message, rc, err);
            failed++;
        }
    }
    assert_int_equal(failed, 0);
}

/* A row whose config.json gives no model is reported at its line, with the file, and skipped;
 * the others are read. */
static void a_bad_config_skips_only_its_row(void **state)
{
    (void)state;
    char csv[1024], want[1024];
    struct run r;
    write_config("no-hidden", LLAMA_HEAD "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                                         "\"intermediate_size\": 128, \"vocab_size\": 100}");
    write_config("not-json", "model_type = llama\n");
    snprintf(csv, sizeof csv,
             "name,model,seq,micro_batch,gpu\n"
             "a,%s/Llama-3.1-8B,4096,1,H100-80GB\n"
             "b,%s/no-hidden,4096,1,H100-80GB\n"
             "c,%s/nowhere/config.json,4096,1,H100-80GB\n"
             "d,%s/not-json/,4096,1,H100-80GB\n"
             "e,%s,4096,1,H100-80GB\n"
             "f,llama3-8b,4096,1,H100-80GB\n",
             dir, dir, dir, dir, dir);
    run_csv(&r, csv);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.sc[0].name, "a");
    assert_string_equal(r.sc[1].name, "f");
    snprintf(want, sizeof want,
             "in.csv:3: column 'model': %s/no-hidden/config.json: field 'hidden_size' is missing "
             "(required for model_type 'llama')\n"
             "in.csv:4: column 'model': %s/nowhere/config.json: cannot open: No such file or "
             "directory\n"
             "in.csv:5: column 'model': %s/not-json/config.json: line 1, column 5: not valid JSON: "
             "'[' or '{' expected near 'model'\n"
             "in.csv:6: column 'model': %s/config.json: cannot open: No such file or directory\n",
             dir, dir, dir, dir);
    assert_string_equal(r.messages, want);
}

/* The row's own cells win over the file's; a rule broken by a cell of the file names the file. */
static void explicit_columns_override_the_file(void **state)
{
    (void)state;
    char csv[512], want[512];
    struct run r;
    snprintf(csv, sizeof csv,
             "name,model,seq,micro_batch,gpu,kv_heads,heads,top_k\n"
             "a,%s/Llama-3.1-8B,4096,1,H100-80GB,32,,\n"
             "b,%s/Llama-3.1-8B,4096,1,H100-80GB,,4,\n"
             "c,%s/Mixtral-8x7B-v0.1,4096,1,H100-80GB,,,1\n",
             dir, dir, dir);
    run_csv(&r, csv);
    assert_int_equal(r.n, 2);
    assert_int_equal(r.sc[0].kv_heads, 32);
    assert_int_equal(r.sc[0].layers, 32);
    assert_int_equal(r.sc[1].top_k, 1);
    assert_int_equal(r.sc[1].experts, 8);
    struct modeljson llama = {.model_type = "llama"};
    char file[256], name[SCENARIO_NAME_MAX + 1];
    snprintf(file, sizeof file, "%s/Llama-3.1-8B/config.json", dir);
    snprintf(want, sizeof want,
             "in.csv:3: column 'kv_heads': '8' does not divide heads (4) (from %s)\n",
             modeljson_describe(&llama, file, name, sizeof name));
    assert_string_equal(r.messages, want);
}

/* A path holds a '/' or ends in .json, relative to the current directory; a folder may end in
 * '/'. */
static void paths_are_files_or_folders_from_the_current_directory(void **state)
{
    (void)state;
    assert_false(modeljson_is_path("llama3-8b"));
    assert_false(modeljson_is_path("json"));
    assert_true(modeljson_is_path("a/b"));
    assert_true(modeljson_is_path("tiny.JSON"));
    char cwd[1024], path[256];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    snprintf(path, sizeof path, "%s", "tiny.json");
    write_file(path, LLAMA_HEAD LLAMA_SIZES "}");
    struct run r;
    run_csv(&r, "name,model,seq,micro_batch,gpu_mem_gb\n"
                "a,./Llama-3.1-8B,4096,1,80\n"
                "b,Llama-3.1-8B/,4096,1,80\n"
                "c,Llama-3.1-8B/config.json,4096,1,80\n"
                "d,tiny.json,64,1,80\n");
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(r.n, 4);
    assert_string_equal(r.sc[0].model_preset, "./Llama-3.1-8B/config.json (model_type llama)");
    assert_string_equal(r.sc[1].model_preset, "Llama-3.1-8B/config.json (model_type llama)");
    assert_string_equal(r.sc[2].model_preset, "Llama-3.1-8B/config.json (model_type llama)");
    assert_string_equal(r.sc[3].model_preset, "tiny.json (model_type llama)");
    assert_int_equal(r.sc[3].hidden, 64);
}

/* The report's name of the model fits the scenario's 64 bytes: the front of a long path is cut
 * to "...", never inside a character. */
static void long_paths_are_cut_in_front(void **state)
{
    (void)state;
    struct modeljson m = {.model_type = "qwen2_moe"};
    char file[256], buf[SCENARIO_NAME_MAX + 1];
    for (int i = 0; i < 40; i++)
        memcpy(file + 2 * i, "\xc3\xa9", 2); /* e acute: 2 bytes */
    snprintf(file + 80, sizeof file - 80, "%s", "/config.json");
    modeljson_describe(&m, file, buf, sizeof buf);
    assert_true(strlen(buf) <= SCENARIO_NAME_MAX);
    assert_int_equal(strncmp(buf, "...", 3), 0);
    assert_true(((unsigned char)buf[3] & 0xC0) != 0x80);
    const char *tail = "/config.json (model_type qwen2_moe)";
    assert_string_equal(buf + strlen(buf) - strlen(tail), tail);
    modeljson_describe(&m, "short/config.json", buf, sizeof buf);
    assert_string_equal(buf, "short/config.json (model_type qwen2_moe)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpt2_is_gpt2_small),
        cmocka_unit_test(llama_is_llama3_1_8b),
        cmocka_unit_test(llama_is_llama3_1_405b),
        cmocka_unit_test(mistral_is_mistral_7b),
        cmocka_unit_test(mixtral_is_mixtral_8x7b),
        cmocka_unit_test(qwen2_is_qwen2_5_7b),
        cmocka_unit_test(qwen2_moe_is_qwen2_57b_a14b),
        cmocka_unit_test(qwen3_is_qwen3_8b),
        cmocka_unit_test(qwen3_moe_is_qwen3_30b_a3b),
        cmocka_unit_test(gemma_is_gemma_7b),
        cmocka_unit_test(gemma2_is_gemma2_9b),
        cmocka_unit_test(deepseek_v3_is_deepseek_v3),
        cmocka_unit_test(phi3_is_phi3_mini),
        cmocka_unit_test(gemma3_text_is_gemma3_1b),
        cmocka_unit_test(gemma3_is_gemma3_4b_language_model),
        cmocka_unit_test(olmo2_is_olmo2_7b),
        cmocka_unit_test(gpt_oss_is_gpt_oss_20b),
        cmocka_unit_test(deepseek_v2_is_deepseek_v2_lite),
        cmocka_unit_test(granite_is_granite_8b),
        cmocka_unit_test(every_type_has_a_test),
        cmocka_unit_test(gemma_7b_without_its_embedding),
        cmocka_unit_test(eval_of_config_files_equals_eval_of_presets),
        cmocka_unit_test(import_config_rows_load_as_presets),
        cmocka_unit_test(import_config_names),
        cmocka_unit_test(missing_fields_take_the_transformers_defaults),
        cmocka_unit_test(rope_scalings_and_sliding_windows_are_accepted),
        cmocka_unit_test(sliding_windows_are_reported),
        cmocka_unit_test(a_byte_order_mark_is_skipped),
        cmocka_unit_test(bad_configs),
        cmocka_unit_test(a_bad_config_skips_only_its_row),
        cmocka_unit_test(explicit_columns_override_the_file),
        cmocka_unit_test(paths_are_files_or_folders_from_the_current_directory),
        cmocka_unit_test(long_paths_are_cut_in_front),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
