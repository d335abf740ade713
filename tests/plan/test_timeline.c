/* Tests of timeline: the step walk and checkpointing sawtooth of doc/model.md section 10. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "model/model.h"
#include "random_scenario.h"
#include "plan/timeline.h"

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
    sc.peak = PEAK_STEP; /* the end of the backward and the optimizer step */
    assert_int_equal(timeline_capacity(&sc), 3 * 24 + 4);
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
    sc.global_batch = 8 * 4; /* the default: pp micro-batches a step */
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

/* An uneven split (doc/model.md 6.3): 18 of the 24 layers on the first of 4 stages, 2 on each of
 * the others; the first stage keeps 4 micro-batches of 18 layers, 72 layers' worth, three times
 * L / pp's, and the walk still peaks at the model's peak. */
static void test_pipeline_uneven_first_stage(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    sc.attention = ATTENTION_FLASH;
    sc.pp = 4;
    sc.global_batch = 8 * 4;
    sc.first_stage_layers = 18;
    struct timeline_event *ev;
    struct timeline_summary sum;
    build(&sc, &ev, &sum);
    struct terms t;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.peak_stage, MODEL_STAGE_FIRST);
    assert_int_equal(sum.micro_batches, 4);
    assert_int_equal(sum.stage_layers, 18);
    assert_int_equal(sum.n_events, 2 * 72);
    assert_int_equal(sum.peak_bytes, t.peak_bytes);
    free(ev);
}

/* The lesson's example as a Llama-style MoE model of `layers` layers, the first `dense` dense. */
static void moe_model(struct scenario *sc, uint64_t layers, uint64_t dense)
{
    scenario_lesson_example(sc);
    sc->arch = ARCH_LLAMA;
    sc->dropout = sc->tied = false;
    sc->attention = ATTENTION_FLASH;
    sc->layers = layers;
    sc->dense_layers = dense;
    sc->experts = 16;
    sc->top_k = 2;
    sc->expert_ffn = 1024;
    sc->ffn = 8192;
}

/* A stage of dense and MoE layers (doc/model.md sections 4.7 and 10): each layer adds its own
 * kind's A, so the walk without checkpointing peaks at the model's peak. */
