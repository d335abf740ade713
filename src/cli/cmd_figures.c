/* cmd_figures: see commands.h. memfit figures: the lesson's five figures. */
#include "cli/commands.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/diag.h"
#include "cli/options.h"
#include "cli/session.h"
#include "draw/canvas_cairo.h"
#include "draw/figures.h"

int cmd_figures(const struct options *o)
{
    struct diag d;
    diag_init(&d, session_print_message, (void *)o);
    if (o->n_files > 0)
        return options_usage_error(o, "figures: takes no FILE (got '%s')", o->files[0]);
    int rc = figures_write(o->out ? o->out : "out/figures", getenv("SOURCE_DATE_EPOCH"), &d);
    canvas_cairo_shutdown();
    if (rc != 0)
        return EXIT_USAGE;
    if (!o->quiet)
        fprintf(stderr, "memfit: wrote the lesson's five figures (PNG, SVG, PDF) into %s\n",
                o->out ? o->out : "out/figures");
    return EXIT_ALL_OK;
}
