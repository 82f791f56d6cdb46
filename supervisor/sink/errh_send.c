/* supervisor/sink/errh_send.c: one attempt to send an error handler's message, with libcurl's easy API
 * on the error handlers' thread (errh.h): DingTalk's and WeChat's robot messages and ejob's
 * WEBHOOK over HTTP(S), EMAIL over SMTP(S). What goes on the wire is ElasticJob 3.0.x's
 * (DingtalkJobErrorHandler, WechatJobErrorHandler, EmailJobErrorHandler); docs/config.md says
 * where ejob differs, and why. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/evp.h>

#include "ipc/json.h"
#include "ipc/wait.h"
#include "supervisor/base/log.h"
#include "supervisor/sink/errh.h"
#include "supervisor/sink/errh_int.h"

#define ANSWER_MAX 65536            /* of an HTTP answer's body, what is kept to read errcode */

/* ---- helpers ------------------------------------------------------------------------------------ */

struct answer {
	char buf[ANSWER_MAX + 1];
	size_t len;
};

static size_t keep_answer(char *p, size_t size, size_t n, void *arg)
{
	struct answer *a = arg;
	size_t l = size * n, room = ANSWER_MAX - a->len;
	memcpy(a->buf + a->len, p, l < room ? l : room);
	a->len += l < room ? l : room;
	a->buf[a->len] = 0;
	return l;
}

/* the transfer has a connection (CURLINFO_PRIMARY_PORT is set once connected) */
static int connected(CURL *c)
{
	long port = 0;
	return curl_easy_getinfo(c, CURLINFO_PRIMARY_PORT, &port) == CURLE_OK && port > 0;
}

static void common(CURL *c, char *err)
{
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);          /* a thread: no SIGALRM for DNS timeouts */
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
}

/* The transfer, on a multi handle of its own so that this thread looks at it every 50 ms: it
 * ends when the supervisor has stopped and its time for the queue is up (CURLE_ABORTED_BY_CALLBACK),
 * and, with read_ms, when the server has sent nothing for read_ms once connected (Java's socket
 * read timeout, which ElasticJob's HttpClient sets; libcurl has a low-speed limit in whole
 * seconds only): CURLE_OPERATION_TIMEDOUT, *silent set. */
static CURLcode perform(const struct errh_sender *s, CURL *c, long read_ms, int *silent)
{
	CURLM *mh = curl_multi_init();
	*silent = 0;
	if (!mh || curl_multi_add_handle(mh, c) != CURLM_OK) {
		if (mh) curl_multi_cleanup(mh);
		return CURLE_OUT_OF_MEMORY;
	}
	CURLcode rc = CURLE_OK;
	uint64_t last = 0;                  /* when something last moved, once connected (ns) */
	curl_off_t seen = -1;
	for (;;) {
		int running = 0;
		if (curl_multi_perform(mh, &running) != CURLM_OK) {
			rc = CURLE_OUT_OF_MEMORY;
			break;
		}
		if (!running) {
			int left;
			CURLMsg *msg = curl_multi_info_read(mh, &left);
			rc = msg && msg->msg == CURLMSG_DONE ? msg->data.result : CURLE_RECV_ERROR;
			break;
		}
		uint64_t now = wait_now_ns();
		if (atomic_load(s->stop) && now >= atomic_load(s->stop_at)) {
			rc = CURLE_ABORTED_BY_CALLBACK;
			break;
		}
		curl_off_t up = 0, down = 0, head = 0;
		if (read_ms > 0 && connected(c)) {
			long hb = 0;
			curl_easy_getinfo(c, CURLINFO_SIZE_UPLOAD_T, &up);
			curl_easy_getinfo(c, CURLINFO_SIZE_DOWNLOAD_T, &down);
			curl_easy_getinfo(c, CURLINFO_HEADER_SIZE, &hb);
			head = (curl_off_t)hb;
			if (up + down + head != seen) {
				seen = up + down + head;
				last = now;
			} else if (now - last >= (uint64_t)read_ms * 1000000u) {
				rc = CURLE_OPERATION_TIMEDOUT;
				*silent = 1;
				break;
			}
		}
		curl_multi_poll(mh, NULL, 0, 50, NULL);
	}
	curl_multi_remove_handle(mh, c);
	curl_multi_cleanup(mh);
	return rc;
}

