/*
 * testutil: helpers shared by the cmocka tests. cmocka 1.1.5 has no assert_double_equal, so
 * the worked example's numbers as doc/model.md section 9 prints them ("116.1 GB") are compared
 * after the same rounding.
 */
#ifndef MEMFIT_TESTUTIL_H
#define MEMFIT_TESTUTIL_H

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* bytes, in GB (10^9), rounded to `digits` decimals, equals `gb` rounded the same way. */
#define assert_gb_rounded(bytes, gb, digits)                                                       \
    assert_int_equal(llround((double)(bytes) / 1e9 * pow(10, digits)),                             \
                     llround((gb)*pow(10, digits)))
#define assert_gb0(bytes, gb) assert_gb_rounded(bytes, gb, 0)
#define assert_gb1(bytes, gb) assert_gb_rounded(bytes, gb, 1)
#define assert_gb2(bytes, gb) assert_gb_rounded(bytes, gb, 2)

/* |a - b| <= tol * |b| */
#define assert_close(a, b, tol)                                                                    \
    assert_true(fabs((double)(a) - (double)(b)) <= (tol)*fabs((double)(b)))

/* The whole file at path, NUL-terminated, in memory the caller frees (*len: its size); NULL when
 * it cannot be read. */
static __attribute__((unused)) char *test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap + 1);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *p = realloc(buf, (cap *= 2) + 1);
            if (!p)
                free(buf);
            buf = p;
        }
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

/* Runs a shell command (printf-style) and returns its standard output, in a static buffer. */
static __attribute__((unused, format(printf, 1, 2))) const char *test_sh(const char *fmt, ...)
{
    static char out[1 << 16];
    char cmd[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    pclose(p);
    return out;
}

/* The entries of dir other than . and .. (a temporary file left behind counts). */
static __attribute__((unused)) size_t test_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

#endif
