/*
 * chart_checks: what the chart tests check of every chart drawn on the recording canvas: no state
 * set inside a path, balanced save/restore, every mark inside the chart's rectangle and every
 * clipped mark inside the plot area, no two texts overlapping, round ticks; and the lookups of
 * the texts drawn; a hand-made step of three layers. The chart's rectangle of the tests is X0, Y0,
 * W, H.
 */
#ifndef MEMFIT_CHART_CHECKS_H
#define MEMFIT_CHART_CHECKS_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "draw/canvas_rec.h"
#include "draw/chart.h"
#include "plan/timeline.h"

#define X0 20.0
#define Y0 30.0
#define W 480.0
#define H 300.0

static __attribute__((unused)) bool near(double a, double b, double tol)
{
    return fabs(a - b) <= tol;
}

static __attribute__((unused)) bool same_rgb(struct canvas_rgb a, struct canvas_rgb b)
{
    return a.r == b.r && a.g == b.g && a.b == b.b;
}

static __attribute__((unused)) bool is_paint(enum canvas_rec_op op)
{
    return op == CANVAS_REC_FILL || op == CANVAS_REC_STROKE || op == CANVAS_REC_FILL_STROKE;
}

static __attribute__((unused)) bool is_text(enum canvas_rec_op op)
{
    return op == CANVAS_REC_TEXT || op == CANVAS_REC_TEXT_VERTICAL;
}

static __attribute__((unused)) bool box_inside(struct canvas_box b, double x, double y, double w,
                                               double h, double tol)
{
    return b.x0 >= x - tol && b.y0 >= y - tol && b.x1 <= x + w + tol && b.y1 <= y + h + tol;
}

static __attribute__((unused)) bool boxes_overlap(struct canvas_box a, struct canvas_box b)
{
    const double slack = 0.25; /* touching is fine */
    return a.x0 < b.x1 - slack && b.x0 < a.x1 - slack && a.y0 < b.y1 - slack && b.y0 < a.y1 - slack;
}

/* Whether call i is drawn while the plot's clip is in force. */
static __attribute__((unused)) void clip_flags(const struct canvas_rec *r, bool *in_clip)
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
static __attribute__((unused)) void check_layout_in(const struct canvas_rec *r,
                                                    const struct chart_geom *g, double X0_,
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

static __attribute__((unused)) void check_layout(const struct canvas_rec *r,
                                                 const struct chart_geom *g)
{
    check_layout_in(r, g, X0, Y0, W, H);
}

/* Ticks are k * step with step 1, 2, 2.5 or 5 times a power of ten. */
static __attribute__((unused)) void check_round_ticks(const double *t, size_t n, double step)
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

/* Whether a text of r reads s. */
static __attribute__((unused)) bool has_text(const struct canvas_rec *r, const char *s)
{
    for (size_t i = 0; i < r->n; i++)
        if (is_text(r->calls[i].op) && strcmp(r->calls[i].text, s) == 0)
            return true;
    return false;
}

/* How many texts of r read s. */
static __attribute__((unused)) size_t texts_equal(const struct canvas_rec *r, const char *s)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++)
        n += r->calls[i].text && strcmp(r->calls[i].text, s) == 0;
    return n;
}

/* Three layers of 10 GB over 20 GB of states, 5 GB of logits: a hand-made step. */
static __attribute__((unused)) size_t hand_events(struct timeline_event *ev)
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

#endif
