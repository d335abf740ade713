/* report: see report.h. */
#include "report/report.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/stat.h>

#include "base/numfmt.h"
#include "base/out.h"
#include "base/paths.h"
#include "draw/chart.h"
#include "report/doc.h"
#include "report/report_charts.h"
#include "report/report_phrases.h"
#include "report/report_tables.h"
#include "report/report_values.h"
#include "report/template.h"

/* ------------------------------------------------------------------------------------------ */
/* One run of report_write: the options, the templates, every scenario computed once.         */

struct report_run {
    const struct report_options *opt;
    enum units units;
    struct report_values doc_vals;
    struct report_phrases phrases; /* the shipped catalogue, with the templates' own phrases */
    struct template scenario_tmpl, summary_tmpl;
    /* The scenarios that could be computed, the caller's. Only one is computed at a time, into
     * cur, when its row or section is drawn (a twentieth of a millisecond): what the run keeps
     * does not grow with the scenarios (a struct report_sc is 200 KB). */
    const struct scenario **kept;
    size_t n;
    struct report_sc *cur;
    size_t sections, sections_done; /* for the listener: to draw, drawn */
    size_t left_out;                /* scenarios that could not be computed (reported) */
};

/* Scenario i of the kept ones, computed into run->cur with the document's values; NULL in the
 * unlikely case that what was computed once fails again. */
static struct report_sc *report_sc_at(struct report_run *run, size_t i)
{
    struct diag quiet;
    diag_init(&quiet, NULL, NULL);
    if (report_sc_init(run->cur, run->kept[i], run->units, &run->phrases, &quiet) != 0)
        return NULL;
    report_sc_share_doc(run->cur, &run->doc_vals);
    return run->cur;
}

/* report_tables_summary's rows. */
static const struct report_sc *report_row_at(void *ctx, size_t i)
{
    return report_sc_at(ctx, i);
}

/* Tells the listener that one more scenario's section is drawn. */
static void report_tell_section(struct report_run *run)
{
    const struct report_listener *l = run->opt->listener;
    run->sections_done++;
    if (l && l->section)
        l->section(l->ctx, run->sections_done, run->sections);
}

/* ------------------------------------------------------------------------------------------ */
/* Rendering a template.                                                                       */

static void report_block_text(struct doc *doc, const struct template_block *b,
                              struct report_values *vals)
{
    char *s = template_expand(b->text, report_placeholders_lookup, vals);
    if (!s) {
        doc_fail(doc, -1);
        return;
    }
    if (b->kind != TEMPLATE_HEADING && !s[0]) { /* does not apply ({{moe_note}}, {{phases_note}}) */
        free(s);
        return;
    }
    if (b->kind == TEMPLATE_HEADING)
        doc_heading(doc, b->level, s);
    else if (b->kind == TEMPLATE_ITEM)
        doc_paragraph(doc, s, 12, "•");
    else
        doc_paragraph(doc, s, 0, NULL);
    free(s);
}

/* Height of an expanded paragraph or item, as doc_paragraph will draw it. */
static double report_text_height(struct doc *doc, const struct template_block *b,
                                 struct report_values *vals)
{
    char *s = template_expand(b->text, report_placeholders_lookup, vals);
    if (!s || (b->kind != TEMPLATE_HEADING && !s[0])) {
        free(s);
        return 0;
    }
    double indent = b->kind == TEMPLATE_ITEM ? 12 : 0;
    int lines = doc_lines(doc, s, DOC_BODY_PT, false, doc_width(doc) - indent);
    free(s);
    return lines * DOC_BODY_LEAD + (b->kind == TEMPLATE_ITEM ? 2.5 : 6);
}

/* ------------------------------------------------------------------------------------------ */
/* Figures: a chart and its caption, kept together, floated to the next page when they do not   */
/* fit the rest of this one while the text after them fills it.                                */

/* The end of the figure whose chart is block i: its caption, the paragraph right after the chart
 * (phrase blocks, which draw nothing, aside), belongs to it. Returns the block after the figure. */
