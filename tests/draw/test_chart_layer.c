/*
 * Tests of the layer charts, through the recording canvas (tests/support/chart_checks.h): one
 * layer's activations op by op and its parameters item by item, dense and mixture-of-experts,
 * against the model.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart_checks.h"
#include "draw/canvas_rec.h"
#include "draw/chart.h"
#include "model/model.h"
#include "model_fixtures.h"

/* ---------------------------------------------------------------- one layer's activations */

/* The bytes a walk adds up to, for a whole layer (tp = 1). */
static double walk_bytes(const struct scenario *sc)
{
    struct chart_walk_op ops[CHART_WALK_MAX];
    size_t n = chart_layer_walk_ops(sc, ops, CHART_WALK_MAX);
    assert_true(n > 0);
    double sbh = (double)(sc->seq * sc->micro_batch * sc->hidden);
    double as2b = (double)(sc->heads * sc->seq * sc->seq * sc->micro_batch);
    double asb = (double)(sc->heads * sc->seq * sc->micro_batch);
    return chart_walk_total(ops, n, CHART_WALK_SBH) * sbh +
           chart_walk_total(ops, n, CHART_WALK_AS2B) * as2b +
           chart_walk_total(ops, n, CHART_WALK_ASB) * asb;
}

static void expect_walk_matches_model(const struct scenario *sc)
{
    struct model_layer_act a;
    assert_int_equal(model_layer_act(sc, &a), MODEL_OK);
    assert_true(near(walk_bytes(sc), (double)a.total, 0.5));
}

static void test_walk_ops(void **state)
{
    (void)state;
    struct scenario sc;
    struct chart_walk_op ops[CHART_WALK_MAX];
    scenario_lesson_example(&sc);
    /* doc/model.md section 4.1: 34 sbh + 5 as^2b, 15 tensors. */
    size_t n = chart_layer_walk_ops(&sc, ops, CHART_WALK_MAX);
    assert_int_equal(n, 15);
    assert_true(chart_walk_total(ops, n, CHART_WALK_SBH) == 34);
    assert_true(chart_walk_total(ops, n, CHART_WALK_AS2B) == 5);
    assert_string_equal(ops[0].name, "LN1 input");
    assert_int_equal(chart_layer_walk_ops(&sc, ops, 14), 0);
    expect_walk_matches_model(&sc);
    /* FlashAttention: 34 sbh + 4 asb. */
    sc.attention = ATTENTION_FLASH;
    n = chart_layer_walk_ops(&sc, ops, CHART_WALK_MAX);
    assert_true(chart_walk_total(ops, n, CHART_WALK_SBH) == 34);
    assert_true(chart_walk_total(ops, n, CHART_WALK_AS2B) == 0);
    assert_true(chart_walk_total(ops, n, CHART_WALK_ASB) == 4);
    expect_walk_matches_model(&sc);
    /* Selective recomputation: the core is rebuilt, 34 sbh. */
    sc.attention = ATTENTION_PLAIN;
    sc.recompute = RECOMPUTE_SELECTIVE;
    n = chart_layer_walk_ops(&sc, ops, CHART_WALK_MAX);
    assert_true(chart_walk_total(ops, n, CHART_WALK_SBH) == 34);
    assert_true(chart_walk_total(ops, n, CHART_WALK_AS2B) == 0);
    expect_walk_matches_model(&sc);
    /* No dropout, GQA with g = 4: 28 + 4/4 sbh + 2 as^2b (doc/model.md 4.4). */
    sc.recompute = RECOMPUTE_NONE;
    sc.dropout = false;
    sc.kv_heads = 4;
    n = chart_layer_walk_ops(&sc, ops, CHART_WALK_MAX);
    assert_true(chart_walk_total(ops, n, CHART_WALK_SBH) == 29);
    assert_true(chart_walk_total(ops, n, CHART_WALK_AS2B) == 2);
    expect_walk_matches_model(&sc);
    /* Llama 2 7B shape: (12 + 4/g) sbh + 8 sbf + 2 as^2b. */
    sc.arch = ARCH_LLAMA;
    sc.hidden = 4096;
    sc.heads = sc.kv_heads = 32;
    sc.ffn = 11008;
    n = chart_layer_walk_ops(&sc, ops, CHART_WALK_MAX);
    assert_true(near(chart_walk_total(ops, n, CHART_WALK_SBH), 16 + 8.0 * 11008 / 4096, 1e-12));
    expect_walk_matches_model(&sc);
}

