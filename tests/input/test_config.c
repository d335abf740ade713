/*
 * Tests of csvin.c and config (src/input/config*.c): the CSV dialect (quotes, CRLF, BOM, physical
 * line numbers), presets and defaults, and a table with one row per bad-input class of
 * doc/model.md section 13.2: each gives "FILE:LINE: column 'X': ...", skips its row and lets the
 * others through.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input/config.h"
#include "input/csvin.h"
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

static void collect(void *ctx, const char *msg, const char *file, unsigned long line)
{
    (void)file;
    (void)line;
    struct run *r = ctx;
    size_t used = strlen(r->messages);
    snprintf(r->messages + used, sizeof r->messages - used, "%s\n", msg);
    r->n_messages++;
}

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

/* Reads `csv` as the file "in.csv" with the default --reserve and the given --peak; its rows are
 * memfit search's jobs when jobs is true. */
static void run_csv_mode(struct run *r, const char *csv, enum peak_model peak, bool jobs)
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

static void run_csv_peak(struct run *r, const char *csv, enum peak_model peak)
{
    run_csv_mode(r, csv, peak, false);
}

/* Reads `csv` as "in.csv" under --peak lesson: the tests of this file hold the lesson's numbers
 * (doc/model.md section 9), which --peak lesson keeps. */
static void run_csv(struct run *r, const char *csv)
{
    run_csv_peak(r, csv, PEAK_LESSON);
}

static void assert_message(const struct run *r, const char *want)
{
    if (!strstr(r->messages, want))
        fail_msg("expected message containing \"%s\", got:\n%s", want, r->messages);
}

#define HEADER_NO_NL "name,layers,hidden,heads,vocab,seq,micro_batch,gpu_mem_gb"
#define HEADER HEADER_NO_NL "\n"

/* ---- the CSV dialect ---- */

static void reads_explicit_columns_with_defaults(void **state)
{
    (void)state;
    struct run r;
    run_csv(&r, HEADER "a,24,2048,16,50257,2048,8,80\n");
    assert_int_equal(r.n, 1);
    assert_int_equal(r.n_messages, 0);
    const struct scenario *sc = &r.sc[0];
    assert_string_equal(sc->name, "a");
    assert_int_equal(sc->kv_heads, 16);
    assert_int_equal(sc->ffn, 8192);
    assert_true(sc->tied);
    assert_true(sc->dropout);
    assert_int_equal(sc->dp, 1);
    assert_int_equal(sc->global_batch, 8);
    assert_int_equal(sc->gpu_mem_bytes, 80000000000);
    assert_true(sc->reserve == 0.15);
    assert_int_equal(sc->gpus_per_node, 8);
    /* The worked example of doc/model.md section 9, from a CSV row. */
    struct terms t;
    assert_int_equal(model_eval(sc, &t), MODEL_OK);
    assert_int_equal(t.params, 1311528960);
}

static void header_is_case_insensitive_trimmed_and_in_any_order(void **state)
{
    (void)state;
    struct run r;
    run_csv(&r, " Micro_Batch "
                ",SEQ,name,Layers,hidden,heads,vocab,gpu_mem_gb\n8,2048,x,24,2048,16,50257,80\n");
    assert_int_equal(r.n, 1);
    assert_int_equal(r.sc[0].micro_batch, 8);
    assert_int_equal(r.sc[0].seq, 2048);
}

static void bom_crlf_and_quoted_fields(void **state)
{
    (void)state;
    struct run r;
    run_csv(&r, "\xEF\xBB\xBF"
                "name,layers,hidden,heads,vocab,seq,micro_batch,gpu_mem_gb\r\n"
                "\"with, comma\",24,2048,16,50257,2048,8,80\r\n"
                "\"two\nlines\",24,2048,16,50257,2048,8,80\r\n"
                "after,24,2048,16,50257,2048,8,80\r\n");
    assert_int_equal(r.n_messages, 0);
    assert_int_equal(r.n, 3);
    assert_string_equal(r.sc[0].name, "with, comma");
    assert_string_equal(r.sc[1].name, "two\nlines");
    /* Physical line numbers: the quoted newline makes "after" start on line 5. */
    assert_int_equal(r.line[0], 2);
    assert_int_equal(r.line[1], 3);
    assert_int_equal(r.line[2], 5);
}

static void blank_lines_are_skipped(void **state)
{
    (void)state;
    struct run r;
    run_csv(&r, HEADER "\na,24,2048,16,50257,2048,8,80\n\n");
    assert_int_equal(r.n, 1);
    assert_int_equal(r.line[0], 3);
}

static void model_and_gpu_presets_merge_and_columns_win(void **state)
{
    (void)state;
    struct run r;
    run_csv(&r, "name,model,gpu,seq,micro_batch,kv_heads\n"
                "l,Llama2-70B,h100-80gb,4096,1,\n"
                "o,llama2-70b,H100-80GB,4096,1,16\n");
    assert_int_equal(r.n, 2);
    const struct scenario *sc = &r.sc[0];
    assert_int_equal(sc->arch, ARCH_LLAMA);
    assert_int_equal(sc->layers, 80);
    assert_int_equal(sc->kv_heads, 8);
    assert_int_equal(sc->ffn, 28672);
    assert_false(sc->tied);
    assert_false(sc->dropout);
    assert_int_equal(sc->gpu_mem_bytes, 81559ull << 20); /* as nvidia-smi reports it */
    assert_true(sc->speed.bf16_tflops > 900);
    assert_int_equal(r.sc[1].kv_heads, 16); /* the explicit column wins */
}

/* A GPU preset holds the capacity the device reports (nvidia-smi, rocm-smi: mem_mib), not the
 * "80 GB" of its name; a row's own gpu_mem_gb still wins, in 10^9 bytes per GB. */
static void gpu_presets_hold_the_capacity_the_device_reports(void **state)
{
    (void)state;
    static const struct {
        const char *gpu;
        uint64_t mib;
    } want[] = {
        {"A100-40GB", 40960},   {"A100-80GB", 81920},    {"H100-80GB", 81559},
        {"H200-141GB", 143771}, {"B200-192GB", 183359},  {"MI300X-192GB", 196592},
        {"L4-24GB", 23034},     {"RTX4090-24GB", 24564},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char csv[256];
        snprintf(csv, sizeof csv,
                 "name,model,seq,micro_batch,gpu,gpu_mem_gb\n"
                 "device,gpt-1.3b,2048,8,%s,\nown,gpt-1.3b,2048,8,%s,80\n",
                 want[i].gpu, want[i].gpu);
        struct run r;
        run_csv(&r, csv);
        assert_int_equal(r.n, 2);
        assert_int_equal(r.sc[0].gpu_mem_bytes, want[i].mib << 20);
        assert_int_equal(r.sc[1].gpu_mem_bytes, 80000000000ull);
        assert_true(r.sc[1].speed.bf16_tflops > 0); /* the preset's speeds stay */
    }
}

/* What each GPU preset says of FP8 (doc/model.md section 13.3): FP8 from Ada on, MXFP8 and one
 * copy read both ways on Blackwell, the dense FP8 rate of the cost model. */
static void gpu_presets_know_fp8(void **state)
{
    (void)state;
    static const struct {
        const char *gpu;
        double fp8_tflops;
        bool fp8, mxfp8, one_copy;
    } want[] = {
        {"A100-40GB", 0, false, false, false},   {"A100-80GB", 0, false, false, false},
        {"H100-80GB", 1979, true, false, false}, {"H200-141GB", 1979, true, false, false},
        {"B200-192GB", 4500, true, true, true},  {"MI300X-192GB", 2614.9, true, false, false},
        {"L4-24GB", 242.5, true, false, false},  {"RTX4090-24GB", 330.3, true, false, false},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char csv[256];
        snprintf(csv, sizeof csv,
                 "name,model,seq,micro_batch,gpu,fp8\nnone,llama3-8b,8192,1,%s,none\n"
                 "tensor,llama3-8b,8192,1,%s,tensor\nmxfp8,llama3-8b,8192,1,%s,mxfp8\n",
                 want[i].gpu, want[i].gpu, want[i].gpu);
        struct run r;
        run_csv(&r, csv);
        assert_int_equal(r.n, 1 + want[i].fp8 + want[i].mxfp8);
        assert_true(r.sc[0].speed.fp8_tflops == want[i].fp8_tflops);
        assert_int_equal(r.sc[0].fp8_one_copy, want[i].one_copy);
        if (want[i].fp8)
            assert_string_equal(r.sc[1].name, "tensor");
    }
}

/* The fp8 column (doc/model.md section 13.1): none by default, a word in any case; the GPU
 * preset tells whether one FP8 copy serves both GEMM orientations (Blackwell, section 3.7); a
 * row without a preset assumes two. */
static void fp8_column_parses(void **state)
{
    (void)state;
    struct run r;
    run_csv(&r, "name,model,seq,micro_batch,gpu,gpu_mem_gb,fp8\n"
                "a,llama3-8b,8192,1,H100-80GB,,\n"
                "b,llama3-8b,8192,1,H100-80GB,,Tensor\n"
                "c,llama3-8b,8192,1,B200-192GB,,tensor\n"
                "d,llama3-8b,8192,1,B200-192GB,,MXFP8\n"
                "e,llama3-8b,8192,1,,80,none\n"
                "f,llama3-8b,8192,1,,80,tensor\n");
    assert_int_equal(r.n, 6);
    assert_int_equal(r.n_messages, 0);
    static const enum fp8 fp8[] = {FP8_NONE,  FP8_TENSOR, FP8_TENSOR,
                                   FP8_MXFP8, FP8_NONE,   FP8_TENSOR};
    static const bool one_copy[] = {false, false, true, true, false, false};
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(r.sc[i].fp8, fp8[i]);
        assert_int_equal(r.sc[i].fp8_one_copy, one_copy[i]);
    }
    assert_true(r.sc[5].speed.fp8_tflops == 0); /* no preset: the cost model's 2 x bf16 */
}

/* The optimizer and fine-tuning columns (doc/model.md section 13.1): adamw, full, rank 16 on q
 * and v by default; words in any case. */
static void tuning_columns_parse(void **state)
{
    (void)state;
    struct run r;
    run_csv(&r, "name,model,seq,micro_batch,gpu_mem_gb,optimizer,finetune,lora_rank,lora_targets\n"
                "a,llama3-8b,8192,1,80,,,,\n"
                "b,llama3-8b,8192,1,80,adamw-bf16,lora,,\n"
                "c,llama3-8b,8192,1,80,SGD,qlora,64,all-linear\n"
                "d,llama3-8b,8192,1,80,adamw8bit,Full,,\n"
                "e,llama3-8b,8192,1,80,AdamW,LoRA,8,QV\n");
    assert_int_equal(r.n, 5);
    assert_int_equal(r.n_messages, 0);
    static const enum optimizer opt[] = {OPTIM_ADAMW, OPTIM_ADAMW_BF16, OPTIM_SGD, OPTIM_ADAMW8BIT,
                                         OPTIM_ADAMW};
    static const enum finetune ft[] = {FINETUNE_FULL, FINETUNE_LORA, FINETUNE_QLORA, FINETUNE_FULL,
                                       FINETUNE_LORA};
    static const uint64_t rank[] = {16, 16, 64, 16, 8};
    static const enum lora_targets tg[] = {LORA_QV, LORA_QV, LORA_ALL_LINEAR, LORA_QV, LORA_QV};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(r.sc[i].optimizer, opt[i]);
        assert_int_equal(r.sc[i].finetune, ft[i]);
        assert_int_equal(r.sc[i].lora_rank, rank[i]);
        assert_int_equal(r.sc[i].lora_targets, tg[i]);
    }
}

/* The lesson's 8 x 40 GB with ZeRO-2 (doc/model.md section 9.8): 35.6 GB, which "fits, with 11%
 * free" only on the 42.9 GB an A100 40GB really has; on 40 x 10^9 bytes the 15% reserve would
 * reject it. */
