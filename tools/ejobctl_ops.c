/* tools/ejobctl_ops.c: the operations on a live cluster, with the semantics of ElasticJob 3.0.x's
 * lifecycle API (JobOperateAPIImpl, ShardingOperateAPIImpl, JobConfigurationAPIImpl.remove) and
 * so of ElasticJob-UI, which calls it:
 *
 *   trigger JOB                         trigger/{id} for every online instance
 *   disable|enable JOB [--server IP]    servers/{ip} = DISABLED | ENABLED
 *   disable-item|enable-item JOB ITEM.. sharding/{i}/disabled created | deleted
 *   shutdown JOB [--server IP|--instance ID]   instances/{id} deleted
 *   remove JOB [--server IP] [--force]  the whole job, or servers/{ip} (and its instances):
 *                                       tools/ejobctl_remove.c
 *
 * Each operation reads what it needs, plans its writes and makes them in one multi, so that a
 * supervisor or ElasticJob sees all of them or none. A multi that fails because the cluster
 * changed under it (a node created or deleted meanwhile) is planned again from a new read, at most
 * OPS_TRIES times. A whole job too big for one multi is removed in several, in an order that never
 * leaves a job behind (see ops_remove_job). docs/operations.md says what each does and when. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/trigdata.h"
#include "tools/ejobctl.h"
#include "tools/ejobctl_api.h"
#include "tools/ejobctl_job.h"
#include "tools/ejobctl_ops.h"
#include "tools/ejobctl_plan.h"
#include "tools/ejobctl_zk.h"

/* What was written: one line per node, or the JSON document {"command", "job", "writes": [...]} */
static void plan_print(const struct ctl *c, const char *job, const struct plan *p, const char *none)
{
	if (c->json) {
		struct jw w;
		jw_begin(&w, c->out);
		jw_obj(&w);
		jw_key(&w, "command"), jw_str(&w, c->cmd);
		jw_key(&w, "job"), jw_str(&w, job);
		jw_key(&w, "writes"), plan_json(&w, p);
		jw_end(&w);
		return;
	}
	char line[2 * CTL_PATH_MAX];
	for (int i = 0; i < p->n; i++) {
		plan_line(p, i, line, sizeof line);
		fprintf(c->out, "%s\n", line);
	}
	if (!p->n && none) fprintf(c->out, "%s\n", none);
}

/* ---- common arguments -------------------------------------------------------------------------- */


/* ctl_options, then this command's own: which of --server, --instance, --force it takes (a
 * string of 's', 'i', 'f'), JOB and (want_rest) more positional arguments. 0 or 2. */
int ops_parse(struct ctl *c, const char *cmd, int argc, char **argv, const char *takes, int want_rest,
              const char *usage, struct args *a)
{
	memset(a, 0, sizeof *a);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: ejobctl %s\n       (--zk HOSTS --namespace NS [--digest U:P] | -c FILE) [--json] [--timeout S]\n",
		       usage);
		exit(0);
	}
	int r = ctl_options(c, cmd, &argc, argv);
	if (r) return r;
	a->rest = calloc((size_t)argc + 1, sizeof *a->rest);
	if (!a->rest) return ctl_msg(c, 1, "out of memory");
	int dashdash = 0;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i], **dst = NULL, *v = NULL;
		char opt = 0;
		if (!dashdash && !strncmp(s, "--server", 8) && (s[8] == 0 || s[8] == '=')) opt = 's', dst = &a->server;
		else if (!dashdash && !strncmp(s, "--instance", 10) && (s[10] == 0 || s[10] == '=')) opt = 'i', dst = &a->instance;
		else if (!dashdash && !strncmp(s, "--parameter", 11) && (s[11] == 0 || s[11] == '=')) opt = 'p', dst = &a->param;
		else if (!dashdash && !strcmp(s, "--force")) opt = 'f';
		if (opt && !strchr(takes, opt)) return ctl_msg(c, 2, "%s takes no %s; usage: ejobctl %s", cmd, s, usage);
		if (opt == 'f') {
			a->force = 1;
			continue;
		}
		if (dst) {
			const char *eq = strchr(s, '=');
			if (eq) v = eq + 1;
			else if (i + 1 < argc) v = argv[++i];
			if (!v || (!*v && opt != 'p')) return ctl_msg(c, 2, "%.11s needs a value; usage: ejobctl %s", s, usage);
			*dst = v;
			if (opt == 'p') a->has_param = 1;
			continue;
		}
		if (!dashdash && !strcmp(s, "--")) {
			dashdash = 1;
			continue;
		}
		if (!dashdash && s[0] == '-' && s[1] && !(s[1] >= '0' && s[1] <= '9'))
			return ctl_msg(c, 2, "unknown option %s; usage: ejobctl %s", s, usage);
		if (!a->job) a->job = s;
		else a->rest[a->nrest++] = argv[i];
	}
	if (!a->job && a->server && (!strcmp(cmd, "disable") || !strcmp(cmd, "enable") || !strcmp(cmd, "shutdown") ||
	                             !strcmp(cmd, "remove")))
		return ctl_msg(c, 2, "which job? 'ejobctl %s JOB --server %s' is one job there; for every job on server %s: "
		               "ejobctl server %s %s%s", cmd, a->server, a->server, cmd, a->server, a->force ? " --force" : "");
	if (!a->job) return ctl_msg(c, 2, "which job? usage: ejobctl %s", usage);
	if (a->nrest && !want_rest) return ctl_msg(c, 2, "unexpected argument '%s'; usage: ejobctl %s", a->rest[0], usage);
	if (want_rest && !a->nrest) return ctl_msg(c, 2, "which items? usage: ejobctl %s", usage);
	if (a->server && a->instance) return ctl_msg(c, 2, "give --server or --instance, not both");
	return 0;
}

