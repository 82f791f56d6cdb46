/* tools/ejobctl_serve_metrics.c: `ejobctl serve`'s GET /metrics: the cluster's series in
 * Prometheus' text format (0.0.4), from one read of the namespace (the snapshots `ejobctl jobs`
 * and GET /api/v1/jobs read) and ctl_job_health, the one judge of a job's health. Nothing comes
 * from a supervisor, so a dead one's jobs are still scraped: what it last ran is in
 * sharding/{i}/last. docs/api.md lists the series. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/ejobctl_health.h"
#include "tools/ejobctl_serve.h"
#include "tools/ejobctl_snap.h"
#include "tools/ejobctl_zk.h"

static const char *const words[] = { "OK", "FAILING", "LATE", "DISABLED", "CRASHED", "SHARDING_FLAG" };
static const char *const ej_words[] = { "OK", "CRASHED", "DISABLED", "SHARDING_FLAG" };
#define NWORDS (sizeof words / sizeof *words)
#define NEJ (sizeof ej_words / sizeof *ej_words)

/* a label value: backslash, quote and newline escaped */
static void label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"') fputc('\\', f), fputc(*s, f);
		else if (*s == '\n') fputs("\\n", f);
		else fputc(*s, f);
	}
}

static void family(FILE *f, const char *name, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

static void sample(FILE *f, const char *name, const char *job, const char *k2, const char *v2, double v)
{
	fprintf(f, "%s{job=\"", name);
	label(f, job);
	if (k2) {
		fprintf(f, "\",%s=\"", k2);
		label(f, v2);
	}
	fprintf(f, "\"} %.17g\n", v);
}

/* items of the job (< shardingTotalCount, not disabled) that nobody runs or will run: no owner,
 * an owner that is not online, or waiting in leader/failover/items for a taker */
static int unassigned(const struct snap_job *j)
{
	int total = j->conf ? (int)j->conf->sharding_total_count : 0, n = 0;
	for (int k = 0; k < j->nitems; k++) {
		const struct snap_item *it = &j->items[k];
		if (it->item >= total || it->disabled || it->failover || it->running) continue;
		n += it->queued || !it->owner || !it->owner_online;
	}
	return n;
}

int srv_metrics(struct ctl *c, FILE *f)
{
	char **names;
	int n;
	if (ctl_jobs(c, &names, &n)) {
		family(f, "ejob_zookeeper_up", "Whether ZooKeeper answered this scrape's reads.");
		fputs("ejob_zookeeper_up 0\n", f);
		return 1;
	}
	struct snap_job *js = calloc((size_t)n + 1, sizeof *js);
	CTL_NEED(js);
	int r = snap_read_many(c, (const char *const *)names, n, js);
	ctl_strv_free(names, n);
	family(f, "ejob_zookeeper_up", "Whether ZooKeeper answered this scrape's reads.");
	fprintf(f, "ejob_zookeeper_up %d\n", !r);
	if (r) {
		for (int i = 0; i < n; i++) snap_free(&js[i]);
		free(js);
		return 1;
	}
	int64_t now = ctl_now_ms();
	struct ctl_health *h = calloc((size_t)n + 1, sizeof *h);
	CTL_NEED(h);
	for (int i = 0; i < n; i++) ctl_job_health(&js[i], now, &h[i]);

	family(f, "ejob_jobs", "Jobs in the namespace (children with a config node).");
	fprintf(f, "ejob_jobs %d\n", n);
	family(f, "ejob_job_health", "The job's health word (1 for the current one, 0 for the others): docs/operations.md.");
	for (int i = 0; i < n; i++)
		for (size_t w = 0; w < NWORDS; w++)
			sample(f, "ejob_job_health", js[i].name, "state", words[w], h[i].word && !strcmp(h[i].word, words[w]));
	family(f, "ejob_job_status", "The job's status as ElasticJob-UI derives it (1 for the current one, 0 for the others).");
	for (int i = 0; i < n; i++) {
		const char *st = snap_job_status(&js[i], NULL, 0);
		for (size_t w = 0; w < NEJ; w++) sample(f, "ejob_job_status", js[i].name, "status", ej_words[w], !strcmp(st, ej_words[w]));
	}
	family(f, "ejob_job_last_success_timestamp_seconds",
	       "When the job's last successful item execution ended (sharding/{i}/last; absent: none known).");
	for (int i = 0; i < n; i++)
		if (h[i].last_success_ms >= 0)
			sample(f, "ejob_job_last_success_timestamp_seconds", js[i].name, NULL, NULL, (double)h[i].last_success_ms / 1000);
	family(f, "ejob_job_last_end_timestamp_seconds",
	       "When the job's last item execution ended, whatever its outcome (absent: none known).");
	for (int i = 0; i < n; i++)
		if (h[i].last_end_ms >= 0)
			sample(f, "ejob_job_last_end_timestamp_seconds", js[i].name, NULL, NULL, (double)h[i].last_end_ms / 1000);
	family(f, "ejob_job_items_failing", "Items whose last execution failed.");
	for (int i = 0; i < n; i++) sample(f, "ejob_job_items_failing", js[i].name, NULL, NULL, h[i].failing);
	family(f, "ejob_job_instances_online", "Instances online (instances/ nodes) per job.");
	for (int i = 0; i < n; i++) sample(f, "ejob_job_instances_online", js[i].name, NULL, NULL, js[i].ninst);
	family(f, "ejob_job_items_unassigned",
	       "Items that no online instance owns or has taken over (no owner, an owner gone, or queued for failover).");
	for (int i = 0; i < n; i++) sample(f, "ejob_job_items_unassigned", js[i].name, NULL, NULL, unassigned(&js[i]));
	family(f, "ejob_job_leader", "Whether the job has a leader (leader/election/instance).");
	for (int i = 0; i < n; i++) sample(f, "ejob_job_leader", js[i].name, NULL, NULL, js[i].leader != NULL);

	for (int i = 0; i < n; i++) snap_free(&js[i]);
	free(js);
	free(h);
	return 0;
}
