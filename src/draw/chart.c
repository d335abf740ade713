/* chart: see chart.h. Layout: title, legend, plot with axes; data clipped to the plot. */
#include "draw/chart.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/numfmt.h"
#include "draw/draw.h"
#include "model/model.h"

#define TITLE_PT 10.0
#define LABEL_PT 8.0
#define TICK_PT 7.5
#define LEGEND_PT 7.5
#define GAP 4.0
#define TICK_LEN 3.0
#define MIN_PT 5.5

static const struct canvas_rgb BLACK = {0, 0, 0};
static const struct canvas_rgb AXIS = {0.25, 0.25, 0.25};
static const struct canvas_rgb GRID = {0.88, 0.88, 0.88};
static const struct canvas_rgb TEXT = {0.1, 0.1, 0.1};
static const struct canvas_rgb LINE_GPU = {0.1, 0.1, 0.1};
static const struct canvas_rgb MAGENTA = {0.80, 0.10, 0.55};
static const struct canvas_rgb ORANGE = {0.96, 0.55, 0.13};
static const struct canvas_rgb STEP_TIME = {0.20, 0.35, 0.65};
static const struct canvas_rgb KSTAR = {0.45, 0.30, 0.70};

/* ---------------------------------------------------------------- colours, units, ticks */

struct canvas_rgb chart_term_colour(enum chart_term t)
{
    /* One colour per term in every chart and figure: weights blue, gradients yellow, optimizer
     * states violet, activations orange, logits magenta; what a real step adds: autocast's
     * weight copies light blue (copies of the weights), temporaries brown. */
    static const struct canvas_rgb colours[CHART_STEP_TERMS] = {
        {0.22, 0.45, 0.80}, {0.95, 0.78, 0.15}, {0.56, 0.40, 0.78}, {0.96, 0.55, 0.13},
        {0.80, 0.10, 0.55}, {0.60, 0.78, 0.95}, {0.55, 0.36, 0.22},
    };
    return (unsigned)t < CHART_STEP_TERMS ? colours[t] : BLACK;
}

const char *chart_term_name(enum chart_term t)
{
    static const char *const names[CHART_STEP_TERMS] = {
        "weights", "gradients",       "optimizer states", "activations",
        "logits",  "autocast copies", "temporaries"};
    return (unsigned)t < CHART_STEP_TERMS ? names[t] : "?";
}

struct canvas_rgb chart_states_colour(void)
{
    return (struct canvas_rgb){0.70, 0.70, 0.70};
}

/* Intervals of a step over [lo, hi] once both ends are rounded outwards to ticks. */
static double tick_index(double v, double step, bool up)
{
    double q = v / step;
    double r = nearbyint(q);
    if (fabs(q - r) < 1e-9)
        return r;
    return up ? ceil(q) : floor(q);
}

size_t chart_ticks(double lo, double hi, int max_ticks, double *ticks, size_t cap, double *step)
{
    static const double mant[] = {1, 2, 2.5, 5};
    if (!(hi > lo))
        hi = lo + 1;
    if (max_ticks < 1)
        max_ticks = 1;
    double p = pow(10, floor(log10((hi - lo) / max_ticks)));
    double s = 0, first = 0, last = 0;
    for (int e = 0; e < 3 && s == 0; e++, p *= 10) {
        for (size_t i = 0; i < sizeof mant / sizeof mant[0]; i++) {
            double cand = mant[i] * p;
            double f = tick_index(lo, cand, false), l = tick_index(hi, cand, true);
            if (l - f <= max_ticks) {
                s = cand;
                first = f;
                last = l;
                break;
            }
        }
    }
    size_t n = 0;
    for (double i = first; i <= last && n < cap; i++) {
        double v = i * s;
        ticks[n++] = v == 0 ? 0 : v; /* no -0 */
    }
    if (step)
        *step = s;
    return n;
}

void chart_format_tick(double v, double step, char *buf, size_t size)
{
    int dec = 0;
    while (dec < 6) {
        double scaled = step * pow(10, dec);
        if (fabs(scaled - nearbyint(scaled)) < 1e-6 * (scaled > 1 ? scaled : 1))
            break;
        dec++;
    }
    if (fabs(v) < step * 1e-9)
        v = 0;
    snprintf(buf, size, "%.*f", dec, v);
}

/* The power of ten a tick of a log axis is written in: 10^floor(log10 v) (0.02: 0.01). */
static double log_tick_unit(double v)
{
    return pow(10, floor(log10(v) + 1e-9));
}

/* The ticks m x 10^e of [lo, hi] for the mantissas m of one set; counts them when ticks is NULL. */
static size_t log_ticks_of(double lo, double hi, const double *mant, size_t n_mant, double *ticks,
                           size_t cap)
{
    double e0 = floor(log10(lo)), e1 = ceil(log10(hi));
    if (e1 - e0 > 60) /* no chart spans 60 decades: the ends only */
        e1 = e0 + 60;
    size_t n = 0;
    for (double e = e0; e <= e1; e++)
        for (size_t i = 0; i < n_mant; i++) {
            double v = mant[i] * pow(10, e);
            if (v < lo * (1 - 1e-9) || v > hi * (1 + 1e-9))
                continue;
            if (ticks && n < cap)
                ticks[n] = v;
            n++;
        }
    return ticks && n > cap ? cap : n;
}

