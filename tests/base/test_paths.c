/* Tests of paths.c: data files are found beside the executable, never in the current folder. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/paths.h"

/* A file that exists only in a fresh folder which becomes the current directory: the lookup
 * must not take it (it used to, as the last resort). */
static void never_from_the_current_directory(void **state)
{
    (void)state;
    char old[PATH_MAX], dir[] = "/tmp/memfit-paths-XXXXXX", path[PATH_MAX + 64], buf[4096];
    assert_non_null(getcwd(old, sizeof old));
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/configs", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/configs/only-here.csv", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("name\n", f);
    fclose(f);
    assert_int_equal(chdir(dir), 0);
    int rc = paths_find_data("configs/only-here.csv", buf, sizeof buf);
    assert_int_equal(chdir(old), 0);
    unlink(path);
    snprintf(path, sizeof path, "%s/configs", dir);
    rmdir(path);
    rmdir(dir);
    assert_int_equal(rc, -1);
}

/* The shipped data is found from a test binary in a build folder of its own (BUILD=build/x). */
static void found_beside_the_build(void **state)
{
    (void)state;
    char buf[4096];
    assert_int_equal(paths_find_data("configs/models.csv", buf, sizeof buf), 0);
    assert_int_equal(access(buf, R_OK), 0);
    assert_true(strncmp(buf, "./", 2) != 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(never_from_the_current_directory),
        cmocka_unit_test(found_beside_the_build),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
