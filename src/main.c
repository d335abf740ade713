/*
 * main: the command line (doc/memfit.1: SYNOPSIS, COMMANDS, OPTIONS). Parses options, runs a
 * sub-command, prints the messages the modules report and chooses the exit status (doc/memfit.1,
 * EXIT STATUS). The only place that exits.
 *
 *   0  every scenario processed
 *   1  at least one row rejected (every valid row still processed and written)
 *   2  usage error, unreadable input or unwritable output
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "diag.h"
#include "evalout.h"
#include "figures.h"
#include "canvas_cairo.h"
#include "model.h"
#include "paths.h"
#include "plan.h"
#include "report.h"
#include "suggest.h"

#define MEMFIT_VERSION "0.1.0"

enum exit_code { EXIT_ALL_OK = 0, EXIT_ROWS_REJECTED = 1, EXIT_USAGE = 2 };

enum progress_mode { PROGRESS_AUTO, PROGRESS_ALWAYS, PROGRESS_NEVER };

struct options {
    const char *command;
    const char *out_dir;
    enum evalout_format format;
    bool split;
    const char *template_path;
    enum units units;
    bool letter;
    double reserve;
    const char *models_path, *gpus_path;
    bool quiet;
    enum progress_mode progress;
    char **files;
    int n_files;
};

/* Prints every message at once (so a million-row run keeps no list), with the program name. */
static void print_message(void *ctx, const char *msg)
{
    const struct options *o = ctx;
    if (!o->quiet)
        fprintf(stderr, "memfit: %s\n", msg);
}

static void usage(FILE *f)
{
    fputs(
        "usage: memfit eval    [OPTIONS] FILE.csv...   terms and verdicts, one row per scenario\n"
        "       memfit report  [OPTIONS] FILE.csv...   PDF report(s) into --out (default out/)\n"
        "       memfit figures [OPTIONS]               the lesson's five figures (out/figures)\n"
        "       memfit --help | --version\n"
        "\n"
        "FILE - reads standard input.\n"
        "  -o, --out DIR            output folder\n"
        "      --format FMT         eval output: csv (default), json or table\n"
        "      --split              report: one PDF per scenario as well as the combined one\n"
        "      --template FILE      report: the scenario template (default templates/report.tmpl)\n"
        "      --paper a4|letter    report: paper size (default a4)\n"
        "      --units GB|GiB       units for people (default GB = 10^9 bytes)\n"
        "      --reserve FRACTION   GPU memory kept free (default 0.15; the CSV column wins)\n"
        "      --models FILE        model presets (default configs/models.csv)\n"
        "      --gpus FILE          GPU presets (default configs/gpus.csv)\n"
        "  -q, --quiet              no messages on stderr\n"
        "      --progress MODE      auto (default), always or never: a progress bar on stderr\n"
        "\n"
        "Exit status: 0 all scenarios processed, 1 some rows rejected, 2 usage or I/O error.\n",
        f);
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("memfit: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\nTry 'memfit --help'.\n", stderr);
    return EXIT_USAGE;
}

enum {
    OPT_FORMAT = 256,
    OPT_SPLIT,
    OPT_TEMPLATE,
    OPT_UNITS,
    OPT_RESERVE,
    OPT_MODELS,
    OPT_GPUS,
    OPT_PROGRESS,
    OPT_PAPER,
    OPT_HELP,
    OPT_VERSION
};