/* libcurl's failure in words: its error buffer when it has one */
static void failure(char *why, size_t whysz, CURLcode rc, const char *err)
{
	snprintf(why, whysz, "%s", err[0] ? err : curl_easy_strerror(rc));
}

/* Whether a failed transfer may do better the next time: nothing reached the server (no
 * connection, or it broke). A server that took the request and did not answer in time is not
 * asked again (it may have taken it). */
static int transient(CURL *c, CURLcode rc, int silent)
{
	if (silent) return 0;
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
		return 1;
	case CURLE_OPERATION_TIMEDOUT:
		return !connected(c);
	default:
		return 0;
	}
}

/* The URL without its query (DingTalk's and WeChat's carry the robot's token). */
static void show_url(const char *url, char *out, size_t sz)
{
	snprintf(out, sz, "%.*s", (int)strcspn(url, "?#"), url);
}

/* ---- HTTP: DINGTALK, WECHAT, WEBHOOK ---------------------------------------------------------------- */

/* DingtalkJobErrorHandler.generateSignature: URL-encoded base64 of HmacSHA256 with the secret as
 * its key, of "{timestamp}\n{secret}". */
static int dingtalk_sign(CURL *c, const char *secret, uint64_t ms, char *out, size_t outsz)
{
	char data[64 + 1024];
	int n = snprintf(data, sizeof data, "%" PRIu64 "\n%s", ms, secret);
	if (n < 0 || (size_t)n >= sizeof data) return -1;
	unsigned char mac[EVP_MAX_MD_SIZE];
	size_t maclen = 0;
	if (!EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, secret, strlen(secret), (const unsigned char *)data, (size_t)n,
	               mac, sizeof mac, &maclen))
		return -1;
	unsigned char b64[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
	EVP_EncodeBlock(b64, mac, (int)maclen);
	char *e = curl_easy_escape(c, (const char *)b64, 0);
	if (!e) return -1;
	int fits = (size_t)snprintf(out, outsz, "%s", e) < outsz;
	curl_free(e);
	return fits ? 0 : -1;
}

/* The text of a top-level key of a JSON object: a string's content (escapes kept as written, but
 * \" and \\) or a number's, true, false, null. 1 found, 0 not (or not an object). Enough for the
 * robots' answers, {"errcode":0,"errmsg":"ok"}. */
static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
	return p;
}

static const char *skip_str(const char *p)      /* p at '"': after the closing one, or NULL */
{
	for (p++; *p && *p != '"'; p++)
		if (*p == '\\' && p[1]) p++;
	return *p ? p + 1 : NULL;
}

static const char *skip_value(const char *p)
{
	p = skip_ws(p);
	if (*p == '"') return skip_str(p);
	if (*p == '{' || *p == '[') {
		int depth = 0;
		for (; *p; p++) {
			if (*p == '"') {
				if (!(p = skip_str(p))) return NULL;
				p--;
			} else if (*p == '{' || *p == '[') {
				depth++;
			} else if ((*p == '}' || *p == ']') && !--depth) {
				return p + 1;
			}
		}
		return NULL;
	}
	const char *e = p;
	while (*e && !strchr(",}] \t\r\n", *e)) e++;
	return e > p ? e : NULL;
}

