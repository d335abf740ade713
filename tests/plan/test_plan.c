/* Tests of plan (the fix ladder, doc/model.md section 11; the cost model of section 12 has its own,
 * test_cost.c). Expected byte counts are worked out by hand in the comments from the formulas of
 * doc/model.md sections 2-8. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "model/cost.h"
#include "model/model.h"
#include "model/pipeline.h"
#include "plan/plan.h"
#include "random_scenario.h"

/* cmocka 1.1.5 has no assert_double_equal. */
static void assert_close(double got, double want, double rel)
{
    if (fabs(got - want) > rel * fabs(want)) {
        print_error("got %.9g, want %.9g (rel %.1g)\n", got, want, rel);
        fail();
    }
}

static void settings(const struct plan *p, const char *want)
{
    char buf[256];
    assert_int_equal(plan_fix_settings(p, buf, sizeof buf), 0);
    assert_string_equal(buf, want);
}

static void rung_settings(const struct plan *p, size_t rung, const char *want)
{
    char buf[256];
    assert_int_equal(plan_rung_settings(p, rung, buf, sizeof buf), 0);
    assert_string_equal(buf, want);
}

/* The 1.3B worked example (doc/model.md section 9): Psi = 1,311,528,960; sbh = 33,554,432 at b = 8;
 * states 16 Psi = 20,984,463,360; flash A = 34 sbh + 4asb = 1,140,850,688 + 1,048,576 =
 * 1,141,899,264, 24 A = 27,405,582,336; logits 4sbV = 3,293,642,752. */
#define LESSON_FLASH_PEAK 51683688448ull /* 21.0 + 27.4 + 3.3 = 51.7 GB */

/* The cheapest single fix that makes the 1.3B worked example fit: FlashAttention, 51.7 GB
 * (doc/model.md section 9.5). */
static void test_lesson_quick_check(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    struct plan p;
    assert_int_equal(plan_build(&sc, &p), 0);
    assert_int_equal(p.base_peak_bytes, 116083032064ull);
    assert_false(p.base_fits);
    assert_int_equal(p.fix, PLAN_FIX_FLASH);
    assert_string_equal(plan_fix_name(p.fix), "flash");
    assert_int_equal(p.n_rungs, 1);
    assert_int_equal(p.fix_rung, 0);
    assert_int_equal(p.fix_peak_bytes, LESSON_FLASH_PEAK);
    assert_int_equal(p.fix_micro_batch, 8);
    assert_true(p.rungs[0].fits);
    assert_true(p.rungs[0].extra_time_s == 0.0); /* almost free: the cost model adds nothing */
    settings(&p, "attention=flash gpus=1");
}

/* doc/model.md section 9.8: 8 x 40 GB with data parallelism. */
static void lesson_dp8(struct scenario *sc, double reserve)
{
    scenario_lesson_example(sc);
    sc->dp = 8;
    sc->global_batch = 64;
    sc->gpu_mem_bytes = 40000000000ull;
    sc->reserve = reserve;
}

/* ZeRO-1: 2 Psi + 2 Psi + 12 Psi / 8 = 7,213,409,280 + 27,405,582,336 + 3,293,642,752.
 * ZeRO-2: 2 Psi + ceil(2 Psi / 8) + 12 Psi / 8 = 2,623,057,920 + 327,882,240 + 1,967,293,440 =
 * 4,918,233,600 of states, + 27,405,582,336 + 3,293,642,752 = 35,617,458,688 (35.6 GB). */
#define DP8_ZERO1_PEAK 37912634368ull
#define DP8_ZERO2_PEAK 35617458688ull

/* With 10% kept free (budget 36 GB) ZeRO-2 fits at 35.6 GB (doc/model.md 9.8). */
static void test_dp8_zero2_fits(void **state)
{
    (void)state;
    struct scenario sc;
    lesson_dp8(&sc, 0.10);
    struct plan p;
    assert_int_equal(plan_build(&sc, &p), 0);
    assert_int_equal(p.n_rungs, 3);
    assert_int_equal(p.rungs[0].fix, PLAN_FIX_FLASH);
    assert_int_equal(p.rungs[0].terms.peak_bytes, LESSON_FLASH_PEAK); /* plain DP: 51.7 GB */
    assert_false(p.rungs[0].fits);
    assert_int_equal(p.rungs[1].fix, PLAN_FIX_ZERO1);
    assert_int_equal(p.rungs[1].terms.peak_bytes, DP8_ZERO1_PEAK);
    assert_false(p.rungs[1].fits);
    assert_int_equal(p.rungs[2].fix, PLAN_FIX_ZERO2);
    assert_int_equal(p.fix, PLAN_FIX_ZERO2);
    assert_int_equal(p.fix_peak_bytes, DP8_ZERO2_PEAK);
    assert_int_equal(p.fix_micro_batch, 8);
    assert_true(p.rungs[2].extra_time_s == 0.0); /* ZeRO-2: the volume of plain DP */
    settings(&p, "attention=flash zero=2 gpus=8");
}

