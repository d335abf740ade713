/*
 * shapes: the structures of a search (tp, pp, vpp, cp, dp, ep, etp, sp and the pipeline schedule
 * of a layout, every other choice aside), each with a floor of its step time, visited fastest
 * floor first (doc/model.md 11.6): the cheapest fix's search goes through the structures most
 * likely to hold the fastest layout first, so that the floors of the rest rule them out without
 * a search.
 *
 * Pure: no I/O; the list grows with realloc.
 */
#ifndef MEMFIT_SHAPES_H
#define MEMFIT_SHAPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/scenario.h"

/* One structure: its degrees, its place in the search's enumeration and its step-time floor. */
struct shape {
    uint64_t tp, pp, vpp, cp, dp, ep, etp;
    enum schedule schedule;
    bool sp;
    uint64_t index; /* the structure's number in the enumeration (which breaks ties) */
    double floor_s; /* no layout of it steps faster (0: none known) */
    bool tight;     /* floor_s is the tighter floor (a first one is cheaper to price) */
};

struct shapes {
    struct shape *at;
    size_t n, cap;
};

/* Appends sc's structure with a first floor; false when out of memory (the list is unchanged). */
bool shapes_push(struct shapes *l, const struct scenario *sc, uint64_t index, double floor_s);

/* The list as a heap, the lowest floor (then index: a total order) at at[0]: shapes_heapify once
 * after the pushes, then take the lowest with shapes_pop and put one back with shapes_put (at
 * most as many as were taken). */
void shapes_heapify(struct shapes *l);
struct shape shapes_pop(struct shapes *l); /* l not empty */
void shapes_put(struct shapes *l, const struct shape *s);

/* Sets sc's degrees to those of s. */
void shape_apply(const struct shape *s, struct scenario *sc);

void shapes_free(struct shapes *l);

#endif
