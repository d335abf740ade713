/* Tests of template: the block structure, every error with its line, and expansion. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/template.h"

static const char *const placeholders[] = {"name", "peak", "budget", "verdict"};
static const char *const charts[] = {"fit", "timeline", "kcurve"};
static const char *const tables[] = {"terms", "verdict"};
static const struct template_names names = {placeholders, 4, charts, 3, tables, 2};

static int parse(struct template *t, const char *text, struct diag *d)
{
    diag_init(d, NULL, NULL);
    return template_parse(t, "r.tmpl", text, strlen(text), &names, d);
}

static void test_blocks(void **state)
{
    (void)state;
    struct template t;
    struct diag d;
    const char *text = "% a comment\n"
                       "# Scenario {{name}}\n"
                       "\n"
                       "The peak is {{peak}}\n"
                       "of {{ budget }}.\n"
                       "\n"
                       "## Terms\n"
                       "@table terms\n"
                       "- first item\n"
                       "  continued\n"
                       "- second item\n"
                       "@chart fit\n"
                       "@pagebreak\n"
                       "last\r\n";
    assert_int_equal(parse(&t, text, &d), 0);
    assert_int_equal(d.count, 0);
    assert_int_equal(t.n, 9);
    assert_int_equal(t.blocks[0].kind, TEMPLATE_HEADING);
    assert_int_equal(t.blocks[0].level, 1);
    assert_string_equal(t.blocks[0].text, "Scenario {{name}}");
    assert_int_equal(t.blocks[0].line, 2);
    assert_int_equal(t.blocks[1].kind, TEMPLATE_PARAGRAPH);
    assert_string_equal(t.blocks[1].text, "The peak is {{peak}} of {{ budget }}.");
    assert_int_equal(t.blocks[1].line, 4);
    assert_int_equal(t.blocks[2].level, 2);
    assert_int_equal(t.blocks[3].kind, TEMPLATE_TABLE);
    assert_string_equal(t.blocks[3].text, "terms");
    assert_int_equal(t.blocks[4].kind, TEMPLATE_ITEM);
    assert_string_equal(t.blocks[4].text, "first item continued");
    assert_string_equal(t.blocks[5].text, "second item");
    assert_int_equal(t.blocks[6].kind, TEMPLATE_CHART);
    assert_string_equal(t.blocks[6].text, "fit");
    assert_int_equal(t.blocks[7].kind, TEMPLATE_PAGEBREAK);
    assert_null(t.blocks[7].text);
    assert_string_equal(t.blocks[8].text, "last"); /* the CR of CRLF is dropped */
    assert_int_equal(t.blocks[8].line, 14);
    template_release(&t);
}

static void test_unknown_placeholder_has_line_and_suggestion(void **state)
{
    (void)state;
    struct template t;
    struct diag d;
    assert_int_equal(parse(&t, "# Title\n\nfirst line\nthe {{peek}} value\n", &d), -1);
    assert_int_equal(d.count, 1);
    assert_string_equal(d.first,
                        "r.tmpl:4: unknown placeholder '{{peek}}' (did you mean '{{peak}}'?)");
    assert_int_equal(t.n, 0);
    assert_null(t.blocks);
}

static void test_unknown_placeholder_without_close_match(void **state)
{
    (void)state;
    struct template t;
    struct diag d;
    assert_int_equal(parse(&t, "x {{zzzzzzzzzz}}\n", &d), -1);
    /* A few known names: all of them. */
    assert_string_equal(d.first, "r.tmpl:1: unknown placeholder '{{zzzzzzzzzz}}' (valid: {{name}}, "
                                 "{{peak}}, {{budget}}, {{verdict}})");
}

