/* bench/zk.c: ejob's ZooKeeper coordination, with a real ZooKeeper 3.8 and real supervisors
 * (t/lib/tzk, t/lib/tsup), against ElasticJob's figures and a bare floor, in one run:
 *
 *   round trips   one supervisor, one native job of N items (1, 4, 16, 64: all local, it is the
 *                 only instance), a fire every second, monitorExecution on. R is what the
 *                 supervisor's fire-end log line says: the ZooKeeper requests it sent between the
 *                 fire's start and its end, pings excluded (supervisor/coord/coord_fire.c cx_end). Counted,
 *                 not timed, over steady-state fires (the first ones, which shard, are skipped).
 *                 ElasticJob: 6 + 8 per local item (ELASTICJOB.md; a formula, not measured).
 *   trigger       trigger/{instanceId} (ElasticJob's manual trigger) is created for a script job
 *                 whose cron never fires in the run; sample = the item's start stamp (CLOCK_REALTIME,
 *                 written by the item process first thing: this binary in --stamp mode) - the time
 *                 just before the create. Floor, interleaved in the same run: a second client
 *                 (its own session, as the supervisor has) watches a node of the same shape and, in
 *                 its watcher, posix_spawns the same command: watch latency + process start. (A
 *                 node of its own, so that ejob and the floor never race for the same 2 cores.)
 *   failover      two supervisors (--ip 127.0.0.1 and 127.0.0.2), failover on, 8 items that
 *                 sleep; kill -9 one supervisor and everything under it (a crashed machine) while
 *                 its 4 items run; sample = when each of them starts on the other - the kill, as
 *                 a ratio to the session timeout the killed one negotiated. ElasticJob: >= 1.0x the
 *                 session timeout for the first item, then one item per idle instance per fire
 *                 (ELASTICJOB.md; a reference, not measured).
 *
 * --round-trips: the round trips only, then again with items that fail with 1 KB of output (their
 * last records carry a cause and an output tail: the same requests per fire).
 *
 * Run from the top of the tree after make (it starts build/supervisor/ejob-supervisor). Every process
 * it starts is tracked by t/lib/tlib and killed at exit, on failure or on a fatal signal. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"

extern char **environ;

#define SESSION_MS 4000      /* requested by every supervisor here */
#define TICK_MS 200          /* ZooKeeper's tickTime: sessions of 400-4000 ms, expiry checked every 200 ms */
#define RT_SKIP 2            /* round trips: fires skipped after the start (the first one shards) */
#define RT_FIRES 8           /* round trips: fires counted for each N */
#define TRIG_WARM 2          /* trigger: rounds of each kind not counted (the first one shards) */
#define TRIG_ROUNDS 40       /* trigger: rounds of each kind counted */
#define FO_REPS 4            /* failover: kills */
#define FO_ITEMS 8           /* failover: items of the job, half on each supervisor */
#define MAXS 512

static char self[PATH_MAX];  /* this binary: the item command, in --stamp mode */
static char noop_lib[PATH_MAX];

/* ---- --stamp FILE SECONDS [JSON]: the item command --------------------------------------------- */

/* Appends "REALTIME_NS ITEM TASKID" to FILE with one write, first thing, then sleeps SECONDS. A
 * script job's last argument (the sharding-context JSON) is ignored. */
static int stamp_main(int argc, char **argv)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (argc < 4) return 2;
	const char *item = getenv("EJOB_ITEM"), *task = getenv("EJOB_TASK_ID");
	char line[512];
	int n = snprintf(line, sizeof line, "%" PRId64 " %s %s\n", (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec,
	                 item ? item : "-1", task ? task : "-");
	if (n < 0 || (size_t)n >= sizeof line) return 1;
	FILE *f = fopen(argv[2], "ae");
	if (!f) return 1;
	if (fwrite(line, 1, (size_t)n, f) != (size_t)n || fclose(f) != 0) return 1;
	struct timespec left = { atoi(argv[3]), 0 };
	while (nanosleep(&left, &left) < 0 && errno == EINTR) {}
	return 0;
}

struct stamp { int64_t ns; int item; char task[160]; };

