/* doc: see doc.h. */
#include "report/doc.h"

#include <math.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/out.h"
#include "base/strbuf.h"
#include "draw/draw.h"
#include "report/pdffix.h"

static const char *doc_fit(struct doc *doc, const char *s, double size, bool bold, double width,
                           char *buf, size_t bufsize);

const struct canvas_rgb DOC_TEXT = {0.12, 0.13, 0.15};
const struct canvas_rgb DOC_MUTED = {0.42, 0.44, 0.48};
const struct canvas_rgb DOC_RULE = {0.80, 0.82, 0.85};
const struct canvas_rgb DOC_ACCENT = {0.12, 0.30, 0.55};
const struct canvas_rgb DOC_HEAD_FILL = {0.91, 0.93, 0.96};
const struct canvas_rgb DOC_ZEBRA = {0.97, 0.975, 0.98};
const struct canvas_rgb DOC_OK = {0.11, 0.50, 0.24};
const struct canvas_rgb DOC_OK_FILL = {0.91, 0.96, 0.92};
const struct canvas_rgb DOC_BAD = {0.72, 0.13, 0.13};
const struct canvas_rgb DOC_BAD_FILL = {0.99, 0.92, 0.91};

double doc_bottom(const struct doc *doc)
{
    return doc->page_h - DOC_M_BOTTOM;
}

double doc_width(const struct doc *doc)
{
    return doc->page_w - DOC_M_LEFT - DOC_M_RIGHT;
}

void doc_fail(struct doc *doc, int err)
{
    if (!doc->error)
        doc->error = err ? err : -1;
}

void doc_text(struct doc *doc, double x, double y, double size, enum canvas_align al, bool bold,
              struct canvas_rgb rgb, const char *s)
{
    canvas_hpdf_set_bold(&doc->c, bold);
    draw_text(&doc->c, rgb, x, y, size, al, s);
    canvas_hpdf_set_bold(&doc->c, false);
}

double doc_width_of(struct doc *doc, double size, bool bold, const char *s)
{
    canvas_hpdf_set_bold(&doc->c, bold);
    double w = doc->c.ops->text_width(&doc->c, size, s);
    canvas_hpdf_set_bold(&doc->c, false);
    return w;
}

void doc_hline(struct doc *doc, double x0, double x1, double y, double width, struct canvas_rgb rgb)
{
    draw_stroke_style(&doc->c, rgb, width, 0);
    draw_line(&doc->c, x0, y, x1, y);
}

void doc_fill_rect(struct doc *doc, double x, double y, double w, double h, struct canvas_rgb rgb)
{
    draw_rect(&doc->c, rgb, x, y, w, h);
}

/* Switches the canvas to page i (for drawing the footers at the end). */
static void doc_use_page(struct doc *doc, size_t i)
{
    if (doc->c.error)
        doc_fail(doc, doc->c.error);
    canvas_hpdf_init(&doc->c, &doc->ch, doc->pages[i], &doc->fonts, 0, 0, doc->page_w, doc->page_h);
}

void doc_new_page(struct doc *doc)
{
    if (doc->error)
        return;
    if (doc->n_pages >= doc->max_pages) {
        doc_fail(doc, DOC_ERR_PAGES);
        return;
    }
    if (doc->n_pages == doc->cap_pages) {
        size_t cap = doc->cap_pages ? 2 * doc->cap_pages : 16;
        HPDF_Page *p = realloc(doc->pages, cap * sizeof *p);
        if (!p) {
            doc_fail(doc, -1);
            return;
        }
        doc->pages = p;
        doc->cap_pages = cap;
    }
    HPDF_Page page = HPDF_AddPage(doc->pdf);
    if (!page) {
        doc_fail(doc, (int)HPDF_GetError(doc->pdf));
        return;
    }
    HPDF_Page_SetWidth(page, (HPDF_REAL)doc->page_w);
    HPDF_Page_SetHeight(page, (HPDF_REAL)doc->page_h);
    doc->pages[doc->n_pages++] = page;
    doc_use_page(doc, doc->n_pages - 1);
    doc->y = DOC_M_TOP;
    /* The running head: the tool and the document on the left, the scenario on the right, a
     * rule under them. */
    double base = DOC_M_TOP - 30, tool = doc_width_of(doc, 7.5, true, "memfit ");
    doc_text(doc, DOC_M_LEFT, base, 7.5, CANVAS_ALIGN_LEFT, true, DOC_ACCENT, "memfit");
    doc_text(doc, DOC_M_LEFT + tool, base, 7.5, CANVAS_ALIGN_LEFT, false, DOC_MUTED, doc->head);
    char fitted[256];
    double room = doc->page_w - DOC_M_RIGHT - DOC_M_LEFT - 12 - tool -
                  doc_width_of(doc, 7.5, true, doc->head);
    doc_text(doc, doc->page_w - DOC_M_RIGHT, base, 7.5, CANVAS_ALIGN_RIGHT, false, DOC_MUTED,
             doc_fit(doc, doc->running, 7.5, false, room, fitted, sizeof fitted));
    doc_hline(doc, DOC_M_LEFT, doc->page_w - DOC_M_RIGHT, base + 5, 0.5, DOC_RULE);
    void (*at_top)(struct doc *, void *) = doc->at_next_page;
    doc->at_next_page = NULL; /* once: what it draws may itself start a page */
    if (at_top)
        at_top(doc, doc->at_next_page_ctx);
}

