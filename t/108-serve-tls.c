/* t/108-serve-tls.c: `ejobctl serve --tls-cert FILE --tls-key FILE` over real HTTPS (libcurl) on a
 * real ZooKeeper, with a self-signed certificate made here by the openssl command line:
 *   - serve says https://; a viewer's GET /api/v1/jobs answers over TLS, verified with the
 *     certificate as the CA (--cacert); without it the client refuses the certificate;
 *   - a login's cookie is Secure (and HttpOnly), and it works over TLS; an admin's PUT over TLS
 *     creates a job that the next GET lists; one whose name has a space is 400 saying so (the
 *     request's parsing, tools/ejobctl_serve_req.c, before ZooKeeper is asked);
 *   - plain HTTP to the TLS port gets no HTTP answer, and serve goes on answering HTTPS;
 *   - a --tls-key or --tls-cert that is missing or unreadable (a directory), or a key that is not
 *     one, exits 2 with a message naming the file; --tls-cert without --tls-key exits 2; a key
 *     that is not the certificate's exits 1 naming both. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <jansson.h>

#include "t/lib/tbuild.h"
#include "t/lib/tlib.h"
#include "t/lib/tserve.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

#define EJOBCTL BUILT("tools/ejobctl")

static struct tzkup u;

/* ejobctl serve ARGS... (after --listen and the cluster) run to its end: its exit code (-1: not an
 * exit), its stderr in *err */
