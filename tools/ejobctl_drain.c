/* tools/ejobctl_drain.c: ejobctl drain --server IP: empty a machine before a restart or an
 * upgrade, and return once it holds nothing.
 *
 * It writes servers/{ip} = DRAINING in every job where an ejob supervisor of that ip is online
 * (one pipelined multi per job). An ejob supervisor that sees it drains as on SIGUSR2: every job
 * leaves the instance (instances/{id} deleted, the resharding flag raised, the leadership given
 * up), nothing new starts there, queued items are handed over at once, running ones get the
 * supervisor's shutdownGraceSeconds to end and are then stopped and handed over (failover on).
 * For ElasticJob, DRAINING is not ENABLED: its leader leaves that server out of the next sharding
 * and fails nothing of it over (ServerService.isEnableServer), so an ElasticJob instance there
 * gets no new items either but stays online. A supervisor that restarts writes its servers/{ip}
 * again (ENABLED, or DISABLED if its file says so) and joins as before.
 *
 * Then it waits (--wait SECONDS, default 600; --no-wait: not at all) until no job has an ejob
 * instance of that ip online and no item is running, failing over or queued by one of its
 * instances (sharding/{i}/running, failover, failovering naming "{ip}@-@..."). Exit 0 once the
 * machine holds nothing, 1 if it still does at the deadline (what it holds is listed), 2 for an
 * ip no job knows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/ejobctl.h"
#include "tools/ejobctl_snap.h"
#include "tools/ejobctl_zk.h"

static const char usage[] = "usage: ejobctl drain --server IP [--wait SECONDS | --no-wait] [--json]";

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* id is an instance of ip: "{ip}@-@{pid}" */
static int of_ip(const char *id, const char *ip)
{
	size_t n = strlen(ip);
	return id && !strncmp(id, ip, n) && !strncmp(id + n, "@-@", 3);
}

struct held {
	int online;                 /* ejob instances of ip online (jobs) */
	int items;                  /* items running, failing over or queued by them */
	char what[600];             /* the first of them, for the message */
};

static void note(struct held *h, const char *job, const char *id, int item)
{
	size_t o = strlen(h->what);
	if (o + 80 >= sizeof h->what) return;
	if (item < 0)
		snprintf(h->what + o, sizeof h->what - o, "%sjob %s: instance %s online", o ? "; " : "", job, id);
	else
		snprintf(h->what + o, sizeof h->what - o, "%sjob %s: %s has item %d", o ? "; " : "", job, id, item);
}

/* what the machine holds in the jobs read */
static void holds(const struct snap_job *j, int n, const char *ip, struct held *h)
{
	memset(h, 0, sizeof *h);
	for (int k = 0; k < n; k++) {
		for (int i = 0; i < j[k].ninst; i++)
			if (j[k].inst[i].ejob && j[k].inst[i].ip && !strcmp(j[k].inst[i].ip, ip)) {
				h->online++;
				note(h, j[k].name, j[k].inst[i].id, -1);
			}
		for (int i = 0; i < j[k].nitems; i++) {
			const struct snap_item *it = &j[k].items[i];
			const char *by = it->running && of_ip(it->running_by, ip) ? it->running_by
			                 : of_ip(it->failover, ip) ? it->failover : of_ip(it->failovering, ip) ? it->failovering : NULL;
			if (!by) continue;
			h->items++;
			note(h, j[k].name, by, it->item);
		}
	}
}

static void snaps_free(struct snap_job *j, int n)
{
	for (int i = 0; i < n; i++) snap_free(&j[i]);
	free(j);
}

static struct snap_job *read_all(struct ctl *c, char **names, int n, int *rc)
{
	struct snap_job *j = calloc((size_t)n + 1, sizeof *j);
	CTL_NEED(j);
	*rc = snap_read_many(c, (const char *const *)names, n, j);
	return j;
}

