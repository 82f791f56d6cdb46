/* supervisor/sink/events_pg.c: ElasticJob's RDB tracing, to PostgreSQL (tracing: {type: RDB, url}).
 *
 * The rows are those elasticjob-tracing-rdb 3.0.x writes (RDBJobEventStorage with
 * META-INF/sql/PostgreSQL.properties): one JOB_EXECUTION_LOG row per attempt of an item, inserted
 * when it starts and completed when it ends; JOB_STATUS_TRACE_LOG rows TASK_STAGING and
 * TASK_RUNNING when a fire's items are handed out here, TASK_FINISHED or TASK_ERROR when each has
 * its final outcome. docs/config.md ("Tracing") says what each column gets.
 *
 * All of it runs on the sink's own thread (events.h) with libpq's plain API, each call bounded by
 * a deadline of ours (poll on the connection's socket), so a PostgreSQL that hangs costs this
 * thread a few seconds, never the loop. Every row first tried directly; when PostgreSQL is away,
 * or rows already wait, it goes to the end of the spool (SPOOLDIR/tracing.spool, bounded), which
 * is replayed in order when PostgreSQL answers again, also by the next supervisor using that
 * directory. Ids are derived from what the row is about (instance, taskId, fire, item, attempt,
 * state), and every write is ON CONFLICT (id): a row replayed twice is still one row. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "ipc/frame.h"
#include "supervisor/base/dlib.h"
#include "ipc/lastrun.h"
#include "ipc/wait.h"
#include "supervisor/base/log.h"
#include "supervisor/sink/events_pg.h"

#define PG_DEADLINE_MS 5000          /* a connect, or one statement */
#define PG_RETRY_MIN_MS 250          /* PostgreSQL away: the first retry, doubled up to ... */
#define PG_RETRY_MAX_MS 5000
#define PG_IDLE_MS 250               /* the sink's tick while nothing happens */
#define PG_OPEN_FIRES 4096           /* fires whose failures are kept for their TASK_ERROR message */
#define PG_TEXT_MAX 4000             /* failure_cause and message: VARCHAR(4000) */
#define PG_NPARAM 11

/* ElasticJob's DDL for PostgreSQL (PostgreSQL.properties), IF NOT EXISTS where it checks first.
 * One simple-protocol query, so one transaction, behind a transaction-scoped advisory lock of
 * ours: supervisors starting together on an empty database create the tables one after the
 * other, the later ones finding them there, instead of racing in CREATE TABLE (which fails with
 * a unique_violation on pg_type). The lock's key is "ejobddl1" in ASCII. */
#define PG_DDL_LOCK "7307775813743832113"
static const char ddl[] =
	"SELECT pg_advisory_xact_lock(" PG_DDL_LOCK ");"
	"CREATE TABLE IF NOT EXISTS JOB_EXECUTION_LOG (id VARCHAR(40) NOT NULL, job_name VARCHAR(100) NOT NULL, "
	"task_id VARCHAR(255) NOT NULL, hostname VARCHAR(255) NOT NULL, ip VARCHAR(50) NOT NULL, sharding_item INT NOT "
	"NULL, execution_source VARCHAR(20) NOT NULL, failure_cause VARCHAR(4000) NULL, is_success BOOLEAN NOT NULL, "
	"start_time TIMESTAMP NULL, complete_time TIMESTAMP NULL, PRIMARY KEY (id));"
	"CREATE TABLE IF NOT EXISTS JOB_STATUS_TRACE_LOG (id VARCHAR(40) NOT NULL, job_name VARCHAR(100) NOT NULL, "
	"original_task_id VARCHAR(255) NOT NULL, task_id VARCHAR(255) NOT NULL, slave_id VARCHAR(50) NOT NULL, source "
	"VARCHAR(50) NOT NULL, execution_type VARCHAR(20) NOT NULL, sharding_item VARCHAR(100) NOT NULL, state "
	"VARCHAR(20) NOT NULL, message VARCHAR(4000) NULL, creation_time TIMESTAMP NULL, PRIMARY KEY (id));"
	"CREATE INDEX IF NOT EXISTS TASK_ID_STATE_INDEX ON JOB_STATUS_TRACE_LOG (task_id, state)";

enum op_kind { OP_EXEC_START = 1, OP_EXEC_END, OP_TRACE, OP__N };

