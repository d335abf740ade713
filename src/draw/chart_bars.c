/* chart_bars: see chart.h (does it fit: the stacked bars, and the same bars for a step's phases).
 */
#include "draw/chart.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/numfmt.h"
#include "draw/chart_frame.h"
#include "draw/draw.h"

/* ---------------------------------------------------------------- does it fit: stacked bars */

/* The total over a bar; raised above a line it would cross. */
static void bar_value(struct frame *f, double cx, double v, const double *lines, size_t n_lines,
                      double unit)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.1f", v / unit);
    double base = chart_frame_y(f, v) - 2;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n_lines; i++) {
            double ly = chart_frame_y(f, lines[i]);
            if (base + LABEL_PT * 0.25 >= ly - 1.5 && base - LABEL_PT * 0.8 <= ly + 1.5)
                base = ly - 2 - LABEL_PT * 0.25;
        }
    chart_text(f->c, cx, base, LABEL_PT, CANVAS_ALIGN_CENTER, buf);
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
    /* As the tables say them: the GPU's memory (numfmt_gpu_mem: 80 GB, 85.5 GB as an H100
     * reports itself) and the budget (numfmt_size: 68.0 GB, as model_budget_bytes rounds it). */
    char gpu[32], left[32];
    numfmt_gpu_mem(gpu, sizeof gpu, d->gpu_bytes, d->units);
    double budget = nearbyint((double)d->gpu_bytes * (1 - d->reserve));
    numfmt_size(left, sizeof left, budget > 0 ? (uint64_t)budget : 0, d->units);
    snprintf(lb->gpu, sizeof lb->gpu, "GPU memory %s", gpu);
    snprintf(lb->reserve, sizeof lb->reserve, "%.0f%% kept free: %s", d->reserve * 100, left);
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
    double y0 =
        upper ? f->py + f->up_h - (lo - f->y1) / (f->up1 - f->y1) * f->up_h : chart_frame_y(f, lo);
    double y1 = chart_frame_y(f, hi);
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
    double top = chart_frame_y(f, v);
    draw_stroke_style(f->c, AXIS, 1.2, 0);
    f->c->ops->rect(f->c, cx - bw / 2, top, bw, chart_frame_y(f, 0) - top);
    f->c->ops->stroke(f->c);
    if (!d->peak_label)
        return;
    /* Over the value label, which bar_value may have raised above a line it would cross. */
    double base = top - 2;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n_lines; i++) {
            double ly = chart_frame_y(f, lines[i]);
            if (base + LABEL_PT * 0.25 >= ly - 1.5 && base - LABEL_PT * 0.8 <= ly + 1.5)
                base = ly - 2 - LABEL_PT * 0.25;
        }
    double size = chart_fit(f->c, d->peak_label, TICK_PT, slot - 2);
    chart_text(f->c, cx, base - LABEL_PT - 1.5, size, CANVAS_ALIGN_CENTER, d->peak_label);
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
    chart_frame_begin(&f, c, x, y, w, h, &s);
    double slot = n ? f.pw / (double)n : f.pw;
    double lines[2] = {(double)d->gpu_bytes / unit, budget / unit};
    double bw = fmin(slot * 0.6, 56);
    chart_frame_clip(&f);
    bars_apart(&f, d, slot);
    bars_stacks(&f, d, slot, bw, unit);
    chart_hline(&f, lines[0], LINE_GPU, 1.2, 0);
    chart_hline(&f, lines[1], LINE_GPU, 1.2, 4);
    for (size_t i = 0; i < n; i++)
        bar_value(&f, f.px + slot * ((double)i + 0.5), (double)bar_total(d, i) / unit, lines, 2, 1);
    bars_mark(&f, d, slot, bw, unit, lines, 2);
    chart_frame_end(&f, false, geom);
    chart_frame_break_marks(&f);
    double size = chart_category_size(c, d->labels, n, slot);
    for (size_t i = 0; i < n; i++)
        chart_category_label(&f, f.px + slot * ((double)i + 0.5), size, d->labels[i]);
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
