/* draw: see draw.h. */
#include "draw/draw.h"

void draw_rect(struct canvas *c, struct canvas_rgb rgb, double x, double y, double w, double h)
{
    if (w <= 0 || h <= 0)
        return;
    c->ops->set_fill(c, rgb);
    c->ops->rect(c, x, y, w, h);
    c->ops->fill(c);
}

void draw_stroke_style(struct canvas *c, struct canvas_rgb rgb, double width, double dash)
{
    double d[2] = {dash, dash};
    c->ops->set_stroke(c, rgb);
    c->ops->set_line_width(c, width);
    c->ops->set_dash(c, d, dash > 0 ? 2 : 0);
}

void draw_line(struct canvas *c, double x0, double y0, double x1, double y1)
{
    c->ops->move_to(c, x0, y0);
    c->ops->line_to(c, x1, y1);
    c->ops->stroke(c);
}

void draw_text(struct canvas *c, struct canvas_rgb rgb, double x, double y, double size,
               enum canvas_align a, const char *s)
{
    c->ops->set_fill(c, rgb);
    c->ops->text(c, x, y, size, a, s);
}
