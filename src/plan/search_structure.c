/* search_structure: one structure of the search (search_internal.h) - its families, each
 * family's fitting micro-batches, the layouts offered to the top list. doc/model.md section
 * 11.5. */
#include "plan/search_internal.h"

#include "model/cost.h"
#include "plan/floors.h"
#include "plan/search.h"

/* The ZeRO stages in the order their families are searched: every stage holds at most what a
 * lower one holds (doc/model.md 11.5), so 3 first bounds 0 from above, and 1 and 2 come between
 * bounds on both sides. The offloads likewise: optimizer and checkpoints bound none. */
static const unsigned zero_order[4] = {3, 0, 1, 2};
static const enum offload offload_order[3] = {OFFLOAD_OPTIMIZER, OFFLOAD_CHECKPOINTS, OFFLOAD_NONE};

/* Keeps a fitting layout in the top list, and its step as the fastest so far if it is. */
static void offer_top(struct run *r, const struct scenario *sc, const struct probe *p, size_t bi)
{
    struct place pl = r->at;
    pl.b = bi;
    if (!(r->best_s > 0) || p->time_s < r->best_s)
        r->best_s = p->time_s;
    toplist_offer(&r->top, sc, p->peak_bytes, p->budget_bytes, p->time_s, &pl);
}

/*
 * Whether sc at micro-batch b[i] fits, evaluated once per family (later calls answer from its
 * probe): its exact peak by model_peak_cached and, when it fits or the caller watches every
 * point, its step time by cost_step. A layout whose byte counts overflow 64 bits does not fit
 * (its peak is above any budget) and is not a point.
 */
static bool fits_at(struct run *r, struct scenario *sc, size_t i)
{
    struct probe *p = &r->probes[i];
    if (p->family == r->family)
        return p->fits;
    p->family = r->family;
    p->fits = p->timed = false;
    r->evaluated++;
    /* Untimed, only fits: from a peak of the structure's with the same ZeRO stage and offload
     * and as many micro-batches in flight and accumulation (any b of the monotone range, or the
     * same b beyond it) but any attention and recomputation (model_fits_like, 11.5). */
    size_t slot = i < r->nr ? 0 : 1 + (i - r->nr);
    struct like *lk =
        r->untimed && slot < SEARCH_LIKE_SLOTS
            ? &r->likes[(sc->zero * 3 + (unsigned)sc->offload) * SEARCH_LIKE_SLOTS + slot]
            : NULL;
    if (lk && lk->structure == r->structure_serial) {
        sc->micro_batch = r->bs[lk->i];
        return p->fits = model_fits_like(sc, r->memo, &lk->t, r->bs[i]);
    }
    sc->micro_batch = r->bs[i];
    struct terms own, *tp = lk ? &lk->t : &own;
    if (model_peak_cached(sc, r->memo, tp) != MODEL_OK)
        return false;
    if (lk) {
        lk->structure = r->structure_serial;
        lk->i = i;
    }
    p->fits = tp->fits;
    p->peak_bytes = tp->peak_bytes;
    p->budget_bytes = tp->budget_bytes;
    if (!r->each && (!tp->fits || r->top_cap == 0 || r->untimed))
        return p->fits; /* no step time wanted */
    struct cost c;
    cost_step(sc, tp, &c);
    p->time_s = c.total_s;
    p->timed = true;
    if (p->fits && r->floors) {
        p->work_s = c.compute_s + c.recompute_s + c.tp_s + c.ep_s + c.pp_s;
        p->cp_s = c.cp_s;
        /* the fix's search: 0, a floor too, for a cost_step per stage less (search_fix) */
        p->dp_s = r->few_k ? 0 : -1;
    }
    if (r->each) {
        struct search_point pt = {sc->tp,         or_one(sc->pp),   or_one(sc->cp), sc->dp,
                                  tp->peak_bytes, tp->budget_bytes, c.total_s,      tp->fits};
        r->each(r->ctx, &pt);
    }
    return p->fits;
}

