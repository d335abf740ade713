/* states: see states.h. Comments cite doc/model.md sections, which name the primary sources. */
#include "model/states.h"

/* Below this many elements bitsandbytes keeps a tensor's moments in fp32, and an 8-bit moment
 * has one fp32 absmax per block of this many elements (doc/model.md 3.5; bitsandbytes
 * optim/optimizer.py, Optimizer2State.init_state: min_8bit_size = 4096, blocksize = 256 since
 * release 0.44.0). */
#define STATES_MIN_8BIT 4096u
#define STATES_8BIT_BLOCK 256u

uint64_t states_moment_bytes(enum optimizer o, uint64_t n, struct checked *ck)
{
    if (o == OPTIM_ADAMW8BIT)
        return n >= STATES_MIN_8BIT
                   ? ck_add(ck, ck_mul(ck, 2, n), ck_mul(ck, 8, div_up(n, STATES_8BIT_BLOCK)))
                   : ck_mul(ck, 8, n);
    return ck_mul(ck, o == OPTIM_ADAMW_BF16 || o == OPTIM_SGD ? 4 : 8, n);
}

uint64_t states_nf4_bytes(uint64_t n, struct checked *ck)
{
    /* doc/model.md 3.6 (Dettmers et al. 2023, 2 and 3; bitsandbytes functional.py,
     * quantize_4bit): two 4-bit codes a byte, one absmax per block of 64 stored in 8 bits
     * (double quantisation), one fp32 absmax per 256 of those. Each rounded up per tensor. */
    uint64_t absmax = div_up(n, 64);
    return ck_add(ck, ck_add(ck, div_up(n, 2), absmax), ck_mul(ck, 4, div_up(absmax, 256)));
}

/* Is the base frozen: LoRA, QLoRA, or precision=frozen. */
static bool base_frozen(const struct scenario *sc)
{
    return sc->finetune != FINETUNE_FULL || sc->precision == PRECISION_FROZEN;
}

struct states_pool states_uniform(const struct scenario *sc, uint64_t params, struct checked *ck)
{
    struct states_per_param b = states_per_param(sc);
    if (sc->precision == PRECISION_FROZEN)
        return (struct states_pool){0, 0, params, ck_mul(ck, b.weights, params), 0};
    return (struct states_pool){params, ck_mul(ck, b.moments, params), 0, 0, 0};
}

/* The bytes of n tensors of `each` elements of the frozen base: NF4 for the linear layers'
 * weights under QLoRA, fp32 for the rest (PEFT's prepare_model_for_kbit_training upcasts them);
 * otherwise the precision's weights. */
static uint64_t frozen_bytes(const struct scenario *sc, bool matrix, uint64_t n, uint64_t each,
                             struct checked *ck)
{
    if (sc->finetune != FINETUNE_QLORA)
        return ck_mul3(ck, states_per_param(sc).weights, n, each);
    return ck_mul(ck, n, matrix ? states_nf4_bytes(each, ck) : ck_mul(ck, 4, each));
}

/* The LoRA adapters of one entry's `copies` matrices on a GPU of a tensor-parallel group of t
 * (doc/model.md 3.6): A (r x d_in) and B (d_out x r) each; a column-parallel layer's B is split
 * with its output and its A whole, a row-parallel layer's A split with its input and its B whole
 * (PEFT tuners/lora/tp_layer.py, LoraParallelLinear); a replicated layer's whole. */
static void adapters_of(const struct scenario *sc, const struct layer_param *p, uint64_t copies,
                        uint64_t t, struct states_pool *pool, struct checked *ck)
{
    uint64_t r = sc->lora_rank;
    uint64_t in = p->tp == LAYER_TP_ROW ? div_up(p->d_in, t) : p->d_in;
    uint64_t out = p->tp == LAYER_TP_COLUMN ? div_up(p->d_out, t) : p->d_out;
    uint64_t a = ck_mul(ck, r, in), b = ck_mul(ck, r, out);
    pool->trained = ck_add(ck, pool->trained, ck_mul(ck, copies, ck_add(ck, a, b)));
    uint64_t moments = ck_add(ck, states_moment_bytes(sc->optimizer, a, ck),
                              states_moment_bytes(sc->optimizer, b, ck));
    if (sc->precision == PRECISION_FROZEN)
        moments = 0;
    pool->moments = ck_add(ck, pool->moments, ck_mul(ck, copies, moments));
}

