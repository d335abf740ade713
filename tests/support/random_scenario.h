/*
 * random_scenario: valid random scenarios from a fixed-seed PRNG, for the property tests of
 * timeline and plan. Every rule of doc/model.md section 13.2 that config (src/input/config*.c)
 * enforces holds: kv_heads divides heads, tp divides heads and kv_heads, pp divides layers,
 * dropout only with gpt, cp divides seq, pp * vpp divides layers with m a multiple of pp,
 * zero_group divides dp * cp, recompute_layers only with recompute=full; with the embedding's or
 * the loss's slot in the split, pp (and pp * vpp) divides the layers and the slots.
 */
#ifndef MEMFIT_TEST_RANDOM_SCENARIO_H
#define MEMFIT_TEST_RANDOM_SCENARIO_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model/pipeline.h"
#include "model/scenario.h"

/* splitmix64: a tiny PRNG whose sequence depends only on the seed. */
static inline uint64_t rs_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static inline uint64_t rs_range(uint64_t *state, uint64_t lo, uint64_t hi)
{
    return lo + rs_next(state) % (hi - lo + 1);
}

static inline uint64_t rs_pick(uint64_t *state, const uint64_t *v, size_t n)
{
    return v[rs_next(state) % n];
}

/* Largest element of v[0..n) that divides x (v holds 1). */
static inline uint64_t rs_pick_divisor(uint64_t *state, const uint64_t *v, size_t n, uint64_t x)
{
    for (int tries = 0; tries < 8; tries++) {
        uint64_t d = rs_pick(state, v, n);
        if (x % d == 0)
            return d;
    }
    return 1;
}

/* For a test that changes a random scenario's pp or layers: the embedding's and the loss's slots
 * dropped where the split no longer holds them (doc/model.md 6.3). */
static inline void rs_keep_split(struct scenario *sc)
{
    if ((sc->embedding_in_split || sc->loss_in_split) && !pipeline_split_valid(sc))
        sc->embedding_in_split = sc->loss_in_split = false;
}

