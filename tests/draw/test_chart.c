/*
 * Tests of chart, through the recording canvas: nice ticks, bar heights proportional to the
 * terms, the reserve line at 85%, nothing drawn outside the plot area or the chart's rectangle,
 * no overlapping text, the libharu state rule; and the data helpers against the model. The search's
 * charts: log ticks, the scatter's bins (a million layouts, a few thousand marks) and the tp x pp
 * map.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw/canvas_rec.h"
#include "draw/chart.h"
#include "model/model.h"
#include "plan/timeline.h"

#define X0 20.0
#define Y0 30.0
#define W 480.0
#define H 300.0

static bool near(double a, double b, double tol)
{
    return fabs(a - b) <= tol;
}

static bool same_rgb(struct canvas_rgb a, struct canvas_rgb b)
{
    return a.r == b.r && a.g == b.g && a.b == b.b;
}

static bool is_paint(enum canvas_rec_op op)
{
    return op == CANVAS_REC_FILL || op == CANVAS_REC_STROKE || op == CANVAS_REC_FILL_STROKE;
}

static bool is_text(enum canvas_rec_op op)
{
    return op == CANVAS_REC_TEXT || op == CANVAS_REC_TEXT_VERTICAL;
}

static bool box_inside(struct canvas_box b, double x, double y, double w, double h, double tol)
{
    return b.x0 >= x - tol && b.y0 >= y - tol && b.x1 <= x + w + tol && b.y1 <= y + h + tol;
}

static bool boxes_overlap(struct canvas_box a, struct canvas_box b)
{
    const double slack = 0.25; /* touching is fine */
    return a.x0 < b.x1 - slack && b.x0 < a.x1 - slack && a.y0 < b.y1 - slack && b.y0 < a.y1 - slack;
}

/* Whether call i is drawn while the plot's clip is in force. */
static void clip_flags(const struct canvas_rec *r, bool *in_clip)
{
    int depth = 0, clip_depth = -1;
    for (size_t i = 0; i < r->n; i++) {
        enum canvas_rec_op op = r->calls[i].op;
        if (op == CANVAS_REC_SAVE)
            depth++;
        if (op == CANVAS_REC_RESTORE && --depth < clip_depth)
            clip_depth = -1;
        if (op == CANVAS_REC_CLIP)
            clip_depth = depth;
        in_clip[i] = clip_depth >= 0 && op != CANVAS_REC_CLIP;
    }
}

/*
 * What every chart must do: no state set inside a path, balanced save/restore, every mark inside
 * the chart's rectangle, every clipped mark inside the plot area, no two texts overlapping.
 */
static void check_layout_in(const struct canvas_rec *r, const struct chart_geom *g, double X0_,
                            double Y0_, double W_, double H_)
{
    assert_int_equal(r->violations, 0);
    assert_int_equal(r->depth, 0);
    assert_int_equal(r->canvas.error, 0);
    assert_true(g->plot_w > 50 && g->plot_h > 50);
    assert_true(box_inside(
        (struct canvas_box){g->plot_x, g->plot_y, g->plot_x + g->plot_w, g->plot_y + g->plot_h},
        X0_, Y0_, W_, H_, 0));
    bool *in_clip = calloc(r->n, sizeof *in_clip);
    assert_non_null(in_clip);
    clip_flags(r, in_clip);
    size_t clipped = 0;
    for (size_t i = 0; i < r->n; i++) {
        const struct canvas_rec_call *k = &r->calls[i];
        double tol = k->op == CANVAS_REC_FILL ? 1e-9 : k->line_width / 2 + 1e-9;
        if (is_paint(k->op) || is_text(k->op)) {
            if (!box_inside(k->box, X0_, Y0_, W_, H_, is_text(k->op) ? 0.5 : tol))
                fail_msg("call %zu (op %d, '%s') leaves the chart: %.1f %.1f %.1f %.1f", i, k->op,
                         k->text ? k->text : "", k->box.x0, k->box.y0, k->box.x1, k->box.y1);
        }
        if (in_clip[i] && is_paint(k->op)) {
            clipped++;
            if (!box_inside(k->box, g->plot_x, g->plot_y, g->plot_w, g->plot_h, tol))
                fail_msg("data call %zu (op %d) leaves the plot: %.2f %.2f %.2f %.2f", i, k->op,
                         k->box.x0, k->box.y0, k->box.x1, k->box.y1);
        }
        if (!is_text(k->op))
            continue;
        for (size_t j = 0; j < i; j++)
            if (is_text(r->calls[j].op) && boxes_overlap(k->box, r->calls[j].box))
                fail_msg("texts overlap: '%s' and '%s'", k->text, r->calls[j].text);
    }
    assert_true(clipped > 0);
    free(in_clip);
}

static void check_layout(const struct canvas_rec *r, const struct chart_geom *g)
{
    check_layout_in(r, g, X0, Y0, W, H);
}

/* Ticks are k * step with step 1, 2, 2.5 or 5 times a power of ten. */
static void check_round_ticks(const double *t, size_t n, double step)
{
    double p = pow(10, floor(log10(step)));
    double m = step / p;
    assert_true(near(m, 1, 1e-9) || near(m, 2, 1e-9) || near(m, 2.5, 1e-9) || near(m, 5, 1e-9));
    for (size_t i = 0; i < n; i++) {
        double q = t[i] / step;
        assert_true(near(q, nearbyint(q), 1e-9 * fmax(1, fabs(q))));
        if (i > 0)
            assert_true(near(t[i] - t[i - 1], step, 1e-9 * fmax(step, fabs(t[i]))));
    }
}

/* ---------------------------------------------------------------- ticks */

static void test_ticks(void **state)
{
    (void)state;
    double t[CHART_TICKS_MAX], step;
    size_t n = chart_ticks(0, 123.2, 7, t, CHART_TICKS_MAX, &step);
    assert_true(step == 20);
    assert_int_equal(n, 8); /* 0, 20, ..., 140 */
    assert_true(t[0] == 0 && t[7] == 140);
    n = chart_ticks(0, 1.33, 3, t, CHART_TICKS_MAX, &step);
    assert_true(step == 0.5 && t[n - 1] == 1.5);
    n = chart_ticks(0, 96, 10, t, CHART_TICKS_MAX, &step);
    assert_true(step == 10 && t[n - 1] == 100);
    n = chart_ticks(0, 0.07, 5, t, CHART_TICKS_MAX, &step);
    assert_true(near(step, 0.02, 1e-15) && near(t[n - 1], 0.08, 1e-12));
    /* Any range: round steps, at most max intervals, covering [lo, hi]. */
    srand(7);
    for (int i = 0; i < 2000; i++) {
        double lo = (rand() % 1000) * pow(10, rand() % 7 - 3) * (rand() % 3 == 0 ? 0 : 1);
        double hi = lo + (1 + rand() % 10000) * pow(10, rand() % 7 - 4);
        int max = 3 + rand() % 8;
        n = chart_ticks(lo, hi, max, t, CHART_TICKS_MAX, &step);
        assert_true(n >= 2 && n - 1 <= (size_t)max);
        assert_true(t[0] <= lo + step * 1e-9 && t[n - 1] >= hi - step * 1e-9);
        assert_true(t[0] > lo - step && t[n - 1] < hi + step);
        check_round_ticks(t, n, step);
    }
}

static void test_format_tick(void **state)
{
    (void)state;
    char buf[32];
    chart_format_tick(2.5, 2.5, buf, sizeof buf);
    assert_string_equal(buf, "2.5");
    chart_format_tick(40, 20, buf, sizeof buf);
    assert_string_equal(buf, "40");
    chart_format_tick(0.25, 0.05, buf, sizeof buf);
    assert_string_equal(buf, "0.25");
    chart_format_tick(-1e-17, 0.5, buf, sizeof buf);
    assert_string_equal(buf, "0.0");
    chart_format_tick(1.5, 0.5, buf, sizeof buf);
    assert_string_equal(buf, "1.5");
}

/* ---------------------------------------------------------------- does it fit */

