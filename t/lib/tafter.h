/* t/lib/tafter.h: the records an afterAll command of t/82-84 writes, one line per start and end:
 * "start FIRE PID TAKEOVER NS" and "end FIRE PID TAKEOVER NS" (PID: the one the test's script
 * names: its own $$, or the supervisor that ran it: its keeper's parent, afterAll runs under a lease). */
#ifndef EJOB_TAFTER_H
#define EJOB_TAFTER_H

struct tafter_rec {
	char kind[8];          /* "start" or "end" */
	long long fire;
	int pid;               /* as the script wrote it */
	int takeover;          /* EJOB_LISTENER_TAKEOVER of a start */
	long long ns;          /* its wall clock */
};

/* The records of path, in the order written: how many (at most max). */
int tafter_load(const char *path, struct tafter_rec *r, int max);
/* Of r[0..n): the records of kind for fire, by the supervisor pid (0: any). */
int tafter_count(const struct tafter_rec *r, int n, const char *kind, long long fire, int pid);
/* Of r[0..n): the first record of kind for fire by a pid other than not_pid (0: any), or NULL. */
const struct tafter_rec *tafter_find(const struct tafter_rec *r, int n, const char *kind, long long fire, int not_pid);
/* Of r[0..n): the k-th record (0 ..) of kind for fire, or NULL. */
const struct tafter_rec *tafter_nth(const struct tafter_rec *r, int n, const char *kind, long long fire, int k);
/* Of r[0..n): the fires above `after` with an end record, ascending, into out (at most max). */
int tafter_ended_fires(const struct tafter_rec *r, int n, long long after, long long *out, int max);

/* Polling path every 50 ms for up to timeout_ms: the first start record of a fire above `after`
 * (1, its fire and pid), else 0. */
int tafter_wait_start(const char *path, long long after, unsigned timeout_ms, long long *fire, int *pid);
/* Polling path every 200 ms for up to timeout_ms: 1 once fire has an end record by a pid other than
 * not_pid, else 0. */
int tafter_wait_end(const char *path, long long fire, int not_pid, unsigned timeout_ms);

#endif
