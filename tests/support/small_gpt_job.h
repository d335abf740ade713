/*
 * small_gpt_job: the small GPT job the search tests share (test_search, test_cheapest,
 * test_deadline, test_searchplot): 8 layers of h = 512, 8 heads, f = 2048, a vocabulary of
 * 8,000, s = 512, micro-batch 1, a global batch of 32 on 8 GPUs of H100 speeds (configs/gpus.csv)
 * cut to 0.55 GB, under the step's peak: some layouts fit, others do not. No GPU preset's name
 * (the cost model's fallbacks) and no scenario name: a test sets those it needs.
 */
#ifndef MEMFIT_SMALL_GPT_JOB_H
#define MEMFIT_SMALL_GPT_JOB_H

#include "model/scenario.h"

static inline void small_gpt_job(struct scenario *sc)
{
    scenario_lesson_example(sc);
    sc->layers = 8;
    sc->hidden = 512;
    sc->heads = sc->kv_heads = 8;
    sc->ffn = 2048;
    sc->vocab = 8000;
    sc->seq = 512;
    sc->micro_batch = 1;
    sc->global_batch = 32;
    sc->gpus = 8;
    sc->peak = PEAK_STEP;
    sc->gpu_mem_bytes = 550000000ull;
    sc->speed = (struct gpu_speed){989, 3.35, 450, 64, 1979};
}

#endif