/*
 * The length of the family's fitting prefix of the monotone range b[0..nr), where the peak does
 * not fall as b grows (doc/model.md 11.5), known to lie in [lo, hi] from the families this one
 * dominates and those that dominate it. Each answer is an evaluation at the boundary: the search
 * starts at the length of the family one recompute option before (the neighbours in k are alike),
 * gallops away from it and bisects, so that a family like the last costs two evaluations, one at
 * an end of the range or a bound, and none when the bounds meet.
 */
static size_t fitting_prefix(struct run *r, struct scenario *sc, size_t lo, size_t hi)
{
    size_t *hint = &r->hint[sc->zero][sc->offload][sc->attention], h = *hint;
    h = h < lo ? lo : h > hi ? hi : h;
    if (h > lo && !fits_at(r, sc, h - 1)) {
        hi = h - 1; /* down: hi - 1, hi - 2, hi - 4, ... */
        for (size_t step = 1; lo < hi; step *= 2) {
            size_t i = step < hi - lo ? hi - step : lo;
            if (fits_at(r, sc, i)) {
                lo = i + 1;
                break;
            }
            hi = i;
        }
    } else {
        lo = h; /* up: lo, lo + 1, lo + 3, lo + 7, ... */
        for (size_t step = 1; lo < hi; step *= 2) {
            size_t i = step - 1 < hi - lo ? lo + step - 1 : hi - 1;
            if (!fits_at(r, sc, i)) {
                hi = i;
                break;
            }
            lo = i + 1;
        }
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (fits_at(r, sc, mid))
            lo = mid + 1;
        else
            hi = mid;
    }
    *hint = lo;
    return lo;
}

/* What bounds a family from the families already searched: `lower` fits in one it dominates,
 * nothing outside `upper` fits in one that dominates it. */
struct bounds {
    struct known lower, upper;
};

/* The least exposed data-parallel time of the fitting probe i of the current family (its floor
 * part), computed once. */
static double exposed_dp_at(struct run *r, struct scenario *sc, size_t i)
{
    struct probe *p = &r->probes[i];
    if (p->dp_s >= 0)
        return p->dp_s;
    struct terms t;
    struct cost c;
    sc->micro_batch = r->bs[i];
    r->evaluated++;
    if (model_peak_cached(sc, r->memo, &t) != MODEL_OK)
        return p->dp_s = 0; /* evaluated before: not reached */
    cost_step(sc, &t, &c);
    return p->dp_s = floor_least_exposed(sc, &t, &c);
}

/*
 * Whether no fitting b of the family, b[first] to b[last], can enter the full top list, by a
 * floor of their step times (doc/model.md 11.5): as b grows at a fixed global batch, a stage's
 * work but context parallelism and the exposed data-parallel time do not rise (take them at
 * b[last]), context parallelism's exposed traffic does not fall (at b[first], evaluated only
 * when the rest does not settle it), and the bubble is at least with_bubble's, m at most
 * b[first]'s; the other parts are not negative. Less a margin for rounding.
 */
static bool family_cannot_enter(struct run *r, struct scenario *sc, const struct known *k,
                                size_t last)
{
    size_t first = 0;
    if (k->prefix == 0)
        for (first = r->nr; first < last; first++)
            if (first - r->nr < 64 ? k->beyond >> (first - r->nr) & 1 : r->probes[first].fits)
                break;
    fits_at(r, sc, last);
    const struct probe *hi = &r->probes[last];
    double m = (double)(r->gb / (r->bs[first] * sc->dp)), worst = toplist_worst_s(&r->top);
    if (r->near > 0 && (r->top.n < r->top_cap || r->best_s * r->near < worst))
        worst = r->best_s * r->near; /* search_fix: slower than that is no candidate */
    double bubble = floor_with_bubble(sc, m);
    double floor_s = hi->work_s * bubble;
    if (floor_s * (1 - SEARCH_FLOOR_MARGIN) > worst)
        return true;
    floor_s += exposed_dp_at(r, sc, last);
    if (floor_s * (1 - SEARCH_FLOOR_MARGIN) > worst)
        return true;
    if (or_one(sc->cp) == 1)
        return false;
    fits_at(r, sc, first);
    floor_s += r->probes[first].cp_s * bubble;
    return floor_s * (1 - SEARCH_FLOOR_MARGIN) > worst;
}

