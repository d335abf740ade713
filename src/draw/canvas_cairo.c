/* canvas_cairo: see canvas_cairo.h. */
#include "draw/canvas_cairo.h"

#include "base/strbuf.h"

#include <cairo-ft.h>
#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STATE_MAX 32

/* The font, shared by every canvas of the process until canvas_cairo_shutdown. */
static FT_Library ft_lib;
static cairo_font_face_t *font_face;
static const cairo_user_data_key_t face_key;

struct colours {
    struct canvas_rgb fill, stroke;
};

struct cairo_ctx {
    struct canvas canvas;
    enum canvas_cairo_format format;
    cairo_surface_t *surface;
    cairo_t *cr;
    FILE *out; /* where the finished file goes (the caller owns it) */
    struct colours cur, stack[STATE_MAX];
    int depth;
    bool finished;
    /* SVG: the document is collected here and written at finish (see svg_write). */
    struct strbuf svg;
};

static void face_done(void *p)
{
    FT_Done_Face((FT_Face)p);
}

/* Loads DejaVu Sans once; 0 or -1. */
static int font_load(void)
{
    if (font_face)
        return 0;
    if (!ft_lib && FT_Init_FreeType(&ft_lib) != 0) {
        ft_lib = NULL;
        return -1;
    }
    FT_Face face;
    if (FT_New_Face(ft_lib, CANVAS_CAIRO_FONT, 0, &face) != 0)
        return -1;
    cairo_font_face_t *cf = cairo_ft_font_face_create_for_ft_face(face, 0);
    if (cairo_font_face_status(cf) != CAIRO_STATUS_SUCCESS ||
        cairo_font_face_set_user_data(cf, &face_key, face, face_done) != CAIRO_STATUS_SUCCESS) {
        cairo_font_face_destroy(cf);
        FT_Done_Face(face);
        return -1;
    }
    font_face = cf;
    return 0;
}

void canvas_cairo_shutdown(void)
{
    if (font_face) {
        cairo_font_face_destroy(font_face);
        font_face = NULL;
    }
    /* Drops the scaled-font caches, which release the last references to the face (and so
     * FT_Done_Face) before the library goes. */
    cairo_debug_reset_static_data();
    if (ft_lib) {
        FT_Done_FreeType(ft_lib);
        ft_lib = NULL;
    }
}

static struct cairo_ctx *ctx_of(struct canvas *c)
{
    return c->ctx;
}

/* True when drawing may go on; records Cairo's error as the canvas's first error. */
static bool ok(struct canvas *c)
{
    if (c->error)
        return false;
    cairo_status_t st = cairo_status(ctx_of(c)->cr);
    if (st != CAIRO_STATUS_SUCCESS) {
        c->error = (int)st;
        return false;
    }
    return true;
}

static void source(cairo_t *cr, struct canvas_rgb rgb)
{
    cairo_set_source_rgb(cr, rgb.r, rgb.g, rgb.b);
}

static void cc_set_fill(struct canvas *c, struct canvas_rgb rgb)
{
    if (ok(c))
        ctx_of(c)->cur.fill = rgb;
}

static void cc_set_stroke(struct canvas *c, struct canvas_rgb rgb)
{
    if (ok(c))
        ctx_of(c)->cur.stroke = rgb;
}

static void cc_set_line_width(struct canvas *c, double width_pt)
{
    if (ok(c))
        cairo_set_line_width(ctx_of(c)->cr, width_pt);
}

static void cc_set_dash(struct canvas *c, const double *dash_pt, size_t n)
{
    if (ok(c))
        cairo_set_dash(ctx_of(c)->cr, dash_pt, (int)n, 0);
}

static void cc_save(struct canvas *c)
{
    struct cairo_ctx *x = ctx_of(c);
    if (!ok(c))
        return;
    if (x->depth >= STATE_MAX) {
        c->error = -1;
        return;
    }
    x->stack[x->depth++] = x->cur;
    cairo_save(x->cr);
}

static void cc_restore(struct canvas *c)
{
    struct cairo_ctx *x = ctx_of(c);
    if (!ok(c))
        return;
    if (x->depth == 0) {
        c->error = -1;
        return;
    }
    x->cur = x->stack[--x->depth];
    cairo_restore(x->cr);
}

static void cc_move_to(struct canvas *c, double px, double py)
{
    if (ok(c))
        cairo_move_to(ctx_of(c)->cr, px, py);
}

static void cc_line_to(struct canvas *c, double px, double py)
{
    if (ok(c))
        cairo_line_to(ctx_of(c)->cr, px, py);
}

