/*
 * nameset: the scenario names seen in a run, for the rule that a name is unique in the run
 * (doc/memfit.1, THE SCENARIO CSV).
 *
 * An open-addressing hash set of 64-bit name hashes, each with the line it was first seen on:
 * 16 bytes a slot, at most half full, so 16-32 bytes a name. It is the one piece of `eval`'s
 * state that grows with the rows. Two different names share a 64-bit hash with a probability of
 * about n^2 / 2^65 (1e-8 for a million names). The set owns its slots; nameset_release frees them.
 */
#ifndef MEMFIT_NAMESET_H
#define MEMFIT_NAMESET_H

#include <stddef.h>
#include <stdint.h>

struct nameset_slot;

struct nameset {
    struct nameset_slot *slots;
    size_t cap, count;
};

void nameset_init(struct nameset *n);
void nameset_release(struct nameset *n);

/* The hash of a name (never 0). */
uint64_t nameset_hash(const char *name);

/* Starts fetching the slot of hash h from memory, so that nameset_add finds it there. */
void nameset_prefetch(const struct nameset *n, uint64_t h);

/* Adds the name of hash h first seen on `line`: returns 0 when it is new, or the line it was
 * first seen on when it is a duplicate (0 too when out of memory: the check is then skipped). */
unsigned long nameset_add(struct nameset *n, uint64_t h, unsigned long line);

#endif
