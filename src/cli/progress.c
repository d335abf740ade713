/* progress: see progress.h. */
#include "cli/progress.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether two descriptors write to the same place: one file, or two terminals (most likely the
 * same screen). */
static bool same_output(int a, int b)
{
    struct stat sa, sb;
    if (fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
        sa.st_ino == sb.st_ino)
        return true;
    return isatty(a) && isatty(b);
}

void progress_start(struct progress *p, const struct options *o, const char *label, bool big,
                    bool rows_on_stdout)
{
    *p = (struct progress){false, label, -1};
    if (o->quiet || o->progress == PROGRESS_NEVER)
        return;
    if (rows_on_stdout && same_output(STDOUT_FILENO, STDERR_FILENO))
        return;
    p->on = o->progress == PROGRESS_ALWAYS || (big && isatty(STDERR_FILENO));
}

void progress_show(struct progress *p, double done, double total)
{
    if (!p->on || total <= 0)
        return;
    long pct = (long)(done * 100 / total);
    pct = pct > 100 ? 100 : pct;
    if (pct == p->last_pct)
        return;
    p->last_pct = pct;
    int bar = (int)(pct * 30 / 100);
    fprintf(stderr, "\r%s [%.*s%*s] %3ld%%", p->label, bar, "##############################",
            30 - bar, "", pct);
}

void progress_end(struct progress *p)
{
    if (p->on && p->last_pct >= 0)
        fputc('\n', stderr);
    p->last_pct = -1;
}