static void lesson_zero2_fits_on_the_a100_40gb_as_it_reports_itself(void **state)
{
    (void)state;
    struct run r;
    run_csv(&r, "name,model,seq,micro_batch,attention,dp,zero,gpu,gpu_mem_gb\n"
                "real,gpt-1.3b,2048,8,flash,8,2,A100-40GB,\n"
                "nominal,gpt-1.3b,2048,8,flash,8,2,A100-40GB,40\n");
    assert_int_equal(r.n, 2);
    struct terms t;
    assert_int_equal(model_peak(&r.sc[0], &t), MODEL_OK);
    assert_int_equal(t.budget_bytes, 36507222016ull); /* 42,949,672,960 x 0.85 */
    assert_true(t.fits);
    assert_true(t.peak_bytes > 35550000000ull && t.peak_bytes < 35650000000ull);
    assert_int_equal(model_peak(&r.sc[1], &t), MODEL_OK);
    assert_false(t.fits);
}

/* A preset file of one's own may give mem_gb alone (10^9 bytes per GB), or mem_mib, which wins. */
static void gpu_preset_file_mem_gb_or_mem_mib(void **state)
{
    (void)state;
    char path[] = "/tmp/memfit-gpus-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs("name,mem_gb,mem_mib\nnominal,40,\nreported,40,40960\nmib-only,,1024.5\n", f);
    fclose(f);
    struct diag d;
    diag_init(&d, NULL, NULL);
    struct config_presets *own = config_presets_load("configs/models.csv", path, &d);
    remove(path);
    assert_non_null(own);
    struct config_presets *shipped = presets;
    presets = own;
    struct run r;
    run_csv(&r,
            "name,model,seq,micro_batch,gpu\n"
            "a,gpt-1.3b,2048,8,nominal\nb,gpt-1.3b,2048,8,reported\nc,gpt-1.3b,2048,8,mib-only\n");
    presets = shipped;
    config_presets_free(own);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.sc[0].gpu_mem_bytes, 40000000000ull);
    assert_int_equal(r.sc[1].gpu_mem_bytes, 42949672960ull);
    assert_int_equal(r.sc[2].gpu_mem_bytes, 1074266112ull); /* 1024.5 x 2^20 */
}

static void every_preset_gives_its_published_parameter_count(void **state)
{
    (void)state;
    static const struct {
        const char *model;
        uint64_t params;
    } want[] = {
        {"gpt2-small", 124439808},   {"gpt2-medium", 354823168},  {"gpt2-large", 774030080},
        {"gpt2-xl", 1557611200},     {"gpt-1.3b", 1311528960},    {"llama2-7b", 6738415616},
        {"llama2-13b", 13015864320}, {"llama2-70b", 68976648192}, {"llama3-8b", 8030261248},
        {"llama3-70b", 70553706496}, {"mistral-7b", 7241732096},  {"llama3.1-70b", 70553706496},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char csv[256];
        snprintf(csv, sizeof csv, "name,model,seq,micro_batch,gpu\nx,%s,1024,1,A100-80GB\n",
                 want[i].model);
        struct run r;
        run_csv(&r, csv);
        assert_int_equal(r.n, 1);
        struct terms t;
        assert_int_equal(model_peak(&r.sc[0], &t), MODEL_OK);
        if (t.params != want[i].params)
            fail_msg("%s: %llu parameters, published %llu", want[i].model,
                     (unsigned long long)t.params, (unsigned long long)want[i].params);
    }
}

static void gpt3_preset_is_175b(void **state)
{
    (void)state;
    struct run r;
    run_csv(&r, "name,model,seq,micro_batch,gpu_mem_gb\nx,gpt3-175b,2048,1,80\n");
    assert_int_equal(r.n, 1);
    struct terms t;
    assert_int_equal(model_peak(&r.sc[0], &t), MODEL_OK);
    assert_int_equal((t.params + 500000000) / 1000000000, 175);
}

static void llama_ffn_default(void **state)
{
    (void)state;
    struct run r;
    run_csv(&r, "name,arch,layers,hidden,heads,vocab,seq,micro_batch,gpu_mem_gb\n"
                "x,llama,32,4096,32,32000,4096,1,80\n");
    assert_int_equal(r.n, 1);
    assert_int_equal(r.sc[0].ffn, 11008); /* 256 * ceil(floor(8h/3) / 256) */
    assert_false(r.sc[0].tied);
}

static void recompute_and_booleans(void **state)
{
    (void)state;
    struct run r;
    run_csv(&r, "name,model,seq,micro_batch,gpu,recompute,sp,tp,dropout\n"
                "a,gpt-1.3b,2048,8,H100-80GB,full,yes,2,no\n"
                "b,gpt-1.3b,2048,8,H100-80GB,4,TRUE,2,0\n"
                "c,gpt-1.3b,2048,8,H100-80GB,selective,0,1,1\n");
    assert_int_equal(r.n, 3);
    assert_int_equal(r.sc[0].recompute, RECOMPUTE_EVERY_K);
    assert_int_equal(r.sc[0].ckpt_every, 1);
    assert_true(r.sc[0].sp);
    assert_false(r.sc[0].dropout);
    assert_int_equal(r.sc[1].ckpt_every, 4);
    assert_int_equal(r.sc[2].recompute, RECOMPUTE_SELECTIVE);
    assert_true(r.sc[2].dropout);
    assert_int_equal(r.sc[0].recompute_layers, 0); /* default: every layer */
    run_csv(&r, "name,model,seq,micro_batch,gpu,recompute,recompute_layers\n"
                "a,gpt-1.3b,2048,8,H100-80GB,full,5\n");
    assert_int_equal(r.n, 1);
    assert_int_equal(r.sc[0].recompute_layers, 5);
    run_csv(&r, "name,model,seq,micro_batch,gpu,recompute,recompute_modules\n"
                "a,deepseek-v3,2048,1,H100-80GB,selective,MLP+layernorm moe_act\n"
                "b,gpt-1.3b,2048,8,H100-80GB,selective,\n");
    assert_int_equal(r.n, 2);
    assert_int_equal(r.sc[0].recompute_modules,
                     RECOMPUTE_MLP | RECOMPUTE_LAYERNORM | RECOMPUTE_MOE_ACT);
    assert_int_equal(r.sc[1].recompute_modules, 0);
    assert_int_equal(scenario_recompute_modules(&r.sc[1]), RECOMPUTE_CORE_ATTN);
}

static void reserve_column_wins(void **state)
{
    (void)state;
    struct run r;
    run_csv(&r, "name,model,seq,micro_batch,gpu_mem_gb,reserve\nx,gpt-1.3b,2048,8,80,0.1\n");
    assert_int_equal(r.n, 1);
    assert_true(r.sc[0].reserve == 0.1);
}

/* ---- how the step is run, and which peak decides (doc/model.md sections 10.2, 13.1) ---- */

/* The defaults of loss, grad_buffer and optimizer_impl follow precision: megatron means a fused
 * loss, a persistent gradient buffer and a fused optimizer (Megatron-LM); the others an eager
 * loss, gradients on demand and foreach AdamW (PyTorch's loop). A given cell wins, in any case. */
static void step_columns_default_by_precision(void **state)
{
    (void)state;
    struct run r;
    run_csv(&r, "name,model,seq,micro_batch,gpu_mem_gb,precision,loss,grad_buffer,optimizer_impl\n"
                "mixed,gpt-1.3b,2048,8,80,,,,\n"
                "autocast,gpt-1.3b,2048,8,80,autocast,,,\n"
                "fp32,gpt-1.3b,2048,8,80,FP32,,,\n"
                "frozen,gpt-1.3b,2048,8,80,frozen,,,\n"
                "megatron,gpt-1.3b,2048,8,80,megatron,,,\n"
                "megatron-eager,gpt-1.3b,2048,8,80,megatron,eager,on_demand,foreach\n"
                "mixed-given,gpt-1.3b,2048,8,80,mixed,Fused,PERSISTENT,single\n");
    assert_int_equal(r.n_messages, 0);
    assert_int_equal(r.n, 7);
    static const enum precision precisions[] = {PRECISION_MIXED, PRECISION_AUTOCAST, PRECISION_FP32,
                                                PRECISION_FROZEN, PRECISION_MEGATRON};
    for (size_t i = 0; i < 5; i++) {
        const struct scenario *sc = &r.sc[i];
        bool megatron = i == 4;
        assert_int_equal(sc->precision, precisions[i]);
        assert_int_equal(sc->loss, megatron ? LOSS_FUSED : LOSS_EAGER);
        assert_int_equal(sc->grad_buffer, megatron ? GRAD_PERSISTENT : GRAD_ON_DEMAND);
        assert_int_equal(sc->optimizer_impl, megatron ? OPTIMIZER_FUSED : OPTIMIZER_FOREACH);
    }
    assert_int_equal(r.sc[5].loss, LOSS_EAGER);
    assert_int_equal(r.sc[5].grad_buffer, GRAD_ON_DEMAND);
    assert_int_equal(r.sc[5].optimizer_impl, OPTIMIZER_FOREACH);
    assert_int_equal(r.sc[6].loss, LOSS_FUSED);
    assert_int_equal(r.sc[6].grad_buffer, GRAD_PERSISTENT);
    assert_int_equal(r.sc[6].optimizer_impl, OPTIMIZER_SINGLE);
    /* fp32: 4 + 4 + 8 bytes per parameter, the 16 of mixed in other places. */
    struct terms t;
    assert_int_equal(model_peak(&r.sc[2], &t), MODEL_OK);
    assert_int_equal(t.weights_bytes, 4 * 1311528960ull);
    assert_int_equal(t.grads_bytes, 4 * 1311528960ull);
    assert_int_equal(t.optimizer_bytes, 8 * 1311528960ull);
}

/* The impl column and transformers' attention names (doc/model.md 4.12): eager is plain, sdpa
 * and flash_attention_2 flash, sdpa on K and V repeated; the default is memfit's. */
static void impl_column_parses(void **state)
{
    (void)state;
    struct run r;
    run_csv(&r, "name,model,seq,micro_batch,gpu_mem_gb,impl,attention\n"
                "a,llama3.1-8b,4096,1,80,,\n"
                "b,llama3.1-8b,4096,1,80,Megatron,flash\n"
                "c,llama3.1-8b,4096,1,80,hf,eager\n"
                "d,llama3.1-8b,4096,1,80,hf,sdpa\n"
                "e,llama3.1-8b,4096,1,80,hf-peft,flash_attention_2\n"
                "f,llama3.1-8b,4096,1,80,hf,plain\n");
    assert_int_equal(r.n_messages, 0);
    assert_int_equal(r.n, 6);
    static const enum impl impls[] = {IMPL_MEMFIT, IMPL_MEGATRON, IMPL_HF,
                                      IMPL_HF,     IMPL_HF_PEFT,  IMPL_HF};
    static const enum attention attns[] = {ATTENTION_PLAIN, ATTENTION_FLASH, ATTENTION_PLAIN,
                                           ATTENTION_FLASH, ATTENTION_FLASH, ATTENTION_PLAIN};
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(r.sc[i].impl, impls[i]);
        assert_int_equal(r.sc[i].attention, attns[i]);
        assert_int_equal(r.sc[i].sdpa, i == 3);
    }
}

/* --peak reaches every scenario read: the worked example peaks at 116.1 GB under --peak lesson
 * and at 120.2 GB at the start of the backward pass under --peak step (doc/model.md 9.4, 10.2). */
static void the_peak_option_reaches_every_row(void **state)
{
    (void)state;
    static const char csv[] = "name,model,seq,micro_batch,gpu_mem_gb\n"
                              "a,gpt-1.3b,2048,8,80\n"
                              "b,gpt-1.3b,2048,8,80\n";
    struct run r;
    struct terms t;
    run_csv_peak(&r, csv, PEAK_LESSON);
    assert_int_equal(r.n, 2);
    for (size_t i = 0; i < r.n; i++) {
        assert_int_equal(r.sc[i].peak, PEAK_LESSON);
        assert_int_equal(model_peak(&r.sc[i], &t), MODEL_OK);
        assert_int_equal(t.peak_bytes, 116083032064ull);
    }
    run_csv_peak(&r, csv, PEAK_STEP);
    assert_int_equal(r.n, 2);
    for (size_t i = 0; i < r.n; i++) {
        assert_int_equal(r.sc[i].peak, PEAK_STEP);
        assert_int_equal(model_peak(&r.sc[i], &t), MODEL_OK);
        assert_true(t.peak_bytes > 120150000000ull && t.peak_bytes < 120250000000ull);
        assert_int_equal(t.peak_phase, STEP_BACKWARD_START);
    }
}

