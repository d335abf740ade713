/*
 * units: the unit every size is printed in, GB (10^9 bytes, as GPU makers quote memory) or GiB
 * (2^30 bytes, as nvidia-smi and PyTorch print it). The one representation of `--units` from the
 * command line to the charts.
 */
#ifndef MEMFIT_UNITS_H
#define MEMFIT_UNITS_H

enum units { UNITS_GB, UNITS_GIB };

/* Bytes in one unit: 1e9 or 2^30. */
static inline double units_bytes(enum units u)
{
    return u == UNITS_GIB ? 1073741824.0 : 1e9;
}

/* "GB" or "GiB". */
static inline const char *units_name(enum units u)
{
    return u == UNITS_GIB ? "GiB" : "GB";
}

#endif
