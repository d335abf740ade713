/* Tests of search (memfit search, doc/model.md section 11.5): the search against an
 * independent brute force (search_brute.h: every layout, b included, evaluated one by one) on
 * dense and MoE jobs, the properties its shortcuts rest on, pins, bad splits and the smallest
 * GPU count of a range. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "model/cost.h"
#include "model/model.h"
#include "random_scenario.h"
#include "plan/search.h"
#include "search_brute.h"
#include "small_gpt_job.h"

#define TOP 12

/* An H100 (configs/gpus.csv) for the cost model. */
static void h100(struct scenario *sc, double mem_gb)
{
    sc->gpu_mem_bytes = (uint64_t)(mem_gb * 1e9);
    sc->speed = (struct gpu_speed){989, 3.35, 450, 64, 1979};
    snprintf(sc->gpu_preset, sizeof sc->gpu_preset, "H100-80GB");
}

/* A small GPT: 8 layers of h = 512, 8 heads, s = 512, a global batch of 32 on 8 GPUs. */
static void job_gpt(struct scenario *sc)
{
    small_gpt_job(sc);
    snprintf(sc->name, sizeof sc->name, "gpt");
    h100(sc, 0.55);
}

/* A Llama with grouped-query attention, deep pipelines and a small batch (m below pp). */
static void job_llama(struct scenario *sc)
{
    job_gpt(sc);
    snprintf(sc->name, sizeof sc->name, "llama");
    sc->arch = ARCH_LLAMA;
    sc->dropout = false;
    sc->tied = false;
    sc->layers = 12;
    sc->heads = 8;
    sc->kv_heads = 2;
    sc->ffn = 1408;
    sc->vocab = 32000;
    sc->seq = 1024;
    sc->global_batch = 16;
    sc->gpus = 16;
    sc->gpus_per_node = 4;
    sc->precision = PRECISION_MEGATRON;
    sc->loss = LOSS_FUSED;
    sc->grad_buffer = GRAD_PERSISTENT;
    sc->optimizer_impl = OPTIMIZER_FUSED;
    h100(sc, 0.45);
}

/* A mixture of experts: a leading dense layer, 8 experts (top 2) and a shared one. */
static void job_moe(struct scenario *sc)
{
    job_gpt(sc);
    snprintf(sc->name, sizeof sc->name, "moe");
    sc->arch = ARCH_LLAMA;
    sc->dropout = false;
    sc->layers = 4;
    sc->hidden = 256;
    sc->heads = sc->kv_heads = 4;
    sc->ffn = 1024;
    sc->vocab = 16000;
    sc->seq = 256;
    sc->experts = 8;
    sc->top_k = 2;
    sc->expert_ffn = 512;
    sc->shared_ffn = 256;
    sc->dense_layers = 1;
    sc->global_batch = 16;
    sc->gpus = 8;
    h100(sc, 0.1);
}

/* Latent attention, a capacity factor (no step-time floor) and FP8 on 4 GPUs. */
static void job_mla(struct scenario *sc)
{
    job_moe(sc);
    snprintf(sc->name, sizeof sc->name, "mla");
    sc->kv_lora_rank = 64;
    sc->q_lora_rank = 96;
    sc->qk_nope_dim = 32;
    sc->qk_rope_dim = 16;
    sc->v_head_dim = 32;
    sc->experts = 4;
    sc->capacity_factor = 1.25;
    sc->router_bias = ROUTER_BIAS_SCORE;
    sc->fp8 = FP8_TENSOR;
    sc->gpus = 4;
    sc->global_batch = 12;
    h100(sc, 0.08);
}

/* LoRA on a Llama under the lesson's peak (the model states tensor by tensor). */
static void job_lora(struct scenario *sc)
{
    job_llama(sc);
    snprintf(sc->name, sizeof sc->name, "lora");
    sc->layers = 6;
    sc->gpus = 8;
    sc->gpus_per_node = 8;
    sc->global_batch = 24;
    sc->finetune = FINETUNE_LORA;
    sc->lora_rank = 8;
    sc->lora_targets = LORA_ALL_LINEAR;
    sc->precision = PRECISION_MIXED;
    sc->peak = PEAK_LESSON;
    h100(sc, 0.2);
}

/* Without gradient accumulation (m = 1) the largest b holds no gradients as its backward
 * starts (doc/model.md 10.2): with a fused optimizer and short sequences it fits where the b
 * before it, accumulating, does not. */
static void job_accumulation(struct scenario *sc)
{
    job_gpt(sc);
    snprintf(sc->name, sizeof sc->name, "accumulation");
    sc->seq = 32;
    sc->global_batch = 8;
    sc->gpus = 4;
    sc->optimizer_impl = OPTIMIZER_FUSED;
    h100(sc, 0.145);
}

