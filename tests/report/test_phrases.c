/*
 * Tests of the report's phrases (report_phrases.h) and of '@phrase' in the template language:
 * the shipped catalogue, the phrase blocks and every error with its line, expansion, a
 * template's phrases replacing the shipped ones, the catalogue and the templates documenting
 * every placeholder, and reports (memfit report's, memfit search's) in which every phrase is used
 * with every placeholder C says it fills; a template rewording the verdict box; mutants of the
 * catalogue. The words of the report on MoE, FP8, tuning and the step are in
 * test_phrases_words.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mutate.h"
#include "phrase_scenarios.h"
#include "input/config.h"
#include "report/report.h"
#include "report/report_phrases.h"
#include "report/report_search.h"
#include "report/report_values.h"
#include "search_fixture.h"
#include "base/strbuf.h"
#include "report/template.h"
#include "testutil.h"

/* ---- '@phrase' in the template language --------------------------------------------------- */

static const char *const scope[] = {"peak", "budget"};
static const struct template_phrase defs[] = {
    {"verdict_oom", "", true, 0},
    {"headroom_over", "amount", false, 0},
    {"columns", "", false, 3},
    {"empty", "", false, 0},
};
static const struct template_phrases known = {defs, 4, scope, 2};
static const char *const placeholders[] = {"name"};
static const char *const tables[] = {"verdict"};
static const struct template_names names = {placeholders, 1, NULL, 0, tables, 1};

static int parse(struct template *t, const char *text, struct diag *d)
{
    diag_init(d, NULL, NULL);
    return template_parse_with_phrases(t, "r.tmpl", text, strlen(text), &names, &known, d);
}

static void test_phrase_blocks(void **state)
{
    (void)state;
    struct template t;
    struct diag d;
    const char *text = "# {{name}}\n"
                       "@phrase verdict_oom\n"
                       "  Too big: {{peak}}   \n"
                       "% a comment inside a phrase\n"
                       "# not a heading, - not an item: {{ budget }}\n"
                       "\n"
                       "A paragraph {{name}}.\n"
                       "@phrase empty\n"
                       "@phrase columns\n"
                       "a | | c\n"
                       "@table verdict\n"
                       "@phrase headroom_over\n";
    assert_int_equal(parse(&t, text, &d), 0);
    assert_int_equal(d.count, 0);
    assert_int_equal(t.n, 7);
    assert_int_equal(t.blocks[1].kind, TEMPLATE_PHRASE);
    assert_int_equal(t.blocks[1].phrase, 0);
    assert_int_equal(t.blocks[1].line, 2);
    assert_string_equal(t.blocks[1].text,
                        "Too big: {{peak}} # not a heading, - not an item: {{ budget }}");
    assert_int_equal(t.blocks[2].kind, TEMPLATE_PARAGRAPH); /* the blank line ended the phrase */
    assert_string_equal(t.blocks[3].text, "");              /* ended by the next '@' line */
    assert_int_equal(t.blocks[3].phrase, 3);
    assert_string_equal(t.blocks[4].text, "a | | c");
    assert_int_equal(t.blocks[5].kind, TEMPLATE_TABLE);
    assert_int_equal(t.blocks[6].kind, TEMPLATE_PHRASE); /* ended by the end of the file */
    assert_string_equal(t.blocks[6].text, "");
    template_release(&t);
}

