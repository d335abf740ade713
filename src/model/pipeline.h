/*
 * pipeline: the geometry of a pipeline-parallel schedule (doc/model.md section 6).
 *
 * Stage r (0-based) of pp holds the layers [r L/pp, (r+1) L/pp) - with v virtual chunks
 * (interleaved 1F1B) the chunks r, r + pp, ..., r + (v-1) pp of L/(pp v) layers each - the
 * embedding on stage 0, the output layer and the logits on stage pp - 1. During a step of m
 * micro-batches it keeps min(m, pp - r) micro-batches in flight (1F1B), or with v chunks
 * min(m v, 2 (pp - r - 1) + (v - 1) pp + 1) chunk-micro-batches (Megatron-LM's
 * get_pp_rank_microbatches), the k-th forward running chunk (k / pp) mod v. A stage whose layers
 * are of the same kinds, chunk by chunk, as its predecessor's holds no more than it: only the
 * first, the last and the stages where the mix of dense and MoE layers changes can be the most
 * loaded (at most PIPELINE_CANDIDATES).
 *
 * Pure: no I/O, no allocation.
 */
#ifndef MEMFIT_PIPELINE_H
#define MEMFIT_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "model/scenario.h"

#define PIPELINE_CANDIDATES 4

/* What one stage holds at its peak of activations. */
struct pipeline_stage {
    uint64_t rank;          /* r, 0-based */
    uint64_t layers[2];     /* transformer layers of each kind it holds (layer.h: dense, MoE) */
    uint64_t first_layer;   /* the first layer of its first chunk */
    uint64_t in_flight;     /* micro-batches (chunk-micro-batches with vpp) kept in flight */
    uint64_t act_layers[2]; /* layer-micro-batches of each kind whose activations it keeps */
    uint64_t chunk_layers;  /* L / (pp vpp): a checkpoint segment never crosses a chunk */
    bool first, last;       /* holds the embedding; the output layer */
};

/* m, the micro-batches of one optimizer step on a data-parallel rank: global_batch / (b dp)
 * rounded up, at least 1; pp when the scenario leaves the global batch out (0). */
uint64_t pipeline_micro_batches(const struct scenario *sc);

/* The stages that can be the most loaded, with `dense` leading dense layers of the L (the
 * others MoE): out[0] is stage 0; with pp > 1 out[1] is stage pp - 1, then the stages where the
 * layer mix changes. Returns how many (1 to PIPELINE_CANDIDATES). L is divisible by pp vpp
 * (config checks it). */
unsigned pipeline_candidates(const struct scenario *sc, uint64_t dense,
                             struct pipeline_stage out[PIPELINE_CANDIDATES]);

/* One stage r of the schedule, as pipeline_candidates describes it. */
void pipeline_stage_at(const struct scenario *sc, uint64_t dense, uint64_t r,
                       struct pipeline_stage *out);

/* With checkpointing every k layers (k > 0): the checkpoints a stage keeps, one per segment of
 * each chunk-micro-batch in flight, and the layers of its segment, min(k, L / (pp vpp))
 * (doc/model.md 6.2). */
uint64_t pipeline_segment_layers(const struct pipeline_stage *st, uint64_t k);
uint64_t pipeline_checkpoints(const struct pipeline_stage *st, uint64_t k);

#endif
