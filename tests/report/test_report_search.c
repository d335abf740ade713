/*
 * Tests of the report of memfit search (report_search.h) on made-up results (search_fixture.h):
 * a valid PDF (qpdf --check) whose text (pdftotext) says what each job's section must say, its
 * bookmarks, the same bytes for the same input, a size that does not grow with the number of
 * layouts, GiB, and the failures that write nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/numfmt.h"
#include "report/report_search.h"
#include "search_fixture.h"
#include "testutil.h"

/* A fresh folder for one test's files; removed by rm_dir. */
static void make_dir(char *dir)
{
    assert_non_null(mkdtemp(dir));
}

static void rm_dir(const char *dir)
{
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* Writes the fixture of n layouts to dir/name in units u; returns the PDF's size in bytes. */
static long write_fixture(const char *dir, const char *name, size_t n, enum units u)
{
    struct search_fixture *f = malloc(sizeof *f);
    assert_non_null(f);
    assert_int_equal(search_fixture_init(f, n), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct diag d;
    diag_init(&d, NULL, NULL);
    if (report_search_write(f->rj, SEARCH_FIXTURE_JOBS, path, u, &d) != 0)
        fail_msg("%s", d.first);
    assert_int_equal(d.count, 0);
    search_fixture_release(f);
    free(f);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (long)st.st_size;
}

/* n with thousands separators, in one of four buffers used in turn. */
static const char *test_count(uint64_t n)
{
    static char bufs[4][32];
    static int next;
    char *b = bufs[next++ % 4];
    numfmt_count(b, sizeof bufs[0], n);
    return b;
}

/* Fails unless text has every string of want[0..n). */
static void expect_all(const char *text, const char *const *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strstr(text, want[i]))
            fail_msg("the search report lacks '%s'", want[i]);
}

static void test_pages_say_what_each_job_is(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-search-XXXXXX";
    make_dir(dir);
    write_fixture(dir, "search.pdf", 20000, UNITS_GB);
    assert_non_null(strstr(test_sh("qpdf --check '%s/search.pdf' 2>&1", dir), "No syntax"));
    assert_string_equal(test_sh("pdfinfo '%s/search.pdf' | sed -n 's/^Title: *//p'", dir),
                        "Layout search\n");
    /* The first page, then each job on pages of its own: the dense job's section takes two. */
    assert_string_equal(test_sh("pdfinfo '%s/search.pdf' | sed -n 's/^Pages: *//p'", dir), "6\n");
    const char *outline = test_sh("qpdf --json --json-key=outlines '%s/search.pdf'", dir);
    static const char *const marks[] = {"\"Summary\"", "\"dense-fits\"", "\"moe-oom\"",
                                        "\"no-gpus\""};
    expect_all(outline, marks, 4);
    const char *text = test_sh("pdftotext '%s/search.pdf' - 2>/dev/null | tr -s ' \\n' '  '", dir);
    static const char *const want[] = {
        /* The first page: the running head (the search's own title), the jobs and the note on
         * the cost model. */
        "memfit Layout search",
        "Layout search",
        "For 3 jobs, the fastest layouts",
        "1 GB = 10⁹ bytes",
        "dense-fits 64 123,456,789 4,567,890 tp=8 pp=2 vpp=1 cp=1 ep=1 dp=4 zero=0 b=1",
        "moe-oom 16 9,876 0 none fits",
        "no-gpus 0 0 0 none fits",
        "Step times are those of the cost model (doc/model.md section 12",
        /* The dense job: configuration, counts, the fastest layouts, the charts. */
        "model gpt-1.3b tokens s = 2,048, global batch 512",
        "L = 24, h = 2048, a = 16 (16 KV), V = 50257",
        "mixed, FP8 tensor; AdamW, fp32 moments; full: every parameter trained",
        "64 × H100-80GB (80 GB each), 8 a node",
        "none: every choice searched",
        "68.0 GB a GPU (80 GB, 15% kept free)",
        "On 64 GPUs, 123,456,789 layouts tried, 4,567,890 fit (20,000 evaluated one by one). The "
        "fastest: tp=8 pp=2 vpp=1 cp=1 ep=1 dp=4 zero=0 b=1, 1.23 s a step, peak 61.2 GB within "
        "the budget of 68.0 GB.",
        "The 4 fastest layouts that fit",
        "Every layout evaluated: peak memory against step time",
        "fastest: 1.23 s, 61.2 GB",
        "GPU memory 80 GB",
        "15% kept free: 68.0 GB",
        "step time (s, log scale)",
        "peak of the most loaded GPU (GB)",
        "Each of the 20,000 layouts evaluated one by one (of the 123,456,789 counted) is a point",
        "The fastest layout that fits for each tp and pp",
        "tp (tensor-parallel GPUs)",
        "pp (pipeline stages)",
        "1.23 s",
        /* The mixture of experts: nothing fits, choices pinned, more values of pp than shown. */
        "L = 40, h = 2048, a = 16, E = 8, top 2",
        "LoRA r = 16 on q, v; bf16 base",
        "16 GPUs of 80 GB, 8 a node",
        "tp=2, zero=3, sp=yes, attention=flash, recompute=full, offload=optimizer",
        "On 16 GPUs, 9,876 layouts tried (2,000 evaluated one by one): none fits the budget of "
        "68.0 GB.",
        "does not fit (9,876; 2,000 drawn)", /* none fits: every layout tried does not */
        "step time (s)",
        "The map shows 16 values of tp and of pp at most: 400 layouts of other values are not in "
        "it.",
        /* No GPU count fits. */
        "no count searched fits (GPU of 80 GB, 8 a node)",
        "No GPU count searched gives a layout that fits.",
    };
    expect_all(text, want, sizeof want / sizeof *want);
    /* The rows of the tables, line by line. */
    text = test_sh("pdftotext -layout '%s/search.pdf' - 2>/dev/null | tr -s ' ' ' '", dir);
    static const char *const rows[] = {
        " 1.23 s 61.2 GB\n", /* the first page's row of dense-fits */
        " # tp pp vpp cp ep dp ZeRO attention recompute offload b peak step time\n",
        " 1 8 2 1 1 1 4 0 flash none – 1 61.2 GB 1.23 s\n",
        " 2 8 2 2 1 1 4 1 flash none optimizer 2 62.2 GB 1.33 s\n",
        " 3 4 2 1 1 1 8 2 flash full checkpoints 3 63.2 GB 1.43 s\n",
        " 4 4 2 1 1 1 8 3 flash selective – 4 64.2 GB 1.53 s\n",
    };
    expect_all(text, rows, sizeof rows / sizeof *rows);
    text = test_sh("pdftotext '%s/search.pdf' - 2>/dev/null | tr -s ' \\n' '  '", dir);
    /* A job without layouts that fit has no table of them and no fits in its legend. */
    assert_null(strstr(text, "The 0 fastest"));
    assert_null(strstr(text, "fits (0)"));
    rm_dir(dir);
}

/* The scatter's text of job 0 of f written to dir/name. */
static const char *scatter_text(const char *dir, const char *name, struct search_fixture *f)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct diag d;
    diag_init(&d, NULL, NULL);
    if (report_search_write(f->rj, 1, path, UNITS_GB, &d) != 0)
        fail_msg("%s", d.first);
    return test_sh("pdftotext '%s' - 2>/dev/null | tr -s ' \\n' '  '", path);
}

