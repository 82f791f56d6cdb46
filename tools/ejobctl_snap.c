/* tools/ejobctl_snap.c: one job's state read from ZooKeeper, and what ElasticJob's lifecycle API
 * and ejob derive from it (tools/ejobctl_snap.h). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cron/cron.h"
#include "cron/tz.h"
#include "tools/ejobctl_snap.h"

static void warn(struct snap_job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct snap_job *j, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	char **w = realloc(j->warn, (size_t)(j->nwarn + 1) * sizeof *w);
	CTL_NEED(w);
	j->warn = w;
	CTL_NEED(w[j->nwarn] = strdup(buf));
	j->nwarn++;
}

/* ---- the reads --------------------------------------------------------------------------- */

/* One by one, the reads of a job were 6 + 8 per item round trips (a listing of 10,000 jobs took a
 * minute); now they go out together (ctl_read_many), in three stages per chunk of jobs: what every
 * job has, then what its listings name (each instance, server and item), then the data of the
 * item nodes that an item's listing shows (running, failover, failovering). Whether a node exists
 * comes from its parent's listing where the parent is read anyway (leader/failover/alive,
 * leader/failover/items, sharding/{i}): the same answer as an exists per node, in a third of the
 * requests, which is what the ZooKeeper server spends its CPU on. (A listing needs READ on the
 * parent where exists needs nothing: a cluster whose ACLs differ between a job's nodes could
 * fail here where it did not; ElasticJob gives every node the same ACL.)
 * The answers are then taken in the order the reads used to be made, so the first failure
 * reported, the warnings and the snapshot are the same as before. */
#define SNAP_CHUNK 1000     /* jobs read at once: bounds the memory of the batch */

enum { A_ROOT, A_CONF, A_INST, A_ALIVE, A_SERV, A_LEADER, A_NECESSARY, A_FQUEUE, A_SHARDING, A_N }; /* per job */
enum { T_OWNER, T_LIST, T_N };                        /* per item: sharding/{i}/instance, sharding/{i} */
enum { U_RUNNING, U_FAILOVER, U_FAILOVERING, U_LAST, U_N };  /* per item, stage 3, if listed */
static const char *const u_name[U_N] = { "running", "failover", "failovering", "last" };

/* a batch whose requests own their paths */
struct reads {
	struct ctl_read *v;
	int n, cap;
};

static void add(struct reads *q, enum ctl_op op, const char *path)
{
	if (q->n == q->cap) {
		q->cap = q->cap ? 2 * q->cap : 256;
		CTL_NEED(q->v = realloc(q->v, (size_t)q->cap * sizeof *q->v));
	}
	char *p = strdup(path);
	CTL_NEED(p);
	q->v[q->n++] = (struct ctl_read){ .op = op, .path = p };
}

/* what ctl_read_many gave and nobody took, and the paths */
static void reads_free(struct reads *q)
{
	for (int i = 0; i < q->n; i++) {
		free((char *)q->v[i].path);
		free(q->v[i].data);
		ctl_strv_free(q->v[i].names, q->v[i].n);
	}
	free(q->v);
	memset(q, 0, sizeof *q);
}

/* where a job's reads are */
struct plan {
	int a;                      /* its A_N reads in stage 1 */
	int inst, serv, items;      /* its first read in stage 2: 1 per instance, 1 per server, T_N per item */
	int *item;                  /* the items read in stage 2: sharding's numeric children, sorted, distinct */
	int nitem;
	int *more;                  /* per item, U_N reads in stage 3: where, or -1 if not listed */
};

/* Take an answer: a read that may find nothing: ZOK or ZNONODE is fine (*data NULL for ZNONODE);
 * anything else fails the command. */
static int get_opt(struct ctl *c, struct ctl_read *r, char **data, struct Stat *st)
{
	*data = NULL;
	if (r->rc == ZNONODE) return 0;
	if (r->rc != ZOK) return ctl_fail(c, r->rc, "cannot read", r->path);
	*data = r->data;
	r->data = NULL;
	if (st) *st = r->st;
	return 0;
}

