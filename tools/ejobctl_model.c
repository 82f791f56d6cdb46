/* tools/ejobctl_model.c: serve's model of the cluster, kept from watches (tools/ejobctl_model.h).
 *
 * Threads: the model's own (connects, reads, swaps the table), ZooKeeper's completion thread (the
 * watcher: marks what changed, under mu), and serve's request threads (render under rw's read
 * lock, the cache under cmu; model_sync). Lock order: cmu, then rw; mu is taken alone. The model's
 * thread never holds rw or cmu across a ZooKeeper call.
 * What a pass swapped in is told to the hook given (serve's feed of changes,
 * tools/ejobctl_serve_changes.h) with the snapshot it replaced, after the swap and before the
 * pass counts as done, holding no lock of the model's. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/ejobctl_api.h"
#include "tools/ejobctl_health.h"
#include "tools/ejobctl_model.h"
#include "tools/ejobctl_snap.h"

struct mjob {
	char *name;                 /* a child of the namespace */
	struct snap_job *snap;      /* as read last (NULL: not read yet) */
};

/* names marked by watches, a set (open addressing) */
struct nameset {
	char **v;
	size_t cap, n;
};

struct model {
	struct ctl c;               /* the model's session: c.watch is on_watch, failures go to msg */
	char msg[1024];
	char *hosts, *ns, *digest;
	pthread_t th;
	model_change_fn *changed;   /* told what a pass saw change (NULL: nobody) */
	void *changed_ctx;
	int told;                   /* the first build is done: later passes tell (the thread's own) */

	pthread_mutex_t mu;         /* guards what follows, to cmu */
	pthread_cond_t cv;          /* the thread's work, a sync's pass, a session's state */
	zhandle_t *zh;              /* the session (the thread replaces it) */
	int zstate;                 /* its last state */
	int expired;                /* it expired: a new one, every job read again */
	int built;                  /* every job was read in this session */
	int ns_exists;              /* the namespace's node exists (if not: no job yet, an exists watch) */
	int stop;
	int ns_dirty;               /* the namespace's children changed (or are to be read) */
	struct nameset dirty;       /* jobs to read again */
	uint64_t seq;               /* marks made */
	uint64_t done;              /* marks that a finished pass covered */
	unsigned long passes, jobs_read;

	pthread_rwlock_t rw;        /* the table: the thread writes, readers render */
	struct mjob *jobs;          /* sorted by name */
	int njobs;
	uint64_t gen;               /* the table's generation */

	pthread_mutex_t cmu;        /* the rendered documents, one of each kind */
	struct doc {
		char *s;
		size_t len;
		uint64_t gen;
		time_t sec;
	} cache[3];
};

enum { DOC_JOBS, DOC_SERVERS, DOC_INSTANCES };

/* ---- the set of dirty names ------------------------------------------------------------- */

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static void set_add(struct nameset *s, const char *name)
{
	if (2 * (s->n + 1) > s->cap) {
		struct nameset t = { .cap = s->cap ? 2 * s->cap : 64 };
		CTL_NEED(t.v = calloc(t.cap, sizeof *t.v));
		for (size_t i = 0; i < s->cap; i++)
			if (s->v[i]) {
				size_t k = hash(s->v[i]) & (t.cap - 1);
				while (t.v[k]) k = (k + 1) & (t.cap - 1);
				t.v[k] = s->v[i];
				t.n++;
			}
		free(s->v);
		*s = t;
	}
	size_t k = hash(name) & (s->cap - 1);
	for (; s->v[k]; k = (k + 1) & (s->cap - 1))
		if (!strcmp(s->v[k], name)) return;
	CTL_NEED(s->v[k] = strdup(name));
	s->n++;
}

/* ---- the watcher (ZooKeeper's completion thread) ------------------------------------------ */

