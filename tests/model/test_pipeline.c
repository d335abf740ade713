/* Tests of pipeline.c: the schedule of doc/model.md section 6.1, exact counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "model/pipeline.h"
#include "random_scenario.h"

static struct scenario pipe_of(uint64_t layers, uint64_t pp, uint64_t vpp, uint64_t m)
{
    struct scenario sc;
    memset(&sc, 0, sizeof sc);
    sc.layers = layers;
    sc.pp = pp;
    sc.vpp = vpp;
    sc.micro_batch = 2;
    sc.dp = 4;
    sc.global_batch = m * 2 * 4;
    return sc;
}

/* 1F1B: stage r keeps min(m, pp - r) micro-batches of its L / pp layers. */
static void one_f_one_b_keeps_pp_minus_r(void **state)
{
    (void)state;
    struct scenario sc = pipe_of(32, 4, 1, 8);
    assert_int_equal(pipeline_micro_batches(&sc), 8);
    for (uint64_t r = 0; r < 4; r++) {
        struct pipeline_stage st;
        pipeline_stage_at(&sc, 32, r, &st);
        assert_int_equal(st.in_flight, 4 - r);
        assert_int_equal(st.layers[0], 8);
        assert_int_equal(st.act_layers[0], (4 - r) * 8);
        assert_int_equal(st.first_layer, 8 * r);
        assert_true(st.first == (r == 0) && st.last == (r == 3));
    }
    /* Fewer micro-batches than stages: m = 2 in flight at most. */
    sc = pipe_of(32, 4, 1, 2);
    struct pipeline_stage st;
    pipeline_stage_at(&sc, 32, 0, &st);
    assert_int_equal(st.in_flight, 2);
    pipeline_stage_at(&sc, 32, 3, &st);
    assert_int_equal(st.in_flight, 1);
}

/* Interleaved, pp = 4, v = 2, L = 32 (chunks of 4 layers), m = 8: stage 0 keeps
 * 2 (pp - 1) + (v - 1) pp + 1 = 11 chunk-micro-batches, 7 of its first chunk (forwards 0-3 and
 * 8-10) and 4 of its second (forwards 4-7): 44 layers' worth = L (1 + (pp - 1) / (pp v)). The
 * last stage keeps (v - 1) pp + 1 = 5. */
static void interleaved_stage_zero_keeps_l_times_one_plus(void **state)
{
    (void)state;
    struct scenario sc = pipe_of(32, 4, 2, 8);
    struct pipeline_stage st;
    pipeline_stage_at(&sc, 32, 0, &st);
    assert_int_equal(st.in_flight, 11);
    assert_int_equal(st.chunk_layers, 4);
    assert_int_equal(st.layers[0], 8);
    assert_int_equal(st.act_layers[0], 44);
    pipeline_stage_at(&sc, 32, 3, &st);
    assert_int_equal(st.in_flight, 5);
    assert_int_equal(st.act_layers[0], 20);
    /* m v caps it: m = 4 micro-batches, each through both chunks. */
    sc = pipe_of(32, 4, 2, 4);
    pipeline_stage_at(&sc, 32, 0, &st);
    assert_int_equal(st.in_flight, 8);
    assert_int_equal(st.act_layers[0], 32);
}

/* Checkpoints: one per segment of each chunk-micro-batch; a segment never crosses a chunk. */
static void checkpoints_per_chunk(void **state)
{
    (void)state;
    struct scenario sc = pipe_of(32, 4, 2, 8);
    struct pipeline_stage st;
    pipeline_stage_at(&sc, 32, 0, &st);
    assert_int_equal(pipeline_segment_layers(&st, 3), 3);
    assert_int_equal(pipeline_checkpoints(&st, 3), 11 * 2); /* ceil(4 / 3) = 2 a chunk */
    assert_int_equal(pipeline_segment_layers(&st, 12), 4);
    assert_int_equal(pipeline_checkpoints(&st, 12), 11);
    assert_int_equal(pipeline_checkpoints(&st, 0), 0);
}

