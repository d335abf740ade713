/*
 * canvas: the drawing interface every chart is written against, once: the report draws vectors
 * on its libharu pages, the figures go through Cairo, and the tests record the calls.
 *
 * A canvas is a struct of function pointers plus the backend's context, Cairo style: every
 * operation takes the canvas first. Coordinates are points (1/72 inch) with the origin at the
 * top left and y growing downwards, whatever the backend (canvas_hpdf flips y in one place).
 * Backends: canvas_cairo (PNG at 2x, SVG, PDF files), canvas_rec (records every call for tests),
 * canvas_hpdf (vectors on a libharu page of the report).
 *
 * The libharu rule holds for every backend: colour, line width and dash are set while no path is
 * open (before move_to / rect), never between building a path and filling or stroking it.
 * canvas_rec flags a violation. The first error of a backend is kept; later calls do nothing.
 */
#ifndef MEMFIT_CANVAS_H
#define MEMFIT_CANVAS_H

#include <stddef.h>

struct canvas_rgb {
    double r, g, b; /* 0..1 */
};

enum canvas_align { CANVAS_ALIGN_LEFT, CANVAS_ALIGN_CENTER, CANVAS_ALIGN_RIGHT };

struct canvas;

struct canvas_ops {
    /* State (only while no path is open). */
    void (*set_fill)(struct canvas *c, struct canvas_rgb rgb);
    void (*set_stroke)(struct canvas *c, struct canvas_rgb rgb);
    void (*set_line_width)(struct canvas *c, double width_pt);
    /* dash: on/off lengths in whole points; n = 0 for a solid line. */
    void (*set_dash)(struct canvas *c, const double *dash_pt, size_t n);
    void (*save)(struct canvas *c);
    void (*restore)(struct canvas *c);
    /* Paths. */
    void (*move_to)(struct canvas *c, double x, double y);
    void (*line_to)(struct canvas *c, double x, double y);
    void (*rect)(struct canvas *c, double x, double y, double w, double h); /* top-left corner */
    void (*close_path)(struct canvas *c);
    void (*fill)(struct canvas *c);
    void (*stroke)(struct canvas *c);
    void (*fill_stroke)(struct canvas *c);
    void (*clip)(struct canvas *c); /* intersects the clip with the open path, then ends it */
    /* Text (UTF-8) in DejaVu Sans at size_pt; y is the baseline; colour is the fill colour. */
    void (*text)(struct canvas *c, double x, double y, double size_pt, enum canvas_align align,
                 const char *utf8);
    /* Same text, rotated 90 degrees counter-clockwise (for y-axis titles); (x, y) its anchor. */
    void (*text_vertical)(struct canvas *c, double x, double y, double size_pt,
                          enum canvas_align align, const char *utf8);
    double (*text_width)(struct canvas *c, double size_pt, const char *utf8);
};

struct canvas {
    const struct canvas_ops *ops;
    void *ctx;       /* the backend's state */
    double width_pt; /* the drawing area */
    double height_pt;
    int error; /* first error of the backend; 0 while fine */
};

#endif