static void on_watch(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
	(void)zh;
	model_t *m = ctx;
	pthread_mutex_lock(&m->mu);
	if (type == ZOO_SESSION_EVENT) {
		/* a session event reaches every watch (the same state for each) */
		m->zstate = state;
		if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) m->expired = 1;
		pthread_cond_broadcast(&m->cv);
		pthread_mutex_unlock(&m->mu);
		return;
	}
	size_t nl = strlen(m->ns);
	if (path && path[0] == '/' && !strncmp(path + 1, m->ns, nl) && (!path[nl + 1] || path[nl + 1] == '/')) {
		const char *job = path + 1 + nl;
		if (!*job) {
			m->ns_dirty = 1;
		} else {
			job++;
			const char *e = strchr(job, '/');
			char name[CTL_PATH_MAX];
			snprintf(name, sizeof name, "%.*s", e ? (int)(e - job) : (int)strlen(job), job);
			set_add(&m->dirty, name);
		}
		m->seq++;
		pthread_cond_broadcast(&m->cv);
	}
	pthread_mutex_unlock(&m->mu);
}

/* ---- the session ------------------------------------------------------------------------- */

static void auth_done(int rc, const void *data)
{
	model_t *m = (model_t *)data;
	pthread_mutex_lock(&m->mu);
	if (rc != ZOK) m->expired = 1;   /* a refused digest: try a new session later */
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
}

/* a connected session in m->zh, or 0 when stopping; retries every second */
static int connect_session(model_t *m)
{
	for (;;) {
		pthread_mutex_lock(&m->mu);
		zhandle_t *old = m->zh;
		m->zh = NULL;
		m->c.zh = NULL;
		m->built = 0;
		m->expired = 0;
		m->zstate = 0;
		int stop = m->stop;
		pthread_mutex_unlock(&m->mu);
		if (old) zookeeper_close(old);
		if (stop) return 0;
		zhandle_t *zh = zookeeper_init(m->hosts, on_watch, 10000, NULL, m, 0);
		if (zh) {
			pthread_mutex_lock(&m->mu);
			m->zh = zh;
			struct timespec dl;
			clock_gettime(CLOCK_REALTIME, &dl);
			dl.tv_sec += 10;
			while (!m->stop && m->zstate != ZOO_CONNECTED_STATE && !m->expired &&
			       pthread_cond_timedwait(&m->cv, &m->mu, &dl) != ETIMEDOUT) {}
			int ok = m->zstate == ZOO_CONNECTED_STATE && !m->expired;
			pthread_mutex_unlock(&m->mu);
			/* the digest goes before every later request; a refused one fails the session
			 * (AUTH_FAILED: expired, a new one later) */
			if (ok && m->digest && zoo_add_auth(zh, "digest", m->digest, (int)strlen(m->digest), auth_done, m) != ZOK)
				ok = 0;
			if (ok) {
				m->c.zh = zh;
				return 1;
			}
		}
		struct timespec one = { 1, 0 };
		nanosleep(&one, NULL);
	}
}

/* ---- a pass: read what is dirty, swap it in ------------------------------------------------ */

static int cmp_mjob(const void *a, const void *b)
{
	return strcmp(((const struct mjob *)a)->name, ((const struct mjob *)b)->name);
}

static struct mjob *find(model_t *m, const char *name)
{
	struct mjob key = { .name = (char *)name };
	/* no table yet (NULL): bsearch may not be given it, even for 0 elements (UBSan stops serve) */
	return m->njobs ? bsearch(&key, m->jobs, (size_t)m->njobs, sizeof *m->jobs, cmp_mjob) : NULL;
}

static void snap_drop(struct snap_job *j)
{
	if (j) snap_free(j);
	free(j);
}

/* One pass. all: every job (a new session). 0, or -1 if a read failed (then what it took is
 * marked again). */
