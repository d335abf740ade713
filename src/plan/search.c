/* search: see search.h; the enumeration of the structures and the public functions
 * (search_internal.h; one structure's families: search_structure.c). The space, the order of the
 * enumeration, what is counted, how the micro-batch is solved and what is pruned are doc/model.md
 * section 11.5. */
#include "plan/search.h"

#include <stdlib.h>

#include "base/divisors.h"
#include "model/pipeline.h"
#include "plan/search_internal.h"

/* The most families (layouts but b) a search goes through: 26 times DeepSeek-V3's on 2,048 GPUs,
 * a few seconds at most; a job with more (a model of a million layers: k runs to the chunk's
 * layers) is SEARCH_TOO_LARGE (doc/model.md 11.5). */
#define SEARCH_MAX_FAMILIES (1ull << 24)

/*
 * The valid micro-batches of a structure, ascending: b divides gb / dp (global_batch divisible
 * by b dp) and, with the interleaved schedule, m = gb / (b dp) is a multiple of pp
 * (doc/model.md 6.1), under DualPipe even and at least 2 pp (6.4); only the job's b when it pins
 * it. r->nr: how many of them, from the first, have gradient accumulation (m >= 2) and every
 * stage's in-flight count at its cap - pp - r, or 2 (pp - r - 1) + (vpp - 1) pp + 1 interleaved, at
 * most (vpp + 1) pp - 1 - whatever m: the monotone range. m falls as b grows, so the range is a
 * prefix.
 */
static void micro_batches(struct run *r, uint64_t dp, uint64_t pp, uint64_t vpp,
                          enum schedule schedule)
{
    r->nb = r->nr = 0;
    if (r->gb % dp)
        return;
    uint64_t per_rank = r->gb / dp;
    uint64_t cap = vpp > 1 ? (vpp + 1) * pp - 1 : pp;
    for (size_t i = 0; i < r->n_divs && r->divs[i] <= per_rank; i++) {
        uint64_t b = r->divs[i], m = per_rank / b;
        if (per_rank % b || (vpp > 1 && m % pp))
            continue;
        if (schedule == SCHEDULE_DUALPIPE && (m % 2 || m < 2 * pp))
            continue; /* DualPipe's micro-batches (doc/model.md 6.4) */
        if (pinned(r, SCENARIO_PIN_MICRO_BATCH) && b != r->job->micro_batch)
            continue;
        r->bs[r->nb++] = b;
        if (m >= 2 && (vpp > 1 ? m * vpp > cap : m >= cap))
            r->nr = r->nb;
    }
}

/* One structure of the enumeration: searched now, or (best_first) kept with its floor for later;
 * one ruled out by its floor is neither. */
static void structure(struct run *r, struct scenario *sc)
{
    r->at.structure++;
    if (r->best_first) {
        if (!shapes_push(&r->shapes, sc, r->at.structure, search_step_floor(r, sc, 0, false)))
            r->no_memory = r->stop = true;
        return;
    }
    if (!search_too_slow(r, sc, 0))
        search_structure(r, sc);
}

/* Whether n is the job's degree of a pinned choice (0 meaning 1), or any when it is free. */
static bool allowed(const struct run *r, enum scenario_pin pin, uint64_t n, uint64_t job_value)
{
    return !pinned(r, pin) || n == or_one(job_value);
}

/* The job's etp, 0 meaning tp. */
static uint64_t or_tp(uint64_t etp, uint64_t tp)
{
    return etp ? etp : tp;
}

/* ep and etp of an MoE model - ep dividing experts, etp dividing tp, ep etp dividing dp cp tp (the
 * GPUs of a stage, context parallelism folded in) - then the structure; a dense model keeps the
 * job's. An HSDP group must divide dp cp (13.2). */
static void experts(struct run *r, struct scenario *sc)
{
    const struct scenario *job = r->job;
    if (sc->zero_group && (sc->dp * or_one(sc->cp)) % sc->zero_group)
        return;
    if (job->experts == 0) {
        structure(r, sc);
        return;
    }
    uint64_t group = sc->dp * or_one(sc->cp) * sc->tp;
    bool pin_etp = pinned(r, SCENARIO_PIN_ETP);
    size_t n_edivs = 0;
    uint64_t *edivs = divisors_of(job->experts, &n_edivs);
    if (!edivs) {
        r->no_memory = r->stop = true;
        return;
    }
    for (size_t e = 0; e < n_edivs && !r->stop; e++) {
        uint64_t ep = edivs[e];
        if (group % ep || !allowed(r, SCENARIO_PIN_EP, ep, job->ep))
            continue;
        /* etp: every divisor of tp (a pinned one as the job has it, 0 meaning tp). */
        uint64_t first = pin_etp ? or_tp(job->etp, sc->tp) : 1;
        uint64_t last = pin_etp ? first : sc->tp;
        for (uint64_t etp = first; etp <= last && !r->stop; etp++) {
            /* etp nests with tp (config's rule): it divides tp or is a multiple of it. */
            if ((!pin_etp && sc->tp % etp) || group % (ep * etp) || (sc->tp % etp && etp % sc->tp))
                continue;
            sc->ep = ep;
            sc->etp = etp;
            structure(r, sc);
        }
    }
    free(edivs);
}

