/* supervisor/coord/coord_assign.c: the assignment in force on this instance: every item's owner under
 * its epoch (the highest mzxid of the item nodes; read after each reshard, then cached), and the
 * state of the items it owns (completed, disabled, a misfire flag found there), watched where an
 * operator changes it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/coord/coord_int.h"

/* ---- the assignment: sharding/{i}/instance, its epoch the highest mzxid among them --------------- */

struct load {
	struct cjob *j;
	uint64_t session, epoch;    /* epoch: the highest mzxid of the item nodes read */
	uint32_t total, left;
	char **owner;
	int failed;
	int garbage;                /* an owner was not an instance id */
	int named;                  /* some item has an owner */
};

void cj_free_owner(char **o, uint32_t n)
{
	if (!o) return;
	for (uint32_t i = 0; i < n; i++) free(o[i]);
	free(o);
}

static int same_owners(char *const *a, char *const *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if ((a[i] == NULL) != (b[i] == NULL) || (a[i] && strcmp(a[i], b[i]))) return 0;
	return 1;
}

static void owner_read(void *arg, const struct zkc_res *r)
{
	struct load *l = arg;
	uint32_t i = r->item;
	if (r->rc == ZOK && i < l->total) {
		char show[64];
		if ((uint64_t)r->stat.mzxid > l->epoch) l->epoch = (uint64_t)r->stat.mzxid;
		if (r->data && r->data[0]) l->named = 1;
		l->owner[i] = strdup(r->data ? r->data : "");
		/* an operator's garbage: the item has no owner, and the leader reshards at the next fire
		 * (an empty node is not: ejob's leader makes the item nodes empty before its commit) */
		if (l->owner[i] && !l->owner[i][0]) {
			l->garbage = 1;     /* raises the flag only if another item is named (a half assignment) */
		} else if (l->owner[i] && !cj_id_ok(l->owner[i])) {
			log_error("job %s: /%s%s holds '%s', which is not an instance id ({ip}@-@{pid}); item %u runs nowhere "
			          "until the leader reshards, at the next fire", l->j->name, l->j->c->ns,
			          r->path, cj_show(r->data, r->len, show, sizeof show), i);
			l->owner[i][0] = '\0';
			l->garbage = 1;
		}
	} else if (r->rc != ZNONODE) {
		l->failed = 1;
	}
	if (--l->left) return;
	struct cjob *j = l->j;
	if (j->as.loading > 0) j->as.loading--;
	if (!l->failed && cj_live(j, l->session) && !l->named) {
		/* never sharded: the item nodes are not there, or made and empty (ejob's leader makes
		 * them before its commit) */
		j->as.have = 0;
		cx_ready_changed(j);
	} else if (!l->failed && cj_live(j, l->session) && j->as.have && j->as.epoch == l->epoch && j->as.total == l->total &&
	           same_owners(j->as.owner, l->owner, l->total)) {
		/* what we have (the leader's own commit, read back after its flag's event). The same
		 * epoch is not enough: item by item, a read that a commit came in the middle of has the
		 * first items of the old assignment and the epoch of the new one (the highest mzxid), and
		 * the read again after the flag's event, all new, has that epoch too; it was kept, and the
		 * first items ran where the old assignment put them, every fire (bench/scale part B:
		 * 11 items missing and 8 run twice in each fire of 1,000, two runs of five) */
		cx_ready_changed(j);
	} else if (!l->failed && cj_live(j, l->session)) {
		char p[CJ_PATH_MAX];
		if (l->garbage) zkc_create(j->c->z, cj_path(j, p, "/leader/sharding/necessary"), "", 0, 0, NULL, NULL);
		cj_install(j, l->owner, l->total, l->epoch);
		l->owner = NULL;
	} else {
		cx_ready_changed(j);
	}
	cj_free_owner(l->owner, l->total);
	free(l);
}

/* What is under sharding/{i} of each item we own: completed (so a start deletes it), disabled. */
struct states {
	struct cjob *j;
	uint64_t session, epoch;
	uint32_t left;
};

static void arm_disabled(struct cjob *j, uint32_t k);

