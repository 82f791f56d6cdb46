/* t/83-afterall-outage.c: ejob.listener.afterAll when ZooKeeper goes silent while it runs (the
 * server frozen for 5 s, shorter than the session timeout: every session lives on). Two
 * supervisors, checked by the records the command writes:
 *   - the instance running it kills its command as soon as it sees the connection lost (its
 *     session could expire before it is back, and another instance would take over);
 *   - once the connection is back the run is claimed again and runs once more to its end, told it
 *     is a takeover, after the first was killed: one end, never two runs at once. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t/lib/tafter.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

static struct tzkup u;

/* afterAll: OUT, then the context; "start FIRE PID TAKEOVER NS", 6 s, "end FIRE PID TAKEOVER NS" */
static const char aa_sh[] =
	"#!/bin/sh\n"
	"echo \"start $EJOB_FIRE_ID $$ $EJOB_LISTENER_TAKEOVER $(date +%s%N)\" >> \"$1\"\n"
	"sleep 6\n"
	"echo \"end $EJOB_FIRE_ID $$ $EJOB_LISTENER_TAKEOVER $(date +%s%N)\" >> \"$1\"\n";

#define MAXA 256
static struct tafter_rec recs[MAXA];
static int nrecs;

static void load(const char *path) { nrecs = tafter_load(path, recs, MAXA); }

static const struct tafter_rec *nth(const char *kind, long long fire, int n)
{
	return tafter_nth(recs, nrecs, kind, fire, n);
}

int main(void)
{
	tlib_init(60);
	tzkup_start(&u, 200, "t83", 6000);
	const char *rec = tsup_rec_script();
	char aash[400], r_items[400], r_aa[400], jobs[2048];
	tlib_script(aash, sizeof aash, "afterall.sh", aa_sh);
	snprintf(r_items, sizeof r_items, "%s/runs-agg", tlib_tmpdir());
	snprintf(r_aa, sizeof r_aa, "%s/afterall", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  agg:\n    type: script\n    cron: \"0/3 * * * * ?\"\n    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"%s %s\", ejob.listener.afterAll: \"%s %s\"}\n",
	         rec, r_items, aash, r_aa);
	struct tsup a, b;
	tzkup_config(&u, &a, "a", "workers: 2, shutdownGraceSeconds: 0, killGraceSeconds: 1", jobs);
	tzkup_config(&u, &b, "b", "workers: 2, shutdownGraceSeconds: 0, killGraceSeconds: 1", jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	tzkup_run(&u, &b, "127.0.0.2");
	ok(tzkup_wait_owned(&u, "agg", 2, a.id, 1, 10000) && tzkup_wait_owned(&u, "agg", 2, b.id, 1, 10000),
	   "two supervisors, one item each");
	long long since = tlib_wall_ns() / 1000000 + 500, f = 0;
	for (uint64_t end = tlib_now_ms() + 10000; tlib_now_ms() < end && !f; usleep(50000)) {
		load(r_aa);
		for (int i = 0; i < nrecs && !f; i++)
			if (!strcmp(recs[i].kind, "start") && recs[i].fire > since) f = recs[i].fire;
	}
	ok(f, "fire %lld's afterAll started", f);
	if (!f) BAIL_OUT("no afterAll started");
	tzk_pause(&u.zk);
	usleep(5000000);
	tzk_resume(&u.zk);
	long long resumed_ns = tlib_wall_ns();
	diag("ZooKeeper frozen for 5 s during fire %lld's afterAll", f);
	const struct tafter_rec *e = NULL;
	for (uint64_t end = tlib_now_ms() + 20000; tlib_now_ms() < end && !e; usleep(200000)) {
		load(r_aa);
		e = nth("end", f, 0);
	}
	usleep(1000000);            /* an end of the first run, had it lived on, would be there by now */
	load(r_aa);
	const struct tafter_rec *s1 = nth("start", f, 0), *s2 = nth("start", f, 1);
	e = nth("end", f, 0);
	ok(e != NULL, "fire %lld's afterAll ran to its end", f);
	ok(!nth("end", f, 1), "one end: the first run was killed when the connection was lost");
	ok(!nth("start", f, 2) && s2 && e && e->pid == s2->pid, "it ran again once, and that run ended");
	ok(s2 && s2->takeover == 1 && s1 && !s1->takeover, "the run again was told it is a takeover");
	ok(s2 && s2->ns > resumed_ns - 1000000000ll, "it started once the connection was back (never two at once)");
	ok(s1 && kill(s1->pid, 0) != 0, "the first run's process is gone");
	tsup_stop(&a, SIGTERM, 10000);
	tsup_stop(&b, SIGTERM, 10000);
	tzkup_end(&u);
	return done_testing();
}
