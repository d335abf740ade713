/* chart_scaling: see chart.h (memfit search --gpus-range: the scaling curve, doc/model.md 11.7). */
#include "draw/chart.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "draw/chart_frame.h"
#include "draw/draw.h"

static const struct canvas_rgb STEP = {0.96, 0.55, 0.13};
static const struct canvas_rgb RATE = {0.20, 0.35, 0.65};

static size_t scaling_n(const struct chart_scaling *d)
{
    return d->n < CHART_SCALING_MAX ? d->n : CHART_SCALING_MAX;
}

double chart_scaling_share(const struct chart_scaling *d, size_t i)
{
    size_t n = scaling_n(d);
    if (n == 0 || i >= n)
        return 0.5;
    double lo = log2((double)d->gpus[0]) - 0.5, hi = log2((double)d->gpus[n - 1]) + 0.5;
    return (log2((double)d->gpus[i]) - lo) / (hi - lo);
}

/* The point of tokens/s per GPU v on the right axis. */
static double rate_y(const struct frame *f, double v)
{
    return f->py + f->ph - (v - f->y20) / (f->y21 - f->y20) * f->ph;
}

/* A line through the n points (x[i], y[i]) in colour, dashed when dash > 0. */
static void scaling_line(struct canvas *c, const double *x, const double *y, size_t n,
                         struct canvas_rgb colour, double dash)
{
    if (n < 2)
        return;
    draw_stroke_style(c, colour, 1.5, dash);
    for (size_t i = 0; i < n; i++) {
        if (i == 0)
            c->ops->move_to(c, x[i], y[i]);
        else
            c->ops->line_to(c, x[i], y[i]);
    }
    c->ops->stroke(c);
}

/* Whether s fits max_w at a legible size: that size into *size. */
static bool legible(struct canvas *c, const char *s, double max_w, double *size)
{
    *size = chart_fit(c, s, TICK_PT, max_w);
    return c->ops->text_width(c, *size, s) <= max_w;
}

/* The counts under the axis, and each step marker's layout above it where it is legible. */
static void scaling_labels(struct frame *f, const struct chart_scaling *d, const double *x,
                           const double *ys)
{
    size_t n = scaling_n(d);
    char counts[CHART_SCALING_MAX][24];
    size_t widest = 0;
    for (size_t i = 0; i < n; i++) {
        snprintf(counts[i], sizeof counts[i], "%llu", (unsigned long long)d->gpus[i]);
        widest = strlen(counts[i]) > strlen(counts[widest]) ? i : widest;
    }
    /* The counts are one doubling apart (pw / n): every one, or every other or fewer where the
     * widest does not fit that at a legible size. */
    double slot = f->pw / (double)(n ? n : 1), size = TICK_PT;
    size_t every = 1;
    while (n && every < n && !legible(f->c, counts[widest], slot * (double)every - 4, &size))
        every++;
    for (size_t i = 0; i < n; i += every)
        chart_category_label(f, x[i], size, counts[i]);
    for (size_t i = 0; i < n; i++) {
        double s;
        if (d->layout[i][0] && legible(f->c, d->layout[i], slot - 4, &s))
            chart_text(f->c, x[i], ys[i] - 6, s, CANVAS_ALIGN_CENTER, d->layout[i]);
    }
}

void chart_scaling_draw(struct canvas *c, double x, double y, double w, double h,
                        const struct chart_scaling *d, struct chart_geom *geom)
{
    size_t n = scaling_n(d);
    double step_hi = 0, rate_hi = 0;
    for (size_t i = 0; i < n; i++) {
        step_hi = fmax(step_hi, d->step_s[i]);
        rate_hi = fmax(rate_hi, d->tokens_per_s[i]);
    }
    struct legend_item leg[] = {
        {LEG_LINE, STEP, d->step_label},
        {LEG_LINE, RATE, d->rate_label},
        {LEG_DASH, RATE, d->ideal_label},
    };
    /* Headroom above the highest marker for its layout's label. */
    struct frame_spec s = {
        .title = d->title,
        .legend = leg,
        .n_legend = sizeof leg / sizeof leg[0],
        .y_title = d->y_title,
        .x_title = d->x_title,
        .y_lo = 0,
        .y_hi = (step_hi > 0 ? step_hi : 1) * 1.25,
        .y_max_ticks = 5,
        .x_numeric = false,
        .x_label_h = TICK_PT + 6,
        .y2_title = d->y2_title,
        .y2_lo = 0,
        .y2_hi = (rate_hi > 0 ? rate_hi : 1) * 1.25,
    };
    struct frame f;
    chart_frame_begin(&f, c, x, y, w, h, &s);
    double xs[CHART_SCALING_MAX] = {0}, ys[CHART_SCALING_MAX] = {0}, yr[CHART_SCALING_MAX] = {0};
    for (size_t i = 0; i < n; i++) {
        xs[i] = chart_frame_x(&f, chart_scaling_share(d, i));
        ys[i] = chart_frame_y(&f, d->step_s[i]);
        yr[i] = rate_y(&f, d->tokens_per_s[i]);
    }
    chart_frame_clip(&f);
    if (n > 0) {
        double ideal = rate_y(&f, d->tokens_per_s[0]);
        draw_stroke_style(c, RATE, 1.0, 3);
        draw_line(c, f.px, ideal, f.px + f.pw, ideal);
    }
    scaling_line(c, xs, yr, n, RATE, 0);
    scaling_line(c, xs, ys, n, STEP, 0);
    chart_frame_end(&f, true, geom);
    /* The markers over the axes, unclipped: a step near 0 keeps its whole diamond. */
    for (size_t i = 0; i < n; i++) {
        draw_rect(c, RATE, xs[i] - 2, yr[i] - 2, 4, 4);
        chart_diamond(c, STEP, xs[i], ys[i], 3);
    }
    scaling_labels(&f, d, xs, ys);
}
