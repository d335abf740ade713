/* chart_layer: see chart.h (one layer: its activations walked operation by operation, its
 * parameters matrix by matrix). */
#include "draw/chart.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "draw/chart_frame.h"
#include "draw/draw.h"

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
    double x0 = chart_frame_x(f, from), x1 = fmax(chart_frame_x(f, to), x0 + 1.5);
    draw_rect(c, rgb, x0, cy - rw->bar_h / 2, x1 - x0, rw->bar_h);
    char buf[64];
    walk_number(op->units, "+", buf, sizeof buf);
    if (op->unit != CHART_WALK_SBH) {
        size_t len = strlen(buf);
        snprintf(buf + len, sizeof buf - len, " %s", walk_unit_name(op->unit));
    }
    chart_text(c, x1 + 3, cy + rw->size * 0.36, rw->size, CANVAS_ALIGN_LEFT, buf);
}

/* The total row: both running totals, sbh above as²b. */
static void walk_total_row(struct frame *f, const struct walk_rows *rw, double cy, double sbh,
                           double core)
{
    struct canvas *c = f->c;
    double bar_h = rw->bar_h;
    draw_rect(c, ORANGE, f->px, cy - bar_h / 2, chart_frame_x(f, sbh) - f->px,
              core > 0 ? bar_h / 2 : bar_h);
    if (core > 0)
        draw_rect(c, MAGENTA, f->px, cy, chart_frame_x(f, core) - f->px, bar_h / 2);
    char buf[64];
    walk_total_label(sbh, core, buf, sizeof buf);
    chart_text(c, chart_frame_x(f, fmax(sbh, core)) + 3, cy + rw->size * 0.36, rw->size,
               CANVAS_ALIGN_LEFT, buf);
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
    chart_frame_begin(&f, c, x, y, w, h, &s);
    struct walk_rows rw;
    rw.row_h = f.ph / (double)(d->n + 1);
    rw.bar_h = fmin(rw.row_h * 0.62, 12);
    rw.size = fmin(TICK_PT, rw.row_h * 0.8);
    chart_frame_clip(&f);
    walk_bars(&f, &rw, d);
    chart_frame_end(&f, false, geom);
    for (size_t i = 0; i <= d->n; i++) {
        const char *name = i < d->n ? d->ops[i].name : "total";
        chart_text(c, f.px - GAP, f.py + rw.row_h * ((double)i + 0.5) + rw.size * 0.36, rw.size,
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
    double size = chart_fit(f->c, buf, TICK_PT, slot - 2);
    double bar_h = chart_frame_y(f, 0) - top;
    if (bar_h >= size + 5)
        draw_text(f->c, (struct canvas_rgb){1, 1, 1}, cx, top + size + 1.5, size,
                  CANVAS_ALIGN_CENTER, buf);
    else
        chart_text(f->c, cx, top - 2.5 - TICK_PT - 1.5, size, CANVAS_ALIGN_CENTER, buf);
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
    chart_text(c, bx, f->py + size, size, CANVAS_ALIGN_LEFT, "whole layer");
    snprintf(buf, sizeof buf, "%.1f h\xc2\xb2", total);
    chart_text(c, bx, f->py + size + lead, size, CANVAS_ALIGN_LEFT, buf);
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
    double ls =
        fmin(chart_fit(c, "routed experts", size, lw), chart_fit(c, "everything else", size, lw));
    double rest_y = y0 + ls;
    snprintf(buf, sizeof buf, "%.1f%%", 100 * (total - routed) / total);
    chart_text(c, lx, rest_y, ls, CANVAS_ALIGN_LEFT, "everything else");
    chart_text(c, lx, rest_y + ls * 1.15, ls, CANVAS_ALIGN_LEFT, buf);
    double mid = y1 - routed / total * bh / 2;
    double routed_y = fmin(fmax(mid - ls * 0.2, rest_y + ls * 2.6), y1 - ls * 1.2);
    snprintf(buf, sizeof buf, "%.1f%%", 100 * routed / total);
    chart_text(c, lx, routed_y, ls, CANVAS_ALIGN_LEFT, "routed experts");
    chart_text(c, lx, routed_y + ls * 1.15, ls, CANVAS_ALIGN_LEFT, buf);
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
            double size = chart_fit(c, d->title, TITLE_PT, w);
            chart_text(c, x + w / 2, top + size, size, CANVAS_ALIGN_CENTER, d->title);
            top += size + GAP + 2;
        }
        double left = chart_frame_plot_left(c, x, &s);
        double lh = chart_legend(c, left, top, x + w - left, s.legend, s.n_legend, true);
        top += lh + (lh > 0 ? GAP : 0);
        s.title = NULL;
        s.n_legend = 0;
    }
    struct frame f;
    chart_frame_begin(&f, c, x, top, w - panel_w, h - (top - y), &s);
    double slot = n ? f.pw / (double)n : f.pw, bw = fmin(slot * 0.6, 40);
    char buf[32];
    chart_frame_clip(&f);
    for (size_t i = 0; i < n; i++) {
        double cx = f.px + slot * ((double)i + 0.5), v = param_bar(&d->items[i]);
        double top_y = chart_frame_y(&f, v);
        draw_rect(c, param_colour(d->items[i].group), cx - bw / 2, top_y, bw,
                  chart_frame_y(&f, 0) - top_y);
        snprintf(buf, sizeof buf, v < 0.1 ? "%.3f" : "%.2f", v);
        chart_text(c, cx, top_y - 2.5, chart_fit(c, buf, TICK_PT, slot - 2), CANVAS_ALIGN_CENTER,
                   buf);
        if (d->items[i].copies > 1)
            params_copies_label(&f, &d->items[i], cx, top_y, slot);
    }
    chart_frame_end(&f, false, geom);
    double size = chart_category_size(c, labels, n, slot);
    for (size_t i = 0; i < n; i++)
        chart_category_label(&f, f.px + slot * ((double)i + 0.5), size, labels[i]);
    if (copies)
        params_share_panel(&f, x + w - panel_w, panel_w, d);
}
