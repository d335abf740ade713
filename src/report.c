/* report: see report.h. */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/stat.h>

#include <hpdf.h>

#include "canvas_hpdf.h"
#include "chart.h"
#include "checked.h"
#include "cost.h"
#include "model.h"
#include "out.h"
#include "paths.h"
#include "pdffix.h"
#include "plan.h"
#include "report_fmt.h"
#include "report_values.h"
#include "template.h"
#include "timeline.h"

static const char *const report_charts[] = {"fit", "step", "step_ckpt", "kcurve", "walk", "params"};
static const char *const report_sc_tables[] = {"config", "verdict", "terms", "ladder", "microbatch"};
static const char *const report_sum_tables[] = {"summary"};

/* ------------------------------------------------------------------------------------------ */
/* The document: pages, a cursor, text, tables.                                                */

#define M_LEFT 56.0
#define M_RIGHT 56.0
#define M_TOP 66.0
#define M_BOTTOM 62.0
#define BODY_PT 9.5
#define BODY_LEAD 13.6
#define TABLE_PT 8.6
#define ROW_H 15.0

static const struct canvas_rgb C_TEXT = {0.12, 0.13, 0.15};
static const struct canvas_rgb C_MUTED = {0.42, 0.44, 0.48};
static const struct canvas_rgb C_RULE = {0.80, 0.82, 0.85};
static const struct canvas_rgb C_ACCENT = {0.12, 0.30, 0.55};
static const struct canvas_rgb C_HEAD_FILL = {0.91, 0.93, 0.96};
static const struct canvas_rgb C_ZEBRA = {0.97, 0.975, 0.98};
static const struct canvas_rgb C_OK = {0.11, 0.50, 0.24};
static const struct canvas_rgb C_OK_FILL = {0.91, 0.96, 0.92};
static const struct canvas_rgb C_BAD = {0.72, 0.13, 0.13};
static const struct canvas_rgb C_BAD_FILL = {0.99, 0.92, 0.91};

struct report_doc {
    HPDF_Doc pdf;
    struct canvas_hpdf_fonts fonts;
    HPDF_Encoder utf8;
    double page_w, page_h;
    HPDF_Page *pages;
    size_t n_pages, cap_pages;
    struct canvas c;
    struct canvas_hpdf ch;
    double y; /* the cursor: top of the next block, top-left coordinates */
    char running[SCENARIO_NAME_MAX + 64];
    const struct report_options *opt;
    enum chart_units units;
    int error; /* 0, or the first failure (a libharu status, or -1 for memory) */
};

static double doc_bottom(const struct report_doc *doc)
{
    return doc->page_h - M_BOTTOM;
}

static double doc_width(const struct report_doc *doc)
{
    return doc->page_w - M_LEFT - M_RIGHT;
}

static void doc_fail(struct report_doc *doc, int err)
{
    if (!doc->error)
        doc->error = err ? err : -1;
}

static void doc_text(struct report_doc *doc, double x, double y, double size, enum canvas_align al,
                     bool bold, struct canvas_rgb rgb, const char *s)
{
    struct canvas *c = &doc->c;
    canvas_hpdf_set_bold(c, bold);
    c->ops->set_fill(c, rgb);
    c->ops->text(c, x, y, size, al, s);
    canvas_hpdf_set_bold(c, false);
}

static double doc_width_of(struct report_doc *doc, double size, bool bold, const char *s)
{
    canvas_hpdf_set_bold(&doc->c, bold);
    double w = doc->c.ops->text_width(&doc->c, size, s);
    canvas_hpdf_set_bold(&doc->c, false);
    return w;
}

static void doc_hline(struct report_doc *doc, double x0, double x1, double y, double width,
                      struct canvas_rgb rgb)
{
    struct canvas *c = &doc->c;
    c->ops->set_stroke(c, rgb);
    c->ops->set_line_width(c, width);
    c->ops->set_dash(c, NULL, 0);
    c->ops->move_to(c, x0, y);
    c->ops->line_to(c, x1, y);
    c->ops->stroke(c);
}

static void doc_fill_rect(struct report_doc *doc, double x, double y, double w, double h,
                          struct canvas_rgb rgb)
{
    struct canvas *c = &doc->c;
    c->ops->set_fill(c, rgb);
    c->ops->rect(c, x, y, w, h);
    c->ops->fill(c);
}

/* Switches the canvas to page i (for drawing the footers at the end). */
static void doc_use_page(struct report_doc *doc, size_t i)
{
    if (doc->c.error)
        doc_fail(doc, doc->c.error);
    canvas_hpdf_init(&doc->c, &doc->ch, doc->pages[i], &doc->fonts, 0, 0, doc->page_w, doc->page_h);
}

static void doc_new_page(struct report_doc *doc)
{
    if (doc->error)
        return;
    if (doc->n_pages == doc->cap_pages) {
        size_t cap = doc->cap_pages ? 2 * doc->cap_pages : 16;
        HPDF_Page *p = realloc(doc->pages, cap * sizeof *p);
        if (!p) {
            doc_fail(doc, -1);
            return;
        }
        doc->pages = p;
        doc->cap_pages = cap;
    }
    HPDF_Page page = HPDF_AddPage(doc->pdf);
    if (!page) {
        doc_fail(doc, (int)HPDF_GetError(doc->pdf));
        return;
    }
    HPDF_Page_SetWidth(page, (HPDF_REAL)doc->page_w);
    HPDF_Page_SetHeight(page, (HPDF_REAL)doc->page_h);
    doc->pages[doc->n_pages++] = page;
    doc_use_page(doc, doc->n_pages - 1);
    doc->y = M_TOP;
    /* The running head: the tool on the left, the scenario on the right, a rule under them. */
    double base = M_TOP - 30;
    doc_text(doc, M_LEFT, base, 7.5, CANVAS_ALIGN_LEFT, true, C_ACCENT, "memfit");
    doc_text(doc, M_LEFT + doc_width_of(doc, 7.5, true, "memfit "), base, 7.5, CANVAS_ALIGN_LEFT,
             false, C_MUTED, "GPU memory capacity report");
    doc_text(doc, doc->page_w - M_RIGHT, base, 7.5, CANVAS_ALIGN_RIGHT, false, C_MUTED,
             doc->running);
    doc_hline(doc, M_LEFT, doc->page_w - M_RIGHT, base + 5, 0.5, C_RULE);
}

/* Starts a new page unless h points fit below the cursor. */
static void doc_need(struct report_doc *doc, double h)
{
    if (doc->y + h > doc_bottom(doc))
        doc_new_page(doc);
}

