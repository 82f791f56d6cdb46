/* supervisor/obs/metrics.h: what the supervisor counts, and the three pages that show it: /metrics
 * (Prometheus's text format 0.0.4), /healthz, /status (JSON). Everything runs on the loop: fire.c
 * counts fires and items as they happen (plain counters), and a page is built, in memory, from
 * those counts and from a snapshot of the other modules' own counters that main.c's hooks take
 * at the moment of the request. No thread, no lock. (supervisor/obs/httpd.c serves the pages.)
 *
 * Label sets are bounded by the configuration, never by time: `job` only on ejob_fires_total,
 * ejob_items_total (x 6 outcomes at most, an outcome's series appears with its first count) and
 * ejob_leader (only the jobs led here: one series per job across the cluster); histograms and
 * everything else are per supervisor. 10,000 jobs: at most ~70,000 series per supervisor, in
 * practice one or two per job that fired (README, "Watching a cluster"). */
#ifndef EJOB_METRICS_H
#define EJOB_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "supervisor/coord/coord.h"
#include "supervisor/exec/dispatch.h"
#include "supervisor/exec/pool.h"
#include "supervisor/run/events.h"
#include "supervisor/sink/errh.h"

typedef struct metrics metrics_t;

#define METRICS_SINKS_MAX 8

/* The rest of the supervisor at the moment of a request, filled by hooks.snapshot. */
struct metrics_snapshot {
	const char *instance;       /* "{ip}@-@{pid}" */
	int stopping;
	int zk;                     /* coordinated by ZooKeeper (else --standalone) */
	struct coord_status cs;     /* zk only */
	struct coord_stats st;      /* zk only */
	uint64_t now_ns;            /* CLOCK_MONOTONIC */
	uint64_t wall_ns;           /* CLOCK_REALTIME, the same moment */
	struct pool_stats pool;
	uint32_t workers;
	uint32_t running, queued;   /* items published and not ended; queued here */
	uint64_t sub_used, sub_slots;   /* the pool's submission ring: slots taken, slots */
	uint64_t comp_used, comp_slots; /* its completion ring */
	size_t nsinks;
	struct {
		const char *name;
		uint64_t dropped;       /* events_dropped */
		uint64_t lost;          /* events_sink_health: records it could not write */
		int failing;            /* and it cannot write now, why says why */
		char why[256];
	} sinks[METRICS_SINKS_MAX];
	uint64_t errh[CONF_ERRH__COUNT][ERRH__RESULTS];  /* error handlers' messages (errh_counts) */
};

struct metrics_hooks {
	void (*snapshot)(void *arg, struct metrics_snapshot *s);
	/* slot i of the job table (coord_job_at): 0 filled, 1 skip it, -1 past the last; NULL: no ZooKeeper */
	int (*job_at)(void *arg, size_t i, struct coord_job *out);
	void (*foreach_running)(void *arg, void (*fn)(void *farg, const struct disp_run_info *r), void *farg);
};

metrics_t *metrics_new(const struct metrics_hooks *h, void *arg);
void metrics_free(metrics_t *m);

/* Count from e's events (a tap, on the loop): fires, items, lateness, fire times skipped, and
 * the recent events that /status lists. 0, or -1 (no room for another tap). */
int metrics_subscribe(metrics_t *m, events_t *e);

/* A page: the HTTP status, its body (malloc'd, *len bytes) and its content type; 404 for another
 * path. NULL body: out of memory (answer 500). */
int metrics_page(metrics_t *m, const char *path, char **body, size_t *len, const char **ctype);

/* /healthz alone (pure): 200, or 503 with the reason in why (stopping, ZooKeeper, then a sink that
 * cannot write: records are being lost). */
int metrics_health(const struct metrics_snapshot *s, char *why, size_t len);

#endif
