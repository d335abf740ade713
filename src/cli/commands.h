/*
 * commands: the drivers of memfit's commands (doc/memfit.1, COMMANDS), one file each
 * (cli/cmd_NAME.c; import-config's is cli/cmd_import.c). Each takes the parsed command line
 * (cli/options.h) and returns the exit status (doc/memfit.1, EXIT STATUS), which main returns:
 *
 *   0  every scenario processed (or the help printed)
 *   1  at least one row rejected (every valid row still processed and written)
 *   2  usage error, unreadable input or unwritable output
 */
#ifndef MEMFIT_COMMANDS_H
#define MEMFIT_COMMANDS_H

struct options;

enum exit_code { EXIT_ALL_OK = 0, EXIT_ROWS_REJECTED = 1, EXIT_USAGE = 2 };

int cmd_eval(const struct options *o);
int cmd_report(const struct options *o);
int cmd_figures(const struct options *o);
int cmd_help(const struct options *o);
int cmd_import_config(const struct options *o);
int cmd_search(const struct options *o);

#endif
