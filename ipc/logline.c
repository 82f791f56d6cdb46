/* ipc/logline.c: one line of ejob's log, in text or JSON, with journald's priority (logline.h). */
#include "ipc/logline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ipc/json.h"

static const char *const upper[] = { "ERROR", "WARN", "INFO", "DEBUG" };
static const char *const lower[] = { "error", "warn", "info", "debug" };
static const char prio[] = { '3', '4', '6', '7' };   /* LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG */

const char *logline_level_name(int level) { return level >= 0 && level <= LOGLINE_DEBUG ? upper[level] : "?"; }
const char *logline_format_name(unsigned mode) { return mode & LOGLINE_JSON ? "json" : "text"; }

int logline_parse_format(const char *s)
{
	if (!strcmp(s, "text")) return 0;
	if (!strcmp(s, "json")) return (int)LOGLINE_JSON;
	return -1;
}

int logline_journal(int fd)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	char tail;
	struct stat st;
	if (!e || sscanf(e, "%llu:%llu%c", &dev, &ino, &tail) != 2 || fstat(fd, &st) < 0) return 0;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/* a line being written: o bytes of cap; bad once something did not fit */
struct w {
	char *p;
	size_t cap, o;
	int bad;
};

static void put(struct w *w, const char *s, size_t n)
{
	if (w->bad || w->cap - w->o < n) {
		w->bad = 1;
		return;
	}
	memcpy(w->p + w->o, s, n);
	w->o += n;
}

static void puts_(struct w *w, const char *s) { put(w, s, strlen(s)); }

static void put_u(struct w *w, unsigned long long v)
{
	char t[24];
	size_t i = sizeof t;
	do t[--i] = (char)('0' + v % 10); while (v /= 10);
	put(w, t + i, sizeof t - i);
}

/* a short string (a name) as a JSON string: whole, or the line is bad */
static void put_str(struct w *w, const char *s)
{
	size_t n = strlen(s), used;
	put(w, "\"", 1);
	if (w->bad) return;
	w->o += json_escape(w->p + w->o, w->cap - w->o, s, n, &used);
	if (used < n) w->bad = 1;
	put(w, "\"", 1);
}

/* "2026-11-21T10:00:00.123Z": RFC 3339, UTC, milliseconds */
static void put_time(struct w *w, const struct timespec *ts)
{
	struct timespec now;
	struct tm tm;
	if (!ts) {
		clock_gettime(CLOCK_REALTIME, &now);
		ts = &now;
	}
	gmtime_r(&ts->tv_sec, &tm);
	char t[40];
	int n = snprintf(t, sizeof t, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
	                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts->tv_nsec / 1000000);
	if (n < 0 || (size_t)n >= sizeof t) w->bad = 1;
	else put(w, t, (size_t)n);
}

size_t logline_format(char *out, size_t cap, unsigned mode, const struct logline *l)
{
	struct w w = { out, cap, 0, 0 };
	int lv = l->level >= 0 && l->level <= LOGLINE_DEBUG ? l->level : LOGLINE_ERROR;
	if (mode & LOGLINE_JOURNAL) {
		char p[3] = { '<', prio[lv], '>' };
		put(&w, p, 3);
	}
	if (mode & LOGLINE_JSON) {
		puts_(&w, "{\"ts\":\"");
		put_time(&w, l->ts);
		puts_(&w, "\",\"level\":\"");
		puts_(&w, lower[lv]);
		puts_(&w, "\",\"prog\":");
		put_str(&w, l->prog);
		puts_(&w, ",\"pid\":");
		put_u(&w, (unsigned long long)(l->pid < 0 ? 0 : l->pid));
		if (l->job) {
			puts_(&w, ",\"job\":");
			put_str(&w, l->job->job ? l->job->job : "");
			puts_(&w, ",\"item\":");
			put_u(&w, l->job->item);
			puts_(&w, ",\"attempt\":");
			put_u(&w, l->job->attempt);
		}
		if (l->stream) {
			puts_(&w, ",\"stream\":");
			put_str(&w, l->stream);
		}
		puts_(&w, ",\"msg\":\"");
		if (w.bad || w.cap - w.o < 6) return 0;   /* room for ..."}\n at least */
		size_t used, o = w.o;
		size_t n = json_escape(out + o, cap - o - 3, l->msg, l->len, &used);
		if (used < l->len) n = json_escape(out + o, cap - o - 6, l->msg, l->len, &used);
		w.o += n;
		if (used < l->len) put(&w, "...", 3);
		put(&w, "\"}\n", 3);
		return w.bad ? 0 : w.o;
	}
	if (!(mode & LOGLINE_JOURNAL)) {   /* journald stamps its entries */
		put_time(&w, l->ts);
		put(&w, " ", 1);
	}
	puts_(&w, l->prog);
	put(&w, "[", 1);
	put_u(&w, (unsigned long long)(l->pid < 0 ? 0 : l->pid));
	put(&w, "] ", 2);
	puts_(&w, upper[lv]);
	put(&w, " ", 1);
	if (l->job && l->job->tag) {
		puts_(&w, l->job->tag);
		put(&w, " ", 1);
	}
	if (l->stream) {
		puts_(&w, l->stream);
		put(&w, ": ", 2);
	}
	if (w.bad || w.cap - w.o < 4) return 0;   /* room for ...\n at least */
	/* journald ends an entry at a newline: one inside the message is written \n, so that the
	 * whole message is one entry with its priority */
	int esc = !!(mode & LOGLINE_JOURNAL);
	size_t need = l->len;
	if (esc)
		for (size_t i = 0; i < l->len; i++) need += l->msg[i] == '\n';
	int cut = need > w.cap - w.o - 1;
	size_t end = cut ? w.cap - 4 : w.cap - 1;
	for (size_t i = 0; i < l->len; i++) {
		char c = l->msg[i];
		if (esc && c == '\n') {
			if (end - w.o < 2) break;
			out[w.o++] = '\\';
			out[w.o++] = 'n';
		} else {
			if (end - w.o < 1) break;
			out[w.o++] = c;
		}
	}
	if (cut) {
		memcpy(out + w.o, "...", 3);
		w.o += 3;
	}
	out[w.o++] = '\n';
	return w.o;
}

size_t logline_size(const char *prog, const struct logline_job *job, size_t msg_max)
{
	/* the fixed keys, time, pid, numbers and marks fit in 160; names and message escape to 6x */
	size_t n = 160 + 6 * strlen(prog) + 6 * msg_max;
	if (job) n += 6 * (job->job ? strlen(job->job) : 0) + (job->tag ? strlen(job->tag) : 0) + 60;
	return n;
}
