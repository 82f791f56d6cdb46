/* bench/events.c: what one item's execution events cost, alone (no workers, nothing else
 * running), against the alternatives, in one run on one machine.
 *
 *   metrics tap       an item's two events (attempt started, attempt ended) through events_emit
 *                     to the metrics' tap (supervisor/obs/metrics.c), as fire.c emits them; against
 *                     bumping two plain counters: the floor for counting at all
 *   history record    an attempt's end through the history sink (supervisor/sink/events_history.c):
 *                     the copy into its queue on this thread, the JSON line on the sink's, until
 *                     the file has every record, fed in bursts of 4096 it can take (a sink that
 *                     falls behind drops: a count here); CPU of both threads per record;
 *                     against one thread that formats the same line with snprintf and write()s
 *                     it in batches of 256 KB: what a scheduler without a sink would do on its
 *                     loop (its time would be the loop's)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include "ipc/wait.h"
#include "supervisor/base/log.h"
#include "supervisor/obs/metrics.h"
#include "supervisor/run/events.h"
#include "supervisor/sink/events_history.h"

static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double wall_s(void) { return (double)wait_now_ns() / 1e9; }

static void snap(void *arg, struct metrics_snapshot *s)
{
	(void)arg;
	(void)s;
}

static volatile uint64_t counters[2];

static const struct event ended = {
	.type = EVT_ITEM_ENDED, .job = "billing", .task_id = "billing@-@0,1,2,3@-@READY@-@10.0.0.7@-@27099",
	.where = "pool#3", .error = "", .fire_ms = 1795478400000ull, .epoch = 0x2e, .start_ms = 1795478400003ull,
	.end_ms = 1795478400004ull, .duration_us = 900, .item = 2, .attempt = 1, .final = 1,
};

/* the same line, the plain way */
static size_t plain_line(char *b, size_t cap, uint64_t i)
{
	time_t t = (time_t)(ended.start_ms / 1000u);
	struct tm tm;
	char when[32];
	gmtime_r(&t, &tm);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
	int n = snprintf(b, cap,
	                 "{\"job\":\"%s\",\"item\":%" PRIu32 ",\"fireId\":%" PRIu64 ",\"taskId\":\"%s\",\"instance\":\"%s\","
	                 "\"host\":\"%s\",\"ip\":\"%s\",\"epoch\":\"0x%" PRIx64 "\",\"attempt\":%" PRIu32 ",\"final\":true,"
	                 "\"source\":\"NORMAL_TRIGGER\",\"start\":\"%s.%03uZ\",\"end\":\"%s.%03uZ\",\"durationMs\":%" PRIu64 ","
	                 "\"outcome\":\"ok\",\"exitCode\":0,\"signal\":null,\"cause\":null,\"where\":\"%s\",\"output\":null}\n",
	                 ended.job, ended.item, ended.fire_ms + i, ended.task_id, "10.0.0.7@-@27099", "vm", "10.0.0.7",
	                 ended.epoch, ended.attempt, when, (unsigned)(ended.start_ms % 1000u), when,
	                 (unsigned)(ended.end_ms % 1000u), (ended.duration_us + 500) / 1000, ended.where);
	return n > 0 ? (size_t)n : 0;
}

int main(void)
{
	log_init("bench/events");
	log_set_level(LL_WARN);
	char dir[] = "/tmp/ejob-bench-events.XXXXXX";
	if (!mkdtemp(dir)) return 1;
	char path[300];

	/* ---- the metrics tap ---- */
	static const struct metrics_hooks mh = { .snapshot = snap };
	metrics_t *m = metrics_new(&mh, NULL);
	events_t *e = events_new("10.0.0.7@-@27099");
	if (!m || !e || metrics_subscribe(m, e) < 0) return 1;
	const int N = 5000000;
	double t0 = wall_s();
	for (int i = 0; i < N; i++) {
		struct event st = { .type = EVT_ITEM_STARTED, .job = "billing", .task_id = ended.task_id, .where = "pool#3",
		                    .late = 1, .late_ms = (uint64_t)i % 7 };
		events_emit(e, &st);
		events_emit(e, &ended);
	}
	double tap_ns = (wall_s() - t0) / N * 1e9;
	t0 = wall_s();
	for (int i = 0; i < N; i++) counters[0]++, counters[1]++;
	double plain_ns = (wall_s() - t0) / N * 1e9;
	events_free(e);
	metrics_free(m);

	/* ---- the history record ---- */
	const int R = 400000;
	snprintf(path, sizeof path, "%s/history.jsonl", dir);
	e = events_new("10.0.0.7@-@27099");
	event_sink_t *s = e ? history_open(e, path, 1LL << 40, 1, 65536) : NULL;
	if (!s) return 1;
	double c0 = cpu_s(), emit_s = 0;
	t0 = wall_s();
	for (int i = 0; i < R; i++) {
		struct event ev = ended;
		ev.fire_ms += (uint64_t)i;
		events_emit(e, &ev);
		if (i % 4096 == 4095) {                 /* bursts the sink takes before the next: nothing dropped */
			emit_s += wall_s() - t0;
			usleep(5000);
			t0 = wall_s();
		}
	}
	emit_s += wall_s() - t0;
	uint64_t dropped = events_dropped(s);
	events_free(e);                             /* until the file has every record */
	double sink_cpu = cpu_s() - c0;
	unlink(path);

	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	char *buf = malloc(256 * 1024 + 4096);
	if (fd < 0 || !buf) return 1;
	size_t used = 0;
	c0 = cpu_s();
	t0 = wall_s();
	for (int i = 0; i < R; i++) {
		used += plain_line(buf + used, 4096, (uint64_t)i);
		if (used >= 256 * 1024) {
			if (write(fd, buf, used) != (ssize_t)used) return 1;
			used = 0;
		}
	}
	if (used && write(fd, buf, used) != (ssize_t)used) return 1;
	double plain_cpu = cpu_s() - c0;
	close(fd);
	unlink(path);
	free(buf);
	rmdir(dir);

	printf("| measure (alone) | ejob | alternative | ratio | target |\n|---|---|---|---|---|\n");
	printf("| an item's 2 events through the metrics tap | %.1f ns | 2 plain counters: %.1f ns | %.0fx | |\n", tap_ns,
	       plain_ns, tap_ns / (plain_ns > 0.05 ? plain_ns : 0.05));
	printf("| a history record, CPU of both threads (loop's share: %.0f ns) | %.0f ns | snprintf + batched write on one "
	       "thread: %.0f ns | %.2fx | |\n", emit_s / R * 1e9, sink_cpu / R * 1e9, plain_cpu / R * 1e9,
	       sink_cpu / plain_cpu);
	printf("| records dropped | %" PRIu64 " | | | 0 |\n", dropped);
	return dropped ? 1 : 0;
}
