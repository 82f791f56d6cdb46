/* t/80-dataflow.c: dataflow jobs (ElasticJob's DataflowJob): the worker library's loop,
 * ejob_dataflow, called directly and run by a real ejob-worker on native items of
 * t/native/libflow.so (fetch hands out N batches, then nothing; each call is recorded to a
 * file): streaming stops at an empty fetch, without streaming exactly one batch, a fetch or a
 * process failure fails the item, a batch bigger than the bound fails it, a cancel mid-stream
 * stops it at the next round with the cancel's outcome. Then through a supervisor (--run, no
 * ZooKeeper): type dataflow from the config file, timeoutSeconds and SIGTERM ending an endless
 * stream, the history's output; an external worker serving a dataflow job with the same loop;
 * and in a cluster (a real ZooKeeper, started while the rest runs): the config node, and the
 * server disabled mid-stream ending the stream. About 4 s. */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "ipc/seg.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/twork.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"
#include "worker/ejob.h"

static char dir[4096], lib[4096];
static unsigned flow_n;   /* the direct calls' fetch: batches left */

static long my_fetch(const ejob_context *ctx, void *buf, size_t cap, void *arg)
{
	(void)ctx;
	unsigned *calls = arg;
	calls[0]++;
	if (!flow_n) return 0;
	flow_n--;
	memset(buf, 'x', cap < 10 ? cap : 10);
	return 10;
}

static int my_process(const ejob_context *ctx, const void *batch, size_t len, void *arg)
{
	(void)ctx;
	(void)batch;
	unsigned *calls = arg;
	calls[1]++;
	return len == 10 ? 0 : 1;
}

/* ejob_dataflow on a context of our own (no slot: never cancelled, no output to set) */
static void test_direct(void)
{
	ejob_context c = { .size = sizeof c, .kind = EJOB_KIND_EXTERNAL, .job = "d", .task_id = "t", .item_param = "",
	                   .job_param = "", .dataflow = EJOB_DATAFLOW_STREAMING, .batch_max = 64 };
	unsigned calls[2] = { 0, 0 };
	int code = 99;
	char err[200];
	flow_n = 4;
	int st = ejob_dataflow(&c, my_fetch, my_process, calls, &code, err, sizeof err);
	ok(st == EJOB_OK && code == 0 && !err[0], "direct, streaming, 4 batches: ok (%d %d '%s')", st, code, err);
	ok(calls[0] == 5 && calls[1] == 4, "  5 fetches, 4 processes (got %u, %u)", calls[0], calls[1]);

	c.dataflow = EJOB_DATAFLOW_ONCE;
	calls[0] = calls[1] = 0;
	flow_n = 4;
	st = ejob_dataflow(&c, my_fetch, my_process, calls, &code, err, sizeof err);
	ok(st == EJOB_OK && calls[0] == 1 && calls[1] == 1, "direct, once: one fetch, one process (%u, %u)", calls[0],
	   calls[1]);

	calls[0] = calls[1] = 0;
	flow_n = 0;
	st = ejob_dataflow(&c, my_fetch, my_process, calls, &code, err, sizeof err);
	ok(st == EJOB_OK && calls[0] == 1 && calls[1] == 0, "direct, once, nothing fetched: ok, process never called");

	c.batch_max = 8;
	flow_n = 1;
	st = ejob_dataflow(&c, my_fetch, my_process, calls, &code, err, sizeof err);
	ok(st == EJOB_FAILED && code == -1, "a fetch that claims more than the bound: failed, code -1 (%d %d)", st, code);
	is_str(err, "fetch claimed 10 bytes, more than the batch bound 8", "  with the reason");

	c.dataflow = EJOB_DATAFLOW_NONE;
	st = ejob_dataflow(&c, my_fetch, my_process, calls, &code, err, sizeof err);
	ok(st == EJOB_ERROR, "not a dataflow item: error");
	is_str(err, "not a dataflow item", "  saying so");
	c.dataflow = EJOB_DATAFLOW_ONCE;
	ok(ejob_dataflow(&c, NULL, my_process, calls, NULL, NULL, 0) == EJOB_ERROR, "no fetch function: error");
}

/* ---- a real worker ---------------------------------------------------------------------- */

