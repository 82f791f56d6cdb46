/* tools/ejobctl_list.c: the namespace's listings: `ejobctl jobs`, `ejobctl servers [JOB]
 * [--server IP]` and `ejobctl instances [JOB] [--instance ID]`: ElasticJob-UI's job list
 * (JobStatisticsAPI.getAllJobsBriefInfo), server list (ServerStatisticsAPI.getAllServersBriefInfo)
 * and server detail (JobStatisticsAPI.getJobsBriefInfo(ip)), with what ejob knows more.
 * docs/operations.md gives the tables and the JSON schemas. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/ejobctl.h"
#include "tools/ejobctl_api.h"
#include "tools/ejobctl_health.h"
#include "tools/ejobctl_snap.h"

/* every job of the namespace, read; 0 or 1 after a message. only: just that job (checked). */
struct snaps {
	int n;
	struct snap_job *j;
	char **extra;               /* namespace children that are no job (no config node) */
	int nextra;
};

static void snaps_free(struct snaps *s)
{
	for (int i = 0; i < s->n; i++) snap_free(&s->j[i]);
	free(s->j);
	ctl_strv_free(s->extra, s->nextra);
	memset(s, 0, sizeof *s);
}

static int snaps_read(struct ctl *c, const char *only, struct snaps *s)
{
	memset(s, 0, sizeof *s);
	char **names;
	int n;
	if (only) {
		int r = ctl_need_job(c, only);
		if (r) return r;
		CTL_NEED(names = calloc(2, sizeof *names));
		CTL_NEED(names[0] = strdup(only));
		n = 1;
	} else {
		if (ctl_jobs(c, &names, &n)) return 1;
		/* what ElasticJob's listing skips silently: children without a config node */
		char p[CTL_PATH_MAX], **kids;
		int nk;
		int rc = ctl_children(c, ctl_path(c, p, "%s", ""), &kids, &nk);
		if (rc == ZNONODE && c->ns_may_be_new) rc = ZOK;   /* no namespace yet (serve): no child */
		if (rc != ZOK) {
			ctl_strv_free(names, n);
			return ctl_fail(c, rc, "cannot list", p);
		}
		CTL_NEED(s->extra = calloc((size_t)nk + 1, sizeof *s->extra));
		for (int k = 0, i = 0; k < nk; k++) {
			while (i < n && strcmp(names[i], kids[k]) < 0) i++;
			if (i < n && !strcmp(names[i], kids[k])) continue;
			CTL_NEED(s->extra[s->nextra++] = strdup(kids[k]));
		}
		ctl_strv_free(kids, nk);
	}
	CTL_NEED(s->j = calloc((size_t)n + 1, sizeof *s->j));
	s->n = n;
	int r = snap_read_many(c, (const char *const *)names, n, s->j);
	ctl_strv_free(names, n);
	return r;
}

static void warnings_stderr(const struct ctl *c, const struct snaps *s)
{
	for (int k = 0; k < s->nextra; k++)
		ctl_msg(c, 0, "warning: /%s/%s: no config node, not a job (left out)", c->ns, s->extra[k]);
	for (int i = 0; i < s->n; i++)
		for (int k = 0; k < s->j[i].nwarn; k++) ctl_msg(c, 0, "warning: %s", s->j[i].warn[k]);
}

static void warnings_json(const struct ctl *c, struct jw *w, const struct ctl_jobset *s)
{
	char buf[1200];
	jw_key(w, "warnings"), jw_arr(w);
	for (int k = 0; k < s->nextra; k++) {
		snprintf(buf, sizeof buf, "/%s/%s: no config node, not a job (left out)", c->ns, s->extra[k]);
		jw_str(w, buf);
	}
	for (int i = 0; i < s->n; i++)
		for (int k = 0; k < s->j[i]->nwarn; k++) jw_str(w, s->j[i]->warn[k]);
	jw_end(w);
}

/* who runs item it: the running node's data, else the taker, else the owner */
static const char *runner(const struct snap_item *it)
{
	if (!it->running) return NULL;
	if (it->running_by && *it->running_by) return it->running_by;
	return it->failover ? it->failover : it->owner;
}

