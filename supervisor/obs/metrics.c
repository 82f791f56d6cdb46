/* supervisor/obs/metrics.c: the counters, and /metrics, /healthz, /status built from them (metrics.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipc/frame.h"
#include "ipc/wait.h"
#include "supervisor/base/log.h"
#include "supervisor/obs/metrics.h"
#include "supervisor/run/listen.h"

/* ---- counters ------------------------------------------------------------------------------- */

#define NBUCKETS 1024u

/* why a fire time ran nothing here (events.h EVT_FIRE_SKIPPED's reasons): a fixed set, so that
 * the label is bounded; anything else is "other" */
static const char *const skip_reasons[] = {
	"disabled", "shut", "not_connected", "not_registered", "no_assignment", "running_nodes", "still_running",
	"late", "clock", "clock_unknown", "listener", "not_allowed", "other",
};
#define NSKIP (sizeof skip_reasons / sizeof skip_reasons[0])

/* listener commands (EVT_LISTENER's reason) */
static const char *const listener_kinds[] = { "before", "after", "beforeAll", "afterAll" };
#define NKINDS (sizeof listener_kinds / sizeof listener_kinds[0])

struct mjob {                   /* one job's counters: created at its first fire here */
	struct mjob *next;          /* hash chain */
	struct mjob *order;         /* every job, in order of creation (the page's order) */
	uint64_t fires;
	uint64_t items[FRAME_ST__COUNT];   /* final outcomes */
	uint64_t skipped[NSKIP];
	uint64_t listener[NKINDS][LISTEN__COUNT];   /* listener commands ended: [listener_kinds][result] */
	char name[];
};

/* the recent events that are not a fire's or an item's, for /status */
#define NRECENT 64u

struct recent {
	enum event_type type;
	uint64_t at_ms;             /* wall clock */
	uint64_t fire_ms, epoch;
	uint32_t item, count;
	char *job, *reason, *detail;
};

static const double dur_le[] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600 };
static const double late_le[] = { 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60 };
#define NDUR (sizeof dur_le / sizeof dur_le[0])
#define NLATE (sizeof late_le / sizeof late_le[0])

struct hist {
	uint64_t count;
	double sum;
	uint64_t le[16];            /* non-cumulative: le[i] counts (le_{i-1}, le_i] */
};

struct metrics {
	struct metrics_hooks h;
	void *arg;
	struct mjob *buckets[NBUCKETS];
	struct mjob *first, *last;
	uint64_t retries;           /* attempts that ended and run again */
	struct hist dur, late;
	struct recent recent[NRECENT];
	uint64_t nrecent;           /* ever: the newest is recent[(nrecent - 1) % NRECENT] */
};

metrics_t *metrics_new(const struct metrics_hooks *h, void *arg)
{
	metrics_t *m = calloc(1, sizeof *m);
	if (!m) return NULL;
	m->h = *h;
	m->arg = arg;
	return m;
}

static void recent_clear(struct recent *r)
{
	free(r->job);
	free(r->reason);
	free(r->detail);
	memset(r, 0, sizeof *r);
}

void metrics_free(metrics_t *m)
{
	if (!m) return;
	for (unsigned i = 0; i < NRECENT; i++) recent_clear(&m->recent[i]);
	for (struct mjob *j = m->first, *n; j; j = n) {
		n = j->order;
		free(j);
	}
	free(m);
}

static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u;       /* FNV-1a */
	for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static struct mjob *job(metrics_t *m, const char *name)
{
	struct mjob **b = &m->buckets[hash(name) & (NBUCKETS - 1)];
	for (struct mjob *j = *b; j; j = j->next)
		if (!strcmp(j->name, name)) return j;
	size_t l = strlen(name) + 1;
	struct mjob *j = calloc(1, sizeof *j + l);
	if (!j) return NULL;            /* not counted: a page shows less, nothing else is lost */
	memcpy(j->name, name, l);
	j->next = *b;
	*b = j;
	if (m->last) m->last->order = j;
	else m->first = j;
	m->last = j;
	return j;
}

static void observe(struct hist *h, const double *le, size_t n, double v)
{
	h->count++;
	h->sum += v;
	for (size_t i = 0; i < n; i++)
		if (v <= le[i]) {
			h->le[i]++;
			return;
		}
}

