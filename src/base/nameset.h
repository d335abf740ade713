/*
 * nameset: the scenario names seen in a run, for the rule that a name is unique in the run
 * (doc/memfit.1, THE SCENARIO CSV).
 *
 * An open-addressing hash set: a slot is 32 bits of the name's hash and where the name is kept,
 * 8 bytes, the table at most half full, so 8-16 bytes a name; the names themselves, each with
 * the line it was first seen on, sit one after the other in 64 KiB chunks (the name's bytes + 9
 * bytes of line and NUL; 4 GiB of them at most). Two names are the same only when their bytes
 * are: a hash match is checked against the name kept (two names do share a hash now and then:
 * "0hiooWgvkFK" and "8mpSuEbHH.A" share all 64 bits). It is the one piece of `eval`'s state
 * that grows with the rows: about 40 bytes a row for names of 10 characters. When it cannot grow,
 * nameset_add says so and adds nothing: the caller stops, as it can no longer tell a duplicate.
 *
 * The names of a run come from several files one after the other: nameset_begin_file says where
 * the next file's names begin, and a duplicate is told where its first was seen, file and line.
 * That costs nothing a name: the names are kept in the order they come, so the file of a name is
 * the last one begun before the place it is kept at (a search among the files, on a duplicate).
 *
 * The set owns its slots, chunks and its copies of the files' names; nameset_release frees them.
 */
#ifndef MEMFIT_NAMESET_H
#define MEMFIT_NAMESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nameset_slot;
struct nameset_file;

struct nameset {
    struct nameset_slot *slots;
    size_t cap, count;
    char **chunks; /* the names, each after its line; chunks[n_chunks - 1] is being filled */
    size_t n_chunks, cap_chunks, used;
    size_t max_cap; /* 0: the table grows as memory allows; else at most this many slots (tests) */
    struct nameset_file *files; /* the files begun, in order */
    size_t n_files, cap_files;
};

/* Where a name was first seen. */
struct nameset_seen {
    unsigned long line;
    const char *file; /* as given to nameset_begin_file (the set's copy); NULL: none was begun */
    bool same_file;   /* in the file begun last, or in none (file NULL); false: file names it */
};

void nameset_init(struct nameset *n);
void nameset_release(struct nameset *n);

/* The names added from now on were seen in `file` (copied; a file given twice is two files).
 * 0, or -1 when out of memory (nothing changed). */
int nameset_begin_file(struct nameset *n, const char *file);

/* The hash of a name (never 0). */
uint64_t nameset_hash(const char *name);

/* Starts fetching the slot of hash h from memory, so that nameset_add finds it there. */
void nameset_prefetch(const struct nameset *n, uint64_t h);

/* Adds `name` (h = nameset_hash(name), at most NAMESET_NAME_MAX bytes) seen on `line` of the
 * file begun last. Returns 1 when it is new, 0 when it is a duplicate (*first: where it was first
 * seen), -1 when the set cannot grow (out of memory, or max_cap): nothing was added. */
int nameset_add(struct nameset *n, const char *name, uint64_t h, unsigned long line,
                struct nameset_seen *first);

/* Longest name kept, in bytes (a scenario name is at most 64 characters of 4 bytes). */
#define NAMESET_NAME_MAX 1024

#endif
