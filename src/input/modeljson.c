/* modeljson: see modeljson.h. */
#include "input/modeljson.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "base/suggest.h"
#include "input/columns.h"

/* ---- the columns ---- */

/* The model's columns of columns.h (arch to v_head_dim), in its order. */
#define C_ITEM(id) C_##id,
#define C_ENUM(id, name, written, kind) COLUMN_KEEP_##kind(C_ITEM(id))
enum mcol { SCENARIO_COLUMNS(C_ENUM) C_COUNT };
#undef C_ENUM
#undef C_ITEM
_Static_assert(C_COUNT == MODELJSON_COLUMNS, "one name per column");

#define NAME_ITEM(name) name,
#define NAME_OF(id, name, written, kind) COLUMN_KEEP_##kind(NAME_ITEM(name))
static const char *const column_names[MODELJSON_COLUMNS] = {SCENARIO_COLUMNS(NAME_OF)};
#undef NAME_OF
#undef NAME_ITEM

const char *const *modeljson_columns(size_t *n)
{
    *n = MODELJSON_COLUMNS;
    return column_names;
}

/* ---- the mapping (doc/model.md section 13.3) ---- */

/* How the layers of a type are built. */
enum family {
    FAM_GPT2,  /* GPT-2: LayerNorm, GeLU MLP, biases everywhere, learned positions */
    FAM_DENSE, /* llama-style: RMSNorm, gated MLP of intermediate_size, rotary */
    FAM_MOE,   /* llama-style attention, MoE layers of `experts` gated experts */
    FAM_MLA,   /* DeepSeek-V3: latent attention, leading dense layers, then MoE layers */
};

/* What the modeling file builds whatever the config says, and the fields it reads that memfit
 * checks. */
enum {
    F_TIED = 1 << 0,           /* tie_word_embeddings defaults to true (else false) */
    F_QKV_BIAS = 1 << 1,       /* biases on q, k and v, none on o */
    F_QKV_BIAS_FIELD = 1 << 2, /* ... as the field qkv_bias says (default true) */
    F_QK_NORM = 1 << 3,        /* an RMSNorm of head_dim on each head of q and of k */
    F_NORMS4 = 1 << 4,         /* four norms a layer: before and after attention and MLP */
    F_ATTN_BIAS = 1 << 5,      /* reads attention_bias: biases on q, k, v and o (not modelled) */
    F_MLP_BIAS = 1 << 6,       /* reads mlp_bias: biases on the MLP (not modelled) */
    F_SHARED_GATE = 1 << 7,    /* a shared expert of shared_expert_intermediate_size (default
                                * 5632) with a sigmoid gate Linear(h, 1) */
    F_SPARSE_STEP = 1 << 8,    /* decoder_sparse_step (default 1) and mlp_only_layers (default []):
                                * MoE every step-th layer, dense MLPs at the listed layers */
    F_RESID_DROPOUT = 1 << 9,  /* reads resid_pdrop and embd_pdrop (default 0; not modelled) */
    F_QK_NORM_WIDTH = 1 << 10, /* an RMSNorm over all of q (a d_h) and one over all of k (g d_h) */
    F_SINKS = 1 << 11,         /* attention_bias (default true) on q, k, v and o, a sink logit per
                                * head, biases on the router and on every expert (gpt-oss) */
    F_TEXT_CONFIG = 1 << 12,   /* the model is the object text_config (multimodal; the vision tower
                                * not counted), its missing sizes the text class's defaults */
};

/*
 * One row per model_type. `follows`: the transformers file whose modules the columns count
 * (src/transformers/models/...); the defaults are those of the type's configuration class in the
 * same folder (configuration_*.py). Required everywhere: the sizes - num_hidden_layers,
 * hidden_size, num_attention_heads, vocab_size, intermediate_size (GPT-2: n_layer, n_embd, n_head,
 * vocab_size) and, with experts, their count, width and num_experts_per_tok.
 */
struct mj_type {
    const char *model_type;
    const char *follows;
    enum family family;
    unsigned flags;
    uint64_t kv_heads; /* num_key_value_heads when missing; 0: = num_attention_heads (also null) */
    uint64_t head_dim; /* head_dim when missing; 0: hidden_size / num_attention_heads */
    const char *experts, *expert_ffn; /* MoE: the fields of E and of one expert's width f_e */
    /* Latent attention (FAM_MLA): the defaults of n_shared_experts and first_k_dense_replace, and
     * whether topk_method noaux_tc (the score bias) is known, and the default. */
    uint64_t mla_shared, mla_dense;
    bool noaux_tc;
};

