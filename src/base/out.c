/* out: see out.h. */
#include "base/out.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static bool out_name_char(unsigned char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '_' || ch == '-';
}

char *out_safe_name(const char *name, char *buf, size_t size)
{
    size_t cap = size - 1 < OUT_NAME_MAX ? size - 1 : OUT_NAME_MAX;
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p && n < cap; p++) {
        if ((*p & 0xC0) == 0x80)
            continue; /* a UTF-8 continuation byte: its lead byte was already replaced */
        char ch = out_name_char(*p) ? (char)*p : '_';
        if (n == 0 && (ch == '.' || ch == '-'))
            ch = '_'; /* no hidden files, no "." or "..", nothing a command takes for an option */
        if (ch == '_' && !out_name_char(*p) && n > 0 && buf[n - 1] == '_')
            continue;
        buf[n++] = ch;
    }
    if (n == 0) {
        const char *fallback = "scenario";
        n = strlen(fallback) < cap ? strlen(fallback) : cap;
        memcpy(buf, fallback, n);
    }
    buf[n] = '\0';
    return buf;
}

static bool out_taken(const char *name, const char *const *taken, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(name, taken[i]) == 0)
            return true;
    return false;
}

int out_unique_name(char *buf, size_t size, const char *const *taken, size_t n)
{
    if (!out_taken(buf, taken, n))
        return 0;
    char base[OUT_NAME_MAX + 1];
    snprintf(base, sizeof base, "%s", buf);
    for (size_t k = 2; k <= n + 1; k++) {
        char suffix[24];
        int len = snprintf(suffix, sizeof suffix, "-%zu", k);
        size_t cap = size - 1 < OUT_NAME_MAX ? size - 1 : OUT_NAME_MAX;
        if ((size_t)len >= cap)
            return -1;
        size_t keep = strlen(base);
        if (keep > cap - (size_t)len)
            keep = cap - (size_t)len;
        memcpy(buf, base, keep);
        memcpy(buf + keep, suffix, (size_t)len + 1);
        if (!out_taken(buf, taken, n))
            return 0;
    }
    return -1; /* unreachable: n names cannot hold n + 1 distinct suffixes */
}

int out_join(char *buf, size_t size, const char *dir, const char *name, const char *ext)
{
    const char *sep = (dir[0] && dir[strlen(dir) - 1] != '/') ? "/" : "";
    int len = snprintf(buf, size, "%s%s%s%s", dir, sep, name, ext);
    return len < 0 || (size_t)len >= size ? -1 : 0;
}

int out_write_stream(FILE *f, out_write_fn *write, void *ctx)
{
    int rc = write(f, ctx);
    if (fflush(f) != 0)
        rc = -1;
    if (ferror(f))
        rc = -1;
    return rc;
}

/* The folder of path ("." when it has none), into buf. */
static int out_dirname(const char *path, char *buf, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return snprintf(buf, size, ".") < (int)size ? 0 : -1;
    size_t len = slash == path ? 1 : (size_t)(slash - path);
    if (len >= size)
        return -1;
    memcpy(buf, path, len);
    buf[len] = '\0';
    return 0;
}

static int out_fail(struct diag *d, const char *path, const char *reason)
{
    diag_report(d, NULL, 0, "cannot write '%s': %s", path, reason);
    return -1;
}

/*
 * Temporary files being written, for out_remove_live (a signal handler): a slot's path is
 * complete before its flag is set, and the flag is cleared before the path changes.
 */
#define OUT_LIVE_SLOTS (OUT_SET_MAX + 4)
static char out_live_path[OUT_LIVE_SLOTS][4096];
static volatile sig_atomic_t out_live_used[OUT_LIVE_SLOTS];

static int out_live_add(const char *tmp)
{
    for (int i = 0; i < OUT_LIVE_SLOTS; i++) {
        if (!out_live_used[i]) {
            snprintf(out_live_path[i], sizeof out_live_path[i], "%s", tmp);
            out_live_used[i] = 1;
            return i;
        }
    }
    return -1; /* more than OUT_LIVE_SLOTS at once: left to out_remove_stale */
}

