/* report_tables: see report_tables.h. */
#include "report/report_tables.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/numfmt.h"
#include "base/strbuf.h"
#include "model/model.h"
#include "plan/plan.h"
#include "report/report_phrases.h"

static const char *const report_tables_sc[] = {"config", "verdict", "terms", "ladder",
                                               "microbatch"};
static const char *const report_tables_sum[] = {"summary"};

const char *const *report_tables_names(size_t *n)
{
    *n = sizeof report_tables_sc / sizeof *report_tables_sc;
    return report_tables_sc;
}

const char *const *report_tables_summary_names(size_t *n)
{
    *n = sizeof report_tables_sum / sizeof *report_tables_sum;
    return report_tables_sum;
}

/* Columns laid out as in layout[0..n), their headers from table-row phrase id. */
static void table_columns(struct report_phrases *ph, const struct report_values *vals,
                          enum report_phrase id, const struct doc_col *layout, size_t n,
                          struct doc_col *cols, char (*heads)[REPORT_CELL_MAX])
{
    report_cells(ph, vals, id, heads, n);
    for (size_t i = 0; i < n; i++) {
        cols[i] = layout[i];
        cols[i].head = heads[i];
    }
}

#define CELL REPORT_CELL_MAX

static void table_config(struct doc *doc, const struct report_sc *r)
{
    /* A long value ("dp=2048, tp=1, pp=1, ep=64, ZeRO-1") wraps onto more lines. */
    static const struct doc_col layout[] = {{NULL, 0.14, CANVAS_ALIGN_LEFT, false},
                                            {NULL, 0.36, CANVAS_ALIGN_LEFT, true},
                                            {NULL, 0.14, CANVAS_ALIGN_LEFT, false},
                                            {NULL, 0.36, CANVAS_ALIGN_LEFT, true}};
    const struct scenario *sc = r->sc;
    const struct report_values *vals = &r->vals;
    struct report_phrases *ph = r->ph;
    struct doc_col cols[4];
    char heads[4][CELL], left[5][CELL], right[6][CELL];
    char model[CELL], shape[CELL], ffn[CELL], vocab[CELL], psi[CELL], seq[CELL], prec[CELL],
        act[CELL], parallel[CELL], gpu[CELL], res[CELL];
    table_columns(ph, vals, REPORT_PHRASE_CONFIG_COLUMNS, layout, 4, cols, heads);
    report_cells(ph, vals, REPORT_PHRASE_CONFIG_MODEL_LABELS, left, 5);
    report_cells(ph, vals, REPORT_PHRASE_CONFIG_TRAINING_LABELS, right, 6);

    char name[CELL], dropout[CELL], positions[CELL] = "";
    if (sc->model_preset[0])
        numfmt(name, sizeof name, "%s", sc->model_preset);
    else
        report_say(name, sizeof name, ph, vals, REPORT_PHRASE_CONFIG_MODEL_CUSTOM, NULL);
    report_say(model, sizeof model, ph, vals, REPORT_PHRASE_CONFIG_MODEL, "model_name", name, NULL);
    report_say(shape, sizeof shape, ph, vals,
               sc->kv_lora_rank > 0        ? REPORT_PHRASE_CONFIG_SHAPE_MLA
               : sc->kv_heads != sc->heads ? REPORT_PHRASE_CONFIG_SHAPE_GQA
                                           : REPORT_PHRASE_CONFIG_SHAPE,
               NULL);
    report_say(dropout, sizeof dropout, ph, vals,
               sc->dropout ? REPORT_PHRASE_CONFIG_DROPOUT : REPORT_PHRASE_CONFIG_NO_DROPOUT, NULL);
    if (sc->positions)
        report_say(positions, sizeof positions, ph, vals, REPORT_PHRASE_CONFIG_POSITIONS, NULL);
    char shared[CELL] = "", dense_label[CELL] = "", dense[CELL] = "";
    if (sc->experts > 0) {
        if (sc->shared_ffn > 0)
            report_say(shared, sizeof shared, ph, vals, REPORT_PHRASE_CONFIG_SHARED, NULL);
        report_say(ffn, sizeof ffn, ph, vals, REPORT_PHRASE_CONFIG_MLP_MOE, "shared", shared, NULL);
    } else {
        report_say(ffn, sizeof ffn, ph, vals, REPORT_PHRASE_CONFIG_MLP, "dropout", dropout,
                   "positions", positions, NULL);
    }
    if (sc->experts > 0 && sc->dense_layers > 0) {
        report_say(dense_label, sizeof dense_label, ph, vals, REPORT_PHRASE_CONFIG_DENSE_LABEL,
                   NULL);
        report_say(dense, sizeof dense, ph, vals, REPORT_PHRASE_CONFIG_DENSE_LAYERS, NULL);
    }
    report_say(vocab, sizeof vocab, ph, vals,
               sc->tied ? REPORT_PHRASE_CONFIG_VOCAB_TIED : REPORT_PHRASE_CONFIG_VOCAB_UNTIED,
               NULL);
    char mtp[CELL] = "";
    if (sc->mtp_layers > 0)
        report_say(mtp, sizeof mtp, ph, vals, REPORT_PHRASE_CONFIG_MTP, NULL);
    report_say(psi, sizeof psi, ph, vals,
               sc->experts > 0 ? REPORT_PHRASE_CONFIG_PARAMS_MOE : REPORT_PHRASE_CONFIG_PARAMS,
               "mtp", mtp, NULL);

    report_say(seq, sizeof seq, ph, vals, REPORT_PHRASE_CONFIG_TOKENS, NULL);
    /* A trained parameter's bytes (doc/model.md 3.5): the adapters' under LoRA and QLoRA. */
    struct states_per_param bpp = states_per_param(sc);
    char wb[16], gb[16], ob[16];
    numfmt(wb, sizeof wb, "%u", bpp.weights);
    numfmt(gb, sizeof gb, "%u", bpp.grads);
    report_values_optimizer_bytes(sc, &r->t.stage[r->t.peak_stage], ob, sizeof ob);
    bool lora = sc->finetune != FINETUNE_FULL;
    char adapters[32];
    numfmt_short(adapters, sizeof adapters, r->t.adapter_params);
    report_say(prec, sizeof prec, ph, vals,
               sc->fp8 != FP8_NONE ? REPORT_PHRASE_CONFIG_PRECISION_FP8
               : lora              ? REPORT_PHRASE_CONFIG_PRECISION_ADAPTERS
                                   : REPORT_PHRASE_CONFIG_PRECISION,
               "weight_bytes", wb, "grad_bytes", gb, "optimizer_bytes", ob, "adapters", adapters,
               NULL);
    report_say(act, sizeof act, ph, vals, REPORT_PHRASE_CONFIG_ACTIVATIONS, NULL);
    report_say(parallel, sizeof parallel, ph, vals, REPORT_PHRASE_CONFIG_PARALLEL, NULL);
    report_say(gpu, sizeof gpu, ph, vals, REPORT_PHRASE_CONFIG_GPUS, NULL);
    report_say(res, sizeof res, ph, vals, REPORT_PHRASE_CONFIG_RESERVE, NULL);

    /* Fine-tuning or another optimizer than AdamW: a row of its own (doc/model.md 3.5, 3.6). */
    char tuning[2][CELL];
    size_t n_rows = lora || sc->optimizer != OPTIM_ADAMW ? 7 : 6;
    if (n_rows == 7)
        report_cells(ph, vals, REPORT_PHRASE_CONFIG_TUNING_LABELS, tuning, 2);
    const char *rows[][4] = {
        {left[0], model, right[0], seq},
        {left[1], shape, right[1], prec},
        {left[2], ffn, right[2], act},
        {left[3], vocab, right[3], parallel},
        {left[4], psi, right[4], gpu},
        {dense_label, dense, right[5], res},
        {tuning[0], vals->v[REPORT_PH_FINETUNING], tuning[1], vals->v[REPORT_PH_OPTIMIZER_NAME]},
    };
    struct doc_table t = {cols, 4, 0};
    doc_table_start(doc, &t, n_rows);
    for (size_t i = 0; i < n_rows; i++)
        doc_table_row(doc, &t, rows[i], DOC_ROW_PLAIN);
    doc_table_end(doc);
}

