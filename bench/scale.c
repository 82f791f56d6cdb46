/* bench/scale.c: ejob at the sizes users run (issues 12 and 30), with a real ZooKeeper 3.8 and real
 * supervisors (t/lib/tzk, t/lib/tsup, t/lib/tclu), against the targets, in one run:
 *
 * A. One supervisor (--workers 8), N jobs of 2 items each, N = 1,000, 10,000 and 50,000 (the
 *    growth runs; EJOB_SCALE_SIZES=1000,2000 runs them alone at other sizes), each N in a namespace
 *    of its own (a first start: every node is created), then a restart. Session timeout 6000 ms
 *    requested (tickTime 500: sessions of 1-10 s); ZooKeeper's JVM gets a 1 GB heap up to 10,000
 *    jobs (in the tests' 128 MB, 10,000 jobs' nodes made it collect back to back, and that was all
 *    one saw) and 1 GB per 12,500 jobs above (50,000: 4 GB for the 2.6 million znodes of the run;
 *    measured: some 600 bytes of heap a znode, jcmd GC.heap_info after a 2,000-job run, and the
 *    JVM's RSS 2.0 GB with 2.2 million znodes after a run of 2,000 and 50,000 jobs). Before
 *    the first size ZooKeeper's JVM is warmed up to its steady speed by rounds of the floor's
 *    requests (bench/lib/floor.c floor_warm_up: its rounds are printed), so that the first thing
 *    measured does not pay for its JIT alone.
 *    Jobs are native (bench/libnoop.so rtstamp_item: one line "REALTIME_NS JOB ITEM FIRE_ID
 *    TASK_ID" appended per item start, first thing), every job on the same cron: a fire every
 *    10 s up to 1,000 jobs, 20 s up to 10,000, above that the first of 30 s, 1, 2, 3, ... minutes
 *    longer than the time the registration is expected to take (est: 3 s + 1 s per 700 jobs;
 *    50,000: 74 s, a fire every 2 minutes), the first fire est after the start. The waits grow
 *    with N above 10,000 jobs (the first fire's: 10 ms a job; the registration's: 6 ms a job).
 *   registration    the supervisor's fork to the log's time stamp of its N-th "job J: registered
 *                   as" line (the log says it once per job, when its nodes are made); checked
 *                   against ZooKeeper afterwards: every job lists the instance under instances/.
 *                   Then a restart: the same supervisor stopped (SIGTERM) and started again on
 *                   the nodes it made (registration then asks before it creates).
 *   RSS, threads    VmRSS, VmHWM and Threads of /proc/PID/status of the supervisor: when the
 *                   N-th job is registered, and 3 s after the measured fire's last item started
 *                   (its completions written and the heap trimmed after the burst; VmHWM is the
 *                   burst's peak).
 *   znodes          mntr zk_znode_count after the measured fire, less the count before the
 *                   supervisor started (the namespace's nodes); watches: wchs "Total watches"
 *                   (this supervisor's: nothing else holds a watch then).
 *   idle            over 5 s after the measured fire has ended (3 s after its last item started)
 *                   and before the next: ZooKeeper packets/s (mntr zk_packets_received +
 *                   zk_packets_sent, deltas; the 4lw themselves are not packets), the requests/s
 *                   the supervisor's session sent (`cons` lcxid, below), and CPU % of one core
 *                   (utime + stime of /proc/PID/stat) of the supervisor and of its workers.
 *   first fire      the first fire after the start shards every job: its time to the moment every
 *                   one of the 2N items has started once (in it, or in the catch-up run of a job
 *                   whose fire was missed), at most 100 s (10 ms a job above 10,000); and the
 *                   fires the log says were missed for the bounded wait for sharding (2 x the
 *                   session timeout: "missed: no assignment after"), whose leaders stepped down
 *                   or were deposed. Issue 30's target: within 2 s at 10,000. The same after the
 *                   restart: the supervisor is started again est before a fire (waiting for it
 *                   after the stop), and that fire is measured the same way.
 *   lateness        the first fire is not measured: once its items (and catch-ups) stop coming,
 *                   the next fire at least 1 s away is: for each of its 2N items, its start stamp -
 *                   the fire's time (the fire id, ms). last = the last item of all the jobs due in
 *                   that second; p50 too. Script jobs (fork + exec of this binary in --stamp mode,
 *                   which writes the same line) at 1,000 in a run of their own, no restart (a line
 *                   under the table; not in the EJOB_SCALE_SIZES run).
 *   lease alarms    log lines "no answer for" (the lease ran down on a healthy session): 0.
 *   floor           (issue 30, point 2) after each size's run (the supervisor stopped), on the same
 *                   ZooKeeper, in namespace fl<N>: a bare client (the ZooKeeper C library, no ejob
 *                   code) sends the requests of ejob's registration, as supervisor/coord/coord_reg.c
 *                   has them on this branch (fl_pass mirrors cj_reg_start, reg_fresh, reg_config and
 *                   reg_join), as fast as ZooKeeper takes them: pipelined, at most 256 at the server
 *                   (zkc's ZKC_WINDOW), consecutive jobs' multis packed into one multi request of at
 *                   most 1,000 ops and 256 KB (zkc_multi_share, as if every turn of its loop held as
 *                   many as fit). A new namespace: the namespace node, then per job exists(trigger)
 *                   and reg_fresh's multi (the root with its type, the 10 dirs, the config with the
 *                   text ejob wrote for j00000 read back, the job's name put in, servers/{ip},
 *                   instances/{id} and leader/failover/alive/{id} ephemeral, the resharding flag,
 *                   leader/election/instance ephemeral and the set of leader/election: 18 ops). A
 *                   restart: that session closed (its ephemerals go), a new one, per job
 *                   exists(trigger), get(root), get(config), create(leader/sharding/necessary)
 *                   and reg_join's multi (create instances/{id} and the alive node, set
 *                   servers/{ip}). Each timed from zookeeper_init to the last answer (ejob's
 *                   registration includes its start); an answer not the one ejob's registration
 *                   expects fails the bench. Printed: floor, ejob, ejob / floor against issue 30's
 *                   1.5x, the floor's requests and the nodes it made.
 *   growth          (issue 30, point 5) per measure (registration, after a restart, RSS at
 *                   registration and after the fires, first fire, watches per job, the floor) its
 *                   value per 1,000 jobs at each size (watches: per job), and the largest size's
 *                   against the one before's: "linear or better" up to 1.15x (noise), above it
 *                   "**superlinear**".
 *   README          the headline rows at 10,000 jobs (the largest size if 10,000 is not run): the
 *                   first fire, registration against the floor (new and restart), RSS, watches.
 *   EJOB_SCALE_ONLY=N: the native run at N jobs alone (a fire every 20 s or more, no restart, no
 *                   idle window, no floor): its registration, first fire and a later fire.
 *
 * B. 20 supervisors (t/lib/tclu: --ip 127.0.0.2 .. .21, shared memory is a memfd per pool, so
 *    nothing is named per machine), 2 workers each, the same 50 native rtstamp jobs of 20 items
 *    with failover: true in every config, a fire every 10 s.
 *   registration    the first fork to every job listing all 20 under instances/ (ZooKeeper).
 *   first exact     the first fire (by its time) in which every item of every job started exactly
 *                   once: stamps counted per (job, item, fire id); the first fire shards.
 *   packets/fire    over 3 fires, from the middle of the interval before the first to the middle
 *                   of the one after the last: mntr packets (received, sent) / fires / 50 jobs,
 *                   measured; and the requests the 20 sessions sent (`cons`: each connection's
 *                   lcxid, the client's request counter, which pings do not move), per job per fire.
 *                   (A supervisor's fire-end line counts all its requests while the fire ran, so
 *                   with 50 jobs firing together it cannot be summed.)
 *                   ElasticJob: 6 + 8 per local item per instance; with 20 items over 20
 *                   instances, 20 x (6 + 8) = 280 requests per job per fire (ELASTICJOB.md, a
 *                   formula, not measured).
 *   kill -9         1.5 s after a fire, 5 supervisors (the leader of the first job among them) and
 *                   everything under them are SIGKILLed (a crashed machine each). Their sessions'
 *                   expiry is observed: a watch on each one's instances/{id} of the first job
 *                   (ephemeral: it goes when the session does). Measured: the last expiry to the
 *                   moment every one of the 1,000 items has started again (stamps after it), and
 *                   the items missing or started twice in every fire after that one (2 fires).
 *
 * Every fire of part B is listed with its items missing and doubled, so that a fire between the
 * kill and the expiries (which the dead instances' items miss: they were assigned to instances
 * that nobody knew were gone, as in ElasticJob) can be told from a loss.
 *
 * Run from the top of the tree after make (it starts supervisor/ejob-supervisor). Every process
 * it starts is tracked by t/lib/tlib and killed at exit, on failure or on a fatal signal. A target
 * missed is reported (exit 0); the bench fails (exit 1) only when it cannot measure: a supervisor
 * dies, the floor's requests are not answered as ejob's registration expects, or items never run
 * (a part A run with no item in its first fire's wait: exit 1 after the tables). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/lib/bench.h"
#include "bench/lib/floor.h"
#include "t/lib/tclu.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"

#define SESSION_MS 6000      /* requested by every supervisor here */
#define TICK_MS 500          /* ZooKeeper's tickTime: sessions of 1-10 s */
#define ZK_HEAP_MB 1024      /* its JVM heap: 10,000 jobs' nodes thrash the tests' 128 MB (full GCs back to back) */
#define A_WORKERS 8
#define A_ITEMS 2
#define IDLE_MS 5000         /* part A: the idle window */
#define FIRST_MAX_S 100      /* part A: the longest wait for the first fire's items (at most 10,000 jobs) */
#define B_SUPS 20
#define B_JOBS 50
#define B_ITEMS 20
#define B_WORKERS 2
#define B_PERIOD 10          /* part B: seconds between fires */
#define B_PKT_FIRES 3        /* part B: fires in the packet window */
#define B_KILL 5             /* part B: supervisors killed at once */
#define B_AFTER 2            /* part B: fires checked after the recovery */
#define EL_PER_FIRE (B_SUPS * (6 + 8 * (B_ITEMS / B_SUPS)))   /* ElasticJob, per job per fire */
#define MAXF 64              /* part B: fires tracked */

