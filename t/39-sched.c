/* t/39-sched.c: when jobs fire.
 *   - sched_decide() with synthetic clocks: waits, due fires, lateness within the tolerance,
 *     missed fires when the clock jumps forward (counted, capped, never a burst), no fire twice
 *     when it jumps back, "never";
 *   - wtimer: many wall-clock deadlines on one timerfd fire in order and never early;
 *   - a one-off job (no cron): no timer, a fire per trigger, triggers while it runs collapse
 *     into one catch-up run;
 *   - a real supervisor (--standalone, real workers): a job on the cron "*\/1 * * * * ?" (every second) fires once per second
 *     with no fire early; a job whose run outlasts its next fires gets exactly one catch-up run
 *     (and none with misfire: false); SIGHUP applies a cron change to the next fire. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/base/wtimer.h"
#include "supervisor/run/sched.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/tap.h"

#define NS 1000000000ll

/* ---- sched_decide ------------------------------------------------------------------------------ */

static cron_t *cron(const char *e)
{
	cron_err_t err;
	cron_t *c = cron_parse(e, &err);
	if (!c) BAIL_OUT("cron '%s': %s", e, err.msg);
	return c;
}

struct dcase {
	const char *expr;
	int64_t last_s, now_ns;
	enum sched_verdict verdict;
	int64_t next_s, latest_s;
	int on_time;
	uint32_t missed;
	int64_t latest_missed_s;
	int clock_back;
	const char *what;
};

static const struct dcase dcases[] = {
	{ "* * * * * ?", 100, 100 * NS + NS / 2, SCHED_WAIT, 101, 0, 0, 0, 0, 0, "half a second after the last fire: wait for the next" },
	{ "* * * * * ?", 100, 101 * NS - 1, SCHED_WAIT, 101, 0, 0, 0, 0, 0, "1 ns before the fire time: still waiting (never early)" },
	{ "* * * * * ?", 100, 101 * NS, SCHED_DUE, 0, 101, 1, 0, 0, 0, "exactly at the fire time: due, on time" },
	{ "* * * * * ?", 100, 101 * NS + 900000000, SCHED_DUE, 0, 101, 1, 0, 0, 0, "0.9 s late: still runs as itself" },
	{ "* * * * * ?", 100, 103 * NS + 200000000, SCHED_DUE, 0, 103, 1, 2, 102, 0, "3 fires passed: the latest runs, 2 are missed" },
	{ "0 * * * * ?", 0, 60 * NS + NS, SCHED_DUE, 0, 60, 1, 0, 0, 0, "exactly the tolerance late: on time" },
	{ "0 * * * * ?", 0, 60 * NS + NS + 1, SCHED_DUE, 0, 60, 0, 1, 60, 0, "1 ns past the tolerance: missed" },
	{ "0 * * * * ?", 0, 3605 * NS, SCHED_DUE, 0, 3600, 0, 60, 3600, 0, "an hour forward, latest 5 s late: 60 missed, none runs as itself" },
	{ "* * * * * ?", 0, 31536000 * NS + 300000000, SCHED_DUE, 0, 31536000, 1, SCHED_MISSED_CAP, 31535999, 0, "a year forward, every second: the count is capped, the latest still found" },
	{ "* * 3 * * ?", 0, (3 * 86400 + 5 * 3600) * NS, SCHED_DUE, 0, 3 * 86400 + 4 * 3600 - 1, 0, SCHED_MISSED_CAP, 3 * 86400 + 4 * 3600 - 1, 0, "days forward, a dense hour long ago: capped, latest is 03:59:59" },
	{ "* * * * * ?", 1000, 500 * NS, SCHED_WAIT, 1001, 0, 0, 0, 0, 1, "clock back before the last fire: wait for the first time after it" },
	{ "0 0 0 30 2 ?", 0, 5 * NS, SCHED_NEVER, 0, 0, 0, 0, 0, 0, "February 30th: never" },
	{ "0 0 0 1 1 ? 1971", 40000000, 40000001 * NS, SCHED_NEVER, 0, 0, 0, 0, 0, 0, "the only fire is in the past: never" },
};

