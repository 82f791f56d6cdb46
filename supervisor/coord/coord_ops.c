/* supervisor/coord/coord_ops.c: the nodes an operator writes to steer one instance (see coord.h):
 * trigger/{instanceId} (a fire now), servers/{ip} (ENABLED, DISABLED, or ejob's DRAINING) and the
 * instance's own instances/{id} (deleted: the job shuts down here), each watched from
 * registration on; and the job leaving this instance (a stop, a drain). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/trigdata.h"
#include "supervisor/coord/coord_int.h"

/* ---- manual trigger: trigger/{instanceId} -------------------------------------------------------- */

/* A trigger with a parameter (ipc/trigdata.h): the node read, then deleted at the version read,
 * and the fire made only when that delete succeeds, so that one node is one fire with the
 * parameter it held (a node rewritten meanwhile is read again). */
struct trig {
	struct cjob *j;
	struct trigdata d;
	int64_t at_ms;              /* the node's ctime: the fire's id */
};

static void trigger_deleted(void *arg, const struct zkc_res *r)
{
	struct trig *t = arg;
	struct cjob *j = t->j;
	if (cj_live(j, r->session)) {
		if (r->rc == ZOK) j->c->h.trigger(j->c->arg, j->name, t->d.param, t->d.run, t->d.root, t->at_ms);
		else if (r->rc != ZNONODE) zkc_keep_read(j->ops.w_trigger);   /* rewritten meanwhile, or lost: read again */
	}
	trigdata_free(&t->d);
	free(t);
}

static void trigger_read(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session) || r->rc == ZNONODE) return;
	if (r->rc != ZOK) {
		log_warn("job %s: cannot read its trigger node /%s%s: %s; reading it again", j->name, j->c->ns, r->path,
		         zerror(r->rc));
		zkc_keep_read(j->ops.w_trigger);
		return;
	}
	char why[160];
	struct trig *t = calloc(1, sizeof *t);
	if (!t) {
		log_error("job %s: out of memory reading its trigger node; it stays for the next read", j->name);
		return;
	}
	t->j = j;
	t->at_ms = r->stat.ctime;
	if (trigdata_parse_all(r->data ? r->data : "", r->data ? (size_t)r->len : 0, &t->d, why, sizeof why) < 0)
		log_warn("job %s: its trigger node /%s%s holds what is not a trigger's data (%s): it fires once with the "
		         "job's own jobParameter", j->name, j->c->ns, r->path, why);
	if (zkc_delete(j->c->z, r->path, r->stat.version, trigger_deleted, t) != ZOK) {
		trigdata_free(&t->d);
		free(t);
	}
}

static void trigger_known(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session) || r->rc != ZOK) return;
	if (r->stat.dataLength > 0) {
		/* ejob's trigger with a parameter: one read more (ElasticJob's are empty) */
		zkc_get(j->c->z, r->path, NULL, NULL, trigger_read, j);
		return;
	}
	/* ElasticJob's contract: the instance deletes its trigger node and fires once */
	zkc_delete(j->c->z, r->path, -1, NULL, NULL);
	j->c->h.trigger(j->c->arg, j->name, NULL, 0, NULL, r->stat.ctime);
}

/* ---- servers/{ip}: ENABLED or DISABLED, as an operator sets it ---------------------------------- */

static void server_known(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session) || (r->rc != ZOK && r->rc != ZNONODE)) return;
	int off = r->rc == ZOK && r->data && !strcmp(r->data, "DISABLED");
	if (r->rc == ZOK && r->data && !strcmp(r->data, "DRAINING")) {
		/* ejobctl drain: the whole supervisor drains (not ElasticJob's: for it, not ENABLED) */
		if (!j->ops.shut) {
			log_warn("job %s: servers/%s says DRAINING (ejobctl drain): draining this supervisor", j->name, j->c->ip);
			j->c->h.drain(j->c->arg);
		}
		return;
	}
	if (r->rc == ZOK && r->data && !off && strcmp(r->data, "ENABLED") && strcmp(r->data, ""))
		log_warn("job %s: /%s%s holds '%.40s', which is neither ENABLED nor DISABLED; taking it as ENABLED", j->name,
		         j->c->ns, r->path, r->data);
	if (off == j->ops.server_off) return;
	j->ops.server_off = off;
	char p[CJ_PATH_MAX];
	/* either way the sharding changes: any instance may raise the flag, as in ElasticJob (not
	 * with staticSharding: the items stay, and run nowhere while their server is disabled) */
	if (!cj_static_held(j)) zkc_create(j->c->z, cj_path(j, p, "/leader/sharding/necessary"), "", 0, 0, NULL, NULL);
	if (off) {
		log_warn("job %s: this server is DISABLED (servers/%s): its items here stop and it leaves the sharding",
		         j->name, j->c->ip);
		j->c->h.cancel_job(j->c->arg, j->name, "not started: the server was disabled");
		if (j->lead.leader) log_info("job %s: a disabled server does not lead: stepping down", j->name);
		cj_step_down(j);
	} else {
		log_info("job %s: this server is ENABLED again (servers/%s)", j->name, j->c->ip);
		cj_elect(j);
	}
}

