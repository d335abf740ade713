/*
 * report_values_fix: the verdict's fix as the report's values (report_values.h): the cheapest
 * layout's under --peak step, the ladder's first fitting rung under --peak lesson, with what
 * the fix costs a step and the one sentence of the answer (doc/model.md 11.6).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/checked.h"
#include "base/numfmt.h"
#include "base/strbuf.h"
#include "model/cost.h"
#include "plan/search.h"
#include "report/report_values.h"

enum report_phrase report_values_fix_phrase(enum plan_fix f)
{
    switch (f) {
    case PLAN_FIX_NONE:
        return REPORT_PHRASE_FIX_NONE;
    case PLAN_FIX_FLASH:
        return REPORT_PHRASE_FIX_FLASH;
    case PLAN_FIX_ZERO1:
        return REPORT_PHRASE_FIX_ZERO1;
    case PLAN_FIX_ZERO2:
        return REPORT_PHRASE_FIX_ZERO2;
    case PLAN_FIX_MICRO_BATCH:
        return REPORT_PHRASE_FIX_MICRO_BATCH;
    case PLAN_FIX_FULL_CKPT:
        return REPORT_PHRASE_FIX_FULL_CKPT;
    case PLAN_FIX_ZERO3:
        return REPORT_PHRASE_FIX_ZERO3;
    case PLAN_FIX_TP:
        return REPORT_PHRASE_FIX_TP;
    case PLAN_FIX_PP:
        return REPORT_PHRASE_FIX_PP;
    case PLAN_FIX_OFFLOAD:
        return REPORT_PHRASE_FIX_OFFLOAD;
    case PLAN_FIX_NOTHING:
        return REPORT_PHRASE_FIX_NOTHING;
    case PLAN_FIX_LAYOUT:
        return REPORT_PHRASE_FIX_LAYOUT;
    }
    return REPORT_PHRASE_FIX_NOTHING;
}

/* The extra time of the fix rung fr over the base step, or that there is none. */
static void fix_cost_time(struct report_phrases *ph, char *buf, size_t size,
                          const struct plan_rung *fr, const struct cost *bc)
{
    char a[64], b[64], pct[32];
    if (fr->extra_time_s <= 1e-9) {
        report_say(buf, size, ph, NULL, REPORT_PHRASE_COST_FREE, NULL);
        return;
    }
    numfmt_seconds(a, sizeof a, fr->extra_time_s);
    numfmt_seconds(b, sizeof b, bc->total_s);
    numfmt(pct, sizeof pct, "%.1f%%", bc->total_s > 0 ? 100.0 * fr->extra_time_s / bc->total_s : 0);
    report_say(buf, size, ph, NULL, REPORT_PHRASE_COST_TIME, "extra", a, "share", pct, "step", b,
               NULL);
}

/* ": recomputation 12 ms, ..." - the parts of the cost model that grew ("" when none did). */
static void fix_cost_parts(struct report_phrases *ph, char *buf, size_t size, const struct cost *fc,
                           const struct cost *bc)
{
    const struct {
        double s;
        enum report_phrase what;
    } parts[] = {
        {fc->recompute_s - bc->recompute_s, REPORT_PHRASE_COST_PART_RECOMPUTE},
        {fc->dp_extra_s - bc->dp_extra_s, REPORT_PHRASE_COST_PART_ZERO3},
        {fc->tp_s - bc->tp_s, REPORT_PHRASE_COST_PART_TP},
        {fc->bubble_s - bc->bubble_s, REPORT_PHRASE_COST_PART_BUBBLE},
        {fc->cp_s + fc->ep_s + fc->pp_s - bc->cp_s - bc->ep_s - bc->pp_s,
         REPORT_PHRASE_COST_PART_COMM},
        {fc->offload_s - bc->offload_s, REPORT_PHRASE_COST_PART_OFFLOAD},
    };
    char list[REPORT_VALUE_MAX], part[128], c[64];
    struct strbuf sb;
    strbuf_init_fixed(&sb, list, sizeof list);
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        if (parts[i].s <= 1e-9)
            continue;
        numfmt_seconds(c, sizeof c, parts[i].s);
        report_say(part, sizeof part, ph, NULL, parts[i].what, "time", c, NULL);
        strbuf_printf(&sb, "%s%s", sb.len ? ", " : "", part);
    }
    if (sb.len)
        report_say(buf, size, ph, NULL, REPORT_PHRASE_COST_PARTS, "list", list, NULL);
    else
        buf[0] = '\0';
}

