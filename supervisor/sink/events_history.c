/* supervisor/sink/events_history.c: the history file (supervisor.history): every item execution (each
 * attempt's end) as one JSON line, appended on the sink's own thread, rotated by size
 * (FILE -> FILE.1 -> ... -> FILE.keep). docs/config.md has the record's fields. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conf/conf.h"
#include "ipc/frame.h"
#include "ipc/json.h"
#include "supervisor/base/log.h"
#include "supervisor/sink/events_history.h"

struct history {
	char *path;
	long long max_bytes;
	int keep;
	struct history_src src;     /* who writes, and the date of the last second */
	int fd;
	long long size;             /* of the file, written */
	json_buf_t pend;            /* whole lines not written yet (one write per batch) */
	int failing;                /* the last open or write failed (logged once per episode) */
	event_sink_t *sink;         /* told what is lost and why (the metrics and /healthz show it) */
};

void history_src_init(struct history_src *h, const char *instance)
{
	memset(h, 0, sizeof *h);
	h->instance = instance;
	h->iso_s = -1;
	json_init(&h->fixed);
	if (gethostname(h->host, sizeof h->host) != 0) h->host[0] = 0;
	h->host[sizeof h->host - 1] = 0;
	const char *sep = strstr(instance, "@-@");
	snprintf(h->ip, sizeof h->ip, "%.*s", sep ? (int)(sep - instance) : 0, instance);
}

void history_src_free(struct history_src *h)
{
	json_free(&h->fixed);
}

/* "2026-11-24T07:31:52.355Z": the date and time of a second formatted once for all its records */
static void iso_ms(struct history_src *h, json_buf_t *b, uint64_t ms)
{
	time_t t = (time_t)(ms / 1000u);
	if (t != h->iso_s) {
		struct tm tm;
		if (!gmtime_r(&t, &tm) || !strftime(h->iso, sizeof h->iso, "%Y-%m-%dT%H:%M:%S", &tm)) {
			json_u64(b, ms);
			return;
		}
		h->iso_s = t;
	}
	unsigned f = (unsigned)(ms % 1000u);
	char s[40];
	size_t n = strlen(h->iso);
	memcpy(s, h->iso, n);
	s[n] = '.', s[n + 1] = (char)('0' + f / 100), s[n + 2] = (char)('0' + f / 10 % 10), s[n + 3] = (char)('0' + f % 10);
	s[n + 4] = 'Z', s[n + 5] = 0;
	json_str(b, s, n + 5, JSON_PLAIN);
}

static void failed(struct history *h, const char *what)
{
	char why[256];
	snprintf(why, sizeof why, "cannot %s %s: %s", what, h->path, strerror(errno));
	if (!h->failing) log_error("history: %s; records are lost until it works again", why);
	h->failing = 1;
	events_sink_failing(h->sink, why);
}

/* the records in b from offset off on (whole lines, the last maybe cut) are lost */
static void lose(struct history *h, const json_buf_t *b, size_t off)
{
	uint64_t n = 0;
	for (size_t i = off; b->p && i < b->len; i++) n += b->p[i] == '\n';
	if (b->p && b->len > off && b->p[b->len - 1] != '\n') n++;
	if (n) events_sink_lost(h->sink, n);
}

