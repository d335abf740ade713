/*
 * numfmt: how the report writes numbers: sizes in GB or GiB, counts with thousands
 * separators, short counts ("1.31 B"), seconds for people ("45 ms").
 *
 * Pure: every function writes a NUL-terminated string of at most size bytes into buf (cut, never
 * overflowed) and does no other I/O.
 */
#ifndef MEMFIT_NUMFMT_H
#define MEMFIT_NUMFMT_H

#include <stddef.h>
#include <stdint.h>

#include "base/units.h"

/* snprintf into buf, the result ignored: a value longer than the buffer is cut. */
void numfmt(char *buf, size_t size, const char *f, ...) __attribute__((format(printf, 3, 4)));

/*
 * A byte count in units u (GB = 10^9 or GiB = 2^30 bytes, units.h): "116.1 GB"; values under
 * 0.095 keep three decimals, 0 is "0 GB".
 */
void numfmt_size(char *buf, size_t size, uint64_t bytes, enum units u);

/*
 * A GPU's memory: a whole number of units as such ("80 GB", as the maker states it), else as
 * numfmt_size ("85.5 GB", an H100 as nvidia-smi reports it). Every text and chart that names a
 * GPU's memory says it this way.
 */
void numfmt_gpu_mem(char *buf, size_t size, uint64_t bytes, enum units u);

/* A count with thousands separators: 1311528960 -> "1,311,528,960". */
void numfmt_count(char *buf, size_t size, uint64_t n);

/* A count in short form, three digits: 1311528960 -> "1.31 B", 124e6 -> "124 M", 6815744 ->
 * "6.82 M"; smaller ones in full. */
void numfmt_short(char *buf, size_t size, uint64_t n);

/* A count as plain digits: "1311528960". */
void numfmt_u64(char *buf, size_t size, uint64_t n);

/* Seconds for people: "1.23 s", "45 ms", "0.25 ms", and "0 s" for none. */
void numfmt_seconds(char *buf, size_t size, double s);

#endif
