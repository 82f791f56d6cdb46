/* examples/external-worker.c: an external worker, a program of your own that runs the items of
 * jobs of type `external` (built as build/examples/external-worker, linked with libejob.a).
 *
 *   jobs:
 *     resize:
 *       type: external
 *       cron: "0 0/10 * * * ?"
 *       shardingTotalCount: 16
 *       jobParameter: "ms=200"      # this example's own convention: how long an item takes
 *
 *   $ build/examples/external-worker --namespace ejob-demo --slots 4 resize
 *
 * It attaches to the supervisor of that namespace over its unix socket (or --socket PATH),
 * naming the jobs it serves; the supervisor then publishes those jobs' items into a shared-
 * memory segment of this attachment alone. Each of --slots threads binds one slot and runs one
 * item at a time: it prints the item, "works" for the job parameter's ms=N milliseconds while
 * heartbeating and watching for a cancel, and reports ok (or failed, exit code 1, for an item
 * whose parameter is "fail"; cancelled or timeout when the supervisor stopped it).
 *
 * SIGINT or SIGTERM: stop taking items, finish the running ones, detach, exit 0. The supervisor
 * shutting down (it sets the segment's shutdown flag and waits for our running items): the same.
 * The supervisor going away without that (killed, or it cut this attachment off): exit 1. Refused at attach (job not
 * external, uid not allowed): exit 2, with the supervisor's reason.
 *
 * Signals are blocked in every thread and read from a signalfd by the main thread: nothing
 * runs in a signal handler. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "worker/ejob.h"

struct runner {
	ejob_worker *w;
	unsigned index;
	int ended_fd;          /* eventfd: tell the main thread this thread is done */
	int why;               /* errno that ended it: ECANCELED, ESHUTDOWN, ENOTCONN, ... */
	pthread_t tid;
};

