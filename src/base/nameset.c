/* nameset: see nameset.h. */
#include "base/nameset.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CHUNK_BYTES ((size_t)1 << 16)

/* A slot: the name's tag (the low 32 bits of its hash, never 0) in its top half, where the name
 * is kept in its bottom half (chunk index << 16 | the entry's offset: the line, then the name);
 * 0: empty. The tag gives the slot's place (tag & (cap - 1)), so the table grows without the
 * names. Eight bytes a slot, not sixteen: with a million names the table is tens of MB touched
 * at random, and each of its bytes is also one the kernel zeroes as the table grows. */
struct nameset_slot {
    uint64_t tag_ref;
};

/* A file begun: its name (copied) and the place of its first name (chunk * CHUNK_BYTES + offset,
 * which is the ref of a name kept there: places only grow as names are kept). */
struct nameset_file {
    char *name;
    uint64_t from;
};

#define CHUNKS_MAX ((size_t)1 << 16) /* refs of 32 bits: 4 GiB of names */
#define CAP_MAX ((size_t)1 << 32)    /* places from 32-bit tags */

static uint32_t tag_of(uint64_t h)
{
    return (uint32_t)h ? (uint32_t)h : 1;
}

static uint32_t slot_tag(struct nameset_slot s)
{
    return (uint32_t)(s.tag_ref >> 32);
}

static void slots_free(struct nameset_slot *slots, size_t cap);

void nameset_init(struct nameset *n)
{
    memset(n, 0, sizeof *n);
}

void nameset_release(struct nameset *n)
{
    slots_free(n->slots, n->cap);
    for (size_t i = 0; i < n->n_chunks; i++)
        free(n->chunks[i]);
    free(n->chunks);
    for (size_t i = 0; i < n->n_files; i++)
        free(n->files[i].name);
    free(n->files);
    memset(n, 0, sizeof *n);
}

int nameset_begin_file(struct nameset *n, const char *file)
{
    if (n->n_files == n->cap_files) {
        size_t cap = n->cap_files ? 2 * n->cap_files : 4;
        struct nameset_file *files = realloc(n->files, cap * sizeof *files);
        if (!files)
            return -1;
        n->files = files;
        n->cap_files = cap;
    }
    char *name = strdup(file);
    if (!name)
        return -1;
    /* The next name is kept here, or at the start of a new chunk: either is at or past it. */
    uint64_t from = n->n_chunks ? (uint64_t)(n->n_chunks - 1) * CHUNK_BYTES + n->used : 0;
    n->files[n->n_files++] = (struct nameset_file){name, from};
    return 0;
}

/* The index of the file the name kept at ref was seen in: the last one begun at or before its
 * place; n->n_files when none was begun before it. */
static size_t file_of(const struct nameset *n, uint32_t ref)
{
    size_t lo = 0, hi = n->n_files; /* the answer is the last of [0, hi) with from <= ref */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (n->files[mid].from <= ref)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? lo - 1 : n->n_files;
}

uint64_t nameset_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a, then a final mix */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h ? h : 1;
}

#define HUGE_PAGE ((size_t)2 << 20)

/* Whether a table of cap slots is mapped (slots_alloc), not malloc'd. */
static bool slots_mapped(size_t cap)
{
    return cap * sizeof(struct nameset_slot) >= 2 * HUGE_PAGE;
}

/* A zeroed table of cap slots. A large one is mapped, aligned to 2 MiB and asked for huge
 * pages: with a million names every probe is a random access to tens of MB, and with 4 KiB
 * pages each one also missed the TLB (a tenth of eval's time); the kernel's pages are zero, so
 * nothing is cleared before the first insert (clearing 16 MB held the reading thread up). */
static struct nameset_slot *slots_alloc(size_t cap)
{
    size_t bytes = cap * sizeof(struct nameset_slot);
    if (!slots_mapped(cap))
        return calloc(cap, sizeof(struct nameset_slot));
    size_t map = bytes + HUGE_PAGE;
    char *p = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    char *a = p + (HUGE_PAGE - (uintptr_t)p % HUGE_PAGE) % HUGE_PAGE;
    if (a > p)
        munmap(p, (size_t)(a - p));
    if (a + bytes < p + map)
        munmap(a + bytes, (size_t)(p + map - (a + bytes)));
#ifdef MADV_HUGEPAGE
    madvise(a, bytes, MADV_HUGEPAGE); /* a hint: without it the table works the same */
#endif
    return (struct nameset_slot *)(void *)a;
}