static void test_decide(void)
{
	tz_t *utc = tz_fixed("UTC", 0);
	for (size_t i = 0; i < sizeof dcases / sizeof dcases[0]; i++) {
		const struct dcase *c = &dcases[i];
		cron_t *cr = cron(c->expr);
		struct sched_decision d;
		sched_decide(cr, utc, c->last_s, c->now_ns, SCHED_TOLERANCE_NS, &d);
		int good = d.verdict == c->verdict && d.clock_back == c->clock_back &&
		           (c->verdict != SCHED_WAIT || d.next_s == c->next_s) &&
		           (c->verdict != SCHED_DUE || (d.latest_s == c->latest_s && d.on_time == c->on_time &&
		                                        d.missed == c->missed &&
		                                        (!c->missed || d.latest_missed_s == c->latest_missed_s)));
		ok(good, "decide '%s' last %" PRId64 ": %s", c->expr, c->last_s, c->what);
		if (!good)
			diag("got verdict %d next %" PRId64 " latest %" PRId64 " on_time %d missed %" PRIu32
			     " latest_missed %" PRId64 " back %d", (int)d.verdict, d.next_s, d.latest_s, d.on_time, d.missed,
			     d.latest_missed_s, d.clock_back);
		cron_free(cr);
	}

	/* a clock that goes forward, back and forward again, as the scheduler follows it */
	cron_t *cr = cron("* * * * * ?");
	static const double clock[] = { 100.0, 101.0, 102.3, 99.5, 100.7, 102.9, 103.0, 110.2, 111.0 };
	int64_t last = 100, fired[16];
	int nf = 0;
	uint32_t missed = 0;
	for (size_t i = 0; i < sizeof clock / sizeof clock[0]; i++) {
		struct sched_decision d;
		sched_decide(cr, utc, last, (int64_t)(clock[i] * 1e9), SCHED_TOLERANCE_NS, &d);
		if (d.verdict != SCHED_DUE) continue;
		last = d.latest_s;
		missed += d.missed;
		if (d.on_time && nf < 16) fired[nf++] = d.latest_s;
	}
	char got[128] = "";
	for (int i = 0; i < nf; i++) snprintf(got + strlen(got), sizeof got - strlen(got), "%s%" PRId64, i ? "," : "", fired[i]);
	is_str(got, "101,102,103,110,111", "a clock stepped back never fires a time twice; stepped forward it runs the latest");
	is_int(missed, 6, "the forward step from 103 to 110.2 counts 104-109 as missed, not run");
	cron_free(cr);
	tz_free(utc);
}

/* ---- wtimer ------------------------------------------------------------------------------------ */

struct fired {
	int n, early, order_bad;
	int64_t last_at;
	int seen[64];
	struct ev_loop *loop;
	int want;
};

static void on_timer(wtimer_t *t, int64_t now)
{
	struct fired *f = t->data;
	if (now < t->at_ns || wtimer_now_ns() < t->at_ns) f->early++;
	if (t->at_ns < f->last_at) f->order_bad++;
	f->last_at = t->at_ns;
	f->n++;
	if (f->n == f->want) ev_break(f->loop, EVBREAK_ALL);
}

static void test_wtimer(void)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	wtimer_set_t *w = wtimer_new(loop, NULL, NULL);
	ok(w != NULL, "wtimer_new");
	struct fired f = { .loop = loop };
	wtimer_t tm[40];
	int64_t now = wtimer_now_ns();
	srand(39);
	for (int i = 0; i < 40; i++) {
		wtimer_init(&tm[i], on_timer, &f);
		wtimer_arm(w, &tm[i], now + (int64_t)(rand() % 80000) * 1000 + 1000000);
	}
	/* move some, disarm some, one in the past */
	wtimer_arm(w, &tm[3], now + 5000000);
	wtimer_arm(w, &tm[4], now - NS);
	for (int i = 30; i < 40; i++) wtimer_disarm(w, &tm[i]);
	is_int(wtimer_count(w), 30, "30 timers armed after disarming 10");
	f.want = 30;
	ev_run(loop, 0);
	is_int(f.n, 30, "every armed timer fired once");
	is_int(f.early, 0, "none fired before its instant");
	is_int(f.order_bad, 0, "they fired in the order of their instants");
	int stray = 0;
	for (int i = 30; i < 40; i++) stray += wtimer_armed(&tm[i]);
	is_int(stray + (int)wtimer_count(w), 0, "nothing is left armed");
	wtimer_free(w);
	ev_loop_destroy(loop);
}