static void doc_footers(struct report_doc *doc)
{
    char buf[64];
    for (size_t i = 0; i < doc->n_pages; i++) {
        doc_use_page(doc, i);
        double y = doc->page_h - M_BOTTOM + 34;
        doc_hline(doc, M_LEFT, doc->page_w - M_RIGHT, y - 11, 0.5, C_RULE);
        report_fmt(buf, sizeof buf, "page %zu of %zu", i + 1, doc->n_pages);
        doc_text(doc, doc->page_w - M_RIGHT, y, 7.5, CANVAS_ALIGN_RIGHT, false, C_MUTED, buf);
        doc_text(doc, M_LEFT, y, 7.5, CANVAS_ALIGN_LEFT, false, C_MUTED,
                 "1 GB = 10⁹ bytes; 1 GiB = 2³⁰ bytes");
    }
}

/*
 * Splits s into lines no wider than width at size (breaking at spaces) and calls line() for each.
 * A word wider than the line stands alone.
 */
typedef void report_line_fn(struct report_doc *doc, const char *line, void *ctx);

static void doc_wrap(struct report_doc *doc, const char *s, double size, bool bold, double width,
                     report_line_fn *line, void *ctx)
{
    size_t len = strlen(s);
    char *buf = malloc(len + 1);
    if (!buf) {
        doc_fail(doc, -1);
        return;
    }
    size_t start = 0; /* start of the current line in s */
    size_t fit = 0;   /* end of the longest prefix of the line that fits, at a space */
    size_t i = 0;
    while (start < len) {
        while (s[start] == ' ')
            start++;
        fit = 0;
        i = start;
        while (i <= len) {
            if (i == len || s[i] == ' ') {
                size_t n = i - start;
                memcpy(buf, s + start, n);
                buf[n] = '\0';
                if (doc_width_of(doc, size, bold, buf) > width && fit > 0)
                    break;
                fit = i;
                if (i == len)
                    break;
            }
            i++;
        }
        if (fit == 0)
            fit = i; /* one long word */
        memcpy(buf, s + start, fit - start);
        buf[fit - start] = '\0';
        if (buf[0])
            line(doc, buf, ctx);
        start = fit;
    }
    free(buf);
}

static void count_line(struct report_doc *doc, const char *line, void *ctx);

struct report_para {
    double x, size, lead;
    bool bold;
    struct canvas_rgb rgb;
    const char *bullet; /* drawn before the first line, or NULL */
    bool first;
};

static void doc_para_line(struct report_doc *doc, const char *line, void *ctx)
{
    struct report_para *p = ctx;
    doc_need(doc, p->lead);
    double base = doc->y + p->size * 0.93;
    if (p->bullet && p->first)
        doc_text(doc, p->x - 10, base, p->size, CANVAS_ALIGN_LEFT, false, C_ACCENT, p->bullet);
    p->first = false;
    doc_text(doc, p->x, base, p->size, CANVAS_ALIGN_LEFT, p->bold, p->rgb, line);
    doc->y += p->lead;
}

static void doc_paragraph(struct report_doc *doc, const char *text, double indent,
                          const char *bullet)
{
    struct report_para p = {M_LEFT + indent, BODY_PT, BODY_LEAD, false, C_TEXT, bullet, true};
    doc_wrap(doc, text, p.size, false, doc_width(doc) - indent, doc_para_line, &p);
    doc->y += bullet ? 2.5 : 6;
}

static void doc_heading(struct report_doc *doc, int level, const char *text)
{
    static const double size[] = {0, 17, 12.5, 10.5};
    double sz = size[level < 1 ? 1 : level > 3 ? 3 : level];
    double before = level == 1 ? 0 : 10;
    /* Keep a heading with what follows: at least three lines of body below it. */
    doc_need(doc, before + sz * 1.5 + 3 * BODY_LEAD);
    if (doc->y > M_TOP + 1)
        doc->y += before;
    struct report_para p = {M_LEFT, sz, sz * 1.3, true, level == 1 ? C_TEXT : C_ACCENT, NULL, true};
    doc_wrap(doc, text, sz, true, doc_width(doc), doc_para_line, &p);
    if (level == 1) {
        doc_hline(doc, M_LEFT, doc->page_w - M_RIGHT, doc->y + 2, 1.2, C_ACCENT);
        doc->y += 12;
    } else {
        doc->y += 3;
    }
}

/* Cuts s (UTF-8) with an ellipsis until it fits width; writes into buf. */
static const char *doc_fit(struct report_doc *doc, const char *s, double size, bool bold,
                           double width, char *buf, size_t bufsize)
{
    if (doc_width_of(doc, size, bold, s) <= width)
        return s;
    size_t n = strlen(s);
    if (n + 4 > bufsize)
        n = bufsize - 4;
    while (n > 0) {
        n--;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
        memcpy(buf, s, n);
        memcpy(buf + n, "…", sizeof "…");
        if (doc_width_of(doc, size, bold, buf) <= width)
            return buf;
    }
    return "…";
}

/* ---- tables ---- */

struct report_col {
    const char *head;
    double frac; /* share of the text width */
    enum canvas_align align;
};

/* A body row: plain, or tinted green (fits, the chosen fix) or red (does not fit). */
enum report_row_style { ROW_PLAIN, ROW_OK, ROW_BAD };

static void doc_row(struct report_doc *doc, const struct report_col *cols, size_t ncols,
                    const char *const *cells, bool head, enum report_row_style style, bool zebra)
{
    double x = M_LEFT, w = doc_width(doc), y = doc->y;
    if (head)
        doc_fill_rect(doc, x, y, w, ROW_H, C_HEAD_FILL);
    else if (style == ROW_OK)
        doc_fill_rect(doc, x, y, w, ROW_H, C_OK_FILL);
    else if (style == ROW_BAD)
        doc_fill_rect(doc, x, y, w, ROW_H, C_BAD_FILL);
    else if (zebra)
        doc_fill_rect(doc, x, y, w, ROW_H, C_ZEBRA);
    bool bold = head;
    struct canvas_rgb rgb = head ? C_ACCENT : style == ROW_BAD ? C_BAD : style == ROW_OK ? C_OK
                                                                                      : C_TEXT;
    for (size_t i = 0; i < ncols; i++) {
        double cw = cols[i].frac * w;
        char buf[256];
        const char *s = doc_fit(doc, cells[i] ? cells[i] : "", TABLE_PT, bold, cw - 8, buf,
                                sizeof buf);
        double tx = cols[i].align == CANVAS_ALIGN_LEFT ? x + 4
                    : cols[i].align == CANVAS_ALIGN_RIGHT ? x + cw - 4
                                                          : x + cw / 2;
        doc_text(doc, tx, y + 10.6, TABLE_PT, cols[i].align, bold, rgb, s);
        x += cw;
    }
    doc->y += ROW_H;
}

/* A table: the header, then rows; a row that does not fit starts a page and repeats the header. */
struct report_table {
    const struct report_col *cols;
    size_t ncols;
    size_t rows_drawn;
};

static void doc_table_start(struct report_doc *doc, struct report_table *t, size_t min_rows)
{
    const char *heads[16];
    doc_need(doc, ROW_H * (double)(1 + min_rows) + 4);
    for (size_t i = 0; i < t->ncols && i < 16; i++)
        heads[i] = t->cols[i].head;
    doc_row(doc, t->cols, t->ncols, heads, true, ROW_PLAIN, false);
    t->rows_drawn = 0;
}