/* Big layers on a pinned pipeline of 4 stages: the bubble, (pp - 1) / (m vpp) of a stage's
 * work, grows with b while the GEMMs get faster (doc/model.md 12). */
static void job_pipeline(struct scenario *sc)
{
    job_llama(sc);
    snprintf(sc->name, sizeof sc->name, "pipeline");
    sc->hidden = 8192;
    sc->heads = 64;
    sc->kv_heads = 8;
    sc->ffn = 28672;
    sc->layers = 8;
    sc->seq = 4096;
    sc->gpus = 8;
    sc->gpus_per_node = 8;
    sc->global_batch = 32;
    sc->pp = 4;
    sc->pinned = SCENARIO_PIN_PP;
    h100(sc, 60);
}

static void assert_same_layout(const struct search_layout *a, const struct search_layout *b)
{
    const struct scenario *x = &a->sc, *y = &b->sc;
    assert_int_equal(x->tp, y->tp);
    assert_int_equal(x->pp, y->pp);
    assert_int_equal(x->vpp, y->vpp);
    assert_int_equal(x->cp, y->cp);
    assert_int_equal(x->dp, y->dp);
    assert_int_equal(x->ep, y->ep);
    assert_int_equal(x->etp, y->etp);
    assert_int_equal(x->sp, y->sp);
    assert_int_equal(x->zero, y->zero);
    assert_int_equal(x->zero_group, y->zero_group);
    assert_int_equal(x->offload, y->offload);
    assert_int_equal(x->recompute, y->recompute);
    assert_int_equal(x->ckpt_every, y->ckpt_every);
    assert_int_equal(x->attention, y->attention);
    assert_int_equal(x->micro_batch, y->micro_batch);
    assert_int_equal(x->global_batch, y->global_batch);
    assert_int_equal(x->gpus, y->gpus);
    assert_int_equal(a->peak_bytes, b->peak_bytes);
    assert_int_equal(a->budget_bytes, b->budget_bytes);
    assert_true(a->step_time_s == b->step_time_s);
}

/* search_run and the brute force agree on the counts and on the whole top list, in order; the
 * job has layouts that fit and layouts that do not. */
static void agrees_with_brute_force(const struct scenario *job, size_t cap)
{
    struct search_layout top[TOP], want[TOP];
    struct search_result res;
    struct brute br;
    struct model_cache *memo = model_cache_new();
    assert_int_equal(search_run(job, cap, top, NULL, NULL, memo, &res), SEARCH_OK);
    brute_search(job, memo, cap, want, &br);
    model_cache_free(memo);
    assert_int_equal(res.layouts_tried, br.tried);
    assert_int_equal(res.layouts_fit, br.fit);
    assert_true(br.fit > 0 && br.fit < br.tried);
    assert_int_equal(res.n_top, br.n_top);
    for (size_t i = 0; i < res.n_top; i++)
        assert_same_layout(&top[i], &want[i]);
    /* The shortcuts: fewer layouts evaluated than tried (with b free). */
    assert_true(res.layouts_evaluated < res.layouts_tried ||
                (job->pinned & SCENARIO_PIN_MICRO_BATCH));
}

static void matches_brute_force_dense(void **state)
{
    (void)state;
    struct scenario job;
    job_gpt(&job);
    agrees_with_brute_force(&job, TOP);
    agrees_with_brute_force(&job, 1);
    job_llama(&job);
    agrees_with_brute_force(&job, TOP);
    job_lora(&job);
    agrees_with_brute_force(&job, TOP);
    job_pipeline(&job);
    agrees_with_brute_force(&job, TOP);
}

/* The zero-bubble and DualPipe schedules (doc/model.md 6.4) have less bubble than 1F1B: the
 * search's floors must not take 1F1B's for theirs. Each pinned, then all three searched. */
static void matches_brute_force_schedules(void **state)
{
    (void)state;
    struct scenario job;
    job_pipeline(&job);
    job.pinned |= SCENARIO_PIN_SCHEDULE;
    job.schedule = SCHEDULE_ZB1P;
    agrees_with_brute_force(&job, TOP);
    agrees_with_brute_force(&job, 1);
    job.schedule = SCHEDULE_DUALPIPE;
    agrees_with_brute_force(&job, TOP);
    agrees_with_brute_force(&job, 1);
    job.pinned &= ~(unsigned)SCENARIO_PIN_SCHEDULE; /* pp 4 still pinned */
    struct search_layout top[TOP];
    struct search_result res;
    assert_int_equal(search_run(&job, TOP, top, NULL, NULL, NULL, &res), SEARCH_OK);
    bool seen[SCHEDULES] = {false};
    for (size_t i = 0; i < res.n_top; i++)
        seen[top[i].sc.schedule] = true;
    assert_true(seen[SCHEDULE_ZB1P] || seen[SCHEDULE_DUALPIPE]);
    agrees_with_brute_force(&job, TOP);
}

