/*
 * doc: the page layout engine of the report, on libharu.
 *
 * Owns one PDF document being laid out: its pages (A4 or US letter) with margins, the running
 * head (the tool, then doc->running on the right) and the footers (page x of n), a cursor that
 * moves down the page (doc->y, top-left coordinates), text wrapped into paragraphs and headings,
 * generic tables (a header row repeated on every page the table runs onto, zebra rows, tinted
 * rows), space kept together ("at least h points below the cursor, else a new page"), bookmarks,
 * the document's colours, and the saved bytes (ToUnicode maps repaired, pdffix.h). Anything else
 * (charts) draws on doc->c, a canvas_hpdf on the current page.
 *
 * What the pages say is the caller's: doc knows no scenario and no template. The first failure
 * (a libharu status, or -1 for memory) is kept in doc->error and later drawing calls do nothing.
 */
#ifndef MEMFIT_DOC_H
#define MEMFIT_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <hpdf.h>

#include "base/diag.h"
#include "draw/canvas.h"
#include "draw/canvas_hpdf.h"

/* Bytes of the running head: a line of text, cut to the page width when drawn. */
#define DOC_RUNNING_BYTES 320

/* Margins and type, pt. */
#define DOC_M_LEFT 56.0
#define DOC_M_RIGHT 56.0
#define DOC_M_TOP 66.0
#define DOC_M_BOTTOM 62.0
#define DOC_BODY_PT 9.5
#define DOC_BODY_LEAD 13.6
#define DOC_TABLE_PT 8.6
#define DOC_TABLE_MIN_PT 6.0 /* a cell too wide is set smaller, down to this, before it wraps */
#define DOC_ROW_H 15.0

/* The most pages a document made with libharu can have: its page tree keeps every page in one
 * array of at most HPDF_LIMIT_MAX_ARRAY elements (libharu 2.3.0: 32,767), and the page after
 * the last fails with HPDF_ARRAY_COUNT_ERR (0x1001). */
#define DOC_MAX_PAGES ((size_t)HPDF_LIMIT_MAX_ARRAY)

/* doc->error when a page past doc->max_pages was asked for. */
#define DOC_ERR_PAGES (-2)

/* The document's colours. */
extern const struct canvas_rgb DOC_TEXT, DOC_MUTED, DOC_RULE, DOC_ACCENT, DOC_HEAD_FILL, DOC_ZEBRA,
    DOC_OK, DOC_OK_FILL, DOC_BAD, DOC_BAD_FILL;

struct doc {
    HPDF_Doc pdf;
    struct canvas_hpdf_fonts fonts;
    HPDF_Encoder utf8;
    double page_w, page_h;
    HPDF_Page *pages;
    size_t n_pages, cap_pages;
    struct canvas c; /* draws on the current page */
    struct canvas_hpdf ch;
    double y;                        /* the cursor: top of the next block, top-left coordinates */
    char head[DOC_RUNNING_BYTES];    /* after "memfit" at the top left of every page: the
                                      * document's title (doc_init's, until changed) */
    char running[DOC_RUNNING_BYTES]; /* the running head of the next new page (at the right) */
    size_t max_pages; /* the most pages (doc_init: DOC_MAX_PAGES; a caller may set fewer) */
    int error;        /* 0, or the first failure (a libharu status, -1 for memory, DOC_ERR_PAGES) */
    /* Called once, at the top of the next new page (after its running head), then cleared: the
     * report draws a figure there that did not fit the rest of the page it was deferred from. */
    void (*at_next_page)(struct doc *doc, void *ctx);
    void *at_next_page_ctx;
};

/*
 * Starts an empty document titled title on A4 (or US letter), DejaVu Sans embedded, compressed,
 * dated from source_date_epoch (seconds since 1970 as text; NULL or "": no date, so the same
 * input gives the same bytes). Returns 0, or -1 after reporting into d. Call doc_release in both
 * cases.
 */
int doc_init(struct doc *doc, const char *title, bool letter, const char *source_date_epoch,
             struct diag *d);

/* Frees everything doc holds. */
void doc_release(struct doc *doc);

/* What every page says after "memfit" at its top left (doc_init: the title). */
void doc_set_head(struct doc *doc, const char *head);

/* Keeps err (0 means -1, out of memory) as the document's failure unless one is kept already. */
void doc_fail(struct doc *doc, int err);

/* The width between the margins, and the y where the bottom margin starts, pt. */
double doc_width(const struct doc *doc);
double doc_bottom(const struct doc *doc);