/*
 * One family: the structure's valid micro-batches with every other choice of sc fixed; what it
 * fits goes to *out. The fitting b of the monotone range are a prefix; the few beyond it (m below
 * the pipeline's depth, or m = 1) are evaluated one by one unless the bounds decide them. Then
 * the fitting ones go to the top list with their step times - unless the family's floor, at its
 * largest fitting b, shows that none can enter.
 */
static void family(struct run *r, struct scenario *sc, const struct bounds *bd, struct known *out)
{
    r->family++;
    r->tried += r->nb;
    out->prefix = fitting_prefix(r, sc, bd->lower.prefix, bd->upper.prefix);
    out->beyond = 0;
    uint64_t n_fit = out->prefix;
    size_t last = out->prefix; /* one past the largest fitting index */
    for (size_t i = r->nr; i < r->nb; i++) {
        size_t bit = i - r->nr;
        uint64_t mask = bit < 64 ? (uint64_t)1 << bit : 0;
        bool fits =
            mask ? (bd->lower.beyond & mask) || ((bd->upper.beyond & mask) && fits_at(r, sc, i))
                 : fits_at(r, sc, i);
        if (!fits)
            continue;
        out->beyond |= mask;
        n_fit++;
        last = i + 1;
    }
    r->fit += n_fit;
    if (r->first_fit_only && n_fit > 0)
        r->stop = true;
    if (r->top_cap == 0 || n_fit == 0 || r->untimed)
        return;
    bool full = r->top.n == r->top_cap || (r->near > 0 && r->top.n > 0);
    if (r->floors && full && family_cannot_enter(r, sc, out, last - 1))
        return;
    for (size_t i = 0; i < r->nb; i++) {
        size_t bit = i - r->nr;
        if (i < r->nr  ? i >= out->prefix
            : bit < 64 ? !(out->beyond >> bit & 1)
                       : !r->probes[i].fits)
            continue;
        if (!fits_at(r, sc, i)) /* it does (doc/model.md 11.5): this evaluates it if need be */
            continue;
        sc->micro_batch = r->bs[i];
        offer_top(r, sc, &r->probes[i], i);
    }
}

/* The record of the family (zero, offload, attention) of the current recompute option. */
static struct known *known_at(struct run *r, unsigned zero, enum offload offload, unsigned a)
{
    return &r->known[(zero * 3u + (unsigned)offload) * 2 + a];
}

/* Narrows bd with the record of a family that the current one dominates (`below`) or that
 * dominates it, if that family has been searched for this recompute option. */
static void bound_by(struct run *r, unsigned zero, enum offload offload, unsigned a, bool below,
                     struct bounds *bd)
{
    const struct known *k = known_at(r, zero, offload, a);
    if (k->serial != r->option_serial)
        return;
    if (below) {
        bd->lower.prefix = k->prefix > bd->lower.prefix ? k->prefix : bd->lower.prefix;
        bd->lower.beyond |= k->beyond;
    } else {
        bd->upper.prefix = k->prefix < bd->upper.prefix ? k->prefix : bd->upper.prefix;
        bd->upper.beyond &= k->beyond;
    }
}

/* Sets sc's recompute to option o: none, selective, every k = o - 1 (o = 1 .. chunk + 1 from 2),
 * or the job's when it pins it. */
static void set_recompute(const struct run *r, struct scenario *sc, uint64_t o)
{
    if (pinned(r, SCENARIO_PIN_RECOMPUTE)) {
        sc->recompute = r->job->recompute;
        sc->ckpt_every = r->job->ckpt_every;
        return;
    }
    sc->recompute = o == 0 ? RECOMPUTE_NONE : o == 1 ? RECOMPUTE_SELECTIVE : RECOMPUTE_EVERY_K;
    sc->ckpt_every = o >= 2 ? o - 1 : 0;
}

