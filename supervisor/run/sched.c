/* supervisor/run/sched.c: the jobs' fire times on wall-clock timers; misfire and catch-up. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipc/wait.h"
#include "supervisor/base/log.h"
#include "supervisor/base/nidx.h"
#include "supervisor/run/cronshare.h"
#include "supervisor/run/events.h"
#include "supervisor/run/sched.h"

#define NS 1000000000ll

/* ---- the pure part ------------------------------------------------------------------------ */

static int64_t floor_s(int64_t ns)
{
	return ns >= 0 ? ns / NS : -((-ns + NS - 1) / NS);
}

/* The latest fire time t with lo < t <= hi, or INT64_MIN for none. Probes windows (hi-d, hi]
 * of doubling size, then walks forward inside the first window that has a fire: the half of it
 * nearer hi had none, so the walk stays short for dense crons and sparse ones alike. */
static int64_t latest_in(const cron_t *c, const tz_t *tz, int64_t lo, int64_t hi)
{
	if (hi <= lo) return INT64_MIN;
	for (int64_t d = 1;; d = d > INT64_MAX / 4 ? INT64_MAX / 2 : d * 2) {
		int64_t from = hi - lo > d ? hi - d : lo;
		int64_t f;
		if (!cron_after(c, tz, from, &f) || f > hi) {
			if (from == lo) return INT64_MIN;
			continue;
		}
		for (;;) {
			int64_t n;
			if (!cron_after(c, tz, f, &n) || n > hi) return f;
			f = n;
		}
	}
}

void sched_decide(const cron_t *cron, const tz_t *tz, int64_t last_s, int64_t now_ns, int64_t tolerance_ns,
                  struct sched_decision *d)
{
	memset(d, 0, sizeof *d);
	int64_t now_s = floor_s(now_ns);
	d->clock_back = now_s < last_s;
	int64_t next;
	if (!cron_after(cron, tz, last_s, &next)) {
		d->verdict = SCHED_NEVER;
		return;
	}
	if (next > now_s) {         /* fire times are whole seconds: next > now_s <=> next*NS > now_ns */
		d->verdict = SCHED_WAIT;
		d->next_s = next;
		return;
	}
	d->verdict = SCHED_DUE;
	/* count the passed fires (last, now] up to the cap; when the walk ends first, it found the
	 * latest one too */
	uint32_t count = 1;
	int capped = 0;
	int64_t t = next, prev = INT64_MIN;
	for (;;) {
		int64_t n;
		if (!cron_after(cron, tz, t, &n) || n > now_s) break;
		if (count == SCHED_MISSED_CAP) {
			capped = 1;
			t = latest_in(cron, tz, t, now_s);
			prev = INT64_MIN;
			break;
		}
		prev = t;
		t = n;
		count++;
	}
	d->latest_s = t;
	d->on_time = now_ns - t * NS <= tolerance_ns;
	d->missed = capped ? SCHED_MISSED_CAP : d->on_time ? count - 1 : count;
	if (d->on_time && d->missed) d->latest_missed_s = prev != INT64_MIN ? prev : latest_in(cron, tz, last_s, t - 1);
	else if (!d->on_time) d->latest_missed_s = t;
}

/* ---- jobs ------------------------------------------------------------------------------------- */

