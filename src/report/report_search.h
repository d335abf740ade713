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
 * GiB. The charts bin the layouts as they come: the document costs the same for ten layouts or
 * ten million. The same input gives the same bytes (no date is written).
 *
 * The caller owns the jobs and everything they point to; report_search_write allocates and frees
 * what else it uses. The file is written through out_write_atomic: the folder must exist, and a
 * failure leaves a previous file untouched.
 */
#ifndef MEMFIT_REPORT_SEARCH_H
#define MEMFIT_REPORT_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "base/units.h"
#include "model/scenario.h"
#include "plan/search.h"

struct report_search_job {
    const char *name;                   /* the job's name */
    const struct scenario *job;         /* the job's row */
    const struct search_result *result; /* counts, n_top */
    const struct search_layout *top;    /* result->n_top layouts, the best first */
    const struct search_point *points;  /* every evaluated layout (may be many: 10^5-10^6) */
    size_t n_points;
    uint64_t gpus; /* the GPUs searched (--gpus-range: the count found; 0: none fits) */
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
