/*
 * main: the command line (doc/memfit.1: SYNOPSIS, COMMANDS, OPTIONS). Parses the options
 * (cli/options.h), runs the sub-command (its driver: cli/commands.h) and returns its exit status
 * (doc/memfit.1, EXIT STATUS; cli/commands.h lists them). The only place that exits; the drivers
 * print the messages the modules report and choose the status.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "base/out.h"
#include "cli/commands.h"
#include "cli/help.h"
#include "cli/options.h"
#include "cli/session.h"

/*
 * A standard stream the caller closed (`>&-`) is held by /dev/null opened the wrong way round, so
 * that no file memfit opens takes its number and writes to it fail, as they should, instead of
 * landing in that file.
 */
static void hold_closed_streams(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
            (void)open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
}

int main(int argc, char **argv)
{
    hold_closed_streams();
    out_catch_signals(); /* an interrupted run leaves no temporary file */
    struct options o;
    int rc = options_parse_args(&o, argc, argv);
    if (rc < 0)
        rc = o.command->run(&o);
    /* What the command printed to standard output (help, rows, tables) reached it, or the run
     * failed: a full disk or a closed stdout is never an exit status of 0 (a command that
     * already failed has said why). */
    if (rc != EXIT_USAGE && !session_flush_stdout())
        rc = EXIT_USAGE;
    return rc;
}
