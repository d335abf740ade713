/*
 * config_parallel: the layout of a row (config_internal.h): gpus against dp, tp, pp and cp (a
 * job's count or range, and the degrees its row pins), context and pipeline parallelism, HSDP,
 * the interleaved schedule, and the rules between columns (every degree divides what it splits).
 */
#include "input/config_internal.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The layout columns a job's row may give, each pinning a choice of the search. */
static const struct {
    enum col col;
    enum scenario_pin pin;
} job_pins[] = {{COL_DP, SCENARIO_PIN_DP},
                {COL_TP, SCENARIO_PIN_TP},
                {COL_PP, SCENARIO_PIN_PP},
                {COL_VPP, SCENARIO_PIN_VPP},
                {COL_CP, SCENARIO_PIN_CP},
                {COL_EP, SCENARIO_PIN_EP},
                {COL_ETP, SCENARIO_PIN_ETP},
                {COL_SP, SCENARIO_PIN_SP},
                {COL_ZERO, SCENARIO_PIN_ZERO},
                {COL_ATTENTION, SCENARIO_PIN_ATTENTION},
                {COL_RECOMPUTE, SCENARIO_PIN_RECOMPUTE},
                {COL_OFFLOAD, SCENARIO_PIN_OFFLOAD},
                {COL_MICRO_BATCH, SCENARIO_PIN_MICRO_BATCH},
                {COL_ZERO_GROUP, SCENARIO_PIN_ZERO_GROUP},
                {COL_SCHEDULE, SCENARIO_PIN_SCHEDULE}};

/* Whether a job's row pins column c (a preset never sets a layout column). */
static bool pinned(const struct row *row, enum col c)
{
    return row->job && row->cell[c];
}

/*
 * A job's gpus (doc/model.md 13.1): a count, or a range A:B (A <= B, holding a multiple of
 * gpus_per_node) for the smallest count at which a layout fits, or nothing (0, for the
 * command line's range). Sets gpus, gpus_from, pinned, and
 * dp when the row leaves it out: gpus / (tp pp cp) of a count, 1 for a range. Each pinned degree
 * must divide a count, and so must the product of the pinned tp, pp, cp and dp (equal to it when
 * all four are pinned).
 */
static bool parse_job_gpus(struct row *row, struct scenario *sc)
{
    char cell[64];
    const char *text = row->cell[COL_GPUS], *colon;
    for (size_t i = 0; i < sizeof job_pins / sizeof job_pins[0]; i++)
        if (row->cell[job_pins[i].col])
            sc->pinned |= (unsigned)job_pins[i].pin;
    if (!text) /* 0: the caller's --gpus-range (memfit search says so when there is none) */
        return true;
    colon = strchr(text, ':');
    if (colon && (size_t)(colon - text) < sizeof cell) {
        /* Each end is parsed as a cell of its own, for config_parse_uint's messages. */
        memcpy(cell, text, (size_t)(colon - text));
        cell[colon - text] = '\0';
        row->cell[COL_GPUS] = cell;
        bool ok = config_parse_uint(row, COL_GPUS, &sc->gpus_from, false);
        row->cell[COL_GPUS] = colon + 1;
        ok = ok && config_parse_uint(row, COL_GPUS, &sc->gpus, false);
        row->cell[COL_GPUS] = text;
        if (!ok)
            return false;
        uint64_t n = sc->gpus_per_node, first = sc->gpus_from / n + (sc->gpus_from % n != 0);
        if (sc->gpus_from > sc->gpus)
            return config_row_error(row, COL_GPUS, "'%s' is a range A:B with A > B", text);
        if (first > sc->gpus / n)
            return config_row_error(
                row, COL_GPUS,
                "'%s' holds no multiple of gpus_per_node (%llu): the counts searched", text,
                ULL(n));
        return true;
    }
    if (!config_parse_uint(row, COL_GPUS, &sc->gpus, false))
        return false;
    static const enum col degrees[] = {COL_TP, COL_PP, COL_CP, COL_DP, COL_EP, COL_ZERO_GROUP};
    const uint64_t value[] = {sc->tp, sc->pp, sc->cp, sc->dp, sc->ep, sc->zero_group};
    uint64_t product = 1;
    unsigned n_pinned = 0;
    for (size_t i = 0; i < sizeof degrees / sizeof degrees[0]; i++) {
        if (!row->cell[degrees[i]])
            continue;
        if (sc->gpus % value[i])
            return config_row_error(row, degrees[i], "'%llu' does not divide gpus (%llu)",
                                    ULL(value[i]), ULL(sc->gpus));
        if (i > 3)
            continue;
        n_pinned++;
        if (__builtin_mul_overflow(product, value[i], &product) || sc->gpus % product)
            return config_row_error(
                row, degrees[i],
                "'%llu' times the other pinned degrees of tp, pp, cp and dp does not "
                "divide gpus (%llu)",
                ULL(value[i]), ULL(sc->gpus));
    }
    if (n_pinned == 4 && product != sc->gpus)
        return config_row_error(row, COL_DP, "dp * tp * pp * cp (%llu) is not gpus (%llu)",
                                ULL(product), ULL(sc->gpus));
    if (!row->cell[COL_DP])
        sc->dp = sc->gpus / (sc->tp * sc->pp * sc->cp);
    return true;
}