static void doc_table_row(struct report_doc *doc, struct report_table *t, const char *const *cells,
                          enum report_row_style style)
{
    if (doc->y + ROW_H > doc_bottom(doc)) {
        doc_new_page(doc);
        doc_table_start(doc, t, 1);
    }
    doc_row(doc, t->cols, t->ncols, cells, false, style, t->rows_drawn % 2 == 1);
    t->rows_drawn++;
}

static void doc_table_end(struct report_doc *doc)
{
    doc_hline(doc, M_LEFT, doc->page_w - M_RIGHT, doc->y, 0.6, C_MUTED);
    doc->y += 10;
}

/* ------------------------------------------------------------------------------------------ */
/* Scenario tables.                                                                            */

static void table_config(struct report_doc *doc, const struct report_sc *r)
{
    static const struct report_col cols[] = {
        {"model", 0.14, CANVAS_ALIGN_LEFT}, {"", 0.36, CANVAS_ALIGN_LEFT},
        {"training", 0.14, CANVAS_ALIGN_LEFT}, {"", 0.36, CANVAS_ALIGN_LEFT}};
    const struct scenario *sc = r->sc;
    const char (*v)[REPORT_VALUE_MAX] = r->vals.v;
    char model[96], shape[128], ffn[64], seq[96], prec[64], parallel[128], gpu[128], act[96],
        vocab[64], res[96], psi[96];
    report_fmt(model, sizeof model, "%s (%s-style)", sc->model_preset[0] ? sc->model_preset : "custom",
        v[REPORT_PH_ARCH]);
    if (sc->kv_heads != sc->heads)
        report_fmt(shape, sizeof shape, "L = %s, h = %s, a = %s, %s KV heads", v[REPORT_PH_LAYERS], v[REPORT_PH_HIDDEN],
            v[REPORT_PH_HEADS], v[REPORT_PH_KV_HEADS]);
    else
        report_fmt(shape, sizeof shape, "L = %s, h = %s, a = %s", v[REPORT_PH_LAYERS], v[REPORT_PH_HIDDEN], v[REPORT_PH_HEADS]);
    report_fmt(ffn, sizeof ffn, "f = %s%s%s", v[REPORT_PH_FFN], sc->dropout ? ", dropout" : ", no dropout",
        sc->positions ? ", learned positions" : "");
    report_fmt(vocab, sizeof vocab, "V = %s, %s embedding", v[REPORT_PH_VOCAB], sc->tied ? "tied" : "untied");
    report_fmt(seq, sizeof seq, "s = %s, b = %s, global batch %s", v[REPORT_PH_SEQ], v[REPORT_PH_MICRO_BATCH],
        v[REPORT_PH_GLOBAL_BATCH]);
    struct model_bytes_per_param bpp = model_bytes_per_param(sc->precision);
    report_fmt(prec, sizeof prec, "%s: %u + %u + %u bytes/param", v[REPORT_PH_PRECISION], bpp.weights, bpp.grads,
        bpp.optimizer);
    report_fmt(act, sizeof act, "attention %s, recompute %s", v[REPORT_PH_ATTENTION], v[REPORT_PH_RECOMPUTE]);
    report_fmt(parallel, sizeof parallel, "%s", v[REPORT_PH_PARALLEL]);
    report_fmt(gpu, sizeof gpu, "%s", v[REPORT_PH_HARDWARE]);
    report_fmt(res, sizeof res, "%s kept free: budget %s", v[REPORT_PH_RESERVE], v[REPORT_PH_BUDGET]);
    report_fmt(psi, sizeof psi, "Ψ = %s (%s)", v[REPORT_PH_PARAMS], v[REPORT_PH_PARAMS_SHORT]);
    const char *rows[][4] = {
        {"model", model, "tokens", seq},
        {"shape", shape, "precision", prec},
        {"MLP", ffn, "activations", act},
        {"vocabulary", vocab, "parallelism", parallel},
        {"parameters", psi, "GPUs", gpu},
        {"", "", "reserve", res},
    };
    struct report_table t = {cols, 4, 0};
    doc_table_start(doc, &t, 6);
    for (size_t i = 0; i < 6; i++)
        doc_table_row(doc, &t, rows[i], ROW_PLAIN);
    doc_table_end(doc);
}

static void box_line(struct report_doc *doc, const char *line, void *ctx)
{
    struct report_para *p = ctx;
    doc_text(doc, p->x, doc->y + p->size * 0.93, p->size, CANVAS_ALIGN_LEFT, p->bold, p->rgb, line);
    doc->y += p->lead;
}

static void count_line(struct report_doc *doc, const char *line, void *ctx)
{
    (void)doc;
    (void)line;
    (*(int *)ctx)++;
}

/* The verdict: a tinted box with a coloured bar, the verdict in large type, the fix below. */
static void table_verdict(struct report_doc *doc, const struct report_sc *r)
{
    const char (*v)[REPORT_VALUE_MAX] = r->vals.v;
    bool fits = r->t.fits;
    char head[256], body[2 * REPORT_VALUE_MAX];
    report_fmt(head, sizeof head, "%s: peak %s %s budget %s", fits ? "Fits" : "Does not fit", v[REPORT_PH_PEAK],
        fits ? "≤" : ">", v[REPORT_PH_BUDGET]);
    report_fmt(body, sizeof body, "%s on %s. %s", v[REPORT_PH_HEADROOM], v[REPORT_PH_STAGE], v[REPORT_PH_FIX_SENTENCE]);
    body[0] = (char)(body[0] >= 'a' && body[0] <= 'z' ? body[0] - 32 : body[0]);
    double w = doc_width(doc) - 28;
    int lines = 0;
    doc_wrap(doc, body, BODY_PT, false, w, count_line, &lines);
    double h = 14 + 20 + lines * BODY_LEAD + 8;
    doc_need(doc, h + 8);
    double y0 = doc->y;
    doc_fill_rect(doc, M_LEFT, y0, doc_width(doc), h, fits ? C_OK_FILL : C_BAD_FILL);
    doc_fill_rect(doc, M_LEFT, y0, 5, h, fits ? C_OK : C_BAD);
    doc->y = y0 + 10;
    struct report_para hp = {M_LEFT + 18, 14, 20, true, fits ? C_OK : C_BAD, NULL, true};
    box_line(doc, head, &hp);
    doc->y += 2;
    struct report_para bp = {M_LEFT + 18, BODY_PT, BODY_LEAD, false, C_TEXT, NULL, true};
    doc_wrap(doc, body, BODY_PT, false, w, box_line, &bp);
    doc->y = y0 + h + 12;
}

