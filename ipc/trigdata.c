/* ipc/trigdata.c: a trigger node's data (ipc/trigdata.h). */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/json.h"
#include "ipc/trigdata.h"

char *trigdata_make(const char *p)
{
	return trigdata_make_run(p ? p : "", 0, NULL);
}

char *trigdata_make_run(const char *p, uint64_t run, const char *root)
{
	json_buf_t b;
	json_init(&b);
	json_raw(&b, "{");
	int first = 1;
	if (p) {
		json_key(&b, "parameter", first);
		json_cstr(&b, p, JSON_PLAIN);
		first = 0;
	}
	if (run && root) {
		char r[24];
		snprintf(r, sizeof r, "%" PRIu64, run);
		json_key(&b, "workflowRun", first);
		json_cstr(&b, r, JSON_PLAIN);
		json_key(&b, "workflowRoot", 0);
		json_cstr(&b, root, JSON_PLAIN);
	}
	json_raw(&b, "}");
	if (b.oom) {
		json_free(&b);
		return NULL;
	}
	return b.p;
}

struct rd {
	const char *b, *s, *e;
	char *why;
	size_t whysz;
};

static int bad(struct rd *r, const char *what)
{
	snprintf(r->why, r->whysz, "%s at byte %td", what, r->s - r->b);
	return -1;
}

static void blank(struct rd *r)
{
	while (r->s < r->e && (*r->s == ' ' || *r->s == '\t' || *r->s == '\n' || *r->s == '\r')) r->s++;
}

static int hex4(const char *s, uint32_t *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0) return -1;
		*v = *v << 4 | (uint32_t)d;
	}
	return 0;
}

