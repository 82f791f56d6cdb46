/* supervisor/sink/errh.c: the error handlers: the tap that decides on the loop, the bounded queue, and
 * the thread that sends (errh.h; the transfers are errh_send.c's). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "ipc/frame.h"
#include "ipc/json.h"
#include "ipc/wait.h"
#include "supervisor/base/dlib.h"
#include "supervisor/base/log.h"
#include "supervisor/sink/errh.h"
#include "supervisor/sink/errh_int.h"
#include "supervisor/sink/events_history.h"

struct errh {
	struct errh_hooks h;
	void *arg;
	char *instance;
	struct history_src src;     /* the loop's: WEBHOOK's records */
	/* the queue: the loop puts, the thread takes, under mu */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct errh_msg *q[ERRH_QUEUE];
	unsigned head, n;
	int started;                /* the thread was started (the loop's, at the first message) */
	int failed_start;           /* it could not be: messages are dropped (logged once) */
	pthread_t th;
	atomic_int stop;            /* errh_free: send what is queued until stop_at, then end */
	_Atomic uint64_t stop_at;   /* CLOCK_MONOTONIC ns */
	uint64_t episode;           /* the loop's: dropped since the queue was found full (0: none) */
	_Atomic uint64_t counts[CONF_ERRH__COUNT][ERRH__RESULTS];
	struct errh_sender snd;     /* the thread's */
};

const char *errh_result_name(enum errh_result r)
{
	return r == ERRH_SENT ? "sent" : r == ERRH_FAILED ? "failed" : "dropped";
}

void errh_counts(const errh_t *x, uint64_t out[CONF_ERRH__COUNT][ERRH__RESULTS])
{
	for (int t = 0; t < CONF_ERRH__COUNT; t++)
		for (int r = 0; r < ERRH__RESULTS; r++)
			out[t][r] = x ? atomic_load_explicit(&x->counts[t][r], memory_order_relaxed) : 0;
}

static void count(errh_t *x, conf_errh_type_t t, enum errh_result r)
{
	atomic_fetch_add_explicit(&x->counts[t][r], 1, memory_order_relaxed);
}

/* ---- the message ------------------------------------------------------------------------------ */