static const struct mj_type types[] = {
    {.model_type = "gpt2", .follows = "gpt2/modeling_gpt2.py", .family = FAM_GPT2, .flags = F_TIED},
    {.model_type = "llama",
     .follows = "llama/modeling_llama.py",
     .family = FAM_DENSE,
     .flags = F_ATTN_BIAS | F_MLP_BIAS},
    {.model_type = "mistral",
     .follows = "mistral/modeling_mistral.py",
     .family = FAM_DENSE,
     .kv_heads = 8},
    {.model_type = "mixtral",
     .follows = "mixtral/modeling_mixtral.py",
     .family = FAM_MOE,
     .kv_heads = 8,
     .experts = "num_local_experts",
     .expert_ffn = "intermediate_size"},
    {.model_type = "qwen2",
     .follows = "qwen2/modeling_qwen2.py",
     .family = FAM_DENSE,
     .flags = F_QKV_BIAS,
     .kv_heads = 32},
    {.model_type = "qwen2_moe",
     .follows = "qwen2_moe/modeling_qwen2_moe.py",
     .family = FAM_MOE,
     .flags = F_QKV_BIAS | F_QKV_BIAS_FIELD | F_SHARED_GATE | F_SPARSE_STEP,
     .kv_heads = 16,
     .experts = "num_experts",
     .expert_ffn = "moe_intermediate_size"},
    {.model_type = "qwen3",
     .follows = "qwen3/modeling_qwen3.py",
     .family = FAM_DENSE,
     .flags = F_QK_NORM | F_ATTN_BIAS,
     .kv_heads = 32,
     .head_dim = 128},
    {.model_type = "qwen3_moe",
     .follows = "qwen3_moe/modeling_qwen3_moe.py",
     .family = FAM_MOE,
     .flags = F_QK_NORM | F_ATTN_BIAS | F_SPARSE_STEP,
     .kv_heads = 4,
     .experts = "num_experts",
     .expert_ffn = "moe_intermediate_size"},
    {.model_type = "gemma",
     .follows = "gemma/modeling_gemma.py",
     .family = FAM_DENSE,
     .flags = F_TIED | F_ATTN_BIAS,
     .kv_heads = 16,
     .head_dim = 256},
    {.model_type = "gemma2",
     .follows = "gemma2/modeling_gemma2.py",
     .family = FAM_DENSE,
     .flags = F_TIED | F_NORMS4 | F_ATTN_BIAS,
     .kv_heads = 4,
     .head_dim = 256},
    {.model_type = "deepseek_v3",
     .follows = "deepseek_v3/modeling_deepseek_v3.py",
     .family = FAM_MLA,
     .flags = F_ATTN_BIAS,
     .experts = "n_routed_experts",
     .expert_ffn = "moe_intermediate_size",
     .mla_shared = 1,
     .mla_dense = 3,
     .noaux_tc = true},
    {.model_type = "deepseek_v2",
     .follows = "deepseek_v2/modeling_deepseek_v2.py",
     .family = FAM_MLA,
     .flags = F_ATTN_BIAS | F_MLP_BIAS,
     .experts = "n_routed_experts",
     .expert_ffn = "moe_intermediate_size",
     .mla_shared = 2,
     .mla_dense = 0},
    {.model_type = "phi3",
     .follows = "phi3/modeling_phi3.py",
     .family = FAM_DENSE,
     .flags = F_RESID_DROPOUT},
    {.model_type = "gemma3_text",
     .follows = "gemma3/modeling_gemma3.py",
     .family = FAM_DENSE,
     .flags = F_TIED | F_QK_NORM | F_NORMS4 | F_ATTN_BIAS,
     .kv_heads = 4,
     .head_dim = 256},
    {.model_type = "gemma3",
     .follows = "gemma3/modeling_gemma3.py",
     .family = FAM_DENSE,
     .flags = F_TIED | F_QK_NORM | F_NORMS4 | F_ATTN_BIAS | F_TEXT_CONFIG,
     .kv_heads = 4,
     .head_dim = 256},
    {.model_type = "olmo2",
     .follows = "olmo2/modeling_olmo2.py",
     .family = FAM_DENSE,
     .flags = F_QK_NORM_WIDTH | F_ATTN_BIAS},
    {.model_type = "gpt_oss",
     .follows = "gpt_oss/modeling_gpt_oss.py",
     .family = FAM_MOE,
     .flags = F_SINKS,
     .kv_heads = 8,
     .head_dim = 64,
     .experts = "num_local_experts",
     .expert_ffn = "intermediate_size"},
    {.model_type = "granite",
     .follows = "granite/modeling_granite.py",
     .family = FAM_DENSE,
     .flags = F_ATTN_BIAS | F_MLP_BIAS},
};
#define N_TYPES (sizeof types / sizeof types[0])