size_t chart_log_ticks(double lo, double hi, int max_ticks, double *ticks, size_t cap)
{
    static const double mant[][9] = {{1}, {1, 2, 5}, {1, 2, 3, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
    static const size_t n_mant[] = {1, 3, 4, 9};
    if (!(lo > 0) || !(hi > lo) || !isfinite(hi))
        return 0;
    /* The sparsest set that gives three ticks, unless it gives more than max_ticks. */
    size_t pick = 0;
    for (size_t k = 0; k < sizeof n_mant / sizeof *n_mant; k++) {
        size_t count = log_ticks_of(lo, hi, mant[k], n_mant[k], NULL, 0);
        if (k > 0 && count > (size_t)(max_ticks > 1 ? max_ticks : 1))
            break;
        pick = k;
        if (count >= 3)
            break;
    }
    return log_ticks_of(lo, hi, mant[pick], n_mant[pick], ticks, cap);
}

/* ---------------------------------------------------------------- drawing helpers */

static void fill_rgb(struct canvas *c, struct canvas_rgb rgb)
{
    c->ops->set_fill(c, rgb);
}

/* A size no larger than size_pt at which `s` is at most max_w wide. */
static double fit(struct canvas *c, const char *s, double size_pt, double max_w)
{
    double w = c->ops->text_width(c, size_pt, s);
    if (w <= max_w || w <= 0)
        return size_pt;
    /* Quarter-point steps: fewer distinct sizes, fewer font subsets in SVG and PDF files. */
    double f = floor(size_pt * max_w / w * 4) / 4;
    return f < MIN_PT ? MIN_PT : f;
}

/* Text in the charts' text colour. */
static void text(struct canvas *c, double x, double y, double size, enum canvas_align a,
                 const char *s)
{
    draw_text(c, TEXT, x, y, size, a, s);
}

static void diamond(struct canvas *c, struct canvas_rgb rgb, double cx, double cy, double r)
{
    fill_rgb(c, rgb);
    c->ops->move_to(c, cx, cy - r);
    c->ops->line_to(c, cx + r, cy);
    c->ops->line_to(c, cx, cy + r);
    c->ops->line_to(c, cx - r, cy);
    c->ops->close_path(c);
    c->ops->fill(c);
}

/* ---------------------------------------------------------------- legend */

enum legend_kind { LEG_BOX, LEG_LINE, LEG_DASH, LEG_DOT, LEG_STRIP };

struct legend_item {
    enum legend_kind kind;
    struct canvas_rgb rgb;
    const char *label;
};

#define SWATCH_W 14.0

/* Lays the items out in rows from (x, y) within width w; draws them when `draw`. Returns the
 * height used. */
static double legend(struct canvas *c, double x, double y, double w, const struct legend_item *it,
                     size_t n, bool draw)
{
    double row_h = LEGEND_PT + 4, cx = x, cy = y;
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        double tw = c->ops->text_width(c, LEGEND_PT, it[i].label);
        double iw = SWATCH_W + 3 + tw;
        if (cx > x && cx + iw > x + w) {
            cx = x;
            cy += row_h;
        }
        if (draw) {
            double mid = cy + row_h / 2;
            if (it[i].kind == LEG_BOX) {
                draw_rect(c, it[i].rgb, cx + 2, mid - 4, SWATCH_W - 4, 8);
            } else if (it[i].kind == LEG_DOT) {
                diamond(c, it[i].rgb, cx + SWATCH_W / 2, mid, 3.5);
            } else if (it[i].kind == LEG_STRIP) {
                draw_rect(c, it[i].rgb, cx, mid + 1, SWATCH_W, 3.5);
            } else {
                draw_stroke_style(c, it[i].rgb, 1.5, it[i].kind == LEG_DASH ? 3 : 0);
                draw_line(c, cx, mid, cx + SWATCH_W, mid);
            }
            text(c, cx + SWATCH_W + 3, mid + LEGEND_PT * 0.36, LEGEND_PT, CANVAS_ALIGN_LEFT,
                 it[i].label);
        }
        cx += iw + 10;
    }
    return cy + row_h - y;
}

/* ---------------------------------------------------------------- frame: title, legend, axes */

struct frame {
    struct canvas *c;
    double px, py, pw, ph; /* plot area */
    double x0, x1, y0, y1; /* value ranges */
    double y_step, x_step;
    double y_ticks[CHART_TICKS_MAX], x_ticks[CHART_TICKS_MAX];
    size_t ny, nx;
    bool x_log; /* x0..x1 on a log scale */
    /* Right axis (k-curve): its range and ticks, when y2_title is set. */
    double y20, y21, y2_step, y2_ticks[CHART_TICKS_MAX];
    size_t ny2;
    /* A broken y axis (frame_spec.y_top): y1..up1 in the top up_h points, a gap under them. */
    double up1, up_h, up_step, up_ticks[CHART_TICKS_MAX];
    size_t nup;
};

struct frame_spec {
    const char *title;
    const struct legend_item *legend;
    size_t n_legend;
    const char *y_title, *x_title;
    double y_lo, y_hi;
    int y_max_ticks;
    bool x_numeric; /* else categories: no x ticks, x_label_h reserved under the axis */
    bool x_log;     /* numeric on a log scale (0 < x_lo < x_hi): ticks at 1, 2, 5 x 10^n */
    double x_lo, x_hi;
    int x_max_ticks;
    double x_label_h;
    double left_w; /* categories on the y axis (walk): width of their labels, else 0 */
    const char *y2_title;
    double y2_lo, y2_hi;
    double y_top; /* > y_hi: a broken axis, y_lo..y_hi below the gap and up to y_top above it */
};

static double map_x(const struct frame *f, double v)
{
    if (f->x_log)
        return v > 0 ? f->px + log(v / f->x0) / log(f->x1 / f->x0) * f->pw : f->px;
    return f->px + (v - f->x0) / (f->x1 - f->x0) * f->pw;
}

#define BREAK_GAP 7.0   /* pt between the two parts of a broken axis */
#define BREAK_UPPER 0.3 /* their upper part's share of the plot */

static double map_y(const struct frame *f, double v)
{
    if (f->up1 > f->y1) { /* broken: y0..y1 below the gap, y1..up1 in the top up_h points */
        double low_h = f->ph - f->up_h - BREAK_GAP;
        if (v <= f->y1)
            return f->py + f->ph - (v - f->y0) / (f->y1 - f->y0) * low_h;
        return f->py + f->up_h - (v - f->y1) / (f->up1 - f->y1) * f->up_h;
    }
    return f->py + f->ph - (v - f->y0) / (f->y1 - f->y0) * f->ph;
}

static double tick_labels_width(struct canvas *c, const double *t, size_t n, double step)
{
    double w = 0;
    char buf[32];
    for (size_t i = 0; i < n; i++) {
        chart_format_tick(t[i], step, buf, sizeof buf);
        double tw = c->ops->text_width(c, TICK_PT, buf);
        w = tw > w ? tw : w;
    }
    return w;
}

/* The x range: numeric axes run exactly over the data, with the nice ticks inside. */
static void frame_x_range(struct frame *f, const struct frame_spec *s)
{
    if (!s->x_numeric) {
        f->x0 = 0;
        f->x1 = 1;
        return;
    }
    if (s->x_log) {
        f->x_log = true;
        f->x0 = s->x_lo;
        f->x1 = s->x_hi > s->x_lo ? s->x_hi : s->x_lo * 10;
        f->nx = chart_log_ticks(f->x0, f->x1, s->x_max_ticks, f->x_ticks, CHART_TICKS_MAX);
        return;
    }
    double all[CHART_TICKS_MAX];
    size_t n = chart_ticks(s->x_lo, s->x_hi, s->x_max_ticks, all, CHART_TICKS_MAX, &f->x_step);
    f->x0 = s->x_lo;
    f->x1 = s->x_hi > s->x_lo ? s->x_hi : s->x_lo + 1;
    for (size_t i = 0; i < n; i++)
        if (all[i] >= f->x0 - 1e-9 * f->x_step && all[i] <= f->x1 + 1e-9 * f->x_step)
            f->x_ticks[f->nx++] = all[i];
}

/* Grid lines under the data, then the tick marks and labels of every axis. */
static void frame_ticks(struct frame *f, const struct frame_spec *s)
{
    struct canvas *c = f->c;
    char buf[32];
    draw_stroke_style(c, GRID, 0.5, 0);
    for (size_t i = 0; i < f->ny; i++)
        draw_line(c, f->px, map_y(f, f->y_ticks[i]), f->px + f->pw, map_y(f, f->y_ticks[i]));
    if (s->x_numeric && s->left_w > 0)
        for (size_t i = 0; i < f->nx; i++)
            draw_line(c, map_x(f, f->x_ticks[i]), f->py, map_x(f, f->x_ticks[i]), f->py + f->ph);
    for (size_t i = 0; i < f->ny && s->left_w <= 0; i++) {
        double ty = map_y(f, f->y_ticks[i]);
        draw_stroke_style(c, AXIS, 0.6, 0);
        draw_line(c, f->px - TICK_LEN, ty, f->px, ty);
        chart_format_tick(f->y_ticks[i], f->y_step, buf, sizeof buf);
        text(c, f->px - TICK_LEN - 2, ty + TICK_PT * 0.36, TICK_PT, CANVAS_ALIGN_RIGHT, buf);
    }
    for (size_t i = 0; i < f->nup; i++) { /* the upper part of a broken axis */
        double ty = map_y(f, f->up_ticks[i]);
        draw_stroke_style(c, GRID, 0.5, 0);
        draw_line(c, f->px, ty, f->px + f->pw, ty);
        draw_stroke_style(c, AXIS, 0.6, 0);
        draw_line(c, f->px - TICK_LEN, ty, f->px, ty);
        chart_format_tick(f->up_ticks[i], f->up_step, buf, sizeof buf);
        text(c, f->px - TICK_LEN - 2, ty + TICK_PT * 0.36, TICK_PT, CANVAS_ALIGN_RIGHT, buf);
    }
    for (size_t i = 0; i < f->ny2; i++) {
        double ty = f->py + f->ph - (f->y2_ticks[i] - f->y20) / (f->y21 - f->y20) * f->ph;
        draw_stroke_style(c, AXIS, 0.6, 0);
        draw_line(c, f->px + f->pw, ty, f->px + f->pw + TICK_LEN, ty);
        chart_format_tick(f->y2_ticks[i], f->y2_step, buf, sizeof buf);
        text(c, f->px + f->pw + TICK_LEN + 2, ty + TICK_PT * 0.36, TICK_PT, CANVAS_ALIGN_LEFT, buf);
    }
    for (size_t i = 0; i < f->nx; i++) {
        double tx = map_x(f, f->x_ticks[i]);
        draw_stroke_style(c, AXIS, 0.6, 0);
        draw_line(c, tx, f->py + f->ph, tx, f->py + f->ph + TICK_LEN);
        chart_format_tick(f->x_ticks[i], f->x_log ? log_tick_unit(f->x_ticks[i]) : f->x_step, buf,
                          sizeof buf);
        text(c, tx, f->py + f->ph + TICK_LEN + 1 + TICK_PT * 0.8, TICK_PT, CANVAS_ALIGN_CENTER,
             buf);
    }
}

/* The axis titles: y (and right y) rotated at the chart's edges, x at its bottom. */
static void frame_titles(struct frame *f, const struct frame_spec *s, double x, double y, double w,
                         double h)
{
    struct canvas *c = f->c;
    if (s->y_title) {
        double size = fit(c, s->y_title, LABEL_PT, f->ph);
        fill_rgb(c, TEXT);
        c->ops->text_vertical(c, x + size * 0.8, f->py + f->ph / 2, size, CANVAS_ALIGN_CENTER,
                              s->y_title);
    }
    if (s->y2_title) {
        double size = fit(c, s->y2_title, LABEL_PT, f->ph);
        fill_rgb(c, TEXT);
        c->ops->text_vertical(c, x + w - size * 0.2, f->py + f->ph / 2, size, CANVAS_ALIGN_CENTER,
                              s->y2_title);
    }
    if (s->x_title) {
        double size = fit(c, s->x_title, LABEL_PT, f->pw);
        text(c, f->px + f->pw / 2, y + h - size * 0.25, size, CANVAS_ALIGN_CENTER, s->x_title);
    }
}

/* The left edge of the plot area of a chart at x: the y axis's title and tick labels (or the
 * categories' labels) left of it. */
static double frame_plot_left(struct canvas *c, double x, const struct frame_spec *s)
{
    double ticks[CHART_TICKS_MAX], step;
    size_t n = chart_ticks(s->y_lo, s->y_hi, s->y_max_ticks, ticks, CHART_TICKS_MAX, &step);
    double left = x + (s->y_title ? LABEL_PT + GAP : 0);
    if (s->left_w > 0)
        return left + s->left_w + GAP;
    double w = tick_labels_width(c, ticks, n, step);
    if (s->y_top > s->y_hi) { /* a broken axis: the upper part's labels too */
        n = chart_ticks(ticks[n - 1], s->y_top * 1.2, 3, ticks, CHART_TICKS_MAX, &step);
        w = fmax(w, tick_labels_width(c, ticks, n, step));
    }
    return left + w + TICK_LEN + 2;
}

/* The upper part of a broken axis (frame_spec.y_top): from the lower part's top y1 up to y_top
 * and room over the tallest bar for its label, with the nice ticks inside; only those well clear
 * of the gap and of the top are labelled. */
static void frame_break(struct frame *f, const struct frame_spec *s)
{
    f->up_h = (f->ph - BREAK_GAP) * BREAK_UPPER;
    f->up1 = s->y_top + (s->y_top - f->y1) * (LABEL_PT + 4) / f->up_h;
    double all[CHART_TICKS_MAX];
    size_t n = chart_ticks(f->y1, f->up1, 3, all, CHART_TICKS_MAX, &f->up_step);
    f->nup = 0;
    for (size_t i = 0; i < n; i++) {
        double above = (all[i] - f->y1) / (f->up1 - f->y1) * f->up_h; /* pt over the gap */
        if (above > TICK_PT * 1.2 && above <= f->up_h - TICK_PT / 2)
            f->up_ticks[f->nup++] = all[i];
    }
}

/* The room right of a numeric x axis, for the last tick label's right half: 6 pt, or more when
 * a wide label (3,000,000 under a step of a million layers) sits at the axis's end. `avail` is the
 * width of the plot and that room together. */
static double frame_x_reserve(struct canvas *c, const struct frame_spec *s, double avail)
{
    const double room = 6;
    double ticks[CHART_TICKS_MAX], step, x1 = s->x_hi > s->x_lo ? s->x_hi : s->x_lo + 1;
    size_t n;
    if (s->x_log) {
        x1 = s->x_hi > s->x_lo ? s->x_hi : s->x_lo * 10;
        n = chart_log_ticks(s->x_lo, x1, s->x_max_ticks, ticks, CHART_TICKS_MAX);
        step = n > 0 ? log_tick_unit(ticks[n - 1]) : 1;
    } else {
        n = chart_ticks(s->x_lo, s->x_hi, s->x_max_ticks, ticks, CHART_TICKS_MAX, &step);
        while (n > 0 && ticks[n - 1] > x1 + 1e-9 * step)
            n--;
    }
    if (n == 0)
        return room;
    char buf[32];
    chart_format_tick(ticks[n - 1], step, buf, sizeof buf);
    double half = c->ops->text_width(c, TICK_PT, buf) / 2;
    /* The label's centre is a share f of the plot's width short of its end. */
    double f = s->x_log ? log(x1 / ticks[n - 1]) / log(x1 / s->x_lo)
                        : (x1 - ticks[n - 1]) / (x1 - s->x_lo);
    double need = f < 1 ? (half - f * avail) / (1 - f) : 0;
    return need > room ? need : room;
}

/* Lays the chart out in (x, y, w, h): the title on top, the legend under it, the plot area
 * inside the margins its tick labels and axis titles need; then draws all but the data. */
static void frame_begin(struct frame *f, struct canvas *c, double x, double y, double w, double h,
                        const struct frame_spec *s)
{
    memset(f, 0, sizeof *f);
    f->c = c;
    double top = y;
    if (s->title) {
        double size = fit(c, s->title, TITLE_PT, w);
        text(c, x + w / 2, top + size, size, CANVAS_ALIGN_CENTER, s->title);
        top += size + GAP + 2;
    }
    double left = frame_plot_left(c, x, s);
    double right = x + w - (s->y2_title ? LABEL_PT + GAP : 0);
    f->ny = chart_ticks(s->y_lo, s->y_hi, s->y_max_ticks, f->y_ticks, CHART_TICKS_MAX, &f->y_step);
    if (s->y2_title) {
        f->ny2 = chart_ticks(s->y2_lo, s->y2_hi, 3, f->y2_ticks, CHART_TICKS_MAX, &f->y2_step);
        right -= tick_labels_width(c, f->y2_ticks, f->ny2, f->y2_step) + TICK_LEN + 2;
        f->y20 = f->y2_ticks[0];
        f->y21 = f->y2_ticks[f->ny2 - 1];
    }
    /* The legend spans the plot's width, above it: never over the data. */
    double lh = legend(c, left, top, right - left, s->legend, s->n_legend, true);
    top += lh + (lh > 0 ? GAP : 0) + TICK_PT / 2;
    double bottom = y + h - (s->x_title ? LABEL_PT + GAP : 0);
    bottom -= s->x_numeric ? TICK_PT + TICK_LEN + 3 : s->x_label_h;
    f->px = left;
    f->py = top;
    f->pw = right - left - (s->x_numeric ? frame_x_reserve(c, s, right - left) : 0);
    f->ph = bottom - top;
    f->y0 = f->y_ticks[0];
    f->y1 = f->y_ticks[f->ny - 1];
    if (s->y_top > f->y1)
        frame_break(f, s);
    frame_x_range(f, s);
    frame_ticks(f, s);
    frame_titles(f, s, x, y, w, h);
}

/* Clips the data to the plot area (until frame_end). */
static void frame_clip(struct frame *f)
{
    f->c->ops->save(f->c);
    f->c->ops->rect(f->c, f->px, f->py, f->pw, f->ph);
    f->c->ops->clip(f->c);
}

/* Ends the clip and draws the axis lines over the data. */
static void frame_end(struct frame *f, bool right_axis, struct chart_geom *geom)
{
    struct canvas *c = f->c;
    c->ops->restore(c);
    draw_stroke_style(c, AXIS, 0.8, 0);
    c->ops->move_to(c, f->px, f->py);
    c->ops->line_to(c, f->px, f->py + f->ph);
    c->ops->line_to(c, f->px + f->pw, f->py + f->ph);
    if (right_axis)
        c->ops->line_to(c, f->px + f->pw, f->py);
    c->ops->stroke(c);
    if (!geom)
        return;
    geom->plot_x = f->px;
    geom->plot_y = f->py;
    geom->plot_w = f->pw;
    geom->plot_h = f->ph;
    geom->x_min = f->x0;
    geom->x_max = f->x1;
    geom->x_log = f->x_log;
    geom->y_min = f->y0;
    geom->y_max = f->y1;
    geom->y_step = f->y_step;
    geom->n_y_ticks = f->ny;
    memcpy(geom->y_ticks, f->y_ticks, sizeof geom->y_ticks);
    geom->y_top = f->up1 > f->y1 ? f->up1 : 0;
    geom->gap_y0 = geom->y_top > 0 ? f->py + f->up_h : 0;
    geom->gap_y1 = geom->y_top > 0 ? f->py + f->up_h + BREAK_GAP : 0;
}

/* The marks of a broken axis: the gap cut out of the y axis, two slanted strokes at its edges. */
static void frame_break_marks(struct frame *f)
{
    if (!(f->up1 > f->y1))
        return;
    struct canvas *c = f->c;
    double g0 = f->py + f->up_h, g1 = g0 + BREAK_GAP;
    draw_rect(c, (struct canvas_rgb){1, 1, 1}, f->px - 1.5, g0 + 1, 3, BREAK_GAP - 2);
    draw_stroke_style(c, AXIS, 0.8, 0);
    draw_line(c, f->px - 4, g0 + 2, f->px + 4, g0 - 2);
    draw_line(c, f->px - 4, g1 + 2, f->px + 4, g1 - 2);
}

/* A horizontal line at value v across the plot. */
static void hline(struct frame *f, double v, struct canvas_rgb rgb, double width, double dash)
{
    draw_stroke_style(f->c, rgb, width, dash);
    draw_line(f->c, f->px, map_y(f, v), f->px + f->pw, map_y(f, v));
}

/* ---------------------------------------------------------------- does it fit: stacked bars */

/* Splits "a\nb" into its two lines (b empty when there is no newline). */
static void split2(const char *s, char *l1, char *l2, size_t size)
{
    const char *nl = strchr(s, '\n');
    size_t n = nl ? (size_t)(nl - s) : strlen(s);
    if (n >= size)
        n = size - 1;
    memcpy(l1, s, n);
    l1[n] = '\0';
    snprintf(l2, size, "%s", nl ? nl + 1 : "");
}

/* Category labels under a plot: the largest common size at which every line fits a slot. */
static double category_size(struct canvas *c, const char *const *labels, size_t n, double slot)
{
    double size = TICK_PT;
    char l1[64], l2[64];
    for (size_t i = 0; i < n; i++) {
        split2(labels[i], l1, l2, sizeof l1);
        double s1 = fit(c, l1, TICK_PT, slot - 4), s2 = fit(c, l2, TICK_PT, slot - 4);
        size = s1 < size ? s1 : size;
        size = s2 < size ? s2 : size;
    }
    return size;
}

static void category_label(struct frame *f, double cx, double size, const char *label)
{
    char l1[64], l2[64];
    split2(label, l1, l2, sizeof l1);
    double y = f->py + f->ph + 3 + size;
    text(f->c, cx, y, size, CANVAS_ALIGN_CENTER, l1);
    if (l2[0])
        text(f->c, cx, y + size * 1.15, size, CANVAS_ALIGN_CENTER, l2);
}

/* The total over a bar; raised above a line it would cross. */
static void bar_value(struct frame *f, double cx, double v, const double *lines, size_t n_lines,
                      double unit)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.1f", v / unit);
    double base = map_y(f, v) - 2;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n_lines; i++) {
            double ly = map_y(f, lines[i]);
            if (base + LABEL_PT * 0.25 >= ly - 1.5 && base - LABEL_PT * 0.8 <= ly + 1.5)
                base = ly - 2 - LABEL_PT * 0.25;
        }
    text(f->c, cx, base, LABEL_PT, CANVAS_ALIGN_CENTER, buf);
}

