/*
 * report_placeholders: the placeholders of the templates (templates/report.tmpl and
 * summary.tmpl) and the strings that fill them. Their names come in two lists: the document-wide
 * ones, valid in both templates, then the per-scenario ones, valid in report.tmpl only (and in a
 * scoped phrase of the catalogue, report_phrases.h). struct report_values holds one string per
 * placeholder; report_values.h computes them.
 *
 * Pure: no I/O, no globals but the constant list of names.
 */
#ifndef MEMFIT_REPORT_PLACEHOLDERS_H
#define MEMFIT_REPORT_PLACEHOLDERS_H

#include <stddef.h>

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
    X(INTERNODE, "internode_gb_s")                                                                 \
    X(FILES_NOTE, "files_note")

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
    X(MTP_LAYERS, "mtp_layers")                                                                    \
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
    X(COST_RATE_NOTE, "cost_rate_note")                                                            \
    X(NORM_NOTE, "norm_note")                                                                      \
    X(PEAK_CF, "peak_cf")                                                                          \
    X(MOE_NOTE, "moe_note")                                                                        \
    X(ATTENTION_NOTE, "attention_note")                                                            \
    X(FP8_NOTE, "fp8_note")                                                                        \
    X(FINETUNING, "finetuning")                                                                    \
    X(OPTIMIZER_NAME, "optimizer_name")                                                            \
    X(TUNING_NOTE, "tuning_note")                                                                  \
    X(PHASES_NOTE, "phases_note")                                                                  \
    X(KCURVE_NOTE, "kcurve_note")                                                                  \
    X(COUNTED_NOTE, "counted_note")                                                                \
    X(STEP_CHART_NOTE, "step_chart_note")                                                          \
    X(STEP_NOTE, "step_note")                                                                      \
    X(PIPELINE_NOTE, "pipeline_note")                                                              \
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

/*
 * Every placeholder name, the document's first: the first REPORT_PH_DOC_END of them are the
 * document-wide ones (the only ones the summary template may use). *n is the count; the array is
 * a constant.
 */
const char *const *report_placeholders_names(size_t *n);

/* template_expand's lookup over a struct report_values (ctx): the value of name, or NULL. */
const char *report_placeholders_lookup(void *ctx, const char *name);

#endif
