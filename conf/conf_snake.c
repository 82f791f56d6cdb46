/* conf/conf_snake.c: YAML written the way SnakeYAML (1.33 to 2.x) writes it, so that a config
 * node from ejob is byte for byte what ElasticJob would have written for the same job.
 *
 * These are facts about SnakeYAML's Emitter, Serializer, Resolver and SafeRepresenter (read in
 * its source, rewritten here in C): the state it keeps (column, whether the last character was
 * whitespace or indentation, the indent stack), how it analyzes a scalar to choose plain, single
 * quoted, double quoted or literal, when it writes a tag, how it splits long scalars at 80
 * columns, when a key is "simple", and the implicit types of its Resolver that force quotes
 * ('true', '10', '2020-01-01'). Java counts columns in UTF-16 units, so the text is handled as
 * UTF-16 here too.
 *
 * One deliberate difference: a multi-line string that holds U+0085 (NEL) is written double
 * quoted, because every YAML reader (SnakeYAML's and libyaml's) turns a NEL inside a literal
 * block into a line feed, and the value would not survive a round trip.
 */
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf_int.h"
#include "conf/conf_snake_int.h"


/* ---- output ------------------------------------------------------------------------------ */

void conf_out_init(conf_out_t *o)
{
	memset(o, 0, sizeof *o);
	o->indent = -1;
	o->whitespace = true;
	o->indention = true;
}

void conf_out_fini(conf_out_t *o)
{
	conf_resolver_free(&o->res);
}

void conf_out_bytes(conf_out_t *o, const char *s, size_t n)
{
	if (o->oom) return;
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 256;
		while (cap < o->len + n + 1) cap *= 2;
		char *b = realloc(o->buf, cap);
		if (!b) {
			o->oom = true;
			return;
		}
		o->buf = b;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

void snake_out_str(conf_out_t *o, const char *s)
{
	conf_out_bytes(o, s, strlen(s));
}

/* UTF-16 units t[b..e) as UTF-8 */
void snake_out_u16(conf_out_t *o, const u16_t *u, size_t b, size_t e)
{
	char tmp[256];
	size_t k = 0;
	for (size_t i = b; i < e; i++) {
		uint32_t c = u->t[i];
		if (c >= 0xd800 && c <= 0xdbff && i + 1 < e && u->t[i + 1] >= 0xdc00 && u->t[i + 1] <= 0xdfff) {
			c = 0x10000 + ((c - 0xd800) << 10) + (u->t[i + 1] - 0xdc00);
			i++;
		}
		if (k + 4 > sizeof tmp) {
			conf_out_bytes(o, tmp, k);
			k = 0;
		}
		k += conf_utf8_encode(c, tmp + k);
	}
	conf_out_bytes(o, tmp, k);
}

static int to_u16(const char *s, size_t n, u16_t *u)
{
	u->t = malloc((n + 1) * sizeof *u->t);
	u->n = 0;
	if (!u->t) return -1;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		i += conf_utf8_decode(s + i, n - i, &cp);
		if (cp >= 0x10000) {
			cp -= 0x10000;
			u->t[u->n++] = (uint16_t)(0xd800 + (cp >> 10));
			u->t[u->n++] = (uint16_t)(0xdc00 + (cp & 0x3ff));
		} else {
			u->t[u->n++] = (uint16_t)cp;
		}
	}
	return 0;
}

/* ---- the emitter's primitives (Emitter.writeIndicator, writeIndent, ...) ----------------- */

void snake_line_break(conf_out_t *o, uint16_t br)
{
	o->whitespace = true;
	o->indention = true;
	o->column = 0;
	if (br == 0) {
		snake_out_str(o, "\n");
	} else {
		u16_t u = { &br, 1 };
		snake_out_u16(o, &u, 0, 1);
	}
}

static void w_whitespace(conf_out_t *o, int n)
{
	if (n <= 0) return;
	o->whitespace = true;
	for (int i = 0; i < n; i++) snake_out_str(o, " ");
	o->column += n;
}

void snake_indent(conf_out_t *o)
{
	int indent = o->indent >= 0 ? o->indent : 0;
	if (!o->indention || o->column > indent || (o->column == indent && !o->whitespace))
		snake_line_break(o, 0);
	w_whitespace(o, indent - o->column);
}