/* The bars of chart_bars_draw or chart_phases_draw, each with every term (the lesson's bars
 * have none of a step's). */
#define BARS_MAX 32

struct bars_in {
    const char *title;
    size_t n;
    const char *labels[BARS_MAX];
    uint64_t v[BARS_MAX][CHART_STEP_TERMS];
    uint64_t gpu_bytes;
    double reserve;
    enum units units;
    bool step; /* chart_phases_draw: the step's names, its terms in the legend when present */
    bool mark_peak, last_apart;
    size_t peak;
    const char *peak_label;
};

static uint64_t bar_total(const struct bars_in *d, size_t i)
{
    uint64_t t = 0;
    for (int k = 0; k < CHART_STEP_TERMS; k++)
        t += d->v[i][k];
    return t;
}

/* The legend's texts that carry numbers. */
struct bars_labels {
    char gpu[64], reserve[64];
};

/* The legend: the lesson's terms, a step's when some bar has them, then the GPU's memory and the
 * budget under the reserve. Returns the number of items. */
static size_t bars_legend(const struct bars_in *d, struct bars_labels *lb,
                          struct legend_item leg[CHART_STEP_TERMS + 2])
{
    double unit = units_bytes(d->units);
    const char *un = units_name(d->units);
    double budget = (double)d->gpu_bytes * (1 - d->reserve);
    /* Whole numbers as such (80 GB), others to a tenth (85.5 GB as an H100 reports itself). */
    double gpu = (double)d->gpu_bytes / unit, left = budget / unit;
    int gpu_dec = fabs(gpu - nearbyint(gpu)) < 0.05 ? 0 : 1;
    int left_dec = fabs(left - nearbyint(left)) < 0.05 ? 0 : 1;
    snprintf(lb->gpu, sizeof lb->gpu, "GPU memory %.*f %s", gpu_dec, gpu, un);
    snprintf(lb->reserve, sizeof lb->reserve, "%.0f%% kept free: %.*f %s", d->reserve * 100,
             left_dec, left, un);
    size_t n = 0;
    for (int i = 0; i < CHART_STEP_TERMS; i++) {
        bool present = i < CHART_TERMS;
        for (size_t b = 0; b < d->n && !present; b++)
            present = d->v[b][i] > 0;
        const char *name = chart_term_name((enum chart_term)i);
        if (d->step && i == CHART_ACT)
            name = "activations, inputs";
        else if (d->step && i == CHART_LOGITS)
            name = "logits, loss";
        if (present)
            leg[n++] = (struct legend_item){LEG_BOX, chart_term_colour((enum chart_term)i), name};
    }
    leg[n++] = (struct legend_item){LEG_LINE, LINE_GPU, lb->gpu};
    leg[n++] = (struct legend_item){LEG_DASH, LINE_GPU, lb->reserve};
    return n;
}

/* One term of a bar, values lo..hi: one rect, or two when it crosses the gap of a broken axis. */
static void bars_segment(struct frame *f, struct canvas_rgb rgb, double x, double bw, double lo,
                         double hi)
{
    if (f->up1 > f->y1 && lo < f->y1 && hi > f->y1) {
        bars_segment(f, rgb, x, bw, lo, f->y1);
        lo = f->y1;
    }
    bool upper = f->up1 > f->y1 && lo >= f->y1; /* from the upper part's bottom, y1 itself */
    double y0 = upper ? f->py + f->up_h - (lo - f->y1) / (f->up1 - f->y1) * f->up_h : map_y(f, lo);
    double y1 = map_y(f, hi);
    draw_rect(f->c, rgb, x, y1, bw, y0 - y1);
}

/* Each bar a stack of its terms, bw wide in slots of the given width. */
static void bars_stacks(struct frame *f, const struct bars_in *d, double slot, double bw,
                        double unit)
{
    for (size_t i = 0; i < d->n; i++) {
        double cx = f->px + slot * ((double)i + 0.5), cum = 0;
        for (int t = 0; t < CHART_STEP_TERMS; t++) {
            double v = (double)d->v[i][t] / unit;
            if (t >= CHART_TERMS && v <= 0)
                continue; /* a step's term this bar does not have */
            bars_segment(f, chart_term_colour((enum chart_term)t), cx - bw / 2, bw, cum, cum + v);
            cum += v;
        }
    }
}

/* The top of the y axis: the tallest bar (or the GPU line); when that is more than
 * CHART_BARS_BREAK times the GPU's memory, the axis is broken (chart.h) and its lower part ends
 * at the GPU line (and a little headroom). Returns the top of the lower part (or of the whole
 * axis), bytes; *top gets the tallest bar of a broken axis, else 0. */
static double bars_break(const struct bars_in *d, double *top)
{
    double gpu = (double)d->gpu_bytes, hi = gpu;
    for (size_t i = 0; i < d->n; i++)
        hi = fmax(hi, (double)bar_total(d, i));
    *top = gpu > 0 && hi > CHART_BARS_BREAK * gpu ? hi : 0;
    return *top > 0 ? gpu : hi;
}

/* The highest phase (chart_phases.mark_peak): outlined, and peak_label over its value. */
static void bars_mark(struct frame *f, const struct bars_in *d, double slot, double bw, double unit,
                      const double *lines, size_t n_lines)
{
    if (!d->mark_peak || d->peak >= d->n)
        return;
    double cx = f->px + slot * ((double)d->peak + 0.5), v = (double)bar_total(d, d->peak) / unit;
    double top = map_y(f, v);
    draw_stroke_style(f->c, AXIS, 1.2, 0);
    f->c->ops->rect(f->c, cx - bw / 2, top, bw, map_y(f, 0) - top);
    f->c->ops->stroke(f->c);
    if (!d->peak_label)
        return;
    /* Over the value label, which bar_value may have raised above a line it would cross. */
    double base = top - 2;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n_lines; i++) {
            double ly = map_y(f, lines[i]);
            if (base + LABEL_PT * 0.25 >= ly - 1.5 && base - LABEL_PT * 0.8 <= ly + 1.5)
                base = ly - 2 - LABEL_PT * 0.25;
        }
    double size = fit(f->c, d->peak_label, TICK_PT, slot - 2);
    text(f->c, cx, base - LABEL_PT - 1.5, size, CANVAS_ALIGN_CENTER, d->peak_label);
}

/* The dotted line that sets the last bar apart (chart_phases.last_apart). */
static void bars_apart(struct frame *f, const struct bars_in *d, double slot)
{
    if (!d->last_apart || d->n < 2)
        return;
    double x = f->px + slot * (double)(d->n - 1);
    draw_stroke_style(f->c, AXIS, 0.8, 2);
    draw_line(f->c, x, f->py, x, f->py + f->ph);
}

static void bars_draw(struct canvas *c, double x, double y, double w, double h,
                      const struct bars_in *d, struct chart_geom *geom)
{
    double unit = units_bytes(d->units);
    double budget = (double)d->gpu_bytes * (1 - d->reserve);
    double top, hi = bars_break(d, &top);
    struct bars_labels lb;
    struct legend_item leg[CHART_STEP_TERMS + 2];
    size_t n_leg = bars_legend(d, &lb, leg);
    char y_title[64];
    snprintf(y_title, sizeof y_title, "memory of one GPU (%s)", units_name(d->units));
    size_t n = d->n;
    bool two_lines = false;
    for (size_t i = 0; i < n; i++)
        two_lines = two_lines || strchr(d->labels[i], '\n');
    struct frame_spec s = {
        .title = d->title,
        .legend = leg,
        .n_legend = n_leg,
        .y_title = y_title,
        .y_lo = 0,
        .y_hi = hi * (d->mark_peak && d->peak_label ? 1.12 : 1.06) / unit,
        .y_max_ticks = top > 0 ? 5 : 7,
        .x_label_h = TICK_PT * (two_lines ? 2.4 : 1.3) + 4,
        .y_top = top / unit,
    };
    struct frame f;
    frame_begin(&f, c, x, y, w, h, &s);
    double slot = n ? f.pw / (double)n : f.pw;
    double lines[2] = {(double)d->gpu_bytes / unit, budget / unit};
    double bw = fmin(slot * 0.6, 56);
    frame_clip(&f);
    bars_apart(&f, d, slot);
    bars_stacks(&f, d, slot, bw, unit);
    hline(&f, lines[0], LINE_GPU, 1.2, 0);
    hline(&f, lines[1], LINE_GPU, 1.2, 4);
    for (size_t i = 0; i < n; i++)
        bar_value(&f, f.px + slot * ((double)i + 0.5), (double)bar_total(d, i) / unit, lines, 2, 1);
    bars_mark(&f, d, slot, bw, unit, lines, 2);
    frame_end(&f, false, geom);
    frame_break_marks(&f);
    double size = category_size(c, d->labels, n, slot);
    for (size_t i = 0; i < n; i++)
        category_label(&f, f.px + slot * ((double)i + 0.5), size, d->labels[i]);
}