static int read_stamps(const char *path, struct stamp *s, int max)
{
	char *t = tsup_slurp(path);
	int n = 0;
	char *save = NULL;
	for (char *p = t ? strtok_r(t, "\n", &save) : NULL; p && n < max; p = strtok_r(NULL, "\n", &save))
		if (sscanf(p, "%" SCNd64 " %d %159s", &s[n].ns, &s[n].item, s[n].task) == 3) n++;
	free(t);
	return n;
}

/* ---- helpers ----------------------------------------------------------------------------------- */

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
}

/* Give up: say why (with the supervisor's log if there is one); tlib kills what was started. */
#define fail(t, ...) tsup_die("bench/zk", t, __VA_ARGS__)

/* what snprintf said: the config fits its buffer */
static void fits(size_t len, int w)
{
	if (w < 0 || (size_t)w >= len) fail(NULL, "a supervisor config does not fit in %zu bytes", len);
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* p-th quantile of n sorted values, nearest rank */
static int64_t pct(const int64_t *sorted, int n, double p)
{
	return sorted[(int)(p * (n - 1) + 0.5)];
}

/* The R of each fire-end line of `job` in a supervisor's log, in order: "job J: fire ...
 * (epoch 0x..., R zk requests)" (or "(1.00s, R zk requests)" for a fire with failed items). */
static int fire_requests(const struct tsup *t, const char *job, int64_t *r, int max)
{
	char *s = tsup_slurp(t->log);
	char pre[128];
	snprintf(pre, sizeof pre, "job %s: fire ", job);
	int n = 0;
	char *save = NULL;
	for (char *line = s ? strtok_r(s, "\n", &save) : NULL; line && n < max; line = strtok_r(NULL, "\n", &save)) {
		char *q = strstr(line, " zk requests)");
		if (!q || !strstr(line, pre)) continue;
		char *b = q;
		while (b > line && isdigit((unsigned char)b[-1])) b--;
		if (b < q) r[n++] = strtoll(b, NULL, 10);
	}
	free(s);
	return n;
}

static int wait_fires(const struct tsup *t, const char *job, int count, unsigned timeout_ms)
{
	static int64_t r[MAXS];
	uint64_t end = tlib_now_ms() + timeout_ms;
	for (;;) {
		if (fire_requests(t, job, r, MAXS) >= count) return 1;
		if (!tsup_alive(t->pid) || tlib_now_ms() >= end) return 0;
		sleep_ms(10);
	}
}


static pid_t start(struct tsup *t, const char *ip)
{
	const char *args[] = { "--ip", ip, NULL };
	pid_t p = tsup_start(t, args);
	if (p <= 0) fail(NULL, "cannot start " BUILT("supervisor/ejob-supervisor") " (run from the top of the tree after make)");
	return p;
}

static void stop(struct tsup *t)
{
	int st = tsup_stop(t, SIGTERM, 15000);
	if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		fprintf(stderr, "bench/zk: supervisor %d did not stop cleanly (status 0x%x)\n", (int)t->pid, st);
}

/* ---- 1. ZooKeeper round trips per fire ----------------------------------------------------------- */

struct rt { int n; int64_t median, max, first, each[RT_FIRES]; };

/* fail: the items fail with 1 KB of output (libnoop's fail_item), so that each completion
 * writes a last record with its cause and output tail */
static void round_trips(const struct tzk_server *zk, int n, int fail, struct rt *out)
{
	char yaml[16384], name[32];
	fits(sizeof yaml, snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"%s\", namespace: zkrt%d, sessionTimeoutMilliseconds: %d}\n"
	         "supervisor: {workers: 4, attachSocket: \"@SOCK@\", shutdownGraceSeconds: 1}\n"
	         "jobs:\n"
	         "  rt:\n"
	         "    type: native\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    shardingTotalCount: %d\n"
	         "    monitorExecution: true\n"
	         "    props: {native.library: \"%s\", native.symbol: %s}\n",
	         zk->connect, n + (fail ? 1000 : 0), SESSION_MS, n, noop_lib, fail ? "fail_item" : "noop_item"));
	snprintf(name, sizeof name, "rt%d%s", n, fail ? "f" : "");
	struct tsup t;
	tsup_config(&t, name, yaml);
	start(&t, "127.0.0.1");
	if (!wait_fires(&t, "rt", RT_SKIP + RT_FIRES, (RT_SKIP + RT_FIRES + 10) * 1000))
		fail(&t, "round trips, %d items: %d fires did not end in time", n, RT_SKIP + RT_FIRES);
	char want[64];
	/* the fire's summary line (supervisor/run/fire.c fire_summary) */
	if (n == 1) snprintf(want, sizeof want, "its 1 item here %s", fail ? "failed" : "succeeded");
	else if (fail) snprintf(want, sizeof want, "%d of %d items here failed", n, n);
	else snprintf(want, sizeof want, "all %d items here succeeded", n);
	if (tsup_log_count(&t, want) < RT_SKIP + RT_FIRES) fail(&t, "round trips, %d items: not every fire ran all of them", n);
	stop(&t);
	int64_t r[MAXS];
	fire_requests(&t, "rt", r, MAXS);
	out->n = n;
	out->first = r[0];
	int64_t *s = r + RT_SKIP;
	memcpy(out->each, s, sizeof out->each);
	qsort(s, RT_FIRES, sizeof *s, cmp64);
	out->median = pct(s, RT_FIRES, 0.5);
	out->max = s[RT_FIRES - 1];
}

