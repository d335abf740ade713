/*
 * Tests of the report's phrases (report_phrases.h) and of '@phrase' in the template language:
 * the shipped catalogue, the phrase blocks and every error with its line, expansion, a
 * template's phrases replacing the shipped ones, the catalogue and the templates documenting
 * every placeholder, and reports (memfit report's, memfit search's) in which every phrase is used
 * with every placeholder C says it fills.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mutate.h"
#include "input/config.h"
#include "report/report.h"
#include "report/report_phrases.h"
#include "report/report_search.h"
#include "report/report_values.h"
#include "search_fixture.h"
#include "base/strbuf.h"
#include "report/template.h"
#include "testutil.h"

/* ---- '@phrase' in the template language --------------------------------------------------- */

static const char *const scope[] = {"peak", "budget"};
static const struct template_phrase defs[] = {
    {"verdict_oom", "", true, 0},
    {"headroom_over", "amount", false, 0},
    {"columns", "", false, 3},
    {"empty", "", false, 0},
};
static const struct template_phrases known = {defs, 4, scope, 2};
static const char *const placeholders[] = {"name"};
static const char *const tables[] = {"verdict"};
static const struct template_names names = {placeholders, 1, NULL, 0, tables, 1};

static int parse(struct template *t, const char *text, struct diag *d)
{
    diag_init(d, NULL, NULL);
    return template_parse_with_phrases(t, "r.tmpl", text, strlen(text), &names, &known, d);
}

static void test_phrase_blocks(void **state)
{
    (void)state;
    struct template t;
    struct diag d;
    const char *text = "# {{name}}\n"
                       "@phrase verdict_oom\n"
                       "  Too big: {{peak}}   \n"
                       "% a comment inside a phrase\n"
                       "# not a heading, - not an item: {{ budget }}\n"
                       "\n"
                       "A paragraph {{name}}.\n"
                       "@phrase empty\n"
                       "@phrase columns\n"
                       "a | | c\n"
                       "@table verdict\n"
                       "@phrase headroom_over\n";
    assert_int_equal(parse(&t, text, &d), 0);
    assert_int_equal(d.count, 0);
    assert_int_equal(t.n, 7);
    assert_int_equal(t.blocks[1].kind, TEMPLATE_PHRASE);
    assert_int_equal(t.blocks[1].phrase, 0);
    assert_int_equal(t.blocks[1].line, 2);
    assert_string_equal(t.blocks[1].text,
                        "Too big: {{peak}} # not a heading, - not an item: {{ budget }}");
    assert_int_equal(t.blocks[2].kind, TEMPLATE_PARAGRAPH); /* the blank line ended the phrase */
    assert_string_equal(t.blocks[3].text, "");              /* ended by the next '@' line */
    assert_int_equal(t.blocks[3].phrase, 3);
    assert_string_equal(t.blocks[4].text, "a | | c");
    assert_int_equal(t.blocks[5].kind, TEMPLATE_TABLE);
    assert_int_equal(t.blocks[6].kind, TEMPLATE_PHRASE); /* ended by the end of the file */
    assert_string_equal(t.blocks[6].text, "");
    template_release(&t);
}

static void test_phrase_errors(void **state)
{
    (void)state;
    struct template t;
    struct diag d;
    /* An unknown phrase, with the closest name; its text is skipped, not checked. */
    assert_int_equal(parse(&t, "# T\n\n@phrase verdict_omm\nToo big: {{amount}}\n", &d), -1);
    assert_int_equal(d.count, 1);
    assert_string_equal(d.first,
                        "r.tmpl:3: unknown phrase 'verdict_omm' (did you mean 'verdict_oom'?)");
    /* A phrase's placeholders are its own, reported on their own line. */
    assert_int_equal(parse(&t, "@phrase headroom_over\nfirst line\n{{amout}} over\n", &d), -1);
    assert_string_equal(d.first,
                        "r.tmpl:3: unknown placeholder '{{amout}}' (did you mean '{{amount}}'?)");
    /* An unscoped phrase may not use the scope's names, nor the template's. */
    assert_int_equal(parse(&t, "@phrase headroom_over\n{{peak}} {{name}}\n", &d), -1);
    assert_int_equal(d.count, 2);
    assert_string_equal(d.first, "r.tmpl:2: unknown placeholder '{{peak}}' (valid: {{amount}})");
    /* A scoped one may use the scope's, not the template's own. */
    assert_int_equal(parse(&t, "@phrase verdict_oom\n{{peak}} {{budget}} {{name}}\n", &d), -1);
    assert_int_equal(d.count, 1);
    assert_string_equal(d.first,
                        "r.tmpl:2: unknown placeholder '{{name}}' (valid: {{peak}}, {{budget}})");
    /* A text line after the template's own placeholders is checked against the template's. */
    assert_int_equal(parse(&t, "@phrase empty\n\n{{amount}}\n", &d), -1);
    assert_string_equal(d.first, "r.tmpl:3: unknown placeholder '{{amount}}' (valid: {{name}})");
    assert_int_equal(parse(&t, "@phrase\n", &d), -1);
    assert_string_equal(d.first, "r.tmpl:1: '@phrase' needs a name");
    assert_int_equal(parse(&t, "@phrase verdict_oom Too big\n", &d), -1);
    assert_string_equal(
        d.first, "r.tmpl:1: '@phrase verdict_oom': the phrase's text goes on the lines below");
    assert_int_equal(parse(&t, "@phrase empty\n\n% again\n@phrase empty\nx\n", &d), -1);
    assert_string_equal(d.first, "r.tmpl:4: phrase 'empty' defined twice (first on line 1)");
    assert_int_equal(parse(&t, "@phrase columns\na | b\n", &d), -1);
    assert_string_equal(d.first,
                        "r.tmpl:1: phrase 'columns' has 2 cells, needs 3 (separated by '|')");
    assert_int_equal(parse(&t, "@phrase columns\n", &d), -1);
    assert_string_equal(d.first,
                        "r.tmpl:1: phrase 'columns' has 1 cell, needs 3 (separated by '|')");
    assert_int_equal(parse(&t, "@phrase headroom_over\n{{amount\n", &d), -1);
    assert_string_equal(d.first, "r.tmpl:2: unclosed placeholder: '{{' without '}}'");
    /* Without phrases, '@phrase' names nothing known. */
    diag_init(&d, NULL, NULL);
    const char *text = "@phrase title\nx\n";
    assert_int_equal(template_parse(&t, "r.tmpl", text, strlen(text), &names, &d), -1);
    assert_string_equal(d.first, "r.tmpl:1: unknown phrase 'title'");
}

/* ---- The catalogue ------------------------------------------------------------------------ */

/* The text of phrase name in ph. */
static const char *text_of(const struct report_phrases *ph, const char *name)
{
    size_t n;
    const struct template_phrase *all = report_phrases_defs(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(all[i].name, name) == 0)
            return ph->text[i];
    fail_msg("no phrase '%s'", name);
    return NULL;
}

