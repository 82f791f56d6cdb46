/* t/lib/tafter.c: listener commands' start and end records (tafter.h). */
#include "t/lib/tafter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