static int reopen(struct history *h)
{
	if (h->fd >= 0) close(h->fd);
	h->fd = open(h->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (h->fd < 0) {
		failed(h, "open");
		return -1;
	}
	struct stat st;
	h->size = fstat(h->fd, &st) == 0 ? (long long)st.st_size : 0;
	return 0;
}

/* FILE.{keep-1} -> FILE.{keep}, ..., FILE -> FILE.1; keep 0: FILE starts again empty */
static void rotate(struct history *h)
{
	size_t n = strlen(h->path) + 16;
	char *a = malloc(n), *b = malloc(n);
	if (a && b) {
		for (int k = h->keep; k >= 1; k--) {
			snprintf(b, n, "%s.%d", h->path, k);
			if (k == 1) snprintf(a, n, "%s", h->path);
			else snprintf(a, n, "%s.%d", h->path, k - 1);
			if (rename(a, b) != 0 && errno != ENOENT) log_warn("history: cannot rename %s to %s: %s", a, b, strerror(errno));
		}
		if (!h->keep && unlink(h->path) != 0 && errno != ENOENT)
			log_warn("history: cannot remove %s: %s", h->path, strerror(errno));
	}
	free(a);
	free(b);
	reopen(h);
}

/* the pending lines, in one write: whole lines (the file gets whole lines unless the disk fills) */
static void flush(void *arg)
{
	struct history *h = arg;
	if (!h->pend.len || h->pend.oom) {
		if (h->pend.oom) {
			log_error("history: out of memory: %zu bytes of records lost", h->pend.len);
			lose(h, &h->pend, 0);
			json_free(&h->pend);
			json_init(&h->pend);
		}
		return;
	}
	if (h->fd < 0 && reopen(h) < 0) {
		lose(h, &h->pend, 0);    /* said by reopen, once per episode */
		json_free(&h->pend);
		json_init(&h->pend);
		return;
	}
	ssize_t w = write(h->fd, h->pend.p, h->pend.len);
	if (w == (ssize_t)h->pend.len) {
		h->size += w;
		if (h->failing) {
			log_info("history: writing %s again", h->path);
			events_sink_failing(h->sink, NULL);
		}
		h->failing = 0;
	} else {
		lose(h, &h->pend, w > 0 ? (size_t)w : 0);
		if (w >= 0) errno = ENOSPC;
		failed(h, "write");
		close(h->fd);
		h->fd = -1;             /* opened again for the next batch */
	}
	json_free(&h->pend);
	json_init(&h->pend);
}

void history_fields(json_buf_t *b, const struct event *ev, struct history_src *h)
{
	/* each key with its comma and colon is one literal */
	json_raw(b, "\"job\":"), json_cstr(b, ev->job, JSON_PLAIN);
	json_raw(b, ",\"item\":"), json_u64(b, ev->item);
	json_raw(b, ",\"fireId\":"), json_u64(b, ev->fire_ms);
	json_raw(b, ",\"taskId\":"), json_cstr(b, ev->task_id, JSON_PLAIN);
	if (!h->fixed.p) {              /* this instance's part of every record, escaped once */
		json_raw(&h->fixed, ",\"instance\":"), json_cstr(&h->fixed, h->instance, JSON_PLAIN);
		json_raw(&h->fixed, ",\"host\":"), json_cstr(&h->fixed, h->host, JSON_PLAIN);
		json_raw(&h->fixed, ",\"ip\":"), json_cstr(&h->fixed, h->ip, JSON_PLAIN);
	}
	json_raw(b, h->fixed.p ? h->fixed.p : "");
	char ep[24];
	size_t k = sizeof ep;
	ep[--k] = 0;
	for (uint64_t v = ev->epoch; v || k == sizeof ep - 1; v >>= 4) ep[--k] = "0123456789abcdef"[v & 15];
	ep[--k] = 'x', ep[--k] = '0';
	json_raw(b, ",\"epoch\":"), json_cstr(b, ev->epoch ? ep + k : NULL, JSON_PLAIN);
	json_raw(b, ",\"attempt\":"), json_u64(b, ev->attempt);
	json_raw(b, ",\"final\":"), json_raw(b, ev->final ? "true" : "false");
	json_raw(b, ",\"source\":"), json_cstr(b, event_source_name(ev->source), JSON_PLAIN);
	/* the fires this run stands for: a catch-up names every missed fire it runs for */
	json_raw(b, ",\"fires\":");
	if (!ev->fires) {
		json_raw(b, "null");
	} else {
		json_raw(b, "[");
		for (uint32_t i = 0; i < ev->nfires; i++) {
			if (i) json_raw(b, ",");
			json_u64(b, ev->fires[i]);
		}
		json_raw(b, "]");
	}
	if (ev->fires_omitted) json_raw(b, ",\"firesOmitted\":"), json_u64(b, ev->fires_omitted);
	if (ev->run) json_raw(b, ",\"workflowRun\":"), json_u64(b, ev->run);   /* a workflow's fire */
	json_raw(b, ",\"start\":"), iso_ms(h, b, ev->start_ms);
	json_raw(b, ",\"end\":"), iso_ms(h, b, ev->end_ms);
	json_raw(b, ",\"durationMs\":"), json_u64(b, (ev->duration_us + 500) / 1000);
	json_raw(b, ",\"outcome\":"), json_cstr(b, frame_status_name(ev->status), JSON_PLAIN);
	json_raw(b, ",\"exitCode\":");       /* null when a signal ended it */
	if (ev->signal) json_raw(b, "null");
	else json_i64(b, ev->exit_code);
	json_raw(b, ",\"signal\":");
	if (ev->signal) json_i64(b, ev->signal);
	else json_raw(b, "null");
	json_raw(b, ",\"cause\":"), json_cstr(b, ev->error && ev->error[0] ? ev->error : NULL, JSON_PLAIN);
	json_raw(b, ",\"where\":"), json_cstr(b, ev->where, JSON_PLAIN);
	json_raw(b, ",\"output\":"), json_cstr(b, ev->output && ev->output[0] ? ev->output : NULL, JSON_PLAIN);
}

static void record(void *arg, const struct event *ev)
{
	struct history *h = arg;
	if (ev->type != EVT_ITEM_ENDED) return;
	/* the line goes straight after the pending ones (no buffer of its own to copy from) */
	json_buf_t *b = &h->pend;
	size_t start = b->len;
	json_raw(b, "{");
	history_fields(b, ev, &h->src);
	json_raw(b, "}\n");
	if (b->oom) return;          /* flush says how much was lost */
	/* the file would grow past maxBytes: what was pending goes first, then the file turns, and
	 * this line starts the new one */
	if (h->size + (long long)start > 0 && h->size + (long long)b->len > h->max_bytes) {
		char *line = strdup(b->p + start);
		b->len = start;
		b->p[start] = '\0';
		flush(h);
		if (h->size > 0) rotate(h);
		if (line) json_raw(&h->pend, line);
		else {
			log_error("history: out of memory: a record is lost");
			events_sink_lost(h->sink, 1);
		}
		free(line);
	}
	if (h->pend.len >= 256 * 1024) flush(h);
}

static void finish(void *arg)
{
	struct history *h = arg;
	json_free(&h->pend);
	history_src_free(&h->src);
	if (h->fd >= 0) close(h->fd);
	free(h->path);
	free(h);
}

event_sink_t *history_open(events_t *e, const char *path, long long max_bytes, int keep, unsigned queue)
{
	struct history *h = calloc(1, sizeof *h);
	if (!h || !(h->path = strdup(path))) {
		free(h);
		log_error("history: out of memory");
		return NULL;
	}
	h->max_bytes = max_bytes;
	h->keep = keep;
	h->fd = -1;
	json_init(&h->pend);
	history_src_init(&h->src, events_instance(e));
	/* opened on the sink's thread at the first record (a FIFO or a hung mount would block the
	 * loop here); what can be told without opening is told now */
	struct stat st;
	char why[PATH_MAX + 256];
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		log_warn("history: %s is not a regular file; records may not be kept (or block the history)", path);
	else if (conf_history_problem(path, why, sizeof why) < 0)
		log_error("history: %s; records are lost until it can be written", why);
	event_sink_t *s = events_sink(e, "history", queue, record, finish, h);
	if (!s) {
		finish(h);
		return NULL;
	}
	/* before any event can reach the sink's thread (events_emit takes the lock it reads them under) */
	h->sink = s;
	events_sink_types(s, 1u << EVT_ITEM_ENDED);
	events_sink_flush(s, flush);
	log_info("history: every item execution goes to %s (rotated past %lld bytes, %d kept)", path, max_bytes, keep);
	return s;
}
