/* supervisor/run/fire.c: the one fire tracker (fire.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipc/frame.h"
#include "ipc/wait.h"
#include "supervisor/base/log.h"
#include "supervisor/run/fire.h"

struct fires {
	disp_t *disp;
	char *instance;
	events_t *events;
	fire_t *list;               /* fires in progress */
};

#define FIRE_MAGIC 0x66697265u      /* "fire": a live fire_t (the dispatcher's cookies point at them) */

struct fire {
	uint32_t magic;             /* FIRE_MAGIC while it lives, 0 once freed */
	const struct fire_ops *ops;
	void *owner;                /* the ops' object (a ZooKeeper fire, --run) */
	fires_t *fs;
	char *job;
	uint64_t fire_ms;           /* the fire id: its scheduled time in ms (a side run: its start) */
	uint64_t epoch;             /* the assignment it ran under (0: none), from fire_submit */
	uint32_t total;             /* the job's shardingTotalCount */
	uint32_t n;                 /* items[0..n): the items it runs here (up to total) */
	uint32_t *items;
	uint8_t *done;              /* [total]: enum fire_end */
	uint32_t ended, ok;         /* items with a final outcome; of them, FIRE_OK */
	uint64_t started_ns;        /* CLOCK_MONOTONIC, at fire_new */
	char *task_id;              /* ElasticJob's taskId of the items submitted (fire_submit) */
	enum event_source source;   /* where it came from (its owner sets it): normal, misfire, failover */
	uint64_t *fires;            /* the fire ids it stands for, ascending (fire_stands_for; NULL: not known here) */
	uint32_t nfires;
	uint32_t fires_omitted;     /* older ones it stands for too, only counted */
	int started;                /* an item of it has started (its lateness is counted) */
	char *param;                /* this fire's jobParameter (a trigger's --parameter); NULL: the job's */
	uint64_t run;               /* a workflow's run it is part of (its root's fire id), 0: none */
	char *root;                 /* ...its root job */
	fire_t *prev, *next;        /* the fires in progress */
};

fires_t *fires_new(disp_t *d, const char *instance)
{
	fires_t *fs = calloc(1, sizeof *fs);
	if (!fs || !(fs->instance = strdup(instance))) {
		free(fs);
		return NULL;
	}
	fs->disp = d;
	return fs;
}

void fires_free(fires_t *fs)
{
	if (!fs) return;
	while (fs->list) fire_free(fs->list);
	free(fs->instance);
	free(fs);
}

uint32_t fire_kind(const conf_job_t *j)
{
	switch (j->type) {
	case CONF_JOB_SCRIPT: return FRAME_KIND_SCRIPT;
	case CONF_JOB_NATIVE: return FRAME_KIND_NATIVE;
	case CONF_JOB_EXTERNAL: return FRAME_KIND_EXTERNAL;
	case CONF_JOB_HTTP: return FRAME_KIND_HTTP;
	/* a native one runs in pool workers, else the workers that attach for it run its loop */
	case CONF_JOB_DATAFLOW: return j->native.library ? FRAME_KIND_NATIVE : FRAME_KIND_EXTERNAL;
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

void fires_set_events(fires_t *fs, events_t *e)
{
	fs->events = e;
}

events_t *fires_events(const fires_t *fs)
{
	return fs->events;
}

void fire_fmt_time(uint64_t ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000u);
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm)) snprintf(buf, len, "%" PRIu64, ms);
}

fire_t *fire_new(fires_t *fs, const struct fire_ops *ops, void *owner, const char *job, uint32_t total,
                 uint64_t fire_ms)
{
	fire_t *f = calloc(1, sizeof *f);
	if (!f || !(f->job = strdup(job)) || !(f->items = calloc(total ? total : 1, sizeof *f->items)) ||
	    !(f->done = calloc(total ? total : 1, 1))) {
		log_error("job %s: out of memory starting a fire", job);
		if (f) {
			free(f->items);
			free(f->job);
		}
		free(f);
		return NULL;
	}
	f->magic = FIRE_MAGIC;
	f->ops = ops;
	f->owner = owner;
	f->fs = fs;
	f->total = total;
	f->fire_ms = fire_ms;
	f->started_ns = wait_now_ns();
	f->next = fs->list;
	if (fs->list) fs->list->prev = f;
	fs->list = f;
	return f;
}

