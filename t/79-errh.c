/* t/79-errh.c: the error handlers (jobErrorHandlerType), from real supervisors (--standalone and
 * --run, real workers) to a local HTTP receiver (Python's http.server) and a local SMTP server
 * (Debian's python3-aiosmtpd, with a login), both written by the test into its tmpdir:
 *   - DINGTALK: the exact body ElasticJob's Gson writes (the keyword first, Gson's escapes), the
 *     URL signed with timestamp and sign (the HMAC computed here again with OpenSSL), one message
 *     per item that fails for good (after its retries), none for the items that succeed;
 *   - WECHAT: its exact body; WEBHOOK: the history file's record of the attempt with the message;
 *   - EMAIL: From, To, Cc, Subject (the default, and one that is not ASCII), no Bcc header but
 *     its address among the recipients, the login, one text/html; charset=utf-8 part with
 *     ElasticJob's sentence; useSsl false, and SMTPS (useSsl's default) to a server with a
 *     certificate the test makes, trusted by email.ssl.trust, and refused without it;
 *   - an errcode other than 0 and an HTTP 500 are logged and counted failed (the 500 after 3
 *     attempts), in ejob_error_handler_messages_total;
 *   - IGNORE, LOG, THROW and a job that succeeds send nothing;
 *   - a receiver that never answers does not delay the fires (each on its second), and the
 *     supervisor still stops within its bound; past the queue's 256 messages they are dropped,
 *     counted and logged once;
 *   - --run sends its message before it exits;
 *   - under ZooKeeper, the handler of the config node in force, not the file's;
 *   - DINGTALK without dingtalk.webhook is refused at load, by the supervisor and ejobctl. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

#define PY "/usr/bin/python3"

/* The HTTP receiver: every request as DIR/req-NNN.head (method and path, arrival in ms, headers)
 * and .body; the answer by the path's first segment: /ok 200 errcode 0, /errcode 200 errcode
 * 310000, /500 a 500, /hang nothing for 30 s. */
static const char http_py[] =
	"import os, sys, time, threading\n"
	"from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler\n"
	"d = sys.argv[1]\n"
	"n = [0]\n"
	"lock = threading.Lock()\n"
	"class H(BaseHTTPRequestHandler):\n"
	"    protocol_version = 'HTTP/1.1'\n"
	"    def log_message(self, *a): pass\n"
	"    def do_POST(self):\n"
	"        body = self.rfile.read(int(self.headers.get('Content-Length', '0')))\n"
	"        with lock:\n"
	"            n[0] += 1\n"
	"            base = os.path.join(d, 'req-%03d' % n[0])\n"
	"        open(base + '.body', 'wb').write(body)\n"
	"        with open(base + '.tmp', 'w') as f:\n"
	"            f.write('%s %s\\n' % (self.command, self.path))\n"
	"            f.write('at %d\\n' % int(time.time() * 1000))\n"
	"            for k, v in self.headers.items(): f.write('%s: %s\\n' % (k, v))\n"
	"        os.rename(base + '.tmp', base + '.head')\n"
	"        mode = self.path.split('/')[1]\n"
	"        if mode == 'hang':\n"
	"            time.sleep(30)\n"
	"            return\n"
	"        code, out = 200, b'{\"errcode\":0,\"errmsg\":\"ok\"}'\n"
	"        if mode == '500': code, out = 500, b'oops'\n"
	"        if mode == 'errcode': out = b'{\"errcode\":310000,\"errmsg\":\"keywords not in content\"}'\n"
	"        self.send_response(code)\n"
	"        self.send_header('Content-Type', 'application/json')\n"
	"        self.send_header('Content-Length', str(len(out)))\n"
	"        self.end_headers()\n"
	"        self.wfile.write(out)\n"
	"s = ThreadingHTTPServer(('127.0.0.1', 0), H)\n"
	"s.daemon_threads = True\n"
	"open(os.path.join(d, 'port.tmp'), 'w').write(str(s.server_address[1]))\n"
	"os.rename(os.path.join(d, 'port.tmp'), os.path.join(d, 'port'))\n"
	"s.serve_forever()\n";

/* The SMTP server (aiosmtpd), and an SMTPS one (argv[2], argv[3]: its certificate and key): logins
 * ejob/s3cret, in plain text too; every mail as
 * DIR/mail-NNN.eml (as received), .txt (envelope, login, headers as Python's email package
 * decodes them, the parts) and .html (the first part's text, decoded, LF line ends). */
