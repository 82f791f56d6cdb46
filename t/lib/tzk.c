/* t/lib/tzk.c: a real ZooKeeper server for tests, and a synchronous client (see tzk.h). */
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

/* Debian's zookeeper.jar names its dependencies in its manifest's Class-Path, slf4j-api among
 * them but no slf4j binding: without one the server logs nothing at all (slf4j's NOP logger).
 * slf4j-simple (libslf4j-java, a dependency of libzookeeper-java) writes to stderr, which is
 * the server's log file here. /etc/zookeeper/conf only holds log4j.properties, unused then. */
#define ZK_JAR      "/usr/share/java/zookeeper.jar"
#define SLF4J_JAR   "/usr/share/java/slf4j-simple.jar"
#define INSTALL_HINT "apt-get install zookeeper default-jre-headless (or tools/install-deps)"

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
}

/* Print a message as TAP comments on stderr. */
__attribute__((format(printf, 1, 2)))
static void say(const char *fmt, ...)
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
	if (!s) { say("(no log at %s)", z->log); return; }
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
	say("no free loopback port in %d-%d", base, hi - 1);
	return -1;
}

/* ---- one server ---- */

static int write_cfg(const struct tzk_server *z, const struct tzk_opts *o, const struct tzk_ensemble *e)
{
	char buf[8192];
	size_t n = 0;
#define ADD(...) do { \
		int w_ = snprintf(buf + n, sizeof buf - n, __VA_ARGS__); \
		if (w_ < 0 || (size_t)w_ >= sizeof buf - n) { say("zoo.cfg for %s: too long", z->dir); return -1; } \
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
		say("write %s: %s", z->cfg, strerror(errno));
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
	z->quorum = id > 0;
	int w = snprintf(z->dir, sizeof z->dir, "%s", dir);
	if (w < 0 || (size_t)w >= sizeof z->dir) { say("directory name too long: %s", dir); return -1; }
	snprintf(z->cfg, sizeof z->cfg, "%s/zoo.cfg", z->dir);
	snprintf(z->log, sizeof z->log, "%s/zookeeper.log", z->dir);
	char data[600];
	snprintf(data, sizeof data, "%s/data", z->dir);
	if ((mkdir(z->dir, 0700) < 0 && errno != EEXIST) || (mkdir(data, 0700) < 0 && errno != EEXIST)) {
		say("mkdir %s: %s", data, strerror(errno));
		return -1;
	}
	if (id > 0) {
		char p[700], v[16];
		snprintf(p, sizeof p, "%s/myid", data);
		int vl = snprintf(v, sizeof v, "%d\n", id);
		if (tlib_write_file(p, v, (size_t)vl) < 0) { say("write %s: %s", p, strerror(errno)); return -1; }
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
	if (!java) { say("no java in /usr/bin or $PATH: %s", INSTALL_HINT); return -1; }
	if (access(java, X_OK) != 0) { say("cannot run %s ($EJOB_JAVA): %s", java, strerror(errno)); return -1; }
	if (!cp) { say("no %s: %s", ZK_JAR, INSTALL_HINT); return -1; }
	/* everything the child needs is ready before fork: after it, only async-signal-safe calls */
	char xmx[32];
	snprintf(xmx, sizeof xmx, "-Xmx%um", z->heap_mb);
	const char *argv[] = {
		java,
		/* a JVM that starts fast and stays small: C1 only, serial GC, no hsperfdata file */
		"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", xmx, "-Xshare:auto", "-XX:-UsePerfData",
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
	if (logfd < 0) { say("open %s: %s", z->log, strerror(errno)); return -1; }
	pid_t parent = getpid();
	z->spawned_ms = tlib_now_ms();
	z->ready_ms = 0;
	pid_t p = tlib_fork();
	if (p < 0) {
		say("fork: %s", strerror(errno));
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
			say("ZooKeeper %s (%s) %s before it served", z->connect, z->dir, why);
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
		sleep_ms(10);
	}
	say("ZooKeeper %s (%s) pid %d does not serve %ums after its start (srvr: %s)", z->connect, z->dir,
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
	if (w < 0 || (size_t)w >= sizeof dir) { say("name too long: %s", name); return -1; }
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
		say("port %d was taken; starting again on %d", z->client_port, port);
		set_client_port(z, port);
		if (write_cfg(z, o, NULL) < 0 || spawn(z) < 0) return -1;
	}
}

static int reap_within(struct tzk_server *z, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	while (!reaped(z)) {
		if (tlib_now_ms() >= end) return -1;
		sleep_ms(2);
	}
	return 0;
}

/* Signal it (unless it was signalled already), reap it within timeout_ms or SIGKILL it. */
static int stop(struct tzk_server *z, int sig, unsigned timeout_ms, int send)
{
	if (!z->pid) return 0;
	if (send && kill(z->pid, sig) < 0) say("kill(%d, %d) failed: %s", (int)z->pid, sig, strerror(errno));
	if (send && sig != SIGKILL && sig != SIGSTOP) kill(z->pid, SIGCONT);
	if (reap_within(z, timeout_ms) == 0) return z->status;
	say("ZooKeeper pid %d did not stop within %ums of signal %d: SIGKILL", (int)z->pid, timeout_ms, sig);
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
	if (z->pid) { say("restart of %s: it is still running (pid %d)", z->connect, (int)z->pid); return -1; }
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
	if (!z->pid || kill(z->pid, SIGSTOP) < 0) { say("SIGSTOP of ZooKeeper pid %d failed", (int)z->pid); return -1; }
	/* the signal is delivered asynchronously: until every thread has stopped the server may
	 * still answer, so a "frozen" check right after kill() could see it serve */
	uint64_t end = tlib_now_ms() + 3000;
	while (!all_stopped(z->pid)) {
		if (tlib_now_ms() > end) { say("ZooKeeper pid %d did not stop within 3 s of SIGSTOP", (int)z->pid); return -1; }
		usleep(1000);
	}
	return 0;
}

int tzk_resume(struct tzk_server *z)
{
	if (!z->pid || kill(z->pid, SIGCONT) < 0) { say("SIGCONT of ZooKeeper pid %d failed", (int)z->pid); return -1; }
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
	if (n < 1 || n > TZK_MAX_MEMBERS) { say("ensemble of %d: 1 to %d members", n, TZK_MAX_MEMBERS); return -1; }
	char top[512];
	int w = snprintf(top, sizeof top, "%s/%s", tlib_tmpdir(), name);
	if (w < 0 || (size_t)w >= sizeof top - 8) { say("name too long: %s", name); return -1; }
	if (mkdir(top, 0700) < 0 && errno != EEXIST) { say("mkdir %s: %s", top, strerror(errno)); return -1; }
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
		sleep_ms(10);
	}
	say("no quorum in the ensemble %s after %ums (%s)", e->connect, timeout_ms, seen);
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
		if (kill(z->pid, sig) < 0) say("kill(%d, %d) failed: %s", (int)z->pid, sig, strerror(errno));
		if (sig != SIGKILL && sig != SIGSTOP) kill(z->pid, SIGCONT);
	}
	for (int i = 0; i < e->n; i++) stop(&e->m[i], sig, timeout_ms, 0);
}

