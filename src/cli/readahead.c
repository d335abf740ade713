/* readahead: see readahead.h. A ring of batches, each free, being filled, ready, taken or done
 * (its text waits to be written); items move a batch at a time, so the lock is taken once per
 * batch, not per row. The producer fills the slots in ring order and consumers take them in the
 * same order, so batch seq is in slot seq % BATCHES, and a slot is free again only once its
 * text is written: the texts waiting for their turn are never more than the slots. */
#include "cli/readahead.h"

#include <pthread.h>
#include <stdlib.h>

/* Room for two threads' batches in work and two more (read ahead, or texts waiting for their
 * turn): 900 KB of scenarios, which stay in the processors' caches. Eight batches of 512 were
 * 4% slower on two cores, thirty-two 8%. */
#define BATCHES 4
#define BATCH_ITEMS 256

enum slot_state { SLOT_FREE, SLOT_FILLING, SLOT_READY, SLOT_TAKEN, SLOT_DONE };

struct slot {
    enum slot_state state;
    size_t n;
    struct strbuf text; /* SLOT_DONE: the batch's; its memory kept for the next batch */
    bool text_ok;
    struct readahead_item items[BATCH_ITEMS];
};

struct readahead {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    struct slot slots[BATCHES];
    size_t fill;             /* the producer's slot */
    bool filling;            /* the producer holds slots[fill] (the producer's own: no lock) */
    size_t read;             /* the next slot to take */
    unsigned long taken;     /* batches taken so far: the next one's seq */
    unsigned long turn;      /* the next batch to write */
    bool writing;            /* a thread writes texts (outside the lock) */
    bool failed;             /* a batch had no text: nothing after it is written */
    bool closed;             /* the producer is done */
    bool stopped;            /* a consumer wants no more */
    readahead_work_fn *work; /* shared: readahead_share's */
    void *producer_lane;
    readahead_write_fn *write;
    void *write_ctx;
    struct readahead_batch popping; /* readahead_pop's batch */
    size_t next;                    /* readahead_pop's next item in it */
    bool holding;                   /* readahead_pop holds `popping` */
};

struct readahead *readahead_new(void)
{
    struct readahead *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    if (pthread_mutex_init(&q->lock, NULL) != 0) {
        free(q);
        return NULL;
    }
    if (pthread_cond_init(&q->changed, NULL) != 0) {
        pthread_mutex_destroy(&q->lock);
        free(q);
        return NULL;
    }
    return q;
}

void readahead_free(struct readahead *q)
{
    if (!q)
        return;
    for (size_t i = 0; i < BATCHES; i++)
        strbuf_release(&q->slots[i].text);
    pthread_cond_destroy(&q->changed);
    pthread_mutex_destroy(&q->lock);
    free(q);
}

void readahead_share(struct readahead *q, readahead_work_fn *work, void *producer_lane,
                     readahead_write_fn *write, void *write_ctx)
{
    q->work = work;
    q->producer_lane = producer_lane;
    q->write = write;
    q->write_ctx = write_ctx;
}

/* Takes the next batch when it is ready. Called with the lock. */
static bool take_ready(struct readahead *q, struct readahead_batch *b)
{
    struct slot *s = &q->slots[q->read];
    if (s->state != SLOT_READY || q->stopped)
        return false;
    s->state = SLOT_TAKEN;
    *b = (struct readahead_batch){s->items, s->n, q->taken++, q->read};
    q->read = (q->read + 1) % BATCHES;
    return true;
}

/* The next batch, waiting for it; false after the last (or a stop). */
static bool take(struct readahead *q, struct readahead_batch *b)
{
    pthread_mutex_lock(&q->lock);
    bool got;
    while (!(got = take_ready(q, b)) && !q->closed && !q->stopped)
        pthread_cond_wait(&q->changed, &q->lock);
    pthread_mutex_unlock(&q->lock);
    return got;
}

static void give_back(struct readahead *q, const struct readahead_batch *b)
{
    pthread_mutex_lock(&q->lock);
    q->slots[b->slot].state = SLOT_FREE;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->lock);
}

/* Writes the texts whose turn has come, unless another thread is at it. Called with the lock;
 * writes without it. */