/* The scatter's legend counts what the sentence above it counts: the layouts that fit (the same
 * number as "N fit"), those that do not (the rest of those tried), and says how many of each the
 * chart draws (those evaluated one by one, which the scatter bins) when that is fewer; with every
 * layout evaluated, the counts alone. */
static void test_scatter_legend_counts_as_the_text(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-search-XXXXXX";
    make_dir(dir);
    struct search_fixture *f = malloc(sizeof *f);
    assert_non_null(f);
    assert_int_equal(search_fixture_init(f, 20000), 0);
    const struct chart_scatter *s = &f->plots[0].scatter;
    assert_int_equal(s->n[0] + s->n[1], 20000); /* every layout evaluated is binned */
    assert_true(s->n[0] > 0 && s->n[1] > 0);
    char want[160];
    const char *text = scatter_text(dir, "part.pdf", f);
    expect_all(text, (const char *const[]){"123,456,789 layouts tried, 4,567,890 fit"}, 1);
    snprintf(want, sizeof want, "fits (4,567,890; %s drawn)", test_count(s->n[1]));
    expect_all(text, (const char *const[]){want}, 1);
    /* 123,456,789 - 4,567,890 */
    snprintf(want, sizeof want, "does not fit (118,888,899; %s drawn)", test_count(s->n[0]));
    expect_all(text, (const char *const[]){want}, 1);
    /* Every layout evaluated one by one: the counts, nothing said of what is drawn. */
    f->results[0].layouts_tried = 20000;
    f->results[0].layouts_fit = s->n[1];
    text = scatter_text(dir, "whole.pdf", f);
    snprintf(want, sizeof want, "20,000 layouts tried, %s fit", test_count(s->n[1]));
    expect_all(text, (const char *const[]){want}, 1);
    snprintf(want, sizeof want, "fits (%s)", test_count(s->n[1]));
    expect_all(text, (const char *const[]){want}, 1);
    snprintf(want, sizeof want, "does not fit (%s)", test_count(s->n[0]));
    expect_all(text, (const char *const[]){want}, 1);
    assert_null(strstr(text, " drawn)"));
    search_fixture_release(f);
    free(f);
    rm_dir(dir);
}

static void test_same_input_same_bytes(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-search-XXXXXX";
    make_dir(dir);
    write_fixture(dir, "a.pdf", 5000, UNITS_GB);
    write_fixture(dir, "b.pdf", 5000, UNITS_GB);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "cmp -s '%s/a.pdf' '%s/b.pdf'", dir, dir);
    assert_int_equal(system(cmd), 0);
    rm_dir(dir);
}

