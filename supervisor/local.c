/* supervisor/local.c: fires without ZooKeeper (local.h).
 *
 * --run JOB[:ITEMS]: one fire of one job, here and now. The supervisor exits when every item has
 * its final outcome (and its after and afterAll listeners have ended): 0 if all succeeded, else 1.
 * The items decide the exit status, whatever stopped the supervisor: a SIGINT/SIGTERM during --run
 * (a clean stop, 0, for a supervisor that schedules) exits 1 unless every item still ended ok.
 *
 * The listeners (docs/config.md "Listeners"): without ZooKeeper this process is the whole
 * cluster, so each fire here runs before, then beforeAll, then its items, then after and afterAll
 * (both started once every item has its final outcome). A failing before or beforeAll skips the
 * fire: none of its items run (a fire_skipped event, reason "listener"; --run exits 1). A fire
 * counts as running for the scheduler until its items end, its before and beforeAll included;
 * after and afterAll do not hold it (as in ZooKeeper mode). Every command still running at the
 * exit is killed (local_free). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/frame.h"
#include "ipc/wait.h"
#include "supervisor/base/log.h"
#include "supervisor/local.h"
#include "supervisor/run/listen.h"

#define READY_WAIT_NS (10ull * 1000000000ull)

/* Where a fire is: its listeners before its items run one after the other, then the items. */
enum lstep { L_BEFORE, L_BEFORE_ALL, L_ITEMS };

/* One fire here, from its before to its items' end (the fire's owner). */
struct lfire {
	local_t *l;
	struct lfire *prev, *next;  /* l->lfires */
	fire_t *f;
	sched_job_t *handle;        /* --standalone: told when it ends; NULL: --run */
	enum lstep step;
	listen_run_t *lr;           /* its before or beforeAll, running */
};

/* An after or afterAll running: the fire may be gone when it ends. */
struct lafter {
	local_t *l;
	struct lafter *prev, *next; /* l->lafters */
	uint64_t fire_ms;
	const char *kind;           /* static */
	char job[];
};

struct local {
	struct local_params p;
	sched_t *sched;             /* --standalone */
	listen_t *listen;           /* the listener commands */
	int stopping;
	fire_t *run;                /* --run: its one fire, kept until the exit */
	int external;               /* --run: the job is external */
	int run_skipped;            /* --run: a failing before or beforeAll: nothing ran */
	int run_code;               /* --run: the items' exit status, told once its after listeners ended */
	uint64_t last_wait_log_ns;
	uint64_t unserved_since_ns; /* --run, external: no worker serving the job attached since (0: one is) */
	struct lfire *lfires;       /* every fire not yet ended (--run: its one, until the exit) */
	struct lafter *lafters;
};

local_t *local_new(const struct local_params *p)
{
	local_t *l = calloc(1, sizeof *l);
	if (!l) return NULL;
	l->p = *p;
	if (!(l->listen = listen_new(p->loop))) {
		free(l);
		return NULL;
	}
	return l;
}

static void lfire_free(struct lfire *lf)
{
	local_t *l = lf->l;
	listen_cancel(lf->lr);
	if (lf->prev) lf->prev->next = lf->next;
	else l->lfires = lf->next;
	if (lf->next) lf->next->prev = lf->prev;
	fire_free(lf->f);
	free(lf);
}

static void lafter_free(struct lafter *a)
{
	local_t *l = a->l;
	if (a->prev) a->prev->next = a->next;
	else l->lafters = a->next;
	if (a->next) a->next->prev = a->prev;
	free(a);
}

void local_free(local_t *l)
{
	if (!l) return;
	/* first: every command still running is killed (their done is never called) */
	listen_free(l->listen);
	l->listen = NULL;
	while (l->lafters) lafter_free(l->lafters);
	while (l->lfires) {
		l->lfires->lr = NULL;
		lfire_free(l->lfires);
	}
	free(l);
}

void local_stop(local_t *l)
{
	l->stopping = 1;
}

void local_set_sched(local_t *l, sched_t *s)
{
	l->sched = s;
}

