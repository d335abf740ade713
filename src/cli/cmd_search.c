/* cmd_search: see commands.h. memfit search: the fastest layouts of each job that fit, as rows
 * that memfit eval reads, and with --report their PDF. */
#include "cli/commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/diag.h"
#include "base/out.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "cli/searchout.h"
#include "cli/searchplot.h"
#include "cli/session.h"
#include "draw/canvas_cairo.h"
#include "model/model.h"
#include "plan/deadline.h"
#include "plan/search.h"
#include "report/report_search.h"

/* A job and where it was read: the search's messages point to its line. */
struct job {
    struct scenario sc;
    const char *file;
    unsigned long line;
};

/* What --report keeps of a job searched: its counts, its fastest layouts and the plot of the
 * layouts evaluated (both owned; the plot of a fixed size, whatever their number). */
struct searched {
    const struct job *job;
    struct search_result res;
    struct search_layout *top;
    struct report_search_plot *plot;
    struct report_search_curve *curve; /* --gpus-range: the scaling curve (NULL: none) */
    bool lost;                         /* the top, the plot or the curve could not be allocated */
    uint64_t gpus;
};

struct search_ctx {
    const struct options *o;
    struct job *jobs;
    size_t n_jobs, cap;
    size_t failed; /* jobs read that could not be searched (reported) */
    bool opened;   /* a file could be opened: the header is written */
    bool aborted;  /* search_write wrote nothing: -o's file is left as it was */
    bool range;    /* a range of GPU counts is searched: the rows carry gpus */
    bool rows;     /* the rows are written (not with --report, unless -o) */
    struct searchout out;
    struct search_layout *top; /* o->top of them */
    struct model_cache *memo;
    struct searched *done; /* --report: n_done of n_jobs */
    size_t n_done;
    struct searchplot plotter; /* --report: the layouts of the job being searched */
    struct deadline_result dl; /* --tokens: the job's answer */
    struct diag *d;            /* the jobs' messages */
};

static bool keep_job(void *ctx, const struct scenario *sc, const char *file, unsigned long line,
                     struct diag *d)
{
    struct search_ctx *s = ctx;
    if (s->n_jobs == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        struct job *jobs = realloc(s->jobs, cap * sizeof *jobs);
        if (!jobs) {
            diag_report(d, NULL, 0, "out of memory");
            return false;
        }
        s->jobs = jobs;
        s->cap = cap;
    }
    s->jobs[s->n_jobs++] = (struct job){*sc, file, line};
    s->range |= sc->gpus_from > 0;
    return true;
}

static void search_opened(void *ctx)
{
    struct search_ctx *s = ctx;
    s->opened = true;
}

/* The pinned degrees of a job, for a message: "tp=4, pp=2". */
static void pinned_degrees(const struct scenario *job, char *buf, size_t size)
{
    const struct {
        unsigned pin;
        const char *name;
        uint64_t value;
    } degrees[] = {{SCENARIO_PIN_TP, "tp", job->tp},
                   {SCENARIO_PIN_PP, "pp", job->pp},
                   {SCENARIO_PIN_CP, "cp", job->cp},
                   {SCENARIO_PIN_DP, "dp", job->dp},
                   {SCENARIO_PIN_VPP, "vpp", job->vpp},
                   {SCENARIO_PIN_EP, "ep", job->ep},
                   {SCENARIO_PIN_ETP, "etp", job->etp},
                   {SCENARIO_PIN_MICRO_BATCH, "micro_batch", job->micro_batch}};
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof degrees / sizeof degrees[0]; i++)
        if (job->pinned & degrees[i].pin)
            snprintf(buf + strlen(buf), size - strlen(buf), "%s%s=%llu", buf[0] ? ", " : "",
                     degrees[i].name, (unsigned long long)degrees[i].value);
    if (!buf[0])
        snprintf(buf, size, "the pinned columns");
}

