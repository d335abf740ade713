/*
 * csvin: streaming CSV records with their physical line numbers (the only user of <csv.h>).
 *
 * RFC 4180 through libcsv in strict mode: quoted fields with embedded commas and newlines, LF or
 * CRLF, a UTF-8 byte-order mark at the start skipped. libcsv knows no line numbers, so the input
 * is fed one physical line at a time and counted. Memory is that of the longest record: buffers
 * are reused from record to record, so a file of a million rows costs no more than one of ten.
 * A malformed record is reported to the diag with its line, skipped, and reading goes on at the
 * next line. Fields of plain lines (no quote) point into the line buffer, cut in place.
 */
#ifndef MEMFIT_CSVIN_H
#define MEMFIT_CSVIN_H

#include <stddef.h>
#include <stdio.h>

#include "base/diag.h"

struct csvin;

/* One record: fields are NUL-terminated, owned by the reader, valid until the next call. */
struct csvin_record {
    size_t n_fields;
    char **fields;
    size_t *lengths;    /* strlen of each field */
    unsigned long line; /* physical line where the record starts (1-based) */
    size_t nul_field;   /* 1 + the index of the first field that holds a NUL byte (its string
                         * ends there, so the caller must reject the record); 0: none does */
};

/* Reads from `f` (not closed by csvin_free); `name` is used in messages. NULL on no memory. */
struct csvin *csvin_new(FILE *f, const char *name, struct diag *d);

/* 1: a record; 0: end of input; -1: a malformed record was reported and skipped (call again);
 * -2: a read error or no memory (reported; stop). */
int csvin_next(struct csvin *r, struct csvin_record *rec);

void csvin_free(struct csvin *r);

#endif