static int json_top(const char *body, const char *key, char *out, size_t outsz)
{
	const char *p = skip_ws(body);
	if (*p++ != '{') return 0;
	size_t kl = strlen(key);
	for (;;) {
		p = skip_ws(p);
		if (*p != '"') return 0;
		const char *k = p + 1, *ke = skip_str(p);
		if (!ke) return 0;
		p = skip_ws(ke);
		if (*p++ != ':') return 0;
		p = skip_ws(p);
		const char *v = p, *ve = skip_value(p);
		if (!ve) return 0;
		if ((size_t)(ke - 1 - k) == kl && !memcmp(k, key, kl)) {
			if (*v == '"') v++, ve--;
			size_t o = 0;
			for (; v < ve && o + 1 < outsz; v++) {
				if (*v == '\\' && v + 1 < ve && (v[1] == '"' || v[1] == '\\')) v++;
				out[o++] = *v;
			}
			out[o] = 0;
			return 1;
		}
		p = skip_ws(ve);
		if (*p++ != ',') return 0;
	}
}

/* DingTalk's and WeChat's robots: {"msgtype":"text","text":{"content":MSG}} as ElasticJob's Gson
 * writes it (ImmutableMap order; Gson escapes < > & = ' as \u003c ...). */
static char *robot_body(const struct errh_msg *m)
{
	json_buf_t b;
	json_init(&b);
	json_raw(&b, "{\"msgtype\":\"text\",\"text\":{\"content\":");
	if (m->type == CONF_ERRH_DINGTALK && m->keyword) {
		/* keyword.concat(message) */
		size_t kl = strlen(m->keyword), tl = strlen(m->text);
		char *s = malloc(kl + tl + 1);
		if (!s) {
			json_free(&b);
			return NULL;
		}
		memcpy(s, m->keyword, kl);
		memcpy(s + kl, m->text, tl + 1);
		json_str(&b, s, kl + tl, JSON_GSON);
		free(s);
	} else {
		json_cstr(&b, m->text, JSON_GSON);
	}
	json_raw(&b, "}}");
	if (b.oom) {
		json_free(&b);
		return NULL;
	}
	return b.p;
}

static int send_http(const struct errh_sender *s, const struct errh_msg *m, char *why, size_t whysz, int *again)
{
	char err[CURL_ERROR_SIZE] = "", where[256];
	CURL *c = curl_easy_init();
	char *body = m->type == CONF_ERRH_WEBHOOK ? NULL : robot_body(m);
	char *url = NULL;
	struct answer *a = calloc(1, sizeof *a);
	struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json; charset=utf-8");
	struct curl_slist *h2 = hdr ? curl_slist_append(hdr, "Expect:") : NULL;   /* no 100-continue wait */
	int rc = -1;
	*again = 0;
	show_url(m->url, where, sizeof where);
	if (!c || (m->type != CONF_ERRH_WEBHOOK && !body) || !a || !h2) {
		snprintf(why, whysz, "out of memory");
		goto out;
	}
	hdr = h2;
	if (m->type == CONF_ERRH_DINGTALK && m->secret) {
		/* getSignedURL: webhook&timestamp=MS&sign=SIGN ('?' when the webhook has no query) */
		char sign[256];
		uint64_t ms = wait_realtime_ns() / 1000000u;
		size_t n = strlen(m->url) + 384;
		if (dingtalk_sign(c, m->secret, ms, sign, sizeof sign) < 0 || !(url = malloc(n))) {
			snprintf(why, whysz, "cannot sign the request (HmacSHA256)");
			goto out;
		}
		snprintf(url, n, "%s%ctimestamp=%" PRIu64 "&sign=%s", m->url, strchr(m->url, '?') ? '&' : '?', ms, sign);
	}
	common(c, err);
	curl_easy_setopt(c, CURLOPT_URL, url ? url : m->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_USERAGENT, "ejob-supervisor");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	const char *data = body ? body : m->json;
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, data);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(data));
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)m->connect_ms);
	/* the read timeout: silence once connected (perform); and a bound on the whole exchange, a
	 * message this small is an answer in one read for ElasticJob */
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)m->connect_ms + (long)m->read_ms);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_answer);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
	int silent;
	CURLcode cr = perform(s, c, m->read_ms, &silent);
	if (cr != CURLE_OK) {
		char f[CURL_ERROR_SIZE + 64];
		if (silent) snprintf(f, sizeof f, "no answer within the read timeout, %d ms", m->read_ms);
		else if (cr == CURLE_ABORTED_BY_CALLBACK) snprintf(f, sizeof f, "cut: the supervisor stopped");
		else failure(f, sizeof f, cr, err);
		snprintf(why, whysz, "POST %s: %s", where, f);
		*again = transient(c, cr, silent);
		goto out;
	}
	long status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (m->type == CONF_ERRH_WEBHOOK) {
		if (status >= 200 && status <= 299) {
			snprintf(why, whysz, "HTTP %ld", status);
			rc = 0;
		} else {
			snprintf(why, whysz, "POST %s: unexpected http response status: %ld", where, status);
			*again = status >= 500;
		}
		goto out;
	}
	if (status != 200) {
		/* ElasticJob's words */
		snprintf(why, whysz, "POST %s: unexpected http response status: %ld", where, status);
		*again = status >= 500;
		goto out;
	}
	char code[64], msg[256];
	if (!json_top(a->buf, "errcode", code, sizeof code)) {
		snprintf(why, whysz, "POST %s: HTTP 200 without an errcode in its answer (%.100s)", where, a->buf);
		goto out;
	}
	if (strcmp(code, "0") != 0) {
		if (!json_top(a->buf, "errmsg", msg, sizeof msg)) snprintf(msg, sizeof msg, "(no errmsg)");
		snprintf(why, whysz, "POST %s: errcode %s: %s", where, code, msg);
		goto out;
	}
	snprintf(why, whysz, "HTTP 200, errcode 0");
	rc = 0;