struct sched_job {
	char *name;
	/* What it is scheduled by, from the config in force (job_take): nothing else of the job's
	 * config is kept here. The zone is the config's (it owns it): the config must outlive it. */
	int present;                /* 0 once removed: no more fires */
	int seen;                   /* sched_set_jobs: in the new config */
	int disabled, misfire;      /* disabled, misfire */
	int64_t last_trigger_ms;    /* the id of its last triggered fire */
	struct owed_run {           /* workflow runs triggered while a fire ran: each fires after it */
		uint64_t run;
		int64_t at_ms;
		char *root;
	} *owed;
	uint32_t nowed;
	const tz_t *tz;             /* the config's zone (NULL: the supervisor's) */
	void *owner;                /* the owner's handle of the job, handed to start() with each fire */
	char *cron_text, *tz_text;  /* the config's cron and timeZone when cron was made */
	const cron_t *cron;         /* the config's compiled cron with Quartz's year limit of that day */
	struct cronref *cron_ref;   /* cron's share (s->crons) */
	int64_t last_s;             /* latest fire time handled */
	wtimer_t timer;
	int running;                /* a fire started (start() returned 0) and has not ended */
	int64_t running_since_s;    /* the fire time of that fire */
	int said_owed;              /* "missed fires get a catch-up run" is logged */
	int said_never;             /* "will not fire again" is logged */
	uint32_t misfired;          /* fires not run as themselves since the last run (capped) */
	int64_t misfire_at_s;       /* the latest of them */
	/* The latest of them, ascending (nlisted <= misfired): SCHED_LISTED times, allocated at the
	 * first missed fire (most jobs never miss one; 10,000 jobs held 10 MB of them). */
	int64_t *listed;
	uint32_t nlisted;
	int64_t *run_list;          /* the catch-up's list (swapped with listed when it starts) */
	int64_t run_one;            /* a plain fire's time */
	const int64_t *run_fires;   /* what the running fire stands for (missed again if it is): one of them */
	uint32_t run_nlisted, run_missed;
	/* What the log last said is in force. The configs a loop callback hands over are said once
	 * it returns (said_w): a reload takes the file's config, then the config node's where that
	 * is in force; the log says what changed from the one to the other, not each step. */
	char *said_cron, *said_tz;  /* said_cron NULL: a one-off job */
	int said_set;               /* said_* hold what was said (0 for a new job) */
	int said_disabled;
	int said_due;               /* a config was taken since: said_w says it */
	int64_t said_last_s;        /* last_s when the first of them was taken */
	sched_t *s;
};

struct sched {
	struct ev_loop *loop;
	wtimer_set_t *timers;
	struct sched_hooks hooks;
	events_t *events;           /* fire times that did not run go there (NULL: nowhere) */
	void *arg;
	struct sched_job **jobs;
	size_t n, cap;
	struct nidx *ix;            /* jobs by name (a pointer: sched_next's s is const) */
	cronshare_t *crons;         /* the jobs' crons, one per expression and year limit */
	tz_t *local;                /* the supervisor's zone, for jobs without timeZone */
	int stopped;
	int64_t ref_real, ref_mono; /* a (realtime, monotonic) pair, to size clock steps */
	ev_prepare said_w;          /* active while a job's said_due is set */
};

static void fmt_time(int64_t s, const tz_t *tz, char *buf, size_t len)
{
	if (tz_format_iso(tz, s, buf, len) < 0) snprintf(buf, len, "%" PRId64, s);
}

/* The job's zone: its config's (loaded with it), else the supervisor's. */
static const tz_t *job_tz(const struct sched_job *j)
{
	return j->tz ? j->tz : j->s->local;
}

static void arm_next(struct sched_job *j)
{
	sched_t *s = j->s;
	if (s->stopped || !j->present || j->disabled || !j->cron) {
		wtimer_disarm(s->timers, &j->timer);
		return;
	}
	int64_t next;
	if (!cron_after(j->cron, job_tz(j), j->last_s, &next)) {
		if (!j->said_never)
			log_info("job %s: cron '%s' has no fire time after this; the job will not fire again", j->name,
			         j->cron_text);
		j->said_never = 1;
		wtimer_disarm(s->timers, &j->timer);
		return;
	}
	if (wtimer_arm(s->timers, &j->timer, next * NS) < 0)
		log_error("job %s: cannot set its timer: %s; it will not fire", j->name, strerror(errno));
}

/* Start one fire through the hook. The job counts as running before the hook is called: a hook
 * may end the fire before it returns (a fire with nothing to run here), and that end must find
 * it running, or the job would look busy for good and every later fire would be a misfire. */
static int start_fire_ms(struct sched_job *j, int64_t fire_s, int64_t fire_ms, int catch_up, uint32_t missed,
                         const char *param, uint64_t run, const char *root)
{
	sched_t *s = j->s;
	if (!catch_up) {
		j->run_one = fire_s;
		j->run_fires = &j->run_one;
		j->run_nlisted = j->run_missed = 1;
	}
	struct sched_fire_info f = {
		.job = j->name, .owner = j->owner, .fire_s = fire_s, .fire_ms = fire_ms, .catch_up = catch_up,
		.missed = missed, .fires_s = j->run_fires, .nfires = j->run_nlisted, .handle = j, .param = param,
		.run = run, .root = root,
	};
	j->running = 1;
	j->running_since_s = fire_s;
	int r = s->hooks.start(s->arg, &f);
	if (r != 0) j->running = 0;
	return r;
}

