/* ipc/lastrun.c: an item's last execution record (ipc/lastrun.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/json.h"
#include "ipc/lastrun.h"

static int plain(const char *s)
{
	for (; *s; s++)
		if (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20) return 0;
	return 1;
}

static int cont(unsigned char c) { return (c & 0xc0) == 0x80; }

size_t lastrun_error_len(const char *s, size_t n)
{
	if (n <= LASTRUN_ERROR_MAX) return n;
	n = LASTRUN_ERROR_MAX;
	while (n > 0 && cont((unsigned char)s[n])) n--;
	return n;
}

size_t lastrun_tail_start(const char *s, size_t n)
{
	if (n <= LASTRUN_TAIL_MAX) return 0;
	size_t p = n - LASTRUN_TAIL_MAX;
	if (s[p - 1] == '\n') return p;
	const char *nl = memchr(s + p, '\n', n - p);
	if (nl && (size_t)(nl + 1 - s) < n) return (size_t)(nl + 1 - s);
	while (p < n && cont((unsigned char)s[p])) p++;   /* one line longer than the tail: its end */
	return p;
}

size_t lastrun_cause(char *buf, size_t len, const char *outcome, int exit_code, int signal, const char *err)
{
	if (!len) return 0;
	char head[64];
	if (signal) snprintf(head, sizeof head, "%s (signal %d)", outcome, signal);
	else if (exit_code) snprintf(head, sizeof head, "%s (exit %d)", outcome, exit_code);
	else snprintf(head, sizeof head, "%s", outcome);
	int has = err && *err;
	int n = snprintf(buf, len, "%s%s%s", head, has ? ": " : "", has ? err : "");
	if (n < 0) {
		buf[0] = '\0';
		return 0;
	}
	size_t k = (size_t)n;
	if (k >= len) {                 /* cut: not in the middle of a character */
		k = len - 1;
		while (k > 0 && cont((unsigned char)buf[k])) k--;
		buf[k] = '\0';
	}
	return k;
}

int lastrun_fmt(const struct lastrun *r, char *buf, size_t len)
{
	if (!plain(r->outcome) || !plain(r->instance) || !plain(r->source)) return -1;
	int n = snprintf(buf, len,
	                 "{\"fireId\":%" PRIu64 ",\"outcome\":\"%s\",\"endMs\":%" PRIu64 ",\"instance\":\"%s\","
	                 "\"attempt\":%" PRIu32 ",\"consecutiveFailures\":%" PRIu32 ",\"lastSuccessMs\":%" PRIu64
	                 ",\"source\":\"%s\"",
	                 r->fire_id, r->outcome, r->end_ms, r->instance, r->attempt, r->failures, r->ok_ms, r->source);
	if (n < 0 || (size_t)n >= len) return -1;
	size_t at = (size_t)n;
	if ((r->error && *r->error) || (r->tail && *r->tail)) {
		json_buf_t b;
		json_init(&b);
		if (r->error && *r->error) {
			json_key(&b, "error", 0);
			json_str(&b, r->error, lastrun_error_len(r->error, strlen(r->error)), JSON_PLAIN);
		}
		if (r->tail && *r->tail) {
			size_t tn = strlen(r->tail), from = lastrun_tail_start(r->tail, tn);
			json_key(&b, "tail", 0);
			json_str(&b, r->tail + from, tn - from, JSON_PLAIN);
		}
		int fits = !b.oom && at + b.len + 2 <= len;
		if (fits) memcpy(buf + at, b.p, b.len), at += b.len;
		json_free(&b);
		if (!fits) return -1;
	}
	if (at + 2 > len) return -1;
	buf[at++] = '}';
	buf[at] = '\0';
	return (int)at;
}

/* ---- reading: one flat JSON object, keys in any order, unknown keys skipped ---------------------- */

struct scan {
	const char *p, *e;
};

static void ws(struct scan *s)
{
	while (s->p < s->e && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')) s->p++;
}

static int lit(struct scan *s, char c)
{
	ws(s);
	if (s->p < s->e && *s->p == c) {
		s->p++;
		return 1;
	}
	return 0;
}

static int hex4(const char *p, const char *e, uint32_t *v)
{
	if (e - p < 4) return -1;
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0) return -1;
		*v = *v << 4 | (uint32_t)d;
	}
	return 0;
}