int local_is_run(const local_t *l)
{
	return l->run != NULL;
}

/* ---- the listeners around a fire ------------------------------------------------------------------ */

static const char *step_kind(enum lstep s)
{
	return s == L_BEFORE ? "before" : "beforeAll";
}

static void listener_event(const local_t *l, const char *job, const char *kind, uint64_t fire_ms,
                           enum listen_result r, const char *why, uint64_t us)
{
	struct event ev = { .type = EVT_LISTENER, .job = job, .fire_ms = fire_ms, .reason = kind, .detail = why,
	                    .status = (uint32_t)r, .duration_us = us };
	events_emit(fires_events(l->p.fires), &ev);
}

/* Start kind's command (cmd) for the fire, with its context: NULL when out of memory (logged). */
static listen_run_t *start(local_t *l, const fire_t *f, const conf_job_t *cj, const char *kind, const char *cmd,
                           listen_done_fn done, void *arg)
{
	int once = !strcmp(kind, "beforeAll") || !strcmp(kind, "afterAll");
	/* no ZooKeeper: epoch 0; this process is the whole cluster, so nothing is ever taken over */
	char *ctx = once ? listen_once_context_json(cj, fire_total(f), fire_id(f), 0, 0)
	                 : listen_context_json(f, cj, l->p.instance_id, 0, !strcmp(kind, "after"));
	if (!ctx) {
		log_error("job %s: fire %" PRIu64 ": out of memory building its %s listener's context", fire_job(f), fire_id(f),
		          kind);
		return NULL;
	}
	struct listen_spec s = {
		.job = fire_job(f), .kind = kind, .cmd = cmd, .context = ctx, .fire_ms = fire_id(f),
		.timeout_s = (uint32_t)cj->listener.timeout_seconds,
	};
	listen_run_t *r = listen_start(l->listen, &s, done, arg);
	free(ctx);
	return r;
}

static void after_done(void *arg, enum listen_result r, const char *why, uint64_t us)
{
	struct lafter *a = arg;
	local_t *l = a->l;
	if (r != LISTEN_OK)
		log_warn("job %s: fire %" PRIu64 ": its %s listener failed (%s)", a->job, a->fire_ms, a->kind, why);
	else
		log_debug("job %s: fire %" PRIu64 ": %s listener ok in %.2fs", a->job, a->fire_ms, a->kind, (double)us / 1e6);
	listener_event(l, a->job, a->kind, a->fire_ms, r, why, us);
	lafter_free(a);
	/* --run exits once the last of them has ended; their results do not change its status */
	if (l->run && !l->lafters) l->p.finished(l->p.arg, l->run_code);
}

/* Every item of f has its final outcome: its after and afterAll start, with the config now in
 * force (a job removed meanwhile runs none). How many started. */
static int start_afters(local_t *l, const fire_t *f)
{
	const conf_job_t *cj = l->p.job_conf(l->p.arg, fire_job(f));
	if (!cj || !fire_n(f)) return 0;
	const char *cmds[2] = { cj->listener.after, cj->listener.after_all }, *kinds[2] = { "after", "afterAll" };
	int n = 0;
	for (int k = 0; k < 2; k++) {
		if (!cmds[k]) continue;
		size_t len = strlen(fire_job(f)) + 1;
		struct lafter *a = malloc(sizeof *a + len);
		if (!a) {
			log_error("job %s: fire %" PRIu64 ": out of memory starting its %s listener", fire_job(f), fire_id(f), kinds[k]);
			continue;
		}
		a->l = l;
		a->fire_ms = fire_id(f);
		a->kind = kinds[k];
		memcpy(a->job, fire_job(f), len);
		if (!start(l, f, cj, kinds[k], cmds[k], after_done, a)) {
			free(a);
			continue;
		}
		a->prev = NULL;
		a->next = l->lafters;
		if (l->lafters) l->lafters->prev = a;
		l->lafters = a;
		n++;
	}
	return n;
}

