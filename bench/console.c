/* bench/console.c: the web console over 10,000 jobs, in a real headless Chromium, with `ejobctl
 * serve`'s model of the cluster and without it (--no-model: every GET /api/v1/jobs reads ZooKeeper),
 * on a real ZooKeeper 3.8 (t/lib/tzk, a 1 GB heap as bench/serve) holding the namespace bench/serve
 * reads (bench/lib/jobs: 10,000 jobs as two supervisors leave them, 16 nodes each).
 *
 * bench/console-driver.py (through t/lib/tbrowser) measures:
 *   - the overview's first paint with data: from the navigation's start until the app marks
 *     'ejob-overview-data' (performance.mark), each load a new navigation: the first with an empty
 *     cache, the next ones revalidating the console's files (304);
 *   - the jobs table: a filter typed until the table shows the result (after the next frame), and
 *     jumps of the window through the 10,000 rows until they are drawn; the longest task meanwhile;
 * and prints docs/benchmarks.md's table. Target: first paint with data within 1 s. Every process it starts
 * (ZooKeeper, serve, the driver and its browser) is tracked by t/lib/tlib. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/lib/bench.h"
#include "bench/lib/jobs.h"
#include "bench/lib/serveproc.h"
#include "t/lib/tlib.h"
#include "t/lib/tserve.h"
#include "t/lib/tzkup.h"
#include "t/lib/tbrowser.h"

#define NJOBS 10000

static struct tzk_server zk;
static struct tzkup u;
static const char *ns = "console";
static int bad_checks;

static void check(int pass_, const char *name, const char *skip_why)
{
	if (skip_why) return;
	if (!pass_) {
		bad_checks++;
		fprintf(stderr, "bench/console: the page did not show what it should: %s\n", name);
	}
}

/* the driver's numbers ("name value" lines of path) */
struct num { char name[64]; double v; };
static struct num nums[256];
static int nnums;

static void load(const char *path)
{
	nnums = 0;
	FILE *f = fopen(path, "r");
	if (!f) fail(NULL, "the driver wrote no result (%s)", path);
	while (nnums < 256 && fscanf(f, "%63s %lf", nums[nnums].name, &nums[nnums].v) == 2) nnums++;
	fclose(f);
}

/* the values whose name starts with prefix, sorted; how many */
static int values(const char *prefix, double *v, int max)
{
	int n = 0;
	for (int i = 0; i < nnums && n < max; i++)
		if (!strncmp(nums[i].name, prefix, strlen(prefix))) v[n++] = nums[i].v;
	for (int i = 1; i < n; i++)
		for (int k = i; k > 0 && v[k - 1] > v[k]; k--) {
			double t = v[k];
			v[k] = v[k - 1], v[k - 1] = t;
		}
	return n;
}

static double value(const char *name)
{
	for (int i = 0; i < nnums; i++)
		if (!strcmp(nums[i].name, name)) return nums[i].v;
	return NAN;
}

static double med(const double *v, int n)
{
	return n ? v[n / 2] : NAN;
}

/* serve on the namespace (extra: "--no-model" or NULL) until GET /api/v1/jobs answers (from its
 * model when it has one), then the driver with runs page loads; its numbers loaded */
static void measure(const char *extra, const char *mode, int runs)
{
	int port;
	pid_t pid = serveproc_start(zk.connect, ns, extra, &port);
	struct tserve s = { .pid = pid, .port = port };
	uint64_t t0 = tlib_now_ms();
	for (;;) {
		char *body = NULL;
		long code = tserve_http(&s, "GET", "/api/v1/jobs", NULL, NULL, NULL, &body);
		int all = body && strstr(body, "\"j09999\"");
		free(body);
		if (code == 200 && all && (extra || s.from_model)) break;
		if (tlib_now_ms() - t0 > 180000) fail(NULL, "serve %s did not answer with every job within 180 s", mode);
		sleep_ms(500);
	}
	fprintf(stderr, "bench/console: serve %s answers every job %.1f s after it started\n", mode, (double)(tlib_now_ms() - t0) / 1000);
	char url[128], m[64], r[64], res[700], path[600];
	snprintf(path, sizeof path, "%s/%s.result", tlib_tmpdir(), mode);
	snprintf(url, sizeof url, "EJOB_URL=http://127.0.0.1:%d", port);
	snprintf(m, sizeof m, "EJOB_MODE=%s", mode);
	snprintf(r, sizeof r, "EJOB_RUNS=%d", runs);
	snprintf(res, sizeof res, "EJOB_RESULT=%s", path);
	const char *env[] = { url, m, r, res, NULL };
	tbrowser_run_("bench/console-driver.py", env, NULL, NULL, 900, check);
	serveproc_stop(pid);
	load(path);
}

