/* t/fuzz/fuzz-serve.c: `ejobctl serve`'s request parsing (tools/ejobctl_serve_req.c, the code the
 * server routes every request through) on arbitrary bytes. The input is fields separated by NUL:
 *   METHOD \0 PATH \0 QUERY \0 IF-MATCH \0 IF-NONE-MATCH \0 BODY
 * (QUERY "k=v&k2": a key without '=' has no value, as libmicrohttpd gives it; an empty header
 * field is no header; BODY is the rest, NULs and all; a missing field is empty).
 *
 * Whatever the input: no crash, leak or undefined behaviour; a refusal is a 4xx with its reason;
 * what is not refused names what it acts on (a job name serve takes, an op, an item in range; the
 * history over every job a job= filter that is a job name or none; the changes a since and a
 * limit in range);
 * the same bytes parse the same way twice; and a PUT whose body is one job (FORM_JOB) is wrapped
 * as a file in which, when ejob's loader takes it, that job is the one the path names. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "conf/conf.h"
#include "tools/ejobctl_serve_req.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NARGS 16

struct in {
	char *method, *path, *query, *if_match, *if_none_match;
	const char *key[NARGS], *val[NARGS];
	int nargs;
};

static const char *value(void *cls, enum srv_kind kind, const char *key)
{
	struct in *in = cls;
	if (kind == SRV_HEADER) {
		const char *v = !strcasecmp(key, "If-Match") ? in->if_match : !strcasecmp(key, "If-None-Match") ? in->if_none_match
		                                                                                              : NULL;
		return v && *v ? v : NULL;
	}
	for (int i = 0; i < in->nargs; i++)
		if (!strcmp(in->key[i], key)) return in->val[i];
	return NULL;
}

/* the next NUL-terminated field of [*p, end), a copy ("" past the end) */
static char *field(const uint8_t **p, const uint8_t *end)
{
	const uint8_t *z = memchr(*p, 0, (size_t)(end - *p));
	size_t n = z ? (size_t)(z - *p) : (size_t)(end - *p);
	char *s = malloc(n + 1);
	if (!s) abort();
	memcpy(s, *p, n);
	s[n] = 0;
	*p = z ? z + 1 : end;
	return s;
}

static void check(const struct srv_http *h, const struct srv_req *r)
{
	int get = !strcmp(h->method, "GET") || !strcmp(h->method, "HEAD");
	if (r->write != !get) abort();
	if (r->role < ROLE_VIEWER || r->role > ROLE_ADMIN) abort();
	if (r->ep == EP_REFUSED) {
		if (r->code != 400 && r->code != 404 && r->code != 405 && r->code != 413) abort();
		if (!memchr(r->why, 0, sizeof r->why) || !r->why[0]) abort();
		if (r->text) abort();
		return;
	}
	if (r->code) abort();
	if (r->ep == EP_JOB || r->ep == EP_JOB_PUT || r->ep == EP_JOB_OP) {
		if (!r->job || !*r->job || strlen(r->job) > CONF_MAX_NAME_BYTES || strchr(r->job, '/')) abort();
		if (r->role == ROLE_VIEWER && r->write) abort();   /* a write needs a role */
	}
	/* the reads: GET only; the history's job (the path's, or over every job the job= filter: NULL none) */
	if ((r->ep == EP_HISTORY || r->ep == EP_ME || r->ep == EP_CHANGES) && (r->write || r->role != ROLE_VIEWER)) abort();
	if (r->ep == EP_HISTORY && r->pgq.job &&
	    (!*r->pgq.job || strlen(r->pgq.job) > CONF_MAX_NAME_BYTES || strchr(r->pgq.job, '/')))
		abort();
	if (r->ep == EP_HISTORY && r->job && r->pgq.job != r->job) abort();
	if (r->ep == EP_CHANGES && (r->limit < 1 || r->limit > SRV_CHANGES_MAX || r->since < -1)) abort();
	/* the workflows: GET only, a viewer's; the runs of a root that is a job name, 1-SRV_RUNS_MAX of them */
	if ((r->ep == EP_WORKFLOWS || r->ep == EP_WF_RUNS) && (r->write || r->role != ROLE_VIEWER)) abort();
	if (r->ep == EP_WF_RUNS && (!r->job || !*r->job || strlen(r->job) > CONF_MAX_NAME_BYTES || strchr(r->job, '/') ||
	                            r->limit < 1 || r->limit > SRV_RUNS_MAX))
		abort();
	if (r->ep != EP_CHANGES && r->since != -1) abort();
	if (r->ep == EP_JOB_OP || r->ep == EP_SERVER_OP) {
		if (!r->op || (r->server && r->instance)) abort();
		if (r->ep == EP_SERVER_OP && (!r->server || !*r->server)) abort();
	}
	if (r->item) {
		char *e;
		long it = strtol(r->item, &e, 10);
		if (*e || it < 0 || it >= CONF_MAX_ITEMS) abort();
	}
	if (r->ep == EP_AUDIT && r->limit < 1) abort();
	if (r->ep == EP_JOB_PUT) {
		if (!r->text || r->text[r->textlen] || r->role != ROLE_ADMIN || !h->len) abort();
		if (conf_job_name_problem(r->job, strlen(r->job))) abort();
		if (r->want < -1 || r->want > 0x7fffffff || (r->must_not_exist && (r->must_exist || r->want >= 0))) abort();
	}
}

