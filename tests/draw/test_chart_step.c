/*
 * Tests of the step charts, through the recording canvas (tests/support/chart_checks.h): the
 * memory over one step and its phases, the checkpoint-every-k curve against the model and the eval
 * columns, and what these charts cost to draw (a million layers cost what 24 do).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart_checks.h"
#include "draw/canvas_rec.h"
#include "draw/chart.h"
#include "model/model.h"
#include "plan/timeline.h"

/* ---------------------------------------------------------------- memory over one step */

static void test_step_hand_made(void **state)
{
    (void)state;
    struct timeline_event ev[16];
    size_t n = hand_events(ev);
    struct chart_step d = {.title = "step",
                           .events = ev,
                           .n = n,
                           .states_bytes = 20000000000ull,
                           .total_time = 9,
                           .gpu_bytes = 80000000000ull,
                           .reserve = 0.15,
                           .units = UNITS_GB};
    struct canvas_rec r;
    canvas_rec_init(&r, 600, 400);
    struct chart_geom g;
    chart_step_draw(&r.canvas, X0, Y0, W, H, &d, &g);
    check_layout(&r, &g);
    check_round_ticks(g.y_ticks, g.n_y_ticks, g.y_step);
    assert_true(g.x_min == 0 && g.x_max == 9);
    double bottom = g.plot_y + g.plot_h, pt_per_gb = g.plot_h / g.y_max;
    /* The highest mark is the logits spike on 20 + 30 GB, at the turn (t = 3). */
    double top = bottom;
    const struct canvas_rec_call *spike = NULL, *states = NULL;
    for (size_t i = 0; i < r.n; i++) {
        const struct canvas_rec_call *k = &r.calls[i];
        if (k->op != CANVAS_REC_FILL || k->box.y0 < g.plot_y)
            continue;
        if (same_rgb(k->fill, chart_states_colour()) && k->box.x1 - k->box.x0 == g.plot_w)
            states = k;
        if (k->box.y0 < top && k->box.y0 > g.plot_y && k->box.x1 - k->box.x0 <= 3 + 1e-9) {
            top = k->box.y0;
            spike = k;
        }
    }
    assert_non_null(spike);
    assert_true(near(bottom - top, 55 * pt_per_gb, 1e-9));
    assert_true(same_rgb(spike->fill, chart_term_colour(CHART_LOGITS)));
    assert_true(near((spike->box.x0 + spike->box.x1) / 2, g.plot_x + g.plot_w * 3 / 9, 1e-9));
    assert_non_null(states);
    assert_true(near(states->box.y1 - states->box.y0, 20 * pt_per_gb, 1e-9));
    canvas_rec_release(&r);
}

/* The worked example checkpointed every 4 layers: 6 recomputation marks (in their own colour, not
 * the logits'), a checkpoint band. */
static void test_step_sawtooth(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    sc.recompute = RECOMPUTE_EVERY_K;
    sc.ckpt_every = 4;
    size_t cap = timeline_capacity(&sc);
    struct timeline_event *ev = calloc(cap, sizeof *ev);
    struct timeline_summary sum;
    struct terms t;
    assert_non_null(ev);
    assert_int_equal(timeline_build(&sc, ev, cap, &sum), 0);
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    struct chart_step d = {.title = "k = 4",
                           .events = ev,
                           .n = sum.n_events,
                           .states_bytes = sum.states_bytes,
                           .total_time = sum.total_time,
                           .ckpt_bytes = t.ckpt_bytes,
                           .segment = sum.segment,
                           .units = UNITS_GB};
    struct canvas_rec r;
    canvas_rec_init(&r, 600, 400);
    struct chart_geom g;
    chart_step_draw(&r.canvas, X0, Y0, W, H, &d, &g);
    check_layout(&r, &g);
    assert_true(g.x_max == 96); /* 4L: every layer is rebuilt once */
    double bottom = g.plot_y + g.plot_h;
    size_t marks = 0, band = 0;
    for (size_t i = 0; i < r.n; i++) {
        const struct canvas_rec_call *k = &r.calls[i];
        if (k->op != CANVAS_REC_FILL || k->box.y0 < g.plot_y)
            continue;
        assert_false(same_rgb(k->fill, chart_term_colour(CHART_LOGITS)) && k->box.y1 == bottom);
        if (same_rgb(k->fill, chart_recompute_colour()) && k->box.y1 == bottom) {
            marks++;
            /* Each mark spans one segment's rebuild: 4 forward passes. */
            assert_true(near(k->box.x1 - k->box.x0, g.plot_w * 4 / 96, 1e-9));
        }
        band += same_rgb(k->fill, chart_term_colour(CHART_GRADS));
    }
    assert_int_equal(marks, 6);
    assert_int_equal(band, 1);
    canvas_rec_release(&r);
    free(ev);
}

