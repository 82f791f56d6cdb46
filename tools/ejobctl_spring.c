/* tools/ejobctl_spring.c: Spring Boot configurations read into flat properties
 * (tools/ejobctl_spring.h). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "conf/conf.h"
#include "tools/ejobctl_spring.h"

#define MAX_DEPTH 64
#define MAX_NODES 1000000

/* ---- messages -------------------------------------------------------------------------------- */

void spring_msg(struct spring_msgs *m, int file, const char *name, unsigned line, const char *key, const char *fmt, ...)
{
	char *text = NULL, *all = NULL;
	va_list ap;
	va_start(ap, fmt);
	int r = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (r < 0) return;          /* out of memory: the message is lost, nothing else */
	char at[32] = "";
	if (line) snprintf(at, sizeof at, ":%u", line);
	r = asprintf(&all, "%s%s: %s%s%s", name, at, key && *key ? key : "", key && *key ? ": " : "", text);
	free(text);
	if (r < 0) return;
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		struct spring_msg *v = realloc(m->v, cap * sizeof *v);
		if (!v) {
			free(all);
			return;
		}
		m->v = v, m->cap = cap;
	}
	m->v[m->n] = (struct spring_msg){ file, line, m->n, all };
	m->n++;
}

static int msg_cmp(const void *a, const void *b)
{
	const struct spring_msg *x = a, *y = b;
	if (x->file != y->file) return x->file < y->file ? -1 : 1;
	if (x->line != y->line) return x->line < y->line ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void spring_msgs_sort(struct spring_msgs *m)
{
	if (m->n) qsort(m->v, m->n, sizeof *m->v, msg_cmp);
}

void spring_msgs_free(struct spring_msgs *m)
{
	for (size_t i = 0; i < m->n; i++) free(m->v[i].text);
	free(m->v);
	memset(m, 0, sizeof *m);
}

/* ---- properties -------------------------------------------------------------------------------- */

int spring_name_eq(const char *a, const char *b)
{
	for (;;) {
		while (*a == '-' || *a == '_') a++;
		while (*b == '-' || *b == '_') b++;
		if (!*a || !*b) return !*a && !*b;
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
		a++, b++;
	}
}

char *spring_path(const struct spring_prop *p, int from)
{
	size_t len = 1;
	for (int i = from; i < p->nseg; i++) len += strlen(p->seg[i]) + 1;
	char *s = malloc(len), *o = s;
	if (!s) return NULL;
	for (int i = from; i < p->nseg; i++) {
		if (i > from && p->seg[i][0] != '[') *o++ = '.';
		size_t l = strlen(p->seg[i]);
		memcpy(o, p->seg[i], l);
		o += l;
	}
	*o = 0;
	return s;
}

static void prop_free(struct spring_prop *p)
{
	for (int i = 0; i < p->nseg; i++) free(p->seg[i]);
	free(p->seg), free(p->value), free(p->written);
}

void spring_props_free(struct spring_props *p)
{
	for (size_t i = 0; i < p->n; i++) prop_free(&p->v[i]);
	free(p->v);
	memset(p, 0, sizeof *p);
}

/* a path being built: names, each malloc'd */
struct path {
	char **seg;
	int n, cap;
};

static int path_push(struct path *p, const char *s, size_t len)
{
	if (p->n == p->cap) {
		int cap = p->cap ? 2 * p->cap : 16;
		char **v = realloc(p->seg, (size_t)cap * sizeof *v);
		if (!v) return -1;
		p->seg = v, p->cap = cap;
	}
	if (!(p->seg[p->n] = strndup(s, len))) return -1;
	p->n++;
	return 0;
}

static void path_pop_to(struct path *p, int n)
{
	while (p->n > n) free(p->seg[--p->n]);
}

/* A key into names as Spring's ConfigurationPropertyName takes it: split at dots, "[...]" one
 * name (its text; "[0]" kept with its brackets when it is a number, a list index). */
static int path_push_key(struct path *p, const char *k, size_t len)
{
	size_t i = 0;
	while (i < len) {
		if (k[i] == '.') {
			i++;
			continue;
		}
		if (k[i] == '[') {
			const char *e = memchr(k + i, ']', len - i);
			size_t end = e ? (size_t)(e - k) : len;
			size_t a = i + 1, b = end;
			int digits = b > a;
			for (size_t x = a; x < b; x++) digits &= isdigit((unsigned char)k[x]) != 0;
			if (digits ? path_push(p, k + i, end - i + (e ? 1 : 0)) : b > a ? path_push(p, k + a, b - a) : 0) return -1;
			i = e ? end + 1 : len;
			continue;
		}
		size_t j = i;
		while (j < len && k[j] != '.' && k[j] != '[') j++;
		if (path_push(p, k + i, j - i)) return -1;
		i = j;
	}
	return 0;
}

static int props_add(struct spring_props *ps, const struct path *path, const char *value, size_t vlen,
                     const char *written, int file, const char *name, unsigned line)
{
	if (!path->n) return 0;
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 64;
		struct spring_prop *v = realloc(ps->v, cap * sizeof *v);
		if (!v) return -1;
		ps->v = v, ps->cap = cap;
	}
	struct spring_prop *p = &ps->v[ps->n];
	memset(p, 0, sizeof *p);
	p->file = file, p->name = name, p->line = line;
	if (!(p->seg = calloc((size_t)path->n, sizeof *p->seg))) return -1;
	for (int i = 0; i < path->n; i++)
		if (!(p->seg[p->nseg++] = strdup(path->seg[i]))) return prop_free(p), -1;
	if (value && !(p->value = strndup(value, vlen))) return prop_free(p), -1;
	if (written && !(p->written = strdup(written))) return prop_free(p), -1;
	ps->n++;
	return 0;
}

