/* numfmt: see numfmt.h. */
#include "base/numfmt.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

void numfmt(char *buf, size_t size, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, size, f, ap);
    va_end(ap);
}

/* "116.1 GB"; small values keep more digits, 0 is "0 GB". */
void numfmt_size(char *buf, size_t size, uint64_t bytes, enum units u)
{
    double v = (double)bytes / units_bytes(u);
    const char *name = units_name(u);
    if (bytes == 0)
        numfmt(buf, size, "0 %s", name);
    else if (v < 0.095)
        numfmt(buf, size, "%.3f %s", v, name);
    else
        numfmt(buf, size, "%.1f %s", v, name);
}

/* "80 GB" for a whole number, else numfmt_size's "85.5 GB". */
void numfmt_gpu_mem(char *buf, size_t size, uint64_t bytes, enum units u)
{
    double mem = (double)bytes / units_bytes(u);
    if (bytes > 0 && fabs(mem - round(mem)) < 0.005)
        numfmt(buf, size, "%.0f %s", mem, units_name(u));
    else
        numfmt_size(buf, size, bytes, u);
}

/* 1311528960 -> "1,311,528,960". */
void numfmt_count(char *buf, size_t size, uint64_t n)
{
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%llu", (unsigned long long)n);
    size_t o = 0;
    for (int i = 0; i < len && o + 2 < size; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
}

/* 1311528960 -> "1.31 B", 124e6 -> "124 M". */
void numfmt_short(char *buf, size_t size, uint64_t n)
{
    double v = (double)n;
    if (v >= 1e9)
        numfmt(buf, size, "%.*f B", v >= 1e11 ? 0 : v >= 1e10 ? 1 : 2, v / 1e9);
    else if (v >= 1e6) /* three digits, as above: 6815744 -> "6.82 M" */
        numfmt(buf, size, "%.*f M", v >= 1e8 ? 0 : v >= 1e7 ? 1 : 2, v / 1e6);
    else
        numfmt_count(buf, size, n);
}

void numfmt_u64(char *buf, size_t size, uint64_t n)
{
    numfmt(buf, size, "%llu", (unsigned long long)n);
}

/* Seconds for people: "1.23 s", "45 ms". */
void numfmt_seconds(char *buf, size_t size, double s)
{
    if (s == 0) /* nothing added: not "0.00 ms" */
        numfmt(buf, size, "0 s");
    else if (s >= 1)
        numfmt(buf, size, "%.2f s", s);
    else if (s >= 1e-3)
        numfmt(buf, size, "%.0f ms", s * 1e3);
    else
        numfmt(buf, size, "%.2f ms", s * 1e3);
}
