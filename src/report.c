/* report: see report.h. */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/stat.h>

#include <hpdf.h>

#include "canvas_hpdf.h"
#include "chart.h"
#include "checked.h"
#include "cost.h"
#include "doc.h"
#include "model.h"
#include "out.h"
#include "paths.h"
#include "pdffix.h"
#include "plan.h"
#include "report_fmt.h"
#include "report_values.h"
#include "template.h"
#include "timeline.h"

static const char *const report_charts[] = {"fit", "step", "step_ckpt", "kcurve", "walk", "params"};
static const char *const report_sc_tables[] = {"config", "verdict", "terms", "ladder", "microbatch"};
static const char *const report_sum_tables[] = {"summary"};

/* ------------------------------------------------------------------------------------------ */
/* Scenario tables.                                                                            */

static void table_config(struct doc *doc, const struct report_sc *r)
{
    static const struct doc_col cols[] = {
        {"model", 0.14, CANVAS_ALIGN_LEFT}, {"", 0.36, CANVAS_ALIGN_LEFT},
        {"training", 0.14, CANVAS_ALIGN_LEFT}, {"", 0.36, CANVAS_ALIGN_LEFT}};
    const struct scenario *sc = r->sc;
    const char (*v)[REPORT_VALUE_MAX] = r->vals.v;
    char model[96], shape[128], ffn[64], seq[96], prec[64], parallel[128], gpu[128], act[96],
        vocab[64], res[96], psi[96];
    report_fmt(model, sizeof model, "%s (%s-style)", sc->model_preset[0] ? sc->model_preset : "custom",
        v[REPORT_PH_ARCH]);
    if (sc->kv_heads != sc->heads)
        report_fmt(shape, sizeof shape, "L = %s, h = %s, a = %s, %s KV heads", v[REPORT_PH_LAYERS], v[REPORT_PH_HIDDEN],
            v[REPORT_PH_HEADS], v[REPORT_PH_KV_HEADS]);
    else
        report_fmt(shape, sizeof shape, "L = %s, h = %s, a = %s", v[REPORT_PH_LAYERS], v[REPORT_PH_HIDDEN], v[REPORT_PH_HEADS]);
    report_fmt(ffn, sizeof ffn, "f = %s%s%s", v[REPORT_PH_FFN], sc->dropout ? ", dropout" : ", no dropout",
        sc->positions ? ", learned positions" : "");
    report_fmt(vocab, sizeof vocab, "V = %s, %s embedding", v[REPORT_PH_VOCAB], sc->tied ? "tied" : "untied");
    report_fmt(seq, sizeof seq, "s = %s, b = %s, global batch %s", v[REPORT_PH_SEQ], v[REPORT_PH_MICRO_BATCH],
        v[REPORT_PH_GLOBAL_BATCH]);
    struct model_bytes_per_param bpp = model_bytes_per_param(sc->precision);
    report_fmt(prec, sizeof prec, "%s: %u + %u + %u bytes/param", v[REPORT_PH_PRECISION], bpp.weights, bpp.grads,
        bpp.optimizer);
    report_fmt(act, sizeof act, "attention %s, recompute %s", v[REPORT_PH_ATTENTION], v[REPORT_PH_RECOMPUTE]);
    report_fmt(parallel, sizeof parallel, "%s", v[REPORT_PH_PARALLEL]);
    report_fmt(gpu, sizeof gpu, "%s", v[REPORT_PH_HARDWARE]);
    report_fmt(res, sizeof res, "%s kept free: budget %s", v[REPORT_PH_RESERVE], v[REPORT_PH_BUDGET]);
    report_fmt(psi, sizeof psi, "Ψ = %s (%s)", v[REPORT_PH_PARAMS], v[REPORT_PH_PARAMS_SHORT]);
    const char *rows[][4] = {
        {"model", model, "tokens", seq},
        {"shape", shape, "precision", prec},
        {"MLP", ffn, "activations", act},
        {"vocabulary", vocab, "parallelism", parallel},
        {"parameters", psi, "GPUs", gpu},
        {"", "", "reserve", res},
    };
    struct doc_table t = {cols, 4, 0};
    doc_table_start(doc, &t, 6);
    for (size_t i = 0; i < 6; i++)
        doc_table_row(doc, &t, rows[i], DOC_ROW_PLAIN);
    doc_table_end(doc);
}

static void box_line(struct doc *doc, const char *line, void *ctx)
{
    struct doc_para *p = ctx;
    doc_text(doc, p->x, doc->y + p->size * 0.93, p->size, CANVAS_ALIGN_LEFT, p->bold, p->rgb, line);
    doc->y += p->lead;
}

