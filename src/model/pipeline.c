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

/* The embedding's and the loss's slots in the split (doc/model.md 6.3): with pp > 1 only. */
static uint64_t lead_of(const struct scenario *sc)
{
    return sc->pp > 1 && sc->embedding_in_split;
}

static uint64_t trail_of(const struct scenario *sc)
{
    return sc->pp > 1 && sc->loss_in_split;
}

struct pipeline_split pipeline_split_of(const struct scenario *sc)
{
    uint64_t pp = sc->pp ? sc->pp : 1, n = sc->layers;
    uint64_t f = sc->first_stage_layers, l = sc->last_stage_layers;
    struct pipeline_split sp = {0, 0, n / pp, 0, 0, 0, 0};
    if (pp <= 1)
        return sp;
    uint64_t e = lead_of(sc), t = trail_of(sc);
    if (e || t) { /* Megatron-LM: S = (L + e + t) / pp slots a stage, the ends a layer short */
        uint64_t s = (n + e + t) / pp;
        return (struct pipeline_split){e, s > e ? s - e : 0, s, t, s > t ? s - t : 0, e, t};
    }
    if (f || l) { /* Megatron-LM: the given ends, the rest evenly over the other stages */
        uint64_t ends = (uint64_t)(f > 0) + (l > 0), mids = pp - ends;
        uint64_t rest = n > f + l ? n - f - l : 0;
        sp = (struct pipeline_split){f > 0, f, mids ? rest / mids : 0, l > 0, l, 0, 0};
        return sp;
    }
    if (n % pp == 0)
        return sp;
    /* doc/model.md 6.3: ceil(L/pp) on every stage but the pp ceil - L floors, which go to the
     * first and the last stage, then inwards (the first end takes the odd one). */
    uint64_t ceil = n / pp + 1, floors = pp * ceil - n;
    sp = (struct pipeline_split){(floors + 1) / 2, ceil - 1, ceil, floors / 2, ceil - 1, 0, 0};
    return sp;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

uint64_t pipeline_split_gcd(const struct scenario *sc)
{
    struct pipeline_split sp = pipeline_split_of(sc);
    if (sp.lead || sp.trail)
        return sp.mid_layers; /* v divides every stage's slots (Megatron-LM's check) */
    uint64_t pp = sc->pp ? sc->pp : 1, g = pp > sp.head + sp.tail ? sp.mid_layers : 0;
    g = sp.head ? gcd_u64(g, sp.head_layers) : g;
    return sp.tail ? gcd_u64(g, sp.tail_layers) : g;
}

bool pipeline_split_valid(const struct scenario *sc)
{
    uint64_t pp = sc->pp ? sc->pp : 1, v = sc->vpp ? sc->vpp : 1, n = sc->layers;
    uint64_t f = sc->first_stage_layers, l = sc->last_stage_layers;
    if (pp > n || ((f || l) && pp == 1))
        return false;
    if (sc->embedding_in_split || sc->loss_in_split) {
        /* Not with the ends given (Megatron-LM asserts it); pp dividing the layers and slots
         * (pp <= L leaves at least 2 slots a stage: a layer on each end). */
        uint64_t slots = n + sc->embedding_in_split + sc->loss_in_split;
        if (pp == 1 || f || l || slots % pp)
            return false;
    }
    if (f || l) {
        uint64_t ends = (uint64_t)(f > 0) + (l > 0), mids = pp - ends;
        if (f > n || l > n - f)
            return false;
        uint64_t rest = n - f - l;
        if (mids == 0 ? rest != 0 : rest < mids || rest % mids)
            return false;
    }
    return pipeline_split_gcd(sc) % v == 0;
}

uint64_t pipeline_stage_layers(const struct pipeline_split *sp, uint64_t pp, uint64_t r)
{
    if (r < sp->head)
        return sp->head_layers;
    return r >= pp - sp->tail ? sp->tail_layers : sp->mid_layers;
}

uint64_t pipeline_layers_of(const struct scenario *sc, uint64_t r)
{
    struct pipeline_split sp = pipeline_split_of(sc);
    return pipeline_stage_layers(&sp, sc->pp ? sc->pp : 1, r);
}

uint64_t pipeline_max_stage_layers(const struct scenario *sc)
{
    struct pipeline_split sp = pipeline_split_of(sc);
    uint64_t n = sp.mid_layers;
    n = sp.head && sp.head_layers > n ? sp.head_layers : n;
    return sp.tail && sp.tail_layers > n ? sp.tail_layers : n;
}

/* The layers of the stages before r. */
static uint64_t layers_before(const struct pipeline_split *sp, uint64_t pp, uint64_t r)
{
    uint64_t mid_end = pp - sp->tail;
    uint64_t n = min_u64(r, sp->head) * sp->head_layers;
    if (r > sp->head)
        n += (min_u64(r, mid_end) - sp->head) * sp->mid_layers;
    if (r > mid_end)
        n += (r - mid_end) * sp->tail_layers;
    return n;
}

/* The stage whose layers (laid out without interleaving) hold position y < L. */
static uint64_t stage_of_position(const struct pipeline_split *sp, uint64_t pp, uint64_t y)
{
    uint64_t head = sp->head * sp->head_layers, mids = pp - sp->head - sp->tail;
    if (y < head)
        return y / sp->head_layers;
    y -= head;
    if (y < mids * sp->mid_layers)
        return sp->head + y / sp->mid_layers;
    y -= mids * sp->mid_layers;
    uint64_t r = pp - sp->tail + (sp->tail_layers ? y / sp->tail_layers : 0);
    return r < pp ? r : pp - 1;
}

/* The stage holding layer x (< L) of the model, with v chunks per stage: the chunk of round
 * x / (L/v) at offset x mod (L/v), whose stage is that of position v (x mod (L/v)). */
static uint64_t stage_of_layer(const struct scenario *sc, const struct pipeline_split *sp,
                               uint64_t x)
{
    uint64_t v = vpp_of(sc), round = sc->layers / v;
    if (sp->lead || sp->trail) /* slot x + lead, in chunk (x + lead) / (S / v) */
        return (x + sp->lead) / (sp->mid_layers / v) % sc->pp;
    return stage_of_position(sp, sc->pp, (x % round) * v);
}

/* Chunk j of stage r: its first layer and how many it holds. Of S / v slots with the
 * embedding's or the loss's slot in the split (the slots from (j pp + r) S / v, the layers at
 * slot x + lead); else of L_r / v layers from j L / v + (the layers before stage r) / v. */
static void chunk_span(const struct scenario *sc, const struct pipeline_split *sp, uint64_t r,
                       uint64_t j, uint64_t *first, uint64_t *count)
{
    uint64_t pp = sc->pp, v = vpp_of(sc);
    if (sp->lead || sp->trail) {
        uint64_t c = sp->mid_layers / v, q = (j * pp + r) * c, end = sc->layers + sp->lead;
        uint64_t lo = q > sp->lead ? q : sp->lead, hi = q + c < end ? q + c : end;
        *first = lo - sp->lead;
        *count = hi > lo ? hi - lo : 0;
        return;
    }
    *first = j * (sc->layers / v) + layers_before(sp, pp, r) / v;
    *count = pipeline_stage_layers(sp, pp, r) / v;
}

/* Dense layers among the cl layers from layer lo (the dense ones lead the model). */
static uint64_t chunk_dense(uint64_t lo, uint64_t cl, uint64_t dense)
{
    return dense <= lo ? 0 : min_u64(dense - lo, cl);
}

/* Adds the layers of stage r to out, with n chunk-micro-batches of it in flight: under the
 * interleaved schedule the k-th forward runs chunk position (k / pp) mod v (full groups of pp,
 * then the rest), every micro-batch of every chunk when n is m v. */
static void add_chunks(const struct scenario *sc, const struct pipeline_split *sp, uint64_t dense,
                       uint64_t r, uint64_t n, struct pipeline_stage *out)
{
    uint64_t pp = sc->pp, v = vpp_of(sc), m = pipeline_micro_batches(sc);
    uint64_t groups = n / pp, rest = n % pp;
    for (uint64_t j = 0; j < v; j++) {
        uint64_t lo, cl;
        chunk_span(sc, sp, r, j, &lo, &cl);
        uint64_t d = chunk_dense(lo, cl, dense);
        uint64_t held =
            v == 1 ? n : pp * (groups / v + (j < groups % v)) + (j == groups % v ? rest : 0);
        if (v > 1 && n == m * v)
            held = m;
        if (v > 1 && cl < out->chunk_layers) { /* the embedding's or the loss's chunk */
            out->short_chunk = true;
            out->short_held += held;
            out->short_first_layer = lo;
        }
        out->layers[0] += d;
        out->layers[1] += cl - d;
        out->act_layers[0] += held * d;
        out->act_layers[1] += held * (cl - d);
    }
}

/* DualPipe (DeepSeek-V3 report 3.2.1, Table 2): GPU r holds stage r of the forward direction and
 * stage pp - 1 - r of the reverse one, so GPUs 0 and pp - 1 hold the embedding and the output
 * layer; it keeps pp - r micro-batches of the first and r + 1 of the second in flight (pp + 1),
 * never more than the m / 2 micro-batches of a direction. */
static void dualpipe_stage_at(const struct scenario *sc, const struct pipeline_split *sp,
                              uint64_t dense, uint64_t r, struct pipeline_stage *out)
{
    uint64_t pp = sc->pp, half = (pipeline_micro_batches(sc) + 1) / 2;
    uint64_t own = min_u64(half, pp - r), twin = min_u64(half, r + 1);
    add_chunks(sc, sp, dense, r, own, out);
    uint64_t own_dense = out->layers[0];
    add_chunks(sc, sp, dense, pp - 1 - r, twin, out);
    out->twin_dense = out->layers[0] - own_dense;
    out->twin_first_layer = layers_before(sp, pp, pp - 1 - r);
    out->first = out->last = r == 0 || r == pp - 1;
    out->in_flight = own + twin;
    out->twin_in_flight = twin;
    out->twin_layers = pipeline_stage_layers(sp, pp, pp - 1 - r);
}

static void stage_layout(const struct scenario *sc, uint64_t dense, uint64_t r,
                         struct pipeline_stage *out)
{
    if (sc->pp <= 1) { /* one stage: every layer, one micro-batch at a time (eval's hot path) */
        uint64_t d = dense < sc->layers ? dense : sc->layers;
        out->first = out->last = true;
        out->in_flight = 1;
        out->chunk_layers = out->stage_layers = sc->layers;
        out->layers[0] = out->act_layers[0] = d;
        out->layers[1] = out->act_layers[1] = sc->layers - d;
        return;
    }
    struct pipeline_split sp = pipeline_split_of(sc);
    uint64_t pp = sc->pp, v = vpp_of(sc);
    uint64_t m = pipeline_micro_batches(sc);
    out->rank = r;
    out->stage_layers = pipeline_stage_layers(&sp, pp, r);
    uint64_t first_chunk_layers; /* the first layer is what stage_layout wants of it */
    chunk_span(sc, &sp, r, 0, &out->first_layer, &first_chunk_layers);
    /* every chunk's layers; interleaved with the embedding's or the loss's slot, S / v (a chunk
     * of the first or the last stage holds one fewer) */
    out->chunk_layers = (sp.lead || sp.trail) && v > 1 ? sp.mid_layers / v : out->stage_layers / v;
    if (sc->schedule == SCHEDULE_DUALPIPE) {
        dualpipe_stage_at(sc, &sp, dense, r, out);
        return;
    }
    out->first = r == 0;
    out->last = r == pp - 1;
    /* doc/model.md 6.1: 1F1B (and ZB1P, 6.4) keeps pp - r micro-batches in flight on stage r;
     * interleaved, 2 (pp - r - 1) + (v - 1) pp + 1 chunk-micro-batches; never more than the
     * step has. */
    out->in_flight =
        v == 1 ? min_u64(m, pp - r) : min_u64(m * v, 2 * (pp - r - 1) + (v - 1) * pp + 1);
    add_chunks(sc, &sp, dense, r, out->in_flight, out);
}

void pipeline_stage_at(const struct scenario *sc, uint64_t dense, uint64_t r,
                       struct pipeline_stage *out)
{
    *out = (struct pipeline_stage){0};
    stage_layout(sc, dense, r, out);
    /* The multi-token-prediction modules follow the last layer, of its kind (doc/model.md 2.6):
     * MoE when the model's dense layers do not reach it. */
    if (out->last)
        out->mtp[dense < sc->layers ? 1 : 0] = sc->mtp_layers;
}

uint64_t pipeline_segment_layers(const struct pipeline_stage *st, uint64_t k)
{
    uint64_t most = st->chunk_layers > st->twin_layers ? st->chunk_layers : st->twin_layers;
    return min_u64(k, most);
}

/* The segments of k layers of a chunk of n: ceil(n / k). */
static uint64_t segments(uint64_t n, uint64_t k)
{
    return (n + k - 1) / k;
}

/* What the chunk a layer short has fewer than a full one: ceil(n / k) - ceil((n - 1) / k). */
static uint64_t short_less(const struct pipeline_stage *st, uint64_t k)
{
    uint64_t n = st->chunk_layers;
    return st->short_chunk && n > 0 ? segments(n, k) - segments(n - 1, k) : 0;
}

uint64_t pipeline_checkpoints(const struct pipeline_stage *st, uint64_t k)
{
    if (k == 0)
        return 0;
    /* A segment of min(k, n) layers per k layers of each chunk of n: ceil(n / k) of them. */
    uint64_t own = st->in_flight - st->twin_in_flight;
    return own * segments(st->chunk_layers, k) - st->short_held * short_less(st, k) +
           st->twin_in_flight * segments(st->twin_layers, k);
}

uint64_t pipeline_micro_batch_checkpoints(const struct pipeline_stage *st, uint64_t vpp, uint64_t k)
{
    if (k == 0)
        return 0;
    return (vpp ? vpp : 1) * segments(st->chunk_layers, k) - short_less(st, k);
}

/* Adds stage r to out[0..*n) unless it is there (or r is not a stage). */
static void add_candidate(const struct scenario *sc, uint64_t dense, uint64_t r,
                          struct pipeline_stage *out, unsigned *n)
{
    if (r >= (sc->pp ? sc->pp : 1) || *n >= PIPELINE_CANDIDATES)
        return;
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
    uint64_t pp = sc->pp;
    struct pipeline_split sp = pipeline_split_of(sc);
    add_candidate(sc, dense, pp - 1, out, &n);
    /* The stages whose layers differ from their predecessor's in count (where the split
     * changes) or in kinds (the chunk where the dense layers end and the one after it). */
    uint64_t change[4];
    unsigned nc = 0;
    if (sp.head > 0 && sp.head < pp)
        change[nc++] = sp.head;
    if (sp.tail > 0 && sp.tail < pp)
        change[nc++] = pp - sp.tail;
    if (dense > 0 && dense < sc->layers) {
        uint64_t r = stage_of_layer(sc, &sp, dense);
        change[nc++] = r;
        change[nc++] = (r + 1) % pp;
    }
    if (sc->schedule != SCHEDULE_DUALPIPE) {
        /* 1F1B: a stage like its predecessor keeps no more in flight, so holds no more. */
        for (unsigned i = 0; i < nc; i++)
            add_candidate(sc, dense, change[i], out, &n);
        return n;
    }
    /* DualPipe: GPUs r and pp - 1 - r hold the same two stages with the same micro-batches in
     * flight, so the first half stands for all (the lower rank on a tie). GPU r's stages change
     * at a change c of the first (r = c) or of the second (r = pp - c); between changes its
     * activations are linear in r: both ends of each run, c - 1 (the mirror of pp - c) and c. */
    n = 0;
    add_candidate(sc, dense, 0, out, &n);
    add_candidate(sc, dense, 1, out, &n);
    add_candidate(sc, dense, pp / 2 - 1, out, &n);
    for (unsigned i = 0; i < nc; i++) {
        uint64_t at[2] = {change[i], pp - change[i]};
        for (int j = 0; j < 2; j++)
            add_candidate(sc, dense, at[j] < pp / 2 ? at[j] : pp - 1 - at[j], out, &n);
    }
    return n;
}
