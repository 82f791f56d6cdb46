/* conf/conf_scalar.c: typed values out of tree nodes, with one error each when they are wrong.
 * Shared by the file loader and the config-node parser, so both say the same things. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "conf/conf_int.h"

#define BINARY_TAG "tag:yaml.org,2002:binary"
#define NULL_TAG   "tag:yaml.org,2002:null"

void conf_err(conf_ctx_t *cx, const conf_tnode_t *at, const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	conf_diag_vadd_level(cx->diags, cx->level, cx->file, at ? at->line : 1, at ? at->col : 1, key, fmt, ap);
	va_end(ap);
}

void conf_warn(conf_ctx_t *cx, const conf_tnode_t *at, const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	conf_diag_vadd_level(cx->diags, CONF_DIAG_WARN, cx->file, at ? at->line : 1, at ? at->col : 1, key, fmt, ap);
	va_end(ap);
}

void conf_err_in(conf_ctx_t *cx, const conf_tnode_t *at, size_t off, const char *key,
                 const char *fmt, ...)
{
	unsigned line = at->line, col = at->col;
	if (at->exact && off <= at->len) {
		/* count characters, as libyaml does */
		unsigned chars = 0;
		for (size_t i = 0; i < off; i++)
			if (((unsigned char)at->str[i] & 0xc0) != 0x80) chars++;
		line = at->vline;
		col = at->vcol + chars;
	}
	va_list ap;
	va_start(ap, fmt);
	conf_diag_vadd_level(cx->diags, cx->level, cx->file, line, col, key, fmt, ap);
	va_end(ap);
}

bool conf_visit(conf_ctx_t *cx, const conf_tnode_t *at)
{
	if (++cx->visits <= CONF_MAX_VISITS) return true;
	if (!cx->over_budget) {
		cx->over_budget = true;
		conf_err(cx, at, "", "aliases expand to more than %zu nodes; write the values out or "
		         "use fewer aliases", CONF_MAX_VISITS);
	}
	return false;
}

bool conf_is_null(const conf_tnode_t *n)
{
	if (n->kind != CONF_TN_SCALAR) return false;
	if (n->tag) return strcmp(n->tag, NULL_TAG) == 0;
	if (n->style != YAML_PLAIN_SCALAR_STYLE) return false;
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };
	for (size_t i = 0; i < sizeof nulls / sizeof *nulls; i++)
		if (n->len == strlen(nulls[i]) && memcmp(n->str, nulls[i], n->len) == 0) return true;
	return false;
}

const char *conf_kind_name(const conf_tnode_t *n)
{
	switch (n->kind) {
	case CONF_TN_SEQ: return "a list";
	case CONF_TN_MAP: return "a mapping";
	default: return conf_is_null(n) ? "nothing" : "a scalar";
	}
}

/* Appends src to out[o..] with truncation; returns the new length. */
static size_t put(char *out, size_t outsz, size_t o, const char *src)
{
	size_t l = strlen(src);
	if (o + l >= outsz) l = o < outsz - 1 ? outsz - 1 - o : 0;
	memcpy(out + o, src, l);
	out[o + l] = '\0';
	return o + l;
}

void conf_path(char *out, size_t outsz, const char *parent, const char *key)
{
	char seg[96];
	size_t kl = strlen(key), s = 0;
	/* a long or odd key is shortened and escaped: it is only a label */
	for (size_t i = 0; i < kl && s < 80; i++) {
		unsigned char c = (unsigned char)key[i];
		if (c < 0x20 || c == 0x7f) {
			if (s + 4 >= 80) break;
			static const char hex[] = "0123456789abcdef";
			seg[s++] = '\\';
			seg[s++] = 'x';
			seg[s++] = hex[c >> 4];
			seg[s++] = hex[c & 15];
		} else {
			seg[s++] = (char)c;
		}
	}
	if (s < kl) {
		/* don't cut a UTF-8 sequence */
		while (s > 0 && ((unsigned char)seg[s - 1] & 0xc0) == 0x80) s--;
		if (s > 0 && ((unsigned char)seg[s - 1] & 0xc0) == 0xc0) s--;
		memcpy(seg + s, "...", 3);
		s += 3;
	}
	seg[s] = '\0';
	char tmp[512];
	size_t o = 0;
	tmp[0] = '\0';
	if (parent && *parent) {
		o = put(tmp, sizeof tmp, o, parent);
		o = put(tmp, sizeof tmp, o, ".");
	}
	put(tmp, sizeof tmp, o, seg);
	put(out, outsz, 0, tmp);
}

