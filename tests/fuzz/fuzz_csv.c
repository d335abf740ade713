/* libFuzzer entry point of the CSV fuzz target (make fuzz). */
#define MEMFIT_LIBFUZZER
#include "fuzz_csv.h"
