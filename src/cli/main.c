/*
 * main: the command line (doc/memfit.1: SYNOPSIS, COMMANDS, OPTIONS). Parses options, runs a
 * sub-command, prints the messages the modules report and chooses the exit status (doc/memfit.1,
 * EXIT STATUS). The only place that exits.
 *
 *   0  every scenario processed (or the help printed)
 *   1  at least one row rejected (every valid row still processed and written)
 *   2  usage error, unreadable input or unwritable output
 *
 * Two tables drive it: `commands` (a command is one entry: its usage, help and function) and
 * `option_specs` (an option is one entry: its names, the commands it applies to, its help and,
 * for an option that takes one of a few words, those words). The parser, the help of each
 * command and the check that an option applies to its command all read them; so do the tests
 * of the manual page and of the shell completion (doc/memfit.bash).
 */
#include <errno.h>
#include <pthread.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/out.h"
#include "base/paths.h"
#include "base/strbuf.h"
#include "base/suggest.h"
#include "cli/evalout.h"
#include "cli/readahead.h"
#include "cli/searchout.h"
#include "draw/canvas_cairo.h"
#include "draw/figures.h"
#include "input/config.h"
#include "input/modeljson.h"
#include "model/model.h"
#include "plan/plan.h"
#include "plan/search.h"
#include "report/report.h"
#include "report/report_charts.h"
#include "report/report_search.h"
#include "report/report_tables.h"

#define MEMFIT_VERSION "0.1.0"

enum exit_code { EXIT_ALL_OK = 0, EXIT_ROWS_REJECTED = 1, EXIT_USAGE = 2 };

enum progress_mode { PROGRESS_AUTO, PROGRESS_ALWAYS, PROGRESS_NEVER };

/* The commands an option applies to: one bit per command (struct command's bit); CMD_TOP marks
 * the options the general help lists. */
enum {
    CMD_EVAL = 1u << 0,
    CMD_REPORT = 1u << 1,
    CMD_FIGURES = 1u << 2,
    CMD_HELP = 1u << 3,
    CMD_IMPORT_CONFIG = 1u << 4,
    CMD_SEARCH = 1u << 5,
    CMD_TOP = 1u << 31,
    CMD_ALL = ~0u,
};

struct command;

struct options {
    const struct command *command; /* NULL until known */
    const char *out;               /* -o as given */
    enum evalout_format format;
    bool wide, split, letter, quiet, help, version;
    const char *template_path;
    enum units units;
    enum peak_model peak;
    double reserve;
    const char *models_path, *gpus_path;
    enum progress_mode progress;
    uint64_t top;                  /* search --top */
    uint64_t threads;              /* eval --threads; 0: one a processor */
    uint64_t range_from, range_to; /* search --gpus-range (0: none) */
    const char *report_path;       /* search --report */
    char **files;
    int n_files;
};

/* ---- the commands ---- */

struct command {
    const char *name;
    unsigned bit;            /* CMD_ */
    const char *args;        /* what follows the name in its usage line */
    const char *summary;     /* its line in the general help */
    const char *about;       /* the paragraph of its own help */
    const char *example;     /* lines of its own help, each a command line */
    const char *exit_status; /* the end of its own help */
    void (*more_help)(FILE *f);
    int (*run)(const struct options *o);
};

static int cmd_eval(const struct options *o);
static int cmd_report(const struct options *o);
static int cmd_figures(const struct options *o);
static int cmd_help(const struct options *o);
static int cmd_import_config(const struct options *o);
static int cmd_search(const struct options *o);
static void report_more_help(FILE *f);

#define EXIT_STATUS_ROWS                                                                           \
    "0 every scenario processed; 1 some rows rejected (the other rows are still processed and "    \
    "written); 2 a usage error, an unreadable input or an unwritable output."

