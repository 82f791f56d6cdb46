/* tools/ejobctl_health.c: a job's health word from a snapshot (tools/ejobctl_health.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tools/ejobctl_health.h"

int64_t ctl_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int gone(const struct snap_job *j, const char *id)
{
	return id && *id && !snap_inst_find(j, id) && !snap_alive(j, id);
}

void ctl_job_health(const struct snap_job *j, int64_t now_ms, struct ctl_health *h)
{
	memset(h, 0, sizeof *h);
	h->last_fire_ms = h->last_end_ms = h->last_success_ms = h->period_ms = -1;
	int total = j->conf ? (int)j->conf->sharding_total_count : 0;
	int first_failing = -1;
	for (int k = 0; k < j->nitems; k++) {
		const struct snap_item *it = &j->items[k];
		if (!it->has_last) continue;
		const struct lastrun *r = &it->last;
		if ((int64_t)r->fire_id > h->last_fire_ms) h->last_fire_ms = (int64_t)r->fire_id;
		if ((int64_t)r->end_ms > h->last_end_ms) {
			h->last_end_ms = (int64_t)r->end_ms;
			h->last_outcome = r->outcome;
		}
		if (r->ok_ms && (int64_t)r->ok_ms > h->last_success_ms) h->last_success_ms = (int64_t)r->ok_ms;
		if (it->item < total && lastrun_is_failure(r->outcome)) {
			if (first_failing < 0) first_failing = k;
			h->failing++;
		}
	}
	if (h->last_end_ms >= 0) {
		int64_t a = snap_fire_after(j, h->last_end_ms / 1000, NULL, 0);
		int64_t b = a >= 0 ? snap_fire_after(j, a, NULL, 0) : -1;
		if (b > a) h->period_ms = (b - a) * 1000;
	}

	int dis = 0;
	for (int i = 0; i < j->nserv; i++) dis += j->serv[i].disabled;
	if (j->conf && j->conf->disabled) {
		h->word = "DISABLED";
		snprintf(h->why, sizeof h->why, "the job is disabled (disabled: true)");
		return;
	}
	if (j->nserv && dis == j->nserv) {
		h->word = "DISABLED";
		snprintf(h->why, sizeof h->why, "every server (%d) is DISABLED", j->nserv);
		return;
	}
	for (int k = 0; k < j->nitems; k++) {
		const struct snap_item *it = &j->items[k];
		if (it->running && gone(j, it->running_by)) {
			h->word = "CRASHED";
			snprintf(h->why, sizeof h->why, "item %d's running node names %s, which is gone", it->item, it->running_by);
			return;
		}
		if (it->queued) {
			h->word = "CRASHED";
			snprintf(h->why, sizeof h->why, "item %d waits for failover (leader/failover/items/%d)", it->item, it->item);
			return;
		}
	}
	if (first_failing >= 0) {
		const struct snap_item *it = &j->items[first_failing];
		char when[64];
		snap_time((int64_t)it->last.end_ms, when, sizeof when);
		h->word = "FAILING";
		snprintf(h->why, sizeof h->why, "%d item%s failed at %s last: item %d %s at %s on %s (%" PRIu32
		         " in a row)", h->failing, h->failing == 1 ? "" : "s", h->failing == 1 ? "its" : "their",
		         it->item, it->last.outcome, when, it->last.instance, it->last.failures);
		return;
	}
	if (h->period_ms > 0 && now_ms - h->last_end_ms > 2 * h->period_ms) {
		char when[64];
		snap_time(h->last_end_ms, when, sizeof when);
		h->word = "LATE";
		snprintf(h->why, sizeof h->why, "no execution ended since %s (%" PRId64 "s ago; the cron fires every %" PRId64
		         "s)", when, (now_ms - h->last_end_ms) / 1000, h->period_ms / 1000);
		return;
	}
	/* never ran (no record) although its cron fired twice since the job was made: nobody runs it
	 * (no instance, or every one of them refuses it); monitorExecution: false writes no record */
	if (h->last_end_ms < 0 && j->conf && j->conf->cron && j->conf->monitor_execution && j->conf_ctime_ms > 0) {
		int64_t a = snap_fire_after(j, j->conf_ctime_ms / 1000, NULL, 0);
		int64_t b = a >= 0 ? snap_fire_after(j, a, NULL, 0) : -1;
		int64_t c2 = b >= 0 ? snap_fire_after(j, b, NULL, 0) : -1;
		if (b > a) h->period_ms = (b - a) * 1000;
		/* its second fire after it was made has passed, by more than a period */
		if (c2 > 0 && now_ms > c2 * 1000) {
			char when[64];
			snap_time(j->conf_ctime_ms, when, sizeof when);
			h->word = "LATE";
			snprintf(h->why, sizeof h->why, "no execution recorded since the job was made at %s (its cron fires every %"
			         PRId64 "s)", when, h->period_ms / 1000);
			return;
		}
	}
	if (j->resharding_due) {
		h->word = "SHARDING_FLAG";
		snprintf(h->why, sizeof h->why, "leader/sharding/necessary stands: resharding due at the next fire");
		return;
	}
	h->word = "OK";
}

