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

#define NEED(x)                                                         \
	do {                                                            \
		if (!(x)) {                                             \
			fputs("ejobctl: out of memory\n", stderr);      \
			exit(1);                                        \
		}                                                       \
	} while (0)

static void warn(struct snap_job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct snap_job *j, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	char **w = realloc(j->warn, (size_t)(j->nwarn + 1) * sizeof *w);
	NEED(w);
	j->warn = w;
	NEED(w[j->nwarn] = strdup(buf));
	j->nwarn++;
}

/* A read that may find nothing: ZOK or ZNONODE is fine (*data NULL for ZNONODE); anything else
 * fails the command. */
static int get_opt(struct ctl *c, const char *path, char **data, struct Stat *st)
{
	int rc = ctl_get(c, path, data, st);
	if (rc == ZNONODE) {
		*data = NULL;
		return 0;
	}
	return rc == ZOK ? 0 : ctl_fail(c, rc, "cannot read", path);
}

static int children_opt(struct ctl *c, const char *path, char ***names, int *n)
{
	int rc = ctl_children(c, path, names, n);
	if (rc == ZNONODE) return 0;
	return rc == ZOK ? 0 : ctl_fail(c, rc, "cannot list", path);
}

static int exists_opt(struct ctl *c, const char *path, int *yes)
{
	int rc = ctl_exists(c, path, NULL);
	*yes = rc == ZOK;
	return rc == ZOK || rc == ZNONODE ? 0 : ctl_fail(c, rc, "cannot read", path);
}

/* "serverIp: X" of an instance node's YAML (two flat keys, as ElasticJob's JobInstance dumps it) */
static char *server_ip_of(const char *data)
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

static int read_instances(struct ctl *c, struct snap_job *j)
{
	char p[CTL_PATH_MAX];
	char **ids;
	int n;
	if (children_opt(c, ctl_path(c, p, "/%s/instances", j->name), &ids, &n)) return 1;
	NEED(!n || (j->inst = calloc((size_t)n, sizeof *j->inst)));
	for (int i = 0; i < n; i++) {
		struct snap_inst *in = &j->inst[j->ninst];
		char *data;
		ctl_path(c, p, "/%s/instances/%s", j->name, ids[i]);
		if (get_opt(c, p, &data, NULL)) {
			ctl_strv_free(ids, n);
			return 1;
		}
		if (!data) continue;                 /* gone since the listing */
		in->id = ids[i];
		ids[i] = NULL;
		const char *sep = strstr(in->id, "@-@");
		in->ip = server_ip_of(data);
		in->pid = -1;
		if (sep) {
			char *e;
			errno = 0;
			long pid = strtol(sep + 3, &e, 10);
			if (!errno && e != sep + 3 && !*e && pid > 0) in->pid = pid;
		}
		if (!sep) warn(j, "%s: an instance name without '@-@' (ElasticJob's is {ip}@-@{pid})", p);
		if (!in->ip) {
			if (sep) NEED(in->ip = strndup(in->id, (size_t)(sep - in->id)));
			warn(j, "%s: its data has no serverIp (%s)", p, sep ? "taken from the name" : "unknown");
		}
		free(data);
		int yes;
		if (exists_opt(c, ctl_path(c, p, "/%s/leader/failover/alive/%s", j->name, in->id), &yes)) {
			ctl_strv_free(ids, n);
			return 1;
		}
		in->ejob = yes;
		j->ninst++;
	}
	ctl_strv_free(ids, n);
	return 0;
}