void doc_need(struct doc *doc, double h)
{
    if (doc->y + h > doc_bottom(doc))
        doc_new_page(doc);
}

static void doc_footers(struct doc *doc)
{
    char buf[64];
    for (size_t i = 0; i < doc->n_pages; i++) {
        doc_use_page(doc, i);
        double y = doc->page_h - DOC_M_BOTTOM + 34;
        doc_hline(doc, DOC_M_LEFT, doc->page_w - DOC_M_RIGHT, y - 11, 0.5, DOC_RULE);
        snprintf(buf, sizeof buf, "page %zu of %zu", i + 1, doc->n_pages);
        doc_text(doc, doc->page_w - DOC_M_RIGHT, y, 7.5, CANVAS_ALIGN_RIGHT, false, DOC_MUTED, buf);
        doc_text(doc, DOC_M_LEFT, y, 7.5, CANVAS_ALIGN_LEFT, false, DOC_MUTED,
                 "1 GB = 10⁹ bytes; 1 GiB = 2³⁰ bytes");
    }
}

/* No line is longer than this, in bytes, whatever its width: a prefix longer than it is never
 * measured (libharu refuses strings of 64 KiB and more, and zero-width characters would let a
 * line grow without end). */
#define DOC_LINE_BYTES_MAX 4096

/* The start of the UTF-8 character at or before s[m]. */
static size_t doc_char_start(const char *s, size_t m)
{
    while (m > 0 && ((unsigned char)s[m] & 0xC0) == 0x80)
        m--;
    return m;
}

/* The end of the UTF-8 character that starts at s[m] (at most n). */
static size_t doc_char_end(const char *s, size_t m, size_t n)
{
    m++;
    while (m < n && ((unsigned char)s[m] & 0xC0) == 0x80)
        m++;
    return m;
}

/* Whether s[0..n) fits width (copied into buf to measure it); too long a prefix never does. */
static bool doc_prefix_fits(struct doc *doc, const char *s, size_t n, double size, bool bold,
                            double width, char *buf)
{
    if (n > DOC_LINE_BYTES_MAX)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return doc_width_of(doc, size, bold, buf) <= width;
}

/* The length of the longest prefix of s[0..n) that fits `width`, cut at a UTF-8 character
 * boundary (at least one character): a word longer than the line is broken, not let run off the
 * page. Widths grow with the prefix, so a binary search over the boundaries finds it in
 * log2(n) measures (one character less at a time was cubic in the word's length). buf has room
 * for n + 1 bytes. */
