/* supervisor/coord/shard.c: ElasticJob's sharding strategies and the Java string facts they rest on
 * (see shard.h). */
#include "supervisor/coord/shard.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---- Java strings ----------------------------------------------------------------------- */

#define REPL 0xfffdu

static bool cont(unsigned b)
{
	return (b & 0xc0) == 0x80;
}

/* The second byte of a 4-byte sequence led by b1 (<= 0xf4) cannot continue it. */
static bool bad4_2(unsigned b1, unsigned b2)
{
	return !cont(b2) || (b1 == 0xf0 && b2 < 0x90) || (b1 == 0xf4 && b2 >= 0x90);
}

/* Decode the character at s[*pos] (n bytes in all) as JDK 17's new String(bytes, UTF_8) does:
 * writes its 1 or 2 UTF-16 units to u, advances *pos, returns the number of units.
 *
 * Where the input is ill-formed, Java puts one U+FFFD for: a byte that cannot start a
 * sequence (80-C1, F8-FF); a lead byte whose next byte cannot follow it (not 80-BF, or out of
 * the lead's range: E0 needs A0-BF, F0 needs 90-BF, F4 needs 80-8F, F5-F7 take nothing), which
 * is left to be read again; a good start cut short by a byte that cannot continue it (that
 * byte is read again); a 3-byte sequence that encodes a surrogate (all three bytes: one
 * U+FFFD, not three); and a good start that the end of the input cuts short (the rest). */
static unsigned jdecode(const unsigned char *s, size_t n, size_t *pos, uint16_t u[2])
{
	size_t i = *pos;
	unsigned b1 = s[i++];
	u[0] = REPL;
	if (b1 < 0x80) {
		u[0] = (uint16_t)b1;
	} else if (b1 >= 0xc2 && b1 <= 0xdf) {
		if (i < n && cont(s[i])) {
			u[0] = (uint16_t)((b1 & 0x1f) << 6 | (s[i] & 0x3fu));
			i++;
		}
	} else if (b1 >= 0xe0 && b1 <= 0xef) {
		bool bad2 = i < n && (!cont(s[i]) || (b1 == 0xe0 && s[i] < 0xa0));
		if (n - i >= 2) {
			if (bad2) {
				/* the lead alone */
			} else if (!cont(s[i + 1])) {
				i += 1;
			} else {
				unsigned c = (b1 & 0x0f) << 12 | (s[i] & 0x3fu) << 6 | (s[i + 1] & 0x3fu);
				if (c < 0xd800 || c > 0xdfff)
					u[0] = (uint16_t)c;
				i += 2;
			}
		} else if (!bad2) {
			i = n;
		}
	} else if (b1 >= 0xf0 && b1 <= 0xf7) {
		if (n - i >= 3) {
			if (b1 > 0xf4 || bad4_2(b1, s[i])) {
				/* the lead alone */
			} else if (!cont(s[i + 1])) {
				i += 1;
			} else if (!cont(s[i + 2])) {
				i += 2;
			} else {
				uint32_t c = (b1 & 0x07u) << 18 | (s[i] & 0x3fu) << 12 | (s[i + 1] & 0x3fu) << 6 |
				             (s[i + 2] & 0x3fu);
				c -= 0x10000;
				u[0] = (uint16_t)(0xd800 + (c >> 10));
				u[1] = (uint16_t)(0xdc00 + (c & 0x3ff));
				*pos = i + 3;
				return 2;
			}
		} else if (b1 <= 0xf4 && !(i < n && bad4_2(b1, s[i]))) {
			/* cut short by the end: the second byte goes with the lead, and so does the
			 * third unless it cannot continue them */
			i++;
			if (!(i < n && !cont(s[i])))
				i = n;
		}
	}
	*pos = i;
	return 1;
}

/* A string as a stream of Java's UTF-16 units. */
struct junits {
	const unsigned char *s;
	size_t n, i;
	uint16_t u[2];
	unsigned have, next;
};

static void junits_init(struct junits *j, const char *s, size_t n)
{
	j->s = (const unsigned char *)s;
	j->n = n;
	j->i = 0;
	j->have = j->next = 0;
}

static bool junits_next(struct junits *j, uint16_t *unit)
{
	if (j->next == j->have) {
		if (j->i >= j->n)
			return false;
		j->have = jdecode(j->s, j->n, &j->i, j->u);
		j->next = 0;
	}
	*unit = j->u[j->next++];
	return true;
}

int32_t shard_java_hash(const char *s)
{
	struct junits j;
	uint32_t h = 0;
	uint16_t u;
	junits_init(&j, s, strlen(s));
	while (junits_next(&j, &u))
		h = 31 * h + u;
	return (int32_t)h;
}

static int jcmp(const char *a, size_t an, const char *b, size_t bn)
{
	struct junits ja, jb;
	junits_init(&ja, a, an);
	junits_init(&jb, b, bn);
	for (;;) {
		uint16_t ua, ub;
		bool ha = junits_next(&ja, &ua), hb = junits_next(&jb, &ub);
		if (!ha || !hb)
			return ha - hb; /* the shorter one first */
		if (ua != ub)
			return ua < ub ? -1 : 1;
	}
}