out:
	curl_slist_free_all(hdr);
	if (c) curl_easy_cleanup(c);
	free(a);
	free(url);
	free(body);
	return rc;
}

/* ---- EMAIL ----------------------------------------------------------------------------------------- */

struct text {                   /* a growing text */
	char *p;
	size_t len, cap;
	int oom;
};

static void tadd(struct text *t, const char *s, size_t n)
{
	if (t->oom) return;
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 4096;
		while (cap < t->len + n + 1) cap *= 2;
		char *p = realloc(t->p, cap);
		if (!p) {
			t->oom = 1;
			return;
		}
		t->p = p;
		t->cap = cap;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = 0;
}

static void tputs(struct text *t, const char *s)
{
	tadd(t, s, strlen(s));
}

struct mail {
	struct text t;              /* the message */
	size_t off;                 /* what curl has read of it */
	const char *job;
	int masking;                /* debug: the server asked for a credential (334) */
};

static size_t read_mail(char *p, size_t size, size_t n, void *arg)
{
	struct mail *ml = arg;
	size_t l = size * n, left = ml->t.len - ml->off;
	if (l > left) l = left;
	memcpy(p, ml->t.p + ml->off, l);
	ml->off += l;
	return l;
}

/* email.debug: the SMTP conversation in the log (JavaMail's debug output goes to stdout), one
 * line each, what the client sends to log in masked, as JavaMail masks it (mail.debug.auth
 * false); the message itself is not logged */
