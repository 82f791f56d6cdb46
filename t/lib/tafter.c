/* t/lib/tafter.c: listener commands' start and end records (tafter.h). */
#include "t/lib/tafter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"

int tafter_load(const char *path, struct tafter_rec *r, int max)
{
	int n = 0;
	char *t = tsup_slurp(path);
	for (char *p = t ? strtok(t, "\n") : NULL; p && n < max; p = strtok(NULL, "\n")) {
		struct tafter_rec *a = &r[n];
		if (sscanf(p, "%7s %lld %d %d %lld", a->kind, &a->fire, &a->pid, &a->takeover, &a->ns) == 5) n++;
	}
	free(t);
	return n;
}

int tafter_count(const struct tafter_rec *r, int n, const char *kind, long long fire, int pid)
{
	int c = 0;
	for (int i = 0; i < n; i++) c += !strcmp(r[i].kind, kind) && r[i].fire == fire && (!pid || r[i].pid == pid);
	return c;
}

const struct tafter_rec *tafter_find(const struct tafter_rec *r, int n, const char *kind, long long fire, int not_pid)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(r[i].kind, kind) && r[i].fire == fire && r[i].pid != not_pid) return &r[i];
	return NULL;
}

int tafter_ended_fires(const struct tafter_rec *r, int n, long long after, long long *out, int max)
{
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(r[i].kind, "end") || r[i].fire <= after) continue;
		int seen = 0;
		for (int x = 0; x < k; x++) seen |= out[x] == r[i].fire;
		if (!seen && k < max) out[k++] = r[i].fire;
	}
	for (int a = 0; a < k; a++)
		for (int b = a + 1; b < k; b++)
			if (out[b] < out[a]) {
				long long t = out[a];
				out[a] = out[b];
				out[b] = t;
			}
	return k;
}

const struct tafter_rec *tafter_nth(const struct tafter_rec *r, int n, const char *kind, long long fire, int k)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(r[i].kind, kind) && r[i].fire == fire && k-- == 0) return &r[i];
	return NULL;
}

#define WAIT_MAX 1024

int tafter_wait_start(const char *path, long long after, unsigned timeout_ms, long long *fire, int *pid)
{
	static struct tafter_rec r[WAIT_MAX];
	for (uint64_t end = tlib_now_ms() + timeout_ms;; usleep(50000)) {
		int n = tafter_load(path, r, WAIT_MAX);
		for (int i = 0; i < n; i++)
			if (!strcmp(r[i].kind, "start") && r[i].fire > after) {
				*fire = r[i].fire;
				*pid = r[i].pid;
				return 1;
			}
		if (tlib_now_ms() >= end) return 0;
	}
}

int tafter_wait_end(const char *path, long long fire, int not_pid, unsigned timeout_ms)
{
	static struct tafter_rec r[WAIT_MAX];
	for (uint64_t end = tlib_now_ms() + timeout_ms;; usleep(200000)) {
		int n = tafter_load(path, r, WAIT_MAX);
		if (tafter_find(r, n, "end", fire, not_pid)) return 1;
		if (tlib_now_ms() >= end) return 0;
	}
}
