/*
 * readahead: scenarios handed from a reading thread to the threads that evaluate them, through
 * a bounded queue of batches (eval parses the next rows while it evaluates these: parsing is a
 * third of a row's time). Memory stays a few batches whatever the number of rows.
 *
 * One producer pushes items and closes the queue. The consumers take either
 * - one at a time (pop), one consumer, which writes its results itself; or
 * - a batch at a time (readahead_work), any number of consumers, each turning a batch into its
 *   text; the texts are written in the order of the input, each by whichever thread ends the
 *   wait for it, so no thread waits for another's turn. When the queue is full the producer
 *   evaluates a batch too instead of waiting: on n processors, the reading thread and n - 1
 *   consumers keep every processor busy whatever the share of parsing in a row's time.
 * Any consumer may stop the producer early (its next push returns false; takes end).
 */
#ifndef MEMFIT_READAHEAD_H
#define MEMFIT_READAHEAD_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"
#include "model/scenario.h"

struct readahead_item {
    bool opened; /* a file was opened (no scenario): the consumer's cue to begin its output */
    struct scenario sc;
    const char *file; /* lives as long as the queue */
    unsigned long line;
};

/* Consecutive items of the queue, held by one consumer while it works on them. */
struct readahead_batch {
    const struct readahead_item *items;
    size_t n;
    unsigned long seq; /* 0 for the first batch taken, then 1, 2, ... */
    size_t slot;       /* the queue's own */
};

/* Appends batch b's text to text (empty, its memory the slot's own, kept from batch to batch),
 * with the state of the thread that runs it (lane). False when it could not be made (no
 * memory): the queue stops, and the failure is the worker's to report. */
typedef bool readahead_work_fn(void *lane, const struct readahead_batch *b, struct strbuf *text);
/* Writes a batch's text (called in the order of the input, one call at a time). */
typedef void readahead_write_fn(void *ctx, const char *text, size_t len);

struct readahead;

/* NULL when out of memory (or threads are unavailable): read in one thread instead. */
struct readahead *readahead_new(void);
void readahead_free(struct readahead *q);

/* Batches are worked on by work (the producer's own lane: producer_lane) and their texts
 * written by write. Call before the producer starts. */
void readahead_share(struct readahead *q, readahead_work_fn *work, void *producer_lane,
                     readahead_write_fn *write, void *write_ctx);

/* Producer side. push copies *it; false once a consumer has stopped. Or in place: next is
 * where the next item goes (the same until commit; NULL once a consumer has stopped), commit
 * adds it (false once a consumer has stopped). */
bool readahead_push(struct readahead *q, const struct readahead_item *it);
struct readahead_item *readahead_next(struct readahead *q);
bool readahead_commit(struct readahead *q);
void readahead_close(struct readahead *q);

/* One consumer. pop: the next item (valid until the next pop), NULL after the last. */
const struct readahead_item *readahead_pop(struct readahead *q);

/* Any number of consumers, after readahead_share: works batches with lane until the end (or a
 * stop), writing the texts in order. */
void readahead_work(struct readahead *q, void *lane);

/* Whether a batch had no text (readahead_work_fn failed): what followed was not written. */
bool readahead_failed(struct readahead *q);

/* No more items wanted (any consumer). */
void readahead_stop(struct readahead *q);

#endif