static int serve_exit(const char *cert, const char *key, char **err)
{
	const char *argv[16] = { EJOBCTL, "serve", "--listen", "127.0.0.1:0", "--zk", u.connect, "--namespace", u.ns };
	int n = 8;
	if (cert) argv[n++] = "--tls-cert", argv[n++] = cert;
	if (key) argv[n++] = "--tls-key", argv[n++] = key;
	argv[n] = NULL;
	char *out = NULL;
	int st = tlib_run(argv, &out, err);
	free(out);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(void)
{
	tzkup_start(&u, 200, "t108", 4000);
	char nsp[80];
	snprintf(nsp, sizeof nsp, "/%s", u.ns);
	if (tzk_create(u.zh, nsp, "", 0, &ZOO_OPEN_ACL_UNSAFE) != ZOK) BAIL_OUT("cannot create %s", nsp);   /* serve's namespace */
	const char *dir = tlib_tmpdir();
	char cert[600], key[600], auth[600], line[2048];
	snprintf(cert, sizeof cert, "%s/cert.pem", dir);
	snprintf(key, sizeof key, "%s/key.pem", dir);
	const char *ossl[] = { "/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
	                       "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
	                       "-addext", "subjectAltName=IP:127.0.0.1", NULL };
	char *oout = NULL, *oerr = NULL;
	int st = tlib_run(ossl, &oout, &oerr);
	if (st != 0) BAIL_OUT("openssl req failed (status %d): %s", st, oerr ? oerr : "");
	free(oout), free(oerr);

	snprintf(auth, sizeof auth, "%s/users", dir);
	char *hv = tserve_hash("view-pass"), *ha = tserve_hash("adm-pass");
	snprintf(line, sizeof line, "view:%s:viewer\nadm:%s:admin\n", hv, ha);
	tlib_write_file(auth, line, strlen(line));
	free(hv), free(ha);

	struct tserve sv;
	const char *args[] = { "--zk", u.connect, "--namespace", u.ns, "--auth", auth, "--tls-cert", cert, "--tls-key", key, NULL };
	tserve_start(&sv, "serve", args);
	ok(sv.tls, "serve listens on https://");
	sv.cacert = cert;

	/* ---- HTTPS, verified ------------------------------------------------------------------- */
	char *out = NULL;
	is_int(tserve_http(&sv, "GET", "/api/v1/jobs", "view:view-pass", NULL, NULL, &out), 200,
	       "GET /api/v1/jobs over TLS (the certificate as CA): 200");
	json_t *o = json_loads(out, 0, NULL);
	ok(json_is_array(json_object_get(o, "jobs")), "its answer is the jobs document (%s)", out);
	json_decref(o), free(out);
	sv.cacert = NULL;
	is_int(tserve_http(&sv, "GET", "/api/v1/jobs", "view:view-pass", NULL, NULL, NULL), -1,
	       "without the certificate as CA the client refuses it (self-signed): it is TLS with our certificate");
	sv.cacert = cert;
	is_int(tserve_http(&sv, "GET", "/api/v1/jobs", NULL, NULL, NULL, NULL), 401, "no credentials over TLS: 401");

	/* ---- login: a Secure cookie ------------------------------------------------------------ */
	is_int(tserve_http(&sv, "POST", "/api/v1/login", NULL, NULL, "{\"user\": \"adm\", \"password\": \"adm-pass\"}", NULL),
	       200, "POST /api/v1/login over TLS: 200");
	ok(strstr(sv.set_cookie, "ejob_session=") && strstr(sv.set_cookie, "; Secure") && strstr(sv.set_cookie, "HttpOnly"),
	   "its cookie is Secure and HttpOnly (%s)", sv.set_cookie);
	const char *body = "type: script\ncron: \"0 0 0 1 1 ? 2099\"\nshardingTotalCount: 1\nlabel: none\n"
	                   "props:\n  script.command.line: \"true\"\n";
	is_int(tserve_http(&sv, "PUT", "/api/v1/jobs/tj", "cookie", NULL, body, &out), 201,
	       "PUT as the cookie's admin over TLS creates a job: 201");
	free(out);
	is_int(tserve_http(&sv, "PUT", "/api/v1/jobs/t%20j", "cookie", NULL, body, &out), 400,
	       "PUT of a job whose name has a space: 400");
	ok(out && strstr(out, "the job name in the path contains whitespace"), "saying what is wrong with the name (%s)",
	   out ? out : "");
	free(out);
	is_int(tserve_http(&sv, "GET", "/api/v1/jobs", "cookie", NULL, NULL, &out), 200, "GET with the cookie: 200");
	ok(out && strstr(out, "\"tj\""), "it lists the job made (%s)", out ? out : "");
	free(out);

	/* ---- plain HTTP to the TLS port -------------------------------------------------------- */
	sv.tls = 0;
	long code = tserve_http(&sv, "GET", "/api/v1/jobs", "view:view-pass", NULL, NULL, &out);
	is_int(code, -1, "plain HTTP to the TLS port gets no HTTP answer (%s)", out ? out : "");
	free(out);
	sv.tls = 1;
	is_int(tserve_http(&sv, "GET", "/healthz", NULL, NULL, NULL, NULL), 200, "and serve goes on answering HTTPS");
	tserve_stop(&sv);

	/* ---- files that are not there or not a key -------------------------------------------------- */
	char missing[600], err1[700], *err = NULL;
	snprintf(missing, sizeof missing, "%s/no-such-key.pem", dir);
	is_int(serve_exit(cert, missing, &err), 2, "--tls-key missing: exit 2");
	snprintf(err1, sizeof err1, "--tls-key %s", missing);
	ok(err && strstr(err, err1), "the message names --tls-key and the file (%s)", err ? err : "");
	free(err), err = NULL;
	is_int(serve_exit(missing, key, &err), 2, "--tls-cert missing: exit 2");
	snprintf(err1, sizeof err1, "--tls-cert %s", missing);
	ok(err && strstr(err, err1), "the message names --tls-cert and the file (%s)", err ? err : "");
	free(err), err = NULL;
	/* a directory: unreadable as a file, for root too (tests may run as root, whom modes do not stop) */
	is_int(serve_exit(cert, dir, &err), 2, "--tls-key a directory (unreadable): exit 2");
	snprintf(err1, sizeof err1, "--tls-key %s", dir);
	ok(err && strstr(err, err1), "the message names it (%s)", err ? err : "");
	free(err), err = NULL;
	char bad[600];
	snprintf(bad, sizeof bad, "%s/bad-key.pem", dir);
	tlib_write_file(bad, "not a key\n", 10);
	is_int(serve_exit(cert, bad, &err), 2, "--tls-key a file that is no key: exit 2");
	ok(err && strstr(err, bad), "the message names it (%s)", err ? err : "");
	free(err), err = NULL;
	char other[600];
	snprintf(other, sizeof other, "%s/other-key.pem", dir);
	const char *gen[] = { "/usr/bin/openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1",
	                      "-out", other, NULL };
	if (tlib_run(gen, &oout, &oerr) != 0) BAIL_OUT("openssl genpkey failed: %s", oerr ? oerr : "");
	free(oout), free(oerr);
	is_int(serve_exit(cert, other, &err), 1, "--tls-key another certificate's key: exit 1 (libmicrohttpd refuses it)");
	ok(err && strstr(err, other) && strstr(err, cert), "the message names both files (%s)", err ? err : "");
	free(err), err = NULL;
	is_int(serve_exit(cert, NULL, &err), 2, "--tls-cert without --tls-key: exit 2");
	ok(err && strstr(err, "--tls-key"), "the message says to give --tls-key (%s)", err ? err : "");
	free(err);

	tzkup_end(&u);
	return done_testing();
}
