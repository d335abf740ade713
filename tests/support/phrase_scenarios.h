/*
 * phrase_scenarios: the scenarios the report's phrase tests read - between them they take every
 * branch that chooses a phrase - and how they are read (config's reader with the shipped presets,
 * under the given peak).
 */
#ifndef MEMFIT_PHRASE_SCENARIOS_H
#define MEMFIT_PHRASE_SCENARIOS_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>

#include "base/diag.h"
#include "base/nameset.h"
#include "input/config.h"
#include "model/scenario.h"

/* Scenarios that between them take every branch that chooses a phrase. needs-tp and gqa write
 * gpu_mem_gb (40, 80) beside their GPU preset: the explicit cell wins over the capacity the device
 * reports (40,960 and 81,559 MiB), which keeps full checkpointing and ZeRO-3 their fixes. */
static const char __attribute__((unused)) scenarios_csv[] =
    "name,model,arch,layers,hidden,heads,kv_heads,vocab,seq,micro_batch,global_batch,attention,"
    "recompute,dp,tp,pp,sp,zero,offload,gpu,gpu_mem_gb,reserve,dropout,positions,tied,"
    "gpus_per_node,ep,etp,capacity_factor\n"
    "lesson,gpt-1.3b,,,,,,,2048,8,,plain,none,1,1,1,no,0,,,80,,,,,,,,\n"
    "fits,gpt-1.3b,,,,,,,2048,8,,flash,none,1,1,1,no,0,,,80,,,,,,,,\n"
    "dp-zero2,gpt-1.3b,,,,,,,2048,8,64,plain,none,8,1,1,no,2,,A100-40GB,,,,,,,,,\n"
    "zero1-dp1,gpt-1.3b,,,,,,,2048,2,,flash,none,1,1,1,no,1,,,80.5,,,,,,,,\n"
    "pp-first,gpt-1.3b,,,,,,,2048,4,,flash,none,2,1,4,no,1,,H100-80GB,,,,,,,,,\n"
    "pp-ckpt,gpt-1.3b,,,,,,,2048,4,,flash,3,2,1,4,no,1,,H100-80GB,,,,,,,,,\n"
    "ckpt-k,gpt-1.3b,,,,,,,2048,4,,flash,4,1,1,1,no,0,,,80,,,,,,,,\n"
    "tp-sp,llama2-7b,,,,,,,4096,2,,flash,selective,2,4,1,yes,2,,A100-40GB,,,,,,,,,\n"
    "tp-nosp,llama2-7b,,,,,,,4096,2,,plain,none,2,4,1,no,0,,A100-40GB,,,,,,,,,\n"
    "offloaded,llama2-13b,,,,,,,4096,1,,flash,full,1,1,1,no,0,optimizer,,24,,,,,,,,\n"
    "nothing,llama3-70b,,,,,,,8192,8,,plain,none,1,1,1,no,0,,L4-24GB,,,,,,,,,\n"
    /* nothing fits on any number of GPUs: one layer, one head, a prime seq, one sequence a step */
    "wall,,llama,1,1000000,1,1,32000,8191,1,1,plain,none,1,1,1,no,0,,H100-80GB,,,,,,,,,\n"
    "custom,,gpt,12,768,12,4,50000,1024,64,256,plain,none,2,1,1,no,3,,,16,0.1,no,512,no,,,,\n"
    "gqa,mistral-7b,,,,,,,8192,4,64,plain,none,8,1,1,no,2,,H100-80GB,80,,,,,,,,\n"
    "uneven,gpt-1.3b,,,,,,,2048,8,24,plain,none,3,1,1,no,0,,,80,,,,,,,,\n"
    "needs-tp,llama2-7b,,,,,,,4096,4,,plain,none,8,1,1,no,0,,A100-40GB,40,,,,,,,,\n"
    "needs-zero2,llama2-13b,,,,,,,2048,1,,flash,full,8,1,1,no,0,,,80,,,,,,,,\n"
    "needs-zero3,llama2-13b,,,,,,,4096,1,,flash,full,8,1,1,no,2,,L4-24GB,,,,,,,,,\n"
    "needs-zero3-net,llama2-13b,,,,,,,1024,1,,flash,full,16,1,1,no,2,,L4-24GB,,,,,,,,,\n"
    "needs-offload,llama2-7b,,,,,,,2048,1,,flash,full,1,1,1,no,0,,,80,,,,,1,,,\n"
    "thin,gpt-1.3b,,,,,,,512,16,,flash,none,1,1,1,no,0,,,32,,,,,,,,\n"
    "moe-dropless,mixtral-8x7b,,,,,,,4096,1,,flash,none,8,1,1,no,3,,H100-80GB,,,,,,,8,,\n"
    "moe-capacity,deepseek-v3,,,,,,,4096,1,,flash,none,8,2,1,yes,1,,H100-80GB,,,,,,,4,1,1.25\n";

