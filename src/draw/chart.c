/* chart: see chart.h. Here the colours, names and ticks every chart shares. */
#include "draw/chart.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

static const struct canvas_rgb BLACK = {0, 0, 0};

/* ---------------------------------------------------------------- colours, units, ticks */

struct canvas_rgb chart_term_colour(enum chart_term t)
{
    /* One colour per term in every chart and figure: weights blue, gradients yellow, optimizer
     * states violet, activations orange, logits magenta; what a real step adds: autocast's
     * weight copies light blue (copies of the weights), temporaries brown. */
    static const struct canvas_rgb colours[CHART_STEP_TERMS] = {
        {0.22, 0.45, 0.80}, {0.95, 0.78, 0.15}, {0.56, 0.40, 0.78}, {0.96, 0.55, 0.13},
        {0.80, 0.10, 0.55}, {0.60, 0.78, 0.95}, {0.55, 0.36, 0.22},
    };
    return (unsigned)t < CHART_STEP_TERMS ? colours[t] : BLACK;
}

const char *chart_term_name(enum chart_term t)
{
    static const char *const names[CHART_STEP_TERMS] = {
        "weights", "gradients",       "optimizer states", "activations",
        "logits",  "autocast copies", "temporaries"};
    return (unsigned)t < CHART_STEP_TERMS ? names[t] : "?";
}

struct canvas_rgb chart_states_colour(void)
{
    return (struct canvas_rgb){0.70, 0.70, 0.70};
}

struct canvas_rgb chart_recompute_colour(void)
{
    return (struct canvas_rgb){0.10, 0.62, 0.32};
}

/* Intervals of a step over [lo, hi] once both ends are rounded outwards to ticks. */
static double tick_index(double v, double step, bool up)
{
    double q = v / step;
    double r = nearbyint(q);
    if (fabs(q - r) < 1e-9)
        return r;
    return up ? ceil(q) : floor(q);
}

size_t chart_ticks(double lo, double hi, int max_ticks, double *ticks, size_t cap, double *step)
{
    static const double mant[] = {1, 2, 2.5, 5};
    if (!(hi > lo))
        hi = lo + 1;
    if (max_ticks < 1)
        max_ticks = 1;
    double p = pow(10, floor(log10((hi - lo) / max_ticks)));
    double s = 0, first = 0, last = 0;
    for (int e = 0; e < 3 && s == 0; e++, p *= 10) {
        for (size_t i = 0; i < sizeof mant / sizeof mant[0]; i++) {
            double cand = mant[i] * p;
            double f = tick_index(lo, cand, false), l = tick_index(hi, cand, true);
            if (l - f <= max_ticks) {
                s = cand;
                first = f;
                last = l;
                break;
            }
        }
    }
    size_t n = 0;
    for (double i = first; i <= last && n < cap; i++) {
        double v = i * s;
        ticks[n++] = v == 0 ? 0 : v; /* no -0 */
    }
    if (step)
        *step = s;
    return n;
}

void chart_format_tick(double v, double step, char *buf, size_t size)
{
    int dec = 0;
    while (dec < 6) {
        double scaled = step * pow(10, dec);
        if (fabs(scaled - nearbyint(scaled)) < 1e-6 * (scaled > 1 ? scaled : 1))
            break;
        dec++;
    }
    if (fabs(v) < step * 1e-9)
        v = 0;
    snprintf(buf, size, "%.*f", dec, v);
}

/* The ticks m x 10^e of [lo, hi] for the mantissas m of one set; counts them when ticks is NULL. */
static size_t log_ticks_of(double lo, double hi, const double *mant, size_t n_mant, double *ticks,
                           size_t cap)
{
    double e0 = floor(log10(lo)), e1 = ceil(log10(hi));
    if (e1 - e0 > 60) /* no chart spans 60 decades: the ends only */
        e1 = e0 + 60;
    size_t n = 0;
    for (double e = e0; e <= e1; e++)
        for (size_t i = 0; i < n_mant; i++) {
            double v = mant[i] * pow(10, e);
            if (v < lo * (1 - 1e-9) || v > hi * (1 + 1e-9))
                continue;
            if (ticks && n < cap)
                ticks[n] = v;
            n++;
        }
    return ticks && n > cap ? cap : n;
}

size_t chart_log_ticks(double lo, double hi, int max_ticks, double *ticks, size_t cap)
{
    static const double mant[][9] = {{1}, {1, 2, 5}, {1, 2, 3, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
    static const size_t n_mant[] = {1, 3, 4, 9};
    if (!(lo > 0) || !(hi > lo) || !isfinite(hi))
        return 0;
    /* The sparsest set that gives three ticks, unless it gives more than max_ticks. */
    size_t pick = 0;
    for (size_t k = 0; k < sizeof n_mant / sizeof *n_mant; k++) {
        size_t count = log_ticks_of(lo, hi, mant[k], n_mant[k], NULL, 0);
        if (k > 0 && count > (size_t)(max_ticks > 1 ? max_ticks : 1))
            break;
        pick = k;
        if (count >= 3)
            break;
    }
    return log_ticks_of(lo, hi, mant[pick], n_mant[pick], ticks, cap);
}
