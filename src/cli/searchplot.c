/* searchplot: see searchplot.h. */
#include "cli/searchplot.h"

#include <stdlib.h>
#include <string.h>

#define KEPT_FIRST 4096 /* the buffer's first size, doubled up to max_kept */

void searchplot_init(struct searchplot *sp, size_t max_kept)
{
    memset(sp, 0, sizeof *sp);
    sp->max_kept = max_kept;
}

void searchplot_begin(struct searchplot *sp, struct report_search_plot *plot)
{
    sp->plot = plot;
    sp->n_kept = 0;
    sp->spilled = false;
}

/* Room for one more layout: false when the buffer is at max_kept or cannot grow. */
static bool kept_room(struct searchplot *sp)
{
    if (sp->n_kept < sp->cap_kept)
        return true;
    if (sp->cap_kept >= sp->max_kept)
        return false;
    size_t cap = sp->cap_kept ? 2 * sp->cap_kept : KEPT_FIRST;
    cap = cap < sp->max_kept ? cap : sp->max_kept;
    struct searchplot_point *kept = realloc(sp->kept, cap * sizeof *kept);
    if (!kept)
        return false;
    sp->kept = kept;
    sp->cap_kept = cap;
    return true;
}

void searchplot_note(void *searchplot, const struct search_point *p)
{
    struct searchplot *sp = searchplot;
    report_search_plot_note(sp->plot, p);
    if (sp->spilled)
        return;
    if (!kept_room(sp)) {
        sp->spilled = true;
        return;
    }
    sp->kept[sp->n_kept++] = (struct searchplot_point){p->step_time_s, p->peak_bytes, p->fits};
}

bool searchplot_end(struct searchplot *sp, uint64_t gpu_bytes)
{
    report_search_plot_axes(sp->plot, gpu_bytes);
    if (sp->spilled)
        return false;
    for (size_t i = 0; i < sp->n_kept; i++)
        report_search_plot_bin(sp->plot, sp->kept[i].step_s, sp->kept[i].peak_bytes,
                               sp->kept[i].fits);
    sp->n_kept = 0;
    return true;
}

void searchplot_bin(void *searchplot, const struct search_point *p)
{
    struct searchplot *sp = searchplot;
    report_search_plot_bin(sp->plot, p->step_time_s, p->peak_bytes, p->fits);
}

size_t searchplot_bytes(const struct searchplot *sp)
{
    return sp->cap_kept * sizeof *sp->kept;
}

void searchplot_release(struct searchplot *sp)
{
    free(sp->kept);
    memset(sp, 0, sizeof *sp);
}
