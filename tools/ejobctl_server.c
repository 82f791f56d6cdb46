/* tools/ejobctl_server.c: ejobctl server disable|enable|shutdown|remove IP: an operation on every
 * job of a server, ElasticJob-UI's server dimension. ElasticJob's lifecycle API does it with the
 * job left out (JobOperateAPIImpl.disable/enable/shutdown/remove(null, ip)), going over every
 * child of the namespace:
 *
 *   disable|enable IP   servers/{ip} = DISABLED | ENABLED, in each job that has servers/{ip}
 *   shutdown IP         instances/{id} deleted, in each job, for its instances whose serverIp is ip
 *   remove IP           shutdown, then servers/{ip} deleted in each job
 *
 * Which jobs are on a server is ServerStatisticsAPIImpl's answer: the jobs with a servers/{ip}
 * node, and for shutdown and remove also those with an instance there (an instance node's
 * serverIp, so ElasticJob's instances count as ejob's do). A job is a child of the namespace
 * with a config node (as ejobctl jobs and servers take it).
 *
 * Each job is its own operation, as ejobctl disable JOB --server IP is: its reads, its plan, one
 * multi, planned again from a new read when the job changed under it (OPS_TRIES in all). The
 * reads of every job go out pipelined (ctl_read_many), and so do the multis (ctl_multi_many),
 * so a namespace of thousands of jobs takes a few round trips, not thousands. A job whose multi
 * fails is reported and the others go on; the output says per job what was done, and the exit
 * status whether every job succeeded. docs/operations.md says more. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/ejobctl.h"
#include "tools/ejobctl_plan.h"
#include "tools/ejobctl_snap.h"
#include "tools/ejobctl_zk.h"

enum verb { V_DISABLE, V_ENABLE, V_SHUTDOWN, V_REMOVE };
static const char *const verbs[] = { "disable", "enable", "shutdown", "remove" };

enum result { R_NONE, R_DONE, R_UNCHANGED, R_FAILED };

struct sjob {
	char *name;
	/* the last read */
	int is_job;                 /* config exists */
	char **servers;             /* servers/ children */
	int nservers;
	char *server_data;          /* servers/{ip}'s data (disable, enable), NULL if absent */
	int has_server;             /* servers/{ip} exists */
	char **inst;                /* instances/ children whose serverIp is ip (shutdown, remove) */
	int ninst;
	char **ips;                 /* serverIp of every instance of the job (for "did you mean") */
	int nips;
	char *read_error;           /* a read that failed: why */
	/* the outcome */
	int on;                     /* on the server when first read */
	int again;                  /* its multi failed as the job changed: read and plan again */
	enum result result;
	char *reason;               /* unchanged, failed: why */
	struct plan plan;           /* done: what was written */
	zoo_op_result_t *res;
};

struct op {
	struct ctl c;
	enum verb verb;
	const char *ip;
	int force;
	char cmd[32];               /* "server disable" */
};

static void strv_add(char ***v, int *n, const char *s)
{
	char **nv = realloc(*v, (size_t)(*n + 2) * sizeof *nv);
	CTL_NEED(nv);
	*v = nv;
	CTL_NEED(nv[*n] = strdup(s));
	nv[++*n] = NULL;
}

static int strv_has(char *const *v, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i], s)) return 1;
	return 0;
}

static void sjob_clear_read(struct sjob *j)
{
	ctl_strv_free(j->servers, j->nservers);
	ctl_strv_free(j->inst, j->ninst);
	ctl_strv_free(j->ips, j->nips);
	free(j->server_data);
	free(j->read_error);
	j->servers = j->inst = j->ips = NULL;
	j->nservers = j->ninst = j->nips = 0;
	j->server_data = j->read_error = NULL;
	j->is_job = j->has_server = 0;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	char *s = NULL;
	if (vasprintf(&s, f, ap) < 0) ctl_oom();
	va_end(ap);
	return s;
}

static char *fail_text(int rc, const char *what, const char *path)
{
	const char *hint = rc == ZNOAUTH ? " (the node's ACL refuses this client: give the cluster's --digest USER:PASS)"
	                   : rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT ? " (ZooKeeper went away; try again)"
	                   : "";
	return fmt("%s %s: %s%s", what, path, zerror(rc), hint);
}

/* Read what the verb needs of jobs[idx[0..n)], pipelined: first whether each is a job and its
 * servers/ and instances/ children, then servers/{ip}'s data or every instance's data. */
