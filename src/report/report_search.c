/* report_search: see report_search.h. */
#include "report/report_search.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "base/numfmt.h"
#include "base/out.h"
#include "base/paths.h"
#include "base/strbuf.h"
#include "draw/chart.h"
#include "model/model.h"
#include "model/states.h"
#include "plan/deadline.h"
#include "report/doc.h"
#include "report/report_charts.h"
#include "report/report_phrases.h"
#include "report/report_tables.h"
#include "report/report_values.h"
#include "report/template.h"

#define CELL REPORT_CELL_MAX
#define VALUE REPORT_VALUE_MAX

#define SCATTER_H 250.0 /* pt: the scatter's height on the page */
#define CURVE_H 230.0   /* pt: the scaling curve's */

/* One run: the words and the units. */
struct search_run {
    struct report_phrases ph;
    struct template overrides; /* the template whose '@phrase' blocks replace the catalogue's */
    enum units units;
};

/* ------------------------------------------------------------------------------------------ */
/* A job's layouts, as the pages draw them.                                                    */

void report_search_plot_init(struct report_search_plot *p)
{
    memset(p, 0, sizeof *p);
    chart_map_init(&p->map);
}

void report_search_plot_note(struct report_search_plot *p, const struct search_point *pt)
{
    p->n_points++;
    p->max_bytes = fmax(p->max_bytes, (double)pt->peak_bytes);
    chart_map_add(&p->map, pt->tp, pt->pp, pt->step_time_s, pt->fits);
    double s = pt->step_time_s;
    if (!(s > 0) || !isfinite(s))
        return;
    p->min_s = p->timed ? fmin(p->min_s, s) : s;
    p->max_s = p->timed ? fmax(p->max_s, s) : s;
    p->timed = true;
}

void report_search_plot_axes(struct report_search_plot *p, uint64_t gpu_bytes)
{
    chart_scatter_init(&p->scatter, p->min_s, p->max_s, p->max_bytes, gpu_bytes);
}

void report_search_plot_bin(struct report_search_plot *p, double step_s, uint64_t peak_bytes,
                            bool fits)
{
    chart_scatter_add(&p->scatter, step_s, peak_bytes, fits);
}

/* ------------------------------------------------------------------------------------------ */
/* Values.                                                                                     */

static uint64_t or_one(uint64_t v)
{
    return v ? v : 1;
}

/* A layout as the CSV columns name its choices (phrase search_layout). */
static void search_layout_text(struct search_run *run, const struct scenario *sc, char *buf,
                               size_t size)
{
    char tp[24], pp[24], vpp[24], cp[24], ep[24], dp[24], zero[24], b[24];
    numfmt_u64(tp, sizeof tp, sc->tp);
    numfmt_u64(pp, sizeof pp, sc->pp);
    numfmt_u64(vpp, sizeof vpp, or_one(sc->vpp));
    numfmt_u64(cp, sizeof cp, or_one(sc->cp));
    numfmt_u64(ep, sizeof ep, or_one(sc->ep));
    numfmt_u64(dp, sizeof dp, sc->dp);
    numfmt(zero, sizeof zero, "%u", sc->zero);
    numfmt_u64(b, sizeof b, sc->micro_batch);
    report_say(buf, size, &run->ph, NULL, REPORT_PHRASE_SEARCH_LAYOUT, "tp", tp, "pp", pp, "vpp",
               vpp, "cp", cp, "ep", ep, "dp", dp, "zero", zero, "b", b, NULL);
}

static enum report_phrase search_offload_phrase(enum offload o)
{
    return o == OFFLOAD_OPTIMIZER     ? REPORT_PHRASE_SEARCH_OFFLOAD_OPTIMIZER
           : o == OFFLOAD_CHECKPOINTS ? REPORT_PHRASE_SEARCH_OFFLOAD_CHECKPOINTS
                                      : REPORT_PHRASE_SEARCH_OFFLOAD_NONE;
}

/*
 * The choices the job's row pins, as the CSV names them ("tp=8, zero=1"): the columns of
 * SCENARIO_PIN_*, in that order, with the row's values.
 */
