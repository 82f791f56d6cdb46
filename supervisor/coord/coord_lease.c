/* supervisor/coord/coord_lease.c: the session lease as the workers see it (zkc.h: until when the
 * session surely lives), and what happens to running items when it runs out and comes back. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/coord/coord_int.h"

/* The session lease: while ZooKeeper answers, the session surely lives until `lease`; items must
 * be gone before then if it stops answering, since at expiry this instance's nodes vanish and
 * another one may take its items. B, the time they get to stop, is the kill grace plus half a
 * second, but at most half the session timeout (a healthy lease is always more than 2/3 of the
 * timeout ahead, so this never stops anything while ZooKeeper answers). SIGTERM at lease - B,
 * SIGKILL at lease - B/4. Both times go into shared memory too: workers stop their items
 * themselves, and kill what is left, even if this process is frozen. */
/* The lease as the workers must see it, written into every segment (and told to the dispatcher,
 * which takes an unasked stop after it for one made for the lease): from the tick, and at once when
 * a connection brings a fresh one, before anything is dispatched under it. */
static void publish_lease(coord_t *c, uint64_t *deadline_out, uint64_t *kill_out)
{
	uint64_t lease = zkc_lease_ns(c->z);
	uint64_t timeout = (uint64_t)zkc_timeout_ms(c->z) * 1000000u;
	uint64_t b = (uint64_t)c->kill_grace_s * 1000000000u + 500000000u;
	if (timeout && b > timeout / 2) b = timeout / 2;
	uint64_t deadline = lease > b ? lease - b : 0;
	uint64_t kill_at = deadline ? lease - b / 4 : 0;
	/* every tick, not only on change: an external worker may have attached since */
	c->h.lease(c->arg, deadline, kill_at);
	if (deadline_out) *deadline_out = deadline;
	if (kill_out) *kill_out = kill_at;
}

/* The lease is healthy again in the same session: what was stopped for it runs again. */
void cl_lease_back(coord_t *c, uint64_t now_ns)
{
	uint64_t deadline;
	publish_lease(c, &deadline, NULL);
	if (!c->lease_stopped || !deadline || now_ns >= deadline) return;
	c->lease_stopped = 0;
	uint32_t n, q;
	int held;
	c->h.counts(c->arg, &n, &q, &held);
	log_info("zookeeper: the session is safe again: %" PRIu32 " item%s stopped for the lease run again", q,
	         q == 1 ? "" : "s");
	c->h.release(c->arg);
}

/* From the tick: the lease told to the workers; past its deadline, running items stop (once). */
void cl_lease_tick(coord_t *c, uint64_t now_ns)
{
	uint64_t lease = zkc_lease_ns(c->z);
	uint64_t timeout = (uint64_t)zkc_timeout_ms(c->z) * 1000000u;
	uint64_t deadline, kill_at;
	publish_lease(c, &deadline, &kill_at);
	if (!deadline || now_ns < deadline) {
		if (c->connected && deadline) cl_lease_back(c, now_ns);
		return;
	}
	if (c->lease_stopped) return;
	c->lease_stopped = 1;
	uint32_t n, q;
	int held;
	c->h.counts(c->arg, &n, &q, &held);
	char when[64];
	if (lease > now_ns) snprintf(when, sizeof when, "may expire in %.1fs", (double)(lease - now_ns) / 1e9);
	else snprintf(when, sizeof when, "may have expired %.1fs ago", (double)(now_ns - lease) / 1e9);
	log_error("zookeeper: no answer for %.1fs; the session %s: stopping %" PRIu32 " running item%s (%" PRIu32
	          " more not started) so that no other instance runs them at the same time; they run again here if "
	          "the session comes back, else elsewhere (failover)",
	          (double)(now_ns - (lease - timeout)) / 1e9, when, n, n == 1 ? "" : "s", q);
	/* SIGTERM now, SIGKILL with a quarter of B left; they wait in the queue for the verdict */
	c->h.hold(c->arg, kill_at);
}