static void test_shipped_catalogue(void **state)
{
    (void)state;
    struct report_phrases ph;
    struct diag d;
    diag_init(&d, NULL, NULL);
    report_phrases_init(&ph);
    assert_int_equal(report_phrases_load(&ph, "templates/phrases.tmpl", &d), 0);
    assert_int_equal(d.count, 0);
    for (size_t i = 0; i < REPORT_PHRASE_COUNT; i++)
        assert_non_null(ph.text[i]);
    assert_string_equal(text_of(&ph, "verdict_oom"),
                        "Does not fit: peak {{peak}} > budget {{budget}}");
    assert_string_equal(text_of(&ph, "terms_rows"),
                        "weights | gradients | optimizer states | activations, one layer | "
                        "activations, stored | logits | peak | budget");
    assert_string_equal(text_of(&ph, "config_dropout"), ", dropout");
    report_phrases_release(&ph);
    report_phrases_release(NULL);
}

static void test_catalogue_errors(void **state)
{
    (void)state;
    struct report_phrases ph;
    struct diag d;
    diag_init(&d, NULL, NULL);
    report_phrases_init(&ph);
    /* Text after a blank line is outside any phrase; every phrase not defined is missing: the
     * first of those problems are said, then how many more (a whole list was 290 lines). */
    const char *text = "% a catalogue\n@phrase title\nThe title\n\nmore of the title\n";
    assert_int_equal(report_phrases_parse(&ph, "c.tmpl", text, strlen(text), &d), -1);
    assert_int_equal(d.count, TEMPLATE_ERRORS_SHOWN + 1);
    assert_string_equal(d.first, "c.tmpl:5: text outside a phrase (a phrase ends at a blank line)");
    char last[128];
    snprintf(last, sizeof last, "... and %d more errors in c.tmpl",
             1 + (REPORT_PHRASE_COUNT - 1) - TEMPLATE_ERRORS_SHOWN);
    assert_string_equal(d.last, last);
    assert_null(ph.text[REPORT_PHRASE_TITLE]);
    /* A catalogue that lacks its last two phrases: each is said, and nothing more. */
    size_t n_defs;
    const struct template_phrase *all = report_phrases_defs(&n_defs);
    struct strbuf most;
    strbuf_init(&most);
    for (size_t i = 0; i + 2 < n_defs; i++) {
        strbuf_printf(&most, "@phrase %s\nx", all[i].name);
        for (unsigned c = 1; c < all[i].cells; c++)
            strbuf_puts(&most, "|x");
        strbuf_puts(&most, "\n\n");
    }
    diag_init(&d, NULL, NULL);
    assert_int_equal(report_phrases_parse(&ph, "c.tmpl", most.buf, most.len, &d), -1);
    assert_int_equal(d.count, 2);
    snprintf(last, sizeof last, "c.tmpl: phrase '%s' is missing", all[n_defs - 1].name);
    assert_string_equal(d.last, last);
    strbuf_release(&most);
    /* A catalogue's own errors, with their lines. */
    diag_init(&d, NULL, NULL);
    text = "@phrase verdict_oom\nDoes not fit: {{peek}}\n";
    assert_int_equal(report_phrases_parse(&ph, "c.tmpl", text, strlen(text), &d), -1);
    assert_string_equal(d.first,
                        "c.tmpl:2: unknown placeholder '{{peek}}' (did you mean '{{peak}}'?)");
    diag_init(&d, NULL, NULL);
    assert_int_equal(report_phrases_load(&ph, "/nonexistent/phrases.tmpl", &d), -1);
    assert_string_equal(d.first,
                        "cannot read '/nonexistent/phrases.tmpl': No such file or directory");
    report_phrases_release(&ph);
}

static void test_say_and_override(void **state)
{
    (void)state;
    struct report_phrases ph;
    struct diag d;
    diag_init(&d, NULL, NULL);
    report_phrases_init(&ph);
    assert_int_equal(report_phrases_load(&ph, "templates/phrases.tmpl", &d), 0);
    char buf[REPORT_VALUE_MAX];
    report_say(buf, sizeof buf, &ph, NULL, REPORT_PHRASE_HEADROOM_OVER, "amount", "48.1 GB", NULL);
    assert_string_equal(buf, "48.1 GB over the budget");
    /* A scoped phrase reads the scenario's values. */
    struct report_values *vals = calloc(1, sizeof *vals);
    assert_non_null(vals);
    snprintf(vals->v[REPORT_PH_PEAK], REPORT_VALUE_MAX, "116.1 GB");
    snprintf(vals->v[REPORT_PH_BUDGET], REPORT_VALUE_MAX, "68.0 GB");
    report_say(buf, sizeof buf, &ph, vals, REPORT_PHRASE_VERDICT_OOM, NULL);
    assert_string_equal(buf, "Does not fit: peak 116.1 GB > budget 68.0 GB");
    /* Cut at a character boundary, never overflowed. */
    char small[12];
    report_say(small, sizeof small, &ph, vals, REPORT_PHRASE_VERDICT_FITS, NULL);
    assert_string_equal(small, "Fits: peak ");
    /* Cells, trimmed; an empty one stays. */
    char cells[4][REPORT_CELL_MAX];
    report_cells(&ph, vals, REPORT_PHRASE_CONFIG_COLUMNS, cells, 4);
    assert_string_equal(cells[0], "model");
    assert_string_equal(cells[1], "");
    assert_string_equal(cells[2], "training");
    assert_string_equal(cells[3], "");
    assert_int_equal(ph.misses, 0);
    /* A placeholder C did not fill is a "?" and a miss: a bug the report refuses to hide. */
    report_say(buf, sizeof buf, &ph, NULL, REPORT_PHRASE_HEADROOM_OVER, NULL);
    assert_string_equal(buf, "? over the budget");
    assert_int_equal(ph.misses, 1);
    assert_string_equal(ph.first_miss, "phrase 'headroom_over' has no value for '{{amount}}'");
    /* A template's own phrase replaces the shipped one. */
    struct template t;
    struct template_names tn = {NULL, 0, NULL, 0, NULL, 0};
    struct template_phrases kn;
    report_phrases_known(&kn);
    const char *text = "@phrase verdict_oom\nToo big: {{peak}} needed, {{budget}} at hand\n";
    assert_int_equal(template_parse_with_phrases(&t, "mine.tmpl", text, strlen(text), &tn, &kn, &d),
                     0);
    report_phrases_override(&ph, &t);
    report_say(buf, sizeof buf, &ph, vals, REPORT_PHRASE_VERDICT_OOM, NULL);
    assert_string_equal(buf, "Too big: 116.1 GB needed, 68.0 GB at hand");
    report_say(buf, sizeof buf, &ph, vals, REPORT_PHRASE_VERDICT_FITS, NULL); /* the others stay */
    assert_string_equal(buf, "Fits: peak 116.1 GB ≤ budget 68.0 GB");
    template_release(&t);
    free(vals);
    report_phrases_release(&ph);
}

/* ---- Every placeholder documented --------------------------------------------------------- */

/* The comment lines of file directly above the line "@phrase NAME", joined. */
static void comment_above(const char *file, const char *name, char *out, size_t size)
{
    char want[96];
    snprintf(want, sizeof want, "\n@phrase %s\n", name);
    const char *at = strstr(file, want);
    assert_non_null(at);
    const char *start = at; /* back over the '%' lines just above */
    while (start > file) {
        const char *prev = start - 1;
        while (prev > file && prev[-1] != '\n')
            prev--;
        if (*prev != '%')
            break;
        start = prev;
    }
    size_t n = (size_t)(at - start) < size - 1 ? (size_t)(at - start) : size - 1;
    memcpy(out, start, n);
    out[n] = '\0';
}