static void bar_of(const struct scenario *sc, const char *label, struct chart_bar *b)
{
    struct terms t;
    assert_int_equal(model_peak(sc, &t), MODEL_OK);
    b->label = label;
    b->term_bytes[CHART_WEIGHTS] = t.weights_bytes;
    b->term_bytes[CHART_GRADS] = t.grads_bytes;
    b->term_bytes[CHART_OPTIMIZER] = t.optimizer_bytes;
    b->term_bytes[CHART_ACT] = t.act_bytes;
    b->term_bytes[CHART_LOGITS] = t.logits_bytes;
}

/* The worked example's 116.1 / 51.7 / 27.0 GB (doc/model.md sections 9.4-9.6). */
static void lesson_bars(struct chart_bar bars[3])
{
    struct scenario sc;
    scenario_lesson_example(&sc);
    bar_of(&sc, "baseline", &bars[0]);
    sc.attention = ATTENTION_FLASH;
    bar_of(&sc, "flash", &bars[1]);
    sc.recompute = RECOMPUTE_EVERY_K;
    sc.ckpt_every = 1;
    bar_of(&sc, "flash + full\ncheckpointing", &bars[2]);
}

static void test_bars_geometry(void **state)
{
    (void)state;
    struct chart_bar bars[3];
    lesson_bars(bars);
    struct chart_bars d = {"Does it fit?", bars, 3, 80000000000ull, 0.15, UNITS_GB};
    struct canvas_rec r;
    canvas_rec_init(&r, 600, 400);
    struct chart_geom g;
    chart_bars_draw(&r.canvas, X0, Y0, W, H, &d, &g);
    check_layout(&r, &g);
    check_round_ticks(g.y_ticks, g.n_y_ticks, g.y_step);
    assert_true(g.y_min == 0 && g.y_max >= 116.1);
    assert_true(g.y_top == 0); /* 116.1 GB beside an 80 GB GPU: the axis stays whole */
    double pt_per_gb = g.plot_h / (g.y_max - g.y_min), bottom = g.plot_y + g.plot_h;
    bool in_clip[4096];
    assert_true(r.n < 4096);
    clip_flags(&r, in_clip);
    /* Every segment's height is its term in GB times the same scale; segments stack. */
    size_t segments = 0;
    double tops[3] = {bottom, bottom, bottom};
    for (size_t i = 0; i < r.n; i++) {
        const struct canvas_rec_call *k = &r.calls[i];
        if (!in_clip[i] || k->op != CANVAS_REC_FILL)
            continue;
        size_t bar = segments / CHART_TERMS, term = segments % CHART_TERMS;
        assert_true(bar < 3);
        assert_true(same_rgb(k->fill, chart_term_colour((enum chart_term)term)));
        double gb = (double)bars[bar].term_bytes[term] / 1e9;
        assert_true(near(k->box.y1 - k->box.y0, gb * pt_per_gb, 1e-9));
        assert_true(near(k->box.y1, tops[bar], 1e-9));
        tops[bar] = k->box.y0;
        segments++;
    }
    assert_int_equal(segments, 3 * CHART_TERMS);
    assert_true(near(bottom - tops[0], 116.1 * pt_per_gb, 0.05 * pt_per_gb));
    /* The solid GPU line at 80 GB and the dashed reserve line at 85% of it. */
    double solid = -1, dashed = -1;
    for (size_t i = 0; i < r.n; i++) {
        const struct canvas_rec_call *k = &r.calls[i];
        if (!in_clip[i] || k->op != CANVAS_REC_STROKE || k->box.y0 != k->box.y1)
            continue;
        assert_true(near(k->box.x1 - k->box.x0, g.plot_w, 1e-9));
        if (k->n_dash)
            dashed = k->box.y0;
        else
            solid = k->box.y0;
    }
    assert_true(near(bottom - solid, 80 * pt_per_gb, 1e-9));
    assert_true(near((bottom - dashed) / (bottom - solid), 0.85, 1e-12));
    /* The legend names all five terms; the bar totals are written. */
    size_t found = 0;
    for (size_t i = 0; i < r.n; i++)
        if (r.calls[i].text &&
            (strcmp(r.calls[i].text, "116.1") == 0 || strcmp(r.calls[i].text, "51.7") == 0 ||
             strcmp(r.calls[i].text, "27.0") == 0 ||
             strcmp(r.calls[i].text, "optimizer states") == 0 ||
             strcmp(r.calls[i].text, "checkpointing") == 0))
            found++;
    assert_int_equal(found, 5);
    canvas_rec_release(&r);
}

/* GiB: the same bars, 1.0737 times shorter per byte; the axis says GiB. */
static void test_bars_gib(void **state)
{
    (void)state;
    struct chart_bar bars[3];
    lesson_bars(bars);
    struct chart_bars d = {NULL, bars, 3, 80000000000ull, 0.15, UNITS_GIB};
    struct canvas_rec r;
    canvas_rec_init(&r, 600, 400);
    struct chart_geom g;
    chart_bars_draw(&r.canvas, X0, Y0, W, H, &d, &g);
    check_layout(&r, &g);
    assert_true(g.y_max >= 116.1e9 / 1073741824.0 && g.y_max < 116.1e9 / 1e9 * 1.3);
    bool axis = false;
    for (size_t i = 0; i < r.n; i++)
        axis = axis || (r.calls[i].text && strcmp(r.calls[i].text, "memory of one GPU (GiB)") == 0);
    assert_true(axis);
    canvas_rec_release(&r);
}

/* A bar of `gb` GB: a tenth weights and gradients each, a third optimizer states, the rest
 * activations and 2% logits. */
static struct chart_bar bar_gb(const char *label, double gb)
{
    struct chart_bar b = {label, {0}};
    uint64_t total = (uint64_t)(gb * 1e9);
    b.term_bytes[CHART_WEIGHTS] = total / 10;
    b.term_bytes[CHART_GRADS] = total / 10;
    b.term_bytes[CHART_OPTIMIZER] = total / 3;
    b.term_bytes[CHART_LOGITS] = total / 50;
    b.term_bytes[CHART_ACT] = total - total / 10 * 2 - total / 3 - total / 50;
    return b;
}

/* The fix ladder of a 2,000 GB scenario on an 80 GB GPU, report-sized: on a linear axis to
 * 2,000 GB the rungs that fit would be 1-2 pt high and the budget line at 3% of the plot. The axis
 * breaks: under the gap it runs to just above the GPU line, so every fitting bar is at least 40 pt
 * tall, the budget line sits at a third of the plot or more, and the bars there keep one scale;
 * above the gap the tall bars keep their order. */
