/* bench/libnoop.c: native jobs for bench/pool and bench/scale (built as bench/libnoop.so).
 *   noop_item     does nothing: the cost of an item through the pool
 *   stamp_item    writes CLOCK_MONOTONIC (ns) at the moment it starts into slot `item` of the
 *                 file named by the job parameter (mapped once), so the bench can measure how
 *                 long a dispatch takes to start
 *   rtstamp_item  appends "REALTIME_NS JOB ITEM FIRE_ID TASK_ID" to the file named by the job
 *                 parameter, with one write(2) (O_APPEND: lines of several workers never mix),
 *                 first thing: when an item of a fire started, against the fire's time, across
 *                 processes and machines' clocks alike
 *   fail_item     fails (returns 3) with 1,020 bytes of output, 20 lines: an item whose last
 *                 record carries its cause and output tail (bench/zk --round-trips) */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "worker/ejob.h"

int noop_item(const ejob_context *ctx);
int stamp_item(const ejob_context *ctx);
int rtstamp_item(const ejob_context *ctx);
int fail_item(const ejob_context *ctx);

int noop_item(const ejob_context *ctx)
{
	(void)ctx;
	return 0;
}

int stamp_item(const ejob_context *ctx)
{
	static uint64_t *map;
	static size_t n;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (!map) {
		int fd = open(ctx->job_param, O_RDWR | O_CLOEXEC);
		if (fd < 0) return 1;
		off_t len = lseek(fd, 0, SEEK_END);
		map = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		if (map == MAP_FAILED) { map = NULL; return 2; }
		n = (size_t)len / sizeof *map;
	}
	if (ctx->item < n) __atomic_store_n(&map[ctx->item], now, __ATOMIC_RELEASE);
	return 0;
}

int rtstamp_item(const ejob_context *ctx)
{
	static int fd = -1;              /* kept open: one file per worker process */
	static char path[512];
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (fd < 0 || strcmp(path, ctx->job_param)) {
		if (fd >= 0) close(fd);
		snprintf(path, sizeof path, "%s", ctx->job_param);
		fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0) return 1;
	}
	char line[512];
	int n = snprintf(line, sizeof line, "%" PRId64 " %s %" PRIu32 " %" PRIu64 " %s\n",
	                 (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, ctx->job, ctx->item, ctx->fire_id,
	                 ctx->task_id ? ctx->task_id : "-");
	if (n < 0 || (size_t)n >= sizeof line) return 2;
	ssize_t w;
	while ((w = write(fd, line, (size_t)n)) < 0 && errno == EINTR) {}
	return w == n ? 0 : 3;
}

int fail_item(const ejob_context *ctx)
{
	char out[1021];
	for (int i = 0; i < 20; i++) snprintf(out + 51 * i, 52, "line %02d of what a failing job says before it ends.\n", i);
	if (ejob_set_output(ctx, out, 1020) < 0) return 4;
	return 3;
}