char *errh_message(const struct event *ev, const char *instance)
{
	char head[96] = "", when[40] = "";
	if (ev->signal) snprintf(head, sizeof head, "%s (signal %d)", frame_status_name(ev->status), ev->signal);
	else if (ev->exit_code) snprintf(head, sizeof head, "%s (exit %d)", frame_status_name(ev->status), ev->exit_code);
	else snprintf(head, sizeof head, "%s", frame_status_name(ev->status));
	time_t t = (time_t)(ev->fire_ms / 1000u);
	struct tm tm;
	if (gmtime_r(&t, &tm) && strftime(when, 24, "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(when + strlen(when), sizeof when - strlen(when), ".%03uZ", (unsigned)(ev->fire_ms % 1000u));
	else
		snprintf(when, sizeof when, "%" PRIu64, ev->fire_ms);
	const char *err = ev->error ? ev->error : "", *out = ev->output ? ev->output : "";
	const char *job = ev->job ? ev->job : "", *where = ev->where ? ev->where : "";
	size_t n = strlen(job) + strlen(head) + strlen(err) + strlen(out) + strlen(instance) + strlen(where) + 256;
	char *m = malloc(n);
	if (!m) return NULL;
	/* ElasticJob's sentence (DingtalkJobErrorHandler and the others), so that keyword filters and
	 * mail rules written for it match; then what ejob knows of the failure where Java has its
	 * stack trace */
	snprintf(m, n, "Job '%s' exception occur in job processing, caused by item %" PRIu32 ": %s%s%s\n"
	         "fire %s (%s), attempt %" PRIu32 ", on %s (%s)%s%s", job, ev->item, head, err[0] ? ": " : "", err, when,
	         event_source_name(ev->source), ev->attempt, instance, where, out[0] ? "\nlast output:\n" : "", out);
	return m;
}

/* One allocation: the message, then its strings. */
static struct errh_msg *pack(const conf_errh_t *e, const char *job, uint32_t item, const char *text, const char *json)
{
	const char *src[] = { job, text, json, e->url, e->keyword, e->secret, e->host, e->username, e->password,
	                      e->ssl_trust, e->subject, e->from, e->to, e->cc, e->bcc };
	size_t n = sizeof(struct errh_msg);
	for (size_t k = 0; k < sizeof src / sizeof src[0]; k++) n += src[k] ? strlen(src[k]) + 1 : 0;
	struct errh_msg *m = calloc(1, n);
	if (!m) return NULL;
	const char **dst[] = { &m->job, &m->text, &m->json, &m->url, &m->keyword, &m->secret, &m->host, &m->username,
	                       &m->password, &m->ssl_trust, &m->subject, &m->from, &m->to, &m->cc, &m->bcc };
	char *p = (char *)(m + 1);
	for (size_t k = 0; k < sizeof src / sizeof src[0]; k++) {
		if (!src[k]) continue;
		size_t l = strlen(src[k]) + 1;
		memcpy(p, src[k], l);
		*dst[k] = p;
		p += l;
	}
	m->type = e->type;
	m->item = item;
	m->connect_ms = e->connect_timeout_ms;
	m->read_ms = e->read_timeout_ms;
	m->port = e->port;
	m->use_ssl = e->use_ssl;
	m->debug = e->debug;
	return m;
}

/* ---- the thread ------------------------------------------------------------------------------- */

/* The pause before another attempt: 0 after ms, or -1 at once when the stop's time would run out
 * before it ends (then the attempt is not made). */
static int pause_ms(errh_t *x, unsigned ms)
{
	uint64_t until = wait_now_ns() + (uint64_t)ms * 1000000u;
	int r = 0;
	pthread_mutex_lock(&x->mu);
	for (;;) {
		uint64_t now = wait_now_ns();
		if (atomic_load(&x->stop) && atomic_load(&x->stop_at) <= until) {
			r = -1;
			break;
		}
		if (now >= until) break;
		/* errh_free signals the stop; the wait's clock is the wall's, its length the monotonic's */
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		uint64_t left = until - now;
		dl.tv_sec += (time_t)(left / 1000000000u);
		dl.tv_nsec += (long)(left % 1000000000u);
		if (dl.tv_nsec >= 1000000000L) dl.tv_sec++, dl.tv_nsec -= 1000000000L;
		pthread_cond_timedwait(&x->cv, &x->mu, &dl);
	}
	pthread_mutex_unlock(&x->mu);
	return r;
}

static void deliver(errh_t *x, const struct errh_msg *m)
{
	const char *type = conf_errh_type_name(m->type);
	char why[512] = "";
	uint64_t t0 = wait_now_ns();
	int again = 0, attempt, cut = 0;
	for (attempt = 1;; attempt++) {
		if (errh_send(&x->snd, m, why, sizeof why, &again) == 0) {
			count(x, m->type, ERRH_SENT);
			log_info("job %s item %" PRIu32 ": the %s message was sent (%s, %.0f ms%s)", m->job, m->item, type, why,
			         (double)(wait_now_ns() - t0) / 1e6, attempt > 1 ? ", at the last of its attempts" : "");
			return;
		}
		if (!again || attempt == ERRH_ATTEMPTS) break;
		unsigned ms = attempt == 1 ? 500 : 1000;
		log_warn("job %s item %" PRIu32 ": the %s message could not be sent (%s); trying again in %.1f s", m->job,
		         m->item, type, why, ms / 1000.0);
		if (pause_ms(x, ms) < 0) {
			cut = 1;
			break;
		}
	}
	count(x, m->type, ERRH_FAILED);
	log_error("job %s item %" PRIu32 ": the %s message was not sent: %s (%d attempt%s%s)", m->job, m->item, type, why,
	          attempt, attempt == 1 ? "" : "s", cut ? "; the supervisor stopped before the next" : "");
}

static void *run(void *arg)
{
	errh_t *x = arg;
	/* libcurl is loaded here, in this thread, when the first handler is configured (dlib.h) */
	CURLcode rc = CURLE_FAILED_INIT;
	if (dlib_need(&dlib_curl) < 0)
		log_error("error handlers: %s; no message can be sent", dlib_error(&dlib_curl));
	else if ((rc = curl_global_init(CURL_GLOBAL_DEFAULT)) != CURLE_OK)
		log_error("error handlers: curl_global_init failed: %s; no message can be sent", curl_easy_strerror(rc));
	if (gethostname(x->snd.hostname, sizeof x->snd.hostname) != 0 || !x->snd.hostname[0])
		snprintf(x->snd.hostname, sizeof x->snd.hostname, "localhost");
	x->snd.hostname[sizeof x->snd.hostname - 1] = 0;
	uint64_t late = 0;
	pthread_mutex_lock(&x->mu);
	for (;;) {
		while (!x->n && !atomic_load(&x->stop)) pthread_cond_wait(&x->cv, &x->mu);
		if (!x->n) break;
		struct errh_msg *m = x->q[x->head];
		x->head = (x->head + 1) % ERRH_QUEUE;
		x->n--;
		pthread_mutex_unlock(&x->mu);
		if (atomic_load(&x->stop) && wait_now_ns() >= atomic_load(&x->stop_at)) {
			late++;             /* the stop's time is up: not sent */
			count(x, m->type, ERRH_DROPPED);
		} else if (rc == CURLE_OK) {
			deliver(x, m);
		} else {
			count(x, m->type, ERRH_FAILED);
		}
		free(m);
		pthread_mutex_lock(&x->mu);
	}
	pthread_mutex_unlock(&x->mu);
	if (late)
		log_warn("error handlers: %" PRIu64 " message%s not sent: the supervisor stopped", late, late == 1 ? "" : "s");
	if (rc == CURLE_OK) curl_global_cleanup();
	return NULL;
}

static int start(errh_t *x)
{
	if (x->started) return 0;
	if (x->failed_start) return -1;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);   /* the loop takes the signals (signalfd) */
	int rc = pthread_create(&x->th, NULL, run, x);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		x->failed_start = 1;
		log_error("error handlers: cannot start the thread that sends their messages: %s; they are dropped", strerror(rc));
		return -1;
	}
	x->started = 1;
	return 0;
}