static void out_live_drop(int slot)
{
    if (slot >= 0)
        out_live_used[slot] = 0;
}

void out_remove_live(void)
{
    for (int i = 0; i < OUT_LIVE_SLOTS; i++)
        if (out_live_used[i])
            (void)unlink(out_live_path[i]); /* async-signal-safe */
}

/* Removes the temporary files being written, then dies of the signal as if it were not caught. */
static void out_on_signal(int sig)
{
    out_remove_live();
    signal(sig, SIG_DFL);
    raise(sig);
}

void out_catch_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = out_on_signal;
        sigemptyset(&sa.sa_mask);
        struct sigaction old;
        /* A signal the caller's parent ignored (nohup) stays ignored. */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        (void)sigaction(sigs[i], &sa, NULL);
    }
}

/*
 * Writes a target that is not a regular file - a character device such as /dev/null or
 * /dev/stdout's terminal, a FIFO - in place, as a shell redirection does: such a file is never
 * replaced. Flushed, not synced (devices refuse fsync).
 */
static int out_write_in_place(const char *path, out_write_fn *write, void *ctx, struct diag *d)
{
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return out_fail(d, path, strerror(errno));
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        int err = errno;
        close(fd);
        return out_fail(d, path, strerror(err));
    }
    errno = 0;
    int rc = out_write_stream(f, write, ctx);
    int err = errno ? errno : EIO;
    if (fclose(f) != 0 && rc == 0) {
        rc = -1;
        err = errno;
    }
    return rc == 0 ? 0 : out_fail(d, path, strerror(err));
}

/*
 * A killed run's temporary files in dir are removed before the first write into it (the last
 * folder cleaned is remembered: a report of many files into one folder reads it once). "Before"
 * is the first write of this process: a live run's files are newer, or locked.
 */
static void out_clean_once(const char *dir)
{
    static char last[4096];
    static time_t first;
    if (!first)
        first = time(NULL);
    if (strcmp(last, dir) == 0)
        return;
    snprintf(last, sizeof last, "%s", dir);
    out_remove_stale(dir, first);
}

/*
 * Creates the temporary file tmp ("DIR/.memfit-tmp-XXXXXX", the X's replaced), registered as live
 * before it exists: a signal at any moment finds it registered, and unlinking a name not created
 * yet is harmless (mkstemp would create it first, leaving a window). Returns the descriptor, or
 * -1 with errno.
 */
static int out_create_tmp(char *tmp, int *live)
{
    static const char letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    static unsigned long counter;
    char *x = tmp + strlen(tmp) - 6;
    unsigned long v = (unsigned long)getpid() * 2654435761u ^ (unsigned long)time(NULL);
    for (int attempt = 0; attempt < 100; attempt++) {
        v = v * 6364136223846793005u + 1442695040888963407u + ++counter;
        unsigned long r = v >> 16;
        for (int i = 0; i < 6; i++, r /= 62)
            x[i] = letters[r % 62];
        *live = out_live_add(tmp);
        int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0)
            return fd;
        int err = errno;
        out_live_drop(*live);
        if (err != EEXIST) {
            errno = err;
            return -1;
        }
    }
    errno = EEXIST;
    return -1;
}

/*
 * Writes path's content under a temporary name in its folder (tmp, live slot *live): created,
 * written, flushed, synced and closed. Returns 0, or -1 after a message, the temporary file gone.
 */