static void read_jobs(struct op *o, struct sjob *jobs, const int *idx, int n)
{
	struct ctl *c = &o->c;
	char p[CTL_PATH_MAX];
	struct ctl_read *r = calloc((size_t)n * 3 + 1, sizeof *r);
	char **paths = calloc((size_t)n * 3 + 1, sizeof *paths);
	CTL_NEED(r && paths);
	for (int k = 0; k < n; k++) {
		struct sjob *j = &jobs[idx[k]];
		sjob_clear_read(j);
		CTL_NEED(paths[3 * k] = strdup(ctl_path(c, p, "/%s/config", j->name)));
		CTL_NEED(paths[3 * k + 1] = strdup(ctl_path(c, p, "/%s/servers", j->name)));
		CTL_NEED(paths[3 * k + 2] = strdup(ctl_path(c, p, "/%s/instances", j->name)));
		r[3 * k] = (struct ctl_read){ .op = CTL_EXISTS, .path = paths[3 * k] };
		r[3 * k + 1] = (struct ctl_read){ .op = CTL_CHILDREN, .path = paths[3 * k + 1] };
		r[3 * k + 2] = (struct ctl_read){ .op = CTL_CHILDREN, .path = paths[3 * k + 2] };
	}
	ctl_read_many(c, r, 3 * n);
	/* the second round: servers/{ip}, or the instances' data */
	int cap = 0, m = 0;
	struct ctl_read *r2 = NULL;
	char **paths2 = NULL;
	int *owner = NULL;          /* r2[x] is for jobs[owner[x]] */
	char ***ids = calloc((size_t)n + 1, sizeof *ids);
	int *nids = calloc((size_t)n + 1, sizeof *nids);
	CTL_NEED(ids && nids);
	for (int k = 0; k < n; k++) {
		struct sjob *j = &jobs[idx[k]];
		struct ctl_read *cf = &r[3 * k], *sv = &r[3 * k + 1], *in = &r[3 * k + 2];
		if (cf->rc != ZOK && cf->rc != ZNONODE) j->read_error = fail_text(cf->rc, "cannot read", cf->path);
		else if (sv->rc != ZOK && sv->rc != ZNONODE) j->read_error = fail_text(sv->rc, "cannot list", sv->path);
		else if (in->rc != ZOK && in->rc != ZNONODE) j->read_error = fail_text(in->rc, "cannot list", in->path);
		j->is_job = cf->rc == ZOK;
		if (sv->rc == ZOK) j->servers = sv->names, j->nservers = sv->n, sv->names = NULL;
		if (in->rc == ZOK) ids[k] = in->names, nids[k] = in->n, in->names = NULL;
		ctl_strv_free(sv->names, sv->n);
		ctl_strv_free(in->names, in->n);
		if (j->read_error || !j->is_job) continue;
		int want = o->verb == V_DISABLE || o->verb == V_ENABLE ? strv_has(j->servers, j->nservers, o->ip) : nids[k];
		if (m + want > cap) {
			cap = 2 * (m + want) + 64;
			struct ctl_read *nr = realloc(r2, (size_t)cap * sizeof *nr);
			CTL_NEED(nr);
			r2 = nr;
			char **np = realloc(paths2, (size_t)cap * sizeof *np);
			CTL_NEED(np);
			paths2 = np;
			int *no = realloc(owner, (size_t)cap * sizeof *no);
			CTL_NEED(no);
			owner = no;
		}
		if (o->verb == V_DISABLE || o->verb == V_ENABLE) {
			if (want) {
				CTL_NEED(paths2[m] = strdup(ctl_path(c, p, "/%s/servers/%s", j->name, o->ip)));
				r2[m] = (struct ctl_read){ .op = CTL_GET, .path = paths2[m] };
				owner[m++] = k;
			}
		} else {
			for (int x = 0; x < nids[k]; x++) {
				CTL_NEED(paths2[m] = strdup(ctl_path(c, p, "/%s/instances/%s", j->name, ids[k][x])));
				r2[m] = (struct ctl_read){ .op = CTL_GET, .path = paths2[m] };
				owner[m++] = k;
			}
		}
	}
	ctl_read_many(c, r2, m);
	for (int x = 0, seen = 0, last = -1; x < m; x++) {
		int k = owner[x];
		struct sjob *j = &jobs[idx[k]];
		seen = k == last ? seen + 1 : 0;   /* the instance's index among its job's */
		last = k;
		if (j->read_error) {
			free(r2[x].data);
			continue;
		}
		if (r2[x].rc != ZOK && r2[x].rc != ZNONODE) {
			j->read_error = fail_text(r2[x].rc, "cannot read", r2[x].path);
		} else if (o->verb == V_DISABLE || o->verb == V_ENABLE) {
			j->has_server = r2[x].rc == ZOK;
			if (j->has_server) CTL_NEED(j->server_data = strdup(r2[x].data));
		} else if (r2[x].rc == ZOK) {  /* an instance gone meanwhile is not there */
			const char *id = ids[k][seen];
			char *sip = snap_server_ip(r2[x].data);
			if (!sip) {
				const char *at = strstr(id, "@-@");
				CTL_NEED(sip = strndup(id, at ? (size_t)(at - id) : strlen(id)));
			}
			if (!strv_has(j->ips, j->nips, sip)) strv_add(&j->ips, &j->nips, sip);
			if (!strcmp(sip, o->ip)) strv_add(&j->inst, &j->ninst, id);
			free(sip);
		}
		free(r2[x].data);
	}
	for (int k = 0; k < n; k++) {
		struct sjob *j = &jobs[idx[k]];
		if (o->verb == V_SHUTDOWN || o->verb == V_REMOVE) j->has_server = strv_has(j->servers, j->nservers, o->ip);
		ctl_strv_free(ids[k], nids[k]);
	}
	ctl_strv_free(paths, 3 * n);
	for (int x = 0; x < m; x++) free(paths2[x]);
	free(paths2), free(r), free(r2), free(owner), free(ids), free(nids);
}