/* ---- the loop's side ---------------------------------------------------------------------------- */

static void drop(errh_t *x, conf_errh_type_t t, const char *job, uint32_t item, const char *why)
{
	count(x, t, ERRH_DROPPED);
	if (!x->episode++)
		log_error("job %s item %" PRIu32 ": the %s message is dropped: %s (further drops are counted, "
		          "ejob_error_handler_messages_total{result=\"dropped\"}, until one is queued again)", job, item,
		          conf_errh_type_name(t), why);
}

static void put(errh_t *x, struct errh_msg *m)
{
	if (start(x) < 0) {
		drop(x, m->type, m->job, m->item, "its thread is not running");
		free(m);
		return;
	}
	pthread_mutex_lock(&x->mu);
	int full = x->n == ERRH_QUEUE;
	if (!full) {
		x->q[(x->head + x->n) % ERRH_QUEUE] = m;
		if (!x->n++) pthread_cond_signal(&x->cv);   /* it sleeps only on an empty queue */
	}
	pthread_mutex_unlock(&x->mu);
	if (full) {
		char why[96];
		snprintf(why, sizeof why, "%u messages wait to be sent already", ERRH_QUEUE);
		drop(x, m->type, m->job, m->item, why);
		free(m);
	} else if (x->episode) {
		log_warn("error handlers: messages are queued again; %" PRIu64 " %s dropped", x->episode,
		         x->episode == 1 ? "was" : "were");
		x->episode = 0;
	}
}

/* the tap: an item's final failure, and a job whose handler sends */
static void on_event(void *arg, const struct event *ev)
{
	errh_t *x = arg;
	if (!ev->final || ev->status == FRAME_ST_OK || ev->status == FRAME_ST_CANCELLED || !ev->job) return;
	/* a workflow run's item: one message for the run, by whoever wins it (errh_run_failed) */
	if (ev->run) return;
	const conf_job_t *j = x->h.job_conf(x->arg, ev->job);
	if (!j || !j->error_handler_type) return;
	conf_errh_t e;
	if (conf_job_errh(j, &e, NULL, NULL) > 0 || e.type == CONF_ERRH_LOG || e.type == CONF_ERRH_IGNORE) return;
	char *text = errh_message(ev, x->instance);
	json_buf_t b;
	json_init(&b);
	if (e.type == CONF_ERRH_WEBHOOK && text) {
		/* the history's record of the attempt, and the text the other handlers send */
		json_raw(&b, "{");
		history_fields(&b, ev, &x->src);
		json_key(&b, "message", 0);
		json_cstr(&b, text, JSON_PLAIN);
		json_raw(&b, "}");
	}
	struct errh_msg *m = text && !b.oom ? pack(&e, ev->job, ev->item, text, b.p) : NULL;
	free(text);
	json_free(&b);
	if (!m) {
		drop(x, e.type, ev->job, ev->item, "out of memory");
		return;
	}
	put(x, m);
}

