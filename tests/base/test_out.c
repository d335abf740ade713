/* Tests of out: safe file names, unique names, atomic writes that leave the old file intact. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "base/out.h"
#include "testutil.h"

static const char *safe(const char *name)
{
    static char buf[OUT_NAME_MAX + 1];
    return out_safe_name(name, buf, sizeof buf);
}

static void test_safe_name_keeps_good_names(void **state)
{
    (void)state;
    assert_string_equal(safe("lesson-1.3b"), "lesson-1.3b");
    assert_string_equal(safe("GPT3_175B.sel"), "GPT3_175B.sel");
}

static void test_safe_name_never_a_path(void **state)
{
    (void)state;
    assert_string_equal(safe("../../etc/passwd"), "_._.._etc_passwd");
    assert_string_equal(safe("/abs"), "_abs");
    assert_string_equal(safe("a/b\\c"), "a_b_c");
    assert_string_equal(safe(".."), "_.");
    assert_string_equal(safe("."), "_");
    assert_string_equal(safe(".hidden"), "_hidden");
    assert_string_equal(safe("-rf"), "_rf"); /* never taken for an option */
    assert_string_equal(safe("a-b"), "a-b");
    assert_null(strchr(safe("x/../../y"), '/'));
}

static void test_safe_name_replaces_runs_and_utf8(void **state)
{
    (void)state;
    assert_string_equal(safe("7B on 8x H100"), "7B_on_8x_H100");
    assert_string_equal(safe("a  ,, b"), "a_b");
    assert_string_equal(safe("Ψ-model"), "_-model"); /* Ψ is two bytes: one '_' */
    assert_string_equal(safe("70B über"), "70B_ber");
    assert_string_equal(safe("tab\there\nnl"), "tab_here_nl");
}

static void test_safe_name_never_empty(void **state)
{
    (void)state;
    assert_string_equal(safe(""), "scenario");
    assert_string_equal(safe("ΨΨ"), "_");
}

static void test_safe_name_bounded(void **state)
{
    (void)state;
    char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(strlen(safe(longname)), OUT_NAME_MAX);
    char small[5];
    assert_string_equal(out_safe_name("abcdefgh", small, sizeof small), "abcd");
}

static void test_unique_name_suffixes_in_order(void **state)
{
    (void)state;
    const char *taken[] = {"a_b", "A_B-2", "c"};
    char buf[OUT_NAME_MAX + 1] = "a_b";
    assert_int_equal(out_unique_name(buf, sizeof buf, taken, 3), 0);
    assert_string_equal(buf, "a_b-3"); /* -2 is taken, ignoring case */
    snprintf(buf, sizeof buf, "d");
    assert_int_equal(out_unique_name(buf, sizeof buf, taken, 3), 0);
    assert_string_equal(buf, "d");
    snprintf(buf, sizeof buf, "C");
    assert_int_equal(out_unique_name(buf, sizeof buf, taken, 3), 0);
    assert_string_equal(buf, "C-2");
}

static void test_unique_name_cuts_long_base(void **state)
{
    (void)state;
    char base[OUT_NAME_MAX + 1];
    memset(base, 'y', OUT_NAME_MAX);
    base[OUT_NAME_MAX] = '\0';
    const char *taken[] = {base};
    char buf[OUT_NAME_MAX + 1];
    memcpy(buf, base, sizeof buf);
    assert_int_equal(out_unique_name(buf, sizeof buf, taken, 1), 0);
    assert_int_equal(strlen(buf), OUT_NAME_MAX);
    assert_string_equal(buf + OUT_NAME_MAX - 2, "-2");
}

static void test_join(void **state)
{
    (void)state;
    char buf[32];
    assert_int_equal(out_join(buf, sizeof buf, "out", "a", ".pdf"), 0);
    assert_string_equal(buf, "out/a.pdf");
    assert_int_equal(out_join(buf, sizeof buf, "out/", "a", ".pdf"), 0);
    assert_string_equal(buf, "out/a.pdf");
    assert_int_equal(out_join(buf, sizeof buf, "", "a", ".pdf"), 0);
    assert_string_equal(buf, "a.pdf");
    assert_int_equal(out_join(buf, 8, "out", "a", ".pdf"), -1);
}