/* Other names of a field: the attribute_map of the configuration class. */
static const struct {
    const char *model_type, *field, *alias;
} aliases[] = {
    {"gpt2", "n_embd", "hidden_size"},
    {"gpt2", "n_layer", "num_hidden_layers"},
    {"gpt2", "n_head", "num_attention_heads"},
    {"gpt2", "n_positions", "max_position_embeddings"},
    {"mixtral", "num_local_experts", "num_experts"},
    {"deepseek_v3", "n_routed_experts", "num_local_experts"},
    {"deepseek_v2", "n_routed_experts", "num_experts"},
    {"gpt_oss", "num_local_experts", "num_experts"},
};

/* Gemma3TextConfig's sizes, which a gemma3 text_config may leave out (configuration_gemma3.py). */
static const struct {
    const char *field;
    json_int_t value;
} text_defaults[] = {
    {"vocab_size", 262208},    {"hidden_size", 2304},      {"intermediate_size", 9216},
    {"num_hidden_layers", 26}, {"num_attention_heads", 8},
};

/* Rotary variants: each changes only the angles, no parameter and no tensor memfit counts
 * (transformers modeling_rope_utils.py, ROPE_INIT_FUNCTIONS). */
static const char *const rope_types[] = {"default", "linear",   "dynamic",
                                         "yarn",    "longrope", "llama3"};

/* Attention of a layer (layer_types): a sliding window keeps the same tensors. */
static const char *const layer_types[] = {"full_attention", "sliding_attention"};

const char *const *modeljson_types(size_t *n)
{
    static const char *names[N_TYPES];
    for (size_t i = 0; i < N_TYPES; i++)
        names[i] = types[i].model_type;
    *n = N_TYPES;
    return names;
}

bool modeljson_is_path(const char *cell)
{
    size_t n = strlen(cell);
    return strchr(cell, '/') != NULL || (n >= 5 && strcasecmp(cell + n - 5, ".json") == 0);
}

/* ---- reading fields ---- */

struct mj {
    const json_t *root;
    const struct mj_type *t;
    struct modeljson *out;
    char *err;
    size_t err_size;
};

/* Describes the problem into m->err; returns false. */
static bool fail(struct mj *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool fail(struct mj *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->err, m->err_size, fmt, ap);
    va_end(ap);
    return false;
}

/* s as a message may show it: printable ASCII, any other byte written "\xNN" (the bytes of
 * a name in another script, or of no text at all), at most size - 1 bytes, cut at an escape's
 * boundary. */
static char *shown(const char *s, char *buf, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        bool plain = *p >= 0x20 && *p < 0x7f;
        if (n + (plain ? 1 : 4) >= size)
            break;
        if (plain) {
            buf[n++] = (char)*p;
        } else {
            buf[n++] = '\\';
            buf[n++] = 'x';
            buf[n++] = hex[*p >> 4];
            buf[n++] = hex[*p & 15];
        }
    }
    buf[n] = '\0';
    return buf;
}

/* What a value is, for a message: "a string", "-1", "4096.0", "true". */
static const char *what(const json_t *v, char *buf, size_t size)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        snprintf(buf, size, "%lld", (long long)json_integer_value(v));
        return buf;
    case JSON_REAL:
        snprintf(buf, size, "%g", json_real_value(v));
        if (!strpbrk(buf, ".einf"))
            snprintf(buf + strlen(buf), size - strlen(buf), ".0");
        return buf;
    case JSON_TRUE:
        return "true";
    case JSON_FALSE:
        return "false";
    default:
        return "null";
    }
}

/* The value of a field (or of its alias; *field becomes the name found), NULL when missing. */
static const json_t *field_get(const struct mj *m, const char **field)
{
    const json_t *v = json_object_get(m->root, *field);
    for (size_t i = 0; !v && i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(aliases[i].model_type, m->t->model_type) == 0 &&
            strcmp(aliases[i].field, *field) == 0 &&
            (v = json_object_get(m->root, aliases[i].alias)) != NULL)
            *field = aliases[i].alias;
    return v;
}

enum got { GOT_BAD = -1, GOT_MISSING, GOT_NULL, GOT_VALUE };