/* Whether the (recompute, attention, offload) of sc is a layout of the space (doc/model.md
 * 11.5): offloaded checkpoints need checkpointing every k; selective recomputation with flash is
 * flash without it (flash keeps no core to drop, 4.2), a layout only when the job pins the
 * recompute. */
static bool in_space(const struct run *r, const struct scenario *sc)
{
    if (sc->offload == OFFLOAD_CHECKPOINTS && sc->recompute != RECOMPUTE_EVERY_K)
        return false;
    return !(sc->attention == ATTENTION_FLASH && sc->recompute == RECOMPUTE_SELECTIVE &&
             !pinned(r, SCENARIO_PIN_RECOMPUTE));
}

/* The families (layouts but b) of one structure, ZeRO stage and offload: recompute options
 * times attentions, less those in_space leaves out. */
static uint64_t families_of(const struct run *r, enum offload off, uint64_t chunk)
{
    const struct scenario *job = r->job;
    uint64_t n_att = pinned(r, SCENARIO_PIN_ATTENTION) ? 1 : 2;
    if (pinned(r, SCENARIO_PIN_RECOMPUTE)) {
        struct scenario sc = *job;
        uint64_t n = 0;
        sc.offload = off;
        for (int a = 0; a < (int)n_att; a++) {
            sc.attention = pinned(r, SCENARIO_PIN_ATTENTION) ? job->attention : (enum attention)a;
            n += in_space(r, &sc);
        }
        return n;
    }
    if (off == OFFLOAD_CHECKPOINTS)
        return chunk * n_att; /* every k */
    bool plain = !pinned(r, SCENARIO_PIN_ATTENTION) || job->attention == ATTENTION_PLAIN;
    return (chunk + 1) * n_att + (plain ? 1 : 0); /* none and every k; selective with plain */
}

/*
 * A floor of the peak of every layout that shares sc's structure, ZeRO stage and offload of the
 * optimizer, whatever its attention, recompute and b: on each stage the optimizer step holds the
 * weights, the optimizer states, every gradient, the token ids and the optimizer's temporaries
 * (doc/model.md 10.2), of which only the token ids depend on any of them, growing with b; under
 * --peak lesson, the model states (section 8.1). 0 (no floor) on overflow.
 */
static uint64_t states_floor(struct run *r, const struct scenario *sc0)
{
    struct scenario sc = *sc0;
    struct terms t;
    sc.micro_batch = r->bs[0];
    sc.attention = ATTENTION_FLASH;
    sc.recompute = RECOMPUTE_NONE;
    sc.ckpt_every = 0;
    r->evaluated++;
    if (model_peak_cached(&sc, r->memo, &t) != MODEL_OK)
        return 0;
    if (r->near > 0 && sc.offload == OFFLOAD_OPTIMIZER) { /* search_fix: family_too_slow's */
        struct cost c;
        cost_step(&sc, &t, &c);
        r->offload_least[sc.zero] = floor_least_over_stages(&sc, &t, &c, false);
    }
    uint64_t floor = 0;
    for (unsigned i = 0; i < t.n_stages; i++) {
        const struct model_gpu *g = &t.stage[i];
        uint64_t v = sc.peak == PEAK_STEP ? g->step.phase_bytes[STEP_OPTIMIZER] : g->states_bytes;
        floor = v > floor ? v : floor;
    }
    return floor;
}

/* ZeRO has nothing to shard when its group is one GPU and, with experts, so is the expert
 * data-parallel size: the four stages are then one layout, the lowest the job allows. */
static bool zero_is_moot(const struct scenario *sc)
{
    return model_zero_group(sc) == 1 && (sc->experts == 0 || model_expert_dp(sc) == 1);
}

/* Whether sc's layout with the optimizer offloaded holds in the host's memory (doc/model.md
 * 12.5): always when the host is not checked; else by its terms, which do not depend on b, the
 * attention or the recomputation (the node's offload of its heaviest stage). */