static size_t doc_fit_prefix(struct doc *doc, const char *s, size_t n, double size, bool bold,
                             double width, char *buf)
{
    if (n == 0 || doc_prefix_fits(doc, s, n, size, bold, width, buf))
        return n;
    /* lo: taken (the first character, which stands even when it is too wide); hi: too wide. */
    size_t lo = doc_char_end(s, 0, n), hi = n;
    while (lo < hi) {
        size_t mid = doc_char_start(s, lo + (hi - lo) / 2);
        if (mid <= lo)
            mid = doc_char_end(s, lo, n);
        if (mid >= hi)
            break;
        if (doc_prefix_fits(doc, s, mid, size, bold, width, buf))
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

void doc_wrap(struct doc *doc, const char *s, double size, bool bold, double width,
              doc_line_fn *line, void *ctx)
{
    size_t len = strlen(s);
    char *buf = malloc(len + 1);
    if (!buf) {
        doc_fail(doc, -1);
        return;
    }
    size_t start = 0; /* start of the current line in s */
    while (start < len) {
        while (s[start] == ' ')
            start++;
        if (start >= len)
            break;
        /* The longest run of whole words that fits; the first word alone when even it does
         * not (then broken by doc_fit_prefix). Each space is tried once: the measures of a line
         * stop at the first word that does not fit. */
        size_t fit = 0, i = start;
        for (;;) {
            while (i < len && s[i] != ' ')
                i++;
            if (fit > 0 && !doc_prefix_fits(doc, s + start, i - start, size, bold, width, buf))
                break;
            fit = i;
            if (i >= len)
                break;
            i++;
        }
        fit = start + doc_fit_prefix(doc, s + start, fit - start, size, bold, width, buf);
        memcpy(buf, s + start, fit - start);
        buf[fit - start] = '\0';
        if (buf[0])
            line(doc, buf, ctx);
        start = fit;
    }
    free(buf);
}

static void count_line(struct doc *doc, const char *line, void *ctx)
{
    (void)doc;
    (void)line;
    (*(int *)ctx)++;
}

int doc_lines(struct doc *doc, const char *s, double size, bool bold, double width)
{
    int lines = 0;
    doc_wrap(doc, s, size, bold, width, count_line, &lines);
    return lines;
}

static void doc_para_line(struct doc *doc, const char *line, void *ctx)
{
    struct doc_para *p = ctx;
    doc_need(doc, p->lead);
    double base = doc->y + p->size * 0.93;
    if (p->bullet && p->first)
        doc_text(doc, p->x - 10, base, p->size, CANVAS_ALIGN_LEFT, false, DOC_ACCENT, p->bullet);
    p->first = false;
    doc_text(doc, p->x, base, p->size, CANVAS_ALIGN_LEFT, p->bold, p->rgb, line);
    doc->y += p->lead;
}

void doc_paragraph(struct doc *doc, const char *text, double indent, const char *bullet)
{
    struct doc_para p = {
        DOC_M_LEFT + indent, DOC_BODY_PT, DOC_BODY_LEAD, false, DOC_TEXT, bullet, true};
    doc_wrap(doc, text, p.size, false, doc_width(doc) - indent, doc_para_line, &p);
    doc->y += bullet ? 2.5 : 6;
}

static const double doc_heading_pt[] = {0, 17, 12.5, 10.5};

double doc_heading_height(struct doc *doc, int level, const char *text)
{
    double sz = doc_heading_pt[level < 1 ? 1 : level > 3 ? 3 : level];
    int lines = doc_lines(doc, text, sz, true, doc_width(doc));
    return (level == 1 ? 12 : 10 + 3) + sz * 1.3 * (lines > 0 ? lines : 1);
}

void doc_heading(struct doc *doc, int level, const char *text)
{
    double sz = doc_heading_pt[level < 1 ? 1 : level > 3 ? 3 : level];
    double before = level == 1 ? 0 : 10;
    /* Keep a heading with what follows: at least three lines of body below it. */
    doc_need(doc, before + sz * 1.5 + 3 * DOC_BODY_LEAD);
    if (doc->y > DOC_M_TOP + 1)
        doc->y += before;
    struct canvas_rgb rgb = level == 1 ? DOC_TEXT : DOC_ACCENT;
    struct doc_para p = {DOC_M_LEFT, sz, sz * 1.3, true, rgb, NULL, true};
    doc_wrap(doc, text, sz, true, doc_width(doc), doc_para_line, &p);
    if (level == 1) {
        doc_hline(doc, DOC_M_LEFT, doc->page_w - DOC_M_RIGHT, doc->y + 2, 1.2, DOC_ACCENT);
        doc->y += 12;
    } else {
        doc->y += 3;
    }
}

/* Cuts s (UTF-8) with an ellipsis until it fits width; writes into buf. */
static const char *doc_fit(struct doc *doc, const char *s, double size, bool bold, double width,
                           char *buf, size_t bufsize)
{
    if (doc_width_of(doc, size, bold, s) <= width)
        return s;
    size_t n = strlen(s);
    if (n + 4 > bufsize)
        n = bufsize - 4;
    while (n > 0) {
        n--;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
        memcpy(buf, s, n);
        memcpy(buf + n, "…", sizeof "…");
        if (doc_width_of(doc, size, bold, buf) <= width)
            return buf;
    }
    return "…";
}

/* ---------------------------------------------------------------- tables */

/* doc_fit into out (256 bytes), whether or not s had to be cut. */
static void doc_fit_into(struct doc *doc, const char *s, double size, bool bold, double width,
                         char *out)
{
    char buf[256];
    snprintf(out, 256, "%s", doc_fit(doc, s, size, bold, width, buf, sizeof buf));
}

/* Where a line of a wrapped cell that holds s[0..n) ends: at its last space (dropped); without
 * one, after its last '-', '_', '.' or '/' (kept: a name), never inside a number ("114.0"); else
 * at n (a character boundary: doc_fit_prefix). *next gets where the next line starts. */
static size_t doc_cell_break(const char *s, size_t n, size_t *next)
{
    for (size_t i = n; i > 1; i--)
        if (s[i - 1] == ' ') {
            *next = i;
            return i - 1;
        }
    for (size_t i = n; i > 1; i--) {
        bool in_number = s[i - 1] == '.' && s[i] >= '0' && s[i] <= '9';
        if (strchr("-_./", s[i - 1]) && !in_number) {
            *next = i;
            return i;
        }
    }
    *next = n;
    return n;
}

/* Splits cell into at most max lines no wider than width at size, broken as a wrapping column
 * breaks them, into lines[i]; returns the count (>= 1). The last line is cut with an ellipsis when
 * the text goes on. */
static size_t doc_cell_lines(struct doc *doc, const char *cell, double size, bool bold,
                             double width, char (*lines)[256], size_t max)
{
    size_t len = strlen(cell), start = 0, count = 0;
    char buf[256];
    while (count < max) {
        while (cell[start] == ' ')
            start++;
        size_t rest = len - start;
        if (rest > sizeof buf - 1)
            rest = sizeof buf - 1;
        size_t fit = doc_fit_prefix(doc, cell + start, rest, size, bold, width, buf);
        size_t next = start + fit, end = fit;
        if (start + fit < len && count + 1 < max) {
            end = doc_cell_break(cell + start, fit, &next);
            next += start;
        }
        if (count + 1 == max && start + fit < len) { /* the last line, cut */
            doc_fit_into(doc, cell + start, size, bold, width, lines[count]);
            return count + 1;
        }
        memcpy(lines[count], cell + start, end);
        lines[count][end] = '\0';
        count++;
        start = next;
        if (start >= len)
            break;
    }
    return count ? count : 1;
}

/* The size, down to DOC_TABLE_MIN_PT, at which s (need pt wide at DOC_TABLE_PT) fits width;
 * 0 when it does not fit even then. Measured: a width does not scale exactly with the size. */
static double doc_shrunk_size(struct doc *doc, const char *s, bool bold, double width, double need)
{
    for (double size = DOC_TABLE_PT * width / need; size >= DOC_TABLE_MIN_PT - 1e-9; size *= 0.99) {
        size = fmax(size, DOC_TABLE_MIN_PT);
        if (doc_width_of(doc, size, bold, s) <= width)
            return size;
        if (size == DOC_TABLE_MIN_PT)
            break;
    }
    return 0;
}

/* The lines of a cell (a header's when bold): one line when it fits; in a wrapping column, the
 * lines it wraps onto; in another, one line set smaller (down to DOC_TABLE_MIN_PT: a number or a
 * formula is never broken while it can be read whole), else the lines it wraps onto. Nothing is
 * cut short but a cell of more than DOC_CELL_LINES_MAX lines. *size gets the type size. */
static size_t doc_row_cell(struct doc *doc, const struct doc_col *col, const char *cell, bool bold,
                           double cw, char (*lines)[256], double *size)
{
    *size = DOC_TABLE_PT;
    double need = doc_width_of(doc, DOC_TABLE_PT, bold, cell);
    if (need <= cw - 8) {
        snprintf(lines[0], sizeof lines[0], "%s", cell);
        return 1;
    }
    if (!col->wrap) {
        double smaller = doc_shrunk_size(doc, cell, bold, cw - 8, need);
        if (smaller > 0) {
            *size = smaller;
            snprintf(lines[0], sizeof lines[0], "%s", cell);
            return 1;
        }
    }
    return doc_cell_lines(doc, cell, DOC_TABLE_PT, bold, cw - 8, lines, DOC_CELL_LINES_MAX);
}

/* The height of a row of cells (the header's when head): one line, or the most lines of its
 * cells. */
static double doc_row_height(struct doc *doc, const struct doc_col *cols, size_t ncols,
                             const char *const *cells, bool head)
{
    size_t most = 1;
    char lines[DOC_CELL_LINES_MAX][256];
    double size;
    for (size_t i = 0; i < ncols; i++) {
        if (!cells[i])
            continue;
        size_t n = doc_row_cell(doc, &cols[i], cells[i], head, cols[i].frac * doc_width(doc), lines,
                                &size);
        most = n > most ? n : most;
    }
    return DOC_ROW_H + (double)(most - 1) * DOC_CELL_LEAD;
}

static void doc_row(struct doc *doc, const struct doc_col *cols, size_t ncols,
                    const char *const *cells, bool head, enum doc_row_style style, bool zebra)
{
    double x = DOC_M_LEFT, w = doc_width(doc), y = doc->y;
    double row_h = doc_row_height(doc, cols, ncols, cells, head);
    if (head)
        doc_fill_rect(doc, x, y, w, row_h, DOC_HEAD_FILL);
    else if (style == DOC_ROW_OK)
        doc_fill_rect(doc, x, y, w, row_h, DOC_OK_FILL);
    else if (style == DOC_ROW_BAD)
        doc_fill_rect(doc, x, y, w, row_h, DOC_BAD_FILL);
    else if (zebra)
        doc_fill_rect(doc, x, y, w, row_h, DOC_ZEBRA);
    bool bold = head;
    struct canvas_rgb rgb = head                   ? DOC_ACCENT
                            : style == DOC_ROW_BAD ? DOC_BAD
                            : style == DOC_ROW_OK  ? DOC_OK
                                                   : DOC_TEXT;
    for (size_t i = 0; i < ncols; i++) {
        double cw = cols[i].frac * w, size;
        char lines[DOC_CELL_LINES_MAX][256];
        size_t n = doc_row_cell(doc, &cols[i], cells[i] ? cells[i] : "", bold, cw, lines, &size);
        double tx = cols[i].align == CANVAS_ALIGN_LEFT    ? x + 4
                    : cols[i].align == CANVAS_ALIGN_RIGHT ? x + cw - 4
                                                          : x + cw / 2;
        for (size_t k = 0; k < n; k++)
            doc_text(doc, tx, y + 10.6 + (double)k * DOC_CELL_LEAD, size, cols[i].align, bold, rgb,
                     lines[k]);
        x += cw;
    }
    doc->y += row_h;
}

void doc_table_start(struct doc *doc, struct doc_table *t, size_t min_rows)
{
    const char *heads[16];
    size_t n = t->ncols < 16 ? t->ncols : 16;
    for (size_t i = 0; i < n; i++)
        heads[i] = t->cols[i].head;
    doc_need(doc, doc_row_height(doc, t->cols, n, heads, true) + DOC_ROW_H * (double)min_rows + 4);
    doc_row(doc, t->cols, n, heads, true, DOC_ROW_PLAIN, false);
    t->rows_drawn = 0;
}

void doc_table_row(struct doc *doc, struct doc_table *t, const char *const *cells,
                   enum doc_row_style style)
{
    if (doc->y + doc_row_height(doc, t->cols, t->ncols, cells, false) > doc_bottom(doc)) {
        doc_new_page(doc);
        doc_table_start(doc, t, 1);
    }
    doc_row(doc, t->cols, t->ncols, cells, false, style, t->rows_drawn % 2 == 1);
    t->rows_drawn++;
}

void doc_table_end(struct doc *doc)
{
    doc_hline(doc, DOC_M_LEFT, doc->page_w - DOC_M_RIGHT, doc->y, 0.6, DOC_MUTED);
    doc->y += 10;
}

static int doc_date(HPDF_Doc pdf, const char *epoch, struct diag *d)
{
    long long t;
    int set = out_source_date_epoch(epoch, &t, d);
    if (set <= 0)
        return set; /* unset: no date at all, so the bytes do not depend on the day */
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm))
        return -1;
    HPDF_Date date = {tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                      tm.tm_sec,         'Z',           0,          0};
    HPDF_SetInfoDateAttr(pdf, HPDF_INFO_CREATION_DATE, date);
    HPDF_SetInfoDateAttr(pdf, HPDF_INFO_MOD_DATE, date);
    return 0;
}