/* ---------------------------------------------------------------- the phases of a step */

/* The bars of @chart phases for sc under --peak step: each phase that happens, part by part,
 * then the lesson's sum; *peak the index of the highest phase. Returns the number of bars. */
static size_t phase_bars(const struct scenario *step_sc, struct chart_phase_bar *bars, size_t *peak,
                         struct terms *t)
{
    static const char *const names[STEP_PHASES] = {"forward end", "backward start", "rebuild",
                                                   "backward end", "optimizer step"};
    struct step_parts parts;
    assert_int_equal(model_peak(step_sc, t), MODEL_OK);
    assert_int_equal(model_step_parts(step_sc, t, t->peak_stage, &parts), MODEL_OK);
    size_t n = 0;
    for (int p = 0; p < STEP_PHASES; p++) {
        if (t->stage[t->peak_stage].step.phase_bytes[p] == 0)
            continue;
        if ((enum step_phase)p == t->peak_phase)
            *peak = n;
        bars[n] = (struct chart_phase_bar){.label = names[p]};
        for (int i = 0; i < STEP_PARTS; i++)
            bars[n].term_bytes[i] = parts.phase[p][i];
        n++;
    }
    struct scenario lesson = *step_sc;
    lesson.peak = PEAK_LESSON;
    struct terms lt;
    assert_int_equal(model_peak(&lesson, &lt), MODEL_OK);
    bars[n] = (struct chart_phase_bar){.label = "the static sum"};
    bars[n].term_bytes[CHART_WEIGHTS] = lt.weights_bytes;
    bars[n].term_bytes[CHART_GRADS] = lt.grads_bytes;
    bars[n].term_bytes[CHART_OPTIMIZER] = lt.optimizer_bytes;
    bars[n].term_bytes[CHART_ACT] = lt.act_bytes;
    bars[n].term_bytes[CHART_LOGITS] = lt.logits_bytes;
    return n + 1;
}

/* The phases of the worked example's step (and checkpointed, under autocast): one stacked bar
 * per phase, proportional to its parts, the highest the model's peak, outlined and marked; the
 * lesson's sum set apart; the step's terms in the legend; nothing outside the plot. */
