/* searchout: see searchout.h. */
#include "cli/searchout.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/textwidth.h"
#include "cli/texttable.h"
#include "input/scenario_csv.h"
#include "model/model.h"

/* What the table keeps of a row. */
struct searchout_table_row {
    char job[SCENARIO_NAME_BYTES];
    uint64_t rank, gpus, tp, pp, vpp, cp, ep, dp, b, peak, budget;
    unsigned zero;
    bool experts;
    double step_s;
    char attention[8], recompute[24], offload[16], schedule[12];
};

/* The table's line per job, under it. */
struct searchout_job {
    char name[SCENARIO_NAME_BYTES];
    uint64_t tried, fit, shown, gpus, from, to;
    uint64_t last; /* a range cut short by the work limit: the last count searched (else 0) */
    bool curve;    /* a count of the scaling curve */
    bool deadline; /* --tokens: below and below_days say what the count below takes */
    uint64_t below;
    double below_days, days, gpu_hours, cost;
};

void searchout_init(struct searchout *w, enum evalout_format format, enum units units, bool range,
                    FILE *out)
{
    memset(w, 0, sizeof *w);
    w->format = format;
    w->unit_bytes = units_bytes(units);
    w->unit_name = units_name(units);
    w->range = range;
    w->price = -1;
    w->out = out;
    w->table_cols = 80;
}

/* The job's name cut at a character so that with suffix it has at most SCENARIO_NAME_MAX
 * characters, then suffix. */
static void name_with(const char *job, const char *suffix, int n, char *buf, size_t size)
{
    size_t keep = SCENARIO_NAME_MAX - (size_t)n, bytes = 0, chars = 0;
    /* The first `keep` characters of the job's name (a UTF-8 continuation byte is no character). */
    for (; job[bytes]; bytes++) {
        if (((unsigned char)job[bytes] & 0xC0) != 0x80 && chars++ == keep)
            break;
    }
    snprintf(buf, size, "%.*s%s", (int)bytes, job, suffix);
}

void searchout_layout_name(const char *job, uint64_t rank, char *buf, size_t size)
{
    char suffix[24];
    int n = snprintf(suffix, sizeof suffix, "-%" PRIu64, rank);
    name_with(job, suffix, n, buf, size);
}

/* A row of the scaling curve: "JOB-16gpus", told apart from the ranks of the job's first count. */
static void curve_name(const char *job, uint64_t gpus, char *buf, size_t size)
{
    char suffix[32];
    int n = snprintf(suffix, sizeof suffix, "-%" PRIu64 "gpus", gpus);
    name_with(job, suffix, n, buf, size);
}

/* ---- CSV ---- */

static void put_csv_text(FILE *out, const char *s)
{
    if (!s[strcspn(s, ",\"\r\n")]) {
        fputs(s, out);
        return;
    }
    putc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            putc('"', out);
        putc(*s, out);
    }
    putc('"', out);
}

void searchout_begin(struct searchout *w)
{
    size_t n;
    const char *const *cols = scenario_csv_columns(&n);
    if (w->format == EVALOUT_JSON) {
        fputs("[", w->out);
        return;
    }
    if (w->format != EVALOUT_CSV)
        return;
    fputs("job,rank,step_time_s,layouts_tried,layouts_fit", w->out);
    if (w->range)
        fputs(",gpus", w->out);
    for (size_t c = 0; c < n; c++)
        fprintf(w->out, ",%s", cols[c]);
    fputs(w->range ? ",peak_bytes,budget_bytes,tokens_per_s,days,gpu_hours,cost\n"
                   : ",peak_bytes,budget_bytes\n",
          w->out);
}

/* What training --tokens on layout (NULL: none) of gpus GPUs takes. */
static void cost_of(const struct searchout *w, const struct search_layout *layout, uint64_t gpus,
                    struct deadline_cost *c)
{
    *c = (struct deadline_cost){0, 0, 0, 0};
    if (layout && isfinite(layout->step_time_s))
        deadline_cost_of(&layout->sc, gpus, layout->step_time_s, w->tokens,
                         w->price > 0 ? w->price : 0, c);
}

/* The range's end cells: tokens a second, days, GPU-hours and cost, and which are known. */
struct cost_cells {
    double v[4];
    bool has[4];
};