void doc_set_head(struct doc *doc, const char *head)
{
    struct strbuf w;
    strbuf_init_fixed(&w, doc->head, sizeof doc->head); /* a long one cut at a character */
    strbuf_puts(&w, head);
}

int doc_init(struct doc *doc, const char *title, bool letter, const char *source_date_epoch,
             struct diag *d)
{
    memset(doc, 0, sizeof *doc);
    doc->pdf = HPDF_New(NULL, NULL);
    if (!doc->pdf) {
        diag_report(d, NULL, 0, "out of memory");
        return -1;
    }
    /* Before the fonts: libharu fixes a font's stream filters when the font is loaded. */
    HPDF_SetCompressionMode(doc->pdf, HPDF_COMP_ALL);
    unsigned long st = canvas_hpdf_load_fonts(doc->pdf, NULL, &doc->fonts);
    if (st) {
        diag_report(d, NULL, 0, "cannot load DejaVu Sans from '%s' (libharu error 0x%04lX)",
                    CANVAS_HPDF_FONT_DIR, st);
        return -1;
    }
    doc->utf8 = HPDF_GetEncoder(doc->pdf, "UTF-8");
    HPDF_SetPageMode(doc->pdf, HPDF_PAGE_MODE_USE_OUTLINE);
    HPDF_SetInfoAttr(doc->pdf, HPDF_INFO_TITLE, title);
    doc_set_head(doc, title);
    HPDF_SetInfoAttr(doc->pdf, HPDF_INFO_CREATOR, "memfit");
    HPDF_SetInfoAttr(doc->pdf, HPDF_INFO_SUBJECT, "Does the training run fit in GPU memory?");
    if (doc_date(doc->pdf, source_date_epoch, d) != 0)
        return -1;
    doc->max_pages = DOC_MAX_PAGES;
    doc->page_w = letter ? 612 : 595.276;
    doc->page_h = letter ? 792 : 841.89;
    return 0;
}

