/*
 * Tests of the model (model.h) under checkpointing and the layouts: checkpointing every k
 * (doc/model.md section 5), pipeline parallelism (6), block recomputation (5.4), context
 * parallelism, HSDP and offloaded checkpoints (3.2, 4.11, 5.3), FP8 training (3.7, 4.10), and the
 * memo of layer inventories (model_eval_cached).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "model/model.h"
#include "model_fixtures.h"
#include "random_scenario.h"
#include "testutil.h"

/* ---- checkpointing every k (doc/model.md section 5) ---- */

static uint64_t m_of_k_sbh(uint64_t layers, uint64_t k)
{
    struct scenario sc = lesson();
    sc.layers = layers;
    sc.attention = ATTENTION_FLASH;
    sc.recompute = RECOMPUTE_SELECTIVE; /* A = 34 sbh exactly (no flash term) */
    sc.attention = ATTENTION_PLAIN;
    uint64_t out;
    assert_int_equal(model_stage_act(&sc, 34 * sbh_of(&sc), 2 * sbh_of(&sc), 1, k, &out), MODEL_OK);
    assert_int_equal(out % sbh_of(&sc), 0);
    return out / sbh_of(&sc);
}

static void check_yourself_6_every_6_layers(void **state)
{
    (void)state;
    assert_int_equal(m_of_k_sbh(24, 6), 212);
    assert_int_equal(m_of_k_sbh(24, 1), 82);
}

static void checkpoint_80_layers_k2_is_best(void **state)
{
    (void)state;
    assert_int_equal(m_of_k_sbh(80, 2), 148);
    assert_int_equal(m_of_k_sbh(80, 1), 194);
    struct scenario sc = lesson();
    sc.layers = 80;
    sc.recompute = RECOMPUTE_SELECTIVE;
    uint64_t k, m;
    assert_int_equal(model_k_best(&sc, &k, &m), MODEL_OK);
    assert_int_equal(k, 2);
    assert_int_equal(m, 148 * sbh_of(&sc));
}

static void k_star_for_24_layers(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.recompute = RECOMPUTE_SELECTIVE;
    struct terms t;
    assert_int_equal(model_eval(&sc, &t), MODEL_OK);
    assert_true(fabs(t.k_star - sqrt(24.0 * 2 / 34)) < 1e-9); /* about 1.2 */
    assert_int_equal(t.k_best, 1);
    assert_int_equal(t.act_k_best_bytes, 82 * sbh_of(&sc));
}

static void k_best_is_the_minimum_of_all_k(void **state)
{
    (void)state;
    for (uint64_t layers = 1; layers <= 120; layers += 7) {
        struct scenario sc = lesson();
        sc.layers = layers;
        sc.seq = 512;
        uint64_t k, m, best = UINT64_MAX, best_k = 0;
        assert_int_equal(model_k_best(&sc, &k, &m), MODEL_OK);
        struct model_layer_act a;
        uint64_t c;
        model_layer_act(&sc, &a);
        model_ckpt_bytes(&sc, &c);
        for (uint64_t j = 1; j <= layers; j++) {
            uint64_t mj = (layers + j - 1) / j * c + j * a.total;
            if (mj < best) {
                best = mj;
                best_k = j;
            }
        }
        assert_int_equal(k, best_k);
        assert_int_equal(m, best);
    }
}

/* ---- pipeline parallelism (doc/model.md section 6) ---- */

static void pipeline_first_stage_holds_l_layers_worth(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.attention = ATTENTION_FLASH;
    sc.pp = 4;
    sc.global_batch = 8 * 4; /* the default: pp micro-batches a step */
    struct terms t = peak_of(&sc);
    uint64_t A = 34 * sbh_of(&sc) + 4ull * 16 * 2048 * 8;
    assert_int_equal(t.stage[MODEL_STAGE_FIRST].act_bytes, 24 * A);
    assert_int_equal(t.stage[MODEL_STAGE_LAST].act_bytes, 6 * A);
    assert_int_equal(t.stage[MODEL_STAGE_FIRST].logits_bytes, 0);
    assert_int_equal(t.stage[MODEL_STAGE_LAST].logits_bytes, 4ull * 2048 * 8 * 50257);
    /* Parameters: 6 layers + embedding first; 6 layers + tied copy + final norm last. */
    assert_int_equal(t.stage[MODEL_STAGE_FIRST].params, 6ull * 50358272 + 102926336);
    assert_int_equal(t.stage[MODEL_STAGE_LAST].params, 6ull * 50358272 + 102926336 + 4096);
    assert_int_equal(t.peak_stage, MODEL_STAGE_FIRST);
    assert_int_equal(t.logits_bytes, 0);
    assert_int_equal(t.peak_bytes, t.states_bytes + t.act_bytes);
}

