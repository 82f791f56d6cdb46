/* t/lib/tjson.c: a small JSON reader for tests (t/lib/tjson.h): enough for ejobctl's --json and
 * the supervisor's answers. */
#include "t/lib/tjson.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *jp;

static void jws(void) { while (*jp && isspace((unsigned char)*jp)) jp++; }

static char *jstr_parse(void)
{
	if (*jp != '"') return NULL;
	jp++;
	size_t cap = strlen(jp) + 1, n = 0;
	char *o = malloc(cap);
	while (*jp && *jp != '"') {
		if (*jp == '\\') {
			jp++;
			char c = *jp++;
			if (c == 'n') o[n++] = '\n';
			else if (c == 't') o[n++] = '\t';
			else if (c == 'r') o[n++] = '\r';
			else if (c == 'u') {
				unsigned x = 0;
				sscanf(jp, "%4x", &x);
				jp += 4;
				o[n++] = (char)x;
			} else o[n++] = c;
		} else o[n++] = *jp++;
	}
	if (*jp != '"') {
		free(o);
		return NULL;
	}
	jp++;
	o[n] = 0;
	return o;
}

static void **kept;
static size_t nkept;

void tjson_keep(void *p)
{
	void **k = p ? realloc(kept, (nkept + 1) * sizeof *kept) : NULL;
	if (!k) return;
	kept = k;
	kept[nkept++] = p;
}

static struct tjson *jparse(void)
{
	jws();
	struct tjson *v = calloc(1, sizeof *v);
	tjson_keep(v);
	if (*jp == '{' || *jp == '[') {
		int obj = *jp++ == '{';
		v->t = obj ? TJSON_OBJ : TJSON_ARR;
		jws();
		if (*jp == (obj ? '}' : ']')) {
			jp++;
			return v;
		}
		for (;;) {
			v->keys = realloc(v->keys, (size_t)(v->n + 1) * sizeof *v->keys);
			v->v = realloc(v->v, (size_t)(v->n + 1) * sizeof *v->v);
			v->keys[v->n] = NULL;
			if (obj) {
				jws();
				if (!(v->keys[v->n] = jstr_parse())) return NULL;
				jws();
				if (*jp++ != ':') return NULL;
			}
			if (!(v->v[v->n] = jparse())) return NULL;
			v->n++;
			jws();
			if (*jp == ',') {
				jp++;
				continue;
			}
			if (*jp++ != (obj ? '}' : ']')) return NULL;
			return v;
		}
	}
	if (*jp == '"') {
		v->t = TJSON_STR;
		return (v->s = jstr_parse()) ? v : NULL;
	}
	if (!strncmp(jp, "null", 4)) return jp += 4, v;
	if (!strncmp(jp, "true", 4)) return v->t = TJSON_BOOL, v->b = 1, jp += 4, v;
	if (!strncmp(jp, "false", 5)) return v->t = TJSON_BOOL, jp += 5, v;
	char *e;
	v->num = strtoll(jp, &e, 10);
	if (e == jp) return NULL;
	jp = e;
	v->t = TJSON_NUM;
	return v;
}

struct tjson *tjson_doc(const char *text)
{
	if (!text) return NULL;
	jp = text;
	struct tjson *v = jparse();
	jws();
	return v && !*jp ? v : NULL;
}

const struct tjson *tjson_get(const struct tjson *v, const char *path)
{
	if (!v || !*path) return v;
	const char *dot = strchr(path, '.');
	size_t seg = dot ? (size_t)(dot - path) : strlen(path);
	const char *eq = memchr(path, '=', seg);
	if (v->t == TJSON_ARR && eq) {
		char key[64];
		snprintf(key, sizeof key, "%.*s", (int)(eq - path), path);
		const char *val = eq + 1;
		for (size_t len = strlen(val);; len--) {
			if (val[len] == '.' || val[len] == 0) {
				for (int i = 0; i < v->n; i++) {
					const struct tjson *m = tjson_get(v->v[i], key);
					if (m && m->t == TJSON_STR && strlen(m->s) == len && !strncmp(m->s, val, len)) {
						const struct tjson *r = tjson_get(v->v[i], val[len] ? val + len + 1 : "");
						if (r) return r;
					}
				}
			}
			if (!len) return NULL;
		}
	}
	const char *rest = dot ? dot + 1 : "";
	if (v->t == TJSON_ARR && isdigit((unsigned char)*path)) {
		int i = atoi(path);
		return i < v->n ? tjson_get(v->v[i], rest) : NULL;
	}
	if (v->t == TJSON_OBJ)
		for (int i = 0; i < v->n; i++)
			if (strlen(v->keys[i]) == seg && !strncmp(v->keys[i], path, seg)) return tjson_get(v->v[i], rest);
	return NULL;
}

const char *tjson_text(const struct tjson *root, const char *path)
{
	static char bufs[8][4096];
	static int k;
	char *b = bufs[k++ % 8];
	const struct tjson *v = tjson_get(root, path);
	if (!v) return "(missing)";
	switch (v->t) {
	case TJSON_NULL: return "null";
	case TJSON_BOOL: return v->b ? "true" : "false";
	case TJSON_NUM: snprintf(b, 4096, "%lld", v->num); return b;
	case TJSON_STR: return v->s;
	case TJSON_ARR: {
		size_t n = (size_t)snprintf(b, 4096, "[");
		for (int i = 0; i < v->n && n < 4000; i++) {
			const struct tjson *e = v->v[i];
			n += (size_t)snprintf(b + n, 4096 - n, "%s", i ? "," : "");
			if (e->t == TJSON_STR) n += (size_t)snprintf(b + n, 4096 - n, "%s", e->s);
			else if (e->t == TJSON_NUM) n += (size_t)snprintf(b + n, 4096 - n, "%lld", e->num);
			else n += (size_t)snprintf(b + n, 4096 - n, "?");
		}
		snprintf(b + n, 4096 - n, "]");
		return b;
	}
	default: return "{...}";
	}
}
