/* t/lib/tzk.c: a real ZooKeeper server for tests (see tzk.h); its client is t/lib/tzk_client.c. */
#include "t/lib/tzk.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk_int.h"

/* Debian's zookeeper.jar names its dependencies in its manifest's Class-Path, slf4j-api among
 * them but no slf4j binding: without one the server logs nothing at all (slf4j's NOP logger).
 * slf4j-simple (libslf4j-java, a dependency of libzookeeper-java) writes to stderr, which is
 * the server's log file here. /etc/zookeeper/conf only holds log4j.properties, unused then. */
#define ZK_JAR      "/usr/share/java/zookeeper.jar"
#define SLF4J_JAR   "/usr/share/java/slf4j-simple.jar"
#define INSTALL_HINT "apt-get install zookeeper default-jre-headless (or tools/install-deps)"

void tzk_sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
}

void tzk_say(const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fflush(stdout);
	for (char *line = buf; line;) {
		char *nl = strchr(line, '\n');
		if (nl) *nl = '\0';
		fprintf(stderr, "# tzk: %s\n", line);
		line = nl ? nl + 1 : NULL;
	}
}

static void log_tail(const struct tzk_server *z, int lines)
{
	char *s = tsup_slurp(z->log);
	if (!s) { tzk_say("(no log at %s)", z->log); return; }
	size_t len = strlen(s);
	while (len && s[len - 1] == '\n') s[--len] = '\0';
	char *p = s + len;
	for (int n = 0; p > s; p--)
		if (p[-1] == '\n' && ++n == lines) break;
	fflush(stdout);
	fprintf(stderr, "# tzk: last lines of %s:\n", z->log);
	for (char *line = p; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl) *nl = '\0';
		fprintf(stderr, "#   %s\n", line);
		line = nl ? nl + 1 : NULL;
	}
	free(s);
}

/* ---- java and the class path ---- */

static const char *java_path(void)
{
	const char *j = getenv("EJOB_JAVA");
	if (j && *j) return j;
	if (access("/usr/bin/java", X_OK) == 0) return "/usr/bin/java";
	static char found[512];
	const char *path = getenv("PATH");
	for (const char *p = path; p && *p;) {
		const char *c = strchr(p, ':');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		int w = snprintf(found, sizeof found, "%.*s/java", (int)n, p);
		if (w > 0 && (size_t)w < sizeof found && n && access(found, X_OK) == 0) return found;
		p = c ? c + 1 : NULL;
	}
	return NULL;
}

static const char *class_path(void)
{
	const char *cp = getenv("EJOB_ZK_CLASSPATH");
	if (cp && *cp) return cp;
	if (access(ZK_JAR, R_OK) != 0) return NULL;
	return access(SLF4J_JAR, R_OK) == 0 ? ZK_JAR ":" SLF4J_JAR : ZK_JAR;
}

/* ---- ports ---- */

static int port_free(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) return 0;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
	close(fd);
	return ok;
}

int tzk_free_port(void)
{
	static int given[256];
	static int ngiven;
	static uint64_t rnd;
	int lo = 32768;
	char *r = tsup_slurp("/proc/sys/net/ipv4/ip_local_port_range");
	if (r) { lo = atoi(r); free(r); }
	/* below the ephemeral range: no outgoing connection takes it before the server binds it */
	int hi = lo, base = lo - 12000 < 10000 ? 10000 : lo - 12000;
	if (hi - base < 200) { base = 10000; hi = 30000; }
	if (!rnd) rnd = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^ tlib_now_ms() ^ (uint64_t)time(NULL) << 20;
	for (int tries = 0; tries < 1000; tries++) {
		rnd ^= rnd << 13; rnd ^= rnd >> 7; rnd ^= rnd << 17;
		int p = base + (int)(rnd % (uint64_t)(hi - base));
		int seen = 0;
		for (int i = 0; i < ngiven && !seen; i++) seen = given[i] == p;
		if (seen || !port_free(p)) continue;
		given[ngiven++ % 256] = p;
		return p;
	}
	tzk_say("no free loopback port in %d-%d", base, hi - 1);
	return -1;
}

/* ---- one server ---- */