/* move every property of d to the end of ps (d is left empty) */
static int props_take(struct spring_props *ps, struct spring_props *d)
{
	if (ps->n + d->n > ps->cap) {
		size_t cap = ps->cap ? ps->cap : 64;
		while (cap < ps->n + d->n) cap *= 2;
		struct spring_prop *v = realloc(ps->v, cap * sizeof *v);
		if (!v) return -1;
		ps->v = v, ps->cap = cap;
	}
	if (d->n) memcpy(ps->v + ps->n, d->v, d->n * sizeof *d->v);
	ps->n += d->n;
	d->n = 0;
	return 0;
}

/* ---- YAML 1.1's plain scalars, as SnakeYAML resolves them ------------------------------------- */

static int yaml_null(const char *s)
{
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

/* 1 true, 0 false, -1 not a boolean */
static int yaml_bool(const char *s)
{
	static const char *const t[] = { "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON" };
	static const char *const f[] = { "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF" };
	for (size_t i = 0; i < 9; i++) {
		if (!strcmp(s, t[i])) return 1;
		if (!strcmp(s, f[i])) return 0;
	}
	return -1;
}

/* SnakeYAML's int: [-+]? 0b[01_]+ | 0[0-7_]+ | 0 | [1-9][0-9_]* | 0x[0-9a-fA-F_]+ |
 * [1-9][0-9_]*(:[0-5]?[0-9])+ (base 60). 1 and *v when s is one (and fits 64 bits). */
static int yaml_int(const char *s, long long *v)
{
	const char *p = s;
	int neg = 0;
	if (*p == '-' || *p == '+') neg = *p++ == '-';
	if (!*p) return 0;
	unsigned long long acc = 0;
	int base = 10, ndig = 0;
	if (p[0] == '0' && p[1] == 'b') base = 2, p += 2;
	else if (p[0] == '0' && p[1] == 'x') base = 16, p += 2;
	else if (p[0] == '0' && p[1]) base = 8, p += 1;
	else if (p[0] == '0') {
		*v = 0;
		return 1;
	}
	const char *colon = base == 10 ? strchr(p, ':') : NULL;
	if (colon) {                /* base 60: [1-9][0-9_]* then (:[0-5]?[0-9])+ */
		if (!isdigit((unsigned char)*p) || *p == '0') return 0;
		for (; *p && *p != ':'; p++) {
			if (*p == '_') continue;
			if (!isdigit((unsigned char)*p) || acc > UINT64_MAX / 60) return 0;
			acc = acc * 10 + (unsigned)(*p - '0');
		}
		while (*p == ':') {
			p++;
			unsigned d = 0;
			int n = 0;
			while (isdigit((unsigned char)*p) && n < 2) d = d * 10 + (unsigned)(*p++ - '0'), n++;
			if (!n || (n == 2 && d / 10 > 5) || d > 59 || acc > UINT64_MAX / 60) return 0;
			acc = acc * 60 + d;
		}
		if (*p) return 0;
	} else {
		if (base == 10 && *p == '0') return 0;
		for (; *p; p++) {
			if (*p == '_') continue;
			int d = isdigit((unsigned char)*p) ? *p - '0' : base == 16 && isxdigit((unsigned char)*p) ? tolower((unsigned char)*p) - 'a' + 10 : 99;
			if (d >= base) return 0;
			if (acc > (UINT64_MAX - (unsigned)d) / (unsigned)base) return 0;
			acc = acc * (unsigned)base + (unsigned)d;
			ndig++;
		}
		if (!ndig) return 0;
	}
	if (acc > (unsigned long long)INT64_MAX) return 0;
	*v = neg ? -(long long)acc : (long long)acc;
	return 1;
}

/* SnakeYAML's float (Double): [-+]?(\.[0-9]+|[0-9_]+(\.[0-9_]*)?)([eE][-+]?[0-9]+)? and friends */
static int yaml_float(const char *s)
{
	const char *p = s;
	if (*p == '-' || *p == '+') p++;
	if (!strcmp(p, ".inf") || !strcmp(p, ".Inf") || !strcmp(p, ".INF")) return 1;
	if (p == s && (!strcmp(p, ".nan") || !strcmp(p, ".NaN") || !strcmp(p, ".NAN"))) return 1;
	int digits = 0;
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p)) p++, digits++;
		if (!digits) return 0;
	} else {
		while (isdigit((unsigned char)*p) || *p == '_' || *p == ':') digits += isdigit((unsigned char)*p++) != 0;
		if (!digits) return 0;
		if (*p == '.') {
			p++;
			while (isdigit((unsigned char)*p) || *p == '_') p++;
		}
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '-' || *p == '+') p++;
		if (!isdigit((unsigned char)*p)) return 0;
		while (isdigit((unsigned char)*p)) p++;
	}
	return !*p;
}

