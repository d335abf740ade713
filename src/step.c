/* step: see step.h. The sums of doc/model.md section 10.2, measured in tests/validation/step.csv.
 */
#include "step.h"

#include "checked.h"

const char *step_phase_name(enum step_phase p)
{
    static const char *const names[] = {"forward", "backward_start", "recompute", "backward_end",
                                        "optimizer"};
    return (unsigned)p < STEP_PHASES ? names[p] : "?";
}

static uint64_t sum(struct checked *ck, const uint64_t *v, int n)
{
    uint64_t s = 0;
    for (int i = 0; i < n; i++)
        s = ck_add(ck, s, v[i]);
    return s;
}

bool step_phases(const struct step_gpu *g, struct step_peak *out)
{
    struct checked ck = {false};
    uint64_t *p = out->point_bytes;
    enum step_phase *ph = out->point_phase;
    uint64_t wm = ck_add(&ck, g->weights, g->optimizer);
    uint64_t in = ck_add(&ck, g->tokens, g->embedding_inputs);
    /* At the loss: the activations (or checkpoints), the fp32 logits and, under autocast, every
     * bf16 weight copy the cache still holds. */
    const uint64_t fwd[] = {wm,      g->grads_at_start, in,           g->outside,
                            g->acts, g->all_copies,     g->head_copy, g->logits_forward};
    p[0] = sum(&ck, fwd, 8);
    ph[0] = STEP_FORWARD;
    /* The loss's backward: without checkpointing the layers' copies are saved for backward. */
    const uint64_t start[] = {wm,           g->grads_at_start,
                              in,           g->outside,
                              g->acts,      g->recompute ? 0 : g->all_copies,
                              g->head_copy, g->loss};
    p[1] = sum(&ck, start, 8);
    ph[1] = STEP_BACKWARD_START;
    /* The first segment rebuilt (the last one): every checkpoint, the rebuilt output, the
     * segment, the gradients of the output layer; and the last rebuilt, with every other layer's
     * gradient (on demand) and two checkpoints. Both at the layer's last GEMM. */
    const uint64_t top[] = {wm,
                            in,
                            ck_add(&ck, g->ckpt_in_flight, g->ckpt),
                            g->segment_act,
                            g->layer_copies,
                            g->head_grads,
                            g->transient};
    const uint64_t low[] = {wm,
                            in,
                            ck_mul(&ck, 2, g->ckpt),
                            g->segment_act,
                            g->layer_copies,
                            ck_add(&ck, g->head_grads, g->done_grads),
                            g->transient};
    p[2] = g->recompute ? sum(&ck, top, 7) : 0;
    p[3] = g->recompute ? sum(&ck, low, 7) : 0;
    ph[2] = ph[3] = STEP_RECOMPUTE;
    const uint64_t end[] = {wm, g->grads, g->tokens, g->embedding_end};
    p[4] = sum(&ck, end, 4);
    const uint64_t drop[] = {wm, g->grads, g->tokens, g->dropout_end_add};
    uint64_t d = sum(&ck, drop, 4);
    p[5] = d > g->dropout_end_less ? d - g->dropout_end_less : 0;
    ph[4] = ph[5] = STEP_BACKWARD_END;
    const uint64_t opt[] = {wm, g->grads, g->tokens, g->optimizer_temps};
    p[6] = sum(&ck, opt, 4);
    ph[6] = STEP_OPTIMIZER;
    for (int i = 0; i < STEP_PHASES; i++)
        out->phase_bytes[i] = 0;
    for (int i = 0; i < STEP_POINTS; i++)
        if (p[i] > out->phase_bytes[ph[i]])
            out->phase_bytes[ph[i]] = p[i];
    out->phase = STEP_FORWARD;
    for (int i = 1; i < STEP_PHASES; i++)
        if (out->phase_bytes[i] > out->phase_bytes[out->phase])
            out->phase = (enum step_phase)i;
    out->bytes = out->phase_bytes[out->phase];
    return !ck.overflow;
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
    const enum step_phase *phase = sp.point_phase;
    uint64_t pt[STEP_POINTS][STEP_PARTS] = {{0}}, total[STEP_POINTS] = {0};
    uint64_t in = ck_add(&ck, g->tokens, g->embedding_inputs);
    uint64_t held = ck_add(&ck, ck_add(&ck, in, g->outside), g->acts);
    parts_of(g, g->grads_at_start, held, g->logits_forward,
             ck_add(&ck, g->all_copies, g->head_copy), 0, pt[0]);
    parts_of(g, g->grads_at_start, held, g->loss,
             ck_add(&ck, g->recompute ? 0 : g->all_copies, g->head_copy), 0, pt[1]);
    if (g->recompute) {
        uint64_t top =
            ck_add(&ck, ck_add(&ck, in, ck_add(&ck, g->ckpt_in_flight, g->ckpt)), g->segment_act);
        uint64_t low = ck_add(&ck, ck_add(&ck, in, ck_mul(&ck, 2, g->ckpt)), g->segment_act);
        parts_of(g, g->head_grads, top, 0, g->layer_copies, g->transient, pt[2]);
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
        if (total[k] <= best[phase[k]])
            continue;
        best[phase[k]] = total[k];
        for (int i = 0; i < STEP_PARTS; i++)
            out->phase[phase[k]][i] = pt[k][i];
    }
    for (int i = 0; i < STEP_PARTS; i++) {
        out->first_rebuild[i] = pt[2][i];
        out->last_rebuild[i] = pt[3][i];
    }
    return !ck.overflow;
}
