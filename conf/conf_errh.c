/* conf/conf_errh.c: a job's error handler (jobErrorHandlerType) and its props, as ElasticJob's
 * elasticjob-error-handler 3.0.x reads them (DingtalkPropertiesConstants, WechatPropertiesConstants,
 * EmailPropertiesConstants and their validators), plus ejob's WEBHOOK: what each key means, its
 * default, and whether together they make a message that can be sent. Pure: nothing is looked
 * up or connected (the supervisor's supervisor/sink/errh.c sends). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "conf/conf_int.h"

/* an optional text: "" is unset, as ElasticJob's Strings.isNullOrEmpty takes it */
static const char *opt(const conf_job_t *j, const char *key)
{
	const char *s = conf_job_prop(j, key);
	return s && *s ? s : NULL;
}

const char *conf_errh_type_name(conf_errh_type_t t)
{
	switch (t) {
	case CONF_ERRH_IGNORE: return "IGNORE";
	case CONF_ERRH_DINGTALK: return "DINGTALK";
	case CONF_ERRH_WECHAT: return "WECHAT";
	case CONF_ERRH_EMAIL: return "EMAIL";
	case CONF_ERRH_WEBHOOK: return "WEBHOOK";
	default: return "LOG";
	}
}


/* true or false in any case; ElasticJob's Boolean.parseBoolean reads anything else as false,
 * which hides a typo: ejob refuses it */
static void boolean(struct conf_prop_report *r, const conf_job_t *j, const char *key, bool *out)
{
	const char *s = conf_job_prop(j, key);
	if (!s) return;
	if (!strcasecmp(s, "true")) *out = true;
	else if (!strcasecmp(s, "false")) *out = false;
	else {
		char q[128];
		conf_quote(q, sizeof q, s, strlen(s));
		conf_prop_problem(r, key, "must be true or false (got %s; ElasticJob would read it as false)", q);
	}
}

int conf_mail_addr(const char *s, size_t n, size_t *off, size_t *len)
{
	size_t a = 0, b = n;
	while (a < b && (s[a] == ' ' || s[a] == '\t')) a++;
	while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t')) b--;
	for (size_t i = a; i < b; i++)
		if ((unsigned char)s[i] < ' ' || s[i] == 0x7f) return -1;
	const char *lt = memchr(s + a, '<', b - a);
	if (lt) {
		/* Name <user@host>: the address between the brackets, which end the text */
		if (b - a < 2 || s[b - 1] != '>' || memchr(lt + 1, '<', (size_t)(s + b - 1 - (lt + 1)))) return -1;
		a = (size_t)(lt + 1 - s);
		b--;
	}
	const char *at = memrchr(s + a, '@', b - a);
	if (!at || at == s + a || at + 1 == s + b) return -1;
	for (size_t i = a; i < b; i++)
		if (strchr(" \t<>,;\"()[]\\", s[i])) return -1;
	*off = a;
	*len = b - a;
	return 0;
}

/* One address (with a display name or not); why not, or NULL. */
static const char *addr_problem(const char *s, size_t n)
{
	size_t off, len;
	if (conf_mail_addr(s, n, &off, &len) == 0) return NULL;
	return "is not an address: write it as user@host or Name <user@host>";
}

static void address(struct conf_prop_report *r, const char *key, const char *s, int list)
{
	char q[128];
	if (!list && strchr(s, ',')) {
		conf_quote(q, sizeof q, s, strlen(s));
		conf_prop_problem(r, key, "must be one address, as ElasticJob takes it (got %s); email.to takes several, separated by "
		        "commas", q);
		return;
	}
	for (const char *p = s;;) {
		size_t n = strcspn(p, ",");
		if (!n && !p[n] && p != s) break;     /* "a@x,": Java's split drops the empty end */
		const char *why = addr_problem(p, n);
		if (why) {
			conf_quote(q, sizeof q, p, n);
			conf_prop_problem(r, key, "%s %s", q, why);
		}
		if (!p[n]) break;
		p += n + 1;
	}
}

/* A required text: set and not "". */
static const char *need(struct conf_prop_report *r, const conf_job_t *j, const char *key, const char *type, const char *what)
{
	const char *s = conf_job_prop(j, key);
	if (!s || !*s)
		conf_prop_problem(r, key, "jobErrorHandlerType %s needs %s%s", type, what, s ? " (got \"\")" : "; the key is missing");
	return s && *s ? s : NULL;
}

