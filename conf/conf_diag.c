/* conf/conf_diag.c: the list of errors, and the pieces of their messages. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf_int.h"

struct conf_diags {
	conf_diag_t *v;
	size_t n, cap;
	size_t dropped;
	size_t errors;          /* CONF_DIAG_ERROR ones, kept or dropped */
};

conf_diags_t *conf_diags_new(void)
{
	return calloc(1, sizeof(conf_diags_t));
}

size_t conf_diags_count(const conf_diags_t *d)
{
	return d ? d->n : 0;
}

size_t conf_diags_dropped(const conf_diags_t *d)
{
	return d ? d->dropped : 0;
}

size_t conf_diags_errors(const conf_diags_t *d)
{
	return d ? d->errors : 0;
}

size_t conf_diags_total(const conf_diags_t *d)
{
	return d ? d->n + d->dropped : 0;
}

const conf_diag_t *conf_diags_get(const conf_diags_t *d, size_t i)
{
	return d && i < d->n ? &d->v[i] : NULL;
}

static void diag_clear(conf_diag_t *e)
{
	free((char *)e->file);
	free((char *)e->key);
	free((char *)e->msg);
	free((char *)e->text);
}

void conf_diags_free(conf_diags_t *d)
{
	if (!d) return;
	int saved = errno;
	for (size_t i = 0; i < d->n; i++) diag_clear(&d->v[i]);
	free(d->v);
	free(d);
	errno = saved;
}

void conf_diag_vadd(conf_diags_t *d, const char *file, unsigned line, unsigned column,
                    const char *key, const char *fmt, va_list ap)
{
	conf_diag_vadd_level(d, CONF_DIAG_ERROR, file, line, column, key, fmt, ap);
}

void conf_diag_vadd_level(conf_diags_t *d, conf_diag_level_t level, const char *file, unsigned line,
                          unsigned column, const char *key, const char *fmt, va_list ap)
{
	if (!d) return;
	int saved = errno;
	if (level == CONF_DIAG_ERROR) d->errors++;
	if (d->n >= CONF_MAX_DIAGS) goto drop;
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		conf_diag_t *v = realloc(d->v, cap * sizeof *v);
		if (!v) goto drop;
		d->v = v;
		d->cap = cap;
	}
	conf_diag_t e = { 0 };
	char *msg = NULL, *text = NULL;
	if (vasprintf(&msg, fmt, ap) < 0) msg = NULL;
	if (!key) key = "";
	const char *sep = *key ? ": " : "", *w = level == CONF_DIAG_WARN ? "warning: " : "";
	int r;
	if (line)
		r = asprintf(&text, "%s:%u:%u: %s%s%s%s", file, line, column, w, key, sep, msg ? msg : "");
	else
		r = asprintf(&text, "%s: %s%s%s%s", file, w, key, sep, msg ? msg : "");
	if (r < 0) text = NULL;
	e.file = strdup(file);
	e.key = strdup(key);
	e.msg = msg;
	e.text = text;
	e.line = line;
	e.column = column;
	e.level = level;
	if (!msg || !text || !e.file || !e.key) {
		diag_clear(&e);
		goto drop;
	}
	d->v[d->n++] = e;
	errno = saved;
	return;
drop:
	d->dropped++;
	errno = saved;
}

void conf_diag_add(conf_diags_t *d, const char *file, unsigned line, unsigned column,
                   const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	conf_diag_vadd(d, file, line, column, key, fmt, ap);
	va_end(ap);
}

void conf_diag_add_level(conf_diags_t *d, conf_diag_level_t level, const char *file, unsigned line, unsigned column,
                         const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	conf_diag_vadd_level(d, level, file, line, column, key, fmt, ap);
	va_end(ap);
}