/* targets (issue 12) */
#define T_REG_S 5.0          /* 10,000 jobs registered within */
#define T_RSS_KB (64 * 1024) /* RSS at 10,000 jobs below */
#define T_LATE_S 2.0         /* the last native item of a fire started within */

static char self[PATH_MAX];  /* this binary: the script jobs' command, in --stamp mode */
static char noop_lib[PATH_MAX];

/* ---- --stamp FILE [JSON]: the script jobs' command ---------------------------------------------- */

/* Appends "REALTIME_NS JOB ITEM FIRE_ID TASK_ID" to FILE with one write, first thing (the line
 * rtstamp_item writes for a native item). The sharding-context JSON is ignored. */
static int stamp_main(int argc, char **argv)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (argc < 3) return 2;
	const char *job = getenv("EJOB_JOB"), *item = getenv("EJOB_ITEM"), *fire = getenv("EJOB_FIRE_ID"),
		   *task = getenv("EJOB_TASK_ID");
	char line[512];
	int n = snprintf(line, sizeof line, "%" PRId64 " %s %s %s %s\n", (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec,
	                 job ? job : "-", item ? item : "-1", fire ? fire : "0", task ? task : "-");
	if (n < 0 || (size_t)n >= sizeof line) return 1;
	int fd = open(argv[2], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) return 1;
	ssize_t w;
	while ((w = write(fd, line, (size_t)n)) < 0 && errno == EINTR) {}
	return close(fd) == 0 && w == n ? 0 : 1;
}

/* The jobs' config. Every job the same: j00000, j00001, ..., each after the first a merge of its
 * keys (`j00001: {<<: *d}`), so that 50,000 jobs' file keeps under the supervisor's 4 MiB (spelled
 * out, it was 237 bytes a job); the same form at every size, so that the sizes compare. */
static char *jobs_yaml(int njobs, int items, const char *kind, const char *cron, const char *out, int failover)
{
	struct text b = { 0 };
	add(&b, "  j00000: &d\n    type: %s\n    cron: \"%s\"\n    shardingTotalCount: %d\n", kind, cron, items);
	if (failover) add(&b, "    failover: true\n");
	if (!strcmp(kind, "native"))
		add(&b, "    jobParameter: \"%s\"\n    props: {native.library: \"%s\", native.symbol: rtstamp_item}\n", out,
		    noop_lib);
	else
		add(&b, "    props: {script.command.line: \"%s --stamp %s\"}\n", self, out);
	for (int j = 1; j < njobs; j++) add(&b, "  j%05d: {<<: *d}\n", j);
	return b.p;
}

/* ---- A. one supervisor, N jobs ------------------------------------------------------------------- */

struct arun {
	const char *kind;
	int n, period;
	double reg_s, restart_s;         /* restart_s: -1 if not measured */
	struct tsup_mem at_reg, after;
	long long znodes_reg, znodes, watches;
	double idle_s, idle_pps, idle_rps, idle_cpu, idle_workers_cpu;   /* idle_s 0: no window */
	double first_s;                  /* the first fire's time to its last item's first start; -1: none */
	int first_items;                 /* items that started by then (or by first_max_s) */
	double rfirst_s;                 /* the same for the first fire after the restart; -1: none */
	int rfirst_items;
	int bound_missed;                /* fires missed for the bounded wait for sharding (log) */
	double fire_after_s;             /* the measured fire's time after the first's */
	int64_t late_max, late_p50;
	int items, items_want;           /* of the measured fire: items started, of */
	int alarms, session_ms, zk_listed;
	int expired;                     /* sessions lost (log "session expired"), both lives */
};

/* Part A's waits and fires at n jobs: the first fire's wait (s), FIRST_MAX_S up to 10,000 jobs and
 * 10 ms a job above; the registration's (ms), 2 minutes up to 20,000 and 6 ms a job above; the
 * first fire a little after the registration is expected to end (est, s); a fire every 10 s up to
 * 1,000, 20 s up to 10,000, above that the first period of a cron that fires once in it, longer
 * than est (so that the first fire after the start is the one est away). */
static int first_max_s(int n)
{
	return n > 10000 ? n / 100 : FIRST_MAX_S;
}

static unsigned reg_wait_ms(int n)
{
	return n > 20000 ? (unsigned)n * 6 : 120000;
}

static int est_s(int n)
{
	return 3 + n / 700;
}

static int period_for(int n)
{
	static const int p[] = { 30, 60, 120, 180, 240, 300, 600, 900, 1200, 1800, 3600 };
	if (n <= 1000) return 10;
	if (n <= 10000) return 20;
	for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
		if (p[i] > est_s(n) + 2) return p[i];
	return 3600;
}

/* Wait for the N-th registration; its time since `from` (s). */
static double registered(struct tsup *t, int nth, int n, int64_t from, const char *what)
{
	wait_log(t, "registered as", nth, reg_wait_ms(n), what);
	int64_t at = nth_line_time(t, "registered as", nth);
	if (at < 0) fail(t, "%s: no time on the registration lines", what);
	return (double)(at - from) / 1e9;
}

/* How many of the N jobs list the instance under instances/ (ZooKeeper's word on registration):
 * the exists requests pipelined, so that 10,000 take a moment even while the server is busy. */
static atomic_int listed, answered;

static void listed_done(int rc, const struct Stat *st, const void *data)
{
	(void)st;
	(void)data;
	if (rc == ZOK) atomic_fetch_add(&listed, 1);
	atomic_fetch_add(&answered, 1);
}

static int zk_registered(const struct tzk_server *zk, const char *ns, int n, const char *id)
{
	zhandle_t *zh = tzk_connect(zk->connect, 10000, NULL, 10000);
	if (!zh) fail(NULL, "cannot connect to ZooKeeper");
	atomic_store(&listed, 0);
	atomic_store(&answered, 0);
	int sent = 0;
	for (int j = 0; j < n; j++) {
		char p[256];
		snprintf(p, sizeof p, "/%s/j%05d/instances/%s", ns, j, id);
		sent += zoo_aexists(zh, p, 0, listed_done, NULL) == ZOK;
	}
	uint64_t end = tlib_now_ms() + 30000;
	while (atomic_load(&answered) < sent && tlib_now_ms() < end) sleep_ms(10);
	int ok = atomic_load(&listed);
	tzk_close(zh);
	return ok;
}

/* A first fire after a start, at f_ms: from its time until every one of the n jobs' items has
 * started once (in it or in a catch-up run of it), counting the stamps from *from on; at most
 * first_max_s(n). Its time (s; -1: none started) and the items that started (*items). */