/* The fire ends here without its items (a listener failed, the job is gone, the supervisor
 * stops): the scheduler is told; --run exits 1 (unless already stopping). */
static void lfire_skip(struct lfire *lf, int missed)
{
	local_t *l = lf->l;
	if (!lf->handle) {
		/* the fire stays for local_run_finish; a stop says itself which items never ended */
		if (l->stopping) return;
		l->run_skipped = 1;
		l->p.finished(l->p.arg, 1);
		return;
	}
	sched_t *s = l->sched;
	sched_job_t *h = lf->handle;
	lfire_free(lf);
	if (missed) sched_fire_missed(s, h);
	else sched_fire_ended(s, h);
}

static void listener_done(void *arg, enum listen_result r, const char *why, uint64_t us);

/* The fire's next step: its next listener, or its items. -1 when its items could not be queued
 * (logged; only a malformed request fails, and then all of them): the caller ends the fire. */
static int advance(struct lfire *lf)
{
	local_t *l = lf->l;
	fire_t *f = lf->f;
	const conf_job_t *cj = l->p.job_conf(l->p.arg, fire_job(f));
	if (l->stopping || !cj) {
		if (!cj) log_info("job %s: fire %" PRIu64 ": the job is no longer in the config; its items do not run",
		                  fire_job(f), fire_id(f));
		lfire_skip(lf, 0);
		return 0;
	}
	for (; lf->step < L_ITEMS; lf->step++) {
		const char *cmd = lf->step == L_BEFORE ? cj->listener.before : cj->listener.before_all;
		if (!cmd) continue;
		if (!(lf->lr = start(l, f, cj, step_kind(lf->step), cmd, listener_done, lf))) {
			struct event ev = { .type = EVT_FIRE_SKIPPED, .job = fire_job(f), .fire_ms = fire_id(f), .reason = "listener",
			                    .detail = "a listener could not start (out of memory)" };
			events_emit(fires_events(l->p.fires), &ev);
			lfire_skip(lf, 0);
		}
		return 0;
	}
	uint32_t want = fire_n(f);
	if (fire_submit(f, cj, 0) < want) return -1;
	fires_kick(l->p.fires);     /* last: the fire may end inside */
	return 0;
}

static void listener_done(void *arg, enum listen_result r, const char *why, uint64_t us)
{
	struct lfire *lf = arg;
	local_t *l = lf->l;
	fire_t *f = lf->f;
	const char *kind = step_kind(lf->step);
	lf->lr = NULL;
	listener_event(l, fire_job(f), kind, fire_id(f), r, why, us);
	if (r == LISTEN_OK) {
		log_debug("job %s: fire %" PRIu64 ": %s listener ok in %.2fs", fire_job(f), fire_id(f), kind, (double)us / 1e6);
		lf->step++;
		if (advance(lf) < 0) lfire_skip(lf, 1);
		return;
	}
	if (lf->handle) {
		char name[300];
		fire_name(f, name, sizeof name);
		log_warn("%s: its %s listener failed (%s): its %" PRIu32 " item%s do%s not run", name, kind, why, fire_n(f),
		         fire_n(f) == 1 ? "" : "s", fire_n(f) == 1 ? "es" : "");
	} else {
		log_error("--run: job %s: its %s listener (ejob.listener.%s) failed (%s): none of its %" PRIu32
		          " item%s ran", fire_job(f), kind, kind, why, fire_n(f), fire_n(f) == 1 ? "" : "s");
	}
	char d[300];
	snprintf(d, sizeof d, "the %s listener (ejob.listener.%s) failed: %s", kind, kind, why);
	struct event ev = { .type = EVT_FIRE_SKIPPED, .job = fire_job(f), .fire_ms = fire_id(f), .reason = "listener",
	                    .detail = d };
	events_emit(fires_events(l->p.fires), &ev);
	lfire_skip(lf, 0);
}

