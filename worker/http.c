/* worker/http.c: http jobs (see http.h).
 *
 * The request is ElasticJob 3.0.x's (HttpJobExecutor, on Java's HttpURLConnection), checked
 * against what Java 17 puts on the wire:
 *   - the method as written; http.data as the body of POST, PUT and DELETE only (no body, not
 *     even a Content-Length, when it is empty; other methods never send it);
 *   - Content-Type: http.content.type when set, with any method; unset, a POST or DELETE with a
 *     body says application/x-www-form-urlencoded, a PUT nothing;
 *   - shardingContext: the sharding context as a default Gson writes it (the script job's
 *     argument, script_context_json), UTF-8;
 *   - HTTP/1.1, no Expect: 100-continue; redirects followed to the same scheme as Java follows
 *     them (a POST answered 301, 302 or 303 goes on as a GET; PUT and DELETE keep their body).
 * One easy handle in a multi handle, so that the wait is ours: curl_multi_poll with the
 * item's wake fd, at most a tick long, between which the cancel, the heartbeat and the read
 * timeout are looked at. */
#include "worker/http.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ipc/json.h"
#include "ipc/wait.h"
#include "worker/script.h"

struct xfer {
	uint64_t rx_ns;          /* the last sign of life of the exchange (CLOCK_MONOTONIC): the
	                            request went out, or bytes came or went; 0: not connected yet */
	curl_off_t ul;           /* bytes of the body sent, at the last progress call */
	char status[128];        /* the last status line, without its CRLF ("HTTP/1.1 200 OK") */
	char location[256];      /* its Location header, "" if none */
	char body[HTTP_BODY_KEEP + 4];   /* the first bytes of the body (4 more: to cut at a character) */
	size_t body_len;
	uint64_t body_total;     /* bytes of the body, all of them */
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_FAILED_INIT;

static void global_init(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ---- callbacks: what the server sends ------------------------------------------------------ */

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n;
	x->rx_ns = wait_now_ns();
	if (len >= 5 && !memcmp(p, "HTTP/", 5)) {   /* a (new) answer: interim, redirect or final */
		size_t l = len;
		while (l && (p[l - 1] == '\n' || p[l - 1] == '\r')) l--;
		if (l >= sizeof x->status) l = sizeof x->status - 1;
		memcpy(x->status, p, l);
		x->status[l] = '\0';
		x->location[0] = '\0';
		x->body_len = 0;
		x->body_total = 0;
	} else if (len > 9 && !strncasecmp(p, "location:", 9)) {
		const char *v = p + 9;
		size_t l = len - 9;
		while (l && (*v == ' ' || *v == '\t')) v++, l--;
		while (l && (v[l - 1] == '\n' || v[l - 1] == '\r' || v[l - 1] == ' ')) l--;
		if (l >= sizeof x->location) l = sizeof x->location - 1;
		memcpy(x->location, v, l);
		x->location[l] = '\0';
	}
	return len;
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n, room = sizeof x->body - x->body_len;
	x->rx_ns = wait_now_ns();
	memcpy(x->body + x->body_len, p, len < room ? len : room);
	x->body_len += len < room ? len : room;
	x->body_total += len;
	return len;   /* the rest is read and dropped: the exchange ends when the answer does */
}

static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	struct xfer *x = arg;
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	if (ulnow != x->ul) {   /* the server takes the body: it is alive */
		x->ul = ulnow;
		x->rx_ns = wait_now_ns();
	}
	return 0;
}

/* ---- text ---------------------------------------------------------------------------------- */

/* At most max of p[0..n) without cutting a UTF-8 character (p holds at least one byte more than
 * max when n > max). */
static size_t utf8_cut(const char *p, size_t n, size_t max)
{
	if (n <= max) return n;
	while (max > 0 && ((unsigned char)p[max] & 0xc0) == 0x80) max--;
	return max;
}

/* The uri for the log: a password in it (http://user:secret@host/) becomes "***". */
static void redact(const char *uri, char *out, size_t len)
{
	const char *auth = strstr(uri, "://");
	auth = auth ? auth + 3 : uri;
	size_t al = strcspn(auth, "/?#");
	const char *at = memrchr(auth, '@', al), *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
	if (colon)
		snprintf(out, len, "%.*s:***%s", (int)(colon - uri), uri, at);
	else
		snprintf(out, len, "%s", uri);
}

