/* bench/serve.c: `ejobctl serve`'s GET /api/v1/jobs over 10,000 jobs, from its model of the
 * cluster (tools/ejobctl_model.h) against the baselines in the same run, on a real ZooKeeper 3.8
 * (t/lib/tzk, a 1 GB heap as bench/ctl) and a real supervisor.
 *
 * The namespace holds 10,000 jobs as two supervisors on 10.0.0.1 and 10.0.0.2 leave them (16
 * nodes each, made directly and pipelined by bench/lib/jobs, as for bench/ctl), and one real
 * supervisor running a job "beat" every second (a script that records each item's start: its
 * lateness is the start less the fire id, the scheduled time). Then:
 *   baseline      `ejobctl jobs --json` (a process, its own session: 160,000 reads), 3 times;
 *                 `ejobctl serve --no-model`: GET /api/v1/jobs, which reads the same per request, 3 times,
 *                 and GET /api/v1/servers 3 times (from ZooKeeper, as before the model answered it)
 *   model         `ejobctl serve`: the time until its model answers (X-Ejob-From: model), then
 *                 GET /api/v1/jobs one at a time (p50, p99 of 40), GET /api/v1/servers the same way,
 *                 and 100 clients at once, GET /api/v1/jobs, each
 *                 reading for 10 s (p50, p99 of every GET), each answer checked (200, from the
 *                 model, every job in it)
 *   supervisor    beat's lateness before and while the 100 clients read
 *   a pass        every job changed at once (both servers of each DISABLED, 20,000 sets made
 *                 pipelined on the bench's session, then ENABLED again): the time until the
 *                 model's GET shows every job DISABLED (then none): the watches' marks, the model's
 *                 re-read of 10,000 jobs and its swap (tools/ejobctl_model.c's pass), measured
 *                 from outside
 * and prints docs/benchmarks.md's table rows. Every process it starts is tracked by t/lib/tlib. */
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/lib/bench.h"
#include "bench/lib/jobs.h"
#include "bench/lib/serveproc.h"
#include "t/lib/tlib.h"
#include "t/lib/tzkup.h"

#define EJOBCTL BUILT("tools/ejobctl")
#define NJOBS 10000
#define CLIENTS 100
#define PER_CLIENT 400           /* at most: each client reads for LOAD_MS */
#define LOAD_MS 10000
#define SEQ 40

static struct tzk_server zk;
static struct tzkup u;
static const char *ns = "serve";

/* ---- HTTP ---- */

struct resp {
	size_t len;
	size_t jobs;                /* "\"name\":" in the body: the jobs listed */
	size_t disabled;            /* "\"status\":\"DISABLED\"" in the body */
	int model;                  /* X-Ejob-From: model */
	char tail[24];              /* the last bytes seen: a needle split between two writes */
};

static const char DIS[] = "\"status\":\"DISABLED\"";

static size_t body(char *p, size_t sz, size_t nm, void *arg)
{
	struct resp *r = arg;
	size_t n = sz * nm;
	/* count "name": (and DIS) across the chunk boundary with the kept tail */
	char buf[24 + 16384];
	for (size_t off = 0; off < n;) {
		size_t k = n - off < 16384 ? n - off : 16384;
		size_t t = strlen(r->tail);
		memcpy(buf, r->tail, t);
		memcpy(buf + t, p + off, k);
		buf[t + k] = 0;
		for (const char *q = buf; (q = strstr(q, "\"name\":")); q += 7) r->jobs++;
		for (const char *q = buf; (q = strstr(q, DIS)); q += sizeof DIS - 1) r->disabled++;
		size_t keep = t + k < sizeof DIS - 2 ? t + k : sizeof DIS - 2;
		memcpy(r->tail, buf + t + k - keep, keep);
		r->tail[keep] = 0;
		off += k;
	}
	r->len += n;
	return n;
}