/* The verdict: a tinted box with a coloured bar, the verdict in large type, the fix below. */
static void table_verdict(struct doc *doc, const struct report_sc *r)
{
    const char (*v)[REPORT_VALUE_MAX] = r->vals.v;
    bool fits = r->t.fits;
    char head[256], body[2 * REPORT_VALUE_MAX];
    report_fmt(head, sizeof head, "%s: peak %s %s budget %s", fits ? "Fits" : "Does not fit", v[REPORT_PH_PEAK],
        fits ? "≤" : ">", v[REPORT_PH_BUDGET]);
    report_fmt(body, sizeof body, "%s on %s. %s", v[REPORT_PH_HEADROOM], v[REPORT_PH_STAGE], v[REPORT_PH_FIX_SENTENCE]);
    body[0] = (char)(body[0] >= 'a' && body[0] <= 'z' ? body[0] - 32 : body[0]);
    double w = doc_width(doc) - 28;
    int lines = doc_lines(doc, body, DOC_BODY_PT, false, w);
    double h = 14 + 20 + lines * DOC_BODY_LEAD + 8;
    doc_need(doc, h + 8);
    double y0 = doc->y;
    doc_fill_rect(doc, DOC_M_LEFT, y0, doc_width(doc), h, fits ? DOC_OK_FILL : DOC_BAD_FILL);
    doc_fill_rect(doc, DOC_M_LEFT, y0, 5, h, fits ? DOC_OK : DOC_BAD);
    doc->y = y0 + 10;
    struct doc_para hp = {DOC_M_LEFT + 18, 14, 20, true, fits ? DOC_OK : DOC_BAD, NULL, true};
    box_line(doc, head, &hp);
    doc->y += 2;
    struct doc_para bp = {DOC_M_LEFT + 18, DOC_BODY_PT, DOC_BODY_LEAD, false, DOC_TEXT, NULL, true};
    doc_wrap(doc, body, DOC_BODY_PT, false, w, box_line, &bp);
    doc->y = y0 + h + 12;
}

static void table_terms(struct doc *doc, const struct report_sc *r)
{
    static const struct doc_col cols[] = {
        {"term", 0.22, CANVAS_ALIGN_LEFT}, {"formula (this GPU)", 0.40, CANVAS_ALIGN_LEFT},
        {"bytes", 0.18, CANVAS_ALIGN_RIGHT}, {"size", 0.11, CANVAS_ALIGN_RIGHT},
        {"share", 0.09, CANVAS_ALIGN_RIGHT}};
    const struct scenario *sc = r->sc;
    const struct terms *t = &r->t;
    const struct model_gpu *g = &t->stage[t->peak_stage];
    struct model_bytes_per_param bpp = model_bytes_per_param(sc->precision);
    char pcount[48], f[6][128], by[8][32], sz[8][32], pc[8][16];
    report_fmt_count(pcount, sizeof pcount, g->params);
    const char *dp_note = sc->dp > 1 ? " / dp" : "";
    report_fmt(f[0], sizeof f[0], "%u B × %s params%s", bpp.weights, pcount, sc->zero >= 3 ? dp_note : "");
    report_fmt(f[1], sizeof f[1], "%u B × params%s", bpp.grads, sc->zero >= 2 ? dp_note : "");
    if (sc->offload == OFFLOAD_OPTIMIZER)
        report_fmt(f[2], sizeof f[2], "%u B × params, in CPU memory", bpp.optimizer);
    else
        report_fmt(f[2], sizeof f[2], "%u B × params%s", bpp.optimizer, sc->zero >= 1 ? dp_note : "");
    char af[96];
    report_values_act_formula(sc, af, sizeof af);
    report_fmt(f[3], sizeof f[3], "A = %s", af);
    if (sc->recompute == RECOMPUTE_EVERY_K)
        report_fmt(f[4], sizeof f[4], "⌈L/k⌉·c + k·A, k = %llu, c = 2sbh", (unsigned long long)sc->ckpt_every);
    else if (sc->pp > 1)
        report_fmt(f[4], sizeof f[4], "%s micro-batches × L/pp layers × A",
            t->peak_stage == MODEL_STAGE_FIRST ? "pp" : "1");
    else
        report_fmt(f[4], sizeof f[4], "L × A = %llu × A", (unsigned long long)sc->layers);
    report_fmt(f[5], sizeof f[5], "4sbV%s (fp32 logits of the loss)", sc->tp > 1 ? " / t" : "");
    const uint64_t vals[] = {t->weights_bytes, t->grads_bytes, t->optimizer_bytes,
                             t->act_layer_bytes, t->act_bytes, t->logits_bytes, t->peak_bytes,
                             t->budget_bytes};
    for (size_t i = 0; i < 8; i++) {
        report_fmt_count(by[i], sizeof by[i], vals[i]);
        report_fmt_size(sz[i], sizeof sz[i], vals[i], r->units);
        double share = t->peak_bytes ? 100.0 * (double)vals[i] / (double)t->peak_bytes : 0;
        report_fmt(pc[i], sizeof pc[i], "%.1f%%", share);
    }
    pc[3][0] = '\0';
    pc[7][0] = '\0';
    char budget_f[64];
    report_fmt(budget_f, sizeof budget_f, "GPU memory × (1 − %.2f)", sc->reserve);
    const char *rows[][5] = {
        {"weights", f[0], by[0], sz[0], pc[0]},
        {"gradients", f[1], by[1], sz[1], pc[1]},
        {"optimizer states", f[2], by[2], sz[2], pc[2]},
        {"activations, one layer", f[3], by[3], sz[3], pc[3]},
        {"activations, stored", f[4], by[4], sz[4], pc[4]},
        {"logits", f[5], by[5], sz[5], pc[5]},
        {"peak", "states + activations + logits", by[6], sz[6], pc[6]},
        {"budget", budget_f, by[7], sz[7], pc[7]},
    };
    struct doc_table tb = {cols, 5, 0};
    doc_table_start(doc, &tb, 8);
    for (size_t i = 0; i < 8; i++)
        doc_table_row(doc, &tb, rows[i], i != 6 ? DOC_ROW_PLAIN : t->fits ? DOC_ROW_OK : DOC_ROW_BAD);
    doc_table_end(doc);
}

