/* tools/ejobctl_serve_changes.c: GET /api/v1/changes's feed (tools/ejobctl_serve_changes.h): a
 * ring of the last CHANGES_KEEP events under a lock of its own, and what a job's two snapshots
 * differ in, as events.
 *
 * The comparison runs on the model's thread after its swap, outside the model's locks, only for
 * the jobs it read again (a watch fired on one of their nodes), and is cheap next to their read: a
 * walk of the sorted instances, servers and items, and the health judged twice. Its events are in
 * the feed before the model's pass counts as done, so that a write's answer (which waits for that
 * pass: model_sync) comes after them. */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tools/ejobctl_health.h"
#include "tools/ejobctl_serve_changes.h"
#include "tools/ejobctl_snap.h"

struct ev {
	uint64_t seq;
	int64_t ms;                 /* when it was seen (the wall clock, epoch ms) */
	const char *kind;           /* static */
	int item;                   /* -1: none */
	char *job, *instance, *from, *to, *detail, *user;   /* NULL: none */
};

struct changes {
	pthread_mutex_t mu;         /* all of what follows */
	struct ev ring[CHANGES_KEEP];
	size_t head;                /* the oldest kept */
	size_t n;                   /* kept */
	uint64_t next;              /* the seq of the next event (the first is 1) */
};

changes_t *changes_new(void)
{
	changes_t *f = calloc(1, sizeof *f);
	if (!f) return NULL;
	pthread_mutex_init(&f->mu, NULL);
	f->next = 1;
	return f;
}

static void ev_free(struct ev *e)
{
	free(e->job), free(e->instance), free(e->from), free(e->to), free(e->detail), free(e->user);
	memset(e, 0, sizeof *e);
}

void changes_free(changes_t *f)
{
	if (!f) return;
	for (size_t i = 0; i < f->n; i++) ev_free(&f->ring[(f->head + i) % CHANGES_KEEP]);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

/* ---- events made, then added at once ---------------------------------------------------- */

struct batch {
	struct ev *v;
	size_t n, cap;
	const char *job;
	int64_t ms;
};

static char *dup_or_null(const char *s)
{
	char *d = NULL;
	if (s) CTL_NEED(d = strdup(s));
	return d;
}

static void emit(struct batch *b, const char *kind, int item, const char *instance, const char *from, const char *to,
                 const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static void emit(struct batch *b, const char *kind, int item, const char *instance, const char *from, const char *to,
                 const char *fmt, ...)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 8;
		CTL_NEED(b->v = realloc(b->v, b->cap * sizeof *b->v));
	}
	struct ev *e = &b->v[b->n++];
	memset(e, 0, sizeof *e);
	e->ms = b->ms;
	e->kind = kind;
	e->item = item;
	e->job = dup_or_null(b->job);
	e->instance = dup_or_null(instance);
	e->from = dup_or_null(from);
	e->to = dup_or_null(to);
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		if (vasprintf(&e->detail, fmt, ap) < 0) ctl_oom();
		va_end(ap);
	}
}

/* the batch's events into the feed, numbered; the oldest kept go when it is full */
static void add(changes_t *f, struct batch *b)
{
	if (!b->n) return;
	pthread_mutex_lock(&f->mu);
	for (size_t i = 0; i < b->n; i++) {
		if (f->n == CHANGES_KEEP) {
			ev_free(&f->ring[f->head]);
			f->head = (f->head + 1) % CHANGES_KEEP;
			f->n--;
		}
		struct ev *e = &f->ring[(f->head + f->n++) % CHANGES_KEEP];
		*e = b->v[i];
		e->seq = f->next++;
	}
	pthread_mutex_unlock(&f->mu);
	free(b->v);
	b->v = NULL, b->n = b->cap = 0;
}

/* ---- a job's two snapshots compared ------------------------------------------------------ */

/* a child of the namespace is a job once it has a config node (as GET /api/v1/jobs lists it) */
static int is_job(const struct snap_job *j)
{
	return j && (j->conf || !j->conf_error || strcmp(j->conf_error, "no config node"));
}

static void instances(struct batch *b, const struct snap_job *x, const struct snap_job *y)
{
	int i = 0, k = 0;
	while (i < x->ninst || k < y->ninst) {
		int c = i == x->ninst ? 1 : k == y->ninst ? -1 : strcmp(x->inst[i].id, y->inst[k].id);
		if (c < 0) {
			const struct snap_inst *in = &x->inst[i++];
			emit(b, "instance_down", -1, in->id, "online", snap_inst_state(y, in->id, in->ip), NULL);
		} else if (c > 0) {
			const struct snap_inst *in = &y->inst[k++];
			emit(b, "instance_up", -1, in->id, snap_inst_state(x, in->id, in->ip), "online", NULL);
		} else {
			i++, k++;
		}
	}
}

