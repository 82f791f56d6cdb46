/* tools/ejobctl_remove.c: `ejobctl remove JOB [--server IP] [--force]`, ElasticJob's
 * JobOperateAPIImpl.remove and JobConfigurationAPIImpl.removeJobConfiguration: a server of a job,
 * or the whole job in as few multis as it fits, in an order that never leaves half a job behind
 * (remove_core). Also ctl_job_remove, the same for `apply --prune` and DELETE /api/v1/jobs/{job}. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/ejobctl.h"
#include "tools/ejobctl_job.h"
#include "tools/ejobctl_ops.h"

/* $EJOBCTL_CUT_AFTER_MULTIS=N: a removal stops (exit 1) after N multis, as one killed there would:
 * for tests of what such a removal leaves */
static int cut_after(void)
{
	const char *e = getenv("EJOBCTL_CUT_AFTER_MULTIS");
	return e ? atoi(e) : 0;
}

/* ---- remove ---------------------------------------------------------------------------------- */

/* JobOperateAPIImpl.remove(job, ip): the server's instances shut down, servers/{ip} deleted. With
 * instances online there, refused unless --force (ElasticJob-UI offers it only for a server whose
 * instances are gone). */
int ops_plan_remove_server(struct ctl *c, const struct args *a, struct plan *p)
{
	char path[CTL_PATH_MAX], **ids;
	int n;
	int r = ops_pick_instances(c, a, &ids, &n);
	if (r) return r;
	if (ctl_exists(c, ctl_path(c, path, "/%s/servers/%s", a->job, a->server), NULL) == ZNONODE) {
		char **srv;
		int ns;
		ctl_strv_free(ids, n);
		if (ops_kids(c, a->job, "servers", &srv, &ns)) return 1;
		r = ops_unknown(c, "server", a->server, a->job, srv, ns);
		ctl_strv_free(srv, ns);
		return r;
	}
	if (n && !a->force) {
		ctl_msg(c, 1, "server %s has %d instance%s of job '%s' online (%s%s): nothing removed; shut %s down first "
		        "(ejobctl shutdown %s --server %s) or give --force", a->server, n, n == 1 ? "" : "s", a->job, ids[0],
		        n > 1 ? ", ..." : "", n == 1 ? "it" : "them", a->job, a->server);
		ctl_strv_free(ids, n);
		return 1;
	}
	for (int i = 0; i < n; i++) plan_add(p, W_DELETE, ctl_path(c, path, "/%s/instances/%s", a->job, ids[i]), NULL);
	plan_add(p, W_DELETE, ctl_path(c, path, "/%s/servers/%s", a->job, a->server), NULL);
	ctl_strv_free(ids, n);
	return 0;
}

/* Every node under abs (abs itself last), deepest first: children before their parent. */
static int subtree(struct ctl *c, const char *abs, struct plan *p)
{
	char **v;
	int n;
	int rc = ctl_children(c, abs, &v, &n);
	if (rc == ZNONODE) return ZOK;
	if (rc != ZOK) return ctl_fail(c, rc, "cannot list", abs), rc;
	for (int i = 0; i < n; i++) {
		char child[CTL_PATH_MAX];
		if (snprintf(child, sizeof child, "%s/%s", abs, v[i]) >= (int)sizeof child) {
			ctl_strv_free(v, n);
			return ctl_msg(c, 1, "a path under %s longer than %d bytes", abs, CTL_PATH_MAX), ZBADARGUMENTS;
		}
		rc = subtree(c, child, p);
		if (rc != ZOK) {
			ctl_strv_free(v, n);
			return rc;
		}
	}
	ctl_strv_free(v, n);
	plan_add(p, W_DELETE, abs, NULL);
	return ZOK;
}

/* Items that would be orphaned: sharding/{i}/running of an instance that lives on (ejob's
 * leader/failover/alive/{id}) though its instance node is gone: an item still stopping after a
 * shutdown. The first one's item in *item and owner in owner; 0 if none, -1 on error. */