static void test_catalogue_documents_placeholders(void **state)
{
    (void)state;
    size_t len, n, nv;
    char *file = test_read_file("templates/phrases.tmpl", &len);
    assert_non_null(file);
    const struct template_phrase *all = report_phrases_defs(&n);
    const char *const *vnames = report_placeholders_names(&nv);
    for (size_t i = 0; i < n; i++) {
        char above[2048], ph[80];
        comment_above(file, all[i].name, above, sizeof above);
        char own[512];
        snprintf(own, sizeof own, "%s", all[i].placeholders);
        for (char *w = strtok(own, " "); w; w = strtok(NULL, " ")) {
            snprintf(ph, sizeof ph, "{{%s}}", w);
            if (!strstr(above, ph))
                fail_msg("templates/phrases.tmpl: the comment above '%s' does not list %s",
                         all[i].name, ph);
            /* A scoped phrase's own names do not hide report.tmpl's. */
            for (size_t k = 0; all[i].scoped && k < nv; k++)
                if (strcmp(vnames[k], w) == 0)
                    fail_msg("phrase '%s': '%s' is also a placeholder of report.tmpl", all[i].name,
                             w);
        }
        if (all[i].scoped && !strstr(above, "report.tmpl"))
            fail_msg("templates/phrases.tmpl: the comment above '%s' does not say it may use "
                     "report.tmpl's placeholders",
                     all[i].name);
    }
    free(file);
}

/* Every line of the comment header of path (the '%' lines), joined. */
static char *comment_header(const char *path)
{
    size_t len;
    char *file = test_read_file(path, &len);
    assert_non_null(file);
    char *p = file;
    while (*p == '%') {
        char *nl = strchr(p, '\n');
        if (!nl)
            break;
        p = nl + 1;
    }
    *p = '\0';
    return file;
}

static void test_templates_list_placeholders(void **state)
{
    (void)state;
    size_t n;
    const char *const *all = report_placeholders_names(&n);
    char *report = comment_header("templates/report.tmpl");
    char *summary = comment_header("templates/summary.tmpl");
    for (size_t i = 0; i < n; i++) {
        char ph[80];
        snprintf(ph, sizeof ph, "{{%s}}", all[i]);
        if (!strstr(report, ph))
            fail_msg("the header of templates/report.tmpl does not list %s", ph);
        if (i < REPORT_PH_DOC_END && !strstr(summary, ph))
            fail_msg("the header of templates/summary.tmpl does not list %s", ph);
    }
    free(report);
    free(summary);
}

/* ---- Every phrase used, every placeholder filled ------------------------------------------- */

/* Scenarios that between them take every branch that chooses a phrase. needs-tp and gqa write
 * gpu_mem_gb (40, 80) beside their GPU preset: the explicit cell wins over the capacity the device
 * reports (40,960 and 81,559 MiB), which keeps full checkpointing and ZeRO-3 their fixes. */
static const char scenarios_csv[] =
    "name,model,arch,layers,hidden,heads,kv_heads,vocab,seq,micro_batch,global_batch,attention,"
    "recompute,dp,tp,pp,sp,zero,offload,gpu,gpu_mem_gb,reserve,dropout,positions,tied,"
    "gpus_per_node,ep,etp,capacity_factor\n"
    "lesson,gpt-1.3b,,,,,,,2048,8,,plain,none,1,1,1,no,0,,,80,,,,,,,,\n"
    "fits,gpt-1.3b,,,,,,,2048,8,,flash,none,1,1,1,no,0,,,80,,,,,,,,\n"
    "dp-zero2,gpt-1.3b,,,,,,,2048,8,64,plain,none,8,1,1,no,2,,A100-40GB,,,,,,,,,\n"
    "zero1-dp1,gpt-1.3b,,,,,,,2048,2,,flash,none,1,1,1,no,1,,,80.5,,,,,,,,\n"
    "pp-first,gpt-1.3b,,,,,,,2048,4,,flash,none,2,1,4,no,1,,H100-80GB,,,,,,,,,\n"
    "pp-ckpt,gpt-1.3b,,,,,,,2048,4,,flash,3,2,1,4,no,1,,H100-80GB,,,,,,,,,\n"
    "ckpt-k,gpt-1.3b,,,,,,,2048,4,,flash,4,1,1,1,no,0,,,80,,,,,,,,\n"
    "tp-sp,llama2-7b,,,,,,,4096,2,,flash,selective,2,4,1,yes,2,,A100-40GB,,,,,,,,,\n"
    "tp-nosp,llama2-7b,,,,,,,4096,2,,plain,none,2,4,1,no,0,,A100-40GB,,,,,,,,,\n"
    "offloaded,llama2-13b,,,,,,,4096,1,,flash,full,1,1,1,no,0,optimizer,,24,,,,,,,,\n"
    "nothing,llama3-70b,,,,,,,8192,8,,plain,none,1,1,1,no,0,,L4-24GB,,,,,,,,,\n"
    /* nothing fits on any number of GPUs: one layer, one head, a prime seq, one sequence a step */
    "wall,,llama,1,1000000,1,1,32000,8191,1,1,plain,none,1,1,1,no,0,,H100-80GB,,,,,,,,,\n"
    "custom,,gpt,12,768,12,4,50000,1024,64,256,plain,none,2,1,1,no,3,,,16,0.1,no,512,no,,,,\n"
    "gqa,mistral-7b,,,,,,,8192,4,64,plain,none,8,1,1,no,2,,H100-80GB,80,,,,,,,,\n"
    "uneven,gpt-1.3b,,,,,,,2048,8,24,plain,none,3,1,1,no,0,,,80,,,,,,,,\n"
    "needs-tp,llama2-7b,,,,,,,4096,4,,plain,none,8,1,1,no,0,,A100-40GB,40,,,,,,,,\n"
    "needs-zero2,llama2-13b,,,,,,,2048,1,,flash,full,8,1,1,no,0,,,80,,,,,,,,\n"
    "needs-zero3,llama2-13b,,,,,,,4096,1,,flash,full,8,1,1,no,2,,L4-24GB,,,,,,,,,\n"
    "needs-zero3-net,llama2-13b,,,,,,,1024,1,,flash,full,16,1,1,no,2,,L4-24GB,,,,,,,,,\n"
    "needs-offload,llama2-7b,,,,,,,2048,1,,flash,full,1,1,1,no,0,,,80,,,,,1,,,\n"
    "thin,gpt-1.3b,,,,,,,512,16,,flash,none,1,1,1,no,0,,,32,,,,,,,,\n"
    "moe-dropless,mixtral-8x7b,,,,,,,4096,1,,flash,none,8,1,1,no,3,,H100-80GB,,,,,,,8,,\n"
    "moe-capacity,deepseek-v3,,,,,,,4096,1,,flash,none,8,2,1,yes,1,,H100-80GB,,,,,,,4,1,1.25\n";

/* The same under --peak step (the default of the command line), with each implementation
 * choice and precision, peaking at each phase: backward_start, forward (a fused loss; and the
 * first pipeline stage), recompute, backward_end, optimizer. */
