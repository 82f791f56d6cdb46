/* bench/worker.c: what running an item through ejob-worker costs, against its floor, in one run.
 *
 *   script item    publish a `/bin/true` item, ejob-worker claims it, splits the command line,
 *                  builds the context JSON and environment, forks, waits for the go, execs,
 *                  waits on a pidfd, reports; the bench drains the completion
 *   fork+exec      the bench itself: fork, execve /bin/true, waitpid (what any scheduler that
 *                  runs a command per item pays at least)
 *   native item    publish a native item (examples/libhello.so hello_item writing its line to
 *                  /dev/null); ejob-worker calls it and reports
 *   direct call    the bench dlopens the same library and calls hello_item itself
 *
 * Latency: one item in flight at a time (publish -> completion drained), median and p99.
 * Throughput: native items published in batches of 64 to one worker, items per second.
 * Run from the top of the tree after make (it starts build/worker/ejob-worker).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/frame.h"
#include "ipc/ring.h"
#include "ipc/seg.h"
#include "ipc/wait.h"
#include "t/lib/tbuild.h"
#include "worker/ejob.h"

static seg_t *seg;
static frame_decoder_t *dec;
static unsigned char buf[65536];
static char lib[4096];

static void die(const char *what)
{
	fprintf(stderr, "bench/worker: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static pid_t start_worker(int *lifeline)
{
	int life[2], note[2];
	if (pipe2(life, O_CLOEXEC) < 0 || pipe2(note, O_CLOEXEC) < 0) die("pipe2");
	struct shm_worker *w = seg_worker(seg, 0);
	atomic_fetch_add(&w->gen, 1);
	atomic_store(&w->state, WRK_STARTING);
	pid_t sup = getpid();
	pid_t p = fork();
	if (p < 0) die("fork");
	if (p == 0) {
		int src[4] = { fcntl(seg_memfd(seg), F_DUPFD, 20), fcntl(seg_eventfd(seg), F_DUPFD, 20),
		               fcntl(life[0], F_DUPFD, 20), fcntl(note[1], F_DUPFD, 20) };
		int nul = open("/dev/null", O_RDWR);
		dup2(nul, 0);
		dup2(nul, 1);   /* the item's output is not what is measured */
		for (int i = 0; i < 4; i++) dup2(src[i], 3 + i);
		close_range(7, ~0U, 0);
		char v[24];
		snprintf(v, sizeof v, "%d", (int)sup);
		setenv("EJOB_SUPERVISOR_PID", v, 1);
		execl(BUILT("worker/ejob-worker"), "ejob-worker", "--index", "0", (char *)NULL);
		_exit(127);
	}
	atomic_store(&w->pid, p);
	close(life[0]);
	close(note[1]);
	char r[16];
	ssize_t n = read(note[0], r, sizeof r);
	if (n != 6 || memcmp(r, "ready\n", 6)) {
		fprintf(stderr, "bench/worker: " BUILT("worker/ejob-worker") " did not start (run from the top of the tree after make)\n");
		exit(1);
	}
	close(note[0]);
	*lifeline = life[1];
	return p;
}

static void publish(const struct frame_submit *f)
{
	long n = frame_encode_submit(f, buf, sizeof buf);
	if (n < 0) die("encode");
	while (ring_publish(seg, buf, (uint32_t)n) < 0) {
		if (errno != EAGAIN) die("ring_publish");
		ring_flush(seg);
		sched_yield();
	}
}

/* Wait for one completion; returns its status. */
static int completion(void)
{
	for (;;) {
		struct ring_comp ci;
		long n = ring_drain(seg, buf, sizeof buf, &ci);
		if (n > 0) {
			struct frame_complete c;
			struct frame_err fe;
			if (frame_decode_complete(dec, buf, (size_t)n, &c, &fe) < 0) {
				fprintf(stderr, "bench/worker: bad completion: %s\n", fe.msg);
				exit(1);
			}
			return (int)c.status;
		}
		if (n < 0) die("ring_drain");
		if (ring_comp_idle(seg)) continue;
		struct pollfd pf = { seg_eventfd(seg), POLLIN, 0 };
		if (poll(&pf, 1, 5000) != 1) {
			fprintf(stderr, "bench/worker: no completion in 5 s\n");
			exit(1);
		}
		uint64_t v;
		if (read(seg_eventfd(seg), &v, sizeof v) < 0) { /* EAGAIN */ }
	}
}

static struct frame_submit item(uint64_t xid, uint32_t kind)
{
	struct frame_submit f = {
		.xid = xid, .fire_id = 1, .epoch = 1, .item = 0, .total = 1, .attempt = 1, .kind = kind, .job = "bench",
		.task_id = "bench@-@0@-@READY@-@127.0.0.1@-@1", .item_param = "", .job_param = "/dev/null",
	};
	if (kind == FRAME_KIND_SCRIPT) f.cmd = "/bin/true";
	else { f.lib = lib; f.sym = "hello_item"; }
	return f;
}