static int write_cfg(const struct tzk_server *z, const struct tzk_opts *o, const struct tzk_ensemble *e)
{
	char buf[8192];
	size_t n = 0;
#define ADD(...) do { \
		int w_ = snprintf(buf + n, sizeof buf - n, __VA_ARGS__); \
		if (w_ < 0 || (size_t)w_ >= sizeof buf - n) { tzk_say("zoo.cfg for %s: too long", z->dir); return -1; } \
		n += (size_t)w_; \
	} while (0)
	ADD("# written by t/lib/tzk.c\n");
	ADD("tickTime=%u\n", z->tick_ms);
	ADD("dataDir=%s/data\n", z->dir);
	ADD("clientPort=%d\nclientPortAddress=127.0.0.1\n", z->client_port);
	/* no fsync: a killed JVM loses nothing (the kernel has the data), a test runs faster */
	ADD("forceSync=no\npreAllocSize=1024\n");
	ADD("admin.enableServer=false\n4lw.commands.whitelist=*\nmaxClientCnxns=0\n");
	if (o && o->min_session_ms) ADD("minSessionTimeout=%u\n", o->min_session_ms);
	if (o && o->max_session_ms) ADD("maxSessionTimeout=%u\n", o->max_session_ms);
	if (e) {
		unsigned il = o && o->init_limit ? o->init_limit : (10000 + z->tick_ms - 1) / z->tick_ms;
		unsigned sl = o && o->sync_limit ? o->sync_limit : (2000 + z->tick_ms - 1) / z->tick_ms;
		ADD("initLimit=%u\nsyncLimit=%u\n", il < 10 ? 10 : il, sl < 5 ? 5 : sl);
		for (int i = 0; i < e->n; i++)
			ADD("server.%d=127.0.0.1:%d:%d\n", e->m[i].id, e->m[i].quorum_port, e->m[i].election_port);
	}
	if (o && o->extra_cfg) ADD("%s\n", o->extra_cfg);
#undef ADD
	if (tlib_write_file(z->cfg, buf, n) < 0) {
		tzk_say("write %s: %s", z->cfg, strerror(errno));
		return -1;
	}
	return 0;
}

/* Directory, paths and tick of a server; ports are set by the caller. */
static int setup(struct tzk_server *z, const char *dir, int id, const struct tzk_opts *o)
{
	memset(z, 0, sizeof *z);
	z->id = id;
	z->tick_ms = o && o->tick_ms ? o->tick_ms : 200;
	z->heap_mb = o && o->heap_mb ? o->heap_mb : 128;
	z->server_jvm = o && o->server_jvm;
	z->quorum = id > 0;
	int w = snprintf(z->dir, sizeof z->dir, "%s", dir);
	if (w < 0 || (size_t)w >= sizeof z->dir) { tzk_say("directory name too long: %s", dir); return -1; }
	snprintf(z->cfg, sizeof z->cfg, "%s/zoo.cfg", z->dir);
	snprintf(z->log, sizeof z->log, "%s/zookeeper.log", z->dir);
	char data[600];
	snprintf(data, sizeof data, "%s/data", z->dir);
	if ((mkdir(z->dir, 0700) < 0 && errno != EEXIST) || (mkdir(data, 0700) < 0 && errno != EEXIST)) {
		tzk_say("mkdir %s: %s", data, strerror(errno));
		return -1;
	}
	if (id > 0) {
		char p[700], v[16];
		snprintf(p, sizeof p, "%s/myid", data);
		int vl = snprintf(v, sizeof v, "%d\n", id);
		if (tlib_write_file(p, v, (size_t)vl) < 0) { tzk_say("write %s: %s", p, strerror(errno)); return -1; }
	}
	return 0;
}

static void set_client_port(struct tzk_server *z, int port)
{
	z->client_port = port;
	snprintf(z->connect, sizeof z->connect, "127.0.0.1:%d", port);
}

