/*
 * model_params: the parameter counts of doc/model.md section 2 - one layer, Psi and the active
 * parameters (2.3) - and the layer kinds of a scenario they are summed from, with the memo of
 * the kinds that eval's rows share (model_cache). model.h declares the public functions,
 * model_internal.h the kinds and Psi from them (model_params_of, inline). Comments cite
 * doc/model.md sections, which name the primary sources.
 */
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "model/layer.h"
#include "model/model_internal.h"

uint64_t model_kv_width(const struct scenario *sc)
{
    /* heads divides hidden and kv_heads divides heads (checked by config), so this is exact. */
    return sc->hidden / sc->heads * sc->kv_heads;
}

enum model_status model_layer_params(const struct scenario *sc, uint64_t *out)
{
    /* The sum of the layer's parameter tensors (doc/model.md section 2; layer.h lists them). */
    struct layer_inventory inv;
    if (!layer_inventory_sums(sc, LAYER_DENSE, &inv) || !layer_params_of(&inv, LAYER_PARTS, out))
        return MODEL_OVERFLOW;
    return MODEL_OK;
}

static enum model_status layer_kinds(const struct scenario *sc, struct kinds *k,
                                     struct states_layer st[2])
{
    struct layer_inventory inv;
    static const struct kinds none;
    *k = none;
    k->count[LAYER_DENSE] = sc->experts ? sc->dense_layers : sc->layers;
    k->count[LAYER_MOE] = sc->layers - k->count[LAYER_DENSE];
    k->per_tensor = st != NULL && states_per_tensor(sc);
    k->st = st;
    for (int kind = 0; kind < 2; kind++) {
        static const struct states_layer no_layer;
        if (k->per_tensor)
            st[kind] = no_layer;
        if (k->count[kind] == 0)
            continue;
        /* The states sized tensor by tensor need the inventory's list. */
        if (k->per_tensor && (!layer_inventory(sc, (enum layer_kind)kind, &inv) ||
                              !states_layer(sc, &inv, &k->st[kind])))
            return MODEL_OVERFLOW;
        if ((!k->per_tensor && !layer_inventory_sums(sc, (enum layer_kind)kind, &inv)) ||
            !layer_params_of(&inv, LAYER_PARTS, &k->params[kind]) ||
            !layer_params_of(&inv, LAYER_PART_SMALL, &k->small[kind]) ||
            !layer_act_sums(sc, &inv, &k->sums[kind]))
            return MODEL_OVERFLOW;
        if (kind == LAYER_MOE && !layer_params_of(&inv, LAYER_PART_EXPERTS, &k->routed))
            return MODEL_OVERFLOW;
        if (sc->fp8 != FP8_NONE &&
            !layer_gemm_params(sc, (enum layer_kind)kind, &k->gemm[kind], &k->gemm_routed[kind]))
            return MODEL_OVERFLOW;
    }
    return MODEL_OK;
}

/*
 * A memo of layer_kinds for eval, whose rows repeat a few models in many layouts: building the
 * inventories was a sixth of a row's time. The key is every member of the scenario that
 * layer_kinds reads (through layer.c and states_per_tensor): a hit is a scenario equal to the
 * entry's in all of them, so it gives the very same kinds. A new member read by layer.c must be
 * added here; test_model.c's memo_matches_the_model changes every other member of random
 * scenarios and checks that the memo still answers as layer_kinds does. Scenarios whose states
 * are sized tensor by tensor (states_per_tensor) are not memoised.
 */
#define MODEL_CACHE_ENTRIES 512

struct layer_key {
    uint64_t layers, hidden, heads, kv_heads, ffn, head_dim, layer_norms, experts, top_k;
    uint64_t expert_ffn, shared_ffn, dense_layers, q_lora_rank, kv_lora_rank, qk_nope_dim;
    uint64_t qk_rope_dim, v_head_dim, lora_rank;
    double capacity_factor;
    int arch, attention, recompute, recompute_modules, precision, peak, fp8, finetune, lora_targets,
        optimizer;
    int qkv_bias, qk_norm, router_bias, impl;
    bool dropout, shared_gate, sdpa;
};

struct model_cache_entry {
    bool used;
    struct layer_key key;
    struct kinds kinds;
};

