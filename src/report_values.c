/* report_values: see report_values.h. */
#include "report_values.h"

#include "validation_summary.h"

#define STRINGIFY(x) #x
#define STR(x) STRINGIFY(x)

const char *report_validation_note(void)
{
    /* The counts and gaps are the committed fixture's (validation_summary.h, written from it). */
    return "Validated against PyTorch (tests/validation): the per-layer activations match the "
           "bytes autograd saves for backward (saved-tensor hooks, PyTorch 1.13, bf16) in " STR(
               VALIDATION_MEASUREMENTS) " measurements of " STR(VALIDATION_GPT_SHAPES) " GPT and " STR(VALIDATION_LLAMA_SHAPES) " Llama layer shapes, checkpointed layers to the byte; "
           "worst gap " VALIDATION_WORST_GAP_GPT " (GPT) and " VALIDATION_WORST_GAP_LLAMA
           " (Llama), the norm statistics left out.";
}

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "checked.h"
#include "cost.h"
#include "report_fmt.h"
#include "strbuf.h"

/* Every placeholder name, the document's first, in the order of enum report_ph less
 * REPORT_PH_DOC_END. */
#define REPORT_PH_NAME(id, name) name,
static const char *const report_values_all[] = {REPORT_DOC_PH(REPORT_PH_NAME)
                                                    REPORT_SC_PH(REPORT_PH_NAME)};
#undef REPORT_PH_NAME

const char *const *report_values_names(size_t *n)
{
    *n = sizeof report_values_all / sizeof *report_values_all;
    return report_values_all;
}

const char *report_values_lookup(void *ctx, const char *name)
{
    struct report_values *vals = ctx;
    for (size_t i = 0; i < REPORT_PH_COUNT - 1; i++)
        if (strcmp(report_values_all[i], name) == 0)
            return vals->v[i < REPORT_PH_DOC_END ? i : i + 1];
    return NULL;
}

static const char *report_fix_human(enum plan_fix f)
{
    switch (f) {
    case PLAN_FIX_NONE: return "none needed";
    case PLAN_FIX_FLASH: return "FlashAttention";
    case PLAN_FIX_ZERO1: return "ZeRO-1";
    case PLAN_FIX_ZERO2: return "ZeRO-2";
    case PLAN_FIX_MICRO_BATCH: return "a smaller micro-batch";
    case PLAN_FIX_FULL_CKPT: return "full activation checkpointing";
    case PLAN_FIX_ZERO3: return "ZeRO-3 (FSDP)";
    case PLAN_FIX_TP: return "tensor + sequence parallelism";
    case PLAN_FIX_OFFLOAD: return "optimizer offload";
    case PLAN_FIX_NOTHING: return "nothing on the ladder";
    }
    return "?";
}

void report_values_rung_label(const struct plan_rung *r, char *buf, size_t size)
{
    switch (r->fix) {
    case PLAN_FIX_MICRO_BATCH:
        report_fmt(buf, size, "b = %llu", (unsigned long long)r->sc.micro_batch);
        return;
    case PLAN_FIX_TP:
        report_fmt(buf, size, "tp = %llu", (unsigned long long)r->sc.tp);
        return;
    case PLAN_FIX_FULL_CKPT:
        report_fmt(buf, size, "full ckpt");
        return;
    case PLAN_FIX_FLASH:
        report_fmt(buf, size, "flash");
        return;
    case PLAN_FIX_OFFLOAD:
        report_fmt(buf, size, "offload");
        return;
    default:
        report_fmt(buf, size, "%s", report_fix_human(r->fix));
        return;
    }
}