/* the statement of each kind, and how many parameters it takes */
static const struct {
	const char *sql;
	int n;
} stmts[OP__N] = {
	[OP_EXEC_START] = { "INSERT INTO JOB_EXECUTION_LOG (id, job_name, task_id, hostname, ip, sharding_item, "
	                    "execution_source, is_success, start_time) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) "
	                    "ON CONFLICT (id) DO NOTHING", 9 },
	/* ElasticJob's UPDATE, or its INSERT_COMPLETE / INSERT_FAILURE when the start row is missing */
	[OP_EXEC_END] = { "INSERT INTO JOB_EXECUTION_LOG (id, job_name, task_id, hostname, ip, sharding_item, "
	                  "execution_source, failure_cause, is_success, start_time, complete_time) VALUES ($1, $2, $3, "
	                  "$4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (id) DO UPDATE SET is_success = "
	                  "EXCLUDED.is_success, complete_time = EXCLUDED.complete_time, failure_cause = "
	                  "EXCLUDED.failure_cause", 11 },
	[OP_TRACE] = { "INSERT INTO JOB_STATUS_TRACE_LOG (id, job_name, original_task_id, task_id, slave_id, source, "
	               "execution_type, sharding_item, state, message, creation_time) VALUES ($1, $2, $3, $4, $5, $6, "
	               "$7, $8, $9, $10, $11) ON CONFLICT (id) DO NOTHING", 11 },
};

/* one row's statement: its kind and its parameters as text (NULL: SQL NULL) */
struct op {
	int kind;
	const char *v[PG_NPARAM];
};

/* the failures of a fire in progress, for its TASK_ERROR message ("{1=cause, 3=cause}") */
struct open_fire {
	char *task_id;
	uint64_t fire_ms;
	size_t n, cap;
	struct fail { uint32_t item; char *cause; } *fails;
	struct open_fire *next;
};

struct pg {
	char *url, *user, *pass, *dir, *spool;
	long long max;
	const char *instance;
	char host[256], ip[64];
	PGconn *conn;
	int started;                /* the spool was looked at (the thread's first call) */
	int fd;                     /* the spool, or -1 */
	long long head, size;       /* rows [head, size) wait in it */
	uint64_t retry_at;          /* monotonic ms: the next connect, while PostgreSQL is away */
	unsigned backoff;
	int away;                   /* PostgreSQL unreachable: logged once per episode */
	uint64_t dropped, episode;  /* rows lost because the spool was full or unusable */
	uint64_t rejected;          /* rows PostgreSQL refused (not retried) */
	uint64_t replayed;          /* spooled rows written in this episode */
	struct open_fire *fires;
	size_t nfires;
};

static uint64_t now_ms(void)
{
	return wait_now_ns() / 1000000u;
}

/* ---- values -------------------------------------------------------------------------------- */

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A UUID (RFC 9562 version 8: our own 122 bits) from what the row is about, so that the same row
 * written again has the same id. */
static void row_id(char out[37], const char *what, const char *a, const char *b, uint64_t x, uint64_t y, uint64_t z)
{
	uint64_t h1 = 0xcbf29ce484222325ULL, h2 = 0x84222325cbf29ce4ULL;
	const char *parts[] = { what, a, b };
	for (size_t k = 0; k < 3; k++) {
		for (const unsigned char *p = (const unsigned char *)parts[k]; *p; p++) {
			h1 = (h1 ^ *p) * 0x100000001b3ULL;
			h2 = (h2 ^ *p) * 0x1000193ULL + 0x9e3779b97f4a7c15ULL;
		}
		h1 = (h1 ^ 0xff) * 0x100000001b3ULL;
		h2 = mix(h2 ^ h1);
	}
	uint64_t nums[] = { x, y, z };
	for (size_t k = 0; k < 3; k++) {
		h1 = mix(h1 ^ nums[k]);
		h2 = mix(h2 + nums[k] + h1);
	}
	h1 = (h1 & ~0xf000ULL) | 0x8000ULL;                    /* version 8 */
	h2 = (h2 & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;   /* variant 10 */
	snprintf(out, 37, "%08" PRIx32 "-%04x-%04x-%04x-%012" PRIx64, (uint32_t)(h1 >> 32),
	         (unsigned)((h1 >> 16) & 0xffff), (unsigned)(h1 & 0xffff), (unsigned)(h2 >> 48),
	         (uint64_t)(h2 & 0xffffffffffffULL));
}

/* TIMESTAMP (without time zone) as ElasticJob's JDBC writes it: the local wall clock */
static void ts(char out[32], uint64_t ms)
{
	time_t t = (time_t)(ms / 1000u);
	struct tm tm;
	if (!localtime_r(&t, &tm) || !strftime(out, 32, "%Y-%m-%d %H:%M:%S", &tm)) {
		snprintf(out, 32, "1970-01-01 00:00:00");
		return;
	}
	size_t n = strlen(out);
	snprintf(out + n, 32 - n, ".%03u", (unsigned)(ms % 1000u));
}

/* cut s to PG_TEXT_MAX bytes, on a character boundary (ElasticJob's truncateString) */
static void cut(char *s)
{
	size_t n = strlen(s);
	if (n <= PG_TEXT_MAX) return;
	n = PG_TEXT_MAX;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80) n--;
	s[n] = 0;
}