/* True when the space-separated list `list` holds the token s[0..n). */
static bool report_has_token(const char *list, const char *s, size_t n)
{
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, " ");
        if (len == n && memcmp(p, s, n) == 0)
            return true;
        p += len;
        p += *p == ' ';
    }
    return false;
}

/* The settings of cur that prev does not have: what one rung changed. */
static void report_delta(const char *prev, const char *cur, char *out, size_t size)
{
    size_t o = 0;
    out[0] = '\0';
    for (const char *p = cur; *p;) {
        size_t len = strcspn(p, " ");
        if (len && !report_has_token(prev, p, len) && o + len + 2 < size) {
            if (o)
                out[o++] = ' ';
            memcpy(out + o, p, len);
            o += len;
            out[o] = '\0';
        }
        p += len;
        p += *p == ' ';
    }
}

static void table_ladder(struct doc *doc, const struct report_sc *r)
{
    static const struct doc_col cols[] = {
        {"rung", 0.15, CANVAS_ALIGN_LEFT}, {"adds to the rungs above", 0.39, CANVAS_ALIGN_LEFT},
        {"b", 0.06, CANVAS_ALIGN_RIGHT}, {"peak", 0.12, CANVAS_ALIGN_RIGHT},
        {"fits", 0.08, CANVAS_ALIGN_CENTER}, {"added time / step", 0.20, CANVAS_ALIGN_RIGHT}};
    const struct plan *p = &r->plan;
    struct doc_table tb = {cols, 6, 0};
    char b[32], peak[32], extra[48], settings[256], prev[256] = "", delta[256], label[64];
    doc_table_start(doc, &tb, p->n_rungs + 1 < 4 ? p->n_rungs + 1 : 4);
    report_fmt_u64(b, sizeof b, r->sc->micro_batch);
    report_fmt_size(peak, sizeof peak, r->t.peak_bytes, r->units);
    const char *base[] = {"as configured", "", b, peak, r->t.fits ? "yes" : "no", "–"};
    doc_table_row(doc, &tb, base, r->t.fits ? DOC_ROW_OK : DOC_ROW_PLAIN);
    for (size_t i = 0; i < p->n_rungs; i++) {
        const struct plan_rung *g = &p->rungs[i];
        plan_rung_settings(p, i, settings, sizeof settings);
        report_delta(prev, settings, delta, sizeof delta);
        memcpy(prev, settings, sizeof prev);
        report_values_rung_label(g, label, sizeof label);
        report_fmt_u64(b, sizeof b, g->sc.micro_batch);
        report_fmt_size(peak, sizeof peak, g->terms.peak_bytes, r->units);
        if (g->extra_time_s > 1e-9)
            report_fmt_seconds(extra, sizeof extra, g->extra_time_s);
        else
            report_fmt(extra, sizeof extra, "–");
        if (g->thin_matmuls) {
            size_t len = strlen(extra);
            report_fmt(extra + len, sizeof extra - len, " (thin)");
        }
        const char *row[] = {label, delta, b, peak, g->fits ? "yes" : "no", extra};
        doc_table_row(doc, &tb, row, (int)i == p->fix_rung ? DOC_ROW_OK : DOC_ROW_PLAIN);
    }
    doc_table_end(doc);
}

