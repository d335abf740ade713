/*
 * canvas_cairo: a canvas on a Cairo surface, written to a PNG (2x scale), SVG or PDF file.
 *
 * Text is DejaVu Sans loaded from its file through cairo-ft and FreeType (never a silent
 * fallback: a missing font file is an error), with hint metrics off so widths are the same in
 * every format. The font is loaded once per process and kept until canvas_cairo_shutdown(),
 * which also resets Cairo's static caches (call it once at exit, after every canvas is freed).
 * PDF files carry a fixed creation date (SOURCE_DATE_EPOCH when set), so every output is
 * byte-identical from run to run. The caller owns the canvas: canvas_cairo_finish writes and
 * closes the file, canvas_cairo_free releases everything (and finishes if still open).
 */
#ifndef MEMFIT_CANVAS_CAIRO_H
#define MEMFIT_CANVAS_CAIRO_H

#include <stdio.h>

#include "draw/canvas.h"

#define CANVAS_CAIRO_FONT "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

enum canvas_cairo_format { CANVAS_CAIRO_PNG, CANVAS_CAIRO_SVG, CANVAS_CAIRO_PDF };

/* A canvas of width_pt x height_pt whose file (PNG: 2 pixels per point) is written into `out`,
 * which the caller opened and closes; a PDF's creation date is `date_epoch` (seconds since 1970,
 * e.g. SOURCE_DATE_EPOCH). NULL when the font cannot be loaded or Cairo fails. */
struct canvas *canvas_cairo_new(enum canvas_cairo_format format, FILE *out, long long date_epoch,
                                double width_pt, double height_pt);

/* Completes the file. Returns 0, or -1 when drawing or writing failed (canvas->error is set). */
int canvas_cairo_finish(struct canvas *c);

/* Frees the canvas (NULL: no-op). An unfinished file is finished first. */
void canvas_cairo_free(struct canvas *c);

/* Releases the font and Cairo's static data; canvases may be created again afterwards. */
void canvas_cairo_shutdown(void);

#endif
