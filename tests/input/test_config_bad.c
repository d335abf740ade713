/*
 * Tests of config (src/input/config*.c) on bad input: a table with one row per bad-input class of
 * doc/model.md section 13.2, each giving "FILE:LINE: column 'X': ...", skipping its row and
 * letting the others through; and memfit search's jobs (section 13.1): what a job records and
 * pins, and its own bad rows.
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
    /* multi-token prediction (doc/model.md 2.6): a count up to layers, full training with
     * per-parameter optimizer states */
    {"name,model,seq,micro_batch,gpu_mem_gb,mtp_layers,finetune,optimizer\n"
     "a,gpt-1.3b,2048,1,80,-1,,\n"
     "b,gpt-1.3b,2048,1,80,25,,\n"
     "c,llama3.1-8b,2048,1,80,1,lora,\n"
     "d,llama3.1-8b,2048,1,80,1,,adamw8bit\n"
     "ok,llama3.1-8b,2048,1,80,1,,adamw-bf16\n"
     "none,gpt-1.3b,2048,1,80,0,,\n",
     "ok,none",
     "in.csv:2: column 'mtp_layers': '-1' is negative: expected a non-negative integer\n"
     "in.csv:3: column 'mtp_layers': '25' is more than layers (24)\n"
     "in.csv:4: column 'mtp_layers': '1' is not modelled with finetune=lora (multi-token "
     "prediction modules are trained from scratch, with the model)\n"
     "in.csv:5: column 'mtp_layers': '1' is not modelled with optimizer=adamw8bit (its states "
     "are counted tensor by tensor, the modules' are not)\n"},
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

    /* the embedding's and the loss's slots in the split (doc/model.md 6.3): 24 layers */
    {"name,model,seq,micro_batch,dp,pp,vpp,first_stage_layers,recompute,recompute_layers,"
     "global_batch,gpu_mem_gb,embedding_in_split,loss_in_split\n"
     "a,gpt-1.3b,2048,1,1,1,,,,,,80,yes,\n"
     "b,gpt-1.3b,2048,1,1,4,,5,,,,80,yes,yes\n"
     "c,gpt-1.3b,2048,1,1,4,,,,,,80,yes,\n"
     "d,gpt-1.3b,2048,1,1,2,4,,,,8,80,yes,yes\n"
     "e,gpt-1.3b,2048,1,1,2,13,,full,1,2,80,yes,yes\n"
     "f,gpt-1.3b,2048,1,1,5,,,,,,80,,maybe\n"
     "ok,gpt-1.3b,2048,1,1,2,13,,full,,2,80,yes,yes\n"
     "ok2,gpt-1.3b,2048,1,1,5,,,,,,80,no,yes\n"
     "ok3,gpt-1.3b,2048,1,1,2,,,full,1,,80,yes,yes\n",
     "ok,ok2,ok3",
     "in.csv:2: column 'embedding_in_split': 'yes' needs pipeline parallelism (pp > 1)\n"
     "in.csv:3: column 'embedding_in_split': 'yes' with first_stage_layers or last_stage_layers: "
     "one or the other\n"
     "in.csv:4: column 'embedding_in_split': 'yes': the 24 layers and 1 slot (25) do not divide "
     "evenly over pp 4\n"
     "in.csv:5: column 'vpp': '4' does not divide the 13 slots of every stage (layers, the "
     "embedding's, the loss's)\n"
     "in.csv:6: column 'recompute_layers': '1' with vpp 13 and the embedding's slot: not "
     "modelled (a chunk a layer short)\n"
     "in.csv:7: column 'loss_in_split': 'maybe' is not a boolean (0/1/yes/no/true/false)\n"},

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_inputs),
        cmocka_unit_test(jobs_record_gpus_and_pins),
        cmocka_unit_test(bad_jobs),
    };
    return cmocka_run_group_tests(tests, load_presets, free_presets);
}