static size_t utf8(uint32_t c, char *o)
{
	if (c < 0x80) return o[0] = (char)c, 1;
	if (c < 0x800) return o[0] = (char)(0xc0 | c >> 6), o[1] = (char)(0x80 | (c & 0x3f)), 2;
	if (c < 0x10000)
		return o[0] = (char)(0xe0 | c >> 12), o[1] = (char)(0x80 | (c >> 6 & 0x3f)), o[2] = (char)(0x80 | (c & 0x3f)), 3;
	o[0] = (char)(0xf0 | c >> 18), o[1] = (char)(0x80 | (c >> 12 & 0x3f)), o[2] = (char)(0x80 | (c >> 6 & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* a JSON string at r->s (its opening quote): its bytes into *out (malloc'd, NUL-terminated; NULL
 * out: skipped). 0 or -1 (why set). */
static int string(struct rd *r, char **out, size_t *outlen)
{
	r->s++;
	size_t cap = (size_t)(r->e - r->s) + 1, n = 0;
	char *b = out ? malloc(cap) : NULL;
	if (out && !b) return snprintf(r->why, r->whysz, "out of memory"), -1;
	while (r->s < r->e && *r->s != '"') {
		char c = *r->s++, o[4];
		size_t k = 1;
		o[0] = c;
		if ((unsigned char)c < 0x20) {
			free(b);
			return bad(r, "a control character in a string");
		}
		if (c == '\\') {
			if (r->s >= r->e) break;
			char x = *r->s++;
			const char *m = strchr("\"\\/bfnrt", x);
			if (m && x) {
				o[0] = "\"\\/\b\f\n\r\t"[m - "\"\\/bfnrt"];
			} else if (x == 'u') {
				uint32_t u, lo;
				if (r->e - r->s < 4 || hex4(r->s, &u)) {
					free(b);
					return bad(r, "a bad \\u escape");
				}
				r->s += 4;
				if (u >= 0xd800 && u < 0xdc00 && r->e - r->s >= 6 && r->s[0] == '\\' && r->s[1] == 'u' &&
				    !hex4(r->s + 2, &lo) && lo >= 0xdc00 && lo < 0xe000) {
					u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
					r->s += 6;
				} else if (u >= 0xd800 && u < 0xe000) {
					u = 0xfffd;         /* a lone surrogate: the replacement character */
				}
				if (u == 0) {
					free(b);
					return bad(r, "\\u0000 (a NUL) in a string");
				}
				k = utf8(u, o);
			} else {
				free(b);
				return bad(r, "a bad escape");
			}
		}
		if (b) memcpy(b + n, o, k);
		n += k;
	}
	if (r->s >= r->e) {
		free(b);
		return bad(r, "an unterminated string");
	}
	r->s++;
	if (b) b[n] = 0, *out = b;
	if (outlen) *outlen = n;
	return 0;
}

/* a scalar that is not a string (number, true, false, null): skipped */
static int scalar(struct rd *r)
{
	const char *st = r->s;
	while (r->s < r->e && (strchr("+-.eE", *r->s) || (*r->s >= '0' && *r->s <= '9') || (*r->s >= 'a' && *r->s <= 'z')))
		r->s++;
	size_t n = (size_t)(r->s - st);
	if (n == 0) return bad(r, "a value that is not a string, number, true, false or null");
	if ((n == 4 && (!memcmp(st, "true", 4) || !memcmp(st, "null", 4))) || (n == 5 && !memcmp(st, "false", 5)))
		return 0;
	if (*st == '-' || (*st >= '0' && *st <= '9')) return 0;
	return bad(r, "a value that is not a string, number, true, false or null");
}

int trigdata_parse(const char *data, size_t len, char **param, char *why, size_t whysz)
{
	struct trigdata t;
	int rc = trigdata_parse_all(data, len, &t, why, whysz);
	*param = t.param;
	t.param = NULL;
	trigdata_free(&t);
	return rc;
}

void trigdata_free(struct trigdata *t)
{
	free(t->param);
	free(t->root);
	t->param = t->root = NULL;
	t->run = 0;
}

/* workflowRun and workflowRoot: the run's id (decimal, not 0) and its root's job name */
static int run_field(struct trigdata *t, int is_run, char *v, size_t vl, char *why, size_t whysz)
{
	if (is_run) {
		char *end;
		unsigned long long x = strtoull(v, &end, 10);
		if (!vl || *end || !x || v[0] < '0' || v[0] > '9' || strlen(v) != vl) {
			snprintf(why, whysz, "workflowRun: '%.40s' is not a run id (a decimal fire id)", v);
			return -1;
		}
		t->run = x;
		free(v);
		return 0;
	}
	if (!vl || strlen(v) != vl || strchr(v, '/') || vl > 255) {
		snprintf(why, whysz, "workflowRoot: '%.40s' is not a job name", v);
		return -1;
	}
	free(t->root);
	t->root = v;
	return 0;
}

int trigdata_parse_all(const char *data, size_t len, struct trigdata *t, char *why, size_t whysz)
{
	struct rd r = { data, data, data + len, why, whysz };
	memset(t, 0, sizeof *t);
	char **param = &t->param;
	blank(&r);
	if (r.s == r.e) return 0;
	if (*r.s != '{') return bad(&r, "not a JSON object ({\"parameter\":\"...\"})");
	r.s++;
	blank(&r);
	if (r.s < r.e && *r.s == '}') {
		r.s++;
		goto end;
	}
	for (;;) {
		blank(&r);
		if (r.s >= r.e || *r.s != '"') goto fail;
		char *key;
		if (string(&r, &key, NULL)) goto fail_said;
		int is_param = !strcmp(key, "parameter"), is_run = !strcmp(key, "workflowRun"),
		    is_root = !strcmp(key, "workflowRoot");
		free(key);
		blank(&r);
		if (r.s >= r.e || *r.s != ':') goto fail;
		r.s++;
		blank(&r);
		if (r.s < r.e && *r.s == '"') {
			char *v = NULL;
			size_t vl;
			if (string(&r, is_param || is_run || is_root ? &v : NULL, &vl)) goto fail_said;
			if (is_run || is_root) {
				if (run_field(t, is_run, v, vl, why, whysz) < 0) {
					free(v);
					goto fail_said;
				}
			} else if (is_param) {
				if (strlen(v) != vl || vl > TRIGDATA_PARAM_MAX) {
					free(v);
					snprintf(why, whysz, vl > TRIGDATA_PARAM_MAX ? "parameter: %zu bytes, more than %d"
					                                             : "parameter: a NUL in it (%zu bytes)", vl, TRIGDATA_PARAM_MAX);
					goto fail_said;
				}
				free(*param);
				*param = v;
			}
		} else if (is_param || is_run || is_root) {
			snprintf(why, whysz, "%s: not a string", is_param ? "parameter" : is_run ? "workflowRun" : "workflowRoot");
			goto fail_said;
		} else if (scalar(&r)) {
			goto fail_said;
		}
		blank(&r);
		if (r.s < r.e && *r.s == ',') {
			r.s++;
			continue;
		}
		if (r.s < r.e && *r.s == '}') {
			r.s++;
			break;
		}
		goto fail;
	}
end:
	blank(&r);
	if (r.s != r.e) {
		bad(&r, "bytes after the JSON object");
		goto fail_said;
	}
	if (!t->run != !t->root) {
		snprintf(why, whysz, "workflowRun and workflowRoot: one without the other");
		goto fail_said;
	}
	return 0;
fail:
	bad(&r, "not a JSON object ({\"parameter\":\"...\"})");
fail_said:
	trigdata_free(t);
	return -1;
}