static void test_phases_geometry(void **state)
{
    (void)state;
    for (int v = 0; v < 2; v++) {
        struct scenario sc;
        scenario_lesson_example(&sc);
        sc.peak = PEAK_STEP;
        if (v == 1) {
            sc.precision = PRECISION_AUTOCAST;
            sc.attention = ATTENTION_FLASH;
            sc.recompute = RECOMPUTE_EVERY_K;
            sc.ckpt_every = 4;
        }
        struct chart_phase_bar bars[STEP_PHASES + 1];
        size_t peak = 99;
        struct terms t;
        size_t n = phase_bars(&sc, bars, &peak, &t);
        assert_int_equal(n, v == 0 ? 5 : 6); /* a rebuild only with checkpointing */
        assert_true(peak < n - 1);
        struct chart_phases d = {.title = "phases",
                                 .bars = bars,
                                 .n = n,
                                 .gpu_bytes = 80000000000ull,
                                 .reserve = 0.15,
                                 .units = UNITS_GB,
                                 .mark_peak = true,
                                 .peak = peak,
                                 .peak_label = "peak",
                                 .last_apart = true};
        const double w = 483, h = 215; /* the report's */
        struct canvas_rec r;
        canvas_rec_init(&r, 600, 400);
        struct chart_geom g;
        chart_phases_draw(&r.canvas, X0, Y0, w, h, &d, &g);
        check_layout_in(&r, &g, X0, Y0, w, h);
        double pt_per_gb = g.plot_h / (g.y_max - g.y_min), bottom = g.plot_y + g.plot_h;
        bool in_clip[4096];
        assert_true(r.n < 4096);
        clip_flags(&r, in_clip);
        /* Bar by bar, the lesson's five terms and the step's that the bar has, stacked, each
         * its bytes times one scale; the bars' tops their totals. */
        size_t bar = 0;
        int term = 0;
        double top = bottom, slot = g.plot_w / (double)n;
        uint64_t highest = 0;
        size_t highest_bar = 0;
        for (size_t i = 0; i < r.n; i++) {
            const struct canvas_rec_call *k = &r.calls[i];
            if (!in_clip[i] || k->op != CANVAS_REC_FILL)
                continue;
            for (;;) { /* a term of no bytes draws nothing */
                while (term < CHART_STEP_TERMS && bars[bar].term_bytes[term] == 0)
                    term++;
                if (term < CHART_STEP_TERMS)
                    break;
                bar++;
                term = 0;
                top = bottom;
                assert_true(bar < n);
            }
            assert_true(same_rgb(k->fill, chart_term_colour((enum chart_term)term)));
            double gb = (double)bars[bar].term_bytes[term] / 1e9;
            assert_true(near(k->box.y1 - k->box.y0, gb * pt_per_gb, 1e-9));
            assert_true(near(k->box.y1, top, 1e-9));
            assert_true(
                near((k->box.x0 + k->box.x1) / 2, g.plot_x + slot * ((double)bar + 0.5), 1e-9));
            top = k->box.y0;
            term++;
            uint64_t total = 0;
            for (int j = 0; j < CHART_STEP_TERMS; j++)
                total += bars[bar].term_bytes[j];
            if (total > highest && bar < n - 1) {
                highest = total;
                highest_bar = bar;
            }
        }
        assert_int_equal(bar, n - 1);
        /* The highest phase is the model's peak, at its phase, and it is the one marked. */
        assert_int_equal(highest, t.peak_bytes);
        assert_int_equal(highest_bar, peak);
        size_t outlines = 0, apart = 0;
        for (size_t i = 0; i < r.n; i++) {
            const struct canvas_rec_call *k = &r.calls[i];
            if (!in_clip[i] || k->op != CANVAS_REC_STROKE)
                continue;
            if (k->box.x1 - k->box.x0 > 1 && k->box.y1 - k->box.y0 > 1) { /* a rectangle */
                outlines++;
                assert_true(near(bottom - k->box.y0, (double)t.peak_bytes / 1e9 * pt_per_gb, 1e-6));
                assert_true(near((k->box.x0 + k->box.x1) / 2,
                                 g.plot_x + slot * ((double)peak + 0.5), 1e-9));
            }
            if (k->box.x0 == k->box.x1 && k->n_dash) { /* the dotted separator */
                apart++;
                assert_true(near(k->box.x0, g.plot_x + slot * (double)(n - 1), 1e-9));
            }
        }
        assert_int_equal(outlines, 1);
        assert_int_equal(apart, 1);
        assert_true(has_text(&r, "peak"));
        assert_true(has_text(&r, "the static sum"));
        assert_true(has_text(&r, "activations, inputs"));
        assert_true(has_text(&r, "logits, loss"));
        assert_true(has_text(&r, "temporaries"));
        assert_int_equal(has_text(&r, "autocast copies"), v == 1);
        char total[32];
        snprintf(total, sizeof total, "%.1f", (double)t.peak_bytes / 1e9);
        assert_true(has_text(&r, total));
        canvas_rec_release(&r);
    }
}

/* Under --peak step the step chart draws the phases: its highest mark is the model's peak (at
 * the turn for the worked example: the loss's tensors), the gradients and the temporaries have
 * their areas and legend, the phases of no time their columns inside the plot. Streamed into a
 * series too, checkpointed under autocast. */
