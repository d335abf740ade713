/* canvas_rec: see canvas_rec.h. */
#include "draw/canvas_rec.h"

#include <stdlib.h>
#include <string.h>

static struct canvas_rec *rec_of(struct canvas *c)
{
    return c->ctx;
}

/* Appends a call stamped with the current state; NULL (and canvas error set) when out of memory. */
static struct canvas_rec_call *push(struct canvas *c, enum canvas_rec_op op)
{
    struct canvas_rec *r = rec_of(c);
    if (c->error)
        return NULL;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 256;
        struct canvas_rec_call *p = realloc(r->calls, cap * sizeof *p);
        if (!p) {
            c->error = 1;
            return NULL;
        }
        r->calls = p;
        r->cap = cap;
    }
    struct canvas_rec_call *k = &r->calls[r->n++];
    memset(k, 0, sizeof *k);
    k->op = op;
    k->fill = r->fill;
    k->stroke = r->stroke;
    k->line_width = r->line_width;
    memcpy(k->dash, r->dash, sizeof k->dash);
    k->n_dash = r->n_dash;
    return k;
}

/* The libharu rule: state is set only while no path is open. */
static void check_state(struct canvas *c)
{
    struct canvas_rec *r = rec_of(c);
    if (!r->path_open)
        return;
    if (r->violations++ == 0)
        r->first_violation = r->n ? r->n - 1 : 0;
}

static void rec_set_fill(struct canvas *c, struct canvas_rgb rgb)
{
    struct canvas_rec_call *k = push(c, CANVAS_REC_SET_FILL);
    if (!k)
        return;
    check_state(c);
    rec_of(c)->fill = k->fill = rgb;
}

static void rec_set_stroke(struct canvas *c, struct canvas_rgb rgb)
{
    struct canvas_rec_call *k = push(c, CANVAS_REC_SET_STROKE);
    if (!k)
        return;
    check_state(c);
    rec_of(c)->stroke = k->stroke = rgb;
}

static void rec_set_line_width(struct canvas *c, double width_pt)
{
    struct canvas_rec_call *k = push(c, CANVAS_REC_SET_LINE_WIDTH);
    if (!k)
        return;
    check_state(c);
    k->arg[0] = width_pt;
    rec_of(c)->line_width = k->line_width = width_pt;
}

static void rec_set_dash(struct canvas *c, const double *dash_pt, size_t n)
{
    struct canvas_rec *r = rec_of(c);
    struct canvas_rec_call *k = push(c, CANVAS_REC_SET_DASH);
    if (!k)
        return;
    check_state(c);
    if (n > CANVAS_REC_DASH_MAX)
        n = CANVAS_REC_DASH_MAX;
    memset(r->dash, 0, sizeof r->dash);
    if (n)
        memcpy(r->dash, dash_pt, n * sizeof *dash_pt);
    r->n_dash = n;
    memcpy(k->dash, r->dash, sizeof k->dash);
    k->n_dash = n;
}

static void rec_save(struct canvas *c)
{
    if (push(c, CANVAS_REC_SAVE))
        rec_of(c)->depth++;
}

static void rec_restore(struct canvas *c)
{
    if (push(c, CANVAS_REC_RESTORE))
        rec_of(c)->depth--;
}

static void grow_path(struct canvas_rec *r, double x, double y)
{
    if (!r->path_open) {
        r->path = (struct canvas_box){x, y, x, y};
        r->path_open = true;
        return;
    }
    if (x < r->path.x0)
        r->path.x0 = x;
    if (x > r->path.x1)
        r->path.x1 = x;
    if (y < r->path.y0)
        r->path.y0 = y;
    if (y > r->path.y1)
        r->path.y1 = y;
}

static void rec_point(struct canvas *c, enum canvas_rec_op op, double x, double y)
{
    struct canvas_rec_call *k = push(c, op);
    if (!k)
        return;
    k->arg[0] = x;
    k->arg[1] = y;
    grow_path(rec_of(c), x, y);
}

static void rec_move_to(struct canvas *c, double x, double y)
{
    rec_point(c, CANVAS_REC_MOVE_TO, x, y);
}

static void rec_line_to(struct canvas *c, double x, double y)
{
    rec_point(c, CANVAS_REC_LINE_TO, x, y);
}

static void rec_rect(struct canvas *c, double x, double y, double w, double h)
{
    struct canvas_rec_call *k = push(c, CANVAS_REC_RECT);
    if (!k)
        return;
    k->arg[0] = x;
    k->arg[1] = y;
    k->arg[2] = w;
    k->arg[3] = h;
    grow_path(rec_of(c), x, y);
    grow_path(rec_of(c), x + w, y + h);
}