/* The same under --peak step (the default of the command line), with each implementation
 * choice and precision, peaking at each phase: backward_start, forward (a fused loss; and the
 * first pipeline stage), recompute, backward_end, optimizer. */
static const char __attribute__((unused)) step_csv[] =
    "name,model,seq,micro_batch,attention,recompute,dp,pp,zero,gpu,gpu_mem_gb,precision,loss,"
    "grad_buffer,optimizer_impl\n"
    "step-lesson,gpt-1.3b,2048,8,plain,none,1,1,0,,80,mixed,eager,on_demand,foreach\n"
    "step-fits,gpt-1.3b,2048,8,flash,none,1,1,0,,80,megatron,fused,persistent,fused\n"
    "step-pp-first,gpt-1.3b,2048,4,flash,none,2,4,1,H100-80GB,,mixed,,,\n"
    "step-rebuild,gpt-1.3b,8192,1,plain,24,1,1,0,,80,autocast,eager,on_demand,single\n"
    "step-end,gpt-1.3b,128,1,flash,none,1,1,0,,80,fp32,eager,persistent,fused\n"
    "step-frozen,gpt-1.3b,256,1,flash,none,1,1,0,,80,frozen,fused,on_demand,foreach\n"
    "step-optimizer,gpt-1.3b,256,1,flash,none,1,1,0,,80,mixed,fused,on_demand,foreach\n"
    /* nothing fits, the states would (doc/model.md 11.3): on these 2 GPUs, found on 32; on this
     * GPU, none found up to 16 */
    "step-acts,gpt2-small,1048576,1,flash,none,2,1,3,L4-24GB,,mixed,,,\n"
    "step-acts-one,gpt2-small,1048576,1,flash,none,1,1,0,L4-24GB,,mixed,,,\n"
    /* the fix's notes, never applied: 8-bit Adam's and FP8's (an H100, AdamW, bf16) */
    "step-notes,llama3-8b,8192,8,flash,none,1,1,0,H100-80GB,,mixed,,,\n";

/* The pipeline schedules and splits of doc/model.md 6.3 and 6.4: ZB1P; DualPipe on 61 layers
 * (uneven); 105 layers on 35 stages (more stages than @chart stages draws). */
static const char __attribute__((unused)) schedules_csv[] =
    "name,model,seq,micro_batch,global_batch,attention,recompute,dp,tp,pp,ep,schedule,gpu,"
    "mtp_layers\n"
    "zb1p,gpt-1.3b,2048,1,16,flash,full,1,1,4,,zb1p,H100-80GB,\n"
    "dualpipe,deepseek-v3,4096,1,32,flash,full,1,1,16,1,dualpipe,H100-80GB,1\n"
    "pp35,mt-nlg-530b,2048,1,35,flash,full,1,8,35,,,A100-80GB,\n"
    "mtp,llama3.1-8b,4096,1,8,flash,selective,1,1,1,,,H100-80GB,1\n";

/* Context and interleaved pipeline parallelism with HSDP, offloaded checkpoints, a mixture of
 * experts whose leading dense layers leave a middle pipeline stage the heaviest, and the ladder's
 * tp and pp rungs on the same GPUs (pp fixes where HSDP groups of one GPU shard nothing). */
static const char __attribute__((unused)) parallel_csv[] =
    "name,model,arch,layers,hidden,heads,kv_heads,vocab,ffn,experts,top_k,expert_ffn,"
    "dense_layers,seq,micro_batch,attention,recompute,dp,tp,pp,vpp,cp,zero,zero_group,offload,"
    "gpu_mem_gb,gpus_per_node\n"
    "cp-vpp,gpt-1.3b,,,,,,,,,,,,4096,1,flash,none,2,1,4,2,2,1,2,,80,\n"
    "ckpt-offload,gpt-1.3b,,,,,,,,,,,,2048,8,flash,full,1,1,1,,2,0,,checkpoints,80,\n"
    "middle-stage,,llama,16,1024,8,8,1000,2816,16,8,1408,3,4096,2,flash,none,1,1,4,,,0,,,80,\n"
    "tp-fix,llama2-7b,,,,,,,,,,,,65536,1,flash,none,8,1,1,,,0,,,40,\n"
    "pp-fix,llama2-7b,,,,,,,,,,,,4096,1,flash,none,8,1,1,,,1,1,,40,1\n"
    "vpp-ckpt,gpt-1.3b,,,,,,,,,,,,8192,1,flash,2,2,1,4,2,,1,,,40,\n";

