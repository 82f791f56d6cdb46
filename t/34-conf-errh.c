/* t/34-conf-errh.c: a job's error handler (jobErrorHandlerType) and its props (conf/conf_errh.c):
 * ElasticJob's keys and defaults as conf_job_errh reads them, every refusal with its exact
 * message, in a file and in a config node (so `ejobctl config set` refuses what the supervisor
 * would), and the mail addresses email.* takes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "t/tap.h"

#define HEAD "regCenter: {serverLists: '127.0.0.1:2181', namespace: ns}\njobs:\n"
#define JOB(name, type) "  " name ":\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n" \
	"    jobErrorHandlerType: " type "\n"

static conf_t *parse(const char *yaml, conf_diags_t **d)
{
	return conf_parse(yaml, strlen(yaml), "t.yaml", NULL, d);
}

/* the file gives exactly these errors, in this order */
static void errors_are(const char *name, const char *yaml, const char *const *want)
{
	conf_diags_t *d;
	conf_t *c = parse(yaml, &d);
	int good = c == NULL;
	size_t i = 0;
	for (; want[i]; i++) {
		const conf_diag_t *e = conf_diags_get(d, i);
		if (!e || strcmp(e->text, want[i])) {
			good = 0;
			diag("error %zu: expected %s", i, want[i]);
			diag("error %zu:      got %s", i, e ? e->text : "(none)");
		}
	}
	for (; i < conf_diags_count(d); i++, good = 0) diag("unexpected: %s", conf_diags_get(d, i)->text);
	ok(good, "%s", name);
	conf_free(c);
	conf_diags_free(d);
}

static void test_defaults(void)
{
	conf_diags_t *d;
	const char *y = HEAD
		JOB("none", "LOG")
		JOB("ding", "DINGTALK") "    props: {dingtalk.webhook: 'https://oapi.dingtalk.com/robot/send?access_token=t',"
		" dingtalk.keyword: ''}\n"
		JOB("ding2", "DINGTALK") "    props: {dingtalk.webhook: 'http://[::1]:8080/x', dingtalk.keyword: 'K',"
		" dingtalk.secret: S, dingtalk.connectTimeoutMilliseconds: '1', dingtalk.readTimeoutMilliseconds: '2147483647'}\n"
		JOB("wx", "WECHAT") "    props: {wechat.webhook: 'https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k'}\n"
		JOB("hook", "WEBHOOK") "    props: {webhook.url: 'http://h/p', webhook.readTimeoutMilliseconds: '250'}\n"
		JOB("mail", "EMAIL") "    props: {email.host: smtp.example.com, email.port: '465', email.from: a@x,"
		" email.to: 'b@x, C <c@x>', email.cc: '', email.subject: ''}\n"
		JOB("mail2", "EMAIL") "    props: {email.host: '::1', email.port: '25', email.from: a@x, email.to: b@x,"
		" email.username: u, email.password: p, email.useSsl: 'FALSE', email.debug: 'True', email.ssl.trust: '*',"
		" email.cc: c@x, email.bcc: 'Hidden <h@x>'}\n"
		JOB("throw", "THROW") JOB("ignore", "IGNORE");
	conf_t *c = parse(y, &d);
	if (!ok(c && c->n_jobs == 9, "a job of each handler loads")) {
		for (size_t i = 0; d && i < conf_diags_count(d); i++) diag("%s", conf_diags_get(d, i)->text);
		conf_diags_free(d);
		return;
	}
	conf_errh_t e;
	is_int(conf_job_errh(&c->jobs[0], &e, NULL, NULL), 0, "LOG: no problem");
	ok(e.type == CONF_ERRH_LOG, "  type LOG");
	conf_job_errh(&c->jobs[1], &e, NULL, NULL);
	ok(e.type == CONF_ERRH_DINGTALK && !strcmp(e.url, "https://oapi.dingtalk.com/robot/send?access_token=t") &&
	   !e.keyword && !e.secret && e.connect_timeout_ms == 3000 && e.read_timeout_ms == 5000,
	   "DINGTALK: the webhook; ElasticJob's 3000/5000 ms; an empty keyword is none, as Strings.isNullOrEmpty");
	conf_job_errh(&c->jobs[2], &e, NULL, NULL);
	ok(!strcmp(e.keyword, "K") && !strcmp(e.secret, "S") && e.connect_timeout_ms == 1 &&
	   e.read_timeout_ms == 2147483647, "  keyword, secret and timeouts as written (1 .. 2147483647)");
	conf_job_errh(&c->jobs[3], &e, NULL, NULL);
	ok(e.type == CONF_ERRH_WECHAT && e.url && e.read_timeout_ms == 5000, "WECHAT: the webhook, the defaults");
	conf_job_errh(&c->jobs[4], &e, NULL, NULL);
	ok(e.type == CONF_ERRH_WEBHOOK && !strcmp(e.url, "http://h/p") && e.connect_timeout_ms == 3000 &&
	   e.read_timeout_ms == 250, "WEBHOOK (ejob's): webhook.url and its timeouts");
	conf_job_errh(&c->jobs[5], &e, NULL, NULL);
	ok(e.type == CONF_ERRH_EMAIL && !strcmp(e.host, "smtp.example.com") && e.port == 465 && e.use_ssl && !e.debug &&
	   !e.username && !e.password && !strcmp(e.to, "b@x, C <c@x>") && !e.cc && !e.bcc && !strcmp(e.subject, ""),
	   "EMAIL: useSsl true and debug false by default, no login, an empty cc is none, an empty subject stays empty");
	conf_job_errh(&c->jobs[6], &e, NULL, NULL);
	ok(!e.use_ssl && e.debug && !strcmp(e.username, "u") && !strcmp(e.password, "p") && !strcmp(e.ssl_trust, "*") &&
	   !strcmp(e.cc, "c@x") && !strcmp(e.bcc, "Hidden <h@x>") && !strcmp(e.subject, "ElasticJob error message"),
	   "  booleans in any case, the login, ssl.trust, cc, bcc, and ElasticJob's default subject");
	conf_job_errh(&c->jobs[7], &e, NULL, NULL);
	ok(e.type == CONF_ERRH_LOG, "THROW: as LOG");
	conf_job_errh(&c->jobs[8], &e, NULL, NULL);
	ok(e.type == CONF_ERRH_IGNORE, "IGNORE");
	conf_free(c);
	conf_diags_free(d);
}

