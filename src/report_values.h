/*
 * report_values: the values of the templates' placeholders.
 *
 * Owns the placeholders of the templates (templates/report.tmpl and summary.tmpl): their names,
 * in two lists (document-wide ones, valid in both templates, then per-scenario ones, valid in
 * report.tmpl only), and their values: struct report_values holds one string per placeholder,
 * a number formatted by report_fmt.h or a phrase of the catalogue (report_phrases.h) chosen and
 * filled here. struct report_sc is one scenario computed once for the whole report (memory
 * terms, fix ladder, largest micro-batches) with its values; the tables and charts
 * (report_tables.h, report_charts.h) read it.
 *
 * Pure: no I/O, no globals but the constant list of names; the caller owns every struct.
 */
#ifndef MEMFIT_REPORT_VALUES_H
#define MEMFIT_REPORT_VALUES_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "model.h"
#include "plan.h"
#include "report_phrases.h"
#include "scenario.h"
#include "units.h"

/* Placeholders: document-wide (both templates) and per scenario (report.tmpl only). */
#define REPORT_DOC_PH(X)                                                                           \
    X(TITLE, "title")                                                                              \
    X(INPUTS, "inputs")                                                                            \
    X(N_SCENARIOS, "n_scenarios")                                                                  \
    X(N_FIT, "n_fit")                                                                              \
    X(N_OOM, "n_oom")                                                                              \
    X(UNITS, "units")                                                                              \
    X(UNIT_NOTE, "unit_note")                                                                      \
    X(PEAK_DEFINITION, "peak_definition")                                                          \
    X(VALIDATION, "validation")                                                                    \
    X(UTILISATION, "utilisation")                                                                  \
    X(INTERNODE, "internode_gb_s")

#define REPORT_SC_PH(X)                                                                            \
    X(NAME, "name")                                                                                \
    X(ARCH, "arch")                                                                                \
    X(MODEL, "model")                                                                              \
    X(GPU, "gpu")                                                                                  \
    X(GPU_MEM, "gpu_mem")                                                                          \
    X(GPUS, "gpus")                                                                                \
    X(HARDWARE, "hardware")                                                                        \
    X(RESERVE, "reserve")                                                                          \
    X(BUDGET, "budget")                                                                            \
    X(PEAK, "peak")                                                                                \
    X(PEAK_PHASE, "peak_phase")                                                                    \
    X(LESSON_PEAK, "lesson_peak")                                                                  \
    X(VERDICT, "verdict")                                                                          \
    X(HEADROOM, "headroom")                                                                        \
    X(PARAMS, "params")                                                                            \
    X(PARAMS_SHORT, "params_short")                                                                \
    X(ACTIVE_PARAMS, "active_params")                                                              \
    X(ACTIVE_SHORT, "active_short")                                                                \
    X(ACTIVE, "active")                                                                            \
    X(LAYERS, "layers")                                                                            \
    X(HIDDEN, "hidden")                                                                            \
    X(HEADS, "heads")                                                                              \
    X(KV_HEADS, "kv_heads")                                                                        \
    X(VOCAB, "vocab")                                                                              \
    X(FFN, "ffn")                                                                                  \
    X(EXPERTS, "experts")                                                                          \
    X(TOP_K, "top_k")                                                                              \
    X(EXPERT_FFN, "expert_ffn")                                                                    \
    X(SHARED_FFN, "shared_ffn")                                                                    \
    X(DENSE_LAYERS, "dense_layers")                                                                \
    X(KV_LORA_RANK, "kv_lora_rank")                                                                \
    X(SEQ, "seq")                                                                                  \
    X(MICRO_BATCH, "micro_batch")                                                                  \
    X(GLOBAL_BATCH, "global_batch")                                                                \
    X(PRECISION, "precision")                                                                      \
    X(FP8, "fp8")                                                                                  \
    X(ATTENTION, "attention")                                                                      \
    X(RECOMPUTE, "recompute")                                                                      \
    X(PARALLEL, "parallel")                                                                        \
    X(EP, "ep")                                                                                    \
    X(ETP, "etp")                                                                                  \
    X(STATES, "states")                                                                            \
    X(ACTIVATIONS, "activations")                                                                  \
    X(ACT_LAYER, "act_layer")                                                                      \
    X(LOGITS, "logits")                                                                            \
    X(STAGE, "stage")                                                                              \
    X(K_BEST, "k_best")                                                                            \
    X(K_STAR, "k_star")                                                                            \
    X(ACT_K_BEST, "act_k_best")                                                                    \
    X(ACT_K_STAR, "act_k_star")                                                                    \
    X(MAX_MICRO_BATCH, "max_micro_batch")                                                          \
    X(FIX, "fix")                                                                                  \
    X(FIX_PLAN, "fix_plan")                                                                        \
    X(FIX_PEAK, "fix_peak")                                                                        \
    X(FIX_MICRO_BATCH, "fix_micro_batch")                                                          \
    X(FIX_COST, "fix_cost")                                                                        \
    X(FIX_SENTENCE, "fix_sentence")                                                                \
    X(GPUS_FOR_STATES, "gpus_for_states")                                                          \
    X(SELECTIVE_OVERHEAD, "selective_overhead")                                                    \
    X(CORE_TERM, "core_term")                                                                      \
    X(CORE_CROSSOVER, "core_crossover")                                                            \
    X(TFLOPS, "tflops")                                                                            \
    X(LINK, "link_gb_s")                                                                           \
    X(STEP_TIME, "step_time")                                                                      \
    X(COST_NOTE, "cost_note")                                                                      \
    X(COST_STEP_NOTE, "cost_step_note")                                                            \
    X(NORM_NOTE, "norm_note")                                                                      \
    X(PEAK_CF, "peak_cf")                                                                          \
    X(MOE_NOTE, "moe_note")                                                                        \
    X(ATTENTION_NOTE, "attention_note")                                                            \
    X(FP8_NOTE, "fp8_note")                                                                        \
    X(FINETUNING, "finetuning")                                                                    \
    X(OPTIMIZER_NAME, "optimizer_name")                                                            \
    X(TUNING_NOTE, "tuning_note")                                                                  \
    X(PHASES_NOTE, "phases_note")                                                                  \
    X(COUNTED_NOTE, "counted_note")                                                                \
    X(STEP_CHART_NOTE, "step_chart_note")                                                          \
    X(STEP_NOTE, "step_note")                                                                      \
    X(STEP_VALIDATION, "step_validation")