/* A mixture of experts with 3 leading dense layers of 16 on 4 stages (chunks of 4): stage 0
 * holds 3 dense and 1 MoE layer, stage 1 four MoE layers with 3 micro-batches in flight; both
 * differ from their predecessors, so both are candidates with the last stage. */
static void candidates_where_the_mix_changes(void **state)
{
    (void)state;
    struct scenario sc = pipe_of(16, 4, 1, 4);
    struct pipeline_stage c[PIPELINE_CANDIDATES];
    unsigned n = pipeline_candidates(&sc, 3, c);
    assert_int_equal(n, 3); /* chunk 1 is the first without dense layers: rank 1 */
    assert_int_equal(c[2].rank, 1);
    assert_int_equal(c[2].layers[1], 4);
    assert_int_equal(c[2].in_flight, 3);
    n = pipeline_candidates(&sc, 6, c); /* dense ends inside chunk 1 (floor) -> rank 1, ceil 2 */
    assert_int_equal(n, 4);
    assert_int_equal(c[0].rank, 0);
    assert_int_equal(c[1].rank, 3);
    assert_int_equal(c[2].rank, 1);
    assert_int_equal(c[3].rank, 2);
    assert_int_equal(c[2].layers[0], 2);
    assert_int_equal(c[2].layers[1], 2);
    assert_int_equal(c[3].layers[1], 4);
    assert_int_equal(c[3].in_flight, 2);
    sc = pipe_of(16, 1, 1, 1);
    assert_int_equal(pipeline_candidates(&sc, 3, c), 1);
}

/* Every stage the candidates leave out holds the same layers as the nearest candidate below it
 * and no more micro-batches of either kind in flight, on random schedules: the pruning loses
 * nothing (the embedding and the output layer are on candidates). */
static void candidates_dominate_the_others(void **state)
{
    (void)state;
    uint64_t st = 99;
    for (int i = 0; i < 2000; i++) {
        static const uint64_t pps[] = {1, 2, 3, 4, 8, 16};
        uint64_t pp = pps[rs_range(&st, 0, 5)], v = pp > 1 ? rs_range(&st, 1, 4) : 1;
        uint64_t cl = rs_range(&st, 1, 6), layers = pp * v * cl;
        uint64_t m = v > 1 ? pp * rs_range(&st, 1, 4) : rs_range(&st, 1, 40);
        struct scenario sc = pipe_of(layers, pp, v, m);
        uint64_t dense = rs_range(&st, 0, layers);
        struct pipeline_stage c[PIPELINE_CANDIDATES];
        unsigned n = pipeline_candidates(&sc, dense, c);
        assert_true(n >= 1 && n <= PIPELINE_CANDIDATES);
        for (uint64_t r = 0; r < pp; r++) {
            struct pipeline_stage s;
            pipeline_stage_at(&sc, dense, r, &s);
            const struct pipeline_stage *near = NULL;
            for (unsigned j = 0; j < n; j++)
                if (c[j].rank <= r && (!near || c[j].rank > near->rank))
                    near = &c[j];
            assert_non_null(near);
            if (near->rank == r)
                continue;
            assert_false(s.first || s.last);
            assert_int_equal(near->layers[0], s.layers[0]);
            assert_int_equal(near->layers[1], s.layers[1]);
            assert_true(near->act_layers[0] >= s.act_layers[0]);
            assert_true(near->act_layers[1] >= s.act_layers[1]);
            assert_true(near->in_flight >= s.in_flight);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_f_one_b_keeps_pp_minus_r),
        cmocka_unit_test(interleaved_stage_zero_keeps_l_times_one_plus),
        cmocka_unit_test(checkpoints_per_chunk),
        cmocka_unit_test(candidates_where_the_mix_changes),
        cmocka_unit_test(candidates_dominate_the_others),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
