/* t/lib/tserve.c: see tserve.h */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>

#include "t/lib/tbuild.h"
#include "t/lib/tlib.h"
#include "t/lib/tserve.h"
#include "t/lib/tsup.h"
#include "t/tap.h"

#define EJOBCTL BUILT("tools/ejobctl")

static int listening(void *arg)
{
	struct tserve *s = arg;
	char *t = tsup_slurp(s->out);
	const char *k = "listening on http://127.0.0.1:", *ks = "listening on https://127.0.0.1:";
	const char *p = t ? strstr(t, k) : NULL, *ps = t ? strstr(t, ks) : NULL;
	if (p) s->port = atoi(p + strlen(k));
	if (ps) s->port = atoi(ps + strlen(ks)), s->tls = 1;
	free(t);
	return s->port > 0;
}

void tserve_start(struct tserve *s, const char *name, const char *const *args)
{
	static int curl_ready;
	if (!curl_ready++) curl_global_init(CURL_GLOBAL_DEFAULT);
	memset(s, 0, sizeof *s);
	snprintf(s->out, sizeof s->out, "%s/%s.out", tlib_tmpdir(), name);
	const char *argv[40] = { EJOBCTL, "serve", "--listen", "127.0.0.1:0" };
	int n = 4;
	for (int i = 0; args && args[i] && n < 39; i++) argv[n++] = args[i];
	argv[n] = NULL;
	pid_t p = tlib_fork();
	if (p < 0) BAIL_OUT("fork failed");
	if (p == 0) {
		if (!freopen(s->out, "w", stdout)) _exit(126);
		dup2(1, 2);
		execv(EJOBCTL, (char *const *)argv);
		_exit(127);
	}
	s->pid = p;
	if (!tlib_wait_for(listening, s, 10000)) {
		char *t = tsup_slurp(s->out);
		diag("%s", t ? t : "");
		free(t);
		BAIL_OUT("ejobctl serve does not listen");
	}
}

void tserve_stop(struct tserve *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		int st;
		for (int i = 0; i < 500 && waitpid(s->pid, &st, WNOHANG) == 0; i++) usleep(10000);
		if (waitpid(s->pid, &st, WNOHANG) == 0) kill(s->pid, SIGKILL), waitpid(s->pid, &st, 0);
		tlib_untrack(s->pid);
	}
	s->pid = 0;
}

struct buf {
	char *p;
	size_t n;
};

static size_t collect(char *d, size_t sz, size_t nm, void *arg)
{
	struct buf *b = arg;
	char *np = realloc(b->p, b->n + sz * nm + 1);
	if (!np) return 0;
	memcpy(np + b->n, d, sz * nm);
	b->n += sz * nm;
	np[b->n] = 0;
	b->p = np;
	return sz * nm;
}

static size_t header(char *d, size_t sz, size_t nm, void *arg)
{
	struct tserve *s = arg;
	size_t n = sz * nm;
	if (n > 12 && !strncasecmp(d, "Set-Cookie: ", 12)) {
		snprintf(s->set_cookie, sizeof s->set_cookie, "%.*s", (int)(n - 12), d + 12);
		s->set_cookie[strcspn(s->set_cookie, "\r\n")] = 0;
		snprintf(s->cookie, sizeof s->cookie, "%.*s", (int)(n - 12), d + 12);
		s->cookie[strcspn(s->cookie, ";\r\n")] = 0;
	}
	if (n > 6 && !strncasecmp(d, "ETag: ", 6)) {
		snprintf(s->etag, sizeof s->etag, "%.*s", (int)(n - 6), d + 6);
		s->etag[strcspn(s->etag, "\r\n")] = 0;
	}
	if (n >= 18 && !strncasecmp(d, "X-Ejob-From: model", 18)) s->from_model = 1;
	return n;
}

long tserve_http(struct tserve *s, const char *method, const char *path, const char *userpass, const char *hdr,
                 const char *body, char **out)
{
	CURL *h = curl_easy_init();
	char url[2048];
	snprintf(url, sizeof url, "%s://127.0.0.1:%d%s", s->tls ? "https" : "http", s->port, path);
	struct buf b = { 0 };
	s->etag[0] = 0;
	s->from_model = 0;
	if (s->cacert) curl_easy_setopt(h, CURLOPT_CAINFO, s->cacert);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, s);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
	if (userpass && !strcmp(userpass, "cookie")) {
		curl_easy_setopt(h, CURLOPT_COOKIE, s->cookie);
	} else if (userpass) {
		curl_easy_setopt(h, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
		curl_easy_setopt(h, CURLOPT_USERPWD, userpass);
	}
	struct curl_slist *hd = curl_slist_append(NULL, "Expect:");
	if (hdr) hd = curl_slist_append(hd, hdr);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
	if (body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	long code = -1;
	if (curl_easy_perform(h) == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_slist_free_all(hd);
	curl_easy_cleanup(h);
	if (out) *out = b.p ? b.p : strdup("");
	else free(b.p);
	return code;
}

char *tserve_hash(const char *pw)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "printf '%%s\\n' '%s' | %s serve --hash-password", pw, EJOBCTL);
	FILE *p = popen(cmd, "r");
	char line[512] = "";
	if (!p || !fgets(line, sizeof line, p)) BAIL_OUT("ejobctl serve --hash-password gave nothing");
	pclose(p);
	line[strcspn(line, "\n")] = 0;
	return strdup(line);
}
