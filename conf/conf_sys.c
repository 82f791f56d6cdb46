/* conf/conf_sys.c: what the loader needs from the host, kept apart from the pure parser:
 * the CPU count, user, group and zone lookups, and reading the file. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/conf_int.h"
#include "cron/tz.h"

static int lookup_user(const char *name, uint32_t *id, void *arg)
{
	(void)arg;
	struct passwd pw, *res = NULL;
	char buf[4096];
	int r;
	do r = getpwnam_r(name, &pw, buf, sizeof buf, &res); while (r == EINTR);
	if (r != 0 || !res) return -1;
	*id = (uint32_t)pw.pw_uid;
	return 0;
}

static int lookup_group(const char *name, uint32_t *id, void *arg)
{
	(void)arg;
	struct group gr, *res = NULL;
	char buf[16384];
	int r;
	do r = getgrnam_r(name, &gr, buf, sizeof buf, &res); while (r == EINTR);
	if (r != 0 || !res) return -1;
	*id = (uint32_t)gr.gr_gid;
	return 0;
}

tz_t *conf_sys_load_zone(const char *name, char *why, size_t whysz, void *arg)
{
	(void)arg;
	tz_err_t err;
	tz_t *tz = tz_load(name, &err);
	if (!tz) snprintf(why, whysz, "%s", err.msg);   /* a reason cut short is still a reason */
	return tz;
}

void conf_opts_system(conf_opts_t *o)
{
	memset(o, 0, sizeof *o);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	o->cpus = n > 0 ? (int)(n > 1024 ? 1024 : n) : 1;
	o->lookup_user = lookup_user;
	o->lookup_group = lookup_group;
	o->load_zone = conf_sys_load_zone;
}

int conf_read_file(const char *path, char **bufp, size_t *lenp)
{
	int fd;
	do fd = open(path, O_RDONLY | O_CLOEXEC); while (fd < 0 && errno == EINTR);
	if (fd < 0) return -1;
	struct stat st;
	if (fstat(fd, &st) < 0) goto fail;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		goto fail;
	}
	size_t cap = CONF_MAX_FILE_BYTES + 1, len = 0;
	size_t want = st.st_size > 0 && (size_t)st.st_size < cap ? (size_t)st.st_size + 1 : 65536;
	char *buf = malloc(want + 1);
	if (!buf) goto fail;
	size_t have = want;
	for (;;) {
		if (len == have) {
			if (have >= cap) break;             /* one byte past the limit is enough */
			size_t next = have * 2 < cap ? have * 2 : cap;
			char *nb = realloc(buf, next + 1);
			if (!nb) {
				free(buf);
				goto fail;
			}
			buf = nb;
			have = next;
		}
		ssize_t r = read(fd, buf + len, have - len);
		if (r < 0 && errno == EINTR) continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			errno = e;
			goto fail;
		}
		if (r == 0) break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	return 0;
fail: {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
}

conf_t *conf_load_file(const char *path, const conf_opts_t *opts, conf_diags_t **diags)
{
	char *buf;
	size_t len;
	if (diags) *diags = NULL;
	if (conf_read_file(path, &buf, &len) < 0) {
		int e = errno;
		conf_diags_t *d = conf_diags_new();
		if (d) conf_diag_add(d, path, 0, 0, "", "cannot read: %s", strerror(e));
		if (diags) *diags = d;
		else conf_diags_free(d);
		errno = e;
		return NULL;
	}
	conf_opts_t sys;
	if (!opts) {
		conf_opts_system(&sys);
		opts = &sys;
	}
	conf_t *c = conf_parse(buf, len, path, opts, diags);
	int e = errno;
	free(buf);
	errno = e;
	return c;
}

int conf_history_problem(const char *path, char *why, size_t len)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	if (!slash) snprintf(dir, sizeof dir, ".");
	else if (slash == path) snprintf(dir, sizeof dir, "/");
	else if ((size_t)(slash - path) >= sizeof dir) {
		snprintf(why, len, "%s: the path is too long", path);
		return -1;
	} else {
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
	}
	struct stat st;
	if (stat(dir, &st) < 0) {
		if (errno == ENOENT)
			snprintf(why, len, "%s: directory %s does not exist: create it (mkdir -p %s), writable by the supervisor's "
			         "user, or name a file in a directory that is", path, dir, dir);
		else
			snprintf(why, len, "%s: directory %s: %s", path, dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, len, "%s: %s is not a directory: name a file in a directory", path, dir);
		return -1;
	}
	/* the file is created there, and rotated there (FILE -> FILE.1 renames in the directory) */
	if (access(dir, W_OK | X_OK) < 0) {
		snprintf(why, len, "%s: cannot create or rotate files in %s: %s: make the directory writable by the "
		         "supervisor's user (uid %u here), or name a file in a directory that is", path, dir, strerror(errno),
		         (unsigned)geteuid());
		return -1;
	}
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			snprintf(why, len, "%s is a directory: name a file in it", path);
			return -1;
		}
		if (access(path, W_OK) < 0) {
			snprintf(why, len, "%s: %s: make the file writable by the supervisor's user (uid %u here), or remove it",
			         path, strerror(errno), (unsigned)geteuid());
			return -1;
		}
	}
	return 0;
}
