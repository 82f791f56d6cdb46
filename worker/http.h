/* worker/http.h: http jobs (docs/config.md, "http jobs"): one HTTP request per item, made with
 * libcurl as ElasticJob's HttpJobExecutor makes it (method, body, Content-Type, the sharding
 * context in the `shardingContext` header), on the worker's main thread, watching the item's
 * cancel and the read timeout while it waits. Linked into ejob-worker only (libcurl is not in
 * libejob.a). */
#ifndef EJOB_HTTP_H
#define EJOB_HTTP_H

#include "ipc/logline.h"
#include "worker/ejob.h"
#include "worker/outcome.h"

#define HTTP_BODY_KEEP 512u   /* bytes of the answer's body kept for the item's output */
#define HTTP_TICK_MS   500    /* default period of the tick callback */

struct http_spec {
	const ejob_context *ctx;    /* kind HTTP: http_uri, http_method, ... */
	/* The request's line goes to log_fd in the supervisor's log form (ipc/logline.h), as
	 * "<UTC time> ejob-worker[<pid>] INFO <tag> GET http://h/p: HTTP/1.1 200 OK in 0.004s, 2 bytes: ok\n"
	 * in text, or a JSON object with the job, item and attempt. */
	const struct logline_job *job;   /* the job's name, item, attempt and text tag */
	unsigned log_mode;          /* LOGLINE_JSON, LOGLINE_JOURNAL */
	int log_fd;
	int wake_fd;                /* readable means "call tick now" (an eventfd, drained here); -1 */
	/* Called at least every *next_ms ms while the request runs (and on wake_fd): stamp a
	 * heartbeat; return 0, or a cancel reason (enum ejob_cancel): the request is then dropped
	 * at once and the item ends as timeout / cancelled. May lower *next_ms. */
	int (*tick)(void *arg, int *next_ms);
	void *arg;
};

/* Make the request and say how it ended:
 *   a 2xx answer (after redirects)          ok, code the status
 *   any other answer                        failed, code the status, err the status line
 *   no answer: connect, name lookup, TLS,   failed, code 0, err libcurl's reason
 *     a connect timeout, a dropped connection
 *   no byte of the answer for http_read_ms  failed, err "read timeout: ..."
 *   the tick asked to stop                  timeout (EJOB_CANCEL_TIMEOUT) or cancelled
 *   a request that cannot be made (no uri   error, err why
 *     or method, an unreadable CA file)
 * out[] holds the last status line and the first HTTP_BODY_KEEP bytes of the body (cut at a
 * character boundary), when an answer came. */
void http_run(const struct http_spec *sp, struct outcome *out);

#endif