static void test_phrase_errors(void **state)
{
    (void)state;
    struct template t;
    struct diag d;
    /* An unknown phrase, with the closest name; its text is skipped, not checked. */
    assert_int_equal(parse(&t, "# T\n\n@phrase verdict_omm\nToo big: {{amount}}\n", &d), -1);
    assert_int_equal(d.count, 1);
    assert_string_equal(d.first,
                        "r.tmpl:3: unknown phrase 'verdict_omm' (did you mean 'verdict_oom'?)");
    /* A phrase's placeholders are its own, reported on their own line. */
    assert_int_equal(parse(&t, "@phrase headroom_over\nfirst line\n{{amout}} over\n", &d), -1);
    assert_string_equal(d.first,
                        "r.tmpl:3: unknown placeholder '{{amout}}' (did you mean '{{amount}}'?)");
    /* An unscoped phrase may not use the scope's names, nor the template's. */
    assert_int_equal(parse(&t, "@phrase headroom_over\n{{peak}} {{name}}\n", &d), -1);
    assert_int_equal(d.count, 2);
    assert_string_equal(d.first, "r.tmpl:2: unknown placeholder '{{peak}}' (valid: {{amount}})");
    /* A scoped one may use the scope's, not the template's own. */
    assert_int_equal(parse(&t, "@phrase verdict_oom\n{{peak}} {{budget}} {{name}}\n", &d), -1);
    assert_int_equal(d.count, 1);
    assert_string_equal(d.first,
                        "r.tmpl:2: unknown placeholder '{{name}}' (valid: {{peak}}, {{budget}})");
    /* A text line after the template's own placeholders is checked against the template's. */
    assert_int_equal(parse(&t, "@phrase empty\n\n{{amount}}\n", &d), -1);
    assert_string_equal(d.first, "r.tmpl:3: unknown placeholder '{{amount}}' (valid: {{name}})");
    assert_int_equal(parse(&t, "@phrase\n", &d), -1);
    assert_string_equal(d.first, "r.tmpl:1: '@phrase' needs a name");
    assert_int_equal(parse(&t, "@phrase verdict_oom Too big\n", &d), -1);
    assert_string_equal(
        d.first, "r.tmpl:1: '@phrase verdict_oom': the phrase's text goes on the lines below");
    assert_int_equal(parse(&t, "@phrase empty\n\n% again\n@phrase empty\nx\n", &d), -1);
    assert_string_equal(d.first, "r.tmpl:4: phrase 'empty' defined twice (first on line 1)");
    assert_int_equal(parse(&t, "@phrase columns\na | b\n", &d), -1);
    assert_string_equal(d.first,
                        "r.tmpl:1: phrase 'columns' has 2 cells, needs 3 (separated by '|')");
    assert_int_equal(parse(&t, "@phrase columns\n", &d), -1);
    assert_string_equal(d.first,
                        "r.tmpl:1: phrase 'columns' has 1 cell, needs 3 (separated by '|')");
    assert_int_equal(parse(&t, "@phrase headroom_over\n{{amount\n", &d), -1);
    assert_string_equal(d.first, "r.tmpl:2: unclosed placeholder: '{{' without '}}'");
    /* Without phrases, '@phrase' names nothing known. */
    diag_init(&d, NULL, NULL);
    const char *text = "@phrase title\nx\n";
    assert_int_equal(template_parse(&t, "r.tmpl", text, strlen(text), &names, &d), -1);
    assert_string_equal(d.first, "r.tmpl:1: unknown phrase 'title'");
}

/* ---- The catalogue ------------------------------------------------------------------------ */

/* The text of phrase name in ph. */
static const char *text_of(const struct report_phrases *ph, const char *name)
{
    size_t n;
    const struct template_phrase *all = report_phrases_defs(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(all[i].name, name) == 0)
            return ph->text[i];
    fail_msg("no phrase '%s'", name);
    return NULL;
}

static void test_shipped_catalogue(void **state)
{
    (void)state;
    struct report_phrases ph;
    struct diag d;
    diag_init(&d, NULL, NULL);
    report_phrases_init(&ph);
    assert_int_equal(report_phrases_load(&ph, "templates/phrases.tmpl", &d), 0);
    assert_int_equal(d.count, 0);
    for (size_t i = 0; i < REPORT_PHRASE_COUNT; i++)
        assert_non_null(ph.text[i]);
    assert_string_equal(text_of(&ph, "verdict_oom"),
                        "Does not fit: peak {{peak}} > budget {{budget}}");
    assert_string_equal(text_of(&ph, "terms_rows"),
                        "weights | gradients | optimizer states | activations, one layer | "
                        "activations, stored | logits | peak | budget");
    assert_string_equal(text_of(&ph, "config_dropout"), ", dropout");
    report_phrases_release(&ph);
    report_phrases_release(NULL);
}