/* on the server: what ElasticJob's server dimension counts */
static int on_server(const struct op *o, const struct sjob *j)
{
	if (!j->is_job) return 0;
	return j->has_server || ((o->verb == V_SHUTDOWN || o->verb == V_REMOVE) && j->ninst);
}

/* The job's writes into j->plan; or j->result and j->reason when there is nothing to write. */
static void plan_job(struct op *o, struct sjob *j)
{
	struct ctl *c = &o->c;
	char p[CTL_PATH_MAX];
	plan_free(&j->plan);
	j->plan.acl = c->digest ? &ZOO_CREATOR_ALL_ACL : &ZOO_OPEN_ACL_UNSAFE;
	free(j->reason);
	j->reason = NULL;
	if (j->read_error) {
		j->result = R_FAILED;
		CTL_NEED(j->reason = strdup(j->read_error));
		return;
	}
	if (!on_server(o, j)) {     /* it was, when first read */
		j->result = R_UNCHANGED;
		j->reason = fmt("no longer on %s (changed meanwhile)", o->ip);
		return;
	}
	if (o->verb == V_DISABLE || o->verb == V_ENABLE) {
		const char *want = o->verb == V_DISABLE ? "DISABLED" : "ENABLED";
		if (!strcmp(j->server_data, want)) {
			j->result = R_UNCHANGED;
			j->reason = fmt("already %s", want);
			return;
		}
		plan_add(&j->plan, W_SET, ctl_path(c, p, "/%s/servers/%s", j->name, o->ip), want);
		return;
	}
	if (o->verb == V_REMOVE && j->ninst && !o->force) {   /* came online since the first read */
		j->result = R_FAILED;
		j->reason = fmt("%s has come online there: not removed (shut it down first, or give --force)", j->inst[0]);
		return;
	}
	for (int i = 0; i < j->ninst; i++) plan_add(&j->plan, W_DELETE, ctl_path(c, p, "/%s/instances/%s", j->name, j->inst[i]), NULL);
	if (o->verb == V_REMOVE && j->has_server)
		plan_add(&j->plan, W_DELETE, ctl_path(c, p, "/%s/servers/%s", j->name, o->ip), NULL);
	if (!j->plan.n) {
		j->result = R_UNCHANGED;
		j->reason = fmt("no instance online on %s", o->ip);
	} else if (j->plan.n > plan_max_ops() || j->plan.bytes > OPS_MAX_BYTES) {
		j->result = R_FAILED;
		j->reason = fmt("%d nodes to write: more than one multi holds", j->plan.n);
	}
}