static int read_servers(struct ctl *c, struct snap_job *j)
{
	char p[CTL_PATH_MAX];
	char **ips;
	int n;
	if (children_opt(c, ctl_path(c, p, "/%s/servers", j->name), &ips, &n)) return 1;
	NEED(!n || (j->serv = calloc((size_t)n, sizeof *j->serv)));
	for (int i = 0; i < n; i++) {
		char *data;
		if (get_opt(c, ctl_path(c, p, "/%s/servers/%s", j->name, ips[i]), &data, NULL)) {
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

static int read_item(struct ctl *c, struct snap_job *j, struct snap_item *it)
{
	char p[CTL_PATH_MAX];
	struct Stat st;
	char *d;
	int yes;
	const char *job = j->name;
	int i = it->item;
	if (get_opt(c, ctl_path(c, p, "/%s/sharding/%d/instance", job, i), &d, &st)) return 1;
	if (d && *d) {
		it->owner = d;
		it->owner_mzxid = st.mzxid;
	} else {
		free(d);
	}
	if (get_opt(c, ctl_path(c, p, "/%s/sharding/%d/running", job, i), &d, &st)) return 1;
	if (d) {
		it->running = 1;
		it->running_by = d;
		it->running_since_ms = st.ctime;
	}
	if (exists_opt(c, ctl_path(c, p, "/%s/sharding/%d/completed", job, i), &it->completed)) return 1;
	if (exists_opt(c, ctl_path(c, p, "/%s/sharding/%d/disabled", job, i), &it->disabled)) return 1;
	if (exists_opt(c, ctl_path(c, p, "/%s/sharding/%d/misfire", job, i), &it->misfire)) return 1;
	if (get_opt(c, ctl_path(c, p, "/%s/sharding/%d/failover", job, i), &it->failover, NULL)) return 1;
	if (get_opt(c, ctl_path(c, p, "/%s/sharding/%d/failovering", job, i), &it->failovering, NULL)) return 1;
	if (exists_opt(c, ctl_path(c, p, "/%s/leader/failover/items/%d", job, i), &yes)) return 1;
	it->queued = yes;
	it->owner_online = it->owner && snap_inst_find(j, it->owner);
	return 0;
}

static int read_items(struct ctl *c, struct snap_job *j)
{
	char p[CTL_PATH_MAX];
	char **kids;
	int n;
	if (children_opt(c, ctl_path(c, p, "/%s/sharding", j->name), &kids, &n)) return 1;
	int total = j->conf ? (int)j->conf->sharding_total_count : 0;
	NEED(j->items = calloc((size_t)(n + total + 1), sizeof *j->items));
	char *seen = calloc((size_t)total + 1, 1);
	NEED(seen);
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
	for (int k = 0; k < j->nitems; k++) {
		struct snap_item *it = &j->items[k];
		if (it->in_zk && read_item(c, j, it)) return 1;
		if (it->in_zk && it->owner && (uint64_t)it->owner_mzxid > j->epoch) j->epoch = (uint64_t)it->owner_mzxid;
	}
	return 0;
}

int snap_read(struct ctl *c, const char *job, struct snap_job *j)
{
	char p[CTL_PATH_MAX];
	memset(j, 0, sizeof *j);
	NEED(j->name = strdup(job));
	char *d;
	if (get_opt(c, ctl_path(c, p, "/%s", job), &d, NULL)) return 1;
	j->root_type = d ? d : strdup("");
	NEED(j->root_type);
	if (get_opt(c, ctl_path(c, p, "/%s/config", job), &d, NULL)) return 1;
	if (!d) {
		NEED(j->conf_error = strdup("no config node"));
		warn(j, "%s: no config node", p);
	} else {
		conf_diags_t *diags = NULL;
		j->conf = conf_node_parse(d, strlen(d), p, &diags);
		if (!j->conf) {
			const conf_diag_t *g = diags && conf_diags_count(diags) ? conf_diags_get(diags, 0) : NULL;
			NEED(j->conf_error = strdup(g ? g->text : "out of memory"));
			warn(j, "%s", j->conf_error);
		}
		conf_diags_free(diags);
		free(d);
	}
	const char *t = j->conf && j->conf->type != CONF_JOB_NONE ? conf_job_type_name(j->conf->type) : j->root_type;
	snprintf(j->type, sizeof j->type, "%s", t);
	for (char *q = j->type; *q; q++) *q = (char)toupper((unsigned char)*q);
	if (read_instances(c, j) || read_servers(c, j)) return 1;
	if (get_opt(c, ctl_path(c, p, "/%s/leader/election/instance", job), &j->leader, NULL)) return 1;
	if (exists_opt(c, ctl_path(c, p, "/%s/leader/sharding/necessary", job), &j->resharding_due)) return 1;
	char **q;
	int nq;
	if (children_opt(c, ctl_path(c, p, "/%s/leader/failover/items", job), &q, &nq)) return 1;
	for (int k = 0; k < nq; k++)
		if (item_number(q[k]) < 0) warn(j, "%s/%s: not an item number (left out)", p, q[k]);
	ctl_strv_free(q, nq);
	return read_items(c, j);
}

void snap_free(struct snap_job *j)
{
	for (int i = 0; i < j->ninst; i++) free(j->inst[i].id), free(j->inst[i].ip);
	for (int i = 0; i < j->nserv; i++) free(j->serv[i].ip), free(j->serv[i].status);
	for (int i = 0; i < j->nitems; i++) {
		struct snap_item *it = &j->items[i];
		free(it->owner), free(it->running_by), free(it->failover), free(it->failovering);
	}
	free(j->inst), free(j->serv), free(j->items);
	ctl_strv_free(j->warn, j->nwarn);
	conf_job_free(j->conf);
	free(j->conf_error), free(j->name), free(j->root_type), free(j->leader);
	memset(j, 0, sizeof *j);
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

int64_t snap_next_fire(const struct snap_job *j, char *iso, size_t len)
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
	int64_t t = cr ? cron_next(cr, tz, (int64_t)time(NULL)) : -1;
	if (t >= 0 && len) tz_format_iso(tz, t, iso, len);
	cron_free(cr);
	tz_free(own);
	return t;
}

void snap_time(int64_t ms, char *buf, size_t len)
{
	static tz_t *tz;
	static int tried;
	tz_err_t te;
	if (!tried) tz = tz_load_default(&te), tried = 1;
	if (!tz || tz_format_iso(tz, ms / 1000, buf, len) < 0) snprintf(buf, len, "%lld", (long long)(ms / 1000));
}