static void slots_free(struct nameset_slot *slots, size_t cap)
{
    if (slots && slots_mapped(cap))
        munmap(slots, cap * sizeof *slots);
    else
        free(slots);
}

/* The table at twice its slots, every name moved over. */
static bool nameset_grow(struct nameset *n)
{
    size_t cap = n->cap ? 2 * n->cap : 1024;
    if ((n->max_cap && cap > n->max_cap) || cap > CAP_MAX)
        return false;
    struct nameset_slot *slots = slots_alloc(cap);
    if (!slots)
        return false;
    for (size_t i = 0; i < n->cap; i++) {
        if (!n->slots[i].tag_ref)
            continue;
        size_t j = slot_tag(n->slots[i]) & (cap - 1);
        while (slots[j].tag_ref)
            j = (j + 1) & (cap - 1);
        slots[j] = n->slots[i];
    }
    slots_free(n->slots, n->cap);
    n->slots = slots;
    n->cap = cap;
    return true;
}

void nameset_prefetch(const struct nameset *n, uint64_t h)
{
    /* With a million names the table is tens of MB, and waiting for the slot at nameset_add
     * was a seventh of eval's time: the row is parsed between the two calls. */
    if (n->cap)
        __builtin_prefetch(&n->slots[tag_of(h) & (n->cap - 1)]);
}

/* The entry of a slot: its line, then its name. */
static const char *entry(const struct nameset *n, struct nameset_slot s)
{
    uint32_t ref = (uint32_t)s.tag_ref;
    return n->chunks[ref >> 16] + (ref & (CHUNK_BYTES - 1));
}

/* Keeps line and name (len bytes) in the chunks; *ref gets where. false when out of memory. */
static bool keep(struct nameset *n, const char *name, size_t len, unsigned long line, uint32_t *ref)
{
    size_t need = sizeof line + len + 1;
    if (n->n_chunks == 0 || n->used + need > CHUNK_BYTES) {
        if (n->n_chunks == CHUNKS_MAX)
            return false;
        if (n->n_chunks == n->cap_chunks) {
            size_t cap = n->cap_chunks ? 2 * n->cap_chunks : 16;
            char **chunks = realloc(n->chunks, cap * sizeof *chunks);
            if (!chunks)
                return false;
            n->chunks = chunks;
            n->cap_chunks = cap;
        }
        char *chunk = malloc(CHUNK_BYTES);
        if (!chunk)
            return false;
        n->chunks[n->n_chunks++] = chunk;
        n->used = 0;
    }
    char *e = n->chunks[n->n_chunks - 1] + n->used;
    memcpy(e, &line, sizeof line);
    memcpy(e + sizeof line, name, len + 1);
    *ref = (uint32_t)((n->n_chunks - 1) << 16 | n->used);
    n->used += need;
    return true;
}

int nameset_add(struct nameset *n, const char *name, uint64_t h, unsigned long line,
                struct nameset_seen *first)
{
    size_t len = strlen(name);
    if (len > NAMESET_NAME_MAX || (2 * (n->count + 1) > n->cap && !nameset_grow(n)))
        return -1;
    uint32_t tag = tag_of(h);
    size_t j = tag & (n->cap - 1);
    for (; n->slots[j].tag_ref; j = (j + 1) & (n->cap - 1)) {
        if (slot_tag(n->slots[j]) != tag)
            continue;
        const char *e = entry(n, n->slots[j]);
        if (strcmp(e + sizeof line, name) == 0) {
            size_t f = file_of(n, (uint32_t)n->slots[j].tag_ref);
            memcpy(&first->line, e, sizeof line);
            first->file = f < n->n_files ? n->files[f].name : NULL;
            first->same_file = f >= n->n_files || f == n->n_files - 1;
            return 0;
        }
    }
    uint32_t ref;
    if (!keep(n, name, len, line, &ref))
        return -1;
    n->slots[j].tag_ref = (uint64_t)tag << 32 | ref;
    n->count++;
    return 1;
}
