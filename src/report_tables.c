/* report_tables: see report_tables.h. */
#include "report_tables.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "model.h"
#include "plan.h"
#include "report_fmt.h"

static const char *const report_tables_sc[] = {"config", "verdict", "terms", "ladder",
                                               "microbatch"};
static const char *const report_tables_sum[] = {"summary"};

const char *const *report_tables_names(size_t *n)
{
    *n = sizeof report_tables_sc / sizeof *report_tables_sc;
    return report_tables_sc;
}

const char *const *report_tables_summary_names(size_t *n)
{
    *n = sizeof report_tables_sum / sizeof *report_tables_sum;
    return report_tables_sum;
}

static void table_config(struct doc *doc, const struct report_sc *r)
{
    static const struct doc_col cols[] = {
        {"model", 0.14, CANVAS_ALIGN_LEFT}, {"", 0.36, CANVAS_ALIGN_LEFT},
        {"training", 0.14, CANVAS_ALIGN_LEFT}, {"", 0.36, CANVAS_ALIGN_LEFT}};
    const struct scenario *sc = r->sc;
    const char (*v)[REPORT_VALUE_MAX] = r->vals.v;
    char model[96], shape[128], ffn[64], seq[96], prec[64], parallel[128], gpu[128], act[96],
        vocab[64], res[96], psi[96];
    report_fmt(model, sizeof model, "%s (%s-style)",
               sc->model_preset[0] ? sc->model_preset : "custom", v[REPORT_PH_ARCH]);
    if (sc->kv_heads != sc->heads)
        report_fmt(shape, sizeof shape, "L = %s, h = %s, a = %s, %s KV heads", v[REPORT_PH_LAYERS],
                   v[REPORT_PH_HIDDEN], v[REPORT_PH_HEADS], v[REPORT_PH_KV_HEADS]);
    else
        report_fmt(shape, sizeof shape, "L = %s, h = %s, a = %s", v[REPORT_PH_LAYERS],
                   v[REPORT_PH_HIDDEN], v[REPORT_PH_HEADS]);
    report_fmt(ffn, sizeof ffn, "f = %s%s%s", v[REPORT_PH_FFN],
               sc->dropout ? ", dropout" : ", no dropout",
               sc->positions ? ", learned positions" : "");
    report_fmt(vocab, sizeof vocab, "V = %s, %s embedding", v[REPORT_PH_VOCAB],
               sc->tied ? "tied" : "untied");
    report_fmt(seq, sizeof seq, "s = %s, b = %s, global batch %s", v[REPORT_PH_SEQ],
               v[REPORT_PH_MICRO_BATCH], v[REPORT_PH_GLOBAL_BATCH]);
    struct model_bytes_per_param bpp = model_bytes_per_param(sc->precision);
    report_fmt(prec, sizeof prec, "%s: %u + %u + %u bytes/param", v[REPORT_PH_PRECISION],
               bpp.weights, bpp.grads, bpp.optimizer);
    report_fmt(act, sizeof act, "attention %s, recompute %s", v[REPORT_PH_ATTENTION],
               v[REPORT_PH_RECOMPUTE]);
    report_fmt(parallel, sizeof parallel, "%s", v[REPORT_PH_PARALLEL]);
    report_fmt(gpu, sizeof gpu, "%s", v[REPORT_PH_HARDWARE]);
    report_fmt(res, sizeof res, "%s kept free: budget %s", v[REPORT_PH_RESERVE],
               v[REPORT_PH_BUDGET]);
    report_fmt(psi, sizeof psi, "Ψ = %s (%s)", v[REPORT_PH_PARAMS], v[REPORT_PH_PARAMS_SHORT]);
    const char *rows[][4] = {
        {"model", model, "tokens", seq},
        {"shape", shape, "precision", prec},
        {"MLP", ffn, "activations", act},
        {"vocabulary", vocab, "parallelism", parallel},
        {"parameters", psi, "GPUs", gpu},
        {"", "", "reserve", res},
    };
    struct doc_table t = {cols, 4, 0};
    doc_table_start(doc, &t, 6);
    for (size_t i = 0; i < 6; i++)
        doc_table_row(doc, &t, rows[i], DOC_ROW_PLAIN);
    doc_table_end(doc);
}

static void box_line(struct doc *doc, const char *line, void *ctx)
{
    struct doc_para *p = ctx;
    doc_text(doc, p->x, doc->y + p->size * 0.93, p->size, CANVAS_ALIGN_LEFT, p->bold, p->rgb, line);
    doc->y += p->lead;
}