void errh_run_failed(errh_t *x, const char *job, uint32_t item, uint64_t run, const char *root, const char *instance,
                     const char *cause, const char *tail)
{
	const conf_job_t *j = x ? x->h.job_conf(x->arg, job) : NULL;
	if (!j || !j->error_handler_type) return;
	conf_errh_t e;
	if (conf_job_errh(j, &e, NULL, NULL) > 0 || e.type == CONF_ERRH_LOG || e.type == CONF_ERRH_IGNORE) return;
	char *text = NULL;
	if (asprintf(&text, "Workflow '%s' run %" PRIu64 " failed: job '%s' exception occur in job processing, caused by "
	             "item %" PRIu32 ": %s\non %s%s%s", root, run, job, item, cause && *cause ? cause : "failed", instance,
	             tail && *tail ? "\nlast output:\n" : "", tail ? tail : "") < 0)
		text = NULL;
	json_buf_t b;
	json_init(&b);
	if (e.type == CONF_ERRH_WEBHOOK && text) {
		char r[24];
		snprintf(r, sizeof r, "%" PRIu64, run);
		json_raw(&b, "{\"workflow\":"), json_cstr(&b, root, JSON_PLAIN);
		json_raw(&b, ",\"workflowRun\":"), json_raw(&b, r);
		json_raw(&b, ",\"job\":"), json_cstr(&b, job, JSON_PLAIN);
		json_raw(&b, ",\"item\":"), json_u64(&b, item);
		json_raw(&b, ",\"instance\":"), json_cstr(&b, instance, JSON_PLAIN);
		json_raw(&b, ",\"error\":"), json_cstr(&b, cause ? cause : "", JSON_PLAIN);
		json_raw(&b, ",\"output\":"), json_cstr(&b, tail && *tail ? tail : NULL, JSON_PLAIN);
		json_raw(&b, ",\"message\":"), json_cstr(&b, text, JSON_PLAIN);
		json_raw(&b, "}");
	}
	struct errh_msg *m = text && !b.oom ? pack(&e, job, item, text, b.p) : NULL;
	free(text);
	json_free(&b);
	if (!m) {
		drop(x, e.type, job, item, "out of memory");
		return;
	}
	put(x, m);
}

int errh_subscribe(errh_t *x, events_t *e)
{
	return events_tap(e, 1u << EVT_ITEM_ENDED, on_event, x);
}

errh_t *errh_new(const struct errh_hooks *h, void *arg, const char *instance)
{
	errh_t *x = calloc(1, sizeof *x);
	if (!x || !(x->instance = strdup(instance))) {
		free(x);
		return NULL;
	}
	x->h = *h;
	x->arg = arg;
	history_src_init(&x->src, x->instance);
	pthread_mutex_init(&x->mu, NULL);
	pthread_cond_init(&x->cv, NULL);
	x->snd.stop = &x->stop;
	x->snd.stop_at = &x->stop_at;
	return x;
}

void errh_free(errh_t *x)
{
	if (!x) return;
	if (x->started) {
		pthread_mutex_lock(&x->mu);
		unsigned left = x->n;
		atomic_store(&x->stop_at, wait_now_ns() + (uint64_t)ERRH_STOP_MS * 1000000u);
		atomic_store(&x->stop, 1);
		pthread_cond_signal(&x->cv);
		pthread_mutex_unlock(&x->mu);
		if (left) log_info("error handlers: sending the %u queued message%s (at most %d s)", left, left == 1 ? "" : "s",
		                   ERRH_STOP_MS / 1000);
		/* a transfer ends by itself once stop_at passes; a second more for the thread to see it */
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += ERRH_STOP_MS / 1000 + 1;
		if (pthread_timedjoin_np(x->th, NULL, &dl) == ETIMEDOUT) {
			log_warn("error handlers: their thread did not end; leaving it to the exit");
			return;             /* it still uses x */
		}
	}
	for (unsigned k = 0; k < x->n; k++) free(x->q[(x->head + k) % ERRH_QUEUE]);
	pthread_mutex_destroy(&x->mu);
	pthread_cond_destroy(&x->cv);
	history_src_free(&x->src);
	free(x->instance);
	free(x);
}