/* "failed (exit 3)", "timeout (signal 15): ran past 1 s": fire.c's words for an outcome, as an
 * item's last record (sharding/{i}/last) says them too (lastrun_cause) */
static char *cause_of(const struct event *ev)
{
	const char *err = ev->error ? ev->error : "";
	/* then what it wrote last, where ElasticJob puts the stack trace */
	const char *out = ev->output ? ev->output : "";
	size_t n = strlen(err) + strlen(out) + 96;
	char *c = malloc(n);
	if (!c) return NULL;
	size_t k = lastrun_cause(c, n, frame_status_name(ev->status), ev->exit_code, ev->signal, err);
	if (out[0]) snprintf(c + k, n - k, "\nlast output:\n%s", out);
	cut(c);
	return c;
}

/* The parts of a taskId ("job@-@0,1@-@READY@-@ip@-@pid") that ElasticJob's TaskContext.from()
 * takes: the items as Java prints a List ("[0, 1]"), the execution type, the slave id (the ip). */
static void task_parts(const char *task, char *items, size_t ilen, char *type, size_t tlen, char *slave, size_t slen)
{
	const char *p[5] = { task, NULL, NULL, NULL, NULL };
	for (int k = 1; k < 5 && p[k - 1]; k++) {
		const char *d = strstr(p[k - 1], "@-@");
		p[k] = d ? d + 3 : NULL;
	}
	size_t o = 0;
	items[o++] = '[';
	if (p[1]) {
		for (const char *c = p[1]; *c && strncmp(c, "@-@", 3) != 0 && o + 3 < ilen; c++) {
			items[o++] = *c;
			if (*c == ',') items[o++] = ' ';
		}
	}
	items[o++] = ']';
	items[o] = 0;
	snprintf(type, tlen, "%.*s", p[2] && p[3] ? (int)(p[3] - 3 - p[2]) : 0, p[2] ? p[2] : "");
	snprintf(slave, slen, "%.*s", p[3] && p[4] ? (int)(p[4] - 3 - p[3]) : 0, p[3] ? p[3] : "");
	if (!type[0]) snprintf(type, tlen, "READY");
}

/* ---- the spool: records [u32 len][u8 'E'][u8 kind][u8 n] n x ([i32 len, -1: NULL][bytes]) ------ */