/* Many known names (the report has about 80): the three closest, and where to read them all. */
static void test_unknown_placeholder_among_many(void **state)
{
    (void)state;
    static const char *const many[] = {"name",   "peak",  "budget", "verdict", "params",
                                       "layers", "heads", "vocab",  "seq",     "fix"};
    const struct template_names lots = {many, 10, charts, 3, tables, 2};
    struct template t;
    struct diag d;
    diag_init(&d, NULL, NULL);
    const char *text = "x {{headcount}}\n";
    assert_int_equal(template_parse(&t, "r.tmpl", text, strlen(text), &lots, &d), -1);
    assert_string_equal(d.first, "r.tmpl:1: unknown placeholder '{{headcount}}' (closest: "
                                 "{{heads}}, {{verdict}}, {{peak}}; 'memfit help report' lists "
                                 "all)");
    template_release(&t);
}

static void test_every_error_is_reported(void **state)
{
    (void)state;
    struct template t;
    struct diag d;
    const char *text = "ok {{name}}\n"
                       "@chrt fit\n"
                       "@chart fitt\n"
                       "@table\n"
                       "@pagebreak now\n"
                       "{{name\n"
                       "{{}}\n"
                       "#### too deep\n"
                       "{{budget}} {{verdikt}}\n";
    assert_int_equal(parse(&t, text, &d), -1);
    assert_int_equal(d.count, 8);
    assert_string_equal(d.first, "r.tmpl:2: unknown directive '@chrt' (did you mean '@chart'?)");
    assert_string_equal(
        d.last, "r.tmpl:9: unknown placeholder '{{verdikt}}' (did you mean '{{verdict}}'?)");
}

static void collect(void *ctx, const char *msg, const char *file, unsigned long line)
{
    (void)file;
    (void)line;
    char *all = ctx;
    size_t n = strlen(all);
    snprintf(all + n, 1024 - n, "%s\n", msg);
}

static void test_error_messages(void **state)
{
    (void)state;
    char all[1024] = "";
    struct template t;
    struct diag d;
    diag_init(&d, collect, all);
    const char *text = "@chart fitt\n@table\n@pagebreak now\n{{name\n{{}}\n#### deep\n";
    assert_int_equal(template_parse(&t, "r.tmpl", text, strlen(text), &names, &d), -1);
    assert_string_equal(all, "r.tmpl:1: unknown chart 'fitt' (did you mean 'fit'?)\n"
                             "r.tmpl:2: '@table' needs a name\n"
                             "r.tmpl:3: '@pagebreak' takes no argument\n"
                             "r.tmpl:4: unclosed placeholder: '{{' without '}}'\n"
                             "r.tmpl:5: bad placeholder '{{}}'\n"
                             "r.tmpl:6: heading level 4: at most '###'\n");
}

/* One problem, one message: a placeholder repeated on its line (the same message twice, in a
 * phrase as elsewhere), a directive whose words hold a placeholder (an unknown placeholder and
 * the directive's own problem). Different ones on a line are each said. */
static void test_each_problem_once(void **state)
{
    (void)state;
    char all[1024] = "";
    struct template t;
    struct diag d;
    diag_init(&d, collect, all);
    const char *text = "{{peek}} and {{peek}}, {{ peek }}, {{a b}} {{a b}} {{verdikt}} {{peek}}\n"
                       "{{peek}}\n"
                       "@chart {{fit}}\n"
                       "@pagebreak {{x}}\n";
    assert_int_equal(template_parse(&t, "r.tmpl", text, strlen(text), &names, &d), -1);
    assert_string_equal(all, "r.tmpl:1: unknown placeholder '{{peek}}' (did you mean '{{peak}}'?)\n"
                             "r.tmpl:1: bad placeholder '{{a b}}'\n"
                             "r.tmpl:1: unknown placeholder '{{verdikt}}' (did you mean "
                             "'{{verdict}}'?)\n"
                             "r.tmpl:2: unknown placeholder '{{peek}}' (did you mean '{{peak}}'?)\n"
                             "r.tmpl:3: unknown chart '{{fit}}' (did you mean 'fit'?)\n"
                             "r.tmpl:4: '@pagebreak' takes no argument\n");
    assert_int_equal(d.count, 6);
}

/* A file of errors says the first TEMPLATE_ERRORS_SHOWN, then how many more in one line; the
 * template is rejected all the same. */
