/* t/85-afterall-frozen.c: the lease of listener commands (supervisor/run/listen.h), which keeps
 * ejob.listener.afterAll from running twice at once when its supervisor is frozen: such a
 * supervisor neither notices that its session is gone nor dies, so only the lease stops its
 * command before another instance takes the run over.
 *   - without ZooKeeper, listen.c on this test's own loop: a leased command ends with the same
 *     result and why as an unleased one (exit 0, exit 3, signal 9, signal 15, timed out), renewals
 *     keep a leased command running past its lease, its keeper holds none of the loop's other fds,
 *     and a loop blocked past the lease gets its command killed, "killed: the supervisor did not
 *     renew its lease for N ms";
 *   - two supervisors on one ZooKeeper (session timeout 4 s), a fire whose afterAll sleeps: the
 *     one running it is stopped (SIGSTOP). Its command is dead before the other takes the run over
 *     (told it is a takeover), checked from /proc and by the takeover's own `kill -0`; resumed
 *     (SIGCONT), the frozen one starts it no third time, and the run ends once: one end, the
 *     fire's nodes gone. */
#include <dirent.h>
#include <ev.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/base/log.h"
#include "supervisor/run/listen.h"
#include "t/lib/tafter.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

/* ---- listen.c on our own loop ---------------------------------------------------------------- */

struct ran {
	int done;
	enum listen_result res;
	char why[160];
};

static void ran_cb(void *arg, enum listen_result res, const char *why, uint64_t us)
{
	(void)us;
	struct ran *r = arg;
	r->done = 1;
	r->res = res;
	snprintf(r->why, sizeof r->why, "%s", why);
	ev_break(EV_DEFAULT, EVBREAK_ALL);
}

static void give_up_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

/* Run cmd (timeout timeout_s, lease lease_ms) to its end; before the loop runs, the loop is
 * "blocked" for block_ms (a sleep instead of the loop). With pid_of, the keeper's pid. */
static struct ran run(listen_t *ls, const char *cmd, uint32_t timeout_s, uint32_t lease_ms, unsigned block_ms,
                      pid_t *pid_of)
{
	struct ran r = { 0 };
	struct listen_spec s = { .job = "t85", .kind = "after", .cmd = cmd, .context = "{}", .fire_ms = 1,
	                         .timeout_s = timeout_s, .lease_ms = lease_ms };
	listen_run_t *lr = listen_start(ls, &s, ran_cb, &r);
	if (!lr) BAIL_OUT("listen_start: out of memory");
	if (pid_of) *pid_of = 0;
	if (block_ms) usleep(block_ms * 1000u);
	ev_timer give_up;
	ev_timer_init(&give_up, give_up_cb, 20.0, 0);
	ev_timer_start(EV_DEFAULT, &give_up);
	while (!r.done) {
		if (ev_run(EV_DEFAULT, 0) == 0 || !ev_is_active(&give_up)) break;
	}
	ev_timer_stop(EV_DEFAULT, &give_up);
	if (!r.done) {
		listen_cancel(lr);
		snprintf(r.why, sizeof r.why, "(did not end within 20 s)");
	}
	return r;
}

/* fds open in /proc/PID/fd; *high: whether one is above 4 (the keeper's: 0-2, its lease, its pidfd) */
static int fds_of(pid_t pid, int *high)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(p);
	int n = 0;
	*high = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		if (e->d_name[0] != '.') {
			n++;
			if (atoi(e->d_name) > 4) *high = 1;
		}
	if (d) closedir(d);
	return d ? n : -1;
}

struct keeper_look {
	pid_t keeper;
	int nfd, high;
	ev_timer w;
};

static void look_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct keeper_look *k = w->data;
	pid_t kids[8];
	int n = tsup_children(getpid(), kids, 8);
	for (int i = 0; i < n && !k->keeper; i++) {
		int nfd, high;
		pid_t grand[4];
		/* the keeper: our child with a child (the command) */
		if (tsup_children(kids[i], grand, 4) > 0 && (nfd = fds_of(kids[i], &high)) >= 0) {
			k->keeper = kids[i];
			k->nfd = nfd;
			k->high = high;
		}
	}
}

