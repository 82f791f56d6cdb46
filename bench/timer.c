/* bench/timer.c: how late a cron fire starts, through the supervisor's timer path, against a
 * bare timerfd with an absolute deadline, measured in one run with the samples interleaved.
 *
 *   bare timerfd    timerfd_create(CLOCK_REALTIME) + timerfd_settime(ABSTIME) + a blocking
 *                   read(); sample = CLOCK_REALTIME after the read - the deadline.
 *   ejob            the supervisor's path: libev's default loop (with signalfd, as the
 *                   supervisor runs it) and its 100 ms tick, supervisor/wtimer with 1,000 other
 *                   jobs' timers armed in its heap, and sched_decide() for the job's cron in the
 *                   callback, as a fire does; sample = CLOCK_REALTIME when the decision says
 *                   "due" - the deadline.
 *   sched, 100 jobs 100 real jobs on "* * * * * ?" in supervisor/run/sched.c, all due in the same
 *                   second; sample = when each start hook runs - its fire time (the last job
 *                   waits for the 99 before it). Shown, no target.
 *
 * Deadlines are 0.5-2.5 ms ahead, at random sub-millisecond offsets; the target is
 * p99(ejob) <= p99(bare) + 200 us. */
#include <errno.h>
#include <ev.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "cron/cron.h"
#include "supervisor/base/log.h"
#include "supervisor/base/wtimer.h"
#include "supervisor/run/sched.h"

#define SAMPLES 2000
#define OTHERS 1000
#define NJOBS 100

static int64_t now_rt(void)
{
	return wtimer_now_ns();
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static double pct(int64_t *v, int n, double p)
{
	qsort(v, (size_t)n, sizeof *v, cmp64);
	int i = (int)(p * (n - 1) + 0.5);
	return (double)v[i] / 1000.0;
}

static int64_t ahead(void)
{
	return 500000 + (int64_t)(rand() % 2000000);
}

/* ---- bare timerfd ------------------------------------------------------------------------------ */

static int64_t bare_once(int fd)
{
	int64_t at = now_rt() + ahead();
	struct itimerspec its = { .it_value = { .tv_sec = (time_t)(at / 1000000000), .tv_nsec = (long)(at % 1000000000) } };
	if (timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
		perror("timerfd_settime");
		exit(1);
	}
	uint64_t n;
	while (read(fd, &n, sizeof n) < 0 && errno == EINTR) {}
	return now_rt() - at;
}

/* ---- the supervisor's path ---------------------------------------------------------------------- */

static struct {
	struct ev_loop *loop;
	wtimer_set_t *w;
	wtimer_t t;
	cron_t *cron;
	tz_t *tz;
	int64_t last;
	int64_t late;
} S;

static void tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
}

static void fire_cb(wtimer_t *t, int64_t now)
{
	struct sched_decision d;
	/* as a fire: the decision for the job's cron, then the stamp */
	sched_decide(S.cron, S.tz, S.last, now, SCHED_TOLERANCE_NS, &d);
	S.late = now_rt() - t->at_ns;
	ev_break(S.loop, EVBREAK_ONE);
}

static void noop_cb(wtimer_t *t, int64_t now)
{
	(void)t;
	(void)now;
}

static int64_t ejob_once(void)
{
	int64_t at = now_rt() + ahead();
	S.last = at / 1000000000 - 1;
	wtimer_arm(S.w, &S.t, at);
	ev_run(S.loop, 0);
	return S.late;
}

/* ---- sched with many jobs ------------------------------------------------------------------------ */

static int64_t job_late[NJOBS * 8];
static int njob_late;

static int start_hook(void *arg, const struct sched_fire_info *f)
{
	(void)arg;
	if (njob_late < NJOBS * 8) job_late[njob_late++] = now_rt() - f->fire_s * 1000000000;
	return 1;   /* nothing to run: the fire is over */
}

