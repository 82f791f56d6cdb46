/* supervisor/base/nidx.c: an index of names over the caller's array (nidx.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/base/nidx.h"

size_t nidx_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;    /* FNV-1a */
	for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)(h ^ (h >> 29));
}

static void put(struct nidx *x, const char *name, size_t i)
{
	size_t m = x->cap - 1;
	for (size_t k = nidx_hash(name) & m;; k = (k + 1) & m)
		if (!x->slot[k]) {
			x->slot[k] = i + 1;
			x->used++;
			return;
		}
}

/* room for want entries at most half full; 0, or -1 out of memory (x unchanged) */
static int grow(struct nidx *x, size_t want)
{
	size_t cap = 64;
	while (cap < 2 * want) cap *= 2;
	if (cap <= x->cap) return 0;
	size_t *s = calloc(cap, sizeof *s);
	if (!s) return -1;
	free(x->slot);
	x->slot = s;
	x->cap = cap;
	x->dirty = 1;               /* the new table is empty: filled from the array */
	return 0;
}

static int build(struct nidx *x, const void *arr, size_t n, nidx_name_fn name_of)
{
	if (grow(x, n + 1) < 0) return -1;
	memset(x->slot, 0, x->cap * sizeof *x->slot);
	x->used = 0;
	for (size_t i = 0; i < n; i++) put(x, name_of(arr, i), i);
	x->dirty = 0;
	return 0;
}

size_t nidx_find(struct nidx *x, const void *arr, size_t n, nidx_name_fn name_of, const char *name)
{
	if ((x->dirty || !x->cap) && build(x, arr, n, name_of) < 0) {
		for (size_t i = 0; i < n; i++)     /* out of memory: the slow way */
			if (!strcmp(name_of(arr, i), name)) return i;
		return (size_t)-1;
	}
	size_t m = x->cap - 1;
	for (size_t k = nidx_hash(name) & m; x->slot[k]; k = (k + 1) & m) {
		size_t i = x->slot[k] - 1;
		if (i < n && !strcmp(name_of(arr, i), name)) return i;
	}
	return (size_t)-1;
}

void nidx_add(struct nidx *x, const void *arr, size_t n, nidx_name_fn name_of, size_t i)
{
	if (x->dirty || !x->cap) return;            /* built from the array at the next lookup */
	if (2 * (x->used + 1) > x->cap) {
		if (grow(x, x->used + 1) < 0 || build(x, arr, n, name_of) < 0) x->dirty = 1;
		return;                                 /* built from the array, i with them */
	}
	put(x, name_of(arr, i), i);
}

void nidx_dirty(struct nidx *x)
{
	x->dirty = 1;
}

void nidx_free(struct nidx *x)
{
	free(x->slot);
	memset(x, 0, sizeof *x);
}