static void without_zookeeper(void)
{
	char ok_sh[400], exit3[400], kill9[400], term[400], slow[400], pidrec[400], cmd[1024];
	tlib_script(ok_sh, sizeof ok_sh, "ok.sh", "#!/bin/sh\necho said so\n");
	tlib_script(exit3, sizeof exit3, "exit3.sh", "#!/bin/sh\nexit 3\n");
	tlib_script(kill9, sizeof kill9, "kill9.sh", "#!/bin/sh\nkill -9 $$\n");
	tlib_script(term, sizeof term, "term.sh", "#!/bin/sh\nkill -TERM $$\nsleep 5\n");
	tlib_script(slow, sizeof slow, "slow.sh", "#!/bin/sh\nsleep \"$1\"\n");
	tlib_script(pidrec, sizeof pidrec, "pidrec.sh", "#!/bin/sh\necho $$ > \"$1\"\nsleep 30\n");
	listen_t *ls = listen_new(EV_DEFAULT);
	if (!ls) BAIL_OUT("listen_new: out of memory");
	/* the loop's other fds, which no keeper may hold: one CLOEXEC, one not (as the ZooKeeper client's) */
	int extra[2];
	if (pipe(extra) < 0) BAIL_OUT("pipe failed");

	struct { const char *cmd; uint32_t timeout_s; const char *why; enum listen_result res; } c[] = {
		{ ok_sh, 10, "exit 0", LISTEN_OK },
		{ exit3, 10, "exit 3", LISTEN_FAILED },
		{ kill9, 10, "signal 9", LISTEN_FAILED },
		{ term, 10, "signal 15", LISTEN_FAILED },
		{ NULL, 1, "timed out after ", LISTEN_TIMEOUT },
	};
	snprintf(cmd, sizeof cmd, "%s 30", slow);
	c[4].cmd = cmd;
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct ran plain = run(ls, c[i].cmd, c[i].timeout_s, 0, 0, NULL);
		struct ran leased = run(ls, c[i].cmd, c[i].timeout_s, 300, 0, NULL);
		ok(plain.res == c[i].res && !strncmp(plain.why, c[i].why, strlen(c[i].why)) && leased.res == plain.res &&
		   !strcmp(leased.why, plain.why), "%s: \"%s\" with a lease as without (\"%s\")",
		   strrchr(c[i].cmd, '/') + 1, leased.why, plain.why);
	}

	/* renewed: a command twice as long as its lease, the loop running */
	snprintf(cmd, sizeof cmd, "%s 0.8", slow);
	struct keeper_look k = { 0 };
	ev_timer_init(&k.w, look_cb, 0.2, 0);
	k.w.data = &k;
	ev_timer_start(EV_DEFAULT, &k.w);
	struct ran renewed = run(ls, cmd, 10, 300, 0, NULL);
	ok(renewed.res == LISTEN_OK && !strcmp(renewed.why, "exit 0"), "renewed every lease/4: ran past its 300 ms "
	   "lease to its end (%s)", renewed.why);
	ok(k.keeper > 0 && k.nfd >= 4 && k.nfd <= 5 && !k.high, "its keeper (pid %d) holds %d fds: 0-2, the lease, "
	   "its pidfd, none of the loop's", (int)k.keeper, k.nfd);

	/* the loop blocked past the lease */
	char rec[400];
	snprintf(rec, sizeof rec, "%s/pidrec", tlib_tmpdir());
	snprintf(cmd, sizeof cmd, "%s %s", pidrec, rec);
	uint64_t t0 = tlib_now_ms();
	struct ran frozen = run(ls, cmd, 60, 300, 1500, NULL);
	uint64_t took = tlib_now_ms() - t0;
	char *said = tsup_slurp(rec);
	pid_t cpid = said ? atoi(said) : 0;
	free(said);
	unsigned ms = 0;
	ok(frozen.res == LISTEN_FAILED &&
	   sscanf(frozen.why, "killed: the supervisor did not renew its lease for %u ms", &ms) == 1 && ms >= 300 && ms < 600,
	   "the loop blocked for 1.5 s: the command killed, \"%s\"", frozen.why);
	int gone = 0;
	for (uint64_t end = tlib_now_ms() + 3000; cpid > 0 && tlib_now_ms() < end && !(gone = !tsup_alive(cpid));)
		usleep(10000);
	ok(cpid > 0 && gone && took < 2500, "  its process (%d) is gone; ended %llu ms after its start", (int)cpid,
	   (unsigned long long)took);
	close(extra[0]);
	close(extra[1]);
	listen_free(ls);
}