static void box_line(struct doc *doc, const char *line, void *ctx)
{
    struct doc_para *p = ctx;
    doc_text(doc, p->x, doc->y + p->size * 0.93, p->size, CANVAS_ALIGN_LEFT, p->bold, p->rgb, line);
    doc->y += p->lead;
}

/* The verdict: a tinted box with a coloured bar, the verdict in large type, the fix below. */
static void table_verdict(struct doc *doc, const struct report_sc *r)
{
    bool fits = r->t.fits, step = r->sc->peak == PEAK_STEP;
    char head[REPORT_VALUE_MAX], body[3 * REPORT_VALUE_MAX];
    /* Under --peak step the box says the peak is the step's, at which phase, and gives the
     * lesson's sum beside it. */
    static const enum report_phrase heads[2][2] = {
        {REPORT_PHRASE_VERDICT_OOM, REPORT_PHRASE_VERDICT_FITS},
        {REPORT_PHRASE_VERDICT_STEP_OOM, REPORT_PHRASE_VERDICT_STEP_FITS}};
    static const enum report_phrase bodies[2][2] = {
        {REPORT_PHRASE_VERDICT_BODY_OOM, REPORT_PHRASE_VERDICT_BODY_FITS},
        {REPORT_PHRASE_VERDICT_STEP_BODY_OOM, REPORT_PHRASE_VERDICT_STEP_BODY_FITS}};
    report_say(head, sizeof head, r->ph, &r->vals, heads[step][fits], NULL);
    report_say(body, sizeof body, r->ph, &r->vals, bodies[step][fits], NULL);
    double w = doc_width(doc) - 28;
    int lines = doc_lines(doc, body, DOC_BODY_PT, false, w);
    double h = 14 + 20 + lines * DOC_BODY_LEAD + 8;
    doc_need(doc, h + 8);
    double y0 = doc->y;
    doc_fill_rect(doc, DOC_M_LEFT, y0, doc_width(doc), h, fits ? DOC_OK_FILL : DOC_BAD_FILL);
    doc_fill_rect(doc, DOC_M_LEFT, y0, 5, h, fits ? DOC_OK : DOC_BAD);
    doc->y = y0 + 10;
    struct doc_para hp = {DOC_M_LEFT + 18, 14, 20, true, fits ? DOC_OK : DOC_BAD, NULL, true};
    box_line(doc, head, &hp);
    doc->y += 2;
    struct doc_para bp = {DOC_M_LEFT + 18, DOC_BODY_PT, DOC_BODY_LEAD, false, DOC_TEXT, NULL, true};
    doc_wrap(doc, body, DOC_BODY_PT, false, w, box_line, &bp);
    doc->y = y0 + h + 12;
}

