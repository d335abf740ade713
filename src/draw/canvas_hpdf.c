/* canvas_hpdf: see canvas_hpdf.h. */
#include "draw/canvas_hpdf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CANVAS_HPDF_MAX_DEPTH 28
#define CANVAS_HPDF_MAX_DASH 8
/* A libharu-style status for our own rule violations (e.g. too deep a save). */
#define CANVAS_HPDF_ERR_STATE 0x1051

static struct canvas_hpdf *ctx_of(struct canvas *c)
{
    return (struct canvas_hpdf *)c->ctx;
}

/* The one place where the canvas's top-left, y-down point becomes libharu's bottom-left, y-up. */
static void canvas_hpdf_xy(const struct canvas_hpdf *h, double x, double y, HPDF_REAL *px,
                           HPDF_REAL *py)
{
    *px = (HPDF_REAL)(h->x0 + x);
    *py = (HPDF_REAL)(h->page_h - (h->y0 + y));
}

/* Keeps the first error; returns true while the canvas is fine. */
static bool canvas_hpdf_ok(struct canvas *c, HPDF_STATUS st)
{
    if (st != HPDF_OK && c->error == 0)
        c->error = (int)st;
    return c->error == 0;
}

/* State may change only while no path is open (libharu error 0x1051 otherwise). */
static bool canvas_hpdf_state_ok(struct canvas *c)
{
    if (c->error)
        return false;
    if (ctx_of(c)->path_open) {
        c->error = CANVAS_HPDF_ERR_STATE;
        return false;
    }
    return true;
}

static HPDF_REAL unit(double v)
{
    return (HPDF_REAL)(v < 0 ? 0 : v > 1 ? 1 : v);
}

static void hp_set_fill(struct canvas *c, struct canvas_rgb rgb)
{
    struct canvas_hpdf *h = ctx_of(c);
    HPDF_REAL r = unit(rgb.r), g = unit(rgb.g), b = unit(rgb.b);
    if (!canvas_hpdf_state_ok(c))
        return;
    /* The page's fill colour already (texts in a row of one colour): nothing to write. */
    if (h->fill_known && h->fill[0] == r && h->fill[1] == g && h->fill[2] == b)
        return;
    if (canvas_hpdf_ok(c, HPDF_Page_SetRGBFill(h->page, r, g, b))) {
        h->fill_known = true;
        h->fill[0] = r;
        h->fill[1] = g;
        h->fill[2] = b;
    }
}

static void hp_set_stroke(struct canvas *c, struct canvas_rgb rgb)
{
    if (canvas_hpdf_state_ok(c))
        canvas_hpdf_ok(
            c, HPDF_Page_SetRGBStroke(ctx_of(c)->page, unit(rgb.r), unit(rgb.g), unit(rgb.b)));
}

static void hp_set_line_width(struct canvas *c, double width_pt)
{
    if (canvas_hpdf_state_ok(c))
        canvas_hpdf_ok(
            c, HPDF_Page_SetLineWidth(ctx_of(c)->page, (HPDF_REAL)(width_pt > 0 ? width_pt : 0)));
}

static void hp_set_dash(struct canvas *c, const double *dash_pt, size_t n)
{
    if (!canvas_hpdf_state_ok(c))
        return;
    HPDF_UINT16 pattern[CANVAS_HPDF_MAX_DASH];
    if (n > CANVAS_HPDF_MAX_DASH)
        n = CANVAS_HPDF_MAX_DASH;
    for (size_t i = 0; i < n; i++) {
        double v = floor(dash_pt[i] + 0.5); /* libharu takes whole points */
        pattern[i] = (HPDF_UINT16)(v < 1 ? 1 : v > 1000 ? 1000 : v);
    }
    canvas_hpdf_ok(c, HPDF_Page_SetDash(ctx_of(c)->page, n ? pattern : NULL, (HPDF_UINT)n, 0));
}

