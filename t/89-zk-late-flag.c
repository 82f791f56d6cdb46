/* t/89-zk-late-flag.c: a fire runs the assignment in force at its time, not one resharded after it.
 * Three supervisors, six items, a fire every 4 s. Supervisor c leaves (SIGTERM) just after a fire
 * time T, so the leader raises the resharding flag after T; supervisor b is frozen (SIGSTOP) from
 * just before T to 0.8 s after it, so its fire T runs late (but as itself, within the scheduler's
 * tolerance) and may see the flag first. Waiting for the reshard would run fire T's items under
 * the new assignment, some of which a and c ran at T already (seen in t/58: an instance that
 * joined during a fire ran two of its items again). Checked by the run records: every fire ran
 * each item exactly once, twice over (c comes back between the rounds). Then c starts again while
 * ZooKeeper is frozen across a fire time: its fire is refused and caught up after it joined, with
 * the flag raised after that time; the catch-up must not run the items the others ran. That
 * round fails without coord_fire.c's flag_after every time; the first two only when b's loop takes
 * the flag's event before its late fire after SIGCONT, which it seldom does. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

static struct tzkup u;

/* sleep until the wall clock reads ms */
static void until_ms(long long ms)
{
	long long now = tlib_wall_ns() / 1000000;
	if (ms > now) usleep((useconds_t)((ms - now) * 1000));
}

/* the next fire time (a multiple of 4 s) at least margin ms away */
static long long next_fire(long long margin)
{
	long long now = tlib_wall_ns() / 1000000, t = (now / 4000 + 1) * 4000;
	while (t - now < margin) t += 4000;
	return t;
}

int main(void)
{
	tlib_init(120);
	tzkup_start(&u, 200, "t89", 4000);
	const char *rec = tsup_rec_script();
	char r_items[400], jobs[1024];
	snprintf(r_items, sizeof r_items, "%s/runs", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  lf:\n    type: script\n    cron: \"0/4 * * * * ?\"\n    shardingTotalCount: 6\n"
	         "    props: {script.command.line: \"%s %s\"}\n", rec, r_items);
	struct tsup s[3];
	const char *ips[3] = { "127.0.0.1", "127.0.0.2", "127.0.0.3" };
	int port2 = 0;                            /* s2's /metrics: how its fire in the third round went */
	for (int i = 0; i < 3; i++) {
		char name[8];
		snprintf(name, sizeof name, "s%d", i);
		char sup[160] = "workers: 2, shutdownGraceSeconds: 0, killGraceSeconds: 1";
		if (i == 2) {
			port2 = tzk_free_port();
			snprintf(sup + strlen(sup), sizeof sup - strlen(sup), ", metrics: \"127.0.0.1:%d\"", port2);
		}
		tzkup_config(&u, &s[i], name, sup, jobs);
		tzkup_run(&u, &s[i], ips[i]);
	}
	int ready = 1;
	for (int i = 0; i < 3; i++)
		ready &= tzkup_wait_registered(&u, "lf", s[i].id, 0, 10000) && tzkup_wait_owned(&u, "lf", 6, s[i].id, 2, 10000);
	ok(ready, "three supervisors, two of the six items each");
	long long t0 = tlib_wall_ns() / 1000000;

	for (int round = 0; round < 2; round++) {
		long long T = next_fire(1500);
		until_ms(T - 150);
		kill(s[1].pid, SIGSTOP);
		until_ms(T + 200);
		tsup_stop(&s[2], SIGTERM, 5000);      /* its items of T ran at T; the leader flags a reshard */
		until_ms(T + 800);
		kill(s[1].pid, SIGCONT);
		diag("round %d: fire %lld: s1 frozen across it, s2 left after it", round, T);
		/* the reshard at the next fire, then one more fire on the two */
		until_ms(T + 8500);
		if (round == 0) {
			tzkup_run(&u, &s[2], ips[2]);
			ok(tzkup_wait_registered(&u, "lf", s[2].id, 0, 10000) && tzkup_wait_owned(&u, "lf", 6, s[2].id, 2, 12000),
			   "s2 is back, with two items");
		}
	}
	/* ---- an instance that starts while ZooKeeper is frozen across a fire time: its fire is
	 * refused (not connected) and caught up once it has joined, with the flag raised (by hand
	 * here, as the leader does once it sees the new instance) after the fire's time. The catch-up
	 * runs the assignment the others ran that fire with (its items: none); waiting for the
	 * reshard would run its new items of that fire, which s0 and s1 ran already. ---- */
	{
		long long T = next_fire(2000);
		until_ms(T - 1000);
		if (tzk_pause(&u.zk) < 0) BAIL_OUT("cannot pause ZooKeeper");
		until_ms(T - 500);
		tzkup_run(&u, &s[2], ips[2]);
		until_ms(T + 300);
		tzk_resume(&u.zk);
		int rc = zoo_create(u.zh, tzkup_path(&u, "lf", "leader/sharding/necessary"), "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
		diag("fire %lld: ZooKeeper frozen across it while s2 started; the flag raised after it (%d)", T, rc);
		ok(tzkup_wait_registered(&u, "lf", s[2].id, 0, 15000), "s2 joined after the fire time");
		/* its catch-up, the reshard at the next fire, one more fire */
		until_ms(T + 9000);
		/* a series that is still 0 is not on the page (-1) */
		long nc = tlib_metric(port2, "ejob_fires_skipped_total{job_name=\"lf\",reason=\"not_connected\"}");
		long nr = tlib_metric(port2, "ejob_fires_skipped_total{job_name=\"lf\",reason=\"not_registered\"}");
		long refused = (nc > 0 ? nc : 0) + (nr > 0 ? nr : 0);
		ok(refused >= 1, "  its fire was refused, to be caught up once it could run (ejob_fires_skipped_total: %ld)",
		   refused);
		if (refused < 1) {
			char *st = NULL;
			tlib_http_get(port2, "/metrics", &st);
			diag("%s", st ? st : "(no answer)");
			free(st);
		}
	}
	int exact = 0;
	int nf = tsup_fires_exact(r_items, t0, 6, NULL, &exact);
	ok(nf >= 8, "%d fires ran", nf);
	ok(exact, "each ran every item exactly once");
	if (!exact) {
		char *txt = tsup_slurp(r_items);
		diag("%s", txt ? txt : "");
		free(txt);
	}
	tsup_stop(&s[0], SIGTERM, 10000);
	tsup_stop(&s[1], SIGTERM, 10000);
	tsup_stop(&s[2], SIGTERM, 10000);
	tzkup_end(&u);
	return done_testing();
}