static const struct command commands[] = {
    {"eval", CMD_EVAL, "[OPTIONS] FILE.csv...", "each scenario's terms and verdict",
     "Evaluates every scenario of the CSV files (standard input for -): the memory terms of "
     "the most loaded GPU, the verdict and the cheapest fix, one row per scenario, to standard "
     "output or into the file of -o.",
     "memfit eval configs/examples.csv --format table\n"
     "memfit eval --format json runs.csv -o runs.json",
     EXIT_STATUS_ROWS, NULL, cmd_eval},
    {"report", CMD_REPORT, "[OPTIONS] FILE.csv...", "the PDF report, into out/ or -o",
     "Writes the PDF capacity-planning report of every scenario of the CSV files (standard "
     "input for -): out/report.pdf, or report.pdf in the folder of -o, or the file of -o when "
     "it ends in .pdf; with --split also one PDF per scenario. Says on standard error what it "
     "wrote.",
     "memfit report configs/examples.csv -o review.pdf\n"
     "memfit report configs/examples.csv --split -o out",
     EXIT_STATUS_ROWS, report_more_help, cmd_report},
    {"figures", CMD_FIGURES, "[OPTIONS]", "the lesson's five figures",
     "Writes the lesson's five figures (PNG, SVG and PDF, the same bytes on every run) into "
     "out/figures or the folder of -o.",
     "SOURCE_DATE_EPOCH=1700000000 memfit figures -o figs",
     "0 the figures written; 2 a usage error or an unwritable folder.", NULL, cmd_figures},
    {"search", CMD_SEARCH, "[OPTIONS] FILE.csv...", "the best layouts of each job on its GPUs",
     "Searches every layout of each job of the CSV files (standard input for -): a job is a "
     "scenario row with gpus, the GPUs it has, instead of dp; the search varies tp, pp, vpp, "
     "cp, ep, etp, dp, the ZeRO stage, attention, recomputation, offload and the micro-batch "
     "over them (a layout column the row gives is kept) and writes the fastest layouts that fit "
     "by the cost model's step time, one row each, each a complete scenario that memfit eval "
     "reads, to standard output or into the file of -o. A job whose gpus is a range A:B, or "
     "--gpus-range, gets the fewest GPUs of the range at which a layout fits.",
     "memfit search configs/jobs.csv --format table\n"
     "memfit search configs/jobs.csv --top 3 | cut -d, -f6-62 | memfit eval -\n"
     "memfit search configs/jobs.csv --gpus-range 8:4096 --top 1",
     "0 every job searched (a job that nothing fits included); 1 some rows rejected or some jobs "
     "not searchable (reported; the other jobs are still searched and written); 2 a usage "
     "error, an unreadable input or an unwritable output.",
     NULL, cmd_search},
    {"import-config", CMD_IMPORT_CONFIG, "CONFIG.json...", "models.csv rows from config.json files",
     "Prints a models table (a header, then one row per file) from the config.json files of "
     "published models, or folders holding one, for a preset of your own (--models). The model "
     "column of a scenario takes such a file too, without this step.",
     "memfit import-config models/Llama-3.1-8B/config.json > my-models.csv",
     "0 every file imported; 1 some files describe no model memfit plans (reported; the others "
     "are still printed); 2 a usage error or an unreadable file.",
     NULL, cmd_import_config},
    {"help", CMD_HELP, "[COMMAND]", "the options of COMMAND",
     "Prints the help of memfit, or of COMMAND: its options, an example and its exit status. "
     "memfit COMMAND --help (or -h) prints the same.",
     "memfit help report", "0 the help printed; 2 an unknown COMMAND.", NULL, cmd_help},
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* ---- the options ---- */

enum {
    OPT_FORMAT = 256,
    OPT_WIDE,
    OPT_SPLIT,
    OPT_TEMPLATE,
    OPT_UNITS,
    OPT_RESERVE,
    OPT_MODELS,
    OPT_GPUS,
    OPT_PROGRESS,
    OPT_PAPER,
    OPT_PEAK,
    OPT_TOP,
    OPT_THREADS,
    OPT_GPUS_RANGE,
    OPT_REPORT,
    OPT_VERSION
};

/* The words of a choice, NULL-terminated, in the order of the enum they set. */
static const char *const format_words[] = {"csv", "json", "table", NULL};      /* EVALOUT_ */
static const char *const paper_words[] = {"a4", "letter", NULL};               /* REPORT_PAPER_ */
static const char *const units_words[] = {"GB", "GiB", NULL};                  /* UNITS_ */
static const char *const progress_words[] = {"auto", "always", "never", NULL}; /* PROGRESS_ */
static const char *const peak_words[] = {"lesson", "step", NULL};              /* PEAK_ */

struct option_spec {
    const char *name;           /* the long name */
    int has_arg;                /* no_argument or required_argument */
    int key;                    /* the short letter, or an OPT_ value */
    unsigned commands;          /* CMD_ bits: the commands it applies to */
    const char *arg;            /* its argument in the help; NULL: the choices, a|b|c */
    const char *const *choices; /* the words it takes; NULL: any */
    const char *help;
};

/*
 * Every option, in the order of the help. An option may have one entry per command when its
 * meaning differs (-o); getopt sees each name once. A new option is one line here and one case
 * in parse_option (and a word in doc/memfit.1 and doc/memfit.bash, whose tests check that).
 */
static const struct option_spec option_specs[] = {
    {"out", required_argument, 'o', CMD_EVAL | CMD_SEARCH, "FILE", NULL,
     "write the rows into FILE (replaced only when complete), not standard output; - is "
     "standard output"},
    {"out", required_argument, 'o', CMD_REPORT, "DIR|FILE.pdf", NULL,
     "the folder of the report (default out), or, ending in .pdf, the report's own file"},
    {"out", required_argument, 'o', CMD_FIGURES, "DIR", NULL,
     "the folder of the figures (default out/figures)"},
    {"format", required_argument, OPT_FORMAT, CMD_EVAL | CMD_SEARCH, NULL, format_words,
     "the rows' format (default csv)"},
    {"wide", no_argument, OPT_WIDE, CMD_EVAL | CMD_SEARCH, NULL, NULL,
     "with --format table: every column, however wide (default: the columns that fit the "
     "terminal, or 80 columns)"},
    {"threads", required_argument, OPT_THREADS, CMD_EVAL, "N", NULL,
     "with --format csv: N threads in all, one parsing the rows (default: one a processor, at "
     "most 8; 1: no second thread)"},
    {"top", required_argument, OPT_TOP, CMD_SEARCH, "N", NULL,
     "the N fastest layouts of each job (default 10)"},
    {"gpus-range", required_argument, OPT_GPUS_RANGE, CMD_SEARCH, "A:B", NULL,
     "for every job, the fewest GPUs from A to B (multiples of its gpus_per_node) at which a "
     "layout fits, instead of its gpus"},
    {"report", required_argument, OPT_REPORT, CMD_SEARCH, "FILE.pdf", NULL,
     "write the PDF of the search (each job's fastest layouts, every layout's peak against its "
     "step time, the tp x pp map) into FILE.pdf instead of the rows (which -o still writes)"},
    {"split", no_argument, OPT_SPLIT, CMD_REPORT, NULL, NULL,
     "one PDF per scenario as well as the combined one"},
    {"template", required_argument, OPT_TEMPLATE, CMD_REPORT, "FILE", NULL,
     "the template of each scenario's section (default templates/report.tmpl)"},
    {"paper", required_argument, OPT_PAPER, CMD_REPORT, NULL, paper_words,
     "the paper size (default a4)"},
    {"units", required_argument, OPT_UNITS, CMD_EVAL | CMD_REPORT | CMD_SEARCH, NULL, units_words,
     "the units of sizes for people (default GB = 10^9 bytes)"},
    {"peak", required_argument, OPT_PEAK, CMD_EVAL | CMD_REPORT | CMD_SEARCH, NULL, peak_words,
     "the peak that decides: a real step's phases (default step) or the lesson's sum"},
    {"reserve", required_argument, OPT_RESERVE, CMD_EVAL | CMD_REPORT | CMD_SEARCH, "FRACTION",
     NULL, "GPU memory kept free (default 0.15; the CSV column wins)"},
    {"models", required_argument, OPT_MODELS, CMD_EVAL | CMD_REPORT | CMD_SEARCH, "FILE", NULL,
     "the model presets (default configs/models.csv)"},
    {"gpus", required_argument, OPT_GPUS, CMD_EVAL | CMD_REPORT | CMD_SEARCH, "FILE", NULL,
     "the GPU presets (default configs/gpus.csv)"},
    {"progress", required_argument, OPT_PROGRESS, CMD_EVAL | CMD_REPORT | CMD_SEARCH, NULL,
     progress_words,
     "a progress bar on standard error (default auto: on a terminal, for long work)"},
    {"quiet", no_argument, 'q', CMD_ALL, NULL, NULL,
     "no messages on standard error about rows or what was written, no progress bar"},
    {"help", no_argument, 'h', CMD_ALL, NULL, NULL, "this help (after a command: its own)"},
    {"version", no_argument, OPT_VERSION, CMD_TOP, NULL, NULL, "the version"},
};

#define N_OPTIONS (sizeof option_specs / sizeof option_specs[0])

/* The spec of key that applies to cmd (the first of key when cmd is NULL or none applies). */
static const struct option_spec *find_spec(int key, const struct command *cmd)
{
    const struct option_spec *first = NULL;
    for (size_t i = 0; i < N_OPTIONS; i++) {
        if (option_specs[i].key != key)
            continue;
        if (cmd && option_specs[i].commands & cmd->bit)
            return &option_specs[i];
        if (!first)
            first = &option_specs[i];
    }
    return first;
}

/* The commands key applies to, as bits. */
static unsigned spec_commands(int key)
{
    unsigned bits = 0;
    for (size_t i = 0; i < N_OPTIONS; i++)
        if (option_specs[i].key == key)
            bits |= option_specs[i].commands;
    return bits;
}

/* getopt's table: each long name once, in the order of option_specs. Returns the count. */
static size_t long_options(struct option *longs)
{
    size_t n = 0;
    for (size_t i = 0; i < N_OPTIONS; i++) {
        bool dup = false;
        for (size_t j = 0; j < n; j++)
            dup |= strcmp(longs[j].name, option_specs[i].name) == 0;
        if (!dup)
            longs[n++] = (struct option){option_specs[i].name, option_specs[i].has_arg, NULL,
                                         option_specs[i].key};
    }
    longs[n] = (struct option){NULL, 0, NULL, 0};
    return n;
}

/* ---- help ---- */

/*
 * Writes text from column col, breaking lines between words so that none passes 79 columns
 * (unless one word alone does); each new line starts with indent spaces. Ends the line.
 */
static void help_words(FILE *f, const char *text, size_t col, size_t indent)
{
    const size_t width = 79;
    bool line_start = true;
    while (*text) {
        size_t len = strcspn(text, " ");
        if (!line_start && col + 1 + len > width) {
            fprintf(f, "\n%*s", (int)indent, "");
            col = indent;
            line_start = true;
        }
        if (!line_start) {
            putc(' ', f);
            col++;
        }
        fwrite(text, 1, len, f);
        col += len;
        line_start = false;
        text += len;
        text += strspn(text, " ");
    }
    putc('\n', f);
}

/* The argument of an option as the help shows it: "FILE", or its choices "csv|json|table". */
static void spec_arg(const struct option_spec *s, char *buf, size_t size)
{
    buf[0] = '\0';
    if (s->has_arg == no_argument)
        return;
    if (s->arg || !s->choices) {
        snprintf(buf, size, "%s", s->arg ? s->arg : "VALUE");
        return;
    }
    size_t used = 0;
    for (size_t i = 0; s->choices[i] && used < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? "|" : "", s->choices[i]);
        used += n > 0 ? (size_t)n : 0;
    }
}