static struct frame_submit flow_item(struct twork *t, uint32_t mode, const char *param)
{
	struct frame_submit f = twork_item(t, FRAME_KIND_NATIVE);
	f.lib = lib;
	f.sym = NULL;
	f.fetch = "flow_fetch";
	f.process = "flow_process";
	f.flow = mode;
	f.job_param = param;
	return f;
}

static int run_item(struct twork *t, struct frame_submit *f, struct frame_complete *c)
{
	twork_publish(t, f);
	if (!twork_completion(t, 10000, c)) {
		diag("no completion for xid %llu in 10 s", (unsigned long long)f->xid);
		memset(c, 0, sizeof *c);
		c->status = 99;
		c->error = c->output = "";
		return 0;
	}
	return 1;
}

/* Count the lines of the record that start with what (for xid). */
static unsigned count(const char *rec, const char *what, uint64_t xid)
{
	char head[64];
	snprintf(head, sizeof head, "%s %llu ", what, (unsigned long long)xid);
	unsigned n = 0;
	for (const char *p = rec; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
		if (!strncmp(p, head, strlen(head))) n++;
	return n;
}

static void test_worker(struct twork *t)
{
	char rec[4200], param[4400];
	snprintf(rec, sizeof rec, "%s/flow.rec", dir);
	struct frame_complete c;

	snprintf(param, sizeof param, "%s 3 0 0 0", rec);
	struct frame_submit f = flow_item(t, 2, param);
	run_item(t, &f, &c);
	ok(c.status == FRAME_ST_OK && c.exit_code == 0, "streaming, 3 batches: ok (%s %d '%s')",
	   frame_status_name(c.status), c.exit_code, c.error);
	char *r = twork_slurp(rec, NULL);
	ok(count(r, "fetch", f.xid) == 4 && count(r, "process", f.xid) == 3,
	   "  stops at the empty fetch: 4 fetches, 3 processes (got %u, %u)", count(r, "fetch", f.xid),
	   count(r, "process", f.xid));
	ok(r && !strstr(r, "BAD"), "  each process got the bytes its fetch made");
	char want[4300];
	snprintf(want, sizeof want, "fetch %llu %u\n", (unsigned long long)f.xid, EJOB_BATCH_DEFAULT);
	ok(r && strstr(r, want), "  the batch bound is 1 MiB by default (fetch's cap)");
	free(r);
	is_str(c.output, "3 batches, 306 bytes; ended: empty fetch", "  the output counts batches and bytes");

	f = flow_item(t, 1, param);
	run_item(t, &f, &c);
	r = twork_slurp(rec, NULL);
	ok(c.status == FRAME_ST_OK && count(r, "fetch", f.xid) == 1 && count(r, "process", f.xid) == 1,
	   "without streaming: exactly one fetch and one process (%s, %u, %u)", frame_status_name(c.status),
	   count(r, "fetch", f.xid), count(r, "process", f.xid));
	free(r);
	is_str(c.output, "1 batch, 101 bytes; ended: one batch (streaming.process false)", "  and says so");

	snprintf(param, sizeof param, "%s 0 0 0 0", rec);
	f = flow_item(t, 2, param);
	run_item(t, &f, &c);
	r = twork_slurp(rec, NULL);
	ok(c.status == FRAME_ST_OK && count(r, "fetch", f.xid) == 1 && count(r, "process", f.xid) == 0,
	   "nothing to fetch: ok, process never called with an empty batch");
	free(r);

	snprintf(param, sizeof param, "%s 5 0 3 0", rec);
	f = flow_item(t, 2, param);
	run_item(t, &f, &c);
	r = twork_slurp(rec, NULL);
	ok(c.status == FRAME_ST_FAILED && c.exit_code == -7 && count(r, "process", f.xid) == 2,
	   "fetch 3 fails: failed with its code -7 after 2 batches (%s %d, %u)", frame_status_name(c.status),
	   c.exit_code, count(r, "process", f.xid));
	is_str(c.error, "fetch failed (-7)", "  the error says which call");
	free(r);

	snprintf(param, sizeof param, "%s 5 0 0 2", rec);
	f = flow_item(t, 2, param);
	run_item(t, &f, &c);
	r = twork_slurp(rec, NULL);
	ok(c.status == FRAME_ST_FAILED && c.exit_code == 5 && count(r, "fetch", f.xid) == 2,
	   "process of batch 2 fails: failed with its code 5, no fetch after it (%s %d, %u)",
	   frame_status_name(c.status), c.exit_code, count(r, "fetch", f.xid));
	is_str(c.error, "process failed (5) on batch 2 (102 bytes)", "  the error says which batch");
	is_str(c.output, "1 batch, 101 bytes; ended: process failed (5) on batch 2 (102 bytes)",
	       "  the output counts the batches done");
	free(r);

	snprintf(param, sizeof param, "%s 3 0 0 0", rec);
	f = flow_item(t, 2, param);
	f.batch_max = 64;
	run_item(t, &f, &c);
	ok(c.status == FRAME_ST_FAILED && c.exit_code == -1, "a batch past dataflow.batch.bytes (64): failed, code -1");

	f = flow_item(t, 2, param);
	f.fetch = "no_such_fetch";
	run_item(t, &f, &c);
	snprintf(want, sizeof want, "%s: undefined symbol: no_such_fetch", lib);
	ok(c.status == FRAME_ST_ERROR, "an unknown fetch symbol: error");
	is_str(c.error, want, "  with dlerror()'s text");

	/* cancel mid-stream: an endless stream, 50 ms per batch */
	struct shm_worker *w = twork_entry(t, t->index);
	snprintf(param, sizeof param, "%s 1000000 50 0 0", rec);
	f = flow_item(t, 2, param);
	twork_publish(t, &f);
	uint64_t t0 = tlib_now_ms();
	for (;;) {
		r = twork_slurp(rec, NULL);
		unsigned n = count(r, "process", f.xid);
		free(r);
		if (n >= 3 || tlib_now_ms() - t0 > 5000) break;
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	atomic_store(&w->cancel_xid, f.xid);
	atomic_store_explicit(&w->cancel, SHM_CANCEL_TIMEOUT, memory_order_release);
	uint64_t t1 = tlib_now_ms();
	int got = twork_completion(t, 5000, &c);
	uint64_t took = tlib_now_ms() - t1;
	atomic_store(&w->cancel, 0);
	atomic_store(&w->cancel_xid, 0);
	ok(got && c.status == FRAME_ST_TIMEOUT, "a timeout cancel mid-stream: outcome timeout (%s)",
	   got ? frame_status_name(c.status) : "none");
	ok(got && took < 1000, "  within a batch's time (%llu ms)", (unsigned long long)took);
	r = twork_slurp(rec, NULL);
	unsigned np = count(r, "process", f.xid), nf = count(r, "fetch", f.xid);
	free(r);
	ok(np >= 3 && nf == np, "  no fetch after the cancel was seen (%u fetches, %u processes)", nf, np);
	ok(got && strstr(c.output, "; ended: cancelled (timeout)"), "  the output says why it ended (%s)",
	   got ? c.output : "");
}

/* ---- through a supervisor (--run, no ZooKeeper) ------------------------------------------ */


/* Wait until the record holds at least n process lines (any item). */
static int wait_processed(const char *rec, unsigned n, unsigned timeout_ms)
{
	uint64_t t0 = tlib_now_ms();
	for (;;) {
		char *r = twork_slurp(rec, NULL);
		unsigned k = 0;
		for (const char *p = r; p && (p = strstr(p, "process ")); p++) k++;
		free(r);
		if (k >= n) return 1;
		if (tlib_now_ms() - t0 > timeout_ms) return 0;
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
}

static void test_supervisor(void)
{
	struct tsup t;
	char yaml[20000], v[1200];
	snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t80}\n"
	         "supervisor: {workers: 2, attachSocket: \"@SOCK@\", killGraceSeconds: 1, shutdownGraceSeconds: 1,\n"
	         "             history: {file: \"@DIR@/hist.jsonl\"}}\n"
	         "jobs:\n"
	         "  stream:\n    type: dataflow\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 2\n"
	         "    jobParameter: \"@DIR@/stream.rec 4 0 0 0\"\n"
	         "    props: {native.library: \"%1$s\", native.fetch: flow_fetch, native.process: flow_process,\n"
	         "            streaming.process: 'true'}\n"
	         "  once:\n    type: dataflow\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 1\n"
	         "    jobParameter: \"@DIR@/once.rec 4 0 0 0\"\n"
	         "    props: {native.library: \"%1$s\", native.fetch: flow_fetch, native.process: flow_process}\n"
	         "  endless:\n    type: dataflow\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 1\n"
	         "    timeoutSeconds: 1\n    jobParameter: \"@DIR@/endless.rec 1000000 20 0 0\"\n"
	         "    props: {native.library: \"%1$s\", native.fetch: flow_fetch, native.process: flow_process,\n"
	         "            streaming.process: 'true'}\n"
	         "  forever:\n    type: dataflow\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 1\n"
	         "    jobParameter: \"@DIR@/forever.rec 1000000 20 0 0\"\n"
	         "    props: {native.library: \"%1$s\", native.fetch: flow_fetch, native.process: flow_process,\n"
	         "            streaming.process: 'true'}\n",
	         lib);
	tsup_config(&t, "sup", yaml);
	char hist[700], rec[700];
	snprintf(hist, sizeof hist, "%s/hist.jsonl", t.dir);

	const char *a1[] = { "--run", "stream", NULL };
	int st = tsup_run(&t, a1, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "--run of a streaming dataflow job: exit 0 (%d)", st);
	snprintf(rec, sizeof rec, "%s/stream.rec", t.dir);
	ok(tsup_count_lines(rec, "fetch ") == 10 && tsup_count_lines(rec, "process ") == 8,
	   "  each of its 2 items: 5 fetches, 4 processes (got %d, %d)", tsup_count_lines(rec, "fetch "),
	   tsup_count_lines(rec, "process "));
	char *l = tsup_history_line(hist, "stream", -1, 1);
	ok(l && tlib_json_field(l, "outcome", v, sizeof v) && !strcmp(v, "\"ok\""), "  history: ok");
	ok(l && tlib_json_field(l, "output", v, sizeof v) && !strcmp(v, "\"4 batches, 410 bytes; ended: empty fetch\""),
	   "  history output: the batches and bytes (%s)", l ? v : "no record");
	free(l);

	const char *a2[] = { "--run", "once", NULL };
	st = tsup_run(&t, a2, 15000);
	snprintf(rec, sizeof rec, "%s/once.rec", t.dir);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && tsup_count_lines(rec, "fetch ") == 1 &&
	   tsup_count_lines(rec, "process ") == 1, "--run without streaming.process: one fetch, one process (%d, %d)",
	   tsup_count_lines(rec, "fetch "), tsup_count_lines(rec, "process "));

	const char *a3[] = { "--run", "endless", NULL };
	uint64_t t0 = tlib_now_ms();
	st = tsup_run(&t, a3, 15000);
	uint64_t ms = tlib_now_ms() - t0;
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 1, "--run of an endless stream with timeoutSeconds 1: exit 1 (%d)", st);
	l = tsup_history_line(hist, "endless", -1, 1);
	ok(l && tlib_json_field(l, "outcome", v, sizeof v) && !strcmp(v, "\"timeout\""), "  history: timeout (%s)", l ? v : "");
	ok(l && tlib_json_field(l, "output", v, sizeof v) && strstr(v, "; ended: cancelled (timeout)"),
	   "  output: the batches done, and why it ended (%s)", l ? v : "");
	ok(ms < 4000, "  the whole run took %llu ms", (unsigned long long)ms);
	free(l);

	/* SIGTERM to the supervisor mid-stream: running items get shutdownGraceSeconds (1) to end, then
	 * the cancel (shutdown) */
	snprintf(rec, sizeof rec, "%s/forever.rec", t.dir);
	const char *a4[] = { "--run", "forever", NULL };
	tsup_start(&t, a4);
	int going = wait_processed(rec, 3, 5000);
	ok(going, "a stream without end is going (3 batches processed)");
	tsup_wait_taken(&t, SIGTERM, 3000);
	t0 = tlib_now_ms();
	tsup_stop(&t, SIGTERM, 5000);
	ms = tlib_now_ms() - t0;
	ok(t.reaped && ms >= 900 && ms < 2500, "SIGTERM to the supervisor: it exits after the grace second (%llu ms)",
	   (unsigned long long)ms);
	int nf = tsup_count_lines(rec, "fetch "), np = tsup_count_lines(rec, "process ");
	struct timespec ts = { 0, 200000000 };
	nanosleep(&ts, NULL);
	ok(tsup_count_lines(rec, "fetch ") == nf && np >= 3 && nf <= np + 1,
	   "  the stream stopped: no fetch after it (%d fetches, %d processes)", nf, np);
	l = tsup_history_line(hist, "forever", -1, 1);
	ok(l && tlib_json_field(l, "outcome", v, sizeof v) && !strcmp(v, "\"cancelled\"") && tlib_json_field(l, "output", v, sizeof v) &&
	   strstr(v, "; ended: cancelled (stop: the supervisor stopping, the job shut down or its server disabled)"), "  history: cancelled, saying why (%s)", l ? v : "");
	free(l);
}