static int start_fire(struct sched_job *j, int64_t fire_s, int catch_up, uint32_t missed)
{
	return start_fire_ms(j, fire_s, fire_s * 1000, catch_up, missed, NULL, 0, NULL);
}

/* t joins the listed missed times (ascending, no repeats; the oldest goes when full) */
static void list_add(struct sched_job *j, int64_t t)
{
	/* no room for the list: the fire is still counted (misfired), only not named */
	if (!j->listed && !(j->listed = malloc(SCHED_LISTED * sizeof *j->listed))) return;
	uint32_t k = j->nlisted;
	while (k > 0 && j->listed[k - 1] > t) k--;
	if (k > 0 && j->listed[k - 1] == t) return;
	if (j->nlisted == SCHED_LISTED) {
		if (k == 0) return;                 /* older than every listed one */
		memmove(j->listed, j->listed + 1, (k - 1) * sizeof *j->listed);
		k--;
	} else {
		memmove(j->listed + k + 1, j->listed + k, (j->nlisted - k) * sizeof *j->listed);
		j->nlisted++;
	}
	j->listed[k] = t;
}

static void note_missed(struct sched_job *j, uint32_t n, int64_t at_s);
static void run_missed_again(struct sched_job *j);

/* n fire times (the latest at_s) that did not run: the event */
static void skipped(struct sched_job *j, int64_t at_s, uint32_t n, const char *reason, const char *why)
{
	struct event ev = { .type = EVT_FIRE_SKIPPED, .job = j->name, .fire_ms = (uint64_t)at_s * 1000u, .count = n,
	                    .reason = reason, .detail = why };
	events_emit(j->s->events, &ev);
}

/* The job is idle: run one catch-up for everything missed, or drop it. A catch-up that cannot
 * start now (the hook says why: not connected, say) stays owed, and sched_kick() tries again.
 * The catch-up names the fires it stands for (the latest SCHED_LISTED; the rest are counted). */
static void flush_misfire(struct sched_job *j)
{
	if (!j->misfired || j->running || j->s->stopped || !j->present || j->disabled) return;
	uint32_t n = j->misfired;
	int64_t at = j->misfire_at_s;
	char when[64];
	fmt_time(at, job_tz(j), when, sizeof when);
	if (!j->misfire) {
		j->misfired = 0;
		j->misfire_at_s = 0;
		j->nlisted = 0;
		log_info("job %s: %" PRIu32 "%s missed fire%s (latest %s) dropped: misfire is off", j->name, n,
		         n >= SCHED_MISSED_CAP ? "+" : "", n == 1 ? "" : "s", when);
		return;
	}
	int64_t *was = j->run_list;
	j->run_list = j->listed;
	j->listed = was;
	j->run_fires = j->run_list ? j->run_list : &j->run_one;
	j->run_nlisted = j->run_list ? j->nlisted : 0;
	j->run_missed = n;
	j->misfired = 0;
	j->misfire_at_s = 0;
	j->nlisted = 0;
	int r = start_fire(j, at, 1, n);
	if (r == 0) {
		log_info("job %s: one catch-up run for %" PRIu32 "%s missed fire%s (latest %s)", j->name, n,
		         n >= SCHED_MISSED_CAP ? "+" : "", n == 1 ? "" : "s", when);
	} else if (r > 0) {
		log_info("job %s: the catch-up run for %" PRIu32 "%s missed fire%s (latest %s) has nothing to run here", j->name,
		         n, n >= SCHED_MISSED_CAP ? "+" : "", n == 1 ? "" : "s", when);
	} else {
		/* still owed: the hook logged why it cannot run now */
		run_missed_again(j);
		if (!j->said_owed)
			log_info("job %s: %" PRIu32 "%s missed fire%s (latest %s) get%s one catch-up run as soon as the job can run",
			         j->name, n, n >= SCHED_MISSED_CAP ? "+" : "", n == 1 ? "" : "s", when, n == 1 ? "s" : "");
		j->said_owed = 1;
		return;
	}
	j->said_owed = 0;
}