void chart_bars_draw(struct canvas *c, double x, double y, double w, double h,
                     const struct chart_bars *d, struct chart_geom *geom)
{
    struct bars_in in;
    memset(&in, 0, sizeof in);
    in.title = d->title;
    in.n = d->n < BARS_MAX ? d->n : BARS_MAX;
    in.gpu_bytes = d->gpu_bytes;
    in.reserve = d->reserve;
    in.units = d->units;
    for (size_t i = 0; i < in.n; i++) {
        in.labels[i] = d->bars[i].label ? d->bars[i].label : "";
        memcpy(in.v[i], d->bars[i].term_bytes, sizeof d->bars[i].term_bytes);
    }
    bars_draw(c, x, y, w, h, &in, geom);
}

void chart_phases_draw(struct canvas *c, double x, double y, double w, double h,
                       const struct chart_phases *d, struct chart_geom *geom)
{
    struct bars_in in;
    memset(&in, 0, sizeof in);
    in.title = d->title;
    in.n = d->n < BARS_MAX ? d->n : BARS_MAX;
    in.gpu_bytes = d->gpu_bytes;
    in.reserve = d->reserve;
    in.units = d->units;
    in.step = true;
    in.mark_peak = d->mark_peak;
    in.peak = d->peak;
    in.peak_label = d->peak_label;
    in.last_apart = d->last_apart;
    for (size_t i = 0; i < in.n; i++) {
        in.labels[i] = d->bars[i].label ? d->bars[i].label : "";
        memcpy(in.v[i], d->bars[i].term_bytes, sizeof d->bars[i].term_bytes);
    }
    bars_draw(c, x, y, w, h, &in, geom);
}

/* ---------------------------------------------------------------- memory over one step */

void chart_step_series_init(struct chart_step_series *s, uint64_t segment, uint64_t ckpt_bytes)
{
    memset(s, 0, sizeof *s);
    s->per_point = 1;
    s->segment = segment;
    s->ckpt_bytes = ckpt_bytes;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* Merges point b, which follows a, into a. */
static void step_point_merge(struct chart_step_point *a, const struct chart_step_point *b)
{
    a->t_end = b->t_end;
    a->act_bytes = max_u64(a->act_bytes, b->act_bytes);
    a->top_bytes = max_u64(a->top_bytes, b->top_bytes);
    a->ckpt_bytes = max_u64(a->ckpt_bytes, b->ckpt_bytes);
    a->recompute = a->recompute || b->recompute;
    a->events += b->events;
    a->grads_bytes = max_u64(a->grads_bytes, b->grads_bytes);
    a->copies_top = max_u64(a->copies_top, b->copies_top);
    a->temps_top = max_u64(a->temps_top, b->temps_top);
}

/* Checkpoints (stored segment inputs) held after e, following timeline.h: the forward of a
 * segment's first layer keeps its input, that layer's backward frees it. The stage's first
 * layer is that of the first forward. */
static void step_held(struct chart_step_series *s, const struct timeline_event *e)
{
    if (e->kind == TIMELINE_FORWARD && !s->lo_set) {
        s->lo = e->layer;
        s->lo_set = true;
    }
    if (s->segment == 0 || !s->lo_set || (e->layer - s->lo) % s->segment != 0)
        return;
    if (e->kind == TIMELINE_FORWARD)
        s->held++;
    else if (e->kind == TIMELINE_BACKWARD && s->held > 0)
        s->held--;
}

void chart_step_series_add(void *series, const struct timeline_event *e)
{
    struct chart_step_series *s = series;
    step_held(s, e);
    /* When the backward pass starts: the loss backward, or the first layer's backward. */
    if (!s->turn_set && (e->kind == TIMELINE_LOSS_BACKWARD || e->kind == TIMELINE_BACKWARD)) {
        s->turn = e->t_start;
        s->turn_set = true;
    }
    if (e->kind == TIMELINE_LOGITS && e->logits_bytes > 0 && !s->spike) {
        s->spike = true;
        s->spike_t = e->t_end;
        s->spike_act_bytes = e->act_bytes;
        s->spike_logits_bytes = e->logits_bytes;
    }
    /* Each area's top over the band: the gradients, the activations, the copies, the
     * temporaries, the logits (under --peak lesson only the activations and logits are there). */
    uint64_t act = e->grads_bytes + e->act_bytes, copies = act + e->copies_bytes;
    uint64_t temps = copies + e->temp_bytes;
    struct chart_step_point p = {e->t_start,
                                 e->t_end,
                                 act,
                                 temps + e->logits_bytes,
                                 e->grads_bytes + s->held * s->ckpt_bytes,
                                 e->kind == TIMELINE_RECOMPUTE,
                                 1,
                                 e->grads_bytes,
                                 copies,
                                 temps};
    s->top_bytes = s->top_bytes > p.top_bytes ? s->top_bytes : p.top_bytes;
    s->copies = s->copies || e->copies_bytes > 0;
    s->temps = s->temps || e->temp_bytes > 0;
    if (e->phase < STEP_PHASES)
        s->step = true;
    if (e->phase < STEP_PHASES && e->t_end == e->t_start) { /* a column, not a point */
        if (s->n_spikes < CHART_STEP_SPIKES)
            s->spikes[s->n_spikes++] = (struct chart_step_spike){
                e->t_start, p.grads_bytes, p.act_bytes, p.copies_top, p.temps_top, p.top_bytes};
        s->events++;
        return;
    }
    s->recompute = s->recompute || p.recompute;
    s->events++;
    if (s->n > 0 && s->points[s->n - 1].events < s->per_point) {
        step_point_merge(&s->points[s->n - 1], &p);
        return;
    }
    if (s->n == CHART_STEP_POINTS) { /* every point full: pairs become one, twice as wide */
        for (size_t i = 0; i < s->n / 2; i++) {
            s->points[i] = s->points[2 * i];
            step_point_merge(&s->points[i], &s->points[2 * i + 1]);
        }
        s->n /= 2;
        s->per_point *= 2;
    }
    s->points[s->n++] = p;
}

enum step_layer { STEP_LOGITS, STEP_ACT, STEP_CKPT, STEP_GRADS, STEP_COPIES, STEP_TEMPS };

/* Memory above the states band at a point for one layer of the stack: the highest of the events
 * it merges. */
static double step_value(const struct chart_step_point *p, enum step_layer which)
{
    switch (which) {
    case STEP_CKPT:
        return (double)p->ckpt_bytes;
    case STEP_LOGITS:
        return (double)p->top_bytes;
    case STEP_GRADS:
        return (double)p->grads_bytes;
    case STEP_COPIES:
        return (double)p->copies_top;
    case STEP_TEMPS:
        return (double)p->temps_top;
    case STEP_ACT:
        break;
    }
    return (double)p->act_bytes;
}

/* The area between the states band and one layer's top edge, linear within each point. */
static void step_area(struct frame *f, const struct chart_step *d,
                      const struct chart_step_series *s, double unit, enum step_layer which)
{
    struct canvas *c = f->c;
    double base = (double)d->states_bytes / unit, prev = 0;
    double t_prev = s->n ? s->points[0].t_start : 0;
    c->ops->move_to(c, map_x(f, t_prev), map_y(f, base));
    for (size_t i = 0; i < s->n; i++) {
        const struct chart_step_point *p = &s->points[i];
        double v = step_value(p, which);
        c->ops->line_to(c, map_x(f, p->t_start), map_y(f, base + prev / unit));
        c->ops->line_to(c, map_x(f, p->t_end), map_y(f, base + v / unit));
        prev = v;
        t_prev = p->t_end;
    }
    c->ops->line_to(c, map_x(f, t_prev), map_y(f, base));
    c->ops->close_path(c);
    c->ops->fill(c);
}

#define STRIP_PT 4.0 /* height of the recomputation marks on the time axis */

/* The logits take no time in the timeline: a spike 3 pt wide shows them. Recomputed forwards
 * are marked on the time axis (doc/model.md section 10). */
static void step_marks(struct frame *f, const struct chart_step_series *s, double states,
                       double unit)
{
    double base = states / unit;
    if (s->spike && !s->step) {
        double y0 = map_y(f, base + (double)s->spike_act_bytes / unit);
        double y1 =
            map_y(f, base + ((double)s->spike_act_bytes + (double)s->spike_logits_bytes) / unit);
        double cx = map_x(f, s->spike_t);
        draw_rect(f->c, chart_term_colour(CHART_LOGITS), cx - 1.5, y1, 3, y0 - y1);
    }
    for (size_t i = 0; i < s->n; i++) {
        const struct chart_step_point *p = &s->points[i];
        if (!p->recompute)
            continue;
        /* One mark per run of back-to-back recomputed layers (no seams between them). */
        double t_end = p->t_end;
        while (i + 1 < s->n && s->points[i + 1].recompute && s->points[i + 1].t_start == t_end)
            t_end = s->points[++i].t_end;
        double x0 = map_x(f, p->t_start), x1 = map_x(f, t_end);
        draw_rect(f->c, MAGENTA, x0, f->py + f->ph - STRIP_PT, x1 - x0, STRIP_PT);
    }
}

#define SPIKE_W 3.0 /* pt: the width of a column of no time */

/* The checkpoints' colour under --peak step, where the gradients are yellow: a pale orange. */
static const struct canvas_rgb CKPT_STEP = {0.99, 0.80, 0.55};

/* The phases of no time of a step (chart_step_spike): thin stacked columns, those of one instant
 * side by side around it, inside the plot. */
static void step_columns(struct frame *f, const struct chart_step_series *s, double states,
                         double unit)
{
    double base = states / unit;
    for (size_t i = 0; i < s->n_spikes;) {
        size_t j = i;
        while (j < s->n_spikes && s->spikes[j].t == s->spikes[i].t)
            j++;
        double w = (double)(j - i) * SPIKE_W, x = map_x(f, s->spikes[i].t) - w / 2;
        x = fmin(fmax(x, f->px), f->px + f->pw - w);
        for (size_t k = i; k < j; k++, x += SPIKE_W) {
            const struct chart_step_spike *sp = &s->spikes[k];
            const uint64_t tops[] = {sp->grads_bytes, sp->act_bytes, sp->copies_top, sp->temps_top,
                                     sp->top_bytes};
            static const enum chart_term terms[] = {CHART_GRADS, CHART_ACT, CHART_COPIES,
                                                    CHART_TEMPS, CHART_LOGITS};
            uint64_t lo = 0;
            for (size_t a = 0; a < sizeof tops / sizeof *tops; a++) {
                if (tops[a] > lo) {
                    double y0 = map_y(f, base + (double)lo / unit);
                    double y1 = map_y(f, base + (double)tops[a] / unit);
                    draw_rect(f->c, chart_term_colour(terms[a]), x, y1, SPIKE_W, y0 - y1);
                }
                lo = tops[a] > lo ? tops[a] : lo;
            }
        }
        i = j;
    }
}

/* The top of the y axis in bytes: the highest point of the step, the GPU, or the caller's. */
static double step_y_hi(const struct chart_step *d, const struct chart_step_series *s)
{
    double hi = fmax((double)d->y_max_bytes, (double)d->states_bytes + (double)s->top_bytes);
    return fmax(hi, (double)d->gpu_bytes);
}

/* The legend's texts that carry numbers. */
struct step_labels {
    char gpu[64], reserve[64];
};

#define STEP_LEGEND_MAX 11

/* The legend: states, checkpoints (band), activations, logits, recomputation, the GPU lines;
 * under --peak step the gradients, and the copies and temporaries when there are any. */
static size_t step_legend(const struct chart_step *d, const struct chart_step_series *s, bool band,
                          struct step_labels *lb, struct legend_item leg[STEP_LEGEND_MAX])
{
    double unit = units_bytes(d->units);
    bool recompute = s->recompute;
    snprintf(lb->gpu, sizeof lb->gpu, "GPU memory %.0f %s", (double)d->gpu_bytes / unit,
             units_name(d->units));
    snprintf(lb->reserve, sizeof lb->reserve, "%.0f%% kept free", d->reserve * 100);
    size_t nl = 0;
    if (s->step) {
        leg[nl++] =
            (struct legend_item){LEG_BOX, chart_states_colour(), "weights, optimizer states"};
        leg[nl++] = (struct legend_item){LEG_BOX, chart_term_colour(CHART_GRADS), "gradients"};
        if (band)
            leg[nl++] = (struct legend_item){LEG_BOX, CKPT_STEP, "checkpoints"};
        leg[nl++] =
            (struct legend_item){LEG_BOX, chart_term_colour(CHART_ACT), "activations, inputs"};
        if (s->copies)
            leg[nl++] =
                (struct legend_item){LEG_BOX, chart_term_colour(CHART_COPIES), "autocast copies"};
        if (s->temps)
            leg[nl++] =
                (struct legend_item){LEG_BOX, chart_term_colour(CHART_TEMPS), "temporaries"};
        leg[nl++] = (struct legend_item){LEG_BOX, chart_term_colour(CHART_LOGITS), "logits, loss"};
    } else {
        leg[nl++] = (struct legend_item){LEG_BOX, chart_states_colour(), "model states"};
        if (band)
            leg[nl++] =
                (struct legend_item){LEG_BOX, chart_term_colour(CHART_GRADS), "checkpoints"};
        leg[nl++] = (struct legend_item){LEG_BOX, chart_term_colour(CHART_ACT), "activations"};
        leg[nl++] = (struct legend_item){LEG_BOX, chart_term_colour(CHART_LOGITS), "logits"};
    }
    if (recompute)
        leg[nl++] = (struct legend_item){LEG_STRIP, MAGENTA, "recomputed forward"};
    if (d->gpu_bytes) {
        leg[nl++] = (struct legend_item){LEG_LINE, LINE_GPU, lb->gpu};
        leg[nl++] = (struct legend_item){LEG_DASH, LINE_GPU, lb->reserve};
    }
    return nl;
}

/* The stacked areas: logits over activations over checkpoints (band) over the model states. */
static void step_areas(struct frame *f, const struct chart_step *d,
                       const struct chart_step_series *s, double unit, bool band)
{
    struct canvas *c = f->c;
    double states = (double)d->states_bytes;
    fill_rgb(c, chart_term_colour(CHART_LOGITS));
    step_area(f, d, s, unit, STEP_LOGITS);
    if (s->step && s->temps) {
        fill_rgb(c, chart_term_colour(CHART_TEMPS));
        step_area(f, d, s, unit, STEP_TEMPS);
    }
    if (s->step && s->copies) {
        fill_rgb(c, chart_term_colour(CHART_COPIES));
        step_area(f, d, s, unit, STEP_COPIES);
    }
    fill_rgb(c, chart_term_colour(CHART_ACT));
    step_area(f, d, s, unit, STEP_ACT);
    if (band) {
        fill_rgb(c, s->step ? CKPT_STEP : chart_term_colour(CHART_GRADS));
        step_area(f, d, s, unit, STEP_CKPT);
    }
    if (s->step) {
        fill_rgb(c, chart_term_colour(CHART_GRADS));
        step_area(f, d, s, unit, STEP_GRADS);
    }
    draw_rect(c, chart_states_colour(), f->px, map_y(f, states / unit), f->pw,
              map_y(f, 0) - map_y(f, states / unit));
}

/* The turn from forward to backward, and the two phases named at the top. */
static void step_turn_mark(struct frame *f, const struct chart_step *d,
                           const struct chart_step_series *s)
{
    struct canvas *c = f->c;
    double turn = map_x(f, s->turn_set ? s->turn : d->total_time);
    draw_stroke_style(c, AXIS, 0.6, 2);
    draw_line(c, turn, f->py, turn, f->py + f->ph);
    double ty = f->py + TICK_PT + 2;
    text(c, turn - 4, ty, TICK_PT, CANVAS_ALIGN_RIGHT, "forward \xe2\x86\x92");
    text(c, turn + 4, ty, TICK_PT, CANVAS_ALIGN_LEFT, "\xe2\x86\x90 backward");
}

void chart_step_draw(struct canvas *c, double x, double y, double w, double h,
                     const struct chart_step *d, struct chart_geom *geom)
{
    double unit = units_bytes(d->units);
    struct chart_step_series own;
    const struct chart_step_series *ser = d->series;
    if (!ser) {
        chart_step_series_init(&own, d->segment, d->ckpt_bytes);
        for (size_t i = 0; i < d->n; i++)
            chart_step_series_add(&own, &d->events[i]);
        ser = &own;
    }
    double hi = step_y_hi(d, ser);
    bool band = d->segment > 0 && d->ckpt_bytes > 0;
    struct step_labels lb;
    struct legend_item leg[STEP_LEGEND_MAX];
    size_t nl = step_legend(d, ser, band, &lb, leg);
    char y_title[64];
    snprintf(y_title, sizeof y_title, "memory (%s)", units_name(d->units));
    struct frame_spec s = {
        .title = d->title,
        .legend = leg,
        .n_legend = nl,
        .y_title = y_title,
        .x_title = "time (forward passes of one layer)",
        .y_lo = 0,
        .y_hi = hi * 1.12 / unit,
        .y_max_ticks = 5,
        .x_numeric = true,
        .x_lo = 0,
        .x_hi = d->total_time,
        .x_max_ticks = 10,
    };
    struct frame f;
    frame_begin(&f, c, x, y, w, h, &s);
    frame_clip(&f);
    step_areas(&f, d, ser, unit, band);
    step_marks(&f, ser, (double)d->states_bytes, unit);
    if (ser->step)
        step_columns(&f, ser, (double)d->states_bytes, unit);
    if (d->gpu_bytes) {
        hline(&f, (double)d->gpu_bytes / unit, LINE_GPU, 1.0, 0);
        hline(&f, (double)d->gpu_bytes * (1 - d->reserve) / unit, LINE_GPU, 1.0, 4);
    }
    step_turn_mark(&f, d, ser);
    frame_end(&f, false, geom);
}

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
    uint64_t n = sc->pp ? sc->layers / sc->pp : 0; /* a segment stays inside a stage */
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
    for (size_t i = 0; i < d->n_points; i++)
        if (model_ckpt_peak(sc, &t, d->k[i], &d->peak_bytes[i]) != MODEL_OK)
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
    double unit = units_bytes(d->units);
    const char *un = units_name(d->units);
    snprintf(lb->none, sizeof lb->none, "no checkpointing: %.1f %s", (double)d->none_bytes / unit,
             un);
    snprintf(lb->best, sizeof lb->best, "best k = %llu: %.1f %s", (unsigned long long)d->k_best,
             best / unit, un);
    snprintf(lb->kstar, sizeof lb->kstar, "k* = %.2f", d->k_star);
    snprintf(lb->time, sizeof lb->time, "step time (right axis): +%.0f%% for every k",
             d->extra_compute * 100);
}

