/*
 * paths: where memfit finds its data files (configs/, templates/).
 *
 * Looked up, in order, beside the executable (a source checkout: ./memfit or build/memfit), in
 * the installed data dir relative to the executable (../share/memfit), the compiled-in
 * MEMFIT_DATADIR, and the current directory.
 */
#ifndef MEMFIT_PATHS_H
#define MEMFIT_PATHS_H

#include <stddef.h>

/* Finds `rel` (e.g. "configs/models.csv"); writes the path into buf. 0 found, -1 not found. */
int paths_find_data(const char *rel, char *buf, size_t size);

#endif
