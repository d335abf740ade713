/*
 * summary: writes the C header that the report's notes quote (src/report/validation_summary.h) from
 * the activation fixture, so that re-measuring (`make validate`) never asks for a hand edit.
 *
 *   summary FIXTURE.csv OUT.h
 *
 * Exit status 0, or 1 with a message on stderr when the fixture cannot be read or predicted.
 */
#include "fixture.h"

static int write_header(const char *path, const struct fixture_summary *s)
{
    char gpt[32], llama[32];
    fixture_gap_text(s->worst[0], gpt, sizeof gpt);
    fixture_gap_text(s->worst[1], llama, sizeof llama);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(
        f,
        "/*\n"
        " * validation_summary: what the activation fixture (tests/validation/activations.csv)\n"
        " * shows, as the report's notes quote it. Written by `make validate`\n"
        " * (tests/validation/summary.c) from the fixture: do not edit; test_validation checks\n"
        " * that it matches the committed fixture.\n"
        " */\n"
        "#ifndef MEMFIT_VALIDATION_SUMMARY_H\n"
        "#define MEMFIT_VALIDATION_SUMMARY_H\n\n"
        "#define VALIDATION_MEASUREMENTS %zu\n"
        "#define VALIDATION_GPT_SHAPES %zu\n"
        "#define VALIDATION_LLAMA_SHAPES %zu\n"
        "#define VALIDATION_WORST_GAP_GPT \"%s\"\n"
        "#define VALIDATION_WORST_GAP_LLAMA \"%s\"\n\n"
        "#endif\n",
        s->measurements, s->shapes[0], s->shapes[1], gpt, llama);
    return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    struct fixture fx;
    struct fixture_summary s;
    if (argc != 3) {
        fprintf(stderr, "usage: summary FIXTURE.csv OUT.h\n");
        return 1;
    }
    if (!fixture_load(&fx, argv[1])) {
        fprintf(stderr, "summary: %s: %s\n", argv[1], fx.error);
        free(fx.rows);
        return 1;
    }
    bool ok = fixture_summarise(&fx, &s);
    free(fx.rows);
    if (!ok) {
        fprintf(stderr, "summary: %s: a row the model rejects\n", argv[1]);
        return 1;
    }
    if (write_header(argv[2], &s) != 0) {
        fprintf(stderr, "summary: cannot write '%s'\n", argv[2]);
        return 1;
    }
    return 0;
}