/* With the default 15% (budget 34 GB) 35.6 GB does not fit: the micro-batch rung picks b' = 7:
 * sbh = 29,360,128, A = 34 sbh + 4as*7 = 999,161,856, 24 A = 23,979,884,544, logits
 * 4 s 7 V = 2,881,937,408, peak 4,918,233,600 + both = 31,780,055,552 <= 34e9; b = 8 is 35.6. */
static void test_dp8_micro_batch(void **state)
{
    (void)state;
    struct scenario sc;
    lesson_dp8(&sc, 0.15);
    struct plan p;
    assert_int_equal(plan_build(&sc, &p), 0);
    assert_int_equal(p.n_rungs, 4);
    assert_int_equal(p.rungs[2].terms.peak_bytes, DP8_ZERO2_PEAK);
    assert_false(p.rungs[2].fits);
    assert_int_equal(p.fix, PLAN_FIX_MICRO_BATCH);
    assert_int_equal(p.fix_micro_batch, 7);
    assert_int_equal(p.fix_peak_bytes, 31780055552ull);
    assert_false(p.rungs[3].thin_matmuls); /* 7 * 2048 tokens */
    settings(&p, "attention=flash zero=2 micro_batch=7 gpus=8");
}

/* The halved micro-batch of doc/model.md 9.8: ZeRO-2, b = 4 fits as it is at 20.3 GB:
 * 4,918,233,600 + 24 (34 * 16,777,216 + 524,288) + 4 * 2048 * 4 * 50257 =
 * 4,918,233,600 + 13,702,791,168 + 1,646,821,376 = 20,267,846,144. */
static void test_dp8_b4_fits(void **state)
{
    (void)state;
    struct scenario sc;
    lesson_dp8(&sc, 0.15);
    sc.micro_batch = 4;
    sc.attention = ATTENTION_FLASH;
    sc.zero = 2;
    struct plan p;
    assert_int_equal(plan_build(&sc, &p), 0);
    assert_int_equal(p.fix, PLAN_FIX_NONE);
    assert_string_equal(plan_fix_name(p.fix), "none");
    assert_int_equal(p.n_rungs, 0);
    assert_int_equal(p.fix_rung, -1);
    assert_int_equal(p.fix_peak_bytes, 20267846144ull);
    assert_int_equal(p.fix_micro_batch, 4);
    settings(&p, "");
}

/* Llama 2 7B (configs/models.csv): L = 32, h = 4096, a = 32, V = 32000, f = 11008, untied. */
static void llama2_7b(struct scenario *sc)
{
    memset(sc, 0, sizeof *sc);
    snprintf(sc->name, sizeof sc->name, "llama2-7b");
    sc->arch = ARCH_LLAMA;
    sc->layers = 32;
    sc->hidden = 4096;
    sc->heads = sc->kv_heads = 32;
    sc->vocab = 32000;
    sc->ffn = 11008;
    sc->seq = 4096;
    sc->precision = PRECISION_MIXED;
    sc->dp = sc->tp = sc->pp = 1;
    sc->gpu_mem_bytes = 80000000000ull;
    sc->reserve = 0.15;
    sc->gpus_per_node = 8;
    /* H100 SXM: 989 TFLOP/s bf16 dense, NVLink 4 450 GB/s per direction, PCIe 5 x16 64 GB/s. */
    sc->speed = (struct gpu_speed){989, 3.35, 450, 64, 1979};
    snprintf(sc->gpu_preset, sizeof sc->gpu_preset, "H100-80GB");
}

/* 7B on 8 x H100-80GB, s = 4096, b = 4, plain attention. Psi = 6,738,415,616. Flash A per layer
 * = 16 sbh + 8 sbf + 4asb = 1,073,741,824 + 1,442,840,576 + 2,097,152 = 2,518,679,552,
 * 32 A = 80,597,745,664; logits 4sbV = 2,097,152,000.
 * flash: 16 Psi = 107,814,649,856 -> 190,509,547,520; ZeRO-1: 5.5 Psi = 37,061,285,888 ->
 * 119,756,183,552; ZeRO-2: 3.75 Psi = 25,269,058,560 -> 107,963,956,224; b' = 2 halves the
 * activations and logits: 25,269,058,560 + 40,298,872,832 + 1,048,576,000 = 66,616,507,392. */
