/* t/native/libstuck.c: native jobs for the tests that need a job which misbehaves.
 *
 * stuck_item ignores ejob_cancelled and runs until its process dies: what a native job must not
 * do, and what the worker has to end on its own when the supervisor cannot (t/24, the lease). It
 * writes "stuck <pid>\n" to the file named by the job parameter first, if there is one, so a
 * test knows which process runs it. */
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "worker/ejob.h"

int stuck_item(const ejob_context *ctx);

int stuck_item(const ejob_context *ctx)
{
	if (ctx->job_param[0]) {
		int fd = open(ctx->job_param, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0) {
			dprintf(fd, "stuck %d\n", (int)getpid());
			close(fd);
		}
	}
	for (;;) {
		struct timespec ts = { 1, 0 };
		nanosleep(&ts, NULL);
	}
}