/* An integer field, at least 1 (positive) or 0. */
static enum got get_uint(struct mj *m, const char *field, bool positive, uint64_t *out)
{
    const json_t *v = field_get(m, &field);
    if (!v)
        return GOT_MISSING;
    if (json_is_null(v))
        return GOT_NULL;
    if (json_is_integer(v) && json_integer_value(v) >= (positive ? 1 : 0)) {
        *out = (uint64_t)json_integer_value(v);
        return GOT_VALUE;
    }
    char buf[40];
    fail(m, "field '%s' is %s: expected a %s integer", field, what(v, buf, sizeof buf),
         positive ? "positive" : "non-negative");
    return GOT_BAD;
}

/* A size the file must give. */
static bool need_uint(struct mj *m, const char *field, uint64_t *out)
{
    enum got g = get_uint(m, field, true, out);
    if (g == GOT_MISSING)
        fail(m, "field '%s' is missing (required for model_type '%s')", field, m->t->model_type);
    else if (g == GOT_NULL)
        fail(m, "field '%s' is null: expected a positive integer", field);
    return g == GOT_VALUE;
}

#define NULL_IS_BAD UINT64_MAX

/* An integer the file may leave out (if_missing) or set to null (if_null; NULL_IS_BAD: an
 * error, as transformers would fail on None there). */
static bool opt_uint(struct mj *m, const char *field, bool positive, uint64_t if_missing,
                     uint64_t if_null, uint64_t *out)
{
    enum got g = get_uint(m, field, positive, out);
    if (g == GOT_MISSING)
        *out = if_missing;
    if (g == GOT_NULL && if_null == NULL_IS_BAD)
        fail(m, "field '%s' is null: expected a %s integer", field,
             positive ? "positive" : "non-negative");
    else if (g == GOT_NULL)
        *out = if_null;
    return g == GOT_VALUE || g == GOT_MISSING || (g == GOT_NULL && if_null != NULL_IS_BAD);
}

/* A boolean; missing or null: dflt. */
static bool get_bool(struct mj *m, const char *field, bool dflt, bool *out)
{
    const json_t *v = field_get(m, &field);
    char buf[40];
    *out = dflt;
    if (!v || json_is_null(v))
        return true;
    if (!json_is_boolean(v))
        return fail(m, "field '%s' is %s: expected true or false", field, what(v, buf, sizeof buf));
    *out = json_is_true(v);
    return true;
}

/* A number (integer or real); missing or null: 0. */
static bool get_number(struct mj *m, const char *field, double *out)
{
    const json_t *v = field_get(m, &field);
    char buf[40];
    *out = 0;
    if (!v || json_is_null(v))
        return true;
    if (!json_is_number(v))
        return fail(m, "field '%s' is %s: expected a number", field, what(v, buf, sizeof buf));
    *out = json_number_value(v);
    return true;
}

/* A boolean that must not be true: `not_modelled` says what memfit does not model. */
static bool must_be_false(struct mj *m, const char *field, const char *not_modelled)
{
    bool on;
    if (!get_bool(m, field, false, &on))
        return false;
    return !on || fail(m, "field '%s' is true: %s", field, not_modelled);
}

static void set_u(struct mj *m, enum mcol c, uint64_t v)
{
    snprintf(m->out->value[c], MODELJSON_VALUE_MAX, "%llu", (unsigned long long)v);
}

static void set_w(struct mj *m, enum mcol c, const char *word)
{
    snprintf(m->out->value[c], MODELJSON_VALUE_MAX, "%s", word);
}

static void set_b(struct mj *m, enum mcol c, bool v)
{
    set_w(m, c, v ? "yes" : "no");
}

/* ---- checks of every type ---- */

/* One rope parameter object: its rope_type (or legacy type) must be a known variant. Nested
 * objects (parameters per attention type) are checked the same way, one level down. */
static bool check_rope_object(struct mj *m, const char *field, const json_t *o, int depth)
{
    const json_t *ty = json_object_get(o, "rope_type");
    char buf[MODELJSON_TYPE_MAX], list[160];
    if (!ty)
        ty = json_object_get(o, "type");
    if (ty && !json_is_string(ty))
        return fail(m, "field '%s': its rope type is %s: expected a string", field,
                    what(ty, buf, sizeof buf));
    if (ty) {
        for (size_t i = 0; i < sizeof rope_types / sizeof rope_types[0]; i++)
            if (strcmp(json_string_value(ty), rope_types[i]) == 0)
                return true;
        return fail(m, "field '%s': rope type '%s' is not modelled (known: %s)", field,
                    shown(json_string_value(ty), buf, sizeof buf),
                    suggest_join(rope_types, sizeof rope_types / sizeof rope_types[0], ", ", list,
                                 sizeof list));
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)o, key, v) if (depth == 0 && json_is_object(v) &&
                                                 !check_rope_object(m, field, v, 1)) return false;
    return true;
}

