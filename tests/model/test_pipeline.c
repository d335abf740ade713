/* Tests of pipeline.c: the schedules of doc/model.md sections 6.1, 6.3 and 6.4, exact counts. */
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

/* 126 layers on 16 stages (Llama 3 405B): 7, 8 x 14, 7; stage 1, with 8 layers and 15
 * micro-batches in flight, is a candidate and holds more than stage 0 (7 x 16). */
static void uneven_split_floors_at_the_ends(void **state)
{
    (void)state;
    struct scenario sc = pipe_of(126, 16, 1, 128);
    struct pipeline_split sp = pipeline_split_of(&sc);
    uint64_t first_layer = 0;
    for (uint64_t r = 0; r < 16; r++) {
        struct pipeline_stage st;
        pipeline_stage_at(&sc, 126, r, &st);
        assert_int_equal(st.stage_layers, r == 0 || r == 15 ? 7 : 8);
        assert_int_equal(pipeline_stage_layers(&sp, 16, r), st.stage_layers);
        assert_int_equal(st.first_layer, first_layer);
        assert_int_equal(st.act_layers[0], st.stage_layers * (16 - r));
        first_layer += st.stage_layers;
    }
    struct pipeline_stage c[PIPELINE_CANDIDATES];
    unsigned n = pipeline_candidates(&sc, 126, c);
    assert_int_equal(n, 3); /* 0, 15, 1 (the first of 8; 15, where the 7s resume, is there) */
    assert_int_equal(c[2].rank, 1);
    assert_int_equal(c[2].act_layers[0], 8 * 15);
    /* 61 on 16 (DeepSeek-V3): three floors of 3, on stages 0, 15 and 1; 70 on 12 (BLOOM): 5,
     * 6 x 10, 5; 105 on 35 (MT-NLG): 3 each. */
    sc = pipe_of(61, 16, 1, 32);
    assert_int_equal(pipeline_layers_of(&sc, 0), 3);
    assert_int_equal(pipeline_layers_of(&sc, 1), 3);
    assert_int_equal(pipeline_layers_of(&sc, 2), 4);
    assert_int_equal(pipeline_layers_of(&sc, 14), 4);
    assert_int_equal(pipeline_layers_of(&sc, 15), 3);
    assert_int_equal(pipeline_max_stage_layers(&sc), 4);
    sc = pipe_of(70, 12, 1, 32);
    assert_int_equal(pipeline_layers_of(&sc, 0), 5);
    assert_int_equal(pipeline_layers_of(&sc, 6), 6);
    assert_int_equal(pipeline_layers_of(&sc, 11), 5);
    sc = pipe_of(105, 35, 1, 35);
    assert_int_equal(pipeline_layers_of(&sc, 34), 3);
    assert_int_equal(pipeline_max_stage_layers(&sc), 3);
}

/* first_stage_layers 4 and last_stage_layers 4 of 20 on 4 stages with vpp 2: the middle stages
 * hold 6 each, in chunks of 3; the chunks run s0 (2), s1 (3), s2 (3), s3 (2), then again, so
 * stage 1's chunks hold layers 2-4 and 12-14: with 12 dense layers, 3 dense and 3 MoE. */
static void given_ends_and_interleaving(void **state)
{
    (void)state;
    struct scenario sc = pipe_of(20, 4, 2, 8);
    sc.first_stage_layers = sc.last_stage_layers = 4;
    struct pipeline_stage st;
    pipeline_stage_at(&sc, 12, 1, &st);
    assert_int_equal(st.stage_layers, 6);
    assert_int_equal(st.chunk_layers, 3);
    assert_int_equal(st.first_layer, 2);
    assert_int_equal(st.layers[0], 3);
    assert_int_equal(st.layers[1], 3);
    pipeline_stage_at(&sc, 12, 3, &st);
    assert_int_equal(st.chunk_layers, 2);
    assert_int_equal(st.first_layer, 8);
    assert_int_equal(st.layers[0], 2); /* layers 8-9 are dense, 18-19 not */
    assert_int_equal(st.layers[1], 2);
}

/* DualPipe, pp 4, 16 layers, m 8: GPU r holds stage r (pp - r in flight) and stage 3 - r
 * (r + 1): pp + 1 = 5 micro-batches, twice the layers; GPUs 0 and 3 hold both ends. */