static void pipeline_last_stage_can_be_the_most_loaded(void **state)
{
    (void)state;
    /* A huge vocabulary makes the output layer and the logits dominate. */
    struct scenario sc = lesson();
    sc.attention = ATTENTION_FLASH;
    sc.vocab = 1000000;
    sc.tied = false;
    sc.pp = 2;
    struct terms t = peak_of(&sc);
    assert_int_equal(t.peak_stage, MODEL_STAGE_LAST);
    assert_int_equal(t.logits_bytes, 4ull * 2048 * 8 * 1000000);
}

static void pipeline_checkpoint_segments_stay_inside_a_stage(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.pp = 4;
    sc.global_batch = 8 * 4;
    sc.recompute = RECOMPUTE_EVERY_K;
    sc.ckpt_every = 12; /* k' = min(12, 6) = 6 */
    struct terms t = peak_of(&sc);
    uint64_t A = 114 * sbh_of(&sc), c = 2 * sbh_of(&sc);
    assert_int_equal(t.stage[MODEL_STAGE_FIRST].act_bytes, 4 * 1 * c + 6 * A);
    assert_int_equal(t.stage[MODEL_STAGE_LAST].act_bytes, 1 * c + 6 * A);
}

/* ---- block recomputation (doc/model.md 5.4) ---- */

/* recompute=full with recompute_layers N: each micro-batch in flight on a stage keeps N
 * checkpoints and L_s - N whole layers; no extra rebuilt layer while N < L_s (it is rebuilt after
 * the kept layers' backward freed theirs); N >= L_s is full checkpointing, m L_s c + A. */
static void block_recompute_keeps_n_checkpoints_and_the_rest_whole(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.pp = 4;
    sc.global_batch = 8 * 4; /* m = 4: the first stage keeps 4 micro-batches, the last 1 */
    sc.recompute = RECOMPUTE_EVERY_K;
    sc.ckpt_every = 1;
    uint64_t A = 114 * sbh_of(&sc), c = 2 * sbh_of(&sc);
    for (uint64_t n = 1; n <= 8; n++) {
        sc.recompute_layers = n;
        struct terms t = peak_of(&sc);
        uint64_t first = n < 6 ? 4 * (n * c + (6 - n) * A) : 4 * 6 * c + A;
        uint64_t last = n < 6 ? n * c + (6 - n) * A : 6 * c + A;
        assert_int_equal(t.stage[MODEL_STAGE_FIRST].act_bytes, first);
        assert_int_equal(t.stage[MODEL_STAGE_LAST].act_bytes, last);
    }
}

/* With interleaving N counts the layers of each chunk: pp = 2, vpp = 2 (chunks of 6 layers),
 * N = 2 keeps 2 c + 4 A per chunk-micro-batch in flight. */
static void block_recompute_counts_layers_per_chunk(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.pp = 2;
    sc.vpp = 2;
    sc.global_batch = 8 * 4;
    sc.recompute = RECOMPUTE_EVERY_K;
    sc.ckpt_every = 1;
    sc.recompute_layers = 2;
    struct terms t = peak_of(&sc);
    uint64_t A = 114 * sbh_of(&sc), c = 2 * sbh_of(&sc);
    for (unsigned i = 0; i < t.n_stages; i++) {
        const struct pipeline_stage *st = &t.stage[i].pipe;
        assert_int_equal(st->chunk_layers, 6);
        assert_int_equal(t.stage[i].act_bytes, st->in_flight * (2 * c + 4 * A));
    }
}

/* The step model (--peak step): at the start of backward the GPU holds N c + (L - N) A of the
 * layers, and the peak falls as N grows, from no recomputation's to full checkpointing's. */