static void test_step_chart_phases(void **state)
{
    (void)state;
    for (int v = 0; v < 2; v++) {
        struct scenario sc;
        scenario_lesson_example(&sc);
        sc.peak = PEAK_STEP;
        if (v == 1) {
            sc.precision = PRECISION_AUTOCAST;
            sc.recompute = RECOMPUTE_EVERY_K;
            sc.ckpt_every = 4;
        }
        struct terms t;
        assert_int_equal(model_peak(&sc, &t), MODEL_OK);
        struct chart_step_series *ser = malloc(sizeof *ser);
        assert_non_null(ser);
        struct timeline_summary sum;
        chart_step_series_init(ser, v == 1 ? 4 : 0, t.ckpt_bytes);
        assert_int_equal(timeline_stream(&sc, chart_step_series_add, ser, &sum), 0);
        assert_int_equal(sum.peak_bytes, t.peak_bytes);
        assert_int_equal(sum.states_bytes + ser->top_bytes, t.peak_bytes);
        assert_true(ser->step);
        /* The phases of no time: the forward's end and the loss at the turn (without the
         * output layer... it has one here), the end of the backward and the optimizer step. */
        assert_int_equal(ser->n_spikes, 4);
        struct chart_step d = {.title = "step",
                               .series = ser,
                               .states_bytes = sum.states_bytes,
                               .total_time = sum.total_time,
                               .gpu_bytes = 80000000000ull,
                               .reserve = 0.15,
                               .ckpt_bytes = sum.segment ? t.ckpt_bytes : 0,
                               .segment = sum.segment,
                               .units = UNITS_GB};
        struct canvas_rec r;
        canvas_rec_init(&r, 600, 400);
        struct chart_geom g;
        chart_step_draw(&r.canvas, X0, Y0, W, 260, &d, &g);
        check_layout_in(&r, &g, X0, Y0, W, 260);
        double bottom = g.plot_y + g.plot_h, pt_per_gb = g.plot_h / g.y_max;
        double top = bottom;
        size_t columns = 0, grads = 0;
        for (size_t i = 0; i < r.n; i++) {
            const struct canvas_rec_call *k = &r.calls[i];
            if (k->op != CANVAS_REC_FILL || k->box.y0 < g.plot_y)
                continue;
            top = fmin(top, k->box.y0);
            columns += k->box.x1 - k->box.x0 <= 3 + 1e-9 && k->box.y1 - k->box.y0 > 0 &&
                       k->box.y1 < bottom + 1e-9;
            grads += same_rgb(k->fill, chart_term_colour(CHART_GRADS));
        }
        assert_true(near(bottom - top, (double)t.peak_bytes / 1e9 * pt_per_gb, 1e-6));
        assert_true(columns >= 4);
        assert_true(grads >= 1);
        assert_true(has_text(&r, "gradients"));
        assert_true(has_text(&r, "weights, optimizer states"));
        assert_true(has_text(&r, "temporaries"));
        assert_true(has_text(&r, "logits, loss"));
        assert_int_equal(has_text(&r, "autocast copies"), v == 1);
        assert_int_equal(has_text(&r, "checkpoints"), v == 1);
        canvas_rec_release(&r);
        free(ser);
    }
}

/* The fill of the legend swatch drawn just before the legend text s. */
static struct canvas_rgb swatch_of(const struct canvas_rec *r, const char *s)
{
    for (size_t i = 0; i < r->n; i++) {
        if (!is_text(r->calls[i].op) || strcmp(r->calls[i].text, s) != 0)
            continue;
        for (size_t k = i; k-- > 0;)
            if (r->calls[k].op == CANVAS_REC_FILL)
                return r->calls[k].fill;
    }
    fail_msg("no legend item '%s'", s);
    return (struct canvas_rgb){0, 0, 0};
}

/* The lightness of a colour printed in grey (Rec. 709 luma). */
static double grey_of(struct canvas_rgb c)
{
    return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b;
}

/* The step chart's legend gives the logits and the recomputed forward a colour each, told apart
 * in print, in grey too; the marks on the time axis are the recomputation's. Both under --peak
 * lesson ("logits") and --peak step ("logits, loss"). */
