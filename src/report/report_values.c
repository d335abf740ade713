/* report_values: see report_values.h. */
#include "report/report_values.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/checked.h"
#include "base/numfmt.h"
#include "model/cost.h"
#include "model/impl.h"
#include "report/validation_summary.h"

void report_values_rung_label(struct report_phrases *ph, const struct plan_rung *r, char *buf,
                              size_t size)
{
    char n[32], dp[32];
    numfmt_u64(dp, sizeof dp, r->sc.dp);
    switch (r->fix) {
    case PLAN_FIX_MICRO_BATCH:
        numfmt_u64(n, sizeof n, r->sc.micro_batch);
        report_say(buf, size, ph, NULL, REPORT_PHRASE_RUNG_MICRO_BATCH, "b", n, NULL);
        return;
    case PLAN_FIX_TP:
        numfmt_u64(n, sizeof n, r->sc.tp);
        report_say(buf, size, ph, NULL, REPORT_PHRASE_RUNG_TP, "tp", n, "dp", dp, NULL);
        return;
    case PLAN_FIX_PP:
        numfmt_u64(n, sizeof n, r->sc.pp);
        report_say(buf, size, ph, NULL, REPORT_PHRASE_RUNG_PP, "pp", n, "dp", dp, NULL);
        return;
    default: /* the rungs whose label has no number */
        break;
    }
    static const enum report_phrase plain[] = {
        [PLAN_FIX_FLASH] = REPORT_PHRASE_RUNG_FLASH,
        [PLAN_FIX_ZERO1] = REPORT_PHRASE_RUNG_ZERO1,
        [PLAN_FIX_ZERO2] = REPORT_PHRASE_RUNG_ZERO2,
        [PLAN_FIX_FULL_CKPT] = REPORT_PHRASE_RUNG_FULL_CKPT,
        [PLAN_FIX_ZERO3] = REPORT_PHRASE_RUNG_ZERO3,
        [PLAN_FIX_OFFLOAD] = REPORT_PHRASE_RUNG_OFFLOAD,
    };
    bool rung = r->fix != PLAN_FIX_NONE && r->fix != PLAN_FIX_NOTHING;
    report_say(buf, size, ph, NULL, rung ? plain[r->fix] : report_values_fix_phrase(r->fix), NULL);
}

/* Whether the closed formulas of doc/model.md sections 4.1-4.5 give sc's layer. */
static bool report_act_formula_closed(const struct scenario *sc)
{
    bool head_dim = sc->head_dim == 0 || sc->head_dim * sc->heads == sc->hidden;
    return sc->experts == 0 && sc->kv_lora_rank == 0 && head_dim && !sc->qk_norm &&
           sc->layer_norms <= 2 && sc->fp8 == FP8_NONE; /* FP8 inputs: doc/model.md 4.10 */
}

/*
 * Where plain attention's core outgrows the rest of the layer, as a formula and its value: the
 * symbols of doc/model.md 4.6 for the classic layers, else the model's coefficients in h and a
 * ("105.4h/(2a) = 3400").
 */
static void report_values_crossover(const struct scenario *sc, char *buf, size_t size)
{
    bool masks = sc->arch == ARCH_GPT && sc->dropout;
    bool classic = sc->head_dim == 0 && !sc->qk_norm && sc->layer_norms <= 2 && sc->experts == 0 &&
                   sc->kv_lora_rank == 0 && sc->fp8 == FP8_NONE;
    uint64_t linear, core;
    if (!model_core_coefficients(sc, &linear, &core)) {
        buf[0] = '\0';
        return;
    }
    double s = (double)linear / (double)core;
    if (classic)
        numfmt(buf, size, "%s = %.0f",
               sc->arch == ARCH_LLAMA ? "((12 + 4/g)h + 8f)/(2a)"
               : masks                ? "34h/(5a)"
                                      : "16h/a",
               s);
    else
        numfmt(buf, size, "%.1fh/(%.0fa) = %.0f", (double)linear / (double)sc->hidden,
               (double)core / (double)sc->heads, s);
}

void report_values_act_formula(struct report_phrases *ph, const struct scenario *sc,
                               const struct terms *t, char *buf, size_t size)
{
    /* The step model's A is in the precision's dtypes with the norms' statistics (doc/model.md
     * section 10.2), which the closed formulas of the lesson do not count. */
    bool step = sc->peak == PEAK_STEP;
    if (step || !report_act_formula_closed(sc)) {
        char sbh[32];
        double unit = (double)sc->seq * (double)sc->micro_batch * (double)sc->hidden;
        numfmt(sbh, sizeof sbh, "%.1f", unit > 0 ? (double)t->act_layer_bytes / unit : 0);
        report_say(buf, size, ph, NULL,
                   step ? REPORT_PHRASE_ACT_FORMULA_STEP : REPORT_PHRASE_ACT_FORMULA_KEPT, "sbh",
                   sbh, NULL);
        return;
    }
    bool flash = sc->attention == ATTENTION_FLASH;
    bool sel = sc->recompute == RECOMPUTE_SELECTIVE;
    const char *core = (sel && !flash) ? ""
                       : flash         ? " + 4asb"
                       : sc->dropout   ? " + 5as²b"
                                       : " + 2as²b";
    char lin[48];
    uint64_t g = sc->kv_heads ? sc->heads / sc->kv_heads : 1;
    if (sc->arch == ARCH_LLAMA) {
        if (g > 1)
            numfmt(lin, sizeof lin, "(12 + 4/%llu)sbh + 8sbf", (unsigned long long)g);
        else
            numfmt(lin, sizeof lin, "16sbh + 8sbf");
    } else if (g > 1) {
        numfmt(lin, sizeof lin, "(%d + 4/%llu)sbh", sc->dropout ? 30 : 28, (unsigned long long)g);
    } else {
        numfmt(lin, sizeof lin, "%dsbh", sc->dropout ? 34 : 32);
    }
    enum report_phrase id = sc->tp > 1 && sc->sp ? REPORT_PHRASE_ACT_FORMULA_TP_SP
                            : sc->tp > 1         ? REPORT_PHRASE_ACT_FORMULA_TP
                                                 : REPORT_PHRASE_ACT_FORMULA;
    report_say(buf, size, ph, NULL, id, "linear", lin, "core", core, NULL);
}