static void table_terms(struct report_doc *doc, const struct report_sc *r)
{
    static const struct report_col cols[] = {
        {"term", 0.22, CANVAS_ALIGN_LEFT}, {"formula (this GPU)", 0.40, CANVAS_ALIGN_LEFT},
        {"bytes", 0.18, CANVAS_ALIGN_RIGHT}, {"size", 0.11, CANVAS_ALIGN_RIGHT},
        {"share", 0.09, CANVAS_ALIGN_RIGHT}};
    const struct scenario *sc = r->sc;
    const struct terms *t = &r->t;
    const struct model_gpu *g = &t->stage[t->peak_stage];
    struct model_bytes_per_param bpp = model_bytes_per_param(sc->precision);
    char pcount[48], f[6][128], by[8][32], sz[8][32], pc[8][16];
    report_fmt_count(pcount, sizeof pcount, g->params);
    const char *dp_note = sc->dp > 1 ? " / dp" : "";
    report_fmt(f[0], sizeof f[0], "%u B × %s params%s", bpp.weights, pcount, sc->zero >= 3 ? dp_note : "");
    report_fmt(f[1], sizeof f[1], "%u B × params%s", bpp.grads, sc->zero >= 2 ? dp_note : "");
    if (sc->offload == OFFLOAD_OPTIMIZER)
        report_fmt(f[2], sizeof f[2], "%u B × params, in CPU memory", bpp.optimizer);
    else
        report_fmt(f[2], sizeof f[2], "%u B × params%s", bpp.optimizer, sc->zero >= 1 ? dp_note : "");
    char af[96];
    report_values_act_formula(sc, af, sizeof af);
    report_fmt(f[3], sizeof f[3], "A = %s", af);
    if (sc->recompute == RECOMPUTE_EVERY_K)
        report_fmt(f[4], sizeof f[4], "⌈L/k⌉·c + k·A, k = %llu, c = 2sbh", (unsigned long long)sc->ckpt_every);
    else if (sc->pp > 1)
        report_fmt(f[4], sizeof f[4], "%s micro-batches × L/pp layers × A",
            t->peak_stage == MODEL_STAGE_FIRST ? "pp" : "1");
    else
        report_fmt(f[4], sizeof f[4], "L × A = %llu × A", (unsigned long long)sc->layers);
    report_fmt(f[5], sizeof f[5], "4sbV%s (fp32 logits of the loss)", sc->tp > 1 ? " / t" : "");
    const uint64_t vals[] = {t->weights_bytes, t->grads_bytes, t->optimizer_bytes,
                             t->act_layer_bytes, t->act_bytes, t->logits_bytes, t->peak_bytes,
                             t->budget_bytes};
    for (size_t i = 0; i < 8; i++) {
        report_fmt_count(by[i], sizeof by[i], vals[i]);
        report_fmt_size(sz[i], sizeof sz[i], vals[i], doc->units);
        double share = t->peak_bytes ? 100.0 * (double)vals[i] / (double)t->peak_bytes : 0;
        report_fmt(pc[i], sizeof pc[i], "%.1f%%", share);
    }
    pc[3][0] = '\0';
    pc[7][0] = '\0';
    char budget_f[64];
    report_fmt(budget_f, sizeof budget_f, "GPU memory × (1 − %.2f)", sc->reserve);
    const char *rows[][5] = {
        {"weights", f[0], by[0], sz[0], pc[0]},
        {"gradients", f[1], by[1], sz[1], pc[1]},
        {"optimizer states", f[2], by[2], sz[2], pc[2]},
        {"activations, one layer", f[3], by[3], sz[3], pc[3]},
        {"activations, stored", f[4], by[4], sz[4], pc[4]},
        {"logits", f[5], by[5], sz[5], pc[5]},
        {"peak", "states + activations + logits", by[6], sz[6], pc[6]},
        {"budget", budget_f, by[7], sz[7], pc[7]},
    };
    struct report_table tb = {cols, 5, 0};
    doc_table_start(doc, &tb, 8);
    for (size_t i = 0; i < 8; i++)
        doc_table_row(doc, &tb, rows[i], i != 6 ? ROW_PLAIN : t->fits ? ROW_OK : ROW_BAD);
    doc_table_end(doc);
}

/* True when the space-separated list `list` holds the token s[0..n). */
static bool report_has_token(const char *list, const char *s, size_t n)
{
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, " ");
        if (len == n && memcmp(p, s, n) == 0)
            return true;
        p += len;
        p += *p == ' ';
    }
    return false;
}

/* The settings of cur that prev does not have: what one rung changed. */
static void report_delta(const char *prev, const char *cur, char *out, size_t size)
{
    size_t o = 0;
    out[0] = '\0';
    for (const char *p = cur; *p;) {
        size_t len = strcspn(p, " ");
        if (len && !report_has_token(prev, p, len) && o + len + 2 < size) {
            if (o)
                out[o++] = ' ';
            memcpy(out + o, p, len);
            o += len;
            out[o] = '\0';
        }
        p += len;
        p += *p == ' ';
    }
}

static void table_ladder(struct report_doc *doc, const struct report_sc *r)
{
    static const struct report_col cols[] = {
        {"rung", 0.15, CANVAS_ALIGN_LEFT}, {"adds to the rungs above", 0.39, CANVAS_ALIGN_LEFT},
        {"b", 0.06, CANVAS_ALIGN_RIGHT}, {"peak", 0.12, CANVAS_ALIGN_RIGHT},
        {"fits", 0.08, CANVAS_ALIGN_CENTER}, {"added time / step", 0.20, CANVAS_ALIGN_RIGHT}};
    const struct plan *p = &r->plan;
    struct report_table tb = {cols, 6, 0};
    char b[32], peak[32], extra[48], settings[256], prev[256] = "", delta[256], label[64];
    doc_table_start(doc, &tb, p->n_rungs + 1 < 4 ? p->n_rungs + 1 : 4);
    report_fmt_u64(b, sizeof b, r->sc->micro_batch);
    report_fmt_size(peak, sizeof peak, r->t.peak_bytes, doc->units);
    const char *base[] = {"as configured", "", b, peak, r->t.fits ? "yes" : "no", "–"};
    doc_table_row(doc, &tb, base, r->t.fits ? ROW_OK : ROW_PLAIN);
    for (size_t i = 0; i < p->n_rungs; i++) {
        const struct plan_rung *g = &p->rungs[i];
        plan_rung_settings(p, i, settings, sizeof settings);
        report_delta(prev, settings, delta, sizeof delta);
        memcpy(prev, settings, sizeof prev);
        report_values_rung_label(g, label, sizeof label);
        report_fmt_u64(b, sizeof b, g->sc.micro_batch);
        report_fmt_size(peak, sizeof peak, g->terms.peak_bytes, doc->units);
        if (g->extra_time_s > 1e-9)
            report_fmt_seconds(extra, sizeof extra, g->extra_time_s);
        else
            report_fmt(extra, sizeof extra, "–");
        if (g->thin_matmuls) {
            size_t len = strlen(extra);
            report_fmt(extra + len, sizeof extra - len, " (thin)");
        }
        const char *row[] = {label, delta, b, peak, g->fits ? "yes" : "no", extra};
        doc_table_row(doc, &tb, row, (int)i == p->fix_rung ? ROW_OK : ROW_PLAIN);
    }
    doc_table_end(doc);
}