/* ---- 2. trigger to item start ---------------------------------------------------------------------- */

static struct {
	char floor_path[256];        /* the node the floor client watches */
	char floor_out[600];
	char json[256];
	_Atomic pid_t spawned;       /* the floor's item process, for the main thread to reap */
	atomic_int spawn_err;
} F;

/* The floor: on the node's creation, start the item command; nothing else. (The client's own
 * thread; posix_spawn is fine there.) A session event reaches every watcher: type first. */
static void floor_watch(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
	(void)zh;
	(void)state;
	(void)ctx;
	if (type != ZOO_CREATED_EVENT || strcmp(path, F.floor_path)) return;
	char *argv[] = { self, (char *)"--stamp", F.floor_out, (char *)"0", F.json, NULL };
	pid_t p;
	int rc = posix_spawn(&p, self, NULL, NULL, argv, environ);
	if (rc) atomic_store(&F.spawn_err, rc);
	else atomic_store(&F.spawned, p);
}

static int64_t last_stamp(const char *path, int want)
{
	static struct stamp s[MAXS];
	int n = read_stamps(path, s, MAXS);
	return n >= want ? s[want - 1].ns : -1;
}

struct trig { int64_t ejob[TRIG_ROUNDS], floor[TRIG_ROUNDS]; int n; };