/* An external worker serving a dataflow job (no native.library): the same loop, ejob_dataflow,
 * here with libflow's functions taken by dlsym, as any program may link its own. */
static _Noreturn void external_worker(const char *sock)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	void *pf = h ? dlsym(h, "flow_fetch") : NULL, *pp = h ? dlsym(h, "flow_process") : NULL;
	if (!pf || !pp) _exit(3);
	ejob_fetch_fn *fetch;
	ejob_process_fn *process;
	memcpy(&fetch, &pf, sizeof fetch);
	memcpy(&process, &pp, sizeof process);
	const char *jobs[] = { "xflow", NULL };
	struct ejob_attach_opts o = { .socket_path = sock, .jobs = jobs, .slots = 1, .name = "flow-worker" };
	ejob_worker *w;
	ejob_slot *sl;
	const ejob_context *ctx;
	char err[512];
	if (ejob_attach(&o, &w, err, sizeof err) < 0 || ejob_bind(w, 0, &sl) < 0) _exit(4);
	int r;
	while ((r = ejob_next(sl, 10000, &ctx)) == 1) {
		int code;
		int st = ejob_dataflow(ctx, fetch, process, NULL, &code, err, sizeof err);
		if (ejob_done(sl, st, code, 0, err) < 0) _exit(5);
	}
	ejob_detach(w);
	_exit(r < 0 && errno == ESHUTDOWN ? 0 : 6);
}

