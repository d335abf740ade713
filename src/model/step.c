/* step: see step.h. The sums of doc/model.md section 10.2, measured in tests/validation/step.csv.
 */
#include "model/step.h"

#include "base/checked.h"

const char *step_phase_name(enum step_phase p)
{
    static const char *const names[] = {"forward", "backward_start", "recompute", "backward_end",
                                        "optimizer"};
    return (unsigned)p < STEP_PHASES ? names[p] : "?";
}

/* a + b, *over set when it passes 64 bits: a local flag the compiler keeps in a register (this
 * is eval's hot path; the sums share their common parts). */
static inline uint64_t add(bool *over, uint64_t a, uint64_t b)
{
    uint64_t r;
    *over |= __builtin_add_overflow(a, b, &r);
    return r;
}

static inline uint64_t max2(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

enum step_phase step_point_phase(int point)
{
    static const enum step_phase phases[STEP_POINTS] = {
        STEP_FORWARD,      STEP_BACKWARD_START, STEP_RECOMPUTE, STEP_RECOMPUTE,
        STEP_BACKWARD_END, STEP_BACKWARD_END,   STEP_OPTIMIZER};
    return point >= 0 && point < STEP_POINTS ? phases[point] : STEP_PHASES;
}

bool step_phases(const struct step_gpu *g, struct step_peak *out)
{
    bool over = false;
    uint64_t *p = out->point_bytes;
    uint64_t wm = add(&over, g->weights, g->optimizer);
    uint64_t in = add(&over, g->tokens, g->embedding_inputs);
    /* At the loss: the activations (or checkpoints), the fp32 logits and, under autocast, every
     * bf16 weight copy the cache still holds. The loss's backward: without checkpointing the
     * layers' copies are saved for backward. */
    uint64_t held = add(&over, add(&over, wm, g->grads_at_start), add(&over, in, g->outside));
    held = add(&over, held, add(&over, add(&over, g->acts, g->ring), g->head_copy));
    p[0] = add(&over, held, add(&over, g->all_copies, g->logits_forward));
    p[1] = add(&over, held, add(&over, g->recompute ? g->kept_copies : g->all_copies, g->loss));
    /* The first segment rebuilt (the last one): every checkpoint, the rebuilt output, the
     * segment, the gradients of the output layer; and the last rebuilt, with every other layer's
     * gradient (on demand) and two checkpoints. Both at the layer's last GEMM. */
    p[2] = p[3] = 0;
    if (g->recompute) {
        uint64_t rebuilt = add(&over, add(&over, wm, in), add(&over, g->segment_act, g->transient));
        rebuilt = add(&over, rebuilt, add(&over, g->layer_copies, g->head_grads));
        rebuilt = add(&over, rebuilt, g->ring);
        p[2] =
            add(&over, add(&over, rebuilt, g->kept_grads), add(&over, g->ckpt_in_flight, g->ckpt));
        p[3] = add(&over, rebuilt, add(&over, add(&over, g->ckpt, g->ckpt), g->done_grads));
    }
    /* The end of the backward pass (the embedding's, or its dropout's), the optimizer step. */
    uint64_t all = add(&over, wm, add(&over, g->grads, g->tokens));
    p[4] = add(&over, all, g->embedding_end);
    uint64_t d = add(&over, all, g->dropout_end_add);
    p[5] = d > g->dropout_end_less ? d - g->dropout_end_less : 0;
    p[6] = add(&over, all, g->optimizer_temps);
    uint64_t *ph = out->phase_bytes;
    ph[STEP_FORWARD] = p[0];
    ph[STEP_BACKWARD_START] = p[1];
    ph[STEP_RECOMPUTE] = max2(p[2], p[3]);
    ph[STEP_BACKWARD_END] = max2(p[4], p[5]);
    ph[STEP_OPTIMIZER] = p[6];
    out->phase = STEP_FORWARD;
    for (int i = 1; i < STEP_PHASES; i++)
        if (ph[i] > ph[out->phase])
            out->phase = (enum step_phase)i;
    out->bytes = ph[out->phase];
    return !over;
}

/* One point's parts: wm split into weights and optimizer states, then the rest as listed. */
static void parts_of(const struct step_gpu *g, uint64_t grads, uint64_t act, uint64_t loss,
                     uint64_t copies, uint64_t temps, uint64_t *out)
{
    out[STEP_PART_WEIGHTS] = g->weights;
    out[STEP_PART_OPTIMIZER] = g->optimizer;
    out[STEP_PART_GRADS] = grads;
    out[STEP_PART_ACT] = act;
    out[STEP_PART_LOSS] = loss;
    out[STEP_PART_COPIES] = copies;
    out[STEP_PART_TEMPS] = temps;
}

bool step_phase_parts(const struct step_gpu *g, struct step_parts *out)
{
    /* The points of step_phases, in its order, each term in its part (test_timeline.c holds
     * every phase's sum to step_phases'); a phase is its largest point, the first on a tie. */
    struct checked ck = {false};
    struct step_peak sp;
    if (!step_phases(g, &sp))
        return false;
    uint64_t pt[STEP_POINTS][STEP_PARTS] = {{0}}, total[STEP_POINTS] = {0};
    uint64_t in = ck_add(&ck, g->tokens, g->embedding_inputs);
    uint64_t held = ck_add(&ck, ck_add(&ck, in, g->outside), ck_add(&ck, g->acts, g->ring));
    parts_of(g, g->grads_at_start, held, g->logits_forward,
             ck_add(&ck, g->all_copies, g->head_copy), 0, pt[0]);
    parts_of(g, g->grads_at_start, held, g->loss,
             ck_add(&ck, g->recompute ? g->kept_copies : g->all_copies, g->head_copy), 0, pt[1]);
    if (g->recompute) {
        uint64_t top =
            ck_add(&ck, ck_add(&ck, in, ck_add(&ck, g->ckpt_in_flight, g->ckpt)), g->segment_act);
        uint64_t low = ck_add(&ck, ck_add(&ck, in, ck_mul(&ck, 2, g->ckpt)), g->segment_act);
        top = ck_add(&ck, top, g->ring);
        low = ck_add(&ck, low, g->ring);
        parts_of(g, ck_add(&ck, g->head_grads, g->kept_grads), top, 0, g->layer_copies,
                 g->transient, pt[2]);
        parts_of(g, ck_add(&ck, g->head_grads, g->done_grads), low, 0, g->layer_copies,
                 g->transient, pt[3]);
    }
    parts_of(g, g->grads, g->tokens, 0, 0, g->embedding_end, pt[4]);
    /* The dropout's backward: the gradients not there yet (dropout_end_less) taken from the
     * gradients (then, were they fewer, from the rest). */
    parts_of(g, g->grads, g->tokens, 0, 0, g->dropout_end_add, pt[5]);
    static const enum step_part cut_order[] = {STEP_PART_GRADS, STEP_PART_TEMPS, STEP_PART_ACT,
                                               STEP_PART_OPTIMIZER, STEP_PART_WEIGHTS};
    uint64_t less = g->dropout_end_less;
    for (unsigned i = 0; less > 0 && i < sizeof cut_order / sizeof *cut_order; i++) {
        uint64_t *v = &pt[5][cut_order[i]], cut = less < *v ? less : *v;
        *v -= cut;
        less -= cut;
    }
    if (less > 0) /* step_phases' 0: nothing of the point */
        for (int i = 0; i < STEP_PARTS; i++)
            pt[5][i] = 0;
    parts_of(g, g->grads, g->tokens, 0, 0, g->optimizer_temps, pt[6]);
    for (int k = 0; k < STEP_POINTS; k++)
        for (int i = 0; i < STEP_PARTS; i++)
            total[k] = ck_add(&ck, total[k], pt[k][i]);
    uint64_t best[STEP_PHASES] = {0};
    for (int ph = 0; ph < STEP_PHASES; ph++)
        for (int i = 0; i < STEP_PARTS; i++)
            out->phase[ph][i] = 0;
    for (int k = 0; k < STEP_POINTS; k++) {
        enum step_phase ph = step_point_phase(k);
        if (total[k] <= best[ph])
            continue;
        best[ph] = total[k];
        for (int i = 0; i < STEP_PARTS; i++)
            out->phase[ph][i] = pt[k][i];
    }
    for (int i = 0; i < STEP_PARTS; i++) {
        out->first_rebuild[i] = pt[2][i];
        out->last_rebuild[i] = pt[3][i];
    }
    return !ck.overflow;
}