/* indicator: ASCII, or a prepared tag (its UTF-16 length is passed in cols) */
static void w_indicator_n(conf_out_t *o, const char *ind, int cols, bool need_ws, bool ws,
                          bool indentation)
{
	if (!o->whitespace && need_ws) {
		o->column++;
		snake_out_str(o, " ");
	}
	o->whitespace = ws;
	o->indention = o->indention && indentation;
	o->column += cols;
	o->open_ended = false;
	snake_out_str(o, ind);
}

void snake_indicator(conf_out_t *o, const char *ind, bool need_ws, bool ws, bool indentation)
{
	w_indicator_n(o, ind, (int)strlen(ind), need_ws, ws, indentation);
}

static void increase_indent(conf_out_t *o, bool flow, bool indentless)
{
	if (o->nindents < (int)(sizeof o->indents / sizeof *o->indents)) o->indents[o->nindents] = o->indent;
	o->nindents++;
	if (o->indent < 0) o->indent = flow ? BEST_INDENT : 0;
	else if (!indentless) o->indent += BEST_INDENT;
}

static void pop_indent(conf_out_t *o)
{
	if (o->nindents == 0) return;
	o->nindents--;
	if (o->nindents < (int)(sizeof o->indents / sizeof *o->indents)) o->indent = o->indents[o->nindents];
}

/* ---- scalar analysis (Emitter.analyzeScalar) --------------------------------------------- */

typedef struct analysis {
	bool empty, multiline, flow_plain, block_plain, single, block;
} analysis_t;

bool snake_is_linebr(uint32_t c)
{
	return c == '\n' || c == 0x85 || c == 0x2028 || c == 0x2029;
}

static bool is_nul_bl_t(uint32_t c)
{
	return c == 0 || c == ' ' || c == '\t';
}

static bool is_nul_bl_t_linebr(uint32_t c)
{
	return is_nul_bl_t(c) || c == '\r' || snake_is_linebr(c);
}

static uint32_t cp_at(const u16_t *u, size_t i)
{
	uint32_t c = u->t[i];
	if (c >= 0xd800 && c <= 0xdbff && i + 1 < u->n && u->t[i + 1] >= 0xdc00 && u->t[i + 1] <= 0xdfff)
		return 0x10000 + ((c - 0xd800) << 10) + (u->t[i + 1] - 0xdc00);
	return c;
}

bool snake_printable(uint32_t c)
{
	return (c >= 0x20 && c <= 0x7e) || c == 0x9 || c == 0xa || c == 0xd || c == 0x85 ||
	       (c >= 0xa0 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) ||
	       (c >= 0x10000 && c <= 0x10ffff);
}