/* The charts bin the layouts: a hundred times more of them barely changes the file. */
static void test_size_does_not_grow_with_layouts(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-search-XXXXXX";
    make_dir(dir);
    long small = write_fixture(dir, "small.pdf", 3000, UNITS_GB);
    long big = write_fixture(dir, "big.pdf", 300000, UNITS_GB);
    assert_true(big < small + small / 4);
    assert_true(big < 400000);
    rm_dir(dir);
}

static void test_gib(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-search-XXXXXX";
    make_dir(dir);
    write_fixture(dir, "gib.pdf", 2000, UNITS_GIB);
    const char *text = test_sh("pdftotext '%s/gib.pdf' - 2>/dev/null | tr -s ' \\n' '  '", dir);
    /* 68 GB is 63.3 GiB; 80 GB 74.5 GiB. */
    static const char *const want[] = {"1 GiB = 2³⁰", "peak of the most loaded GPU (GiB)",
                                       "63.3 GiB a GPU (74.5 GiB, 15% kept free)",
                                       "GPU memory 74.5 GiB"};
    expect_all(text, want, sizeof want / sizeof *want);
    rm_dir(dir);
}

static void test_failures_write_nothing(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-search-XXXXXX";
    make_dir(dir);
    struct search_fixture *f = malloc(sizeof *f);
    assert_non_null(f);
    assert_int_equal(search_fixture_init(f, 100), 0);
    struct diag d;
    char path[256], want[320];
    /* No job. */
    diag_init(&d, NULL, NULL);
    snprintf(path, sizeof path, "%s/none.pdf", dir);
    assert_int_equal(report_search_write(f->rj, 0, path, UNITS_GB, &d), -1);
    assert_string_equal(d.first, "no job to report");
    /* A folder that cannot be made (under a regular file): nothing made, nothing written. */
    diag_init(&d, NULL, NULL);
    snprintf(path, sizeof path, "%s/plain", dir);
    FILE *plain = fopen(path, "w");
    assert_non_null(plain);
    fclose(plain);
    snprintf(path, sizeof path, "%s/plain/sub/search.pdf", dir);
    assert_int_equal(report_search_write(f->rj, 1, path, UNITS_GB, &d), -1);
    snprintf(want, sizeof want, "%s/plain/sub: cannot create folder", dir);
    assert_non_null(strstr(d.first, want));
    snprintf(path, sizeof path, "%s/plain", dir);
    unlink(path);
    /* A phrase of a template that names an unknown placeholder: nothing written. */
    char tmpl[256];
    snprintf(tmpl, sizeof tmpl, "%s/mine.tmpl", dir);
    FILE *t = fopen(tmpl, "w");
    assert_non_null(t);
    fputs("@phrase search_scatter_fits\nfits: {{count}}\n", t);
    fclose(t);
    snprintf(path, sizeof path, "%s/search.pdf", dir);
    struct report_search_options opt = {.units = UNITS_GB, .phrase_template = tmpl};
    diag_init(&d, NULL, NULL);
    assert_int_equal(report_search_write_opts(f->rj, 1, path, &opt, &d), -1);
    snprintf(want, sizeof want, "%s:2: unknown placeholder '{{count}}' (did you mean '{{n}}'?)",
             tmpl);
    assert_string_equal(d.first, want);
    assert_int_equal(access(path, F_OK), -1);
    /* The same template's phrase with its own placeholder rewords the legend. */
    t = fopen(tmpl, "w");
    assert_non_null(t);
    fputs("@phrase search_scatter_fits\nfitting layouts: {{n}}\n", t);
    fclose(t);
    diag_init(&d, NULL, NULL);
    if (report_search_write_opts(f->rj, 1, path, &opt, &d) != 0)
        fail_msg("%s", d.first);
    assert_non_null(strstr(test_sh("pdftotext '%s' - 2>/dev/null", path), "fitting layouts: "));
    /* A catalogue that lacks the search's phrases. */
    t = fopen(tmpl, "w");
    assert_non_null(t);
    fputs("@phrase title\nT\n", t);
    fclose(t);
    opt = (struct report_search_options){.units = UNITS_GB, .phrases = tmpl};
    diag_init(&d, NULL, NULL);
    assert_int_equal(report_search_write_opts(f->rj, 1, path, &opt, &d), -1);
    snprintf(want, sizeof want, "%s: phrase 'title_scenario' is missing", tmpl);
    assert_string_equal(d.first, want);
    search_fixture_release(f);
    free(f);
    rm_dir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pages_say_what_each_job_is),
        cmocka_unit_test(test_scatter_legend_counts_as_the_text),
        cmocka_unit_test(test_same_input_same_bytes),
        cmocka_unit_test(test_size_does_not_grow_with_layouts),
        cmocka_unit_test(test_gib),
        cmocka_unit_test(test_failures_write_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