static void test_step_recompute_colour(void **state)
{
    (void)state;
    struct canvas_rgb rec = chart_recompute_colour(), logits = chart_term_colour(CHART_LOGITS);
    assert_false(same_rgb(rec, logits));
    assert_true(fabs(grey_of(rec) - grey_of(logits)) >= 0.15);
    for (int v = 0; v < 2; v++) {
        struct scenario sc;
        scenario_lesson_example(&sc);
        sc.recompute = RECOMPUTE_EVERY_K;
        sc.ckpt_every = 4;
        sc.peak = v ? PEAK_STEP : PEAK_LESSON;
        struct terms t;
        assert_int_equal(model_peak(&sc, &t), MODEL_OK);
        struct chart_step_series *ser = malloc(sizeof *ser);
        assert_non_null(ser);
        struct timeline_summary sum;
        chart_step_series_init(ser, 4, t.ckpt_bytes);
        assert_int_equal(timeline_stream(&sc, chart_step_series_add, ser, &sum), 0);
        struct chart_step d = {.title = "k = 4",
                               .series = ser,
                               .states_bytes = sum.states_bytes,
                               .total_time = sum.total_time,
                               .gpu_bytes = 80000000000ull,
                               .reserve = 0.15,
                               .ckpt_bytes = t.ckpt_bytes,
                               .segment = sum.segment,
                               .units = UNITS_GB};
        struct canvas_rec r;
        canvas_rec_init(&r, 600, 400);
        struct chart_geom g;
        chart_step_draw(&r.canvas, X0, Y0, W, 260, &d, &g);
        check_layout_in(&r, &g, X0, Y0, W, 260);
        struct canvas_rgb rec_swatch = swatch_of(&r, "recomputed forward");
        struct canvas_rgb logits_swatch = swatch_of(&r, v ? "logits, loss" : "logits");
        assert_true(same_rgb(rec_swatch, rec));
        assert_true(same_rgb(logits_swatch, logits));
        assert_false(same_rgb(rec_swatch, logits_swatch));
        canvas_rec_release(&r);
        free(ser);
    }
}

/* ---------------------------------------------------------------- checkpoint every k */

static void test_kcurve(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    sc.attention = ATTENTION_FLASH;
    struct chart_kcurve d;
    memset(&d, 0, sizeof d);
    assert_int_equal(chart_kcurve_fill(&sc, &d), 0);
    assert_int_equal(d.n, 24);
    assert_int_equal(d.n_points, 24); /* every k */
    const uint64_t *peak = d.peak_bytes;
    for (size_t i = 0; i < 24; i++)
        assert_int_equal(d.k[i], i + 1);
    assert_int_equal(d.k_best, 1); /* doc/model.md 5.2: k = 1 is best for L < 34 */
    /* k* = sqrt(L c / A) with c = 2sbh, A = 34 sbh + 4 asb (doc/model.md 5.2, FlashAttention):
     * about sqrt(24 / 17). */
    double sbh = 2048.0 * 8 * 2048, asb = 16.0 * 2048 * 8;
    assert_true(near(d.k_star, sqrt(24 * 2 * sbh / (34 * sbh + 4 * asb)), 1e-12));
    assert_true(near(d.k_star, 1.19, 0.005));
    /* doc/model.md sections 9.5-9.6: 27.0 GB with full checkpointing, 51.7 GB without. */
    assert_true(near((double)peak[0] / 1e9, 27.0, 0.05));
    assert_true(near((double)d.none_bytes / 1e9, 51.7, 0.05));
    d.title = "k";
    d.act_label = "activations kept, M(k)";
    d.units = UNITS_GB;
    struct canvas_rec r;
    canvas_rec_init(&r, 600, 400);
    struct chart_geom g;
    chart_kcurve_draw(&r.canvas, X0, Y0, W, H, &d, &g);
    check_layout(&r, &g);
    check_round_ticks(g.y_ticks, g.n_y_ticks, g.y_step);
    /* One 3 pt marker per k, centred on its peak. */
    double bottom = g.plot_y + g.plot_h, pt_per_gb = g.plot_h / g.y_max;
    size_t k = 0;
    for (size_t i = 0; i < r.n; i++) {
        const struct canvas_rec_call *c = &r.calls[i];
        if (c->op != CANVAS_REC_FILL || !near(c->box.x1 - c->box.x0, 3, 1e-9) ||
            c->box.y0 < g.plot_y)
            continue;
        assert_true(k < 24);
        assert_true(
            near(bottom - (c->box.y0 + c->box.y1) / 2, (double)peak[k] / 1e9 * pt_per_gb, 1e-9));

        assert_true(
            near((c->box.x0 + c->box.x1) / 2, g.plot_x + g.plot_w * (double)(k + 1) / 25, 1e-9));
        k++;
    }
    assert_int_equal(k, 24);
    /* Under the peak, the activations M(k) themselves (doc/model.md 5.1): 24 A without
     * checkpointing, 24 c + A with k = 1, 3 c + 8 A with k = 8; one stroke through them all,
     * from M(1) to M(24), with its legend. */
    double c_bytes = 2 * sbh, a_bytes = (double)d.act_none_bytes / 24;
    assert_true(near((double)d.act_none_bytes / 1e9, 27.4, 0.05));
    assert_true(near((double)d.act_bytes[0], 24 * c_bytes + a_bytes, 1));
    assert_true(near((double)d.act_bytes[7], 3 * c_bytes + 8 * a_bytes, 1));
    assert_true(has_text(&r, "activations kept, M(k)"));
    size_t curves = 0;
    for (size_t i = 0; i < r.n; i++) {
        const struct canvas_rec_call *c = &r.calls[i];
        if (c->op != CANVAS_REC_STROKE ||
            !near(bottom - c->box.y1, (double)d.act_bytes[0] / 1e9 * pt_per_gb, 1e-6) ||
            !near(bottom - c->box.y0, (double)d.act_bytes[23] / 1e9 * pt_per_gb, 1e-6))
            continue;
        curves++;
    }
    assert_int_equal(curves, 1);
    canvas_rec_release(&r);
}

