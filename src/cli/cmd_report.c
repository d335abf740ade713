/* cmd_report: see commands.h. memfit report: the PDF report of every scenario, with a progress
 * bar and, once done, what was written. */
#include "cli/commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "base/diag.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "cli/session.h"
#include "draw/canvas_cairo.h"
#include "report/report.h"

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
    size_t separate_pages, separate_max; /* the combined report, too large, made separate files */
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

static void report_ui_separate(void *ctx, size_t pages, size_t max_pages)
{
    struct report_ui *ui = ctx;
    ui->separate_pages = pages;
    ui->separate_max = max_pages;
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

int cmd_report(const struct options *o)
{
    if (o->n_files == 0)
        return options_usage_error(o, "%s: at least one FILE.csv (or -) is needed", "report");
    struct report_options ro;
    report_options_init(&ro);
    char dir[4096];
    ro.out_dir = o->out ? o->out : "out";
    if (o->out && out_is_pdf_file(o->out)) {
        if (o->split)
            return options_usage_error(o,
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
    diag_init(&d, session_print_message, (void *)o);
    struct scenario_list list = {NULL, 0, 0};
    struct reading rd = {keep_scenario, NULL, NULL, &list, false, false, 0, 0};
    bool io_ok = session_read_files(o, &rd, &d);
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
        struct report_listener listener = {report_ui_section, report_ui_file, report_ui_separate,
                                           &ui};
        ro.listener = &listener;
        ro.split = o->split;
        ro.scenario_template = o->template_path;
        ro.paper = o->letter ? REPORT_PAPER_LETTER : REPORT_PAPER_A4;
        ro.units = o->units;
        ro.source_date_epoch = getenv("SOURCE_DATE_EPOCH");
        ro.inputs = o->n_files > 1                  ? "several files"
                    : strcmp(o->files[0], "-") == 0 ? "standard input"
                                                    : o->files[0];
        /* 1: written without a scenario it could not compute (reported): a rejected row. */
        int written = report_write(list.items, list.n, &ro, &d);
        if (written < 0 || !io_ok)
            rc = EXIT_USAGE;
        else if (rejected || written > 0)
            rc = EXIT_ROWS_REJECTED;
        progress_end(&ui.bar);
        /* Before what was written: which files they are. */
        if (!o->quiet && ui.separate_pages)
            fprintf(stderr,
                    "memfit: the combined report would have about %zu pages, more than one file "
                    "is given (%zu: every page is held in memory until the file is written, and "
                    "a PDF made with libharu has at most %d): wrote its summary and one file per "
                    "scenario into %s instead\n",
                    ui.separate_pages, ui.separate_max, REPORT_PDF_MAX_PAGES, ro.out_dir);
        if (!o->quiet && ui.combined[0])
            fprintf(stderr, "memfit: wrote %s (%zu page%s, %s%zu scenario%s)\n",
                    o->out && ro.out_dir == dir ? o->out : ui.combined, ui.combined_pages,
                    ui.combined_pages == 1 ? "" : "s", ui.separate_pages ? "the summary of " : "",
                    ui.combined_scenarios, ui.combined_scenarios == 1 ? "" : "s");
        if (!o->quiet && ui.split_files)
            fprintf(stderr, "memfit: wrote %zu report%s of one scenario into %s (%zu pages)\n",
                    ui.split_files, ui.split_files == 1 ? "" : "s", ro.out_dir, ui.split_pages);
    }
    canvas_cairo_shutdown();
    free(list.items);
    return rc;
}