/* gpus, the GPUs of the layout, dp tp pp cp (doc/model.md 13.1): with dp left out it sets dp,
 * as search's jobs and fix_plan write it; with dp given it must agree. A job's: parse_job_gpus. */
bool config_parse_gpus(struct row *row, struct scenario *sc)
{
    if (row->job)
        return parse_job_gpus(row, sc);
    uint64_t gpus = 0, other;
    if (!config_opt_uint(row, COL_GPUS, &gpus, false))
        return false;
    sc->gpus = gpus;
    if (!gpus)
        return true;
    if (__builtin_mul_overflow(sc->tp * sc->pp, sc->cp, &other) || other == 0)
        return config_row_error(row, COL_GPUS, "'%llu': tp * pp * cp is too large", ULL(gpus));
    if (!row->cell[COL_DP]) {
        if (gpus % other)
            return config_row_error(row, COL_GPUS,
                                    "'%llu' is not a multiple of tp * pp * cp (%llu)", ULL(gpus),
                                    ULL(other));
        sc->dp = gpus / other;
        return true;
    }
    uint64_t have;
    if (__builtin_mul_overflow(sc->dp, other, &have) || have != gpus)
        return config_row_error(row, COL_GPUS, "'%llu' is not dp * tp * pp * cp (%llu * %llu)",
                                ULL(gpus), ULL(sc->dp), ULL(other));
    return true;
}

/* The embedding's and the loss's slots in the split (doc/model.md 6.3; Megatron-LM's
 * --account-for-embedding/loss-in-pipeline-split and get_num_layers_to_build): not with the ends
 * given; the layers and the slots divided evenly by pp (pp <= layers leaves a layer on each end),
 * each stage's slots by vpp; interleaved, no block recomputation (a chunk a layer short: not
 * modelled). */
static bool check_slots(struct row *row, const struct scenario *sc)
{
    enum col col = sc->embedding_in_split ? COL_EMBEDDING_IN_SPLIT : COL_LOSS_IN_SPLIT;
    uint64_t e = sc->embedding_in_split, t = sc->loss_in_split, n = sc->layers, pp = sc->pp;
    uint64_t v = sc->vpp ? sc->vpp : 1, slots = n + e + t;
    if (sc->first_stage_layers || sc->last_stage_layers)
        return config_row_error(row, col,
                                "'yes' with first_stage_layers or last_stage_layers: one or the "
                                "other");
    if (pp == 1)
        return config_row_error(row, col, "'yes' needs pipeline parallelism (pp > 1)");
    if (slots % pp)
        return config_row_error(row, col,
                                "'yes': the %llu layers and %llu slot%s (%llu) do not divide "
                                "evenly over pp %llu",
                                ULL(n), ULL(e + t), e + t > 1 ? "s" : "", ULL(slots), ULL(pp));
    uint64_t s = slots / pp; /* at least 2 with pp <= layers: a layer left on each end */
    if (s % v)
        return config_row_error(row, COL_VPP,
                                "'%llu' does not divide the %llu slots of every stage (layers, "
                                "the embedding's, the loss's)",
                                ULL(v), ULL(s));
    if (v > 1 && sc->recompute_layers)
        return config_row_error(row, COL_RECOMPUTE_LAYERS,
                                "'%llu' with vpp %llu and the %s's slot: not modelled (a chunk "
                                "a layer short)",
                                ULL(sc->recompute_layers), ULL(v), e ? "embedding" : "loss");
    return true;
}

