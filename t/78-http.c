/* t/78-http.c: http jobs (ElasticJob's HTTP type) against a real HTTP(S) server this test starts
 * (Python's http.server, the test's own script; https with a self-signed certificate made here
 * by openssl):
 *   - the request as ElasticJob's HttpJobExecutor makes it, as the server received it: method,
 *     path, body, Content-Type, and the shardingContext header's exact JSON, per item;
 *   - how each exchange ends: 2xx ok (code the status); any other status failed, with the status
 *     line in err and the status line and the first 512 bytes of the body in the output (cut at
 *     a character); a redirect followed, one to the other scheme not; connection refused failed with libcurl's reason; a
 *     server silent past http.read.timeout.milliseconds failed in about that time, while one
 *     that answers slowly but steadily is waited for; https trusted through http.ca.file, and
 *     refused (a TLS error) without it;
 *   - the worker heartbeats while it waits for an answer; the item's cancel (timeout with its
 *     SIGUSR1, lease) stops a request at once;
 *   - end to end through a supervisor (--run): type http from the config file, timeoutSeconds
 *     stopping a request mid-way, the history record's outcome, exitCode and output;
 *   - in a cluster (a real ZooKeeper): ejob's http job registered as ElasticJob registers its
 *     HTTP jobs (root node HTTP, props http.* and ejob.type in the config node), and an HTTP job
 *     ElasticJob registered (root node HTTP, no ejob.type) run by ejob with the node's props. */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/ring.h"
#include "ipc/shm.h"
#include "ipc/wait.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/twork.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

#define PYTHON "/usr/bin/python3"

/* The server: one for http and one for https (the same handler) in one process, each on a port
 * the kernel picks, written to DIR/ports when both listen. Every request is recorded, before it
 * is answered, as DIR/req/N: method, path, shardingContext, Content-Type, Content-Length (each
 * "-" when absent; header bytes as they came) and the body, separated by NULs. Paths:
 *   /s/CODE/...         CODE, body "answer CODE of PATH\n"
 *   /slow/MS/...        nothing for MS ms, then 200
 *   /drip/N/MS/...      200 with N bytes of body, one every MS ms
 *   /big/...            200, 400 euro signs (1200 bytes of UTF-8)
 *   /redirect/CODE/...  CODE to /s/200/after-redirect
 *   /away/CODE/...      CODE to https://127.0.0.1:HTTPS_PORT/s/200/away */
static const char server_py[] =
	"import http.server, os, ssl, sys, threading, time\n"
	"d = sys.argv[1]\n"
	"seq = [0]\n"
	"lock = threading.Lock()\n"
	"class H(http.server.BaseHTTPRequestHandler):\n"
	"    protocol_version = 'HTTP/1.1'\n"
	"    def log_message(self, *a): pass\n"
	"    def answer(self, code, body, extra=()):\n"
	"        self.send_response(code)\n"
	"        for k, v in extra: self.send_header(k, v)\n"
	"        self.send_header('Content-Length', str(len(body)))\n"
	"        self.end_headers()\n"
	"        if self.command != 'HEAD': self.wfile.write(body)\n"
	"    def go(self):\n"
	"        n = int(self.headers.get('Content-Length') or 0)\n"
	"        body = self.rfile.read(n) if n else b''\n"
	"        h = lambda k: self.headers.get(k, '-').encode('latin-1')\n"
	"        rec = b'\\0'.join([self.command.encode(), self.path.encode(), h('shardingContext'),\n"
	"                          h('Content-Type'), h('Content-Length'), body])\n"
	"        with lock:\n"
	"            seq[0] += 1\n"
	"            k = seq[0]\n"
	"        open(os.path.join(d, 'req', '.%d' % k), 'wb').write(rec)\n"
	"        os.rename(os.path.join(d, 'req', '.%d' % k), os.path.join(d, 'req', '%d' % k))\n"
	"        p = self.path.split('/')\n"
	"        if p[1] == 's':\n"
	"            self.answer(int(p[2]), ('answer %s of %s\\n' % (p[2], self.path)).encode())\n"
	"        elif p[1] == 'slow':\n"
	"            time.sleep(int(p[2]) / 1000.0)\n"
	"            self.answer(200, b'late\\n')\n"
	"        elif p[1] == 'drip':\n"
	"            self.send_response(200)\n"
	"            self.send_header('Content-Length', p[2])\n"
	"            self.end_headers()\n"
	"            for i in range(int(p[2])):\n"
	"                time.sleep(int(p[3]) / 1000.0)\n"
	"                self.wfile.write(b'x')\n"
	"                self.wfile.flush()\n"
	"        elif p[1] == 'big':\n"
	"            self.answer(200, ('\\u20ac' * 400).encode())\n"
	"        elif p[1] == 'redirect':\n"
	"            self.answer(int(p[2]), b'', [('Location', '/s/200/after-redirect')])\n"
	"        elif p[1] == 'away':\n"
	"            to = 'https://127.0.0.1:%d/s/200/away' % tls.server_address[1]\n"
	"            self.answer(int(p[2]), b'', [('Location', to)])\n"
	"        else:\n"
	"            self.answer(404, b'no such path\\n')\n"
	"    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_OPTIONS = do_TRACE = go\n"
	"plain = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)\n"
	"tls = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)\n"
	"ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n"
	"ctx.load_cert_chain(os.path.join(d, 'cert.pem'), os.path.join(d, 'key.pem'))\n"
	"tls.socket = ctx.wrap_socket(tls.socket, server_side=True)\n"
	"for s in (plain, tls): threading.Thread(target=s.serve_forever, daemon=True).start()\n"
	"open(os.path.join(d, '.ports'), 'w').write('%d %d\\n' % (plain.server_address[1], tls.server_address[1]))\n"
	"os.rename(os.path.join(d, '.ports'), os.path.join(d, 'ports'))\n"
	"threading.Event().wait()\n";

