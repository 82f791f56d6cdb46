/* examples/libhello.c: a native job (built as build/examples/libhello.so).
 *
 *   jobs:
 *     hello-native:
 *       type: native
 *       cron: "0/5 * * * * ?"
 *       shardingTotalCount: 4
 *       shardingItemParameters: "0=a,1=b,2=c,3=d"
 *       jobParameter: /var/tmp/hello-native.log
 *       props:
 *         native.library: build/examples/libhello.so
 *         native.symbol: hello_item
 *
 * ejob-worker dlopens the library once and calls `int hello_item(const ejob_context *ctx)` for
 * each item, on its main thread. hello_item appends one line per item to the file named by the
 * job parameter (or writes it to stderr, the supervisor's log, when the parameter is empty):
 *
 *   hello job=hello-native item=1/4 param=b epoch=8589934593 fire=12 attempt=1 task=hello-native@-@0,1@-@READY@-@10.0.0.1@-@4242
 *
 * and returns 0 (ok), or 1 if it cannot open the file, 2 if it cannot write it (failed, with
 * that code). The epoch is the fencing token: storage that records it can refuse a write from
 * an item with a smaller epoch (a supervisor that lost its lease).
 *
 * hello_wait shows cooperative cancellation: it idles until the supervisor asks the item to
 * stop (ejob_cancelled: timeout, shutdown, lost lease) and returns 0 then; if the item's
 * deadline passes first it returns 3. A native job runs inside the worker: while it runs the
 * worker cannot heartbeat, so a long job should poll ejob_cancelled like this. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "worker/ejob.h"

int hello_item(const ejob_context *ctx);
int hello_wait(const ejob_context *ctx);

int hello_item(const ejob_context *ctx)
{
	char line[1024];
	int n = snprintf(line, sizeof line,
	                 "hello job=%s item=%" PRIu32 "/%" PRIu32 " param=%s epoch=%" PRIu64 " fire=%" PRIu64
	                 " attempt=%" PRIu32 " task=%s\n",
	                 ctx->job, ctx->item, ctx->total, ctx->item_param, ctx->epoch, ctx->fire_id,
	                 ctx->attempt, ctx->task_id);
	if (n < 0) return 2;
	if ((size_t)n >= sizeof line) {   /* cut, but still one whole line */
		n = sizeof line - 1;
		line[n - 1] = '\n';
	}
	int fd = 2;
	if (ctx->job_param[0]) {
		fd = open(ctx->job_param, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0) {
			fprintf(stderr, "hello_item: open(%s) failed: %s\n", ctx->job_param, strerror(errno));
			return 1;
		}
	}
	ssize_t w;
	while ((w = write(fd, line, (size_t)n)) < 0 && errno == EINTR) {}   /* O_APPEND: one line, whole */
	if (fd != 2) close(fd);
	return w == n ? 0 : 2;
}

int hello_wait(const ejob_context *ctx)
{
	for (;;) {
		if (ejob_cancelled(ctx)) return 0;
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		uint64_t ms = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
		if (ctx->deadline_ms && ms >= ctx->deadline_ms) return 3;
		struct timespec ts = { 0, 10 * 1000000 };
		nanosleep(&ts, NULL);
	}
}