static void search_pinned_list(const struct scenario *job, char *buf, size_t size)
{
    static const char *const offloads[] = {"none", "optimizer", "checkpoints"};
    struct strbuf sb;
    strbuf_init_fixed(&sb, buf, size);
    const struct {
        unsigned pin;
        const char *column;
        uint64_t value;
    } nums[] = {{SCENARIO_PIN_DP, "dp", job->dp},
                {SCENARIO_PIN_TP, "tp", job->tp},
                {SCENARIO_PIN_PP, "pp", job->pp},
                {SCENARIO_PIN_VPP, "vpp", or_one(job->vpp)},
                {SCENARIO_PIN_CP, "cp", or_one(job->cp)},
                {SCENARIO_PIN_EP, "ep", or_one(job->ep)},
                {SCENARIO_PIN_ETP, "etp", job->etp},
                {SCENARIO_PIN_ZERO, "zero", job->zero},
                {SCENARIO_PIN_MICRO_BATCH, "micro_batch", job->micro_batch},
                {SCENARIO_PIN_ZERO_GROUP, "zero_group", job->zero_group}};
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++)
        if (job->pinned & nums[i].pin)
            strbuf_printf(&sb, "%s%s=%llu", sb.len ? ", " : "", nums[i].column,
                          (unsigned long long)nums[i].value);
    char rec[32];
    if (job->pinned & SCENARIO_PIN_SP)
        strbuf_printf(&sb, "%ssp=%s", sb.len ? ", " : "", job->sp ? "yes" : "no");
    if (job->pinned & SCENARIO_PIN_ATTENTION)
        strbuf_printf(&sb, "%sattention=%s", sb.len ? ", " : "",
                      scenario_attention_name(job->attention));
    if (job->pinned & SCENARIO_PIN_RECOMPUTE)
        strbuf_printf(&sb, "%srecompute=%s", sb.len ? ", " : "",
                      scenario_recompute_name(job, rec, sizeof rec));
    if (job->pinned & SCENARIO_PIN_OFFLOAD)
        strbuf_printf(&sb, "%soffload=%s", sb.len ? ", " : "",
                      offloads[(unsigned)job->offload <= OFFLOAD_CHECKPOINTS ? job->offload : 0]);
}

/* The training cell: precision, FP8, optimizer and what is trained (the catalogue's phrases for
 * the optimizer and the fine-tuning, as the scenario report's configuration shows them). */
static void search_training(struct search_run *run, const struct scenario *job, char *buf,
                            size_t size)
{
    static const enum report_phrase optim[] = {[OPTIM_ADAMW] = REPORT_PHRASE_OPTIM_ADAMW,
                                               [OPTIM_ADAMW_BF16] = REPORT_PHRASE_OPTIM_ADAMW_BF16,
                                               [OPTIM_ADAMW8BIT] = REPORT_PHRASE_OPTIM_ADAMW8BIT,
                                               [OPTIM_SGD] = REPORT_PHRASE_OPTIM_SGD};
    struct report_phrases *ph = &run->ph;
    char fp8[CELL] = "", opt[CELL], targets[CELL], rank[24], tuning[CELL];
    if (job->fp8 != FP8_NONE)
        report_say(fp8, sizeof fp8, ph, NULL, REPORT_PHRASE_SEARCH_FP8, "recipe",
                   scenario_fp8_name(job->fp8), NULL);
    report_say(opt, sizeof opt, ph, NULL,
               optim[(unsigned)job->optimizer <= OPTIM_SGD ? job->optimizer : OPTIM_ADAMW], NULL);
    report_say(targets, sizeof targets, ph, NULL,
               job->lora_targets == LORA_ALL_LINEAR ? REPORT_PHRASE_LORA_TARGETS_ALL
                                                    : REPORT_PHRASE_LORA_TARGETS_QV,
               NULL);
    numfmt_u64(rank, sizeof rank, job->lora_rank);
    bool fp32_base = states_per_param(job).weights == 4;
    enum report_phrase ft = job->finetune == FINETUNE_QLORA  ? REPORT_PHRASE_FINETUNE_QLORA
                            : job->finetune == FINETUNE_FULL ? REPORT_PHRASE_FINETUNE_FULL
                            : fp32_base                      ? REPORT_PHRASE_FINETUNE_LORA_FP32
                                                             : REPORT_PHRASE_FINETUNE_LORA;
    report_say(tuning, sizeof tuning, ph, NULL, ft, "rank", rank, "targets", targets, NULL);
    report_say(buf, size, ph, NULL, REPORT_PHRASE_SEARCH_TRAINING, "precision",
               scenario_precision_name(job->precision), "fp8", fp8, "optimizer", opt, "finetuning",
               tuning, NULL);
}

/* The GPUs cell: how many of which, and a node's; or that no count searched fits. */
static void search_gpus(struct search_run *run, const struct report_search_job *j, char *buf,
                        size_t size)
{
    const struct scenario *job = j->job;
    struct report_phrases *ph = &run->ph;
    char gpu[CELL], mem[32], gpus[24], per_node[24], hardware[CELL];
    if (job->gpu_preset[0])
        numfmt(gpu, sizeof gpu, "%s", job->gpu_preset);
    else
        report_say(gpu, sizeof gpu, ph, NULL, REPORT_PHRASE_GPU_UNNAMED, NULL);
    numfmt_gpu_mem(mem, sizeof mem, job->gpu_mem_bytes, run->units);
    numfmt_u64(per_node, sizeof per_node, job->gpus_per_node);
    if (j->gpus == 0) {
        report_say(buf, size, ph, NULL, REPORT_PHRASE_SEARCH_GPUS_NONE, "gpu", gpu, "gpu_mem", mem,
                   "per_node", per_node, NULL);
        return;
    }
    numfmt_count(gpus, sizeof gpus, j->gpus);
    enum report_phrase id = job->gpu_preset[0] ? REPORT_PHRASE_HARDWARE_PRESET
                            : j->gpus == 1     ? REPORT_PHRASE_HARDWARE_ONE
                                               : REPORT_PHRASE_HARDWARE_MANY;
    report_say(hardware, sizeof hardware, ph, NULL, id, "gpus", gpus, "gpu", gpu, "gpu_mem", mem,
               NULL);
    report_say(buf, size, ph, NULL, REPORT_PHRASE_SEARCH_GPUS, "hardware", hardware, "per_node",
               per_node, NULL);
}