/* rope_scaling (older files) and rope_parameters (newer ones). */
static bool check_rope(struct mj *m)
{
    static const char *const fields[] = {"rope_scaling", "rope_parameters"};
    char buf[40];
    for (size_t i = 0; i < 2; i++) {
        const json_t *v = json_object_get(m->root, fields[i]);
        if (!v || json_is_null(v))
            continue;
        if (!json_is_object(v))
            return fail(m, "field '%s' is %s: expected an object", fields[i],
                        what(v, buf, sizeof buf));
        if (!check_rope_object(m, fields[i], v, 0))
            return false;
    }
    return true;
}

/* layer_types: full or sliding-window attention, which keep the same tensors for training (with
 * FlashAttention a window only skips work; plain attention masks the same s x s scores). */
static bool check_layer_types(struct mj *m)
{
    const json_t *v = json_object_get(m->root, "layer_types"), *x;
    char buf[MODELJSON_TYPE_MAX];
    size_t i;
    if (!v || json_is_null(v))
        return true;
    if (!json_is_array(v))
        return fail(m, "field 'layer_types' is %s: expected an array of strings",
                    what(v, buf, sizeof buf));
    json_array_foreach(v, i, x)
    {
        if (!json_is_string(x))
            return fail(m, "field 'layer_types' holds %s: expected strings",
                        what(x, buf, sizeof buf));
        if (strcmp(json_string_value(x), layer_types[0]) != 0 &&
            strcmp(json_string_value(x), layer_types[1]) != 0)
            return fail(m,
                        "field 'layer_types': attention '%s' is not modelled (full_attention and "
                        "sliding_attention are)",
                        shown(json_string_value(x), buf, sizeof buf));
    }
    return true;
}

/* The window of sliding-window attention, when the model uses it: a `sliding_window` size not
 * switched off by `use_sliding_window: false` (Qwen2), or sliding layers in `layer_types`. */
static unsigned long long sliding_window_of(const json_t *root)
{
    const json_t *w = json_object_get(root, "sliding_window");
    const json_t *use = json_object_get(root, "use_sliding_window");
    const json_t *kinds = json_object_get(root, "layer_types"), *x;
    size_t i;
    bool sliding_layer = false;
    if (json_is_array(kinds))
        json_array_foreach(kinds, i, x) sliding_layer =
            sliding_layer ||
            (json_is_string(x) && strcmp(json_string_value(x), "sliding_attention") == 0);
    if (!json_is_integer(w) || json_integer_value(w) <= 0 || (use && json_is_false(use)))
        return sliding_layer ? 1 : 0;
    return (unsigned long long)json_integer_value(w);
}

/* ---- the families ---- */

/* GPT-2 (GPT2Config: n_inner null = 4 n_embd, n_positions 1024, dropouts 0.1, tied). */
static bool map_gpt2(struct mj *m)
{
    static const char *const drops[] = {"resid_pdrop", "embd_pdrop", "attn_pdrop"};
    uint64_t layers, hidden, heads, ffn = 0, positions;
    bool tied;
    if (!need_uint(m, "n_layer", &layers) || !need_uint(m, "n_embd", &hidden) ||
        !need_uint(m, "n_head", &heads) || !opt_uint(m, "n_inner", true, 0, 0, &ffn) ||
        !opt_uint(m, "n_positions", false, 1024, NULL_IS_BAD, &positions) ||
        !get_bool(m, "tie_word_embeddings", true, &tied) ||
        !must_be_false(m, "add_cross_attention", "cross-attention is not modelled"))
        return false;
    bool dropout = false;
    for (size_t i = 0; i < 3; i++) {
        const json_t *v = json_object_get(m->root, drops[i]);
        double p;
        if (!v) /* GPT2Config's default */
            p = 0.1;
        else if (!get_number(m, drops[i], &p))
            return false;
        dropout = dropout || p != 0;
    }
    set_w(m, C_ARCH, "gpt");
    set_u(m, C_LAYERS, layers);
    set_u(m, C_HIDDEN, hidden);
    set_u(m, C_HEADS, heads);
    set_u(m, C_KV_HEADS, heads);
    if (ffn || hidden <= UINT64_MAX / 4) /* else the column's default, 4h, is rejected */
        set_u(m, C_FFN, ffn ? ffn : 4 * hidden);
    set_b(m, C_TIED, tied);
    set_u(m, C_POSITIONS, positions);
    if (!dropout) /* gpt's default is yes */
        set_b(m, C_DROPOUT, false);
    return true;
}