static double first_fire(struct tsup *t, struct stamps *st, int n, size_t *from, int64_t f_ms, int *items, const char *what)
{
	int want = n * A_ITEMS, left = want;
	unsigned char *seen = calloc((size_t)want, 1);
	if (!seen) fail(NULL, "out of memory");
	int64_t last = 0;
	uint64_t end = tlib_now_ms() + (uint64_t)first_max_s(n) * 1000u;
	while (left && tlib_now_ms() < end) {
		if (!tsup_alive(t->pid)) fail(t, "%s: the supervisor died", what);
		sleep_ms(200);
		for (stamps_read(st); *from < st->n; (*from)++) {
			const struct stamp *s = &st->s[*from];
			if (s->job < 0 || s->job >= n || s->item < 0 || s->item >= A_ITEMS || seen[s->job * A_ITEMS + s->item]++) continue;
			left--;
			if (s->ns > last) last = s->ns;
		}
	}
	free(seen);
	*items = want - left;
	return *items ? (double)(last / 1000000 - f_ms) / 1e3 : -1;
}

/* Until the supervisor has used under 5% of a core for half a second, at most max_ms. */
static void settle(const struct tsup *t, unsigned max_ms)
{
	uint64_t end = tlib_now_ms() + max_ms;
	long long c0 = tsup_cpu_ticks(t->pid);
	double hz = (double)sysconf(_SC_CLK_TCK);
	while (tlib_now_ms() < end) {
		sleep_ms(500);
		long long c1 = tsup_cpu_ticks(t->pid);
		if ((double)(c1 - c0) / hz < 0.025) return;
		c0 = c1;
	}
}

static void run_a(const struct tzk_server *zk, const char *kind, int n, int period, int restart, int idle,
                  struct arun *r)
{
	char ns[32], cron[64], name[32];
	memset(r, 0, sizeof *r);
	r->kind = kind;
	r->n = n;
	r->period = period;
	r->restart_s = r->rfirst_s = -1;
	r->items_want = n * A_ITEMS;
	snprintf(ns, sizeof ns, "sc%s%d", kind, n);
	snprintf(name, sizeof name, "a-%s%d", kind, n);
	struct stamps st;
	stamps_init(&st, name);
	/* the first fire a little after the registration is expected to end; a period of a minute or
	 * more (a divisor of an hour) is a cron on the minutes */
	int s0 = (int)((time(NULL) + est_s(n)) % period);
	if (period <= 60) snprintf(cron, sizeof cron, "%d/%d * * * * ?", s0, period);
	else snprintf(cron, sizeof cron, "%d %d/%d * * * ?", s0 % 60, s0 / 60, period / 60);
	char *jobs = jobs_yaml(n, A_ITEMS, kind, cron, st.path, 0);
	struct text y = { 0 };
	add(&y,
	    "regCenter: {serverLists: \"%s\", namespace: %s, sessionTimeoutMilliseconds: %d}\n"
	    "supervisor: {workers: %d, attachSocket: \"@SOCK@\", shutdownGraceSeconds: 1}\n"
	    "jobs:\n%s",
	    zk->connect, ns, SESSION_MS, A_WORKERS, jobs);
	free(jobs);
	struct tsup t;
	if (tsup_config(&t, name, y.p) < 0) fail(NULL, "cannot write %s's config", name);
	free(y.p);

	long long z0 = zk_num(zk, "mntr", "zk_znode_count");
	const char *args[] = { "--ip", "127.0.0.1", NULL };
	int64_t t0 = tlib_wall_ns();
	if (tsup_start(&t, args) <= 0)
		fail(NULL, "cannot start supervisor/ejob-supervisor (run from the top of the tree after make)");
	char what[64];
	snprintf(what, sizeof what, "%d %s jobs", n, kind);
	r->reg_s = registered(&t, n, n, t0, what);
	r->at_reg = tsup_mem(t.pid);
	r->znodes_reg = zk_num(zk, "mntr", "zk_znode_count") - z0;
	r->session_ms = tsup_session_ms(&t);

	/* The first fire (it shards): from its time until every item has started once, in it or in a
	 * catch-up run of it. Then until the items stop coming (the catch-ups are over). */
	int64_t f1 = next_fire(t0 / 1000000000 - 1, s0, period) * 1000;
	size_t from = 0, had = 0;
	uint64_t end = tlib_now_ms() + (uint64_t)first_max_s(n) * 1000u;
	r->first_s = first_fire(&t, &st, n, &from, f1, &r->first_items, what);
	int left = r->items_want - r->first_items;
	uint64_t quiet = tlib_now_ms();
	r->bound_missed = tsup_log_count(&t, "missed: no assignment after");
	while (!left && tlib_now_ms() - quiet < 2000 && tlib_now_ms() < end + 30000) {
		sleep_ms(200);
		if (stamps_read(&st) != had) had = st.n, quiet = tlib_now_ms();
	}

	/* the measured fire: the next whose time is at least 1 s away (none if the first never ended) */
	int64_t last_ns = 0;
	if (!left) {
		int64_t fm_ms = next_fire(tlib_wall_ns() / 1000000000 + 1, s0, period) * 1000;
		r->fire_after_s = (double)(fm_ms - f1) / 1e3;
		end = tlib_now_ms() + (uint64_t)(fm_ms - tlib_wall_ns() / 1000000) + (uint64_t)period * 1000 - 500;
		while (count_fire(&st, fm_ms) < (size_t)r->items_want && tlib_now_ms() < end) {
			if (!tsup_alive(t.pid)) fail(&t, "%s: the supervisor died", what);
			sleep_ms(100);
			stamps_read(&st);
		}
		/* each item's first start in the fire, less the fire's time */
		int64_t *first = calloc((size_t)r->items_want, sizeof *first);
		if (!first) fail(NULL, "out of memory");
		for (size_t i = 0; i < st.n; i++) {
			const struct stamp *s = &st.s[i];
			if (s->fire != fm_ms || s->job < 0 || s->job >= n || s->item < 0 || s->item >= A_ITEMS) continue;
			int64_t *f = &first[s->job * A_ITEMS + s->item];
			if (!*f || s->ns < *f) *f = s->ns;
			if (s->ns > last_ns) last_ns = s->ns;
		}
		int k = 0;
		for (int i = 0; i < r->items_want; i++)
			if (first[i]) first[k++] = first[i] - fm_ms * 1000000;
		r->items = k;
		if (k) {
			qsort(first, (size_t)k, sizeof *first, cmp64);
			r->late_max = first[k - 1];
			r->late_p50 = pct(first, k, 0.5);
		}
		free(first);
		/* settled: 3 s after its last item started, and the supervisor idle (under 5% of a
		 * core for half a second: at 50,000 jobs it still writes completions then): its fires
		 * have ended and it has trimmed the heap after the burst (VmHWM keeps the burst's peak) */
		while (tlib_wall_ns() < last_ns + 3000000000) sleep_ms(50);
		settle(&t, 60000);
	}
	r->after = tsup_mem(t.pid);
	r->znodes = zk_num(zk, "mntr", "zk_znode_count") - z0;
	r->watches = zk_num(zk, "wchs", "Total watches");

	/* idle: what is left of the interval before the next fire, at most IDLE_MS */
	int64_t left_ms = last_ns ? (next_fire(last_ns / 1000000000, s0, period) * 1000) - tlib_wall_ns() / 1000000 - 500 : 0;
	if (idle && left_ms >= 2000) {
		unsigned win = left_ms < IDLE_MS ? (unsigned)left_ms : IDLE_MS;
		int64_t sid0[8], cx0[8], sid1[8], cx1[8];
		int n0 = sessions_cxid(zk, sid0, cx0, 8), ns_;
		long long p0 = zk_packets(zk), c0 = tsup_cpu_ticks(t.pid), w0 = tsup_tree_ticks(t.pid);
		uint64_t m0 = tlib_now_ms();
		sleep_ms(win);
		long long p1 = zk_packets(zk), c1 = tsup_cpu_ticks(t.pid), w1 = tsup_tree_ticks(t.pid);
		int n1 = sessions_cxid(zk, sid1, cx1, 8);
		double secs = (double)(tlib_now_ms() - m0) / 1e3, hz = (double)sysconf(_SC_CLK_TCK);
		r->idle_s = secs;
		r->idle_pps = (double)(p1 - p0) / secs;
		r->idle_rps = (double)requests_between(sid0, cx0, n0, sid1, cx1, n1, -1, &ns_) / secs;
		r->idle_cpu = 100.0 * (double)(c1 - c0) / hz / secs;
		r->idle_workers_cpu = 100.0 * (double)(w1 - w0) / hz / secs;
	}
	if (!tsup_alive(t.pid)) fail(&t, "%s: the supervisor died", what);
	r->zk_listed = zk_registered(zk, ns, n, t.id);
	r->alarms = tsup_log_count(&t, "no answer for");
	r->expired = tsup_log_count(&t, "zookeeper: session expired");