/* ---- the columns of modern architectures (doc/model.md section 13.1) ---- */

#define LLAMA "name,arch,layers,hidden,heads,vocab,seq,micro_batch,gpu_mem_gb"
#define LLAMA_ROW "llama,4,256,4,1000,64,1,80"

static void modern_columns_default_when_empty(void **state)
{
    (void)state;
    struct run r;
    run_csv(&r, LLAMA ",head_dim,experts,kv_lora_rank,ep,etp,capacity_factor\n"
                      "g,gpt,24,2048,16,50257,2048,8,80,,,,,,\n"
                      "l," LLAMA_ROW ",,,,,,\n");
    assert_int_equal(r.n_messages, 0);
    assert_int_equal(r.n, 2);
    for (size_t i = 0; i < 2; i++) {
        const struct scenario *sc = &r.sc[i];
        assert_int_equal(sc->qkv_bias, sc->arch == ARCH_GPT); /* gpt yes, llama no */
        assert_int_equal(sc->head_dim, 0);                    /* h / heads */
        assert_false(sc->qk_norm);
        assert_int_equal(sc->layer_norms, 2);
        assert_int_equal(sc->experts, 0);
        assert_int_equal(sc->top_k, 0);
        assert_int_equal(sc->expert_ffn, 0);
        assert_int_equal(sc->shared_ffn, 0);
        assert_false(sc->shared_gate);
        assert_false(sc->router_bias);
        assert_int_equal(sc->dense_layers, 0);
        assert_true(sc->capacity_factor == 0); /* dropless */
        assert_int_equal(sc->q_lora_rank, 0);
        assert_int_equal(sc->kv_lora_rank, 0);
        assert_int_equal(sc->qk_nope_dim, 0);
        assert_int_equal(sc->qk_rope_dim, 0);
        assert_int_equal(sc->v_head_dim, 0);
        assert_int_equal(sc->ep, 1);
        assert_int_equal(sc->etp, 0); /* = tp */
    }
    assert_int_equal(r.sc[0].arch, ARCH_GPT);
}

static void modern_columns_parse(void **state)
{
    (void)state;
    struct run r;
    /* Head width, biases and norms; then experts with latent attention, every column given. */
    run_csv(&r, LLAMA ",head_dim,qkv_bias,qk_norm,layer_norms\n"
                      "a,llama,4,256,3,1000,64,1,80,96,yes,1,4\n");
    assert_int_equal(r.n_messages, 0);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.sc[0].head_dim, 96); /* heads need not divide hidden */
    assert_true(r.sc[0].qkv_bias);
    assert_true(r.sc[0].qk_norm);
    assert_int_equal(r.sc[0].layer_norms, 4);
    run_csv(&r, LLAMA ",experts,top_k,expert_ffn,shared_ffn,shared_gate,router_bias,dense_layers,"
                      "capacity_factor,q_lora_rank,kv_lora_rank,qk_nope_dim,qk_rope_dim,"
                      "v_head_dim,dp,tp,ep,etp\n"
                      "m,llama,4,256,4,1000,64,1,80,16,4,128,256,yes,true,1,1.25,96,64,32,16,48,"
                      "4,2,8,1\n");
    assert_int_equal(r.n_messages, 0);
    assert_int_equal(r.n, 1);
    const struct scenario *sc = &r.sc[0];
    assert_int_equal(sc->experts, 16);
    assert_int_equal(sc->top_k, 4);
    assert_int_equal(sc->expert_ffn, 128);
    assert_int_equal(sc->shared_ffn, 256);
    assert_true(sc->shared_gate);
    assert_true(sc->router_bias);
    assert_int_equal(sc->dense_layers, 1);
    assert_true(sc->capacity_factor == 1.25);
    assert_int_equal(sc->q_lora_rank, 96);
    assert_int_equal(sc->kv_lora_rank, 64);
    assert_int_equal(sc->qk_nope_dim, 32);
    assert_int_equal(sc->qk_rope_dim, 16);
    assert_int_equal(sc->v_head_dim, 48);
    assert_int_equal(sc->ep, 8);
    assert_int_equal(sc->etp, 1);
}

/* The presets of modern models load with the values of their configs (configs/models.csv);
 * their parameter counts are tested in test_model.c. */
static void modern_presets_load_with_their_values(void **state)
{
    (void)state;
    static const struct {
        const char *model;
        struct scenario want; /* the members compared below */
    } P[] = {
        {"llama3.1-8b",
         {.layers = 32,
          .hidden = 4096,
          .heads = 32,
          .kv_heads = 8,
          .vocab = 128256,
          .ffn = 14336,
          .layer_norms = 2}},
        {"llama3.1-405b",
         {.layers = 126,
          .hidden = 16384,
          .heads = 128,
          .kv_heads = 8,
          .vocab = 128256,
          .ffn = 53248,
          .layer_norms = 2}},
        {"qwen2.5-7b",
         {.layers = 28,
          .hidden = 3584,
          .heads = 28,
          .kv_heads = 4,
          .vocab = 152064,
          .ffn = 18944,
          .qkv_bias = QKV_BIAS_QKV,
          .layer_norms = 2}},
        {"gemma2-9b",
         {.layers = 42,
          .hidden = 3584,
          .heads = 16,
          .kv_heads = 8,
          .vocab = 256000,
          .ffn = 14336,
          .tied = true,
          .head_dim = 256,
          .layer_norms = 4}},
        {"mixtral-8x7b",
         {.layers = 32,
          .hidden = 4096,
          .heads = 32,
          .kv_heads = 8,
          .vocab = 32000,
          .ffn = 14336,
          .layer_norms = 2,
          .experts = 8,
          .top_k = 2,
          .expert_ffn = 14336}},
        {"qwen3-30b-a3b",
         {.layers = 48,
          .hidden = 2048,
          .heads = 32,
          .kv_heads = 4,
          .vocab = 151936,
          .ffn = 6144,
          .head_dim = 128,
          .qk_norm = QK_NORM_HEAD,
          .layer_norms = 2,
          .experts = 128,
          .top_k = 8,
          .expert_ffn = 768}},
        {"qwen2-57b-a14b",
         {.layers = 28,
          .hidden = 3584,
          .heads = 28,
          .kv_heads = 4,
          .vocab = 151936,
          .ffn = 18944,
          .qkv_bias = QKV_BIAS_QKV,
          .layer_norms = 2,
          .experts = 64,
          .top_k = 8,
          .expert_ffn = 2560,
          .shared_ffn = 20480,
          .shared_gate = true}},
        {"deepseek-v3",
         {.layers = 61,
          .hidden = 7168,
          .heads = 128,
          .kv_heads = 128,
          .vocab = 129280,
          .ffn = 18432,
          .layer_norms = 2,
          .experts = 256,
          .top_k = 8,
          .expert_ffn = 2048,
          .shared_ffn = 2048,
          .router_bias = ROUTER_BIAS_SCORE,
          .dense_layers = 3,
          .q_lora_rank = 1536,
          .kv_lora_rank = 512,
          .qk_nope_dim = 128,
          .qk_rope_dim = 64,
          .v_head_dim = 128}},
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof P / sizeof P[0]; i++) {
        char csv[256];
        snprintf(csv, sizeof csv, "name,model,seq,micro_batch,gpu\nx,%s,4096,1,H100-80GB\n",
                 P[i].model);
        struct run r;
        run_csv(&r, csv);
        if (r.n != 1) {
            print_error("%s: not read:\n%s", P[i].model, r.messages);
            failed++;
            continue;
        }
        const struct scenario *sc = &r.sc[0], *w = &P[i].want;
#define SAME(m)                                                                                    \
    do {                                                                                           \
        if (sc->m != w->m) {                                                                       \
            print_error("%s: " #m " is %llu, expected %llu\n", P[i].model,                         \
                        (unsigned long long)sc->m, (unsigned long long)w->m);                      \
            failed++;                                                                              \
        }                                                                                          \
    } while (0)
        if (sc->arch != ARCH_LLAMA) {
            print_error("%s: not arch=llama\n", P[i].model);
            failed++;
        }
        SAME(layers);
        SAME(hidden);
        SAME(heads);
        SAME(kv_heads);
        SAME(vocab);
        SAME(ffn);
        SAME(tied);
        SAME(positions);
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
        SAME(q_lora_rank);
        SAME(kv_lora_rank);
        SAME(qk_nope_dim);
        SAME(qk_rope_dim);
        SAME(v_head_dim);
#undef SAME
    }
    assert_int_equal(failed, 0);
}

/* ---- one row per bad-input class (doc/model.md section 13.2) ---- */

/*
 * Each row: the file in.csv; the names of the scenarios still read, in order (the bad rows are
 * skipped, the others go through); and every message, in order, each ending in a newline.
 */
struct bad_input {
    const char *csv;
    const char *read;
    const char *messages;
};

#define NAME65 "00000000000000000000000000000000000000000000000000000000000000007"