static int spool_start(struct pg *g)
{
	g->started = 1;
	g->fd = -1;
	if (mkdir(g->dir, 0750) != 0 && errno != EEXIST) {
		log_error("tracing: cannot create the spool directory %s: %s; rows are lost while PostgreSQL is away",
		          g->dir, strerror(errno));
		return -1;
	}
	int fd = open(g->spool, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0) {
		log_error("tracing: cannot open the spool %s: %s; rows are lost while PostgreSQL is away", g->spool,
		          strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		log_error("tracing: the spool %s is in use by another supervisor (flock: %s): give each its own "
		          "tracing.spoolDir; rows are lost while PostgreSQL is away", g->spool, strerror(errno));
		close(fd);
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		log_error("tracing: fstat(%s) failed: %s", g->spool, strerror(errno));
		close(fd);
		return -1;
	}
	g->fd = fd;
	g->head = 0;
	g->size = (long long)st.st_size;
	if (g->size) log_info("tracing: %lld bytes of rows wait in %s from before; written when PostgreSQL answers",
	                      g->size, g->spool);
	return 0;
}

static void lost(struct pg *g, const char *why)
{
	g->dropped++;
	if (!g->episode++)
		log_error("tracing: %s; rows are dropped until it has room (%" PRIu64 " so far)", why, g->dropped);
}

static void spool_put(struct pg *g, const struct op *op)
{
	if (g->fd < 0) {
		lost(g, "PostgreSQL is away and there is no spool");
		return;
	}
	size_t n = 4 + 3;
	int32_t lens[PG_NPARAM];
	int np = stmts[op->kind].n;
	for (int k = 0; k < np; k++) {
		lens[k] = op->v[k] ? (int32_t)strlen(op->v[k]) : -1;
		n += 4 + (lens[k] > 0 ? (size_t)lens[k] : 0);
	}
	if (g->size + (long long)n > g->max) {
		char why[600];
		snprintf(why, sizeof why, "the spool %s is full (tracing.spoolMaxBytes %lld)", g->spool, g->max);
		lost(g, why);
		return;
	}
	unsigned char *b = malloc(n), *p = b;
	if (!b) {
		lost(g, "out of memory");
		return;
	}
	uint32_t len = (uint32_t)(n - 4);
	memcpy(p, &len, 4), p += 4;
	*p++ = 'E';
	*p++ = (unsigned char)op->kind;
	*p++ = (unsigned char)np;
	for (int k = 0; k < np; k++) {
		memcpy(p, &lens[k], 4), p += 4;
		if (lens[k] > 0) memcpy(p, op->v[k], (size_t)lens[k]), p += lens[k];
	}
	ssize_t w = pwrite(g->fd, b, n, (off_t)g->size);
	free(b);
	if (w != (ssize_t)n) {
		if (w >= 0) errno = ENOSPC;
		char why[700];
		snprintf(why, sizeof why, "cannot write the spool %s: %s", g->spool, strerror(errno));
		if (ftruncate(g->fd, (off_t)g->size) != 0) { /* the torn tail is cut when read */ }
		lost(g, why);
		return;
	}
	g->size += (long long)n;
	if (g->episode) {
		log_warn("tracing: the spool has room again; %" PRIu64 " row%s lost (%" PRIu64 " in all)", g->episode,
		         g->episode == 1 ? " was" : "s were", g->dropped);
		g->episode = 0;
	}
}

/* the record at head, decoded into op (its strings in *buf); 1, 0 at the end, -1 torn */
static int spool_get(struct pg *g, struct op *op, char **buf, long long *next)
{
	uint32_t len;
	if (g->head >= g->size) return 0;
	if (g->size - g->head < 4 || pread(g->fd, &len, 4, (off_t)g->head) != 4 || len < 3 ||
	    g->head + 4 + (long long)len > g->size)
		return -1;
	unsigned char *b = malloc((size_t)len + PG_NPARAM);   /* room for each string's NUL */
	if (!b || pread(g->fd, b, len, (off_t)(g->head + 4)) != (ssize_t)len) {
		free(b);
		return -1;
	}
	int kind = b[1], np = b[2];
	if (b[0] != 'E' || kind < 1 || kind >= OP__N || np != stmts[kind].n) {
		free(b);
		return -1;
	}
	/* decode in place: move each string down over its length word and end it with a NUL */
	size_t at = 3, out = 0;
	char *s = (char *)b;
	int32_t lens[PG_NPARAM];
	size_t offs[PG_NPARAM];
	for (int k = 0; k < np; k++) {
		if (at + 4 > len) goto torn;
		memcpy(&lens[k], b + at, 4);
		at += 4;
		if (lens[k] > 0 && at + (size_t)lens[k] > len) goto torn;
		offs[k] = at;
		at += lens[k] > 0 ? (size_t)lens[k] : 0;
	}
	if (at != len) goto torn;
	op->kind = kind;
	for (int k = 0; k < np; k++) {
		if (lens[k] < 0) {
			op->v[k] = NULL;
			continue;
		}
		memmove(s + out, b + offs[k], (size_t)lens[k]);
		s[out + (size_t)lens[k]] = 0;
		op->v[k] = s + out;             /* later moves only write past it */
		out += (size_t)lens[k] + 1;
	}
	*buf = s;
	*next = g->head + 4 + (long long)len;
	return 1;
torn:
	free(b);
	return -1;
}

/* ---- PostgreSQL ---------------------------------------------------------------------------- */

static void away(struct pg *g, const char *what, const char *err)
{
	/* err is often the connection's own PQerrorMessage: copied before PQfinish frees it */
	char why[512];
	snprintf(why, sizeof why, "%s", err && err[0] ? err : "no answer");
	if (g->conn) PQfinish(g->conn);
	g->conn = NULL;
	if (!g->away)
		log_warn("tracing: PostgreSQL: %s: %s; rows wait in %s until it answers", what, why,
		         g->fd >= 0 ? g->spool : "memory (no spool)");
	g->away = 1;
	g->retry_at = now_ms() + g->backoff;
	g->backoff = g->backoff * 2 > PG_RETRY_MAX_MS ? PG_RETRY_MAX_MS : g->backoff * 2;
}

/* wait for the connection's socket, at most until the deadline: 1 ready, 0 timed out, -1 error */
static int wait_sock(PGconn *c, short ev, uint64_t deadline)
{
	for (;;) {
		uint64_t now = now_ms();
		if (now >= deadline) return 0;
		struct pollfd p = { .fd = PQsocket(c), .events = ev };
		if (p.fd < 0) return -1;
		int r = poll(&p, 1, (int)(deadline - now));
		if (r < 0 && errno == EINTR) continue;
		return r < 0 ? -1 : r > 0;
	}
}

static int sql_transient(const char *state)
{
	/* connection, resources, operator (shutdown, cancel), system, rollback; a table dropped
	 * under us (42P01) is created again at the next connect */
	return !state || !strncmp(state, "08", 2) || !strncmp(state, "53", 2) || !strncmp(state, "57", 2) ||
	       !strncmp(state, "58", 2) || !strncmp(state, "40", 2) || !strcmp(state, "42P01") ||
	       !strncmp(state, "25", 2);
}

/* sql within PG_DEADLINE_MS, with n parameters v, or (n < 0) as a simple query, which may hold
 * several statements: 0 done; 1 refused for good, the first error's SQLSTATE and message in
 * state[8] and msg[512]; -1 PostgreSQL away (said, and the connection closed) */
static int exchange(struct pg *g, const char *sql, int n, const char *const *v, char *state, char *msg)
{
	PGconn *c = g->conn;
	uint64_t deadline = now_ms() + PG_DEADLINE_MS;
	if (!(n < 0 ? PQsendQuery(c, sql) : PQsendQueryParams(c, sql, n, NULL, v, NULL, NULL, 0))) {
		away(g, "cannot send", PQerrorMessage(c));
		return -1;
	}
	int f;
	while ((f = PQflush(c)) == 1) {
		if (wait_sock(c, POLLOUT | POLLIN, deadline) <= 0 || !PQconsumeInput(c)) {
			away(g, "sending a row", PQerrorMessage(c));
			return -1;
		}
	}
	if (f < 0) {
		away(g, "sending a row", PQerrorMessage(c));
		return -1;
	}
	int rc = 0;
	state[0] = msg[0] = 0;
	for (;;) {
		while (PQisBusy(c)) {
			if (wait_sock(c, POLLIN, deadline) <= 0 || !PQconsumeInput(c)) {
				away(g, "no answer within 5 s", PQerrorMessage(c));
				return -1;
			}
		}
		PGresult *r = PQgetResult(c);
		if (!r) break;
		ExecStatusType st = PQresultStatus(r);
		if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && !rc) {
			const char *s = PQresultErrorField(r, PG_DIAG_SQLSTATE);
			snprintf(state, 8, "%s", s ? s : "");
			snprintf(msg, 512, "%s", PQresultErrorMessage(r));
			rc = sql_transient(s) ? -1 : 1;
		}
		PQclear(r);
	}
	if (rc < 0 || PQstatus(c) != CONNECTION_OK) {
		away(g, "a row was not written", msg[0] ? msg : PQerrorMessage(c));
		return -1;
	}
	return rc;
}