/* FP8 training (doc/model.md sections 3.7, 4.10): per-tensor scaling on Hopper (two weight
 * copies) and on Blackwell (one), MXFP8. */
static const char fp8_csv[] = "name,model,seq,micro_batch,attention,dp,zero,gpu,fp8\n"
                              "fp8-h100,llama3.1-8b,8192,1,flash,8,1,H100-80GB,tensor\n"
                              "fp8-b200,llama3.1-8b,8192,1,flash,8,1,B200-192GB,tensor\n"
                              "fp8-mxfp8,llama3.1-8b,8192,1,flash,8,1,B200-192GB,mxfp8\n";

/* The optimizers and fine-tuning (doc/model.md sections 3.5, 3.6): full training with bf16 and
 * 8-bit moments; LoRA on q and v; LoRA on every linear in fp32 with SGD, sharded by ZeRO-3;
 * QLoRA with the optimizer offloaded; the first three implementation profiles' phrases
 * (doc/model.md 4.12: transformers with sdpa, Megatron-Core, PEFT). */
/* The ladder's tp and pp rungs (and a pipeline's bubble in the cost of a fix) under --peak lesson,
 * where the verdict's fix is the ladder's (under --peak step it is the cheapest layout). */
static const char __attribute__((unused)) ladder_csv[] =
    "name,model,seq,micro_batch,attention,recompute,dp,tp,pp,zero,zero_group,gpu_mem_gb,"
    "gpus_per_node\n"
    "lesson-tp-fix,llama2-7b,65536,1,flash,none,8,1,1,0,,40,\n"
    "lesson-pp-fix,llama2-7b,4096,1,flash,none,8,1,1,1,1,40,1\n";

static const char __attribute__((unused)) tuning_csv[] =
    "name,model,seq,micro_batch,attention,recompute,dp,zero,offload,gpu,precision,optimizer,"
    "finetune,lora_rank,lora_targets,impl\n"
    "full-bf16,llama3.1-8b,4096,1,sdpa,full,1,0,,H100-80GB,,adamw-bf16,,,,hf\n"
    "full-8bit,llama3.1-8b,4096,1,flash,full,1,0,,H100-80GB,,adamw8bit,,,,megatron\n"
    "lora-qv,llama3.1-8b,4096,1,flash,full,1,0,,H100-80GB,,,lora,16,qv,\n"
    "lora-all,llama3.1-8b,4096,1,flash,full,8,3,,H100-80GB,autocast,sgd,lora,8,all-linear,"
    "hf-peft\n"
    "qlora-offload,llama3.1-70b,4096,1,flash,full,1,0,optimizer,H100-80GB,,,qlora,64,,\n";

/* The scenarios of csv (its length len), read with --peak peak; appended to out[0..cap). */
static __attribute__((unused)) size_t read_csv(const char *csv, size_t len, enum peak_model peak,
                                               struct scenario *out, size_t cap)
{
    struct diag d;
    diag_init(&d, NULL, NULL);
    struct config_presets *pre = config_presets_load("configs/models.csv", "configs/gpus.csv", &d);
    assert_non_null(pre);
    struct nameset seen;
    nameset_init(&seen);
    struct config_options opt = {0.15, peak, IMPL_MEMFIT};
    FILE *in = fmemopen((void *)csv, len, "r");
    assert_non_null(in);
    struct config_reader *r = config_reader_new(in, "phrases.csv", pre, &opt, &seen, &d);
    assert_non_null(r);
    size_t n = 0;
    unsigned long line;
    int got;
    while (n < cap && (got = config_reader_next(r, &out[n], &line)) != 0) {
        if (got != 1)
            fail_msg("%s", d.last);
        n++;
    }
    config_reader_free(r);
    fclose(in);
    nameset_release(&seen);
    config_presets_free(pre);
    return n;
}

/* The scenarios of scenarios_csv, under --peak lesson. */
static __attribute__((unused)) size_t read_scenarios(struct scenario *out, size_t cap)
{
    return read_csv(scenarios_csv, sizeof scenarios_csv - 1, PEAK_LESSON, out, cap);
}

#endif
