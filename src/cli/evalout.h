/*
 * evalout: the rows of `memfit eval` as CSV, JSON or an aligned table (doc/memfit.1, OUTPUT;
 * the columns' formulas: doc/model.md section 8.5).
 *
 * CSV and JSON stream: each row is written as it comes, so memory stays flat however many rows
 * there are. JSON has CSV's keys with JSON's types: "fits" is a boolean, and a key that does not
 * apply is null (the fix keys of a scenario that fits as it is; fix_plan when nothing fits;
 * peak_phase, the phase of a real step at the peak, under --peak lesson: an empty CSV cell).
 * The last three columns are the cost model's step time, tokens a second and MFU (doc/model.md
 * 12.7), computed by the caller.
 *
 * The table is for people: rows are kept until the end to align the columns, in GB (or GiB)
 * with one decimal, by terminal columns (textwidth.h: a CJK name takes two a character). It fits
 * table_cols: the columns that may go are left out, the least wanted first, then names are cut
 * with an ellipsis, and the lines below it wrap between words; table_cols 0 shows every column,
 * whatever its width. The writer owns its table rows; evalout_release frees them.
 */
#ifndef MEMFIT_EVALOUT_H
#define MEMFIT_EVALOUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/strbuf.h"
#include "base/units.h"
#include "model/cost.h"
#include "model/model.h"
#include "model/scenario.h"
#include "plan/plan.h"

enum evalout_format { EVALOUT_CSV, EVALOUT_JSON, EVALOUT_TABLE };

/* The planner's answer for one scenario (doc/model.md section 11). */
struct evalout_fix {
    const char *name; /* none, flash, zero1, ..., nothing */
    uint64_t peak_bytes;
    uint64_t micro_batch;
    const char *plan;         /* "attention=flash zero=2 ..." ("" when none) */
    uint64_t gpus_for_states; /* GPUs the model states alone need, fully sharded */
    bool timed;               /* the fix is the cheapest layout: its step time is known */
    double step_time_s;       /* of the fix (when timed) */
    double base_step_time_s;  /* of the row as given (when timed) */
    uint64_t adam8_saving;    /* the table's note: what 8-bit Adam would save (0: none) */
    uint64_t fp8_saving;      /* the same of FP8 training (0: none) */
    double fp8_time_saved_s;  /* and what it would take off the step (0: none) */
};

/* The ladder's fix of plan p (plan.h), settings its plan_fix_settings: not timed. */
struct evalout_fix evalout_ladder_fix(const struct plan *p, const char *settings);

struct evalout_table_row;

struct evalout {
    enum evalout_format format;
    double unit_bytes; /* 1e9 (GB) or 2^30 (GiB), for the table */
    const char *unit_name;
    FILE *out;
    struct strbuf *memory; /* CSV: the header and rows appended here instead of written to out */
    size_t table_cols;     /* the table's width in terminal columns; 0: every column (--wide) */
    unsigned long rows;
    struct evalout_table_row *table;
    size_t table_cap;
    int error; /* set when a row could not be kept (no memory) */
};

/* A writer of format to out; table_cols starts at 80 (set it before the first row). */
void evalout_init(struct evalout *w, enum evalout_format format, enum units units, FILE *out);
void evalout_begin(struct evalout *w);
/* One row; fix NULL: none; c: the cost model's step of sc (cost_step), NULL: its cells empty
 * (JSON null, the table's '-'). */
void evalout_row(struct evalout *w, const struct scenario *sc, const struct terms *t,
                 const struct evalout_fix *fix, const struct cost *c);
/* Writes what is pending (the JSON closing bracket, the table) and flushes. */
void evalout_end(struct evalout *w);
void evalout_release(struct evalout *w);

#endif