/* The budget of one GPU (model_budget_bytes) and the reserve ("15%"). */
static void search_budget(struct search_run *run, const struct scenario *job, char *budget,
                          size_t budget_size, char *reserve, size_t reserve_size)
{
    numfmt_size(budget, budget_size, model_budget_bytes(job), run->units);
    numfmt(reserve, reserve_size, "%.0f%%", job->reserve * 100);
}

/* ------------------------------------------------------------------------------------------ */
/* The first page: a row per job, the note on the cost model.                                  */

static void search_summary(struct doc *doc, struct search_run *run,
                           const struct report_search_job *jobs, size_t n)
{
    static const struct doc_col layout[] = {
        {NULL, 0.18, CANVAS_ALIGN_LEFT, true},   {NULL, 0.08, CANVAS_ALIGN_RIGHT, false},
        {NULL, 0.13, CANVAS_ALIGN_RIGHT, false}, {NULL, 0.11, CANVAS_ALIGN_RIGHT, false},
        {NULL, 0.28, CANVAS_ALIGN_LEFT, true},   {NULL, 0.11, CANVAS_ALIGN_RIGHT, false},
        {NULL, 0.11, CANVAS_ALIGN_RIGHT, false}};
    struct report_phrases *ph = &run->ph;
    char text[2 * VALUE], count[32], jobs_text[VALUE], note[VALUE];
    report_say(text, sizeof text, ph, NULL, REPORT_PHRASE_SEARCH_TITLE, NULL);
    doc_heading(doc, 1, text);
    numfmt_count(count, sizeof count, n);
    report_say(jobs_text, sizeof jobs_text, ph, NULL,
               n == 1 ? REPORT_PHRASE_SEARCH_JOBS_ONE : REPORT_PHRASE_SEARCH_JOBS_MANY, "n", count,
               NULL);
    report_say(note, sizeof note, ph, NULL,
               run->units == UNITS_GIB ? REPORT_PHRASE_UNIT_NOTE_GIB : REPORT_PHRASE_UNIT_NOTE_GB,
               NULL);
    report_say(text, sizeof text, ph, NULL, REPORT_PHRASE_SEARCH_INTRO, "jobs", jobs_text,
               "unit_note", note, NULL);
    doc_paragraph(doc, text, 0, NULL);

    char heads[7][CELL];
    struct doc_col cols[7];
    report_cells(ph, NULL, REPORT_PHRASE_SEARCH_SUMMARY_COLUMNS, heads, 7);
    for (size_t i = 0; i < 7; i++) {
        cols[i] = layout[i];
        cols[i].head = heads[i];
    }
    struct doc_table t = {cols, 7, 0};
    doc_table_start(doc, &t, n < 3 ? n : 3);
    for (size_t i = 0; i < n && !doc->error; i++) {
        const struct report_search_job *j = &jobs[i];
        char gpus[24], tried[32], fit[32], best[VALUE], time[32], peak[32];
        numfmt_count(gpus, sizeof gpus, j->gpus);
        numfmt_count(tried, sizeof tried, j->result->layouts_tried);
        numfmt_count(fit, sizeof fit, j->result->layouts_fit);
        bool any = j->result->n_top > 0 && j->top;
        if (any) {
            search_layout_text(run, &j->top[0].sc, best, sizeof best);
            numfmt_seconds(time, sizeof time, j->top[0].step_time_s);
            numfmt_size(peak, sizeof peak, j->top[0].peak_bytes, run->units);
        } else {
            report_say(best, sizeof best, ph, NULL, REPORT_PHRASE_SEARCH_SUMMARY_NONE, NULL);
        }
        const char *cells[7] = {j->name,          gpus, tried, fit, best, any ? time : NULL,
                                any ? peak : NULL};
        doc_table_row(doc, &t, cells, any ? DOC_ROW_PLAIN : DOC_ROW_BAD);
    }
    doc_table_end(doc);

    report_say(text, sizeof text, ph, NULL, REPORT_PHRASE_SEARCH_COST_NOTE, NULL);
    doc_paragraph(doc, text, 0, NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* A job's section.                                                                            */

/* The configuration: four rows of two label-value pairs. */
static void search_config(struct doc *doc, struct search_run *run,
                          const struct report_search_job *j)
{
    static const struct doc_col layout[] = {{NULL, 0.12, CANVAS_ALIGN_LEFT, false},
                                            {NULL, 0.38, CANVAS_ALIGN_LEFT, true},
                                            {NULL, 0.12, CANVAS_ALIGN_LEFT, false},
                                            {NULL, 0.38, CANVAS_ALIGN_LEFT, true}};
    const struct scenario *job = j->job;
    struct report_phrases *ph = &run->ph;
    char labels[8][CELL], model[CELL], shape[CELL], params[32] = "–", pinned[VALUE], tokens[CELL],
                                                    training[VALUE], gpus[VALUE], budget[VALUE];
    report_cells(ph, NULL, REPORT_PHRASE_SEARCH_CONFIG_LABELS, labels, 8);
    if (job->model_preset[0])
        numfmt(model, sizeof model, "%s", job->model_preset);
    else
        report_say(model, sizeof model, ph, NULL, REPORT_PHRASE_MODEL_CUSTOM, NULL);
    char l[24], h[24], a[24], kv[24], v[24], e[24], k[24];
    numfmt_u64(l, sizeof l, job->layers);
    numfmt_u64(h, sizeof h, job->hidden);
    numfmt_u64(a, sizeof a, job->heads);
    numfmt_u64(kv, sizeof kv, job->kv_heads);
    numfmt_u64(v, sizeof v, job->vocab);
    numfmt_u64(e, sizeof e, job->experts);
    numfmt_u64(k, sizeof k, job->top_k);
    if (job->experts > 0)
        report_say(shape, sizeof shape, ph, NULL, REPORT_PHRASE_SEARCH_SHAPE_MOE, "layers", l,
                   "hidden", h, "heads", a, "experts", e, "top_k", k, NULL);
    else
        report_say(shape, sizeof shape, ph, NULL, REPORT_PHRASE_SEARCH_SHAPE, "layers", l, "hidden",
                   h, "heads", a, "kv_heads", kv, "vocab", v, NULL);
    uint64_t psi;
    if (model_params(job, &psi) == MODEL_OK)
        numfmt_short(params, sizeof params, psi);
    char list[VALUE];
    search_pinned_list(job, list, sizeof list);
    if (list[0])
        report_say(pinned, sizeof pinned, ph, NULL, REPORT_PHRASE_SEARCH_PINNED, "list", list,
                   NULL);
    else
        report_say(pinned, sizeof pinned, ph, NULL, REPORT_PHRASE_SEARCH_PINNED_NONE, NULL);
    char seq[24], batch[24];
    numfmt_count(seq, sizeof seq, job->seq);
    numfmt_count(batch, sizeof batch, job->global_batch);
    report_say(tokens, sizeof tokens, ph, NULL, REPORT_PHRASE_SEARCH_TOKENS, "seq", seq,
               "global_batch", batch, NULL);
    search_training(run, job, training, sizeof training);
    search_gpus(run, j, gpus, sizeof gpus);
    char b[32], reserve[24], mem[32];
    search_budget(run, job, b, sizeof b, reserve, sizeof reserve);
    numfmt_gpu_mem(mem, sizeof mem, job->gpu_mem_bytes, run->units);
    report_say(budget, sizeof budget, ph, NULL, REPORT_PHRASE_SEARCH_BUDGET, "budget", b, "reserve",
               reserve, "gpu_mem", mem, NULL);

    struct doc_col cols[4];
    for (size_t i = 0; i < 4; i++) {
        cols[i] = layout[i];
        cols[i].head = "";
    }
    const char *rows[4][4] = {{labels[0], model, labels[4], tokens},
                              {labels[1], shape, labels[5], training},
                              {labels[2], params, labels[6], gpus},
                              {labels[3], pinned, labels[7], budget}};
    /* A table without a header row: its rows only, between two rules. */
    struct doc_table t = {cols, 4, 0};
    doc_need(doc, 4 * DOC_ROW_H + 12);
    doc_hline(doc, DOC_M_LEFT, DOC_M_LEFT + doc_width(doc), doc->y, 0.6, DOC_RULE);
    doc->y += 2;
    for (size_t i = 0; i < 4; i++)
        doc_table_row(doc, &t, rows[i], DOC_ROW_PLAIN);
    doc_table_end(doc);
}

/* The sentence under the configuration: the counts, and the fastest layout. */
static void search_verdict(struct doc *doc, struct search_run *run,
                           const struct report_search_job *j)
{
    struct report_phrases *ph = &run->ph;
    char text[2 * VALUE], gpus[24], tried[32], fit[32], evaluated[32], budget[32], reserve[24];
    numfmt_count(gpus, sizeof gpus, j->gpus);
    numfmt_count(tried, sizeof tried, j->result->layouts_tried);
    numfmt_count(fit, sizeof fit, j->result->layouts_fit);
    numfmt_count(evaluated, sizeof evaluated, j->plot ? j->plot->n_points : 0);
    search_budget(run, j->job, budget, sizeof budget, reserve, sizeof reserve);
    if (j->gpus == 0) {
        report_say(text, sizeof text, ph, NULL, REPORT_PHRASE_SEARCH_VERDICT_NO_GPUS, NULL);
    } else if (j->result->n_top > 0 && j->top) {
        const struct search_layout *best = &j->top[0];
        char layout[VALUE], time[32], peak[32];
        search_layout_text(run, &best->sc, layout, sizeof layout);
        numfmt_seconds(time, sizeof time, best->step_time_s);
        numfmt_size(peak, sizeof peak, best->peak_bytes, run->units);
        numfmt_size(budget, sizeof budget, best->budget_bytes, run->units);
        report_say(text, sizeof text, ph, NULL, REPORT_PHRASE_SEARCH_VERDICT, "gpus", gpus, "tried",
                   tried, "fit", fit, "evaluated", evaluated, "layout", layout, "step_time", time,
                   "peak", peak, "budget", budget, NULL);
    } else {
        report_say(text, sizeof text, ph, NULL, REPORT_PHRASE_SEARCH_VERDICT_NONE, "gpus", gpus,
                   "tried", tried, "evaluated", evaluated, "budget", budget, NULL);
    }
    doc_paragraph(doc, text, 0, NULL);
}

/* The fastest layouts, the best first and tinted. */
static void search_top(struct doc *doc, struct search_run *run, const struct report_search_job *j)
{
    /* Wide enough for the headers, a dp of four digits and "checkpoints" in the table's type. */
    static const struct doc_col layout[14] = {
        {NULL, 0.055, CANVAS_ALIGN_RIGHT, false}, {NULL, 0.04, CANVAS_ALIGN_RIGHT, false},
        {NULL, 0.04, CANVAS_ALIGN_RIGHT, false},  {NULL, 0.05, CANVAS_ALIGN_RIGHT, false},
        {NULL, 0.04, CANVAS_ALIGN_RIGHT, false},  {NULL, 0.04, CANVAS_ALIGN_RIGHT, false},
        {NULL, 0.075, CANVAS_ALIGN_RIGHT, false}, {NULL, 0.065, CANVAS_ALIGN_RIGHT, false},
        {NULL, 0.1, CANVAS_ALIGN_LEFT, false},    {NULL, 0.115, CANVAS_ALIGN_LEFT, false},
        {NULL, 0.125, CANVAS_ALIGN_LEFT, false},  {NULL, 0.04, CANVAS_ALIGN_RIGHT, false},
        {NULL, 0.1, CANVAS_ALIGN_RIGHT, false},   {NULL, 0.115, CANVAS_ALIGN_RIGHT, false}};
    size_t n = j->top ? j->result->n_top : 0;
    if (n == 0)
        return;
    struct report_phrases *ph = &run->ph;
    char heading[VALUE], count[24], heads[14][CELL];
    numfmt_u64(count, sizeof count, n);
    report_say(heading, sizeof heading, ph, NULL, REPORT_PHRASE_SEARCH_TOP_HEADING, "n", count,
               NULL);
    doc_need(doc, doc_heading_height(doc, 2, heading) + 3 * DOC_ROW_H);
    doc_heading(doc, 2, heading);
    report_cells(ph, NULL, REPORT_PHRASE_SEARCH_TOP_COLUMNS, heads, 14);
    struct doc_col cols[14];
    for (size_t i = 0; i < 14; i++) {
        cols[i] = layout[i];
        cols[i].head = heads[i];
    }
    struct doc_table t = {cols, 14, 0};
    doc_table_start(doc, &t, n < 3 ? n : 3);
    for (size_t i = 0; i < n && !doc->error; i++) {
        const struct search_layout *l = &j->top[i];
        const struct scenario *sc = &l->sc;
        char v[14][CELL];
        numfmt_u64(v[0], CELL, i + 1);
        numfmt_u64(v[1], CELL, sc->tp);
        numfmt_u64(v[2], CELL, sc->pp);
        numfmt_u64(v[3], CELL, or_one(sc->vpp));
        numfmt_u64(v[4], CELL, or_one(sc->cp));
        numfmt_u64(v[5], CELL, or_one(sc->ep));
        numfmt_count(v[6], CELL, sc->dp);
        numfmt(v[7], CELL, "%u", sc->zero);
        numfmt(v[8], CELL, "%s", scenario_attention_name(sc->attention));
        char rec[32];
        numfmt(v[9], CELL, "%s", scenario_recompute_name(sc, rec, sizeof rec));
        report_say(v[10], CELL, ph, NULL, search_offload_phrase(sc->offload), NULL);
        numfmt_u64(v[11], CELL, sc->micro_batch);
        numfmt_size(v[12], CELL, l->peak_bytes, run->units);
        numfmt_seconds(v[13], CELL, l->step_time_s);
        const char *cells[14];
        for (size_t c = 0; c < 14; c++)
            cells[c] = v[c];
        doc_table_row(doc, &t, cells, i == 0 ? DOC_ROW_OK : DOC_ROW_PLAIN);
    }
    doc_table_end(doc);
}

/* The height of a caption under a chart. */
static double search_caption_height(struct doc *doc, const char *text)
{
    return doc_lines(doc, text, DOC_BODY_PT, false, doc_width(doc)) * DOC_BODY_LEAD + 6;
}

/* What a legend's count adds when the chart draws fewer layouts (drawn, those evaluated one by
 * one) than it counts (total): "; 12,067 drawn"; else nothing. */
static void search_drawn(struct search_run *run, uint64_t drawn, uint64_t total, char *buf,
                         size_t size)
{
    buf[0] = '\0';
    if (drawn == total)
        return;
    char n[32];
    numfmt_count(n, sizeof n, drawn);
    report_say(buf, size, &run->ph, NULL, REPORT_PHRASE_SEARCH_SCATTER_DRAWN, "n", n, NULL);
}

/* The scatter of every layout evaluated, its caption under it. */
static void search_scatter(struct doc *doc, struct search_run *run,
                           const struct report_search_job *j, const struct chart_scatter *s)
{
    struct report_phrases *ph = &run->ph;
    const struct scenario *job = j->job;
    char title[VALUE], x_title[CELL], y_title[CELL], fits[CELL], oom[CELL], best[CELL], gpu[CELL],
        budget_line[CELL], caption[2 * VALUE];
    char n_fit[32], n_oom[32], mem[32], budget[32], reserve[24], evaluated[32], tried[32],
        marks[32];
    report_say(title, sizeof title, ph, NULL, REPORT_PHRASE_SEARCH_SCATTER_TITLE, NULL);
    report_say(x_title, sizeof x_title, ph, NULL,
               s->x_log ? REPORT_PHRASE_SEARCH_SCATTER_X_LOG : REPORT_PHRASE_SEARCH_SCATTER_X,
               NULL);
    report_say(y_title, sizeof y_title, ph, NULL, REPORT_PHRASE_SEARCH_SCATTER_Y, "units",
               units_name(run->units), NULL);
    /* The legend counts what the sentence above counts, the layouts that fit and those that do
     * not; and, where some were counted without being evaluated one by one, how many it draws. */
    const struct search_result *res = j->result;
    uint64_t fit_total = res->layouts_fit;
    uint64_t oom_total = res->layouts_tried > fit_total ? res->layouts_tried - fit_total : 0;
    char drawn_fit[CELL] = "", drawn_oom[CELL] = "";
    search_drawn(run, s->n[1], fit_total, drawn_fit, sizeof drawn_fit);
    search_drawn(run, s->n[0], oom_total, drawn_oom, sizeof drawn_oom);
    numfmt_count(n_fit, sizeof n_fit, fit_total);
    numfmt_count(n_oom, sizeof n_oom, oom_total);
    report_say(fits, sizeof fits, ph, NULL, REPORT_PHRASE_SEARCH_SCATTER_FITS, "n", n_fit, "drawn",
               drawn_fit, NULL);
    report_say(oom, sizeof oom, ph, NULL, REPORT_PHRASE_SEARCH_SCATTER_OOM, "n", n_oom, "drawn",
               drawn_oom, NULL);
    char time[32], peak[32];
    numfmt_seconds(time, sizeof time, s->best_x_s);
    numfmt_size(peak, sizeof peak, (uint64_t)s->best_y_bytes, run->units);
    report_say(best, sizeof best, ph, NULL, REPORT_PHRASE_SEARCH_SCATTER_BEST, "step_time", time,
               "peak", peak, NULL);
    numfmt_gpu_mem(mem, sizeof mem, job->gpu_mem_bytes, run->units);
    report_say(gpu, sizeof gpu, ph, NULL, REPORT_PHRASE_SEARCH_SCATTER_GPU, "gpu_mem", mem, NULL);
    search_budget(run, job, budget, sizeof budget, reserve, sizeof reserve);
    report_say(budget_line, sizeof budget_line, ph, NULL, REPORT_PHRASE_SEARCH_SCATTER_BUDGET,
               "reserve", reserve, "budget", budget, NULL);
    numfmt_count(evaluated, sizeof evaluated, j->plot->n_points);
    numfmt_count(tried, sizeof tried, j->result->layouts_tried);
    numfmt_count(marks, sizeof marks, s->marks);
    report_say(caption, sizeof caption, ph, NULL, REPORT_PHRASE_SEARCH_SCATTER_CAPTION, "evaluated",
               evaluated, "tried", tried, "marks", marks, NULL);
    struct chart_layouts d = {.title = title,
                              .x_title = x_title,
                              .y_title = y_title,
                              .fits_label = fits,
                              .oom_label = oom,
                              .best_label = best,
                              .gpu_label = gpu,
                              .budget_label = budget_line,
                              .scatter = s,
                              .gpu_bytes = job->gpu_mem_bytes,
                              .reserve = job->reserve,
                              .units = run->units};
    doc_need(doc, SCATTER_H + 8 + search_caption_height(doc, caption));
    chart_layouts_draw(&doc->c, DOC_M_LEFT, doc->y, doc_width(doc), SCATTER_H, &d, NULL);
    doc->y += SCATTER_H + 8;
    doc_paragraph(doc, caption, 0, NULL);
}

/* The tp x pp map of the fastest step time, its caption under it. */
static void search_map(struct doc *doc, struct search_run *run, const struct chart_map *m)
{
    struct report_phrases *ph = &run->ph;
    char title[VALUE], x_title[CELL], y_title[CELL], oom[CELL], left_out[VALUE] = "",
                                                                caption[2 * VALUE];
    report_say(title, sizeof title, ph, NULL, REPORT_PHRASE_SEARCH_MAP_TITLE, NULL);
    report_say(x_title, sizeof x_title, ph, NULL, REPORT_PHRASE_SEARCH_MAP_X, NULL);
    report_say(y_title, sizeof y_title, ph, NULL, REPORT_PHRASE_SEARCH_MAP_Y, NULL);
    report_say(oom, sizeof oom, ph, NULL, REPORT_PHRASE_SEARCH_MAP_OOM, NULL);
    if (m->left_out > 0) {
        char n[32], max[24];
        numfmt_count(n, sizeof n, m->left_out);
        numfmt_u64(max, sizeof max, CHART_MAP_MAX);
        report_say(left_out, sizeof left_out, ph, NULL, REPORT_PHRASE_SEARCH_MAP_LEFT_OUT, "n", n,
                   "max", max, NULL);
    }
    report_say(caption, sizeof caption, ph, NULL, REPORT_PHRASE_SEARCH_MAP_CAPTION, "oom", oom,
               "left_out", left_out, NULL);
    struct chart_tp_pp d = {
        .title = title, .x_title = x_title, .y_title = y_title, .oom_label = oom, .map = m};
    double h = chart_map_height(m);
    doc_need(doc, h + 8 + search_caption_height(doc, caption));
    chart_map_draw(&doc->c, DOC_M_LEFT, doc->y, doc_width(doc), h, &d, NULL);
    doc->y += h + 8;
    doc_paragraph(doc, caption, 0, NULL);
}

/* The degrees of a layout that are not 1, as the CSV names them ("tp=8 pp=2 dp=4"): a point's
 * label on the scaling curve. */
static void search_curve_label(const struct scenario *sc, char *buf, size_t size)
{
    const struct {
        const char *name;
        uint64_t value;
    } degrees[] = {{"tp", sc->tp},         {"pp", or_one(sc->pp)}, {"vpp", or_one(sc->vpp)},
                   {"cp", or_one(sc->cp)}, {"ep", or_one(sc->ep)}, {"dp", sc->dp}};
    struct strbuf w;
    strbuf_init_fixed(&w, buf, size);
    for (size_t i = 0; i < sizeof degrees / sizeof degrees[0]; i++)
        if (degrees[i].value > 1)
            strbuf_printf(&w, "%s%s=%llu", w.len ? " " : "", degrees[i].name,
                          (unsigned long long)degrees[i].value);
    if (!w.len)
        strbuf_puts(&w, "dp=1");
}

/* --gpus-range: the scaling curve (doc/model.md 11.7), its caption under it. */
static void search_curve(struct doc *doc, struct search_run *run, const struct report_search_job *j)
{
    const struct report_search_curve *cv = j->curve;
    if (!cv || cv->n < 2)
        return;
    struct report_phrases *ph = &run->ph;
    struct chart_scaling d;
    memset(&d, 0, sizeof d);
    char title[VALUE], x_title[CELL], y_title[CELL], y2_title[CELL], step[CELL], rate[CELL],
        ideal[CELL], caption[2 * VALUE], first[32], last[32], eff[32];
    d.n = cv->n < CHART_SCALING_MAX ? cv->n : CHART_SCALING_MAX;
    for (size_t i = 0; i < d.n; i++) {
        struct deadline_cost cost;
        deadline_cost_of(&cv->best[i].sc, cv->gpus[i], cv->best[i].step_time_s, 0, 0, &cost);
        d.gpus[i] = cv->gpus[i];
        d.step_s[i] = cv->best[i].step_time_s;
        d.tokens_per_s[i] = cost.tokens_per_s / (double)cv->gpus[i];
        search_curve_label(&cv->best[i].sc, d.layout[i], sizeof d.layout[i]);
    }
    numfmt_count(first, sizeof first, d.gpus[0]);
    numfmt_count(last, sizeof last, d.gpus[d.n - 1]);
    numfmt(eff, sizeof eff, "%.0f%%", 100 * d.tokens_per_s[d.n - 1] / d.tokens_per_s[0]);
    report_say(title, sizeof title, ph, NULL, REPORT_PHRASE_SEARCH_CURVE_TITLE, NULL);
    report_say(x_title, sizeof x_title, ph, NULL, REPORT_PHRASE_SEARCH_CURVE_X, NULL);
    report_say(y_title, sizeof y_title, ph, NULL, REPORT_PHRASE_SEARCH_CURVE_Y, NULL);
    report_say(y2_title, sizeof y2_title, ph, NULL, REPORT_PHRASE_SEARCH_CURVE_Y2, NULL);
    report_say(step, sizeof step, ph, NULL, REPORT_PHRASE_SEARCH_CURVE_STEP, NULL);
    report_say(rate, sizeof rate, ph, NULL, REPORT_PHRASE_SEARCH_CURVE_RATE, NULL);
    report_say(ideal, sizeof ideal, ph, NULL, REPORT_PHRASE_SEARCH_CURVE_IDEAL, "gpus", first,
               NULL);
    report_say(caption, sizeof caption, ph, NULL, REPORT_PHRASE_SEARCH_CURVE_CAPTION, "first",
               first, "last", last, "efficiency", eff, NULL);
    d.title = title;
    d.x_title = x_title;
    d.y_title = y_title;
    d.y2_title = y2_title;
    d.step_label = step;
    d.rate_label = rate;
    d.ideal_label = ideal;
    doc_need(doc, CURVE_H + 8 + search_caption_height(doc, caption));
    chart_scaling_draw(&doc->c, DOC_M_LEFT, doc->y, doc_width(doc), CURVE_H, &d, NULL);
    doc->y += CURVE_H + 8;
    doc_paragraph(doc, caption, 0, NULL);
}

/* The charts of a job, when one of its layouts has a step time. */
static void search_charts(struct doc *doc, struct search_run *run,
                          const struct report_search_job *j)
{
    if (!j->plot || !j->plot->timed)
        return;
    search_scatter(doc, run, j, &j->plot->scatter);
    search_map(doc, run, &j->plot->map);
    search_curve(doc, run, j);
}

_Static_assert(DOC_RUNNING_BYTES >= SCENARIO_NAME_BYTES, "a job's name fits the running head");

static void search_job(struct doc *doc, struct search_run *run, const struct report_search_job *j)
{
    numfmt(doc->running, sizeof doc->running, "%s", j->name);
    doc_new_page(doc);
    doc_bookmark(doc, j->name);
    doc_heading(doc, 1, j->name);
    search_config(doc, run, j);
    search_verdict(doc, run, j);
    search_top(doc, run, j);
    search_charts(doc, run, j);
}

/* ------------------------------------------------------------------------------------------ */
/* The document.                                                                               */

/* The catalogue (opt->phrases, or the shipped one) and the template's phrases replacing some. */
static int search_load_phrases(struct search_run *run, const struct report_search_options *opt,
                               struct diag *d)
{
    char found[4096];
    const char *path = opt->phrases;
    if (!path) {
        if (paths_find_data("templates/phrases.tmpl", found, sizeof found) != 0) {
            diag_report(d, NULL, 0, "cannot find 'templates/phrases.tmpl'");
            return -1;
        }
        path = found;
    }
    if (report_phrases_load(&run->ph, path, d) != 0)
        return -1;
    if (!opt->phrase_template)
        return 0;
    struct template_names names;
    struct template_phrases known;
    names.placeholders = report_placeholders_names(&names.n_placeholders);
    names.charts = report_charts_names(&names.n_charts);
    names.tables = report_tables_names(&names.n_tables);
    report_phrases_known(&known);
    if (template_load_with_phrases(&run->overrides, opt->phrase_template, &names, &known, d) != 0)
        return -1;
    report_phrases_override(&run->ph, &run->overrides);
    return 0;
}

/* Lays the document out and writes it to path. */
static int search_document(struct search_run *run, const struct report_search_job *jobs, size_t n,
                           const char *path, struct diag *d)
{
    struct doc doc;
    char title[VALUE];
    report_say(title, sizeof title, &run->ph, NULL, REPORT_PHRASE_SEARCH_TITLE, NULL);
    int rc = -1;
    if (doc_init(&doc, title, false, NULL, d) != 0)
        goto out;
    char bookmark[VALUE];
    report_say(doc.running, sizeof doc.running, &run->ph, NULL, REPORT_PHRASE_SUMMARY_RUNNING_HEAD,
               NULL);
    report_say(bookmark, sizeof bookmark, &run->ph, NULL, REPORT_PHRASE_SUMMARY_BOOKMARK, NULL);
    doc_new_page(&doc);
    doc_bookmark(&doc, bookmark);
    search_summary(&doc, run, jobs, n);
    for (size_t i = 0; i < n && !doc.error; i++) {
        search_job(&doc, run, &jobs[i]);
        if (doc.c.error)
            doc_fail(&doc, doc.c.error);
    }
    if (run->ph.misses) {
        diag_report(d, NULL, 0, "cannot write '%s': %s (a bug in memfit)", path,
                    run->ph.first_miss);
        goto out;
    }
    if (doc_finish(&doc) != 0) {
        if (doc.error == -1)
            diag_report(d, NULL, 0, "cannot write '%s': out of memory", path);
        else if (doc.error == DOC_ERR_PAGES) /* a search of some 100,000 jobs */
            diag_report(d, NULL, 0,
                        "cannot write '%s': more than %zu pages, the most a PDF made with libharu "
                        "has",
                        path, doc.max_pages);
        else
            diag_report(d, NULL, 0, "cannot write '%s': libharu error 0x%04X", path,
                        (unsigned)doc.error);
        goto out;
    }
    rc = out_write_making_dirs(path, doc_write, &doc, d);
out:
    doc_release(&doc);
    return rc;
}

int report_search_write_opts(const struct report_search_job *jobs, size_t n, const char *path,
                             const struct report_search_options *opt, struct diag *d)
{
    if (n == 0) {
        diag_report(d, NULL, 0, "no job to report");
        return -1;
    }
    struct search_run run;
    memset(&run, 0, sizeof run);
    run.units = opt->units;
    report_phrases_init(&run.ph);
    template_init(&run.overrides);
    int rc = -1;
    if (search_load_phrases(&run, opt, d) == 0)
        rc = search_document(&run, jobs, n, path, d);
    report_phrases_release(&run.ph);
    template_release(&run.overrides);
    return rc;
}

int report_search_write(const struct report_search_job *jobs, size_t n, const char *path,
                        enum units u, struct diag *d)
{
    struct report_search_options opt = {.units = u};
    return report_search_write_opts(jobs, n, path, &opt, d);
}