/* The embedding's and the loss's slots in the split (doc/model.md 6.3): the search takes only the
 * pp and vpp that divide the layers and slots - interleaved, a chunk a layer short or empty - and
 * no block recomputation with a chunk a layer short. */
static void matches_brute_force_slots(void **state)
{
    (void)state;
    struct scenario job;
    job_pipeline(&job);
    job.layers = 6; /* 8 slots: pp 2 (3, 4 layers), pp 4 (1, 2, 2, 1) */
    job.pinned = 0;
    job.embedding_in_split = job.loss_in_split = true;
    agrees_with_brute_force(&job, TOP);
    job.layers = 7; /* the loss's slot alone: 4, 3 layers on 2 stages */
    job.embedding_in_split = false;
    agrees_with_brute_force(&job, TOP);
    job.recompute = RECOMPUTE_EVERY_K;
    job.ckpt_every = 1;
    job.recompute_layers = 1;
    job.pinned = SCENARIO_PIN_RECOMPUTE;
    agrees_with_brute_force(&job, TOP);
}

/* The host's memory checked (doc/model.md 12.5): an optimizer offload can then fail where no
 * offload fits, and the search must not bound one by the other; the brute force agrees for host
 * memories from less than any offload needs to more than all need. */
static void host_memory_matches_brute_force(void **state)
{
    (void)state;
    struct scenario job;
    job_llama(&job);
    for (uint64_t host = 1000000000ull; host <= 4000000000000ull; host *= 8) {
        job.host_mem_bytes = host;
        agrees_with_brute_force(&job, TOP);
    }
}

/* Beyond the monotone range: some layout fits at b = global_batch / dp (m = 1) but not at the b
 * before it, and the search counts and ranks it as the brute force does. */
static void largest_b_without_accumulation(void **state)
{
    (void)state;
    struct scenario job;
    job_accumulation(&job);
    agrees_with_brute_force(&job, TOP);
    bool seen = false;
    for (uint64_t dp = 1; dp <= 4 && !seen; dp *= 2) {
        for (unsigned zero = 0; zero <= 3 && !seen; zero++) {
            struct scenario sc = job;
            struct terms at_m1, at_m2;
            sc.dp = dp;
            sc.tp = 4 / dp;
            sc.sp = sc.tp > 1;
            sc.zero = zero;
            sc.attention = ATTENTION_FLASH;
            sc.micro_batch = 8 / dp;
            assert_int_equal(model_peak(&sc, &at_m1), MODEL_OK);
            sc.micro_batch = 4 / dp;
            assert_int_equal(model_peak(&sc, &at_m2), MODEL_OK);
            seen = at_m1.fits && !at_m2.fits;
        }
    }
    assert_true(seen);
}

static void matches_brute_force_moe(void **state)
{
    (void)state;
    struct scenario job;
    job_moe(&job);
    agrees_with_brute_force(&job, TOP);
    job_mla(&job);
    agrees_with_brute_force(&job, TOP);
}

/* Pinned choices are kept in every layout, and the counts are those of the pinned space. */
static void pins_are_kept(void **state)
{
    (void)state;
    struct scenario job;
    job_llama(&job);
    job.tp = 2;
    job.attention = ATTENTION_FLASH;
    job.zero = 1;
    job.micro_batch = 1;
    job.pinned =
        SCENARIO_PIN_TP | SCENARIO_PIN_ATTENTION | SCENARIO_PIN_ZERO | SCENARIO_PIN_MICRO_BATCH;
    agrees_with_brute_force(&job, TOP);
    struct search_layout top[TOP];
    struct search_result res;
    assert_int_equal(search_run(&job, TOP, top, NULL, NULL, NULL, &res), SEARCH_OK);
    assert_true(res.n_top > 0);
    for (size_t i = 0; i < res.n_top; i++) {
        assert_int_equal(top[i].sc.tp, 2);
        assert_int_equal(top[i].sc.attention, ATTENTION_FLASH);
        assert_int_equal(top[i].sc.zero, 1);
        assert_int_equal(top[i].sc.micro_batch, 1);
        assert_true(top[i].sc.sp);
    }
    /* An HSDP group, offload and recompute pinned, in an MoE job with ep and etp pinned. */
    job_moe(&job);
    job.zero_group = 2;
    job.offload = OFFLOAD_CHECKPOINTS;
    job.recompute = RECOMPUTE_EVERY_K;
    job.ckpt_every = 4; /* above the chunk's layers of every pipeline: as the chunk's */
    job.ep = 2;
    job.etp = 1;
    job.pinned = SCENARIO_PIN_ZERO_GROUP | SCENARIO_PIN_OFFLOAD | SCENARIO_PIN_RECOMPUTE |
                 SCENARIO_PIN_EP | SCENARIO_PIN_ETP;
    h100(&job, 0.3);
    agrees_with_brute_force(&job, TOP);
    assert_int_equal(search_run(&job, TOP, top, NULL, NULL, NULL, &res), SEARCH_OK);
    for (size_t i = 0; i < res.n_top; i++) {
        assert_int_equal(top[i].sc.zero_group, 2);
        assert_true(top[i].sc.zero >= 1);
        assert_int_equal(top[i].sc.ckpt_every, 4);
        assert_int_equal(top[i].sc.ep, 2);
        assert_int_equal(top[i].sc.etp, 1);
    }
}