static analysis_t analyze(const u16_t *u)
{
	analysis_t a = { 0 };
	size_t n = u->n;
	if (n == 0) {
		a.empty = true;
		a.block_plain = true;
		a.single = true;
		return a;
	}
	bool block_ind = false, flow_ind = false, line_breaks = false, special = false;
	bool leading_zero = false;
	if (n > 1 && u->t[0] == '0') {
		leading_zero = true;
		for (size_t i = 1; i < n; i++)
			if (!((u->t[i] >= '0' && u->t[i] <= '9') || u->t[i] == '_')) leading_zero = false;
	}
	bool leading_space = false, leading_break = false, trailing_space = false;
	bool trailing_break = false, break_space = false, space_break = false;
	if (n >= 3 && ((u->t[0] == '-' && u->t[1] == '-' && u->t[2] == '-') ||
	               (u->t[0] == '.' && u->t[1] == '.' && u->t[2] == '.')))
		block_ind = flow_ind = true;
	bool preceded = true;
	bool followed = n == 1 || is_nul_bl_t_linebr(cp_at(u, 1));
	bool prev_space = false, prev_break = false;
	size_t index = 0;
	while (index < n) {
		uint32_t c = cp_at(u, index);
		if (index == 0) {
			if (c < 0x80 && c && strchr("#,[]{}&*!|>'\"%@`", (int)c)) flow_ind = block_ind = true;
			if (c == '?' || c == ':') {
				flow_ind = true;
				if (followed) block_ind = true;
			}
			if (c == '-' && followed) flow_ind = block_ind = true;
		} else {
			if (c < 0x80 && c && strchr(",?[]{}", (int)c)) flow_ind = true;
			if (c == ':') {
				flow_ind = true;
				if (followed) block_ind = true;
			}
			if (c == '#' && preceded) flow_ind = block_ind = true;
		}
		bool lb = snake_is_linebr(c);
		if (lb) line_breaks = true;
		if (!(c == '\n' || (c >= 0x20 && c <= 0x7e))) {
			if (!(c == 0x85 || (c >= 0xa0 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) ||
			      (c >= 0x10000 && c <= 0x10ffff)))
				special = true;
		}
		if (c == ' ') {
			if (index == 0) leading_space = true;
			if (index == n - 1) trailing_space = true;
			if (prev_break) break_space = true;
			prev_space = true;
			prev_break = false;
		} else if (lb) {
			if (index == 0) leading_break = true;
			if (index == n - 1) trailing_break = true;
			if (prev_space) space_break = true;
			prev_space = false;
			prev_break = true;
		} else {
			prev_space = prev_break = false;
		}
		index += c >= 0x10000 ? 2 : 1;
		preceded = is_nul_bl_t(c) || lb;
		followed = true;
		if (index + 1 < n) {
			size_t next = index + (cp_at(u, index) >= 0x10000 ? 2 : 1);
			if (next < n) followed = is_nul_bl_t(cp_at(u, next)) || lb;
		}
	}
	a.flow_plain = a.block_plain = a.single = a.block = true;
	if (leading_space || leading_break || trailing_space || trailing_break || leading_zero)
		a.flow_plain = a.block_plain = false;
	if (trailing_space) a.block = false;
	if (break_space) a.flow_plain = a.block_plain = a.single = false;
	if (space_break || special) a.flow_plain = a.block_plain = a.single = a.block = false;
	if (line_breaks) a.flow_plain = false;
	if (flow_ind) a.flow_plain = false;
	if (block_ind) a.block_plain = false;
	a.multiline = line_breaks;
	return a;
}

/* ---- Resolver: the implicit tag of a plain scalar ---------------------------------------- */

/* SnakeYAML's patterns (Java syntax with (?:...) written as (...); POSIX ERE agrees with Java on
 * whether a whole string matches them). limit: SnakeYAML only tries a pattern on values up to
 * that many UTF-16 units. */
static const struct resolver {
	const char *tag, *first, *re;
	size_t limit;
} resolvers[] = {
	{ YAML_PREFIX "bool", "yYnNtTfFoO",
	  "^(yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$", 10 },
	{ YAML_PREFIX "int", "-+0123456789",
	  "^([-+]?0b_*[0-1][0-1_]*|[-+]?0_*[0-7][0-7_]*|[-+]?(0|[1-9][0-9_]*)"
	  "|[-+]?0x_*[0-9a-fA-F][0-9a-fA-F_]*|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+)$", 1024 },
	{ YAML_PREFIX "float", "-+0123456789.",
	  "^([-+]?([0-9][0-9_]*)\\.[0-9_]*([eE][-+]?[0-9]+)?|[-+]?([0-9][0-9_]*)([eE][-+]?[0-9]+)"
	  "|[-+]?\\.[0-9_]+([eE][-+]?[0-9]+)?|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\\.[0-9_]*"
	  "|[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN))$", 1024 },
	{ YAML_PREFIX "merge", "<", "^(<<)$", 10 },
	{ YAML_PREFIX "null", "~nN", "^(~|null|Null|NULL| )$", 10 },
	{ YAML_PREFIX "timestamp", "0123456789",
	  "^([0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?"
	  "([Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](\\.[0-9]*)?([ \t]*(Z|[-+][0-9][0-9]?"
	  "(:[0-9][0-9])?))?)$", 50 },
	{ YAML_PREFIX "yaml", "!&*", "^(!|&|\\*)$", 10 },
};
/* then, whatever the first character: null (the same pattern) and empty */

