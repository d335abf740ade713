/* options: see options.h. */
#include "cli/options.h"

#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/suggest.h"
#include "cli/commands.h"
#include "cli/help.h"

/* ---- the options ---- */

/* The spec of key that applies to cmd (the first of key when cmd is NULL or none applies). */
static const struct option_spec *find_spec(int key, const struct command *cmd)
{
    const struct option_spec *first = NULL;
    for (size_t i = 0; i < HELP_N_OPTIONS; i++) {
        if (help_option_specs[i].key != key)
            continue;
        if (cmd && help_option_specs[i].commands & cmd->bit)
            return &help_option_specs[i];
        if (!first)
            first = &help_option_specs[i];
    }
    return first;
}

/* The commands key applies to, as bits. */
static unsigned spec_commands(int key)
{
    unsigned bits = 0;
    for (size_t i = 0; i < HELP_N_OPTIONS; i++)
        if (help_option_specs[i].key == key)
            bits |= help_option_specs[i].commands;
    return bits;
}

/* getopt's table: each long name once, in the order of help_option_specs. Returns the count. */
static size_t long_options(struct option *longs)
{
    size_t n = 0;
    for (size_t i = 0; i < HELP_N_OPTIONS; i++) {
        bool dup = false;
        for (size_t j = 0; j < n; j++)
            dup |= strcmp(longs[j].name, help_option_specs[i].name) == 0;
        if (!dup)
            longs[n++] = (struct option){help_option_specs[i].name, help_option_specs[i].has_arg,
                                         NULL, help_option_specs[i].key};
    }
    longs[n] = (struct option){NULL, 0, NULL, 0};
    return n;
}

/* ---- usage errors ---- */

int options_usage_error(const struct options *o, const char *fmt, const char *arg)
{
    fputs("memfit: ", stderr);
    fprintf(stderr, fmt, arg);
    if (o->command)
        fprintf(stderr, "\nTry 'memfit help %s'.\n", o->command->name);
    else
        fputs("\nTry 'memfit --help'.\n", stderr);
    return EXIT_USAGE;
}

/* ---- parsing ---- */

/* The index of arg among the choices of s (case-insensitive), or -1 after a usage message that
 * lists them: "--format: 'xml' is not csv, json or table". */
static int parse_choice(const struct options *o, const struct option_spec *s, const char *arg)
{
    size_t n = 0;
    for (; s->choices[n]; n++)
        if (strcasecmp(arg, s->choices[n]) == 0)
            return (int)n;
    char list[128], msg[256];
    snprintf(msg, sizeof msg, "--%s: '%%s' is not %s", s->name,
             suggest_join(s->choices, n, " or ", list, sizeof list));
    options_usage_error(o, msg, arg);
    return -1;
}

/* The most layouts --top lists for a job (each row a complete scenario). */
#define SEARCH_TOP_MAX 100000

/* "A:B" with 0 < A <= B, decimal digits only. */
static bool parse_range(const char *arg, uint64_t *from, uint64_t *to)
{
    char *end;
    if (!(*arg >= '0' && *arg <= '9'))
        return false;
    errno = 0;
    *from = strtoull(arg, &end, 10);
    if (*end != ':' || !(end[1] >= '0' && end[1] <= '9'))
        return false;
    *to = strtoull(end + 1, &end, 10);
    return !*end && !errno && *from > 0 && *from <= *to;
}

/* A count of tokens: a positive number, with an optional suffix k, M, G or B, T or P (10^3 to
 * 10^15): "1T", "15T", "2e12", "300B". */
static bool parse_tokens(const char *arg, double *v)
{
    static const char suffixes[] = "kMGBTP";
    static const double scale[] = {1e3, 1e6, 1e9, 1e9, 1e12, 1e15};
    char *end;
    errno = 0;
    *v = strtod(arg, &end);
    if (end == arg || errno)
        return false;
    if (*end) {
        const char *at = strchr(suffixes, *end);
        if (!at || end[1])
            return false;
        *v *= scale[at - suffixes];
    }
    return isfinite(*v) && *v >= 1;
}

/* A positive (or, with zero_ok, non-negative) finite number. */
static bool parse_positive(const char *arg, double *v, bool zero_ok)
{
    char *end;
    errno = 0;
    *v = strtod(arg, &end);
    return end != arg && !*end && !errno && isfinite(*v) && (*v > 0 || (zero_ok && *v == 0));
}

