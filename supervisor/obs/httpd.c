/* supervisor/obs/httpd.c: libmicrohttpd on the loop (httpd.h). MHD runs without a thread of its own
 * (MHD_USE_EPOLL, no MHD_USE_INTERNAL_POLLING_THREAD): its epoll fd is watched by an ev_io, and
 * MHD_run() is called when it is readable and when MHD_get_timeout() says (an ev_timer); so every
 * request is answered on the loop's thread, and the pages read the loop's state directly. */
#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "conf/conf.h"
#include "supervisor/base/dlib.h"
#include "supervisor/base/log.h"
#include "supervisor/obs/httpd.h"

#if MHD_VERSION < 0x00097002
typedef int MHD_Result_t;
#else
typedef enum MHD_Result MHD_Result_t;
#endif

struct httpd {
	struct ev_loop *loop;
	struct MHD_Daemon *d;
	httpd_page_fn page;
	void *arg;
	ev_io io_w;
	ev_timer timer_w;
	int starting;               /* inside MHD_start_daemon */
	char start_msg[256];        /* libmicrohttpd's first message meanwhile */
};

static void reschedule(httpd_t *h)
{
	MHD_UNSIGNED_LONG_LONG ms;
	ev_timer_stop(h->loop, &h->timer_w);
	if (MHD_get_timeout(h->d, &ms) == MHD_YES) {
		ev_timer_set(&h->timer_w, (double)ms / 1000.0, 0);
		ev_timer_start(h->loop, &h->timer_w);
	}
}

static void run(httpd_t *h)
{
	MHD_run(h->d);          /* never waits: epoll_wait with a 0 timeout inside */
	reschedule(h);
}

static void io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	run(w->data);
}

static void timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	run(w->data);
}

static MHD_Result_t answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                           const char *version, const char *upload, size_t *upload_len, void **req)
{
	httpd_t *h = cls;
	(void)version;
	(void)upload;
	if (!*req) {            /* the headers: answer once the (empty) body is in */
		*req = h;
		return MHD_YES;
	}
	if (*upload_len) {
		*upload_len = 0;        /* a body is read and dropped */
		return MHD_YES;
	}
	char *body = NULL;
	size_t len = 0;
	const char *ctype = "text/plain; charset=utf-8";
	int code;
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		code = 405;
		body = strdup("only GET\n");
		len = body ? strlen(body) : 0;
	} else {
		code = h->page(h->arg, url, &body, &len, &ctype);
	}
	if (!body) code = 500;
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body ? body : (void *)"", body ? MHD_RESPMEM_MUST_FREE
	                                                                                         : MHD_RESPMEM_PERSISTENT);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (code == 405) MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	MHD_Result_t ret = MHD_queue_response(c, (unsigned)code, r);
	MHD_destroy_response(r);
	return ret;
}

/* libmicrohttpd's own messages. While it starts, its reason for a failure ("Failed to bind to port
 * 9464: Address already in use") is kept for ejob's one error line (which names the address and
 * the fix) and goes to the log at DEBUG only; once it serves, what it says (a connection refused at
 * the limit, ...) is a WARN. */
static void mhd_log(void *arg, const char *fmt, va_list ap)
{
	httpd_t *h = arg;
	char line[512];
	vsnprintf(line, sizeof line, fmt, ap);
	size_t n = strlen(line);
	while (n && line[n - 1] == '\n') line[--n] = '\0';
	if (h->starting) {
		if (!h->start_msg[0]) snprintf(h->start_msg, sizeof h->start_msg, "%s", line);
		log_debug("metrics: libmicrohttpd: %s", line);
		return;
	}
	log_warn("metrics: %s", line);
}

httpd_t *httpd_new(struct ev_loop *loop, const char *addr, httpd_page_fn page, void *arg, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	unsigned sl;
	if (conf_listen_addr(addr, &ss, &sl) < 0) {
		snprintf(err, errlen, "metrics: %s is not IPv4:PORT or [IPv6]:PORT", addr);
		errno = EINVAL;
		return NULL;
	}
	if (dlib_need(&dlib_mhd) < 0) {
		snprintf(err, errlen, "metrics: %s", dlib_error(&dlib_mhd));
		errno = ENOENT;
		return NULL;
	}
	httpd_t *h = calloc(1, sizeof *h);
	if (!h) {
		snprintf(err, errlen, "metrics: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	h->loop = loop;
	h->page = page;
	h->arg = arg;
	unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG | (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
	/* MHD makes its sockets and its epoll fd CLOEXEC (SOCK_CLOEXEC, accept4, epoll_create1) */
	/* the logger first: libmicrohttpd takes it only there (else it logs that it is not, with its
	 * default logger, on stderr) */
	h->starting = 1;
	errno = 0;
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, answer, h, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
	                        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
	                        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
	int e = errno;
	h->starting = 0;
	if (!h->d) {
		/* libmicrohttpd leaves errno as bind(2) or listen(2) set it; its message says it too */
		if (!e) e = strstr(h->start_msg, "in use") ? EADDRINUSE : EINVAL;
		char said[300] = "";
		if (h->start_msg[0]) snprintf(said, sizeof said, " (libmicrohttpd: %s)", h->start_msg);
		if (e == EADDRINUSE)
			snprintf(err, errlen, "metrics: cannot listen on %s: %s: another process holds the port; stop it, or give "
			         "this supervisor another address with --metrics ADDR or supervisor.metrics", addr, strerror(e));
		else
			snprintf(err, errlen, "metrics: cannot listen on %s: %s%s", addr, strerror(e), said);
		free(h);
		errno = e;
		return NULL;
	}
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);
	if (!i || i->epoll_fd < 0) {
		snprintf(err, errlen, "metrics: libmicrohttpd has no epoll fd");
		MHD_stop_daemon(h->d);
		free(h);
		errno = ENOSYS;
		return NULL;
	}
	ev_io_init(&h->io_w, io_cb, i->epoll_fd, EV_READ);
	h->io_w.data = h;
	ev_io_start(loop, &h->io_w);
	ev_timer_init(&h->timer_w, timer_cb, 0, 0);
	h->timer_w.data = h;
	reschedule(h);
	log_info("metrics: serving /metrics, /healthz and /status on http://%s", addr);
	return h;
}

void httpd_free(httpd_t *h)
{
	if (!h) return;
	ev_io_stop(h->loop, &h->io_w);
	ev_timer_stop(h->loop, &h->timer_w);
	MHD_stop_daemon(h->d);
	free(h);
}
