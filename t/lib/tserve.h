/* t/lib/tserve.h: `ejobctl serve` for the tests of its HTTP API (t/103 to t/109): started on a free
 * loopback port (tracked by t/lib/tlib: killed at exit, on failure too), and requests over real
 * HTTP (libcurl). */
#ifndef EJOB_TSERVE_H
#define EJOB_TSERVE_H

#include <sys/types.h>

struct tserve {
	pid_t pid;
	int port;
	char out[600];              /* its stdout and stderr */
	char etag[64];              /* the last response's ETag header ("" none) */
	char cookie[256];           /* the last Set-Cookie's "name=value" ("" none) */
	int from_model;             /* the last response had X-Ejob-From: model */
	char set_cookie[512];       /* the last Set-Cookie header's value whole, attributes too */
	int tls;                    /* it said https://: requests are HTTPS (0: plain HTTP to it anyway) */
	const char *cacert;         /* HTTPS: the CA file that verifies its certificate (NULL: the system's) */
};

/* ejobctl serve --listen 127.0.0.1:0 ARGS... (NULL-terminated), until it says where it listens
 * (http:// or https://: s->tls).
 * name labels its output file in tlib_tmpdir(). BAIL_OUT if it does not listen within 10 s. */
void tserve_start(struct tserve *s, const char *name, const char *const *args);
void tserve_stop(struct tserve *s);

/* method path as userpass ("user:pass"; NULL: none; "cookie": s->cookie) with one more header
 * (NULL: none) and body (NULL: none): the status code (-1: no answer); the body in *out (malloc'd;
 * out may be NULL). */
long tserve_http(struct tserve *s, const char *method, const char *path, const char *userpass, const char *header,
                 const char *body, char **out);

/* `ejobctl serve --hash-password` of pw, malloc'd */
char *tserve_hash(const char *pw);

#endif
