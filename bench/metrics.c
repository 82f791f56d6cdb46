/* bench/metrics.c: how long one scrape of /metrics takes with 10,000 jobs, against the
 * alternatives, in one run on one machine.
 *
 * The page is built on the supervisor's loop (supervisor/obs/httpd.c calls metrics_page from its
 * libmicrohttpd callback on the loop), so its time is time the loop does nothing else. The bench
 * counts what fire.c counts (metrics_fire, metrics_item, metrics_lateness) for N job names, with a
 * snapshot hook that reports ZooKeeper mode and a job table of N jobs this instance leads (the
 * most series a supervisor shows: one in a single-instance cluster leads every job), then times
 * metrics_page("/metrics"):
 *
 *   10,000 jobs         per scrape (median), bytes, and per job
 *   10 jobs             the same page with 10 jobs: the fixed part, and the per-job cost
 *   plain snprintf      the same per-job series (fires, items by outcome, leader) formatted with
 *                       one snprintf per series into a buffer sized once: the floor for this text
 *   /status             the JSON page, which lists every job too
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/frame.h"
#include "ipc/wait.h"
#include "supervisor/base/log.h"
#include "supervisor/obs/metrics.h"

static struct {
	size_t njobs;
	char (*names)[48];
} B;

static uint64_t now_ns(void) { return wait_now_ns(); }

static void snap(void *arg, struct metrics_snapshot *s)
{
	(void)arg;
	s->instance = "10.0.0.1@-@4242";
	s->zk = 1;
	s->now_ns = now_ns();
	s->wall_ns = wait_realtime_ns();
	s->cs.connected = s->cs.ever_connected = 1;
	s->cs.jobs = s->cs.registered = (uint32_t)B.njobs;
	s->cs.lease_ns = s->now_ns + 10000000000ull;
	s->workers = s->pool.ready = 8;
	s->sub_slots = s->comp_slots = 1024;
	s->nsinks = 1;
	s->sinks[0].name = "history";
}

static int job_at(void *arg, size_t i, struct coord_job *out)
{
	(void)arg;
	if (i >= B.njobs) return -1;
	memset(out, 0, sizeof *out);
	out->name = B.names[i];
	out->registered = out->leader = 1;
	out->total = 10;
	out->epoch = 1;
	return 0;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* median ms of reps calls of metrics_page(path); *bytes: the page's size */
static double scrape(metrics_t *m, const char *path, int reps, size_t *bytes)
{
	double *t = calloc((size_t)reps, sizeof *t);
	if (!t) exit(1);
	for (int r = 0; r < reps; r++) {
		char *body;
		const char *ctype;
		uint64_t t0 = now_ns();
		int code = metrics_page(m, path, &body, bytes, &ctype);
		t[r] = (double)(now_ns() - t0) / 1e6;
		if (code != 200 || !body) {
			fprintf(stderr, "bench/metrics: %s answered %d\n", path, code);
			exit(1);
		}
		free(body);
	}
	qsort(t, (size_t)reps, sizeof *t, cmpd);
	double med = t[reps / 2];
	free(t);
	return med;
}

static metrics_t *build(size_t njobs)
{
	static const struct metrics_hooks mh = { .snapshot = snap, .job_at = job_at };
	B.njobs = njobs;
	metrics_t *m = metrics_new(&mh, NULL);
	events_t *e = events_new("10.0.0.1@-@1");   /* taps only: no thread */
	if (!m || !e || metrics_subscribe(m, e) < 0) exit(1);
	for (size_t i = 0; i < njobs; i++) {
		struct event ev = { .type = EVT_FIRE_STARTED, .job = B.names[i] };
		events_emit(e, &ev);
		for (uint32_t k = 0; k < 10; k++) {
			struct event st = { .type = EVT_ITEM_STARTED, .job = B.names[i], .late = k == 0, .late_ms = i % 50 };
			events_emit(e, &st);
			struct event en = { .type = EVT_ITEM_ENDED, .job = B.names[i], .final = 1, .duration_us = 1000u + k,
			                    .status = k == 3 && i % 10 == 0 ? FRAME_ST_FAILED : FRAME_ST_OK };
			events_emit(e, &en);
		}
	}
	events_free(e);
	return m;
}

