/* t/16-adopt-many.c: what adopting many jobs costs, on a real ZooKeeper (its wchc).
 *
 * Supervisor a has N http jobs in its file (namespace t16f); supervisor b has one file job and
 * adopts N jobs written into ZooKeeper with label bulk (namespace t16a). Both register every job;
 * b's server-side watches per adopted job are exactly a's per file job (the same paths), and b
 * has one more: the namespace's children. An adopted job's config change costs one read, as a
 * file job's does (its candidate's watch is its only one), and so does a change of b's file job
 * (no second watch on its node). EJOB_T16_JOBS=1000 measures 1,000 (diag: how long each took). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

static int N = 200;

/* The paths session sid watches (wchc), those under prefix ("/{ns}/{job}/") kept in set (joined
 * by '\n', the prefix cut), their count in *nset; returns the session's total, -1 if not read. */
static int watched(struct tzkup *u, int64_t sid, const char *prefix, char *set, size_t sz, int *nset)
{
	char *s = tzk_4lw(&u->zk, "wchc", 10000), head[40];
	if (!s) return -1;
	snprintf(head, sizeof head, "0x%llx", (unsigned long long)sid);
	int total = 0, in = 0, found = 0;
	size_t o = 0;
	*nset = 0;
	if (set) set[0] = '\0';
	/* a session's heading may come twice: its data watches, its child watches */
	for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
		if (line[0] == '0' && line[1] == 'x') {
			in = !strcmp(line, head);
			found |= in;
			continue;
		}
		if (!in) continue;
		const char *p = line + strspn(line, " \t");
		total++;
		if (!strncmp(p, prefix, strlen(prefix))) {
			(*nset)++;
			if (set) o += (size_t)snprintf(set + o, o < sz ? sz - o : 0, "%s\n", p + strlen(prefix));
		}
	}
	free(s);
	return found ? total : -1;
}

/* every watch the server holds, data and child watches, one per path and session (mntr's
 * zk_watch_count; wchs and wchc count data watches only) */
static long all_watches(struct tzkup *u)
{
	char *s = tzk_4lw(&u->zk, "mntr", 10000);
	const char *p = s ? strstr(s, "zk_watch_count") : NULL;
	long n = p ? atol(p + strlen("zk_watch_count")) : -1;
	free(s);
	return n;
}

/* the server's watch count once it stops changing (every job's watches armed after its
 * registration): unchanged for a second, within ms; -1 if it kept changing */
static long settled_watches(struct tzkup *u, unsigned ms)
{
	uint64_t end = tlib_now_ms() + ms;
	long last = all_watches(u);
	int same = 0;
	while (tlib_now_ms() < end) {
		usleep(250000);
		long n = all_watches(u);
		same = n == last ? same + 1 : 0;
		last = n;
		if (same >= 4) return n;
	}
	return -1;
}

/* set's lines with the instance id and then the ip written {id}, {ip}, sorted: one job's watches,
 * comparable between instances */
static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static void norm(char *set, size_t sz, const char *id, const char *ip)
{
	char *lines[64], buf[2048];
	int n = 0;
	for (char *l = strtok(set, "\n"); l && n < 64; l = strtok(NULL, "\n")) lines[n++] = strdup(l);
	qsort(lines, (size_t)n, sizeof *lines, cmp_str);
	size_t o = 0;
	for (int i = 0; i < n; i++) {
		char *l = lines[i], *p;
		const char *what[2] = { id, ip }, *as[2] = { "{id}", "{ip}" };
		for (int k = 0; k < 2; k++)
			if ((p = strstr(l, what[k]))) {
				snprintf(buf, sizeof buf, "%.*s%s%s", (int)(p - l), l, as[k], p + strlen(what[k]));
				free(l);
				l = strdup(buf);
			}
		o += (size_t)snprintf(set + o, o < sz ? sz - o : 0, "%s\n", l);
		free(l);
	}
}

/* jobs {prefix}0 .. {prefix}N-1 with id in instances/ */
static int registered(struct tzkup *u, const char *prefix, const char *id)
{
	int n = 0;
	char job[64];
	for (int i = 0; i < N; i++) {
		snprintf(job, sizeof job, "%s%d", prefix, i);
		n += tzkup_session(u, job, id) != 0;
	}
	return n;
}

static int wait_registered(struct tzkup *u, const char *prefix, const char *id, unsigned ms)
{
	uint64_t end = tlib_now_ms() + ms;
	int n;
	while ((n = registered(u, prefix, id)) < N && tlib_now_ms() < end) usleep(50000);
	return n;
}

static double requests(int port)
{
	char *m = NULL;
	double v = -1;
	if (tlib_http_get(port, "/metrics", &m) == 200 && m) {
		const char *p = strstr(m, "\nejob_zookeeper_requests_total ");
		if (p) v = atof(p + strlen("\nejob_zookeeper_requests_total "));
	}
	free(m);
	return v;
}

/* the config node of job (an http job, one-off: it never fires), written with description d */
static void put_config(struct tzkup *u, const char *job, const char *label, const char *d)
{
	char y[600];
	snprintf(y, sizeof y,
	         "description: %s\njobName: %s\n%s%s%sshardingTotalCount: 1\nprops:\n  ejob.type: http\n"
	         "  http.method: GET\n  http.uri: http://127.0.0.1:9/\n",
	         d, job, label ? "label: " : "", label ? label : "", label ? "\n" : "");
	char root[200];
	snprintf(root, sizeof root, "/%s/%s", u->ns, job);
	if (tzk_exists(u->zh, root, NULL) != ZOK && tzk_create(u->zh, root, "HTTP", 0, NULL) != ZOK)
		BAIL_OUT("cannot create %s", root);
	int rc = tzk_exists(u->zh, tzkup_path(u, job, "config"), NULL) == ZOK
	             ? tzk_set(u->zh, tzkup_path(u, job, "config"), y)
	             : tzk_create(u->zh, tzkup_path(u, job, "config"), y, 0, NULL);
	if (rc != ZOK) BAIL_OUT("cannot write %s", tzkup_path(u, job, "config"));
}

