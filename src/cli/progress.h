/*
 * progress: the progress bar of a long command on standard error ("label [####    ]  42%"),
 * drawn only where it cannot get in the way: not with -q or --progress never, with auto only on
 * a terminal and for long work, never into the rows.
 */
#ifndef MEMFIT_PROGRESS_H
#define MEMFIT_PROGRESS_H

#include <stdbool.h>

#include "cli/options.h"

struct progress {
    bool on;
    const char *label;
    long last_pct;
};

/*
 * A progress bar on stderr, unless -q or --progress never; with auto only on a terminal and for
 * long work (big). Never when the command's rows go to stdout and stdout is stderr's terminal or
 * file: the bar would be drawn into the rows.
 */
void progress_start(struct progress *p, const struct options *o, const char *label, bool big,
                    bool rows_on_stdout);
void progress_show(struct progress *p, double done, double total);
void progress_end(struct progress *p);

#endif