static void test_7b(void **state)
{
    (void)state;
    struct scenario sc;
    llama2_7b(&sc);
    sc.micro_batch = 4;
    sc.dp = 8;
    sc.global_batch = 32;
    struct plan p;
    assert_int_equal(plan_build(&sc, &p), 0);
    assert_int_equal(p.base_params, 6738415616ull);
    assert_int_equal(p.n_rungs, 4);
    static const uint64_t peaks[] = {190509547520ull, 119756183552ull, 107963956224ull,
                                     66616507392ull};
    static const enum plan_fix fixes[] = {PLAN_FIX_FLASH, PLAN_FIX_ZERO1, PLAN_FIX_ZERO2,
                                          PLAN_FIX_MICRO_BATCH};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(p.rungs[i].fix, fixes[i]);
        assert_int_equal(p.rungs[i].terms.peak_bytes, peaks[i]);
        assert_true(p.rungs[i].fits == (i == 3));
    }
    assert_int_equal(p.fix, PLAN_FIX_MICRO_BATCH);
    assert_int_equal(p.fix_micro_batch, 2);
    assert_int_equal(p.fix_peak_bytes, 66616507392ull);
    settings(&p, "attention=flash zero=2 micro_batch=2 gpus=8");
}

/* Llama 2 70B: L = 80, h = 8192, a = 64, kv_heads = 8, f = 28672, V = 32000. */
static void llama2_70b(struct scenario *sc)
{
    llama2_7b(sc);
    snprintf(sc->name, sizeof sc->name, "llama2-70b");
    sc->layers = 80;
    sc->hidden = 8192;
    sc->heads = 64;
    sc->kv_heads = 8;
    sc->ffn = 28672;
    sc->micro_batch = 1;
    sc->attention = ATTENTION_FLASH;
}

/* 70B on 8 x H100, dp = 8, s = 4096, b = 1, flash: ZeRO-1 and -2 do not fit, b = 1 has no
 * micro-batch rung; the cost model puts ZeRO-3 before full checkpointing (doc/model.md 12.7):
 *   full_ckpt: the forward again, about 1.0 s of a 3.1 s step;
 *   zero3: 3 * 7/8 * 2 Psi bytes at 0.7 * 450 GB/s = 1.15 s, hidden behind the micro-batch.
 * ZeRO-3 (137,953,296,384 of states) and then full checkpointing still do not fit. tp re-assigns
 * the 8 GPUs (doc/model.md 11.1): tp = 2, 4, 8 with dp = 4, 2, 1 shard the states over the same
 * 8 GPUs, 16 Psi / 8 (plus the rounding of the tp split), and halve the activations each time:
 * none fits; dp pp = 1 leaves no pipeline rung; the optimizer offload leaves 4 Psi / 8 =
 * 34,488,352,768 of states: 35,394,977,792 fits. No rung adds GPUs. */
static void test_70b(void **state)
{
    (void)state;
    struct scenario sc;
    llama2_70b(&sc);
    sc.dp = 8;
    sc.global_batch = 8;
    struct plan p;
    assert_int_equal(plan_build(&sc, &p), 0);
    assert_int_equal(p.base_params, 68976648192ull);
    static const enum plan_fix fixes[] = {PLAN_FIX_ZERO1,     PLAN_FIX_ZERO2,  PLAN_FIX_ZERO3,
                                          PLAN_FIX_FULL_CKPT, PLAN_FIX_TP,     PLAN_FIX_TP,
                                          PLAN_FIX_TP,        PLAN_FIX_OFFLOAD};
    static const uint64_t peaks[] = {488696098816ull, 367986964480ull, 247277830144ull,
                                     145206296576ull, 141579812864ull, 139766595584ull,
                                     138860036096ull, 35394977792ull};
    static const uint64_t tps[] = {1, 1, 1, 1, 2, 4, 8, 8};
    assert_int_equal(p.n_rungs, 8);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(p.rungs[i].fix, fixes[i]);
        assert_int_equal(p.rungs[i].terms.peak_bytes, peaks[i]);
        assert_int_equal(p.rungs[i].sc.tp, tps[i]);
        assert_int_equal(p.rungs[i].sc.dp * p.rungs[i].sc.tp * p.rungs[i].sc.pp, 8);
        assert_int_equal(plan_gpus(&p.rungs[i].sc), 8);
        assert_true(p.rungs[i].fits == (i == 7));
    }
    assert_int_equal(p.rungs[7].terms.states_bytes, 34488352768ull);
    assert_true(p.rungs[7].sc.sp);
    assert_int_equal(p.fix, PLAN_FIX_OFFLOAD);
    assert_int_equal(p.fix_rung, 7);
    assert_int_equal(p.fix_peak_bytes, 35394977792ull);
    assert_int_equal(p.fix_micro_batch, 1);
    /* Extra time of each cumulative rung (doc/model.md 12.3, 12.7): ZeRO-3's gathers and
     * reduce-scatter, 3 * 7/8 * 2 Psi bytes at 0.7 of 450 GB/s and a collective of 7 ring steps
     * (3.6 + 7 * 2.5 us) each for each of the 80 layers, hide behind half the micro-batch's
     * passes and add nothing; full checkpointing adds the forward again, under a third of the
     * step's compute (the backward's attention core and elementwise work are not rerun). */
    assert_close(p.rungs[2].cost.dp_s,
                 3 * (0.875 * 2 * 68976648192.0 / (450e9 * 0.7) + 80 * (3.6e-6 + 7 * 2.5e-6)),
                 1e-12);
    assert_true(p.rungs[2].cost.dp_exposed_s == 0 && p.rungs[2].extra_time_s == 0);
    assert_close(p.rungs[3].extra_time_s, p.rungs[3].cost.recompute_s, 1e-12);
    double share = p.rungs[3].cost.recompute_s / p.rungs[3].cost.compute_s;
    assert_true(share > 0.3 && share < 1.0 / 3);
    settings(&p, "zero=3 recompute=full tp=8 sp=yes offload=optimizer dp=1 gpus=8");
    rung_settings(&p, 0, "zero=1");
    rung_settings(&p, 2, "zero=3");
    rung_settings(&p, 4, "zero=3 recompute=full tp=2 sp=yes dp=4");
}