static void test_external(void)
{
	struct tsup t;
	char yaml[2048], v[1200], rec[700], hist[700];
	snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t80x}\n"
	         "supervisor: {workers: 1, attachSocket: \"@SOCK@\", history: {file: \"@DIR@/hist.jsonl\"}}\n"
	         "jobs:\n"
	         "  xflow:\n    type: dataflow\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 2\n"
	         "    jobParameter: \"@DIR@/x.rec 3 0 0 0\"\n"
	         "    props: {streaming.process: 'true', dataflow.batch.bytes: '4096'}\n");
	tsup_config(&t, "ext", yaml);
	snprintf(rec, sizeof rec, "%s/x.rec", t.dir);
	snprintf(hist, sizeof hist, "%s/hist.jsonl", t.dir);
	const char *args[] = { "--run", "xflow", NULL };
	tsup_start(&t, args);
	ok(tsup_wait_listening(&t, 5000), "a dataflow job without native.library: the supervisor waits for workers");
	pid_t w = tlib_fork();
	if (w == 0) external_worker(t.sock);
	int st = tsup_stop(&t, 0, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "an external worker calling ejob_dataflow serves it: exit 0 (%d)", st);
	ok(tsup_count_lines(rec, "fetch ") == 8 && tsup_count_lines(rec, "process ") == 6 &&
	   tsup_count_lines(rec, "fetch ") == tsup_count_lines(rec, " 4096"),
	   "  2 items streamed to the empty fetch with the job's bound (%d fetches, %d processes)",
	   tsup_count_lines(rec, "fetch "), tsup_count_lines(rec, "process "));
	char *l = tsup_history_line(hist, "xflow", -1, 1);
	ok(l && tlib_json_field(l, "output", v, sizeof v) && !strcmp(v, "\"3 batches, 306 bytes; ended: empty fetch\"") &&
	   strstr(l, "\"where\":\"attach:"), "  history: its output, from the attachment (%s)", l ? v : "no record");
	free(l);
	int wst = 0;
	waitpid(w, &wst, 0);
	tlib_untrack(w);
	ok(WIFEXITED(wst) && WEXITSTATUS(wst) == 0, "  the worker leaves when the supervisor stops (0x%x)", wst);
}

