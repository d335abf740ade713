/*
 * The template fuzz target: any bytes, parsed as a report template against the report's own
 * names and phrases (a scenario template may redefine any phrase of templates/phrases.tmpl),
 * then every block expanded, phrases included. It must never crash, leak or hit undefined
 * behaviour: a template is either accepted whole or rejected with messages. Built into
 * tests/fuzz/test_fuzz_template.c (make test, make asan) and with libFuzzer by `make fuzz`.
 */
#ifndef MEMFIT_FUZZ_TEMPLATE_H
#define MEMFIT_FUZZ_TEMPLATE_H

#include <stdint.h>
#include <stdlib.h>

#include "report/report.h"
#include "report/report_phrases.h"
#include "report/template.h"

static const char *fuzz_lookup(void *ctx, const char *name)
{
    (void)ctx;
    return name; /* any text: the expansion's bookkeeping is what is being tested */
}

/* Returns 1 when the template was accepted, 0 when rejected. */
static int fuzz_template_one(const uint8_t *data, size_t size)
{
    static const char *const charts[] = {"fit",       "phases", "stages", "step",
                                         "step_ckpt", "kcurve", "walk",   "params"};
    static const char *const tables[] = {"config", "verdict",    "terms",
                                         "ladder", "microbatch", "summary"};
    struct template_names names = {NULL, 0, charts, 8, tables, 6};
    names.placeholders = report_placeholder_names(&names.n_placeholders);
    struct template_phrases phrases;
    report_phrases_known(&phrases);
    struct diag d;
    diag_init(&d, NULL, NULL);
    struct template t;
    template_init(&t);
    int ok = template_parse_with_phrases(&t, "fuzz.tmpl", (const char *)data, size, &names,
                                         &phrases, &d) == 0;
    for (size_t i = 0; ok && i < t.n; i++) {
        if (t.blocks[i].text &&
            (t.blocks[i].kind == TEMPLATE_PARAGRAPH || t.blocks[i].kind == TEMPLATE_HEADING ||
             t.blocks[i].kind == TEMPLATE_ITEM || t.blocks[i].kind == TEMPLATE_PHRASE))
            free(template_expand(t.blocks[i].text, fuzz_lookup, NULL));
    }
    template_release(&t);
    return ok;
}

#ifdef MEMFIT_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_template_one(data, size);
    return 0;
}
#endif

#endif
