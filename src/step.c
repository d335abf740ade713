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
