/*
 * chart: every chart of the report and the figures, drawn once against canvas.h.
 *
 * Pure: a chart reads a plain const data struct and draws into the rectangle (x, y, w, h) of a
 * canvas (points, y down); no I/O, no allocation, no globals. The rectangle holds everything:
 * title, legend (above the plot, never over the data), axes with nice ticks (1, 2, 2.5, 5 x 10^n)
 * and labelled units, and the plot area, which clips the data. A chart fills an optional
 * struct chart_geom with the plot area and axis ranges it chose (for tests and for callers that
 * place notes). Colours are the same in every chart and figure: weights blue, gradients
 * yellow, optimizer states violet, activations orange, logits magenta, autocast copies light
 * blue, temporaries brown; model states grey; recomputed forwards green. A size in a label is
 * written as the report's tables write it (numfmt.h: numfmt_size, numfmt_gpu_mem).
 *
 * Charts: does-it-fit stacked bars (one bar per rung of the fix ladder, the GPU line and the
 * dashed reserve line; the same bars for the phases of a step), memory over one training step
 * (timeline.h; the checkpointing sawtooth with recomputed segments marked), peak M(k) and step time
 * against k, one layer's activations walked operation by operation (sbh units; the attention core
 * in as^2b units), one layer's parameters matrix by matrix (h^2 units); for memfit search,
 * every layout's peak against its step time, the tp x pp map of the fastest step time and the
 * scaling curve (each GPU count's fastest step and tokens/s per GPU).
 *
 * Written in chart.c (the colours, names and ticks) and one file per family: chart_bars.c (the
 * bars and the phases), chart_step.c, chart_kcurve.c, chart_layer.c (the walk and the
 * parameters), chart_search.c (the scatter and the map), chart_scaling.c; the frame they share to
 * lay a chart out in chart_frame.h, not public.
 */
#ifndef MEMFIT_CHART_H
#define MEMFIT_CHART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/units.h"
#include "draw/canvas.h"
#include "model/layer.h"
#include "model/scenario.h"
#include "plan/timeline.h"

/* The memory terms of a bar, bottom to top: the lesson's five (a chart_bar's), then what a real
 * step adds (a chart_phase_bar's; step.h's parts in the same order). */
enum chart_term {
    CHART_WEIGHTS,
    CHART_GRADS,
    CHART_OPTIMIZER,
    CHART_ACT,
    CHART_LOGITS,
    CHART_TERMS,                /* the lesson's */
    CHART_COPIES = CHART_TERMS, /* autocast's bf16 weight copies */
    CHART_TEMPS,                /* temporaries of a backward or of the optimizer step */
    CHART_STEP_TERMS
};

#define CHART_TICKS_MAX 16

/* What a chart chose: its plot area (points) and the value ranges of its axes. */
struct chart_geom {
    double plot_x, plot_y, plot_w, plot_h;
    double x_min, x_max, y_min, y_max;
    bool x_log;                      /* x_min..x_max on a log scale */
    double y_step;                   /* distance of the y ticks */
    double y_ticks[CHART_TICKS_MAX]; /* the y tick values, bottom up */
    size_t n_y_ticks;
    /* A broken y axis (the bars, when one bar dwarfs the rest): y_min..y_max below the gap,
     * y_max..y_top above it, on another scale; y_top 0 when the axis is whole. */
    double y_top;
    double gap_y0, gap_y1; /* the gap, points (top and bottom) */
};

struct canvas_rgb chart_term_colour(enum chart_term t);
const char *chart_term_name(enum chart_term t);
struct canvas_rgb chart_states_colour(void); /* the grey model-state band */
/* The marks of a recomputed forward on the step chart's time axis: a green of their own, far in
 * hue and in grey from the logits' magenta, so that a print in grey tells them apart. */
struct canvas_rgb chart_recompute_colour(void);