/* a FORM_JOB body wrapped under the path's job: if the loader takes the file, the job is there */
static void check_wrap(const struct srv_req *r)
{
	conf_opts_t o = { .cpus = 1 };
	o.server_lists = "127.0.0.1:2181";
	o.namespace = "fuzz";
	conf_diags_t *d = NULL;
	conf_t *c = conf_parse(r->text, r->textlen, "body", &o, &d);
	if (getenv("FUZZ_SERVE_DEBUG")) {          /* does the loader take the seeds' bodies? */
		fprintf(stderr, "wrapped body %s\n", c ? "loads" : "does not load:");
		for (size_t k = 0; d && k < conf_diags_count(d); k++) fprintf(stderr, "  %s\n", conf_diags_get(d, k)->text);
	}
	for (size_t k = 0; d && k < conf_diags_count(d); k++) {
		char *u = srv_unwrap_positions(conf_diags_get(d, k)->text);
		if (!u) abort();
		free(u);
	}
	if (c && !conf_find_job(c, r->job)) {
		fprintf(stderr, "job '%s' is not in its wrapped body:\n%s\n", r->job, r->text);
		abort();
	}
	conf_free(c);
	conf_diags_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	struct in in = { 0 };
	in.method = field(&p, end);
	in.path = field(&p, end);
	in.query = field(&p, end);
	in.if_match = field(&p, end);
	in.if_none_match = field(&p, end);
	for (char *save = NULL, *a = strtok_r(in.query, "&", &save); a && in.nargs < NARGS; a = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(a, '=');
		if (eq) *eq = 0;
		in.key[in.nargs] = a, in.val[in.nargs++] = eq ? eq + 1 : NULL;
	}
	size_t blen = (size_t)(end - p);
	/* the body in a buffer of its own size, so that reading past it is caught */
	char *body = blen ? malloc(blen) : NULL;
	if (blen && !body) abort();
	if (blen) memcpy(body, p, blen);
	struct srv_http h = { in.method, in.path, body, blen, 0, value, &in };
	h.too_big = blen == 1 && body[0] == 'B';     /* a too-big body stands for itself */
	if (h.too_big) h.body = NULL, h.len = 0;

	struct srv_req r, r2;
	if (srv_req_parse(&h, &r)) abort();           /* out of memory only */
	check(&h, &r);
	if (srv_req_parse(&h, &r2)) abort();
	if (r.ep != r2.ep || r.code != r2.code || strcmp(r.why, r2.why) || r.role != r2.role) abort();
	if (r.ep == EP_CHANGES && (r.since != r2.since || r.limit != r2.limit)) abort();
	if (r.ep == EP_JOB_PUT && (r.textlen != r2.textlen || memcmp(r.text, r2.text, r.textlen))) abort();
	if (r.ep == EP_JOB_PUT && r.form == FORM_JOB) check_wrap(&r);
	srv_req_free(&r);
	srv_req_free(&r2);
	free(body);
	free(in.method), free(in.path), free(in.query), free(in.if_match), free(in.if_none_match);
	return 0;
}