void fire_free(fire_t *f)
{
	if (!f) return;
	if (f->prev) f->prev->next = f->next;
	else f->fs->list = f->next;
	if (f->next) f->next->prev = f->prev;
	f->magic = 0;
	free(f->done);
	free(f->items);
	free(f->job);
	free(f->task_id);
	free(f->fires);
	free(f->param);
	free(f->root);
	free(f);
}

uint64_t fire_first(const fire_t *f)
{
	return f->nfires && f->fires[0] < f->fire_ms ? f->fires[0] : f->fire_ms;
}

void fire_stands_for(fire_t *f, const int64_t *fires_s, uint32_t n, uint32_t missed)
{
	free(f->fires);
	f->fires = NULL;
	f->nfires = f->fires_omitted = 0;
	if (!n || !(f->fires = malloc(n * sizeof *f->fires))) return;
	for (uint32_t i = 0; i < n; i++) f->fires[i] = (uint64_t)fires_s[i] * 1000u;
	/* a fire is its own id (a trigger's has its ms) */
	if (n == 1 && missed <= 1 && f->source == EVS_NORMAL) f->fires[0] = f->fire_ms;
	f->nfires = n;
	f->fires_omitted = missed > n ? missed - n : 0;
}

/* The fields of an item of j's type: an http job's request, a dataflow job's loop. */
static void fire_item_kind(struct frame_submit *q, const conf_job_t *j)
{
	if (q->kind == FRAME_KIND_HTTP) {
		q->uri = j->http.uri;
		q->method = j->http.method;
		q->data = j->http.data;
		q->ctype = j->http.content_type;
		q->ca_file = j->http.ca_file;
		q->connect_ms = (uint32_t)j->http.connect_timeout_ms;
		q->read_ms = (uint32_t)j->http.read_timeout_ms;
	}
	if (j->type == CONF_JOB_DATAFLOW && (q->kind == FRAME_KIND_NATIVE || q->kind == FRAME_KIND_EXTERNAL)) {
		q->flow = j->dataflow.streaming ? 2u : 1u;
		q->batch_max = j->dataflow.batch_bytes;
		q->fetch = j->native.fetch;
		q->process = j->native.process;
	}
}

uint32_t fire_submit(fire_t *f, const conf_job_t *j, uint64_t epoch)
{
	uint32_t kind = fire_kind(j), n = f->n;
	f->n = 0;
	f->epoch = epoch;
	if (kind == FRAME_KIND_NONE) {
		log_error("job %s: no type (script, native, external, http or dataflow): it cannot run", j->name);
		return 0;
	}
	char *task = fire_task_id(j->name, f->items, n, f->fs->instance);
	if (!task) {
		log_error("job %s: out of memory starting a fire", j->name);
		return 0;
	}
	struct disp_req q = {
		.frame = {
			.job = j->name, .kind = kind, .cmd = j->script_command_line, .lib = j->native.library,
			.sym = j->native.symbol, .job_param = f->param ? f->param : j->job_parameter, .task_id = task, .total = f->total,
			.fire_id = f->fire_ms, .epoch = epoch, .wrun = f->run,
		},
		.timeout_s = (uint32_t)j->timeout_seconds, .max_retries = (uint32_t)j->max_retries,
		.concurrency = (uint32_t)conf_job_concurrency(j), .cookie = (uint64_t)(uintptr_t)f,
	};
	fire_item_kind(&q.frame, j);
	for (uint32_t i = 0; i < n; i++) {
		q.frame.item = f->items[i];
		q.frame.item_param = conf_job_item_param(j, (int)f->items[i]);
		if (!disp_submit(f->fs->disp, &q)) {
			/* only a malformed request fails, and then every item would */
			log_error("job %s item %" PRIu32 ": cannot queue it: %s", j->name, f->items[i], strerror(errno));
			break;
		}
		f->n++;
	}
	free(f->task_id);
	f->task_id = task;
	if (f->n) {
		struct event ev = {
			.type = EVT_FIRE_STARTED, .job = f->job, .task_id = task, .where = "", .fire_ms = f->fire_ms,
			.epoch = epoch, .start_ms = wait_realtime_ns() / 1000000u, .source = f->source, .fires = f->fires,
			.nfires = f->nfires, .fires_omitted = f->fires_omitted,
		};
		events_emit(f->fs->events, &ev);
	}
	return f->n;
}

void fires_kick(fires_t *fs)
{
	disp_kick(fs->disp);
}

void fire_name(const fire_t *f, char *buf, size_t len)
{
	f->ops->name(f, buf, len);
}

