/*
 * options: the command line parsed (doc/memfit.1: SYNOPSIS, OPTIONS), by the tables of
 * cli/help.h: the command, its options and its files, into the struct options that every
 * command's driver reads; what the parser refuses is said as a usage error (options_usage_error,
 * which the drivers use too), with where to read more.
 */
#ifndef MEMFIT_OPTIONS_H
#define MEMFIT_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/units.h"
#include "cli/evalout.h"
#include "model/scenario.h"

enum progress_mode { PROGRESS_AUTO, PROGRESS_ALWAYS, PROGRESS_NEVER };

struct command;

struct options {
    const struct command *command; /* NULL until known */
    const char *out;               /* -o as given */
    enum evalout_format format;
    bool format_given; /* --format was on the command line */
    bool wide, split, letter, quiet, help, version;
    const char *template_path;
    enum units units;
    enum peak_model peak;
    enum impl impl; /* --impl: the default of the impl column */
    double reserve;
    const char *models_path, *gpus_path;
    enum progress_mode progress;
    uint64_t top;                  /* search --top */
    uint64_t threads;              /* eval --threads; 0: one a processor */
    uint64_t range_from, range_to; /* search --gpus-range (0: none) */
    double tokens, days;           /* search --tokens and --days (0: none) */
    double price;                  /* search --price a GPU-hour (< 0: none) */
    const char *report_path;       /* search --report */
    char **files;
    int n_files;
};

/* The most threads --threads gives eval; without it, one a processor up to EVAL_THREADS_AUTO
 * (the parsing thread keeps up with about two more). */
#define EVAL_THREADS_MAX 64
#define EVAL_THREADS_AUTO 8

/* Parses argv into o: -1 when o->command is to run, else the exit status (the help or the
 * version printed, or a usage error said). */
int options_parse_args(struct options *o, int argc, char **argv);

/* A usage message (fmt with one %s), then where to read more; returns EXIT_USAGE. */
int options_usage_error(const struct options *o, const char *fmt, const char *arg);

#endif