/* The most layers of a model whose uneven splits the search varies (doc/model.md 11.5). */
#define SEARCH_UNEVEN_LAYERS 1024

/* Whether a schedule runs on pp stages: 1F1B on any; ZB1P with pipeline parallelism, DualPipe on
 * an even number of stages (doc/model.md 6.4). */
static bool schedule_runs(enum schedule s, uint64_t pp)
{
    if (s == SCHEDULE_1F1B)
        return true;
    return pp > 1 && (s != SCHEDULE_DUALPIPE || pp % 2 == 0);
}

/* The interleaved pipelines (1F1B only), cp and dp of sc's tp, pp and schedule: each a
 * structure for experts(). */
static void pipelines(struct run *r, struct scenario *sc, const uint64_t *gdivs, size_t n_gdivs)
{
    const struct scenario *job = r->job;
    uint64_t gpus = sc->gpus, tp = sc->tp, pp = sc->pp;
    size_t n_vdivs = 0;
    sc->vpp = 1;
    uint64_t *vdivs = divisors_of(pipeline_split_gcd(sc), &n_vdivs);
    if (!vdivs) {
        r->no_memory = r->stop = true;
        return;
    }
    for (size_t v = 0; v < n_vdivs && !r->stop; v++) {
        uint64_t vpp = vdivs[v];
        if ((vpp > 1 && (pp == 1 || sc->schedule != SCHEDULE_1F1B)) ||
            !allowed(r, SCENARIO_PIN_VPP, vpp, job->vpp))
            continue;
        /* block recomputation with a chunk a layer short is not modelled (doc/model.md 6.3) */
        if (vpp > 1 && job->recompute_layers && (job->embedding_in_split || job->loss_in_split))
            continue;
        for (size_t k = 0; k < n_gdivs && !r->stop; k++) {
            uint64_t cp = gdivs[k];
            if ((gpus / (tp * pp)) % cp || job->seq % cp ||
                !allowed(r, SCENARIO_PIN_CP, cp, job->cp))
                continue;
            uint64_t dp = gpus / (tp * pp * cp);
            if (!allowed(r, SCENARIO_PIN_DP, dp, job->dp))
                continue;
            micro_batches(r, dp, pp, vpp, sc->schedule);
            if (r->nb == 0)
                continue;
            sc->vpp = vpp;
            sc->cp = cp;
            sc->dp = dp;
            sc->sp = pinned(r, SCENARIO_PIN_SP) ? job->sp : tp > 1;
            experts(r, sc);
        }
    }
    free(vdivs);
}

/* The job on gpus with the global batch every layout keeps: what the structures start from. */
static void layout_base(const struct run *r, uint64_t gpus, struct scenario *sc)
{
    *sc = *r->job;
    sc->gpus = gpus;
    sc->global_batch = r->gb;
    sc->zero_group = pinned(r, SCENARIO_PIN_ZERO_GROUP) ? r->job->zero_group : 0;
}

/* Every tp, pp, vpp and cp whose product divides gpus (each one a divisor of gpus: gdivs), dp
 * the rest, each ascending (doc/model.md 11.5). */
static void degrees(struct run *r, uint64_t gpus, const uint64_t *gdivs, size_t n_gdivs)
{
    const struct scenario *job = r->job;
    struct scenario sc;
    layout_base(r, gpus, &sc);
    for (size_t i = 0; i < n_gdivs && !r->stop; i++) {
        uint64_t tp = gdivs[i];
        if (tp > or_one(job->gpus_per_node) || job->heads % tp || job->kv_heads % tp ||
            !allowed(r, SCENARIO_PIN_TP, tp, job->tp))
            continue;
        for (size_t j = 0; j < n_gdivs && !r->stop; j++) {
            uint64_t pp = gdivs[j];
            sc.tp = tp;
            sc.pp = pp;
            sc.vpp = 1;
            /* Any pp up to L: the stages split as the job's first and last stages say, or
             * evenly, or ceil and floor (doc/model.md 6.3). An uneven split only up to
             * SEARCH_UNEVEN_LAYERS layers: beyond, every k of a stage is a recompute option,
             * and the pp that divide L are enough. */
            bool uneven =
                job->layers % pp != 0 && !job->first_stage_layers && !job->last_stage_layers;
            if ((gpus / tp) % pp || !pipeline_split_valid(&sc) ||
                (uneven && job->layers > SEARCH_UNEVEN_LAYERS) ||
                !allowed(r, SCENARIO_PIN_PP, pp, job->pp))
                continue;
            /* Each schedule that runs on pp stages (6.4), or the one the job gives; block
             * recomputation is not modelled under DualPipe (5.4). */
            for (int s = 0; s < SCHEDULES && !r->stop; s++) {
                sc.schedule = pinned(r, SCENARIO_PIN_SCHEDULE) ? job->schedule : (enum schedule)s;
                if (schedule_runs(sc.schedule, pp) &&
                    !(sc.schedule == SCHEDULE_DUALPIPE && job->recompute_layers))
                    pipelines(r, &sc, gdivs, n_gdivs);
                if (pinned(r, SCENARIO_PIN_SCHEDULE))
                    break;
            }
        }
    }
}

