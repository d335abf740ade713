/*
 * search_fixture: made-up results of memfit search for the tests of its report
 * (test_report_search.c, and test_phrases.c, whose every phrase must be used): three jobs that
 * between them take every branch that chooses a phrase of report_search.c.
 *
 *   dense-fits   GPT 1.3B with FP8 on 64 H100s: layouts over tp and pp 1, 2, 4, 8, step times
 *                over more than a decade (a log axis), peaks to 5x the GPU (a broken axis),
 *                four fastest layouts with each kind of offload, nothing pinned;
 *   moe-oom      a custom mixture of experts on 16 unnamed GPUs, LoRA: no layout fits, step
 *                times within a factor of two (a linear axis), 20 values of pp (more than the
 *                map shows), choices pinned;
 *   no-gpus      no GPU count of the range fits: no layout, no point.
 *
 * The points are a deterministic function of their index, given to each job's plot as memfit
 * search gives them (noted, then binned: searchplot.h) and not kept; n is the first job's count
 * (the second has a tenth of it). Everything is the fixture's (about 330 KB: allocate it).
 */
#ifndef MEMFIT_SEARCH_FIXTURE_H
#define MEMFIT_SEARCH_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "report/report_search.h"
#include "model/scenario.h"
#include "plan/search.h"

#define SEARCH_FIXTURE_JOBS 3
#define SEARCH_FIXTURE_TOP 4

struct search_fixture {
    struct scenario jobs[SEARCH_FIXTURE_JOBS];
    struct search_result results[SEARCH_FIXTURE_JOBS];
    struct search_layout top[SEARCH_FIXTURE_TOP];
    struct report_search_plot plots[SEARCH_FIXTURE_JOBS - 1]; /* the third job has none */
    struct report_search_curve curve;                         /* the first job's */
    struct report_search_job rj[SEARCH_FIXTURE_JOBS];
};

/* A number in [0, 1) from i and a salt: the same on every run. */
static inline double search_fixture_u(uint64_t i, uint64_t salt)
{
    uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^ salt * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 31;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 29;
    return (double)(x >> 11) / 9007199254740992.0;
}

/* Point i of the first job: the fastest layouts first (f->top set). */
static inline struct search_point search_fixture_dense_point(const struct search_fixture *f,
                                                             size_t i)
{
    uint64_t budget = 68000000000ull;
    if (i < SEARCH_FIXTURE_TOP) /* the fastest are points too */
        return (struct search_point){.tp = f->top[i].sc.tp,
                                     .pp = f->top[i].sc.pp,
                                     .cp = 1,
                                     .dp = f->top[i].sc.dp,
                                     .peak_bytes = f->top[i].peak_bytes,
                                     .budget_bytes = budget,
                                     .step_time_s = f->top[i].step_time_s,
                                     .fits = true};
    static const uint64_t degrees[] = {1, 2, 4, 8};
    struct search_point p = {0};
    p.tp = degrees[i % 4];
    p.pp = degrees[(i / 4) % 4];
    p.dp = 64 / (p.tp * p.pp);
    p.cp = 1;
    /* Faster with more tensor parallelism, slower with the bubble; up to 3x apart for the other
     * choices, so that the slowest is about 20x the fastest. */
    double t = 2.0 * (1 + 0.35 * (double)p.pp) / (1 + 0.1 * (double)p.tp);
    p.step_time_s = t * (1 + 2.5 * search_fixture_u(i, 1)) * (i % 7 == 0 ? 2.5 : 1);
    double peak =
        12e9 + 380e9 * search_fixture_u(i, 2) * search_fixture_u(i, 3) / (double)(p.tp * p.pp);
    p.peak_bytes = (uint64_t)peak;
    p.budget_bytes = budget;
    p.fits = p.peak_bytes <= budget;
    return p;
}

/* Point i of the second job. */
static inline struct search_point search_fixture_moe_point(const struct search_fixture *f, size_t i)
{
    (void)f;
    struct search_point p = {0};
    p.tp = 2;
    p.pp = 1 + i % 20; /* 20 values: the map shows 16 */
    p.dp = 1;
    p.cp = 1;
    p.step_time_s = 3.0 + 2.5 * search_fixture_u(i, 4);
    p.peak_bytes = 70000000000ull + (uint64_t)(80e9 * search_fixture_u(i, 5));
    p.budget_bytes = 68000000000ull;
    p.fits = false;
    return p;
}

/* The plot of job j from its points point(f, 0..n), as memfit search makes it. */
static inline void search_fixture_plot(struct search_fixture *f, size_t j, size_t n,
                                       struct search_point (*point)(const struct search_fixture *,
                                                                    size_t))
{
    struct report_search_plot *plot = &f->plots[j];
    report_search_plot_init(plot);
    for (size_t i = 0; i < n; i++) {
        struct search_point p = point(f, i);
        report_search_plot_note(plot, &p);
    }
    report_search_plot_axes(plot, f->jobs[j].gpu_mem_bytes);
    for (size_t i = 0; i < n; i++) {
        struct search_point p = point(f, i);
        report_search_plot_bin(plot, p.step_time_s, p.peak_bytes, p.fits);
    }
}