/* Up to max bytes of the body for a log line: control characters escaped, cut at a character. */
static void body_for_log(const struct xfer *x, char *out, size_t len, size_t max)
{
	size_t n = utf8_cut(x->body, x->body_len, max), o = 0;
	for (size_t i = 0; i < n && o + 8 < len; i++) {
		unsigned char c = (unsigned char)x->body[i];
		if (c == '\n') o += (size_t)snprintf(out + o, len - o, "\\n");
		else if (c == '\r') o += (size_t)snprintf(out + o, len - o, "\\r");
		else if (c == '\t') o += (size_t)snprintf(out + o, len - o, "\\t");
		else if (c < ' ' || c == 0x7f) o += (size_t)snprintf(out + o, len - o, "\\x%02x", c);
		else out[o++] = (char)c;
	}
	if (n < x->body_total && o + 4 < len) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

/* One line in the supervisor's log form (ipc/logline.h, as script.c writes a script's). */
static void log_line(const struct http_spec *sp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_line(const struct http_spec *sp, const char *fmt, ...)
{
	char msg[2048], line[6 * sizeof msg + 512];
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	size_t n = m < 0 ? 0 : (size_t)m;
	if (n >= sizeof msg) {   /* cut: say so */
		n = sizeof msg - 1;
		memcpy(msg + n - 3, "...", 3);
	}
	struct logline l = { .level = LOGLINE_INFO, .prog = "ejob-worker", .pid = (int)getpid(), .job = sp->job,
	                     .msg = msg, .len = n };
	size_t len = logline_format(line, sizeof line, sp->log_mode, &l);
	for (size_t off = 0; off < len;) {
		ssize_t w = write(sp->log_fd, line + off, len - off);
		if (w < 0 && errno == EINTR) continue;
		if (w <= 0) return;   /* the log is gone: nothing better to do with the line */
		off += (size_t)w;
	}
}

static void set_err(struct outcome *o, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_err(struct outcome *o, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(o->err, sizeof o->err, fmt, ap);
	va_end(ap);
	o->status = status;
}

/* ---- the request ----------------------------------------------------------------------------- */

static int sends_body(const char *method)
{
	return !strcmp(method, "POST") || !strcmp(method, "PUT") || !strcmp(method, "DELETE");
}

/* Errors that no retry mends: the request as given cannot be made. */
static int request_error(CURLcode rc)
{
	switch (rc) {
	case CURLE_URL_MALFORMAT:
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_OUT_OF_MEMORY:
	case CURLE_FAILED_INIT:
	case CURLE_BAD_FUNCTION_ARGUMENT:
	case CURLE_NOT_BUILT_IN:
		return 1;
	default:
		return 0;
	}
}

/* l with "name: value" appended; NULL (l freed) when out of memory. */
static struct curl_slist *header(struct curl_slist *l, const char *name, const char *value)
{
	size_t n = strlen(name) + strlen(value) + 3;
	char *h = malloc(n);
	struct curl_slist *r = NULL;
	if (h) {
		snprintf(h, n, "%s: %s", name, value);   /* sized for it */
		r = curl_slist_append(l, h);
		free(h);
	}
	if (!r) curl_slist_free_all(l);
	return r;
}

/* every fd is CLOEXEC: libcurl makes its sockets without it */
static curl_socket_t open_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	(void)arg;
	(void)purpose;
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

static int setup(CURL *e, const ejob_context *c, struct xfer *x, struct curl_slist **hdrs, const char *ctx_json,
                 char *errbuf)
{
	const char *m = c->http_method;
	int body = sends_body(m) && c->http_data && c->http_data[0];
	int https = !strncasecmp(c->http_uri, "https://", 8);
	struct curl_slist *l = header(NULL, "shardingContext", ctx_json);
	if (c->http_content_type) {
		if (l) l = header(l, "Content-Type", c->http_content_type);
	} else if (body && !strcmp(m, "PUT") && l) {   /* none, as HttpURLConnection sends a PUT */
		struct curl_slist *r = curl_slist_append(l, "Content-Type:");
		if (!r) curl_slist_free_all(l);
		l = r;
	}
	if (l) {
		struct curl_slist *r = curl_slist_append(l, "Expect:");
		if (!r) curl_slist_free_all(l);
		l = r;
	}
	*hdrs = l;
	if (!l) return -1;

	CURLcode r = CURLE_OK;
#define SET(opt, val) do { if (r == CURLE_OK) r = curl_easy_setopt(e, opt, val); } while (0)
	SET(CURLOPT_ERRORBUFFER, errbuf);
	SET(CURLOPT_URL, c->http_uri);
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_REDIR_PROTOCOLS_STR, https ? "https" : "http");
	SET(CURLOPT_FOLLOWLOCATION, 1L);
	SET(CURLOPT_MAXREDIRS, 20L);                     /* Java's http.maxRedirects */
	SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_USERAGENT, "ejob");
	SET(CURLOPT_HTTPHEADER, l);
	SET(CURLOPT_CONNECTTIMEOUT_MS, (long)c->http_connect_ms);   /* 0: libcurl's own (300 s) */
	if (c->http_ca_file) SET(CURLOPT_CAINFO, c->http_ca_file);
	SET(CURLOPT_HEADERFUNCTION, on_header);
	SET(CURLOPT_HEADERDATA, x);
	SET(CURLOPT_WRITEFUNCTION, on_body);
	SET(CURLOPT_WRITEDATA, x);
	SET(CURLOPT_XFERINFOFUNCTION, on_progress);
	SET(CURLOPT_XFERINFODATA, x);
	SET(CURLOPT_NOPROGRESS, 0L);
	SET(CURLOPT_OPENSOCKETFUNCTION, open_socket);
	if (!strcmp(m, "HEAD")) {
		SET(CURLOPT_NOBODY, 1L);
	} else if (body) {
		SET(CURLOPT_POSTFIELDS, c->http_data);
		SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(c->http_data));
		if (strcmp(m, "POST")) {
			SET(CURLOPT_CUSTOMREQUEST, m);
			SET(CURLOPT_POSTREDIR, (long)CURL_REDIR_POST_ALL);   /* PUT and DELETE keep their body */
		}
	} else if (strcmp(m, "GET")) {
		SET(CURLOPT_CUSTOMREQUEST, m);
	}
#undef SET
	if (r != CURLE_OK) {
		snprintf(errbuf, CURL_ERROR_SIZE, "curl_easy_setopt: %s", curl_easy_strerror(r));
		return -2;
	}
	return 0;
}