static void cost_cells(const struct searchout *w, const struct search_layout *layout, uint64_t gpus,
                       struct cost_cells *out)
{
    struct deadline_cost c;
    cost_of(w, layout, gpus, &c);
    bool known = layout && c.tokens_per_s > 0, timed = known && w->tokens > 0;
    *out = (struct cost_cells){{c.tokens_per_s, c.days, c.gpu_hours, c.cost},
                               {known, timed, timed, timed && w->price >= 0}};
}

/* The range's end columns of a CSV row: what is unknown is empty. */
static void csv_costs(const struct searchout *w, const struct search_layout *layout, uint64_t gpus)
{
    struct cost_cells cc;
    cost_cells(w, layout, gpus, &cc);
    for (int i = 0; i < 4; i++)
        if (cc.has[i])
            fprintf(w->out, ",%.6g", cc.v[i]);
        else
            putc(',', w->out);
}

/* The same as JSON keys, null for what is unknown. */
static void json_costs(const struct searchout *w, const struct search_layout *layout, uint64_t gpus)
{
    static const char *const keys[4] = {"tokens_per_s", "days", "gpu_hours", "cost"};
    struct cost_cells cc;
    cost_cells(w, layout, gpus, &cc);
    for (int i = 0; i < 4; i++)
        if (cc.has[i])
            fprintf(w->out, ", \"%s\": %.6g", keys[i], cc.v[i]);
        else
            fprintf(w->out, ", \"%s\": null", keys[i]);
}

/* A step time as CSV and JSON write it: six significant digits (a cost model's estimate). */
static void format_seconds(char *buf, size_t size, double s)
{
    snprintf(buf, size, "%.6g", s);
}

/* One CSV row; layout NULL: the job's row of rank 0. */
static void row_csv(struct searchout *w, const struct scenario *job,
                    const struct search_result *res, const struct search_layout *layout,
                    uint64_t rank, uint64_t gpus, const struct scenario_csv_row *cells,
                    uint64_t budget)
{
    FILE *o = w->out;
    char seconds[32] = "";
    if (layout && isfinite(layout->step_time_s))
        format_seconds(seconds, sizeof seconds, layout->step_time_s);
    put_csv_text(o, job->name);
    fprintf(o, ",%" PRIu64 ",%s,%" PRIu64 ",%" PRIu64, rank, seconds, res->layouts_tried,
            res->layouts_fit);
    if (w->range) {
        if (gpus)
            fprintf(o, ",%" PRIu64, gpus);
        else
            putc(',', o);
    }
    for (size_t c = 0; c < SCENARIO_CSV_COLUMNS; c++) {
        putc(',', o);
        if (cells)
            put_csv_text(o, cells->cell[c]);
    }
    if (layout)
        fprintf(o, ",%" PRIu64 ",%" PRIu64, layout->peak_bytes, layout->budget_bytes);
    else
        fprintf(o, ",,%" PRIu64, budget);
    if (w->range)
        csv_costs(w, layout, gpus);
    putc('\n', o);
}

/* ---- JSON ---- */

static void put_json_text(FILE *out, const char *s)
{
    putc('"', out);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch == '\n')
            fputs("\\n", out);
        else if (ch == '\r')
            fputs("\\r", out);
        else if (ch == '\t')
            fputs("\\t", out);
        else if (ch < 0x20)
            fprintf(out, "\\u%04x", ch);
        else
            putc(ch, out);
    }
    putc('"', out);
}

static void row_json(struct searchout *w, const struct scenario *job,
                     const struct search_result *res, const struct search_layout *layout,
                     uint64_t rank, uint64_t gpus, const struct scenario_csv_row *cells,
                     uint64_t budget)
{
    FILE *o = w->out;
    size_t n;
    const char *const *cols = scenario_csv_columns(&n);
    fputs(w->rows ? ",\n {\"job\": " : "\n {\"job\": ", o);
    put_json_text(o, job->name);
    fprintf(o, ", \"rank\": %" PRIu64 ", \"step_time_s\": ", rank);
    if (layout && isfinite(layout->step_time_s)) {
        char seconds[32];
        format_seconds(seconds, sizeof seconds, layout->step_time_s);
        fputs(seconds, o);
    } else {
        fputs("null", o);
    }
    fprintf(o, ", \"layouts_tried\": %" PRIu64 ", \"layouts_fit\": %" PRIu64, res->layouts_tried,
            res->layouts_fit);
    if (w->range) {
        if (gpus)
            fprintf(o, ", \"gpus\": %" PRIu64, gpus);
        else
            fputs(", \"gpus\": null", o);
    }
    for (size_t c = 0; c < n; c++) {
        fprintf(o, ", \"%s\": ", cols[c]);
        enum scenario_csv_type type = cells ? cells->type[c] : SCENARIO_CSV_EMPTY;
        if (type == SCENARIO_CSV_EMPTY)
            fputs("null", o);
        else if (type == SCENARIO_CSV_BOOL)
            fputs(strcmp(cells->cell[c], "yes") == 0 ? "true" : "false", o);
        else if (type == SCENARIO_CSV_NUMBER)
            fputs(cells->cell[c], o);
        else
            put_json_text(o, cells->cell[c]);
    }
    if (layout)
        fprintf(o, ", \"peak_bytes\": %" PRIu64 ", \"budget_bytes\": %" PRIu64, layout->peak_bytes,
                layout->budget_bytes);
    else
        fprintf(o, ", \"peak_bytes\": null, \"budget_bytes\": %" PRIu64, budget);
    if (w->range)
        json_costs(w, layout, gpus);
    putc('}', o);
}