/* A fire of job, owned by a new lfire (on l's list): NULL when out of memory (logged). */
static struct lfire *lfire_new(local_t *l, const struct fire_ops *ops, const char *job, uint32_t total,
                               uint64_t fire_ms)
{
	struct lfire *lf = calloc(1, sizeof *lf);
	if (!lf || !(lf->f = fire_new(l->p.fires, ops, lf, job, total, fire_ms))) {
		if (!lf) log_error("job %s: out of memory starting a fire", job);
		free(lf);
		return NULL;
	}
	lf->l = l;
	lf->next = l->lfires;
	if (l->lfires) l->lfires->prev = lf;
	l->lfires = lf;
	return lf;
}

/* ---- --standalone: the scheduler's fires -------------------------------------------------------- */

static void sfire_name(const fire_t *f, char *buf, size_t len)
{
	char when[32];
	fire_fmt_time(fire_id(f), when, sizeof when);
	snprintf(buf, len, "job %s: fire %s", fire_job(f), when);
}

static void sfire_all_ended(fire_t *f)
{
	struct lfire *lf = fire_owner(f);
	local_t *l = lf->l;
	fire_summary(f);
	start_afters(l, f);
	sched_t *s = l->sched;
	sched_job_t *h = lf->handle;
	lfire_free(lf);
	sched_fire_ended(s, h);
}

static const struct fire_ops standalone_ops = {
	.all_ended = sfire_all_ended, .name = sfire_name, .fail_level = LL_WARN,
};

int local_fire(void *arg, const struct sched_fire_info *fi)
{
	local_t *l = arg;
	const conf_job_t *j = fi->owner;     /* sched_set_jobs hands each job's config */
	if (l->stopping) return -1;
	if (fire_kind(j) == FRAME_KIND_NONE) {
		log_error("job %s: no type (script, native, external, http or dataflow): it cannot run", j->name);
		return -1;
	}
	struct lfire *lf = lfire_new(l, &standalone_ops, j->name, j->sharding_total_count, (uint64_t)fi->fire_ms);
	if (!lf) return -1;
	fire_t *f = lf->f;
	lf->handle = fi->handle;
	fire_set_source(f, fi->catch_up ? EVS_MISFIRE : EVS_NORMAL);
	fire_stands_for(f, fi->fires_s, fi->nfires, fi->catch_up ? fi->missed : 1);
	if (fi->param) fire_set_param(f, fi->param);   /* out of memory: the job's own (no trigger here today) */
	/* without ZooKeeper every item of the job runs here */
	for (uint32_t i = 0; i < fire_total(f); i++) fire_add(f, i);
	char when[32];
	fire_fmt_time(fire_id(f), when, sizeof when);
	log_info("job %s: %s %s: %" PRIu32 " item%s", j->name, fi->catch_up ? "catch-up run for fire" : "fire", when, fire_n(f),
	         fire_n(f) == 1 ? "" : "s");
	/* last: the fire may end inside; one that cannot queue its items now counts as missed */
	if (advance(lf) < 0) {
		lfire_free(lf);
		return -1;
	}
	return 0;
}

/* ---- --run --------------------------------------------------------------------------------------- */

/* "0,2,5" or "0-3,7": items below total, each once */
static int parse_items(const char *spec, uint32_t total, uint32_t **out, uint32_t *n, char *why, size_t wl)
{
	uint8_t *seen = calloc(total, 1);
	uint32_t *v = calloc(total, sizeof *v);
	uint32_t k = 0;
	const char *p = spec;
	if (!seen || !v) goto oom;
	if (!*p) {
		snprintf(why, wl, "no items after ':'");
		goto bad;
	}
	while (*p) {
		char *end;
		errno = 0;
		unsigned long a = strtoul(p, &end, 10), b;
		if (end == p || errno || *p == '-' || *p == '+') {
			snprintf(why, wl, "'%s' is not an item number", p);
			goto bad;
		}
		b = a;
		if (*end == '-') {
			const char *q = end + 1;
			b = strtoul(q, &end, 10);
			if (end == q || errno || b < a) {
				snprintf(why, wl, "'%s' is not a range of items", p);
				goto bad;
			}
		}
		if (*end && *end != ',') {
			snprintf(why, wl, "'%s' is not an item number", p);
			goto bad;
		}
		for (unsigned long i = a; i <= b; i++) {
			if (i >= total) {
				snprintf(why, wl, "item %lu is out of range", i);
				goto bad;
			}
			if (seen[i]) {
				snprintf(why, wl, "item %lu is listed twice", i);
				goto bad;
			}
			seen[i] = 1;
			v[k++] = (uint32_t)i;
		}
		p = *end ? end + 1 : end;
		if (*end == ',' && !*p) {
			snprintf(why, wl, "a trailing ','");
			goto bad;
		}
	}
	free(seen);
	*out = v;
	*n = k;
	return 0;
oom:
	snprintf(why, wl, "out of memory");
bad:
	free(seen);
	free(v);
	return -1;
}