/* Every top layout, evaluated on its own as eval would, fits with the same peak and time. */
static void top_layouts_fit_when_evaluated(void **state)
{
    (void)state;
    void (*jobs[])(struct scenario *) = {job_gpt,  job_llama,        job_moe,     job_mla,
                                         job_lora, job_accumulation, job_pipeline};
    for (size_t j = 0; j < sizeof jobs / sizeof jobs[0]; j++) {
        struct scenario job;
        jobs[j](&job);
        struct search_layout top[TOP];
        struct search_result res;
        assert_int_equal(search_run(&job, TOP, top, NULL, NULL, NULL, &res), SEARCH_OK);
        assert_int_equal(res.n_top, TOP);
        for (size_t i = 0; i < res.n_top; i++) {
            struct terms t;
            struct cost c;
            const struct scenario *sc = &top[i].sc;
            assert_int_equal(model_peak(sc, &t), MODEL_OK);
            assert_true(t.fits);
            assert_int_equal(t.peak_bytes, top[i].peak_bytes);
            assert_int_equal(t.budget_bytes, top[i].budget_bytes);
            cost_step(sc, &t, &c);
            assert_true(c.total_s == top[i].step_time_s);
            assert_int_equal(sc->dp * sc->tp * sc->pp * sc->cp, job.gpus);
            assert_int_equal(sc->global_batch % (sc->micro_batch * sc->dp), 0);
            assert_true(i == 0 || top[i - 1].step_time_s <= top[i].step_time_s);
        }
    }
}

/* 36 layouts of a one-GPU job of two layers, counted by hand (doc/model.md 11.5): b = 1 or 2;
 * ZeRO on one GPU is one stage; offload none and optimizer each with recompute none (plain,
 * flash), selective (plain), k = 1 and 2 (plain, flash): 7; checkpoints with k = 1, 2: 4. */
static void counts_by_hand(void **state)
{
    (void)state;
    struct scenario job;
    job_gpt(&job);
    job.layers = 2;
    job.gpus = 1;
    job.global_batch = 2;
    struct search_result res;
    assert_int_equal(search_run(&job, 0, NULL, NULL, NULL, NULL, &res), SEARCH_OK);
    assert_int_equal(res.layouts_tried, 2 * (7 + 7 + 4));
    assert_int_equal(res.n_top, 0);
}

/* The counts do not depend on the top list or the callback; every point reported is a layout
 * evaluated, fitting exactly when its peak is within the budget. */
struct points {
    uint64_t n, fit;
    bool consistent;
};

static void count_point(void *ctx, const struct search_point *p)
{
    struct points *pts = ctx;
    pts->n++;
    pts->fit += p->fits;
    if (p->fits != (p->peak_bytes <= p->budget_bytes) || !(p->step_time_s > 0) ||
        p->tp * p->pp * p->cp * p->dp != 16)
        pts->consistent = false;
}

static void points_are_evaluated_layouts(void **state)
{
    (void)state;
    struct scenario job;
    job_llama(&job);
    struct search_result with, without;
    struct points pts = {0, 0, true};
    struct search_layout top[TOP];
    assert_int_equal(search_run(&job, TOP, top, count_point, &pts, NULL, &with), SEARCH_OK);
    assert_int_equal(search_run(&job, 0, NULL, NULL, NULL, NULL, &without), SEARCH_OK);
    assert_int_equal(with.layouts_tried, without.layouts_tried);
    assert_int_equal(with.layouts_fit, without.layouts_fit);
    assert_true(pts.consistent);
    assert_true(pts.n > 0 && pts.n <= with.layouts_evaluated);
    assert_true(pts.fit > 0 && pts.fit <= with.layouts_fit);
}

static void ignore_point(void *ctx, const struct search_point *p)
{
    (void)p;
    ++*(uint64_t *)ctx;
}

/* The report's search (a points callback: the enumeration's order, every fitting layout timed)
 * and the plain one (the structures fastest floor first, those their floor rules out of the full
 * top list only counted; doc/model.md 11.5) keep the same counts and the same top list. */