static int out_stage(const char *path, out_write_fn *write, void *ctx, struct diag *d, char *tmp,
                     size_t tmp_size, int *live)
{
    char dir[4096];
    if (out_dirname(path, dir, sizeof dir) != 0 ||
        out_join(tmp, tmp_size, dir, OUT_TMP_PREFIX, "XXXXXX") != 0)
        return out_fail(d, path, "path too long");
    out_clean_once(dir);
    int fd = out_create_tmp(tmp, live);
    if (fd < 0)
        return out_fail(d, path, strerror(errno));
    /* Held until the file is closed: out_remove_stale of another run leaves it alone. */
    (void)flock(fd, LOCK_EX | LOCK_NB);
    /* mkstemp creates 0600; an output file is as readable as any other the user writes. */
    mode_t mask = umask(0);
    umask(mask);
    FILE *f = fchmod(fd, 0666 & ~mask) == 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        int err = errno;
        close(fd);
        unlink(tmp);
        out_live_drop(*live);
        return out_fail(d, path, strerror(err));
    }
    errno = 0;
    int rc = out_write_stream(f, write, ctx);
    int err = errno ? errno : EIO;
    if (rc == 0 && fsync(fileno(f)) != 0) {
        rc = -1;
        err = errno;
    }
    if (fclose(f) != 0 && rc == 0) {
        rc = -1;
        err = errno;
    }
    if (rc != 0) {
        unlink(tmp);
        out_live_drop(*live);
        return out_fail(d, path, strerror(err));
    }
    return 0;
}

/* Renames a staged temporary file over path and makes the rename durable; -1 after a message. */
static int out_commit(const char *tmp, int live, const char *path, struct diag *d)
{
    int rc = rename(tmp, path) == 0 ? 0 : -1;
    int err = errno;
    if (rc != 0)
        unlink(tmp);
    out_live_drop(live);
    if (rc != 0)
        return out_fail(d, path, strerror(err));
    char dir[4096];
    int dfd = out_dirname(path, dir, sizeof dir) == 0 ? open(dir, O_RDONLY | O_DIRECTORY) : -1;
    if (dfd >= 0) {
        (void)fsync(dfd); /* best effort: makes the rename itself durable */
        close(dfd);
    }
    return 0;
}

/* What path names: 0 a regular file or nothing (written atomically at *real, path itself or a
 * link's target), 1 a device or a FIFO (written in place), -1 refused (after a message). */
static int out_target(const char *path, char *real, size_t size, struct diag *d)
{
    struct stat st;
    snprintf(real, size, "%s", path);
    if (lstat(path, &st) != 0)
        return 0;
    if (S_ISLNK(st.st_mode)) {
        /* The file the link points to is written; the link stays. */
        char target[PATH_MAX];
        if (!realpath(path, target))
            return out_fail(d, path,
                            errno == ENOENT ? "a symbolic link to nothing" : strerror(errno));
        if (snprintf(real, size, "%s", target) >= (int)size)
            return out_fail(d, path, "path too long");
        if (stat(target, &st) != 0)
            return 0;
    }
    if (S_ISDIR(st.st_mode))
        return out_fail(d, path, "is a folder");
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
        return 1;
    if (!S_ISREG(st.st_mode))
        return out_fail(d, path, "not a regular file, a device or a pipe");
    return 0;
}

int out_write_atomic(const char *path, out_write_fn *write, void *ctx, struct diag *d)
{
    char real[4096], tmp[4096];
    int kind = out_target(path, real, sizeof real, d);
    if (kind < 0)
        return -1;
    if (kind == 1)
        return out_write_in_place(real, write, ctx, d);
    int live;
    if (out_stage(real, write, ctx, d, tmp, sizeof tmp, &live) != 0)
        return -1;
    return out_commit(tmp, live, real, d);
}

int out_write_making_dirs(const char *path, out_write_fn *write, void *ctx, struct diag *d)
{
    char dir[4096], made[4096];
    if (out_dirname(path, dir, sizeof dir) != 0)
        return out_fail(d, path, "path too long");
    if (out_make_dirs_noting(dir, made, sizeof made, d) != 0)
        return -1;
    int rc = out_write_atomic(path, write, ctx, d);
    if (rc != 0)
        out_unmake_dirs(dir, made); /* a folder made for nothing goes */
    return rc;
}

void out_set_init(struct out_set *set)
{
    memset(set, 0, sizeof *set);
}

int out_set_add(struct out_set *set, const char *path, out_write_fn *write, void *ctx,
                struct diag *d)
{
    if (set->n == OUT_SET_MAX) {
        out_set_abort(set);
        return out_fail(d, path, "too many files in one set");
    }
    struct out_staged *s = &set->files[set->n];
    int kind = out_target(path, s->path, sizeof s->path, d);
    if (kind == 1)
        kind = out_write_in_place(s->path, write, ctx, d); /* nothing to rename */
    else if (kind == 0 && out_stage(s->path, write, ctx, d, s->tmp, sizeof s->tmp, &s->live) == 0)
        set->n++;
    else
        kind = -1;
    if (kind < 0)
        out_set_abort(set);
    return kind < 0 ? -1 : 0;
}