/* Applies one option; returns -1 to go on, or an exit status. */
static int parse_option(struct options *o, int key, const char *arg)
{
    const struct option_spec *s = find_spec(key, o->command);
    int i = 0;
    if (s && s->choices && (i = parse_choice(o, s, arg)) < 0)
        return EXIT_USAGE;
    char *end;
    switch (key) {
    case OPT_FORMAT:
        o->format = (enum evalout_format)i;
        o->format_given = true;
        return -1;
    case OPT_PAPER:
        o->letter = i == 1;
        return -1;
    case OPT_UNITS:
        o->units = (enum units)i;
        return -1;
    case OPT_PEAK:
        o->peak = (enum peak_model)i;
        return -1;
    case OPT_IMPL:
        o->impl = (enum impl)i;
        return -1;
    case OPT_PROGRESS:
        o->progress = (enum progress_mode)i;
        return -1;
    case OPT_RESERVE:
        errno = 0;
        o->reserve = strtod(arg, &end);
        if (end == arg || *end || errno || !(o->reserve >= 0 && o->reserve < 1))
            return options_usage_error(o, "--reserve: '%s' is not a fraction in [0, 1)", arg);
        return -1;
    case 'o':
        o->out = arg;
        return -1;
    case OPT_TEMPLATE:
        o->template_path = arg;
        return -1;
    case OPT_MODELS:
        o->models_path = arg;
        return -1;
    case OPT_GPUS:
        o->gpus_path = arg;
        return -1;
    case OPT_WIDE:
        o->wide = true;
        return -1;
    case OPT_TOP:
        errno = 0;
        o->top = strtoull(arg, &end, 10);
        if (end == arg || *end || errno || *arg == '-' || o->top == 0 || o->top > SEARCH_TOP_MAX)
            return options_usage_error(o, "--top: '%s' is not a count from 1 to 100000", arg);
        return -1;
    case OPT_THREADS:
        errno = 0;
        o->threads = strtoull(arg, &end, 10);
        if (end == arg || *end || errno || *arg == '-' || o->threads == 0 ||
            o->threads > EVAL_THREADS_MAX)
            return options_usage_error(o, "--threads: '%s' is not a count from 1 to 64", arg);
        return -1;
    case OPT_REPORT:
        o->report_path = arg;
        return -1;
    case OPT_GPUS_RANGE:
        if (!parse_range(arg, &o->range_from, &o->range_to))
            return options_usage_error(o, "--gpus-range: '%s' is not A:B with 0 < A <= B", arg);
        return -1;
    case OPT_TOKENS:
        if (!parse_tokens(arg, &o->tokens))
            return options_usage_error(
                o, "--tokens: '%s' is not a count of tokens (e.g. 1T, 15T, 2e12; at least 1)", arg);
        return -1;
    case OPT_DAYS:
        if (!parse_positive(arg, &o->days, false))
            return options_usage_error(o, "--days: '%s' is not a positive number of days", arg);
        return -1;
    case OPT_PRICE:
        if (!parse_positive(arg, &o->price, true))
            return options_usage_error(o, "--price: '%s' is not a price (a number >= 0)", arg);
        return -1;
    case OPT_SPLIT:
        o->split = true;
        return -1;
    case 'q':
        o->quiet = true;
        return -1;
    case 'h':
        o->help = true;
        return -1;
    case OPT_VERSION:
        o->version = true;
        return -1;
    default:
        return options_usage_error(o, "%s: an option without a case in parse_option", "internal");
    }
}

/*
 * What getopt refused, said: c is ':' for a missing value, else '?' with optopt the letter of
 * an unknown short option or the key of a long one given a value it does not take (optopt 0: an
 * unknown or ambiguous long name). argv[optind - 1] is the word, but for a letter inside
 * "-xq". Returns EXIT_USAGE.
 */
static int bad_option(const struct options *o, int c, char *const *argv, const struct option *longs,
                      size_t n_longs)
{
    const char *typed = argv[optind - 1];
    bool is_long = strncmp(typed, "--", 2) == 0;
    char name[64], msg[512], dashed[70];
    size_t len = strcspn(typed + 2, "=");
    snprintf(name, sizeof name, "%.*s", (int)(len < 60 ? len : 60), typed + 2);
    snprintf(dashed, sizeof dashed, "--%s", name);
    if (c == ':') {
        if (is_long)
            return options_usage_error(o, "option '%s' needs a value", dashed);
        snprintf(name, sizeof name, "-%c", optopt);
        return options_usage_error(o, "option '%s' needs a value", name);
    }
    if (optopt) {
        if (is_long && typed[2 + len] == '=' && find_spec(optopt, NULL))
            return options_usage_error(o, "option '%s' takes no value", dashed);
        snprintf(name, sizeof name, "-%c", optopt);
        return options_usage_error(o, "unknown option '%s'", name);
    }
    /* An unknown name, or a prefix of several (getopt takes a prefix of one): name them. */
    const char *names[HELP_N_OPTIONS];
    size_t n_prefix = 0;
    for (size_t i = 0; i < n_longs; i++)
        if (strncmp(longs[i].name, name, strlen(name)) == 0)
            names[n_prefix++] = longs[i].name;
    if (n_prefix > 1) {
        char list[256] = "";
        for (size_t i = 0; i < n_prefix; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s--%s", i ? ", " : "",
                     names[i]);
        snprintf(msg, sizeof msg, "option '%s' is ambiguous: %s", dashed, list);
        return options_usage_error(o, "%s", msg);
    }
    for (size_t i = 0; i < n_longs; i++)
        names[i] = longs[i].name;
    const char *near = suggest_closest(name, names, n_longs);
    if (!near)
        return options_usage_error(o, "unknown option '%s'", dashed);
    snprintf(msg, sizeof msg, "unknown option '%%s' (did you mean '--%s'?)", near);
    return options_usage_error(o, msg, dashed);
}