/* The structures degrees() collected with a first floor, searched fastest floor first, each
 * numbered as the enumeration numbered it (the top list's order is the enumeration's, whatever
 * the order of the search). search_run searches each (it counts the whole space), untimed when
 * its first floor (of every layout of the structure, doc/model.md 11.5) rules it out of the full
 * top list. search_fix gives the lowest its tight floor and puts it back, or, tight already,
 * searches it; once the lowest floor rules a structure out, it rules out every one left. */
static void best_first(struct run *r, uint64_t gpus)
{
    struct scenario sc;
    layout_base(r, gpus, &sc);
    shapes_heapify(&r->shapes);
    r->best_first = false;
    while (r->shapes.n > 0 && !r->stop && !search_ruled_out(r, r->shapes.at[0].floor_s)) {
        struct shape s = shapes_pop(&r->shapes);
        shape_apply(&s, &sc);
        micro_batches(r, sc.dp, or_one(sc.pp), or_one(sc.vpp), sc.schedule);
        if (r->near <= 0) { /* search_run */
            r->at.structure = s.index;
            r->untimed = r->top.n == r->top_cap && s.floor_s > 0 &&
                         s.floor_s * (1 - SEARCH_FLOOR_MARGIN) > toplist_worst_s(&r->top);
            search_structure(r, &sc);
            continue;
        }
        if (!s.tight) {
            s.floor_s = search_step_floor(r, &sc, 0, true);
            s.tight = true;
            shapes_put(&r->shapes, &s);
            continue;
        }
        r->at.structure = s.index;
        r->option_floor = s.floor_s; /* recompute option 0's */
        search_structure(r, &sc);
    }
}

/* The global batch every layout keeps: the job's; one without (0: a job built in code) takes
 * eval's default for the job's own columns, b dp pp (doc/model.md 11.5). 0 on overflow. */
static uint64_t job_global_batch(const struct scenario *job, uint64_t gpus)
{
    if (job->global_batch)
        return job->global_batch;
    uint64_t split = or_one(job->tp) * or_one(job->pp) * or_one(job->cp);
    uint64_t dp = gpus % split == 0 ? gpus / split : or_one(job->dp), gb;
    if (__builtin_mul_overflow(or_one(job->micro_batch), or_one(dp), &gb) ||
        __builtin_mul_overflow(gb, or_one(job->pp), &gb))
        return 0;
    return gb;
}

/* The job's gpus, or dp tp pp cp when it has none. */
static uint64_t job_gpus(const struct scenario *job)
{
    if (job->gpus)
        return job->gpus;
    return or_one(job->dp) * or_one(job->tp) * or_one(job->pp) * or_one(job->cp);
}

/* Counts (count_only) or searches the layouts of r's job on gpus. */
static enum search_status enumerate(struct run *r, uint64_t gpus)
{
    size_t n_gdivs = 0;
    uint64_t *gdivs = divisors_of(gpus, &n_gdivs);
    r->divs = divisors_of(r->gb, &r->n_divs);
    r->bs = r->divs ? malloc(r->n_divs * sizeof *r->bs) : NULL;
    r->probes = r->divs ? calloc(r->n_divs, sizeof *r->probes) : NULL;
    bool liking = r->best_first && r->near <= 0 && !r->count_only; /* search_run's */
    r->likes = liking ? calloc(4 * 3 * SEARCH_LIKE_SLOTS, sizeof *r->likes) : NULL;
    bool listed = toplist_init(&r->top, r->top_buf, r->top_cap);
    enum search_status status = SEARCH_NO_MEMORY;
    if (gdivs && r->divs && r->bs && r->probes && listed && (!liking || r->likes)) {
        degrees(r, gpus, gdivs, n_gdivs);
        if (r->best_first)
            best_first(r, gpus);
        status = r->no_memory ? SEARCH_NO_MEMORY : SEARCH_OK;
        toplist_order(&r->top);
    }
    free(gdivs);
    free(r->divs);
    free(r->bs);
    free(r->probes);
    free(r->likes);
    toplist_free(&r->top);
    shapes_free(&r->shapes);
    return status;
}