static inline void random_scenario(uint64_t *st, struct scenario *sc)
{
    static const uint64_t heads_v[] = {4, 8, 12, 16, 24, 32, 40, 64, 96};
    static const uint64_t head_dim_v[] = {32, 64, 128};
    static const uint64_t layers_v[] = {2, 4, 6, 12, 16, 24, 32, 40, 48, 60, 80, 96};
    static const uint64_t seq_v[] = {128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768};
    static const uint64_t deg_v[] = {1, 1, 2, 4, 8, 16};
    static const uint64_t dp_v[] = {1, 1, 2, 4, 8, 16, 64, 256};
    static const uint64_t mem_gb_v[] = {16, 24, 40, 48, 80, 141, 192};
    static const uint64_t node_v[] = {1, 2, 4, 8, 8, 8, 16};
    memset(sc, 0, sizeof *sc);
    snprintf(sc->name, sizeof sc->name, "random");
    sc->arch = rs_range(st, 0, 1) ? ARCH_LLAMA : ARCH_GPT;
    sc->heads = rs_pick(st, heads_v, sizeof heads_v / sizeof heads_v[0]);
    sc->kv_heads =
        rs_range(st, 0, 2) == 0 ? sc->heads / rs_pick_divisor(st, deg_v, 6, sc->heads) : sc->heads;
    sc->hidden = sc->heads * rs_pick(st, head_dim_v, 3);
    sc->layers = rs_pick(st, layers_v, sizeof layers_v / sizeof layers_v[0]);
    sc->vocab = rs_range(st, 1000, 260000);
    sc->ffn = sc->arch == ARCH_GPT ? 4 * sc->hidden : 256 * ((8 * sc->hidden / 3 + 255) / 256);
    sc->tied = sc->arch == ARCH_GPT ? rs_range(st, 0, 3) != 0 : rs_range(st, 0, 3) == 0;
    sc->dropout = sc->arch == ARCH_GPT && rs_range(st, 0, 2) != 0;
    sc->positions = sc->arch == ARCH_GPT && rs_range(st, 0, 2) == 0 ? 2048 : 0;
    sc->seq = rs_pick(st, seq_v, sizeof seq_v / sizeof seq_v[0]);
    sc->micro_batch = rs_range(st, 0, 3) == 0 ? 1 : rs_range(st, 1, 64);
    sc->precision = (enum precision)rs_range(st, 0, 3);
    sc->attention = rs_range(st, 0, 1) ? ATTENTION_FLASH : ATTENTION_PLAIN;
    switch (rs_range(st, 0, 3)) {
    case 0:
    case 1:
        sc->recompute = RECOMPUTE_NONE;
        break;
    case 2:
        sc->recompute = RECOMPUTE_SELECTIVE;
        break;
    default:
        sc->recompute = RECOMPUTE_EVERY_K;
        sc->ckpt_every = rs_range(st, 0, 1) ? 1 : rs_range(st, 1, sc->layers);
        break;
    }
    sc->dp = rs_pick(st, dp_v, sizeof dp_v / sizeof dp_v[0]);
    sc->tp = rs_pick_divisor(st, deg_v, 6, sc->kv_heads);
    sc->pp = rs_pick_divisor(st, deg_v, 6, sc->layers);
    sc->sp = sc->tp > 1 && rs_range(st, 0, 1);
    sc->zero = (unsigned)rs_range(st, 0, 3);
    sc->offload = rs_range(st, 0, 5) == 0 ? OFFLOAD_OPTIMIZER : OFFLOAD_NONE;
    sc->gpu_mem_bytes = rs_pick(st, mem_gb_v, sizeof mem_gb_v / sizeof mem_gb_v[0]) * 1000000000ull;
    sc->reserve = (double)rs_range(st, 0, 30) / 100.0;
    sc->gpus_per_node = rs_pick(st, node_v, sizeof node_v / sizeof node_v[0]);
    sc->global_batch = sc->micro_batch * sc->dp * rs_range(st, 1, 8);
    if (rs_range(st, 0, 3) != 0) {
        sc->speed.bf16_tflops = (double)rs_range(st, 100, 2300);
        sc->speed.link_gb_s = (double)rs_range(st, 25, 900);
        sc->speed.pcie_gb_s = (double)rs_range(st, 16, 64);
    }
    /* Section 8's layouts (doc/model.md 3.2, 4.11, 5.3, 6.1): context parallelism, interleaved
     * pipelines (m a multiple of pp), HSDP groups, offloaded checkpoints. */
    static const uint64_t cp_v[] = {1, 1, 1, 2, 4};
    sc->cp = rs_pick(st, cp_v, 5);
    sc->vpp = 1;
    if (sc->pp > 1 && sc->layers % (2 * sc->pp) == 0 && rs_range(st, 0, 2) == 0) {
        sc->vpp = 2;
        sc->global_batch = sc->micro_batch * sc->dp * sc->pp * rs_range(st, 1, 3);
    }
    if (sc->zero >= 1 && rs_range(st, 0, 3) == 0)
        sc->zero_group = rs_pick_divisor(st, deg_v, 6, sc->dp * sc->cp);
    if (sc->recompute == RECOMPUTE_EVERY_K && sc->offload == OFFLOAD_NONE &&
        rs_range(st, 0, 3) == 0)
        sc->offload = OFFLOAD_CHECKPOINTS;
    /* Per-module selective recomputation (doc/model.md 5.5): the dense modules. */
    if (sc->recompute == RECOMPUTE_SELECTIVE && rs_range(st, 0, 1) == 0)
        sc->recompute_modules =
            (unsigned)rs_range(st, 1, RECOMPUTE_CORE_ATTN | RECOMPUTE_LAYERNORM | RECOMPUTE_MLP);
    /* Block recomputation (doc/model.md 5.4): N of each chunk's layers, full only. */
    if (sc->recompute == RECOMPUTE_EVERY_K && sc->ckpt_every == 1 &&
        sc->offload != OFFLOAD_CHECKPOINTS && rs_range(st, 0, 1) == 0)
        sc->recompute_layers = rs_range(st, 1, sc->layers);
    /* Multi-token prediction (doc/model.md 2.6): one or two modules on the last stage. */
    if (rs_range(st, 0, 3) == 0)
        sc->mtp_layers = rs_range(st, 1, 2);
    /* The embedding's and the loss's slots in the split (doc/model.md 6.3): a layer fewer for
     * each, so that pp (and pp vpp) still divides the slots; interleaved, a chunk a layer short
     * (no block recomputation then). */
    if (sc->pp > 1 && sc->layers / (sc->pp * sc->vpp) >= 1 && sc->layers / sc->pp >= 2 &&
        rs_range(st, 0, 3) == 0) {
        sc->embedding_in_split = rs_range(st, 0, 1);
        sc->loss_in_split = !sc->embedding_in_split || rs_range(st, 0, 1);
        if (sc->vpp == 1 && (sc->layers / sc->pp) % 2 == 0 && rs_range(st, 0, 1) == 0) {
            sc->vpp = 2; /* interleaved more often here: the chunk a layer short */
            sc->global_batch = sc->micro_batch * sc->dp * sc->pp * rs_range(st, 1, 3);
        }
        sc->layers -= (uint64_t)sc->embedding_in_split + sc->loss_in_split;
        sc->ckpt_every = sc->ckpt_every > sc->layers ? sc->layers : sc->ckpt_every;
        sc->recompute_layers =
            sc->vpp > 1 || sc->recompute_layers > sc->layers ? 0 : sc->recompute_layers;
        sc->mtp_layers = sc->mtp_layers > sc->layers ? sc->layers : sc->mtp_layers;
    }
}

#endif