static void count_item(metrics_t *m, const char *name, uint32_t status, int final, uint64_t duration_us)
{
	observe(&m->dur, dur_le, NDUR, (double)duration_us / 1e6);
	if (!final) {
		m->retries++;
		return;
	}
	struct mjob *j = job(m, name);
	if (j && status < FRAME_ST__COUNT) j->items[status]++;
}

static char *dup_or_null(const char *s)
{
	return s && s[0] ? strdup(s) : NULL;   /* lost to a lack of memory: the entry shows less */
}

static void keep_recent(metrics_t *m, const struct event *ev)
{
	struct recent *r = &m->recent[m->nrecent++ % NRECENT];
	recent_clear(r);
	r->type = ev->type;
	r->at_ms = wait_realtime_ns() / 1000000u;
	r->fire_ms = ev->fire_ms;
	r->epoch = ev->epoch;
	r->item = ev->item;
	r->count = ev->count;
	r->job = dup_or_null(ev->job);
	r->reason = dup_or_null(ev->reason);
	r->detail = dup_or_null(ev->detail);
}

/* the tap: every count comes from the events, on the loop */
static void on_event(void *arg, const struct event *ev)
{
	metrics_t *m = arg;
	struct mjob *j;
	switch (ev->type) {
	case EVT_FIRE_STARTED:
		if ((j = job(m, ev->job))) j->fires++;
		break;
	case EVT_ITEM_STARTED:
		if (ev->late) observe(&m->late, late_le, NLATE, (double)ev->late_ms / 1e3);
		break;
	case EVT_ITEM_ENDED:
		count_item(m, ev->job, ev->status, ev->final, ev->duration_us);
		break;
	case EVT_FIRE_SKIPPED: {
		size_t k = 0;
		while (k + 1 < NSKIP && (!ev->reason || strcmp(ev->reason, skip_reasons[k]))) k++;
		if ((j = job(m, ev->job))) j->skipped[k] += ev->count ? ev->count : 1;
		keep_recent(m, ev);
		break;
	}
	case EVT_LISTENER:
		for (size_t k = 0; k < NKINDS; k++)
			if (ev->reason && !strcmp(ev->reason, listener_kinds[k]) && ev->status < LISTEN__COUNT &&
			    (j = job(m, ev->job)))
				j->listener[k][ev->status]++;
		if (ev->status != LISTEN_OK) keep_recent(m, ev);
		break;
	default:
		keep_recent(m, ev);
		break;
	}
}

int metrics_subscribe(metrics_t *m, events_t *e)
{
	unsigned all = 0;
	for (unsigned t = 1; t < EVT__COUNT; t++) all |= 1u << t;
	return events_tap(e, all & ~(1u << EVT_FIRE_ENDED), on_event, m);
}

/* ---- a page in memory ----------------------------------------------------------------------- */

struct buf {
	char *p;
	size_t n, cap;
	int oom;
};

