/* t/lib/tzk.c: a real ZooKeeper server and a synchronous client for tests. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tzk.h"
#include "t/tap.h"

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof a;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || getsockname(fd, (struct sockaddr *)&a, &l) < 0)
		BAIL_OUT("no free port: %s", strerror(errno));
	close(fd);
	return ntohs(a.sin_port);
}

static int ruok(void *arg)
{
	const struct tzk *z = arg;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)z->port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char buf[8] = "";
	int ok = 0;
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0 && write(fd, "ruok", 4) == 4) {
		ssize_t n = read(fd, buf, 4);
		ok = n == 4 && !memcmp(buf, "imok", 4);
	}
	if (fd >= 0) close(fd);
	if (!ok) usleep(50000);
	return ok;
}

void tzk_start(struct tzk *z, const char *name, int tick_ms)
{
	memset(z, 0, sizeof *z);
	z->port = free_port();
	snprintf(z->dir, sizeof z->dir, "%s/%s", tlib_tmpdir(), name);
	mkdir(z->dir, 0700);
	char cfg[700], data[700], log[700], text[2048];
	snprintf(cfg, sizeof cfg, "%s/zoo.cfg", z->dir);
	snprintf(data, sizeof data, "%s/data", z->dir);
	snprintf(log, sizeof log, "%s/zk.log", z->dir);
	mkdir(data, 0700);
	snprintf(text, sizeof text,
	         "tickTime=%d\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\nforceSync=no\n"
	         "admin.enableServer=false\n4lw.commands.whitelist=*\nmaxSessionTimeout=%d\n",
	         tick_ms, data, z->port, tick_ms * 20);
	tlib_write_file(cfg, text, strlen(text));
	snprintf(z->connect, sizeof z->connect, "127.0.0.1:%d", z->port);
	pid_t p = tlib_fork();
	if (p == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int nul = open("/dev/null", O_RDONLY);
		dup2(nul, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execlp("java", "java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		       "-cp", "/usr/share/java/zookeeper.jar:/etc/zookeeper/conf",
		       "org.apache.zookeeper.server.ZooKeeperServerMain", cfg, (char *)NULL);
		fprintf(stderr, "exec java: %s (apt-get install zookeeper default-jre-headless, or tools/install-deps)\n",
		        strerror(errno));
		_exit(127);
	}
	z->pid = p;
	if (!tlib_wait_for(ruok, z, 20000)) {
		char cmd[800];
		snprintf(cmd, sizeof cmd, "tail -n 20 %s >&2", log);
		if (system(cmd) < 0) {}
		BAIL_OUT("ZooKeeper on port %d did not answer ruok within 20 s (its log is above)", z->port);
	}
}

void tzk_stop(struct tzk *z)
{
	if (z->pid <= 0) return;
	kill(z->pid, SIGKILL);
	waitpid(z->pid, NULL, 0);
	tlib_untrack(z->pid);
	z->pid = 0;
}

static void quiet_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
	(void)zh;
	(void)type;
	(void)state;
	(void)path;
	(void)ctx;
}

static int connected(void *arg)
{
	if (zoo_state(arg) == ZOO_CONNECTED_STATE) return 1;
	usleep(10000);
	return 0;
}

zhandle_t *tzk_client(const struct tzk *z, const char *digest)
{
	zoo_set_debug_level((ZooLogLevel)0);
	zhandle_t *zh = zookeeper_init(z->connect, quiet_watcher, 10000, NULL, NULL, 0);
	if (!zh || !tlib_wait_for(connected, zh, 10000)) BAIL_OUT("cannot connect to ZooKeeper at %s", z->connect);
	if (digest && zoo_add_auth(zh, "digest", digest, (int)strlen(digest), NULL, NULL) != ZOK)
		BAIL_OUT("zoo_add_auth failed");
	return zh;
}

char *tzk_get(zhandle_t *zh, const char *path, struct Stat *st, int *rc)
{
	char *buf = malloc(1 << 20);
	int len = (1 << 20) - 1;
	struct Stat s;
	int r = zoo_get(zh, path, 0, buf, &len, &s);
	if (rc) *rc = r;
	if (r != ZOK) {
		free(buf);
		return NULL;
	}
	if (len < 0) len = 0;
	buf[len] = '\0';
	if (st) *st = s;
	return buf;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char *tzk_children(zhandle_t *zh, const char *path)
{
	struct String_vector sv;
	if (zoo_get_children(zh, path, 0, &sv) != ZOK) return NULL;
	qsort(sv.data, (size_t)sv.count, sizeof *sv.data, cmp);
	size_t n = 1;
	for (int i = 0; i < sv.count; i++) n += strlen(sv.data[i]) + 1;
	char *out = calloc(1, n);
	for (int i = 0; i < sv.count; i++) {
		if (i) strcat(out, ",");
		strcat(out, sv.data[i]);
	}
	deallocate_String_vector(&sv);
	return out;
}
