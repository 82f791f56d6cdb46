/* conf/conf_sip.c: shardingItemParameters ("0=a,1=b"), read as ElasticJob reads it.
 *
 * ElasticJob (ShardingItemParameters) splits the string on ',' and each piece, trimmed, on '=',
 * with Java's String.split: empty strings at the end of the result are dropped, so "0=a,1=b,"
 * and "0=a=" are fine while "0=a,,1=b", "0=" and "0=a=b" are not. Each pair needs exactly two
 * parts; the item is Integer.parseInt of the first, trimmed, the parameter the second, trimmed
 * (Java's trim strips every character up to U+0020). ElasticJob silently accepts two things
 * that ejob's file refuses: an item out of 0..shardingTotalCount-1 (never read), and an item
 * given twice (HashMap.put: the last one wins); in a config node (loose) ejob takes both as
 * ElasticJob does, with a warning each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf_int.h"

typedef struct span {
	size_t b, e;     /* [b, e) in the original string */
} span_t;

static span_t trim(const char *s, span_t p)
{
	while (p.b < p.e && (unsigned char)s[p.b] <= 0x20) p.b++;
	while (p.e > p.b && (unsigned char)s[p.e - 1] <= 0x20) p.e--;
	return p;
}

/* Java's split on one character: the pieces of s[p], with trailing empty pieces dropped.
 * Returns the count; fills at most max spans (count may exceed max). */
static size_t split(const char *s, span_t p, char sep, span_t *out, size_t max)
{
	size_t n = 0, b = p.b, kept = 0;
	bool any = false;
	for (size_t i = p.b; i <= p.e; i++) {
		if (i < p.e && s[i] != sep) continue;
		if (i < p.e) any = true;
		if (n < max) out[n] = (span_t){ b, i };
		n++;
		if (i > b) kept = n;     /* the last non-empty piece so far */
		b = i + 1;
	}
	if (!any) return 1;          /* no separator: the whole string, even when empty */
	return kept;
}

static int cmp_item(const void *a, const void *b)
{
	const conf_item_param_t *x = a, *y = b;
	return (x->item > y->item) - (x->item < y->item);
}

int conf_sip_parse(conf_arena_t *a, const char *s, int total, bool loose, conf_item_param_t **out,
                   size_t *n, conf_sip_err_fn *cb, void *arg)
{
	size_t len = strlen(s);
	int errors = 0;
	char msg[256], q[128];
	*out = NULL;
	*n = 0;
	if (len == 0) return 0;
	span_t whole = { 0, len };
	size_t npieces = split(s, whole, ',', NULL, 0);
	conf_item_param_t *v = conf_arena_alloc(a, (npieces + 1) * sizeof *v);
	if (!v) return -1;
	/* bitmap of seen items, for duplicates (any int when the total is unknown: sort later) */
	unsigned char *seen = total > 0 ? conf_arena_alloc(a, (size_t)total / 8 + 1) : NULL;
	if (total > 0 && !seen) return -1;
	size_t nv = 0, b = 0, piece = 0;
	for (size_t i = 0; i <= len && piece < npieces; i++) {
		if (i < len && s[i] != ',') continue;
		span_t raw = { b, i };
		b = i + 1;
		piece++;
		span_t t = trim(s, raw);
		span_t pair[2];
		size_t np = split(s, t, '=', pair, 2);
		if (np != 2) {
			conf_quote(q, sizeof q, s + t.b, t.e - t.b);
			conf_fmt(msg, sizeof msg, "must be ITEM=PARAMETER pairs separated by commas, "
			         "e.g. \"0=a,1=b\" (got %s)", q);
			cb(arg, t.b, false, msg);
			errors++;
			continue;
		}
		span_t ik = trim(s, pair[0]), pv = trim(s, pair[1]);
		size_t k = ik.b;
		bool neg = false;
		if (k < ik.e && (s[k] == '-' || s[k] == '+')) neg = s[k++] == '-';
		long long item = 0;
		bool ok = k < ik.e;
		for (; k < ik.e && ok; k++) {
			if (s[k] < '0' || s[k] > '9') ok = false;
			else if (item <= 2147483648LL) item = item * 10 + (s[k] - '0');
		}
		if (neg) item = -item;
		if (!ok || item > 2147483647LL || item < -2147483648LL) {
			conf_quote(q, sizeof q, s + ik.b, ik.e - ik.b);
			if (total > 0)
				conf_fmt(msg, sizeof msg, "the item before '=' must be an integer 0-%d (got %s)",
				         total - 1, q);
			else
				conf_fmt(msg, sizeof msg, "the item before '=' must be an integer (got %s)", q);
			cb(arg, ik.b, false, msg);
			errors++;
			continue;
		}
		if (item < 0 || (total > 0 && item >= total)) {
			if (total < 0) {
				if (loose) continue;   /* the count's own error says it all */
				conf_fmt(msg, sizeof msg, "item %lld is out of range: items start at 0", item);
				cb(arg, ik.b, false, msg);
				errors++;
				continue;
			}
			if (loose) {
				conf_fmt(msg, sizeof msg, "item %lld is out of range (shardingTotalCount is %d, so items are "
				         "0-%d): never read, as ElasticJob never reads it; remove it", item, total, total - 1);
				cb(arg, ik.b, true, msg);
				continue;
			}
			conf_fmt(msg, sizeof msg, "item %lld is out of range: shardingTotalCount is %d, so "
			         "items are 0-%d", item, total, total - 1);
			cb(arg, ik.b, false, msg);
			errors++;
			continue;
		}
		if (!seen) {
			/* the total is unknown: no duplicate check (it would be quadratic) */
		} else if (seen[item / 8] & (1u << (item % 8))) {
			if (loose) {
				/* ElasticJob's HashMap.put: the last one wins */
				conf_fmt(msg, sizeof msg, "item %lld is given twice; the last one is taken, as ElasticJob "
				         "takes it; give each item one parameter", item);
				cb(arg, ik.b, true, msg);
				for (size_t x = 0; x < nv; x++)
					if (v[x].item == (int)item) {
						v[x].value = conf_arena_strndup(a, s + pv.b, pv.e - pv.b);
						if (!v[x].value) return -1;
					}
				continue;
			}
			conf_fmt(msg, sizeof msg, "item %lld is given twice; each item may have one parameter",
			         item);
			cb(arg, ik.b, false, msg);
			errors++;
			continue;
		}
		if (seen) seen[item / 8] |= (unsigned char)(1u << (item % 8));
		v[nv].item = (int)item;
		v[nv].value = conf_arena_strndup(a, s + pv.b, pv.e - pv.b);
		if (!v[nv].value) return -1;
		nv++;
	}
	if (errors) return errors;
	qsort(v, nv, sizeof *v, cmp_item);
	*out = v;
	*n = nv;
	return 0;
}