static void search_orders_agree(void **state)
{
    (void)state;
    void (*jobs[])(struct scenario *) = {job_llama, job_moe, job_pipeline};
    for (size_t j = 0; j < sizeof jobs / sizeof jobs[0]; j++) {
        for (size_t cap = 1; cap <= TOP; cap += TOP - 1) {
            struct scenario job;
            jobs[j](&job);
            struct search_layout a[TOP], b[TOP];
            struct search_result ordered, enumerated;
            uint64_t points = 0;
            assert_int_equal(search_run(&job, cap, a, NULL, NULL, NULL, &ordered), SEARCH_OK);
            assert_int_equal(search_run(&job, cap, b, ignore_point, &points, NULL, &enumerated),
                             SEARCH_OK);
            assert_int_equal(ordered.layouts_tried, enumerated.layouts_tried);
            assert_int_equal(ordered.layouts_fit, enumerated.layouts_fit);
            assert_int_equal(ordered.n_top, enumerated.n_top);
            assert_int_equal(ordered.n_top, cap);
            for (size_t i = 0; i < ordered.n_top; i++)
                assert_same_layout(&a[i], &b[i]);
            assert_true(points > 0 && points <= enumerated.layouts_evaluated);
        }
    }
}

/* No layout at all, and none that keeps the pins (the messages of memfit search). */
static void bad_splits(void **state)
{
    (void)state;
    struct scenario job;
    struct search_result res;
    struct search_layout top[TOP];
    job_gpt(&job);
    job.gpus = 9; /* tp, cp 1; pp 1 or 3 (9 is more than the 8 layers): dp 9 or 3 does not
                   * divide the global batch of 32 */
    assert_int_equal(search_run(&job, TOP, top, NULL, NULL, NULL, &res), SEARCH_NO_SPLIT);
    assert_int_equal(res.layouts_tried, 0);
    job.gpus = 8;
    job.tp = 3; /* does not divide 8 */
    job.pinned = SCENARIO_PIN_TP;
    assert_int_equal(search_run(&job, TOP, top, NULL, NULL, NULL, &res), SEARCH_PIN_CLASH);
    job.tp = 1;
    job.dp = 16; /* more than the GPUs */
    job.pinned = SCENARIO_PIN_DP;
    assert_int_equal(search_run(&job, TOP, top, NULL, NULL, NULL, &res), SEARCH_PIN_CLASH);
    job.dp = 1;
    job.micro_batch = 64; /* b dp above the global batch */
    job.pinned = SCENARIO_PIN_MICRO_BATCH;
    assert_int_equal(search_run(&job, TOP, top, NULL, NULL, NULL, &res), SEARCH_PIN_CLASH);
    job.pinned = 0;
    job.gpus = 0; /* no gpus: dp tp pp cp of the job, here 1 * 1 * 1 * 1 */
    assert_int_equal(search_run(&job, TOP, top, NULL, NULL, NULL, &res), SEARCH_OK);
    assert_true(res.layouts_tried > 0);
    assert_int_equal(top[0].sc.gpus, 1);
}

/* A million layers make as many k a structure: the space is counted, not searched. */
static void too_large_a_space(void **state)
{
    (void)state;
    struct scenario job;
    job_gpt(&job);
    job.layers = 1000000;
    struct search_result res;
    struct search_layout top[TOP];
    assert_int_equal(search_run(&job, TOP, top, NULL, NULL, NULL, &res), SEARCH_TOO_LARGE);
    assert_true(res.layouts_tried > (1u << 24));
    assert_int_equal(res.layouts_evaluated, 0);
    assert_int_equal(res.n_top, 0);
    assert_int_equal(search_min_gpus(&job, 1, 64, TOP, top, NULL, &res), 0);
}

/* A job without a global batch keeps eval's default for its own columns, b dp pp. */
static void global_batch_default(void **state)
{
    (void)state;
    struct scenario job, with;
    job_gpt(&job);
    job.global_batch = 0;
    job.micro_batch = 2;
    job.tp = 2;
    job.pp = 2; /* dp = 8 / 4 = 2: b dp pp = 8 */
    with = job;
    with.global_batch = 8;
    struct search_result a, b;
    struct search_layout ta[TOP], tb[TOP];
    assert_int_equal(search_run(&job, TOP, ta, NULL, NULL, NULL, &a), SEARCH_OK);
    assert_int_equal(search_run(&with, TOP, tb, NULL, NULL, NULL, &b), SEARCH_OK);
    assert_int_equal(a.layouts_tried, b.layouts_tried);
    assert_int_equal(a.layouts_fit, b.layouts_fit);
    assert_int_equal(a.n_top, b.n_top);
    for (size_t i = 0; i < a.n_top; i++) {
        assert_same_layout(&ta[i], &tb[i]);
        assert_int_equal(ta[i].sc.global_batch, 8);
    }
}

/* The smallest count of a range with a fitting layout: none below it fits, and the result is
 * search_run's there. */