/* the requests job's config node costs b: 20 changes, each waited for (b's metrics quiet) */
static double change_cost(struct tzkup *u, int port, const char *job, const char *label)
{
	double r0 = requests(port);
	for (int k = 0; k < 20; k++) {
		char d[32];
		snprintf(d, sizeof d, "v%d", k);
		put_config(u, job, label, d);
		usleep(150000);
	}
	usleep(1000000);
	return requests(port) - r0;
}

int main(void)
{
	const char *e = getenv("EJOB_T16_JOBS");
	if (e && atoi(e) > 0) N = atoi(e);
	tlib_init(60 + N / 5);
	struct tzkup u;
	tzkup_start(&u, 200, "t16f", 6000);
	static char jobs[1 << 20];
	size_t o = 0;
	for (int i = 0; i < N && o < sizeof jobs - 200; i++)
		o += (size_t)snprintf(jobs + o, sizeof jobs - o,
		                      "  f%d:\n    type: http\n    shardingTotalCount: 1\n"
		                      "    props: {http.method: GET, http.uri: \"http://127.0.0.1:9/\"}\n", i);
	struct tsup a, b;
	tzkup_config(&u, &a, "a", "workers: 1", jobs);
	uint64_t t0 = tlib_now_ms();
	tzkup_run(&u, &a, "127.0.0.1");
	is_int(wait_registered(&u, "f", a.id, 20000 + (unsigned)N * 60), N, "a registers its file's %d jobs", N);
	uint64_t ta = tlib_now_ms() - t0;
	char fset[2048], gset[2048], pre[128];
	int nf, ng, nown;
	snprintf(pre, sizeof pre, "/%s/f0/", u.ns);
	long ta_all = settled_watches(&u, 10000 + (unsigned)N * 10);   /* a's: the test's session holds none */
	int wa = watched(&u, tzkup_session(&u, "f0", a.id), pre, fset, sizeof fset, &nf);
	norm(fset, sizeof fset, a.id, a.ip);
	tsup_stop(&a, SIGTERM, 20000);

	/* the same jobs in ZooKeeper (another namespace), label bulk; b adopts them */
	snprintf(u.ns, sizeof u.ns, "t16a");
	if (tzk_create(u.zh, "/t16a", "", 0, NULL) != ZOK) BAIL_OUT("cannot create /t16a");
	for (int i = 0; i < N; i++) {
		char job[32];
		snprintf(job, sizeof job, "g%d", i);
		put_config(&u, job, "bulk", "adopted");
	}
	int port = tzk_free_port();
	char sup[200];
	snprintf(sup, sizeof sup, "workers: 1, labels: [bulk], metrics: \"127.0.0.1:%d\"", port);
	tzkup_config(&u, &b, "b", sup, "  own:\n    type: http\n    shardingTotalCount: 1\n"
	             "    props: {http.method: GET, http.uri: \"http://127.0.0.1:9/\"}\n");
	t0 = tlib_now_ms();
	tzkup_run(&u, &b, "127.0.0.2");
	is_int(wait_registered(&u, "g", b.id, 20000 + (unsigned)N * 60), N, "b adopts and registers all %d jobs", N);
	uint64_t tb = tlib_now_ms() - t0;
	ok(tzkup_wait_registered(&u, "own", b.id, 0, 5000), "and its file's job");
	diag("%d jobs registered from the start of the process: in a's file %llu ms, adopted by b %llu ms", N,
	     (unsigned long long)ta, (unsigned long long)tb);
	int64_t sid = tzkup_session(&u, "g0", b.id);
	snprintf(pre, sizeof pre, "/%s/g0/", u.ns);
	long tb_all = settled_watches(&u, 10000 + (unsigned)N * 10);
	int wb = watched(&u, sid, pre, gset, sizeof gset, &ng);
	norm(gset, sizeof gset, b.id, b.ip);
	snprintf(pre, sizeof pre, "/%s/own/", u.ns);
	watched(&u, sid, pre, NULL, 0, &nown);
	diag("data watches of one file job (a's f0, wchc): %d:\n%s", nf, fset);
	diag("a: %d data watches, %ld in all (mntr); b: %d data watches, %ld in all", wa, ta_all, wb, tb_all);
	ok(nf > 0 && !strcmp(fset, gset), "an adopted job's data watches are a file job's, path for path (%d)", ng);
	is_int(nown, nf, "b's file job has a file job's: no second one on its config node");
	is_int(wa, N * nf, "a: %d data watches per job", nf);
	is_int(wb, (N + 1) * nf, "b: the same per job (%d jobs)", N + 1);
	long per = ta_all / N;
	ok(ta_all == per * N && tb_all == per * (N + 1) + 1,
	   "in all (child watches too): a %ld per job; b the same per job, and one more: the namespace's children", per);

	/* one read per change of a config node: the adopted job's, the file job's */
	double cg = change_cost(&u, port, "g0", "bulk"), co = change_cost(&u, port, "own", NULL);
	diag("20 changes of a config node cost b %.0f requests (adopted g0), %.0f (its file job own)", cg, co);
	ok(cg >= 20 && cg <= 24, "an adopted job's config node: one read per change (%.0f for 20)", cg);
	ok(co >= 20 && co <= 24, "its file job's: one read per change too (%.0f for 20)", co);
	ok(tsup_alive(b.pid), "b runs on");

	tsup_stop(&b, SIGTERM, 20000);
	tzkup_end(&u);
	return done_testing();
}