static void test_bars_broken_axis_keeps_fitting_bars_readable(void **state)
{
    (void)state;
    const double gb[] = {2000, 900, 300, 120, 60, 40};
    struct chart_bar bars[6];
    static const char *const labels[] = {"as given\nb = 8", "+ flash\nb = 8",     "+ ZeRO-2\nb = 8",
                                         "b = 2\nb = 2",    "+ full ckpt\nb = 2", "+ tp\nb = 2"};
    for (int i = 0; i < 6; i++)
        bars[i] = bar_gb(labels[i], gb[i]);
    struct chart_bars d = {"Does it fit?", bars, 6, 80000000000ull, 0.15, UNITS_GB};
    const double w = 483, h = 235; /* the report's fit chart */
    struct canvas_rec r;
    canvas_rec_init(&r, 600, 400);
    struct chart_geom g;
    chart_bars_draw(&r.canvas, X0, Y0, w, h, &d, &g);
    check_layout_in(&r, &g, X0, Y0, w, h);
    double bottom = g.plot_y + g.plot_h;
    /* Broken: the lower part ends just above the GPU line, the upper part reaches 2,000 GB. */
    assert_true(g.y_top >= 2000 && g.y_max >= 80 && g.y_max <= 100);
    assert_true(g.plot_y < g.gap_y0 && g.gap_y0 < g.gap_y1 && g.gap_y1 < bottom);
    bool in_clip[4096];
    assert_true(r.n < 4096);
    clip_flags(&r, in_clip);
    /* Each bar's extent from its fills (one or two per term, the two parts of a term that crosses
     * the gap); nothing is filled inside the gap. */
    double top[6], height[6], slot = g.plot_w / 6;
    for (int i = 0; i < 6; i++) {
        top[i] = bottom;
        height[i] = 0;
    }
    for (size_t i = 0; i < r.n; i++) {
        const struct canvas_rec_call *k = &r.calls[i];
        if (!in_clip[i] || k->op != CANVAS_REC_FILL)
            continue;
        assert_false(k->box.y1 > g.gap_y0 + 1e-9 && k->box.y0 < g.gap_y1 - 1e-9);
        int bar = (int)(((k->box.x0 + k->box.x1) / 2 - g.plot_x) / slot);
        assert_true(bar >= 0 && bar < 6);
        top[bar] = fmin(top[bar], k->box.y0);
        height[bar] += k->box.y1 - k->box.y0;
    }
    double budget_gb = 80 * 0.85;
    for (int i = 0; i < 6; i++) {
        if (gb[i] <= budget_gb)
            assert_true(height[i] >= 40); /* 2.6 pt and 1.7 pt on a whole axis */
        if (i > 0)
            assert_true(top[i] > top[i - 1]); /* the order of the totals, across the gap */
    }
    assert_true(near(height[4] / height[5], 60.0 / 40, 1e-9)); /* one scale under the gap */
    assert_true(top[0] >= g.plot_y && top[0] < g.gap_y0);
    /* The GPU line and the dashed budget line under the gap, the budget a third of the way up. */
    double solid = -1, dashed = -1;
    for (size_t i = 0; i < r.n; i++) {
        const struct canvas_rec_call *k = &r.calls[i];
        if (!in_clip[i] || k->op != CANVAS_REC_STROKE || k->box.y0 != k->box.y1)
            continue;
        if (k->n_dash)
            dashed = k->box.y0;
        else
            solid = k->box.y0;
    }
    assert_true(solid > g.gap_y1 && dashed > solid && dashed < bottom);
    assert_true(bottom - dashed >= g.plot_h / 3);
    assert_true(near((bottom - dashed) / (bottom - solid), 0.85, 1e-9));
    /* The totals are written, the tallest too. */
    size_t found = 0;
    for (size_t i = 0; i < r.n; i++)
        found += r.calls[i].text &&
                 (strcmp(r.calls[i].text, "2000.0") == 0 || strcmp(r.calls[i].text, "40.0") == 0);
    assert_int_equal(found, 2);
    canvas_rec_release(&r);
}

/* A GPU whose memory is not a whole number of GB (an H100 as nvidia-smi reports it) keeps its
 * tenth in the legend. */
static void test_bars_legend_tenths(void **state)
{
    (void)state;
    struct chart_bar bars[3];
    lesson_bars(bars);
    struct chart_bars d = {NULL, bars, 3, 85520809984ull, 0.15, UNITS_GB};
    struct canvas_rec r;
    canvas_rec_init(&r, 600, 400);
    struct chart_geom g;
    chart_bars_draw(&r.canvas, X0, Y0, W, H, &d, &g);
    check_layout(&r, &g);
    size_t found = 0;
    for (size_t i = 0; i < r.n; i++)
        found += r.calls[i].text && (strcmp(r.calls[i].text, "GPU memory 85.5 GB") == 0 ||
                                     strcmp(r.calls[i].text, "15% kept free: 72.7 GB") == 0);
    assert_int_equal(found, 2);
    canvas_rec_release(&r);
}

/* A report-sized chart (half a page) with a whole ladder of eight rungs still has room for
 * every label. */
static void test_bars_ladder_small(void **state)
{
    (void)state;
    static const char *const labels[] = {
        "baseline\nb = 8",    "flash\nb = 8",     "zero1\nb = 8", "zero2\nb = 8",
        "micro_batch\nb = 4", "full_ckpt\nb = 8", "tp\nt = 8",    "offload\nb = 8"};
    struct chart_bar bars[8];
    lesson_bars(bars);
    for (int i = 0; i < 8; i++) {
        bars[i] = bars[i % 3];
        bars[i].label = labels[i];
    }
    struct chart_bars d = {"A long title: scenario llama3-70b-on-8xH100 and its fix ladder",
                           bars,
                           8,
                           80000000000ull,
                           0.15,
                           UNITS_GB};
    struct canvas_rec r;
    canvas_rec_init(&r, 600, 400);
    struct chart_geom g;
    chart_bars_draw(&r.canvas, X0, Y0, 360, 200, &d, &g);
    check_layout_in(&r, &g, X0, Y0, 360, 200);
    canvas_rec_release(&r);
}

/* ---------------------------------------------------------------- memory over one step */

/* Three layers of 10 GB over 20 GB of states, 5 GB of logits: a hand-made step. */
static size_t hand_events(struct timeline_event *ev)
{
    size_t n = 0;
    uint64_t G = 1000000000ull;
    for (int i = 0; i < 3; i++)
        ev[n++] = (struct timeline_event){.kind = TIMELINE_FORWARD,
                                          .layer = (uint64_t)i,
                                          .t_start = i,
                                          .t_end = i + 1,
                                          .act_bytes = (uint64_t)(i + 1) * 10 * G,
                                          .phase = STEP_PHASES};
    ev[n++] = (struct timeline_event){.kind = TIMELINE_LOGITS,
                                      .t_start = 3,
                                      .t_end = 3,
                                      .act_bytes = 30 * G,
                                      .logits_bytes = 5 * G,
                                      .phase = STEP_PHASES};
    ev[n++] = (struct timeline_event){.kind = TIMELINE_LOSS_BACKWARD,
                                      .t_start = 3,
                                      .t_end = 3,
                                      .act_bytes = 30 * G,
                                      .phase = STEP_PHASES};
    for (int i = 2; i >= 0; i--)
        ev[n++] = (struct timeline_event){.kind = TIMELINE_BACKWARD,
                                          .layer = (uint64_t)i,
                                          .t_start = 3 + 2 * (2 - i),
                                          .t_end = 5 + 2 * (2 - i),
                                          .act_bytes = (uint64_t)i * 10 * G,
                                          .phase = STEP_PHASES};
    return n;
}

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

