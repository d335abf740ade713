/*
 * search_bench: the time of memfit search on large jobs, against the brute force measured in
 * the same run (doc/model.md section 11.5).
 *
 * usage: search_bench JOBS.csv RUNS NAME...
 *
 * Each named job of JOBS.csv (a memfit search job file, configs/jobs.csv) is searched RUNS times
 * by search_run, top 10, on one core; the median is compared with the brute force of
 * tests/support/search_brute.h - every layout, b included, evaluated one by one through the same
 * model_peak_cached and cost_step - run once. The brute force runs whole when the job has at
 * most BRUTE_FULL_MAX layouts, and then must give the same counts and top list; above that it
 * evaluates every k-th layout and the time is scaled up by k (the output says so).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "input/config.h"
#include "plan/search.h"
#include "search_brute.h"

#define TOP_N 10
#define BRUTE_FULL_MAX 50000000ull

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void print_message(void *ctx, const char *msg, const char *file, unsigned long line)
{
    (void)ctx;
    if (file)
        fprintf(stderr, "%s:%lu: %s\n", file, line, msg);
    else
        fprintf(stderr, "%s\n", msg);
}

/* The job named `name` of the file into *out; false when it is not there (reported). */
static bool read_job(const char *path, const char *name, struct scenario *out)
{
    struct diag d;
    diag_init(&d, print_message, NULL);
    struct config_presets *presets =
        config_presets_load("configs/models.csv", "configs/gpus.csv", &d);
    FILE *f = fopen(path, "r");
    bool found = false;
    if (presets && f) {
        struct nameset names;
        nameset_init(&names);
        struct config_options opt = {0.15, PEAK_STEP, IMPL_MEMFIT};
        struct config_reader *r = config_reader_new(f, path, presets, &opt, &names, &d);
        if (r) {
            config_reader_read_jobs(r);
            unsigned long line;
            int rc;
            while (!found && (rc = config_reader_next(r, out, &line)) != 0 && rc != -2)
                found = rc == 1 && strcmp(out->name, name) == 0;
        }
        config_reader_free(r);
        nameset_release(&names);
    }
    if (f)
        fclose(f);
    config_presets_free(presets);
    if (!found)
        fprintf(stderr, "search_bench: no job '%s' in %s\n", name, path);
    return found;
}

static bool same_top(const struct search_layout *a, const struct search_layout *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].step_time_s != b[i].step_time_s || a[i].peak_bytes != b[i].peak_bytes ||
            a[i].sc.tp != b[i].sc.tp || a[i].sc.pp != b[i].sc.pp || a[i].sc.vpp != b[i].sc.vpp ||
            a[i].sc.cp != b[i].sc.cp || a[i].sc.ep != b[i].sc.ep || a[i].sc.etp != b[i].sc.etp ||
            a[i].sc.zero != b[i].sc.zero || a[i].sc.offload != b[i].sc.offload ||
            a[i].sc.recompute != b[i].sc.recompute || a[i].sc.ckpt_every != b[i].sc.ckpt_every ||
            a[i].sc.attention != b[i].sc.attention || a[i].sc.micro_batch != b[i].sc.micro_batch)
            return false;
    return true;
}

static int bench_job(const struct scenario *job, int runs)
{
    struct model_cache *memo = model_cache_new();
    struct search_layout top[TOP_N], want[TOP_N];
    struct search_result res = {0};
    double *t = malloc((size_t)runs * sizeof *t);
    if (!t)
        return 1;
    for (int i = 0; i < runs; i++) {
        double t0 = now_s();
        enum search_status st = search_run(job, TOP_N, top, NULL, NULL, memo, &res);
        t[i] = now_s() - t0;
        if (st != SEARCH_OK) {
            fprintf(stderr, "search_bench: job '%s': status %d\n", job->name, (int)st);
            free(t);
            model_cache_free(memo);
            return 1;
        }
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    double med = t[runs / 2];
    free(t);

    struct brute br;
    uint64_t stride = res.layouts_tried / BRUTE_FULL_MAX + 1;
    double t0 = now_s();
    brute_sample(job, memo, TOP_N, want, stride, &br);
    double brute_s = (now_s() - t0) * (double)stride;
    model_cache_free(memo);

    printf("%s: %llu layouts tried, %llu fit, %llu evaluated one by one (%.1f%%)\n", job->name,
           (unsigned long long)res.layouts_tried, (unsigned long long)res.layouts_fit,
           (unsigned long long)res.layouts_evaluated,
           100.0 * (double)res.layouts_evaluated / (double)res.layouts_tried);
    if (res.n_top > 0)
        printf("  best: %.3f s a step (tp %llu pp %llu vpp %llu cp %llu dp %llu ep %llu, b %llu)\n",
               top[0].step_time_s, (unsigned long long)top[0].sc.tp,
               (unsigned long long)top[0].sc.pp, (unsigned long long)top[0].sc.vpp,
               (unsigned long long)top[0].sc.cp, (unsigned long long)top[0].sc.dp,
               (unsigned long long)top[0].sc.ep, (unsigned long long)top[0].sc.micro_batch);
    printf("  search_run: median %.3f s over %d runs (one core)\n", med, runs);
    if (stride == 1) {
        bool agree = br.tried == res.layouts_tried && br.fit == res.layouts_fit &&
                     br.n_top == res.n_top && same_top(top, want, res.n_top);
        printf("  brute force (every layout one by one, same code): %.3f s; ratio %.1fx; "
               "counts and top %d %s\n",
               brute_s, brute_s / med, TOP_N, agree ? "agree" : "DIFFER");
        return agree ? 0 : 1;
    }
    printf(
        "  brute force estimated from every %llu-th layout (%llu of them): %.3f s; ratio %.1fx\n",
        (unsigned long long)stride, (unsigned long long)br.evaluated, brute_s, brute_s / med);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: search_bench JOBS.csv RUNS NAME...\n");
        return 2;
    }
    char *end;
    long runs = strtol(argv[2], &end, 10);
    if (*end || runs < 1 || runs > 1000) {
        fprintf(stderr, "search_bench: RUNS: '%s' is not 1 to 1000\n", argv[2]);
        return 2;
    }
    int failed = 0;
    for (int i = 3; i < argc; i++) {
        struct scenario job;
        if (!read_job(argv[1], argv[i], &job)) {
            failed = 1;
            continue;
        }
        failed |= bench_job(&job, (int)runs);
    }
    return failed;
}