static void dualpipe_two_stages_a_gpu(void **state)
{
    (void)state;
    struct scenario sc = pipe_of(16, 4, 1, 8);
    sc.schedule = SCHEDULE_DUALPIPE;
    for (uint64_t r = 0; r < 4; r++) {
        struct pipeline_stage st;
        pipeline_stage_at(&sc, 16, r, &st);
        assert_int_equal(st.in_flight, 5);
        assert_int_equal(st.twin_in_flight, r + 1);
        assert_int_equal(st.layers[0], 8);
        assert_int_equal(st.act_layers[0], 5 * 4);
        assert_true(st.first == (r == 0 || r == 3) && st.last == st.first);
        assert_int_equal(pipeline_checkpoints(&st, 3), 5 * 2);
    }
    /* Uneven (61 on 16): GPU 1 holds stage 1 (3 layers, 15 in flight) and stage 14 (4, 2). */
    sc = pipe_of(61, 16, 1, 32);
    sc.schedule = SCHEDULE_DUALPIPE;
    struct pipeline_stage st;
    pipeline_stage_at(&sc, 61, 1, &st);
    assert_int_equal(st.layers[0], 7);
    assert_int_equal(st.act_layers[0], 3 * 15 + 4 * 2);
    assert_int_equal(st.twin_layers, 4);
    assert_int_equal(pipeline_checkpoints(&st, 2), 15 * 2 + 2 * 2);
    assert_int_equal(pipeline_segment_layers(&st, 9), 4);
}

/* A random split: the ends given (multiples of v) or automatic (v = 1). */
static struct scenario random_split(uint64_t *st)
{
    static const uint64_t pps[] = {2, 3, 4, 5, 8, 16};
    uint64_t pp = pps[rs_range(st, 0, 5)], v = rs_range(st, 1, 3);
    uint64_t f = v * rs_range(st, 0, 5), l = v * rs_range(st, 0, 5), mid = v * rs_range(st, 1, 5);
    uint64_t ends = (uint64_t)(f > 0) + (l > 0), layers = f + l + mid * (pp - ends);
    if (rs_range(st, 0, 1) || ends == 0) { /* automatic */
        v = 1;
        f = l = 0;
        layers = rs_range(st, pp, 6 * pp);
    }
    uint64_t m = v > 1 ? pp * rs_range(st, 1, 4) : rs_range(st, 1, 40);
    struct scenario sc = pipe_of(layers, pp, v, m);
    sc.first_stage_layers = f;
    sc.last_stage_layers = l;
    if (rs_range(st, 0, 3) == 0) { /* the embedding's and the loss's slots, S a stage */
        uint64_t e = rs_range(st, 0, 1), t = e ? rs_range(st, 0, 1) : 1;
        v = rs_range(st, 1, 3);
        uint64_t s = v * rs_range(st, 1, 5) + (v == 1);
        sc = pipe_of(pp * s - e - t, pp, v, v > 1 ? pp * rs_range(st, 1, 4) : rs_range(st, 1, 40));
        sc.embedding_in_split = e;
        sc.loss_in_split = t;
        assert_true(pipeline_split_valid(&sc));
    }
    return sc;
}

/* On random splits and schedules, no stage outweighs every candidate: for random weights per
 * layer, per layer-micro-batch of each kind, per checkpoint and for the ends, the most any stage
 * weighs is what a candidate weighs (DualPipe's GPUs are linear in r between candidates). */
static void candidates_hold_the_heaviest_of_uneven_splits(void **state)
{
    (void)state;
    uint64_t st = 7;
    for (int i = 0; i < 3000; i++) {
        struct scenario sc = random_split(&st);
        uint64_t k = rs_range(&st, 0, 4);
        if (sc.vpp == 1 && sc.pp % 2 == 0 && rs_range(&st, 0, 2) == 0) {
            sc.schedule = SCHEDULE_DUALPIPE;
            sc.global_batch = 2 * sc.pp * rs_range(&st, 1, 2) * 8;
        }
        uint64_t dense = rs_range(&st, 0, sc.layers), w[7];
        for (int j = 0; j < 7; j++)
            w[j] = rs_range(&st, 0, 1000);
        struct pipeline_stage c[PIPELINE_CANDIDATES];
        unsigned n = pipeline_candidates(&sc, dense, c);
        assert_true(n >= 1 && n <= PIPELINE_CANDIDATES);
        uint64_t best_all = 0, best_cand = 0, layers = 0;
        for (uint64_t r = 0; r <= sc.pp; r++) {
            struct pipeline_stage s;
            if (r < sc.pp)
                pipeline_stage_at(&sc, dense, r, &s);
            else if (n == 0)
                break;
            for (unsigned j = 0; r == sc.pp && j < n; j++) {
                s = c[j];
                uint64_t x = w[0] * s.layers[0] + w[1] * s.layers[1] + w[2] * s.act_layers[0] +
                             w[3] * s.act_layers[1] + w[4] * s.first + w[5] * s.last +
                             w[6] * pipeline_checkpoints(&s, k);
                best_cand = x > best_cand ? x : best_cand;
            }
            if (r == sc.pp)
                break;
            if (sc.schedule != SCHEDULE_DUALPIPE)
                layers += s.stage_layers;
            uint64_t x = w[0] * s.layers[0] + w[1] * s.layers[1] + w[2] * s.act_layers[0] +
                         w[3] * s.act_layers[1] + w[4] * s.first + w[5] * s.last +
                         w[6] * pipeline_checkpoints(&s, k);
            best_all = x > best_all ? x : best_all;
        }
        assert_int_equal(best_cand, best_all);
        if (sc.schedule != SCHEDULE_DUALPIPE)
            assert_int_equal(layers, sc.layers);
    }
}

