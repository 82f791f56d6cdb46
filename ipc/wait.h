/* ipc/wait.h: sleeping and waking across processes (futex on shared memory), and clocks. */
#ifndef EJOB_WAIT_H
#define EJOB_WAIT_H

#include <stdatomic.h>
#include <stdint.h>

/* Sleep while *addr == val, at most timeout_ns (< 0: no limit). Returns 0 when woken or when
 * *addr already differed, -1 with errno ETIMEDOUT or EINTR. Works across processes (the
 * futex is not FUTEX_PRIVATE). */
int wait_futex(_Atomic uint32_t *addr, uint32_t val, int64_t timeout_ns);

/* Wake up to n sleepers on addr; returns how many were woken, -1 on error. */
int wait_wake(_Atomic uint32_t *addr, int n);

uint64_t wait_now_ns(void);        /* CLOCK_MONOTONIC in ns (the clock every shm stamp uses) */
uint64_t wait_realtime_ns(void);   /* CLOCK_REALTIME in ns */

static inline void wait_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

#endif