static int spawn(struct tzk_server *z)
{
	const char *java = java_path(), *cp = class_path();
	if (!java) { tzk_say("no java in /usr/bin or $PATH: %s", INSTALL_HINT); return -1; }
	if (access(java, X_OK) != 0) { tzk_say("cannot run %s ($EJOB_JAVA): %s", java, strerror(errno)); return -1; }
	if (!cp) { tzk_say("no %s: %s", ZK_JAR, INSTALL_HINT); return -1; }
	/* everything the child needs is ready before fork: after it, only async-signal-safe calls */
	char xmx[32], xms[32];
	snprintf(xmx, sizeof xmx, "-Xmx%um", z->heap_mb);
	snprintf(xms, sizeof xms, "-Xms%um", z->heap_mb);
	const char *argv[] = {
		java,
		/* a JVM that starts fast and stays small: C1 only, serial GC, no hsperfdata file; or
		 * (server_jvm) the default compilers and collector, the whole heap at once */
		z->server_jvm ? "-XX:+UseG1GC" : "-XX:TieredStopAtLevel=1", z->server_jvm ? xms : "-XX:+UseSerialGC", xmx,
		"-Xshare:auto", "-XX:-UsePerfData",
		"-XX:+ExitOnOutOfMemoryError", "-Djava.net.preferIPv4Stack=true", "-Dzookeeper.jmx.log4j.disable=true",
		"-Dorg.slf4j.simpleLogger.showDateTime=true",
		"-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
		"-cp", cp,
		z->quorum ? "org.apache.zookeeper.server.quorum.QuorumPeerMain"
		          : "org.apache.zookeeper.server.ZooKeeperServerMain",
		z->cfg, NULL
	};
	static const char exec_failed[] = "tzk: exec java failed\n";
	int logfd = open(z->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (logfd < 0) { tzk_say("open %s: %s", z->log, strerror(errno)); return -1; }
	pid_t parent = getpid();
	z->spawned_ms = tlib_now_ms();
	z->ready_ms = 0;
	pid_t p = tlib_fork();
	if (p < 0) {
		tzk_say("fork: %s", strerror(errno));
		close(logfd);
		return -1;
	}
	if (p == 0) {
		/* dies with the test, even a SIGKILLed one */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent) _exit(127);
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(logfd, 1) < 0 || dup2(logfd, 2) < 0) _exit(127);
		/* not the test's other fds (the C client's sockets are not CLOEXEC) */
		close_range(3, ~0u, 0);
		if (chdir(z->dir) < 0) _exit(127);   /* where hs_err_pid*.log would go */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execv(java, (char *const *)argv);
		if (write(2, exec_failed, sizeof exec_failed - 1) < 0) { /* nothing left to do */ }
		_exit(127);
	}
	close(logfd);
	z->pid = p;
	return 0;
}

/* Reap it if it has ended: 1 if it had (status in z->status), 0 if it runs. */
static int reaped(struct tzk_server *z)
{
	if (!z->pid) return 1;
	int st;
	pid_t r = waitpid(z->pid, &st, WNOHANG);
	if (r == z->pid || (r < 0 && errno == ECHILD)) {
		z->status = r == z->pid ? st : -1;
		tlib_untrack(z->pid);
		z->pid = 0;
		return 1;
	}
	return 0;
}

