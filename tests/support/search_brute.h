/*
 * search_brute: memfit search the slow way, the oracle of tests/plan/test_search.c and the
 * reference of bench/search_bench.c.
 *
 * Written from doc/model.md section 11.5, not from src/plan/search.c: every layout of the job -
 * each degree, ZeRO stage, offload, recompute, attention and micro-batch, in the order that section
 * gives - is built and evaluated one by one with model_peak_cached and, when it fits, cost_step.
 * Nothing is solved, bounded or pruned. The best `cap` fitting layouts are kept by step time,
 * then peak, then the order of the enumeration.
 */
#ifndef MEMFIT_TEST_SEARCH_BRUTE_H
#define MEMFIT_TEST_SEARCH_BRUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/cost.h"
#include "model/model.h"
#include "plan/search.h"

struct brute {
    const struct scenario *job;
    struct model_cache *memo;
    struct search_layout *top;
    size_t cap, n_top;
    uint64_t tried, fit;
    uint64_t stride, evaluated; /* every stride-th layout is evaluated (1: all) */
};

static inline bool brute_pinned(const struct brute *br, enum scenario_pin pin)
{
    return (br->job->pinned & (unsigned)pin) != 0;
}

static inline uint64_t brute_one(uint64_t v)
{
    return v ? v : 1;
}

/* A free choice takes any value; a pinned one only the job's. */
static inline bool brute_allows(const struct brute *br, enum scenario_pin pin, uint64_t value,
                                uint64_t job_value)
{
    return !brute_pinned(br, pin) || value == job_value;
}

/* The layers of every stage of pp, written out stage by stage (doc/model.md 6.3): the job's first
 * and last stages and the rest evenly, or evenly, or ceil(L/pp) with the floors dealt to stage 0,
 * pp - 1, 1, pp - 2, ...; each at least one and a multiple of vpp. *largest: the most a stage
 * holds. False when pp cannot split the layers so, or when the split is uneven (pp not dividing
 * L, no ends given) on a model of more than 1,024 layers (the search's bound, 11.5). With the
 * embedding's or the loss's slot (6.3): S = (L + slots) / pp each, the ends S - 1, at least one,
 * S a multiple of vpp (the largest: S). */
static inline bool brute_split(const struct scenario *job, uint64_t pp, uint64_t vpp,
                               uint64_t *largest)
{
    uint64_t f = job->first_stage_layers, l = job->last_stage_layers, n = job->layers;
    uint64_t mid = 0, ends = (uint64_t)(f > 0) + (l > 0);
    if (job->embedding_in_split || job->loss_in_split) {
        uint64_t e = job->embedding_in_split, t = job->loss_in_split, slots = n + e + t;
        if (ends || pp == 1 || slots % pp || slots / pp < 1 + e || slots / pp < 1 + t ||
            (slots / pp) % vpp)
            return false;
        *largest = slots / pp;
        return true;
    }
    if (pp > n || (ends && (pp == 1 || f + l > n)))
        return false;
    if (!ends && n % pp && n > 1024)
        return false;
    if (ends) {
        if (pp == ends ? f + l != n : (n - f - l) % (pp - ends) || n - f - l < pp - ends)
            return false;
        mid = pp == ends ? 0 : (n - f - l) / (pp - ends);
    }
    uint64_t floors = n % pp ? pp - n % pp : 0;
    *largest = 0;
    for (uint64_t r = 0; r < pp; r++) {
        uint64_t s;
        if (ends)
            s = r == 0 && f ? f : r == pp - 1 && l ? l : mid;
        else /* the floors: r = 0, pp - 1, 1, pp - 2, ... while any remain */
            s = n / pp + (n % pp != 0) - ((r < pp - 1 - r ? 2 * r : 2 * (pp - 1 - r) + 1) < floors);
        if (s == 0 || s % vpp)
            return false;
        *largest = s > *largest ? s : *largest;
    }
    return true;
}

/* One layout: counted, evaluated, and kept if it is among the best so far. */
static inline void brute_layout(struct brute *br, const struct scenario *sc)
{
    struct terms t;
    struct cost c;
    if (br->tried++ % br->stride)
        return;
    br->evaluated++;
    if (model_peak_cached(sc, br->memo, &t) != MODEL_OK || !t.fits)
        return;
    br->fit++;
    cost_step(sc, &t, &c);
    if (br->cap == 0)
        return;
    if (br->n_top == br->cap) {
        const struct search_layout *last = &br->top[br->cap - 1];
        if (!(c.total_s < last->step_time_s ||
              (c.total_s == last->step_time_s && t.peak_bytes < last->peak_bytes)))
            return;
        br->n_top--;
    }
    /* After every layout at least as good: an equal one came earlier in the enumeration. */
    size_t at = 0;
    while (at < br->n_top &&
           (br->top[at].step_time_s < c.total_s ||
            (br->top[at].step_time_s == c.total_s && br->top[at].peak_bytes <= t.peak_bytes)))
        at++;
    for (size_t i = br->n_top; i > at; i--)
        br->top[i] = br->top[i - 1];
    br->top[at].sc = *sc;
    br->top[at].peak_bytes = t.peak_bytes;
    br->top[at].budget_bytes = t.budget_bytes;
    br->top[at].step_time_s = c.total_s;
    br->n_top++;
}

