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
    uint64_t *p = out->phase_bytes;
    uint64_t wm = ck_add(&ck, g->weights, g->optimizer);
    /* At the loss: the activations (or checkpoints), the fp32 logits and, under autocast, every
     * bf16 weight copy the cache still holds. */
    uint64_t in = ck_add(&ck, g->tokens, g->embedding_inputs);
    const uint64_t fwd[] = {wm,      g->grads_at_start, in,           g->outside,
                            g->acts, g->all_copies,     g->head_copy, g->logits_forward};
    p[STEP_FORWARD] = sum(&ck, fwd, 8);
    /* The loss's backward: without checkpointing the layers' copies are saved for backward. */
    const uint64_t start[] = {wm,           g->grads_at_start,
                              in,           g->outside,
                              g->acts,      g->recompute ? 0 : g->all_copies,
                              g->head_copy, g->loss};
    p[STEP_BACKWARD_START] = sum(&ck, start, 8);
    p[STEP_RECOMPUTE] = 0;
    if (g->recompute) {
        /* The first segment rebuilt (the last one): every checkpoint, the rebuilt output, the
         * segment, the gradients of the output layer; or the last rebuilt, with every other
         * layer's gradient (on demand) and two checkpoints. Both at the layer's last GEMM. */
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
        uint64_t a = sum(&ck, top, 7), b = sum(&ck, low, 7);
        p[STEP_RECOMPUTE] = a > b ? a : b;
    }
    const uint64_t end[] = {wm, g->grads, g->tokens, g->embedding_end};
    p[STEP_BACKWARD_END] = sum(&ck, end, 4);
    const uint64_t opt[] = {wm, g->grads, g->tokens, g->optimizer_temps};
    p[STEP_OPTIMIZER] = sum(&ck, opt, 4);
    out->phase = STEP_FORWARD;
    for (int i = 1; i < STEP_PHASES; i++)
        if (p[i] > p[out->phase])
            out->phase = (enum step_phase)i;
    out->bytes = p[out->phase];
    return !ck.overflow;
}