/* one row's statement: 0 done, 1 refused for good (logged, counted), -1 PostgreSQL away */
static int run(struct pg *g, const char *sql, int n, const char *const *v)
{
	char state[8], msg[512];
	int rc = exchange(g, sql, n, v, state, msg);
	if (rc > 0) {
		g->rejected++;
		if (g->rejected <= 5 || !(g->rejected & (g->rejected - 1)))
			log_error("tracing: PostgreSQL refused a row (SQLSTATE %s, %" PRIu64 " refused so far; not retried): %s",
			          state, g->rejected, msg);
	}
	return rc;
}

/* PostgreSQL's notices ("relation ... already exists, skipping" at every connect) are not ours to
 * say: libpq's default writes them to stderr, raw, in the middle of the log */
static void no_notice(void *arg, const char *message)
{
	(void)arg, (void)message;
}

static int connect_pg(struct pg *g)
{
	if (dlib_need(&dlib_pq) < 0) {     /* loaded here, in the sink's thread, at its first connection */
		away(g, "cannot connect", dlib_error(&dlib_pq));
		return -1;
	}
	const char *keys[6], *vals[6];
	int n = 0;
	keys[n] = "dbname", vals[n++] = g->url;
	if (g->user) keys[n] = "user", vals[n++] = g->user;
	if (g->pass) keys[n] = "password", vals[n++] = g->pass;
	keys[n] = "application_name", vals[n++] = "ejob-supervisor";
	keys[n] = NULL, vals[n] = NULL;
	uint64_t deadline = now_ms() + PG_DEADLINE_MS;
	PGconn *c = PQconnectStartParams(keys, vals, 1);
	if (!c) {
		away(g, "cannot connect", "out of memory");
		return -1;
	}
	g->conn = c;
	if (PQstatus(c) == CONNECTION_BAD) {
		away(g, "cannot connect", PQerrorMessage(c));
		return -1;
	}
	for (;;) {
		PostgresPollingStatusType st = PQconnectPoll(c);
		if (st == PGRES_POLLING_OK) break;
		if (st == PGRES_POLLING_FAILED ||
		    wait_sock(c, st == PGRES_POLLING_WRITING ? POLLOUT : POLLIN, deadline) <= 0) {
			away(g, "cannot connect", PQerrorMessage(c));
			return -1;
		}
	}
	PQsetNoticeProcessor(c, no_notice, NULL);
	if (PQsetnonblocking(c, 1) != 0) {
		away(g, "cannot connect", PQerrorMessage(c));
		return -1;
	}
	/* A creator that does not take our lock (ElasticJob's own RDBJobEventStorage, an older ejob)
	 * can still race: its committed tables make ours fail with unique_violation (23505) or
	 * duplicate_table (42P07), after which IF NOT EXISTS finds them. Anything else (no rights
	 * to create them): said once here, and each row will say why it is refused. */
	for (int tries = 1;; tries++) {
		char state[8], msg[512];
		int rc = exchange(g, ddl, -1, NULL, state, msg);
		if (rc < 0) return -1;
		if (!rc) break;
		if (tries < 3 && (!strcmp(state, "23505") || !strcmp(state, "42P07"))) continue;
		log_error("tracing: cannot create ElasticJob's tables (SQLSTATE %s): %s", state, msg);
		break;
	}
	if (g->away) log_info("tracing: PostgreSQL answers again%s", g->head < g->size ? "; writing the spool" : "");
	g->away = 0;
	g->backoff = PG_RETRY_MIN_MS;
	return 0;
}