static const char smtp_py[] =
	"import os, sys, time, socket, ssl, email, email.policy\n"
	"import logging\n"
	"logging.getLogger('mail.log').setLevel(logging.ERROR)   # aiosmtpd's notes on its own API\n"
	"from aiosmtpd.controller import Controller\n"
	"from aiosmtpd.smtp import AuthResult\n"
	"d = sys.argv[1]\n"
	"n = [0]\n"
	"def auth(server, session, envelope, mechanism, data):\n"
	"    return AuthResult(success=(data.login == b'ejob' and data.password == b's3cret'), handled=False, auth_data=data)\n"
	"class Handler:\n"
	"    async def handle_DATA(self, server, session, envelope):\n"
	"        n[0] += 1\n"
	"        base = os.path.join(d, 'mail-%03d' % n[0])\n"
	"        open(base + '.eml', 'wb').write(envelope.content)\n"
	"        m = email.message_from_bytes(envelope.content, policy=email.policy.default)\n"
	"        login = session.auth_data.login.decode() if session.authenticated and session.auth_data else '-'\n"
	"        out = ['login: ' + login, 'mail_from: ' + envelope.mail_from, 'rcpt_tos: ' + ','.join(envelope.rcpt_tos)]\n"
	"        for h in ['From', 'To', 'Cc', 'Bcc', 'Subject', 'MIME-Version']: out.append('%s: %s' % (h, m.get(h, '-')))\n"
	"        out.append('Date: %s' % ('yes' if m.get('Date') and m['Date'].datetime else 'no'))\n"
	"        out.append('type: ' + m.get_content_type())\n"
	"        parts = list(m.iter_parts()) if m.is_multipart() else []\n"
	"        out.append('parts: %d' % len(parts))\n"
	"        for p in parts: out.append('part: %s; charset=%s' % (p.get_content_type(), p.get_content_charset()))\n"
	"        open(base + '.html', 'w', encoding='utf-8').write(parts[0].get_content().replace('\\r\\n', '\\n') if parts else '')\n"
	"        open(base + '.tmp', 'w', encoding='utf-8').write('\\n'.join(out) + '\\n')\n"
	"        os.rename(base + '.tmp', base + '.txt')\n"
	"        return '250 OK'\n"
	"s = socket.socket()\n"
	"s.bind(('127.0.0.1', 0))\n"
	"port = s.getsockname()[1]\n"
	"s.close()\n"
	"c = Controller(Handler(), hostname='127.0.0.1', port=port, authenticator=auth, auth_require_tls=False)\n"
	"c.start()\n"
	"# and SMTPS (TLS from the first byte) with the certificate the test made\n"
	"ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)\n"
	"ctx.load_cert_chain(sys.argv[2], sys.argv[3])\n"
	"s = socket.socket()\n"
	"s.bind(('127.0.0.1', 0))\n"
	"tport = s.getsockname()[1]\n"
	"s.close()\n"
	"c2 = Controller(Handler(), hostname='127.0.0.1', port=tport, authenticator=auth, auth_require_tls=False,\n"
	"                ssl_context=ctx)\n"
	"c2.start()\n"
	"open(os.path.join(d, 'tport'), 'w').write(str(tport))\n"
	"open(os.path.join(d, 'port.tmp'), 'w').write(str(port))\n"
	"os.rename(os.path.join(d, 'port.tmp'), os.path.join(d, 'port'))\n"
	"while True: time.sleep(3600)\n";

/* a failing job: its output, then exit 3 */
static const char fail_sh[] =
	"#!/bin/sh\n"
	"echo \"$EJOB_FIRE_ID $EJOB_ITEM $(date +%s%N)\" >> \"$0.runs\"\n"
	"if [ \"$EJOB_ITEM\" = 1 ] && [ \"$OK1\" = 1 ]; then exit 0; fi\n"
	"[ \"$OK\" = 1 ] && exit 0\n"
	"printf 'boom <db> & %sx%s \\303\\251\\n' \"'\" \"'\"\n"
	"exit 3\n";

static const char *out_text = "boom <db> & 'x' \xc3\xa9\n";

static char dir_http[600], dir_smtp[600];

static int file_there(void *arg)
{
	return access(arg, F_OK) == 0;
}

static int start_py(const char *name, const char *script, char *dir, size_t dirsz, const char *a2, const char *a3)
{
	char path[700], port[700];
	snprintf(dir, dirsz, "%s/%s", tlib_tmpdir(), name);
	mkdir(dir, 0700);
	snprintf(path, sizeof path, "%s/%s.py", tlib_tmpdir(), name);
	tlib_write_file(path, script, strlen(script));
	pid_t p = tlib_fork();
	if (p == 0) {
		int nul = open("/dev/null", O_RDONLY);
		dup2(nul, 0);
		execl(PY, PY, path, dir, a2, a3, (char *)NULL);
		_exit(127);
	}
	snprintf(port, sizeof port, "%s/port", dir);
	if (!tlib_wait_for(file_there, port, 10000)) BAIL_OUT("%s did not start (%s %s)", name, PY, path);
	char *s = tsup_slurp(port);
	int v = s ? atoi(s) : 0;
	free(s);
	return v;
}

/* ---- the receiver's records ------------------------------------------------------------------------ */

struct req {
	char method[16], path[512];
	long long at;
	char *head, *body;
};

static int nreqs;
static struct req reqs[256];

static void load_reqs(void)
{
	for (int i = 0; i < nreqs; i++) free(reqs[i].head), free(reqs[i].body);
	nreqs = 0;
	for (int k = 1; k < 256; k++) {
		char p[700];
		snprintf(p, sizeof p, "%s/req-%03d.head", dir_http, k);
		char *h = tsup_slurp(p);
		if (!h) break;
		snprintf(p, sizeof p, "%s/req-%03d.body", dir_http, k);
		struct req *r = &reqs[nreqs++];
		memset(r, 0, sizeof *r);
		r->head = h;
		r->body = tsup_slurp(p);
		sscanf(h, "%15s %511s\nat %lld", r->method, r->path, &r->at);
	}
}

/* requests whose path starts with prefix */
static int count_path(const char *prefix)
{
	int n = 0;
	for (int i = 0; i < nreqs; i++) n += !strncmp(reqs[i].path, prefix, strlen(prefix));
	return n;
}

static const struct req *find_path(const char *prefix)
{
	for (int i = 0; i < nreqs; i++)
		if (!strncmp(reqs[i].path, prefix, strlen(prefix))) return &reqs[i];
	return NULL;
}