/* ---- the client ---- */

static void client_log_init(void)
{
	static FILE *f;
	if (f) return;
	char p[600];
	snprintf(p, sizeof p, "%s/zk-client.log", tlib_tmpdir());
	f = fopen(p, "ae");
	if (!f) { say("fopen %s: %s (the C client logs to stderr)", p, strerror(errno)); return; }
	setvbuf(f, NULL, _IOLBF, 0);
	zoo_set_log_stream(f);
	zoo_set_debug_level(ZOO_LOG_LEVEL_INFO);
}

static void no_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
	(void)zh; (void)type; (void)state; (void)path; (void)ctx;
}

struct auth_wait {
	atomic_int done;
	atomic_int rc;
};

static void auth_done(int rc, const void *data)
{
	struct auth_wait *aw = (struct auth_wait *)data;
	atomic_store(&aw->rc, rc);
	atomic_store(&aw->done, 1);
}

static int auth_answered(void *arg)
{
	return atomic_load(&((struct auth_wait *)arg)->done);
}

int tzk_wait_state(zhandle_t *zh, int state, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	for (;;) {
		if (zoo_state(zh) == state) return 1;
		if (tlib_now_ms() >= end) return 0;
		sleep_ms(2);
	}
}

static const char *state_name(int s)
{
	if (s == ZOO_CONNECTED_STATE) return "connected";
	if (s == ZOO_CONNECTING_STATE) return "connecting";
	if (s == ZOO_ASSOCIATING_STATE) return "associating";
	if (s == ZOO_EXPIRED_SESSION_STATE) return "session expired";
	if (s == ZOO_AUTH_FAILED_STATE) return "auth failed";
	if (s == ZOO_NOTCONNECTED_STATE) return "not connected";
	return s == 0 ? "closed" : "?";
}