/* Under LoRA and QLoRA (doc/model.md 3.6): the frozen base's weights and the adapters' states. */
static void terms_lora_formulas(const struct report_sc *r, const struct model_gpu *g,
                                const char *wb, const char *gb, const char *ob, const char *over,
                                char f[][CELL])
{
    const struct scenario *sc = r->sc;
    bool dp = model_zero_group(sc) > 1;
    char frozen[32], adapters[32];
    numfmt_size(frozen, sizeof frozen, g->pool[0].frozen_bytes + g->pool[1].frozen_bytes, r->units);
    numfmt_short(adapters, sizeof adapters, g->trained_params);
    report_say(f[0], CELL, r->ph, &r->vals,
               dp && sc->zero >= 3 ? REPORT_PHRASE_TERMS_WEIGHTS_LORA_SHARDED
                                   : REPORT_PHRASE_TERMS_WEIGHTS_LORA,
               "frozen", frozen, "per_param", wb, "adapters", adapters, "over", over, NULL);
    report_say(f[1], CELL, r->ph, &r->vals,
               dp && sc->zero >= 2 ? REPORT_PHRASE_TERMS_GRADS_LORA_SHARDED
                                   : REPORT_PHRASE_TERMS_GRADS_LORA,
               "per_param", gb, "over", over, NULL);
    report_say(f[2], CELL, r->ph, &r->vals,
               sc->offload == OFFLOAD_OPTIMIZER ? REPORT_PHRASE_TERMS_OPTIMIZER_LORA_OFFLOADED
               : dp && sc->zero >= 1            ? REPORT_PHRASE_TERMS_OPTIMIZER_LORA_SHARDED
                                                : REPORT_PHRASE_TERMS_OPTIMIZER_LORA,
               "per_param", ob, "over", over, NULL);
}

/* A mixture of experts trained whole: its states are written as two parts, the dense parameters
 * sharded over the ZeRO group and the routed experts over the expert data-parallel size edp
 * (doc/model.md 3.2), which is what the model computes. */
static bool terms_moe_split(const struct scenario *sc, const struct model_gpu *g)
{
    return g->expert_params > 0 && sc->finetune == FINETUNE_FULL;
}

/* The three states of a mixture of experts: the weights name the dense and the routed counts on
 * this GPU, the gradients and optimizer states use those names. A state ZeRO shards is
 * "B × (dense / dp + routed / edp)". */
static void terms_moe_states_formulas(const struct report_sc *r, const struct model_gpu *g,
                                      const char *wb, const char *gb, const char *ob,
                                      const char *over, char f[][CELL])
{
    const struct scenario *sc = r->sc;
    bool sharded = model_zero_group(sc) > 1 || model_expert_dp(sc) > 1;
    char dense[48], routed[48];
    numfmt_count(dense, sizeof dense, g->params - g->expert_params);
    numfmt_count(routed, sizeof routed, g->expert_params);
    report_say(f[0], CELL, r->ph, &r->vals,
               sharded && sc->zero >= 3 ? REPORT_PHRASE_TERMS_WEIGHTS_MOE_SHARDED
                                        : REPORT_PHRASE_TERMS_WEIGHTS_MOE,
               "per_param", wb, "dense", dense, "routed", routed, "over", over, NULL);
    report_say(f[1], CELL, r->ph, &r->vals,
               sharded && sc->zero >= 2 ? REPORT_PHRASE_TERMS_MOE_SHARDED
                                        : REPORT_PHRASE_TERMS_GRADS,
               "per_param", gb, "over", over, NULL);
    report_say(f[2], CELL, r->ph, &r->vals,
               sc->offload == OFFLOAD_OPTIMIZER ? REPORT_PHRASE_TERMS_OPTIMIZER_OFFLOADED
               : sharded && sc->zero >= 1       ? REPORT_PHRASE_TERMS_MOE_SHARDED
                                                : REPORT_PHRASE_TERMS_OPTIMIZER,
               "per_param", ob, "over", over, NULL);
}