static void test_walk_geometry(void **state)
{
    (void)state;
    struct scenario sc;
    struct chart_walk_op ops[CHART_WALK_MAX];
    scenario_lesson_example(&sc);
    for (int flash = 0; flash < 2; flash++) {
        sc.attention = flash ? ATTENTION_FLASH : ATTENTION_PLAIN;
        size_t n = chart_layer_walk_ops(&sc, ops, CHART_WALK_MAX);
        struct chart_walk d = {"walk", ops, n, 16.0 / 2048, 0};
        struct canvas_rec r;
        canvas_rec_init(&r, 600, 400);
        struct chart_geom g;
        chart_walk_draw(&r.canvas, X0, Y0, W, H, &d, &g);
        check_layout(&r, &g);
        /* The orange bars tile 0..34 sbh: their widths add up to 34 units (twice, with the
         * total row). */
        double width = 0, pt_per_unit = g.plot_w / (g.x_max - g.x_min);
        for (size_t i = 0; i < r.n; i++) {
            const struct canvas_rec_call *k = &r.calls[i];
            if (k->op == CANVAS_REC_FILL && k->box.y0 >= g.plot_y &&
                same_rgb(k->fill, chart_term_colour(CHART_ACT)))
                width += k->box.x1 - k->box.x0;
        }
        assert_true(near(width, 2 * 34 * pt_per_unit, 1e-6));
        canvas_rec_release(&r);
    }
}

/* ---------------------------------------------------------------- one layer's parameters */

static double items_params(const struct scenario *sc)
{
    struct chart_param_item it[CHART_PARAM_MAX];
    size_t n = chart_layer_param_items(sc, it, CHART_PARAM_MAX);
    assert_true(n > 0);
    double s = 0, h = (double)sc->hidden;
    for (size_t i = 0; i < n; i++)
        s += it[i].h2 * h * h;
    return s;
}

static void test_param_items(void **state)
{
    (void)state;
    struct scenario sc;
    uint64_t layer;
    scenario_lesson_example(&sc);
    /* doc/model.md section 9.1: 12h^2 + 13h = 50,358,272. */
    assert_true(near(items_params(&sc), 50358272, 1e-6));
    /* Llama 2 7B: 4h^2 + 3hf + 2h per layer; with GQA W_K and W_V shrink by g. */
    sc.arch = ARCH_LLAMA;
    sc.hidden = 4096;
    sc.heads = sc.kv_heads = 32;
    sc.ffn = 11008;
    assert_int_equal(model_layer_params(&sc, &layer), MODEL_OK);
    assert_true(near(items_params(&sc), (double)layer, 1e-6));
    sc.kv_heads = 8;
    assert_int_equal(model_layer_params(&sc, &layer), MODEL_OK);
    assert_true(near(items_params(&sc), (double)layer, 1e-6));
    struct chart_param_item it[CHART_PARAM_MAX];
    assert_int_equal(chart_layer_param_items(&sc, it, 3), 0);
    assert_int_equal(chart_layer_param_items(&sc, it, CHART_PARAM_MAX), 8);
    assert_true(it[1].h2 == 0.25 && it[2].h2 == 0.25);
}

static void test_params_geometry(void **state)
{
    (void)state;
    struct scenario sc;
    struct chart_param_item it[CHART_PARAM_MAX];
    scenario_lesson_example(&sc);
    size_t n = chart_layer_param_items(&sc, it, CHART_PARAM_MAX);
    struct chart_params d = {"GPT", it, n, 0};
    struct canvas_rec r;
    canvas_rec_init(&r, 600, 400);
    struct chart_geom g;
    chart_params_draw(&r.canvas, X0, Y0, W, H, &d, &g);
    check_layout(&r, &g);
    check_round_ticks(g.y_ticks, g.n_y_ticks, g.y_step);
    /* The MLP bars are 4 h^2 high, 4 times the attention bars. */
    double pt_per_unit = g.plot_h / g.y_max;
    size_t tall = 0;
    for (size_t i = 0; i < r.n; i++) {
        const struct canvas_rec_call *k = &r.calls[i];
        if (k->op == CANVAS_REC_FILL && k->box.y0 > g.plot_y &&
            near(k->box.y1 - k->box.y0, 4 * pt_per_unit, 1e-9))
            tall++;
    }
    assert_int_equal(tall, 2);
    canvas_rec_release(&r);
}

