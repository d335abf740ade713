/*
 * config_training: how a row trains (config_internal.h): seq, micro_batch, global_batch,
 * precision, fp8, the implementation profile (impl) and the attention, offload, recompute, the
 * step's implementation (loss, grad_buffer, optimizer_impl), the optimizer and fine-tuning
 * (finetune, lora_rank, lora_targets); the layout columns are read here in their order
 * (config_parallel.c checks them), and fine-tuning's rules.
 */
#include "input/config_internal.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

static bool parse_recompute(struct row *row, struct scenario *sc)
{
    sc->recompute = RECOMPUTE_NONE;
    sc->ckpt_every = 0;
    const char *v = row->cell[COL_RECOMPUTE];
    if (!v || config_is_word(v, "none"))
        return true;
    if (config_is_word(v, "selective")) {
        sc->recompute = RECOMPUTE_SELECTIVE;
        return true;
    }
    sc->recompute = RECOMPUTE_EVERY_K;
    if (config_is_word(v, "full")) {
        sc->ckpt_every = 1;
        return true;
    }
    if (!isdigit((unsigned char)*v) && *v != '-')
        return config_row_error(row, COL_RECOMPUTE,
                                "'%s' is not none, selective, full or a positive integer k", v);
    return config_parse_uint(row, COL_RECOMPUTE, &sc->ckpt_every, false);
}

/* Block recomputation (doc/model.md 5.4; Megatron-LM --recompute-method block
 * --recompute-num-layers N): N layers of each chunk recomputed, with recompute=full only. */
static bool parse_recompute_layers(struct row *row, struct scenario *sc)
{
    sc->recompute_layers = 0;
    if (!row->cell[COL_RECOMPUTE_LAYERS])
        return true;
    if (!config_parse_uint(row, COL_RECOMPUTE_LAYERS, &sc->recompute_layers, false))
        return false;
    if (sc->recompute != RECOMPUTE_EVERY_K || sc->ckpt_every != 1)
        return config_row_error(row, COL_RECOMPUTE_LAYERS,
                                "'%s' needs recompute=full (the layers recomputed whole)",
                                row->cell[COL_RECOMPUTE_LAYERS]);
    return true;
}

/* Per-module selective recomputation (doc/model.md 5.5; Megatron-Core --recompute-modules): a
 * list of module names separated by spaces, '+' or ';', with recompute=selective only. */
static bool parse_recompute_modules(struct row *row, struct scenario *sc)
{
    sc->recompute_modules = 0;
    const char *v = row->cell[COL_RECOMPUTE_MODULES];
    if (!v)
        return true;
    if (sc->recompute != RECOMPUTE_SELECTIVE)
        return config_row_error(row, COL_RECOMPUTE_MODULES,
                                "'%s' needs recompute=selective (modules to recompute)", v);
    for (const char *p = v; *p;) {
        size_t n = strcspn(p, " +;");
        unsigned i = 0;
        while (n > 0 && i < RECOMPUTE_MODULES &&
               !(strlen(scenario_recompute_module_name(i)) == n &&
                 strncasecmp(p, scenario_recompute_module_name(i), n) == 0))
            i++;
        if (n > 0 && i == RECOMPUTE_MODULES)
            return config_row_error(row, COL_RECOMPUTE_MODULES,
                                    "'%.*s' is not one of core_attn, layernorm, mlp, moe_act, moe, "
                                    "shared_experts, mla_up_proj",
                                    (int)(n < 40 ? n : 40), p);
        if (n > 0)
            sc->recompute_modules |= 1u << i;
        p += n;
        p += *p != '\0';
    }
    if (sc->recompute_modules == 0)
        return config_row_error(row, COL_RECOMPUTE_MODULES, "'%s' names no module", v);
    if (sc->recompute_modules == RECOMPUTE_CORE_ATTN)
        sc->recompute_modules = 0; /* the default, one way (scenario_recompute_modules) */
    return true;
}

/* How the step is run (doc/model.md section 10.2); the defaults follow precision: Megatron-LM
 * fuses its cross-entropy and optimizer and keeps a persistent gradient buffer, PyTorch's eager
 * loop computes the loss eagerly, creates the gradients on demand and runs foreach AdamW. */