static void test_errors_are_capped(void **state)
{
    (void)state;
    struct template t;
    struct diag d;
    size_t lines = 100000, n = 0;
    char *text = malloc(lines * 12);
    assert_non_null(text);
    for (size_t i = 0; i < lines; i++)
        n += (size_t)snprintf(text + n, 12, "{{peek}}\n");
    diag_init(&d, NULL, NULL);
    assert_int_equal(template_parse(&t, "r.tmpl", text, n, &names, &d), -1);
    assert_int_equal(d.count, TEMPLATE_ERRORS_SHOWN + 1);
    assert_string_equal(d.first,
                        "r.tmpl:1: unknown placeholder '{{peek}}' (did you mean '{{peak}}'?)");
    assert_string_equal(d.last, "... and 99980 more errors in r.tmpl");
    assert_int_equal(t.n, 0);
    /* One more than shown: "1 more error". */
    n = 0;
    for (size_t i = 0; i < TEMPLATE_ERRORS_SHOWN + 1; i++)
        n += (size_t)snprintf(text + n, 12, "@chrt\n");
    diag_init(&d, NULL, NULL);
    assert_int_equal(template_parse(&t, "r.tmpl", text, n, &names, &d), -1);
    assert_int_equal(d.count, TEMPLATE_ERRORS_SHOWN + 1);
    assert_string_equal(d.last, "... and 1 more error in r.tmpl");
    /* As many as shown: no such line. */
    n -= strlen("@chrt\n");
    diag_init(&d, NULL, NULL);
    assert_int_equal(template_parse(&t, "r.tmpl", text, n, &names, &d), -1);
    assert_int_equal(d.count, TEMPLATE_ERRORS_SHOWN);
    free(text);
}

static void test_bad_bytes(void **state)
{
    (void)state;
    struct template t;
    struct diag d;
    const char text[] = "fine\nbad \xC3\x28 utf8\nnul \0 byte\ncut \xE2\x89";
    diag_init(&d, NULL, NULL);
    assert_int_equal(template_parse(&t, "r.tmpl", text, sizeof text - 1, &names, &d), -1);
    assert_int_equal(d.count, 3);
    assert_string_equal(d.first, "r.tmpl:2: not UTF-8 text (or a control character)");
    const char bom[] = "\xEF\xBB\xBF# Ψ ≤ √x\n";
    assert_int_equal(template_parse(&t, "r.tmpl", bom, sizeof bom - 1, &names, &d), 0);
    assert_string_equal(t.blocks[0].text, "Ψ ≤ √x");
    template_release(&t);
}

static const char *lookup(void *ctx, const char *name)
{
    (void)ctx;
    if (strcmp(name, "peak") == 0)
        return "116.1 GB";
    if (strcmp(name, "budget") == 0)
        return "68.0 GB";
    return NULL;
}

static void test_expand(void **state)
{
    (void)state;
    char *s = template_expand("peak {{peak}} > {{ budget }}; {{x}} {not}", lookup, NULL);
    assert_string_equal(s, "peak 116.1 GB > 68.0 GB; ? {not}");
    free(s);
    s = template_expand("", lookup, NULL);
    assert_string_equal(s, "");
    free(s);
}

static void test_load_missing_file(void **state)
{
    (void)state;
    struct template t;
    struct diag d;
    diag_init(&d, NULL, NULL);
    assert_int_equal(template_load(&t, "/nonexistent/x.tmpl", &names, &d), -1);
    assert_string_equal(d.first, "cannot read '/nonexistent/x.tmpl': No such file or directory");
    template_release(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks),
        cmocka_unit_test(test_unknown_placeholder_has_line_and_suggestion),
        cmocka_unit_test(test_unknown_placeholder_without_close_match),
        cmocka_unit_test(test_unknown_placeholder_among_many),
        cmocka_unit_test(test_every_error_is_reported),
        cmocka_unit_test(test_error_messages),
        cmocka_unit_test(test_each_problem_once),
        cmocka_unit_test(test_errors_are_capped),
        cmocka_unit_test(test_bad_bytes),
        cmocka_unit_test(test_expand),
        cmocka_unit_test(test_load_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