/* Adds a page with its running head and moves the cursor to its top; past doc->max_pages, fails
 * with DOC_ERR_PAGES instead. */
void doc_new_page(struct doc *doc);

/* Starts a new page unless h points fit below the cursor. */
void doc_need(struct doc *doc, double h);

/* Draws s at (x, y) (the baseline), in size pt, bold or regular, in colour rgb. */
void doc_text(struct doc *doc, double x, double y, double size, enum canvas_align al, bool bold,
              struct canvas_rgb rgb, const char *s);

/* The width of s in size pt, bold or regular. */
double doc_width_of(struct doc *doc, double size, bool bold, const char *s);

/* A horizontal rule from x0 to x1 at y, width pt wide. */
void doc_hline(struct doc *doc, double x0, double x1, double y, double width,
               struct canvas_rgb rgb);

/* A filled rectangle, (x, y) its top-left corner; nothing when w or h is <= 0 (draw_rect). */
void doc_fill_rect(struct doc *doc, double x, double y, double w, double h, struct canvas_rgb rgb);

/*
 * Splits s into lines no wider than width at size (breaking at spaces) and calls line() for each.
 * A word wider than the line stands alone.
 */
typedef void doc_line_fn(struct doc *doc, const char *line, void *ctx);
void doc_wrap(struct doc *doc, const char *s, double size, bool bold, double width,
              doc_line_fn *line, void *ctx);

/* The number of lines doc_wrap makes of s. */
int doc_lines(struct doc *doc, const char *s, double size, bool bold, double width);

/* How a wrapped text is drawn, line by line from the cursor. */
struct doc_para {
    double x, size, lead;
    bool bold;
    struct canvas_rgb rgb;
    const char *bullet; /* drawn before the first line, or NULL */
    bool first;
};

/* A body paragraph at indent pt from the left margin, with a bullet (or NULL); breaks pages. */
void doc_paragraph(struct doc *doc, const char *text, double indent, const char *bullet);

/* A heading of level 1 (the title of a section, ruled), 2 or 3, kept with what follows. */
void doc_heading(struct doc *doc, int level, const char *text);

/* The height doc_heading takes below the cursor (away from the top of a page). */
double doc_heading_height(struct doc *doc, int level, const char *text);

/* A table column: its header, its share of the text width, its alignment, and whether a cell too
 * wide for it wraps onto more lines (broken at spaces, else after '-', '_', '.' or '/') at once
 * (a name, a sentence, a formula) rather than first being set smaller (a number); in any column,
 * a cell that does not fit even at DOC_TABLE_MIN_PT wraps, headers included, and a row is as tall
 * as its tallest cell. */
struct doc_col {
    const char *head;
    double frac;
    enum canvas_align align;
    bool wrap;
};

/* At most this many lines in a wrapped cell; the last is cut with an ellipsis (no cell of the
 * report's or the search report's tables comes near it). */
#define DOC_CELL_LINES_MAX 8
#define DOC_CELL_LEAD 10.4 /* pt between the lines of a wrapped cell */

/* A body row: plain, or tinted green (fits, the chosen fix) or red (does not fit). */
enum doc_row_style { DOC_ROW_PLAIN, DOC_ROW_OK, DOC_ROW_BAD };

/* A table: the header, then rows; a row that does not fit starts a page and repeats the header. */
struct doc_table {
    const struct doc_col *cols;
    size_t ncols; /* at most 16 */
    size_t rows_drawn;
};

/* Draws t's header where the header and min_rows rows fit (else on a new page). */
void doc_table_start(struct doc *doc, struct doc_table *t, size_t min_rows);

/* Draws one row of ncols cells (NULL: empty), each on one line, set smaller or wrapped onto more
 * lines (a taller row) as struct doc_col says. */
void doc_table_row(struct doc *doc, struct doc_table *t, const char *const *cells,
                   enum doc_row_style style);

/* Closes a table with a rule. */
void doc_table_end(struct doc *doc);

/* A bookmark titled title at the cursor on the last page. */
void doc_bookmark(struct doc *doc, const char *title);

/* Draws the footers of every page (call once, after the last page); returns doc->error. */
int doc_finish(struct doc *doc);

/* out_write_atomic's writer: saves the document ctx (a struct doc) into f, its ToUnicode maps
 * repaired. Returns 0 or -1. */
int doc_write(FILE *f, void *ctx);

#endif