void conf_resolver_free(conf_resolver_t *r)
{
	r->used = 0;
}

static regex_t shared_re[sizeof resolvers / sizeof *resolvers];
static unsigned char shared_ok[sizeof resolvers / sizeof *resolvers];
static pthread_once_t shared_once = PTHREAD_ONCE_INIT;

static void shared_compile(void)
{
	for (size_t i = 0; i < sizeof resolvers / sizeof *resolvers; i++)
		shared_ok[i] = regcomp(&shared_re[i], resolvers[i].re, REG_EXTENDED | REG_NOSUB) == 0;
}

static bool whole_match(conf_resolver_t *r, size_t i, const char *s, size_t n)
{
	pthread_once(&shared_once, shared_compile);
	r->used = 1;
	if (!shared_ok[i]) return false;
	char buf[1100];
	if (n >= sizeof buf) return false;   /* longer than every resolver's limit */
	memcpy(buf, s, n);
	buf[n] = '\0';
	return regexec(&shared_re[i], buf, 0, NULL, 0) == 0;
}

static size_t u16_len(const char *s, size_t n)
{
	size_t l = 0;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		i += conf_utf8_decode(s + i, n - i, &cp);
		l += cp >= 0x10000 ? 2 : 1;
	}
	return l;
}

#define NULL_RESOLVER 4   /* index of the null pattern in resolvers[] */

const char *conf_snake_resolve(conf_resolver_t *r, const char *s, size_t n)
{
	size_t l16 = u16_len(s, n);
	if (memchr(s, '\0', n)) return TAG_STR;
	if (n > 0 && (unsigned char)s[0] < 0x80) {
		for (size_t i = 0; i < sizeof resolvers / sizeof *resolvers; i++) {
			const struct resolver *rs = &resolvers[i];
			if (!strchr(rs->first, s[0]) || l16 > rs->limit) continue;
			if (whole_match(r, i, s, n)) return rs->tag;
		}
	}
	if (n == 0) return YAML_PREFIX "null";
	if (l16 <= resolvers[NULL_RESOLVER].limit &&
	    whole_match(r, NULL_RESOLVER, s, n))
		return YAML_PREFIX "null";
	return TAG_STR;
}

/* ---- tags (Emitter.prepareTag) ------------------------------------------------------------ */

static char *prepare_tag(const char *tag)
{
	size_t l = strlen(tag);
	char *p = malloc(l + 4);
	if (!p) return NULL;
	if (strcmp(tag, "!") == 0) {
		strcpy(p, "!");
	} else if (strncmp(tag, YAML_PREFIX, strlen(YAML_PREFIX)) == 0 && l > strlen(YAML_PREFIX)) {
		p[0] = p[1] = '!';
		strcpy(p + 2, tag + strlen(YAML_PREFIX));
	} else if (tag[0] == '!') {
		strcpy(p, tag);
	} else {
		p[0] = '!';
		p[1] = '<';
		memcpy(p + 2, tag, l);
		p[l + 2] = '>';
		p[l + 3] = '\0';
	}
	return p;
}

/* ---- scalar events ------------------------------------------------------------------------ */

typedef struct sev {
	u16_t u;
	const char *tag;        /* full tag */
	bool imp_plain;         /* ImplicitTuple: tag may be left out when plain ... */
	bool imp_quoted;        /* ... and when quoted */
	int style;              /* requested: ST_PLAIN or ST_LITERAL */
	bool nel;               /* holds U+0085 (see the top of this file) */
} sev_t;

static int choose_style(const conf_out_t *o, const sev_t *e, const analysis_t *a)
{
	bool plain = e->style == ST_PLAIN;
	if (plain && e->imp_plain) {
		if (!(o->simple_key_ctx && (a->empty || a->multiline)) && a->block_plain) return ST_PLAIN;
	}
	if (e->style == ST_LITERAL && !o->simple_key_ctx && a->block && !e->nel) return ST_LITERAL;
	if (plain && a->single && !(o->simple_key_ctx && a->multiline)) return ST_SINGLE;
	return ST_DOUBLE;
}

