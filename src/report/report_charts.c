/* report_charts: see report_charts.h. */
#include "report/report_charts.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/numfmt.h"
#include "draw/chart.h"
#include "model/model.h"
#include "plan/plan.h"
#include "plan/timeline.h"
#include "report/report_phrases.h"

static const char *const report_charts_all[] = {"fit",       "phases", "stages", "step",
                                                "step_ckpt", "kcurve", "walk",   "params"};

const char *const *report_charts_names(size_t *n)
{
    *n = sizeof report_charts_all / sizeof *report_charts_all;
    return report_charts_all;
}

#define REPORT_CHARTS_H_DEFAULT 218.0

/* The label under a bar: what it is (line 1) and its micro-batch (line 2). */
static void report_bar_label(const struct report_sc *r, const struct plan_rung *g, char *buf,
                             size_t size)
{
    char what[64], batch[48], b[32], rung[40];
    numfmt_u64(b, sizeof b, g ? g->sc.micro_batch : r->sc->micro_batch);
    if (g) {
        report_values_rung_label(r->ph, g, rung, sizeof rung);
        report_say(what, sizeof what, r->ph, &r->vals, REPORT_PHRASE_BAR_RUNG, "rung", rung, NULL);
    } else {
        report_say(what, sizeof what, r->ph, &r->vals, REPORT_PHRASE_BAR_BASE, NULL);
    }
    report_say(batch, sizeof batch, r->ph, &r->vals, REPORT_PHRASE_BAR_BATCH, "b", b, NULL);
    numfmt(buf, size, "%s\n%s", what, batch);
}

/* A bar of the lesson's terms: states, activations, logits. */
static void report_lesson_bar(const struct terms *t, uint64_t *term_bytes)
{
    term_bytes[CHART_WEIGHTS] = t->weights_bytes;
    term_bytes[CHART_GRADS] = t->grads_bytes;
    term_bytes[CHART_OPTIMIZER] = t->optimizer_bytes;
    term_bytes[CHART_ACT] = t->act_bytes;
    term_bytes[CHART_LOGITS] = t->logits_bytes;
}

/* A bar of a step's phase, part by part (step.h's parts are chart.h's terms, in order). */
static void report_phase_bar(const uint64_t parts[STEP_PARTS], struct chart_phase_bar *b)
{
    _Static_assert(
        (int)STEP_PARTS == (int)CHART_STEP_TERMS && (int)STEP_PART_GRADS == (int)CHART_GRADS &&
            (int)STEP_PART_ACT == (int)CHART_ACT && (int)STEP_PART_LOSS == (int)CHART_LOGITS &&
            (int)STEP_PART_TEMPS == (int)CHART_TEMPS,
        "a step's parts are the chart's terms, in order");
    for (int i = 0; i < STEP_PARTS; i++)
        b->term_bytes[i] = parts[i];
}

