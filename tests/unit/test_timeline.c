/* Tests of timeline: the step walk and checkpointing sawtooth of doc/model.md section 10. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "model.h"
#include "random_scenario.h"
#include "timeline.h"

/* Builds the timeline of sc into a fresh array; the caller frees *events. */
static void build(const struct scenario *sc, struct timeline_event **events,
                  struct timeline_summary *sum)
{
    size_t cap = timeline_capacity(sc);
    assert_true(cap > 0);
    *events = calloc(cap, sizeof **events);
    assert_non_null(*events);
    assert_int_equal(timeline_build(sc, *events, cap, sum), 0);
    assert_true(sum->n_events <= cap);
}

static uint64_t event_total(const struct timeline_summary *sum, const struct timeline_event *e)
{
    return sum->states_bytes + e->act_bytes + e->logits_bytes;
}

/* The 1.3B worked example without checkpointing: the peak at the turn, 116.1 GB (doc/model.md
 * section 9.4). */
static void test_lesson_plain(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    struct timeline_event *ev;
    struct timeline_summary sum;
    build(&sc, &ev, &sum);
    /* 24 forwards, logits, loss backward, 24 backwards. */
    assert_int_equal(sum.n_events, 50);
    /* A = 114 sbh = 114 * 33,554,432 = 3,825,205,248; states 16 Psi = 20,984,463,360;
     * logits 4sbV = 3,293,642,752; peak = states + 24 A + logits = 116,083,032,064. */
    assert_int_equal(sum.states_bytes, 20984463360ull);
    assert_int_equal(sum.peak_bytes, 116083032064ull);
    assert_int_equal(ev[23].kind, TIMELINE_FORWARD);
    assert_int_equal(ev[23].layer, 23);
    assert_int_equal(ev[23].act_bytes, 24ull * 3825205248ull);
    assert_int_equal(ev[24].kind, TIMELINE_LOGITS);
    assert_int_equal(ev[24].logits_bytes, 3293642752ull);
    assert_int_equal(ev[25].kind, TIMELINE_LOSS_BACKWARD);
    assert_int_equal(ev[25].logits_bytes, 0);
    assert_int_equal(ev[26].kind, TIMELINE_BACKWARD);
    assert_int_equal(ev[26].layer, 23);
    assert_int_equal(ev[26].act_bytes, 23ull * 3825205248ull);
    assert_int_equal(ev[49].act_bytes, 0);
    assert_true(sum.peak_time == 24.0);
    assert_true(sum.total_time == 72.0); /* 3L */
    free(ev);
}

/* Full checkpointing with FlashAttention (doc/model.md 9.6): 4L of time (+33%), and the
 * peak is either the end of the forward pass (L checkpoints + logits) or the first rebuild
 * (L checkpoints + A), never the analytic M(1) + logits. */
static void test_lesson_full_ckpt(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    sc.attention = ATTENTION_FLASH;
    sc.recompute = RECOMPUTE_EVERY_K;
    sc.ckpt_every = 1;
    struct timeline_event *ev;
    struct timeline_summary sum;
    build(&sc, &ev, &sum);
    uint64_t c = 2ull * 33554432ull;               /* 2sbh */
    uint64_t A = 34ull * 33554432ull + 1048576ull; /* 34sbh + 4asb */
    uint64_t logits = 3293642752ull;
    assert_int_equal(sum.n_events, 24 + 2 + 24 + 24);
    assert_true(sum.total_time == 96.0); /* 4L */
    /* Forward: each layer keeps only its input. */
    assert_int_equal(ev[0].act_bytes, c);
    assert_int_equal(ev[23].act_bytes, 24 * c);
    /* The first rebuild is layer 23, then its backward frees A and its checkpoint. */
    assert_int_equal(ev[26].kind, TIMELINE_RECOMPUTE);
    assert_int_equal(ev[26].layer, 23);
    assert_int_equal(ev[26].act_bytes, 24 * c + A);
    assert_true(ev[26].t_start == 24.0 && ev[26].t_end == 25.0);
    assert_int_equal(ev[27].kind, TIMELINE_BACKWARD);
    assert_int_equal(ev[27].act_bytes, 23 * c);
    assert_true(ev[27].t_end == 27.0);
    uint64_t expect = sum.states_bytes + 24 * c + (logits > A ? logits : A);
    assert_int_equal(sum.peak_bytes, expect);
    struct terms t;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_true(sum.peak_bytes < t.peak_bytes); /* 27.0 GB analytic */
    assert_int_equal(t.peak_bytes - sum.peak_bytes, (logits < A ? logits : A));
    free(ev);
}