static bool parse_step_impl(struct row *row, struct scenario *sc)
{
    static const char *const losses[] = {"eager", "fused"};
    static const char *const buffers[] = {"on_demand", "persistent"};
    static const char *const impls[] = {"foreach", "fused", "single"};
    bool megatron = sc->precision == PRECISION_MEGATRON;
    int w;
    sc->loss = megatron ? LOSS_FUSED : LOSS_EAGER;
    sc->grad_buffer = megatron ? GRAD_PERSISTENT : GRAD_ON_DEMAND;
    sc->optimizer_impl = megatron ? OPTIMIZER_FUSED : OPTIMIZER_FOREACH;
    if (row->cell[COL_LOSS]) {
        if ((w = config_parse_word(row, COL_LOSS, losses, 2)) < 0)
            return false;
        sc->loss = (enum loss_impl)w;
    }
    if (row->cell[COL_GRAD_BUFFER]) {
        if ((w = config_parse_word(row, COL_GRAD_BUFFER, buffers, 2)) < 0)
            return false;
        sc->grad_buffer = (enum grad_buffer)w;
    }
    if (row->cell[COL_OPTIMIZER_IMPL]) {
        if ((w = config_parse_word(row, COL_OPTIMIZER_IMPL, impls, 3)) < 0)
            return false;
        sc->optimizer_impl = (enum optimizer_impl)w;
    }
    return true;
}

/* What is trained and by which optimizer (doc/model.md sections 3.5 and 3.6): only the syntax;
 * the rules between them and the other columns are config_check_tuning's. Most rows give none. */
static bool parse_tuning(struct row *row, struct scenario *sc)
{
    static const char *const optimizers[] = {"adamw", "adamw-bf16", "adamw8bit", "sgd"};
    static const char *const finetunes[] = {"full", "lora", "qlora"};
    static const char *const targets[] = {"qv", "all-linear"};
    int w;
    if (row->cell[COL_OPTIMIZER]) {
        if ((w = config_parse_word(row, COL_OPTIMIZER, optimizers, 4)) < 0)
            return false;
        sc->optimizer = (enum optimizer)w;
    }
    if (row->cell[COL_FINETUNE]) {
        if ((w = config_parse_word(row, COL_FINETUNE, finetunes, 3)) < 0)
            return false;
        sc->finetune = (enum finetune)w;
    }
    if (row->cell[COL_LORA_TARGETS]) {
        if ((w = config_parse_word(row, COL_LORA_TARGETS, targets, 2)) < 0)
            return false;
        sc->lora_targets = (enum lora_targets)w;
    }
    return config_opt_uint(row, COL_LORA_RANK, &sc->lora_rank, false);
}

/* The implementation profile (doc/model.md 4.12) and the attention: plain or flash, and under
 * hf and hf-peft also transformers' attn_implementation names (eager is plain,
 * flash_attention_2 flash, sdpa flash on K and V repeated to every head). */
static bool parse_impl(struct row *row, struct scenario *sc)
{
    static const char *const impls[] = {"memfit", "megatron", "hf", "hf-peft"};
    static const char *const attentions[] = {"plain", "flash", "eager", "flash_attention_2",
                                             "sdpa"};
    int w;
    if (row->cell[COL_IMPL]) {
        if ((w = config_parse_word(row, COL_IMPL, impls, IMPL_COUNT)) < 0)
            return false;
        sc->impl = (enum impl)w;
    }
    bool hf = sc->impl == IMPL_HF || sc->impl == IMPL_HF_PEFT;
    if (!row->cell[COL_ATTENTION])
        return true;
    for (size_t i = 2; i < 5 && !hf; i++)
        if (config_is_word(row->cell[COL_ATTENTION], attentions[i]))
            return config_row_error(row, COL_ATTENTION,
                                    "'%s' is transformers' attn_implementation: it needs impl=hf "
                                    "or hf-peft (else plain or flash)",
                                    row->cell[COL_ATTENTION]);
    if ((w = config_parse_word(row, COL_ATTENTION, attentions, hf ? 5 : 2)) < 0)
        return false;
    sc->attention = w == 0 || w == 2 ? ATTENTION_PLAIN : ATTENTION_FLASH;
    sc->sdpa = w == 4;
    return true;
}