static void usage(void)
{
	fprintf(stderr, "usage: external-worker [--socket PATH | --namespace NS] [--slots N] [--name NAME] JOB...\n");
	exit(2);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The "work": wait ms milliseconds in 10 ms steps, heartbeating, until done or cancelled. */
static int work(ejob_slot *s, const ejob_context *ctx, unsigned ms)
{
	uint64_t end = mono_ms() + ms;
	while (mono_ms() < end) {
		int why = ejob_cancelled(ctx);
		if (why) return why;
		ejob_heartbeat(s);
		struct timespec ts = { 0, 10 * 1000000 };
		nanosleep(&ts, NULL);
	}
	return 0;
}

static void *run(void *arg)
{
	struct runner *r = arg;
	ejob_slot *s;
	r->why = 0;
	if (ejob_bind(r->w, r->index, &s) < 0) {
		r->why = errno;
		fprintf(stderr, "external-worker: binding slot %u failed: %s\n", r->index, strerror(errno));
	}
	while (!r->why) {
		const ejob_context *c;
		int n = ejob_next(s, -1, &c);
		if (n < 0 && errno == EINTR) continue;
		if (n < 0) {
			r->why = errno;
			break;
		}
		if (n == 0) continue;
		printf("external-worker[%u]: job=%s item=%" PRIu32 "/%" PRIu32 " param=%s epoch=%" PRIu64
		       " attempt=%" PRIu32 " task=%s\n", r->index, c->job, c->item, c->total, c->item_param,
		       c->epoch, c->attempt, c->task_id);
		fflush(stdout);
		unsigned ms = 0;
		if (!strncmp(c->job_param, "ms=", 3)) ms = (unsigned)strtoul(c->job_param + 3, NULL, 10);
		int cancel = work(s, c, ms);
		int st = EJOB_OK, code = 0;
		const char *err = NULL;
		if (cancel) {
			st = cancel == EJOB_CANCEL_TIMEOUT ? EJOB_TIMEOUT : EJOB_CANCELLED;
			err = "stopped on the supervisor's request";
		} else if (!strcmp(c->item_param, "fail")) {
			st = EJOB_FAILED;
			code = 1;
			err = "the item parameter says fail";
		}
		if (ejob_done(s, st, code, 0, err) < 0) {
			r->why = errno;
			fprintf(stderr, "external-worker: %s\n", ejob_slot_error(s));
		}
	}
	uint64_t one = 1;
	if (write(r->ended_fd, &one, sizeof one) < 0) { /* cannot fail: an eventfd below its limit */ }
	return NULL;
}

int main(int argc, char **argv)
{
	struct ejob_attach_opts o = { .slots = 1 };
	const char *jobs[65];
	int njobs = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--socket") && i + 1 < argc) o.socket_path = argv[++i];
		else if (!strcmp(argv[i], "--namespace") && i + 1 < argc) o.ns = argv[++i];
		else if (!strcmp(argv[i], "--slots") && i + 1 < argc) o.slots = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--name") && i + 1 < argc) o.name = argv[++i];
		else if (argv[i][0] == '-' || njobs == 64) usage();
		else jobs[njobs++] = argv[i];
	}
	jobs[njobs] = NULL;
	if (!njobs || (!o.socket_path && !o.ns) || o.slots < 1 || o.slots > 64) usage();
	o.jobs = jobs;

	/* before any thread exists, so that every thread inherits the mask */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGPIPE);   /* a closed stdout gives EPIPE, not death */
	sigaddset(&set, SIGUSR1);   /* pool workers' cancel hint; never needed here, never fatal */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	sigdelset(&set, SIGPIPE);
	sigdelset(&set, SIGUSR1);
	int sfd = signalfd(-1, &set, SFD_CLOEXEC);
	int efd = eventfd(0, EFD_CLOEXEC);
	if (sfd < 0 || efd < 0) {
		fprintf(stderr, "external-worker: signalfd/eventfd failed: %s\n", strerror(errno));
		return 1;
	}

	char err[600];
	ejob_worker *w;
	if (ejob_attach(&o, &w, err, sizeof err) < 0) {
		fprintf(stderr, "external-worker: %s\n", err);
		return errno == ECONNREFUSED ? 2 : 1;
	}
	unsigned n = ejob_slots(w);
	fprintf(stderr, "external-worker: attached with %u slot%s for %d job%s\n", n, n == 1 ? "" : "s",
	        njobs, njobs == 1 ? "" : "s");
	struct runner *r = calloc(n, sizeof *r);
	if (!r) {
		fprintf(stderr, "external-worker: out of memory\n");
		return 1;
	}
	unsigned started = 0;
	for (unsigned i = 0; i < n; i++) {
		r[i] = (struct runner){ .w = w, .index = i, .ended_fd = efd };
		int e = pthread_create(&r[i].tid, NULL, run, &r[i]);
		if (e) {
			fprintf(stderr, "external-worker: pthread_create failed: %s\n", strerror(e));
			ejob_stop(w);
			break;
		}
		started++;
	}

	/* wait for a signal, or for a thread to end on its own (shutdown, supervisor gone) */
	int rc = 0;
	struct pollfd pf[2] = { { sfd, POLLIN, 0 }, { efd, POLLIN, 0 } };
	while (poll(pf, 2, -1) < 0 && errno == EINTR) {}
	if (pf[0].revents & POLLIN) {
		struct signalfd_siginfo si;
		if (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
			fprintf(stderr, "external-worker: %s: finishing running items\n", strsignal((int)si.ssi_signo));
	}
	ejob_stop(w);
	int said_stop = 0;
	for (unsigned i = 0; i < started; i++) {
		pthread_join(r[i].tid, NULL);
		if (r[i].why == ESHUTDOWN && !said_stop++) {
			fprintf(stderr, "external-worker: the supervisor is stopping: detaching\n");
		} else if (r[i].why == ENOTCONN) {
			if (!rc) fprintf(stderr, "external-worker: the supervisor went away\n");
			rc = 1;
		} else if (r[i].why != ECANCELED && r[i].why != ESHUTDOWN) {
			rc = 1;
		}
	}
	if (started < n) rc = 1;
	ejob_detach(w);
	free(r);
	close(sfd);
	close(efd);
	return rc;
}
