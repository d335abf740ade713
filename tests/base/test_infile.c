/* Tests of infile: a file read whole is a regular file; a FIFO, a device or a folder is refused at
 * once, with the reason. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/infile.h"

static void test_regular_file_read(void **state)
{
    (void)state;
    char path[] = "/tmp/memfit-infile-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "text", 4), 4);
    close(fd);
    char why[128] = "";
    FILE *f = infile_open(path, why, sizeof why);
    assert_non_null(f);
    char buf[8] = {0};
    assert_int_equal(fread(buf, 1, sizeof buf, f), 4);
    assert_string_equal(buf, "text");
    fclose(f);
    unlink(path);
}

static void test_refused_with_reason(void **state)
{
    (void)state;
    char why[128];
    assert_null(infile_open("/tmp", why, sizeof why));
    assert_string_equal(why, "is a folder");
    assert_null(infile_open("/dev/zero", why, sizeof why)); /* would never end */
    assert_string_equal(why, "not a regular file");
    assert_null(infile_open("/nonexistent-memfit/x.tmpl", why, sizeof why));
    assert_string_equal(why, "No such file or directory");
    /* A FIFO with no writer: refused at once instead of waiting forever for one. */
    char dir[] = "/tmp/memfit-infile-XXXXXX", fifo[64];
    assert_non_null(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/pipe", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_null(infile_open(fifo, why, sizeof why));
    assert_string_equal(why, "not a regular file");
    unlink(fifo);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regular_file_read),
        cmocka_unit_test(test_refused_with_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