/* ---- YAML ------------------------------------------------------------------------------------ */

struct yread {
	struct spring_props *ps;    /* where this document's properties go */
	struct spring_msgs *m;
	yaml_document_t *doc;
	int file;
	const char *name;
	size_t nodes, max_nodes;
	int failed;                 /* 1: not a configuration (said); -1: out of memory */
	struct path path;
};

static void yflat(struct yread *y, yaml_node_t *n, unsigned line, int depth);

/* the pairs of mapping n under the current path; skip: keys taken already (merges) */
static void ymap(struct yread *y, yaml_node_t *n, int depth, char ***taken, int *ntaken)
{
	yaml_node_pair_t *a = n->data.mapping.pairs.start, *e = n->data.mapping.pairs.top;
	for (yaml_node_pair_t *pr = a; pr < e && !y->failed; pr++) {
		yaml_node_t *k = yaml_document_get_node(y->doc, pr->key), *v = yaml_document_get_node(y->doc, pr->value);
		if (!k || !v) continue;
		if (k->type != YAML_SCALAR_NODE) {
			char *at = spring_path(&(struct spring_prop){ .seg = y->path.seg, .nseg = y->path.n }, 0);
			spring_msg(y->m, y->file, y->name, (unsigned)k->start_mark.line + 1, at ? at : "",
			           "a key that is not a string: Spring Boot cannot bind it; left out");
			free(at);
			continue;
		}
		const char *ks = (const char *)k->data.scalar.value;
		size_t kl = k->data.scalar.length;
		if (k->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && kl == 2 && !memcmp(ks, "<<", 2)) continue;
		int seen = 0;
		for (int i = 0; taken && i < *ntaken && !seen; i++) seen = strlen((*taken)[i]) == kl && !memcmp((*taken)[i], ks, kl);
		if (seen) continue;
		if (taken) {
			char **t = realloc(*taken, (size_t)(*ntaken + 1) * sizeof *t);
			if (!t || !(t[*ntaken] = strndup(ks, kl))) {
				if (t) *taken = t;
				y->failed = -1;
				return;
			}
			*taken = t, (*ntaken)++;
		}
		int at = y->path.n;
		if (path_push_key(&y->path, ks, kl)) {
			y->failed = -1;
			return;
		}
		yflat(y, v, (unsigned)k->start_mark.line + 1, depth + 1);
		path_pop_to(&y->path, at);
	}
}

