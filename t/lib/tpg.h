/* t/lib/tpg.h: a real PostgreSQL 15 for the tests of serve's history (t/113): made with initdb in
 * the test's tmpdir and run as the postgres user (the test runs as root) on a free loopback port,
 * holding ElasticJob's tracing tables (the DDL of elasticjob-tracing-rdb, as the supervisors'
 * sink supervisor/sink/events_pg.c creates them). Its processes are tracked by t/lib/tlib (killed
 * at exit, on failure too). */
#ifndef EJOB_TPG_H
#define EJOB_TPG_H

#include <sys/types.h>

struct tpg {
	char data[600], sock[600];  /* its data directory, its socket directory */
	char conninfo[700];         /* postgresql://postgres@127.0.0.1:PORT/postgres?connect_timeout=3 (--pg) */
	int port;
	pid_t pid;                  /* the postmaster, 0 when stopped */
};

/* initdb, start, the tables. BAIL_OUT naming what is missing (PostgreSQL 15, its postgres user,
 * root) or what failed. */
void tpg_init(struct tpg *p);
void tpg_start(struct tpg *p);   /* start it again (after tpg_stop) */
void tpg_stop(struct tpg *p);
/* run sql (several statements may be given); BAIL_OUT if it fails */
void tpg_exec(struct tpg *p, const char *sql);
/* epoch ms as the local TIMESTAMP text ElasticJob's JDBC writes ("YYYY-MM-DD HH:MM:SS.mmm") */
void tpg_local(long long ms, char *out, size_t len);

#endif