static const struct option long_options[] = {
    {"out", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"split", no_argument, NULL, OPT_SPLIT},
    {"template", required_argument, NULL, OPT_TEMPLATE},
    {"paper", required_argument, NULL, OPT_PAPER},
    {"units", required_argument, NULL, OPT_UNITS},
    {"reserve", required_argument, NULL, OPT_RESERVE},
    {"models", required_argument, NULL, OPT_MODELS},
    {"gpus", required_argument, NULL, OPT_GPUS},
    {"quiet", no_argument, NULL, 'q'},
    {"progress", required_argument, NULL, OPT_PROGRESS},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

/* The index of arg among the n choices (case-insensitive), or -1 after a usage message that
 * lists them: "--format: 'xml' is not csv, json or table". */
static int parse_choice(const char *option, const char *arg, const char *const *choices, int n)
{
    for (int i = 0; i < n; i++)
        if (strcasecmp(arg, choices[i]) == 0)
            return i;
    char list[128];
    fprintf(stderr, "memfit: %s: '%s' is not %s\nTry 'memfit --help'.\n", option, arg,
            suggest_join(choices, (size_t)n, " or ", list, sizeof list));
    return -1;
}

/* Options that choose one of a few words; returns -1 to go on, or an exit status. */
static int parse_choice_option(struct options *o, int c, const char *arg)
{
    static const char *const formats[] = {"csv", "json", "table"};
    static const char *const papers[] = {"a4", "letter"};
    static const char *const units[] = {"GB", "GiB"};
    static const char *const progress[] = {"auto", "always", "never"};
    int i;
    switch (c) {
    case OPT_FORMAT:
        if ((i = parse_choice("--format", arg, formats, 3)) < 0)
            return EXIT_USAGE;
        o->format = (enum evalout_format)i; /* EVALOUT_CSV, _JSON, _TABLE in this order */
        return -1;
    case OPT_PAPER:
        if ((i = parse_choice("--paper", arg, papers, 2)) < 0)
            return EXIT_USAGE;
        o->letter = i == 1;
        return -1;
    case OPT_UNITS:
        if ((i = parse_choice("--units", arg, units, 2)) < 0)
            return EXIT_USAGE;
        o->units = i == 1 ? UNITS_GIB : UNITS_GB;
        return -1;
    default: /* OPT_PROGRESS */
        if ((i = parse_choice("--progress", arg, progress, 3)) < 0)
            return EXIT_USAGE;
        o->progress = (enum progress_mode)i; /* PROGRESS_AUTO, _ALWAYS, _NEVER in this order */
        return -1;
    }
}

/* Returns -1 to go on, or an exit status. */
static int parse_option(struct options *o, int c, const char *arg)
{
    char *end;
    switch (c) {
    case OPT_FORMAT:
    case OPT_PAPER:
    case OPT_UNITS:
    case OPT_PROGRESS:
        return parse_choice_option(o, c, arg);
    case OPT_RESERVE:
        errno = 0;
        o->reserve = strtod(arg, &end);
        if (end == arg || *end || errno || !(o->reserve >= 0 && o->reserve < 1))
            return usage_error("--reserve: '%s' is not a fraction in [0, 1)", arg);
        return -1;
    case 'o':
        o->out_dir = arg;
        return -1;
    case OPT_TEMPLATE:
        o->template_path = arg;
        return -1;
    case OPT_MODELS:
        o->models_path = arg;
        return -1;
    case OPT_GPUS:
        o->gpus_path = arg;
        return -1;
    case OPT_SPLIT:
        o->split = true;
        return -1;
    case 'q':
        o->quiet = true;
        return -1;
    case OPT_HELP:
        usage(stdout);
        return EXIT_ALL_OK;
    case OPT_VERSION:
        printf("memfit %s\n", MEMFIT_VERSION);
        return EXIT_ALL_OK;
    default:
        fputs("Try 'memfit --help'.\n", stderr);
        return EXIT_USAGE;
    }
}

static int parse_args(struct options *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->reserve = 0.15;
    int c;
    opterr = 1;
    while ((c = getopt_long(argc, argv, "o:q", long_options, NULL)) != -1) {
        int rc = parse_option(o, c, optarg);
        if (rc >= 0)
            return rc;
    }
    if (optind >= argc) {
        usage(stderr);
        return EXIT_USAGE;
    }
    o->command = argv[optind];
    o->files = argv + optind + 1;
    o->n_files = argc - optind - 1;
    return -1;
}

/* ---- presets ---- */

static struct config_presets *load_presets(const struct options *o, struct diag *d)
{
    char models[4096], gpus[4096];
    const char *mp = o->models_path, *gp = o->gpus_path;
    if (!mp && paths_find_data("configs/models.csv", models, sizeof models) == 0)
        mp = models;
    if (!gp && paths_find_data("configs/gpus.csv", gpus, sizeof gpus) == 0)
        gp = gpus;
    return config_presets_load(mp, gp, d);
}

/* ---- progress ---- */

struct progress {
    bool on;
    long size, last_pct;
};

static void progress_start(struct progress *p, const struct options *o, FILE *f)
{
    struct stat st;
    *p = (struct progress){false, 0, -1};
    if (o->quiet || o->progress == PROGRESS_NEVER)
        return;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
        return;
    p->size = (long)st.st_size;
    /* "auto": only on a terminal, and only for work with more than a few scenarios. */
    p->on = o->progress == PROGRESS_ALWAYS || (isatty(STDERR_FILENO) && p->size > 64 * 1024);
}

static void progress_update(struct progress *p, FILE *f, const char *name)
{
    if (!p->on || p->size <= 0)
        return;
    long pct = ftell(f) * 100 / p->size;
    if (pct == p->last_pct)
        return;
    p->last_pct = pct;
    int bar = (int)(pct * 30 / 100);
    fprintf(stderr, "\r%s [%.*s%*s] %3ld%%", name, bar, "##############################", 30 - bar,
            "", pct);
}

static void progress_end(struct progress *p)
{
    if (p->on && p->last_pct >= 0)
        fputc('\n', stderr);
}

/* ---- reading scenarios ---- */

/* Called for each valid scenario; returns false to stop reading (a fatal error, reported). */
typedef bool scenario_fn(void *ctx, const struct scenario *sc, const char *file, unsigned long line,
                         struct diag *d);

/* Reads every scenario of one file. Returns false if the file cannot be read to its end. */
static bool read_file(const struct options *o, const char *path, const struct config_presets *pr,
                      struct nameset *names, scenario_fn *fn, void *ctx, struct diag *d)
{
    bool is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "r");
    const char *label = is_stdin ? "<stdin>" : path;
    if (!f) {
        diag_report(d, path, 0, "cannot open: %s", strerror(errno));
        return false;
    }
    struct config_options copt = {o->reserve};
    struct config_reader *r = config_reader_new(f, label, pr, &copt, names, d);
    struct progress prog;
    progress_start(&prog, o, f);
    bool ok = r != NULL;
    struct scenario sc;
    unsigned long line;
    int rc;
    while (ok && (rc = config_reader_next(r, &sc, &line)) != 0) {
        if (rc == -2)
            ok = false;
        else if (rc == 1)
            ok = fn(ctx, &sc, label, line, d);
        progress_update(&prog, f, label);
    }
    progress_end(&prog);
    config_reader_free(r);
    if (!is_stdin)
        fclose(f);
    return ok;
}