static void test_catalogue_errors(void **state)
{
    (void)state;
    struct report_phrases ph;
    struct diag d;
    diag_init(&d, NULL, NULL);
    report_phrases_init(&ph);
    /* Text after a blank line is outside any phrase; every phrase not defined is missing: the
     * first of those problems are said, then how many more (a whole list was 290 lines). */
    const char *text = "% a catalogue\n@phrase title\nThe title\n\nmore of the title\n";
    assert_int_equal(report_phrases_parse(&ph, "c.tmpl", text, strlen(text), &d), -1);
    assert_int_equal(d.count, TEMPLATE_ERRORS_SHOWN + 1);
    assert_string_equal(d.first, "c.tmpl:5: text outside a phrase (a phrase ends at a blank line)");
    char last[128];
    snprintf(last, sizeof last, "... and %d more errors in c.tmpl",
             1 + (REPORT_PHRASE_COUNT - 1) - TEMPLATE_ERRORS_SHOWN);
    assert_string_equal(d.last, last);
    assert_null(ph.text[REPORT_PHRASE_TITLE]);
    /* A catalogue that lacks its last two phrases: each is said, and nothing more. */
    size_t n_defs;
    const struct template_phrase *all = report_phrases_defs(&n_defs);
    struct strbuf most;
    strbuf_init(&most);
    for (size_t i = 0; i + 2 < n_defs; i++) {
        strbuf_printf(&most, "@phrase %s\nx", all[i].name);
        for (unsigned c = 1; c < all[i].cells; c++)
            strbuf_puts(&most, "|x");
        strbuf_puts(&most, "\n\n");
    }
    diag_init(&d, NULL, NULL);
    assert_int_equal(report_phrases_parse(&ph, "c.tmpl", most.buf, most.len, &d), -1);
    assert_int_equal(d.count, 2);
    snprintf(last, sizeof last, "c.tmpl: phrase '%s' is missing", all[n_defs - 1].name);
    assert_string_equal(d.last, last);
    strbuf_release(&most);
    /* A catalogue's own errors, with their lines. */
    diag_init(&d, NULL, NULL);
    text = "@phrase verdict_oom\nDoes not fit: {{peek}}\n";
    assert_int_equal(report_phrases_parse(&ph, "c.tmpl", text, strlen(text), &d), -1);
    assert_string_equal(d.first,
                        "c.tmpl:2: unknown placeholder '{{peek}}' (did you mean '{{peak}}'?)");
    diag_init(&d, NULL, NULL);
    assert_int_equal(report_phrases_load(&ph, "/nonexistent/phrases.tmpl", &d), -1);
    assert_string_equal(d.first,
                        "cannot read '/nonexistent/phrases.tmpl': No such file or directory");
    report_phrases_release(&ph);
}

static void test_say_and_override(void **state)
{
    (void)state;
    struct report_phrases ph;
    struct diag d;
    diag_init(&d, NULL, NULL);
    report_phrases_init(&ph);
    assert_int_equal(report_phrases_load(&ph, "templates/phrases.tmpl", &d), 0);
    char buf[REPORT_VALUE_MAX];
    report_say(buf, sizeof buf, &ph, NULL, REPORT_PHRASE_HEADROOM_OVER, "amount", "48.1 GB", NULL);
    assert_string_equal(buf, "48.1 GB over the budget");
    /* A scoped phrase reads the scenario's values. */
    struct report_values *vals = calloc(1, sizeof *vals);
    assert_non_null(vals);
    snprintf(vals->v[REPORT_PH_PEAK], REPORT_VALUE_MAX, "116.1 GB");
    snprintf(vals->v[REPORT_PH_BUDGET], REPORT_VALUE_MAX, "68.0 GB");
    report_say(buf, sizeof buf, &ph, vals, REPORT_PHRASE_VERDICT_OOM, NULL);
    assert_string_equal(buf, "Does not fit: peak 116.1 GB > budget 68.0 GB");
    /* Cut at a character boundary, never overflowed. */
    char small[12];
    report_say(small, sizeof small, &ph, vals, REPORT_PHRASE_VERDICT_FITS, NULL);
    assert_string_equal(small, "Fits: peak ");
    /* Cells, trimmed; an empty one stays. */
    char cells[4][REPORT_CELL_MAX];
    report_cells(&ph, vals, REPORT_PHRASE_CONFIG_COLUMNS, cells, 4);
    assert_string_equal(cells[0], "model");
    assert_string_equal(cells[1], "");
    assert_string_equal(cells[2], "training");
    assert_string_equal(cells[3], "");
    assert_int_equal(ph.misses, 0);
    /* A placeholder C did not fill is a "?" and a miss: a bug the report refuses to hide. */
    report_say(buf, sizeof buf, &ph, NULL, REPORT_PHRASE_HEADROOM_OVER, NULL);
    assert_string_equal(buf, "? over the budget");
    assert_int_equal(ph.misses, 1);
    assert_string_equal(ph.first_miss, "phrase 'headroom_over' has no value for '{{amount}}'");
    /* A template's own phrase replaces the shipped one. */
    struct template t;
    struct template_names tn = {NULL, 0, NULL, 0, NULL, 0};
    struct template_phrases kn;
    report_phrases_known(&kn);
    const char *text = "@phrase verdict_oom\nToo big: {{peak}} needed, {{budget}} at hand\n";
    assert_int_equal(template_parse_with_phrases(&t, "mine.tmpl", text, strlen(text), &tn, &kn, &d),
                     0);
    report_phrases_override(&ph, &t);
    report_say(buf, sizeof buf, &ph, vals, REPORT_PHRASE_VERDICT_OOM, NULL);
    assert_string_equal(buf, "Too big: 116.1 GB needed, 68.0 GB at hand");
    report_say(buf, sizeof buf, &ph, vals, REPORT_PHRASE_VERDICT_FITS, NULL); /* the others stay */
    assert_string_equal(buf, "Fits: peak 116.1 GB ≤ budget 68.0 GB");
    template_release(&t);
    free(vals);
    report_phrases_release(&ph);
}

