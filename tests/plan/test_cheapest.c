/* Tests of cheapest (the verdict's fix under the step's peak, doc/model.md section 11.6): the
 * fix fits on the row's own GPUs with its global batch, is as fast as the whole search's best
 * within the tolerance, changes no more settings than any other candidate within it, the memo
 * answers as a search does, and the changes are counted and written as documented. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>

#include <stdio.h>
#include <string.h>

#include "model/cost.h"
#include "model/model.h"
#include "plan/cheapest.h"
#include "plan/plan.h"
#include "plan/search.h"
#include "search_brute.h"
#include "small_gpt_job.h"

/* The lesson's 1.3B GPT on 8 A100-40GB with b = 8, plain attention, no recomputation, a global
 * batch of 64 (b dp): too large as it is. */
static void row_lesson(struct scenario *sc)
{
    scenario_lesson_example(sc);
    snprintf(sc->name, sizeof sc->name, "lesson-8x40");
    sc->dp = 8;
    sc->global_batch = 64;
    sc->gpu_mem_bytes = 40000000000ull;
    sc->speed = (struct gpu_speed){312, 1.555, 300, 32, 0};
    sc->gpus_per_node = 8;
    sc->peak = PEAK_STEP;
}

static void fix_of(const struct scenario *sc, struct cheapest_memo *memo, struct cheapest *c)
{
    struct terms t;
    assert_int_equal(model_peak(sc, &t), MODEL_OK);
    assert_false(t.fits);
    assert_int_equal(cheapest_fix(sc, &t, memo, NULL, c), 0);
    cheapest_notes(sc, &t, NULL, c);
}

/* Applied and evaluated again, the fix fits on the same GPUs with the same global batch (a
 * micro-batch dividing it), and its step is the cost model's for that layout. */
static void fix_fits_on_the_same_gpus(void **state)
{
    (void)state;
    struct scenario sc;
    row_lesson(&sc);
    struct cheapest c;
    fix_of(&sc, NULL, &c);
    assert_int_equal(c.status, CHEAPEST_FOUND);
    assert_int_equal(plan_gpus(&c.sc), plan_gpus(&sc));
    assert_int_equal(c.sc.global_batch, sc.global_batch);
    assert_int_equal(sc.global_batch % (c.sc.micro_batch * c.sc.dp), 0);
    struct terms t;
    assert_int_equal(model_peak(&c.sc, &t), MODEL_OK);
    assert_true(t.fits);
    assert_int_equal(t.peak_bytes, c.peak_bytes);
    struct cost cost;
    cost_step(&c.sc, &t, &cost);
    assert_true(cost.total_s == c.step_time_s);
    assert_int_equal(c.changes, cheapest_changes(&sc, &c.sc));
}

/* The fix's step is within the tolerance of the best of the whole search on the same GPUs. */
static void fix_is_as_fast_as_the_search(void **state)
{
    (void)state;
    struct scenario sc;
    row_lesson(&sc);
    struct cheapest c;
    fix_of(&sc, NULL, &c);
    struct scenario job = sc;
    job.gpus = plan_gpus(&sc);
    job.pinned = 0;
    struct search_layout best;
    struct search_result res;
    assert_int_equal(search_run(&job, 1, &best, NULL, NULL, NULL, &res), SEARCH_OK);
    assert_int_equal(res.n_top, 1);
    assert_true(c.step_time_s <= best.step_time_s * (1 + CHEAPEST_TOLERANCE));
}

/* No layout of the fix's search within the tolerance of its fastest changes fewer settings. */
static void fix_changes_the_fewest(void **state)
{
    (void)state;
    struct scenario sc;
    row_lesson(&sc);
    struct cheapest c;
    fix_of(&sc, NULL, &c);
    struct scenario job = sc;
    job.gpus = plan_gpus(&sc);
    job.pinned = SCENARIO_PIN_ATTENTION;
    job.attention = ATTENTION_FLASH;
    static struct search_layout top[CHEAPEST_TOP];
    struct search_result res;
    assert_int_equal(search_fix(&job, 0, 0, CHEAPEST_TOP, top, NULL, &res), SEARCH_OK);
    assert_true(res.n_top > 1);
    for (size_t i = 0; i < res.n_top; i++)
        if (top[i].step_time_s <= top[0].step_time_s * (1 + CHEAPEST_TOLERANCE))
            assert_true(cheapest_changes(&sc, &top[i].sc) >= c.changes);
    /* and it is not simply the fastest: the fastest changes more here */
    assert_true(cheapest_changes(&sc, &top[0].sc) > c.changes);
}