static void block_recompute_in_the_step_model(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.peak = PEAK_STEP;
    sc.attention = ATTENTION_FLASH;
    struct terms none = peak_of(&sc);
    sc.recompute = RECOMPUTE_EVERY_K;
    sc.ckpt_every = 1;
    struct terms full = peak_of(&sc);
    uint64_t prev = none.peak_bytes, A = full.act_layer_bytes, c = full.ckpt_bytes;
    for (uint64_t n = 1; n <= 24; n++) {
        sc.recompute_layers = n;
        struct terms t = peak_of(&sc);
        struct step_gpu g;
        assert_int_equal(model_step_gpu(&sc, &t, MODEL_STAGE_FIRST, &g), MODEL_OK);
        if (n < 24)
            assert_int_equal(g.acts, n * c + (24 - n) * A);
        assert_true(t.peak_bytes <= prev);
        prev = t.peak_bytes;
    }
    assert_int_equal(prev, full.peak_bytes);
    assert_true(full.peak_bytes < none.peak_bytes);
}

/* ---- context parallelism, HSDP, offload of checkpoints (doc/model.md 3.2, 4.9, 5.3) ---- */

/* cp = 2 on the lesson's model: every per-token term halves; plain attention keeps the scores
 * of its 1024 queries against all 2048 keys, 5 a (s/cp) s b; the ring adds 8 (s/cp) b g d_h. */
static void context_parallel_halves_the_tokens(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.cp = 2;
    struct terms t = peak_of(&sc);
    uint64_t half_sbh = 1024ull * 8 * 2048;
    uint64_t A = 34 * half_sbh + 5ull * 16 * 1024 * 2048 * 8;
    uint64_t ring = 8ull * 1024 * 8 * 16 * 128;
    assert_int_equal(t.act_layer_bytes, A);
    assert_int_equal(t.act_bytes, 24 * A + ring);
    assert_int_equal(t.logits_bytes, 4ull * 1024 * 8 * 50257);
    assert_int_equal(t.ckpt_bytes, 2 * half_sbh);
    struct scenario one = lesson();
    assert_int_equal(t.states_bytes, peak_of(&one).states_bytes); /* weights are not split */
    sc.attention = ATTENTION_FLASH;
    t = peak_of(&sc);
    assert_int_equal(t.act_layer_bytes, 34 * half_sbh + 4ull * 16 * 1024 * 8);
}

/* ZeRO shards over dp cp GPUs, or over zero_group of them (HSDP). ZeRO-3, dp = 4, cp = 2:
 * 16 Psi / 8; with zero_group = 2, 16 Psi / 2. Psi = 1,311,528,960. */
static void zero_shards_over_dp_cp_or_the_group(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.dp = 4;
    sc.cp = 2;
    sc.zero = 3;
    struct terms t = peak_of(&sc);
    assert_int_equal(t.states_bytes, 16ull * 1311528960 / 8);
    sc.zero_group = 2;
    t = peak_of(&sc);
    assert_int_equal(t.states_bytes, 16ull * 1311528960 / 2);
    assert_int_equal(model_zero_group(&sc), 2);
}

/* offload=checkpoints with full checkpointing: the GPU keeps the one checkpoint in transit and
 * the layer rebuilt, c + A; the 24 checkpoints are in CPU memory. */
static void offloaded_checkpoints_leave_one_on_the_gpu(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.recompute = RECOMPUTE_EVERY_K;
    sc.ckpt_every = 1;
    struct terms kept = peak_of(&sc);
    sc.offload = OFFLOAD_CHECKPOINTS;
    struct terms t = peak_of(&sc);
    uint64_t c = 2 * sbh_of(&sc), A = kept.act_layer_bytes;
    assert_int_equal(kept.act_bytes, 24 * c + A);
    assert_int_equal(t.act_bytes, c + A);
    assert_int_equal(t.host_bytes, 24 * c);
    assert_int_equal(kept.host_bytes, 0);
}

/* Pipeline stages over the rule m = global_batch / (b dp): with m = 2 < pp = 4 the first stage
 * keeps 2 micro-batches, not 4; with vpp = 2 and m = 4 it keeps all 8 chunk-micro-batches of its
 * 2 chunks of 3 layers: 24 layers' worth. */
