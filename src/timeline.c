/* timeline: see timeline.h. The memory walk of doc/model.md section 10, and the checkpointing
 * sawtooth of section 5.1 (the peak at the end of the first rebuild; Chen et al. 2016). */
#include "timeline.h"

#include "checked.h"
#include "model.h"

/* The walk's running state: where the next event goes and what memory holds. */
struct walk {
    struct timeline_event *ev;
    size_t cap, n;
    double t;
    uint64_t act, logits, states;
    uint64_t peak;
    double peak_time;
    bool overflow;
    timeline_sink_fn *sink; /* timeline_stream: each event goes there instead of into ev */
    void *sink_ctx;
    struct timeline_event one; /* the event handed to the sink */
};

static void emit(struct walk *w, enum timeline_kind kind, uint64_t layer, uint64_t mb,
                 double duration)
{
    if (!w->sink && w->n >= w->cap) {
        w->overflow = true;
        return;
    }
    struct timeline_event *e = w->sink ? &w->one : &w->ev[w->n];
    w->n++;
    e->kind = kind;
    e->layer = layer;
    e->micro_batch = mb;
    e->t_start = w->t;
    w->t += duration;
    e->t_end = w->t;
    e->act_bytes = w->act;
    e->logits_bytes = w->logits;
    struct checked ck = {false};
    uint64_t total = ck_add(&ck, w->states, ck_add(&ck, w->act, w->logits));
    if (ck.overflow)
        w->overflow = true;
    if (total > w->peak) {
        w->peak = total;
        w->peak_time = e->t_end;
    }
    if (w->sink)
        w->sink(w->sink_ctx, e);
}

/* What the walk needs to know of the stage it draws. */
struct stage {
    uint64_t first_layer, layers, micro_batches;
    uint64_t dense; /* the stage's first `dense` layers are dense, the others MoE (layer.h) */
    uint64_t A[2];  /* the activations of a dense and of an MoE layer */
    uint64_t c, k;  /* k = 0: no checkpointing every k */
};

/* The activations of the stage's layer i. */
static uint64_t layer_A(const struct stage *st, uint64_t i)
{
    return st->A[i < st->dense ? 0 : 1];
}

/* Forward pass of every in-flight micro-batch: a layer adds A, or under checkpointing every k
 * the first layer of a segment keeps its input c and the rest keep nothing (their activations
 * are freed as soon as the next layer has run). */
static void forward(struct walk *w, const struct stage *st)
{
    for (uint64_t mb = 0; mb < st->micro_batches; mb++) {
        for (uint64_t i = 0; i < st->layers; i++) {
            if (st->k == 0)
                w->act += layer_A(st, i);
            else if (i % st->k == 0)
                w->act += st->c;
            emit(w, TIMELINE_FORWARD, st->first_layer + i, mb, 1.0);
        }
    }
}

/* Backward of layers [lo, hi) of one micro-batch, last first: each frees its A (2 units of time:
 * the gradients with respect to the input and to the weights); the segment's first layer also
 * frees the checkpoint c it was rebuilt from. */
static void backward_layers(struct walk *w, const struct stage *st, uint64_t mb, uint64_t lo,
                            uint64_t hi)
{
    for (uint64_t i = hi; i-- > lo;) {
        w->act -= layer_A(st, i);
        if (st->k != 0 && i == lo)
            w->act -= st->c;
        emit(w, TIMELINE_BACKWARD, st->first_layer + i, mb, 2.0);
    }
}

/* Backward pass of every in-flight micro-batch. Under checkpointing every k, each segment is
 * rebuilt from its checkpoint (+A per layer, one forward's time each) right before its
 * backward, the last segment first; the last segment is shorter when k does not divide L/pp. */
static void backward(struct walk *w, const struct stage *st)
{
    for (uint64_t mb = 0; mb < st->micro_batches; mb++) {
        if (st->k == 0) {
            backward_layers(w, st, mb, 0, st->layers);
            continue;
        }
        uint64_t segments = div_up(st->layers, st->k);
        for (uint64_t j = segments; j-- > 0;) {
            uint64_t lo = j * st->k;
            uint64_t hi = lo + st->k < st->layers ? lo + st->k : st->layers;
            for (uint64_t i = lo; i < hi; i++) {
                w->act += layer_A(st, i);
                emit(w, TIMELINE_RECOMPUTE, st->first_layer + i, mb, 1.0);
            }
            backward_layers(w, st, mb, lo, hi);
        }
    }
}

size_t timeline_capacity(const struct scenario *sc)
{
    /* Forward, recompute and backward of at most L layers' worth, plus the logits and the loss. */
    struct checked ck = {false};
    uint64_t n = ck_add(&ck, ck_mul(&ck, 3, sc->layers), 2);
    if (ck.overflow || n > SIZE_MAX)
        return 0;
    return (size_t)n;
}

/* timeline_build into events[0..cap), or timeline_stream into sink. */
static int timeline_walk(const struct scenario *sc, struct timeline_event *events, size_t cap,
                         timeline_sink_fn *sink, void *ctx, struct timeline_summary *sum)
{
    struct terms t;
    if (sc->pp == 0 || model_peak(sc, &t) != MODEL_OK)
        return -1;
    const struct model_gpu *g = &t.stage[t.peak_stage];
    struct stage st = {0};
    st.layers = sc->layers / sc->pp;
    /* 1F1B (doc/model.md section 6.1): the first stage holds pp micro-batches, the last one. */
    st.micro_batches = t.peak_stage == MODEL_STAGE_FIRST ? sc->pp : 1;
    st.first_layer = t.peak_stage == MODEL_STAGE_LAST ? sc->layers - st.layers : 0;
    st.dense = g->layers[0];
    st.A[0] = t.kind_act[0];
    st.A[1] = t.kind_act[1];
    st.c = t.ckpt_bytes;
    if (sc->recompute == RECOMPUTE_EVERY_K && sc->ckpt_every > 0)
        st.k = sc->ckpt_every < st.layers ? sc->ckpt_every : st.layers;

    struct walk w = {.ev = events,
                     .cap = cap,
                     .states = g->states_bytes,
                     .peak = g->states_bytes,
                     .sink = sink,
                     .sink_ctx = ctx};
    forward(&w, &st);
    if (g->logits_bytes > 0) {
        /* The output layer and the fp32 loss keep 4sbV/t of logits at the end of the forward
         * pass; the loss backward consumes them (doc/model.md section 7). Both are
         * counted as taking no time next to the layers. */
        w.logits = g->logits_bytes;
        emit(&w, TIMELINE_LOGITS, 0, 0, 0.0);
        w.logits = 0;
        emit(&w, TIMELINE_LOSS_BACKWARD, 0, 0, 0.0);
    }
    backward(&w, &st);
    if (w.overflow)
        return -1;
    *sum = (struct timeline_summary){
        .states_bytes = g->states_bytes,
        .peak_bytes = w.peak,
        .peak_time = w.peak_time,
        .total_time = w.t,
        .n_events = w.n,
        .micro_batches = st.micro_batches,
        .stage_layers = st.layers,
        .segment = st.k,
    };
    return 0;
}

int timeline_build(const struct scenario *sc, struct timeline_event *events, size_t cap,
                   struct timeline_summary *sum)
{
    return timeline_walk(sc, events, cap, NULL, NULL, sum);
}

int timeline_stream(const struct scenario *sc, timeline_sink_fn *sink, void *ctx,
                    struct timeline_summary *sum)
{
    return timeline_walk(sc, NULL, 0, sink, ctx, sum);
}
