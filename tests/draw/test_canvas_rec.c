/* Tests of canvas_rec: what it records, the libharu rule it checks, its text boxes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "draw/canvas_rec.h"

static const struct canvas_rgb RED = {1, 0, 0}, BLUE = {0, 0, 1};

/* A rectangle filled after its state is set: recorded with its box and colour, no violation. */
static void test_fill_records_box_and_state(void **state)
{
    (void)state;
    struct canvas_rec r;
    canvas_rec_init(&r, 200, 100);
    struct canvas *c = &r.canvas;
    c->ops->set_fill(c, RED);
    c->ops->rect(c, 10, 20, 30, 40);
    c->ops->fill(c);
    assert_int_equal(r.n, 3);
    const struct canvas_rec_call *k = &r.calls[2];
    assert_int_equal(k->op, CANVAS_REC_FILL);
    assert_true(k->box.x0 == 10 && k->box.y0 == 20 && k->box.x1 == 40 && k->box.y1 == 60);
    assert_true(k->fill.r == 1 && k->fill.b == 0);
    assert_int_equal(r.violations, 0);
    assert_false(r.path_open);
    canvas_rec_release(&r);
}

/* The path's box grows with every point; the dash in force is stamped on the stroke. */
static void test_stroke_path_box_and_dash(void **state)
{
    (void)state;
    struct canvas_rec r;
    canvas_rec_init(&r, 200, 100);
    struct canvas *c = &r.canvas;
    double dash[2] = {3, 2};
    c->ops->set_stroke(c, BLUE);
    c->ops->set_line_width(c, 1.5);
    c->ops->set_dash(c, dash, 2);
    c->ops->move_to(c, 50, 5);
    c->ops->line_to(c, 10, 80);
    c->ops->line_to(c, 70, 30);
    c->ops->stroke(c);
    const struct canvas_rec_call *k = &r.calls[r.n - 1];
    assert_int_equal(k->op, CANVAS_REC_STROKE);
    assert_true(k->box.x0 == 10 && k->box.x1 == 70 && k->box.y0 == 5 && k->box.y1 == 80);
    assert_int_equal(k->n_dash, 2);
    assert_true(k->dash[0] == 3 && k->dash[1] == 2 && k->line_width == 1.5);
    assert_int_equal(r.violations, 0);
    canvas_rec_release(&r);
}

/* Setting a colour, a width or a dash between move_to and the paint is flagged (libharu 0x1051). */
static void test_state_inside_path_is_a_violation(void **state)
{
    (void)state;
    struct canvas_rec r;
    canvas_rec_init(&r, 200, 100);
    struct canvas *c = &r.canvas;
    c->ops->move_to(c, 0, 0);
    c->ops->line_to(c, 10, 10);
    c->ops->set_stroke(c, RED); /* call index 2 */
    c->ops->set_line_width(c, 2);
    c->ops->stroke(c);
    assert_int_equal(r.violations, 2);
    assert_int_equal(r.first_violation, 2);
    /* After the paint the path is closed: state may be set again. */
    c->ops->set_fill(c, BLUE);
    assert_int_equal(r.violations, 2);
    canvas_rec_release(&r);
}

/* Text is copied; its box is the estimated width, placed by the alignment. */
static void test_text_boxes(void **state)
{
    (void)state;
    struct canvas_rec r;
    canvas_rec_init(&r, 200, 100);
    struct canvas *c = &r.canvas;
    char s[] = "ab\xc2\xb2"; /* three code points, four bytes */
    double w = canvas_rec_text_width(10, s);
    assert_true(w > 3 * 10 * CANVAS_REC_EM - 1e-9 && w < 3 * 10 * CANVAS_REC_EM + 1e-9);
    assert_true(c->ops->text_width(c, 10, s) == w);
    c->ops->text(c, 100, 50, 10, CANVAS_ALIGN_RIGHT, s);
    s[0] = 'X'; /* the recorder kept its own copy */
    const struct canvas_rec_call *k = &r.calls[0];
    assert_string_equal(k->text, "ab\xc2\xb2");
    assert_true(k->box.x1 == 100 && k->box.x0 == 100 - w);
    assert_true(k->box.y0 < 50 && k->box.y1 > 50);
    c->ops->text_vertical(c, 20, 50, 10, CANVAS_ALIGN_CENTER, s);
    k = &r.calls[1];
    assert_true(k->box.y1 - k->box.y0 > w - 1e-9 && k->box.x1 - k->box.x0 < 11);
    assert_int_equal(canvas_rec_count(&r, CANVAS_REC_TEXT), 1);
    canvas_rec_release(&r);
}

/* save/restore are counted; release frees every copy (valgrind checks). */
static void test_depth_and_release(void **state)
{
    (void)state;
    struct canvas_rec r;
    canvas_rec_init(&r, 200, 100);
    struct canvas *c = &r.canvas;
    for (int i = 0; i < 1000; i++) {
        c->ops->save(c);
        c->ops->text(c, 1, 1, 8, CANVAS_ALIGN_LEFT, "many");
    }
    assert_int_equal(r.depth, 1000);
    for (int i = 0; i < 1000; i++)
        c->ops->restore(c);
    assert_int_equal(r.depth, 0);
    assert_int_equal(r.n, 3000);
    assert_int_equal(c->error, 0);
    canvas_rec_release(&r);
    canvas_rec_release(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_records_box_and_state),
        cmocka_unit_test(test_stroke_path_box_and_dash),
        cmocka_unit_test(test_state_inside_path_is_a_violation),
        cmocka_unit_test(test_text_boxes),
        cmocka_unit_test(test_depth_and_release),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