/* The planned multis of jobs[idx[0..n)] that have one, pipelined; each job's result. */
static void write_jobs(struct op *o, struct sjob *jobs, const int *idx, int n)
{
	struct ctl_multi *m = calloc((size_t)n + 1, sizeof *m);
	int *who = calloc((size_t)n + 1, sizeof *who);
	CTL_NEED(m && who);
	int k = 0;
	for (int x = 0; x < n; x++) {
		struct sjob *j = &jobs[idx[x]];
		j->again = 0;
		if (j->result != R_NONE || !j->plan.n) continue;
		plan_ops(&j->plan, 0, j->plan.n);
		free(j->res);
		CTL_NEED(j->res = calloc((size_t)j->plan.n, sizeof *j->res));
		m[k] = (struct ctl_multi){ .n = j->plan.n, .ops = j->plan.ops, .res = j->res };
		who[k++] = idx[x];
	}
	ctl_multi_many(&o->c, m, k);
	for (int x = 0; x < k; x++) {
		struct sjob *j = &jobs[who[x]];
		if (m[x].rc == ZOK) {
			j->result = R_DONE;
		} else if (plan_racy(m[x].rc)) {
			j->again = 1;
		} else {
			int bad = -1;
			for (int i = 0; i < j->plan.n && bad < 0; i++)
				if (j->res[i].err != ZOK && j->res[i].err != ZRUNTIMEINCONSISTENCY) bad = i;
			char what[64];
			snprintf(what, sizeof what, "nothing written: %s", plan_op_name(j->plan.kind[bad >= 0 ? bad : 0]));
			j->result = R_FAILED;
			j->reason = fail_text(m[x].rc, what, j->plan.path[bad >= 0 ? bad : 0]);
		}
	}
	free(m), free(who);
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: ejobctl server disable|enable|shutdown|remove IP [--force]\n"
	        "       (--zk HOSTS --namespace NS [--digest U:P] | -c FILE) [--json] [--timeout S]\n"
	        "\n"
	        "Every job on server IP (ElasticJob-UI's server operations):\n"
	        "  disable IP    servers/IP = DISABLED in each job that has it: its items move to other servers\n"
	        "  enable IP     servers/IP = ENABLED: back in the sharding\n"
	        "  shutdown IP   the instances on IP deleted in each job: the jobs stop there until restarted\n"
	        "  remove IP     servers/IP deleted in each job; refused while instances are online there,\n"
	        "                unless --force (which deletes them too)\n"
	        "Each job is one multi; one line per job says what was done. Exit 0 when every job\n"
	        "succeeded, 1 when one failed, 2 usage or an IP that no job has.\n");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "no server 'X' in namespace /NS; did you mean 'Y'?" from every server ip and instance ip seen */
static int unknown_ip(struct op *o, struct sjob *jobs, int n)
{
	char **known = NULL;
	int nk = 0;
	for (int i = 0; i < n; i++) {
		if (!jobs[i].is_job) continue;
		for (int k = 0; k < jobs[i].nservers; k++)
			if (!strv_has(known, nk, jobs[i].servers[k])) strv_add(&known, &nk, jobs[i].servers[k]);
		for (int k = 0; k < jobs[i].nips; k++)
			if (!strv_has(known, nk, jobs[i].ips[k])) strv_add(&known, &nk, jobs[i].ips[k]);
	}
	qsort(known, (size_t)nk, sizeof *known, cmp_str);
	const char *near = ctl_suggest(o->ip, known, nk);
	int r;
	if (near) {
		r = ctl_msg(&o->c, 2, "no server '%s' in namespace /%s; did you mean '%s'?", o->ip, o->c.ns, near);
	} else {
		char list[512] = "";
		size_t l = 0;
		for (int i = 0; i < nk && l < sizeof list - 64; i++)
			l += (size_t)snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", known[i]);
		r = ctl_msg(&o->c, 2, "no server '%s' in namespace /%s (%d server%s there%s%s%s; 'ejobctl servers' lists them)",
		            o->ip, o->c.ns, nk, nk == 1 ? "" : "s", nk ? ": " : "", list,
		            l >= sizeof list - 64 ? ", ..." : "");
	}
	ctl_strv_free(known, nk);
	return r;
}

static const char *result_word(enum result r)
{
	return r == R_DONE ? "done" : r == R_UNCHANGED ? "unchanged" : "failed";
}