/* connect, and the job must be one (ctl_need_job). 0, 1 or 2 */
static int open_job(struct ctl *c, const struct args *a)
{
	int r = ctl_connect(c);
	if (r) return r;
	return ctl_need_job(c, a->job);
}

int ops_done(struct ctl *c, struct args *a, int status)
{
	ctl_close(c);
	free(a->rest);
	free(a->config);
	return status;
}

/* children of /NS/JOB/rel; a missing node has none. ZooKeeper's code. */
int ops_kids(struct ctl *c, const char *job, const char *rel, char ***v, int *n)
{
	char p[CTL_PATH_MAX];
	int rc = ctl_children(c, ctl_path(c, p, "/%s/%s", job, rel), v, n);
	if (rc == ZNONODE) {
		*v = NULL, *n = 0;
		return ZOK;
	}
	if (rc != ZOK) ctl_fail(c, rc, "cannot list", p);
	return rc;
}

static int has(char *const *v, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i], s)) return 1;
	return 0;
}

/* "job 'J' has no server 'X'; did you mean 'Y'?", or the list of what it has; returns 2 */
int ops_unknown(const struct ctl *c, const char *what, const char *name, const char *job, char *const *v, int n)
{
	int online = !strcmp(what, "instance");
	const char *near = ctl_suggest(name, v, n);
	if (near)
		return ctl_msg(c, 2, "job '%s' has no %s '%s'%s; did you mean '%s'?", job, what, name, online ? " online" : "", near);
	if (!n) return ctl_msg(c, 2, "job '%s' has no %s '%s'%s (it has none)", job, what, name, online ? " online" : "");
	char list[512] = "";
	size_t l = 0;
	for (int i = 0; i < n && l < sizeof list - 64; i++)
		l += (size_t)snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", v[i]);
	return ctl_msg(c, 2, "job '%s' has no %s '%s'%s (it has: %s%s)", job, what, name, online ? " online" : "", list,
	               l >= sizeof list - 64 ? ", ..." : "");
}

/* Plan, write in one multi, plan again while the cluster changes under us (OPS_TRIES): 0 with the
 * plan as written in *out (the caller frees it), or an exit status after a message. */
static int run_plan(struct ctl *c, const struct args *a, plan_fn *fn, struct plan *out)
{
	for (int tries = 1;; tries++) {
		struct plan p = { 0 };
		p.acl = c->digest ? &ZOO_CREATOR_ALL_ACL : &ZOO_OPEN_ACL_UNSAFE;
		int r = fn(c, a, &p);
		if (r) {
			plan_free(&p);
			return r;
		}
		if (p.n > plan_max_ops() || p.bytes > OPS_MAX_BYTES) {
			r = ctl_msg(c, 1, "%d nodes to write: more than one multi holds (%d ops, %d KB); give fewer at once", p.n,
			            plan_max_ops(), OPS_MAX_BYTES / 1024);
			plan_free(&p);
			return r;
		}
		int bad;
		int rc = plan_run(c, &p, 0, p.n, &bad);
		if (rc == ZOK) {
			*out = p;
			return 0;
		}
		if (!plan_racy(rc) || tries == OPS_TRIES) {
			r = bad >= 0 ? ctl_msg(c, 1, "nothing written: %s %s failed: %s%s", plan_op_name(p.kind[bad]), p.path[bad], zerror(rc), plan_racy(rc) ? " (the job kept changing; try again)" : "")
			             : ctl_fail(c, rc, "nothing written: the multi failed at", p.path[0]);
			plan_free(&p);
			return r;
		}
		plan_free(&p);
	}
}