static size_t report_figure_end(const struct template *tmpl, size_t i)
{
    size_t j = i + 1;
    while (j < tmpl->n && tmpl->blocks[j].kind == TEMPLATE_PHRASE)
        j++;
    return j < tmpl->n && tmpl->blocks[j].kind == TEMPLATE_PARAGRAPH ? j + 1 : i + 1;
}

/* The height of the figure [i, end): the chart as report_charts_draw places it, and its caption. */
static double report_figure_height(struct doc *doc, const struct template *tmpl, size_t i,
                                   size_t end, struct report_values *vals)
{
    double h = report_charts_height(tmpl->blocks[i].text) + 10;
    for (size_t j = i + 1; j < end; j++)
        if (tmpl->blocks[j].kind == TEMPLATE_PARAGRAPH)
            h += report_text_height(doc, &tmpl->blocks[j], vals);
    return h;
}

/* The first block from j on that may be set while a figure before it waits for the next page:
 * text or a table of the same section (before the next chart, section heading or page break);
 * tmpl->n when there is none. */
static size_t report_flow_after(const struct template *tmpl, size_t j)
{
    for (; j < tmpl->n; j++) {
        const struct template_block *b = &tmpl->blocks[j];
        if (b->kind == TEMPLATE_PHRASE)
            continue;
        if (b->kind == TEMPLATE_CHART || b->kind == TEMPLATE_PAGEBREAK ||
            (b->kind == TEMPLATE_HEADING && b->level <= 2))
            return tmpl->n;
        return j;
    }
    return tmpl->n;
}

/* A figure deferred to the top of the next page. */
struct report_float {
    const struct template *tmpl;
    struct report_sc *r;
    size_t chart, end; /* its blocks */
    bool pending;
};

/* Draws the figure [chart, end) at the cursor, on a new page unless it fits. */
static void report_figure_draw(struct doc *doc, const struct template *tmpl, struct report_sc *r,
                               size_t chart, size_t end)
{
    doc_need(doc, report_figure_height(doc, tmpl, chart, end, &r->vals));
    report_charts_draw(doc, r, tmpl->blocks[chart].text);
    for (size_t j = chart + 1; j < end; j++)
        if (tmpl->blocks[j].kind == TEMPLATE_PARAGRAPH)
            report_block_text(doc, &tmpl->blocks[j], &r->vals);
}

/* doc's at_next_page: the deferred figure, at the top of the page. */
static void report_float_at_top(struct doc *doc, void *ctx)
{
    struct report_float *fl = ctx;
    if (!fl->pending)
        return;
    fl->pending = false;
    report_figure_draw(doc, fl->tmpl, fl->r, fl->chart, fl->end);
}

/* Places the deferred figure before what comes next (a section, another figure, the end): on the
 * next page, since it did not fit the rest of this one. */
static void report_float_flush(struct doc *doc, struct report_float *fl)
{
    if (fl->pending)
        doc_new_page(doc); /* at_next_page draws it */
}

/*
 * The figure whose chart is block i: drawn here when it fits the rest of the page, else deferred
 * to the top of the next page when text or a table of its section follows to fill this one, else
 * drawn on the next page. Returns the last block it takes (its caption).
 */
static size_t report_figure(struct doc *doc, const struct template *tmpl, struct report_sc *r,
                            size_t i, struct report_float *fl)
{
    size_t end = report_figure_end(tmpl, i);
    report_float_flush(doc, fl); /* figures keep their order */
    double h = report_figure_height(doc, tmpl, i, end, &r->vals);
    bool fits = doc->y + h <= doc_bottom(doc), top = doc->y <= DOC_M_TOP + 1;
    if (!fits && !top && report_flow_after(tmpl, end) < tmpl->n) {
        *fl = (struct report_float){tmpl, r, i, end, true};
        doc->at_next_page = report_float_at_top;
        doc->at_next_page_ctx = fl;
    } else {
        report_figure_draw(doc, tmpl, r, i, end);
    }
    return end - 1;
}

