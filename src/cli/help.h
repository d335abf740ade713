/*
 * help: the two tables that drive the command line, and the help printed from them (doc/memfit.1:
 * SYNOPSIS, COMMANDS, OPTIONS): `help_commands` (a command is one entry: its usage, help and
 * function) and `help_option_specs` (an option is one entry: its names, the commands it applies
 * to, its help and, for an option that takes one of a few words, those words). The parser
 * (cli/options.c), the help of each command and the check that an option applies to its command
 * all read them; so do the tests of the manual page and of the shell completion
 * (doc/memfit.bash). Also the version that --version prints.
 */
#ifndef MEMFIT_HELP_H
#define MEMFIT_HELP_H

#include <stdio.h>

struct options;

/* The commands an option applies to: one bit per command (struct command's bit); CMD_TOP marks
 * the options the general help lists. */
enum {
    CMD_EVAL = 1u << 0,
    CMD_REPORT = 1u << 1,
    CMD_FIGURES = 1u << 2,
    CMD_HELP = 1u << 3,
    CMD_IMPORT_CONFIG = 1u << 4,
    CMD_SEARCH = 1u << 5,
    CMD_TOP = 1u << 31,
    CMD_ALL = ~0u,
};

struct command {
    const char *name;
    unsigned bit;            /* CMD_ */
    const char *args;        /* what follows the name in its usage line */
    const char *summary;     /* its line in the general help */
    const char *about;       /* the paragraph of its own help */
    const char *example;     /* lines of its own help, each a command line */
    const char *exit_status; /* the end of its own help */
    void (*more_help)(FILE *f);
    int (*run)(const struct options *o);
};

/* The entries of help_commands and help_option_specs (help.c checks the counts). */
#define HELP_N_COMMANDS 6
#define HELP_N_OPTIONS 25

extern const struct command *const help_commands; /* HELP_N_COMMANDS of them */

/* The keys of the options without a letter (struct option_spec's key). */
enum {
    OPT_FORMAT = 256,
    OPT_WIDE,
    OPT_SPLIT,
    OPT_TEMPLATE,
    OPT_UNITS,
    OPT_RESERVE,
    OPT_MODELS,
    OPT_GPUS,
    OPT_PROGRESS,
    OPT_PAPER,
    OPT_PEAK,
    OPT_IMPL,
    OPT_TOP,
    OPT_THREADS,
    OPT_GPUS_RANGE,
    OPT_REPORT,
    OPT_TOKENS,
    OPT_DAYS,
    OPT_PRICE,
    OPT_VERSION
};

struct option_spec {
    const char *name;           /* the long name */
    int has_arg;                /* no_argument or required_argument */
    int key;                    /* the short letter, or an OPT_ value */
    unsigned commands;          /* CMD_ bits: the commands it applies to */
    const char *arg;            /* its argument in the help; NULL: the choices, a|b|c */
    const char *const *choices; /* the words it takes; NULL: any */
    const char *help;
};

extern const struct option_spec *const help_option_specs; /* HELP_N_OPTIONS of them */

/* The command of that name, or NULL. */
const struct command *help_find_command(const char *name);

/* The usage lines of every command, then the general options. */
void help_general(FILE *f);
/* A command's own help: usage, what it does, its options, an example, its exit status. */
void help_command(FILE *f, const struct command *c);
/* --version: "memfit 0.1.0" on standard output. */
void help_version(void);

#endif