int ops_operate(struct ctl *c, struct args *a, plan_fn *fn, const char *none, after_fn *after)
{
	int r = open_job(c, a);
	if (r) return ops_done(c, a, r);
	struct plan p = { 0 };
	r = run_plan(c, a, fn, &p);
	if (r) return ops_done(c, a, r);
	plan_print(c, a->job, &p, none);
	if (after) after(c, a, &p);
	plan_free(&p);
	return ops_done(c, a, 0);
}

/* ---- trigger --------------------------------------------------------------------------------- */

/* ElasticJob's InstanceService.triggerAllInstances: trigger/ emptied, trigger/{id} for every
 * instances/{id}. Here: stale trigger nodes (of instances that are gone) deleted, and one created
 * for each online instance that has none pending, in one multi. With a parameter, each node holds
 * it (ipc/trigdata.h: {"parameter":"P"}; ElasticJob's instances only look for the node); an
 * instance with a trigger pending already fires once, with what that node holds: the same
 * parameter is left alone, another (or none) is refused, so that nobody's pending fire changes. */
static int plan_trigger(struct ctl *c, const struct args *a, struct plan *p)
{
	char path[CTL_PATH_MAX], **inst, **trig;
	int ni, nt;
	if (a->has_param && strlen(a->param) > TRIGDATA_PARAM_MAX)
		return ctl_msg(c, 2, "--parameter: %zu bytes; a trigger carries at most %d (set a longer one as the job's "
		               "jobParameter)", strlen(a->param), TRIGDATA_PARAM_MAX);
	char *data = a->has_param ? trigdata_make(a->param) : strdup("");
	CTL_NEED(data);
	if (ops_kids(c, a->job, "instances", &inst, &ni)) return free(data), 1;
	if (!ni) {
		ctl_strv_free(inst, ni);
		free(data);
		return ctl_msg(c, 1, "job '%s' has no instance online (instances/ is empty): nothing would fire it", a->job);
	}
	if (ops_kids(c, a->job, "trigger", &trig, &nt)) return ctl_strv_free(inst, ni), free(data), 1;
	int r = 0;
	for (int i = 0; a->has_param && i < ni && !r; i++) {
		if (!has(trig, nt, inst[i])) continue;
		char *d = NULL;
		int rc = ctl_get(c, ctl_path(c, path, "/%s/trigger/%s", a->job, inst[i]), &d, NULL);
		if (rc == ZOK && strcmp(d, data))
			r = ctl_msg(c, 1, "instance %s has a trigger pending already (%s holds %s): nothing written; trigger "
			            "again once it has fired", inst[i], path, *d ? d : "nothing: no parameter");
		else if (rc != ZOK && rc != ZNONODE)
			r = ctl_fail(c, rc, "cannot read", path);
		free(d);
	}
	if (!r) {
		if (ctl_exists(c, ctl_path(c, path, "/%s/trigger", a->job), NULL) == ZNONODE) plan_add(p, W_CREATE, path, "");
		for (int i = 0; i < nt; i++)
			if (!has(inst, ni, trig[i])) plan_add(p, W_DELETE, ctl_path(c, path, "/%s/trigger/%s", a->job, trig[i]), NULL);
		for (int i = 0; i < ni; i++)
			if (!has(trig, nt, inst[i])) plan_add(p, W_CREATE, ctl_path(c, path, "/%s/trigger/%s", a->job, inst[i]), data);
	}
	ctl_strv_free(inst, ni);
	ctl_strv_free(trig, nt);
	free(data);
	return r;
}

int ctl_job_trigger(struct ctl *c, const char *job, const char *param, struct plan *written)
{
	struct args a = { .job = job, .param = param ? param : "", .has_param = param != NULL };
	int r = ctl_need_job(c, job);
	if (r) return r;
	struct plan p = { 0 };
	r = run_plan(c, &a, plan_trigger, &p);
	if (!r && written) *written = p;
	else plan_free(&p);
	return r;
}

