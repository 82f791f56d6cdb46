/* t/lib/truns.c: see truns.h. */
#include "t/lib/truns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"

const char truns_script[] =
	"#!/bin/sh\n"
	"rec() { echo \"$1 $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID $EJOB_FIRE_ID\" >> \"$OUT\"; }\n"
	"rec start\n"
	"trap 'rec cut; exit 143' TERM\n"
	"sleep ${SECS:-3} & wait\n"
	"rec end\n";

#define MAXREC 8192
static struct tsup_rec rec[MAXREC];

int truns_read(const char *path, long long from_ms, long long to_ms, struct trun *r, int max)
{
	int n = tsup_read_recs(path, rec, MAXREC), nr = 0;
	for (int i = 0; i < n; i++) {
		long long ms = rec[i].ns / 1000000;
		if (!strcmp(rec[i].kind, "start")) {
			if (ms < from_ms || (to_ms && ms >= to_ms) || nr == max) continue;
			struct trun *x = &r[nr++];
			memset(x, 0, sizeof *x);
			x->item = rec[i].item;
			x->start = ms;
			x->fire = rec[i].extra;
			snprintf(x->task, sizeof x->task, "%s", rec[i].task);
			continue;
		}
		for (int k = nr - 1; k >= 0; k--)
			if (r[k].item == rec[i].item && r[k].fire == rec[i].extra && !strcmp(r[k].task, rec[i].task) && !r[k].end) {
				r[k].end = ms;
				r[k].ok = !strcmp(rec[i].kind, "end");
				r[k].cut = !strcmp(rec[i].kind, "cut");
				break;
			}
	}
	return nr;
}

long long truns_newest_fire(const char *path, int period_ms)
{
	int n = tsup_read_recs(path, rec, MAXREC);
	long long f = 0;
	for (int i = 0; i < n; i++)
		if (!strcmp(rec[i].kind, "start") && rec[i].extra % period_ms == 0 && rec[i].ns / 1000000 - rec[i].extra < 1000 &&
		    rec[i].extra > f)
			f = rec[i].extra;
	return f;
}

long long truns_wait_fire(const char *path, int period_ms, long long after, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	long long f;
	while ((f = truns_newest_fire(path, period_ms)) <= after && tlib_now_ms() < end) usleep(20000);
	return f > after ? f : 0;
}

long long truns_wall_ms(void)
{
	return tlib_wall_ns() / 1000000;
}

void truns_sleep_until(long long wall_ms)
{
	long long now = truns_wall_ms();
	if (wall_ms > now) usleep((useconds_t)(wall_ms - now) * 1000);
}

void truns_judge(const struct trun *r, int n, int items, long long take_ms, struct truns_stats *st)
{
	memset(st, 0, sizeof *st);
	for (int a = 0; a < n; a++) {
		const struct trun *x = &r[a];
		if (x->item < 0 || x->item >= items || x->item >= 64) continue;
		st->oks[x->item] += x->ok;
		st->unended += !x->end;
		long long next = 0;
		for (int b = 0; b < n && x->end; b++) {
			const struct trun *y = &r[b];
			if (b == a || y->item != x->item) continue;
			if (y->start >= x->start && y->start < x->end) {
				st->overlaps++;
				fprintf(stderr, "# item %d: a run from %lld to %lld (%s) and one from %lld (%s) overlap\n", x->item,
				        x->start, x->end, x->task, y->start, y->task);
			}
			if (y->start >= x->end && (!next || y->start < next)) next = y->start;
		}
		if (!x->cut) continue;
		st->cuts++;
		if (!next) st->untaken++;
		else if (next - x->end > take_ms) st->late++;
		fprintf(stderr, "# item %d: cut %+lld ms into its fire; run again %lld ms later\n", x->item, x->end - x->fire,
		        next ? next - x->end : -1);
	}
}