static void rec_close_path(struct canvas *c)
{
    push(c, CANVAS_REC_CLOSE_PATH);
}

/* A paint op ends the path; painting with no path open is recorded with an empty box. */
static void rec_paint(struct canvas *c, enum canvas_rec_op op)
{
    struct canvas_rec *r = rec_of(c);
    struct canvas_rec_call *k = push(c, op);
    if (!k)
        return;
    if (r->path_open)
        k->box = r->path;
    r->path_open = false;
}

static void rec_fill(struct canvas *c)
{
    rec_paint(c, CANVAS_REC_FILL);
}

static void rec_stroke(struct canvas *c)
{
    rec_paint(c, CANVAS_REC_STROKE);
}

static void rec_fill_stroke(struct canvas *c)
{
    rec_paint(c, CANVAS_REC_FILL_STROKE);
}

static void rec_clip(struct canvas *c)
{
    rec_paint(c, CANVAS_REC_CLIP);
}

double canvas_rec_text_width(double size_pt, const char *utf8)
{
    size_t points = 0;
    for (const unsigned char *p = (const unsigned char *)utf8; *p; p++)
        points += (*p & 0xC0) != 0x80;
    return CANVAS_REC_EM * size_pt * (double)points;
}

static double rec_text_width(struct canvas *c, double size_pt, const char *utf8)
{
    (void)c;
    return canvas_rec_text_width(size_pt, utf8);
}

/* Start of a run of `len` along the text direction anchored at `at`. */
static double aligned_start(double at, double len, enum canvas_align align)
{
    if (align == CANVAS_ALIGN_CENTER)
        return at - len / 2;
    if (align == CANVAS_ALIGN_RIGHT)
        return at - len;
    return at;
}

static void rec_text_any(struct canvas *c, enum canvas_rec_op op, double x, double y,
                         double size_pt, enum canvas_align align, const char *utf8)
{
    struct canvas_rec_call *k = push(c, op);
    if (!k)
        return;
    k->arg[0] = x;
    k->arg[1] = y;
    k->arg[2] = size_pt;
    k->align = align;
    k->text = strdup(utf8);
    if (!k->text)
        c->error = 1;
    double len = canvas_rec_text_width(size_pt, utf8);
    /* Ascent 0.76 em, descent 0.24 em (DejaVu Sans). */
    if (op == CANVAS_REC_TEXT) {
        double x0 = aligned_start(x, len, align);
        k->box = (struct canvas_box){x0, y - 0.76 * size_pt, x0 + len, y + 0.24 * size_pt};
    } else {
        /* Rotated counter-clockwise: the text runs upwards from (x, y). */
        double y1 = y + (align == CANVAS_ALIGN_CENTER  ? len / 2
                         : align == CANVAS_ALIGN_RIGHT ? len
                                                       : 0);
        k->box = (struct canvas_box){x - 0.76 * size_pt, y1 - len, x + 0.24 * size_pt, y1};
    }
}

static void rec_text(struct canvas *c, double x, double y, double size_pt, enum canvas_align align,
                     const char *utf8)
{
    rec_text_any(c, CANVAS_REC_TEXT, x, y, size_pt, align, utf8);
}

static void rec_text_vertical(struct canvas *c, double x, double y, double size_pt,
                              enum canvas_align align, const char *utf8)
{
    rec_text_any(c, CANVAS_REC_TEXT_VERTICAL, x, y, size_pt, align, utf8);
}

static const struct canvas_ops rec_ops = {
    rec_set_fill,      rec_set_stroke, rec_set_line_width, rec_set_dash, rec_save,
    rec_restore,       rec_move_to,    rec_line_to,        rec_rect,     rec_close_path,
    rec_fill,          rec_stroke,     rec_fill_stroke,    rec_clip,     rec_text,
    rec_text_vertical, rec_text_width,
};

void canvas_rec_init(struct canvas_rec *r, double width_pt, double height_pt)
{
    memset(r, 0, sizeof *r);
    r->canvas.ops = &rec_ops;
    r->canvas.ctx = r;
    r->canvas.width_pt = width_pt;
    r->canvas.height_pt = height_pt;
    r->line_width = 1;
}

void canvas_rec_release(struct canvas_rec *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        free(r->calls[i].text);
    free(r->calls);
    r->calls = NULL;
    r->n = r->cap = 0;
}

size_t canvas_rec_count(const struct canvas_rec *r, enum canvas_rec_op op)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++)
        n += r->calls[i].op == op;
    return n;
}
