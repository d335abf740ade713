/* cmd_help: see commands.h. memfit help [COMMAND]: the general help, or a command's own. */
#include "cli/commands.h"

#include <stdio.h>

#include "base/suggest.h"
#include "cli/help.h"
#include "cli/options.h"

int cmd_help(const struct options *o)
{
    struct options top = *o; /* its messages point to the general help */
    top.command = NULL;
    if (o->n_files == 0) {
        help_general(stdout);
        return EXIT_ALL_OK;
    }
    if (o->n_files > 1)
        return options_usage_error(&top, "help: one COMMAND at most (got '%s' too)", o->files[1]);
    const struct command *c = help_find_command(o->files[0]);
    if (c) {
        help_command(stdout, c);
        return EXIT_ALL_OK;
    }
    const char *names[HELP_N_COMMANDS];
    for (size_t i = 0; i < HELP_N_COMMANDS; i++)
        names[i] = help_commands[i].name;
    const char *near = suggest_closest(o->files[0], names, HELP_N_COMMANDS);
    char msg[160];
    snprintf(msg, sizeof msg, "help: unknown command '%%s'%s%s%s", near ? " (did you mean '" : "",
             near ? near : "", near ? "'?)" : "");
    return options_usage_error(&top, msg, o->files[0]);
}