/* Every k = 5 over 24 layers: segments 5,5,5,5,4; the short last segment is rebuilt first. */
static void test_every_k_short_last_segment(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    sc.attention = ATTENTION_FLASH;
    sc.recompute = RECOMPUTE_EVERY_K;
    sc.ckpt_every = 5;
    struct timeline_event *ev;
    struct timeline_summary sum;
    build(&sc, &ev, &sum);
    uint64_t c = 2ull * 33554432ull, A = 34ull * 33554432ull + 1048576ull;
    assert_int_equal(sum.segment, 5);
    /* Forward keeps 5 segment inputs, added at layers 0, 5, 10, 15, 20. */
    assert_int_equal(ev[4].act_bytes, c);
    assert_int_equal(ev[5].act_bytes, 2 * c);
    assert_int_equal(ev[23].act_bytes, 5 * c);
    /* Rebuild of layers 20..23 (4 layers), then their backward. */
    for (int i = 0; i < 4; i++) {
        assert_int_equal(ev[26 + i].kind, TIMELINE_RECOMPUTE);
        assert_int_equal(ev[26 + i].layer, 20 + (uint64_t)i);
        assert_int_equal(ev[26 + i].act_bytes, 5 * c + (uint64_t)(i + 1) * A);
    }
    assert_int_equal(ev[30].kind, TIMELINE_BACKWARD);
    assert_int_equal(ev[30].layer, 23);
    assert_int_equal(ev[33].layer, 20);
    assert_int_equal(ev[33].act_bytes, 4 * c);
    /* Then layers 15..19 are rebuilt: 4c + 5A, the maximum (A > c). */
    assert_int_equal(ev[38].kind, TIMELINE_RECOMPUTE);
    assert_int_equal(ev[38].layer, 19);
    assert_int_equal(ev[38].act_bytes, 4 * c + 5 * A);
    uint64_t logits = 3293642752ull;
    uint64_t top = 4 * c + 5 * A > 5 * c + logits ? 4 * c + 5 * A : 5 * c + logits;
    assert_int_equal(sum.peak_bytes, sum.states_bytes + top);
    assert_true(sum.total_time == 96.0);
    free(ev);
}

/* Selective recomputation makes no segments: A already lacks the core. */
static void test_selective_no_rebuild(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    sc.recompute = RECOMPUTE_SELECTIVE;
    struct timeline_event *ev;
    struct timeline_summary sum;
    build(&sc, &ev, &sum);
    assert_int_equal(sum.n_events, 50);
    for (size_t i = 0; i < sum.n_events; i++)
        assert_int_not_equal(ev[i].kind, TIMELINE_RECOMPUTE);
    assert_int_equal(ev[0].act_bytes, 34ull * 33554432ull);
    assert_true(sum.total_time == 72.0);
    free(ev);
}

static void test_too_small_array(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    struct timeline_event ev[10];
    struct timeline_summary sum;
    assert_int_equal(timeline_build(&sc, ev, 10, &sum), -1);
    assert_int_equal(timeline_capacity(&sc), 3 * 24 + 2);
}

/* Pipeline: the first stage holds pp micro-batches of L/pp layers, the walk reaches L layers'
 * worth of activations like the analytic peak. */