/* The layers of each pipeline stage (doc/model.md 6.3): with first_stage_layers or
 * last_stage_layers, the rest the same number (at least one) on every other stage (Megatron-LM's
 * --decoder-first/last-pipeline-num-layers); with vpp, every stage's a multiple of vpp (Megatron-LM
 * builds vpp chunks of equal size on each stage). A job whose row leaves pp to the search: the
 * search keeps to these rules. */
static bool check_stages(struct row *row, const struct scenario *sc)
{
    uint64_t f = sc->first_stage_layers, l = sc->last_stage_layers, pp = sc->pp, n = sc->layers;
    enum col col = f ? COL_FIRST_STAGE_LAYERS : COL_LAST_STAGE_LAYERS;
    if (row->job && !pinned(row, COL_PP))
        return true;
    if (sc->embedding_in_split || sc->loss_in_split)
        return check_slots(row, sc);
    if (!f && !l) {
        uint64_t chunks;
        if (sc->vpp > 1 && (__builtin_mul_overflow(pp, sc->vpp, &chunks) || n % chunks))
            return config_row_error(row, COL_VPP,
                                    "pp * vpp (%llu * %llu) does not divide layers (%llu)", ULL(pp),
                                    ULL(sc->vpp), ULL(n));
        return true;
    }
    if (pp == 1)
        return config_row_error(row, col, "'%llu' needs pipeline parallelism (pp > 1)",
                                ULL(f ? f : l));
    uint64_t ends = (uint64_t)(f > 0) + (l > 0), mids = pp - ends, rest = n - f - l;
    if (f > n || l > n - f)
        return config_row_error(row, col,
                                "'%llu': the first and last stages would hold %llu of the %llu "
                                "layers",
                                ULL(f ? f : l), ULL(f + l), ULL(n));
    if (mids == 0 && rest)
        return config_row_error(row, col,
                                "'%llu' leaves %llu of the %llu layers to no stage (pp 2)",
                                ULL(f ? f : l), ULL(rest), ULL(n));
    if (mids && (rest < mids || rest % mids))
        return config_row_error(row, col,
                                "'%llu' leaves %llu of the %llu layers to the other %llu stages: "
                                "not the same number on each, at least one",
                                ULL(f ? f : l), ULL(rest), ULL(n), ULL(mids));
    uint64_t v = sc->vpp ? sc->vpp : 1, mid = mids ? rest / mids : 0;
    if (f % v || l % v || mid % v)
        return config_row_error(row, COL_VPP,
                                "'%llu' does not divide the layers of every stage (first %llu, "
                                "others %llu, last %llu)",
                                ULL(v), ULL(f ? f : mid), ULL(mid), ULL(l ? l : mid));
    return true;
}

/* The pipeline schedule (doc/model.md 6.4): ZB1P and DualPipe without interleaving; DualPipe an
 * even pp and an even number of micro-batches, at least 2 pp (DeepSeek-V3 report 3.2.1; the
 * DualPipe code's DualPipe.step checks num_chunks >= 2 num_ranks). */
static bool check_schedule(struct row *row, const struct scenario *sc)
{
    const char *name = scenario_schedule_name(sc->schedule);
    if (sc->schedule == SCHEDULE_1F1B || (row->job && !pinned(row, COL_PP)))
        return true;
    if (sc->pp == 1)
        return config_row_error(row, COL_SCHEDULE, "'%s' needs pipeline parallelism (pp > 1)",
                                name);
    if (sc->vpp > 1 && (!row->job || pinned(row, COL_VPP)))
        return config_row_error(row, COL_SCHEDULE, "'%s' has no interleaved form (vpp %llu)", name,
                                ULL(sc->vpp));
    if (sc->schedule == SCHEDULE_DUALPIPE && sc->pp % 2)
        return config_row_error(row, COL_SCHEDULE, "'dualpipe' needs an even pp (%llu)",
                                ULL(sc->pp));
    return true;
}