int main(void)
{
	bench_name = "bench/console";
	tlib_init(1800);
	tbrowser_require();
	if (tzk_start(&zk, "zk", &(struct tzk_opts){ .tick_ms = 200, .heap_mb = 1024 }, 60000) < 0) return 1;
	tzkup_on(&u, zk.connect, ns, 4000);
	uint64_t t0 = tlib_now_ms();
	jobs_make(u.zh, ns, NJOBS);
	fprintf(stderr, "bench/console: %d jobs made in %.1f s\n", NJOBS, (double)(tlib_now_ms() - t0) / 1000);

	double p[16], f[64], sc[16], fe[16];
	measure(NULL, "model", 6);
	int np = values("paint.", p, 16), nfe = values("jobs.fetch.", fe, 16);
	double cold = value("paint.0"), bytes = value("jobs.bytes"), longest = value("longtask");
	double warm[16];
	int nw = 0;
	for (int i = 1; i < 16; i++) {
		char k[32];
		snprintf(k, sizeof k, "paint.%d", i);
		double v = value(k);
		if (!isnan(v)) warm[nw++] = v;
	}
	for (int i = 1; i < nw; i++)
		for (int k = i; k > 0 && warm[k - 1] > warm[k]; k--) {
			double t = warm[k];
			warm[k] = warm[k - 1], warm[k - 1] = t;
		}
	int nf = values("filter.", f, 64), ns_ = values("scroll.", sc, 16);
	double fmed = med(f, nf), fmax = nf ? f[nf - 1] : NAN, smed = med(sc, ns_), smax = ns_ ? sc[ns_ - 1] : NAN;
	double fetch = med(fe, nfe);

	measure("--no-model", "no-model", 2);
	double nm[16];
	int nn = values("paint.", nm, 16);
	double nmcold = value("paint.0"), nmmed = med(nm, nn);

	printf("| the console, %d jobs (GET /api/v1/jobs: %.1f MB) | with the model | --no-model | ratio |\n|---|--:|--:|--:|\n",
	       NJOBS, bytes / 1e6);
	printf("| overview's first paint with data, empty cache | %.0f ms | %.0f ms | %.0fx |\n", cold, nmcold, nmcold / cold);
	printf("| overview's first paint with data, files revalidated (p50; max) | %.0f ms (%.0f; %d loads) | %.0f ms (%d loads) | %.0fx |\n",
	       med(warm, nw), nw ? warm[nw - 1] : NAN, nw, nmmed, nn, nmmed / med(warm, nw));
	printf("| of which GET /api/v1/jobs (p50) | %.0f ms | | |\n", fetch);
	printf("| jobs table: a filter typed until the table shows it (p50 / max of %d) | %.1f / %.1f ms | | |\n", nf, fmed, fmax);
	printf("| jobs table: a jump through the rows until drawn (p50 / max of %d) | %.1f / %.1f ms | | |\n", ns_, smed, smax);
	char lt[64];
	if (longest > 0) snprintf(lt, sizeof lt, "%.0f ms", longest);
	else snprintf(lt, sizeof lt, "none over 50 ms (the browser reports those only)");
	printf("\nthe longest task on the page while filtering and scrolling: %s; target: first paint with data within 1 s (%s); "
	       "%d page loads with the model, %d without; %d checks of the page failed\n",
	       lt, cold <= 1000 && med(warm, nw) <= 1000 ? "met" : "missed", np, nn, bad_checks);
	tzk_stop(&zk, 9, 5000);
	return bad_checks ? 1 : 0;
}