static int finish(struct ctl *c, struct snaps *s)
{
	snaps_free(s);
	ctl_close(c);
	if (fflush(c->out) || ferror(c->out)) return ctl_msg(c, 1, "writing the output failed");
	return 0;
}

/* ctl_options, then: --help, [JOB] and one --NAME VALUE option (opt; may be NULL). 0 or the exit status. */
static int args(struct ctl *c, const char *cmd, int argc, char **argv, const char *opt, const char **job,
                const char **val, void (*usage)(FILE *))
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return -1;
		}
	int r = ctl_options(c, cmd, &argc, argv);
	if (r) return r;
	*job = NULL;
	if (val) *val = NULL;
	size_t ol = opt ? strlen(opt) : 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (opt && !strcmp(a, opt)) {
			if (i + 1 >= argc) return ctl_msg(c, 2, "%s needs a value", opt);
			*val = argv[++i];
		} else if (opt && !strncmp(a, opt, ol) && a[ol] == '=') {
			*val = a + ol + 1;
		} else if (a[0] == '-' && a[1]) {
			ctl_msg(c, 2, "unknown option '%s'", a);
			usage(stderr);
			return 2;
		} else if (!*job) {
			*job = a;
		} else {
			ctl_msg(c, 2, "one job at most; extra argument '%s'", a);
			usage(stderr);
			return 2;
		}
	}
	return 0;
}

/* ---- jobs ------------------------------------------------------------------------------- */

static void jobs_usage(FILE *f)
{
	fprintf(f,
	        "usage: ejobctl jobs (--zk HOSTS --namespace NS [--digest U:P] | -c FILE) [--json] [--timeout S]\n"
	        "\n"
	        "Every job of the namespace: name, type, cron and time zone, items, instances online,\n"
	        "status as ElasticJob-UI derives it (OK, CRASHED, DISABLED, SHARDING_FLAG), health from\n"
	        "the items' last executions (OK, FAILING, LATE, DISABLED, CRASHED, SHARDING_FLAG), last\n"
	        "success, next fire (a one-off job, without cron: \"on trigger\"), description.\n");
}

int ejobctl_jobs(int argc, char **argv)
{
	struct ctl c;
	const char *job;
	int r = args(&c, "jobs", argc, argv, NULL, &job, NULL, jobs_usage);
	if (r) return r < 0 ? 0 : r;
	if (job) {
		ctl_msg(&c, 2, "takes no job ('ejobctl status %s' shows one)", job);
		return 2;
	}
	return ctl_show_jobs(&c);
}

