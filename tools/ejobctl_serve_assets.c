/* tools/ejobctl_serve_assets.c: see ejobctl_serve_assets.h. The files are build/tools/ejobctl_console.c's
 * (tools/embed): constant, so an answer points at them (MHD_RESPMEM_PERSISTENT), nothing copied. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tools/ejobctl_serve_assets.h"

/* one comma-separated element of a header at *s: its start and length, trimmed; *s moves past it */
static int next_token(const char **s, const char **tok, size_t *len)
{
	const char *p = *s;
	while (*p == ' ' || *p == '\t' || *p == ',') p++;
	if (!*p) return 0;
	const char *e = strchr(p, ',');
	if (!e) e = p + strlen(p);
	*s = e;
	while (e > p && (e[-1] == ' ' || e[-1] == '\t')) e--;
	*tok = p, *len = (size_t)(e - p);
	return 1;
}

/* If-None-Match has one of the ETags (or *): the copy the client has is this one */
static int etag_matches(const char *inm, const struct srv_asset *a)
{
	const char *t;
	size_t n;
	while (inm && next_token(&inm, &t, &n)) {
		if (n == 1 && *t == '*') return 1;
		if (n > 2 && !strncmp(t, "W/", 2)) t += 2, n -= 2;    /* a weak comparison is what GET takes */
		if ((n == strlen(a->etag) && !strncmp(t, a->etag, n)) || (n == strlen(a->gzetag) && !strncmp(t, a->gzetag, n)))
			return 1;
	}
	return 0;
}

/* Accept-Encoding names gzip (or *) without q=0 */
static int takes_gzip(const char *ae)
{
	const char *t;
	size_t n;
	while (ae && next_token(&ae, &t, &n)) {
		size_t name = strcspn(t, ";");
		if (name > n) name = n;
		while (name && (t[name - 1] == ' ' || t[name - 1] == '\t')) name--;
		if (!((name == 4 && !strncasecmp(t, "gzip", 4)) || (name == 1 && *t == '*'))) continue;
		const char *q = t + name;
		int zero = 0;
		for (; q < t + n; q++)
			if ((*q == 'q' || *q == 'Q') && q[1] == '=') {
				double v = strtod(q + 2, NULL);
				zero = v <= 0;
				break;
			}
		if (!zero) return 1;
	}
	return 0;
}

static void common_headers(struct MHD_Response *r)
{
	MHD_add_response_header(r, "Content-Security-Policy", SRV_CSP);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
}

static enum MHD_Result plain(struct MHD_Connection *con, unsigned code, const char *text, const char *allow)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	if (!r) return MHD_NO;
	common_headers(r);
	MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	if (allow) MHD_add_response_header(r, "Allow", allow);
	enum MHD_Result q = MHD_queue_response(con, code, r);
	MHD_destroy_response(r);
	return q;
}

enum MHD_Result srv_assets_send(struct MHD_Connection *con, const char *method, const char *name)
{
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return plain(con, MHD_HTTP_METHOD_NOT_ALLOWED, "the console's files take GET and HEAD only\n", "GET, HEAD");
	const struct srv_asset *a = NULL;
	for (size_t i = 0; i < srv_nassets && !a; i++)
		if (!strcmp(srv_assets[i].name, name)) a = &srv_assets[i];
	if (!a) return plain(con, MHD_HTTP_NOT_FOUND, "no such file of the console (the API is under /api/v1: docs/api.md)\n", NULL);

	int gz = a->gz && takes_gzip(MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING));
	int fresh = etag_matches(MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH), a);
	struct MHD_Response *r;
	if (fresh) r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	else r = MHD_create_response_from_buffer(gz ? a->gzlen : a->len, (void *)(gz ? a->gz : a->data), MHD_RESPMEM_PERSISTENT);
	if (!r) return MHD_NO;
	common_headers(r);
	/* revalidated at every use: after an upgrade the page is the new one, and a 304 costs nothing */
	MHD_add_response_header(r, "Cache-Control", "no-cache");
	MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, gz ? a->gzetag : a->etag);
	if (a->gz) MHD_add_response_header(r, "Vary", "Accept-Encoding");
	if (!fresh) {
		MHD_add_response_header(r, "Content-Type", a->type);
		if (gz) MHD_add_response_header(r, "Content-Encoding", "gzip");
	}
	/* (a 304 goes with libmicrohttpd's "Content-Length: 0": 0.9.75 adds it to every answer; clients
	 * know a 304 has no body and keep the length they have) */
	enum MHD_Result q = MHD_queue_response(con, fresh ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return q;
}
