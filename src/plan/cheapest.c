/* cheapest: see cheapest.h. The rule (fastest on the same GPUs, fewest changes within 2%) is
 * doc/model.md section 11.6. */
#include "plan/cheapest.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "model/cost.h"
#include "plan/plan.h"
#include "plan/search.h"

/* The memo's slots (a power of two), and how far a job looks for its own or a free one. */
#define MEMO_SLOTS 4096u
#define MEMO_PROBES 8u

/* A job's answer: the layouts within the tolerance of the fastest, the fastest first. */
struct job_answer {
    struct scenario key; /* job_key of the rows it answers */
    enum cheapest_status status;
    size_t n;
    struct search_layout *layouts; /* with the fused loss */
    uint64_t *eager_peak; /* each layout's peak with the eager loss; 0: it does not fit so */
    bool pending;         /* a thread is searching it: the others wait for it */
};

struct cheapest_memo {
    struct job_answer *slot[MEMO_SLOTS];
    struct cheapest_lock lk; /* shared: the caller's lock (else no-ops) */
    bool shared;
};

static uint64_t or_one(uint64_t v)
{
    return v ? v : 1;
}

struct cheapest_memo *cheapest_memo_new(void)
{
    return calloc(1, sizeof(struct cheapest_memo));
}

void cheapest_memo_share(struct cheapest_memo *m, const struct cheapest_lock *lk)
{
    if (!m)
        return;
    m->lk = *lk;
    m->shared = true;
}

static void memo_lock(struct cheapest_memo *m)
{
    if (m->shared)
        m->lk.lock(m->lk.ctx);
}

static void memo_unlock(struct cheapest_memo *m)
{
    if (m->shared)
        m->lk.unlock(m->lk.ctx);
}

/* Under the lock: until another thread's search of a pending answer ends. */
static void memo_wait(struct cheapest_memo *m)
{
    m->lk.wait(m->lk.ctx);
}

static void memo_wake(struct cheapest_memo *m)
{
    if (m->shared)
        m->lk.wake(m->lk.ctx);
}

static void answer_free(struct job_answer *a)
{
    if (a) {
        free(a->layouts);
        free(a->eager_peak);
    }
    free(a);
}

void cheapest_memo_free(struct cheapest_memo *m)
{
    if (!m)
        return;
    for (unsigned i = 0; i < MEMO_SLOTS; i++)
        answer_free(m->slot[i]);
    free(m);
}

/* The bytes of a text field past its end, zeroed: two equal texts compare equal. */
static void clear_tail(char *s, size_t size)
{
    size_t n = strnlen(s, size);
    if (n < size)
        memset(s + n, 0, size - n);
}

/* The search's job for sc: sc on its own GPUs, every layout choice free and zeroed, the row's k
 * of checkpointing kept (search_fix searches it). A copy of the bytes, so that equal jobs
 * compare equal with memcmp (padding that differs only costs a search). */
static void job_key(const struct scenario *sc, struct scenario *key)
{
    memcpy(key, sc, sizeof *key);
    memset(key->name, 0, sizeof key->name);
    clear_tail(key->model_preset, sizeof key->model_preset);
    clear_tail(key->gpu_preset, sizeof key->gpu_preset);
    key->gpus = plan_gpus(sc);
    key->gpus_from = 0;
    /* FlashAttention is exact, never slower and never larger than the plain kernel (doc/model.md
     * 4.2, 12.1): the fix's layouts use it, a fifth of the search's families. So is the fused
     * (vocabulary-parallel) cross-entropy against the eager one: 4 s b V / t bytes where the
     * eager loss holds 8 and 12 (section 10.2), priced alike by the cost model (section 12). The
     * layouts are searched with it, and each is checked with the eager loss as well
     * (answer_search), so that a fix changes the loss only where it must. */
    key->pinned = SCENARIO_PIN_ATTENTION;
    key->loss = LOSS_FUSED;
    key->dp = key->tp = key->pp = key->cp = key->vpp = key->ep = key->etp = 1;
    key->sp = false;
    key->schedule = SCHEDULE_1F1B;
    key->zero = 0;
    key->zero_group = 0;
    key->attention = ATTENTION_FLASH;
    key->recompute = RECOMPUTE_NONE;
    key->ckpt_every = sc->recompute == RECOMPUTE_EVERY_K ? sc->ckpt_every : 0;
    key->offload = OFFLOAD_NONE;
    key->micro_batch = 1;
}

