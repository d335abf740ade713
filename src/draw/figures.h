/*
 * figures: the lesson's five figures, offline (doc/memfit.1, OUTPUT, `memfit figures`).
 *
 * For the worked example of doc/model.md section 9 (the 1.3B GPT model, 24 layers, s = 2048,
 * b = 8, one 80 GB GPU): step-timeline (memory over one step without and with checkpointing),
 * params-per-layer (GPT vs Llama, GQA), layer-walk (one layer's activations, plain and flash),
 * checkpoint-k (peak and step time against k, plus the sawtooth) and does-it-fit (the fix ladder
 * as stacked bars). Each is written as NAME.png (2x), NAME.svg and NAME.pdf into a folder,
 * through a temporary name renamed when complete; the bytes are the same on every run.
 */
#ifndef MEMFIT_FIGURES_H
#define MEMFIT_FIGURES_H

#include "base/diag.h"
#include "draw/canvas.h"

#define FIGURES_COUNT 5

/* The figures' base names, in order; NULL past the last. */
const char *figures_name(unsigned i);

/* Figure i's size in points. */
void figures_size(unsigned i, double *width_pt, double *height_pt);

/* Draws figure i on any canvas of figures_size (tests use canvas_rec). Returns 0, or -1 when
 * i is out of range or the figure's numbers cannot be computed. */
int figures_draw(unsigned i, struct canvas *c);

/* Writes every figure into dir (created, with its parents, when missing), dated
 * source_date_epoch (SOURCE_DATE_EPOCH as given; NULL or "": the fixed date). Returns 0, or -1
 * with the reason reported to d. */
int figures_write(const char *dir, const char *source_date_epoch, struct diag *d);

#endif
