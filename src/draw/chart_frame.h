/*
 * chart_frame: what the charts of chart.h share to lay themselves out, not public (only the
 * chart_*.c files include it): the sizes of their text, the colours of their axes, text and
 * lines, text that fits, the legend (above the plot, never over the data), the frame - title,
 * legend, axes with nice ticks and their titles, a broken y axis, the plot area that clips the
 * data - with the mapping of values to points in it, and the category labels under a plot.
 * Pure as the charts are: no I/O, no allocation, no globals.
 */
#ifndef MEMFIT_CHART_FRAME_H
#define MEMFIT_CHART_FRAME_H

#include <stdbool.h>
#include <stddef.h>

#include "draw/canvas.h"
#include "draw/chart.h"

#define TITLE_PT 10.0
#define LABEL_PT 8.0
#define TICK_PT 7.5
#define LEGEND_PT 7.5
#define GAP 4.0
#define TICK_LEN 3.0
#define MIN_PT 5.5

static const struct canvas_rgb AXIS = {0.25, 0.25, 0.25};
static const struct canvas_rgb TEXT = {0.1, 0.1, 0.1};
static const struct canvas_rgb LINE_GPU = {0.1, 0.1, 0.1};
static const struct canvas_rgb MAGENTA = {0.80, 0.10, 0.55};
static const struct canvas_rgb ORANGE = {0.96, 0.55, 0.13};

/* ---------------------------------------------------------------- drawing helpers */

void chart_fill_rgb(struct canvas *c, struct canvas_rgb rgb);

/* A size no larger than size_pt at which `s` is at most max_w wide. */
double chart_fit(struct canvas *c, const char *s, double size_pt, double max_w);

/* Text in the charts' text colour. */
void chart_text(struct canvas *c, double x, double y, double size, enum canvas_align a,
                const char *s);

void chart_diamond(struct canvas *c, struct canvas_rgb rgb, double cx, double cy, double r);

/* ---------------------------------------------------------------- legend */

enum legend_kind { LEG_BOX, LEG_LINE, LEG_DASH, LEG_DOT, LEG_STRIP };

struct legend_item {
    enum legend_kind kind;
    struct canvas_rgb rgb;
    const char *label;
};

/* Lays the items out in rows from (x, y) within width w; draws them when `draw`. Returns the
 * height used. */
double chart_legend(struct canvas *c, double x, double y, double w, const struct legend_item *it,
                    size_t n, bool draw);

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

#define BREAK_GAP 7.0   /* pt between the two parts of a broken axis */
#define BREAK_UPPER 0.3 /* their upper part's share of the plot */

/* The point of value v on the x axis, and on the y axis (across the gap of a broken one). */
double chart_frame_x(const struct frame *f, double v);
double chart_frame_y(const struct frame *f, double v);

/* The left edge of the plot area of a chart at x: the y axis's title and tick labels (or the
 * categories' labels) left of it. */
double chart_frame_plot_left(struct canvas *c, double x, const struct frame_spec *s);

/* Lays the chart out in (x, y, w, h): the title on top, the legend under it, the plot area
 * inside the margins its tick labels and axis titles need; then draws all but the data. */
void chart_frame_begin(struct frame *f, struct canvas *c, double x, double y, double w, double h,
                       const struct frame_spec *s);

/* Clips the data to the plot area (until chart_frame_end). */
void chart_frame_clip(struct frame *f);

/* Ends the clip and draws the axis lines over the data. */
void chart_frame_end(struct frame *f, bool right_axis, struct chart_geom *geom);

/* The marks of a broken axis: the gap cut out of the y axis, two slanted strokes at its edges. */
void chart_frame_break_marks(struct frame *f);

/* A horizontal line at value v across the plot. */
void chart_hline(struct frame *f, double v, struct canvas_rgb rgb, double width, double dash);

/* ---------------------------------------------------------------- category labels */

/* Category labels under a plot: the largest common size at which every line fits a slot. */
double chart_category_size(struct canvas *c, const char *const *labels, size_t n, double slot);

/* One category's label (one '\n' allowed for a second line), centred on cx under the plot. */
void chart_category_label(struct frame *f, double cx, double size, const char *label);

#endif