/* Mixtral 8x7B: GQA attention, 8 routed experts of 14336 with top 2, no shared expert. */
static void mixtral(struct scenario *sc)
{
    scenario_lesson_example(sc);
    sc->arch = ARCH_LLAMA;
    sc->dropout = sc->tied = false;
    sc->layers = 32;
    sc->hidden = 4096;
    sc->heads = 32;
    sc->kv_heads = 8;
    sc->vocab = 32000;
    sc->ffn = sc->expert_ffn = 14336;
    sc->experts = 8;
    sc->top_k = 2;
}

/* An MoE layer's items: every parameter of the layer once, the routed experts as one item of E
 * copies, the router's score bias in the router's item, no dense MLP. */
static void test_param_items_moe(void **state)
{
    (void)state;
    struct scenario sc;
    struct terms t;
    struct chart_param_item it[CHART_PARAM_MAX];
    deepseek_v3(&sc);
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_true(near(items_params(&sc), (double)t.layer_params, 1e-3));
    size_t n = chart_layer_param_items(&sc, it, CHART_PARAM_MAX);
    size_t experts = 0, routers = 0, shared = 0, mlp = 0;
    double h2 = 7168.0 * 7168.0;
    for (size_t i = 0; i < n; i++) {
        experts += it[i].group == CHART_PARAM_EXPERTS;
        routers += it[i].group == CHART_PARAM_ROUTER;
        shared += it[i].group == CHART_PARAM_SHARED;
        mlp += it[i].group == CHART_PARAM_MLP;
        if (it[i].group == CHART_PARAM_EXPERTS) {
            assert_int_equal(it[i].copies, 256);
            assert_true(near(it[i].h2 * h2, 256.0 * 3 * 7168 * 2048, 1e-3));
        } else {
            assert_true(it[i].copies == 1);
        }
        if (it[i].group == CHART_PARAM_ROUTER) /* h E + E */
            assert_true(near(it[i].h2 * h2, 7168.0 * 256 + 256, 1e-6));
    }
    assert_true(experts == 1 && routers == 1 && shared == 1 && mlp == 0);
    /* Mixtral: W_Q, W_K, W_V, W_O, the experts, the router, the norms. */
    mixtral(&sc);
    assert_int_equal(model_peak(&sc, &t), MODEL_OK);
    assert_true(near(items_params(&sc), (double)t.layer_params, 1e-3));
    assert_int_equal(chart_layer_param_items(&sc, it, CHART_PARAM_MAX), 7);
    assert_true(it[4].group == CHART_PARAM_EXPERTS && it[4].copies == 8);
    assert_true(near(it[4].h2, 8 * 3 * 14336.0 / 4096, 1e-12));
    assert_int_equal(chart_layer_param_items(&sc, it, 6), 0);
}

/* The legend lists the groups of the layer's items, and only those. */
static void test_params_legend(void **state)
{
    (void)state;
    static const char *const groups[] = {
        "attention", "MLP", "shared experts", "router", "routed experts", "biases and norms"};
    static const bool dense_has[] = {true, true, false, false, false, true};
    static const bool deepseek_has[] = {true, false, true, true, true, true};
    static const bool mixtral_has[] = {true, false, false, true, true, true};
    const bool *has[] = {dense_has, deepseek_has, mixtral_has};
    for (int m = 0; m < 3; m++) {
        struct scenario sc;
        struct chart_param_item it[CHART_PARAM_MAX];
        if (m == 0)
            scenario_lesson_example(&sc);
        else if (m == 1)
            deepseek_v3(&sc);
        else
            mixtral(&sc);
        size_t n = chart_layer_param_items(&sc, it, CHART_PARAM_MAX);
        struct chart_params d = {"one layer", it, n, 0};
        struct canvas_rec r;
        canvas_rec_init(&r, 600, 400);
        struct chart_geom g;
        chart_params_draw(&r.canvas, X0, Y0, W, H, &d, &g);
        for (size_t k = 0; k < sizeof groups / sizeof *groups; k++)
            if (has_text(&r, groups[k]) != has[m][k])
                fail_msg("model %d: legend entry '%s' %s", m, groups[k],
                         has[m][k] ? "missing" : "unexpected");
        /* The whole layer's panel and the copies' count only with routed experts. */
        assert_true(has_text(&r, "whole layer") == (m > 0));
        assert_true(has_text(&r, m == 1 ? "\xc3\x97 256" : "\xc3\x97 8") == (m > 0));
        canvas_rec_release(&r);
    }
}

