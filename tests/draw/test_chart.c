/*
 * Tests of chart's bars, through the recording canvas (tests/support/chart_checks.h: what every
 * chart must do): nice ticks, bar heights proportional to the terms, the reserve line at 85%, a
 * broken axis, the legends and the GPU's memory in them. The step charts are in
 * test_chart_step.c, the layer charts in test_chart_layer.c, the search's in test_chart_search.c.
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
        cmocka_unit_test(test_gpu_memory_labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