struct want {
	const char *prefix;
	int n;
};

static int reqs_there(void *arg)
{
	const struct want *w = arg;
	load_reqs();
	for (; w->prefix; w++)
		if (count_path(w->prefix) < w->n) return 0;
	return 1;
}

/* ---- what is expected ---------------------------------------------------------------------------------- */



/* the text every handler sends for the attempt of this history line (errh.h) */
static void message_of(const char *line, const char *job, int item, const char *head, const char *output, char *out,
                       size_t len)
{
	char fire[32], inst[128], where[64], att[16], src[32];
	tlib_json_field(line, "fireId", fire, sizeof fire);
	tlib_json_field(line, "instance", inst, sizeof inst);
	tlib_json_field(line, "where", where, sizeof where);
	tlib_json_field(line, "attempt", att, sizeof att);
	tlib_json_field(line, "source", src, sizeof src);
	long long ms = atoll(fire);
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char iso[40];
	gmtime_r(&t, &tm);
	strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, len, "Job '%s' exception occur in job processing, caused by item %d: %s\nfire %s.%03dZ (%.*s), "
	         "attempt %s, on %.*s (%.*s)%s%s", job, item, head, iso, (int)(ms % 1000), (int)strlen(src) - 2, src + 1,
	         att, (int)strlen(inst) - 2, inst + 1, (int)strlen(where) - 2, where + 1, output ? "\nlast output:\n" : "",
	         output ? output : "");
}

/* s as a JSON string: gson 1 escapes as Gson does (< > & = ' too) */
static void jstr(const char *s, int gson, char *out, size_t len)
{
	size_t o = 0;
	out[o++] = '"';
	for (; *s && o + 8 < len; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') o += (size_t)snprintf(out + o, len - o, "\\%c", c);
		else if (c == '\n') o += (size_t)snprintf(out + o, len - o, "\\n");
		else if (c < 0x20 || (gson && strchr("<>&='", c))) o += (size_t)snprintf(out + o, len - o, "\\u%04x", c);
		else out[o++] = (char)c;
	}
	out[o++] = '"';
	out[o] = 0;
}

/* DingTalk's sign: base64 of HmacSHA256(secret, "ts\nsecret"), URL-encoded as Java's URLEncoder */
static void sign_of(const char *secret, const char *ts, char *out, size_t len)
{
	char data[256];
	unsigned char mac[EVP_MAX_MD_SIZE], b64[128];
	unsigned int ml = 0;
	snprintf(data, sizeof data, "%s\n%s", ts, secret);
	HMAC(EVP_sha256(), secret, (int)strlen(secret), (const unsigned char *)data, strlen(data), mac, &ml);
	EVP_EncodeBlock(b64, mac, (int)ml);
	size_t o = 0;
	for (const unsigned char *p = b64; *p && o + 4 < len; p++) {
		if (*p == '+' || *p == '/' || *p == '=') o += (size_t)snprintf(out + o, len - o, "%%%02X", *p);
		else out[o++] = (char)*p;
	}
	out[o] = 0;
}


static long long metric(const char *page, const char *type, const char *result)
{
	char k[160];
	snprintf(k, sizeof k, "ejob_error_handler_messages_total{type=\"%s\",result=\"%s\"} ", type, result);
	const char *p = page ? strstr(page, k) : NULL;
	return p ? atoll(p + strlen(k)) : -1;
}

struct mwant {
	int port;
	const char *type, *result;
	long long min;
};

/* until a counter of the error handlers reaches min (a scrape every 50 ms) */
static int metric_reached(void *arg)
{
	const struct mwant *w = arg;
	char *page = NULL;
	int code = tlib_http_get(w->port, "/metrics", &page);
	long long v = code == 200 ? metric(page, w->type, w->result) : -1;
	free(page);
	if (v < w->min) usleep(50000);
	return v >= w->min;
}

/* a mail's .txt line "Key: value" */
static const char *mail_line(const char *txt, const char *key, char *out, size_t len)
{
	char k[64];
	snprintf(k, sizeof k, "\n%s: ", key);
	const char *p = txt ? strstr(txt, k) : NULL;
	if (!p && txt && !strncmp(txt, k + 1, strlen(k) - 1)) p = txt - 1;
	if (!p) return "";
	p += strlen(k);
	snprintf(out, len, "%.*s", (int)strcspn(p, "\n"), p);
	return out;
}

static int mails_there(void *arg)
{
	char p[700];
	snprintf(p, sizeof p, "%s/mail-%03d.txt", dir_smtp, *(int *)arg);
	return access(p, F_OK) == 0;
}

/* tmpl with @HP@ the HTTP receiver's port, @SP@ the SMTP server's, @TP@ the SMTPS server's */
static void fill(char *out, size_t len, const char *tmpl, int hport, int sport, int tport)
{
	size_t o = 0;
	for (const char *p = tmpl; *p && o + 8 < len; p++) {
		if (!strncmp(p, "@HP@", 4) || !strncmp(p, "@SP@", 4) || !strncmp(p, "@TP@", 4)) {
			o += (size_t)snprintf(out + o, len - o, "%d", p[1] == 'H' ? hport : p[1] == 'S' ? sport : tport);
			p += 3;
		} else {
			out[o++] = *p;
		}
	}
	out[o] = 0;
}