/* The GPU: its memory, how many, and the hardware line ("8 × H100 (80 GB each)"). */
static void report_values_hardware(struct report_sc *r, enum units u)
{
    const struct scenario *sc = r->sc;
    char(*v)[REPORT_VALUE_MAX] = r->vals.v;
    const size_t n = REPORT_VALUE_MAX;
    if (sc->gpu_preset[0])
        numfmt(v[REPORT_PH_GPU], n, "%s", sc->gpu_preset);
    else
        report_say(v[REPORT_PH_GPU], n, r->ph, NULL, REPORT_PHRASE_GPU_UNNAMED, NULL);
    numfmt_gpu_mem(v[REPORT_PH_GPU_MEM], n, sc->gpu_mem_bytes, u);
    uint64_t gpus = sc->dp * sc->tp * sc->pp * (sc->cp ? sc->cp : 1);
    numfmt_u64(v[REPORT_PH_GPUS], n, gpus);
    enum report_phrase id = sc->gpu_preset[0] ? REPORT_PHRASE_HARDWARE_PRESET
                            : gpus == 1       ? REPORT_PHRASE_HARDWARE_ONE
                                              : REPORT_PHRASE_HARDWARE_MANY;
    report_say(v[REPORT_PH_HARDWARE], n, r->ph, NULL, id, "gpus", v[REPORT_PH_GPUS], "gpu",
               v[REPORT_PH_GPU], "gpu_mem", v[REPORT_PH_GPU_MEM], NULL);
}

enum report_phrase report_values_phase_phrase(enum step_phase p)
{
    static const enum report_phrase words[STEP_PHASES] = {
        REPORT_PHRASE_PHASE_FORWARD, REPORT_PHRASE_PHASE_BACKWARD_START,
        REPORT_PHRASE_PHASE_RECOMPUTE, REPORT_PHRASE_PHASE_BACKWARD_END,
        REPORT_PHRASE_PHASE_OPTIMIZER};
    return (unsigned)p < STEP_PHASES ? words[p] : REPORT_PHRASE_PHASE_FORWARD;
}

/* The budget against the peak: the verdict and the headroom either way; under --peak step the
 * phase at the peak and the lesson's sum beside it. */
static void report_values_verdict(struct report_sc *r, enum units u)
{
    const struct scenario *sc = r->sc;
    const struct terms *t = &r->t;
    char(*v)[REPORT_VALUE_MAX] = r->vals.v;
    const size_t n = REPORT_VALUE_MAX;
    char a[64];
    numfmt(v[REPORT_PH_RESERVE], n, "%.0f%%", sc->reserve * 100);
    numfmt_size(v[REPORT_PH_BUDGET], n, t->budget_bytes, u);
    numfmt_size(v[REPORT_PH_PEAK], n, t->peak_bytes, u);
    numfmt_size(v[REPORT_PH_LESSON_PEAK], n, r->lesson.peak_bytes, u);
    if (sc->peak == PEAK_STEP)
        report_say(v[REPORT_PH_PEAK_PHASE], n, r->ph, NULL,
                   report_values_phase_phrase(t->peak_phase), NULL);
    report_say(v[REPORT_PH_VERDICT], n, r->ph, NULL,
               t->fits ? REPORT_PHRASE_VERDICT_WORD_FITS : REPORT_PHRASE_VERDICT_WORD_OOM, NULL);
    numfmt_size(a, sizeof a,
                t->fits ? t->budget_bytes - t->peak_bytes : t->peak_bytes - t->budget_bytes, u);
    report_say(v[REPORT_PH_HEADROOM], n, r->ph, NULL,
               t->fits ? REPORT_PHRASE_HEADROOM_SPARE : REPORT_PHRASE_HEADROOM_OVER, "amount", a,
               NULL);
}

/* The model's shape and the batch. */
static void report_values_shape(struct report_sc *r)
{
    const struct scenario *sc = r->sc;
    char(*v)[REPORT_VALUE_MAX] = r->vals.v;
    const size_t n = REPORT_VALUE_MAX;
    numfmt_count(v[REPORT_PH_PARAMS], n, r->t.params);
    numfmt_short(v[REPORT_PH_PARAMS_SHORT], n, r->t.params);
    numfmt_count(v[REPORT_PH_ACTIVE_PARAMS], n, r->t.active_params);
    numfmt_short(v[REPORT_PH_ACTIVE_SHORT], n, r->t.active_params);
    if (sc->experts > 0) /* the piece after Psi; a dense model's active parameters are Psi */
        report_say(v[REPORT_PH_ACTIVE], n, r->ph, NULL, REPORT_PHRASE_PARAMS_ACTIVE, "active_short",
                   v[REPORT_PH_ACTIVE_SHORT], NULL);
    numfmt_u64(v[REPORT_PH_EXPERTS], n, sc->experts);
    numfmt_u64(v[REPORT_PH_TOP_K], n, sc->top_k);
    numfmt_u64(v[REPORT_PH_EXPERT_FFN], n, sc->expert_ffn);
    numfmt_u64(v[REPORT_PH_SHARED_FFN], n, sc->shared_ffn);
    numfmt_u64(v[REPORT_PH_DENSE_LAYERS], n, sc->dense_layers);
    numfmt_u64(v[REPORT_PH_MTP_LAYERS], n, sc->mtp_layers);
    numfmt_u64(v[REPORT_PH_KV_LORA_RANK], n, sc->kv_lora_rank);
    numfmt_u64(v[REPORT_PH_LAYERS], n, sc->layers);
    numfmt_u64(v[REPORT_PH_HIDDEN], n, sc->hidden);
    numfmt_u64(v[REPORT_PH_HEADS], n, sc->heads);
    numfmt_u64(v[REPORT_PH_KV_HEADS], n, sc->kv_heads);
    numfmt_u64(v[REPORT_PH_VOCAB], n, sc->vocab);
    numfmt_u64(v[REPORT_PH_FFN], n, sc->ffn);
    numfmt_u64(v[REPORT_PH_SEQ], n, sc->seq);
    numfmt_u64(v[REPORT_PH_MICRO_BATCH], n, sc->micro_batch);
    numfmt_u64(v[REPORT_PH_GLOBAL_BATCH], n,
               sc->global_batch ? sc->global_batch : sc->micro_batch * sc->dp);
}

/* The recomputation as the report names it (doc/model.md 5.4, 5.5): recompute's own word, with
 * block recomputation's layers of each stage or selective recomputation's modules when given. */