static void print(struct op *o, struct sjob *jobs, int n, int ndone, int nsame, int nfail)
{
	if (o->c.json) {
		struct jw w;
		jw_begin(&w, stdout);
		jw_obj(&w);
		jw_key(&w, "command"), jw_str(&w, o->cmd);
		jw_key(&w, "server"), jw_str(&w, o->ip);
		jw_key(&w, "jobs"), jw_arr(&w);
		for (int i = 0; i < n; i++) {
			struct sjob *j = &jobs[i];
			if (!j->on) continue;
			jw_obj(&w);
			jw_key(&w, "job"), jw_str(&w, j->name);
			jw_key(&w, "result"), jw_str(&w, result_word(j->result));
			jw_key(&w, "writes");
			if (j->result == R_DONE) plan_json(&w, &j->plan);
			else jw_arr(&w), jw_end(&w);
			jw_key(&w, "reason"), jw_str(&w, j->reason);
			jw_end(&w);
		}
		jw_end(&w);
		jw_key(&w, "done"), jw_int(&w, ndone);
		jw_key(&w, "unchanged"), jw_int(&w, nsame);
		jw_key(&w, "failed"), jw_int(&w, nfail);
		jw_end(&w);
		return;
	}
	struct ctl_table *t = ctl_table_new(3, "JOB", "RESULT", "DETAIL");
	for (int i = 0; i < n; i++) {
		struct sjob *j = &jobs[i];
		if (!j->on) continue;
		char *detail = NULL;
		if (j->result == R_DONE) {
			size_t len = 0, cap = 0;
			for (int k = 0; k < j->plan.n; k++) {
				char line[2 * CTL_PATH_MAX];
				int l = plan_line(&j->plan, k, line, sizeof line);
				if (len + (size_t)l + 3 > cap) {
					cap = 2 * (len + (size_t)l + 3);
					char *d = realloc(detail, cap);
					CTL_NEED(d);
					detail = d;
				}
				len += (size_t)sprintf(detail + len, "%s%s", k ? "; " : "", line);
			}
		}
		ctl_table_row(t, j->name, result_word(j->result), detail ? detail : j->reason);
		free(detail);
	}
	ctl_table_print(t, stdout);
	printf("server %s: %d job%s: %d done, %d unchanged, %d failed\n", o->ip, ndone + nsame + nfail,
	       ndone + nsame + nfail == 1 ? "" : "s", ndone, nsame, nfail);
}

