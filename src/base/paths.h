/*
 * paths: where memfit finds its data files (configs/, templates/).
 *
 * Looked up, in order, beside the executable (a source checkout: ./memfit or build/memfit), in
 * the installed data dir relative to the executable (../share/memfit), two or three folders up
 * when that is a source checkout (a build of its own: build/asan/memfit, build/asan/tests/), and
 * the compiled-in MEMFIT_DATADIR. Never in the current
 * directory: a memfit run in someone else's folder must not read its configs/ or templates/.
 */
#ifndef MEMFIT_PATHS_H
#define MEMFIT_PATHS_H

#include <stddef.h>

/* Finds `rel` (e.g. "configs/models.csv"); writes the path into buf. 0 found, -1 not found. */
int paths_find_data(const char *rel, char *buf, size_t size);

#endif