	if (restart) {
		int st1 = tsup_stop(&t, SIGTERM, 30000);
		if (!(WIFEXITED(st1) && WEXITSTATUS(st1) == 0))
			fprintf(stderr, "bench/scale: supervisor %d did not stop cleanly (status 0x%x)\n", (int)t.pid, st1);
		/* started again as the first time: its first fire est_s(n) after the start (not in the
		 * middle of its registration), on the nodes it made */
		int64_t fr = next_fire(tlib_wall_ns() / 1000000000 + est_s(n), s0, period);
		while (tlib_wall_ns() / 1000000000 < fr - est_s(n)) sleep_ms(20);
		stamps_read(&st);
		size_t rfrom = st.n;
		/* the lines before it: a session lost in the first life registers every job again */
		int regs = tsup_log_count(&t, "registered as");
		int64_t t1 = tlib_wall_ns();
		if (tsup_start(&t, args) <= 0) fail(NULL, "cannot start supervisor/ejob-supervisor again");
		r->restart_s = registered(&t, regs + n, n, t1, what);
		r->rfirst_s = first_fire(&t, &st, n, &rfrom, fr * 1000, &r->rfirst_items, what);
		r->alarms = tsup_log_count(&t, "no answer for");
		r->expired = tsup_log_count(&t, "zookeeper: session expired");
	}
	int st2 = tsup_stop(&t, SIGTERM, 30000);
	if (!(WIFEXITED(st2) && WEXITSTATUS(st2) == 0))
		fprintf(stderr, "bench/scale: supervisor %d did not stop cleanly (status 0x%x)\n", (int)t.pid, st2);
	free(st.s);
}

/* ---- B. 20 supervisors x 50 jobs x 20 items ------------------------------------------------------ */

/* per fire (by its time): how often each (job, item) started */
struct fires {
	int n;
	int64_t ms[MAXF];
	unsigned char cnt[MAXF][B_JOBS * B_ITEMS];
	int side;                        /* runs outside the fires (failover, misfire) */
};

static void fires_count(const struct stamps *st, struct fires *f)
{
	memset(f, 0, sizeof *f);
	for (size_t i = 0; i < st->n; i++) {
		const struct stamp *s = &st->s[i];
		if (s->job < 0 || s->job >= B_JOBS || s->item < 0 || s->item >= B_ITEMS) continue;
		if (s->fire % 1000) {
			f->side++;
			continue;
		}
		int k = 0;
		while (k < f->n && f->ms[k] != s->fire) k++;
		if (k == f->n) {
			if (f->n == MAXF) continue;
			/* in order of time */
			while (k > 0 && f->ms[k - 1] > s->fire) k--;
			memmove(&f->ms[k + 1], &f->ms[k], (size_t)(f->n - k) * sizeof f->ms[0]);
			memmove(f->cnt[k + 1], f->cnt[k], (size_t)(f->n - k) * sizeof f->cnt[0]);
			memset(f->cnt[k], 0, sizeof f->cnt[k]);
			f->ms[k] = s->fire;
			f->n++;
		}
		if (f->cnt[k][s->job * B_ITEMS + s->item] < 255) f->cnt[k][s->job * B_ITEMS + s->item]++;
	}
}

static void fire_errors(const struct fires *f, int k, int *missing, int *twice)
{
	*missing = *twice = 0;
	for (int i = 0; i < B_JOBS * B_ITEMS; i++) {
		*missing += f->cnt[k][i] == 0;
		*twice += f->cnt[k][i] > 1;
	}
}

struct brun {
	double reg_s;
	int64_t exact_ms;                /* the first exact fire's time, since the first fork */
	int exact_n;                     /* its number after the start */
	double pkt_recv, pkt_sent, req;  /* per job per fire */
	int req_sessions;                /* the sessions req was counted over */
	int session_ms, leaders_killed;
	double kill_spread_ms, kill_to_exp_s, recovery_s, exp_to_fire_s;
	int after_fires, after_missing, after_twice, side;
	int alarms;
	struct fires f;
	int64_t t0_ms, kill_ms, exp_ms;
};

static _Atomic int64_t expired_ns[B_KILL];

static void instance_watch(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
	(void)zh;
	(void)state;
	(void)path;
	if (type == ZOO_DELETED_EVENT) atomic_store(&expired_ns[(intptr_t)ctx], tlib_wall_ns());
}

/* Every supervisor not killed is still there. */
static void check_alive(struct tclu *c)
{
	for (int k = 0; k < c->n; k++)
		if (!c->dead[k] && !tsup_alive(c->sup[k].pid)) fail(&c->sup[k], "part B: supervisor %d (%s) died", k, c->ip[k]);
}

/* a supervisor not killed, for its log */
static const struct tsup *alive_one(const struct tclu *c)
{
	for (int k = 0; k < c->n; k++)
		if (!c->dead[k]) return &c->sup[k];
	return NULL;
}

/* Sleep until the wall clock reaches at_ms, keeping an eye on the supervisors. */
static void until_ms(struct tclu *c, int64_t at_ms)
{
	while (tlib_wall_ns() / 1000000 < at_ms) {
		check_alive(c);
		int64_t left = at_ms - tlib_wall_ns() / 1000000;
		sleep_ms(left > 200 ? 200 : left > 0 ? (unsigned)left : 0);
	}
}