static void note_missed(struct sched_job *j, uint32_t n, int64_t at_s)
{
	uint64_t m = (uint64_t)j->misfired + n;
	j->misfired = m > SCHED_MISSED_CAP ? SCHED_MISSED_CAP : (uint32_t)m;
	if (at_s > j->misfire_at_s) j->misfire_at_s = at_s;
	list_add(j, at_s);
}

/* The fire started last did not run: every fire it stood for is missed again. */
static void run_missed_again(struct sched_job *j)
{
	uint32_t listed = j->run_nlisted, counted = j->run_missed > listed ? j->run_missed - listed : 0;
	for (uint32_t i = 0; i < listed; i++) note_missed(j, 1, j->run_fires[i]);
	if (counted) note_missed(j, counted, listed ? j->run_fires[0] : j->running_since_s);
}

static void job_due(wtimer_t *t, int64_t now_ns)
{
	struct sched_job *j = t->data;
	sched_t *s = j->s;
	if (s->stopped || !j->present || !j->cron) return;
	struct sched_decision d;
	sched_decide(j->cron, job_tz(j), j->last_s, now_ns, SCHED_TOLERANCE_NS, &d);
	if (d.verdict != SCHED_DUE) {
		arm_next(j);            /* WAIT: woken early (cannot happen with timerfd); NEVER: stop */
		return;
	}
	j->last_s = d.latest_s;
	char when[64];
	if (d.missed) {
		fmt_time(d.latest_missed_s, job_tz(j), when, sizeof when);
		log_warn("job %s: %" PRIu32 "%s fire time%s passed without running (latest %s, now %.3fs after it): "
		         "the clock was stepped forward or the supervisor was held up",
		         j->name, d.missed, d.missed >= SCHED_MISSED_CAP ? "+" : "", d.missed == 1 ? "" : "s", when,
		         (double)(now_ns - d.latest_missed_s * NS) / 1e9);
		skipped(j, d.latest_missed_s, d.missed, "late", "the fire time passed without running: the clock was stepped "
		        "forward or the supervisor was held up");
		note_missed(j, d.missed, d.latest_missed_s);
	}
	if (d.on_time) {
		if (j->running) {
			char since[64];
			fmt_time(d.latest_s, job_tz(j), when, sizeof when);
			fmt_time(j->running_since_s, job_tz(j), since, sizeof since);
			log_info("job %s: fire %s not started: the fire of %s still runs; it counts as missed (misfire %s)",
			         j->name, when, since, j->misfire ? "on: one catch-up run follows" : "off: dropped");
			char why[160];
			snprintf(why, sizeof why, "the fire of %s still runs (misfire %s)", since,
			         j->misfire ? "on: one catch-up run follows" : "off: dropped");
			skipped(j, d.latest_s, 1, "still_running", why);
			note_missed(j, 1, d.latest_s);
		} else if (start_fire(j, d.latest_s, 0, 0) < 0) {
			/* could not start (the hook said why): a missed fire like any other, whose
			 * catch-up waits for sched_kick() */
			note_missed(j, 1, d.latest_s);
			arm_next(j);
			return;
		}
	}
	flush_misfire(j);
	arm_next(j);
}

static void clock_set(void *arg, int64_t now_ns)
{
	sched_t *s = arg;
	int64_t mono = (int64_t)wait_now_ns();
	int64_t step = (now_ns - s->ref_real) - (mono - s->ref_mono);
	s->ref_real = now_ns;
	s->ref_mono = mono;
	if (step < 0)
		log_warn("the wall clock was set back by %.3fs: fire times already handled will not run again; "
		         "each job waits for its first fire time after them", (double)-step / 1e9);
	else
		log_warn("the wall clock was set forward by %.3fs: fire times skipped count as missed", (double)step / 1e9);
}

void sched_set_events(sched_t *s, events_t *e)
{
	s->events = e;
}

static void say_taken(struct ev_loop *loop, ev_prepare *w, int revents);

