/*
 * step: the peak of a real training step, phase by phase (doc/model.md section 10.2).
 *
 * The lesson's peak (states + activations + logits) never exists at one instant of a step. A
 * step's memory is the maximum over its phases, each a short sum of what is alive then: the end
 * of the forward pass (the logits and, under autocast, the bf16 weight copies), the start of the
 * backward pass (the loss's tensors), the rebuild of a checkpointed segment (the gradients so far
 * and the layer being differentiated), the end of the backward pass (every gradient, a tied
 * embedding's partial gradients) and the optimizer step (its temporaries). The terms were
 * measured on a whole step of the lesson's GPT stack (tests/validation/step.csv); a test holds
 * the model to every measured peak and phase.
 *
 * Pure: model_step.c fills a struct step_gpu from its own terms; no I/O, no allocation, no globals.
 */
#ifndef MEMFIT_STEP_H
#define MEMFIT_STEP_H

#include <stdbool.h>
#include <stdint.h>

#include "model/scenario.h"

enum step_phase {
    STEP_FORWARD,
    STEP_BACKWARD_START,
    STEP_RECOMPUTE,
    STEP_BACKWARD_END,
    STEP_OPTIMIZER,
    STEP_PHASES
};

/* "forward", "backward_start", ...: eval's peak_phase. */
const char *step_phase_name(enum step_phase p);

/* What one GPU of a pipeline stage holds, in bytes, at one micro-batch (model_step.c fills it). */
struct step_gpu {
    bool first, last;                   /* holds the embedding, the output layer */
    uint64_t weights, grads, optimizer; /* its model states */
    uint64_t grads_at_start;            /* gradients alive as the backward pass starts */
    uint64_t tokens;                    /* token ids and targets (int64) */
    uint64_t embedding_inputs;          /* position ids, the embedding's dropout mask */
    uint64_t outside;                   /* final norm's input and statistics, output's input */
    uint64_t acts;                      /* kept at the end of its forward passes */
    uint64_t ring;                      /* context parallelism's K and V receive buffers */
    uint64_t ckpt_in_flight;            /* with checkpointing: the checkpoints kept, c each */
    uint64_t ckpt, segment_act;         /* c; a segment's activations, k A */
    uint64_t layer_copies, all_copies;  /* autocast: one segment's, all layers' bf16 weights */
    uint64_t head_copy;                 /* autocast: the output layer's bf16 weights */
    uint64_t logits_forward, loss;      /* fp32 logits at the loss; the loss's backward */
    uint64_t head_grads, segment_grads; /* gradients before the layers; of one segment */
    uint64_t done_grads;                /* on demand: the other layers' gradients */
    uint64_t kept_grads; /* block recomputation, on demand: the kept layers' at the first rebuild */
    uint64_t kept_copies;   /* block recomputation, autocast: the kept layers' saved bf16 weights */
    uint64_t transient;     /* a layer's backward: its last GEMM's gradients */
    uint64_t embedding_end; /* the embedding's backward at the end */
    uint64_t dropout_end_add, dropout_end_less; /* or its dropout's backward: add - less */
    uint64_t optimizer_temps;                   /* the optimizer step's temporaries */
    bool recompute;                             /* checkpointing: a recompute phase */
};

/* The points of a step whose maximum is its peak, each affine in the micro-batch but for the
 * rounding of divisions: a phase is the largest of its points. */
#define STEP_POINTS 7

struct step_peak {
    uint64_t point_bytes[STEP_POINTS]; /* 0 for a point that does not happen */
    uint64_t phase_bytes[STEP_PHASES]; /* 0 for a phase that does not happen */
    enum step_phase phase;             /* the highest, the first on a tie */
    uint64_t bytes;
};

/* The phase each point of step_peak.point_bytes belongs to. */
enum step_phase step_point_phase(int point);

/* The phases of g; false when a sum overflows 64 bits. */
bool step_phases(const struct step_gpu *g, struct step_peak *out);

/* The parts of a phase's sum, as the report stacks them (its phase bars and step timeline). */
enum step_part {
    STEP_PART_WEIGHTS,
    STEP_PART_GRADS,
    STEP_PART_OPTIMIZER,
    STEP_PART_ACT,    /* activations or checkpoints, the segment rebuilt, the inputs, outside */
    STEP_PART_LOSS,   /* the fp32 logits at the loss, the loss's backward */
    STEP_PART_COPIES, /* autocast's bf16 weight copies */
    STEP_PART_TEMPS,  /* the last GEMM's backward, the embedding's, the optimizer's temporaries */
    STEP_PARTS
};

struct step_parts {
    uint64_t phase[STEP_PHASES][STEP_PARTS]; /* each sums to step_peak's phase_bytes */
    /* The two rebuilds the recompute phase is the larger of (0 without checkpointing): the first
     * (every checkpoint, the output layer's gradients) and the last (two checkpoints). */
    uint64_t first_rebuild[STEP_PARTS], last_rebuild[STEP_PARTS];
};

/* The phases of g part by part (the same sums as step_phases); false when one overflows. */
bool step_phase_parts(const struct step_gpu *g, struct step_parts *out);

#endif