static const char step_csv[] =
    "name,model,seq,micro_batch,attention,recompute,dp,pp,zero,gpu,gpu_mem_gb,precision,loss,"
    "grad_buffer,optimizer_impl\n"
    "step-lesson,gpt-1.3b,2048,8,plain,none,1,1,0,,80,mixed,eager,on_demand,foreach\n"
    "step-fits,gpt-1.3b,2048,8,flash,none,1,1,0,,80,megatron,fused,persistent,fused\n"
    "step-pp-first,gpt-1.3b,2048,4,flash,none,2,4,1,H100-80GB,,mixed,,,\n"
    "step-rebuild,gpt-1.3b,8192,1,plain,24,1,1,0,,80,autocast,eager,on_demand,single\n"
    "step-end,gpt-1.3b,128,1,flash,none,1,1,0,,80,fp32,eager,persistent,fused\n"
    "step-frozen,gpt-1.3b,256,1,flash,none,1,1,0,,80,frozen,fused,on_demand,foreach\n"
    "step-optimizer,gpt-1.3b,256,1,flash,none,1,1,0,,80,mixed,fused,on_demand,foreach\n"
    /* nothing fits, the states would (doc/model.md 11.3): on these 2 GPUs, found on 32; on this
     * GPU, none found up to 16 */
    "step-acts,gpt2-small,1048576,1,flash,none,2,1,3,L4-24GB,,mixed,,,\n"
    "step-acts-one,gpt2-small,1048576,1,flash,none,1,1,0,L4-24GB,,mixed,,,\n"
    /* the fix's notes, never applied: 8-bit Adam's and FP8's (an H100, AdamW, bf16) */
    "step-notes,llama3-8b,8192,8,flash,none,1,1,0,H100-80GB,,mixed,,,\n";

/* The pipeline schedules and splits of doc/model.md 6.3 and 6.4: ZB1P; DualPipe on 61 layers
 * (uneven); 105 layers on 35 stages (more stages than @chart stages draws). */
static const char schedules_csv[] =
    "name,model,seq,micro_batch,global_batch,attention,recompute,dp,tp,pp,ep,schedule,gpu,"
    "mtp_layers\n"
    "zb1p,gpt-1.3b,2048,1,16,flash,full,1,1,4,,zb1p,H100-80GB,\n"
    "dualpipe,deepseek-v3,4096,1,32,flash,full,1,1,16,1,dualpipe,H100-80GB,1\n"
    "pp35,mt-nlg-530b,2048,1,35,flash,full,1,8,35,,,A100-80GB,\n"
    "mtp,llama3.1-8b,4096,1,8,flash,selective,1,1,1,,,H100-80GB,1\n";

/* Context and interleaved pipeline parallelism with HSDP, offloaded checkpoints, a mixture of
 * experts whose leading dense layers leave a middle pipeline stage the heaviest, and the ladder's
 * tp and pp rungs on the same GPUs (pp fixes where HSDP groups of one GPU shard nothing). */
static const char parallel_csv[] =
    "name,model,arch,layers,hidden,heads,kv_heads,vocab,ffn,experts,top_k,expert_ffn,"
    "dense_layers,seq,micro_batch,attention,recompute,dp,tp,pp,vpp,cp,zero,zero_group,offload,"
    "gpu_mem_gb,gpus_per_node\n"
    "cp-vpp,gpt-1.3b,,,,,,,,,,,,4096,1,flash,none,2,1,4,2,2,1,2,,80,\n"
    "ckpt-offload,gpt-1.3b,,,,,,,,,,,,2048,8,flash,full,1,1,1,,2,0,,checkpoints,80,\n"
    "middle-stage,,llama,16,1024,8,8,1000,2816,16,8,1408,3,4096,2,flash,none,1,1,4,,,0,,,80,\n"
    "tp-fix,llama2-7b,,,,,,,,,,,,65536,1,flash,none,8,1,1,,,0,,,40,\n"
    "pp-fix,llama2-7b,,,,,,,,,,,,4096,1,flash,none,8,1,1,,,1,1,,40,1\n"
    "vpp-ckpt,gpt-1.3b,,,,,,,,,,,,8192,1,flash,2,2,1,4,2,,1,,,40,\n";

/* FP8 training (doc/model.md sections 3.7, 4.10): per-tensor scaling on Hopper (two weight
 * copies) and on Blackwell (one), MXFP8. */
static const char fp8_csv[] = "name,model,seq,micro_batch,attention,dp,zero,gpu,fp8\n"
                              "fp8-h100,llama3.1-8b,8192,1,flash,8,1,H100-80GB,tensor\n"
                              "fp8-b200,llama3.1-8b,8192,1,flash,8,1,B200-192GB,tensor\n"
                              "fp8-mxfp8,llama3.1-8b,8192,1,flash,8,1,B200-192GB,mxfp8\n";

/* The optimizers and fine-tuning (doc/model.md sections 3.5, 3.6): full training with bf16 and
 * 8-bit moments; LoRA on q and v; LoRA on every linear in fp32 with SGD, sharded by ZeRO-3;
 * QLoRA with the optimizer offloaded; the first three implementation profiles' phrases
 * (doc/model.md 4.12: transformers with sdpa, Megatron-Core, PEFT). */
/* The ladder's tp and pp rungs (and a pipeline's bubble in the cost of a fix) under --peak lesson,
 * where the verdict's fix is the ladder's (under --peak step it is the cheapest layout). */
static const char ladder_csv[] =
    "name,model,seq,micro_batch,attention,recompute,dp,tp,pp,zero,zero_group,gpu_mem_gb,"
    "gpus_per_node\n"
    "lesson-tp-fix,llama2-7b,65536,1,flash,none,8,1,1,0,,40,\n"
    "lesson-pp-fix,llama2-7b,4096,1,flash,none,8,1,1,1,1,40,1\n";

static const char tuning_csv[] =
    "name,model,seq,micro_batch,attention,recompute,dp,zero,offload,gpu,precision,optimizer,"
    "finetune,lora_rank,lora_targets,impl\n"
    "full-bf16,llama3.1-8b,4096,1,sdpa,full,1,0,,H100-80GB,,adamw-bf16,,,,hf\n"
    "full-8bit,llama3.1-8b,4096,1,flash,full,1,0,,H100-80GB,,adamw8bit,,,,megatron\n"
    "lora-qv,llama3.1-8b,4096,1,flash,full,1,0,,H100-80GB,,,lora,16,qv,\n"
    "lora-all,llama3.1-8b,4096,1,flash,full,8,3,,H100-80GB,autocast,sgd,lora,8,all-linear,"
    "hf-peft\n"
    "qlora-offload,llama3.1-70b,4096,1,flash,full,1,0,optimizer,H100-80GB,,,qlora,64,,\n";

/* The scenarios of csv (its length len), read with --peak peak; appended to out[0..cap). */
static size_t read_csv(const char *csv, size_t len, enum peak_model peak, struct scenario *out,
                       size_t cap)
{
    struct diag d;
    diag_init(&d, NULL, NULL);
    struct config_presets *pre = config_presets_load("configs/models.csv", "configs/gpus.csv", &d);
    assert_non_null(pre);
    struct nameset seen;
    nameset_init(&seen);
    struct config_options opt = {0.15, peak, IMPL_MEMFIT};
    FILE *in = fmemopen((void *)csv, len, "r");
    assert_non_null(in);
    struct config_reader *r = config_reader_new(in, "phrases.csv", pre, &opt, &seen, &d);
    assert_non_null(r);
    size_t n = 0;
    unsigned long line;
    int got;
    while (n < cap && (got = config_reader_next(r, &out[n], &line)) != 0) {
        if (got != 1)
            fail_msg("%s", d.last);
        n++;
    }
    config_reader_free(r);
    fclose(in);
    nameset_release(&seen);
    config_presets_free(pre);
    return n;
}