/* The verdict: a tinted box with a coloured bar, the verdict in large type, the fix below. */
static void table_verdict(struct doc *doc, const struct report_sc *r)
{
    const char (*v)[REPORT_VALUE_MAX] = r->vals.v;
    bool fits = r->t.fits;
    char head[256], body[2 * REPORT_VALUE_MAX];
    report_fmt(head, sizeof head, "%s: peak %s %s budget %s", fits ? "Fits" : "Does not fit",
               v[REPORT_PH_PEAK], fits ? "≤" : ">", v[REPORT_PH_BUDGET]);
    report_fmt(body, sizeof body, "%s on %s. %s", v[REPORT_PH_HEADROOM], v[REPORT_PH_STAGE],
               v[REPORT_PH_FIX_SENTENCE]);
    body[0] = (char)(body[0] >= 'a' && body[0] <= 'z' ? body[0] - 32 : body[0]);
    double w = doc_width(doc) - 28;
    int lines = doc_lines(doc, body, DOC_BODY_PT, false, w);
    double h = 14 + 20 + lines * DOC_BODY_LEAD + 8;
    doc_need(doc, h + 8);
    double y0 = doc->y;
    doc_fill_rect(doc, DOC_M_LEFT, y0, doc_width(doc), h, fits ? DOC_OK_FILL : DOC_BAD_FILL);
    doc_fill_rect(doc, DOC_M_LEFT, y0, 5, h, fits ? DOC_OK : DOC_BAD);
    doc->y = y0 + 10;
    struct doc_para hp = {DOC_M_LEFT + 18, 14, 20, true, fits ? DOC_OK : DOC_BAD, NULL, true};
    box_line(doc, head, &hp);
    doc->y += 2;
    struct doc_para bp = {DOC_M_LEFT + 18, DOC_BODY_PT, DOC_BODY_LEAD, false, DOC_TEXT, NULL, true};
    doc_wrap(doc, body, DOC_BODY_PT, false, w, box_line, &bp);
    doc->y = y0 + h + 12;
}

#define TERMS_FORMULA_MAX 128

/* The formulas of the three model states: weights, gradients, optimizer (ZeRO divides by dp). */
static void terms_states_formulas(const struct scenario *sc, const struct model_gpu *g,
                                  char f[][TERMS_FORMULA_MAX])
{
    struct model_bytes_per_param bpp = model_bytes_per_param(sc->precision);
    char pcount[48];
    report_fmt_count(pcount, sizeof pcount, g->params);
    const char *dp_note = sc->dp > 1 ? " / dp" : "";
    report_fmt(f[0], TERMS_FORMULA_MAX, "%u B × %s params%s", bpp.weights, pcount,
               sc->zero >= 3 ? dp_note : "");
    report_fmt(f[1], TERMS_FORMULA_MAX, "%u B × params%s", bpp.grads,
               sc->zero >= 2 ? dp_note : "");
    if (sc->offload == OFFLOAD_OPTIMIZER)
        report_fmt(f[2], TERMS_FORMULA_MAX, "%u B × params, in CPU memory", bpp.optimizer);
    else
        report_fmt(f[2], TERMS_FORMULA_MAX, "%u B × params%s", bpp.optimizer,
                   sc->zero >= 1 ? dp_note : "");
}

/* The stored activations: checkpoints plus one segment, or every layer of the stage. */
static void terms_stored_formula(const struct scenario *sc, const struct terms *t, char *buf,
                                 size_t size)
{
    const char *c_text = sc->sp && sc->tp > 1 ? "c = 2sbh/t" : "c = 2sbh";
    const char *m = t->peak_stage == MODEL_STAGE_FIRST ? "pp" : "1";
    uint64_t stage_layers = sc->layers / sc->pp;
    uint64_t k = sc->ckpt_every < stage_layers ? sc->ckpt_every : stage_layers;
    if (sc->recompute == RECOMPUTE_EVERY_K && sc->pp == 1)
        report_fmt(buf, size, "⌈L/k⌉·c + k·A, k = %llu, %s", (unsigned long long)k, c_text);
    else if (sc->recompute == RECOMPUTE_EVERY_K) /* a segment stays inside a stage */
        report_fmt(buf, size, "m·⌈(L/pp)/k⌉·c + k·A, m = %s, k = %llu, %s", m,
                   (unsigned long long)k, c_text);
    else if (sc->pp > 1)
        report_fmt(buf, size, "%s micro-batches × L/pp layers × A", m);
    else
        report_fmt(buf, size, "L × A = %llu × A", (unsigned long long)sc->layers);
}