static void cc_rect(struct canvas *c, double px, double py, double w, double h)
{
    if (ok(c))
        cairo_rectangle(ctx_of(c)->cr, px, py, w, h);
}

static void cc_close_path(struct canvas *c)
{
    if (ok(c))
        cairo_close_path(ctx_of(c)->cr);
}

static void cc_fill(struct canvas *c)
{
    struct cairo_ctx *x = ctx_of(c);
    if (!ok(c))
        return;
    source(x->cr, x->cur.fill);
    cairo_fill(x->cr);
}

static void cc_stroke(struct canvas *c)
{
    struct cairo_ctx *x = ctx_of(c);
    if (!ok(c))
        return;
    source(x->cr, x->cur.stroke);
    cairo_stroke(x->cr);
}

static void cc_fill_stroke(struct canvas *c)
{
    struct cairo_ctx *x = ctx_of(c);
    if (!ok(c))
        return;
    source(x->cr, x->cur.fill);
    cairo_fill_preserve(x->cr);
    source(x->cr, x->cur.stroke);
    cairo_stroke(x->cr);
}

static void cc_clip(struct canvas *c)
{
    if (ok(c))
        cairo_clip(ctx_of(c)->cr);
}

static void use_font(cairo_t *cr, double size_pt)
{
    cairo_set_font_face(cr, font_face);
    cairo_set_font_size(cr, size_pt);
}

static double cc_text_width(struct canvas *c, double size_pt, const char *utf8)
{
    struct cairo_ctx *x = ctx_of(c);
    if (!ok(c))
        return 0;
    cairo_text_extents_t e;
    use_font(x->cr, size_pt);
    cairo_text_extents(x->cr, utf8, &e);
    return e.x_advance;
}

static double offset(double width, enum canvas_align align)
{
    if (align == CANVAS_ALIGN_CENTER)
        return -width / 2;
    if (align == CANVAS_ALIGN_RIGHT)
        return -width;
    return 0;
}

static void show(struct canvas *c, double px, double py, double angle, double size_pt,
                 enum canvas_align align, const char *utf8)
{
    struct cairo_ctx *x = ctx_of(c);
    if (!ok(c))
        return;
    double w = cc_text_width(c, size_pt, utf8);
    cairo_save(x->cr);
    cairo_new_path(x->cr);
    cairo_translate(x->cr, px, py);
    if (angle != 0)
        cairo_rotate(x->cr, angle);
    source(x->cr, x->cur.fill);
    use_font(x->cr, size_pt);
    cairo_move_to(x->cr, offset(w, align), 0);
    cairo_show_text(x->cr, utf8);
    cairo_new_path(x->cr);
    cairo_restore(x->cr);
}

static void cc_text(struct canvas *c, double px, double py, double size_pt, enum canvas_align align,
                    const char *utf8)
{
    show(c, px, py, 0, size_pt, align, utf8);
}

static void cc_text_vertical(struct canvas *c, double px, double py, double size_pt,
                             enum canvas_align align, const char *utf8)
{
    show(c, px, py, -M_PI / 2, size_pt, align, utf8);
}

static const struct canvas_ops cairo_ops = {
    cc_set_fill,    cc_set_stroke, cc_set_line_width, cc_set_dash,      cc_save,       cc_restore,
    cc_move_to,     cc_line_to,    cc_rect,           cc_close_path,    cc_fill,       cc_stroke,
    cc_fill_stroke, cc_clip,       cc_text,           cc_text_vertical, cc_text_width,
};

/* "YYYY-MM-DDTHH:MM:SSZ" of the seconds since 1970 given (SOURCE_DATE_EPOCH or a fixed date). */
static void create_date(long long seconds, char *buf, size_t size)
{
    time_t t = (time_t)seconds;
    struct tm tm;
    if (!gmtime_r(&t, &tm) || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, size, "%s", "2024-01-01T00:00:00Z");
}