static void describe_status(int st, char *buf, size_t len)
{
	if (st == -1) snprintf(buf, len, "ended (not our child)");
	else if (WIFEXITED(st)) snprintf(buf, len, "exited with code %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st)) snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	else snprintf(buf, len, "ended (status 0x%x)", st);
}

static enum tzk_mode mode_within(const struct tzk_server *z, unsigned timeout_ms);

static int ready_mode(const struct tzk_server *z, enum tzk_mode m)
{
	return z->quorum ? (m == TZK_LEADER || m == TZK_FOLLOWER) : m == TZK_STANDALONE;
}

int tzk_wait_ready(struct tzk_server *z, unsigned timeout_ms)
{
	uint64_t end = z->spawned_ms + timeout_ms, now;
	enum tzk_mode m = TZK_DOWN;
	for (;;) {
		if (reaped(z)) {
			char why[128];
			describe_status(z->status, why, sizeof why);
			tzk_say("ZooKeeper %s (%s) %s before it served", z->connect, z->dir, why);
			log_tail(z, 30);
			return -1;
		}
		now = tlib_now_ms();
		/* ZooKeeper 3.8.0 answers a four-letter word that comes before its database is loaded,
		 * then fails to close the connection (NullPointerException on zkDb in "Error closing a
		 * command socket"): such a request hangs. An answer takes milliseconds, so give up on
		 * one soon and ask again. */
		m = mode_within(z, 200);
		if (ready_mode(z, m)) {
			z->ready_ms = tlib_now_ms() - z->spawned_ms;
			if (!z->ready_ms) z->ready_ms = 1;
			return 0;
		}
		if (now >= end) break;
		tzk_sleep_ms(10);
	}
	tzk_say("ZooKeeper %s (%s) pid %d does not serve %ums after its start (srvr: %s)", z->connect, z->dir,
	    (int)z->pid, timeout_ms, tzk_mode_name(m));
	log_tail(z, 30);
	return -1;
}

static int log_says(const struct tzk_server *z, const char *needle)
{
	char *s = tsup_slurp(z->log);
	int r = s && strstr(s, needle);
	free(s);
	return r;
}

int tzk_spawn(struct tzk_server *z, const char *name, const struct tzk_opts *o)
{
	char dir[512];
	int w = snprintf(dir, sizeof dir, "%s/%s", tlib_tmpdir(), name);
	if (w < 0 || (size_t)w >= sizeof dir) { tzk_say("name too long: %s", name); return -1; }
	if (setup(z, dir, 0, o) < 0) return -1;
	int port = tzk_free_port();
	if (port < 0) return -1;
	set_client_port(z, port);
	if (write_cfg(z, o, NULL) < 0) return -1;
	return spawn(z);
}

int tzk_start(struct tzk_server *z, const char *name, const struct tzk_opts *o, unsigned timeout_ms)
{
	if (tzk_spawn(z, name, o) < 0) return -1;
	for (int tries = 0;; tries++) {
		if (tzk_wait_ready(z, timeout_ms) == 0) return 0;
		if (z->pid || tries == 2 || !log_says(z, "Address already in use")) return -1;
		/* another process took the port between our check and the JVM's bind */
		int port = tzk_free_port();
		if (port < 0) return -1;
		tzk_say("port %d was taken; starting again on %d", z->client_port, port);
		set_client_port(z, port);
		if (write_cfg(z, o, NULL) < 0 || spawn(z) < 0) return -1;
	}
}

static int reap_within(struct tzk_server *z, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	while (!reaped(z)) {
		if (tlib_now_ms() >= end) return -1;
		tzk_sleep_ms(2);
	}
	return 0;
}

/* Signal it (unless it was signalled already), reap it within timeout_ms or SIGKILL it. */
static int stop(struct tzk_server *z, int sig, unsigned timeout_ms, int send)
{
	if (!z->pid) return 0;
	if (send && kill(z->pid, sig) < 0) tzk_say("kill(%d, %d) failed: %s", (int)z->pid, sig, strerror(errno));
	if (send && sig != SIGKILL && sig != SIGSTOP) kill(z->pid, SIGCONT);
	if (reap_within(z, timeout_ms) == 0) return z->status;
	tzk_say("ZooKeeper pid %d did not stop within %ums of signal %d: SIGKILL", (int)z->pid, timeout_ms, sig);
	kill(z->pid, SIGKILL);
	reap_within(z, 5000);
	return -1;
}

int tzk_stop(struct tzk_server *z, int sig, unsigned timeout_ms)
{
	return stop(z, sig, timeout_ms, 1);
}

int tzk_restart(struct tzk_server *z, unsigned timeout_ms)
{
	if (z->pid) { tzk_say("restart of %s: it is still running (pid %d)", z->connect, (int)z->pid); return -1; }
	if (spawn(z) < 0) return -1;
	return tzk_wait_ready(z, timeout_ms);
}

/* every thread of pid stopped (state T in /proc/pid/task/N/stat)? */
static int all_stopped(pid_t pid)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
	DIR *d = opendir(dir);
	if (!d) return 0;
	int all = 1, n = 0;
	struct dirent *e;
	while (all && (e = readdir(d))) {
		if (e->d_name[0] == '.') continue;
		char p[128], buf[512];
		snprintf(p, sizeof p, "%s/%.20s/stat", dir, e->d_name);
		FILE *f = fopen(p, "re");
		size_t k = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
		if (f) fclose(f);
		buf[k] = 0;
		const char *rp = strrchr(buf, ')');
		if (!rp) continue;                  /* a thread that just ended */
		n++;
		all = rp[1] == ' ' && (rp[2] == 'T' || rp[2] == 't');
	}
	closedir(d);
	return all && n;
}

