/*
 * Tests of report_write's robustness: a report costs the same for 24 layers and for a million
 * (its charts keep a few hundred points: the PDF of a million layers was 60 MB), and a scenario
 * that cannot be computed is left out with its message while the others are written.
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_million_layers_cost_what_24_do),
        cmocka_unit_test(a_scenario_that_cannot_be_computed_is_left_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