static void write_in_turn(struct readahead *q)
{
    if (q->writing)
        return;
    q->writing = true;
    struct slot *s;
    while ((s = &q->slots[q->turn % BATCHES])->state == SLOT_DONE) {
        q->failed |= !s->text_ok;
        bool write = !q->failed;
        pthread_mutex_unlock(&q->lock);
        if (write)
            q->write(q->write_ctx, s->text.buf, s->text.len);
        strbuf_reset(&s->text);
        pthread_mutex_lock(&q->lock);
        s->state = SLOT_FREE;
        q->turn++;
        pthread_cond_broadcast(&q->changed);
    }
    q->writing = false;
}

/* Works batch b with lane and hands its text to be written. */
static void work_batch(struct readahead *q, const struct readahead_batch *b, void *lane)
{
    struct slot *s = &q->slots[b->slot]; /* its text is this thread's until SLOT_DONE */
    bool ok = q->work(lane, b, &s->text) && s->text.err == STRBUF_OK;
    pthread_mutex_lock(&q->lock);
    s->text_ok = ok;
    s->state = SLOT_DONE;
    if (!ok)
        q->stopped = true;
    write_in_turn(q);
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->lock);
}

void readahead_work(struct readahead *q, void *lane)
{
    struct readahead_batch b;
    while (take(q, &b))
        work_batch(q, &b, lane);
}

/* Hands the producer's slot to the consumers (when it holds anything). Called with the lock. */
static void publish(struct readahead *q)
{
    struct slot *s = &q->slots[q->fill];
    if (!q->filling || s->n == 0)
        return;
    q->filling = false;
    s->state = SLOT_READY;
    q->fill = (q->fill + 1) % BATCHES;
    pthread_cond_broadcast(&q->changed);
}

/* The producer's next slot, once free; shared, it works batches while it waits. False when
 * stopped. */
static bool begin_filling(struct readahead *q, struct slot *s)
{
    pthread_mutex_lock(&q->lock);
    struct readahead_batch b;
    while (s->state != SLOT_FREE && !q->stopped) {
        if (q->work && take_ready(q, &b)) {
            pthread_mutex_unlock(&q->lock);
            work_batch(q, &b, q->producer_lane);
            pthread_mutex_lock(&q->lock);
        } else {
            pthread_cond_wait(&q->changed, &q->lock);
        }
    }
    bool stopped = q->stopped;
    if (!stopped) {
        s->state = SLOT_FILLING;
        s->n = 0;
        q->filling = true;
    }
    pthread_mutex_unlock(&q->lock);
    return !stopped;
}

struct readahead_item *readahead_next(struct readahead *q)
{
    struct slot *s = &q->slots[q->fill];
    if (!q->filling && !begin_filling(q, s))
        return NULL;
    return &s->items[s->n];
}

bool readahead_commit(struct readahead *q)
{
    struct slot *s = &q->slots[q->fill];
    if (++s->n < BATCH_ITEMS)
        return true;
    pthread_mutex_lock(&q->lock);
    publish(q);
    bool stopped = q->stopped;
    pthread_mutex_unlock(&q->lock);
    return !stopped;
}

bool readahead_push(struct readahead *q, const struct readahead_item *it)
{
    struct readahead_item *to = readahead_next(q);
    if (!to)
        return false;
    *to = *it;
    return readahead_commit(q);
}

void readahead_close(struct readahead *q)
{
    pthread_mutex_lock(&q->lock);
    publish(q);
    q->closed = true;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->lock);
}

const struct readahead_item *readahead_pop(struct readahead *q)
{
    if (q->holding && q->next < q->popping.n)
        return &q->popping.items[q->next++];
    if (q->holding) { /* the batch is read: give its slot back */
        give_back(q, &q->popping);
        q->holding = false;
    }
    if (!take(q, &q->popping))
        return NULL;
    q->holding = true;
    q->next = 1;
    return &q->popping.items[0];
}

bool readahead_failed(struct readahead *q)
{
    pthread_mutex_lock(&q->lock);
    bool failed = q->failed;
    pthread_mutex_unlock(&q->lock);
    return failed;
}

void readahead_stop(struct readahead *q)
{
    pthread_mutex_lock(&q->lock);
    q->stopped = true;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->lock);
}
