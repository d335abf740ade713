/* infile: see infile.h. */
#include "base/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

FILE *infile_open(const char *path, char *why, size_t why_size)
{
    /* O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        snprintf(why, why_size, "%s", strerror(errno));
        return NULL;
    }
    struct stat st;
    const char *refused = NULL;
    if (fstat(fd, &st) != 0)
        refused = strerror(errno);
    else if (S_ISDIR(st.st_mode))
        refused = "is a folder";
    else if (!S_ISREG(st.st_mode))
        refused = "not a regular file";
    int flags = refused ? 0 : fcntl(fd, F_GETFL);
    if (!refused && (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0))
        refused = strerror(errno);
    FILE *f = refused ? NULL : fdopen(fd, "rb");
    if (!f) {
        snprintf(why, why_size, "%s", refused ? refused : strerror(errno));
        close(fd);
    }
    return f;
}
