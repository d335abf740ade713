/*
 * Tests of report_write's robustness: a report costs the same for 24 layers and for a million
 * (its charts keep a few hundred points: the PDF of a million layers was 60 MB), what it keeps
 * does not grow with the scenarios (a struct report_sc each was 200 KB: 2.35 GB for 5,000), a
 * report of more pages than one file is given is planned as a summary and one file per
 * scenario before anything is drawn, and a scenario that cannot be computed is left out with
 * its message while the others are written.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/report.h"
#include "testutil.h"

/* A small layer (the states stay far from 64 bits) repeated `layers` times. */
static void deep(struct scenario *sc, const char *name, uint64_t layers)
{
    scenario_lesson_example(sc);
    snprintf(sc->name, sizeof sc->name, "%s", name);
    sc->layers = layers;
    sc->hidden = 64;
    sc->heads = sc->kv_heads = 4;
    sc->ffn = 256;
    sc->vocab = 1000;
    sc->seq = 128;
    sc->micro_batch = 1;
    sc->global_batch = 1;
    sc->gpu_mem_bytes = 80000000000ull;
}

/* The size of the report of sc alone, written into dir as name. */
static long report_size(const char *dir, const char *name, const struct scenario *sc)
{
    struct report_options opt;
    report_options_init(&opt);
    opt.out_dir = dir;
    opt.file_name = name;
    struct diag d;
    diag_init(&d, NULL, NULL);
    if (report_write(sc, 1, &opt, &d) != 0)
        fail_msg("%s", d.first);
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    unlink(path);
    return (long)st.st_size;
}

/* The process's peak resident memory so far, in KB. */
static long max_rss_kb(void)
{
    struct rusage ru;
    assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
    return ru.ru_maxrss;
}

static void a_million_layers_cost_what_24_do(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-scale-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct scenario sc;
    deep(&sc, "deep-24", 24);
    long small = report_size(dir, "small.pdf", &sc);
    long rss_small = max_rss_kb();
    deep(&sc, "deep-1000000", 1000000);
    long big = report_size(dir, "big.pdf", &sc);
    /* The memory is the same too: it was 872 MB (one event a layer, one value a k). The bound
     * is loose enough for ASan's quarantine and valgrind's own memory. */
    assert_true(max_rss_kb() - rss_small < 200 * 1024);
    sc.recompute = RECOMPUTE_EVERY_K; /* the sawtooth of 1000 segments */
    sc.ckpt_every = 1000;
    long sawtooth = report_size(dir, "sawtooth.pdf", &sc);
    rmdir(dir);
    /* The same pages and charts, a few more digits in the numbers. */
    assert_true(big < small + small / 4);
    assert_true(sawtooth < small + small / 4);
}

/* A scenario whose byte counts overflow (config rejects such rows; this is report_write's own
 * net) is left out with a message; the other is written, and report_write says 1. */
static void a_scenario_that_cannot_be_computed_is_left_out(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-scale-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct scenario sc[2];
    deep(&sc[0], "fine", 24);
    deep(&sc[1], "big", 24); /* selective at s = 6e8: full checkpointing keeps 5as^2b */
    sc[1].hidden = sc[1].heads = sc[1].kv_heads = 16;
    sc[1].ffn = 64;
    sc[1].vocab = 32000;
    sc[1].seq = 600000000;
    sc[1].micro_batch = 2;
    sc[1].recompute = RECOMPUTE_SELECTIVE;
    struct report_options opt;
    report_options_init(&opt);
    opt.out_dir = dir;
    struct diag d;
    diag_init(&d, NULL, NULL);
    assert_int_equal(report_write(sc, 2, &opt, &d), 1);
    assert_string_equal(d.first,
                        "scenario 'big': a byte count overflows 64 bits; left out of the report");
    char path[256];
    snprintf(path, sizeof path, "%s/report.pdf", dir);
    assert_int_equal(access(path, R_OK), 0);
    unlink(path);
    /* Nothing left: -1, nothing written. */
    diag_init(&d, NULL, NULL);
    assert_int_equal(report_write(&sc[1], 1, &opt, &d), -1);
    assert_int_equal(access(path, F_OK), -1);
    rmdir(dir);
}

/* What the listener heard. */
struct heard {
    size_t separate_pages, separate_max, files, summary_pages, split_files;
};

static void heard_file(void *ctx, const char *path, size_t pages, size_t scenarios, bool split)
{
    struct heard *h = ctx;
    (void)path;
    (void)scenarios;
    h->files++;
    if (split)
        h->split_files++;
    else
        h->summary_pages = pages;
}

static void heard_separate(void *ctx, size_t pages, size_t max_pages)
{
    struct heard *h = ctx;
    h->separate_pages = pages;
    h->separate_max = max_pages;
}