static void table_microbatch(struct doc *doc, const struct report_sc *r)
{
    static const struct doc_col cols[] = {
        {"activation mode", 0.22, CANVAS_ALIGN_LEFT}, {"settings", 0.38, CANVAS_ALIGN_LEFT},
        {"largest b", 0.14, CANVAS_ALIGN_RIGHT}, {"tokens / micro-batch", 0.26, CANVAS_ALIGN_RIGHT}};
    static const char *const settings[PLAN_MODES] = {
        "attention=plain recompute=none", "attention=flash recompute=none",
        "attention=plain recompute=selective", "attention=flash recompute=full"};
    struct doc_table tb = {cols, 4, 0};
    doc_table_start(doc, &tb, PLAN_MODES);
    for (int m = 0; m < PLAN_MODES; m++) {
        char b[32], tok[48];
        uint64_t mb = r->max_b[m];
        report_fmt_u64(b, sizeof b, mb);
        if (mb)
            report_fmt_count(tok, sizeof tok, mb * r->sc->seq);
        else
            report_fmt(tok, sizeof tok, "not even b = 1 fits");
        const char *row[] = {plan_mode_name((enum plan_mode)m), settings[m], b, tok};
        doc_table_row(doc, &tb, row, mb ? DOC_ROW_PLAIN : DOC_ROW_BAD);
    }
    doc_table_end(doc);
}

/* ------------------------------------------------------------------------------------------ */
/* Charts.                                                                                     */

#define CHART_H 218.0

static void chart_fit(struct doc *doc, const struct report_sc *r, double y, double h)
{
    struct chart_bar bars[PLAN_MAX_RUNGS + 1];
    char labels[PLAN_MAX_RUNGS + 1][48];
    size_t n = 0;
    const struct terms *ts[PLAN_MAX_RUNGS + 1];
    ts[n] = &r->t;
    report_fmt(labels[n], sizeof labels[n], "as given\nb = %llu", (unsigned long long)r->sc->micro_batch);
    n++;
    for (size_t i = 0; i < r->plan.n_rungs; i++, n++) {
        char l[40];
        report_values_rung_label(&r->plan.rungs[i], l, sizeof l);
        report_fmt(labels[n], sizeof labels[n], "+ %s\nb = %llu", l,
            (unsigned long long)r->plan.rungs[i].sc.micro_batch);
        ts[n] = &r->plan.rungs[i].terms;
    }
    for (size_t i = 0; i < n; i++) {
        bars[i].label = labels[i];
        bars[i].term_bytes[CHART_WEIGHTS] = ts[i]->weights_bytes;
        bars[i].term_bytes[CHART_GRADS] = ts[i]->grads_bytes;
        bars[i].term_bytes[CHART_OPTIMIZER] = ts[i]->optimizer_bytes;
        bars[i].term_bytes[CHART_ACT] = ts[i]->act_bytes;
        bars[i].term_bytes[CHART_LOGITS] = ts[i]->logits_bytes;
    }
    struct chart_bars d = {.title = "Peak memory of the most loaded GPU: as given, then rung by rung",
                           .bars = bars,
                           .n = n,
                           .gpu_bytes = r->sc->gpu_mem_bytes,
                           .reserve = r->sc->reserve,
                           .units = r->units};
    chart_bars_draw(&doc->c, DOC_M_LEFT, y, doc_width(doc), h, &d, NULL);
}

/*
 * The scenario the second step chart compares with: checkpointing every k_best layers, or, when
 * the scenario already checkpoints every k, the same step without checkpointing.
 */
static void report_step_other(const struct report_sc *r, struct scenario *out, char *title,
                              size_t size)
{
    *out = *r->sc;
    if (r->sc->recompute == RECOMPUTE_EVERY_K) {
        out->recompute = RECOMPUTE_NONE;
        out->ckpt_every = 0;
        report_fmt(title, size, "The same step without checkpointing");
        return;
    }
    out->recompute = RECOMPUTE_EVERY_K;
    out->ckpt_every = r->t.k_best ? r->t.k_best : 1;
    if (out->ckpt_every == 1)
        report_fmt(title, size, "The same step, checkpointing every layer (the best k; recomputation "
                         "shaded)");
    else
        report_fmt(title, size, "The same step, checkpointing every %llu layers (the best k; "
                         "recomputation shaded)", (unsigned long long)out->ckpt_every);
}

