/* pipeline: see pipeline.h. */
#include "model/pipeline.h"

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static uint64_t vpp_of(const struct scenario *sc)
{
    return sc->vpp ? sc->vpp : 1;
}

uint64_t pipeline_micro_batches(const struct scenario *sc)
{
    uint64_t per_step = sc->micro_batch * (sc->dp ? sc->dp : 1);
    if (sc->global_batch == 0 || per_step == 0)
        return sc->pp ? sc->pp : 1;
    /* A batch that b does not divide takes a last, smaller micro-batch (doc/model.md 11.2). */
    uint64_t m = sc->global_batch / per_step + (sc->global_batch % per_step != 0);
    return m ? m : 1;
}

/* Dense layers among the cl layers of chunk c (the dense ones lead the model). */
static uint64_t chunk_dense(uint64_t c, uint64_t cl, uint64_t dense)
{
    uint64_t lo = c * cl;
    return dense <= lo ? 0 : min_u64(dense - lo, cl);
}

void pipeline_stage_at(const struct scenario *sc, uint64_t dense, uint64_t r,
                       struct pipeline_stage *out)
{
    *out = (struct pipeline_stage){0};
    if (sc->pp <= 1) { /* one stage: every layer, one micro-batch at a time (eval's hot path) */
        uint64_t d = dense < sc->layers ? dense : sc->layers;
        out->first = out->last = true;
        out->in_flight = 1;
        out->chunk_layers = sc->layers;
        out->layers[0] = out->act_layers[0] = d;
        out->layers[1] = out->act_layers[1] = sc->layers - d;
        return;
    }
    uint64_t pp = sc->pp, v = vpp_of(sc), cl = sc->layers / (pp * v);
    uint64_t m = pipeline_micro_batches(sc);
    out->rank = r;
    out->first = r == 0;
    out->last = r == pp - 1;
    out->first_layer = r * cl;
    out->chunk_layers = cl;
    /* doc/model.md 6.1: 1F1B keeps pp - r micro-batches in flight on stage r; interleaved,
     * 2 (pp - r - 1) + (v - 1) pp + 1 chunk-micro-batches; never more than the step has. */
    out->in_flight =
        v == 1 ? min_u64(m, pp - r) : min_u64(m * v, 2 * (pp - r - 1) + (v - 1) * pp + 1);
    /* The k-th forward runs chunk position (k / pp) mod v: full groups of pp, then the rest. */
    uint64_t groups = out->in_flight / pp, rest = out->in_flight % pp;
    if (v == 1) {
        groups = 0;
        rest = out->in_flight;
    }
    for (uint64_t j = 0; j < v; j++) {
        uint64_t c = j * pp + r, d = chunk_dense(c, cl, dense);
        uint64_t held =
            v == 1 ? rest : pp * (groups / v + (j < groups % v)) + (j == groups % v ? rest : 0);
        if (out->in_flight == m * v)
            held = m; /* every micro-batch of every chunk */
        out->layers[0] += d;
        out->layers[1] += cl - d;
        out->act_layers[0] += held * d;
        out->act_layers[1] += held * (cl - d);
    }
}

uint64_t pipeline_segment_layers(const struct pipeline_stage *st, uint64_t k)
{
    return min_u64(k, st->chunk_layers);
}

uint64_t pipeline_checkpoints(const struct pipeline_stage *st, uint64_t k)
{
    uint64_t kk = pipeline_segment_layers(st, k);
    return kk == 0 ? 0 : st->in_flight * ((st->chunk_layers + kk - 1) / kk);
}

/* Adds stage r to out[0..*n) unless it is there. */
static void add_candidate(const struct scenario *sc, uint64_t dense, uint64_t r,
                          struct pipeline_stage *out, unsigned *n)
{
    for (unsigned i = 0; i < *n; i++)
        if (out[i].rank == r)
            return;
    pipeline_stage_at(sc, dense, r, &out[(*n)++]);
}

unsigned pipeline_candidates(const struct scenario *sc, uint64_t dense,
                             struct pipeline_stage out[PIPELINE_CANDIDATES])
{
    unsigned n = 0;
    add_candidate(sc, dense, 0, out, &n);
    if (sc->pp <= 1)
        return n;
    uint64_t pp = sc->pp, v = vpp_of(sc), cl = sc->layers / (pp * v), chunks = pp * v;
    add_candidate(sc, dense, pp - 1, out, &n);
    /* Chunk c differs in kinds from chunk c - 1 only at the chunk where the dense layers end
     * (floor(dense / cl)) and at the first chunk without any (ceil(dense / cl)): their stages
     * differ from their predecessors; every other stage holds no more than its predecessor. */
    uint64_t boundary[2] = {dense / cl, (dense + cl - 1) / cl};
    for (int i = 0; i < 2; i++)
        if (dense > 0 && boundary[i] < chunks)
            add_candidate(sc, dense, boundary[i] % pp, out, &n);
    return n;
}
