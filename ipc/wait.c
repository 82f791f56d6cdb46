/* ipc/wait.c: futex wrappers and clocks. */
#include "ipc/wait.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int wait_futex(_Atomic uint32_t *addr, uint32_t val, int64_t timeout_ns)
{
	struct timespec ts, *tsp = NULL;
	if (timeout_ns >= 0) {
		ts.tv_sec = timeout_ns / 1000000000;
		ts.tv_nsec = timeout_ns % 1000000000;
		tsp = &ts;
	}
	/* FUTEX_WAIT's timeout is relative; an EINTR is returned to the caller, who re-checks its
	 * condition anyway, so a restart here would only stretch the deadline. */
	long r = syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT, val, tsp, NULL, 0);
	if (r == 0 || errno == EAGAIN)
		return 0;
	return -1;
}

int wait_wake(_Atomic uint32_t *addr, int n)
{
	long r = syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, n > 0 ? n : INT_MAX, NULL, NULL, 0);
	return r < 0 ? -1 : (int)r;
}

uint64_t wait_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t wait_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
