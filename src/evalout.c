/* evalout: see evalout.h. */
#include "evalout.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define FIX_PLAN_MAX 256

/* What the table keeps of a row. */
struct evalout_table_row {
    char name[SCENARIO_NAME_BYTES];
    uint64_t params, states, act, logits, peak, budget, k_best, max_b, fix_peak, fix_b, gpus;
    int fits;
    char fix[16];
    char plan[FIX_PLAN_MAX];
};

static const char *const csv_columns =
    "name,params,weights_bytes,grads_bytes,optimizer_bytes,states_bytes,act_layer_bytes,"
    "act_bytes,logits_bytes,peak_bytes,budget_bytes,fits,k_best,max_micro_batch,fix,"
    "fix_peak_bytes,fix_micro_batch,fix_plan,active_params,expert_bytes";

void evalout_init(struct evalout *w, enum evalout_format format, enum units units, FILE *out)
{
    memset(w, 0, sizeof *w);
    w->format = format;
    w->unit_bytes = units_bytes(units);
    w->unit_name = units_name(units);
    w->out = out;
}

void evalout_begin(struct evalout *w)
{
    if (w->format == EVALOUT_CSV)
        fprintf(w->out, "%s\n", csv_columns);
    else if (w->format == EVALOUT_JSON)
        fputs("[", w->out);
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

static const struct evalout_fix no_fix = {"none", 0, 0, "", 0};

/*
 * A CSV row is built in one buffer and written with one fwrite: a million rows of 18 fields
 * through putc/fputs/fwrite each cost as much as computing them.
 */
struct line {
    FILE *out;
    size_t len;
    char buf[1024];
};

static void line_flush(struct line *l)
{
    fwrite(l->buf, 1, l->len, l->out);
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
        fwrite(s, 1, n, l->out);
        return;
    }
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

static void line_putc(struct line *l, char ch)
{
    line_put(l, &ch, 1);
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

static void row_csv(struct evalout *w, const struct scenario *sc, const struct terms *t,
                    const struct evalout_fix *f)
{
    const uint64_t numbers[] = {t->params,          t->weights_bytes, t->grads_bytes,
                                t->optimizer_bytes, t->states_bytes,  t->act_layer_bytes,
                                t->act_bytes,       t->logits_bytes,  t->peak_bytes,
                                t->budget_bytes,    t->fits,          t->k_best,
                                t->max_micro_batch};
    const uint64_t fix_numbers[] = {f->peak_bytes, f->micro_batch};
    struct line l;
    l.out = w->out;
    l.len = 0;
    line_put_csv_text(&l, sc->name);
    line_put_numbers(&l, numbers, sizeof numbers / sizeof numbers[0]);
    line_putc(&l, ',');
    line_put_csv_text(&l, f->name);
    line_put_numbers(&l, fix_numbers, 2);
    line_putc(&l, ',');
    line_put_csv_text(&l, f->plan);
    const uint64_t moe_numbers[] = {t->active_params, t->expert_bytes};
    line_put_numbers(&l, moe_numbers, 2);
    line_putc(&l, '\n');
    line_flush(&l);
}

static void row_json(struct evalout *w, const struct scenario *sc, const struct terms *t,
                     const struct evalout_fix *f)
{
    FILE *o = w->out;
    fputs(w->rows ? ",\n {\"name\": " : "\n {\"name\": ", o);
    put_json_text(o, sc->name);
    fprintf(o,
            ", \"params\": %" PRIu64 ", \"weights_bytes\": %" PRIu64 ", \"grads_bytes\": %" PRIu64
            ", \"optimizer_bytes\": %" PRIu64 ", \"states_bytes\": %" PRIu64
            ", \"act_layer_bytes\": %" PRIu64 ", \"act_bytes\": %" PRIu64
            ", \"logits_bytes\": %" PRIu64 ", \"peak_bytes\": %" PRIu64
            ", \"budget_bytes\": %" PRIu64 ", \"fits\": %d, \"k_best\": %" PRIu64
            ", \"max_micro_batch\": %" PRIu64 ", \"fix\": ",
            t->params, t->weights_bytes, t->grads_bytes, t->optimizer_bytes, t->states_bytes,
            t->act_layer_bytes, t->act_bytes, t->logits_bytes, t->peak_bytes, t->budget_bytes,
            t->fits ? 1 : 0, t->k_best, t->max_micro_batch);
    put_json_text(o, f->name);
    fprintf(o,
            ", \"fix_peak_bytes\": %" PRIu64 ", \"fix_micro_batch\": %" PRIu64 ", \"fix_plan\": ",
            f->peak_bytes, f->micro_batch);
    put_json_text(o, f->plan);
    fprintf(o, ", \"active_params\": %" PRIu64 ", \"expert_bytes\": %" PRIu64 "}", t->active_params,
            t->expert_bytes);
}

static void row_table(struct evalout *w, const struct scenario *sc, const struct terms *t,
                      const struct evalout_fix *f)
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
    snprintf(r->name, sizeof r->name, "%s", sc->name);
    r->params = t->params;
    r->states = t->states_bytes;
    r->act = t->act_bytes;
    r->logits = t->logits_bytes;
    r->peak = t->peak_bytes;
    r->budget = t->budget_bytes;
    r->fits = t->fits;
    r->k_best = t->k_best;
    r->max_b = t->max_micro_batch;
    r->fix_peak = f->peak_bytes;
    r->fix_b = f->micro_batch;
    r->gpus = f->gpus_for_states;
    snprintf(r->fix, sizeof r->fix, "%s", f->name);
    snprintf(r->plan, sizeof r->plan, "%s", f->plan);
}

void evalout_row(struct evalout *w, const struct scenario *sc, const struct terms *t,
                 const struct evalout_fix *fix)
{
    if (!fix)
        fix = &no_fix;
    if (w->format == EVALOUT_CSV)
        row_csv(w, sc, t, fix);
    else if (w->format == EVALOUT_JSON)
        row_json(w, sc, t, fix);
    else
        row_table(w, sc, t, fix);
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
    TCOL_BUDGET,
    TCOL_VERDICT,
    TCOL_KBEST,
    TCOL_MAXB,
    TCOL_FIX,
    TCOL_COUNT
};

static void format_params(char *buf, size_t n, uint64_t p)
{
    if (p >= 1000000000ull)
        snprintf(buf, n, "%.2fB", (double)p / 1e9);
    else
        snprintf(buf, n, "%.1fM", (double)p / 1e6);
}

static void table_cells(const struct evalout *w, const struct evalout_table_row *r,
                        char cells[TCOL_COUNT][FIX_PLAN_MAX + 64])
{
    const size_t n = FIX_PLAN_MAX + 64;
    double u = w->unit_bytes;
    snprintf(cells[TCOL_NAME], n, "%s", r->name);
    format_params(cells[TCOL_PARAMS], n, r->params);
    snprintf(cells[TCOL_STATES], n, "%.1f", (double)r->states / u);
    snprintf(cells[TCOL_ACT], n, "%.1f", (double)r->act / u);
    snprintf(cells[TCOL_LOGITS], n, "%.1f", (double)r->logits / u);
    snprintf(cells[TCOL_PEAK], n, "%.1f", (double)r->peak / u);
    snprintf(cells[TCOL_BUDGET], n, "%.1f", (double)r->budget / u);
    snprintf(cells[TCOL_VERDICT], n, "%s", r->fits ? "fits" : "OOM");
    snprintf(cells[TCOL_KBEST], n, "%" PRIu64, r->k_best);
    snprintf(cells[TCOL_MAXB], n, "%" PRIu64, r->max_b);
    if (strcmp(r->fix, "none") == 0)
        snprintf(cells[TCOL_FIX], n, "-");
    else if (strcmp(r->fix, "nothing") == 0)
        snprintf(cells[TCOL_FIX], n, "nothing fits");
    else
        snprintf(cells[TCOL_FIX], n, "%s (%.1f)", r->fix, (double)r->fix_peak / u);
}

/* Below the table, for each scenario that does not fit: what to change, and what it gives. */
static void table_print_fixes(struct evalout *w)
{
    size_t name_w = 0;
    for (unsigned long i = 0; i < w->rows; i++)
        if (strcmp(w->table[i].fix, "none") && strlen(w->table[i].name) > name_w)
            name_w = strlen(w->table[i].name);
    if (name_w == 0)
        return;
    fputs("\nTo make it fit (the first rung of the ladder that fits; settings changed):\n", w->out);
    for (unsigned long i = 0; i < w->rows; i++) {
        const struct evalout_table_row *r = &w->table[i];
        if (strcmp(r->fix, "none") == 0)
            continue;
        if (strcmp(r->fix, "nothing") == 0)
            fprintf(w->out,
                    "  %-*s  nothing fits: the model states alone need %" PRIu64
                    " GPUs of this memory, fully sharded\n",
                    (int)name_w, r->name, r->gpus);
        else
            fprintf(w->out, "  %-*s  %s -> %.1f %s at micro-batch %" PRIu64 "\n", (int)name_w,
                    r->name, r->plan, (double)r->fix_peak / w->unit_bytes, w->unit_name, r->fix_b);
    }
}

/* One line of the table, padded to the column widths: names, the verdict and the fix read left
 * to right, numbers align right; the last column is not padded. */
static void table_line(struct evalout *w, const char *const *cells, const size_t *width)
{
    for (int c = 0; c < TCOL_COUNT; c++) {
        int left = c == TCOL_NAME || c == TCOL_FIX || c == TCOL_VERDICT;
        if (c + 1 == TCOL_COUNT)
            fprintf(w->out, "%s\n", cells[c]);
        else
            fprintf(w->out, left ? "%-*s  " : "%*s  ", (int)width[c], cells[c]);
    }
}

static void table_print(struct evalout *w)
{
    static char cells[TCOL_COUNT][FIX_PLAN_MAX + 64];
    char heads[TCOL_COUNT][32];
    const char *titles[TCOL_COUNT] = {"scenario", "params", "states",    "activations",
                                      "logits",   "peak",   "budget",    "verdict",
                                      "k_best",   "max b",  "fix (peak)"};
    size_t width[TCOL_COUNT];
    for (int c = 0; c < TCOL_COUNT; c++) {
        if (c >= TCOL_STATES && c <= TCOL_BUDGET)
            snprintf(heads[c], sizeof heads[c], "%s %s", titles[c], w->unit_name);
        else
            snprintf(heads[c], sizeof heads[c], "%s", titles[c]);
        width[c] = strlen(heads[c]);
    }
    for (unsigned long i = 0; i < w->rows; i++) {
        table_cells(w, &w->table[i], cells);
        for (int c = 0; c < TCOL_COUNT; c++)
            if (strlen(cells[c]) > width[c])
                width[c] = strlen(cells[c]);
    }
    const char *line[TCOL_COUNT];
    for (int c = 0; c < TCOL_COUNT; c++)
        line[c] = heads[c];
    table_line(w, line, width);
    for (int c = 0; c < TCOL_COUNT; c++) {
        for (size_t k = 0; k < width[c]; k++)
            putc('-', w->out);
        fputs(c + 1 < TCOL_COUNT ? "  " : "\n", w->out);
    }
    for (unsigned long i = 0; i < w->rows; i++) {
        table_cells(w, &w->table[i], cells);
        for (int c = 0; c < TCOL_COUNT; c++)
            line[c] = cells[c];
        table_line(w, line, width);
    }
    fprintf(w->out, "\n%lu scenario%s; %s = %s bytes; budget = GPU memory minus the reserve\n",
            w->rows, w->rows == 1 ? "" : "s", w->unit_name, w->unit_bytes == 1e9 ? "10^9" : "2^30");
    table_print_fixes(w);
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