void report_values_act_formula(const struct scenario *sc, char *buf, size_t size)
{
    bool flash = sc->attention == ATTENTION_FLASH;
    bool sel = sc->recompute == RECOMPUTE_SELECTIVE;
    const char *core = (sel && !flash) ? "" : flash ? " + 4asb" : sc->dropout ? " + 5as²b" : " + 2as²b";
    char lin[48];
    uint64_t g = sc->kv_heads ? sc->heads / sc->kv_heads : 1;
    if (sc->arch == ARCH_LLAMA) {
        if (g > 1)
            report_fmt(lin, sizeof lin, "(12 + 4/%llu)sbh + 8sbf", (unsigned long long)g);
        else
            report_fmt(lin, sizeof lin, "16sbh + 8sbf");
    } else if (g > 1) {
        report_fmt(lin, sizeof lin, "(%d + 4/%llu)sbh", sc->dropout ? 30 : 28,
                   (unsigned long long)g);
    } else {
        report_fmt(lin, sizeof lin, "%dsbh", sc->dropout ? 34 : 32);
    }
    if (sc->tp > 1 && sc->sp)
        report_fmt(buf, size, "(%s%s) / t", lin, core);
    else if (sc->tp > 1)
        report_fmt(buf, size, "%s%s, part / t", lin, core);
    else
        report_fmt(buf, size, "%s%s", lin, core);
}

/* The GPU: its memory, how many, and the hardware line ("8 × H100 (80 GB each)"). */
static void report_values_hardware(struct report_sc *r, enum units u)
{
    const struct scenario *sc = r->sc;
    char (*v)[REPORT_VALUE_MAX] = r->vals.v;
    const size_t n = REPORT_VALUE_MAX;
    report_fmt(v[REPORT_PH_GPU], n, "%s", sc->gpu_preset[0] ? sc->gpu_preset : "GPU");
    double mem = (double)sc->gpu_mem_bytes / units_bytes(u);
    if (fabs(mem - round(mem)) < 0.005)
        report_fmt(v[REPORT_PH_GPU_MEM], n, "%.0f %s", mem, units_name(u));
    else
        report_fmt_size(v[REPORT_PH_GPU_MEM], n, sc->gpu_mem_bytes, u);
    uint64_t gpus = sc->dp * sc->tp * sc->pp;
    report_fmt_u64(v[REPORT_PH_GPUS], n, gpus);
    if (sc->gpu_preset[0])
        report_fmt(v[REPORT_PH_HARDWARE], n, "%llu × %s (%s each)", (unsigned long long)gpus,
                   sc->gpu_preset, v[REPORT_PH_GPU_MEM]);
    else
        report_fmt(v[REPORT_PH_HARDWARE], n, "%llu GPU%s of %s", (unsigned long long)gpus,
                   gpus == 1 ? "" : "s", v[REPORT_PH_GPU_MEM]);
}

/* The budget against the peak: the verdict and the headroom either way. */
static void report_values_verdict(struct report_sc *r, enum units u)
{
    const struct scenario *sc = r->sc;
    const struct terms *t = &r->t;
    char (*v)[REPORT_VALUE_MAX] = r->vals.v;
    const size_t n = REPORT_VALUE_MAX;
    char a[64];
    report_fmt(v[REPORT_PH_RESERVE], n, "%.0f%%", sc->reserve * 100);
    report_fmt_size(v[REPORT_PH_BUDGET], n, t->budget_bytes, u);
    report_fmt_size(v[REPORT_PH_PEAK], n, t->peak_bytes, u);
    report_fmt(v[REPORT_PH_VERDICT], n, "%s", t->fits ? "fits" : "does not fit");
    if (t->fits) {
        report_fmt_size(a, sizeof a, t->budget_bytes - t->peak_bytes, u);
        report_fmt(v[REPORT_PH_HEADROOM], n, "%s to spare", a);
    } else {
        report_fmt_size(a, sizeof a, t->peak_bytes - t->budget_bytes, u);
        report_fmt(v[REPORT_PH_HEADROOM], n, "%s over the budget", a);
    }
}