/* The height a block needs kept with the heading above it: a paragraph's or item's first three
 * lines, a table's head. */
static double report_block_keep(struct doc *doc, const struct template_block *b,
                                struct report_values *vals)
{
    if (b->kind == TEMPLATE_TABLE)
        return report_tables_keep_height(b->text);
    double h = report_text_height(doc, b, vals), three = 3 * DOC_BODY_LEAD;
    return h < three ? h : three;
}

/*
 * Keeps a heading with what follows it: the text under it and the figure or table that text
 * introduces. A figure that would float (its section goes on with text or a table) is not kept:
 * the heading then stays with its text, or with the first block set after the figure. When no
 * figure or table follows (a list of notes), the heading stays with its first paragraph or item.
 * Returns the height to ask for (at most a page).
 */
static double report_keep_height(struct doc *doc, const struct template *tmpl, size_t i,
                                 struct report_values *vals)
{
    char *text = template_expand(tmpl->blocks[i].text, report_placeholders_lookup, vals);
    double head = (text ? doc_heading_height(doc, tmpl->blocks[i].level, text) : 40) + 2;
    free(text);
    double h = head, first = 0, page = doc_bottom(doc) - DOC_M_TOP;
    bool figure = false;
    for (size_t j = i + 1; j < tmpl->n; j++) {
        const struct template_block *b = &tmpl->blocks[j];
        if (b->kind == TEMPLATE_PHRASE)
            continue;
        if (b->kind == TEMPLATE_PARAGRAPH || b->kind == TEMPLATE_ITEM) {
            double th = report_text_height(doc, b, vals);
            h += th;
            if (first == 0)
                first = head + th;
            continue;
        }
        if (b->kind == TEMPLATE_CHART) {
            size_t end = report_figure_end(tmpl, j), flow = report_flow_after(tmpl, end);
            double fh = report_figure_height(doc, tmpl, j, end, vals);
            if (doc->y + h + fh > doc_bottom(doc) && flow < tmpl->n) {
                if (first == 0)
                    h += report_block_keep(doc, &tmpl->blocks[flow], vals);
                return h < page ? h : page;
            }
            figure = true;
            h += fh;
        } else if (b->kind == TEMPLATE_TABLE) {
            figure = true;
            h += report_tables_keep_height(b->text);
        }
        break;
    }
    if (!figure && first > 0)
        h = first;
    return h < page ? h : page;
}