static const struct bad_input BAD[] = {
    /* the implementation profile (doc/model.md 4.12): an unknown one; transformers' attention
     * names outside hf and hf-peft; hf with a GPT layer */
    {"name,model,seq,micro_batch,gpu_mem_gb,impl,attention\n"
     "a,llama3.1-8b,4096,1,80,tf,\n"
     "b,llama3.1-8b,4096,1,80,megatron,sdpa\n"
     "c,gpt-1.3b,2048,8,80,hf,eager\n"
     "d,llama3.1-8b,4096,1,80,hf-peft,flash_attention_2\n",
     "d",
     "in.csv:2: column 'impl': 'tf' is not one of memfit, megatron, hf, hf-peft\n"
     "in.csv:3: column 'attention': 'sdpa' is transformers' attn_implementation: it needs "
     "impl=hf or hf-peft (else plain or flash)\n"
     "in.csv:4: column 'impl': 'hf' follows transformers' Llama-family layer (modeling_llama.py): "
     "not possible with arch=gpt\n"},

    /* a value or a whole column missing */
    {HEADER "a,24,2048,16,50257,,8,80\n"
            "b,24,2048,16,50257,2048,8,80\n",
     "b", "in.csv:2: column 'seq': a value is required\n"},
    {"name,layers,hidden,heads,vocab,seq,gpu_mem_gb\n"
     "a,24,2048,16,50257,2048,80\n",
     "", "in.csv:2: column 'micro_batch': a value is required\n"},

    /* numbers: not a number, fractional, negative, zero, outside [0, 1), beyond 64 bits */
    {HEADER "a,24,2048,abc,50257,2048,8,80\n"
            "b,24,2048,16,50257,2048,8,8O\n"
            "c,24,2048,16,50257,2048,8,80\n",
     "c",
     "in.csv:2: column 'heads': 'abc' is not a positive integer\n"
     "in.csv:3: column 'gpu_mem_gb': '8O' is not a number\n"},
    {HEADER "a,24,2048,16,50257,2048,2.5,80\n", "",
     "in.csv:2: column 'micro_batch': '2.5' is not an integer: expected a positive integer\n"},
    {HEADER "a,-24,2048,16,50257,2048,8,80\n"
            "b,24,2048,16,50257,2048,8,-80\n",
     "",
     "in.csv:2: column 'layers': '-24' is negative: expected a positive integer\n"
     "in.csv:3: column 'gpu_mem_gb': '-80' must be a positive number of GB\n"},
    {HEADER "a,24,2048,16,50257,2048,0,80\n", "",
     "in.csv:2: column 'micro_batch': '0' is zero: expected a positive integer\n"},
    {"name,model,seq,micro_batch,gpu_mem_gb,reserve\n"
     "a,gpt-1.3b,2048,8,80,1\n"
     "b,gpt-1.3b,2048,8,80,-0.1\n"
     "c,gpt-1.3b,2048,8,80,0.99\n",
     "c",
     "in.csv:2: column 'reserve': '1' is outside [0, 1)\n"
     "in.csv:3: column 'reserve': '-0.1' is outside [0, 1)\n"},
    {HEADER "a,24,2048,16,50257,4000000000000,8,80\n"
            "b,24,2048,16,50257,99999999999999999999999,8,80\n"
            "c,24,2048,16,50257,2048,8,80\n",
     "c",
     "in.csv:2: column 'seq': '4000000000000' is so large that a byte count would overflow 64 "
     "bits\n"
     "in.csv:3: column 'seq': '99999999999999999999999' is too large (more than 64 bits)\n"},
    /* counts that fit for the row as given but not for what eval and the report do with it: the
     * ladder's full checkpointing keeps the 5as^2b that selective recomputation drops (this row
     * was accepted, then eval said "a byte count overflows" naming no column, and report wrote
     * nothing) */
    {"name,layers,hidden,heads,vocab,seq,micro_batch,recompute,gpu_mem_gb\n"
     "big,24,16,16,32000,600000000,2,selective,80\n"
     "ok,24,16,16,32000,60000000,2,selective,80\n",
     "ok",
     "in.csv:2: column 'seq': '600000000' is so large that a byte count would overflow 64 bits\n"},

    /* control characters are shown escaped in messages, never sent to the terminal */
    {"name,model,seq,micro_batch,gpu_mem_gb,\x1b]0;owned\x07\n"
     "a,gpt-1.3b,2048,8,80,1\n",
     "", "in.csv:1: unknown column '\\x1b]0;owned\\x07'; the file's rows are skipped\n"},
    {HEADER "a,24,2048,16,50257,\x1b[2J,8,80\n"
            "\"b\x1b[2J\",24,2048,16,50257,2048,8,80\n"
            "\"b\x1b[2J\",24,2048,16,50257,2048,8,80\n",
     "b\x1b[2J",
     "in.csv:2: column 'seq': '\\x1b[2J' is not a positive integer\n"
     "in.csv:4: column 'name': 'b\\x1b[2J' is a duplicate (first seen on line 3)\n"},

    /* names that share a 64-bit hash are different names (the second was a "duplicate") */
    {HEADER "0hiooWgvkFK,24,2048,16,50257,2048,8,80\n"
            "8mpSuEbHH.A,24,2048,16,50257,2048,8,80\n"
            "8mpSuEbHH.A,24,2048,16,50257,2048,8,80\n",
     "0hiooWgvkFK,8mpSuEbHH.A",
     "in.csv:4: column 'name': '8mpSuEbHH.A' is a duplicate (first seen on line 3)\n"},

    /* sizes that must divide one another */
    {"name,model,seq,micro_batch,gpu_mem_gb,tp,pp,kv_heads,global_batch,dp\n"
     "tp,gpt-1.3b,2048,8,80,3,1,,,1\n"
     "pp,gpt-1.3b,2048,8,80,1,25,,,1\n"
     "kv,gpt-1.3b,2048,8,80,1,1,5,,1\n"
     "gb,gpt-1.3b,2048,8,80,1,1,,100,2\n"
     "ok,gpt-1.3b,2048,8,80,2,4,8,64,2\n",
     "ok",
     "in.csv:2: column 'tp': '3' does not divide heads (16) and kv_heads (16)\n"
     "in.csv:3: column 'pp': '25' is more than layers (24)\n"
     "in.csv:4: column 'kv_heads': '5' does not divide heads (16)\n"
     "in.csv:5: column 'global_batch': '100' is not a multiple of micro_batch * dp (16)\n"},
    {HEADER "a,24,2048,24,50257,2048,8,80\n", "",
     "in.csv:2: column 'heads': '24' does not divide hidden (2048)\n"},

    /* words: presets, choices, booleans */
    {"name,model,gpu,seq,micro_batch\n"
     "a,llama2-7c,H100-80GB,4096,1\n"
     "b,llama2-7b,H100-80G,4096,1\n"
     "c,gpt5,H100-80GB,4096,1\n",
     "",
     "in.csv:2: column 'model': unknown model preset 'llama2-7c' (did you mean 'llama2-7b'?)\n"
     "in.csv:3: column 'gpu': unknown GPU preset 'H100-80G' (did you mean 'H100-80GB'?)\n"
     "in.csv:4: column 'model': unknown model preset 'gpt5'\n"},
    {"name,model,seq,micro_batch,gpu_mem_gb,attention,precision,tied,recompute,zero,offload\n"
     "a,gpt-1.3b,2048,8,80,fast,,,,,\n"
     "b,gpt-1.3b,2048,8,80,,fp8,,,,\n"
     "c,gpt-1.3b,2048,8,80,,,maybe,,,\n"
     "d,gpt-1.3b,2048,8,80,,,,some,,\n"
     "e,gpt-1.3b,2048,8,80,,,,,4,\n"
     "f,gpt-1.3b,2048,8,80,,,,,,gpu\n"
     "g,gpt-1.3b,2048,8,80,,,,30,,\n",
     "",
     "in.csv:2: column 'attention': 'fast' is not one of plain, flash\n"
     "in.csv:3: column 'precision': 'fp8' is not one of mixed, autocast, megatron, frozen, "
     "fp32\n"
     "in.csv:4: column 'tied': 'maybe' is not a boolean (0/1/yes/no/true/false)\n"
     "in.csv:5: column 'recompute': 'some' is not none, selective, full or a positive integer k\n"
     "in.csv:6: column 'zero': '4' is not a ZeRO stage 0-3\n"
     "in.csv:7: column 'offload': 'gpu' is not one of none, optimizer, checkpoints\n"
     "in.csv:8: column 'recompute': checkpointing every 30 layers is more than layers (24)\n"},
    /* how the step is run (doc/model.md section 10.2): a word not in the column's list */
    {"name,model,seq,micro_batch,gpu_mem_gb,loss,grad_buffer,optimizer_impl\n"
     "a,gpt-1.3b,2048,8,80,foo,,\n"
     "b,gpt-1.3b,2048,8,80,,always,\n"
     "c,gpt-1.3b,2048,8,80,,,apex\n"
     "d,gpt-1.3b,2048,8,80,fused,persistent,single\n",
     "d",
     "in.csv:2: column 'loss': 'foo' is not one of eager, fused\n"
     "in.csv:3: column 'grad_buffer': 'always' is not one of on_demand, persistent\n"
     "in.csv:4: column 'optimizer_impl': 'apex' is not one of foreach, fused, single\n"},
    /* FP8 training (doc/model.md section 13.2): a word not in the list; a GPU preset without FP8
     * or without MXFP8, named; a frozen base. No GPU preset is not checked; Blackwell runs MXFP8;
     * an A100 without FP8 is fine. */
    {"name,model,seq,micro_batch,gpu,gpu_mem_gb,fp8,precision\n"
     "a,llama3-8b,8192,1,H100-80GB,,fp4,\n"
     "b,llama3-8b,8192,1,A100-80GB,,tensor,\n"
     "c,llama3-8b,8192,1,H100-80GB,,mxfp8,\n"
     "d,llama3-8b,8192,1,H100-80GB,,tensor,frozen\n"
     "e,llama3-8b,8192,1,,80,mxfp8,\n"
     "f,llama3-8b,8192,1,B200-192GB,,mxfp8,megatron\n"
     "g,llama3-8b,8192,1,A100-40GB,,none,\n",
     "e,f,g",
     "in.csv:2: column 'fp8': 'fp4' is not one of none, tensor, mxfp8\n"
     "in.csv:3: column 'fp8': 'tensor' needs FP8 tensor cores (Ada, Hopper or Blackwell): GPU "
     "'A100-80GB' has none\n"
     "in.csv:4: column 'fp8': 'mxfp8' needs a Blackwell GPU: GPU 'H100-80GB' has no MXFP8\n"
     "in.csv:5: column 'fp8': 'tensor' is not modelled with a frozen base (finetune lora or "
     "qlora, precision frozen)\n"},
    /* Optimizers and fine-tuning (doc/model.md section 13.2): a word not in the list; words in
     * any case. */
    {"name,model,seq,micro_batch,gpu_mem_gb,optimizer,finetune,lora_targets\n"
     "a,llama3-8b,8192,1,80,adam,,\n"
     "b,llama3-8b,8192,1,80,,dora,\n"
     "c,llama3-8b,8192,1,80,,lora,all\n"
     "d,llama3-8b,8192,1,80,ADAMW8BIT,QLoRA,All-Linear\n",
     "d",
     "in.csv:2: column 'optimizer': 'adam' is not one of adamw, adamw-bf16, adamw8bit, sgd\n"
     "in.csv:3: column 'finetune': 'dora' is not one of full, lora, qlora\n"
     "in.csv:4: column 'lora_targets': 'all' is not one of qv, all-linear\n"},
    /* The adapters' rank: positive; an adapter column without adapters (finetune full, given or
     * by default); a rank so large that the adapters' states overflow. */
    {"name,model,seq,micro_batch,gpu_mem_gb,finetune,lora_rank,lora_targets\n"
     "a,llama3-8b,8192,1,80,lora,0,\n"
     "b,llama3-8b,8192,1,80,qlora,x,\n"
     "c,llama3-8b,8192,1,80,,16,\n"
     "d,llama3-8b,8192,1,80,full,,qv\n"
     "e,llama3-8b,8192,1,80,lora,99999999999999,\n"
     "f,llama3-8b,8192,1,80,lora,64,\n",
     "f",
     "in.csv:2: column 'lora_rank': '0' is zero: expected a positive integer\n"
     "in.csv:3: column 'lora_rank': 'x' is not a positive integer\n"
     "in.csv:4: column 'lora_rank': '16' needs finetune=lora or qlora (an adapter column)\n"
     "in.csv:5: column 'lora_targets': 'qv' needs finetune=lora or qlora (an adapter column)\n"
     "in.csv:6: column 'lora_rank': '99999999999999' is so large that a byte count would "
     "overflow 64 bits\n"},
    /* Contradictions: adapters on precision=frozen (a base without adapters); QLoRA in fp32;
     * q and v adapters on latent attention (given or by default). QLoRA under autocast, LoRA in
     * fp32 and all-linear adapters on latent attention are fine. */
    {"name,model,seq,micro_batch,gpu_mem_gb,precision,finetune,lora_targets\n"
     "a,llama3-8b,8192,1,80,frozen,lora,\n"
     "b,llama3-8b,8192,1,80,fp32,qlora,\n"
     "c,deepseek-v3,4096,1,80,,lora,\n"
     "d,deepseek-v3,4096,1,80,,qlora,qv\n"
     "e,deepseek-v3,4096,1,80,,qlora,all-linear\n"
     "f,llama3-8b,8192,1,80,autocast,qlora,\n"
     "g,llama3-8b,8192,1,80,fp32,lora,\n",
     "e,f,g",
     "in.csv:2: column 'finetune': 'lora' is not possible with precision=frozen, a frozen base "
     "without adapters: finetune freezes the base, and precision says how the adapters train\n"
     "in.csv:3: column 'finetune': 'qlora' needs a bf16 compute precision (mixed, autocast or "
     "megatron), not precision=fp32\n"
     "in.csv:4: column 'lora_targets': 'qv' is not possible with multi-head latent attention "
     "(kv_lora_rank), which has no v projection (V comes out of the kv up-projection with K): "
     "use all-linear\n"
     "in.csv:5: column 'lora_targets': 'qv' is not possible with multi-head latent attention "
     "(kv_lora_rank), which has no v projection (V comes out of the kv up-projection with K): "
     "use all-linear\n"},
    {"name,model,seq,micro_batch,gpu_mem_gb,dropout\n"
     "a,llama2-7b,4096,1,80,yes\n",
     "", "in.csv:2: column 'dropout': 'yes' is not possible with arch=llama (no dropout)\n"},

    /* modern architectures (doc/model.md section 13.2): head width, biases, norms */
    {LLAMA ",head_dim\n"
           "a,llama,4,256,3,1000,64,1,80,\n"
           "b,llama,4,256,3,1000,64,1,80,64\n",
     "b", "in.csv:2: column 'heads': '3' does not divide hidden (256)\n"},
    {"name,model,seq,micro_batch,gpu_mem_gb,qkv_bias\n"
     "a,gpt-1.3b,2048,8,80,no\n"
     "b,gpt-1.3b,2048,8,80,yes\n"
     "c,llama2-7b,4096,1,80,yes\n",
     "b,c",
     "in.csv:2: column 'qkv_bias': 'no' is not possible with arch=gpt (a gpt layer has biases on "
     "every linear)\n"},
    {LLAMA ",head_dim,layer_norms,qk_norm\n"
           "a," LLAMA_ROW ",0,,\n"
           "b," LLAMA_ROW ",,0,\n"
           "c," LLAMA_ROW ",,,maybe\n",
     "",
     "in.csv:2: column 'head_dim': '0' is zero: expected a positive integer\n"
     "in.csv:3: column 'layer_norms': '0' is zero: expected a positive integer\n"
     "in.csv:4: column 'qk_norm': 'maybe' is not a boolean (0/1/yes/no/true/false) or width\n"},

    /* experts: llama-style only; their columns need them; top_k and expert_ffn required */
    {"name,model,arch,seq,micro_batch,gpu_mem_gb,experts,top_k,expert_ffn\n"
     "a,gpt-1.3b,,2048,8,80,8,2,1024\n"
     "b,mixtral-8x7b,gpt,4096,1,80,,,\n"
     "c,gpt-1.3b,,2048,8,80,0,,\n",
     "c",
     "in.csv:2: column 'experts': '8' is not possible with arch=gpt (MoE layers are modelled as "
     "gated llama-style experts: use arch=llama)\n"
     "in.csv:3: column 'experts': '8' is not possible with arch=gpt (MoE layers are modelled as "
     "gated llama-style experts: use arch=llama) (from preset 'mixtral-8x7b')\n"},
    {"name,model,seq,micro_batch,gpu_mem_gb,experts,top_k,expert_ffn,shared_ffn,shared_gate,"
     "router_bias,dense_layers,capacity_factor,ep,etp\n"
     "k,gpt-1.3b,2048,8,80,,2,,,,,,,,\n"
     "f,gpt-1.3b,2048,8,80,,,1024,,,,,,,\n"
     "s,gpt-1.3b,2048,8,80,,,,0,,,,,,\n"
     "g,gpt-1.3b,2048,8,80,,,,,no,,,,,\n"
     "r,gpt-1.3b,2048,8,80,,,,,,yes,,,,\n"
     "d,gpt-1.3b,2048,8,80,,,,,,,1,,,\n"
     "c,gpt-1.3b,2048,8,80,,,,,,,,1.25,,\n"
     "e,gpt-1.3b,2048,8,80,,,,,,,,,2,\n"
     "t,gpt-1.3b,2048,8,80,,,,,,,,,,1\n"
     "m,mixtral-8x7b,4096,1,80,0,,,,,,,,,\n"
     "ok,gpt-1.3b,2048,8,80,0,,,,,,,,1,\n",
     "ok",
     "in.csv:2: column 'top_k': '2' needs experts > 0 (a mixture-of-experts column)\n"
     "in.csv:3: column 'expert_ffn': '1024' needs experts > 0 (a mixture-of-experts column)\n"
     "in.csv:4: column 'shared_ffn': '0' needs experts > 0 (a mixture-of-experts column)\n"
     "in.csv:5: column 'shared_gate': 'no' needs experts > 0 (a mixture-of-experts column)\n"
     "in.csv:6: column 'router_bias': 'yes' needs experts > 0 (a mixture-of-experts column)\n"
     "in.csv:7: column 'dense_layers': '1' needs experts > 0 (a mixture-of-experts column)\n"
     "in.csv:8: column 'capacity_factor': '1.25' needs experts > 0 (a mixture-of-experts "
     "column)\n"
     "in.csv:9: column 'ep': '2' needs experts > 0 (a mixture-of-experts column)\n"
     "in.csv:10: column 'etp': '1' needs experts > 0 (a mixture-of-experts column)\n"
     "in.csv:11: column 'top_k': '2' needs experts > 0 (a mixture-of-experts column) (from "
     "preset 'mixtral-8x7b')\n"},
    {LLAMA ",experts,top_k,expert_ffn,dense_layers\n"
           "k," LLAMA_ROW ",8,,512,\n"
           "f," LLAMA_ROW ",8,2,,\n"
           "z," LLAMA_ROW ",8,0,512,\n"
           "n," LLAMA_ROW ",-8,2,512,\n"
           "t," LLAMA_ROW ",8,9,512,\n"
           "d," LLAMA_ROW ",8,2,512,5\n"
           "ok," LLAMA_ROW ",8,8,512,4\n",
     "ok",
     "in.csv:2: column 'top_k': a value is required with experts\n"
     "in.csv:3: column 'expert_ffn': a value is required with experts\n"
     "in.csv:4: column 'top_k': '0' is zero: expected a positive integer\n"
     "in.csv:5: column 'experts': '-8' is negative: expected a non-negative integer\n"
     "in.csv:6: column 'top_k': '9' is more than experts (8)\n"
     "in.csv:7: column 'dense_layers': '5' is more than layers (4)\n"},
    {LLAMA ",experts,top_k,expert_ffn,capacity_factor\n"
           "a," LLAMA_ROW ",8,2,512,0\n"
           "b," LLAMA_ROW ",8,2,512,-1\n"
           "c," LLAMA_ROW ",8,2,512,lots\n"
           "ok," LLAMA_ROW ",8,2,512,0.5\n",
     "ok",
     "in.csv:2: column 'capacity_factor': '0' must be a positive number (empty: dropless)\n"
     "in.csv:3: column 'capacity_factor': '-1' must be a positive number (empty: dropless)\n"
     "in.csv:4: column 'capacity_factor': 'lots' is not a number\n"},

    /* expert parallelism: ep divides experts; the expert groups (ep * etp) tile dp * cp * tp,
     * context parallelism folded in (cf: dp 1, tp 1, cp 2, ep 2) */
    {LLAMA ",experts,top_k,expert_ffn,dp,tp,ep,etp,cp\n"
           "e," LLAMA_ROW ",8,2,512,3,1,3,,\n"
           "g," LLAMA_ROW ",8,2,512,2,2,8,,\n"
           "t," LLAMA_ROW ",8,2,512,1,2,,4,\n"
           "z," LLAMA_ROW ",8,2,512,1,1,0,,\n"
           "o," LLAMA_ROW ",8,2,512,9223372036854775808,2,,,\n"
           "c," LLAMA_ROW ",8,2,512,1,1,4,,2\n"
           "ok," LLAMA_ROW ",8,2,512,2,2,4,1,\n"
           "ok2," LLAMA_ROW ",8,2,512,4,2,4,,\n"
           "cf," LLAMA_ROW ",8,2,512,1,1,2,,2\n"
           "cf2," LLAMA_ROW ",8,2,512,1,2,8,1,4\n",
     "ok,ok2,cf,cf2",
     "in.csv:2: column 'ep': '3' does not divide experts (8)\n"
     "in.csv:3: column 'ep': '8' times etp (2) does not divide dp * cp * tp (4), the GPUs of a "
     "pipeline stage\n"
     "in.csv:4: column 'etp': '4' times ep (1) does not divide dp * cp * tp (2), the GPUs of a "
     "pipeline stage\n"
     "in.csv:5: column 'ep': '0' is zero: expected a positive integer\n"
     "in.csv:6: column 'dp': '9223372036854775808' times tp and cp is too large\n"
     "in.csv:7: column 'ep': '4' times etp (1) does not divide dp * cp * tp (2), the GPUs of a "
     "pipeline stage\n"},

    /* node-limited routing: a positive count of nodes, only with experts */
    {LLAMA ",experts,top_k,expert_ffn,moe_max_nodes\n"
           "z," LLAMA_ROW ",8,2,512,0\n"
           "n," LLAMA_ROW ",8,2,512,-4\n"
           "w," LLAMA_ROW ",8,2,512,four\n"
           "d," LLAMA_ROW ",0,,,4\n"
           "ok," LLAMA_ROW ",8,2,512,4\n"
           "ok2," LLAMA_ROW ",8,2,512,\n",
     "ok,ok2",
     "in.csv:2: column 'moe_max_nodes': '0' is zero: expected a positive integer\n"
     "in.csv:3: column 'moe_max_nodes': '-4' is negative: expected a positive integer\n"
     "in.csv:4: column 'moe_max_nodes': 'four' is not a positive integer\n"
     "in.csv:5: column 'moe_max_nodes': '4' needs experts > 0 (a mixture-of-experts column)\n"},

    /* multi-head latent attention: all its widths or none, its own heads */
    {LLAMA ",q_lora_rank,kv_lora_rank,qk_nope_dim,qk_rope_dim,v_head_dim\n"
           "q," LLAMA_ROW ",64,,,,\n"
           "n," LLAMA_ROW ",,,32,,\n"
           "r," LLAMA_ROW ",,,,16,\n"
           "v," LLAMA_ROW ",,0,,,32\n"
           "k1," LLAMA_ROW ",,64,,16,32\n"
           "k2," LLAMA_ROW ",,64,32,,32\n"
           "k3," LLAMA_ROW ",,64,32,16,\n"
           "ok," LLAMA_ROW ",,64,32,16,32\n"
           "ok2,llama,4,256,3,1000,64,1,80,96,64,32,16,32\n",
     "ok,ok2",
     "in.csv:2: column 'q_lora_rank': '64' needs kv_lora_rank > 0 (a multi-head latent attention "
     "column)\n"
     "in.csv:3: column 'qk_nope_dim': '32' needs kv_lora_rank > 0 (a multi-head latent attention "
     "column)\n"
     "in.csv:4: column 'qk_rope_dim': '16' needs kv_lora_rank > 0 (a multi-head latent attention "
     "column)\n"
     "in.csv:5: column 'v_head_dim': '32' needs kv_lora_rank > 0 (a multi-head latent attention "
     "column)\n"
     "in.csv:6: column 'qk_nope_dim': a value is required with kv_lora_rank (multi-head latent "
     "attention)\n"
     "in.csv:7: column 'qk_rope_dim': a value is required with kv_lora_rank (multi-head latent "
     "attention)\n"
     "in.csv:8: column 'v_head_dim': a value is required with kv_lora_rank (multi-head latent "
     "attention)\n"},
    {"name,model,seq,micro_batch,gpu_mem_gb,kv_heads,head_dim\n"
     "k,deepseek-v3,4096,1,80,8,\n"
     "h,deepseek-v3,4096,1,80,,128\n",
     "",
     "in.csv:2: column 'kv_heads': '8' is not possible with multi-head latent attention "
     "(kv_lora_rank): kv_heads must equal heads (128)\n"
     "in.csv:3: column 'head_dim': '128' is not possible with multi-head latent attention "
     "(kv_lora_rank), whose widths are qk_nope_dim, qk_rope_dim and v_head_dim\n"},

    /* an overflow blames the largest size, a new one too */
    {HEADER_NO_NL ",head_dim\n"
                  "a,24,2048,16,50257,4000000000000,8,80,9000000000000\n",
     "",
     "in.csv:2: column 'head_dim': '9000000000000' is so large that a byte count would overflow "
     "64 bits\n"},

    /* the header: an unknown column rejects the whole file, with one message */
    {"name,layers,hidden,heads,vocab,seq,micro_bacth,gpu_mem_gb\n"
     "a,24,2048,16,50257,2048,8,80\n"
     "b,24,2048,16,50257,2048,8,80\n",
     "",
     "in.csv:1: unknown column 'micro_bacth' (did you mean 'micro_batch'?); the file's rows are "
     "skipped\n"},
    {"name,seq,seq\n"
     "a,1,2\n",
     "", "in.csv:1: column 'seq' appears twice in the header; the file's rows are skipped\n"},
    {"layers,seq\n"
     "1,2\n",
     "", "in.csv:1: the header has no 'name' column; the file's rows are skipped\n"},
    {"", "", "in.csv: empty file: a header row is required\n"},

    /* records */
    {HEADER "a,24,2048,16,50257,2048,8,80\n"
            "b,24,2048,16,50257,2048,8,80\n"
            "a,24,2048,16,50257,2048,4,80\n",
     "a,b", "in.csv:4: column 'name': 'a' is a duplicate (first seen on line 2)\n"},
    {HEADER "a,24,2048,16,50257,2048,8,80\n"
            "b\"x,24,2048,16,50257,2048,8,80\n"
            "c,24,2048,16,50257,2048,8\n"
            "d,24,2048,16,50257,2048,8,80\n",
     "a,d",
     "in.csv:3: malformed CSV record (stray or unbalanced quote)\n"
     "in.csv:4: malformed CSV record: 7 fields where the header has 8\n"},
    {HEADER "a,24,2048,16,50257,2048,8,80\n"
            "\"b,24,2048,16,50257,2048,8,80\n",
     "a", "in.csv:3: malformed CSV record: a quoted field is not closed\n"},

    /* layers memfit does not model: gpt with q/k norms, other norm counts or latent attention;
     * latent attention with q/k norms or biases; expert and tensor parallel groups that do not
     * nest */
    {"name,arch,layers,hidden,heads,vocab,seq,micro_batch,gpu_mem_gb,layer_norms,qk_norm,"
     "kv_lora_rank,qk_nope_dim,qk_rope_dim,v_head_dim,qkv_bias,experts,top_k,expert_ffn,etp,tp,"
     "dp\n"
     "a,gpt,2,64,4,100,8,1,80,4,,,,,,,,,,,,\n"
     "b,gpt,2,64,4,100,8,1,80,,yes,,,,,,,,,,,\n"
     "c,llama,2,64,4,100,8,1,80,3,,,,,,,,,,,,\n"
     "d,gpt,2,64,4,100,8,1,80,,,16,8,8,8,,,,,,,\n"
     "e,llama,2,64,4,100,8,1,80,,,16,8,8,8,yes,,,,,,\n"
     "f,llama,2,64,4,100,8,1,80,,,,,,,,4,1,32,3,2,3\n"
     "ok,llama,2,64,4,100,8,1,80,4,yes,,,,,,4,1,32,4,2,2\n",
     "ok",
     "in.csv:2: column 'layer_norms': '4' is not modelled: a gpt layer has 2 norms\n"
     "in.csv:3: column 'qk_norm': 'yes' is not possible with arch=gpt (q/k norms are modelled on "
     "llama layers)\n"
     "in.csv:4: column 'layer_norms': '3' is not modelled: a llama layer has 2 norms, or 4 "
     "(Gemma 2)\n"
     "in.csv:5: column 'kv_lora_rank': '16' is not possible with arch=gpt (latent attention is "
     "modelled on llama layers)\n"
     "in.csv:6: column 'qkv_bias': 'yes' is not possible with multi-head latent attention "
     "(kv_lora_rank)\n"
     "in.csv:7: column 'etp': '3' neither divides tp (2) nor is a multiple of it\n"},

    /* context and pipeline parallelism, HSDP, offloaded checkpoints (doc/model.md 13.2) */
    {"name,model,seq,micro_batch,dp,pp,vpp,cp,zero,zero_group,global_batch,recompute,offload,"
     "gpu_mem_gb\n"
     "a,gpt-1.3b,2048,1,1,1,,3,,,,,,80\n"
     "b,gpt-1.3b,2048,1,1,1,2,,,,,,,80\n"
     "c,gpt-1.3b,2048,1,1,4,4,,,,,,,80\n"
     "d,gpt-1.3b,2048,1,1,4,2,,,,6,,,80\n"
     "e,gpt-1.3b,2048,1,4,1,,2,1,3,,,,80\n"
     "f,gpt-1.3b,2048,1,4,1,,,0,2,,,,80\n"
     "g,gpt-1.3b,2048,1,1,1,,,,,,none,checkpoints,80\n"
     "ok,gpt-1.3b,2048,1,4,4,2,2,3,4,64,2,checkpoints,80\n",
     "ok",
     "in.csv:2: column 'cp': '3' does not divide seq (2048)\n"
     "in.csv:3: column 'vpp': '2' needs pipeline parallelism (pp > 1)\n"
     "in.csv:4: column 'vpp': pp * vpp (4 * 4) does not divide layers (24)\n"
     "in.csv:5: column 'vpp': '2' needs micro-batches per step (global_batch / (micro_batch * "
     "dp) = 6) to be a multiple of pp (4)\n"
     "in.csv:6: column 'zero_group': '3' does not divide dp * cp (8)\n"
     "in.csv:7: column 'zero_group': '2' needs zero >= 1 (a ZeRO shard to span)\n"
     "in.csv:8: column 'offload': 'checkpoints' needs recompute=full or every k (checkpoints to "
     "move)\n"},

    /* block recomputation (doc/model.md 5.4): N layers of each chunk, with recompute=full */
    {"name,model,seq,micro_batch,gpu_mem_gb,recompute,recompute_layers,offload\n"
     "a,gpt-1.3b,2048,1,80,full,0,\n"
     "b,gpt-1.3b,2048,1,80,full,two,\n"
     "c,gpt-1.3b,2048,1,80,selective,2,\n"
     "d,gpt-1.3b,2048,1,80,4,2,\n"
     "e,gpt-1.3b,2048,1,80,,2,\n"
     "f,gpt-1.3b,2048,1,80,full,25,\n"
     "g,gpt-1.3b,2048,1,80,full,2,checkpoints\n"
     "ok,gpt-1.3b,2048,1,80,full,24,\n",
     "ok",
     "in.csv:2: column 'recompute_layers': '0' is zero: expected a positive integer\n"
     "in.csv:3: column 'recompute_layers': 'two' is not a positive integer\n"
     "in.csv:4: column 'recompute_layers': '2' needs recompute=full (the layers recomputed "
     "whole)\n"
     "in.csv:5: column 'recompute_layers': '2' needs recompute=full (the layers recomputed "
     "whole)\n"
     "in.csv:6: column 'recompute_layers': '2' needs recompute=full (the layers recomputed "
     "whole)\n"
     "in.csv:7: column 'recompute_layers': '25' is more than layers (24)\n"
     "in.csv:8: column 'recompute_layers': '2' is not possible with offload=checkpoints (every "
     "layer's checkpoint moves)\n"},
    /* block recomputation is not modelled on DualPipe's GPUs of two stages (doc/model.md 5.4) */
    {"name,model,seq,micro_batch,gpu_mem_gb,recompute,recompute_layers,pp,schedule,global_batch\n"
     "a,gpt-1.3b,2048,1,80,full,2,4,dualpipe,8\n"
     "ok,gpt-1.3b,2048,1,80,full,2,4,1f1b,8\n"
     "ok2,gpt-1.3b,2048,1,80,full,,4,dualpipe,8\n",
     "ok,ok2",
     "in.csv:2: column 'recompute_layers': '2' is not modelled with schedule=dualpipe (block "
     "recomputation of a GPU's two stages)\n"},

    /* per-module selective recomputation (doc/model.md 5.5): known modules the model has */
    {"name,model,seq,micro_batch,gpu_mem_gb,recompute,recompute_modules\n"
     "a,gpt-1.3b,2048,1,80,selective,core_attn+attn\n"
     "b,gpt-1.3b,2048,1,80,full,mlp\n"
     "c,gpt-1.3b,2048,1,80,,layernorm\n"
     "d,gpt-1.3b,2048,1,80,selective,moe_act\n"
     "e,mixtral-8x7b,2048,1,80,selective,mlp\n"
     "f,mixtral-8x7b,2048,1,80,selective,shared_experts\n"
     "g,llama3.1-8b,2048,1,80,selective,mla_up_proj\n"
     "h,gpt-1.3b,2048,1,80,selective,+\n"
     "ok,deepseek-v3,2048,1,80,selective,layernorm mla_up_proj+moe_act;shared_experts\n",
     "ok",
     "in.csv:2: column 'recompute_modules': 'attn' is not one of core_attn, layernorm, mlp, "
     "moe_act, moe, shared_experts, mla_up_proj\n"
     "in.csv:3: column 'recompute_modules': 'mlp' needs recompute=selective (modules to "
     "recompute)\n"
     "in.csv:4: column 'recompute_modules': 'layernorm' needs recompute=selective (modules to "
     "recompute)\n"
     "in.csv:5: column 'recompute_modules': 'moe_act' needs MoE layers (experts)\n"
     "in.csv:6: column 'recompute_modules': 'mlp' needs dense layers (dense_layers with "
     "experts)\n"
     "in.csv:7: column 'recompute_modules': 'shared_experts' needs shared experts (shared_ffn)\n"
     "in.csv:8: column 'recompute_modules': 'mla_up_proj' needs multi-head latent attention "
     "(kv_lora_rank)\n"
     "in.csv:9: column 'recompute_modules': '+' names no module\n"},
    /* the layers of each stage and the schedule (doc/model.md 6.3, 6.4): 24 layers */
    {"name,model,seq,micro_batch,dp,pp,vpp,first_stage_layers,last_stage_layers,schedule,"
     "global_batch,gpu_mem_gb\n"
     "a,gpt-1.3b,2048,1,1,1,,4,,,,80\n"
     "b,gpt-1.3b,2048,1,1,4,,5,,,,80\n"
     "c,gpt-1.3b,2048,1,1,4,,,30,,,80\n"
     "d,gpt-1.3b,2048,1,1,2,,10,10,,,80\n"
     "e,gpt-1.3b,2048,1,1,4,2,3,,,8,80\n"
     "f,gpt-1.3b,2048,1,1,5,2,,,,10,80\n"
     "g,gpt-1.3b,2048,1,1,4,,x,,,,80\n"
     "h,gpt-1.3b,2048,1,1,4,,,-1,,,80\n"
     "i,gpt-1.3b,2048,1,1,4,,,,foo,,80\n"
     "j,gpt-1.3b,2048,1,1,1,,,,zb1p,,80\n"
     "k,gpt-1.3b,2048,1,1,4,2,,,zb1p,8,80\n"
     "l,gpt-1.3b,2048,1,1,3,,,,dualpipe,12,80\n"
     "m,gpt-1.3b,2048,1,1,4,,,,dualpipe,6,80\n"
     "n,gpt-1.3b,2048,1,1,4,,,,dualpipe,9,80\n"
     "o,gpt-1.3b,2048,1,1,25,,,,,,80\n"
     "ok,gpt-1.3b,2048,1,1,5,,,,,,80\n"
     "ok2,gpt-1.3b,2048,1,1,4,2,4,4,,8,80\n"
     "ok3,gpt-1.3b,2048,1,1,4,,,,dualpipe,8,80\n"
     "ok4,gpt-1.3b,2048,1,1,4,,,6,zb1p,,80\n"
     "ok5,gpt-1.3b,2048,1,1,4,,0,0,1f1b,,80\n",
     "ok,ok2,ok3,ok4,ok5",
     "in.csv:2: column 'first_stage_layers': '4' needs pipeline parallelism (pp > 1)\n"
     "in.csv:3: column 'first_stage_layers': '5' leaves 19 of the 24 layers to the other 3 "
     "stages: not the same number on each, at least one\n"
     "in.csv:4: column 'last_stage_layers': '30': the first and last stages would hold 30 of the "
     "24 layers\n"
     "in.csv:5: column 'first_stage_layers': '10' leaves 4 of the 24 layers to no stage (pp 2)\n"
     "in.csv:6: column 'vpp': '2' does not divide the layers of every stage (first 3, others 7, "
     "last 7)\n"
     "in.csv:7: column 'vpp': pp * vpp (5 * 2) does not divide layers (24)\n"
     "in.csv:8: column 'first_stage_layers': 'x' is not a non-negative integer\n"
     "in.csv:9: column 'last_stage_layers': '-1' is negative: expected a non-negative integer\n"
     "in.csv:10: column 'schedule': 'foo' is not one of 1f1b, zb1p, dualpipe\n"
     "in.csv:11: column 'schedule': 'zb1p' needs pipeline parallelism (pp > 1)\n"
     "in.csv:12: column 'schedule': 'zb1p' has no interleaved form (vpp 2)\n"
     "in.csv:13: column 'schedule': 'dualpipe' needs an even pp (3)\n"
     "in.csv:14: column 'schedule': 'dualpipe' needs an even number of micro-batches per step, at "
     "least 2 pp (global_batch / (micro_batch * dp) = 6, pp 4)\n"
     "in.csv:15: column 'schedule': 'dualpipe' needs an even number of micro-batches per step, at "
     "least 2 pp (global_batch / (micro_batch * dp) = 9, pp 4)\n"
     "in.csv:16: column 'pp': '25' is more than layers (24)\n"},

    /* names: at most 64 characters (the message shows 20), valid UTF-8 */
    {HEADER NAME65 ",24,2048,16,50257,2048,8,80\n", "",
     "in.csv:2: column 'name': '00000000000000000000...' is longer than 64 characters\n"},
    {HEADER "a\xff,24,2048,16,50257,2048,8,80\n", "",
     "in.csv:2: column 'name': the name is not valid UTF-8\n"},
    {HEADER "\xc3,24,2048,16,50257,2048,8,80\n", /* a truncated sequence */
     "", "in.csv:2: column 'name': the name is not valid UTF-8\n"},
    {HEADER "\xc0\xaf,24,2048,16,50257,2048,8,80\n", /* an overlong '/' */
     "", "in.csv:2: column 'name': the name is not valid UTF-8\n"},
    {HEADER "\xed\xa0\x80,24,2048,16,50257,2048,8,80\n", /* a surrogate */
     "", "in.csv:2: column 'name': the name is not valid UTF-8\n"},
    {HEADER "\xf4\x90\x80\x80,24,2048,16,50257,2048,8,80\n", /* beyond U+10FFFF */
     "", "in.csv:2: column 'name': the name is not valid UTF-8\n"},

    /* gpus, the layout's GPUs: a count, dp * tp * pp * cp */
    {HEADER_NO_NL ",gpus,tp\n"
                  "a,24,2048,16,50257,2048,8,80,abc,\n"
                  "b,24,2048,16,50257,2048,8,80,8,3\n"
                  "c,24,2048,16,50257,2048,8,80,8,2\n",
     "c",
     "in.csv:2: column 'gpus': 'abc' is not a positive integer\n"
     "in.csv:3: column 'gpus': '8' is not a multiple of tp * pp * cp (3)\n"},
    {HEADER_NO_NL ",gpus,dp\na,24,2048,16,50257,2048,8,80,8,4\n", "",
     "in.csv:2: column 'gpus': '8' is not dp * tp * pp * cp (4 * 1)\n"},
};

