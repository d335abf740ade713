/* scenario_csv: see scenario_csv.h. */
#include "input/scenario_csv.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/columns.h"
#include "model/impl.h"

/* The written columns of columns.h (all but model and gpus), in its order. */
#define C_ITEM(id) C_##id,
#define C_ENUM(id, name, written, kind) COLUMN_KEEP_##written(C_ITEM(id))
enum { SCENARIO_COLUMNS(C_ENUM) C_COUNT };
#undef C_ENUM
#undef C_ITEM

_Static_assert(C_COUNT == SCENARIO_CSV_COLUMNS, "one name per column");

#define NAME_ITEM(name) name,
#define NAME_OF(id, name, written, kind) COLUMN_KEEP_##written(NAME_ITEM(name))
static const char *const columns[C_COUNT] = {SCENARIO_COLUMNS(NAME_OF)};
#undef NAME_OF
#undef NAME_ITEM

const char *const *scenario_csv_columns(size_t *n)
{
    *n = C_COUNT;
    return columns;
}

/* The words of config's parsers (config_model.c, config_training.c), indexed by the enum each
 * sets. */
static const char *word(const char *const *words, size_t n, unsigned v)
{
    return v < n ? words[v] : "?";
}

#define WORD(words, v) word(words, sizeof words / sizeof words[0], (unsigned)(v))

const char *scenario_csv_offload(enum offload o)
{
    static const char *const offloads[] = {"none", "optimizer", "checkpoints"};
    return WORD(offloads, o);
}

/* Fills the row's cells as they are written, each into the row's text. */
struct filler {
    struct scenario_csv_row *row;
    size_t used;
};

static void put(struct filler *f, int c, enum scenario_csv_type type, const char *text)
{
    f->row->cell[c] = text;
    f->row->type[c] = type;
}