static int running_alive(struct ctl *c, const char *job, char *item, size_t ilen, char *owner, size_t olen)
{
	char path[CTL_PATH_MAX], **items;
	int n;
	if (ops_kids(c, job, "sharding", &items, &n)) return -1;
	int found = 0;
	for (int i = 0; i < n && !found; i++) {
		char *d = NULL;
		int rc = ctl_get(c, ctl_path(c, path, "/%s/sharding/%s/running", job, items[i]), &d, NULL);
		if (rc == ZOK && *d &&
		    ctl_exists(c, ctl_path(c, path, "/%s/leader/failover/alive/%s", job, d), NULL) == ZOK) {
			snprintf(item, ilen, "%s", items[i]);
			snprintf(owner, olen, "%s", d);
			found = 1;
		}
		free(d);
		if (rc != ZOK && rc != ZNONODE) {
			ctl_strv_free(items, n);
			return ctl_fail(c, rc, "cannot read", path), -1;
		}
	}
	ctl_strv_free(items, n);
	return found;
}

/* The whole job (JobConfigurationAPIImpl.removeJobConfiguration, ElasticJob-UI's job delete, which
 * Curator does node by node). Refused while an instance is online or an item is still running on a
 * live instance, unless --force. Every node is deleted, deepest first, in one multi; a job too
 * big for one (more than 1,000 ops or 256 KB) in several, config and instances/{id} in the first:
 * from then on what is left has no config node, so neither ejob nor ElasticJob (JobStatisticsAPI,
 * ejobctl jobs) takes it for a job, and no instance of it is online; the rest goes deepest first,
 * the job's own node last. A removal cut off in between is finished by running it again. */
static int remove_core(struct ctl *c, struct args *a, int *total_, int *multis_, int *leftover_)
{
	char path[CTL_PATH_MAX];
	int r;
	int leftover = 0;
	if (*a->job && !strchr(a->job, '/') && ctl_exists(c, ctl_path(c, path, "/%s/config", a->job), NULL) == ZNONODE &&
	    ctl_exists(c, ctl_path(c, path, "/%s", a->job), NULL) == ZOK) {
		/* a removal cut off: no config node, but the rest is there */
		ctl_msg(c, 0, "%s has no config node (a removal cut off?): removing what is left", path);
		leftover = 1;
	} else if ((r = ctl_need_job(c, a->job))) {
		return r;
	}
	/* for the warning: does a supervisor put it back? */
	if (!leftover && ctl_get(c, ctl_path(c, path, "/%s/config", a->job), &a->config, NULL) != ZOK) a->config = NULL;
	int total = 0, multis = 0;
	for (int tries = 1;; tries++) {
		char **inst;
		int ni;
		if (ops_kids(c, a->job, "instances", &inst, &ni)) return 1;
		if (ni && !a->force) {
			ctl_msg(c, 1, "job '%s' has %d instance%s online (%s%s): nothing removed; shut %s down first "
			        "(ejobctl shutdown %s), stop %s supervisors, or give --force", a->job, ni, ni == 1 ? "" : "s",
			        inst[0], ni > 1 ? ", ..." : "", ni == 1 ? "it" : "them", a->job, ni == 1 ? "its" : "their");
			ctl_strv_free(inst, ni);
			return 1;
		}
		ctl_strv_free(inst, ni);
		char item[64], owner[256];
		int ra = a->force ? 0 : running_alive(c, a->job, item, sizeof item, owner, sizeof owner);
		if (ra < 0) return 1;
		if (ra) {
			ctl_msg(c, 1, "item %s of job '%s' is still running on %s, which was shut down and is stopping it: "
			        "nothing removed; try again when it has ended, or give --force", item, a->job, owner);
			return 1;
		}
		struct plan p = { 0 };
		if (subtree(c, ctl_path(c, path, "/%s", a->job), &p) != ZOK) {
			plan_free(&p);
			return 1;
		}
		/* config and instances/{id} first (leaves: moving them ahead keeps children before parents) */
		char cfg[CTL_PATH_MAX], ins[CTL_PATH_MAX];
		ctl_path(c, cfg, "/%s/config", a->job);
		size_t il = strlen(ctl_path(c, ins, "/%s/instances/", a->job));
		int front = 0;
		for (int pass = 0; pass < 2; pass++)
			for (int i = front; i < p.n; i++) {
				int want = pass == 0 ? !strcmp(p.path[i], cfg)
				                     : !strncmp(p.path[i], ins, il) && !strchr(p.path[i] + il, '/');
				if (!want) continue;
				char *t = p.path[i];
				memmove(p.path + front + 1, p.path + front, (size_t)(i - front) * sizeof *p.path);
				p.path[front++] = t;
			}
		/* chunks: at most plan_max_ops() ops and OPS_MAX_BYTES each */
		int from = 0, rc = ZOK, bad = -1;
		char failed[CTL_PATH_MAX] = "";
		while (from < p.n) {
			int to = from;
			size_t bytes = 0;
			while (to < p.n && to - from < plan_max_ops() && bytes + strlen(p.path[to]) + 32 <= OPS_MAX_BYTES)
				bytes += strlen(p.path[to++]) + 32;
			rc = plan_run(c, &p, from, to, &bad);
			if (rc != ZOK) {
				snprintf(failed, sizeof failed, "delete %s", bad >= 0 ? p.path[bad] : "(a multi)");
				break;
			}
			total += to - from;
			multis++;
			from = to;
			if (from < p.n && multis == cut_after()) {
				plan_free(&p);
				return ctl_msg(c, 1, "cut off after %d multis (EJOBCTL_CUT_AFTER_MULTIS)", multis);
			}
		}
		plan_free(&p);
		if (rc == ZOK) break;
		if (!plan_racy(rc) || tries == OPS_TRIES) {
			r = ctl_msg(c, 1, "%s: %s (%d node%s removed in %d multi%s before it)%s", failed, zerror(rc), total,
			            total == 1 ? "" : "s", multis, multis == 1 ? "" : "s",
			            plan_racy(rc) ? "; the job kept changing: run the remove again" : "");
			return r;
		}
		/* something was created or deleted meanwhile (a supervisor's write): read again, go on */
	}
	*total_ = total, *multis_ = multis, *leftover_ = leftover;
	return 0;
}