/* jobs --json's document (serve's model renders it too: tools/ejobctl_model.c) */
void ctl_jobs_json(const struct ctl *c, FILE *out, const struct snap_job *const *jobs, int n, char *const *extra,
                   int nextra, int64_t now_ms)
{
	char why[512], iso[64];
	struct ctl_health h;
	struct jw w;
	jw_begin(&w, out);
	jw_obj(&w);
	jw_key(&w, "namespace"), jw_str(&w, c->ns);
	jw_key(&w, "jobs"), jw_arr(&w);
	for (int i = 0; i < n; i++) {
		const struct snap_job *j = jobs[i];
		const conf_job_t *cf = j->conf;
		jw_obj(&w);
		jw_key(&w, "name"), jw_str(&w, j->name);
		jw_key(&w, "type"), jw_str(&w, *j->type ? j->type : NULL);
		jw_key(&w, "cron"), jw_str(&w, cf ? cf->cron : NULL);
		jw_key(&w, "timeZone"), jw_str(&w, cf ? cf->time_zone : NULL);
		jw_key(&w, "shardingTotalCount");
		if (cf) jw_int(&w, cf->sharding_total_count);
		else jw_null(&w);
		jw_key(&w, "instanceCount"), jw_int(&w, j->ninst);
		jw_key(&w, "status"), jw_str(&w, snap_job_status(j, why, sizeof why));
		jw_key(&w, "statusReason"), jw_str(&w, *why ? why : NULL);
		jw_key(&w, "leader"), jw_str(&w, j->leader);
		jw_key(&w, "reshardingDue"), jw_bool(&w, j->resharding_due);
		jw_key(&w, "disabled");
		if (cf) jw_bool(&w, cf->disabled);
		else jw_null(&w);
		ctl_job_health(j, now_ms, &h);
		ctl_health_json(&w, &h);
		ctl_failing_json(&w, j);
		int64_t next = snap_next_fire(j, iso, sizeof iso);
		jw_key(&w, "nextFire"), jw_str(&w, next >= 0 ? iso : NULL);
		jw_key(&w, "nextFireEpoch");
		if (next >= 0) jw_int(&w, next);
		else jw_null(&w);
		jw_key(&w, "description"), jw_str(&w, cf ? cf->description : NULL);
		jw_key(&w, "configError"), jw_str(&w, j->conf_error);
		jw_end(&w);
	}
	jw_end(&w);
	char buf[1200];
	jw_key(&w, "warnings"), jw_arr(&w);
	for (int k = 0; k < nextra; k++) {
		snprintf(buf, sizeof buf, "/%s/%s: no config node, not a job (left out)", c->ns, extra[k]);
		jw_str(&w, buf);
	}
	for (int i = 0; i < n; i++)
		for (int k = 0; k < jobs[i]->nwarn; k++) jw_str(&w, jobs[i]->warn[k]);
	jw_end(&w);
	jw_end(&w);
}

int ctl_show_jobs(struct ctl *cp)
{
	struct ctl c = *cp;
	int r;
	if ((r = ctl_connect(&c))) return r;
	struct snaps s;
	if ((r = snaps_read(&c, NULL, &s))) {
		snaps_free(&s);
		ctl_close(&c);
		return r;
	}
	warnings_stderr(&c, &s);
	char iso[64];
	int64_t now_ms = ctl_now_ms();
	struct ctl_health h;
	if (c.json) {
		const struct snap_job **v = calloc((size_t)s.n + 1, sizeof *v);
		CTL_NEED(v);
		for (int i = 0; i < s.n; i++) v[i] = &s.j[i];
		ctl_jobs_json(&c, c.out, v, s.n, s.extra, s.nextra, now_ms);
		free(v);
	} else {
		struct ctl_table *t = ctl_table_new(11, "JOB", "TYPE", "CRON", "TZ", "ITEMS", "INSTANCES", "STATUS", "HEALTH",
		                                    "LAST SUCCESS", "NEXT FIRE", "DESCRIPTION");
		for (int i = 0; i < s.n; i++) {
			const struct snap_job *j = &s.j[i];
			const conf_job_t *cf = j->conf;
			char items[16], inst[16];
			snprintf(items, sizeof items, "%u", cf ? cf->sharding_total_count : 0);
			snprintf(inst, sizeof inst, "%d", j->ninst);
			int64_t next = snap_next_fire(j, iso, sizeof iso);
			int oneoff = cf && !cf->cron;       /* fires only when triggered */
			char okt[64];
			ctl_job_health(j, now_ms, &h);
			if (h.last_success_ms >= 0) snap_time(h.last_success_ms, okt, sizeof okt);
			ctl_table_row(t, j->name, *j->type ? j->type : NULL, !cf ? "(bad config)" : oneoff ? "(one-off)" : cf->cron,
			              cf ? cf->time_zone : NULL, cf ? items : NULL, inst, snap_job_status(j, NULL, 0), h.word,
			              h.last_success_ms >= 0 ? okt : NULL, next >= 0 ? iso : oneoff ? "on trigger" : NULL,
			              cf && cf->description && *cf->description ? cf->description : NULL);
		}
		ctl_table_print(t, c.out);
	}
	return finish(&c, &s);
}

/* ---- servers ---------------------------------------------------------------------------- */

