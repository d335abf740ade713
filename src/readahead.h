/*
 * readahead: scenarios handed from a reading thread to the thread that evaluates them, in order,
 * through a bounded queue (eval parses the next rows while it evaluates these: parsing is a
 * third of a row's time). One producer, one consumer; memory stays a few batches whatever the
 * number of rows.
 *
 * The producer pushes items and closes the queue; the consumer pops them until NULL, and may stop
 * the producer early (its next push returns false).
 */
#ifndef MEMFIT_READAHEAD_H
#define MEMFIT_READAHEAD_H

#include <stdbool.h>

#include "scenario.h"

struct readahead_item {
    bool opened; /* a file was opened (no scenario): the consumer's cue to begin its output */
    struct scenario sc;
    const char *file; /* lives as long as the queue */
    unsigned long line;
};

struct readahead;

/* NULL when out of memory (or threads are unavailable): read in one thread instead. */
struct readahead *readahead_new(void);
void readahead_free(struct readahead *q);

/* Producer side. push copies *it; false once the consumer has stopped. */
bool readahead_push(struct readahead *q, const struct readahead_item *it);
void readahead_close(struct readahead *q);

/* Consumer side. pop: the next item (valid until the next pop), NULL after the last. stop: no
 * more items wanted. */
const struct readahead_item *readahead_pop(struct readahead *q);
void readahead_stop(struct readahead *q);

#endif