static void run_b(const struct tzk_server *zk, struct brun *r)
{
	static struct tclu c;
	memset(r, 0, sizeof *r);
	struct stamps st;
	stamps_init(&st, "b-stamps");
	char cron[64];
	int s0 = (int)((time(NULL) + 6) % B_PERIOD);
	snprintf(cron, sizeof cron, "%d/%d * * * * ?", s0, B_PERIOD);
	char *jobs = jobs_yaml(B_JOBS, B_ITEMS, "native", cron, st.path, 1);
	static char names[B_JOBS][16];
	const char *jn[B_JOBS];
	for (int j = 0; j < B_JOBS; j++) {
		snprintf(names[j], sizeof names[j], "j%05d", j);
		jn[j] = names[j];
	}
	int64_t t0 = tlib_wall_ns();
	r->t0_ms = t0 / 1000000;
	if (tclu_start(&c, zk->connect, "scb", B_SUPS, B_WORKERS, SESSION_MS, jobs, jn, B_JOBS) < 0)
		fail(NULL, "part B: the %d supervisors did not all register all %d jobs", B_SUPS, B_JOBS);
	r->reg_s = (double)(tlib_wall_ns() - t0) / 1e9;
	free(jobs);
	r->session_ms = tsup_session_ms(&c.sup[0]);

	/* the first exact fire: every fire whose time is 3 s past is counted */
	int64_t exact = 0;
	uint64_t end = tlib_now_ms() + 6u * B_PERIOD * 1000;
	while (!exact) {
		if (tlib_now_ms() > end) break;
		check_alive(&c);
		sleep_ms(250);
		stamps_read(&st);
		fires_count(&st, &r->f);
		int64_t now = tlib_wall_ns() / 1000000;
		for (int k = 0; k < r->f.n && !exact; k++) {
			int missing, twice;
			fire_errors(&r->f, k, &missing, &twice);
			if (r->f.ms[k] + 3000 <= now && !missing && !twice) exact = r->f.ms[k];
		}
	}
	if (!st.n) fail(&c.sup[0], "part B: no item started in %d s", 6 * B_PERIOD);
	if (exact) {
		r->exact_n = (int)((exact - next_fire(t0 / 1000000000 - 1, s0, B_PERIOD) * 1000) / (B_PERIOD * 1000)) + 1;
	} else {
		/* reported as missed; what follows is measured from the last fire seen */
		exact = r->f.ms[r->f.n - 1];
		r->exact_n = -1;
	}
	r->exact_ms = exact - r->t0_ms;

	/* packets: from the middle of the interval after the exact fire, over B_PKT_FIRES fires */
	int64_t w0 = exact + B_PERIOD * 500, w1 = w0 + B_PKT_FIRES * B_PERIOD * 1000;
	until_ms(&c, w0);
	static int64_t sid0[64], cx0[64], sid1[64], cx1[64];
	int n0 = sessions_cxid(zk, sid0, cx0, 64);
	long long r0 = zk_num(zk, "mntr", "zk_packets_received"), s0p = zk_num(zk, "mntr", "zk_packets_sent");
	until_ms(&c, w1);
	int n1 = sessions_cxid(zk, sid1, cx1, 64);
	long long r1 = zk_num(zk, "mntr", "zk_packets_received"), s1p = zk_num(zk, "mntr", "zk_packets_sent");
	double per = (double)B_PKT_FIRES * B_JOBS;
	r->pkt_recv = (double)(r1 - r0) / per;
	r->pkt_sent = (double)(s1p - s0p) / per;
	r->req = (double)requests_between(sid0, cx0, n0, sid1, cx1, n1, zoo_client_id(c.zh)->client_id, &r->req_sessions) / per;

	/* kill: 1.5 s after the next fire; the leader of j00000 first */
	int64_t fk = exact + (B_PKT_FIRES + 1) * B_PERIOD * 1000;
	until_ms(&c, fk + 1500);
	int victims[B_KILL], nv = 0, lead = tclu_leader(&c, jn[0]);
	if (lead >= 0) victims[nv++] = lead;
	for (int k = 0; nv < B_KILL && k < c.n; k++)
		if (k != lead) victims[nv++] = k;
	for (int j = 0; j < B_JOBS; j++) {
		int l = tclu_leader(&c, jn[j]);
		for (int v = 0; v < nv; v++) r->leaders_killed += l == victims[v];
	}
	for (int v = 0; v < nv; v++) {
		char p[256];
		struct Stat zs;
		snprintf(p, sizeof p, "/%s/%s/instances/%s", c.ns, jn[0], c.id[victims[v]]);
		atomic_store(&expired_ns[v], 0);
		if (zoo_wexists(c.zh, p, instance_watch, (void *)(intptr_t)v, &zs) != ZOK) fail(&c.sup[victims[v]], "part B: no %s", p);
	}
	int64_t k0 = tlib_wall_ns();
	for (int v = 0; v < nv; v++) tclu_kill(&c, victims[v]);
	int64_t k1 = tlib_wall_ns();
	r->kill_ms = k0 / 1000000;
	r->kill_spread_ms = (double)(k1 - k0) / 1e6;

	/* their sessions' expiry: each watch fired */
	int64_t last_exp = 0;
	end = tlib_now_ms() + 3u * SESSION_MS + 5000;
	for (int v = 0; v < nv; v++) {
		int64_t e;
		while (!(e = atomic_load(&expired_ns[v]))) {
			if (tlib_now_ms() > end) fail(NULL, "part B: supervisor %d's session did not expire", victims[v]);
			check_alive(&c);
			sleep_ms(20);
		}
		if (e > last_exp) last_exp = e;
	}
	if (!tclu_wait_instances(&c, jn, B_JOBS, B_SUPS - B_KILL, 10000))
		fail(NULL, "part B: the jobs do not list %d instances after the expiries", B_SUPS - B_KILL);
	r->exp_ms = last_exp / 1000000;
	r->kill_to_exp_s = (double)(last_exp - k0) / 1e9;

	/* every item started again after the last expiry */
	unsigned char *again = calloc(B_JOBS * B_ITEMS, 1);
	if (!again) fail(NULL, "out of memory");
	int left = B_JOBS * B_ITEMS;
	int64_t last_start = 0;
	size_t from = 0;
	end = tlib_now_ms() + 6u * B_PERIOD * 1000;
	while (left) {
		if (tlib_now_ms() > end)
			fail(alive_one(&c), "part B: %d of %d items did not start again within %d s of the expiries", left,
			     B_JOBS * B_ITEMS, 6 * B_PERIOD);
		check_alive(&c);
		sleep_ms(100);
		stamps_read(&st);
		for (; from < st.n; from++) {
			const struct stamp *s = &st.s[from];
			if (s->ns <= last_exp || s->job < 0 || s->job >= B_JOBS || s->item < 0 || s->item >= B_ITEMS) continue;
			if (!again[s->job * B_ITEMS + s->item]++) {
				left--;
				if (s->ns > last_start) last_start = s->ns;
			}
		}
	}
	free(again);
	r->recovery_s = (double)(last_start - last_exp) / 1e9;
	int64_t nf = ((last_exp / 1000000 - exact) / (B_PERIOD * 1000) + 1) * B_PERIOD * 1000 + exact;
	r->exp_to_fire_s = (double)(nf - last_exp / 1000000) / 1e3;
	/* the fire in which the last item started again */
	int64_t rec_fire = ((last_start / 1000000 - exact) / (B_PERIOD * 1000)) * B_PERIOD * 1000 + exact;

	/* B_AFTER fires after that one, each counted 3 s after its time */
	until_ms(&c, rec_fire + B_AFTER * B_PERIOD * 1000 + 3000);
	stamps_read(&st);
	fires_count(&st, &r->f);
	r->side = r->f.side;
	for (int k = 0; k < r->f.n; k++) {
		if (r->f.ms[k] <= rec_fire || r->f.ms[k] > rec_fire + B_AFTER * B_PERIOD * 1000) continue;
		int missing, twice;
		fire_errors(&r->f, k, &missing, &twice);
		r->after_fires++;
		r->after_missing += missing;
		r->after_twice += twice;
	}
	if (r->after_fires < B_AFTER) r->after_missing += (B_AFTER - r->after_fires) * B_JOBS * B_ITEMS;
	for (int k = 0; k < c.n; k++) r->alarms += tsup_log_count(&c.sup[k], "no answer for");
	int bad = tclu_stop(&c);
	if (bad) fprintf(stderr, "bench/scale: %d supervisors did not stop cleanly\n", bad);
	free(st.s);
}

/* ---- main ----------------------------------------------------------------------------------------- */

#define MAX_SIZES 8
#define GROWTH_NOISE 1.15    /* per-job cost at a size against the one before: above this, superlinear */
#define FLOOR_BOUND 1.5      /* issue 30: registration within 1.5 x the floor */
#define T_FIRST_S 2.0        /* issue 30: the first fire's last item within 2 s of its time */
#define T_WATCHES 6.0        /* issue 30: watches per job */

static const char *met(int ok)
{
	return ok ? "met" : "**missed**";
}

/* EJOB_SCALE_SIZES: increasing numbers of jobs, comma-separated */
static int parse_sizes(const char *s, int *v)
{
	int n = 0;
	const char *c = s;
	for (;;) {
		char *e;
		errno = 0;
		long x = strtol(c, &e, 10);
		if (e == c || errno || x < 1 || x > 100000 || n == MAX_SIZES || (n && x <= v[n - 1]) || (*e && *e != ','))
			fail(NULL,
			     "EJOB_SCALE_SIZES=%s: not a list of numbers of jobs (1-100000, increasing, at most %d, comma-separated; "
			     "e.g. EJOB_SCALE_SIZES=1000,2000)",
			     s, MAX_SIZES);
		v[n++] = (int)x;
		if (!*e) return n;
		c = e + 1;
	}
}

/* ZooKeeper's JVM heap for n jobs at most: 1 GB up to 10,000 (ejob's namespace of 10,000 and the
 * floor's: some 400,000 znodes), 1 GB per 12,500 jobs above */
static unsigned heap_for(int n)
{
	return n <= 10000 ? ZK_HEAP_MB : (unsigned)((n + 12499) / 12500) * 1024u;
}