/* The ZeRO stage, offload, recompute, attention and micro-batch of one set of degrees. */
static inline void brute_degrees(struct brute *br, struct scenario *sc, uint64_t gb)
{
    const struct scenario *job = br->job;
    uint64_t dp = sc->dp, cp = sc->cp, tp = sc->tp, pp = sc->pp, vpp = sc->vpp;
    uint64_t largest = 0;
    brute_split(sc, pp, vpp, &largest);
    uint64_t chunk = largest / vpp;
    /* On a ZeRO group of one GPU (and, with experts, an expert data-parallel size of one) the
     * four stages are one layout, the lowest allowed. */
    uint64_t group = sc->zero_group ? sc->zero_group : dp * cp;
    bool moot = group == 1 && (sc->experts == 0 || dp * cp * tp / (sc->etp * sc->ep) == 1);
    for (unsigned zero = 0; zero <= 3; zero++) {
        if (!brute_allows(br, SCENARIO_PIN_ZERO, zero, job->zero) || (sc->zero_group && zero == 0))
            continue;
        if (moot && !brute_pinned(br, SCENARIO_PIN_ZERO) && zero > (sc->zero_group ? 1u : 0u))
            continue;
        sc->zero = zero;
        static const enum offload offloads[] = {OFFLOAD_NONE, OFFLOAD_OPTIMIZER,
                                                OFFLOAD_CHECKPOINTS};
        for (int o = 0; o < 3; o++) {
            if (!brute_allows(br, SCENARIO_PIN_OFFLOAD, offloads[o], job->offload))
                continue;
            sc->offload = offloads[o];
            /* none, selective, then every k from 1 (full) to the chunk's layers; a pinned
             * recompute as the job has it (a k above the chunk's layers acts as the chunk's) */
            bool pin_rc = brute_pinned(br, SCENARIO_PIN_RECOMPUTE);
            for (uint64_t r = 0; r < (pin_rc ? 1 : chunk + 2); r++) {
                enum recompute rc = pin_rc   ? job->recompute
                                    : r == 0 ? RECOMPUTE_NONE
                                    : r == 1 ? RECOMPUTE_SELECTIVE
                                             : RECOMPUTE_EVERY_K;
                uint64_t k = pin_rc ? job->ckpt_every : r >= 2 ? r - 1 : 0;
                if (sc->offload == OFFLOAD_CHECKPOINTS && rc != RECOMPUTE_EVERY_K)
                    continue;
                sc->recompute = rc;
                sc->ckpt_every = k;
                for (int a = 0; a < 2; a++) {
                    enum attention att = a ? ATTENTION_FLASH : ATTENTION_PLAIN;
                    if (!brute_allows(br, SCENARIO_PIN_ATTENTION, att, job->attention))
                        continue;
                    if (att == ATTENTION_FLASH && rc == RECOMPUTE_SELECTIVE && !pin_rc)
                        continue;
                    sc->attention = att;
                    for (uint64_t b = 1; b * dp <= gb; b++) {
                        uint64_t m = gb / (b * dp);
                        if (gb % (b * dp) || (vpp > 1 && m % pp) ||
                            (sc->schedule == SCHEDULE_DUALPIPE && (m % 2 || m < 2 * pp)))
                            continue;
                        if (!brute_allows(br, SCENARIO_PIN_MICRO_BATCH, b, job->micro_batch))
                            continue;
                        sc->micro_batch = b;
                        brute_layout(br, sc);
                    }
                }
            }
        }
    }
}

/*
 * Every layout of job on its gpus, of which every stride-th is evaluated (the benchmark's
 * estimate of a brute force too long to run whole; 1: all): top[0..cap) receives the best of
 * those, the counts go to br.
 */