/* The formulas of the three model states: weights, gradients, optimizer (ZeRO divides by dp). */
static void terms_states_formulas(const struct report_sc *r, const struct model_gpu *g,
                                  char f[][CELL])
{
    const struct scenario *sc = r->sc;
    struct states_per_param bpp = states_per_param(sc);
    char pcount[48], wb[16], gb[16], ob[16];
    numfmt_count(pcount, sizeof pcount, g->params);
    numfmt(wb, sizeof wb, "%u", bpp.weights);
    numfmt(gb, sizeof gb, "%u", bpp.grads);
    report_values_optimizer_bytes(sc, g, ob, sizeof ob);
    /* ZeRO's group: dp, dp·cp with context parallelism, or an HSDP group (doc/model.md 3.2). */
    uint64_t group = model_zero_group(sc);
    bool dp = group > 1;
    char over[32] = "dp";
    if (sc->zero_group && sc->zero_group != sc->dp * (sc->cp ? sc->cp : 1))
        numfmt_u64(over, sizeof over, group);
    else if (sc->cp > 1)
        numfmt(over, sizeof over, "%s", "(dp·cp)");
    if (terms_moe_split(sc, g)) {
        terms_moe_states_formulas(r, g, wb, gb, ob, over, f);
    } else {
        report_say(f[0], CELL, r->ph, &r->vals,
                   dp && sc->zero >= 3 ? REPORT_PHRASE_TERMS_WEIGHTS_SHARDED
                                       : REPORT_PHRASE_TERMS_WEIGHTS,
                   "per_param", wb, "stage_params", pcount, "over", over, NULL);
        report_say(f[1], CELL, r->ph, &r->vals,
                   dp && sc->zero >= 2 ? REPORT_PHRASE_TERMS_GRADS_SHARDED
                                       : REPORT_PHRASE_TERMS_GRADS,
                   "per_param", gb, "over", over, NULL);
        report_say(f[2], CELL, r->ph, &r->vals,
                   sc->offload == OFFLOAD_OPTIMIZER ? REPORT_PHRASE_TERMS_OPTIMIZER_OFFLOADED
                   : dp && sc->zero >= 1            ? REPORT_PHRASE_TERMS_OPTIMIZER_SHARDED
                                                    : REPORT_PHRASE_TERMS_OPTIMIZER,
                   "per_param", ob, "over", over, NULL);
    }
    if (sc->finetune != FINETUNE_FULL)
        terms_lora_formulas(r, g, wb, gb, ob, over, f);
    if (sc->fp8 != FP8_NONE) { /* the FP8 weight copies are counted with the weights (3.7) */
        char w[CELL], copies[32];
        numfmt(w, sizeof w, "%s", f[0]);
        numfmt_size(copies, sizeof copies, g->fp8_bytes, r->units);
        report_say(f[0], CELL, r->ph, &r->vals, REPORT_PHRASE_TERMS_WEIGHTS_FP8, "weights", w,
                   "copies", copies, NULL);
    }
}

/* The stored activations: checkpoints plus one segment, or every layer of the stage. */
static void terms_stored_formula(const struct report_sc *r, char *buf, size_t size)
{
    const struct scenario *sc = r->sc;
    bool t = sc->sp && sc->tp > 1, cp = sc->cp > 1;
    const char *c = t && cp ? "2(s/cp)bh/t" : t ? "2sbh/t" : cp ? "2(s/cp)bh" : "2sbh";
    /* The micro-batches the stage keeps in flight: pp on the first stage of a full 1F1B. */
    const struct pipeline_stage *pipe = &r->t.stage[r->t.peak_stage].pipe;
    char m[32] = "pp";
    if (pipe->in_flight != sc->pp || pipe->chunk_layers != pipeline_layers_of(sc, 0))
        numfmt_u64(m, sizeof m, pipe->in_flight);
    uint64_t stage_layers = pipe->chunk_layers;
    char k[32];
    numfmt_u64(k, sizeof k, sc->ckpt_every < stage_layers ? sc->ckpt_every : stage_layers);
    enum report_phrase id;
    bool vpp = sc->vpp > 1;
    if (sc->recompute == RECOMPUTE_EVERY_K) /* a segment stays in a stage, and in a chunk */
        id = sc->offload == OFFLOAD_CHECKPOINTS ? REPORT_PHRASE_TERMS_STORED_CKPT_OFFLOADED
             : sc->pp == 1                      ? REPORT_PHRASE_TERMS_STORED_CKPT
             : vpp                              ? REPORT_PHRASE_TERMS_STORED_CKPT_VPP
                                                : REPORT_PHRASE_TERMS_STORED_CKPT_PP;
    else
        id = sc->pp == 1 ? REPORT_PHRASE_TERMS_STORED
             : vpp       ? REPORT_PHRASE_TERMS_STORED_VPP
                         : REPORT_PHRASE_TERMS_STORED_PP;
    const uint64_t *n_kind = pipe->act_layers, *a_kind = r->t.kind_act;
    if (sc->recompute != RECOMPUTE_EVERY_K && n_kind[0] > 0 && n_kind[1] > 0 &&
        a_kind[0] != a_kind[1]) {
        /* Layers of both kinds (the leading dense layers of a mixture of experts): each its A. */
        char nd[32], nm[32], ad[32];
        numfmt_u64(nd, sizeof nd, n_kind[0]);
        numfmt_u64(nm, sizeof nm, n_kind[1]);
        numfmt_count(ad, sizeof ad, a_kind[0]);
        report_say(buf, size, r->ph, &r->vals, REPORT_PHRASE_TERMS_STORED_KINDS, "n_dense", nd,
                   "n_moe", nm, "a_dense", ad, NULL);
    } else {
        report_say(buf, size, r->ph, &r->vals, id, "m", m, "k", k, "c", c, NULL);
    }
    if (r->t.ring_bytes > 0) { /* context parallelism's K/V receive buffers (doc/model.md 4.11) */
        char stored[CELL], ring[32];
        numfmt(stored, sizeof stored, "%s", buf);
        numfmt_count(ring, sizeof ring, r->t.ring_bytes);
        report_say(buf, size, r->ph, &r->vals, REPORT_PHRASE_TERMS_STORED_RING, "stored", stored,
                   "ring", ring, NULL);
    }
}

