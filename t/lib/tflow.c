/* t/lib/tflow.c: the workflow tests' script and log (t/lib/tflow.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t/lib/tflow.h"
#include "t/lib/tlib.h"
#include "t/lib/tzkup.h"

struct tflow_line tflow_lines[TFLOW_MAX];
int tflow_n;

const char *tflow_script(char *path, size_t len, const char *log)
{
	static char text[4096];
	const char *d = tlib_tmpdir();
	snprintf(text, sizeof text,
	         "#!/bin/sh\n"
	         "for ctx; do :; done\n"
	         "item=${ctx#*\\\"shardingItem\\\":}; item=${item%%%%[,\\}]*}\n"
	         "task=${ctx#*\\\"taskId\\\":\\\"}; task=${task%%%%\\\"*}\n"
	         "job=${ctx#*\\\"jobName\\\":\\\"}; job=${job%%%%\\\"*}\n"
	         "echo \"start $job $item ${EJOB_WORKFLOW_RUN:-0} $(date +%%s%%N) $task\" >> %s\n"
	         "[ -e %s/slow-$job-$item ] && sleep 3\n"
	         "[ -e %s/fail-$job-$item ] && exit 3\n"
	         "sleep 0.2\n"
	         "echo \"end $job $item ${EJOB_WORKFLOW_RUN:-0} $(date +%%s%%N) $task\" >> %s\n",
	         log, d, d, log);
	return tlib_script(path, len, "job.sh", text);
}

void tflow_read(const char *log)
{
	tflow_n = 0;
	FILE *f = fopen(log, "re");
	char buf[512];
	while (f && tflow_n < TFLOW_MAX && fgets(buf, sizeof buf, f)) {
		struct tflow_line *l = &tflow_lines[tflow_n];
		l->task[0] = 0;
		if (sscanf(buf, "%7s %15s %d %llu %llu %199s", l->kind, l->job, &l->item, &l->run, &l->ns, l->task) >= 5)
			tflow_n++;
	}
	if (f) fclose(f);
}

int tflow_count(const char *kind, const char *job, int item, unsigned long long run)
{
	int n = 0;
	for (int i = 0; i < tflow_n; i++) {
		const struct tflow_line *l = &tflow_lines[i];
		if (!strcmp(l->kind, kind) && !strcmp(l->job, job) && (item < 0 || l->item == item) && (!run || l->run == run))
			n++;
	}
	return n;
}

unsigned long long tflow_edge(const char *kind, const char *job, unsigned long long run, int latest)
{
	unsigned long long t = latest ? 0 : ~0ull;
	for (int i = 0; i < tflow_n; i++) {
		const struct tflow_line *l = &tflow_lines[i];
		if (strcmp(l->kind, kind) || strcmp(l->job, job) || (run && l->run != run)) continue;
		if (latest ? l->ns > t : l->ns < t) t = l->ns;
	}
	return t;
}

unsigned long long tflow_run_after(const char *job, unsigned long long after)
{
	unsigned long long r = 0;
	for (int i = 0; i < tflow_n; i++) {
		const struct tflow_line *l = &tflow_lines[i];
		if (!strcmp(l->job, job) && l->run > after && (!r || l->run < r)) r = l->run;
	}
	return r;
}

int tflow_wait_ends(const char *log, const char *job, unsigned long long run, int n, unsigned ms)
{
	uint64_t end = tlib_now_ms() + ms;
	for (;;) {
		tflow_read(log);
		if (tflow_count("end", job, -1, run) >= n) return 1;
		if (tlib_now_ms() >= end) return 0;
		usleep(50000);
	}
}

void tflow_touch(const char *name, int on)
{
	char p[700];
	snprintf(p, sizeof p, "%s/%s", tlib_tmpdir(), name);
	if (on) tlib_write_file(p, "", 0);
	else unlink(p);
}

void tflow_part(const struct tzkup *u, const char *job, const char *run, const char *data)
{
	tzkup_mk(u, tzkup_path(u, job, "ejob-flow"), NULL, 0);
	tzkup_mk(u, tzkup_path(u, job, "ejob-flow/runs"), NULL, 0);
	tzkup_mk(u, tzkup_path(u, job, "ejob-flow/runs/%s", run), data, 0);
}

void tflow_rec(const struct tzkup *u, const char *job, const char *run, const char *name, const char *data)
{
	tzkup_mk(u, tzkup_path(u, job, "ejob-flow/runs/%s/%s", run, name), data, 0);
}