/* A pipeline rung re-assigns data-parallel GPUs too (doc/model.md 11.1): 70B on 16 x H100, tp = 8
 * in each node, dp = 2: ZeRO-3 leaves 16 Psi / 16 = 68,976,648,192 bytes of states, over the
 * 68 GB budget whatever the activations; pp = 2 takes the two nodes (dp = 1) and does not fit
 * either; the optimizer offload does. Every rung keeps the 16 GPUs. */
static void test_pp_rung_keeps_the_gpus(void **state)
{
    (void)state;
    struct scenario sc;
    llama2_70b(&sc);
    sc.dp = 2;
    sc.tp = 8;
    sc.sp = true;
    sc.global_batch = 2 * 8;
    struct plan p;
    assert_int_equal(plan_build(&sc, &p), 0);
    bool saw_pp = false;
    for (size_t i = 0; i < p.n_rungs; i++) {
        const struct scenario *r = &p.rungs[i].sc;
        assert_int_equal(plan_gpus(r), 16);
        if (p.rungs[i].fix == PLAN_FIX_PP) {
            saw_pp = true;
            assert_false(p.rungs[i].fits);
            assert_true(r->pp == 2 && r->dp == 1 && r->tp == 8);
        }
    }
    assert_true(saw_pp);
    assert_int_equal(p.fix, PLAN_FIX_OFFLOAD);
    settings(&p, "zero=3 recompute=full pp=2 offload=optimizer dp=1 gpus=16");
}

/* The pp rung does not need p to divide the layers: on 24 GB GPUs, where only the offload fits,
 * the ladder records pp 2 and pp 4, whose 78 layers split 19, 20, 20, 19 (doc/model.md 6.3), on
 * the same 32 GPUs. */
static void test_pp_rung_splits_unevenly(void **state)
{
    (void)state;
    struct scenario sc;
    llama2_70b(&sc);
    sc.layers = 78;
    sc.gpu_mem_bytes = 24000000000ull;
    sc.dp = 4;
    sc.tp = 8;
    sc.sp = true;
    sc.global_batch = 4 * 8;
    struct plan p;
    assert_int_equal(plan_build(&sc, &p), 0);
    bool saw_uneven = false;
    for (size_t i = 0; i < p.n_rungs; i++) {
        const struct scenario *r = &p.rungs[i].sc;
        assert_int_equal(plan_gpus(r), 32);
        if (p.rungs[i].fix == PLAN_FIX_PP && r->layers % r->pp != 0) {
            saw_uneven = true;
            assert_int_equal(pipeline_layers_of(r, 0), 78 / r->pp);
            assert_int_equal(pipeline_max_stage_layers(r), 78 / r->pp + 1);
        }
    }
    assert_true(saw_uneven);
}

/* 70B on one 80 GB GPU, no node to split over: nothing fits; the model states alone need
 * ceil(16 * 68,976,648,192 / 80e9) = ceil(13.8) = 14 GPUs (doc/model.md section 3.4). */
static void test_nothing_fits(void **state)
{
    (void)state;
    struct scenario sc;
    llama2_70b(&sc);
    sc.gpus_per_node = 1;
    struct plan p;
    assert_int_equal(plan_build(&sc, &p), 0);
    assert_int_equal(p.fix, PLAN_FIX_NOTHING);
    assert_string_equal(plan_fix_name(p.fix), "nothing");
    assert_int_equal(p.gpus_for_states, 14);
    assert_int_equal(p.n_rungs, 2);
    assert_int_equal(p.rungs[0].fix, PLAN_FIX_FULL_CKPT);
    assert_int_equal(p.rungs[0].terms.peak_bytes, 1110879371264ull);
    assert_int_equal(p.rungs[1].fix, PLAN_FIX_OFFLOAD);
    assert_int_equal(p.rungs[1].terms.peak_bytes, 283159592960ull);
    assert_false(p.rungs[1].fits);
    assert_int_equal(p.fix_rung, -1);
    assert_int_equal(p.fix_peak_bytes, 283159592960ull);
    settings(&p, "");
    rung_settings(&p, 1, "recompute=full offload=optimizer");
    rung_settings(&p, 2, "");
}