static void recompute_label(const struct scenario *sc, char *out, size_t n)
{
    char k[24], mods[96];
    const char *name = scenario_recompute_name(sc, k, sizeof k);
    if (sc->recompute == RECOMPUTE_EVERY_K && sc->ckpt_every == 1 && sc->recompute_layers)
        numfmt(out, n, "%s, %llu layers of each stage", name,
               (unsigned long long)sc->recompute_layers);
    else if (*scenario_recompute_modules_name(sc, mods, sizeof mods))
        numfmt(out, n, "%s (%s)", name, mods);
    else
        numfmt(out, n, "%s", name);
}

/* Precision, attention, recomputation and the parallel layout ("dp=8, tp=1, pp=1, ZeRO-2"). */
static void report_values_setup(struct report_sc *r)
{
    const struct scenario *sc = r->sc;
    char(*v)[REPORT_VALUE_MAX] = r->vals.v;
    const size_t n = REPORT_VALUE_MAX;
    char stage[16], dp[32], tp[32], pp[64], tensor[64], zero[128], expert[128] = "";
    char num[32], num2[32], host[32];
    numfmt(v[REPORT_PH_PRECISION], n, "%s", scenario_precision_name(sc->precision));
    numfmt(v[REPORT_PH_FP8], n, "%s", scenario_fp8_name(sc->fp8));
    numfmt(v[REPORT_PH_ATTENTION], n, "%s", scenario_attention_name(sc->attention));
    recompute_label(sc, v[REPORT_PH_RECOMPUTE], n);
    numfmt(stage, sizeof stage, "%u", sc->zero);
    uint64_t group = model_zero_group(sc);
    numfmt_u64(num, sizeof num, group);
    report_say(zero, sizeof zero, r->ph, NULL,
               !sc->zero    ? REPORT_PHRASE_ZERO_NONE
               : group == 1 ? REPORT_PHRASE_ZERO_NO_EFFECT
               : sc->zero_group && group < sc->dp * (sc->cp ? sc->cp : 1)
                   ? REPORT_PHRASE_ZERO_GROUP
                   : REPORT_PHRASE_ZERO_STAGE,
               "stage", stage, "group", num, NULL);
    numfmt_u64(dp, sizeof dp, sc->dp);
    numfmt_u64(tp, sizeof tp, sc->tp);
    numfmt_u64(pp, sizeof pp, sc->pp);
    if (sc->vpp > 1) {
        numfmt_u64(num, sizeof num, sc->pp);
        numfmt_u64(num2, sizeof num2, sc->vpp);
        report_say(pp, sizeof pp, r->ph, NULL, REPORT_PHRASE_PIPELINE_VPP, "pp", num, "vpp", num2,
                   NULL);
    }
    size_t used = 0;
    if (sc->cp > 1) {
        numfmt_u64(num, sizeof num, sc->cp);
        report_say(expert, sizeof expert, r->ph, NULL, REPORT_PHRASE_PARALLEL_CP, "cp", num, NULL);
        used = strlen(expert);
    }
    report_say(tensor, sizeof tensor, r->ph, NULL,
               sc->sp ? REPORT_PHRASE_TENSOR_SP : REPORT_PHRASE_TENSOR, "tp", tp, NULL);
    uint64_t etp = sc->etp ? sc->etp : sc->tp;
    numfmt_u64(v[REPORT_PH_EP], n, sc->ep);
    numfmt_u64(v[REPORT_PH_ETP], n, etp);
    if (sc->experts > 0) /* etp only where it is not tp, its default */
        report_say(expert + used, sizeof expert - used, r->ph, NULL,
                   etp == sc->tp ? REPORT_PHRASE_PARALLEL_EP : REPORT_PHRASE_PARALLEL_EP_ETP, "ep",
                   v[REPORT_PH_EP], "etp", v[REPORT_PH_ETP], NULL);
    numfmt_size(host, sizeof host, r->t.host_bytes, r->units);
    char host_node[32], host_mem[96] = "", mem[32];
    numfmt_size(host_node, sizeof host_node, r->t.host_node_bytes, r->units);
    if (sc->host_mem_bytes > 0) { /* the GPU preset's host_mem_gb (doc/model.md 12.5) */
        numfmt_size(mem, sizeof mem, sc->host_mem_bytes, r->units);
        numfmt(host_mem, sizeof host_mem, r->t.host_fits ? " of its %s" : ": more than its %s",
               mem);
    }
    char pcie[32] = "";
    if (sc->offload == OFFLOAD_CHECKPOINTS) { /* their copies' time on the host link (12.5) */
        struct cost c;
        cost_step(sc, &r->t, &c);
        numfmt(pcie, sizeof pcie, "%.2f s", c.offload_s);
    }
    report_say(v[REPORT_PH_PARALLEL], n, r->ph, NULL,
               sc->offload == OFFLOAD_CHECKPOINTS ? REPORT_PHRASE_PARALLEL_OFFLOAD_CKPT
               : sc->offload                      ? REPORT_PHRASE_PARALLEL_OFFLOAD
                                                  : REPORT_PHRASE_PARALLEL,
               "dp", dp, "tensor", tensor, "pp", pp, "expert", expert, "zero", zero, "host", host,
               "host_node", host_node, "host_mem", host_mem, "pcie", pcie, NULL);
}

/* The cost model's notes (doc/model.md section 12): its rates for this scenario's GPU and matrix
 * sizes, and the step's parts. */