static char dir[512];
static int http_port, https_port;
static char ca[600];

/* ---- the server ------------------------------------------------------------------------------ */

static int have_ports(void *arg)
{
	(void)arg;
	char p[600];
	snprintf(p, sizeof p, "%s/ports", dir);
	char *s = twork_slurp(p, NULL);
	int ok = s && sscanf(s, "%d %d", &http_port, &https_port) == 2;
	free(s);
	return ok;
}

static void start_server(void)
{
	char p[600], key[600], cert[600], req[600], log[600];
	snprintf(key, sizeof key, "%s/key.pem", dir);
	snprintf(cert, sizeof cert, "%s/cert.pem", dir);
	snprintf(ca, sizeof ca, "%s", cert);
	const char *gen[] = { "/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
	                      "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert, "-days", "2",
	                      "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", NULL };
	char *out = NULL, *err = NULL;
	int st = tlib_run(gen, &out, &err);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) BAIL_OUT("openssl req -x509 failed (status %d): %s", st, err ? err : "");
	free(out);
	free(err);
	snprintf(req, sizeof req, "%s/req", dir);
	snprintf(p, sizeof p, "%s/server.py", dir);
	snprintf(log, sizeof log, "%s/server.log", dir);
	if (mkdir(req, 0755) < 0 || tlib_write_file(p, server_py, sizeof server_py - 1) < 0)
		BAIL_OUT("writing %s: %s", p, strerror(errno));
	if (access(PYTHON, X_OK) < 0) BAIL_OUT("%s: %s (tools/install-deps installs python3)", PYTHON, strerror(errno));
	pid_t pid = tlib_fork();
	if (pid == 0) {
		FILE *f = freopen(log, "w", stderr);
		(void)f;
		execl(PYTHON, PYTHON, "-u", p, dir, (char *)NULL);
		_exit(127);
	}
	if (!tlib_wait_for(have_ports, NULL, 10000)) BAIL_OUT("the HTTP server did not start in 10 s (see %s)", log);
}

struct rec {
	char method[16], path[256], ctx[1024], ctype[128], clen[32], body[1024];
};

/* The request the server got for path (the last one, if several). */
static int find_req(const char *path, struct rec *r)
{
	int found = 0;
	for (int k = 1; k < 1000; k++) {
		char p[700];
		snprintf(p, sizeof p, "%s/req/%d", dir, k);
		size_t len;
		char *s = twork_slurp(p, &len);
		if (!s) break;
		const char *f[6] = { s };
		size_t fl[6];
		int n = 1;
		for (size_t i = 0; i < len && n < 6; i++)
			if (!s[i]) f[n++] = s + i + 1;
		if (n == 6 && !strcmp(f[1], path)) {
			fl[5] = len - (size_t)(f[5] - s);
			snprintf(r->method, sizeof r->method, "%s", f[0]);
			snprintf(r->path, sizeof r->path, "%s", f[1]);
			snprintf(r->ctx, sizeof r->ctx, "%s", f[2]);
			snprintf(r->ctype, sizeof r->ctype, "%s", f[3]);
			snprintf(r->clen, sizeof r->clen, "%s", f[4]);
			snprintf(r->body, sizeof r->body, "%.*s", (int)fl[5], f[5]);
			found = 1;
		}
		free(s);
	}
	return found;
}

