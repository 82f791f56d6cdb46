/* ipc/lastrun.c: an item's last execution record (ipc/lastrun.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/lastrun.h"

static int plain(const char *s)
{
	for (; *s; s++)
		if (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20) return 0;
	return 1;
}

int lastrun_fmt(const struct lastrun *r, char *buf, size_t len)
{
	if (!plain(r->outcome) || !plain(r->instance) || !plain(r->source)) return -1;
	int n = snprintf(buf, len,
	                 "{\"fireId\":%" PRIu64 ",\"outcome\":\"%s\",\"endMs\":%" PRIu64 ",\"instance\":\"%s\","
	                 "\"attempt\":%" PRIu32 ",\"consecutiveFailures\":%" PRIu32 ",\"lastSuccessMs\":%" PRIu64
	                 ",\"source\":\"%s\"}",
	                 r->fire_id, r->outcome, r->end_ms, r->instance, r->attempt, r->failures, r->ok_ms, r->source);
	return n < 0 || (size_t)n >= len ? -1 : n;
}

/* the value after "key": in t (NUL-terminated), or NULL */
static const char *value(const char *t, const char *key)
{
	char k[40];
	snprintf(k, sizeof k, "\"%s\":", key);
	const char *p = strstr(t, k);
	return p ? p + strlen(k) : NULL;
}

static int num(const char *t, const char *key, uint64_t *out)
{
	const char *p = value(t, key);
	if (!p || *p < '0' || *p > '9') return -1;
	char *end;
	unsigned long long v = strtoull(p, &end, 10);
	if (*end != ',' && *end != '}') return -1;
	*out = v;
	return 0;
}

static int str(const char *t, const char *key, char *out, size_t len)
{
	const char *p = value(t, key);
	if (!p || *p != '"') return -1;
	const char *e = strchr(++p, '"');
	if (!e || (size_t)(e - p) >= len || memchr(p, '\\', (size_t)(e - p))) return -1;
	memcpy(out, p, (size_t)(e - p));
	out[e - p] = '\0';
	return 0;
}

int lastrun_parse(const char *data, size_t len, struct lastrun *r)
{
	memset(r, 0, sizeof *r);
	if (!data || !len) return 0;
	if (len > 4096) return -1;
	char t[4097];
	memcpy(t, data, len);
	t[len] = '\0';
	uint64_t att, fails;
	if (t[0] != '{' || num(t, "fireId", &r->fire_id) || str(t, "outcome", r->outcome, sizeof r->outcome) ||
	    num(t, "endMs", &r->end_ms) || str(t, "instance", r->instance, sizeof r->instance) ||
	    num(t, "attempt", &att) || num(t, "consecutiveFailures", &fails))
		return -1;
	r->attempt = att > UINT32_MAX ? UINT32_MAX : (uint32_t)att;
	r->failures = fails > UINT32_MAX ? UINT32_MAX : (uint32_t)fails;
	/* later keys: absent in an older record is not garbage */
	if (num(t, "lastSuccessMs", &r->ok_ms)) r->ok_ms = 0;
	if (str(t, "source", r->source, sizeof r->source)) r->source[0] = '\0';
	return 1;
}

int lastrun_is_failure(const char *o)
{
	return !strcmp(o, "failed") || !strcmp(o, "crashed") || !strcmp(o, "timeout") || !strcmp(o, "error");
}