/* mlp_only_layers: dense MLPs at these layers. Only leading ones are modelled: [0, ..., n-1]. */
static bool leading_dense_layers(struct mj *m, uint64_t *n)
{
    const json_t *v = json_object_get(m->root, "mlp_only_layers"), *x;
    char buf[40];
    size_t i;
    *n = 0;
    if (!v || json_is_null(v))
        return true;
    if (!json_is_array(v))
        return fail(m, "field 'mlp_only_layers' is %s: expected an array of layer numbers",
                    what(v, buf, sizeof buf));
    json_array_foreach(v, i, x)
    {
        if (!json_is_integer(x) || json_integer_value(x) < 0)
            return fail(m, "field 'mlp_only_layers' holds %s: expected layer numbers",
                        what(x, buf, sizeof buf));
        if ((uint64_t)json_integer_value(x) != i)
            return fail(m, "field 'mlp_only_layers': dense layers other than the leading ones (0, "
                           "1, ..., n - 1) are not modelled");
    }
    *n = json_array_size(v);
    return true;
}

/* Mixtral, Qwen2-MoE, Qwen3-MoE: every layer (past the leading dense ones) an MoE layer. */
static bool map_moe(struct mj *m)
{
    const struct mj_type *t = m->t;
    uint64_t experts, top_k, f_e, shared = 0, step = 1, dense = 0;
    if (!need_uint(m, t->experts, &experts) || !need_uint(m, "num_experts_per_tok", &top_k) ||
        !need_uint(m, t->expert_ffn, &f_e))
        return false;
    if ((t->flags & F_SHARED_GATE) &&
        !opt_uint(m, "shared_expert_intermediate_size", false, 5632, NULL_IS_BAD, &shared))
        return false;
    if (t->flags & F_SPARSE_STEP) {
        if (!opt_uint(m, "decoder_sparse_step", true, 1, 1, &step) ||
            !leading_dense_layers(m, &dense))
            return false;
        if (step != 1)
            return fail(m,
                        "field 'decoder_sparse_step' is %llu: MoE layers between dense ones are "
                        "not modelled (only leading dense layers are)",
                        (unsigned long long)step);
    }
    set_u(m, C_EXPERTS, experts);
    set_u(m, C_TOP_K, top_k);
    set_u(m, C_EXPERT_FFN, f_e);
    if (t->flags & F_SINKS) /* the router's bias, gate_up_proj_bias and down_proj_bias */
        set_w(m, C_ROUTER_BIAS, "experts");
    if (shared) {
        set_u(m, C_SHARED_FFN, shared);
        set_b(m, C_SHARED_GATE, true);
    }
    if (dense)
        set_u(m, C_DENSE_LAYERS, dense);
    return true;
}

/* DeepSeek-V3 (DeepseekV3Config defaults; the score bias of DeepSeek's inference/model.py,
 * Gate.bias, with topk_method noaux_tc). */
static bool map_mla(struct mj *m)
{
    static const char *const methods[] = {"noaux_tc", "greedy", "group_limited_greedy"};
    uint64_t experts, top_k, f_e, n_shared, dense, freq, q_rank, kv_rank, nope, rope, v_dim;
    if (!need_uint(m, m->t->experts, &experts) || !need_uint(m, "num_experts_per_tok", &top_k) ||
        !need_uint(m, m->t->expert_ffn, &f_e) ||
        !opt_uint(m, "n_shared_experts", false, m->t->mla_shared, 0, &n_shared) ||
        !opt_uint(m, "first_k_dense_replace", false, m->t->mla_dense, NULL_IS_BAD, &dense) ||
        !opt_uint(m, "moe_layer_freq", true, 1, 1, &freq) ||
        !opt_uint(m, "q_lora_rank", false, 1536, 0, &q_rank) ||
        !need_uint(m, "kv_lora_rank", &kv_rank) ||
        !opt_uint(m, "qk_nope_head_dim", true, 128, NULL_IS_BAD, &nope) ||
        !opt_uint(m, "qk_rope_head_dim", true, 64, NULL_IS_BAD, &rope) ||
        !opt_uint(m, "v_head_dim", true, 128, NULL_IS_BAD, &v_dim))
        return false;
    if (freq != 1)
        return fail(m,
                    "field 'moe_layer_freq' is %llu: MoE layers between dense ones are not "
                    "modelled (only leading dense layers are)",
                    (unsigned long long)freq);
    const json_t *method = json_object_get(m->root, "topk_method");
    char buf[MODELJSON_TYPE_MAX], list[80];
    /* DeepSeek-V2 (DeepseekV2Config: greedy) has no score bias: noaux_tc is V3's */
    size_t first = m->t->noaux_tc ? 0 : 1, k = first;
    if (method && !json_is_null(method)) {
        if (!json_is_string(method))
            return fail(m, "field 'topk_method' is %s: expected a string",
                        what(method, buf, sizeof buf));
        while (k < 3 && strcmp(json_string_value(method), methods[k]) != 0)
            k++;
        if (k == 3)
            return fail(m, "field 'topk_method' is '%s': expected %s",
                        shown(json_string_value(method), buf, sizeof buf),
                        suggest_join(methods + first, 3 - first, " or ", list, sizeof list));
    }
    uint64_t shared;
    if (__builtin_mul_overflow(n_shared, f_e, &shared))
        return fail(m, "field 'n_shared_experts' is %llu: the shared experts are too wide",
                    (unsigned long long)n_shared);
    set_u(m, C_EXPERTS, experts);
    set_u(m, C_TOP_K, top_k);
    set_u(m, C_EXPERT_FFN, f_e);
    if (shared)
        set_u(m, C_SHARED_FFN, shared);
    if (k == 0) /* noaux_tc, V3's default: e_score_correction_bias */
        set_b(m, C_ROUTER_BIAS, true);
    if (dense)
        set_u(m, C_DENSE_LAYERS, dense);
    if (q_rank)
        set_u(m, C_Q_LORA_RANK, q_rank);
    set_u(m, C_KV_LORA_RANK, kv_rank);
    set_u(m, C_QK_NOPE_DIM, nope);
    set_u(m, C_QK_ROPE_DIM, rope);
    set_u(m, C_V_HEAD_DIM, v_dim);
    return true;
}