static int pass(model_t *m, int all)
{
	pthread_mutex_lock(&m->mu);
	int ns = m->ns_dirty || all;
	m->ns_dirty = 0;
	struct nameset d = m->dirty;
	memset(&m->dirty, 0, sizeof m->dirty);
	uint64_t target = m->seq;
	pthread_mutex_unlock(&m->mu);

	/* the table to be: the namespace's children (listed again, or as they are) */
	char **kids = NULL;
	int nk = 0, r = 0;
	if (ns) {
		char p[CTL_PATH_MAX];
		struct ctl_read rd = { .op = CTL_CHILDREN, .path = ctl_path(&m->c, p, "%s", "") };
		ctl_read_many(&m->c, &rd, 1);
		if (rd.rc != ZOK && rd.rc != ZNONODE) {
			r = -1;
			goto out;
		}
		/* none: no jobs, an exists watch for its creation (ctl_read_many) */
		pthread_mutex_lock(&m->mu);
		m->ns_exists = rd.rc == ZOK;
		pthread_mutex_unlock(&m->mu);
		kids = rd.names, nk = rd.n;
	}
	/* what to read: new names, the dirty ones that stay, or all */
	pthread_rwlock_rdlock(&m->rw);
	int n = ns ? nk : m->njobs;
	char **names = calloc((size_t)n + 1, sizeof *names);
	CTL_NEED(names);
	int nread = 0;
	for (int i = 0; i < n; i++) {
		const char *name = ns ? kids[i] : m->jobs[i].name;
		int want = all;
		if (!want) {
			const struct mjob *j = find(m, name);
			want = !j || !j->snap;
		}
		if (!want && d.n) {
			size_t k = hash(name) & (d.cap - 1);
			for (; d.v[k] && !want; k = (k + 1) & (d.cap - 1)) want = !strcmp(d.v[k], name);
		}
		if (want) names[nread++] = (char *)name;
	}
	pthread_rwlock_unlock(&m->rw);
	struct snap_job *got = calloc((size_t)nread + 1, sizeof *got);
	CTL_NEED(got);
	if (nread && snap_read_many(&m->c, (const char *const *)names, nread, got)) r = -1;
	if (r) {
		for (int i = 0; i < nread; i++) snap_free(&got[i]);
		free(got);
		free(names);
		goto out;
	}
	/* swap: the new table (ns) or the new snapshots in the old one */
	struct snap_job **fresh = calloc((size_t)nread + 1, sizeof *fresh);
	struct mjob *swapped = calloc((size_t)nread + 1, sizeof *swapped);   /* where fresh[i] went: the table's */
	CTL_NEED(fresh && swapped);
	for (int i = 0; i < nread; i++) {
		CTL_NEED(fresh[i] = malloc(sizeof **fresh));
		*fresh[i] = got[i];
	}
	free(got);
	struct mjob *old = NULL;
	int nold = 0;
	pthread_rwlock_wrlock(&m->rw);
	if (ns) {
		struct mjob *t = calloc((size_t)nk + 1, sizeof *t);
		CTL_NEED(t);
		for (int i = 0; i < nk; i++) {
			struct mjob *j = find(m, kids[i]);
			t[i].name = kids[i];
			kids[i] = NULL;
			if (j) t[i].snap = j->snap, j->snap = NULL;
		}
		old = m->jobs, nold = m->njobs;
		m->jobs = t, m->njobs = nk;
	}
	for (int i = 0, k = 0; i < nread; i++) {
		while (k < m->njobs && strcmp(m->jobs[k].name, fresh[i]->name) < 0) k++;
		if (k < m->njobs && !strcmp(m->jobs[k].name, fresh[i]->name)) {
			struct snap_job *x = m->jobs[k].snap;
			m->jobs[k].snap = fresh[i];
			fresh[i] = x;
			swapped[i] = m->jobs[k];
		}
	}
	m->gen++;
	pthread_rwlock_unlock(&m->rw);
	/* what changed, told before the pass counts as done; the table is this thread's to read (only
	 * it writes), so no lock: fresh[i] is now the snapshot before, the table's the one after */
	if (m->changed && m->told) {
		int64_t now = ctl_now_ms();
		for (int i = 0; i < nread; i++)
			if (swapped[i].name) m->changed(m->changed_ctx, swapped[i].name, fresh[i], swapped[i].snap, now);
		for (int i = 0; i < nold; i++)   /* gone from the namespace: their snapshots were not carried over */
			if (old[i].snap) m->changed(m->changed_ctx, old[i].name, old[i].snap, NULL, now);
	}
	free(swapped);
	for (int i = 0; i < nread; i++) snap_drop(fresh[i]);
	free(fresh);
	for (int i = 0; i < nold; i++) free(old[i].name), snap_drop(old[i].snap);
	free(old);
	free(names);
out:
	pthread_mutex_lock(&m->mu);
	if (r) {
		/* again, once the session is back: what this pass took */
		m->ns_dirty |= ns;
		for (size_t i = 0; i < d.cap; i++)
			if (d.v[i]) set_add(&m->dirty, d.v[i]);
	} else {
		m->passes++;
		m->jobs_read += (unsigned long)nread;
		if (target > m->done) m->done = target;
		pthread_cond_broadcast(&m->cv);
	}
	pthread_mutex_unlock(&m->mu);
	for (size_t i = 0; i < d.cap; i++) free(d.v[i]);
	free(d.v);
	ctl_strv_free(kids, nk);
	return r;
}