static int up(struct pg *g)
{
	if (g->conn) return 1;
	if (now_ms() < g->retry_at) return 0;
	return connect_pg(g) == 0;
}

/* the spool, in order, while PostgreSQL takes it */
static void drain(struct pg *g)
{
	while (g->fd >= 0 && g->head < g->size && up(g)) {
		struct op op;
		char *buf = NULL;
		long long next;
		int r = spool_get(g, &op, &buf, &next);
		if (r < 0) {
			log_error("tracing: the spool %s is cut or damaged at byte %lld: the rest (%lld bytes) is dropped",
			          g->spool, g->head, g->size - g->head);
			g->size = g->head;
			if (ftruncate(g->fd, (off_t)g->size) != 0) log_error("tracing: ftruncate(%s) failed: %s", g->spool, strerror(errno));
			break;
		}
		if (!r) break;
		int rc = run(g, stmts[op.kind].sql, stmts[op.kind].n, op.v);
		free(buf);
		if (rc < 0) return;     /* again at the next retry, from the same row */
		g->head = next;
		g->replayed++;
	}
	if (g->fd >= 0 && g->head && g->head >= g->size) {
		if (ftruncate(g->fd, 0) != 0) log_error("tracing: ftruncate(%s) failed: %s", g->spool, strerror(errno));
		log_info("tracing: %" PRIu64 " spooled row%s written to PostgreSQL", g->replayed, g->replayed == 1 ? "" : "s");
		g->head = g->size = 0;
		g->replayed = 0;
	}
}

/* a row: directly when nothing waits and PostgreSQL is up, else behind the others in the spool */
static void put(struct pg *g, const struct op *op)
{
	if (!(g->fd >= 0 && g->head < g->size) && up(g) && run(g, stmts[op->kind].sql, stmts[op->kind].n, op->v) >= 0)
		return;
	spool_put(g, op);
}

