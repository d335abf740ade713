/* chart_kcurve: see chart.h (peak memory and step time with checkpointing every k). */
#include "draw/chart.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/numfmt.h"
#include "draw/chart_frame.h"
#include "draw/draw.h"
#include "model/model.h"

static const struct canvas_rgb STEP_TIME = {0.20, 0.35, 0.65};
static const struct canvas_rgb KSTAR = {0.45, 0.30, 0.70};
static const struct canvas_rgb ACTIVATIONS = {0.20, 0.60, 0.35};

/* ---------------------------------------------------------------- checkpoint every k */

/* The values of k the curve is drawn through: every k of 1..n, or, for a longer stage, points
 * evenly spread from 1 to n with k_best among them (increasing, each once). */
static size_t kcurve_ks(uint64_t n, uint64_t k_best, uint64_t *ks)
{
    size_t m = 0;
    if (n <= CHART_KCURVE_POINTS) {
        for (uint64_t k = 1; k <= n; k++)
            ks[m++] = k;
        return m;
    }
    const size_t spread = CHART_KCURVE_POINTS - 1; /* room for k_best */
    bool best_in = false;
    for (size_t i = 0; i < spread; i++) {
        uint64_t k = 1 + (uint64_t)((double)i * (double)(n - 1) / (double)(spread - 1));
        k = i == spread - 1 || k > n ? n : k;
        if (!best_in && k_best >= 1 && k_best <= n && k_best <= k) {
            best_in = true;
            if (k_best < k && (m == 0 || ks[m - 1] < k_best))
                ks[m++] = k_best;
        }
        if (m == 0 || ks[m - 1] < k)
            ks[m++] = k;
    }
    return m;
}

int chart_kcurve_fill(const struct scenario *sc, struct chart_kcurve *d)
{
    struct terms t;
    uint64_t n = sc->pp ? pipeline_max_stage_layers(sc) : 0; /* a segment stays in a stage */
    if (n == 0 || model_peak(sc, &t) != MODEL_OK)
        return -1;
    if (model_ckpt_peak(sc, &t, 0, &d->none_bytes) != MODEL_OK)
        return -1;
    /* doc/model.md sections 5.2 and 12.2: k* = sqrt(L c / A); the extra compute is one forward
     * pass per step whatever k is: 8 Psi instead of 6 Psi per token. */
    d->k_star = model_k_star(sc, &t);
    d->extra_compute = 1.0 / 3.0;
    uint64_t best;
    if (model_k_best(sc, &d->k_best, &best) != MODEL_OK)
        return -1;
    d->n_points = kcurve_ks(n, d->k_best, d->k);
    /* M(k) of the first stage, doc/model.md section 5.1: m ceil((L/pp)/k) c + k A. */
    const struct pipeline_stage *first = &t.stage[MODEL_STAGE_FIRST].pipe;
    if (model_stage_act(sc, t.act_layer_bytes, t.ckpt_bytes, first->in_flight, 0,
                        &d->act_none_bytes) != MODEL_OK)
        return -1;
    for (size_t i = 0; i < d->n_points; i++)
        if (model_ckpt_peak(sc, &t, d->k[i], &d->peak_bytes[i]) != MODEL_OK ||
            model_stage_act(sc, t.act_layer_bytes, t.ckpt_bytes, first->in_flight, d->k[i],
                            &d->act_bytes[i]) != MODEL_OK)
            return -1;
    d->n = n;
    return 0;
}

/* The legend's texts that carry numbers. */
struct kcurve_labels {
    char none[64], best[80], kstar[48], time[64];
};

static void kcurve_label(const struct chart_kcurve *d, double best, struct kcurve_labels *lb)
{
    char none[32], at_best[32]; /* sizes as the tables say them */
    numfmt_size(none, sizeof none, d->none_bytes, d->units);
    numfmt_size(at_best, sizeof at_best, best > 0 ? (uint64_t)best : 0, d->units);
    snprintf(lb->none, sizeof lb->none, "no checkpointing: %s", none);
    snprintf(lb->best, sizeof lb->best, "best k = %llu: %s", (unsigned long long)d->k_best,
             at_best);
    snprintf(lb->kstar, sizeof lb->kstar, "k* = %.2f", d->k_star);
    snprintf(lb->time, sizeof lb->time, "step time (right axis): +%.0f%% for every k",
             d->extra_compute * 100);
}

/* The reference lines: no checkpointing, k*, and the step time on the right axis (1 + extra
 * for every k >= 1). */