static void item_read(struct cjob *j, const struct zkc_res *r)
{
	uint32_t i = r->item;
	if (r->rc != ZOK || i >= j->as.total || !j->as.have) return;
	int was = j->as.disabled[i], last = 0;
	j->as.completed[i] = 0;
	j->as.disabled[i] = 0;
	for (int k = 0; k < r->nchildren; k++) {
		if (!strcmp(r->children[k], "last")) last = 1;
		if (!strcmp(r->children[k], "completed")) j->as.completed[i] = 1;
		if (!strcmp(r->children[k], "disabled")) j->as.disabled[i] = 1;
		if (!strcmp(r->children[k], "misfire")) cx_misfire_found(j, i);   /* flagged before it came here */
	}
	cx_last_listed(j, i, last);     /* read before any fire's running multi: answered first */
	if (was != j->as.disabled[i])
		log_info("job %s: item %" PRIu32 " is %s (sharding/%" PRIu32 "/disabled)", j->name, i,
		         j->as.disabled[i] ? "disabled" : "enabled again", i);
	if (!cj_disabled_at_fire(j)) return;
	/* only a disabled one is watched (for when it is enabled again); the fires check the others */
	if (j->as.disabled[i]) {
		arm_disabled(j, i);
	} else if (i < j->as.nw_disabled && j->as.w_disabled[i]) {
		zkc_keep_free(j->as.w_disabled[i]);
		j->as.w_disabled[i] = NULL;
	}
}

/* sharding/{i}/disabled of an item we own, watched: an operator disables or enables it. Only that
 * node is watched, not the item's children, so a fire's own running/completed writes cost no
 * re-reads. */
int cj_owned(const struct cjob *j, uint32_t i)
{
	return j->as.have && i < j->as.total && j->as.owner[i] && !strcmp(j->as.owner[i], j->c->id);
}

static void disabled_known(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	uint32_t i = r->item;
	if (!cj_owned(j, i)) {
		/* an item that moved away is no longer our business */
		zkc_keep_t **k = i < j->as.nw_disabled ? &j->as.w_disabled[i] : NULL;
		if (k && *k) {
			zkc_keep_free(*k);
			*k = NULL;
		}
		return;
	}
	if (!cj_live(j, r->session) || (r->rc != ZOK && r->rc != ZNONODE)) return;
	int was = j->as.disabled[i];
	j->as.disabled[i] = r->rc == ZOK;
	if (was != j->as.disabled[i])
		log_info("job %s: item %" PRIu32 " is %s (sharding/%" PRIu32 "/disabled)", j->name, i,
		         j->as.disabled[i] ? "disabled" : "enabled again", i);
	/* enabled: a fire's multi finds it if it comes back; no watch kept for it */
	if (r->rc == ZNONODE && cj_disabled_at_fire(j) && i < j->as.nw_disabled && j->as.w_disabled[i]) {
		zkc_keep_free(j->as.w_disabled[i]);
		j->as.w_disabled[i] = NULL;
	}
}

int cj_disabled_at_fire(const struct cjob *j)
{
	const conf_job_t *cj = cj_conf(j);
	return cj->monitor_execution && !cj->listener.before_all && !cj->listener.after_all;
}

static void arm_disabled(struct cjob *j, uint32_t k)
{
	char p[CJ_PATH_MAX];
	zkc_keep_t **w = cj_keep_at(&j->as.w_disabled, &j->as.nw_disabled, k);
	if (w) zkc_keep_arm(cj_keep(j, w, ZKC_KEEP_EXISTS, cj_path(j, p, "/sharding/%" PRIu32 "/disabled", k), k,
	                            disabled_known));
}

void cj_disabled_found(struct cjob *j, uint32_t i)
{
	if (!cj_owned(j, i)) return;
	j->as.disabled[i] = 1;
	arm_disabled(j, i);         /* told when it is enabled again */
}

static void item_state(void *arg, const struct zkc_res *r)
{
	struct states *st = arg;
	struct cjob *j = st->j;
	if (st->epoch == j->as.epoch) item_read(j, r);
	if (--st->left) return;
	if (st->epoch == j->as.epoch) j->as.states_loading = 0;
	free(st);
	cx_ready_changed(j);
}

/* arm the disabled watch of every item we own (armed already: nothing is sent); of those known
 * disabled only when a fire's multi checks the others (cj_disabled_at_fire) */
void cj_assign_arm(struct cjob *j)
{
	int at_fire = cj_disabled_at_fire(j);
	for (uint32_t k = 0; j->as.have && k < j->as.total; k++) {
		if (!cj_owned(j, k)) continue;
		if (!at_fire || j->as.disabled[k]) {
			arm_disabled(j, k);
		} else if (k < j->as.nw_disabled && j->as.w_disabled[k]) {
			zkc_keep_free(j->as.w_disabled[k]);     /* the fires check it now */
			j->as.w_disabled[k] = NULL;
		}
	}
}

/* made: the commit that wrote the assignment made its item nodes (cj_shard_fresh), so nothing is
 * under them yet: no last record, nothing completed or disabled, no misfire flag. Else each item
 * we own is listed (what is under it) before a fire may start. Either way the disabled watches
 * are armed when ZooKeeper has room (the listing says what is there meanwhile; cj_arm_later). */
