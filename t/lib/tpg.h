/* t/lib/tpg.h: a real PostgreSQL 15 for a test (as t/76 and t/106 start theirs): initdb in the
 * test's tmpdir as the postgres user (trust, no fsync), the server on a free loopback port in a
 * process group of its own (tracked by t/lib/tlib: killed at exit, on failure too). Needs root
 * and Debian's postgresql (tools/install-deps); BAIL_OUT naming what is missing otherwise. */
#ifndef EJOB_TPG_H
#define EJOB_TPG_H

#include <sys/types.h>

struct tpg {
	int port;
	pid_t pid;
	char data[600], sock[600];
	char url[200];              /* postgresql://postgres@127.0.0.1:PORT/postgres (serve's --pg, tracing's url) */
};

/* initdb and start; BAIL_OUT if it does not answer within 10 s */
void tpg_start(struct tpg *p);
/* one SQL string (several statements allowed); BAIL_OUT on an error */
void tpg_exec(struct tpg *p, const char *sql);
/* the first column of the first row of a query as a number (-1: none) */
long tpg_num(struct tpg *p, const char *sql);
void tpg_stop(struct tpg *p);

/* ElasticJob 3.0.x's two tables for PostgreSQL, as the supervisors' tracing sink creates them */
extern const char tpg_elasticjob_ddl[];

#endif
