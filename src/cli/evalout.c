/* evalout: see evalout.h. */
#include "cli/evalout.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/fastfmt.h"
#include "base/textwidth.h"
#include "cli/texttable.h"
#include "model/step.h"
#include "plan/plan.h"

#define FIX_PLAN_MAX 512

/* What the table keeps of a row. */
struct evalout_table_row {
    char name[SCENARIO_NAME_BYTES];
    uint64_t params, states, act, logits, peak, budget, k_best, max_b, fix_peak, fix_b, gpus;
    uint64_t have_gpus; /* the scenario's own: dp tp pp cp */
    int fits;
    bool host_fits;    /* the node's CPU memory holds its offloads (doc/model.md 12.5) */
    const char *phase; /* the step's phase at the peak; NULL under --peak lesson */
    double step_s;     /* the cost model's step time (doc/model.md 12.7) */
    char fix[16];
    char plan[FIX_PLAN_MAX];
    bool timed; /* the fix is the cheapest layout, with these step times */
    double fix_step_s, base_step_s;
    uint64_t adam8; /* what 8-bit Adam would save, for a note (0: none) */
    uint64_t fp8;   /* what FP8 training would save, for a note (0: none) */
    double fp8_s;   /* and take off the step */
};

struct evalout_fix evalout_ladder_fix(const struct plan *p, const char *settings)
{
    return (struct evalout_fix){plan_fix_name(p->fix),
                                p->fix_peak_bytes,
                                p->fix_micro_batch,
                                settings,
                                p->gpus_for_states,
                                false,
                                0.0,
                                0.0,
                                0,
                                0,
                                0.0};
}

static const char *const csv_columns =
    "name,params,weights_bytes,grads_bytes,optimizer_bytes,states_bytes,act_layer_bytes,"
    "act_bytes,logits_bytes,peak_bytes,budget_bytes,fits,k_best,max_micro_batch,fix,"
    "fix_peak_bytes,fix_micro_batch,fix_plan,active_params,expert_bytes,peak_phase,stage,"
    "step_time_s,tokens_per_s,mfu,host_node_bytes,fix_step_time_s,fix_time_added_s";

/* The phase of a real step at which the peak is reached (doc/model.md section 10.2); NULL under
 * --peak lesson, whose sum is no instant of the step. */
static const char *peak_phase(const struct scenario *sc, const struct terms *t)
{
    return sc->peak == PEAK_STEP ? step_phase_name(t->peak_phase) : NULL;
}

void evalout_init(struct evalout *w, enum evalout_format format, enum units units, FILE *out)
{
    memset(w, 0, sizeof *w);
    w->format = format;
    w->unit_bytes = units_bytes(units);
    w->unit_name = units_name(units);
    w->out = out;
    w->table_cols = 80;
}

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

static const struct evalout_fix no_fix = {"none", 0, 0, "", 0, false, 0.0, 0.0, 0, 0, 0.0};

/*
 * A CSV row is built in one buffer and written with one fwrite: a million rows of 18 fields
 * through putc/fputs/fwrite each cost as much as computing them.
 */
struct line {
    FILE *out;
    struct strbuf *memory; /* instead of out, when not NULL */
    size_t len;
    char buf[1024];
};

/* An empty line to w's output (its memory, when it has one). */
static void line_start(struct line *l, const struct evalout *w)
{
    l->out = w->out;
    l->memory = w->memory;
    l->len = 0;
    l->buf[0] = '\0'; /* never read before it is written; told to GCC, whose profile-guided
                       * inlining otherwise sees fwrite read an unwritten buffer */
}

static void line_write(struct line *l, const char *s, size_t n)
{
    if (l->memory)
        strbuf_append(l->memory, s, n);
    else
        fwrite(s, 1, n, l->out);
}

static void line_flush(struct line *l)
{
    line_write(l, l->buf, l->len);
    l->len = 0;
}