/* The formula column, one row per term from weights to the budget. */
static void terms_formulas(const struct report_sc *r, const struct model_gpu *g, char f[8][CELL])
{
    const struct scenario *sc = r->sc;
    terms_states_formulas(r, g, f);
    char af[CELL];
    report_values_act_formula(r->ph, sc, &r->t, af, sizeof af);
    report_say(f[3], CELL, r->ph, &r->vals, REPORT_PHRASE_TERMS_ACT_LAYER, "formula", af, NULL);
    terms_stored_formula(r, f[4], CELL);
    report_say(f[5], CELL, r->ph, &r->vals,
               g->logits_bytes == 0 ? REPORT_PHRASE_TERMS_LOGITS_ELSEWHERE
               : sc->mtp_layers > 0 ? REPORT_PHRASE_TERMS_LOGITS_MTP
               : sc->cp > 1         ? REPORT_PHRASE_TERMS_LOGITS_CP
               : sc->tp > 1         ? REPORT_PHRASE_TERMS_LOGITS_TP
                                    : REPORT_PHRASE_TERMS_LOGITS,
               NULL);
    report_say(f[6], CELL, r->ph, &r->vals,
               sc->peak == PEAK_STEP ? REPORT_PHRASE_TERMS_PEAK_STEP : REPORT_PHRASE_TERMS_PEAK,
               NULL);
    char reserve[32];
    numfmt(reserve, sizeof reserve, "%.2f", sc->reserve);
    report_say(f[7], CELL, r->ph, &r->vals, REPORT_PHRASE_TERMS_BUDGET, "reserve_fraction", reserve,
               NULL);
}

/* The table's rows: the eight terms, for a mixture of experts two more under the optimizer
 * states that split the model states into the dense part and the routed experts, and under
 * --peak step the lesson's sum under the peak. */
#define TERMS_ROWS_MAX 11
#define TERMS_PEAK_ROW 6 /* of the eight */

/* The bytes, size and share of the peak of a row (no share: one layer and the budget). */
static void terms_number(const struct report_sc *r, uint64_t bytes, bool share, char *by, char *sz,
                         char *pc)
{
    const struct terms *t = &r->t;
    numfmt_count(by, 32, bytes);
    numfmt_size(sz, 32, bytes, r->units);
    pc[0] = '\0';
    if (share)
        numfmt(pc, 16, "%.1f%%", t->peak_bytes ? 100.0 * (double)bytes / (double)t->peak_bytes : 0);
}

/* The bytes per parameter of a part of a mixture of experts, with what ZeRO shards over n GPUs
 * (named over): "(2 + 2 + 12) B", "(2 + 2 + 12 / dp) B", "(2 + (2 + 12) / dp) B", or with
 * ZeRO-3 "(2 + 2 + 12) B / dp"; an offloaded optimizer's bytes are not on the GPU. */
static void terms_part_bytes(const struct scenario *sc, uint64_t n, const char *over,
                             const char *wb, const char *gb, const char *ob, char *buf, size_t size)
{
    const char *per[3] = {wb, gb, ob};
    size_t count = sc->offload == OFFLOAD_OPTIMIZER ? 2 : 3;
    /* the first state ZeRO shards: the optimizer's at stage 1, the gradients' at 2, all at 3 */
    size_t first = n <= 1 || sc->zero <= 0 ? count : sc->zero >= 3 ? 0 : 3 - (size_t)sc->zero;
    if (first > count)
        first = count;
    struct strbuf w;
    strbuf_init_fixed(&w, buf, size);
    strbuf_puts(&w, "(");
    for (size_t i = 0; i < first; i++)
        strbuf_printf(&w, "%s%s", i ? " + " : "", per[i]);
    if (first == 0) { /* everything sharded */
        for (size_t i = 0; i < count; i++)
            strbuf_printf(&w, "%s%s", i ? " + " : "", per[i]);
        strbuf_printf(&w, ") B / %s", over);
        return;
    }
    if (first < count) {
        bool several = count - first > 1;
        strbuf_puts(&w, " + ");
        if (several)
            strbuf_puts(&w, "(");
        for (size_t i = first; i < count; i++)
            strbuf_printf(&w, "%s%s", i > first ? " + " : "", per[i]);
        strbuf_printf(&w, "%s / %s", several ? ")" : "", over);
    }
    strbuf_puts(&w, ") B");
}

/* The formulas of the dense and routed-expert rows of a mixture of experts on GPU g: each part's
 * states, (weights + gradients + optimizer) bytes per parameter times its count, ZeRO sharding
 * the dense part over dp and the routed experts over edp (doc/model.md 3.2). */
