/* supervisor/base/log.h: the supervisor's log, on stderr, one line per write(2):
 *   2026-11-21T10:00:00.123Z ejob-supervisor[4242] INFO pool: worker 3 ready (pid 4250)
 * or, with supervisor.logFormat json, one JSON object per line; under systemd (stderr is the
 * journal) each line starts with its syslog priority, <3> to <7>, and a text line has no time of
 * its own (ipc/logline.h says every form). Workers write their own lines (ejob-worker[pid]) to
 * the same stderr, in the same form (pool.c tells them the format). */
#ifndef EJOB_LOG_H
#define EJOB_LOG_H

#include <stdint.h>

enum log_level { LL_ERROR = 0, LL_WARN = 1, LL_INFO = 2, LL_DEBUG = 3 };

void log_init(const char *progname);          /* "ejob-supervisor" */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
int log_parse_level(const char *s, enum log_level *out);   /* "error|warn|info|debug": 0 / -1 */
const char *log_level_name(enum log_level level);
void log_set_json(int json);                  /* supervisor.logFormat: 0 text, 1 json */
int log_get_json(void);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A line for a person at a terminal (the config's errors at a start): the message alone in text
 * (after its priority under journald), a whole line in JSON. */
void log_plain(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LL_ERROR, __VA_ARGS__)
#define log_warn(...)  log_msg(LL_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LL_DEBUG, __VA_ARGS__)

/* Log a condition once per change of its cause: a caller keeps a `struct log_cause` per thing
 * (a worker slot, a job); log_cause() logs and returns 1 only when `cause` differs from the
 * last one logged for it, so a crash loop is one line per cause, not one per death. */
struct log_cause {
	uint64_t last;              /* a hash of the cause last said (0: none); 3 a job, 10,000 jobs */
};
int log_cause(struct log_cause *c, enum log_level level, const char *cause, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void log_cause_reset(struct log_cause *c);

/* An invariant that matters, checked in release builds too (redis's serverAssert, knot's and
 * bgpd's fatal checks): when it does not hold, the state is not what the code believes, and
 * going on could write the wrong ZooKeeper node or touch freed memory. It logs at ERROR where and
 * what, then aborts (a core for the post-mortem; systemd restarts the supervisor, and its
 * items are failed over as for any crash). */
#define EJOB_CHECK(cond, what) \
	do { \
		if (__builtin_expect(!(cond), 0)) log_check_failed(__FILE__, __LINE__, #cond, (what)); \
	} while (0)
void log_check_failed(const char *file, int line, const char *cond, const char *what) __attribute__((noreturn));

#endif