int ctl_job_remove(struct ctl *c, const char *job, int force, int *nodes)
{
	struct args a = { .job = job, .force = force };
	int multis, leftover, total = 0;
	int r = remove_core(c, &a, &total, &multis, &leftover);
	if (!r) ctl_warn_overwrite(c, job, a.config, a.config ? strlen(a.config) : 0, NULL, 0);
	free(a.config);
	if (nodes) *nodes = total;
	return r;
}

int ops_remove_job(struct ctl *c, struct args *a)
{
	char path[CTL_PATH_MAX];
	int total, multis, leftover;
	int r = ctl_connect(c);
	if (!r) r = remove_core(c, a, &total, &multis, &leftover);
	if (r) return ops_done(c, a, r);
	ctl_path(c, path, "/%s", a->job);
	if (c->json) {
		struct jw w;
		jw_begin(&w, c->out);
		jw_obj(&w);
		jw_key(&w, "command"), jw_str(&w, "remove");
		jw_key(&w, "job"), jw_str(&w, a->job);
		jw_key(&w, "path"), jw_str(&w, path);
		jw_key(&w, "nodes"), jw_int(&w, total);
		jw_key(&w, "multis"), jw_int(&w, multis);
		jw_key(&w, "leftover"), jw_bool(&w, leftover);
		jw_end(&w);
	} else {
		fprintf(c->out, "removed %s: %d node%s deleted in %d multi%s\n", path, total, total == 1 ? "" : "s", multis,
		       multis == 1 ? "" : "s");
	}
	ctl_warn_overwrite(c, a->job, a->config, a->config ? strlen(a->config) : 0, NULL, 0);
	return ops_done(c, a, 0);
}

int ejobctl_remove(int argc, char **argv)
{
	struct ctl c;
	struct args a;
	int r = ops_parse(&c, "remove", argc, argv, "sf", 0, "remove JOB [--server IP] [--force]", &a);
	if (r) return ops_done(&c, &a, r);
	if (!a.server) return ops_remove_job(&c, &a);
	return ops_operate(&c, &a, ops_plan_remove_server, NULL, NULL);
}