/* The memo answers each row as a search does, for rows that share a job and for others. */
static void memo_answers_as_a_search(void **state)
{
    (void)state;
    struct cheapest_memo *memo = cheapest_memo_new();
    assert_non_null(memo);
    unsigned checked = 0;
    for (unsigned round = 0; round < 2; round++) {
        for (uint64_t b = 8; b <= 32; b *= 2) {
            for (unsigned zero = 0; zero <= 1; zero++) {
                struct scenario sc;
                row_lesson(&sc);
                sc.micro_batch = b;
                sc.global_batch = 8 * b;
                sc.zero = zero;
                struct terms t;
                assert_int_equal(model_peak(&sc, &t), MODEL_OK);
                if (t.fits)
                    continue;
                struct cheapest with, without;
                fix_of(&sc, memo, &with);
                fix_of(&sc, NULL, &without);
                assert_int_equal(with.status, without.status);
                assert_true(with.step_time_s == without.step_time_s);
                assert_int_equal(with.changes, without.changes);
                assert_memory_equal(&with.sc, &without.sc, sizeof with.sc);
                checked++;
            }
        }
    }
    assert_true(checked >= 6);
    cheapest_memo_free(memo);
}

/* The peaks of sc and of a trial change of it (into *t and *t8), the trial's lower: by how much. */
static uint64_t peak_fall(const struct scenario *sc, const struct scenario *trial, struct terms *t,
                          struct terms *t8)
{
    assert_int_equal(model_peak(sc, t), MODEL_OK);
    assert_int_equal(model_peak(trial, t8), MODEL_OK);
    assert_true(t8->peak_bytes < t->peak_bytes);
    return t->peak_bytes - t8->peak_bytes;
}

/* 8-bit Adam, a note never applied: what it takes off the row's peak, by the model directly;
 * nothing for an optimizer that is not AdamW. */
static void adam8_note(void **state)
{
    (void)state;
    struct scenario sc;
    row_lesson(&sc);
    struct cheapest c;
    fix_of(&sc, NULL, &c);
    struct scenario trial = sc;
    trial.optimizer = OPTIM_ADAMW8BIT;
    struct terms t, t8;
    assert_int_equal(c.adam8_saving_bytes, peak_fall(&sc, &trial, &t, &t8));
    assert_int_not_equal(c.sc.optimizer, OPTIM_ADAMW8BIT); /* the fix keeps the optimizer */
    sc.optimizer = OPTIM_SGD;
    fix_of(&sc, NULL, &c);
    assert_int_equal(c.adam8_saving_bytes, 0);
}

/* FP8 training, a note never applied (doc/model.md 3.7, 4.10): on a GPU with FP8 tensor cores,
 * what fp8=tensor would take off the row's peak and its step, by the model and the cost model
 * directly; none on a GPU without them, for a row already in FP8, or for adapters on a frozen
 * base (not modelled in FP8). */
static void fp8_note(void **state)
{
    (void)state;
    struct scenario sc;
    row_lesson(&sc);
    struct cheapest c;
    fix_of(&sc, NULL, &c); /* A100: no FP8 tensor cores */
    assert_int_equal(c.fp8_saving_bytes, 0);
    assert_true(c.fp8_time_saved_s == 0);
    sc.speed.fp8_tflops = 624;
    fix_of(&sc, NULL, &c);
    struct scenario trial = sc;
    trial.fp8 = FP8_TENSOR;
    struct terms t, t8;
    assert_int_equal(c.fp8_saving_bytes, peak_fall(&sc, &trial, &t, &t8));
    struct cost base, fp8;
    cost_step(&sc, &t, &base);
    cost_step(&trial, &t8, &fp8);
    assert_true(fp8.total_s < base.total_s);
    assert_true(c.fp8_time_saved_s == base.total_s - fp8.total_s);
    assert_int_equal(c.sc.fp8, FP8_NONE); /* the fix keeps the arithmetic */
    sc.fp8 = FP8_TENSOR;
    fix_of(&sc, NULL, &c);
    assert_int_equal(c.fp8_saving_bytes, 0);
    sc.fp8 = FP8_NONE;
    sc.finetune = FINETUNE_LORA;
    sc.lora_rank = 16;
    struct terms tl;
    assert_int_equal(model_peak(&sc, &tl), MODEL_OK);
    assert_false(tl.fits);
    fix_of(&sc, NULL, &c);
    assert_int_equal(c.fp8_saving_bytes, 0);
}