static void hp_save(struct canvas *c)
{
    struct canvas_hpdf *h = ctx_of(c);
    if (!canvas_hpdf_state_ok(c))
        return;
    if (h->depth >= CANVAS_HPDF_MAX_DEPTH - 1) {
        c->error = CANVAS_HPDF_ERR_STATE;
        return;
    }
    if (canvas_hpdf_ok(c, HPDF_Page_GSave(h->page)))
        h->depth++;
}

static void hp_restore(struct canvas *c)
{
    struct canvas_hpdf *h = ctx_of(c);
    if (!canvas_hpdf_state_ok(c))
        return;
    if (h->depth == 0) {
        c->error = CANVAS_HPDF_ERR_STATE;
        return;
    }
    if (canvas_hpdf_ok(c, HPDF_Page_GRestore(h->page)))
        h->depth--;
    /* The colour and font are back to what they were at the save: no longer known here. */
    h->fill_known = false;
    h->font = NULL;
}

static void hp_move_to(struct canvas *c, double x, double y)
{
    struct canvas_hpdf *h = ctx_of(c);
    HPDF_REAL px, py;
    if (c->error)
        return;
    canvas_hpdf_xy(h, x, y, &px, &py);
    if (canvas_hpdf_ok(c, HPDF_Page_MoveTo(h->page, px, py)))
        h->path_open = true;
}

static void hp_line_to(struct canvas *c, double x, double y)
{
    struct canvas_hpdf *h = ctx_of(c);
    HPDF_REAL px, py;
    if (c->error)
        return;
    canvas_hpdf_xy(h, x, y, &px, &py);
    canvas_hpdf_ok(c, HPDF_Page_LineTo(h->page, px, py));
}

static void hp_rect(struct canvas *c, double x, double y, double w, double hgt)
{
    struct canvas_hpdf *h = ctx_of(c);
    HPDF_REAL px, py;
    if (c->error)
        return;
    canvas_hpdf_xy(h, x, y + hgt, &px, &py); /* libharu wants the lower-left corner */
    if (canvas_hpdf_ok(c, HPDF_Page_Rectangle(h->page, px, py, (HPDF_REAL)w, (HPDF_REAL)hgt)))
        h->path_open = true;
}

static void hp_close_path(struct canvas *c)
{
    if (!c->error)
        canvas_hpdf_ok(c, HPDF_Page_ClosePath(ctx_of(c)->page));
}

/* Ends the open path with op; a paint without a path is a no-op, as in Cairo. */
static void hp_paint(struct canvas *c, HPDF_STATUS (*op)(HPDF_Page))
{
    struct canvas_hpdf *h = ctx_of(c);
    if (c->error || !h->path_open)
        return;
    h->path_open = false;
    canvas_hpdf_ok(c, op(h->page));
}

static void hp_fill(struct canvas *c)
{
    hp_paint(c, HPDF_Page_Fill);
}

static void hp_stroke(struct canvas *c)
{
    hp_paint(c, HPDF_Page_Stroke);
}

static void hp_fill_stroke(struct canvas *c)
{
    hp_paint(c, HPDF_Page_FillStroke);
}

static void hp_clip(struct canvas *c)
{
    struct canvas_hpdf *h = ctx_of(c);
    if (c->error || !h->path_open)
        return;
    if (canvas_hpdf_ok(c, HPDF_Page_Clip(h->page)))
        hp_paint(c, HPDF_Page_EndPath);
}

static HPDF_Font hp_font(const struct canvas_hpdf *h)
{
    return h->bold ? h->fonts.bold : h->fonts.regular;
}

/* The length of the UTF-8 sequence that lead starts and its code point into *cp; 0 when s does
 * not start a well-formed sequence of at most 3 bytes (libharu measures those itself). */