int out_set_commit(struct out_set *set, struct diag *d)
{
    int rc = 0;
    for (size_t i = 0; i < set->n; i++) {
        struct out_staged *s = &set->files[i];
        if (rc == 0)
            rc = out_commit(s->tmp, s->live, s->path, d);
        else {
            unlink(s->tmp);
            out_live_drop(s->live);
        }
    }
    set->n = 0;
    return rc;
}

void out_set_abort(struct out_set *set)
{
    for (size_t i = 0; i < set->n; i++) {
        unlink(set->files[i].tmp);
        out_live_drop(set->files[i].live);
    }
    set->n = 0;
}

int out_make_dirs(const char *dir, struct diag *d)
{
    char made[4096];
    return out_make_dirs_noting(dir, made, sizeof made, d);
}

int out_make_dirs_noting(const char *dir, char *made, size_t made_size, struct diag *d)
{
    char path[4096];
    made[0] = '\0';
    if (dir[0] == '\0') {
        diag_report(d, NULL, 0, "empty output folder name");
        return -1;
    }
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        diag_report(d, dir, 0, "path too long");
        return -1;
    }
    for (char *p = path + 1;; p++) {
        char ch = *p;
        if (ch != '/' && ch != '\0')
            continue;
        *p = '\0';
        if (mkdir(path, 0777) == 0) {
            if (!made[0])
                snprintf(made, made_size, "%s", path);
        } else if (errno != EEXIST) {
            diag_report(d, path, 0, "cannot create folder: %s", strerror(errno));
            out_unmake_dirs(path, made);
            return -1;
        }
        *p = ch;
        if (ch == '\0')
            break;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        diag_report(d, dir, 0, "not a folder");
        return -1;
    }
    return 0;
}

void out_unmake_dirs(const char *dir, const char *made)
{
    if (!made[0])
        return;
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return;
    size_t stop = strlen(made);
    for (;;) {
        if (rmdir(path) != 0 || strlen(path) <= stop)
            return; /* not empty (or not ours): what is above it stays too */
        char *slash = strrchr(path, '/');
        if (!slash)
            return;
        *slash = '\0';
    }
}

int out_source_date_epoch(const char *value, long long *seconds, struct diag *d)
{
    *seconds = OUT_DEFAULT_EPOCH;
    if (!value || !value[0])
        return 0;
    char *end;
    errno = 0;
    long long t = strtoll(value, &end, 10);
    if (errno || *end || t < 0 || t > 253402300799LL) {
        diag_report(d, NULL, 0, "SOURCE_DATE_EPOCH: '%s' is not a number of seconds since 1970",
                    value);
        return -1;
    }
    *seconds = t;
    return 1;
}

/* OUT_TMP_PREFIX and six characters of mkstemp's: letters and digits. */
static bool out_is_tmp_name(const char *name)
{
    size_t n = strlen(OUT_TMP_PREFIX);
    if (strncmp(name, OUT_TMP_PREFIX, n) != 0 || strlen(name + n) != 6)
        return false;
    for (const char *p = name + n; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
            return false;
    return true;
}

size_t out_remove_stale(const char *dir, time_t before)
{
    DIR *dp = opendir(dir[0] ? dir : ".");
    if (!dp)
        return 0;
    size_t removed = 0;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL) {
        char path[4096];
        struct stat st;
        if (!out_is_tmp_name(e->d_name) || out_join(path, sizeof path, dir, e->d_name, "") != 0 ||
            lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_mtime >= before)
            continue;
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue;
        /* A file a live run is writing is locked: only a dead run's file is taken. */
        if (flock(fd, LOCK_EX | LOCK_NB) == 0 && unlink(path) == 0)
            removed++;
        close(fd);
    }
    closedir(dp);
    return removed;
}