static void terms_moe_formulas(const struct report_sc *r, const struct model_gpu *g,
                               char f[2][CELL])
{
    const struct scenario *sc = r->sc;
    uint64_t etp = sc->etp ? sc->etp : sc->tp;
    struct states_per_param bpp = states_per_param(sc);
    char wb[16], gb[16], ob[16], bytes[CELL], tp[32], group[32], n[32], sharding[CELL] = "";
    char over[32] = "dp";
    uint64_t zgroup = model_zero_group(sc), edp = model_expert_dp(sc);
    if (sc->zero_group && sc->zero_group != sc->dp * (sc->cp ? sc->cp : 1))
        numfmt_u64(over, sizeof over, zgroup);
    else if (sc->cp > 1)
        numfmt(over, sizeof over, "%s", "(dp·cp)");
    numfmt(wb, sizeof wb, "%u", bpp.weights);
    numfmt(gb, sizeof gb, "%u", bpp.grads);
    report_values_optimizer_bytes(sc, g, ob, sizeof ob);
    numfmt_u64(tp, sizeof tp, sc->tp);
    terms_part_bytes(sc, zgroup, over, wb, gb, ob, bytes, sizeof bytes);
    report_say(f[0], CELL, r->ph, &r->vals, REPORT_PHRASE_TERMS_DENSE, "bytes", bytes, "tp", tp,
               NULL);
    numfmt_u64(group, sizeof group, etp * sc->ep);
    numfmt_u64(n, sizeof n, edp);
    if (sc->zero > 0)
        report_say(sharding, sizeof sharding, r->ph, NULL, REPORT_PHRASE_TERMS_ZERO_EDP, "n", n,
                   NULL);
    terms_part_bytes(sc, edp, "edp", wb, gb, ob, bytes, sizeof bytes);
    report_say(f[1], CELL, r->ph, &r->vals, REPORT_PHRASE_TERMS_EXPERTS, "bytes", bytes,
               "expert_group", group, "sharding", sharding, NULL);
}

static void table_terms(struct doc *doc, const struct report_sc *r)
{
    /* A long term or formula wraps onto more lines, in the type of the others: never cut. */
    static const struct doc_col dense_layout[] = {{NULL, 0.22, CANVAS_ALIGN_LEFT, true},
                                                  {NULL, 0.40, CANVAS_ALIGN_LEFT, true},
                                                  {NULL, 0.18, CANVAS_ALIGN_RIGHT, false},
                                                  {NULL, 0.11, CANVAS_ALIGN_RIGHT, false},
                                                  {NULL, 0.09, CANVAS_ALIGN_RIGHT, false}};
    /* The formulas of the dense and routed-expert rows are longer. */
    static const struct doc_col moe_layout[] = {{NULL, 0.215, CANVAS_ALIGN_LEFT, true},
                                                {NULL, 0.425, CANVAS_ALIGN_LEFT, true},
                                                {NULL, 0.17, CANVAS_ALIGN_RIGHT, false},
                                                {NULL, 0.105, CANVAS_ALIGN_RIGHT, false},
                                                {NULL, 0.085, CANVAS_ALIGN_RIGHT, false}};
    const struct doc_col *layout = r->sc->experts > 0 ? moe_layout : dense_layout;
    const struct terms *t = &r->t;
    const struct model_gpu *g = &t->stage[t->peak_stage];
    struct doc_col cols[5];
    char heads[5][CELL], labels[8][CELL], f[8][CELL], moe_labels[2][CELL], moe_f[2][CELL];
    char lesson[2][CELL];
    char by[TERMS_ROWS_MAX][32], sz[TERMS_ROWS_MAX][32], pc[TERMS_ROWS_MAX][16];
    const char *label[TERMS_ROWS_MAX], *formula[TERMS_ROWS_MAX];
    const uint64_t bytes[8] = {t->weights_bytes,   t->grads_bytes, t->optimizer_bytes,
                               t->act_layer_bytes, t->act_bytes,   t->logits_bytes,
                               t->peak_bytes,      t->budget_bytes};
    table_columns(r->ph, &r->vals, REPORT_PHRASE_TERMS_COLUMNS, layout, 5, cols, heads);
    report_cells(r->ph, &r->vals, REPORT_PHRASE_TERMS_ROWS, labels, 8);
    terms_formulas(r, g, f);
    size_t n = 0, peak_row = 0;
    for (size_t i = 0; i < 8; i++) {
        if (i == TERMS_PEAK_ROW)
            peak_row = n;
        label[n] = labels[i];
        formula[n] = f[i];
        terms_number(r, bytes[i], i != 3 && i != 7, by[n], sz[n], pc[n]);
        n++;
        if (i == TERMS_PEAK_ROW && r->sc->peak == PEAK_STEP) {
            /* The lesson's sum, as --peak lesson computes it: no share of the step's peak. */
            report_cells(r->ph, &r->vals, REPORT_PHRASE_TERMS_LESSON_ROW, lesson, 2);
            label[n] = lesson[0];
            formula[n] = lesson[1];
            terms_number(r, r->lesson.peak_bytes, false, by[n], sz[n], pc[n]);
            n++;
        }
        if (i != 2 || r->sc->experts == 0)
            continue;
        /* Under the optimizer states: the states of the dense part and of the routed experts. */
        report_cells(r->ph, &r->vals, REPORT_PHRASE_TERMS_MOE_ROWS, moe_labels, 2);
        terms_moe_formulas(r, g, moe_f);
        const uint64_t part[2] = {t->states_bytes - t->expert_bytes, t->expert_bytes};
        for (size_t k = 0; k < 2; k++, n++) {
            label[n] = moe_labels[k];
            formula[n] = moe_f[k];
            terms_number(r, part[k], true, by[n], sz[n], pc[n]);
        }
    }
    struct doc_table tb = {cols, 5, 0};
    doc_table_start(doc, &tb, n);
    for (size_t i = 0; i < n; i++) {
        const char *row[] = {label[i], formula[i], by[i], sz[i], pc[i]};
        doc_table_row(doc, &tb, row,
                      i != peak_row ? DOC_ROW_PLAIN
                      : t->fits     ? DOC_ROW_OK
                                    : DOC_ROW_BAD);
    }
    doc_table_end(doc);
}

