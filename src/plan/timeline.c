/* timeline: see timeline.h. The memory walk of doc/model.md section 10, and the checkpointing
 * sawtooth of section 5.1 (the peak at the end of the first rebuild; Chen et al. 2016). */
#include "plan/timeline.h"

#include "base/checked.h"
#include "model/model.h"

/* What an event holds above the band. */
struct mem {
    uint64_t act, logits, grads, copies, temps;
};

/* What the walk of a step under --peak step knows of the step model (step.h). */
struct step_walk {
    struct step_parts parts;
    uint64_t totals[STEP_PHASES]; /* each phase's sum */
    uint64_t inputs;              /* token ids and the embedding's inputs, all step */
    uint64_t grads_start, grads;  /* gradients at the backward's start, and all of them */
    uint64_t all_copies, layer_copies;
};

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
    /* --peak step (step NULL under --peak lesson): */
    const struct step_walk *step;
    uint64_t grads, copies;     /* between the phases */
    uint64_t limit;             /* the most an event between two phases holds, band included */
    uint64_t done;              /* layer backwards done */
    enum step_phase peak_phase; /* of the event that set the peak (STEP_PHASES: none) */
};

static void push(struct walk *w, enum timeline_kind kind, uint64_t layer, uint64_t mb,
                 double duration, const struct mem *m, enum step_phase phase)
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
    e->act_bytes = m->act;
    e->logits_bytes = m->logits;
    e->grads_bytes = m->grads;
    e->copies_bytes = m->copies;
    e->temp_bytes = m->temps;
    e->phase = phase;
    struct checked ck = {false};
    uint64_t above = ck_add(&ck, ck_add(&ck, m->act, m->logits), ck_add(&ck, m->grads, m->copies));
    uint64_t total = ck_add(&ck, w->states, ck_add(&ck, above, m->temps));
    if (ck.overflow)
        w->overflow = true;
    /* The first event to reach the maximum; a phase's event wins a tie with one between phases
     * (under --peak lesson no event is a phase's). */
    bool at_phase = phase < STEP_PHASES;
    if (total > w->peak || (total == w->peak && at_phase && w->peak_phase == STEP_PHASES)) {
        w->peak = total;
        w->peak_time = e->t_end;
        w->peak_phase = phase;
    }
    if (w->sink)
        w->sink(w->sink_ctx, e);
}

/* Takes from m what lifts it over w->limit: the autocast copies first, then the gradients, which
 * the walk spreads over the step only approximately; then the activations. */
static void cap(const struct walk *w, struct mem *m)
{
    uint64_t room = w->limit > w->states ? w->limit - w->states : 0;
    uint64_t *part[] = {&m->copies, &m->grads, &m->act};
    uint64_t sum = m->act + m->logits + m->grads + m->copies + m->temps;
    for (size_t i = 0; i < sizeof part / sizeof *part && sum > room; i++) {
        uint64_t cut = sum - room < *part[i] ? sum - room : *part[i];
        *part[i] -= cut;
        sum -= cut;
    }
}

/* An event between the phases: the walk's activations and logits (under --peak step with the
 * inputs, the gradients and the copies, at most w->limit). */
static void emit(struct walk *w, enum timeline_kind kind, uint64_t layer, uint64_t mb,
                 double duration)
{
    struct mem m = {w->act, w->logits, 0, 0, 0};
    if (w->step) {
        m.act = w->act + w->step->inputs;
        m.grads = w->grads;
        m.copies = w->copies;
        cap(w, &m);
    }
    push(w, kind, layer, mb, duration, &m, STEP_PHASES);
}

/* The event of a phase of the step model: exactly what it sums there, part by part. */
static void emit_phase(struct walk *w, enum timeline_kind kind, uint64_t layer, uint64_t mb,
                       double duration, enum step_phase phase, const uint64_t *p)
{
    struct mem m = {p[STEP_PART_ACT], p[STEP_PART_LOSS], p[STEP_PART_GRADS], p[STEP_PART_COPIES],
                    p[STEP_PART_TEMPS]};
    push(w, kind, layer, mb, duration, &m, phase);
}

/* a * num / den, rounded down, without overflow (num <= den). */
static uint64_t share(uint64_t a, uint64_t num, uint64_t den)
{
    if (den == 0 || num >= den)
        return a;
    return (uint64_t)((long double)a * (long double)num / (long double)den);
}

/* A stage's layers: the first, how many, and how many of them lead as dense layers (the others
 * MoE, layer.h). */
struct span {
    uint64_t first_layer, layers, dense;
};

/* What the walk needs to know of the GPU it draws: the micro-batches it holds, each through its
 * stage's layers - under DualPipe (doc/model.md 6.4) those from twin_from on through its second
 * stage. */