bool config_parse_training(struct row *row, struct scenario *sc)
{
    static const char *const precisions[] = {"mixed", "autocast", "megatron", "frozen", "fp32"};
    static const char *const offloads[] = {"none", "optimizer", "checkpoints"};
    int w;
    if (!config_require(row, COL_SEQ) || !config_parse_uint(row, COL_SEQ, &sc->seq, false))
        return false;
    sc->micro_batch = 1; /* a job's, until the search picks it (unless its row pins it) */
    if ((!row->job || row->cell[COL_MICRO_BATCH]) &&
        (!config_require(row, COL_MICRO_BATCH) ||
         !config_parse_uint(row, COL_MICRO_BATCH, &sc->micro_batch, false)))
        return false;
    if (row->cell[COL_PRECISION]) {
        if ((w = config_parse_word(row, COL_PRECISION, precisions, 5)) < 0)
            return false;
        sc->precision = (enum precision)w;
    }
    if (row->cell[COL_FP8]) {
        static const char *const fp8s[] = {"none", "tensor", "mxfp8"};
        if ((w = config_parse_word(row, COL_FP8, fp8s, 3)) < 0)
            return false;
        sc->fp8 = (enum fp8)w;
    }
    if (!parse_impl(row, sc))
        return false;
    if (row->cell[COL_SCHEDULE]) {
        static const char *const schedules[] = {"1f1b", "zb1p", "dualpipe"};
        if ((w = config_parse_word(row, COL_SCHEDULE, schedules, 3)) < 0)
            return false;
        sc->schedule = (enum schedule)w;
    }
    if (row->cell[COL_OFFLOAD]) {
        if ((w = config_parse_word(row, COL_OFFLOAD, offloads, 3)) < 0)
            return false;
        sc->offload = (enum offload)w;
    }
    if (!parse_step_impl(row, sc) || !parse_tuning(row, sc))
        return false;
    uint64_t zero = 0;
    if (!parse_recompute(row, sc) || !parse_recompute_layers(row, sc) ||
        !parse_recompute_modules(row, sc) || !config_opt_uint(row, COL_DP, &sc->dp, false) ||
        !config_opt_uint(row, COL_TP, &sc->tp, false) ||
        !config_opt_uint(row, COL_PP, &sc->pp, false) || !config_opt_bool(row, COL_SP, &sc->sp) ||
        !config_opt_uint(row, COL_EP, &sc->ep, false) ||
        !config_opt_uint(row, COL_ETP, &sc->etp, false) ||
        !config_opt_uint(row, COL_MOE_MAX_NODES, &sc->moe_max_nodes, false) ||
        !config_opt_uint(row, COL_ZERO, &zero, true) ||
        !config_opt_uint(row, COL_GPUS_PER_NODE, &sc->gpus_per_node, false) ||
        !config_opt_uint(row, COL_CP, &sc->cp, false) ||
        !config_opt_uint(row, COL_VPP, &sc->vpp, false) ||
        !config_opt_uint(row, COL_FIRST_STAGE_LAYERS, &sc->first_stage_layers, true) ||
        !config_opt_uint(row, COL_LAST_STAGE_LAYERS, &sc->last_stage_layers, true) ||
        !config_opt_bool(row, COL_EMBEDDING_IN_SPLIT, &sc->embedding_in_split) ||
        !config_opt_bool(row, COL_LOSS_IN_SPLIT, &sc->loss_in_split) ||
        !config_opt_uint(row, COL_ZERO_GROUP, &sc->zero_group, false) ||
        !config_opt_uint(row, COL_MTP_LAYERS, &sc->mtp_layers, true))
        return false;
    if (zero > 3)
        return config_row_error(row, COL_ZERO, "'%s' is not a ZeRO stage 0-3", row->cell[COL_ZERO]);
    if (!config_parse_gpus(row, sc))
        return false;
    sc->zero = (unsigned)zero;
    /* A job's batch is fixed (the search divides it): no default from a layout it has not. */
    if ((row->job && !config_require(row, COL_GLOBAL_BATCH)) ||
        !config_opt_uint(row, COL_GLOBAL_BATCH, &sc->global_batch, false))
        return false;
    return true;
}