int shard_java_cmp(const char *a, const char *b)
{
	return jcmp(a, strlen(a), b, strlen(b));
}

/* ---- strategies ------------------------------------------------------------------------- */

/* Where the strategy puts the list's entries: AVG_ALLOCATION deals to position k the entry
 * at list[first + k * dir mod n]. */
struct order {
	size_t first;
	int dir;
};

static int check(conf_strategy_t strategy, const char *job, size_t n, uint32_t total, const uint32_t *owner)
{
	if (!job || n == 0 || n > INT32_MAX || total > INT32_MAX || (total > 0 && !owner) ||
	    (strategy != CONF_STRATEGY_AVG_ALLOCATION && strategy != CONF_STRATEGY_ODEVITY &&
	     strategy != CONF_STRATEGY_ROUND_ROBIN && strategy != CONF_STRATEGY_SINGLE_SHARDING_BALANCE)) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* How the strategy orders the list (after check()). */
static int plan(conf_strategy_t strategy, const char *job, int64_t now_ms, size_t n, struct order *o)
{
	o->first = 0;
	o->dir = 1;
	if (strategy == CONF_STRATEGY_ODEVITY && shard_java_hash(job) % 2 == 0) {
		o->first = n - 1; /* Collections.reverse */
		o->dir = -1;
	} else if (strategy == CONF_STRATEGY_ROUND_ROBIN || strategy == CONF_STRATEGY_SINGLE_SHARDING_BALANCE) {
		int32_t h = shard_java_hash(job);
		/* SINGLE_SHARDING_BALANCE: hashCode() + ((Long) currentTimeMillis()).intValue(), an int
		 * sum that wraps */
		if (strategy == CONF_STRATEGY_SINGLE_SHARDING_BALANCE)
			h = (int32_t)((uint32_t)h + (uint32_t)(uint64_t)now_ms);
		int32_t a = h == INT32_MIN ? h : h < 0 ? -h : h; /* Math.abs */
		int32_t off = a % (int32_t)n;
		if (off < 0) { /* Java's get((0 + off) % n) throws */
			errno = EDOM;
			return -1;
		}
		o->first = (size_t)off;
	}
	return 0;
}

/* AVG_ALLOCATION over the list as the strategy ordered it. */
static void deal(const struct order *o, size_t n, uint32_t total, uint32_t *owner)
{
	uint32_t per = (uint32_t)(total / n), rest = (uint32_t)(total % n), item = 0;
	for (size_t k = 0; k < n; k++) {
		size_t at = o->dir > 0 ? (o->first + k) % n : o->first - k;
		for (uint32_t i = 0; i < per; i++)
			owner[item++] = (uint32_t)at;
		if (k < rest)
			owner[per * n + k] = (uint32_t)at;
	}
}

int shard_assign_ordered(conf_strategy_t strategy, const char *job, int64_t now_ms, size_t n, uint32_t total,
                         uint32_t *owner)
{
	struct order o;
	if (check(strategy, job, n, total, owner) < 0 || plan(strategy, job, now_ms, n, &o) < 0)
		return -1;
	deal(&o, n, total, owner);
	return 0;
}

struct inst {
	const char *s;
	size_t len;
	uint32_t idx;
};

static int by_name_desc(const void *x, const void *y)
{
	const struct inst *a = x, *b = y;
	return jcmp(b->s, b->len, a->s, a->len);
}

int shard_assign(conf_strategy_t strategy, const char *job, int64_t now_ms, const char *const *instances, size_t n,
                 uint32_t total, uint32_t *owner)
{
	struct order o;
	if (check(strategy, job, n, total, owner) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!instances || !instances[i]) {
			errno = EINVAL;
			return -1;
		}
	}
	struct inst *v = calloc(n, sizeof *v);
	if (!v)
		return -1;
	for (size_t i = 0; i < n; i++)
		v[i] = (struct inst){ instances[i], strlen(instances[i]), (uint32_t)i };
	qsort(v, n, sizeof *v, by_name_desc);
	for (size_t i = 1; i < n; i++) {
		if (by_name_desc(&v[i - 1], &v[i]) == 0) {
			free(v);
			errno = EINVAL;
			return -1;
		}
	}
	if (plan(strategy, job, now_ms, n, &o) < 0) {
		int e = errno;
		free(v);
		errno = e;
		return -1;
	}
	deal(&o, n, total, owner);
	for (uint32_t i = 0; i < total; i++)
		owner[i] = v[owner[i]].idx;
	free(v);
	return 0;
}

uint32_t shard_items_of(const uint32_t *owner, uint32_t total, size_t idx, uint32_t *items)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < total; i++)
		if (owner[i] == idx)
			items[k++] = i;
	return k;
}