static void test_mixed_layer_kinds(void **state)
{
    (void)state;
    struct scenario sc;
    moe_model(&sc, 8, 3);
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

/* The walk of one DualPipe GPU: its maximum is the model's peak (at most it, under checkpointing
 * every k), each of its layer-micro-batches runs forward and backward once, and a rebuilt layer is
 * a recomputation. */
static void assert_dualpipe_walk(const struct scenario *sc)
{
    struct terms t;
    assert_int_equal(model_peak(sc, &t), MODEL_OK);
    const struct pipeline_stage *pipe = &t.stage[t.peak_stage].pipe;
    struct timeline_event *ev;
    struct timeline_summary sum;
    build(sc, &ev, &sum);
    bool every_k = sc->recompute == RECOMPUTE_EVERY_K;
    uint64_t own = pipe->in_flight - pipe->twin_in_flight;
    uint64_t runs = own * pipe->stage_layers + pipe->twin_in_flight * pipe->twin_layers;
    assert_int_equal(sum.micro_batches, pipe->in_flight);
    assert_int_equal(sum.layer_runs, runs);
    assert_true(sum.total_time == (every_k ? 4.0 : 3.0) * (double)runs);
    if (every_k)
        assert_true(sum.peak_bytes <= t.peak_bytes);
    else
        assert_int_equal(sum.peak_bytes, t.peak_bytes);
    size_t forwards = 0;
    for (size_t i = 0; i < sum.n_events; i++)
        forwards += ev[i].kind == TIMELINE_FORWARD;
    assert_int_equal(forwards, runs);
    free(ev);
}

/* DualPipe (doc/model.md 6.4): GPU r runs pp - r micro-batches through stage r and r + 1 through
 * stage pp - 1 - r, whose layers (uneven splits, a dense lead before MoE layers) differ. */
static void test_dualpipe_two_stages(void **state)
{
    (void)state;
    struct scenario sc;
    moe_model(&sc, 13, 2); /* 4 stages: 3, 4, 3, 3 */
    sc.pp = 4;
    sc.schedule = SCHEDULE_DUALPIPE;
    sc.global_batch = 8 * sc.micro_batch * sc.dp;
    for (int peak = 0; peak < 2; peak++) {
        sc.peak = peak ? PEAK_STEP : PEAK_LESSON;
        sc.recompute = RECOMPUTE_NONE;
        assert_dualpipe_walk(&sc);
        sc.recompute = RECOMPUTE_EVERY_K;
        sc.ckpt_every = 2;
        assert_dualpipe_walk(&sc);
    }
    uint64_t seed = 20261202;
    int walked = 0;
    for (int n = 0; n < 300; n++) {
        random_scenario(&seed, &sc);
        sc.pp = 2 * rs_range(&seed, 1, 4);
        if (sc.pp > sc.layers)
            continue;
        sc.schedule = SCHEDULE_DUALPIPE;
        sc.vpp = 1;
        sc.recompute_layers = 0;
        rs_keep_split(&sc);
        sc.global_batch = sc.micro_batch * sc.dp * 2 * sc.pp * rs_range(&seed, 1, 2);
        struct terms t;
        if (model_peak(&sc, &t) != MODEL_OK)
            continue;
        assert_dualpipe_walk(&sc);
        walked++;
    }
    assert_true(walked >= 100);
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
        rs_keep_split(&sc);
        struct terms t;
        if (model_peak(&sc, &t) != MODEL_OK)
            continue;
        struct timeline_event *ev;
        struct timeline_summary sum;
        build(&sc, &ev, &sum);
        bool every_k = sc.recompute == RECOMPUTE_EVERY_K;
        /* micro_batches L/pp, less a layer for each of a chunk a layer short (6.3) */
        uint64_t work = sum.layer_runs, rebuilt = every_k ? work : 0;
        if (!sc.embedding_in_split && !sc.loss_in_split)
            assert_int_equal(work, sum.micro_batches * sum.stage_layers);
        /* each layer rebuilt once, or with block recomputation N of each chunk's (5.4) */
        if (every_k && sc.ckpt_every == 1 && sc.recompute_layers > 0 &&
            sc.recompute_layers < sum.stage_layers)
            rebuilt = sum.micro_batches * sc.recompute_layers;
        if (sc.pp == 1)
            assert_int_equal(work, sc.layers);
        if (every_k) {
            assert_true(sum.peak_bytes <= t.peak_bytes);
            assert_true(sum.total_time == 3.0 * (double)work + (double)rebuilt);
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
        assert_int_equal(recomputes, rebuilt);
        /* What lives through the layers stays: the ring's buffers, an offloaded checkpoint. */
        uint64_t resident = t.ring_bytes;
        if (sc.offload == OFFLOAD_CHECKPOINTS && every_k)
            resident += t.ckpt_bytes;
        assert_int_equal(ev[sum.n_events - 1].act_bytes, resident);
        assert_int_equal(ev[sum.n_events - 1].kind, TIMELINE_BACKWARD);
        free(ev);
    }
    assert_true(checked_k > 50);
}

/* ---- Under --peak step: the walk's highest point is the step model's peak, at its phase ---- */

static uint64_t step_event_total(const struct timeline_summary *sum, const struct timeline_event *e)
{
    return sum->states_bytes + e->act_bytes + e->logits_bytes + e->grads_bytes + e->copies_bytes +
           e->temp_bytes;
}

/* The walk of sc under --peak step against model_peak: the same peak, first reached at an event
 * of the same phase; every phase's event holds the phase's sum; model_step_parts sums to the
 * phases of step_phases. */
static void check_step_walk(const struct scenario *sc, struct timeline_summary *sum)
{
    struct terms t;
    assert_int_equal(model_peak(sc, &t), MODEL_OK);
    const struct model_gpu *g = &t.stage[t.peak_stage];
    struct step_parts parts;
    assert_int_equal(model_step_parts(sc, &t, t.peak_stage, &parts), MODEL_OK);
    for (int ph = 0; ph < STEP_PHASES; ph++) {
        uint64_t s = 0;
        for (int i = 0; i < STEP_PARTS; i++)
            s += parts.phase[ph][i];
        assert_int_equal(s, g->step.phase_bytes[ph]);
        if (s == 0) /* no rebuild without checkpointing */
            continue;
        assert_int_equal(parts.phase[ph][STEP_PART_WEIGHTS], g->weights_bytes);
        assert_int_equal(parts.phase[ph][STEP_PART_OPTIMIZER], g->optimizer_bytes);
    }
    struct timeline_event *ev;
    build(sc, &ev, sum);
    assert_int_equal(sum->states_bytes, g->weights_bytes + g->optimizer_bytes);
    assert_int_equal(sum->peak_bytes, t.peak_bytes);
    assert_int_equal(sum->peak_phase, t.peak_phase);
    uint64_t max = 0;
    size_t at = 0;
    bool seen[STEP_PHASES] = {false};
    double prev_end = 0;
    for (size_t i = 0; i < sum->n_events; i++) {
        const struct timeline_event *e = &ev[i];
        assert_true(e->t_start == prev_end);
        prev_end = e->t_end;
        uint64_t total = step_event_total(sum, e);
        /* The first event at the maximum; a phase's wins a tie with one between the phases,
         * which never rise above the higher of the phases around them. */
        if (total > max ||
            (total == max && e->phase < STEP_PHASES && ev[at].phase == STEP_PHASES)) {
            max = total;
            at = i;
        }
        if (e->phase < STEP_PHASES) {
            seen[e->phase] = true;
            if (e->phase != STEP_RECOMPUTE) /* the larger of two rebuilds */
                assert_int_equal(total, g->step.phase_bytes[e->phase]);
            else
                assert_true(total <= g->step.phase_bytes[STEP_RECOMPUTE]);
        }
    }
    assert_int_equal(max, t.peak_bytes);
    assert_int_equal(ev[at].phase, t.peak_phase);
    assert_true(sum->peak_time == ev[at].t_end);
    assert_true(seen[STEP_FORWARD] && seen[STEP_BACKWARD_END] && seen[STEP_OPTIMIZER]);
    assert_int_equal(seen[STEP_RECOMPUTE], sc->recompute == RECOMPUTE_EVERY_K);
    assert_int_equal(ev[sum->n_events - 1].kind, TIMELINE_OPTIMIZER);
    assert_int_equal(ev[sum->n_events - 2].kind, TIMELINE_BACKWARD_END);
    free(ev);
}

/* The lesson's 1.3B model under --peak step, with each implementation choice and precision. */
static void test_step_peak_matches_model(void **state)
{
    (void)state;
    struct scenario base;
    scenario_lesson_example(&base);
    base.peak = PEAK_STEP;
    base.attention = ATTENTION_FLASH;
    struct timeline_summary sum;
    bool phase_seen[STEP_PHASES] = {false};
    for (int v = 0; v < 14; v++) {
        struct scenario sc = base;
        switch (v) {
        case 0: /* mixed, eager loss, on demand, foreach */
            break;
        case 1:
            sc.precision = PRECISION_FP32;
            break;
        case 2:
            sc.precision = PRECISION_AUTOCAST;
            break;
        case 3:
            sc.precision = PRECISION_AUTOCAST;
            sc.recompute = RECOMPUTE_EVERY_K;
            sc.ckpt_every = 4;
            break;
        case 4:
            sc.recompute = RECOMPUTE_EVERY_K;
            sc.ckpt_every = 1;
            break;
        case 5:
            sc.recompute = RECOMPUTE_EVERY_K;
            sc.ckpt_every = 5; /* a short last segment */
            sc.grad_buffer = GRAD_PERSISTENT;
            break;
        case 6:
            sc.grad_buffer = GRAD_PERSISTENT;
            sc.loss = LOSS_FUSED;
            sc.optimizer_impl = OPTIMIZER_FUSED;
            break;
        case 7:
            sc.tied = false;
            sc.optimizer_impl = OPTIMIZER_SINGLE;
            break;
        case 8: /* a small batch: the optimizer's temporaries win */
            sc.micro_batch = sc.global_batch = 1;
            sc.seq = 256;
            break;
        case 9: /* pipeline: the first stage, several micro-batches in flight */
            sc.pp = 4;
            sc.recompute = RECOMPUTE_EVERY_K;
            sc.ckpt_every = 2;
            break;
        case 10:
            sc.pp = 2;
            sc.tied = false;
            sc.precision = PRECISION_AUTOCAST;
            break;
        case 11: /* gradient accumulation: the gradients are there from the start */
            sc.global_batch = 32;
            break;
        case 12:
            sc.arch = ARCH_LLAMA;
            sc.dropout = sc.tied = false;
            sc.precision = PRECISION_FP32;
            sc.recompute = RECOMPUTE_EVERY_K;
            sc.ckpt_every = 3;
            break;
        default: /* a long sequence, few layers: the recompute phase */
            sc.layers = 4;
            sc.seq = 8192;
            sc.micro_batch = sc.global_batch = 1;
            sc.recompute = RECOMPUTE_EVERY_K;
            sc.ckpt_every = 4;
            sc.attention = ATTENTION_PLAIN;
            break;
        }
        check_step_walk(&sc, &sum);
        phase_seen[sum.peak_phase] = true;
    }
    /* The scenarios above reach the peak at several phases. */
    assert_true(phase_seen[STEP_BACKWARD_START]);
    assert_true(phase_seen[STEP_OPTIMIZER]);
}

/* The step walk of the worked example: the forward, the turn, the gradients growing, the end. */
static void test_step_walk_lesson(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    sc.peak = PEAK_STEP;
    struct timeline_event *ev;
    struct timeline_summary sum;
    build(&sc, &ev, &sum);
    struct terms t;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    /* 24 forwards, logits, loss backward, 24 backwards, backward end, optimizer step. */
    assert_int_equal(sum.n_events, 52);
    assert_true(sum.total_time == 72.0);
    assert_int_equal(ev[24].kind, TIMELINE_LOGITS);
    assert_int_equal(ev[24].phase, STEP_FORWARD);
    assert_int_equal(ev[25].kind, TIMELINE_LOSS_BACKWARD);
    assert_int_equal(ev[25].phase, STEP_BACKWARD_START);
    /* The eager loss's backward: 12 sbV of fp32 tensors; on demand, no gradient yet. */
    assert_int_equal(ev[25].logits_bytes, 12ull * 2048 * 8 * 50257);
    assert_int_equal(ev[25].grads_bytes, 0);
    assert_int_equal(ev[0].grads_bytes, 0);
    for (size_t i = 27; i < 50; i++) { /* the gradients grow, the activations fall */
        assert_true(ev[i].grads_bytes >= ev[i - 1].grads_bytes);
        assert_true(ev[i].act_bytes < ev[i - 1].act_bytes);
        assert_int_equal(ev[i].phase, STEP_PHASES);
    }
    assert_int_equal(ev[49].grads_bytes, t.grads_bytes);
    assert_int_equal(ev[50].grads_bytes, t.grads_bytes);
    assert_int_equal(ev[51].kind, TIMELINE_OPTIMIZER);
    /* foreach AdamW on PyTorch 1.13: two fp32 temporaries per parameter (8 bytes). */
    assert_int_equal(ev[51].temp_bytes, 8 * t.params);
    assert_int_equal(sum.peak_phase, STEP_BACKWARD_START);
    assert_int_equal(sum.peak_bytes, t.peak_bytes);
    assert_true(sum.peak_time == 24.0);
    free(ev);
}

/* The invariants under --peak step on random scenarios, with every implementation choice. */
static void test_step_invariants_random(void **state)
{
    (void)state;
    uint64_t seed = 20260314;
    int checked = 0, with_k = 0;
    for (int n = 0; n < 600; n++) {
        struct scenario sc;
        random_scenario(&seed, &sc);
        if (n % 2 == 0)
            sc.pp = 1;
        rs_keep_split(&sc);
        sc.peak = PEAK_STEP;
        sc.loss = (enum loss_impl)(n % 2);
        sc.grad_buffer = (enum grad_buffer)((n / 2) % 2);
        sc.optimizer_impl = (enum optimizer_impl)((n / 4) % 3);
        if (n % 5 == 0)
            sc.precision = PRECISION_FP32;
        struct terms t;
        if (model_peak(&sc, &t) != MODEL_OK)
            continue;
        struct timeline_summary sum;
        check_step_walk(&sc, &sum);
        checked++;
        with_k += sc.recompute == RECOMPUTE_EVERY_K;
    }
    assert_true(checked > 400);
    assert_true(with_k > 50);
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
        cmocka_unit_test(test_pipeline_uneven_first_stage),
        cmocka_unit_test(test_mixed_layer_kinds),
        cmocka_unit_test(test_invariants_random),
        cmocka_unit_test(test_dualpipe_two_stages),
        cmocka_unit_test(test_step_peak_matches_model),
        cmocka_unit_test(test_step_walk_lesson),
        cmocka_unit_test(test_step_invariants_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