void doc_release(struct doc *doc)
{
    if (doc->pdf)
        HPDF_Free(doc->pdf);
    canvas_hpdf_free_fonts(&doc->fonts);
    free(doc->pages);
}

int doc_finish(struct doc *doc)
{
    doc_footers(doc);
    if (doc->c.error)
        doc_fail(doc, doc->c.error);
    if (!doc->error && HPDF_GetError(doc->pdf))
        doc_fail(doc, (int)HPDF_GetError(doc->pdf));
    return doc->error;
}

void doc_bookmark(struct doc *doc, const char *title)
{
    if (doc->error || doc->n_pages == 0)
        return;
    HPDF_Outline o = HPDF_CreateOutline(doc->pdf, NULL, title, doc->utf8);
    HPDF_Destination dst = HPDF_Page_CreateDestination(doc->pages[doc->n_pages - 1]);
    if (!o || !dst) {
        doc_fail(doc, (int)HPDF_GetError(doc->pdf));
        return;
    }
    HPDF_Destination_SetXYZ(dst, 0, (HPDF_REAL)(doc->page_h - doc->y + 20), 1);
    HPDF_Outline_SetDestination(o, dst);
}

/* The saved document, in memory (libharu's own stream, read out). */
static unsigned char *doc_save_memory(HPDF_Doc pdf, size_t *len)
{
    if (HPDF_SaveToStream(pdf) != HPDF_OK)
        return NULL;
    size_t size = HPDF_GetStreamSize(pdf);
    unsigned char *buf = malloc(size ? size : 1);
    if (!buf)
        return NULL;
    HPDF_ResetStream(pdf);
    size_t got = 0;
    while (got < size) {
        HPDF_UINT32 n = (HPDF_UINT32)(size - got);
        HPDF_STATUS st = HPDF_ReadFromStream(pdf, buf + got, &n);
        got += n;
        if (st == HPDF_STREAM_EOF)
            break;
        if (st != HPDF_OK || n == 0) {
            free(buf);
            return NULL;
        }
    }
    *len = got;
    return buf;
}

int doc_write(FILE *f, void *ctx)
{
    struct doc *doc = ctx;
    size_t len, fixed_len;
    unsigned char *pdf = doc_save_memory(doc->pdf, &len), *fixed;
    if (!pdf)
        return -1;
    int rc = 0;
    if (pdffix_tounicode(pdf, len, &fixed, &fixed_len) == 0) {
        rc = fwrite(fixed, 1, fixed_len, f) == fixed_len ? 0 : -1;
        free(fixed);
    } else {
        rc = fwrite(pdf, 1, len, f) == len ? 0 : -1;
    }
    free(pdf);
    return rc;
}
