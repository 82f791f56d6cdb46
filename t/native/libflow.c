/* t/native/libflow.c: a native dataflow job for t/80 (props native.fetch: flow_fetch,
 * native.process: flow_process).
 *
 * The job parameter says what to do: "FILE N SLEEP_MS FETCH_FAIL PROC_FAIL": hand out N batches
 * (batch r, counted from 1, is 100 + r bytes of the letter 'a' + r % 26), then nothing; sleep
 * SLEEP_MS in each process; fetch number FETCH_FAIL returns -7 and batch PROC_FAIL's process
 * returns 5 (0: never). Every call appends a line to FILE: "fetch XID CAP" and
 * "process XID LEN OK|BAD" (BAD: the bytes are not the batch fetch made). The count restarts with
 * each item (a new xid), so a worker process can run many. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "worker/ejob.h"

long flow_fetch(const ejob_context *ctx, void *buf, size_t cap, void *arg);
int flow_process(const ejob_context *ctx, const void *batch, size_t len, void *arg);

struct spec {
	char file[512];
	unsigned n, sleep_ms, fetch_fail, proc_fail;
};

static uint64_t cur_xid;
static unsigned fetches, processed;

static int parse(const ejob_context *ctx, struct spec *s)
{
	memset(s, 0, sizeof *s);
	if (sscanf(ctx->job_param, "%511s %u %u %u %u", s->file, &s->n, &s->sleep_ms, &s->fetch_fail, &s->proc_fail) != 5)
		return -1;
	if (ctx->xid != cur_xid) {
		cur_xid = ctx->xid;
		fetches = processed = 0;
	}
	return 0;
}

static void note(const struct spec *s, const char *what, const ejob_context *ctx, size_t n, const char *tail)
{
	int fd = open(s->file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) return;
	dprintf(fd, "%s %llu %zu%s\n", what, (unsigned long long)ctx->xid, n, tail);
	close(fd);
}

long flow_fetch(const ejob_context *ctx, void *buf, size_t cap, void *arg)
{
	(void)arg;
	struct spec s;
	if (parse(ctx, &s) < 0) return -2;
	unsigned r = ++fetches;
	note(&s, "fetch", ctx, cap, "");
	if (r == s.fetch_fail) return -7;
	if (r > s.n) return 0;
	size_t len = 100 + r;
	memset(buf, 'a' + (int)(r % 26), len < cap ? len : cap);
	return (long)len;   /* more than cap when cap is that small: ejob_dataflow must refuse it */
}

int flow_process(const ejob_context *ctx, const void *batch, size_t len, void *arg)
{
	(void)arg;
	struct spec s;
	if (parse(ctx, &s) < 0) return 2;
	unsigned b = ++processed;
	const unsigned char *p = batch;
	int good = len == 100 + (size_t)fetches;
	for (size_t i = 0; good && i < len; i++) good = p[i] == 'a' + fetches % 26;
	note(&s, "process", ctx, len, good ? " OK" : " BAD");
	if (s.sleep_ms) {
		struct timespec ts = { (time_t)(s.sleep_ms / 1000), (long)(s.sleep_ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	return b == s.proc_fail ? 5 : 0;
}