/* Whether the option takes its value from the next word: "-o DIR", "-qo DIR", "--format json"
 * (a prefix of one long name counts, as for getopt). */
static bool takes_next_word(const char *a)
{
    if (a[1] != '-') {
        for (const char *p = a + 1; *p; p++) {
            const struct option_spec *s = find_spec((unsigned char)*p, NULL);
            if (s && s->has_arg == required_argument)
                return p[1] == '\0';
        }
        return false;
    }
    const char *name = a + 2;
    if (strchr(name, '='))
        return false;
    const struct option_spec *hit = NULL;
    bool ambiguous = false;
    for (size_t i = 0; i < HELP_N_OPTIONS; i++) {
        const struct option_spec *s = &help_option_specs[i];
        if (strcmp(s->name, name) == 0)
            return s->has_arg == required_argument;
        if (strncmp(s->name, name, strlen(name)) == 0) {
            ambiguous |= hit && strcmp(hit->name, s->name) != 0;
            hit = s;
        }
    }
    return hit && !ambiguous && hit->has_arg == required_argument;
}

/* The command of argv, found before getopt runs so that its messages can name the command's
 * help: the first word that is neither an option nor an option's value (NULL: none known). */
static const struct command *prescan_command(int argc, char *const *argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            return i + 1 < argc ? help_find_command(argv[i + 1]) : NULL;
        if (a[0] != '-' || a[1] == '\0')
            return help_find_command(a);
        if (takes_next_word(a))
            i++;
    }
    return NULL;
}

/* An option used with a command it does not apply to: "--split is not an option of eval". */
static int check_applies(const struct options *o, const int *seen, size_t n_seen)
{
    for (size_t i = 0; i < n_seen; i++) {
        unsigned bits = spec_commands(seen[i]);
        if (bits & o->command->bit)
            continue;
        const char *where[HELP_N_COMMANDS];
        size_t n = 0;
        for (size_t c = 0; c < HELP_N_COMMANDS; c++)
            if (bits & help_commands[c].bit)
                where[n++] = help_commands[c].name;
        char list[128], msg[256];
        snprintf(msg, sizeof msg, "--%s is not an option of %s (it is one of %s)",
                 find_spec(seen[i], NULL)->name, o->command->name,
                 suggest_join(where, n, " and ", list, sizeof list));
        return options_usage_error(o, "%s", msg);
    }
    if (o->wide && o->format != EVALOUT_TABLE)
        return options_usage_error(o, "%s", "--wide is only for --format table");
    if ((o->tokens > 0) != (o->days > 0))
        return options_usage_error(o, "%s", "--tokens and --days go together");
    if (o->price >= 0 && o->tokens <= 0)
        return options_usage_error(o, "%s", "--price is for --tokens and --days");
    return -1;
}

int options_parse_args(struct options *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->reserve = 0.15;
    o->peak = PEAK_STEP;
    o->top = 10;
    o->price = -1;
    o->command = prescan_command(argc, argv);
    struct option longs[HELP_N_OPTIONS + 1];
    size_t n_longs = long_options(longs);
    int seen[HELP_N_OPTIONS], c;
    size_t n_seen = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:qh", longs, NULL)) != -1) {
        if (c == '?' || c == ':')
            return bad_option(o, c, argv, longs, n_longs);
        bool dup = false;
        for (size_t i = 0; i < n_seen; i++)
            dup |= seen[i] == c;
        if (!dup && n_seen < HELP_N_OPTIONS)
            seen[n_seen++] = c;
        int rc = parse_option(o, c, optarg);
        if (rc >= 0)
            return rc;
    }
    if (o->version) {
        help_version();
        return EXIT_ALL_OK;
    }
    if (optind >= argc) {
        help_general(o->help ? stdout : stderr);
        return o->help ? EXIT_ALL_OK : EXIT_USAGE;
    }
    const char *name = argv[optind];
    o->command = help_find_command(name);
    if (!o->command) {
        const char *names[HELP_N_COMMANDS];
        for (size_t i = 0; i < HELP_N_COMMANDS; i++)
            names[i] = help_commands[i].name;
        const char *near = suggest_closest(name, names, HELP_N_COMMANDS);
        char list[128], msg[256];
        if (near)
            snprintf(msg, sizeof msg, "unknown command '%%s' (did you mean '%s'?)", near);
        else
            snprintf(msg, sizeof msg, "unknown command '%%s' (the commands: %s)",
                     suggest_join(names, HELP_N_COMMANDS, " and ", list, sizeof list));
        return options_usage_error(o, msg, name);
    }
    if (o->help) {
        help_command(stdout, o->command);
        return EXIT_ALL_OK;
    }
    o->files = argv + optind + 1;
    o->n_files = argc - optind - 1;
    return check_applies(o, seen, n_seen);
}
