/* supervisor/fire.c: one fire of a job on this supervisor: its items queued to the dispatcher,
 * their outcomes counted, and the scheduler told when the last one has ended. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipc/frame.h"
#include "ipc/wait.h"
#include "supervisor/fire.h"
#include "supervisor/sup.h"

struct fire {
	struct fire *prev, *next;   /* the supervisor's live fires */
	sched_job_t *handle;
	char *job;
	uint64_t fire_ms;
	uint32_t total, n, ended, ok;
	uint8_t *done;              /* by item number: final outcome seen */
	uint64_t started_ns;
	int catch_up;
};

uint32_t fire_kind(const conf_job_t *j)
{
	switch (j->type) {
	case CONF_JOB_SCRIPT: return FRAME_KIND_SCRIPT;
	case CONF_JOB_NATIVE: return FRAME_KIND_NATIVE;
	case CONF_JOB_EXTERNAL: return FRAME_KIND_EXTERNAL;
	default: return FRAME_KIND_NONE;
	}
}

char *fire_task_id(const char *job, const uint32_t *items, uint32_t n, const char *instance)
{
	size_t cap = strlen(job) + (size_t)n * 11 + strlen(instance) + 32;
	char *task = malloc(cap);
	if (!task) return NULL;
	size_t off = (size_t)snprintf(task, cap, "%s@-@", job);
	for (uint32_t i = 0; i < n; i++) off += (size_t)snprintf(task + off, cap - off, "%s%" PRIu32, i ? "," : "", items[i]);
	snprintf(task + off, cap - off, "@-@READY@-@%s", instance);
	return task;
}

/* a fire id (ms) as the log shows it: UTC, like the log's own timestamps */
static void fmt_fire(uint64_t ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000u);
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm)) snprintf(buf, len, "%" PRIu64, ms);
}

static void fire_free(struct sup *s, struct fire *f)
{
	if (f->prev) f->prev->next = f->next;
	else s->fires = f->next;
	if (f->next) f->next->prev = f->prev;
	free(f->done);
	free(f->job);
	free(f);
}

uint32_t fire_queue(struct sup *s, const conf_job_t *j, const uint32_t *items, uint32_t n, uint32_t total,
                    uint64_t fire_ms, uint64_t epoch, uint64_t cookie)
{
	uint32_t kind = fire_kind(j);
	if (kind == FRAME_KIND_NONE) {
		log_error("job %s: no type (script, native or external): it cannot run", j->name);
		return 0;
	}
	char *task = fire_task_id(j->name, items, n, s->instance_id);
	if (!task) {
		log_error("job %s: out of memory starting a fire", j->name);
		return 0;
	}
	uint32_t queued = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct disp_req q = {
			.job = j->name, .kind = kind, .cmd = j->script_command_line, .lib = j->native_library,
			.sym = j->native_symbol, .job_param = j->job_parameter,
			.item_param = conf_job_item_param(j, (int)items[i]), .task_id = task, .item = items[i],
			.total = total, .fire_id = fire_ms, .epoch = epoch, .timeout_s = (uint32_t)j->timeout_seconds,
			.max_retries = (uint32_t)j->max_retries, .cookie = cookie,
		};
		if (!disp_submit(s->disp, &q)) {
			/* only a malformed request fails, and then every item would */
			log_error("job %s item %" PRIu32 ": cannot queue it: %s", j->name, items[i], strerror(errno));
			break;
		}
		queued++;
	}
	free(task);
	if (queued) disp_kick(s->disp);
	return queued;
}

/* Queue items[0..n) of job as one fire. Returns the fire, or NULL (logged). */
static struct fire *submit(struct sup *s, const conf_job_t *j, sched_job_t *h, uint64_t fire_ms, const uint32_t *items,
                           uint32_t n, uint64_t epoch)
{
	struct fire *f = calloc(1, sizeof *f);
	if (!f || !(f->job = strdup(j->name)) || !(f->done = calloc((size_t)j->sharding_total_count, 1))) {
		log_error("job %s: out of memory starting a fire", j->name);
		if (f) free(f->job);
		free(f);
		return NULL;
	}
	f->handle = h;
	f->fire_ms = fire_ms;
	f->total = (uint32_t)j->sharding_total_count;
	f->started_ns = wait_now_ns();
	f->next = s->fires;
	if (s->fires) s->fires->prev = f;
	s->fires = f;
	f->n = fire_queue(s, j, items, n, f->total, fire_ms, epoch, (uint64_t)(uintptr_t)f);
	if (!f->n) {
		fire_free(s, f);
		return NULL;
	}
	return f;
}

int fire_start(void *arg, const struct sched_fire_info *fi)
{
	struct sup *s = arg;
	const conf_job_t *j = fi->conf;
	if (s->stopping) return -1;
	/* without ZooKeeper every item of the job runs here */
	uint32_t total = (uint32_t)j->sharding_total_count;
	uint32_t *items = malloc(total * sizeof *items);
	if (!items) {
		log_error("job %s: out of memory starting a fire", j->name);
		return -1;
	}
	for (uint32_t i = 0; i < total; i++) items[i] = i;
	struct fire *f = submit(s, j, fi->handle, (uint64_t)fi->fire_s * 1000u, items, total, 0);
	free(items);
	if (!f) return -1;
	f->catch_up = fi->catch_up;
	char when[32];
	fmt_fire(f->fire_ms, when, sizeof when);
	log_info("job %s: %s %s: %" PRIu32 " item%s", j->name, fi->catch_up ? "catch-up run for fire" : "fire", when, f->n,
	         f->n == 1 ? "" : "s");
	return 0;
}

void fire_outcome(struct sup *s, const struct disp_outcome *o)
{
	struct fire *f = (struct fire *)(uintptr_t)o->cookie;
	if (!o->final || !f || o->item >= f->total || f->done[o->item]) return;
	f->done[o->item] = 1;
	f->ended++;
	f->ok += o->status == FRAME_ST_OK;
	if (f->ended < f->n) return;
	double secs = (double)(wait_now_ns() - f->started_ns) / 1e9;
	char when[32];
	fmt_fire(f->fire_ms, when, sizeof when);
	if (f->ok == f->n)
		log_info("job %s: fire %s: all %" PRIu32 " item%s succeeded in %.2fs", f->job, when, f->n,
		         f->n == 1 ? "" : "s", secs);
	else
		log_warn("job %s: fire %s: %" PRIu32 " of %" PRIu32 " items failed (%.2fs)", f->job, when,
		         f->n - f->ok, f->n, secs);
	sched_job_t *h = f->handle;
	fire_free(s, f);
	sched_fire_ended(s->sched, h);
}

void fire_free_all(struct sup *s)
{
	while (s->fires) fire_free(s, s->fires);
}