/* How the exchange ended, as the wait loop saw it. */
struct ending {
	CURLcode res;            /* libcurl's result when it ended by itself */
	int cancel;              /* the tick asked to stop (enum ejob_cancel), 0 if not */
	int read_timeout;        /* the server was silent for http_read_ms */
	double secs;
	char errbuf[CURL_ERROR_SIZE];   /* libcurl's words for res */
};

/* Drive the transfer to its end: curl_multi_perform, then (unless it ended) the tick, the read
 * timeout, and a wait on the connection and the wake fd of at most a tick. */
static void transfer(const struct http_spec *sp, CURLM *m, CURL *e, struct xfer *x, struct ending *end)
{
	uint64_t t0 = wait_now_ns(), read_ns = (uint64_t)sp->ctx->http_read_ms * 1000000u;
	for (;;) {
		int running, done = 0;
		CURLMcode mc = curl_multi_perform(m, &running);
		if (mc != CURLM_OK) {
			end->res = CURLE_FAILED_INIT;
			snprintf(end->errbuf, sizeof end->errbuf, "curl_multi_perform: %s", curl_multi_strerror(mc));
			break;
		}
		CURLMsg *msg;
		int left;
		while ((msg = curl_multi_info_read(m, &left)))
			if (msg->msg == CURLMSG_DONE) {
				end->res = msg->data.result;
				done = 1;
			}
		if (done) break;
		int next_ms = HTTP_TICK_MS;
		if (sp->tick && (end->cancel = sp->tick(sp->arg, &next_ms))) break;
		uint64_t now = wait_now_ns();
		if (!x->rx_ns) {   /* connected (and the TLS handshake done): the request is on its way */
			curl_off_t pre = 0;
			if (curl_easy_getinfo(e, CURLINFO_PRETRANSFER_TIME_T, &pre) == CURLE_OK && pre > 0) x->rx_ns = now;
		}
		if (read_ns && x->rx_ns) {
			if (now - x->rx_ns >= read_ns) {
				end->read_timeout = 1;
				break;
			}
			uint64_t ms = (x->rx_ns + read_ns - now) / 1000000u + 1;
			if (ms < (uint64_t)next_ms) next_ms = (int)ms;
		}
		struct curl_waitfd wfd = { sp->wake_fd, CURL_WAIT_POLLIN, 0 };
		mc = curl_multi_poll(m, sp->wake_fd >= 0 ? &wfd : NULL, sp->wake_fd >= 0 ? 1u : 0u, next_ms, NULL);
		if (mc != CURLM_OK) {
			end->res = CURLE_FAILED_INIT;
			snprintf(end->errbuf, sizeof end->errbuf, "curl_multi_poll: %s", curl_multi_strerror(mc));
			break;
		}
		if (wfd.revents & CURL_WAIT_POLLIN) {
			uint64_t v;
			if (read(sp->wake_fd, &v, sizeof v) < 0) { /* EAGAIN: someone else drained it */ }
		}
	}
	end->secs = (double)(wait_now_ns() - t0) / 1e9;
}