static void test_errors(void)
{
	errors_are("each sending handler without what it needs",
		HEAD JOB("a", "DINGTALK") JOB("b", "WECHAT") "    props: {}\n" JOB("c", "WEBHOOK")
		"    props: {webhook.url: ''}\n" JOB("d", "EMAIL") "    props: {email.port: '25'}\n",
		(const char *const[]){
			"t.yaml:7:5: jobs.a.props.dingtalk.webhook: jobErrorHandlerType DINGTALK needs the robot's webhook URL, "
			"https://oapi.dingtalk.com/robot/send?access_token=...; the key is missing",
			"t.yaml:13:5: jobs.b.props.wechat.webhook: jobErrorHandlerType WECHAT needs the group robot's webhook URL, "
			"https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=...; the key is missing",
			"t.yaml:19:13: jobs.c.props.webhook.url: jobErrorHandlerType WEBHOOK needs the URL to POST the failure "
			"to, http(s)://HOST[:PORT]/PATH (got \"\")",
			"t.yaml:25:5: jobs.d.props.email.host: jobErrorHandlerType EMAIL needs the SMTP server's host name or "
			"address; the key is missing",
			"t.yaml:25:5: jobs.d.props.email.from: jobErrorHandlerType EMAIL needs the sender's address, user@host or "
			"Name <user@host>; the key is missing",
			"t.yaml:25:5: jobs.d.props.email.to: jobErrorHandlerType EMAIL needs the recipients' addresses, "
			"separated by commas; the key is missing",
			NULL });
	errors_are("numbers, URLs, booleans and addresses that are not",
		HEAD JOB("a", "DINGTALK") "    props:\n      dingtalk.webhook: 'ftp://x/y'\n"
		"      dingtalk.connectTimeoutMilliseconds: '0'\n      dingtalk.readTimeoutMilliseconds: '2147483648'\n"
		JOB("b", "WECHAT") "    props: {wechat.webhook: 'https://x:70000/', wechat.readTimeoutMilliseconds: -5}\n"
		JOB("c", "WEBHOOK") "    props: {webhook.url: 'http:///p', webhook.connectTimeoutMilliseconds: 1s}\n"
		JOB("d", "WEBHOOK") "    props: {webhook.url: 'http://a b/'}\n"
		JOB("e", "EMAIL") "    props:\n      email.host: 'smtp://x'\n      email.port: '65536'\n"
		"      email.from: 'a@x, b@x'\n      email.to: 'a@x,,b'\n      email.cc: 'c@x,d@x'\n"
		"      email.bcc: 'Name <h@x'\n      email.username: u\n      email.useSsl: 'yes'\n      email.debug: '1'\n",
		(const char *const[]){
			"t.yaml:9:7: jobs.a.props.dingtalk.webhook: must start with http:// or https:// (got \"ftp://x/y\")",
			"t.yaml:10:7: jobs.a.props.dingtalk.connectTimeoutMilliseconds: must be an integer 1-2147483647, in "
			"milliseconds (got \"0\")",
			"t.yaml:11:7: jobs.a.props.dingtalk.readTimeoutMilliseconds: must be an integer 1-2147483647, in "
			"milliseconds (got \"2147483648\")",
			"t.yaml:17:13: jobs.b.props.wechat.webhook: has a port that is not a number 1-65535 (got "
			"\"https://x:70000/\")",
			"t.yaml:17:49: jobs.b.props.wechat.readTimeoutMilliseconds: must be an integer 1-2147483647, in "
			"milliseconds (got \"-5\")",
			"t.yaml:23:13: jobs.c.props.webhook.url: has no host: write it as http://HOST[:PORT]/PATH (got "
			"\"http:///p\")",
			"t.yaml:23:39: jobs.c.props.webhook.connectTimeoutMilliseconds: must be an integer 1-2147483647, in "
			"milliseconds (got \"1s\")",
			"t.yaml:29:13: jobs.d.props.webhook.url: must not hold spaces or control characters: percent-encode them "
			"(a space is %20) (got \"http://a b/\")",
			"t.yaml:35:5: jobs.e.props.email.password: email.username and email.password go together: set both to "
			"log in, or neither for a server that takes mail without a login",
			"t.yaml:36:7: jobs.e.props.email.host: must be a host name or an address, nothing else (got "
			"\"smtp://x\")",
			"t.yaml:37:7: jobs.e.props.email.port: must be a port, an integer 1-65535 (got \"65536\")",
			"t.yaml:38:7: jobs.e.props.email.from: must be one address, as ElasticJob takes it (got \"a@x, b@x\"); "
			"email.to takes several, separated by commas",
			"t.yaml:39:7: jobs.e.props.email.to: \"\" is not an address: write it as user@host or Name <user@host>",
			"t.yaml:39:7: jobs.e.props.email.to: \"b\" is not an address: write it as user@host or Name <user@host>",
			"t.yaml:40:7: jobs.e.props.email.cc: must be one address, as ElasticJob takes it (got \"c@x,d@x\"); "
			"email.to takes several, separated by commas",
			"t.yaml:41:7: jobs.e.props.email.bcc: \"Name <h@x\" is not an address: write it as user@host or Name "
			"<user@host>",
			"t.yaml:43:7: jobs.e.props.email.useSsl: must be true or false (got \"yes\"; ElasticJob would read it as "
			"false)",
			"t.yaml:44:7: jobs.e.props.email.debug: must be true or false (got \"1\"; ElasticJob would read it as "
			"false)",
			NULL });
	errors_are("in the file, ElasticJob's names and WEBHOOK only, in upper case",
		HEAD JOB("a", "dingtalk"),
		(const char *const[]){
			"t.yaml:7:5: jobs.a.jobErrorHandlerType: must be one of LOG, THROW, IGNORE, EMAIL, WECHAT, DINGTALK or "
			"WEBHOOK (got \"dingtalk\"); did you mean 'DINGTALK'?",
			NULL });
	/* props of another handler are only props */
	conf_diags_t *d;
	conf_t *c = parse(HEAD JOB("a", "LOG") "    props: {dingtalk.webhook: 'x', email.port: 'y'}\n", &d);
	ok(c != NULL, "props of a handler the job does not use are not checked");
	conf_free(c);
	conf_diags_free(d);
	c = parse(HEAD JOB("a", "EMAIL") "    props: {email.host: h, email.port: '25', email.from: a@x, "
	          "email.to: 'b@x,'}\n", &d);
	ok(c != NULL, "email.to 'b@x,': a comma at the end is nothing, as Java's split drops it");
	conf_free(c);
	conf_diags_free(d);
}