/* Emitter.expectNode + processTag + expectScalar + processScalar for one scalar. */
static void emit_scalar(conf_out_t *o, const sev_t *e)
{
	analysis_t a = analyze(&e->u);
	int style = choose_style(o, e, &a);
	bool omit = style == ST_PLAIN ? e->imp_plain : e->imp_quoted;
	if (!omit) {
		char *t = prepare_tag(e->tag);
		if (!t) {
			o->oom = true;
			return;
		}
		u16_t tu;
		if (to_u16(t, strlen(t), &tu) < 0) {
			free(t);
			o->oom = true;
			return;
		}
		w_indicator_n(o, t, (int)tu.n, true, false, false);
		free(tu.t);
		free(t);
	}
	increase_indent(o, true, false);
	bool split = !o->simple_key_ctx;
	switch (style) {
	case ST_PLAIN: snake_write_plain(o, &e->u, split); break;
	case ST_SINGLE: snake_write_single(o, &e->u, split); break;
	case ST_DOUBLE: snake_write_double(o, &e->u, split); break;
	default: snake_write_literal(o, &e->u); break;
	}
	pop_indent(o);
}

/* A java.lang.String as SafeRepresenter.RepresentString makes it. *b64 receives the base64
 * buffer when the string is not printable (caller frees). */
static int string_event(conf_out_t *o, const char *s, size_t n, sev_t *e)
{
	memset(e, 0, sizeof *e);
	if (to_u16(s, n, &e->u) < 0) return -1;
	bool print = true;
	for (size_t i = 0; i < e->u.n; i++) {
		uint32_t c = cp_at(&e->u, i);
		if (!snake_printable(c)) print = false;
		if (c == 0x85) e->nel = true;
		if (c >= 0x10000) i++;
	}
	e->style = ST_PLAIN;
	if (!print) {
		conf_out_t b64;
		conf_out_init(&b64);
		conf_base64_encode(&b64, (const unsigned char *)s, n);
		free(e->u.t);
		if (b64.oom || to_u16(b64.buf ? b64.buf : "", b64.len, &e->u) < 0) {
			free(b64.buf);
			return -1;
		}
		free(b64.buf);
		e->tag = YAML_PREFIX "binary";
		e->imp_plain = e->imp_quoted = false;
		e->style = ST_LITERAL;
		e->nel = false;
		return 0;
	}
	e->tag = TAG_STR;
	e->imp_plain = strcmp(conf_snake_resolve(&o->res, s, n), TAG_STR) == 0;
	e->imp_quoted = true;
	for (size_t i = 0; i < e->u.n; i++)
		if (snake_is_linebr(e->u.t[i])) e->style = ST_LITERAL;
	return 0;
}

/* Emitter.checkSimpleKey for a scalar key ("!!str" counts: the Serializer always tags). */
static bool simple_key(const sev_t *e)
{
	analysis_t a = analyze(&e->u);
	char *t = prepare_tag(e->tag);
	size_t tl = t ? u16_len(t, strlen(t)) : 0;
	free(t);
	return tl + e->u.n < MAX_SIMPLE_KEY && !a.empty && !a.multiline;
}

static void set_ctx(conf_out_t *o, bool root, bool mapping, bool simple)
{
	o->root_ctx = root;
	o->mapping_ctx = mapping;
	o->simple_key_ctx = simple;
}

void conf_snake_string(conf_out_t *o, const char *s, size_t n)
{
	sev_t e;
	if (string_event(o, s, n, &e) < 0) {
		o->oom = true;
		return;
	}
	emit_scalar(o, &e);
	free(e.u.t);
}

void conf_snake_plain(conf_out_t *o, const char *s)
{
	sev_t e = { .tag = YAML_PREFIX "int", .imp_plain = true, .imp_quoted = false, .style = ST_PLAIN };
	if (to_u16(s, strlen(s), &e.u) < 0) {
		o->oom = true;
		return;
	}
	emit_scalar(o, &e);
	free(e.u.t);
}

/* ---- collections ---------------------------------------------------------------------------- */

static bool tag_omitted(const char *tag, const char *dflt)
{
	return !tag || strcmp(tag, dflt) == 0;
}

