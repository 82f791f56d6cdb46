/* supervisor/run/cronshare.c: see cronshare.h. The held ones are an array indexed by their key
 * ("year expression"); a ref knows its place, so a put is O(1) too. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/base/nidx.h"
#include "supervisor/run/cronshare.h"

struct cronref {
	char *key;
	cron_t *c;
	unsigned refs;
	size_t at;                  /* its place in the array */
};

struct cronshare {
	struct cronref **v;
	size_t n, cap;
	struct nidx ix;
};

static const char *key_of(const void *arr, size_t i)
{
	return ((struct cronref *const *)arr)[i]->key;
}

cronshare_t *cronshare_new(void)
{
	return calloc(1, sizeof(cronshare_t));
}

struct cronref *cronshare_get(cronshare_t *cs, const cron_t *compiled, int max_year, const cron_t **cron,
                              cron_err_t *err)
{
	*cron = NULL;
	char *key = NULL;
	if (asprintf(&key, "%d %s", max_year, cron_expr(compiled)) < 0) key = NULL;
	size_t i = key ? nidx_find(&cs->ix, cs->v, cs->n, key_of, key) : (size_t)-1;
	if (i != (size_t)-1) {
		free(key);
		cs->v[i]->refs++;
		*cron = cs->v[i]->c;
		return cs->v[i];
	}
	struct cronref *r = key ? calloc(1, sizeof *r) : NULL;
	if (r && cs->n == cs->cap) {
		size_t nc = cs->cap ? cs->cap * 2 : 8;
		struct cronref **v = realloc(cs->v, nc * sizeof *v);
		if (v) {
			cs->v = v;
			cs->cap = nc;
		}
	}
	if (!r || cs->n == cs->cap) {
		free(key);
		free(r);
		if (err) {
			err->column = 1;
			snprintf(err->msg, sizeof err->msg, "out of memory");
		}
		errno = ENOMEM;
		return NULL;
	}
	if (!(r->c = cron_with_max_year(compiled, max_year, err))) {
		free(key);
		free(r);
		return NULL;
	}
	r->key = key;
	r->refs = 1;
	r->at = cs->n;
	cs->v[cs->n++] = r;
	nidx_add(&cs->ix, cs->v, cs->n, key_of, r->at);
	*cron = r->c;
	return r;
}

void cronshare_put(cronshare_t *cs, struct cronref *r)
{
	if (!r || --r->refs) return;
	size_t at = r->at;
	cs->v[at] = cs->v[--cs->n];
	cs->v[at]->at = at;
	nidx_dirty(&cs->ix);
	cron_free(r->c);
	free(r->key);
	free(r);
}

size_t cronshare_count(const cronshare_t *cs)
{
	return cs ? cs->n : 0;
}

void cronshare_free(cronshare_t *cs)
{
	if (!cs) return;
	for (size_t i = 0; i < cs->n; i++) {
		cron_free(cs->v[i]->c);
		free(cs->v[i]->key);
		free(cs->v[i]);
	}
	free(cs->v);
	nidx_free(&cs->ix);
	free(cs);
}
