/* supervisor/base/wtimer.h: wall-clock timers at absolute CLOCK_REALTIME instants, for cron fires.
 *
 * Every timer of the supervisor sits in one min-heap; one timerfd (CLOCK_REALTIME,
 * TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET) is armed for the earliest of them and watched by
 * an ev_io. Why not ev_timer/ev_periodic: libev's epoll backend rounds its timeout up to whole
 * milliseconds and computes periodic deadlines from its own cached time, while a timerfd expires
 * on the kernel's hrtimer at the instant asked, and tells us when someone sets the clock.
 *
 * A timer's callback runs at or after its instant, never before (the clock is read again before
 * each callback). When the wall clock is set (stepped, not slewed), `clock_set` runs first and
 * every timer is then checked again against the new time: timers whose instant has now passed
 * run at once, the others wait for their instant on the new clock. */
#ifndef EJOB_WTIMER_H
#define EJOB_WTIMER_H

#include <ev.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wtimer_set wtimer_set_t;

typedef struct wtimer wtimer_t;
struct wtimer {
	int64_t at_ns;                 /* CLOCK_REALTIME instant */
	size_t idx_;                   /* private: heap position + 1; 0 = not armed */
	void (*cb)(wtimer_t *t, int64_t now_ns);   /* disarmed before it runs; may re-arm */
	void *data;
};

/* clock_set(arg, now_ns): the wall clock was set; may be NULL. */
wtimer_set_t *wtimer_new(struct ev_loop *loop, void (*clock_set)(void *arg, int64_t now_ns), void *arg);
void wtimer_free(wtimer_set_t *w);     /* timers still armed are forgotten, not run */

void wtimer_init(wtimer_t *t, void (*cb)(wtimer_t *t, int64_t now_ns), void *data);
/* Arm (or move) t to instant at_ns; returns 0, or -1 with errno ENOMEM. */
int wtimer_arm(wtimer_set_t *w, wtimer_t *t, int64_t at_ns);
void wtimer_disarm(wtimer_set_t *w, wtimer_t *t);
static inline int wtimer_armed(const wtimer_t *t) { return t->idx_ != 0; }
size_t wtimer_count(const wtimer_set_t *w);

int64_t wtimer_now_ns(void);           /* CLOCK_REALTIME in ns */

#endif
