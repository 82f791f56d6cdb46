/* bench/lib/serveproc.c: see serveproc.h */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/lib/bench.h"
#include "bench/lib/serveproc.h"
#include "t/lib/tlib.h"

#define EJOBCTL BUILT("tools/ejobctl")

pid_t serveproc_start(const char *connect, const char *ns, const char *extra, int *port)
{
	char outf[600];
	snprintf(outf, sizeof outf, "%s/serve%s.out", tlib_tmpdir(), extra ? extra : "");
	pid_t pid = tlib_fork();
	if (pid < 0) fail(NULL, "fork failed");
	if (pid == 0) {
		if (!freopen(outf, "w", stdout) || !freopen(outf, "a", stderr)) _exit(127);
		const char *argv[] = { EJOBCTL, "serve", "--listen", "127.0.0.1:0", "--zk", connect, "--namespace", ns,
			               "--timeout", "30", extra, NULL };
		execv(EJOBCTL, (char **)argv);
		_exit(127);
	}
	*port = 0;
	for (int i = 0; i < 3000 && !*port; i++) {
		char *t = tsup_slurp(outf);
		const char *p = t ? strstr(t, "listening on http://127.0.0.1:") : NULL;
		if (p) *port = atoi(p + strlen("listening on http://127.0.0.1:"));
		free(t);
		if (!*port) sleep_ms(10);
	}
	if (!*port) fail(NULL, "ejobctl serve did not listen (%s)", outf);
	return pid;
}

void serveproc_stop(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	tlib_untrack(pid);
}