static void min_gpus_over_a_range(void **state)
{
    (void)state;
    struct scenario job;
    job_llama(&job);
    job.gpus_per_node = 2;
    h100(&job, 0.25);
    struct search_layout top[TOP], want[TOP];
    struct search_result res, at;
    uint64_t g = search_min_gpus(&job, 1, 16, TOP, top, NULL, &res);
    assert_true(g > 2 && g <= 16 && g % 2 == 0);
    for (uint64_t n = 2; n <= g; n += 2) {
        job.gpus = n;
        enum search_status st = search_run(&job, TOP, want, NULL, NULL, NULL, &at);
        if (n < g)
            assert_true(st != SEARCH_OK || at.layouts_fit == 0);
    }
    assert_int_equal(res.layouts_tried, at.layouts_tried);
    assert_int_equal(res.layouts_fit, at.layouts_fit);
    assert_int_equal(res.n_top, at.n_top);
    for (size_t i = 0; i < res.n_top; i++)
        assert_same_layout(&top[i], &want[i]);
    /* A range below the answer: 0, and no layouts. */
    assert_int_equal(search_min_gpus(&job, 1, g - 1, TOP, top, NULL, &res), 0);
    assert_int_equal(res.n_top, 0);
}

/* A range too wide to search whole stops at the work limit and says where, well short of its
 * end; one it can search whole says 0. */
static void min_gpus_work_is_bounded(void **state)
{
    (void)state;
    struct scenario job;
    job_llama(&job);
    h100(&job, 1e-7); /* a hundred bytes: nothing ever fits */
    struct search_layout top[TOP];
    struct search_result res;
    assert_int_equal(search_min_gpus(&job, 8, UINT64_C(1000000000000), TOP, top, NULL, &res), 0);
    assert_true(res.range_last >= 8 && res.range_last < UINT64_C(100000000));
    assert_int_equal(res.range_last % job.gpus_per_node, 0);
    assert_int_equal(res.n_top, 0);
    assert_int_equal(search_min_gpus(&job, 8, 64, TOP, top, NULL, &res), 0);
    assert_int_equal(res.range_last, 0);
}

/* GPU counts and global batches near 2^64 are answered from their factors (a prime: no split). */
static void huge_counts_answered(void **state)
{
    (void)state;
    struct scenario job;
    job_llama(&job);
    h100(&job, 80);
    struct search_layout top[TOP];
    struct search_result res;
    job.gpus = 18446744073709551557u; /* prime: dp alone, which must divide the global batch */
    assert_int_equal(search_run(&job, TOP, top, NULL, NULL, NULL, &res), SEARCH_NO_SPLIT);
    job.gpus = UINT64_MAX;
    job.global_batch = UINT64_MAX; /* 3 5 17 257 641 65537 6700417 */
    assert_int_equal(search_run(&job, TOP, top, NULL, NULL, NULL, &res), SEARCH_OK);
    assert_true(res.layouts_tried > 0);
}

/* ---- the properties the shortcuts rest on (doc/model.md 11.5), on random layouts ---- */

/* A random layout of a random model, MoE in a third of them; `b` over the valid micro-batches of
 * its global batch. */
static void random_layout(uint64_t *st, struct scenario *sc)
{
    random_scenario(st, sc);
    sc->peak = rs_range(st, 0, 3) ? PEAK_STEP : PEAK_LESSON;
    sc->loss = (enum loss_impl)rs_range(st, 0, 1);
    sc->grad_buffer = (enum grad_buffer)rs_range(st, 0, 1);
    sc->optimizer_impl = (enum optimizer_impl)rs_range(st, 0, 2);
    if (sc->arch == ARCH_LLAMA && rs_range(st, 0, 2) == 0) {
        sc->experts = rs_range(st, 0, 1) ? 8 : 16;
        sc->top_k = 2;
        sc->expert_ffn = sc->hidden;
        sc->dense_layers = rs_range(st, 0, 1);
        sc->ep = sc->dp * sc->tp % 4 == 0 && rs_range(st, 0, 1) ? 4 : 1;
        sc->etp = sc->ep == 4 ? 1 : 0;
    }
    sc->global_batch = sc->dp * sc->pp * rs_pick(st, (const uint64_t[]){2, 4, 8, 16, 12}, 5);
    snprintf(sc->gpu_preset, sizeof sc->gpu_preset, "%s", rs_range(st, 0, 1) ? "H100-80GB" : "");
}

/* Whether b is a valid micro-batch of sc's global batch (interleaving included). */
static bool valid_b(const struct scenario *sc, uint64_t b)
{
    uint64_t step = b * sc->dp;
    return sc->global_batch % step == 0 &&
           (sc->vpp <= 1 || (sc->global_batch / step) % sc->pp == 0);
}

/* In the monotone range - m >= 2 and every stage's in-flight count at its cap - the peak does
 * not fall as b grows, so the fitting b are a prefix. */