/* Memory over one step: as configured, or (other) the comparison of report_step_other. */
static void chart_step(struct doc *doc, const struct report_sc *r, bool other, double y,
                       double h)
{
    struct scenario sc, cmp;
    char title[160], cmp_title[160];
    report_step_other(r, &cmp, cmp_title, sizeof cmp_title);
    if (other) {
        sc = cmp;
        memcpy(title, cmp_title, sizeof title);
        cmp = *r->sc;
    } else {
        sc = *r->sc;
        report_fmt(title, sizeof title, "Memory over one training step, as configured");
    }
    size_t cap = timeline_capacity(&sc);
    struct timeline_event *ev = calloc(cap ? cap : 1, sizeof *ev);
    struct timeline_summary sum;
    if (!ev || timeline_build(&sc, ev, cap, &sum) != 0) {
        free(ev);
        doc_fail(doc, -1);
        return;
    }
    /* Both step charts share the scale of the larger peak. */
    struct terms ot;
    uint64_t ymax = sum.peak_bytes;
    if (model_peak(&cmp, &ot) == MODEL_OK && ot.peak_bytes > ymax)
        ymax = ot.peak_bytes;
    struct chart_step d = {.title = title,
                           .events = ev,
                           .n = sum.n_events,
                           .states_bytes = sum.states_bytes,
                           .total_time = sum.total_time,
                           .gpu_bytes = r->sc->gpu_mem_bytes,
                           .reserve = r->sc->reserve,
                           .y_max_bytes = ymax,
                           .units = r->units};
    chart_step_draw(&doc->c, DOC_M_LEFT, y, doc_width(doc), h, &d, NULL);
    free(ev);
}

static void chart_kcurve(struct doc *doc, const struct report_sc *r, double y, double h)
{
    size_t cap = (size_t)r->sc->layers;
    uint64_t *peak = calloc(cap ? cap : 1, sizeof *peak);
    struct chart_kcurve d;
    memset(&d, 0, sizeof d);
    if (!peak || chart_kcurve_fill(r->sc, peak, cap, &d) != 0) {
        free(peak);
        doc_fail(doc, -1);
        return;
    }
    d.title = "Checkpointing every k layers: peak memory against k";
    d.units = r->units;
    chart_kcurve_draw(&doc->c, DOC_M_LEFT, y, doc_width(doc), h, &d, NULL);
    free(peak);
}

static void chart_walk(struct doc *doc, const struct report_sc *r, double y, double h)
{
    struct chart_walk_op ops[CHART_WALK_MAX];
    size_t n = chart_layer_walk_ops(r->sc, ops, CHART_WALK_MAX);
    struct chart_walk d = {.title = "Activations one layer keeps, operation by operation",
                           .ops = ops,
                           .n = n,
                           .heads_per_hidden = (double)r->sc->heads / (double)r->sc->hidden};
    chart_walk_draw(&doc->c, DOC_M_LEFT, y, doc_width(doc), h, &d, NULL);
}

static void chart_params(struct doc *doc, const struct report_sc *r, double y, double h)
{
    struct chart_param_item items[CHART_PARAM_MAX];
    size_t n = chart_layer_param_items(r->sc, items, CHART_PARAM_MAX);
    struct chart_params d = {.title = "Parameters of one layer, matrix by matrix",
                             .items = items,
                             .n = n};
    chart_params_draw(&doc->c, DOC_M_LEFT, y, doc_width(doc), h, &d, NULL);
}

/* The height of each chart on the page, pt. */
static double report_chart_height(const char *name)
{
    static const struct {
        const char *name;
        double h;
    } heights[] = {{"fit", 235}, {"step", 178}, {"step_ckpt", 178},
                   {"kcurve", 200}, {"walk", 205}, {"params", 138}};
    for (size_t i = 0; i < sizeof heights / sizeof *heights; i++)
        if (strcmp(heights[i].name, name) == 0)
            return heights[i].h;
    return CHART_H;
}

static void doc_chart(struct doc *doc, const struct report_sc *r, const char *name)
{
    double h = report_chart_height(name);
    doc_need(doc, h + 6);
    double y = doc->y;
    if (strcmp(name, "fit") == 0)
        chart_fit(doc, r, y, h);
    else if (strcmp(name, "step") == 0)
        chart_step(doc, r, false, y, h);
    else if (strcmp(name, "step_ckpt") == 0)
        chart_step(doc, r, true, y, h);
    else if (strcmp(name, "kcurve") == 0)
        chart_kcurve(doc, r, y, h);
    else if (strcmp(name, "walk") == 0)
        chart_walk(doc, r, y, h);
    else if (strcmp(name, "params") == 0)
        chart_params(doc, r, y, h);
    doc->y = y + h + 10;
}

