/* cmd_eval: see commands.h. memfit eval: each scenario's terms, verdict and fix, as rows (the
 * reading on a thread of its own, the evaluation on this one and, for CSV, on more). */
#include "cli/commands.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/out.h"
#include "base/strbuf.h"
#include "cli/evalout.h"
#include "cli/options.h"
#include "cli/readahead.h"
#include "cli/session.h"
#include "model/model.h"
#include "plan/cheapest.h"
#include "plan/plan.h"

/* The lock of the fixes' memo, and the condition its searches end on (cheapest.h). */
struct fixes_sync {
    pthread_mutex_t mutex;
    pthread_cond_t searched;
};

/* What evaluating rows needs of its own in each thread. */
struct eval_lane {
    struct plan plan;            /* reused for every row */
    struct model_cache *memo;    /* the layer inventories of recent rows (NULL: none) */
    struct cheapest_memo *fixes; /* the cheapest fix of each job seen, shared (NULL: none) */
    struct diag own;             /* the rows' own messages (an overflow) */
};

struct eval_ctx {
    const struct options *o;
    struct evalout out;
    struct eval_lane lane; /* this thread's */
    bool begun;            /* the header is written: a file could be opened */
    bool aborted;          /* eval_write wrote nothing: -o's file is left as it was */
    bool io_ok;
    bool write_failed;                /* a worker could not keep its rows' text (no memory) */
    struct diag rows;                 /* the rows' messages */
    unsigned long accepted, rejected; /* rows config accepted and rejected (session.h) */
    struct fixes_sync fixes_sync;     /* around lane.fixes, which every thread shares */
};

static void fixes_lock(void *ctx)
{
    pthread_mutex_lock(&((struct fixes_sync *)ctx)->mutex);
}

static void fixes_unlock(void *ctx)
{
    pthread_mutex_unlock(&((struct fixes_sync *)ctx)->mutex);
}

static void fixes_wait(void *ctx)
{
    struct fixes_sync *f = ctx;
    pthread_cond_wait(&f->searched, &f->mutex);
}

static void fixes_wake(void *ctx)
{
    pthread_cond_broadcast(&((struct fixes_sync *)ctx)->searched);
}

/* The verdict's fix of a row that does not fit under the step's peak: the cheapest layout on
 * its GPUs (cheapest.h), into f and settings, with the notes of 8-bit Adam and FP8 where the
 * output says them (notes: the table); false when the search gave no answer (the ladder's fix
 * stands). */
static bool eval_cheapest(struct eval_lane *lane, const struct scenario *sc, const struct terms *t,
                          bool notes, struct evalout_fix *f, char *settings, size_t size)
{
    struct cheapest c;
    if (cheapest_fix(sc, t, lane->fixes, lane->memo, &c) != 0 || c.status == CHEAPEST_UNSEARCHED)
        return false;
    if (notes)
        cheapest_notes(sc, t, lane->memo, &c);
    f->base_step_time_s = c.base_step_time_s;
    f->adam8_saving = c.adam8_saving_bytes;
    f->fp8_saving = c.fp8_saving_bytes;
    f->fp8_time_saved_s = c.fp8_time_saved_s;
    if (c.status == CHEAPEST_NONE) {
        f->name = plan_fix_name(PLAN_FIX_NOTHING);
        settings[0] = '\0';
        return true;
    }
    cheapest_settings(sc, &c.sc, settings, size);
    f->name = plan_fix_name(cheapest_kind(sc, &c.sc));
    f->peak_bytes = c.peak_bytes;
    f->micro_batch = c.sc.micro_batch;
    f->step_time_s = c.step_time_s;
    f->timed = true;
    return true;
}

static void eval_row(struct evalout *out, struct eval_lane *lane, const struct scenario *sc,
                     const char *file, unsigned long line, struct diag *d)
{
    struct terms t;
    char settings[CHEAPEST_SETTINGS_MAX];
    struct plan *p = &lane->plan;
    if (model_eval_cached(sc, lane->memo, &t) != MODEL_OK ||
        plan_build_memo(sc, &t, lane->memo, p) != 0) {
        diag_report(d, file, line, "scenario '%s': a byte count overflows 64 bits", sc->name);
        return;
    }
    plan_fix_settings(p, settings, sizeof settings);
    struct evalout_fix fix = evalout_ladder_fix(p, settings);
    /* Under the step's peak the fix is the cheapest layout; under the lesson's, the ladder's
     * first rung that fits (doc/model.md 11.6). */
    if (!t.fits && sc->peak == PEAK_STEP) {
        struct evalout_fix cheap = fix;
        if (eval_cheapest(lane, sc, &t, out->format == EVALOUT_TABLE, &cheap, settings,
                          sizeof settings))
            fix = cheap;
        else
            plan_fix_settings(p, settings, sizeof settings);
    }
    struct cost c;
    cost_step(sc, &t, &c);
    evalout_row(out, sc, &t, &fix, &c);
}

