/*
 * model_fixtures: the scenarios and lookups the model tests share: the worked example of
 * doc/model.md section 9 (lesson), Llama 2 7B and 70B on its GPU, DeepSeek-V3 (configs/models.csv),
 * sbh of a scenario and its terms (model_peak, which must succeed), and that a scenario's largest
 * micro-batch is exact.
 */
#ifndef MEMFIT_MODEL_FIXTURES_H
#define MEMFIT_MODEL_FIXTURES_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/model.h"
#include "model/pipeline.h"

static __attribute__((unused)) struct scenario lesson(void)
{
    struct scenario sc;
    scenario_lesson_example(&sc);
    return sc;
}

static __attribute__((unused)) struct scenario llama2_7b(void)
{
    struct scenario sc = lesson();
    sc.arch = ARCH_LLAMA;
    sc.layers = 32;
    sc.hidden = 4096;
    sc.heads = sc.kv_heads = 32;
    sc.vocab = 32000;
    sc.ffn = 11008;
    sc.tied = false;
    sc.dropout = false;
    return sc;
}

static __attribute__((unused)) struct scenario llama2_70b(void)
{
    struct scenario sc = llama2_7b();
    sc.layers = 80;
    sc.hidden = 8192;
    sc.heads = 64;
    sc.kv_heads = 8;
    sc.ffn = 28672;
    return sc;
}

static __attribute__((unused)) uint64_t sbh_of(const struct scenario *sc)
{
    return sc->seq * sc->micro_batch * sc->hidden;
}

static __attribute__((unused)) struct terms peak_of(const struct scenario *sc)
{
    struct terms t;
    assert_int_equal(model_peak(sc, &t), MODEL_OK);
    return t;
}

/* DeepSeek-V3 (configs/models.csv): multi-head latent attention, 256 routed experts of 2048 with
 * top 8, a shared expert of 2048, a router with a score bias, three leading dense layers. */
static __attribute__((unused)) void deepseek_v3(struct scenario *sc)
{
    scenario_lesson_example(sc);
    sc->arch = ARCH_LLAMA;
    sc->dropout = sc->tied = false;
    sc->layers = 61;
    sc->hidden = 7168;
    sc->heads = sc->kv_heads = 128;
    sc->vocab = 129280;
    sc->ffn = 18432;
    sc->experts = 256;
    sc->top_k = 8;
    sc->expert_ffn = 2048;
    sc->shared_ffn = 2048;
    sc->router_bias = ROUTER_BIAS_SCORE;
    sc->dense_layers = 3;
    sc->q_lora_rank = 1536;
    sc->kv_lora_rank = 512;
    sc->qk_nope_dim = 128;
    sc->qk_rope_dim = 64;
    sc->v_head_dim = 128;
    sc->seq = 4096;
    sc->micro_batch = 1;
}

/* t.max_micro_batch is exact for sc: it fits (unless 0) and one more does not. The trial keeps
 * the scenario's m micro-batches a step: its gradient accumulation and its pipeline's
 * micro-batches in flight (doc/model.md 6.1, 8.3, 10.2). */
static __attribute__((unused)) void assert_max_micro_batch_exact(const struct scenario *sc,
                                                                 const struct terms *t)
{
    struct scenario trial = *sc;
    struct terms at;
    uint64_t m = pipeline_micro_batches(sc);
    if (t->max_micro_batch > 0) {
        trial.micro_batch = t->max_micro_batch;
        trial.global_batch = trial.micro_batch * sc->dp * m;
        assert_true(model_peak(&trial, &at) == MODEL_OK && at.fits);
    }
    trial.micro_batch = t->max_micro_batch + 1;
    trial.global_batch = trial.micro_batch * sc->dp * m;
    assert_false(model_peak(&trial, &at) == MODEL_OK && at.fits);
}

#endif