/* An MoE layer's chart: everything inside the chart, the data inside the plot, no text over
 * another; each bar proportional to one copy of its item (one routed expert, 0.857 h^2 for
 * DeepSeek-V3, against W_O's 2.286); the whole layer's stacked bar split as the items are. */
static void test_params_moe_geometry(void **state)
{
    (void)state;
    struct scenario sc;
    struct chart_param_item it[CHART_PARAM_MAX];
    deepseek_v3(&sc);
    size_t n = chart_layer_param_items(&sc, it, CHART_PARAM_MAX);
    struct chart_params d = {"DeepSeek-V3, one MoE layer", it, n, 0};
    struct canvas_rec r;
    canvas_rec_init(&r, 600, 400);
    struct chart_geom g;
    chart_params_draw(&r.canvas, X0, Y0, W, H, &d, &g);
    check_layout(&r, &g);
    check_round_ticks(g.y_ticks, g.n_y_ticks, g.y_step);
    assert_true(g.y_max < 5); /* the axis is scaled to one expert, not to 219 h^2 */
    double pt_per_unit = g.plot_h / g.y_max, expert = 3 * 2048 / 7168.0;
    double wo = 128.0 * 128 * 7168 / (7168.0 * 7168);
    size_t one_expert = 0, w_o = 0, n_colours = 0;
    struct canvas_rgb expert_rgb[2], colours[8];
    double stacked = 0, largest = 0;
    for (size_t i = 0; i < r.n; i++) {
        const struct canvas_rec_call *k = &r.calls[i];
        if (k->op != CANVAS_REC_FILL || k->box.y0 < g.plot_y - 1e-9)
            continue; /* the legend's swatches are above the plot */
        double bh = k->box.y1 - k->box.y0;
        if (k->box.x0 > g.plot_x + g.plot_w) { /* the whole layer's stacked bar */
            stacked += bh;
            largest = fmax(largest, bh);
            continue;
        }
        if (same_rgb(k->fill, chart_term_colour(CHART_WEIGHTS)) && near(bh, wo * pt_per_unit, 1e-9))
            w_o++;
        if (near(bh, expert * pt_per_unit, 1e-9) && one_expert < 2)
            expert_rgb[one_expert++] = k->fill;
        bool seen = false;
        for (size_t c = 0; c < n_colours; c++)
            seen = seen || same_rgb(colours[c], k->fill);
        if (!seen && n_colours < 8)
            colours[n_colours++] = k->fill;
    }
    assert_int_equal(w_o, 1);
    /* One routed expert and the shared expert are both 3 h 2048, in two colours. */
    assert_int_equal(one_expert, 2);
    assert_false(same_rgb(expert_rgb[0], expert_rgb[1]));
    assert_int_equal(n_colours, 5); /* attention, routed, shared, router, norms */
    /* The stacked bar: the routed experts, 256 * 0.857 of the layer's 224.0 h^2, the rest on
     * top. */
    double total = 0;
    for (size_t i = 0; i < n; i++)
        total += it[i].h2;
    assert_true(stacked > 50);
    assert_true(near(largest / stacked, 256 * expert / total, 1e-9));
    canvas_rec_release(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walk_ops),
        cmocka_unit_test(test_walk_geometry),
        cmocka_unit_test(test_param_items),
        cmocka_unit_test(test_params_geometry),
        cmocka_unit_test(test_param_items_moe),
        cmocka_unit_test(test_params_legend),
        cmocka_unit_test(test_params_moe_geometry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
