/*
 * out: output files - safe file names and atomic writes.
 *
 * A scenario name comes from the user's CSV; it becomes a file name only through out_safe_name()
 * (doc/memfit.1, OUTPUT: [A-Za-z0-9._-], no leading dot, never a path, never empty, bounded), so no
 * output can land outside the --out folder. Two names that sanitise alike are told apart by
 * out_unique_name() with a "-2", "-3", ... suffix, in input order, so the result is the same on
 * every run.
 *
 * out_write_atomic() writes a file under a temporary name in the target's own folder (mkstemp),
 * flushes and fsyncs it, and renames it over the target only when everything succeeded; on any
 * failure the temporary file is removed and the previous target is left untouched.
 */
#ifndef MEMFIT_OUT_H
#define MEMFIT_OUT_H

#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "base/diag.h"

/* Longest sanitised name, in bytes, without the terminating NUL (and without an extension). */
#define OUT_NAME_MAX 64

/*
 * Writes the safe form of `name` into buf (size >= 2): every byte outside [A-Za-z0-9._-] (a UTF-8
 * sequence counts as one character) becomes '_', runs of '_' so made collapse to one, a leading
 * '.' or '-' becomes '_', the result is cut to OUT_NAME_MAX bytes and to size - 1, and an empty
 * result is "scenario". Returns buf.
 */
char *out_safe_name(const char *name, char *buf, size_t size);

/*
 * Makes buf (a safe name, capacity size) unique among the `n` names already in `taken`, which are
 * compared without regard to case (for case-insensitive file systems): the first free of
 * "NAME-2", "NAME-3", ... is chosen, NAME cut so that the suffix fits. Returns 0, or -1 when
 * size is too small for any suffix.
 */
int out_unique_name(char *buf, size_t size, const char *const *taken, size_t n);

/* dir + "/" + name + ext into buf; -1 when it does not fit. dir "" means the current folder. */
int out_join(char *buf, size_t size, const char *dir, const char *name, const char *ext);

/* Writes the content of a file into f; returns 0 on success, nonzero on failure. */
typedef int out_write_fn(FILE *f, void *ctx);

/*
 * Runs write(f, ctx) and flushes f: 0 only when the writer succeeded and no write error was
 * seen (a full disk shows up here, at the latest at the flush).
 */
int out_write_stream(FILE *f, out_write_fn *write, void *ctx);

/*
 * Writes `path` with write(f, ctx), whole or not at all, never replacing anything but a regular
 * file (doc/memfit.1, OUTPUT):
 * - a regular file, or nothing yet: atomically - a temporary file in the same folder, flush,
 *   fsync, rename;
 * - a symbolic link: the file it points to, by these rules (the link stays);
 * - a character device or a FIFO (/dev/null, a terminal, a pipe): written in place, as a shell
 *   redirection does;
 * - a folder or anything else: refused.
 * Returns 0, or -1 after a message "cannot write 'PATH': REASON" into d; a previous regular file
 * at path is then untouched and no temporary file is left behind. One thread writes at a time.
 */
int out_write_atomic(const char *path, out_write_fn *write, void *ctx, struct diag *d);

/*
 * out_write_atomic, the missing folders of path made first (as every command does for the file
 * or folder -o names, doc/memfit.1 OUTPUT); a failure removes the folders it made.
 */
int out_write_making_dirs(const char *path, out_write_fn *write, void *ctx, struct diag *d);

/*
 * A set of files written whole or not at all (the lesson's figures): each is written by
 * out_set_add under a temporary name, by out_write_atomic's rules, and out_set_commit renames
 * them all once every one was written; a failed add removes what the set staged. A full disk
 * thus leaves the previous files, never half of a new set.
 */
#define OUT_SET_MAX 16

struct out_staged {
    char path[4096], tmp[4096];
    int live;
};

struct out_set {
    size_t n; /* staged so far */
    struct out_staged files[OUT_SET_MAX];
};

void out_set_init(struct out_set *set);
/* Stages path; 0, or -1 after a message into d (the set is then aborted). */
int out_set_add(struct out_set *set, const char *path, out_write_fn *write, void *ctx,
                struct diag *d);
/* Renames every staged file over its path; 0, or -1 after a message. */
int out_set_commit(struct out_set *set, struct diag *d);
/* Removes every staged file. */
void out_set_abort(struct out_set *set);

/*
 * Removes the temporary files out_write_atomic or a set is writing now. Async-signal-safe: for a
 * signal handler, so that an interrupted run leaves nothing behind.
 */
void out_remove_live(void);

/*
 * Installs, for SIGINT, SIGTERM and SIGHUP, a handler that calls out_remove_live and then dies
 * of the signal as it would have (a signal ignored when the program started stays ignored).
 * What SIGKILL leaves, out_remove_stale removes on a later run.
 */
void out_catch_signals(void);

/* mkdir -p: makes dir and its missing parents. Returns 0, or -1 after a message into d. */
int out_make_dirs(const char *dir, struct diag *d);

/*
 * The same, the topmost folder it made into made[0..made_size) ("" when dir was there), for
 * out_unmake_dirs: a run that fails then leaves no folder behind. A failure removes what it made.
 */
int out_make_dirs_noting(const char *dir, char *made, size_t made_size, struct diag *d);

/* Removes dir and its parents up to made (out_make_dirs_noting's), each only while empty. */
void out_unmake_dirs(const char *dir, const char *made);

/* The prefix of out_write_atomic's temporary files (then mkstemp's six characters). */
#define OUT_TMP_PREFIX ".memfit-tmp-"

/*
 * Removes the temporary files a killed run left in dir: regular files named OUT_TMP_PREFIX and
 * six letters or digits, last modified before `before` (the start of this run), that no running
 * memfit holds (out_write_atomic keeps its temporary file locked until the rename). Nothing
 * else is touched. Best effort, silent; returns the number of files removed.
 */
size_t out_remove_stale(const char *dir, time_t before);

/* The default creation date of reproducible files when SOURCE_DATE_EPOCH is unset. */
#define OUT_DEFAULT_EPOCH 1704067200LL /* 2024-01-01T00:00:00Z */

/*
 * SOURCE_DATE_EPOCH (https://reproducible-builds.org/specs/source-date-epoch/): reads `value`
 * (NULL or "" when unset) into *seconds. Returns 1 when set and valid, 0 when unset (*seconds is
 * then OUT_DEFAULT_EPOCH), -1 after a message into d when it is not a number of seconds since
 * 1970 up to the year 9999.
 */
int out_source_date_epoch(const char *value, long long *seconds, struct diag *d);

#endif