/* A multimodal file's language model: a copy of the object text_config, with the text class's
 * sizes where it leaves them out, becomes the root the fields are read from (*copy, to free). */
static bool text_config_of(struct mj *m, json_t **copy)
{
    const json_t *v = json_object_get(m->root, "text_config");
    char buf[40];
    if (!v)
        return fail(m, "field 'text_config' is missing (required for model_type '%s')",
                    m->t->model_type);
    if (!json_is_object(v))
        return fail(m, "field 'text_config' is %s: expected an object", what(v, buf, sizeof buf));
    *copy = json_deep_copy(v);
    if (!*copy)
        return fail(m, "out of memory");
    for (size_t i = 0; i < sizeof text_defaults / sizeof text_defaults[0]; i++)
        if (!json_object_get(*copy, text_defaults[i].field) &&
            json_object_set_new(*copy, text_defaults[i].field,
                                json_integer(text_defaults[i].value)) != 0)
            return fail(m, "out of memory");
    m->root = *copy;
    return true;
}

/* The llama-style types: RMSNorm, gated MLP, rotary, no dropout. */
static bool map_decoder(struct mj *m)
{
    const struct mj_type *t = m->t;
    uint64_t layers, hidden, heads, ffn;
    bool tied, qkv_bias = (t->flags & F_QKV_BIAS) != 0;
    double dropout;
    char buf[40];
    if (!need_uint(m, "num_hidden_layers", &layers) || !need_uint(m, "hidden_size", &hidden) ||
        !need_uint(m, "num_attention_heads", &heads) || !need_uint(m, "intermediate_size", &ffn) ||
        !get_bool(m, "tie_word_embeddings", (t->flags & F_TIED) != 0, &tied) ||
        !get_number(m, "attention_dropout", &dropout))
        return false;
    if (dropout != 0)
        return fail(m,
                    "field 'attention_dropout' is %s: dropout in a llama-style layer is not "
                    "modelled",
                    what(json_object_get(m->root, "attention_dropout"), buf, sizeof buf));
    if ((t->flags & F_ATTN_BIAS) &&
        !must_be_false(m, "attention_bias",
                       "biases on q, k, v and o are not modelled (those on q, k and v are: "
                       "qkv_bias)"))
        return false;
    if ((t->flags & F_MLP_BIAS) &&
        !must_be_false(m, "mlp_bias", "biases on the MLP of a llama-style layer are not modelled"))
        return false;
    if ((t->flags & F_QKV_BIAS_FIELD) && !get_bool(m, "qkv_bias", true, &qkv_bias))
        return false;
    if (t->flags & F_RESID_DROPOUT) {
        static const char *const drops[] = {"resid_pdrop", "embd_pdrop"};
        for (size_t i = 0; i < 2; i++) {
            if (!get_number(m, drops[i], &dropout))
                return false;
            if (dropout != 0)
                return fail(m, "field '%s' is %s: dropout in a llama-style layer is not modelled",
                            drops[i], what(json_object_get(m->root, drops[i]), buf, sizeof buf));
        }
    }
    bool biases = true;
    if ((t->flags & F_SINKS) && !get_bool(m, "attention_bias", true, &biases))
        return false;
    if (!biases)
        return fail(m, "field 'attention_bias' is false: attention sinks without biases on q, k, "
                       "v and o are not modelled");
    set_w(m, C_ARCH, "llama");
    set_u(m, C_LAYERS, layers);
    set_u(m, C_HIDDEN, hidden);
    set_u(m, C_HEADS, heads);
    set_u(m, C_FFN, ffn);
    set_b(m, C_TIED, tied);
    if (t->flags & F_SINKS)
        set_w(m, C_QKV_BIAS, "sinks");
    else if (qkv_bias)
        set_b(m, C_QKV_BIAS, true);
    if (t->flags & F_QK_NORM)
        set_b(m, C_QK_NORM, true);
    if (t->flags & F_QK_NORM_WIDTH)
        set_w(m, C_QK_NORM, "width");
    if (t->flags & F_NORMS4)
        set_u(m, C_LAYER_NORMS, 4);
    if (t->family == FAM_MLA) /* its own head widths; kv_heads = heads */
        return map_mla(m);
    uint64_t kv_heads, head_dim;
    if (!opt_uint(m, "num_key_value_heads", true, t->kv_heads ? t->kv_heads : heads, heads,
                  &kv_heads) ||
        !opt_uint(m, "head_dim", true, t->head_dim, 0, &head_dim))
        return false;
    set_u(m, C_KV_HEADS, kv_heads);
    /* Only a head width of its own: h / a is the column's default. */
    if (head_dim && (hidden % heads || head_dim != hidden / heads))
        set_u(m, C_HEAD_DIM, head_dim);
    return t->family == FAM_MOE ? map_moe(m) : true;
}