/* ---- Every placeholder documented --------------------------------------------------------- */

/* The comment lines of file directly above the line "@phrase NAME", joined. */
static void comment_above(const char *file, const char *name, char *out, size_t size)
{
    char want[96];
    snprintf(want, sizeof want, "\n@phrase %s\n", name);
    const char *at = strstr(file, want);
    assert_non_null(at);
    const char *start = at; /* back over the '%' lines just above */
    while (start > file) {
        const char *prev = start - 1;
        while (prev > file && prev[-1] != '\n')
            prev--;
        if (*prev != '%')
            break;
        start = prev;
    }
    size_t n = (size_t)(at - start) < size - 1 ? (size_t)(at - start) : size - 1;
    memcpy(out, start, n);
    out[n] = '\0';
}

static void test_catalogue_documents_placeholders(void **state)
{
    (void)state;
    size_t len, n, nv;
    char *file = test_read_file("templates/phrases.tmpl", &len);
    assert_non_null(file);
    const struct template_phrase *all = report_phrases_defs(&n);
    const char *const *vnames = report_placeholders_names(&nv);
    for (size_t i = 0; i < n; i++) {
        char above[2048], ph[80];
        comment_above(file, all[i].name, above, sizeof above);
        char own[512];
        snprintf(own, sizeof own, "%s", all[i].placeholders);
        for (char *w = strtok(own, " "); w; w = strtok(NULL, " ")) {
            snprintf(ph, sizeof ph, "{{%s}}", w);
            if (!strstr(above, ph))
                fail_msg("templates/phrases.tmpl: the comment above '%s' does not list %s",
                         all[i].name, ph);
            /* A scoped phrase's own names do not hide report.tmpl's. */
            for (size_t k = 0; all[i].scoped && k < nv; k++)
                if (strcmp(vnames[k], w) == 0)
                    fail_msg("phrase '%s': '%s' is also a placeholder of report.tmpl", all[i].name,
                             w);
        }
        if (all[i].scoped && !strstr(above, "report.tmpl"))
            fail_msg("templates/phrases.tmpl: the comment above '%s' does not say it may use "
                     "report.tmpl's placeholders",
                     all[i].name);
    }
    free(file);
}

/* Every line of the comment header of path (the '%' lines), joined. */
static char *comment_header(const char *path)
{
    size_t len;
    char *file = test_read_file(path, &len);
    assert_non_null(file);
    char *p = file;
    while (*p == '%') {
        char *nl = strchr(p, '\n');
        if (!nl)
            break;
        p = nl + 1;
    }
    *p = '\0';
    return file;
}

