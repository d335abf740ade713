/*
 * report_search: the PDF of `memfit search --report` (doc/memfit.1).
 *
 * One document: a first page with a row per job (its GPUs, the layouts tried and fitting, the
 * fastest layout, its step time and peak) and the note on the cost model, then a section per
 * job: its configuration (model, tokens, training, GPUs, budget, the choices its row pins), a
 * sentence on the search's counts and the fastest layout, the table of the fastest layouts (rank,
 * tp, pp, vpp, cp, ep, dp, ZeRO, attention, recompute, offload, b, peak, step time), the scatter
 * of every layout evaluated (peak against step time, chart.h) and the tp x pp map of the fastest
 * step time. Every word is a phrase of templates/phrases.tmpl (report_phrases.h); sizes in GB or
 * GiB. The same input gives the same bytes (no date is written).
 *
 * A job's layouts are not kept: a struct report_search_plot takes them one by one as the search
 * evaluates them and keeps what the pages draw of them - their count, the scatter's bins and the
 * map's cells - in a fixed size (about 160 KB), the same for ten layouts or ten million.
 *
 * The caller owns the jobs and everything they point to; report_search_write allocates and frees
 * what else it uses. The file is written through out_write_making_dirs: its missing folders are
 * made, and a failure removes them and leaves a previous file untouched.
 */
#ifndef MEMFIT_REPORT_SEARCH_H
#define MEMFIT_REPORT_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "base/units.h"
#include "draw/chart.h"
#include "model/scenario.h"
#include "plan/search.h"

/*
 * What a job's pages draw of the layouts its search evaluated: their count, the tp x pp map of
 * the fastest step time and the scatter of peak against step time (chart.h), each layout binned
 * as it comes. The scatter's axes span every layout, so a layout's bin is known only once the
 * last one is seen: the layouts are given twice, first to report_search_plot_note (the count, the
 * axes' ranges, the map, in the search's order), then, once report_search_plot_axes has set the
 * axes, to report_search_plot_bin (the scatter, in any order). Fixed size: nothing else is kept.
 */
struct report_search_plot {
    uint64_t n_points;              /* layouts noted */
    bool timed;                     /* one has a step time: the charts are drawn */
    double min_s, max_s, max_bytes; /* the step times' range (timed ones), the highest peak */
    struct chart_map map;
    struct chart_scatter scatter; /* set by report_search_plot_axes */
};

/* An empty plot. */
void report_search_plot_init(struct report_search_plot *p);

/* The first pass: one more layout evaluated (its count, the ranges, the map). */
void report_search_plot_note(struct report_search_plot *p, const struct search_point *pt);

/* Between the passes: the scatter's axes from the ranges noted, on a GPU of gpu_bytes. */
void report_search_plot_axes(struct report_search_plot *p, uint64_t gpu_bytes);

/* The second pass: a layout noted, into its bin of the scatter. */
void report_search_plot_bin(struct report_search_plot *p, double step_s, uint64_t peak_bytes,
                            bool fits);

/* --gpus-range: the scaling curve, the fastest layout of each count from the fewest that fit,
 * doubled up to the range's end (doc/model.md 11.7), the first at most CHART_SCALING_MAX. */
struct report_search_curve {
    size_t n;
    uint64_t gpus[CHART_SCALING_MAX];
    struct search_layout best[CHART_SCALING_MAX];
};

struct report_search_job {
    const char *name;                      /* the job's name */
    const struct scenario *job;            /* the job's row */
    const struct search_result *result;    /* counts, n_top */
    const struct search_layout *top;       /* result->n_top layouts, the best first */
    const struct report_search_plot *plot; /* its layouts evaluated; NULL: none */
    uint64_t gpus; /* the GPUs searched (--gpus-range: the count found; 0: none fits) */
    const struct report_search_curve *curve; /* --gpus-range: drawn with 2 counts or more */
};

/* Writes the report of jobs[0..n) (n >= 1) to path in units u. Returns 0, or -1 with a message
 * in d (no phrase catalogue, a libharu failure, an unwritable path). */
int report_search_write(const struct report_search_job *jobs, size_t n, const char *path,
                        enum units u, struct diag *d);

/* What report_search_write_opts may change; report_search_write takes the defaults. */
struct report_search_options {
    enum units units;
    const char *phrases;         /* the phrase catalogue; NULL: templates/phrases.tmpl */
    const char *phrase_template; /* a report template (memfit report --template): its @phrase blocks
                                  * replace the catalogue's; NULL: none */
};

int report_search_write_opts(const struct report_search_job *jobs, size_t n, const char *path,
                             const struct report_search_options *opt, struct diag *d);

#endif
