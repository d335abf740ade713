/* libFuzzer entry point of the config.json fuzz target (make fuzz). */
#define MEMFIT_LIBFUZZER
#include "fuzz_modeljson.h"
