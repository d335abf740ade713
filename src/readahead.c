/* readahead: see readahead.h. A ring of batches, each free, being filled, ready or being read;
 * items move a batch at a time, so the lock is taken once per batch, not per row. */
#include "readahead.h"

#include <pthread.h>
#include <stdlib.h>

#define BATCHES 4
#define BATCH_ITEMS 512

enum slot_state { SLOT_FREE, SLOT_FILLING, SLOT_READY, SLOT_READING };

struct slot {
    enum slot_state state;
    size_t n;
    struct readahead_item items[BATCH_ITEMS];
};

struct readahead {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    struct slot slots[BATCHES];
    size_t fill;  /* the producer's slot */
    bool filling; /* the producer holds slots[fill] (the producer's own: read without lock) */
    size_t read;  /* the consumer's slot */
    size_t next;  /* the consumer's next item in its slot */
    bool reading; /* the consumer holds slots[read] */
    bool closed;  /* the producer is done */
    bool stopped; /* the consumer wants no more */
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
    pthread_cond_destroy(&q->changed);
    pthread_mutex_destroy(&q->lock);
    free(q);
}

/* Hands the producer's slot to the consumer (when it holds anything). Called with the lock. */
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

bool readahead_push(struct readahead *q, const struct readahead_item *it)
{
    struct slot *s = &q->slots[q->fill];
    if (!q->filling) { /* a new batch: wait for its slot to be free */
        pthread_mutex_lock(&q->lock);
        while (s->state != SLOT_FREE && !q->stopped)
            pthread_cond_wait(&q->changed, &q->lock);
        bool stopped = q->stopped;
        if (!stopped) {
            s->state = SLOT_FILLING;
            s->n = 0;
            q->filling = true;
        }
        pthread_mutex_unlock(&q->lock);
        if (stopped)
            return false;
    }
    s->items[s->n++] = *it;
    if (s->n == BATCH_ITEMS) {
        pthread_mutex_lock(&q->lock);
        publish(q);
        bool stopped = q->stopped;
        pthread_mutex_unlock(&q->lock);
        return !stopped;
    }
    return true;
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
    struct slot *s = &q->slots[q->read];
    if (q->reading && q->next < s->n)
        return &s->items[q->next++];
    pthread_mutex_lock(&q->lock);
    if (q->reading) { /* the batch is read: give its slot back */
        s->state = SLOT_FREE;
        q->reading = false;
        q->read = (q->read + 1) % BATCHES;
        s = &q->slots[q->read];
        pthread_cond_broadcast(&q->changed);
    }
    while (s->state != SLOT_READY && !q->closed)
        pthread_cond_wait(&q->changed, &q->lock);
    bool ready = s->state == SLOT_READY;
    if (ready) {
        s->state = SLOT_READING;
        q->reading = true;
        q->next = 0;
    }
    pthread_mutex_unlock(&q->lock);
    return ready ? &s->items[q->next++] : NULL;
}

void readahead_stop(struct readahead *q)
{
    pthread_mutex_lock(&q->lock);
    q->stopped = true;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->lock);
}