/* The model's shape and the batch. */
static void report_values_shape(struct report_sc *r)
{
    const struct scenario *sc = r->sc;
    char (*v)[REPORT_VALUE_MAX] = r->vals.v;
    const size_t n = REPORT_VALUE_MAX;
    report_fmt_count(v[REPORT_PH_PARAMS], n, r->t.params);
    report_fmt_short(v[REPORT_PH_PARAMS_SHORT], n, r->t.params);
    report_fmt_u64(v[REPORT_PH_LAYERS], n, sc->layers);
    report_fmt_u64(v[REPORT_PH_HIDDEN], n, sc->hidden);
    report_fmt_u64(v[REPORT_PH_HEADS], n, sc->heads);
    report_fmt_u64(v[REPORT_PH_KV_HEADS], n, sc->kv_heads);
    report_fmt_u64(v[REPORT_PH_VOCAB], n, sc->vocab);
    report_fmt_u64(v[REPORT_PH_FFN], n, sc->ffn);
    report_fmt_u64(v[REPORT_PH_SEQ], n, sc->seq);
    report_fmt_u64(v[REPORT_PH_MICRO_BATCH], n, sc->micro_batch);
    report_fmt_u64(v[REPORT_PH_GLOBAL_BATCH], n,
                   sc->global_batch ? sc->global_batch : sc->micro_batch * sc->dp);
}

/* Precision, attention, recomputation and the parallel layout. */
static void report_values_setup(struct report_sc *r)
{
    const struct scenario *sc = r->sc;
    char (*v)[REPORT_VALUE_MAX] = r->vals.v;
    const size_t n = REPORT_VALUE_MAX;
    char a[64];
    report_fmt(v[REPORT_PH_PRECISION], n, "%s", scenario_precision_name(sc->precision));
    report_fmt(v[REPORT_PH_ATTENTION], n, "%s", scenario_attention_name(sc->attention));
    report_fmt(v[REPORT_PH_RECOMPUTE], n, "%s", scenario_recompute_name(sc, a, sizeof a));
    if (sc->zero && sc->dp == 1)
        report_fmt(a, sizeof a, "ZeRO-%u (no effect with dp=1)", sc->zero);
    else if (sc->zero)
        report_fmt(a, sizeof a, "ZeRO-%u", sc->zero);
    else
        report_fmt(a, sizeof a, "no ZeRO");
    report_fmt(v[REPORT_PH_PARALLEL], n, "dp=%llu, tp=%llu%s, pp=%llu, %s%s",
               (unsigned long long)sc->dp, (unsigned long long)sc->tp, sc->sp ? " + sp" : "",
               (unsigned long long)sc->pp, a, sc->offload ? ", optimizer offloaded" : "");
}

/* The configuration: names, shape, batch, precision, parallelism, hardware. */
static void report_values_config(struct report_sc *r, enum units u)
{
    const struct scenario *sc = r->sc;
    char (*v)[REPORT_VALUE_MAX] = r->vals.v;
    const size_t n = REPORT_VALUE_MAX;
    report_fmt(v[REPORT_PH_NAME], n, "%s", sc->name);
    report_fmt(v[REPORT_PH_ARCH], n, "%s", sc->arch == ARCH_LLAMA ? "Llama" : "GPT");
    report_fmt(v[REPORT_PH_MODEL], n, "%s",
               sc->model_preset[0] ? sc->model_preset : "custom model");
    report_values_hardware(r, u);
    report_values_verdict(r, u);
    report_values_shape(r);
    report_values_setup(r);
}

