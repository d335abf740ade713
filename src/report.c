/* report: see report.h. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "chart.h"
#include "doc.h"
#include "out.h"
#include "paths.h"
#include "report_charts.h"
#include "report_fmt.h"
#include "report_phrases.h"
#include "report_tables.h"
#include "report_values.h"
#include "template.h"

/* ------------------------------------------------------------------------------------------ */
/* One run of report_write: the options, the templates, every scenario computed once.         */

struct report_run {
    const struct report_options *opt;
    enum units units;
    struct report_values doc_vals;
    struct report_phrases phrases; /* the shipped catalogue, with the templates' own phrases */
    struct template scenario_tmpl, summary_tmpl;
    struct report_sc *scs;
    size_t n;
};

/* ------------------------------------------------------------------------------------------ */
/* Rendering a template.                                                                       */

static void report_block_text(struct doc *doc, const struct template_block *b,
                              struct report_values *vals)
{
    char *s = template_expand(b->text, report_values_lookup, vals);
    if (!s) {
        doc_fail(doc, -1);
        return;
    }
    if (b->kind == TEMPLATE_ITEM && !s[0]) { /* a note that does not apply ({{moe_note}}) */
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
    char *s = template_expand(b->text, report_values_lookup, vals);
    if (!s || (b->kind == TEMPLATE_ITEM && !s[0])) {
        free(s);
        return 0;
    }
    double indent = b->kind == TEMPLATE_ITEM ? 12 : 0;
    int lines = doc_lines(doc, s, DOC_BODY_PT, false, doc_width(doc) - indent);
    free(s);
    return lines * DOC_BODY_LEAD + (b->kind == TEMPLATE_ITEM ? 2.5 : 6);
}

/*
 * Keeps a heading with what follows it: the paragraphs under it and the first chart or the head
 * of the first table. Returns the height to ask for (at most a page).
 */
static double report_keep_height(struct doc *doc, const struct template *tmpl, size_t i,
                                 struct report_values *vals)
{
    /* A heading stays with the text under it and the chart or table that text introduces; when
     * no chart or table follows (a list of notes), only with its first paragraph or item. */
    double h = 40, first = 0;
    bool figure = false;
    for (size_t j = i + 1; j < tmpl->n; j++) {
        const struct template_block *b = &tmpl->blocks[j];
        if (b->kind == TEMPLATE_PHRASE)
            continue;
        if (b->kind == TEMPLATE_PARAGRAPH || b->kind == TEMPLATE_ITEM) {
            double th = report_text_height(doc, b, vals);
            h += th;
            if (first == 0)
                first = 40 + th;
            continue;
        }
        if (b->kind == TEMPLATE_CHART) {
            figure = true;
            h += report_charts_height(b->text) + 10;
            if (j + 1 < tmpl->n && tmpl->blocks[j + 1].kind == TEMPLATE_CHART)
                h += report_charts_height(tmpl->blocks[j + 1].text) + 10;
        } else if (b->kind == TEMPLATE_TABLE) {
            figure = true;
            h += report_tables_keep_height(b->text);
        }
        break;
    }
    if (!figure && first > 0)
        h = first;
    double page = doc_bottom(doc) - DOC_M_TOP;
    return h < page ? h : page;
}

/* Draws tmpl for scenario r (NULL: the summary, over scenarios [first, first + count)). */
static void report_render(struct doc *doc, const struct template *tmpl, struct report_sc *r,
                          const struct report_run *run, size_t first, size_t count)
{
    struct report_values *vals = r ? &r->vals : (struct report_values *)&run->doc_vals;
    for (size_t i = 0; i < tmpl->n && !doc->error; i++) {
        const struct template_block *b = &tmpl->blocks[i];
        switch (b->kind) {
        case TEMPLATE_HEADING:
            doc_need(doc, report_keep_height(doc, tmpl, i, vals));
            report_block_text(doc, b, vals);
            break;
        case TEMPLATE_PARAGRAPH:
        case TEMPLATE_ITEM:
            report_block_text(doc, b, vals);
            break;
        case TEMPLATE_PAGEBREAK:
            if (doc->y > DOC_M_TOP + 1)
                doc_new_page(doc);
            break;
        case TEMPLATE_PHRASE: /* words the tables and charts use, not a block of the page */
            break;
        case TEMPLATE_CHART:
            /* Charts that follow each other directly share a page (they are compared). */
            if (i + 1 < tmpl->n && tmpl->blocks[i + 1].kind == TEMPLATE_CHART &&
                (i == 0 || tmpl->blocks[i - 1].kind != TEMPLATE_CHART))
                doc_need(doc, report_charts_height(b->text) +
                                  report_charts_height(tmpl->blocks[i + 1].text) + 20);
            if (r)
                report_charts_draw(doc, r, b->text);
            break;
        case TEMPLATE_TABLE:
            if (r)
                report_tables_draw(doc, r, b->text);
            else
                report_tables_summary(doc, run->scs + first, count);
            break;
        }
        if (doc->c.error)
            doc_fail(doc, doc->c.error);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Documents and files.                                                                        */

/* Starts a document titled title on the paper of the options. */
static int report_doc_init(struct doc *doc, const struct report_run *run, const char *title,
                           struct diag *d)
{
    bool letter = run->opt->paper == REPORT_PAPER_LETTER;
    return doc_init(doc, title, letter, run->opt->source_date_epoch, d);
}

_Static_assert(DOC_RUNNING_BYTES >= SCENARIO_NAME_BYTES, "a scenario name fits the running head");

static void report_scenario(struct doc *doc, const struct report_run *run, struct report_sc *r)
{
    report_fmt(doc->running, sizeof doc->running, "%s", r->sc->name);
    doc_new_page(doc);
    doc_bookmark(doc, r->sc->name);
    report_render(doc, &run->scenario_tmpl, r, run, 0, 0);
}

/* Finishes doc (footers) and writes it to path. */
static int report_finish(struct report_run *run, struct doc *doc, const char *path, struct diag *d)
{
    if (run->phrases.misses) {
        diag_report(d, NULL, 0, "cannot write '%s': %s (a bug in memfit)", path,
                    run->phrases.first_miss);
        return -1;
    }
    if (doc_finish(doc) != 0) {
        if (doc->error == -1)
            diag_report(d, NULL, 0, "cannot write '%s': out of memory", path);
        else
            diag_report(d, NULL, 0, "cannot write '%s': libharu error 0x%04X", path,
                        (unsigned)doc->error);
        return -1;
    }
    return out_write_atomic(path, doc_write, doc, d);
}

static int report_combined(struct report_run *run, const char *path, struct diag *d)
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
    report_render(&doc, &run->summary_tmpl, NULL, run, 0, run->n);
    for (size_t i = 0; i < run->n; i++)
        report_scenario(&doc, run, &run->scs[i]);
    rc = report_finish(run, &doc, path, d);
out:
    doc_release(&doc);
    return rc;
}

static int report_single(struct report_run *run, struct report_sc *r, const char *path,
                         struct diag *d)
{
    struct doc doc;
    char title[REPORT_VALUE_MAX];
    report_say(title, sizeof title, &run->phrases, NULL, REPORT_PHRASE_TITLE_SCENARIO, "title",
               run->doc_vals.v[REPORT_PH_TITLE], "name", r->sc->name, NULL);
    int rc = -1;
    if (report_doc_init(&doc, run, title, d) == 0) {
        report_scenario(&doc, run, r);
        rc = report_finish(run, &doc, path, d);
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
        out_safe_name(run->scs[i].sc->name, nm, OUT_NAME_MAX + 1);
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
        if (report_single(run, &run->scs[i], path, d) != 0)
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
    return report_values_names(n);
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
    sc_names.placeholders = report_values_names(&sc_names.n_placeholders);
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

/* Every scenario's numbers, then the document's, shared with every scenario. */
static int report_compute(struct report_run *run, const struct scenario *scs, size_t n,
                          struct diag *d)
{
    run->scs = calloc(n, sizeof *run->scs);
    if (!run->scs) {
        diag_report(d, NULL, 0, "out of memory");
        return -1;
    }
    run->n = n;
    for (size_t i = 0; i < n; i++)
        if (report_sc_init(&run->scs[i], &scs[i], run->units, &run->phrases, d) != 0)
            return -1;
    report_values_doc(&run->doc_vals, run->scs, n, run->units, run->opt->inputs,
                      run->opt->validation_note, &run->phrases);
    for (size_t i = 0; i < n; i++)
        report_sc_share_doc(&run->scs[i], &run->doc_vals);
    return 0;
}

/* The files, in out_dir (made here with its parents when it is missing). */
static int report_write_files(struct report_run *run, struct diag *d)
{
    const struct report_options *opt = run->opt;
    if (out_make_dirs(opt->out_dir, d) != 0)
        return -1;
    char path[4096];
    if (out_join(path, sizeof path, opt->out_dir, opt->file_name ? opt->file_name : "report.pdf",
                 "") != 0) {
        diag_report(d, NULL, 0, "cannot write into '%s': path too long", opt->out_dir);
        return -1;
    }
    int rc = report_combined(run, path, d);
    if (opt->split && report_split(run, d) != 0)
        rc = -1;
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
    free(run.scs);
    template_release(&run.scenario_tmpl);
    template_release(&run.summary_tmpl);
    report_phrases_release(&run.phrases);
    return rc;
}