/* a config node: ElasticJob loads a handler without its props and fails only when it sends, so a
 * supervisor takes such a node with an error of jobErrorHandlerType (failed items are logged);
 * ejobctl config set refuses it (t/72) */
static void test_node(void)
{
	char why[600];
	conf_diags_t *d = NULL;
	const char *bad = "cron: 0 * * * * ?\njobErrorHandlerType: DINGTALK\njobName: n\nprops:\n  ejob.type: external\n"
	                  "  dingtalk.keyword: k\nshardingTotalCount: 1\n";
	conf_job_t *j = conf_node_take(bad, strlen(bad), "/ns/n/config", "n", "", NULL, why, sizeof why, &d);
	conf_errh_t e0;
	ok(j && conf_job_errh(j, &e0, NULL, NULL) == 0 && e0.type == CONF_ERRH_LOG,
	   "a node with DINGTALK and no dingtalk.webhook is taken, its failed items logged (LOG)");
	const conf_diag_t *g = d && conf_diags_count(d) == 1 ? conf_diags_get(d, 0) : NULL;
	is_str(g ? g->text : NULL, "/ns/n/config:4:1: props.dingtalk.webhook: jobErrorHandlerType DINGTALK needs the robot's "
	       "webhook URL, https://oapi.dingtalk.com/robot/send?access_token=...; the key is missing; until the node is "
	       "fixed, failed items are only logged (LOG)", "  with an error that says why");
	ok(g && g->level == CONF_DIAG_KEY, "  of that key alone");
	conf_diags_free(d);
	conf_job_free(j);

	const char *good = "cron: 0 * * * * ?\njobErrorHandlerType: WEBHOOK\njobName: n\nprops:\n  ejob.type: external\n"
	                   "  webhook.url: http://h/p\nshardingTotalCount: 1\n";
	j = conf_node_take(good, strlen(good), "/ns/n/config", "n", "", NULL, why, sizeof why, NULL);
	conf_errh_t e;
	ok(j && conf_job_errh(j, &e, NULL, NULL) == 0 && e.type == CONF_ERRH_WEBHOOK && !strcmp(e.url, "http://h/p"),
	   "a node with WEBHOOK and its url is taken");
	if (j) {
		size_t len;
		char *y = conf_node_emit(j, &len);
		conf_job_t *back = y ? conf_node_parse(y, len, "/ns/n/config", NULL) : NULL;
		ok(back && conf_job_equal(j, back) && strstr(y, "jobErrorHandlerType: WEBHOOK\n") &&
		   strstr(y, "  webhook.url: http://h/p\n"), "  and written back as it was");
		conf_job_free(back);
		free(y);
	}
	conf_job_free(j);

	const char *plugin = "cron: 0 * * * * ?\njobErrorHandlerType: com.example.Pager\njobName: n\nprops:\n"
	                     "  ejob.type: external\nshardingTotalCount: 1\n";
	j = conf_node_take(plugin, strlen(plugin), "/ns/n/config", "n", "", NULL, why, sizeof why, NULL);
	conf_unacted_t u[CONF_UNACTED_MAX];
	ok(j && conf_job_errh(j, &e, NULL, NULL) == 0 && e.type == CONF_ERRH_LOG && conf_job_unacted(j, u) == 1 &&
	   !strncmp(u[0].text, "com.example.Pager is not an error handler ejob has", 50),
	   "a plugin's name in a node: taken, as LOG, with a warning");
	conf_job_free(j);
}