/* a job: its command line, extra keys and props */
static const char *job_yaml(char *buf, size_t len, const char *name, const char *cron, int total, const char *cmd,
                            const char *extra, const char *props)
{
	snprintf(buf, len,
	         "  %s:\n"
	         "    type: script\n"
	         "    cron: \"%s\"\n"
	         "    shardingTotalCount: %d\n"
	         "%s"
	         "    props:\n"
	         "      script.command.line: \"%s\"\n"
	         "%s",
	         name, cron, total, extra, cmd, props);
	return buf;
}

int main(void)
{
	tlib_init(60);
	if (access(PY, X_OK) != 0) BAIL_OUT("%s is missing: tools/install-deps installs python3", PY);
	char sh[700];
	snprintf(sh, sizeof sh, "%s/fail.sh", tlib_tmpdir());
	tlib_write_file(sh, fail_sh, sizeof fail_sh - 1);
	chmod(sh, 0755);
	/* a self-signed certificate for the SMTPS server */
	char crt[700], key[700];
	snprintf(crt, sizeof crt, "%s/smtps.crt", tlib_tmpdir());
	snprintf(key, sizeof key, "%s/smtps.key", tlib_tmpdir());
	const char *oargv[] = { "/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
		                "-nodes", "-keyout", key, "-out", crt, "-days", "2", "-subj", "/CN=127.0.0.1", NULL };
	char *oo = NULL, *oe = NULL;
	int ost = tlib_run(oargv, &oo, &oe);
	if (!WIFEXITED(ost) || WEXITSTATUS(ost)) BAIL_OUT("openssl req failed: %s (tools/install-deps installs openssl)", oe);
	free(oo), free(oe);
	int hport = start_py("rx-http", http_py, dir_http, sizeof dir_http, NULL, NULL);
	int sport = start_py("rx-smtp", smtp_py, dir_smtp, sizeof dir_smtp, crt, key);
	char tpath[700];
	snprintf(tpath, sizeof tpath, "%s/tport", dir_smtp);
	char *tps = tsup_slurp(tpath);
	int tport = tps ? atoi(tps) : 0;
	free(tps);
	if (hport <= 0 || sport <= 0 || tport <= 0) BAIL_OUT("the receivers did not say their ports (is python3-aiosmtpd installed? "
	                                       "tools/install-deps)");

	/* ---- a config that cannot send is refused at load ---- */
	static struct tsup bad;
	tsup_config(&bad, "bad",
	            "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t79}\n"
	            "supervisor: {workers: 1, attachSocket: \"@SOCK@\"}\n"
	            "jobs:\n"
	            "  bad:\n"
	            "    type: script\n"
	            "    cron: \"0 0 * * * ?\"\n"
	            "    shardingTotalCount: 1\n"
	            "    jobErrorHandlerType: DINGTALK\n"
	            "    props: {script.command.line: /bin/true, dingtalk.secret: x}\n");
	const char *run_bad[] = { "--run", "bad", NULL };
	int st = tsup_run(&bad, run_bad, 10000);
	char want[1024];
	snprintf(want, sizeof want, "%s:9:5: jobs.bad.props.dingtalk.webhook: jobErrorHandlerType DINGTALK needs the "
	         "robot's webhook URL, https://oapi.dingtalk.com/robot/send?access_token=...; the key is missing", bad.conf);
	char *blog = tsup_log_text(&bad);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 2 && blog && strstr(blog, want), "DINGTALK without dingtalk.webhook: the "
	   "supervisor refuses the file (exit 2), naming the job, the key and what it needs");
	free(blog);
	char *out = NULL, *err = NULL;
	const char *vargv[] = { BUILT("tools/ejobctl"), "validate", bad.conf, NULL };
	st = tlib_run(vargv, &out, &err);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 2 && err && strstr(err, want), "  and so does ejobctl validate");
	free(out), free(err);

	/* ---- a: one fire of each job, 2-3 s from now ---- */
	static struct tsup a, h, r;
	char cron[64], yaml[32768], j[4096];
	int mport = tzk_free_port();
	tsup_cron_once(cron, sizeof cron, 3);
	int off = snprintf(yaml, sizeof yaml,
	                   "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t79}\n"
	                   "supervisor: {workers: 4, attachSocket: \"@SOCK@\", metrics: \"127.0.0.1:%d\",\n"
	                   "             history: {file: \"@DIR@/hist.jsonl\"}}\n"
	                   "jobs:\n", mport);
	char props[1024];
	const struct { const char *name; int total; const char *cmd, *extra, *props; } jobs[] = {
		{ "ding", 1, "", "    maxRetries: 1\n    jobErrorHandlerType: DINGTALK\n",
		  "      dingtalk.webhook: \"http://127.0.0.1:@HP@/ok/ding?access_token=abc\"\n"
		  "      dingtalk.keyword: \"<ejob> \"\n      dingtalk.secret: \"SEC0123456789abcdef\"\n" },
		{ "wechat", 1, "", "    jobErrorHandlerType: WECHAT\n",
		  "      wechat.webhook: \"http://127.0.0.1:@HP@/ok/wechat?key=k\"\n" },
		/* item 1 succeeds */
		{ "hook", 2, "/usr/bin/env OK1=1 ", "    jobErrorHandlerType: WEBHOOK\n",
		  "      webhook.url: \"http://127.0.0.1:@HP@/ok/hook\"\n" },
		{ "errcode", 1, "", "    jobErrorHandlerType: DINGTALK\n",
		  "      dingtalk.webhook: \"http://127.0.0.1:@HP@/errcode/x?access_token=abc\"\n" },
		{ "five", 1, "", "    jobErrorHandlerType: WECHAT\n", "      wechat.webhook: \"http://127.0.0.1:@HP@/500/x\"\n" },
		{ "ignore", 1, "", "    jobErrorHandlerType: IGNORE\n",
		  "      dingtalk.webhook: \"http://127.0.0.1:@HP@/ok/ignore\"\n" },
		{ "log", 1, "", "    jobErrorHandlerType: LOG\n", "      dingtalk.webhook: \"http://127.0.0.1:@HP@/ok/log\"\n" },
		{ "throw", 1, "", "    jobErrorHandlerType: THROW\n",
		  "      dingtalk.webhook: \"http://127.0.0.1:@HP@/ok/throw\"\n" },
		{ "okjob", 1, "/usr/bin/env OK=1 ", "    jobErrorHandlerType: DINGTALK\n",
		  "      dingtalk.webhook: \"http://127.0.0.1:@HP@/ok/okjob\"\n" },
		{ "mail", 1, "", "    jobErrorHandlerType: EMAIL\n",
		  "      email.host: 127.0.0.1\n      email.port: \"@SP@\"\n      email.useSsl: \"false\"\n"
		  "      email.username: ejob\n      email.password: s3cret\n"
		  "      email.from: \"ejob <ejob@example.test>\"\n"
		  "      email.to: \"ops@example.test, Dev Team <dev@example.test>\"\n"
		  "      email.cc: \"cc@example.test\"\n      email.bcc: \"hidden@example.test\"\n" },
		{ "mail2", 1, "", "    jobErrorHandlerType: EMAIL\n",
		  "      email.host: 127.0.0.1\n      email.port: \"@SP@\"\n      email.useSsl: \"false\"\n"
		  "      email.from: \"alarm@example.test\"\n      email.to: \"ops@example.test\"\n"
		  "      email.subject: \"ejob: \xe4\xbd\x9c\xe4\xb8\x9a\xe5\xa4\xb1\xe8\xb4\xa5 mail2\"\n" },
		/* SMTPS (useSsl's default) to a server whose certificate is trusted by ssl.trust, and one
		 * whose is not */
		{ "mail3", 1, "", "    jobErrorHandlerType: EMAIL\n",
		  "      email.host: 127.0.0.1\n      email.port: \"@TP@\"\n      email.ssl.trust: \"other 127.0.0.1\"\n"
		  "      email.username: ejob\n      email.password: s3cret\n"
		  "      email.from: \"tls@example.test\"\n      email.to: \"ops@example.test\"\n" },
		{ "mail4", 1, "", "    jobErrorHandlerType: EMAIL\n",
		  "      email.host: 127.0.0.1\n      email.port: \"@TP@\"\n"
		  "      email.from: \"untrusted@example.test\"\n      email.to: \"ops@example.test\"\n" },
	};
	for (size_t k = 0; k < sizeof jobs / sizeof jobs[0]; k++) {
		char cmd[800];
		fill(props, sizeof props, jobs[k].props, hport, sport, tport);
		snprintf(cmd, sizeof cmd, "%s%s", jobs[k].cmd, sh);
		job_yaml(j, sizeof j, jobs[k].name, cron, jobs[k].total, cmd, jobs[k].extra, props);
		off += snprintf(yaml + off, sizeof yaml - (size_t)off, "%s", j);
	}
	tsup_config(&a, "a", yaml);

	/* h: a job failing every second whose WEBHOOK never answers (its own fail.sh: its runs file),
	 * and one fire of 400 native items that fail at once, to the same receiver: more messages
	 * than the queue holds */
	snprintf(props, sizeof props, "      webhook.url: \"http://127.0.0.1:%d/hang/tick\"\n"
	         "      webhook.readTimeoutMilliseconds: \"1500\"\n", hport);
	job_yaml(j, sizeof j, "tick", "* * * * * ?", 1, "@DIR@/tick.sh", "    jobErrorHandlerType: WEBHOOK\n", props);
	int hmport = tzk_free_port();
	char flood_cron[64];
	tsup_cron_once(flood_cron, sizeof flood_cron, 2);
	snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t79}\n"
	         "supervisor: {workers: 2, attachSocket: \"@SOCK@\", metrics: \"127.0.0.1:%d\"}\n"
	         "jobs:\n%s"
	         "  flood:\n"
	         "    type: native\n"
	         "    cron: \"%s\"\n"
	         "    shardingTotalCount: 400\n"
	         "    jobErrorHandlerType: WEBHOOK\n"
	         "    props: {native.library: t/native/libfail.so, native.symbol: fail_item,\n"
	         "            webhook.url: \"http://127.0.0.1:%d/hang/flood\"}\n", hmport, j, flood_cron, hport);
	tsup_config(&h, "h", yaml);
	char tsh[700], truns[720];
	snprintf(tsh, sizeof tsh, "%s/tick.sh", h.dir);
	tlib_write_file(tsh, fail_sh, sizeof fail_sh - 1);
	chmod(tsh, 0755);
	snprintf(truns, sizeof truns, "%s.runs", tsh);

	const char *standalone[] = { "--standalone", NULL };
	uint64_t t0 = tlib_now_ms();
	if (tsup_start(&a, standalone) <= 0 || tsup_start(&h, standalone) <= 0) BAIL_OUT("cannot start the supervisors");

	/* ---- z: under ZooKeeper the config node is the config in force ---- */
	static struct tzkup u;
	static struct tsup z;
	tzkup_start(&u, 200, "t79", 4000);
	snprintf(props, sizeof props, "      webhook.url: \"http://127.0.0.1:%d/ok/zkfile\"\n", hport);
	job_yaml(j, sizeof j, "zk", "0 0 0 1 1 ? 2099", 1, sh, "", props);
	tzkup_config(&u, &z, "z", "workers: 1", j);
	tzkup_run(&u, &z, "127.0.0.2");
	ok(tzkup_wait_registered(&u, "zk", z.id, 0, 15000), "z registers its job (the file's handler: LOG)");
	char node[1024];
	snprintf(node, sizeof node, "cron: 0 0 0 1 1 ? 2099\ndescription: ''\njobErrorHandlerType: WEBHOOK\njobName: zk\n"
	         "jobParameter: ''\nprops:\n  script.command.line: %s\n  webhook.url: http://127.0.0.1:%d/ok/zknode\n"
	         "  ejob.type: script\nshardingItemParameters: ''\nshardingTotalCount: 1\n", sh, hport);
	is_int(tzk_set(u.zh, tzkup_path(&u, "zk", "config"), node), ZOK, "an operator sets WEBHOOK in its config node");
	ok(tsup_wait_log(&z, "job zk: the config node /t79/zk/config changed", 1, 10000), "  which z takes");
	const char *targv[] = { BUILT("tools/ejobctl"), "trigger", "zk", "--zk", u.connect, "--namespace", "t79", NULL };
	st = tlib_run(targv, &out, &err);
	free(out), free(err);
	struct want wz[] = { { "/ok/zknode", 1 }, { NULL, 0 } };
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && tlib_wait_for(reqs_there, wz, 15000) && !count_path("/ok/zkfile"),
	   "  a triggered fire's failed item: the message goes where the node says, not the file");

	/* ---- a's messages ---- */
	struct want w[] = { { "/ok/ding", 1 }, { "/ok/wechat", 1 }, { "/ok/hook", 1 }, { "/errcode/", 1 }, { "/500/", 3 },
		            { NULL, 0 } };
	int got = tlib_wait_for(reqs_there, w, 15000);
	ok(got, "the receiver got DINGTALK's, WECHAT's and WEBHOOK's messages, the errcode one and 3 attempts at the "
	   "500 (%.1f s after the start)", (double)(tlib_now_ms() - t0) / 1000);
	int three = 3;
	ok(tlib_wait_for(mails_there, &three, 10000), "the SMTP servers got three mails");

	char hist[700];
	snprintf(hist, sizeof hist, "%s/hist.jsonl", a.dir);
	char *dl1 = tsup_history_line(hist, "ding", 0, 1), *dl2 = tsup_history_line(hist, "ding", 0, 2);
	char text[4096], body[16384], js[8192];
	ok(dl1 && dl2, "ding's item failed twice (maxRetries 1): two history records");
	is_int(count_path("/ok/ding"), 1, "DINGTALK: one message for the item, after its retry");
	const struct req *q = find_path("/ok/ding");
	if (dl2 && q) {
		message_of(dl2, "ding", 0, "failed (exit 3)", out_text, text, sizeof text);
		char full[4200];
		snprintf(full, sizeof full, "<ejob> %s", text);
		jstr(full, 1, js, sizeof js);
		snprintf(body, sizeof body, "{\"msgtype\":\"text\",\"text\":{\"content\":%s}}", js);
		is_str(q->body, body, "  its body: ElasticJob's JSON (Gson's escapes), the keyword, then the sentence and "
		       "the cause (attempt 2)");
		ok(!strcmp(q->method, "POST") && strstr(q->head, "\nContent-Type: application/json; charset=utf-8\n"),
		   "  a POST of application/json; charset=utf-8");
		char ts[32] = "", sg[128] = "", mine[128];
		const char *tp = strstr(q->path, "&timestamp="), *sp = strstr(q->path, "&sign=");
		if (tp) snprintf(ts, sizeof ts, "%.*s", (int)strcspn(tp + 11, "&"), tp + 11);
		if (sp) snprintf(sg, sizeof sg, "%s", sp + 6);
		sign_of("SEC0123456789abcdef", ts, mine, sizeof mine);
		ok(!strncmp(q->path, "/ok/ding?access_token=abc&timestamp=", 36) && llabs(atoll(ts) - q->at) < 5000,
		   "  the URL: the webhook, &timestamp= (ms, %lld from its arrival)", atoll(ts) - q->at);
		is_str(sg, mine, "  and &sign=, the URL-encoded base64 of HmacSHA256(secret, timestamp\\nsecret)");
	}

	q = find_path("/ok/wechat");
	char *wl = tsup_history_line(hist, "wechat", 0, 1);
	if (q && wl) {
		message_of(wl, "wechat", 0, "failed (exit 3)", out_text, text, sizeof text);
		jstr(text, 1, js, sizeof js);
		snprintf(body, sizeof body, "{\"msgtype\":\"text\",\"text\":{\"content\":%s}}", js);
		is_str(q->body, body, "WECHAT: its body, ElasticJob's JSON (no keyword, no signature)");
		is_str(q->path, "/ok/wechat?key=k", "  to its webhook as written");
	} else {
		ok(0, "WECHAT: a request and a history record");
	}

	q = find_path("/ok/hook");
	char *hl = tsup_history_line(hist, "hook", 0, 1);
	is_int(count_path("/ok/hook"), 1, "WEBHOOK: one message, for item 0 (item 1 succeeded)");
	if (q && hl) {
		message_of(hl, "hook", 0, "failed (exit 3)", out_text, text, sizeof text);
		jstr(text, 0, js, sizeof js);
		snprintf(body, sizeof body, "%.*s,\"message\":%s}", (int)strlen(hl) - 1, hl, js);
		is_str(q->body, body, "  its body: the history file's record of the attempt, and the message");
	} else {
		ok(0, "WEBHOOK: a request and a history record");
	}

	is_int(count_path("/errcode/"), 1, "an answer with errcode 310000: not tried again");
	is_int(count_path("/500/"), 3, "an HTTP 500: 3 attempts");
	char la[1024];
	snprintf(la, sizeof la, "job errcode item 0: the DINGTALK message was not sent: POST http://127.0.0.1:%d/errcode/x: "
	         "errcode 310000: keywords not in content (1 attempt)", hport);
	ok(tsup_log_count(&a, la) == 1, "  the errcode is logged with its errmsg");
	snprintf(la, sizeof la, "job five item 0: the WECHAT message was not sent: POST http://127.0.0.1:%d/500/x: "
	         "unexpected http response status: 500 (3 attempts)", hport);
	ok(tsup_log_count(&a, la) == 1, "  the 500 with its status");
	int quiet = count_path("/ok/ignore") + count_path("/ok/log") + count_path("/ok/throw") + count_path("/ok/okjob");
	is_int(quiet, 0, "IGNORE, LOG, THROW (with webhooks in their props) and a job that succeeds send nothing");
	ok(tsup_log_count(&a, " WARN ") >= 1 && tsup_log_count(&a, "jobs.throw.jobErrorHandlerType: THROW has no "
	   "meaning outside Java (ElasticJob rethrows the exception to its caller): ejob treats it as LOG, a failed item "
	   "is logged\n") == 1, "THROW: the start warns that it is taken as LOG");
	ok(tsup_log_count(&a, "job ignore item 0 attempt 1: failed (exit 3)") == 1, "IGNORE: the item's outcome is "
	   "still logged");

	char *page = NULL;
	int code = tlib_http_get(mport, "/metrics", &page);
	ok(code == 200 && metric(page, "DINGTALK", "sent") == 1 && metric(page, "DINGTALK", "failed") == 1 &&
	   metric(page, "WECHAT", "sent") == 1 && metric(page, "WECHAT", "failed") == 1 &&
	   metric(page, "WEBHOOK", "sent") == 1 && metric(page, "EMAIL", "sent") == 3 &&
	   metric(page, "EMAIL", "failed") == 1 && metric(page, "DINGTALK", "dropped") == 0,
	   "ejob_error_handler_messages_total: DINGTALK sent 1 failed 1, WECHAT sent 1 failed 1, WEBHOOK sent 1, "
	   "EMAIL sent 3 failed 1");
	free(page);

	/* ---- the mails ---- */
	char p[700], v[512];
	char *m1 = NULL, *m2 = NULL, *m3 = NULL, *h1 = NULL, *e1 = NULL;
	for (int k = 1; k <= 3; k++) {
		snprintf(p, sizeof p, "%s/mail-%03d.txt", dir_smtp, k);
		char *t = tsup_slurp(p);
		if (t && strstr(t, "mail_from: ejob@example.test")) {
			m1 = t;
			snprintf(p, sizeof p, "%s/mail-%03d.html", dir_smtp, k);
			h1 = tsup_slurp(p);
			snprintf(p, sizeof p, "%s/mail-%03d.eml", dir_smtp, k);
			e1 = tsup_slurp(p);
		} else if (t && strstr(t, "mail_from: tls@example.test")) {
			m3 = t;
		} else {
			m2 = t;
		}
	}
	char *ml = tsup_history_line(hist, "mail", 0, 1);
	ok(m1 && m2 && h1 && e1 && ml, "a mail from each EMAIL job");
	if (m1 && h1 && e1 && ml) {
		is_str(mail_line(m1, "login", v, sizeof v), "ejob", "EMAIL: logged in as email.username");
		is_str(mail_line(m1, "rcpt_tos", v, sizeof v), "ops@example.test,dev@example.test,cc@example.test,"
		       "hidden@example.test", "  to every address of to, cc and bcc");
		is_str(mail_line(m1, "From", v, sizeof v), "ejob <ejob@example.test>", "  From");
		is_str(mail_line(m1, "To", v, sizeof v), "ops@example.test, Dev Team <dev@example.test>", "  To");
		is_str(mail_line(m1, "Cc", v, sizeof v), "cc@example.test", "  Cc");
		ok(!strcmp(mail_line(m1, "Bcc", v, sizeof v), "-") && !strstr(e1, "Bcc") && !strstr(e1, "hidden"),
		   "  no Bcc header: its address is only a recipient");
		is_str(mail_line(m1, "Subject", v, sizeof v), "ElasticJob error message", "  Subject: ElasticJob's default");
		ok(!strcmp(mail_line(m1, "MIME-Version", v, sizeof v), "1.0") && !strcmp(mail_line(m1, "Date", v, sizeof v), "yes")
		   && !strcmp(mail_line(m1, "type", v, sizeof v), "multipart/mixed") &&
		   !strcmp(mail_line(m1, "parts", v, sizeof v), "1") &&
		   !strcmp(mail_line(m1, "part", v, sizeof v), "text/html; charset=utf-8"),
		   "  a Date, MIME-Version 1.0, multipart/mixed with one text/html; charset=utf-8 part");
		message_of(ml, "mail", 0, "failed (exit 3)", out_text, text, sizeof text);
		char html[4200] = "<pre>";
		size_t o = 5;
		for (const char *s = text; *s && o + 8 < sizeof html; s++)
			o += (size_t)snprintf(html + o, sizeof html - o, "%s", *s == '<' ? "&lt;" : *s == '>' ? "&gt;" : *s == '&' ?
			                      "&amp;" : (char[]){ *s, 0 });
		snprintf(html + o, sizeof html - o, "</pre>");
		is_str(h1, html, "  its text: ElasticJob's sentence and the cause, HTML-escaped, in <pre>");
	}
	if (m2) {
		is_str(mail_line(m2, "login", v, sizeof v), "-", "EMAIL without username and password: no login");
		is_str(mail_line(m2, "Subject", v, sizeof v), "ejob: \xe4\xbd\x9c\xe4\xb8\x9a\xe5\xa4\xb1\xe8\xb4\xa5 mail2",
		       "  a Subject that is not ASCII arrives as written (RFC 2047)");
		is_str(mail_line(m2, "Cc", v, sizeof v), "-", "  no Cc when email.cc is unset");
	}

	ok(m3 && !strcmp(mail_line(m3, "login", v, sizeof v), "ejob"), "useSsl (the default): SMTPS, here to a server "
	   "whose certificate email.ssl.trust names, with the login");
	snprintf(la, sizeof la, "job mail4 item 0: the EMAIL message was not sent: 127.0.0.1:%d: SSL certificate problem: "
	         "self-signed certificate (1 attempt)", tport);
	ok(tsup_log_count(&a, la) == 1, "  a certificate that is not trusted: not sent, logged, not tried again");

	/* ---- h: fires stay on their seconds while the webhook hangs ---- */
	tsup_wait_lines(truns, "", 5, 15000);
	struct mwant mw = { hmport, "WEBHOOK", "dropped", 400 - 256 };
	ok(tlib_wait_for(metric_reached, &mw, 8000), "a fire of 400 failing items while the messages are stuck: those "
	   "past the queue's 256 are dropped and counted");
	char *hlog = tsup_log_text(&h);
	int flood_lines = 0;
	for (const char *q2 = hlog; q2 && (q2 = strstr(q2, "ERROR job flood item ")); q2++)
		flood_lines += !strncmp(strchr(q2, ':'), ": the WEBHOOK message is dropped: 256 messages wait", 51);
	/* a slot frees only when the message in flight times out (1.5 s for tick's, more for flood's):
	 * wait for it rather than look once, which a loaded machine lost */
	int again = tsup_wait_log(&h, "WARN error handlers: messages are queued again; ", 1, 15000);
	ok(flood_lines == 1 && again,
	   "  and logged once for the episode, not once each; then that the queue took one again");
	free(hlog);
	uint64_t ts0 = tlib_now_ms();
	st = tsup_stop(&h, SIGTERM, 15000);
	uint64_t stop_ms = tlib_now_ms() - ts0;
	char *tr = tsup_slurp(truns);
	int n = 0, late = 0, gaps = 0;
	long long prev = 0, worst = 0;
	for (char *l = tr ? strtok(tr, "\n") : NULL; l; l = strtok(NULL, "\n")) {
		long long fire, ns;
		int item;
		if (sscanf(l, "%lld %d %lld", &fire, &item, &ns) != 3) continue;
		long long lag = ns / 1000000 - fire;
		if (lag > worst) worst = lag;
		late += lag > 500;
		gaps += prev && fire != prev + 1000;
		prev = fire;
		n++;
	}
	free(tr);
	load_reqs();
	ok(n >= 5 && !late && !gaps, "a webhook that never answers: %d fires, one every second, each item started at "
	   "most %lld ms after its fire time", n, worst);
	ok(count_path("/hang/") >= 2, "  while its messages wait for it in turn (%d sent into it)", count_path("/hang/"));
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && stop_ms < 8000, "  and the supervisor still stops, within %d s + "
	   "1 (%.1f s)", 5, (double)stop_ms / 1000);

	/* ---- --run: the message goes before the exit ---- */
	snprintf(props, sizeof props, "      dingtalk.webhook: \"http://127.0.0.1:%d/ok/once\"\n", hport);
	job_yaml(j, sizeof j, "once", "0 0 0 1 1 ? 2099", 1, sh, "    jobErrorHandlerType: DINGTALK\n", props);
	snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t79}\n"
	         "supervisor: {workers: 1, attachSocket: \"@SOCK@\"}\n"
	         "jobs:\n%s", j);
	tsup_config(&r, "r", yaml);
	const char *run_once[] = { "--run", "once", NULL };
	st = tsup_run(&r, run_once, 15000);
	load_reqs();
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 1 && count_path("/ok/once") == 1, "--run of a failing item: exit 1, and "
	   "its DINGTALK message was sent before (status 0x%x)", st);

	st = tsup_stop(&a, SIGTERM, 15000);
	int stz = tsup_stop(&z, SIGTERM, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && WIFEXITED(stz) && WEXITSTATUS(stz) == 0, "the supervisors stop cleanly");
	tzkup_end(&u);
	free(dl1), free(dl2), free(wl), free(hl), free(ml), free(m1), free(m2), free(m3), free(h1), free(e1);
	load_reqs();
	note("%.1f s in all", (double)(tlib_now_ms() - t0) / 1000);
	return done_testing();
}