/* The lines of the options that have bit among their commands. */
static void help_options(FILE *f, unsigned bit)
{
    const size_t col = 28;
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const struct option_spec *s = &option_specs[i];
        if (!(s->commands & bit))
            continue;
        char arg[64], head[128];
        spec_arg(s, arg, sizeof arg);
        if (s->key < 256)
            snprintf(head, sizeof head, "  -%c, --%s%s%s", s->key, s->name, arg[0] ? " " : "", arg);
        else
            snprintf(head, sizeof head, "      --%s%s%s", s->name, arg[0] ? " " : "", arg);
        size_t len = strlen(head);
        if (len + 2 > col)
            fprintf(f, "%s\n%*s", head, (int)col, "");
        else
            fprintf(f, "%s%*s", head, (int)(col - len), "");
        help_words(f, s->help, col, col);
    }
}

/* The usage lines of every command, then the general options. */
static void help_general(FILE *f)
{
    char head[N_COMMANDS][96];
    size_t width = 0;
    for (size_t i = 0; i < N_COMMANDS; i++) {
        snprintf(head[i], sizeof head[i], "memfit %s %s", commands[i].name, commands[i].args);
        width = strlen(head[i]) > width ? strlen(head[i]) : width;
    }
    for (size_t i = 0; i < N_COMMANDS; i++) {
        fprintf(f, "%s %-*s  ", i == 0 ? "usage:" : "      ", (int)width, head[i]);
        help_words(f, commands[i].summary, 7 + width + 2, 7 + width + 2);
    }
    fputs("       memfit --help | -h | --version\n\n", f);
    help_words(f,
               "'memfit help COMMAND' or 'memfit COMMAND --help' lists the options of COMMAND. A "
               "FILE of - reads standard input.",
               0, 0);
    fputs("\nOptions of every command:\n", f);
    help_options(f, CMD_TOP);
    fputs("\nExit status: ", f);
    help_words(f, "0 all scenarios processed, 1 some rows rejected, 2 usage or I/O error.", 13, 0);
}

/* A command's own help: usage, what it does, its options, an example, its exit status. */
static void help_command(FILE *f, const struct command *c)
{
    fprintf(f, "usage: memfit %s %s\n\n", c->name, c->args);
    help_words(f, c->about, 0, 0);
    fputs("\nOptions:\n", f);
    help_options(f, c->bit);
    if (c->more_help)
        c->more_help(f);
    fputs("\nExample:\n", f);
    for (const char *p = c->example; *p;) {
        size_t len = strcspn(p, "\n");
        fprintf(f, "  %.*s\n", (int)len, p);
        p += len;
        p += *p == '\n';
    }
    fputs("\nExit status: ", f);
    help_words(f, c->exit_status, 13, 0);
}

/* One list of names under a title, wrapped: "  placeholders: a, b, c". */
static void help_names(FILE *f, const char *title, const char *const *names, size_t n)
{
    size_t size = 16;
    for (size_t i = 0; i < n; i++)
        size += strlen(names[i]) + 2;
    char *text = malloc(size);
    if (!text)
        return;
    suggest_join(names, n, ", ", text, size);
    fprintf(f, "  %s: ", title);
    help_words(f, text, strlen(title) + 4, 4);
    free(text);
}

/* The names a --template may use. */
static void report_more_help(FILE *f)
{
    size_t n;
    const char *const *names;
    fputs("\nTemplate names (doc/memfit.1, OUTPUT):\n", f);
    names = report_placeholder_names(&n);
    help_names(f, "placeholders {{NAME}}", names, n);
    names = report_charts_names(&n);
    help_names(f, "@chart NAME", names, n);
    names = report_tables_names(&n);
    help_names(f, "@table NAME", names, n);
}

/* ---- usage errors ---- */

/* A usage message (fmt with one %s), then where to read more; returns EXIT_USAGE. */
static int usage_error(const struct options *o, const char *fmt, const char *arg)
{
    fputs("memfit: ", stderr);
    fprintf(stderr, fmt, arg);
    if (o->command)
        fprintf(stderr, "\nTry 'memfit help %s'.\n", o->command->name);
    else
        fputs("\nTry 'memfit --help'.\n", stderr);
    return EXIT_USAGE;
}

/* Prints every message at once (so a million-row run keeps no list), with the program name. */
static void print_message(void *ctx, const char *msg)
{
    const struct options *o = ctx;
    if (!o->quiet)
        fprintf(stderr, "memfit: %s\n", msg);
}

/* ---- parsing ---- */

/* The index of arg among the choices of s (case-insensitive), or -1 after a usage message that
 * lists them: "--format: 'xml' is not csv, json or table". */
static int parse_choice(const struct options *o, const struct option_spec *s, const char *arg)
{
    size_t n = 0;
    for (; s->choices[n]; n++)
        if (strcasecmp(arg, s->choices[n]) == 0)
            return (int)n;
    char list[128], msg[256];
    snprintf(msg, sizeof msg, "--%s: '%%s' is not %s", s->name,
             suggest_join(s->choices, n, " or ", list, sizeof list));
    usage_error(o, msg, arg);
    return -1;
}

/* The most threads --threads gives eval; without it, one a processor up to EVAL_THREADS_AUTO
 * (the parsing thread keeps up with about two more). */
#define EVAL_THREADS_MAX 64
#define EVAL_THREADS_AUTO 8

/* The most layouts --top lists for a job (each row a complete scenario). */
#define SEARCH_TOP_MAX 100000

/* "A:B" with 0 < A <= B, decimal digits only. */
static bool parse_range(const char *arg, uint64_t *from, uint64_t *to)
{
    char *end;
    if (!(*arg >= '0' && *arg <= '9'))
        return false;
    errno = 0;
    *from = strtoull(arg, &end, 10);
    if (*end != ':' || !(end[1] >= '0' && end[1] <= '9'))
        return false;
    *to = strtoull(end + 1, &end, 10);
    return !*end && !errno && *from > 0 && *from <= *to;
}

/* Applies one option; returns -1 to go on, or an exit status. */
static int parse_option(struct options *o, int key, const char *arg)
{
    const struct option_spec *s = find_spec(key, o->command);
    int i = 0;
    if (s && s->choices && (i = parse_choice(o, s, arg)) < 0)
        return EXIT_USAGE;
    char *end;
    switch (key) {
    case OPT_FORMAT:
        o->format = (enum evalout_format)i;
        return -1;
    case OPT_PAPER:
        o->letter = i == 1;
        return -1;
    case OPT_UNITS:
        o->units = (enum units)i;
        return -1;
    case OPT_PEAK:
        o->peak = (enum peak_model)i;
        return -1;
    case OPT_PROGRESS:
        o->progress = (enum progress_mode)i;
        return -1;
    case OPT_RESERVE:
        errno = 0;
        o->reserve = strtod(arg, &end);
        if (end == arg || *end || errno || !(o->reserve >= 0 && o->reserve < 1))
            return usage_error(o, "--reserve: '%s' is not a fraction in [0, 1)", arg);
        return -1;
    case 'o':
        o->out = arg;
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
    case OPT_WIDE:
        o->wide = true;
        return -1;
    case OPT_TOP:
        errno = 0;
        o->top = strtoull(arg, &end, 10);
        if (end == arg || *end || errno || *arg == '-' || o->top == 0 || o->top > SEARCH_TOP_MAX)
            return usage_error(o, "--top: '%s' is not a count from 1 to 100000", arg);
        return -1;
    case OPT_THREADS:
        errno = 0;
        o->threads = strtoull(arg, &end, 10);
        if (end == arg || *end || errno || *arg == '-' || o->threads == 0 ||
            o->threads > EVAL_THREADS_MAX)
            return usage_error(o, "--threads: '%s' is not a count from 1 to 64", arg);
        return -1;
    case OPT_REPORT:
        o->report_path = arg;
        return -1;
    case OPT_GPUS_RANGE:
        if (!parse_range(arg, &o->range_from, &o->range_to))
            return usage_error(o, "--gpus-range: '%s' is not A:B with 0 < A <= B", arg);
        return -1;
    case OPT_SPLIT:
        o->split = true;
        return -1;
    case 'q':
        o->quiet = true;
        return -1;
    case 'h':
        o->help = true;
        return -1;
    case OPT_VERSION:
        o->version = true;
        return -1;
    default:
        return usage_error(o, "%s: an option without a case in parse_option", "internal");
    }
}

