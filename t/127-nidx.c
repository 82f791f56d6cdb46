/* t/127-nidx.c: supervisor/base/nidx, the index by which the scheduler and coord find a job by
 * name (a loop of strcmp made loading 10,000 jobs take 1.9 s). Checked against the loop it
 * replaced, over random appends, removals (swap with the last, as the scheduler removes) and
 * lookups of names present and absent, 200,000 operations: every lookup gives the position the
 * loop gives. And the sizes users run: 50,000 names found, each at its own position. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/base/nidx.h"
#include "t/tap.h"

static const char *name_at(const void *arr, size_t i)
{
	return ((char *const *)arr)[i];
}

static size_t slow(char **v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], name)) return i;
	return (size_t)-1;
}

int main(void)
{
	plan(5);
	enum { CAP = 3000 };
	char **v = calloc(CAP, sizeof *v);
	if (!v) BAIL_OUT("out of memory");
	size_t n = 0;
	struct nidx x = { 0 };
	unsigned seed = 12345;
	int wrong = 0, finds = 0, hits = 0;
	for (int op = 0; op < 200000; op++) {
		unsigned r = (unsigned)rand_r(&seed);
		char name[32];
		snprintf(name, sizeof name, "job%u", (unsigned)rand_r(&seed) % 4000);
		if (r % 4 == 0 && n < CAP && slow(v, n, name) == (size_t)-1) {        /* append a new name */
			v[n] = strdup(name);
			n++;
			nidx_add(&x, v, n, name_at, n - 1);
		} else if (r % 4 == 1 && n > 0) {                                      /* remove one */
			size_t i = (size_t)rand_r(&seed) % n;
			free(v[i]);
			v[i] = v[--n];
			nidx_dirty(&x);
		} else {                                                               /* look one up */
			size_t want = slow(v, n, name), got = nidx_find(&x, v, n, name_at, name);
			finds++;
			hits += want != (size_t)-1;
			if (got != want && !wrong++) diag("%s: index says %zu, the loop %zu (n %zu)", name, got, want, n);
		}
	}
	is_int(wrong, 0, "200,000 random appends, removals and lookups: every lookup agrees with the loop");
	ok(hits > 1000 && finds - hits > 1000, "both present (%d) and absent (%d) names were looked up", hits, finds - hits);
	for (size_t i = 0; i < n; i++) free(v[i]);
	free(v);
	nidx_free(&x);

	enum { BIG = 50000 };
	char **w = calloc(BIG, sizeof *w);
	if (!w) BAIL_OUT("out of memory");
	struct nidx y = { 0 };
	size_t m = 0;
	nidx_find(&y, w, m, name_at, "none");        /* built empty, then only appended to */
	for (size_t i = 0; i < BIG; i++) {
		char name[32];
		snprintf(name, sizeof name, "j%05zu", i);
		w[m] = strdup(name);
		m++;
		nidx_add(&y, w, m, name_at, m - 1);
	}
	int bad = 0;
	for (size_t i = 0; i < BIG; i++) bad += nidx_find(&y, w, m, name_at, w[i]) != i;
	is_int(bad, 0, "50,000 names appended one by one: each found at its position");
	is_int((long long)nidx_find(&y, w, m, name_at, "j50000"), -1, "a name never added is not found");
	ok(y.cap >= 2 * BIG && y.used == BIG && !y.dirty, "at most half full, one entry a name, not rebuilt (cap %zu, used %zu)",
	   y.cap, y.used);
	for (size_t i = 0; i < m; i++) free(w[i]);
	free(w);
	nidx_free(&y);
	return done_testing();
}
