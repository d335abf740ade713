/*
 * The whole-pipeline fuzz target: any bytes, read as a scenario file, and every scenario config
 * accepts taken through what `eval` and `report` do with it: the model and the ladder, eval's
 * rows in every format (the CSV row read back: one field per column, the name unchanged), the
 * report's values (no placeholder left unfilled), and every chart of the report drawn on the
 * recording canvas with its geometry checked (finite, inside its rectangle, a bounded number of
 * drawing calls whatever the layers). An accepted scenario that fails any of it fails the
 * target (FUZZ_FAIL). Built into tests/fuzz/test_fuzz_pipeline.c (make test, make asan) and
 * with libFuzzer by `make fuzz`.
 */
#ifndef MEMFIT_FUZZ_PIPELINE_H
#define MEMFIT_FUZZ_PIPELINE_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw/canvas_rec.h"
#include "draw/chart.h"
#include "input/config.h"
#include "input/csvin.h"
#include "cli/evalout.h"
#include "fuzz_common.h"
#include "model/model.h"
#include "plan/plan.h"
#include "report/report_phrases.h"
#include "report/report_values.h"
#include "plan/timeline.h"

/* Steps with more events than this are not walked here (a walk costs a few ns an event, and
 * the fuzzer's layers reach 10^10); the chart's own size does not depend on it. */
#define FUZZ_STEP_EVENTS_MAX ((size_t)1 << 18)
/* No chart draws more calls than this, whatever the scenario. */
#define FUZZ_CHART_CALLS_MAX 8000

static struct config_presets *fuzz_pipe_presets;
static struct report_phrases fuzz_pipe_phrases;
static struct report_sc fuzz_pipe_sc;
static struct chart_kcurve fuzz_pipe_kcurve;
static struct chart_step_series fuzz_pipe_series;

static void fuzz_pipe_load(void)
{
    if (fuzz_pipe_presets)
        return;
    struct diag d;
    diag_init(&d, NULL, NULL);
    fuzz_pipe_presets = config_presets_load(FUZZ_DATA_DIR "/configs/models.csv",
                                            FUZZ_DATA_DIR "/configs/gpus.csv", &d);
    report_phrases_init(&fuzz_pipe_phrases);
    if (!fuzz_pipe_presets ||
        report_phrases_load(&fuzz_pipe_phrases, FUZZ_DATA_DIR "/templates/phrases.tmpl", &d) != 0)
        FUZZ_FAIL("cannot load the presets or the phrases: %s", d.first);
}

/* Frees what fuzz_pipe_load keeps (the deterministic run's teardown). */
static void fuzz_pipe_release(void)
{
    config_presets_free(fuzz_pipe_presets);
    report_phrases_release(&fuzz_pipe_phrases);
    fuzz_pipe_presets = NULL;
}

/* Chart geometry: every number finite, every mark inside (x, y, w, h), paths and saves
 * balanced, the libharu state rule kept, a bounded number of calls. */
static void fuzz_pipe_canvas(const struct canvas_rec *r, const struct chart_geom *g,
                             const char *chart, const char *name)
{
    const double x = 0, y = 0, w = 500, h = 260, tol = 2;
    if (r->violations || r->depth != 0 || r->canvas.error)
        FUZZ_FAIL("%s of '%s': %zu state changes in a path, save depth %d, error %d", chart, name,
                  r->violations, r->depth, r->canvas.error);
    if (r->n > FUZZ_CHART_CALLS_MAX)
        FUZZ_FAIL("%s of '%s': %zu drawing calls", chart, name, r->n);
    if (g && !(isfinite(g->plot_x) && isfinite(g->plot_y) && g->plot_w > 0 && g->plot_h > 0 &&
               isfinite(g->y_min) && isfinite(g->y_max) && g->y_max > g->y_min))
        FUZZ_FAIL("%s of '%s': plot %g %g %g %g, y %g..%g", chart, name, g->plot_x, g->plot_y,
                  g->plot_w, g->plot_h, g->y_min, g->y_max);
    for (size_t i = 0; i < r->n; i++) {
        const struct canvas_rec_call *k = &r->calls[i];
        for (int a = 0; a < 4; a++)
            if (!isfinite(k->arg[a]))
                FUZZ_FAIL("%s of '%s': call %zu (op %d) has a number that is not finite", chart,
                          name, i, k->op);
        bool paint = k->op == CANVAS_REC_FILL || k->op == CANVAS_REC_STROKE ||
                     k->op == CANVAS_REC_FILL_STROKE;
        if (!paint)
            continue;
        const struct canvas_box *b = &k->box;
        if (!(b->x0 >= x - tol && b->y0 >= y - tol && b->x1 <= x + w + tol && b->y1 <= y + h + tol))
            FUZZ_FAIL("%s of '%s': call %zu (op %d) leaves the chart: %g %g %g %g", chart, name, i,
                      k->op, b->x0, b->y0, b->x1, b->y1);
    }
}