/* The scenarios of scenarios_csv, under --peak lesson. */
static size_t read_scenarios(struct scenario *out, size_t cap)
{
    return read_csv(scenarios_csv, sizeof scenarios_csv - 1, PEAK_LESSON, out, cap);
}

/*
 * Writes the scenario and summary templates of this test: every placeholder, chart and table, and
 * every phrase i redefined as "[i]" (short, so that no table cell cuts it) followed by each of
 * its own placeholders.
 */
static void write_templates(const char *sc_path, const char *sum_path)
{
    size_t n, nv;
    const struct template_phrase *all = report_phrases_defs(&n);
    const char *const *vnames = report_placeholders_names(&nv);
    FILE *f = fopen(sc_path, "w");
    assert_non_null(f);
    fputs("# {{name}}\n\n", f);
    for (size_t i = 0; i < nv; i++)
        fprintf(f, "{{%s}}\n", vnames[i]);
    fputs("\n@table config\n@table verdict\n@table terms\n@table ladder\n@table microbatch\n"
          "@chart fit\n@chart phases\n@chart stages\n@chart step\n@chart step_ckpt\n@chart "
          "kcurve\n@chart walk\n"
          "@chart params\n",
          f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "@phrase %s\n[%zu]", all[i].name, i);
        char own[512];
        snprintf(own, sizeof own, "%s", all[i].placeholders);
        for (char *w = strtok(own, " "); w; w = strtok(NULL, " "))
            fprintf(f, " {{%s}}", w);
        for (unsigned c = 1; c < all[i].cells; c++)
            fputs(" |", f);
        fputs("\n\n", f);
    }
    fclose(f);
    f = fopen(sum_path, "w");
    assert_non_null(f);
    fputs("# {{title}}\n\n", f);
    for (size_t i = 0; i < REPORT_PH_DOC_END; i++)
        fprintf(f, "{{%s}}\n", vnames[i]);
    fputs("\n@table summary\n", f);
    fclose(f);
}