/* Every row of bad[0..n): exactly its messages, exactly the other scenarios (or jobs) read;
 * returns the failures. */
static int check_bad_inputs(const struct bad_input *bad, size_t n, bool jobs)
{
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        struct run r;
        run_csv_mode(&r, bad[i].csv, PEAK_LESSON, jobs);
        char read[256] = "";
        for (size_t k = 0; k < r.n; k++) {
            size_t used = strlen(read);
            snprintf(read + used, sizeof read - used, "%s%s", k ? "," : "", r.sc[k].name);
        }
        if (strcmp(r.messages, bad[i].messages) != 0) {
            print_error("bad[%zu]: expected the messages\n%sgot\n%s", i, bad[i].messages,
                        r.messages);
            failed++;
        }
        if (strcmp(read, bad[i].read) != 0) {
            print_error("bad[%zu]: expected to read \"%s\", read \"%s\"\n", i, bad[i].read, read);
            failed++;
        }
    }
    return failed;
}

static void bad_inputs(void **state)
{
    (void)state;
    assert_int_equal(check_bad_inputs(BAD, sizeof BAD / sizeof BAD[0], false), 0);
}

/* ---- memfit search's jobs (doc/model.md section 13.1) ---- */

#define JOB_HEADER "name,model,seq,global_batch,gpu_mem_gb,gpus"