enum modeljson_status modeljson_parse(const char *text, size_t len, struct modeljson *out,
                                      char *err, size_t err_size)
{
    json_error_t je;
    char buf[JSON_ERROR_TEXT_LENGTH], list[160];
    size_t n;
    const char *const *names = modeljson_types(&n);
    memset(out, 0, sizeof *out);
    /* A byte-order mark, as some editors save UTF-8: the same file without it. */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        len -= 3;
    }
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je), *inner = NULL;
    struct mj m = {root, NULL, out, err, err_size};
    if (!root) {
        if (je.line > 0)
            fail(&m, "line %d, column %d: not valid JSON: %s", je.line, je.column,
                 shown(je.text, buf, sizeof buf));
        else
            fail(&m, "not valid JSON: %s", shown(je.text, buf, sizeof buf));
        return MODELJSON_BAD;
    }
    enum modeljson_status rc = MODELJSON_BAD;
    const json_t *mt = json_object_get(root, "model_type");
    if (!json_is_object(root)) {
        fail(&m, "not a JSON object");
        goto out;
    }
    if (!mt) {
        fail(&m, "field 'model_type' is missing (supported: %s)",
             suggest_join(names, n, ", ", list, sizeof list));
        goto out;
    }
    if (!json_is_string(mt)) {
        fail(&m, "field 'model_type' is %s: expected a string", what(mt, buf, sizeof buf));
        goto out;
    }
    for (size_t i = 0; i < N_TYPES && !m.t; i++)
        if (strcmp(json_string_value(mt), types[i].model_type) == 0)
            m.t = &types[i];
    if (!m.t) {
        const char *near = suggest_closest(json_string_value(mt), names, n);
        shown(json_string_value(mt), out->model_type, sizeof out->model_type);
        if (near)
            fail(&m, "model_type '%s' is not supported (did you mean '%s'?)", out->model_type,
                 near);
        else
            fail(&m, "model_type '%s' is not supported (supported: %s)", out->model_type,
                 suggest_join(names, n, ", ", list, sizeof list));
        goto out;
    }
    snprintf(out->model_type, sizeof out->model_type, "%s", m.t->model_type);
    out->follows = m.t->follows;
    if ((m.t->flags & F_TEXT_CONFIG) && !text_config_of(&m, &inner))
        goto out;
    uint64_t vocab;
    if (!(m.t->family == FAM_GPT2 ? map_gpt2(&m) : map_decoder(&m)) ||
        !need_uint(&m, "vocab_size", &vocab) || !check_rope(&m) || !check_layer_types(&m))
        goto out;
    set_u(&m, C_VOCAB, vocab);
    out->sliding_window = sliding_window_of(m.root);
    rc = MODELJSON_OK;
out:
    json_decref(inner);
    json_decref(root);
    return rc;
}