/* The reference lines: no checkpointing, k*, and the step time on the right axis (1 + extra
 * for every k >= 1). */
static void kcurve_guides(struct frame *f, const struct chart_kcurve *d, double unit)
{
    struct canvas *c = f->c;
    hline(f, (double)d->none_bytes / unit, chart_states_colour(), 1.2, 3);
    if (d->k_star >= f->x0 && d->k_star <= f->x1) {
        draw_stroke_style(c, KSTAR, 1.0, 3);
        draw_line(c, map_x(f, d->k_star), f->py, map_x(f, d->k_star), f->py + f->ph);
    }
    double ty = f->py + f->ph - (1 + d->extra_compute - f->y20) / (f->y21 - f->y20) * f->ph;
    draw_stroke_style(c, STEP_TIME, 1.2, 0);
    draw_line(c, map_x(f, 1), ty, map_x(f, (double)d->n), ty);
}

/* The peak for every k: a line through square markers (only the line when it is drawn through
 * some values of k, not all). */
static void kcurve_curve(struct frame *f, const struct chart_kcurve *d, double unit)
{
    struct canvas *c = f->c;
    size_t n = d->n_points < CHART_KCURVE_POINTS ? d->n_points : CHART_KCURVE_POINTS;
    draw_stroke_style(c, ORANGE, 1.5, 0);
    for (size_t i = 0; i < n; i++) {
        double px = map_x(f, (double)d->k[i]), py = map_y(f, (double)d->peak_bytes[i] / unit);
        if (i == 0)
            c->ops->move_to(c, px, py);
        else
            c->ops->line_to(c, px, py);
    }
    if (n)
        c->ops->stroke(c);
    for (size_t i = 0; i < n && (uint64_t)n == d->n; i++)
        draw_rect(c, ORANGE, map_x(f, (double)d->k[i]) - 1.5,
                  map_y(f, (double)d->peak_bytes[i] / unit) - 1.5, 3, 3);
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
    };
    struct frame_spec s = {
        .title = d->title,
        .legend = leg,
        .n_legend = sizeof leg / sizeof leg[0],
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
    frame_begin(&f, c, x, y, w, h, &s);
    frame_clip(&f);
    kcurve_guides(&f, d, unit);
    kcurve_curve(&f, d, unit);
    if (best > 0)
        diamond(c, MAGENTA, map_x(&f, (double)d->k_best), map_y(&f, best / unit), 4);
    frame_end(&f, true, geom);
}

/* ---------------------------------------------------------------- one layer's activations */

static size_t push_op(struct chart_walk_op *ops, size_t n, size_t cap, const char *name,
                      double units, enum chart_walk_unit unit)
{
    if (n < cap)
        ops[n] = (struct chart_walk_op){name, units, unit};
    return n + 1;
}

size_t chart_layer_walk_ops(const struct scenario *sc, struct chart_walk_op *ops, size_t cap)
{
    /* The layer's kept tensors as model's inventory lists them (layer.h), in forward order,
     * without those the recomputation drops; per-token bytes in sbh units. */
    struct layer_inventory inv;
    enum layer_kind kind = sc->experts > 0 ? LAYER_MOE : LAYER_DENSE;
    if (!layer_inventory(sc, kind, &inv))
        return 0;
    double h = (double)sc->hidden, tokens = (double)sc->seq * (double)sc->micro_batch;
    double rows_per_token = (double)layer_routed_rows(sc, sc->seq * sc->micro_batch) / tokens;
    size_t n = 0;
    for (size_t i = 0; i < inv.n_kept; i++) {
        const struct layer_tensor *t = &inv.kept[i];
        if (t->recomputed)
            continue;
        if (t->extent == LAYER_PER_HEAD_SCORE)
            n = push_op(ops, n, cap, t->name, (double)t->per, CHART_WALK_AS2B);
        else if (t->extent == LAYER_PER_HEAD_ROW)
            n = push_op(ops, n, cap, t->name, (double)t->per, CHART_WALK_ASB);
        else if (t->extent == LAYER_PER_ROUTED_TOKEN) /* routed rows per token: k, or capacity */
            n = push_op(ops, n, cap, t->name, (double)t->per * rows_per_token / h, CHART_WALK_SBH);
        else
            n = push_op(ops, n, cap, t->name, (double)t->per / h, CHART_WALK_SBH);
    }
    return n <= cap ? n : 0;
}

double chart_walk_total(const struct chart_walk_op *ops, size_t n, enum chart_walk_unit unit)
{
    double t = 0;
    for (size_t i = 0; i < n; i++)
        if (ops[i].unit == unit)
            t += ops[i].units;
    return t;
}

