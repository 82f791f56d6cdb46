/* supervisor/coord_ops.c: the nodes an operator writes to steer one instance (see coord.h):
 * trigger/{instanceId} (a fire now), servers/{ip} (ENABLED or DISABLED) and the instance's own
 * instances/{id} (deleted: the job shuts down here). Each is watched from registration on. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/shm.h"
#include "supervisor/coord_int.h"
#include "supervisor/dispatch.h"

/* ---- manual trigger: trigger/{instanceId} -------------------------------------------------------- */


static void trigger_changed(void *arg, int type, const char *path)
{
	struct cjob *j = arg;
	(void)type;
	(void)path;
	j->w_trigger = 0;
	if (!j->gone) cj_watch_trigger(j);
}

static void trigger_known(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session) || r->rc != ZOK) return;
	/* ElasticJob's contract: the instance deletes its trigger node and fires once */
	zkc_delete(j->c->z, r->path, -1, NULL, NULL);
	j->c->h.trigger(j->c->arg, j->name);
}

void cj_watch_trigger(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	int w = !j->w_trigger;
	if (zkc_exists(j->c->z, cj_path(j, p, "/trigger/%s", j->c->id), w ? trigger_changed : NULL, j,
	               trigger_known, j) == ZOK && w)
		j->w_trigger = 1;
}

/* ---- servers/{ip}: ENABLED or DISABLED, as an operator sets it ---------------------------------- */


static void server_changed(void *arg, int type, const char *path)
{
	struct cjob *j = arg;
	(void)type;
	(void)path;
	j->w_server = 0;
	if (!j->gone) cj_watch_server(j);
}

static void server_known(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session) || (r->rc != ZOK && r->rc != ZNONODE)) return;
	int off = r->rc == ZOK && r->data && !strcmp(r->data, "DISABLED");
	if (r->rc == ZOK && r->data && !off && strcmp(r->data, "ENABLED") && strcmp(r->data, ""))
		log_warn("job %s: /%s%s holds '%.40s', which is neither ENABLED nor DISABLED; taking it as ENABLED", j->name,
		         j->c->ns, r->path, r->data);
	if (off == j->server_off) return;
	j->server_off = off;
	char p[CJ_PATH_MAX];
	/* either way the sharding changes: any instance may raise the flag, as in ElasticJob */
	zkc_create(j->c->z, cj_path(j, p, "/leader/sharding/necessary"), "", 0, 0, NULL, NULL);
	if (off) {
		log_warn("job %s: this server is DISABLED (servers/%s): its items here stop and it leaves the sharding",
		         j->name, j->c->ip);
		j->c->h.cancel_job(j->c->arg, j->name, "not started: the server was disabled");
		if (j->leader) {
			log_info("job %s: a disabled server does not lead: stepping down", j->name);
			j->leader = 0;
			zkc_delete(j->c->z, cj_path(j, p, "/leader/election/instance"), -1, NULL, NULL);
		}
	} else {
		log_info("job %s: this server is ENABLED again (servers/%s)", j->name, j->c->ip);
		cj_elect(j);
	}
}

void cj_watch_server(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	int w = !j->w_server;
	if (zkc_get(j->c->z, cj_path(j, p, "/servers/%s", j->c->ip), w ? server_changed : NULL, j, server_known, j) ==
	        ZOK && w)
		j->w_server = 1;
}

/* ---- instances/{our id}: an operator deleting it shuts the job down here (ElasticJob's console
 * "shutdown") ---------------------------------------------------------------------------------- */

static void self_gone(void *arg, const struct zkc_res *r);

static void self_changed(void *arg, int type, const char *path)
{
	struct cjob *j = arg;
	(void)path;
	j->w_self = 0;
	if (j->gone || j->shut) return;
	if (type != ZOO_DELETED_EVENT || !cj_live(j, j->reg_session)) {
		if (zkc_state(j->c->z) == ZKC_CONNECTED) cj_watch_self(j);
		return;
	}
	/* The event may be the session's own end, seen before the expiry (a process frozen past its
	 * timeout): only an answer in this same session proves someone deleted the node. */
	char p[CJ_PATH_MAX];
	zkc_exists(j->c->z, cj_path(j, p, "/instances/%s", j->c->id), NULL, NULL, self_gone, j);
}

static void self_gone(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (r->rc != ZNONODE || !cj_live(j, r->session) || r->session != j->reg_session || j->shut) {
		if (!j->shut && cj_live(j, j->reg_session)) cj_watch_self(j);
		return;
	}
	char p[CJ_PATH_MAX];
	j->shut = 1;
	log_warn("job %s: its instance node instances/%s was deleted (an operator's shutdown): the job is shut down on "
	         "this instance: its items here stop and it fires no more here until the supervisor restarts",
	         j->name, j->c->id);
	j->c->h.cancel_job(j->c->arg, j->name, "not started: the job was shut down on this instance");
	if (j->leader) {
		j->leader = 0;
		zkc_delete(j->c->z, cj_path(j, p, "/leader/election/instance"), -1, NULL, NULL);
	}
	/* the others reshard without us: their leader sees the instance go */
	zkc_create(j->c->z, cj_path(j, p, "/leader/sharding/necessary"), "", 0, 0, NULL, NULL);
}

void cj_watch_self(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	if (j->w_self) return;
	if (zkc_exists(j->c->z, cj_path(j, p, "/instances/%s", j->c->id), self_changed, j, NULL, NULL) == ZOK)
		j->w_self = 1;
}