/* The outcome (see http.h) and the request's log line. */
static void verdict(const struct http_spec *sp, CURL *e, const struct xfer *x, const struct ending *end,
                    struct outcome *o)
{
	const ejob_context *c = sp->ctx;
	const char *meth = c->http_method;
	char uri[512];
	redact(c->http_uri, uri, sizeof uri);
	long code = 0;
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
	if (x->status[0]) {   /* the output: the answer's status line and the first bytes of its body */
		size_t sl = strlen(x->status), bl = utf8_cut(x->body, x->body_len, HTTP_BODY_KEEP);
		memcpy(o->out, x->status, sl);
		o->out[sl] = '\n';
		memcpy(o->out + sl + 1, x->body, bl);
		o->out_len = sl + 1 + bl;
	}
	if (end->cancel) {
		o->status = end->cancel == EJOB_CANCEL_TIMEOUT ? EJOB_TIMEOUT : EJOB_CANCELLED;
		const char *reason = end->cancel == EJOB_CANCEL_TIMEOUT ? "timeoutSeconds passed"
		                     : end->cancel == EJOB_CANCEL_LEASE ? "the ZooKeeper lease ran out"
		                     : "the supervisor is stopping";
		snprintf(o->err, sizeof o->err, "stopped after %.3fs, before the answer ended: %s", end->secs, reason);
		log_line(sp, "%s %s: stopped after %.3fs (%s)", meth, uri, end->secs, reason);
		return;
	}
	if (end->read_timeout) {
		o->code = x->status[0] ? (int)code : 0;
		set_err(o, EJOB_FAILED, "read timeout: no data from the server for %" PRIu32
		        " ms (http.read.timeout.milliseconds)%s%s", c->http_read_ms, x->status[0] ? "; it had answered " : "",
		        x->status);
	} else if (end->res != CURLE_OK) {
		const char *why = end->errbuf[0] ? end->errbuf : curl_easy_strerror(end->res);
		if (end->res == CURLE_UNSUPPORTED_PROTOCOL && code >= 300 && code < 400) {
			/* a redirect to the other scheme: not followed (nor does Java follow it) */
			o->code = (int)code;
			set_err(o, EJOB_FAILED, "%s: not followed to %s (a redirect keeps the scheme)",
			        x->status[0] ? x->status : "a redirect", x->location[0] ? x->location : "another scheme");
		} else if (end->res == CURLE_OPERATION_TIMEDOUT) {
			set_err(o, EJOB_FAILED, "connect timeout: %s (http.connect.timeout.milliseconds %" PRIu32 ")", why,
			        c->http_connect_ms);
		} else {
			set_err(o, request_error(end->res) ? EJOB_ERROR : EJOB_FAILED, "%s", why);
		}
	} else {
		o->code = (int)code;
		o->status = code >= 200 && code < 300 ? EJOB_OK : EJOB_FAILED;
		if (o->status != EJOB_OK)
			snprintf(o->err, sizeof o->err, "%s", x->status[0] ? x->status : "an answer without a status line");
		char body[700] = "";
		if (x->body_total) body_for_log(x, body, sizeof body, 160);
		log_line(sp, "%s %s: %s in %.3fs, %" PRIu64 " byte%s%s%s", meth, uri, x->status[0] ? x->status : "(no status)",
		         end->secs, x->body_total, x->body_total == 1 ? "" : "s", body[0] ? ": " : "", body);
		return;
	}
	log_line(sp, "%s %s: %s after %.3fs", meth, uri, o->err, end->secs);
}

void http_run(const struct http_spec *sp, struct outcome *o)
{
	const ejob_context *c = sp->ctx;
	memset(o, 0, sizeof *o);
	if (!c->http_uri || !c->http_uri[0] || !c->http_method || !c->http_method[0]) {
		set_err(o, EJOB_ERROR, "http item without %s (props http.uri and http.method)",
		        !c->http_uri || !c->http_uri[0] ? "a uri" : "a method");
		return;
	}
	pthread_once(&global_once, global_init);
	if (global_rc != CURLE_OK) {
		set_err(o, EJOB_ERROR, "curl_global_init failed: %s", curl_easy_strerror(global_rc));
		return;
	}
	struct xfer x = { 0 };
	struct ending end = { .res = CURLE_OK };
	struct curl_slist *hdrs = NULL;
	json_buf_t js;
	json_init(&js);
	CURL *e = curl_easy_init();
	CURLM *m = curl_multi_init();
	int rs = -1;
	if (!e || !m || script_context_json(c, &js) < 0 || (rs = setup(e, c, &x, &hdrs, js.p, end.errbuf)) < 0 ||
	    curl_multi_add_handle(m, e) != CURLM_OK) {
		set_err(o, EJOB_ERROR, "%s", rs == -2 ? end.errbuf : "out of memory setting up the request");
	} else {
		transfer(sp, m, e, &x, &end);
		verdict(sp, e, &x, &end, o);
		curl_multi_remove_handle(m, e);
	}
	if (e) curl_easy_cleanup(e);
	if (m) curl_multi_cleanup(m);
	curl_slist_free_all(hdrs);
	json_free(&js);
}