/* Why search_run could not search job j, said with its line. */
static void search_failed(struct search_ctx *s, const struct job *j, enum search_status st)
{
    s->failed++;
    const struct scenario *job = &j->sc;
    unsigned long long gpus = job->gpus;
    char pins[160];
    switch (st) {
    case SEARCH_NO_SPLIT:
        diag_report(s->d, j->file, j->line,
                    "column 'gpus': '%llu' cannot be split: no tp (dividing heads and kv_heads, at "
                    "most gpus_per_node), pp (at most layers), cp (dividing seq) and dp (dividing "
                    "global_batch) multiply to it",
                    gpus);
        return;
    case SEARCH_PIN_CLASH:
        pinned_degrees(job, pins, sizeof pins);
        diag_report(s->d, j->file, j->line,
                    "column 'gpus': no layout of %llu GPUs keeps the pinned %s", gpus, pins);
        return;
    case SEARCH_OVERFLOW:
        diag_report(s->d, j->file, j->line, "job '%s': a byte count overflows 64 bits", job->name);
        return;
    case SEARCH_TOO_LARGE:
        diag_report(s->d, j->file, j->line,
                    "job '%s': too many layouts to search one by one (more than 2^24 but the "
                    "micro-batch): pin some layout columns",
                    job->name);
        return;
    default:
        diag_report(s->d, j->file, j->line, "job '%s': out of memory", job->name);
        return;
    }
}

/*
 * search_run of sc into s->top and *res; with plot, every layout it evaluates goes to plot, in
 * a second search when they were too many to keep meanwhile (searchplot.h).
 */
static enum search_status search_plotted(struct search_ctx *s, const struct scenario *sc,
                                         struct search_result *res, struct report_search_plot *plot)
{
    size_t top = s->o->top;
    if (!plot)
        return search_run(sc, top, s->top, NULL, NULL, s->memo, res);
    searchplot_begin(&s->plotter, plot);
    enum search_status st = search_run(sc, top, s->top, searchplot_note, &s->plotter, s->memo, res);
    if (st != SEARCH_OK || searchplot_end(&s->plotter, sc->gpu_mem_bytes))
        return st;
    struct search_result again;
    return search_run(sc, top, s->top, searchplot_bin, &s->plotter, s->memo, &again);
}

/* With --report (plot), job j searched once more on the count a range or a deadline found
 * (gpus; 0: none), for the report's every layout. false when that search failed (reported). */
static bool plot_count_found(struct search_ctx *s, const struct job *j, uint64_t gpus,
                             struct search_result *res, struct report_search_plot *plot)
{
    if (!plot || !gpus)
        return true;
    struct scenario at = j->sc;
    at.gpus = gpus;
    at.gpus_from = 0;
    enum search_status st = search_plotted(s, &at, res, plot);
    if (st != SEARCH_OK)
        search_failed(s, j, st);
    return st == SEARCH_OK;
}

/*
 * Searches one job into s->top and *res: on its gpus, or for the fewest of a range (the count
 * into *gpus, 0 when none fits). With --report, every layout evaluated goes to plot (of the
 * count found, for a range). false when the job cannot be searched (reported).
 */
static bool search_job(struct search_ctx *s, const struct job *j, struct search_result *res,
                       uint64_t *gpus, uint64_t *from, uint64_t *to,
                       struct report_search_plot *plot)
{
    const struct scenario *job = &j->sc;
    const struct options *o = s->o;
    *from = o->range_from ? o->range_from : job->gpus_from;
    *to = o->range_from ? o->range_to : job->gpus;
    *gpus = job->gpus;
    if (o->tokens > 0) {
        /* --tokens and --days: the fewest GPUs that meet the deadline (doc/model.md 11.7). */
        bool ranged = *from > 0;
        *from = ranged ? *from : 1;
        *to = ranged ? *to : SEARCH_DEADLINE_MAX_GPUS;
        deadline_min_gpus(job, *from, *to, o->tokens, o->days, o->top, s->top, s->memo, res,
                          &s->dl);
        *gpus = s->dl.gpus;
        return plot_count_found(s, j, *gpus, res, plot);
    }
    if (*from) {
        *gpus = search_min_gpus(job, *from, *to, o->top, s->top, s->memo, res);
        return plot_count_found(s, j, *gpus, res, plot);
    }
    if (!job->gpus) {
        s->failed++;
        diag_report(s->d, j->file, j->line,
                    "column 'gpus': a value is required: the job's GPUs (a count, or a range A:B; "
                    "or --gpus-range)");
        return false;
    }
    enum search_status st = search_plotted(s, job, res, plot);
    if (st != SEARCH_OK)
        search_failed(s, j, st);
    return st == SEARCH_OK;
}