/* ---- the table's rows ---- */

static void row_table(struct searchout *w, const struct scenario *job,
                      const struct search_layout *layout, uint64_t rank, uint64_t gpus)
{
    if (w->rows >= w->table_cap) {
        size_t cap = w->table_cap ? 2 * w->table_cap : 16;
        struct searchout_table_row *rows = realloc(w->table, cap * sizeof *rows);
        if (!rows) {
            w->error = 1;
            return;
        }
        w->table = rows;
        w->table_cap = cap;
    }
    struct searchout_table_row *r = &w->table[w->rows];
    const struct scenario *sc = &layout->sc;
    memset(r, 0, sizeof *r);
    /* For people, on a terminal: a control character in a name is shown escaped, never sent. */
    diag_escape(r->job, sizeof r->job, job->name);
    r->rank = rank;
    r->gpus = gpus;
    r->tp = sc->tp;
    r->pp = sc->pp;
    r->vpp = sc->vpp ? sc->vpp : 1;
    r->cp = sc->cp ? sc->cp : 1;
    r->ep = sc->ep ? sc->ep : 1;
    r->experts = sc->experts > 0;
    r->dp = sc->dp;
    r->b = sc->micro_batch;
    r->zero = sc->zero;
    r->peak = layout->peak_bytes;
    r->budget = layout->budget_bytes;
    r->step_s = layout->step_time_s;
    snprintf(r->attention, sizeof r->attention, "%s", scenario_attention_name(sc->attention));
    char k[24];
    snprintf(r->recompute, sizeof r->recompute, "%s", scenario_recompute_name(sc, k, sizeof k));
    snprintf(r->offload, sizeof r->offload, "%s", scenario_csv_offload(sc->offload));
    snprintf(r->schedule, sizeof r->schedule, "%s", scenario_schedule_name(sc->schedule));
}

static void note_job(struct searchout *w, const struct scenario *job,
                     const struct search_result *res, const struct search_layout *top,
                     uint64_t gpus, uint64_t from, uint64_t to, const struct deadline_result *dl,
                     bool curve)
{
    if (w->n_jobs >= w->jobs_cap) {
        size_t cap = w->jobs_cap ? 2 * w->jobs_cap : 8;
        struct searchout_job *jobs = realloc(w->jobs, cap * sizeof *jobs);
        if (!jobs) {
            w->error = 1;
            return;
        }
        w->jobs = jobs;
        w->jobs_cap = cap;
    }
    struct searchout_job *j = &w->jobs[w->n_jobs++];
    diag_escape(j->name, sizeof j->name, job->name);
    j->tried = res->layouts_tried;
    j->fit = res->layouts_fit;
    j->shown = res->n_top;
    j->gpus = gpus;
    j->from = from;
    j->to = to;
    j->last = res->range_last;
    j->curve = curve;
    j->deadline = dl != NULL;
    j->below = dl ? dl->below : 0;
    j->below_days = dl ? dl->below_days : 0;
    struct deadline_cost c;
    cost_of(w, res->n_top ? &top[0] : NULL, gpus, &c);
    j->days = c.days;
    j->gpu_hours = c.gpu_hours;
    j->cost = c.cost;
}