static void table_microbatch(struct report_doc *doc, const struct report_sc *r)
{
    static const struct report_col cols[] = {
        {"activation mode", 0.22, CANVAS_ALIGN_LEFT}, {"settings", 0.38, CANVAS_ALIGN_LEFT},
        {"largest b", 0.14, CANVAS_ALIGN_RIGHT}, {"tokens / micro-batch", 0.26, CANVAS_ALIGN_RIGHT}};
    static const char *const settings[PLAN_MODES] = {
        "attention=plain recompute=none", "attention=flash recompute=none",
        "attention=plain recompute=selective", "attention=flash recompute=full"};
    struct report_table tb = {cols, 4, 0};
    doc_table_start(doc, &tb, PLAN_MODES);
    for (int m = 0; m < PLAN_MODES; m++) {
        char b[32], tok[48];
        uint64_t mb = r->max_b[m];
        report_fmt_u64(b, sizeof b, mb);
        if (mb)
            report_fmt_count(tok, sizeof tok, mb * r->sc->seq);
        else
            report_fmt(tok, sizeof tok, "not even b = 1 fits");
        const char *row[] = {plan_mode_name((enum plan_mode)m), settings[m], b, tok};
        doc_table_row(doc, &tb, row, mb ? ROW_PLAIN : ROW_BAD);
    }
    doc_table_end(doc);
}

/* ------------------------------------------------------------------------------------------ */
/* Charts.                                                                                     */

#define CHART_H 218.0

static void chart_fit(struct report_doc *doc, const struct report_sc *r, double y, double h)
{
    struct chart_bar bars[PLAN_MAX_RUNGS + 1];
    char labels[PLAN_MAX_RUNGS + 1][48];
    size_t n = 0;
    const struct terms *ts[PLAN_MAX_RUNGS + 1];
    ts[n] = &r->t;
    report_fmt(labels[n], sizeof labels[n], "as given\nb = %llu", (unsigned long long)r->sc->micro_batch);
    n++;
    for (size_t i = 0; i < r->plan.n_rungs; i++, n++) {
        char l[40];
        report_values_rung_label(&r->plan.rungs[i], l, sizeof l);
        report_fmt(labels[n], sizeof labels[n], "+ %s\nb = %llu", l,
            (unsigned long long)r->plan.rungs[i].sc.micro_batch);
        ts[n] = &r->plan.rungs[i].terms;
    }
    for (size_t i = 0; i < n; i++) {
        bars[i].label = labels[i];
        bars[i].term_bytes[CHART_WEIGHTS] = ts[i]->weights_bytes;
        bars[i].term_bytes[CHART_GRADS] = ts[i]->grads_bytes;
        bars[i].term_bytes[CHART_OPTIMIZER] = ts[i]->optimizer_bytes;
        bars[i].term_bytes[CHART_ACT] = ts[i]->act_bytes;
        bars[i].term_bytes[CHART_LOGITS] = ts[i]->logits_bytes;
    }
    struct chart_bars d = {.title = "Peak memory of the most loaded GPU: as given, then rung by rung",
                           .bars = bars,
                           .n = n,
                           .gpu_bytes = r->sc->gpu_mem_bytes,
                           .reserve = r->sc->reserve,
                           .units = doc->units};
    chart_bars_draw(&doc->c, M_LEFT, y, doc_width(doc), h, &d, NULL);
}

/*
 * The scenario the second step chart compares with: checkpointing every k_best layers, or, when
 * the scenario already checkpoints every k, the same step without checkpointing.
 */
static void report_step_other(const struct report_sc *r, struct scenario *out, char *title,
                              size_t size)
{
    *out = *r->sc;
    if (r->sc->recompute == RECOMPUTE_EVERY_K) {
        out->recompute = RECOMPUTE_NONE;
        out->ckpt_every = 0;
        report_fmt(title, size, "The same step without checkpointing");
        return;
    }
    out->recompute = RECOMPUTE_EVERY_K;
    out->ckpt_every = r->t.k_best ? r->t.k_best : 1;
    if (out->ckpt_every == 1)
        report_fmt(title, size, "The same step, checkpointing every layer (the best k; recomputation "
                         "shaded)");
    else
        report_fmt(title, size, "The same step, checkpointing every %llu layers (the best k; "
                         "recomputation shaded)", (unsigned long long)out->ckpt_every);
}

/* Memory over one step: as configured, or (other) the comparison of report_step_other. */
static void chart_step(struct report_doc *doc, const struct report_sc *r, bool other, double y,
                       double h)
{
    struct scenario sc, cmp;
    char title[160], cmp_title[160];
    report_step_other(r, &cmp, cmp_title, sizeof cmp_title);
    if (other) {
        sc = cmp;
        memcpy(title, cmp_title, sizeof title);
        cmp = *r->sc;
    } else {
        sc = *r->sc;
        report_fmt(title, sizeof title, "Memory over one training step, as configured");
    }
    size_t cap = timeline_capacity(&sc);
    struct timeline_event *ev = calloc(cap ? cap : 1, sizeof *ev);
    struct timeline_summary sum;
    if (!ev || timeline_build(&sc, ev, cap, &sum) != 0) {
        free(ev);
        doc_fail(doc, -1);
        return;
    }
    /* Both step charts share the scale of the larger peak. */
    struct terms ot;
    uint64_t ymax = sum.peak_bytes;
    if (model_peak(&cmp, &ot) == MODEL_OK && ot.peak_bytes > ymax)
        ymax = ot.peak_bytes;
    struct chart_step d = {.title = title,
                           .events = ev,
                           .n = sum.n_events,
                           .states_bytes = sum.states_bytes,
                           .total_time = sum.total_time,
                           .gpu_bytes = r->sc->gpu_mem_bytes,
                           .reserve = r->sc->reserve,
                           .y_max_bytes = ymax,
                           .units = doc->units};
    chart_step_draw(&doc->c, M_LEFT, y, doc_width(doc), h, &d, NULL);
    free(ev);
}

static void chart_kcurve(struct report_doc *doc, const struct report_sc *r, double y, double h)
{
    size_t cap = (size_t)r->sc->layers;
    uint64_t *peak = calloc(cap ? cap : 1, sizeof *peak);
    struct chart_kcurve d;
    memset(&d, 0, sizeof d);
    if (!peak || chart_kcurve_fill(r->sc, peak, cap, &d) != 0) {
        free(peak);
        doc_fail(doc, -1);
        return;
    }
    d.title = "Checkpointing every k layers: peak memory against k";
    d.units = doc->units;
    chart_kcurve_draw(&doc->c, M_LEFT, y, doc_width(doc), h, &d, NULL);
    free(peak);
}