struct stage {
    struct span own, twin;
    uint64_t micro_batches, twin_from;
    uint64_t A[2];  /* the activations of a dense and of an MoE layer */
    uint64_t c, k;  /* k = 0: no checkpointing every k */
    uint64_t block; /* block recomputation (doc/model.md 5.4): the first `block` layers are
                     * checkpointed, the others keep their A (0: none) */
    bool logits;    /* the stage holds the output layer */
};

/* The stage micro-batch mb runs through. */
static const struct span *span_of(const struct stage *st, uint64_t mb)
{
    return mb < st->twin_from ? &st->own : &st->twin;
}

/* The layer-micro-batches the GPU runs. */
static uint64_t layer_runs(const struct stage *st)
{
    return st->twin_from * st->own.layers + (st->micro_batches - st->twin_from) * st->twin.layers;
}

/* The activations of layer i of span sp. */
static uint64_t layer_A(const struct stage *st, const struct span *sp, uint64_t i)
{
    return st->A[i < sp->dense ? 0 : 1];
}

/* Forward pass of every in-flight micro-batch: a layer adds A, or under checkpointing every k
 * the first layer of a segment keeps its input c and the rest keep nothing (their activations
 * are freed as soon as the next layer has run). Under --peak step the autocast cache grows layer
 * by layer, and on a stage without the output layer the last forward is the forward phase. */
static void forward(struct walk *w, const struct stage *st)
{
    uint64_t all = layer_runs(st), run = 0;
    for (uint64_t mb = 0; mb < st->micro_batches; mb++) {
        const struct span *sp = span_of(st, mb);
        for (uint64_t i = 0; i < sp->layers; i++) {
            if (st->k == 0 || (st->block && i >= st->block))
                w->act += layer_A(st, sp, i);
            else if (i % st->k == 0)
                w->act += st->c;
            run++;
            if (w->step && run == all && !st->logits) {
                emit_phase(w, TIMELINE_FORWARD, sp->first_layer + i, mb, 1.0, STEP_FORWARD,
                           w->step->parts.phase[STEP_FORWARD]);
                continue;
            }
            if (w->step)
                w->copies = share(w->step->all_copies, run, all);
            emit(w, TIMELINE_FORWARD, sp->first_layer + i, mb, 1.0);
        }
    }
}

/* Under --peak step, after a layer's backward: the gradients grow through the first
 * micro-batch's backward (of each stage under DualPipe; the later ones add to them), the saved
 * autocast copies are freed (without checkpointing; with it, the rebuilt segment's). */
static void step_after_backward(struct walk *w, const struct stage *st, uint64_t rebuilt_left)
{
    const struct step_walk *s = w->step;
    if (!s)
        return;
    w->done++;
    uint64_t layers = st->own.layers + (st->twin_from < st->micro_batches ? st->twin.layers : 0);
    w->grads = s->grads_start + share(s->grads - s->grads_start, w->done, layers);
    if (st->k == 0)
        w->copies = s->all_copies - share(s->all_copies, w->done, layer_runs(st));
    else
        w->copies = share(s->layer_copies, rebuilt_left, st->k);
}

/* Backward of layers [lo, hi) of one micro-batch, last first: each frees its A (2 units of time:
 * the gradients with respect to the input and to the weights); the segment's first layer also
 * frees the checkpoint c it was rebuilt from (not a layer block recomputation keeps whole). */
static void backward_layers(struct walk *w, const struct stage *st, uint64_t mb, uint64_t lo,
                            uint64_t hi)
{
    const struct span *sp = span_of(st, mb);
    for (uint64_t i = hi; i-- > lo;) {
        w->act -= layer_A(st, sp, i);
        if (st->k != 0 && i == lo && !(st->block && i >= st->block))
            w->act -= st->c;
        step_after_backward(w, st, i - lo);
        emit(w, TIMELINE_BACKWARD, sp->first_layer + i, mb, 2.0);
    }
}

/* The last rebuilt layer of segment j of micro-batch mb under --peak step: the first rebuild of
 * the step (the first micro-batch's last segment), the last (the last micro-batch's first), or
 * neither (STEP_PHASES). *p gets its parts. */
static enum step_phase rebuild_phase(const struct walk *w, const struct stage *st, uint64_t mb,
                                     uint64_t j, uint64_t segments, const uint64_t **p)
{
    const struct step_walk *s = w->step;
    bool first = mb == 0 && j == segments - 1, last = mb == st->micro_batches - 1 && j == 0;
    if (!s || (!first && !last))
        return STEP_PHASES;
    *p = first && last ? s->parts.phase[STEP_RECOMPUTE]
         : first       ? s->parts.first_rebuild
                       : s->parts.last_rebuild;
    return STEP_RECOMPUTE;
}

