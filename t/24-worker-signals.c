/* t/24-worker-signals.c: ejob-worker's life with its supervisor: cancel through shared memory
 * and SIGUSR1 (script and native), a lost lease (SIGTERM at its stop time; at its kill time the
 * worker itself SIGKILLs a script that ignores SIGTERM, and exits if a native item does not
 * return: nobody else will while the supervisor is frozen), heartbeats while a script runs, SIGTERM with
 * the supervisor alive (finish the item, exit 0), the shutdown flag, and the supervisor's
 * death: lifeline EOF, or the parent SIGKILLed, must take the running script's whole process
 * group (a grandchild included) down within a second.
 *
 * This test is a child subreaper, so the processes orphaned by a dying worker come back to it
 * to be reaped (and to be checked for). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipc/ring.h"
#include "ipc/wait.h"
#include "t/lib/tlib.h"
#include "t/lib/twork.h"
#include "t/tap.h"

static char dir[512];
static char logpath[600];
static char lib[4096];

static void msleep(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
}

static int busy_with_pgid(void *arg)
{
	struct shm_worker *w = arg;
	return atomic_load(&w->state) == WRK_BUSY && atomic_load(&w->item_pgid) > 0;
}

static int in_native(void *arg)
{
	struct shm_worker *w = arg;
	return atomic_load(&w->state) == WRK_BUSY && (atomic_load(&w->flags) & WRKF_IN_NATIVE);
}

static void cancel(struct shm_worker *w, uint64_t xid, uint32_t why)
{
	atomic_store(&w->cancel_xid, xid);
	atomic_store_explicit(&w->cancel, why, memory_order_release);
}

static void uncancel(struct shm_worker *w)
{
	atomic_store(&w->cancel, 0);
	atomic_store(&w->cancel_xid, 0);
}

/* ---- cancel ----------------------------------------------------------------------------------- */

static void test_cancel_script(struct twork *t)
{
	struct shm_worker *w = twork_entry(t, t->index);
	struct frame_complete c;
	for (int with_signal = 1; with_signal >= 0; with_signal--) {
		struct frame_submit f = twork_item(t, FRAME_KIND_SCRIPT);
		f.cmd = "/bin/sh -c 'exec sleep 30'";
		twork_publish(t, &f);
		ok(tlib_wait_for(busy_with_pgid, w, 5000), "script running, item_pgid %d published", atomic_load(&w->item_pgid));
		pid_t pg = atomic_load(&w->item_pgid);
		uint64_t t0 = tlib_now_ms();
		cancel(w, f.xid, SHM_CANCEL_TIMEOUT);
		if (with_signal) kill(t->pid, SIGUSR1);
		int got = twork_completion(t, 3000, &c);
		uint64_t dt = tlib_now_ms() - t0;
		ok(got && c.xid == f.xid, "%s: the item completed", with_signal ? "cancel + SIGUSR1" : "cancel alone");
		ok(c.status == FRAME_ST_TIMEOUT && c.signal == SIGTERM, "  status timeout, signal SIGTERM (got %s %d)",
		   frame_status_name(c.status), c.signal);
		if (with_signal) ok(dt < 300, "  stopped %llu ms after SIGUSR1", (unsigned long long)dt);
		else ok(dt < 1000, "  stopped %llu ms after the cancel, noticed by the 500 ms poll", (unsigned long long)dt);
		note("cancel %s: %llu ms", with_signal ? "with SIGUSR1" : "without a signal", (unsigned long long)dt);
		ok(kill(-pg, 0) < 0 && errno == ESRCH, "  the process group is gone");
		uncancel(w);
	}
	/* a cancel for another xid touches nothing */
	struct frame_submit f = twork_item(t, FRAME_KIND_SCRIPT);
	f.cmd = "/bin/sh -c 'exec sleep 0.3'";
	twork_publish(t, &f);
	tlib_wait_for(busy_with_pgid, w, 5000);
	cancel(w, f.xid + 1000, SHM_CANCEL_TIMEOUT);
	kill(t->pid, SIGUSR1);
	ok(twork_completion(t, 3000, &c) && c.status == FRAME_ST_OK, "a cancel for another xid: the item runs to its end");
	uncancel(w);
}