static void yflat(struct yread *y, yaml_node_t *n, unsigned line, int depth)
{
	if (y->failed) return;
	if (++y->nodes > y->max_nodes || depth > MAX_DEPTH) {
		if (depth > MAX_DEPTH)
			spring_msg(y->m, y->file, y->name, line, "", "nested deeper than %d levels: not a configuration one can "
			           "import", MAX_DEPTH);
		else
			spring_msg(y->m, y->file, y->name, line, "", "more than %zu nodes (aliases counted each time they are "
			           "used): not a configuration one can import", y->max_nodes);
		y->failed = 1;
		return;
	}
	if (n->type == YAML_SCALAR_NODE) {
		const char *s = (const char *)n->data.scalar.value;
		size_t len = n->data.scalar.length;
		if (memchr(s, 0, len)) {
			char *at = spring_path(&(struct spring_prop){ .seg = y->path.seg, .nseg = y->path.n }, 0);
			spring_msg(y->m, y->file, y->name, line, at ? at : "", "a NUL byte in the value: left out");
			free(at);
			return;
		}
		int plain = n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		            (!n->tag || !strcmp((const char *)n->tag, YAML_DEFAULT_SCALAR_TAG));
		if (plain && yaml_null(s)) {
			if (props_add(y->ps, &y->path, NULL, 0, NULL, y->file, y->name, line)) y->failed = -1;
			return;
		}
		char buf[32];
		long long v;
		int b;
		const char *val = s;
		if (plain && (b = yaml_bool(s)) >= 0) val = b ? "true" : "false";
		else if (plain && yaml_int(s, &v)) snprintf(buf, sizeof buf, "%lld", v), val = buf;
		size_t vl = val == s ? len : strlen(val);
		if (props_add(y->ps, &y->path, val, vl, val != s && strcmp(val, s) ? s : NULL, y->file, y->name, line))
			y->failed = -1;
		else
			y->ps->v[y->ps->n - 1].yaml_float = plain && val == s && yaml_float(s);
		return;
	}
	if (n->type == YAML_SEQUENCE_NODE) {
		int i = 0;
		for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top && !y->failed; it++, i++) {
			yaml_node_t *c = yaml_document_get_node(y->doc, *it);
			if (!c) continue;
			char idx[24];
			int l = snprintf(idx, sizeof idx, "[%d]", i);
			int at = y->path.n;
			if (path_push(&y->path, idx, (size_t)l)) {
				y->failed = -1;
				return;
			}
			yflat(y, c, (unsigned)c->start_mark.line + 1, depth + 1);
			path_pop_to(&y->path, at);
		}
		return;
	}
	if (n->type != YAML_MAPPING_NODE) return;
	/* its own pairs, then what merge keys bring that it does not set itself (SnakeYAML: a
	 * mapping's own keys win; of several merged, the earlier) */
	char **taken = NULL;
	int ntaken = 0;
	ymap(y, n, depth, &taken, &ntaken);
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top && !y->failed; pr++) {
		yaml_node_t *k = yaml_document_get_node(y->doc, pr->key), *v = yaml_document_get_node(y->doc, pr->value);
		if (!k || !v || k->type != YAML_SCALAR_NODE || k->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
		    k->data.scalar.length != 2 || memcmp(k->data.scalar.value, "<<", 2))
			continue;
		if (++y->nodes > y->max_nodes) break;
		if (v->type == YAML_MAPPING_NODE) {
			ymap(y, v, depth + 1, &taken, &ntaken);
		} else if (v->type == YAML_SEQUENCE_NODE) {
			for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top && !y->failed; it++) {
				yaml_node_t *c = yaml_document_get_node(y->doc, *it);
				if (c && c->type == YAML_MAPPING_NODE) ymap(y, c, depth + 1, &taken, &ntaken);
			}
		}
	}
	for (int i = 0; i < ntaken; i++) free(taken[i]);
	free(taken);
}

/* the document's profile condition (spring.config.activate.on-profile, spring.profiles), or NULL */
static const struct spring_prop *doc_profile(const struct spring_props *d)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct spring_prop *p = &d->v[i];
		if (p->nseg >= 2 && spring_name_eq(p->seg[0], "spring") &&
		    ((p->nseg >= 4 && spring_name_eq(p->seg[1], "config") && spring_name_eq(p->seg[2], "activate") &&
		      spring_name_eq(p->seg[3], "on-profile")) ||
		     (spring_name_eq(p->seg[1], "profiles") && (p->nseg == 2 || p->seg[2][0] == '['))))
			return p;
	}
	return NULL;
}