static int children_opt(struct ctl *c, struct ctl_read *r, char ***names, int *n)
{
	*names = NULL;
	*n = 0;
	if (r->rc == ZNONODE) return 0;
	if (r->rc != ZOK) return ctl_fail(c, r->rc, "cannot list", r->path);
	*names = r->names;
	*n = r->n;
	r->names = NULL;
	r->n = 0;
	return 0;
}

static int exists_opt(struct ctl *c, const struct ctl_read *r, int *yes)
{
	*yes = r->rc == ZOK;
	return r->rc == ZOK || r->rc == ZNONODE ? 0 : ctl_fail(c, r->rc, "cannot read", r->path);
}

char *snap_server_ip(const char *data)
{
	for (const char *p = data; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len > 9 && !strncmp(p, "serverIp:", 9)) {
			const char *v = p + 9;
			while (v < p + len && (*v == ' ' || *v == '\'' || *v == '"')) v++;
			const char *ve = p + len;
			while (ve > v && (ve[-1] == ' ' || ve[-1] == '\r' || ve[-1] == '\'' || ve[-1] == '"')) ve--;
			if (ve > v) return strndup(v, (size_t)(ve - v));
		}
		p += len + (e ? 1 : 0);
	}
	return NULL;
}

static int cmp_item(const void *a, const void *b)
{
	const struct snap_item *x = a, *y = b;
	return (x->item > y->item) - (x->item < y->item);
}

