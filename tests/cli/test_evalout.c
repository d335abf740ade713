/* Tests of evalout's CSV rows: every number as printf writes it (the row is built by hand, two
 * digits at a time), text fields quoted only when RFC 4180 needs it, long fields written whole;
 * and peak_phase in the three formats: the step's phase under --peak step, an empty cell, null
 * or no column under --peak lesson. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/evalout.h"
#include "model/step.h"

/* What the writer of format (table_cols columns for a table) writes of the n rows (sc[i], t[i],
 * fix), the header included, into buf. */
static void write_rows(enum evalout_format format, size_t table_cols, const struct scenario *sc,
                       const struct terms *t, size_t n, const struct evalout_fix *f, char *buf,
                       size_t size)
{
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    struct evalout w;
    evalout_init(&w, format, UNITS_GB, tmp);
    w.table_cols = table_cols;
    evalout_begin(&w);
    for (size_t i = 0; i < n; i++)
        evalout_row(&w, &sc[i], &t[i], f, NULL);
    evalout_end(&w);
    evalout_release(&w);
    rewind(tmp);
    size_t got = fread(buf, 1, size - 1, tmp);
    buf[got] = '\0';
    fclose(tmp);
}

/* The CSV row of (sc, t, fix), without the header, into buf. */
static void csv_row(const struct scenario *sc, const struct terms *t, const struct evalout_fix *f,
                    char *buf, size_t size)
{
    static char all[16384];
    write_rows(EVALOUT_CSV, 0, sc, t, 1, f, all, sizeof all);
    const char *row = strchr(all, '\n');
    assert_non_null(row);
    snprintf(buf, size, "%s", row + 1);
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
        struct evalout_fix fix = {"none", v, v, "", 0, false, 0.0, 0.0, 0, 0, 0.0};
        char got[1024], want[1024];
        csv_row(&sc, &t, &fix, got, sizeof got);
        snprintf(want, sizeof want,
                 "n,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",1,%" PRIu64 ",%" PRIu64
                 ",none,%" PRIu64 ",%" PRIu64 ",,%" PRIu64 ",%" PRIu64 ",,0,,,,0,,\n",
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
    struct evalout_fix fix = {"tp", 5, 2, "tp=2 sp=yes", 0, false, 0.0, 0.0, 0, 0, 0.0};
    char got[1024];
    csv_row(&sc, &t, &fix, got, sizeof got);
    assert_string_equal(
        got, "\"a,\"\"b\"\"\",0,0,0,0,0,0,0,0,0,0,0,0,0,tp,5,2,tp=2 sp=yes,0,0,,0,,,,0,,\n");
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
    struct evalout_fix fix = {"nothing", 1, 1, plan, 0, false, 0.0, 0.0, 0, 0, 0.0};
    csv_row(&sc, &t, &fix, got, sizeof got);
    snprintf(want, sizeof want, "long,0,0,0,0,0,0,0,0,0,0,0,0,0,nothing,1,1,%s,0,0,,0,,,,0,,\n",
             plan);
    assert_string_equal(got, want);
}

/* The header ends with peak_phase and stage; a row under --peak step has the phase's name, one
 * under --peak lesson an empty cell, then the pipeline stage of the most loaded GPU. */
static void csv_peak_phase(void **state)
{
    (void)state;
    static char got[16384];
    struct scenario sc;
    struct terms t;
    memset(&sc, 0, sizeof sc);
    memset(&t, 0, sizeof t);
    snprintf(sc.name, sizeof sc.name, "%s", "p");
    write_rows(EVALOUT_CSV, 0, &sc, &t, 1, NULL, got, sizeof got);
    assert_non_null(strstr(got, ",active_params,expert_bytes,peak_phase,stage,step_time_s,tokens_"
                                "per_s,mfu,host_node_bytes,fix_step_time_s,fix_time_added_s\n"));
    assert_non_null(strstr(got, "\np,0,0,0,0,0,0,0,0,0,0,0,0,0,none,0,0,,0,0,,0,,,,0,,\n"));
    t.n_stages = 3;
    t.peak_stage = 2;
    t.stage[2].pipe.rank = 5;
    sc.peak = PEAK_STEP;
    static const char *const names[STEP_PHASES] = {"forward", "backward_start", "recompute",
                                                   "backward_end", "optimizer"};
    for (int p = 0; p < STEP_PHASES; p++) {
        t.peak_phase = (enum step_phase)p;
        char row[256];
        csv_row(&sc, &t, NULL, row, sizeof row);
        char want[256];
        snprintf(want, sizeof want, "p,0,0,0,0,0,0,0,0,0,0,0,0,0,none,0,0,,0,0,%s,5,,,,0,,\n",
                 names[p]);
        assert_string_equal(row, want);
        assert_string_equal(step_phase_name((enum step_phase)p), names[p]);
    }
}

/* The cheapest fix (doc/model.md 11.6): its step time and the time it adds to the row's, in
 * CSV and JSON, and in the table's line below with the relative change. */
static void cheapest_fix_times(void **state)
{
    (void)state;
    static char got[16384];
    struct scenario sc;
    struct terms t;
    memset(&sc, 0, sizeof sc);
    memset(&t, 0, sizeof t);
    snprintf(sc.name, sizeof sc.name, "%s", "oom");
    sc.dp = sc.tp = sc.pp = 1;
    t.budget_bytes = 1;
    t.peak_bytes = 2;
    struct evalout_fix fix = {"layout", 1, 1,  "offload=optimizer gpus=1", 1, true, 2.5, 2.0,
                              0,        0, 0.0};
    char row[256];
    csv_row(&sc, &t, &fix, row, sizeof row);
    assert_non_null(strstr(row, ",layout,1,1,offload=optimizer gpus=1,0,0,,0,,,,0,2.5,0.5\n"));
    write_rows(EVALOUT_JSON, 0, &sc, &t, 1, &fix, got, sizeof got);
    assert_non_null(strstr(got, "\"fix_step_time_s\": 2.5, \"fix_time_added_s\": 0.5}"));
    write_rows(EVALOUT_TABLE, 0, &sc, &t, 1, &fix, got, sizeof got);
    assert_non_null(strstr(got, "fastest layout on the same GPUs, fewest changes"));
    assert_non_null(strstr(got, "offload=optimizer gpus=1 -> 0.0 GB at micro-batch 1, 2.5 s a "
                                "step (+0.5 s, +25.0%)"));
    assert_null(strstr(got, "8-bit Adam"));
    fix.adam8_saving = 12300000000ull; /* a note, when 8-bit Adam would save something */
    write_rows(EVALOUT_TABLE, 0, &sc, &t, 1, &fix, got, sizeof got);
    assert_non_null(strstr(
        got, "(+0.5 s, +25.0%); 8-bit Adam (changes the arithmetic; not applied): -12.3 GB"));
    assert_null(strstr(got, "FP8"));
    /* FP8 training, the same kind of note: its saving on the peak, and on the step when any */
    fix.fp8_saving = 4500000000ull;
    fix.fp8_time_saved_s = 0.25;
    write_rows(EVALOUT_TABLE, 0, &sc, &t, 1, &fix, got, sizeof got);
    assert_non_null(strstr(got, "-12.3 GB; FP8 training (changes the arithmetic; not applied): "
                                "-4.5 GB, -0.25 s a step"));
    fix.fp8_time_saved_s = 0;
    write_rows(EVALOUT_TABLE, 0, &sc, &t, 1, &fix, got, sizeof got);
    assert_non_null(strstr(got, "(changes the arithmetic; not applied): -4.5 GB\n"));
    fix.fp8_saving = 0;
    fix.adam8_saving = 0;
    fix.base_step_time_s = 3.0; /* faster than the row as given */
    write_rows(EVALOUT_TABLE, 0, &sc, &t, 1, &fix, got, sizeof got);
    assert_non_null(strstr(got, "2.5 s a step (-0.5 s, -16.7%)"));
}

/* JSON: the phase as a string under --peak step, null under --peak lesson. */
static void json_peak_phase(void **state)
{
    (void)state;
    static char got[16384];
    struct scenario sc[2];
    struct terms t[2];
    memset(sc, 0, sizeof sc);
    memset(t, 0, sizeof t);
    snprintf(sc[0].name, sizeof sc[0].name, "%s", "step");
    sc[0].peak = PEAK_STEP;
    t[0].peak_phase = STEP_RECOMPUTE;
    snprintf(sc[1].name, sizeof sc[1].name, "%s", "lesson");
    sc[1].peak = PEAK_LESSON;
    t[1].peak_phase = STEP_RECOMPUTE; /* whatever it holds, it is no phase of the lesson's sum */
    write_rows(EVALOUT_JSON, 0, sc, t, 2, NULL, got, sizeof got);
    assert_non_null(strstr(got, "{\"name\": \"step\", "));
    assert_non_null(strstr(
        got,
        "\"expert_bytes\": 0, \"peak_phase\": \"recompute\", \"stage\": 0, "
        "\"step_time_s\": null, \"tokens_per_s\": null, \"mfu\": null, \"host_node_bytes\": 0, "
        "\"fix_step_time_s\": null, \"fix_time_added_s\": null}"));
    assert_non_null(strstr(got, "\"expert_bytes\": 0, \"peak_phase\": null, \"stage\": 0, "
                                "\"step_time_s\": null, \"tokens_per_s\": null, \"mfu\": null, "
                                "\"host_node_bytes\": 0, \"fix_step_time_s\": null, "
                                "\"fix_time_added_s\": null}\n]\n"));
}

/* The table: a "peak phase" column under --peak step, the most wanted of those a narrow table
 * may leave out (and named in "--wide adds" when it is); no such column under --peak lesson, not
 * even with --wide. The line below the table says which peak it is. */
static void table_peak_phase(void **state)
{
    (void)state;
    static char got[16384];
    struct scenario sc[2];
    struct terms t[2];
    memset(sc, 0, sizeof sc);
    memset(t, 0, sizeof t);
    for (int i = 0; i < 2; i++) {
        snprintf(sc[i].name, sizeof sc[i].name, "s%d", i);
        sc[i].peak = PEAK_STEP;
        t[i].params = 1311528960;
        t[i].peak_bytes = 120221716480;
        t[i].budget_bytes = 68000000000;
    }
    t[0].peak_phase = STEP_BACKWARD_START;
    t[1].peak_phase = STEP_OPTIMIZER;
    write_rows(EVALOUT_TABLE, 0, sc, t, 2, NULL, got, sizeof got);
    assert_non_null(strstr(got, "  peak GB  peak phase      budget GB  "));
    assert_non_null(strstr(got, "  120.2  backward_start       68.0  "));
    assert_non_null(strstr(got, "  120.2  optimizer            68.0  "));
    assert_non_null(strstr(got, "; peak = the highest phase of a real step;"));
    /* 80 columns: the phase is kept before the other columns that may go, then the step time. */
    write_rows(EVALOUT_TABLE, 80, sc, t, 2, NULL, got, sizeof got);
    assert_non_null(
        strstr(got, "  peak GB  peak phase      budget GB  verdict  max b  fix (peak)  s/step\n"));
    assert_non_null(strstr(got, "--wide adds params, states, activations, logits, k_best"));
    assert_null(strstr(strstr(got, "--wide adds"), "phase"));
    /* 60 columns: no room for it; --wide offers it. */
    write_rows(EVALOUT_TABLE, 60, sc, t, 2, NULL, got, sizeof got);
    assert_non_null(strstr(got, "  peak GB  budget GB  verdict  fix (peak)"));
    assert_non_null(strstr(strstr(got, "--wide adds"), "peak phase"));
    /* --peak lesson: no phase column, whatever the width; none offered. */
    sc[0].peak = sc[1].peak = PEAK_LESSON;
    write_rows(EVALOUT_TABLE, 0, sc, t, 2, NULL, got, sizeof got);
    assert_null(strstr(got, "phase"));
    assert_null(strstr(got, "backward_start"));
    assert_non_null(strstr(got, "; peak = states + activations + logits (--peak lesson);"));
    write_rows(EVALOUT_TABLE, 60, sc, t, 2, NULL, got, sizeof got);
    assert_null(strstr(got, "phase"));
}

/* The cost model's three columns, as the caller computed them: CSV, JSON and the table. */
static void step_columns(void **state)
{
    (void)state;
    static char got[16384];
    struct scenario sc;
    struct terms t;
    struct cost c;
    memset(&sc, 0, sizeof sc);
    memset(&t, 0, sizeof t);
    memset(&c, 0, sizeof c);
    snprintf(sc.name, sizeof sc.name, "%s", "p");
    c.total_s = 12.34567;
    c.tokens_per_s = 1234.4;
    c.mfu = 0.41234;
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    enum evalout_format formats[3] = {EVALOUT_CSV, EVALOUT_JSON, EVALOUT_TABLE};
    const char *want[3] = {
        ",0,0,,0,12.35,1234,0.412,0,,\n",
        "\"step_time_s\": 12.35, \"tokens_per_s\": 1234, \"mfu\": 0.412, \"host_node_bytes\": 0, "
        "\"fix_step_time_s\": null, \"fix_time_added_s\": null}",
        "  12.3\n"};
    for (int f = 0; f < 3; f++) {
        rewind(tmp);
        struct evalout w;
        evalout_init(&w, formats[f], UNITS_GB, tmp);
        w.table_cols = 0;
        evalout_begin(&w);
        evalout_row(&w, &sc, &t, NULL, &c);
        evalout_end(&w);
        evalout_release(&w);
        long len = ftell(tmp);
        rewind(tmp);
        size_t n = fread(got, 1, (size_t)len, tmp);
        got[n] = '\0';
        assert_non_null(strstr(got, want[f]));
    }
    fclose(tmp);
    /* The table's header names the column. */
    assert_non_null(strstr(got, "  s/step\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(numbers_match_printf),
        cmocka_unit_test(text_is_quoted_when_needed),
        cmocka_unit_test(long_fields_are_written_whole),
        cmocka_unit_test(csv_peak_phase),
        cmocka_unit_test(cheapest_fix_times),
        cmocka_unit_test(json_peak_phase),
        cmocka_unit_test(table_peak_phase),
        cmocka_unit_test(step_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