/* ---- items through a worker ------------------------------------------------------------------ */

static struct twork tw;

static struct frame_submit item(const char *method, const char *uri)
{
	struct frame_submit f = twork_item(&tw, FRAME_KIND_HTTP);
	f.method = method;
	f.uri = uri;
	f.connect_ms = 3000;
	f.read_ms = 5000;
	return f;
}

static char url_buf[8][512];
static int url_next;

static const char *url(int tls, const char *path)
{
	char *u = url_buf[url_next++ % 8];
	snprintf(u, 512, "%s://127.0.0.1:%d%s", tls ? "https" : "http", tls ? https_port : http_port, path);
	return u;
}

static int run(const struct frame_submit *f, struct frame_complete *c, uint64_t *ms)
{
	uint64_t t0 = tlib_now_ms();
	twork_publish(&tw, f);
	if (!twork_completion(&tw, 15000, c)) {
		diag("no completion for %s %s in 15 s", f->method, f->uri);
		return 0;
	}
	if (ms) *ms = tlib_now_ms() - t0;
	return 1;
}

static void test_requests(void)
{
	struct frame_complete c;
	struct rec r;

	/* GET: the sharding context exactly as ElasticJob's Gson writes it (<>&=' escaped, UTF-8 as is) */
	struct frame_submit f = item("GET", url(0, "/s/200/get?q=1"));
	f.job_param = "p<&>='\xc3\xa9";
	f.data = "ignored=1";
	if (run(&f, &c, NULL)) {
		ok(c.status == FRAME_ST_OK && c.exit_code == 200 && !c.error[0], "GET answered 200: ok, code 200 (%s %d %s)",
		   frame_status_name(c.status), c.exit_code, c.error);
		is_str(c.output, "HTTP/1.1 200 OK\nanswer 200 of /s/200/get?q=1\n", "  output: the status line and the body");
	}
	if (ok(find_req("/s/200/get?q=1", &r), "  the server got it")) {
		is_str(r.method, "GET", "  method GET");
		is_str(r.ctx, "{\"jobName\":\"hello\",\"taskId\":\"hello@-@0,1@-@READY@-@127.0.0.1@-@4242\","
		       "\"shardingTotalCount\":4,\"jobParameter\":\"p\\u003c\\u0026\\u003e\\u003d\\u0027\xc3\xa9\","
		       "\"shardingItem\":1,\"shardingParameter\":\"b\"}",
		       "  shardingContext: ElasticJob's JSON, byte for byte");
		ok(!strcmp(r.ctype, "-") && !strcmp(r.clen, "-") && !r.body[0],
		   "  no body, Content-Type or Content-Length: http.data goes only with POST, PUT, DELETE");
	}

	/* POST, PUT, DELETE: the body, and HttpURLConnection's Content-Type (form for POST and DELETE,
	 * none for PUT) unless http.content.type says */
	static const struct { const char *method, *path, *ctype, *data, *want_ctype; } w[] = {
		{ "POST", "/s/201/post", NULL, "a=1&b=\xc3\xa9", "application/x-www-form-urlencoded" },
		{ "POST", "/s/200/post-json", "application/json", "{\"k\":1}", "application/json" },
		{ "PUT", "/s/204/put", NULL, "put-body", "-" },
		{ "DELETE", "/s/202/delete", NULL, "d=1", "application/x-www-form-urlencoded" },
		{ "POST", "/s/200/post-empty", NULL, "", "-" },
		{ "GET", "/s/200/get-ctype", "text/plain; charset=utf-8", NULL, "text/plain; charset=utf-8" },
	};
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
		f = item(w[i].method, url(0, w[i].path));
		f.ctype = w[i].ctype;
		f.data = w[i].data;
		f.item = (uint32_t)(i % 4);
		f.item_param = i % 2 ? "" : "zero";
		int got = run(&f, &c, NULL);
		ok(got && c.status == FRAME_ST_OK && c.exit_code == atoi(w[i].path + 3), "%s %s%s: ok, code %d", w[i].method,
		   w[i].path, w[i].ctype ? " with a content type" : "", got ? c.exit_code : -1);
		if (!find_req(w[i].path, &r)) {
			fail("  the server did not get %s", w[i].path);
			continue;
		}
		size_t dl = w[i].data ? strlen(w[i].data) : 0;
		char clen[32];
		snprintf(clen, sizeof clen, "%zu", dl);
		ok(!strcmp(r.method, w[i].method) && !strcmp(r.ctype, w[i].want_ctype) && !strcmp(r.body, dl ? w[i].data : "") &&
		   !strcmp(r.clen, dl ? clen : "-"), "  the server got %s, Content-Type %s, Content-Length %s, body '%s'",
		   r.method, r.ctype, r.clen, r.body);
		char want[512];
		snprintf(want, sizeof want, "{\"jobName\":\"hello\",\"taskId\":\"hello@-@0,1@-@READY@-@127.0.0.1@-@4242\","
		         "\"shardingTotalCount\":4,\"jobParameter\":\"\",\"shardingItem\":%u%s}", (unsigned)(i % 4),
		         i % 2 ? "" : ",\"shardingParameter\":\"zero\"");
		is_str(r.ctx, want, "  shardingContext for item %u (no shardingParameter when it has none)", (unsigned)(i % 4));
	}

	f = item("HEAD", url(0, "/s/200/head"));
	ok(run(&f, &c, NULL) && c.status == FRAME_ST_OK && find_req("/s/200/head", &r) && !strcmp(r.method, "HEAD"),
	   "HEAD: ok, no body waited for");
	f = item("OPTIONS", url(0, "/s/200/options"));
	ok(run(&f, &c, NULL) && c.status == FRAME_ST_OK && find_req("/s/200/options", &r) && !strcmp(r.method, "OPTIONS"),
	   "OPTIONS: ok");

	/* one log line per request, in the supervisor's form, a password in the uri hidden */
	char auth[256];
	snprintf(auth, sizeof auth, "http://user:secret@127.0.0.1:%d/s/200/auth", http_port);
	f = item("GET", auth);
	if (run(&f, &c, NULL)) {
		char want[300];
		snprintf(want, sizeof want, " INFO [hello@-@0,1@-@READY@-@127.0.0.1@-@4242 item 1 attempt 1] GET "
		         "http://user:***@127.0.0.1:%d/s/200/auth: HTTP/1.1 200 OK in ", http_port);
		char *log = twork_slurp(tw.log, NULL);
		const char *at = log ? strstr(log, want) : NULL;
		ok(c.status == FRAME_ST_OK && at && strstr(at, "s, 26 bytes: answer 200 of /s/200/auth\\n\n"),
		   "the worker logs the request: method, uri, status line, time, size and the body's first bytes");
		ok(log && !strstr(log, "secret"), "  with the uri's password as ***");
		free(log);
	}

	/* a POST redirected with 302 goes on as a GET, as Java's HttpURLConnection does */
	f = item("POST", url(0, "/redirect/302/r"));
	f.data = "x=1";
	if (run(&f, &c, NULL)) {
		ok(c.status == FRAME_ST_OK && c.exit_code == 200, "a 302 is followed: ok, code 200 (%d)", c.exit_code);
		ok(find_req("/s/200/after-redirect", &r) && !strcmp(r.method, "GET") && !r.body[0],
		   "  the redirected POST went on as a GET without its body");
		is_str(c.output, "HTTP/1.1 200 OK\nanswer 200 of /s/200/after-redirect\n", "  output: the final answer");
	}
}