int tzk_pause(struct tzk_server *z)
{
	if (!z->pid || kill(z->pid, SIGSTOP) < 0) { tzk_say("SIGSTOP of ZooKeeper pid %d failed", (int)z->pid); return -1; }
	/* the signal is delivered asynchronously: until every thread has stopped the server may
	 * still answer, so a "frozen" check right after kill() could see it serve */
	uint64_t end = tlib_now_ms() + 3000;
	while (!all_stopped(z->pid)) {
		if (tlib_now_ms() > end) { tzk_say("ZooKeeper pid %d did not stop within 3 s of SIGSTOP", (int)z->pid); return -1; }
		usleep(1000);
	}
	return 0;
}

int tzk_resume(struct tzk_server *z)
{
	if (!z->pid || kill(z->pid, SIGCONT) < 0) { tzk_say("SIGCONT of ZooKeeper pid %d failed", (int)z->pid); return -1; }
	return 0;
}

int tzk_alive(const struct tzk_server *z)
{
	return z->pid > 0 && tsup_alive(z->pid);
}

/* ---- four-letter words ---- */

static int remaining(uint64_t end)
{
	uint64_t now = tlib_now_ms();
	return now >= end ? 0 : (int)(end - now);
}

char *tzk_4lw_port(int port, const char *cmd, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) return NULL;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char *buf = NULL;
	size_t len = 0, cap = 0, clen = strlen(cmd), sent = 0;
	int err = 0;
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		if (errno != EINPROGRESS) { err = errno; goto out; }
		struct pollfd pf = { fd, POLLOUT, 0 };
		int r;
		while ((r = poll(&pf, 1, remaining(end))) < 0 && errno == EINTR) {}
		if (r == 0) { err = ETIMEDOUT; goto out; }
		socklen_t sl = sizeof err;
		if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl) < 0) err = errno;
		if (err) goto out;
	}
	while (sent < clen) {
		ssize_t w = write(fd, cmd + sent, clen - sent);
		if (w < 0 && errno == EINTR) continue;
		if (w < 0) { err = errno; goto out; }
		sent += (size_t)w;
	}
	/* the server answers and closes */
	for (;;) {
		if (cap - len < 4096) {
			if (cap >= (1u << 20)) break;
			char *nb = realloc(buf, cap = cap ? cap * 2 : 8192);
			if (!nb) { err = ENOMEM; goto out; }
			buf = nb;
		}
		ssize_t r = read(fd, buf + len, cap - len - 1);
		if (r > 0) { len += (size_t)r; continue; }
		if (r == 0) break;
		if (errno == EINTR) continue;
		if (errno != EAGAIN) { err = errno; goto out; }
		struct pollfd pf = { fd, POLLIN, 0 };
		int ms = remaining(end);
		if (!ms) { err = ETIMEDOUT; goto out; }
		if (poll(&pf, 1, ms) < 0 && errno != EINTR) { err = errno; goto out; }
	}
	close(fd);
	if (!buf) buf = malloc(1);
	if (buf) buf[len] = '\0';
	return buf;
out:
	close(fd);
	free(buf);
	errno = err;
	return NULL;
}

char *tzk_4lw(const struct tzk_server *z, const char *cmd, unsigned timeout_ms)
{
	return tzk_4lw_port(z->client_port, cmd, timeout_ms);
}

static enum tzk_mode mode_within(const struct tzk_server *z, unsigned timeout_ms)
{
	char *s = tzk_4lw(z, "srvr", timeout_ms);
	if (!s) return TZK_DOWN;
	enum tzk_mode m = TZK_NOT_SERVING;
	const char *p = strstr(s, "Mode: ");
	if (p) {
		p += 6;
		if (!strncmp(p, "standalone", 10)) m = TZK_STANDALONE;
		else if (!strncmp(p, "leader", 6)) m = TZK_LEADER;
		else if (!strncmp(p, "follower", 8)) m = TZK_FOLLOWER;
	}
	free(s);
	return m;
}

enum tzk_mode tzk_mode(const struct tzk_server *z)
{
	return mode_within(z, 1000);
}

const char *tzk_mode_name(enum tzk_mode m)
{
	switch (m) {
	case TZK_DOWN: return "no answer";
	case TZK_NOT_SERVING: return "not serving";
	case TZK_STANDALONE: return "standalone";
	case TZK_LEADER: return "leader";
	case TZK_FOLLOWER: return "follower";
	}
	return "?";
}