void conf_path_index(char *out, size_t outsz, const char *parent, size_t i)
{
	char tmp[512], idx[32];
	conf_fmt(idx, sizeof idx, "[%zu]", i);
	size_t o = put(tmp, sizeof tmp, 0, parent ? parent : "");
	put(tmp, sizeof tmp, o, idx);
	put(out, outsz, 0, tmp);
}

/* ---- UTF-8 ------------------------------------------------------------------------------ */

size_t conf_utf8_decode(const char *s, size_t n, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	if (n == 0) {
		*cp = 0;
		return 1;
	}
	unsigned char c = u[0];
	size_t w = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
	if (w > n || (w > 1 && c >= 0xf8)) w = 1;
	uint32_t v = w == 1 ? c : w == 2 ? c & 0x1f : w == 3 ? c & 0x0f : c & 0x07;
	for (size_t i = 1; i < w; i++) {
		if ((u[i] & 0xc0) != 0x80) {
			*cp = 0xfffd;
			return i;
		}
		v = (v << 6) | (u[i] & 0x3f);
	}
	*cp = (w == 1 && c >= 0x80) ? 0xfffd : v;
	return w;
}

size_t conf_utf8_encode(uint32_t cp, char *out)
{
	unsigned char *u = (unsigned char *)out;
	if (cp < 0x80) {
		u[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		u[0] = (unsigned char)(0xc0 | (cp >> 6));
		u[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		u[0] = (unsigned char)(0xe0 | (cp >> 12));
		u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	u[0] = (unsigned char)(0xf0 | (cp >> 18));
	u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
	u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
	u[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Strict: what Java's String(bytes, UTF_8) would turn back into the same bytes. */
static bool utf8_valid(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		size_t w;
		uint32_t min;
		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			w = 2;
			min = 0x80;
		} else if (c >= 0xe0 && c <= 0xef) {
			w = 3;
			min = 0x800;
		} else if (c >= 0xf0 && c <= 0xf4) {
			w = 4;
			min = 0x10000;
		} else {
			return false;
		}
		if (i + w > n) return false;
		uint32_t cp;
		if (conf_utf8_decode(s + i, n - i, &cp) != w) return false;
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
		i += w;
	}
	return true;
}

/* ---- base64 ----------------------------------------------------------------------------- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z') return c - 'A';
	if (c >= 'a' && c <= 'z') return c - 'a' + 26;
	if (c >= '0' && c <= '9') return c - '0' + 52;
	if (c == '+') return 62;
	if (c == '/') return 63;
	return -1;
}

char *conf_base64_decode(conf_arena_t *a, const char *s, size_t n, size_t *outlen)
{
	char *out = conf_arena_alloc(a, n / 4 * 3 + 4);
	if (!out) return NULL;
	size_t o = 0, q = 0, pad = 0;
	uint32_t acc = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
		if (c == '=') {
			pad++;
			continue;
		}
		int v = b64_val(c);
		if (v < 0 || pad) return NULL;
		acc = (acc << 6) | (uint32_t)v;
		if (++q == 4) {
			out[o++] = (char)(acc >> 16);
			out[o++] = (char)(acc >> 8);
			out[o++] = (char)acc;
			q = 0;
			acc = 0;
		}
	}
	if (q == 1 || (q == 0 && pad) || (q && pad && q + pad != 4)) return NULL;
	if (q == 2) out[o++] = (char)(acc >> 4);
	if (q == 3) {
		out[o++] = (char)(acc >> 10);
		out[o++] = (char)(acc >> 2);
	}
	out[o] = '\0';
	*outlen = o;
	return out;
}

void conf_base64_encode(conf_out_t *o, const unsigned char *s, size_t n)
{
	char q[4];
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16;
		if (i + 1 < n) v |= (uint32_t)s[i + 1] << 8;
		if (i + 2 < n) v |= s[i + 2];
		q[0] = b64[v >> 18];
		q[1] = b64[(v >> 12) & 63];
		q[2] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		q[3] = i + 2 < n ? b64[v & 63] : '=';
		conf_out_bytes(o, q, 4);
	}
}

/* ---- typed getters ---------------------------------------------------------------------- */

int conf_get_str(conf_ctx_t *cx, const conf_tnode_t *n, const conf_tnode_t *at, const char *key,
                 const char **s)
{
	if (!at) at = n;
	if (n->kind != CONF_TN_SCALAR) {
		conf_err(cx, at, key, "must be a string (got %s)", conf_kind_name(n));
		return -1;
	}
	const char *v = n->str;
	size_t len = n->len;
	if (n->tag && strcmp(n->tag, BINARY_TAG) == 0) {
		/* SnakeYAML writes a string it cannot print as !!binary base64 of its UTF-8 */
		v = conf_base64_decode(cx->out, n->str, n->len, &len);
		if (!v) {
			if (conf_arena_exhausted(cx->out)) return -1;
			conf_err(cx, at, key, "a !!binary value must be base64");
			return -1;
		}
		if (!utf8_valid(v, len)) {
			conf_err(cx, at, key, "a !!binary string must decode to UTF-8 text");
			return -1;
		}
	}
	if (memchr(v, '\0', len)) {
		conf_err(cx, at, key, "must not contain NUL characters");
		return -1;
	}
	/* In the file, refuse what SnakeYAML cannot print: it would reach ZooKeeper as !!binary,
	 * which ElasticJob's tools read as bytes, not as a string. */
	for (size_t i = 0; i < len && !cx->node_mode;) {
		uint32_t cp;
		i += conf_utf8_decode(v + i, len - i, &cp);
		if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || (cp >= 0x7f && cp < 0xa0 && cp != 0x85) ||
		    cp == 0xfffe || cp == 0xffff) {
			char q[128];
			conf_quote(q, sizeof q, v, len);
			conf_err(cx, at, key, "must not contain control characters other than tab and "
			         "newline (got %s)", q);
			return -1;
		}
	}
	*s = v == n->str ? conf_arena_strndup(cx->out, v, len) : v;
	return *s ? 0 : -1;
}

int conf_get_int(conf_ctx_t *cx, const conf_tnode_t *n, const conf_tnode_t *at, const char *key,
                 int64_t min, int64_t max, const char *allowed, int *v)
{
	if (!at) at = n;
	char q[128];
	char range[64];
	if (allowed) {
		conf_fmt(range, sizeof range, "%s", allowed);
	} else {
		conf_fmt(range, sizeof range, "an integer %lld-%lld", (long long)min, (long long)max);
	}
	if (n->kind != CONF_TN_SCALAR || conf_is_null(n)) {
		conf_err(cx, at, key, "must be %s (got %s)", range, conf_kind_name(n));
		return -1;
	}
	const char *s = n->str;
	size_t i = 0, len = n->len;
	bool neg = false;
	if (i < len && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
	int64_t val = 0;
	bool digits = i < len, overflow = false;
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9') {
			digits = false;
			break;
		}
		if (val > (INT64_MAX - 9) / 10) overflow = true;
		else val = val * 10 + (s[i] - '0');
	}
	if (neg) val = -val;
	if (!digits || overflow || val < min || val > max) {
		conf_quote(q, sizeof q, n->str, n->len);
		conf_err(cx, at, key, "must be %s (got %s)", range, q);
		return -1;
	}
	*v = (int)val;
	return 0;
}

int conf_get_bool(conf_ctx_t *cx, const conf_tnode_t *n, const conf_tnode_t *at, const char *key,
                  bool *v)
{
	if (!at) at = n;
	/* YAML 1.1 booleans, the set SnakeYAML (and so ElasticJob) accepts */
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON" };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF" };
	if (n->kind == CONF_TN_SCALAR && !conf_is_null(n)) {
		for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
			if (n->len == strlen(yes[i]) && memcmp(n->str, yes[i], n->len) == 0) {
				*v = true;
				return 0;
			}
			if (n->len == strlen(no[i]) && memcmp(n->str, no[i], n->len) == 0) {
				*v = false;
				return 0;
			}
		}
	}
	char q[128];
	if (n->kind == CONF_TN_SCALAR && !conf_is_null(n)) conf_quote(q, sizeof q, n->str, n->len);
	else conf_fmt(q, sizeof q, "%s", conf_kind_name(n));
	conf_err(cx, at, key, "must be true or false (got %s)", q);
	return -1;
}