static void report_values_cost(struct report_sc *r, const struct cost *c)
{
    char(*v)[REPORT_VALUE_MAX] = r->vals.v;
    const size_t n = REPORT_VALUE_MAX;
    char gemm[16], tflops[16], mamf[16], in_training[16], fixed[16], hbm_eff[16], hbm[16];
    char link_eff[16], link[16], net_eff[16], net[16];
    numfmt(gemm, sizeof gemm, "%.0f%%", 100 * c->gemm_eff);
    numfmt(tflops, sizeof tflops, "%.0f", c->tflops);
    numfmt(mamf, sizeof mamf, "%.1f%%", 100 * c->gpu->gemm_eff);
    numfmt(in_training, sizeof in_training, "%.0f%%", 100 * COST_GEMM_IN_TRAINING);
    numfmt(fixed, sizeof fixed, "%.0f", 1e6 * COST_GEMM_FIXED_S);
    numfmt(hbm_eff, sizeof hbm_eff, "%.0f%%", 100 * COST_HBM_EFFICIENCY);
    numfmt(hbm, sizeof hbm, "%.3g", c->hbm_tb_s);
    numfmt(link_eff, sizeof link_eff, "%.0f%%", 100 * COST_LINK_EFFICIENCY);
    numfmt(link, sizeof link, "%.0f", c->link_gb_s);
    numfmt(net_eff, sizeof net_eff, "%.0f%%", 100 * COST_NET_EFFICIENCY);
    numfmt(net, sizeof net, "%.4g", c->net_gb_s);
    char rates[REPORT_VALUE_MAX];
    report_say(rates, sizeof rates, r->ph, NULL, REPORT_PHRASE_COST_RATES, "hbm_eff", hbm_eff,
               "hbm", hbm, "link_eff", link_eff, "link_gb_s", link, "net_eff", net_eff, "net_gb_s",
               net, NULL);
    report_say(v[REPORT_PH_COST_NOTE], n, r->ph, NULL, REPORT_PHRASE_COST_NOTE, "gemm", gemm,
               "tflops", tflops, "gpu_row", c->gpu->name, "mamf", mamf, "in_training", in_training,
               "fixed_us", fixed, "rates", rates, NULL);
    char step[32], compute[32], recompute[32], bubble[32], comm[32], dp[32], hidden[32];
    char offload[32], mean[16], worst[16];
    numfmt_seconds(step, sizeof step, c->total_s);
    numfmt_seconds(compute, sizeof compute, c->compute_s);
    numfmt_seconds(recompute, sizeof recompute, c->recompute_s);
    numfmt_seconds(bubble, sizeof bubble, c->bubble_s);
    numfmt_seconds(comm, sizeof comm, c->tp_s + c->cp_s + c->ep_s + c->pp_s);
    numfmt_seconds(dp, sizeof dp, c->dp_exposed_s);
    numfmt_seconds(hidden, sizeof hidden, c->dp_overlapped_s);
    numfmt_seconds(offload, sizeof offload, c->offload_s);
    numfmt(mean, sizeof mean, "%.1f%%", 100 * COST_TABLE1_MEAN_GAP);
    numfmt(worst, sizeof worst, "%.1f%%", 100 * COST_TABLE1_WORST_GAP);
    char rest[REPORT_VALUE_MAX];
    report_say(rest, sizeof rest, r->ph, NULL, REPORT_PHRASE_COST_STEP_REST, "offload", offload,
               "mean_gap", mean, "worst_gap", worst, NULL);
    report_say(v[REPORT_PH_COST_STEP_NOTE], n, r->ph, NULL, REPORT_PHRASE_COST_STEP_NOTE, "step",
               step, "compute", compute, "recompute", recompute, "bubble", bubble, "comm", comm,
               "dp_exposed", dp, "dp_hidden", hidden, "rest", rest, NULL);
    char tokens[32], mfu[16];
    numfmt_count(tokens, sizeof tokens, (uint64_t)(c->tokens_per_s + 0.5));
    numfmt(mfu, sizeof mfu, "%.1f%%", 100 * c->mfu);
    report_say(v[REPORT_PH_COST_RATE_NOTE], n, r->ph, NULL, REPORT_PHRASE_COST_RATE_NOTE,
               "tokens_per_s", tokens, "mfu", mfu, NULL);
}

/* The configuration: names, shape, batch, precision, parallelism, hardware. */
static void report_values_config(struct report_sc *r, enum units u)
{
    const struct scenario *sc = r->sc;
    char(*v)[REPORT_VALUE_MAX] = r->vals.v;
    const size_t n = REPORT_VALUE_MAX;
    numfmt(v[REPORT_PH_NAME], n, "%s", sc->name);
    report_say(v[REPORT_PH_ARCH], n, r->ph, NULL,
               sc->arch == ARCH_LLAMA ? REPORT_PHRASE_ARCH_LLAMA : REPORT_PHRASE_ARCH_GPT, NULL);
    if (sc->model_preset[0])
        numfmt(v[REPORT_PH_MODEL], n, "%s", sc->model_preset);
    else
        report_say(v[REPORT_PH_MODEL], n, r->ph, NULL, REPORT_PHRASE_MODEL_CUSTOM, NULL);
    report_values_hardware(r, u);
    report_values_verdict(r, u);
    report_values_shape(r);
    report_values_setup(r);
}

/* The capacity factor whose peak the report shows beside balanced routing (doc/model.md 4.7). */
#define REPORT_CAPACITY_FACTOR 1.25

/*
 * The routing of a mixture of experts: the peak with a capacity factor of 1.25 (the scenario
 * copied with capacity_factor = 1.25; the peak as configured when that overflows or for a dense
 * model), and the note on routing - balanced and dropless, where an unbalanced router can send
 * ep k T token copies to one GPU, or capped by the scenario's own capacity factor. T is the
 * tokens of a micro-batch on one GPU: s b, divided by t with sequence parallelism (doc/model.md
 * section 4.7, the worst case).
 */
static void report_values_routing(struct report_sc *r, enum units u)
{
    const struct scenario *sc = r->sc;
    char(*v)[REPORT_VALUE_MAX] = r->vals.v;
    const size_t n = REPORT_VALUE_MAX;
    if (sc->sliding_window) {
        char w[32];
        numfmt_count(w, sizeof w, sc->sliding_window);
        report_say(v[REPORT_PH_ATTENTION_NOTE], n, r->ph, NULL, REPORT_PHRASE_SLIDING_WINDOW_NOTE,
                   "window", w, NULL);
    }
    struct scenario capped = *sc;
    struct terms ct;
    capped.capacity_factor = REPORT_CAPACITY_FACTOR;
    bool ok = sc->experts > 0 && model_peak(&capped, &ct) == MODEL_OK;
    numfmt_size(v[REPORT_PH_PEAK_CF], n, ok ? ct.peak_bytes : r->t.peak_bytes, u);
    if (sc->experts == 0)
        return;
    uint64_t tokens = sc->seq * sc->micro_batch / (sc->sp && sc->tp > 1 ? sc->tp : 1);
    char t[32], routed[32], worst[32], cf[32];
    numfmt_count(t, sizeof t, tokens);
    struct checked ck = {false}; /* saturates; the model's own counts are larger */
    numfmt_count(routed, sizeof routed, ck_mul(&ck, tokens, sc->top_k));
    numfmt_count(worst, sizeof worst, ck_mul3(&ck, tokens, sc->top_k, sc->ep));
    if (sc->capacity_factor > 0) {
        numfmt(cf, sizeof cf, "%g", sc->capacity_factor);
        report_say(v[REPORT_PH_MOE_NOTE], n, r->ph, NULL, REPORT_PHRASE_MOE_NOTE_CAPACITY,
                   "capacity_factor", cf, "top_k", v[REPORT_PH_TOP_K], "experts",
                   v[REPORT_PH_EXPERTS], "tokens", t, NULL);
        return;
    }
    report_say(v[REPORT_PH_MOE_NOTE], n, r->ph, NULL, REPORT_PHRASE_MOE_NOTE_DROPLESS, "top_k",
               v[REPORT_PH_TOP_K], "experts", v[REPORT_PH_EXPERTS], "tokens", t, "routed", routed,
               "ep", v[REPORT_PH_EP], "worst", worst, "peak", v[REPORT_PH_PEAK], "peak_cf",
               v[REPORT_PH_PEAK_CF], NULL);
}