sched_t *sched_new(struct ev_loop *loop, const struct sched_hooks *h, void *arg)
{
	sched_t *s = calloc(1, sizeof *s);
	if (!s) return NULL;
	s->loop = loop;
	s->hooks = *h;
	s->arg = arg;
	s->ix = calloc(1, sizeof *s->ix);   /* NULL: found by a loop, as before */
	s->crons = cronshare_new();
	tz_err_t err;
	s->local = tz_load_default(&err);
	if (!s->local) {
		log_error("the supervisor's time zone: %s; using UTC", err.msg);
		s->local = tz_fixed("UTC", 0);
	}
	ev_prepare_init(&s->said_w, say_taken);
	s->said_w.data = s;
	s->timers = wtimer_new(loop, clock_set, s);
	if (!s->local || !s->timers || !s->crons) {
		cronshare_free(s->crons);
		free(s->ix);
		tz_free(s->local);
		wtimer_free(s->timers);
		free(s);
		return NULL;
	}
	s->ref_real = wtimer_now_ns();
	s->ref_mono = (int64_t)wait_now_ns();
	return s;
}

static void job_free(struct sched_job *j)
{
	if (!j) return;
	wtimer_disarm(j->s->timers, &j->timer);
	cronshare_put(j->s->crons, j->cron_ref);
	for (uint32_t k = 0; k < j->nowed; k++) free(j->owed[k].root);
	free(j->owed);
	free(j->listed);
	free(j->run_list);
	free(j->cron_text);
	free(j->tz_text);
	free(j->said_cron);
	free(j->said_tz);
	free(j->name);
	free(j);
}

void sched_free(sched_t *s)
{
	if (!s) return;
	ev_prepare_stop(s->loop, &s->said_w);
	for (size_t i = 0; i < s->n; i++) job_free(s->jobs[i]);
	free(s->jobs);
	if (s->ix) nidx_free(s->ix);
	free(s->ix);
	cronshare_free(s->crons);
	wtimer_free(s->timers);
	tz_free(s->local);
	free(s);
}

static int streq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static int year_of(int64_t s)
{
	time_t t = (time_t)s;
	struct tm tm;
	gmtime_r(&t, &tm);
	return tm.tm_year + 1900;
}

/* (Re)build a job's cron from its config, which compiled it and loaded its zone; 0, or -1
 * (logged; the job will not fire). A one-off job (no cron) has no timer: 0, and j->cron NULL. */
static int job_load(struct sched_job *j, const conf_job_t *c, int64_t now_s)
{
	cronshare_put(j->s->crons, j->cron_ref);
	free(j->cron_text);
	free(j->tz_text);
	j->cron = NULL;
	j->cron_ref = NULL;
	j->said_never = 0;
	j->cron_text = c->cron ? strdup(c->cron) : NULL;
	j->tz_text = c->time_zone ? strdup(c->time_zone) : NULL;
	if ((c->cron && !j->cron_text) || (c->time_zone && !j->tz_text)) {
		log_error("job %s: out of memory; it will not fire", j->name);
		return -1;
	}
	if (!c->cron) return 0;
	if (c->time_zone && !c->tz) {
		log_error("job %s: timeZone: %s; it will not fire until this is fixed", j->name,
		          c->tz_error ? c->tz_error : "not loaded (its config was read without zone lookups)");
		return -1;
	}
	if (!c->cron_compiled) {
		log_error("job %s: cron '%s' was not compiled (its config did not come from conf_parse or "
		          "conf_node_parse); it will not fire", j->name, c->cron);
		return -1;
	}
	cron_err_t ce;
	/* Quartz bounds years at its current year + 100 */
	j->cron_ref = cronshare_get(j->s->crons, c->cron_compiled, year_of(now_s) + 100, &j->cron, &ce);
	if (!j->cron_ref) {
		log_error("job %s: cron '%s': column %d: %s; it will not fire until this is fixed", j->name, c->cron,
		          ce.column, ce.msg);
		return -1;
	}
	return 0;
}

static const char *job_name(const void *arr, size_t i)
{
	return ((struct sched_job *const *)arr)[i]->name;
}

static struct sched_job *find(const sched_t *s, const char *name)
{
	if (!s->ix) {
		for (size_t i = 0; i < s->n; i++)
			if (!strcmp(s->jobs[i]->name, name)) return s->jobs[i];
		return NULL;
	}
	size_t i = nidx_find(s->ix, s->jobs, s->n, job_name, name);
	return i == (size_t)-1 ? NULL : s->jobs[i];
}