/* The memory terms, checkpointing, and the notes that depend on the model. */
static void report_values_terms(struct report_sc *r, enum units u)
{
    const struct scenario *sc = r->sc;
    const struct terms *t = &r->t;
    char (*v)[REPORT_VALUE_MAX] = r->vals.v;
    const size_t n = REPORT_VALUE_MAX;
    report_fmt_size(v[REPORT_PH_STATES], n, t->states_bytes, u);
    report_fmt_size(v[REPORT_PH_ACTIVATIONS], n, t->act_bytes, u);
    report_fmt_size(v[REPORT_PH_ACT_LAYER], n, t->act_layer_bytes, u);
    report_fmt_size(v[REPORT_PH_LOGITS], n, t->logits_bytes, u);
    if (sc->pp > 1)
        report_fmt(v[REPORT_PH_STAGE], n, "the %s pipeline stage",
                   t->peak_stage == MODEL_STAGE_FIRST ? "first" : "last");
    else
        report_fmt(v[REPORT_PH_STAGE], n, "each GPU");
    report_fmt_u64(v[REPORT_PH_K_BEST], n, t->k_best);
    report_fmt(v[REPORT_PH_K_STAR], n, "%.2f", t->k_star);
    report_fmt_size(v[REPORT_PH_ACT_K_BEST], n, t->act_k_best_bytes, u);
    /* Lesson section 3: M(k*) = 2 sqrt(L c A), the continuous optimum (pp = 1 form). */
    double m_star = 2 * sqrt((double)sc->layers * (double)t->ckpt_bytes * (double)t->act_layer_bytes);
    report_fmt_size(v[REPORT_PH_ACT_K_STAR], n, (uint64_t)m_star, u);
    report_fmt_u64(v[REPORT_PH_MAX_MICRO_BATCH], n, t->max_micro_batch);

    report_fmt(v[REPORT_PH_SELECTIVE_OVERHEAD], n, "%.1f%%",
               100 * model_selective_overhead(sc->seq, sc->hidden));
    bool masks = sc->arch == ARCH_GPT && sc->dropout;
    report_fmt(v[REPORT_PH_CORE_TERM], n, "%s", masks ? "5as²b" : "2as²b");
    report_fmt(v[REPORT_PH_CORE_CROSSOVER], n, "%s = %.0f",
               sc->arch == ARCH_LLAMA ? "((12 + 4/g)h + 8f)/(2a)"
               : masks                ? "34h/(5a)"
                                      : "16h/a",
               model_core_crossover_seq(sc));
    struct cost base;
    cost_step(sc, t, &base);
    report_fmt(v[REPORT_PH_TFLOPS], n, "%.0f", base.tflops);
    report_fmt(v[REPORT_PH_LINK], n, "%.0f", base.link_gb_s);
    report_fmt_seconds(v[REPORT_PH_STEP_TIME], n, base.total_s);
    if (sc->arch == ARCH_LLAMA)
        report_fmt(v[REPORT_PH_NORM_NOTE], n,
                   "RMSNorm is counted as a fused kernel that keeps its input and one "
                   "fp32 1/rms per row; a written-out RMSNorm in eager PyTorch keeps "
                   "x² and x·rsqrt as well: +8 sbh per layer.");
    else
        report_fmt(v[REPORT_PH_NORM_NOTE], n,
                   "LayerNorm keeps its input (2 sbh per norm); its mean and variance "
                   "(two fp32 numbers per row) are left out.");
}

/* The extra time of the fix rung fr over the base step, or that there is none. */
static void fix_cost_time(struct strbuf *sb, const struct plan_rung *fr, const struct cost *bc)
{
    char a[64], b[64];
    if (fr->extra_time_s <= 1e-9) {
        strbuf_puts(sb, "no extra compute or traffic in the cost model");
        return;
    }
    report_fmt_seconds(a, sizeof a, fr->extra_time_s);
    report_fmt_seconds(b, sizeof b, bc->total_s);
    double pct = bc->total_s > 0 ? 100.0 * fr->extra_time_s / bc->total_s : 0;
    strbuf_printf(sb, "+%s per step (+%.1f%% of the %s step)", a, pct, b);
}