/* Reads every file of the command line, with the presets and the uniqueness of names shared. */
static bool read_files(const struct options *o, scenario_fn *fn, void *ctx, struct diag *d)
{
    struct config_presets *pr = load_presets(o, d);
    if (!pr)
        return false;
    struct nameset names;
    nameset_init(&names);
    bool ok = true;
    for (int i = 0; i < o->n_files; i++)
        ok = read_file(o, o->files[i], pr, &names, fn, ctx, d) && ok;
    nameset_release(&names);
    config_presets_free(pr);
    return ok;
}

/* ---- eval ---- */

struct eval_ctx {
    struct evalout out;
    struct plan plan; /* about 20 KB, reused for every row */
};

static bool eval_one(void *ctx, const struct scenario *sc, const char *file, unsigned long line,
                     struct diag *d)
{
    struct eval_ctx *e = ctx;
    struct terms t;
    char settings[PLAN_SETTINGS_MAX];
    if (model_eval(sc, &t) != MODEL_OK || plan_build_from(sc, &t, &e->plan) != 0) {
        diag_report(d, file, line, "scenario '%s': a byte count overflows 64 bits", sc->name);
        return true;
    }
    plan_fix_settings(&e->plan, settings, sizeof settings);
    struct evalout_fix fix = {plan_fix_name(e->plan.fix), e->plan.fix_peak_bytes,
                              e->plan.fix_micro_batch, settings, e->plan.gpus_for_states};
    evalout_row(&e->out, sc, &t, &fix);
    return true;
}