/* ---- instances/{our id}: an operator deleting it shuts the job down here (ElasticJob's console
 * "shutdown") ---------------------------------------------------------------------------------- */

static void self_known(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	/* Registration made the node in this session: its absence in an answer of this same session
	 * proves someone deleted it (the event alone may be the session's own end, seen before the
	 * expiry, in a process frozen past its timeout). */
	if (r->rc != ZNONODE || !cj_live(j, r->session) || r->session != j->reg.session || j->ops.shut) return;
	char p[CJ_PATH_MAX];
	j->ops.shut = 1;
	zkc_keep_free(j->ops.w_self);       /* for good: nothing undoes a shutdown but a restart */
	j->ops.w_self = NULL;
	log_warn("job %s: its instance node instances/%s was deleted (an operator's shutdown): the job is shut down on "
	         "this instance: its items here stop and it fires no more here until the supervisor restarts",
	         j->name, j->c->id);
	j->c->h.cancel_job(j->c->arg, j->name, "not started: the job was shut down on this instance");
	cj_step_down(j);
	/* the others reshard without us: their leader sees the instance go (not with staticSharding) */
	if (!cj_static_held(j)) zkc_create(j->c->z, cj_path(j, p, "/leader/sharding/necessary"), "", 0, 0, NULL, NULL);
}

/* ---- leaving: the supervisor stops or drains ------------------------------------------------------
 *
 * The job leaves this instance while its session lives: instances/{id} deleted (after the
 * resharding flag, so that the next fire is sharded without us), the leadership given up, no fire
 * starts here any more. What runs here goes on (the caller stops it after its grace); each item
 * stopped, or queued and not started, is handed over for failover by its completion multi
 * (coord_fire.c), and the leader names a taker only then: our alive node, which lives as long as
 * the session, tells it that we are still stopping them (coord_failover.c). Nothing undoes it but
 * a restart, as for an operator's shutdown. */
void cj_leave_nodes(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	if (!cj_static_held(j)) zkc_create(j->c->z, cj_path(j, p, "/leader/sharding/necessary"), "", 0, 0, NULL, NULL);
	zkc_delete(j->c->z, cj_path(j, p, "/instances/%s", j->c->id), -1, NULL, NULL);
}

void cj_leave(struct cjob *j, enum cj_left why)
{
	if (j->gone || j->ops.shut) return;
	j->ops.shut = 1;
	j->ops.left = why;
	zkc_keep_free(j->ops.w_self);       /* our own deletion is not an operator's shutdown */
	j->ops.w_self = NULL;
	if (j->lead.leader) log_info("job %s: leaving: stepping down as its leader", j->name);
	cj_step_down(j);
	/* registering: its end deletes the instance node it made (coord_reg.c) */
	if (cj_registered(j)) cj_leave_nodes(j);
	/* a fire still waiting for its sharding runs nothing here: the reshard gives its items to the others */
	struct cfire *f = j->fx.fire;
	if (f && f->state == F_WAIT) cx_step(f, FX_ABORT, NULL);
}

/* ---- all three, from registration on ----------------------------------------------------------- */

void cj_ops_registered(struct cjob *j)
{
	j->ops.server_off = cj_conf(j)->disabled;   /* as registration wrote servers/{ip} */
}

/* armed when ZooKeeper has room (cj_arm_later): each read answers what is there by then */
void cj_watch_ops(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	coord_t *c = j->c;
	zkc_keep_arm(cj_keep(j, &j->ops.w_trigger, ZKC_KEEP_EXISTS, cj_path(j, p, "/trigger/%s", c->id), ZKC_NO_ITEM,
	                     trigger_known));
	zkc_keep_arm(cj_keep(j, &j->ops.w_server, ZKC_KEEP_DATA, cj_path(j, p, "/servers/%s", c->ip), ZKC_NO_ITEM,
	                     server_known));
	if (!j->ops.shut)
		zkc_keep_arm(cj_keep(j, &j->ops.w_self, ZKC_KEEP_EXISTS, cj_path(j, p, "/instances/%s", c->id), ZKC_NO_ITEM,
		                     self_known));
}

void cj_ops_unwatch(struct cjob *j)
{
	zkc_keep_free(j->ops.w_trigger);
	zkc_keep_free(j->ops.w_server);
	zkc_keep_free(j->ops.w_self);
	j->ops.w_trigger = j->ops.w_server = j->ops.w_self = NULL;
}