/* The formula column, one row per term from weights to logits. */
static void terms_formulas(const struct report_sc *r, const struct model_gpu *g,
                           char f[6][TERMS_FORMULA_MAX])
{
    const struct scenario *sc = r->sc;
    terms_states_formulas(sc, g, f);
    char af[96];
    report_values_act_formula(sc, af, sizeof af);
    report_fmt(f[3], TERMS_FORMULA_MAX, "A = %s", af);
    terms_stored_formula(sc, &r->t, f[4], TERMS_FORMULA_MAX);
    if (g->logits_bytes == 0)
        report_fmt(f[5], TERMS_FORMULA_MAX, "none here: the last stage holds them");
    else
        report_fmt(f[5], TERMS_FORMULA_MAX, "4sbV%s (fp32 logits of the loss)",
                   sc->tp > 1 ? " / t" : "");
}

/* The bytes, size and share of the peak of each row; one layer and the budget get no share. */
static void terms_numbers(const struct report_sc *r, char by[8][32], char sz[8][32],
                          char pc[8][16])
{
    const struct terms *t = &r->t;
    const uint64_t vals[] = {t->weights_bytes, t->grads_bytes, t->optimizer_bytes,
                             t->act_layer_bytes, t->act_bytes, t->logits_bytes, t->peak_bytes,
                             t->budget_bytes};
    for (size_t i = 0; i < 8; i++) {
        report_fmt_count(by[i], sizeof by[i], vals[i]);
        report_fmt_size(sz[i], sizeof sz[i], vals[i], r->units);
        double share = t->peak_bytes ? 100.0 * (double)vals[i] / (double)t->peak_bytes : 0;
        report_fmt(pc[i], sizeof pc[i], "%.1f%%", share);
    }
    pc[3][0] = '\0';
    pc[7][0] = '\0';
}

static void table_terms(struct doc *doc, const struct report_sc *r)
{
    static const struct doc_col cols[] = {
        {"term", 0.22, CANVAS_ALIGN_LEFT}, {"formula (this GPU)", 0.40, CANVAS_ALIGN_LEFT},
        {"bytes", 0.18, CANVAS_ALIGN_RIGHT}, {"size", 0.11, CANVAS_ALIGN_RIGHT},
        {"share", 0.09, CANVAS_ALIGN_RIGHT}};
    const struct terms *t = &r->t;
    char f[6][TERMS_FORMULA_MAX], by[8][32], sz[8][32], pc[8][16], budget_f[64];
    terms_formulas(r, &t->stage[t->peak_stage], f);
    terms_numbers(r, by, sz, pc);
    report_fmt(budget_f, sizeof budget_f, "GPU memory × (1 − %.2f)", r->sc->reserve);
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
    struct doc_table tb = {cols, 5, 0};
    doc_table_start(doc, &tb, 8);
    for (size_t i = 0; i < 8; i++)
        doc_table_row(doc, &tb, rows[i],
                      i != 6 ? DOC_ROW_PLAIN : t->fits ? DOC_ROW_OK : DOC_ROW_BAD);
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

static void table_ladder(struct doc *doc, const struct report_sc *r)
{
    static const struct doc_col cols[] = {
        {"rung", 0.15, CANVAS_ALIGN_LEFT}, {"adds to the rungs above", 0.39, CANVAS_ALIGN_LEFT},
        {"b", 0.06, CANVAS_ALIGN_RIGHT}, {"peak", 0.12, CANVAS_ALIGN_RIGHT},
        {"fits", 0.08, CANVAS_ALIGN_CENTER}, {"added time / step", 0.20, CANVAS_ALIGN_RIGHT}};
    const struct plan *p = &r->plan;
    struct doc_table tb = {cols, 6, 0};
    char b[32], peak[32], extra[48], settings[256], prev[256] = "", delta[256], label[64];
    doc_table_start(doc, &tb, p->n_rungs + 1 < 4 ? p->n_rungs + 1 : 4);
    report_fmt_u64(b, sizeof b, r->sc->micro_batch);
    report_fmt_size(peak, sizeof peak, r->t.peak_bytes, r->units);
    const char *base[] = {"as configured", "", b, peak, r->t.fits ? "yes" : "no", "–"};
    doc_table_row(doc, &tb, base, r->t.fits ? DOC_ROW_OK : DOC_ROW_PLAIN);
    uint64_t prev_b = r->sc->micro_batch;
    for (size_t i = 0; i < p->n_rungs; i++) {
        const struct plan_rung *g = &p->rungs[i];
        plan_rung_settings(p, i, settings, sizeof settings);
        report_delta(prev, settings, delta, sizeof delta);
        memcpy(prev, settings, sizeof prev);
        if (g->sc.micro_batch != prev_b && !strstr(delta, "micro_batch=")) {
            /* b went back up to the scenario's own, which the settings do not list */
            size_t len = strlen(delta);
            report_fmt(delta + len, sizeof delta - len, "%smicro_batch=%llu", len ? " " : "",
                       (unsigned long long)g->sc.micro_batch);
        }
        prev_b = g->sc.micro_batch;
        report_values_rung_label(g, label, sizeof label);
        report_fmt_u64(b, sizeof b, g->sc.micro_batch);
        report_fmt_size(peak, sizeof peak, g->terms.peak_bytes, r->units);
        if (g->extra_time_s > 1e-9) {
            report_fmt_seconds(extra, sizeof extra, g->extra_time_s);
        } else if (g->extra_time_s < -1e-9) { /* e.g. tp: each GPU's share of the work shrinks */
            char abs_s[40];
            report_fmt_seconds(abs_s, sizeof abs_s, -g->extra_time_s);
            report_fmt(extra, sizeof extra, "−%s", abs_s);
        } else {
            report_fmt(extra, sizeof extra, "–");
        }
        if (g->thin_matmuls) {
            size_t len = strlen(extra);
            report_fmt(extra + len, sizeof extra - len, " (thin)");
        }
        const char *row[] = {label, delta, b, peak, g->fits ? "yes" : "no", extra};
        doc_table_row(doc, &tb, row, (int)i == p->fix_rung ? DOC_ROW_OK : DOC_ROW_PLAIN);
    }
    doc_table_end(doc);
}

static void table_microbatch(struct doc *doc, const struct report_sc *r)
{
    static const struct doc_col cols[] = {
        {"activation mode", 0.22, CANVAS_ALIGN_LEFT}, {"settings", 0.38, CANVAS_ALIGN_LEFT},
        {"largest b", 0.14, CANVAS_ALIGN_RIGHT}, {"tokens / micro-batch", 0.26, CANVAS_ALIGN_RIGHT}};
    static const char *const settings[PLAN_MODES] = {
        "attention=plain recompute=none", "attention=flash recompute=none",
        "attention=plain recompute=selective", "attention=flash recompute=full"};
    struct doc_table tb = {cols, 4, 0};
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
        doc_table_row(doc, &tb, row, mb ? DOC_ROW_PLAIN : DOC_ROW_BAD);
    }
    doc_table_end(doc);
}

