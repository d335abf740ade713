/*
 * Tests of report_write: the document through poppler and qpdf (valid PDF, DejaVu embedded, text
 * extractable without a warning, title, A4 by default, one bookmark per scenario), byte-identical
 * runs, SOURCE_DATE_EPOCH, the split files' names, and that a template error or an unwritable
 * folder writes nothing and leaves the previous file untouched. What the pages say and how they
 * look is tests/cli/golden.sh's; --paper, --split and the exit statuses tests/cli/report.sh's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/report.h"
#include "testutil.h"

struct fx {
    char dir[64];
    struct scenario sc[4];
    size_t n;
    struct report_options opt;
    struct diag d;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/memfit-report-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    /* The worked example (doc/model.md section 9), its flash fix, a data-parallel case, a name
     * that is not a file name. */
    scenario_lesson_example(&f->sc[0]);
    f->sc[1] = f->sc[0];
    snprintf(f->sc[1].name, sizeof f->sc[1].name, "lesson-1.3b-flash");
    f->sc[1].attention = ATTENTION_FLASH;
    f->sc[2] = f->sc[0];
    snprintf(f->sc[2].name, sizeof f->sc[2].name, "../8x40GB dp=8 Ψ");
    f->sc[2].dp = 8;
    f->sc[2].global_batch = 64;
    f->sc[2].gpu_mem_bytes = 40000000000ull;
    f->sc[3] = f->sc[0];
    snprintf(f->sc[3].name, sizeof f->sc[3].name, "report");
    f->n = 4;
    report_options_init(&f->opt);
    f->opt.out_dir = f->dir;
    f->opt.scenario_template = "templates/report.tmpl";
    f->opt.summary_template = "templates/summary.tmpl";
    f->opt.inputs = "tests";
    diag_init(&f->d, NULL, NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    if (system(cmd) != 0)
        return -1;
    free(f);
    return 0;
}

static void test_document_checks(void **state)
{
    struct fx *f = *state;
    assert_int_equal(report_write(f->sc + 1, 2, &f->opt, &f->d), 0); /* flash, and a name in Ψ */
    assert_int_equal(f->d.count, 0);
    char pdf[128];
    snprintf(pdf, sizeof pdf, "%s/report.pdf", f->dir);
    assert_string_equal(test_sh("qpdf --check '%s' >/dev/null 2>&1 && echo ok", pdf), "ok\n");
    /* Both faces of DejaVu Sans embedded (emb = yes). */
    assert_string_equal(
        test_sh("pdffonts '%s' 2>/dev/null | grep -c 'DejaVuSans.*CID TrueType.*yes'", pdf), "2\n");
    /* No complaint from poppler about the fonts' ToUnicode maps (pdffix); the words themselves
     * are the golden text's (tests/cli/golden.sh). */
    assert_string_equal(test_sh("pdftotext '%s' /dev/null 2>&1", pdf), "");
    /* Title, A4, no date. */
    const char *info = test_sh("pdfinfo '%s' 2>/dev/null", pdf);
    assert_non_null(strstr(info, "Title:           GPU memory capacity report"));
    assert_non_null(strstr(info, "595.276 x 841.89 pts (A4)"));
    assert_null(strstr(info, "CreationDate"));
    /* One bookmark per scenario plus the summary, a name outside ASCII kept. */
    const char *outlines = test_sh("qpdf --json --json-key=outlines '%s'", pdf);
    size_t titles = 0;
    for (const char *p = outlines; (p = strstr(p, "\"title\"")) != NULL; p++)
        titles++;
    assert_int_equal(titles, 3);
    assert_non_null(strstr(outlines, "\"title\": \"../8x40GB dp=8 Ψ\""));
}

