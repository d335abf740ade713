/*
 * canvas_hpdf: the canvas backend that draws vectors straight onto a libharu page.
 *
 * A canvas_hpdf covers a rectangle of one page, given in the page's top-left coordinates; the
 * canvas's own origin is that rectangle's top-left corner, y down (canvas.h). The flip to
 * libharu's bottom-left origin, y up, happens in one function, canvas_hpdf_xy(). Text is DejaVu
 * Sans (or its bold face), embedded as a TrueType subset with libharu's UTF-8 encoder, so Greek
 * letters and math symbols (Ψ, ×, ≤, √) render and remain searchable.
 *
 * Errors: the first libharu status that is not HPDF_OK is kept in canvas.error; later calls do
 * nothing. The caller owns the document, the page and the fonts; a canvas_hpdf owns nothing.
 */
#ifndef MEMFIT_CANVAS_HPDF_H
#define MEMFIT_CANVAS_HPDF_H

#include <stdbool.h>
#include <stdint.h>

#include <hpdf.h>

#include "draw/canvas.h"

#define CANVAS_HPDF_FONT_DIR "/usr/share/fonts/truetype/dejavu"

/* The code points below this have their advance widths kept once measured (Latin, Greek, the
 * punctuation, arrows and math operators the report writes); others are measured each time. */
#define CANVAS_HPDF_WIDTH_CACHE 0x2400

struct canvas_hpdf_fonts {
    HPDF_Font regular, bold;
    /* Each face's advance widths (1/1000 em) of the code points below CANVAS_HPDF_WIDTH_CACHE,
     * UINT16_MAX until measured: a text's width is the sum of its characters' (libharu adds
     * them the same way, without kerning), so a layout that measures the same words again and
     * again asks libharu once a character. Per document: libharu marks a glyph as used (for the
     * subset it embeds) when it measures it, so the glyphs marked stay those of this document. */
    uint16_t *widths[2];
};

/*
 * Turns on UTF-8 in pdf and loads DejaVuSans.ttf and DejaVuSans-Bold.ttf from dir (NULL: the
 * Debian location), embedded. Returns 0, or the libharu status of the failure (1 when out of
 * memory). canvas_hpdf_free_fonts releases what it allocated (before or after HPDF_Free).
 */
unsigned long canvas_hpdf_load_fonts(HPDF_Doc pdf, const char *dir, struct canvas_hpdf_fonts *f);
void canvas_hpdf_free_fonts(struct canvas_hpdf_fonts *f);

struct canvas_hpdf {
    HPDF_Page page;
    struct canvas_hpdf_fonts fonts;
    bool bold;      /* text in the bold face */
    double page_h;  /* the page's height, pt */
    double x0, y0;  /* the canvas's origin on the page, top-left coordinates, pt */
    int depth;      /* graphics-state depth (libharu allows 28) */
    bool path_open; /* a path is being built: state changes are not allowed */
    /* What the page's graphics state holds, so that it is not written again (forgotten at each
     * restore): the fill colour when fill_known, the font and size when font is not NULL. */
    bool fill_known;
    HPDF_REAL fill[3];
    HPDF_Font font;
    HPDF_REAL font_size;
};

/* Makes c draw into the rectangle (x, y, w, h) of page (top-left coordinates, pt). */
void canvas_hpdf_init(struct canvas *c, struct canvas_hpdf *ctx, HPDF_Page page,
                      const struct canvas_hpdf_fonts *fonts, double x, double y, double w,
                      double h);

/* Text drawn after this call is in the bold face (on) or the regular one (off). */
void canvas_hpdf_set_bold(struct canvas *c, bool on);

#endif