static void pipeline_in_flight_follows_the_micro_batches(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.attention = ATTENTION_FLASH;
    sc.pp = 4;
    sc.global_batch = 2 * 8;
    struct terms t = peak_of(&sc);
    uint64_t A = t.act_layer_bytes;
    assert_int_equal(t.stage[MODEL_STAGE_FIRST].act_bytes, 2 * 6 * A);
    assert_int_equal(t.stage[MODEL_STAGE_FIRST].pipe.in_flight, 2);
    sc.global_batch = 4 * 8;
    sc.vpp = 2;
    t = peak_of(&sc);
    assert_int_equal(t.stage[MODEL_STAGE_FIRST].pipe.in_flight, 8);
    assert_int_equal(t.stage[MODEL_STAGE_FIRST].act_bytes, 24 * A);
    assert_int_equal(t.stage[MODEL_STAGE_LAST].pipe.in_flight, 5);
    assert_int_equal(t.stage[MODEL_STAGE_LAST].act_bytes, 5 * 3 * A);
}

/* ---- the memo of layer inventories (model_eval_cached) ---- */

static void same_terms(const struct terms *a, const struct terms *b)
{
    assert_int_equal(a->params, b->params);
    assert_int_equal(a->active_params, b->active_params);
    assert_int_equal(a->states_bytes, b->states_bytes);
    assert_int_equal(a->act_layer_bytes, b->act_layer_bytes);
    assert_int_equal(a->act_bytes, b->act_bytes);
    assert_int_equal(a->logits_bytes, b->logits_bytes);
    assert_int_equal(a->peak_bytes, b->peak_bytes);
    assert_int_equal(a->lesson_peak_bytes, b->lesson_peak_bytes);
    assert_int_equal(a->k_best, b->k_best);
    assert_int_equal(a->max_micro_batch, b->max_micro_batch);
    assert_int_equal(a->peak_stage, b->peak_stage);
}

/* The memo answers as the model does: random scenarios through one memo, each evaluated again
 * with every member that the memo's key leaves out changed (so that an entry is hit by a
 * scenario that differs there), compared with model_eval. A member that layer_kinds reads but
 * the key lacks fails here. */
static void memo_matches_the_model(void **state)
{
    (void)state;
    struct model_cache *memo = model_cache_new();
    assert_non_null(memo);
    uint64_t st = 4242;
    int hits = 0;
    for (int i = 0; i < 3000; i++) {
        struct scenario sc;
        random_scenario(&st, &sc);
        if (i % 2)
            sc.peak = PEAK_STEP;
        if (sc.arch == ARCH_LLAMA) { /* the profiles of doc/model.md 4.12, in the key */
            sc.impl = (enum impl)rs_range(&st, 0, IMPL_COUNT - 1);
            sc.sdpa = sc.attention == ATTENTION_FLASH && rs_range(&st, 0, 1);
        }
        sc.fp8 = (enum fp8)(i % 3); /* the FP8 GEMM weights memoised with the kinds (3.7) */
        for (int v = 0; v < 3; v++) {
            if (v > 0) { /* the members outside the key */
                sc.seq = rs_range(&st, 1, 8) * 512;
                sc.micro_batch = rs_range(&st, 1, 8);
                sc.dp = rs_range(&st, 1, 4);
                sc.global_batch = sc.micro_batch * sc.dp * sc.pp;
                sc.tp = sc.kv_heads % 2 == 0 && rs_range(&st, 0, 1) ? 2 : 1;
                sc.sp = sc.tp > 1 && rs_range(&st, 0, 1);
                sc.cp = sc.seq % 2 == 0 && rs_range(&st, 0, 1) ? 2 : 1;
                sc.zero = (unsigned)rs_range(&st, 0, 3);
                sc.zero_group = 0;
                sc.vocab = rs_range(&st, 1000, 200000);
                sc.tied = !sc.tied;
                sc.gpu_mem_bytes = rs_range(&st, 16, 192) * 1000000000ull;
                sc.loss = (enum loss_impl)rs_range(&st, 0, 1);
                sc.grad_buffer = (enum grad_buffer)rs_range(&st, 0, 1);
                sc.optimizer_impl = (enum optimizer_impl)rs_range(&st, 0, 2);
                hits++;
            }
            struct terms plain, memoised;
            enum model_status a = model_eval(&sc, &plain);
            enum model_status b = model_eval_cached(&sc, memo, &memoised);
            assert_int_equal(a, b);
            if (a == MODEL_OK)
                same_terms(&plain, &memoised);
        }
    }
    assert_true(hits > 1000);
    model_cache_free(memo);
}