/* A job records its gpus and the layout columns its row gave; micro_batch is not required, and
 * the search's choices are left out of the rules; an eval row records gpus, and pins nothing. */
static void jobs_record_gpus_and_pins(void **state)
{
    (void)state;
    struct run r;
    const char *csv = JOB_HEADER ",tp,zero,attention,micro_batch,recompute\n"
                                 "a,llama3-8b,8192,64,80,64,4,1,flash,,\n"
                                 "b,llama3-8b,8192,64,80,16:512,,,,2,full\n"
                                 "c,llama3-8b,8192,64,80,,,,,,\n";
    run_csv_mode(&r, csv, PEAK_STEP, true);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.n_messages, 0);
    assert_int_equal(r.sc[0].gpus, 64);
    assert_int_equal(r.sc[0].gpus_from, 0);
    assert_int_equal(r.sc[0].pinned, SCENARIO_PIN_TP | SCENARIO_PIN_ZERO | SCENARIO_PIN_ATTENTION);
    assert_int_equal(r.sc[0].dp, 16);
    assert_int_equal(r.sc[0].micro_batch, 1);
    assert_int_equal(r.sc[1].gpus_from, 16);
    assert_int_equal(r.sc[1].gpus, 512);
    assert_int_equal(r.sc[1].pinned, SCENARIO_PIN_MICRO_BATCH | SCENARIO_PIN_RECOMPUTE);
    assert_int_equal(r.sc[1].dp, 1);
    assert_int_equal(r.sc[1].micro_batch, 2);
    assert_int_equal(r.sc[2].gpus, 0); /* the caller's --gpus-range, or a message of its own */
    assert_int_equal(r.sc[2].pinned, 0);
    /* The same rows as scenarios: gpus recorded, nothing pinned; a range is no count. */
    run_csv_mode(&r,
                 JOB_HEADER ",tp,micro_batch\n"
                            "a,llama3-8b,8192,8,80,64,4,1\n"
                            "b,llama3-8b,8192,64,80,16:512,,1\n",
                 PEAK_STEP, false);
    assert_int_equal(r.n, 0);
    assert_message(&r, "in.csv:2: column 'global_batch': '8' is not a multiple of micro_batch * "
                       "dp (16)");
    assert_message(&r, "in.csv:3: column 'gpus': '16:512' is not a positive integer");
    run_csv_mode(&r, JOB_HEADER ",tp,micro_batch\na,llama3-8b,8192,64,80,8,4,1\n", PEAK_STEP,
                 false);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.sc[0].gpus, 8);
    assert_int_equal(r.sc[0].dp, 2);
    assert_int_equal(r.sc[0].pinned, 0);
}