static void report(const char *name, uint64_t *v, size_t n, double floor_median)
{
	qsort(v, n, sizeof *v, cmp_u64);
	double med = (double)v[n / 2] / 1000.0, p99 = (double)v[n * 99 / 100] / 1000.0;
	printf("| %-34s | %9.1f | %9.1f |", name, med, p99);
	if (floor_median > 0) printf(" %5.2fx |\n", med / floor_median);
	else printf("     - |\n");
}

int main(void)
{
	if (!realpath(BUILT("examples/libhello.so"), lib)) die(BUILT("examples/libhello.so") " (run make)");
	char err[256];
	struct seg_params p = { .nworkers = 1, .name = "bench" };
	if (seg_create(&p, &seg, err, sizeof err) < 0) {
		fprintf(stderr, "bench/worker: %s\n", err);
		return 1;
	}
	dec = frame_decoder_new(FRAME_MAX_LEN);
	int lifeline;
	uint64_t t0 = wait_now_ns();
	pid_t w = start_worker(&lifeline);
	double start_ms = (double)(wait_now_ns() - t0) / 1e6;

	enum { NS = 1000, NN = 20000, NT = 200000 };
	uint64_t *v = malloc(sizeof(uint64_t) * NN);
	uint64_t xid = 1;

	/* floor for scripts: fork + execve + waitpid from here */
	for (int i = 0; i < NS; i++) {
		uint64_t a = wait_now_ns();
		pid_t c = fork();
		if (c == 0) {
			char *av[] = { (char *)"/bin/true", NULL };
			execve(av[0], av, environ);
			_exit(127);
		}
		int st;
		waitpid(c, &st, 0);
		v[i] = wait_now_ns() - a;
	}
	qsort(v, NS, sizeof *v, cmp_u64);
	double fork_med = (double)v[NS / 2] / 1000.0;

	printf("ejob-worker started and ready in %.1f ms\n\n", start_ms);
	printf("| per item, one in flight           | median us |   p99 us | ratio |\n");
	printf("|------------------------------------|-----------|----------|-------|\n");
	report("fork+exec+wait /bin/true (floor)", v, NS, 0);
	for (int i = 0; i < NS; i++) {
		struct frame_submit f = item(xid++, FRAME_KIND_SCRIPT);
		uint64_t a = wait_now_ns();
		publish(&f);
		ring_flush(seg);
		if (completion() != FRAME_ST_OK) { fprintf(stderr, "script item failed\n"); return 1; }
		v[i] = wait_now_ns() - a;
	}
	report("script item via ejob-worker", v, NS, fork_med);

	/* lazily: hello_wait's ejob_cancelled is exported by ejob-worker (-rdynamic), not by us */
	void *h = dlopen(lib, RTLD_LAZY | RTLD_LOCAL);
	int (*fn)(const ejob_context *);
	void *sym = h ? dlsym(h, "hello_item") : NULL;
	if (!sym) { fprintf(stderr, "bench/worker: %s\n", dlerror()); return 1; }
	memcpy(&fn, &sym, sizeof fn);
	ejob_context ctx = { .size = sizeof ctx, .job = "bench", .task_id = "t", .item_param = "", .job_param = "/dev/null", .total = 1 };
	for (int i = 0; i < NN; i++) {
		uint64_t a = wait_now_ns();
		if (fn(&ctx) != 0) { fprintf(stderr, "hello_item failed\n"); return 1; }
		v[i] = wait_now_ns() - a;
	}
	qsort(v, NN, sizeof *v, cmp_u64);
	double direct_med = (double)v[NN / 2] / 1000.0;
	report("hello_item called directly (floor)", v, NN, 0);
	for (int i = 0; i < NN; i++) {
		struct frame_submit f = item(xid++, FRAME_KIND_NATIVE);
		uint64_t a = wait_now_ns();
		publish(&f);
		ring_flush(seg);
		if (completion() != FRAME_ST_OK) { fprintf(stderr, "native item failed\n"); return 1; }
		v[i] = wait_now_ns() - a;
	}
	report("native item via ejob-worker", v, NN, direct_med);

	/* throughput: keep up to 64 native items in flight */
	uint64_t a = wait_now_ns();
	int inflight = 0, done = 0, published = 0;
	while (done < NT) {
		while (inflight < 64 && published < NT) {
			struct frame_submit f = item(xid++, FRAME_KIND_NATIVE);
			publish(&f);
			inflight++;
			published++;
		}
		ring_flush(seg);
		completion();
		inflight--;
		done++;
	}
	double secs = (double)(wait_now_ns() - a) / 1e9;
	printf("\nnative items, 64 in flight, one worker: %.0f items/s (%d items in %.2f s)\n", NT / secs, NT, secs);

	close(lifeline);   /* the worker sees EOF and exits */
	int st;
	waitpid(w, &st, 0);
	dlclose(h);
	free(v);
	frame_decoder_free(dec);
	seg_close(seg);
	return 0;
}
