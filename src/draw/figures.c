/* figures: see figures.h. */
#include "draw/figures.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "base/out.h"
#include "draw/canvas_cairo.h"
#include "draw/chart.h"
#include "model/model.h"
#include "model/scenario.h"
#include "plan/timeline.h"

#define PANEL_GAP 24.0
#define MARGIN 8.0

typedef int figure_draw_fn(struct canvas *c);

struct figure {
    const char *name;
    double width_pt, height_pt;
    figure_draw_fn *draw;
};

/* Panels side by side (or stacked) inside the figure's margins. */
static void panel(const struct canvas *c, unsigned i, unsigned n, int vertical, double *x,
                  double *y, double *w, double *h)
{
    double W = c->width_pt - 2 * MARGIN, H = c->height_pt - 2 * MARGIN;
    if (vertical) {
        *h = (H - PANEL_GAP * (n - 1)) / n;
        *w = W;
        *x = MARGIN;
        *y = MARGIN + i * (*h + PANEL_GAP);
    } else {
        *w = (W - PANEL_GAP * (n - 1)) / n;
        *h = H;
        *x = MARGIN + i * (*w + PANEL_GAP);
        *y = MARGIN;
    }
}

static double gb(uint64_t bytes)
{
    return (double)bytes / 1e9;
}

/* ---------------------------------------------------------------- 1. memory over one step */

/* The step chart of sc into a panel, with or without the GPU and reserve lines; its title is
 * head, the timeline's peak, then tail. */
static int step_panel(struct canvas *c, const struct scenario *sc, const char *head,
                      const char *tail, double x, double y, double w, double h, int gpu_lines)
{
    struct terms t;
    if (model_peak(sc, &t) != MODEL_OK)
        return -1;
    size_t cap = timeline_capacity(sc);
    struct timeline_event *ev = cap ? calloc(cap, sizeof *ev) : NULL;
    struct timeline_summary sum;
    if (!ev || timeline_build(sc, ev, cap, &sum) != 0) {
        free(ev);
        return -1;
    }
    char title[256];
    snprintf(title, sizeof title, "%speak %.1f GB%s", head, gb(sum.peak_bytes), tail);
    struct chart_step d = {
        .title = title,
        .events = ev,
        .n = sum.n_events,
        .states_bytes = sum.states_bytes,
        .total_time = sum.total_time,
        .gpu_bytes = gpu_lines ? sc->gpu_mem_bytes : 0,
        .reserve = sc->reserve,
        .ckpt_bytes = t.ckpt_bytes,
        .segment = sum.segment,
        .units = UNITS_GB,
    };
    chart_step_draw(c, x, y, w, h, &d, NULL);
    free(ev);
    return 0;
}

static int peak_of(const struct scenario *sc, struct terms *t)
{
    return model_peak(sc, t) == MODEL_OK ? 0 : -1;
}

static int draw_step_timeline(struct canvas *c)
{
    struct scenario plain, ckpt;
    scenario_lesson_example(&plain);
    ckpt = plain;
    ckpt.recompute = RECOMPUTE_EVERY_K;
    ckpt.ckpt_every = 1;
    double x, y, w, h;
    panel(c, 0, 2, 1, &x, &y, &w, &h);
    if (step_panel(c, &plain, "1.3B model, 24 layers, s = 2048, b = 8: ",
                   " at the turn from forward to backward", x, y, w, h, 1))
        return -1;
    panel(c, 1, 2, 1, &x, &y, &w, &h);
    return step_panel(c, &ckpt, "The same step with full checkpointing (every layer): ",
                      ", one extra forward pass (+33%)", x, y, w, h, 1);
}

/* ---------------------------------------------------------------- 2. parameters per layer */

/* The Llama-style layer at the worked example's h: f = 256 ceil(floor(8h/3) / 256) (doc/model.md
 * section 2.2). */
static void llama_like(struct scenario *sc, uint64_t kv_heads)
{
    scenario_lesson_example(sc);
    sc->arch = ARCH_LLAMA;
    sc->dropout = false;
    sc->tied = false;
    sc->kv_heads = kv_heads;
    sc->ffn = 256 * ((8 * sc->hidden / 3 + 255) / 256);
}

static double params_sum(const struct chart_param_item *it, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += it[i].h2;
    return s;
}