static void kcurve_guides(struct frame *f, const struct chart_kcurve *d, double unit)
{
    struct canvas *c = f->c;
    chart_hline(f, (double)d->none_bytes / unit, chart_states_colour(), 1.2, 3);
    if (d->k_star >= f->x0 && d->k_star <= f->x1) {
        draw_stroke_style(c, KSTAR, 1.0, 3);
        draw_line(c, chart_frame_x(f, d->k_star), f->py, chart_frame_x(f, d->k_star),
                  f->py + f->ph);
    }
    double ty = f->py + f->ph - (1 + d->extra_compute - f->y20) / (f->y21 - f->y20) * f->ph;
    draw_stroke_style(c, STEP_TIME, 1.2, 0);
    draw_line(c, chart_frame_x(f, 1), ty, chart_frame_x(f, (double)d->n), ty);
}

/* A line through (k[i], bytes[i]) for the n points, in colour. */
static void kcurve_line(struct frame *f, const struct chart_kcurve *d, const uint64_t *bytes,
                        size_t n, double unit, struct canvas_rgb colour)
{
    struct canvas *c = f->c;
    draw_stroke_style(c, colour, 1.5, 0);
    for (size_t i = 0; i < n; i++) {
        double px = chart_frame_x(f, (double)d->k[i]),
               py = chart_frame_y(f, (double)bytes[i] / unit);
        if (i == 0)
            c->ops->move_to(c, px, py);
        else
            c->ops->line_to(c, px, py);
    }
    if (n)
        c->ops->stroke(c);
}

/* The peak for every k: a line through square markers (only the line when it is drawn through
 * some values of k, not all). */
static void kcurve_curve(struct frame *f, const struct chart_kcurve *d, double unit)
{
    struct canvas *c = f->c;
    size_t n = d->n_points < CHART_KCURVE_POINTS ? d->n_points : CHART_KCURVE_POINTS;
    kcurve_line(f, d, d->peak_bytes, n, unit, ORANGE);
    for (size_t i = 0; i < n && (uint64_t)n == d->n; i++)
        draw_rect(c, ORANGE, chart_frame_x(f, (double)d->k[i]) - 1.5,
                  chart_frame_y(f, (double)d->peak_bytes[i] / unit) - 1.5, 3, 3);
    /* The activations M(k) under it, when asked for (act_label): what k changes, whether or not
     * it moves the peak. */
    if (d->act_label)
        kcurve_line(f, d, d->act_bytes, n, unit, ACTIVATIONS);
}

/* The peak at k_best (0 when k_best is not among the points). */
static double kcurve_best(const struct chart_kcurve *d)
{
    for (size_t i = 0; i < d->n_points && i < CHART_KCURVE_POINTS; i++)
        if (d->k[i] == d->k_best)
            return (double)d->peak_bytes[i];
    return 0;
}

void chart_kcurve_draw(struct canvas *c, double x, double y, double w, double h,
                       const struct chart_kcurve *d, struct chart_geom *geom)
{
    double unit = units_bytes(d->units);
    double hi = (double)d->none_bytes;
    for (size_t i = 0; i < d->n_points && i < CHART_KCURVE_POINTS; i++)
        hi = fmax(hi, (double)d->peak_bytes[i]);
    double best = kcurve_best(d);
    struct kcurve_labels lb;
    kcurve_label(d, best, &lb);
    char y_title[64];
    snprintf(y_title, sizeof y_title, "peak memory (%s)", units_name(d->units));
    struct legend_item leg[] = {
        {LEG_LINE, ORANGE, "peak with checkpointing every k"},
        {LEG_DOT, MAGENTA, lb.best},
        {LEG_DASH, chart_states_colour(), lb.none},
        {LEG_DASH, KSTAR, lb.kstar},
        {LEG_LINE, STEP_TIME, lb.time},
        {LEG_LINE, ACTIVATIONS, d->act_label},
    };
    struct frame_spec s = {
        .title = d->title,
        .legend = leg,
        .n_legend = sizeof leg / sizeof leg[0] - (d->act_label ? 0 : 1),
        .y_title = y_title,
        .x_title = "k (layers per checkpointed segment)",
        .y_lo = 0,
        .y_hi = hi * 1.05 / unit,
        .y_max_ticks = 5,
        .x_numeric = true,
        .x_lo = 0,
        .x_hi = (double)d->n + 1,
        .x_max_ticks = 8,
        /* k = n's marker stays inside */ .y2_title = "step time (\xc3\x97 no checkpointing)",
        .y2_lo = 0,
        .y2_hi = 1 + d->extra_compute,
    };
    struct frame f;
    chart_frame_begin(&f, c, x, y, w, h, &s);
    chart_frame_clip(&f);
    kcurve_guides(&f, d, unit);
    kcurve_curve(&f, d, unit);
    if (best > 0)
        chart_diamond(c, MAGENTA, chart_frame_x(&f, (double)d->k_best),
                      chart_frame_y(&f, best / unit), 4);
    chart_frame_end(&f, true, geom);
}