static enum search_status run_search(const struct scenario *job, uint64_t gpus, bool first_fit,
                                     const uint64_t *keep_k, double seed_s, size_t top_cap,
                                     struct search_layout *top, search_point_fn *each, void *ctx,
                                     struct model_cache *memo, struct search_result *out)
{
    *out = (struct search_result){0};
    if (gpus == 0)
        return SEARCH_NO_SPLIT;
    uint64_t gb = job_global_batch(job, gpus);
    if (gb == 0)
        return SEARCH_OVERFLOW;
    /* First count the space (no evaluation: a few operations a structure). */
    struct run count = {.job = job, .pins = job->pinned, .gb = gb, .count_only = true};
    enum search_status status = enumerate(&count, gpus);
    if (status != SEARCH_OK)
        return status;
    out->layouts_tried = count.tried;
    if (count.tried == 0) {
        /* No layout keeps the pins: is there one without them? */
        struct run any = {.job = job, .gb = gb, .count_only = true};
        if (job->pinned == 0 || enumerate(&any, gpus) != SEARCH_OK || any.tried == 0)
            return SEARCH_NO_SPLIT;
        return SEARCH_PIN_CLASH;
    }
    if (count.families > SEARCH_MAX_FAMILIES)
        return SEARCH_TOO_LARGE;
    struct run r = {.job = job,
                    .pins = job->pinned,
                    .memo = memo,
                    .each = each,
                    .ctx = ctx,
                    .top_buf = top,
                    .top_cap = top_cap,
                    .gb = gb,
                    .floors = top_cap > 0 && (job->experts == 0 || job->capacity_factor <= 0),
                    .first_fit_only = first_fit,
                    .few_k = keep_k != NULL,
                    .near = keep_k ? 1 + SEARCH_FIX_NEAR : 0,
                    .best_s = keep_k ? seed_s : 0,
                    .best_first = top_cap > 0 && each == NULL &&
                                  (job->experts == 0 || job->capacity_factor <= 0),
                    .keep_k = keep_k ? *keep_k : 0};
    /* Without the caller's memo of layer inventories, one for this search (NULL: none). */
    struct model_cache *own = memo ? NULL : model_cache_new();
    r.memo = memo ? memo : own;
    status = enumerate(&r, gpus);
    model_cache_free(own);
    if (status != SEARCH_OK)
        return status;
    out->layouts_fit = r.fit;
    out->layouts_evaluated = r.evaluated;
    out->n_top = r.top.n;
    return SEARCH_OK;
}

enum search_status search_run(const struct scenario *job, size_t top_cap, struct search_layout *top,
                              search_point_fn *each, void *ctx, struct model_cache *memo,
                              struct search_result *out)
{
    return run_search(job, job_gpus(job), false, NULL, 0, top_cap, top, each, ctx, memo, out);
}

uint64_t search_min_gpus(const struct scenario *job, uint64_t a, uint64_t b, size_t top_cap,
                         struct search_layout *top, struct model_cache *memo,
                         struct search_result *out)
{
    uint64_t node = or_one(job->gpus_per_node);
    *out = (struct search_result){0};
    struct model_cache *own = memo ? NULL : model_cache_new();
    memo = memo ? memo : own;
    uint64_t g = a % node ? a + (node - a % node) : a;
    if (g == 0)
        g = node;
    uint64_t work = 0;
    for (; g <= b && g >= node; g += node) {
        if (work >= SEARCH_RANGE_WORK) {
            out->range_last = g - node;
            break;
        }
        struct search_result probe = {0};
        enum search_status st =
            run_search(job, g, true, NULL, 0, 0, NULL, NULL, NULL, memo, &probe);
        work += SEARCH_PROBE_WORK + probe.layouts_evaluated;
        if (st != SEARCH_OK || probe.layouts_fit == 0)
            continue;
        run_search(job, g, false, NULL, 0, top_cap, top, NULL, NULL, memo, out);
        model_cache_free(own);
        return g;
    }
    model_cache_free(own);
    return 0;
}

enum search_status search_fix(const struct scenario *job, uint64_t keep_k, double seed_s,
                              size_t top_cap, struct search_layout *top, struct model_cache *memo,
                              struct search_result *out)
{
    return run_search(job, job_gpus(job), false, &keep_k, seed_s, top_cap, top, NULL, NULL, memo,
                      out);
}