static size_t utf8_char(const unsigned char *s, unsigned long *cp)
{
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if (s[0] >= 0xC2 && s[0] < 0xE0 && (s[1] & 0xC0) == 0x80) {
        *cp = ((unsigned long)(s[0] & 0x1F) << 6) | (s[1] & 0x3F);
        return 2;
    }
    if (s[0] >= 0xE0 && s[0] < 0xF0 && (s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80) {
        *cp = ((unsigned long)(s[0] & 0x0F) << 12) | ((unsigned long)(s[1] & 0x3F) << 6) |
              (s[2] & 0x3F);
        return *cp >= 0x800 ? 3 : 0;
    }
    return 0;
}

/* The advance width (1/1000 em) of the n bytes of one character, code point cp, in the current
 * face: kept once libharu has measured it (canvas_hpdf_fonts). */
static unsigned hp_char_width(const struct canvas_hpdf *h, const char *s, size_t n,
                              unsigned long cp)
{
    uint16_t *kept = h->fonts.widths[h->bold ? 1 : 0];
    if (kept && cp < CANVAS_HPDF_WIDTH_CACHE && kept[cp] != UINT16_MAX)
        return kept[cp];
    HPDF_TextWidth tw = HPDF_Font_TextWidth(hp_font(h), (const HPDF_BYTE *)s, (HPDF_UINT)n);
    if (kept && cp < CANVAS_HPDF_WIDTH_CACHE && tw.width < UINT16_MAX)
        kept[cp] = (uint16_t)tw.width;
    return tw.width;
}

static double hp_text_width(struct canvas *c, double size_pt, const char *utf8)
{
    struct canvas_hpdf *h = ctx_of(c);
    size_t len = strlen(utf8);
    if (c->error || len == 0)
        return 0;
    unsigned long width = 0;
    for (size_t i = 0; i < len;) {
        unsigned long cp;
        size_t n = utf8_char((const unsigned char *)utf8 + i, &cp);
        if (n == 0) { /* not a sequence kept: the whole text, as libharu reads it */
            HPDF_TextWidth tw =
                HPDF_Font_TextWidth(hp_font(h), (const HPDF_BYTE *)utf8, (HPDF_UINT)len);
            return tw.width * size_pt / 1000.0;
        }
        width += hp_char_width(h, utf8 + i, n, cp);
        i += n;
    }
    return (double)width * size_pt / 1000.0;
}

/* Draws utf8 with its text matrix (a, b, c, d) at the canvas point (x, y). */
static void hp_show(struct canvas *c, double x, double y, double size_pt, HPDF_REAL a, HPDF_REAL b,
                    HPDF_REAL cc, HPDF_REAL d, const char *utf8)
{
    struct canvas_hpdf *h = ctx_of(c);
    HPDF_REAL px, py;
    if (!canvas_hpdf_state_ok(c) || !utf8[0])
        return;
    canvas_hpdf_xy(h, x, y, &px, &py);
    canvas_hpdf_ok(c, HPDF_Page_BeginText(h->page));
    if (h->font != hp_font(h) || h->font_size != (HPDF_REAL)size_pt) {
        h->font = hp_font(h);
        h->font_size = (HPDF_REAL)size_pt;
        canvas_hpdf_ok(c, HPDF_Page_SetFontAndSize(h->page, h->font, h->font_size));
    }
    canvas_hpdf_ok(c, HPDF_Page_SetTextMatrix(h->page, a, b, cc, d, px, py));
    canvas_hpdf_ok(c, HPDF_Page_ShowText(h->page, utf8));
    canvas_hpdf_ok(c, HPDF_Page_EndText(h->page));
}

static double hp_align_shift(struct canvas *c, double size_pt, enum canvas_align align,
                             const char *utf8)
{
    if (align == CANVAS_ALIGN_LEFT)
        return 0;
    double w = hp_text_width(c, size_pt, utf8);
    return align == CANVAS_ALIGN_CENTER ? w / 2 : w;
}

static void hp_text(struct canvas *c, double x, double y, double size_pt, enum canvas_align align,
                    const char *utf8)
{
    double dx = hp_align_shift(c, size_pt, align, utf8);
    hp_show(c, x - dx, y, size_pt, 1, 0, 0, 1, utf8);
}

static void hp_text_vertical(struct canvas *c, double x, double y, double size_pt,
                             enum canvas_align align, const char *utf8)
{
    /* Rotated 90 degrees counter-clockwise: the text runs up the page, so it starts lower. */
    double dy = hp_align_shift(c, size_pt, align, utf8);
    hp_show(c, x, y + dy, size_pt, 0, 1, -1, 0, utf8);
}

static const struct canvas_ops canvas_hpdf_ops = {
    .set_fill = hp_set_fill,
    .set_stroke = hp_set_stroke,
    .set_line_width = hp_set_line_width,
    .set_dash = hp_set_dash,
    .save = hp_save,
    .restore = hp_restore,
    .move_to = hp_move_to,
    .line_to = hp_line_to,
    .rect = hp_rect,
    .close_path = hp_close_path,
    .fill = hp_fill,
    .stroke = hp_stroke,
    .fill_stroke = hp_fill_stroke,
    .clip = hp_clip,
    .text = hp_text,
    .text_vertical = hp_text_vertical,
    .text_width = hp_text_width,
};

void canvas_hpdf_init(struct canvas *c, struct canvas_hpdf *ctx, HPDF_Page page,
                      const struct canvas_hpdf_fonts *fonts, double x, double y, double w, double h)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->page = page;
    ctx->fonts = *fonts;
    ctx->page_h = HPDF_Page_GetHeight(page);
    ctx->x0 = x;
    ctx->y0 = y;
    c->ops = &canvas_hpdf_ops;
    c->ctx = ctx;
    c->width_pt = w;
    c->height_pt = h;
    c->error = 0;
}