static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) { o[0] = (char)cp; return 1; }
	if (cp < 0x800) { o[0] = (char)(0xc0 | cp >> 6); o[1] = (char)(0x80 | (cp & 0x3f)); return 2; }
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12), o[1] = (char)(0x80 | (cp >> 6 & 0x3f)), o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18), o[1] = (char)(0x80 | (cp >> 12 & 0x3f)), o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* The length of the valid UTF-8 character at p (e - p bytes left; no overlong form, surrogate or
 * code point past U+10FFFF), 0 if there is none: a record is valid UTF-8, as json_str writes it. */
static size_t utf8_char(const unsigned char *p, const unsigned char *e)
{
	unsigned c = p[0];
	size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : (c & 0xf0) == 0xe0 ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (!n || (size_t)(e - p) < n) return 0;
	for (size_t i = 1; i < n; i++)
		if (!cont(p[i])) return 0;
	if (n == 3 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0))) return 0;
	if (n == 4 && ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90))) return 0;
	return n;
}

/* A string at s (after whitespace), decoded into out (cap bytes, NUL-terminated; NULL: only
 * skipped); its length in *n. -1: not a string, a raw control character, invalid UTF-8, a \u0000
 * or a lone surrogate (never in a record: it must be garbage), or longer than cap - 1. The
 * decoded text is never longer than its JSON. */
static int string(struct scan *s, char *out, size_t cap, size_t *n)
{
	if (!lit(s, '"')) return -1;
	size_t k = 0;
	while (s->p < s->e && *s->p != '"') {
		char t[4];
		size_t tn = 1;
		unsigned char c = (unsigned char)*s->p;
		if (c < 0x20) return -1;
		if (c >= 0x80) {
			if (!(tn = utf8_char((const unsigned char *)s->p, (const unsigned char *)s->e))) return -1;
			memcpy(t, s->p, tn);
			s->p += tn;
		} else {
			t[0] = (char)c;
			s->p++;
		}
		if (c == '\\') {
			if (s->p >= s->e) return -1;
			char x = *s->p++;
			uint32_t cp, lo;
			switch (x) {
			case '"': case '\\': case '/': t[0] = x; break;
			case 'b': t[0] = '\b'; break;
			case 'f': t[0] = '\f'; break;
			case 'n': t[0] = '\n'; break;
			case 'r': t[0] = '\r'; break;
			case 't': t[0] = '\t'; break;
			case 'u':
				if (hex4(s->p, s->e, &cp)) return -1;
				s->p += 4;
				if (cp >= 0xdc00 && cp <= 0xdfff) return -1;
				if (cp >= 0xd800 && cp <= 0xdbff) {
					if (s->e - s->p < 6 || s->p[0] != '\\' || s->p[1] != 'u' || hex4(s->p + 2, s->e, &lo) || lo < 0xdc00 ||
					    lo > 0xdfff)
						return -1;
					s->p += 6;
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				}
				if (!cp) return -1;
				tn = put_utf8(t, cp);
				break;
			default: return -1;
			}
		}
		if (out) {
			if (k + tn >= cap) return -1;
			memcpy(out + k, t, tn);
		}
		k += tn;
	}
	if (s->p >= s->e) return -1;
	s->p++;
	if (out) out[k] = '\0';
	*n = k;
	return 0;
}

/* a non-negative integer (the record's numbers); -1 if not one or past 2^64 - 1 */
static int number(struct scan *s, uint64_t *v)
{
	ws(s);
	if (s->p >= s->e || *s->p < '0' || *s->p > '9') return -1;
	uint64_t x = 0;
	while (s->p < s->e && *s->p >= '0' && *s->p <= '9') {
		unsigned d = (unsigned)(*s->p++ - '0');
		if (x > (UINT64_MAX - d) / 10) return -1;
		x = x * 10 + d;
	}
	if (s->p < s->e && (*s->p == '.' || *s->p == 'e' || *s->p == 'E')) return -1;
	*v = x;
	return 0;
}

static int word(struct scan *s, const char *w)
{
	ws(s);
	size_t n = strlen(w);
	if ((size_t)(s->e - s->p) < n || memcmp(s->p, w, n)) return 0;
	s->p += n;
	return 1;
}