static bool eval_one(void *ctx, const struct scenario *sc, const char *file, unsigned long line,
                     struct diag *d)
{
    struct eval_ctx *e = ctx;
    eval_row(&e->out, &e->lane, sc, file, line, d);
    return true;
}

/* The header (or JSON's bracket) waits for the first file that opens: `eval missing.csv` writes
 * nothing but its message. */
static void eval_opened(void *ctx)
{
    struct eval_ctx *e = ctx;
    if (!e->begun)
        evalout_begin(&e->out);
    e->begun = true;
}

/*
 * ---- eval's threads (readahead.h): one parses the rows; this one and more evaluate them ----
 *
 * With CSV output the rows are evaluated a batch at a time by every thread, the reading one
 * included when it is ahead: each formats its batch's rows into memory, and the queue writes
 * the texts in the order of the input. JSON and the table keep one writer's state across rows
 * (a comma, the widths): this thread evaluates and writes them, a row at a time.
 */

struct eval_reader {
    const struct options *o;
    struct readahead *q;
    struct reading rd;
    struct diag *d; /* config's messages */
    bool opened;    /* a file was opened: the `opened` item is pushed once */
    bool ok;
};

/* The row is parsed into the queue's next item (reader_next), not copied there. */
static struct scenario *reader_next(void *ctx)
{
    struct eval_reader *r = ctx;
    struct readahead_item *it = readahead_next(r->q);
    return it ? &it->sc : NULL;
}

static bool reader_row(void *ctx, const struct scenario *sc, const char *file, unsigned long line,
                       struct diag *d)
{
    (void)d, (void)sc;
    struct eval_reader *r = ctx;
    struct readahead_item *it = readahead_next(r->q); /* sc's */
    it->opened = false;
    it->file = file;
    it->line = line;
    return readahead_commit(r->q);
}

static void reader_opened(void *ctx)
{
    struct eval_reader *r = ctx;
    static const struct readahead_item opened = {.opened = true};
    if (!r->opened)
        readahead_push(r->q, &opened);
    r->opened = true;
}

static void *reader_main(void *arg)
{
    struct eval_reader *r = arg;
    r->ok = session_read_files(r->o, &r->rd, r->d);
    readahead_close(r->q);
    return NULL;
}

/* A thread's share of a CSV evaluation (readahead_work's lane). */
struct eval_share {
    const struct evalout *settings; /* the writer's settings (CSV keeps no state across rows) */
    struct eval_lane lane;
    bool begun; /* this thread wrote the header */
};

/* readahead_work_fn: batch b's rows as CSV text. */
static bool eval_batch_text(void *arg, const struct readahead_batch *b, struct strbuf *text)
{
    struct eval_share *sh = arg;
    struct evalout out = *sh->settings;
    out.memory = text;
    for (size_t i = 0; i < b->n; i++) {
        const struct readahead_item *it = &b->items[i];
        if (it->opened) {
            evalout_begin(&out);
            sh->begun = true;
        } else {
            eval_row(&out, &sh->lane, &it->sc, it->file, it->line, &sh->lane.own);
        }
    }
    return out.error == 0;
}

/* readahead_write_fn: into eval's output. */
static void eval_write_text(void *ctx, const char *text, size_t len)
{
    struct eval_ctx *e = ctx;
    fwrite(text, 1, len, e->out.out);
}

struct eval_worker {
    struct readahead *q;
    struct eval_share share;
    pthread_t thread;
};

static void *eval_worker_main(void *arg)
{
    struct eval_worker *w = arg;
    readahead_work(w->q, &w->share);
    return NULL;
}