/* A large vocabulary on one GPU (no layout to change but recomputation and offload, each slower):
 * the eager loss's 12 s b V bytes (doc/model.md 10.2) tip it over, the fused loss's 4 s b V do
 * not, and the cost model prices both alike - the fused loss alone is the fix, at no time added.
 * With room for the eager loss's peak the row fits as it is. */
static void fused_loss_alone(void **state)
{
    (void)state;
    struct scenario sc;
    row_lesson(&sc);
    sc.dp = 1;
    sc.micro_batch = 1;
    sc.global_batch = 1;
    sc.seq = 4096;
    sc.vocab = 256000;
    sc.attention = ATTENTION_FLASH;
    sc.loss = LOSS_EAGER;
    sc.reserve = 0;
    struct scenario fused = sc;
    fused.loss = LOSS_FUSED;
    struct terms te, tf;
    assert_int_equal(model_peak(&sc, &te), MODEL_OK);
    assert_int_equal(model_peak(&fused, &tf), MODEL_OK);
    assert_true(tf.peak_bytes + 1000000000ull < te.peak_bytes);
    sc.gpu_mem_bytes = tf.peak_bytes + (te.peak_bytes - tf.peak_bytes) / 2;
    struct cheapest c;
    fix_of(&sc, NULL, &c);
    assert_int_equal(c.status, CHEAPEST_FOUND);
    assert_int_equal(c.sc.loss, LOSS_FUSED);
    assert_int_equal(c.changes, 1);
    char buf[CHEAPEST_SETTINGS_MAX];
    assert_int_equal(cheapest_settings(&sc, &c.sc, buf, sizeof buf), 0);
    assert_string_equal(buf, "loss=fused gpus=1");
    assert_true(c.step_time_s == c.base_step_time_s);
    assert_int_equal(c.peak_bytes, tf.peak_bytes);
    /* the row keeps its eager loss where another change is as fast: the lesson's 8 x 40 GB */
    row_lesson(&sc);
    fix_of(&sc, NULL, &c);
    assert_int_equal(c.sc.loss, LOSS_EAGER);
}

/* A lock that counts: held at most once at a time, released as often as taken; one thread
 * never waits, and wakes under the lock. */
struct counting_lock {
    unsigned taken, released, woken;
    bool held;
};

static void count_lock(void *ctx)
{
    struct counting_lock *c = ctx;
    assert_false(c->held);
    c->held = true;
    c->taken++;
}

static void count_unlock(void *ctx)
{
    struct counting_lock *c = ctx;
    assert_true(c->held);
    c->held = false;
    c->released++;
}

static void count_wait(void *ctx)
{
    (void)ctx;
    fail_msg("one thread waited for itself");
}

static void count_wake(void *ctx)
{
    struct counting_lock *c = ctx;
    assert_true(c->held);
    c->woken++;
}

/* A shared memo answers as an own one, every look under the caller's lock. */
static void shared_memo_under_a_lock(void **state)
{
    (void)state;
    struct cheapest_memo *shared = cheapest_memo_new();
    assert_non_null(shared);
    struct counting_lock c = {0, 0, 0, false};
    struct cheapest_lock lk = {count_lock, count_unlock, count_wait, count_wake, &c};
    cheapest_memo_share(shared, &lk);
    for (unsigned round = 0; round < 2; round++) {
        struct scenario sc;
        row_lesson(&sc);
        struct cheapest with, without;
        fix_of(&sc, shared, &with);
        fix_of(&sc, NULL, &without);
        assert_int_equal(with.status, without.status);
        assert_true(with.step_time_s == without.step_time_s);
        assert_memory_equal(&with.sc, &without.sc, sizeof with.sc);
    }
    /* a miss takes it twice (to leave its answer pending, then to finish it), a hit once */
    assert_int_equal(c.taken, 3);
    assert_int_equal(c.released, c.taken);
    assert_int_equal(c.woken, 1);
    cheapest_memo_free(shared);
}

/* Threads that need the same job at once: one searches it, the others wait for its answer (a
 * pthread lock and condition, as eval's); all get the fix a memo of their own gives. */
struct sync {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
};

static void sync_lock(void *ctx)
{
    pthread_mutex_lock(&((struct sync *)ctx)->mutex);
}

static void sync_unlock(void *ctx)
{
    pthread_mutex_unlock(&((struct sync *)ctx)->mutex);
}

static void sync_wait(void *ctx)
{
    struct sync *y = ctx;
    pthread_cond_wait(&y->cond, &y->mutex);
}