/* any value (a key this reader does not know: a later version's), nested at most depth deep */
static int skip(struct scan *s, int depth)
{
	size_t n;
	ws(s);
	if (s->p >= s->e || depth > 16) return -1;
	char c = *s->p;
	if (c == '"') return string(s, NULL, 0, &n);
	if (word(s, "true") || word(s, "false") || word(s, "null")) return 0;
	if (c == '-' || (c >= '0' && c <= '9')) {
		s->p++;
		while (s->p < s->e && *s->p && strchr("0123456789.eE+-", *s->p)) s->p++;
		return 0;
	}
	if (c != '{' && c != '[') return -1;
	char close = c == '{' ? '}' : ']';
	s->p++;
	if (lit(s, close)) return 0;
	do {
		if (close == '}' && (string(s, NULL, 0, &n) || !lit(s, ':'))) return -1;
		if (skip(s, depth + 1)) return -1;
	} while (lit(s, ','));
	return lit(s, close) ? 0 : -1;
}

/* a string value that is text of ours (error, tail: malloc'd, cut to its limit) or null */
static int text(struct scan *s, char **out, int tail)
{
	free(*out);
	*out = NULL;
	if (word(s, "null")) return 0;
	ws(s);
	size_t cap = (size_t)(s->e - s->p) + 1, n;
	char *t = malloc(cap);
	if (!t) return -1;
	if (string(s, t, cap, &n)) {
		free(t);
		return -1;
	}
	if (tail) {
		size_t from = lastrun_tail_start(t, n);
		memmove(t, t + from, n - from + 1);
	} else {
		t[lastrun_error_len(t, n)] = '\0';
	}
	if (!*t) free(t), t = NULL;
	*out = t;
	return 0;
}

enum { K_FIRE = 1, K_OUTCOME = 2, K_END = 4, K_INSTANCE = 8, K_ATTEMPT = 16, K_FAILS = 32, K_ALL = 63 };

static int member(struct scan *s, struct lastrun *r, unsigned *seen)
{
	char key[32];
	size_t n;
	uint64_t v;
	struct scan at = *s;
	if (string(s, key, sizeof key, &n)) {
		*s = at;                /* a longer key is none of ours: skip it */
		if (string(s, NULL, 0, &n)) return -1;
		key[0] = '\0';
	}
	if (!lit(s, ':')) return -1;
	if (!strcmp(key, "fireId")) {
		if (number(s, &r->fire_id)) return -1;
		*seen |= K_FIRE;
	} else if (!strcmp(key, "endMs")) {
		if (number(s, &r->end_ms)) return -1;
		*seen |= K_END;
	} else if (!strcmp(key, "attempt") || !strcmp(key, "consecutiveFailures")) {
		if (number(s, &v)) return -1;
		uint32_t x = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
		if (key[0] == 'a') r->attempt = x, *seen |= K_ATTEMPT;
		else r->failures = x, *seen |= K_FAILS;
	} else if (!strcmp(key, "lastSuccessMs")) {
		if (number(s, &r->ok_ms)) return -1;
	} else if (!strcmp(key, "outcome")) {
		if (string(s, r->outcome, sizeof r->outcome, &n)) return -1;
		*seen |= K_OUTCOME;
	} else if (!strcmp(key, "instance")) {
		if (string(s, r->instance, sizeof r->instance, &n)) return -1;
		*seen |= K_INSTANCE;
	} else if (!strcmp(key, "source")) {
		if (string(s, r->source, sizeof r->source, &n)) return -1;
	} else if (!strcmp(key, "error")) {
		if (text(s, &r->error, 0)) return -1;
	} else if (!strcmp(key, "tail")) {
		if (text(s, &r->tail, 1)) return -1;
	} else if (skip(s, 0)) {
		return -1;
	}
	return 0;
}

int lastrun_parse(const char *data, size_t len, struct lastrun *r)
{
	memset(r, 0, sizeof *r);
	if (!data || !len) return 0;
	if (len > LASTRUN_MAX) return -1;
	struct scan s = { data, data + len };
	unsigned seen = 0;
	int bad = !lit(&s, '{');
	if (!bad && !lit(&s, '}')) {
		do bad = member(&s, r, &seen);
		while (!bad && lit(&s, ','));
		bad = bad || !lit(&s, '}');
	}
	ws(&s);
	if (bad || s.p != s.e || (seen & K_ALL) != K_ALL) {
		lastrun_clear(r);
		memset(r, 0, sizeof *r);
		return -1;
	}
	return 1;
}

void lastrun_clear(struct lastrun *r)
{
	free(r->error);
	free(r->tail);
	r->error = r->tail = NULL;
}

int lastrun_is_failure(const char *o)
{
	return !strcmp(o, "failed") || !strcmp(o, "crashed") || !strcmp(o, "timeout") || !strcmp(o, "error");
}