static void servers_usage(FILE *f)
{
	fprintf(f,
	        "usage: ejobctl servers [JOB] [--server IP] (--zk HOSTS --namespace NS [--digest U:P] | -c FILE)\n"
	        "                       [--json] [--timeout S]\n"
	        "\n"
	        "Per server (servers/{ip} of any job, or of JOB): its instances online, its jobs and how\n"
	        "many are disabled there; with JOB: ENABLED/DISABLED, instances, items owned and running.\n");
}

/* the distinct server ips of the jobs, sorted */
static char **server_ips(const struct ctl_jobset *s, int *n)
{
	int cap = 0;
	for (int i = 0; i < s->n; i++) cap += s->j[i]->nserv;
	char **v = calloc((size_t)cap + 1, sizeof *v);
	CTL_NEED(v);
	*n = 0;
	for (int i = 0; i < s->n; i++)
		for (int k = 0; k < s->j[i]->nserv; k++) {
			int seen = 0;
			for (int x = 0; x < *n && !seen; x++) seen = !strcmp(v[x], s->j[i]->serv[k].ip);
			if (!seen) CTL_NEED(v[(*n)++] = strdup(s->j[i]->serv[k].ip));
		}
	for (int a = 1; a < *n; a++)
		for (int b = a; b > 0 && strcmp(v[b - 1], v[b]) > 0; b--) {
			char *x = v[b];
			v[b] = v[b - 1];
			v[b - 1] = x;
		}
	return v;
}

/* the items of j owned by / run by instances on ip, as "0,2" (or "-") */
static void items_on(const struct snap_job *j, const char *ip, int running, char *buf, size_t len, struct jw *w)
{
	size_t n = 0;
	buf[0] = 0;
	if (w) jw_arr(w);
	for (int k = 0; k < j->nitems; k++) {
		const struct snap_item *it = &j->items[k];
		const char *who = running ? runner(it) : it->owner;
		const struct snap_inst *in = snap_inst_find(j, who);
		if (!in || !in->ip || strcmp(in->ip, ip)) continue;
		if (w) jw_int(w, it->item);
		if (n < len) n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? "," : "", it->item);
	}
	if (w) jw_end(w);
	if (!buf[0]) snprintf(buf, len, "-");
}

/* name is one of names[n]: 0; else 2 after "no KIND 'X' in job 'J'; did you mean 'Y'?" */
static int no_such(struct ctl *c, const char *kind, const char *name, char **names, int n, const char *job,
                   const char *hint)
{
	for (int k = 0; k < n; k++)
		if (!strcmp(names[k], name)) return 0;
	const char *near = ctl_suggest(name, names, n);
	char where[300];
	snprintf(where, sizeof where, job ? "job '%s'" : "namespace /%s", job ? job : c->ns);
	if (near) return ctl_msg(c, 2, "no %s '%s' in %s; did you mean '%s'?", kind, name, where, near);
	return ctl_msg(c, 2, "no %s '%s' in %s (%d %s%s there%s)", kind, name, where, n, kind, n == 1 ? "" : "s", hint);
}

/* What servers and instances both do first: connect, read the jobs, the names of the view
 * (server ips, instance ids), and check --server/--instance against them. 0 to go on; else the
 * exit status, everything freed. */
struct view {
	struct ctl c;
	struct snaps s;
	const struct snap_job **p;  /* s's jobs, as the renderers take them */
	struct ctl_jobset set;
	const char *job, *only;
};

static int view_read(struct view *v, const char *kind, const char *hint,
                     char **(*names)(const struct ctl_jobset *, int *))
{
	int r;
	if ((r = ctl_connect(&v->c))) return r;
	if ((r = snaps_read(&v->c, v->job, &v->s))) {
		snaps_free(&v->s);
		ctl_close(&v->c);
		return r;
	}
	CTL_NEED(v->p = calloc((size_t)v->s.n + 1, sizeof *v->p));
	for (int i = 0; i < v->s.n; i++) v->p[i] = &v->s.j[i];
	v->set = (struct ctl_jobset){ v->p, v->s.n, v->s.extra, v->s.nextra };
	if (v->only) {
		int n;
		char **all = names(&v->set, &n);
		r = no_such(&v->c, kind, v->only, all, n, v->job, hint);
		ctl_strv_free(all, n);
		if (r) {
			free(v->p);
			snaps_free(&v->s);
			ctl_close(&v->c);
			return r;
		}
	}
	warnings_stderr(&v->c, &v->s);
	return 0;
}

