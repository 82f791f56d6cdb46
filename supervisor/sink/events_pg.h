/* supervisor/sink/events_pg.h: ElasticJob's RDB tracing to PostgreSQL (the tracing key): the sink that
 * writes JOB_EXECUTION_LOG and JOB_STATUS_TRACE_LOG as elasticjob-tracing-rdb 3.0.x does. */
#ifndef EJOB_EVENTS_PG_H
#define EJOB_EVENTS_PG_H

#include "supervisor/run/events.h"

struct pg_params {
	const char *url;            /* libpq URI or conninfo; a leading "jdbc:" is dropped */
	const char *username;       /* NULL: the URL's */
	const char *password;       /* NULL: the URL's, PGPASSWORD or ~/.pgpass */
	const char *spool_dir;      /* created if missing; holds tracing.spool */
	long long spool_max_bytes;  /* rows past it are dropped (counted, logged once per episode) */
};

/* Subscribe the sink. Nothing is connected or opened here (on its thread, at its first event or
 * tick): a PostgreSQL that is down or a spool directory that is wrong is logged there, and the
 * supervisor goes on. queue: events it may have waiting in memory. */
event_sink_t *pg_open(events_t *e, const struct pg_params *p, unsigned queue);

#endif
