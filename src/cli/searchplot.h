/*
 * searchplot: what memfit search --report keeps of a job's layouts while its search runs - the
 * plot of report_search.h, in memory that does not grow with their number.
 *
 * The plot takes every layout twice: its scatter's axes span them all, so a layout's bin is
 * known only after the last. The first pass is the search itself (searchplot_note, a
 * search_point_fn). What a bin needs of each layout (its step time, peak and whether it fits:
 * 24 bytes) is kept meanwhile, in a buffer reused job after job, up to max_kept layouts
 * (SEARCHPLOT_KEEP in memfit: 24 MiB); searchplot_end bins them from there. A job of more layouts
 * (or one whose buffer could not grow) keeps none: its caller searches it again with
 * searchplot_bin as the search_point_fn. A search gives the same layouts every time, so both
 * ways draw the same bins.
 *
 * The plot is the caller's; the buffer the searchplot's (searchplot_release frees it).
 */
#ifndef MEMFIT_SEARCHPLOT_H
#define MEMFIT_SEARCHPLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/search.h"
#include "report/report_search.h"

#define SEARCHPLOT_KEEP (1u << 20) /* layouts kept for the second pass: 24 MiB */

/* What the scatter's bin of a layout needs. */
struct searchplot_point {
    double step_s;
    uint64_t peak_bytes;
    bool fits;
};

struct searchplot {
    struct report_search_plot *plot; /* the job's (searchplot_begin) */
    struct searchplot_point *kept;   /* n_kept of cap_kept, at most max_kept */
    size_t n_kept, cap_kept, max_kept;
    bool spilled; /* a layout could not be kept: the job is searched again */
};

/* No job yet, keeping at most max_kept layouts (> 0) for the second pass. */
void searchplot_init(struct searchplot *sp, size_t max_kept);

/* A job's search begins: its layouts go to plot (report_search_plot_init'ed). */
void searchplot_begin(struct searchplot *sp, struct report_search_plot *plot);

/* The first pass: a search_point_fn whose ctx is the struct searchplot. */
void searchplot_note(void *searchplot, const struct search_point *p);

/* The search ended: the scatter's axes set (a GPU of gpu_bytes) and the layouts kept binned.
 * false when some were not kept: the same layouts must then be given again to searchplot_bin. */
bool searchplot_end(struct searchplot *sp, uint64_t gpu_bytes);

/* The second pass, when searchplot_end said so: a search_point_fn as searchplot_note. */
void searchplot_bin(void *searchplot, const struct search_point *p);

/* The bytes the searchplot holds (its buffer), whatever the plot. */
size_t searchplot_bytes(const struct searchplot *sp);

void searchplot_release(struct searchplot *sp);

#endif