/* room for n more bytes and a NUL; 0, or -1 (oom set) */
static int grow(struct buf *b, size_t n)
{
	if (b->oom) return -1;
	if (b->p && b->n + n < b->cap) return 0;
	size_t cap = b->cap ? b->cap * 2 : 65536;
	while (cap < b->n + n + 1) cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

__attribute__((format(printf, 2, 3))) static void bp(struct buf *b, const char *fmt, ...)
{
	for (;;) {
		if (b->oom) return;
		va_list ap;
		va_start(ap, fmt);
		int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
		va_end(ap);
		if (k < 0) {
			b->oom = 1;
			return;
		}
		if (b->p && b->n + (size_t)k < b->cap) {
			b->n += (size_t)k;
			return;
		}
		if (grow(b, (size_t)k) < 0) return;
	}
}

static void bput(struct buf *b, const char *s, size_t n)
{
	if (grow(b, n) < 0) return;
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

/* a label value or a JSON string's content: \, " and control bytes escaped (both formats agree
 * on \\, \" and \n; JSON's others as \u00XX, which Prometheus never sees: job names have none) */
static void besc(struct buf *b, const char *s)
{
	while (*s) {
		/* the run that needs no escape goes in one copy (a job name is all of it): formatting
		 * byte by byte made a 10,000-job page take 19 ms of the loop */
		size_t run = 0;
		while (s[run] && s[run] != '\\' && s[run] != '"' && (unsigned char)s[run] >= 0x20) run++;
		bput(b, s, run);
		s += run;
		if (!*s) break;
		unsigned char c = (unsigned char)*s++;
		if (c == '\\' || c == '"') bp(b, "\\%c", c);
		else if (c == '\n') bp(b, "\\n");
		else bp(b, "\\u%04x", c);
	}
}

static void head(struct buf *b, const char *name, const char *type, const char *help)
{
	bp(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void hist(struct buf *b, const char *name, const char *help, const struct hist *h, const double *le, size_t n)
{
	head(b, name, "histogram", help);
	uint64_t cum = 0;
	for (size_t i = 0; i < n; i++) {
		cum += h->le[i];
		bp(b, "%s_bucket{le=\"%g\"} %" PRIu64 "\n", name, le[i], cum);
	}
	bp(b, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n%s_sum %.6f\n%s_count %" PRIu64 "\n", name, h->count, name, h->sum,
	   name, h->count);
}

static void one(struct buf *b, const char *name, const char *type, const char *help, double v)
{
	head(b, name, type, help);
	bp(b, "%s %.17g\n", name, v);
}

static void render_metrics(metrics_t *m, const struct metrics_snapshot *s, struct buf *b)
{
	head(b, "ejob_fires_total", "counter", "Fires that queued items on this supervisor, by job.");
	for (const struct mjob *j = m->first; j; j = j->order) {
		if (!j->fires) continue;
		bp(b, "ejob_fires_total{job_name=\"");
		besc(b, j->name);
		bp(b, "\"} %" PRIu64 "\n", j->fires);
	}
	head(b, "ejob_items_total", "counter", "Items ended here with their final outcome (after retries), by job and "
	     "outcome.");
	for (const struct mjob *j = m->first; j; j = j->order)
		for (uint32_t st = 0; st < FRAME_ST__COUNT; st++) {
			if (!j->items[st] && st != FRAME_ST_OK) continue;
			bp(b, "ejob_items_total{job_name=\"");
			besc(b, j->name);
			bp(b, "\",outcome=\"%s\"} %" PRIu64 "\n", frame_status_name(st), j->items[st]);
		}
	head(b, "ejob_fires_skipped_total", "counter", "Fire times that ran nothing here, by job and reason (disabled, "
	     "not_connected, no_assignment, still_running, late, ...).");
	for (const struct mjob *j = m->first; j; j = j->order)
		for (size_t k = 0; k < NSKIP; k++) {
			if (!j->skipped[k]) continue;
			bp(b, "ejob_fires_skipped_total{job_name=\"");
			besc(b, j->name);
			bp(b, "\",reason=\"%s\"} %" PRIu64 "\n", skip_reasons[k], j->skipped[k]);
		}
	head(b, "ejob_listener_runs_total", "counter", "Listener commands (ejob.listener.before, after, beforeAll, "
	     "afterAll) ended here, by job, kind and result (ok, failed, timeout).");
	for (const struct mjob *j = m->first; j; j = j->order)
		for (size_t k = 0; k < NKINDS; k++)
			for (int r = 0; r < LISTEN__COUNT; r++) {
				if (!j->listener[k][r]) continue;
				bp(b, "ejob_listener_runs_total{job_name=\"");
				besc(b, j->name);
				bp(b, "\",kind=\"%s\",result=\"%s\"} %" PRIu64 "\n", listener_kinds[k],
				   listen_result_name((enum listen_result)r), j->listener[k][r]);
			}
	one(b, "ejob_item_retries_total", "counter", "Attempts that ended without success and run again.",
	    (double)m->retries);
	hist(b, "ejob_item_duration_seconds", "Duration of each attempt of an item, every job.", &m->dur, dur_le, NDUR);
	hist(b, "ejob_fire_lateness_seconds", "From a scheduled fire's time to the start of its first item here.",
	     &m->late, late_le, NLATE);

	head(b, "ejob_workers", "gauge", "Pool workers by state.");
	bp(b, "ejob_workers{state=\"ready\"} %" PRIu32 "\nejob_workers{state=\"starting\"} %" PRIu32 "\n"
	   "ejob_workers{state=\"respawning\"} %" PRIu32 "\nejob_workers{state=\"stopped\"} %" PRIu32 "\n",
	   s->pool.ready, s->pool.starting, s->pool.waiting, s->pool.idle);
	one(b, "ejob_worker_respawns_total", "counter", "Pool workers started again after one died.",
	    (double)s->pool.respawns);
	one(b, "ejob_items_running", "gauge", "Items published to a worker and not ended.", s->running);
	one(b, "ejob_items_queued", "gauge", "Items queued here, not yet published.", s->queued);
	head(b, "ejob_ring_slots_used", "gauge", "Slots taken in the pool's shared-memory rings.");
	bp(b, "ejob_ring_slots_used{ring=\"submission\"} %" PRIu64 "\nejob_ring_slots_used{ring=\"completion\"} %" PRIu64
	   "\n", s->sub_used, s->comp_used);
	head(b, "ejob_ring_slots", "gauge", "Slots of the pool's shared-memory rings.");
	bp(b, "ejob_ring_slots{ring=\"submission\"} %" PRIu64 "\nejob_ring_slots{ring=\"completion\"} %" PRIu64 "\n",
	   s->sub_slots, s->comp_slots);
	head(b, "ejob_events_dropped_total", "counter", "Execution events a sink lost because its queue was full.");
	for (size_t i = 0; i < s->nsinks; i++) {
		bp(b, "ejob_events_dropped_total{sink=\"");
		besc(b, s->sinks[i].name);
		bp(b, "\"} %" PRIu64 "\n", s->sinks[i].dropped);
	}
	head(b, "ejob_events_lost_total", "counter", "Records a sink could not write (the history file could not be "
	     "opened or written).");
	for (size_t i = 0; i < s->nsinks; i++) {
		bp(b, "ejob_events_lost_total{sink=\"");
		besc(b, s->sinks[i].name);
		bp(b, "\"} %" PRIu64 "\n", s->sinks[i].lost);
	}

	head(b, "ejob_error_handler_messages_total", "counter", "Messages of the jobs' error handlers "
	     "(jobErrorHandlerType) for failed items, by handler and result (sent, failed, dropped).");
	for (int t = CONF_ERRH_DINGTALK; t < CONF_ERRH__COUNT; t++)
		for (int r = 0; r < ERRH__RESULTS; r++)
			bp(b, "ejob_error_handler_messages_total{type=\"%s\",result=\"%s\"} %" PRIu64 "\n",
			   conf_errh_type_name((conf_errh_type_t)t), errh_result_name((enum errh_result)r), s->errh[t][r]);

	if (s->zk) {
		const struct coord_stats *st = &s->st;
		one(b, "ejob_zookeeper_requests_total", "counter", "ZooKeeper requests sent.", (double)st->requests);
		one(b, "ejob_zookeeper_request_errors_total", "counter", "ZooKeeper requests that failed without the "
		    "server's answer (connection lost, session expired).", (double)st->errors);
		head(b, "ejob_zookeeper_session_state", "gauge", "The ZooKeeper session's state (1: this one).");
		static const char *const names[] = { "connecting", "connected", "expired", "auth_failed" };
		for (int k = 0; k < 4; k++)
			bp(b, "ejob_zookeeper_session_state{state=\"%s\"} %d\n", names[k], (int)st->session == k);
		one(b, "ejob_zookeeper_session_expirations_total", "counter", "ZooKeeper sessions found expired.",
		    (double)st->expirations);
		double left = s->cs.lease_ns > s->now_ns ? (double)(s->cs.lease_ns - s->now_ns) / 1e9 : 0;
		one(b, "ejob_lease_headroom_seconds", "gauge", "Time the session surely lives even if ZooKeeper is not "
		    "heard from again (0: none).", left);
		one(b, "ejob_jobs", "gauge", "Jobs of the configuration that register here.", s->cs.jobs);
		one(b, "ejob_jobs_registered", "gauge", "Of them, registered in the current session.", s->cs.registered);
		one(b, "ejob_failovers_total", "counter", "Items of a crashed instance taken over here.",
		    (double)st->failovers);
		one(b, "ejob_misfires_total", "counter", "Items found still running at their next fire (misfire flag set).",
		    (double)st->misfires);
		one(b, "ejob_leader_jobs", "gauge", "Jobs this instance leads.", st->leader_of);
		head(b, "ejob_leader", "gauge", "1 for each job this instance leads (no series for the others).");
		struct coord_job cj;
		int r;
		for (size_t i = 0; m->h.job_at && (r = m->h.job_at(m->arg, i, &cj)) >= 0; i++) {
			if (r || !cj.leader) continue;
			bp(b, "ejob_leader{job_name=\"");
			besc(b, cj.name);
			bp(b, "\"} 1\n");
		}
	}
}

int metrics_health(const struct metrics_snapshot *s, char *why, size_t len)
{
	if (s->stopping) {
		snprintf(why, len, "stopping");
		return 503;
	}
	if (s->zk && !s->cs.connected) {
		snprintf(why, len, "zookeeper: %s", s->cs.ever_connected ? "connection lost" : "not connected yet");
		return 503;
	}
	if (s->zk && s->cs.registered < s->cs.jobs) {
		snprintf(why, len, "zookeeper: %" PRIu32 " of %" PRIu32 " job%s registered", s->cs.registered, s->cs.jobs,
		         s->cs.jobs == 1 ? "" : "s");
		return 503;
	}
	for (size_t i = 0; i < s->nsinks; i++)
		if (s->sinks[i].failing) {
			snprintf(why, len, "%s: %s; %" PRIu64 " record%s lost", s->sinks[i].name, s->sinks[i].why,
			         s->sinks[i].lost, s->sinks[i].lost == 1 ? "" : "s");
			return 503;
		}
	if (s->zk) snprintf(why, len, "ok: connected, %" PRIu32 " job%s registered", s->cs.jobs, s->cs.jobs == 1 ? "" : "s");
	else snprintf(why, len, "ok: standalone");
	return 200;
}

static void iso(struct buf *b, uint64_t ms)
{
	time_t t = (time_t)(ms / 1000u);
	struct tm tm;
	char s[32] = "";
	if (gmtime_r(&t, &tm)) strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%S", &tm);
	bp(b, "\"%s.%03uZ\"", s, (unsigned)(ms % 1000u));
}

struct run_ctx {
	struct buf *b;
	const struct metrics_snapshot *s;
	int n;
};

static void run_json(void *arg, const struct disp_run_info *r)
{
	struct run_ctx *x = arg;
	struct buf *b = x->b;
	uint64_t age = x->s->now_ns > r->started_ns ? x->s->now_ns - r->started_ns : 0;
	uint64_t start_ms = (x->s->wall_ns - age) / 1000000u;
	bp(b, "%s{\"job\":\"", x->n++ ? "," : "");
	besc(b, r->job);
	bp(b, "\",\"item\":%" PRIu32 ",\"attempt\":%" PRIu32 ",\"fireId\":%" PRIu64 ",\"epoch\":%" PRIu64 ",\"start\":",
	   r->item, r->attempt, r->fire_id, r->epoch);
	iso(b, start_ms);
	bp(b, ",\"startMs\":%" PRIu64 ",\"where\":\"", start_ms);
	besc(b, r->target);
	bp(b, "\"}");
}

static void render_status(metrics_t *m, const struct metrics_snapshot *s, struct buf *b)
{
	char why[160];
	int code = metrics_health(s, why, sizeof why);
	bp(b, "{\"instance\":\"");
	besc(b, s->instance);
	bp(b, "\",\"healthy\":%s,\"reason\":\"", code == 200 ? "true" : "false");
	besc(b, why);
	bp(b, "\",\"stopping\":%s,\"zookeeper\":", s->stopping ? "true" : "false");
	if (s->zk) {
		static const char *const names[] = { "connecting", "connected", "expired", "auth_failed" };
		double left = s->cs.lease_ns > s->now_ns ? (double)(s->cs.lease_ns - s->now_ns) / 1e9 : 0;
		bp(b, "{\"state\":\"%s\",\"session\":\"0x%" PRIx64 "\",\"timeoutMs\":%d,\"leaseHeadroomSeconds\":%.3f,"
		   "\"jobs\":%" PRIu32 ",\"registered\":%" PRIu32 "}", names[s->st.session], (uint64_t)s->st.session_id,
		   s->st.timeout_ms, left, s->cs.jobs, s->cs.registered);
	} else {
		bp(b, "null");
	}
	bp(b, ",\"pool\":{\"workers\":%" PRIu32 ",\"ready\":%" PRIu32 ",\"starting\":%" PRIu32 ",\"respawning\":%" PRIu32
	   ",\"stopped\":%" PRIu32 ",\"respawns\":%" PRIu64 ",\"running\":%" PRIu32 ",\"queued\":%" PRIu32 "}",
	   s->workers, s->pool.ready, s->pool.starting, s->pool.waiting, s->pool.idle, s->pool.respawns, s->running,
	   s->queued);
	bp(b, ",\"leaderOf\":[");
	struct coord_job cj;
	int n = 0, r;
	for (size_t i = 0; m->h.job_at && (r = m->h.job_at(m->arg, i, &cj)) >= 0; i++) {
		if (r || !cj.leader) continue;
		bp(b, "%s\"", n++ ? "," : "");
		besc(b, cj.name);
		bp(b, "\"");
	}
	bp(b, "],\"jobs\":[");
	n = 0;
	for (size_t i = 0; m->h.job_at && (r = m->h.job_at(m->arg, i, &cj)) >= 0; i++) {
		if (r) continue;
		bp(b, "%s{\"name\":\"", n++ ? "," : "");
		besc(b, cj.name);
		bp(b, "\",\"registered\":%s,\"leader\":%s,\"shutDown\":%s,\"shardingTotalCount\":%" PRIu32 ",\"epoch\":%" PRIu64
		   "}", cj.registered ? "true" : "false", cj.leader ? "true" : "false", cj.shut ? "true" : "false", cj.total,
		   cj.epoch);
	}
	bp(b, "],\"running\":[");
	struct run_ctx x = { .b = b, .s = s };
	if (m->h.foreach_running) m->h.foreach_running(m->arg, run_json, &x);
	/* the last NRECENT events that are not a fire's or an item's, oldest first */
	bp(b, "],\"events\":[");
	uint64_t from = m->nrecent > NRECENT ? m->nrecent - NRECENT : 0;
	for (uint64_t k = from; k < m->nrecent; k++) {
		const struct recent *e = &m->recent[k % NRECENT];
		bp(b, "%s{\"at\":", k > from ? "," : "");
		iso(b, e->at_ms);
		bp(b, ",\"type\":\"%s\",\"job\":", event_type_name(e->type));
		const char *const str[] = { e->job, e->reason, e->detail };
		const char *const key[] = { "job", "reason", "detail" };
		for (int i = 0; i < 3; i++) {
			if (i) bp(b, ",\"%s\":", key[i]);
			if (!str[i]) {
				bp(b, "null");
				continue;
			}
			bp(b, "\"");
			besc(b, str[i]);
			bp(b, "\"");
		}
		bp(b, ",\"item\":%" PRIu32 ",\"count\":%" PRIu32 ",\"epoch\":%" PRIu64 ",\"fireId\":%" PRIu64 "}", e->item,
		   e->count, e->epoch, e->fire_ms);
	}
	bp(b, "]}\n");
}

int metrics_page(metrics_t *m, const char *path, char **body, size_t *len, const char **ctype)
{
	struct buf b = { 0 };
	struct metrics_snapshot s;
	memset(&s, 0, sizeof s);
	m->h.snapshot(m->arg, &s);
	int code = 200;
	if (!strcmp(path, "/metrics")) {
		*ctype = "text/plain; version=0.0.4; charset=utf-8";
		render_metrics(m, &s, &b);
	} else if (!strcmp(path, "/healthz")) {
		char why[160];
		*ctype = "text/plain; charset=utf-8";
		code = metrics_health(&s, why, sizeof why);
		bp(&b, "%s\n", why);
	} else if (!strcmp(path, "/status")) {
		*ctype = "application/json";
		render_status(m, &s, &b);
	} else {
		*ctype = "text/plain; charset=utf-8";
		code = 404;
		bp(&b, "not found: try /metrics, /healthz or /status\n");
	}
	if (b.oom) {
		free(b.p);
		log_error("metrics: out of memory building %s", path);
		*body = NULL;
		*len = 0;
		return 500;
	}
	*body = b.p;
	*len = b.n;
	return code;
}