static void chart_walk(struct report_doc *doc, const struct report_sc *r, double y, double h)
{
    struct chart_walk_op ops[CHART_WALK_MAX];
    size_t n = chart_layer_walk_ops(r->sc, ops, CHART_WALK_MAX);
    struct chart_walk d = {.title = "Activations one layer keeps, operation by operation",
                           .ops = ops,
                           .n = n,
                           .heads_per_hidden = (double)r->sc->heads / (double)r->sc->hidden};
    chart_walk_draw(&doc->c, M_LEFT, y, doc_width(doc), h, &d, NULL);
}

static void chart_params(struct report_doc *doc, const struct report_sc *r, double y, double h)
{
    struct chart_param_item items[CHART_PARAM_MAX];
    size_t n = chart_layer_param_items(r->sc, items, CHART_PARAM_MAX);
    struct chart_params d = {.title = "Parameters of one layer, matrix by matrix",
                             .items = items,
                             .n = n};
    chart_params_draw(&doc->c, M_LEFT, y, doc_width(doc), h, &d, NULL);
}

/* The height of each chart on the page, pt. */
static double report_chart_height(const char *name)
{
    static const struct {
        const char *name;
        double h;
    } heights[] = {{"fit", 235}, {"step", 178}, {"step_ckpt", 178},
                   {"kcurve", 200}, {"walk", 205}, {"params", 138}};
    for (size_t i = 0; i < sizeof heights / sizeof *heights; i++)
        if (strcmp(heights[i].name, name) == 0)
            return heights[i].h;
    return CHART_H;
}

static void doc_chart(struct report_doc *doc, const struct report_sc *r, const char *name)
{
    double h = report_chart_height(name);
    doc_need(doc, h + 6);
    double y = doc->y;
    if (strcmp(name, "fit") == 0)
        chart_fit(doc, r, y, h);
    else if (strcmp(name, "step") == 0)
        chart_step(doc, r, false, y, h);
    else if (strcmp(name, "step_ckpt") == 0)
        chart_step(doc, r, true, y, h);
    else if (strcmp(name, "kcurve") == 0)
        chart_kcurve(doc, r, y, h);
    else if (strcmp(name, "walk") == 0)
        chart_walk(doc, r, y, h);
    else if (strcmp(name, "params") == 0)
        chart_params(doc, r, y, h);
    doc->y = y + h + 10;
}

static void doc_sc_table(struct report_doc *doc, const struct report_sc *r, const char *name)
{
    if (strcmp(name, "config") == 0)
        table_config(doc, r);
    else if (strcmp(name, "verdict") == 0)
        table_verdict(doc, r);
    else if (strcmp(name, "terms") == 0)
        table_terms(doc, r);
    else if (strcmp(name, "ladder") == 0)
        table_ladder(doc, r);
    else if (strcmp(name, "microbatch") == 0)
        table_microbatch(doc, r);
}

/* ------------------------------------------------------------------------------------------ */
/* The summary table: one row per scenario.                                                    */

struct report_run {
    const struct report_options *opt;
    enum chart_units units;
    struct report_values doc_vals;
    struct template scenario_tmpl, summary_tmpl;
    struct report_sc *scs;
    size_t n;
};

static void table_summary(struct report_doc *doc, const struct report_run *run, size_t first,
                          size_t count)
{
    static const struct report_col cols[] = {
        {"scenario", 0.26, CANVAS_ALIGN_LEFT}, {"verdict", 0.13, CANVAS_ALIGN_LEFT},
        {"peak", 0.11, CANVAS_ALIGN_RIGHT}, {"budget", 0.11, CANVAS_ALIGN_RIGHT},
        {"cheapest fix", 0.39, CANVAS_ALIGN_LEFT}};
    struct report_table tb = {cols, 5, 0};
    doc_table_start(doc, &tb, count < 3 ? count : 3);
    for (size_t i = first; i < first + count; i++) {
        const struct report_sc *r = &run->scs[i];
        const char (*v)[REPORT_VALUE_MAX] = r->vals.v;
        char fix[REPORT_VALUE_MAX + 64];
        if (r->plan.fix == PLAN_FIX_NONE)
            report_fmt(fix, sizeof fix, "–");
        else if (r->plan.fix == PLAN_FIX_NOTHING)
            report_fmt(fix, sizeof fix, "none fits (states need %s GPUs)", v[REPORT_PH_GPUS_FOR_STATES]);
        else
            report_fmt(fix, sizeof fix, "%s → %s", plan_fix_name(r->plan.fix), v[REPORT_PH_FIX_PEAK]);
        const char *row[] = {v[REPORT_PH_NAME], r->t.fits ? "fits" : "OOM", v[REPORT_PH_PEAK], v[REPORT_PH_BUDGET], fix};
        doc_table_row(doc, &tb, row, r->t.fits ? ROW_OK : ROW_BAD);
    }
    doc_table_end(doc);
}

/* ------------------------------------------------------------------------------------------ */
/* Rendering a template.                                                                       */

static void doc_block_text(struct report_doc *doc, const struct template_block *b,
                           struct report_values *vals)
{
    char *s = template_expand(b->text, report_values_lookup, vals);
    if (!s) {
        doc_fail(doc, -1);
        return;
    }
    if (b->kind == TEMPLATE_HEADING)
        doc_heading(doc, b->level, s);
    else if (b->kind == TEMPLATE_ITEM)
        doc_paragraph(doc, s, 12, "•");
    else
        doc_paragraph(doc, s, 0, NULL);
    free(s);
}

/* Height of an expanded paragraph or item, as doc_paragraph will draw it. */
static double doc_text_height(struct report_doc *doc, const struct template_block *b,
                              struct report_values *vals)
{
    char *s = template_expand(b->text, report_values_lookup, vals);
    int lines = 0;
    if (!s)
        return 0;
    double indent = b->kind == TEMPLATE_ITEM ? 12 : 0;
    doc_wrap(doc, s, BODY_PT, false, doc_width(doc) - indent, count_line, &lines);
    free(s);
    return lines * BODY_LEAD + (b->kind == TEMPLATE_ITEM ? 2.5 : 6);
}

/*
 * Keeps a heading with what follows it: the paragraphs under it and the first chart or the head
 * of the first table. Returns the height to ask for (at most a page).
 */
static double doc_keep_height(struct report_doc *doc, const struct template *tmpl, size_t i,
                              struct report_values *vals)
{
    double h = 40;
    for (size_t j = i + 1; j < tmpl->n; j++) {
        const struct template_block *b = &tmpl->blocks[j];
        if (b->kind == TEMPLATE_PARAGRAPH || b->kind == TEMPLATE_ITEM) {
            h += doc_text_height(doc, b, vals);
            continue;
        }
        if (b->kind == TEMPLATE_CHART) {
            h += report_chart_height(b->text) + 10;
            if (j + 1 < tmpl->n && tmpl->blocks[j + 1].kind == TEMPLATE_CHART)
                h += report_chart_height(tmpl->blocks[j + 1].text) + 10;
        }
        else if (b->kind == TEMPLATE_TABLE)
            h += strcmp(b->text, "verdict") == 0 ? 80 : 4 * ROW_H;
        break;
    }
    double page = doc_bottom(doc) - M_TOP;
    return h < page ? h : page;
}