/* s = 512 on a small GPU: the re-picked micro-batch is thin (s b' < 4096 tokens). States
 * 20,984,463,360 (flash already on); budget 0.85 * 32e9 = 27.2e9 leaves 6,215,536,640; one
 * sequence costs 24 (34 * 512 * 2048 + 4 * 16 * 512) + 4 * 512 * 50257 = 856,424,448 +
 * 102,926,336 = 959,350,784, so b' = 6 (3072 tokens). */
static void test_thin_matmuls(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    sc.attention = ATTENTION_FLASH;
    sc.seq = 512;
    sc.micro_batch = 64;
    sc.gpu_mem_bytes = 32000000000ull;
    struct plan p;
    assert_int_equal(plan_build(&sc, &p), 0);
    assert_int_equal(p.fix, PLAN_FIX_MICRO_BATCH);
    assert_int_equal(p.fix_micro_batch, 6);
    assert_int_equal(p.fix_peak_bytes, 20984463360ull + 6 * 959350784ull);
    assert_true(p.rungs[p.fix_rung].thin_matmuls);
}

static void test_fix_settings_truncates(void **state)
{
    (void)state;
    struct scenario sc;
    llama2_70b(&sc);
    sc.dp = 8;
    struct plan p;
    assert_int_equal(plan_build(&sc, &p), 0);
    char buf[8];
    memset(buf, 'x', sizeof buf);
    assert_int_equal(plan_fix_settings(&p, buf, sizeof buf), -1);
    assert_string_equal(buf, "zero=3 "); /* of "zero=3 recompute=full tp=4 sp=yes" */
}

/* doc/model.md section 9.7: budget 68 GB - 20,984,463,360 of states = 47,015,536,640 free.
 * One sequence: plain 24 (34 sbh + 5as^2) + 4sV = 11,887,321,088 -> b <= 3; flash 3,837,403,136
 * -> 12; selective 24 * 34 sbh + 4sV = 3,834,257,408 -> 12; full (flash) 24 * 2sh + (34sh + 4as)
 * + 4sV = 755,769,344 -> 62. */
static void test_max_micro_batch_modes(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    uint64_t b[PLAN_MODES];
    plan_max_micro_batches(&sc, b);
    assert_int_equal(b[PLAN_MODE_PLAIN], 3);
    assert_int_equal(b[PLAN_MODE_FLASH], 12);
    assert_int_equal(b[PLAN_MODE_SELECTIVE], 12);
    assert_int_equal(b[PLAN_MODE_FULL], 62);
    assert_string_equal(plan_mode_name(PLAN_MODE_FULL), "full");
}

/* M(k) = ceil(L/k) c + k A (model_stage_act, the curve k_best minimises); doc/model.md
 * section 5.1 (L = 24, flash, b = 8). */
static void k_curve(const struct scenario *sc, uint64_t *m, size_t n)
{
    struct model_layer_act act;
    uint64_t c;
    assert_int_equal(model_layer_act(sc, &act), MODEL_OK);
    assert_int_equal(model_ckpt_bytes(sc, &c), MODEL_OK);
    for (size_t k = 1; k <= n; k++)
        assert_int_equal(model_stage_act(sc, act.total, c, sc->pp, k, &m[k - 1]), MODEL_OK);
}

static void test_k_curve(void **state)
{
    (void)state;
    struct scenario sc;
    scenario_lesson_example(&sc);
    sc.attention = ATTENTION_FLASH;
    uint64_t m[24];
    k_curve(&sc, m, 24);
    uint64_t c = 2ull * 33554432ull, A = 1141899264ull;
    assert_int_equal(m[0], 24 * c + A);    /* 82 sbh + 4asb */
    assert_int_equal(m[5], 4 * c + 6 * A); /* 212 sbh + 24asb */
    assert_int_equal(m[4], 5 * c + 5 * A); /* ceil(24/5) = 5 segments */
    assert_int_equal(m[23], c + 24 * A);
    uint64_t kb, mk;
    assert_int_equal(model_k_best(&sc, &kb, &mk), MODEL_OK);
    assert_int_equal(kb, 1);
    assert_int_equal(mk, m[0]);
    /* L = 80: k = 2 is the best (doc/model.md 5.1: M(2) = 148 sbh against M(1) = 194 sbh). */
    sc.layers = 80;
    uint64_t m80[80];
    k_curve(&sc, m80, 80);
    size_t best = 0;
    for (size_t k = 1; k < 80; k++)
        if (m80[k] < m80[best])
            best = k;
    assert_int_equal(best + 1, 2);
    assert_int_equal(m80[1], 40 * c + 2 * A);
    assert_int_equal(model_k_best(&sc, &kb, &mk), MODEL_OK);
    assert_int_equal(kb, 2);
    /* k beyond a stage's layers counts as the whole stage (a segment never crosses it). */
    uint64_t beyond;
    struct model_layer_act act;
    assert_int_equal(model_layer_act(&sc, &act), MODEL_OK);
    assert_int_equal(model_stage_act(&sc, act.total, c, 1, 81, &beyond), MODEL_OK);
    assert_int_equal(beyond, m80[79]);
}

