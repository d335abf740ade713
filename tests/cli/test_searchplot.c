/*
 * Tests of searchplot (memfit search --report's plot of a job's layouts): the memory it holds
 * stops growing at its cap however many layouts a job evaluates, each job keeping a plot of a
 * fixed size; and a job of more layouts than it keeps, searched a second time, is plotted
 * exactly as if they had been kept.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/searchplot.h"
#include "model/model.h"
#include "plan/search.h"
#include "report/report_search.h"
#include "small_gpt_job.h"

/* Layout i of a made-up search: 4 x 4 values of tp and pp, step times over a decade, peaks
 * around a GPU of 80 GB. */
static struct search_point made_up(uint64_t i)
{
    uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull;
    x ^= x >> 29;
    struct search_point p = {.tp = 1ull << (i % 4), .pp = 1ull << ((i / 4) % 4), .cp = 1, .dp = 1};
    p.step_time_s = 1.0 + (double)(x % 10000) / 1000.0;
    p.peak_bytes = 40000000000ull + (x >> 20) % 80000000000ull;
    p.budget_bytes = 68000000000ull;
    p.fits = p.peak_bytes <= p.budget_bytes;
    return p;
}

/* Plots n made-up layouts through sp into plot, as memfit search does (a second pass when they
 * were not all kept); returns the bytes sp held at the end of the first pass. */
static size_t plot_made_up(struct searchplot *sp, struct report_search_plot *plot, uint64_t n)
{
    report_search_plot_init(plot);
    searchplot_begin(sp, plot);
    for (uint64_t i = 0; i < n; i++) {
        struct search_point p = made_up(i);
        searchplot_note(sp, &p);
    }
    size_t held = searchplot_bytes(sp);
    if (!searchplot_end(sp, 80000000000ull))
        for (uint64_t i = 0; i < n; i++) {
            struct search_point p = made_up(i);
            searchplot_bin(sp, &p);
        }
    return held;
}

/* What a job keeps is a plot, whatever its layouts; what the search holds besides stops at
 * SEARCHPLOT_KEEP layouts: a thousand layouts, four million and eight million. */
static void test_memory_does_not_grow_with_layouts(void **state)
{
    (void)state;
    /* 500 jobs' plots well under the 500 MB a report of them may take. */
    assert_true(sizeof(struct report_search_plot) <= 256 * 1024);
    struct report_search_plot *plot = malloc(sizeof *plot);
    assert_non_null(plot);
    struct searchplot sp;
    searchplot_init(&sp, SEARCHPLOT_KEEP);
    size_t cap = SEARCHPLOT_KEEP * sizeof(struct searchplot_point);
    size_t few = plot_made_up(&sp, plot, 1000);
    assert_true(few <= cap);
    assert_int_equal(plot->n_points, 1000);
    size_t many = plot_made_up(&sp, plot, 4000000);
    assert_int_equal(plot->n_points, 4000000);
    assert_true(plot->scatter.marks <= 2 * CHART_SCATTER_ROWS * CHART_SCATTER_COLS);
    assert_int_equal(plot->scatter.n[0] + plot->scatter.n[1], 4000000);
    assert_int_equal(many, cap);
    assert_int_equal(plot_made_up(&sp, plot, 8000000), many);
    assert_int_equal(searchplot_bytes(&sp), cap); /* the buffer is reused, never grown */
    searchplot_release(&sp);
    free(plot);
}

/* A small GPT on 8 H100s of 0.55 GB (tests/plan/test_search.c): layouts that fit and others. */
static void small_job(struct scenario *sc)
{
    small_gpt_job(sc);
    snprintf(sc->name, sizeof sc->name, "gpt");
    snprintf(sc->gpu_preset, sizeof sc->gpu_preset, "H100-80GB");
}

/* Searches job with its layouts plotted through a searchplot keeping at most max_kept, as
 * cmd_search does; *spilled: whether it searched twice. */
static void search_plotted(const struct scenario *job, size_t max_kept,
                           struct report_search_plot *plot, bool *spilled)
{
    struct search_layout top[4];
    struct search_result res;
    struct searchplot sp;
    searchplot_init(&sp, max_kept);
    report_search_plot_init(plot);
    searchplot_begin(&sp, plot);
    assert_int_equal(search_run(job, 4, top, searchplot_note, &sp, NULL, &res), SEARCH_OK);
    *spilled = !searchplot_end(&sp, job->gpu_mem_bytes);
    if (*spilled)
        assert_int_equal(search_run(job, 4, top, searchplot_bin, &sp, NULL, &res), SEARCH_OK);
    searchplot_release(&sp);
}

static void test_second_search_plots_the_same(void **state)
{
    (void)state;
    struct scenario job;
    small_job(&job);
    struct report_search_plot *kept = malloc(sizeof *kept), *again = malloc(sizeof *again);
    assert_non_null(kept);
    assert_non_null(again);
    bool spilled;
    search_plotted(&job, SEARCHPLOT_KEEP, kept, &spilled);
    assert_false(spilled);
    assert_true(kept->n_points > 64);
    assert_true(kept->timed);
    assert_true(kept->scatter.n[0] > 0 && kept->scatter.n[1] > 0); /* both kinds */
    search_plotted(&job, 64, again, &spilled);
    assert_true(spilled);
    assert_int_equal(again->n_points, kept->n_points);
    assert_true(again->min_s == kept->min_s && again->max_s == kept->max_s);
    assert_true(again->max_bytes == kept->max_bytes);
    assert_memory_equal(&again->map, &kept->map, sizeof kept->map);
    const struct chart_scatter *a = &again->scatter, *k = &kept->scatter;
    assert_true(a->x_lo == k->x_lo && a->x_hi == k->x_hi && a->x_log == k->x_log);
    assert_true(a->y_hi == k->y_hi && a->y_top == k->y_top);
    assert_memory_equal(a->cells, k->cells, sizeof k->cells);
    assert_memory_equal(a->n, k->n, sizeof k->n);
    assert_int_equal(a->marks, k->marks);
    assert_true(a->best == k->best && a->best_x_s == k->best_x_s);
    assert_true(a->best_y_bytes == k->best_y_bytes);
    free(kept);
    free(again);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_does_not_grow_with_layouts),
        cmocka_unit_test(test_second_search_plots_the_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