static const char *walk_unit_name(enum chart_walk_unit u)
{
    if (u == CHART_WALK_AS2B)
        return "as\xc2\xb2"
               "b";
    return u == CHART_WALK_ASB ? "asb" : "sbh";
}

/* "+2", "+0.5", "34" with at most two decimals, no trailing zeros. */
static void walk_number(double v, const char *prefix, char *buf, size_t size)
{
    char num[32];
    snprintf(num, sizeof num, "%.2f", v);
    char *dot = strchr(num, '.');
    if (dot) {
        char *e = num + strlen(num) - 1;
        while (e > dot && *e == '0')
            *e-- = '\0';
        if (e == dot)
            *e = '\0';
    }
    snprintf(buf, size, "%s%s", prefix, num);
}

/* "34 sbh + 5 as²b", or "34 sbh" without a core. */
static void walk_total_label(double sbh, double core, char *buf, size_t size)
{
    char a[24], b[24];
    walk_number(sbh, "", a, sizeof a);
    walk_number(core, "", b, sizeof b);
    if (core > 0)
        snprintf(buf, size,
                 "%s sbh + %s as\xc2\xb2"
                 "b",
                 a, b);
    else
        snprintf(buf, size, "%s sbh", a);
}

/* The name column's width and the axis's top, which leaves room right of the longest bar for
 * the widest value label. */
static double walk_x_hi(struct canvas *c, const struct chart_walk *d, double w, double *left_w)
{
    double sbh = chart_walk_total(d->ops, d->n, CHART_WALK_SBH);
    double core = chart_walk_total(d->ops, d->n, CHART_WALK_AS2B);
    double hi = fmax(sbh, core);
    *left_w = c->ops->text_width(c, TICK_PT, "total");
    for (size_t i = 0; i < d->n; i++)
        *left_w = fmax(*left_w, c->ops->text_width(c, TICK_PT, d->ops[i].name));
    char buf[64];
    walk_total_label(sbh, core, buf, sizeof buf);
    double label_w = c->ops->text_width(c, TICK_PT, buf) + 8;
    double pw = w - *left_w - GAP - 6;
    return d->x_max > 0 ? d->x_max : pw > 2 * label_w ? hi * pw / (pw - label_w) : hi * 2;
}

/* The rows' layout: one per tensor and one for the total. */
struct walk_rows {
    double row_h, bar_h, size;
};

/* Where tensor op's bar runs: from the running total of its unit to the new total; asb is a/h
 * sbh, a sliver from 0. */
static void walk_span(const struct chart_walk_op *op, double heads_per_hidden, double *run_sbh,
                      double *run_core, double *from, double *to)
{
    if (op->unit == CHART_WALK_SBH) {
        *from = *run_sbh;
        *run_sbh += op->units;
        *to = *run_sbh;
    } else if (op->unit == CHART_WALK_AS2B) {
        *from = *run_core;
        *run_core += op->units;
        *to = *run_core;
    } else {
        *from = 0;
        *to = op->units * heads_per_hidden;
    }
}

/* One tensor's bar (drawn at least 1.5 pt wide so it shows) and its "+2" or "+5 as²b" label. */
static void walk_op_row(struct frame *f, const struct walk_rows *rw, const struct chart_walk_op *op,
                        double cy, double from, double to)
{
    struct canvas *c = f->c;
    struct canvas_rgb rgb = op->unit == CHART_WALK_SBH ? ORANGE : MAGENTA;
    double x0 = map_x(f, from), x1 = fmax(map_x(f, to), x0 + 1.5);
    draw_rect(c, rgb, x0, cy - rw->bar_h / 2, x1 - x0, rw->bar_h);
    char buf[64];
    walk_number(op->units, "+", buf, sizeof buf);
    if (op->unit != CHART_WALK_SBH) {
        size_t len = strlen(buf);
        snprintf(buf + len, sizeof buf - len, " %s", walk_unit_name(op->unit));
    }
    text(c, x1 + 3, cy + rw->size * 0.36, rw->size, CANVAS_ALIGN_LEFT, buf);
}

/* The total row: both running totals, sbh above as²b. */
static void walk_total_row(struct frame *f, const struct walk_rows *rw, double cy, double sbh,
                           double core)
{
    struct canvas *c = f->c;
    double bar_h = rw->bar_h;
    draw_rect(c, ORANGE, f->px, cy - bar_h / 2, map_x(f, sbh) - f->px,
              core > 0 ? bar_h / 2 : bar_h);
    if (core > 0)
        draw_rect(c, MAGENTA, f->px, cy, map_x(f, core) - f->px, bar_h / 2);
    char buf[64];
    walk_total_label(sbh, core, buf, sizeof buf);
    text(c, map_x(f, fmax(sbh, core)) + 3, cy + rw->size * 0.36, rw->size, CANVAS_ALIGN_LEFT, buf);
}

/* The bars of every tensor, then the total. */
static void walk_bars(struct frame *f, const struct walk_rows *rw, const struct chart_walk *d)
{
    double run_sbh = 0, run_core = 0;
    for (size_t i = 0; i < d->n; i++) {
        double cy = f->py + rw->row_h * ((double)i + 0.5), from, to;
        walk_span(&d->ops[i], d->heads_per_hidden, &run_sbh, &run_core, &from, &to);
        walk_op_row(f, rw, &d->ops[i], cy, from, to);
    }
    double cy = f->py + rw->row_h * ((double)d->n + 0.5);
    walk_total_row(f, rw, cy, chart_walk_total(d->ops, d->n, CHART_WALK_SBH),
                   chart_walk_total(d->ops, d->n, CHART_WALK_AS2B));
}

void chart_walk_draw(struct canvas *c, double x, double y, double w, double h,
                     const struct chart_walk *d, struct chart_geom *geom)
{
    double left_w, x_hi = walk_x_hi(c, d, w, &left_w);
    struct legend_item leg[] = {
        {LEG_BOX, ORANGE, "kept tensor, running total in sbh"},
        {LEG_BOX, MAGENTA,
         "attention core, running total in as\xc2\xb2"
         "b"},
    };
    struct frame_spec s = {
        .title = d->title,
        .legend = leg,
        .n_legend = 2,
        .x_title = "bytes in units of sbh (orange) or as\xc2\xb2"
                   "b (magenta)",
        .y_lo = 0,
        .y_hi = 1,
        .y_max_ticks = 1,
        .x_numeric = true,
        .x_lo = 0,
        .x_hi = x_hi,
        .x_max_ticks = 8,
        .left_w = left_w,
    };
    struct frame f;
    frame_begin(&f, c, x, y, w, h, &s);
    struct walk_rows rw;
    rw.row_h = f.ph / (double)(d->n + 1);
    rw.bar_h = fmin(rw.row_h * 0.62, 12);
    rw.size = fmin(TICK_PT, rw.row_h * 0.8);
    frame_clip(&f);
    walk_bars(&f, &rw, d);
    frame_end(&f, false, geom);
    for (size_t i = 0; i <= d->n; i++) {
        const char *name = i < d->n ? d->ops[i].name : "total";
        text(c, f.px - GAP, f.py + rw.row_h * ((double)i + 0.5) + rw.size * 0.36, rw.size,
             CANVAS_ALIGN_RIGHT, name);
    }
}

/* ---------------------------------------------------------------- one layer's parameters */

size_t chart_layer_param_items(const struct scenario *sc, struct chart_param_item *items,
                               size_t cap)
{
    /* The layer's parameter tensors as model's inventory lists them (layer.h), in h^2 units;
     * the biases and norm scales, each too small to see, are drawn as one bar at the end, and
     * so are the router's score bias and the shared experts' gate with their matrices. */
    static const enum chart_param_group group[LAYER_PARTS] = {
        [LAYER_PART_ATTENTION] = CHART_PARAM_ATTN, [LAYER_PART_SMALL] = CHART_PARAM_SMALL,
        [LAYER_PART_MLP] = CHART_PARAM_MLP,        [LAYER_PART_SHARED] = CHART_PARAM_SHARED,
        [LAYER_PART_ROUTER] = CHART_PARAM_ROUTER,  [LAYER_PART_EXPERTS] = CHART_PARAM_EXPERTS,
    };
    struct layer_inventory inv;
    enum layer_kind kind = sc->experts > 0 ? LAYER_MOE : LAYER_DENSE;
    if (!layer_inventory(sc, kind, &inv))
        return 0;
    double h2 = (double)sc->hidden * (double)sc->hidden, small = 0;
    bool biases = false;
    size_t n = 0;
    for (size_t i = 0; i < inv.n_params; i++) {
        const struct layer_param *p = &inv.params[i];
        enum chart_param_group g = group[p->part];
        bool joins = (g == CHART_PARAM_ROUTER || g == CHART_PARAM_SHARED) && n > 0 &&
                     items[n - 1].group == g;
        if (p->part == LAYER_PART_SMALL) {
            small += (double)p->count;
            biases = biases || strstr(p->name, "bias") != NULL;
        } else if (joins) {
            items[n - 1].h2 += (double)p->count / h2;
        } else if (n == cap) {
            return 0;
        } else if (p->part == LAYER_PART_EXPERTS) {
            items[n++] = (struct chart_param_item){"one routed\nexpert", (double)p->count / h2, g,
                                                   sc->experts};
        } else if (p->part == LAYER_PART_SHARED) {
            items[n++] = (struct chart_param_item){"shared\nexperts", (double)p->count / h2, g, 1};
        } else {
            items[n++] = (struct chart_param_item){p->name, (double)p->count / h2, g, 1};
        }
    }
    if (small > 0) {
        if (n == cap)
            return 0;
        items[n++] = (struct chart_param_item){biases ? "biases,\nnorms" : "norms", small / h2,
                                               CHART_PARAM_SMALL, 1};
    }
    return n;
}

static struct canvas_rgb param_colour(enum chart_param_group g)
{
    /* The dense MLP and the experts in greens (all of them MLPs), the router apart. */
    switch (g) {
    case CHART_PARAM_ATTN:
        return chart_term_colour(CHART_WEIGHTS);
    case CHART_PARAM_MLP:
        return (struct canvas_rgb){0.30, 0.65, 0.55};
    case CHART_PARAM_SHARED:
        return (struct canvas_rgb){0.62, 0.84, 0.74};
    case CHART_PARAM_ROUTER:
        return (struct canvas_rgb){0.83, 0.42, 0.30};
    case CHART_PARAM_EXPERTS:
        return (struct canvas_rgb){0.12, 0.42, 0.35};
    case CHART_PARAM_SMALL:
        break;
    }
    return chart_states_colour();
}

/* The height of an item's bar: one copy. */
static double param_bar(const struct chart_param_item *it)
{
    return it->copies > 1 ? it->h2 / (double)it->copies : it->h2;
}

/* The legend: the groups of the items, in this order. */
static size_t params_legend(const struct chart_param_item *items, size_t n, struct legend_item *leg)
{
    static const struct {
        enum chart_param_group g;
        const char *label;
    } order[] = {
        {CHART_PARAM_ATTN, "attention"},         {CHART_PARAM_MLP, "MLP"},
        {CHART_PARAM_SHARED, "shared experts"},  {CHART_PARAM_ROUTER, "router"},
        {CHART_PARAM_EXPERTS, "routed experts"}, {CHART_PARAM_SMALL, "biases and norms"},
    };
    size_t k = 0;
    for (size_t o = 0; o < sizeof order / sizeof *order; o++) {
        bool present = false;
        for (size_t i = 0; i < n && !present; i++)
            present = items[i].group == order[o].g;
        if (present)
            leg[k++] = (struct legend_item){LEG_BOX, param_colour(order[o].g), order[o].label};
    }
    return k;
}

/* "x 256" on the bar of an item of many copies: inside its top when the bar is tall enough,
 * else above its value label. */