/* A smaller micro-batch b' keeps the global batch by gradient accumulation, exactly when b'
 * divides the batch of a rank ("" when the micro-batch did not shrink). */
static void fix_cost_accumulation(struct report_phrases *ph, char *buf, size_t size,
                                  const struct scenario *sc, const struct plan_rung *fr)
{
    uint64_t per_rank =
        (sc->global_batch ? sc->global_batch : sc->micro_batch * sc->dp) / (sc->dp ? sc->dp : 1);
    uint64_t b2 = fr->sc.micro_batch, steps = div_up(per_rank, b2);
    buf[0] = '\0';
    if (b2 >= sc->micro_batch)
        return;
    char st[32], nb[32], gb[32], pr[32];
    numfmt_u64(st, sizeof st, steps);
    if (per_rank % b2 == 0) {
        report_say(buf, size, ph, NULL, REPORT_PHRASE_COST_ACCUMULATION, "steps", st, NULL);
        return;
    }
    numfmt_u64(nb, sizeof nb, steps * b2 * sc->dp);
    numfmt_u64(gb, sizeof gb, per_rank * sc->dp);
    numfmt_u64(pr, sizeof pr, per_rank);
    report_say(buf, size, ph, NULL, REPORT_PHRASE_COST_ACCUMULATION_BATCH, "steps", st, "new_batch",
               nb, "global_batch", gb, "per_rank", pr, NULL);
}

/* The extra compute or traffic of the fix, from the planner's cost model. */
static void report_values_fix_cost(struct report_sc *r)
{
    const struct plan *p = &r->plan;
    char *out = r->vals.v[REPORT_PH_FIX_COST];
    if (p->fix_rung < 0) {
        report_say(out, REPORT_VALUE_MAX, r->ph, NULL,
                   p->fix == PLAN_FIX_NONE ? REPORT_PHRASE_COST_FITS : REPORT_PHRASE_COST_NO_RUNG,
                   NULL);
        return;
    }
    const struct plan_rung *fr = &p->rungs[p->fix_rung];
    char time[192], parts[REPORT_VALUE_MAX], acc[256], thin[192] = "";
    fix_cost_time(r->ph, time, sizeof time, fr, &p->base_cost);
    fix_cost_parts(r->ph, parts, sizeof parts, &fr->cost, &p->base_cost);
    fix_cost_accumulation(r->ph, acc, sizeof acc, r->sc, fr);
    if (fr->thin_matmuls) {
        char tok[32], min[32];
        numfmt_u64(tok, sizeof tok, fr->sc.micro_batch * r->sc->seq);
        numfmt_u64(min, sizeof min, PLAN_THIN_TOKENS);
        report_say(thin, sizeof thin, r->ph, NULL, REPORT_PHRASE_COST_THIN, "tokens", tok,
                   "min_tokens", min, NULL);
    }
    report_say(out, REPORT_VALUE_MAX, r->ph, NULL, REPORT_PHRASE_COST, "time", time, "parts", parts,
               "accumulation", acc, "thin", thin, NULL);
}

/* The most GPUs the verdict of a scenario that nothing fits looks up to (below). */
#define REPORT_GPUS_TO_FIT_MAX 65536

/*
 * The fewest GPUs of sc's kind, counted by gpus_per_node, on which memfit search finds a layout
 * that fits (doc/model.md section 11.3), up to *cap: sixteen times the larger of its GPUs and
 * those its states alone need, at most REPORT_GPUS_TO_FIT_MAX (or its own count); 0 when none
 * does. Only for a scenario that no rung fits, and only in the report (not eval's rows): a search
 * a count.
 */
static uint64_t gpus_to_fit(const struct scenario *sc, uint64_t states_gpus, uint64_t *cap)
{
    struct scenario job = *sc;
    struct search_result res;
    uint64_t have = plan_gpus(sc), most = have > states_gpus ? have : states_gpus;
    *cap = most <= REPORT_GPUS_TO_FIT_MAX / 16 ? 16 * most : REPORT_GPUS_TO_FIT_MAX;
    *cap = *cap > have ? *cap : have;
    job.gpus = have;
    job.gpus_from = 0;
    job.pinned = 0; /* the scenario's layout is the ladder's to keep, not the search's */
    return search_min_gpus(&job, 1, *cap, 0, NULL, NULL, &res);
}

