/* Tests of deadline (memfit search --tokens N --days D, doc/model.md section 11.7): the days,
 * GPU-hours and cost of a layout, the counts of the scaling curve, and the fewest GPUs that
 * meet a deadline while the count a node below does not. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>

#include "model/model.h"
#include "plan/deadline.h"
#include "plan/search.h"

#include "small_gpt_job.h"

/* A small GPT on H100s of 0.55 GB, 4 GPUs a node, a global batch of 64 sequences of 512. */
static void job_small(struct scenario *sc)
{
    small_gpt_job(sc);
    sc->global_batch = 64;
    sc->gpus = 0;
    sc->gpus_per_node = 4;
}

/* Known numbers: 64 x 512 tokens a step of 2 s on 8 GPUs, 1.6384e9 tokens at 3 a GPU-hour. */
static void cost_by_hand(void **state)
{
    (void)state;
    struct scenario sc;
    job_small(&sc);
    struct deadline_cost c;
    deadline_cost_of(&sc, 8, 2.0, 1.6384e9, 3.0, &c);
    assert_true(fabs(c.tokens_per_s - 16384.0) < 1e-9);
    assert_true(fabs(c.days - 1e5 / 86400.0) < 1e-12);        /* 100,000 s */
    assert_true(fabs(c.gpu_hours - 8 * 1e5 / 3600.0) < 1e-9); /* 222.2 */
    assert_true(fabs(c.cost - 3 * 8 * 1e5 / 3600.0) < 1e-9);
    deadline_cost_of(&sc, 8, 2.0, 0, 3.0, &c); /* no tokens: a rate, no days */
    assert_true(c.days == 0 && c.gpu_hours == 0 && c.cost == 0 && c.tokens_per_s > 0);
}

static void curve_counts(void **state)
{
    (void)state;
    uint64_t g[16];
    assert_int_equal(deadline_curve_counts(5, 100, 8, g, 16), 4); /* 8 16 32 64 */
    assert_int_equal(g[0], 8);
    assert_int_equal(g[3], 64);
    assert_int_equal(deadline_curve_counts(16, 16, 8, g, 16), 1);
    assert_int_equal(deadline_curve_counts(17, 20, 8, g, 16), 0);
    assert_int_equal(deadline_curve_counts(1, 1u << 20, 1, g, 3), 3); /* the cap */
}

/* The days on g GPUs, by search_run directly (infinity: nothing fits). */
static double days_at(const struct scenario *job, uint64_t g, double tokens)
{
    struct scenario at = *job;
    at.gpus = g;
    struct search_layout best;
    struct search_result res;
    if (search_run(&at, 1, &best, NULL, NULL, NULL, &res) != SEARCH_OK || res.n_top == 0)
        return INFINITY;
    struct deadline_cost c;
    deadline_cost_of(&best.sc, g, best.step_time_s, tokens, 0, &c);
    return c.days;
}

/* For deadlines between the days of several counts: the answer meets it, a node below does not,
 * and the rows are search_run's at the answer. */
static void fewest_gpus_meet_the_deadline(void **state)
{
    (void)state;
    struct scenario job;
    job_small(&job);
    double tokens = 1e9, d4 = days_at(&job, 4, tokens), d64 = days_at(&job, 64, tokens);
    assert_true(isfinite(d4) && d64 < d4);
    unsigned checked = 0;
    for (int i = 1; i <= 6; i++) {
        double deadline = d64 + (d4 - d64) * i / 7.0;
        static struct search_layout top[4];
        struct search_result res;
        struct deadline_result dl;
        deadline_min_gpus(&job, 1, 64, tokens, deadline, 4, top, NULL, &res, &dl);
        assert_true(dl.gpus > 0 && dl.gpus % 4 == 0);
        assert_true(days_at(&job, dl.gpus, tokens) <= deadline);
        assert_true(res.n_top > 0);
        struct deadline_cost c;
        deadline_cost_of(&top[0].sc, dl.gpus, top[0].step_time_s, tokens, 0, &c);
        assert_true(c.days <= deadline);
        if (dl.gpus > 4) {
            assert_int_equal(dl.below, dl.gpus - 4);
            assert_true(!(days_at(&job, dl.below, tokens) <= deadline));
            checked++;
        }
    }
    assert_true(checked >= 3);
    /* A deadline nothing meets: 0; one the first count meets: that count, none below. */
    struct search_result res;
    struct deadline_result dl;
    deadline_min_gpus(&job, 1, 64, tokens, d64 / 100, 0, NULL, NULL, &res, &dl);
    assert_int_equal(dl.gpus, 0);
    deadline_min_gpus(&job, 1, 64, tokens, d4 * 2, 0, NULL, NULL, &res, &dl);
    assert_int_equal(dl.gpus, 4);
    assert_int_equal(dl.below, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cost_by_hand),
        cmocka_unit_test(curve_counts),
        cmocka_unit_test(fewest_gpus_meet_the_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