/* The embedding's and the loss's slots (doc/model.md 6.3): Llama 3 405B's 126 layers on 16
 * stages of 8 chunks, 1 slot a chunk (128 slots): the first chunk of stage 0 holds the embedding
 * alone, the last of stage 15 the loss alone; stages 0 and 15 hold 7 layers, the others 8, and
 * with m = 16 every chunk keeps its 16 micro-batches: 112 layer-micro-batches on stage 0. */
static void slots_of_the_embedding_and_the_loss(void **state)
{
    (void)state;
    struct scenario sc = pipe_of(126, 16, 8, 16);
    sc.embedding_in_split = sc.loss_in_split = true;
    assert_true(pipeline_split_valid(&sc));
    assert_int_equal(pipeline_split_gcd(&sc), 8);
    struct pipeline_split sp = pipeline_split_of(&sc);
    assert_int_equal(sp.head_layers, 7);
    assert_int_equal(sp.mid_layers, 8);
    assert_int_equal(sp.tail_layers, 7);
    struct pipeline_stage st;
    pipeline_stage_at(&sc, 126, 0, &st);
    assert_int_equal(st.layers[0], 7);
    assert_int_equal(st.in_flight, 128);
    assert_int_equal(st.act_layers[0], 112);
    assert_int_equal(st.chunk_layers, 1);
    assert_true(st.short_chunk);
    assert_int_equal(st.short_held, 16);
    assert_int_equal(pipeline_checkpoints(&st, 1), 112);
    assert_int_equal(pipeline_micro_batch_checkpoints(&st, 8, 1), 7);
    pipeline_stage_at(&sc, 126, 1, &st); /* layer 0: the first chunk's after the embedding */
    assert_int_equal(st.first_layer, 0);
    assert_int_equal(st.act_layers[0], 128);
    assert_false(st.short_chunk);
    pipeline_stage_at(&sc, 126, 15, &st);
    assert_int_equal(st.first_layer, 14);
    assert_int_equal(st.short_first_layer, 7 * 16 + 14);
    assert_int_equal(st.layers[0], 7);
    assert_true(st.short_chunk);
    /* Interleaved by 2, the first chunk 3 layers and the others 4: 4 checkpoints of 2 layers a
     * micro-batch through stage 0's two chunks. */
    sc.vpp = 2;
    pipeline_stage_at(&sc, 126, 0, &st);
    assert_int_equal(st.chunk_layers, 4);
    assert_int_equal(pipeline_micro_batch_checkpoints(&st, 2, 2), 4);
    assert_int_equal(pipeline_micro_batch_checkpoints(&st, 2, 1), 7);
    /* Without interleaving the split is the ends' one layer short: as first_stage_layers 7 and
     * last_stage_layers 7 give it, stage by stage. */
    sc.vpp = 1;
    struct scenario ends = sc;
    ends.embedding_in_split = ends.loss_in_split = false;
    ends.first_stage_layers = ends.last_stage_layers = 7;
    for (uint64_t r = 0; r < 16; r++) {
        struct pipeline_stage a, b;
        pipeline_stage_at(&sc, 3, r, &a);
        pipeline_stage_at(&ends, 3, r, &b);
        assert_int_equal(a.stage_layers, b.stage_layers);
        assert_int_equal(a.first_layer, b.first_layer);
        assert_int_equal(a.chunk_layers, b.chunk_layers);
        assert_int_equal(a.in_flight, b.in_flight);
        for (int k = 0; k < 2; k++) {
            assert_int_equal(a.layers[k], b.layers[k]);
            assert_int_equal(a.act_layers[k], b.act_layers[k]);
        }
        assert_true(a.first == b.first && a.last == b.last && !a.short_chunk);
    }
    /* pp must divide the layers and slots, vpp each stage's slots. */
    sc.pp = 4; /* 128 / 4 = 32: fine; vpp 3 does not divide 32 */
    sc.vpp = 3;
    assert_false(pipeline_split_valid(&sc));
    sc.vpp = 1;
    sc.loss_in_split = false; /* 127 slots */
    assert_false(pipeline_split_valid(&sc));
    sc.first_stage_layers = 31;
    sc.loss_in_split = true; /* not with the ends given */
    assert_false(pipeline_split_valid(&sc));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_f_one_b_keeps_pp_minus_r),
        cmocka_unit_test(interleaved_stage_zero_keeps_l_times_one_plus),
        cmocka_unit_test(checkpoints_per_chunk),
        cmocka_unit_test(candidates_where_the_mix_changes),
        cmocka_unit_test(candidates_dominate_the_others),
        cmocka_unit_test(uneven_split_floors_at_the_ends),
        cmocka_unit_test(given_ends_and_interleaving),
        cmocka_unit_test(dualpipe_two_stages_a_gpu),
        cmocka_unit_test(candidates_hold_the_heaviest_of_uneven_splits),
        cmocka_unit_test(slots_of_the_embedding_and_the_loss),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
