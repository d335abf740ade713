/*
 * report_charts: the charts a template names ('@chart fit' and so on), for one scenario, placed
 * on the page of the layout engine (doc.h) and drawn by chart.h on its canvas; their titles and
 * bar labels are phrases (report_phrases.h).
 *
 * fit (peak memory as given, then rung by rung of the fix ladder; under --peak step each bar the
 * phase at its peak, part by part), phases (--peak step only: what the most loaded GPU holds at
 * each phase of a step, and the lesson's sum), step (memory over one training step as configured),
 * step_ckpt (the same step with checkpointing every k_best layers, or without checkpointing when
 * the scenario already checkpoints; both step charts share a scale), kcurve (peak against k), walk
 * (one layer's activations operation by operation), params (one layer's parameters matrix by
 * matrix). Each chart has a fixed height on the page.
 */
#ifndef MEMFIT_REPORT_CHARTS_H
#define MEMFIT_REPORT_CHARTS_H

#include <stdbool.h>
#include <stddef.h>

#include "report/doc.h"
#include "report/report_values.h"

/* The names of the charts, for checking templates; *n is the count. */
const char *const *report_charts_names(size_t *n);

/* The height of chart name on the page, pt (a default for an unknown name). */
double report_charts_height(const char *name);

/* Whether chart name has anything to show for r: phases only under --peak step. */
bool report_charts_applies(const struct report_sc *r, const char *name);

/*
 * Draws chart name for r at the cursor (a new page first unless it fits) and moves the cursor
 * below it. An unknown name leaves the space empty. A failure is kept in doc->error.
 */
void report_charts_draw(struct doc *doc, const struct report_sc *r, const char *name);

#endif