/* The sentence of a fix that fits: what changes, its peak, micro-batch and cost (the values
 * already set), then notes (fix_notes, or ""). */
static void say_fix_sentence(struct report_sc *r, const char *notes)
{
    char(*v)[REPORT_VALUE_MAX] = r->vals.v;
    report_say(v[REPORT_PH_FIX_SENTENCE], REPORT_VALUE_MAX, r->ph, NULL, REPORT_PHRASE_FIX_SENTENCE,
               "fix", v[REPORT_PH_FIX], "fix_plan", v[REPORT_PH_FIX_PLAN], "fix_peak",
               v[REPORT_PH_FIX_PEAK], "fix_micro_batch", v[REPORT_PH_FIX_MICRO_BATCH], "fix_cost",
               v[REPORT_PH_FIX_COST], "fix_notes", notes, NULL);
}

/* The notes of the cheapest fix, never applied since they change the training's arithmetic
 * (doc/model.md 11.6): what 8-bit Adam and FP8 training would take off the peak (FP8 also off
 * the step), into out; "" when neither would. */
static void say_fix_notes(struct report_sc *r, enum units u, char *out, size_t size)
{
    const struct cheapest *c = &r->cheap;
    char adam8[REPORT_VALUE_MAX] = "", fp8[REPORT_VALUE_MAX] = "", bytes[32], time[32],
         step[REPORT_VALUE_MAX] = "";
    out[0] = '\0';
    if (c->adam8_saving_bytes) {
        numfmt_size(bytes, sizeof bytes, c->adam8_saving_bytes, u);
        report_say(adam8, sizeof adam8, r->ph, NULL, REPORT_PHRASE_FIX_NOTE_ADAM8, "saving", bytes,
                   NULL);
    }
    if (c->fp8_saving_bytes) {
        numfmt_size(bytes, sizeof bytes, c->fp8_saving_bytes, u);
        numfmt_seconds(time, sizeof time, c->fp8_time_saved_s);
        if (c->fp8_time_saved_s > 0)
            report_say(step, sizeof step, r->ph, NULL, REPORT_PHRASE_FIX_NOTE_FP8_STEP, "time",
                       time, NULL);
        report_say(fp8, sizeof fp8, r->ph, NULL, REPORT_PHRASE_FIX_NOTE_FP8, "saving", bytes,
                   "step", step, NULL);
    }
    if (adam8[0] && fp8[0])
        report_say(out, size, r->ph, NULL, REPORT_PHRASE_FIX_NOTES_BOTH, "adam8", adam8, "fp8", fp8,
                   NULL);
    else if (adam8[0] || fp8[0])
        report_say(out, size, r->ph, NULL, REPORT_PHRASE_FIX_NOTES, "note", adam8[0] ? adam8 : fp8,
                   NULL);
}

/* The one sentence of the answer: no fix needed, the cheapest fix, or nothing fits. */
static void report_values_fix_sentence(struct report_sc *r)
{
    const struct plan *p = &r->plan;
    char(*v)[REPORT_VALUE_MAX] = r->vals.v;
    char *out = v[REPORT_PH_FIX_SENTENCE];
    const size_t n = REPORT_VALUE_MAX;
    if (p->fix == PLAN_FIX_NONE)
        report_say(out, n, r->ph, NULL, REPORT_PHRASE_FIX_SENTENCE_NONE, "max_micro_batch",
                   v[REPORT_PH_MAX_MICRO_BATCH], NULL);
    else if (p->fix == PLAN_FIX_NOTHING) {
        uint64_t cap, fewest = gpus_to_fit(r->sc, p->gpus_for_states, &cap);
        uint64_t have = plan_gpus(r->sc);
        char fit[32], most[32], count[32], here[64];
        numfmt_u64(fit, sizeof fit, fewest);
        numfmt_u64(most, sizeof most, cap);
        numfmt_u64(count, sizeof count, have);
        report_say(here, sizeof here, r->ph, NULL,
                   have == 1 ? REPORT_PHRASE_FIX_GPUS_ONE : REPORT_PHRASE_FIX_GPUS_MANY, "n", count,
                   NULL);
        /* What does not fit (doc/model.md 11.3): the states, sharded over more GPUs than the
         * scenario has, or, where they would fit on its own, the activations. */
        bool acts = p->gpus_for_states <= have;
        enum report_phrase say = acts ? (fewest ? REPORT_PHRASE_FIX_SENTENCE_NOTHING_ACTS
                                                : REPORT_PHRASE_FIX_SENTENCE_NOTHING_ACTS_BEYOND)
                                      : (fewest ? REPORT_PHRASE_FIX_SENTENCE_NOTHING
                                                : REPORT_PHRASE_FIX_SENTENCE_NOTHING_BEYOND);
        report_say(out, n, r->ph, NULL, say, "fix_peak", v[REPORT_PH_FIX_PEAK], "gpus_for_states",
                   v[REPORT_PH_GPUS_FOR_STATES], "gpus_here", here, "gpu_mem", v[REPORT_PH_GPU_MEM],
                   "gpus_to_fit", fit, "gpus_cap", most, NULL);
    } else
        say_fix_sentence(r, "");
}