/* --gpus-range: the scaling curve after the fewest GPUs that fit, `first` (its fastest layout
 * best): the fastest layout at twice, four times, ... that count up to `to`, a row each when the
 * rows are written, and into curve (NULL: none) from `first` on (doc/model.md 11.7). */
static void search_curve(struct search_ctx *s, const struct scenario *job, uint64_t first,
                         const struct search_layout *best, uint64_t from, uint64_t to,
                         struct report_search_curve *curve)
{
    uint64_t counts[64];
    if (curve) {
        curve->n = 1;
        curve->gpus[0] = first;
        curve->best[0] = *best;
    }
    if (first > to / 2)
        return;
    size_t n = deadline_curve_counts(2 * first, to, job->gpus_per_node, counts, 64);
    for (size_t k = 0; k < n; k++) {
        struct scenario at = *job;
        at.gpus = counts[k];
        at.gpus_from = 0;
        struct search_layout fastest;
        struct search_result res;
        if (search_run(&at, 1, &fastest, NULL, NULL, s->memo, &res) != SEARCH_OK)
            continue;
        if (s->rows)
            searchout_job(&s->out, job, &res, &fastest, counts[k], from, to, NULL, true);
        if (curve && res.n_top && curve->n < CHART_SCALING_MAX) {
            curve->gpus[curve->n] = counts[k];
            curve->best[curve->n++] = fastest;
        }
    }
}

/* Searches every job: its rows into f (when s->rows), and with --report what the PDF needs into
 * s->done. Returns -1 (write nothing) when no input could be opened. */
static int search_write(FILE *f, void *ctx)
{
    struct search_ctx *s = ctx;
    bool to_stdout = f == stdout;
    s->aborted = !s->opened;
    if (!s->opened)
        return -1;
    s->out.out = f;
    s->out.table_cols = session_table_cols(s->o, to_stdout);
    s->out.range = s->range || s->o->range_from > 0 || s->o->tokens > 0;
    s->out.tokens = s->o->tokens;
    s->out.days = s->o->days;
    s->out.price = s->o->price;
    if (s->rows)
        searchout_begin(&s->out);
    struct progress bar;
    progress_start(&bar, s->o, "search", s->n_jobs > 4, to_stdout && s->rows);
    for (size_t i = 0; i < s->n_jobs; i++) {
        struct searched *keep = s->done ? &s->done[s->n_done] : NULL;
        struct search_result res;
        uint64_t gpus, from, to;
        if (keep) {
            *keep = (struct searched){.job = &s->jobs[i], .plot = malloc(sizeof *keep->plot)};
            keep->lost = !keep->plot;
            if (keep->plot)
                report_search_plot_init(keep->plot);
        }
        if (search_job(s, &s->jobs[i], &res, &gpus, &from, &to, keep ? keep->plot : NULL)) {
            bool deadline = s->o->tokens > 0;
            if (s->rows)
                searchout_job(&s->out, &s->jobs[i].sc, &res, s->top, gpus, from, to,
                              deadline ? &s->dl : NULL, false);
            if (from && gpus && !deadline && res.n_top && (s->rows || keep)) {
                struct report_search_curve *curve = NULL;
                if (keep) {
                    curve = keep->curve = malloc(sizeof *keep->curve);
                    keep->lost |= !curve;
                }
                search_curve(s, &s->jobs[i].sc, gpus, s->top, from, to, curve);
            }
            if (keep) {
                keep->res = res;
                keep->gpus = gpus;
                keep->top = malloc((res.n_top ? res.n_top : 1) * sizeof *keep->top);
                if (keep->top)
                    memcpy(keep->top, s->top, res.n_top * sizeof *keep->top);
                keep->lost |= !keep->top;
                s->n_done++;
            }
        } else if (keep) {
            free(keep->plot);
            free(keep->curve);
        }
        progress_show(&bar, (double)(i + 1), (double)s->n_jobs);
    }
    progress_end(&bar);
    if (s->rows)
        searchout_end(&s->out);
    return 0;
}

/* Messages of out_write_atomic, unless the file was left alone on purpose (nothing was read). */
static void search_file_message(void *ctx, const char *msg, const char *file, unsigned long line)
{
    (void)file;
    (void)line;
    struct search_ctx *s = ctx;
    if (!s->aborted)
        fprintf(stderr, "memfit: %s\n", msg);
}

