/* Tests of readahead.c: order, the end, an early stop, across two threads. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "readahead.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(items_arrive_in_order),
        cmocka_unit_test(an_early_stop_ends_the_producer),
        cmocka_unit_test(an_empty_queue_ends_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