static void test_cancel_native(struct twork *t)
{
	struct shm_worker *w = twork_entry(t, t->index);
	struct frame_submit f = twork_item(t, FRAME_KIND_NATIVE);
	f.lib = lib;
	f.sym = "hello_wait";
	twork_publish(t, &f);
	ok(tlib_wait_for(in_native, w, 5000), "native job running: WRKF_IN_NATIVE set");
	cancel(w, f.xid, SHM_CANCEL_SHUTDOWN);
	kill(t->pid, SIGUSR1);
	struct frame_complete c;
	ok(twork_completion(t, 3000, &c) && c.xid == f.xid, "native: completed after the cancel");
	ok(c.status == FRAME_ST_CANCELLED && c.exit_code == 0, "  status cancelled (shutdown), its return value 0 (got %s %d)",
	   frame_status_name(c.status), c.exit_code);
	is_int(atomic_load(&w->flags) & WRKF_IN_NATIVE, 0, "  WRKF_IN_NATIVE cleared");
	uncancel(w);
}

static void test_lease(struct twork *t)
{
	struct shm_worker *w = twork_entry(t, t->index);
	struct shm_header *h = seg_header(t->s);
	struct frame_submit f = twork_item(t, FRAME_KIND_SCRIPT);
	f.cmd = "/bin/sh -c 'exec sleep 30'";
	atomic_store(&h->lease_deadline_ns, wait_now_ns() + 5000000000ull);   /* a lease that holds */
	twork_publish(t, &f);
	tlib_wait_for(busy_with_pgid, w, 5000);
	msleep(100);
	uint64_t t0 = tlib_now_ms();
	atomic_store(&h->lease_deadline_ns, wait_now_ns() + 200000000ull);   /* ... runs out in 200 ms */
	struct frame_complete c;
	int got = twork_completion(t, 3000, &c);
	uint64_t dt = tlib_now_ms() - t0;
	ok(got && c.status == FRAME_ST_CANCELLED && c.signal == SIGTERM, "lease ran out: the script is stopped, cancelled (got %s %d)",
	   frame_status_name(c.status), c.signal);
	/* cut from 5 s to 200 ms while the runner sleeps its tick: it sees the new time at the next
	 * tick (a supervisor only ever moves the time later, and then the runner wakes right at it) */
	ok(dt >= 190 && dt < 1000, "  %llu ms after the lease was cut to 200 ms", (unsigned long long)dt);
	atomic_store(&h->lease_deadline_ns, 0);
}

/* a script that ignores SIGTERM (and so does its sleep, inheriting SIG_IGN): the worker SIGKILLs
 * its process group at the lease's kill time, with no supervisor doing anything */
static void test_lease_kill_script(struct twork *t)
{
	struct shm_worker *w = twork_entry(t, t->index);
	struct shm_header *h = seg_header(t->s);
	struct frame_submit f = twork_item(t, FRAME_KIND_SCRIPT);
	f.cmd = "/bin/sh -c 'trap \"\" TERM; sleep 30; sleep 30'";
	twork_publish(t, &f);
	ok(tlib_wait_for(busy_with_pgid, w, 5000), "a script that ignores SIGTERM runs");
	pid_t pg = atomic_load(&w->item_pgid);
	msleep(100);
	uint64_t t0 = tlib_now_ms(), now = wait_now_ns();
	/* stop in 200 ms, kill in 1500 (the worker looks at the kill time at least every second, then
	 * sleeps until it: a supervisor only ever moves it later, while its session lives) */
	atomic_store(&h->lease_kill_ns, now + 1500000000ull);
	atomic_store(&h->lease_deadline_ns, now + 200000000ull);
	struct frame_complete c;
	int got = twork_completion(t, 3000, &c);
	uint64_t dt = tlib_now_ms() - t0;
	ok(got && c.xid == f.xid && c.status == FRAME_ST_CANCELLED && c.signal == SIGKILL,
	   "lease ran out and SIGTERM was ignored: killed at the kill time, cancelled (got %s %d)",
	   frame_status_name(c.status), c.signal);
	ok(dt >= 1490 && dt < 1800, "  %llu ms after the kill time was set to 1500 ms", (unsigned long long)dt);
	/* the orphaned sleep comes back to this subreaper: reap it, then nothing of the group is left */
	siginfo_t si;
	for (int k = 0; k < 100 && kill(-pg, 0) == 0; k++) {
		while (memset(&si, 0, sizeof si), waitid(P_PGID, (id_t)pg, &si, WEXITED | WNOHANG) == 0 && si.si_pid) {}
		msleep(5);
	}
	ok(kill(-pg, 0) < 0 && errno == ESRCH, "  the whole process group is gone");
	char *log = twork_slurp(logpath, NULL);
	ok(log && strstr(log, "the supervisor did not stop the item: killed its process group"), "  and the worker said why");
	free(log);
	atomic_store(&h->lease_deadline_ns, 0);
	atomic_store(&h->lease_kill_ns, 0);
	ok(kill(t->pid, 0) == 0, "  the worker goes on");
}