static void trigger(const struct tzk_server *zk, struct trig *out)
{
	char out_ejob[600], yaml[16384], trig_path[256];
	snprintf(out_ejob, sizeof out_ejob, "%s/trig-ejob", tlib_tmpdir());
	snprintf(F.floor_out, sizeof F.floor_out, "%s/trig-floor", tlib_tmpdir());
	fits(sizeof yaml, snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"%s\", namespace: zktr, sessionTimeoutMilliseconds: %d}\n"
	         "supervisor: {workers: 2, attachSocket: \"@SOCK@\", shutdownGraceSeconds: 1}\n"
	         "jobs:\n"
	         "  tr:\n"
	         "    type: script\n"
	         "    cron: \"0 0 0 1 1 ? 2099\"\n"
	         "    shardingTotalCount: 1\n"
	         "    props: {script.command.line: \"%s --stamp %s 0\"}\n",
	         zk->connect, SESSION_MS, self, out_ejob));
	struct tsup t;
	tsup_config(&t, "trig", yaml);
	start(&t, "127.0.0.1");
	if (!tsup_wait_log(&t, "job tr: registered", 1, 15000)) fail(&t, "trigger: the job did not register");
	snprintf(trig_path, sizeof trig_path, "/zktr/tr/trigger/127.0.0.1@-@%d", (int)t.pid);
	snprintf(F.floor_path, sizeof F.floor_path, "/zktr/floor/trigger/127.0.0.1@-@%d", (int)getpid());
	snprintf(F.json, sizeof F.json,
	         "{\"jobName\":\"floor\",\"taskId\":\"floor@-@0@-@READY@-@127.0.0.1@-@%d\",\"shardingTotalCount\":1,"
	         "\"jobParameter\":\"\",\"shardingItem\":0,\"shardingParameter\":\"\"}", (int)getpid());

	zhandle_t *op = tzk_connect(zk->connect, 10000, NULL, 10000);     /* the operator */
	zhandle_t *fl = tzk_connect(zk->connect, SESSION_MS, NULL, 10000); /* the floor's own session */
	if (!op || !fl) fail(&t, "trigger: cannot connect to ZooKeeper");
	if (tzk_create(op, F.floor_path, "", 0, NULL) != ZOK || zoo_delete(op, F.floor_path, -1) != ZOK)
		fail(&t, "trigger: cannot make the floor's parent nodes");

	int nej = 0, nfl = 0;
	for (int round = 0; round < 2 * (TRIG_WARM + TRIG_ROUNDS); round++) {
		int floor = round & 1, k = round / 2;
		struct Stat st;
		if (floor) {
			atomic_store(&F.spawned, 0);
			if (zoo_wexists(fl, F.floor_path, floor_watch, NULL, &st) != ZNONODE) fail(&t, "trigger: floor watch");
		}
		int64_t t0 = tlib_wall_ns();
		int rc = zoo_create(op, floor ? F.floor_path : trig_path, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
		if (rc != ZOK) fail(&t, "trigger: create: %s", zerror(rc));
		const char *file = floor ? F.floor_out : out_ejob;
		int want = (floor ? nfl : nej) + 1;
		if (!tsup_wait_lines(file, "", want, 10000))
			fail(&t, "trigger: the %s item did not start within 10 s (round %d)", floor ? "floor's" : "job's", round);
		int64_t lat = last_stamp(file, want) - t0;
		if (floor) {
			nfl++;
			pid_t p;
			while (!(p = atomic_load(&F.spawned)) && !atomic_load(&F.spawn_err)) sleep_ms(1);
			if (p > 0) waitpid(p, NULL, 0);
			if (zoo_delete(op, F.floor_path, -1) != ZOK) fail(&t, "trigger: delete the floor's node");
			if (k >= TRIG_WARM) out->floor[k - TRIG_WARM] = lat;
		} else {
			nej++;
			/* the fire is over and the node gone before the next trigger (else: a misfire) */
			if (!wait_fires(&t, "tr", nej, 10000)) fail(&t, "trigger: the fire did not end");
			if (!tzk_wait_exists(op, trig_path, 0, 10000)) fail(&t, "trigger: the supervisor left its trigger node");
			if (k >= TRIG_WARM) out->ejob[k - TRIG_WARM] = lat;
		}
		sleep_ms(20 + (unsigned)(rand() % 50));   /* off any rhythm */
	}
	out->n = TRIG_ROUNDS;
	if (tsup_log_count(&t, "job tr: triggered: a fire now") != nej)
		fail(&t, "trigger: %d triggers but not as many fires", nej);
	tzk_close(fl);
	tzk_close(op);
	stop(&t);
}

/* ---- 3. failover after kill -9 ------------------------------------------------------------------- */

struct fo { int session_ms; int items; int64_t lat[FO_ITEMS], expired; int handouts; };

/* When the killed supervisor's session expired: its ephemeral instance node goes, and a watching
 * client hears of it (a watch's delivery, well under a millisecond here, is the error). */
static _Atomic int64_t expired_ns;

static void instance_watch(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
	(void)zh;
	(void)state;
	(void)path;
	(void)ctx;
	if (type == ZOO_DELETED_EVENT) atomic_store(&expired_ns, tlib_wall_ns());
}

