/*
 * Tests of csvin.c and config (src/input/config*.c): the CSV dialect (quotes, CRLF, BOM, physical
 * line numbers), presets and defaults, the columns of each kind, NUL bytes, full name tables and
 * preset files. The bad-input classes of doc/model.md section 13.2 and memfit search's jobs are in
 * test_config_bad.c.
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

#include "config_run.h"
#include "input/config.h"
#include "input/csvin.h"
#include "model/model.h"

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