/* How many threads evaluate CSV rows, the reading one included: --threads (2 or more here), or
 * one a processor (at least 2, at most EVAL_THREADS_AUTO); 0 for JSON and the table (one thread
 * evaluates). */
static size_t eval_threads_wanted(const struct options *o)
{
    if (o->format != EVALOUT_CSV)
        return 0;
    if (o->threads)
        return o->threads;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 2)
        return 2;
    return cpus > EVAL_THREADS_AUTO ? EVAL_THREADS_AUTO : (size_t)cpus;
}

static void eval_lane_init(struct eval_lane *lane, const struct options *o,
                           struct cheapest_memo *fixes)
{
    lane->memo = model_cache_new(); /* NULL only makes eval slower */
    lane->fixes = fixes;
    diag_init(&lane->own, session_print_message, (void *)o);
}

/* A share's end: its counts into e. */
static void eval_share_end(struct eval_ctx *e, struct eval_share *sh)
{
    e->begun |= sh->begun;
    e->lane.own.count += sh->lane.own.count;
    model_cache_free(sh->lane.memo);
}

/* The shares of a CSV evaluation: w[0] the reading thread's (it works batches when ahead), w[1]
 * this thread's, the others their own threads'. On the heap: a share's plan is large. NULL when
 * out of memory. */
static struct eval_worker *eval_workers_new(struct eval_ctx *e, struct readahead *q, size_t n)
{
    struct eval_worker *w = calloc(n, sizeof *w);
    for (size_t i = 0; w && i < n; i++) {
        w[i].q = q;
        w[i].share.settings = &e->out;
        eval_lane_init(&w[i].share.lane, e->o, e->lane.fixes);
    }
    return w;
}

static void eval_workers_free(struct eval_ctx *e, struct eval_worker *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        eval_share_end(e, &w[i].share);
    free(w);
}

/* This thread's part: every row (JSON, the table; w NULL), or its share of the batches with
 * threads w[2 .. n - 1] (CSV). */
static void eval_consume(struct eval_ctx *e, struct readahead *q, struct eval_worker *w, size_t n)
{
    if (!w) {
        const struct readahead_item *it;
        while ((it = readahead_pop(q)) != NULL) {
            if (it->opened)
                eval_opened(e);
            else
                eval_one(e, &it->sc, it->file, it->line, &e->lane.own);
        }
        return;
    }
    size_t started = 2;
    while (started < n &&
           pthread_create(&w[started].thread, NULL, eval_worker_main, &w[started]) == 0)
        started++;
    readahead_work(q, &w[1].share);
    for (size_t i = 2; i < started; i++)
        pthread_join(w[i].thread, NULL);
}

/* read_files into eval_row with the reading on a thread of its own and the evaluation on this
 * one and, for CSV, on more; false with --threads 1 or when it cannot start the reading thread
 * (nothing was read: the caller reads in this thread). */
static bool eval_read_ahead(struct eval_ctx *e, bool to_stdout)
{
    if (e->o->threads == 1)
        return false;
    struct eval_reader r = {e->o,
                            readahead_new(),
                            {reader_row, reader_opened, reader_next, NULL, true, to_stdout, 0, 0},
                            &e->rows,
                            false,
                            false};
    r.rd.ctx = &r;
    if (!r.q)
        return false;
    size_t n = eval_threads_wanted(e->o);
    struct eval_worker *w = n ? eval_workers_new(e, r.q, n) : NULL; /* NULL: one thread writes */
    if (w)
        readahead_share(r.q, eval_batch_text, &w[0].share, eval_write_text, e);
    pthread_t thread;
    if (pthread_create(&thread, NULL, reader_main, &r) != 0) {
        if (w)
            eval_workers_free(e, w, n);
        readahead_free(r.q);
        return false;
    }
    eval_consume(e, r.q, w, n);
    readahead_stop(r.q); /* unblocks a reader still pushing after an early stop */
    pthread_join(thread, NULL);
    if (w)
        eval_workers_free(e, w, n);
    e->write_failed |= readahead_failed(r.q);
    readahead_free(r.q);
    e->io_ok = r.ok;
    e->accepted = r.rd.accepted;
    e->rejected = r.rd.rejected;
    return true;
}

#define EVAL_OUT_BUFFER (256 * 1024)

