/* libFuzzer entry point of the template fuzz target (make fuzz). */
#define MEMFIT_LIBFUZZER
#include "fuzz_template.h"