/* True when the space-separated list `list` holds the token s[0..n). */
static bool report_has_token(const char *list, const char *s, size_t n)
{
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, " ");
        if (len == n && memcmp(p, s, n) == 0)
            return true;
        p += len;
        p += *p == ' ';
    }
    return false;
}

/* The settings of cur that prev does not have: what one rung changed. */
static void report_delta(const char *prev, const char *cur, char *out, size_t size)
{
    size_t o = 0;
    out[0] = '\0';
    for (const char *p = cur; *p;) {
        size_t len = strcspn(p, " ");
        if (len && !report_has_token(prev, p, len) && o + len + 2 < size) {
            if (o)
                out[o++] = ' ';
            memcpy(out + o, p, len);
            o += len;
            out[o] = '\0';
        }
        p += len;
        p += *p == ' ';
    }
}

/* The added time of rung g per step: "12 ms", "−3 ms" (tp shrinks each GPU's share of the
 * work), or none; "(thin)" when its micro-batch makes thin matmuls. */
static void ladder_time(const struct report_sc *r, const struct plan_rung *g, char *buf,
                        size_t size)
{
    char t[48];
    if (g->extra_time_s > 1e-9) {
        numfmt_seconds(t, sizeof t, g->extra_time_s);
    } else if (g->extra_time_s < -1e-9) {
        char abs_s[40];
        numfmt_seconds(abs_s, sizeof abs_s, -g->extra_time_s);
        numfmt(t, sizeof t, "−%s", abs_s);
    } else {
        report_say(t, sizeof t, r->ph, &r->vals, REPORT_PHRASE_LADDER_NO_TIME, NULL);
    }
    if (g->thin_matmuls)
        report_say(buf, size, r->ph, &r->vals, REPORT_PHRASE_LADDER_THIN, "time", t, NULL);
    else
        numfmt(buf, size, "%s", t);
}

static void table_ladder(struct doc *doc, const struct report_sc *r)
{
    /* The rung and what it changed wrap onto more lines when long. */
    static const struct doc_col layout[] = {
        {NULL, 0.15, CANVAS_ALIGN_LEFT, true},    {NULL, 0.39, CANVAS_ALIGN_LEFT, true},
        {NULL, 0.06, CANVAS_ALIGN_RIGHT, false},  {NULL, 0.12, CANVAS_ALIGN_RIGHT, false},
        {NULL, 0.08, CANVAS_ALIGN_CENTER, false}, {NULL, 0.20, CANVAS_ALIGN_RIGHT, false}};
    const struct plan *p = &r->plan;
    struct report_phrases *ph = r->ph;
    struct doc_col cols[6];
    char heads[6][CELL], yes[CELL], no[CELL], base_label[CELL], none[CELL];
    table_columns(ph, &r->vals, REPORT_PHRASE_LADDER_COLUMNS, layout, 6, cols, heads);
    report_say(yes, sizeof yes, ph, &r->vals, REPORT_PHRASE_LADDER_YES, NULL);
    report_say(no, sizeof no, ph, &r->vals, REPORT_PHRASE_LADDER_NO, NULL);
    report_say(base_label, sizeof base_label, ph, &r->vals, REPORT_PHRASE_LADDER_BASE, NULL);
    report_say(none, sizeof none, ph, &r->vals, REPORT_PHRASE_LADDER_NO_TIME, NULL);
    struct doc_table tb = {cols, 6, 0};
    char b[32], peak[32], extra[CELL], settings[256], prev[256] = "", delta[256], label[CELL];
    doc_table_start(doc, &tb, p->n_rungs + 1 < 4 ? p->n_rungs + 1 : 4);
    numfmt_u64(b, sizeof b, r->sc->micro_batch);
    numfmt_size(peak, sizeof peak, r->t.peak_bytes, r->units);
    const char *base[] = {base_label, "", b, peak, r->t.fits ? yes : no, none};
    doc_table_row(doc, &tb, base, r->t.fits ? DOC_ROW_OK : DOC_ROW_PLAIN);
    uint64_t prev_b = r->sc->micro_batch;
    for (size_t i = 0; i < p->n_rungs; i++) {
        const struct plan_rung *g = &p->rungs[i];
        plan_rung_settings(p, i, settings, sizeof settings);
        report_delta(prev, settings, delta, sizeof delta);
        memcpy(prev, settings, sizeof prev);
        if (g->sc.micro_batch != prev_b && !strstr(delta, "micro_batch=")) {
            /* b went back up to the scenario's own, which the settings do not list */
            size_t len = strlen(delta);
            numfmt(delta + len, sizeof delta - len, "%smicro_batch=%llu", len ? " " : "",
                   (unsigned long long)g->sc.micro_batch);
        }
        prev_b = g->sc.micro_batch;
        report_values_rung_label(ph, g, label, sizeof label);
        numfmt_u64(b, sizeof b, g->sc.micro_batch);
        numfmt_size(peak, sizeof peak, g->terms.peak_bytes, r->units);
        ladder_time(r, g, extra, sizeof extra);
        const char *row[] = {label, delta, b, peak, g->fits ? yes : no, extra};
        doc_table_row(doc, &tb, row, (int)i == p->fix_rung ? DOC_ROW_OK : DOC_ROW_PLAIN);
    }
    doc_table_end(doc);
}