static int draw_params(struct canvas *c)
{
    struct scenario sc[3];
    struct chart_param_item items[3][CHART_PARAM_MAX];
    size_t n[3];
    char titles[3][96];
    scenario_lesson_example(&sc[0]);
    llama_like(&sc[1], sc[0].heads);
    llama_like(&sc[2], sc[0].heads / 4);
    double hi = 0;
    for (int i = 0; i < 3; i++) {
        n[i] = chart_layer_param_items(&sc[i], items[i], CHART_PARAM_MAX);
        if (n[i] == 0)
            return -1;
        for (size_t j = 0; j < n[i]; j++)
            hi = items[i][j].h2 > hi ? items[i][j].h2 : hi;
    }
    snprintf(titles[0], sizeof titles[0], "GPT layer (f = 4h): %.2f h\xc2\xb2",
             params_sum(items[0], n[0]));
    snprintf(titles[1], sizeof titles[1], "Llama layer (f = %.2fh): %.2f h\xc2\xb2",
             (double)sc[1].ffn / (double)sc[1].hidden, params_sum(items[1], n[1]));
    snprintf(titles[2], sizeof titles[2], "Llama with GQA (g = 4): %.2f h\xc2\xb2",
             params_sum(items[2], n[2]));
    for (unsigned i = 0; i < 3; i++) {
        double x, y, w, h;
        panel(c, i, 3, 0, &x, &y, &w, &h);
        struct chart_params d = {titles[i], items[i], n[i], hi};
        chart_params_draw(c, x, y, w, h, &d, NULL);
    }
    return 0;
}

/* ---------------------------------------------------------------- 3. one layer's activations */

static int draw_layer_walk(struct canvas *c)
{
    struct scenario sc[2];
    struct chart_walk_op ops[2][CHART_WALK_MAX];
    size_t n[2];
    scenario_lesson_example(&sc[0]);
    sc[1] = sc[0];
    sc[1].attention = ATTENTION_FLASH;
    char titles[2][128];
    for (int i = 0; i < 2; i++) {
        n[i] = chart_layer_walk_ops(&sc[i], ops[i], CHART_WALK_MAX);
        if (n[i] == 0)
            return -1;
    }
    /* doc/model.md section 9.3: 5as/h = 80 for the 1.3B model at s = 2048, so 114 sbh. */
    double core = 5.0 * (double)(sc[0].heads * sc[0].seq) / (double)sc[0].hidden;
    snprintf(titles[0], sizeof titles[0],
             "Plain attention: 34 sbh + 5 as\xc2\xb2"
             "b = %.0f sbh (the core is %.0f%%)",
             34 + core, 100 * core / (34 + core));
    snprintf(titles[1], sizeof titles[1],
             "FlashAttention: 34 sbh + 4 asb (no s \xc3\x97 s matrix)");
    /* The flash panel takes the plain panel's scale. */
    struct chart_geom g = {0};
    for (unsigned i = 0; i < 2; i++) {
        double x, y, w, h;
        panel(c, i, 2, 0, &x, &y, &w, &h);
        struct chart_walk d = {titles[i], ops[i], n[i], (double)sc[i].heads / (double)sc[i].hidden,
                               g.x_max};
        chart_walk_draw(c, x, y, w, h, &d, &g);
    }
    return 0;
}

/* ---------------------------------------------------------------- 4. checkpoint every k */

static int draw_checkpoint_k(struct canvas *c)
{
    struct scenario sc;
    scenario_lesson_example(&sc);
    sc.attention = ATTENTION_FLASH; /* A = 34 sbh (+ 4asb), c = 2 sbh: doc/model.md 5.2 */
    struct chart_kcurve d;
    memset(&d, 0, sizeof d);
    if (chart_kcurve_fill(&sc, &d) != 0)
        return -1;
    d.title = "Peak and step time against k (1.3B, FlashAttention)";
    d.units = UNITS_GB;
    double x, y, w, h;
    panel(c, 0, 2, 0, &x, &y, &w, &h);
    w *= 0.92;
    chart_kcurve_draw(c, x, y, w, h, &d, NULL);
    struct scenario k4 = sc;
    k4.recompute = RECOMPUTE_EVERY_K;
    k4.ckpt_every = 4;
    double x2 = x + w + PANEL_GAP, w2 = c->width_pt - MARGIN - x2;
    return step_panel(c, &k4,
                      "The sawtooth at k = 4: ", " (the logits are freed before the first rebuild)",
                      x2, y, w2, h, 0);
}

/* ---------------------------------------------------------------- 5. does it fit */

static void bar_of(const struct terms *t, const char *label, struct chart_bar *b)
{
    b->label = label;
    b->term_bytes[CHART_WEIGHTS] = t->weights_bytes;
    b->term_bytes[CHART_GRADS] = t->grads_bytes;
    b->term_bytes[CHART_OPTIMIZER] = t->optimizer_bytes;
    b->term_bytes[CHART_ACT] = t->act_bytes;
    b->term_bytes[CHART_LOGITS] = t->logits_bytes;
}

