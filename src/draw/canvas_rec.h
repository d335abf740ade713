/*
 * canvas_rec: a canvas that records every call, the test surface of the charts.
 *
 * No fonts and no files: text widths are a fixed estimate (0.64 em per code point: as wide as
 * DejaVu Sans digits, wider than its average lower-case letter), so a layout without overlapping
 * text here is very unlikely to overlap with the real font. Each paint operation (fill, stroke,
 * fill_stroke, clip) records the bounding box of the path it paints and the state it paints
 * with; each text records its box. A state change while a path is open (the libharu rule of
 * canvas.h) is counted in `violations` and the index of the first kept in `first_violation`.
 * The recorder owns its call array and the copies of the text; canvas_rec_release frees them.
 */
#ifndef MEMFIT_CANVAS_REC_H
#define MEMFIT_CANVAS_REC_H

#include <stdbool.h>
#include <stddef.h>

#include "draw/canvas.h"

#define CANVAS_REC_DASH_MAX 4
#define CANVAS_REC_EM 0.64 /* text width per code point, in em */

enum canvas_rec_op {
    CANVAS_REC_SET_FILL,
    CANVAS_REC_SET_STROKE,
    CANVAS_REC_SET_LINE_WIDTH,
    CANVAS_REC_SET_DASH,
    CANVAS_REC_SAVE,
    CANVAS_REC_RESTORE,
    CANVAS_REC_MOVE_TO,
    CANVAS_REC_LINE_TO,
    CANVAS_REC_RECT,
    CANVAS_REC_CLOSE_PATH,
    CANVAS_REC_FILL,
    CANVAS_REC_STROKE,
    CANVAS_REC_FILL_STROKE,
    CANVAS_REC_CLIP,
    CANVAS_REC_TEXT,
    CANVAS_REC_TEXT_VERTICAL
};

/* An axis-aligned box: x0 <= x1, y0 <= y1 (y down). */
struct canvas_box {
    double x0, y0, x1, y1;
};

struct canvas_rec_call {
    enum canvas_rec_op op;
    double arg[4];                  /* the call's numbers: x, y, w, h / width / size */
    struct canvas_box box;          /* paint ops: the path's bounds; text: its (estimated) box */
    struct canvas_rgb fill, stroke; /* the state at the call */
    double line_width;
    double dash[CANVAS_REC_DASH_MAX];
    size_t n_dash;
    enum canvas_align align;
    char *text; /* text ops: a copy of the string (owned); NULL otherwise */
};

struct canvas_rec {
    struct canvas canvas; /* first: pass &rec->canvas to the charts */
    struct canvas_rec_call *calls;
    size_t n, cap;
    size_t violations;      /* state changes while a path was open */
    size_t first_violation; /* index of the first such call */
    int depth;              /* save depth; negative after an unbalanced restore */
    bool path_open;
    struct canvas_box path; /* bounds of the open path */
    /* The current state. */
    struct canvas_rgb fill, stroke;
    double line_width;
    double dash[CANVAS_REC_DASH_MAX];
    size_t n_dash;
};

void canvas_rec_init(struct canvas_rec *r, double width_pt, double height_pt);
void canvas_rec_release(struct canvas_rec *r);

/* The estimated width the recorder reports for `utf8` at size_pt. */
double canvas_rec_text_width(double size_pt, const char *utf8);

/* Number of recorded calls of kind op. */
size_t canvas_rec_count(const struct canvas_rec *r, enum canvas_rec_op op);

#endif
