/*
 * timeline: the events of one training step and the activation memory after each (issue 3).
 *
 * Pure: timeline_build fills a caller's array. Time is counted in units of one layer's forward
 * FLOPs: a layer's forward takes 1, its backward 2, a recomputed forward 1. The step runs the
 * forward pass layer by layer (each adds A, or under checkpointing every k only the segment
 * inputs c are kept), the logits at the end of the forward pass, the loss backward (which frees
 * the logits), then the backward pass layer by layer (each frees A), each checkpointed segment
 * rebuilt (+A per layer, marked as recomputation) right before its backward. Memory is the
 * activation memory of the most loaded GPU; the model states are a constant band under it.
 *
 * Which GPU, and which micro-batches: with pp = 1 the timeline is the one GPU's step, one
 * micro-batch of L layers (gradient accumulation repeats it). With pp > 1 it is the most loaded
 * stage of model_peak (terms.peak_stage) doing its own work on the micro-batches it holds at once
 * under 1F1B - pp micro-batches of L/pp layers on the first stage, one with the logits on the last
 * - run back to back (all their forwards, then all their backwards), not the interleaved schedule
 * with its bubbles; its peak is still the analytic one. Layer numbers are global (the last stage
 * starts at L - L/pp). Under DualPipe (doc/model.md 6.4) GPU r runs its pp - r micro-batches
 * through stage r, then its r + 1 through stage pp - 1 - r, each with that stage's layers.
 *
 * Invariants (tests/plan/test_timeline.c): without checkpointing every k the maximum of
 * states + act + logits equals model_peak's peak_bytes to the byte; with it, it never exceeds it
 * (the analytic M(k) + logits adds the logits to the rebuilt segment, but the loss backward frees
 * them before the first rebuild, and a short last segment rebuilds fewer than k layers). Total time
 * is 3 L' (L' = layers times micro-batches of the stage), 4 L' with checkpointing every k: every
 * layer is rebuilt once whatever k (doc/model.md section 10). Selective recomputation makes no
 * segments: its A (model_layer_act) already lacks the attention core, whose rebuild is inside the
 * backward.
 *
 * Under --peak step (doc/model.md section 10.2) the walk draws the phases of a real step: the band
 * is the weights and optimizer states, and each event also holds the gradients, autocast's weight
 * copies and temporaries. At the phases the event holds exactly what the step model sums there
 * (model_step_parts): the end of the forward pass (the logits event, or the stage's last forward
 * without the output layer), the start of the backward pass (the loss backward, with the loss's
 * tensors as its logits), the first and the last rebuild of checkpointing (the last rebuilt layer,
 * with the last GEMM's backward), the end of the backward pass and the optimizer step (two events
 * of no time after the last backward). Between them the walk's own activations, the token ids and
 * the embedding's inputs, the gradients growing through the first micro-batch's backward and the
 * autocast copies growing through the forward and freed through the backward, never above the
 * higher of the phases around them: the maximum of the walk is the step's peak to the byte, first
 * reached at its phase (timeline_summary.peak_phase).
 */
#ifndef MEMFIT_TIMELINE_H
#define MEMFIT_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "model/scenario.h"
#include "model/step.h"

enum timeline_kind {
    TIMELINE_FORWARD,
    TIMELINE_LOGITS,
    TIMELINE_LOSS_BACKWARD,
    TIMELINE_RECOMPUTE,
    TIMELINE_BACKWARD,
    TIMELINE_BACKWARD_END, /* --peak step: the embedding's backward, every gradient there */
    TIMELINE_OPTIMIZER     /* --peak step: the optimizer step */
};

struct timeline_event {
    enum timeline_kind kind;
    uint64_t layer;        /* 0-based layer index; 0 for the logits and the loss */
    uint64_t micro_batch;  /* which of the stage's in-flight micro-batches (0 with pp = 1) */
    double t_start, t_end; /* in layer-forward units */
    uint64_t act_bytes;    /* stored activations (incl. checkpoints) after the event */
    uint64_t logits_bytes; /* logits held after the event (step: or the loss's tensors) */
    /* --peak step (0 under --peak lesson): act_bytes also holds the token ids, the embedding's
     * inputs and what sits outside the layers (step.h's STEP_PART_ACT). */
    uint64_t grads_bytes;  /* gradients */
    uint64_t copies_bytes; /* autocast's bf16 weight copies */
    uint64_t temp_bytes;   /* temporaries of a backward or of the optimizer step */
    enum step_phase phase; /* the phase this event is; STEP_PHASES for none (always, lesson) */
};

struct timeline_summary {
    uint64_t states_bytes;      /* the constant band (step: weights and optimizer states) */
    uint64_t peak_bytes;        /* max over events of states + act + logits (+ step's parts) */
    enum step_phase peak_phase; /* step: the phase of the peak; STEP_PHASES under lesson */
    double peak_time;           /* when the peak is first reached */
    double total_time;          /* 3L, or 4L with checkpointing every k (+33%) */
    uint64_t micro_batches;     /* micro-batches the stage holds at once: pp on the first, else 1 */
    uint64_t stage_layers;      /* L/pp (under DualPipe, the GPU's first stage's) */
    uint64_t layer_runs;        /* layer-micro-batches walked: micro_batches L/pp, or under
                                 * DualPipe each stage's micro-batches times its layers */
    uint64_t segment;           /* k' = min(k, L/pp) with checkpointing every k, else 0 */
    size_t n_events;
};

/* An upper bound on the events of one step for `sc` (for sizing the caller's array): 3L + 2
 * (3L + 4 under --peak step); 0 when that does not fit in a size_t. */
size_t timeline_capacity(const struct scenario *sc);

/* Fills events[0..cap) and the summary; returns 0, or -1 on overflow or too small an array. */
int timeline_build(const struct scenario *sc, struct timeline_event *events, size_t cap,
                   struct timeline_summary *sum);

/* Called with each event of the step, in order; *e is valid during the call only. */
typedef void timeline_sink_fn(void *ctx, const struct timeline_event *e);

/* timeline_build without an array: each event goes to sink(ctx, e) as the walk makes it, so the
 * memory does not grow with the layers (a chart of a million layers keeps a few hundred points
 * of them). The same events and summary; returns 0, or -1 on overflow. */
int timeline_stream(const struct scenario *sc, timeline_sink_fn *sink, void *ctx,
                    struct timeline_summary *sum);

#endif
