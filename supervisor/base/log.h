/* supervisor/base/log.h: the supervisor's log, on stderr, one line per write(2):
 *   2026-11-21T10:00:00.123Z ejob-supervisor[4242] INFO pool: worker 3 ready (pid 4250)
 * Workers write their own lines (tagged ejob-worker[pid]) to the same stderr. */
#ifndef EJOB_LOG_H
#define EJOB_LOG_H

#include <stdint.h>

enum log_level { LL_ERROR = 0, LL_WARN = 1, LL_INFO = 2, LL_DEBUG = 3 };

void log_init(const char *progname);          /* "ejob-supervisor" */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
int log_parse_level(const char *s, enum log_level *out);   /* "error|warn|info|debug": 0 / -1 */
const char *log_level_name(enum log_level level);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LL_ERROR, __VA_ARGS__)
#define log_warn(...)  log_msg(LL_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LL_DEBUG, __VA_ARGS__)

/* Log a condition once per change of its cause: a caller keeps a `struct log_cause` per thing
 * (a worker slot, a job); log_cause() logs and returns 1 only when `cause` differs from the
 * last one logged for it, so a crash loop is one line per cause, not one per death. */
struct log_cause {
	char last[128];
};
int log_cause(struct log_cause *c, enum log_level level, const char *cause, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void log_cause_reset(struct log_cause *c);

#endif
