/* worker/attach.h: the client side of the attach socket (docs/worker.md, "Attaching an external
 * worker"): where the socket is, and the HELLO -> WELCOME/REFUSE handshake. Internal to the
 * worker library; ejob_attach() in ejob.h is the public face. */
#ifndef EJOB_ATTACH_H
#define EJOB_ATTACH_H

#include <stddef.h>
#include <sys/types.h>

#include "ipc/frame.h"

/* Pure: the default socket path for namespace ns given the environment values (NULL = unset or
 * empty) and the effective uid. 0, or -1 with errno EINVAL (bad namespace) or ENAMETOOLONG
 * (does not fit in len, or longer than a sockaddr_un path). */
int attach_socket_path(const char *ns, const char *runtime_dir, const char *xdg_runtime_dir,
                       uid_t euid, char *buf, size_t len);

struct attach_result {
	int sock;                      /* the connected socket (CLOEXEC), kept open */
	int memfd, efd;                /* from SCM_RIGHTS (CLOEXEC) */
	struct frame_welcome welcome;
};

/* Connect to path, check the peer's uid (ours or root), send the hello, wait up to timeout_ms
 * for the answer. 0 with *r filled (the caller owns the three fds), or -1 with errno (see
 * ejob_attach in ejob.h) and a one-line reason in err; nothing is left open on failure. */
int attach_handshake(const char *path, const struct frame_hello *hello, int timeout_ms,
                     struct attach_result *r, char *err, size_t errlen);

/* Has the peer closed the socket? 1 if so (or on error), 0 if it is still open. No blocking. */
int attach_peer_gone(int sock);

#endif