int ejobctl_trigger(int argc, char **argv)
{
	struct ctl c;
	struct args a;
	int r = ops_parse(&c, "trigger", argc, argv, "p", 0, "trigger JOB [--parameter P]", &a);
	if (r) return ops_done(&c, &a, r);
	return ops_operate(&c, &a, plan_trigger, "every online instance has a trigger pending already", NULL);
}

/* ---- disable / enable ------------------------------------------------------------------------ */

/* JobOperateAPIImpl.disable/enable(job, ip): servers/{ip} (every server of the job without --server)
 * set to DISABLED or ENABLED. One that says so already is not written (a write would make the
 * leader's sharding commit, which checks servers/{ip} at the version read, start over). */
static int plan_enable(struct ctl *c, const struct args *a, struct plan *p, const char *want)
{
	char path[CTL_PATH_MAX], **srv;
	int ns;
	if (ops_kids(c, a->job, "servers", &srv, &ns)) return 1;
	if (a->server && !has(srv, ns, a->server)) {
		int r = ops_unknown(c, "server", a->server, a->job, srv, ns);
		ctl_strv_free(srv, ns);
		return r;
	}
	for (int i = 0; i < ns; i++) {
		if (a->server && strcmp(a->server, srv[i])) continue;
		char *d = NULL;
		int rc = ctl_get(c, ctl_path(c, path, "/%s/servers/%s", a->job, srv[i]), &d, NULL);
		if (rc == ZNONODE) continue;
		if (rc != ZOK) {
			ctl_strv_free(srv, ns);
			return ctl_fail(c, rc, "cannot read", path);
		}
		if (strcmp(d, want)) plan_add(p, W_SET, path, want);
		free(d);
	}
	ctl_strv_free(srv, ns);
	return 0;
}

static int plan_disable_srv(struct ctl *c, const struct args *a, struct plan *p)
{
	return plan_enable(c, a, p, "DISABLED");
}

static int plan_enable_srv(struct ctl *c, const struct args *a, struct plan *p)
{
	return plan_enable(c, a, p, "ENABLED");
}

int ejobctl_disable(int argc, char **argv)
{
	struct ctl c;
	struct args a;
	int r = ops_parse(&c, "disable", argc, argv, "s", 0, "disable JOB [--server IP]", &a);
	if (r) return ops_done(&c, &a, r);
	return ops_operate(&c, &a, plan_disable_srv, "already DISABLED: nothing written", NULL);
}

int ejobctl_enable(int argc, char **argv)
{
	struct ctl c;
	struct args a;
	int r = ops_parse(&c, "enable", argc, argv, "s", 0, "enable JOB [--server IP]", &a);
	if (r) return ops_done(&c, &a, r);
	return ops_operate(&c, &a, plan_enable_srv, "already ENABLED: nothing written", NULL);
}

/* ---- disable-item / enable-item ---------------------------------------------------------------- */

/* shardingTotalCount of the config node (ElasticJob's YAML: a top-level "shardingTotalCount: N"
 * line), -1 if there is none */
static long total_items(const char *yaml)
{
	for (const char *s = yaml; s && *s;) {
		if (!strncmp(s, "shardingTotalCount:", 19)) {
			char *e;
			long v = strtol(s + 19, &e, 10);
			return e == s + 19 || v <= 0 ? -1 : v;
		}
		s = strchr(s, '\n');
		if (s) s++;
	}
	return -1;
}

/* ShardingOperateAPIImpl.disable/enable(job, item): sharding/{i}/disabled created (with any
 * missing parent, as Curator's creatingParentsIfNeeded) or deleted. Items that are so already are
 * left alone. */
