/* supervisor/base/wtimer.c: a min-heap of CLOCK_REALTIME deadlines behind one timerfd. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/base/log.h"
#include "supervisor/base/wtimer.h"

struct wtimer_set {
	struct ev_loop *loop;
	ev_io io;
	int fd;
	wtimer_t **heap;
	size_t n, cap;
	int64_t armed_at;           /* what the timerfd is set to; INT64_MIN = disarmed */
	int running;                /* inside the expiry loop: re-arm once at its end */
	void (*clock_set)(void *arg, int64_t now_ns);
	void *arg;
};

int64_t wtimer_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- heap --------------------------------------------------------------------------------- */

static void place(wtimer_set_t *w, size_t i, wtimer_t *t)
{
	w->heap[i] = t;
	t->idx_ = i + 1;
}

static void sift_up(wtimer_set_t *w, size_t i)
{
	wtimer_t *t = w->heap[i];
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (w->heap[p]->at_ns <= t->at_ns) break;
		place(w, i, w->heap[p]);
		i = p;
	}
	place(w, i, t);
}

static void sift_down(wtimer_set_t *w, size_t i)
{
	wtimer_t *t = w->heap[i];
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= w->n) break;
		if (c + 1 < w->n && w->heap[c + 1]->at_ns < w->heap[c]->at_ns) c++;
		if (t->at_ns <= w->heap[c]->at_ns) break;
		place(w, i, w->heap[c]);
		i = c;
	}
	place(w, i, t);
}

static void heap_remove(wtimer_set_t *w, wtimer_t *t)
{
	size_t i = t->idx_ - 1;
	t->idx_ = 0;
	wtimer_t *last = w->heap[--w->n];
	if (i == w->n) return;
	place(w, i, last);
	sift_down(w, i);
	sift_up(w, last->idx_ - 1);
}

/* ---- the timerfd -------------------------------------------------------------------------- */

static void rearm(wtimer_set_t *w)
{
	int64_t at = w->n ? w->heap[0]->at_ns : INT64_MIN;
	if (at == w->armed_at || w->running) return;
	struct itimerspec its;
	memset(&its, 0, sizeof its);
	if (at != INT64_MIN) {
		/* an instant before the epoch (or exactly 0, which would disarm) is simply "now" */
		if (at < 1) at = 1;
		its.it_value.tv_sec = (time_t)(at / 1000000000);
		its.it_value.tv_nsec = (long)(at % 1000000000);
	}
	if (timerfd_settime(w->fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL) < 0) {
		/* cannot happen with a valid fd and a normalised time; say so if it does */
		log_error("timerfd_settime(%d) failed: %s", w->fd, strerror(errno));
		return;
	}
	w->armed_at = w->n ? w->heap[0]->at_ns : INT64_MIN;
}

static void io_cb(struct ev_loop *loop, ev_io *io, int revents)
{
	(void)loop;
	(void)revents;
	wtimer_set_t *w = io->data;
	uint64_t exp;
	ssize_t r = read(w->fd, &exp, sizeof exp);
	int stepped = r < 0 && errno == ECANCELED;
	w->armed_at = INT64_MIN;            /* expired or cancelled: set it again below */
	w->running = 1;
	int64_t now = wtimer_now_ns();
	if (stepped && w->clock_set) w->clock_set(w->arg, now);
	while (w->n && w->heap[0]->at_ns <= now) {
		wtimer_t *t = w->heap[0];
		heap_remove(w, t);
		t->cb(t, now);
		now = wtimer_now_ns();
	}
	w->running = 0;
	rearm(w);
}

wtimer_set_t *wtimer_new(struct ev_loop *loop, void (*clock_set)(void *arg, int64_t now_ns), void *arg)
{
	wtimer_set_t *w = calloc(1, sizeof *w);
	if (!w) return NULL;
	w->fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
	if (w->fd < 0) {
		int e = errno;
		free(w);
		errno = e;
		return NULL;
	}
	w->loop = loop;
	w->armed_at = INT64_MIN;
	w->clock_set = clock_set;
	w->arg = arg;
	ev_io_init(&w->io, io_cb, w->fd, EV_READ);
	w->io.data = w;
	ev_io_start(loop, &w->io);
	return w;
}

void wtimer_free(wtimer_set_t *w)
{
	if (!w) return;
	for (size_t i = 0; i < w->n; i++) w->heap[i]->idx_ = 0;
	ev_io_stop(w->loop, &w->io);
	close(w->fd);
	free(w->heap);
	free(w);
}

void wtimer_init(wtimer_t *t, void (*cb)(wtimer_t *t, int64_t now_ns), void *data)
{
	memset(t, 0, sizeof *t);
	t->cb = cb;
	t->data = data;
}

int wtimer_arm(wtimer_set_t *w, wtimer_t *t, int64_t at_ns)
{
	if (t->idx_) {
		int64_t old = t->at_ns;
		t->at_ns = at_ns;
		if (at_ns < old) sift_up(w, t->idx_ - 1);
		else sift_down(w, t->idx_ - 1);
		rearm(w);
		return 0;
	}
	if (w->n == w->cap) {
		size_t nc = w->cap ? w->cap * 2 : 16;
		wtimer_t **h = realloc(w->heap, nc * sizeof *h);
		if (!h) return -1;
		w->heap = h;
		w->cap = nc;
	}
	t->at_ns = at_ns;
	place(w, w->n++, t);
	sift_up(w, w->n - 1);
	rearm(w);
	return 0;
}

void wtimer_disarm(wtimer_set_t *w, wtimer_t *t)
{
	if (!t->idx_) return;
	heap_remove(w, t);
	rearm(w);
}

size_t wtimer_count(const wtimer_set_t *w)
{
	return w->n;
}
