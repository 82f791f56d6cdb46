/* supervisor/base/nidx.h: an index of names over an array the caller owns (its jobs): which
 * position holds a name, in O(1) where a loop of strcmp made loading 10,000 jobs 100 million
 * compares (1.9 s before the supervisor even connected). Open addressing of positions, at most
 * half full. Appends are added as they come (nidx_add); any other change of the array (a removal,
 * a reorder) is told with nidx_dirty, and the next lookup builds the index again from the array.
 * A stale entry can never answer wrongly: every hit is checked against the array's name. */
#ifndef EJOB_NIDX_H
#define EJOB_NIDX_H

#include <stddef.h>

typedef const char *(*nidx_name_fn)(const void *arr, size_t i);   /* the name at position i */

struct nidx {
	size_t cap;                 /* slots (a power of two, 0: none yet) */
	size_t *slot;               /* position + 1; 0: empty */
	size_t used;
	int dirty;                  /* build again before the next lookup */
};

/* The position of name among arr's n, or (size_t)-1. */
size_t nidx_find(struct nidx *x, const void *arr, size_t n, nidx_name_fn name_of, const char *name);
/* Position i (the last appended) now holds name. Out of memory marks it dirty (built later). */
void nidx_add(struct nidx *x, const void *arr, size_t n, nidx_name_fn name_of, size_t i);
void nidx_dirty(struct nidx *x);
/* The hash it uses (FNV-1a), for other tables of names (zkc's watches by path) */
size_t nidx_hash(const char *s);
void nidx_free(struct nidx *x);

#endif
