/* bench/pool.c: an item through the supervisor's dispatcher and worker pool, against the
 * alternatives, in one run on one machine.
 *
 * It drives the real supervisor modules (supervisor/exec/pool.c, dispatch.c) on a libev loop, with
 * real ejob-worker processes running native jobs from bench/libnoop.so:
 *
 *   dispatch-to-start   disp_submit + disp_kick of one stamp_item; the job writes
 *                       CLOCK_MONOTONIC when it starts; sample = start - submit. Workers are
 *                       idle (asleep) when each item comes, as between cron fires.
 *   fork+exec per item  posix_spawn of a fresh process (this binary, --stamp) that writes the
 *                       same stamp first thing: the scheduler that starts a process per item.
 *   raw futex           one-way hand-off to a sleeping process through a futex word: the floor.
 *   items/s             200000 noop_item items queued at once, 8 workers, until all are done.
 *   events on / off     the same items as fires through the fire tracker (supervisor/run/fire.c,
 *                       wired to the dispatcher's hooks as main.c wires it): 2000 fires of 100
 *                       items, all queued at once; (a) no sinks, no metrics; (b) the history file
 *                       (in the temp dir) and the metrics counters; and the metrics alone. Runs
 *                       alternate, each side first, second and last in turn; each side's median. (b) is timed to its last outcome, and again until the
 *                       history sink's thread has written every record (events_free).
 */
#include <errno.h>
#include <ev.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf/conf.h"
#include "ipc/frame.h"
#include "ipc/seg.h"
#include "ipc/wait.h"
#include "supervisor/base/log.h"
#include "supervisor/exec/dispatch.h"
#include "supervisor/exec/pool.h"
#include "supervisor/obs/metrics.h"
#include "supervisor/run/events.h"
#include "supervisor/run/fire.h"
#include "supervisor/sink/events_history.h"
#include "t/lib/tbuild.h"

extern char **environ;

#define NWORKERS 8

static struct {
	struct ev_loop *loop;
	seg_t *seg;
	pool_t *pool;
	disp_t *disp;
	disp_target_t *target;
	fires_t *fs;
	uint32_t ready;
	uint64_t outcomes, failures;
	uint64_t want;
	char stamp_path[256];
	uint64_t *stamps;
	size_t nstamps;
} B;

static uint64_t now_ns(void) { return wait_now_ns(); }

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void pct(uint64_t *v, size_t n, double *p50, double *p99)
{
	qsort(v, n, sizeof *v, cmp);
	*p50 = (double)v[n / 2];
	*p99 = (double)v[n * 99 / 100];
}

/* ---- the pool, wired as the supervisor wires it --------------------------------------------- */

static void on_lost(void *arg, uint32_t w, const void *f, uint32_t len) { (void)arg; disp_lost(B.disp, B.target, w, f, len); }
static void on_ready(void *arg, uint32_t w) { (void)arg; (void)w; B.ready++; disp_kick(B.disp); }
static void on_stopped(void *arg) { (void)arg; ev_break(B.loop, EVBREAK_ALL); }

static void on_started(void *arg, const struct disp_started *s)
{
	(void)arg;
	if (s->cookie) fires_started(B.fs, s);    /* the items submitted directly have no fire */
}

static void on_outcome(void *arg, const struct disp_outcome *o)
{
	(void)arg;
	if (o->cookie) fires_outcome(B.fs, o);
	B.outcomes++;
	if (o->status != FRAME_ST_OK) {
		if (B.failures++ < 3) fprintf(stderr, "bench/pool: item failed: %s %s\n", frame_status_name(o->status), o->error);
	}
	if (B.outcomes >= B.want) ev_break(B.loop, EVBREAK_ONE);
}

static uint32_t t_capacity(void *arg) { (void)arg; return pool_ready_count(B.pool); }
static int t_accepts(void *arg, const char *j, uint32_t k) { (void)arg; (void)j; return k == FRAME_KIND_NATIVE; }
static pid_t t_pid(void *arg, uint32_t w) { (void)arg; return pool_pid(B.pool, w); }
static void t_kill(void *arg, uint32_t w, const char *why) { (void)arg; pool_kill(B.pool, w, why); }
static void t_bad(void *arg, const char *why) { (void)arg; fprintf(stderr, "bench/pool: %s\n", why); }