void searchout_job(struct searchout *w, const struct scenario *job, const struct search_result *res,
                   const struct search_layout *top, uint64_t gpus, uint64_t from, uint64_t to,
                   const struct deadline_result *dl, bool curve)
{
    static struct scenario_csv_row cells;
    if (w->format == EVALOUT_TABLE)
        note_job(w, job, res, top, gpus, from, to, dl, curve);
    if (res->n_top == 0) {
        uint64_t budget = model_budget_bytes(job);
        if (w->format == EVALOUT_CSV)
            row_csv(w, job, res, NULL, 0, gpus, NULL, budget);
        else if (w->format == EVALOUT_JSON)
            row_json(w, job, res, NULL, 0, gpus, NULL, budget);
        if (w->format != EVALOUT_TABLE)
            w->rows++;
        return;
    }
    for (size_t i = 0; i < res->n_top; i++) {
        struct scenario sc = top[i].sc;
        if (curve)
            curve_name(job->name, gpus, sc.name, sizeof sc.name);
        else
            searchout_layout_name(job->name, i + 1, sc.name, sizeof sc.name);
        if (w->format == EVALOUT_TABLE) {
            row_table(w, job, &top[i], i + 1, gpus);
        } else {
            scenario_csv_row(&sc, &cells);
            if (w->format == EVALOUT_CSV)
                row_csv(w, job, res, &top[i], i + 1, gpus, &cells, 0);
            else
                row_json(w, job, res, &top[i], i + 1, gpus, &cells, 0);
        }
        if (!w->error)
            w->rows++;
    }
}

/* ---- the table ---- */

enum {
    TC_JOB,
    TC_RANK,
    TC_STEP,
    TC_GPUS,
    TC_TP,
    TC_PP,
    TC_VPP,
    TC_SCHEDULE,
    TC_CP,
    TC_EP,
    TC_DP,
    TC_ZERO,
    TC_ATTENTION,
    TC_RECOMPUTE,
    TC_OFFLOAD,
    TC_B,
    TC_PEAK,
    TC_BUDGET,
    TC_COUNT
};

/* The columns, in the order shown. keep 0: always shown; the others are left out of a narrow
 * table, the lowest keep first, until it fits. */
static const struct table_column {
    const char *title;
    bool unit; /* the title names the unit: "peak GB" */
    bool left; /* text reads left to right; numbers align right */
    int keep;
} table_columns[TC_COUNT] = {
    [TC_JOB] = {"job", false, true, 0},
    [TC_RANK] = {"#", false, false, 0},
    [TC_STEP] = {"step s", false, false, 0},
    [TC_GPUS] = {"gpus", false, false, 0},
    [TC_TP] = {"tp", false, false, 0},
    [TC_PP] = {"pp", false, false, 0},
    [TC_VPP] = {"vpp", false, false, 2},
    [TC_SCHEDULE] = {"schedule", false, true, 2},
    [TC_CP] = {"cp", false, false, 4},
    [TC_EP] = {"ep", false, false, 5},
    [TC_DP] = {"dp", false, false, 0},
    [TC_ZERO] = {"zero", false, false, 0},
    [TC_ATTENTION] = {"attention", false, true, 6},
    [TC_RECOMPUTE] = {"recompute", false, true, 7},
    [TC_OFFLOAD] = {"offload", false, true, 3},
    [TC_B] = {"b", false, false, 0},
    [TC_PEAK] = {"peak", true, false, 0},
    [TC_BUDGET] = {"budget", true, false, 1},
};

#define CELL_MAX (SCENARIO_NAME_BYTES + 8)

static void table_cells(const struct searchout *w, const struct searchout_table_row *r,
                        char cells[TC_COUNT][CELL_MAX])
{
    const size_t n = CELL_MAX;
    const uint64_t numbers[] = {
        [TC_RANK] = r->rank, [TC_GPUS] = r->gpus, [TC_TP] = r->tp, [TC_PP] = r->pp,
        [TC_VPP] = r->vpp,   [TC_CP] = r->cp,     [TC_EP] = r->ep, [TC_DP] = r->dp,
        [TC_ZERO] = r->zero, [TC_B] = r->b};
    for (int c = TC_RANK; c <= TC_B; c++)
        snprintf(cells[c], n, "%" PRIu64, numbers[c]);
    snprintf(cells[TC_JOB], n, "%s", r->job);
    snprintf(cells[TC_STEP], n, "%.4g", r->step_s);
    snprintf(cells[TC_ATTENTION], n, "%s", r->attention);
    snprintf(cells[TC_RECOMPUTE], n, "%s", r->recompute);
    snprintf(cells[TC_OFFLOAD], n, "%s", r->offload);
    snprintf(cells[TC_SCHEDULE], n, "%s", r->schedule);
    snprintf(cells[TC_PEAK], n, "%.1f", (double)r->peak / w->unit_bytes);
    snprintf(cells[TC_BUDGET], n, "%.1f", (double)r->budget / w->unit_bytes);
}