static void peak_grows_with_b(void **state)
{
    (void)state;
    uint64_t st = 11;
    int checked = 0;
    for (int n = 0; n < 600; n++) {
        struct scenario sc;
        random_layout(&st, &sc);
        uint64_t vpp = sc.vpp ? sc.vpp : 1, cap = vpp > 1 ? (vpp + 1) * sc.pp - 1 : sc.pp;
        uint64_t last = 0;
        for (uint64_t b = 1; b * sc.dp <= sc.global_batch; b++) {
            uint64_t m = sc.global_batch / (b * sc.dp);
            if (!valid_b(&sc, b) || m < 2 || (vpp > 1 ? m * vpp <= cap : m < cap))
                continue;
            struct terms t;
            sc.micro_batch = b;
            if (model_peak(&sc, &t) != MODEL_OK)
                break;
            assert_true(t.peak_bytes >= last);
            last = t.peak_bytes;
            checked++;
        }
    }
    assert_true(checked > 1000);
}

/* A peak with another attention and recomputation, in the monotone range at another b or beyond
 * it at the same b, answers whether a layout fits as its own peak does (model_fits_like,
 * doc/model.md 8.3, 11.5): an untimed structure of the search answers its families' fits from
 * one peak of each ZeRO stage and offload. Budgets and host memories around the first b's peak,
 * so that every answer comes. */
static void fits_like_another_layout(void **state)
{
    (void)state;
    uint64_t st = 14;
    int fit = 0, not_fit = 0, host_bound = 0, beyond = 0;
    for (int n = 0; n < 800; n++) {
        struct scenario sc, other;
        random_layout(&st, &sc);
        bool host = rs_range(&st, 0, 1);
        other = sc;
        other.attention = (enum attention)rs_range(&st, 0, 1);
        if (sc.offload != OFFLOAD_CHECKPOINTS && rs_range(&st, 0, 1)) {
            other.recompute = rs_range(&st, 0, 1) ? RECOMPUTE_NONE : RECOMPUTE_SELECTIVE;
            other.ckpt_every = 0;
        } else if (other.recompute == RECOMPUTE_EVERY_K) {
            other.ckpt_every = rs_range(&st, 1, sc.layers);
        }
        uint64_t vpp = sc.vpp ? sc.vpp : 1, cap = vpp > 1 ? (vpp + 1) * sc.pp - 1 : sc.pp;
        uint64_t first = 0;
        for (uint64_t b = 1; b * sc.dp <= sc.global_batch; b++) {
            uint64_t m = sc.global_batch / (b * sc.dp);
            if (!valid_b(&sc, b))
                continue;
            bool ranged = m >= 2 && (vpp > 1 ? m * vpp > cap : m >= cap);
            struct scenario at = sc;
            struct terms t, like;
            at.micro_batch = b;
            if (first == 0) {
                if (!ranged || model_peak(&at, &t) != MODEL_OK)
                    continue;
                first = b;
                sc.gpu_mem_bytes = t.peak_bytes + rs_range(&st, 0, 1) * t.peak_bytes / 4;
                sc.reserve = other.reserve = 0;
                sc.host_mem_bytes = host ? t.host_node_bytes : 0;
                other.gpu_mem_bytes = at.gpu_mem_bytes = sc.gpu_mem_bytes;
                other.host_mem_bytes = at.host_mem_bytes = sc.host_mem_bytes;
                at.reserve = 0;
            }
            bool ok = model_peak(&at, &t) == MODEL_OK, fits = ok && t.fits;
            other.micro_batch = ranged ? first : b;
            if (model_peak(&other, &like) != MODEL_OK)
                continue;
            at.micro_batch = other.micro_batch;
            assert_int_equal(model_fits_like(&at, NULL, &like, b), fits);
            fit += fits;
            not_fit += !fits;
            host_bound += ok && !t.host_fits;
            beyond += !ranged;
        }
    }
    assert_true(fit > 300 && not_fit > 300 && host_bound > 10 && beyond > 100);
}

/* A higher ZeRO stage, the optimizer offloaded or the checkpoints offloaded never hold more,
 * at any b; the optimizer step's phase (the states floor) never exceeds the peak, and does not
 * depend on attention or recomputation. */