static void test_templates_list_placeholders(void **state)
{
    (void)state;
    size_t n;
    const char *const *all = report_placeholders_names(&n);
    char *report = comment_header("templates/report.tmpl");
    char *summary = comment_header("templates/summary.tmpl");
    for (size_t i = 0; i < n; i++) {
        char ph[80];
        snprintf(ph, sizeof ph, "{{%s}}", all[i]);
        if (!strstr(report, ph))
            fail_msg("the header of templates/report.tmpl does not list %s", ph);
        if (i < REPORT_PH_DOC_END && !strstr(summary, ph))
            fail_msg("the header of templates/summary.tmpl does not list %s", ph);
    }
    free(report);
    free(summary);
}

/* ---- Every phrase used, every placeholder filled ------------------------------------------- */

/*
 * Writes the scenario and summary templates of this test: every placeholder, chart and table, and
 * every phrase i redefined as "[i]" (short, so that no table cell cuts it) followed by each of
 * its own placeholders.
 */
static void write_templates(const char *sc_path, const char *sum_path)
{
    size_t n, nv;
    const struct template_phrase *all = report_phrases_defs(&n);
    const char *const *vnames = report_placeholders_names(&nv);
    FILE *f = fopen(sc_path, "w");
    assert_non_null(f);
    fputs("# {{name}}\n\n", f);
    for (size_t i = 0; i < nv; i++)
        fprintf(f, "{{%s}}\n", vnames[i]);
    fputs("\n@table config\n@table verdict\n@table terms\n@table ladder\n@table microbatch\n"
          "@chart fit\n@chart phases\n@chart stages\n@chart step\n@chart step_ckpt\n@chart "
          "kcurve\n@chart walk\n"
          "@chart params\n",
          f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "@phrase %s\n[%zu]", all[i].name, i);
        char own[512];
        snprintf(own, sizeof own, "%s", all[i].placeholders);
        for (char *w = strtok(own, " "); w; w = strtok(NULL, " "))
            fprintf(f, " {{%s}}", w);
        for (unsigned c = 1; c < all[i].cells; c++)
            fputs(" |", f);
        fputs("\n\n", f);
    }
    fclose(f);
    f = fopen(sum_path, "w");
    assert_non_null(f);
    fputs("# {{title}}\n\n", f);
    for (size_t i = 0; i < REPORT_PH_DOC_END; i++)
        fprintf(f, "{{%s}}\n", vnames[i]);
    fputs("\n@table summary\n", f);
    fclose(f);
}