/* ---- two supervisors, one frozen -------------------------------------------------------------- */

static struct tzkup u;

/* afterAll: OUT, then the context. "start FIRE PID TAKEOVER NS ALIVE PREV": PREV the pid of this
 * fire's run before (0: none), ALIVE 1 if it still runs now (kill -0 and not a zombie); sleeps
 * 20 s; "end FIRE PID TAKEOVER NS". */
static const char aa_sh[] =
	"#!/bin/sh\n"
	"prev=$(sed -n \"s/^start $EJOB_FIRE_ID \\([0-9]*\\) .*/\\1/p\" \"$1\" 2>/dev/null | tail -n 1)\n"
	"alive=0\n"
	"if [ -n \"$prev\" ] && kill -0 \"$prev\" 2>/dev/null; then\n"
	"  case $(sed 's/.*) //' /proc/$prev/stat 2>/dev/null) in Z*|X*|'') ;; *) alive=1;; esac\n"
	"fi\n"
	"echo \"start $EJOB_FIRE_ID $$ $EJOB_LISTENER_TAKEOVER $(date +%s%N) $alive ${prev:-0}\" >> \"$1\"\n"
	"sleep 20\n"
	"echo \"end $EJOB_FIRE_ID $$ $EJOB_LISTENER_TAKEOVER $(date +%s%N)\" >> \"$1\"\n";

#define MAXA 64
static struct tafter_rec recs[MAXA];
static int nrecs;

static void load(const char *path) { nrecs = tafter_load(path, recs, MAXA); }

static const struct tafter_rec *nth(const char *kind, long long fire, int n)
{
	return tafter_nth(recs, nrecs, kind, fire, n);
}

/* the n-th start line's ALIVE and PREV */
static int start_extra(const char *path, long long fire, int n, int *alive, int *prev)
{
	char *t = tsup_slurp(path);
	int found = 0;
	for (char *p = t ? strtok(t, "\n") : NULL; p && !found; p = strtok(NULL, "\n")) {
		long long f, ns;
		int pid, tk;
		if (sscanf(p, "start %lld %d %d %lld %d %d", &f, &pid, &tk, &ns, alive, prev) == 6 && f == fire && n-- == 0)
			found = 1;
	}
	free(t);
	return found;
}

static int descends(pid_t root, pid_t pid)
{
	pid_t d[64];
	int n = tsup_descendants(root, d, 64);
	for (int i = 0; i < n; i++)
		if (d[i] == pid) return 1;
	return 0;
}