int main(void)
{
	log_init("bench/timer");
	log_set_level(LL_WARN);
	srand(7);
	static int64_t bare[SAMPLES], ej[SAMPLES];
	int fd = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC);
	if (fd < 0) {
		perror("timerfd_create");
		return 1;
	}
	S.loop = ev_default_loop(EVFLAG_AUTO | EVFLAG_SIGNALFD);
	S.w = wtimer_new(S.loop, NULL, NULL);
	S.cron = cron_parse("* * * * * ?", NULL);
	S.tz = tz_fixed("UTC", 0);
	if (!S.loop || !S.w || !S.cron || !S.tz) {
		fprintf(stderr, "bench/timer: setup failed\n");
		return 1;
	}
	ev_timer tick;
	ev_timer_init(&tick, tick_cb, 0.1, 0.1);
	ev_timer_start(S.loop, &tick);
	static wtimer_t others[OTHERS];
	int64_t base = now_rt() + 3600ll * 1000000000;
	for (int i = 0; i < OTHERS; i++) {
		wtimer_init(&others[i], noop_cb, NULL);
		wtimer_arm(S.w, &others[i], base + (int64_t)i * 1000000);
	}
	wtimer_init(&S.t, fire_cb, NULL);

	fprintf(stderr, "bench/timer: %d interleaved samples each...\n", SAMPLES);
	for (int i = 0; i < 100; i++) {   /* warm up */
		bare_once(fd);
		ejob_once();
	}
	for (int i = 0; i < SAMPLES; i++) {
		if (i & 1) {
			bare[i] = bare_once(fd);
			ej[i] = ejob_once();
		} else {
			ej[i] = ejob_once();
			bare[i] = bare_once(fd);
		}
	}
	double b50 = pct(bare, SAMPLES, 0.5), b99 = pct(bare, SAMPLES, 0.99);
	double e50 = pct(ej, SAMPLES, 0.5), e99 = pct(ej, SAMPLES, 0.99);

	/* 100 jobs due in the same second, three times */
	fprintf(stderr, "bench/timer: %d jobs on '* * * * * ?' for 3 fires...\n", NJOBS);
	wtimer_free(S.w);
	S.w = NULL;
	static const struct sched_hooks hooks = { .start = start_hook };
	sched_t *sc = sched_new(S.loop, &hooks, NULL);
	static conf_job_t jobs[NJOBS];
	static char names[NJOBS][16];
	for (int i = 0; i < NJOBS; i++) {
		snprintf(names[i], sizeof names[i], "job%d", i);
		jobs[i].name = names[i];
		jobs[i].cron = "* * * * * ?";
		jobs[i].cron_compiled = S.cron;     /* what conf_parse would have compiled */
		jobs[i].time_zone = "UTC";
		jobs[i].tz = S.tz;
		jobs[i].sharding_total_count = 1;
		jobs[i].misfire = true;
	}
	conf_t conf = { .n_jobs = NJOBS, .jobs = jobs };
	if (!sc || sched_set_jobs(sc, &conf) < 0) {
		fprintf(stderr, "bench/timer: sched setup failed\n");
		return 1;
	}
	while (njob_late < 3 * NJOBS) ev_run(S.loop, EVRUN_ONCE);
	double j50 = pct(job_late, njob_late, 0.5), j99 = pct(job_late, njob_late, 0.99);
	double jmax = (double)job_late[njob_late - 1] / 1000.0;
	sched_free(sc);

	printf("| measure | ejob | bare timerfd (absolute deadline) | difference | target |\n");
	printf("|---|---|---|---|---|\n");
	printf("| fire lateness, p50 / p99 (%d samples each, interleaved) | %.1f / %.1f us | %.1f / %.1f us | p99 %+.1f us | p99 <= bare p99 + 200 us |\n",
	       SAMPLES, e50, e99, b50, b99, e99 - b99);
	printf("| lateness of %d jobs due in the same second, p50 / p99 / max | %.1f / %.1f / %.1f us | | | |\n", NJOBS, j50,
	       j99, jmax);
	close(fd);
	tz_free(S.tz);
	cron_free(S.cron);
	return e99 <= b99 + 200.0 ? 0 : 1;
}