static void failover(const struct tzk_server *zk, zhandle_t *op, int rep, struct fo *out)
{
	char out_path[600], yaml[16384], cron[64], name[32];
	snprintf(out_path, sizeof out_path, "%s/fo%d", tlib_tmpdir(), rep);
	/* one fire, 3 s from now: both are up by then, and nothing else fires */
	tsup_cron_once(cron, sizeof cron, 3);
	struct tsup a, b;
	for (int k = 0; k < 2; k++) {
		fits(sizeof yaml, snprintf(yaml, sizeof yaml,
		         "regCenter: {serverLists: \"%s\", namespace: zkfo%d, sessionTimeoutMilliseconds: %d}\n"
		         "supervisor: {workers: %d, attachSocket: \"@SOCK@\", shutdownGraceSeconds: 1}\n"
		         "jobs:\n"
		         "  fo:\n"
		         "    type: script\n"
		         "    cron: \"%s\"\n"
		         "    timeZone: UTC\n"
		         "    failover: true\n"
		         "    shardingTotalCount: %d\n"
		         "    props: {script.command.line: \"%s --stamp %s 60\"}\n",
		         zk->connect, rep, SESSION_MS, FO_ITEMS, cron, FO_ITEMS, self, out_path));
		snprintf(name, sizeof name, "fo%d%c", rep, k ? 'b' : 'a');
		tsup_config(k ? &b : &a, name, yaml);
	}
	start(&a, "127.0.0.1");
	if (!tsup_wait_log(&a, "job fo: this instance is the leader", 1, 5000)) fail(&a, "failover: a does not lead");
	start(&b, "127.0.0.2");
	if (!tsup_wait_log(&b, "job fo: registered", 1, 5000)) fail(&b, "failover: b does not register");
	if (!tsup_wait_lines(out_path, "", FO_ITEMS, 10000)) fail(&b, "failover: the fire did not start its %d items", FO_ITEMS);
	sleep_ms(500);   /* mid-fire */

	char inst[128];
	snprintf(inst, sizeof inst, "/zkfo%d/fo/instances/127.0.0.2@-@%d", rep, (int)b.pid);
	struct Stat st;
	atomic_store(&expired_ns, 0);
	if (zoo_wexists(op, inst, instance_watch, NULL, &st) != ZOK) fail(&b, "failover: no %s", inst);

	/* a crashed machine: the supervisor and everything under it, at once */
	pid_t kids[64];
	int nk = tsup_descendants(b.pid, kids, 64);
	int64_t killed = tlib_wall_ns();
	kill(b.pid, SIGKILL);
	for (int i = 0; i < nk; i++) kill(kids[i], SIGKILL);
	waitpid(b.pid, NULL, 0);
	tlib_untrack(b.pid);
	b.reaped = 1;

	char idb[64];
	snprintf(idb, sizeof idb, "127.0.0.2@-@%d", (int)b.pid);
	static struct stamp s[MAXS];
	int n = read_stamps(out_path, s, MAXS), mine[FO_ITEMS] = { 0 }, nb = 0;
	for (int i = 0; i < n && i < FO_ITEMS; i++)
		if (strstr(s[i].task, idb) && s[i].item >= 0 && s[i].item < FO_ITEMS) mine[s[i].item] = 1, nb++;
	if (nb != FO_ITEMS / 2) fail(&a, "failover: b ran %d items of the fire, not %d (did it register in time?)", nb, FO_ITEMS / 2);
	if (!tsup_wait_lines(out_path, "", FO_ITEMS + nb, (unsigned)(SESSION_MS * 3)))
		fail(&a, "failover: b's %d items did not all start on a within 3 session timeouts", nb);
	sleep_ms(300);   /* nothing more may start */
	n = read_stamps(out_path, s, MAXS);
	if (n != FO_ITEMS + nb) fail(&a, "failover: %d item starts, expected %d", n, FO_ITEMS + nb);
	out->items = 0;
	for (int i = FO_ITEMS; i < n; i++) {
		if (s[i].item < 0 || s[i].item >= FO_ITEMS || !mine[s[i].item] || strstr(s[i].task, idb))
			fail(&a, "failover: item %d started after the kill was not one of b's, or not on a", s[i].item);
		mine[s[i].item] = 0;
		out->lat[out->items++] = s[i].ns - killed;
	}
	int64_t exp = atomic_load(&expired_ns);
	if (!exp) fail(&a, "failover: the watch on %s did not fire", inst);
	out->expired = exp - killed;
	out->session_ms = tsup_session_ms(&b);
	out->handouts = tsup_log_count(&a, "of a crashed instance handed out");
	if (out->session_ms <= 0) fail(&b, "failover: b did not log its session timeout");
	stop(&a);
}