zhandle_t *tzk_connect(const char *hosts, unsigned session_ms, const char *digest, unsigned timeout_ms)
{
	client_log_init();
	uint64_t t0 = tlib_now_ms();
	zhandle_t *zh = zookeeper_init(hosts, no_watcher, (int)session_ms, NULL, NULL, 0);
	if (!zh) { say("zookeeper_init(%s) failed: %s", hosts, strerror(errno)); return NULL; }
	struct auth_wait aw = { 0, 0 };
	if (digest) {
		int rc = zoo_add_auth(zh, "digest", digest, (int)strlen(digest), auth_done, &aw);
		if (rc != ZOK) {
			say("zoo_add_auth(digest) on %s failed: %s", hosts, zerror(rc));
			zookeeper_close(zh);
			return NULL;
		}
	}
	if (!tzk_wait_state(zh, ZOO_CONNECTED_STATE, timeout_ms)) {
		say("no ZooKeeper session with %s after %ums (state: %s)", hosts, timeout_ms, state_name(zoo_state(zh)));
		zookeeper_close(zh);   /* after it, no completion runs: aw may go */
		return NULL;
	}
	if (digest) {
		uint64_t spent = tlib_now_ms() - t0;
		unsigned left = spent >= timeout_ms ? 1 : timeout_ms - (unsigned)spent;
		if (!tlib_wait_for(auth_answered, &aw, left) || atomic_load(&aw.rc) != ZOK) {
			say("digest auth on %s: %s", hosts,
			    atomic_load(&aw.done) ? zerror(atomic_load(&aw.rc)) : "no answer");
			zookeeper_close(zh);
			return NULL;
		}
	}
	return zh;
}

void tzk_close(zhandle_t *zh)
{
	if (zh) zookeeper_close(zh);
}

int tzk_session_ms(zhandle_t *zh)
{
	return zoo_recv_timeout(zh);
}

#define MAX_DATA (1 << 20)   /* jute.maxbuffer: no node holds more */

int tzk_get(zhandle_t *zh, const char *path, char **data, struct Stat *st)
{
	struct Stat s;
	char *buf = malloc(MAX_DATA + 1);
	if (!buf) return ZSYSTEMERROR;
	int len = MAX_DATA;
	int rc = zoo_get(zh, path, 0, buf, &len, &s);
	if (rc != ZOK || len < 0 || !data) {
		free(buf);
		buf = NULL;
	} else {
		buf[len] = '\0';
		char *nb = realloc(buf, (size_t)len + 1);
		if (nb) buf = nb;
	}
	if (data) *data = buf;
	if (st && rc == ZOK) *st = s;
	return rc;
}

int tzk_exists(zhandle_t *zh, const char *path, struct Stat *st)
{
	struct Stat s;
	int rc = zoo_exists(zh, path, 0, &s);
	if (st && rc == ZOK) *st = s;
	return rc;
}

int tzk_wait_exists(zhandle_t *zh, const char *path, int want, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	for (;;) {
		int rc = tzk_exists(zh, path, NULL);
		if ((want && rc == ZOK) || (!want && rc == ZNONODE)) return 1;
		if (tlib_now_ms() >= end) return 0;
		sleep_ms(5);
	}
}

