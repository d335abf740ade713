/*
 * searchout: the rows of `memfit search` as CSV, JSON or an aligned table (doc/memfit.1, OUTPUT,
 * search).
 *
 * One row per layout listed, the fastest first: job, rank, step_time_s, layouts_tried,
 * layouts_fit, then (searching a range of GPU counts, or --tokens) gpus, the count, then the layout
 * as a complete scenario (scenario_csv.h; named JOB-RANK, the job's name cut so that the whole has
 * at most SCENARIO_NAME_MAX characters), then peak_bytes and budget_bytes (and with gpus:
 * tokens_per_s, days, gpu_hours, cost; deadline.h). `memfit eval` reads
 * those columns and gives the same peak. A job with no layout that fits has one row: rank 0, its
 * counts, the scenario's cells and peak_bytes empty (JSON: null), budget_bytes the job's.
 *
 * CSV and JSON stream, a job's rows as they come; JSON has CSV's keys with JSON's types. The
 * table is for people: kept to the end, in GB (or GiB), the job's chosen layout column by column,
 * fitted to table_cols terminal columns as eval's is (the least wanted columns left out first),
 * then a line per job with its counts. The writer owns its table rows; searchout_release frees
 * them.
 */
#ifndef MEMFIT_SEARCHOUT_H
#define MEMFIT_SEARCHOUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/units.h"
#include "cli/evalout.h"
#include "model/scenario.h"
#include "plan/deadline.h"
#include "plan/search.h"

struct searchout_table_row;
struct searchout_job;

struct searchout {
    enum evalout_format format;
    double unit_bytes; /* 1e9 (GB) or 2^30 (GiB), for the table */
    const char *unit_name;
    FILE *out;
    size_t table_cols; /* the table's width in terminal columns; 0: every column (--wide) */
    bool range;        /* the rows carry the gpus column (a range of counts was searched) and,
                        * at their end, tokens_per_s, days, gpu_hours and cost */
    double tokens;     /* --tokens (0: none): days and gpu_hours are written */
    double days;       /* --days, the deadline of --tokens */
    double price;      /* --price a GPU-hour (< 0: none): cost is written */
    unsigned long rows;
    struct searchout_table_row *table;
    size_t table_cap;
    struct searchout_job *jobs; /* the table's line per job */
    size_t n_jobs, jobs_cap;
    int error; /* set when a row could not be kept (no memory) */
};

/* A writer of format to out; table_cols starts at 80 (set it before the first row). */
void searchout_init(struct searchout *w, enum evalout_format format, enum units units, bool range,
                    FILE *out);
void searchout_begin(struct searchout *w);

/*
 * The rows of one job: top[0..res->n_top), the fastest first, or one row of rank 0 when none
 * fits. gpus: the count searched, or the smallest of a range at which a layout fits (0: none in
 * the range, whose ends are from..to; from = 0 when no range was searched). dl: the deadline
 * search's answer (--tokens and --days), or NULL; curve: a count of the scaling curve after the
 * job's first (its table line says so).
 */
void searchout_job(struct searchout *w, const struct scenario *job, const struct search_result *res,
                   const struct search_layout *top, uint64_t gpus, uint64_t from, uint64_t to,
                   const struct deadline_result *dl, bool curve);

/* Writes what is pending (the JSON closing bracket, the table) and flushes. */
void searchout_end(struct searchout *w);
void searchout_release(struct searchout *w);

/* The name of rank `rank` of job `job`, "JOB-RANK", into buf (SCENARIO_NAME_BYTES): the job's
 * name cut at a character so that the whole has at most SCENARIO_NAME_MAX characters. */
void searchout_layout_name(const char *job, uint64_t rank, char *buf, size_t size);

#endif
