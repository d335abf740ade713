/* report_placeholders: see report_placeholders.h. */
#include "report/report_placeholders.h"

#include <string.h>

/* Every placeholder name, the document's first, in the order of enum report_ph less
 * REPORT_PH_DOC_END. */
#define REPORT_PH_NAME(id, name) name,
static const char *const report_placeholders_all[] = {REPORT_DOC_PH(REPORT_PH_NAME)
                                                          REPORT_SC_PH(REPORT_PH_NAME)};
#undef REPORT_PH_NAME

const char *const *report_placeholders_names(size_t *n)
{
    *n = sizeof report_placeholders_all / sizeof *report_placeholders_all;
    return report_placeholders_all;
}

const char *report_placeholders_lookup(void *ctx, const char *name)
{
    struct report_values *vals = ctx;
    for (size_t i = 0; i < REPORT_PH_COUNT - 1; i++)
        if (strcmp(report_placeholders_all[i], name) == 0)
            return vals->v[i < REPORT_PH_DOC_END ? i : i + 1];
    return NULL;
}