/* A job's bad inputs: its own rules, and eval's rules only for what its row pins. */
static const struct bad_input BAD_JOBS[] = {
    /* gpus: a count or a range A:B with A <= B holding a multiple of gpus_per_node */
    {JOB_HEADER "\na,llama3-8b,8192,64,80,512:64\nb,llama3-8b,8192,64,80,64:64\n", "b",
     "in.csv:2: column 'gpus': '512:64' is a range A:B with A > B\n"},
    {JOB_HEADER "\na,llama3-8b,8192,64,80,10:12\nb,llama3-8b,8192,64,80,10:16\n", "b",
     "in.csv:2: column 'gpus': '10:12' holds no multiple of gpus_per_node (8): the counts "
     "searched\n"},
    {JOB_HEADER "\na,llama3-8b,8192,64,80,64:x\nb,llama3-8b,8192,64,80,0:8\n", "",
     "in.csv:2: column 'gpus': 'x' is not a positive integer\n"
     "in.csv:3: column 'gpus': '0' is zero: expected a positive integer\n"},
    {JOB_HEADER "\na,llama3-8b,8192,,80,64\n", "",
     "in.csv:2: column 'global_batch': a value is required\n"},
    /* a pinned degree that contradicts gpus, alone or with the others */
    {JOB_HEADER ",tp\na,llama3-8b,8192,64,80,64,3\nb,llama3-8b,8192,64,80,64,8\n", "b",
     "in.csv:2: column 'tp': '3' does not divide gpus (64)\n"},
    {JOB_HEADER ",tp,pp\na,llama3-8b,8192,64,80,64,8,16\n", "",
     "in.csv:2: column 'pp': '16' times the other pinned degrees of tp, pp, cp and dp does not "
     "divide gpus (64)\n"},
    {JOB_HEADER ",dp,tp,pp,cp\na,llama3-8b,8192,64,80,32,2,2,2,2\n", "",
     "in.csv:2: column 'dp': dp * tp * pp * cp (16) is not gpus (32)\n"},
    {JOB_HEADER ",ep\na,mixtral-8x7b,4096,64,80,12,8\nb,mixtral-8x7b,4096,64,80,8,8\n", "b",
     "in.csv:2: column 'ep': '8' does not divide gpus (12)\n"},
    {JOB_HEADER ",zero,zero_group\na,llama3-8b,8192,64,80,12,3,8\n", "",
     "in.csv:2: column 'zero_group': '8' does not divide gpus (12)\n"},
    {JOB_HEADER ",micro_batch\na,llama3-8b,8192,64,80,64,3\n", "",
     "in.csv:2: column 'global_batch': '64' is not a multiple of micro_batch * dp (3)\n"},
    /* eval's rules between layout columns hold for what is pinned */
    {JOB_HEADER ",vpp,pp\na,llama3-8b,8192,64,80,64,2,1\nb,llama3-8b,8192,64,80,64,2,\n", "b",
     "in.csv:2: column 'vpp': '2' needs pipeline parallelism (pp > 1)\n"},
    {JOB_HEADER ",zero_group,zero\na,llama3-8b,8192,64,80,64,8,0\nb,llama3-8b,8192,64,80,64,8,\n",
     "b", "in.csv:2: column 'zero_group': '8' needs zero >= 1 (a ZeRO shard to span)\n"},
    {JOB_HEADER ",offload,recompute\na,llama3-8b,8192,64,80,64,checkpoints,none\n"
                "b,llama3-8b,8192,64,80,64,checkpoints,\n",
     "b",
     "in.csv:2: column 'offload': 'checkpoints' needs recompute=full or every k (checkpoints to "
     "move)\n"},
    {JOB_HEADER ",tp\na,llama3-8b,8192,64,80,64,16\n", "",
     "in.csv:2: column 'tp': '16' does not divide heads (32) and kv_heads (8)\n"},
    /* what the search picks is no rule: a batch smaller than the GPUs, experts over dp */
    {JOB_HEADER ",ep\na,llama3-8b,8192,32,80,64,\nb,mixtral-8x7b,4096,16,80,64,8\n", "a,b", ""},
};

static void bad_jobs(void **state)
{
    (void)state;
    assert_int_equal(check_bad_inputs(BAD_JOBS, sizeof BAD_JOBS / sizeof BAD_JOBS[0], true), 0);
}

/* Reads csv[0..len) (NUL bytes included) as "in.csv". */
static void run_bytes(struct run *r, const char *csv, size_t len)
{
    memset(r, 0, sizeof *r);
    struct diag d;
    diag_init(&d, collect, r);
    struct nameset names;
    nameset_init(&names);
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(fwrite(csv, 1, len, f), len);
    rewind(f);
    struct config_options opt = {0.15, PEAK_LESSON, IMPL_MEMFIT};
    struct config_reader *rd = config_reader_new(f, "in.csv", presets, &opt, &names, &d);
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

/* A NUL byte ended the cell's string: "f\0g" was read as "f", "2\0" as 2. The row is rejected,
 * in a plain line and in a quoted one, and a header name holding one rejects the file. */
static void a_nul_byte_rejects_its_row(void **state)
{
    (void)state;
    static const char csv[] = HEADER "f\0g,24,2048,16,50257,2048,8,80\n"
                                     "a,24,2048,16,50257,2\0,8,80\n"
                                     "\"q\",24,2048,16,50257,2048,8\0,80\n"
                                     "ok,24,2048,16,50257,2048,8,80\n";
    struct run r;
    run_bytes(&r, csv, sizeof csv - 1);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.sc[0].name, "ok");
    assert_string_equal(r.messages, "in.csv:2: column 'name': the cell holds a NUL byte\n"
                                    "in.csv:3: column 'seq': the cell holds a NUL byte\n"
                                    "in.csv:4: column 'micro_batch': the cell holds a NUL byte\n");
    static const char head[] = "name,la\0yers\na,24\n";
    run_bytes(&r, head, sizeof head - 1);
    assert_int_equal(r.n, 0);
    assert_string_equal(r.messages, "in.csv:1: column 2: the header name holds a NUL byte; the "
                                    "file's rows are skipped\n");
}

