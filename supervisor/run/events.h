/* supervisor/run/events.h: the execution events. One event per thing that happens to a job here:
 * its fires and their items (fire.c emits them from the one place where fires track their
 * items), fires that do not run and why, misfires, failovers, assignments, leadership and the
 * session (the scheduler and coord). Subscribers: taps, called on the loop at once (cheap
 * counters: the metrics and their recent-events list), and sinks (the history file,
 * PostgreSQL), each behind a bounded queue and a thread of its own. A sink never blocks the
 * loop: events_emit() copies the event into each sink's queue and returns. When a sink's queue
 * is full the event is dropped for that sink only, counted (events_dropped), and the log says
 * so once per episode (when it starts, and how many were lost when it ends). */
#ifndef EJOB_EVENTS_H
#define EJOB_EVENTS_H

#include <stddef.h>
#include <stdint.h>

enum event_type {
	EVT_ITEM_STARTED = 1,       /* an attempt published to a worker (dispatched: it starts at once) */
	EVT_ITEM_ENDED,             /* an attempt's outcome; final 0: it is retried (attempt + 1 follows) */
	EVT_FIRE_STARTED,           /* a fire's items were handed out here (task_id names them all) */
	EVT_FIRE_ENDED,             /* each of them has its final outcome (status: ok when all are) */
	EVT_FIRE_SKIPPED,           /* a fire time that runs nothing here: reason (a code), detail (why) */
	EVT_MISFIRE,                /* count items found still running at a fire: misfire flagged */
	EVT_FAILOVER,               /* item of a crashed instance taken here: detail its instance */
	EVT_ASSIGNMENT,             /* an assignment in force here: epoch, count items of this instance */
	EVT_SHARDED,                /* this leader committed an assignment: epoch, count instances */
	EVT_LEADER,                 /* reason "gained" or "lost" */
	EVT_SESSION,                /* the ZooKeeper session: reason "connected", "disconnected",
	                               "expired", "auth_failed"; detail the session id */
	EVT_LISTENER,               /* a listener command ended: reason its kind ("before", "afterAll", ...),
	                               status enum listen_result (listen.h), detail how it ended */
	EVT__COUNT
};
const char *event_type_name(enum event_type t);   /* "item_started", "fire_skipped", ... */

/* Where an execution came from, with ElasticJob's names (ExecutionSource). */
enum event_source { EVS_NORMAL = 0, EVS_MISFIRE, EVS_FAILOVER };
const char *event_source_name(enum event_source s);   /* "NORMAL_TRIGGER", "MISFIRE", "FAILOVER" */

struct event {
	enum event_type type;
	const char *job;
	const char *task_id;        /* ElasticJob's taskId of the fire's items here */
	const char *where;          /* "worker 3", "attach:4242#0" */
	const char *error;          /* ended: the failure cause ("" if none) */
	const char *output;         /* ended: the last lines of its output (NULL: none) */
	const char *reason;         /* skipped, leader, session: a short code */
	const char *detail;         /* skipped: why, for people; failover: from which instance */
	uint64_t fire_ms;           /* the fire id */
	uint64_t epoch;             /* the assignment it ran under (0: none) */
	uint64_t start_ms;          /* wall clock: the attempt's start (ended: end - duration) */
	uint64_t end_ms;            /* wall clock: its end (0: started) */
	uint64_t duration_us;
	uint32_t item, attempt;
	uint32_t count;             /* misfire, assignment: items; sharded: instances */
	int late;                   /* item started: late_ms is set (the first item of a scheduled fire) */
	uint64_t late_ms;           /* from the fire's scheduled time to that start */
	uint32_t status;            /* ended: enum frame_status */
	int32_t exit_code, signal;
	int final;                  /* ended: no retry follows */
	enum event_source source;
	const uint64_t *fires;      /* fires' and items' events: the fire ids the run stands for, ascending
	                               (a fire: its own; a catch-up: each missed fire; NULL: not known,
	                               a failover's or a misfire flag's run) */
	uint32_t nfires;
	uint32_t fires_omitted;     /* older fires it stands for too, only counted */
	uint64_t run;               /* items' events: the workflow run the fire is part of (0: none) */
};

typedef struct events events_t;
typedef struct event_sink event_sink_t;

/* Events of this supervisor (instance: "{ip}@-@{pid}", named in every record). */
events_t *events_new(const char *instance);
/* Stops every sink: each writes what it has queued (at most its queue), then its thread ends. */
void events_free(events_t *e);

/* A sink with a thread of its own: fn(arg, ev) is called on it for each event, in order; fin(arg)
 * once at the end, on that thread. cap: events it may have queued. NULL on failure (logged). */
event_sink_t *events_sink(events_t *e, const char *name, unsigned cap, void (*fn)(void *arg, const struct event *ev),
                          void (*fin)(void *arg), void *arg);
/* Also call idle(arg) on the sink's thread when no event came for period_ms (a sink that retries
 * on its own: a spool to replay). */
void events_sink_idle(event_sink_t *s, unsigned period_ms, void (*idle)(void *arg));
/* Only these event types go to the sink (bit 1 << type; default: all): others cost it no copy. */
void events_sink_types(event_sink_t *s, unsigned types);
/* Also call flush(arg) on its thread when it has handled events and found its queue empty (a
 * sink that writes in batches), and once at the end before fin. */
void events_sink_flush(event_sink_t *s, void (*flush)(void *arg));
uint64_t events_dropped(const event_sink_t *s);   /* events this sink lost because its queue was full */
/* From the sink's thread: n more records it could not keep (a file it cannot write); and whether
 * it fails now: why in a line ("cannot open /x/h.jsonl: No such file or directory"), NULL once it
 * works again. */
void events_sink_lost(event_sink_t *s, uint64_t n);
void events_sink_failing(event_sink_t *s, const char *why);
/* From the loop: what the sink reported: records lost since the start; 1 (why in why) while it
 * fails, else 0. */
int events_sink_health(const event_sink_t *s, uint64_t *lost, char *why, size_t len);
/* The sinks, for the metrics: sink i (0 ..), or NULL past the last (e may be NULL); its name. */
const event_sink_t *events_sink_at(const events_t *e, size_t i);
const char *events_sink_name(const event_sink_t *s);
const char *events_instance(const events_t *e);

/* A tap: fn(arg, ev) on the loop, inside events_emit, for each event of the types given (bit
 * 1 << type). It must be quick and never block; ev and its strings live only for the call. */
int events_tap(events_t *e, unsigned types, void (*fn)(void *arg, const struct event *ev), void *arg);

/* From the loop: the taps first, then a copy to every sink's queue; never waits. e may be NULL. */
void events_emit(events_t *e, const struct event *ev);

#endif