static void report_charts_fit(struct doc *doc, const struct report_sc *r, double y, double h)
{
    struct chart_bar bars[PLAN_MAX_RUNGS + 1];
    struct chart_phase_bar phase_bars[PLAN_MAX_RUNGS + 1];
    char labels[PLAN_MAX_RUNGS + 1][112];
    size_t n = 0;
    const struct terms *ts[PLAN_MAX_RUNGS + 1];
    const struct scenario *scs[PLAN_MAX_RUNGS + 1];
    ts[n] = &r->t;
    scs[n] = r->sc;
    report_bar_label(r, NULL, labels[n], sizeof labels[n]);
    n++;
    for (size_t i = 0; i < r->plan.n_rungs; i++, n++) {
        report_bar_label(r, &r->plan.rungs[i], labels[n], sizeof labels[n]);
        ts[n] = &r->plan.rungs[i].terms;
        scs[n] = &r->plan.rungs[i].sc;
    }
    /* Under --peak step each bar is its peak: the phase at it, part by part. */
    bool step = r->sc->peak == PEAK_STEP;
    for (size_t i = 0; i < n; i++) {
        bars[i] = (struct chart_bar){.label = labels[i]};
        phase_bars[i] = (struct chart_phase_bar){.label = labels[i]};
        struct step_parts parts;
        if (!step) {
            report_lesson_bar(ts[i], bars[i].term_bytes);
        } else if (model_step_parts(scs[i], ts[i], ts[i]->peak_stage, &parts) == MODEL_OK) {
            report_phase_bar(parts.phase[ts[i]->peak_phase], &phase_bars[i]);
        } else {
            doc_fail(doc, -1);
            return;
        }
    }
    char title[REPORT_VALUE_MAX];
    report_say(title, sizeof title, r->ph, &r->vals, REPORT_PHRASE_CHART_FIT, NULL);
    if (step) {
        struct chart_phases d = {.title = title,
                                 .bars = phase_bars,
                                 .n = n,
                                 .gpu_bytes = r->sc->gpu_mem_bytes,
                                 .reserve = r->sc->reserve,
                                 .units = r->units};
        chart_phases_draw(&doc->c, DOC_M_LEFT, y, doc_width(doc), h, &d, NULL);
        return;
    }
    struct chart_bars d = {.title = title,
                           .bars = bars,
                           .n = n,
                           .gpu_bytes = r->sc->gpu_mem_bytes,
                           .reserve = r->sc->reserve,
                           .units = r->units};
    chart_bars_draw(&doc->c, DOC_M_LEFT, y, doc_width(doc), h, &d, NULL);
}

/* A chart of phase-style bars (chart_phases) of r's GPU memory with the GPU and reserve lines,
 * bar `peak` marked `mark`; last_apart: the last bar (the lesson's sum) drawn apart. */
static void draw_bars_of(struct doc *doc, const struct report_sc *r, double y, double h,
                         const char *title, const char *mark, const struct chart_phase_bar *bars,
                         size_t n, size_t peak, bool last_apart)
{
    struct chart_phases d = {.title = title,
                             .bars = bars,
                             .n = n,
                             .gpu_bytes = r->sc->gpu_mem_bytes,
                             .reserve = r->sc->reserve,
                             .units = r->units,
                             .mark_peak = true,
                             .peak = peak,
                             .peak_label = mark,
                             .last_apart = last_apart};
    chart_phases_draw(&doc->c, DOC_M_LEFT, y, doc_width(doc), h, &d, NULL);
}

/* The phases of a step on the most loaded GPU (--peak step), one bar each, part by part, then
 * the lesson's sum; the highest phase marked. */
static void report_charts_phases(struct doc *doc, const struct report_sc *r, double y, double h)
{
    static const enum report_phrase names[STEP_PHASES] = {
        REPORT_PHRASE_BAR_PHASE_FORWARD, REPORT_PHRASE_BAR_PHASE_BACKWARD_START,
        REPORT_PHRASE_BAR_PHASE_RECOMPUTE, REPORT_PHRASE_BAR_PHASE_BACKWARD_END,
        REPORT_PHRASE_BAR_PHASE_OPTIMIZER};
    struct chart_phase_bar bars[STEP_PHASES + 1];
    char labels[STEP_PHASES + 1][REPORT_CELL_MAX];
    const struct model_gpu *g = &r->t.stage[r->t.peak_stage];
    size_t n = 0, peak = 0;
    for (int p = 0; p < STEP_PHASES; p++) {
        if (g->step.phase_bytes[p] == 0)
            continue; /* no rebuild without checkpointing */
        if ((enum step_phase)p == r->t.peak_phase)
            peak = n;
        report_say(labels[n], sizeof labels[n], r->ph, &r->vals, names[p], NULL);
        bars[n] = (struct chart_phase_bar){.label = labels[n]};
        report_phase_bar(r->parts.phase[p], &bars[n]);
        n++;
    }
    report_say(labels[n], sizeof labels[n], r->ph, &r->vals, REPORT_PHRASE_BAR_LESSON, NULL);
    bars[n] = (struct chart_phase_bar){.label = labels[n]};
    report_lesson_bar(&r->lesson, bars[n].term_bytes);
    n++;
    char title[REPORT_VALUE_MAX], mark[REPORT_CELL_MAX];
    report_say(title, sizeof title, r->ph, &r->vals, REPORT_PHRASE_CHART_PHASES, NULL);
    report_say(mark, sizeof mark, r->ph, &r->vals, REPORT_PHRASE_CHART_PHASES_PEAK, NULL);
    draw_bars_of(doc, r, y, h, title, mark, bars, n, peak, true);
}