/* ---- the start hook's contract ------------------------------------------------------------------
 * A fire with nothing to run here ends inside the hook (sched_fire_ended before start returns):
 * the job must be idle afterwards, or every later fire is a misfire and the job is wedged (found
 * with an item disabled by an operator). A fire that cannot start (-1) owes a catch-up run, which
 * starts only when sched_kick says the job can run, and is never promised and dropped. */

struct hookst {
	sched_t *s;
	int mode;                   /* 0: end at once (nothing here); -1: cannot start */
	int calls, catchups, refused;
	uint32_t missed;
	int64_t refused_s[16];      /* the fire times refused */
	int64_t fires_s[16];        /* the last catch-up's fires */
	uint32_t nfires;
};

static int hook_start(void *arg, const struct sched_fire_info *f)
{
	struct hookst *h = arg;
	h->calls++;
	if (h->mode < 0) {
		if (h->refused < 16) h->refused_s[h->refused] = f->fire_s;
		h->refused++;
		return -1;
	}
	if (f->catch_up) {
		h->catchups++;
		h->missed = f->missed;
		h->nfires = f->nfires < 16 ? f->nfires : 16;
		memcpy(h->fires_s, f->fires_s, h->nfires * sizeof *f->fires_s);
	}
	sched_fire_ended(h->s, f->handle);
	return 0;
}

