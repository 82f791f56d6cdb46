/* t/lib/tpg.c: a real PostgreSQL 15 server for tests (see tpg.h). */
#include "t/lib/tpg.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/tap.h"

#define PGBIN "/usr/lib/postgresql/15/bin"

static void path_in(char *out, size_t len, const char *dir, const char *name)
{
	if ((size_t)snprintf(out, len, "%s/%s", dir, name) >= len) BAIL_OUT("tpg: a path too long: %s/%s", dir, name);
}

static void spawn(struct tpg *pg)
{
	char port[16];
	snprintf(port, sizeof port, "%d", pg->port);
	pid_t parent = getpid();
	pid_t p = tlib_fork();
	if (p < 0) BAIL_OUT("tpg: fork: %s", strerror(errno));
	if (p == 0) {
		setpgid(0, 0);
		int fd = open("/dev/null", O_RDONLY);
		if (fd >= 0) dup2(fd, 0);
		/* opened as root: postgres may not create files in the test's directory */
		fd = open(pg->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) dup2(fd, 2);
		if (setgroups(0, NULL) != 0 || setgid(pg->gid) != 0 || setuid(pg->uid) != 0) _exit(126);
		/* after setuid, which clears it; the test may be gone already */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent) _exit(125);
		execl(PGBIN "/postgres", "postgres", "-D", pg->data, "-p", port, "-k", pg->sock, "-c",
		      "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "log_min_messages=fatal", (char *)NULL);
		_exit(127);
	}
	setpgid(p, p);
	tlib_untrack(p);
	tlib_track_group(p);
	pg->pid = p;
	uint64_t t0 = tlib_now_ms();
	while (PQping(pg->url) != PQPING_OK) {
		int st;
		if (waitpid(p, &st, WNOHANG) == p) {
			tlib_untrack(p);
			pg->pid = 0;
			BAIL_OUT("tpg: PostgreSQL ended as it started (status 0x%x): see %s", st, pg->log);
		}
		if (tlib_now_ms() - t0 > 10000) BAIL_OUT("tpg: PostgreSQL did not start on port %d: see %s", pg->port, pg->log);
		usleep(20000);
	}
}

void tpg_start(struct tpg *pg, const char *name)
{
	memset(pg, 0, sizeof *pg);
	struct passwd *pw = getpwnam("postgres");
	if (!pw || access(PGBIN "/initdb", X_OK) != 0)
		BAIL_OUT("needs PostgreSQL 15 (" PGBIN ") and its postgres user: tools/install-deps");
	if (geteuid() != 0) BAIL_OUT("needs root, to run PostgreSQL as the postgres user");
	pg->uid = pw->pw_uid;
	pg->gid = pw->pw_gid;

	/* the server's own directories, owned by postgres, in one the postgres user may pass */
	const char *tmp = tlib_tmpdir();
	path_in(pg->dir, sizeof pg->dir, tmp, name);
	path_in(pg->data, sizeof pg->data, pg->dir, "data");
	path_in(pg->sock, sizeof pg->sock, pg->dir, "sock");
	path_in(pg->log, sizeof pg->log, pg->dir, "postgres.log");
	if (chmod(tmp, 0711) != 0 || mkdir(pg->dir, 0711) != 0 || mkdir(pg->data, 0700) != 0 || mkdir(pg->sock, 0700) != 0 ||
	    chown(pg->data, pg->uid, pg->gid) != 0 || chown(pg->sock, pg->uid, pg->gid) != 0)
		BAIL_OUT("cannot make PostgreSQL's directories in %s: %s", pg->dir, strerror(errno));
	const char *initdb[] = { "/usr/sbin/runuser", "-u", "postgres", "--", PGBIN "/initdb", "-D", pg->data, "-A",
	                         "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync", NULL };
	char *out = NULL, *err = NULL;
	int st = tlib_run(initdb, &out, &err);
	if (st != 0) BAIL_OUT("initdb failed (status 0x%x): %s", st, err ? err : "");
	free(out), free(err);

	pg->port = tzk_free_port();
	if (pg->port < 0) BAIL_OUT("tpg: no free port for PostgreSQL");
	snprintf(pg->url, sizeof pg->url, "postgresql://postgres@127.0.0.1:%d/postgres?connect_timeout=3", pg->port);
	spawn(pg);
}

void tpg_restart(struct tpg *pg)
{
	if (pg->pid > 0) BAIL_OUT("tpg_restart: PostgreSQL (pid %d) is running", (int)pg->pid);
	spawn(pg);
}

void tpg_pause(struct tpg *pg)
{
	if (pg->pid <= 0) return;
	kill(pg->pid, SIGSTOP);
	int n = tsup_children(pg->pid, pg->paused + pg->npaused, TPG_MAX_PAUSED - pg->npaused);
	for (int i = pg->npaused; i < pg->npaused + n; i++) {
		tlib_track(pg->paused[i]);      /* SIGKILLed if the test ends before tpg_resume */
		kill(pg->paused[i], SIGSTOP);
	}
	pg->npaused += n;
}

void tpg_resume(struct tpg *pg)
{
	if (pg->pid > 0) kill(pg->pid, SIGCONT);
	for (int i = 0; i < pg->npaused; i++) {
		kill(pg->paused[i], SIGCONT);
		tlib_untrack(pg->paused[i]);
	}
	pg->npaused = 0;
}

int tpg_stop(struct tpg *pg)
{
	if (pg->pid <= 0) return 0;
	tpg_resume(pg);
	kill(pg->pid, SIGINT);
	int st = 0;
	uint64_t end = tlib_now_ms() + 30000;
	pid_t r;
	while ((r = waitpid(pg->pid, &st, WNOHANG)) == 0 && tlib_now_ms() < end) usleep(10000);
	if (r == 0) {
		diag("tpg: PostgreSQL did not stop within 30 s of SIGINT: SIGKILL");
		kill(-pg->pid, SIGKILL);
		kill(pg->pid, SIGKILL);
		while (waitpid(pg->pid, &st, 0) < 0 && errno == EINTR) {}
	}
	tlib_untrack(pg->pid);
	pg->pid = 0;
	return st;
}

/* ---- SQL on it ------------------------------------------------------------------------------ */

static PGconn *db;              /* one connection, made again when it broke (a restart) */

void tpg_exec(struct tpg *pg, const char *sql)
{
	if (!db || PQstatus(db) != CONNECTION_OK) {
		PQfinish(db);
		db = PQconnectdb(pg->url);
	}
	PGresult *r = PQexec(db, sql);
	if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
		BAIL_OUT("%s: %s", sql, PQerrorMessage(db));
	PQclear(r);
}

void tpg_close(void)
{
	PQfinish(db);
	db = NULL;
}

/* ElasticJob 3.0.x's tables for PostgreSQL (PostgreSQL.properties), as supervisor/sink/events_pg.c
 * creates them */
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

void tpg_tables(struct tpg *pg)
{
	tpg_exec(pg, ddl);
}

void tpg_local(long long ms, char *out, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(out, len, "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(out + strlen(out), len - strlen(out), ".%03lld", ms % 1000);
}