/* Draws tmpl for scenario r (NULL: the summary, over every kept scenario). */
static void report_render(struct doc *doc, const struct template *tmpl, struct report_sc *r,
                          struct report_run *run)
{
    struct report_values *vals = r ? &r->vals : (struct report_values *)&run->doc_vals;
    struct report_float fl = {0};
    for (size_t i = 0; i < tmpl->n && !doc->error; i++) {
        const struct template_block *b = &tmpl->blocks[i];
        switch (b->kind) {
        case TEMPLATE_HEADING:
            if (b->level <= 2)
                report_float_flush(doc, &fl); /* a figure stays in its section */
            doc_need(doc, report_keep_height(doc, tmpl, i, vals));
            report_block_text(doc, b, vals);
            break;
        case TEMPLATE_PARAGRAPH:
        case TEMPLATE_ITEM:
            report_block_text(doc, b, vals);
            break;
        case TEMPLATE_PAGEBREAK:
            report_float_flush(doc, &fl);
            if (doc->y > DOC_M_TOP + 1)
                doc_new_page(doc);
            break;
        case TEMPLATE_PHRASE: /* words the tables and charts use, not a block of the page */
            break;
        case TEMPLATE_CHART: /* one that does not apply (phases under --peak lesson) is left out */
            if (r && report_charts_applies(r, b->text))
                i = report_figure(doc, tmpl, r, i, &fl);
            break;
        case TEMPLATE_TABLE:
            if (r)
                report_tables_draw(doc, r, b->text);
            else
                report_tables_summary(doc, run->n, report_row_at, run);
            break;
        }
        if (doc->c.error)
            doc_fail(doc, doc->c.error);
    }
    report_float_flush(doc, &fl);
    doc->at_next_page = NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Documents and files.                                                                        */

/* Starts a document titled title on the paper of the options. */
static int report_doc_init(struct doc *doc, const struct report_run *run, const char *title,
                           struct diag *d)
{
    bool letter = run->opt->paper == REPORT_PAPER_LETTER;
    if (doc_init(doc, title, letter, run->opt->source_date_epoch, d) != 0)
        return -1;
    /* Every page says which report it belongs to; a --split file's title adds the name. */
    doc_set_head(doc, run->doc_vals.v[REPORT_PH_TITLE]);
    return 0;
}

_Static_assert(DOC_RUNNING_BYTES >= SCENARIO_NAME_BYTES, "a scenario name fits the running head");
_Static_assert(REPORT_PDF_MAX_PAGES == HPDF_LIMIT_MAX_ARRAY, "report.h says libharu's limit");

static void report_scenario(struct doc *doc, struct report_run *run, struct report_sc *r)
{
    numfmt(doc->running, sizeof doc->running, "%s", r->sc->name);
    doc_new_page(doc);
    doc_bookmark(doc, r->sc->name);
    report_render(doc, &run->scenario_tmpl, r, run);
}

/* Finishes doc (footers) and writes it to path, a file of `scenarios` (split: one's own). */
static int report_finish(struct report_run *run, struct doc *doc, const char *path,
                         size_t scenarios, bool split, struct diag *d)
{
    if (run->phrases.misses) {
        diag_report(d, NULL, 0, "cannot write '%s': %s (a bug in memfit)", path,
                    run->phrases.first_miss);
        return -1;
    }
    if (doc_finish(doc) != 0) {
        if (doc->error == -1)
            diag_report(d, NULL, 0, "cannot write '%s': out of memory", path);
        else if (doc->error == DOC_ERR_PAGES)
            diag_report(d, NULL, 0,
                        "cannot write '%s': more than %zu pages, the most a PDF made with libharu "
                        "has",
                        path, doc->max_pages);
        else
            diag_report(d, NULL, 0, "cannot write '%s': libharu error 0x%04X", path,
                        (unsigned)doc->error);
        return -1;
    }
    if (out_write_atomic(path, doc_write, doc, d) != 0)
        return -1;
    const struct report_listener *l = run->opt->listener;
    if (l && l->file)
        l->file(l->ctx, path, doc->n_pages, scenarios, split);
    return 0;
}

/* report_combined's result when the document reached libharu's most pages (nothing reported). */
#define REPORT_TOO_MANY_PAGES 2

/* The combined report into path: the summary, then every scenario's section unless
 * summary_only. Returns 0, -1 after a message, or REPORT_TOO_MANY_PAGES. */
static int report_combined(struct report_run *run, const char *path, bool summary_only,
                           struct diag *d)
{
    struct doc doc;
    int rc = -1;
    if (report_doc_init(&doc, run, run->doc_vals.v[REPORT_PH_TITLE], d) != 0)
        goto out;
    char bookmark[REPORT_VALUE_MAX];
    report_say(doc.running, sizeof doc.running, &run->phrases, NULL,
               REPORT_PHRASE_SUMMARY_RUNNING_HEAD, NULL);
    report_say(bookmark, sizeof bookmark, &run->phrases, NULL, REPORT_PHRASE_SUMMARY_BOOKMARK,
               NULL);
    doc_new_page(&doc);
    doc_bookmark(&doc, bookmark);
    report_render(&doc, &run->summary_tmpl, NULL, run);
    for (size_t i = 0; i < run->n && !summary_only && !doc.error; i++) {
        struct report_sc *r = report_sc_at(run, i);
        if (!r)
            doc_fail(&doc, -1);
        else
            report_scenario(&doc, run, r);
        report_tell_section(run);
    }
    if (doc.error == DOC_ERR_PAGES && !summary_only)
        rc = REPORT_TOO_MANY_PAGES;
    else
        rc = report_finish(run, &doc, path, run->n, false, d);
out:
    doc_release(&doc);
    return rc;
}

static int report_single(struct report_run *run, size_t i, const char *path, struct diag *d)
{
    struct report_sc *r = report_sc_at(run, i);
    if (!r) {
        diag_report(d, NULL, 0, "cannot write '%s': out of memory", path);
        return -1;
    }
    struct doc doc;
    char title[REPORT_VALUE_MAX];
    report_say(title, sizeof title, &run->phrases, NULL, REPORT_PHRASE_TITLE_SCENARIO, "title",
               run->doc_vals.v[REPORT_PH_TITLE], "name", r->sc->name, NULL);
    int rc = -1;
    if (report_doc_init(&doc, run, title, d) == 0) {
        report_scenario(&doc, run, r);
        report_tell_section(run);
        rc = report_finish(run, &doc, path, 1, true, d);
    }
    doc_release(&doc);
    return rc;
}

/* Writes one PDF per scenario, with unique safe names. */
static int report_split(struct report_run *run, struct diag *d)
{
    const char *combined = run->opt->file_name ? run->opt->file_name : "report.pdf";
    char(*names)[OUT_NAME_MAX + 1] = calloc(run->n + 1, sizeof *names);
    const char **taken = calloc(run->n + 1, sizeof *taken);
    int rc = 0;
    if (!names || !taken) {
        diag_report(d, NULL, 0, "out of memory");
        rc = -1;
        goto out;
    }
    /* The combined report's own name is taken first, so no scenario can overwrite it. */
    out_safe_name(combined, names[0], sizeof names[0]);
    char *dot = strrchr(names[0], '.');
    if (dot && strcmp(dot, ".pdf") == 0)
        *dot = '\0';
    taken[0] = names[0];
    for (size_t i = 0; i < run->n; i++) {
        char *nm = names[i + 1];
        out_safe_name(run->kept[i]->name, nm, OUT_NAME_MAX + 1);
        if (out_unique_name(nm, OUT_NAME_MAX + 1, taken, i + 1) != 0) {
            rc = -1;
            continue;
        }
        taken[i + 1] = nm;
        char path[4096];
        if (out_join(path, sizeof path, run->opt->out_dir, nm, ".pdf") != 0) {
            diag_report(d, NULL, 0, "cannot write '%s/%s.pdf': path too long", run->opt->out_dir,
                        nm);
            rc = -1;
            continue;
        }
        if (report_single(run, i, path, d) != 0)
            rc = -1;
    }
out:
    free(names);
    free(taken);
    return rc;
}

/* Loads a template from path, or from the data dir when path is NULL. */
static int report_load_template(struct template *t, const char *path, const char *rel,
                                const struct template_names *names,
                                const struct template_phrases *phrases, struct diag *d)
{
    char found[4096];
    if (!path) {
        if (paths_find_data(rel, found, sizeof found) != 0) {
            diag_report(d, NULL, 0, "cannot find '%s'", rel);
            return -1;
        }
        path = found;
    }
    return template_load_with_phrases(t, path, names, phrases, d);
}

void report_options_init(struct report_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->out_dir = "out";
    opt->file_name = "report.pdf";
    opt->paper = REPORT_PAPER_A4;
}

const char *const *report_placeholder_names(size_t *n)
{
    return report_placeholders_names(n);
}

/* The phrase catalogue from path, or from the data dir when path is NULL. */
static int report_load_phrases(struct report_phrases *ph, const char *path, struct diag *d)
{
    char found[4096];
    if (!path) {
        if (paths_find_data("templates/phrases.tmpl", found, sizeof found) != 0) {
            diag_report(d, NULL, 0, "cannot find 'templates/phrases.tmpl'");
            return -1;
        }
        path = found;
    }
    return report_phrases_load(ph, path, d);
}

/*
 * The phrase catalogue and both templates, parsed and checked before anything is drawn; the
 * templates' own phrases replace the catalogue's, the scenario template's last.
 */
static int report_load_templates(struct report_run *run, struct diag *d)
{
    const struct report_options *opt = run->opt;
    struct template_names sc_names, sum_names;
    struct template_phrases known;
    memset(&sum_names, 0, sizeof sum_names);
    sc_names.placeholders = report_placeholders_names(&sc_names.n_placeholders);
    sc_names.charts = report_charts_names(&sc_names.n_charts);
    sc_names.tables = report_tables_names(&sc_names.n_tables);
    sum_names.placeholders = sc_names.placeholders;
    sum_names.n_placeholders = REPORT_PH_DOC_END; /* the document's own, listed first */
    sum_names.tables = report_tables_summary_names(&sum_names.n_tables);
    report_phrases_known(&known);
    int bad = report_load_phrases(&run->phrases, opt->phrases, d);
    bad |= report_load_template(&run->scenario_tmpl, opt->scenario_template,
                                "templates/report.tmpl", &sc_names, &known, d);
    bad |= report_load_template(&run->summary_tmpl, opt->summary_template, "templates/summary.tmpl",
                                &sum_names, &known, d);
    if (bad)
        return -1;
    report_phrases_override(&run->phrases, &run->summary_tmpl);
    report_phrases_override(&run->phrases, &run->scenario_tmpl);
    return 0;
}

/* Every scenario computed once, for the document's values (how many fit); the scenarios that
 * can be computed are kept, only their pointers. */
static int report_compute(struct report_run *run, const struct scenario *scs, size_t n,
                          struct diag *d)
{
    run->kept = calloc(n, sizeof *run->kept);
    run->cur = malloc(sizeof *run->cur);
    if (!run->kept || !run->cur) {
        diag_report(d, NULL, 0, "out of memory");
        return -1;
    }
    /* A scenario that cannot be computed (config rejects those rows, so this is a safety net)
     * is left out with its message; the others are still written. */
    struct report_doc_counts c = {0, 0, false};
    for (size_t i = 0; i < n; i++) {
        if (report_sc_init(run->cur, &scs[i], run->units, &run->phrases, d) != 0) {
            run->left_out++;
            continue;
        }
        run->kept[c.n++] = &scs[i];
        c.fit += run->cur->t.fits;
        c.step = c.step || scs[i].peak == PEAK_STEP; /* one --peak: the step's when any has it */
    }
    run->n = c.n;
    if (c.n == 0) {
        diag_report(d, NULL, 0, "no scenario to report");
        return -1;
    }
    report_values_doc(&run->doc_vals, &c, run->units, run->opt->inputs, run->opt->validation_note,
                      &run->phrases);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* The plan: one file, or a summary and one file per scenario.                                 */

/*
 * The pages of the combined report, counted before it is drawn: the summary, a page and its
 * table's rows (DOC_ROW_H each, 35 pt for the heading and 60 for the paragraph above it), a page
 * more for each @pagebreak of the summary template (the glossary), and the pages of the first
 * scenario's section, laid out alone in a document thrown away, times the scenarios (every
 * section follows the same template: the shipped one gives 6 pages to each of
 * configs/examples.csv). 0 after a message when the document cannot be made.
 */
static size_t report_count_pages(struct report_run *run, struct diag *d)
{
    struct doc doc;
    size_t section = 0;
    if (report_doc_init(&doc, run, run->doc_vals.v[REPORT_PH_TITLE], d) == 0) {
        struct report_sc *r = report_sc_at(run, 0);
        if (r)
            report_scenario(&doc, run, r);
        section = doc.n_pages;
    }
    double room = doc_bottom(&doc) - DOC_M_TOP, rows = (double)run->n * DOC_ROW_H + 95;
    doc_release(&doc);
    if (section == 0)
        return 0;
    size_t summary = (size_t)(rows / room) + 1;
    for (size_t i = 0; i < run->summary_tmpl.n; i++)
        summary += run->summary_tmpl.blocks[i].kind == TEMPLATE_PAGEBREAK;
    return summary + (section > SIZE_MAX / run->n ? SIZE_MAX / 2 : section * run->n);
}

/* The sentence of {{files_note}}: the report is a summary and one file per scenario. */
static void report_files_note(struct report_run *run, size_t pages, size_t max_pages)
{
    char p[32], m[32];
    numfmt_count(p, sizeof p, pages);
    numfmt_count(m, sizeof m, max_pages);
    report_say(run->doc_vals.v[REPORT_PH_FILES_NOTE], REPORT_VALUE_MAX, &run->phrases, NULL,
               REPORT_PHRASE_FILES_NOTE, "pages", p, "max_pages", m, "folder", run->opt->out_dir,
               NULL);
}

/* The combined report in path, or, when it would have more pages than one file is given, its
 * summary there and every scenario's file (told to the listener before anything is drawn; also
 * when the count was short and the document reached libharu's most pages). */
static int report_plan_and_write(struct report_run *run, const char *path, struct diag *d)
{
    const struct report_options *opt = run->opt;
    const struct report_listener *l = opt->listener;
    size_t max_pages = opt->max_pages ? opt->max_pages : REPORT_MAX_PAGES;
    if (max_pages > REPORT_PDF_MAX_PAGES)
        max_pages = REPORT_PDF_MAX_PAGES;
    size_t pages = report_count_pages(run, d);
    if (pages == 0)
        return -1;
    int rc = 0;
    if (pages <= max_pages) {
        run->sections = run->n * (opt->split ? 2 : 1);
        rc = report_combined(run, path, false, d);
        if (rc != REPORT_TOO_MANY_PAGES)
            return opt->split && report_split(run, d) != 0 ? -1 : rc;
        /* Counted short (sections of very different lengths): as if it had been known. */
        if (run->sections_done)
            pages = (size_t)((double)REPORT_PDF_MAX_PAGES / (double)run->sections_done *
                             (double)run->n);
        max_pages = REPORT_PDF_MAX_PAGES;
    }
    if (l && l->separate)
        l->separate(l->ctx, pages, max_pages);
    report_files_note(run, pages, max_pages);
    run->sections = run->sections_done + run->n;
    rc = report_combined(run, path, true, d);
    if (report_split(run, d) != 0)
        rc = -1;
    return rc;
}

/* The files, in out_dir (made here with its parents when it is missing). */
static int report_write_files(struct report_run *run, struct diag *d)
{
    const struct report_options *opt = run->opt;
    char made[4096];
    if (out_make_dirs_noting(opt->out_dir, made, sizeof made, d) != 0)
        return -1;
    char path[4096];
    int rc = -1;
    if (out_join(path, sizeof path, opt->out_dir, opt->file_name ? opt->file_name : "report.pdf",
                 "") != 0) {
        diag_report(d, NULL, 0, "cannot write into '%s': path too long", opt->out_dir);
    } else {
        rc = report_plan_and_write(run, path, d);
    }
    if (rc != 0)
        out_unmake_dirs(opt->out_dir, made); /* a folder made for nothing goes (a full one stays) */
    return rc;
}

int report_write(const struct scenario *scs, size_t n, const struct report_options *opt,
                 struct diag *d)
{
    if (n == 0) {
        diag_report(d, NULL, 0, "no scenario to report");
        return -1;
    }
    struct report_run run;
    memset(&run, 0, sizeof run);
    run.opt = opt;
    run.units = opt->units;
    report_phrases_init(&run.phrases);
    template_init(&run.scenario_tmpl);
    template_init(&run.summary_tmpl);
    int rc = -1;
    if (report_load_templates(&run, d) == 0 && report_compute(&run, scs, n, d) == 0)
        rc = report_write_files(&run, d);
    if (rc == 0 && run.left_out)
        rc = 1;
    free(run.kept);
    free(run.cur);
    template_release(&run.scenario_tmpl);
    template_release(&run.summary_tmpl);
    report_phrases_release(&run.phrases);
    return rc;
}
