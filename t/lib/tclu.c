/* t/lib/tclu.c: a cluster of real supervisors on one real ZooKeeper (see tclu.h). */
#include "t/lib/tclu.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tzk.h"

static char *replace_all(const char *in, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), n = 0;
	for (const char *p = strstr(in, a); p; p = strstr(p + la, a)) n++;
	char *out = malloc(strlen(in) + n * (lb > la ? lb - la : 0) + 1);
	if (!out) return NULL;
	char *o = out;
	for (const char *p = in;;) {
		const char *q = strstr(p, a);
		if (!q) {
			strcpy(o, p);
			break;
		}
		memcpy(o, p, (size_t)(q - p));
		o += q - p;
		memcpy(o, b, lb);
		o += lb;
		p = q + la;
	}
	return out;
}

const char *tclu_runs(const struct tclu *c, const char *job, char *buf, size_t len)
{
	snprintf(buf, len, "%s/runs.%s", tlib_tmpdir(), job);
	(void)c;
	return buf;
}

/* the value of "key": in a JSON line (a number, or the start of a list), NULL if absent */
static const char *field(const char *line, const char *key)
{
	char k[64];
	snprintf(k, sizeof k, "\"%s\":", key);
	const char *p = strstr(line, k);
	return p ? p + strlen(k) : NULL;
}

const char *tclu_history_runs(const struct tclu *c, const char *job, char *buf, size_t len)
{
	snprintf(buf, len, "%s/hist.%s", tlib_tmpdir(), job);
	FILE *out = fopen(buf, "we");
	if (!out) return buf;
	char want[80];
	snprintf(want, sizeof want, "{\"job\":\"%s\",", job);
	for (int k = 0; k < c->n; k++) {
		char p[700];
		snprintf(p, sizeof p, "%s/history.jsonl", c->sup[k].dir);
		char *t = tsup_slurp(p);
		for (char *l = t ? strtok(t, "\n") : NULL; l; l = strtok(NULL, "\n")) {
			const char *it = field(l, "item"), *fid = field(l, "fireId"), *fs = field(l, "fires"),
			           *fin = field(l, "final"), *task = field(l, "taskId");
			if (strncmp(l, want, strlen(want)) || !it || !fid || !fin || strncmp(fin, "true", 4)) continue;
			char tid[200] = "";
			if (task && *task == '"') sscanf(task + 1, "%199[^\"]", tid);
			int item = atoi(it);
			if (!fs || *fs != '[') {
				fprintf(out, "%lld %d %s\n", atoll(fid), item, tid);
				continue;
			}
			for (const char *q = fs + 1; *q && *q != ']';) {
				char *e;
				long long f = strtoll(q, &e, 10);
				if (e == q) break;
				fprintf(out, "%lld %d %s\n", f, item, tid);
				q = *e == ',' ? e + 1 : e;
			}
		}
		free(t);
	}
	fclose(out);
	return buf;
}

static int count_children(struct tclu *c, const char *job)
{
	char p[256];
	snprintf(p, sizeof p, "/%s/%s/instances", c->ns, job);
	struct String_vector sv = { 0, NULL };
	if (tzk_children(c->zh, p, &sv) != ZOK) return -1;
	int n = sv.count;
	deallocate_String_vector(&sv);
	return n;
}

int tclu_start(struct tclu *c, const char *connect, const char *ns, int n, int workers, int session_ms,
               const char *jobs_yaml, const char *const *jobs, int njobs)
{
	memset(c, 0, sizeof *c);
	if (n < 1 || n > TCLU_MAX) return -1;
	c->connect = connect;
	c->n = n;
	snprintf(c->ns, sizeof c->ns, "%s", ns);
	snprintf(c->rec, sizeof c->rec, "%s", tsup_rec_script());
	char stem[600];
	snprintf(stem, sizeof stem, "%s/runs", tlib_tmpdir());
	char *a = replace_all(jobs_yaml, "@REC@", c->rec);
	char *body = a ? replace_all(a, "@OUT@", stem) : NULL;
	free(a);
	if (!body) return -1;
	size_t cap = strlen(body) + 1024;
	char *yaml = malloc(cap);
	snprintf(yaml, cap,
	         "regCenter: {serverLists: \"%s\", namespace: %s, sessionTimeoutMilliseconds: %d}\n"
	         "supervisor: {workers: %d, attachSocket: \"@SOCK@\", history: {file: \"@DIR@/history.jsonl\"}}\n"
	         "jobs:\n%s",
	         connect, ns, session_ms, workers, body);
	free(body);
	c->zh = tzk_connect(connect, 10000, NULL, 10000);
	if (!c->zh) {
		free(yaml);
		return -1;
	}
	for (int k = 0; k < n; k++) {
		char name[32];
		snprintf(name, sizeof name, "s%02d", k);
		snprintf(c->ip[k], sizeof c->ip[k], "127.0.0.%d", k + 2);
		tsup_config(&c->sup[k], name, yaml);
		const char *args[] = { "--ip", c->ip[k], NULL };
		if (tsup_start(&c->sup[k], args) <= 0) {
			printf("# tclu: cannot start supervisor %d\n", k);
			free(yaml);
			return -1;
		}
		snprintf(c->id[k], sizeof c->id[k], "%s@-@%d", c->ip[k], (int)c->sup[k].pid);
	}
	free(yaml);
	/* registered: every supervisor's instance node under every job */
	uint64_t end = tlib_now_ms() + 20000u + (uint64_t)n * njobs * 50u;
	for (int j = 0; j < njobs; j++)
		while (count_children(c, jobs[j]) != n) {
			if (tlib_now_ms() > end) {
				printf("# tclu: job %s has %d of %d instances after the wait\n", jobs[j], count_children(c, jobs[j]), n);
				return -1;
			}
			usleep(20000);
		}
	return 0;
}

void tclu_kill(struct tclu *c, int k)
{
	if (k < 0 || k >= c->n || c->dead[k]) return;
	pid_t pid = c->sup[k].pid;
	pid_t kids[256];
	int nk = tsup_descendants(pid, kids, 256);
	kill(pid, SIGKILL);
	for (int i = 0; i < nk; i++) kill(kids[i], SIGKILL);
	waitpid(pid, NULL, 0);
	tlib_untrack(pid);
	c->sup[k].reaped = 1;
	c->dead[k] = 1;
}

int tclu_leader(struct tclu *c, const char *job)
{
	char p[256], *data = NULL;
	snprintf(p, sizeof p, "/%s/%s/leader/election/instance", c->ns, job);
	if (tzk_get(c->zh, p, &data, NULL) != ZOK || !data) return -1;
	int who = -1;
	for (int k = 0; k < c->n && who < 0; k++)
		if (!strcmp(data, c->id[k])) who = k;
	free(data);
	return who;
}

int tclu_wait_instances(struct tclu *c, const char *const *jobs, int njobs, int want, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	for (int j = 0; j < njobs; j++)
		while (count_children(c, jobs[j]) != want) {
			if (tlib_now_ms() > end) return 0;
			usleep(10000);
		}
	return 1;
}

int tclu_stop(struct tclu *c)
{
	int bad = 0;
	for (int k = 0; k < c->n; k++) {
		if (c->dead[k]) continue;
		int st = tsup_stop(&c->sup[k], SIGTERM, 20000);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) bad++;
		c->dead[k] = 1;
	}
	if (c->zh) tzk_close(c->zh);
	c->zh = NULL;
	return bad;
}
