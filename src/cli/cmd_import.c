/* cmd_import: see commands.h. memfit import-config: models.csv rows from config.json files. */
#include "cli/commands.h"

#include <stdbool.h>
#include <stdio.h>

#include "base/diag.h"
#include "base/strbuf.h"
#include "cli/options.h"
#include "cli/session.h"
#include "input/modeljson.h"

/* A models table from config.json files (doc/model.md section 13.3): the header, then a row per
 * file that maps; each other file is reported. */
int cmd_import_config(const struct options *o)
{
    struct diag d;
    diag_init(&d, session_print_message, (void *)o);
    if (o->n_files == 0)
        return options_usage_error(
            o, "%s: at least one config.json (or a folder holding one) is needed", "import-config");
    struct strbuf sb;
    bool unreadable = false;
    strbuf_init(&sb);
    modeljson_csv_header(&sb);
    for (int i = 0; i < o->n_files; i++) {
        struct modeljson m;
        char file[MODELJSON_FILE_MAX], why[DIAG_MSG_MAX];
        enum modeljson_status st =
            modeljson_read(o->files[i], &m, file, sizeof file, why, sizeof why);
        if (st == MODELJSON_OK)
            modeljson_csv_row(&m, file, &sb);
        else
            diag_report(&d, NULL, 0, "%s", why);
        unreadable |= st == MODELJSON_UNREADABLE;
    }
    if (sb.err != STRBUF_OK) {
        strbuf_release(&sb);
        fprintf(stderr, "memfit: out of memory\n");
        return EXIT_USAGE;
    }
    fwrite(sb.buf, 1, sb.len, stdout);
    strbuf_release(&sb);
    if (!session_flush_stdout())
        return EXIT_USAGE;
    return unreadable ? EXIT_USAGE : d.count ? EXIT_ROWS_REJECTED : EXIT_ALL_OK;
}
