/* t/lib/tpg.c: see tpg.h (as t/106-serve-history.c runs its PostgreSQL) */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "t/lib/tlib.h"
#include "t/lib/tpg.h"
#include "t/lib/tzk.h"
#include "t/tap.h"

#define PGBIN "/usr/lib/postgresql/15/bin"

static uid_t pguid;
static gid_t pggid;
static PGconn *db;

/* ElasticJob 3.0.x's tables for PostgreSQL (PostgreSQL.properties) */
static const char ddl[] =
	"CREATE TABLE IF NOT EXISTS JOB_EXECUTION_LOG (id VARCHAR(40) NOT NULL, job_name VARCHAR(100) NOT NULL, "
	"task_id VARCHAR(255) NOT NULL, hostname VARCHAR(255) NOT NULL, ip VARCHAR(50) NOT NULL, sharding_item INT NOT "
	"NULL, execution_source VARCHAR(20) NOT NULL, failure_cause VARCHAR(4000) NULL, is_success BOOLEAN NOT NULL, "
	"start_time TIMESTAMP NULL, complete_time TIMESTAMP NULL, PRIMARY KEY (id));"
	"CREATE TABLE IF NOT EXISTS JOB_STATUS_TRACE_LOG (id VARCHAR(40) NOT NULL, job_name VARCHAR(100) NOT NULL, "
	"original_task_id VARCHAR(255) NOT NULL, task_id VARCHAR(255) NOT NULL, slave_id VARCHAR(50) NOT NULL, source "
	"VARCHAR(50) NOT NULL, execution_type VARCHAR(20) NOT NULL, sharding_item VARCHAR(100) NOT NULL, state "
	"VARCHAR(20) NOT NULL, message VARCHAR(4000) NULL, creation_time TIMESTAMP NULL, PRIMARY KEY (id));"
	"CREATE INDEX IF NOT EXISTS TASK_ID_STATE_INDEX ON JOB_STATUS_TRACE_LOG (task_id, state)";

void tpg_start(struct tpg *p)
{
	char port[16];
	snprintf(port, sizeof port, "%d", p->port);
	pid_t c = tlib_fork();
	if (c < 0) BAIL_OUT("fork: %s", strerror(errno));
	if (c == 0) {
		setpgid(0, 0);
		int fd = open("/dev/null", O_RDONLY);
		if (fd >= 0) dup2(fd, 0);
		char log[700];
		snprintf(log, sizeof log, "%s/postgres.log", tlib_tmpdir());
		fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) dup2(fd, 2);
		if (setgroups(0, NULL) != 0 || setgid(pggid) != 0 || setuid(pguid) != 0) _exit(126);
		execl(PGBIN "/postgres", "postgres", "-D", p->data, "-p", port, "-k", p->sock, "-c",
		      "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "log_min_messages=fatal", (char *)NULL);
		_exit(127);
	}
	setpgid(c, c);
	tlib_untrack(c);
	tlib_track_group(c);
	p->pid = c;
	uint64_t t0 = tlib_now_ms();
	while (PQping(p->conninfo) != PQPING_OK) {
		if (tlib_now_ms() - t0 > 10000) BAIL_OUT("PostgreSQL did not start on port %d (%s/postgres.log)", p->port, tlib_tmpdir());
		usleep(20000);
	}
}

void tpg_stop(struct tpg *p)
{
	PQfinish(db);
	db = NULL;
	if (!p->pid) return;
	kill(p->pid, SIGINT);
	waitpid(p->pid, NULL, 0);
	tlib_untrack(p->pid);
	p->pid = 0;
}

void tpg_exec(struct tpg *p, const char *sql)
{
	if (!db || PQstatus(db) != CONNECTION_OK) {
		PQfinish(db);
		db = PQconnectdb(p->conninfo);
	}
	PGresult *r = PQexec(db, sql);
	if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
		BAIL_OUT("%s: %s", sql, PQerrorMessage(db));
	PQclear(r);
}

void tpg_init(struct tpg *p)
{
	memset(p, 0, sizeof *p);
	struct passwd *pw = getpwnam("postgres");
	if (!pw || access(PGBIN "/initdb", X_OK) != 0)
		BAIL_OUT("needs PostgreSQL 15 (" PGBIN ") and its postgres user: tools/install-deps");
	if (geteuid() != 0) BAIL_OUT("needs root, to run PostgreSQL as the postgres user");
	pguid = pw->pw_uid;
	pggid = pw->pw_gid;
	const char *tmp = tlib_tmpdir();
	chmod(tmp, 0711);
	snprintf(p->data, sizeof p->data, "%s/pgdata", tmp);
	snprintf(p->sock, sizeof p->sock, "%s/pgsock", tmp);
	if (mkdir(p->data, 0700) != 0 || mkdir(p->sock, 0700) != 0 || chown(p->data, pguid, pggid) != 0 ||
	    chown(p->sock, pguid, pggid) != 0)
		BAIL_OUT("cannot make PostgreSQL's directories in %s: %s", tmp, strerror(errno));
	const char *initdb[] = { "/usr/sbin/runuser", "-u", "postgres", "--", PGBIN "/initdb", "-D", p->data, "-A",
	                         "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync", NULL };
	char *out = NULL, *err = NULL;
	int st = tlib_run(initdb, &out, &err);
	if (st != 0) BAIL_OUT("initdb failed (status 0x%x): %s", st, err ? err : "");
	free(out), free(err);
	p->port = tzk_free_port();
	snprintf(p->conninfo, sizeof p->conninfo, "postgresql://postgres@127.0.0.1:%d/postgres?connect_timeout=3", p->port);
	tpg_start(p);
	tpg_exec(p, ddl);
}

void tpg_local(long long ms, char *out, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(out, len, "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(out + strlen(out), len - strlen(out), ".%03lld", ms % 1000);
}