/* Context and pipeline parallelism, HSDP and the offload of checkpoints (doc/model.md 13.2). */
static bool check_parallel(struct row *row, const struct scenario *sc)
{
    if (sc->seq % sc->cp)
        return config_row_error(row, COL_CP, "'%llu' does not divide seq (%llu)", ULL(sc->cp),
                                ULL(sc->seq));
    /* A job's rules between layout columns hold for what its row pins; the search picks the rest
     * so that they hold. */
    bool job = row->job;
    if (sc->vpp > 1 && sc->pp == 1 && (!job || pinned(row, COL_PP)))
        return config_row_error(row, COL_VPP, "'%llu' needs pipeline parallelism (pp > 1)",
                                ULL(sc->vpp));
    if (!check_stages(row, sc) || !check_schedule(row, sc))
        return false;
    uint64_t group;
    if (__builtin_mul_overflow(sc->dp, sc->cp, &group))
        return config_row_error(row, COL_CP, "'%llu' times dp is too large", ULL(sc->cp));
    if (sc->zero_group && group % sc->zero_group && (!job || pinned(row, COL_DP)))
        return config_row_error(row, COL_ZERO_GROUP, "'%llu' does not divide dp * cp (%llu)",
                                ULL(sc->zero_group), ULL(group));
    if (sc->zero_group && sc->zero == 0 && (!job || pinned(row, COL_ZERO)))
        return config_row_error(row, COL_ZERO_GROUP,
                                "'%llu' needs zero >= 1 (a ZeRO shard to span)",
                                ULL(sc->zero_group));
    if (sc->offload == OFFLOAD_CHECKPOINTS && sc->recompute != RECOMPUTE_EVERY_K &&
        (!job || pinned(row, COL_RECOMPUTE)))
        return config_row_error(
            row, COL_OFFLOAD,
            "'checkpoints' needs recompute=full or every k (checkpoints to move)");
    return true;
}

/* The interleaved schedule runs the micro-batches in groups of pp (Megatron-LM's
 * get_pp_rank_microbatches): m = global_batch / (micro_batch dp) must be a multiple of pp.
 * DualPipe: see check_schedule. */
static bool check_interleaving(struct row *row, const struct scenario *sc, uint64_t step)
{
    uint64_t m = sc->global_batch / step;
    if (row->job) /* m follows the search's micro-batch and dp */
        return true;
    if (sc->schedule == SCHEDULE_DUALPIPE && (m % 2 || m < 2 * sc->pp))
        return config_row_error(row, COL_SCHEDULE,
                                "'dualpipe' needs an even number of micro-batches per step, at "
                                "least 2 pp (global_batch "
                                "/ (micro_batch * dp) = %llu, pp %llu)",
                                ULL(m), ULL(sc->pp));
    if (sc->vpp > 1 && m % sc->pp)
        return config_row_error(
            row, COL_VPP,
            "'%llu' needs micro-batches per step (global_batch / (micro_batch * dp) "
            "= %llu) to be a multiple of pp (%llu)",
            ULL(sc->vpp), ULL(m), ULL(sc->pp));
    return true;
}

/* The modules of recompute_modules the model has (doc/model.md 5.5): the MoE ones need experts
 * (shared_experts shared ones), mla_up_proj latent attention. */
static bool check_recompute_modules(struct row *row, const struct scenario *sc)
{
    unsigned m = sc->recompute_modules;
    const char *need = NULL, *name = NULL;
    if (m & (RECOMPUTE_MOE_ACT | RECOMPUTE_MOE | RECOMPUTE_SHARED_EXPERTS) &&
        (sc->experts == 0 || sc->dense_layers >= sc->layers)) {
        name = m & RECOMPUTE_MOE_ACT ? "moe_act" : m & RECOMPUTE_MOE ? "moe" : "shared_experts";
        need = "MoE layers (experts)";
    } else if (m & RECOMPUTE_SHARED_EXPERTS && sc->shared_ffn == 0) {
        name = "shared_experts";
        need = "shared experts (shared_ffn)";
    } else if (m & RECOMPUTE_MLA_UP_PROJ && sc->kv_lora_rank == 0) {
        name = "mla_up_proj";
        need = "multi-head latent attention (kv_lora_rank)";
    } else if (m & RECOMPUTE_MLP && sc->experts > 0 && sc->dense_layers == 0) {
        name = "mlp";
        need = "dense layers (dense_layers with experts)";
    }
    if (need)
        return config_row_error(row, COL_RECOMPUTE_MODULES, "'%s' needs %s", name, need);
    return true;
}