/*
 * What getopt refused, said: c is ':' for a missing value, else '?' with optopt the letter of
 * an unknown short option or the key of a long one given a value it does not take (optopt 0: an
 * unknown or ambiguous long name). argv[optind - 1] is the word, but for a letter inside
 * "-xq". Returns EXIT_USAGE.
 */
static int bad_option(const struct options *o, int c, char *const *argv, const struct option *longs,
                      size_t n_longs)
{
    const char *typed = argv[optind - 1];
    bool is_long = strncmp(typed, "--", 2) == 0;
    char name[64], msg[512], dashed[70];
    size_t len = strcspn(typed + 2, "=");
    snprintf(name, sizeof name, "%.*s", (int)(len < 60 ? len : 60), typed + 2);
    snprintf(dashed, sizeof dashed, "--%s", name);
    if (c == ':') {
        if (is_long)
            return usage_error(o, "option '%s' needs a value", dashed);
        snprintf(name, sizeof name, "-%c", optopt);
        return usage_error(o, "option '%s' needs a value", name);
    }
    if (optopt) {
        if (is_long && typed[2 + len] == '=' && find_spec(optopt, NULL))
            return usage_error(o, "option '%s' takes no value", dashed);
        snprintf(name, sizeof name, "-%c", optopt);
        return usage_error(o, "unknown option '%s'", name);
    }
    /* An unknown name, or a prefix of several (getopt takes a prefix of one): name them. */
    const char *names[N_OPTIONS];
    size_t n_prefix = 0;
    for (size_t i = 0; i < n_longs; i++)
        if (strncmp(longs[i].name, name, strlen(name)) == 0)
            names[n_prefix++] = longs[i].name;
    if (n_prefix > 1) {
        char list[256] = "";
        for (size_t i = 0; i < n_prefix; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s--%s", i ? ", " : "",
                     names[i]);
        snprintf(msg, sizeof msg, "option '%s' is ambiguous: %s", dashed, list);
        return usage_error(o, "%s", msg);
    }
    for (size_t i = 0; i < n_longs; i++)
        names[i] = longs[i].name;
    const char *near = suggest_closest(name, names, n_longs);
    if (!near)
        return usage_error(o, "unknown option '%s'", dashed);
    snprintf(msg, sizeof msg, "unknown option '%%s' (did you mean '--%s'?)", near);
    return usage_error(o, msg, dashed);
}

/* Whether the option takes its value from the next word: "-o DIR", "-qo DIR", "--format json"
 * (a prefix of one long name counts, as for getopt). */
static bool takes_next_word(const char *a)
{
    if (a[1] != '-') {
        for (const char *p = a + 1; *p; p++) {
            const struct option_spec *s = find_spec((unsigned char)*p, NULL);
            if (s && s->has_arg == required_argument)
                return p[1] == '\0';
        }
        return false;
    }
    const char *name = a + 2;
    if (strchr(name, '='))
        return false;
    const struct option_spec *hit = NULL;
    bool ambiguous = false;
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const struct option_spec *s = &option_specs[i];
        if (strcmp(s->name, name) == 0)
            return s->has_arg == required_argument;
        if (strncmp(s->name, name, strlen(name)) == 0) {
            ambiguous |= hit && strcmp(hit->name, s->name) != 0;
            hit = s;
        }
    }
    return hit && !ambiguous && hit->has_arg == required_argument;
}

/* The command of argv, found before getopt runs so that its messages can name the command's
 * help: the first word that is neither an option nor an option's value (NULL: none known). */
static const struct command *prescan_command(int argc, char *const *argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            return i + 1 < argc ? find_command(argv[i + 1]) : NULL;
        if (a[0] != '-' || a[1] == '\0')
            return find_command(a);
        if (takes_next_word(a))
            i++;
    }
    return NULL;
}

/* An option used with a command it does not apply to: "--split is not an option of eval". */
static int check_applies(const struct options *o, const int *seen, size_t n_seen)
{
    for (size_t i = 0; i < n_seen; i++) {
        unsigned bits = spec_commands(seen[i]);
        if (bits & o->command->bit)
            continue;
        const char *where[N_COMMANDS];
        size_t n = 0;
        for (size_t c = 0; c < N_COMMANDS; c++)
            if (bits & commands[c].bit)
                where[n++] = commands[c].name;
        char list[128], msg[256];
        snprintf(msg, sizeof msg, "--%s is not an option of %s (it is one of %s)",
                 find_spec(seen[i], NULL)->name, o->command->name,
                 suggest_join(where, n, " and ", list, sizeof list));
        return usage_error(o, "%s", msg);
    }
    if (o->wide && o->format != EVALOUT_TABLE)
        return usage_error(o, "%s", "--wide is only for --format table");
    return -1;
}

static int parse_args(struct options *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->reserve = 0.15;
    o->peak = PEAK_STEP;
    o->top = 10;
    o->command = prescan_command(argc, argv);
    struct option longs[N_OPTIONS + 1];
    size_t n_longs = long_options(longs);
    int seen[N_OPTIONS], c;
    size_t n_seen = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:qh", longs, NULL)) != -1) {
        if (c == '?' || c == ':')
            return bad_option(o, c, argv, longs, n_longs);
        bool dup = false;
        for (size_t i = 0; i < n_seen; i++)
            dup |= seen[i] == c;
        if (!dup && n_seen < N_OPTIONS)
            seen[n_seen++] = c;
        int rc = parse_option(o, c, optarg);
        if (rc >= 0)
            return rc;
    }
    if (o->version) {
        printf("memfit %s\n", MEMFIT_VERSION);
        return EXIT_ALL_OK;
    }
    if (optind >= argc) {
        help_general(o->help ? stdout : stderr);
        return o->help ? EXIT_ALL_OK : EXIT_USAGE;
    }
    const char *name = argv[optind];
    o->command = find_command(name);
    if (!o->command) {
        const char *names[N_COMMANDS];
        for (size_t i = 0; i < N_COMMANDS; i++)
            names[i] = commands[i].name;
        const char *near = suggest_closest(name, names, N_COMMANDS);
        char list[128], msg[256];
        if (near)
            snprintf(msg, sizeof msg, "unknown command '%%s' (did you mean '%s'?)", near);
        else
            snprintf(msg, sizeof msg, "unknown command '%%s' (the commands: %s)",
                     suggest_join(names, N_COMMANDS, " and ", list, sizeof list));
        return usage_error(o, msg, name);
    }
    if (o->help) {
        help_command(stdout, o->command);
        return EXIT_ALL_OK;
    }
    o->files = argv + optind + 1;
    o->n_files = argc - optind - 1;
    return check_applies(o, seen, n_seen);
}

/* ---- help ---- */