static int debug_line(CURL *c, curl_infotype type, char *data, size_t size, void *arg)
{
	struct mail *ml = arg;
	(void)c;
	const char *dir = type == CURLINFO_HEADER_IN ? "S:" : type == CURLINFO_HEADER_OUT ? "C:"
	                : type == CURLINFO_TEXT ? "*" : NULL;
	while (dir && size) {
		size_t l = 0;
		while (l < size && data[l] != '\n') l++;
		int shown = (int)(l && data[l - 1] == '\r' ? l - 1 : l);
		if (type == CURLINFO_HEADER_OUT && shown >= 5 && !strncasecmp(data, "AUTH ", 5)) {
			int mech = (int)strcspn(data + 5, " \r\n");
			log_info("job %s: email debug: C: AUTH %.*s ***", ml->job, mech, data + 5);
		} else if (type == CURLINFO_HEADER_OUT && ml->masking) {
			log_info("job %s: email debug: C: ***", ml->job);
		} else if (shown) {
			log_info("job %s: email debug: %s %.*s", ml->job, dir, shown, data);
		}
		if (type == CURLINFO_HEADER_IN) ml->masking = shown >= 3 && !strncmp(data, "334", 3);
		l += l < size;
		data += l;
		size -= l;
	}
	return 0;
}

/* a header's text: as it is when it is printable ASCII, else RFC 2047 encoded words (base64 of
 * UTF-8, whole characters in each), folded, as JavaMail's MimeUtility.encodeText does */
static void header_text(struct text *b, const char *s)
{
	size_t n = strlen(s);
	int plain = n < 900 && !strstr(s, "=?");
	for (size_t i = 0; plain && i < n; i++) plain = (unsigned char)s[i] >= ' ' && (unsigned char)s[i] < 0x7f;
	if (plain) {
		tputs(b, s);
		return;
	}
	for (size_t i = 0; i < n;) {
		size_t k = i + 45 < n ? i + 45 : n;       /* 45 bytes: 60 of base64, a word under 76 */
		while (k < n && k > i && ((unsigned char)s[k] & 0xc0) == 0x80) k--;
		if (k == i) k = i + 1;
		unsigned char enc[64];
		EVP_EncodeBlock(enc, (const unsigned char *)s + i, (int)(k - i));
		if (i) tputs(b, "\r\n ");
		tputs(b, "=?UTF-8?B?");
		tputs(b, (const char *)enc);
		tputs(b, "?=");
		i = k;
	}
}

/* The mail, as JavaMail writes EmailJobErrorHandler's MimeMessage: Date, From, To (every
 * address of email.to), Cc, Message-ID, Subject, MIME-Version, and a multipart/mixed body with
 * one text/html; charset=utf-8 part: the message (HTML-escaped, in <pre>; docs/config.md). Bcc
 * is no header (its address is a recipient only). Lines end CRLF. */