/* n copies of the lesson's example, named s0, s1, ... */
static struct scenario *many(size_t n)
{
    struct scenario *scs = calloc(n, sizeof *scs);
    assert_non_null(scs);
    for (size_t i = 0; i < n; i++) {
        scenario_lesson_example(&scs[i]);
        snprintf(scs[i].name, sizeof scs[i].name, "s%zu", i);
    }
    return scs;
}

/* A report of more pages than one file is given (opt.max_pages) is its summary, saying so, and one
 * file per scenario, told before anything is drawn, without --split too; the pages counted
 * before drawing are those of the combined file (the same scenario thrice: the summary and the
 * glossary, 2, + 3 x 5). */
static void too_many_pages_make_a_summary_and_a_file_per_scenario(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-scale-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct scenario *scs = many(3);
    struct heard h = {0};
    struct report_listener l = {NULL, heard_file, heard_separate, &h};
    struct report_options opt;
    report_options_init(&opt);
    opt.out_dir = dir;
    opt.listener = &l;
    opt.max_pages = 17;
    struct diag d;
    diag_init(&d, NULL, NULL);
    assert_int_equal(report_write(scs, 3, &opt, &d), 0);
    assert_int_equal(h.separate_pages, 0); /* 17 is not over 17: one file */
    assert_int_equal(h.files, 1);
    assert_int_equal(h.summary_pages, 17);
    assert_int_equal(test_count_entries(dir), 1);

    memset(&h, 0, sizeof h);
    opt.max_pages = 16;
    assert_int_equal(report_write(scs, 3, &opt, &d), 0);
    assert_int_equal(d.count, 0);
    assert_int_equal(h.separate_pages, 17);
    assert_int_equal(h.separate_max, 16);
    assert_int_equal(h.summary_pages, 2);
    assert_int_equal(h.split_files, 3);
    assert_int_equal(test_count_entries(dir), 4); /* report.pdf, s0.pdf, s1.pdf, s2.pdf */
    const char *text = test_sh("pdftotext '%s/report.pdf' - 2>/dev/null | tr '\\n' ' '", dir);
    assert_non_null(
        strstr(text, "too large for one file (about 17 pages; one file has at most 16)"));
    assert_string_equal(test_sh("pdfinfo '%s/s2.pdf' 2>/dev/null | grep -c '^Pages: *5$'", dir),
                        "1\n");
    /* More than libharu's most counts as it. */
    memset(&h, 0, sizeof h);
    opt.max_pages = 1000000;
    assert_int_equal(report_write(scs, 3, &opt, &d), 0);
    assert_int_equal(h.separate_pages, 0);
    free(scs);
    test_sh("rm -rf '%s'", dir);
}

/* What a report keeps per scenario: 450 scenarios of a one-page section (a template of a line)
 * take about what 50 do (it was 200 KB each: 80 MB more). The margin holds libharu's 400 more
 * pages. Skipped under AddressSanitizer and valgrind, whose allocators keep freed memory aside
 * (ASan's quarantine alone is 256 MB): the resident size then measures the run's allocations,
 * not what it keeps. */
static void memory_does_not_grow_with_the_scenarios(void **state)
{
    (void)state;
#ifdef __SANITIZE_ADDRESS__
    skip();
#endif
    const char *valgrind = getenv("VALGRIND");
    if (valgrind && *valgrind)
        skip();
    char dir[] = "/tmp/memfit-scale-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char tmpl[64];
    snprintf(tmpl, sizeof tmpl, "%s/one.tmpl", dir);
    FILE *f = fopen(tmpl, "w");
    assert_non_null(f);
    fputs("# {{name}}\n\n{{verdict}}: {{peak}} of {{budget}}.\n", f);
    fclose(f);
    struct scenario *scs = many(450);
    struct report_options opt;
    report_options_init(&opt);
    opt.out_dir = dir;
    opt.scenario_template = tmpl;
    struct diag d;
    diag_init(&d, NULL, NULL);
    assert_int_equal(report_write(scs, 50, &opt, &d), 0);
    long rss50 = max_rss_kb();
    assert_int_equal(report_write(scs, 450, &opt, &d), 0);
    long grown = max_rss_kb() - rss50;
    free(scs);
    test_sh("rm -rf '%s'", dir);
    if (grown >= 24 * 1024)
        fail_msg("450 scenarios took %ld KB more than 50", grown);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_million_layers_cost_what_24_do),
        cmocka_unit_test(too_many_pages_make_a_summary_and_a_file_per_scenario),
        cmocka_unit_test(memory_does_not_grow_with_the_scenarios),
        cmocka_unit_test(a_scenario_that_cannot_be_computed_is_left_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