/* Stable by position: errors come out in file order; position-less ones (overrides) first. */
void conf_diags_sort(conf_diags_t *d)
{
	if (!d) return;
	for (size_t i = 1; i < d->n; i++) {
		conf_diag_t e = d->v[i];
		size_t j = i;
		while (j > 0 && (d->v[j - 1].line > e.line ||
		                 (d->v[j - 1].line == e.line && d->v[j - 1].column > e.column))) {
			d->v[j] = d->v[j - 1];
			j--;
		}
		d->v[j] = e;
	}
}

void conf_fmt(char *out, size_t outsz, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vsnprintf(out, outsz, fmt, ap);
	va_end(ap);
	if (r < 0 || (size_t)r >= outsz) {
		fprintf(stderr, "conf_fmt: \"%s\" does not fit in %zu bytes\n", fmt, outsz);
		abort();
	}
}

void conf_quote(char *out, size_t outsz, const char *s, size_t n)
{
	size_t o = 0, shown = 0;
	if (outsz < 8) {
		if (outsz) out[0] = '\0';
		return;
	}
	out[o++] = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char tmp[8];
		size_t tl;
		if (shown >= 60) {
			/* cut at a character boundary */
			memcpy(tmp, "...", 3);
			tl = 3;
			if (o + tl + 2 <= outsz) {
				memcpy(out + o, tmp, tl);
				o += tl;
			}
			break;
		}
		if (c == '"' || c == '\\') {
			tmp[0] = '\\';
			tmp[1] = (char)c;
			tl = 2;
		} else if (c == '\n') {
			memcpy(tmp, "\\n", 2);
			tl = 2;
		} else if (c == '\t') {
			memcpy(tmp, "\\t", 2);
			tl = 2;
		} else if (c < 0x20 || c == 0x7f) {
			conf_fmt(tmp, sizeof tmp, "\\x%02x", c);
			tl = 4;
		} else if (c >= 0x80) {
			/* copy a whole UTF-8 sequence (libyaml checked it) */
			uint32_t cp;
			size_t w = conf_utf8_decode(s + i, n - i, &cp);
			if (cp < 0xa0 || cp == 0x2028 || cp == 0x2029 || cp == 0xfeff) {
				conf_fmt(tmp, sizeof tmp, "\\u%04x", (unsigned)(cp & 0xffff));
				tl = 6;
			} else {
				memcpy(tmp, s + i, w);
				tl = w;
			}
			i += w - 1;
		} else {
			tmp[0] = (char)c;
			tl = 1;
		}
		if (o + tl + 2 > outsz) break;
		memcpy(out + o, tmp, tl);
		o += tl;
		shown++;
	}
	out[o++] = '"';
	out[o] = '\0';
}

/* Case-insensitive Levenshtein distance, capped: strings longer than 64 are never close. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64) return SIZE_MAX;
	size_t row[65];
	for (size_t j = 0; j <= lb; j++) row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]) ? 0 : 1;
			size_t best = diag + cost;
			if (row[j] + 1 < best) best = row[j] + 1;
			if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *conf_suggest(const char *s, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t bestd = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		size_t d = distance(s, names[i]);
		if (d < bestd) {
			bestd = d;
			best = names[i];
		}
	}
	if (!best) return NULL;
	/* close: a third of the longer name, at least 2 edits (one for very short names) */
	size_t ls = strlen(s), lb = strlen(best);
	size_t longer = ls > lb ? ls : lb;
	size_t limit = longer / 3;
	if (limit < 2) limit = longer <= 3 ? 1 : 2;
	return bestd <= limit ? best : NULL;
}

void conf_join_names(char *out, size_t outsz, const char *const *names, size_t n)
{
	size_t o = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
		int r = snprintf(out + o, outsz - o, "%s%s", sep, names[i]);
		if (r < 0 || (size_t)r >= outsz - o) {
			/* cannot happen with our tables (outsz is sized for them); stay terminated */
			out[outsz - 1] = '\0';
			return;
		}
		o += (size_t)r;
	}
}