static void stop_loop(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

static void run_for(struct ev_loop *loop, double secs)
{
	ev_timer t;
	ev_timer_init(&t, stop_loop, secs, 0);
	ev_timer_start(loop, &t);
	ev_run(loop, 0);
	ev_timer_stop(loop, &t);
}

static void test_hook_contract(void)
{
	static const char yaml[] = "regCenter: {serverLists: \"127.0.0.1:1\", namespace: t39}\n"
	                           "jobs:\n  j:\n    type: script\n    cron: \"* * * * * ?\"\n    shardingTotalCount: 1\n"
	                           "    props: {script.command.line: /bin/true}\n";
	conf_diags_t *dg = NULL;
	conf_t *c = conf_parse(yaml, sizeof yaml - 1, "hook.yaml", NULL, &dg);
	conf_diags_free(dg);
	if (!c) BAIL_OUT("cannot parse the hook test's config");
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct hookst h = { 0 };
	static const struct sched_hooks hk = { .start = hook_start };
	h.s = sched_new(loop, &hk, &h);
	sched_set_jobs(h.s, c);
	run_for(loop, 3.5);
	ok(h.calls >= 3, "a fire that ends inside its start hook leaves the job idle: %d fires started in 3.5 s", h.calls);
	is_int(h.catchups, 0, "and none of the later fires was taken for a misfire");

	h.mode = -1;
	h.calls = h.refused = 0;
	run_for(loop, 2.5);
	int refused = h.refused;
	ok(refused >= 2 && h.calls == refused, "fires that cannot start are refused once each, no catch-up tried meanwhile "
	   "(%d calls, %d fires)", h.calls, refused);
	h.mode = 0;
	sched_kick(h.s, "j");
	is_int(h.catchups, 1, "sched_kick: one catch-up run for the fires that could not start");
	ok(h.missed >= 2, "it stands for all of them (%u)", h.missed);
	int named = refused <= 16 && h.nfires == (uint32_t)refused;
	for (int i = 0; named && i < refused; i++) named = h.fires_s[i] == h.refused_s[i];
	ok(named, "and names each of them, oldest first (%u named, %d refused)", h.nfires, refused);
	sched_kick(h.s, "j");
	is_int(h.catchups, 1, "and only one");
	sched_free(h.s);
	ev_loop_destroy(loop);
	conf_free(c);
}

/* ---- a one-off job (no cron): no timer; it fires when triggered, and a trigger while its fire
 * runs is a missed fire: one catch-up run once it ends (misfire: true) ----------------------- */

struct oneoffst {
	int calls, catchups;
	sched_job_t *running;       /* the fire started and not ended yet */
};

static int oneoff_start(void *arg, const struct sched_fire_info *f)
{
	struct oneoffst *o = arg;
	o->calls++;
	if (f->catch_up) o->catchups++;
	o->running = f->handle;     /* it runs until the test ends it */
	return 0;
}

static void test_one_off(void)
{
	static const char yaml[] = "regCenter: {serverLists: \"127.0.0.1:1\", namespace: t39}\n"
	                           "jobs:\n  oo:\n    type: script\n    shardingTotalCount: 2\n"
	                           "    props: {script.command.line: /bin/true}\n";
	conf_diags_t *dg = NULL;
	conf_t *c = conf_parse(yaml, sizeof yaml - 1, "oneoff.yaml", NULL, &dg);
	conf_diags_free(dg);
	if (!c) BAIL_OUT("cannot parse the one-off test's config");
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct oneoffst o = { 0 };
	static const struct sched_hooks hk = { .start = oneoff_start };
	sched_t *s = sched_new(loop, &hk, &o);
	is_int(sched_set_jobs(s, c), 0, "a one-off job is taken (no cron is not an error)");
	is_int((int)sched_next(s, "oo"), -1, "  it has no next fire");
	run_for(loop, 1.2);
	is_int(o.calls, 0, "  nothing fires on its own in 1.2 s");
	is_int(sched_trigger(s, "oo", NULL, 0, NULL, 0), 0, "sched_trigger");
	ok(o.calls == 1 && o.catchups == 0, "  one fire, now");
	sched_trigger(s, "oo", NULL, 0, NULL, 0);
	sched_trigger(s, "oo", NULL, 0, NULL, 0);
	is_int(o.calls, 1, "  two triggers while it runs start nothing");
	sched_fire_ended(s, o.running);
	ok(o.calls == 2 && o.catchups == 1, "  when it ends, one catch-up run for both (misfire: true)");
	sched_fire_ended(s, o.running);
	is_int(o.calls, 2, "  and no more");
	sched_trigger(s, "oo", NULL, 0, NULL, 0);
	is_int(o.calls, 3, "a trigger when it is idle again: a fire");
	sched_fire_ended(s, o.running);
	is_int((int)sched_next(s, "oo"), -1, "  still no timer");
	sched_free(s);
	ev_loop_destroy(loop);
	conf_free(c);
}

/* ---- a real supervisor ------------------------------------------------------------------------- */

/* one line per run: "FIRE_ID ITEM START_NS END_NS"; a run is slow (SLOW seconds) only the first
 * time, when the marker file does not exist yet */
static const char rec_sh[] =
	"#!/bin/sh\n"
	"s=$(date +%s%N)\n"
	"if [ -n \"$SLOW\" ] && [ ! -e \"$OUT.slow\" ]; then : > \"$OUT.slow\"; sleep \"$SLOW\"; fi\n"
	"e=$(date +%s%N)\n"
	"echo \"$EJOB_FIRE_ID $EJOB_ITEM $s $e\" >> \"$OUT\"\n";

struct run { int64_t fire_ms, start_ns, end_ns; int item; };

static int read_runs(const char *path, struct run *r, int max)
{
	char *text = tsup_slurp(path);
	int n = 0;
	for (char *p = text ? strtok(text, "\n") : NULL; p && n < max; p = strtok(NULL, "\n")) {
		if (sscanf(p, "%" SCNd64 " %d %" SCNd64 " %" SCNd64, &r[n].fire_ms, &r[n].item, &r[n].start_ns, &r[n].end_ns) == 4)
			n++;
	}
	free(text);
	/* the file is appended at each run's end: order by start */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && r[j].start_ns < r[j - 1].start_ns; j--) {
			struct run t = r[j];
			r[j] = r[j - 1];
			r[j - 1] = t;
		}
	return n;
}