static void install(struct cjob *j, char **owner, uint32_t total, uint64_t epoch, int made)
{
	cj_free_owner(j->as.owner, j->as.total);
	free(j->as.completed);
	free(j->as.disabled);
	j->as.owner = owner;
	j->as.total = total;
	j->as.epoch = epoch;
	j->as.completed = calloc(total ? total : 1, 1);
	j->as.disabled = calloc(total ? total : 1, 1);
	j->as.have = j->as.completed && j->as.disabled;
	j->as.states_fresh = 1;         /* listed below, or made by the commit */
	const char *me = j->c->id;
	uint32_t mine = 0;
	for (uint32_t k = 0; k < total; k++) mine += owner[k] && !strcmp(owner[k], me);
	log_info("job %s: assignment of epoch 0x%" PRIx64 ": %" PRIu32 " of %" PRIu32 " items here", j->name, epoch, mine,
	         total);
	struct event ev = { .type = EVT_ASSIGNMENT, .epoch = epoch, .count = mine };
	cj_event(j, &ev);
	cj_check_owners(j);
	struct states *st = calloc(1, sizeof *st);
	if (!st || !j->as.have) {
		free(st);
		j->as.have = 0;
		return;
	}
	st->j = j;
	st->epoch = epoch;
	st->left = 1;
	j->as.states_loading = 1;
	char p[CJ_PATH_MAX];
	for (uint32_t k = 0; k < total; k++) {
		if (!owner[k] || strcmp(owner[k], me)) continue;
		if (made) cx_last_listed(j, k, 0);
		else if (zkc_children_item(j->c->z, cj_path(j, p, "/sharding/%" PRIu32, k), k, NULL, NULL, item_state, st) == ZOK)
			st->left++;
	}
	if (mine) cj_arm_later(j, CJ_ARM_ITEMS);
	struct zkc_res go = { .rc = ZNONODE, .path = "" };
	item_state(st, &go);
}

void cj_install(struct cjob *j, char **owner, uint32_t total, uint64_t epoch)
{
	install(j, owner, total, epoch, 0);
}

void cj_install_made(struct cjob *j, char **owner, uint32_t total, uint64_t epoch)
{
	install(j, owner, total, epoch, 1);
}

/* ---- the assignment in one read ----------------------------------------------------------------------
 *
 * ejob's leader also writes the whole assignment into the sharding node's data, in the commit
 * that sets the item nodes ("ejob-assignment" and one owner per line; ElasticJob never reads
 * that node's data). It is the assignment in force while no sharding commit came after it:
 * every commit, ejob's or ElasticJob's, deletes leader/sharding/necessary, so the pzxid of
 * leader/sharding (the zxid of the last change of its children) equals the sharding node's
 * mzxid exactly while ejob's commit is the last one (a flag raised since also changes it). So a
 * follower reads leader/sharding's stat, then the sharding node (ZooKeeper answers a session's
 * requests in order), and takes the data when they agree; otherwise (ElasticJob's leader, a flag
 * raised again, an older ejob) it reads every item node as before. An ElasticJob commit between
 * the two reads deletes a flag created before it, whose watch makes us read again. After a mass
 * death, each follower read 8 nodes per job of 8 items; it reads 2. */
#define ASSIGN_MAGIC "ejob-assignment\n"
#define ASSIGN_MAX (256 * 1024)

char *cj_assignment_text(char *const *owner, uint32_t total)
{
	size_t n = sizeof ASSIGN_MAGIC;
	for (uint32_t i = 0; i < total; i++) n += (owner[i] ? strlen(owner[i]) : 0) + 1;
	if (n > ASSIGN_MAX) return NULL;
	char *t = malloc(n), *p = t;
	if (!t) return NULL;
	p += sprintf(p, "%s", ASSIGN_MAGIC);
	for (uint32_t i = 0; i < total; i++) p += sprintf(p, "%s\n", owner[i] ? owner[i] : "");
	return t;
}

static void load_items(struct cjob *j, struct load *l);

/* the sharding node's data as owners[total]; NULL unless it is an ejob assignment of that size */
static char **assignment_parse(const char *data, int len, uint32_t total)
{
	size_t m = strlen(ASSIGN_MAGIC);
	if (!data || len < (int)m || strncmp(data, ASSIGN_MAGIC, m)) return NULL;
	char **o = calloc(total ? total : 1, sizeof *o);
	if (!o) return NULL;
	const char *p = data + m, *end = data + len;
	uint32_t i = 0;
	while (p < end && i < total) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl) break;
		if (!(o[i] = strndup(p, (size_t)(nl - p))) || (o[i][0] && !cj_id_ok(o[i]))) break;
		i++;
		p = nl + 1;
	}
	if (i != total || p != end) {
		cj_free_owner(o, total);
		return NULL;
	}
	return o;
}