/* The caption of the checkpointing chart: what M(k) is without checkpointing and at the best k,
 * and, when the peak is at the optimizer step (no activations alive), why its curve is flat. */
static void report_values_kcurve(struct report_sc *r, enum units u)
{
    const struct scenario *sc = r->sc;
    const struct terms *t = &r->t;
    const struct pipeline_stage *first = &t->stage[MODEL_STAGE_FIRST].pipe;
    uint64_t none = 0, best = 0;
    if (model_stage_act(sc, t->act_layer_bytes, t->ckpt_bytes, first->in_flight, 0, &none) !=
            MODEL_OK ||
        model_stage_act(sc, t->act_layer_bytes, t->ckpt_bytes, first->in_flight, t->k_best,
                        &best) != MODEL_OK)
        return;
    char act_none[32], act_best[32];
    numfmt_size(act_none, sizeof act_none, none, u);
    numfmt_size(act_best, sizeof act_best, best, u);
    bool flat = sc->peak == PEAK_STEP && t->peak_phase == STEP_OPTIMIZER;
    enum report_phrase id = flat ? REPORT_PHRASE_KCURVE_NOTE_OPTIMIZER : REPORT_PHRASE_KCURVE_NOTE;
    /* The ks whose peak is the optimizer step's, the same bytes: where the curve is flat. */
    uint64_t n = sc->pp ? pipeline_max_stage_layers(sc) : 0, lo = 0, hi = 0;
    for (uint64_t k = 1; flat && k <= n; k++) {
        uint64_t p;
        if (model_ckpt_peak(sc, t, k, &p) != MODEL_OK)
            return;
        if (p != t->peak_bytes)
            continue;
        lo = lo ? lo : k;
        hi = k;
    }
    if (flat && (lo != 1 || hi != n))
        id = REPORT_PHRASE_KCURVE_NOTE_OPTIMIZER_RANGE;
    char k_lo[32], k_hi[32];
    numfmt_u64(k_lo, sizeof k_lo, lo);
    numfmt_u64(k_hi, sizeof k_hi, hi);
    report_say(r->vals.v[REPORT_PH_KCURVE_NOTE], REPORT_VALUE_MAX, r->ph, &r->vals, id, "act_none",
               act_none, "act_best", act_best, "k_lo", k_lo, "k_hi", k_hi, NULL);
}

/* Under --peak step: the caption of the phases chart, and the notes on the implementation
 * choices the step model assumed (the scenario's columns) and on its measurement. */
static void report_values_step(struct report_sc *r)
{
    const struct scenario *sc = r->sc;
    char(*v)[REPORT_VALUE_MAX] = r->vals.v;
    const size_t n = REPORT_VALUE_MAX;
    static const enum report_phrase precision[] = {
        [PRECISION_MIXED] = REPORT_PHRASE_PRECISION_MIXED,
        [PRECISION_AUTOCAST] = REPORT_PHRASE_PRECISION_AUTOCAST,
        [PRECISION_MEGATRON] = REPORT_PHRASE_PRECISION_MEGATRON,
        [PRECISION_FROZEN] = REPORT_PHRASE_PRECISION_FROZEN,
        [PRECISION_FP32] = REPORT_PHRASE_PRECISION_FP32,
    };
    static const enum report_phrase optimizer[] = {
        [OPTIMIZER_FOREACH] = REPORT_PHRASE_OPTIMIZER_FOREACH,
        [OPTIMIZER_FUSED] = REPORT_PHRASE_OPTIMIZER_FUSED,
        [OPTIMIZER_SINGLE] = REPORT_PHRASE_OPTIMIZER_SINGLE,
    };
    static const enum report_phrase impls[IMPL_COUNT] = {
        [IMPL_MEMFIT] = REPORT_PHRASE_IMPL_MEMFIT,
        [IMPL_MEGATRON] = REPORT_PHRASE_IMPL_MEGATRON,
        [IMPL_HF] = REPORT_PHRASE_IMPL_HF,
        [IMPL_HF_PEFT] = REPORT_PHRASE_IMPL_HF_PEFT,
    };
    char impl[200], loss[160], grads[160], opt[160], prec[160];
    report_say(impl, sizeof impl, r->ph, NULL,
               impls[(unsigned)sc->impl < IMPL_COUNT ? sc->impl : IMPL_MEMFIT], NULL);
    report_say(v[REPORT_PH_PHASES_NOTE], n, r->ph, &r->vals, REPORT_PHRASE_PHASES_NOTE, NULL);
    report_say(loss, sizeof loss, r->ph, NULL,
               sc->loss == LOSS_FUSED ? REPORT_PHRASE_LOSS_FUSED : REPORT_PHRASE_LOSS_EAGER, NULL);
    report_say(grads, sizeof grads, r->ph, NULL,
               sc->grad_buffer == GRAD_PERSISTENT ? REPORT_PHRASE_GRAD_PERSISTENT
                                                  : REPORT_PHRASE_GRAD_ON_DEMAND,
               NULL);
    report_say(opt, sizeof opt, r->ph, NULL,
               optimizer[(unsigned)sc->optimizer_impl <= OPTIMIZER_SINGLE ? sc->optimizer_impl
                                                                          : OPTIMIZER_FOREACH],
               NULL);
    report_say(
        prec, sizeof prec, r->ph, NULL,
        precision[(unsigned)sc->precision <= PRECISION_FP32 ? sc->precision : PRECISION_MIXED],
        NULL);
    report_say(v[REPORT_PH_STEP_NOTE], n, r->ph, NULL, REPORT_PHRASE_STEP_NOTE, "impl_choice", impl,
               "loss", loss, "grad_buffer", grads, "optimizer_impl", opt, "precision_choice", prec,
               NULL);
    report_say(v[REPORT_PH_STEP_VALIDATION], n, r->ph, NULL, REPORT_PHRASE_STEP_VALIDATION, NULL);
}