static void test_pipeline_first_stage(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    sc.attention = ATTENTION_FLASH;
    sc.pp = 4;
    struct timeline_event *ev;
    struct timeline_summary sum;
    build(&sc, &ev, &sum);
    struct terms t;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.peak_stage, MODEL_STAGE_FIRST);
    assert_int_equal(sum.micro_batches, 4);
    assert_int_equal(sum.stage_layers, 6);
    assert_int_equal(sum.n_events, 2 * 24); /* no logits on the first stage */
    assert_int_equal(sum.peak_bytes, t.peak_bytes);
    assert_int_equal(ev[6].micro_batch, 1);
    assert_int_equal(ev[6].layer, 0);
    assert_true(sum.total_time == 72.0);
    free(ev);
}

/* A stage of dense and MoE layers (doc/model.md sections 4.7 and 10): each layer adds its own
 * kind's A, so the walk without checkpointing peaks at the model's peak. */
static void test_mixed_layer_kinds(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    sc.arch = ARCH_LLAMA;
    sc.dropout = sc.tied = false;
    sc.attention = ATTENTION_FLASH;
    sc.layers = 8;
    sc.dense_layers = 3;
    sc.experts = 16;
    sc.top_k = 2;
    sc.expert_ffn = 1024;
    sc.ffn = 8192;
    struct timeline_event *ev;
    struct timeline_summary sum;
    build(&sc, &ev, &sum);
    struct terms t;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_true(t.kind_act[0] != t.kind_act[1]);
    assert_int_equal(sum.peak_bytes, t.peak_bytes);
    assert_int_equal(ev[0].act_bytes, t.kind_act[0]);                   /* a dense layer first */
    assert_int_equal(ev[3].act_bytes - ev[2].act_bytes, t.kind_act[1]); /* then MoE */
    free(ev);
}

/* The invariants of timeline.h on random scenarios (pp = 1 and pp > 1). */
static void test_invariants_random(void **state)
{
    (void)state;
    uint64_t seed = 20261129;
    int checked_k = 0;
    for (int n = 0; n < 600; n++) {
        struct scenario sc;
        random_scenario(&seed, &sc);
        if (n % 2 == 0)
            sc.pp = 1;
        struct terms t;
        if (model_peak(&sc, &t) != MODEL_OK)
            continue;
        struct timeline_event *ev;
        struct timeline_summary sum;
        build(&sc, &ev, &sum);
        bool every_k = sc.recompute == RECOMPUTE_EVERY_K;
        uint64_t work = sum.micro_batches * sum.stage_layers;
        if (sc.pp == 1)
            assert_int_equal(work, sc.layers);
        if (every_k) {
            assert_true(sum.peak_bytes <= t.peak_bytes);
            assert_true(sum.total_time == 4.0 * (double)work);
            checked_k++;
        } else {
            assert_int_equal(sum.peak_bytes, t.peak_bytes);
            assert_true(sum.total_time == 3.0 * (double)work);
        }
        assert_int_equal(sum.states_bytes, t.states_bytes);
        uint64_t max = 0;
        double prev_end = 0;
        size_t recomputes = 0;
        for (size_t i = 0; i < sum.n_events; i++) {
            assert_true(ev[i].t_start == prev_end);
            assert_true(ev[i].t_end >= ev[i].t_start);
            prev_end = ev[i].t_end;
            assert_true(ev[i].act_bytes <= t.peak_bytes); /* no wrap-around below zero */
            if (event_total(&sum, &ev[i]) > max)
                max = event_total(&sum, &ev[i]);
            recomputes += ev[i].kind == TIMELINE_RECOMPUTE;
        }
        assert_int_equal(max, sum.peak_bytes);
        assert_int_equal(recomputes, every_k ? work : 0);
        assert_int_equal(ev[sum.n_events - 1].act_bytes, 0);
        assert_int_equal(ev[sum.n_events - 1].kind, TIMELINE_BACKWARD);
        free(ev);
    }
    assert_true(checked_k > 50);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lesson_plain),
        cmocka_unit_test(test_lesson_full_ckpt),
        cmocka_unit_test(test_every_k_short_last_segment),
        cmocka_unit_test(test_selective_no_rebuild),
        cmocka_unit_test(test_too_small_array),
        cmocka_unit_test(test_pipeline_first_stage),
        cmocka_unit_test(test_mixed_layer_kinds),
        cmocka_unit_test(test_invariants_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