/* The k-curve agrees with the eval columns: same A (selective included), k* and k_best, one
 * point per k inside a pipeline stage (GPT-3 175B with selective recomputation, pp = 8). */
static void test_kcurve_matches_eval_with_pipeline_and_selective(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    sc.layers = 96;
    sc.hidden = 12288;
    sc.heads = sc.kv_heads = 96;
    sc.ffn = 4 * 12288;
    sc.micro_batch = 1;
    sc.recompute = RECOMPUTE_SELECTIVE;
    sc.tp = 8;
    sc.sp = true;
    sc.pp = 8;
    sc.dp = 12;
    sc.zero = 1;
    struct terms t;
    assert_int_equal(model_eval(&sc, &t), MODEL_OK);
    struct chart_kcurve d;
    memset(&d, 0, sizeof d);
    assert_int_equal(chart_kcurve_fill(&sc, &d), 0);
    const uint64_t *peak = d.peak_bytes;
    assert_int_equal(d.n, 12); /* L/pp */
    assert_true(fabs(d.k_star - t.k_star) < 1e-12);
    assert_int_equal(d.k_best, t.k_best);
    assert_int_equal(d.none_bytes, t.peak_bytes); /* the scenario as configured */
    for (size_t k = 1; k <= d.n; k++)
        assert_true(peak[t.k_best - 1] <= peak[k - 1]);
}

/* ---------------------------------------------------------------- a chart's cost */

/* The worked example with L layers and a checkpoint every k (0: none). */
static void deep_scenario(struct scenario *sc, uint64_t layers, uint64_t k)
{
    scenario_lesson_example(sc);
    sc->layers = layers;
    sc->hidden = 64;
    sc->heads = sc->kv_heads = 4;
    sc->ffn = 256;
    sc->vocab = 1000;
    sc->seq = 128;
    sc->micro_batch = 1;
    sc->attention = ATTENTION_FLASH;
    sc->recompute = k ? RECOMPUTE_EVERY_K : RECOMPUTE_NONE;
    sc->ckpt_every = k;
    sc->gpu_mem_bytes = 80000000000000ull;
}

/* The step and the k-curve of L layers, drawn: the number of recorded calls. The step is
 * streamed into a series of fixed size: nothing of it grows with L. */