static void test_failures(void)
{
	struct frame_complete c;
	uint64_t ms;

	/* any status outside 2xx is a failure (ElasticJob logs 4xx/5xx and counts the item a success) */
	struct frame_submit f = item("POST", url(0, "/s/500/fail"));
	f.data = "x";
	if (run(&f, &c, NULL)) {
		ok(c.status == FRAME_ST_FAILED && c.exit_code == 500, "500: failed, code 500 (%s %d)",
		   frame_status_name(c.status), c.exit_code);
		is_str(c.error, "HTTP/1.1 500 Internal Server Error", "  err: the status line");
		is_str(c.output, "HTTP/1.1 500 Internal Server Error\nanswer 500 of /s/500/fail\n",
		       "  output: the status line and the body");
	}
	f = item("GET", url(0, "/s/404/missing"));
	ok(run(&f, &c, NULL) && c.status == FRAME_ST_FAILED && c.exit_code == 404, "404: failed, code 404");
	f = item("GET", url(0, "/s/300/choices"));
	int got = run(&f, &c, NULL);
	ok(got && c.status == FRAME_ST_FAILED && c.exit_code == 300,
	   "a 3xx without a Location (300): failed, not ok as in ElasticJob (code %d)", got ? c.exit_code : -1);
	/* a redirect to the other scheme is not followed (nor does Java follow one) */
	f = item("GET", url(0, "/away/302/x"));
	if (run(&f, &c, NULL)) {
		ok(c.status == FRAME_ST_FAILED && c.exit_code == 302, "a 302 from http to https: failed, code 302 (%s %d)",
		   frame_status_name(c.status), c.exit_code);
		char want[256];
		snprintf(want, sizeof want, "HTTP/1.1 302 Found: not followed to https://127.0.0.1:%d/s/200/away (a redirect "
		         "keeps the scheme)", https_port);
		is_str(c.error, want, "  err says where it went, and why not");
	}

	/* the first 512 bytes of a long body, not cutting a character */
	f = item("GET", url(0, "/big/euros"));
	if (run(&f, &c, NULL)) {
		const char *nl = c.output ? strchr(c.output, '\n') : NULL;
		size_t bl = nl ? strlen(nl + 1) : 0;
		ok(c.status == FRAME_ST_OK && bl == 510 && !memcmp(nl + 1, "\xe2\x82\xac", 3) &&
		   !memcmp(nl + 1 + 507, "\xe2\x82\xac", 3), "a 1200-byte body: 510 bytes of it (170 whole euro signs) in "
		   "the output (%zu)", bl);
	}

	/* connection refused: a port bound here, not listening */
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof a;
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) < 0 || getsockname(s, (struct sockaddr *)&a, &al) < 0)
		BAIL_OUT("a socket to refuse connections: %s", strerror(errno));
	char refused[128];
	snprintf(refused, sizeof refused, "http://127.0.0.1:%d/x", ntohs(a.sin_port));
	f = item("GET", refused);
	if (run(&f, &c, &ms)) {
		ok(c.status == FRAME_ST_FAILED && c.exit_code == 0, "connection refused: failed, code 0 (%s %d)",
		   frame_status_name(c.status), c.exit_code);
		ok(strstr(c.error, "Failed to connect to 127.0.0.1 port") && (strstr(c.error, "refused") ||
		   strstr(c.error, "Couldn't connect")), "  err: libcurl's reason (%s)", c.error);
		ok(!c.output, "  no output: no answer");
	}
	close(s);

	/* the read timeout: nothing for 300 ms after the request went out */
	f = item("GET", url(0, "/slow/3000/silent"));
	f.read_ms = 300;
	if (run(&f, &c, &ms)) {
		ok(c.status == FRAME_ST_FAILED, "a server silent past http.read.timeout.milliseconds (300): failed (%s)",
		   frame_status_name(c.status));
		is_str(c.error, "read timeout: no data from the server for 300 ms (http.read.timeout.milliseconds)",
		       "  err says so");
		ok(ms >= 280 && ms < 1000, "  in about the timeout (%" PRIu64 " ms)", ms);
	}
	/* ... but steady bytes, each within it, are waited for: 5 bytes 200 ms apart, read timeout 500 */
	f = item("GET", url(0, "/drip/5/200/steady"));
	f.read_ms = 500;
	if (run(&f, &c, &ms)) {
		ok(c.status == FRAME_ST_OK && ms >= 900, "a body dripping slower than the read timeout in all, but each byte "
		   "within it: ok after %" PRIu64 " ms (%s: %s)", ms, frame_status_name(c.status), c.error);
		is_str(c.output, "HTTP/1.1 200 OK\nxxxxx", "  the whole body in the output");
	}
}

