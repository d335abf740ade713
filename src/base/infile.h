/*
 * infile: opening a file the program reads whole - a template, a phrase catalogue, a preset
 * table, a model's config.json - that must be a regular file. A FIFO or a device named there
 * would block the run forever or never end, and a folder cannot be read: each is refused at once,
 * with the reason, before anything is read. (The scenario CSVs are streamed and may come from a
 * pipe: they are opened as they are.)
 */
#ifndef MEMFIT_INFILE_H
#define MEMFIT_INFILE_H

#include <stddef.h>
#include <stdio.h>

/*
 * Opens path for reading ("rb"). NULL when it cannot be opened or is not a regular file, with the
 * reason in why[0..why_size): strerror's, "is a folder" or "not a regular file". Never blocks on
 * a FIFO.
 */
FILE *infile_open(const char *path, char *why, size_t why_size);

#endif
