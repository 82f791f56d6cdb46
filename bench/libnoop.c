/* bench/libnoop.c: native jobs for bench/pool (built as bench/libnoop.so).
 *   noop_item   does nothing: the cost of an item through the pool
 *   stamp_item  writes CLOCK_MONOTONIC (ns) at the moment it starts into slot `item` of the
 *               file named by the job parameter (mapped once), so the bench can measure how
 *               long a dispatch takes to start */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "worker/ejob.h"

int noop_item(const ejob_context *ctx);
int stamp_item(const ejob_context *ctx);

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