/* A cell of the row's own text (a name, a number), printf-style. */
static void put_text(struct filler *f, int c, enum scenario_csv_type type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void put_text(struct filler *f, int c, enum scenario_csv_type type, const char *fmt, ...)
{
    char *at = f->row->text + f->used;
    size_t room = sizeof f->row->text - f->used;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(at, room, fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n < room ? (size_t)n : room - 1;
    f->used += len + 1;
    put(f, c, type, at);
}

static void put_u64(struct filler *f, int c, uint64_t v)
{
    put_text(f, c, SCENARIO_CSV_NUMBER, "%" PRIu64, v);
}

static void put_bool(struct filler *f, int c, bool v)
{
    put(f, c, SCENARIO_CSV_BOOL, v ? "yes" : "no");
}

static void put_word(struct filler *f, int c, const char *w)
{
    put(f, c, SCENARIO_CSV_TEXT, w);
}

/* The words past yes of qkv_bias, qk_norm and router_bias (config_model.c reads them). */
static const char *const qkv_bias_words[] = {"all", "sinks"};
static const char *const qk_norm_words[] = {"width"};
static const char *const router_bias_words[] = {"experts"};

/* A boolean with more values (config_parse_level): no and yes as booleans, the others words. */
static void put_level(struct filler *f, int c, unsigned v, const char *const *more)
{
    if (v < 2)
        put_bool(f, c, v == 1);
    else
        put_word(f, c, more[v - 2]);
}

/* The shortest decimal that strtod reads back to v exactly. */
static void put_double(struct filler *f, int c, double v)
{
    char buf[40];
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    put_text(f, c, SCENARIO_CSV_NUMBER, "%s", buf);
}

/* Bytes as GB of 10^9 bytes, exact: the integer part, then up to nine decimals without trailing
 * zeros (config reads it back with nearbyint(GB * 1e9)). */
static void put_gb(struct filler *f, int c, uint64_t bytes)
{
    uint64_t whole = bytes / 1000000000u, frac = bytes % 1000000000u;
    if (frac == 0) {
        put_u64(f, c, whole);
        return;
    }
    char digits[16];
    snprintf(digits, sizeof digits, "%09" PRIu64, frac);
    size_t n = strlen(digits);
    while (n > 1 && digits[n - 1] == '0')
        n--;
    put_text(f, c, SCENARIO_CSV_NUMBER, "%" PRIu64 ".%.*s", whole, (int)n, digits);
}

/* 0 (a default) as an empty cell. */
static void put_u64_or_empty(struct filler *f, int c, uint64_t v)
{
    if (v)
        put_u64(f, c, v);
}

static void model_cells(struct filler *f, const struct scenario *sc)
{
    static const char *const archs[] = {"gpt", "llama"};
    put_word(f, C_ARCH, WORD(archs, sc->arch));
    put_u64(f, C_LAYERS, sc->layers);
    put_u64(f, C_HIDDEN, sc->hidden);
    put_u64(f, C_HEADS, sc->heads);
    put_u64(f, C_KV_HEADS, sc->kv_heads);
    put_u64(f, C_VOCAB, sc->vocab);
    put_u64(f, C_FFN, sc->ffn);
    put_bool(f, C_TIED, sc->tied);
    put_u64(f, C_POSITIONS, sc->positions);
    put_bool(f, C_DROPOUT, sc->dropout);
    if (sc->kv_lora_rank == 0) /* latent attention has widths of its own, and no head_dim */
        put_u64_or_empty(f, C_HEAD_DIM, sc->head_dim);
    put_level(f, C_QKV_BIAS, (unsigned)sc->qkv_bias, qkv_bias_words);
    put_level(f, C_QK_NORM, (unsigned)sc->qk_norm, qk_norm_words);
    put_u64(f, C_LAYER_NORMS, sc->layer_norms ? sc->layer_norms : 2);
    put_u64(f, C_EXPERTS, sc->experts);
    if (sc->experts > 0) { /* the expert columns need experts */
        put_u64(f, C_TOP_K, sc->top_k);
        put_u64(f, C_EXPERT_FFN, sc->expert_ffn);
        put_u64(f, C_SHARED_FFN, sc->shared_ffn);
        put_bool(f, C_SHARED_GATE, sc->shared_gate);
        put_level(f, C_ROUTER_BIAS, (unsigned)sc->router_bias, router_bias_words);
        put_u64(f, C_DENSE_LAYERS, sc->dense_layers);
        if (sc->capacity_factor > 0)
            put_double(f, C_CAPACITY_FACTOR, sc->capacity_factor);
        put_u64_or_empty(f, C_ETP, sc->etp);
        put_u64_or_empty(f, C_MOE_MAX_NODES, sc->moe_max_nodes);
    }
    put_u64(f, C_KV_LORA_RANK, sc->kv_lora_rank);
    if (sc->kv_lora_rank > 0) { /* the latent-attention columns need kv_lora_rank */
        put_u64(f, C_Q_LORA_RANK, sc->q_lora_rank);
        put_u64(f, C_QK_NOPE_DIM, sc->qk_nope_dim);
        put_u64(f, C_QK_ROPE_DIM, sc->qk_rope_dim);
        put_u64(f, C_V_HEAD_DIM, sc->v_head_dim);
    }
}

static void run_cells(struct filler *f, const struct scenario *sc)
{
    static const char *const losses[] = {"eager", "fused"};
    static const char *const buffers[] = {"on_demand", "persistent"};
    static const char *const impls[] = {"foreach", "fused", "single"};
    static const char *const optimizers[] = {"adamw", "adamw-bf16", "adamw8bit", "sgd"};
    static const char *const finetunes[] = {"full", "lora", "qlora"};
    static const char *const targets[] = {"qv", "all-linear"};
    char k[24], modules[96];
    put_u64(f, C_SEQ, sc->seq);
    put_u64(f, C_MICRO_BATCH, sc->micro_batch);
    put_u64_or_empty(f, C_GLOBAL_BATCH, sc->global_batch);
    put_word(f, C_PRECISION, scenario_precision_name(sc->precision));
    put_word(f, C_FP8, scenario_fp8_name(sc->fp8));
    put_word(f, C_ATTENTION, impl_attention_name(sc));
    const char *recompute = scenario_recompute_name(sc, k, sizeof k);
    put_text(f, C_RECOMPUTE, SCENARIO_CSV_TEXT, "%s", recompute);
    put_u64_or_empty(f, C_RECOMPUTE_LAYERS, sc->recompute_layers);
    if (*scenario_recompute_modules_name(sc, modules, sizeof modules)) /* empty: core_attn */
        put_text(f, C_RECOMPUTE_MODULES, SCENARIO_CSV_TEXT, "%s", modules);
    put_u64(f, C_DP, sc->dp);
    put_u64(f, C_TP, sc->tp);
    put_u64(f, C_PP, sc->pp);
    put_u64(f, C_VPP, sc->vpp ? sc->vpp : 1);
    put_u64_or_empty(f, C_FIRST_STAGE_LAYERS, sc->first_stage_layers);
    put_u64_or_empty(f, C_LAST_STAGE_LAYERS, sc->last_stage_layers);
    put_word(f, C_SCHEDULE, scenario_schedule_name(sc->schedule));
    put_u64(f, C_CP, sc->cp ? sc->cp : 1);
    put_bool(f, C_SP, sc->sp);
    put_u64(f, C_EP, sc->ep ? sc->ep : 1);
    put_u64(f, C_ZERO, sc->zero);
    put_u64_or_empty(f, C_ZERO_GROUP, sc->zero_group);
    put_word(f, C_OFFLOAD, scenario_csv_offload(sc->offload));
    put_word(f, C_LOSS, WORD(losses, sc->loss));
    put_word(f, C_GRAD_BUFFER, WORD(buffers, sc->grad_buffer));
    put_word(f, C_OPTIMIZER_IMPL, WORD(impls, sc->optimizer_impl));
    put_word(f, C_OPTIMIZER, WORD(optimizers, sc->optimizer));
    put_word(f, C_FINETUNE, WORD(finetunes, sc->finetune));
    if (sc->finetune != FINETUNE_FULL) { /* the adapter columns need adapters */
        put_u64(f, C_LORA_RANK, sc->lora_rank);
        put_word(f, C_LORA_TARGETS, WORD(targets, sc->lora_targets));
    }
}

void scenario_csv_row(const struct scenario *sc, struct scenario_csv_row *out)
{
    struct filler f = {out, 0};
    for (int c = 0; c < C_COUNT; c++)
        put(&f, c, SCENARIO_CSV_EMPTY, "");
    put_text(&f, C_NAME, SCENARIO_CSV_TEXT, "%s", sc->name);
    if (sc->model_preset[0] && !sc->model_file)
        put_text(&f, C_MODEL, SCENARIO_CSV_TEXT, "%s", sc->model_preset);
    model_cells(&f, sc);
    run_cells(&f, sc);
    if (sc->gpu_preset[0])
        put_text(&f, C_GPU, SCENARIO_CSV_TEXT, "%s", sc->gpu_preset);
    put_gb(&f, C_GPU_MEM_GB, sc->gpu_mem_bytes);
    put_double(&f, C_RESERVE, sc->reserve);
    put_u64(&f, C_GPUS_PER_NODE, sc->gpus_per_node);
    put_word(&f, C_IMPL, impl_name(sc->impl));
    put_u64_or_empty(&f, C_MTP_LAYERS, sc->mtp_layers);
    put_bool(&f, C_EMBEDDING_IN_SPLIT, sc->embedding_in_split);
    put_bool(&f, C_LOSS_IN_SPLIT, sc->loss_in_split);
}