static void test_tls(void)
{
	struct frame_complete c;
	struct frame_submit f = item("POST", url(1, "/s/200/secure"));
	f.data = "x=1";
	f.ca_file = ca;
	struct rec r;
	int got = run(&f, &c, NULL);
	ok(got && c.status == FRAME_ST_OK && c.exit_code == 200, "https, its certificate in http.ca.file: ok (%s)",
	   got ? c.error : "no completion");
	ok(find_req("/s/200/secure", &r) && !strcmp(r.body, "x=1") && !strncmp(r.ctx, "{\"jobName\":\"hello\"", 18),
	   "  the server got the body and the sharding context");
	f = item("GET", url(1, "/s/200/untrusted"));
	if (run(&f, &c, NULL)) {
		ok(c.status == FRAME_ST_FAILED && c.exit_code == 0, "https without http.ca.file: failed (%s)",
		   frame_status_name(c.status));
		ok(strstr(c.error, "SSL certificate problem") != NULL, "  a TLS error: %s", c.error);
	}
	ok(!find_req("/s/200/untrusted", &r), "  no request reached the server");
	char missing[700];
	snprintf(missing, sizeof missing, "%s/no-such-ca.pem", dir);
	f = item("GET", url(1, "/s/200/noca"));
	f.ca_file = missing;
	got = run(&f, &c, NULL);
	ok(got && c.status == FRAME_ST_ERROR, "an http.ca.file that is not there: error, not retried (%s: %s)",
	   got ? frame_status_name(c.status) : "-", got ? c.error : "no completion");
}