static void child_cb(struct ev_loop *loop, ev_child *w, int revents)
{
	(void)loop;
	(void)revents;
	pool_reaped(B.pool, w->rpid, w->rstatus);
}

static void submit(const char *sym, uint32_t item, uint32_t total)
{
	struct disp_req r = { .frame = {
		.job = "bench", .kind = FRAME_KIND_NATIVE, .lib = BUILT("bench/libnoop.so"), .sym = sym,
		.job_param = B.stamp_path, .item_param = "", .task_id = "bench@-@0@-@READY@-@127.0.0.1@-@1",
		.item = item, .total = total, .fire_id = 1, .epoch = 1,
	} };
	if (!disp_submit(B.disp, &r)) {
		perror("disp_submit");
		exit(1);
	}
}

static void run_until(uint64_t outcomes)
{
	B.want = outcomes;
	while (B.outcomes < outcomes) ev_run(B.loop, EVRUN_ONCE);
}

/* ---- items through the fire tracker, with and without the execution events ---------------- */

static void bf_name(const fire_t *f, char *buf, size_t len)
{
	snprintf(buf, len, "bench: fire %" PRIu64, fire_id(f));
}

static void bf_all_ended(fire_t *f)
{
	fire_summary(f);
	fire_free(f);
}

static const struct fire_ops bench_fire_ops = { .all_ended = bf_all_ended, .name = bf_name, .fail_level = LL_WARN };

/* nfires fires of per items of job j, all queued, then run until every item ended; seconds */
static double fires_run(const conf_job_t *j, uint32_t nfires)
{
	uint64_t base = B.outcomes, t0 = now_ns(), ms = wait_realtime_ns() / 1000000u;
	for (uint32_t k = 0; k < nfires; k++) {
		fire_t *f = fire_new(B.fs, &bench_fire_ops, NULL, j->name, j->sharding_total_count, ms + k);
		if (!f) exit(1);
		for (uint32_t i = 0; i < fire_total(f); i++) fire_add(f, i);
		if (fire_submit(f, j, 0) != j->sharding_total_count) {
			fprintf(stderr, "bench/pool: fire_submit queued less than a fire\n");
			exit(1);
		}
	}
	fires_kick(B.fs);
	run_until(base + (uint64_t)nfires * j->sharding_total_count);
	return (double)(now_ns() - t0) / 1e9;
}

static void mx_snapshot(void *arg, struct metrics_snapshot *s)
{
	(void)arg;
	s->instance = "127.0.0.1@-@0";
}

