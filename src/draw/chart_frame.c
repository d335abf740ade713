/* chart_frame: see chart_frame.h. Layout: title, legend, plot with axes; data clipped to the plot.
 */
#include "draw/chart_frame.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "draw/chart.h"
#include "draw/draw.h"

static const struct canvas_rgb GRID = {0.88, 0.88, 0.88};

/* ---------------------------------------------------------------- ticks */

/* The power of ten a tick of a log axis is written in: 10^floor(log10 v) (0.02: 0.01). */
static double log_tick_unit(double v)
{
    return pow(10, floor(log10(v) + 1e-9));
}

/* ---------------------------------------------------------------- drawing helpers */

void chart_fill_rgb(struct canvas *c, struct canvas_rgb rgb)
{
    c->ops->set_fill(c, rgb);
}

double chart_fit(struct canvas *c, const char *s, double size_pt, double max_w)
{
    double w = c->ops->text_width(c, size_pt, s);
    if (w <= max_w || w <= 0)
        return size_pt;
    /* Quarter-point steps: fewer distinct sizes, fewer font subsets in SVG and PDF files. */
    double f = floor(size_pt * max_w / w * 4) / 4;
    return f < MIN_PT ? MIN_PT : f;
}

void chart_text(struct canvas *c, double x, double y, double size, enum canvas_align a,
                const char *s)
{
    draw_text(c, TEXT, x, y, size, a, s);
}

void chart_diamond(struct canvas *c, struct canvas_rgb rgb, double cx, double cy, double r)
{
    chart_fill_rgb(c, rgb);
    c->ops->move_to(c, cx, cy - r);
    c->ops->line_to(c, cx + r, cy);
    c->ops->line_to(c, cx, cy + r);
    c->ops->line_to(c, cx - r, cy);
    c->ops->close_path(c);
    c->ops->fill(c);
}

/* ---------------------------------------------------------------- legend */

#define SWATCH_W 14.0

double chart_legend(struct canvas *c, double x, double y, double w, const struct legend_item *it,
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
                chart_diamond(c, it[i].rgb, cx + SWATCH_W / 2, mid, 3.5);
            } else if (it[i].kind == LEG_STRIP) {
                draw_rect(c, it[i].rgb, cx, mid + 1, SWATCH_W, 3.5);
            } else {
                draw_stroke_style(c, it[i].rgb, 1.5, it[i].kind == LEG_DASH ? 3 : 0);
                draw_line(c, cx, mid, cx + SWATCH_W, mid);
            }
            chart_text(c, cx + SWATCH_W + 3, mid + LEGEND_PT * 0.36, LEGEND_PT, CANVAS_ALIGN_LEFT,
                       it[i].label);
        }
        cx += iw + 10;
    }
    return cy + row_h - y;
}

/* ---------------------------------------------------------------- frame: title, legend, axes */

double chart_frame_x(const struct frame *f, double v)
{
    if (f->x_log)
        return v > 0 ? f->px + log(v / f->x0) / log(f->x1 / f->x0) * f->pw : f->px;
    return f->px + (v - f->x0) / (f->x1 - f->x0) * f->pw;
}

double chart_frame_y(const struct frame *f, double v)
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
        draw_line(c, f->px, chart_frame_y(f, f->y_ticks[i]), f->px + f->pw,
                  chart_frame_y(f, f->y_ticks[i]));
    if (s->x_numeric && s->left_w > 0)
        for (size_t i = 0; i < f->nx; i++)
            draw_line(c, chart_frame_x(f, f->x_ticks[i]), f->py, chart_frame_x(f, f->x_ticks[i]),
                      f->py + f->ph);
    for (size_t i = 0; i < f->ny && s->left_w <= 0; i++) {
        double ty = chart_frame_y(f, f->y_ticks[i]);
        draw_stroke_style(c, AXIS, 0.6, 0);
        draw_line(c, f->px - TICK_LEN, ty, f->px, ty);
        chart_format_tick(f->y_ticks[i], f->y_step, buf, sizeof buf);
        chart_text(c, f->px - TICK_LEN - 2, ty + TICK_PT * 0.36, TICK_PT, CANVAS_ALIGN_RIGHT, buf);
    }
    for (size_t i = 0; i < f->nup; i++) { /* the upper part of a broken axis */
        double ty = chart_frame_y(f, f->up_ticks[i]);
        draw_stroke_style(c, GRID, 0.5, 0);
        draw_line(c, f->px, ty, f->px + f->pw, ty);
        draw_stroke_style(c, AXIS, 0.6, 0);
        draw_line(c, f->px - TICK_LEN, ty, f->px, ty);
        chart_format_tick(f->up_ticks[i], f->up_step, buf, sizeof buf);
        chart_text(c, f->px - TICK_LEN - 2, ty + TICK_PT * 0.36, TICK_PT, CANVAS_ALIGN_RIGHT, buf);
    }
    for (size_t i = 0; i < f->ny2; i++) {
        double ty = f->py + f->ph - (f->y2_ticks[i] - f->y20) / (f->y21 - f->y20) * f->ph;
        draw_stroke_style(c, AXIS, 0.6, 0);
        draw_line(c, f->px + f->pw, ty, f->px + f->pw + TICK_LEN, ty);
        chart_format_tick(f->y2_ticks[i], f->y2_step, buf, sizeof buf);
        chart_text(c, f->px + f->pw + TICK_LEN + 2, ty + TICK_PT * 0.36, TICK_PT, CANVAS_ALIGN_LEFT,
                   buf);
    }
    for (size_t i = 0; i < f->nx; i++) {
        double tx = chart_frame_x(f, f->x_ticks[i]);
        draw_stroke_style(c, AXIS, 0.6, 0);
        draw_line(c, tx, f->py + f->ph, tx, f->py + f->ph + TICK_LEN);
        chart_format_tick(f->x_ticks[i], f->x_log ? log_tick_unit(f->x_ticks[i]) : f->x_step, buf,
                          sizeof buf);
        chart_text(c, tx, f->py + f->ph + TICK_LEN + 1 + TICK_PT * 0.8, TICK_PT,
                   CANVAS_ALIGN_CENTER, buf);
    }
}

