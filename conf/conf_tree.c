/* conf/conf_tree.c: libyaml's events into a tree of conf_tnode_t, each node with its position.
 *
 * Built here, once for both formats: anchors and aliases (an alias is a pointer to the anchored
 * node, never a copy; an anchor counts only once its node is complete, so a node cannot contain
 * itself), merge keys ("<<: *defaults", YAML 1.1, as SnakeYAML reads them), duplicate keys, keys
 * that are not scalars, nesting depth, and one document per stream. libyaml's own errors are
 * reported with its position.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "conf/conf_int.h"

#define MERGE_TAG "tag:yaml.org,2002:merge"

struct frame {
	conf_tnode_t *node;
	conf_tnode_t **kids;
	size_t n, cap;
	char *anchor;             /* malloc'd; registered when the node ends */
};

struct anchor {
	const char *name;
	conf_tnode_t *node;
};

typedef struct builder {
	conf_ctx_t *cx;
	struct frame stack[CONF_MAX_DEPTH + 1];
	int depth;
	struct anchor *anchors;   /* open addressing, malloc'd */
	size_t nanchors, acap;
	size_t cur_idx, cur_off;  /* character index -> byte offset cursor */
	size_t base_off;          /* 3 after a UTF-8 BOM */
	bool utf8;                /* positions inside values can be mapped */
	conf_tnode_t *root;
	int docs;
	bool failed;
} builder_t;

/* ---- positions ---------------------------------------------------------------------------- */

/* Byte offset of character index idx (libyaml counts characters; CRLF is two). */
static size_t byte_off(builder_t *b, size_t idx)
{
	const conf_ctx_t *cx = b->cx;
	if (idx < b->cur_idx) {
		b->cur_idx = 0;
		b->cur_off = b->base_off;
	}
	while (b->cur_idx < idx && b->cur_off < cx->len) {
		unsigned char c = (unsigned char)cx->buf[b->cur_off];
		size_t w = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
		b->cur_off += w;
		b->cur_idx++;
	}
	return b->cur_off < cx->len ? b->cur_off : cx->len;
}

/* ---- path of the node being built, for messages ------------------------------------------ */

static void frame_path(const builder_t *b, int upto, char *out, size_t outsz)
{
	char tmp[512];
	out[0] = '\0';
	for (int i = 0; i < upto; i++) {
		const struct frame *f = &b->stack[i];
		if (f->node->kind == CONF_TN_SEQ) {
			conf_path_index(tmp, sizeof tmp, out, f->n);
		} else if (f->n % 2 == 1 && f->kids[f->n - 1]->kind == CONF_TN_SCALAR) {
			const conf_tnode_t *k = f->kids[f->n - 1];
			char seg[300];
			size_t l = k->len < 200 ? k->len : 200;
			memcpy(seg, k->str, l);
			seg[l] = '\0';
			conf_path(tmp, sizeof tmp, out, seg);
		} else {
			conf_path(tmp, sizeof tmp, out, "?");
		}
		memcpy(out, tmp, strlen(tmp) + 1 < outsz ? strlen(tmp) + 1 : outsz);
		out[outsz - 1] = '\0';
	}
}

