/*
 * model_fixtures: the scenarios and lookups the model tests share: the worked example of
 * doc/model.md section 9 (lesson), Llama 2 7B and 70B on its GPU, sbh of a scenario and its terms
 * (model_peak, which must succeed).
 */
#ifndef MEMFIT_MODEL_FIXTURES_H
#define MEMFIT_MODEL_FIXTURES_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/model.h"

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

#endif