static void dominance_and_states_floor(void **state)
{
    (void)state;
    uint64_t st = 12;
    for (int n = 0; n < 1500; n++) {
        struct scenario sc, other;
        struct terms t, u;
        random_layout(&st, &sc);
        sc.offload = OFFLOAD_NONE;
        if (model_peak(&sc, &t) != MODEL_OK)
            continue;
        other = sc;
        if (sc.zero < 3) {
            other.zero++;
            assert_int_equal(model_peak(&other, &u), MODEL_OK);
            assert_true(u.peak_bytes <= t.peak_bytes);
            other.zero--;
        }
        other.offload = OFFLOAD_OPTIMIZER;
        assert_int_equal(model_peak(&other, &u), MODEL_OK);
        assert_true(u.peak_bytes <= t.peak_bytes);
        if (sc.recompute == RECOMPUTE_EVERY_K) {
            other.offload = OFFLOAD_CHECKPOINTS;
            assert_int_equal(model_peak(&other, &u), MODEL_OK);
            assert_true(u.peak_bytes <= t.peak_bytes);
        }
        uint64_t floor = 0;
        for (unsigned i = 0; i < t.n_stages; i++) {
            const struct model_gpu *g = &t.stage[i];
            uint64_t v =
                sc.peak == PEAK_STEP ? g->step.phase_bytes[STEP_OPTIMIZER] : g->states_bytes;
            floor = v > floor ? v : floor;
        }
        assert_true(floor <= t.peak_bytes);
        other = sc;
        other.attention = ATTENTION_FLASH;
        other.recompute = RECOMPUTE_NONE;
        other.ckpt_every = 0;
        assert_int_equal(model_peak(&other, &u), MODEL_OK);
        for (unsigned i = 0; i < t.n_stages; i++) {
            assert_int_equal(u.stage[i].states_bytes, t.stage[i].states_bytes);
            if (sc.peak == PEAK_STEP)
                assert_int_equal(u.stage[i].step.phase_bytes[STEP_OPTIMIZER],
                                 t.stage[i].step.phase_bytes[STEP_OPTIMIZER]);
        }
    }
}

/* The step-time floor (doc/model.md 11.5): at a fixed global batch, for b from the smallest
 * fitting one, b_first, to the largest, b_last, every step time is at least
 * (work_last + cp_first) (1 + (pp - 1) / (m_first vpp)) + dp_last, with work = compute +
 * recompute + tp + ep + pp sends and dp the exposed data-parallel time, the least over the stages
 * the cost model may read - both not rising with b - and cp the exposed context-parallel traffic,
 * not falling; beyond a rounding margin. Without a capacity factor, as the search uses it. */
#define FLOOR_BS 64

static void step_floor_holds(void **state)
{
    (void)state;
    uint64_t st = 13;
    int checked = 0;
    for (int n = 0; n < 400; n++) {
        struct scenario sc;
        random_layout(&st, &sc);
        double total[FLOOR_BS], work[FLOOR_BS], cp[FLOOR_BS], dp[FLOOR_BS], m[FLOOR_BS];
        int nb = 0;
        for (uint64_t b = 1; b * sc.dp <= sc.global_batch && nb < FLOOR_BS; b++) {
            struct terms t;
            struct cost c;
            sc.micro_batch = b;
            if (!valid_b(&sc, b) || model_peak(&sc, &t) != MODEL_OK)
                continue;
            cost_step(&sc, &t, &c);
            total[nb] = c.total_s;
            work[nb] = c.compute_s + c.recompute_s + c.tp_s + c.ep_s + c.pp_s;
            cp[nb] = c.cp_s;
            dp[nb] = c.dp_exposed_s;
            m[nb] = (double)(sc.global_batch / (b * sc.dp));
            for (unsigned i = 0; i < t.n_stages; i++) {
                t.peak_stage = i;
                cost_step(&sc, &t, &c);
                dp[nb] = c.dp_exposed_s < dp[nb] ? c.dp_exposed_s : dp[nb];
            }
            nb++;
        }
        double vpp = (double)(sc.vpp ? sc.vpp : 1), pp = (double)sc.pp;
        for (int first = 0; first < nb; first++)
            for (int last = first; last < nb; last++) {
                double floor =
                    (work[last] + cp[first]) * (1 + (pp - 1) / (m[first] * vpp)) + dp[last];
                for (int b = first; b <= last; b++)
                    assert_true(total[b] >= floor * (1 - 1e-9));
                checked++;
            }
    }
    assert_true(checked > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matches_brute_force_dense),
        cmocka_unit_test(matches_brute_force_schedules),
        cmocka_unit_test(matches_brute_force_slots),
        cmocka_unit_test(host_memory_matches_brute_force),
        cmocka_unit_test(matches_brute_force_moe),
        cmocka_unit_test(largest_b_without_accumulation),
        cmocka_unit_test(pins_are_kept),
        cmocka_unit_test(top_layouts_fit_when_evaluated),
        cmocka_unit_test(counts_by_hand),
        cmocka_unit_test(points_are_evaluated_layouts),
        cmocka_unit_test(search_orders_agree),
        cmocka_unit_test(bad_splits),
        cmocka_unit_test(too_large_a_space),
        cmocka_unit_test(global_batch_default),
        cmocka_unit_test(min_gpus_over_a_range),
        cmocka_unit_test(min_gpus_work_is_bounded),
        cmocka_unit_test(huge_counts_answered),
        cmocka_unit_test(peak_grows_with_b),
        cmocka_unit_test(fits_like_another_layout),
        cmocka_unit_test(dominance_and_states_floor),
        cmocka_unit_test(step_floor_holds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
