/* Tests of nameset.c: duplicates found with the line first seen, across growth of the table;
 * the file it was seen in, across files and chunks; names that share a hash told apart; a table
 * that cannot grow says so. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>

#include "base/nameset.h"

static void duplicates_are_found_with_their_first_line(void **state)
{
    (void)state;
    struct nameset n;
    nameset_init(&n);
    char name[32];
    struct nameset_seen first = {0, NULL, false};
    for (unsigned long i = 0; i < 5000; i++) { /* grows from 1024 slots several times */
        snprintf(name, sizeof name, "scenario-%lu", i);
        assert_int_equal(nameset_add(&n, name, nameset_hash(name), i + 2, &first), 1);
    }
    assert_int_equal(n.count, 5000);
    assert_true(n.cap >= 10000);
    for (unsigned long i = 0; i < 5000; i += 97) {
        snprintf(name, sizeof name, "scenario-%lu", i);
        nameset_prefetch(&n, nameset_hash(name));
        assert_int_equal(nameset_add(&n, name, nameset_hash(name), 9999, &first), 0);
        assert_int_equal(first.line, i + 2);
        assert_null(first.file); /* no file begun */
        assert_true(first.same_file);
    }
    assert_int_equal(n.count, 5000);
    assert_true(nameset_hash("") != 0);
    assert_true(nameset_hash("a") != nameset_hash("b"));
    nameset_release(&n);
    nameset_release(&n); /* twice is harmless */
}

/* Two names of one 64-bit hash are two names (the second was rejected as a duplicate when only
 * hashes were compared); a name and its twin of the same hash both stay found. */
static void names_that_share_a_hash_are_different(void **state)
{
    (void)state;
    const char *a = "0hiooWgvkFK", *b = "8mpSuEbHH.A";
    assert_true(nameset_hash(a) == nameset_hash(b));
    struct nameset n;
    nameset_init(&n);
    struct nameset_seen first = {0, NULL, false};
    assert_int_equal(nameset_add(&n, a, nameset_hash(a), 2, &first), 1);
    assert_int_equal(nameset_add(&n, b, nameset_hash(b), 3, &first), 1);
    assert_int_equal(nameset_add(&n, b, nameset_hash(b), 4, &first), 0);
    assert_int_equal(first.line, 3);
    assert_int_equal(nameset_add(&n, a, nameset_hash(a), 5, &first), 0);
    assert_int_equal(first.line, 2);
    nameset_release(&n);
}

/* Each name is told the file it was first seen in: files of many chunks of names, a file without
 * names, the same file given twice (two files), a duplicate in the file being read. */
static void duplicates_are_found_with_their_file(void **state)
{
    (void)state;
    static const char *const files[] = {"a.csv", "empty.csv", "b.csv", "a.csv"};
    static const unsigned long names_in[] = {20000, 0, 7, 5000}; /* 20,000 names: 8 chunks */
    struct nameset n;
    nameset_init(&n);
    char name[32];
    struct nameset_seen first = {0, NULL, false};
    unsigned long k = 0;
    for (size_t f = 0; f < 4; f++) {
        assert_int_equal(nameset_begin_file(&n, files[f]), 0);
        for (unsigned long i = 0; i < names_in[f]; i++, k++) {
            snprintf(name, sizeof name, "a name of %lu", k);
            assert_int_equal(nameset_add(&n, name, nameset_hash(name), i + 2, &first), 1);
        }
    }
    assert_true(n.n_chunks > 8);
    /* While the second a.csv is read, a name of the first a.csv is from another file. */
    assert_int_equal(nameset_add(&n, "a name of 0", nameset_hash("a name of 0"), 9, &first), 0);
    assert_string_equal(first.file, "a.csv");
    assert_false(first.same_file);
    assert_int_equal(nameset_add(&n, "a name of 20007", nameset_hash("a name of 20007"), 9, &first),
                     0);
    assert_int_equal(first.line, 2);
    assert_true(first.same_file);
    /* Every name again, in a fifth file: found in its own file, on its own line. */
    assert_int_equal(nameset_begin_file(&n, "c.csv"), 0);
    k = 0;
    for (size_t f = 0; f < 4; f++) {
        for (unsigned long i = 0; i < names_in[f]; i++, k++) {
            snprintf(name, sizeof name, "a name of %lu", k);
            assert_int_equal(nameset_add(&n, name, nameset_hash(name), 1, &first), 0);
            assert_int_equal(first.line, i + 2);
            assert_string_equal(first.file, files[f]);
            assert_false(first.same_file);
        }
    }
    /* A duplicate within the file being read. */
    assert_int_equal(nameset_add(&n, "new", nameset_hash("new"), 40, &first), 1);
    assert_int_equal(nameset_add(&n, "new", nameset_hash("new"), 41, &first), 0);
    assert_int_equal(first.line, 40);
    assert_string_equal(first.file, "c.csv");
    assert_true(first.same_file);
    nameset_release(&n);
}

/* A table that cannot grow refuses the name: it is never let through unchecked. */
static void a_full_table_refuses(void **state)
{
    (void)state;
    struct nameset n;
    nameset_init(&n);
    n.max_cap = 1024;
    char name[32];
    struct nameset_seen first = {0, NULL, false};
    for (unsigned long i = 0; i < 512; i++) {
        snprintf(name, sizeof name, "s%lu", i);
        assert_int_equal(nameset_add(&n, name, nameset_hash(name), i + 2, &first), 1);
    }
    assert_int_equal(nameset_add(&n, "one more", nameset_hash("one more"), 600, &first), -1);
    assert_int_equal(nameset_add(&n, "s7", nameset_hash("s7"), 601, &first), -1);
    assert_int_equal(n.count, 512);
    nameset_release(&n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(duplicates_are_found_with_their_first_line),
        cmocka_unit_test(duplicates_are_found_with_their_file),
        cmocka_unit_test(names_that_share_a_hash_are_different),
        cmocka_unit_test(a_full_table_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