void canvas_hpdf_set_bold(struct canvas *c, bool on)
{
    ctx_of(c)->bold = on;
}

unsigned long canvas_hpdf_load_fonts(HPDF_Doc pdf, const char *dir, struct canvas_hpdf_fonts *f)
{
    char path[1024];
    const char *faces[2] = {"DejaVuSans.ttf", "DejaVuSans-Bold.ttf"};
    HPDF_Font *slots[2] = {&f->regular, &f->bold};
    f->widths[0] = f->widths[1] = NULL;
    if (!dir)
        dir = CANVAS_HPDF_FONT_DIR;
    if (HPDF_UseUTFEncodings(pdf) != HPDF_OK || HPDF_SetCurrentEncoder(pdf, "UTF-8") != HPDF_OK)
        return HPDF_GetError(pdf) ? HPDF_GetError(pdf) : 1;
    for (int i = 0; i < 2; i++) {
        int n = snprintf(path, sizeof path, "%s/%s", dir, faces[i]);
        if (n < 0 || (size_t)n >= sizeof path)
            return 1;
        const char *name = HPDF_LoadTTFontFromFile(pdf, path, HPDF_TRUE);
        if (!name)
            return HPDF_GetError(pdf) ? HPDF_GetError(pdf) : 1;
        *slots[i] = HPDF_GetFont(pdf, name, "UTF-8");
        if (!*slots[i])
            return HPDF_GetError(pdf) ? HPDF_GetError(pdf) : 1;
    }
    for (int i = 0; i < 2; i++) {
        f->widths[i] = malloc(CANVAS_HPDF_WIDTH_CACHE * sizeof *f->widths[i]);
        if (!f->widths[i]) {
            canvas_hpdf_free_fonts(f);
            return 1;
        }
        memset(f->widths[i], 0xFF, CANVAS_HPDF_WIDTH_CACHE * sizeof *f->widths[i]);
    }
    return 0;
}

void canvas_hpdf_free_fonts(struct canvas_hpdf_fonts *f)
{
    for (int i = 0; i < 2; i++) {
        free(f->widths[i]);
        f->widths[i] = NULL;
    }
}