/* ---- FP8 training (doc/model.md sections 3.7 and 4.10) ---- */

/*
 * Llama 3.1 8B (t = 1): 32 (2 * 4096^2 + 2 * 4096 * 1024 + 3 * 4096 * 14336) = 6,979,321,856 GEMM
 * parameters; their cached FP8 copies take 2 bytes each with per-tensor scaling (a copy and its
 * transpose), 1 on a GPU that reads one copy both ways, 2 (n + n/32) with MXFP8; ZeRO-3 over 8
 * shards them. They are part of the weights, in every phase of the step.
 */
static void fp8_weight_copies_llama3_1_8b(void **state)
{
    (void)state;
    struct scenario sc = llama2_7b();
    sc.kv_heads = 8;
    sc.ffn = 14336;
    sc.vocab = 128256;
    sc.attention = ATTENTION_FLASH;
    struct terms t, bf;
    assert_int_equal(model_peak(&sc, &bf), MODEL_OK);
    assert_int_equal(bf.fp8_bytes, 0);
    sc.fp8 = FP8_TENSOR;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.fp8_bytes, 13958643712);
    assert_int_equal(t.weights_bytes, bf.weights_bytes + 13958643712);
    assert_int_equal(t.states_bytes, bf.states_bytes + 13958643712);
    assert_int_equal(t.expert_bytes, 0);
    sc.fp8_one_copy = true;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.fp8_bytes, 6979321856);
    sc.fp8 = FP8_MXFP8; /* two copies whatever the GPU, each with a scale per 32 */
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.fp8_bytes, 2 * (6979321856 + 218103808));
    sc.fp8 = FP8_TENSOR;
    sc.fp8_one_copy = false;
    sc.dp = 8;
    sc.global_batch = sc.micro_batch * 8;
    sc.zero = 3;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.fp8_bytes, 13958643712 / 8);
    sc.zero = 2;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.fp8_bytes, 13958643712);
    /* The step model holds them with the weights. */
    sc.peak = PEAK_STEP;
    struct step_gpu g;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(model_step_gpu(&sc, &t, 0, &g), MODEL_OK);
    assert_int_equal(g.weights, t.weights_bytes);
    assert_int_equal(t.fp8_bytes, 13958643712);
}

/*
 * The lesson's GPT model with tp = 2: 24 layers of ceil(12h^2 / 2) = 25,165,824 GEMM parameters
 * (not the embedding, the biases or the norms), 2 bytes each: 1,207,959,552. Mixtral 8x7B with
 * dp = 8, tp = 2, ep = 8, etp = 1: per layer the attention's 41,943,040 / 2 and the routed
 * experts' 1,409,286,144 / 8 (the router stays bf16); ZeRO-3 shards the routed copies over the
 * expert data-parallel size 2 and the others over dp.
 */
static void fp8_weight_copies_gpt(void **state)
{
    (void)state;
    struct scenario sc = lesson();
    sc.tp = 2;
    sc.fp8 = FP8_TENSOR;
    struct terms t;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.fp8_bytes, 1207959552);
    sc = llama2_7b();
    sc.kv_heads = 8;
    sc.ffn = 14336;
    sc.experts = 8;
    sc.top_k = 2;
    sc.expert_ffn = 14336;
    sc.dp = 8;
    sc.global_batch = sc.micro_batch * 8;
    sc.tp = 2;
    sc.ep = 8;
    sc.etp = 1;
    sc.zero = 1;
    struct terms bf;
    assert_int_equal(model_peak(&sc, &bf), MODEL_OK);
    sc.fp8 = FP8_TENSOR;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    uint64_t dense = 32ull * 2 * (41943040 / 2), routed = 32ull * 2 * (1409286144 / 8);
    assert_int_equal(t.fp8_bytes, dense + routed);
    assert_int_equal(t.expert_bytes, bf.expert_bytes + routed);
    sc.zero = 3;
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_int_equal(t.fp8_bytes, dense / 8 + routed / 2);
}

