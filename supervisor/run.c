/* supervisor/run.c: --run JOB[:ITEMS]: one fire of one job, here and now, without ZooKeeper.
 * The supervisor exits when every item has its final outcome: 0 if all succeeded, else 1. The
 * items decide the exit status, whatever stopped the supervisor: a SIGINT/SIGTERM during --run
 * (a clean stop, 0, for a supervisor that schedules) exits 1 unless every item still ended ok. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/frame.h"
#include "ipc/wait.h"
#include "supervisor/sup.h"

#define READY_WAIT_NS (10ull * 1000000000ull)

struct run {
	const conf_job_t *job;     /* valid until a reload; we copy what we need at submit */
	char name[256];
	uint32_t n, final, ok;
	uint32_t *items;
	uint8_t *ended;
	uint64_t started_ns, last_wait_log_ns;
	int external;
};

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

int run_start(struct sup *s, const char *spec)
{
	struct run *r = calloc(1, sizeof *r);
	if (!r) return -1;
	const char *colon = strchr(spec, ':');
	size_t nl = colon ? (size_t)(colon - spec) : strlen(spec);
	if (nl >= sizeof r->name) nl = sizeof r->name - 1;
	memcpy(r->name, spec, nl);
	r->name[nl] = '\0';
	for (size_t i = 0; i < s->conf->n_jobs; i++)
		if (!strcmp(s->conf->jobs[i].name, r->name)) r->job = &s->conf->jobs[i];
	if (!r->job) {
		char names[1024] = "";
		size_t off = 0;
		for (size_t i = 0; i < s->conf->n_jobs && off < sizeof names; i++) {
			int k = snprintf(names + off, sizeof names - off, "%s%s", i ? ", " : "", s->conf->jobs[i].name);
			if (k < 0) break;
			off += (size_t)k;
		}
		log_error("--run: no job '%s' in %s (its jobs: %s)", r->name, s->opts.config, names[0] ? names : "none");
		free(r);
		return -1;
	}
	const conf_job_t *j = r->job;
	uint32_t total = (uint32_t)j->sharding_total_count;
	char why[256];
	if (colon) {
		if (parse_items(colon + 1, total, &r->items, &r->n, why, sizeof why) < 0) {
			log_error("--run %s: %s", spec, why);
			free(r);
			return -1;
		}
	} else {
		r->items = calloc(total, sizeof *r->items);
		if (!r->items) {
			free(r);
			return -1;
		}
		for (uint32_t i = 0; i < total; i++) r->items[i] = i;
		r->n = total;
	}
	uint32_t kind = fire_kind(j);
	if (kind == FRAME_KIND_NONE) {
		log_error("--run %s: the job has no type (script, native or external)", r->name);
		free(r->items);
		free(r);
		return -1;
	}
	r->external = kind == FRAME_KIND_EXTERNAL;
	r->ended = calloc(r->n, 1);

	/* ElasticJob's taskId: every item of this fire on this instance */
	char *task = fire_task_id(r->name, r->items, r->n, s->instance_id);
	if (!task || !r->ended) {
		free(task);
		free(r->ended);
		free(r->items);
		free(r);
		return -1;
	}

	uint64_t fire = wait_realtime_ns() / 1000000u;
	for (uint32_t i = 0; i < r->n; i++) {
		struct disp_req q = {
			.job = r->name, .kind = kind, .cmd = j->script_command_line, .lib = j->native_library,
			.sym = j->native_symbol, .job_param = j->job_parameter,
			.item_param = conf_job_item_param(j, (int)r->items[i]), .task_id = task, .item = r->items[i],
			.total = total, .fire_id = fire, .epoch = 0, .timeout_s = (uint32_t)j->timeout_seconds,
			.max_retries = (uint32_t)j->max_retries, .cookie = i,
		};
		if (!disp_submit(s->disp, &q)) {
			log_error("--run %s item %" PRIu32 ": cannot queue it: %s", r->name, r->items[i], strerror(errno));
			free(task);
			free(r->ended);
			free(r->items);
			free(r);
			return -1;
		}
	}
	free(task);
	r->started_ns = wait_now_ns();
	s->run = r;
	log_info("--run: job %s, %" PRIu32 " item%s", r->name, r->n, r->n == 1 ? "" : "s");
	disp_kick(s->disp);
	return 0;
}

void run_outcome(struct sup *s, const struct disp_outcome *o)
{
	struct run *r = s->run;
	if (!o->final || o->cookie >= r->n || r->ended[o->cookie]) return;
	r->ended[o->cookie] = 1;
	r->final++;
	r->ok += o->status == FRAME_ST_OK;
	if (r->final < r->n) return;
	double secs = (double)(wait_now_ns() - r->started_ns) / 1e9;
	if (r->ok == r->n)
		log_info("--run: job %s: all %" PRIu32 " items succeeded in %.2fs", r->name, r->n, secs);
	else
		log_error("--run: job %s: %" PRIu32 " of %" PRIu32 " items failed (%.2fs)", r->name, r->n - r->ok, r->n, secs);
	sup_shutdown(s, r->ok == r->n ? 0 : 1);
}

int run_finish(struct sup *s)
{
	struct run *r = s->run;
	if (r->final < r->n) {
		log_error("--run: job %s: stopped before %" PRIu32 " of %" PRIu32 " items ended; they did not succeed",
		          r->name, r->n - r->final, r->n);
		return 1;
	}
	return r->ok == r->n ? 0 : 1;
}

void run_tick(struct sup *s)
{
	struct run *r = s->run;
	if (s->stopping || r->final == r->n) return;
	uint64_t now = wait_now_ns();
	if (!r->external && pool_ready_count(s->pool) == 0 && now - r->started_ns > READY_WAIT_NS) {
		log_error("--run: no worker became ready within %llus (see the errors above); giving up",
		          READY_WAIT_NS / 1000000000ull);
		sup_shutdown(s, 1);
		return;
	}
	if (r->external && att_count(s->att) == 0 && now - r->last_wait_log_ns > READY_WAIT_NS) {
		r->last_wait_log_ns = now;
		log_info("--run: job %s is external: waiting for a worker to attach on %s", r->name, att_path(s->att));
	}
}
