/* Tests of strbuf: growing text, the first error kept, fixed buffers cut between characters. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

static void test_grows_past_first_capacity(void **state)
{
    (void)state;
    struct strbuf sb;
    strbuf_init(&sb);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(strbuf_append(&sb, "abc", 3), 0);
    assert_int_equal(sb.len, 3000);
    assert_int_equal(strlen(sb.buf), 3000);
    assert_memory_equal(sb.buf + 2997, "abc", 4);
    strbuf_release(&sb);
    assert_null(sb.buf);
    assert_int_equal(sb.len, 0);
}

static void test_printf_and_puts(void **state)
{
    (void)state;
    struct strbuf sb;
    strbuf_init(&sb);
    assert_int_equal(strbuf_puts(&sb, "peak "), 0);
    assert_int_equal(strbuf_printf(&sb, "%.1f %s", 116.1, "GB"), 0);
    assert_string_equal(sb.buf, "peak 116.1 GB");
    /* Longer than the first capacity, to take the growing path of printf. */
    assert_int_equal(strbuf_printf(&sb, "%0200d", 7), 0);
    assert_int_equal(sb.len, 13 + 200);
    assert_int_equal(sb.buf[sb.len - 1], '7');
    strbuf_release(&sb);
}

static void test_detach_empty_and_full(void **state)
{
    (void)state;
    struct strbuf sb;
    strbuf_init(&sb);
    size_t len = 99;
    char *s = strbuf_detach(&sb, &len);
    assert_non_null(s);
    assert_string_equal(s, "");
    assert_int_equal(len, 0);
    free(s);
    strbuf_append(&sb, "x\0y", 3); /* bytes, not only strings */
    s = strbuf_detach(&sb, &len);
    assert_int_equal(len, 3);
    assert_memory_equal(s, "x\0y", 4);
    assert_null(sb.buf);
    free(s);
}

static void test_reset_keeps_memory(void **state)
{
    (void)state;
    struct strbuf sb;
    strbuf_init(&sb);
    strbuf_puts(&sb, "one");
    char *before = sb.buf;
    strbuf_reset(&sb);
    assert_int_equal(sb.len, 0);
    assert_string_equal(sb.buf, "");
    strbuf_puts(&sb, "two");
    assert_ptr_equal(sb.buf, before);
    assert_string_equal(sb.buf, "two");
    strbuf_release(&sb);
}

static void test_fixed_fits(void **state)
{
    (void)state;
    char buf[16] = "garbage";
    struct strbuf sb;
    strbuf_init_fixed(&sb, buf, sizeof buf);
    assert_string_equal(buf, "");
    assert_int_equal(strbuf_printf(&sb, "%s=%d", "tp", 8), 0);
    assert_int_equal(strbuf_puts(&sb, " sp=yes"), 0);
    assert_string_equal(buf, "tp=8 sp=yes");
    assert_null(strbuf_detach(&sb, NULL)); /* the text is the caller's */
}

/* The first error is kept: after a cut nothing more is appended, even what would fit. */
static void test_fixed_cut_keeps_first_error(void **state)
{
    (void)state;
    char buf[8];
    struct strbuf sb;
    strbuf_init_fixed(&sb, buf, sizeof buf);
    assert_int_equal(strbuf_puts(&sb, "abcdefghij"), STRBUF_TRUNCATED);
    assert_string_equal(buf, "abcdefg");
    strbuf_reset(&sb);
    assert_int_equal(strbuf_puts(&sb, "x"), STRBUF_TRUNCATED);
    assert_string_equal(buf, "");
}

/* "ab" then "×" (2 bytes) in 4 bytes: the half character is dropped, not written. */
static void test_fixed_cut_between_characters(void **state)
{
    (void)state;
    char buf[4];
    struct strbuf sb;
    strbuf_init_fixed(&sb, buf, sizeof buf);
    assert_int_equal(strbuf_puts(&sb, "ab×"), STRBUF_TRUNCATED);
    assert_string_equal(buf, "ab");
    /* A 3-byte character cut after one and after two of its bytes. */
    char b5[5], b6[6];
    strbuf_init_fixed(&sb, b5, sizeof b5);
    strbuf_printf(&sb, "abc%s", "≤");
    assert_string_equal(b5, "abc");
    strbuf_init_fixed(&sb, b6, sizeof b6);
    strbuf_printf(&sb, "ab%s", "≤≤");
    assert_string_equal(b6, "ab≤");
    /* A 4-byte character cut after three bytes. */
    char b7[6];
    strbuf_init_fixed(&sb, b7, sizeof b7);
    assert_int_equal(strbuf_puts(&sb, "ab😀"), STRBUF_TRUNCATED);
    assert_string_equal(b7, "ab");
}

static void test_fixed_zero_size(void **state)
{
    (void)state;
    struct strbuf sb;
    strbuf_init_fixed(&sb, NULL, 0);
    assert_int_equal(strbuf_printf(&sb, "%s", ""), 0);
    assert_int_equal(strbuf_puts(&sb, "a"), STRBUF_TRUNCATED);
    assert_int_equal(sb.len, 0);
}

static void test_release_null(void **state)
{
    (void)state;
    strbuf_release(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grows_past_first_capacity),
        cmocka_unit_test(test_printf_and_puts),
        cmocka_unit_test(test_detach_empty_and_full),
        cmocka_unit_test(test_reset_keeps_memory),
        cmocka_unit_test(test_fixed_fits),
        cmocka_unit_test(test_fixed_cut_keeps_first_error),
        cmocka_unit_test(test_fixed_cut_between_characters),
        cmocka_unit_test(test_fixed_zero_size),
        cmocka_unit_test(test_release_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