struct model_cache {
    struct model_cache_entry e[MODEL_CACHE_ENTRIES];
};

struct model_cache *model_cache_new(void)
{
    return calloc(1, sizeof(struct model_cache));
}

void model_cache_free(struct model_cache *c)
{
    free(c);
}

static void cache_key(const struct scenario *sc, struct layer_key *k)
{
    memset(k, 0, sizeof *k); /* the padding too: keys are compared byte by byte */
    k->layers = sc->layers;
    k->hidden = sc->hidden;
    k->heads = sc->heads;
    k->kv_heads = sc->kv_heads;
    k->ffn = sc->ffn;
    k->head_dim = sc->head_dim;
    k->layer_norms = sc->layer_norms;
    k->experts = sc->experts;
    k->top_k = sc->top_k;
    k->expert_ffn = sc->expert_ffn;
    k->shared_ffn = sc->shared_ffn;
    k->dense_layers = sc->dense_layers;
    k->q_lora_rank = sc->q_lora_rank;
    k->kv_lora_rank = sc->kv_lora_rank;
    k->qk_nope_dim = sc->qk_nope_dim;
    k->qk_rope_dim = sc->qk_rope_dim;
    k->v_head_dim = sc->v_head_dim;
    k->lora_rank = sc->lora_rank;
    k->capacity_factor = sc->capacity_factor;
    k->arch = (int)sc->arch;
    k->attention = (int)sc->attention;
    k->recompute = (int)sc->recompute;
    k->recompute_modules = (int)scenario_recompute_modules(sc);
    k->precision = (int)sc->precision;
    k->peak = (int)sc->peak;
    k->fp8 = (int)sc->fp8;
    k->finetune = (int)sc->finetune;
    k->lora_targets = (int)sc->lora_targets;
    k->optimizer = (int)sc->optimizer;
    k->dropout = sc->dropout;
    k->qkv_bias = (int)sc->qkv_bias;
    k->qk_norm = (int)sc->qk_norm;
    k->shared_gate = sc->shared_gate;
    k->router_bias = (int)sc->router_bias;
    k->impl = (int)sc->impl;
    k->sdpa = sc->sdpa;
}

/* The kinds of sc: the memo's entry, or *k built (then memoised) ; NULL on overflow. */
const struct kinds *model_layer_kinds_cached(const struct scenario *sc, struct model_cache *cache,
                                             struct kinds *k, struct states_layer st[2])
{
    if (!cache || states_per_tensor(sc))
        return layer_kinds(sc, k, st) == MODEL_OK ? k : NULL;
    struct layer_key key;
    cache_key(sc, &key);
    /* The slot: a mix of the members that tell models and modes apart (equality is memcmp's). */
    uint64_t h = key.hidden * 0x9E3779B97F4A7C15ull ^ key.layers * 0xBF58476D1CE4E5B9ull ^
                 key.ffn * 0x94D049BB133111EBull ^ key.experts * 31 ^ key.heads * 7 ^
                 (uint64_t)(unsigned)(key.precision * 64 + key.attention * 16 + key.recompute * 4 +
                                      key.finetune) *
                     0xD6E8FEB86659FD93ull;
    struct model_cache_entry *e = &cache->e[(h ^ h >> 32) % MODEL_CACHE_ENTRIES];
    if (e->used && memcmp(&e->key, &key, sizeof key) == 0)
        return &e->kinds;
    if (layer_kinds(sc, k, st) != MODEL_OK)
        return NULL;
    if (!k->per_tensor) {
        e->used = true;
        e->key = key;
        e->kinds = *k;
    }
    return k;
}

enum model_status model_params(const struct scenario *sc, uint64_t *out)
{
    struct kinds k;
    uint64_t active;
    if (layer_kinds(sc, &k, NULL) != MODEL_OK)
        return MODEL_OVERFLOW;
    return model_params_of(sc, &k, out, &active);
}

enum model_status model_active_params(const struct scenario *sc, uint64_t *out)
{
    struct kinds k;
    uint64_t all;
    if (layer_kinds(sc, &k, NULL) != MODEL_OK)
        return MODEL_OVERFLOW;
    return model_params_of(sc, &k, &all, out);
}