static int cmd_eval(const struct options *o)
{
    struct diag d;
    diag_init(&d, print_message, (void *)o);
    struct eval_ctx *e = malloc(sizeof *e);
    if (!e) {
        fprintf(stderr, "memfit: out of memory\n");
        return EXIT_USAGE;
    }
    evalout_init(&e->out, o->format, o->units, stdout);
    evalout_begin(&e->out);
    bool io_ok = read_files(o, eval_one, e, &d);
    evalout_end(&e->out);
    bool write_failed = ferror(stdout) || e->out.error;
    evalout_release(&e->out);
    free(e);
    if (write_failed) {
        fprintf(stderr, "memfit: cannot write the output\n");
        return EXIT_USAGE;
    }
    if (!io_ok)
        return EXIT_USAGE;
    return d.count ? EXIT_ROWS_REJECTED : EXIT_ALL_OK;
}

/* ---- report ---- */

/* Every valid scenario, kept: the report needs them all (its first page sums them up). */
struct scenario_list {
    struct scenario *items;
    size_t n, cap;
};

static bool keep_scenario(void *ctx, const struct scenario *sc, const char *file,
                          unsigned long line, struct diag *d)
{
    struct scenario_list *l = ctx;
    (void)file;
    (void)line;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        struct scenario *items = realloc(l->items, cap * sizeof *items);
        if (!items) {
            diag_report(d, NULL, 0, "out of memory");
            return false;
        }
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = *sc;
    return true;
}

static int cmd_report(const struct options *o)
{
    struct diag d;
    diag_init(&d, print_message, (void *)o);
    struct scenario_list list = {NULL, 0, 0};
    bool io_ok = read_files(o, keep_scenario, &list, &d);
    size_t rejected = d.count;
    int rc = EXIT_ALL_OK;
    if (!io_ok) {
        rc = EXIT_USAGE;
    } else if (list.n == 0) {
        diag_report(&d, NULL, 0, "no valid scenario to report");
        rc = rejected ? EXIT_ROWS_REJECTED : EXIT_USAGE;
    } else {
        struct report_options ro;
        report_options_init(&ro);
        ro.out_dir = o->out_dir ? o->out_dir : "out";
        ro.split = o->split;
        ro.scenario_template = o->template_path;
        ro.paper = o->letter ? REPORT_PAPER_LETTER : REPORT_PAPER_A4;
        ro.units = o->units;
        ro.source_date_epoch = getenv("SOURCE_DATE_EPOCH");
        ro.inputs = o->n_files == 1 ? o->files[0] : "several files";
        if (report_write(list.items, list.n, &ro, &d) != 0)
            rc = EXIT_USAGE;
        else if (rejected)
            rc = EXIT_ROWS_REJECTED;
    }
    canvas_cairo_shutdown();
    free(list.items);
    return rc;
}

/* ---- figures ---- */

static int cmd_figures(const struct options *o)
{
    struct diag d;
    diag_init(&d, print_message, (void *)o);
    if (o->n_files > 0)
        return usage_error("figures: takes no FILE (got '%s')", o->files[0]);
    int rc =
        figures_write(o->out_dir ? o->out_dir : "out/figures", getenv("SOURCE_DATE_EPOCH"), &d);
    canvas_cairo_shutdown();
    if (rc != 0)
        return EXIT_USAGE;
    if (!o->quiet)
        fprintf(stderr, "memfit: wrote the lesson's five figures (PNG, SVG, PDF) into %s\n",
                o->out_dir ? o->out_dir : "out/figures");
    return EXIT_ALL_OK;
}

int main(int argc, char **argv)
{
    struct options o;
    int rc = parse_args(&o, argc, argv);
    if (rc >= 0)
        return rc;
    if (strcmp(o.command, "eval") == 0) {
        if (o.n_files == 0)
            return usage_error("%s: at least one FILE.csv (or -) is needed", "eval");
        return cmd_eval(&o);
    }
    if (strcmp(o.command, "report") == 0) {
        if (o.n_files == 0)
            return usage_error("%s: at least one FILE.csv (or -) is needed", "report");
        return cmd_report(&o);
    }
    if (strcmp(o.command, "figures") == 0)
        return cmd_figures(&o);
    return usage_error("unknown command '%s' (eval, report, figures)", o.command);
}