/* a native item that never looks at ejob_cancelled: it cannot be stopped but by ending the
 * worker, which the worker does at the kill time */
static void test_lease_kill_native(void)
{
	char stuck[4096];
	if (!realpath(BUILT("t/native/libstuck.so"), stuck)) BAIL_OUT(BUILT("t/native/libstuck.so") ": %s (run make)", strerror(errno));
	struct twork t;
	twork_init(&t, 1, logpath);
	pid_t pid = twork_spawn(&t, 0);
	struct shm_worker *w = twork_entry(&t, 0);
	struct shm_header *h = seg_header(t.s);
	uint64_t now = wait_now_ns();
	atomic_store(&h->lease_kill_ns, now + 60000000000ull);
	atomic_store(&h->lease_deadline_ns, now + 50000000000ull);   /* a lease that holds */
	struct frame_submit f = twork_item(&t, FRAME_KIND_NATIVE);
	f.lib = stuck;
	f.sym = "stuck_item";
	twork_publish(&t, &f);
	ok(tlib_wait_for(in_native, w, 5000), "a native item that ignores cancellation runs");
	msleep(100);
	uint64_t t0 = tlib_now_ms();
	now = wait_now_ns();
	atomic_store(&h->lease_kill_ns, now + 1500000000ull);
	atomic_store(&h->lease_deadline_ns, now + 100000000ull);
	int st = 0, ex = twork_wait_exit(pid, 3000, &st);
	uint64_t dt = tlib_now_ms() - t0;
	ok(ex && WIFEXITED(st) && WEXITSTATUS(st) == 1, "at the lease's kill time the worker exits 1 (status 0x%x)", st);
	ok(dt >= 1490 && dt < 1800, "  %llu ms after the kill time was set to 1500 ms", (unsigned long long)dt);
	if (ex) t.pid = 0;
	char *log = twork_slurp(logpath, NULL);
	ok(log && strstr(log, "the ZooKeeper lease ran out") && strstr(log, "the supervisor did not stop the item: exiting"),
	   "  and said why");
	free(log);
	twork_fini(&t);
}

/* ---- heartbeat and stopping -------------------------------------------------------------------- */

static void test_heartbeat_busy(struct twork *t)
{
	struct shm_worker *w = twork_entry(t, t->index);
	struct frame_submit f = twork_item(t, FRAME_KIND_SCRIPT);
	f.cmd = "/bin/sh -c 'exec sleep 1.3'";
	twork_publish(t, &f);
	tlib_wait_for(busy_with_pgid, w, 5000);
	msleep(100);
	uint64_t h0 = atomic_load(&w->heartbeat_ns);
	msleep(1000);
	uint64_t h1 = atomic_load(&w->heartbeat_ns), now = wait_now_ns();
	ok(h1 - h0 >= 400000000ull, "script running: heartbeat advanced %.3f s in 1 s", (double)(h1 - h0) / 1e9);
	ok(now - h1 < 700000000ull, "  never older than 500 ms + slack (%.3f s)", (double)(now - h1) / 1e9);
	is_int(atomic_load(&w->state), WRK_BUSY, "  state BUSY");
	ok(atomic_load(&w->started_ns) > 0 && atomic_load(&w->started_ns) <= h0, "  started_ns stamped when it became BUSY");
	struct frame_complete c;
	ok(twork_completion(t, 3000, &c) && c.status == FRAME_ST_OK, "  and the item ends ok");
	ok(c.duration_us >= 1200000 && c.duration_us < 3000000, "  duration %llu us for a 1.3 s script",
	   (unsigned long long)c.duration_us);
}

