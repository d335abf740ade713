/* Tests of evalout's CSV rows: every number as printf writes it (the row is built by hand, two
 * digits at a time), text fields quoted only when RFC 4180 needs it, long fields written whole. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evalout.h"

/* The CSV row of (sc, t, fix), without the header, into buf. */
static void csv_row(const struct scenario *sc, const struct terms *t, const struct evalout_fix *f,
                    char *buf, size_t size)
{
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    struct evalout w;
    evalout_init(&w, EVALOUT_CSV, UNITS_GB, tmp);
    evalout_row(&w, sc, t, f);
    evalout_end(&w);
    evalout_release(&w);
    rewind(tmp);
    size_t n = fread(buf, 1, size - 1, tmp);
    buf[n] = '\0';
    fclose(tmp);
}

/* Every number of a row, for values around each power of ten and the extremes. */
static void numbers_match_printf(void **state)
{
    (void)state;
    uint64_t values[64];
    size_t n = 0;
    values[n++] = 0;
    values[n++] = UINT64_MAX;
    for (uint64_t p = 1; n + 3 <= 64; p *= 10) {
        values[n++] = p - 1;
        values[n++] = p;
        values[n++] = p + 1;
        if (p > UINT64_MAX / 10)
            break;
    }
    struct scenario sc;
    memset(&sc, 0, sizeof sc);
    snprintf(sc.name, sizeof sc.name, "%s", "n");
    for (size_t i = 0; i < n; i++) {
        uint64_t v = values[i];
        struct terms t;
        memset(&t, 0, sizeof t);
        t.params = t.weights_bytes = t.grads_bytes = t.optimizer_bytes = t.states_bytes = v;
        t.act_layer_bytes = t.act_bytes = t.logits_bytes = t.peak_bytes = t.budget_bytes = v;
        t.k_best = t.max_micro_batch = t.active_params = t.expert_bytes = v;
        t.fits = true;
        struct evalout_fix fix = {"none", v, v, "", 0};
        char got[1024], want[1024];
        csv_row(&sc, &t, &fix, got, sizeof got);
        snprintf(want, sizeof want,
                 "n,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",1,%" PRIu64 ",%" PRIu64
                 ",none,%" PRIu64 ",%" PRIu64 ",,%" PRIu64 ",%" PRIu64 "\n",
                 v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v);
        assert_string_equal(got, want);
    }
}

static void text_is_quoted_when_needed(void **state)
{
    (void)state;
    struct scenario sc;
    struct terms t;
    memset(&sc, 0, sizeof sc);
    memset(&t, 0, sizeof t);
    snprintf(sc.name, sizeof sc.name, "%s", "a,\"b\"");
    struct evalout_fix fix = {"tp", 5, 2, "tp=2 sp=yes", 0};
    char got[1024];
    csv_row(&sc, &t, &fix, got, sizeof got);
    assert_string_equal(got, "\"a,\"\"b\"\"\",0,0,0,0,0,0,0,0,0,0,0,0,0,tp,5,2,tp=2 sp=yes,0,0\n");
}

/* A plan longer than the row buffer is written whole. */
static void long_fields_are_written_whole(void **state)
{
    (void)state;
    struct scenario sc;
    struct terms t;
    memset(&sc, 0, sizeof sc);
    memset(&t, 0, sizeof t);
    snprintf(sc.name, sizeof sc.name, "%s", "long");
    static char plan[5000], got[6000], want[6000];
    memset(plan, 'x', sizeof plan - 1);
    plan[sizeof plan - 1] = '\0';
    struct evalout_fix fix = {"nothing", 1, 1, plan, 0};
    csv_row(&sc, &t, &fix, got, sizeof got);
    snprintf(want, sizeof want, "long,0,0,0,0,0,0,0,0,0,0,0,0,0,nothing,1,1,%s,0,0\n", plan);
    assert_string_equal(got, want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(numbers_match_printf),
        cmocka_unit_test(text_is_quoted_when_needed),
        cmocka_unit_test(long_fields_are_written_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