/* The does-it-fit bars of the report: the scenario, then each rung. */
static void fuzz_pipe_bars(const struct report_sc *r, struct canvas_rec *rec, struct chart_geom *g)
{
    struct chart_bar bars[PLAN_MAX_RUNGS + 1];
    const struct terms *ts[PLAN_MAX_RUNGS + 1];
    size_t n = 0;
    ts[n] = &r->t;
    bars[n++].label = "as given\nb = 1";
    for (size_t i = 0; i < r->plan.n_rungs; i++, n++) {
        ts[n] = &r->plan.rungs[i].terms;
        bars[n].label = plan_fix_name(r->plan.rungs[i].fix);
    }
    for (size_t i = 0; i < n; i++) {
        bars[i].term_bytes[CHART_WEIGHTS] = ts[i]->weights_bytes;
        bars[i].term_bytes[CHART_GRADS] = ts[i]->grads_bytes;
        bars[i].term_bytes[CHART_OPTIMIZER] = ts[i]->optimizer_bytes;
        bars[i].term_bytes[CHART_ACT] = ts[i]->act_bytes;
        bars[i].term_bytes[CHART_LOGITS] = ts[i]->logits_bytes;
    }
    struct chart_bars d = {"fit", bars, n, r->sc->gpu_mem_bytes, r->sc->reserve, UNITS_GB};
    chart_bars_draw(&rec->canvas, 0, 0, 500, 260, &d, g);
}

/* One step chart of sc, streamed (the report's way); false when it is too long to walk here. */
static bool fuzz_pipe_step(const struct scenario *sc, struct canvas_rec *rec, struct chart_geom *g)
{
    size_t events = timeline_capacity(sc);
    if (events == 0 || events > FUZZ_STEP_EVENTS_MAX)
        return false;
    struct terms t;
    struct timeline_summary sum;
    if (model_peak(sc, &t) != MODEL_OK)
        FUZZ_FAIL("step of '%s': model_peak overflows", sc->name);
    uint64_t stage = sc->layers / sc->pp, segment = 0;
    if (sc->recompute == RECOMPUTE_EVERY_K && sc->ckpt_every > 0)
        segment = sc->ckpt_every < stage ? sc->ckpt_every : stage;
    chart_step_series_init(&fuzz_pipe_series, segment, t.ckpt_bytes);
    if (timeline_stream(sc, chart_step_series_add, &fuzz_pipe_series, &sum) != 0)
        FUZZ_FAIL("step of '%s': the timeline overflows", sc->name);
    if (sum.segment != segment || sum.states_bytes + fuzz_pipe_series.top_bytes != sum.peak_bytes)
        FUZZ_FAIL("step of '%s': the series lost the peak", sc->name);
    struct chart_step d = {.title = "step",
                           .series = &fuzz_pipe_series,
                           .states_bytes = sum.states_bytes,
                           .total_time = sum.total_time,
                           .gpu_bytes = sc->gpu_mem_bytes,
                           .reserve = sc->reserve,
                           .ckpt_bytes = segment ? t.ckpt_bytes : 0,
                           .segment = segment,
                           .units = UNITS_GB};
    chart_step_draw(&rec->canvas, 0, 0, 500, 260, &d, g);
    return true;
}