void fire_summary(const fire_t *f)
{
	const struct fire_ops *ops = f->ops;
	double secs = (double)(wait_now_ns() - f->started_ns) / 1e9;
	char name[300], tail[128] = "";
	ops->name(f, name, sizeof name);
	int all = f->ok == f->n;
	if (ops->tail) ops->tail(f, all, tail, sizeof tail);
	const char *here = ops->here ? ops->here : "";
	/* "its 1 item", not "all 1 item" or "1 of 1 items" */
	if (all && f->n == 1)
		log_info("%s: its 1 item%s succeeded in %.2fs%s", name, here, secs, tail);
	else if (all)
		log_info("%s: all %" PRIu32 " items%s succeeded in %.2fs%s", name, f->n, here, secs, tail);
	else if (f->n == 1)
		log_msg((enum log_level)ops->fail_level, "%s: its 1 item%s failed (%.2fs%s)", name, here, secs, tail);
	else
		log_msg((enum log_level)ops->fail_level, "%s: %" PRIu32 " of %" PRIu32 " items%s failed (%.2fs%s)", name,
		        f->n - f->ok, f->n, here, secs, tail);
}

/* ---- the events: an item starts, an attempt ends ---------------------------------------------- */

static void item_started(fire_t *f, const struct disp_started *s)
{
	log_debug("job %s item %" PRIu32 " attempt %" PRIu32 ": started on %s", s->job, s->item, s->attempt, s->where);
	if (!f) return;
	uint64_t now = wait_realtime_ns() / 1000000u;
	struct event ev = {
		.type = EVT_ITEM_STARTED, .job = s->job, .task_id = f->task_id, .where = s->where, .fire_ms = f->fire_ms,
		.epoch = f->epoch, .start_ms = now, .item = s->item, .attempt = s->attempt, .source = f->source,
		.fires = f->fires, .nfires = f->nfires, .fires_omitted = f->fires_omitted, .run = f->run,
	};
	if (!f->started) {
		f->started = 1;
		/* a scheduled fire's id is its time; a side run's is its start (nothing to measure) */
		ev.late = f->source == EVS_NORMAL;
		ev.late_ms = now > f->fire_ms ? now - f->fire_ms : 0;
	}
	events_emit(f->fs->events, &ev);
}

static void item_ended(fire_t *f, const struct disp_outcome *o)
{
	char took[32];
	snprintf(took, sizeof took, "%.1fms", (double)o->duration_us / 1000.0);
	char detail[64] = "";
	if (o->status != FRAME_ST_OK) {
		if (o->signal) snprintf(detail, sizeof detail, " (signal %d)", o->signal);
		else if (o->exit_code) snprintf(detail, sizeof detail, " (exit %d)", o->exit_code);
	}
	enum log_level lvl = o->status == FRAME_ST_OK ? LL_INFO : o->final ? LL_ERROR : LL_WARN;
	log_msg(lvl, "job %s item %" PRIu32 " attempt %" PRIu32 ": %s%s in %s on %s%s%s%s", o->job, o->item,
	        o->attempt, frame_status_name(o->status), detail, took, o->where, o->error[0] ? ": " : "", o->error,
	        o->status != FRAME_ST_OK && !o->final ? "; it will run again" : "");
	if (f) {
		uint64_t now = wait_realtime_ns() / 1000000u, took_ms = o->duration_us / 1000u;
		struct event ev = {
			.type = EVT_ITEM_ENDED, .job = o->job, .task_id = f->task_id, .where = o->where, .error = o->error,
			.output = o->output, .fire_ms = f->fire_ms, .epoch = o->epoch, .start_ms = now > took_ms ? now - took_ms : now, .end_ms = now,
			.duration_us = o->duration_us, .item = o->item, .attempt = o->attempt, .status = o->status,
			.exit_code = o->exit_code, .signal = o->signal, .final = o->final, .source = f->source,
			.fires = f->fires, .nfires = f->nfires, .fires_omitted = f->fires_omitted, .run = f->run,
		};
		events_emit(f->fs->events, &ev);
	}
	if (!o->final || !f || o->item >= f->total || f->done[o->item]) return;
	f->done[o->item] = o->status == FRAME_ST_OK ? FIRE_OK : FIRE_FAILED;
	f->ended++;
	f->ok += o->status == FRAME_ST_OK;
	if (f->ops->item_ended) f->ops->item_ended(f, o->item, o);
	if (f->ended == f->n) {
		uint64_t now = wait_realtime_ns() / 1000000u;
		struct event ev = {
			.type = EVT_FIRE_ENDED, .job = f->job, .task_id = f->task_id, .where = "", .fire_ms = f->fire_ms,
			.epoch = f->epoch, .end_ms = now, .status = f->ok == f->n ? FRAME_ST_OK : FRAME_ST_FAILED,
			.final = 1, .source = f->source, .fires = f->fires, .nfires = f->nfires,
			.fires_omitted = f->fires_omitted,
		};
		events_emit(f->fs->events, &ev);
	}
	if (f->ended == f->n && f->ops->all_ended) f->ops->all_ended(f);
}