/* after view_read and the output: everything freed, the exit status */
static int view_done(struct view *v)
{
	free(v->p);
	return finish(&v->c, &v->s);
}

int ejobctl_servers(int argc, char **argv)
{
	struct ctl c;
	const char *job, *only;
	int r = args(&c, "servers", argc, argv, "--server", &job, &only, servers_usage);
	if (r) return r < 0 ? 0 : r;
	return ctl_show_servers(&c, job, only);
}

int ctl_show_servers(struct ctl *cp, const char *jobname, const char *server)
{
	struct view v = { .c = *cp, .job = jobname, .only = server };
	int r = view_read(&v, "server", "", server_ips);
	if (r) return r;
	ctl_servers_out(&v.c, v.c.out, v.c.json, &v.set, v.job, v.only);
	return view_done(&v);
}

void ctl_servers_out(const struct ctl *cp, FILE *out, int json, const struct ctl_jobset *sp, const char *job,
                     const char *only)
{
	const struct ctl_jobset s = *sp;
	int nip;
	char **ips = server_ips(&s, &nip);
	struct jw w;
	struct ctl_table *t = NULL;
	if (json) {
		jw_begin(&w, out);
		jw_obj(&w);
		jw_key(&w, "namespace"), jw_str(&w, cp->ns);
		jw_key(&w, "job"), jw_str(&w, job);
		jw_key(&w, "servers"), jw_arr(&w);
	} else if (job) {
		t = ctl_table_new(5, "SERVER", "STATUS", "INSTANCES", "ITEMS", "RUNNING");
	} else {
		t = ctl_table_new(5, "SERVER", "INSTANCES", "JOBS", "DISABLED", "JOB NAMES");
	}
	for (int k = 0; k < nip; k++) {
		const char *ip = ips[k];
		if (only && strcmp(ip, only)) continue;
		/* ServerBriefInfo: instances online on ip (of any job: a set), jobs with servers/{ip} */
		char *ids[1024];
		int nids = 0, njobs = 0, ndis = 0;
		char names[4096];
		size_t nn = 0;
		names[0] = 0;
		for (int i = 0; i < s.n; i++) {
			const struct snap_job *j = s.j[i];
			const struct snap_server *sv = snap_server_find(j, ip);
			if (!sv) continue;
			njobs++;
			ndis += sv->disabled;
			if (nn < sizeof names)
				nn += (size_t)snprintf(names + nn, sizeof names - nn, "%s%s%s", nn ? " " : "", j->name,
				                       sv->disabled ? "(disabled)" : "");
			for (int x = 0; x < j->ninst; x++) {
				if (!j->inst[x].ip || strcmp(j->inst[x].ip, ip)) continue;
				int seen = 0;
				for (int y = 0; y < nids && !seen; y++) seen = !strcmp(ids[y], j->inst[x].id);
				if (!seen && nids < 1024) ids[nids++] = j->inst[x].id;
			}
		}
		for (int a = 1; a < nids; a++)
			for (int b = a; b > 0 && strcmp(ids[b - 1], ids[b]) > 0; b--) {
				char *x = ids[b];
				ids[b] = ids[b - 1];
				ids[b - 1] = x;
			}
		if (json) {
			jw_obj(&w);
			jw_key(&w, "ip"), jw_str(&w, ip);
			jw_key(&w, "instances"), jw_arr(&w);
			for (int y = 0; y < nids; y++) jw_str(&w, ids[y]);
			jw_end(&w);
			jw_key(&w, "instancesNum"), jw_int(&w, nids);
			jw_key(&w, "jobsNum"), jw_int(&w, njobs);
			jw_key(&w, "disabledJobsNum"), jw_int(&w, ndis);
			jw_key(&w, "jobs"), jw_arr(&w);
			for (int i = 0; i < s.n; i++) {
				const struct snap_job *j = s.j[i];
				const struct snap_server *sv = snap_server_find(j, ip);
				if (!sv) continue;
				char buf[16];
				jw_obj(&w);
				jw_key(&w, "name"), jw_str(&w, j->name);
				jw_key(&w, "status"), jw_str(&w, sv->status);
				jw_key(&w, "instances"), jw_arr(&w);
				for (int x = 0; x < j->ninst; x++)
					if (j->inst[x].ip && !strcmp(j->inst[x].ip, ip)) jw_str(&w, j->inst[x].id);
				jw_end(&w);
				jw_key(&w, "items"), items_on(j, ip, 0, buf, sizeof buf, &w);
				jw_key(&w, "running"), items_on(j, ip, 1, buf, sizeof buf, &w);
				jw_end(&w);
			}
			jw_end(&w);
			jw_end(&w);
		} else if (job) {
			const struct snap_job *j = s.j[0];
			const struct snap_server *sv = snap_server_find(j, ip);
			char inst[2048], items[1024], run[1024];
			size_t n = 0;
			inst[0] = 0;
			for (int x = 0; x < j->ninst; x++)
				if (j->inst[x].ip && !strcmp(j->inst[x].ip, ip) && n < sizeof inst)
					n += (size_t)snprintf(inst + n, sizeof inst - n, "%s%s", n ? " " : "", j->inst[x].id);
			items_on(j, ip, 0, items, sizeof items, NULL);
			items_on(j, ip, 1, run, sizeof run, NULL);
			ctl_table_row(t, ip, sv->status, n ? inst : NULL, items, run);
		} else {
			char a[16], b[16], d[16];
			snprintf(a, sizeof a, "%d", nids);
			snprintf(b, sizeof b, "%d", njobs);
			snprintf(d, sizeof d, "%d", ndis);
			ctl_table_row(t, ip, a, b, d, names);
		}
	}
	if (json) {
		jw_end(&w);
		warnings_json(cp, &w, &s);
		jw_end(&w);
	} else {
		ctl_table_print(t, out);
	}
	ctl_strv_free(ips, nip);
}