/* The layers of each stage, a group of three or more equal ones as "8 on 14 stages": "7, 8 on 14
 * stages, 7"; an even split its number alone (doc/model.md 6.3). */
static void stages_text(const struct pipeline_split *sp, uint64_t pp, char *buf, size_t size)
{
    const uint64_t count[3] = {sp->head, pp - sp->head - sp->tail, sp->tail};
    const uint64_t layers[3] = {sp->head_layers, sp->mid_layers, sp->tail_layers};
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < 3; i++) {
        char n[32], times[32];
        if (count[i] == 0 || used >= size)
            continue;
        numfmt_u64(n, sizeof n, layers[i]);
        numfmt_u64(times, sizeof times, count[i]);
        bool all = count[i] == pp; /* an even split: its layers alone */
        for (uint64_t k = 0; k < (count[i] > 2 ? 1 : count[i]) && used < size; k++) {
            bool group = count[i] > 2 && !all;
            int w = snprintf(buf + used, size - used, "%s%s%s%s%s", used ? ", " : "", n,
                             group ? " on " : "", group ? times : "", group ? " stages" : "");
            used += w > 0 ? (size_t)w : 0;
        }
    }
}

/* {{pipeline_note}} (doc/model.md 6.1, 6.3, 6.4): with pp > 1 the split of the layers, the
 * schedule and what it keeps in flight, the heaviest stage and the recomputation assumed. */
static void report_values_pipeline(struct report_sc *r)
{
    const struct scenario *sc = r->sc;
    char *out = r->vals.v[REPORT_PH_PIPELINE_NOTE];
    out[0] = '\0';
    if (sc->pp <= 1)
        return;
    struct pipeline_split sp = pipeline_split_of(sc);
    const struct pipeline_stage *st = &r->t.stage[r->t.peak_stage].pipe;
    char split[128], pp[32], vpp[32], rank[32], m[32], rec[64];
    stages_text(&sp, sc->pp, split, sizeof split);
    numfmt_u64(pp, sizeof pp, sc->pp);
    numfmt_u64(vpp, sizeof vpp, sc->vpp ? sc->vpp : 1);
    numfmt_u64(rank, sizeof rank, st->rank);
    numfmt_u64(m, sizeof m, st->in_flight);
    const char *how = scenario_recompute_name(sc, rec, sizeof rec);
    if (sc->recompute == RECOMPUTE_EVERY_K && sc->ckpt_every > 1)
        snprintf(rec, sizeof rec, "every %llu layers", (unsigned long long)sc->ckpt_every);
    else
        snprintf(rec, sizeof rec, "%s", how);
    enum report_phrase id = sc->schedule == SCHEDULE_DUALPIPE ? REPORT_PHRASE_PIPELINE_NOTE_DUALPIPE
                            : sc->schedule == SCHEDULE_ZB1P   ? REPORT_PHRASE_PIPELINE_NOTE_ZB1P
                            : sc->vpp > 1 ? REPORT_PHRASE_PIPELINE_NOTE_INTERLEAVED
                                          : REPORT_PHRASE_PIPELINE_NOTE_1F1B;
    report_say(out, REPORT_VALUE_MAX, r->ph, NULL, id, "pp", pp, "vpp", vpp, "split", split, "rank",
               rank, "m", m, "recompute", rec, NULL);
}

/* With FP8 training, the note on its weight copies (doc/model.md 3.7: per-tensor scaling's two,
 * Blackwell's one, MXFP8's two with their scales), the inputs the linears keep in FP8 (4.10) and
 * the FP8 GEMMs' rate in the cost model (12.1). Empty without FP8. */
static void report_values_fp8(struct report_sc *r, const struct cost *c, enum units u)
{
    const struct scenario *sc = r->sc;
    const size_t n = REPORT_VALUE_MAX;
    if (sc->fp8 == FP8_NONE)
        return;
    char copies[32], tflops[32], share[32];
    numfmt_size(copies, sizeof copies, r->t.fp8_bytes, u);
    numfmt(tflops, sizeof tflops, "%.0f", c->fp8_tflops);
    numfmt(share, sizeof share, "%.0f%%", 100 * c->fp8_share);
    report_say(r->vals.v[REPORT_PH_FP8_NOTE], n, r->ph, NULL,
               sc->fp8 == FP8_MXFP8 ? REPORT_PHRASE_FP8_NOTE_MXFP8
               : sc->fp8_one_copy   ? REPORT_PHRASE_FP8_NOTE_ONE_COPY
                                    : REPORT_PHRASE_FP8_NOTE_TENSOR,
               "copies", copies, "fp8_tflops", tflops, "fp8_share", share, NULL);
}

void report_values_optimizer_bytes(const struct scenario *sc, const struct model_gpu *g, char *buf,
                                   size_t size)
{
    struct states_per_param b = states_per_param(sc);
    uint64_t trained = g->trained_params;
    if (sc->optimizer != OPTIM_ADAMW8BIT || b.moments == 0 || trained == 0) {
        numfmt(buf, size, "%u", b.master + b.moments);
        return;
    }
    double moments = (double)(g->pool[0].moments + g->pool[1].moments) / (double)trained;
    numfmt(buf, size, "%.2f", b.master + moments);
}

/* The optimizer and what is trained (doc/model.md 3.5 and 3.6): the configuration's row, and the
 * note on them (empty for full training with AdamW). The bytes of the note are those of the
 * most loaded GPU, sharded as ZeRO-3 shards them. */