/* ---- an ensemble ---- */

int tzk_ensemble_start(struct tzk_ensemble *e, const char *name, int n, const struct tzk_opts *o,
                       unsigned timeout_ms)
{
	memset(e, 0, sizeof *e);
	if (n < 1 || n > TZK_MAX_MEMBERS) { tzk_say("ensemble of %d: 1 to %d members", n, TZK_MAX_MEMBERS); return -1; }
	char top[512];
	int w = snprintf(top, sizeof top, "%s/%s", tlib_tmpdir(), name);
	if (w < 0 || (size_t)w >= sizeof top - 8) { tzk_say("name too long: %s", name); return -1; }
	if (mkdir(top, 0700) < 0 && errno != EEXIST) { tzk_say("mkdir %s: %s", top, strerror(errno)); return -1; }
	e->n = n;
	size_t cl = 0;
	for (int i = 0; i < n; i++) {
		struct tzk_server *z = &e->m[i];
		char dir[520];
		snprintf(dir, sizeof dir, "%s/zk%d", top, i + 1);
		if (setup(z, dir, i + 1, o) < 0) return -1;
		int cp = tzk_free_port(), qp = tzk_free_port(), ep = tzk_free_port();
		if (cp < 0 || qp < 0 || ep < 0) return -1;
		set_client_port(z, cp);
		z->quorum_port = qp;
		z->election_port = ep;
		cl += (size_t)snprintf(e->connect + cl, sizeof e->connect - cl, "%s%s", i ? "," : "", z->connect);
	}
	for (int i = 0; i < n; i++)
		if (write_cfg(&e->m[i], o, e) < 0) return -1;
	for (int i = 0; i < n; i++)
		if (spawn(&e->m[i]) < 0) return -1;
	for (int i = 0; i < n; i++)
		if (tzk_wait_ready(&e->m[i], timeout_ms) < 0) return -1;
	return 0;
}

int tzk_ensemble_leader(const struct tzk_ensemble *e)
{
	for (int i = 0; i < e->n; i++)
		if (e->m[i].pid && tzk_mode(&e->m[i]) == TZK_LEADER) return i;
	return -1;
}

int tzk_ensemble_wait_quorum(struct tzk_ensemble *e, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	char seen[256];
	for (;;) {
		int running = 0, leaders = 0, serving = 0;
		size_t sl = 0;
		seen[0] = '\0';
		for (int i = 0; i < e->n; i++) {
			struct tzk_server *z = &e->m[i];
			reaped(z);
			enum tzk_mode m = z->pid ? tzk_mode(z) : TZK_DOWN;
			running += z->pid != 0;
			leaders += m == TZK_LEADER;
			serving += m == TZK_LEADER || m == TZK_FOLLOWER;
			int w = snprintf(seen + sl, sizeof seen - sl, "%s%d: %s", i ? ", " : "", z->id,
			                 z->pid ? tzk_mode_name(m) : "stopped");
			if (w > 0 && (size_t)w < sizeof seen - sl) sl += (size_t)w;
		}
		if (running > e->n / 2 && serving == running && leaders == 1) return 0;
		if (tlib_now_ms() >= end) break;
		tzk_sleep_ms(10);
	}
	tzk_say("no quorum in the ensemble %s after %ums (%s)", e->connect, timeout_ms, seen);
	for (int i = 0; i < e->n; i++)
		if (e->m[i].pid) log_tail(&e->m[i], 15);
	return -1;
}

void tzk_ensemble_stop(struct tzk_ensemble *e, int sig, unsigned timeout_ms)
{
	/* all at once, then reap each: they shut down in parallel */
	for (int i = 0; i < e->n; i++) {
		struct tzk_server *z = &e->m[i];
		if (!z->pid) continue;
		if (kill(z->pid, sig) < 0) tzk_say("kill(%d, %d) failed: %s", (int)z->pid, sig, strerror(errno));
		if (sig != SIGKILL && sig != SIGSTOP) kill(z->pid, SIGCONT);
	}
	for (int i = 0; i < e->n; i++) stop(&e->m[i], sig, timeout_ms, 0);
}