#define REPORT_PH_ENUM(id, name) REPORT_PH_##id,
enum report_ph {
    REPORT_DOC_PH(REPORT_PH_ENUM) REPORT_PH_DOC_END, /* the document's values come before this */
    REPORT_SC_PH(REPORT_PH_ENUM) REPORT_PH_COUNT
};
#undef REPORT_PH_ENUM

#define REPORT_VALUE_MAX 512

/* One value per placeholder (REPORT_PH_DOC_END's slot stays empty). */
struct report_values {
    char v[REPORT_PH_COUNT][REPORT_VALUE_MAX];
};

/* One scenario: everything its section shows, computed once. */
struct report_sc {
    const struct scenario *sc; /* the caller's */
    struct terms t;
    /* The lesson's terms (sc under --peak lesson: t itself when that is sc's peak), and under
     * --peak step the phases of t's most loaded GPU part by part (model_step_parts). */
    struct terms lesson;
    struct step_parts parts;
    struct plan plan;
    uint64_t max_b[PLAN_MODES]; /* the largest micro-batch per activation mode */
    enum units units;           /* of every size in vals, the tables and the charts */
    struct report_phrases *ph;  /* the catalogue its words come from (the caller's) */
    struct report_values vals;  /* the document's values copied in, then the scenario's */
};

/*
 * Every placeholder name, the document's first: the first REPORT_PH_DOC_END of them are the
 * document-wide ones (the only ones the summary template may use). *n is the count; the array is
 * a constant.
 */
const char *const *report_values_names(size_t *n);

/* template_expand's lookup over a struct report_values (ctx): the value of name, or NULL. */
const char *report_values_lookup(void *ctx, const char *name);

/*
 * Fills the document-wide values of *vals from the n scenarios of scs (their verdicts), the units,
 * the options the caller was given (inputs, validation_note: NULL for the defaults) and the
 * phrases of ph.
 */
void report_values_doc(struct report_values *vals, const struct report_sc *scs, size_t n,
                       enum units u, const char *inputs, const char *validation_note,
                       struct report_phrases *ph);

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