static void cancel(struct shm_worker *w, uint64_t xid, uint32_t why)
{
	atomic_store(&w->cancel_xid, xid);
	atomic_store_explicit(&w->cancel, why, memory_order_release);
}

static int busy(void *arg)
{
	return atomic_load(&((struct shm_worker *)arg)->state) == WRK_BUSY;
}

static void test_cancel(void)
{
	struct shm_worker *w = twork_entry(&tw, 0);
	struct frame_complete c;
	struct frame_submit f = item("GET", url(0, "/slow/5000/cancel"));
	f.read_ms = 0;
	twork_publish(&tw, &f);
	tlib_wait_for(busy, w, 3000);
	/* the request is out and the server silent: the worker heartbeats while it waits */
	uint64_t t0 = tlib_now_ms(), oldest = 0, hb = 0;
	while (tlib_now_ms() - t0 < 1000) {
		uint64_t now = wait_now_ns();
		hb = atomic_load(&w->heartbeat_ns);
		if (hb && now > hb && now - hb > oldest) oldest = now - hb;
		usleep(10000);
	}
	ok(oldest < 800 * 1000000ull, "waiting for an answer, the worker heartbeats every tick (500 ms; at most %.0f ms old)",
	   (double)oldest / 1e6);
	/* cancel right after a heartbeat, so that the next look of its own is a tick away: the signal must
	 * wake it */
	for (uint64_t t1 = tlib_now_ms(); atomic_load(&w->heartbeat_ns) == hb && tlib_now_ms() - t1 < 1000;) usleep(1000);
	t0 = tlib_now_ms();
	cancel(w, f.xid, SHM_CANCEL_TIMEOUT);
	kill(tw.pid, SIGUSR1);
	if (twork_completion(&tw, 5000, &c)) {
		uint64_t ms = tlib_now_ms() - t0;
		ok(c.status == FRAME_ST_TIMEOUT, "a timeout cancel mid-request: timeout (%s)", frame_status_name(c.status));
		ok(ms < 250, "  stopped %" PRIu64 " ms after the cancel and its SIGUSR1, not at the next tick", ms);
	} else {
		fail("no completion after a cancel");
	}
	atomic_store(&w->cancel, 0);
	atomic_store(&w->cancel_xid, 0);

	/* the lease in shared memory runs out mid-request (a frozen supervisor sends no signal) */
	f = item("GET", url(0, "/slow/5000/lease"));
	twork_publish(&tw, &f);
	tlib_wait_for(busy, w, 3000);
	usleep(100000);
	struct shm_header *h = seg_header(tw.s);
	t0 = tlib_now_ms();
	atomic_store(&h->lease_deadline_ns, wait_now_ns());
	if (twork_completion(&tw, 5000, &c)) {
		uint64_t ms = tlib_now_ms() - t0;
		ok(c.status == FRAME_ST_CANCELLED, "the lease running out mid-request: cancelled (%s)",
		   frame_status_name(c.status));
		ok(ms < 1000, "  at the next tick (500 ms), not at the server's 5 s (%" PRIu64 " ms)", ms);
	} else {
		fail("no completion after the lease ran out");
	}
	atomic_store(&h->lease_deadline_ns, 0);
}

/* ---- end to end: a supervisor with http jobs in its file ------------------------------------ */