/* Draws tmpl for scenario r (NULL: the summary, over scenarios [first, first + count)). */
static void doc_render(struct report_doc *doc, const struct template *tmpl, struct report_sc *r,
                       const struct report_run *run, size_t first, size_t count)
{
    struct report_values *vals = r ? &r->vals : (struct report_values *)&run->doc_vals;
    for (size_t i = 0; i < tmpl->n && !doc->error; i++) {
        const struct template_block *b = &tmpl->blocks[i];
        switch (b->kind) {
        case TEMPLATE_HEADING:
            doc_need(doc, doc_keep_height(doc, tmpl, i, vals));
            doc_block_text(doc, b, vals);
            break;
        case TEMPLATE_PARAGRAPH:
        case TEMPLATE_ITEM:
            doc_block_text(doc, b, vals);
            break;
        case TEMPLATE_PAGEBREAK:
            if (doc->y > M_TOP + 1)
                doc_new_page(doc);
            break;
        case TEMPLATE_CHART:
            /* Charts that follow each other directly share a page (they are compared). */
            if (i + 1 < tmpl->n && tmpl->blocks[i + 1].kind == TEMPLATE_CHART &&
                (i == 0 || tmpl->blocks[i - 1].kind != TEMPLATE_CHART))
                doc_need(doc, report_chart_height(b->text) +
                                  report_chart_height(tmpl->blocks[i + 1].text) + 20);
            if (r)
                doc_chart(doc, r, b->text);
            break;
        case TEMPLATE_TABLE:
            if (r)
                doc_sc_table(doc, r, b->text);
            else
                table_summary(doc, run, first, count);
            break;
        }
        if (doc->c.error)
            doc_fail(doc, doc->c.error);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Documents and files.                                                                        */

static int report_date(HPDF_Doc pdf, const char *epoch, struct diag *d)
{
    if (!epoch || !epoch[0])
        return 0;
    char *end;
    errno = 0;
    long long t = strtoll(epoch, &end, 10);
    if (errno || *end || t < 0 || t > 253402300799LL) {
        diag_report(d, NULL, 0, "SOURCE_DATE_EPOCH: '%s' is not a number of seconds since 1970", epoch);
        return -1;
    }
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm))
        return -1;
    HPDF_Date date = {tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                      tm.tm_sec, 'Z', 0, 0};
    HPDF_SetInfoDateAttr(pdf, HPDF_INFO_CREATION_DATE, date);
    HPDF_SetInfoDateAttr(pdf, HPDF_INFO_MOD_DATE, date);
    return 0;
}

static int report_doc_init(struct report_doc *doc, const struct report_run *run, const char *title,
                           struct diag *d)
{
    memset(doc, 0, sizeof *doc);
    doc->opt = run->opt;
    doc->units = run->units;
    doc->pdf = HPDF_New(NULL, NULL);
    if (!doc->pdf) {
        diag_report(d, NULL, 0, "out of memory");
        return -1;
    }
    /* Before the fonts: libharu fixes a font's stream filters when the font is loaded. */
    HPDF_SetCompressionMode(doc->pdf, HPDF_COMP_ALL);
    unsigned long st = canvas_hpdf_load_fonts(doc->pdf, NULL, &doc->fonts);
    if (st) {
        diag_report(d, NULL, 0, "cannot load DejaVu Sans from '%s' (libharu error 0x%04lX)",
                    CANVAS_HPDF_FONT_DIR, st);
        return -1;
    }
    doc->utf8 = HPDF_GetEncoder(doc->pdf, "UTF-8");
    HPDF_SetPageMode(doc->pdf, HPDF_PAGE_MODE_USE_OUTLINE);
    HPDF_SetInfoAttr(doc->pdf, HPDF_INFO_TITLE, title);
    HPDF_SetInfoAttr(doc->pdf, HPDF_INFO_CREATOR, "memfit");
    HPDF_SetInfoAttr(doc->pdf, HPDF_INFO_SUBJECT, "Does the training run fit in GPU memory?");
    if (report_date(doc->pdf, run->opt->source_date_epoch, d) != 0)
        return -1;
    bool letter = run->opt->paper == REPORT_PAPER_LETTER;
    doc->page_w = letter ? 612 : 595.276;
    doc->page_h = letter ? 792 : 841.89;
    return 0;
}

static void report_doc_release(struct report_doc *doc)
{
    if (doc->pdf)
        HPDF_Free(doc->pdf);
    free(doc->pages);
}

static void doc_bookmark(struct report_doc *doc, const char *title)
{
    if (doc->error || doc->n_pages == 0)
        return;
    HPDF_Outline o = HPDF_CreateOutline(doc->pdf, NULL, title, doc->utf8);
    HPDF_Destination dst = HPDF_Page_CreateDestination(doc->pages[doc->n_pages - 1]);
    if (!o || !dst) {
        doc_fail(doc, (int)HPDF_GetError(doc->pdf));
        return;
    }
    HPDF_Destination_SetXYZ(dst, 0, (HPDF_REAL)(doc->page_h - doc->y + 20), 1);
    HPDF_Outline_SetDestination(o, dst);
}

static void doc_scenario(struct report_doc *doc, const struct report_run *run, struct report_sc *r)
{
    report_fmt(doc->running, sizeof doc->running, "%s", r->sc->name);
    doc_new_page(doc);
    doc_bookmark(doc, r->sc->name);
    doc_render(doc, &run->scenario_tmpl, r, run, 0, 0);
}

/* The saved document, in memory (libharu's own stream, read out). */
static unsigned char *report_save_memory(HPDF_Doc pdf, size_t *len)
{
    if (HPDF_SaveToStream(pdf) != HPDF_OK)
        return NULL;
    size_t size = HPDF_GetStreamSize(pdf);
    unsigned char *buf = malloc(size ? size : 1);
    if (!buf)
        return NULL;
    HPDF_ResetStream(pdf);
    size_t got = 0;
    while (got < size) {
        HPDF_UINT32 n = (HPDF_UINT32)(size - got);
        HPDF_STATUS st = HPDF_ReadFromStream(pdf, buf + got, &n);
        got += n;
        if (st == HPDF_STREAM_EOF)
            break;
        if (st != HPDF_OK || n == 0) {
            free(buf);
            return NULL;
        }
    }
    *len = got;
    return buf;
}

/* Writes the document into f, its ToUnicode maps repaired (pdffix.h). */
static int report_save_stream(FILE *f, void *ctx)
{
    size_t len, fixed_len;
    unsigned char *pdf = report_save_memory(ctx, &len), *fixed;
    if (!pdf)
        return -1;
    int rc = 0;
    if (pdffix_tounicode(pdf, len, &fixed, &fixed_len) == 0) {
        rc = fwrite(fixed, 1, fixed_len, f) == fixed_len ? 0 : -1;
        free(fixed);
    } else {
        rc = fwrite(pdf, 1, len, f) == len ? 0 : -1;
    }
    free(pdf);
    return rc;
}