/* The columns memfit search writes around a scenario's are read and ignored: its rows read as
 * the scenario they hold; a NUL byte in one of them still rejects the row, by its position, and
 * a job's row of rank 0 (no layout fits) is rejected saying so. */
static void search_result_columns_are_ignored(void **state)
{
    (void)state;
    static const char csv[] =
        "job,rank,step_time_s,layouts_tried,layouts_fit,name,layers,hidden,heads,vocab,seq,"
        "micro_batch,gpu_mem_gb,peak_bytes,budget_bytes\n"
        "j,1,1.5,10,4,j-1,24,2048,16,50257,2048,8,80,123,456\n"
        "j,2,1\0.5,10,4,j-2,24,2048,16,50257,2048,8,80,123,456\n"
        "none,0,,10,0,,,,,,,,,,456\n";
    struct run r;
    run_bytes(&r, csv, sizeof csv - 1);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.sc[0].name, "j-1");
    assert_int_equal(r.sc[0].layers, 24);
    assert_int_equal(r.sc[0].micro_batch, 8);
    assert_string_equal(r.messages,
                        "in.csv:3: column 3: the cell holds a NUL byte\n"
                        "in.csv:4: job 'none': memfit search found no layout that fits (rank 0); "
                        "no scenario to read\n");
}

/* A name table that cannot grow stops the file with a message: the check is never skipped. */
static void a_full_name_table_stops_loudly(void **state)
{
    (void)state;
    char csv[64 * 1024];
    size_t n = (size_t)snprintf(csv, sizeof csv, HEADER);
    for (int i = 0; i < 600; i++)
        n += (size_t)snprintf(csv + n, sizeof csv - n, "s%d,24,2048,16,50257,2048,8,80\n", i);
    struct run r;
    memset(&r, 0, sizeof r);
    struct diag d;
    diag_init(&d, collect, &r);
    struct nameset names;
    nameset_init(&names);
    names.max_cap = 1024; /* 512 names */
    FILE *f = fmemopen(csv, n, "r");
    assert_non_null(f);
    struct config_options opt = {0.15, PEAK_LESSON, IMPL_MEMFIT};
    struct config_reader *rd = config_reader_new(f, "in.csv", presets, &opt, &names, &d);
    struct scenario sc;
    unsigned long line;
    int rc, read = 0;
    while ((rc = config_reader_next(rd, &sc, &line)) == 1)
        read++;
    assert_int_equal(rc, -2);
    assert_int_equal(read, 512);
    assert_string_equal(r.messages, "in.csv:514: out of memory: the names seen so far cannot be "
                                    "kept to check that names are unique\n");
    config_reader_free(rd);
    fclose(f);
    nameset_release(&names);
}

/* Loads a models file with `models` (NULL: the shipped one) and a GPU file with `gpus`; returns
 * the messages. */
static const char *load_preset_files(const char *models, const char *gpus, bool *ok)
{
    static char messages[2048];
    static struct run r;
    memset(&r, 0, sizeof r);
    char mpath[] = "/tmp/memfit-models-XXXXXX", gpath[] = "/tmp/memfit-gpus-XXXXXX";
    int mfd = mkstemp(mpath), gfd = mkstemp(gpath);
    assert_true(mfd >= 0 && gfd >= 0);
    FILE *mf = fdopen(mfd, "w"), *gf = fdopen(gfd, "w");
    fputs(models ? models : "name,layers\ntiny,2\n", mf);
    fputs(gpus ? gpus : "name,mem_gb\nG,80\n", gf);
    fclose(mf);
    fclose(gf);
    struct diag d;
    diag_init(&d, collect, &r);
    struct config_presets *p = config_presets_load(mpath, gpath, &d);
    *ok = p != NULL;
    config_presets_free(p);
    unlink(mpath);
    unlink(gpath);
    /* The temporary paths vary: keep what follows "FILE:". */
    messages[0] = '\0';
    for (const char *m = r.messages; *m;) {
        const char *colon = strchr(m, ':'), *nl = strchr(m, '\n');
        size_t used = strlen(messages);
        snprintf(messages + used, sizeof messages - used, "%.*s\n", (int)(nl - colon - 1),
                 colon + 1);
        m = nl + 1;
    }
    return messages;
}

/* Preset files: every problem is an error with its line and column. */
static void preset_files_are_checked(void **state)
{
    (void)state;
    static const struct {
        const char *models, *gpus, *messages;
    } cases[] = {
        {"name,layers\na,2\nA,4\n", NULL,
         "3: column 'name': 'A' is a duplicate preset (first on line 2)\n"},
        {"name,layers,hidden,Layers\na,2,8,3\n", NULL,
         "1: column 'Layers' appears twice in the header\n"},
        {"", NULL, " empty file: a header row is required\n"},
        {NULL, "name,mem_gb,bf16_tflops\nG,80,-5\n",
         "2: column 'bf16_tflops': '-5' is negative: expected a positive speed\n"},
        {NULL, "name,mem_gb,hbm_tb_s\nG,80,1e300\n",
         "2: column 'hbm_tb_s': '1e300' is too large (more than 10^6)\n"},
        {NULL, "name,mem_gb,link_gb_s\nG,80,0\n",
         "2: column 'link_gb_s': '0' is zero: leave the cell empty when the speed is not known\n"},
        {NULL, "name,mem_gb,pcie_gb_s\nG,80,fast\n",
         "2: column 'pcie_gb_s': 'fast' is not a number\n"},
        {NULL, "name,mem_gb,host_mem_gb\nG,80,lots\n",
         "2: column 'host_mem_gb': 'lots' is not a number\n"},
        {NULL, "name,mem_gb,host_mem_gb\nG,80,-2000\n",
         "2: column 'host_mem_gb': '-2000' is negative: expected a positive speed\n"},
        {NULL, "name,mem_gb,pcie_gb_s,pcie_gb_s\nG,80,1,2\n",
         "1: column 'pcie_gb_s' appears twice in the header\n"},
        {NULL, "name,mem_gb,source,source\nG,80,a,b\n",
         "1: column 'source' appears twice in the header\n"},
        {NULL, "name,mem_gb\ng,80\nG,40\n",
         "3: column 'name': 'G' is a duplicate preset (first on line 2)\n"},
        {NULL, "name,mem_gb,bf16_tflops,hbm_tb_s\nG,80,989,3.35\n", ""},
        {NULL, "name,mem_gb,fp8\nG,80,maybe\n", "2: column 'fp8': 'maybe' is not yes or no\n"},
        {NULL, "name,mem_gb,fp8_one_copy,fp8_one_copy\nG,80,no,no\n",
         "1: column 'fp8_one_copy' appears twice in the header\n"},
        {NULL, "name,mem_gb,fp8_tflops\nG,80,-1\n",
         "2: column 'fp8_tflops': '-1' is negative: expected a positive speed\n"},
        {NULL, "name,mem_gb,fp8,mxfp8,fp8_one_copy,fp8_tflops\nG,80,yes,NO,no,1979\n", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool ok;
        const char *got = load_preset_files(cases[i].models, cases[i].gpus, &ok);
        if (strcmp(got, cases[i].messages) != 0)
            fail_msg("case %zu: expected\n%sgot\n%s", i, cases[i].messages, got);
        assert_int_equal(ok, cases[i].messages[0] == '\0');
    }
}

/* An unknown column rejects every row of the file (with the one message of its row above). */
static void unknown_column_rejects_every_row(void **state)
{
    (void)state;
    struct run r;
    run_csv(&r, "name,layers,hidden,heads,vocab,seq,micro_bacth,gpu_mem_gb\n"
                "a,24,2048,16,50257,2048,8,80\nb,24,2048,16,50257,2048,8,80\n");
    assert_int_equal(r.rejected, 2);
}

static void names_count_characters_not_bytes(void **state)
{
    (void)state;
    struct run r;
    char csv[1024], name[512];
    for (int i = 0; i < 65; i++)
        memcpy(name + 2 * i, "\xce\xa8", 2); /* Psi: 2 bytes, one character */
    name[128] = '\0';                        /* 64 characters */
    snprintf(csv, sizeof csv, HEADER "%s,24,2048,16,50257,2048,8,80\n", name);
    run_csv(&r, csv);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.sc[0].name, name);
    name[128] = '\xce'; /* 65 characters */
    name[130] = '\0';
    snprintf(csv, sizeof csv, HEADER "%s,24,2048,16,50257,2048,8,80\n", name);
    run_csv(&r, csv);
    assert_int_equal(r.n, 0);
    /* The message shows the first 20 characters, never half of one. */
    char want[128];
    snprintf(want, sizeof want, "column 'name': '%.40s...' is longer than 64 characters", name);
    assert_message(&r, want);
}

static void csvin_streams_with_flat_memory(void **state)
{
    (void)state;
    /* 20,000 records read through one reader reuse the same field buffers. */
    size_t n = 20000, len = 0;
    char *text = malloc(n * 16 + 16);
    assert_non_null(text);
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, 16, "r%zu,%zu\n", i, i);
    FILE *f = fmemopen(text, len, "r");
    struct diag d;
    diag_init(&d, NULL, NULL);
    struct csvin *in = csvin_new(f, "big.csv", &d);
    struct csvin_record rec;
    char **first_fields = NULL;
    size_t count = 0;
    while (csvin_next(in, &rec) == 1) {
        if (!first_fields)
            first_fields = rec.fields;
        assert_ptr_equal(rec.fields, first_fields);
        assert_int_equal(rec.line, count + 1);
        count++;
    }
    assert_int_equal(count, n);
    csvin_free(in);
    fclose(f);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_explicit_columns_with_defaults),
        cmocka_unit_test(header_is_case_insensitive_trimmed_and_in_any_order),
        cmocka_unit_test(bom_crlf_and_quoted_fields),
        cmocka_unit_test(blank_lines_are_skipped),
        cmocka_unit_test(model_and_gpu_presets_merge_and_columns_win),
        cmocka_unit_test(gpu_presets_hold_the_capacity_the_device_reports),
        cmocka_unit_test(lesson_zero2_fits_on_the_a100_40gb_as_it_reports_itself),
        cmocka_unit_test(gpu_preset_file_mem_gb_or_mem_mib),
        cmocka_unit_test(every_preset_gives_its_published_parameter_count),
        cmocka_unit_test(gpt3_preset_is_175b),
        cmocka_unit_test(llama_ffn_default),
        cmocka_unit_test(recompute_and_booleans),
        cmocka_unit_test(reserve_column_wins),
        cmocka_unit_test(step_columns_default_by_precision),
        cmocka_unit_test(impl_column_parses),
        cmocka_unit_test(the_peak_option_reaches_every_row),
        cmocka_unit_test(modern_columns_default_when_empty),
        cmocka_unit_test(modern_columns_parse),
        cmocka_unit_test(modern_presets_load_with_their_values),
        cmocka_unit_test(bad_inputs),
        cmocka_unit_test(jobs_record_gpus_and_pins),
        cmocka_unit_test(bad_jobs),
        cmocka_unit_test(a_nul_byte_rejects_its_row),
        cmocka_unit_test(search_result_columns_are_ignored),
        cmocka_unit_test(a_full_name_table_stops_loudly),
        cmocka_unit_test(preset_files_are_checked),
        cmocka_unit_test(gpu_presets_know_fp8),
        cmocka_unit_test(fp8_column_parses),
        cmocka_unit_test(tuning_columns_parse),
        cmocka_unit_test(unknown_column_rejects_every_row),
        cmocka_unit_test(names_count_characters_not_bytes),
        cmocka_unit_test(csvin_streams_with_flat_memory),
    };
    return cmocka_run_group_tests(tests, load_presets, free_presets);
}