/* FNV-1a over the key's 8-byte words (then its last bytes), mixed at the end: a row that does
 * not fit hashes its job once, and a byte at a time was a tenth of such a row's time. */
static uint64_t key_hash(const struct scenario *key)
{
    const unsigned char *p = (const unsigned char *)key;
    uint64_t h = 1469598103934665603ull, w;
    size_t i = 0;
    for (; i + sizeof w <= sizeof *key; i += sizeof w) {
        memcpy(&w, p + i, sizeof w);
        h = (h ^ w) * 1099511628211ull;
    }
    for (; i < sizeof *key; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h ^ (h >> 32);
}

/* Searches key's layouts into a (its key set, nothing else); seed_s as search_fix's. Out of
 * memory, a has no answer (CHEAPEST_UNSEARCHED). Each layout within the tolerance is evaluated
 * again with the eager loss: a layout that fits so is as fast (the cost model prices both losses
 * alike), so a row with an eager loss keeps it there; the search with the fused loss lists every
 * layout that fits with the eager one (it fits with the fused loss too, at the same step). */
static void answer_search(struct job_answer *a, double seed_s, struct model_cache *cache)
{
    const struct scenario *key = &a->key;
    struct search_layout *top = malloc(CHEAPEST_TOP * sizeof *top);
    struct search_result res;
    enum search_status st =
        top ? search_fix(key, key->ckpt_every, seed_s, CHEAPEST_TOP, top, cache, &res)
            : SEARCH_NO_MEMORY;
    if (st != SEARCH_OK && st != SEARCH_NO_SPLIT && st != SEARCH_PIN_CLASH) {
        a->status = CHEAPEST_UNSEARCHED;
    } else if (st != SEARCH_OK || res.n_top == 0) {
        a->status = CHEAPEST_NONE;
    } else {
        a->status = CHEAPEST_FOUND;
        double bound = top[0].step_time_s * (1 + CHEAPEST_TOLERANCE);
        while (a->n < res.n_top && top[a->n].step_time_s <= bound)
            a->n++;
        struct search_layout *kept = realloc(top, a->n * sizeof *top);
        top = kept ? kept : top;
        a->eager_peak = calloc(a->n, sizeof *a->eager_peak);
        for (size_t i = 0; a->eager_peak && i < a->n; i++) {
            struct scenario eager = top[i].sc;
            eager.loss = LOSS_EAGER;
            struct terms t;
            if (model_peak_cached(&eager, cache, &t) == MODEL_OK && t.fits)
                a->eager_peak[i] = t.peak_bytes;
        }
        if (!a->eager_peak) {
            a->status = CHEAPEST_UNSEARCHED;
            a->n = 0;
        }
    }
    a->layouts = top;
}

/* A new answer of key, not yet searched (NULL when out of memory). */
static struct job_answer *answer_new(const struct scenario *key)
{
    struct job_answer *a = calloc(1, sizeof *a);
    if (a)
        a->key = *key;
    return a;
}

/* A bound on the fastest step of key's search: the fastest layout of the row's own degrees (tp,
 * pp, vpp, cp, dp, ep, etp pinned: a search of one structure) that fits; 0 when none does. */
static double seed_of(const struct scenario *key, const struct scenario *row,
                      struct model_cache *cache)
{
    struct scenario job = *key;
    job.tp = row->tp;
    job.pp = row->pp;
    job.vpp = row->vpp;
    job.cp = row->cp;
    job.dp = row->dp;
    job.ep = row->ep;
    job.etp = row->etp;
    job.pinned |= SCENARIO_PIN_TP | SCENARIO_PIN_PP | SCENARIO_PIN_VPP | SCENARIO_PIN_CP |
                  SCENARIO_PIN_DP | SCENARIO_PIN_EP | SCENARIO_PIN_ETP;
    struct search_layout best;
    struct search_result res;
    if (search_fix(&job, key->ckpt_every, 0, 1, &best, cache, &res) != SEARCH_OK || !res.n_top)
        return 0;
    return best.step_time_s;
}

/* key's answer in the memo (NULL: none), and a free slot of its neighbourhood (*free_slot,
 * MEMO_SLOTS: none). Under the memo's lock. */
static struct job_answer *memo_find(struct cheapest_memo *m, const struct scenario *key,
                                    unsigned home, unsigned *free_slot)
{
    *free_slot = MEMO_SLOTS;
    for (unsigned i = 0; i < MEMO_PROBES; i++) {
        unsigned s = (home + i) % MEMO_SLOTS;
        if (!m->slot[s]) {
            *free_slot = *free_slot == MEMO_SLOTS ? s : *free_slot;
            continue;
        }
        if (memcmp(&m->slot[s]->key, key, sizeof *key) == 0)
            return m->slot[s];
    }
    return NULL;
}

/* The answer for key: from the memo, or searched and kept there - under the memo's lock the
 * answer goes in pending, the search runs outside it, and a thread that needs the same job in
 * the meantime waits for it rather than searching it twice. NULL: out of memory. *own: the
 * caller frees it (not kept: no room in its neighbourhood, or no memo). */
static struct job_answer *answer_for(const struct scenario *key, const struct scenario *row,
                                     struct cheapest_memo *m, struct model_cache *cache, bool *own)
{
    *own = true;
    struct job_answer *a;
    if (m) {
        unsigned home = (unsigned)(key_hash(key) % MEMO_SLOTS), free_slot;
        memo_lock(m);
        while ((a = memo_find(m, key, home, &free_slot)) && a->pending)
            memo_wait(m);
        if (a) {
            memo_unlock(m);
            *own = false;
            return a;
        }
        if (free_slot == MEMO_SLOTS && !m->shared) { /* a full neighbourhood: its home anew */
            answer_free(m->slot[home]);
            m->slot[home] = NULL;
            free_slot = home;
        }
        a = free_slot == MEMO_SLOTS ? NULL : answer_new(key);
        if (a) {
            a->pending = true;
            m->slot[free_slot] = a;
            *own = false;
        }
        memo_unlock(m);
        if (a) {
            answer_search(a, seed_of(key, row, cache), cache);
            memo_lock(m);
            a->pending = false;
            memo_wake(m);
            memo_unlock(m);
            return a;
        }
    }
    a = answer_new(key); /* the caller's own */
    if (a)
        answer_search(a, seed_of(key, row, cache), cache);
    return a;
}

/* Whether layout a ranks before b as the fix of row: fewer changes, then the faster (a and b
 * come in the search's order, which breaks the rest). */
static bool fix_before(unsigned changes_a, double time_a, unsigned changes_b, double time_b)
{
    if (changes_a != changes_b)
        return changes_a < changes_b;
    return time_a < time_b;
}

/* What a trial change (a scenario, its terms into *t8) takes off the peak t: 0 when the peak does
 * not fall or cannot be computed. */
static uint64_t peak_saving(const struct scenario *trial, const struct terms *t,
                            struct model_cache *cache, struct terms *t8)
{
    if (model_peak_cached(trial, cache, t8) != MODEL_OK || t8->peak_bytes >= t->peak_bytes)
        return 0;
    return t->peak_bytes - t8->peak_bytes;
}

/* What 8-bit Adam would take off sc's peak t (0: not AdamW, or nothing). */
static uint64_t adam8_saving(const struct scenario *sc, const struct terms *t,
                             struct model_cache *cache)
{
    if (sc->optimizer != OPTIM_ADAMW && sc->optimizer != OPTIM_ADAMW_BF16)
        return 0;
    struct scenario trial = *sc;
    trial.optimizer = OPTIM_ADAMW8BIT;
    struct terms t8;
    return peak_saving(&trial, t, cache, &t8);
}

/* What FP8 training (fp8=tensor) would take off sc's peak t and its step base_s, into out's
 * note: only where the GPU has FP8 tensor cores (fp8_tflops from its preset), the row does not
 * train in FP8 and trains every parameter (FP8 with a frozen base is not modelled, doc/model.md
 * 3.7); nothing unless the peak falls. */
static void fp8_saving(const struct scenario *sc, const struct terms *t, double base_s,
                       struct model_cache *cache, struct cheapest *out)
{
    out->fp8_saving_bytes = 0;
    out->fp8_time_saved_s = 0;
    if (sc->fp8 != FP8_NONE || !(sc->speed.fp8_tflops > 0) || sc->finetune != FINETUNE_FULL ||
        sc->precision == PRECISION_FROZEN)
        return;
    struct scenario trial = *sc;
    trial.fp8 = FP8_TENSOR;
    struct terms t8;
    out->fp8_saving_bytes = peak_saving(&trial, t, cache, &t8);
    if (!out->fp8_saving_bytes)
        return;
    struct cost c8;
    cost_step(&trial, &t8, &c8);
    out->fp8_time_saved_s = c8.total_s < base_s ? base_s - c8.total_s : 0;
}

void cheapest_notes(const struct scenario *sc, const struct terms *t, struct model_cache *cache,
                    struct cheapest *out)
{
    out->adam8_saving_bytes = adam8_saving(sc, t, cache);
    fp8_saving(sc, t, out->base_step_time_s, cache, out);
}

int cheapest_fix(const struct scenario *sc, const struct terms *t, struct cheapest_memo *memo,
                 struct model_cache *cache, struct cheapest *out)
{
    struct cost base;
    cost_step(sc, t, &base);
    out->base_step_time_s = base.total_s;
    out->sc = *sc;
    out->changes = 0;
    out->peak_bytes = out->budget_bytes = 0;
    out->step_time_s = 0;
    out->adam8_saving_bytes = out->fp8_saving_bytes = 0;
    out->fp8_time_saved_s = 0;
    struct scenario key;
    job_key(sc, &key);
    bool own = false;
    struct job_answer *a = answer_for(&key, sc, memo, cache, &own);
    if (!a) {
        out->status = CHEAPEST_UNSEARCHED;
        return 0;
    }
    out->status = a->status;
    size_t best = 0;
    unsigned best_changes = 0;
    bool eager = sc->loss == LOSS_EAGER, best_eager = false;
    for (size_t i = 0; i < a->n; i++) {
        /* the row's eager loss kept where the layout fits with it */
        struct scenario cand = a->layouts[i].sc;
        bool keep = eager && a->eager_peak[i] > 0;
        cand.loss = keep ? LOSS_EAGER : LOSS_FUSED;
        unsigned c = cheapest_changes(sc, &cand);
        if (i == 0 ||
            fix_before(c, a->layouts[i].step_time_s, best_changes, a->layouts[best].step_time_s)) {
            best = i;
            best_changes = c;
            best_eager = keep;
        }
    }
    if (a->status == CHEAPEST_FOUND) {
        const struct search_layout *l = &a->layouts[best];
        out->sc = l->sc;
        out->sc.loss = best_eager ? LOSS_EAGER : LOSS_FUSED;
        memcpy(out->sc.name, sc->name, sizeof out->sc.name);
        out->sc.pinned = sc->pinned;
        out->sc.gpus = sc->gpus;
        out->sc.gpus_from = sc->gpus_from;
        out->peak_bytes = best_eager ? a->eager_peak[best] : l->peak_bytes;
        out->budget_bytes = l->budget_bytes;
        out->step_time_s = l->step_time_s;
        out->changes = best_changes;
    }
    if (own)
        answer_free(a);
    return 0;
}

/* One setting of a row and its fix, by value: what cheapest_changes counts and cheapest_settings
 * writes, in that order. */
enum setting {
    SET_TP,
    SET_SP,
    SET_PP,
    SET_VPP,
    SET_SCHEDULE,
    SET_CP,
    SET_EP,
    SET_ETP,
    SET_DP,
    SET_ZERO,
    SET_ZERO_GROUP,
    SET_ATTENTION,
    SET_LOSS,
    SET_RECOMPUTE,
    SET_OFFLOAD,
    SET_MICRO_BATCH,
    SET_COUNT
};

static const char *const setting_names[SET_COUNT] = {
    "tp", "sp",   "pp",         "vpp",       "schedule", "cp",        "ep",      "etp",
    "dp", "zero", "zero_group", "attention", "loss",     "recompute", "offload", "micro_batch"};

/* The value of a numeric setting (0 meaning 1 for the degrees, etp 0 meaning tp). */
static uint64_t degree(const struct scenario *sc, enum setting s)
{
    switch (s) {
    case SET_TP:
        return sc->tp;
    case SET_PP:
        return or_one(sc->pp);
    case SET_VPP:
        return or_one(sc->vpp);
    case SET_CP:
        return or_one(sc->cp);
    case SET_EP:
        return or_one(sc->ep);
    case SET_ETP:
        return sc->etp ? sc->etp : sc->tp;
    case SET_DP:
        return sc->dp;
    case SET_ZERO:
        return sc->zero;
    case SET_ZERO_GROUP:
        return sc->zero_group;
    case SET_MICRO_BATCH:
        return sc->micro_batch;
    default:
        return 0;
    }
}

static bool differs(const struct scenario *row, const struct scenario *fix, enum setting s)
{
    switch (s) {
    case SET_SP:
        return row->sp != fix->sp;
    case SET_SCHEDULE:
        return row->schedule != fix->schedule;
    case SET_ATTENTION:
        return row->attention != fix->attention;
    case SET_LOSS:
        return row->loss != fix->loss;
    case SET_RECOMPUTE:
        return row->recompute != fix->recompute ||
               (row->recompute == RECOMPUTE_EVERY_K && row->ckpt_every != fix->ckpt_every);
    case SET_OFFLOAD:
        return row->offload != fix->offload;
    case SET_ETP: /* of an MoE model only */
        return fix->experts > 0 && degree(row, s) != degree(fix, s);
    default:
        return degree(row, s) != degree(fix, s);
    }
}

unsigned cheapest_changes(const struct scenario *row, const struct scenario *fix)
{
    unsigned n = 0;
    for (int s = 0; s < SET_COUNT; s++) {
        /* sp follows tp: a change of its own only where tp stays */
        if (s == SET_SP && row->tp != fix->tp)
            continue;
        n += differs(row, fix, (enum setting)s);
    }
    return n;
}

enum plan_fix cheapest_kind(const struct scenario *row, const struct scenario *fix)
{
    unsigned mask = 0;
    for (int s = 0; s < SET_COUNT; s++)
        if (differs(row, fix, (enum setting)s))
            mask |= 1u << s;
    unsigned tp = 1u << SET_TP | 1u << SET_DP, sp = 1u << SET_SP, pp = 1u << SET_PP | 1u << SET_DP;
    if (mask == 1u << SET_ATTENTION && fix->attention == ATTENTION_FLASH)
        return PLAN_FIX_FLASH;
    if (mask == 1u << SET_ZERO && fix->zero >= 1)
        return fix->zero == 1 ? PLAN_FIX_ZERO1 : fix->zero == 2 ? PLAN_FIX_ZERO2 : PLAN_FIX_ZERO3;
    if (mask == 1u << SET_MICRO_BATCH)
        return PLAN_FIX_MICRO_BATCH;
    if (mask == 1u << SET_RECOMPUTE && fix->recompute == RECOMPUTE_EVERY_K && fix->ckpt_every == 1)
        return PLAN_FIX_FULL_CKPT;
    if ((mask == tp || mask == (tp | sp)) && fix->tp > row->tp)
        return PLAN_FIX_TP;
    if (mask == pp && or_one(fix->pp) > or_one(row->pp))
        return PLAN_FIX_PP;
    if (mask == 1u << SET_OFFLOAD && fix->offload == OFFLOAD_OPTIMIZER)
        return PLAN_FIX_OFFLOAD;
    return PLAN_FIX_LAYOUT;
}

static void put_value(struct strbuf *w, const struct scenario *fix, enum setting s)
{
    static const char *const offloads[] = {"none", "optimizer", "checkpoints"};
    char buf[32];
    switch (s) {
    case SET_SP:
        strbuf_puts(w, fix->sp ? "yes" : "no");
        break;
    case SET_SCHEDULE:
        strbuf_puts(w, scenario_schedule_name(fix->schedule));
        break;
    case SET_ATTENTION:
        strbuf_puts(w, scenario_attention_name(fix->attention));
        break;
    case SET_LOSS:
        strbuf_puts(w, fix->loss == LOSS_FUSED ? "fused" : "eager");
        break;
    case SET_RECOMPUTE:
        strbuf_puts(w, scenario_recompute_name(fix, buf, sizeof buf));
        break;
    case SET_OFFLOAD:
        strbuf_puts(w, (unsigned)fix->offload < 3 ? offloads[fix->offload] : "?");
        break;
    default:
        strbuf_printf(w, "%" PRIu64, degree(fix, s));
        break;
    }
}

int cheapest_settings(const struct scenario *row, const struct scenario *fix, char *buf,
                      size_t size)
{
    struct strbuf w;
    strbuf_init_fixed(&w, buf, size);
    for (int s = 0; s < SET_COUNT; s++) {
        if (!differs(row, fix, (enum setting)s))
            continue;
        strbuf_printf(&w, "%s%s=", w.len ? " " : "", setting_names[s]);
        put_value(&w, fix, (enum setting)s);
    }
    strbuf_printf(&w, "%sgpus=%" PRIu64, w.len ? " " : "", plan_gpus(fix));
    return w.err == STRBUF_OK ? 0 : -1;
}