/* Cairo's write callback for PDF and PNG: straight into the caller's FILE. */
static cairo_status_t file_write(void *closure, const unsigned char *data, unsigned int length)
{
    FILE *f = closure;
    return fwrite(data, 1, length, f) == length ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

static cairo_status_t svg_collect(void *closure, const unsigned char *data, unsigned int length)
{
    struct cairo_ctx *x = closure;
    return strbuf_append(&x->svg, data, length) == 0 ? CAIRO_STATUS_SUCCESS
                                                     : CAIRO_STATUS_NO_MEMORY;
}

/* Cairo 1.16 names the SVG's root group after a process-wide surface counter (id="surface162"),
 * so the bytes would depend on what the process drew before; the id is written as "surface1". */
static int svg_write(struct cairo_ctx *x)
{
    static const char key[] = "<g id=\"surface";
    size_t klen = sizeof key - 1, skip_from = 0, skip_to = 0;
    const char *svg = x->svg.buf;
    size_t svg_len = x->svg.len;
    for (size_t i = 0; i + klen <= svg_len; i++) {
        if (memcmp(svg + i, key, klen) != 0)
            continue;
        skip_from = skip_to = i + klen;
        while (skip_to < svg_len && svg[skip_to] >= '0' && svg[skip_to] <= '9')
            skip_to++;
        break;
    }
    FILE *f = x->out;
    bool ok = fwrite(svg, 1, skip_from, f) == skip_from;
    if (skip_to > skip_from)
        ok = ok && fputc('1', f) != EOF;
    ok = ok && fwrite(svg + skip_to, 1, svg_len - skip_to, f) == svg_len - skip_to;
    return ok ? 0 : -1;
}

static cairo_surface_t *make_surface(struct cairo_ctx *x, enum canvas_cairo_format format,
                                     long long date_epoch, double w, double h)
{
    switch (format) {
    case CANVAS_CAIRO_PNG:
        return cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)ceil(2 * w), (int)ceil(2 * h));
    case CANVAS_CAIRO_SVG:
        return cairo_svg_surface_create_for_stream(svg_collect, x, w, h);
    case CANVAS_CAIRO_PDF: {
        cairo_surface_t *s = cairo_pdf_surface_create_for_stream(file_write, x->out, w, h);
        char date[32];
        create_date(date_epoch, date, sizeof date);
        cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATE_DATE, date);
        cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "memfit");
        return s;
    }
    }
    return NULL;
}

struct canvas *canvas_cairo_new(enum canvas_cairo_format format, FILE *out, long long date_epoch,
                                double width_pt, double height_pt)
{
    if (font_load() != 0)
        return NULL;
    struct cairo_ctx *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->out = out;
    x->format = format;
    x->surface = make_surface(x, format, date_epoch, width_pt, height_pt);
    if (!x->surface || cairo_surface_status(x->surface) != CAIRO_STATUS_SUCCESS)
        goto fail;
    x->cr = cairo_create(x->surface);
    if (cairo_status(x->cr) != CAIRO_STATUS_SUCCESS)
        goto fail;
    cairo_font_options_t *fo = cairo_font_options_create();
    cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
    cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
    cairo_set_font_options(x->cr, fo);
    cairo_font_options_destroy(fo);
    if (format == CANVAS_CAIRO_PNG) {
        cairo_scale(x->cr, 2, 2);
        cairo_set_source_rgb(x->cr, 1, 1, 1);
        cairo_paint(x->cr);
    }
    cairo_set_line_width(x->cr, 1);
    x->cur.fill = x->cur.stroke = (struct canvas_rgb){0, 0, 0};
    x->canvas.ops = &cairo_ops;
    x->canvas.ctx = x;
    x->canvas.width_pt = width_pt;
    x->canvas.height_pt = height_pt;
    return &x->canvas;
fail:
    if (x->cr)
        cairo_destroy(x->cr);
    if (x->surface)
        cairo_surface_destroy(x->surface);
    strbuf_release(&x->svg);
    free(x);
    return NULL;
}

int canvas_cairo_finish(struct canvas *c)
{
    struct cairo_ctx *x = ctx_of(c);
    if (x->finished)
        return c->error ? -1 : 0;
    x->finished = true;
    ok(c);
    if (!c->error && x->format == CANVAS_CAIRO_PNG) {
        cairo_surface_flush(x->surface);
        cairo_status_t st = cairo_surface_write_to_png_stream(x->surface, file_write, x->out);
        if (st != CAIRO_STATUS_SUCCESS)
            c->error = (int)st;
    }
    cairo_destroy(x->cr);
    x->cr = NULL;
    cairo_surface_finish(x->surface);
    cairo_status_t st = cairo_surface_status(x->surface);
    if (!c->error && st != CAIRO_STATUS_SUCCESS)
        c->error = (int)st;
    if (!c->error && x->svg.err)
        c->error = CAIRO_STATUS_NO_MEMORY;
    if (!c->error && x->format == CANVAS_CAIRO_SVG && svg_write(x) != 0)
        c->error = CAIRO_STATUS_WRITE_ERROR;
    return c->error ? -1 : 0;
}

void canvas_cairo_free(struct canvas *c)
{
    if (!c)
        return;
    struct cairo_ctx *x = ctx_of(c);
    if (!x->finished)
        canvas_cairo_finish(c);
    cairo_surface_destroy(x->surface);
    strbuf_release(&x->svg);
    free(x);
}