static const char *table_row_name(const void *rows, size_t i)
{
    return ((const struct searchout_table_row *)rows)[i].job;
}

static void table_layout(struct searchout *w, const char heads[TC_COUNT][32],
                         char cells[TC_COUNT][CELL_MAX], struct texttable *t)
{
    const char *head[TC_COUNT], *line[TC_COUNT];
    for (int c = 0; c < TC_COUNT; c++) {
        head[c] = heads[c];
        line[c] = cells[c];
    }
    texttable_start(t, TC_COUNT, head, w->table_cols);
    for (int c = 0; c < TC_COUNT; c++) {
        t->keep[c] = (unsigned)table_columns[c].keep;
        t->left[c] = table_columns[c].left;
    }
    bool experts = false, vpp = false, cp = false, ep = false, offload = false, sched = false;
    for (unsigned long i = 0; i < w->rows; i++) {
        const struct searchout_table_row *r = &w->table[i];
        experts |= r->experts;
        vpp |= r->vpp > 1;
        cp |= r->cp > 1;
        ep |= r->ep > 1;
        offload |= strcmp(r->offload, "none") != 0;
        sched |= strcmp(r->schedule, "1f1b") != 0;
    }
    t->absent[TC_GPUS] = !w->range;
    t->absent[TC_EP] = !experts;
    t->absent[TC_SCHEDULE] = !sched; /* 1F1B everywhere: no column */
    /* A degree above 1 or an offload in some row is wanted before any other optional column:
     * without it tp pp dp would not multiply to the GPUs, nor the peak add up. Only a terminal too
     * narrow for them leaves them out (and says so under the table). */
    if (cp)
        t->keep[TC_CP] = 13;
    if (ep)
        t->keep[TC_EP] = 12;
    if (vpp)
        t->keep[TC_VPP] = 11;
    if (offload)
        t->keep[TC_OFFLOAD] = 10;
    if (sched)
        t->keep[TC_SCHEDULE] = 9;
    for (unsigned long i = 0; i < w->rows; i++) {
        table_cells(w, &w->table[i], cells);
        texttable_measure(t, line);
    }
    texttable_fit(t, head);
    texttable_choose_cut(t, table_row_name, w->table, w->rows);
}

