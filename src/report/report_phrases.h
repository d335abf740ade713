/*
 * report_phrases: the report's words. Every sentence, caption, column header and label that the
 * report shows outside the templates' own text is a named phrase of templates/phrases.tmpl; C
 * chooses which phrase applies (fits or not, which fix, which stage...) and fills its
 * {{placeholders}} with numbers it formatted (numfmt.h).
 *
 * The list below is the contract between C and the catalogue: each phrase's name, the
 * placeholders C fills for it (its own, separated by spaces), whether it may also use every
 * placeholder of report.tmpl (SC: it is expanded when the scenario's values are all known, at
 * drawing time) and, for a table row, its number of cells. The shipped catalogue must define
 * every phrase; a scenario or summary template may redefine any of them with its own '@phrase'
 * blocks (template.h), which then replace the shipped ones for the whole document.
 *
 * Ownership: struct report_phrases owns the shipped catalogue; an override points into the
 * caller's template, which must outlive it.
 */
#ifndef MEMFIT_REPORT_PHRASES_H
#define MEMFIT_REPORT_PHRASES_H

#include <stdbool.h>
#include <stddef.h>

#include "base/diag.h"
#include "report/template.h"

struct report_values;

/* Whether a phrase may use every placeholder of report.tmpl (SC) or only its own (OWN). */
#define REPORT_OWN false
#define REPORT_SC true