/*
 * Ticks for [lo, hi]: a step of 1, 2, 2.5 or 5 x 10^n giving at most max_ticks intervals, the
 * first tick at or below lo and the last at or above hi (the axis then runs tick to tick).
 * Returns the number of ticks written (<= cap), *step the distance.
 */
size_t chart_ticks(double lo, double hi, int max_ticks, double *ticks, size_t cap, double *step);

/* Tick label: as many decimals as the step needs ("2.5", "40", "0.25"). */
void chart_format_tick(double v, double step, char *buf, size_t size);

/*
 * Ticks of a log axis over [lo, hi] (0 < lo < hi): m x 10^n inside the range for the sparsest set
 * of mantissas m - {1}, {1, 2, 5}, {1, 2, 3, 5}, 1..9 - that gives three ticks, or the densest
 * that gives at most max_ticks (the decades alone whatever their number). Returns the number
 * written (<= cap), increasing; 0 for a bad range.
 */
size_t chart_log_ticks(double lo, double hi, int max_ticks, double *ticks, size_t cap);

/*
 * Does it fit: one stacked bar per rung. When the tallest bar is more than CHART_BARS_BREAK times
 * the GPU's memory, the y axis is broken: its lower part, most of the plot, runs from 0 to just
 * above the GPU line, so the bars that fit and the budget line stay readable; above a gap the rest
 * of the range, up to the tallest bar, is drawn on a smaller scale (chart_geom.y_top).
 */
#define CHART_BARS_BREAK 3.0
struct chart_bar {
    const char *label; /* under the bar; one '\n' allowed for a second line */
    uint64_t term_bytes[CHART_TERMS];
};

struct chart_bars {
    const char *title; /* NULL: none */
    const struct chart_bar *bars;
    size_t n;
    uint64_t gpu_bytes; /* the solid line */
    double reserve;     /* the dashed line at gpu_bytes * (1 - reserve) */
    enum units units;
};

void chart_bars_draw(struct canvas *c, double x, double y, double w, double h,
                     const struct chart_bars *d, struct chart_geom *geom);

/*
 * The same bars for a real step (--peak step): each bar a phase, or the phase at a rung's peak,
 * with the step's terms too (autocast copies and temporaries: in the legend when some bar has
 * them) and the terms named as a step holds them ("activations, inputs", "logits, loss").
 * Optionally bar `peak` outlined with peak_label over its value (the highest phase), and the
 * last bar (the lesson's sum) set apart by a dotted line.
 */
struct chart_phase_bar {
    const char *label; /* under the bar; one '\n' allowed for a second line */
    uint64_t term_bytes[CHART_STEP_TERMS];
};

struct chart_phases {
    const char *title; /* NULL: none */
    const struct chart_phase_bar *bars;
    size_t n;
    uint64_t gpu_bytes; /* the solid line */
    double reserve;     /* the dashed line at gpu_bytes * (1 - reserve) */
    enum units units;
    bool mark_peak;
    size_t peak;
    const char *peak_label; /* NULL: the outline only */
    bool last_apart;
};

void chart_phases_draw(struct canvas *c, double x, double y, double w, double h,
                       const struct chart_phases *d, struct chart_geom *geom);

/*
 * Memory over one step at the chart's resolution: the events of timeline_build or
 * timeline_stream merged, consecutive ones together, into at most CHART_STEP_POINTS points, each
 * with the highest values of the events it merges, so that no peak is lost. A chart is a few
 * hundred points wide: the step of a million layers costs what one of 24 does, and a step of
 * fewer events keeps one point per event. Fed event by event by chart_step_series_add (a
 * timeline_sink_fn); about 30 KB, kept by the caller.
 */
#define CHART_STEP_POINTS 512

/* Each value of a point is the top of an area over the band, the highest of the events it
 * merges; under --peak lesson only act_bytes, top_bytes and ckpt_bytes are drawn (grads_bytes is
 * 0, copies_top and temps_top equal act_bytes). */