/* ---- An independent implementation of doc/model.md section 11, for the cross-check. ----
 * Written from that text: a list of candidate changes in ladder order, each evaluated with
 * model_peak; the micro-batch re-pick by bisection over [1, b]; rung 4's order by cost_step. */

struct ref_rung {
    enum plan_fix fix;
    uint64_t b, peak, tp;
    bool fits;
};

struct ref_plan {
    struct ref_rung r[64];
    size_t n;
    enum plan_fix fix;
    uint64_t fix_peak, fix_b;
};

static bool ref_fits(const struct scenario *sc, uint64_t b, uint64_t *peak)
{
    struct scenario x = *sc;
    struct terms t;
    x.micro_batch = b;
    if (model_peak(&x, &t) != MODEL_OK)
        return false;
    if (peak)
        *peak = t.peak_bytes;
    return t.fits;
}

/* Does sc fit at micro-batch b with m micro-batches a step (its global batch b dp m)? */
static bool ref_fits_m(const struct scenario *sc, uint64_t b, uint64_t m)
{
    struct scenario x = *sc;
    x.global_batch = b * sc->dp * m;
    return ref_fits(&x, b, NULL);
}

/* Largest b' in [1, b] that fits, by bisection (the peak grows with b), with the scenario's m
 * micro-batches a step at b, at least 2 (section 11.2); 1 if none. */
