/* supervisor/base/log.c: stderr log lines, written whole with one write(2), in the form
 * ipc/logline.h makes (text or JSON; with journald's priority when stderr is the journal). */
#include "supervisor/base/log.h"

#include "ipc/logline.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The one piece of process-wide state: the log's settings (set in main, read everywhere). */
static struct {
	const char *prog;
	enum log_level level;
	unsigned mode;      /* LOGLINE_JSON (supervisor.logFormat), LOGLINE_JOURNAL (stderr is the journal) */
	pid_t pid;
} lg = { "ejob-supervisor", LL_INFO, 0, 0 };

static const char *const names[] = { "ERROR", "WARN", "INFO", "DEBUG" };

void log_init(const char *progname)
{
	lg.prog = progname;
	lg.pid = getpid();
	if (logline_journal(2)) lg.mode |= LOGLINE_JOURNAL;
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

void log_set_json(int json) { lg.mode = (lg.mode & ~LOGLINE_JSON) | (json ? LOGLINE_JSON : 0); }
int log_get_json(void) { return !!(lg.mode & LOGLINE_JSON); }

#define MSG_MAX 2048   /* bytes of a message; a longer one is cut and ends in "..." */

static void vlog(enum log_level level, int plain, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
static void vlog(enum log_level level, int plain, const char *fmt, va_list ap)
{
	int e = errno;
	char msg[MSG_MAX];
	char line[6 * MSG_MAX + 512];   /* logline_size() of a short prog: a JSON line escapes to 6x */
	if (!lg.pid) lg.pid = getpid();
	int m = vsnprintf(msg, sizeof msg, fmt, ap);
	size_t n = m < 0 ? 0 : (size_t)m;
	if (n >= sizeof msg) {   /* truncated: say so */
		n = sizeof msg - 1;
		memcpy(msg + n - 3, "...", 3);
	}
	struct logline l = { .level = (int)level, .prog = lg.prog, .pid = (int)lg.pid, .msg = msg, .len = n };
	size_t len;
	if (plain && !(lg.mode & LOGLINE_JSON)) {   /* the message alone, after the priority */
		len = 0;
		if (lg.mode & LOGLINE_JOURNAL) {
			static const char prio[] = { '3', '4', '6', '7' };
			line[len++] = '<', line[len++] = prio[level <= LL_DEBUG ? level : 0], line[len++] = '>';
		}
		memcpy(line + len, msg, n);
		len += n;
		line[len++] = '\n';
	} else {
		len = logline_format(line, sizeof line, lg.mode, &l);
	}
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
	vlog(level, 0, fmt, ap);
	va_end(ap);
}

void log_plain(enum log_level level, const char *fmt, ...)
{
	if (level > lg.level) return;
	va_list ap;
	va_start(ap, fmt);
	vlog(level, 1, fmt, ap);
	va_end(ap);
}

int log_cause(struct log_cause *c, enum log_level level, const char *cause, const char *fmt, ...)
{
	uint64_t h = 1469598103934665603ull;        /* FNV-1a; never 0 (none) */
	for (const char *p = cause; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
	h |= 1;
	if (c->last == h) return 0;
	c->last = h;
	if (level > lg.level) return 1;
	va_list ap;
	va_start(ap, fmt);
	vlog(level, 0, fmt, ap);
	va_end(ap);
	return 1;
}

void log_cause_reset(struct log_cause *c) { c->last = 0; }

void log_check_failed(const char *file, int line, const char *cond, const char *what)
{
	log_msg(LL_ERROR, "internal check failed at %s:%d: %s (%s); aborting", file, line, what, cond);
	abort();
}