/* ---- instances -------------------------------------------------------------------------- */

static void instances_usage(FILE *f)
{
	fprintf(f,
	        "usage: ejobctl instances [JOB] [--instance ID] (--zk HOSTS --namespace NS [--digest U:P] | -c FILE)\n"
	        "                         [--json] [--timeout S]\n"
	        "\n"
	        "Per instance ({ip}@-@{pid}) online in any job (or JOB), those shut down (ejobctl shutdown:\n"
	        "their supervisor lives, they run nothing of the job until it restarts) or draining, and\n"
	        "those that own items but are gone: ejob or ElasticJob, the jobs it leads, the items it\n"
	        "owns and runs, its state (online, draining, shutdown, offline).\n");
}

/* every instance id: online in some job, shut down (alive) or owning an item while offline; sorted */
static char **instance_ids(const struct ctl_jobset *s, int *n)
{
	int cap = 0;
	for (int i = 0; i < s->n; i++) cap += s->j[i]->ninst + s->j[i]->nitems + s->j[i]->nalive;
	char **v = calloc((size_t)cap + 1, sizeof *v);
	CTL_NEED(v);
	*n = 0;
	for (int i = 0; i < s->n; i++) {
		const struct snap_job *j = s->j[i];
		for (int k = 0; k < j->ninst + j->nitems + j->nalive; k++) {
			const char *id = k < j->ninst ? j->inst[k].id
			                 : k < j->ninst + j->nitems ? j->items[k - j->ninst].owner
			                 : j->alive[k - j->ninst - j->nitems];
			if (!id) continue;
			int seen = 0;
			for (int x = 0; x < *n && !seen; x++) seen = !strcmp(v[x], id);
			if (!seen) CTL_NEED(v[(*n)++] = strdup(id));
		}
	}
	for (int a = 1; a < *n; a++)
		for (int b = a; b > 0 && strcmp(v[b - 1], v[b]) > 0; b--) {
			char *x = v[b];
			v[b] = v[b - 1];
			v[b - 1] = x;
		}
	return v;
}