static size_t header(char *p, size_t sz, size_t nm, void *arg)
{
	if (!strncasecmp(p, "X-Ejob-From: model", 18)) ((struct resp *)arg)->model = 1;
	return sz * nm;
}

/* GET path on port: its status, time (ms) and what came */
static long get(CURL *h, int port, const char *path, double *ms, struct resp *r)
{
	char url[128];
	snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
	memset(r, 0, sizeof *r);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 120L);
	uint64_t t0 = tlib_now_ms();
	long code = -1;
	if (curl_easy_perform(h) == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	*ms = (double)(tlib_now_ms() - t0);
	return code;
}

static long get_jobs(CURL *h, int port, double *ms, struct resp *r)
{
	return get(h, port, "/api/v1/jobs", ms, r);
}

/* ---- 100 clients at once ---- */

struct client {
	pthread_t th;
	int port;
	double ms[PER_CLIENT];
	int n, bad;
};

static pthread_barrier_t go;

static void *client(void *arg)
{
	struct client *c = arg;
	CURL *h = curl_easy_init();
	pthread_barrier_wait(&go);
	uint64_t end = tlib_now_ms() + LOAD_MS;
	while (c->n < PER_CLIENT && tlib_now_ms() < end) {
		struct resp r;
		long code = get_jobs(h, c->port, &c->ms[c->n++], &r);
		if (code != 200 || r.jobs < NJOBS || !r.model) c->bad++;
	}
	curl_easy_cleanup(h);
	return NULL;
}

/* ---- the supervisor's lateness ---- */

static char se[600];

/* beat's item starts with a fire id in [from_ms, to_ms): their lateness (ms) sorted in v; how many */
static int lateness(int64_t from_ms, int64_t to_ms, int64_t *v, int max)
{
	static struct tsup_rec r[4096];
	int n = tsup_read_recs(se, r, 4096), k = 0;
	for (int i = 0; i < n && k < max; i++)
		if (!strcmp(r[i].kind, "start") && r[i].extra >= from_ms && r[i].extra < to_ms)
			v[k++] = r[i].ns / 1000000 - r[i].extra;
	qsort(v, (size_t)k, sizeof *v, cmp64);
	return k;
}

static int64_t wall_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static double pctd(double *v, int n, double p)
{
	int64_t *w = malloc((size_t)n * sizeof *w);
	for (int i = 0; i < n; i++) w[i] = (int64_t)(v[i] * 1000);
	qsort(w, (size_t)n, sizeof *w, cmp64);
	double r = (double)pct(w, n, p / 100) / 1000;
	free(w);
	return r;
}