/* With FP8 the largest micro-batch stays exact (it fits, one more does not) and the cheap bound
 * still implies that no count overflows, on random scenarios of either peak and recipe. */
static void fp8_keeps_the_micro_batch_exact_and_the_bound(void **state)
{
    (void)state;
    uint64_t st = 88;
    for (int i = 0; i < 3000; i++) {
        struct scenario sc;
        struct terms t;
        random_scenario(&st, &sc);
        sc.fp8 = rs_range(&st, 0, 1) ? FP8_MXFP8 : FP8_TENSOR;
        sc.fp8_one_copy = rs_range(&st, 0, 1) != 0;
        sc.peak = i % 2 ? PEAK_STEP : PEAK_LESSON;
        if (model_eval(&sc, &t) != MODEL_OK)
            continue;
        assert_max_micro_batch_exact(&sc, &t);
    }
    for (int i = 0; i < 5000; i++) {
        struct scenario sc;
        struct terms t;
        random_scenario(&st, &sc);
        sc.fp8 = FP8_MXFP8;
        sc.seq <<= rs_range(&st, 0, 20);
        sc.vocab <<= rs_range(&st, 0, 20);
        sc.layers <<= rs_range(&st, 0, 12);
        rs_keep_split(&sc);
        uint64_t wider = rs_range(&st, 0, 10);
        sc.hidden <<= wider;
        sc.ffn <<= wider;
        if (model_peak_cannot_overflow(&sc))
            assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    }
}

/* ---- multi-token prediction (doc/model.md 2.6) ---- */

/* DeepSeek-V3's module: an MoE layer, three norms and the 2h x h projection, 11,610,068,224
 * parameters (682,636,487,424 with the model); its active ones: the layer's active and the same
 * extras. */
static void mtp_module_params(void **state)
{
    (void)state;
    struct scenario sc;
    deepseek_v3(&sc);
    struct terms t0 = peak_of(&sc);
    sc.mtp_layers = 1;
    struct terms t1 = peak_of(&sc);
    assert_int_equal(t0.params, 671026419200ull);
    assert_int_equal(t1.params - t0.params, 11610068224ull);
    assert_int_equal(t1.params, 682636487424ull);
    uint64_t extras = 3 * 7168ull + 2 * 7168ull * 7168ull;
    uint64_t idle = t0.kind_routed / 256 * (256 - 8);
    assert_int_equal(t1.active_params - t0.active_params, t0.kind_params[1] - idle + extras);
    /* D modules: D times the module. */
    sc.mtp_layers = 3;
    assert_int_equal(peak_of(&sc).params - t0.params, 3 * 11610068224ull);
}

/* The modules are on the last stage (pp = 4, 1F1B): its layers' worth of a dense layer each, the
 * projection split by tp, three norms and, the embedding being untied, a copy of it; the other
 * stages hold what they held. Under DualPipe the last stage's GPUs hold the embedding anyway. */
static void mtp_on_the_last_stage(void **state)
{
    (void)state;
    struct scenario sc = llama2_7b();
    sc.pp = 4;
    sc.tp = 2;
    sc.global_batch = 8;
    struct terms t0 = peak_of(&sc);
    sc.mtp_layers = 2;
    struct terms t1 = peak_of(&sc);
    assert_int_equal(t0.n_stages, t1.n_stages);
    uint64_t h = 4096, layer = t0.kind_params[0] / 2; /* tp = 2 divides the layer exactly */
    uint64_t module = layer + 2 * h * h / 2 + 3 * h;
    for (unsigned i = 0; i < t0.n_stages; i++) {
        const struct model_gpu *a = &t0.stage[i], *b = &t1.stage[i];
        assert_int_equal(b->pipe.last, a->pipe.last);
        if (!a->pipe.last) {
            assert_int_equal(b->params, a->params);
            assert_int_equal(b->pipe.mtp[0] + b->pipe.mtp[1], 0);
            continue;
        }
        assert_int_equal(b->pipe.mtp[0], 2);
        assert_int_equal(b->pipe.layers[0], a->pipe.layers[0]);
        assert_int_equal(b->params - a->params, 2 * module + 32000 * h / 2);
    }
    sc.schedule = SCHEDULE_DUALPIPE;
    sc.mtp_layers = 0;
    t0 = peak_of(&sc);
    sc.mtp_layers = 2;
    t1 = peak_of(&sc);
    assert_true(t0.stage[0].pipe.first && t0.stage[0].pipe.last);
    assert_int_equal(t1.stage[0].params - t0.stage[0].params, 2 * module);
}

