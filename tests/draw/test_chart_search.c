/*
 * Tests of the search's charts, through the recording canvas (tests/support/chart_checks.h): log
 * ticks, the scatter's bins (a million layouts, a few thousand marks), the tp x pp map and the
 * scaling curve.
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
