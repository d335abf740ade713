/* libFuzzer entry point of the whole-pipeline fuzz target (make fuzz). */
#define MEMFIT_LIBFUZZER
#include "fuzz_pipeline.h"
