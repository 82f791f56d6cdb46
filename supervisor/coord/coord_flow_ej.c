/* supervisor/coord/coord_flow_ej.c: workflows in a mixed cluster (coord_flow.c has the rest).
 *
 * An ElasticJob instance of D takes its trigger node and runs its items, but writes no record:
 * with monitorExecution (ElasticJob's default) it creates sharding/{i}/running with its instance
 * id when an item starts and deletes it when the item ends. The instance whose multi fired the run
 * watches every item's running node from before that multi (so no start is missed) and records an
 * item as ok when a running node of an ElasticJob instance (one without ejob's
 * leader/failover/alive/{id}) goes away; ejob's instances record their own items. One found running
 * at the first read is a fire from before the run: it is waited out first. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/coord/coord_flow.h"

struct pitem {
	zkc_keep_t *w;              /* sharding/{i}/running, data */
	int pre;                    /* running at the first read: not the run's */
	int done;
	char *who;                  /* the ElasticJob instance seen running it */
};

struct fproxy {
	struct cflow *fl;
	uint64_t run;
	char **ej;                  /* D's instances that are not ejob's */
	int nej;
	uint32_t total, left;
	struct pitem *it;
	struct fproxy *next;
};

static void proxy_free(struct fproxy *x)
{
	for (uint32_t i = 0; x->it && i < x->total; i++) {
		zkc_keep_free(x->it[i].w);
		free(x->it[i].who);
	}
	for (int i = 0; i < x->nej; i++) free(x->ej[i]);
	free(x->ej);
	free(x->it);
	free(x);
}

void fl_proxy_drop(struct cflow *fl, struct fproxy *x)
{
	for (struct fproxy **pp = &fl->proxies; *pp; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			break;
		}
	proxy_free(x);
}

static int is_ej(const struct fproxy *x, const char *id)
{
	for (int i = 0; i < x->nej; i++)
		if (!strcmp(x->ej[i], id)) return 1;
	return 0;
}

static void proxy_seen(void *arg, const struct zkc_res *r)
{
	struct fproxy *x = arg;
	if (r->item >= x->total) return;
	struct pitem *it = &x->it[r->item];
	if (it->done) return;
	if (r->rc == ZOK) {
		if (!r->event && !it->who) {
			it->pre = 1;        /* running before the run's trigger: wait it out */
			return;
		}
		if (it->pre && !r->event) return;
		it->pre = 0;
		if (!r->data || !is_ej(x, r->data)) {
			it->done = 1;       /* an ejob instance's: it records it itself */
		} else if (!it->who) {
			it->who = strdup(r->data);
			return;
		} else {
			return;
		}
	} else if (r->rc == ZNONODE) {
		if (it->pre) {
			it->pre = 0;        /* the fire before ended; the run's starts next */
			return;
		}
		if (!it->who && r->event == ZOO_CREATED_EVENT) {
			/* started and ended between the watch and the read: whose, by the assignment here */
			struct cjob *j = x->fl->j;
			const char *own = r->item < j->as.total && j->as.owner ? j->as.owner[r->item] : NULL;
			if (!own || !is_ej(x, own)) return;
			it->who = strdup(own);
		}
		if (!it->who) return;   /* not started yet */
		char p[CJ_PATH_MAX], d[400];
		int n = snprintf(d, sizeof d, "%s (an ElasticJob instance: its outcome is not in ZooKeeper)", it->who);
		zkc_create(x->fl->j->c->z, cj_path(x->fl->j, p, "/ejob-flow/runs/%" PRIu64 "/%" PRIu32 ".ok", x->run, r->item), d,
		           n, 0, NULL, NULL);
		log_info("job %s: workflow run %" PRIu64 ": item %" PRIu32 " ended on ElasticJob instance %s: recorded ok",
		         x->fl->j->name, x->run, r->item, it->who);
		it->done = 1;
	} else {
		return;
	}
	zkc_keep_free(it->w);
	it->w = NULL;
	if (!--x->left) fl_proxy_drop(x->fl, x);
}

struct fproxy *fl_proxy_new(struct cflow *fl, uint64_t run, char **ej, int nej)
{
	uint32_t total = (uint32_t)cj_conf(fl->j)->sharding_total_count;
	struct fproxy *x = calloc(1, sizeof *x);
	if (!x || !(x->it = calloc(total, sizeof *x->it))) {
		free(x);
		return NULL;
	}
	x->fl = fl;
	x->run = run;
	x->ej = ej;
	x->nej = nej;
	x->total = x->left = total;
	char p[CJ_PATH_MAX];
	for (uint32_t i = 0; i < total; i++) {
		x->it[i].w = zkc_keep_new(fl->j->c->z, ZKC_KEEP_DATA, cj_path(fl->j, p, "/sharding/%" PRIu32 "/running", i), i,
		                          proxy_seen, x);
		zkc_keep_arm(x->it[i].w);
	}
	/* bounded as the runs are: the oldest goes */
	int n = 0;
	for (struct fproxy **pp = &fl->proxies; *pp; pp = &(*pp)->next)
		if (++n >= FLOW_WINDOW) {
			proxy_free(*pp);
			*pp = NULL;
			break;
		}
	x->next = fl->proxies;
	fl->proxies = x;
	return x;
}

void fl_proxies_free(struct cflow *fl)
{
	while (fl->proxies) {
		struct fproxy *x = fl->proxies;
		fl->proxies = x->next;
		proxy_free(x);
	}
}
