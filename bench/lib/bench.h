/* bench/lib/bench.h: what the benchmarks share (every .c of bench/lib is linked into each bench/NAME):
 * small helpers, ZooKeeper's four-letter words, the supervisor's log, and the stamp files their
 * jobs write ("REALTIME_NS JOB ITEM FIRE_ID TASK_ID" a line). */
#ifndef EJOB_BENCH_H
#define EJOB_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "t/lib/tsup.h"
#include "t/lib/tzk.h"

/* the program's name in its messages ("bench" unless the program sets it) */
extern const char *bench_name;

/* Give up: say why (with the supervisor's log if there is one); tlib kills what was started. */
#define fail(t, ...) tsup_die(bench_name, t, __VA_ARGS__)

void sleep_ms(unsigned ms);
int cmp64(const void *a, const void *b);                 /* qsort of int64_t */
int64_t pct(const int64_t *sorted, int n, double p);     /* p-th quantile of n sorted values, nearest rank */

/* A growing text: the configs of 10,000 jobs are megabytes. */
struct text { char *p; size_t len, cap; };
__attribute__((format(printf, 2, 3)))
void add(struct text *b, const char *fmt, ...);

/* ZooKeeper's four-letter words: a number of a reply ("KEY\tVALUE" of mntr, "KEY:VALUE" of wchs;
 * -1 if none); packets received + sent (mntr); every session's id and request counter (cons
 * lcxid: pings do not count), up to max, how many; the requests sent between two snapshots by
 * the sessions in both, but for `except`. */
long long zk_num(const struct tzk_server *zk, const char *cmd, const char *key);
long long zk_packets(const struct tzk_server *zk);
int sessions_cxid(const struct tzk_server *zk, int64_t *sid, int64_t *cxid, int max);
long long requests_between(const int64_t *sid0, const int64_t *cx0, int n0, const int64_t *sid1,
                           const int64_t *cx1, int n1, int64_t except, int *sessions);

/* The supervisor's log: a line's wall time (ns; -1 if it has none); the time of the nth line
 * with needle (-1 if fewer); wait (polling every 100 ms) until count lines have needle, else fail. */
int64_t line_time(const char *line);
int64_t nth_line_time(const struct tsup *t, const char *needle, int nth);
void wait_log(struct tsup *t, const char *needle, int count, unsigned timeout_ms, const char *what);

/* Stamps, read as the file grows (whole lines only) */
struct stamp { int64_t ns, fire; int job, item; };
struct stamps {
	char path[600];
	off_t off;                   /* read up to here: whole lines only */
	struct stamp *s;
	size_t n, cap;
};
void stamps_init(struct stamps *st, const char *name);  /* tlib_tmpdir()/name.stamps, empty */
size_t stamps_read(struct stamps *st);                   /* read what was appended; the number of stamps now */
size_t count_fire(const struct stamps *st, int64_t fire);

/* The next time (s) after `after` of the cron "S/P * * * * ?" (P divides 60). */
int64_t next_fire(int64_t after, int s, int p);

#endif