/* A request's cookie is the fire it belongs to (fire_submit), or 0: a fire freed while its item
 * was still with the dispatcher would be freed memory here */
static fire_t *cookie_fire(uint64_t cookie)
{
	fire_t *f = (fire_t *)(uintptr_t)cookie;
	EJOB_CHECK(!f || f->magic == FIRE_MAGIC, "a dispatcher request names a fire that is not alive");
	return f;
}

void fires_started(fires_t *fs, const struct disp_started *s)
{
	(void)fs;
	item_started(cookie_fire(s->cookie), s);
}

void fires_outcome(fires_t *fs, const struct disp_outcome *o)
{
	(void)fs;
	item_ended(cookie_fire(o->cookie), o);
}

/* ---- what the owner reads, and the changes to its items it may make ---------------------------- */

uint64_t fire_id(const fire_t *f) { return f->fire_ms; }
const char *fire_job(const fire_t *f) { return f->job; }
void *fire_owner(const fire_t *f) { return f->owner; }
uint32_t fire_total(const fire_t *f) { return f->total; }
uint32_t fire_n(const fire_t *f) { return f->n; }
const uint32_t *fire_items(const fire_t *f) { return f->items; }
uint32_t fire_ended(const fire_t *f) { return f->ended; }
uint32_t fire_ok(const fire_t *f) { return f->ok; }
uint64_t fire_epoch(const fire_t *f) { return f->epoch; }
uint64_t fire_started_ns(const fire_t *f) { return f->started_ns; }
enum event_source fire_source(const fire_t *f) { return f->source; }
void fire_set_source(fire_t *f, enum event_source s) { f->source = s; }

int fire_set_param(fire_t *f, const char *p)
{
	char *c = p ? strdup(p) : NULL;
	if (p && !c) return -1;
	free(f->param);
	f->param = c;
	return 0;
}

const char *fire_param(const fire_t *f) { return f->param; }

int fire_set_run(fire_t *f, uint64_t run, const char *root)
{
	char *c = root ? strdup(root) : NULL;
	if (root && !c) return -1;
	free(f->root);
	f->root = c;
	f->run = root ? run : 0;
	return 0;
}

uint64_t fire_run(const fire_t *f) { return f->run; }
const char *fire_root(const fire_t *f) { return f->root; }

uint32_t fire_item(const fire_t *f, uint32_t k)
{
	EJOB_CHECK(k < f->n, "a fire's item is read past its items");
	return f->items[k];
}

enum fire_end fire_end_of(const fire_t *f, uint32_t item)
{
	return item < f->total ? (enum fire_end)f->done[item] : FIRE_OPEN;
}

void fire_clear(fire_t *f)
{
	f->n = 0;
}

void fire_add(fire_t *f, uint32_t item)
{
	EJOB_CHECK(item < f->total && f->n < f->total, "an item is added to a fire past its job's items");
	f->items[f->n++] = item;
}

uint32_t fire_keep(fire_t *f, int (*keep)(void *arg, uint32_t item), void *arg)
{
	uint32_t w = 0;
	for (uint32_t i = 0; i < f->n; i++)
		if (keep(arg, f->items[i])) f->items[w++] = f->items[i];
	uint32_t dropped = f->n - w;
	f->n = w;
	return dropped;
}

static int not_it(void *arg, uint32_t item)
{
	return item != *(const uint32_t *)arg;
}

int fire_drop(fire_t *f, uint32_t item)
{
	return fire_keep(f, not_it, &item) > 0;
}

int fire_end_item(fire_t *f, uint32_t item, enum fire_end end)
{
	if (item >= f->total) return 0;
	int open = f->done[item] == FIRE_OPEN;
	f->done[item] = (uint8_t)end;
	if (open) f->ended++;
	return open;
}
