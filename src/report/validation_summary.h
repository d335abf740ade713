/*
 * validation_summary: what the activation fixture (tests/validation/activations.csv)
 * shows, as the report's notes quote it. Written by `make validate`
 * (tests/validation/summary.c) from the fixture: do not edit; test_validation checks
 * that it matches the committed fixture.
 */
#ifndef MEMFIT_VALIDATION_SUMMARY_H
#define MEMFIT_VALIDATION_SUMMARY_H

#define VALIDATION_MEASUREMENTS 100
#define VALIDATION_GPT_SHAPES 10
#define VALIDATION_LLAMA_SHAPES 10
#define VALIDATION_WORST_GAP_GPT "0.195%"
#define VALIDATION_WORST_GAP_LLAMA "0.135%"

#endif