static void table_microbatch(struct doc *doc, const struct report_sc *r)
{
    static const struct doc_col layout[] = {{NULL, 0.22, CANVAS_ALIGN_LEFT, true},
                                            {NULL, 0.38, CANVAS_ALIGN_LEFT, true},
                                            {NULL, 0.14, CANVAS_ALIGN_RIGHT, false},
                                            {NULL, 0.26, CANVAS_ALIGN_RIGHT, false}};
    /* The settings of each mode of plan_mode_scenario, as eval's fix_plan writes them. */
    static const char *const settings[PLAN_MODES] = {
        "attention=plain recompute=none", "attention=flash recompute=none",
        "attention=plain recompute=selective", "attention=flash recompute=full"};
    struct doc_col cols[4];
    char heads[4][CELL];
    table_columns(r->ph, &r->vals, REPORT_PHRASE_MICROBATCH_COLUMNS, layout, 4, cols, heads);
    struct doc_table tb = {cols, 4, 0};
    doc_table_start(doc, &tb, PLAN_MODES);
    for (int m = 0; m < PLAN_MODES; m++) {
        char b[32], tok[CELL];
        uint64_t mb = r->max_b[m];
        numfmt_u64(b, sizeof b, mb);
        if (mb)
            numfmt_count(tok, sizeof tok, mb * r->sc->seq);
        else
            report_say(tok, sizeof tok, r->ph, &r->vals, REPORT_PHRASE_MICROBATCH_NONE, NULL);
        const char *row[] = {plan_mode_name((enum plan_mode)m), settings[m], b, tok};
        doc_table_row(doc, &tb, row, mb ? DOC_ROW_PLAIN : DOC_ROW_BAD);
    }
    doc_table_end(doc);
}

void report_tables_draw(struct doc *doc, const struct report_sc *r, const char *name)
{
    if (strcmp(name, "config") == 0)
        table_config(doc, r);
    else if (strcmp(name, "verdict") == 0)
        table_verdict(doc, r);
    else if (strcmp(name, "terms") == 0)
        table_terms(doc, r);
    else if (strcmp(name, "ladder") == 0)
        table_ladder(doc, r);
    else if (strcmp(name, "microbatch") == 0)
        table_microbatch(doc, r);
}

void report_tables_summary(struct doc *doc, size_t n, report_tables_row_fn *row_at, void *ctx)
{
    /* A long name or fix wraps onto more lines rather than being cut; GPUs = dp * tp * pp * cp. */
    static const struct doc_col layout[] = {
        {NULL, 0.27, CANVAS_ALIGN_LEFT, true},   {NULL, 0.07, CANVAS_ALIGN_RIGHT, false},
        {NULL, 0.10, CANVAS_ALIGN_LEFT, false},  {NULL, 0.11, CANVAS_ALIGN_RIGHT, false},
        {NULL, 0.11, CANVAS_ALIGN_RIGHT, false}, {NULL, 0.34, CANVAS_ALIGN_LEFT, true}};
    if (n == 0)
        return;
    struct doc_col cols[6];
    char heads[6][CELL];
    const struct report_sc *r = row_at(ctx, 0);
    if (!r) {
        doc_fail(doc, -1);
        return;
    }
    table_columns(r->ph, NULL, REPORT_PHRASE_SUMMARY_COLUMNS, layout, 6, cols, heads);
    struct doc_table tb = {cols, 6, 0};
    doc_table_start(doc, &tb, n < 3 ? n : 3);
    for (size_t i = 0; i < n && !doc->error; i++) {
        if (i > 0 && !(r = row_at(ctx, i))) {
            doc_fail(doc, -1);
            return;
        }
        char verdict[CELL], fix[REPORT_VALUE_MAX];
        report_say(verdict, sizeof verdict, r->ph, &r->vals,
                   r->t.fits ? REPORT_PHRASE_SUMMARY_FITS : REPORT_PHRASE_SUMMARY_OOM, NULL);
        /* Nothing fits: the states need more GPUs, or they would fit and the activations do
         * not (doc/model.md 11.3). */
        bool nothing = r->plan.fix == PLAN_FIX_NOTHING && !r->cheap_used;
        bool acts = r->plan.gpus_for_states <= plan_gpus(r->sc);
        report_say(fix, sizeof fix, r->ph, &r->vals,
                   r->plan.fix == PLAN_FIX_NONE ? REPORT_PHRASE_SUMMARY_FIX_NONE
                   : nothing && acts            ? REPORT_PHRASE_SUMMARY_FIX_NOTHING_ACTS
                   : nothing                    ? REPORT_PHRASE_SUMMARY_FIX_NOTHING
                                                : REPORT_PHRASE_SUMMARY_FIX,
                   "fix_id",
                   plan_fix_name(r->cheap_used ? cheapest_kind(r->sc, &r->cheap.sc) : r->plan.fix),
                   NULL);
        const char *row[] = {r->vals.v[REPORT_PH_NAME], r->vals.v[REPORT_PH_GPUS],   verdict,
                             r->vals.v[REPORT_PH_PEAK], r->vals.v[REPORT_PH_BUDGET], fix};
        doc_table_row(doc, &tb, row, r->t.fits ? DOC_ROW_OK : DOC_ROW_BAD);
    }
    doc_table_end(doc);
}

double report_tables_keep_height(const char *name)
{
    return strcmp(name, "verdict") == 0 ? 80 : 4 * DOC_ROW_H;
}