/* Every chart of the report for r, each on its own recording canvas. */
static void fuzz_pipe_charts(const struct report_sc *r)
{
    const struct scenario *sc = r->sc;
    struct scenario cmp;
    plan_step_comparison(sc, r->t.k_best, &cmp);
    for (int chart = 0; chart < 6; chart++) {
        struct canvas_rec rec;
        struct chart_geom g;
        bool drawn = true, geom = true;
        canvas_rec_init(&rec, 500, 260);
        if (chart == 0) {
            fuzz_pipe_bars(r, &rec, &g);
        } else if (chart == 1 || chart == 2) {
            drawn = fuzz_pipe_step(chart == 1 ? sc : &cmp, &rec, &g);
        } else if (chart == 3) {
            memset(&fuzz_pipe_kcurve, 0, sizeof fuzz_pipe_kcurve);
            if (chart_kcurve_fill(sc, &fuzz_pipe_kcurve) != 0)
                FUZZ_FAIL("k-curve of '%s' overflows", sc->name);
            fuzz_pipe_kcurve.title = "k";
            chart_kcurve_draw(&rec.canvas, 0, 0, 500, 260, &fuzz_pipe_kcurve, &g);
        } else if (chart == 4) {
            struct chart_walk_op ops[CHART_WALK_MAX];
            struct chart_walk d = {"walk", ops, chart_layer_walk_ops(sc, ops, CHART_WALK_MAX),
                                   (double)sc->heads / (double)sc->hidden, 0};
            chart_walk_draw(&rec.canvas, 0, 0, 500, 260, &d, NULL);
            geom = false; /* its y axis is categories */
        } else {
            struct chart_param_item items[CHART_PARAM_MAX];
            struct chart_params d = {"params", items,
                                     chart_layer_param_items(sc, items, CHART_PARAM_MAX), 0};
            chart_params_draw(&rec.canvas, 0, 0, 500, 260, &d, &g);
        }
        static const char *const names[] = {"fit", "step", "step_ckpt", "kcurve", "walk", "params"};
        if (drawn)
            fuzz_pipe_canvas(&rec, geom ? &g : NULL, names[chart], sc->name);
        canvas_rec_release(&rec);
    }
}

/* eval's rows of sc in every format; the CSV read back. */
static void fuzz_pipe_eval(const struct scenario *sc, const struct terms *t, const struct plan *p)
{
    char settings[PLAN_SETTINGS_MAX];
    plan_fix_settings(p, settings, sizeof settings);
    struct evalout_fix fix = evalout_ladder_fix(p, settings);
    struct cost c;
    cost_step(sc, t, &c);
    for (int fmt = EVALOUT_CSV; fmt <= EVALOUT_TABLE; fmt++) {
        FILE *f = tmpfile();
        if (!f)
            return;
        struct evalout out;
        evalout_init(&out, (enum evalout_format)fmt, UNITS_GB, f);
        evalout_begin(&out);
        evalout_row(&out, sc, t, &fix, &c);
        evalout_end(&out);
        if (out.error || ferror(f))
            FUZZ_FAIL("eval of '%s': format %d failed", sc->name, fmt);
        evalout_release(&out);
        if (fmt == EVALOUT_CSV) {
            rewind(f);
            struct diag d;
            diag_init(&d, NULL, NULL);
            struct csvin *in = csvin_new(f, "eval.csv", &d);
            struct csvin_record head, row;
            size_t cols = 0;
            if (in && csvin_next(in, &head) == 1)
                cols = head.n_fields;
            if (!in || csvin_next(in, &row) != 1 || row.n_fields != cols ||
                strcmp(row.fields[0], sc->name) != 0 || csvin_next(in, &row) != 0)
                FUZZ_FAIL("eval of '%s': the CSV row does not read back (%s)", sc->name, d.first);
            csvin_free(in);
        }
        fclose(f);
    }
}

/* Returns the number of valid scenarios read. */
static int fuzz_pipeline_one(const uint8_t *data, size_t size)
{
    fuzz_pipe_load();
    FILE *f = tmpfile();
    if (!f)
        return 0;
    if ((size && fwrite(data, 1, size, f) != size) || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return 0;
    }
    struct diag d;
    diag_init(&d, NULL, NULL);
    struct nameset names;
    nameset_init(&names);
    struct config_options opt = {0.15, PEAK_STEP, IMPL_MEMFIT}; /* the command line's default */
    struct config_reader *r = config_reader_new(f, "fuzz.csv", fuzz_pipe_presets, &opt, &names, &d);
    static struct scenario sc;
    unsigned long line;
    int rc, valid = 0;
    while (r && (rc = config_reader_next(r, &sc, &line)) != 0 && rc != -2) {
        if (rc != 1)
            continue;
        valid++;
        struct diag rd;
        diag_init(&rd, NULL, NULL);
        size_t misses = fuzz_pipe_phrases.misses;
        if (report_sc_init(&fuzz_pipe_sc, &sc, UNITS_GB, &fuzz_pipe_phrases, &rd) != 0)
            FUZZ_FAIL("'%s' is accepted but the report cannot compute it: %s", sc.name, rd.first);
        if (fuzz_pipe_phrases.misses != misses)
            FUZZ_FAIL("'%s': a phrase's placeholder is left unfilled", sc.name);
        fuzz_pipe_eval(&sc, &fuzz_pipe_sc.t, &fuzz_pipe_sc.plan);
        fuzz_pipe_charts(&fuzz_pipe_sc);
    }
    config_reader_free(r);
    nameset_release(&names);
    fclose(f);
    return valid;
}

#ifdef MEMFIT_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_pipeline_one(data, size);
    return 0;
}
#endif

#endif