static void ms_or_null(struct jw *w, const char *key, int64_t ms)
{
	jw_key(w, key);
	if (ms >= 0) jw_int(w, ms);
	else jw_null(w);
}

void ctl_health_json(struct jw *w, const struct ctl_health *h)
{
	char iso[64];
	jw_key(w, "health"), jw_str(w, h->word);
	jw_key(w, "healthReason"), jw_str(w, *h->why ? h->why : NULL);
	ms_or_null(w, "lastFireMs", h->last_fire_ms);
	ms_or_null(w, "lastEndMs", h->last_end_ms);
	jw_key(w, "lastOutcome"), jw_str(w, h->last_outcome);
	ms_or_null(w, "lastSuccessMs", h->last_success_ms);
	if (h->last_success_ms >= 0) snap_time(h->last_success_ms, iso, sizeof iso);
	jw_key(w, "lastSuccess"), jw_str(w, h->last_success_ms >= 0 ? iso : NULL);
	jw_key(w, "failingItems"), jw_int(w, h->failing);
}

void ctl_last_json(struct jw *w, const struct snap_item *it)
{
	char iso[64];
	jw_key(w, "last");
	if (!it->has_last) {
		jw_null(w);
		return;
	}
	const struct lastrun *r = &it->last;
	jw_obj(w);
	jw_key(w, "fireId"), jw_int(w, (long long)r->fire_id);
	jw_key(w, "outcome"), jw_str(w, r->outcome);
	jw_key(w, "endMs"), jw_int(w, (long long)r->end_ms);
	snap_time((int64_t)r->end_ms, iso, sizeof iso);
	jw_key(w, "end"), jw_str(w, iso);
	jw_key(w, "instance"), jw_str(w, r->instance);
	jw_key(w, "attempt"), jw_int(w, r->attempt);
	jw_key(w, "consecutiveFailures"), jw_int(w, r->failures);
	ms_or_null(w, "lastSuccessMs", r->ok_ms ? (int64_t)r->ok_ms : -1);
	jw_key(w, "source"), jw_str(w, *r->source ? r->source : NULL);
	jw_key(w, "error"), jw_str(w, r->error);
	jw_key(w, "tail"), jw_str(w, r->tail);
	jw_end(w);
}

void ctl_failing_json(struct jw *w, const struct snap_job *j)
{
	int total = j->conf ? (int)j->conf->sharding_total_count : 0;
	jw_key(w, "failing"), jw_arr(w);
	for (int k = 0; k < j->nitems; k++) {
		const struct snap_item *it = &j->items[k];
		const struct lastrun *r = &it->last;
		/* the items ctl_job_health counts as failing */
		if (!it->has_last || it->item >= total || !lastrun_is_failure(r->outcome)) continue;
		jw_obj(w);
		jw_key(w, "item"), jw_int(w, it->item);
		jw_key(w, "instance"), jw_str(w, r->instance);
		jw_key(w, "outcome"), jw_str(w, r->outcome);
		jw_key(w, "endMs"), jw_int(w, (long long)r->end_ms);
		jw_key(w, "consecutiveFailures"), jw_int(w, r->failures);
		jw_key(w, "error"), jw_str(w, r->error);
		jw_key(w, "tail"), jw_str(w, r->tail);
		jw_end(w);
	}
	jw_end(w);
}