static inline void search_fixture_dense(struct search_fixture *f, size_t n)
{
    struct scenario *job = &f->jobs[0];
    scenario_lesson_example(job);
    snprintf(job->name, sizeof job->name, "dense-fits");
    snprintf(job->model_preset, sizeof job->model_preset, "gpt-1.3b");
    snprintf(job->gpu_preset, sizeof job->gpu_preset, "H100-80GB");
    job->fp8 = FP8_TENSOR;
    job->gpus = 64;
    job->global_batch = 512;
    uint64_t budget = 68000000000ull;
    static const enum offload offloads[SEARCH_FIXTURE_TOP] = {OFFLOAD_NONE, OFFLOAD_OPTIMIZER,
                                                              OFFLOAD_CHECKPOINTS, OFFLOAD_NONE};
    for (size_t i = 0; i < SEARCH_FIXTURE_TOP; i++) {
        struct search_layout *l = &f->top[i];
        l->sc = *job;
        snprintf(l->sc.name, sizeof l->sc.name, "dense-fits-%zu", i + 1);
        l->sc.gpus = 0;
        l->sc.tp = i < 2 ? 8 : 4;
        l->sc.pp = 2;
        l->sc.vpp = i == 1 ? 2 : 1;
        l->sc.dp = 64 / (l->sc.tp * l->sc.pp);
        l->sc.sp = true;
        l->sc.zero = (unsigned)i % 4;
        l->sc.attention = ATTENTION_FLASH;
        l->sc.recompute = i == 2   ? RECOMPUTE_EVERY_K
                          : i == 3 ? RECOMPUTE_SELECTIVE
                                   : RECOMPUTE_NONE;
        l->sc.ckpt_every = 1;
        l->sc.offload = offloads[i];
        l->sc.micro_batch = i + 1;
        l->peak_bytes = 61200000000ull + 1000000000ull * i;
        l->budget_bytes = budget;
        l->step_time_s = 1.234 + 0.1 * (double)i;
    }
    search_fixture_plot(f, 0, n, search_fixture_dense_point);
    f->results[0] = (struct search_result){
        .layouts_tried = 123456789, .layouts_fit = 4567890, .n_top = SEARCH_FIXTURE_TOP};
    f->rj[0] = (struct report_search_job){.name = job->name,
                                          .job = job,
                                          .result = &f->results[0],
                                          .top = f->top,
                                          .plot = &f->plots[0],
                                          .gpus = 64,
                                          .curve = &f->curve};
    /* --gpus-range: its scaling curve, 64 to 512 GPUs, dp doubled */
    f->curve.n = 4;
    for (size_t i = 0; i < f->curve.n; i++) {
        f->curve.gpus[i] = 64u << i;
        f->curve.best[i] = f->top[0];
        f->curve.best[i].sc.dp = f->top[0].sc.dp << i;
        f->curve.best[i].step_time_s =
            f->top[0].step_time_s / (double)(1u << i) * (1 + 0.1 * (double)i);
    }
}

static inline void search_fixture_moe(struct search_fixture *f, size_t n)
{
    struct scenario *job = &f->jobs[1];
    scenario_lesson_example(job);
    snprintf(job->name, sizeof job->name, "moe-oom");
    job->arch = ARCH_LLAMA;
    job->dropout = false;
    job->kv_heads = 4;
    job->ffn = 5632;
    job->experts = 8;
    job->top_k = 2;
    job->expert_ffn = 5632;
    job->layers = 40;
    job->finetune = FINETUNE_LORA;
    job->gpus = 16;
    job->global_batch = 64;
    job->pinned = SCENARIO_PIN_TP | SCENARIO_PIN_ZERO | SCENARIO_PIN_SP | SCENARIO_PIN_ATTENTION |
                  SCENARIO_PIN_RECOMPUTE | SCENARIO_PIN_OFFLOAD;
    job->tp = 2;
    job->zero = 3;
    job->sp = true;
    job->attention = ATTENTION_FLASH;
    job->recompute = RECOMPUTE_EVERY_K;
    job->ckpt_every = 1;
    job->offload = OFFLOAD_OPTIMIZER;
    search_fixture_plot(f, 1, n, search_fixture_moe_point);
    f->results[1] = (struct search_result){.layouts_tried = 9876};
    f->rj[1] = (struct report_search_job){
        .name = job->name, .job = job, .result = &f->results[1], .plot = &f->plots[1], .gpus = 16};
}

/* The fixture with n points for the first job (n / 10 for the second); 0. */
static inline int search_fixture_init(struct search_fixture *f, size_t n)
{
    memset(f, 0, sizeof *f);
    search_fixture_dense(f, n);
    search_fixture_moe(f, n / 10);
    struct scenario *job = &f->jobs[2];
    scenario_lesson_example(job);
    snprintf(job->name, sizeof job->name, "no-gpus");
    job->gpus = 64;
    f->results[2] = (struct search_result){.layouts_tried = 0};
    f->rj[2] = (struct report_search_job){.name = job->name, .job = job, .result = &f->results[2]};
    return 0;
}

static inline void search_fixture_release(struct search_fixture *f)
{
    memset(f, 0, sizeof *f);
}

#endif
