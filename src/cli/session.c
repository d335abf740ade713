/* session: see session.h. */
#include "cli/session.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/paths.h"
#include "cli/help.h"
#include "cli/progress.h"
#include "input/config.h"

/* Whether file is one of the scenario CSVs of the command line (standard input's label too). */
static bool is_input(const struct options *o, const char *file)
{
    if (!file)
        return false;
    if (strcmp(file, "<stdin>") == 0)
        return true;
    for (int i = 0; i < o->n_files; i++)
        if (strcmp(file, o->files[i]) == 0)
            return true;
    return false;
}

void session_print_message(void *ctx, const char *msg, const char *file, unsigned long line)
{
    const struct options *o = ctx;
    /* --quiet hides what is said of a row (a rejected scenario, a job without a layout), never
     * why the run failed: a file that cannot be read or written, a template's error. */
    if (o->quiet && line > 0 && is_input(o, file))
        return;
    fprintf(stderr, "memfit: %s\n", msg);
}

/* ---- presets ---- */

static struct config_presets *load_presets(const struct options *o, struct diag *d)
{
    char models[4096], gpus[4096];
    const char *mp = o->models_path, *gp = o->gpus_path;
    if (!mp && paths_find_data("configs/models.csv", models, sizeof models) == 0)
        mp = models;
    if (!gp && paths_find_data("configs/gpus.csv", gpus, sizeof gpus) == 0)
        gp = gpus;
    return config_presets_load(mp, gp, d);
}

/* ---- reading scenarios ---- */

#define READ_BUFFER (256 * 1024)

/* Reads every scenario of one file. Returns false if the file cannot be read to its end. */
static bool read_file(const struct options *o, const char *path, const struct config_presets *pr,
                      struct nameset *names, struct reading *rd, struct diag *d)
{
    bool is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "r");
    const char *label = is_stdin ? "<stdin>" : path;
    if (!f) {
        diag_report(d, path, 0, "cannot open: %s", strerror(errno));
        return false;
    }
    /* A file read in blocks of READ_BUFFER, not stdio's 4 KiB: a read(2) per 4 KiB was a
     * fiftieth of a million-row eval (set before anything is read, as setvbuf requires; glibc
     * takes the size only with a buffer; stdin keeps its own, as it outlives this call). */
    char *block = is_stdin ? NULL : malloc(READ_BUFFER);
    if (block)
        setvbuf(f, block, _IOFBF, READ_BUFFER);
    if (rd->opened)
        rd->opened(rd->ctx);
    struct config_options copt = {o->reserve, o->peak, o->impl};
    struct config_reader *r = config_reader_new(f, label, pr, &copt, names, d);
    if (r && o->command->bit == CMD_SEARCH)
        config_reader_read_jobs(r);
    struct progress prog;
    struct stat st;
    double size = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) ? (double)st.st_size : 0;
    progress_start(&prog, o, label, size > 64 * 1024, rd->rows_on_stdout);
    prog.on &= rd->bar && size > 0;
    bool ok = r != NULL;
    struct scenario own, *sc = &own;
    unsigned long line, rows_read = 0;
    int rc;
    while (ok && (!rd->next || (ok = (sc = rd->next(rd->ctx)) != NULL)) &&
           (rc = config_reader_next(r, sc, &line)) != 0) {
        if (rc == -2)
            ok = false;
        else if (rc == 1 && (ok = rd->row(rd->ctx, sc, label, line, d)))
            rd->accepted++;
        /* ftell asks the kernel (an lseek) each time: a tenth of eval's time were it per row. */
        if (prog.on && ++rows_read % 256 == 0)
            progress_show(&prog, (double)ftell(f), size);
    }
    progress_show(&prog, size, size);
    progress_end(&prog);
    if (r)
        rd->rejected += config_reader_rejected(r);
    config_reader_free(r);
    if (!is_stdin)
        fclose(f);
    free(block);
    return ok;
}

bool session_read_files(const struct options *o, struct reading *rd, struct diag *d)
{
    struct config_presets *pr = load_presets(o, d);
    if (!pr)
        return false;
    struct nameset names;
    nameset_init(&names);
    bool ok = true;
    for (int i = 0; i < o->n_files; i++)
        ok = read_file(o, o->files[i], pr, &names, rd, d) && ok;
    nameset_release(&names);
    config_presets_free(pr);
    return ok;
}

/* ---- a table's width ---- */

size_t session_table_cols(const struct options *o, bool to_stdout)
{
    if (o->wide)
        return 0;
    const char *env = getenv("COLUMNS");
    char *end;
    if (env && *env) {
        errno = 0;
        unsigned long v = strtoul(env, &end, 10);
        if (!*end && !errno && v > 0 && v < 100000)
            return v;
    }
    struct winsize ws;
    if (to_stdout && isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
        ws.ws_col > 0)
        return ws.ws_col;
    return 80;
}

/* ---- standard output ---- */

bool session_flush_stdout(void)
{
    int err = errno; /* a write that failed before (the stream's error flag) left its reason */
    if (!ferror(stdout)) {
        errno = 0;
        if (fflush(stdout) == 0)
            return true;
        err = errno;
    }
    fprintf(stderr, "memfit: cannot write to standard output: %s\n", strerror(err ? err : EIO));
    return false;
}

void session_say_rejected(const struct options *o, const char *noun, const char *verb,
                          unsigned long done, unsigned long rejected)
{
    if (o->quiet || rejected == 0)
        return;
    unsigned long all = done + rejected;
    fprintf(stderr, "memfit: %lu of %lu %s%s %s, %lu rejected\n", done, all, noun,
            all == 1 ? "" : "s", verb, rejected);
}