static void doc_sc_table(struct doc *doc, const struct report_sc *r, const char *name)
{
    if (strcmp(name, "config") == 0)
        table_config(doc, r);
    else if (strcmp(name, "verdict") == 0)
        table_verdict(doc, r);
    else if (strcmp(name, "terms") == 0)
        table_terms(doc, r);
    else if (strcmp(name, "ladder") == 0)
        table_ladder(doc, r);
    else if (strcmp(name, "microbatch") == 0)
        table_microbatch(doc, r);
}

/* ------------------------------------------------------------------------------------------ */
/* The summary table: one row per scenario.                                                    */

struct report_run {
    const struct report_options *opt;
    enum chart_units units;
    struct report_values doc_vals;
    struct template scenario_tmpl, summary_tmpl;
    struct report_sc *scs;
    size_t n;
};

static void table_summary(struct doc *doc, const struct report_run *run, size_t first,
                          size_t count)
{
    static const struct doc_col cols[] = {
        {"scenario", 0.26, CANVAS_ALIGN_LEFT}, {"verdict", 0.13, CANVAS_ALIGN_LEFT},
        {"peak", 0.11, CANVAS_ALIGN_RIGHT}, {"budget", 0.11, CANVAS_ALIGN_RIGHT},
        {"cheapest fix", 0.39, CANVAS_ALIGN_LEFT}};
    struct doc_table tb = {cols, 5, 0};
    doc_table_start(doc, &tb, count < 3 ? count : 3);
    for (size_t i = first; i < first + count; i++) {
        const struct report_sc *r = &run->scs[i];
        const char (*v)[REPORT_VALUE_MAX] = r->vals.v;
        char fix[REPORT_VALUE_MAX + 64];
        if (r->plan.fix == PLAN_FIX_NONE)
            report_fmt(fix, sizeof fix, "–");
        else if (r->plan.fix == PLAN_FIX_NOTHING)
            report_fmt(fix, sizeof fix, "none fits (states need %s GPUs)", v[REPORT_PH_GPUS_FOR_STATES]);
        else
            report_fmt(fix, sizeof fix, "%s → %s", plan_fix_name(r->plan.fix), v[REPORT_PH_FIX_PEAK]);
        const char *row[] = {v[REPORT_PH_NAME], r->t.fits ? "fits" : "OOM", v[REPORT_PH_PEAK], v[REPORT_PH_BUDGET], fix};
        doc_table_row(doc, &tb, row, r->t.fits ? DOC_ROW_OK : DOC_ROW_BAD);
    }
    doc_table_end(doc);
}

/* ------------------------------------------------------------------------------------------ */
/* Rendering a template.                                                                       */

static void doc_block_text(struct doc *doc, const struct template_block *b,
                           struct report_values *vals)
{
    char *s = template_expand(b->text, report_values_lookup, vals);
    if (!s) {
        doc_fail(doc, -1);
        return;
    }
    if (b->kind == TEMPLATE_HEADING)
        doc_heading(doc, b->level, s);
    else if (b->kind == TEMPLATE_ITEM)
        doc_paragraph(doc, s, 12, "•");
    else
        doc_paragraph(doc, s, 0, NULL);
    free(s);
}

/* Height of an expanded paragraph or item, as doc_paragraph will draw it. */
static double doc_text_height(struct doc *doc, const struct template_block *b,
                              struct report_values *vals)
{
    char *s = template_expand(b->text, report_values_lookup, vals);
    if (!s)
        return 0;
    double indent = b->kind == TEMPLATE_ITEM ? 12 : 0;
    int lines = doc_lines(doc, s, DOC_BODY_PT, false, doc_width(doc) - indent);
    free(s);
    return lines * DOC_BODY_LEAD + (b->kind == TEMPLATE_ITEM ? 2.5 : 6);
}

/*
 * Keeps a heading with what follows it: the paragraphs under it and the first chart or the head
 * of the first table. Returns the height to ask for (at most a page).
 */
static double doc_keep_height(struct doc *doc, const struct template *tmpl, size_t i,
                              struct report_values *vals)
{
    double h = 40;
    for (size_t j = i + 1; j < tmpl->n; j++) {
        const struct template_block *b = &tmpl->blocks[j];
        if (b->kind == TEMPLATE_PARAGRAPH || b->kind == TEMPLATE_ITEM) {
            h += doc_text_height(doc, b, vals);
            continue;
        }
        if (b->kind == TEMPLATE_CHART) {
            h += report_chart_height(b->text) + 10;
            if (j + 1 < tmpl->n && tmpl->blocks[j + 1].kind == TEMPLATE_CHART)
                h += report_chart_height(tmpl->blocks[j + 1].text) + 10;
        }
        else if (b->kind == TEMPLATE_TABLE)
            h += strcmp(b->text, "verdict") == 0 ? 80 : 4 * DOC_ROW_H;
        break;
    }
    double page = doc_bottom(doc) - DOC_M_TOP;
    return h < page ? h : page;
}