static int build_mail(struct errh_sender *s, const struct errh_msg *m, struct text *b)
{
	char date[64], boundary[96], line[640];
	time_t now = time(NULL);
	struct tm tm;
	uint64_t ms = wait_realtime_ns() / 1000000u, k = ++s->mails;
	if (!localtime_r(&now, &tm) || !strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S %z", &tm)) return -1;
	snprintf(boundary, sizeof boundary, "----=_Part_%" PRIu64 "_%d.%" PRIu64, k, (int)getpid(), ms);
	tputs(b, "Date: "), tputs(b, date), tputs(b, "\r\nFrom: "), tputs(b, m->from), tputs(b, "\r\nTo: ");
	int first = 1;
	for (const char *p = m->to;;) {
		size_t n = strcspn(p, ","), off, len;
		if (n && conf_mail_addr(p, n, &off, &len) == 0) {
			/* each address as written, the blanks around it trimmed, joined by ", " */
			size_t a = 0, e = n;
			while (e && (p[e - 1] == ' ' || p[e - 1] == '\t')) e--;
			while (a < e && (p[a] == ' ' || p[a] == '\t')) a++;
			if (!first) tputs(b, ", ");
			tadd(b, p + a, e - a);
			first = 0;
		}
		if (!p[n]) break;
		p += n + 1;
	}
	if (m->cc) tputs(b, "\r\nCc: "), tputs(b, m->cc);
	snprintf(line, sizeof line, "\r\nMessage-ID: <%" PRIu64 ".%" PRIu64 ".ejob.%d@%s>\r\nSubject: ", ms, k,
	         (int)getpid(), s->hostname);
	tputs(b, line);
	header_text(b, m->subject ? m->subject : CONF_ERRH_SUBJECT);
	snprintf(line, sizeof line, "\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; \r\n\tboundary=\"%s\"\r\n"
	         "\r\n--%s\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: ", boundary, boundary);
	tputs(b, line);
	/* the part: the text with & < > escaped, in <pre> so that its lines stay lines */
	struct text h = { 0 };
	tputs(&h, "<pre>");
	for (const char *p = m->text; *p;) {
		size_t run = strcspn(p, "&<>\n");
		tadd(&h, p, run);
		p += run;
		if (!*p) break;
		tputs(&h, *p == '&' ? "&amp;" : *p == '<' ? "&lt;" : *p == '>' ? "&gt;" : "\r\n");
		p++;
	}
	tputs(&h, "</pre>");
	/* 7bit when it is ASCII in lines SMTP takes (998 bytes), else base64 */
	int ascii = 1;
	size_t col = 0;
	for (size_t i = 0; i < h.len && !h.oom && ascii; i++) {
		unsigned char ch = (unsigned char)h.p[i];
		if (ch >= 0x80 || (ch < ' ' && ch != '\r' && ch != '\n' && ch != '\t')) ascii = 0;
		col = ch == '\n' ? 0 : col + 1;
		if (col > 990) ascii = 0;
	}
	if (h.oom) {
		free(h.p);
		return -1;
	}
	if (ascii) {
		tputs(b, "7bit\r\n\r\n");
		tadd(b, h.p, h.len);
	} else {
		tputs(b, "base64\r\n\r\n");
		for (size_t i = 0; i < h.len; i += 57) {          /* 76 characters a line */
			unsigned char enc[80];
			EVP_EncodeBlock(enc, (const unsigned char *)h.p + i, (int)(h.len - i < 57 ? h.len - i : 57));
			tputs(b, (const char *)enc);
			if (i + 57 < h.len) tputs(b, "\r\n");
		}
	}
	free(h.p);
	snprintf(line, sizeof line, "\r\n--%s--\r\n", boundary);
	tputs(b, line);
	return b->oom ? -1 : 0;
}

/* "<user@host>" of one address, appended to list */
static struct curl_slist *rcpt(struct curl_slist *list, const char *s, size_t n, int *bad)
{
	size_t off, len;
	char a[512];
	if (conf_mail_addr(s, n, &off, &len) < 0 || len + 3 > sizeof a) {
		*bad = 1;
		return list;
	}
	snprintf(a, sizeof a, "<%.*s>", (int)len, s + off);
	struct curl_slist *l = curl_slist_append(list, a);
	if (!l) *bad = 1;
	return l ? l : list;
}

static int send_mail(struct errh_sender *s, const struct errh_msg *m, char *why, size_t whysz, int *again)
{
	char err[CURL_ERROR_SIZE] = "", url[600], from[512];
	struct mail ml = { .job = m->job };
	struct curl_slist *to = NULL;
	int bad = 0, rc = -1;
	*again = 0;
	CURL *c = curl_easy_init();
	for (const char *p = m->to;;) {
		size_t n = strcspn(p, ",");
		if (n || p[n]) to = rcpt(to, p, n, &bad);
		if (!p[n]) break;
		p += n + 1;
	}
	if (m->cc) to = rcpt(to, m->cc, strlen(m->cc), &bad);
	if (m->bcc) to = rcpt(to, m->bcc, strlen(m->bcc), &bad);
	size_t off, len;
	if (conf_mail_addr(m->from, strlen(m->from), &off, &len) < 0 || len + 3 > sizeof from) bad = 1;
	else snprintf(from, sizeof from, "<%.*s>", (int)len, m->from + off);
	/* smtps: TLS from the first byte (JavaMail's SSLSocketFactory); smtp: none (no STARTTLS, as
	 * ElasticJob's session does not enable it); the URL's path is the EHLO name */
	int v6 = strchr(m->host, ':') != NULL;
	int ul = snprintf(url, sizeof url, "%s://%s%s%s:%d/%s", m->use_ssl ? "smtps" : "smtp", v6 ? "[" : "", m->host,
	                  v6 ? "]" : "", m->port, s->hostname);
	if (ul < 0 || (size_t)ul >= sizeof url) {
		snprintf(why, whysz, "email.host is too long for a URL (%zu bytes)", strlen(m->host));
		goto out;
	}
	if (!c || bad || !to || build_mail(s, m, &ml.t) < 0) {
		snprintf(why, whysz, "%s", bad ? "an address ejob cannot send to (longer than 509 bytes, or not one)" :
		         "out of memory");
		goto out;
	}
	common(c, err);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
	curl_easy_setopt(c, CURLOPT_MAIL_FROM, from);
	curl_easy_setopt(c, CURLOPT_MAIL_RCPT, to);
	if (m->username) {
		curl_easy_setopt(c, CURLOPT_USERNAME, m->username);
		curl_easy_setopt(c, CURLOPT_PASSWORD, m->password);
	}
	if (m->use_ssl && m->ssl_trust) {
		/* mail.smtp.ssl.trust: "*" or the hosts whose certificate is taken as it is */
		int trusted = !strcmp(m->ssl_trust, "*");
		for (const char *p = m->ssl_trust; !trusted && *p;) {
			p += strspn(p, " \t");
			size_t n = strcspn(p, " \t");
			trusted = n && n == strlen(m->host) && !strncasecmp(p, m->host, n);
			p += n;
		}
		if (trusted) {
			curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
			curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
		}
	}
	curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, read_mail);
	curl_easy_setopt(c, CURLOPT_READDATA, &ml);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)ERRH_MAIL_CONNECT_MS);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)ERRH_MAIL_TOTAL_MS);
	if (m->debug) {
		curl_easy_setopt(c, CURLOPT_VERBOSE, 1L);
		curl_easy_setopt(c, CURLOPT_DEBUGFUNCTION, debug_line);
		curl_easy_setopt(c, CURLOPT_DEBUGDATA, &ml);
	}
	int silent;
	CURLcode cr = perform(s, c, 0, &silent);
	long code = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (cr != CURLE_OK) {
		char f[CURL_ERROR_SIZE + 64];
		if (cr == CURLE_ABORTED_BY_CALLBACK) snprintf(f, sizeof f, "cut: the supervisor stopped");
		else failure(f, sizeof f, cr, err);
		snprintf(why, whysz, "%s:%d: %s", m->host, m->port, f);
		if (code >= 400 && code < 600) snprintf(why + strlen(why), whysz - strlen(why), " (SMTP %ld)", code);
		/* a transient SMTP answer (4xx) or no server: again; a refusal (5xx): no */
		*again = code >= 500 ? 0 : code >= 400 ? 1 : transient(c, cr, 0);
		goto out;
	}
	snprintf(why, whysz, "SMTP %ld", code);
	rc = 0;
out:
	curl_slist_free_all(to);
	if (c) curl_easy_cleanup(c);
	free(ml.t.p);
	return rc;
}

int errh_send(struct errh_sender *s, const struct errh_msg *m, char *why, size_t whysz, int *again)
{
	*again = 0;
	switch (m->type) {
	case CONF_ERRH_DINGTALK:
	case CONF_ERRH_WECHAT:
	case CONF_ERRH_WEBHOOK:
		return send_http(s, m, why, whysz, again);
	case CONF_ERRH_EMAIL:
		return send_mail(s, m, why, whysz, again);
	default:
		snprintf(why, whysz, "%s sends nothing", conf_errh_type_name(m->type));
		return -1;
	}
}