/* ---- events to rows ------------------------------------------------------------------------ */

static struct open_fire **find_fire(struct pg *g, const struct event *ev)
{
	for (struct open_fire **p = &g->fires; *p; p = &(*p)->next)
		if ((*p)->fire_ms == ev->fire_ms && !strcmp((*p)->task_id, ev->task_id)) return p;
	return NULL;
}

static void free_fire(struct open_fire *f)
{
	for (size_t k = 0; k < f->n; k++) free(f->fails[k].cause);
	free(f->fails);
	free(f->task_id);
	free(f);
}

static void trace(struct pg *g, const struct event *ev, const char *state, const char *msg, uint64_t at)
{
	char id[37], items[128], type[24], slave[64], when[32];
	row_id(id, state, g->instance, ev->task_id, ev->fire_ms, (uint64_t)ev->source, 0);
	task_parts(ev->task_id, items, sizeof items, type, sizeof type, slave, sizeof slave);
	ts(when, at);
	struct op op = { OP_TRACE, { id, ev->job, "", ev->task_id, slave, "LITE_EXECUTOR", type, items, state, msg, when } };
	put(g, &op);
}

static int by_item(const void *a, const void *b)
{
	const struct fail *x = a, *y = b;
	return x->item < y->item ? -1 : x->item > y->item;
}

static void record(void *arg, const struct event *ev)
{
	struct pg *g = arg;
	if (!g->started) spool_start(g);
	if (!ev->task_id || !ev->job) return;
	char id[37], item[16], start[32], end[32];
	snprintf(item, sizeof item, "%" PRIu32, ev->item);
	switch (ev->type) {
	case EVT_FIRE_STARTED: {
		char msg[300];
		snprintf(msg, sizeof msg, "Job '%s' execute begin.", ev->job);
		trace(g, ev, "TASK_STAGING", msg, ev->start_ms);
		trace(g, ev, "TASK_RUNNING", "", ev->start_ms);
		struct open_fire *f = calloc(1, sizeof *f);
		if (f && (f->task_id = strdup(ev->task_id))) {
			f->fire_ms = ev->fire_ms;
			f->next = g->fires;
			g->fires = f;
			if (++g->nfires > PG_OPEN_FIRES) {      /* a fire that never ended: the oldest goes */
				struct open_fire **p = &g->fires;
				while ((*p)->next) p = &(*p)->next;
				free_fire(*p);
				*p = NULL;
				g->nfires--;
			}
		} else {
			free(f);
		}
		break;
	}
	case EVT_ITEM_STARTED: {
		row_id(id, "exec", g->instance, ev->task_id, ev->fire_ms, (uint64_t)ev->source << 32 | ev->item, ev->attempt);
		ts(start, ev->start_ms);
		struct op op = { OP_EXEC_START, { id, ev->job, ev->task_id, g->host, g->ip, item,
		                                  event_source_name(ev->source), "false", start } };
		put(g, &op);
		break;
	}
	case EVT_ITEM_ENDED: {
		row_id(id, "exec", g->instance, ev->task_id, ev->fire_ms, (uint64_t)ev->source << 32 | ev->item, ev->attempt);
		ts(start, ev->start_ms);
		ts(end, ev->end_ms);
		int okay = ev->status == FRAME_ST_OK;
		char *cause = okay ? NULL : cause_of(ev);
		struct op op = { OP_EXEC_END, { id, ev->job, ev->task_id, g->host, g->ip, item, event_source_name(ev->source),
		                                cause, okay ? "true" : "false", start, end } };
		put(g, &op);
		struct open_fire **p = find_fire(g, ev);
		if (!okay && ev->final && cause && p) {
			struct open_fire *f = *p;
			if (f->n == f->cap) {
				size_t cap = f->cap ? f->cap * 2 : 4;
				struct fail *nf = realloc(f->fails, cap * sizeof *nf);
				if (nf) f->fails = nf, f->cap = cap;
			}
			if (f->n < f->cap) {
				f->fails[f->n].item = ev->item;
				f->fails[f->n++].cause = cause;
				cause = NULL;
			}
		}
		free(cause);
		break;
	}
	case EVT_FIRE_ENDED: {
		struct open_fire **p = find_fire(g, ev), *f = p ? *p : NULL;
		if (f) *p = f->next, g->nfires--;
		if (ev->status == FRAME_ST_OK) {
			trace(g, ev, "TASK_FINISHED", "", ev->end_ms);
		} else {
			/* ElasticJob: itemErrorMessages.toString(), a Map<Integer, String>: "{1=..., 3=...}" */
			size_t n = 3;
			if (f) {
				qsort(f->fails, f->n, sizeof *f->fails, by_item);
				for (size_t k = 0; k < f->n; k++) n += strlen(f->fails[k].cause) + 16;
			}
			char *msg = malloc(n);
			if (msg) {
				size_t o = (size_t)snprintf(msg, n, "{");
				for (size_t k = 0; f && k < f->n; k++)
					o += (size_t)snprintf(msg + o, n - o, "%s%" PRIu32 "=%s", k ? ", " : "", f->fails[k].item,
					                      f->fails[k].cause);
				snprintf(msg + o, n - o, "}");
				cut(msg);
			}
			trace(g, ev, "TASK_ERROR", msg ? msg : "{}", ev->end_ms);
			free(msg);
		}
		if (f) free_fire(f);
		break;
	}
	default:
		break;      /* ElasticJob's tables have no place for the others (and the sink does not take them) */
	}
	drain(g);
}

