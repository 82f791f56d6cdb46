/* ipc/json.c: JSON writer. */
#include "ipc/json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void json_init(json_buf_t *b) { memset(b, 0, sizeof *b); }

void json_free(json_buf_t *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

static int reserve(json_buf_t *b, size_t n)
{
	if (b->oom) return -1;
	if (b->cap - b->len > n) return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap - b->len <= n) {
		if (cap > SIZE_MAX / 2) { b->oom = 1; return -1; }
		cap *= 2;
	}
	char *p = realloc(b->p, cap);
	if (!p) { b->oom = 1; return -1; }
	b->p = p;
	b->cap = cap;
	return 0;
}

static void put(json_buf_t *b, const char *s, size_t n)
{
	if (reserve(b, n)) return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void json_raw(json_buf_t *b, const char *s) { put(b, s, strlen(s)); }

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	uint32_t cp, min;
	if (c < 0x80) return 1;
	if ((c & 0xe0) == 0xc0) { len = 2; cp = c & 0x1f; min = 0x80; }
	else if ((c & 0xf0) == 0xe0) { len = 3; cp = c & 0x0f; min = 0x800; }
	else if ((c & 0xf8) == 0xf0) { len = 4; cp = c & 0x07; min = 0x10000; }
	else return 0;
	if (len > n) return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80) return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
	return len;
}

void json_str(json_buf_t *b, const char *s, size_t n, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s;
	char esc[8];
	put(b, "\"", 1);
	size_t i = 0;
	while (i < n) {
		/* a run of plain ASCII goes in one copy (a byte at a time was most of a history line's
		 * cost, bench/pool) */
		size_t run = i;
		while (run < n && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\' &&
		       !((flags & JSON_GSON) && (p[run] == '<' || p[run] == '>' || p[run] == '&' || p[run] == '=' ||
		                                 p[run] == '\'')))
			run++;
		if (run > i) {
			put(b, (const char *)p + i, run - i);
			i = run;
			continue;
		}
		unsigned c = p[i];
		const char *e = NULL;
		switch (c) {
		case '"': e = "\\\""; break;
		case '\\': e = "\\\\"; break;
		case '\n': e = "\\n"; break;
		case '\r': e = "\\r"; break;
		case '\t': e = "\\t"; break;
		case '\b': e = "\\b"; break;
		case '\f': e = "\\f"; break;
		default: break;
		}
		if (e) {
			put(b, e, 2);
			i++;
			continue;
		}
		if (c < 0x20 || ((flags & JSON_GSON) && (c == '<' || c == '>' || c == '&' || c == '=' || c == '\''))) {
			snprintf(esc, sizeof esc, "\\u%04x", c);
			put(b, esc, 6);
			i++;
			continue;
		}
		if (c < 0x80) {
			put(b, (const char *)p + i, 1);
			i++;
			continue;
		}
		size_t l = utf8_len(p + i, n - i);
		if (!l) {
			snprintf(esc, sizeof esc, "\\u%04x", c);   /* invalid byte: keep the output valid */
			put(b, esc, 6);
			i++;
			continue;
		}
		/* U+2028 and U+2029 (E2 80 A8/A9): Gson escapes them */
		if ((flags & JSON_GSON) && l == 3 && c == 0xe2 && p[i + 1] == 0x80 && (p[i + 2] == 0xa8 || p[i + 2] == 0xa9)) {
			put(b, p[i + 2] == 0xa8 ? "\\u2028" : "\\u2029", 6);
		} else {
			put(b, (const char *)p + i, l);
		}
		i += l;
	}
	put(b, "\"", 1);
}

size_t json_escape(char *out, size_t cap, const char *s, size_t n, size_t *used)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0;
	while (i < n) {
		unsigned c = p[i];
		char e = 0;
		switch (c) {
		case '"': e = '"'; break;
		case '\\': e = '\\'; break;
		case '\n': e = 'n'; break;
		case '\r': e = 'r'; break;
		case '\t': e = 't'; break;
		case '\b': e = 'b'; break;
		case '\f': e = 'f'; break;
		default: break;
		}
		size_t l = c >= 0x20 && c < 0x80 ? 1 : c >= 0x80 ? utf8_len(p + i, n - i) : 0;
		if (e) {
			if (cap - o < 2) break;
			out[o++] = '\\';
			out[o++] = e;
			i++;
		} else if (!l) {   /* a control character, or an invalid byte (kept valid, as json_str) */
			if (cap - o < 6) break;
			memcpy(out + o, "\\u00", 4);
			out[o + 4] = hex[c >> 4];
			out[o + 5] = hex[c & 15];
			o += 6;
			i++;
		} else {
			if (cap - o < l) break;
			memcpy(out + o, p + i, l);
			o += l;
			i += l;
		}
	}
	if (used) *used = i;
	return o;
}

void json_cstr(json_buf_t *b, const char *s, unsigned flags)
{
	if (!s) json_raw(b, "null");
	else json_str(b, s, strlen(s), flags);
}

/* digits by hand: snprintf's format parsing was a good part of a history record's cost */
void json_u64(json_buf_t *b, uint64_t v)
{
	char t[24];
	size_t i = sizeof t;
	do t[--i] = (char)('0' + v % 10); while (v /= 10);
	put(b, t + i, sizeof t - i);
}

void json_i64(json_buf_t *b, int64_t v)
{
	if (v < 0) {
		put(b, "-", 1);
		json_u64(b, (uint64_t)0 - (uint64_t)v);   /* INT64_MIN too */
		return;
	}
	json_u64(b, (uint64_t)v);
}

void json_key(json_buf_t *b, const char *key, int first)
{
	if (!first) put(b, ",", 1);
	json_str(b, key, strlen(key), JSON_PLAIN);
	put(b, ":", 1);
}