/* disabled: true in the config node; servers/{ip} DISABLED. Every server of the job turned at
 * once (ejobctl disable JOB, POST .../disable without a server) is one event of the job. */
static void disabled(struct batch *b, const struct snap_job *x, const struct snap_job *y)
{
	if (x->conf && y->conf && x->conf->disabled != y->conf->disabled)
		emit(b, y->conf->disabled ? "disabled" : "enabled", -1, NULL, NULL, NULL, "the job: disabled: %s in its config",
		     y->conf->disabled ? "true" : "false");
	int on = 0, off = 0;
	for (int i = 0, k = 0; k < y->nserv; k++) {
		while (i < x->nserv && strcmp(x->serv[i].ip, y->serv[k].ip) < 0) i++;
		int was = i < x->nserv && !strcmp(x->serv[i].ip, y->serv[k].ip) && x->serv[i].disabled;
		off += !was && y->serv[k].disabled;
		on += was && !y->serv[k].disabled;
	}
	int every = y->nserv && (off == y->nserv || on == y->nserv);
	if (every) {
		emit(b, off ? "disabled" : "enabled", -1, NULL, NULL, NULL, "the job: every server (%d) %s", y->nserv,
		     off ? "DISABLED" : "ENABLED");
		return;
	}
	for (int i = 0, k = 0; (on || off) && k < y->nserv; k++) {
		while (i < x->nserv && strcmp(x->serv[i].ip, y->serv[k].ip) < 0) i++;
		int was = i < x->nserv && !strcmp(x->serv[i].ip, y->serv[k].ip) && x->serv[i].disabled;
		if (was != y->serv[k].disabled)
			emit(b, was ? "enabled" : "disabled", -1, NULL, NULL, NULL, "server %s", y->serv[k].ip);
	}
}

/* the item of x with y's item's number, NULL if none (both sorted by item) */
static const struct snap_item *item_of(const struct snap_job *x, int *i, int item)
{
	while (*i < x->nitems && x->items[*i].item < item) (*i)++;
	return *i < x->nitems && x->items[*i].item == item ? &x->items[*i] : NULL;
}

static int total(const struct snap_job *j)
{
	return j->conf ? (int)j->conf->sharding_total_count : j->nitems;
}

static int same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* "0,1 -> 10.0.0.7@-@1; 2,3 -> 10.0.0.8@-@2" (items without an owner: "-> none"), the owners in
 * the order of their first item */
static char *assignment(const struct snap_job *y)
{
	struct grp {
		const char *owner;
		int first;              /* the group's first item (an index of y->items) */
	} *g = NULL;
	int ng = 0, t = total(y);
	for (int k = 0; k < y->nitems && y->items[k].item < t; k++) {
		int x = 0;
		while (x < ng && !same(g[x].owner, y->items[k].owner)) x++;
		if (x == ng) {
			CTL_NEED(g = realloc(g, (size_t)(ng + 1) * sizeof *g));
			g[ng].owner = y->items[k].owner, g[ng++].first = k;
		}
	}
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	CTL_NEED(f);
	for (int x = 0; x < ng; x++) {
		fputs(x ? "; " : "", f);
		for (int k = g[x].first, n = 0; k < y->nitems && y->items[k].item < t; k++)
			if (same(g[x].owner, y->items[k].owner)) fprintf(f, n++ ? ",%d" : "%d", y->items[k].item);
		fprintf(f, " -> %s", g[x].owner ? g[x].owner : "none");
	}
	if (fclose(f)) ctl_oom();
	free(g);
	return s;
}

static void epoch_str(uint64_t e, char *buf, size_t len)
{
	snprintf(buf, len, "0x%" PRIx64, e);
}

/* sharding/{i}/disabled, sharding/{i}/failover, the owners and the epoch */
static void items(struct batch *b, const struct snap_job *x, const struct snap_job *y)
{
	int reshard = x->epoch != y->epoch, t = total(y);
	for (int i = 0, k = 0; k < y->nitems; k++) {
		const struct snap_item *n = &y->items[k], *o = item_of(x, &i, n->item);
		if (n->item < t && (!o || !same(o->owner, n->owner))) reshard = 1;
		if (!o) continue;
		if (o->disabled != n->disabled)
			emit(b, n->disabled ? "item_disabled" : "item_enabled", n->item, NULL, NULL, NULL, NULL);
		if (n->failover && !same(o->failover, n->failover))
			emit(b, "failover", n->item, n->failover, n->owner, n->failover, "item %d of %s taken over by %s", n->item,
			     n->owner ? n->owner : "no owner", n->failover);
	}
	if (reshard && y->epoch) {
		char from[32], to[32];
		epoch_str(x->epoch, from, sizeof from);
		epoch_str(y->epoch, to, sizeof to);
		char *a = assignment(y);
		emit(b, "resharded", -1, NULL, x->epoch ? from : NULL, to, "%s", a);
		free(a);
	}
}

