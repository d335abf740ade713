/*
 * report_tables: the tables a template names ('@table config' and so on), drawn through the
 * layout engine (doc.h) from a scenario's values (report_values.h); their headers, labels and
 * sentences are phrases (report_phrases.h).
 *
 * Scenario tables (report.tmpl): config (the model, training and hardware in two columns),
 * verdict (a tinted box: fits or not, headroom, the cheapest fix), terms (each memory term with
 * its formula, bytes, size and share of the peak), ladder (the fix ladder rung by rung: what each
 * adds, micro-batch, peak, fits, added step time), microbatch (the largest micro-batch per
 * activation mode). Summary table (summary.tmpl): summary, one row per scenario.
 */
#ifndef MEMFIT_REPORT_TABLES_H
#define MEMFIT_REPORT_TABLES_H

#include <stddef.h>

#include "report/doc.h"
#include "report/report_values.h"

/* The names of the scenario tables, for checking templates; *n is the count. */
const char *const *report_tables_names(size_t *n);

/* The names of the summary template's tables ("summary"); *n is the count. */
const char *const *report_tables_summary_names(size_t *n);

/* Draws scenario table name (one of report_tables_names; others draw nothing) for r at the
 * cursor. */
void report_tables_draw(struct doc *doc, const struct report_sc *r, const char *name);

/* The scenario of row i of the summary, computed (valid until the next call); NULL on failure. */
typedef const struct report_sc *report_tables_row_fn(void *ctx, size_t i);

/* Draws the summary table: one row per scenario, row(ctx, i) for i in [0, n) (verdict, peak,
 * budget, fix). Each row is asked for once, in order, so that the caller keeps no scenario. */
void report_tables_summary(struct doc *doc, size_t n, report_tables_row_fn *row, void *ctx);

/*
 * The height to keep on the page with a heading just above table name, pt: the verdict box, or
 * a table's header and three rows.
 */
double report_tables_keep_height(const char *name);

#endif