static void write_tag(conf_out_t *o, const char *tag)
{
	char *t = prepare_tag(tag);
	if (!t) {
		o->oom = true;
		return;
	}
	w_indicator_n(o, t, (int)u16_len(t, strlen(t)), true, false, false);
	free(t);
}

void conf_snake_map_begin(conf_out_t *o)
{
	increase_indent(o, false, false);
}

/* A key of a block mapping, then ':'; leaves the context for the value. */
static void map_key_event(conf_out_t *o, const sev_t *e)
{
	snake_indent(o);
	if (simple_key(e)) {
		set_ctx(o, false, true, true);
		emit_scalar(o, e);
		snake_indicator(o, ":", false, false, false);
	} else {
		snake_indicator(o, "?", true, false, true);
		set_ctx(o, false, true, false);
		emit_scalar(o, e);
		snake_indent(o);
		snake_indicator(o, ":", true, false, true);
	}
	set_ctx(o, false, true, false);
}

void conf_snake_map_key(conf_out_t *o, const char *key, size_t n)
{
	sev_t e;
	if (string_event(o, key, n, &e) < 0) {
		o->oom = true;
		return;
	}
	map_key_event(o, &e);
	free(e.u.t);
}

void conf_snake_map_end(conf_out_t *o)
{
	pop_indent(o);
}

void conf_snake_seq_begin(conf_out_t *o)
{
	bool indentless = o->mapping_ctx && !o->indention;
	increase_indent(o, false, indentless);
}

void conf_snake_seq_item(conf_out_t *o)
{
	snake_indent(o);
	snake_indicator(o, "-", true, false, true);
	set_ctx(o, false, false, false);
}

void conf_snake_seq_end(conf_out_t *o)
{
	pop_indent(o);
}

void conf_snake_end(conf_out_t *o)
{
	/* ExpectDocumentEnd: the root mapping has ended, the indent is back to none */
	snake_indent(o);
}

/* A generic scalar: its tag decides, as the Serializer decides for a node. */
static int value_event(conf_out_t *o, const conf_value_t *v, sev_t *e)
{
	memset(e, 0, sizeof *e);
	const char *tag = v->tag ? v->tag : TAG_STR;
	if (strcmp(tag, TAG_STR) == 0) return string_event(o, v->str, strlen(v->str), e);
	if (to_u16(v->str, strlen(v->str), &e->u) < 0) return -1;
	e->tag = tag;
	e->imp_plain = strcmp(conf_snake_resolve(&o->res, v->str, strlen(v->str)), tag) == 0;
	e->imp_quoted = false;
	/* byte[] is represented as literal base64 (SafeRepresenter.RepresentByteArray) */
	e->style = strcmp(tag, YAML_PREFIX "binary") == 0 && e->u.n ? ST_LITERAL : ST_PLAIN;
	return 0;
}

void conf_snake_value(conf_out_t *o, const conf_value_t *v)
{
	if (v->kind == CONF_VALUE_SCALAR) {
		sev_t e;
		if (value_event(o, v, &e) < 0) {
			o->oom = true;
			return;
		}
		emit_scalar(o, &e);
		free(e.u.t);
		return;
	}
	bool map = v->kind == CONF_VALUE_MAP;
	if (!tag_omitted(v->tag, map ? YAML_PREFIX "map" : YAML_PREFIX "seq")) write_tag(o, v->tag);
	if (v->n == 0) {
		/* an empty collection is written in flow style */
		snake_indicator(o, map ? "{" : "[", true, true, false);
		snake_indicator(o, map ? "}" : "]", false, false, false);
		return;
	}
	if (map) {
		conf_snake_map_begin(o);
		for (size_t i = 0; i < v->n; i++) {
			sev_t e;
			if (value_event(o, &v->items[2 * i], &e) < 0) {
				o->oom = true;
				return;
			}
			map_key_event(o, &e);
			free(e.u.t);
			conf_snake_value(o, &v->items[2 * i + 1]);
		}
		conf_snake_map_end(o);
	} else {
		conf_snake_seq_begin(o);
		for (size_t i = 0; i < v->n; i++) {
			conf_snake_seq_item(o);
			conf_snake_value(o, &v->items[i]);
		}
		conf_snake_seq_end(o);
	}
}