int tzk_wait_data(zhandle_t *zh, const char *path, const char *want, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	for (;;) {
		char *d = NULL;
		int rc = tzk_get(zh, path, &d, NULL);
		int yes = rc == ZOK && (!want || !strcmp(d ? d : "", want));
		free(d);
		if (yes) return 1;
		if (tlib_now_ms() >= end) return 0;
		sleep_ms(5);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int tzk_children(zhandle_t *zh, const char *path, struct String_vector *out)
{
	memset(out, 0, sizeof *out);
	int rc = zoo_get_children(zh, path, 0, out);
	if (rc == ZOK && out->count > 1) qsort(out->data, (size_t)out->count, sizeof out->data[0], cmp_str);
	return rc;
}

char *tzk_ls(zhandle_t *zh, const char *path, int *rcp)
{
	struct String_vector v;
	int rc = tzk_children(zh, path, &v);
	if (rcp) *rcp = rc;
	if (rc != ZOK) return NULL;
	size_t len = 1;
	for (int i = 0; i < v.count; i++) len += strlen(v.data[i]) + 1;
	char *s = malloc(len), *p = s;
	if (s) {
		*p = '\0';
		for (int i = 0; i < v.count; i++) p += sprintf(p, "%s%s", i ? "," : "", v.data[i]);
	}
	deallocate_String_vector(&v);
	return s;
}

int tzk_create(zhandle_t *zh, const char *path, const char *data, int flags, const struct ACL_vector *acl)
{
	const struct ACL_vector *a = acl ? acl : &ZOO_OPEN_ACL_UNSAFE;
	int len = data ? (int)strlen(data) : -1;
	char made[1024];
	int rc = zoo_create(zh, path, data, len, a, flags, made, sizeof made);
	if (rc != ZNONODE) return rc;
	char *p = strdup(path);
	if (!p) return ZSYSTEMERROR;
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		int r = zoo_create(zh, p, "", 0, a, 0, made, sizeof made);
		*s = '/';
		if (r != ZOK && r != ZNODEEXISTS) { free(p); return r; }
	}
	free(p);
	return zoo_create(zh, path, data, len, a, flags, made, sizeof made);
}

int tzk_set(zhandle_t *zh, const char *path, const char *data)
{
	return zoo_set(zh, path, data, data ? (int)strlen(data) : -1, -1);
}

static char *child_path(const char *parent, const char *name)
{
	size_t pl = strlen(parent), nl = strlen(name);
	char *s = malloc(pl + nl + 2);
	if (!s) return NULL;
	memcpy(s, parent, pl);
	size_t o = pl;
	if (!pl || parent[pl - 1] != '/') s[o++] = '/';
	memcpy(s + o, name, nl + 1);
	return s;
}

int tzk_delete_r(zhandle_t *zh, const char *path)
{
	int root = strcmp(path, "/") == 0;
	for (int tries = 0; tries < 10; tries++) {
		struct String_vector v;
		int rc = zoo_get_children(zh, path, 0, &v);
		if (rc == ZNONODE) return ZOK;
		if (rc != ZOK) return rc;
		for (int i = 0; i < v.count && rc == ZOK; i++) {
			if (root && !strcmp(v.data[i], "zookeeper")) continue;
			char *c = child_path(path, v.data[i]);
			rc = c ? tzk_delete_r(zh, c) : ZSYSTEMERROR;
			free(c);
		}
		deallocate_String_vector(&v);
		if (rc != ZOK || root) return rc;
		rc = zoo_delete(zh, path, -1);
		if (rc == ZOK || rc == ZNONODE) return ZOK;
		if (rc != ZNOTEMPTY) return rc;   /* else a child came meanwhile: again */
	}
	return ZNOTEMPTY;
}

struct sbuf {
	char *s;
	size_t len, cap;
	int oom;
};

static void sb_add(struct sbuf *b, const char *p, size_t n)
{
	if (b->oom) return;
	if (b->cap - b->len < n + 1) {
		size_t nc = b->cap ? b->cap : 4096;
		while (nc - b->len < n + 1) nc *= 2;
		char *ns = realloc(b->s, nc);
		if (!ns) { b->oom = 1; return; }
		b->s = ns;
		b->cap = nc;
	}
	memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

static void sb_escaped(struct sbuf *b, const char *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)d[i];
		char e[8];
		if (c == '\\') sb_str(b, "\\\\");
		else if (c == '\n') sb_str(b, "\\n");
		else if (c == '\r') sb_str(b, "\\r");
		else if (c == '\t') sb_str(b, "\\t");
		else if (c < 0x20 || c == 0x7f) { snprintf(e, sizeof e, "\\x%02x", c); sb_str(b, e); }
		else sb_add(b, d + i, 1);
	}
}

static int dump_node(zhandle_t *zh, const char *path, struct sbuf *b)
{
	char *data;
	struct Stat st;
	int rc = tzk_get(zh, path, &data, &st);
	if (rc != ZOK) return rc;
	sb_str(b, path);
	if (st.ephemeralOwner) sb_str(b, " [E]");
	if (data) {
		sb_str(b, " = ");
		sb_escaped(b, data, (size_t)st.dataLength);
	}
	sb_str(b, "\n");
	free(data);
	struct String_vector v;
	rc = tzk_children(zh, path, &v);
	if (rc == ZNONODE) return ZOK;   /* it went meanwhile */
	if (rc != ZOK) return rc;
	int top = strcmp(path, "/") == 0;
	for (int i = 0; i < v.count && rc == ZOK; i++) {
		if (top && !strcmp(v.data[i], "zookeeper")) continue;
		char *c = child_path(path, v.data[i]);
		if (!c) { rc = ZSYSTEMERROR; break; }
		rc = dump_node(zh, c, b);
		if (rc == ZNONODE) rc = ZOK;
		free(c);
	}
	deallocate_String_vector(&v);
	return rc;
}

char *tzk_dump(zhandle_t *zh, const char *path, int *rcp)
{
	struct sbuf b = { NULL, 0, 0, 0 };
	int rc = dump_node(zh, path, &b);
	if (rc == ZOK && b.oom) rc = ZSYSTEMERROR;
	if (rcp) *rcp = rc;
	if (rc != ZOK) { free(b.s); return NULL; }
	return b.s;
}