static size_t step_and_kcurve_calls(uint64_t layers, uint64_t k, struct chart_step_series *ser)
{
    struct scenario sc;
    deep_scenario(&sc, layers, k);
    struct terms t;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    chart_step_series_init(ser, k, t.ckpt_bytes);
    struct timeline_summary sum;
    assert_int_equal(timeline_stream(&sc, chart_step_series_add, ser, &sum), 0);
    assert_int_equal(ser->events, sum.n_events);
    assert_true(ser->n <= CHART_STEP_POINTS);
    /* Merged points keep the highest value: the walk's peak is on the chart. */
    assert_int_equal(sum.states_bytes + ser->top_bytes, sum.peak_bytes);
    struct chart_step d = {.title = "step",
                           .series = ser,
                           .states_bytes = sum.states_bytes,
                           .total_time = sum.total_time,
                           .gpu_bytes = sc.gpu_mem_bytes,
                           .reserve = 0.15,
                           .ckpt_bytes = t.ckpt_bytes,
                           .segment = sum.segment,
                           .units = UNITS_GB};
    struct canvas_rec r;
    canvas_rec_init(&r, 600, 800);
    struct chart_geom g;
    chart_step_draw(&r.canvas, X0, Y0, W, H, &d, &g);
    check_layout(&r, &g);
    assert_true(g.x_max == sum.total_time);
    struct chart_kcurve kc;
    memset(&kc, 0, sizeof kc);
    assert_int_equal(chart_kcurve_fill(&sc, &kc), 0);
    assert_int_equal(kc.n, layers);
    assert_true(kc.n_points <= CHART_KCURVE_POINTS);
    assert_int_equal(kc.k[0], 1);
    assert_int_equal(kc.k[kc.n_points - 1], layers);
    bool best = false;
    for (size_t i = 0; i < kc.n_points; i++) {
        assert_true(i == 0 || kc.k[i] > kc.k[i - 1]);
        best = best || kc.k[i] == kc.k_best;
    }
    assert_true(best);
    kc.title = "k";
    kc.units = UNITS_GB;
    chart_kcurve_draw(&r.canvas, X0, Y0 + H + 20, W, H, &kc, &g);
    size_t n = r.n;
    canvas_rec_release(&r);
    return n;
}

/* A million layers cost a chart what 24 do: the step keeps at most CHART_STEP_POINTS points and
 * the k-curve at most CHART_KCURVE_POINTS (both charts were one point per layer: 3 million
 * events and a million values of k, 872 MB and a 60 MB PDF). */
static void a_million_layers_cost_what_24_do(void **state)
{
    (void)state;
    struct chart_step_series *ser = malloc(sizeof *ser);
    assert_non_null(ser);
    size_t small = step_and_kcurve_calls(24, 0, ser);
    size_t big = step_and_kcurve_calls(1000000, 0, ser);
    assert_true(ser->per_point > 1);
    size_t big_ckpt = step_and_kcurve_calls(1000000, 1000, ser); /* the sawtooth */
    size_t bound = 3 * CHART_STEP_POINTS * 2 + 2 * CHART_KCURVE_POINTS + 400;
    assert_true(small < bound);
    assert_true(big < bound);
    assert_true(big_ckpt < bound);
    free(ser);
}

/* With fewer events than points, the series keeps one point per event: the chart is the same
 * whether drawn from an array or from a stream. */
static void a_short_step_keeps_every_event(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    sc.recompute = RECOMPUTE_EVERY_K;
    sc.ckpt_every = 4;
    size_t cap = timeline_capacity(&sc);
    struct timeline_event *ev = calloc(cap, sizeof *ev);
    struct chart_step_series *ser = malloc(sizeof *ser);
    assert_non_null(ev);
    assert_non_null(ser);
    struct timeline_summary sum;
    assert_int_equal(timeline_build(&sc, ev, cap, &sum), 0);
    chart_step_series_init(ser, sum.segment, 1);
    assert_int_equal(timeline_stream(&sc, chart_step_series_add, ser, &sum), 0);
    assert_int_equal(ser->n, sum.n_events);
    for (size_t i = 0; i < sum.n_events; i++) {
        assert_true(ser->points[i].t_start == ev[i].t_start);
        assert_true(ser->points[i].t_end == ev[i].t_end);
        assert_int_equal(ser->points[i].act_bytes, ev[i].act_bytes);
        assert_int_equal(ser->points[i].top_bytes, ev[i].act_bytes + ev[i].logits_bytes);
    }
    free(ev);
    free(ser);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kcurve_matches_eval_with_pipeline_and_selective),
        cmocka_unit_test(test_step_hand_made),
        cmocka_unit_test(test_step_sawtooth),
        cmocka_unit_test(test_phases_geometry),
        cmocka_unit_test(test_step_chart_phases),
        cmocka_unit_test(test_step_recompute_colour),
        cmocka_unit_test(test_kcurve),
        cmocka_unit_test(a_million_layers_cost_what_24_do),
        cmocka_unit_test(a_short_step_keeps_every_event),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