bool states_layer(const struct scenario *sc, const struct layer_inventory *inv,
                  struct states_layer *out)
{
    struct checked ck = {false};
    bool frozen = base_frozen(sc), lora = sc->finetune != FINETUNE_FULL;
    bool every = sc->lora_targets == LORA_ALL_LINEAR;
    struct states_per_param b = states_per_param(sc);
    uint64_t etp = sc->etp ? sc->etp : sc->tp, ep = sc->ep ? sc->ep : 1;
    /* The parameters on the GPU, divided as the model's count divides them (section 2.4). */
    uint64_t routed = inv->part_params[LAYER_PART_EXPERTS];
    uint64_t count[2] = {div_up(inv->total_params - routed, sc->tp),
                         div_up(routed, ck_mul(&ck, etp, ep))};
    *out = (struct states_layer){{{0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}}, 0};
    for (int i = 0; i < 2; i++) {
        struct states_pool *pool = &out->pool[i];
        if (frozen) {
            pool->frozen = count[i];
            pool->frozen_bytes = ck_mul(&ck, b.weights, count[i]); /* QLoRA: below */
        } else {
            pool->trained = count[i];
            pool->moments = ck_mul(&ck, b.moments, count[i]); /* 8-bit AdamW: below */
        }
    }
    bool nf4 = sc->finetune == FINETUNE_QLORA;
    bool per_tensor = !frozen && sc->optimizer == OPTIM_ADAMW8BIT;
    if (nf4 || per_tensor) {
        out->pool[0].frozen_bytes = out->pool[1].frozen_bytes = 0;
        if (per_tensor)
            out->pool[0].moments = out->pool[1].moments = 0;
    }
    for (size_t e = 0; e < inv->n_params; e++) {
        const struct layer_param *p = &inv->params[e];
        bool is_routed = p->part == LAYER_PART_EXPERTS;
        uint64_t t = is_routed ? etp : sc->tp, per_gpu = is_routed ? ep : 1;
        struct states_pool *pool = &out->pool[is_routed];
        for (int i = 0; i < 2 && (nf4 || per_tensor); i++) {
            uint64_t n = p->tensors[i] / per_gpu, each = div_up(p->elements[i], t);
            if (n == 0)
                continue;
            if (nf4) {
                uint64_t bytes = frozen_bytes(sc, p->d_in > 0, n, each, &ck);
                pool->frozen_bytes = ck_add(&ck, pool->frozen_bytes, bytes);
                if (p->d_in > 0)
                    pool->nf4_bytes = ck_add(&ck, pool->nf4_bytes, bytes);
            } else
                pool->moments =
                    ck_add(&ck, pool->moments,
                           ck_mul(&ck, n, states_moment_bytes(sc->optimizer, each, &ck)));
        }
        if (!lora || p->d_in == 0 || !(every || p->qv))
            continue;
        adapters_of(sc, p, p->tensors[0] / per_gpu, t, pool, &ck);
        uint64_t whole = ck_mul3(&ck, sc->lora_rank, ck_add(&ck, p->d_in, p->d_out), p->tensors[0]);
        out->adapters = ck_add(&ck, out->adapters, whole);
    }
    return !ck.overflow;
}

/* Adds n tensors of `each` elements outside the layers to a pool. */
static void outside_tensor(const struct scenario *sc, uint64_t n, uint64_t each,
                           struct states_pool *pool, struct checked *ck)
{
    uint64_t count = ck_mul(ck, n, each);
    struct states_per_param b = states_per_param(sc);
    if (base_frozen(sc)) {
        pool->frozen = ck_add(ck, pool->frozen, count);
        pool->frozen_bytes = ck_add(ck, pool->frozen_bytes, frozen_bytes(sc, false, n, each, ck));
        return;
    }
    pool->trained = ck_add(ck, pool->trained, count);
    uint64_t m = sc->optimizer == OPTIM_ADAMW8BIT
                     ? ck_mul(ck, n, states_moment_bytes(sc->optimizer, each, ck))
                     : ck_mul(ck, b.moments, count);
    pool->moments = ck_add(ck, pool->moments, m);
}

void states_outside(const struct scenario *sc, bool first, bool last, struct states_pool *out,
                    struct checked *ck)
{
    /* Section 2.4: the vocabulary-parallel embedding and output layer, V h / t; learned positions
     * and the final norm (a scale, and GPT's shift) whole. */
    uint64_t emb = div_up(ck_mul(ck, sc->vocab, sc->hidden), sc->tp);
    *out = (struct states_pool){0, 0, 0, 0, 0};
    if (first) {
        outside_tensor(sc, 1, emb, out, ck);
        if (sc->positions > 0)
            outside_tensor(sc, 1, ck_mul(ck, sc->positions, sc->hidden), out, ck);
    }
    if (last) {
        outside_tensor(sc, sc->arch == ARCH_GPT ? 2 : 1, sc->hidden, out, ck);
        /* a tied embedding is one tensor only on a single stage (DualPipe's GPU 0 holds the
         * first and the last stage, each its copy) */
        if (!sc->tied || !first || sc->pp > 1)
            outside_tensor(sc, 1, emb, out, ck);
    }
}

void states_add(struct states_pool *a, uint64_t n, const struct states_pool *b, struct checked *ck)
{
    a->trained = ck_add(ck, a->trained, ck_mul(ck, n, b->trained));
    a->moments = ck_add(ck, a->moments, ck_mul(ck, n, b->moments));
    a->frozen = ck_add(ck, a->frozen, ck_mul(ck, n, b->frozen));
    a->frozen_bytes = ck_add(ck, a->frozen_bytes, ck_mul(ck, n, b->frozen_bytes));
    a->nf4_bytes = ck_add(ck, a->nf4_bytes, ck_mul(ck, n, b->nf4_bytes));
}

struct states_bytes states_sharded(const struct scenario *sc, const struct states_pool *p,
                                   uint64_t n, struct checked *ck)
{
    /* Sections 3.2 and 3.3 (Rajbhandari et al. 2020, 5; Ren et al. 2021): ZeRO shards what each
     * stage shards, frozen weights with the others at stage 3 (as FSDP and ZeRO-3 partition every
     * parameter); the optimizer states of an offload are in CPU memory. */
    struct states_per_param b = states_per_param(sc);
    struct states_bytes st = {
        ck_add(ck, ck_mul(ck, b.weights, p->trained), p->frozen_bytes),
        ck_mul(ck, b.grads, p->trained),
        ck_add(ck, ck_mul(ck, b.master, p->trained), p->moments),
    };
    if (sc->zero >= 1)
        st.optimizer = div_up(st.optimizer, n);
    if (sc->zero >= 2)
        st.grads = div_up(st.grads, n);
    if (sc->zero >= 3)
        st.weights = div_up(st.weights, n);
    if (sc->offload == OFFLOAD_OPTIMIZER)
        st.optimizer = 0;
    return st;
}