static uint64_t ref_repick(const struct scenario *sc, uint64_t b)
{
    uint64_t per_step = b * sc->dp;
    uint64_t m = sc->global_batch ? sc->global_batch / per_step : sc->pp;
    m = m > 1 ? m : 2;
    if (!ref_fits_m(sc, 1, m))
        return 1;
    uint64_t lo = 1, hi = b;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (ref_fits_m(sc, mid, m))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Evaluates the settings of one rung; returns whether it fits. */
static bool ref_try(struct ref_plan *rp, const struct scenario *cur, enum plan_fix fix, bool repick,
                    uint64_t b0)
{
    struct ref_rung *r = &rp->r[rp->n++];
    r->fix = fix;
    r->b = repick ? ref_repick(cur, b0) : b0;
    r->tp = cur->tp;
    r->fits = ref_fits(cur, r->b, &r->peak);
    return r->fits;
}

static double ref_overhead(const struct scenario *sc)
{
    struct terms t;
    struct cost c;
    assert_int_equal(model_peak(sc, &t), MODEL_OK);
    cost_step(sc, &t, &c);
    return c.overhead_s;
}

/* Config's rules for a layout of tp, dp and pp: the expert groups (ep * etp, etp = tp by
 * default) tile dp * cp * tp; an HSDP group divides dp * cp. */
static bool ref_layout_ok(const struct scenario *sc, uint64_t tp, uint64_t dp, uint64_t pp)
{
    (void)pp;
    uint64_t etp = sc->etp ? sc->etp : tp, ep = sc->ep ? sc->ep : 1, cp = sc->cp ? sc->cp : 1;
    return (dp * cp * tp) % (etp * ep) == 0 && (!sc->zero_group || (dp * cp) % sc->zero_group == 0);
}

static bool ref_ladder(const struct scenario *sc, struct ref_plan *rp)
{
    struct scenario cur = *sc;
    uint64_t b0 = sc->micro_batch;
    /* 1. flash, when attention is plain and selective recomputation does not drop the core
     * (core_attn among its modules, the default). */
    bool core = sc->recompute == RECOMPUTE_SELECTIVE &&
                (sc->recompute_modules == 0 || (sc->recompute_modules & RECOMPUTE_CORE_ATTN));
    if (sc->attention == ATTENTION_PLAIN && !core) {
        cur.attention = ATTENTION_FLASH;
        if (ref_try(rp, &cur, PLAN_FIX_FLASH, false, b0))
            return true;
    }
    /* 2. zero1 then zero2, only with dp > 1. */
    if (sc->dp > 1 && sc->zero < 1) {
        cur.zero = 1;
        if (ref_try(rp, &cur, PLAN_FIX_ZERO1, false, b0))
            return true;
    }
    if (sc->dp > 1 && sc->zero < 2) {
        cur.zero = 2;
        if (ref_try(rp, &cur, PLAN_FIX_ZERO2, false, b0))
            return true;
    }
    /* 3. the largest b' < b that fits (from here on every rung re-picks b' <= b). */
    if (b0 > 1 && ref_try(rp, &cur, PLAN_FIX_MICRO_BATCH, true, b0))
        return true;
    /* 4. full_ckpt (every layer: block recomputation has layers left) and zero3, the cheaper
     * first, then both. */
    bool has_full =
        cur.recompute == RECOMPUTE_EVERY_K && cur.ckpt_every == 1 && cur.recompute_layers == 0;
    bool can_z3 = sc->dp > 1 && cur.zero < 3;
    struct scenario a = cur, z = cur;
    a.recompute = RECOMPUTE_EVERY_K;
    a.ckpt_every = 1;
    a.recompute_layers = 0;
    z.zero = 3;
    bool z3_first = can_z3 && (has_full || ref_overhead(&z) < ref_overhead(&a));
    for (int pass = 0; pass < 2; pass++) {
        bool do_z3 = (pass == 0) == z3_first;
        if (do_z3 && can_z3) {
            cur.zero = 3;
            if (ref_try(rp, &cur, PLAN_FIX_ZERO3, true, b0))
                return true;
        }
        if (!do_z3 && !has_full) {
            cur.recompute = RECOMPUTE_EVERY_K;
            cur.ckpt_every = 1;
            cur.recompute_layers = 0;
            if (ref_try(rp, &cur, PLAN_FIX_FULL_CKPT, true, b0))
                return true;
        }
    }
    /* 5. tp = 2, 4, 8, ... > tp, <= gpus_per_node, dividing heads and kv_heads, with sp, on the
     * same GPUs: t dp' = tp dp. */
    for (uint64_t t = 2; t <= sc->gpus_per_node && t <= 4096; t *= 2) {
        uint64_t gpus = sc->dp * sc->tp;
        if (t > sc->tp && sc->heads % t == 0 && sc->kv_heads % t == 0 && gpus % t == 0 &&
            ref_layout_ok(&cur, t, gpus / t, cur.pp)) {
            cur.tp = t;
            cur.dp = gpus / t;
            cur.sp = true;
            if (ref_try(rp, &cur, PLAN_FIX_TP, true, b0))
                return true;
        }
    }
    /* 6. pp = 2, 4, ... > pp, up to the layers, dividing dp pp, on the same GPUs; uneven stages
     * (ceil and floor) without vpp, with vpp q v dividing the layers; with the embedding's and
     * the loss's slots (6.3), q and q v dividing the layers and slots, a layer left on each end. */
    uint64_t e = sc->embedding_in_split, l = sc->loss_in_split, slots = sc->layers + e + l;
    for (uint64_t q = 2; q <= sc->layers; q *= 2) {
        uint64_t gpus = cur.dp * cur.pp, v = cur.vpp ? cur.vpp : 1;
        bool split = e || l ? slots % (q * v) == 0 && slots / q > e && slots / q > l
                            : v == 1 || sc->layers % (q * v) == 0;
        if (q > sc->pp && split && gpus % q == 0 && ref_layout_ok(&cur, cur.tp, gpus / q, q)) {
            cur.pp = q;
            cur.dp = gpus / q;
            if (ref_try(rp, &cur, PLAN_FIX_PP, true, b0))
                return true;
        }
    }
    /* 7. offload the optimizer states. */
    if (sc->offload == OFFLOAD_NONE) {
        cur.offload = OFFLOAD_OPTIMIZER;
        if (ref_try(rp, &cur, PLAN_FIX_OFFLOAD, true, b0))
            return true;
    }
    return false;
}

static void ref_plan(const struct scenario *sc, struct ref_plan *rp)
{
    memset(rp, 0, sizeof *rp);
    uint64_t peak;
    if (ref_fits(sc, sc->micro_batch, &peak)) {
        rp->fix = PLAN_FIX_NONE;
        rp->fix_peak = peak;
        rp->fix_b = sc->micro_batch;
        return;
    }
    bool found = ref_ladder(sc, rp);
    const struct ref_rung *last = &rp->r[rp->n - 1];
    rp->fix = found ? last->fix : PLAN_FIX_NOTHING;
    rp->fix_peak = rp->n ? last->peak : peak;
    rp->fix_b = rp->n ? last->b : sc->micro_batch;
}

/* Under the step peak a micro-batch re-picked below b runs with gradient accumulation, whose
 * earlier micro-batches' gradients are alive as the backward starts: the rung's b' is the
 * largest below b that fits with the global batch kept (doc/model.md 11.2), or 1 when none
 * does. On random scenarios without pipelines, gradients on demand and no accumulation of their
 * own. */
static void test_repick_accumulates(void **state)
{
    (void)state;
    uint64_t seed = 0xACC;
    int repicked = 0;
    for (int n = 0; n < 1500; n++) {
        struct scenario sc;
        random_scenario(&seed, &sc);
        sc.peak = PEAK_STEP;
        sc.grad_buffer = GRAD_ON_DEMAND;
        sc.pp = sc.vpp = 1; /* a pipeline's micro-batches in flight: test_crosscheck_random */
        rs_keep_split(&sc);
        sc.global_batch = sc.micro_batch * sc.dp;
        struct terms t;
        struct plan p;
        if (model_peak(&sc, &t) != MODEL_OK || t.fits)
            continue;
        assert_int_equal(plan_build(&sc, &p), 0);
        for (size_t i = 0; i < p.n_rungs; i++) {
            const struct plan_rung *r = &p.rungs[i];
            uint64_t b = r->sc.micro_batch;
            if (b >= sc.micro_batch)
                continue;
            repicked++;
            if (!r->fits) {
                assert_int_equal(b, 1);
                continue;
            }
            struct scenario above = r->sc;
            above.micro_batch = b + 1;
            if (above.micro_batch < sc.micro_batch)
                assert_false(model_peak(&above, &t) == MODEL_OK && t.fits);
        }
    }
    assert_true(repicked > 100);
}

/* plan_build against the reference on 800 random scenarios (fixed seed). */
static void test_crosscheck_random(void **state)
{
    (void)state;
    uint64_t seed = 0x5EC4;
    int compared = 0, with_ladder = 0, seen[PLAN_FIX_NOTHING + 1] = {0};
    for (int n = 0; n < 800; n++) {
        struct scenario sc;
        random_scenario(&seed, &sc);
        struct terms t;
        if (model_peak(&sc, &t) != MODEL_OK)
            continue;
        struct plan p;
        struct ref_plan rp;
        assert_int_equal(plan_build(&sc, &p), 0);
        ref_plan(&sc, &rp);
        compared++;
        seen[p.fix]++;
        with_ladder += p.n_rungs > 0;
        assert_int_equal(p.fix, rp.fix);
        assert_int_equal(p.fix_peak_bytes, rp.fix_peak);
        assert_int_equal(p.fix_micro_batch, rp.fix_b);
        assert_int_equal(p.n_rungs, rp.n);
        for (size_t i = 0; i < p.n_rungs; i++) {
            assert_int_equal(p.rungs[i].fix, rp.r[i].fix);
            assert_int_equal(p.rungs[i].terms.peak_bytes, rp.r[i].peak);
            assert_int_equal(p.rungs[i].sc.micro_batch, rp.r[i].b);
            assert_int_equal(p.rungs[i].sc.tp, rp.r[i].tp);
            assert_true(p.rungs[i].fits == rp.r[i].fits);
            assert_true(p.rungs[i].sc.micro_batch <= sc.micro_batch);
            bool thin = p.rungs[i].sc.micro_batch < sc.micro_batch &&
                        sc.seq * p.rungs[i].sc.micro_batch < PLAN_THIN_TOKENS;
            assert_true(p.rungs[i].thin_matmuls == thin);
        }
        assert_true(p.gpus_for_states ==
                    model_gpus_for_states(t.params, sc.precision, sc.gpu_mem_bytes));
        char buf[PLAN_SETTINGS_MAX];
        assert_int_equal(plan_fix_settings(&p, buf, sizeof buf), 0);
        size_t len = strlen(buf);
        assert_true((len == 0) == (p.fix == PLAN_FIX_NONE || p.fix == PLAN_FIX_NOTHING));
    }
    assert_true(compared > 700);
    assert_true(with_ladder > 200);
    /* The sample reaches the fits-as-is case, the nothing case and most rungs. */
    for (int f = PLAN_FIX_NONE; f <= PLAN_FIX_NOTHING; f++) {
        print_message("fix %-11s chosen %d times\n", plan_fix_name((enum plan_fix)f), seen[f]);
    }
    assert_true(seen[PLAN_FIX_NONE] > 0 && seen[PLAN_FIX_NOTHING] > 0);
    assert_true(seen[PLAN_FIX_MICRO_BATCH] > 0 && seen[PLAN_FIX_TP] > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lesson_quick_check),
        cmocka_unit_test(test_dp8_zero2_fits),
        cmocka_unit_test(test_dp8_micro_batch),
        cmocka_unit_test(test_dp8_b4_fits),
        cmocka_unit_test(test_7b),
        cmocka_unit_test(test_70b),
        cmocka_unit_test(test_nothing_fits),
        cmocka_unit_test(test_thin_matmuls),
        cmocka_unit_test(test_fix_settings_truncates),
        cmocka_unit_test(test_max_micro_batch_modes),
        cmocka_unit_test(test_k_curve),
        cmocka_unit_test(test_crosscheck_random),
        cmocka_unit_test(test_pp_rung_keeps_the_gpus),
        cmocka_unit_test(test_pp_rung_splits_unevenly),
        cmocka_unit_test(test_repick_accumulates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