static bool optimizer_host_fits(struct run *r, const struct scenario *sc)
{
    if (sc->host_mem_bytes == 0)
        return true;
    signed char *known = &r->host_fits[sc->zero];
    if (*known >= 0)
        return *known;
    struct scenario off = *sc;
    struct terms t;
    off.offload = OFFLOAD_OPTIMIZER;
    off.micro_batch = r->bs[0];
    *known = model_peak_cached(&off, r->memo, &t) == MODEL_OK && t.host_fits;
    return *known;
}

/*
 * search_fix: a floor of the step of every layout of sc's structure with recompute option
 * `option` (0: none, the floor of every option): floor_of_family with FlashAttention, the lowest
 * ZeRO stage and no offload - a higher stage, an offload or more recomputation add more to the
 * work than they can take off the exposed traffic (at most one micro-batch's backward).
 */
double search_step_floor(struct run *r, const struct scenario *sc0, uint64_t option, bool tight)
{
    struct scenario sc = *sc0;
    set_recompute(r, &sc, option);
    if (!pinned(r, SCENARIO_PIN_ATTENTION))
        sc.attention = ATTENTION_FLASH; /* the faster kernel (12.1) */
    sc.zero = sc.zero_group ? 1 : 0;
    sc.offload = OFFLOAD_NONE;
    return floor_of_family(&sc, r->memo, r->bs[0], r->bs[r->nb - 1], r->gb, tight, &r->evaluated);
}

/* search_fix: whether a floor rules a step out, against the fastest so far and r->near. */
bool search_ruled_out(const struct run *r, double floor_s)
{
    return r->near > 0 && r->best_s > 0 &&
           floor_s * (1 - SEARCH_FLOOR_MARGIN) > r->best_s * r->near;
}

/* search_fix: whether no layout of sc's structure with recompute option `option` can come
 * within r->near of the fastest so far. */
bool search_too_slow(struct run *r, const struct scenario *sc, uint64_t option)
{
    r->option_floor = 0;
    if (r->near <= 0 || !(r->best_s > 0) || !r->floors || r->nb == 0)
        return false;
    r->option_floor = search_step_floor(r, sc, option, true);
    return search_ruled_out(r, r->option_floor);
}

/* search_fix: whether a family of the optimizer's offload cannot come within r->near of the
 * fastest so far, by its option's floor plus the least offload time (the offload adds that to
 * every step and takes nothing off, doc/model.md 12.5): such a family is not searched at all, its
 * fitting micro-batches not even counted (the fix counts none). No peak priced. */
static bool family_too_slow(const struct run *r, const struct scenario *sc)
{
    if (r->near <= 0 || !r->floors || sc->offload != OFFLOAD_OPTIMIZER || !(r->option_floor > 0))
        return false;
    return search_ruled_out(r, r->option_floor + r->offload_least[sc->zero]);
}

/* One recompute option of a structure: its families of every ZeRO stage, offload and attention
 * whose states may fit (states_fit[zero][offload]), in the orders above, each bounded by those
 * before it (doc/model.md 11.5): what fits with ZeRO lower fits here; what does not fit with ZeRO
 * higher, or with an offload (searched before none; not when the host's memory is checked), does
 * not fit here. */