/* ---- main ----------------------------------------------------------------------------------------- */

static const char *ratio(double x, char *buf, size_t len)
{
	snprintf(buf, len, x >= 10 ? "%.0fx" : "%.1fx", x);
	return buf;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--stamp")) return stamp_main(argc, argv);
	tlib_init(300);
	srand(11);
	if (!realpath("/proc/self/exe", self) || !realpath(BUILT("bench/libnoop.so"), noop_lib))
		fail(NULL, "run from the top of the tree after make (" BUILT("bench/libnoop.so") ": %s)", strerror(errno));
	uint64_t t_start = tlib_now_ms();
	struct tzk_server zk;
	if (tzk_start(&zk, "zk", &(struct tzk_opts){ .tick_ms = TICK_MS }, 30000) < 0) fail(NULL, "cannot start ZooKeeper");

	/* 1 (--round-trips: only this, and again with items that fail) */
	int only_rt = argc > 1 && !strcmp(argv[1], "--round-trips");
	static const int ns[] = { 1, 4, 16, 64 };
	struct rt rt[4];
	for (int i = 0; i < 4; i++) round_trips(&zk, ns[i], 0, &rt[i]);
	printf("ZooKeeper requests per fire per supervisor (one supervisor, one job of N local items, a fire\n"
	       "every second, monitorExecution on; median / max over %d steady-state fires; counted, not timed):\n\n",
	       RT_FIRES);
	printf("| local items N | ejob R per fire, median / max | ElasticJob 6 + 8N (formula, not measured) | ratio | target |\n");
	printf("|--:|--:|--:|--:|--|\n");
	for (int i = 0; i < 4; i++) {
		char rb[32];
		int64_t el = 6 + 8 * (int64_t)rt[i].n;
		printf("| %d | %" PRId64 " / %" PRId64 " | %" PRId64 " | %s fewer | <= 2%s |\n", rt[i].n, rt[i].median, rt[i].max,
		       el, ratio((double)el / (double)(rt[i].median ? rt[i].median : 1), rb, sizeof rb),
		       rt[i].max <= 2 ? "" : " (missed)");
	}
	printf("\nR of each counted fire, in order:");
	for (int i = 0; i < 4; i++) {
		printf("%s N=%d:", i ? ";" : "", rt[i].n);
		for (int k = 0; k < RT_FIRES; k++) printf(" %" PRId64, rt[i].each[k]);
	}
	printf(".\nThe first fire after a start (the leader shards in it) sent");
	for (int i = 0; i < 4; i++) printf("%s %" PRId64 " (N=%d)", i ? "," : "", rt[i].first, rt[i].n);
	printf(" requests.\n\n");
	fflush(stdout);
	if (only_rt) {
		/* the same with every item failing: each completion's last record carries a cause and
		 * ~1 KB of output tail, in the same multi */
		for (int i = 0; i < 4; i++) round_trips(&zk, ns[i], 1, &rt[i]);
		printf("The same, every item failing with 1,020 bytes of output (its last record carries its cause and tail):\n\n");
		printf("| local items N | ejob R per fire, median / max |\n|--:|--:|\n");
		for (int i = 0; i < 4; i++) printf("| %d | %" PRId64 " / %" PRId64 " |\n", rt[i].n, rt[i].median, rt[i].max);
		printf("\nbench/zk --round-trips: %.0f s in all\n", (double)(tlib_now_ms() - t_start) / 1e3);
		tzk_stop(&zk, SIGKILL, 5000);
		return 0;
	}

	/* 2 */
	static struct trig tr;
	trigger(&zk, &tr);
	qsort(tr.ejob, (size_t)tr.n, sizeof *tr.ejob, cmp64);
	qsort(tr.floor, (size_t)tr.n, sizeof *tr.floor, cmp64);
	double e50 = (double)pct(tr.ejob, tr.n, 0.5) / 1e6, e99 = (double)pct(tr.ejob, tr.n, 0.99) / 1e6;
	double f50 = (double)pct(tr.floor, tr.n, 0.5) / 1e6, f99 = (double)pct(tr.floor, tr.n, 0.99) / 1e6;
	printf("Manual trigger (trigger/{instanceId} created) to the item's process running, %d each, interleaved:\n\n",
	       tr.n);
	printf("| measure | ejob | bare floor: a watching client spawns the command | ratio |\n");
	printf("|---|---|---|---|\n");
	printf("| trigger to item start, p50 / p99 | %.2f / %.2f ms | %.2f / %.2f ms | %.2fx / %.2fx |\n\n", e50, e99, f50,
	       f99, e50 / f50, e99 / f99);
	fflush(stdout);

	/* 3 */
	static struct fo fo[FO_REPS];
	zhandle_t *op = tzk_connect(zk.connect, 10000, NULL, 10000);
	if (!op) fail(NULL, "cannot connect to ZooKeeper");
	for (int r = 0; r < FO_REPS; r++) failover(&zk, op, r, &fo[r]);
	tzk_close(op);
	int64_t all[FO_REPS * FO_ITEMS], after[FO_REPS * FO_ITEMS];
	int nall = 0, sess = fo[0].session_ms, same = 1, handouts = 0;
	double first_sum = 0, exp_sum = 0, spread = 0;
	for (int r = 0; r < FO_REPS; r++) {
		int64_t first = INT64_MAX, last = 0;
		for (int i = 0; i < fo[r].items; i++) {
			after[nall] = fo[r].lat[i] - fo[r].expired;
			all[nall++] = fo[r].lat[i];
			if (fo[r].lat[i] < first) first = fo[r].lat[i];
			if (fo[r].lat[i] > last) last = fo[r].lat[i];
		}
		first_sum += (double)first;
		exp_sum += (double)fo[r].expired;
		if ((double)(last - first) / 1e6 > spread) spread = (double)(last - first) / 1e6;
		same &= fo[r].session_ms == sess;
		handouts += fo[r].handouts;
	}
	qsort(all, (size_t)nall, sizeof *all, cmp64);
	qsort(after, (size_t)nall, sizeof *after, cmp64);
	double sum = 0, asum = 0;
	for (int i = 0; i < nall; i++) {
		sum += (double)all[i];
		asum += (double)after[i];
	}
	double mean = sum / nall / 1e6, mx = (double)all[nall - 1] / 1e6;
	double first_ms = first_sum / FO_REPS / 1e6, exp_ms = exp_sum / FO_REPS / 1e6;
	printf("kill -9 of a supervisor (with its workers and items) mid-fire, failover on, to each of its items\n"
	       "starting on the other supervisor; %d runs of %d items, negotiated session timeout %d ms%s:\n\n",
	       FO_REPS, FO_ITEMS / 2, sess, same ? "" : " (not the same in every run!)");
	printf("| measure | ejob | x session timeout | ElasticJob (reference, not measured) |\n");
	printf("|---|---|---|---|\n");
	printf("| kill to the first item starting, mean | %.2f s | %.2fx | >= 1.0x |\n", first_ms / 1e3, first_ms / sess);
	printf("| kill to each item starting, mean / max | %.2f / %.2f s | %.2fx / %.2fx | the rest: one item per idle instance per fire |\n",
	       mean / 1e3, mx / 1e3, mean / sess, mx / sess);
	printf("| of which ZooKeeper: kill to the session's expiry, mean | %.2f s | %.2fx | |\n", exp_ms / 1e3, exp_ms / sess);
	printf("| of which ejob: expiry to each item starting, mean / max | %.1f / %.1f ms | | |\n", asum / nall / 1e6,
	       (double)after[nall - 1] / 1e6);
	printf("| first to last of the %d items in one run, worst run | %.1f ms | | |\n", FO_ITEMS / 2, spread);
	printf("\nThe session expires a timeout after ZooKeeper last heard from the killed supervisor (its last\n"
	       "request or ping: it pings every sixth of the timeout), rounded up to a tick (%d ms);\n"
	       "the surviving leader handed the items out in %d step%s over %d runs.\n",
	       TICK_MS, handouts, handouts == 1 ? "" : "s", FO_REPS);
	printf("\nbench/zk: %.0f s in all\n", (double)(tlib_now_ms() - t_start) / 1e3);
	fflush(stdout);
	tzk_stop(&zk, SIGKILL, 5000);
	return 0;
}