static void sync_wake(void *ctx)
{
    pthread_cond_broadcast(&((struct sync *)ctx)->cond);
}

struct asker {
    struct cheapest_memo *memo;
    struct cheapest fix;
    int rc;
};

static void *ask(void *p)
{
    struct asker *a = p;
    struct scenario sc;
    struct terms t;
    row_lesson(&sc);
    a->rc = model_peak(&sc, &t) == MODEL_OK ? cheapest_fix(&sc, &t, a->memo, NULL, &a->fix) : -1;
    return NULL;
}

static void threads_share_one_search(void **state)
{
    (void)state;
    enum { THREADS = 4 };
    struct sync y;
    pthread_mutex_init(&y.mutex, NULL);
    pthread_cond_init(&y.cond, NULL);
    struct cheapest_lock lk = {sync_lock, sync_unlock, sync_wait, sync_wake, &y};
    struct cheapest_memo *shared = cheapest_memo_new();
    assert_non_null(shared);
    cheapest_memo_share(shared, &lk);
    struct asker askers[THREADS];
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) {
        askers[i] = (struct asker){shared, {0}, -1};
        assert_int_equal(pthread_create(&threads[i], NULL, ask, &askers[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    struct scenario sc;
    row_lesson(&sc);
    struct cheapest alone;
    fix_of(&sc, NULL, &alone);
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(askers[i].rc, 0);
        assert_int_equal(askers[i].fix.status, alone.status);
        assert_true(askers[i].fix.step_time_s == alone.step_time_s);
        assert_memory_equal(&askers[i].fix.sc, &alone.sc, sizeof alone.sc);
    }
    cheapest_memo_free(shared);
    pthread_cond_destroy(&y.cond);
    pthread_mutex_destroy(&y.mutex);
}

/* A small GPT (8 layers of h = 512, s = 512) on 8 H100s cut to 0.55 GB, global batch 32. */
static void job_small(struct scenario *sc)
{
    small_gpt_job(sc);
    sc->gpus_per_node = 8;
    sc->attention = ATTENTION_FLASH;
    sc->pinned = SCENARIO_PIN_ATTENTION;
}

/* search_fix's pruning (its k, its floors, the order of its structures, a seed) loses no layout
 * within the tolerance: its list is the brute force's (every layout evaluated, those of its k
 * kept), step for step, under each schedule (whose bubbles differ, doc/model.md 6.4). */
static void search_fix_matches_brute_force(void **state)
{
    (void)state;
    enum { CAP = 40000 };
    static struct search_layout all[CAP], top[CHEAPEST_TOP];
    for (unsigned run = 0; run < 4; run++) {
        uint64_t keep_k = run == 1 ? 2 : 0;
        struct scenario job;
        job_small(&job);
        job.schedule = run == 2 ? SCHEDULE_ZB1P : run == 3 ? SCHEDULE_DUALPIPE : SCHEDULE_1F1B;
        if (run >= 2) /* else the schedule is searched too */
            job.pinned |= SCENARIO_PIN_SCHEDULE;
        struct brute br;
        struct model_cache *memo = model_cache_new();
        brute_search(&job, memo, CAP, all, &br);
        assert_true(br.n_top < CAP); /* every fitting layout kept */
        size_t n_want = 0;
        double best = 0;
        static double want[CAP];
        for (size_t i = 0; i < br.n_top; i++) {
            const struct scenario *l = &all[i].sc;
            bool k_ok =
                l->recompute != RECOMPUTE_EVERY_K || l->ckpt_every == 1 || l->ckpt_every == keep_k;
            if (!k_ok)
                continue;
            if (n_want == 0)
                best = all[i].step_time_s;
            if (all[i].step_time_s <= best * (1 + CHEAPEST_TOLERANCE))
                want[n_want++] = all[i].step_time_s;
        }
        struct search_result res;
        assert_int_equal(search_fix(&job, keep_k, 0, CHEAPEST_TOP, top, memo, &res), SEARCH_OK);
        model_cache_free(memo);
        size_t n_got = 0;
        while (n_got < res.n_top &&
               top[n_got].step_time_s <= top[0].step_time_s * (1 + CHEAPEST_TOLERANCE))
            n_got++;
        assert_true(n_want > 1 || (n_want == 1 && job.schedule == SCHEDULE_DUALPIPE));
        assert_int_equal(n_got, n_want < CHEAPEST_TOP ? n_want : CHEAPEST_TOP);
        for (size_t i = 0; i < n_got; i++)
            assert_true(top[i].step_time_s == want[i]);
        /* Seeded with the fastest step itself (the tightest valid bound): the same list. */
        static struct search_layout seeded[CHEAPEST_TOP];
        struct search_result res2;
        assert_int_equal(search_fix(&job, keep_k, want[0], CHEAPEST_TOP, seeded, NULL, &res2),
                         SEARCH_OK);
        for (size_t i = 0; i < n_got; i++)
            assert_true(seeded[i].step_time_s == want[i]);
    }
}

/* A model whose states do not fit on its GPUs however sharded: no fix. */
static void nothing_fits(void **state)
{
    (void)state;
    struct scenario sc;
    row_lesson(&sc);
    sc.dp = 1;
    sc.global_batch = 8;
    sc.gpu_mem_bytes = 4000000000ull;
    struct cheapest c;
    fix_of(&sc, NULL, &c);
    assert_int_equal(c.status, CHEAPEST_NONE);
}

/* What is counted and written: each setting once, sp only where tp stays, in the documented
 * order, then the GPU count. */
static void changes_counted_and_written(void **state)
{
    (void)state;
    struct scenario row, fix;
    row_lesson(&row);
    fix = row;
    char buf[CHEAPEST_SETTINGS_MAX];
    assert_int_equal(cheapest_changes(&row, &fix), 0);
    assert_int_equal(cheapest_settings(&row, &fix, buf, sizeof buf), 0);
    assert_string_equal(buf, "gpus=8");
    fix.tp = 2;
    fix.sp = true;
    fix.dp = 4;
    fix.offload = OFFLOAD_OPTIMIZER;
    fix.micro_batch = 2;
    assert_int_equal(cheapest_changes(&row, &fix), 4); /* tp (sp with it), dp, offload, b */
    assert_int_equal(cheapest_kind(&row, &fix), PLAN_FIX_LAYOUT);
    cheapest_settings(&row, &fix, buf, sizeof buf);
    assert_string_equal(buf, "tp=2 sp=yes dp=4 offload=optimizer micro_batch=2 gpus=8");
    fix.offload = OFFLOAD_NONE;
    fix.micro_batch = row.micro_batch;
    assert_int_equal(cheapest_kind(&row, &fix), PLAN_FIX_TP); /* tp, sp and the dp it leaves */
    fix = row;
    fix.zero = 3;
    assert_int_equal(cheapest_kind(&row, &fix), PLAN_FIX_ZERO3);
    fix = row;
    fix.attention = ATTENTION_FLASH;
    assert_int_equal(cheapest_kind(&row, &fix), PLAN_FIX_FLASH);
    fix = row;
    fix.recompute = RECOMPUTE_EVERY_K;
    fix.ckpt_every = 1;
    fix.attention = ATTENTION_FLASH;
    fix.sp = true; /* tp stays: a change of its own */
    assert_int_equal(cheapest_changes(&row, &fix), 3);
    cheapest_settings(&row, &fix, buf, sizeof buf);
    assert_string_equal(buf, "sp=yes attention=flash recompute=full gpus=8");
    assert_int_equal(cheapest_kind(&row, &fix), PLAN_FIX_LAYOUT);
    fix.sp = false;
    fix.attention = ATTENTION_PLAIN;
    assert_int_equal(cheapest_kind(&row, &fix), PLAN_FIX_FULL_CKPT);
    fix.loss = LOSS_FUSED; /* after attention, before recompute */
    fix.attention = ATTENTION_FLASH;
    assert_int_equal(cheapest_changes(&row, &fix), 3);
    cheapest_settings(&row, &fix, buf, sizeof buf);
    assert_string_equal(buf, "attention=flash loss=fused recompute=full gpus=8");
    /* a cut text says so */
    assert_int_equal(cheapest_settings(&row, &fix, buf, 8), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fix_fits_on_the_same_gpus),
        cmocka_unit_test(fix_is_as_fast_as_the_search),
        cmocka_unit_test(fix_changes_the_fewest),
        cmocka_unit_test(memo_answers_as_a_search),
        cmocka_unit_test(adam8_note),
        cmocka_unit_test(fused_loss_alone),
        cmocka_unit_test(fp8_note),
        cmocka_unit_test(shared_memo_under_a_lock),
        cmocka_unit_test(threads_share_one_search),
        cmocka_unit_test(search_fix_matches_brute_force),
        cmocka_unit_test(nothing_fits),
        cmocka_unit_test(changes_counted_and_written),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
