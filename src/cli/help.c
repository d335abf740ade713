/* help: see help.h. */
#include "cli/help.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/suggest.h"
#include "cli/commands.h"
#include "report/report.h"
#include "report/report_charts.h"
#include "report/report_tables.h"

#define MEMFIT_VERSION "0.1.0"

/* ---- the commands ---- */

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
     "--gpus-range, gets the fewest GPUs of the range at which a layout fits, then the scaling "
     "curve (the fastest layout at twice, four times, ... that count); with --tokens N --days D, "
     "the fewest GPUs that train N tokens within D days, with the days, GPU-hours and cost.",
     "memfit search configs/jobs.csv --format table\n"
     "memfit search configs/jobs.csv --top 3 | memfit eval -\n"
     "memfit search configs/jobs.csv --gpus-range 8:4096 --top 1\n"
     "memfit search configs/jobs.csv --tokens 1T --days 30 --price 2.5 --top 1",
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

_Static_assert(sizeof commands / sizeof commands[0] == HELP_N_COMMANDS,
               "HELP_N_COMMANDS is the count of commands");
const struct command *const help_commands = commands;

const struct command *help_find_command(const char *name)
{
    for (size_t i = 0; i < HELP_N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* ---- the options ---- */

/* The words of a choice, NULL-terminated, in the order of the enum they set. */
static const char *const format_words[] = {"csv", "json", "table", NULL};      /* EVALOUT_ */
static const char *const paper_words[] = {"a4", "letter", NULL};               /* REPORT_PAPER_ */
static const char *const units_words[] = {"GB", "GiB", NULL};                  /* UNITS_ */
static const char *const progress_words[] = {"auto", "always", "never", NULL}; /* PROGRESS_ */
static const char *const peak_words[] = {"lesson", "step", NULL};              /* PEAK_ */
static const char *const impl_words[] = {"memfit", "megatron", "hf", "hf-peft", NULL}; /* IMPL_ */

/*
 * Every option, in the order of the help. An option may have one entry per command when its
 * meaning differs (-o); getopt sees each name once. A new option is one line here, one more in
 * HELP_N_OPTIONS and one case in parse_option (cli/options.c) (and a word in doc/memfit.1 and
 * doc/memfit.bash, whose tests check that).
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
     "layout fits, instead of its gpus, then the scaling curve: the fastest layout at twice, "
     "four times, ... that count up to B"},
    {"tokens", required_argument, OPT_TOKENS, CMD_SEARCH, "N", NULL,
     "with --days: the fewest GPUs (multiples of a node, within --gpus-range or the job's range "
     "if given) whose fastest layout trains N tokens (1T, 15T, 2e12) within the days, with the "
     "days, GPU-hours and cost"},
    {"days", required_argument, OPT_DAYS, CMD_SEARCH, "D", NULL,
     "the deadline of --tokens, in days"},
    {"price", required_argument, OPT_PRICE, CMD_SEARCH, "P", NULL,
     "with --tokens: the price of a GPU-hour, for the cost column"},
    {"report", required_argument, OPT_REPORT, CMD_SEARCH, "FILE.pdf", NULL,
     "write the PDF of the search (each job's fastest layouts, every layout's peak against its "
     "step time, the tp x pp map) into FILE.pdf instead of the rows (which -o or --format still "
     "writes)"},
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
    {"impl", required_argument, OPT_IMPL, CMD_EVAL | CMD_REPORT | CMD_SEARCH, NULL, impl_words,
     "the implementation whose kept tensors the activations follow: memfit's assumptions "
     "(default; always under --peak lesson), Megatron-Core, transformers, transformers with PEFT "
     "(the CSV column wins)"},
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

_Static_assert(sizeof option_specs / sizeof option_specs[0] == HELP_N_OPTIONS,
               "HELP_N_OPTIONS is the count of option_specs");
const struct option_spec *const help_option_specs = option_specs;

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
    for (size_t i = 0; i < HELP_N_OPTIONS; i++) {
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

void help_general(FILE *f)
{
    char head[HELP_N_COMMANDS][96];
    size_t width = 0;
    for (size_t i = 0; i < HELP_N_COMMANDS; i++) {
        snprintf(head[i], sizeof head[i], "memfit %s %s", commands[i].name, commands[i].args);
        width = strlen(head[i]) > width ? strlen(head[i]) : width;
    }
    for (size_t i = 0; i < HELP_N_COMMANDS; i++) {
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

void help_command(FILE *f, const struct command *c)
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

void help_version(void)
{
    printf("memfit %s\n", MEMFIT_VERSION);
}