static void run_name(const fire_t *f, char *buf, size_t len)
{
	snprintf(buf, len, "--run: job %s", fire_job(f));
}

static void run_all_ended(fire_t *f)
{
	struct lfire *lf = fire_owner(f);
	local_t *l = lf->l;
	fire_summary(f);
	l->run_code = fire_ok(f) == fire_n(f) ? 0 : 1;
	/* the exit waits for its after and afterAll (after_done) */
	if (!start_afters(l, f)) l->p.finished(l->p.arg, l->run_code);
}

static const struct fire_ops run_ops = {
	.all_ended = run_all_ended, .name = run_name, .fail_level = LL_ERROR,
};

/* The job and items "JOB[:ITEMS]" names in conf: the job (*items malloc'd, *n of them; all of
 * them without ':'), or NULL with the error logged: an unknown job with the closest name and the
 * jobs there are, items that are not the job's with its range. */
static const conf_job_t *run_spec(const conf_t *conf, const char *spec, const char *config, uint32_t **items,
                                  uint32_t *n)
{
	const char *colon = strchr(spec, ':');
	size_t nl = colon ? (size_t)(colon - spec) : strlen(spec);
	const conf_job_t *j = NULL;
	for (size_t i = 0; i < conf->n_jobs && !j; i++)
		if (strlen(conf->jobs[i].name) == nl && !memcmp(conf->jobs[i].name, spec, nl)) j = &conf->jobs[i];
	if (!j) {
		char name[256], names[1024] = "", hint[320] = "";
		snprintf(name, sizeof name, "%.*s", (int)(nl < sizeof name ? nl : sizeof name - 1), spec);
		const char **list = calloc(conf->n_jobs ? conf->n_jobs : 1, sizeof *list);
		size_t nlist = 0, off = 0;
		for (size_t i = 0; i < conf->n_jobs; i++) {
			if (list) list[nlist++] = conf->jobs[i].name;
			int k = off < sizeof names ? snprintf(names + off, sizeof names - off, "%s%s", i ? ", " : "",
			                                      conf->jobs[i].name) : -1;
			if (k < 0 || (size_t)k >= sizeof names - off) {
				snprintf(names + (sizeof names - 5), 5, "...");
				off = sizeof names;
			} else {
				off += (size_t)k;
			}
		}
		const char *near = list ? conf_suggest(name, list, nlist) : NULL;
		if (near) snprintf(hint, sizeof hint, "; did you mean '%s'?", near);
		free(list);
		log_error("--run %s: no job '%s' in %s%s (its jobs: %s)", spec, name, config, hint, names[0] ? names : "none");
		return NULL;
	}
	if (fire_kind(j) == FRAME_KIND_NONE) {
		log_error("--run %s: job %s has no type (script, native, external, http or dataflow)", spec, j->name);
		return NULL;
	}
	uint32_t total = j->sharding_total_count;
	char why[256];
	if (colon) {
		if (parse_items(colon + 1, total, items, n, why, sizeof why) < 0) {
			char range[64] = "no items";
			if (total) snprintf(range, sizeof range, "items 0-%" PRIu32, total - 1);
			log_error("--run %s: %s (job %s has %s: shardingTotalCount %" PRIu32 ")", spec, why, j->name, range,
			          total);
			return NULL;
		}
		return j;
	}
	if (!(*items = calloc(total ? total : 1, sizeof **items))) {
		log_error("--run %s: out of memory", spec);
		return NULL;
	}
	for (uint32_t i = 0; i < total; i++) (*items)[i] = i;
	*n = total;
	return j;
}

