/* t/32-ejobctl-cron.c: `tools/ejobctl cron`, the real binary, output checked exactly. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "t/lib/tbuild.h"
#include "t/tap.h"

#define EJOBCTL BUILT("tools/ejobctl")

struct run {
	int status; /* exit code, or 128 + signal */
	char out[8192], err[8192];
};

static void slurp(int fd, char *buf, size_t len)
{
	size_t n = 0;
	lseek(fd, 0, SEEK_SET);
	for (;;) {
		ssize_t r = read(fd, buf + n, len - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
}

/* Run ejobctl with argv (NULL-terminated) and TZ (NULL = unset). */
static void run(struct run *r, const char *tz, const char *const *argv)
{
	char outp[] = "/tmp/ejob-ctl-out-XXXXXX", errp[] = "/tmp/ejob-ctl-err-XXXXXX";
	int o = mkstemp(outp), e = mkstemp(errp);
	if (o < 0 || e < 0)
		BAIL_OUT("mkstemp: %s", strerror(errno));
	unlink(outp);
	unlink(errp);
	pid_t pid = fork();
	if (pid < 0)
		BAIL_OUT("fork: %s", strerror(errno));
	if (pid == 0) {
		if (tz)
			setenv("TZ", tz, 1);
		else
			unsetenv("TZ");
		dup2(o, 1);
		dup2(e, 2);
		execv(EJOBCTL, (char *const *)argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	slurp(o, r->out, sizeof r->out);
	slurp(e, r->err, sizeof r->err);
	close(o);
	close(e);
}

#define RUN(r, tz, ...)                                                                        \
	do {                                                                                   \
		const char *const argv_[] = { EJOBCTL, __VA_ARGS__, NULL };                    \
		run((r), (tz), argv_);                                                         \
	} while (0)

int main(void)
{
	static struct run r;
	if (access(EJOBCTL, X_OK) != 0)
		BAIL_OUT("%s not built: run make", EJOBCTL);

	RUN(&r, NULL, "cron", "0 30 2 * * ?", "--tz", "America/New_York", "--from",
	    "2025-03-08T00:00:00", "-n", "3");
	is_int(r.status, 0, "exit 0");
	is_str(r.out, "2025-03-08T02:30:00-05:00\n2025-03-10T02:30:00-04:00\n"
	              "2025-03-11T02:30:00-04:00\n",
	       "02:30 in New York skips the spring-forward day, offsets follow DST");
	is_str(r.err, "", "nothing on stderr");

	RUN(&r, NULL, "cron", "0 30 2 * * ?", "--tz=America/New_York", "--from=1741392000", "-n", "2",
	    "--epoch");
	is_str(r.out, "1741419000\n1741588200\n", "--epoch, --from epoch seconds, --opt=value");

	RUN(&r, NULL, "cron", "0 0/20 1 * * ?", "--tz", "America/New_York", "--from",
	    "2025-11-02T04:50:00Z", "-n", "4");
	is_str(r.out, "2025-11-02T01:00:00-05:00\n2025-11-02T01:20:00-05:00\n"
	              "2025-11-02T01:40:00-05:00\n2025-11-03T01:00:00-05:00\n",
	       "--from with Z; the repeated hour fires once, in EST");

	RUN(&r, NULL, "--tz", "Europe/London", "cron", "x");
	is_int(r.status, 2, "options before the command are not ejobctl's: exit 2");

	RUN(&r, "Asia/Tokyo", "cron", "0 0 9 ? * MON", "--from", "2026-01-01T00:00:00", "-n", "2");
	is_str(r.out, "2026-01-05T09:00:00+09:00\n2026-01-12T09:00:00+09:00\n",
	       "no --tz: the TZ variable's zone (here Asia/Tokyo)");

	RUN(&r, NULL, "cron", "0 0 0 1 * ?", "--tz", "UTC", "--from", "2026-01-15T00:00:00Z");
	is_str(r.out, "2026-02-01T00:00:00+00:00\n2026-03-01T00:00:00+00:00\n"
	              "2026-04-01T00:00:00+00:00\n2026-05-01T00:00:00+00:00\n"
	              "2026-06-01T00:00:00+00:00\n2026-07-01T00:00:00+00:00\n"
	              "2026-08-01T00:00:00+00:00\n2026-09-01T00:00:00+00:00\n"
	              "2026-10-01T00:00:00+00:00\n2026-11-01T00:00:00+00:00\n",
	       "ten fire times by default");

	RUN(&r, NULL, "cron", "0 0 0 30 2 ?", "--tz", "UTC", "--from", "2026-01-01T00:00:00Z");
	is_int(r.status, 0, "never: exit 0");
	is_str(r.out, "no fire time after 2026-01-01T00:00:00+00:00: the expression never fires again\n",
	       "never: one clear line");

	RUN(&r, NULL, "cron", "0 0 0 1 1 ? 2030-2031", "--tz", "Europe/Paris", "--from",
	    "2026-01-01T00:00:00", "-n", "5");
	is_str(r.out, "2030-01-01T00:00:00+01:00\n2031-01-01T00:00:00+01:00\n"
	              "no more fire times: the expression never fires again\n",
	       "the last fire times, then the never line");

	RUN(&r, NULL, "cron", "0 0/5 24 * * ?", "--tz", "UTC", "--from", "0");
	is_int(r.status, 2, "bad expression: exit 2");
	is_str(r.out, "", "bad expression: nothing on stdout");
	is_str(r.err, "ejobctl cron: bad expression\n"
	              "  0 0/5 24 * * ?\n"
	              "        ^\n"
	              "column 7: hours: value 24 out of range 0-23\n",
	       "bad expression: echoed, a caret under column 7, the message");

	RUN(&r, NULL, "cron", "0\t0 12 * * ? ABC", "--tz", "UTC");
	is_str(r.err, "ejobctl cron: bad expression\n"
	              "  0\t0 12 * * ? ABC\n"
	              "   \t           ^\n"
	              "column 14: year: names are not allowed here ('ABC')\n",
	       "a tab in the expression keeps the caret in line");

	RUN(&r, NULL, "cron", "0 0 12 ? * ſun", "--tz", "UTC", "--from", "2026-01-01T00:00:00Z",
	    "-n", "1");
	is_str(r.out, "2026-01-04T12:00:00+00:00\n", "Quartz reads 'ſun' as SUN; so do we");

	RUN(&r, NULL, "cron", "0 0 12 é * ?", "--tz", "UTC");
	is_str(r.err, "ejobctl cron: bad expression\n"
	              "  0 0 12 é * ?\n"
	              "         ^\n"
	              "column 8: day-of-month: unexpected '?'\n",
	       "columns count characters, not bytes");

	RUN(&r, NULL, "cron", "0 0 12 * * ?", "--tz", "Mars/Base");
	is_int(r.status, 2, "unknown zone: exit 2");
	ok(strstr(r.err, "unknown time zone 'Mars/Base'") != NULL, "... and says which: %s", r.err);

	RUN(&r, NULL, "cron", "0 0 12 * * ?", "--tz", "UTC", "--from", "yesterday");
	is_int(r.status, 2, "bad --from: exit 2");
	ok(strstr(r.err, "--from 'yesterday': not a time") != NULL, "... and says so");

	RUN(&r, NULL, "cron", "0 0 12 * * ?", "-n", "0");
	is_int(r.status, 2, "-n 0: exit 2");
	RUN(&r, NULL, "cron", "0 0 12 * * ?", "--bogus");
	is_int(r.status, 2, "unknown option: exit 2");
	RUN(&r, NULL, "cron", "0 0 12 * * ?", "0 0 13 * * ?");
	is_int(r.status, 2, "two expressions: exit 2");
	RUN(&r, NULL, "cron", "--tz", "UTC");
	is_int(r.status, 2, "no expression: exit 2");
	ok(strstr(r.err, "usage: ejobctl cron") != NULL, "... with the usage on stderr");

	RUN(&r, NULL, "cron", "--help");
	is_int(r.status, 0, "--help: exit 0");
	const char *usage = "usage: ejobctl cron 'EXPR' [--tz ZONE] [--from TIME] [-n COUNT] [--epoch]\n";
	ok(!strncmp(r.out, usage, strlen(usage)), "--help: the usage on stdout");
	RUN(&r, NULL, "--help");
	ok(r.status == 0 && strstr(r.out, "cron 'EXPR'"), "ejobctl --help lists cron");

	/* Default start: now. */
	time_t before = time(NULL);
	RUN(&r, "UTC", "cron", "* * * * * ?", "-n", "1", "--epoch");
	long long first = atoll(r.out);
	ok(first > (long long)before && first <= (long long)time(NULL) + 1,
	   "no --from: the next second after now (%lld)", first);
	return done_testing();
}