static void test_sigterm(void)
{
	struct twork t;
	twork_init(&t, 1, logpath);
	pid_t p = twork_spawn(&t, 0);
	struct shm_worker *w = twork_entry(&t, 0);
	struct frame_submit f = twork_item(&t, FRAME_KIND_SCRIPT);
	f.cmd = "/bin/sh -c 'exec sleep 0.4'";
	twork_publish(&t, &f);
	tlib_wait_for(busy_with_pgid, w, 5000);
	kill(p, SIGTERM);
	struct frame_submit g = twork_item(&t, FRAME_KIND_SCRIPT);   /* must stay unclaimed */
	g.cmd = "/bin/true";
	twork_publish(&t, &g);
	struct frame_complete c;
	ok(twork_completion(&t, 3000, &c) && c.xid == f.xid && c.status == FRAME_ST_OK,
	   "SIGTERM while busy: the running item is finished, ok");
	int st = 0;
	ok(twork_wait_exit(p, 2000, &st) && WIFEXITED(st) && WEXITSTATUS(st) == 0, "  then the worker exits 0");
	t.pid = 0;
	is_int(atomic_load(&w->state), WRK_STOPPING, "  state STOPPING");
	ok(!twork_completion(&t, 50, &c) && ring_pending(t.s), "  the next item was left in the ring");
	twork_fini(&t);

	twork_init(&t, 1, logpath);
	p = twork_spawn(&t, 0);
	uint64_t t0 = tlib_now_ms();
	kill(p, SIGTERM);
	/* the exit's time is shown, not checked: its bound is the item waiter's own wake-up (0.5 s),
	 * and a loaded CI machine delays a process for longer than the wake saves */
	ok(twork_wait_exit(p, 2000, &st) && WIFEXITED(st) && WEXITSTATUS(st) == 0, "SIGTERM while idle: exit 0");
	diag("  the worker exited %llu ms after SIGTERM", (unsigned long long)(tlib_now_ms() - t0));
	t.pid = 0;
	twork_fini(&t);

	twork_init(&t, 1, logpath);
	p = twork_spawn(&t, 0);
	t0 = tlib_now_ms();
	atomic_store(&seg_header(t.s)->shutdown, 1);
	ring_wake_all(t.s);
	ok(twork_wait_exit(p, 2000, &st) && WIFEXITED(st) && WEXITSTATUS(st) == 0, "shutdown flag: exit 0");
	diag("  the worker exited %llu ms after the flag", (unsigned long long)(tlib_now_ms() - t0));
	is_int(atomic_load(&twork_entry(&t, 0)->state), WRK_STOPPING, "  state STOPPING");
	t.pid = 0;
	twork_fini(&t);
}

/* ---- the supervisor dies ------------------------------------------------------------------------ */

static pid_t read_pid(const char *name)
{
	char path[700];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	char *s = twork_slurp(path, NULL);
	pid_t p = s && strchr(s, '\n') ? (pid_t)atoi(s) : 0;
	free(s);
	return p;
}

static int script_started(void *arg)
{
	(void)arg;
	return read_pid("me") > 0 && read_pid("gc") > 0;
}

