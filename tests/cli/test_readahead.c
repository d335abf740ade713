/* Tests of readahead.c: order, the end, an early stop, across two threads; shared batches
 * worked by several threads (the producer's included) and written in order. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/readahead.h"

struct producer {
    struct readahead *q;
    unsigned long n;      /* items to push (every 100th an `opened` marker) */
    unsigned long pushed; /* accepted */
};

static void *produce(void *arg)
{
    struct producer *p = arg;
    for (unsigned long i = 0; i < p->n; i++) {
        struct readahead_item it = {.opened = i % 100 == 0, .file = "f", .line = i};
        it.sc.micro_batch = i;
        if (!readahead_push(p->q, &it))
            break;
        p->pushed++;
    }
    readahead_close(p->q);
    return NULL;
}

/* Every item arrives, once, in order, across many batches; then NULL. */
static void items_arrive_in_order(void **state)
{
    (void)state;
    struct producer p = {readahead_new(), 100003, 0};
    assert_non_null(p.q);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, produce, &p), 0);
    unsigned long next = 0;
    const struct readahead_item *it;
    while ((it = readahead_pop(p.q)) != NULL) {
        assert_int_equal(it->line, next);
        assert_int_equal(it->sc.micro_batch, next);
        assert_true(it->opened == (next % 100 == 0));
        next++;
    }
    assert_null(readahead_pop(p.q));
    pthread_join(t, NULL);
    assert_int_equal(next, 100003);
    assert_int_equal(p.pushed, 100003);
    readahead_free(p.q);
}

/* A consumer that stops early releases a producer blocked on a full queue. */
static void an_early_stop_ends_the_producer(void **state)
{
    (void)state;
    struct producer p = {readahead_new(), 1000000, 0};
    assert_non_null(p.q);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, produce, &p), 0);
    for (int i = 0; i < 10; i++)
        assert_non_null(readahead_pop(p.q));
    readahead_stop(p.q);
    pthread_join(t, NULL);
    assert_true(p.pushed < 1000000); /* the queue holds a few batches, not the rows */
    readahead_free(p.q);
}

/* Nothing pushed: the first pop is the end. */
static void an_empty_queue_ends_at_once(void **state)
{
    (void)state;
    struct producer p = {readahead_new(), 0, 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, produce, &p), 0);
    assert_null(readahead_pop(p.q));
    pthread_join(t, NULL);
    readahead_free(p.q);
}

/* ---- shared batches ---- */

/* A lane: the items it worked on. */
struct lane {
    unsigned long items;
    unsigned long fail_at; /* the batch (seq + 1) whose text it fails to make; 0: none */
};

/* The text of a batch: each item's line, one per text line ("L\n"). */
static bool lines_text(void *arg, const struct readahead_batch *b, struct strbuf *text)
{
    struct lane *lane = arg;
    if (lane->fail_at == b->seq + 1)
        return false;
    assert_int_equal(text->len, 0); /* the slot's, emptied once written */
    for (size_t i = 0; i < b->n; i++)
        strbuf_printf(text, "%lu\n", b->items[i].line);
    lane->items += b->n;
    return true;
}

/* What was written, in the order written. */
struct written {
    unsigned long next; /* the line expected next */
    unsigned long writes;
    bool in_order;
};

static void check_lines(void *ctx, const char *text, size_t len)
{
    struct written *w = ctx;
    w->writes++;
    for (const char *p = text; p < text + len;) {
        char *end;
        unsigned long line = strtoul(p, &end, 10);
        w->in_order &= line == w->next && *end == '\n';
        w->next++;
        p = end + 1;
    }
}

/* Items of lines 0 .. n - 1, every push accepted, then the end. */
static void push_lines_and_close(struct readahead *q, unsigned long n)
{
    for (unsigned long i = 0; i < n; i++) {
        struct readahead_item it = {.file = "f", .line = i};
        assert_true(readahead_push(q, &it));
    }
    readahead_close(q);
}

/* A queue whose batches are lines_text's, worked by `reading` when the producer is ahead and
 * checked by w as they are written. */
static struct readahead *lines_queue(struct lane *reading, struct written *w)
{
    struct readahead *q = readahead_new();
    assert_non_null(q);
    readahead_share(q, lines_text, reading, check_lines, w);
    return q;
}

struct consumer {
    struct readahead *q;
    struct lane lane;
};

static void *consume(void *arg)
{
    struct consumer *c = arg;
    readahead_work(c->q, &c->lane);
    return NULL;
}

/* Three consumers and the producer share the batches: every item once, written in order. */
static void shared_batches_are_written_in_order(void **state)
{
    (void)state;
    struct lane reading = {0, 0};
    struct written w = {0, 0, true};
    struct readahead *q = lines_queue(&reading, &w);
    struct consumer c[3];
    pthread_t t[3];
    for (int i = 0; i < 3; i++) {
        c[i] = (struct consumer){q, {0, 0}};
        assert_int_equal(pthread_create(&t[i], NULL, consume, &c[i]), 0);
    }
    unsigned long n = 200003;
    push_lines_and_close(q, n);
    unsigned long items = reading.items;
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        items += c[i].lane.items;
    }
    assert_true(w.in_order);
    assert_int_equal(w.next, n);
    assert_int_equal(items, n);
    assert_false(readahead_failed(q));
    readahead_free(q);
}

/* With no consumer yet, a full queue does not block the producer: it works batches itself;
 * the rest is worked after the close. */
static void a_full_queue_makes_the_producer_work(void **state)
{
    (void)state;
    struct lane reading = {0, 0}, late = {0, 0};
    struct written w = {0, 0, true};
    struct readahead *q = lines_queue(&reading, &w);
    unsigned long n = 100000;
    push_lines_and_close(q, n);
    assert_true(reading.items > n / 2); /* the queue holds a few batches, not the rows */
    readahead_work(q, &late);
    assert_true(w.in_order);
    assert_int_equal(w.next, n);
    assert_int_equal(reading.items + late.items, n);
    readahead_free(q);
}

/* A batch without a text stops the queue: nothing from it on is written, the producer ends. */
static void a_failed_batch_stops_the_writing(void **state)
{
    (void)state;
    struct lane reading = {0, 3}, mine = {0, 3};
    struct written w = {0, 0, true};
    struct readahead *q = lines_queue(&reading, &w);
    struct producer p = {q, 1000000, 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, produce, &p), 0);
    readahead_work(q, &mine);
    pthread_join(t, NULL);
    assert_true(readahead_failed(q));
    assert_true(w.in_order);
    assert_int_equal(w.writes, 2); /* batches 0 and 1; 2 failed */
    assert_true(p.pushed < 1000000);
    readahead_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(items_arrive_in_order),
        cmocka_unit_test(an_early_stop_ends_the_producer),
        cmocka_unit_test(an_empty_queue_ends_at_once),
        cmocka_unit_test(shared_batches_are_written_in_order),
        cmocka_unit_test(a_full_queue_makes_the_producer_work),
        cmocka_unit_test(a_failed_batch_stops_the_writing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