/* The stages @chart stages draws: every one up to REPORT_STAGES_DRAWN, else the candidates of
 * model_peak (those that can be the most loaded), ascending. Returns how many. */
#define REPORT_STAGES_DRAWN 16
static size_t report_stages_drawn(const struct report_sc *r, uint64_t *ranks)
{
    size_t n = 0;
    if (r->sc->pp <= REPORT_STAGES_DRAWN) {
        for (uint64_t s = 0; s < r->sc->pp; s++)
            ranks[n++] = s;
        return n;
    }
    for (unsigned i = 0; i < r->t.n_stages; i++) {
        size_t at = n++;
        for (; at > 0 && ranks[at - 1] > r->t.stage[i].pipe.rank; at--)
            ranks[at] = ranks[at - 1];
        ranks[at] = r->t.stage[i].pipe.rank;
    }
    return n;
}

/* Every pipeline stage (GPU under DualPipe; doc/model.md 6.3, 6.4), one bar each of the lesson's
 * terms, its rank and layers under it, the most loaded GPU marked. */
static void report_charts_stages(struct doc *doc, const struct report_sc *r, double y, double h)
{
    uint64_t ranks[REPORT_STAGES_DRAWN > MODEL_STAGES ? REPORT_STAGES_DRAWN : MODEL_STAGES];
    struct chart_phase_bar bars[sizeof ranks / sizeof *ranks];
    char labels[sizeof ranks / sizeof *ranks][REPORT_CELL_MAX];
    size_t n = report_stages_drawn(r, ranks), peak = 0;
    for (size_t i = 0; i < n; i++) {
        struct model_gpu g;
        if (model_stage_lesson(r->sc, ranks[i], &g) != MODEL_OK)
            return;
        char rank[32], layers[32];
        numfmt_u64(rank, sizeof rank, ranks[i]);
        numfmt_u64(layers, sizeof layers, g.pipe.layers[0] + g.pipe.layers[1]);
        report_say(labels[i], sizeof labels[i], r->ph, NULL, REPORT_PHRASE_BAR_STAGE, "rank", rank,
                   "layers", layers, NULL);
        bars[i] = (struct chart_phase_bar){.label = labels[i]};
        bars[i].term_bytes[CHART_WEIGHTS] = g.weights_bytes;
        bars[i].term_bytes[CHART_GRADS] = g.grads_bytes;
        bars[i].term_bytes[CHART_OPTIMIZER] = g.optimizer_bytes;
        bars[i].term_bytes[CHART_ACT] = g.act_bytes;
        bars[i].term_bytes[CHART_LOGITS] = g.logits_bytes;
        if (ranks[i] == r->t.stage[r->t.peak_stage].pipe.rank)
            peak = i;
    }
    char title[REPORT_VALUE_MAX], mark[REPORT_CELL_MAX];
    report_say(title, sizeof title, r->ph, &r->vals,
               r->sc->pp <= REPORT_STAGES_DRAWN ? REPORT_PHRASE_CHART_STAGES
                                                : REPORT_PHRASE_CHART_STAGES_SOME,
               NULL);
    report_say(mark, sizeof mark, r->ph, &r->vals, REPORT_PHRASE_CHART_STAGES_PEAK, NULL);
    draw_bars_of(doc, r, y, h, title, mark, bars, n, peak, false);
}

/*
 * The scenario the second step chart compares with: checkpointing every k_best layers, or, when
 * the scenario already checkpoints every k, the same step without checkpointing.
 */