static int cmd_help(const struct options *o)
{
    struct options top = *o; /* its messages point to the general help */
    top.command = NULL;
    if (o->n_files == 0) {
        help_general(stdout);
        return EXIT_ALL_OK;
    }
    if (o->n_files > 1)
        return usage_error(&top, "help: one COMMAND at most (got '%s' too)", o->files[1]);
    const struct command *c = find_command(o->files[0]);
    if (c) {
        help_command(stdout, c);
        return EXIT_ALL_OK;
    }
    const char *names[N_COMMANDS];
    for (size_t i = 0; i < N_COMMANDS; i++)
        names[i] = commands[i].name;
    const char *near = suggest_closest(o->files[0], names, N_COMMANDS);
    char msg[160];
    snprintf(msg, sizeof msg, "help: unknown command '%%s'%s%s%s", near ? " (did you mean '" : "",
             near ? near : "", near ? "'?)" : "");
    return usage_error(&top, msg, o->files[0]);
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

/* Whether two descriptors write to the same place: one file, or two terminals (most likely the
 * same screen). */
static bool same_output(int a, int b)
{
    struct stat sa, sb;
    if (fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
        sa.st_ino == sb.st_ino)
        return true;
    return isatty(a) && isatty(b);
}

struct progress {
    bool on;
    const char *label;
    long last_pct;
};

/*
 * A progress bar on stderr, unless -q or --progress never; with auto only on a terminal and for
 * long work (big). Never when the command's rows go to stdout and stdout is stderr's terminal or
 * file: the bar would be drawn into the rows.
 */
static void progress_start(struct progress *p, const struct options *o, const char *label, bool big,
                           bool rows_on_stdout)
{
    *p = (struct progress){false, label, -1};
    if (o->quiet || o->progress == PROGRESS_NEVER)
        return;
    if (rows_on_stdout && same_output(STDOUT_FILENO, STDERR_FILENO))
        return;
    p->on = o->progress == PROGRESS_ALWAYS || (big && isatty(STDERR_FILENO));
}

static void progress_show(struct progress *p, double done, double total)
{
    if (!p->on || total <= 0)
        return;
    long pct = (long)(done * 100 / total);
    pct = pct > 100 ? 100 : pct;
    if (pct == p->last_pct)
        return;
    p->last_pct = pct;
    int bar = (int)(pct * 30 / 100);
    fprintf(stderr, "\r%s [%.*s%*s] %3ld%%", p->label, bar, "##############################",
            30 - bar, "", pct);
}

static void progress_end(struct progress *p)
{
    if (p->on && p->last_pct >= 0)
        fputc('\n', stderr);
    p->last_pct = -1;
}

/* ---- reading scenarios ---- */

/* Called for each valid scenario; returns false to stop reading (a fatal error, reported). */
typedef bool scenario_fn(void *ctx, const struct scenario *sc, const char *file, unsigned long line,
                         struct diag *d);

/* What a command does with the scenarios it reads. */
struct reading {
    scenario_fn *row;
    void (*opened)(void *ctx); /* a file was opened and is about to be read; may be NULL */
    /* Where the next row is parsed (row gets it back); NULL: the reader's own. It returns NULL
     * when no more rows are wanted. */
    struct scenario *(*next)(void *ctx);
    void *ctx;
    bool bar;            /* reading is the work: a progress bar over each file's bytes */
    bool rows_on_stdout; /* the rows go to stdout as they are read */
};

#define READ_BUFFER (256 * 1024)

/* Reads every scenario of one file. Returns false if the file cannot be read to its end. */
static bool read_file(const struct options *o, const char *path, const struct config_presets *pr,
                      struct nameset *names, const struct reading *rd, struct diag *d)
{
    bool is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "r");
    const char *label = is_stdin ? "<stdin>" : path;
    if (!f) {
        diag_report(d, path, 0, "cannot open: %s", strerror(errno));
        return false;
    }
    /* A file read in blocks of READ_BUFFER, not stdio's 4 KiB: a read(2) per 4 KiB was a
     * fiftieth of a million-row eval (set before anything is read, as setvbuf requires; glibc
     * takes the size only with a buffer; stdin keeps its own, as it outlives this call). */
    char *block = is_stdin ? NULL : malloc(READ_BUFFER);
    if (block)
        setvbuf(f, block, _IOFBF, READ_BUFFER);
    if (rd->opened)
        rd->opened(rd->ctx);
    struct config_options copt = {o->reserve, o->peak};
    struct config_reader *r = config_reader_new(f, label, pr, &copt, names, d);
    if (r && o->command->bit == CMD_SEARCH)
        config_reader_read_jobs(r);
    struct progress prog;
    struct stat st;
    double size = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) ? (double)st.st_size : 0;
    progress_start(&prog, o, label, size > 64 * 1024, rd->rows_on_stdout);
    prog.on &= rd->bar && size > 0;
    bool ok = r != NULL;
    struct scenario own, *sc = &own;
    unsigned long line, rows_read = 0;
    int rc;
    while (ok && (!rd->next || (ok = (sc = rd->next(rd->ctx)) != NULL)) &&
           (rc = config_reader_next(r, sc, &line)) != 0) {
        if (rc == -2)
            ok = false;
        else if (rc == 1)
            ok = rd->row(rd->ctx, sc, label, line, d);
        /* ftell asks the kernel (an lseek) each time: a tenth of eval's time were it per row. */
        if (prog.on && ++rows_read % 256 == 0)
            progress_show(&prog, (double)ftell(f), size);
    }
    progress_show(&prog, size, size);
    progress_end(&prog);
    config_reader_free(r);
    if (!is_stdin)
        fclose(f);
    free(block);
    return ok;
}

/* Reads every file of the command line, with the presets and the uniqueness of names shared. */
static bool read_files(const struct options *o, const struct reading *rd, struct diag *d)
{
    struct config_presets *pr = load_presets(o, d);
    if (!pr)
        return false;
    struct nameset names;
    nameset_init(&names);
    bool ok = true;
    for (int i = 0; i < o->n_files; i++)
        ok = read_file(o, o->files[i], pr, &names, rd, d) && ok;
    nameset_release(&names);
    config_presets_free(pr);
    return ok;
}

/* ---- eval ---- */

/* What evaluating rows needs of its own in each thread. */
struct eval_lane {
    struct plan plan;         /* reused for every row */
    struct model_cache *memo; /* the layer inventories of recent rows (NULL: none) */
    struct diag own;          /* the rows' own messages (an overflow) */
};

struct eval_ctx {
    const struct options *o;
    struct evalout out;
    struct eval_lane lane; /* this thread's */
    bool begun;            /* the header is written: a file could be opened */
    bool aborted;          /* eval_write wrote nothing: -o's file is left as it was */
    bool io_ok;
    bool write_failed; /* a worker could not keep its rows' text (no memory) */
    struct diag rows;  /* the rows' messages */
};

static void eval_row(struct evalout *out, struct eval_lane *lane, const struct scenario *sc,
                     const char *file, unsigned long line, struct diag *d)
{
    struct terms t;
    char settings[PLAN_SETTINGS_MAX];
    struct plan *p = &lane->plan;
    if (model_eval_cached(sc, lane->memo, &t) != MODEL_OK ||
        plan_build_memo(sc, &t, lane->memo, p) != 0) {
        diag_report(d, file, line, "scenario '%s': a byte count overflows 64 bits", sc->name);
        return;
    }
    plan_fix_settings(p, settings, sizeof settings);
    struct evalout_fix fix = {plan_fix_name(p->fix), p->fix_peak_bytes, p->fix_micro_batch,
                              settings, p->gpus_for_states};
    evalout_row(out, sc, &t, &fix);
}

static bool eval_one(void *ctx, const struct scenario *sc, const char *file, unsigned long line,
                     struct diag *d)
{
    struct eval_ctx *e = ctx;
    eval_row(&e->out, &e->lane, sc, file, line, d);
    return true;
}

/* The header (or JSON's bracket) waits for the first file that opens: `eval missing.csv` writes
 * nothing but its message. */
static void eval_opened(void *ctx)
{
    struct eval_ctx *e = ctx;
    if (!e->begun)
        evalout_begin(&e->out);
    e->begun = true;
}

/* The table's width: COLUMNS when set, as for ls(1); else the terminal's when the table goes to
 * one; else 80. 0 (every column) with --wide. */
static size_t eval_table_cols(const struct options *o, bool to_stdout)
{
    if (o->wide)
        return 0;
    const char *env = getenv("COLUMNS");
    char *end;
    if (env && *env) {
        errno = 0;
        unsigned long v = strtoul(env, &end, 10);
        if (!*end && !errno && v > 0 && v < 100000)
            return v;
    }
    struct winsize ws;
    if (to_stdout && isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
        ws.ws_col > 0)
        return ws.ws_col;
    return 80;
}

/*
 * ---- eval's threads (readahead.h): one parses the rows; this one and more evaluate them ----
 *
 * With CSV output the rows are evaluated a batch at a time by every thread, the reading one
 * included when it is ahead: each formats its batch's rows into memory, and the queue writes
 * the texts in the order of the input. JSON and the table keep one writer's state across rows
 * (a comma, the widths): this thread evaluates and writes them, a row at a time.
 */