static void test_every_phrase_used_and_filled(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-phrases-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char sc_path[128], sum_path[128], out[128], text_path[128];
    snprintf(sc_path, sizeof sc_path, "%s/all.tmpl", dir);
    snprintf(sum_path, sizeof sum_path, "%s/summary.tmpl", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(text_path, sizeof text_path, "%s/all.txt", dir);
    write_templates(sc_path, sum_path);
    struct scenario *scs = calloc(64, sizeof *scs);
    assert_non_null(scs);
    size_t n = read_scenarios(scs, 64);
    assert_true(n >= 18);
    size_t lesson = n;
    n += read_csv(step_csv, sizeof step_csv - 1, PEAK_STEP, scs + n, 64 - n);
    n += read_csv(parallel_csv, sizeof parallel_csv - 1, PEAK_STEP, scs + n, 64 - n);
    n += read_csv(fp8_csv, sizeof fp8_csv - 1, PEAK_STEP, scs + n, 64 - n);
    n += read_csv(tuning_csv, sizeof tuning_csv - 1, PEAK_STEP, scs + n, 64 - n);
    n += read_csv(ladder_csv, sizeof ladder_csv - 1, PEAK_LESSON, scs + n, 64 - n);
    n += read_csv(schedules_csv, sizeof schedules_csv - 1, PEAK_STEP, scs + n, 64 - n);
    assert_int_equal(n, lesson + 30);
    scs[2].sliding_window = 4096; /* as a config.json with sliding-window attention gives */

    struct report_options opt;
    report_options_init(&opt);
    opt.out_dir = out;
    opt.scenario_template = sc_path;
    opt.summary_template = sum_path;
    struct diag d;
    diag_init(&d, NULL, NULL);
    /* Every scenario, split, in GiB, from no named input; then one scenario in GB. A placeholder
     * that C does not fill fails the report ("a bug in memfit"). */
    opt.split = true;
    opt.units = UNITS_GIB;
    if (report_write(scs, n, &opt, &d) != 0)
        fail_msg("%s", d.first);
    /* The words of every file: its text, its title, its bookmarks. */
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "for f in '%s'/*.pdf; do pdftotext -layout \"$f\" - && pdfinfo \"$f\" && "
             "qpdf --json --json-key=outlines \"$f\"; done >'%s' 2>/dev/null",
             out, text_path);
    assert_int_equal(system(cmd), 0);
    opt.split = false;
    opt.units = UNITS_GB;
    opt.inputs = "one.csv";
    opt.file_name = "one.pdf";
    if (report_write(scs, 1, &opt, &d) != 0)
        fail_msg("%s", d.first);
    assert_int_equal(d.count, 0);
    snprintf(cmd, sizeof cmd, "pdftotext -layout '%s/one.pdf' - >>'%s' 2>/dev/null", out,
             text_path);
    assert_int_equal(system(cmd), 0);
    /* Too many pages for one file: the summary says where the scenarios' files are. */
    opt.file_name = "summary.pdf";
    opt.max_pages = 1;
    if (report_write(scs, 2, &opt, &d) != 0)
        fail_msg("%s", d.first);
    opt.max_pages = 0;
    snprintf(cmd, sizeof cmd, "pdftotext -layout '%s/summary.pdf' - >>'%s' 2>/dev/null", out,
             text_path);
    assert_int_equal(system(cmd), 0);
    /* The report of memfit search, whose jobs take every branch of its phrases (search_fixture.h),
     * with the same phrases. */
    struct search_fixture *fx = malloc(sizeof *fx);
    assert_non_null(fx);
    assert_int_equal(search_fixture_init(fx, 400), 0);
    struct report_search_options sopt = {.units = UNITS_GB, .phrase_template = sc_path};
    char search_pdf[160];
    snprintf(search_pdf, sizeof search_pdf, "%s/search.pdf", out);
    if (report_search_write_opts(fx->rj, SEARCH_FIXTURE_JOBS, search_pdf, &sopt, &d) != 0)
        fail_msg("%s", d.first);
    snprintf(cmd, sizeof cmd, "pdftotext -layout '%s' - >>'%s' 2>/dev/null", search_pdf, text_path);
    assert_int_equal(system(cmd), 0);
    /* One job: the singular of the intro. */
    if (report_search_write_opts(fx->rj, 1, search_pdf, &sopt, &d) != 0)
        fail_msg("%s", d.first);
    search_fixture_release(fx);
    free(fx);
    snprintf(cmd, sizeof cmd, "pdftotext -layout '%s' - >>'%s' 2>/dev/null", search_pdf, text_path);
    assert_int_equal(system(cmd), 0);
    size_t len;
    char *text = test_read_file(text_path, &len);
    assert_non_null(text);
    size_t np;
    const struct template_phrase *all = report_phrases_defs(&np);
    int unused = 0;
    for (size_t i = 0; i < np; i++) {
        char marker[96];
        snprintf(marker, sizeof marker, "[%zu]", i);
        if (!strstr(text, marker)) {
            print_message("phrase '%s' is not used by any scenario of the test\n", all[i].name);
            unused++;
        }
    }
    assert_int_equal(unused, 0);
    free(text);
    free(scs);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- A template rewords the verdict box; a bad phrase writes nothing ----------------------- */

static void test_template_rewords_verdict_box(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-phrases-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char tmpl[128], pdf[128];
    snprintf(tmpl, sizeof tmpl, "%s/mine.tmpl", dir);
    snprintf(pdf, sizeof pdf, "%s/report.pdf", dir);
    FILE *f = fopen(tmpl, "w");
    assert_non_null(f);
    fputs("# {{name}}\n\n@table verdict\n\n"
          "@phrase verdict_oom\nOut of memory: {{peak}} needed, {{budget}} at hand\n\n"
          "@phrase verdict_body_oom\n{{fix_sentence}} (That leaves {{headroom}}.)\n",
          f);
    fclose(f);
    struct scenario sc;
    scenario_lesson_example(&sc);
    struct report_options opt;
    report_options_init(&opt);
    opt.out_dir = dir;
    opt.scenario_template = tmpl;
    struct diag d;
    diag_init(&d, NULL, NULL);
    assert_int_equal(report_write(&sc, 1, &opt, &d), 0);
    const char *text = test_sh("pdftotext -layout '%s' - 2>/dev/null", pdf);
    assert_non_null(strstr(text, "Out of memory: 116.1 GB needed, 68.0 GB at hand"));
    assert_non_null(strstr(text, "The cheapest fix is FlashAttention"));
    assert_non_null(strstr(text, "(That leaves 48.1 GB over the budget.)"));
    assert_null(strstr(text, "Does not fit"));
    /* An error in a phrase: nothing written, the previous report kept. */
    f = fopen(tmpl, "w");
    assert_non_null(f);
    fputs("# {{name}}\n@phrase verdict_oom\nOut of memory: {{peek}}\n", f);
    fclose(f);
    assert_int_equal(report_write(&sc, 1, &opt, &d), -1);
    char want[256];
    snprintf(want, sizeof want, "%s:3: unknown placeholder '{{peek}}' (did you mean '{{peak}}'?)",
             tmpl);
    assert_string_equal(d.first, want);
    assert_non_null(strstr(test_sh("pdftotext -layout '%s' - 2>/dev/null", pdf), "Out of memory"));
    /* A catalogue that lacks a phrase. */
    f = fopen(tmpl, "w");
    assert_non_null(f);
    fputs("@phrase title\nT\n", f);
    fclose(f);
    opt.scenario_template = NULL;
    opt.phrases = tmpl;
    diag_init(&d, NULL, NULL);
    assert_int_equal(report_write(&sc, 1, &opt, &d), -1);
    snprintf(want, sizeof want, "%s: phrase 'title_scenario' is missing", tmpl);
    assert_string_equal(d.first, want);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- Mutants of the catalogue never crash ---------------------------------------------- */

static void test_catalogue_mutants(void **state)
{
    (void)state;
    static const char *const tokens[] = {"@phrase ", "@phrase verdict_oom\n",
                                         "\n\n",     "\n",
                                         "|",        "{{",
                                         "}}",       "{{amount}}",
                                         "{{peak}}", "{{peek}}",
                                         "%",        "@table x",
                                         " ",        "\xC3",
                                         "\0",       "\r\n"};
    struct mutator mut = {0x9e3779b97f4a7c15ull, tokens, sizeof tokens / sizeof *tokens};
    size_t len;
    char *seed = test_read_file("templates/phrases.tmpl", &len);
    assert_non_null(seed);
    char *buf = malloc(len + 4096);
    struct report_values *vals = calloc(1, sizeof *vals);
    assert_non_null(buf);
    assert_non_null(vals);
    struct report_phrases ph;
    report_phrases_init(&ph);
    int rejected = 0;
    for (int i = 0; i < 600; i++) {
        size_t n = mutator_derive(&mut, seed, len, buf, len + 4096, 6);
        struct diag d;
        diag_init(&d, NULL, NULL);
        if (report_phrases_parse(&ph, "m.tmpl", buf, n, &d) != 0) {
            rejected++;
            continue;
        }
        char out[REPORT_VALUE_MAX], cells[8][REPORT_CELL_MAX];
        for (size_t k = 0; k < REPORT_PHRASE_COUNT; k++)
            report_say(out, sizeof out, &ph, vals, (enum report_phrase)k, "amount", "1 GB", NULL);
        report_cells(&ph, vals, REPORT_PHRASE_TERMS_ROWS, cells, 8);
    }
    report_phrases_release(&ph);
    assert_true(rejected > 100 && rejected < 550); /* both paths are taken */
    free(vals);
    free(buf);
    free(seed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_phrase_blocks),
        cmocka_unit_test(test_phrase_errors),
        cmocka_unit_test(test_shipped_catalogue),
        cmocka_unit_test(test_catalogue_errors),
        cmocka_unit_test(test_say_and_override),
        cmocka_unit_test(test_catalogue_documents_placeholders),
        cmocka_unit_test(test_templates_list_placeholders),
        cmocka_unit_test(test_every_phrase_used_and_filled),
        cmocka_unit_test(test_template_rewords_verdict_box),
        cmocka_unit_test(test_catalogue_mutants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