/* Backward pass of every in-flight micro-batch. Under checkpointing every k, each segment is
 * rebuilt from its checkpoint (+A per layer, one forward's time each) right before its
 * backward, the last segment first; the last segment is shorter when k does not divide L/pp.
 * Under block recomputation the kept layers' backward comes first, then the rebuilt ones'. */
static void backward(struct walk *w, const struct stage *st)
{
    for (uint64_t mb = 0; mb < st->micro_batches; mb++) {
        const struct span *sp = span_of(st, mb);
        if (st->k == 0) {
            backward_layers(w, st, mb, 0, sp->layers);
            continue;
        }
        uint64_t top = st->block ? st->block : sp->layers; /* [top, layers) kept whole */
        if (top < sp->layers)
            backward_layers(w, st, mb, top, sp->layers);
        uint64_t segments = div_up(top, st->k);
        for (uint64_t j = segments; j-- > 0;) {
            uint64_t lo = j * st->k;
            uint64_t hi = lo + st->k < top ? lo + st->k : top;
            for (uint64_t i = lo; i < hi; i++) {
                w->act += layer_A(st, sp, i);
                const uint64_t *p = NULL;
                enum step_phase ph =
                    i + 1 == hi ? rebuild_phase(w, st, mb, j, segments, &p) : STEP_PHASES;
                if (w->step)
                    w->copies = share(w->step->layer_copies, i + 1 - lo, st->k);
                if (ph < STEP_PHASES)
                    emit_phase(w, TIMELINE_RECOMPUTE, sp->first_layer + i, mb, 1.0, ph, p);
                else
                    emit(w, TIMELINE_RECOMPUTE, sp->first_layer + i, mb, 1.0);
            }
            backward_layers(w, st, mb, lo, hi);
        }
    }
}

size_t timeline_capacity(const struct scenario *sc)
{
    /* Forward, recompute and backward of at most 2L layers' worth (an interleaved first stage
     * holds L (1 + (pp - 1)/(pp vpp)); doc/model.md 6.1), plus the logits and the loss (and
     * under --peak step the end of the backward and the optimizer step). */
    struct checked ck = {false};
    uint64_t worth = sc->vpp > 1 ? ck_mul(&ck, 2, sc->layers) : sc->layers;
    /* Uneven stages or DualPipe (doc/model.md 6.3, 6.4): pp + 1 micro-batches at most of the
     * largest stage's layers (twice that interleaved). */
    uint64_t pp = sc->pp ? sc->pp : 1;
    if (sc->layers % pp || sc->first_stage_layers || sc->last_stage_layers ||
        sc->embedding_in_split || sc->loss_in_split || sc->schedule == SCHEDULE_DUALPIPE) {
        uint64_t held =
            ck_mul(&ck, ck_mul(&ck, pp + 1, pipeline_max_stage_layers(sc)), sc->vpp > 1 ? 2 : 1);
        worth = held > worth ? held : worth;
    }
    uint64_t n = ck_add(&ck, ck_mul(&ck, 3, worth), sc->peak == PEAK_STEP ? 4 : 2);
    if (ck.overflow || n > SIZE_MAX)
        return 0;
    return (size_t)n;
}

