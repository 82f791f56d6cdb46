/* supervisor/obs/sdnotify.h: the supervisor as a systemd service of Type=notify (sd_notify(3), with
 * libsystemd's sd_notify: one datagram to $NOTIFY_SOCKET, never waited for an answer):
 *
 *   READY=1      once, when the supervisor is registered: in ZooKeeper mode every job of the
 *                config registered in the first session (0 jobs: connected); without ZooKeeper
 *                (--standalone, --run) every pool worker up. Never again after a reconnect
 *                (STATUS= says it), only after a reload (RELOADING=1 ... READY=1).
 *   STATUS=      a short state ("registering 10000 jobs (4200 done)", "connected; 12 jobs, 3 items
 *                running", "disconnected: lease 3.2 s left", "stopping: waiting for 2 items"),
 *                sent when it changes, at most once a second.
 *   WATCHDOG=1   when $WATCHDOG_USEC asks for it (sd_watchdog_enabled: $WATCHDOG_PID unset or
 *                ours), from a timer of the loop at half the interval: a ping proves that the loop
 *                turns (nothing blocks it, no callback spins), which is what every deadline of the
 *                supervisor (leases, heartbeats, kills) rests on. It does not say that ZooKeeper
 *                answers: an outage is the lease's business (coord_lease.c), and a restart would
 *                only end the items that may still finish.
 *   STOPPING=1   at SIGTERM/SIGINT (or the end of a --run), before the graceful stop.
 *
 * Without $NOTIFY_SOCKET all of it is a no-op (no timer even runs). */
#ifndef EJOB_SDNOTIFY_H
#define EJOB_SDNOTIFY_H

#include <ev.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sdn sdn_t;

/* What the supervisor is doing, as the hook fills it in. */
struct sdn_state {
	int zk;                     /* ZooKeeper mode (0: --standalone or --run) */
	int connected;              /* zk: the session is connected */
	int ever_connected;         /* zk: connected at least once */
	uint32_t jobs;              /* zk: jobs of the config that register here */
	uint32_t registered;        /* zk: of them, registered in the current session */
	uint64_t lease_left_ns;     /* zk, not connected: how long the session surely lives (0: maybe gone) */
	uint32_t workers;           /* the pool's size */
	uint32_t workers_ready;     /* pool workers up (said ready) */
	uint32_t running;           /* items running (pool and external workers) */
	uint32_t queued;            /* items waiting for a worker */
	int stopping;               /* SIGTERM/SIGINT seen */
};

/* Pure: whether st counts as registered (READY=1), and its STATUS= text. */
int sdn_is_ready(const struct sdn_state *st);
void sdn_format(const struct sdn_state *st, char *buf, size_t len);

struct sdn_hooks {
	void (*state)(void *arg, struct sdn_state *st);
};

/* NULL only when out of memory. Reads $NOTIFY_SOCKET and the watchdog's variables now. */
sdn_t *sdn_new(struct ev_loop *loop, const struct sdn_hooks *h, void *arg);
void sdn_stopping(sdn_t *n);                    /* STOPPING=1 with the status, at once */
void sdn_reloading(sdn_t *n, int done);         /* RELOADING=1 (0), then READY=1 (1): only once ready */
void sdn_free(sdn_t *n);

#endif