static int read_yaml(struct spring_props *ps, struct spring_msgs *m, int file, const char *name, const char *buf,
                     size_t len)
{
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser)) return -1;
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	int r = 0, ndoc = 0;
	for (;;) {
		yaml_document_t doc;
		if (!yaml_parser_load(&parser, &doc)) {
			spring_msg(m, file, name, (unsigned)parser.problem_mark.line + 1, "", "YAML: %s%s%s: not a configuration "
			           "Spring Boot can read", parser.problem ? parser.problem : "error",
			           parser.context ? " " : "", parser.context ? parser.context : "");
			r = parser.error == YAML_MEMORY_ERROR ? -1 : 1;
			break;
		}
		yaml_node_t *root = yaml_document_get_root_node(&doc);
		if (!root) {
			yaml_document_delete(&doc);
			break;
		}
		ndoc++;
		unsigned line = (unsigned)root->start_mark.line + 1;
		if (root->type == YAML_SCALAR_NODE && root->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    yaml_null((const char *)root->data.scalar.value)) {
			yaml_document_delete(&doc);
			continue;
		}
		if (root->type != YAML_MAPPING_NODE) {
			spring_msg(m, file, name, line, "", "document %d is not a mapping of keys: not a Spring Boot configuration", ndoc);
			yaml_document_delete(&doc);
			r = 1;
			break;
		}
		struct spring_props d = { .max_nodes = ps->max_nodes };
		struct yread y = { .ps = &d, .m = m, .doc = &doc, .file = file, .name = name,
			           .max_nodes = ps->max_nodes ? ps->max_nodes : MAX_NODES };
		yflat(&y, root, line, 0);
		path_pop_to(&y.path, 0);
		free(y.path.seg);
		yaml_document_delete(&doc);
		const struct spring_prop *prof = y.failed ? NULL : doc_profile(&d);
		if (prof) {
			char *k = spring_path(prof, 0);
			spring_msg(m, file, name, prof->line, k ? k : "", "document %d applies to profile %s only: left out; to "
			           "import it, give its keys in a file of their own after this one (ejobctl import %s PROFILE.yml)",
			           ndoc, prof->value ? prof->value : "(none)", name);
			free(k);
		} else if (!y.failed && props_take(ps, &d)) {
			y.failed = -1;
		}
		spring_props_free(&d);
		if (y.failed) {
			r = y.failed;
			break;
		}
	}
	yaml_parser_delete(&parser);
	return r;
}

/* ---- .properties (java.util.Properties.load) ------------------------------------------------- */

/* unescape s[0..n) into out (at least n + 1 bytes): \t \n \r \f, \uXXXX as UTF-8, \x as x */
static size_t unescape(const char *s, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\\' || i + 1 == n) {
			out[o++] = s[i];
			continue;
		}
		char c = s[++i];
		if (c == 't') out[o++] = '\t';
		else if (c == 'n') out[o++] = '\n';
		else if (c == 'r') out[o++] = '\r';
		else if (c == 'f') out[o++] = '\f';
		else if (c == 'u' && i + 4 < n + 0 && isxdigit((unsigned char)s[i + 1]) && isxdigit((unsigned char)s[i + 2]) &&
		         isxdigit((unsigned char)s[i + 3]) && isxdigit((unsigned char)s[i + 4])) {
			unsigned cp = (unsigned)strtoul((char[]){ s[i + 1], s[i + 2], s[i + 3], s[i + 4], 0 }, NULL, 16);
			i += 4;
			/* a surrogate pair: \uD8xx\uDCxx */
			if (cp >= 0xD800 && cp < 0xDC00 && i + 6 < n && s[i + 1] == '\\' && s[i + 2] == 'u') {
				char h[5] = { s[i + 3], s[i + 4], s[i + 5], s[i + 6], 0 };
				unsigned lo = (unsigned)strtoul(h, NULL, 16);
				if (lo >= 0xDC00 && lo < 0xE000) cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00), i += 6;
			}
			if (cp >= 0xD800 && cp < 0xE000) cp = 0xFFFD;
			/* at most 4 bytes for the 6 read: fits in n + 1 */
			if (cp < 0x80) out[o++] = (char)cp;
			else if (cp < 0x800) out[o++] = (char)(0xC0 | cp >> 6), out[o++] = (char)(0x80 | (cp & 0x3F));
			else if (cp < 0x10000)
				out[o++] = (char)(0xE0 | cp >> 12), out[o++] = (char)(0x80 | (cp >> 6 & 0x3F)),
				out[o++] = (char)(0x80 | (cp & 0x3F));
			else
				out[o++] = (char)(0xF0 | cp >> 18), out[o++] = (char)(0x80 | (cp >> 12 & 0x3F)),
				out[o++] = (char)(0x80 | (cp >> 6 & 0x3F)), out[o++] = (char)(0x80 | (cp & 0x3F));
		} else {
			out[o++] = c;
		}
	}
	out[o] = 0;
	return o;
}

