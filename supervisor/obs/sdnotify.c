/* supervisor/obs/sdnotify.c: READY=1, STATUS=, WATCHDOG=1, STOPPING=1 to systemd (sdnotify.h).
 *
 * libsystemd's sd_notify makes a SOCK_DGRAM|SOCK_CLOEXEC socket, sends one datagram and closes
 * it: no fd stays open, nothing waits for an answer. ($NOTIFY_SOCKET stays in the environment, so
 * workers and job scripts inherit it; NotifyAccess=main in the unit makes systemd ignore them.) */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <systemd/sd-daemon.h>

#include "ipc/wait.h"
#include "supervisor/base/log.h"
#include "supervisor/obs/sdnotify.h"

#define LOOK_S 0.25                     /* how often the state is looked at */
#define STATUS_EVERY_NS 1000000000u     /* STATUS= at most this often */

struct sdn {
	struct ev_loop *loop;
	struct sdn_hooks h;
	void *arg;
	int on;                     /* $NOTIFY_SOCKET is set */
	int ready;                  /* READY=1 sent */
	int stopping;               /* STOPPING=1 sent */
	int failed;                 /* a send failed (said once) */
	char status[128];           /* the last STATUS= sent */
	uint64_t status_ns;         /* when */
	ev_timer look_w;            /* the state, every LOOK_S */
	ev_timer dog_w;             /* WATCHDOG=1 at half the interval, if asked */
};

/* ---- pure ------------------------------------------------------------------------------------- */

int sdn_is_ready(const struct sdn_state *st)
{
	if (st->zk) return st->connected && st->registered >= st->jobs;
	return st->workers_ready >= st->workers;
}

static const char *s_(uint32_t n)
{
	return n == 1 ? "" : "s";
}

void sdn_format(const struct sdn_state *st, char *buf, size_t len)
{
	if (st->stopping) {
		uint32_t n = st->running;
		if (n) snprintf(buf, len, "stopping: waiting for %" PRIu32 " item%s", n, s_(n));
		else snprintf(buf, len, "stopping");
		return;
	}
	if (!st->zk) {
		if (st->workers_ready < st->workers)
			snprintf(buf, len, "starting workers (%" PRIu32 " of %" PRIu32 " up)", st->workers_ready, st->workers);
		else
			snprintf(buf, len, "running without ZooKeeper; %" PRIu32 " item%s running", st->running, s_(st->running));
		return;
	}
	if (!st->connected && !st->ever_connected) {
		snprintf(buf, len, "connecting to ZooKeeper");
	} else if (!st->connected) {
		if (st->lease_left_ns)
			snprintf(buf, len, "disconnected: lease %.1f s left", (double)st->lease_left_ns / 1e9);
		else
			snprintf(buf, len, "disconnected: the session may be gone");
	} else if (st->registered < st->jobs) {
		snprintf(buf, len, "registering %" PRIu32 " job%s (%" PRIu32 " done)", st->jobs, s_(st->jobs), st->registered);
	} else {
		snprintf(buf, len, "connected; %" PRIu32 " job%s, %" PRIu32 " item%s running", st->jobs, s_(st->jobs),
		         st->running, s_(st->running));
	}
}

/* ---- sending ---------------------------------------------------------------------------------- */

static void send_(sdn_t *n, const char *text)
{
	int r = sd_notify(0, text);
	if (r < 0 && !n->failed) {
		n->failed = 1;
		log_warn("sd_notify(\"%.40s\") to $NOTIFY_SOCKET failed: %s (said once)", text, strerror(-r));
	}
}

static void send_status(sdn_t *n, const char *prefix, const char *status, uint64_t now_ns)
{
	char msg[256];
	snprintf(msg, sizeof msg, "%sSTATUS=%s", prefix, status);
	send_(n, msg);
	snprintf(n->status, sizeof n->status, "%s", status);
	n->status_ns = now_ns;
}

static void look(sdn_t *n)
{
	struct sdn_state st;
	memset(&st, 0, sizeof st);
	n->h.state(n->arg, &st);
	char status[128];
	sdn_format(&st, status, sizeof status);
	uint64_t now = wait_now_ns();
	if (!n->ready && !st.stopping && sdn_is_ready(&st)) {
		n->ready = 1;
		send_status(n, "READY=1\n", status, now);
		log_debug("sd_notify: READY=1 (%s)", status);
		return;
	}
	if (strcmp(status, n->status) && now - n->status_ns >= STATUS_EVERY_NS) send_status(n, "", status, now);
}

static void look_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	look(w->data);
}

static void dog_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	send_(w->data, "WATCHDOG=1");
}

/* ---- the handle ------------------------------------------------------------------------------- */

sdn_t *sdn_new(struct ev_loop *loop, const struct sdn_hooks *h, void *arg)
{
	sdn_t *n = calloc(1, sizeof *n);
	if (!n) return NULL;
	n->loop = loop;
	n->h = *h;
	n->arg = arg;
	const char *sock = getenv("NOTIFY_SOCKET");
	n->on = sock && *sock;
	if (!n->on) return n;
	ev_timer_init(&n->look_w, look_cb, 0., LOOK_S);
	n->look_w.data = n;
	ev_timer_start(loop, &n->look_w);
	uint64_t usec = 0;
	int r = sd_watchdog_enabled(0, &usec);
	if (r < 0) log_warn("systemd watchdog: $WATCHDOG_USEC or $WATCHDOG_PID is not valid: %s; no pings", strerror(-r));
	if (r > 0 && usec) {
		ev_timer_init(&n->dog_w, dog_cb, 0., (double)usec / 2e6);
		n->dog_w.data = n;
		ev_timer_start(loop, &n->dog_w);
	}
	log_info("systemd: notifying %s%s", sock, r > 0 && usec ? "" : " (no watchdog)");
	if (r > 0 && usec) log_info("systemd watchdog: %.3f s, pinged every %.3f s", (double)usec / 1e6, (double)usec / 2e6);
	return n;
}

void sdn_stopping(sdn_t *n)
{
	if (!n || !n->on || n->stopping) return;
	n->stopping = 1;
	struct sdn_state st;
	memset(&st, 0, sizeof st);
	n->h.state(n->arg, &st);
	st.stopping = 1;
	char status[128];
	sdn_format(&st, status, sizeof status);
	send_status(n, "STOPPING=1\n", status, wait_now_ns());
}

void sdn_reloading(sdn_t *n, int done)
{
	if (!n || !n->on || !n->ready || n->stopping) return;
	if (!done) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		char msg[96];
		/* MONOTONIC_USEC: what systemd 253's Type=notify-reload checks the reload's start with */
		snprintf(msg, sizeof msg, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64,
		         (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u);
		send_(n, msg);
	} else {
		send_(n, "READY=1");
	}
}

void sdn_free(sdn_t *n)
{
	if (!n) return;
	if (n->on) {
		ev_timer_stop(n->loop, &n->look_w);
		ev_timer_stop(n->loop, &n->dog_w);
	}
	free(n);
}
