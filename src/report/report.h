/*
 * report: the PDF capacity-planning report (doc/memfit.1, OUTPUT, `memfit report`).
 *
 * One document: a summary page (one row per scenario: verdict, peak, budget, cheapest fix), then
 * one section per scenario laid out by the template (templates/report.tmpl): configuration, a
 * verdict box, the table of terms, the five charts, the fix ladder, the largest micro-batch per
 * activation mode and notes on the assumptions. Page numbers, a document title, one PDF bookmark
 * per scenario, A4 or US letter. Charts are vectors drawn through canvas_hpdf; text is DejaVu
 * Sans, embedded.
 *
 * Both templates and the phrase catalogue (templates/phrases.tmpl, whose phrases a template may
 * redefine) are parsed and checked before any page is drawn: an error in any of them writes
 * nothing. Every file goes through out_write_atomic (temporary name, rename when complete), and
 * the same input gives the same bytes: no date is written unless SOURCE_DATE_EPOCH is given.
 *
 * A document is held in memory, every page of it, until it is written (libharu), about 45 KB a
 * page, and a PDF made with libharu has at most 32,767 pages. So the pages of the combined
 * report are counted before anything is drawn (the summary's rows, and the first scenario's
 * section, laid out alone, times the scenarios: every section follows the same template); above
 * opt->max_pages (REPORT_MAX_PAGES: 5,000 pages, about 800 scenarios of the shipped template,
 * some 250 MB) the report is written as a summary and one file per scenario instead, as --split
 * writes them, and the summary says so ({{files_note}}). Besides the document being drawn, the
 * run keeps a pointer per scenario: memory does not grow with the scenarios past that size.
 *
 * The caller owns the scenarios; report_write allocates and frees everything else it uses.
 *
 * This module owns the document: the templates (loaded and checked), rendering their blocks, the
 * summary and one section per scenario, the combined and split files. The words of the pages
 * are report_phrases.h, the values they show report_values.h, the page layout doc.h, the named
 * tables and charts report_tables.h and report_charts.h, number formatting numfmt.h.
 */
#ifndef MEMFIT_REPORT_H
#define MEMFIT_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/diag.h"
#include "base/units.h"
#include "model/scenario.h"

enum report_paper { REPORT_PAPER_A4, REPORT_PAPER_LETTER };

/* The most pages of one file, by default (opt->max_pages 0): the combined report of more is a
 * summary and one file per scenario. */
#define REPORT_MAX_PAGES 5000

/* The most pages any file can have: libharu's (doc.h, DOC_MAX_PAGES); a larger opt->max_pages
 * counts as this. */
#define REPORT_PDF_MAX_PAGES 32767

/* What report_write tells its caller as it goes (cli/cmd_report.c: the progress bar and the
 * closing message on stderr); a NULL function is not called. */
struct report_listener {
    /* One more scenario's section drawn: done of total (with split, each scenario twice). */
    void (*section)(void *ctx, size_t done, size_t total);
    /* A file written, complete: its path, pages and scenarios; split: one scenario's own file.
     * The combined report's file is the summary alone when `separate` was called. */
    void (*file)(void *ctx, const char *path, size_t pages, size_t scenarios, bool split);
    /* Before anything is drawn: the combined report would have about `pages` pages, more than
     * max_pages, so it is written as a summary (the combined report's file) and one file per
     * scenario. */
    void (*separate)(void *ctx, size_t pages, size_t max_pages);
    void *ctx;
};

struct report_options {
    const char *out_dir;           /* the folder of every file ("out"); created by the caller */
    const char *file_name;         /* the combined report in out_dir; NULL: "report.pdf" */
    bool split;                    /* also one PDF per scenario, named after it (out_safe_name) */
    const char *scenario_template; /* NULL: templates/report.tmpl found by paths_find_data */
    const char *summary_template;  /* NULL: templates/summary.tmpl */
    const char *phrases;           /* the phrase catalogue; NULL: templates/phrases.tmpl */
    enum report_paper paper;
    enum units units;              /* of every size shown */
    const char *source_date_epoch; /* SOURCE_DATE_EPOCH as given (NULL or "": no date) */
    const char *inputs;            /* shown on the summary page, e.g. "configs/examples.csv" */
    const char *validation_note;   /* the PyTorch validation sentence; NULL: phrase 'validation' */
    size_t max_pages; /* the most pages of the combined report (0: REPORT_MAX_PAGES), above which
                       * it is a summary and one file per scenario */
    const struct report_listener *listener; /* NULL: none */
};

/* Fills *opt with the defaults (out/, report.pdf, A4, GB, no split, REPORT_MAX_PAGES). */
void report_options_init(struct report_options *opt);

/*
 * Writes the report of scs[0..n) (n >= 1) and, with split, one file per scenario; a report of
 * more pages than opt->max_pages as its summary and one file per scenario. Returns 0; 1
 * when it was written without some scenarios that could not be computed (each reported into d:
 * a byte count overflows); or -1 after reporting into d (a template error, an unwritable folder,
 * a libharu failure, no scenario left); files already complete stay, a file that failed keeps
 * its previous content.
 */
int report_write(const struct scenario *scs, size_t n, const struct report_options *opt,
                 struct diag *d);

/* The placeholders the templates may use, for --help and tests. */
const char *const *report_placeholder_names(size_t *n);

#endif
