/* supervisor/coord_assign.c: the assignment in force on this instance: every item's owner under
 * the sharding node's epoch (read after each reshard, then cached), and the state of the items it
 * owns (completed, disabled, a misfire flag found there), watched where an operator changes it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/coord_int.h"
#include "supervisor/zkc.h"

/* ---- the assignment: sharding/{i}/instance under the sharding node's epoch ----------------------- */

struct load {
	struct cjob *j;
	uint64_t session, epoch;
	uint32_t total, left;
	char **owner;
	int failed;
	int garbage;                /* an owner was not an instance id */
};

void cj_free_owner(char **o, uint32_t n)
{
	if (!o) return;
	for (uint32_t i = 0; i < n; i++) free(o[i]);
	free(o);
}

static void owner_read(void *arg, const struct zkc_res *r)
{
	struct load *l = arg;
	unsigned i = 0;
	const char *q = strstr(r->path, "/sharding/");
	if (q) i = (unsigned)strtoul(q + 10, NULL, 10);
	if (r->rc == ZOK && i < l->total) {
		char show[64];
		l->owner[i] = strdup(r->data ? r->data : "");
		/* an operator's garbage: the item has no owner, and the leader reshards at the next fire */
		if (l->owner[i] && !cj_id_ok(l->owner[i])) {
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
	if (j->loading > 0) j->loading--;
	if (!l->failed && cj_live(j, l->session)) {
		char p[CJ_PATH_MAX];
		if (l->garbage) zkc_create(j->c->z, cj_path(j, p, "/leader/sharding/necessary"), "", 0, 0, NULL, NULL);
		cj_install(j, l->owner, l->total, l->epoch);
		l->owner = NULL;
	} else if (j->fire && j->fire->state == F_WAIT) {
		cx_continue(j);
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

static void item_read(struct cjob *j, const struct zkc_res *r)
{
	const char *q = strstr(r->path, "/sharding/");
	unsigned i = q ? (unsigned)strtoul(q + 10, NULL, 10) : 0;
	if (!q || r->rc != ZOK || i >= j->total || !j->have) return;
	int was = j->disabled[i];
	j->completed[i] = 0;
	j->disabled[i] = 0;
	for (int k = 0; k < r->nchildren; k++) {
		if (!strcmp(r->children[k], "completed")) j->completed[i] = 1;
		if (!strcmp(r->children[k], "disabled")) j->disabled[i] = 1;
		if (!strcmp(r->children[k], "misfire")) cx_misfire_found(j, i);   /* flagged before it came here */
	}
	if (was != j->disabled[i])
		log_info("job %s: item %u is %s (sharding/%u/disabled)", j->name, i, j->disabled[i] ? "disabled" : "enabled again", i);
}

/* sharding/{i}/disabled of an item we own, watched: an operator disables or enables it. Only that
 * node is watched, not the item's children, so a fire's own running/completed writes cost no
 * re-reads. */
static void watch_disabled(struct cjob *j, uint32_t i);

static unsigned item_of(const char *path)
{
	const char *q = strstr(path, "/sharding/");
	return q ? (unsigned)strtoul(q + 10, NULL, 10) : (unsigned)-1;
}

int cj_owned(const struct cjob *j, uint32_t i)
{
	return j->have && i < j->total && j->owner[i] && !strcmp(j->owner[i], j->c->id);
}


static void disabled_changed(void *arg, int type, const char *path)
{
	struct cjob *j = arg;
	(void)type;
	unsigned i = item_of(path);
	if (i < j->w_disabled_n) j->w_disabled[i] = 0;
	if (j->gone || zkc_state(j->c->z) != ZKC_CONNECTED) return;
	if (cj_owned(j, i)) watch_disabled(j, i);    /* an item that moved away is no longer our business */
}

static void disabled_known(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	unsigned i = item_of(r->path);
	if (!cj_live(j, r->session) || (r->rc != ZOK && r->rc != ZNONODE) || !cj_owned(j, i)) return;
	int was = j->disabled[i];
	j->disabled[i] = r->rc == ZOK;
	if (was != j->disabled[i])
		log_info("job %s: item %u is %s (sharding/%u/disabled)", j->name, i, j->disabled[i] ? "disabled" : "enabled again", i);
}

static void watch_disabled(struct cjob *j, uint32_t i)
{
	if (i >= j->w_disabled_n) {
		uint32_t n = i + 1 > 2 * j->w_disabled_n ? i + 1 : 2 * j->w_disabled_n;
		uint8_t *v = realloc(j->w_disabled, n);
		if (!v) return;
		memset(v + j->w_disabled_n, 0, n - j->w_disabled_n);
		j->w_disabled = v;
		j->w_disabled_n = n;
	}
	char p[CJ_PATH_MAX];
	int w = !j->w_disabled[i];
	if (zkc_exists(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/disabled", i), w ? disabled_changed : NULL, j,
	               disabled_known, j) == ZOK && w)
		j->w_disabled[i] = 1;
}

static void item_state(void *arg, const struct zkc_res *r)
{
	struct states *st = arg;
	struct cjob *j = st->j;
	if (st->epoch == j->epoch) item_read(j, r);
	if (--st->left) return;
	if (st->epoch == j->epoch) j->states_loading = 0;
	free(st);
	if (j->fire && j->fire->state == F_WAIT) cx_continue(j);
}

void cj_install(struct cjob *j, char **owner, uint32_t total, uint64_t epoch)
{
	cj_free_owner(j->owner, j->total);
	free(j->completed);
	free(j->disabled);
	j->owner = owner;
	j->total = total;
	j->epoch = epoch;
	j->completed = calloc(total ? total : 1, 1);
	j->disabled = calloc(total ? total : 1, 1);
	uint8_t *stale = calloc(total ? total : 1, 1);
	/* flags of the old assignment's items carry over (same item numbers) */
	if (stale && j->stale) memcpy(stale, j->stale, total < j->stale_n ? total : j->stale_n);
	free(j->stale);
	j->stale = stale;
	j->stale_n = stale ? total : 0;
	j->have = j->completed && j->disabled;
	const char *me = j->c->id;
	uint32_t mine = 0;
	for (uint32_t k = 0; k < total; k++) mine += owner[k] && !strcmp(owner[k], me);
	log_info("job %s: assignment of epoch 0x%" PRIx64 ": %" PRIu32 " of %" PRIu32 " items here", j->name, epoch, mine,
	         total);
	cj_check_owners(j);
	struct states *st = calloc(1, sizeof *st);
	if (!st || !j->have) {
		free(st);
		j->have = 0;
		return;
	}
	st->j = j;
	st->epoch = epoch;
	st->left = 1;
	j->states_loading = 1;
	char p[CJ_PATH_MAX];
	for (uint32_t k = 0; k < total; k++)
		if (owner[k] && !strcmp(owner[k], me) &&
		    zkc_children(j->c->z, cj_path(j, p, "/sharding/%" PRIu32, k), NULL, NULL, item_state, st) == ZOK) {
			st->left++;
			watch_disabled(j, k);
		}
	struct zkc_res go = { .rc = ZNONODE, .path = "" };
	item_state(st, &go);
}

static void sharding_changed(void *arg, int type, const char *path)
{
	struct cjob *j = arg;
	(void)type;
	(void)path;
	j->w_sharding = 0;
	if (!j->gone) cj_load_assignment(j);
}

static void sharding_read(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session)) {
		if (j->loading > 0) j->loading--;
		return;
	}
	uint32_t total = (uint32_t)cj_conf(j)->sharding_total_count;
	if (r->rc != ZOK || r->stat.mzxid == r->stat.czxid || total == 0) {
		/* never sharded (the node only created): nothing assigned yet */
		if (j->loading > 0) j->loading--;
		j->have = 0;
		if (j->fire && j->fire->state == F_WAIT) cx_continue(j);
		return;
	}
	if (j->have && (uint64_t)r->stat.mzxid == j->epoch) {
		if (j->loading > 0) j->loading--;
		if (j->fire && j->fire->state == F_WAIT) cx_continue(j);
		return;
	}
	struct load *l = calloc(1, sizeof *l);
	if (!l || !(l->owner = calloc(total, sizeof *l->owner))) {
		free(l);
		if (j->loading > 0) j->loading--;
		return;
	}
	l->j = j;
	l->session = r->session;
	l->epoch = (uint64_t)r->stat.mzxid;
	l->total = total;
	l->left = total + 1;
	char p[CJ_PATH_MAX];
	for (uint32_t i = 0; i < total; i++)
		if (zkc_get(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/instance", i), NULL, NULL, owner_read, l) != ZOK) {
			l->failed = 1;
			l->left--;
		}
	struct zkc_res done = { .rc = ZNONODE, .path = "" };
	owner_read(l, &done);
}

void cj_load_assignment(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	int w = !j->w_sharding;
	if (zkc_get(j->c->z, cj_path(j, p, "/sharding"), w ? sharding_changed : NULL, j, sharding_read, j) == ZOK) {
		j->loading++;
		if (w) j->w_sharding = 1;
	}
}