static int plan_items(struct ctl *c, const struct args *a, struct plan *p, int disable)
{
	char path[CTL_PATH_MAX], *conf = NULL;
	int rc = ctl_get(c, ctl_path(c, path, "/%s/config", a->job), &conf, NULL);
	if (rc != ZOK) return ctl_fail(c, rc, "cannot read", path);
	long total = total_items(conf);
	free(conf);
	if (total < 0) return ctl_msg(c, 1, "%s has no shardingTotalCount: which items the job has is unknown", path);
	long *seen = calloc((size_t)a->nrest, sizeof *seen);
	int nseen = 0;
	if (!seen) return ctl_msg(c, 1, "out of memory");
	int parent_sharding = ctl_exists(c, ctl_path(c, path, "/%s/sharding", a->job), NULL) == ZOK;
	for (int k = 0; k < a->nrest; k++) {
		const char *s = a->rest[k];
		char *e;
		errno = 0;
		long i = strtol(s, &e, 10);
		if (errno || e == s || *e || i < 0 || i >= total) {
			free(seen);
			return ctl_msg(c, 2, "item '%s' is not an item of job '%s': its items are 0-%ld (shardingTotalCount %ld)", s,
			               a->job, total - 1, total);
		}
		int dup = 0;
		for (int j = 0; j < nseen; j++) dup |= seen[j] == i;
		if (dup) continue;
		seen[nseen++] = i;
		rc = ctl_exists(c, ctl_path(c, path, "/%s/sharding/%ld/disabled", a->job, i), NULL);
		if (rc != ZOK && rc != ZNONODE) {
			free(seen);
			return ctl_fail(c, rc, "cannot read", path);
		}
		if (!disable) {
			if (rc == ZOK) plan_add(p, W_DELETE, path, NULL);
			continue;
		}
		if (rc == ZOK) continue;
		if (!parent_sharding) {
			plan_add(p, W_CREATE, ctl_path(c, path, "/%s/sharding", a->job), "");
			parent_sharding = 1;
		}
		if (ctl_exists(c, ctl_path(c, path, "/%s/sharding/%ld", a->job, i), NULL) == ZNONODE) plan_add(p, W_CREATE, path, "");
		plan_add(p, W_CREATE, ctl_path(c, path, "/%s/sharding/%ld/disabled", a->job, i), "");
	}
	free(seen);
	return 0;
}

static int plan_disable_items(struct ctl *c, const struct args *a, struct plan *p)
{
	return plan_items(c, a, p, 1);
}

static int plan_enable_items(struct ctl *c, const struct args *a, struct plan *p)
{
	return plan_items(c, a, p, 0);
}

int ejobctl_disable_item(int argc, char **argv)
{
	struct ctl c;
	struct args a;
	int r = ops_parse(&c, "disable-item", argc, argv, "", 1, "disable-item JOB ITEM...", &a);
	if (r) return ops_done(&c, &a, r);
	return ops_operate(&c, &a, plan_disable_items, "already disabled: nothing written", NULL);
}

int ejobctl_enable_item(int argc, char **argv)
{
	struct ctl c;
	struct args a;
	int r = ops_parse(&c, "enable-item", argc, argv, "", 1, "enable-item JOB ITEM...", &a);
	if (r) return ops_done(&c, &a, r);
	return ops_operate(&c, &a, plan_enable_items, "not disabled: nothing written", NULL);
}

/* ---- shutdown ----------------------------------------------------------------------------------- */

/* the serverIp of an instance node (ElasticJob's JobInstance YAML), else the id's part before
 * "@-@"; malloc'd */
static char *instance_ip(struct ctl *c, const char *job, const char *id)
{
	char path[CTL_PATH_MAX], *d = NULL;
	if (ctl_get(c, ctl_path(c, path, "/%s/instances/%s", job, id), &d, NULL) == ZOK) {
		for (char *s = d; s && *s;) {
			if (!strncmp(s, "serverIp:", 9)) {
				s += 9;
				while (*s == ' ' || *s == '\'' || *s == '"') s++;
				size_t n = strcspn(s, "'\"\r\n ");
				char *ip = strndup(s, n);
				free(d);
				return ip;
			}
			s = strchr(s, '\n');
			if (s) s++;
		}
	}
	free(d);
	const char *at = strstr(id, "@-@");
	return strndup(id, at ? (size_t)(at - id) : strlen(id));
}

/* The instances of the job that --server / --instance name (all without either): their ids, in
 * *ids. 0, or an exit status after a message (2: an unknown server or instance). */
int ops_pick_instances(struct ctl *c, const struct args *a, char ***ids, int *n)
{
	char **inst;
	int ni;
	*ids = NULL, *n = 0;
	if (ops_kids(c, a->job, "instances", &inst, &ni)) return 1;
	if (a->instance && !has(inst, ni, a->instance)) {
		int r = ops_unknown(c, "instance", a->instance, a->job, inst, ni);
		ctl_strv_free(inst, ni);
		return r;
	}
	int k = 0, seen_server = 0;
	for (int i = 0; i < ni; i++) {
		int keep = 1;
		if (a->instance) keep = !strcmp(inst[i], a->instance);
		if (a->server) {
			char *ip = instance_ip(c, a->job, inst[i]);
			keep = ip && !strcmp(ip, a->server);
			free(ip);
		}
		seen_server |= keep;
		if (keep) inst[k++] = inst[i];
		else free(inst[i]);
	}
	if (a->server && !seen_server) {
		char **srv;
		int ns;
		if (ops_kids(c, a->job, "servers", &srv, &ns)) return ctl_strv_free(inst, k), 1;
		if (!has(srv, ns, a->server)) {
			int r = ops_unknown(c, "server", a->server, a->job, srv, ns);
			ctl_strv_free(srv, ns);
			ctl_strv_free(inst, k);
			return r;
		}
		ctl_strv_free(srv, ns);
	}
	*ids = inst, *n = k;
	return 0;
}