struct eval_reader {
    const struct options *o;
    struct readahead *q;
    struct reading rd;
    struct diag *d; /* config's messages */
    bool opened;    /* a file was opened: the `opened` item is pushed once */
    bool ok;
};

/* The row is parsed into the queue's next item (reader_next), not copied there. */
static struct scenario *reader_next(void *ctx)
{
    struct eval_reader *r = ctx;
    struct readahead_item *it = readahead_next(r->q);
    return it ? &it->sc : NULL;
}

static bool reader_row(void *ctx, const struct scenario *sc, const char *file, unsigned long line,
                       struct diag *d)
{
    (void)d, (void)sc;
    struct eval_reader *r = ctx;
    struct readahead_item *it = readahead_next(r->q); /* sc's */
    it->opened = false;
    it->file = file;
    it->line = line;
    return readahead_commit(r->q);
}

static void reader_opened(void *ctx)
{
    struct eval_reader *r = ctx;
    static const struct readahead_item opened = {.opened = true};
    if (!r->opened)
        readahead_push(r->q, &opened);
    r->opened = true;
}

static void *reader_main(void *arg)
{
    struct eval_reader *r = arg;
    r->ok = read_files(r->o, &r->rd, r->d);
    readahead_close(r->q);
    return NULL;
}

/* A thread's share of a CSV evaluation (readahead_work's lane). */
struct eval_share {
    const struct evalout *settings; /* the writer's settings (CSV keeps no state across rows) */
    struct eval_lane lane;
    bool begun; /* this thread wrote the header */
};

/* readahead_work_fn: batch b's rows as CSV text. */
static bool eval_batch_text(void *arg, const struct readahead_batch *b, struct strbuf *text)
{
    struct eval_share *sh = arg;
    struct evalout out = *sh->settings;
    out.memory = text;
    for (size_t i = 0; i < b->n; i++) {
        const struct readahead_item *it = &b->items[i];
        if (it->opened) {
            evalout_begin(&out);
            sh->begun = true;
        } else {
            eval_row(&out, &sh->lane, &it->sc, it->file, it->line, &sh->lane.own);
        }
    }
    return out.error == 0;
}

/* readahead_write_fn: into eval's output. */
static void eval_write_text(void *ctx, const char *text, size_t len)
{
    struct eval_ctx *e = ctx;
    fwrite(text, 1, len, e->out.out);
}

struct eval_worker {
    struct readahead *q;
    struct eval_share share;
    pthread_t thread;
};

static void *eval_worker_main(void *arg)
{
    struct eval_worker *w = arg;
    readahead_work(w->q, &w->share);
    return NULL;
}

/* How many threads evaluate CSV rows, the reading one included: --threads (2 or more here), or
 * one a processor (at least 2, at most EVAL_THREADS_AUTO); 0 for JSON and the table (one thread
 * evaluates). */
static size_t eval_threads_wanted(const struct options *o)
{
    if (o->format != EVALOUT_CSV)
        return 0;
    if (o->threads)
        return o->threads;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 2)
        return 2;
    return cpus > EVAL_THREADS_AUTO ? EVAL_THREADS_AUTO : (size_t)cpus;
}

static void eval_lane_init(struct eval_lane *lane, const struct options *o)
{
    lane->memo = model_cache_new(); /* NULL only makes eval slower */
    diag_init(&lane->own, print_message, (void *)o);
}

/* A share's end: its counts into e. */
static void eval_share_end(struct eval_ctx *e, struct eval_share *sh)
{
    e->begun |= sh->begun;
    e->lane.own.count += sh->lane.own.count;
    model_cache_free(sh->lane.memo);
}

/* The shares of a CSV evaluation: w[0] the reading thread's (it works batches when ahead), w[1]
 * this thread's, the others their own threads'. On the heap: a share's plan is large. NULL when
 * out of memory. */
static struct eval_worker *eval_workers_new(struct eval_ctx *e, struct readahead *q, size_t n)
{
    struct eval_worker *w = calloc(n, sizeof *w);
    for (size_t i = 0; w && i < n; i++) {
        w[i].q = q;
        w[i].share.settings = &e->out;
        eval_lane_init(&w[i].share.lane, e->o);
    }
    return w;
}

static void eval_workers_free(struct eval_ctx *e, struct eval_worker *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        eval_share_end(e, &w[i].share);
    free(w);
}

/* This thread's part: every row (JSON, the table; w NULL), or its share of the batches with
 * threads w[2 .. n - 1] (CSV). */
static void eval_consume(struct eval_ctx *e, struct readahead *q, struct eval_worker *w, size_t n)
{
    if (!w) {
        const struct readahead_item *it;
        while ((it = readahead_pop(q)) != NULL) {
            if (it->opened)
                eval_opened(e);
            else
                eval_one(e, &it->sc, it->file, it->line, &e->lane.own);
        }
        return;
    }
    size_t started = 2;
    while (started < n &&
           pthread_create(&w[started].thread, NULL, eval_worker_main, &w[started]) == 0)
        started++;
    readahead_work(q, &w[1].share);
    for (size_t i = 2; i < started; i++)
        pthread_join(w[i].thread, NULL);
}

/* read_files into eval_row with the reading on a thread of its own and the evaluation on this
 * one and, for CSV, on more; false with --threads 1 or when it cannot start the reading thread
 * (nothing was read: the caller reads in this thread). */
static bool eval_read_ahead(struct eval_ctx *e, bool to_stdout)
{
    if (e->o->threads == 1)
        return false;
    struct eval_reader r = {
        e->o,     readahead_new(), {reader_row, reader_opened, reader_next, NULL, true, to_stdout},
        &e->rows, false,           false};
    r.rd.ctx = &r;
    if (!r.q)
        return false;
    size_t n = eval_threads_wanted(e->o);
    struct eval_worker *w = n ? eval_workers_new(e, r.q, n) : NULL; /* NULL: one thread writes */
    if (w)
        readahead_share(r.q, eval_batch_text, &w[0].share, eval_write_text, e);
    pthread_t thread;
    if (pthread_create(&thread, NULL, reader_main, &r) != 0) {
        if (w)
            eval_workers_free(e, w, n);
        readahead_free(r.q);
        return false;
    }
    eval_consume(e, r.q, w, n);
    readahead_stop(r.q); /* unblocks a reader still pushing after an early stop */
    pthread_join(thread, NULL);
    if (w)
        eval_workers_free(e, w, n);
    e->write_failed |= readahead_failed(r.q);
    readahead_free(r.q);
    e->io_ok = r.ok;
    return true;
}

#define EVAL_OUT_BUFFER (256 * 1024)

/* Runs the whole evaluation into f; returns -1 (write nothing) when no input could be opened. */
static int eval_write(FILE *f, void *ctx)
{
    struct eval_ctx *e = ctx;
    const struct options *o = e->o;
    bool to_stdout = f == stdout;
    /* Rows to a file or a pipe in blocks of EVAL_OUT_BUFFER, not stdio's 4 KiB: a million rows
     * are about 185 MB, and a write per 4 KiB was a tenth of eval's time (system time). A
     * terminal keeps its line buffering. Nothing was written to f yet, as setvbuf requires. */
    static char buffer[EVAL_OUT_BUFFER]; /* f is flushed before eval returns */
    if (!isatty(fileno(f)))
        setvbuf(f, buffer, _IOFBF, sizeof buffer);
    e->out.out = f;
    e->out.table_cols = eval_table_cols(o, to_stdout);
    struct reading rd = {eval_one, eval_opened, NULL, e, true, to_stdout};
    if (!eval_read_ahead(e, to_stdout))
        e->io_ok = read_files(o, &rd, &e->rows);
    if (e->begun)
        evalout_end(&e->out);
    e->aborted = !e->begun;
    return e->begun ? 0 : -1;
}

/* Messages of out_write_atomic, unless the file was left alone on purpose (nothing was read). */
static void eval_file_message(void *ctx, const char *msg)
{
    struct eval_ctx *e = ctx;
    if (!e->aborted)
        fprintf(stderr, "memfit: %s\n", msg);
}

