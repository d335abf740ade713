/*
 * main: the command line (doc/memfit.1: SYNOPSIS, COMMANDS, OPTIONS). Parses the options
 * (cli/options.h), runs the sub-command (its driver: cli/commands.h) and returns its exit status
 * (doc/memfit.1, EXIT STATUS; cli/commands.h lists them). The only place that exits; the drivers
 * print the messages the modules report and choose the status.
 */
#include "cli/help.h"
#include "cli/options.h"

int main(int argc, char **argv)
{
    struct options o;
    int rc = options_parse_args(&o, argc, argv);
    if (rc >= 0)
        return rc;
    return o.command->run(&o);
}