static void test_supervisor(void)
{
	struct tsup t;
	char yaml[2048], sh[700], every[700], slow_on[700], slow_off[700];
	snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t39}\n"
	         "supervisor: {workers: 4, attachSocket: \"@SOCK@\"}\n"
	         "jobs:\n"
	         "  every:\n"
	         "    type: script\n"
	         "    cron: \"*/1 * * * * ?\"\n"
	         "    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=@DIR@/every @DIR@/rec.sh\"}\n"
	         "  slowon:\n"
	         "    type: script\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    shardingTotalCount: 1\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=@DIR@/slowon SLOW=2.5 @DIR@/rec.sh\"}\n"
	         "  slowoff:\n"
	         "    type: script\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    misfire: false\n"
	         "    shardingTotalCount: 1\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=@DIR@/slowoff SLOW=2.5 @DIR@/rec.sh\"}\n");
	tsup_config(&t, "fires", yaml);
	snprintf(sh, sizeof sh, "%s/rec.sh", t.dir);
	tlib_write_file(sh, rec_sh, sizeof rec_sh - 1);
	chmod(sh, 0755);
	snprintf(every, sizeof every, "%s/every", t.dir);
	snprintf(slow_on, sizeof slow_on, "%s/slowon", t.dir);
	snprintf(slow_off, sizeof slow_off, "%s/slowoff", t.dir);

	const char *args[] = { "--standalone", "--workers", "4", NULL };
	if (tsup_start(&t, args) <= 0) BAIL_OUT("cannot start the supervisor");
	/* the slow jobs: first run (2.5 s), then the catch-up or the next fire, then one more */
	tsup_wait_lines(slow_on, "", 3, 15000);
	tsup_wait_lines(slow_off, "", 3, 15000);
	tsup_wait_lines(every, "", 10, 15000);
	int st = tsup_stop(&t, SIGTERM, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the supervisor stops cleanly (status 0x%x)", st);

	/* every second, no fire early */
	struct run r[256];
	int n = read_runs(every, r, 256);
	int early = 0, dup = 0, gaps = 0, late = 0, fires = 0;
	for (int i = 0; i < n; i++) {
		if (r[i].start_ns < r[i].fire_ms * 1000000) early++;
		if (r[i].start_ns > r[i].fire_ms * 1000000 + NS) late++;
		for (int j = 0; j < i; j++) dup += r[j].fire_ms == r[i].fire_ms && r[j].item == r[i].item;
	}
	int64_t prev = 0;
	for (int i = 0; i < n; i++) {
		if (r[i].fire_ms == prev) continue;
		if (prev && r[i].fire_ms != prev + 1000) gaps++;
		prev = r[i].fire_ms;
		fires++;
	}
	ok(fires >= 5, "the every-second job fired %d times", fires);
	is_int(n, 2 * fires, "each of its fires ran both items");
	is_int(dup, 0, "no item of a fire ran twice");
	is_int(gaps, 0, "its fires are one second apart, none skipped or repeated");
	is_int(early, 0, "no item started before its fire time");
	is_int(late, 0, "every item started within the second after its fire time");

	/* misfire on: one catch-up for the fires the slow run overlapped */
	n = read_runs(slow_on, r, 256);
	ok(n >= 3, "the slow job (misfire on) ran %d times", n);
	if (n >= 3) {
		int64_t t0 = r[0].fire_ms;
		int64_t catch_id = r[1].fire_ms;
		ok(r[1].start_ns >= r[0].end_ns, "the catch-up started after the slow run ended");
		/* during it as the supervisor sees it: the script's last line is written a moment before its
		 * outcome reaches the scheduler (on a loaded machine a fire came in between) */
		ok(catch_id > t0 && catch_id * 1000000 < r[0].end_ns + NS / 2,
		   "the catch-up stands for a fire that came during the slow run (fire %" PRId64 ", run %" PRId64 "..%" PRId64 ")",
		   catch_id, t0, r[0].end_ns / 1000000);
		ok(catch_id * 1000000 + NS > r[0].end_ns, "it is the latest fire before the slow run ended");
		ok(r[1].start_ns < r[0].end_ns + NS / 2, "it starts at once (%.3fs after the slow run)",
		   (double)(r[1].start_ns - r[0].end_ns) / 1e9);
		ok(r[2].fire_ms > catch_id && r[2].fire_ms * 1000000 <= r[2].start_ns, "then the job runs its next fire as usual");
		int overlapped = 0;
		for (int i = 1; i < n; i++) overlapped += r[i].fire_ms > t0 && r[i].fire_ms < catch_id;
		is_int(overlapped, 0, "the other fires during the slow run did not run: one catch-up, not many");
		char want[128];
		snprintf(want, sizeof want, "job slowon: one catch-up run for %d missed fires", (int)((catch_id - t0) / 1000));
		is_int(tsup_log_count(&t, want), 1, "the log says: '%s'", want);
	}

	/* misfire off: nothing runs for them */
	n = read_runs(slow_off, r, 256);
	ok(n >= 3, "the slow job (misfire off) ran %d times", n);
	if (n >= 2) {
		ok(r[1].fire_ms * 1000000 >= r[0].end_ns - 1000000 && r[1].fire_ms * 1000000 <= r[1].start_ns,
		   "after the slow run, the next run is the next fire after it ended (fire %" PRId64 ", slow run ended %" PRId64 ")",
		   r[1].fire_ms, r[0].end_ns / 1000000);
		ok(tsup_log_count(&t, "job slowoff: 1 missed fire") + tsup_log_count(&t, "job slowoff: 2 missed fires") +
		   tsup_log_count(&t, "job slowoff: 3 missed fires") == 1 && tsup_log_count(&t, "dropped: misfire is off") == 1,
		   "the log says the missed fires were dropped because misfire is off");
		is_int(tsup_log_count(&t, "job slowoff: one catch-up"), 0, "no catch-up run for it");
	}
}