int ejobctl_server(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
	struct op o = { .ip = NULL };
	int v = -1;
	if (argc >= 2)
		for (int k = 0; k < 4; k++)
			if (!strcmp(argv[1], verbs[k])) v = k;
	snprintf(o.cmd, sizeof o.cmd, "server%s%s", v >= 0 ? " " : "", v >= 0 ? verbs[v] : "");
	int r = ctl_options(&o.c, o.cmd, &argc, argv);
	if (r) return r;
	if (v < 0) {
		if (argc < 2) ctl_msg(&o.c, 2, "which operation? disable, enable, shutdown or remove");
		else ctl_msg(&o.c, 2, "unknown operation '%s': disable, enable, shutdown or remove "
		             "('ejobctl servers' lists the servers)", argv[1]);
		usage(stderr);
		return 2;
	}
	o.verb = (enum verb)v;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--force") && o.verb == V_REMOVE) o.force = 1;
		else if (a[0] == '-' && a[1]) return ctl_msg(&o.c, 2, "unknown option '%s'; usage: ejobctl server %s IP%s", a,
		                                              verbs[v], o.verb == V_REMOVE ? " [--force]" : "");
		else if (!o.ip) o.ip = a;
		else return ctl_msg(&o.c, 2, "one server at a time; extra argument '%s'", a);
	}
	if (!o.ip || !*o.ip) return ctl_msg(&o.c, 2, "which server? usage: ejobctl server %s IP", verbs[v]);
	if (strchr(o.ip, '/')) return ctl_msg(&o.c, 2, "'%s' is not a server (an ip, as in servers/{ip})", o.ip);
	if ((r = ctl_connect(&o.c))) return r;

	char p[CTL_PATH_MAX], **kids;
	int n;
	int rc = ctl_children(&o.c, ctl_path(&o.c, p, "%s", ""), &kids, &n);
	if (rc != ZOK) {
		ctl_close(&o.c);
		return ctl_fail(&o.c, rc, "cannot list", p);
	}
	struct sjob *jobs = calloc((size_t)n + 1, sizeof *jobs);
	int *idx = calloc((size_t)n + 1, sizeof *idx);
	CTL_NEED(jobs && idx);
	for (int i = 0; i < n; i++) jobs[i].name = kids[i], idx[i] = i;
	read_jobs(&o, jobs, idx, n);
	int non = 0;
	for (int i = 0; i < n; i++) {
		jobs[i].on = on_server(&o, &jobs[i]) || (jobs[i].read_error != NULL);
		non += jobs[i].on && !jobs[i].read_error;
	}
	int status = 0;
	if (!non) {
		/* a read that failed may hide the server: say that, not "no server" */
		for (int i = 0; i < n && !status; i++)
			if (jobs[i].read_error) status = ctl_msg(&o.c, 1, "job '%s': %s", jobs[i].name, jobs[i].read_error);
		if (!status) status = unknown_ip(&o, jobs, n);
		goto out;
	}
	if (o.verb == V_REMOVE && !o.force) {
		char list[1024] = "";
		size_t l = 0;
		int busy = 0;
		for (int i = 0; i < n; i++)
			if (jobs[i].on && jobs[i].ninst) {
				if (l < sizeof list - 128)
					l += (size_t)snprintf(list + l, sizeof list - l, "%s%s: %s%s", busy ? ", " : "", jobs[i].name,
					                      jobs[i].inst[0], jobs[i].ninst > 1 ? " ..." : "");
				busy++;
			}
		if (busy) {
			status = ctl_msg(&o.c, 1, "server %s has instances online in %d job%s (%s%s): nothing removed; shut them "
			                 "down first (ejobctl server shutdown %s) or give --force", o.ip, busy, busy == 1 ? "" : "s",
			                 list, l >= sizeof list - 128 ? ", ..." : "", o.ip);
			goto out;
		}
	}
	/* rounds: plan and write every job on the server; read, plan and write again the jobs whose
	 * multi failed because they changed under it */
	int k = 0;
	for (int i = 0; i < n; i++)
		if (jobs[i].on) idx[k++] = i;
	const char *pause = getenv("EJOBCTL_PAUSE_MS");
	for (int round = 1; k; round++) {
		if (round > 1) read_jobs(&o, jobs, idx, k);
		for (int x = 0; x < k; x++) plan_job(&o, &jobs[idx[x]]);
		if (round == 1 && pause) {  /* tests: the cluster changes between the first read and write */
			ctl_msg(&o.c, 0, "pausing %s ms before writing (EJOBCTL_PAUSE_MS)", pause);
			usleep((useconds_t)atoi(pause) * 1000);
		}
		write_jobs(&o, jobs, idx, k);
		int left = 0;
		for (int x = 0; x < k; x++) {
			struct sjob *j = &jobs[idx[x]];
			if (!j->again) continue;
			if (round == OPS_TRIES) {
				j->result = R_FAILED;
				j->reason = fmt("nothing written: the job kept changing (%d tries); run the command again", OPS_TRIES);
			} else {
				idx[left++] = idx[x];
			}
		}
		k = left;
	}
	int ndone = 0, nsame = 0, nfail = 0;
	for (int i = 0; i < n; i++) {
		if (!jobs[i].on) continue;
		ndone += jobs[i].result == R_DONE;
		nsame += jobs[i].result == R_UNCHANGED;
		nfail += jobs[i].result == R_FAILED;
		if (jobs[i].result == R_FAILED) ctl_msg(&o.c, 0, "job '%s': %s", jobs[i].name, jobs[i].reason);
	}
	print(&o, jobs, n, ndone, nsame, nfail);
	/* how to undo a shutdown: nothing in ZooKeeper brings the instances back; their supervisors'
	 * restart does (stderr with --json, which stays one document) */
	if (o.verb == V_SHUTDOWN && ndone)
		fprintf(o.c.json ? stderr : stdout, "the jobs stay stopped on %s until its supervisor restarts (on %s: e.g. "
		        "systemctl restart ejob-supervisor); 'ejobctl instances' shows them as shut down\n", o.ip, o.ip);
	status = nfail ? 1 : 0;
	if (fflush(stdout) || ferror(stdout)) status = ctl_msg(&o.c, 1, "writing the output failed");
out:
	for (int i = 0; i < n; i++) {
		sjob_clear_read(&jobs[i]);
		plan_free(&jobs[i].plan);
		free(jobs[i].reason);
		free(jobs[i].res);
		free(jobs[i].name);
	}
	free(kids), free(jobs), free(idx);
	ctl_close(&o.c);
	return status;
}