struct chart_step_point {
    double t_start, t_end;
    uint64_t act_bytes;   /* activations, checkpoints included (step: over the gradients) */
    uint64_t top_bytes;   /* everything: the logits (step: or the loss's tensors) on top */
    uint64_t ckpt_bytes;  /* the checkpoints held (step: over the gradients) */
    bool recompute;       /* one of the events is a recomputed forward */
    uint64_t events;      /* how many it merges */
    uint64_t grads_bytes; /* step: the gradients, the lowest area */
    uint64_t copies_top, temps_top; /* step: autocast copies over the activations, temporaries */
};

/* An event of no time that is a phase of a step (--peak step: the logits, the loss backward, the
 * end of the backward, the optimizer step): drawn as a thin stacked column, its areas' tops as
 * in chart_step_point. */
#define CHART_STEP_SPIKES 8

struct chart_step_spike {
    double t;
    uint64_t grads_bytes, act_bytes, copies_top, temps_top, top_bytes;
};

struct chart_step_series {
    struct chart_step_point points[CHART_STEP_POINTS];
    size_t n;
    uint64_t per_point; /* events a full point merges: a power of two */
    uint64_t events;
    uint64_t top_bytes; /* the highest activations and logits of the step */
    bool recompute;     /* some layer is recomputed */
    double turn;        /* when the backward pass starts (turn_set) */
    bool turn_set;
    bool spike; /* the logits at the end of the forward pass: when, on what, how much */
    double spike_t;
    uint64_t spike_act_bytes, spike_logits_bytes;
    /* --peak step: the events carry the step's parts (timeline.h); the phases of no time are
     * columns, not points. */
    bool step;
    bool copies, temps; /* some event holds autocast copies, temporaries */
    struct chart_step_spike spikes[CHART_STEP_SPIKES];
    size_t n_spikes;
    /* The walk's state: checkpoints held, counted as in chart_step (segment, ckpt_bytes). */
    uint64_t segment, ckpt_bytes, lo, held;
    bool lo_set;
};

/* An empty series for a step checkpointed every `segment` layers (timeline_summary's segment,
 * k' = min(k, L/pp); 0: none) with checkpoints of ckpt_bytes (c). */
void chart_step_series_init(struct chart_step_series *s, uint64_t segment, uint64_t ckpt_bytes);

/* Adds the next event of the step (a timeline_sink_fn: series is a struct chart_step_series). */
void chart_step_series_add(void *series, const struct timeline_event *e);

/* Memory over one training step, from timeline_build (events) or timeline_stream (series).
 * Under --peak step (events with phases) the areas are, bottom up: the weights and optimizer
 * states (the band), the gradients, the checkpoints within the activations and inputs, autocast's
 * copies, temporaries, the logits or the loss's tensors; the phases of no time are thin columns
 * beside their instant (two at one instant side by side), so the chart's highest point is the
 * step's peak. */
struct chart_step {
    const char *title;
    const struct timeline_event *events;
    size_t n;
    const struct chart_step_series *series; /* NULL: made here from events[0..n) */
    uint64_t states_bytes;                  /* the grey band (step: weights, optimizer states) */
    double total_time;                      /* the x axis runs 0..total_time */
    uint64_t gpu_bytes;                     /* 0: no GPU and reserve lines */
    double reserve;
    uint64_t y_max_bytes; /* 0: from the data; else at least this (panels sharing a scale) */
    uint64_t ckpt_bytes;  /* c, and the segment k' of checkpointing every k (timeline_summary):
                           * with both set, the stored checkpoints are a yellow band */
    uint64_t segment;
    enum units units;
};

void chart_step_draw(struct canvas *c, double x, double y, double w, double h,
                     const struct chart_step *d, struct chart_geom *geom);

/* Peak memory with checkpointing every k, for k = 1..n, the activations M(k) themselves below it
 * (what k changes, also when the peak is at a phase without activations, the optimizer step, and
 * does not move), and the step time. A chart is a few
 * hundred points wide: with more layers than CHART_KCURVE_POINTS the curve is drawn through
 * that many values of k, evenly spread, k_best among them (and no marker per k). */