/* A job's cron or zone in force changed from what was said (said_*) to j's texts; a one-off
 * job's zone means nothing. */
static void log_change(const struct sched_job *j)
{
	const char *in = j->tz_text ? " in " : "", *tz = j->tz_text ? j->tz_text : "";
	const char *was_in = j->said_tz ? " in " : "", *was_tz = j->said_tz ? j->said_tz : "";
	if (!j->cron_text && j->said_cron)
		log_info("job %s: no cron now: a one-off job, it fires only when triggered (was '%s'%s%s)", j->name,
		         j->said_cron, was_in, was_tz);
	else if (j->cron_text && !j->said_cron)
		log_info("job %s: cron '%s'%s%s now (was none: a one-off job)", j->name, j->cron_text, in, tz);
	else if (j->cron_text)
		log_info("job %s: cron '%s'%s%s now (was '%s'%s%s)", j->name, j->cron_text, in, tz, j->said_cron, was_in,
		         was_tz);
}

/* The loop is about to wait: the callbacks that handed configs over have returned. Say what
 * is in force now where it is not what was said. */
static void say_taken(struct ev_loop *loop, ev_prepare *w, int revents)
{
	(void)revents;
	sched_t *s = w->data;
	ev_prepare_stop(loop, w);
	for (size_t i = 0; i < s->n; i++) {
		struct sched_job *j = s->jobs[i];
		if (!j->said_due || !j->present) continue;
		j->said_due = 0;
		if (j->said_set && (!streq(j->said_cron, j->cron_text) || !streq(j->said_tz, j->tz_text))) log_change(j);
		if (j->disabled && (!j->said_set || !j->said_disabled))
			log_info("job %s: disabled; it does not fire", j->name);
		char *sc = j->cron_text ? strdup(j->cron_text) : NULL, *st = j->tz_text ? strdup(j->tz_text) : NULL;
		if ((j->cron_text && !sc) || (j->tz_text && !st)) {
			free(sc);
			free(st);
			continue;       /* out of memory: said again next time, at worst once more */
		}
		free(j->said_cron);
		free(j->said_tz);
		j->said_cron = sc;
		j->said_tz = st;
		j->said_disabled = j->disabled;
		j->said_set = 1;
	}
}

/* A job takes a config (new, or a change of it); 0, or -1 if its cron or zone cannot be loaded. */
static int job_take(sched_t *s, struct sched_job *j, const conf_job_t *c, int fresh, int64_t now_s)
{
	int rc = 0;
	int was_off = !fresh && (!j->cron || !wtimer_armed(&j->timer));
	j->present = 1;
	j->disabled = c->disabled;
	j->misfire = c->misfire;
	j->tz = c->tz;
	if (!j->said_due) j->said_last_s = j->last_s;
	if (fresh || !streq(j->cron_text, c->cron) || !streq(j->tz_text, c->time_zone)) {
		if (job_load(j, c, now_s) < 0) rc = -1;
		/* a new cron starts from now: the old cron's past is not the new one's missed fires;
		 * back to the one in force before this callback (the file's, then the node's again):
		 * nothing changed, its past stays */
		if (j->said_set && j->said_due && streq(j->said_cron, c->cron) && streq(j->said_tz, c->time_zone))
			j->last_s = j->said_last_s;
		else if (j->last_s < now_s)
			j->last_s = now_s;
	} else if (j->cron && c->time_zone && !c->tz) {
		/* the same text, but this config has no zone to run it in: stop as job_load says why */
		if (job_load(j, c, now_s) < 0) rc = -1;
	} else if (was_off && j->last_s < now_s) {
		j->last_s = now_s;          /* enabled again: what passed while disabled is not missed */
	}
	if (c->disabled) {
		j->misfired = 0;
		j->nlisted = 0;
	}
	arm_next(j);
	int64_t next = sched_next(s, j->name);
	char when[64] = "never";
	if (next >= 0) fmt_time(next, job_tz(j), when, sizeof when);
	j->said_due = 1;
	ev_prepare_start(s->loop, &s->said_w);
	if (c->disabled) log_debug("job %s: disabled", j->name);
	else if (j->cron) log_debug("job %s: next fire %s", j->name, when);
	else log_debug("job %s: one-off: it fires only when triggered", j->name);
	return rc;
}