/* Multi-token prediction (doc/model.md 2.6 and 13.2): pre-training's, modelled with full
 * training and per-parameter optimizer states; at most one module per layer of the model. */
static bool check_mtp(struct row *row, const struct scenario *sc)
{
    if (sc->mtp_layers > sc->layers)
        return config_row_error(row, COL_MTP_LAYERS, "'%llu' is more than layers (%llu)",
                                ULL(sc->mtp_layers), ULL(sc->layers));
    if (sc->finetune != FINETUNE_FULL)
        return config_row_error(row, COL_MTP_LAYERS,
                                "'%llu' is not modelled with finetune=%s (multi-token prediction "
                                "modules are trained from scratch, with the model)",
                                ULL(sc->mtp_layers),
                                sc->finetune == FINETUNE_LORA ? "lora" : "qlora");
    if (sc->optimizer == OPTIM_ADAMW8BIT)
        return config_row_error(row, COL_MTP_LAYERS,
                                "'%llu' is not modelled with optimizer=adamw8bit (its states are "
                                "counted tensor by tensor, the modules' are not)",
                                ULL(sc->mtp_layers));
    return true;
}

/* Fine-tuning (doc/model.md sections 3.6 and 13.2) and the profile it runs under: hf and hf-peft
 * are transformers' Llama-family layer (4.12); the adapter columns need adapters; a frozen
 * base without adapters (precision=frozen) contradicts them; QLoRA computes in bf16; latent
 * attention has no q and v projections to take qv adapters. */
bool config_check_tuning(struct row *row, const struct scenario *sc)
{
    static const char *const names[] = {"full", "lora", "qlora"};
    if ((sc->impl == IMPL_HF || sc->impl == IMPL_HF_PEFT) && sc->arch == ARCH_GPT)
        return config_row_error(
            row, COL_IMPL,
            "'%s'%s follows transformers' Llama-family layer (modeling_llama.py): "
            "not possible with arch=gpt",
            sc->impl == IMPL_HF ? "hf" : "hf-peft", row->cell[COL_IMPL] ? "" : " (--impl)");
    if (sc->mtp_layers > 0 && !check_mtp(row, sc))
        return false;
    if (sc->finetune == FINETUNE_FULL) {
        static const enum col adapter_cols[] = {COL_LORA_RANK, COL_LORA_TARGETS};
        for (size_t i = 0; i < 2; i++)
            if (row->cell[adapter_cols[i]])
                return config_row_error(row, adapter_cols[i],
                                        "'%s' needs finetune=lora or qlora (an adapter column)",
                                        row->cell[adapter_cols[i]]);
        return true;
    }
    const char *ft = names[sc->finetune];
    if (sc->precision == PRECISION_FROZEN)
        return config_row_error(row, COL_FINETUNE,
                                "'%s' is not possible with precision=frozen, a frozen base without "
                                "adapters: finetune freezes the base, and precision says how the "
                                "adapters train",
                                ft);
    if (sc->finetune == FINETUNE_QLORA && sc->precision == PRECISION_FP32)
        return config_row_error(
            row, COL_FINETUNE,
            "'%s' needs a bf16 compute precision (mixed, autocast or megatron), not "
            "precision=fp32",
            ft);
    if (sc->kv_lora_rank > 0 && sc->lora_targets == LORA_QV)
        return config_row_error(
            row, COL_LORA_TARGETS,
            "'%s' is not possible with multi-head latent attention (kv_lora_rank), "
            "which has no v projection (V comes out of the kv up-projection with K): "
            "use all-linear",
            row->cell[COL_LORA_TARGETS] ? row->cell[COL_LORA_TARGETS] : "qv");
    return true;
}
