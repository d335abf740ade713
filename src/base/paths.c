/* paths: see paths.h. */
#include "base/paths.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef MEMFIT_DATADIR
#define MEMFIT_DATADIR "/usr/local/share/memfit"
#endif

static int exists(const char *path)
{
    return access(path, R_OK) == 0;
}

static int try_path(char *buf, size_t size, const char *dir, const char *rel)
{
    int n = snprintf(buf, size, "%s/%s", dir, rel);
    return n > 0 && (size_t)n < size && exists(buf);
}

int paths_find_data(const char *rel, char *buf, size_t size)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            /* The last three: a build folder in a source checkout (build/asan/memfit, a test
             * build/tests/PART/test_x or build/asan/tests/PART/test_x), taken only where the
             * checkout's sources are. */
            static const char *const up[] = {"",       "/..",       "/../share/memfit",
                                             "/../..", "/../../..", "/../../../.."};
            for (size_t i = 0; i < sizeof up / sizeof *up; i++) {
                char dir[4200];
                snprintf(dir, sizeof dir, "%s%s", exe, up[i]);
                if (i >= 3 && !try_path(buf, size, dir, "src/base/paths.c"))
                    continue;
                if (try_path(buf, size, dir, rel))
                    return 0;
            }
        }
    }
    if (try_path(buf, size, MEMFIT_DATADIR, rel))
        return 0;
    return -1;
}