/* items of j with `id` as owner (what 0), runner (1) or taker (2): "0,2" or "" */
static void items_of(const struct snap_job *j, const char *id, int what, char *buf, size_t len, struct jw *w)
{
	size_t n = 0;
	buf[0] = 0;
	if (w) jw_arr(w);
	for (int k = 0; k < j->nitems; k++) {
		const struct snap_item *it = &j->items[k];
		const char *who = what == 0 ? it->owner : what == 1 ? runner(it) : it->failover;
		if (!who || strcmp(who, id)) continue;
		if (w) jw_int(w, it->item);
		if (n < len) n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? "," : "", it->item);
	}
	if (w) jw_end(w);
}

/* the table's STATE: as the JSON's, "shutdown" as two words */
static const char *state_word(const char *state)
{
	return !strcmp(state, "shutdown") ? "shut down" : state;
}

int ejobctl_instances(int argc, char **argv)
{
	struct ctl c;
	const char *job, *only;
	int r = args(&c, "instances", argc, argv, "--instance", &job, &only, instances_usage);
	if (r) return r < 0 ? 0 : r;
	return ctl_show_instances(&c, job, only);
}

int ctl_show_instances(struct ctl *cp, const char *jobname, const char *instance)
{
	struct view v = { .c = *cp, .job = jobname, .only = instance };
	int r = view_read(&v, "instance", "; ids are {ip}@-@{pid}", instance_ids);
	if (r) return r;
	ctl_instances_out(&v.c, v.c.out, v.c.json, &v.set, v.job, v.only);
	return view_done(&v);
}