/* ": recomputation 12 ms, ..." - the parts of the cost model that grew. */
static void fix_cost_parts(struct strbuf *sb, const struct cost *fc, const struct cost *bc)
{
    const struct {
        double s;
        const char *what;
    } parts[] = {
        {fc->recompute_s - bc->recompute_s, "recomputation"},
        {fc->dp_extra_s - bc->dp_extra_s, "ZeRO-3 parameter traffic"},
        {fc->tp_s - bc->tp_s, "tensor-parallel all-reduces"},
        {fc->offload_s - bc->offload_s, "PCIe offload traffic"},
    };
    const char *sep = ": ";
    char c[64];
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        if (parts[i].s <= 1e-9)
            continue;
        report_fmt_seconds(c, sizeof c, parts[i].s);
        strbuf_printf(sb, "%s%s %s", sep, parts[i].what, c);
        sep = ", ";
    }
}

/* A smaller micro-batch b' keeps the global batch by gradient accumulation, exactly when b'
 * divides the batch of a rank. */
static void fix_cost_accumulation(struct strbuf *sb, const struct scenario *sc,
                                  const struct plan_rung *fr)
{
    uint64_t per_rank = (sc->global_batch ? sc->global_batch : sc->micro_batch * sc->dp) /
                        (sc->dp ? sc->dp : 1);
    uint64_t b2 = fr->sc.micro_batch, steps = div_up(per_rank, b2);
    if (b2 >= sc->micro_batch)
        return;
    if (per_rank % b2 == 0) {
        strbuf_printf(sb,
                      "; gradient accumulation over %llu micro-batches per step keeps the global "
                      "batch",
                      (unsigned long long)steps);
        return;
    }
    strbuf_printf(sb,
                  "; gradient accumulation over %llu micro-batches per step makes the global "
                  "batch %llu instead of %llu (or use a b' that divides %llu)",
                  (unsigned long long)steps, (unsigned long long)(steps * b2 * sc->dp),
                  (unsigned long long)(per_rank * sc->dp), (unsigned long long)per_rank);
}

/* The extra compute or traffic of the fix, from the planner's cost model. */
static void report_values_fix_cost(struct report_sc *r)
{
    const struct plan *p = &r->plan;
    struct strbuf sb;
    strbuf_init_fixed(&sb, r->vals.v[REPORT_PH_FIX_COST], REPORT_VALUE_MAX);
    if (p->fix_rung < 0) {
        strbuf_puts(&sb, p->fix == PLAN_FIX_NONE ? "nothing: the scenario fits as it is"
                                                 : "not applicable: no rung fits");
        return;
    }
    const struct plan_rung *fr = &p->rungs[p->fix_rung];
    fix_cost_time(&sb, fr, &p->base_cost);
    fix_cost_parts(&sb, &fr->cost, &p->base_cost);
    fix_cost_accumulation(&sb, r->sc, fr);
    if (fr->thin_matmuls)
        strbuf_printf(&sb, "; warning: %llu tokens per micro-batch make thin matmuls (under %d)",
                      (unsigned long long)(fr->sc.micro_batch * r->sc->seq), PLAN_THIN_TOKENS);
}

/* The one sentence of the answer: no fix needed, the cheapest fix, or nothing fits. */
static void report_values_fix_sentence(struct report_sc *r)
{
    const struct plan *p = &r->plan;
    char (*v)[REPORT_VALUE_MAX] = r->vals.v;
    const size_t n = REPORT_VALUE_MAX;
    if (p->fix == PLAN_FIX_NONE)
        report_fmt(v[REPORT_PH_FIX_SENTENCE], n,
                   "No fix is needed. The largest micro-batch that fits with these settings is %s.",
                   v[REPORT_PH_MAX_MICRO_BATCH]);
    else if (p->fix == PLAN_FIX_NOTHING)
        report_fmt(
            v[REPORT_PH_FIX_SENTENCE], n,
            "No rung of the ladder fits: even with every fix the peak is %s. The model states "
            "alone, fully sharded, need at least %llu GPUs of %s.",
            v[REPORT_PH_FIX_PEAK], (unsigned long long)p->gpus_for_states, v[REPORT_PH_GPU_MEM]);
    else
        report_fmt(v[REPORT_PH_FIX_SENTENCE], n,
                   "The cheapest fix is %s (%s): peak %s at micro-batch %llu; %s.",
                   report_fix_human(p->fix), v[REPORT_PH_FIX_PLAN], v[REPORT_PH_FIX_PEAK],
                   (unsigned long long)p->fix_micro_batch, v[REPORT_PH_FIX_COST]);
}