static void test_supervisor(void)
{
	struct tsup t;
	char yaml[4096], v[1200];
	snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t78}\n"
	         "supervisor: {workers: 2, attachSocket: \"@SOCK@\", killGraceSeconds: 1,\n"
	         "             history: {file: \"@DIR@/hist.jsonl\"}}\n"
	         "jobs:\n"
	         "  fine:\n    type: http\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 2\n"
	         "    shardingItemParameters: \"0=a,1=b\"\n"
	         "    props: {http.uri: \"http://127.0.0.1:%1$d/s/200/fine\", http.method: POST, http.data: \"x=1\"}\n"
	         "  broken:\n    type: http\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 1\n    maxRetries: 1\n"
	         "    props: {http.uri: \"http://127.0.0.1:%1$d/s/503/broken\", http.method: GET}\n"
	         "  stuck:\n    type: http\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 1\n    timeoutSeconds: 1\n"
	         "    props: {http.uri: \"http://127.0.0.1:%1$d/slow/10000/stuck\", http.method: GET,\n"
	         "            http.read.timeout.milliseconds: '20000'}\n",
	         http_port);
	tsup_config(&t, "sup", yaml);
	char hist[700];
	snprintf(hist, sizeof hist, "%s/hist.jsonl", t.dir);

	const char *a1[] = { "--run", "fine", NULL };
	int st = tsup_run(&t, a1, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "--run of an http job answered 200: exit 0 (%d)", st);
	struct rec r;
	ok(find_req("/s/200/fine", &r) && !strcmp(r.method, "POST") && !strcmp(r.body, "x=1") &&
	   strstr(r.ctx, "\"jobName\":\"fine\",\"taskId\":\"fine@-@0,1@-@READY@-@"),
	   "  the request as its props say, with ElasticJob's taskId in the sharding context");
	char *l = tsup_history_line(hist, "fine", -1, 1);
	ok(l && tlib_json_field(l, "outcome", v, sizeof v) && !strcmp(v, "\"ok\"") && tlib_json_field(l, "exitCode", v, sizeof v) &&
	   !strcmp(v, "200"), "  history: ok, exitCode 200");
	ok(l && tlib_json_field(l, "output", v, sizeof v) && !strcmp(v, "\"HTTP/1.1 200 OK\\nanswer 200 of /s/200/fine\\n\""),
	   "  history output: the status line and the body (%s)", l ? v : "no record");
	free(l);

	const char *a2[] = { "--run", "broken", NULL };
	st = tsup_run(&t, a2, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 1, "--run of an http job answered 503: exit 1 (%d)", st);
	char *l1 = tsup_history_line(hist, "broken", -1, 1), *l2 = tsup_history_line(hist, "broken", -1, 2);
	ok(l1 && l2, "  two attempts (maxRetries 1): a failed answer is retried");
	ok(l2 && tlib_json_field(l2, "outcome", v, sizeof v) && !strcmp(v, "\"failed\"") && tlib_json_field(l2, "exitCode", v, sizeof v) &&
	   !strcmp(v, "503"), "  history: failed, exitCode 503");
	ok(l2 && tlib_json_field(l2, "cause", v, sizeof v) && !strcmp(v, "\"HTTP/1.1 503 Service Unavailable\""),
	   "  cause: the status line (%s)", l2 ? v : "");
	ok(l2 && tlib_json_field(l2, "output", v, sizeof v) && !strcmp(v, "\"HTTP/1.1 503 Service Unavailable\\nanswer 503 of "
	   "/s/503/broken\\n\""), "  output: the status line and the body");
	free(l1);
	free(l2);

	const char *a3[] = { "--run", "stuck", NULL };
	uint64_t t0 = tlib_now_ms();
	st = tsup_run(&t, a3, 15000);
	uint64_t ms = tlib_now_ms() - t0;
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 1, "--run of a request longer than timeoutSeconds 1: exit 1 (%d)", st);
	l = tsup_history_line(hist, "stuck", -1, 1);
	ok(l && tlib_json_field(l, "outcome", v, sizeof v) && !strcmp(v, "\"timeout\""), "  history: timeout (%s)", l ? v : "");
	ok(l && tlib_json_field(l, "durationMs", v, sizeof v) && atoi(v) >= 950 && atoi(v) < 1600,
	   "  stopped at the second, not at the server's 10 s (%s ms)", l ? v : "");
	ok(ms < 4000, "  the whole run took %" PRIu64 " ms", ms);
	free(l);
}

/* ---- in a cluster ----------------------------------------------------------------------------- */

static struct tzk_server zk;

static int got_req(void *arg)
{
	struct rec r;
	return find_req(arg, &r);
}