static void params_copies_label(struct frame *f, const struct chart_param_item *it, double cx,
                                double top, double slot)
{
    char buf[32];
    snprintf(buf, sizeof buf, "\xc3\x97 %llu", (unsigned long long)it->copies);
    double size = fit(f->c, buf, TICK_PT, slot - 2);
    double bar_h = map_y(f, 0) - top;
    if (bar_h >= size + 5)
        draw_text(f->c, (struct canvas_rgb){1, 1, 1}, cx, top + size + 1.5, size,
                  CANVAS_ALIGN_CENTER, buf);
    else
        text(f->c, cx, top - 2.5 - TICK_PT - 1.5, size, CANVAS_ALIGN_CENTER, buf);
}

#define SHARE_BAR_W 16.0

/*
 * Right of the plot, in (px, f's plot top, pw, f's plot height): the whole layer as one stacked
 * bar, the routed experts at the bottom and every other group above them in the legend's
 * colours, with the two shares written beside it.
 */
static void params_share_panel(struct frame *f, double px, double pw, const struct chart_params *d)
{
    struct canvas *c = f->c;
    static const enum chart_param_group above[] = {CHART_PARAM_ATTN, CHART_PARAM_MLP,
                                                   CHART_PARAM_SHARED, CHART_PARAM_ROUTER,
                                                   CHART_PARAM_SMALL};
    double total = 0, routed = 0;
    for (size_t i = 0; i < d->n; i++) {
        total += d->items[i].h2;
        routed += d->items[i].group == CHART_PARAM_EXPERTS ? d->items[i].h2 : 0;
    }
    if (!(total > 0))
        return;
    char buf[64];
    double size = TICK_PT, lead = size * 1.2, bx = px + GAP;
    text(c, bx, f->py + size, size, CANVAS_ALIGN_LEFT, "whole layer");
    snprintf(buf, sizeof buf, "%.1f h\xc2\xb2", total);
    text(c, bx, f->py + size + lead, size, CANVAS_ALIGN_LEFT, buf);
    double y0 = f->py + size + lead + GAP + 2, y1 = f->py + f->ph, bh = y1 - y0;
    double cy = y1 - routed / total * bh;
    draw_rect(c, param_colour(CHART_PARAM_EXPERTS), bx, cy, SHARE_BAR_W, y1 - cy);
    for (size_t a = 0; a < sizeof above / sizeof *above; a++) {
        double part = 0;
        for (size_t i = 0; i < d->n; i++)
            part += d->items[i].group == above[a] ? d->items[i].h2 : 0;
        double ph = part / total * bh;
        draw_rect(c, param_colour(above[a]), bx, cy - ph, SHARE_BAR_W, ph);
        cy -= ph;
    }
    draw_stroke_style(c, AXIS, 0.6, 0);
    c->ops->rect(c, bx, y0, SHARE_BAR_W, bh);
    c->ops->stroke(c);
    /* The rest at the top, the routed experts at their middle but below the rest's label. */
    double lx = bx + SHARE_BAR_W + GAP, lw = px + pw - lx;
    double ls = fmin(fit(c, "routed experts", size, lw), fit(c, "everything else", size, lw));
    double rest_y = y0 + ls;
    snprintf(buf, sizeof buf, "%.1f%%", 100 * (total - routed) / total);
    text(c, lx, rest_y, ls, CANVAS_ALIGN_LEFT, "everything else");
    text(c, lx, rest_y + ls * 1.15, ls, CANVAS_ALIGN_LEFT, buf);
    double mid = y1 - routed / total * bh / 2;
    double routed_y = fmin(fmax(mid - ls * 0.2, rest_y + ls * 2.6), y1 - ls * 1.2);
    snprintf(buf, sizeof buf, "%.1f%%", 100 * routed / total);
    text(c, lx, routed_y, ls, CANVAS_ALIGN_LEFT, "routed experts");
    text(c, lx, routed_y + ls * 1.15, ls, CANVAS_ALIGN_LEFT, buf);
}

#define SHARE_PANEL_W 104.0

void chart_params_draw(struct canvas *c, double x, double y, double w, double h,
                       const struct chart_params *d, struct chart_geom *geom)
{
    double hi = d->y_max;
    const char *labels[CHART_PARAM_MAX] = {0};
    size_t n = d->n < CHART_PARAM_MAX ? d->n : CHART_PARAM_MAX;
    bool copies = false;
    for (size_t i = 0; i < n; i++) {
        hi = fmax(hi, param_bar(&d->items[i]));
        labels[i] = d->items[i].name;
        copies = copies || d->items[i].copies > 1;
    }
    struct legend_item leg[6];
    struct frame_spec s = {
        .title = d->title,
        .legend = leg,
        .n_legend = params_legend(d->items, n, leg),
        .y_title = "parameters (units of h\xc2\xb2)",
        .y_lo = 0,
        .y_hi = hi * 1.12,
        .y_max_ticks = 5,
        .x_label_h = TICK_PT * 2.4 + 4,
    };
    /* With many copies the whole layer's panel takes the right of the chart; the title and
     * the legend span all of it. */
    double top = y, panel_w = copies ? fmin(SHARE_PANEL_W, w * 0.3) : 0;
    if (copies) {
        if (d->title) {
            double size = fit(c, d->title, TITLE_PT, w);
            text(c, x + w / 2, top + size, size, CANVAS_ALIGN_CENTER, d->title);
            top += size + GAP + 2;
        }
        double left = frame_plot_left(c, x, &s);
        double lh = legend(c, left, top, x + w - left, s.legend, s.n_legend, true);
        top += lh + (lh > 0 ? GAP : 0);
        s.title = NULL;
        s.n_legend = 0;
    }
    struct frame f;
    frame_begin(&f, c, x, top, w - panel_w, h - (top - y), &s);
    double slot = n ? f.pw / (double)n : f.pw, bw = fmin(slot * 0.6, 40);
    char buf[32];
    frame_clip(&f);
    for (size_t i = 0; i < n; i++) {
        double cx = f.px + slot * ((double)i + 0.5), v = param_bar(&d->items[i]);
        double top_y = map_y(&f, v);
        draw_rect(c, param_colour(d->items[i].group), cx - bw / 2, top_y, bw, map_y(&f, 0) - top_y);
        snprintf(buf, sizeof buf, v < 0.1 ? "%.3f" : "%.2f", v);
        text(c, cx, top_y - 2.5, fit(c, buf, TICK_PT, slot - 2), CANVAS_ALIGN_CENTER, buf);
        if (d->items[i].copies > 1)
            params_copies_label(&f, &d->items[i], cx, top_y, slot);
    }
    frame_end(&f, false, geom);
    double size = category_size(c, labels, n, slot);
    for (size_t i = 0; i < n; i++)
        category_label(&f, f.px + slot * ((double)i + 0.5), size, labels[i]);
    if (copies)
        params_share_panel(&f, x + w - panel_w, panel_w, d);
}

/* ---------------------------------------------------------------- search: every layout */

static const struct canvas_rgb FITS = {0.13, 0.55, 0.33};
static const struct canvas_rgb OOM = {0.70, 0.70, 0.70};

void chart_scatter_init(struct chart_scatter *s, double min_s, double max_s, double max_bytes,
                        uint64_t gpu_bytes)
{
    memset(s, 0, sizeof *s);
    if (!(min_s > 0) || !isfinite(min_s))
        min_s = 1;
    if (!(max_s >= min_s) || !isfinite(max_s))
        max_s = min_s;
    /* A margin of 3% of the axis at both ends keeps the extreme marks whole inside the plot. */
    s->x_log = max_s > CHART_SCATTER_LOG * min_s;
    if (s->x_log) {
        double pad = pow(max_s / min_s, 0.03);
        s->x_lo = min_s / pad;
        s->x_hi = max_s * pad;
    } else {
        double span = max_s > min_s ? max_s - min_s : 0.2 * max_s;
        s->x_lo = fmax(0, min_s - 0.03 * span);
        s->x_hi = max_s + 0.03 * span;
    }
    double gpu = (double)gpu_bytes, hi = fmax(max_bytes, gpu);
    if (gpu > 0 && hi > CHART_BARS_BREAK * gpu) {
        s->y_hi = gpu * 1.06;
        s->y_top = hi;
    } else {
        s->y_hi = (hi > 0 ? hi : 1) * 1.06;
    }
}

/* The cell of a value: its column (its share of the x axis) or its row (of the y axis, the
 * lower part of a broken axis taking the rows below the gap as the chart draws it). */
static size_t scatter_slot(double share, size_t n)
{
    if (!(share > 0))
        return 0;
    double i = floor(share * (double)n);
    return i >= (double)n ? n - 1 : (size_t)i;
}

static size_t scatter_col(const struct chart_scatter *s, double x)
{
    if (s->x_log)
        return scatter_slot(x > 0 ? log(x / s->x_lo) / log(s->x_hi / s->x_lo) : 0,
                            CHART_SCATTER_COLS);
    return scatter_slot((x - s->x_lo) / (s->x_hi - s->x_lo), CHART_SCATTER_COLS);
}

static size_t scatter_row(const struct chart_scatter *s, double y)
{
    if (s->y_top <= 0)
        return scatter_slot(y / s->y_hi, CHART_SCATTER_ROWS);
    double rows = CHART_SCATTER_ROWS, low = rows * (1 - BREAK_UPPER);
    double at = y <= s->y_hi ? y / s->y_hi * low
                             : low + (y - s->y_hi) / (s->y_top - s->y_hi) * (rows - low);
    return scatter_slot(at / rows, CHART_SCATTER_ROWS);
}

/* Whether layout (x, y) comes before (x0, y0): faster, or as fast with a lower peak. */
static bool scatter_before(double x, double y, double x0, double y0)
{
    return x < x0 || (x == x0 && y < y0);
}

void chart_scatter_add(struct chart_scatter *s, double step_s, uint64_t peak_bytes, bool fits)
{
    double y = (double)peak_bytes;
    struct chart_scatter_cell *cell = &s->cells[fits][scatter_row(s, y)][scatter_col(s, step_s)];
    if (cell->count == 0)
        s->marks++;
    if (cell->count == 0 || scatter_before(step_s, y, cell->x_s, cell->y_bytes)) {
        cell->x_s = step_s;
        cell->y_bytes = y;
    }
    cell->count++;
    s->n[fits]++;
    if (fits && (!s->best || scatter_before(step_s, y, s->best_x_s, s->best_y_bytes))) {
        s->best = true;
        s->best_x_s = step_s;
        s->best_y_bytes = y;
    }
}

/* The marks of one class, as one path: a square at each cell's fastest layout, 1.8 pt for one
 * layout, growing with the logarithm of the count up to 3.8 pt. */
static void scatter_marks(struct frame *f, const struct chart_scatter *s, int fits, double unit)
{
    struct canvas *c = f->c;
    bool any = false;
    for (size_t r = 0; r < CHART_SCATTER_ROWS; r++)
        for (size_t k = 0; k < CHART_SCATTER_COLS; k++) {
            const struct chart_scatter_cell *cell = &s->cells[fits][r][k];
            if (cell->count == 0)
                continue;
            if (!any)
                fill_rgb(c, fits ? FITS : OOM);
            any = true;
            double side = fmin(1.8 + 0.5 * log10((double)cell->count), 3.8);
            c->ops->rect(c, map_x(f, cell->x_s) - side / 2,
                         map_y(f, cell->y_bytes / unit) - side / 2, side, side);
        }
    if (any)
        c->ops->fill(c);
}