#define CHART_KCURVE_POINTS 256

struct chart_kcurve {
    const char *title;
    const char *act_label;                    /* the legend of the M(k) curve (NULL: a default) */
    uint64_t k[CHART_KCURVE_POINTS];          /* k[0..n_points): 1 ... n, increasing */
    uint64_t peak_bytes[CHART_KCURVE_POINTS]; /* states + M(k[i]) + logits */
    uint64_t act_bytes[CHART_KCURVE_POINTS];  /* M(k[i]): the activations the first stage keeps */
    size_t n_points;                          /* n when n <= CHART_KCURVE_POINTS: every k */
    uint64_t n;                               /* L/pp (k runs 1..n) */
    uint64_t none_bytes;                      /* peak without checkpointing (dotted line) */
    uint64_t act_none_bytes;                  /* the activations without checkpointing */
    double k_star;                            /* sqrt(L c / A) (drawn when inside 0..n) */
    uint64_t k_best;
    double extra_compute; /* step time with checkpointing / without - 1 (1/3) */
    enum units units;
};

/* Fills d's points for the scenario with recompute every k (at most CHART_KCURVE_POINTS of them,
 * whatever L) and its numbers; returns 0, or -1 on overflow. d->title and d->units are left to
 * the caller. */
int chart_kcurve_fill(const struct scenario *sc, struct chart_kcurve *d);

void chart_kcurve_draw(struct canvas *c, double x, double y, double w, double h,
                       const struct chart_kcurve *d, struct chart_geom *geom);

/* One layer's activations, operation by operation (doc/model.md sections 4.1 and 4.5). */
enum chart_walk_unit {
    CHART_WALK_SBH,  /* the linear part, in sbh */
    CHART_WALK_AS2B, /* the attention core, in as^2b */
    CHART_WALK_ASB   /* FlashAttention's log-sum-exp, in asb */
};

struct chart_walk_op {
    const char *name; /* static string */
    double units;
    enum chart_walk_unit unit;
};

#define CHART_WALK_MAX LAYER_KEPT_MAX

/* The tensors one layer of `sc` keeps, in forward order (tp and sp ignored: the whole layer).
 * Returns the count (0 when cap is too small). */
size_t chart_layer_walk_ops(const struct scenario *sc, struct chart_walk_op *ops, size_t cap);

/* sbh units of the walk's linear part and as^2b units of its core. */
double chart_walk_total(const struct chart_walk_op *ops, size_t n, enum chart_walk_unit unit);

struct chart_walk {
    const char *title;
    const struct chart_walk_op *ops;
    size_t n;
    double heads_per_hidden; /* a/h: converts asb into sbh for the bar length */
    double x_max;            /* 0: from the data and the labels; else the axis's end (panels
                              * sharing a scale pass the first panel's geom.x_max) */
};

void chart_walk_draw(struct canvas *c, double x, double y, double w, double h,
                     const struct chart_walk *d, struct chart_geom *geom);

/*
 * One layer's parameters, matrix by matrix, in h^2 units (doc/model.md sections 2.1 and 2.2).
 * Each group has its colour and a legend entry, shown only when one of the items is in it:
 * attention blue, dense MLP green, shared experts light green, router terracotta, routed experts
 * dark green, biases and norms grey. The E routed experts of an MoE layer are 50 to 100 times
 * the attention's matrices (DeepSeek-V3: 219 h^2 against 3.6): the chart draws one expert's bar,
 * "x E" written on it, and, right of the plot, the whole layer as one stacked bar with the
 * routed experts' share. A dense layer's chart has neither.
 */
enum chart_param_group {
    CHART_PARAM_ATTN,
    CHART_PARAM_MLP,
    CHART_PARAM_SMALL,
    CHART_PARAM_SHARED,
    CHART_PARAM_ROUTER,
    CHART_PARAM_EXPERTS
};

