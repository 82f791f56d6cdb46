/* t/lib/oracle.c: run a Java oracle (t/quartz/CronOracle.java, t/java/ShardOracle.java) once over
 * a batch of questions. */
#include "t/lib/oracle.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ORACLE_TIMEOUT_S 150 /* EJOB_ORACLE_TIMEOUT (seconds) overrides, for soaks */

/* tzdata 2025b corrected Iran's 1978 change; Java 17.0.15 has 2025a. */
static const struct {
	const char *zone;
	long long before;
} tz_differs[] = {
	{ "Asia/Tehran", 283996800 /* 1979-01-01 */ },
};

int oracle_tz_differs(const char *zone, long long t)
{
	for (size_t i = 0; i < sizeof tz_differs / sizeof tz_differs[0]; i++)
		if (!strcmp(zone, tz_differs[i].zone) && t < tz_differs[i].before)
			return 1;
	return 0;
}

char *oracle_hex(const char *s)
{
	size_t n = strlen(s);
	char *h = malloc(2 * n + 1);
	if (!h)
		return NULL;
	for (size_t i = 0; i < n; i++)
		snprintf(h + 2 * i, 3, "%02x", (unsigned char)s[i]);
	h[2 * n] = '\0';
	return h;
}

void oracle_free(char **a, size_t n)
{
	if (!a)
		return;
	for (size_t i = 0; i < n; i++)
		free(a[i]);
	free(a);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	while (buf) {
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (n < cap)
			break;
		char *nb = realloc(buf, 2 * cap + 1);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		*len = n;
	}
	return buf;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

char **oracle_ask(char *const *q, size_t n, char *why, size_t whylen)
{
	if (access(ORACLE_JAR, R_OK) != 0) {
		snprintf(why, whylen, "Quartz is missing (%s): install libquartz2-java, "
		         "e.g. with tools/install-deps", ORACLE_JAR);
		errno = EINVAL;
		return NULL;
	}
	return oracle_java(ORACLE_SRC, ORACLE_JAR, q, n, why, whylen);
}

char **oracle_java(const char *src, const char *classpath, char *const *q, size_t n, char *why, size_t whylen)
{
	char dir[] = "/tmp/ejob-oracle-XXXXXX", qp[64], ap[64], ep[64];
	char **answers = NULL;
	int java_missing = 0;
	if (access(src, R_OK) != 0) {
		snprintf(why, whylen, "%s not found: run the tests from the repository root", src);
		errno = EINVAL;
		return NULL;
	}
	if (!mkdtemp(dir)) {
		snprintf(why, whylen, "mkdtemp: %s", strerror(errno));
		return NULL;
	}
	snprintf(qp, sizeof qp, "%s/q", dir);
	snprintf(ap, sizeof ap, "%s/a", dir);
	snprintf(ep, sizeof ep, "%s/e", dir);
	FILE *f = fopen(qp, "w");
	if (!f) {
		snprintf(why, whylen, "%s: %s", qp, strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s\n", q[i]);
	if (fclose(f) != 0) {
		snprintf(why, whylen, "writing %s: %s", qp, strerror(errno));
		goto out;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, whylen, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		int in = open(qp, O_RDONLY), out = open(ap, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int err = open(ep, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(126);
		if (classpath)
			execlp("java", "java", "-Xss4m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
			       "-cp", classpath, src, (char *)NULL);
		else
			execlp("java", "java", "-Xss4m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
			       src, (char *)NULL);
		_exit(127);
	}
	int limit = getenv("EJOB_ORACLE_TIMEOUT") ? atoi(getenv("EJOB_ORACLE_TIMEOUT")) : 0;
	if (limit <= 0)
		limit = ORACLE_TIMEOUT_S;
	double deadline = now_s() + limit;
	int status;
	for (;;) { /* bounded polling for the JVM */
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			snprintf(why, whylen, "waitpid: %s", strerror(errno));
			goto out;
		}
		if (now_s() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			snprintf(why, whylen, "the Java oracle took more than %d s", limit);
			goto out;
		}
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	size_t alen = 0, elen = 0;
	char *err = slurp(ep, &elen);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
			snprintf(why, whylen, "java not found on PATH: install a Java 17 runtime "
			         "(default-jre-headless, e.g. with tools/install-deps)");
			java_missing = 1;
		} else if (err && strstr(err, "jdk.compiler"))
			snprintf(why, whylen, "this java cannot run a source file (no jdk.compiler "
			         "module): install openjdk-17-jdk-headless");
		else
			snprintf(why, whylen, "the Java oracle failed (status %d): %.400s", status,
			         err ? err : "");
		free(err);
		goto out;
	}
	free(err);
	char *a = slurp(ap, &alen);
	if (!a) {
		snprintf(why, whylen, "%s: %s", ap, strerror(errno));
		goto out;
	}
	answers = calloc(n ? n : 1, sizeof *answers);
	size_t k = 0;
	for (char *line = a, *nl; answers && k < n && *line; line = nl + 1, k++) {
		nl = strchr(line, '\n');
		if (!nl)
			break;
		*nl = '\0';
		answers[k] = strdup(line);
	}
	free(a);
	if (k != n) {
		snprintf(why, whylen, "the Java oracle gave %zu answers to %zu questions", k, n);
		oracle_free(answers, k);
		answers = NULL;
	}
out:
	if (getenv("EJOB_ORACLE_KEEP")) { /* debugging: keep the questions and answers */
		fprintf(stderr, "# oracle files kept in %s\n", dir);
	} else {
		unlink(qp);
		unlink(ap);
		unlink(ep);
		rmdir(dir);
	}
	if (!answers)
		errno = java_missing ? ENOENT : EINVAL;
	return answers;
}