static void webhook(struct conf_prop_report *r, const conf_job_t *j, conf_errh_t *e, const char *prefix, const char *urlkey,
                    const char *what)
{
	char k[96];
	const char *type = conf_errh_type_name(e->type);
	snprintf(k, sizeof k, "%s.%s", prefix, urlkey);
	if ((e->url = need(r, j, k, type, what))) {
		const char *why = conf_url_problem(e->url);
		if (why) {
			char q[128];
			conf_quote(q, sizeof q, e->url, strlen(e->url));
			conf_prop_problem(r, k, "%s (got %s)", why, q);
		}
	}
	snprintf(k, sizeof k, "%s.connectTimeoutMilliseconds", prefix);
	conf_prop_int(r, j, k, 1, 2147483647LL, "an integer 1-2147483647, in milliseconds", &e->connect_timeout_ms);
	snprintf(k, sizeof k, "%s.readTimeoutMilliseconds", prefix);
	conf_prop_int(r, j, k, 1, 2147483647LL, "an integer 1-2147483647, in milliseconds", &e->read_timeout_ms);
}

int conf_job_errh(const conf_job_t *j, conf_errh_t *e, conf_errh_err_fn *fn, void *arg)
{
	struct conf_prop_report r = { fn, arg, 0 };
	const char *t = j->error_handler_type;
	memset(e, 0, sizeof *e);
	e->connect_timeout_ms = CONF_ERRH_CONNECT_TIMEOUT_MS;
	e->read_timeout_ms = CONF_ERRH_READ_TIMEOUT_MS;
	e->use_ssl = true;
	e->subject = CONF_ERRH_SUBJECT;
	/* unset, LOG, THROW (a rethrow means nothing outside Java) and a plugin's name ejob does not
	 * have: a failed item is logged, as LOG does (conf_job_unacted says so for the last two) */
	e->type = !t ? CONF_ERRH_LOG : !strcmp(t, "IGNORE") ? CONF_ERRH_IGNORE : !strcmp(t, "DINGTALK") ? CONF_ERRH_DINGTALK
	        : !strcmp(t, "WECHAT") ? CONF_ERRH_WECHAT : !strcmp(t, "EMAIL") ? CONF_ERRH_EMAIL
	        : !strcmp(t, "WEBHOOK") ? CONF_ERRH_WEBHOOK : CONF_ERRH_LOG;
	switch (e->type) {
	case CONF_ERRH_DINGTALK:
		webhook(&r, j, e, "dingtalk", "webhook", "the robot's webhook URL, "
		        "https://oapi.dingtalk.com/robot/send?access_token=...");
		e->keyword = opt(j, "dingtalk.keyword");
		e->secret = opt(j, "dingtalk.secret");
		break;
	case CONF_ERRH_WECHAT:
		webhook(&r, j, e, "wechat", "webhook", "the group robot's webhook URL, "
		        "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=...");
		break;
	case CONF_ERRH_WEBHOOK:
		webhook(&r, j, e, "webhook", "url", "the URL to POST the failure to, http(s)://HOST[:PORT]/PATH");
		break;
	case CONF_ERRH_EMAIL: {
		e->host = need(&r, j, "email.host", "EMAIL", "the SMTP server's host name or address");
		if (e->host)
			for (const unsigned char *p = (const unsigned char *)e->host; *p; p++)
				if (*p <= ' ' || *p == 0x7f || *p == '/' || *p == '@') {
					char q[128];
					conf_quote(q, sizeof q, e->host, strlen(e->host));
					conf_prop_problem(&r, "email.host", "must be a host name or an address, nothing else (got %s)", q);
					break;
				}
		if (need(&r, j, "email.port", "EMAIL", "the SMTP server's port (465 for SMTPS, 587 or 25 without useSsl)"))
			conf_prop_int(&r, j, "email.port", 1, 65535, "a port, an integer 1-65535", &e->port);
		e->username = opt(j, "email.username");
		e->password = opt(j, "email.password");
		if (!e->username != !e->password)
			conf_prop_problem(&r, e->username ? "email.password" : "email.username", "email.username and email.password go "
			        "together: set both to log in, or neither for a server that takes mail without a login");
		boolean(&r, j, "email.useSsl", &e->use_ssl);
		boolean(&r, j, "email.debug", &e->debug);
		e->ssl_trust = opt(j, "email.ssl.trust");
		const char *s = conf_job_prop(j, "email.subject");
		if (s) e->subject = s;
		if ((e->from = need(&r, j, "email.from", "EMAIL", "the sender's address, user@host or Name <user@host>")))
			address(&r, "email.from", e->from, 0);
		if ((e->to = need(&r, j, "email.to", "EMAIL", "the recipients' addresses, separated by commas")))
			address(&r, "email.to", e->to, 1);
		if ((e->cc = opt(j, "email.cc"))) address(&r, "email.cc", e->cc, 0);
		if ((e->bcc = opt(j, "email.bcc"))) address(&r, "email.bcc", e->bcc, 0);
		break;
	}
	default:
		break;
	}
	return r.n;
}
