/* bench/ctl.c: ejobctl's server-wide operations (ejobctl server disable|enable|shutdown|remove IP)
 * on a namespace of N jobs, N = 1,000 and 10,000, against a real ZooKeeper 3.8 (t/lib/tzk, a
 * 1 GB heap as bench/scale), in one run.
 *
 * Each job is made as two supervisors on 10.0.0.1 and 10.0.0.2 leave it (16 nodes: the job's
 * node, config, servers/{ip} ENABLED for both, instances/{ip}@-@{pid} for both with ElasticJob's
 * JobInstance YAML, ephemeral, two items' sharding/{i}/instance, leader/election/instance). Then,
 * timed from fork to exit of tools/ejobctl (one process, its own session):
 *   disable         ejobctl server disable 10.0.0.2: a multi per job (N writes)
 *   disable again   the same: every job already DISABLED (reads only)
 *   enable          ejobctl server enable 10.0.0.2
 *   shutdown        ejobctl server shutdown 10.0.0.2: reads every instance's data, a multi per job
 *   remove          ejobctl server remove 10.0.0.2 (its instances are gone: no --force)
 * and each is checked: its summary line says every job was done (or unchanged), and the nodes
 * say so. The alternative an operator had before: a shell loop of `ejobctl disable JOB --server
 * IP`, one process per job, timed on the first 100 jobs of N = 1,000 and scaled to N.
 *
 * Run from the top of the tree after make. Every process it starts is tracked by t/lib/tlib. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/lib/bench.h"
#include "bench/lib/jobs.h"
#include "t/lib/tlib.h"
#include "t/lib/tzk.h"

#define EJOBCTL BUILT("tools/ejobctl")
#define LOOP_JOBS 100               /* the shell-loop alternative: jobs timed, then scaled */

static struct tzk_server zk;
static zhandle_t *zh;

/* ejobctl ARGS (NULL-terminated) --zk --namespace ns: its exit status, its time in ms, its
 * stdout in *o */
static int ctl(const char *ns, char **o, double *ms, ...)
{
	const char *argv[16];
	int n = 0;
	argv[n++] = EJOBCTL;
	va_list ap;
	va_start(ap, ms);
	for (const char *a; n < 8 && (a = va_arg(ap, const char *));) argv[n++] = a;
	va_end(ap);
	const char *tail[] = { "--zk", zk.connect, "--namespace", ns, "--timeout", "30", NULL };
	for (int k = 0; tail[k]; k++) argv[n++] = tail[k];
	argv[n] = NULL;
	char *e = NULL;
	free(*o);
	*o = NULL;
	uint64_t t0 = tlib_now_ms();
	int st = tlib_run(argv, o, &e);
	*ms = (double)(tlib_now_ms() - t0);
	if (st != 0) fprintf(stderr, "%s %s %s: exit %d: %s\n", argv[1], argv[2], argv[3], st, e ? e : "");
	free(e);
	return st;
}

/* the summary line says n jobs, `done` of them done (what follows it, as shutdown's hint on how
 * to undo it, is not the bench's to check) */
static int summary(const char *o, int n, int done, int same)
{
	char want[200];
	snprintf(want, sizeof want, "server 10.0.0.2: %d jobs: %d done, %d unchanged, 0 failed\n", n, done, same);
	const char *s = o ? strstr(o, "server 10.0.0.2: ") : NULL;
	if (!s || strncmp(s, want, strlen(want))) {
		fprintf(stderr, "unexpected summary: %s (wanted %s)", s ? s : "(none)", want);
		return 0;
	}
	return 1;
}

static int count_data(const char *ns, int n, const char *rel, const char *want)
{
	int k = 0;
	for (int i = 0; i < n; i++) {
		char p[256], buf[64];
		int len = sizeof buf - 1;
		snprintf(p, sizeof p, "/%s/j%05d/%s", ns, i, rel);
		if (zoo_get(zh, p, 0, buf, &len, NULL) == ZOK && (want ? len >= 0 && (buf[len] = 0, !strcmp(buf, want)) : 1)) k++;
	}
	return k;
}