/* X(ID, name, its own placeholders, REPORT_OWN or REPORT_SC, cells (0: plain text)) */
#define REPORT_PHRASES(X)                                                                          \
    /* the document */                                                                             \
    X(TITLE, "title", "", REPORT_OWN, 0)                                                           \
    X(TITLE_SCENARIO, "title_scenario", "title name", REPORT_OWN, 0)                               \
    X(SUMMARY_RUNNING_HEAD, "summary_running_head", "", REPORT_OWN, 0)                             \
    X(SUMMARY_BOOKMARK, "summary_bookmark", "", REPORT_OWN, 0)                                     \
    X(INPUTS_UNNAMED, "inputs_unnamed", "", REPORT_OWN, 0)                                         \
    X(N_SCENARIOS_ONE, "n_scenarios_one", "n", REPORT_OWN, 0)                                      \
    X(N_SCENARIOS_MANY, "n_scenarios_many", "n", REPORT_OWN, 0)                                    \
    X(UNIT_NOTE_GB, "unit_note_gb", "", REPORT_OWN, 0)                                             \
    X(PEAK_DEFINITION_STEP, "peak_definition_step", "", REPORT_OWN, 0)                             \
    X(PEAK_DEFINITION_LESSON, "peak_definition_lesson", "", REPORT_OWN, 0)                         \
    X(UNIT_NOTE_GIB, "unit_note_gib", "", REPORT_OWN, 0)                                           \
    X(VALIDATION, "validation", "measurements gpt_shapes llama_shapes gap_gpt gap_llama",          \
      REPORT_OWN, 0)                                                                               \
    X(FILES_NOTE, "files_note", "pages max_pages folder", REPORT_OWN, 0)                           \
    /* the summary table */                                                                        \
    X(SUMMARY_COLUMNS, "summary_columns", "", REPORT_OWN, 6)                                       \
    X(SUMMARY_FITS, "summary_fits", "", REPORT_SC, 0)                                              \
    X(SUMMARY_OOM, "summary_oom", "", REPORT_SC, 0)                                                \
    X(SUMMARY_FIX_NONE, "summary_fix_none", "", REPORT_SC, 0)                                      \
    X(SUMMARY_FIX, "summary_fix", "fix_id", REPORT_SC, 0)                                          \
    X(SUMMARY_FIX_NOTHING, "summary_fix_nothing", "", REPORT_SC, 0)                                \
    X(SUMMARY_FIX_NOTHING_ACTS, "summary_fix_nothing_acts", "", REPORT_SC, 0)                      \
    /* a scenario's values */                                                                      \
    X(ARCH_GPT, "arch_gpt", "", REPORT_OWN, 0)                                                     \
    X(ARCH_LLAMA, "arch_llama", "", REPORT_OWN, 0)                                                 \
    X(MODEL_CUSTOM, "model_custom", "", REPORT_OWN, 0)                                             \
    X(GPU_UNNAMED, "gpu_unnamed", "", REPORT_OWN, 0)                                               \
    X(HARDWARE_PRESET, "hardware_preset", "gpus gpu gpu_mem", REPORT_OWN, 0)                       \
    X(HARDWARE_ONE, "hardware_one", "gpus gpu_mem", REPORT_OWN, 0)                                 \
    X(HARDWARE_MANY, "hardware_many", "gpus gpu_mem", REPORT_OWN, 0)                               \
    X(VERDICT_WORD_FITS, "verdict_word_fits", "", REPORT_OWN, 0)                                   \
    X(VERDICT_WORD_OOM, "verdict_word_oom", "", REPORT_OWN, 0)                                     \
    X(HEADROOM_SPARE, "headroom_spare", "amount", REPORT_OWN, 0)                                   \
    X(HEADROOM_OVER, "headroom_over", "amount", REPORT_OWN, 0)                                     \
    X(ZERO_NONE, "zero_none", "", REPORT_OWN, 0)                                                   \
    X(ZERO_STAGE, "zero_stage", "stage", REPORT_OWN, 0)                                            \
    X(ZERO_NO_EFFECT, "zero_no_effect", "stage", REPORT_OWN, 0)                                    \
    X(ZERO_GROUP, "zero_group", "stage group", REPORT_OWN, 0)                                      \
    X(PIPELINE_VPP, "pipeline_vpp", "pp vpp", REPORT_OWN, 0)                                       \
    X(PARALLEL_CP, "parallel_cp", "cp", REPORT_OWN, 0)                                             \
    X(TENSOR, "tensor", "tp", REPORT_OWN, 0)                                                       \
    X(TENSOR_SP, "tensor_sp", "tp", REPORT_OWN, 0)                                                 \
    X(PARALLEL, "parallel", "dp tensor pp expert zero", REPORT_OWN, 0)                             \
    X(PARALLEL_OFFLOAD, "parallel_offload", "dp tensor pp expert zero host host_node host_mem",    \
      REPORT_OWN, 0)                                                                               \
    X(PARALLEL_OFFLOAD_CKPT, "parallel_offload_ckpt", "dp tensor pp expert zero host pcie",        \
      REPORT_OWN, 0)                                                                               \
    X(PARALLEL_EP, "parallel_ep", "ep", REPORT_OWN, 0)                                             \
    X(PARALLEL_EP_ETP, "parallel_ep_etp", "ep etp", REPORT_OWN, 0)                                 \
    X(PARAMS_ACTIVE, "params_active", "active_short", REPORT_OWN, 0)                               \
    X(STAGE_EACH, "stage_each", "", REPORT_OWN, 0)                                                 \
    X(STAGE_FIRST, "stage_first", "", REPORT_OWN, 0)                                               \
    X(STAGE_LAST, "stage_last", "", REPORT_OWN, 0)                                                 \
    X(STAGE_MIDDLE, "stage_middle", "rank", REPORT_OWN, 0)                                         \
    X(NORM_NOTE_LAYERNORM, "norm_note_layernorm", "", REPORT_OWN, 0)                               \
    X(NORM_NOTE_RMSNORM, "norm_note_rmsnorm", "", REPORT_OWN, 0)                                   \
    X(NORM_NOTE_RMSNORM_HF, "norm_note_rmsnorm_hf", "", REPORT_OWN, 0)                             \
    X(NORM_NOTE_LAYERNORM_STEP, "norm_note_layernorm_step", "", REPORT_OWN, 0)                     \
    X(COUNTED_LESSON, "counted_lesson", "", REPORT_OWN, 0)                                         \
    X(COUNTED_STEP, "counted_step", "", REPORT_OWN, 0)                                             \
    X(STEP_CHART_LESSON, "step_chart_lesson", "", REPORT_OWN, 0)                                   \
    X(STEP_CHART_STEP, "step_chart_step", "", REPORT_OWN, 0)                                       \
    /* the step model: its phases and the implementation choices it assumes */                     \
    X(PHASE_FORWARD, "phase_forward", "", REPORT_OWN, 0)                                           \
    X(PHASE_BACKWARD_START, "phase_backward_start", "", REPORT_OWN, 0)                             \
    X(PHASE_RECOMPUTE, "phase_recompute", "", REPORT_OWN, 0)                                       \
    X(PHASE_BACKWARD_END, "phase_backward_end", "", REPORT_OWN, 0)                                 \
    X(PHASE_OPTIMIZER, "phase_optimizer", "", REPORT_OWN, 0)                                       \
    X(PHASES_NOTE, "phases_note", "", REPORT_SC, 0)                                                \
    X(KCURVE_NOTE, "kcurve_note", "act_none act_best", REPORT_SC, 0)                               \
    X(KCURVE_NOTE_OPTIMIZER, "kcurve_note_optimizer", "act_none act_best", REPORT_SC, 0)           \
    X(KCURVE_NOTE_OPTIMIZER_RANGE, "kcurve_note_optimizer_range", "act_none act_best k_lo k_hi",   \
      REPORT_SC, 0)                                                                                \
    X(CHART_KCURVE_ACT, "chart_kcurve_act", "", REPORT_SC, 0)                                      \
    X(STEP_NOTE, "step_note", "impl_choice loss grad_buffer optimizer_impl precision_choice",      \
      REPORT_OWN, 0)                                                                               \
    X(PIPELINE_NOTE_1F1B, "pipeline_note_1f1b", "pp split rank m recompute", REPORT_OWN, 0)        \
    X(PIPELINE_NOTE_INTERLEAVED, "pipeline_note_interleaved", "pp vpp split rank m recompute",     \
      REPORT_OWN, 0)                                                                               \
    X(PIPELINE_NOTE_ZB1P, "pipeline_note_zb1p", "pp split rank m recompute", REPORT_OWN, 0)        \
    X(PIPELINE_NOTE_DUALPIPE, "pipeline_note_dualpipe", "pp split rank m recompute", REPORT_OWN,   \
      0)                                                                                           \
    X(STEP_VALIDATION, "step_validation", "", REPORT_OWN, 0)                                       \
    X(IMPL_MEMFIT, "impl_memfit", "", REPORT_OWN, 0)                                               \
    X(IMPL_MEGATRON, "impl_megatron", "", REPORT_OWN, 0)                                           \
    X(IMPL_HF, "impl_hf", "", REPORT_OWN, 0)                                                       \
    X(IMPL_HF_PEFT, "impl_hf_peft", "", REPORT_OWN, 0)                                             \
    X(LOSS_EAGER, "loss_eager", "", REPORT_OWN, 0)                                                 \
    X(LOSS_FUSED, "loss_fused", "", REPORT_OWN, 0)                                                 \
    X(GRAD_ON_DEMAND, "grad_on_demand", "", REPORT_OWN, 0)                                         \
    X(GRAD_PERSISTENT, "grad_persistent", "", REPORT_OWN, 0)                                       \
    X(OPTIMIZER_FOREACH, "optimizer_foreach", "", REPORT_OWN, 0)                                   \
    X(OPTIMIZER_FUSED, "optimizer_fused", "", REPORT_OWN, 0)                                       \
    X(OPTIMIZER_SINGLE, "optimizer_single", "", REPORT_OWN, 0)                                     \
    X(PRECISION_MIXED, "precision_mixed", "", REPORT_OWN, 0)                                       \
    X(PRECISION_AUTOCAST, "precision_autocast", "", REPORT_OWN, 0)                                 \
    X(PRECISION_MEGATRON, "precision_megatron", "", REPORT_OWN, 0)                                 \
    X(PRECISION_FROZEN, "precision_frozen", "", REPORT_OWN, 0)                                     \
    X(PRECISION_FP32, "precision_fp32", "", REPORT_OWN, 0)                                         \
    X(MOE_NOTE_DROPLESS, "moe_note_dropless", "top_k experts tokens routed ep worst peak peak_cf", \
      REPORT_OWN, 0)                                                                               \
    X(MOE_NOTE_CAPACITY, "moe_note_capacity", "capacity_factor top_k experts tokens", REPORT_OWN,  \
      0)                                                                                           \
    X(SLIDING_WINDOW_NOTE, "sliding_window_note", "window", REPORT_OWN, 0)                         \
    X(FP8_NOTE_TENSOR, "fp8_note_tensor", "copies fp8_tflops fp8_share", REPORT_OWN, 0)            \
    X(FP8_NOTE_ONE_COPY, "fp8_note_one_copy", "copies fp8_tflops fp8_share", REPORT_OWN, 0)        \
    X(FP8_NOTE_MXFP8, "fp8_note_mxfp8", "copies fp8_tflops fp8_share", REPORT_OWN, 0)              \
    /* the cost model (doc/model.md 12) */                                                         \
    X(COST_NOTE, "cost_note", "gemm tflops gpu_row mamf in_training fixed_us rates", REPORT_OWN,   \
      0)                                                                                           \
    X(COST_RATES, "cost_rates", "hbm_eff hbm link_eff link_gb_s net_eff net_gb_s", REPORT_OWN, 0)  \
    X(COST_STEP_NOTE, "cost_step_note",                                                            \
      "step compute recompute bubble comm dp_exposed dp_hidden rest", REPORT_OWN, 0)               \
    X(COST_STEP_REST, "cost_step_rest", "offload mean_gap worst_gap", REPORT_OWN, 0)               \
    X(COST_RATE_NOTE, "cost_rate_note", "tokens_per_s mfu", REPORT_OWN, 0)                         \
    /* the optimizer and the fine-tuning (doc/model.md 3.5, 3.6) */                                \
    X(OPTIM_ADAMW, "optim_adamw", "", REPORT_OWN, 0)                                               \
    X(OPTIM_ADAMW_BF16, "optim_adamw_bf16", "", REPORT_OWN, 0)                                     \
    X(OPTIM_ADAMW8BIT, "optim_adamw8bit", "", REPORT_OWN, 0)                                       \
    X(OPTIM_SGD, "optim_sgd", "", REPORT_OWN, 0)                                                   \
    X(LORA_TARGETS_QV, "lora_targets_qv", "", REPORT_OWN, 0)                                       \
    X(LORA_TARGETS_ALL, "lora_targets_all", "", REPORT_OWN, 0)                                     \
    X(FINETUNE_FULL, "finetune_full", "", REPORT_OWN, 0)                                           \
    X(FINETUNE_LORA, "finetune_lora", "rank targets", REPORT_OWN, 0)                               \
    X(FINETUNE_LORA_FP32, "finetune_lora_fp32", "rank targets", REPORT_OWN, 0)                     \
    X(FINETUNE_QLORA, "finetune_qlora", "rank targets", REPORT_OWN, 0)                             \
    X(TUNING_NOTE_OPTIMIZER, "tuning_note_optimizer", "optimizer per_param", REPORT_OWN, 0)        \
    X(TUNING_NOTE_LORA, "tuning_note_lora", "adapters optimizer per_param", REPORT_OWN, 0)         \
    X(TUNING_NOTE_QLORA, "tuning_note_qlora", "nf4 fp32 bf16 adapters optimizer per_param",        \
      REPORT_OWN, 0)                                                                               \
    /* the fix */                                                                                  \
    X(FIX_NONE, "fix_none", "", REPORT_OWN, 0)                                                     \
    X(FIX_FLASH, "fix_flash", "", REPORT_OWN, 0)                                                   \
    X(FIX_ZERO1, "fix_zero1", "", REPORT_OWN, 0)                                                   \
    X(FIX_ZERO2, "fix_zero2", "", REPORT_OWN, 0)                                                   \
    X(FIX_MICRO_BATCH, "fix_micro_batch", "", REPORT_OWN, 0)                                       \
    X(FIX_FULL_CKPT, "fix_full_ckpt", "", REPORT_OWN, 0)                                           \
    X(FIX_ZERO3, "fix_zero3", "", REPORT_OWN, 0)                                                   \
    X(FIX_TP, "fix_tp", "", REPORT_OWN, 0)                                                         \
    X(FIX_PP, "fix_pp", "", REPORT_OWN, 0)                                                         \
    X(FIX_OFFLOAD, "fix_offload", "", REPORT_OWN, 0)                                               \
    X(FIX_NOTHING, "fix_nothing", "", REPORT_OWN, 0)                                               \
    X(FIX_LAYOUT, "fix_layout", "", REPORT_OWN, 0)                                                 \
    X(FIX_PLAN_UNCHANGED, "fix_plan_unchanged", "", REPORT_OWN, 0)                                 \
    X(FIX_PLAN_NONE, "fix_plan_none", "", REPORT_OWN, 0)                                           \
    X(COST, "cost", "time parts accumulation thin", REPORT_OWN, 0)                                 \
    X(COST_FITS, "cost_fits", "", REPORT_OWN, 0)                                                   \
    X(COST_LAYOUT, "cost_layout", "step change base", REPORT_OWN, 0)                               \
    X(COST_NO_RUNG, "cost_no_rung", "", REPORT_OWN, 0)                                             \
    X(COST_FREE, "cost_free", "", REPORT_OWN, 0)                                                   \
    X(COST_TIME, "cost_time", "extra share step", REPORT_OWN, 0)                                   \
    X(COST_PARTS, "cost_parts", "list", REPORT_OWN, 0)                                             \
    X(COST_PART_RECOMPUTE, "cost_part_recompute", "time", REPORT_OWN, 0)                           \
    X(COST_PART_ZERO3, "cost_part_zero3", "time", REPORT_OWN, 0)                                   \
    X(COST_PART_TP, "cost_part_tp", "time", REPORT_OWN, 0)                                         \
    X(COST_PART_BUBBLE, "cost_part_bubble", "time", REPORT_OWN, 0)                                 \
    X(COST_PART_COMM, "cost_part_comm", "time", REPORT_OWN, 0)                                     \
    X(COST_PART_OFFLOAD, "cost_part_offload", "time", REPORT_OWN, 0)                               \
    X(COST_ACCUMULATION, "cost_accumulation", "steps", REPORT_OWN, 0)                              \
    X(COST_ACCUMULATION_BATCH, "cost_accumulation_batch", "steps new_batch global_batch per_rank", \
      REPORT_OWN, 0)                                                                               \
    X(COST_THIN, "cost_thin", "tokens min_tokens", REPORT_OWN, 0)                                  \
    X(FIX_SENTENCE_NONE, "fix_sentence_none", "max_micro_batch", REPORT_OWN, 0)                    \
    X(FIX_SENTENCE, "fix_sentence", "fix fix_plan fix_peak fix_micro_batch fix_cost fix_notes",    \
      REPORT_OWN, 0)                                                                               \
    X(FIX_NOTES, "fix_notes", "note", REPORT_OWN, 0)                                               \
    X(FIX_NOTES_BOTH, "fix_notes_both", "adam8 fp8", REPORT_OWN, 0)                                \
    X(FIX_NOTE_ADAM8, "fix_note_adam8", "saving", REPORT_OWN, 0)                                   \
    X(FIX_NOTE_FP8, "fix_note_fp8", "saving step", REPORT_OWN, 0)                                  \
    X(FIX_NOTE_FP8_STEP, "fix_note_fp8_step", "time", REPORT_OWN, 0)                               \
    X(FIX_SENTENCE_NOTHING, "fix_sentence_nothing",                                                \
      "fix_peak gpus_for_states gpu_mem gpus_to_fit", REPORT_OWN, 0)                               \
    X(FIX_SENTENCE_NOTHING_BEYOND, "fix_sentence_nothing_beyond",                                  \
      "fix_peak gpus_for_states gpu_mem gpus_cap", REPORT_OWN, 0)                                  \
    X(FIX_SENTENCE_NOTHING_ACTS, "fix_sentence_nothing_acts",                                      \
      "fix_peak gpus_here gpu_mem gpus_to_fit", REPORT_OWN, 0)                                     \
    X(FIX_SENTENCE_NOTHING_ACTS_BEYOND, "fix_sentence_nothing_acts_beyond",                        \
      "fix_peak gpus_here gpu_mem gpus_cap", REPORT_OWN, 0)                                        \
    X(FIX_GPUS_ONE, "fix_gpus_one", "", REPORT_OWN, 0)                                             \
    X(FIX_GPUS_MANY, "fix_gpus_many", "n", REPORT_OWN, 0)                                          \
    /* the rungs of the ladder, under the bars of the fit chart and in the ladder table */         \
    X(RUNG_FLASH, "rung_flash", "", REPORT_OWN, 0)                                                 \
    X(RUNG_ZERO1, "rung_zero1", "", REPORT_OWN, 0)                                                 \
    X(RUNG_ZERO2, "rung_zero2", "", REPORT_OWN, 0)                                                 \
    X(RUNG_MICRO_BATCH, "rung_micro_batch", "b", REPORT_OWN, 0)                                    \
    X(RUNG_FULL_CKPT, "rung_full_ckpt", "", REPORT_OWN, 0)                                         \
    X(RUNG_ZERO3, "rung_zero3", "", REPORT_OWN, 0)                                                 \
    X(RUNG_TP, "rung_tp", "tp dp", REPORT_OWN, 0)                                                  \
    X(RUNG_PP, "rung_pp", "pp dp", REPORT_OWN, 0)                                                  \
    X(RUNG_OFFLOAD, "rung_offload", "", REPORT_OWN, 0)                                             \
    /* the formula of one layer's activations */                                                   \
    X(ACT_FORMULA, "act_formula", "linear core", REPORT_OWN, 0)                                    \
    X(ACT_FORMULA_TP, "act_formula_tp", "linear core", REPORT_OWN, 0)                              \
    X(ACT_FORMULA_TP_SP, "act_formula_tp_sp", "linear core", REPORT_OWN, 0)                        \
    X(ACT_FORMULA_KEPT, "act_formula_kept", "sbh", REPORT_OWN, 0)                                  \
    X(ACT_FORMULA_STEP, "act_formula_step", "sbh", REPORT_OWN, 0)                                  \
    /* @table config */                                                                            \
    X(CONFIG_COLUMNS, "config_columns", "", REPORT_SC, 4)                                          \
    X(CONFIG_MODEL_LABELS, "config_model_labels", "", REPORT_SC, 5)                                \
    X(CONFIG_TRAINING_LABELS, "config_training_labels", "", REPORT_SC, 6)                          \
    X(CONFIG_MODEL, "config_model", "model_name", REPORT_SC, 0)                                    \
    X(CONFIG_MODEL_CUSTOM, "config_model_custom", "", REPORT_SC, 0)                                \
    X(CONFIG_SHAPE, "config_shape", "", REPORT_SC, 0)                                              \
    X(CONFIG_SHAPE_GQA, "config_shape_gqa", "", REPORT_SC, 0)                                      \
    X(CONFIG_SHAPE_MLA, "config_shape_mla", "", REPORT_SC, 0)                                      \
    X(CONFIG_MLP, "config_mlp", "dropout positions", REPORT_SC, 0)                                 \
    X(CONFIG_MLP_MOE, "config_mlp_moe", "shared", REPORT_SC, 0)                                    \
    X(CONFIG_SHARED, "config_shared", "", REPORT_SC, 0)                                            \
    X(CONFIG_DENSE_LABEL, "config_dense_label", "", REPORT_SC, 0)                                  \
    X(CONFIG_DENSE_LAYERS, "config_dense_layers", "", REPORT_SC, 0)                                \
    X(CONFIG_DROPOUT, "config_dropout", "", REPORT_SC, 0)                                          \
    X(CONFIG_NO_DROPOUT, "config_no_dropout", "", REPORT_SC, 0)                                    \
    X(CONFIG_POSITIONS, "config_positions", "", REPORT_SC, 0)                                      \
    X(CONFIG_VOCAB_TIED, "config_vocab_tied", "", REPORT_SC, 0)                                    \
    X(CONFIG_VOCAB_UNTIED, "config_vocab_untied", "", REPORT_SC, 0)                                \
    X(CONFIG_PARAMS, "config_params", "mtp", REPORT_SC, 0)                                         \
    X(CONFIG_PARAMS_MOE, "config_params_moe", "mtp", REPORT_SC, 0)                                 \
    X(CONFIG_MTP, "config_mtp", "", REPORT_SC, 0)                                                  \
    X(CONFIG_TOKENS, "config_tokens", "", REPORT_SC, 0)                                            \
    X(CONFIG_PRECISION, "config_precision", "weight_bytes grad_bytes optimizer_bytes", REPORT_SC,  \
      0)                                                                                           \
    X(CONFIG_PRECISION_FP8, "config_precision_fp8", "weight_bytes grad_bytes optimizer_bytes",     \
      REPORT_SC, 0)                                                                                \
    X(CONFIG_PRECISION_ADAPTERS, "config_precision_adapters",                                      \
      "adapters weight_bytes grad_bytes optimizer_bytes", REPORT_SC, 0)                            \
    X(CONFIG_TUNING_LABELS, "config_tuning_labels", "", REPORT_SC, 2)                              \
    X(CONFIG_ACTIVATIONS, "config_activations", "", REPORT_SC, 0)                                  \
    X(CONFIG_PARALLEL, "config_parallel", "", REPORT_SC, 0)                                        \
    X(CONFIG_GPUS, "config_gpus", "", REPORT_SC, 0)                                                \
    X(CONFIG_RESERVE, "config_reserve", "", REPORT_SC, 0)                                          \
    /* @table verdict */                                                                           \
    X(VERDICT_FITS, "verdict_fits", "", REPORT_SC, 0)                                              \
    X(VERDICT_OOM, "verdict_oom", "", REPORT_SC, 0)                                                \
    X(VERDICT_BODY_FITS, "verdict_body_fits", "", REPORT_SC, 0)                                    \
    X(VERDICT_BODY_OOM, "verdict_body_oom", "", REPORT_SC, 0)                                      \
    X(VERDICT_STEP_FITS, "verdict_step_fits", "", REPORT_SC, 0)                                    \
    X(VERDICT_STEP_OOM, "verdict_step_oom", "", REPORT_SC, 0)                                      \
    X(VERDICT_STEP_BODY_FITS, "verdict_step_body_fits", "", REPORT_SC, 0)                          \
    X(VERDICT_STEP_BODY_OOM, "verdict_step_body_oom", "", REPORT_SC, 0)                            \
    /* @table terms */                                                                             \
    X(TERMS_COLUMNS, "terms_columns", "", REPORT_SC, 5)                                            \
    X(TERMS_ROWS, "terms_rows", "", REPORT_SC, 8)                                                  \
    X(TERMS_WEIGHTS, "terms_weights", "per_param stage_params", REPORT_SC, 0)                      \
    X(TERMS_WEIGHTS_SHARDED, "terms_weights_sharded", "per_param stage_params over", REPORT_SC, 0) \
    X(TERMS_WEIGHTS_FP8, "terms_weights_fp8", "weights copies", REPORT_SC, 0)                      \
    X(TERMS_WEIGHTS_MOE, "terms_weights_moe", "per_param dense routed over", REPORT_SC, 0)         \
    X(TERMS_WEIGHTS_MOE_SHARDED, "terms_weights_moe_sharded", "per_param dense routed over",       \
      REPORT_SC, 0)                                                                                \
    X(TERMS_MOE_SHARDED, "terms_moe_sharded", "per_param over", REPORT_SC, 0)                      \
    X(TERMS_GRADS, "terms_grads", "per_param", REPORT_SC, 0)                                       \
    X(TERMS_GRADS_SHARDED, "terms_grads_sharded", "per_param over", REPORT_SC, 0)                  \
    X(TERMS_OPTIMIZER, "terms_optimizer", "per_param", REPORT_SC, 0)                               \
    X(TERMS_OPTIMIZER_SHARDED, "terms_optimizer_sharded", "per_param over", REPORT_SC, 0)          \
    X(TERMS_OPTIMIZER_OFFLOADED, "terms_optimizer_offloaded", "per_param", REPORT_SC, 0)           \
    X(TERMS_WEIGHTS_LORA, "terms_weights_lora", "frozen per_param adapters", REPORT_SC, 0)         \
    X(TERMS_WEIGHTS_LORA_SHARDED, "terms_weights_lora_sharded", "frozen per_param adapters over",  \
      REPORT_SC, 0)                                                                                \
    X(TERMS_GRADS_LORA, "terms_grads_lora", "per_param", REPORT_SC, 0)                             \
    X(TERMS_GRADS_LORA_SHARDED, "terms_grads_lora_sharded", "per_param over", REPORT_SC, 0)        \
    X(TERMS_OPTIMIZER_LORA, "terms_optimizer_lora", "per_param", REPORT_SC, 0)                     \
    X(TERMS_OPTIMIZER_LORA_SHARDED, "terms_optimizer_lora_sharded", "per_param over", REPORT_SC,   \
      0)                                                                                           \
    X(TERMS_OPTIMIZER_LORA_OFFLOADED, "terms_optimizer_lora_offloaded", "per_param", REPORT_SC, 0) \
    X(TERMS_MOE_ROWS, "terms_moe_rows", "", REPORT_SC, 2)                                          \
    X(TERMS_DENSE, "terms_dense", "bytes tp", REPORT_SC, 0)                                        \
    X(TERMS_EXPERTS, "terms_experts", "bytes expert_group sharding", REPORT_SC, 0)                 \
    X(TERMS_ZERO_EDP, "terms_zero_edp", "n", REPORT_OWN, 0)                                        \
    X(TERMS_ACT_LAYER, "terms_act_layer", "formula", REPORT_SC, 0)                                 \
    X(TERMS_STORED, "terms_stored", "", REPORT_SC, 0)                                              \
    X(TERMS_STORED_PP, "terms_stored_pp", "m", REPORT_SC, 0)                                       \
    X(TERMS_STORED_CKPT, "terms_stored_ckpt", "k c", REPORT_SC, 0)                                 \
    X(TERMS_STORED_CKPT_PP, "terms_stored_ckpt_pp", "m k c", REPORT_SC, 0)                         \
    X(TERMS_STORED_CKPT_OFFLOADED, "terms_stored_ckpt_offloaded", "k c", REPORT_SC, 0)             \
    X(TERMS_STORED_VPP, "terms_stored_vpp", "m", REPORT_SC, 0)                                     \
    X(TERMS_STORED_CKPT_VPP, "terms_stored_ckpt_vpp", "m k c", REPORT_SC, 0)                       \
    X(TERMS_STORED_KINDS, "terms_stored_kinds", "n_dense n_moe a_dense", REPORT_SC, 0)             \
    X(TERMS_STORED_RING, "terms_stored_ring", "stored ring", REPORT_SC, 0)                         \
    X(TERMS_LOGITS, "terms_logits", "", REPORT_SC, 0)                                              \
    X(TERMS_LOGITS_TP, "terms_logits_tp", "", REPORT_SC, 0)                                        \
    X(TERMS_LOGITS_CP, "terms_logits_cp", "", REPORT_SC, 0)                                        \
    X(TERMS_LOGITS_MTP, "terms_logits_mtp", "", REPORT_SC, 0)                                      \
    X(TERMS_LOGITS_ELSEWHERE, "terms_logits_elsewhere", "", REPORT_SC, 0)                          \
    X(TERMS_PEAK, "terms_peak", "", REPORT_SC, 0)                                                  \
    X(TERMS_PEAK_STEP, "terms_peak_step", "", REPORT_SC, 0)                                        \
    X(TERMS_LESSON_ROW, "terms_lesson_row", "", REPORT_SC, 2)                                      \
    X(TERMS_BUDGET, "terms_budget", "reserve_fraction", REPORT_SC, 0)                              \
    /* @table ladder */                                                                            \
    X(LADDER_COLUMNS, "ladder_columns", "", REPORT_SC, 6)                                          \
    X(LADDER_BASE, "ladder_base", "", REPORT_SC, 0)                                                \
    X(LADDER_YES, "ladder_yes", "", REPORT_SC, 0)                                                  \
    X(LADDER_NO, "ladder_no", "", REPORT_SC, 0)                                                    \
    X(LADDER_NO_TIME, "ladder_no_time", "", REPORT_SC, 0)                                          \
    X(LADDER_THIN, "ladder_thin", "time", REPORT_SC, 0)                                            \
    /* @table microbatch */                                                                        \
    X(MICROBATCH_COLUMNS, "microbatch_columns", "", REPORT_SC, 4)                                  \
    X(MICROBATCH_NONE, "microbatch_none", "", REPORT_SC, 0)                                        \
    /* the charts */                                                                               \
    X(CHART_FIT, "chart_fit", "", REPORT_SC, 0)                                                    \
    X(BAR_BASE, "bar_base", "", REPORT_SC, 0)                                                      \
    X(BAR_RUNG, "bar_rung", "rung", REPORT_SC, 0)                                                  \
    X(BAR_BATCH, "bar_batch", "b", REPORT_SC, 0)                                                   \
    X(CHART_STEP, "chart_step", "", REPORT_SC, 0)                                                  \
    X(CHART_STEP_NO_CKPT, "chart_step_no_ckpt", "", REPORT_SC, 0)                                  \
    X(CHART_STEP_CKPT_EVERY_LAYER, "chart_step_ckpt_every_layer", "", REPORT_SC, 0)                \
    X(CHART_STEP_CKPT, "chart_step_ckpt", "k", REPORT_SC, 0)                                       \
    X(CHART_STEP_PEAK, "chart_step_peak", "heading walk_peak", REPORT_SC, 0)                       \
    X(CHART_STEP_PEAK_EARLY, "chart_step_peak_early", "heading walk_peak", REPORT_SC, 0)           \
    X(CHART_STEP_PEAK_PHASE, "chart_step_peak_phase", "heading walk_peak walk_phase", REPORT_SC,   \
      0)                                                                                           \
    X(CHART_PHASES, "chart_phases", "", REPORT_SC, 0)                                              \
    X(CHART_PHASES_PEAK, "chart_phases_peak", "", REPORT_SC, 0)                                    \
    X(BAR_PHASE_FORWARD, "bar_phase_forward", "", REPORT_SC, 0)                                    \
    X(BAR_PHASE_BACKWARD_START, "bar_phase_backward_start", "", REPORT_SC, 0)                      \
    X(BAR_PHASE_RECOMPUTE, "bar_phase_recompute", "", REPORT_SC, 0)                                \
    X(BAR_PHASE_BACKWARD_END, "bar_phase_backward_end", "", REPORT_SC, 0)                          \
    X(BAR_PHASE_OPTIMIZER, "bar_phase_optimizer", "", REPORT_SC, 0)                                \
    X(BAR_LESSON, "bar_lesson", "", REPORT_SC, 0)                                                  \
    X(CHART_STAGES, "chart_stages", "", REPORT_SC, 0)                                              \
    X(CHART_STAGES_SOME, "chart_stages_some", "", REPORT_SC, 0)                                    \
    X(CHART_STAGES_PEAK, "chart_stages_peak", "", REPORT_SC, 0)                                    \
    X(BAR_STAGE, "bar_stage", "rank layers", REPORT_OWN, 0)                                        \
    X(CHART_KCURVE, "chart_kcurve", "", REPORT_SC, 0)                                              \
    X(CHART_WALK, "chart_walk", "", REPORT_SC, 0)                                                  \
    X(CHART_PARAMS_MOE, "chart_params_moe", "", REPORT_SC, 0)                                      \
    X(CHART_PARAMS, "chart_params", "", REPORT_SC, 0)                                              \
    /* memfit search --report (report_search.h) */                                                 \
    X(SEARCH_TITLE, "search_title", "", REPORT_OWN, 0)                                             \
    X(SEARCH_JOBS_ONE, "search_jobs_one", "n", REPORT_OWN, 0)                                      \
    X(SEARCH_JOBS_MANY, "search_jobs_many", "n", REPORT_OWN, 0)                                    \
    X(SEARCH_INTRO, "search_intro", "jobs unit_note", REPORT_OWN, 0)                               \
    X(SEARCH_SUMMARY_COLUMNS, "search_summary_columns", "", REPORT_OWN, 7)                         \
    X(SEARCH_SUMMARY_NONE, "search_summary_none", "", REPORT_OWN, 0)                               \
    X(SEARCH_LAYOUT, "search_layout", "tp pp vpp cp ep dp zero b", REPORT_OWN, 0)                  \
    X(SEARCH_COST_NOTE, "search_cost_note", "", REPORT_OWN, 0)                                     \
    X(SEARCH_CONFIG_LABELS, "search_config_labels", "", REPORT_OWN, 8)                             \
    X(SEARCH_SHAPE, "search_shape", "layers hidden heads kv_heads vocab", REPORT_OWN, 0)           \
    X(SEARCH_SHAPE_MOE, "search_shape_moe", "layers hidden heads experts top_k", REPORT_OWN, 0)    \
    X(SEARCH_TOKENS, "search_tokens", "seq global_batch", REPORT_OWN, 0)                           \
    X(SEARCH_FP8, "search_fp8", "recipe", REPORT_OWN, 0)                                           \
    X(SEARCH_TRAINING, "search_training", "precision fp8 optimizer finetuning", REPORT_OWN, 0)     \
    X(SEARCH_GPUS, "search_gpus", "hardware per_node", REPORT_OWN, 0)                              \
    X(SEARCH_GPUS_NONE, "search_gpus_none", "gpu gpu_mem per_node", REPORT_OWN, 0)                 \
    X(SEARCH_BUDGET, "search_budget", "budget reserve gpu_mem", REPORT_OWN, 0)                     \
    X(SEARCH_PINNED_NONE, "search_pinned_none", "", REPORT_OWN, 0)                                 \
    X(SEARCH_PINNED, "search_pinned", "list", REPORT_OWN, 0)                                       \
    X(SEARCH_VERDICT, "search_verdict", "gpus tried fit evaluated layout step_time peak budget",   \
      REPORT_OWN, 0)                                                                               \
    X(SEARCH_VERDICT_NONE, "search_verdict_none", "gpus tried evaluated budget", REPORT_OWN, 0)    \
    X(SEARCH_VERDICT_NO_GPUS, "search_verdict_no_gpus", "", REPORT_OWN, 0)                         \
    X(SEARCH_TOP_HEADING, "search_top_heading", "n", REPORT_OWN, 0)                                \
    X(SEARCH_TOP_COLUMNS, "search_top_columns", "", REPORT_OWN, 14)                                \
    X(SEARCH_OFFLOAD_NONE, "search_offload_none", "", REPORT_OWN, 0)                               \
    X(SEARCH_OFFLOAD_OPTIMIZER, "search_offload_optimizer", "", REPORT_OWN, 0)                     \
    X(SEARCH_OFFLOAD_CHECKPOINTS, "search_offload_checkpoints", "", REPORT_OWN, 0)                 \
    X(SEARCH_SCATTER_TITLE, "search_scatter_title", "", REPORT_OWN, 0)                             \
    X(SEARCH_SCATTER_X, "search_scatter_x", "", REPORT_OWN, 0)                                     \
    X(SEARCH_SCATTER_X_LOG, "search_scatter_x_log", "", REPORT_OWN, 0)                             \
    X(SEARCH_SCATTER_Y, "search_scatter_y", "units", REPORT_OWN, 0)                                \
    X(SEARCH_SCATTER_FITS, "search_scatter_fits", "n drawn", REPORT_OWN, 0)                        \
    X(SEARCH_SCATTER_OOM, "search_scatter_oom", "n drawn", REPORT_OWN, 0)                          \
    X(SEARCH_SCATTER_DRAWN, "search_scatter_drawn", "n", REPORT_OWN, 0)                            \
    X(SEARCH_SCATTER_BEST, "search_scatter_best", "step_time peak", REPORT_OWN, 0)                 \
    X(SEARCH_SCATTER_GPU, "search_scatter_gpu", "gpu_mem", REPORT_OWN, 0)                          \
    X(SEARCH_SCATTER_BUDGET, "search_scatter_budget", "reserve budget", REPORT_OWN, 0)             \
    X(SEARCH_SCATTER_CAPTION, "search_scatter_caption", "evaluated tried marks", REPORT_OWN, 0)    \
    X(SEARCH_MAP_TITLE, "search_map_title", "", REPORT_OWN, 0)                                     \
    X(SEARCH_MAP_X, "search_map_x", "", REPORT_OWN, 0)                                             \
    X(SEARCH_MAP_Y, "search_map_y", "", REPORT_OWN, 0)                                             \
    X(SEARCH_MAP_OOM, "search_map_oom", "", REPORT_OWN, 0)                                         \
    X(SEARCH_MAP_CAPTION, "search_map_caption", "oom left_out", REPORT_OWN, 0)                     \
    X(SEARCH_MAP_LEFT_OUT, "search_map_left_out", "n max", REPORT_OWN, 0)                          \
    X(SEARCH_CURVE_TITLE, "search_curve_title", "", REPORT_OWN, 0)                                 \
    X(SEARCH_CURVE_X, "search_curve_x", "", REPORT_OWN, 0)                                         \
    X(SEARCH_CURVE_Y, "search_curve_y", "", REPORT_OWN, 0)                                         \
    X(SEARCH_CURVE_Y2, "search_curve_y2", "", REPORT_OWN, 0)                                       \
    X(SEARCH_CURVE_STEP, "search_curve_step", "", REPORT_OWN, 0)                                   \
    X(SEARCH_CURVE_RATE, "search_curve_rate", "", REPORT_OWN, 0)                                   \
    X(SEARCH_CURVE_IDEAL, "search_curve_ideal", "gpus", REPORT_OWN, 0)                             \
    X(SEARCH_CURVE_CAPTION, "search_curve_caption", "first last efficiency", REPORT_OWN, 0)

