/*
 * What the fuzz targets share: where the shipped data is (FUZZ_DATA_DIR, the source checkout's
 * absolute path, set by the Makefile so that a target finds its presets wherever it is run;
 * "." otherwise) and how a target fails (FUZZ_FAIL: libFuzzer gets an abort, which it reports
 * with the input; the deterministic runs in `make test` define it as a cmocka failure).
 */
#ifndef MEMFIT_FUZZ_COMMON_H
#define MEMFIT_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#ifndef FUZZ_DATA_DIR
#define FUZZ_DATA_DIR "."
#endif

#ifndef FUZZ_FAIL
#define FUZZ_FAIL(...)                                                                             \
    do {                                                                                           \
        fprintf(stderr, "fuzz: ");                                                                 \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        abort();                                                                                   \
    } while (0)
#endif

#endif