void ctl_instances_out(const struct ctl *cp, FILE *out, int json, const struct ctl_jobset *sp, const char *job,
                       const char *only)
{
	const struct ctl_jobset s = *sp;
	int nid;
	char **ids = instance_ids(&s, &nid);
	struct jw w;
	struct ctl_table *t = NULL;
	if (json) {
		jw_begin(&w, out);
		jw_obj(&w);
		jw_key(&w, "namespace"), jw_str(&w, cp->ns);
		jw_key(&w, "job"), jw_str(&w, job);
		jw_key(&w, "instances"), jw_arr(&w);
	} else if (job) {
		t = ctl_table_new(9, "INSTANCE", "IP", "KIND", "ONLINE", "SERVER", "LEADER", "ITEMS", "RUNNING", "STATE");
	} else {
		t = ctl_table_new(8, "INSTANCE", "IP", "KIND", "JOBS", "LEADS", "ITEMS", "RUNNING", "STATE");
	}
	for (int k = 0; k < nid; k++) {
		const char *id = ids[k];
		if (only && strcmp(id, only)) continue;
		/* what the instance nodes say of it (any job where it is online) */
		const struct snap_inst *any = NULL;
		int ejob = 0, njobs = 0, alive = 0;
		for (int i = 0; i < s.n; i++) {
			alive |= snap_alive(s.j[i], id);
			const struct snap_inst *in = snap_inst_find(s.j[i], id);
			if (!in) continue;
			if (!any) any = in;
			ejob |= in->ejob;
			njobs++;
		}
		const char *sep = strstr(id, "@-@");
		char ipbuf[256];
		snprintf(ipbuf, sizeof ipbuf, "%.*s", sep ? (int)(sep - id) : 0, id);
		const char *ip = any && any->ip ? any->ip : sep ? ipbuf : NULL;
		/* an ejob supervisor keeps its alive node while its session lives: not online anywhere
		 * but alive is shut down (or draining) */
		const char *kind = any ? (ejob ? "ejob" : "elasticjob") : alive ? "ejob" : NULL;
		const char *state = any ? "online" : "offline";
		for (int i = 0; !any && i < s.n; i++) {
			const char *st = snap_inst_state(s.j[i], id, ip);
			if (!strcmp(st, "draining") || (!strcmp(st, "shutdown") && strcmp(state, "draining"))) state = st;
		}
		if (json) {
			jw_obj(&w);
			jw_key(&w, "id"), jw_str(&w, id);
			jw_key(&w, "ip"), jw_str(&w, ip);
			jw_key(&w, "pid");
			long pid = -1;
			if (sep) pid = strtol(sep + 3, NULL, 10);
			if (any) pid = any->pid;
			if (pid > 0) jw_int(&w, pid);
			else jw_null(&w);
			jw_key(&w, "online"), jw_bool(&w, any != NULL);
			jw_key(&w, "kind"), jw_str(&w, kind);
			jw_key(&w, "state"), jw_str(&w, state);
			jw_key(&w, "jobs"), jw_arr(&w);
		}
		char leads[2048], items[2048], run[2048];
		size_t nl = 0, ni = 0, nr = 0;
		leads[0] = items[0] = run[0] = 0;
		for (int i = 0; i < s.n; i++) {
			const struct snap_job *j = s.j[i];
			const struct snap_inst *in = snap_inst_find(j, id);
			char own[1024], running[1024], taken[1024];
			items_of(j, id, 0, own, sizeof own, NULL);
			items_of(j, id, 1, running, sizeof running, NULL);
			items_of(j, id, 2, taken, sizeof taken, NULL);
			int shut = !in && snap_alive(j, id);
			if (!in && !shut && !*own && !*running) continue;
			const char *jstate = snap_inst_state(j, id, ip);
			int leader = j->leader && !strcmp(j->leader, id);
			const struct snap_server *sv = snap_server_find(j, ip);
			if (json) {
				jw_obj(&w);
				jw_key(&w, "name"), jw_str(&w, j->name);
				jw_key(&w, "online"), jw_bool(&w, in != NULL);
				jw_key(&w, "kind"), jw_str(&w, in ? (in->ejob ? "ejob" : "elasticjob") : shut ? "ejob" : NULL);
				jw_key(&w, "state"), jw_str(&w, jstate);
				jw_key(&w, "leader"), jw_bool(&w, leader);
				jw_key(&w, "serverStatus"), jw_str(&w, sv ? sv->status : NULL);
				jw_key(&w, "items"), items_of(j, id, 0, own, sizeof own, &w);
				jw_key(&w, "running"), items_of(j, id, 1, running, sizeof running, &w);
				jw_key(&w, "failover"), items_of(j, id, 2, taken, sizeof taken, &w);
				jw_end(&w);
			} else if (job) {
				char fo[2100];
				if (*taken) snprintf(fo, sizeof fo, "%s (failover: %s)", running, taken);
				ctl_table_row(t, id, ip, in ? (in->ejob ? "ejob" : "elasticjob") : shut ? "ejob" : NULL,
				              in ? "yes" : "no", sv ? sv->status : NULL, leader ? "yes" : "no", *own ? own : NULL,
				              *taken ? fo : *running ? running : NULL, state_word(jstate));
			} else {
				if (leader && nl < sizeof leads)
					nl += (size_t)snprintf(leads + nl, sizeof leads - nl, "%s%s", nl ? " " : "", j->name);
				if (*own && ni < sizeof items)
					ni += (size_t)snprintf(items + ni, sizeof items - ni, "%s%s:%s", ni ? " " : "", j->name, own);
				if (*running && nr < sizeof run)
					nr += (size_t)snprintf(run + nr, sizeof run - nr, "%s%s:%s", nr ? " " : "", j->name, running);
			}
		}
		if (json) {
			jw_end(&w);
			jw_end(&w);
		} else if (!job) {
			char nj[16];
			snprintf(nj, sizeof nj, "%d", njobs);
			ctl_table_row(t, id, ip, kind ? kind : "(offline)", nj, nl ? leads : NULL, ni ? items : NULL,
			              nr ? run : NULL, state_word(state));
		}
	}
	if (json) {
		jw_end(&w);
		warnings_json(cp, &w, &s);
		jw_end(&w);
	} else {
		ctl_table_print(t, out);
	}
	ctl_strv_free(ids, nid);
}