static void test_every_phrase_used_and_filled(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-phrases-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char sc_path[128], sum_path[128], out[128], text_path[128];
    snprintf(sc_path, sizeof sc_path, "%s/all.tmpl", dir);
    snprintf(sum_path, sizeof sum_path, "%s/summary.tmpl", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(text_path, sizeof text_path, "%s/all.txt", dir);
    write_templates(sc_path, sum_path);
    struct scenario *scs = calloc(64, sizeof *scs);
    assert_non_null(scs);
    size_t n = read_scenarios(scs, 64);
    assert_true(n >= 18);
    size_t lesson = n;
    n += read_csv(step_csv, sizeof step_csv - 1, PEAK_STEP, scs + n, 64 - n);
    n += read_csv(parallel_csv, sizeof parallel_csv - 1, PEAK_STEP, scs + n, 64 - n);
    n += read_csv(fp8_csv, sizeof fp8_csv - 1, PEAK_STEP, scs + n, 64 - n);
    n += read_csv(tuning_csv, sizeof tuning_csv - 1, PEAK_STEP, scs + n, 64 - n);
    n += read_csv(ladder_csv, sizeof ladder_csv - 1, PEAK_LESSON, scs + n, 64 - n);
    n += read_csv(schedules_csv, sizeof schedules_csv - 1, PEAK_STEP, scs + n, 64 - n);
    assert_int_equal(n, lesson + 30);
    scs[2].sliding_window = 4096; /* as a config.json with sliding-window attention gives */

    struct report_options opt;
    report_options_init(&opt);
    opt.out_dir = out;
    opt.scenario_template = sc_path;
    opt.summary_template = sum_path;
    struct diag d;
    diag_init(&d, NULL, NULL);
    /* Every scenario, split, in GiB, from no named input; then one scenario in GB. A placeholder
     * that C does not fill fails the report ("a bug in memfit"). */
    opt.split = true;
    opt.units = UNITS_GIB;
    if (report_write(scs, n, &opt, &d) != 0)
        fail_msg("%s", d.first);
    /* The words of every file: its text, its title, its bookmarks. */
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "for f in '%s'/*.pdf; do pdftotext -layout \"$f\" - && pdfinfo \"$f\" && "
             "qpdf --json --json-key=outlines \"$f\"; done >'%s' 2>/dev/null",
             out, text_path);
    assert_int_equal(system(cmd), 0);
    opt.split = false;
    opt.units = UNITS_GB;
    opt.inputs = "one.csv";
    opt.file_name = "one.pdf";
    if (report_write(scs, 1, &opt, &d) != 0)
        fail_msg("%s", d.first);
    assert_int_equal(d.count, 0);
    snprintf(cmd, sizeof cmd, "pdftotext -layout '%s/one.pdf' - >>'%s' 2>/dev/null", out,
             text_path);
    assert_int_equal(system(cmd), 0);
    /* Too many pages for one file: the summary says where the scenarios' files are. */
    opt.file_name = "summary.pdf";
    opt.max_pages = 1;
    if (report_write(scs, 2, &opt, &d) != 0)
        fail_msg("%s", d.first);
    opt.max_pages = 0;
    snprintf(cmd, sizeof cmd, "pdftotext -layout '%s/summary.pdf' - >>'%s' 2>/dev/null", out,
             text_path);
    assert_int_equal(system(cmd), 0);
    /* The report of memfit search, whose jobs take every branch of its phrases (search_fixture.h),
     * with the same phrases. */
    struct search_fixture *fx = malloc(sizeof *fx);
    assert_non_null(fx);
    assert_int_equal(search_fixture_init(fx, 400), 0);
    struct report_search_options sopt = {.units = UNITS_GB, .phrase_template = sc_path};
    char search_pdf[160];
    snprintf(search_pdf, sizeof search_pdf, "%s/search.pdf", out);
    if (report_search_write_opts(fx->rj, SEARCH_FIXTURE_JOBS, search_pdf, &sopt, &d) != 0)
        fail_msg("%s", d.first);
    snprintf(cmd, sizeof cmd, "pdftotext -layout '%s' - >>'%s' 2>/dev/null", search_pdf, text_path);
    assert_int_equal(system(cmd), 0);
    /* One job: the singular of the intro. */
    if (report_search_write_opts(fx->rj, 1, search_pdf, &sopt, &d) != 0)
        fail_msg("%s", d.first);
    search_fixture_release(fx);
    free(fx);
    snprintf(cmd, sizeof cmd, "pdftotext -layout '%s' - >>'%s' 2>/dev/null", search_pdf, text_path);
    assert_int_equal(system(cmd), 0);
    size_t len;
    char *text = test_read_file(text_path, &len);
    assert_non_null(text);
    size_t np;
    const struct template_phrase *all = report_phrases_defs(&np);
    int unused = 0;
    for (size_t i = 0; i < np; i++) {
        char marker[96];
        snprintf(marker, sizeof marker, "[%zu]", i);
        if (!strstr(text, marker)) {
            print_message("phrase '%s' is not used by any scenario of the test\n", all[i].name);
            unused++;
        }
    }
    assert_int_equal(unused, 0);
    free(text);
    free(scs);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- Mixture of experts: their words, and none for a dense model ---------------------------- */

/* The text of the shipped report of scenario `name` of scenarios_csv. */
static const char *report_text_of(struct scenario *scs, size_t n, const char *name, const char *dir)
{
    size_t i = 0;
    while (i < n && strcmp(scs[i].name, name) != 0)
        i++;
    assert_true(i < n);
    struct report_options opt;
    report_options_init(&opt);
    opt.out_dir = dir;
    struct diag d;
    diag_init(&d, NULL, NULL);
    if (report_write(&scs[i], 1, &opt, &d) != 0)
        fail_msg("%s", d.first);
    return test_sh("pdftotext '%s/report.pdf' - 2>/dev/null | tr -s ' \\n' '  '", dir);
}

static void test_moe_words(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-moe-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct scenario *scs = calloc(32, sizeof *scs);
    assert_non_null(scs);
    size_t n = read_scenarios(scs, 32);
    /* Mixtral, dropless, ZeRO-3 over 8 GPUs that are one expert-parallel group of 8. */
    const char *text = report_text_of(scs, n, "moe-dropless", dir);
    static const char *const mixtral[] = {
        "(46.7 B), 12.9 B active per token, trained on",
        "dp=8, tp=1, pp=1, ep=8, ZeRO-3",
        "E = 8, top 2, f_e = 14336",
        "Ψ = 46.7 B, 12.9 B active",
        "2 B × (1,605,636,096 dense / dp + 5,637,144,576 routed / edp) 11,675,698,176 11.7 GB",
        "states of the dense part dense (params ÷ tp) × (2 + 2 + 12) B / dp 3,211,272,192",
        "states of the routed experts routed (params ÷ etp·ep) × (2 + 2 + 12) B, edp = 1",
        "each of the T = 4,096 tokens of a micro-batch goes to k = 2 of the E = 8 routed experts",
        "get k·T = 8,192 token copies",
        "up to ep·k·T = 65,536 copies to one GPU (ep = 8)",
        "Parameters of one MoE layer, matrix by matrix: one of the 8 routed experts drawn",
    };
    for (size_t i = 0; i < sizeof mixtral / sizeof *mixtral; i++)
        if (!strstr(text, mixtral[i]))
            fail_msg("the Mixtral report lacks '%s'", mixtral[i]);
    /* DeepSeek-V3 with its own capacity factor, etp = 1 under tp = 2. */
    text = report_text_of(scs, n, "moe-capacity", dir);
    static const char *const deepseek[] = {
        "L = 61, h = 7168, a = 128, MLA",
        "E = 256, top 8, f_e = 2048, f_s = 2048",
        "dense MLP first 3 layers, f = 18432",
        "ep=4, etp=1, ZeRO-1",
        "B, edp = 4",
        "Routing with a capacity factor of 1.25",
    };
    for (size_t i = 0; i < sizeof deepseek / sizeof *deepseek; i++)
        if (!strstr(text, deepseek[i]))
            fail_msg("the DeepSeek-V3 report lacks '%s'", deepseek[i]);
    /* A dense model has none of them. */
    text = report_text_of(scs, n, "tp-sp", dir);
    static const char *const none[] = {"active per token", "ep=", "routed (params", "Routing",
                                       "MoE"};
    for (size_t i = 0; i < sizeof none / sizeof *none; i++)
        if (strstr(text, none[i]))
            fail_msg("a dense model's report says '%s'", none[i]);
    free(scs);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- The formulas of a mixture of experts' states evaluate to the bytes beside them --------- */

/* A reader's evaluation of a formula cell of the table of terms: numbers (with thousands
 * separators), +, /, ×, parentheses, the names dp, edp, dense, routed and params; "B" and a
 * parenthesised "(params ÷ ...)" are read as words; "1,234 dense" names a count. */
struct formula_reader {
    const char *p;
    long double dp, edp, dense, routed;
    bool bad;
};

static void fr_space(struct formula_reader *f)
{
    while (*f->p == ' ')
        f->p++;
}

static bool fr_word(struct formula_reader *f, const char *w)
{
    fr_space(f);
    size_t n = strlen(w);
    if (strncmp(f->p, w, n) != 0 || (f->p[n] >= 'a' && f->p[n] <= 'z'))
        return false;
    f->p += n;
    return true;
}

static long double fr_number(struct formula_reader *f)
{
    long double v = 0;
    while ((*f->p >= '0' && *f->p <= '9') || (*f->p == ',' && f->p[1] >= '0' && f->p[1] <= '9'))
        if (*f->p++ != ',')
            v = v * 10 + (f->p[-1] - '0');
    return v;
}

static long double fr_sum(struct formula_reader *f);

static long double fr_factor(struct formula_reader *f)
{
    fr_space(f);
    long double v;
    if (*f->p >= '0' && *f->p <= '9') {
        v = fr_number(f);
        if (fr_word(f, "dense"))
            f->dense = v;
        else if (fr_word(f, "routed"))
            f->routed = v;
    } else if (*f->p == '(') {
        f->p++;
        v = fr_sum(f);
        fr_space(f);
        f->bad |= *f->p != ')';
        f->p++;
    } else if (fr_word(f, "dense")) {
        v = f->dense;
        fr_space(f);
        if (strncmp(f->p, "(params ÷", strlen("(params ÷")) == 0) /* what divided them */
            f->p = strchr(f->p, ')') + 1;
    } else if (fr_word(f, "routed")) {
        v = f->routed;
        fr_space(f);
        if (strncmp(f->p, "(params ÷", strlen("(params ÷")) == 0)
            f->p = strchr(f->p, ')') + 1;
    } else if (fr_word(f, "params")) {
        v = f->dense + f->routed;
    } else if (fr_word(f, "edp")) {
        v = f->edp;
    } else if (fr_word(f, "dp")) {
        v = f->dp;
    } else {
        f->bad = true;
        return 0;
    }
    fr_word(f, "params");
    fr_word(f, "B");
    return v;
}

static long double fr_product(struct formula_reader *f)
{
    long double v = fr_factor(f);
    for (;;) {
        fr_space(f);
        if (*f->p == '/') {
            f->p++;
            v /= fr_factor(f);
        } else if (strncmp(f->p, "×", strlen("×")) == 0) {
            f->p += strlen("×");
            v *= fr_factor(f);
        } else {
            return v;
        }
    }
}

static long double fr_sum(struct formula_reader *f)
{
    long double v = fr_product(f);
    for (;;) {
        fr_space(f);
        if (*f->p != '+')
            return v;
        f->p++;
        v += fr_product(f);
    }
}

/* Evaluates the formula of the row labelled `label` in text (pdftotext, blanks squeezed) and
 * returns it; *shown gets the bytes the row shows. */
static long double formula_of_row(const char *text, const char *label, struct formula_reader *f,
                                  long double *shown)
{
    const char *row = strstr(strstr(text, "term formula (this GPU)"), label);
    if (!row)
        fail_msg("no row '%s' in %s", label, text);
    f->p = row + strlen(label);
    long double v = fr_sum(f);
    if (strncmp(f->p, ", edp = ", 8) == 0) { /* the routed experts' row names edp */
        f->p += 8;
        fr_number(f);
    }
    fr_space(f);
    *shown = fr_number(f);
    if (f->bad || *shown == 0)
        fail_msg("cannot read the formula of '%s': %s", label, row);
    return v;
}

static void test_moe_formulas_evaluate(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-moe-formula-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct scenario *scs = calloc(48, sizeof *scs);
    assert_non_null(scs);
    size_t n = read_scenarios(scs, 48);
    n += read_csv(step_csv, sizeof step_csv - 1, PEAK_STEP, scs + n, 48 - n);
    n += read_csv(parallel_csv, sizeof parallel_csv - 1, PEAK_STEP, scs + n, 48 - n);
    /* Mixtral under ZeRO-3 (edp = 1), DeepSeek-V3 under ZeRO-1 (edp = 4), a small MoE on four
     * pipeline stages without ZeRO. */
    static const struct {
        const char *name;
        long double dp, edp;
    } cases[] = {{"moe-dropless", 8, 1}, {"moe-capacity", 8, 4}, {"middle-stage", 1, 1}};
    static const char *const rows[] = {"weights ", "gradients ", "optimizer states ",
                                       "states of the dense part ",
                                       "states of the routed experts "};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        report_text_of(scs, n, cases[c].name, dir);
        /* In the order of drawing: a wrapped cell's lines follow each other. */
        const char *text =
            test_sh("pdftotext -raw '%s/report.pdf' - 2>/dev/null | tr -s ' \\n' '  '", dir);
        struct formula_reader f = {NULL, cases[c].dp, cases[c].edp, 0, 0, false};
        long double states = 0, parts = 0;
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
            long double shown, v = formula_of_row(text, rows[i], &f, &shown);
            /* each state is rounded up to the byte on its own: a byte or two per part */
            if (v < shown - 4 || v > shown + 4)
                fail_msg("%s: '%s' evaluates to %.0Lf, the row shows %.0Lf", cases[c].name, rows[i],
                         v, shown);
            if (i == 0)
                assert_true(f.dense > 0 && f.routed > 0); /* the weights name both counts */
            if (i < 3)
                states += shown;
            else
                parts += shown;
        }
        assert_true(states == parts); /* the two parts are the three states */
    }
    free(scs);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- FP8 training: the configuration, the weights' formula and the note (doc/model.md 3.7) -- */

static void test_fp8_words(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-fp8-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct scenario scs[3];
    assert_int_equal(read_csv(fp8_csv, sizeof fp8_csv - 1, PEAK_STEP, scs, 3), 3);
    /* Llama 3.1 8B on H100s: 2 bytes of copies for each of its 6,979,321,856 GEMM parameters. */
    const char *text = report_text_of(scs, 3, "fp8-h100", dir);
    static const char *const h100[] = {
        "mixed + fp8 tensor: 2+2+12 B/param",
        "2 B × 8,030,261,248 params + 14.0 GB FP8 copies",
        "keeps a cached FP8 copy and its transpose, 2 bytes per GEMM parameter, 14.0 GB on this "
        "GPU with the weights",
        "The GEMMs, 87% of the", /* a page break, */
        "run at 1979 TFLOP/s.",
    };
    for (size_t i = 0; i < sizeof h100 / sizeof *h100; i++)
        if (!strstr(text, h100[i]))
            fail_msg("the FP8 report on H100s lacks '%s'", h100[i]);
    text = report_text_of(scs, 3, "fp8-b200", dir);
    if (!strstr(text, "one cached FP8 copy, which Blackwell reads both ways, 1 byte per GEMM "
                      "parameter, 7.0 GB on this GPU"))
        fail_msg("the FP8 report on B200s lacks its one copy: %s", text);
    text = report_text_of(scs, 3, "fp8-mxfp8", dir);
    if (!strstr(text, "2 (1 + 1/32) bytes per GEMM parameter, 14.4 GB on this GPU"))
        fail_msg("the MXFP8 report lacks its copies: %s", text);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- Optimizers and fine-tuning: the configuration, the states' formulas, the notes --------- */

static void test_tuning_words(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-tuning-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct scenario scs[5];
    assert_int_equal(read_csv(tuning_csv, sizeof tuning_csv - 1, PEAK_STEP, scs, 5), 5);
    /* Llama 3.1 8B with q, v adapters of rank 16: 6,815,744 of them (doc/model.md 3.6). */
    const char *text = report_text_of(scs, 5, "lora-qv", dir);
    static const char *const lora[] = {
        "mixed: 6.82 M adapters × 2+2+12 B",
        "LoRA r = 16 on q, v; bf16 base",
        "16.1 GB frozen + 2 B × 6.82 M adapters",
        "12 B × adapters",
        "the base is frozen - its weights only, no gradients, no optimizer",
    };
    for (size_t i = 0; i < sizeof lora / sizeof *lora; i++)
        if (!strstr(text, lora[i]))
            fail_msg("the LoRA report lacks '%s'", lora[i]);
    text = report_text_of(scs, 5, "qlora-offload", dir);
    static const char *const qlora[] = {
        "QLoRA r = 64 on q, v; NF4 base",
        "12 B × adapters, in CPU memory",
        "35.3 GB on this", /* the NF4 blocks of Llama 3.1 70B, */
        "upcast to fp32, 8.4 GB, as PEFT's",
    };
    for (size_t i = 0; i < sizeof qlora / sizeof *qlora; i++)
        if (!strstr(text, qlora[i]))
            fail_msg("the QLoRA report lacks '%s'", qlora[i]);
    text = report_text_of(scs, 5, "full-8bit", dir);
    if (!strstr(text, "mixed: 2 + 2 + 6.03 bytes/param") ||
        !strstr(text, "AdamW 8-bit (bitsandbytes)") || !strstr(text, "6.03 B × params"))
        fail_msg("the 8-bit AdamW report lacks its bytes: %s", text);
    text = report_text_of(scs, 5, "lora-all", dir);
    if (!strstr(text, "LoRA r = 8 on all linears; fp32 base") ||
        !strstr(text, "SGD, fp32 momentum") || !strstr(text, "4 B × adapters / dp"))
        fail_msg("the sharded LoRA report lacks its words: %s", text);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- The step's peak: its words under --peak step, none under --peak lesson ---------------- */

static void test_step_words(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-step-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct scenario *scs = calloc(40, sizeof *scs);
    assert_non_null(scs);
    size_t n = read_scenarios(scs, 40);
    n += read_csv(step_csv, sizeof step_csv - 1, PEAK_STEP, scs + n, 40 - n);
    n += read_csv(parallel_csv, sizeof parallel_csv - 1, PEAK_STEP, scs + n, 40 - n);
    /* The worked example under --peak step: the step's peak beside the lesson's sum, in the
     * verdict box, the table of terms and the phases chart; the choices in the notes. */
    const char *text = report_text_of(scs, n, "step-lesson", dir);
    static const char *const step[] = {
        "Does not fit: step peak 120.2 GB > budget 68.0 GB",
        "Step peak 120.2 GB at the start of the backward pass (the static sum, states + "
        "activations + logits: 116.1 GB).",
        "peak highest phase: the start of the backward pass",
        "the static sum states + activations + logits (--peak lesson) 116,083,032,064 116.1 GB",
        "What the most loaded GPU holds at each phase of a step: peak 120.2 GB at the start of the "
        "backward pass",
        "forward end backward start backward end optimizer step the static sum",
        "as configured: peak 120.2 GB at the start of the backward pass",
        "The step's peak assumes impl=memfit (the kernels of doc/model.md 4); loss=eager",
        "(cross-entropy on fp32 logits: three s·b·V/t tensors); grad_buffer=on_demand",
        "optimizer_impl=foreach (two fp32 temporaries per",
        "precision=mixed",
        "the columns of those names change them",
        "tracked; tests/validation/step.csv): every measured peak within 0.5% of the model's, at "
        "the same "
        "phase.",
    };
    for (size_t i = 0; i < sizeof step / sizeof *step; i++)
        if (!strstr(text, step[i]))
            fail_msg("the step report lacks '%s'", step[i]);
    /* Peaking at the optimizer step, where no activations are alive: the checkpointing chart says
     * why its curve of the peak is flat, and what k changes. */
    text = report_text_of(scs, n, "step-optimizer", dir);
    if (!strstr(text, "The peak is at the optimizer step, where the activations are gone:") ||
        !strstr(text, "checkpointing does not change it, and its curve is flat at") ||
        !strstr(text, "What k changes is"))
        fail_msg("the optimizer-step report does not say why the peak's curve is flat: %s", text);
    if (strstr(report_text_of(scs, n, "step-lesson", dir), "The peak is at the optimizer step"))
        fail_msg("a peak at the backward pass is said to be at the optimizer step");
    /* The same scenario under --peak lesson reads as before the step model. */
    text = report_text_of(scs, n, "lesson", dir);
    static const char *const lesson[] = {"Does not fit: peak 116.1 GB > budget 68.0 GB",
                                         "peak states + activations + logits",
                                         "The formulas count model states"};
    for (size_t i = 0; i < sizeof lesson / sizeof *lesson; i++)
        if (!strstr(text, lesson[i]))
            fail_msg("the lesson report lacks '%s'", lesson[i]);
    static const char *const none[] = {"step peak",  "Step peak", "the static sum states",
                                       "phase",      "loss=",     "step.csv",
                                       "temporaries"};
    for (size_t i = 0; i < sizeof none / sizeof *none; i++)
        if (strstr(text, none[i]))
            fail_msg("the lesson report says '%s'", none[i]);
    free(scs);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- A template rewords the verdict box; a bad phrase writes nothing ----------------------- */

static void test_template_rewords_verdict_box(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-phrases-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char tmpl[128], pdf[128];
    snprintf(tmpl, sizeof tmpl, "%s/mine.tmpl", dir);
    snprintf(pdf, sizeof pdf, "%s/report.pdf", dir);
    FILE *f = fopen(tmpl, "w");
    assert_non_null(f);
    fputs("# {{name}}\n\n@table verdict\n\n"
          "@phrase verdict_oom\nOut of memory: {{peak}} needed, {{budget}} at hand\n\n"
          "@phrase verdict_body_oom\n{{fix_sentence}} (That leaves {{headroom}}.)\n",
          f);
    fclose(f);
    struct scenario sc;
    scenario_lesson_example(&sc);
    struct report_options opt;
    report_options_init(&opt);
    opt.out_dir = dir;
    opt.scenario_template = tmpl;
    struct diag d;
    diag_init(&d, NULL, NULL);
    assert_int_equal(report_write(&sc, 1, &opt, &d), 0);
    const char *text = test_sh("pdftotext -layout '%s' - 2>/dev/null", pdf);
    assert_non_null(strstr(text, "Out of memory: 116.1 GB needed, 68.0 GB at hand"));
    assert_non_null(strstr(text, "The cheapest fix is FlashAttention"));
    assert_non_null(strstr(text, "(That leaves 48.1 GB over the budget.)"));
    assert_null(strstr(text, "Does not fit"));
    /* An error in a phrase: nothing written, the previous report kept. */
    f = fopen(tmpl, "w");
    assert_non_null(f);
    fputs("# {{name}}\n@phrase verdict_oom\nOut of memory: {{peek}}\n", f);
    fclose(f);
    assert_int_equal(report_write(&sc, 1, &opt, &d), -1);
    char want[256];
    snprintf(want, sizeof want, "%s:3: unknown placeholder '{{peek}}' (did you mean '{{peak}}'?)",
             tmpl);
    assert_string_equal(d.first, want);
    assert_non_null(strstr(test_sh("pdftotext -layout '%s' - 2>/dev/null", pdf), "Out of memory"));
    /* A catalogue that lacks a phrase. */
    f = fopen(tmpl, "w");
    assert_non_null(f);
    fputs("@phrase title\nT\n", f);
    fclose(f);
    opt.scenario_template = NULL;
    opt.phrases = tmpl;
    diag_init(&d, NULL, NULL);
    assert_int_equal(report_write(&sc, 1, &opt, &d), -1);
    snprintf(want, sizeof want, "%s: phrase 'title_scenario' is missing", tmpl);
    assert_string_equal(d.first, want);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- Mutants of the catalogue never crash ---------------------------------------------- */

static void test_catalogue_mutants(void **state)
{
    (void)state;
    static const char *const tokens[] = {"@phrase ", "@phrase verdict_oom\n",
                                         "\n\n",     "\n",
                                         "|",        "{{",
                                         "}}",       "{{amount}}",
                                         "{{peak}}", "{{peek}}",
                                         "%",        "@table x",
                                         " ",        "\xC3",
                                         "\0",       "\r\n"};
    struct mutator mut = {0x9e3779b97f4a7c15ull, tokens, sizeof tokens / sizeof *tokens};
    size_t len;
    char *seed = test_read_file("templates/phrases.tmpl", &len);
    assert_non_null(seed);
    char *buf = malloc(len + 4096);
    struct report_values *vals = calloc(1, sizeof *vals);
    assert_non_null(buf);
    assert_non_null(vals);
    struct report_phrases ph;
    report_phrases_init(&ph);
    int rejected = 0;
    for (int i = 0; i < 600; i++) {
        size_t n = mutator_derive(&mut, seed, len, buf, len + 4096, 6);
        struct diag d;
        diag_init(&d, NULL, NULL);
        if (report_phrases_parse(&ph, "m.tmpl", buf, n, &d) != 0) {
            rejected++;
            continue;
        }
        char out[REPORT_VALUE_MAX], cells[8][REPORT_CELL_MAX];
        for (size_t k = 0; k < REPORT_PHRASE_COUNT; k++)
            report_say(out, sizeof out, &ph, vals, (enum report_phrase)k, "amount", "1 GB", NULL);
        report_cells(&ph, vals, REPORT_PHRASE_TERMS_ROWS, cells, 8);
    }
    report_phrases_release(&ph);
    assert_true(rejected > 100 && rejected < 550); /* both paths are taken */
    free(vals);
    free(buf);
    free(seed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_phrase_blocks),
        cmocka_unit_test(test_phrase_errors),
        cmocka_unit_test(test_shipped_catalogue),
        cmocka_unit_test(test_catalogue_errors),
        cmocka_unit_test(test_say_and_override),
        cmocka_unit_test(test_catalogue_documents_placeholders),
        cmocka_unit_test(test_templates_list_placeholders),
        cmocka_unit_test(test_every_phrase_used_and_filled),
        cmocka_unit_test(test_moe_words),
        cmocka_unit_test(test_moe_formulas_evaluate),
        cmocka_unit_test(test_fp8_words),
        cmocka_unit_test(test_tuning_words),
        cmocka_unit_test(test_step_words),
        cmocka_unit_test(test_template_rewords_verdict_box),
        cmocka_unit_test(test_catalogue_mutants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