/* The step model's view of the GPU the walk draws (--peak step); false on overflow. */
static bool step_walk_init(const struct scenario *sc, const struct terms *t, struct step_walk *s)
{
    struct step_gpu g;
    if (model_step_gpu(sc, t, t->peak_stage, &g) != MODEL_OK || !step_phase_parts(&g, &s->parts))
        return false;
    struct checked ck = {false};
    for (int ph = 0; ph < STEP_PHASES; ph++) {
        s->totals[ph] = 0;
        for (int i = 0; i < STEP_PARTS; i++)
            s->totals[ph] = ck_add(&ck, s->totals[ph], s->parts.phase[ph][i]);
    }
    s->inputs = ck_add(&ck, g.tokens, g.embedding_inputs);
    s->grads_start = g.grads_at_start;
    s->grads = g.grads > g.grads_at_start ? g.grads : g.grads_at_start;
    s->all_copies = g.all_copies;
    s->layer_copies = g.layer_copies;
    return !ck.overflow;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
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
    /* The schedule of the most loaded stage (doc/model.md section 6.1): its micro-batches (chunk
     * micro-batches with vpp) in flight, each through a chunk of its layers; under DualPipe
     * (6.4) the last twin_in_flight of them through its second stage. */
    const struct pipeline_stage *pipe = &g->pipe;
    st.micro_batches = pipe->in_flight;
    st.twin_from = pipe->in_flight - pipe->twin_in_flight;
    st.own =
        (struct span){pipe->first_layer, pipe->chunk_layers, pipe->layers[0] - pipe->twin_dense};
    st.twin = (struct span){pipe->twin_first_layer, pipe->twin_layers, pipe->twin_dense};
    if (pipe->short_chunk) { /* interleaved: the chunk a layer short (6.3) runs last, as a twin */
        st.twin_from = pipe->in_flight - pipe->short_held;
        st.twin = (struct span){pipe->short_first_layer, pipe->chunk_layers - 1, st.own.dense};
    }
    uint64_t most = st.own.layers > st.twin.layers ? st.own.layers : st.twin.layers;
    st.A[0] = t.kind_act[0];
    st.A[1] = t.kind_act[1];
    st.c = t.ckpt_bytes;
    st.logits = g->logits_bytes > 0;
    if (sc->recompute == RECOMPUTE_EVERY_K && sc->ckpt_every > 0)
        st.k = sc->ckpt_every < most ? sc->ckpt_every : most;
    if (st.k == 1 && sc->recompute_layers > 0 && sc->recompute_layers < st.own.layers)
        st.block = sc->recompute_layers;
    /* Alive through the layers: context parallelism's ring buffers (doc/model.md 4.11) and, with
     * the checkpoints offloaded, the one in transit (5.3) - the others are in CPU memory. */
    uint64_t resident = t.ring_bytes;
    if (sc->offload == OFFLOAD_CHECKPOINTS && st.k) {
        resident += st.c;
        st.c = 0;
    }

    struct step_walk step;
    bool is_step = sc->peak == PEAK_STEP;
    if (is_step && !step_walk_init(sc, &t, &step))
        return -1;
    /* Under --peak step the band is the weights and optimizer states: the gradients come and
     * go with the step. */
    uint64_t band = is_step ? g->weights_bytes + g->optimizer_bytes : g->states_bytes;
    struct walk w = {.ev = events,
                     .cap = cap,
                     .states = band,
                     .peak = band,
                     .sink = sink,
                     .sink_ctx = ctx,
                     .step = is_step ? &step : NULL,
                     .peak_phase = STEP_PHASES,
                     .act = resident};
    if (is_step) {
        w.grads = step.grads_start;
        w.limit = step.totals[STEP_FORWARD];
    }
    forward(&w, &st);
    if (g->logits_bytes > 0 && is_step) {
        /* The end of the forward pass (its logits) and the start of the backward pass (the
         * loss's tensors): no time next to the layers. */
        emit_phase(&w, TIMELINE_LOGITS, 0, 0, 0.0, STEP_FORWARD, step.parts.phase[STEP_FORWARD]);
        emit_phase(&w, TIMELINE_LOSS_BACKWARD, 0, 0, 0.0, STEP_BACKWARD_START,
                   step.parts.phase[STEP_BACKWARD_START]);
    } else if (g->logits_bytes > 0) {
        /* The output layer and the fp32 loss keep 4sbV/t of logits at the end of the forward
         * pass; the loss backward consumes them (doc/model.md section 7). Both are
         * counted as taking no time next to the layers. */
        w.logits = g->logits_bytes;
        emit(&w, TIMELINE_LOGITS, 0, 0, 0.0);
        w.logits = 0;
        emit(&w, TIMELINE_LOSS_BACKWARD, 0, 0, 0.0);
    }
    if (is_step) { /* the backward's events stay under its phases (timeline.h) */
        w.limit = max_u64(step.totals[st.logits ? STEP_BACKWARD_START : STEP_FORWARD],
                          max_u64(step.totals[STEP_RECOMPUTE], step.totals[STEP_BACKWARD_END]));
        w.copies = st.k ? 0 : step.all_copies;
    }
    backward(&w, &st);
    if (is_step) {
        emit_phase(&w, TIMELINE_BACKWARD_END, st.own.first_layer, 0, 0.0, STEP_BACKWARD_END,
                   step.parts.phase[STEP_BACKWARD_END]);
        emit_phase(&w, TIMELINE_OPTIMIZER, 0, 0, 0.0, STEP_OPTIMIZER,
                   step.parts.phase[STEP_OPTIMIZER]);
    }
    if (w.overflow)
        return -1;
    *sum = (struct timeline_summary){
        .states_bytes = band,
        .peak_bytes = w.peak,
        .peak_phase = w.peak_phase,
        .peak_time = w.peak_time,
        .total_time = w.t,
        .n_events = w.n,
        .micro_batches = st.micro_batches,
        .stage_layers = st.own.layers,
        .layer_runs = layer_runs(&st),
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