/* JobOperateAPIImpl.shutdown(job, ip): instances/{id} deleted, for every instance of the job, those
 * whose serverIp is ip, or the one named. ejob's instance stops its items and leaves the sharding;
 * its leader/failover/alive/{id} stays while its items stop, so that they are failed over only when
 * they have ended (docs/design.md). */
static int plan_shutdown(struct ctl *c, const struct args *a, struct plan *p)
{
	char path[CTL_PATH_MAX], **ids;
	int n;
	int r = ops_pick_instances(c, a, &ids, &n);
	if (r) return r;
	for (int i = 0; i < n; i++) plan_add(p, W_DELETE, ctl_path(c, path, "/%s/instances/%s", a->job, ids[i]), NULL);
	ctl_strv_free(ids, n);
	return 0;
}

/* how to undo it: nothing in ZooKeeper brings a shut-down instance back (its supervisor does not
 * register the job again in this run); restarting that supervisor does */
static void shutdown_said(const struct ctl *c, const struct args *a, const struct plan *p)
{
	char pre[CTL_PATH_MAX];
	size_t n = strlen(ctl_path(c, pre, "/%s/instances/", a->job));
	FILE *f = c->json ? c->err : c->out;     /* the JSON stays one document */
	for (int i = 0; i < p->n; i++) {
		if (p->kind[i] != W_DELETE || strncmp(p->path[i], pre, n)) continue;
		const char *id = p->path[i] + n, *sep = strstr(id, "@-@");
		fprintf(f, "job '%s' stays stopped on %s until its supervisor restarts (on %.*s: e.g. systemctl restart "
		        "ejob-supervisor); 'ejobctl instances %s' shows it as shut down\n", a->job, id,
		        sep ? (int)(sep - id) : (int)strlen(id), id, a->job);
	}
}

int ejobctl_shutdown(int argc, char **argv)
{
	struct ctl c;
	struct args a;
	int r = ops_parse(&c, "shutdown", argc, argv, "si", 0, "shutdown JOB [--server IP | --instance ID]", &a);
	if (r) return ops_done(&c, &a, r);
	return ops_operate(&c, &a, plan_shutdown, "no instance online there: nothing to shut down", shutdown_said);
}

/* ---- for serve: the same operations on a session it keeps ------------------------------------ */

int ctl_operate(struct ctl *c, const char *cmd, const char *job, const char *server, const char *instance,
                char *const *items, int nitems, int force, const char *param)
{
	struct args a = { .job = job, .server = server, .instance = instance, .force = force, .nrest = nitems, .param = param,
	                  .has_param = param != NULL };
	a.rest = calloc((size_t)nitems + 1, sizeof *a.rest);
	if (!a.rest) return ctl_msg(c, 1, "out of memory");
	for (int i = 0; i < nitems; i++) a.rest[i] = items[i];
	c->cmd = cmd;
	if (!strcmp(cmd, "trigger")) return ops_operate(c, &a, plan_trigger, "every online instance has a trigger pending already", NULL);
	if (!strcmp(cmd, "disable")) return ops_operate(c, &a, plan_disable_srv, "already DISABLED: nothing written", NULL);
	if (!strcmp(cmd, "enable")) return ops_operate(c, &a, plan_enable_srv, "already ENABLED: nothing written", NULL);
	if (!strcmp(cmd, "disable-item")) return ops_operate(c, &a, plan_disable_items, "already disabled: nothing written", NULL);
	if (!strcmp(cmd, "enable-item")) return ops_operate(c, &a, plan_enable_items, "not disabled: nothing written", NULL);
	if (!strcmp(cmd, "shutdown")) return ops_operate(c, &a, plan_shutdown, "no instance online there: nothing to shut down", shutdown_said);
	if (!strcmp(cmd, "remove")) return server ? ops_operate(c, &a, ops_plan_remove_server, NULL, NULL) : ops_remove_job(c, &a);
	return ops_done(c, &a, ctl_msg(c, 2, "no operation '%s'", cmd));
}