static void size_str(char *v, size_t len, int n)
{
	if (n >= 1000 && n % 1000 == 0) snprintf(v, len, "%d,000", n / 1000);
	else snprintf(v, len, "%d", n);
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--stamp")) return stamp_main(argc, argv);
	bench_name = "bench/scale";
	tlib_init(600);
	if (!realpath("/proc/self/exe", self) || !realpath(BUILT("bench/libnoop.so"), noop_lib))
		fail(NULL, "run from the top of the tree after make (bench/libnoop.so: %s)", strerror(errno));
	uint64_t t_start = tlib_now_ms();

	/* EJOB_SCALE_ONLY=N: part A's native run at N jobs alone (a fire every 20 s or more, no restart,
	 * no idle window), its registration and first fire: a before and after of one change in
	 * minutes. EJOB_SCALE_SIZES=N,M,...: part A's growth runs and their floors at those sizes
	 * alone (the tables of A, the floor and the growth). */
	const char *only = getenv("EJOB_SCALE_ONLY"), *sz = getenv("EJOB_SCALE_SIZES");
	long only_n = 0;
	if (only && *only) {
		char *e;
		only_n = strtol(only, &e, 10);
		if (*e || only_n < 1 || only_n > 100000) fail(NULL, "EJOB_SCALE_ONLY=%s: not a number of jobs (1-100000)", only);
	}
	int sizes[MAX_SIZES] = { 1000, 10000, 50000 }, nsz = 3, growth_only = sz && *sz && !only_n;
	if (growth_only) nsz = parse_sizes(sz, sizes);
	int largest = only_n ? (int)only_n : sizes[nsz - 1];
	long total = 0;
	for (int i = 0; i < nsz; i++) total += sizes[i];
	alarm(600 + (unsigned)((only_n ? only_n : total) / 25));   /* 50,000 jobs take minutes */

	struct tzk_server zk;
	unsigned heap = heap_for(largest);
	if (tzk_start(&zk, "zk", &(struct tzk_opts){ .tick_ms = TICK_MS, .heap_mb = heap, .server_jvm = 1 }, 30000) < 0)
		fail(NULL, "cannot start ZooKeeper");

	if (only_n) {
		long n = only_n;
		static struct warm ow;
		floor_warm_up(&zk, &ow);
		static struct arun r;
		int period = period_for((int)n) < 20 ? 20 : period_for((int)n);
		run_a(&zk, "native", (int)n, period, 0, 0, &r);
		printf("| N | registration | first fire: its time to every item started once | fires missed for the wait "
		       "| a later fire: p50 / last | watches (wchs) per job |\n|--:|--:|--:|--:|--:|--:|\n");
		printf("| %ld | %.2f s | %s%.1f s | %d | %.3f / %.3f s | %.1f |\n", n, r.reg_s,
		       r.first_items == r.items_want ? "" : "items missing, ", r.first_s, r.bound_missed,
		       (double)r.late_p50 / 1e9, (double)r.late_max / 1e9, (double)r.watches / (double)n);
		tzk_stop(&zk, SIGKILL, 5000);
		return 0;
	}

	/* EJOB_SCALE_B=1: part B alone (20 supervisors, the mass kill) */
	const char *only_b = getenv("EJOB_SCALE_B");
	int never = 0;
	if (only_b && *only_b) goto part_b;

	/* A: the growth runs, each followed by its floor on the same ZooKeeper */
	static struct arun a[MAX_SIZES], sc;
	static struct floor_run f[MAX_SIZES];
	static struct tsup_mem zkm[MAX_SIZES];
	static double part_s[MAX_SIZES];
	int t10 = -1;
	static struct warm w;
	floor_warm_up(&zk, &w);
	for (int i = 0; i < nsz; i++) {
		uint64_t p0 = tlib_now_ms();
		char ens[32];
		run_a(&zk, "native", sizes[i], period_for(sizes[i]), 1, 1, &a[i]);
		snprintf(ens, sizeof ens, "scnative%d", sizes[i]);
		run_floor(&zk, ens, sizes[i], &f[i]);
		zkm[i] = tsup_mem(zk.pid);
		part_s[i] = (double)(tlib_now_ms() - p0) / 1e3;
		if (sizes[i] == 10000) t10 = i;
		/* said now, in case a later size cannot be measured */
		fprintf(stderr,
		        "bench/scale: %d jobs: registration %.2f s (floor %.2f s), after a restart %.2f s (floor %.2f s), "
		        "first fire %.1f s (%d of %d items), after the restart %.1f s (%d), RSS %.1f / %.1f MB, %.1f watches a "
		        "job; %.0f s with the floor\n",
		        sizes[i], a[i].reg_s, f[i].fresh_s, a[i].restart_s, f[i].restart_s, a[i].first_s, a[i].first_items,
		        a[i].items_want, a[i].rfirst_s, a[i].rfirst_items, a[i].at_reg.rss_kb / 1024.0, a[i].after.rss_kb / 1024.0, (double)a[i].watches / a[i].n,
		        part_s[i]);
	}
	if (!growth_only) run_a(&zk, "script", 1000, 10, 0, 0, &sc);

	char v[64], hdr[MAX_SIZES][32];
	for (int i = 0; i < nsz; i++) size_str(hdr[i], sizeof hdr[i], sizes[i]);
	/* the targets are at 10,000 jobs: the column, if run */
	const struct arun *at = t10 >= 0 ? &a[t10] : NULL;
#define ROW_START(label) printf("| %s |", label)
#define COL(...) (snprintf(v, sizeof v, __VA_ARGS__), printf(" %s |", v))
	printf("A. One supervisor (%d workers), N native jobs of %d items, one cron for all (a fire every", A_WORKERS, A_ITEMS);
	for (int i = 0; i < nsz; i++) printf("%s %d s at %s", i ? (i == nsz - 1 ? " and" : ",") : "", a[i].period, hdr[i]);
	printf("),\nfirst start into an empty namespace, then a restart; negotiated session timeout %d ms; ZooKeeper's JVM with its default collector (G1, as zkServer.sh starts it) and a heap of %u MB from the start:\n\n",
	       a[0].session_ms, heap);
	printf("ZooKeeper's JVM warmed up first by %d rounds of the floor's requests for %d jobs (a new namespace, a "
	       "restart, deleted), until it got no faster; the new namespace's pass took", w.rounds, WARM_JOBS);
	for (int i = 0; i < w.rounds; i++) printf("%s %.2f", i ? "," : "", w.fresh_s[i]);
	printf(" s.\n\n");
	printf("| measure |");
	for (int i = 0; i < nsz; i++) printf(" %s jobs |", hdr[i]);
	printf(" target | |\n|---|");
	for (int i = 0; i < nsz; i++) printf("--:|");
	printf("---|---|\n");

	ROW_START("registration: start to the N-th job registered");
	for (int i = 0; i < nsz; i++) COL("%.2f s", a[i].reg_s);
	printf(" 10,000 within %.0f s (issue 12) | %s |\n", T_REG_S, at ? met(at->reg_s <= T_REG_S) : "not run");
	ROW_START("registration again after a restart (the nodes exist)");
	for (int i = 0; i < nsz; i++) COL("%.2f s", a[i].restart_s);
	printf(" 10,000 within %.0f s (issue 12) | %s |\n", T_REG_S, at ? met(at->restart_s <= T_REG_S) : "not run");
	ROW_START("jobs listing the instance under instances/ (ZooKeeper)");
	int all_listed = 1;
	for (int i = 0; i < nsz; i++) COL("%d", a[i].zk_listed), all_listed &= a[i].zk_listed == a[i].n;
	printf(" all | %s |\n", met(all_listed));
	ROW_START("RSS / peak (VmHWM) at registration");
	for (int i = 0; i < nsz; i++) COL("%.1f / %.1f MB", a[i].at_reg.rss_kb / 1024.0, a[i].at_reg.hwm_kb / 1024.0);
	printf(" < 64 MB at 10,000 | %s |\n", at ? met(at->at_reg.rss_kb < T_RSS_KB) : "not run");
	ROW_START("RSS / peak (VmHWM) after the fires");
	for (int i = 0; i < nsz; i++) COL("%.1f / %.1f MB", a[i].after.rss_kb / 1024.0, a[i].after.hwm_kb / 1024.0);
	printf(" < 64 MB at 10,000 | %s |\n", at ? met(at->after.rss_kb < T_RSS_KB && at->after.hwm_kb < T_RSS_KB) : "not run");
	ROW_START("supervisor threads");
	for (int i = 0; i < nsz; i++) COL("%ld", a[i].after.threads);
	printf(" | |\n");
	ROW_START("ZooKeeper znodes of the namespace: at registration / after the fires");
	for (int i = 0; i < nsz; i++) COL("%lld / %lld", a[i].znodes_reg, a[i].znodes);
	printf(" | |\n");
	ROW_START("ZooKeeper watches (wchs)");
	for (int i = 0; i < nsz; i++) COL("%lld (%.1f per job)", a[i].watches, (double)a[i].watches / a[i].n);
	printf(" at most %.0f per job (issue 30) | %s |\n", T_WATCHES,
	       at ? met((double)at->watches / at->n <= T_WATCHES) : "not run");
	ROW_START("first fire (it shards every job): its time to every item started once");
	int first_all = 1;
	for (int i = 0; i < nsz; i++) {
		if (a[i].first_items == a[i].items_want) COL("%.1f s", a[i].first_s);
		else COL("%d of %d items in %d s", a[i].first_items, a[i].items_want, first_max_s(a[i].n)), first_all = 0;
	}
	printf(" within %.0f s at 10,000 (issue 30) | %s%s |\n", T_FIRST_S,
	       at ? met(at->first_items == at->items_want && at->first_s <= T_FIRST_S) : "not run",
	       first_all ? "" : "; **items missing**");
	ROW_START("first fire after a restart on the nodes (the same, est after the start)");
	int rfirst_all = 1;
	for (int i = 0; i < nsz; i++) {
		if (a[i].rfirst_items == a[i].items_want) COL("%.1f s", a[i].rfirst_s);
		else COL("%d of %d items in %d s", a[i].rfirst_items, a[i].items_want, first_max_s(a[i].n)), rfirst_all = 0;
	}
	printf(" within %.0f s at 10,000 (issue 30) | %s%s |\n", T_FIRST_S,
	       at ? met(at->rfirst_items == at->items_want && at->rfirst_s <= T_FIRST_S) : "not run",
	       rfirst_all ? "" : "; **items missing**");
	ROW_START("fires missed for the wait for sharding (2 x the session timeout; log \"missed: no assignment after\")");
	int missed = 0;
	for (int i = 0; i < nsz; i++) COL("%d", a[i].bound_missed), missed += a[i].bound_missed;
	printf(" 0 | %s |\n", met(!missed));
	ROW_START("native, a later fire: fire time to item start, p50 / last");
	int late_ok = 1;
	for (int i = 0; i < nsz; i++) {
		if (a[i].items) COL("%.3f / %.3f s", (double)a[i].late_p50 / 1e9, (double)a[i].late_max / 1e9);
		else COL("none measured");
		late_ok &= a[i].items && a[i].late_max <= (int64_t)(T_LATE_S * 1e9);
	}
	printf(" last within %.0f s | %s |\n", T_LATE_S, met(late_ok));
	ROW_START("items of that fire that started");
	int items_ok = 1;
	for (int i = 0; i < nsz; i++) COL("%d of %d", a[i].items, a[i].items_want), items_ok &= a[i].items == a[i].items_want;
	printf(" all | %s |\n", met(items_ok));
	ROW_START("idle: ZooKeeper packets/s (received + sent)");
	for (int i = 0; i < nsz; i++) a[i].idle_s > 0 ? COL("%.0f", a[i].idle_pps) : COL("not idle");
	printf(" | |\n");
	ROW_START("idle: requests/s the supervisor sent (`cons` lcxid; pings excluded)");
	for (int i = 0; i < nsz; i++) a[i].idle_s > 0 ? COL("%.0f", a[i].idle_rps) : COL("not idle");
	printf(" | |\n");
	ROW_START("idle: CPU, supervisor / its workers (% of a core)");
	for (int i = 0; i < nsz; i++)
		a[i].idle_s > 0 ? COL("%.1f / %.1f %%", a[i].idle_cpu, a[i].idle_workers_cpu) : COL("not idle");
	printf(" | |\n");
	ROW_START("lease alarms (\"no answer for\" in the log)");
	int alarms = 0;
	for (int i = 0; i < nsz; i++) COL("%d", a[i].alarms), alarms += a[i].alarms;
	printf(" 0 | %s |\n", met(!alarms));
	ROW_START("sessions expired (\"session expired\" in the log)");
	int expired = 0;
	for (int i = 0; i < nsz; i++) COL("%d", a[i].expired), expired += a[i].expired;
	printf(" 0 | %s |\n", met(!expired));
	printf("\nThe later fire measured came");
	for (int i = 0; i < nsz; i++) printf("%s %.0f s", i ? (i == nsz - 1 ? " and" : ",") : "", a[i].fire_after_s);
	printf(" after the first; the idle window was");
	for (int i = 0; i < nsz; i++) printf("%s %.1f s", i ? (i == nsz - 1 ? " and" : ",") : "", a[i].idle_s);
	printf(" long.\nEach job sets systemTime/current once a minute (the clock check), and jobs registered together do it\n"
	       "together: N requests in a second or two once a minute, in an idle window or not.\n");
	if (!growth_only) {
		if (sc.items) snprintf(v, sizeof v, "%.3f / %.3f s", (double)sc.late_p50 / 1e9, (double)sc.late_max / 1e9);
		else snprintf(v, sizeof v, "none measured");
		printf("Script jobs (fork + exec of this binary), 1,000, a fire every 10 s: registration %.2f s, first fire %s,\n"
		       "a later fire: fire time to item start, p50 / last %s, %d of %d items started, lease alarms %d.\n",
		       sc.reg_s, sc.first_items == sc.items_want ? "complete" : "**incomplete**", v, sc.items, sc.items_want,
		       sc.alarms);
	}

	/* the floor */
	printf("\nRegistration against its floor: a bare client (the ZooKeeper C library, no ejob code) sending\n"
	       "the requests of ejob's registration (supervisor/coord/coord_reg.c) on the same ZooKeeper right after\n"
	       "ejob's run, in a namespace of its own, pipelined (at most %d at the server) and the jobs' multis\n"
	       "packed (at most %d ops, %zu KB): from zookeeper_init to the last answer. A new namespace: the\n"
	       "namespace node, then per job exists(trigger) and reg_fresh's multi (%d ops); a restart (a new\n"
	       "session on those nodes): per job exists(trigger), get(root), get(config), create(the resharding\n"
	       "flag) and reg_join's multi (3 ops):\n\n",
	       FL_WINDOW, FL_OPS, FL_BYTES >> 10, FL_JOB_OPS);
	printf("| N | new namespace: ejob | floor | ejob / floor | within %.1fx "
	       "| restart: ejob | floor | ejob / floor | within %.1fx |\n"
	       "|--:|--:|--:|--:|---|--:|--:|--:|---|\n", FLOOR_BOUND, FLOOR_BOUND);
	for (int i = 0; i < nsz; i++) {
		double rf = ratio(a[i].reg_s, f[i].fresh_s), rr = ratio(a[i].restart_s, f[i].restart_s);
		printf("| %s | %.2f s | %.2f s | %.2fx | %s | %.2f s | %.2f s | %.2fx | %s |\n", hdr[i], a[i].reg_s, f[i].fresh_s, rf,
		       met(rf <= FLOOR_BOUND), a[i].restart_s, f[i].restart_s, rr, met(rr <= FLOOR_BOUND));
	}
	printf("\nThe floor's requests (a multi is one; its ops in brackets), new namespace / restart:");
	for (int i = 0; i < nsz; i++)
		printf("%s %s jobs %ld (%ld) / %ld (%ld)", i ? ";" : "", hdr[i], f[i].fresh_req, f[i].fresh_ops, f[i].restart_req,
		       f[i].restart_ops);
	printf(".\nThe nodes they made in a new namespace (floor / ejob at registration):");
	for (int i = 0; i < nsz; i++) printf("%s %lld / %lld", i ? "," : "", f[i].znodes, a[i].znodes_reg);
	printf(".\nThe config node (ejob's own, read back): %d bytes a job. ZooKeeper's JVM (heap %u MB), RSS after each\n"
	       "size's floor:", f[0].cfg_len, heap);
	for (int i = 0; i < nsz; i++) printf("%s %s jobs %.0f MB", i ? "," : "", hdr[i], zkm[i].rss_kb / 1024.0);
	printf(".\n");

	/* growth */
	if (nsz > 1) {
		printf("\nGrowth: each measure per 1,000 jobs at each size (watches: per job); linear or better when the\n"
		       "largest size's is at most %.2fx the one before's; a registration whose floor (ZooKeeper's own\n"
		       "cost of the same requests) grows too, linear against it when its ratio to the floor does not\n"
		       "grow more than that:\n\n| measure |", GROWTH_NOISE);
		for (int i = 0; i < nsz; i++) printf(" at %s |", hdr[i]);
		printf(" %s against %s | |\n|---|", hdr[nsz - 1], hdr[nsz - 2]);
		for (int i = 0; i <= nsz; i++) printf("--:|");
		printf("---|\n");
		for (int m = 0; m < 8; m++) {
			static const char *const name[] = { "registration, new namespace (s)", "registration after a restart (s)",
				                                "RSS at registration (MB)", "RSS after the fires (MB)",
				                                "first fire: its time to every item started once (s)",
				                                "ZooKeeper watches per job", "floor, new namespace (s)",
				                                "floor, after a restart (s)" };
			double g[MAX_SIZES];
			int ok = 1;
			for (int i = 0; i < nsz; i++) {
				const struct arun *r = &a[i];
				double x = m == 0 ? r->reg_s : m == 1 ? r->restart_s : m == 2 ? r->at_reg.rss_kb / 1024.0
				         : m == 3 ? r->after.rss_kb / 1024.0 : m == 4 ? r->first_s : m == 5 ? (double)r->watches
				         : m == 6 ? f[i].fresh_s : f[i].restart_s;
				if (m == 4 && r->first_items != r->items_want) ok = 0;
				g[i] = x / r->n * (m == 5 ? 1 : 1000);
			}
			ROW_START(name[m]);
			for (int i = 0; i < nsz; i++) COL(m == 5 ? "%.1f" : m >= 2 && m <= 3 ? "%.2f" : "%.3f", g[i]);
			double q = ratio(g[nsz - 1], g[nsz - 2]);
			if (ok && q > GROWTH_NOISE && m <= 1) {
				/* ejob / floor at the two sizes */
				int l = nsz - 1, p = nsz - 2;
				double rl = ratio(m ? a[l].restart_s : a[l].reg_s, m ? f[l].restart_s : f[l].fresh_s);
				double rp = ratio(m ? a[p].restart_s : a[p].reg_s, m ? f[p].restart_s : f[p].fresh_s);
				if (rp > 0 && rl <= rp * GROWTH_NOISE) {
					printf(" %.2fx | linear against its floor (ejob / floor %.2fx, then %.2fx) |\n", q, rp, rl);
					continue;
				}
			}
			printf(" %.2fx | %s |\n", q, !ok ? "**items missing**" : q <= GROWTH_NOISE ? "linear or better" : "**superlinear**");
		}
	}

	/* the README's lines */
	int h = t10 >= 0 ? t10 : nsz - 1;
	char hs[32];
	size_str(hs, sizeof hs, sizes[h]);
	printf("\nREADME (bench/scale, %s jobs, one supervisor):\n\n| at %s jobs | ejob | target | |\n|---|--:|---|---|\n", hs, hs);
	if (a[h].first_items == a[h].items_want) snprintf(v, sizeof v, "%.1f s", a[h].first_s);
	else snprintf(v, sizeof v, "%d of %d items", a[h].first_items, a[h].items_want);
	printf("| first fire after a cold start: its time to every item started | %s | within %.0f s | %s |\n", v, T_FIRST_S,
	       met(a[h].first_items == a[h].items_want && a[h].first_s <= T_FIRST_S));
	double rf = ratio(a[h].reg_s, f[h].fresh_s), rr = ratio(a[h].restart_s, f[h].restart_s);
	if (a[h].rfirst_items == a[h].items_want) snprintf(v, sizeof v, "%.1f s", a[h].rfirst_s);
	else snprintf(v, sizeof v, "%d of %d items", a[h].rfirst_items, a[h].items_want);
	printf("| first fire after a restart on the nodes | %s | within %.0f s | %s |\n", v, T_FIRST_S,
	       met(a[h].rfirst_items == a[h].items_want && a[h].rfirst_s <= T_FIRST_S));
	printf("| registration, new namespace: ejob / floor | %.2f / %.2f s (%.2fx) | within %.1fx | %s |\n", a[h].reg_s,
	       f[h].fresh_s, rf, FLOOR_BOUND, met(rf <= FLOOR_BOUND));
	printf("| registration after a restart: ejob / floor | %.2f / %.2f s (%.2fx) | within %.1fx | %s |\n", a[h].restart_s,
	       f[h].restart_s, rr, FLOOR_BOUND, met(rr <= FLOOR_BOUND));
	printf("| RSS at registration / after the fires | %.1f / %.1f MB | < 64 MB | %s |\n", a[h].at_reg.rss_kb / 1024.0,
	       a[h].after.rss_kb / 1024.0, met(a[h].at_reg.rss_kb < T_RSS_KB && a[h].after.rss_kb < T_RSS_KB));
	printf("| ZooKeeper watches per job | %.1f | at most %.0f | %s |\n\n", (double)a[h].watches / a[h].n, T_WATCHES,
	       met((double)a[h].watches / a[h].n <= T_WATCHES));
	fflush(stdout);
	for (int i = 0; i < nsz; i++) never += !a[i].first_items;
	if (!growth_only) never += !sc.first_items;
	if (growth_only) {
		printf("bench/scale: %.0f s in all\n", (double)(tlib_now_ms() - t_start) / 1e3);
		tzk_stop(&zk, SIGKILL, 5000);
		if (never) fprintf(stderr, "bench/scale: in %d of the part A runs no item ever started\n", never);
		return never ? 1 : 0;
	}

part_b:;
	/* B */
	static struct brun b;
	run_b(&zk, &b);
	printf("B. %d supervisors (%d workers each) x %d native jobs x %d items, failover on, a fire every %d s;\n"
	       "negotiated session timeout %d ms:\n\n",
	       B_SUPS, B_WORKERS, B_JOBS, B_ITEMS, B_PERIOD, b.session_ms);
	printf("| measure | value | target / reference | |\n");
	printf("|---|--:|---|---|\n");
	printf("| registration: first start to all %d registered on all %d jobs (ZooKeeper) | %.2f s | | |\n", B_SUPS, B_JOBS,
	       b.reg_s);
	if (b.exact_n > 0)
		printf("| first fire in which every item ran exactly once | %.1f s after the start (fire %d) | | met |\n",
		       (double)b.exact_ms / 1e3, b.exact_n);
	else
		printf("| first fire in which every item ran exactly once | none in %d s | | **missed** |\n", 6 * B_PERIOD);
	printf("| ZooKeeper packets received per job per fire (measured, mntr; with pings) | %.1f | | |\n", b.pkt_recv);
	printf("| ZooKeeper packets sent per job per fire (measured, mntr; answers + watch events) | %.1f | | |\n", b.pkt_sent);
	printf("| requests per job per fire, all %d instances (measured: `cons` lcxid deltas of %d sessions, pings excluded) "
	       "| %.1f | ElasticJob: %d (computed: %d x (6 + 8 x 1)) | %.1fx fewer |\n",
	       B_SUPS, b.req_sessions, b.req, EL_PER_FIRE, B_SUPS, b.req > 0 ? EL_PER_FIRE / b.req : 0);
	printf("| kill -9 of %d supervisors at once (%d of the %d jobs' leaders among them): kill to the last expiry "
	       "(observed) | %.2f s | | |\n", B_KILL, b.leaders_killed, B_JOBS, b.kill_to_exp_s);
	printf("| last expiry to every one of the %d items started again | %.2f s (next fire %.2f s after the expiry) | | |\n",
	       B_JOBS * B_ITEMS, b.recovery_s, b.exp_to_fire_s);
	printf("| items missing / started twice per fire, in the %d fires after that | %d / %d | 0 / 0 | %s |\n", b.after_fires,
	       b.after_missing, b.after_twice, met(!b.after_missing && !b.after_twice));
	printf("| lease alarms (\"no answer for\", all logs) | %d | 0 | %s |\n", b.alarms, met(!b.alarms));
	printf("\nEvery fire (time after the first start: items missing / started twice of %d):", B_JOBS * B_ITEMS);
	for (int k = 0; k < b.f.n; k++) {
		int missing, twice;
		fire_errors(&b.f, k, &missing, &twice);
		printf("%s %.0f s: %d/%d%s", k ? "," : "", (double)(b.f.ms[k] - b.t0_ms) / 1e3, missing, twice,
		       b.f.ms[k] > b.kill_ms && b.f.ms[k] < b.exp_ms ? " (between the kill and the expiries)" : "");
	}
	printf(".\nThe kill took %.1f ms for the %d; runs outside the fires (failover, misfire): %d.\n", b.kill_spread_ms,
	       B_KILL, b.side);
	printf("\nbench/scale: %.0f s in all\n", (double)(tlib_now_ms() - t_start) / 1e3);
	fflush(stdout);
	tzk_stop(&zk, SIGKILL, 5000);
	if (never) fprintf(stderr, "bench/scale: in %d of the part A runs no item ever started\n", never);
	return never ? 1 : 0;
}