/* Under the table, a line per job: how many layouts it tried and how many fit. */
/* A count with its thousands separated: "347,000". */
static const char *grouped(double v, char *buf, size_t size)
{
    char digits[32];
    snprintf(digits, sizeof digits, "%.0f", v);
    size_t n = strlen(digits), o = 0;
    for (size_t i = 0; i < n && o + 2 < size; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

/* The table's line of a --tokens job: the fewest GPUs, their days, GPU-hours and cost, and what
 * the count below takes. */
static void deadline_line(const struct searchout *w, const struct searchout_job *j, char *text,
                          size_t size)
{
    char hours[32], cost[64] = "", below[96] = "";
    if (!j->gpus) {
        snprintf(text, size,
                 "no count of %" PRIu64 "-%" PRIu64 " GPUs trains %.3g tokens within %.3g days",
                 j->from, j->to, w->tokens, w->days);
        return;
    }
    if (w->price >= 0) {
        char c[32];
        snprintf(cost, sizeof cost, ", cost %s", grouped(j->cost, c, sizeof c));
    }
    if (j->below && isfinite(j->below_days))
        snprintf(below, sizeof below, "; %" PRIu64 " take %.3g days", j->below, j->below_days);
    else if (j->below)
        snprintf(below, sizeof below, "; on %" PRIu64 " no layout fits", j->below);
    snprintf(text, size,
             "the fewest GPUs that train %.3g tokens within %.3g days: %" PRIu64
             " (%.3g days, %s GPU-hours%s)%s",
             w->tokens, w->days, j->gpus, j->days, grouped(j->gpu_hours, hours, sizeof hours), cost,
             below);
}

static void table_print_jobs(struct searchout *w, const struct texttable *lay)
{
    size_t name_w = 0;
    for (size_t i = 0; i < w->n_jobs; i++) {
        size_t cols = textwidth_cols(w->jobs[i].name);
        name_w = cols > name_w ? cols : name_w;
    }
    if (name_w > lay->first_cols)
        name_w = lay->first_cols;
    for (size_t i = 0; i < w->n_jobs; i++) {
        const struct searchout_job *j = &w->jobs[i];
        char text[256], where[96];
        if (j->from && j->gpus)
            snprintf(where, sizeof where, "%" PRIu64 " GPUs, the fewest of %" PRIu64 "-%" PRIu64,
                     j->gpus, j->from, j->to);
        else if (j->from)
            snprintf(where, sizeof where, "any count of %" PRIu64 "-%" PRIu64 " GPUs", j->from,
                     j->to);
        else
            snprintf(where, sizeof where, "%" PRIu64 " GPUs", j->gpus);
        if (j->deadline) {
            deadline_line(w, j, text, sizeof text);
            texttable_put_named(lay, w->out, j->name, name_w, text, w->table_cols);
            continue;
        }
        if (j->curve)
            snprintf(where, sizeof where, "%" PRIu64 " GPUs (the scaling curve)", j->gpus);
        if (j->shown == 1)
            snprintf(text, sizeof text,
                     "on %s: %" PRIu64 " layouts tried, %" PRIu64 " fit; the fastest shown", where,
                     j->tried, j->fit);
        else if (j->shown)
            snprintf(text, sizeof text,
                     "on %s: %" PRIu64 " layouts tried, %" PRIu64 " fit; the fastest %" PRIu64
                     " shown",
                     where, j->tried, j->fit, j->shown);
        else if (j->from && !j->gpus && j->last)
            snprintf(text, sizeof text,
                     "no layout fits on %" PRIu64 "-%" PRIu64 " GPUs; the search stopped there, "
                     "short of %" PRIu64 " (its work limit): narrow the range",
                     j->from, j->last, j->to);
        else if (j->from && !j->gpus)
            snprintf(text, sizeof text, "no layout fits on %s", where);
        else
            snprintf(text, sizeof text, "no layout fits on %s (%" PRIu64 " layouts tried)", where,
                     j->tried);
        texttable_put_named(lay, w->out, j->name, name_w, text, w->table_cols);
    }
}

static void table_print(struct searchout *w)
{
    static char cells[TC_COUNT][CELL_MAX];
    char heads[TC_COUNT][32];
    for (int c = 0; c < TC_COUNT; c++) {
        if (table_columns[c].unit)
            snprintf(heads[c], sizeof heads[c], "%s %s", table_columns[c].title, w->unit_name);
        else
            snprintf(heads[c], sizeof heads[c], "%s", table_columns[c].title);
    }
    struct texttable lay;
    table_layout(w, heads, cells, &lay);
    const char *line[TC_COUNT];
    for (int c = 0; c < TC_COUNT; c++)
        line[c] = heads[c];
    texttable_line(&lay, w->out, line);
    texttable_rule(&lay, w->out);
    for (unsigned long i = 0; i < w->rows; i++) {
        table_cells(w, &w->table[i], cells);
        for (int c = 0; c < TC_COUNT; c++)
            line[c] = cells[c];
        texttable_line(&lay, w->out, line);
    }
    putc('\n', w->out);
    table_print_jobs(w, &lay);
    char note[320];
    snprintf(note, sizeof note,
             "step s = the cost model's seconds per training step; b = the micro-batch; %s = %s "
             "bytes; budget = GPU memory minus the reserve",
             w->unit_name, w->unit_bytes == 1e9 ? "10^9" : "2^30");
    putc('\n', w->out);
    texttable_put_words(w->out, note, 0, 0, w->table_cols);
    if (lay.narrowed) {
        char left_out[256] = "";
        for (int c = 0; c < TC_COUNT; c++)
            if (!lay.shown[c] && !lay.absent[c])
                snprintf(left_out + strlen(left_out), sizeof left_out - strlen(left_out), "%s%s",
                         left_out[0] ? ", " : "", table_columns[c].title);
        snprintf(note, sizeof note, "--wide adds %s", left_out);
        texttable_put_words(w->out, note, 0, 0, w->table_cols);
    }
}

void searchout_end(struct searchout *w)
{
    if (w->format == EVALOUT_JSON)
        fputs(w->rows ? "\n]\n" : "]\n", w->out);
    else if (w->format == EVALOUT_TABLE)
        table_print(w);
    fflush(w->out);
}

void searchout_release(struct searchout *w)
{
    free(w->table);
    free(w->jobs);
    w->table = NULL;
    w->jobs = NULL;
    w->table_cap = w->jobs_cap = w->n_jobs = 0;
}
