/*
 * report_values: the values of the templates' placeholders.
 *
 * Computes the values of the templates' placeholders (report_placeholders.h): struct
 * report_values holds one string per placeholder, a number formatted by numfmt.h or a phrase of
 * the catalogue (report_phrases.h) chosen and filled here. struct report_sc is one scenario
 * computed once for the whole report (memory terms, fix ladder, largest micro-batches) with its
 * values; the tables and charts (report_tables.h, report_charts.h) read it.
 *
 * Pure: no I/O, no globals; the caller owns every struct.
 */
#ifndef MEMFIT_REPORT_VALUES_H
#define MEMFIT_REPORT_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "base/units.h"
#include "model/model.h"
#include "model/scenario.h"
#include "plan/cheapest.h"
#include "plan/plan.h"
#include "report/report_phrases.h"
#include "report/report_placeholders.h"

/* One scenario: everything its section shows, computed once. */
struct report_sc {
    const struct scenario *sc; /* the caller's */
    struct terms t;
    /* The lesson's terms (sc under --peak lesson: t itself when that is sc's peak), and under
     * --peak step the phases of t's most loaded GPU part by part (model_step_parts). */
    struct terms lesson;
    struct step_parts parts;
    struct plan plan;
    /* Under --peak step, of a scenario that does not fit: the cheapest fix (cheapest.h), the
     * verdict's when cheap_used (the ladder stays the chart's, "the lesson's ladder"). */
    struct cheapest cheap;
    bool cheap_used;
    uint64_t max_b[PLAN_MODES]; /* the largest micro-batch per activation mode */
    enum units units;           /* of every size in vals, the tables and the charts */
    struct report_phrases *ph;  /* the catalogue its words come from (the caller's) */
    struct report_values vals;  /* the document's values copied in, then the scenario's */
};

/* What the document's values need of its scenarios: how many, how many fit, whether any is
 * under --peak step. */
struct report_doc_counts {
    size_t n, fit;
    bool step;
};

/*
 * Fills the document-wide values of *vals from the counts of its scenarios, the units, the
 * options the caller was given (inputs, validation_note: NULL for the defaults) and the phrases
 * of ph.
 */
void report_values_doc(struct report_values *vals, const struct report_doc_counts *c, enum units u,
                       const char *inputs, const char *validation_note, struct report_phrases *ph);

/*
 * Computes scenario sc (memory terms, fix ladder, largest micro-batches) and its values, sizes in
 * units u, words from ph, into *r; the document's values are left empty (report_sc_share_doc).
 * Returns 0, or -1 after reporting into d when a byte count overflows. r keeps pointers to sc and
 * ph.
 */
int report_sc_init(struct report_sc *r, const struct scenario *sc, enum units u,
                   struct report_phrases *ph, struct diag *d);

/* Copies the document-wide values of doc into r's values. */
void report_sc_share_doc(struct report_sc *r, const struct report_values *doc);

/* The phrase that names fix f ("FlashAttention"; report_values_fix.c). */
enum report_phrase report_values_fix_phrase(enum plan_fix f);

/* The values of r's fix and of its one-sentence answer, its other values set (report_sc_init
 * calls it; report_values_fix.c). */
void report_values_fix(struct report_sc *r, enum units u);

/* The phrase that names a phase of a step ("the start of the backward pass"). */
enum report_phrase report_values_phase_phrase(enum step_phase p);

/* The short label of a rung, under its bar in the fit chart and in the ladder table ("b = 4"). */
void report_values_rung_label(struct report_phrases *ph, const struct plan_rung *r, char *buf,
                              size_t size);

/* The optimizer states of a trained parameter of GPU g of sc, in bytes, as the tables show it:
 * the master copy and the moments ("12"), with 8-bit AdamW their average over g's tensors
 * ("6.03"; doc/model.md 3.5). */
void report_values_optimizer_bytes(const struct scenario *sc, const struct model_gpu *g, char *buf,
                                   size_t size);

/*
 * The formula of one layer's activations A for sc, as the table of terms shows it
 * ("34sbh + 5as²b"; doc/model.md): the architecture, grouped KV heads, dropout, FlashAttention,
 * selective recomputation and tensor/sequence parallelism change it. A layer the closed formulas
 * do not cover (experts, latent attention, a decoupled head_dim, q/k norms, more than two norms)
 * gets its A on this GPU (t's act_layer_bytes) in sbh units instead.
 */
void report_values_act_formula(struct report_phrases *ph, const struct scenario *sc,
                               const struct terms *t, char *buf, size_t size);

#endif