/* ---- in a cluster: the server disabled mid-stream ---------------------------------------------- */

static struct tzk_server zk;

static void test_cluster(void)
{
	if (tzk_wait_ready(&zk, 30000) < 0) BAIL_OUT("ZooKeeper did not start (see above)");
	struct tzkup u;
	tzkup_on(&u, zk.connect, "t80", 2000);
	static struct tsup a;
	char jobs[8192], rec[700], hist[700], v[1200];
	snprintf(jobs, sizeof jobs,
	         "  endless:\n    type: dataflow\n    cron: \"0/1 * * * * ?\"\n    shardingTotalCount: 1\n"
	         "    jobParameter: \"@DIR@/endless.rec 1000000 20 0 0\"\n"
	         "    props: {native.library: \"%s\", native.fetch: flow_fetch, native.process: flow_process,\n"
	         "            streaming.process: 'true'}\n", lib);
	tzkup_config(&u, &a, "cluster", "workers: 2, killGraceSeconds: 1, history: {file: \"@DIR@/hist.jsonl\"}", jobs);
	snprintf(rec, sizeof rec, "%s/endless.rec", a.dir);
	snprintf(hist, sizeof hist, "%s/hist.jsonl", a.dir);
	tzkup_run(&u, &a, "127.0.0.2");
	char *cfg = NULL;
	ok(tzk_wait_exists(u.zh, "/t80/endless/config", 1, 15000) && tzk_get(u.zh, "/t80/endless/config", &cfg, NULL) == ZOK &&
	   cfg && strstr(cfg, "  ejob.type: dataflow\n") && strstr(cfg, "  native.fetch: flow_fetch\n") &&
	   strstr(cfg, "  streaming.process: 'true'\n"), "its config node: ejob.type dataflow, the props as written");
	free(cfg);
	char *root = NULL;
	tzk_get(u.zh, "/t80/endless", &root, NULL);
	is_str(root, "DATAFLOW", "its root node says DATAFLOW, the name ElasticJob's JobType gives it");
	free(root);
	ok(wait_processed(rec, 3, 15000), "a fire starts a stream without end");
	uint64_t t0 = tlib_now_ms();
	ok(tzk_set(u.zh, "/t80/endless/servers/127.0.0.2", "DISABLED") == ZOK, "the server is disabled (servers/{ip})");
	char *l = NULL;
	while (tlib_now_ms() - t0 < 5000 && !(l = tsup_history_line(hist, "endless", -1, 1))) {
		struct timespec ts = { 0, 20000000 };
		nanosleep(&ts, NULL);
	}
	uint64_t ms = tlib_now_ms() - t0;
	ok(l && tlib_json_field(l, "outcome", v, sizeof v) && !strcmp(v, "\"cancelled\""), "  the stream ends, cancelled (%s)",
	   l ? v : "no record");
	ok(l && ms < 2000, "  within %llu ms", (unsigned long long)ms);
	ok(l && tlib_json_field(l, "output", v, sizeof v) &&
	   strstr(v, "; ended: cancelled (stop: the supervisor stopping, the job shut down or its server disabled)"),
	   "  its output says why (%s)", l ? v : "");
	free(l);
	int n = tsup_count_lines(rec, "fetch ");
	struct timespec ts = { 0, 300000000 };
	nanosleep(&ts, NULL);
	ok(tsup_count_lines(rec, "fetch ") == n, "  and no fetch follows (%d)", n);
	int st = tsup_stop(&a, SIGTERM, 10000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the supervisor stops cleanly (%d)", st);
	tzkup_end(&u);
}

int main(void)
{
	tlib_init(60);
	/* ZooKeeper's JVM starts while the other cases run */
	if (tzk_spawn(&zk, "zk", &(struct tzk_opts){ .tick_ms = 200 }) < 0) BAIL_OUT("cannot start ZooKeeper");
	snprintf(dir, sizeof dir, "%s", tlib_tmpdir());
	if (!realpath(BUILT("t/native/libflow.so"), lib)) BAIL_OUT(BUILT("t/native/libflow.so") ": %s", strerror(errno));
	char logpath[4200];
	snprintf(logpath, sizeof logpath, "%s/worker.log", dir);
	plan(57);

	test_direct();
	struct twork t;
	twork_init(&t, 1, logpath);
	twork_spawn(&t, 0);
	test_worker(&t);
	twork_fini(&t);
	test_supervisor();
	test_external();
	test_cluster();

	char *log = twork_slurp(logpath, NULL);
	ok(log && !strstr(log, "Sanitizer") && !strstr(log, "runtime error:"), "no sanitizer report in the worker log");
	free(log);
	return done_testing();
}