static void *run(void *arg)
{
	model_t *m = arg;
	while (connect_session(m)) {
		int all = 1;
		for (;;) {
			pthread_mutex_lock(&m->mu);
			while (!m->stop && !m->expired && !all &&
			       (m->zstate != ZOO_CONNECTED_STATE || (!m->ns_dirty && !m->dirty.n)))
				pthread_cond_wait(&m->cv, &m->mu);
			int stop = m->stop, expired = m->expired;
			pthread_mutex_unlock(&m->mu);
			if (stop || expired) break;
			if (pass(m, all)) {
				/* lost the connection meanwhile: the state's event wakes us; no spinning */
				struct timespec t = { 0, 200 * 1000000L };
				nanosleep(&t, NULL);
				continue;
			}
			if (all) {
				pthread_mutex_lock(&m->mu);
				m->built = 1;
				pthread_mutex_unlock(&m->mu);
				all = 0;
				m->told = 1;   /* a rebuild after an expired session tells what differs */
			}
		}
		pthread_mutex_lock(&m->mu);
		int stop = m->stop;
		pthread_mutex_unlock(&m->mu);
		if (stop) break;
	}
	return NULL;
}

/* ---- the interface ------------------------------------------------------------------------- */

model_t *model_start(const struct ctl *c, model_change_fn *changed, void *ctx)
{
	model_t *m = calloc(1, sizeof *m);
	if (!m) return NULL;
	m->changed = changed, m->changed_ctx = ctx;
	m->hosts = strdup(c->hosts);
	m->ns = strdup(c->ns);
	m->digest = c->digest ? strdup(c->digest) : NULL;
	if (!m->hosts || !m->ns || (c->digest && !m->digest)) ctl_oom();
	m->c.cmd = "serve";
	m->c.hosts = m->hosts;
	m->c.ns = m->ns;
	m->c.digest = m->digest;
	m->c.kept = 1;
	m->c.msg = m->msg, m->c.msgcap = sizeof m->msg;
	m->c.out = stdout, m->c.err = stderr;
	m->c.watch = on_watch, m->c.watch_ctx = m;
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->cv, NULL);
	pthread_mutex_init(&m->cmu, NULL);
	/* the thread's swaps must not wait behind a stream of readers */
	pthread_rwlockattr_t a;
	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&m->rw, &a);
	pthread_rwlockattr_destroy(&a);
	if (pthread_create(&m->th, NULL, run, m)) {
		free(m->hosts), free(m->ns), free(m->digest), free(m);
		return NULL;
	}
	return m;
}

void model_stop(model_t *m)
{
	if (!m) return;
	pthread_mutex_lock(&m->mu);
	m->stop = 1;
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
	pthread_join(m->th, NULL);
	if (m->zh) zookeeper_close(m->zh);
	for (int i = 0; i < m->njobs; i++) free(m->jobs[i].name), snap_drop(m->jobs[i].snap);
	free(m->jobs);
	for (size_t i = 0; i < m->dirty.cap; i++) free(m->dirty.v[i]);
	free(m->dirty.v);
	for (int k = 0; k < 3; k++) free(m->cache[k].s);
	free(m->hosts), free(m->ns), free(m->digest);
	free(m);
}

static int usable(model_t *m)
{
	pthread_mutex_lock(&m->mu);
	int ok = m->built && !m->expired && m->zstate == ZOO_CONNECTED_STATE;
	pthread_mutex_unlock(&m->mu);
	return ok;
}