/* the item number a sharding child names: digits only, below 2^31; -1 if not */
static int item_number(const char *s)
{
	if (!*s || strlen(s) > 9 || strspn(s, "0123456789") != strlen(s)) return -1;
	return atoi(s);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* stage 1: what every job has */
static void plan_job(struct ctl *c, struct reads *q, const char *job, struct plan *pl)
{
	char p[CTL_PATH_MAX];
	pl->a = q->n;
	add(q, CTL_GET, ctl_path(c, p, "/%s", job));
	add(q, CTL_GET, ctl_path(c, p, "/%s/config", job));
	add(q, CTL_CHILDREN, ctl_path(c, p, "/%s/instances", job));
	add(q, CTL_CHILDREN, ctl_path(c, p, "/%s/leader/failover/alive", job));
	add(q, CTL_CHILDREN, ctl_path(c, p, "/%s/servers", job));
	add(q, CTL_GET, ctl_path(c, p, "/%s/leader/election/instance", job));
	add(q, CTL_EXISTS, ctl_path(c, p, "/%s/leader/sharding/necessary", job));
	add(q, CTL_CHILDREN, ctl_path(c, p, "/%s/leader/failover/items", job));
	add(q, CTL_CHILDREN, ctl_path(c, p, "/%s/sharding", job));
}

/* stage 2: what stage 1 listed (a: the job's stage 1 answers) */
static void plan_names(struct ctl *c, struct reads *q, const char *job, const struct ctl_read *a, struct plan *pl)
{
	char p[CTL_PATH_MAX];
	pl->inst = q->n;
	for (int i = 0; a[A_INST].rc == ZOK && i < a[A_INST].n; i++)
		add(q, CTL_GET, ctl_path(c, p, "/%s/instances/%s", job, a[A_INST].names[i]));
	pl->serv = q->n;
	for (int i = 0; a[A_SERV].rc == ZOK && i < a[A_SERV].n; i++)
		add(q, CTL_GET, ctl_path(c, p, "/%s/servers/%s", job, a[A_SERV].names[i]));
	pl->items = q->n;
	const struct ctl_read *sh = &a[A_SHARDING];
	if (sh->rc != ZOK || !sh->n) return;
	CTL_NEED(pl->item = calloc((size_t)sh->n, sizeof *pl->item));
	for (int k = 0; k < sh->n; k++) {
		int i = item_number(sh->names[k]);
		if (i >= 0) pl->item[pl->nitem++] = i;
	}
	qsort(pl->item, (size_t)pl->nitem, sizeof *pl->item, cmp_int);
	int w = 0;
	for (int k = 0; k < pl->nitem; k++)
		if (!w || pl->item[w - 1] != pl->item[k]) pl->item[w++] = pl->item[k];
	pl->nitem = w;
	for (int k = 0; k < pl->nitem; k++) {
		int i = pl->item[k];
		add(q, CTL_GET, ctl_path(c, p, "/%s/sharding/%d/instance", job, i));
		add(q, CTL_CHILDREN, ctl_path(c, p, "/%s/sharding/%d", job, i));
	}
}

/* the name is among the sorted names of a listing that answered */
static int listed(const struct ctl_read *r, const char *name)
{
	return r->rc == ZOK && bsearch(&name, r->names, (size_t)r->n, sizeof *r->names, cmp_str);
}

/* stage 3: the data of what an item's listing shows (b: the job's stage 2 answers) */
static void plan_more(struct ctl *c, struct reads *q, const char *job, const struct ctl_read *b, struct plan *pl)
{
	char p[CTL_PATH_MAX];
	if (!pl->nitem) return;
	CTL_NEED(pl->more = calloc((size_t)pl->nitem * U_N, sizeof *pl->more));
	for (int k = 0; k < pl->nitem; k++)
		for (int u = 0; u < U_N; u++) {
			int *at = &pl->more[k * U_N + u];
			*at = -1;
			if (!listed(&b[pl->items + k * T_N + T_LIST], u_name[u])) continue;
			*at = q->n;
			add(q, CTL_GET, ctl_path(c, p, "/%s/sharding/%d/%s", job, pl->item[k], u_name[u]));
		}
}

/* the answers about instances: a is the listing, alive leader/failover/alive's, b the data of each one */
static int take_instances(struct ctl *c, struct snap_job *j, struct ctl_read *a, const struct ctl_read *alive,
                          struct ctl_read *b)
{
	char **ids;
	int n;
	if (children_opt(c, a, &ids, &n)) return 1;
	CTL_NEED(!n || (j->inst = calloc((size_t)n, sizeof *j->inst)));
	for (int i = 0; i < n; i++) {
		struct snap_inst *in = &j->inst[j->ninst];
		const char *p = b[i].path;
		char *data;
		if (get_opt(c, &b[i], &data, NULL)) {
			ctl_strv_free(ids, n);
			return 1;
		}
		if (!data) continue;                 /* gone since the listing */
		in->id = ids[i];
		ids[i] = NULL;
		const char *sep = strstr(in->id, "@-@");
		in->ip = snap_server_ip(data);
		in->pid = -1;
		if (sep) {
			char *e;
			errno = 0;
			long pid = strtol(sep + 3, &e, 10);
			if (!errno && e != sep + 3 && !*e && pid > 0) in->pid = pid;
		}
		if (!sep) warn(j, "%s: an instance name without '@-@' (ElasticJob's is {ip}@-@{pid})", p);
		if (!in->ip) {
			if (sep) CTL_NEED(in->ip = strndup(in->id, (size_t)(sep - in->id)));
			warn(j, "%s: its data has no serverIp (%s)", p, sep ? "taken from the name" : "unknown");
		}
		free(data);
		if (alive->rc != ZOK && alive->rc != ZNONODE) {
			ctl_strv_free(ids, n);
			return ctl_fail(c, alive->rc, "cannot list", alive->path);
		}
		in->ejob = listed(alive, in->id);
		j->ninst++;
	}
	ctl_strv_free(ids, n);
	if (alive->rc != ZOK && alive->rc != ZNONODE) return ctl_fail(c, alive->rc, "cannot list", alive->path);
	if (alive->rc == ZOK && alive->n) {
		CTL_NEED(j->alive = calloc((size_t)alive->n, sizeof *j->alive));
		for (int i = 0; i < alive->n; i++) CTL_NEED(j->alive[j->nalive++] = strdup(alive->names[i]));
	}
	return 0;
}

static int take_servers(struct ctl *c, struct snap_job *j, struct ctl_read *a, struct ctl_read *b)
{
	char **ips;
	int n;
	if (children_opt(c, a, &ips, &n)) return 1;
	CTL_NEED(!n || (j->serv = calloc((size_t)n, sizeof *j->serv)));
	for (int i = 0; i < n; i++) {
		char *data;
		if (get_opt(c, &b[i], &data, NULL)) {
			ctl_strv_free(ips, n);
			return 1;
		}
		if (!data) continue;
		struct snap_server *s = &j->serv[j->nserv++];
		s->ip = ips[i];
		ips[i] = NULL;
		s->status = data;
		s->disabled = !strcasecmp(data, "DISABLED");
	}
	ctl_strv_free(ips, n);
	return 0;
}

/* r: the item's T_N reads; u: its stage 3 answers (NULL: not listed); queue: leader/failover/items */
static int take_item(struct ctl *c, struct snap_job *j, struct snap_item *it, struct ctl_read *r,
                     struct ctl_read *u[U_N], char **queue, int nqueue)
{
	struct Stat st;
	char *d;
	if (get_opt(c, &r[T_OWNER], &d, &st)) return 1;
	const struct ctl_read *ls = &r[T_LIST];
	if (ls->rc != ZOK && ls->rc != ZNONODE) return ctl_fail(c, ls->rc, "cannot list", ls->path);
	if (d && *d) {
		it->owner = d;
		it->owner_mzxid = st.mzxid;
	} else {
		free(d);
	}
	d = NULL;
	if (u[U_RUNNING] && get_opt(c, u[U_RUNNING], &d, &st)) return 1;
	if (d) {
		it->running = 1;
		it->running_by = d;
		it->running_since_ms = st.ctime;
	}
	it->completed = listed(ls, "completed");
	it->disabled = listed(ls, "disabled");
	it->misfire = listed(ls, "misfire");
	if (u[U_FAILOVER] && get_opt(c, u[U_FAILOVER], &it->failover, NULL)) return 1;
	if (u[U_FAILOVERING] && get_opt(c, u[U_FAILOVERING], &it->failovering, NULL)) return 1;
	d = NULL;
	if (u[U_LAST] && get_opt(c, u[U_LAST], &d, &st)) return 1;
	if (d) {
		/* its length, not strlen: a NUL in the node makes it garbage, not a shorter record */
		int got = lastrun_parse(d, st.dataLength > 0 ? (size_t)st.dataLength : 0, &it->last);
		it->has_last = got == 1;
		if (got < 0) warn(j, "/%s/%s/sharding/%d/last: not a last-execution record (left out)", c->ns, j->name, it->item);
		free(d);
	}
	char name[16];
	snprintf(name, sizeof name, "%d", it->item);
	const char *key = name;
	it->queued = nqueue && bsearch(&key, queue, (size_t)nqueue, sizeof *queue, cmp_str) != NULL;
	it->owner_online = it->owner && snap_inst_find(j, it->owner);
	return 0;
}

static int take_items(struct ctl *c, struct snap_job *j, struct ctl_read *a, struct ctl_read *b, struct ctl_read *b3,
                      const struct plan *pl, char **queue, int nqueue)
{
	char **kids;
	int n;
	if (children_opt(c, a, &kids, &n)) return 1;
	int total = j->conf ? (int)j->conf->sharding_total_count : 0;
	CTL_NEED(j->items = calloc((size_t)(n + total + 1), sizeof *j->items));
	char *seen = calloc((size_t)total + 1, 1);
	CTL_NEED(seen);
	for (int k = 0; k < n; k++) {
		int i = item_number(kids[k]);
		if (i < 0) {
			warn(j, "/%s/%s/sharding/%s: not an item number (left out)", c->ns, j->name, kids[k]);
			continue;
		}
		if (i < total) seen[i] = 1;
		j->items[j->nitems].item = i;
		j->items[j->nitems++].in_zk = 1;
	}
	for (int i = 0; i < total; i++)
		if (!seen[i]) j->items[j->nitems++].item = i;
	free(seen);
	ctl_strv_free(kids, n);
	qsort(j->items, (size_t)j->nitems, sizeof *j->items, cmp_item);
	/* "7" and "07" name the same item: keep the first */
	int w = 0;
	for (int k = 0; k < j->nitems; k++) {
		if (w && j->items[w - 1].item == j->items[k].item) continue;
		j->items[w++] = j->items[k];
	}
	j->nitems = w;
	int t = 0;                  /* the in_zk items, in order, are the plan's */
	for (int k = 0; k < j->nitems; k++) {
		struct snap_item *it = &j->items[k];
		if (!it->in_zk) continue;
		if (t >= pl->nitem || pl->item[t] != it->item) {
			fprintf(stderr, "ejobctl: %s item %d was not read (a bug)\n", j->name, it->item);
			abort();
		}
		struct ctl_read *u[U_N];
		for (int x = 0; x < U_N; x++) u[x] = pl->more[t * U_N + x] < 0 ? NULL : &b3[pl->more[t * U_N + x]];
		if (take_item(c, j, it, &b[t * T_N], u, queue, nqueue)) return 1;
		t++;
		if (it->owner && (uint64_t)it->owner_mzxid > j->epoch) j->epoch = (uint64_t)it->owner_mzxid;
	}
	return 0;
}

/* the job from its answers, taken in the order the reads used to be made */
static int take_job(struct ctl *c, struct snap_job *j, struct ctl_read *a, struct ctl_read *b, struct ctl_read *b3,
                    const struct plan *pl)
{
	char *d;
	if (get_opt(c, &a[A_ROOT], &d, NULL)) return 1;
	j->root_type = d ? d : strdup("");
	CTL_NEED(j->root_type);
	const char *p = a[A_CONF].path;
	j->conf_ctime_ms = a[A_CONF].rc == ZOK ? a[A_CONF].st.ctime : -1;
	if (get_opt(c, &a[A_CONF], &d, NULL)) return 1;
	if (!d) {
		CTL_NEED(j->conf_error = strdup("no config node"));
		warn(j, "%s: no config node", p);
	} else {
		conf_diags_t *diags = NULL;
		j->conf = conf_node_parse(d, strlen(d), p, &diags);
		if (!j->conf) {
			const conf_diag_t *g = NULL;
			for (size_t k = 0; diags && k < conf_diags_count(diags) && !g; k++)
				if (conf_diags_get(diags, k)->level == CONF_DIAG_ERROR) g = conf_diags_get(diags, k);
			CTL_NEED(j->conf_error = strdup(g ? g->text : "out of memory"));
			warn(j, "%s", j->conf_error);
		} else {
			/* what the node's readers take their own way, or keep from before (conf_node_take) */
			for (size_t k = 0; diags && k < conf_diags_count(diags); k++) {
				const conf_diag_t *g = conf_diags_get(diags, k);
				if (g->level == CONF_DIAG_KEY) warn(j, "%s (supervisors keep the value in force)", g->text);
				else warn(j, "%s", g->text);
			}
		}
		conf_diags_free(diags);
		free(d);
	}
	const char *t = j->conf && j->conf->type != CONF_JOB_NONE ? conf_job_type_name(j->conf->type) : j->root_type;
	snprintf(j->type, sizeof j->type, "%s", t);
	for (char *q = j->type; *q; q++) *q = (char)toupper((unsigned char)*q);
	if (take_instances(c, j, &a[A_INST], &a[A_ALIVE], &b[pl->inst]) || take_servers(c, j, &a[A_SERV], &b[pl->serv])) return 1;
	if (get_opt(c, &a[A_LEADER], &j->leader, NULL)) return 1;
	if (exists_opt(c, &a[A_NECESSARY], &j->resharding_due)) return 1;
	char **q;
	int nq;
	p = a[A_FQUEUE].path;
	if (children_opt(c, &a[A_FQUEUE], &q, &nq)) return 1;
	for (int k = 0; k < nq; k++)
		if (item_number(q[k]) < 0) warn(j, "%s/%s: not an item number (left out)", p, q[k]);
	int r = take_items(c, j, &a[A_SHARDING], &b[pl->items], b3, pl, q, nq);
	ctl_strv_free(q, nq);
	return r;
}

int snap_read_many(struct ctl *c, const char *const *names, int n, struct snap_job *jobs)
{
	memset(jobs, 0, (size_t)n * sizeof *jobs);
	for (int i = 0; i < n; i++) CTL_NEED(jobs[i].name = strdup(names[i]));
	for (int at = 0; at < n; at += SNAP_CHUNK) {
		int m = n - at < SNAP_CHUNK ? n - at : SNAP_CHUNK;
		struct snap_job *j = jobs + at;
		struct reads q1 = { 0 }, q2 = { 0 }, q3 = { 0 };
		struct plan *pl = calloc((size_t)m, sizeof *pl);
		CTL_NEED(pl);
		for (int k = 0; k < m; k++) plan_job(c, &q1, j[k].name, &pl[k]);
		ctl_read_many(c, q1.v, q1.n);
		for (int k = 0; k < m; k++) plan_names(c, &q2, j[k].name, &q1.v[pl[k].a], &pl[k]);
		ctl_read_many(c, q2.v, q2.n);
		for (int k = 0; k < m; k++) plan_more(c, &q3, j[k].name, q2.v, &pl[k]);
		ctl_read_many(c, q3.v, q3.n);
		int r = 0;
		for (int k = 0; k < m && !r; k++) r = take_job(c, &j[k], &q1.v[pl[k].a], q2.v, q3.v, &pl[k]);
		for (int k = 0; k < m; k++) free(pl[k].item), free(pl[k].more);
		free(pl);
		reads_free(&q1);
		reads_free(&q2);
		reads_free(&q3);
		if (r) return 1;
	}
	return 0;
}

int snap_read(struct ctl *c, const char *job, struct snap_job *j)
{
	return snap_read_many(c, &job, 1, j);
}

void snap_free(struct snap_job *j)
{
	for (int i = 0; i < j->ninst; i++) free(j->inst[i].id), free(j->inst[i].ip);
	for (int i = 0; i < j->nserv; i++) free(j->serv[i].ip), free(j->serv[i].status);
	for (int i = 0; i < j->nitems; i++) {
		struct snap_item *it = &j->items[i];
		free(it->owner), free(it->running_by), free(it->failover), free(it->failovering);
		lastrun_clear(&it->last);
	}
	free(j->inst), free(j->serv), free(j->items);
	ctl_strv_free(j->alive, j->nalive);
	ctl_strv_free(j->warn, j->nwarn);
	conf_job_free(j->conf);
	free(j->conf_error), free(j->name), free(j->root_type), free(j->leader);
	memset(j, 0, sizeof *j);
}

int snap_alive(const struct snap_job *j, const char *id)
{
	return id && j->nalive && bsearch(&id, j->alive, (size_t)j->nalive, sizeof *j->alive, cmp_str);
}

const char *snap_inst_state(const struct snap_job *j, const char *id, const char *ip)
{
	if (snap_inst_find(j, id)) return "online";
	if (!snap_alive(j, id)) return "offline";
	const struct snap_server *sv = snap_server_find(j, ip);
	return sv && sv->status && !strcasecmp(sv->status, "DRAINING") ? "draining" : "shutdown";
}

const struct snap_inst *snap_inst_find(const struct snap_job *j, const char *id)
{
	for (int i = 0; id && i < j->ninst; i++)
		if (!strcmp(j->inst[i].id, id)) return &j->inst[i];
	return NULL;
}

const struct snap_server *snap_server_find(const struct snap_job *j, const char *ip)
{
	for (int i = 0; ip && i < j->nserv; i++)
		if (!strcmp(j->serv[i].ip, ip)) return &j->serv[i];
	return NULL;
}

const char *snap_job_status(const struct snap_job *j, char *why, size_t len)
{
	char dummy[8];
	if (!why) why = dummy, len = sizeof dummy;
	/* JobStatisticsAPIImpl.getJobStatus: no instance; every server disabled (0 of 0 counts);
	 * an owner that is not online, or no owner at all; else OK */
	if (!j->ninst) {
		snprintf(why, len, "no instance online");
		return "CRASHED";
	}
	int dis = 0;
	for (int i = 0; i < j->nserv; i++) dis += j->serv[i].disabled;
	if (dis == j->nserv) {
		snprintf(why, len, j->nserv ? "every server (%d) is disabled" : "no server node", j->nserv);
		return "DISABLED";
	}
	int owners = 0;
	for (int k = 0; k < j->nitems; k++) {
		const struct snap_item *it = &j->items[k];
		if (!it->owner) continue;
		owners++;
		if (!it->owner_online) {
			snprintf(why, len, "item %d is assigned to %s, which is not online", it->item, it->owner);
			return "SHARDING_FLAG";
		}
	}
	if (!owners) {
		snprintf(why, len, "never sharded (no item has an owner)");
		return "SHARDING_FLAG";
	}
	snprintf(why, len, "%s", j->resharding_due ? "resharding due at the next fire" : "");
	return "OK";
}

const char *snap_item_ej_status(const struct snap_item *it)
{
	/* ShardingInfo.ShardingStatus.getShardingStatus(disabled, running, !instance online) */
	if (it->disabled) return "DISABLED";
	if (it->running) return "RUNNING";
	if (!it->owner_online) return "SHARDING_FLAG";
	return "PENDING";
}

const char *snap_item_state(const struct snap_item *it)
{
	if (it->failover) return "failover";
	if (it->queued) return "failover-queued";
	if (it->running) return "running";
	if (it->misfire) return "misfire";
	if (it->disabled) return "disabled";
	if (!it->owner) return "unassigned";
	if (!it->owner_online) return "orphaned";
	if (it->completed) return "completed";
	return "pending";
}

static int current_year(void)
{
	int64_t y;
	int m, d;
	tz_civil_from_days((int64_t)time(NULL) / 86400, &y, &m, &d);
	return (int)y;
}

int64_t snap_fire_after(const struct snap_job *j, int64_t after, char *iso, size_t len)
{
	if (len) *iso = 0;
	if (!j->conf || !j->conf->cron_compiled) return -1;
	tz_err_t te;
	tz_t *own = NULL;
	const tz_t *tz = j->conf->tz;
	if (!tz) tz = own = tz_load_default(&te);
	if (!tz) return -1;
	cron_err_t ce;
	/* Quartz's year limit of the day, as the supervisor runs it */
	cron_t *cr = cron_with_max_year(j->conf->cron_compiled, current_year() + 100, &ce);
	int64_t t = cr ? cron_next(cr, tz, after) : -1;
	if (t >= 0 && len) tz_format_iso(tz, t, iso, len);
	cron_free(cr);
	tz_free(own);
	return t;
}

int64_t snap_next_fire(const struct snap_job *j, char *iso, size_t len)
{
	return snap_fire_after(j, (int64_t)time(NULL), iso, len);
}

void snap_time(int64_t ms, char *buf, size_t len)
{
	static tz_t *tz;
	static int tried;
	tz_err_t te;
	if (!tried) tz = tz_load_default(&te), tried = 1;
	if (!tz || tz_format_iso(tz, ms / 1000, buf, len) < 0) snprintf(buf, len, "%lld", (long long)(ms / 1000));
}