static void option(struct run *r, struct scenario *sc, uint64_t o, unsigned z_lo, unsigned z_hi,
                   const bool states_fit[4][3])
{
    bool pin_att = pinned(r, SCENARIO_PIN_ATTENTION), pin_off = pinned(r, SCENARIO_PIN_OFFLOAD);
    r->option_serial++;
    r->at.option = o;
    set_recompute(r, sc, o);
    for (int zi = 0; zi < 4 && !r->stop; zi++) {
        unsigned z = zero_order[zi];
        if (z < z_lo || z > z_hi)
            continue;
        sc->zero = r->at.zero = z;
        for (int oi = 0; oi < 3 && !r->stop; oi++) {
            enum offload off = offload_order[oi];
            if (pin_off && off != r->job->offload)
                continue;
            sc->offload = off;
            r->at.offload = (unsigned)off;
            for (unsigned a = 0; a < (pin_att ? 1u : 2u) && !r->stop; a++) {
                sc->attention = pin_att ? r->job->attention : (enum attention)a;
                if (!in_space(r, sc))
                    continue;
                struct known *k = known_at(r, z, off, a);
                *k = (struct known){r->option_serial, 0, 0};
                if (!states_fit[z][off])
                    continue; /* counted in structure() */
                r->at.attention = a;
                struct bounds bd = {{0, 0, 0}, {0, r->nr, ~(uint64_t)0}};
                for (unsigned other = 0; other < 4; other++)
                    if (other != z)
                        bound_by(r, other, off, a, other < z, &bd);
                /* An offload's GPU memory bounds none's, but not where the host's memory is
                 * checked and the offload may fail on it where none fits (12.5). */
                if (off == OFFLOAD_NONE && optimizer_host_fits(r, sc))
                    bound_by(r, z, OFFLOAD_OPTIMIZER, a, false, &bd);
                if (off == OFFLOAD_NONE && sc->host_mem_bytes == 0)
                    bound_by(r, z, OFFLOAD_CHECKPOINTS, a, false, &bd);
                if (family_too_slow(r, sc)) {
                    k->serial = 0; /* not searched: it bounds no other family */
                    continue;
                }
                family(r, sc, &bd, k);
            }
        }
    }
}

/*
 * Every ZeRO stage, offload (none, optimizer, checkpoints), recompute, attention and b of one
 * structure (tp, pp, vpp, cp, dp, ep and etp set in sc, its micro-batches in r). The layouts of a
 * ZeRO stage and offload whose states alone exceed the budget are counted, not evaluated: none
 * fits. The others are searched recompute option by option, in the orders above.
 */
void search_structure(struct run *r, struct scenario *sc)
{
    r->structure_serial++;
    const struct scenario *job = r->job;
    uint64_t chunk = pipeline_max_stage_layers(sc) / or_one(sc->vpp);
    for (int z = 0; z < 4; z++) { /* of this structure */
        r->offload_least[z] = 0;
        r->host_fits[z] = -1;
    }
    unsigned z_lo = sc->zero_group ? 1 : 0, z_hi = 3; /* an HSDP group needs ZeRO (13.2) */
    if (pinned(r, SCENARIO_PIN_ZERO))
        z_lo = z_hi = job->zero;
    else if (zero_is_moot(sc))
        z_hi = z_lo;
    bool states_fit[4][3] = {{false}};
    bool any = false;
    uint64_t budget = model_budget_bytes(sc);
    for (unsigned z = z_lo; z <= z_hi; z++) {
        bool floor_of_none = false;
        for (int o = 0; o < 3; o++) {
            enum offload off = (enum offload)o;
            if (pinned(r, SCENARIO_PIN_OFFLOAD) && off != job->offload)
                continue;
            uint64_t n = families_of(r, off, chunk);
            r->families += n;
            if (r->count_only || n == 0) {
                r->tried += n * r->nb;
                continue;
            }
            sc->zero = z;
            sc->offload = off;
            /* offloaded checkpoints hold the states none holds (searched just before) */
            if (off == OFFLOAD_CHECKPOINTS && floor_of_none)
                states_fit[z][o] = states_fit[z][OFFLOAD_NONE];
            else
                states_fit[z][o] = states_floor(r, sc) <= budget;
            floor_of_none |= off == OFFLOAD_NONE;
            if (!states_fit[z][o])
                r->tried += n * r->nb;
            any |= states_fit[z][o];
        }
    }
    uint64_t n_opts = pinned(r, SCENARIO_PIN_RECOMPUTE) ? 1 : chunk + 2;
    for (uint64_t o = 0; o < n_opts && any && !r->stop; o++)
        if ((!r->few_k || o <= 2 || o - 1 == r->keep_k) && (o == 0 || !search_too_slow(r, sc, o)))
            option(r, sc, o, z_lo, z_hi, states_fit);
}