static int cmd_eval(const struct options *o)
{
    if (o->n_files == 0)
        return usage_error(o, "%s: at least one FILE.csv (or -) is needed", "eval");
    bool to_file = o->out && strcmp(o->out, "-") != 0;
    struct stat st;
    if (to_file && stat(o->out, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "memfit: cannot write '%s': it is a folder (eval -o names a file)\n",
                o->out);
        return EXIT_USAGE;
    }
    struct eval_ctx *e = malloc(sizeof *e);
    if (!e) {
        fprintf(stderr, "memfit: out of memory\n");
        return EXIT_USAGE;
    }
    e->o = o;
    e->lane.memo = model_cache_new(); /* NULL only makes eval slower */
    e->begun = e->aborted = e->write_failed = false;
    e->io_ok = true;
    evalout_init(&e->out, o->format, o->units, stdout);
    diag_init(&e->rows, print_message, (void *)o);
    diag_init(&e->lane.own, print_message, (void *)o);
    bool write_failed;
    if (to_file) {
        struct diag fd;
        diag_init(&fd, eval_file_message, e);
        write_failed = out_write_atomic(o->out, eval_write, e, &fd) != 0 && !e->aborted;
    } else {
        eval_write(stdout, e);
        write_failed = ferror(stdout) || fflush(stdout) != 0;
        if (write_failed)
            fprintf(stderr, "memfit: cannot write the output\n");
    }
    write_failed |= e->out.error != 0 || e->write_failed;
    bool io_ok = e->io_ok;
    size_t rejected = e->rows.count + e->lane.own.count;
    evalout_release(&e->out);
    model_cache_free(e->lane.memo);
    free(e);
    if (write_failed || !io_ok)
        return EXIT_USAGE;
    return rejected ? EXIT_ROWS_REJECTED : EXIT_ALL_OK;
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

/* What the report's listener gathers: the bar, then what was written, said once it is all done
 * (a message in the middle would break the bar's line). */
struct report_ui {
    struct progress bar;
    char combined[4096];
    size_t combined_pages, combined_scenarios;
    size_t split_files, split_pages;
};

static void report_ui_section(void *ctx, size_t done, size_t total)
{
    struct report_ui *ui = ctx;
    progress_show(&ui->bar, (double)done, (double)total);
}

static void report_ui_file(void *ctx, const char *path, size_t pages, size_t scenarios, bool split)
{
    struct report_ui *ui = ctx;
    if (split) {
        ui->split_files++;
        ui->split_pages += pages;
        return;
    }
    snprintf(ui->combined, sizeof ui->combined, "%s", path);
    ui->combined_pages = pages;
    ui->combined_scenarios = scenarios;
}

/* -o names the combined report's file when it ends in .pdf and is not a folder. */
static bool out_is_pdf_file(const char *out)
{
    size_t n = strlen(out);
    struct stat st;
    if (n <= 4 || strcasecmp(out + n - 4, ".pdf") != 0 || out[n - 5] == '/')
        return false;
    return !(stat(out, &st) == 0 && S_ISDIR(st.st_mode));
}

static int cmd_report(const struct options *o)
{
    if (o->n_files == 0)
        return usage_error(o, "%s: at least one FILE.csv (or -) is needed", "report");
    struct report_options ro;
    report_options_init(&ro);
    char dir[4096];
    ro.out_dir = o->out ? o->out : "out";
    if (o->out && out_is_pdf_file(o->out)) {
        if (o->split)
            return usage_error(o,
                               "--split writes a file per scenario: -o names their folder, "
                               "not '%s'",
                               o->out);
        const char *slash = strrchr(o->out, '/');
        size_t len = !slash ? 0 : slash == o->out ? 1 : (size_t)(slash - o->out);
        if (len)
            snprintf(dir, sizeof dir, "%.*s", (int)len, o->out);
        else
            snprintf(dir, sizeof dir, ".");
        ro.out_dir = dir;
        ro.file_name = slash ? slash + 1 : o->out;
    }
    struct diag d;
    diag_init(&d, print_message, (void *)o);
    struct scenario_list list = {NULL, 0, 0};
    struct reading rd = {keep_scenario, NULL, NULL, &list, false, false};
    bool io_ok = read_files(o, &rd, &d);
    size_t rejected = d.count;
    int rc = EXIT_ALL_OK;
    /* An unreadable file is exit 2, as in eval, but the readable files are still reported. */
    if (list.n == 0 && !io_ok) {
        rc = EXIT_USAGE;
    } else if (list.n == 0) {
        diag_report(&d, NULL, 0, "no valid scenario to report");
        rc = rejected ? EXIT_ROWS_REJECTED : EXIT_USAGE;
    } else {
        struct report_ui ui;
        memset(&ui, 0, sizeof ui);
        char label[4200];
        snprintf(label, sizeof label, "%s/%s", ro.out_dir, ro.file_name);
        /* The real work is drawing the pages: a few milliseconds a scenario. */
        progress_start(&ui.bar, o, label, list.n > 16, false);
        struct report_listener listener = {report_ui_section, report_ui_file, &ui};
        ro.listener = &listener;
        ro.split = o->split;
        ro.scenario_template = o->template_path;
        ro.paper = o->letter ? REPORT_PAPER_LETTER : REPORT_PAPER_A4;
        ro.units = o->units;
        ro.source_date_epoch = getenv("SOURCE_DATE_EPOCH");
        ro.inputs = o->n_files == 1 ? o->files[0] : "several files";
        /* 1: written without a scenario it could not compute (reported): a rejected row. */
        int written = report_write(list.items, list.n, &ro, &d);
        if (written < 0 || !io_ok)
            rc = EXIT_USAGE;
        else if (rejected || written > 0)
            rc = EXIT_ROWS_REJECTED;
        progress_end(&ui.bar);
        if (!o->quiet && ui.combined[0])
            fprintf(stderr, "memfit: wrote %s (%zu page%s, %zu scenario%s)\n",
                    o->out && ro.out_dir == dir ? o->out : ui.combined, ui.combined_pages,
                    ui.combined_pages == 1 ? "" : "s", ui.combined_scenarios,
                    ui.combined_scenarios == 1 ? "" : "s");
        if (!o->quiet && ui.split_files)
            fprintf(stderr, "memfit: wrote %zu report%s of one scenario into %s (%zu pages)\n",
                    ui.split_files, ui.split_files == 1 ? "" : "s", ro.out_dir, ui.split_pages);
    }
    canvas_cairo_shutdown();
    free(list.items);
    return rc;
}

/* ---- search ---- */

/* A job and where it was read: the search's messages point to its line. */
struct job {
    struct scenario sc;
    const char *file;
    unsigned long line;
};

/* What --report keeps of a job searched: its counts, its fastest layouts and every layout
 * evaluated (owned). */
struct searched {
    const struct job *job;
    struct search_result res;
    struct search_layout *top;
    struct search_point *points;
    size_t n_points, cap_points;
    bool lost; /* a point could not be kept (no memory) */
    uint64_t gpus;
};

struct search_ctx {
    const struct options *o;
    struct job *jobs;
    size_t n_jobs, cap;
    bool opened;  /* a file could be opened: the header is written */
    bool aborted; /* search_write wrote nothing: -o's file is left as it was */
    bool range;   /* a range of GPU counts is searched: the rows carry gpus */
    bool rows;    /* the rows are written (not with --report, unless -o) */
    struct searchout out;
    struct search_layout *top; /* o->top of them */
    struct model_cache *memo;
    struct searched *done; /* --report: n_done of n_jobs */
    size_t n_done;
    struct diag *d; /* the jobs' messages */
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

/* search_point_fn for --report: every layout evaluated, kept. */
static void keep_point(void *ctx, const struct search_point *p)
{
    struct searched *j = ctx;
    if (j->n_points == j->cap_points) {
        size_t cap = j->cap_points ? 2 * j->cap_points : 1024;
        struct search_point *points = j->lost ? NULL : realloc(j->points, cap * sizeof *points);
        if (!points) {
            j->lost = true;
            return;
        }
        j->points = points;
        j->cap_points = cap;
    }
    j->points[j->n_points++] = *p;
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
    const struct scenario *job = &j->sc;
    unsigned long long gpus = job->gpus;
    char pins[160];
    switch (st) {
    case SEARCH_NO_SPLIT:
        diag_report(s->d, j->file, j->line,
                    "column 'gpus': '%llu' cannot be split: no tp (dividing heads and kv_heads, at "
                    "most gpus_per_node), pp (dividing layers), cp (dividing seq) and dp (dividing "
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
 * Searches one job into s->top and *res: on its gpus, or for the fewest of a range (the count
 * into *gpus, 0 when none fits). With --report, every layout evaluated goes to keep (of the
 * count found, for a range). false when the job cannot be searched (reported).
 */
static bool search_job(struct search_ctx *s, const struct job *j, struct search_result *res,
                       uint64_t *gpus, uint64_t *from, uint64_t *to, struct searched *keep)
{
    const struct scenario *job = &j->sc;
    const struct options *o = s->o;
    search_point_fn *each = keep ? keep_point : NULL;
    *from = o->range_from ? o->range_from : job->gpus_from;
    *to = o->range_from ? o->range_to : job->gpus;
    *gpus = job->gpus;
    if (*from) {
        *gpus = search_min_gpus(job, *from, *to, o->top, s->top, s->memo, res);
        if (!keep || !*gpus)
            return true;
        /* Once more at the count found, for the report's every layout. */
        struct scenario at = *job;
        at.gpus = *gpus;
        at.gpus_from = 0;
        enum search_status st = search_run(&at, o->top, s->top, each, keep, s->memo, res);
        if (st != SEARCH_OK)
            search_failed(s, j, st);
        return st == SEARCH_OK;
    }
    if (!job->gpus) {
        diag_report(s->d, j->file, j->line,
                    "column 'gpus': a value is required: the job's GPUs (a count, or a range A:B; "
                    "or --gpus-range)");
        return false;
    }
    enum search_status st = search_run(job, o->top, s->top, each, keep, s->memo, res);
    if (st != SEARCH_OK)
        search_failed(s, j, st);
    return st == SEARCH_OK;
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
    s->out.table_cols = eval_table_cols(s->o, to_stdout);
    s->out.range = s->range || s->o->range_from > 0;
    if (s->rows)
        searchout_begin(&s->out);
    struct progress bar;
    progress_start(&bar, s->o, "search", s->n_jobs > 4, to_stdout && s->rows);
    for (size_t i = 0; i < s->n_jobs; i++) {
        struct searched *keep = s->done ? &s->done[s->n_done] : NULL;
        struct search_result res;
        uint64_t gpus, from, to;
        if (keep)
            *keep = (struct searched){.job = &s->jobs[i]};
        if (search_job(s, &s->jobs[i], &res, &gpus, &from, &to, keep)) {
            if (s->rows)
                searchout_job(&s->out, &s->jobs[i].sc, &res, s->top, gpus, from, to);
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
            free(keep->points);
        }
        progress_show(&bar, (double)(i + 1), (double)s->n_jobs);
    }
    progress_end(&bar);
    if (s->rows)
        searchout_end(&s->out);
    return 0;
}

/* Messages of out_write_atomic, unless the file was left alone on purpose (nothing was read). */
static void search_file_message(void *ctx, const char *msg)
{
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
                                             d->points,       d->n_points, d->gpus};
        lost |= d->lost;
    }
    if (lost) {
        fprintf(stderr, "memfit: out of memory: the layouts of the report could not be kept\n");
        free(jobs);
        return false;
    }
    struct diag d;
    diag_init(&d, print_message, (void *)o);
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

static int cmd_search(const struct options *o)
{
    if (o->n_files == 0)
        return usage_error(o, "%s: at least one FILE.csv (or -) is needed", "search");
    bool to_file = o->out && strcmp(o->out, "-") != 0;
    struct stat st;
    if (to_file && stat(o->out, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "memfit: cannot write '%s': it is a folder (search -o names a file)\n",
                o->out);
        return EXIT_USAGE;
    }
    struct diag d;
    diag_init(&d, print_message, (void *)o);
    struct search_ctx s;
    memset(&s, 0, sizeof s);
    s.o = o;
    s.d = &d;
    s.rows = !o->report_path || o->out;
    s.top = malloc(o->top * sizeof *s.top);
    if (!s.top) {
        fprintf(stderr, "memfit: out of memory\n");
        return EXIT_USAGE;
    }
    s.memo = model_cache_new(); /* NULL only makes the search slower */
    searchout_init(&s.out, o->format, o->units, false, stdout);
    struct reading rd = {keep_job, search_opened, NULL, &s, false, false};
    bool io_ok = read_files(o, &rd, &d);
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
        write_failed = out_write_atomic(o->out, search_write, &s, &fd) != 0 && !s.aborted;
    } else {
        search_write(stdout, &s);
        write_failed = ferror(stdout) || fflush(stdout) != 0;
        if (write_failed)
            fprintf(stderr, "memfit: cannot write the output\n");
    }
    write_failed |= s.out.error != 0;
    if (o->report_path && s.opened && !write_failed)
        write_failed = !search_report(&s);
    for (size_t i = 0; i < s.n_done; i++) {
        free(s.done[i].top);
        free(s.done[i].points);
    }
    free(s.done);
    searchout_release(&s.out);
    model_cache_free(s.memo);
    free(s.top);
    free(s.jobs);
    if (write_failed || !io_ok)
        return EXIT_USAGE;
    return d.count ? EXIT_ROWS_REJECTED : EXIT_ALL_OK;
}

/* ---- figures ---- */

static int cmd_figures(const struct options *o)
{
    struct diag d;
    diag_init(&d, print_message, (void *)o);
    if (o->n_files > 0)
        return usage_error(o, "figures: takes no FILE (got '%s')", o->files[0]);
    int rc = figures_write(o->out ? o->out : "out/figures", getenv("SOURCE_DATE_EPOCH"), &d);
    canvas_cairo_shutdown();
    if (rc != 0)
        return EXIT_USAGE;
    if (!o->quiet)
        fprintf(stderr, "memfit: wrote the lesson's five figures (PNG, SVG, PDF) into %s\n",
                o->out ? o->out : "out/figures");
    return EXIT_ALL_OK;
}

/* ---- import-config ---- */

/* A models table from config.json files (doc/model.md section 13.3): the header, then a row per
 * file that maps; each other file is reported. */
static int cmd_import_config(const struct options *o)
{
    struct diag d;
    diag_init(&d, print_message, (void *)o);
    if (o->n_files == 0)
        return usage_error(o, "%s: at least one config.json (or a folder holding one) is needed",
                           "import-config");
    struct strbuf sb;
    bool unreadable = false;
    strbuf_init(&sb);
    modeljson_csv_header(&sb);
    for (int i = 0; i < o->n_files; i++) {
        struct modeljson m;
        char file[MODELJSON_FILE_MAX], why[DIAG_MSG_MAX];
        enum modeljson_status st =
            modeljson_read(o->files[i], &m, file, sizeof file, why, sizeof why);
        if (st == MODELJSON_OK)
            modeljson_csv_row(&m, file, &sb);
        else
            diag_report(&d, NULL, 0, "%s", why);
        unreadable |= st == MODELJSON_UNREADABLE;
    }
    bool written =
        sb.err == STRBUF_OK && fwrite(sb.buf, 1, sb.len, stdout) == sb.len && fflush(stdout) == 0;
    strbuf_release(&sb);
    if (!written) {
        fprintf(stderr, "memfit: cannot write the output\n");
        return EXIT_USAGE;
    }
    return unreadable ? EXIT_USAGE : d.count ? EXIT_ROWS_REJECTED : EXIT_ALL_OK;
}

int main(int argc, char **argv)
{
    struct options o;
    int rc = parse_args(&o, argc, argv);
    if (rc >= 0)
        return rc;
    return o.command->run(&o);
}
