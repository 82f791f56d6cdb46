/* t/lib/tpg.h: a real PostgreSQL 15 server (Debian's package) for tests (t/76, t/106).
 *
 * initdb in its own directory under tlib_tmpdir() (data/, a socket directory sock/ of its own,
 * postgres.log), run as the postgres user (the test runs as root: PostgreSQL refuses to), on a
 * free loopback port (tzk_free_port), listening on 127.0.0.1 only, fsync off, trust auth for the
 * user postgres. The postmaster leads a process group of its own, tracked by t/lib/tlib
 * (SIGKILLed at exit, on a fatal signal or when the watchdog fires) and has
 * PR_SET_PDEATHSIG=SIGKILL; its backends (each in a session of its own: PostgreSQL's setsid) end
 * when it does, and those tpg_pause stopped are tracked too until tpg_resume, so a test that fails
 * with the server frozen leaves no stopped backend behind.
 *
 * Without PostgreSQL 15 or its postgres user, or not as root, tpg_start bails out saying what is
 * missing and that tools/install-deps installs it: a test that needs the server cannot go on. */
#ifndef EJOB_TPG_H
#define EJOB_TPG_H

#include <stddef.h>
#include <sys/types.h>

#define TPG_MAX_PAUSED 128

struct tpg {
	pid_t pid;                 /* the postmaster; 0 when stopped (reaped) */
	int port;                  /* the same across restarts */
	uid_t uid;                 /* the postgres user's */
	gid_t gid;
	char dir[512];             /* tlib_tmpdir()/name */
	char data[600];            /* DIR/data (PGDATA) */
	char sock[600];            /* DIR/sock: its Unix socket, not /var/run/postgresql */
	char log[600];             /* DIR/postgres.log: its stderr (log_min_messages=fatal) */
	char url[700];             /* libpq's: "postgresql://postgres@127.0.0.1:PORT/postgres?connect_timeout=3" */
	pid_t paused[TPG_MAX_PAUSED];   /* the backends tpg_pause stopped */
	int npaused;
};

/* initdb in tlib_tmpdir()/name, start the server and wait (10 s at most) until it answers at
 * pg->url. Bails out (TAP) with the reason if it cannot. */
void tpg_start(struct tpg *pg, const char *name);

/* Start the stopped server again: the same data, port and url. Bails out if it does not answer
 * within 10 s. */
void tpg_restart(struct tpg *pg);

/* A fast shutdown (SIGINT: clients disconnected, no new ones) waited for, at most 30 s, then
 * SIGKILL. A paused server is resumed first. Its wait status; 0 if it was not running. */
int tpg_stop(struct tpg *pg);

/* SIGSTOP / SIGCONT the postmaster and every backend: a frozen server (a client's connect is
 * accepted by the kernel and never answered, a query on an open connection never returns). */
void tpg_pause(struct tpg *pg);
void tpg_resume(struct tpg *pg);

/* sql on the server (a connection of its own, kept, made again after a restart); bails out with
 * PostgreSQL's message if it fails. tpg_close ends the connection (before a tpg_stop that must
 * not wait for it). */
void tpg_exec(struct tpg *pg, const char *sql);
void tpg_close(void);
/* ElasticJob 3.0.x's two tracing tables (its PostgreSQL DDL, as supervisor/sink/events_pg.c makes them) */
void tpg_tables(struct tpg *pg);
/* epoch ms as the local TIMESTAMP text ElasticJob's JDBC writes ("2026-11-24 07:31:52.355") */
void tpg_local(long long ms, char *out, size_t len);

#endif