static inline void brute_sample(const struct scenario *job, struct model_cache *memo, size_t cap,
                                struct search_layout *top, uint64_t stride, struct brute *br)
{
    *br = (struct brute){job, memo, top, cap, 0, 0, 0, stride ? stride : 1, 0};
    uint64_t gpus = job->gpus ? job->gpus
                              : brute_one(job->dp) * brute_one(job->tp) * brute_one(job->pp) *
                                    brute_one(job->cp);
    uint64_t gb = job->global_batch;
    if (gb == 0) /* eval's default for the job's own columns: b dp pp */
        gb = brute_one(job->micro_batch) *
             (gpus / (brute_one(job->tp) * brute_one(job->pp) * brute_one(job->cp))) *
             brute_one(job->pp);
    struct scenario sc = *job;
    sc.gpus = gpus;
    sc.global_batch = gb;
    sc.zero_group = brute_pinned(br, SCENARIO_PIN_ZERO_GROUP) ? job->zero_group : 0;
    for (uint64_t tp = 1; tp <= brute_one(job->gpus_per_node) && tp <= gpus; tp++) {
        if (job->heads % tp || job->kv_heads % tp || gpus % tp ||
            !brute_allows(br, SCENARIO_PIN_TP, tp, brute_one(job->tp)))
            continue;
        for (uint64_t pp = 1; pp <= job->layers; pp++) {
            uint64_t largest;
            if ((gpus / tp) % pp || !brute_split(job, pp, 1, &largest) ||
                !brute_allows(br, SCENARIO_PIN_PP, pp, brute_one(job->pp)))
                continue;
            /* 1F1B, ZB1P with pp > 1, DualPipe with pp even; a pinned one as the job has it */
            for (int s = 0; s < SCHEDULES; s++) {
                enum schedule sched = (enum schedule)s;
                if ((brute_pinned(br, SCENARIO_PIN_SCHEDULE) && sched != job->schedule) ||
                    (sched != SCHEDULE_1F1B && pp == 1) ||
                    (sched == SCHEDULE_DUALPIPE && (pp % 2 || job->recompute_layers)))
                    continue;
                sc.schedule = sched;
                /* up to every slot a chunk (the embedding's and the loss's too, 6.3) */
                bool slots = job->embedding_in_split || job->loss_in_split;
                for (uint64_t vpp = 1; vpp <= (job->layers + 2) / pp; vpp++) {
                    if (!brute_split(job, pp, vpp, &largest) || (vpp > 1 && pp == 1) ||
                        (vpp > 1 && sched != SCHEDULE_1F1B) ||
                        (vpp > 1 && slots && job->recompute_layers) ||
                        !brute_allows(br, SCENARIO_PIN_VPP, vpp, brute_one(job->vpp)))
                        continue;
                    for (uint64_t cp = 1; cp <= job->seq && cp <= gpus / (tp * pp); cp++) {
                        if (job->seq % cp || (gpus / (tp * pp)) % cp ||
                            !brute_allows(br, SCENARIO_PIN_CP, cp, brute_one(job->cp)))
                            continue;
                        uint64_t dp = gpus / (tp * pp * cp);
                        if (!brute_allows(br, SCENARIO_PIN_DP, dp, brute_one(job->dp)))
                            continue;
                        if (sc.zero_group && (dp * cp) % sc.zero_group)
                            continue;
                        sc.tp = tp;
                        sc.pp = pp;
                        sc.vpp = vpp;
                        sc.cp = cp;
                        sc.dp = dp;
                        sc.sp = brute_pinned(br, SCENARIO_PIN_SP) ? job->sp : tp > 1;
                        if (job->experts == 0) {
                            brute_degrees(br, &sc, gb);
                            continue;
                        }
                        for (uint64_t ep = 1; ep <= job->experts; ep++) {
                            if (job->experts % ep ||
                                !brute_allows(br, SCENARIO_PIN_EP, ep, brute_one(job->ep)))
                                continue;
                            /* etp: each of 1 .. tp that divides tp; a pinned one as the job has
                             * it (0: tp), tried once */
                            bool pin_etp = brute_pinned(br, SCENARIO_PIN_ETP);
                            for (uint64_t e = 1; e <= (pin_etp ? 1 : tp); e++) {
                                uint64_t etp = pin_etp ? (job->etp ? job->etp : tp) : e;
                                if (!pin_etp && tp % etp != 0)
                                    continue;
                                if ((dp * cp * tp) % (ep * etp) || (tp % etp != 0 && etp % tp != 0))
                                    continue;
                                sc.ep = ep;
                                sc.etp = etp;
                                brute_degrees(br, &sc, gb);
                            }
                        }
                    }
                }
            }
        }
    }
}

/* Every layout of job on its gpus, each evaluated. */
static inline void brute_search(const struct scenario *job, struct model_cache *memo, size_t cap,
                                struct search_layout *top, struct brute *br)
{
    brute_sample(job, memo, cap, top, 1, br);
}

#endif