int main(void)
{
	bench_name = "bench/serve";
	tlib_init(1800);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (access(EJOBCTL, X_OK) != 0) fail(NULL, "%s is not built (run make)", EJOBCTL);
	if (tzk_start(&zk, "zk", &(struct tzk_opts){ .tick_ms = 200, .heap_mb = 1024 }, 60000) < 0) return 1;
	tzkup_on(&u, zk.connect, ns, 4000);
	uint64_t t0 = tlib_now_ms();
	jobs_make(u.zh, ns, NJOBS);
	fprintf(stderr, "%d jobs made in %.1f s\n", NJOBS, (double)(tlib_now_ms() - t0) / 1000);

	/* the supervisor: beat every second, its item's start recorded */
	char jobs[1024];
	const char *sh = tsup_rec_script();
	snprintf(se, sizeof se, "%s/beat.se", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  beat:\n    type: script\n    cron: \"* * * * * ?\"\n    shardingTotalCount: 1\n"
	         "    props: {script.command.line: \"%s %s/beat 0\"}\n", sh, tlib_tmpdir());
	struct tsup sup;
	tzkup_config(&u, &sup, "sup", "workers: 1", jobs);
	tzkup_run(&u, &sup, "127.0.0.1");
	if (!tzkup_wait_registered(&u, "beat", sup.id, 0, 30000)) fail(&sup, "the supervisor did not register beat");

	/* baseline 1: ejobctl jobs --json, 3 times */
	double cli[3];
	char outf[600];
	snprintf(outf, sizeof outf, "%s/jobs.json", tlib_tmpdir());
	for (int k = 0; k < 3; k++) {
		uint64_t a = tlib_now_ms();
		pid_t p = tlib_fork();
		if (p == 0) {
			if (!freopen(outf, "w", stdout)) _exit(127);
			execl(EJOBCTL, EJOBCTL, "jobs", "--json", "--zk", zk.connect, "--namespace", ns, "--timeout", "30", (char *)NULL);
			_exit(127);
		}
		int st;
		waitpid(p, &st, 0);
		tlib_untrack(p);
		cli[k] = (double)(tlib_now_ms() - a);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) fail(&sup, "ejobctl jobs --json failed (%d)", st);
	}
	CURL *h = curl_easy_init();
	struct resp r;
	/* baseline 2: serve without the model */
	int port;
	pid_t sp = serveproc_start(zk.connect, ns, "--no-model", &port);
	double nomodel[3];
	for (int k = 0; k < 3; k++)
		if (get_jobs(h, port, &nomodel[k], &r) != 200 || r.jobs < NJOBS || r.model)
			fail(&sup, "serve --no-model: GET /api/v1/jobs: not every job");
	/* GET /api/v1/servers (the console's Servers page): from ZooKeeper, as before the model answered it */
	double srv_nm[3];
	for (int k = 0; k < 3; k++)
		if (get(h, port, "/api/v1/servers", &srv_nm[k], &r) != 200 || r.jobs < NJOBS || r.model)
			fail(&sup, "serve --no-model: GET /api/v1/servers: not every job");
	serveproc_stop(sp);

	/* the model */
	t0 = tlib_now_ms();
	sp = serveproc_start(zk.connect, ns, NULL, &port);
	double ms;
	do {
		if (get_jobs(h, port, &ms, &r) != 200 || r.jobs < NJOBS) fail(&sup, "serve: GET /api/v1/jobs: not every job");
		if (!r.model) sleep_ms(100);
	} while (!r.model && tlib_now_ms() - t0 < 120000);
	if (!r.model) fail(&sup, "the model did not answer within 120 s");
	double built_s = (double)(tlib_now_ms() - t0) / 1000;
	double seq[SEQ];
	size_t bytes = r.len;
	for (int k = 0; k < SEQ; k++)
		if (get_jobs(h, port, &seq[k], &r) != 200 || r.jobs < NJOBS || !r.model) fail(&sup, "serve: a GET failed");
	double srv_m[SEQ];
	for (int k = 0; k < SEQ; k++)
		if (get(h, port, "/api/v1/servers", &srv_m[k], &r) != 200 || r.jobs < NJOBS || !r.model)
			fail(&sup, "serve: GET /api/v1/servers failed (or not from the model)");

	/* the supervisor before: 10 s of beats */
	int64_t q0 = wall_ms();
	sleep_ms(10000);
	int64_t q1 = wall_ms();
	static struct client cl[CLIENTS];
	pthread_barrier_init(&go, NULL, CLIENTS + 1);
	for (int i = 0; i < CLIENTS; i++) {
		cl[i].port = port;
		if (pthread_create(&cl[i].th, NULL, client, &cl[i])) fail(&sup, "pthread_create failed");
	}
	pthread_barrier_wait(&go);
	int64_t l0 = wall_ms();
	uint64_t c0 = tlib_now_ms();
	int bad = 0;
	for (int i = 0; i < CLIENTS; i++) pthread_join(cl[i].th, NULL), bad += cl[i].bad;
	double conc_s = (double)(tlib_now_ms() - c0) / 1000;
	int64_t l1 = wall_ms();
	sleep_ms(1500);             /* the last beats' records */
	static double all[CLIENTS * PER_CLIENT];
	int nall = 0;
	for (int i = 0; i < CLIENTS; i++)
		for (int k = 0; k < cl[i].n; k++) all[nall++] = cl[i].ms[k];
	int64_t lq[512], ll[512];
	int nq = lateness(q0, q1, lq, 512), nl = lateness(l0, l1, ll, 512);

	/* a pass over every job: both servers of each DISABLED, then ENABLED again */
	double pass_s[2];
	for (int k = 0; k < 2; k++) {
		uint64_t p0 = tlib_now_ms();
		jobs_servers_set(u.zh, ns, NJOBS, k ? "ENABLED" : "DISABLED");
		size_t want = k ? 0 : NJOBS;
		do {
			if (get_jobs(h, port, &ms, &r) != 200 || !r.model) fail(&sup, "serve: a GET failed");
			if (r.disabled != want) sleep_ms(50);
		} while (r.disabled != want && tlib_now_ms() - p0 < 120000);
		if (r.disabled != want) fail(&sup, "the model did not show the %zu jobs DISABLED within 120 s", want);
		pass_s[k] = (double)(tlib_now_ms() - p0) / 1000;
	}
	serveproc_stop(sp);

	double cli50 = pctd(cli, 3, 50), nm50 = pctd(nomodel, 3, 50), m50 = pctd(seq, SEQ, 50), m99 = pctd(seq, SEQ, 99);
	double c50 = pctd(all, nall, 50), c99 = pctd(all, nall, 99);
	printf("| GET /api/v1/jobs, %d jobs (%.1f MB) | p50 | p99 | vs `ejobctl jobs --json` |\n|---|--:|--:|--:|\n", NJOBS,
	       (double)bytes / 1e6);
	printf("| `ejobctl jobs --json` (baseline: 3 runs) | %.0f ms | %.0f ms | 1x |\n", cli50, pctd(cli, 3, 99));
	printf("| serve --no-model (reads ZooKeeper per request: 3) | %.0f ms | %.0f ms | %.1fx |\n", nm50,
	       pctd(nomodel, 3, 99), cli50 / nm50);
	printf("| serve, from the model (one client: %d) | %.1f ms | %.1f ms | %.0fx |\n", SEQ, m50, m99, cli50 / m50);
	printf("| serve, from the model (%d clients at once for %d s: %d GETs) | %.0f ms | %.0f ms | %.0fx |\n", CLIENTS,
	       LOAD_MS / 1000, nall, c50, c99, cli50 / c50);
	printf("\nmodel answering %.1f s after serve started (every job read, watches set; while the first GETs read "
	       "ZooKeeper); %d clients: %d GETs in %.1f s (%.0f/s), %d bad answers\n",
	       built_s, CLIENTS, nall, conc_s, nall / conc_s, bad);
	printf("supervisor (beat every second, an item's start less its fire time): before p50 %lld ms max %lld ms (%d fires); "
	       "during the %d clients p50 %lld ms max %lld ms (%d fires)\n",
	       nq ? (long long)pct(lq, nq, 0.5) : -1LL, nq ? (long long)lq[nq - 1] : -1LL, nq, CLIENTS,
	       nl ? (long long)pct(ll, nl, 0.5) : -1LL, nl ? (long long)ll[nl - 1] : -1LL, nl);
	printf("GET /api/v1/servers (%d jobs on 2 servers): --no-model (from ZooKeeper, 3) p50 %.0f ms max %.0f ms; "
	       "from the model (%d, one client) p50 %.1f ms p99 %.1f ms\n",
	       NJOBS, pctd(srv_nm, 3, 50), pctd(srv_nm, 3, 100), SEQ, pctd(srv_m, SEQ, 50), pctd(srv_m, SEQ, 99));
	printf("a change to every job (both servers DISABLED: 20,000 sets, pipelined): the model's GET shows it after %.1f s; "
	       "ENABLED again: %.1f s\n", pass_s[0], pass_s[1]);
	curl_easy_cleanup(h);
	tsup_stop(&sup, SIGTERM, 10000);
	tzk_stop(&zk, 9, 5000);
	return bad ? 1 : 0;
}