/* --report: the PDF of the jobs searched. Returns false when it could not be written
 * (reported). */
static bool search_report(struct search_ctx *s)
{
    const struct options *o = s->o;
    if (s->n_done == 0) {
        diag_report(s->d, NULL, 0, "no job searched: '%s' is not written", o->report_path);
        return true;
    }
    struct report_search_job *jobs = calloc(s->n_done, sizeof *jobs);
    bool lost = false;
    if (!jobs) {
        fprintf(stderr, "memfit: out of memory\n");
        return false;
    }
    for (size_t i = 0; i < s->n_done; i++) {
        const struct searched *d = &s->done[i];
        jobs[i] = (struct report_search_job){d->job->sc.name, &d->job->sc, &d->res, d->top,
                                             d->plot,         d->gpus,     d->curve};
        lost |= d->lost;
    }
    if (lost) {
        fprintf(stderr, "memfit: out of memory: the layouts of the report could not be kept\n");
        free(jobs);
        return false;
    }
    struct diag d;
    diag_init(&d, session_print_message, (void *)o);
    int rc = report_search_write(jobs, s->n_done, o->report_path, o->units, &d);
    free(jobs);
    canvas_cairo_shutdown();
    if (rc != 0)
        return false;
    if (!o->quiet)
        fprintf(stderr, "memfit: wrote %s (%zu job%s)\n", o->report_path, s->n_done,
                s->n_done == 1 ? "" : "s");
    return true;
}

int cmd_search(const struct options *o)
{
    if (o->n_files == 0)
        return options_usage_error(o, "%s: at least one FILE.csv (or -) is needed", "search");
    bool to_file = o->out && strcmp(o->out, "-") != 0;
    struct stat st;
    if (to_file && stat(o->out, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "memfit: cannot write '%s': it is a folder (search -o names a file)\n",
                o->out);
        return EXIT_USAGE;
    }
    struct diag d;
    diag_init(&d, session_print_message, (void *)o);
    struct search_ctx s;
    memset(&s, 0, sizeof s);
    s.o = o;
    s.d = &d;
    /* With --report the rows are written where asked for: -o, or --format on standard output. */
    s.rows = !o->report_path || o->out || o->format_given;
    s.top = malloc(o->top * sizeof *s.top);
    if (!s.top) {
        fprintf(stderr, "memfit: out of memory\n");
        return EXIT_USAGE;
    }
    s.memo = model_cache_new(); /* NULL only makes the search slower */
    searchplot_init(&s.plotter, SEARCHPLOT_KEEP);
    searchout_init(&s.out, o->format, o->units, false, stdout);
    struct reading rd = {keep_job, search_opened, NULL, &s, false, false, 0, 0};
    bool io_ok = session_read_files(o, &rd, &d);
    bool write_failed = false;
    if (o->report_path && s.n_jobs) {
        s.done = calloc(s.n_jobs, sizeof *s.done);
        write_failed = !s.done;
    }
    if (write_failed)
        fprintf(stderr, "memfit: out of memory\n");
    else if (to_file && s.rows) {
        struct diag fd;
        diag_init(&fd, search_file_message, &s);
        write_failed = out_write_making_dirs(o->out, search_write, &s, &fd) != 0 && !s.aborted;
    } else {
        search_write(stdout, &s);
        write_failed = !session_flush_stdout();
    }
    write_failed |= s.out.error != 0;
    if (o->report_path && s.opened && !write_failed)
        write_failed = !search_report(&s);
    for (size_t i = 0; i < s.n_done; i++) {
        free(s.done[i].top);
        free(s.done[i].plot);
        free(s.done[i].curve);
    }
    free(s.done);
    searchplot_release(&s.plotter);
    searchout_release(&s.out);
    model_cache_free(s.memo);
    free(s.top);
    free(s.jobs);
    if (write_failed || !io_ok)
        return EXIT_USAGE;
    unsigned long failed = s.failed < rd.accepted ? s.failed : rd.accepted;
    session_say_rejected(o, "job", "searched", rd.accepted - failed, rd.rejected + failed);
    return d.count ? EXIT_ROWS_REJECTED : EXIT_ALL_OK;
}
