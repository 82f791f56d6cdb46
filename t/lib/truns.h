/* t/lib/truns.h: the runs of script items, as the stop, drain and restart tests (t/97, t/98, t/99)
 * record and judge them. Each item runs truns_script, which appends "KIND ITEM NS TASK FIRE" to
 * $OUT: start, then end (ran to its end) or cut (SIGTERM); it sleeps $SECS seconds (3 unset). */
#ifndef EJOB_TRUNS_H
#define EJOB_TRUNS_H

extern const char truns_script[];

/* One run: its start and end records paired by item, task id and fire id. */
struct trun {
	int item, ok, cut;          /* ok: ended by itself; cut: by SIGTERM */
	long long start, end, fire; /* wall-clock ms (end 0: not ended), EJOB_FIRE_ID */
	char task[200];
};

/* The runs of path that started in [from_ms, to_ms) (to_ms 0: no bound), in start order; how
 * many (at most max). */
int truns_read(const char *path, long long from_ms, long long to_ms, struct trun *r, int max);

/* The newest fire on the cron's grid of period_ms (a fire id that is a multiple of it) with a
 * run started within a second of it in path, 0 if none; the first one after `after`, waited for (0 after timeout_ms). */
long long truns_newest_fire(const char *path, int period_ms);
long long truns_wait_fire(const char *path, int period_ms, long long after, unsigned timeout_ms);

long long truns_wall_ms(void);
void truns_sleep_until(long long wall_ms);

/* What the runs of items 0 .. items-1 (items <= 64) show: ok runs per item, runs of one item that
 * overlap, runs not ended, cut runs, and cut runs no later run of the item started after, or
 * started only more than take_ms after the cut's end. */
struct truns_stats {
	int oks[64];
	int overlaps, unended, cuts, untaken, late;
};
void truns_judge(const struct trun *r, int n, int items, long long take_ms, struct truns_stats *st);

#endif