/* The loss's term of the last stage (doc/model.md 2.6, 7): (1 + D) logits + D A, in the static
 * sum; in the step model the modules' activations, inputs and norm statistics stand with the
 * model's outside the layers, and the logits and the loss's tensors are (1 + D) times theirs. */
static void mtp_loss_term(void **state)
{
    (void)state;
    struct scenario sc = llama2_7b();
    sc.seq = 4096;
    sc.micro_batch = 2;
    struct terms t0 = peak_of(&sc);
    struct step_gpu g0, g1;
    assert_int_equal(model_step_gpu(&sc, &t0, 0, &g0), MODEL_OK);
    sc.mtp_layers = 2;
    struct terms t1 = peak_of(&sc);
    assert_int_equal(model_step_gpu(&sc, &t1, 0, &g1), MODEL_OK);
    uint64_t logits = 4ull * 4096 * 2 * 32000, A = t0.kind_act[0];
    assert_int_equal(t0.stage[0].logits_bytes, logits);
    assert_int_equal(t1.stage[0].logits_bytes, 3 * logits + 2 * A);
    assert_int_equal(t1.act_bytes, t0.act_bytes);
    /* bf16 (r = e = 2): the embedding's output, the projection's 2h input, the final norm's and
     * the output layer's inputs, 2 + 4 + 2 + 2 bytes an element of h, and three fp32 statistics. */
    uint64_t sb = 4096 * 2, each = 10 * sb * 4096 + 12 * sb;
    assert_int_equal(g1.outside - g0.outside, 2 * (A + each));
    assert_int_equal(g1.logits_forward, 3 * g0.logits_forward);
    assert_int_equal(g1.loss, 3 * g0.loss);
    /* In FP8 the projection keeps its input in 1 byte: 2h less a module. */
    sc.fp8 = FP8_TENSOR;
    sc.mtp_layers = 0;
    t0 = peak_of(&sc);
    assert_int_equal(model_step_gpu(&sc, &t0, 0, &g0), MODEL_OK);
    sc.mtp_layers = 2;
    t1 = peak_of(&sc);
    assert_int_equal(model_step_gpu(&sc, &t1, 0, &g1), MODEL_OK);
    each = 8 * sb * 4096 + 12 * sb;
    assert_int_equal(g1.outside - g0.outside, 2 * (t0.kind_act[0] + each));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(block_recompute_keeps_n_checkpoints_and_the_rest_whole),
        cmocka_unit_test(block_recompute_counts_layers_per_chunk),
        cmocka_unit_test(block_recompute_in_the_step_model),
        cmocka_unit_test(check_yourself_6_every_6_layers),
        cmocka_unit_test(checkpoint_80_layers_k2_is_best),
        cmocka_unit_test(k_star_for_24_layers),
        cmocka_unit_test(k_best_is_the_minimum_of_all_k),
        cmocka_unit_test(pipeline_first_stage_holds_l_layers_worth),
        cmocka_unit_test(pipeline_last_stage_can_be_the_most_loaded),
        cmocka_unit_test(pipeline_checkpoint_segments_stay_inside_a_stage),
        cmocka_unit_test(context_parallel_halves_the_tokens),
        cmocka_unit_test(memo_matches_the_model),
        cmocka_unit_test(zero_shards_over_dp_cp_or_the_group),
        cmocka_unit_test(offloaded_checkpoints_leave_one_on_the_gpu),
        cmocka_unit_test(pipeline_in_flight_follows_the_micro_batches),
        cmocka_unit_test(fp8_weight_copies_llama3_1_8b),
        cmocka_unit_test(fp8_weight_copies_gpt),
        cmocka_unit_test(fp8_keeps_the_micro_batch_exact_and_the_bound),

        cmocka_unit_test(mtp_module_params),
        cmocka_unit_test(mtp_on_the_last_stage),
        cmocka_unit_test(mtp_loss_term),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