/* the document of the table as it is (under rw's read lock) */
static char *render(model_t *m, int kind, size_t *len)
{
	const struct snap_job **v = calloc((size_t)m->njobs + 1, sizeof *v);
	char **extra = calloc((size_t)m->njobs + 1, sizeof *extra);
	CTL_NEED(v && extra);
	int n = 0, nx = 0;
	for (int i = 0; i < m->njobs; i++) {
		const struct snap_job *j = m->jobs[i].snap;
		/* a child without a config node is no job (ctl_jobs): listed in the warnings */
		if (!j || (!j->conf && j->conf_error && !strcmp(j->conf_error, "no config node"))) extra[nx++] = m->jobs[i].name;
		else v[n++] = j;
	}
	char *s = NULL;
	FILE *f = open_memstream(&s, len);
	CTL_NEED(f);
	const struct ctl_jobset set = { v, n, extra, nx };
	if (kind == DOC_JOBS) ctl_jobs_json(&m->c, f, v, n, extra, nx, ctl_now_ms());
	else if (kind == DOC_SERVERS) ctl_servers_out(&m->c, f, 1, &set, NULL, NULL);
	else ctl_instances_out(&m->c, f, 1, &set, NULL, NULL);
	if (fclose(f)) ctl_oom();
	free(v);
	free(extra);
	return s;
}

static char *doc(model_t *m, int kind, size_t *len)
{
	if (!m || !usable(m)) return NULL;
	pthread_mutex_lock(&m->cmu);
	struct doc *d = &m->cache[kind];
	time_t now = time(NULL);
	pthread_rwlock_rdlock(&m->rw);
	if (!d->s || d->gen != m->gen || d->sec != now) {
		free(d->s);
		d->s = render(m, kind, &d->len);
		d->gen = m->gen;
		d->sec = now;
	}
	pthread_rwlock_unlock(&m->rw);
	char *s = malloc(d->len + 1);
	CTL_NEED(s);
	memcpy(s, d->s, d->len + 1);
	*len = d->len;
	pthread_mutex_unlock(&m->cmu);
	return s;
}

char *model_jobs_json(model_t *m, size_t *len)
{
	return doc(m, DOC_JOBS, len);
}

char *model_servers_json(model_t *m, size_t *len)
{
	return doc(m, DOC_SERVERS, len);
}

char *model_instances_json(model_t *m, size_t *len)
{
	return doc(m, DOC_INSTANCES, len);
}

struct syncw {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done, rc;
};

static void synced(int rc, const char *value, const void *data)
{
	(void)value;
	struct syncw *w = (struct syncw *)data;
	pthread_mutex_lock(&w->mu);
	w->done = 1, w->rc = rc;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

int model_sync(model_t *m, int timeout_ms)
{
	if (!m || !usable(m)) return 1;
	struct syncw w = { .done = 0 };
	pthread_mutex_init(&w.mu, NULL);
	pthread_cond_init(&w.cv, NULL);
	char p[CTL_PATH_MAX];
	ctl_path(&m->c, p, "%s", "");
	pthread_mutex_lock(&m->mu);   /* the thread replaces zh under mu */
	int rc = m->zh ? zoo_async(m->zh, p, synced, &w) : ZINVALIDSTATE;
	pthread_mutex_unlock(&m->mu);
	if (rc == ZOK) {
		/* its answer comes, at worst as a lost connection or the handle's close */
		pthread_mutex_lock(&w.mu);
		while (!w.done) pthread_cond_wait(&w.cv, &w.mu);
		rc = w.rc;
		pthread_mutex_unlock(&w.mu);
	}
	pthread_cond_destroy(&w.cv);
	pthread_mutex_destroy(&w.mu);
	if (rc != ZOK) return -1;
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) dl.tv_sec++, dl.tv_nsec -= 1000000000L;
	pthread_mutex_lock(&m->mu);
	uint64_t target = m->seq;   /* the watches of what came before the sync have marked by now */
	int r = 0;
	while (m->done < target && !r) r = pthread_cond_timedwait(&m->cv, &m->mu, &dl) == ETIMEDOUT ? -1 : 0;
	pthread_mutex_unlock(&m->mu);
	return r;
}

void model_counts(model_t *m, unsigned long *passes, unsigned long *jobs_read)
{
	pthread_mutex_lock(&m->mu);
	*passes = m->passes;
	*jobs_read = m->jobs_read;
	pthread_mutex_unlock(&m->mu);
}
