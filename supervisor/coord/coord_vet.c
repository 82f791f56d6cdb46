/* supervisor/coord/coord_vet.c: a catch-up of an instance that came back leaves out the items the
 * leader handed out for its fires while it was gone (coord_failover.c, "missed fires"): each one
 * that is failovering there (handed out, not taken or not ended yet) or whose last record is a
 * take by another instance that started after the catch-up's first fire. docs/design.md, "Missed
 * fires fail over too". */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/lastrun.h"
#include "supervisor/coord/coord_int.h"

struct vet {
	struct cfire *f;            /* NULL: the fire went (cf_vet_detach) */
	uint32_t left;
	uint64_t session;
	uint8_t *ran;               /* [total] */
	uint32_t total;
};

static void vet_done(struct vet *v)
{
	if (--v->left) return;
	struct cfire *f = v->f;
	if (f) {
		struct cjob *j = f->j;
		uint32_t n = 0;
		char list[96] = "";
		for (uint32_t i = 0; i < v->total; i++) {
			if (!v->ran[i]) continue;
			size_t o = strlen(list);
			if (o + 12 < sizeof list) snprintf(list + o, sizeof list - o, "%s%" PRIu32, n ? ", " : "", i);
			n++;
		}
		if (n)
			log_info("job %s: catch-up %" PRIu64 ": item%s %s%s ran (or run%s) on the instance the leader handed %s to "
			         "while this one was gone: not run again here", j->name, fire_id(f->fire), n == 1 ? "" : "s", list,
			         strlen(list) + 8 >= sizeof list ? "..." : "", n == 1 ? "s" : "", n == 1 ? "it" : "them");
		for (uint32_t i = 0; i < v->total; i++) v->ran[i] = v->ran[i] ? 2 : 1;
		f->vetted = v->ran;
		v->ran = NULL;
		f->vet = NULL;
		cx_step(f, FX_READY, NULL);
	}
	free(v->ran);
	free(v);
}

/* failovering there: handed out, not taken or not ended yet; unknown: not run here either (the
 * take's running node would refuse ours, and its misfire flag run it twice) */
static void vet_failovering(void *arg, const struct zkc_res *r)
{
	struct vet *v = arg;
	if (r->item < v->total && r->rc != ZNONODE) v->ran[r->item] = 1;
	vet_done(v);
}

/* a record of that fire's own run elsewhere (at or after the catch-up's latest fire), or of a take by
 * another instance that started after its first fire: a take's id is the ms it started, and it
 * stands for the fires before it (missed_decide) */
static void vet_last(void *arg, const struct zkc_res *r)
{
	struct vet *v = arg;
	struct lastrun lr;
	if (v->f && r->item < v->total && r->rc == ZOK && lastrun_parse(r->data, r->data ? (size_t)r->len : 0, &lr) == 1) {
		const fire_t *t = v->f->fire;
		int take = lr.fire_id % 1000 != 0 && strcmp(lr.instance, v->f->j->c->id) != 0;
		if (lr.fire_id >= fire_id(t) || (take && lr.fire_id > fire_first(t))) v->ran[r->item] = 1;
		lastrun_clear(&lr);
	}
	vet_done(v);
}

int cf_vet(struct cfire *f)
{
	struct cjob *j = f->j;
	const conf_job_t *cj = f->conf;
	if (!cj->failover || !cj->misfire || !cj->monitor_execution || zkc_state(j->c->z) != ZKC_CONNECTED) return 0;
	struct vet *v = calloc(1, sizeof *v);
	uint32_t total = fire_total(f->fire);
	if (!v || !(v->ran = calloc(total ? total : 1, 1))) {
		free(v);
		return 0;
	}
	v->f = f;
	v->total = total;
	v->left = 1;
	v->session = zkc_session(j->c->z);
	f->vet = v;
	char p[CJ_PATH_MAX];
	for (uint32_t k = 0; k < fire_n(f->fire); k++) {
		uint32_t i = fire_item(f->fire, k);
		if (zkc_exists_item(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/failovering", i), i, NULL, NULL, vet_failovering,
		                    v) == ZOK)
			v->left++;
		if (zkc_get_item(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/last", i), i, NULL, NULL, vet_last, v) == ZOK)
			v->left++;
	}
	vet_done(v);
	return 1;
}

void cf_vet_detach(struct cfire *f)
{
	if (f->vet) f->vet->f = NULL;
	f->vet = NULL;
}