/* the health word; FAILING says which item failed last, where */
static void health(struct batch *b, const struct snap_job *x, const struct snap_job *y, int64_t now_ms)
{
	struct ctl_health hx, hy;
	ctl_job_health(x, now_ms, &hx);
	ctl_job_health(y, now_ms, &hy);
	if (!strcmp(hx.word, hy.word)) return;
	if (!strcmp(hy.word, "FAILING")) {
		const struct snap_item *last = NULL;
		for (int k = 0; k < y->nitems; k++) {
			const struct snap_item *it = &y->items[k];
			if (it->item < total(y) && it->has_last && lastrun_is_failure(it->last.outcome) &&
			    (!last || it->last.end_ms > last->last.end_ms))
				last = it;
		}
		if (last) {
			/* the cause as the record says it ("failed (exit 3)"), else the outcome's word */
			const char *cause = last->last.error && *last->last.error ? last->last.error : last->last.outcome;
			emit(b, "health", -1, NULL, hx.word, hy.word, "item %d %s on %s", last->item, cause, last->last.instance);
			return;
		}
	}
	emit(b, "health", -1, NULL, hx.word, hy.word, *hy.why ? "%s" : NULL, hy.why);
}

void changes_job(void *arg, const char *job, const struct snap_job *before, const struct snap_job *after,
                 int64_t now_ms)
{
	changes_t *f = arg;
	struct batch b = { .job = job, .ms = now_ms };
	int was = is_job(before), is = is_job(after);
	if (!was && is) {
		const conf_job_t *c = after->conf;
		if (c)
			emit(&b, "job_added", -1, NULL, NULL, NULL, "%s, %" PRIu32 " items, cron %s", after->type[0] ? after->type : "?",
			     c->sharding_total_count, c->cron ? c->cron : "none");
		else
			emit(&b, "job_added", -1, NULL, NULL, NULL, "its config does not parse: %s", after->conf_error);
	} else if (was && !is) {
		emit(&b, "job_removed", -1, NULL, NULL, NULL, NULL);
	} else if (was && is) {
		instances(&b, before, after);
		disabled(&b, before, after);
		items(&b, before, after);
		health(&b, before, after, now_ms);
	}
	add(f, &b);
}

void changes_audit(changes_t *f, const char *user, const char *job, const char *item, const char *instance,
                   const char *method, const char *path, unsigned status)
{
	if (!f) return;
	struct batch b = { .job = job, .ms = ctl_now_ms() };
	emit(&b, "audit", item ? atoi(item) : -1, instance, NULL, NULL, "%s %s (%u)", method, path, status);
	b.v[0].user = dup_or_null(user);
	add(f, &b);
}

/* ---- the answer ------------------------------------------------------------------------------ */

static json_t *str_or_null(const char *s)
{
	json_t *v = s ? json_string(s) : json_null();
	return v ? v : json_string("(not UTF-8)");
}

static json_t *ev_json(const struct ev *e)
{
	json_t *o = json_object();
	if (!o) return NULL;
	json_object_set_new(o, "seq", json_integer((json_int_t)e->seq));
	json_object_set_new(o, "timeMs", json_integer(e->ms));
	json_object_set_new(o, "kind", json_string(e->kind));
	json_object_set_new(o, "job", str_or_null(e->job));
	json_object_set_new(o, "item", e->item >= 0 ? json_integer(e->item) : json_null());
	json_object_set_new(o, "instance", str_or_null(e->instance));
	json_object_set_new(o, "from", str_or_null(e->from));
	json_object_set_new(o, "to", str_or_null(e->to));
	json_object_set_new(o, "detail", str_or_null(e->detail));
	json_object_set_new(o, "user", str_or_null(e->user));
	return o;
}

json_t *changes_json(changes_t *f, long long since, int limit)
{
	json_t *o = json_object(), *a = json_array();
	if (!o || !a) {
		json_decref(o), json_decref(a);
		return NULL;
	}
	uint64_t next = 1;
	if (f) {
		pthread_mutex_lock(&f->mu);
		size_t from;
		if (since < 0) {
			from = f->n > (size_t)limit ? f->n - (size_t)limit : 0;
		} else {
			uint64_t s = (uint64_t)since > f->next ? 1 : (uint64_t)since;
			uint64_t oldest = f->n ? f->ring[f->head].seq : f->next;
			from = s <= oldest ? 0 : (size_t)(s - oldest);
		}
		next = f->next;
		for (size_t i = from; i < f->n && json_array_size(a) < (size_t)limit; i++) {
			const struct ev *e = &f->ring[(f->head + i) % CHANGES_KEEP];
			json_array_append_new(a, ev_json(e));
			next = e->seq + 1;
		}
		pthread_mutex_unlock(&f->mu);
	}
	json_object_set_new(o, "changes", a);
	json_object_set_new(o, "next", json_integer((json_int_t)next));
	return o;
}