int conf_get_enum(conf_ctx_t *cx, const conf_tnode_t *n, const conf_tnode_t *at, const char *key,
                  const char *const *names, size_t nnames, int *idx)
{
	if (!at) at = n;
	char list[512], q[128];
	if (n->kind == CONF_TN_SCALAR && !conf_is_null(n)) {
		for (size_t i = 0; i < nnames; i++) {
			if (n->len == strlen(names[i]) && memcmp(n->str, names[i], n->len) == 0) {
				*idx = (int)i;
				return 0;
			}
		}
	}
	conf_join_names(list, sizeof list, names, nnames);
	if (n->kind != CONF_TN_SCALAR || conf_is_null(n)) {
		conf_err(cx, at, key, "must be one of %s (got %s)", list, conf_kind_name(n));
		return -1;
	}
	conf_quote(q, sizeof q, n->str, n->len);
	const char *s = memchr(n->str, '\0', n->len) ? NULL : conf_suggest(n->str, names, nnames);
	if (s) conf_err(cx, at, key, "must be one of %s (got %s); did you mean '%s'?", list, q, s);
	else conf_err(cx, at, key, "must be one of %s (got %s)", list, q);
	return -1;
}

const char *conf_check_zk_name(const char *s, size_t len)
{
	if (len == 0) return "is empty";
	if (len > CONF_MAX_NAME_BYTES) return "is longer than 255 bytes";
	if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
		return "is '.' or '..', which ZooKeeper does not allow";
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t w = conf_utf8_decode(s + i, len - i, &cp);
		if (cp == '/') return "contains '/'";
		if (cp <= 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0xa0) || cp == 0x1680 ||
		    (cp >= 0x2000 && cp <= 0x200b) || cp == 0x2028 || cp == 0x2029 || cp == 0x202f ||
		    cp == 0x205f || cp == 0x3000 || cp == 0xfeff)
			return "contains whitespace or a control character";
		/* ZooKeeper refuses these code points in paths */
		if ((cp >= 0xe000 && cp <= 0xf8ff) || (cp >= 0xfff0 && cp <= 0xffff) || cp == 0xfffd)
			return "contains a character ZooKeeper does not allow in paths";
		i += w;
	}
	return NULL;
}

