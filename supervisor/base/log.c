/* supervisor/base/log.c: stderr log lines, written whole with one write(2). */
#include "supervisor/base/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The one piece of process-wide state: the log's settings (set in main, read everywhere). */
static struct {
	const char *prog;
	enum log_level level;
	pid_t pid;
} lg = { "ejob-supervisor", LL_INFO, 0 };

static const char *const names[] = { "ERROR", "WARN", "INFO", "DEBUG" };

void log_init(const char *progname)
{
	lg.prog = progname;
	lg.pid = getpid();
}

void log_set_level(enum log_level level) { lg.level = level; }
enum log_level log_get_level(void) { return lg.level; }
const char *log_level_name(enum log_level level) { return level <= LL_DEBUG ? names[level] : "?"; }

int log_parse_level(const char *s, enum log_level *out)
{
	static const char *const lower[] = { "error", "warn", "info", "debug" };
	for (int i = 0; i <= LL_DEBUG; i++)
		if (!strcmp(s, lower[i])) {
			*out = (enum log_level)i;
			return 0;
		}
	return -1;
}

static void vlog(enum log_level level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void vlog(enum log_level level, const char *fmt, va_list ap)
{
	int e = errno;
	char line[2048];
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	if (!lg.pid) lg.pid = getpid();
	int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s[%d] %s ", tm.tm_year + 1900,
	                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, lg.prog,
	                 (int)lg.pid, names[level]);
	if (n < 0 || (size_t)n >= sizeof line) n = 0;
	int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	size_t len;
	if (m < 0) len = (size_t)n;
	else if ((size_t)m >= sizeof line - (size_t)n - 1) {   /* truncated: say so */
		len = sizeof line - 1;
		memcpy(line + len - 4, "...", 3);
		len--;
	} else len = (size_t)n + (size_t)m;
	line[len++] = '\n';
	for (size_t off = 0; off < len;) {
		ssize_t w = write(2, line + off, len - off);
		if (w < 0 && errno == EINTR) continue;
		if (w <= 0) break;
		off += (size_t)w;
	}
	errno = e;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	if (level > lg.level) return;
	va_list ap;
	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

int log_cause(struct log_cause *c, enum log_level level, const char *cause, const char *fmt, ...)
{
	if (!strncmp(c->last, cause, sizeof c->last - 1) && c->last[0]) return 0;
	snprintf(c->last, sizeof c->last, "%s", cause);
	if (level > lg.level) return 1;
	va_list ap;
	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
	return 1;
}

void log_cause_reset(struct log_cause *c) { c->last[0] = '\0'; }

void log_check_failed(const char *file, int line, const char *cond, const char *what)
{
	log_msg(LL_ERROR, "internal check failed at %s:%d: %s (%s); aborting", file, line, what, cond);
	abort();
}