void chart_layouts_draw(struct canvas *c, double x, double y, double w, double h,
                        const struct chart_layouts *d, struct chart_geom *geom)
{
    const struct chart_scatter *s = d->scatter;
    double unit = units_bytes(d->units);
    struct legend_item leg[5];
    size_t n_leg = 0;
    if (s->n[1] > 0)
        leg[n_leg++] = (struct legend_item){LEG_BOX, FITS, d->fits_label};
    if (s->n[0] > 0)
        leg[n_leg++] = (struct legend_item){LEG_BOX, OOM, d->oom_label};
    if (s->best)
        leg[n_leg++] = (struct legend_item){LEG_DOT, MAGENTA, d->best_label};
    leg[n_leg++] = (struct legend_item){LEG_LINE, LINE_GPU, d->gpu_label};
    leg[n_leg++] = (struct legend_item){LEG_DASH, LINE_GPU, d->budget_label};
    struct frame_spec spec = {
        .title = d->title,
        .legend = leg,
        .n_legend = n_leg,
        .y_title = d->y_title,
        .x_title = d->x_title,
        .y_lo = 0,
        .y_hi = s->y_hi / unit,
        .y_max_ticks = s->y_top > 0 ? 5 : 6,
        .x_numeric = true,
        .x_log = s->x_log,
        .x_lo = s->x_lo,
        .x_hi = s->x_hi,
        .x_max_ticks = 8,
        .y_top = s->y_top / unit,
    };
    struct frame f;
    frame_begin(&f, c, x, y, w, h, &spec);
    frame_clip(&f);
    scatter_marks(&f, s, 0, unit);
    scatter_marks(&f, s, 1, unit);
    hline(&f, (double)d->gpu_bytes / unit, LINE_GPU, 1.2, 0);
    hline(&f, (double)d->gpu_bytes * (1 - d->reserve) / unit, LINE_GPU, 1.2, 4);
    if (s->best)
        diamond(c, MAGENTA, map_x(&f, s->best_x_s), map_y(&f, s->best_y_bytes / unit), 4);
    frame_end(&f, false, geom);
    frame_break_marks(&f);
}

/* ---------------------------------------------------------------- search: the tp x pp map */

void chart_map_init(struct chart_map *m)
{
    memset(m, 0, sizeof *m);
}

/* The place of v in the increasing list vals[0..n): its index, or where it would go. */
static size_t map_find(const uint64_t *vals, size_t n, uint64_t v, bool *found)
{
    size_t i = 0;
    while (i < n && vals[i] < v)
        i++;
    *found = i < n && vals[i] == v;
    return i;
}

/* Opens row r of the grid for pp value v: the rows from r on move up one. */
static void map_open_row(struct chart_map *m, size_t r, uint64_t v)
{
    size_t n = m->n_pp - r;
    memmove(m->pp + r + 1, m->pp + r, n * sizeof *m->pp);
    memmove(m->tried + r + 1, m->tried + r, n * sizeof *m->tried);
    memmove(m->fit + r + 1, m->fit + r, n * sizeof *m->fit);
    memmove(m->best_s + r + 1, m->best_s + r, n * sizeof *m->best_s);
    memset(m->tried[r], 0, sizeof *m->tried);
    memset(m->fit[r], 0, sizeof *m->fit);
    memset(m->best_s[r], 0, sizeof *m->best_s);
    m->pp[r] = v;
    m->n_pp++;
}

/* Opens column k of the grid for tp value v: the columns from k on move right one. */
static void map_open_col(struct chart_map *m, size_t k, uint64_t v)
{
    size_t n = m->n_tp - k;
    memmove(m->tp + k + 1, m->tp + k, n * sizeof *m->tp);
    for (size_t r = 0; r < m->n_pp; r++) {
        memmove(&m->tried[r][k + 1], &m->tried[r][k], n * sizeof m->tried[r][k]);
        memmove(&m->fit[r][k + 1], &m->fit[r][k], n * sizeof m->fit[r][k]);
        memmove(&m->best_s[r][k + 1], &m->best_s[r][k], n * sizeof m->best_s[r][k]);
        m->tried[r][k] = m->fit[r][k] = 0;
        m->best_s[r][k] = 0;
    }
    m->tp[k] = v;
    m->n_tp++;
}

void chart_map_add(struct chart_map *m, uint64_t tp, uint64_t pp, double step_s, bool fits)
{
    bool has_r, has_k;
    size_t r = map_find(m->pp, m->n_pp, pp, &has_r), k = map_find(m->tp, m->n_tp, tp, &has_k);
    if ((!has_r && m->n_pp == CHART_MAP_MAX) || (!has_k && m->n_tp == CHART_MAP_MAX)) {
        m->left_out++;
        return;
    }
    if (!has_r)
        map_open_row(m, r, pp);
    if (!has_k)
        map_open_col(m, k, tp);
    m->tried[r][k]++;
    if (!fits)
        return;
    if (m->fit[r][k] == 0 || step_s < m->best_s[r][k])
        m->best_s[r][k] = step_s;
    m->fit[r][k]++;
}

/* The colour scale of the map, fastest first: dark blue to pale blue. */
static const struct canvas_rgb MAP_SCALE[CHART_MAP_STEPS] = {{0.08, 0.25, 0.52},
                                                             {0.19, 0.42, 0.70},
                                                             {0.40, 0.60, 0.83},
                                                             {0.64, 0.78, 0.92},
                                                             {0.85, 0.91, 0.97}};
static const struct canvas_rgb MAP_OOM = {0.97, 0.86, 0.86};
static const struct canvas_rgb MAP_OOM_TEXT = {0.60, 0.15, 0.15};
#define MAP_DARK_STEPS 2    /* the first steps of the scale, dark enough for white text */
#define CHART_MAP_MIN_W 360 /* pt: the narrowest map, its legend on one or two rows */
#define CHART_MAP_MIN_ROWS 4

/* The fastest and the slowest cell's step time; false when no layout fits. */
static bool map_range(const struct chart_map *m, double *lo, double *hi)
{
    bool any = false;
    for (size_t r = 0; r < m->n_pp; r++)
        for (size_t k = 0; k < m->n_tp; k++) {
            if (m->fit[r][k] == 0)
                continue;
            double v = m->best_s[r][k];
            *lo = any ? fmin(*lo, v) : v;
            *hi = any ? fmax(*hi, v) : v;
            any = true;
        }
    return any;
}

/* The steps of the scale: CHART_MAP_STEPS, or one when every cell is as fast. */
static size_t map_steps(double lo, double hi)
{
    return lo > 0 && hi > lo * (1 + 1e-9) ? CHART_MAP_STEPS : 1;
}

/* The step of the scale of step time v: even in log time from lo to hi. */
static size_t map_step(double v, double lo, double hi, size_t steps)
{
    return steps > 1 ? scatter_slot(log(v / lo) / log(hi / lo), steps) : 0;
}

/* The colour of step i of a scale of `steps`: one step takes the scale's second colour. */
static size_t map_colour(size_t i, size_t steps)
{
    return steps > 1 ? i : 1;
}

double chart_map_height(const struct chart_map *m)
{
    /* Four rows' height at least: room for the pp axis's title beside the plot. */
    size_t rows = m->n_pp > CHART_MAP_MIN_ROWS ? m->n_pp : CHART_MAP_MIN_ROWS;
    return 72 + (double)rows * CHART_MAP_ROW_PT;
}

/* The legend: each step of the scale labelled with its slowest time ("≤ 1.25 s"), then the
 * cells that do not fit when there are any. Returns the number of items. */
static size_t map_legend(const struct chart_tp_pp *d, double lo, double hi, size_t steps,
                         char (*labels)[40], struct legend_item *leg)
{
    const struct chart_map *m = d->map;
    size_t n = 0;
    for (size_t i = 0; i < steps; i++) {
        double edge = steps > 1 ? lo * pow(hi / lo, (double)(i + 1) / (double)steps) : lo;
        char t[32];
        numfmt_seconds(t, sizeof t, edge);
        snprintf(labels[i], sizeof labels[0], "\xe2\x89\xa4 %s", t);
        leg[n++] = (struct legend_item){LEG_BOX, MAP_SCALE[map_colour(i, steps)], labels[i]};
    }
    bool oom = false;
    for (size_t r = 0; r < m->n_pp; r++)
        for (size_t k = 0; k < m->n_tp; k++)
            oom = oom || (m->tried[r][k] > 0 && m->fit[r][k] == 0);
    if (oom)
        leg[n++] = (struct legend_item){LEG_BOX, MAP_OOM, d->oom_label};
    return n;
}

/* One cell, its top-left corner (x, y), cw x ch: its colour and its text. */
static void map_cell(struct frame *f, const struct chart_tp_pp *d, size_t r, size_t k, double x,
                     double y, double cw, double ch, double lo, double hi, size_t steps)
{
    const struct chart_map *m = d->map;
    struct canvas *c = f->c;
    if (m->tried[r][k] == 0)
        return; /* no such split */
    char t[32];
    const char *label = t;
    struct canvas_rgb fill = MAP_OOM, ink = MAP_OOM_TEXT;
    if (m->fit[r][k] == 0) {
        label = d->oom_label;
    } else {
        size_t i = map_colour(map_step(m->best_s[r][k], lo, hi, steps), steps);
        fill = MAP_SCALE[i];
        ink = i < MAP_DARK_STEPS ? (struct canvas_rgb){1, 1, 1} : TEXT;
        numfmt_seconds(t, sizeof t, m->best_s[r][k]);
    }
    draw_rect(c, fill, x + 1, y + 1, cw - 2, ch - 2);
    double size = fmin(fit(c, label, TICK_PT, cw - 6), ch - 6);
    if (size >= MIN_PT)
        draw_text(c, ink, x + cw / 2, y + ch / 2 + size * 0.36, size, CANVAS_ALIGN_CENTER, label);
}

void chart_map_draw(struct canvas *c, double x, double y, double w, double h,
                    const struct chart_tp_pp *d, struct chart_geom *geom)
{
    const struct chart_map *m = d->map;
    /* Cells no wider than CHART_MAP_COL_PT: a narrower chart, centred in the rectangle. */
    double want = fmax(CHART_MAP_MIN_W, 70 + (double)m->n_tp * CHART_MAP_COL_PT);
    if (w > want) {
        x += (w - want) / 2;
        w = want;
    }
    double lo = 0, hi = 0;
    size_t steps = map_range(m, &lo, &hi) ? map_steps(lo, hi) : 0;
    char labels[CHART_MAP_STEPS][40];
    struct legend_item leg[CHART_MAP_STEPS + 1];
    size_t n_leg = map_legend(d, lo, hi, steps, labels, leg);
    char buf[32];
    double left_w = 0;
    for (size_t r = 0; r < m->n_pp; r++) {
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)m->pp[r]);
        left_w = fmax(left_w, c->ops->text_width(c, TICK_PT, buf));
    }
    struct frame_spec spec = {
        .title = d->title,
        .legend = leg,
        .n_legend = n_leg,
        .y_title = d->y_title,
        .x_title = d->x_title,
        .y_lo = 0,
        .y_hi = 1,
        .y_max_ticks = 1,
        .x_label_h = TICK_PT * 1.3 + 4,
        .left_w = left_w > 0 ? left_w : TICK_PT,
    };
    struct frame f;
    frame_begin(&f, c, x, y, w, h, &spec);
    double cw = m->n_tp ? f.pw / (double)m->n_tp : f.pw;
    double ch = m->n_pp ? f.ph / (double)m->n_pp : f.ph;
    frame_clip(&f);
    size_t best_r = 0, best_k = 0;
    bool best = false;
    for (size_t r = 0; r < m->n_pp; r++) /* pp grows upwards, as on a y axis */
        for (size_t k = 0; k < m->n_tp; k++) {
            map_cell(&f, d, r, k, f.px + cw * (double)k, f.py + f.ph - ch * (double)(r + 1), cw, ch,
                     lo, hi, steps);
            if (m->fit[r][k] > 0 && (!best || m->best_s[r][k] < m->best_s[best_r][best_k])) {
                best = true;
                best_r = r;
                best_k = k;
            }
        }
    if (best) { /* the fastest of all, outlined as the scatter marks it */
        draw_stroke_style(c, MAGENTA, 1.6, 0);
        c->ops->rect(c, f.px + cw * (double)best_k + 1, f.py + f.ph - ch * (double)(best_r + 1) + 1,
                     cw - 2, ch - 2);
        c->ops->stroke(c);
    }
    frame_end(&f, false, geom);
    for (size_t k = 0; k < m->n_tp; k++) {
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)m->tp[k]);
        category_label(&f, f.px + cw * ((double)k + 0.5), TICK_PT, buf);
    }
    for (size_t r = 0; r < m->n_pp; r++) {
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)m->pp[r]);
        text(c, f.px - GAP, f.py + f.ph - ch * ((double)r + 0.5) + TICK_PT * 0.36, TICK_PT,
             CANVAS_ALIGN_RIGHT, buf);
    }
}
