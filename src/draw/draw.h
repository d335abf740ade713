/*
 * draw: the drawing idioms every picture repeats, on any canvas (canvas.h): a filled rectangle,
 * a stroke style, a straight line, text in a colour. Shared by the charts (chart_*.c) and the
 * report's pages (doc.c), so both draw these the same way.
 *
 * Pure: each is a fixed sequence of canvas calls; the libharu rule of canvas.h holds (colours,
 * widths and dashes are set while no path is open).
 */
#ifndef MEMFIT_DRAW_H
#define MEMFIT_DRAW_H

#include "draw/canvas.h"

/* Fills the rectangle with top-left corner (x, y) in rgb; draws nothing when w or h is <= 0. */
void draw_rect(struct canvas *c, struct canvas_rgb rgb, double x, double y, double w, double h);

/* Sets the stroke colour, the width (pt) and the dash: dash pt on, dash pt off; 0 for solid. */
void draw_stroke_style(struct canvas *c, struct canvas_rgb rgb, double width, double dash);

/* Strokes the line from (x0, y0) to (x1, y1) in the current stroke style. */
void draw_line(struct canvas *c, double x0, double y0, double x1, double y1);

/* Draws s with its baseline at y, aligned on x, in size pt and colour rgb. */
void draw_text(struct canvas *c, struct canvas_rgb rgb, double x, double y, double size,
               enum canvas_align a, const char *s);

#endif