static void idle(void *arg)
{
	struct pg *g = arg;
	if (!g->started) spool_start(g);
	if (g->fd >= 0 && g->head < g->size) drain(g);
}

static void finish(void *arg)
{
	struct pg *g = arg;
	if (g->conn) PQfinish(g->conn);
	if (g->fd >= 0 && g->head < g->size)
		log_warn("tracing: %lld bytes of rows wait in %s; written when a supervisor using it reaches PostgreSQL",
		         g->size - g->head, g->spool);
	if (g->dropped || g->rejected)
		log_warn("tracing: %" PRIu64 " row%s lost (spool full or unusable), %" PRIu64 " refused by PostgreSQL",
		         g->dropped, g->dropped == 1 ? " was" : "s were", g->rejected);
	if (g->fd >= 0) close(g->fd);
	while (g->fires) {
		struct open_fire *f = g->fires;
		g->fires = f->next;
		free_fire(f);
	}
	free(g->url);
	free(g->user);
	free(g->pass);
	free(g->dir);
	free(g->spool);
	free(g);
}

static char *dup_or_null(const char *s, int *oom)
{
	char *d = s ? strdup(s) : NULL;
	if (s && !d) *oom = 1;
	return d;
}

event_sink_t *pg_open(events_t *e, const struct pg_params *p, unsigned queue)
{
	struct pg *g = calloc(1, sizeof *g);
	if (!g) {
		log_error("tracing: out of memory");
		return NULL;
	}
	int oom = 0;
	const char *url = strncmp(p->url, "jdbc:", 5) == 0 ? p->url + 5 : p->url;
	g->url = dup_or_null(url, &oom);
	g->user = dup_or_null(p->username, &oom);
	g->pass = dup_or_null(p->password, &oom);
	g->dir = dup_or_null(p->spool_dir, &oom);
	size_t n = strlen(p->spool_dir) + 32;
	if (!oom && (g->spool = malloc(n))) snprintf(g->spool, n, "%s/tracing.spool", p->spool_dir);
	g->fd = -1;
	g->max = p->spool_max_bytes;
	g->backoff = PG_RETRY_MIN_MS;
	g->instance = events_instance(e);
	if (gethostname(g->host, sizeof g->host) != 0) g->host[0] = 0;
	g->host[sizeof g->host - 1] = 0;
	const char *sep = strstr(g->instance, "@-@");
	snprintf(g->ip, sizeof g->ip, "%.*s", sep ? (int)(sep - g->instance) : 0, g->instance);
	if (oom || !g->spool) {
		log_error("tracing: out of memory");
		finish(g);
		return NULL;
	}
	event_sink_t *s = events_sink(e, "tracing", queue, record, finish, g);
	if (!s) {
		finish(g);
		return NULL;
	}
	events_sink_idle(s, PG_IDLE_MS, idle);
	events_sink_types(s, 1u << EVT_FIRE_STARTED | 1u << EVT_ITEM_STARTED | 1u << EVT_ITEM_ENDED | 1u << EVT_FIRE_ENDED);
	log_info("tracing: ElasticJob's JOB_EXECUTION_LOG and JOB_STATUS_TRACE_LOG go to PostgreSQL; rows wait in %s "
	         "(up to %lld bytes) while it is away", g->spool, g->max);
	return s;
}