/* the per-job series of the page, one snprintf each, into a buffer sized once; bytes written */
static size_t plain(char *buf, size_t cap)
{
	size_t off = 0;
	for (size_t i = 0; i < B.njobs; i++) {
		int k = snprintf(buf + off, cap - off, "ejob_fires_total{job_name=\"%s\"} %" PRIu64 "\n", B.names[i],
		                 (uint64_t)1);
		if (k < 0 || (size_t)k >= cap - off) exit(1);
		off += (size_t)k;
	}
	for (size_t i = 0; i < B.njobs; i++) {
		int k = snprintf(buf + off, cap - off, "ejob_items_total{job_name=\"%s\",outcome=\"%s\"} %" PRIu64 "\n",
		                 B.names[i], "ok", (uint64_t)(i % 10 ? 10 : 9));
		if (k < 0 || (size_t)k >= cap - off) exit(1);
		off += (size_t)k;
		if (i % 10) continue;
		k = snprintf(buf + off, cap - off, "ejob_items_total{job_name=\"%s\",outcome=\"%s\"} %" PRIu64 "\n", B.names[i],
		             "failed", (uint64_t)1);
		if (k < 0 || (size_t)k >= cap - off) exit(1);
		off += (size_t)k;
	}
	for (size_t i = 0; i < B.njobs; i++) {
		int k = snprintf(buf + off, cap - off, "ejob_leader{job_name=\"%s\"} 1\n", B.names[i]);
		if (k < 0 || (size_t)k >= cap - off) exit(1);
		off += (size_t)k;
	}
	return off;
}

int main(int argc, char **argv)
{
	size_t NJOBS = 10000;
	int REPS = 31;
	if (argc > 1 && !strcmp(argv[1], "--quick")) REPS = 7;
	log_init("bench/metrics");
	log_set_level(LL_WARN);
	B.names = calloc(NJOBS, sizeof *B.names);
	if (!B.names) return 1;
	for (size_t i = 0; i < NJOBS; i++) snprintf(B.names[i], sizeof B.names[i], "orders-settlement-job-%05zu", i);

	metrics_t *small = build(10);
	size_t sbytes;
	scrape(small, "/metrics", 5, &sbytes);      /* warm-up */
	double sms = scrape(small, "/metrics", REPS * 10, &sbytes);

	metrics_t *m = build(NJOBS);
	size_t bytes, jbytes;
	scrape(m, "/metrics", 3, &bytes);
	double ms = scrape(m, "/metrics", REPS, &bytes);
	double jms = scrape(m, "/status", REPS, &jbytes);

	size_t cap = bytes * 2;
	char *buf = malloc(cap);
	if (!buf) return 1;
	double *t = calloc((size_t)REPS, sizeof *t);
	size_t pbytes = 0;
	for (int r = 0; r < REPS; r++) {
		uint64_t t0 = now_ns();
		pbytes = plain(buf, cap);
		t[r] = (double)(now_ns() - t0) / 1e6;
	}
	qsort(t, (size_t)REPS, sizeof *t, cmpd);
	double pms = t[REPS / 2];

	double per_job_us = (ms - sms) * 1e3 / (double)(NJOBS - 10);
	printf("| measure (on the loop: the page blocks it this long) | ejob | alternative | ratio | target |\n");
	printf("|---|---|---|---|---|\n");
	printf("| /metrics, %zu jobs (each fired, led here), one scrape, median of %d | %.2f ms, %zu bytes | 10 jobs: %.3f ms, %zu bytes | %.2f us per job | <= a few ms |\n",
	       NJOBS, REPS, ms, bytes, sms, sbytes, per_job_us);
	printf("| /metrics, %zu jobs, against its per-job series formatted by plain snprintf | %.2f ms | snprintf: %.2f ms, %zu bytes | %.1fx | |\n",
	       NJOBS, ms, pms, pbytes, ms / pms);
	printf("| /status (JSON), %zu jobs, one request | %.2f ms, %zu bytes | | | |\n", NJOBS, jms, jbytes);
	free(t);
	free(buf);
	metrics_free(m);
	metrics_free(small);
	free(B.names);
	return 0;
}
