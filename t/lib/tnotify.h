/* t/lib/tnotify.h: systemd's side of sd_notify(3), as t/74 (the supervisor) and t/123 (ejobctl
 * serve) see it: the test binds its own datagram socket (with SO_PASSCRED, so each datagram names
 * its sender's pid, as NotifyAccess=main checks) and starts the process with $NOTIFY_SOCKET on it.
 * The datagrams read are kept in tnotify_msgs[0..tnotify_n), in order. */
#ifndef EJOB_TNOTIFY_H
#define EJOB_TNOTIFY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TNOTIFY_MAX 4096

struct tnotify_msg {
	uint64_t ms;                    /* when the test read it */
	pid_t pid;                      /* the sender, per the kernel */
	char text[256];
};

extern struct tnotify_msg tnotify_msgs[TNOTIFY_MAX];
extern size_t tnotify_n;

/* tlib_tmpdir()/notify, bound; its path in path. BAIL_OUT if it cannot be. */
int tnotify_socket(char *path, size_t len);
/* Every datagram that comes within ms (0: what is queued now), appended; how many. */
size_t tnotify_take(int fd, unsigned ms);
/* text has the line `line` ("READY=1") */
int tnotify_has_line(const char *text, const char *line);
/* the STATUS= of message i ("" if none), in a static buffer */
const char *tnotify_status(size_t i);
/* messages [from, to) that have the line */
size_t tnotify_count(const char *line, size_t from, size_t to);
/* Reads until a datagram has the line, at most ms: its index, or -1. */
long tnotify_until(int fd, const char *line, unsigned ms);

#endif