static double median(double *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && v[k - 1] > v[k]; k--) {
			double t = v[k];
			v[k] = v[k - 1];
			v[k - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- the alternatives --------------------------------------------------------------------- */

static struct { _Alignas(64) _Atomic uint32_t word; _Alignas(64) _Atomic uint32_t back; _Alignas(64) _Atomic uint64_t t0; } *fx;

static void futex_floor(size_t n, uint64_t *samples)
{
	fx = mmap(NULL, sizeof *fx, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint64_t *out = mmap(NULL, n * sizeof *out, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t p = fork();
	if (p == 0) {
		for (uint32_t i = 1; i <= n; i++) {
			while (atomic_load(&fx->word) < i) wait_futex(&fx->word, i - 1, -1);
			out[i - 1] = now_ns() - atomic_load(&fx->t0);
			atomic_store(&fx->back, i);
			wait_wake(&fx->back, 1);
		}
		_exit(0);
	}
	for (uint32_t i = 1; i <= n; i++) {
		struct timespec ts = { 0, 200000 };   /* let it fall asleep, as the pool's workers do */
		nanosleep(&ts, NULL);
		atomic_store(&fx->t0, now_ns());
		atomic_store(&fx->word, i);
		wait_wake(&fx->word, 1);
		while (atomic_load(&fx->back) < i) wait_futex(&fx->back, i - 1, -1);
	}
	waitpid(p, NULL, 0);
	memcpy(samples, out, n * sizeof *out);
}

static void fork_exec(const char *self, size_t n, uint64_t *samples)
{
	for (size_t i = 0; i < n; i++) {
		char slot[24];
		snprintf(slot, sizeof slot, "%zu", i);
		char *argv[] = { (char *)self, (char *)"--stamp", B.stamp_path, slot, NULL };
		uint64_t t0 = now_ns();
		pid_t p;
		if (posix_spawn(&p, self, NULL, NULL, argv, environ) != 0) {
			perror("posix_spawn");
			exit(1);
		}
		waitpid(p, NULL, 0);
		samples[i] = __atomic_load_n(&B.stamps[i], __ATOMIC_ACQUIRE) - t0;
	}
}

static int stamp_main(const char *path, const char *slot)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) return 1;
	return pwrite(fd, &now, sizeof now, (off_t)(strtoul(slot, NULL, 10) * sizeof now)) == sizeof now ? 0 : 1;
}

/* ---- main --------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--stamp")) return stamp_main(argv[2], argv[3]);
	size_t NLAT = 3000, NEXEC = 300;
	uint64_t NTPUT = 200000;
	int ROUNDS = 9;
	if (argc > 1 && !strcmp(argv[1], "--quick")) { NLAT = 500; NEXEC = 100; NTPUT = 30000; ROUNDS = 3; }

	log_init("bench/pool");
	log_set_level(LL_WARN);
	char self[4096];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	if (sl <= 0) return 1;
	self[sl] = '\0';
	char dir[] = "/tmp/ejob-bench.XXXXXX";
	if (!mkdtemp(dir)) return 1;
	snprintf(B.stamp_path, sizeof B.stamp_path, "%s/stamps", dir);
	B.nstamps = NLAT > NEXEC ? NLAT : NEXEC;
	int fd = open(B.stamp_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)(B.nstamps * sizeof(uint64_t))) < 0) return 1;
	B.stamps = mmap(NULL, B.nstamps * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);

	B.loop = ev_default_loop(EVFLAG_AUTO);
	char err[256];
	struct seg_params sp = { .nworkers = NWORKERS, .name = "pool" };
	if (seg_create(&sp, &B.seg, err, sizeof err) < 0) { fprintf(stderr, "%s\n", err); return 1; }
	struct disp_hooks dh = { .outcome = on_outcome, .started = on_started };
	B.disp = disp_new(B.loop, &dh, NULL, 5000);
	struct pool_params pp = { .nworkers = NWORKERS, .worker_bin = BUILT("worker/ejob-worker"), .log_level = LL_WARN,
	                          .heartbeat_timeout_ms = 5000, .backoff_max_ms = 1000 };
	struct pool_hooks ph = { .lost_item = on_lost, .ready = on_ready, .stopped = on_stopped };
	B.pool = pool_new(B.loop, B.seg, &pp, &ph, NULL);
	struct disp_target_ops ops = { t_capacity, t_accepts, t_pid, t_kill, t_bad };
	B.target = disp_add_target(B.disp, B.seg, "pool", &ops, NULL);
	if (!(B.fs = fires_new(B.disp, "127.0.0.1@-@0"))) return 1;
	ev_child cw;
	ev_child_init(&cw, child_cb, 0, 0);
	ev_child_start(B.loop, &cw);
	pool_start(B.pool);
	uint64_t until = now_ns() + 10000000000ull;
	while (B.ready < NWORKERS && now_ns() < until) ev_run(B.loop, EVRUN_ONCE);
	if (B.ready < NWORKERS) { fprintf(stderr, "bench/pool: workers not ready\n"); return 1; }

	fprintf(stderr, "bench/pool: dispatch-to-start...\n");
	uint64_t *lat = calloc(B.nstamps, sizeof *lat);
	/* warm-up: every worker dlopens the library and maps the stamp file once; the futex wakes
	 * sleepers in turn, so single items spread over all of them */
	for (uint32_t i = 0; i < 20 * NWORKERS; i++) {
		struct timespec ts = { 0, 200000 };
		nanosleep(&ts, NULL);
		submit("stamp_item", 0, (uint32_t)B.nstamps);
		disp_kick(B.disp);
		run_until(B.outcomes + 1);
	}
	for (uint32_t i = 0; i < 64; i++) submit("stamp_item", 0, (uint32_t)B.nstamps);
	disp_kick(B.disp);
	run_until(B.outcomes + 64);
	for (size_t i = 0; i < NLAT; i++) {
		struct timespec ts = { 0, 200000 };   /* workers go back to sleep between items */
		nanosleep(&ts, NULL);
		ev_run(B.loop, EVRUN_NOWAIT);
		uint64_t t0 = now_ns();
		submit("stamp_item", (uint32_t)i, (uint32_t)B.nstamps);
		disp_kick(B.disp);
		run_until(B.outcomes + 1);
		lat[i] = __atomic_load_n(&B.stamps[i], __ATOMIC_ACQUIRE) - t0;
	}
	double d50, d99;
	pct(lat, NLAT, &d50, &d99);

	fprintf(stderr, "bench/pool: fork+exec per item...\n");
	uint64_t *ex = calloc(NEXEC, sizeof *ex);
	fork_exec(self, NEXEC, ex);
	double e50, e99;
	pct(ex, NEXEC, &e50, &e99);

	fprintf(stderr, "bench/pool: raw futex...\n");
	uint64_t *fu = calloc(NLAT, sizeof *fu);
	futex_floor(NLAT, fu);
	double f50, f99;
	pct(fu, NLAT, &f50, &f99);

	fprintf(stderr, "bench/pool: throughput...\n");
	uint64_t base = B.outcomes, fail0 = B.failures;
	uint64_t t0 = now_ns();
	for (uint64_t i = 0; i < NTPUT; i++) submit("noop_item", (uint32_t)(i % 1000), 1000);
	disp_kick(B.disp);
	run_until(base + NTPUT);
	double secs = (double)(now_ns() - t0) / 1e9;
	double ips = (double)NTPUT / secs;

	fprintf(stderr, "bench/pool: events on / off...\n");
	enum { PER_FIRE = 100, RMAX = 9 };
	uint32_t nfires = (uint32_t)(NTPUT / PER_FIRE);
	conf_job_t job = {
		.name = "bench", .type = CONF_JOB_NATIVE, .native.library = BUILT("bench/libnoop.so"), .native.symbol = "noop_item",
		.job_parameter = "", .sharding_total_count = PER_FIRE,
	};
	static const struct metrics_hooks mh = { .snapshot = mx_snapshot };
	metrics_t *mx = metrics_new(&mh, NULL);
	char hpath[300];
	snprintf(hpath, sizeof hpath, "%s/history.jsonl", dir);
	double off[RMAX], mo[RMAX], on[RMAX], onw[RMAX];
	uint64_t dropped = 0;
	uint64_t tfail = B.failures - fail0, ffail0 = B.failures;
	for (int r = 0; r < ROUNDS; r++)
		for (int k = 0; k < 3; k++) {
			int side = (k + r) % 3;     /* each side first, second and third in turn */
			double items = (double)((uint64_t)nfires * PER_FIRE);
			if (side == 0) {            /* (a) no sinks, no metrics */
				off[r] = items / fires_run(&job, nfires);
				continue;
			}
			if (side == 1) {            /* metrics alone: their tap on the events */
				events_t *ev = events_new("127.0.0.1@-@0");
				if (!ev || !mx || metrics_subscribe(mx, ev) < 0) return 1;
				fires_set_events(B.fs, ev);
				mo[r] = items / fires_run(&job, nfires);
				fires_set_events(B.fs, NULL);
				events_free(ev);
				continue;
			}
			events_t *ev = events_new("127.0.0.1@-@0");   /* (b) history file + metrics */
			event_sink_t *sink = ev ? history_open(ev, hpath, 16 << 20, 2, 65536) : NULL;
			if (!sink || !mx || metrics_subscribe(mx, ev) < 0) return 1;
			fires_set_events(B.fs, ev);
			uint64_t w0 = now_ns();
			double s1 = fires_run(&job, nfires);
			dropped += events_dropped(sink);
			fires_set_events(B.fs, NULL);
			events_free(ev);   /* the sink's thread writes what it still has queued */
			double s2 = (double)(now_ns() - w0) / 1e9;
			on[r] = items / s1;
			onw[r] = items / s2;
		}
	for (int r = 0; r < ROUNDS; r++)
		fprintf(stderr, "bench/pool: round %d: off %.0f, metrics %.0f, on %.0f (written %.0f) items/s\n", r, off[r], mo[r],
		        on[r], onw[r]);
	uint64_t efail = B.failures - ffail0;
	double moff = median(off, ROUNDS), mmo = median(mo, ROUNDS), mon = median(on, ROUNDS), monw = median(onw, ROUNDS);
	/* the ratio of each round's sides (run back to back): the machine's drift between rounds
	 * (single runs of one side spread by a factor of 1.5) cancels within a round */
	double ron[RMAX], rmo[RMAX];
	for (int r = 0; r < ROUNDS; r++) ron[r] = on[r] / off[r], rmo[r] = mo[r] / off[r];
	double mron = median(ron, ROUNDS), mrmo = median(rmo, ROUNDS);
	metrics_free(mx);
	for (int k = 0; k <= 2; k++) {
		char p[320];
		snprintf(p, sizeof p, k ? "%s.%d" : "%s", hpath, k);
		unlink(p);
	}

	printf("| measure (%d workers, 2 cores) | ejob pool | alternative | ratio | target |\n", NWORKERS);
	printf("|---|---|---|---|---|\n");
	printf("| dispatch-to-start of a native item, p50 / p99 | %.1f / %.1f us | fork+exec per item: %.0f / %.0f us | %.0fx faster | |\n",
	       d50 / 1e3, d99 / 1e3, e50 / 1e3, e99 / 1e3, e50 / d50);
	printf("| dispatch-to-start p99 vs a raw sleeping futex hand-off | %.1f us | raw futex p50 / p99: %.1f / %.1f us | %.2fx | <= 2x |\n",
	       d99 / 1e3, f50 / 1e3, f99 / 1e3, d99 / f99);
	printf("| no-op native items/s, %" PRIu64 " queued at once | %.0f items/s | | | >= 100000 |\n", NTPUT, ips);
	printf("| no-op native items/s through the fire tracker, %" PRIu32 " fires of %d items queued at once, "
	       "history file + metrics on vs off, median of %d alternating | on: %.0f items/s | off: %.0f items/s | %.3fx "
	       "(median of the rounds' ratios: %.3fx) | >= 0.95x |\n",
	       nfires, PER_FIRE, ROUNDS, mon, moff, mon / moff, mron);
	printf("| the same, metrics alone on vs off | metrics: %.0f items/s | off: %.0f items/s | %.3fx (rounds: %.3fx) | >= 0.95x |\n",
	       mmo, moff, mmo / moff, mrmo);
	printf("| the same, on: until the history sink has written every record | %.0f items/s | off: %.0f items/s | %.3fx | |\n",
	       monw, moff, monw / moff);
	printf("| events the history sink dropped (queue full), all runs | %" PRIu64 " | | | 0 |\n", dropped);
	if (efail) printf("| (failed items during the fire runs) | %" PRIu64 " | | | 0 |\n", efail);
	if (tfail) printf("| (failed items during the run) | %" PRIu64 " | | | 0 |\n", tfail);

	pool_stop(B.pool, 2000);
	ev_run(B.loop, 0);
	fires_free(B.fs);
	disp_free(B.disp);
	pool_free(B.pool);
	seg_close(B.seg);
	unlink(B.stamp_path);
	rmdir(dir);
	return B.failures ? 1 : 0;
}