static void test_addresses(void)
{
	const struct { const char *s, *addr; } cases[] = {
		{ "a@x", "a@x" }, { "  a@x\t", "a@x" }, { "Ops Team <ops@example.com>", "ops@example.com" },
		{ "\"Ops, Team\" <ops@x>", "ops@x" }, { "<a@x>", "a@x" }, { "a.b+c@sub.example.com", "a.b+c@sub.example.com" },
		{ "", NULL }, { "a", NULL }, { "@x", NULL }, { "a@", NULL }, { "a b@x", NULL }, { "N <a@x", NULL },
		{ "N <a@x> z", NULL }, { "a@x\r\nBcc: e@x", NULL }, { "N <<a@x>>", NULL },
	};
	int good = 1;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t off = 0, len = 0;
		int r = conf_mail_addr(cases[i].s, strlen(cases[i].s), &off, &len);
		char got[128] = "(none)";
		if (r == 0) snprintf(got, sizeof got, "%.*s", (int)len, cases[i].s + off);
		if ((r == 0) != (cases[i].addr != NULL) || (r == 0 && strcmp(got, cases[i].addr))) {
			diag("'%s': got %s, want %s", cases[i].s, got, cases[i].addr ? cases[i].addr : "(none)");
			good = 0;
		}
	}
	ok(good, "mail addresses: user@host or Name <user@host>; no blanks, brackets or line breaks in the address");
}

int main(void)
{
	test_defaults();
	test_errors();
	test_node();
	test_addresses();
	return done_testing();
}