static void report_values_tuning(struct report_sc *r, enum units u)
{
    static const enum report_phrase optim[] = {[OPTIM_ADAMW] = REPORT_PHRASE_OPTIM_ADAMW,
                                               [OPTIM_ADAMW_BF16] = REPORT_PHRASE_OPTIM_ADAMW_BF16,
                                               [OPTIM_ADAMW8BIT] = REPORT_PHRASE_OPTIM_ADAMW8BIT,
                                               [OPTIM_SGD] = REPORT_PHRASE_OPTIM_SGD};
    const struct scenario *sc = r->sc;
    const struct model_gpu *g = &r->t.stage[r->t.peak_stage];
    char(*v)[REPORT_VALUE_MAX] = r->vals.v;
    const size_t n = REPORT_VALUE_MAX;
    char per[32], rank[32], targets[64], gpu_adapters[32];
    report_say(v[REPORT_PH_OPTIMIZER_NAME], n, r->ph, NULL,
               optim[(unsigned)sc->optimizer <= OPTIM_SGD ? sc->optimizer : OPTIM_ADAMW], NULL);
    report_values_optimizer_bytes(sc, g, per, sizeof per);
    numfmt_u64(rank, sizeof rank, sc->lora_rank);
    report_say(targets, sizeof targets, r->ph, NULL,
               sc->lora_targets == LORA_ALL_LINEAR ? REPORT_PHRASE_LORA_TARGETS_ALL
                                                   : REPORT_PHRASE_LORA_TARGETS_QV,
               NULL);
    numfmt_short(gpu_adapters, sizeof gpu_adapters, g->trained_params);
    bool fp32_base = states_per_param(sc).weights == 4;
    enum report_phrase ft = sc->finetune == FINETUNE_QLORA  ? REPORT_PHRASE_FINETUNE_QLORA
                            : sc->finetune == FINETUNE_FULL ? REPORT_PHRASE_FINETUNE_FULL
                            : fp32_base                     ? REPORT_PHRASE_FINETUNE_LORA_FP32
                                                            : REPORT_PHRASE_FINETUNE_LORA;
    report_say(v[REPORT_PH_FINETUNING], n, r->ph, NULL, ft, "rank", rank, "targets", targets, NULL);
    if (sc->finetune == FINETUNE_FULL) {
        if (sc->optimizer != OPTIM_ADAMW)
            report_say(v[REPORT_PH_TUNING_NOTE], n, r->ph, NULL,
                       REPORT_PHRASE_TUNING_NOTE_OPTIMIZER, "optimizer",
                       v[REPORT_PH_OPTIMIZER_NAME], "per_param", per, NULL);
        return;
    }
    if (sc->finetune == FINETUNE_LORA) {
        report_say(v[REPORT_PH_TUNING_NOTE], n, r->ph, NULL, REPORT_PHRASE_TUNING_NOTE_LORA,
                   "adapters", gpu_adapters, "optimizer", v[REPORT_PH_OPTIMIZER_NAME], "per_param",
                   per, NULL);
        return;
    }
    /* QLoRA: the NF4 weights and the fp32 rest of the base on the GPU. */
    uint64_t nf4[2] = {g->pool[0].nf4_bytes, g->pool[1].nf4_bytes};
    uint64_t rest[2] = {g->pool[0].frozen_bytes - nf4[0], g->pool[1].frozen_bytes - nf4[1]};
    if (sc->zero >= 3) {
        uint64_t over[2] = {model_zero_group(sc), model_expert_dp(sc)};
        for (int i = 0; i < 2; i++) {
            nf4[i] = div_up(nf4[i], over[i]);
            rest[i] = div_up(rest[i], over[i]);
        }
    }
    char nf4_s[32], fp32_s[32], bf16_s[32];
    numfmt_size(nf4_s, sizeof nf4_s, nf4[0] + nf4[1], u);
    numfmt_size(fp32_s, sizeof fp32_s, rest[0] + rest[1], u);
    numfmt_size(bf16_s, sizeof bf16_s, (rest[0] + rest[1]) / 2, u);
    report_say(v[REPORT_PH_TUNING_NOTE], n, r->ph, NULL, REPORT_PHRASE_TUNING_NOTE_QLORA, "nf4",
               nf4_s, "fp32", fp32_s, "bf16", bf16_s, "adapters", gpu_adapters, "optimizer",
               v[REPORT_PH_OPTIMIZER_NAME], "per_param", per, NULL);
}

/* The cheapest fix of a row that does not fit, with its notes; false on overflow. */
static bool report_cheapest(const struct scenario *sc, struct report_sc *r)
{
    if (cheapest_fix(sc, &r->t, NULL, NULL, &r->cheap) != 0)
        return false;
    cheapest_notes(sc, &r->t, NULL, &r->cheap);
    return true;
}

/* The memory terms, checkpointing, and the notes that depend on the model. */
static void report_values_terms(struct report_sc *r, enum units u)
{
    const struct scenario *sc = r->sc;
    const struct terms *t = &r->t;
    char(*v)[REPORT_VALUE_MAX] = r->vals.v;
    const size_t n = REPORT_VALUE_MAX;
    numfmt_size(v[REPORT_PH_STATES], n, t->states_bytes, u);
    numfmt_size(v[REPORT_PH_ACTIVATIONS], n, t->act_bytes, u);
    numfmt_size(v[REPORT_PH_ACT_LAYER], n, t->act_layer_bytes, u);
    numfmt_size(v[REPORT_PH_LOGITS], n, t->logits_bytes, u);
    const struct pipeline_stage *pipe = &t->stage[t->peak_stage].pipe;
    char rank[32];
    numfmt_u64(rank, sizeof rank, pipe->rank);
    report_say(v[REPORT_PH_STAGE], n, r->ph, NULL,
               sc->pp == 1   ? REPORT_PHRASE_STAGE_EACH
               : pipe->first ? REPORT_PHRASE_STAGE_FIRST
               : pipe->last  ? REPORT_PHRASE_STAGE_LAST
                             : REPORT_PHRASE_STAGE_MIDDLE,
               "rank", rank, NULL);
    numfmt_u64(v[REPORT_PH_K_BEST], n, t->k_best);
    numfmt(v[REPORT_PH_K_STAR], n, "%.2f", t->k_star);
    numfmt_size(v[REPORT_PH_ACT_K_BEST], n, t->act_k_best_bytes, u);
    numfmt_size(v[REPORT_PH_ACT_K_STAR], n, (uint64_t)model_act_k_star(sc, t), u);
    numfmt_u64(v[REPORT_PH_MAX_MICRO_BATCH], n, t->max_micro_batch);

    numfmt(v[REPORT_PH_SELECTIVE_OVERHEAD], n, "%.1f%%",
           100 * model_selective_overhead(sc->seq, sc->hidden));
    bool masks = sc->arch == ARCH_GPT && sc->dropout;
    numfmt(v[REPORT_PH_CORE_TERM], n, "%s", masks ? "5as²b" : "2as²b");
    report_values_crossover(sc, v[REPORT_PH_CORE_CROSSOVER], n);
    struct cost base;
    cost_step(sc, t, &base);
    numfmt(v[REPORT_PH_TFLOPS], n, "%.0f", base.tflops);
    numfmt(v[REPORT_PH_LINK], n, "%.0f", base.link_gb_s);
    numfmt_seconds(v[REPORT_PH_STEP_TIME], n, base.total_s);
    report_values_cost(r, &base);
    report_values_fp8(r, &base, u);
    report_values_tuning(r, u);
    bool step = sc->peak == PEAK_STEP;
    bool upcast = sc->arch == ARCH_LLAMA && impl_of(sc)->norm_upcast; /* doc/model.md 4.12 */
    report_say(v[REPORT_PH_NORM_NOTE], n, r->ph, NULL,
               upcast                   ? REPORT_PHRASE_NORM_NOTE_RMSNORM_HF
               : sc->arch == ARCH_LLAMA ? REPORT_PHRASE_NORM_NOTE_RMSNORM
               : step                   ? REPORT_PHRASE_NORM_NOTE_LAYERNORM_STEP
                                        : REPORT_PHRASE_NORM_NOTE_LAYERNORM,
               NULL);
    report_say(v[REPORT_PH_COUNTED_NOTE], n, r->ph, NULL,
               step ? REPORT_PHRASE_COUNTED_STEP : REPORT_PHRASE_COUNTED_LESSON, NULL);
    report_say(v[REPORT_PH_STEP_CHART_NOTE], n, r->ph, NULL,
               step ? REPORT_PHRASE_STEP_CHART_STEP : REPORT_PHRASE_STEP_CHART_LESSON, NULL);
    if (step)
        report_values_step(r);
    report_values_pipeline(r);
    report_values_routing(r, u);
    report_values_kcurve(r, u);
}

