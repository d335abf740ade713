/*
 * modeljson_file: a config.json read from its file, or from a folder's config.json
 * (modeljson.h, modeljson_read): a regular file of at most MODELJSON_BYTES_MAX bytes, then
 * modeljson_parse.
 */
#include "input/modeljson.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/infile.h"

enum modeljson_status modeljson_read(const char *path, struct modeljson *out, char *file,
                                     size_t file_size, char *err, size_t err_size)
{
    struct stat st;
    size_t n = strlen(path);
    bool dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    int w = snprintf(file, file_size, "%s%s", path,
                     !dir                      ? ""
                     : n && path[n - 1] == '/' ? "config.json"
                                               : "/config.json");
    memset(out, 0, sizeof *out);
    if (w < 0 || (size_t)w >= file_size) {
        snprintf(err, err_size, "%s: the path is too long", path);
        return MODELJSON_UNREADABLE;
    }
    char reason[128];
    FILE *f = infile_open(file, reason, sizeof reason);
    if (!f) {
        snprintf(err, err_size, "%s: cannot open: %s", file, reason);
        return MODELJSON_UNREADABLE;
    }
    enum modeljson_status rc = MODELJSON_UNREADABLE;
    char *text = NULL;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, err_size, "%s: not a regular file", file);
        goto out;
    }
    if (st.st_size > (off_t)MODELJSON_BYTES_MAX) {
        snprintf(err, err_size, "%s: larger than %u KiB: not a model's config.json", file,
                 MODELJSON_BYTES_MAX >> 10);
        rc = MODELJSON_BAD;
        goto out;
    }
    /* One byte more than the size: a file that grew is still read to its end, or found too big. */
    size_t cap = (size_t)st.st_size + 1, len = 0, got;
    text = malloc(cap);
    if (!text) {
        snprintf(err, err_size, "%s: out of memory", file);
        goto out;
    }
    while ((got = fread(text + len, 1, cap - len, f)) > 0 && (len += got) == cap) {
        if (cap > MODELJSON_BYTES_MAX) {
            snprintf(err, err_size, "%s: larger than %u KiB: not a model's config.json", file,
                     MODELJSON_BYTES_MAX >> 10);
            rc = MODELJSON_BAD;
            goto out;
        }
        char *bigger = realloc(text, 2 * cap);
        if (!bigger) {
            snprintf(err, err_size, "%s: out of memory", file);
            goto out;
        }
        text = bigger;
        cap *= 2;
    }
    if (ferror(f)) {
        snprintf(err, err_size, "%s: cannot read: %s", file, strerror(errno));
        goto out;
    }
    char why[512];
    rc = modeljson_parse(text, len, out, why, sizeof why);
    if (rc != MODELJSON_OK)
        snprintf(err, err_size, "%s: %s", file, why);
out:
    free(text);
    fclose(f);
    return rc;
}