static void test_byte_identical(void **state)
{
    struct fx *f = *state;
    char pdf[128];
    snprintf(pdf, sizeof pdf, "%s/report.pdf", f->dir);
    assert_int_equal(report_write(f->sc, 2, &f->opt, &f->d), 0);
    size_t n1, n2;
    char *a = test_read_file(pdf, &n1);
    assert_int_equal(report_write(f->sc, 2, &f->opt, &f->d), 0);
    char *b = test_read_file(pdf, &n2);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(n1, n2);
    assert_memory_equal(a, b, n1);
    free(a);
    free(b);
}

static void test_source_date_epoch(void **state)
{
    struct fx *f = *state;
    char pdf[128];
    snprintf(pdf, sizeof pdf, "%s/report.pdf", f->dir);
    f->opt.source_date_epoch = "1700000000"; /* 2023-11-14 22:13:20 UTC */
    assert_int_equal(report_write(f->sc, 1, &f->opt, &f->d), 0);
    size_t n1, n2;
    char *a = test_read_file(pdf, &n1);
    assert_non_null(
        strstr(test_sh("pdfinfo -isodates '%s' 2>/dev/null", pdf), "2023-11-14T22:13:20"));
    assert_int_equal(report_write(f->sc, 1, &f->opt, &f->d), 0);
    char *b = test_read_file(pdf, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(a, b, n1);
    free(a);
    free(b);
    /* An invalid date writes nothing (its message is test_out.c's). */
    remove(pdf);
    f->opt.source_date_epoch = "yesterday";
    assert_int_equal(report_write(f->sc, 1, &f->opt, &f->d), -1);
    assert_int_equal(f->d.count, 1);
    assert_string_equal(test_sh("ls -A '%s'", f->dir), "");
}

static void test_split_names(void **state)
{
    struct fx *f = *state;
    f->opt.split = true;
    /* Two scenarios whose names sanitise alike, and one named like the combined report. */
    snprintf(f->sc[1].name, sizeof f->sc[1].name, "lesson 1.3b");
    snprintf(f->sc[0].name, sizeof f->sc[0].name, "lesson/1.3b");
    assert_int_equal(report_write(f->sc, f->n, &f->opt, &f->d), 0);
    const char *ls = test_sh("ls -A '%s'", f->dir);
    assert_string_equal(ls, "_._8x40GB_dp_8_.pdf\nlesson_1.3b-2.pdf\nlesson_1.3b.pdf\n"
                            "report-2.pdf\nreport.pdf\n");
    /* Nothing outside the folder. */
    assert_int_equal(access("/tmp/8x40GB dp=8 Ψ.pdf", F_OK), -1);
    /* Each split file is its scenario's. */
    assert_non_null(
        strstr(test_sh("pdftotext '%s/lesson_1.3b-2.pdf' - 2>/dev/null", f->dir), "lesson 1.3b"));
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void test_template_error_writes_nothing(void **state)
{
    struct fx *f = *state;
    char tmpl[128], pdf[128];
    snprintf(tmpl, sizeof tmpl, "%s/bad.tmpl", f->dir);
    snprintf(pdf, sizeof pdf, "%s/report.pdf", f->dir);
    write_file(pdf, "previous report");
    write_file(tmpl, "# {{name}}\n\nPeak {{peek}}.\n@chart fitt\n@pagebreak\n");
    f->opt.scenario_template = tmpl;
    f->opt.split = true;
    assert_int_equal(report_write(f->sc, 2, &f->opt, &f->d), -1);
    char want[256];
    snprintf(want, sizeof want, "%s:3: unknown placeholder '{{peek}}' (did you mean '{{peak}}'?)",
             tmpl);
    assert_string_equal(f->d.first, want);
    snprintf(want, sizeof want, "%s:4: unknown chart 'fitt' (did you mean 'fit'?)", tmpl);
    assert_string_equal(f->d.last, want);
    size_t n;
    char *old = test_read_file(pdf, &n);
    assert_string_equal(old, "previous report");
    free(old);
    assert_string_equal(test_sh("ls -A '%s'", f->dir), "bad.tmpl\nreport.pdf\n");
    /* The summary template is checked against its own, smaller, set of names. */
    write_file(tmpl, "# {{title}}\n@table summary\n{{peak}}\n@chart fit\n");
    f->opt.scenario_template = "templates/report.tmpl";
    f->opt.summary_template = tmpl;
    diag_init(&f->d, NULL, NULL);
    assert_int_equal(report_write(f->sc, 2, &f->opt, &f->d), -1);
    assert_int_equal(f->d.count, 2);
    /* (then the closest of the summary's names: the start of the message is checked) */
    snprintf(want, sizeof want, "%s:3: unknown placeholder '{{peak}}' (", tmpl);
    assert_memory_equal(f->d.first, want, strlen(want));
    assert_non_null(strstr(f->d.first, "{{peak_definition}}"));
}

static void test_unwritable_folder(void **state)
{
    struct fx *f = *state;
    f->opt.out_dir = "/dev/null";
    assert_int_equal(report_write(f->sc, 1, &f->opt, &f->d), -1);
    assert_string_equal(f->d.first, "/dev/null: not a folder");
    f->opt.out_dir = "/proc";
    assert_int_equal(report_write(f->sc, 1, &f->opt, &f->d), -1);
    assert_int_equal(access("/proc/report.pdf", F_OK), -1);
}

static void test_no_scenario(void **state)
{
    struct fx *f = *state;
    assert_int_equal(report_write(f->sc, 0, &f->opt, &f->d), -1);
    assert_string_equal(f->d.first, "no scenario to report");
    assert_string_equal(test_sh("ls -A '%s'", f->dir), "");
}

/* The summary wraps a long name onto more lines instead of cutting it, and gives each scenario's
 * GPUs (dp x tp x pp): read back with pdftotext. */
static void test_summary_wraps_names_and_counts_gpus(void **state)
{
    struct fx *f = *state;
    static const char long_name[] =
        "lesson-model-on-eight-nodes-with-flash-attention-and-zero-stage2"; /* 64 characters */
    assert_int_equal(strlen(long_name), 64);
    struct scenario sc[2] = {f->sc[0], f->sc[1]};
    snprintf(sc[0].name, sizeof sc[0].name, "%s", long_name);
    snprintf(sc[1].name, sizeof sc[1].name, "dp8-tp2-pp2");
    sc[1].dp = 8;
    sc[1].tp = 2;
    sc[1].pp = 2;
    sc[1].global_batch = 128;
    assert_int_equal(report_write(sc, 2, &f->opt, &f->d), 0);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "pdftotext -layout -f 1 -l 1 '%s/report.pdf' - | tr -s ' '", f->dir);
    const char *page = test_sh("%s", cmd);
    assert_non_null(strstr(page, "scenario GPUs verdict peak budget cheapest fix"));
    assert_non_null(strstr(page, " dp8-tp2-pp2 32 fits "));
    assert_null(strstr(page, "…")); /* nothing cut */
    /* Every part of the long name is there, broken after a hyphen, on more than one line. */
    char parts[sizeof long_name];
    memcpy(parts, long_name, sizeof long_name);
    size_t found = 0;
    for (char *tok = strtok(parts, "-"); tok; tok = strtok(NULL, "-"))
        found += strstr(page, tok) != NULL;
    assert_int_equal(found, 11);
    assert_null(strstr(page, long_name));
    assert_non_null(strstr(page, " lesson-model-on-"));
}

static void test_placeholder_names(void **state)
{
    (void)state;
    size_t n;
    const char *const *names = report_placeholder_names(&n);
    assert_true(n > 40);
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        assert_true(names[i][0] != '\0');
        found += strcmp(names[i], "peak") == 0 || strcmp(names[i], "validation") == 0;
    }
    assert_int_equal(found, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_document_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_byte_identical, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_date_epoch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_split_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_template_error_writes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwritable_folder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_scenario, setup, teardown),
        cmocka_unit_test_setup_teardown(test_summary_wraps_names_and_counts_gpus, setup, teardown),
        cmocka_unit_test(test_placeholder_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
