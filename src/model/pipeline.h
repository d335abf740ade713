/*
 * pipeline: the geometry of a pipeline-parallel schedule (doc/model.md section 6).
 *
 * The L layers are split over pp stages (doc/model.md 6.3): evenly when pp divides L; with
 * first_stage_layers / last_stage_layers, those on the first and last stages and the rest evenly
 * over the others (Megatron-LM's --decoder-first/last-pipeline-num-layers); with
 * embedding_in_split / loss_in_split, the embedding in a first slot and the loss in a last slot
 * beside the L layers, every stage S slots (Megatron-LM's
 * --account-for-embedding/loss-in-pipeline-split); otherwise each stage holds ceil(L/pp) or
 * floor(L/pp) layers, the floors on the first and last stages first, then inwards (126 on 16: 7,
 * 8 x 14, 7). With v virtual chunks (interleaved 1F1B) stage r holds the model chunks r, r + pp,
 * ..., r + (v-1) pp, each of L_r / v layers - of S / v slots with the embedding's and the loss's
 * slots, so that the first chunk of stage 0 and the last of stage pp - 1 hold a layer fewer (126
 * layers on 16 stages of 8 chunks: 1 layer a chunk, none in those two). The embedding is on stage
 * 0, the output layer and the logits on stage pp - 1.
 *
 * During a step of m micro-batches stage r keeps min(m, pp - r) micro-batches in flight (1F1B and
 * ZB1P), or with v chunks min(m v, 2 (pp - r - 1) + (v - 1) pp + 1) chunk-micro-batches
 * (Megatron-LM's get_pp_rank_microbatches), the k-th forward running chunk (k / pp) mod v. Under
 * DualPipe (DeepSeek-V3 report, 3.2.1) GPU r holds two stages, r and pp - 1 - r, one of each
 * direction: pp - r micro-batches of the first in flight and r + 1 of the second, pp + 1 in all.
 *
 * A stage (GPU) whose layers are of the same kinds and counts as its predecessor's holds no more
 * than it under 1F1B: only the first, the last, and the stages where the layer count or the mix
 * of dense and MoE layers changes can be the most loaded. Under DualPipe GPUs r and pp - 1 - r
 * hold the same, and a GPU's activations are linear in r between such changes, so both ends of
 * each run in the first half are candidates. At most PIPELINE_CANDIDATES in all.
 *
 * Pure: no I/O, no allocation.
 */
#ifndef MEMFIT_PIPELINE_H
#define MEMFIT_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "model/scenario.h"

#define PIPELINE_CANDIDATES 12

/* How the layers are split over the stages: `head` stages of head_layers first, `tail` stages of
 * tail_layers last, the mid_layers on each of the others. With the embedding's (lead) or the
 * loss's (trail) slot in the split, mid_layers is every stage's slots, S, and the first (last)
 * stage holds S - 1 layers: head = lead, tail = trail. */
struct pipeline_split {
    uint64_t head, head_layers;
    uint64_t mid_layers;
    uint64_t tail, tail_layers;
    uint64_t lead, trail; /* the embedding's and the loss's slots (1) or none (0) */
};

/* What one stage (one GPU of it) holds at its peak of activations. */
struct pipeline_stage {
    uint64_t rank;          /* r, 0-based */
    uint64_t layers[2];     /* transformer layers of each kind it holds (layer.h: dense, MoE) */
    uint64_t stage_layers;  /* L_r, the layers of stage r (all its chunks) */
    uint64_t first_layer;   /* the first layer of its first chunk */
    uint64_t in_flight;     /* micro-batches (chunk-micro-batches with vpp) kept in flight */
    uint64_t act_layers[2]; /* layer-micro-batches of each kind whose activations it keeps */
    uint64_t chunk_layers;  /* L_r / vpp: a checkpoint segment never crosses a chunk; with the
                             * embedding's or the loss's slot, the largest chunk's */
    /* Interleaved with the embedding's or the loss's slot in the split: one of its chunks (the
     * first of stage 0, the last of stage pp - 1) holds chunk_layers - 1 layers, and short_held of
     * its chunk-micro-batches in flight are of it (of in_flight). */
    bool short_chunk;
    uint64_t short_held, short_first_layer; /* and the first layer of that chunk */
    /* DualPipe: the GPU's second stage, pp - 1 - r, its layers, its first layer, how many of
     * them are dense (of layers[0]) and the micro-batches of it in flight (of in_flight; 0 under
     * the other schedules). */
    uint64_t twin_layers, twin_first_layer, twin_dense, twin_in_flight;
    bool first, last; /* holds the embedding; the output layer */
    /* The multi-token-prediction modules it holds (doc/model.md 2.6): on the GPUs of the last
     * stage, D transformer layers of the model's last kind (of mtp[LAYER_DENSE] or
     * mtp[LAYER_MOE]), not counted in layers[]; their activations are the loss's (7). */
    uint64_t mtp[2];
};