struct fast {
	struct load *l;             /* NULL: the second read was not sent (the first's answer frees it) */
	int64_t pzxid;              /* leader/sharding's; -1: not read */
};

static void fast_sharding(void *arg, const struct zkc_res *r)
{
	struct fast *f = arg;
	struct load *l = f->l;
	struct cjob *j = l->j;
	int64_t pzxid = f->pzxid;
	free(f);
	char **o = NULL;
	int named = 0;
	if (r->rc == ZOK && pzxid >= 0 && r->stat.mzxid == pzxid && cj_live(j, l->session) &&
	    (o = assignment_parse(r->data, r->len, l->total)))
		for (uint32_t i = 0; i < l->total; i++) named |= o[i][0] != 0;
	if (!o || !named) {
		cj_free_owner(o, l->total);
		load_items(j, l);
		return;
	}
	cj_free_owner(l->owner, l->total);
	l->owner = o;
	l->named = 1;
	l->epoch = (uint64_t)r->stat.mzxid;
	l->left = 1;
	struct zkc_res done = { .rc = ZNONODE, .path = "" };
	owner_read(l, &done);
}

static void fast_leader(void *arg, const struct zkc_res *r)
{
	struct fast *f = arg;
	if (!f->l) {
		free(f);
		return;
	}
	f->pzxid = r->rc == ZOK ? r->stat.pzxid : -1;
}

/* The assignment is what sharding/{i}/instance say, read whenever it may have changed (the
 * resharding flag's events, a new session, a reconnect), whoever wrote it: ejob's leader sets
 * their data, ElasticJob's deletes and creates them again, both in the commit that deletes
 * leader/sharding/necessary. Its epoch is the highest mzxid among them: the zxid of the commit
 * that wrote the assignment either way (a fencing token, and no request more than the owners'
 * reads). A lost answer leaves what we have; the connection's return reads again (coord.c). */
void cj_load_assignment(struct cjob *j)
{
	uint32_t total = (uint32_t)cj_conf(j)->sharding_total_count;
	if (total == 0) {
		j->as.have = 0;
		return;
	}
	struct load *l = calloc(1, sizeof *l);
	if (!l || !(l->owner = calloc(total, sizeof *l->owner))) {
		free(l);
		return;
	}
	j->as.loading++;            /* the owners' reads */
	l->j = j;
	l->session = zkc_session(j->c->z);
	l->total = total;
	char p[CJ_PATH_MAX];
	struct fast *f = total > 2 ? calloc(1, sizeof *f) : NULL;
	if (f) {
		f->l = l;
		f->pzxid = -1;
		if (zkc_exists(j->c->z, cj_path(j, p, "/leader/sharding"), NULL, NULL, fast_leader, f) != ZOK) {
			free(f);
		} else if (zkc_get(j->c->z, cj_path(j, p, "/sharding"), NULL, NULL, fast_sharding, f) == ZOK) {
			return;
		} else {
			f->l = NULL;    /* fast_leader frees it */
		}
	}
	load_items(j, l);
}

/* every item node: the owners, and the epoch as the highest mzxid among them */
static void load_items(struct cjob *j, struct load *l)
{
	uint32_t total = l->total;
	l->left = total + 1;
	char p[CJ_PATH_MAX];
	for (uint32_t i = 0; i < total; i++)
		if (zkc_get_item(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/instance", i), i, NULL, NULL, owner_read, l) != ZOK) {
			l->failed = 1;
			l->left--;
		}
	struct zkc_res done = { .rc = ZNONODE, .path = "" };
	owner_read(l, &done);
}

void cj_assign_reload(struct cjob *j)
{
	j->as.loading = j->as.states_loading = 0;
	cj_load_assignment(j);
}

void cj_assign_session(struct cjob *j)
{
	j->as.loading = j->as.states_loading = 0;   /* their answers never come in the new session */
}

void cj_set_completed(struct cjob *j, uint32_t i, int on)
{
	if (j->as.completed && i < j->as.total) j->as.completed[i] = (uint8_t)on;
}

void cj_assign_unwatch(struct cjob *j)
{
	cj_keeps_free(j->as.w_disabled, j->as.nw_disabled);
}

void cj_assign_free(struct cjob *j)
{
	cj_assign_unwatch(j);
	free(j->as.w_disabled);
	cj_free_owner(j->as.owner, j->as.total);
	free(j->as.completed);
	free(j->as.disabled);
}
