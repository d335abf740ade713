/*
 * A deterministic fuzz run of the template language (tests/fuzz/fuzz_template.h): the shipped
 * templates, mutated thousands of times with a fixed seed. Run under ASan/UBSan by CI.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>

#include "fuzz_template.h"
#include "mutate.h"

static const char *const tokens[] = {
    "{{", "}}", "{{name}}",     "{{peek}}", "@chart ", "@table ", "@pagebreak", "\n", "# ",
    "- ", "%",  "\xEF\xBB\xBF", "\r\n",     "\xC3",    "\0",      "@",          " "};
static struct mutator mut = {0x2545f4914f6cdd1dull, tokens, sizeof tokens / sizeof tokens[0]};

static size_t read_template(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

static void shipped_templates_are_accepted_and_mutants_never_crash(void **state)
{
    (void)state;
    static const char *const paths[] = {"templates/report.tmpl", "templates/summary.tmpl",
                                        "templates/phrases.tmpl"};
    static char seed[1 << 16], buf[(1 << 16) + 4096];
    int rejected = 0;
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        size_t len = read_template(paths[p], seed, sizeof seed);
        assert_true(len > 0 && len < sizeof seed);
        assert_int_equal(fuzz_template_one((const uint8_t *)seed, len), 1);
        for (int i = 0; i < 1500; i++) {
            size_t n = mutator_derive(&mut, seed, len, buf, sizeof buf, 8);
            rejected += !fuzz_template_one((const uint8_t *)buf, n);
        }
    }
    /* The mutations do reach the error paths. */
    assert_true(rejected > 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shipped_templates_are_accepted_and_mutants_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