/* Publish a script that starts a grandchild in its group; wait until both run. */
static void start_family(struct twork *t, pid_t *me, pid_t *gc)
{
	char path[700];
	snprintf(path, sizeof path, "%s/me", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/gc", dir);
	unlink(path);
	char cmd[2000];
	snprintf(cmd, sizeof cmd, "/bin/sh -c 'sleep 30 & echo $! > %s/gc; echo $$ > %s/me; wait'", dir, dir);
	struct frame_submit f = twork_item(t, FRAME_KIND_SCRIPT);
	f.cmd = cmd;
	twork_publish(t, &f);
	if (!tlib_wait_for(script_started, NULL, 5000)) BAIL_OUT("the script did not start");
	*me = read_pid("me");
	*gc = read_pid("gc");
	tlib_track(*me);   /* killed at exit should the worker fail to */
	tlib_track(*gc);
}

struct family {
	pid_t worker, me, gc;
	int status, reaped;
};

static int family_gone(void *arg)
{
	struct family *f = arg;
	if (!f->reaped) {
		pid_t r = waitpid(f->worker, &f->status, WNOHANG);
		if (r == f->worker) {
			f->reaped = 1;
			tlib_untrack(f->worker);
		}
	}
	return f->reaped && twork_gone(f->me) && twork_gone(f->gc);
}

static void reap_orphans(const struct family *f)
{
	/* both came back to this subreaper; reap them so nothing is left */
	for (int i = 0; i < 50 && (waitpid(f->me, NULL, WNOHANG) == 0 || waitpid(f->gc, NULL, WNOHANG) == 0); i++)
		msleep(2);
	tlib_untrack(f->me);
	tlib_untrack(f->gc);
}

static void test_lifeline(void)
{
	struct twork t;
	twork_init(&t, 1, logpath);
	struct family f = { .worker = twork_spawn(&t, 0) };
	start_family(&t, &f.me, &f.gc);
	is_int(atomic_load(&twork_entry(&t, 0)->item_pgid), f.me, "lifeline: the script's group is published");
	uint64_t t0 = tlib_now_ms();
	close(t.lifeline);
	t.lifeline = -1;
	int gone = tlib_wait_for(family_gone, &f, 3000);
	uint64_t dt = tlib_now_ms() - t0;
	ok(gone, "lifeline closed: worker, script and grandchild all gone");
	ok(dt < 1000, "  within %llu ms", (unsigned long long)dt);
	note("lifeline EOF to everything gone: %llu ms", (unsigned long long)dt);
	ok(f.reaped && WIFEXITED(f.status) && WEXITSTATUS(f.status) == 1, "  the worker exited 1");
	char *log = twork_slurp(logpath, NULL);
	ok(log && strstr(log, "the supervisor is gone (lifeline closed): killed the running item's process group"),
	   "  and said why");
	free(log);
	reap_orphans(&f);
	t.pid = 0;
	twork_fini(&t);
}

static void test_parent_killed(void)
{
	struct twork t;
	twork_init(&t, 2, logpath);
	int pp[2];
	if (pipe(pp) < 0) BAIL_OUT("pipe");
	pid_t mid = tlib_fork();
	if (mid == 0) {
		/* a stand-in supervisor: it starts the worker (holding the only lifeline write end), then
		 * waits to be SIGKILLed */
		close(pp[0]);
		pid_t w = twork_start(&t, 1, NULL);
		if (!twork_wait_ready(&t, 5000)) _exit(3);
		if (write(pp[1], &w, sizeof w) != sizeof w) _exit(4);
		for (;;) pause();
	}
	close(pp[1]);
	struct family f = { 0 };
	if (read(pp[0], &f.worker, sizeof f.worker) != sizeof f.worker) BAIL_OUT("stand-in supervisor failed");
	close(pp[0]);
	tlib_track(f.worker);
	start_family(&t, &f.me, &f.gc);
	uint64_t t0 = tlib_now_ms();
	kill(mid, SIGKILL);
	while (waitpid(mid, NULL, 0) < 0 && errno == EINTR) {}
	tlib_untrack(mid);
	int gone = tlib_wait_for(family_gone, &f, 3000);
	uint64_t dt = tlib_now_ms() - t0;
	ok(gone, "supervisor SIGKILLed: worker, script and grandchild all gone");
	ok(dt < 1000, "  within %llu ms", (unsigned long long)dt);
	note("supervisor SIGKILL to everything gone: %llu ms", (unsigned long long)dt);
	ok(f.reaped && WIFEXITED(f.status) && WEXITSTATUS(f.status) == 1, "  the worker exited 1");
	reap_orphans(&f);
	twork_fini(&t);
}

int main(void)
{
	tlib_init(60);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) BAIL_OUT("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	if (!realpath(BUILT("examples/libhello.so"), lib)) BAIL_OUT(BUILT("examples/libhello.so") ": %s (run make)", strerror(errno));
	snprintf(dir, sizeof dir, "%s", tlib_tmpdir());
	snprintf(logpath, sizeof logpath, "%s/worker.log", dir);
	plan(50);

	struct twork t;
	twork_init(&t, 1, logpath);
	twork_spawn(&t, 0);
	test_cancel_script(&t);
	test_cancel_native(&t);
	test_lease(&t);
	test_lease_kill_script(&t);
	test_heartbeat_busy(&t);
	ok(kill(t.pid, 0) == 0, "the worker is still running after all that");
	twork_fini(&t);
	test_sigterm();
	test_lease_kill_native();
	test_lifeline();
	test_parent_killed();

	char *log = twork_slurp(logpath, NULL);
	ok(log && !strstr(log, "Sanitizer") && !strstr(log, "runtime error:"), "no sanitizer report in the worker logs");
	if (log && (strstr(log, "Sanitizer") || strstr(log, "runtime error:"))) diag("%s", log);
	free(log);
	return done_testing();
}
