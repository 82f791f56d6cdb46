/* conf/conf_arena.c: a bounded arena. A config and everything it points to live in one arena
 * and go with one free; the limit keeps an alias bomb from taking the machine's memory. What
 * lives outside it (a job's compiled cron and zone) is handed to it and freed with it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf_int.h"

#define CHUNK_MIN ((size_t)16 << 10)
#define ALIGN     ((size_t)16)

struct chunk {
	struct chunk *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

struct owned {
	struct owned *next;
	void (*release)(void *);
	void *p;
};

struct conf_arena {
	struct chunk *head;
	struct owned *owned;    /* the latest first */
	size_t total, limit;
	size_t chunk;           /* the least a new chunk holds */
	bool exhausted;
	unsigned holds;         /* conf_arena_hold()s beyond its owner's: freed when the last goes */
};

conf_arena_t *conf_arena_new(size_t limit)
{
	conf_arena_t *a = calloc(1, sizeof *a);
	if (a) {
		a->limit = limit;
		a->chunk = CHUNK_MIN;
	}
	return a;
}

void conf_arena_chunk(conf_arena_t *a, size_t chunk)
{
	a->chunk = chunk >= ALIGN ? chunk : ALIGN;
}

conf_arena_t *conf_arena_hold(conf_arena_t *a)
{
	if (a) a->holds++;
	return a;
}

void conf_arena_free(conf_arena_t *a)
{
	if (!a) return;
	if (a->holds) {
		a->holds--;
		return;
	}
	int saved = errno;
	for (struct owned *o = a->owned; o; o = o->next) o->release(o->p);
	struct chunk *c = a->head;
	while (c) {
		struct chunk *next = c->next;
		free(c);
		c = next;
	}
	free(a);
	errno = saved;
}

void *conf_arena_alloc(conf_arena_t *a, size_t n)
{
	if (n == 0) n = 1;
	if (n > a->limit) goto full;
	n = (n + ALIGN - 1) & ~(ALIGN - 1);
	struct chunk *c = a->head;
	if (!c || c->size - c->used < n) {
		size_t size = n > a->chunk ? n : a->chunk;
		if (a->total + size > a->limit) goto full;
		c = malloc(sizeof *c + size);
		if (!c) {
			a->exhausted = true;
			return NULL;
		}
		c->used = 0;
		c->size = size;
		a->total += size;
		/* A big block goes behind the current chunk, whose free space stays usable. */
		if (a->head && size > a->chunk && a->head->size - a->head->used >= ALIGN) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	void *p = c->data + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
full:
	a->exhausted = true;
	errno = ENOMEM;
	return NULL;
}

char *conf_arena_strndup(conf_arena_t *a, const char *s, size_t n)
{
	if (n == SIZE_MAX) {
		errno = ENOMEM;
		return NULL;
	}
	char *p = conf_arena_alloc(a, n + 1);
	if (p && n) memcpy(p, s, n);
	return p;
}

char *conf_arena_strdup(conf_arena_t *a, const char *s)
{
	return conf_arena_strndup(a, s, strlen(s));
}

bool conf_arena_exhausted(const conf_arena_t *a)
{
	return a->exhausted;
}

int conf_arena_own(conf_arena_t *a, void (*release)(void *), void *p)
{
	struct owned *o = conf_arena_alloc(a, sizeof *o);
	if (!o) {
		int saved = errno;
		release(p);
		errno = saved;
		return -1;
	}
	*o = (struct owned){ a->owned, release, p };
	a->owned = o;
	return 0;
}
