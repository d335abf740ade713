/*
 * columns: the columns of the scenario CSV (doc/memfit.1, THE SCENARIO CSV; doc/model.md section
 * 13.1), named once, in the order config reads and lists them. Each module makes its own enum
 * and names from this list, keeping the columns it deals with:
 * - config (config_internal.h): every column (enum col);
 * - scenario_csv.c: the columns a scenario is written back with (WRITTEN: all but gpus, which
 *   dp tp pp cp replace);
 * - modeljson.c: the model's shape (MODEL: arch to v_head_dim, what a model preset or a
 *   config.json sets).
 *
 * Each column is X(ID, its name as a string, WRITTEN or UNWRITTEN, MODEL or RUN), in order.
 */
#ifndef MEMFIT_COLUMNS_H
#define MEMFIT_COLUMNS_H

#define SCENARIO_COLUMNS(X)                                                                        \
    X(NAME, "name", WRITTEN, RUN)                                                                  \
    X(MODEL, "model", WRITTEN, RUN)                                                                \
    X(ARCH, "arch", WRITTEN, MODEL)                                                                \
    X(LAYERS, "layers", WRITTEN, MODEL)                                                            \
    X(HIDDEN, "hidden", WRITTEN, MODEL)                                                            \
    X(HEADS, "heads", WRITTEN, MODEL)                                                              \
    X(KV_HEADS, "kv_heads", WRITTEN, MODEL)                                                        \
    X(VOCAB, "vocab", WRITTEN, MODEL)                                                              \
    X(FFN, "ffn", WRITTEN, MODEL)                                                                  \
    X(TIED, "tied", WRITTEN, MODEL)                                                                \
    X(POSITIONS, "positions", WRITTEN, MODEL)                                                      \
    X(DROPOUT, "dropout", WRITTEN, MODEL)                                                          \
    X(HEAD_DIM, "head_dim", WRITTEN, MODEL)                                                        \
    X(QKV_BIAS, "qkv_bias", WRITTEN, MODEL)                                                        \
    X(QK_NORM, "qk_norm", WRITTEN, MODEL)                                                          \
    X(LAYER_NORMS, "layer_norms", WRITTEN, MODEL)                                                  \
    X(EXPERTS, "experts", WRITTEN, MODEL)                                                          \
    X(TOP_K, "top_k", WRITTEN, MODEL)                                                              \
    X(EXPERT_FFN, "expert_ffn", WRITTEN, MODEL)                                                    \
    X(SHARED_FFN, "shared_ffn", WRITTEN, MODEL)                                                    \
    X(SHARED_GATE, "shared_gate", WRITTEN, MODEL)                                                  \
    X(ROUTER_BIAS, "router_bias", WRITTEN, MODEL)                                                  \
    X(DENSE_LAYERS, "dense_layers", WRITTEN, MODEL)                                                \
    X(Q_LORA_RANK, "q_lora_rank", WRITTEN, MODEL)                                                  \
    X(KV_LORA_RANK, "kv_lora_rank", WRITTEN, MODEL)                                                \
    X(QK_NOPE_DIM, "qk_nope_dim", WRITTEN, MODEL)                                                  \
    X(QK_ROPE_DIM, "qk_rope_dim", WRITTEN, MODEL)                                                  \
    X(V_HEAD_DIM, "v_head_dim", WRITTEN, MODEL)                                                    \
    X(SEQ, "seq", WRITTEN, RUN)                                                                    \
    X(MICRO_BATCH, "micro_batch", WRITTEN, RUN)                                                    \
    X(GLOBAL_BATCH, "global_batch", WRITTEN, RUN)                                                  \
    X(PRECISION, "precision", WRITTEN, RUN)                                                        \
    X(FP8, "fp8", WRITTEN, RUN)                                                                    \
    X(ATTENTION, "attention", WRITTEN, RUN)                                                        \
    X(RECOMPUTE, "recompute", WRITTEN, RUN)                                                        \
    X(RECOMPUTE_LAYERS, "recompute_layers", WRITTEN, RUN)                                          \
    X(RECOMPUTE_MODULES, "recompute_modules", WRITTEN, RUN)                                        \
    X(CAPACITY_FACTOR, "capacity_factor", WRITTEN, RUN)                                            \
    X(DP, "dp", WRITTEN, RUN)                                                                      \
    X(TP, "tp", WRITTEN, RUN)                                                                      \
    X(PP, "pp", WRITTEN, RUN)                                                                      \
    X(VPP, "vpp", WRITTEN, RUN)                                                                    \
    X(FIRST_STAGE_LAYERS, "first_stage_layers", WRITTEN, RUN)                                      \
    X(LAST_STAGE_LAYERS, "last_stage_layers", WRITTEN, RUN)                                        \
    X(SCHEDULE, "schedule", WRITTEN, RUN)                                                          \
    X(CP, "cp", WRITTEN, RUN)                                                                      \
    X(SP, "sp", WRITTEN, RUN)                                                                      \
    X(EP, "ep", WRITTEN, RUN)                                                                      \
    X(ETP, "etp", WRITTEN, RUN)                                                                    \
    X(MOE_MAX_NODES, "moe_max_nodes", WRITTEN, RUN)                                                \
    X(ZERO, "zero", WRITTEN, RUN)                                                                  \
    X(ZERO_GROUP, "zero_group", WRITTEN, RUN)                                                      \
    X(OFFLOAD, "offload", WRITTEN, RUN)                                                            \
    X(LOSS, "loss", WRITTEN, RUN)                                                                  \
    X(GRAD_BUFFER, "grad_buffer", WRITTEN, RUN)                                                    \
    X(OPTIMIZER_IMPL, "optimizer_impl", WRITTEN, RUN)                                              \
    X(OPTIMIZER, "optimizer", WRITTEN, RUN)                                                        \
    X(FINETUNE, "finetune", WRITTEN, RUN)                                                          \
    X(LORA_RANK, "lora_rank", WRITTEN, RUN)                                                        \
    X(LORA_TARGETS, "lora_targets", WRITTEN, RUN)                                                  \
    X(GPU, "gpu", WRITTEN, RUN)                                                                    \
    X(GPU_MEM_GB, "gpu_mem_gb", WRITTEN, RUN)                                                      \
    X(RESERVE, "reserve", WRITTEN, RUN)                                                            \
    X(GPUS_PER_NODE, "gpus_per_node", WRITTEN, RUN)                                                \
    X(IMPL, "impl", WRITTEN, RUN)                                                                  \
    X(MTP_LAYERS, "mtp_layers", WRITTEN, RUN)                                                      \
    X(EMBEDDING_IN_SPLIT, "embedding_in_split", WRITTEN, RUN)                                      \
    X(LOSS_IN_SPLIT, "loss_in_split", WRITTEN, RUN)                                                \
    X(GPUS, "gpus", UNWRITTEN, RUN)

/* The columns memfit search writes around a scenario's (doc/memfit.1, memfit search): a row of
 * its CSV is a scenario, so config reads them and ignores these, and `memfit search ... |
 * memfit report -` works as it is. */
#define SEARCH_RESULT_COLUMNS(X)                                                                   \
    X("job")                                                                                       \
    X("rank")                                                                                      \
    X("step_time_s")                                                                               \
    X("layouts_tried")                                                                             \
    X("layouts_fit")                                                                               \
    X("peak_bytes")                                                                                \
    X("budget_bytes")                                                                              \
    X("tokens_per_s")                                                                              \
    X("days")                                                                                      \
    X("gpu_hours")                                                                                 \
    X("cost")

/* COLUMN_KEEP_<kind>(x): x for the kinds a module keeps, nothing for the others. Paste the
 * column's WRITTEN or MODEL argument to `COLUMN_KEEP_` and define the other kinds away. */
#define COLUMN_KEEP_WRITTEN(x) x
#define COLUMN_KEEP_UNWRITTEN(x)
#define COLUMN_KEEP_MODEL(x) x
#define COLUMN_KEEP_RUN(x)

#endif