/* The fix ladder's answer and its cost (plan.h, cost.h). */
static void report_values_fix(struct report_sc *r, enum units u)
{
    const struct plan *p = &r->plan;
    char (*v)[REPORT_VALUE_MAX] = r->vals.v;
    const size_t n = REPORT_VALUE_MAX;
    report_fmt(v[REPORT_PH_FIX], n, "%s", report_fix_human(p->fix));
    plan_fix_settings(p, v[REPORT_PH_FIX_PLAN], n);
    if (!v[REPORT_PH_FIX_PLAN][0])
        report_fmt(v[REPORT_PH_FIX_PLAN], n, "%s", p->fix == PLAN_FIX_NONE ? "no change" : "none");
    report_fmt_size(v[REPORT_PH_FIX_PEAK], n, p->fix_peak_bytes, u);
    report_fmt_u64(v[REPORT_PH_FIX_MICRO_BATCH], n, p->fix_micro_batch);
    report_values_fix_cost(r);
    report_fmt_u64(v[REPORT_PH_GPUS_FOR_STATES], n, p->gpus_for_states);
    report_values_fix_sentence(r);
}

static void report_sc_values(struct report_sc *r, enum units u)
{
    report_values_config(r, u);
    report_values_terms(r, u);
    report_values_fix(r, u);
}

int report_sc_init(struct report_sc *r, const struct scenario *sc, enum units u,
                   struct diag *d)
{
    memset(r, 0, sizeof *r);
    r->sc = sc;
    r->units = u;
    if (model_eval(sc, &r->t) != MODEL_OK || plan_build(sc, &r->plan) != 0) {
        diag_report(d, NULL, 0, "scenario '%s': a byte count overflows 64 bits", sc->name);
        return -1;
    }
    plan_max_micro_batches(sc, r->max_b);
    report_sc_values(r, u);
    return 0;
}

void report_sc_share_doc(struct report_sc *r, const struct report_values *doc)
{
    memcpy(r->vals.v, doc->v, sizeof r->vals.v[0] * REPORT_PH_DOC_END);
}

void report_values_doc(struct report_values *vals, const struct report_sc *scs, size_t n,
                       enum units u, const char *inputs, const char *validation_note)
{
    char (*v)[REPORT_VALUE_MAX] = vals->v;
    const size_t m = REPORT_VALUE_MAX;
    size_t fit = 0;
    for (size_t i = 0; i < n; i++)
        fit += scs[i].t.fits;
    report_fmt(v[REPORT_PH_TITLE], m, "GPU memory capacity report");
    report_fmt(v[REPORT_PH_INPUTS], m, "%s", inputs ? inputs : "the scenarios given");
    report_fmt(v[REPORT_PH_N_SCENARIOS], m, "%zu scenario%s", n, n == 1 ? "" : "s");
    report_fmt(v[REPORT_PH_N_FIT], m, "%zu", fit);
    report_fmt(v[REPORT_PH_N_OOM], m, "%zu", n - fit);
    report_fmt(v[REPORT_PH_UNITS], m, "%s", units_name(u));
    report_fmt(v[REPORT_PH_UNIT_NOTE], m, "%s",
               u == UNITS_GIB ? "1 GiB = 2³⁰ = 1,073,741,824 bytes"
                              : "1 GB = 10⁹ bytes (not GiB = 2³⁰ bytes)");
    report_fmt(v[REPORT_PH_VALIDATION], m, "%s",
               validation_note ? validation_note : report_validation_note());
    report_fmt(v[REPORT_PH_UTILISATION], m, "%.0f%%", 100 * COST_UTILISATION);
    report_fmt(v[REPORT_PH_INTERNODE], m, "%.0f", COST_INTERNODE_GB_S);
}