/* Rules between columns: every degree divides what it splits (doc/model.md section 13.2). */
bool config_check_consistency(struct row *row, const struct scenario *sc)
{
    if (!config_check_attention(row, sc))
        return false;
    /* A head width of its own (head_dim, or latent attention's) frees heads from hidden. */
    if (!row->cell[COL_HEAD_DIM] && sc->kv_lora_rank == 0 && sc->hidden % sc->heads)
        return config_row_error(row, COL_HEADS, "'%llu' does not divide hidden (%llu)",
                                ULL(sc->heads), ULL(sc->hidden));
    if (sc->heads % sc->kv_heads)
        return config_row_error(row, COL_KV_HEADS, "'%llu' does not divide heads (%llu)",
                                ULL(sc->kv_heads), ULL(sc->heads));
    if (sc->heads % sc->tp || sc->kv_heads % sc->tp)
        return config_row_error(row, COL_TP,
                                "'%llu' does not divide heads (%llu) and kv_heads (%llu)",
                                ULL(sc->tp), ULL(sc->heads), ULL(sc->kv_heads));
    if (sc->pp > sc->layers) /* every stage holds a layer (doc/model.md 6.3) */
        return config_row_error(row, COL_PP, "'%llu' is more than layers (%llu)", ULL(sc->pp),
                                ULL(sc->layers));
    if (sc->recompute == RECOMPUTE_EVERY_K && sc->ckpt_every > sc->layers)
        return config_row_error(row, COL_RECOMPUTE,
                                "checkpointing every %llu layers is more than layers (%llu)",
                                ULL(sc->ckpt_every), ULL(sc->layers));
    if (!check_recompute_modules(row, sc))
        return false;
    if (sc->recompute_layers > sc->layers)
        return config_row_error(row, COL_RECOMPUTE_LAYERS, "'%llu' is more than layers (%llu)",
                                ULL(sc->recompute_layers), ULL(sc->layers));
    if (sc->recompute_layers && sc->offload == OFFLOAD_CHECKPOINTS)
        return config_row_error(row, COL_RECOMPUTE_LAYERS,
                                "'%llu' is not possible with offload=checkpoints (every layer's "
                                "checkpoint moves)",
                                ULL(sc->recompute_layers));
    /* DualPipe's GPU holds two stages of different sizes: block recomputation per chunk is not
     * modelled there (doc/model.md 5.4). */
    if (sc->recompute_layers && sc->schedule == SCHEDULE_DUALPIPE)
        return config_row_error(row, COL_RECOMPUTE_LAYERS,
                                "'%llu' is not modelled with schedule=dualpipe (block "
                                "recomputation of a GPU's two stages)",
                                ULL(sc->recompute_layers));
    if (sc->arch == ARCH_LLAMA && sc->dropout)
        return config_row_error(row, COL_DROPOUT,
                                "'%s' is not possible with arch=llama (no dropout)",
                                row->cell[COL_DROPOUT] ? row->cell[COL_DROPOUT] : "yes");
    if (!config_check_experts(row, sc) || !check_parallel(row, sc) || !config_check_tuning(row, sc))
        return false;
    /* A job's: of its pinned micro_batch and dp, the search's b * dp a multiple of them. */
    uint64_t step, b = sc->micro_batch, dp = sc->dp;
    if (row->job) {
        b = pinned(row, COL_MICRO_BATCH) ? b : 1;
        dp = pinned(row, COL_DP) ? dp : 1;
    }
    if (__builtin_mul_overflow(b, dp, &step))
        return config_row_error(row, COL_DP, "'%llu' times micro_batch is too large", ULL(sc->dp));
    if (row->cell[COL_GLOBAL_BATCH] && sc->global_batch % step)
        return config_row_error(row, COL_GLOBAL_BATCH,
                                "'%llu' is not a multiple of micro_batch * dp (%llu)",
                                ULL(sc->global_batch), ULL(step));
    return check_interleaving(row, sc, step);
}