int main(void)
{
	bench_name = "bench/ctl";
	tlib_init(1800);
	if (access(EJOBCTL, X_OK) != 0) {
		fprintf(stderr, "%s is not built (run make)\n", EJOBCTL);
		return 1;
	}
	if (tzk_start(&zk, "zk", &(struct tzk_opts){ .tick_ms = 200, .heap_mb = 1024 }, 60000) < 0) return 1;
	zh = tzk_connect(zk.connect, 30000, NULL, 10000);
	if (!zh) return 1;
	static const int sizes[] = { 1000, 10000 };
	double t[2][5];
	double loop_ms = 0;
	int okall = 1;
	char *o = NULL;
	for (int s = 0; s < 2; s++) {
		int n = sizes[s];
		char ns[32];
		snprintf(ns, sizeof ns, "ctl%d", n);
		uint64_t t0 = tlib_now_ms();
		jobs_make(zh, ns, n);
		fprintf(stderr, "%d jobs made in %.1f s\n", n, (double)(tlib_now_ms() - t0) / 1000);
		okall &= !ctl(ns, &o, &t[s][0], "server", "disable", "10.0.0.2", NULL) && summary(o, n, n, 0) &&
		         count_data(ns, n, "servers/10.0.0.2", "DISABLED") == n;
		okall &= !ctl(ns, &o, &t[s][1], "server", "disable", "10.0.0.2", NULL) && summary(o, n, 0, n);
		okall &= !ctl(ns, &o, &t[s][2], "server", "enable", "10.0.0.2", NULL) && summary(o, n, n, 0) &&
		         count_data(ns, n, "servers/10.0.0.2", "ENABLED") == n;
		okall &= !ctl(ns, &o, &t[s][3], "server", "shutdown", "10.0.0.2", NULL) && summary(o, n, n, 0) &&
		         count_data(ns, n, "instances/10.0.0.2@-@2", NULL) == 0 && count_data(ns, n, "instances/10.0.0.1@-@1", NULL) == n;
		okall &= !ctl(ns, &o, &t[s][4], "server", "remove", "10.0.0.2", NULL) && summary(o, n, n, 0) &&
		         count_data(ns, n, "servers/10.0.0.2", NULL) == 0 && count_data(ns, n, "servers/10.0.0.1", NULL) == n;
		if (s == 0) {
			double one;
			uint64_t l0 = tlib_now_ms();
			for (int i = 0; i < LOOP_JOBS; i++) {
				char job[16];
				snprintf(job, sizeof job, "j%05d", i);
				okall &= !ctl(ns, &o, &one, "disable", job, "--server", "10.0.0.1", NULL);
			}
			loop_ms = (double)(tlib_now_ms() - l0) / LOOP_JOBS * n;
		}
	}
	printf("| ejobctl | 1,000 jobs | 10,000 jobs |\n|---|--:|--:|\n");
	static const char *const names[] = { "server disable 10.0.0.2 (a write per job)", "the same again (reads only)",
		                             "server enable", "server shutdown (reads every instance)", "server remove" };
	for (int k = 0; k < 5; k++)
		printf("| %s | %.2f s | %.2f s |\n", names[k], t[0][k] / 1000, t[1][k] / 1000);
	printf("\nalternative: a shell loop of `ejobctl disable JOB --server IP`, %d jobs timed: %.1f s for 1,000 jobs "
	       "(%.0fx the one command)\n", LOOP_JOBS, loop_ms / 1000, loop_ms / t[0][0]);
	printf("every result checked against the nodes: %s\n", okall ? "yes" : "NO");
	free(o);
	zookeeper_close(zh);
	tzk_stop(&zk, 9, 5000);
	return okall ? 0 : 1;
}