/* Draws tmpl for scenario r (NULL: the summary, over scenarios [first, first + count)). */
static void doc_render(struct doc *doc, const struct template *tmpl, struct report_sc *r,
                       const struct report_run *run, size_t first, size_t count)
{
    struct report_values *vals = r ? &r->vals : (struct report_values *)&run->doc_vals;
    for (size_t i = 0; i < tmpl->n && !doc->error; i++) {
        const struct template_block *b = &tmpl->blocks[i];
        switch (b->kind) {
        case TEMPLATE_HEADING:
            doc_need(doc, doc_keep_height(doc, tmpl, i, vals));
            doc_block_text(doc, b, vals);
            break;
        case TEMPLATE_PARAGRAPH:
        case TEMPLATE_ITEM:
            doc_block_text(doc, b, vals);
            break;
        case TEMPLATE_PAGEBREAK:
            if (doc->y > DOC_M_TOP + 1)
                doc_new_page(doc);
            break;
        case TEMPLATE_CHART:
            /* Charts that follow each other directly share a page (they are compared). */
            if (i + 1 < tmpl->n && tmpl->blocks[i + 1].kind == TEMPLATE_CHART &&
                (i == 0 || tmpl->blocks[i - 1].kind != TEMPLATE_CHART))
                doc_need(doc, report_chart_height(b->text) +
                                  report_chart_height(tmpl->blocks[i + 1].text) + 20);
            if (r)
                doc_chart(doc, r, b->text);
            break;
        case TEMPLATE_TABLE:
            if (r)
                doc_sc_table(doc, r, b->text);
            else
                table_summary(doc, run, first, count);
            break;
        }
        if (doc->c.error)
            doc_fail(doc, doc->c.error);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Documents and files.                                                                        */

/* Starts a document titled title on the paper of the options. */
static int report_doc_init(struct doc *doc, const struct report_run *run, const char *title,
                           struct diag *d)
{
    return doc_init(doc, title, run->opt->paper == REPORT_PAPER_LETTER,
                    run->opt->source_date_epoch, d);
}

static void doc_scenario(struct doc *doc, const struct report_run *run, struct report_sc *r)
{
    report_fmt(doc->running, sizeof doc->running, "%s", r->sc->name);
    doc_new_page(doc);
    doc_bookmark(doc, r->sc->name);
    doc_render(doc, &run->scenario_tmpl, r, run, 0, 0);
}

/* Finishes doc (footers) and writes it to path. */
static int report_finish(struct doc *doc, const char *path, struct diag *d)
{
    if (doc_finish(doc) != 0) {
        if (doc->error == -1)
            diag_report(d, NULL, 0, "cannot write '%s': out of memory", path);
        else
            diag_report(d, NULL, 0, "cannot write '%s': libharu error 0x%04X", path,
                        (unsigned)doc->error);
        return -1;
    }
    return out_write_atomic(path, doc_write, doc, d);
}

static int report_combined(struct report_run *run, const char *path, struct diag *d)
{
    struct doc doc;
    int rc = -1;
    if (report_doc_init(&doc, run, run->doc_vals.v[REPORT_PH_TITLE], d) != 0)
        goto out;
    report_fmt(doc.running, sizeof doc.running, "summary");
    doc_new_page(&doc);
    doc_bookmark(&doc, "Summary");
    doc_render(&doc, &run->summary_tmpl, NULL, run, 0, run->n);
    for (size_t i = 0; i < run->n; i++)
        doc_scenario(&doc, run, &run->scs[i]);
    rc = report_finish(&doc, path, d);
out:
    doc_release(&doc);
    return rc;
}

static int report_single(struct report_run *run, struct report_sc *r, const char *path,
                         struct diag *d)
{
    struct doc doc;
    char title[SCENARIO_NAME_MAX + 64];
    report_fmt(title, sizeof title, "%s: %s", run->doc_vals.v[REPORT_PH_TITLE], r->sc->name);
    int rc = -1;
    if (report_doc_init(&doc, run, title, d) == 0) {
        doc_scenario(&doc, run, r);
        rc = report_finish(&doc, path, d);
    }
    doc_release(&doc);
    return rc;
}

/* Writes one PDF per scenario, with unique safe names. */
static int report_split(struct report_run *run, struct diag *d)
{
    const char *combined = run->opt->file_name ? run->opt->file_name : "report.pdf";
    char (*names)[OUT_NAME_MAX + 1] = calloc(run->n + 1, sizeof *names);
    const char **taken = calloc(run->n + 1, sizeof *taken);
    int rc = 0;
    if (!names || !taken) {
        diag_report(d, NULL, 0, "out of memory");
        rc = -1;
        goto out;
    }
    /* The combined report's own name is taken first, so no scenario can overwrite it. */
    out_safe_name(combined, names[0], sizeof names[0]);
    char *dot = strrchr(names[0], '.');
    if (dot && strcmp(dot, ".pdf") == 0)
        *dot = '\0';
    taken[0] = names[0];
    for (size_t i = 0; i < run->n; i++) {
        char *nm = names[i + 1];
        out_safe_name(run->scs[i].sc->name, nm, OUT_NAME_MAX + 1);
        if (out_unique_name(nm, OUT_NAME_MAX + 1, taken, i + 1) != 0) {
            rc = -1;
            continue;
        }
        taken[i + 1] = nm;
        char path[4096];
        if (out_join(path, sizeof path, run->opt->out_dir, nm, ".pdf") != 0) {
            diag_report(d, NULL, 0, "cannot write '%s/%s.pdf': path too long", run->opt->out_dir, nm);
            rc = -1;
            continue;
        }
        if (report_single(run, &run->scs[i], path, d) != 0)
            rc = -1;
    }
out:
    free(names);
    free(taken);
    return rc;
}

/* Loads a template from path, or from the data dir when path is NULL. */
static int report_load_template(struct template *t, const char *path, const char *rel,
                                const struct template_names *names, struct diag *d)
{
    char found[4096];
    if (!path) {
        if (paths_find_data(rel, found, sizeof found) != 0) {
            diag_report(d, NULL, 0, "cannot find '%s'", rel);
            return -1;
        }
        path = found;
    }
    return template_load(t, path, names, d);
}

void report_options_init(struct report_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->out_dir = "out";
    opt->file_name = "report.pdf";
    opt->paper = REPORT_PAPER_A4;
}

const char *const *report_placeholder_names(size_t *n)
{
    return report_values_names(n);
}

int report_write(const struct scenario *scs, size_t n, const struct report_options *opt,
                 struct diag *d)
{
    struct report_run run;
    memset(&run, 0, sizeof run);
    run.opt = opt;
    run.units = opt->gib ? CHART_GIB : CHART_GB;
    template_init(&run.scenario_tmpl);
    template_init(&run.summary_tmpl);
    int rc = -1;
    if (n == 0) {
        diag_report(d, NULL, 0, "no scenario to report");
        return -1;
    }

    /* 1. Both templates, parsed and checked before anything is drawn. */
    size_t n_names;
    const char *const *all = report_placeholder_names(&n_names);
    struct template_names sc_names = {all, n_names, report_charts,
                                      sizeof report_charts / sizeof *report_charts,
                                      report_sc_tables,
                                      sizeof report_sc_tables / sizeof *report_sc_tables};
    struct template_names sum_names = {all, REPORT_PH_DOC_END, NULL, 0, report_sum_tables, 1};
    int bad = report_load_template(&run.scenario_tmpl, opt->scenario_template,
                                   "templates/report.tmpl", &sc_names, d);
    bad |= report_load_template(&run.summary_tmpl, opt->summary_template,
                                "templates/summary.tmpl", &sum_names, d);
    if (bad)
        goto out;

    /* 2. Every scenario's numbers. */
    run.scs = calloc(n, sizeof *run.scs);
    if (!run.scs) {
        diag_report(d, NULL, 0, "out of memory");
        goto out;
    }
    run.n = n;
    for (size_t i = 0; i < n; i++)
        if (report_sc_init(&run.scs[i], &scs[i], run.units, d) != 0)
            goto out;
    report_values_doc(&run.doc_vals, run.scs, n, run.units, opt->inputs, opt->validation_note);
    for (size_t i = 0; i < n; i++)
        report_sc_share_doc(&run.scs[i], &run.doc_vals);

    /* 3. The files, in out_dir (made here when it is missing; one level, like mkdir). */
    (void)mkdir(opt->out_dir, 0777); /* a failure shows in the write below, with its reason */
    char path[4096];
    if (out_join(path, sizeof path, opt->out_dir, opt->file_name ? opt->file_name : "report.pdf",
                 "") != 0) {
        diag_report(d, NULL, 0, "cannot write into '%s': path too long", opt->out_dir);
        goto out;
    }
    rc = report_combined(&run, path, d);
    if (opt->split && report_split(&run, d) != 0)
        rc = -1;
out:
    free(run.scs);
    template_release(&run.scenario_tmpl);
    template_release(&run.summary_tmpl);
    return rc;
}