static void test_cluster(void)
{
	if (tzk_wait_ready(&zk, 30000) < 0) BAIL_OUT("ZooKeeper did not start (see above)");
	struct tzkup u;
	tzkup_on(&u, zk.connect, "t78", 2000);
	/* an HTTP job as ElasticJob's console registers it: root node HTTP, its config node (as
	 * ElasticJob 3.0.4 dumps one) without ejob.type */
	char node[1024];
	snprintf(node, sizeof node,
	         "cron: 0/1 * * * * ?\ndescription: ''\ndisabled: false\nfailover: false\njobName: theirs\n"
	         "jobParameter: ''\nmaxTimeDiffSeconds: -1\nmisfire: true\nmonitorExecution: true\noverwrite: false\n"
	         "props:\n  http.method: GET\n  http.uri: http://127.0.0.1:%d/s/200/theirs\nreconcileIntervalMinutes: 10\n"
	         "shardingItemParameters: ''\nshardingTotalCount: 2\nstaticSharding: false\n", http_port);
	if (tzk_create(u.zh, "/t78", "", 0, NULL) != ZOK || tzk_create(u.zh, "/t78/theirs", "HTTP", 0, NULL) != ZOK ||
	    tzk_create(u.zh, "/t78/theirs/config", node, 0, NULL) != ZOK)
		BAIL_OUT("cannot create ElasticJob's nodes");
	char jobs[1024];
	snprintf(jobs, sizeof jobs,
	         "  mine:\n    type: http\n    cron: \"0/1 * * * * ?\"\n    shardingTotalCount: 1\n    overwrite: true\n"
	         "    props: {http.uri: \"http://127.0.0.1:%1$d/s/200/mine\", http.method: POST, http.data: \"m=1\"}\n"
	         "  theirs:\n    type: http\n    cron: \"0/1 * * * * ?\"\n    shardingTotalCount: 2\n    overwrite: false\n"
	         "    props: {http.uri: \"http://127.0.0.1:%1$d/s/200/from-the-file\", http.method: GET}\n",
	         http_port);
	static struct tsup a;
	tzkup_config(&u, &a, "cluster", "workers: 2", jobs);
	tzkup_run(&u, &a, "127.0.0.2");
	ok(tzk_wait_data(u.zh, "/t78/mine", "HTTP", 15000), "ejob's http job: its root node says HTTP, as ElasticJob's");
	char *cfg = NULL;
	tzk_get(u.zh, "/t78/mine/config", &cfg, NULL);
	ok(cfg && strstr(cfg, "  http.uri: http://127.0.0.1:") && strstr(cfg, "  http.data: m=1\n") &&
	   strstr(cfg, "  ejob.type: http\n"), "  its config node: the http.* props as written, ejob.type http");
	free(cfg);
	static char mine[] = "/s/200/mine", theirs[] = "/s/200/theirs";
	ok(tlib_wait_for(got_req, mine, 10000), "  it runs: the server gets its POST");
	ok(tlib_wait_for(got_req, theirs, 10000),
	   "ElasticJob's HTTP job (root node HTTP, no ejob.type) runs here with its node's http.uri");
	struct rec r = { .ctx = "" };
	ok(find_req("/s/200/theirs", &r) && !strcmp(r.method, "GET") &&
	   strstr(r.ctx, "{\"jobName\":\"theirs\",\"taskId\":\"theirs@-@0,1@-@READY@-@127.0.0.2@-@"),
	   "  a GET with its sharding context (%s)", r.ctx);
	ok(!find_req("/s/200/from-the-file", &r), "  never the file's uri (overwrite: false: the node wins)");
	int st = tsup_stop(&a, SIGTERM, 10000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the supervisor stops cleanly (%d)", st);
	tzkup_end(&u);
}

int main(void)
{
	tlib_init(90);
	snprintf(dir, sizeof dir, "%s", tlib_tmpdir());
	/* libcurl honours the proxy variables; this test talks to 127.0.0.1 */
	static const char *const proxies[] = { "http_proxy", "https_proxy", "HTTPS_PROXY", "ALL_PROXY", "all_proxy" };
	for (size_t i = 0; i < sizeof proxies / sizeof *proxies; i++) unsetenv(proxies[i]);
	setenv("no_proxy", "*", 1);
	/* ZooKeeper's JVM starts while the worker's cases run */
	if (tzk_spawn(&zk, "zk", &(struct tzk_opts){ .tick_ms = 200 }) < 0) BAIL_OUT("cannot start ZooKeeper");
	start_server();

	char log[600];
	snprintf(log, sizeof log, "%s/worker.log", dir);
	twork_init(&tw, 1, log);
	twork_spawn(&tw, 0);
	test_requests();
	test_failures();
	test_tls();
	test_cancel();
	twork_fini(&tw);
	char *wl = twork_slurp(log, NULL);
	ok(wl && !strstr(wl, "Sanitizer") && !strstr(wl, "runtime error:"), "no sanitizer report in the worker log");
	if (wl && (strstr(wl, "Sanitizer") || strstr(wl, "runtime error:"))) diag("%s", wl);
	free(wl);

	test_supervisor();
	test_cluster();
	return done_testing();
}
