/* chart_search: see chart.h (memfit search: the scatter of every layout, the tp x pp map). */
#include "draw/chart.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/numfmt.h"
#include "draw/chart_frame.h"
#include "draw/draw.h"

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
                chart_fill_rgb(c, fits ? FITS : OOM);
            any = true;
            double side = fmin(1.8 + 0.5 * log10((double)cell->count), 3.8);
            c->ops->rect(c, chart_frame_x(f, cell->x_s) - side / 2,
                         chart_frame_y(f, cell->y_bytes / unit) - side / 2, side, side);
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
    chart_frame_begin(&f, c, x, y, w, h, &spec);
    chart_frame_clip(&f);
    scatter_marks(&f, s, 0, unit);
    scatter_marks(&f, s, 1, unit);
    chart_hline(&f, (double)d->gpu_bytes / unit, LINE_GPU, 1.2, 0);
    chart_hline(&f, (double)d->gpu_bytes * (1 - d->reserve) / unit, LINE_GPU, 1.2, 4);
    if (s->best)
        chart_diamond(c, MAGENTA, chart_frame_x(&f, s->best_x_s),
                      chart_frame_y(&f, s->best_y_bytes / unit), 4);
    chart_frame_end(&f, false, geom);
    chart_frame_break_marks(&f);
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
    double size = fmin(chart_fit(c, label, TICK_PT, cw - 6), ch - 6);
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
    chart_frame_begin(&f, c, x, y, w, h, &spec);
    double cw = m->n_tp ? f.pw / (double)m->n_tp : f.pw;
    double ch = m->n_pp ? f.ph / (double)m->n_pp : f.ph;
    chart_frame_clip(&f);
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
    chart_frame_end(&f, false, geom);
    for (size_t k = 0; k < m->n_tp; k++) {
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)m->tp[k]);
        chart_category_label(&f, f.px + cw * ((double)k + 0.5), TICK_PT, buf);
    }
    for (size_t r = 0; r < m->n_pp; r++) {
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)m->pp[r]);
        chart_text(c, f.px - GAP, f.py + f.ph - ch * ((double)r + 0.5) + TICK_PT * 0.36, TICK_PT,
                   CANVAS_ALIGN_RIGHT, buf);
    }
}