/* Whether a text of r reads s. */
static bool has_text(const struct canvas_rec *r, const char *s)
{
    for (size_t i = 0; i < r->n; i++)
        if (is_text(r->calls[i].op) && strcmp(r->calls[i].text, s) == 0)
            return true;
    return false;
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

/* A GPU's memory in the legends of the step chart and of the bars as the tables say it
 * (numfmt_gpu_mem): "GPU memory 85.5 GB" (an H100 as nvidia-smi reports it, once drawn as
 * "86 GB"), "GPU memory 80 GB"; the budget as numfmt_size, "68.0 GB" as in the table of terms. */
static void test_gpu_memory_labels(void **state)
{
    (void)state;
    struct timeline_event ev[16];
    size_t n = hand_events(ev);
    static const struct {
        uint64_t bytes;
        enum units units;
        const char *gpu, *budget;
    } cases[] = {
        {85520809984ull, UNITS_GB, "GPU memory 85.5 GB", "15% kept free: 72.7 GB"},
        {80000000000ull, UNITS_GB, "GPU memory 80 GB", "15% kept free: 68.0 GB"},
        {85520809984ull, UNITS_GIB, "GPU memory 79.6 GiB", "15% kept free: 67.7 GiB"},
        {80ull << 30, UNITS_GIB, "GPU memory 80 GiB", "15% kept free: 68.0 GiB"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        struct chart_step d = {.title = "step",
                               .events = ev,
                               .n = n,
                               .states_bytes = 20000000000ull,
                               .total_time = 9,
                               .gpu_bytes = cases[c].bytes,
                               .reserve = 0.15,
                               .units = cases[c].units};
        struct canvas_rec r;
        canvas_rec_init(&r, 600, 400);
        struct chart_geom g;
        chart_step_draw(&r.canvas, X0, Y0, W, H, &d, &g);
        if (!has_text(&r, cases[c].gpu))
            fail_msg("the step chart lacks '%s'", cases[c].gpu);
        canvas_rec_release(&r);
        struct chart_bar bars[3];
        lesson_bars(bars);
        struct chart_bars b = {NULL, bars, 3, cases[c].bytes, 0.15, cases[c].units};
        canvas_rec_init(&r, 600, 400);
        chart_bars_draw(&r.canvas, X0, Y0, W, H, &b, &g);
        if (!has_text(&r, cases[c].gpu) || !has_text(&r, cases[c].budget))
            fail_msg("the bars lack '%s' or '%s'", cases[c].gpu, cases[c].budget);
        canvas_rec_release(&r);
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

/* ---------------------------------------------------------------- one layer's activations */

/* The bytes a walk adds up to, for a whole layer (tp = 1). */
static double walk_bytes(const struct scenario *sc)
{
    struct chart_walk_op ops[CHART_WALK_MAX];
    size_t n = chart_layer_walk_ops(sc, ops, CHART_WALK_MAX);
    assert_true(n > 0);
    double sbh = (double)(sc->seq * sc->micro_batch * sc->hidden);
    double as2b = (double)(sc->heads * sc->seq * sc->seq * sc->micro_batch);
    double asb = (double)(sc->heads * sc->seq * sc->micro_batch);
    return chart_walk_total(ops, n, CHART_WALK_SBH) * sbh +
           chart_walk_total(ops, n, CHART_WALK_AS2B) * as2b +
           chart_walk_total(ops, n, CHART_WALK_ASB) * asb;
}

static void expect_walk_matches_model(const struct scenario *sc)
{
    struct model_layer_act a;
    assert_int_equal(model_layer_act(sc, &a), MODEL_OK);
    assert_true(near(walk_bytes(sc), (double)a.total, 0.5));
}

static void test_walk_ops(void **state)
{
    (void)state;
    struct scenario sc;
    struct chart_walk_op ops[CHART_WALK_MAX];
    scenario_lesson_example(&sc);
    /* doc/model.md section 4.1: 34 sbh + 5 as^2b, 15 tensors. */
    size_t n = chart_layer_walk_ops(&sc, ops, CHART_WALK_MAX);
    assert_int_equal(n, 15);
    assert_true(chart_walk_total(ops, n, CHART_WALK_SBH) == 34);
    assert_true(chart_walk_total(ops, n, CHART_WALK_AS2B) == 5);
    assert_string_equal(ops[0].name, "LN1 input");
    assert_int_equal(chart_layer_walk_ops(&sc, ops, 14), 0);
    expect_walk_matches_model(&sc);
    /* FlashAttention: 34 sbh + 4 asb. */
    sc.attention = ATTENTION_FLASH;
    n = chart_layer_walk_ops(&sc, ops, CHART_WALK_MAX);
    assert_true(chart_walk_total(ops, n, CHART_WALK_SBH) == 34);
    assert_true(chart_walk_total(ops, n, CHART_WALK_AS2B) == 0);
    assert_true(chart_walk_total(ops, n, CHART_WALK_ASB) == 4);
    expect_walk_matches_model(&sc);
    /* Selective recomputation: the core is rebuilt, 34 sbh. */
    sc.attention = ATTENTION_PLAIN;
    sc.recompute = RECOMPUTE_SELECTIVE;
    n = chart_layer_walk_ops(&sc, ops, CHART_WALK_MAX);
    assert_true(chart_walk_total(ops, n, CHART_WALK_SBH) == 34);
    assert_true(chart_walk_total(ops, n, CHART_WALK_AS2B) == 0);
    expect_walk_matches_model(&sc);
    /* No dropout, GQA with g = 4: 28 + 4/4 sbh + 2 as^2b (doc/model.md 4.4). */
    sc.recompute = RECOMPUTE_NONE;
    sc.dropout = false;
    sc.kv_heads = 4;
    n = chart_layer_walk_ops(&sc, ops, CHART_WALK_MAX);
    assert_true(chart_walk_total(ops, n, CHART_WALK_SBH) == 29);
    assert_true(chart_walk_total(ops, n, CHART_WALK_AS2B) == 2);
    expect_walk_matches_model(&sc);
    /* Llama 2 7B shape: (12 + 4/g) sbh + 8 sbf + 2 as^2b. */
    sc.arch = ARCH_LLAMA;
    sc.hidden = 4096;
    sc.heads = sc.kv_heads = 32;
    sc.ffn = 11008;
    n = chart_layer_walk_ops(&sc, ops, CHART_WALK_MAX);
    assert_true(near(chart_walk_total(ops, n, CHART_WALK_SBH), 16 + 8.0 * 11008 / 4096, 1e-12));
    expect_walk_matches_model(&sc);
}

static void test_walk_geometry(void **state)
{
    (void)state;
    struct scenario sc;
    struct chart_walk_op ops[CHART_WALK_MAX];
    scenario_lesson_example(&sc);
    for (int flash = 0; flash < 2; flash++) {
        sc.attention = flash ? ATTENTION_FLASH : ATTENTION_PLAIN;
        size_t n = chart_layer_walk_ops(&sc, ops, CHART_WALK_MAX);
        struct chart_walk d = {"walk", ops, n, 16.0 / 2048, 0};
        struct canvas_rec r;
        canvas_rec_init(&r, 600, 400);
        struct chart_geom g;
        chart_walk_draw(&r.canvas, X0, Y0, W, H, &d, &g);
        check_layout(&r, &g);
        /* The orange bars tile 0..34 sbh: their widths add up to 34 units (twice, with the
         * total row). */
        double width = 0, pt_per_unit = g.plot_w / (g.x_max - g.x_min);
        for (size_t i = 0; i < r.n; i++) {
            const struct canvas_rec_call *k = &r.calls[i];
            if (k->op == CANVAS_REC_FILL && k->box.y0 >= g.plot_y &&
                same_rgb(k->fill, chart_term_colour(CHART_ACT)))
                width += k->box.x1 - k->box.x0;
        }
        assert_true(near(width, 2 * 34 * pt_per_unit, 1e-6));
        canvas_rec_release(&r);
    }
}

/* ---------------------------------------------------------------- one layer's parameters */

static double items_params(const struct scenario *sc)
{
    struct chart_param_item it[CHART_PARAM_MAX];
    size_t n = chart_layer_param_items(sc, it, CHART_PARAM_MAX);
    assert_true(n > 0);
    double s = 0, h = (double)sc->hidden;
    for (size_t i = 0; i < n; i++)
        s += it[i].h2 * h * h;
    return s;
}

static void test_param_items(void **state)
{
    (void)state;
    struct scenario sc;
    uint64_t layer;
    scenario_lesson_example(&sc);
    /* doc/model.md section 9.1: 12h^2 + 13h = 50,358,272. */
    assert_true(near(items_params(&sc), 50358272, 1e-6));
    /* Llama 2 7B: 4h^2 + 3hf + 2h per layer; with GQA W_K and W_V shrink by g. */
    sc.arch = ARCH_LLAMA;
    sc.hidden = 4096;
    sc.heads = sc.kv_heads = 32;
    sc.ffn = 11008;
    assert_int_equal(model_layer_params(&sc, &layer), MODEL_OK);
    assert_true(near(items_params(&sc), (double)layer, 1e-6));
    sc.kv_heads = 8;
    assert_int_equal(model_layer_params(&sc, &layer), MODEL_OK);
    assert_true(near(items_params(&sc), (double)layer, 1e-6));
    struct chart_param_item it[CHART_PARAM_MAX];
    assert_int_equal(chart_layer_param_items(&sc, it, 3), 0);
    assert_int_equal(chart_layer_param_items(&sc, it, CHART_PARAM_MAX), 8);
    assert_true(it[1].h2 == 0.25 && it[2].h2 == 0.25);
}

static void test_params_geometry(void **state)
{
    (void)state;
    struct scenario sc;
    struct chart_param_item it[CHART_PARAM_MAX];
    scenario_lesson_example(&sc);
    size_t n = chart_layer_param_items(&sc, it, CHART_PARAM_MAX);
    struct chart_params d = {"GPT", it, n, 0};
    struct canvas_rec r;
    canvas_rec_init(&r, 600, 400);
    struct chart_geom g;
    chart_params_draw(&r.canvas, X0, Y0, W, H, &d, &g);
    check_layout(&r, &g);
    check_round_ticks(g.y_ticks, g.n_y_ticks, g.y_step);
    /* The MLP bars are 4 h^2 high, 4 times the attention bars. */
    double pt_per_unit = g.plot_h / g.y_max;
    size_t tall = 0;
    for (size_t i = 0; i < r.n; i++) {
        const struct canvas_rec_call *k = &r.calls[i];
        if (k->op == CANVAS_REC_FILL && k->box.y0 > g.plot_y &&
            near(k->box.y1 - k->box.y0, 4 * pt_per_unit, 1e-9))
            tall++;
    }
    assert_int_equal(tall, 2);
    canvas_rec_release(&r);
}

/* DeepSeek-V3 (configs/models.csv): multi-head latent attention, 256 routed experts of 2048 with
 * top 8, a shared expert of 2048, a router with a score bias, three leading dense layers. */
static void deepseek_v3(struct scenario *sc)
{
    scenario_lesson_example(sc);
    sc->arch = ARCH_LLAMA;
    sc->dropout = sc->tied = false;
    sc->layers = 61;
    sc->hidden = 7168;
    sc->heads = sc->kv_heads = 128;
    sc->vocab = 129280;
    sc->ffn = 18432;
    sc->experts = 256;
    sc->top_k = 8;
    sc->expert_ffn = 2048;
    sc->shared_ffn = 2048;
    sc->router_bias = ROUTER_BIAS_SCORE;
    sc->dense_layers = 3;
    sc->q_lora_rank = 1536;
    sc->kv_lora_rank = 512;
    sc->qk_nope_dim = 128;
    sc->qk_rope_dim = 64;
    sc->v_head_dim = 128;
    sc->seq = 4096;
    sc->micro_batch = 1;
}

/* Mixtral 8x7B: GQA attention, 8 routed experts of 14336 with top 2, no shared expert. */
static void mixtral(struct scenario *sc)
{
    scenario_lesson_example(sc);
    sc->arch = ARCH_LLAMA;
    sc->dropout = sc->tied = false;
    sc->layers = 32;
    sc->hidden = 4096;
    sc->heads = 32;
    sc->kv_heads = 8;
    sc->vocab = 32000;
    sc->ffn = sc->expert_ffn = 14336;
    sc->experts = 8;
    sc->top_k = 2;
}

/* An MoE layer's items: every parameter of the layer once, the routed experts as one item of E
 * copies, the router's score bias in the router's item, no dense MLP. */
static void test_param_items_moe(void **state)
{
    (void)state;
    struct scenario sc;
    struct terms t;
    struct chart_param_item it[CHART_PARAM_MAX];
    deepseek_v3(&sc);
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_true(near(items_params(&sc), (double)t.layer_params, 1e-3));
    size_t n = chart_layer_param_items(&sc, it, CHART_PARAM_MAX);
    size_t experts = 0, routers = 0, shared = 0, mlp = 0;
    double h2 = 7168.0 * 7168.0;
    for (size_t i = 0; i < n; i++) {
        experts += it[i].group == CHART_PARAM_EXPERTS;
        routers += it[i].group == CHART_PARAM_ROUTER;
        shared += it[i].group == CHART_PARAM_SHARED;
        mlp += it[i].group == CHART_PARAM_MLP;
        if (it[i].group == CHART_PARAM_EXPERTS) {
            assert_int_equal(it[i].copies, 256);
            assert_true(near(it[i].h2 * h2, 256.0 * 3 * 7168 * 2048, 1e-3));
        } else {
            assert_true(it[i].copies == 1);
        }
        if (it[i].group == CHART_PARAM_ROUTER) /* h E + E */
            assert_true(near(it[i].h2 * h2, 7168.0 * 256 + 256, 1e-6));
    }
    assert_true(experts == 1 && routers == 1 && shared == 1 && mlp == 0);
    /* Mixtral: W_Q, W_K, W_V, W_O, the experts, the router, the norms. */
    mixtral(&sc);
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_true(near(items_params(&sc), (double)t.layer_params, 1e-3));
    assert_int_equal(chart_layer_param_items(&sc, it, CHART_PARAM_MAX), 7);
    assert_true(it[4].group == CHART_PARAM_EXPERTS && it[4].copies == 8);
    assert_true(near(it[4].h2, 8 * 3 * 14336.0 / 4096, 1e-12));
    assert_int_equal(chart_layer_param_items(&sc, it, 6), 0);
}

/* The legend lists the groups of the layer's items, and only those. */
static void test_params_legend(void **state)
{
    (void)state;
    static const char *const groups[] = {
        "attention", "MLP", "shared experts", "router", "routed experts", "biases and norms"};
    static const bool dense_has[] = {true, true, false, false, false, true};
    static const bool deepseek_has[] = {true, false, true, true, true, true};
    static const bool mixtral_has[] = {true, false, false, true, true, true};
    const bool *has[] = {dense_has, deepseek_has, mixtral_has};
    for (int m = 0; m < 3; m++) {
        struct scenario sc;
        struct chart_param_item it[CHART_PARAM_MAX];
        if (m == 0)
            scenario_lesson_example(&sc);
        else if (m == 1)
            deepseek_v3(&sc);
        else
            mixtral(&sc);
        size_t n = chart_layer_param_items(&sc, it, CHART_PARAM_MAX);
        struct chart_params d = {"one layer", it, n, 0};
        struct canvas_rec r;
        canvas_rec_init(&r, 600, 400);
        struct chart_geom g;
        chart_params_draw(&r.canvas, X0, Y0, W, H, &d, &g);
        for (size_t k = 0; k < sizeof groups / sizeof *groups; k++)
            if (has_text(&r, groups[k]) != has[m][k])
                fail_msg("model %d: legend entry '%s' %s", m, groups[k],
                         has[m][k] ? "missing" : "unexpected");
        /* The whole layer's panel and the copies' count only with routed experts. */
        assert_true(has_text(&r, "whole layer") == (m > 0));
        assert_true(has_text(&r, m == 1 ? "\xc3\x97 256" : "\xc3\x97 8") == (m > 0));
        canvas_rec_release(&r);
    }
}

/* An MoE layer's chart: everything inside the chart, the data inside the plot, no text over
 * another; each bar proportional to one copy of its item (one routed expert, 0.857 h^2 for
 * DeepSeek-V3, against W_O's 2.286); the whole layer's stacked bar split as the items are. */
static void test_params_moe_geometry(void **state)
{
    (void)state;
    struct scenario sc;
    struct chart_param_item it[CHART_PARAM_MAX];
    deepseek_v3(&sc);
    size_t n = chart_layer_param_items(&sc, it, CHART_PARAM_MAX);
    struct chart_params d = {"DeepSeek-V3, one MoE layer", it, n, 0};
    struct canvas_rec r;
    canvas_rec_init(&r, 600, 400);
    struct chart_geom g;
    chart_params_draw(&r.canvas, X0, Y0, W, H, &d, &g);
    check_layout(&r, &g);
    check_round_ticks(g.y_ticks, g.n_y_ticks, g.y_step);
    assert_true(g.y_max < 5); /* the axis is scaled to one expert, not to 219 h^2 */
    double pt_per_unit = g.plot_h / g.y_max, expert = 3 * 2048 / 7168.0;
    double wo = 128.0 * 128 * 7168 / (7168.0 * 7168);
    size_t one_expert = 0, w_o = 0, n_colours = 0;
    struct canvas_rgb expert_rgb[2], colours[8];
    double stacked = 0, largest = 0;
    for (size_t i = 0; i < r.n; i++) {
        const struct canvas_rec_call *k = &r.calls[i];
        if (k->op != CANVAS_REC_FILL || k->box.y0 < g.plot_y - 1e-9)
            continue; /* the legend's swatches are above the plot */
        double bh = k->box.y1 - k->box.y0;
        if (k->box.x0 > g.plot_x + g.plot_w) { /* the whole layer's stacked bar */
            stacked += bh;
            largest = fmax(largest, bh);
            continue;
        }
        if (same_rgb(k->fill, chart_term_colour(CHART_WEIGHTS)) && near(bh, wo * pt_per_unit, 1e-9))
            w_o++;
        if (near(bh, expert * pt_per_unit, 1e-9) && one_expert < 2)
            expert_rgb[one_expert++] = k->fill;
        bool seen = false;
        for (size_t c = 0; c < n_colours; c++)
            seen = seen || same_rgb(colours[c], k->fill);
        if (!seen && n_colours < 8)
            colours[n_colours++] = k->fill;
    }
    assert_int_equal(w_o, 1);
    /* One routed expert and the shared expert are both 3 h 2048, in two colours. */
    assert_int_equal(one_expert, 2);
    assert_false(same_rgb(expert_rgb[0], expert_rgb[1]));
    assert_int_equal(n_colours, 5); /* attention, routed, shared, router, norms */
    /* The stacked bar: the routed experts, 256 * 0.857 of the layer's 224.0 h^2, the rest on
     * top. */
    double total = 0;
    for (size_t i = 0; i < n; i++)
        total += it[i].h2;
    assert_true(stacked > 50);
    assert_true(near(largest / stacked, 256 * expert / total, 1e-9));
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

/* ---------------------------------------------------------------- search: log ticks */

static void test_log_ticks(void **state)
{
    (void)state;
    double t[CHART_TICKS_MAX];
    /* The sparsest mantissas that give three ticks: 1-2-5 over 1.5..60 s. */
    size_t n = chart_log_ticks(1.5, 60, 8, t, CHART_TICKS_MAX);
    assert_int_equal(n, 5);
    static const double want[] = {2, 5, 10, 20, 50};
    for (size_t i = 0; i < n; i++)
        assert_true(near(t[i], want[i], 1e-12));
    /* Decades alone when they are three or more. */
    n = chart_log_ticks(0.01, 100, 8, t, CHART_TICKS_MAX);
    assert_int_equal(n, 5);
    assert_true(near(t[0], 0.01, 1e-15) && near(t[4], 100, 1e-12));
    /* Less than a decade: 2, 3, 5. */
    n = chart_log_ticks(1.1, 8.8, 8, t, CHART_TICKS_MAX);
    assert_int_equal(n, 3);
    assert_true(t[0] == 2 && t[1] == 3 && t[2] == 5);
    /* 1-2-5 would give nine ticks, more than 6: decades. */
    n = chart_log_ticks(1, 1000, 6, t, CHART_TICKS_MAX);
    assert_int_equal(n, 4);
    /* No range, no ticks. */
    assert_int_equal(chart_log_ticks(0, 10, 8, t, CHART_TICKS_MAX), 0);
    assert_int_equal(chart_log_ticks(5, 5, 8, t, CHART_TICKS_MAX), 0);
    assert_int_equal(chart_log_ticks(5, NAN, 8, t, CHART_TICKS_MAX), 0);
    /* Any range of a factor 2 or more: increasing ticks inside it, m x 10^e with m in 1..9. */
    srand(11);
    for (int i = 0; i < 2000; i++) {
        double lo = (1 + rand() % 999) * pow(10, rand() % 9 - 5);
        double hi = lo * (2 + (rand() % 10000) / 10.0);
        n = chart_log_ticks(lo, hi, 8, t, CHART_TICKS_MAX);
        assert_true(n >= 1 && n <= CHART_TICKS_MAX);
        for (size_t k = 0; k < n; k++) {
            assert_true(t[k] >= lo * (1 - 1e-9) && t[k] <= hi * (1 + 1e-9));
            double m = t[k] / pow(10, floor(log10(t[k]) + 1e-9));
            assert_true(near(m, nearbyint(m), 1e-9) && m >= 1 && m <= 9);
            if (k > 0)
                assert_true(t[k] > t[k - 1]);
        }
    }
}

/* ---------------------------------------------------------------- search: every layout */

static void test_scatter_bins(void **state)
{
    (void)state;
    struct chart_scatter *s = malloc(sizeof *s);
    assert_non_null(s);
    /* Step times within a factor 8: a linear axis with 3% of the range beyond each end; peaks
     * under three GPUs: a whole y axis 6% over the highest of the peak and the GPU. */
    chart_scatter_init(s, 1.0, 2.0, 50e9, 80000000000ull);
    assert_false(s->x_log);
    assert_true(near(s->x_lo, 0.97, 1e-12) && near(s->x_hi, 2.03, 1e-12));
    assert_true(near(s->y_hi, 84.8e9, 1) && s->y_top == 0);
    /* A factor 20 and peaks five times the GPU: a log axis, and a broken one. */
    chart_scatter_init(s, 1.0, 20.0, 400e9, 80000000000ull);
    assert_true(s->x_log);
    assert_true(near(s->x_lo, 1 / pow(20, 0.03), 1e-12) && near(s->x_hi, 20 * pow(20, 0.03), 1e-9));
    assert_true(near(s->y_hi, 84.8e9, 1) && near(s->y_top, 400e9, 1));
    /* Two layouts in one cell: one mark at the faster; on a tie of times, the lower peak. */
    chart_scatter_add(s, 2.0001, 50000000000ull, true);
    chart_scatter_add(s, 2.0, 50000000001ull, true);
    chart_scatter_add(s, 2.0, 50000000000ull, true);
    chart_scatter_add(s, 3.0, 300000000000ull, false);
    assert_int_equal(s->marks, 2);
    assert_int_equal(s->n[1], 3);
    assert_int_equal(s->n[0], 1);
    size_t found = 0;
    for (size_t r = 0; r < CHART_SCATTER_ROWS; r++)
        for (size_t k = 0; k < CHART_SCATTER_COLS; k++) {
            const struct chart_scatter_cell *c = &s->cells[1][r][k];
            if (c->count == 0)
                continue;
            found++;
            assert_int_equal(c->count, 3);
            assert_true(c->x_s == 2.0 && c->y_bytes == 50e9);
        }
    assert_int_equal(found, 1);
    assert_true(s->best && s->best_x_s == 2.0 && s->best_y_bytes == 50e9);
    /* A layout that does not fit is never the best, however fast. */
    chart_scatter_add(s, 1.0, 500000000000ull, false);
    assert_true(s->best_x_s == 2.0);
    /* A million layouts: every one counted, at most one mark a cell. */
    chart_scatter_init(s, 0.5, 50, 1e12, 80000000000ull);
    uint64_t x = 1;
    for (int i = 0; i < 1000000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(x >> 11) / 9007199254740992.0, v = (double)(x & 0xfffff) / 1048576.0;
        uint64_t peak = (uint64_t)(1e12 * v);
        chart_scatter_add(s, 0.5 * pow(100, u), peak, peak <= 68000000000ull);
    }
    assert_int_equal(s->n[0] + s->n[1], 1000000);
    assert_true(s->marks <= 2 * CHART_SCATTER_ROWS * CHART_SCATTER_COLS);
    uint64_t counted = 0;
    size_t marks = 0;
    for (int f = 0; f < 2; f++)
        for (size_t r = 0; r < CHART_SCATTER_ROWS; r++)
            for (size_t k = 0; k < CHART_SCATTER_COLS; k++) {
                counted += s->cells[f][r][k].count;
                marks += s->cells[f][r][k].count > 0;
            }
    assert_int_equal(counted, 1000000);
    assert_int_equal(marks, s->marks);
    free(s);
}

/* The scatter of n layouts: step times 1..40 s, peaks to 5 GPUs, the fastest fitting at 1.25 s. */
static void fill_scatter(struct chart_scatter *s, size_t n)
{
    chart_scatter_init(s, 1.25, 40, 400e9, 80000000000ull);
    chart_scatter_add(s, 1.25, 61000000000ull, true);
    uint64_t x = 7;
    for (size_t i = 1; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(x >> 11) / 9007199254740992.0, v = (double)(x & 0xfffff) / 1048576.0;
        uint64_t peak = (uint64_t)(10e9 + 390e9 * v * v);
        chart_scatter_add(s, 1.3 * pow(30, u), peak, peak <= 68000000000ull);
    }
}

/* What a value of the plot is at: the geometry's mapping, the scatter's log x axis included. */
static double geom_x(const struct chart_geom *g, double v)
{
    double share = g->x_log ? log(v / g->x_min) / log(g->x_max / g->x_min)
                            : (v - g->x_min) / (g->x_max - g->x_min);
    return g->plot_x + share * g->plot_w;
}

static double geom_y(const struct chart_geom *g, double v)
{
    double low_h = g->y_top > 0 ? g->plot_y + g->plot_h - g->gap_y1 : g->plot_h;
    return g->plot_y + g->plot_h - (v - g->y_min) / (g->y_max - g->y_min) * low_h;
}

static void test_scatter_geometry(void **state)
{
    (void)state;
    struct chart_scatter *s = malloc(sizeof *s);
    assert_non_null(s);
    fill_scatter(s, 20000);
    struct chart_layouts d = {"Every layout",
                              "step time (s, log scale)",
                              "peak (GB)",
                              "fits",
                              "does not fit",
                              "fastest: 1.25 s",
                              "GPU memory 80 GB",
                              "15% kept free: 68 GB",
                              s,
                              80000000000ull,
                              0.15,
                              UNITS_GB};
    struct canvas_rec r;
    canvas_rec_init(&r, 600, 400);
    struct chart_geom g;
    chart_layouts_draw(&r.canvas, X0, Y0, W, H, &d, &g);
    check_layout(&r, &g);
    assert_true(g.x_log);
    assert_true(g.y_top > 0); /* 400 GB over an 80 GB GPU: broken */
    bool in_clip[4096 * 8];
    assert_true(r.n < sizeof in_clip / sizeof *in_clip);
    clip_flags(&r, in_clip);
    /* One square a cell, in two fills: grey for what does not fit, coloured for what does. */
    size_t rects = 0, fills = 0, grey = 0, gpu = 0, budget = 0, diamond = 0;
    for (size_t i = 0; i < r.n; i++) {
        const struct canvas_rec_call *c = &r.calls[i];
        if (!in_clip[i])
            continue;
        rects += c->op == CANVAS_REC_RECT;
        if (c->op == CANVAS_REC_FILL && c->box.x1 - c->box.x0 > 50) {
            fills++;
            grey += c->fill.r == c->fill.g && c->fill.g == c->fill.b;
        }
        /* The GPU line and the dashed budget line across the plot at 80 and 68 GB. */
        if (c->op == CANVAS_REC_STROKE && near(c->box.x1 - c->box.x0, g.plot_w, 1e-9)) {
            double y = c->box.y0;
            if (near(y, geom_y(&g, 80), 1e-9) && c->n_dash == 0)
                gpu++;
            if (near(y, geom_y(&g, 68), 1e-9) && c->n_dash > 0)
                budget++;
        }
        /* The fastest that fits: a diamond of radius 4 centred on it. */
        if (c->op == CANVAS_REC_FILL && near(c->box.x1 - c->box.x0, 8, 1e-9) &&
            near((c->box.x0 + c->box.x1) / 2, geom_x(&g, 1.25), 1e-9) &&
            near((c->box.y0 + c->box.y1) / 2, geom_y(&g, 61), 1e-9))
            diamond++;
    }
    assert_int_equal(rects, s->marks);
    assert_int_equal(fills, 2);
    assert_int_equal(grey, 1);
    assert_int_equal(gpu, 1);
    assert_int_equal(budget, 1);
    assert_int_equal(diamond, 1);
    /* The log axis's ticks, 1-2-5, and the legend. */
    static const char *const texts[] = {
        "2", "5", "10", "20", "fits", "does not fit", "fastest: 1.25 s"};
    for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
        bool seen = false;
        for (size_t i = 0; i < r.n && !seen; i++)
            seen = r.calls[i].text && strcmp(r.calls[i].text, texts[k]) == 0;
        if (!seen)
            fail_msg("the scatter lacks '%s'", texts[k]);
    }
    canvas_rec_release(&r);
    free(s);
}

/* The drawing costs the same for a hundred layouts or a million: one mark a cell at most. */
static void a_million_layouts_cost_a_few_thousand_marks(void **state)
{
    (void)state;
    struct chart_scatter *s = malloc(sizeof *s);
    assert_non_null(s);
    size_t calls[2];
    static const size_t n[2] = {100, 1000000};
    for (int i = 0; i < 2; i++) {
        fill_scatter(s, n[i]);
        struct chart_layouts d = {"t",  "x",     "y", "a", "b", "c", "d", "e", s, 80000000000ull,
                                  0.15, UNITS_GB};
        struct canvas_rec r;
        canvas_rec_init(&r, 600, 400);
        chart_layouts_draw(&r.canvas, X0, Y0, W, H, &d, NULL);
        calls[i] = r.n;
        canvas_rec_release(&r);
    }
    assert_true(calls[0] < 400);
    assert_true(calls[1] < 2 * CHART_SCATTER_ROWS * CHART_SCATTER_COLS + 400);
    free(s);
}

/* ---------------------------------------------------------------- search: the tp x pp map */

static void test_map_add(void **state)
{
    (void)state;
    struct chart_map m;
    chart_map_init(&m);
    /* Values in any order are kept sorted, each cell's counts moving with its values. */
    chart_map_add(&m, 4, 2, 3.0, true);
    chart_map_add(&m, 1, 2, 9.0, false);
    chart_map_add(&m, 8, 1, 2.0, true);
    chart_map_add(&m, 2, 1, 5.0, true);
    chart_map_add(&m, 2, 1, 4.0, true);
    chart_map_add(&m, 2, 1, 1.0, false); /* faster, but does not fit */
    assert_int_equal(m.n_tp, 4);
    assert_int_equal(m.n_pp, 2);
    static const uint64_t tp[] = {1, 2, 4, 8}, pp[] = {1, 2};
    for (size_t k = 0; k < 4; k++)
        assert_int_equal(m.tp[k], tp[k]);
    for (size_t r = 0; r < 2; r++)
        assert_int_equal(m.pp[r], pp[r]);
    assert_int_equal(m.tried[1][2], 1); /* tp 4, pp 2 */
    assert_int_equal(m.fit[1][2], 1);
    assert_true(m.best_s[1][2] == 3.0);
    assert_int_equal(m.tried[1][0], 1); /* tp 1, pp 2: tried, none fits */
    assert_int_equal(m.fit[1][0], 0);
    assert_int_equal(m.tried[0][1], 3); /* tp 2, pp 1 */
    assert_int_equal(m.fit[0][1], 2);
    assert_true(m.best_s[0][1] == 4.0);
    assert_int_equal(m.tried[0][3], 1); /* tp 8, pp 1 */
    assert_true(m.best_s[0][3] == 2.0);
    assert_int_equal(m.tried[0][0] + m.tried[0][2] + m.tried[1][1] + m.tried[1][3], 0);
    assert_int_equal(m.left_out, 0);
    /* Past CHART_MAP_MAX values of pp, a new one is left out and counted. */
    for (uint64_t p = 3; p <= CHART_MAP_MAX + 4; p++)
        chart_map_add(&m, 1, p, 1.0, true);
    assert_int_equal(m.n_pp, CHART_MAP_MAX);
    assert_int_equal(m.left_out, 4);
    assert_int_equal(m.pp[CHART_MAP_MAX - 1], CHART_MAP_MAX);
}

static void test_map_geometry(void **state)
{
    (void)state;
    struct chart_map m;
    chart_map_init(&m);
    static const uint64_t degrees[] = {1, 2, 4, 8};
    for (size_t k = 0; k < 4; k++)
        for (size_t r = 0; r < 4; r++) {
            if (k == 0 && r == 3)
                continue;                    /* tp 1, pp 8: a split never made */
            bool fits = !(k == 0 && r == 0); /* tp 1, pp 1: none fits */
            chart_map_add(&m, degrees[k], degrees[r], 1.25 * (double)(1 + k + 2 * r), fits);
        }
    struct chart_tp_pp d = {"The fastest", "tp", "pp", "none fits", &m};
    double h = chart_map_height(&m);
    assert_true(near(h, 72 + 4 * CHART_MAP_ROW_PT, 1e-9));
    struct canvas_rec r;
    canvas_rec_init(&r, 600, 400);
    struct chart_geom g;
    chart_map_draw(&r.canvas, X0, Y0, W, h, &d, &g);
    check_layout_in(&r, &g, X0, Y0, W, h);
    /* Each cell that fits says its time; the untried one nothing; the OOM one its label. */
    size_t oom = 0, cells = 0;
    for (size_t i = 0; i < r.n; i++) {
        const char *t = r.calls[i].text;
        if (!t || r.calls[i].op != CANVAS_REC_TEXT)
            continue;
        oom += strcmp(t, "none fits") == 0;
        cells += strstr(t, " s") != NULL && strstr(t, "\xe2\x89\xa4") == NULL;
    }
    assert_int_equal(oom, 2); /* the cell and the legend */
    assert_int_equal(cells, 14);
    /* The fastest cell (tp 2, pp 1: 2.50 s; tp 1, pp 1 does not fit) outlined, 1.6 pt wide. */
    size_t outlined = 0;
    double cw = g.plot_w / 4, ch = g.plot_h / 4;
    for (size_t i = 0; i < r.n; i++) {
        const struct canvas_rec_call *c = &r.calls[i];
        if (c->op != CANVAS_REC_STROKE || c->line_width != 1.6)
            continue;
        outlined++;
        assert_true(near(c->box.x0, g.plot_x + cw + 1, 1e-9));
        assert_true(near(c->box.y1, g.plot_y + g.plot_h - 1, 1e-9));
        assert_true(near(c->box.y1 - c->box.y0, ch - 2, 1e-9));
    }
    assert_int_equal(outlined, 1);
    /* Five steps of colour even in log time from 2.5 to 12.5 s, each labelled with its slowest
     * time (2.5 x 5^(1/5) = 3.45 s); the fastest cell has the first step's colour. */
    bool first = false;
    struct canvas_rgb swatch = {-1, -1, -1}, fastest = {-2, -2, -2};
    for (size_t i = 0; i < r.n; i++) {
        const struct canvas_rec_call *c = &r.calls[i];
        first = first || (c->text && strcmp(c->text, "\xe2\x89\xa4 3.45 s") == 0);
        if (c->op == CANVAS_REC_FILL && near(c->box.x1 - c->box.x0, 10, 1e-9) && swatch.r < 0)
            swatch = c->fill;
        if (c->op == CANVAS_REC_FILL && near(c->box.x0, g.plot_x + cw + 1, 1e-9) &&
            near(c->box.y1, g.plot_y + g.plot_h - 1, 1e-9))
            fastest = c->fill;
    }
    assert_true(first);
    assert_true(same_rgb(swatch, fastest));
    canvas_rec_release(&r);
}

/* The scaling curve (doc/model.md 11.7): counts evenly spaced on the log2 axis (each doubling the
 * same distance), a diamond per step time and a square per tokens/s per GPU where the axes put
 * them, perfect scaling dashed at the first count's rate, the counts under the axis, each layout
 * above its diamond; the layouts left out where the counts are too many for them to be legible. */
static void fill_scaling(struct chart_scaling *d, size_t n)
{
    memset(d, 0, sizeof *d);
    *d = (struct chart_scaling){.title = "Scaling",
                                .x_title = "GPUs (log2 scale)",
                                .y_title = "step time (s)",
                                .y2_title = "tokens/s per GPU",
                                .step_label = "step time",
                                .rate_label = "tokens/s per GPU",
                                .ideal_label = "perfect scaling",
                                .n = n};
    for (size_t i = 0; i < n; i++) {
        d->gpus[i] = 8ull << i;
        d->step_s[i] = 40.0 / (double)(1u << i) * (1 + 0.1 * (double)i); /* efficiency drops */
        d->tokens_per_s[i] = 1000.0 / (1 + 0.1 * (double)i);
        snprintf(d->layout[i], sizeof d->layout[i], "tp=8 pp=%u dp=%u", 1u << (i % 3), 1u << i);
    }
}

static size_t texts_equal(const struct canvas_rec *r, const char *s)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++)
        n += r->calls[i].text && strcmp(r->calls[i].text, s) == 0;
    return n;
}

static void test_scaling_geometry(void **state)
{
    (void)state;
    static struct chart_scaling d;
    fill_scaling(&d, 6);
    struct canvas_rec r;
    canvas_rec_init(&r, 600, 400);
    struct chart_geom g;
    chart_scaling_draw(&r.canvas, X0, Y0, W, H, &d, &g);
    check_layout(&r, &g);
    double cx[6], step = 0, rate_pt = 0, ideal_y = 0;
    size_t diamonds = 0, squares = 0, ideal = 0;
    for (size_t i = 0; i < r.n; i++) {
        const struct canvas_rec_call *c = &r.calls[i];
        double mx = (c->box.x0 + c->box.x1) / 2, my = (c->box.y0 + c->box.y1) / 2;
        if (c->op == CANVAS_REC_FILL && near(c->box.x1 - c->box.x0, 6, 1e-9) && diamonds < 6) {
            assert_true(near(my, geom_y(&g, d.step_s[diamonds]), 1e-9));
            cx[diamonds++] = mx;
        }
        if (c->op == CANVAS_REC_RECT && near(c->arg[2], 4, 1e-9)) {
            /* the right axis from 0 at the bottom: points per token/s the same for each */
            double per = (g.plot_y + g.plot_h - (c->arg[1] + 2)) / d.tokens_per_s[squares];
            assert_true(per > 0);
            if (squares == 0)
                rate_pt = per;
            assert_true(near(per, rate_pt, 1e-9));
            squares++;
        }
        if (c->op == CANVAS_REC_STROKE && c->n_dash > 0 &&
            near(c->box.x1 - c->box.x0, g.plot_w, 1e-9))
            ideal_y = c->box.y0, ideal++;
    }
    assert_true(near(ideal_y, g.plot_y + g.plot_h - 1000.0 * rate_pt, 1e-6));
    assert_int_equal(diamonds, 6);
    assert_int_equal(squares, 6);
    assert_int_equal(ideal, 1);
    for (size_t i = 1; i < 6; i++) {
        assert_true(cx[i] > cx[i - 1]);
        if (i == 1)
            step = cx[1] - cx[0];
        assert_true(near(cx[i] - cx[i - 1], step, 1e-9));
        assert_true(near(cx[i], g.plot_x + chart_scaling_share(&d, i) * g.plot_w, 1e-9));
    }
    assert_true(near(chart_scaling_share(&d, 0), 0.5 / 6, 1e-12));
    static const char *const texts[] = {"8",
                                        "16",
                                        "256",
                                        "step time",
                                        "tokens/s per GPU",
                                        "perfect scaling",
                                        "GPUs (log2 scale)",
                                        "tp=8 pp=1 dp=1",
                                        "tp=8 pp=4 dp=32"};
    for (size_t k = 0; k < sizeof texts / sizeof *texts; k++)
        if (texts_equal(&r, texts[k]) == 0)
            fail_msg("the scaling curve lacks '%s'", texts[k]);
    canvas_rec_release(&r);
    /* 20 counts in 480 pt: every other count, and the layouts, which do not fit their share, left
     * out */
    fill_scaling(&d, 20);
    canvas_rec_init(&r, 600, 400);
    chart_scaling_draw(&r.canvas, X0, Y0, W, H, &d, &g);
    check_layout(&r, &g);
    assert_int_equal(texts_equal(&r, "8"), 1);
    assert_int_equal(texts_equal(&r, "16"), 0);
    assert_int_equal(texts_equal(&r, "32"), 1);
    assert_int_equal(texts_equal(&r, "tp=8 pp=1 dp=1"), 0);
    canvas_rec_release(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ticks),
        cmocka_unit_test(test_format_tick),
        cmocka_unit_test(test_bars_geometry),
        cmocka_unit_test(test_bars_gib),
        cmocka_unit_test(test_bars_ladder_small),
        cmocka_unit_test(test_bars_broken_axis_keeps_fitting_bars_readable),
        cmocka_unit_test(test_bars_legend_tenths),
        cmocka_unit_test(test_kcurve_matches_eval_with_pipeline_and_selective),
        cmocka_unit_test(test_step_hand_made),
        cmocka_unit_test(test_step_sawtooth),
        cmocka_unit_test(test_phases_geometry),
        cmocka_unit_test(test_step_chart_phases),
        cmocka_unit_test(test_step_recompute_colour),
        cmocka_unit_test(test_gpu_memory_labels),
        cmocka_unit_test(test_kcurve),
        cmocka_unit_test(a_million_layers_cost_what_24_do),
        cmocka_unit_test(a_short_step_keeps_every_event),
        cmocka_unit_test(test_walk_ops),
        cmocka_unit_test(test_walk_geometry),
        cmocka_unit_test(test_param_items),
        cmocka_unit_test(test_params_geometry),
        cmocka_unit_test(test_param_items_moe),
        cmocka_unit_test(test_params_legend),
        cmocka_unit_test(test_params_moe_geometry),
        cmocka_unit_test(test_log_ticks),
        cmocka_unit_test(test_scatter_bins),
        cmocka_unit_test(test_scatter_geometry),
        cmocka_unit_test(a_million_layouts_cost_a_few_thousand_marks),
        cmocka_unit_test(test_map_add),
        cmocka_unit_test(test_map_geometry),
        cmocka_unit_test(test_scaling_geometry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