/* Finishes doc (footers) and writes it to path. */
static int report_finish(struct report_doc *doc, const char *path, struct diag *d)
{
    doc_footers(doc);
    if (doc->c.error)
        doc_fail(doc, doc->c.error);
    if (!doc->error && HPDF_GetError(doc->pdf))
        doc_fail(doc, (int)HPDF_GetError(doc->pdf));
    if (doc->error) {
        if (doc->error == -1)
            diag_report(d, NULL, 0, "cannot write '%s': out of memory", path);
        else
            diag_report(d, NULL, 0, "cannot write '%s': libharu error 0x%04X", path,
                        (unsigned)doc->error);
        return -1;
    }
    return out_write_atomic(path, report_save_stream, doc->pdf, d);
}

static int report_combined(struct report_run *run, const char *path, struct diag *d)
{
    struct report_doc doc;
    int rc = -1;
    if (report_doc_init(&doc, run, run->doc_vals.v[REPORT_PH_TITLE], d) != 0)
        goto out;
    report_fmt(doc.running, sizeof doc.running, "summary");
    doc_new_page(&doc);
    doc_bookmark(&doc, "Summary");
    doc_render(&doc, &run->summary_tmpl, NULL, run, 0, run->n);
    for (size_t i = 0; i < run->n; i++)
        doc_scenario(&doc, run, &run->scs[i]);
    rc = report_finish(&doc, path, d);
out:
    report_doc_release(&doc);
    return rc;
}

static int report_single(struct report_run *run, struct report_sc *r, const char *path,
                         struct diag *d)
{
    struct report_doc doc;
    char title[SCENARIO_NAME_MAX + 64];
    report_fmt(title, sizeof title, "%s: %s", run->doc_vals.v[REPORT_PH_TITLE], r->sc->name);
    int rc = -1;
    if (report_doc_init(&doc, run, title, d) == 0) {
        doc_scenario(&doc, run, r);
        rc = report_finish(&doc, path, d);
    }
    report_doc_release(&doc);
    return rc;
}

/* Writes one PDF per scenario, with unique safe names. */
static int report_split(struct report_run *run, struct diag *d)
{
    const char *combined = run->opt->file_name ? run->opt->file_name : "report.pdf";
    char (*names)[OUT_NAME_MAX + 1] = calloc(run->n + 1, sizeof *names);
    const char **taken = calloc(run->n + 1, sizeof *taken);
    int rc = 0;
    if (!names || !taken) {
        diag_report(d, NULL, 0, "out of memory");
        rc = -1;
        goto out;
    }
    /* The combined report's own name is taken first, so no scenario can overwrite it. */
    out_safe_name(combined, names[0], sizeof names[0]);
    char *dot = strrchr(names[0], '.');
    if (dot && strcmp(dot, ".pdf") == 0)
        *dot = '\0';
    taken[0] = names[0];
    for (size_t i = 0; i < run->n; i++) {
        char *nm = names[i + 1];
        out_safe_name(run->scs[i].sc->name, nm, OUT_NAME_MAX + 1);
        if (out_unique_name(nm, OUT_NAME_MAX + 1, taken, i + 1) != 0) {
            rc = -1;
            continue;
        }
        taken[i + 1] = nm;
        char path[4096];
        if (out_join(path, sizeof path, run->opt->out_dir, nm, ".pdf") != 0) {
            diag_report(d, NULL, 0, "cannot write '%s/%s.pdf': path too long", run->opt->out_dir, nm);
            rc = -1;
            continue;
        }
        if (report_single(run, &run->scs[i], path, d) != 0)
            rc = -1;
    }
out:
    free(names);
    free(taken);
    return rc;
}

/* Loads a template from path, or from the data dir when path is NULL. */
static int report_load_template(struct template *t, const char *path, const char *rel,
                                const struct template_names *names, struct diag *d)
{
    char found[4096];
    if (!path) {
        if (paths_find_data(rel, found, sizeof found) != 0) {
            diag_report(d, NULL, 0, "cannot find '%s'", rel);
            return -1;
        }
        path = found;
    }
    return template_load(t, path, names, d);
}

void report_options_init(struct report_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->out_dir = "out";
    opt->file_name = "report.pdf";
    opt->paper = REPORT_PAPER_A4;
}

const char *const *report_placeholder_names(size_t *n)
{
    return report_values_names(n);
}

int report_write(const struct scenario *scs, size_t n, const struct report_options *opt,
                 struct diag *d)
{
    struct report_run run;
    memset(&run, 0, sizeof run);
    run.opt = opt;
    run.units = opt->gib ? CHART_GIB : CHART_GB;
    template_init(&run.scenario_tmpl);
    template_init(&run.summary_tmpl);
    int rc = -1;
    if (n == 0) {
        diag_report(d, NULL, 0, "no scenario to report");
        return -1;
    }

    /* 1. Both templates, parsed and checked before anything is drawn. */
    size_t n_names;
    const char *const *all = report_placeholder_names(&n_names);
    struct template_names sc_names = {all, n_names, report_charts,
                                      sizeof report_charts / sizeof *report_charts,
                                      report_sc_tables,
                                      sizeof report_sc_tables / sizeof *report_sc_tables};
    struct template_names sum_names = {all, REPORT_PH_DOC_END, NULL, 0, report_sum_tables, 1};
    int bad = report_load_template(&run.scenario_tmpl, opt->scenario_template,
                                   "templates/report.tmpl", &sc_names, d);
    bad |= report_load_template(&run.summary_tmpl, opt->summary_template,
                                "templates/summary.tmpl", &sum_names, d);
    if (bad)
        goto out;

    /* 2. Every scenario's numbers. */
    run.scs = calloc(n, sizeof *run.scs);
    if (!run.scs) {
        diag_report(d, NULL, 0, "out of memory");
        goto out;
    }
    run.n = n;
    for (size_t i = 0; i < n; i++)
        if (report_sc_init(&run.scs[i], &scs[i], run.units, d) != 0)
            goto out;
    report_values_doc(&run.doc_vals, run.scs, n, run.units, opt->inputs, opt->validation_note);
    for (size_t i = 0; i < n; i++)
        report_sc_share_doc(&run.scs[i], &run.doc_vals);

    /* 3. The files, in out_dir (made here when it is missing; one level, like mkdir). */
    (void)mkdir(opt->out_dir, 0777); /* a failure shows in the write below, with its reason */
    char path[4096];
    if (out_join(path, sizeof path, opt->out_dir, opt->file_name ? opt->file_name : "report.pdf",
                 "") != 0) {
        diag_report(d, NULL, 0, "cannot write into '%s': path too long", opt->out_dir);
        goto out;
    }
    rc = report_combined(&run, path, d);
    if (opt->split && report_split(&run, d) != 0)
        rc = -1;
out:
    free(run.scs);
    template_release(&run.scenario_tmpl);
    template_release(&run.summary_tmpl);
    return rc;
}
