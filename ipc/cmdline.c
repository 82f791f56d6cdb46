/* ipc/cmdline.c: command lines, for whoever starts programs (see cmdline.h). */
#include "ipc/cmdline.h"
#include "ipc/errf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- argv (pure) ------------------------------------------------------------------------------ */

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\n'; }

/* One pass of the splitter. With out == NULL it only counts (words, bytes of words with their
 * NULs); otherwise it writes the words into out and their starts into argv. */
static int split_pass(const char *cmd, char *out, char **argv, size_t *nwords, size_t *nbytes,
                      char *err, size_t errlen)
{
	size_t i = 0, w = 0, b = 0;
#define EMIT(ch) do { if (out) out[b] = (ch); b++; } while (0)
	for (;;) {
		while (is_blank(cmd[i]) || (cmd[i] == '\\' && cmd[i + 1] == '\n'))
			i += cmd[i] == '\\' ? 2 : 1;
		if (!cmd[i]) break;
		if (argv) argv[w] = out + b;
		while (cmd[i] && !is_blank(cmd[i])) {
			char c = cmd[i];
			if (c == '\'') {
				const char *close = strchr(cmd + i + 1, '\'');
				if (!close) {
					ejob_errf(err, errlen, "unterminated single quote starting at column %zu", i + 1);
					return -1;
				}
				for (i++; cmd + i < close; i++) EMIT(cmd[i]);
				i++;
			} else if (c == '"') {
				size_t open = i++;
				for (;;) {
					c = cmd[i];
					if (!c) {
						ejob_errf(err, errlen, "unterminated double quote starting at column %zu", open + 1);
						return -1;
					}
					if (c == '"') {
						i++;
						break;
					}
					if (c == '\\' && cmd[i + 1] && strchr("$`\"\\", cmd[i + 1])) {
						EMIT(cmd[i + 1]);
						i += 2;
					} else if (c == '\\' && cmd[i + 1] == '\n') {
						i += 2;
					} else {
						EMIT(c);
						i++;
					}
				}
			} else if (c == '\\') {
				if (!cmd[i + 1]) {
					ejob_errf(err, errlen, "trailing backslash at column %zu: nothing to escape", i + 1);
					return -1;
				}
				if (cmd[i + 1] != '\n') EMIT(cmd[i + 1]);
				i += 2;
			} else {
				EMIT(c);
				i++;
			}
		}
		EMIT('\0');
		w++;
	}
#undef EMIT
	*nwords = w;
	*nbytes = b;
	return 0;
}

int cmd_split(const char *cmd, size_t reserve, char ***argv_out, char *err, size_t errlen)
{
	size_t nw, nb;
	if (split_pass(cmd, NULL, NULL, &nw, &nb, err, errlen) < 0) {
		errno = EINVAL;
		return -1;
	}
	if (nw == 0) {
		ejob_errf(err, errlen, "empty command line");
		errno = EINVAL;
		return -1;
	}
	if (nw > INT_MAX - 1 || reserve > 1024) {
		ejob_errf(err, errlen, "too many words");
		errno = EINVAL;
		return -1;
	}
	size_t nptr = nw + reserve + 1;
	char **argv = calloc(1, nptr * sizeof(char *) + nb);
	if (!argv) {
		ejob_errf(err, errlen, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	char *out = (char *)(argv + nptr);
	split_pass(cmd, out, argv, &nw, &nb, NULL, 0);
	*argv_out = argv;
	return (int)nw;
}

int cmd_resolve(const char *name, char *out, size_t len)
{
	if (strchr(name, '/')) {
		int n = snprintf(out, len, "%s", name);
		if (n < 0 || (size_t)n >= len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		return 0;
	}
	const char *path = getenv("PATH");
	if (!path) path = "/usr/local/bin:/usr/bin:/bin";
	int seen_eacces = 0;
	for (const char *p = path;; ) {
		const char *e = strchr(p, ':');
		size_t dl = e ? (size_t)(e - p) : strlen(p);
		int n = dl ? snprintf(out, len, "%.*s/%s", (int)dl, p, name) : snprintf(out, len, "%s", name);
		if (n > 0 && (size_t)n < len) {
			struct stat st;
			if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
				if (access(out, X_OK) == 0) return 0;
				seen_eacces = 1;
			}
		}
		if (!e) break;
		p = e + 1;
	}
	errno = seen_eacces ? EACCES : ENOENT;
	return -1;
}

void cmd_child_reset(int first_fd)
{
	if (close_range((unsigned)first_fd, ~0U, 0) < 0)
		for (int fd = first_fd; fd < 1024; fd++) close(fd);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Every disposition back to default; only SIG_IGN would survive exec. The raw syscall,
	 * because glibc's sigaction refuses its own signals (32, 33), which may well arrive ignored
	 * (GNU make starts its children so). SIG_DFL is 0, so an all-zero kernel sigaction means
	 * "default, no flags, empty mask" whatever the architecture's layout. */
	static const unsigned long dfl[8];
	for (int sig = 1; sig <= 64; sig++)
		if (sig != SIGKILL && sig != SIGSTOP) syscall(SYS_rt_sigaction, sig, dfl, NULL, (size_t)8);
}