static int draw_does_it_fit(struct canvas *c)
{
    /* doc/model.md section 9: baseline 116.1, FlashAttention 51.7, + full checkpointing 27.0 GB;
     * the largest micro-batch is 12 with flash, 62 with flash and full checkpointing. */
    struct scenario sc[5];
    struct terms t[5];
    struct chart_bar bars[5];
    char labels[5][48];
    scenario_lesson_example(&sc[0]);
    sc[1] = sc[0];
    sc[1].attention = ATTENTION_FLASH;
    sc[2] = sc[1];
    sc[2].recompute = RECOMPUTE_EVERY_K;
    sc[2].ckpt_every = 1;
    sc[3] = sc[1];
    sc[3].micro_batch = model_max_micro_batch(&sc[1]);
    sc[4] = sc[2];
    sc[4].micro_batch = model_max_micro_batch(&sc[2]);
    if (sc[3].micro_batch == 0 || sc[4].micro_batch == 0)
        return -1;
    const char *names[5] = {"plain attention", "flash", "flash + full ckpt", "flash",
                            "flash + full ckpt"};
    for (int i = 0; i < 5; i++) {
        if (peak_of(&sc[i], &t[i]))
            return -1;
        snprintf(labels[i], sizeof labels[i], "%s\nb = %llu", names[i],
                 (unsigned long long)sc[i].micro_batch);
        bar_of(&t[i], labels[i], &bars[i]);
    }
    struct chart_bars d = {
        .title = "Does it fit? The 1.3B model on one 80 GB GPU, s = 2048",
        .bars = bars,
        .n = 5,
        .gpu_bytes = sc[0].gpu_mem_bytes,
        .reserve = sc[0].reserve,
        .units = UNITS_GB,
    };
    double x, y, w, h;
    panel(c, 0, 1, 0, &x, &y, &w, &h);
    chart_bars_draw(c, x, y, w, h, &d, NULL);
    return 0;
}

/* ---------------------------------------------------------------- files */

static const struct figure figures[FIGURES_COUNT] = {
    {"step-timeline", 640, 470, draw_step_timeline}, {"params-per-layer", 720, 270, draw_params},
    {"layer-walk", 720, 330, draw_layer_walk},       {"checkpoint-k", 760, 300, draw_checkpoint_k},
    {"does-it-fit", 560, 360, draw_does_it_fit},
};

const char *figures_name(unsigned i)
{
    return i < FIGURES_COUNT ? figures[i].name : NULL;
}

void figures_size(unsigned i, double *width_pt, double *height_pt)
{
    *width_pt = i < FIGURES_COUNT ? figures[i].width_pt : 0;
    *height_pt = i < FIGURES_COUNT ? figures[i].height_pt : 0;
}

int figures_draw(unsigned i, struct canvas *c)
{
    return i < FIGURES_COUNT ? figures[i].draw(c) : -1;
}

/* One figure in one format, drawn into the file out_write_atomic opened. */
struct figure_job {
    const struct figure *fig;
    enum canvas_cairo_format format;
    long long date_epoch;
    const char *path;
    struct diag *diag;
};

static int write_figure(FILE *f, void *ctx)
{
    struct figure_job *job = ctx;
    struct canvas *c =
        canvas_cairo_new(job->format, f, job->date_epoch, job->fig->width_pt, job->fig->height_pt);
    if (!c) {
        diag_report(job->diag, job->path, 0, "cannot create the drawing (font '%s')",
                    CANVAS_CAIRO_FONT);
        return -1;
    }
    int rc = job->fig->draw(c);
    int fin = canvas_cairo_finish(c);
    canvas_cairo_free(c);
    if (rc != 0)
        diag_report(job->diag, job->path, 0, "cannot compute the figure's numbers");
    return rc != 0 || fin != 0 ? -1 : 0;
}

int figures_write(const char *dir, const char *source_date_epoch, struct diag *d)
{
    static const char *const ext[] = {".png", ".svg", ".pdf"};
    long long epoch;
    char made[4096];
    if (out_source_date_epoch(source_date_epoch, &epoch, d) < 0 ||
        out_make_dirs_noting(dir, made, sizeof made, d) != 0)
        return -1;
    /* Every file or none: a full disk leaves the previous set, not half of a new one. */
    static struct out_set set;
    out_set_init(&set);
    _Static_assert(FIGURES_COUNT * 3 <= OUT_SET_MAX, "every figure file in one set");
    for (unsigned i = 0; i < FIGURES_COUNT; i++) {
        for (int fmt = CANVAS_CAIRO_PNG; fmt <= CANVAS_CAIRO_PDF; fmt++) {
            char path[4096];
            struct figure_job job = {&figures[i], (enum canvas_cairo_format)fmt, epoch, path, d};
            if (out_join(path, sizeof path, dir, figures[i].name, ext[fmt]) != 0) {
                out_set_abort(&set);
                diag_report(d, dir, 0, "path too long");
            } else if (out_set_add(&set, path, write_figure, &job, d) == 0) {
                continue;
            }
            out_unmake_dirs(dir, made); /* a folder made for nothing goes */
            return -1;
        }
    }
    int rc = out_set_commit(&set, d);
    if (rc != 0)
        out_unmake_dirs(dir, made);
    return rc;
}