/* Room for n more bytes; false when n does not fit even in an empty buffer. */
static bool line_room(struct line *l, size_t n)
{
    if (l->len + n <= sizeof l->buf)
        return true;
    line_flush(l);
    return n <= sizeof l->buf;
}

static void line_put(struct line *l, const char *s, size_t n)
{
    if (!line_room(l, n)) {
        line_write(l, s, n);
        return;
    }
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

static void line_putc(struct line *l, char ch)
{
    line_put(l, &ch, 1);
}

void evalout_begin(struct evalout *w)
{
    if (w->format == EVALOUT_CSV) {
        struct line l;
        line_start(&l, w);
        line_put(&l, csv_columns, strlen(csv_columns));
        line_putc(&l, '\n');
        line_flush(&l);
    } else if (w->format == EVALOUT_JSON) {
        fputs("[", w->out);
    }
}

/* A CSV field, quoted when it holds a comma, quote or line break (RFC 4180). */
static void line_put_csv_text(struct line *l, const char *s)
{
    size_t plain = strcspn(s, ",\"\r\n");
    if (!s[plain]) {
        line_put(l, s, plain);
        return;
    }
    line_putc(l, '"');
    for (; *s; s++) {
        if (*s == '"')
            line_putc(l, '"');
        line_putc(l, *s);
    }
    line_putc(l, '"');
}

/* Number of decimal digits of v: from its bit length (log10(2) ~ 1233/4096), then one compare. */
static unsigned u64_digits(uint64_t v)
{
    static const uint64_t pow10[20] = {1ull,
                                       10ull,
                                       100ull,
                                       1000ull,
                                       10000ull,
                                       100000ull,
                                       1000000ull,
                                       10000000ull,
                                       100000000ull,
                                       1000000000ull,
                                       10000000000ull,
                                       100000000000ull,
                                       1000000000000ull,
                                       10000000000000ull,
                                       100000000000000ull,
                                       1000000000000000ull,
                                       10000000000000000ull,
                                       100000000000000000ull,
                                       1000000000000000000ull,
                                       10000000000000000000ull};
    if (v < 10)
        return 1;
    unsigned bits = 64u - (unsigned)__builtin_clzll(v);
    unsigned guess = bits * 1233u >> 12; /* digits - 1 or digits */
    return guess + (v >= pow10[guess]);
}

static const char digit_pairs[] = "0001020304050607080910111213141516171819"
                                  "2021222324252627282930313233343536373839"
                                  "4041424344454647484950515253545556575859"
                                  "6061626364656667686970717273747576777879"
                                  "8081828384858687888990919293949596979899";

/* The two digits of v < 100 at p. */
static void put_2_digits(char *p, uint32_t v)
{
    memcpy(p, digit_pairs + 2 * v, 2);
}

/* The 8 digits of v < 10^8, zero-padded, at p: 32-bit arithmetic on two halves of 4 digits,
 * with no loop, is about half the instructions of 64-bit divisions by 100. */
static void put_8_digits(char *p, uint32_t v)
{
    uint32_t hi = v / 10000, lo = v % 10000;
    put_2_digits(p, hi / 100);
    put_2_digits(p + 2, hi % 100);
    put_2_digits(p + 4, lo / 100);
    put_2_digits(p + 6, lo % 100);
}

/* The decimal digits of v, right-aligned to end (u64_digits(v) of them). */
static void put_digits_before(char *end, uint64_t v)
{
    for (; v >= 100000000; v /= 100000000) {
        end -= 8;
        put_8_digits(end, (uint32_t)(v % 100000000));
    }
    uint32_t w = (uint32_t)v; /* the leading 1 to 8 digits */
    for (; w >= 100; w /= 100) {
        end -= 2;
        put_2_digits(end, w % 100);
    }
    if (w >= 10)
        put_2_digits(end - 2, w);
    else
        end[-1] = (char)('0' + w);
}

/* ",v[0],v[1],...": the CSV rows are mostly 10-12 digit byte counts, and printf's general
 * machinery was a fifth of the time of a million-row eval; one room check and one call for all
 * the numbers of a row, not one per number, saves another fifth of the output's time. */
static void line_put_numbers(struct line *l, const uint64_t *v, size_t n)
{
    line_room(l, n * 21); /* a comma and at most 20 digits each */
    char *p = l->buf + l->len;
    for (size_t i = 0; i < n; i++) {
        unsigned digits = u64_digits(v[i]);
        *p++ = ',';
        put_digits_before(p + digits, v[i]);
        p += digits;
    }
    l->len = (size_t)(p - l->buf);
}

/* The step's time, the job's tokens a second and its MFU (doc/model.md 12.7), as CSV and JSON
 * write them: seconds to 4 significant digits, whole tokens, MFU to 0.1%; `none` for each when
 * the row has no cost (c NULL). */
/* parts[0..k) one after the other into buf[0..n) (n > 0), cut to fit; the length written. What
 * snprintf's "%s%s..." writes, without its format parsing (a tenth of a row's time). */
static size_t join(char *buf, size_t n, const char *const *parts, size_t k)
{
    size_t len = 0;
    for (size_t i = 0; i < k; i++) {
        size_t m = strlen(parts[i]);
        if (m > n - 1 - len)
            m = n - 1 - len;
        memcpy(buf + len, parts[i], m);
        len += m;
    }
    buf[len] = '\0';
    return len;
}

/* A number as printf's %.6g writes it. */
static void put_g6(char *buf, size_t n, double x)
{
    if (!fastfmt_general(buf, x, 6))
        snprintf(buf, n, "%.6g", x);
}

static int format_step(char *buf, size_t n, const struct cost *c, const char *sep, const char *none)
{
    if (!c)
        return snprintf(buf, n, "%s%s%s%s%s", none, sep, none, sep, none);
    /* fastfmt writes what printf writes, a fifth of eval's time less; printf where it cannot. */
    char seconds[32], tokens[96], mfu[32];
    if (!fastfmt_general(seconds, c->total_s, 4))
        snprintf(seconds, sizeof seconds, "%.4g", c->total_s);
    if (!fastfmt_fixed(tokens, c->tokens_per_s, 0))
        snprintf(tokens, sizeof tokens, "%.0f", c->tokens_per_s);
    if (!fastfmt_fixed(mfu, c->mfu, 3))
        snprintf(mfu, sizeof mfu, "%.3f", c->mfu);
    return (int)join(buf, n, (const char *const[]){seconds, sep, tokens, sep, mfu}, 5);
}

static void row_csv(struct evalout *w, const struct scenario *sc, const struct terms *t,
                    const struct evalout_fix *f, const struct cost *c)
{
    const uint64_t numbers[] = {t->params,          t->weights_bytes, t->grads_bytes,
                                t->optimizer_bytes, t->states_bytes,  t->act_layer_bytes,
                                t->act_bytes,       t->logits_bytes,  t->peak_bytes,
                                t->budget_bytes,    t->fits,          t->k_best,
                                t->max_micro_batch};
    const uint64_t fix_numbers[] = {f->peak_bytes, f->micro_batch};
    struct line l;
    line_start(&l, w);
    line_put_csv_text(&l, sc->name);
    line_put_numbers(&l, numbers, sizeof numbers / sizeof numbers[0]);
    line_putc(&l, ',');
    line_put_csv_text(&l, f->name);
    line_put_numbers(&l, fix_numbers, 2);
    line_putc(&l, ',');
    line_put_csv_text(&l, f->plan);
    const uint64_t moe_numbers[] = {t->active_params, t->expert_bytes};
    line_put_numbers(&l, moe_numbers, 2);
    line_putc(&l, ',');
    const char *phase = peak_phase(sc, t);
    if (phase)
        line_put_csv_text(&l, phase);
    const uint64_t stage[] = {t->stage[t->peak_stage].pipe.rank};
    line_put_numbers(&l, stage, 1);
    char step[192];
    int len = format_step(step, sizeof step, c, ",", "");
    line_putc(&l, ',');
    line_put(&l, step, len > 0 ? (size_t)len : 0);
    const uint64_t host[] = {t->host_node_bytes};
    line_put_numbers(&l, host, 1);
    if (f->timed) { /* a row that does not fit */
        char fix_s[32], added_s[32], times[72];
        put_g6(fix_s, sizeof fix_s, f->step_time_s);
        put_g6(added_s, sizeof added_s, f->step_time_s - f->base_step_time_s);
        line_put(&l, times,
                 join(times, sizeof times, (const char *const[]){",", fix_s, ",", added_s}, 4));
    } else {
        line_put(&l, ",,", 2);
    }
    line_putc(&l, '\n');
    line_flush(&l);
}

/* A JSON number, or null when it does not apply. */
static void put_json_count(FILE *out, const char *key, uint64_t v, bool applies)
{
    if (applies)
        fprintf(out, ", \"%s\": %" PRIu64, key, v);
    else
        fprintf(out, ", \"%s\": null", key);
}

/* A JSON string, or null when it does not apply. */
static void put_json_key_text(FILE *out, const char *key, const char *s, bool applies)
{
    fprintf(out, ", \"%s\": ", key);
    if (applies)
        put_json_text(out, s);
    else
        fputs("null", out);
}

/*
 * The CSV's keys, with JSON's types: "fits" is true or false (so that jq 'select(.fits)' keeps
 * the scenarios that fit), and what does not apply is null: the four fix keys of a scenario that
 * fits as it is (fix "none" in CSV), the fix_plan of one that nothing makes fit, and peak_phase
 * under --peak lesson (an empty cell in CSV).
 */
static void row_json(struct evalout *w, const struct scenario *sc, const struct terms *t,
                     const struct evalout_fix *f, const struct cost *c)
{
    FILE *o = w->out;
    bool fixed = strcmp(f->name, "none") != 0, planned = fixed && strcmp(f->name, "nothing") != 0;
    fputs(w->rows ? ",\n {\"name\": " : "\n {\"name\": ", o);
    put_json_text(o, sc->name);
    fprintf(o,
            ", \"params\": %" PRIu64 ", \"weights_bytes\": %" PRIu64 ", \"grads_bytes\": %" PRIu64
            ", \"optimizer_bytes\": %" PRIu64 ", \"states_bytes\": %" PRIu64
            ", \"act_layer_bytes\": %" PRIu64 ", \"act_bytes\": %" PRIu64
            ", \"logits_bytes\": %" PRIu64 ", \"peak_bytes\": %" PRIu64
            ", \"budget_bytes\": %" PRIu64 ", \"fits\": %s, \"k_best\": %" PRIu64
            ", \"max_micro_batch\": %" PRIu64,
            t->params, t->weights_bytes, t->grads_bytes, t->optimizer_bytes, t->states_bytes,
            t->act_layer_bytes, t->act_bytes, t->logits_bytes, t->peak_bytes, t->budget_bytes,
            t->fits ? "true" : "false", t->k_best, t->max_micro_batch);
    put_json_key_text(o, "fix", f->name, fixed);
    put_json_count(o, "fix_peak_bytes", f->peak_bytes, fixed);
    put_json_count(o, "fix_micro_batch", f->micro_batch, fixed);
    put_json_key_text(o, "fix_plan", f->plan, planned);
    fprintf(o, ", \"active_params\": %" PRIu64 ", \"expert_bytes\": %" PRIu64, t->active_params,
            t->expert_bytes);
    const char *phase = peak_phase(sc, t);
    put_json_key_text(o, "peak_phase", phase ? phase : "", phase != NULL);
    fprintf(o, ", \"stage\": %" PRIu64, t->stage[t->peak_stage].pipe.rank);
    char step[192];
    format_step(step, sizeof step, c, "\t", "null");
    char *tokens = strchr(step, '\t'), *mfu = tokens ? strchr(tokens + 1, '\t') : NULL;
    if (tokens && mfu) {
        *tokens++ = '\0';
        *mfu++ = '\0';
        fprintf(o, ", \"step_time_s\": %s, \"tokens_per_s\": %s, \"mfu\": %s", step, tokens, mfu);
    }
    fprintf(o, ", \"host_node_bytes\": %" PRIu64, t->host_node_bytes);
    if (f->timed)
        fprintf(o, ", \"fix_step_time_s\": %.6g, \"fix_time_added_s\": %.6g", f->step_time_s,
                f->step_time_s - f->base_step_time_s);
    else
        fputs(", \"fix_step_time_s\": null, \"fix_time_added_s\": null", o);
    putc('}', o);
}

static void row_table(struct evalout *w, const struct scenario *sc, const struct terms *t,
                      const struct evalout_fix *f, const struct cost *c)
{
    if (w->rows >= w->table_cap) {
        size_t cap = w->table_cap ? 2 * w->table_cap : 16;
        struct evalout_table_row *rows = realloc(w->table, cap * sizeof *rows);
        if (!rows) {
            w->error = 1;
            return;
        }
        w->table = rows;
        w->table_cap = cap;
    }
    struct evalout_table_row *r = &w->table[w->rows];
    memset(r, 0, sizeof *r);
    /* For people, on a terminal: a control character in a name is shown escaped, never sent. */
    diag_escape(r->name, sizeof r->name, sc->name);
    r->params = t->params;
    r->states = t->states_bytes;
    r->act = t->act_bytes;
    r->logits = t->logits_bytes;
    r->peak = t->peak_bytes;
    r->budget = t->budget_bytes;
    r->fits = t->fits;
    r->host_fits = t->host_fits;
    r->phase = peak_phase(sc, t);
    r->step_s = c ? c->total_s : -1;
    r->k_best = t->k_best;
    r->max_b = t->max_micro_batch;
    r->fix_peak = f->peak_bytes;
    r->fix_b = f->micro_batch;
    r->gpus = f->gpus_for_states;
    r->have_gpus = plan_gpus(sc);
    snprintf(r->fix, sizeof r->fix, "%s", f->name);
    snprintf(r->plan, sizeof r->plan, "%s", f->plan);
    r->timed = f->timed;
    r->adam8 = f->adam8_saving;
    r->fp8 = f->fp8_saving;
    r->fp8_s = f->fp8_time_saved_s;
    r->fix_step_s = f->step_time_s;
    r->base_step_s = f->base_step_time_s;
}

void evalout_row(struct evalout *w, const struct scenario *sc, const struct terms *t,
                 const struct evalout_fix *fix, const struct cost *c)
{
    if (!fix)
        fix = &no_fix;
    if (w->format == EVALOUT_CSV)
        row_csv(w, sc, t, fix, c);
    else if (w->format == EVALOUT_JSON)
        row_json(w, sc, t, fix, c);
    else
        row_table(w, sc, t, fix, c);
    if (!w->error)
        w->rows++;
}

/* ---- the table ---- */

enum {
    TCOL_NAME,
    TCOL_PARAMS,
    TCOL_STATES,
    TCOL_ACT,
    TCOL_LOGITS,
    TCOL_PEAK,
    TCOL_PHASE,
    TCOL_BUDGET,
    TCOL_VERDICT,
    TCOL_KBEST,
    TCOL_MAXB,
    TCOL_FIX,
    TCOL_STEP,
    TCOL_COUNT
};

/*
 * The columns, in the order shown. keep: 0 for the columns of every layout (the scenario, its
 * peak against the budget, the verdict and the fix); the others are left out of a narrow table,
 * the lowest keep first, until it fits. The peak's phase, which says what the peak is made of,
 * is the most wanted of them; under --peak lesson it has no value and is not a column at all.
 */
static const struct table_column {
    const char *title;
    bool unit; /* the title names the unit: "peak GB" */
    bool left; /* text reads left to right; numbers align right */
    int keep;
} table_columns[TCOL_COUNT] = {
    [TCOL_NAME] = {"scenario", false, true, 0},    [TCOL_PARAMS] = {"params", false, false, 2},
    [TCOL_STATES] = {"states", true, false, 5},    [TCOL_ACT] = {"activations", true, false, 6},
    [TCOL_LOGITS] = {"logits", true, false, 3},    [TCOL_PEAK] = {"peak", true, false, 0},
    [TCOL_PHASE] = {"peak phase", false, true, 8}, [TCOL_BUDGET] = {"budget", true, false, 0},
    [TCOL_VERDICT] = {"verdict", false, true, 0},  [TCOL_KBEST] = {"k_best", false, false, 1},
    [TCOL_MAXB] = {"max b", false, false, 4},      [TCOL_FIX] = {"fix (peak)", false, true, 0},
    [TCOL_STEP] = {"s/step", false, false, 7},
};

#define TABLE_CELL_MAX (FIX_PLAN_MAX + 64)

static void format_params(char *buf, size_t n, uint64_t p)
{
    if (p >= 1000000000ull)
        snprintf(buf, n, "%.2fB", (double)p / 1e9);
    else
        snprintf(buf, n, "%.1fM", (double)p / 1e6);
}

static void table_cells(const struct evalout *w, const struct evalout_table_row *r,
                        char cells[TCOL_COUNT][TABLE_CELL_MAX])
{
    const size_t n = TABLE_CELL_MAX;
    double u = w->unit_bytes;
    snprintf(cells[TCOL_NAME], n, "%s", r->name);
    format_params(cells[TCOL_PARAMS], n, r->params);
    snprintf(cells[TCOL_STATES], n, "%.1f", (double)r->states / u);
    snprintf(cells[TCOL_ACT], n, "%.1f", (double)r->act / u);
    snprintf(cells[TCOL_LOGITS], n, "%.1f", (double)r->logits / u);
    snprintf(cells[TCOL_PEAK], n, "%.1f", (double)r->peak / u);
    snprintf(cells[TCOL_PHASE], n, "%s", r->phase ? r->phase : "-");
    snprintf(cells[TCOL_BUDGET], n, "%.1f", (double)r->budget / u);
    snprintf(cells[TCOL_VERDICT], n, "%s",
             r->fits                               ? "fits"
             : r->host_fits || r->peak > r->budget ? "OOM"
                                                   : "host OOM");
    snprintf(cells[TCOL_KBEST], n, "%" PRIu64, r->k_best);
    snprintf(cells[TCOL_MAXB], n, "%" PRIu64, r->max_b);
    if (strcmp(r->fix, "none") == 0)
        snprintf(cells[TCOL_FIX], n, "-");
    else if (strcmp(r->fix, "nothing") == 0)
        snprintf(cells[TCOL_FIX], n, "nothing fits");
    else
        snprintf(cells[TCOL_FIX], n, "%s (%.1f)", r->fix, (double)r->fix_peak / u);
    if (r->step_s >= 0)
        snprintf(cells[TCOL_STEP], n, "%.3g", r->step_s);
    else
        snprintf(cells[TCOL_STEP], n, "-");
}

/* Whether a row of the table has a peak phase (--peak step). */
static bool table_has_phase(const struct evalout *w)
{
    for (unsigned long i = 0; i < w->rows; i++)
        if (w->table[i].phase)
            return true;
    return false;
}

/* Every column at its widest cell; then, for a narrow table, the columns that fit cols. */
static const char *table_row_name(const void *rows, size_t i)
{
    return ((const struct evalout_table_row *)rows)[i].name;
}

static void table_layout(struct evalout *w, const char heads[TCOL_COUNT][32],
                         char cells[TCOL_COUNT][TABLE_CELL_MAX], struct texttable *t)
{
    const char *head[TCOL_COUNT], *line[TCOL_COUNT];
    for (int c = 0; c < TCOL_COUNT; c++) {
        head[c] = heads[c];
        line[c] = cells[c];
    }
    texttable_start(t, TCOL_COUNT, head, w->table_cols);
    for (int c = 0; c < TCOL_COUNT; c++) {
        t->keep[c] = (unsigned)table_columns[c].keep;
        t->left[c] = table_columns[c].left;
    }
    t->absent[TCOL_PHASE] = !table_has_phase(w);
    for (unsigned long i = 0; i < w->rows; i++) {
        table_cells(w, &w->table[i], cells);
        texttable_measure(t, line);
    }
    texttable_fit(t, head);
    texttable_choose_cut(t, table_row_name, w->table, w->rows);
}

/* A step time with three significant digits ("0.123", "12.1", "888"). */
static const char *step_text(double s, char *buf, size_t size)
{
    snprintf(buf, size, "%.3g", s);
    return buf;
}

/* The time a fix adds to the row's step as given: "+1.23 s, +9.1%" ("-0.50 s, -4.0%": faster). */
static const char *added_text(double fix_s, double base_s, char *buf, size_t size)
{
    double d = fix_s - base_s;
    char sec[32];
    step_text(d < 0 ? -d : d, sec, sizeof sec);
    if (base_s > 0)
        snprintf(buf, size, "%c%s s, %+.1f%%", d < 0 ? '-' : '+', sec, 100.0 * d / base_s);
    else
        snprintf(buf, size, "%c%s s", d < 0 ? '-' : '+', sec);
    return buf;
}

/* Below the table, for each scenario that does not fit: what to change, and what it gives. */
static void table_print_fixes(struct evalout *w, const struct texttable *lay)
{
    size_t name_w = 0;
    for (unsigned long i = 0; i < w->rows; i++) {
        size_t cols = textwidth_cols(w->table[i].name);
        if (strcmp(w->table[i].fix, "none") && cols > name_w)
            name_w = cols;
    }
    if (name_w == 0)
        return;
    if (name_w > lay->first_cols)
        name_w = lay->first_cols;
    bool cheapest = false;
    for (unsigned long i = 0; i < w->rows; i++)
        cheapest |= w->table[i].timed;
    putc('\n', w->out);
    texttable_put_words(w->out,
                        cheapest ? "To make it fit (the fastest layout on the same GPUs, fewest "
                                   "changes; settings changed, step time and time added):"
                                 : "To make it fit (the first rung of the ladder that fits; "
                                   "settings changed):",
                        0, 0, w->table_cols);
    for (unsigned long i = 0; i < w->rows; i++) {
        const struct evalout_table_row *r = &w->table[i];
        if (strcmp(r->fix, "none") == 0)
            continue;
        char text[TABLE_CELL_MAX + FIX_PLAN_MAX + 256], step[32], added[64];
        if (strcmp(r->fix, "nothing") == 0 && r->gpus > r->have_gpus)
            snprintf(text, sizeof text,
                     "nothing fits: the model states alone need %" PRIu64
                     " GPUs of this memory, fully sharded (this run has %" PRIu64 ")",
                     r->gpus, r->have_gpus);
        else if (strcmp(r->fix, "nothing") == 0)
            snprintf(text, sizeof text,
                     "nothing fits on %s %" PRIu64 " GPU%s: the model states would, fully "
                     "sharded, but not the activations (memfit search finds the GPUs a layout "
                     "needs)",
                     r->have_gpus == 1 ? "this" : "these", r->have_gpus,
                     r->have_gpus == 1 ? "" : "s");
        else if (r->timed)
            snprintf(text, sizeof text,
                     "%s -> %.1f %s at micro-batch %" PRIu64 ", %s s a step (%s)", r->plan,
                     (double)r->fix_peak / w->unit_bytes, w->unit_name, r->fix_b,
                     step_text(r->fix_step_s, step, sizeof step),
                     added_text(r->fix_step_s, r->base_step_s, added, sizeof added));
        else
            snprintf(text, sizeof text, "%s -> %.1f %s at micro-batch %" PRIu64, r->plan,
                     (double)r->fix_peak / w->unit_bytes, w->unit_name, r->fix_b);
        if (r->adam8) {
            size_t len = strlen(text);
            snprintf(text + len, sizeof text - len,
                     "; 8-bit Adam (changes the arithmetic; not applied): -%.1f %s",
                     (double)r->adam8 / w->unit_bytes, w->unit_name);
        }
        if (r->fp8) {
            size_t len = strlen(text);
            snprintf(text + len, sizeof text - len,
                     "; FP8 training (changes the arithmetic; not applied): -%.1f %s",
                     (double)r->fp8 / w->unit_bytes, w->unit_name);
            len = strlen(text);
            if (r->fp8_s > 0)
                snprintf(text + len, sizeof text - len, ", -%s s a step",
                         step_text(r->fp8_s, step, sizeof step));
        }
        texttable_put_named(lay, w->out, r->name, name_w, text, w->table_cols);
    }
}

static void table_print(struct evalout *w)
{
    static char cells[TCOL_COUNT][TABLE_CELL_MAX];
    char heads[TCOL_COUNT][32];
    for (int c = 0; c < TCOL_COUNT; c++) {
        if (table_columns[c].unit)
            snprintf(heads[c], sizeof heads[c], "%s %s", table_columns[c].title, w->unit_name);
        else
            snprintf(heads[c], sizeof heads[c], "%s", table_columns[c].title);
    }
    struct texttable lay;
    table_layout(w, heads, cells, &lay);
    const char *line[TCOL_COUNT];
    for (int c = 0; c < TCOL_COUNT; c++)
        line[c] = heads[c];
    texttable_line(&lay, w->out, line);
    texttable_rule(&lay, w->out);
    for (unsigned long i = 0; i < w->rows; i++) {
        table_cells(w, &w->table[i], cells);
        for (int c = 0; c < TCOL_COUNT; c++)
            line[c] = cells[c];
        texttable_line(&lay, w->out, line);
    }
    /* What the peak is (no rows: nothing says which, and nothing needs saying). */
    const char *peak = "";
    if (w->rows)
        peak = lay.absent[TCOL_PHASE] ? "; peak = states + activations + logits (--peak lesson)"
                                      : "; peak = the highest phase of a real step";
    char count[256];
    snprintf(count, sizeof count,
             "%lu scenario%s; %s = %s bytes%s; budget = GPU memory minus the reserve", w->rows,
             w->rows == 1 ? "" : "s", w->unit_name, w->unit_bytes == 1e9 ? "10^9" : "2^30", peak);
    putc('\n', w->out);
    texttable_put_words(w->out, count, 0, 0, w->table_cols);
    if (lay.narrowed) {
        char left_out[256] = "";
        for (int c = 0; c < TCOL_COUNT; c++)
            if (!lay.shown[c] && !lay.absent[c])
                snprintf(left_out + strlen(left_out), sizeof left_out - strlen(left_out), "%s%s",
                         left_out[0] ? ", " : "", table_columns[c].title);
        char note[320];
        snprintf(note, sizeof note, "--wide adds %s", left_out);
        texttable_put_words(w->out, note, 0, 0, w->table_cols);
    }
    table_print_fixes(w, &lay);
}

void evalout_end(struct evalout *w)
{
    if (w->format == EVALOUT_JSON)
        fputs(w->rows ? "\n]\n" : "]\n", w->out);
    else if (w->format == EVALOUT_TABLE)
        table_print(w);
    fflush(w->out);
}

void evalout_release(struct evalout *w)
{
    free(w->table);
    w->table = NULL;
    w->table_cap = 0;
}