struct chart_param_item {
    const char *name; /* static string */
    double h2;        /* parameters / h^2, every copy */
    enum chart_param_group group;
    uint64_t copies; /* > 1: that many identical matrices (the E routed experts), drawn as one
                      * bar of h2 / copies with "x copies" on it; 0 or 1: the item itself */
};

#define CHART_PARAM_MAX LAYER_PARAMS_MAX

/* The matrices of one layer of `sc` (an MoE layer when it has experts), in the inventory's order:
 * the biases and norms together at the end, the router with its score bias and the shared
 * experts with their gate each as one item, the routed experts as one item of E copies. Returns
 * the count (0 when cap is too small). */
size_t chart_layer_param_items(const struct scenario *sc, struct chart_param_item *items,
                               size_t cap);

struct chart_params {
    const char *title;
    const struct chart_param_item *items;
    size_t n;
    double y_max; /* 0: from the data */
};

void chart_params_draw(struct canvas *c, double x, double y, double w, double h,
                       const struct chart_params *d, struct chart_geom *geom);

/*
 * memfit search, every layout it evaluated: peak memory (y) against step time (x), those that fit
 * coloured, the others grey, the GPU line, the dashed budget line and the fastest layout that
 * fits marked. A search evaluates up to millions of layouts: chart_scatter_add bins each into a
 * grid of CHART_SCATTER_COLS x CHART_SCATTER_ROWS cells per class (fits or not), and each cell is
 * drawn as one mark at its fastest layout (the lowest peak on a tie), larger for more layouts, so
 * that the chart costs the same whatever their number. The fastest fitting layout is kept exactly;
 * the axes span every layout. x is on a log scale when the slowest layout takes more than
 * CHART_SCATTER_LOG times the fastest; y is broken as the bars' (CHART_BARS_BREAK) when the
 * highest peak dwarfs the GPU. About 150 KB: kept by the caller.
 */
#define CHART_SCATTER_COLS 80
#define CHART_SCATTER_ROWS 40
#define CHART_SCATTER_LOG 8.0

struct chart_scatter_cell {
    double x_s, y_bytes; /* its fastest layout (the lowest peak on a tie) */
    uint64_t count;      /* layouts in it; 0: empty */
};

struct chart_scatter {
    /* The axes (chart_scatter_init): x in seconds, y in bytes. */
    double x_lo, x_hi;
    bool x_log;
    double y_hi;  /* the top of the whole axis, or of the lower part of a broken one */
    double y_top; /* a broken axis: the highest peak; 0 when the axis is whole */
    struct chart_scatter_cell cells[2][CHART_SCATTER_ROWS][CHART_SCATTER_COLS]; /* [fits] */
    uint64_t n[2]; /* layouts added: [0] that do not fit, [1] that fit */
    size_t marks;  /* cells not empty */
    bool best;     /* a layout fits: the fastest (the lowest peak on a tie) */
    double best_x_s, best_y_bytes;
};

/* An empty scatter whose axes span step times min_s..max_s (> 0) and peaks up to max_bytes, on a
 * GPU of gpu_bytes. */
void chart_scatter_init(struct chart_scatter *s, double min_s, double max_s, double max_bytes,
                        uint64_t gpu_bytes);

/* Adds one layout: its step time, its peak and whether it fits. */
void chart_scatter_add(struct chart_scatter *s, double step_s, uint64_t peak_bytes, bool fits);

/* The scatter's words (the caller's: the report's phrases) and lines. */
struct chart_layouts {
    const char *title, *x_title, *y_title;
    const char *fits_label, *oom_label, *best_label, *gpu_label, *budget_label; /* the legend */
    const struct chart_scatter *scatter;
    uint64_t gpu_bytes; /* the solid line */
    double reserve;     /* the dashed line at gpu_bytes * (1 - reserve) */
    enum units units;
};

void chart_layouts_draw(struct canvas *c, double x, double y, double w, double h,
                        const struct chart_layouts *d, struct chart_geom *geom);