static void report_step_other(const struct report_sc *r, struct scenario *out, char *title,
                              size_t size)
{
    plan_step_comparison(r->sc, r->t.k_best, out);
    if (r->sc->recompute == RECOMPUTE_EVERY_K) {
        report_say(title, size, r->ph, &r->vals, REPORT_PHRASE_CHART_STEP_NO_CKPT, NULL);
        return;
    }
    char k[32];
    numfmt_u64(k, sizeof k, out->ckpt_every);
    report_say(title, size, r->ph, &r->vals,
               out->ckpt_every == 1 ? REPORT_PHRASE_CHART_STEP_CKPT_EVERY_LAYER
                                    : REPORT_PHRASE_CHART_STEP_CKPT,
               "k", k, NULL);
}

/* Memory over one step: as configured, or (other) the comparison of report_step_other. */
static void report_charts_step(struct doc *doc, const struct report_sc *r, bool other, double y,
                               double h)
{
    struct scenario sc, cmp;
    char heading[REPORT_VALUE_MAX], cmp_heading[REPORT_VALUE_MAX];
    report_step_other(r, &cmp, cmp_heading, sizeof cmp_heading);
    if (other) {
        sc = cmp;
        memcpy(heading, cmp_heading, sizeof heading);
        cmp = *r->sc;
    } else {
        sc = *r->sc;
        report_say(heading, sizeof heading, r->ph, &r->vals, REPORT_PHRASE_CHART_STEP, NULL);
    }
    /* The step streamed into a series of at most CHART_STEP_POINTS points: a chart of a million
     * layers costs what one of 24 does. The series needs the checkpointing segment before the
     * walk: k' = min(k, L/pp) (timeline.h). */
    struct terms ot, own;
    bool own_ok = model_peak(&sc, &own) == MODEL_OK;
    uint64_t stage_layers = sc.pp ? sc.layers / sc.pp : 0, segment = 0;
    if (sc.recompute == RECOMPUTE_EVERY_K && sc.ckpt_every > 0)
        segment = sc.ckpt_every < stage_layers ? sc.ckpt_every : stage_layers;
    struct chart_step_series *ser = malloc(sizeof *ser);
    struct timeline_summary sum;
    if (ser)
        chart_step_series_init(ser, segment, own_ok ? own.ckpt_bytes : 0);
    if (!ser || !own_ok || timeline_stream(&sc, chart_step_series_add, ser, &sum) != 0) {
        free(ser);
        doc_fail(doc, -1);
        return;
    }
    /* Both step charts share the scale of the larger peak. */
    uint64_t ymax = sum.peak_bytes;
    if (model_peak(&cmp, &ot) == MODEL_OK && ot.peak_bytes > ymax)
        ymax = ot.peak_bytes;
    /* The title gives the walk's own peak; under checkpointing it can stay below the formula's
     * M(k) + logits, because the loss backward frees the logits before the first rebuild. Under
     * --peak step it is the step's peak, at its phase. */
    char peak[32], phase[REPORT_VALUE_MAX] = "", title[REPORT_VALUE_MAX];
    numfmt_size(peak, sizeof peak, sum.peak_bytes, r->units);
    enum report_phrase id = own_ok && sum.peak_bytes < own.peak_bytes
                                ? REPORT_PHRASE_CHART_STEP_PEAK_EARLY
                                : REPORT_PHRASE_CHART_STEP_PEAK;
    if (sum.peak_phase < STEP_PHASES) {
        report_say(phase, sizeof phase, r->ph, NULL, report_values_phase_phrase(sum.peak_phase),
                   NULL);
        id = REPORT_PHRASE_CHART_STEP_PEAK_PHASE;
    }
    report_say(title, sizeof title, r->ph, &r->vals, id, "heading", heading, "walk_peak", peak,
               "walk_phase", phase, NULL);
    struct chart_step d = {.title = title,
                           .series = ser,
                           .states_bytes = sum.states_bytes,
                           .total_time = sum.total_time,
                           .gpu_bytes = r->sc->gpu_mem_bytes,
                           .reserve = r->sc->reserve,
                           .y_max_bytes = ymax,
                           .ckpt_bytes = sum.segment && own_ok ? own.ckpt_bytes : 0,
                           .segment = sum.segment,
                           .units = r->units};
    chart_step_draw(&doc->c, DOC_M_LEFT, y, doc_width(doc), h, &d, NULL);
    free(ser);
}