#define REPORT_PHRASE_ENUM(id, name, own, scoped, cells) REPORT_PHRASE_##id,
enum report_phrase { REPORT_PHRASES(REPORT_PHRASE_ENUM) REPORT_PHRASE_COUNT };
#undef REPORT_PHRASE_ENUM

/* The longest cell of a table-row phrase, in bytes (longer ones are cut). */
#define REPORT_CELL_MAX 128

/* The catalogue in force: the shipped phrases, some replaced by a template's. */
struct report_phrases {
    struct template shipped;               /* templates/phrases.tmpl, owned */
    const char *text[REPORT_PHRASE_COUNT]; /* each phrase's text: shipped or an override */
    size_t misses;                         /* placeholders C did not fill (a bug in memfit) */
    char first_miss[128];                  /* "phrase 'x' has no value for '{{y}}'" */
};

/* The list above as template.h wants it; *n is REPORT_PHRASE_COUNT. */
const struct template_phrase *report_phrases_defs(size_t *n);

/* The phrases a template may define, and the names a scoped one may use (report.tmpl's). */
void report_phrases_known(struct template_phrases *known);

void report_phrases_init(struct report_phrases *ph);
void report_phrases_release(struct report_phrases *ph);

/*
 * Parses a catalogue (text[0..len) named file, or the file at path) into ph: only '@phrase'
 * blocks and comments, every phrase defined once. Returns 0, or -1 after reporting every problem
 * into d as "FILE:LINE: ..." (a phrase that is missing: "FILE: ...").
 */
int report_phrases_parse(struct report_phrases *ph, const char *file, const char *text, size_t len,
                         struct diag *d);
int report_phrases_load(struct report_phrases *ph, const char *path, struct diag *d);

/* Lets the phrases that template t defines (parsed with report_phrases_known) replace those in
 * force. t must outlive ph's use. */
void report_phrases_override(struct report_phrases *ph, const struct template *t);

/*
 * Writes phrase id into buf[0..size) (cut at a UTF-8 character boundary), its placeholders
 * filled from the (name, value) string pairs that follow, ended by NULL, and, for a scoped
 * phrase, from vals. A placeholder with no value becomes "?" and is counted in ph->misses.
 */
void report_say(char *buf, size_t size, struct report_phrases *ph, const struct report_values *vals,
                enum report_phrase id, ...);

/*
 * The cells of table-row phrase id, each expanded like report_say (no values of its own), into
 * cells[0..n); n is the phrase's cell count (checked when the catalogue was read).
 */
void report_cells(struct report_phrases *ph, const struct report_values *vals,
                  enum report_phrase id, char (*cells)[REPORT_CELL_MAX], size_t n);

#endif