static void hup_yaml(char *buf, size_t len, const char *expr)
{
	snprintf(buf, len,
	         "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t39r}\n"
	         "supervisor: {workers: 1, attachSocket: \"@SOCK@\"}\n"
	         "jobs:\n"
	         "  hup:\n"
	         "    type: script\n"
	         "    cron: \"%s\"\n"
	         "    shardingTotalCount: 1\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=@DIR@/hup @DIR@/rec.sh\"}\n",
	         expr);
}

/* SIGHUP: the next fire follows the new cron */
static void test_reload(void)
{
	struct tsup t;
	char yaml[1024], sh[700], out[700];
	hup_yaml(yaml, sizeof yaml, "0 0 0 1 1 ? 2099");
	tsup_config(&t, "reload", yaml);
	snprintf(sh, sizeof sh, "%s/rec.sh", t.dir);
	tlib_write_file(sh, rec_sh, sizeof rec_sh - 1);
	chmod(sh, 0755);
	snprintf(out, sizeof out, "%s/hup", t.dir);
	const char *args[] = { "--standalone", NULL };
	if (tsup_start(&t, args) <= 0) BAIL_OUT("cannot start the supervisor");
	ok(tsup_wait_handles(&t, SIGHUP, 10000), "started: it takes SIGHUP");

	hup_yaml(yaml, sizeof yaml, "* * * * * ?");
	tsup_rewrite(&t, yaml);
	kill(t.pid, SIGHUP);
	ok(tsup_wait_log(&t, "job hup: cron '* * * * * ?' now (was '0 0 0 1 1 ? 2099')", 1, 5000), "the reload logs the cron change");
	uint64_t hup_ms = (uint64_t)(wtimer_now_ns() / 1000000);
	tsup_wait_lines(out, "", 2, 5000);
	struct run r[64];
	int n = read_runs(out, r, 64);
	ok(n >= 2, "after SIGHUP the job fires every second (%d runs)", n);
	ok(n >= 1 && r[0].fire_ms >= (int64_t)hup_ms - 1000 && r[0].fire_ms <= (int64_t)hup_ms + 2000,
	   "its first fire follows the reload, with no burst of past fire times (fire %" PRId64 ", reload %" PRIu64 ")",
	   n ? r[0].fire_ms : 0, hup_ms);

	hup_yaml(yaml, sizeof yaml, "0 0 0 1 1 ? 2099");
	tsup_rewrite(&t, yaml);
	kill(t.pid, SIGHUP);
	ok(tsup_wait_log(&t, "job hup: cron '0 0 0 1 1 ? 2099' now", 1, 5000), "changed back");
	usleep(300000);
	int before = tsup_count_lines(out, "");
	usleep(1500000);
	is_int(tsup_count_lines(out, ""), before, "after the second reload it no longer fires every second");
	int st = tsup_stop(&t, SIGTERM, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "stops cleanly");
}

int main(void)
{
	tlib_init(120);
	test_decide();
	test_wtimer();
	test_hook_contract();
	test_one_off();
	test_supervisor();
	test_reload();
	return done_testing();
}