/* Runs the whole evaluation into f; returns -1 (write nothing) when no input could be opened. */
static int eval_write(FILE *f, void *ctx)
{
    struct eval_ctx *e = ctx;
    const struct options *o = e->o;
    bool to_stdout = f == stdout;
    /* Rows to a file or a pipe in blocks of EVAL_OUT_BUFFER, not stdio's 4 KiB: a million rows
     * are about 185 MB, and a write per 4 KiB was a tenth of eval's time (system time). A
     * terminal keeps its line buffering. Nothing was written to f yet, as setvbuf requires. */
    static char buffer[EVAL_OUT_BUFFER]; /* f is flushed before eval returns */
    if (!isatty(fileno(f)))
        setvbuf(f, buffer, _IOFBF, sizeof buffer);
    e->out.out = f;
    e->out.table_cols = session_table_cols(o, to_stdout);
    struct reading rd = {eval_one, eval_opened, NULL, e, true, to_stdout, 0, 0};
    if (!eval_read_ahead(e, to_stdout)) {
        e->io_ok = session_read_files(o, &rd, &e->rows);
        e->accepted = rd.accepted;
        e->rejected = rd.rejected;
    }
    if (e->begun)
        evalout_end(&e->out);
    e->aborted = !e->begun;
    return e->begun ? 0 : -1;
}

/* Messages of out_write_atomic, unless the file was left alone on purpose (nothing was read). */
static void eval_file_message(void *ctx, const char *msg, const char *file, unsigned long line)
{
    (void)file;
    (void)line;
    struct eval_ctx *e = ctx;
    if (!e->aborted)
        fprintf(stderr, "memfit: %s\n", msg);
}

int cmd_eval(const struct options *o)
{
    if (o->n_files == 0)
        return options_usage_error(o, "%s: at least one FILE.csv (or -) is needed", "eval");
    bool to_file = o->out && strcmp(o->out, "-") != 0;
    struct stat st;
    if (to_file && stat(o->out, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "memfit: cannot write '%s': it is a folder (eval -o names a file)\n",
                o->out);
        return EXIT_USAGE;
    }
    struct eval_ctx *e = malloc(sizeof *e);
    if (!e) {
        fprintf(stderr, "memfit: out of memory\n");
        return EXIT_USAGE;
    }
    e->o = o;
    e->lane.memo = model_cache_new(); /* NULL only makes eval slower */
    /* One memo of fixes for every thread, under a lock: each job is searched once. */
    e->lane.fixes = cheapest_memo_new(); /* NULL only makes eval slower */
    pthread_mutex_init(&e->fixes_sync.mutex, NULL);
    pthread_cond_init(&e->fixes_sync.searched, NULL);
    struct cheapest_lock lk = {fixes_lock, fixes_unlock, fixes_wait, fixes_wake, &e->fixes_sync};
    cheapest_memo_share(e->lane.fixes, &lk);
    e->begun = e->aborted = e->write_failed = false;
    e->accepted = e->rejected = 0;
    e->io_ok = true;
    evalout_init(&e->out, o->format, o->units, stdout);
    diag_init(&e->rows, session_print_message, (void *)o);
    diag_init(&e->lane.own, session_print_message, (void *)o);
    bool write_failed;
    if (to_file) {
        struct diag fd;
        diag_init(&fd, eval_file_message, e);
        write_failed = out_write_making_dirs(o->out, eval_write, e, &fd) != 0 && !e->aborted;
    } else {
        eval_write(stdout, e);
        write_failed = !session_flush_stdout();
    }
    write_failed |= e->out.error != 0 || e->write_failed;
    bool io_ok = e->io_ok;
    size_t rejected = e->rows.count + e->lane.own.count;
    /* A row that config accepted but the model could not evaluate (an overflow) is not written. */
    unsigned long unwritten = e->lane.own.count < e->accepted ? e->lane.own.count : e->accepted;
    if (!write_failed && io_ok)
        session_say_rejected(o, "row", "written", e->accepted - unwritten, e->rejected + unwritten);
    evalout_release(&e->out);
    model_cache_free(e->lane.memo);
    cheapest_memo_free(e->lane.fixes);
    pthread_cond_destroy(&e->fixes_sync.searched);
    pthread_mutex_destroy(&e->fixes_sync.mutex);
    free(e);
    if (write_failed || !io_ok)
        return EXIT_USAGE;
    return rejected ? EXIT_ROWS_REJECTED : EXIT_ALL_OK;
}