void conf_map_keys(conf_ctx_t *cx, const conf_tnode_t *map, const char *path,
                   const char *const *names, size_t n, size_t nlisted,
                   const conf_tnode_t **keys, const conf_tnode_t **vals)
{
	for (size_t i = 0; i < n; i++) keys[i] = vals[i] = NULL;
	for (size_t p = 0; p < map->n; p++) {
		const conf_tnode_t *k = map->kids[2 * p], *v = map->kids[2 * p + 1];
		if (!conf_visit(cx, k)) return;
		size_t i;
		for (i = 0; i < n; i++)
			if (k->len == strlen(names[i]) && memcmp(k->str, names[i], k->len) == 0) break;
		if (i < n) {
			keys[i] = k;
			vals[i] = v;
			continue;
		}
		char kp[512], list[1024];
		conf_path(kp, sizeof kp, path, memchr(k->str, '\0', k->len) ? "?" : k->str);
		const char *s = memchr(k->str, '\0', k->len) ? NULL : conf_suggest(k->str, names, nlisted);
		if (cx->node_mode) {
			/* ElasticJob's YamlEngine.unmarshal (SnakeYAML loadAs) fails on a key its
			 * JobConfigurationPOJO does not have, so its instances cannot load the node */
			static const char *const own[] = { "type", "timeoutSeconds", "maxRetries", "dependsOn" };
			for (size_t o = 0; o < sizeof own / sizeof *own; o++)
				if (k->len == strlen(own[o]) && !memcmp(k->str, own[o], k->len)) {
					conf_err(cx, k, kp, "ejob's own key; in a config node it is the prop ejob.%s (props: {ejob.%s: "
					         "...}): ElasticJob cannot load a node with a key its JobConfigurationPOJO does not have",
					         own[o], own[o]);
					goto next;
				}
			if (s) {
				conf_err(cx, k, kp, "unknown key; did you mean '%s'? (ElasticJob cannot load a node with a key its "
				         "JobConfigurationPOJO does not have, and neither does ejob)", s);
			} else {
				conf_join_names(list, sizeof list, names, nlisted);
				conf_err(cx, k, kp, "unknown key (ElasticJob cannot load a node with a key its JobConfigurationPOJO "
				         "does not have, and neither does ejob); the keys are %s", list);
			}
			continue;
		}
		if (s) {
			conf_err(cx, k, kp, "unknown key; did you mean '%s'?", s);
		} else {
			conf_join_names(list, sizeof list, names, nlisted);
			conf_err(cx, k, kp, "unknown key; allowed here: %s", list);
		}
	next:;
	}
}