static struct sched_job *job_new(sched_t *s, const char *name, int64_t now_s)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 16;
		struct sched_job **v = realloc(s->jobs, nc * sizeof *v);
		if (!v) return NULL;
		s->jobs = v;
		s->cap = nc;
	}
	struct sched_job *j = calloc(1, sizeof *j);
	if (!j || !(j->name = strdup(name))) {
		free(j);
		return NULL;
	}
	j->s = s;
	j->last_s = now_s;
	wtimer_init(&j->timer, job_due, j);
	s->jobs[s->n++] = j;
	if (s->ix) nidx_add(s->ix, s->jobs, s->n, job_name, s->n - 1);
	return j;
}

/* j: the job c names, taken (NULL: out of memory); *rc -1 if its cron or zone cannot be used */
static struct sched_job *set_job(sched_t *s, const conf_job_t *c, void *owner, int *rc)
{
	int64_t now_s = floor_s(wtimer_now_ns());
	struct sched_job *j = find(s, c->name);
	int fresh = !j;
	if (!j && !(j = job_new(s, c->name, now_s))) {
		log_error("scheduler: out of memory while loading jobs");
		*rc = -1;
		return NULL;
	}
	j->owner = owner;
	if (job_take(s, j, c, fresh, now_s) < 0) *rc = -1;
	return j;
}

int sched_set_job(sched_t *s, const conf_job_t *c, void *owner)
{
	int rc = 0;
	set_job(s, c, owner, &rc);
	return rc;
}

/* removed: no more fires; a running one ends and is then forgotten (sched_fire_ended) */
static int job_removed(sched_t *s, struct sched_job *j)
{
	log_info("job %s: removed from the configuration; it fires no more", j->name);
	wtimer_disarm(s->timers, &j->timer);
	j->present = 0;
	j->tz = NULL;               /* its config goes */
	if (j->running) return 0;   /* kept until its running fire ends */
	job_free(j);
	return 1;
}

void sched_remove_job(sched_t *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->jobs[i]->present && !strcmp(s->jobs[i]->name, name)) {
			if (job_removed(s, s->jobs[i])) {
				s->jobs[i] = s->jobs[--s->n];
				if (s->ix) nidx_dirty(s->ix);
			}
			return;
		}
}

int sched_set_jobs(sched_t *s, const conf_t *conf)
{
	int rc = 0;
	for (size_t i = 0; i < s->n; i++) s->jobs[i]->seen = 0;
	for (size_t i = 0; i < conf->n_jobs; i++) {
		const conf_job_t *c = &conf->jobs[i];
		struct sched_job *j = set_job(s, c, (void *)c, &rc);
		if (j) j->seen = 1;
	}
	/* jobs gone from the config */
	size_t k = 0;
	for (size_t i = 0; i < s->n; i++) {
		struct sched_job *j = s->jobs[i];
		if (j->seen || !j->present || !job_removed(s, j)) s->jobs[k++] = j;
	}
	s->n = k;
	if (s->ix) nidx_dirty(s->ix);
	return rc;
}

void sched_fire_ended(sched_t *s, sched_job_t *h)
{
	struct sched_job *j = h;
	j->running = 0;
	if (!j->present) {
		for (size_t i = 0; i < s->n; i++)
			if (s->jobs[i] == j) {
				s->jobs[i] = s->jobs[--s->n];
				if (s->ix) nidx_dirty(s->ix);
				break;
			}
		job_free(j);
		return;
	}
	/* a workflow run owed (triggered while this fire ran) fires now, before a catch-up */
	while (j->nowed && !j->running && !s->stopped) {
		struct owed_run o = j->owed[0];
		memmove(j->owed, j->owed + 1, (j->nowed - 1) * sizeof *j->owed);
		j->nowed--;
		int64_t now_ns = wtimer_now_ns();
		int64_t id = o.at_ms > j->last_trigger_ms ? o.at_ms : j->last_trigger_ms + 1;
		j->last_trigger_ms = id;
		log_info("job %s: workflow %s, run %" PRIu64 ": the fire it was owed now", j->name, o.root, o.run);
		if (start_fire_ms(j, floor_s(now_ns), id, 0, 0, NULL, o.run, o.root) < 0)
			log_warn("job %s: workflow %s, run %" PRIu64 ": its owed fire could not start: the run waits for it until "
			         "given up", j->name, o.root, o.run);
		free(o.root);
	}
	flush_misfire(j);
}

