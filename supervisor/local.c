/* supervisor/local.c: fires without ZooKeeper (local.h).
 *
 * --run JOB[:ITEMS]: one fire of one job, here and now. The supervisor exits when every item has
 * its final outcome: 0 if all succeeded, else 1. The items decide the exit status, whatever
 * stopped the supervisor: a SIGINT/SIGTERM during --run (a clean stop, 0, for a supervisor that
 * schedules) exits 1 unless every item still ended ok. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/frame.h"
#include "ipc/wait.h"
#include "supervisor/local.h"
#include "supervisor/log.h"

#define READY_WAIT_NS (10ull * 1000000000ull)

struct local {
	struct local_params p;
	sched_t *sched;             /* --standalone */
	int stopping;
	fire_t *run;                /* --run: its one fire, kept until the exit */
	int external;               /* --run: the job is external */
	uint64_t last_wait_log_ns;
	int listeners_said;         /* --standalone: "listeners do not run" logged */
};

local_t *local_new(const struct local_params *p)
{
	local_t *l = calloc(1, sizeof *l);
	if (l) l->p = *p;
	return l;
}

void local_free(local_t *l)
{
	if (!l) return;
	fire_free(l->run);
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

/* ---- --standalone: the scheduler's fires -------------------------------------------------------- */

struct sfire {
	sched_job_t *handle;
	sched_t *sched;
};

static void sfire_name(const fire_t *f, char *buf, size_t len)
{
	char when[32];
	fire_fmt_time(f->fire_ms, when, sizeof when);
	snprintf(buf, len, "job %s: fire %s", f->job, when);
}

static void sfire_all_ended(fire_t *f)
{
	struct sfire *sf = f->owner;
	fire_summary(f);
	sched_fire_ended(sf->sched, sf->handle);
	free(sf);
	fire_free(f);
}

static const struct fire_ops standalone_ops = {
	.all_ended = sfire_all_ended, .name = sfire_name, .fail_level = LL_WARN,
};

int local_fire(void *arg, const struct sched_fire_info *fi)
{
	local_t *l = arg;
	const conf_job_t *j = fi->conf;
	if (l->stopping) return -1;
	if (!l->listeners_said && (j->listener_before || j->listener_after || j->listener_after_all)) {
		l->listeners_said = 1;
		log_warn("job %s: its listeners (ejob.listener.*) do not run without ZooKeeper (--standalone) in this "
		         "version; its items run without them (said once)", j->name);
	}
	struct sfire *sf = calloc(1, sizeof *sf);
	fire_t *f = sf ? fire_new(l->p.fires, &standalone_ops, sf, j->name, j->sharding_total_count,
	                          (uint64_t)fi->fire_ms) : NULL;
	if (!f) {
		free(sf);
		return -1;
	}
	sf->handle = fi->handle;
	sf->sched = l->sched;
	f->source = fi->catch_up ? EVS_MISFIRE : EVS_NORMAL;
	/* without ZooKeeper every item of the job runs here */
	for (uint32_t i = 0; i < f->total; i++) f->items[f->n++] = i;
	if (!fire_submit(f, j, 0)) {
		free(sf);
		fire_free(f);
		return -1;
	}
	char when[32];
	fire_fmt_time(f->fire_ms, when, sizeof when);
	log_info("job %s: %s %s: %" PRIu32 " item%s", j->name, fi->catch_up ? "catch-up run for fire" : "fire", when, f->n,
	         f->n == 1 ? "" : "s");
	fires_kick(l->p.fires);     /* last: the fire may end inside */
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
				snprintf(why, wl, "item %lu is out of range: shardingTotalCount is %" PRIu32 " (items 0-%" PRIu32 ")",
				         i, total, total - 1);
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
	snprintf(buf, len, "--run: job %s", f->job);
}

static void run_all_ended(fire_t *f)
{
	local_t *l = f->owner;
	fire_summary(f);
	l->p.finished(l->p.arg, f->ok == f->n ? 0 : 1);
}

static const struct fire_ops run_ops = {
	.all_ended = run_all_ended, .name = run_name, .fail_level = LL_ERROR,
};

/* the job named by "JOB[:ITEMS]", or NULL (logged) */
static const conf_job_t *run_job(const local_t *l, const conf_t *conf, const char *name)
{
	for (size_t i = 0; i < conf->n_jobs; i++)
		if (!strcmp(conf->jobs[i].name, name)) return &conf->jobs[i];
	char names[1024] = "";
	size_t off = 0;
	for (size_t i = 0; i < conf->n_jobs && off < sizeof names; i++) {
		int k = snprintf(names + off, sizeof names - off, "%s%s", i ? ", " : "", conf->jobs[i].name);
		if (k < 0) break;
		off += (size_t)k;
	}
	log_error("--run: no job '%s' in %s (its jobs: %s)", name, l->p.config, names[0] ? names : "none");
	return NULL;
}

int local_run(local_t *l, const conf_t *conf, const char *spec)
{
	char name[256];
	const char *colon = strchr(spec, ':');
	size_t nl = colon ? (size_t)(colon - spec) : strlen(spec);
	if (nl >= sizeof name) nl = sizeof name - 1;
	memcpy(name, spec, nl);
	name[nl] = '\0';
	const conf_job_t *j = run_job(l, conf, name);
	if (!j) return -1;
	uint32_t total = j->sharding_total_count;
	uint32_t kind = fire_kind(j);
	if (kind == FRAME_KIND_NONE) {
		log_error("--run %s: the job has no type (script, native, external, http or dataflow)", name);
		return -1;
	}
	fire_t *f = fire_new(l->p.fires, &run_ops, l, name, total, wait_realtime_ns() / 1000000u);
	if (!f) return -1;
	char why[256];
	if (colon) {
		uint32_t *items, n;
		if (parse_items(colon + 1, total, &items, &n, why, sizeof why) < 0) {
			log_error("--run %s: %s", spec, why);
			fire_free(f);
			return -1;
		}
		memcpy(f->items, items, n * sizeof *items);
		f->n = n;
		free(items);
	} else {
		for (uint32_t i = 0; i < total; i++) f->items[f->n++] = i;
	}
	uint32_t want = f->n;
	if (fire_submit(f, j, 0) < want) {
		fire_free(f);   /* (a partial queue cannot happen: only a malformed request fails, all of them) */
		return -1;
	}
	l->run = f;
	l->external = kind == FRAME_KIND_EXTERNAL;
	log_info("--run: job %s, %" PRIu32 " item%s", name, f->n, f->n == 1 ? "" : "s");
	fires_kick(l->p.fires);
	return 0;
}

int local_run_finish(const local_t *l)
{
	const fire_t *f = l->run;
	if (!f) return 1;
	if (f->ended < f->n) {
		log_error("--run: job %s: stopped before %" PRIu32 " of %" PRIu32 " items ended; they did not succeed",
		          f->job, f->n - f->ended, f->n);
		return 1;
	}
	return f->ok == f->n ? 0 : 1;
}

void local_tick(local_t *l, uint64_t now, int stopping)
{
	const fire_t *f = l->run;
	if (!f || stopping || f->ended == f->n) return;
	if (!l->external && pool_ready_count(l->p.pool) == 0 && now - f->started_ns > READY_WAIT_NS) {
		log_error("--run: no worker became ready within %llus (see the errors above); giving up",
		          READY_WAIT_NS / 1000000000ull);
		l->p.finished(l->p.arg, 1);
		return;
	}
	if (l->external && att_count(l->p.att) == 0 && now - l->last_wait_log_ns > READY_WAIT_NS) {
		l->last_wait_log_ns = now;
		log_info("--run: job %s is external: waiting for a worker to attach on %s", f->job, att_path(l->p.att));
	}
}