static void report_sc_values(struct report_sc *r, enum units u)
{
    report_values_config(r, u);
    report_values_terms(r, u);
    report_values_fix(r, u);
}

int report_sc_init(struct report_sc *r, const struct scenario *sc, enum units u,
                   struct report_phrases *ph, struct diag *d)
{
    memset(r, 0, sizeof *r);
    r->sc = sc;
    r->units = u;
    r->ph = ph;
    /* Under --peak step also the lesson's sum, exactly as --peak lesson computes it, and the
     * phases of the most loaded GPU part by part. */
    struct scenario lesson = *sc;
    lesson.peak = PEAK_LESSON;
    bool step = sc->peak == PEAK_STEP;
    if (model_eval(sc, &r->t) != MODEL_OK || plan_build(sc, &r->plan) != 0 ||
        (step && !r->t.fits && !report_cheapest(sc, r)) ||
        (step && (model_peak(&lesson, &r->lesson) != MODEL_OK ||
                  model_step_parts(sc, &r->t, r->t.peak_stage, &r->parts) != MODEL_OK))) {
        diag_report(d, NULL, 0,
                    "scenario '%s': a byte count overflows 64 bits; left out of the report",
                    sc->name);
        return -1;
    }
    if (!step)
        r->lesson = r->t;
    r->cheap_used = step && !r->t.fits && r->cheap.status == CHEAPEST_FOUND;
    plan_max_micro_batches(sc, r->max_b);
    report_sc_values(r, u);
    return 0;
}

void report_sc_share_doc(struct report_sc *r, const struct report_values *doc)
{
    memcpy(r->vals.v, doc->v, sizeof r->vals.v[0] * REPORT_PH_DOC_END);
}

void report_values_doc(struct report_values *vals, const struct report_doc_counts *c, enum units u,
                       const char *inputs, const char *validation_note, struct report_phrases *ph)
{
    char(*v)[REPORT_VALUE_MAX] = vals->v;
    const size_t m = REPORT_VALUE_MAX;
    size_t n = c->n, fit = c->fit;
    char count[32];
    numfmt(count, sizeof count, "%zu", n);
    report_say(v[REPORT_PH_TITLE], m, ph, NULL, REPORT_PHRASE_TITLE, NULL);
    if (inputs)
        numfmt(v[REPORT_PH_INPUTS], m, "%s", inputs);
    else
        report_say(v[REPORT_PH_INPUTS], m, ph, NULL, REPORT_PHRASE_INPUTS_UNNAMED, NULL);
    report_say(v[REPORT_PH_N_SCENARIOS], m, ph, NULL,
               n == 1 ? REPORT_PHRASE_N_SCENARIOS_ONE : REPORT_PHRASE_N_SCENARIOS_MANY, "n", count,
               NULL);
    numfmt(v[REPORT_PH_N_FIT], m, "%zu", fit);
    numfmt(v[REPORT_PH_N_OOM], m, "%zu", n - fit);
    numfmt(v[REPORT_PH_UNITS], m, "%s", units_name(u));
    report_say(v[REPORT_PH_UNIT_NOTE], m, ph, NULL,
               u == UNITS_GIB ? REPORT_PHRASE_UNIT_NOTE_GIB : REPORT_PHRASE_UNIT_NOTE_GB, NULL);
    /* One --peak for the whole run (the step's when any scenario uses it). */
    report_say(v[REPORT_PH_PEAK_DEFINITION], m, ph, NULL,
               c->step ? REPORT_PHRASE_PEAK_DEFINITION_STEP : REPORT_PHRASE_PEAK_DEFINITION_LESSON,
               NULL);
    if (validation_note) {
        numfmt(v[REPORT_PH_VALIDATION], m, "%s", validation_note);
    } else { /* the committed fixture's counts and worst gaps (validation_summary.h) */
        char meas[16], gpt[16], llama[16];
        numfmt(meas, sizeof meas, "%d", VALIDATION_MEASUREMENTS);
        numfmt(gpt, sizeof gpt, "%d", VALIDATION_GPT_SHAPES);
        numfmt(llama, sizeof llama, "%d", VALIDATION_LLAMA_SHAPES);
        report_say(v[REPORT_PH_VALIDATION], m, ph, NULL, REPORT_PHRASE_VALIDATION, "measurements",
                   meas, "gpt_shapes", gpt, "llama_shapes", llama, "gap_gpt",
                   VALIDATION_WORST_GAP_GPT, "gap_llama", VALIDATION_WORST_GAP_LLAMA, NULL);
    }
    numfmt(v[REPORT_PH_UTILISATION], m, "%.0f%%", 100 * COST_GEMM_IN_TRAINING);
    numfmt(v[REPORT_PH_INTERNODE], m, "%.0f", COST_INTERNODE_GB_S);
}