static void frozen_supervisor(void)
{
	tzkup_start(&u, 200, "t85", 4000);
	const char *rec = tsup_rec_script();
	char aash[400], r_items[400], r_aa[400], cron[64], jobs[2048];
	tlib_script(aash, sizeof aash, "afterall.sh", aa_sh);
	snprintf(r_items, sizeof r_items, "%s/runs-agg", tlib_tmpdir());
	snprintf(r_aa, sizeof r_aa, "%s/afterall", tlib_tmpdir());
	tsup_cron_once(cron, sizeof cron, 12);
	snprintf(jobs, sizeof jobs,
	         "  agg:\n    type: script\n    cron: \"%s\"\n    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"%s %s\", ejob.listener.afterAll: \"%s %s\", "
	         "ejob.listener.timeoutSeconds: 60}\n",
	         cron, rec, r_items, aash, r_aa);
	struct tsup sv[2];
	tzkup_config(&u, &sv[0], "a", "workers: 2, shutdownGraceSeconds: 0, killGraceSeconds: 1", jobs);
	tzkup_config(&u, &sv[1], "b", "workers: 2, shutdownGraceSeconds: 0, killGraceSeconds: 1", jobs);
	tzkup_run(&u, &sv[0], "127.0.0.1");
	tzkup_run(&u, &sv[1], "127.0.0.2");
	/* (a job shards when it first fires: the items are assigned at the fire) */
	ok(tzkup_wait_registered(&u, "agg", sv[0].id, 0, 10000) && tzkup_wait_registered(&u, "agg", sv[1].id, 0, 10000),
	   "two supervisors registered");
	int session = tsup_session_ms(&sv[0]);
	diag("negotiated session timeout %d ms", session);

	const struct tafter_rec *s1 = NULL;
	for (uint64_t end = tlib_now_ms() + 25000; tlib_now_ms() < end && !s1; usleep(20000)) {
		load(r_aa);
		for (int i = 0; i < nrecs && !s1; i++)
			if (!strcmp(recs[i].kind, "start")) s1 = &recs[i];
	}
	ok(s1 != NULL, "the fire's afterAll started");
	if (!s1) BAIL_OUT("no afterAll started");
	long long f = s1->fire;
	pid_t first = s1->pid;
	int x = descends(sv[0].pid, first) ? 0 : descends(sv[1].pid, first) ? 1 : -1;
	ok(x >= 0, "fire %lld: its afterAll (pid %d) runs under %s", f, (int)first, x >= 0 ? sv[x].id : "nobody");
	if (x < 0) BAIL_OUT("whose command is it?");

	kill(sv[x].pid, SIGSTOP);
	long long stopped_ns = tlib_wall_ns();
	diag("stopped %s (pid %d)", sv[x].id, (int)sv[x].pid);
	/* when the frozen one's command dies (from /proc), and when the takeover starts */
	long long died_ns = 0;
	const struct tafter_rec *s2 = NULL;
	for (uint64_t end = tlib_now_ms() + 20000; tlib_now_ms() < end && !s2; usleep(10000)) {
		if (!died_ns && !tsup_alive(first)) died_ns = tlib_wall_ns();
		load(r_aa);
		s2 = nth("start", f, 1);
	}
	if (!died_ns && !tsup_alive(first)) died_ns = tlib_wall_ns();
	int alive = -1, prev = 0;
	ok(s2 && s2->takeover == 1 && s2->pid != first && descends(sv[1 - x].pid, s2->pid),
	   "the other took the run over, told it is a takeover");
	char died[32];
	snprintf(died, sizeof died, died_ns ? "%.2f s after the stop" : "still running", (double)(died_ns - stopped_ns) / 1e9);
	ok(died_ns && s2 && died_ns < s2->ns, "  the frozen one's command was dead (/proc) before it: %s, the takeover "
	   "%.2f s after the stop", died, s2 ? (double)(s2->ns - stopped_ns) / 1e9 : -1.0);
	int found = s2 && start_extra(r_aa, f, 1, &alive, &prev);
	ok(found && prev == first && alive == 0,
	   "  and so the takeover found it (kill -0 %d: %s)", prev, alive == 0 ? "gone" : alive == 1 ? "alive" : "?");
	ok(!tsup_alive(first), "  it is still gone");

	kill(sv[x].pid, SIGCONT);
	long long resumed_ns = tlib_wall_ns();
	diag("resumed %s", sv[x].id);
	/* the takeover runs 20 s: its end, then a second for a late third start to show */
	const struct tafter_rec *e = NULL;
	for (uint64_t end = tlib_now_ms() + 30000; tlib_now_ms() < end && !e; usleep(100000)) {
		load(r_aa);
		e = nth("end", f, 0);
	}
	int cleaned = 0;
	for (uint64_t end = tlib_now_ms() + 5000; tlib_now_ms() < end && !cleaned; usleep(50000))
		cleaned = tzk_exists(u.zh, tzkup_path(&u, "agg", "guarantee/once/%lld", f), NULL) == ZNONODE;
	usleep(1000000);
	load(r_aa);
	e = nth("end", f, 0);
	ok(!nth("start", f, 2), "resumed, the frozen one did not start it a third time");
	ok(e && s2 && e->pid == s2->pid && !nth("end", f, 1), "the run ended once: the takeover's end, no other");
	ok(cleaned, "  and the fire's nodes are gone (guarantee/once/%lld)", f);
	ok(e && e->ns > resumed_ns, "  (it ended after the resume: the resumed one saw it running)");
	tsup_stop(&sv[0], SIGTERM, 10000);
	tsup_stop(&sv[1], SIGTERM, 10000);
	tzkup_end(&u);
}

int main(void)
{
	tlib_init(150);
	log_init("t85");
	log_set_level(LL_ERROR);    /* listen.c's own lines (the commands' output, timeouts) are not the test's */
	without_zookeeper();
	frozen_supervisor();
	return done_testing();
}