/* --- atomic writes --- */

static int write_text(FILE *f, void *ctx)
{
    return fputs((const char *)ctx, f) < 0 ? -1 : 0;
}

static int write_fail_halfway(FILE *f, void *ctx)
{
    (void)ctx;
    fputs("partial", f);
    return -1;
}

static int write_a_lot(FILE *f, void *ctx)
{
    (void)ctx;
    char block[4096];
    memset(block, 'z', sizeof block);
    for (int i = 0; i < 64; i++)
        if (fwrite(block, 1, sizeof block, f) != sizeof block)
            return -1;
    return 0;
}

static void slurp(const char *path, char *buf, size_t size)
{
    size_t n;
    char *text = test_read_file(path, &n);
    assert_non_null(text);
    snprintf(buf, size, "%s", text);
    free(text);
}

static int make_dir(void **state)
{
    char *dir = malloc(64);
    snprintf(dir, 64, "/tmp/memfit-out-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    *state = dir;
    return 0;
}

static int remove_dir(void **state)
{
    char *dir = *state;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[512];
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (unlink(p) != 0)
            rmdir(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
    free(dir);
    return 0;
}

static void test_atomic_writes_and_replaces(void **state)
{
    const char *dir = *state;
    char path[256], got[64];
    struct diag d;
    diag_init(&d, NULL, NULL);
    out_join(path, sizeof path, dir, "r", ".txt");
    assert_int_equal(out_write_atomic(path, write_text, "first", &d), 0);
    slurp(path, got, sizeof got);
    assert_string_equal(got, "first");
    assert_int_equal(out_write_atomic(path, write_text, "second", &d), 0);
    slurp(path, got, sizeof got);
    assert_string_equal(got, "second");
    assert_int_equal(test_count_entries(dir), 1);
    assert_int_equal(d.count, 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_mode & S_IRUSR);
}

static void test_atomic_failure_keeps_old_file(void **state)
{
    const char *dir = *state;
    char path[256], got[64];
    struct diag d;
    diag_init(&d, NULL, NULL);
    out_join(path, sizeof path, dir, "r", ".txt");
    assert_int_equal(out_write_atomic(path, write_text, "old", &d), 0);
    assert_int_equal(out_write_atomic(path, write_fail_halfway, NULL, &d), -1);
    slurp(path, got, sizeof got);
    assert_string_equal(got, "old");
    assert_int_equal(test_count_entries(dir), 1); /* no temporary file left */
    assert_int_equal(d.count, 1);
    assert_non_null(strstr(d.first, "cannot write '"));
}

static void test_atomic_rename_onto_directory_fails_cleanly(void **state)
{
    const char *dir = *state;
    char path[256];
    struct diag d;
    diag_init(&d, NULL, NULL);
    out_join(path, sizeof path, dir, "sub", "");
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(out_write_atomic(path, write_text, "x", &d), -1);
    assert_int_equal(test_count_entries(dir), 1); /* just the folder */
    assert_non_null(strstr(d.first, "sub"));
}

/* Root ignores permission bits, so "read-only" places are ones nobody can create files in. */
static void test_atomic_unwritable_places(void **state)
{
    (void)state;
    struct diag d;
    diag_init(&d, NULL, NULL);
    /* A folder that is a regular file. */
    assert_int_equal(out_write_atomic("/dev/null/report.pdf", write_text, "x", &d), -1);
    assert_string_equal(d.first, "cannot write '/dev/null/report.pdf': Not a directory");
    /* A folder that does not exist. */
    assert_int_equal(out_write_atomic("/nonexistent-memfit/r.pdf", write_text, "x", &d), -1);
    assert_int_equal(d.count, 2);
    /* A read-only file system (procfs refuses new files even to root). */
    assert_int_equal(out_write_atomic("/proc/memfit-report.pdf", write_text, "x", &d), -1);
    assert_int_equal(d.count, 3);
    assert_int_equal(access("/proc/memfit-report.pdf", F_OK), -1);
}

static void test_stream_reports_full_disk(void **state)
{
    (void)state;
    FILE *f = fopen("/dev/full", "wb");
    if (!f)
        skip();
    assert_int_not_equal(out_write_stream(f, write_a_lot, NULL), 0);
    fclose(f);
    /* A small write is buffered: the failure must still show up at the flush. */
    f = fopen("/dev/full", "wb");
    assert_int_not_equal(out_write_stream(f, write_text, "tiny"), 0);
    fclose(f);
}

static void test_stream_ok(void **state)
{
    (void)state;
    FILE *f = fopen("/dev/null", "wb");
    assert_non_null(f);
    assert_int_equal(out_write_stream(f, write_a_lot, NULL), 0);
    fclose(f);
}

static void test_make_dirs(void **state)
{
    (void)state;
    char dir[] = "/tmp/memfit-out-XXXXXX", deep[256];
    assert_non_null(mkdtemp(dir));
    snprintf(deep, sizeof deep, "%s/a/b/c/", dir);
    struct diag d;
    diag_init(&d, NULL, NULL);
    assert_int_equal(out_make_dirs(deep, &d), 0);
    assert_int_equal(out_make_dirs(deep, &d), 0); /* already there */
    struct stat st;
    assert_int_equal(stat(deep, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(out_make_dirs("/dev/null/x", &d), -1);
    assert_string_equal(d.first, "/dev/null/x: cannot create folder: Not a directory");
    assert_int_equal(out_make_dirs("", &d), -1);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -r '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_source_date_epoch(void **state)
{
    (void)state;
    struct diag d;
    diag_init(&d, NULL, NULL);
    long long t;
    assert_int_equal(out_source_date_epoch(NULL, &t, &d), 0);
    assert_int_equal(t, OUT_DEFAULT_EPOCH);
    assert_int_equal(out_source_date_epoch("", &t, &d), 0);
    assert_int_equal(out_source_date_epoch("1700000000", &t, &d), 1);
    assert_int_equal(t, 1700000000);
    assert_int_equal(d.count, 0);
    assert_int_equal(out_source_date_epoch("abc", &t, &d), -1);
    assert_int_equal(out_source_date_epoch("-5", &t, &d), -1);
    assert_int_equal(out_source_date_epoch("253402300800", &t, &d), -1); /* year 10000 */
    assert_string_equal(d.first, "SOURCE_DATE_EPOCH: 'abc' is not a number of seconds since 1970");
}

/* --- a killed run's temporary files --- */

/* Creates dir/name (a file, or a folder when dir_too), last modified `age` seconds ago. */
static void make_aged(const char *dir, const char *name, time_t age, int folder)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (folder) {
        assert_int_equal(mkdir(path, 0700), 0);
    } else {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs("partial", f);
        fclose(f);
    }
    struct timespec ts[2] = {{time(NULL) - age, 0}, {time(NULL) - age, 0}};
    assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static int exists_in(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* Only the pattern's files older than the run and held by no live run are removed. */
static void test_stale_temporaries_removed(void **state)
{
    const char *dir = *state;
    make_aged(dir, ".memfit-tmp-Ab3dE9", 3600, 0); /* a killed run's: removed */
    make_aged(dir, ".memfit-tmp-zzzzzz", 7200, 0); /* removed */
    make_aged(dir, ".memfit-tmp-fresh1", -60, 0);  /* newer than the run: kept */
    make_aged(dir, ".memfit-tmp-held01", 3600, 0); /* locked by a live run: kept */
    make_aged(dir, ".memfit-tmp-keep.txt", 3600, 0);
    make_aged(dir, ".memfit-tmp-abc", 3600, 0);
    make_aged(dir, "report.pdf", 3600, 0);
    make_aged(dir, ".memfit-tmp-folder", 3600, 1);
    char held[512];
    snprintf(held, sizeof held, "%s/.memfit-tmp-held01", dir);
    int fd = open(held, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX), 0);
    assert_int_equal(out_remove_stale(dir, time(NULL)), 2);
    close(fd);
    assert_false(exists_in(dir, ".memfit-tmp-Ab3dE9"));
    assert_false(exists_in(dir, ".memfit-tmp-zzzzzz"));
    assert_true(exists_in(dir, ".memfit-tmp-fresh1"));
    assert_true(exists_in(dir, ".memfit-tmp-held01"));
    assert_true(exists_in(dir, ".memfit-tmp-keep.txt"));
    assert_true(exists_in(dir, ".memfit-tmp-abc"));
    assert_true(exists_in(dir, "report.pdf"));
    assert_true(exists_in(dir, ".memfit-tmp-folder"));
    /* The next write into the folder leaves it as it found it, but for its own file. */
    assert_int_equal(out_remove_stale(dir, time(NULL)), 1); /* held01, no longer locked */
}

/* --- what -o names: only a regular file is ever replaced --- */

/* A symbolic link: the file it points to is written, the link stays a link. */
static void test_atomic_through_symlink(void **state)
{
    const char *dir = *state;
    char target[256], link[256], got[64];
    struct diag d;
    diag_init(&d, NULL, NULL);
    out_join(target, sizeof target, dir, "target", ".csv");
    out_join(link, sizeof link, dir, "link", ".csv");
    assert_int_equal(out_write_atomic(target, write_text, "old", &d), 0);
    assert_int_equal(symlink("target.csv", link), 0);
    assert_int_equal(out_write_atomic(link, write_text, "new", &d), 0);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    slurp(target, got, sizeof got);
    assert_string_equal(got, "new");
    assert_int_equal(test_count_entries(dir), 2);
    /* A link to nothing is refused, and stays. */
    out_join(link, sizeof link, dir, "dangling", "");
    assert_int_equal(symlink("nowhere", link), 0);
    assert_int_equal(out_write_atomic(link, write_text, "x", &d), -1);
    assert_non_null(strstr(d.first, "a symbolic link to nothing"));
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(test_count_entries(dir), 3);
}

/* A folder is refused with a reason, and nothing is left beside it. */
static void test_atomic_refuses_folder(void **state)
{
    const char *dir = *state;
    struct diag d;
    diag_init(&d, NULL, NULL);
    assert_int_equal(out_write_atomic(dir, write_text, "x", &d), -1);
    char want[300];
    snprintf(want, sizeof want, "cannot write '%s': is a folder", dir);
    assert_string_equal(d.first, want);
    assert_int_equal(test_count_entries(dir), 0);
}

/* A FIFO is written in place (a reader gets the text) and stays a FIFO. */
static void test_atomic_fifo_in_place(void **state)
{
    const char *dir = *state;
    char fifo[256];
    out_join(fifo, sizeof fifo, dir, "pipe", "");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    int rfd = open(fifo, O_RDONLY | O_NONBLOCK);
    assert_true(rfd >= 0);
    struct diag d;
    diag_init(&d, NULL, NULL);
    assert_int_equal(out_write_atomic(fifo, write_text, "through", &d), 0);
    char got[16] = {0};
    assert_int_equal(read(rfd, got, sizeof got - 1), 7);
    assert_string_equal(got, "through");
    close(rfd);
    struct stat st;
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(test_count_entries(dir), 1);
}

/*
 * A character device is written in place, never replaced: a copy of /dev/null's node (root only:
 * mknod; skipped elsewhere), and /dev/full, whose failure is reported.
 */
static void test_atomic_device_in_place(void **state)
{
    const char *dir = *state;
    struct diag d;
    diag_init(&d, NULL, NULL);
    char node[256];
    out_join(node, sizeof node, dir, "null", "");
    if (mknod(node, S_IFCHR | 0666, makedev(1, 3)) != 0)
        skip();
    assert_int_equal(out_write_atomic(node, write_a_lot, NULL, &d), 0);
    struct stat st;
    assert_int_equal(lstat(node, &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    assert_int_equal(test_count_entries(dir), 1);
    out_join(node, sizeof node, dir, "full", "");
    assert_int_equal(mknod(node, S_IFCHR | 0666, makedev(1, 7)), 0);
    assert_int_equal(out_write_atomic(node, write_text, "x", &d), -1);
    assert_non_null(strstr(d.first, "No space left on device"));
    assert_int_equal(lstat(node, &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    assert_int_equal(test_count_entries(dir), 2);
}

/* What a signal handler does mid-write: the temporary file goes, the target is never made. */
static int write_then_interrupted(FILE *f, void *ctx)
{
    const char *dir = ctx;
    fputs("half", f);
    fflush(f);
    assert_int_equal(test_count_entries(dir), 1); /* the temporary file */
    out_remove_live();
    assert_int_equal(test_count_entries(dir), 0);
    return 0;
}

/* The same, the temporary file one of two in its folder (the target written before). */
static int write_then_interrupted_beside(FILE *f, void *ctx)
{
    const char *dir = ctx;
    fputs("half", f);
    fflush(f);
    assert_int_equal(test_count_entries(dir), 2);
    out_remove_live();
    assert_int_equal(test_count_entries(dir), 1);
    return 0;
}

static void test_live_temporary_removed(void **state)
{
    const char *dir = *state;
    char path[256];
    out_join(path, sizeof path, dir, "r", ".csv");
    struct diag d;
    diag_init(&d, NULL, NULL);
    assert_int_equal(out_write_atomic(path, write_then_interrupted, (void *)dir, &d), -1);
    assert_int_equal(test_count_entries(dir), 0);
    /* Once a write is over, nothing of it is live: a later call removes nothing, and the slots
     * are free again however many writes came before. */
    for (int i = 0; i < 3 * OUT_SET_MAX; i++)
        assert_int_equal(out_write_atomic(path, write_text, "whole", &d), 0);
    out_remove_live();
    assert_int_equal(test_count_entries(dir), 1);
    char other[256];
    out_join(other, sizeof other, dir, "s", ".csv");
    assert_int_equal(out_write_atomic(other, write_then_interrupted_beside, (void *)dir, &d), -1);
    assert_int_equal(test_count_entries(dir), 1);
}

/* A set: every file or none. A failure on the third leaves the first two as they were. */
static void test_set_whole_or_nothing(void **state)
{
    const char *dir = *state;
    char p[3][256], got[64];
    struct diag d;
    diag_init(&d, NULL, NULL);
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%d", i);
        out_join(p[i], sizeof p[i], dir, name, ".png");
    }
    assert_int_equal(out_write_atomic(p[0], write_text, "old", &d), 0);
    struct out_set set;
    out_set_init(&set);
    assert_int_equal(out_set_add(&set, p[0], write_text, "new0", &d), 0);
    assert_int_equal(out_set_add(&set, p[1], write_text, "new1", &d), 0);
    assert_int_equal(test_count_entries(dir), 3); /* f0 and two staged files */
    assert_int_equal(out_set_add(&set, p[2], write_fail_halfway, NULL, &d), -1);
    assert_int_equal(test_count_entries(dir), 1);
    slurp(p[0], got, sizeof got);
    assert_string_equal(got, "old");
    /* And whole: all renamed at the commit, no temporary file left. */
    out_set_init(&set);
    for (int i = 0; i < 3; i++)
        assert_int_equal(out_set_add(&set, p[i], write_text, "new", &d), 0);
    assert_int_equal(access(p[2], F_OK), -1); /* nothing in place before the commit */
    assert_int_equal(out_set_commit(&set, &d), 0);
    assert_int_equal(test_count_entries(dir), 3);
    slurp(p[2], got, sizeof got);
    assert_string_equal(got, "new");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_safe_name_keeps_good_names),
        cmocka_unit_test(test_safe_name_never_a_path),
        cmocka_unit_test(test_safe_name_replaces_runs_and_utf8),
        cmocka_unit_test(test_safe_name_never_empty),
        cmocka_unit_test(test_safe_name_bounded),
        cmocka_unit_test(test_unique_name_suffixes_in_order),
        cmocka_unit_test(test_unique_name_cuts_long_base),
        cmocka_unit_test(test_join),
        cmocka_unit_test_setup_teardown(test_atomic_writes_and_replaces, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_atomic_failure_keeps_old_file, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_atomic_rename_onto_directory_fails_cleanly, make_dir,
                                        remove_dir),
        cmocka_unit_test(test_atomic_unwritable_places),
        cmocka_unit_test(test_stream_reports_full_disk),
        cmocka_unit_test(test_stream_ok),
        cmocka_unit_test(test_make_dirs),
        cmocka_unit_test(test_source_date_epoch),
        cmocka_unit_test_setup_teardown(test_stale_temporaries_removed, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_atomic_through_symlink, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_atomic_refuses_folder, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_atomic_fifo_in_place, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_atomic_device_in_place, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_live_temporary_removed, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_set_whole_or_nothing, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