static void err_at(builder_t *b, unsigned line, unsigned col, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void err_at(builder_t *b, unsigned line, unsigned col, const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	conf_diag_vadd(b->cx->diags, b->cx->file, line, col, key, fmt, ap);
	va_end(ap);
}

static void oom(builder_t *b, unsigned line, unsigned col)
{
	if (b->failed) return;
	err_at(b, line, col, "", "out of memory, or more than %zu MiB after expanding aliases",
	       CONF_ARENA_LIMIT >> 20);
	b->failed = true;
}

/* ---- anchors ------------------------------------------------------------------------------ */

static size_t hash_str(const char *s)
{
	size_t h = 1469598103934665603u;
	for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

static int anchor_put(builder_t *b, const char *name, conf_tnode_t *n)
{
	if ((b->nanchors + 1) * 2 > b->acap) {
		size_t cap = b->acap ? b->acap * 2 : 64;
		struct anchor *t = calloc(cap, sizeof *t);
		if (!t) return -1;
		for (size_t i = 0; i < b->acap; i++) {
			if (!b->anchors[i].name) continue;
			size_t h = hash_str(b->anchors[i].name) & (cap - 1);
			while (t[h].name) h = (h + 1) & (cap - 1);
			t[h] = b->anchors[i];
		}
		free(b->anchors);
		b->anchors = t;
		b->acap = cap;
	}
	size_t h = hash_str(name) & (b->acap - 1);
	while (b->anchors[h].name && strcmp(b->anchors[h].name, name) != 0) h = (h + 1) & (b->acap - 1);
	if (!b->anchors[h].name) {
		b->anchors[h].name = conf_arena_strdup(b->cx->tmp, name);
		if (!b->anchors[h].name) return -1;
		b->nanchors++;
	}
	b->anchors[h].node = n;   /* a redefined anchor: later aliases see the new node */
	return 0;
}

static conf_tnode_t *anchor_get(const builder_t *b, const char *name)
{
	if (!b->acap) return NULL;
	size_t h = hash_str(name) & (b->acap - 1);
	while (b->anchors[h].name) {
		if (strcmp(b->anchors[h].name, name) == 0) return b->anchors[h].node;
		h = (h + 1) & (b->acap - 1);
	}
	return NULL;
}

/* ---- building ----------------------------------------------------------------------------- */

static int add_kid(builder_t *b, conf_tnode_t *n)
{
	if (b->depth == 0) {
		b->root = n;
		return 0;
	}
	struct frame *f = &b->stack[b->depth - 1];
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 8;
		conf_tnode_t **k = realloc(f->kids, cap * sizeof *k);
		if (!k) return -1;
		f->kids = k;
		f->cap = cap;
	}
	f->kids[f->n++] = n;
	return 0;
}

static conf_tnode_t *new_node(builder_t *b, int kind, const yaml_mark_t *m, const yaml_char_t *tag)
{
	conf_tnode_t *n = conf_arena_alloc(b->cx->tmp, sizeof *n);
	if (!n) return NULL;
	n->kind = (unsigned char)kind;
	n->line = n->vline = (unsigned)m->line + 1;
	n->col = n->vcol = (unsigned)m->column + 1;
	if (tag) {
		n->tag = conf_arena_strdup(b->cx->tmp, (const char *)tag);
		if (!n->tag) return NULL;
	}
	return n;
}

static int on_scalar(builder_t *b, const yaml_event_t *e)
{
	conf_tnode_t *n = new_node(b, CONF_TN_SCALAR, &e->start_mark, e->data.scalar.tag);
	if (!n) return -1;
	n->str = conf_arena_strndup(b->cx->tmp, (const char *)e->data.scalar.value, e->data.scalar.length);
	if (!n->str) return -1;
	n->size = 1;
	n->len = e->data.scalar.length;
	n->style = (unsigned char)e->data.scalar.style;
	/* exact: the value is the source text, so a column inside it is a column in the file */
	if (b->utf8 && !e->data.scalar.tag && !e->data.scalar.anchor &&
	    e->start_mark.line == e->end_mark.line) {
		size_t s = byte_off(b, e->start_mark.index), t = byte_off(b, e->end_mark.index);
		int q = n->style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
		        n->style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
		if (n->style == YAML_PLAIN_SCALAR_STYLE || q) {
			if (q && t - s >= 2) {
				s++;
				t--;
			}
			if (t >= s && t - s == n->len && memcmp(b->cx->buf + s, n->str, n->len) == 0) {
				n->exact = true;
				n->vcol = n->col + (unsigned)q;
			}
		}
	}
	if (e->data.scalar.anchor && anchor_put(b, (const char *)e->data.scalar.anchor, n) < 0) return -1;
	return add_kid(b, n);
}

static int on_start(builder_t *b, const yaml_event_t *e, int kind)
{
	const yaml_char_t *tag = kind == CONF_TN_SEQ ? e->data.sequence_start.tag : e->data.mapping_start.tag;
	const yaml_char_t *anchor = kind == CONF_TN_SEQ ? e->data.sequence_start.anchor
	                                                : e->data.mapping_start.anchor;
	if (b->depth >= CONF_MAX_DEPTH) {
		char path[512];
		frame_path(b, b->depth, path, sizeof path);
		err_at(b, (unsigned)e->start_mark.line + 1, (unsigned)e->start_mark.column + 1, path,
		       "nested more than %d levels deep; ejob's configuration needs far fewer",
		       CONF_MAX_DEPTH);
		b->failed = true;
		return 0;
	}
	conf_tnode_t *n = new_node(b, kind, &e->start_mark, tag);
	if (!n) return -1;
	struct frame *f = &b->stack[b->depth++];
	memset(f, 0, sizeof *f);
	f->node = n;
	if (anchor) {
		f->anchor = strdup((const char *)anchor);
		if (!f->anchor) return -1;
	}
	return 0;
}

struct keyref {
	const conf_tnode_t *k;
	size_t i;       /* pair index: for precedence and original order */
};

static int keyref_cmp(const void *pa, const void *pb)
{
	const struct keyref *a = pa, *b = pb;
	size_t l = a->k->len < b->k->len ? a->k->len : b->k->len;
	int c = memcmp(a->k->str, b->k->str, l);
	if (c) return c;
	if (a->k->len != b->k->len) return a->k->len < b->k->len ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

static int keyref_idx(const void *pa, const void *pb)
{
	const struct keyref *a = pa, *b = pb;
	return a->i < b->i ? -1 : a->i > b->i;
}

static bool is_merge_key(const conf_tnode_t *k)
{
	return k->kind == CONF_TN_SCALAR && k->style == YAML_PLAIN_SCALAR_STYLE && k->len == 2 &&
	       memcmp(k->str, "<<", 2) == 0 && (!k->tag || strcmp(k->tag, MERGE_TAG) == 0);
}

/* A finished mapping: drop non-scalar keys, report duplicates, then apply merge keys. */
static int finish_map(builder_t *b, struct frame *f)
{
	conf_ctx_t *cx = b->cx;
	size_t np = f->n / 2, keep = 0, nmerge = 0;
	char path[512], kpath[512];
	frame_path(b, b->depth - 1, path, sizeof path);
	conf_tnode_t **kv = f->kids;
	for (size_t i = 0; i < np; i++) {
		conf_tnode_t *k = kv[2 * i], *v = kv[2 * i + 1];
		if (k->kind != CONF_TN_SCALAR) {
			err_at(b, k->line, k->col, path, "a key must be a scalar (got %s)", conf_kind_name(k));
			continue;
		}
		if (is_merge_key(k)) nmerge++;
		kv[2 * keep] = k;
		kv[2 * keep + 1] = v;
		keep++;
	}
	np = keep;
	struct keyref *refs = NULL;
	if (np > 1) {
		refs = malloc(np * sizeof *refs);
		if (!refs) return -1;
		for (size_t i = 0; i < np; i++) refs[i] = (struct keyref){ kv[2 * i], i };
		qsort(refs, np, sizeof *refs, keyref_cmp);
		for (size_t i = 1; i < np; i++) {
			const conf_tnode_t *a = refs[i - 1].k, *k = refs[i].k;
			if (a->len != k->len || memcmp(a->str, k->str, k->len) != 0) continue;
			char seg[300];
			size_t l = k->len < 200 ? k->len : 200;
			memcpy(seg, k->str, l);
			seg[l] = '\0';
			conf_path(kpath, sizeof kpath, path, seg);
			/* refs with equal keys are sorted by position: report each later one */
			const conf_tnode_t *first = a;
			for (size_t j = i; j > 0 && refs[j - 1].k->len == k->len &&
			                   memcmp(refs[j - 1].k->str, k->str, k->len) == 0; j--)
				first = refs[j - 1].k;
			err_at(b, k->line, k->col, kpath, "duplicate key (first at line %u, column %u); "
			       "each key may appear once", first->line, first->col);
		}
		free(refs);
		refs = NULL;
	}
	conf_tnode_t *n = f->node;
	if (nmerge == 0) {
		n->n = np;
		n->kids = conf_arena_alloc(cx->tmp, (2 * np + 1) * sizeof *n->kids);
		if (!n->kids) return -1;
		if (np) memcpy(n->kids, kv, 2 * np * sizeof *kv);
		return 0;
	}
	/* Merge: own keys first, then each merged mapping's keys not already present; of two
	 * merged mappings the earlier wins (YAML 1.1 merge, as SnakeYAML applies it). */
	size_t total = 0;
	for (size_t i = 0; i < np; i++) {
		const conf_tnode_t *k = kv[2 * i], *v = kv[2 * i + 1];
		if (!is_merge_key(k)) {
			total++;
			continue;
		}
		if (v->kind == CONF_TN_MAP) {
			total += v->n;
			continue;
		}
		conf_path(kpath, sizeof kpath, path, "<<");
		if (v->kind == CONF_TN_SEQ) {
			for (size_t j = 0; j < v->n; j++) {
				if (v->kids[j]->kind == CONF_TN_MAP) {
					total += v->kids[j]->n;
				} else {
					err_at(b, v->kids[j]->line, v->kids[j]->col, kpath,
					       "a merge key takes a mapping or a list of mappings (got %s in the list)",
					       conf_kind_name(v->kids[j]));
				}
			}
		} else {
			err_at(b, v->line, v->col, kpath,
			       "a merge key takes a mapping or a list of mappings (got %s)", conf_kind_name(v));
		}
	}
	if (total > CONF_MAX_VISITS || !conf_visit(cx, n)) return b->failed = true, 0;
	cx->visits += total;
	refs = malloc((total + 1) * sizeof *refs);
	struct keyref *vals = malloc((total + 1) * sizeof *vals);
	if (!refs || !vals) {
		free(refs);
		free(vals);
		return -1;
	}
	size_t m = 0;
	for (size_t i = 0; i < np; i++)
		if (!is_merge_key(kv[2 * i])) {
			refs[m] = (struct keyref){ kv[2 * i], m };
			vals[m++] = (struct keyref){ kv[2 * i + 1], 0 };
		}
	for (size_t i = 0; i < np; i++) {
		const conf_tnode_t *v = kv[2 * i + 1];
		if (!is_merge_key(kv[2 * i])) continue;
		size_t ns = v->kind == CONF_TN_SEQ ? v->n : 1;
		for (size_t s = 0; s < ns; s++) {
			const conf_tnode_t *src = v->kind == CONF_TN_SEQ ? v->kids[s] : v;
			if (src->kind != CONF_TN_MAP) continue;
			for (size_t j = 0; j < src->n; j++) {
				refs[m] = (struct keyref){ src->kids[2 * j], m };
				vals[m++] = (struct keyref){ src->kids[2 * j + 1], 0 };
			}
		}
	}
	/* keep the first of each key (own keys come first, so they override) */
	qsort(refs, m, sizeof *refs, keyref_cmp);
	size_t u = 0;
	for (size_t i = 0; i < m; i++) {
		if (u && refs[u - 1].k->len == refs[i].k->len &&
		    memcmp(refs[u - 1].k->str, refs[i].k->str, refs[i].k->len) == 0)
			continue;
		refs[u++] = refs[i];
	}
	qsort(refs, u, sizeof *refs, keyref_idx);
	n->n = u;
	n->kids = conf_arena_alloc(cx->tmp, (2 * u + 1) * sizeof *n->kids);
	if (!n->kids) {
		free(refs);
		free(vals);
		return -1;
	}
	for (size_t i = 0; i < u; i++) {
		n->kids[2 * i] = (conf_tnode_t *)refs[i].k;
		n->kids[2 * i + 1] = (conf_tnode_t *)vals[refs[i].i].k;
	}
	free(refs);
	free(vals);
	return 0;
}

static int on_end(builder_t *b)
{
	struct frame *f = &b->stack[b->depth - 1];
	conf_tnode_t *n = f->node;
	int r = 0;
	if (n->kind == CONF_TN_MAP) {
		r = finish_map(b, f);
	} else {
		n->n = f->n;
		n->kids = conf_arena_alloc(b->cx->tmp, (f->n + 1) * sizeof *n->kids);
		if (!n->kids) r = -1;
		else if (f->n) memcpy(n->kids, f->kids, f->n * sizeof *f->kids);
	}
	/* its size with aliases expanded, so that an alias bomb is measured, not walked */
	if (r == 0) {
		size_t cnt = n->kind == CONF_TN_MAP ? 2 * n->n : n->n;
		n->size = 1;
		for (size_t i = 0; i < cnt; i++)
			n->size = n->kids[i]->size > SIZE_MAX - n->size ? SIZE_MAX : n->size + n->kids[i]->size;
	}
	if (r == 0 && f->anchor && anchor_put(b, f->anchor, n) < 0) r = -1;
	free(f->kids);
	free(f->anchor);
	f->kids = NULL;
	f->anchor = NULL;
	b->depth--;
	if (r < 0) return -1;
	return add_kid(b, n);
}

static void yaml_error(builder_t *b, const yaml_parser_t *p)
{
	const char *what = p->error == YAML_MEMORY_ERROR ? "out of memory" : "YAML syntax error";
	const char *problem = p->problem ? p->problem : "unknown error";
	if (p->error == YAML_READER_ERROR) {
		/* the reader knows a byte offset: count lines and characters up to it */
		unsigned line = 1, col = 1;
		size_t off = p->problem_offset < b->cx->len ? p->problem_offset : b->cx->len;
		for (size_t i = b->base_off; i < off; i++) {
			unsigned char c = (unsigned char)b->cx->buf[i];
			if (c == '\n') {
				line++;
				col = 1;
			} else if ((c & 0xc0) != 0x80) {
				col++;
			}
		}
		if (p->problem_value != -1)
			err_at(b, line, col, "", "%s: %s (byte 0x%02x); the file must be UTF-8 text",
			       what, problem, (unsigned)p->problem_value & 0xff);
		else
			err_at(b, line, col, "", "%s: %s; the file must be UTF-8 text", what, problem);
	} else if (p->context) {
		err_at(b, (unsigned)p->problem_mark.line + 1, (unsigned)p->problem_mark.column + 1, "",
		       "%s: %s (%s at line %u, column %u)", what, problem, p->context,
		       (unsigned)p->context_mark.line + 1, (unsigned)p->context_mark.column + 1);
	} else {
		err_at(b, (unsigned)p->problem_mark.line + 1, (unsigned)p->problem_mark.column + 1, "",
		       "%s: %s", what, problem);
	}
	b->failed = true;
}

conf_tnode_t *conf_tree_parse(conf_ctx_t *cx, bool *empty)
{
	builder_t b = { .cx = cx, .utf8 = true };
	yaml_parser_t p;
	*empty = false;
	const unsigned char *u = (const unsigned char *)cx->buf;
	if (cx->len >= 3 && u[0] == 0xef && u[1] == 0xbb && u[2] == 0xbf) b.base_off = 3;
	if (cx->len >= 2 && ((u[0] == 0xfe && u[1] == 0xff) || (u[0] == 0xff && u[1] == 0xfe)))
		b.utf8 = false;
	b.cur_off = b.base_off;
	if (!yaml_parser_initialize(&p)) {
		errno = ENOMEM;
		return NULL;
	}
	yaml_parser_set_input_string(&p, u, cx->len);
	bool done = false;
	while (!done && !b.failed) {
		yaml_event_t e;
		if (!yaml_parser_parse(&p, &e)) {
			yaml_error(&b, &p);
			break;
		}
		int r = 0;
		unsigned line = (unsigned)e.start_mark.line + 1, col = (unsigned)e.start_mark.column + 1;
		switch (e.type) {
		case YAML_DOCUMENT_START_EVENT:
			if (++b.docs > 1) {
				err_at(&b, line, col, "", "a second YAML document; the file must hold exactly one");
				b.failed = true;
			}
			break;
		case YAML_SCALAR_EVENT:
			r = on_scalar(&b, &e);
			break;
		case YAML_SEQUENCE_START_EVENT:
			r = on_start(&b, &e, CONF_TN_SEQ);
			break;
		case YAML_MAPPING_START_EVENT:
			r = on_start(&b, &e, CONF_TN_MAP);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			r = on_end(&b);
			break;
		case YAML_ALIAS_EVENT: {
			conf_tnode_t *n = anchor_get(&b, (const char *)e.data.alias.anchor);
			if (!n) {
				char q[128];
				conf_quote(q, sizeof q, (const char *)e.data.alias.anchor,
				           strlen((const char *)e.data.alias.anchor));
				err_at(&b, line, col, "", "alias *%s refers to no anchor defined before it", q);
				b.failed = true;
			} else {
				r = add_kid(&b, n);
			}
			break;
		}
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		if (r < 0) oom(&b, line, col);
		yaml_event_delete(&e);
	}
	yaml_parser_delete(&p);
	while (b.depth > 0) {
		struct frame *f = &b.stack[--b.depth];
		free(f->kids);
		free(f->anchor);
	}
	free(b.anchors);
	if (b.failed) return NULL;
	if (!b.root || (b.root->kind == CONF_TN_SCALAR && conf_is_null(b.root))) {
		*empty = true;
		return NULL;
	}
	return b.root;
}