/*
 * memfit search, the fastest fitting layout for each tensor- and pipeline-parallel degree: a grid
 * with tp across and pp up, each cell the step time of the fastest layout that fits with that tp
 * and pp (written, and coloured on a scale of CHART_MAP_STEPS steps, darker for faster, even in
 * log time between the fastest and the slowest cell), the fastest of all outlined in the colour of
 * the scatter's fastest mark; a cell whose layouts all fail to fit says so, a pair never tried
 * stays empty. Columns are at most CHART_MAP_COL_PT wide (a narrower map is centred). Fed layout
 * by layout by chart_map_add; at most CHART_MAP_MAX values of tp and of pp, the first met (a
 * layout of another value is counted in left_out).
 */
#define CHART_MAP_MAX 16
#define CHART_MAP_STEPS 5
#define CHART_MAP_ROW_PT 22.0  /* the height of a row of cells */
#define CHART_MAP_COL_PT 110.0 /* the widest column of cells */

struct chart_map {
    uint64_t tp[CHART_MAP_MAX], pp[CHART_MAP_MAX]; /* increasing */
    size_t n_tp, n_pp;
    /* [pp][tp]: layouts tried, those that fit, the step time of the fastest that fits */
    uint64_t tried[CHART_MAP_MAX][CHART_MAP_MAX], fit[CHART_MAP_MAX][CHART_MAP_MAX];
    double best_s[CHART_MAP_MAX][CHART_MAP_MAX];
    uint64_t left_out; /* layouts of a tp or pp beyond the CHART_MAP_MAX values kept */
};

void chart_map_init(struct chart_map *m);

/* Adds one layout: its tp and pp, its step time and whether it fits. */
void chart_map_add(struct chart_map *m, uint64_t tp, uint64_t pp, double step_s, bool fits);

/* The height a map of m's rows needs with its title, legend and axes (pt); fewer than four rows
 * share the height of four. */
double chart_map_height(const struct chart_map *m);

struct chart_tp_pp {
    const char *title, *x_title, *y_title;
    const char *oom_label; /* in a cell whose layouts all fail to fit, and in the legend */
    const struct chart_map *map;
};

void chart_map_draw(struct canvas *c, double x, double y, double w, double h,
                    const struct chart_tp_pp *d, struct chart_geom *geom);

/*
 * memfit search --gpus-range, the scaling curve (doc/model.md 11.7): for each GPU count (x, on a
 * log2 axis, a tick labelled at each count), the fastest layout's step time (left axis, a line
 * through diamonds) and its tokens/s per GPU (right axis, a line through square markers),
 * with the first count's tokens/s per GPU dashed across: perfect scaling, which the squares fall
 * under as efficiency drops. Each step-time marker is labelled with its layout above it, at a
 * size that fits the count's share of the axis, and left out where that is under the smallest
 * legible size. At most CHART_SCALING_MAX counts, increasing.
 */
#define CHART_SCALING_MAX 24
#define CHART_SCALING_LABEL 48

struct chart_scaling {
    const char *title, *x_title, *y_title, *y2_title;
    const char *step_label, *rate_label, *ideal_label; /* the legend */
    size_t n;
    uint64_t gpus[CHART_SCALING_MAX];                    /* increasing, > 0 */
    double step_s[CHART_SCALING_MAX];                    /* the fastest layout's step, > 0 */
    double tokens_per_s[CHART_SCALING_MAX];              /* per GPU */
    char layout[CHART_SCALING_MAX][CHART_SCALING_LABEL]; /* "tp=8 pp=2 dp=4"; "": none */
};

/* Where count i lies along the x axis, a share of it in (0, 1): log2 of the count, half a
 * doubling of margin beyond the first and the last. */
double chart_scaling_share(const struct chart_scaling *d, size_t i);

void chart_scaling_draw(struct canvas *c, double x, double y, double w, double h,
                        const struct chart_scaling *d, struct chart_geom *geom);

#endif