void report_tables_draw(struct doc *doc, const struct report_sc *r, const char *name)
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

void report_tables_summary(struct doc *doc, const struct report_sc *scs, size_t n)
{
    static const struct doc_col cols[] = {
        {"scenario", 0.26, CANVAS_ALIGN_LEFT}, {"verdict", 0.13, CANVAS_ALIGN_LEFT},
        {"peak", 0.11, CANVAS_ALIGN_RIGHT}, {"budget", 0.11, CANVAS_ALIGN_RIGHT},
        {"cheapest fix", 0.39, CANVAS_ALIGN_LEFT}};
    struct doc_table tb = {cols, 5, 0};
    doc_table_start(doc, &tb, n < 3 ? n : 3);
    for (size_t i = 0; i < n; i++) {
        const struct report_sc *r = &scs[i];
        const char (*v)[REPORT_VALUE_MAX] = r->vals.v;
        char fix[REPORT_VALUE_MAX + 64];
        if (r->plan.fix == PLAN_FIX_NONE)
            report_fmt(fix, sizeof fix, "–");
        else if (r->plan.fix == PLAN_FIX_NOTHING)
            report_fmt(fix, sizeof fix, "none fits (states need %s GPUs)",
                       v[REPORT_PH_GPUS_FOR_STATES]);
        else
            report_fmt(fix, sizeof fix, "%s → %s", plan_fix_name(r->plan.fix),
                       v[REPORT_PH_FIX_PEAK]);
        const char *row[] = {v[REPORT_PH_NAME], r->t.fits ? "fits" : "OOM", v[REPORT_PH_PEAK],
                             v[REPORT_PH_BUDGET], fix};
        doc_table_row(doc, &tb, row, r->t.fits ? DOC_ROW_OK : DOC_ROW_BAD);
    }
    doc_table_end(doc);
}

double report_tables_keep_height(const char *name)
{
    return strcmp(name, "verdict") == 0 ? 80 : 4 * DOC_ROW_H;
}