int local_run_check(const conf_t *conf, const char *spec, const char *config)
{
	uint32_t *items = NULL, n;
	const conf_job_t *j = run_spec(conf, spec, config, &items, &n);
	free(items);
	return j ? 0 : -1;
}

int local_run(local_t *l, const conf_t *conf, const char *spec)
{
	uint32_t *items = NULL, n = 0;
	const conf_job_t *j = run_spec(conf, spec, l->p.config, &items, &n);
	if (!j) return -1;
	struct lfire *lf = lfire_new(l, &run_ops, j->name, j->sharding_total_count, wait_realtime_ns() / 1000000u);
	if (!lf) {
		free(items);
		return -1;
	}
	fire_t *f = lf->f;
	for (uint32_t i = 0; i < n; i++) fire_add(f, items[i]);
	free(items);
	l->run = f;
	l->external = fire_kind(j) == FRAME_KIND_EXTERNAL;
	log_info("--run: job %s, %" PRIu32 " item%s", j->name, fire_n(f), fire_n(f) == 1 ? "" : "s");
	if (advance(lf) < 0) {
		l->run = NULL;
		lfire_free(lf);
		return -1;
	}
	return 0;
}

int local_run_finish(const local_t *l)
{
	const fire_t *f = l->run;
	if (!f || l->run_skipped) return 1;     /* (the listener's failure was logged) */
	if (fire_ended(f) < fire_n(f)) {
		if (fire_n(f) == 1)
			log_error("--run: job %s: stopped before its 1 item ended; it did not succeed", fire_job(f));
		else
			log_error("--run: job %s: stopped before %" PRIu32 " of %" PRIu32 " items ended; %s did not succeed",
			          fire_job(f), fire_n(f) - fire_ended(f), fire_n(f), fire_n(f) - fire_ended(f) == 1 ? "it" : "they");
		return 1;
	}
	return fire_ok(f) == fire_n(f) ? 0 : 1;
}

void local_tick(local_t *l, uint64_t now, int stopping)
{
	const fire_t *f = l->run;
	/* (while its before or beforeAll runs, nothing waits for a worker yet) */
	if (!f || stopping || fire_ended(f) == fire_n(f) || ((const struct lfire *)fire_owner(f))->step != L_ITEMS) return;
	if (!l->external && pool_ready_count(l->p.pool) == 0 && now - fire_started_ns(f) > READY_WAIT_NS) {
		log_error("--run: no worker became ready within %llus (see the errors above); giving up",
		          READY_WAIT_NS / 1000000000ull);
		l->p.finished(l->p.arg, 1);
		return;
	}
	if (!l->external) return;
	if (att_serving(l->p.att, fire_job(f))) {
		l->unserved_since_ns = 0;
		return;
	}
	if (!l->unserved_since_ns) l->unserved_since_ns = now;
	if (l->p.wait_ns && now - l->unserved_since_ns >= l->p.wait_ns) {
		log_error("--run: job %s is external and no worker serving it attached on %s within %" PRIu64 "s (--wait): "
		          "start one there, a program of yours calling ejob_attach() (docs/worker.md), e.g. "
		          "'build/examples/external-worker --socket %s %s'; or wait longer with --wait SECONDS (0: for ever)",
		          fire_job(f), att_path(l->p.att), l->p.wait_ns / 1000000000u, att_path(l->p.att), fire_job(f));
		l->p.finished(l->p.arg, 1);
		return;
	}
	if (now - l->last_wait_log_ns > READY_WAIT_NS) {
		l->last_wait_log_ns = now;
		log_info("--run: job %s is external: waiting for a worker serving it to attach on %s", fire_job(f),
		         att_path(l->p.att));
	}
}