static int read_properties(struct spring_props *ps, struct spring_msgs *m, int file, const char *name, const char *buf,
                           size_t len)
{
	char *logical = malloc(len + 1), *key = malloc(len + 1), *val = malloc(len + 1);
	int r = 0;
	if (!logical || !key || !val) r = -1;
	unsigned lineno = 0;
	for (size_t i = 0; !r && i < len;) {
		/* one logical line: natural lines joined while one ends in an odd number of backslashes */
		size_t ll = 0;
		unsigned start = lineno + 1;
		int first = 1;
		for (;;) {
			size_t e = i;
			while (e < len && buf[e] != '\n' && buf[e] != '\r') e++;
			lineno++;
			size_t s = i;
			while (s < e && (buf[s] == ' ' || buf[s] == '\t' || buf[s] == '\f')) s++;
			if (first && (s == e || buf[s] == '#' || buf[s] == '!')) {   /* blank or a comment */
				i = e + (e < len && buf[e] == '\r' && e + 1 < len && buf[e + 1] == '\n' ? 2 : e < len ? 1 : 0);
				ll = 0;
				start = lineno + 1;
				if (i >= len) break;
				continue;
			}
			first = 0;
			size_t bs = 0;
			for (size_t x = e; x > s && buf[x - 1] == '\\'; x--) bs++;
			memcpy(logical + ll, buf + s, e - s - (bs & 1));
			ll += e - s - (bs & 1);
			i = e + (e < len && buf[e] == '\r' && e + 1 < len && buf[e + 1] == '\n' ? 2 : e < len ? 1 : 0);
			if (!(bs & 1) || i >= len) break;
		}
		if (!ll) continue;
		/* the key ends at the first unescaped '=', ':' or blank */
		size_t k = 0;
		while (k < ll && !((logical[k] == '=' || logical[k] == ':' || logical[k] == ' ' || logical[k] == '\t' ||
		                    logical[k] == '\f') && (k == 0 || logical[k - 1] != '\\' ||
		                                            (k >= 2 && logical[k - 2] == '\\'))))
			k++;
		size_t v = k;
		while (v < ll && (logical[v] == ' ' || logical[v] == '\t' || logical[v] == '\f')) v++;
		if (v < ll && (logical[v] == '=' || logical[v] == ':')) v++;
		while (v < ll && (logical[v] == ' ' || logical[v] == '\t' || logical[v] == '\f')) v++;
		size_t kl = unescape(logical, k, key), vl = unescape(logical + v, ll - v, val);
		if (memchr(key, 0, kl) || memchr(val, 0, vl)) {
			spring_msg(m, file, name, start, "", "a NUL character (\\u0000): left out");
			continue;
		}
		struct path p = { 0 };
		if (path_push_key(&p, key, kl) ||
		    props_add(ps, &p, vl ? val : NULL, vl, NULL, file, name, start))
			r = -1;
		path_pop_to(&p, 0);
		free(p.seg);
	}
	free(logical), free(key), free(val);
	return r;
}

int spring_read(struct spring_props *p, struct spring_msgs *m, int file, const char *name, const char *buf, size_t len,
                int properties)
{
	if (len > CONF_MAX_FILE_BYTES) {
		spring_msg(m, file, name, 0, "", "larger than %u bytes: not a configuration one can import", CONF_MAX_FILE_BYTES);
		return 1;
	}
	return properties ? read_properties(p, m, file, name, buf, len) : read_yaml(p, m, file, name, buf, len);
}