/* The transformer layers of kind k GPU st holds, its multi-token-prediction modules' included:
 * what its parameters, states and time count (its activations count layers[] and act_layers[]). */
static inline uint64_t pipeline_gpu_layers(const struct pipeline_stage *st, int k)
{
    return st->layers[k] + st->mtp[k];
}

/* m, the micro-batches of one optimizer step on a data-parallel rank: global_batch / (b dp)
 * rounded up, at least 1; pp when the scenario leaves the global batch out (0). */
uint64_t pipeline_micro_batches(const struct scenario *sc);

/* The split of sc's layers over its stages (the rules above; config checks that the columns
 * hold: every stage at least one layer, divisible by vpp). */
struct pipeline_split pipeline_split_of(const struct scenario *sc);

/* Whether sc's pp, vpp, first_stage_layers and last_stage_layers give a split (the rules of
 * doc/model.md 6.3, which config checks with a message each): at least one layer a stage, the
 * given ends leaving the same number on each other stage, every stage's a multiple of vpp. */
bool pipeline_split_valid(const struct scenario *sc);

/* The largest number dividing the layers of every stage (with the embedding's or the loss's
 * slot, every stage's slots, S): the vpp a split allows divide it. */
uint64_t pipeline_split_gcd(const struct scenario *sc);

/* L_r, the layers of stage r. */
uint64_t pipeline_stage_layers(const struct pipeline_split *sp, uint64_t pp, uint64_t r);

/* The layers of sc's stage r, and the most any stage holds (L with pp = 1). */
uint64_t pipeline_layers_of(const struct scenario *sc, uint64_t r);
uint64_t pipeline_max_stage_layers(const struct scenario *sc);

/* The stages that can be the most loaded, with `dense` leading dense layers of the L (the
 * others MoE): out[0] is stage 0; with pp > 1 out[1] is stage pp - 1 (under DualPipe GPU 0
 * holds both ends, and the others are of the first half), then the others. Returns how many (1
 * to PIPELINE_CANDIDATES). */
unsigned pipeline_candidates(const struct scenario *sc, uint64_t dense,
                             struct pipeline_stage out[PIPELINE_CANDIDATES]);

/* One stage r of the schedule, as pipeline_candidates describes it. */
void pipeline_stage_at(const struct scenario *sc, uint64_t dense, uint64_t r,
                       struct pipeline_stage *out);

/* With checkpointing every k layers (k > 0): the checkpoints a stage keeps, one per segment of
 * each chunk-micro-batch in flight, and the layers of its segment, min(k, its largest chunk)
 * (doc/model.md 6.2). */
uint64_t pipeline_segment_layers(const struct pipeline_stage *st, uint64_t k);
uint64_t pipeline_checkpoints(const struct pipeline_stage *st, uint64_t k);

/* With checkpointing every k layers (k > 0): the checkpoints one micro-batch leaves on stage st
 * through all its vpp chunks (vpp: the scenario's, 1 for 0), its own stage's under DualPipe. */
uint64_t pipeline_micro_batch_checkpoints(const struct pipeline_stage *st, uint64_t vpp,
                                          uint64_t k);

#endif