static void report_charts_kcurve(struct doc *doc, const struct report_sc *r, double y, double h)
{
    struct chart_kcurve d; /* a few hundred points, whatever L */
    memset(&d, 0, sizeof d);
    if (chart_kcurve_fill(r->sc, &d) != 0) {
        doc_fail(doc, -1);
        return;
    }
    char title[REPORT_VALUE_MAX];
    char act[REPORT_CELL_MAX];
    report_say(title, sizeof title, r->ph, &r->vals, REPORT_PHRASE_CHART_KCURVE, NULL);
    report_say(act, sizeof act, r->ph, &r->vals, REPORT_PHRASE_CHART_KCURVE_ACT, NULL);
    d.title = title;
    d.act_label = act;
    d.units = r->units;
    chart_kcurve_draw(&doc->c, DOC_M_LEFT, y, doc_width(doc), h, &d, NULL);
}

static void report_charts_walk(struct doc *doc, const struct report_sc *r, double y, double h)
{
    struct chart_walk_op ops[CHART_WALK_MAX];
    size_t n = chart_layer_walk_ops(r->sc, ops, CHART_WALK_MAX);
    char title[REPORT_VALUE_MAX];
    report_say(title, sizeof title, r->ph, &r->vals, REPORT_PHRASE_CHART_WALK, NULL);
    struct chart_walk d = {.title = title,
                           .ops = ops,
                           .n = n,
                           .heads_per_hidden = (double)r->sc->heads / (double)r->sc->hidden};
    chart_walk_draw(&doc->c, DOC_M_LEFT, y, doc_width(doc), h, &d, NULL);
}

static void report_charts_params(struct doc *doc, const struct report_sc *r, double y, double h)
{
    struct chart_param_item items[CHART_PARAM_MAX];
    size_t n = chart_layer_param_items(r->sc, items, CHART_PARAM_MAX);
    char title[REPORT_VALUE_MAX];
    report_say(title, sizeof title, r->ph, &r->vals,
               r->sc->experts > 0 ? REPORT_PHRASE_CHART_PARAMS_MOE : REPORT_PHRASE_CHART_PARAMS,
               NULL);
    struct chart_params d = {.title = title, .items = items, .n = n};
    chart_params_draw(&doc->c, DOC_M_LEFT, y, doc_width(doc), h, &d, NULL);
}

double report_charts_height(const char *name)
{
    static const struct {
        const char *name;
        double h;
    } heights[] = {{"fit", 235},       {"phases", 215}, {"stages", 200}, {"step", 178},
                   {"step_ckpt", 178}, {"kcurve", 200}, {"walk", 205},   {"params", 138}};
    for (size_t i = 0; i < sizeof heights / sizeof *heights; i++)
        if (strcmp(heights[i].name, name) == 0)
            return heights[i].h;
    return REPORT_CHARTS_H_DEFAULT;
}

bool report_charts_applies(const struct report_sc *r, const char *name)
{
    if (strcmp(name, "stages") == 0)
        return r->sc->pp > 1;
    return strcmp(name, "phases") != 0 || r->sc->peak == PEAK_STEP;
}

void report_charts_draw(struct doc *doc, const struct report_sc *r, const char *name)
{
    if (!report_charts_applies(r, name))
        return;
    double h = report_charts_height(name);
    doc_need(doc, h + 6);
    double y = doc->y;
    if (strcmp(name, "fit") == 0)
        report_charts_fit(doc, r, y, h);
    else if (strcmp(name, "phases") == 0)
        report_charts_phases(doc, r, y, h);
    else if (strcmp(name, "stages") == 0)
        report_charts_stages(doc, r, y, h);
    else if (strcmp(name, "step") == 0)
        report_charts_step(doc, r, false, y, h);
    else if (strcmp(name, "step_ckpt") == 0)
        report_charts_step(doc, r, true, y, h);
    else if (strcmp(name, "kcurve") == 0)
        report_charts_kcurve(doc, r, y, h);
    else if (strcmp(name, "walk") == 0)
        report_charts_walk(doc, r, y, h);
    else if (strcmp(name, "params") == 0)
        report_charts_params(doc, r, y, h);
    doc->y = y + h + 10;
}