/* The cheapest layout's answer (cheapest.h): the fix, its settings, peak, micro-batch, step time
 * and the one sentence. */
static void report_values_cheapest(struct report_sc *r, enum units u)
{
    const struct cheapest *c = &r->cheap;
    char(*v)[REPORT_VALUE_MAX] = r->vals.v;
    const size_t n = REPORT_VALUE_MAX;
    report_say(v[REPORT_PH_FIX], n, r->ph, NULL,
               report_values_fix_phrase(cheapest_kind(r->sc, &c->sc)), NULL);
    cheapest_settings(r->sc, &c->sc, v[REPORT_PH_FIX_PLAN], n);
    numfmt_size(v[REPORT_PH_FIX_PEAK], n, c->peak_bytes, u);
    numfmt_u64(v[REPORT_PH_FIX_MICRO_BATCH], n, c->sc.micro_batch);
    char step[64], base[64], diff[64], change[128];
    double d = c->step_time_s - c->base_step_time_s;
    numfmt_seconds(step, sizeof step, c->step_time_s);
    numfmt_seconds(base, sizeof base, c->base_step_time_s);
    numfmt_seconds(diff, sizeof diff, d < 0 ? -d : d);
    numfmt(change, sizeof change, "%s%s, %+.1f%%", d < 0 ? "-" : "+", diff,
           c->base_step_time_s > 0 ? 100.0 * d / c->base_step_time_s : 0);
    report_say(v[REPORT_PH_FIX_COST], n, r->ph, NULL, REPORT_PHRASE_COST_LAYOUT, "step", step,
               "change", change, "base", base, NULL);
    numfmt_u64(v[REPORT_PH_GPUS_FOR_STATES], n, r->plan.gpus_for_states);
    char notes[2 * REPORT_VALUE_MAX];
    say_fix_notes(r, u, notes, sizeof notes);
    say_fix_sentence(r, notes);
}

/* The fix's answer and its cost (plan.h, cost.h): the cheapest layout's under --peak step, the
 * ladder's under --peak lesson (doc/model.md 11.6). */
void report_values_fix(struct report_sc *r, enum units u)
{
    const struct plan *p = &r->plan;
    char(*v)[REPORT_VALUE_MAX] = r->vals.v;
    const size_t n = REPORT_VALUE_MAX;
    if (r->cheap_used) {
        report_values_cheapest(r, u);
        return;
    }
    report_say(v[REPORT_PH_FIX], n, r->ph, NULL, report_values_fix_phrase(p->fix), NULL);
    plan_fix_settings(p, v[REPORT_PH_FIX_PLAN], n);
    if (!v[REPORT_PH_FIX_PLAN][0])
        report_say(v[REPORT_PH_FIX_PLAN], n, r->ph, NULL,
                   p->fix == PLAN_FIX_NONE ? REPORT_PHRASE_FIX_PLAN_UNCHANGED
                                           : REPORT_PHRASE_FIX_PLAN_NONE,
                   NULL);
    numfmt_size(v[REPORT_PH_FIX_PEAK], n, p->fix_peak_bytes, u);
    numfmt_u64(v[REPORT_PH_FIX_MICRO_BATCH], n, p->fix_micro_batch);
    report_values_fix_cost(r);
    numfmt_u64(v[REPORT_PH_GPUS_FOR_STATES], n, p->gpus_for_states);
    report_values_fix_sentence(r);
}