/* The axis titles: y (and right y) rotated at the chart's edges, x at its bottom. */
static void frame_titles(struct frame *f, const struct frame_spec *s, double x, double y, double w,
                         double h)
{
    struct canvas *c = f->c;
    if (s->y_title) {
        double size = chart_fit(c, s->y_title, LABEL_PT, f->ph);
        chart_fill_rgb(c, TEXT);
        c->ops->text_vertical(c, x + size * 0.8, f->py + f->ph / 2, size, CANVAS_ALIGN_CENTER,
                              s->y_title);
    }
    if (s->y2_title) {
        double size = chart_fit(c, s->y2_title, LABEL_PT, f->ph);
        chart_fill_rgb(c, TEXT);
        c->ops->text_vertical(c, x + w - size * 0.2, f->py + f->ph / 2, size, CANVAS_ALIGN_CENTER,
                              s->y2_title);
    }
    if (s->x_title) {
        double size = chart_fit(c, s->x_title, LABEL_PT, f->pw);
        chart_text(c, f->px + f->pw / 2, y + h - size * 0.25, size, CANVAS_ALIGN_CENTER,
                   s->x_title);
    }
}

double chart_frame_plot_left(struct canvas *c, double x, const struct frame_spec *s)
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

void chart_frame_begin(struct frame *f, struct canvas *c, double x, double y, double w, double h,
                       const struct frame_spec *s)
{
    memset(f, 0, sizeof *f);
    f->c = c;
    double top = y;
    if (s->title) {
        double size = chart_fit(c, s->title, TITLE_PT, w);
        chart_text(c, x + w / 2, top + size, size, CANVAS_ALIGN_CENTER, s->title);
        top += size + GAP + 2;
    }
    double left = chart_frame_plot_left(c, x, s);
    double right = x + w - (s->y2_title ? LABEL_PT + GAP : 0);
    f->ny = chart_ticks(s->y_lo, s->y_hi, s->y_max_ticks, f->y_ticks, CHART_TICKS_MAX, &f->y_step);
    if (s->y2_title) {
        f->ny2 = chart_ticks(s->y2_lo, s->y2_hi, 3, f->y2_ticks, CHART_TICKS_MAX, &f->y2_step);
        right -= tick_labels_width(c, f->y2_ticks, f->ny2, f->y2_step) + TICK_LEN + 2;
        f->y20 = f->y2_ticks[0];
        f->y21 = f->y2_ticks[f->ny2 - 1];
    }
    /* The legend spans the plot's width, above it: never over the data. */
    double lh = chart_legend(c, left, top, right - left, s->legend, s->n_legend, true);
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

void chart_frame_clip(struct frame *f)
{
    f->c->ops->save(f->c);
    f->c->ops->rect(f->c, f->px, f->py, f->pw, f->ph);
    f->c->ops->clip(f->c);
}

void chart_frame_end(struct frame *f, bool right_axis, struct chart_geom *geom)
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

void chart_frame_break_marks(struct frame *f)
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

void chart_hline(struct frame *f, double v, struct canvas_rgb rgb, double width, double dash)
{
    draw_stroke_style(f->c, rgb, width, dash);
    draw_line(f->c, f->px, chart_frame_y(f, v), f->px + f->pw, chart_frame_y(f, v));
}

/* ---------------------------------------------------------------- category labels */

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

double chart_category_size(struct canvas *c, const char *const *labels, size_t n, double slot)
{
    double size = TICK_PT;
    char l1[64], l2[64];
    for (size_t i = 0; i < n; i++) {
        split2(labels[i], l1, l2, sizeof l1);
        double s1 = chart_fit(c, l1, TICK_PT, slot - 4), s2 = chart_fit(c, l2, TICK_PT, slot - 4);
        size = s1 < size ? s1 : size;
        size = s2 < size ? s2 : size;
    }
    return size;
}

void chart_category_label(struct frame *f, double cx, double size, const char *label)
{
    char l1[64], l2[64];
    split2(label, l1, l2, sizeof l1);
    double y = f->py + f->ph + 3 + size;
    chart_text(f->c, cx, y, size, CANVAS_ALIGN_CENTER, l1);
    if (l2[0])
        chart_text(f->c, cx, y + size * 1.15, size, CANVAS_ALIGN_CENTER, l2);
}