int ejobctl_drain(int argc, char **argv)
{
	struct ctl c;
	/* --help needs no cluster (as the other commands) */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			puts(usage);
			return 0;
		}
	int r = ctl_options(&c, "drain", &argc, argv);
	if (r) return r;
	const char *ip = NULL;
	long wait_s = 600;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--server") && i + 1 < argc) {
			ip = argv[++i];
		} else if (!strcmp(argv[i], "--wait") && i + 1 < argc) {
			char *end;
			wait_s = strtol(argv[++i], &end, 10);
			if (*end || wait_s < 0 || wait_s > 86400) {
				ctl_msg(&c, 2, "--wait: '%s' is not a number of seconds in 0-86400", argv[i]);
				ctl_close(&c);
				return 2;
			}
		} else if (!strcmp(argv[i], "--no-wait")) {
			wait_s = 0;
		} else {
			ctl_msg(&c, 2, "unexpected '%s'; %s", argv[i], usage);
			ctl_close(&c);
			return 2;
		}
	}
	if (!ip) {
		ctl_msg(&c, 2, "which server? %s", usage);
		ctl_close(&c);
		return 2;
	}
	if ((r = ctl_connect(&c))) {
		ctl_close(&c);
		return r;
	}
	char **names = NULL;
	int n = 0;
	if ((r = ctl_jobs(&c, &names, &n))) {
		ctl_close(&c);
		return r;
	}
	struct snap_job *j = read_all(&c, names, n, &r);
	if (r) goto out;

	/* the jobs it writes: an ejob supervisor of ip is online there; the ips known, for a typo */
	char **known = NULL;
	int nk = 0, nmine = 0, nej = 0;
	struct ctl_multi *m = calloc((size_t)n + 1, sizeof *m);
	zoo_op_t *ops = calloc((size_t)n + 1, sizeof *ops);
	zoo_op_result_t *res = calloc((size_t)n + 1, sizeof *res);
	char **paths = calloc((size_t)n + 1, sizeof *paths);
	int *mjob = calloc((size_t)n + 1, sizeof *mjob);
	CTL_NEED(m && ops && res && paths && mjob);
	for (int k = 0; k < n; k++) {
		int mine = 0;
		for (int i = 0; i < j[k].nserv; i++) {
			int seen = 0;
			for (int x = 0; x < nk && !seen; x++) seen = !strcmp(known[x], j[k].serv[i].ip);
			if (!seen) {
				char **nv = realloc(known, (size_t)(nk + 1) * sizeof *nv);
				CTL_NEED(nv);
				known = nv;
				known[nk++] = j[k].serv[i].ip;
			}
		}
		for (int i = 0; i < j[k].ninst; i++) {
			if (!j[k].inst[i].ip || strcmp(j[k].inst[i].ip, ip)) continue;
			if (j[k].inst[i].ejob) mine = 1;
			else nej++;
		}
		if (!mine) continue;
		const struct snap_server *sv = snap_server_find(&j[k], ip);
		if (sv && sv->status && !strcmp(sv->status, "DRAINING")) continue;
		char p[CTL_PATH_MAX];
		CTL_NEED(paths[nmine] = strdup(ctl_path(&c, p, "/%s/servers/%s", j[k].name, ip)));
		zoo_set_op_init(&ops[nmine], paths[nmine], "DRAINING", 8, -1, NULL);
		m[nmine] = (struct ctl_multi){ .n = 1, .ops = &ops[nmine], .res = &res[nmine] };
		mjob[nmine++] = k;
	}
	int ipknown = 0;
	for (int x = 0; x < nk; x++) ipknown |= !strcmp(known[x], ip);
	struct held h;
	holds(j, n, ip, &h);
	if (!ipknown && !h.online && !h.items) {
		const char *near = ctl_suggest(ip, known, nk);
		r = ctl_msg(&c, 2, "no job has server %s%s%s%s", ip, near ? " (did you mean " : "", near ? near : "",
		            near ? "?)" : "; `ejobctl servers` lists them");
		goto free_ops;
	}
	ctl_multi_many(&c, m, nmine);
	int failed = 0;
	for (int x = 0; x < nmine; x++)
		if (m[x].rc != ZOK) {
			failed = 1;
			ctl_fail(&c, m[x].rc, "cannot write DRAINING into", paths[x]);
		}
	if (failed) {
		r = 1;
		goto free_ops;
	}
	if (!c.json)
		printf("server %s: DRAINING written in %d job%s; its supervisor drains (running items get its "
		       "shutdownGraceSeconds, the rest is handed over)\n", ip, nmine, nmine == 1 ? "" : "s");
	if (nej)
		fprintf(stderr, "ejobctl drain: %d ElasticJob instance%s of %s stay%s online: %s no new items from the next "
		        "sharding on (the server is not ENABLED), but only stopping %s empties the machine\n", nej,
		        nej == 1 ? "" : "s", ip, nej == 1 ? "s" : "", nej == 1 ? "it gets" : "they get", nej == 1 ? "it" : "them");
	fflush(stdout);

	/* wait until it holds nothing */
	uint64_t t0 = now_ms(), end = t0 + (uint64_t)wait_s * 1000;
	for (;;) {
		snaps_free(j, n);
		j = read_all(&c, names, n, &r);
		if (r) goto free_ops;
		holds(j, n, ip, &h);
		if ((!h.online && !h.items) || now_ms() >= end) break;
		usleep(250000);
	}
	double took = (double)(now_ms() - t0) / 1000.0;
	int empty = !h.online && !h.items;
	if (c.json) {
		struct jw w;
		jw_begin(&w, stdout);
		jw_obj(&w);
		jw_key(&w, "server"), jw_str(&w, ip);
		jw_key(&w, "jobsWritten"), jw_int(&w, nmine);
		jw_key(&w, "drained"), jw_bool(&w, empty);
		jw_key(&w, "waited"), jw_bool(&w, wait_s > 0);
		jw_key(&w, "seconds"), jw_int(&w, (long long)(took * 1000) / 1000);
		jw_key(&w, "instancesOnline"), jw_int(&w, h.online);
		jw_key(&w, "itemsHeld"), jw_int(&w, h.items);
		jw_key(&w, "held"), jw_str(&w, empty ? NULL : h.what);
		jw_end(&w);
	} else if (empty) {
		printf("server %s is drained (%.1fs): no ejob instance of it is online and it holds no item; it stays out "
		       "until its supervisor restarts\n", ip, took);
	}
	if (empty) r = 0;
	else if (!wait_s) r = 0;
	else r = ctl_msg(&c, 1, "server %s still holds after %lds: %d instance%s online, %d item%s (%s); its items may run "
	                 "longer than its supervisor's shutdownGraceSeconds, or the supervisor is not an ejob that drains",
	                 ip, wait_s, h.online, h.online == 1 ? "" : "s", h.items, h.items == 1 ? "" : "s", h.what);
free_ops:
	for (int x = 0; x < nmine; x++) free(paths[x]);
	free(paths);
	free(ops);
	free(res);
	free(m);
	free(mjob);
	free(known);
out:
	snaps_free(j, n);
	ctl_strv_free(names, n);
	ctl_close(&c);
	return r;
}
