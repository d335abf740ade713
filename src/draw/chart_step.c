/* chart_step: see chart.h (memory over one training step: its series and its chart). */
#include "draw/chart.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/numfmt.h"
#include "draw/chart_frame.h"
#include "draw/draw.h"

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
    double pen_x = chart_frame_x(f, t_prev), pen_y = chart_frame_y(f, base);
    c->ops->move_to(c, pen_x, pen_y);
    for (size_t i = 0; i < s->n; i++) {
        const struct chart_step_point *p = &s->points[i];
        double v = step_value(p, which);
        double x0 = chart_frame_x(f, p->t_start), y0 = chart_frame_y(f, base + prev / unit);
        /* A point that starts where the last one ended needs no segment of length 0. */
        if (x0 != pen_x || y0 != pen_y)
            c->ops->line_to(c, x0, y0);
        pen_x = chart_frame_x(f, p->t_end);
        pen_y = chart_frame_y(f, base + v / unit);
        c->ops->line_to(c, pen_x, pen_y);
        prev = v;
        t_prev = p->t_end;
    }
    c->ops->line_to(c, chart_frame_x(f, t_prev), chart_frame_y(f, base));
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
        double y0 = chart_frame_y(f, base + (double)s->spike_act_bytes / unit);
        double y1 = chart_frame_y(
            f, base + ((double)s->spike_act_bytes + (double)s->spike_logits_bytes) / unit);
        double cx = chart_frame_x(f, s->spike_t);
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
        double x0 = chart_frame_x(f, p->t_start), x1 = chart_frame_x(f, t_end);
        draw_rect(f->c, chart_recompute_colour(), x0, f->py + f->ph - STRIP_PT, x1 - x0, STRIP_PT);
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
        double w = (double)(j - i) * SPIKE_W, x = chart_frame_x(f, s->spikes[i].t) - w / 2;
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
                    double y0 = chart_frame_y(f, base + (double)lo / unit);
                    double y1 = chart_frame_y(f, base + (double)tops[a] / unit);
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
    bool recompute = s->recompute;
    char gpu[32];
    numfmt_gpu_mem(gpu, sizeof gpu, d->gpu_bytes, d->units); /* as the tables say it */
    snprintf(lb->gpu, sizeof lb->gpu, "GPU memory %s", gpu);
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
        leg[nl++] = (struct legend_item){LEG_STRIP, chart_recompute_colour(), "recomputed forward"};
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
    chart_fill_rgb(c, chart_term_colour(CHART_LOGITS));
    step_area(f, d, s, unit, STEP_LOGITS);
    if (s->step && s->temps) {
        chart_fill_rgb(c, chart_term_colour(CHART_TEMPS));
        step_area(f, d, s, unit, STEP_TEMPS);
    }
    if (s->step && s->copies) {
        chart_fill_rgb(c, chart_term_colour(CHART_COPIES));
        step_area(f, d, s, unit, STEP_COPIES);
    }
    chart_fill_rgb(c, chart_term_colour(CHART_ACT));
    step_area(f, d, s, unit, STEP_ACT);
    if (band) {
        chart_fill_rgb(c, s->step ? CKPT_STEP : chart_term_colour(CHART_GRADS));
        step_area(f, d, s, unit, STEP_CKPT);
    }
    if (s->step) {
        chart_fill_rgb(c, chart_term_colour(CHART_GRADS));
        step_area(f, d, s, unit, STEP_GRADS);
    }
    draw_rect(c, chart_states_colour(), f->px, chart_frame_y(f, states / unit), f->pw,
              chart_frame_y(f, 0) - chart_frame_y(f, states / unit));
}

/* The turn from forward to backward, and the two phases named at the top. */
static void step_turn_mark(struct frame *f, const struct chart_step *d,
                           const struct chart_step_series *s)
{
    struct canvas *c = f->c;
    double turn = chart_frame_x(f, s->turn_set ? s->turn : d->total_time);
    draw_stroke_style(c, AXIS, 0.6, 2);
    draw_line(c, turn, f->py, turn, f->py + f->ph);
    double ty = f->py + TICK_PT + 2;
    chart_text(c, turn - 4, ty, TICK_PT, CANVAS_ALIGN_RIGHT, "forward \xe2\x86\x92");
    chart_text(c, turn + 4, ty, TICK_PT, CANVAS_ALIGN_LEFT, "\xe2\x86\x90 backward");
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
    chart_frame_begin(&f, c, x, y, w, h, &s);
    chart_frame_clip(&f);
    step_areas(&f, d, ser, unit, band);
    step_marks(&f, ser, (double)d->states_bytes, unit);
    if (ser->step)
        step_columns(&f, ser, (double)d->states_bytes, unit);
    if (d->gpu_bytes) {
        chart_hline(&f, (double)d->gpu_bytes / unit, LINE_GPU, 1.0, 0);
        chart_hline(&f, (double)d->gpu_bytes * (1 - d->reserve) / unit, LINE_GPU, 1.0, 4);
    }
    step_turn_mark(&f, d, ser);
    chart_frame_end(&f, false, geom);
}