void sched_fire_missed(sched_t *s, sched_job_t *h)
{
	struct sched_job *j = h;
	if (j->present) run_missed_again(j);
	sched_fire_ended(s, h);
}

int sched_trigger(sched_t *s, const char *job, const char *param, uint64_t run, const char *root, int64_t at_ms)
{
	struct sched_job *j = find(s, job);
	if (!j || !j->present || s->stopped) return -1;
	int64_t now_ns = wtimer_now_ns(), now_s = floor_s(now_ns);
	if (j->running && param) {
		/* the catch-up stands for every fire missed meanwhile: it runs with the job's parameter */
		log_warn("job %s: triggered with parameter '%.200s%s' while its previous fire still runs: misfire; %s", j->name,
		         param, strlen(param) > 200 ? "..." : "", j->misfire ? "its catch-up runs with the job's own "
		         "jobParameter, not this one (trigger again once the fire has ended)" : "dropped (misfire: false)");
		skipped(j, now_s, 1, "still_running", "triggered with a parameter while the previous fire still runs "
		        "(misfire; the parameter is dropped)");
		note_missed(j, 1, now_s);
		return 0;
	}
	if (j->running && run) {
		/* not a missed fire: the run's fire of this job, owed until the one running ends */
		struct owed_run *v = j->nowed < SCHED_OWED_RUNS ? realloc(j->owed, (j->nowed + 1) * sizeof *v) : NULL;
		char *r = v ? strdup(root) : NULL;
		if (v) j->owed = v;
		if (!r) {
			log_warn("job %s: workflow %s, run %" PRIu64 ": triggered while its previous fire still runs, and %s: it does "
			         "not fire in the run, which waits for it until given up", j->name, root, run,
			         j->nowed >= SCHED_OWED_RUNS ? "as many runs wait for it already" : "out of memory");
			skipped(j, now_s, 1, "still_running", "a workflow run's trigger while the previous fire still runs, and no room "
			        "to owe it");
			return 0;
		}
		j->owed[j->nowed++] = (struct owed_run){ .run = run, .at_ms = at_ms, .root = r };
		log_info("job %s: workflow %s, run %" PRIu64 ": triggered while its previous fire still runs: it fires once that "
		         "one has ended", j->name, root, run);
		return 0;
	}
	if (j->running) {
		log_info("job %s: triggered while its previous fire still runs: misfire", j->name);
		skipped(j, now_s, 1, "still_running", "triggered while the previous fire still runs (misfire)");
		note_missed(j, 1, now_s);
		return 0;
	}
	if (run)
		log_info("job %s: workflow %s, run %" PRIu64 ": its upstream jobs have ended ok: a fire now", j->name, root, run);
	else if (param)
		log_info("job %s: triggered with parameter '%.200s%s': a fire now, with it as its jobParameter", j->name, param,
		         strlen(param) > 200 ? "..." : "");
	else
		log_info("job %s: triggered: a fire now", j->name);
	/* its id: the trigger node's ctime (one multi triggers every instance with one: the fire has the
	 * same id everywhere, as a scheduled one has), else the time it came here */
	int64_t id = at_ms > 0 ? at_ms : now_ns / 1000000;
	if (j->last_trigger_ms && id <= j->last_trigger_ms) id = j->last_trigger_ms + 1;   /* two fires, two ids */
	j->last_trigger_ms = id;
	if (start_fire_ms(j, now_s, id, 0, 0, param, run, root) < 0) note_missed(j, 1, now_s);
	return 0;
}

void sched_kick(sched_t *s, const char *job)
{
	struct sched_job *j = find(s, job);
	if (j) flush_misfire(j);
}

int64_t sched_next(const sched_t *s, const char *job)
{
	const struct sched_job *j = find(s, job);
	if (!j || !wtimer_armed(&j->timer)) return -1;
	return j->timer.at_ns / NS;
}

void sched_stop(sched_t *s)
{
	s->stopped = 1;
	for (size_t i = 0; i < s->n; i++) wtimer_disarm(s->timers, &s->jobs[i]->timer);
}
