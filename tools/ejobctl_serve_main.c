/* tools/ejobctl_serve_main.c: the command `ejobctl serve`: its arguments, TLS, users and audit
 * files, the session and the model, then libmicrohttpd's daemon until SIGINT or SIGTERM; under
 * systemd (Type=notify, dist/ejob-console.service) READY=1, WATCHDOG=1 and STOPPING=1. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>
#include <systemd/sd-daemon.h>

#include "conf/conf.h"
#include "tools/ejobctl.h"
#include "ipc/logline.h"
#include "tools/ejobctl_serve_int.h"

/* ---- serve's own log ---------------------------------------------------------------------------- */

static int log_journal;         /* stderr is the journal (set once, before any thread) */

/* A line of serve's own log on stderr, whole in one write(2): "ejobctl serve: MESSAGE"; under
 * systemd (stderr is the journal: $JOURNAL_STREAM) first its syslog priority, <3> error, <4> warn,
 * <6> info, so that journalctl -p sorts the console's lines as it does the supervisor's. */
void srv_log(int level, const char *fmt, ...)
{
	static const char pri[] = { '3', '4', '6', '7' };
	char line[1024];
	size_t n = 0;
	if (log_journal && level >= LOGLINE_ERROR && level <= LOGLINE_DEBUG) {
		line[n++] = '<';
		line[n++] = pri[level];
		line[n++] = '>';
	}
	n += (size_t)snprintf(line + n, sizeof line - n, "ejobctl serve: ");
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
	va_end(ap);
	if (m < 0) m = 0;
	n += (size_t)m < sizeof line - n - 1 ? (size_t)m : sizeof line - n - 2;
	line[n++] = '\n';
	for (size_t off = 0; off < n;) {
		ssize_t w = write(2, line + off, n - off);
		if (w < 0 && errno == EINTR) continue;
		if (w <= 0) break;
		off += (size_t)w;
	}
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: ejobctl serve --listen ADDR:PORT (--zk HOSTS --namespace NS [--digest U:P] | -c FILE)\n"
	        "                     [--auth FILE] [--tls-cert FILE --tls-key FILE] [--audit FILE] [--pg URL] [--no-model]\n"
	        "       ejobctl serve --hash-password   (a password on stdin; its crypt(3) hash on stdout)\n"
	        "\n"
	        "The HTTP API (docs/api.md) on the cluster: /api/v1/..., /metrics, /healthz. Without --auth\n"
	        "it listens on loopback only; --auth FILE has lines name:HASH:role (viewer, operator, admin).\n"
	        "GET /api/v1/jobs answers from a model of the cluster kept from watches; --no-model reads\n"
	        "ZooKeeper for each request instead (as `ejobctl jobs --json`).\n");
}

static char *read_file(const char *what, const char *file)
{
	char *buf;
	size_t len;
	if (conf_read_file(file, &buf, &len) < 0) {
		srv_log(LOGLINE_ERROR, "%s %s: cannot read: %s", what, file, strerror(errno));
		return NULL;
	}
	return buf;
}

static int loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return 0;
}

/* The watchdog's question: does the daemon answer? A request of our own to the address it listens
 * on ("GET /", the console's page from memory: no ZooKeeper call, which could take a session
 * timeout while ZooKeeper is away, and a restart would not bring it back); any status line is an
 * answer. Over TLS the probe would need a TLS client: there a ping says the daemon is up (not
 * stopped), no more. 0 answered, -1 not within timeout_ms (why in buf). */
static int serving(const struct sockaddr_storage *sa, socklen_t salen, int tls, int timeout_ms, char *why, size_t len)
{
	if (tls) return 0;
	int fd = socket(sa->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) return snprintf(why, len, "socket: %s", strerror(errno)), -1;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	static const char req[] = "GET / HTTP/1.0\r\nHost: watchdog\r\n\r\n";
	size_t sent = 0;
	char got[16];
	size_t n = 0;
	int connected = connect(fd, (const struct sockaddr *)sa, salen) == 0;
	if (!connected && errno != EINPROGRESS) {
		snprintf(why, len, "connect: %s", strerror(errno));
		close(fd);
		return -1;
	}
	for (;;) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		long left = timeout_ms - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0) {
			snprintf(why, len, "no answer to GET / within %d ms", timeout_ms);
			break;
		}
		struct pollfd p = { .fd = fd, .events = sent < sizeof req - 1 ? POLLOUT : POLLIN };
		int r = poll(&p, 1, (int)left);
		if (r < 0 && errno == EINTR) continue;
		if (r < 0) {
			snprintf(why, len, "poll: %s", strerror(errno));
			break;
		}
		if (r == 0) continue;
		if (sent < sizeof req - 1) {
			ssize_t w = send(fd, req + sent, sizeof req - 1 - sent, MSG_NOSIGNAL);
			if (w < 0 && errno != EAGAIN && errno != EINTR) {
				snprintf(why, len, "send: %s", strerror(errno));
				break;
			}
			if (w > 0) sent += (size_t)w;
			continue;
		}
		ssize_t rd = recv(fd, got + n, sizeof got - n, 0);
		if (rd < 0 && (errno == EAGAIN || errno == EINTR)) continue;
		if (rd <= 0) {
			snprintf(why, len, "recv: %s", rd ? strerror(errno) : "closed before an answer");
			break;
		}
		n += (size_t)rd;
		if (n >= 9) {       /* "HTTP/1.x " */
			close(fd);
			if (!memcmp(got, "HTTP/1.", 7)) return 0;
			snprintf(why, len, "not an HTTP answer to GET /");
			return -1;
		}
	}
	close(fd);
	return -1;
}

int ejobctl_serve(int argc, char **argv)
{
	log_journal = logline_journal(2);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--hash-password")) return srv_hash_password();
	}
	struct ctl *c = &SRV.c;
	int r = ctl_options(c, "serve", &argc, argv);
	if (r) return r;
	const char *listen = NULL, *authf = NULL, *cert = NULL, *key = NULL, *auditf = NULL, *pg = NULL;
	int no_model = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-model")) {
			no_model = 1;
			continue;
		}
		const char **dst = !strcmp(argv[i], "--listen") ? &listen : !strcmp(argv[i], "--auth") ? &authf
		                   : !strcmp(argv[i], "--tls-cert") ? &cert : !strcmp(argv[i], "--tls-key") ? &key
		                   : !strcmp(argv[i], "--audit") ? &auditf : !strcmp(argv[i], "--pg") ? &pg : NULL;
		if (!dst) {
			srv_log(LOGLINE_ERROR, "unknown argument '%s'", argv[i]);
			usage(stderr);
			return 2;
		}
		if (i + 1 >= argc) {
			srv_log(LOGLINE_ERROR, "%s needs a value", argv[i]);
			return 2;
		}
		*dst = argv[++i];
	}
	SRV.pg = pg;
	if (!listen) {
		srv_log(LOGLINE_ERROR, "give --listen ADDR:PORT (e.g. --listen 127.0.0.1:8080)");
		return 2;
	}
	if (!cert != !key) {
		srv_log(LOGLINE_ERROR, "give --tls-cert FILE and --tls-key FILE together");
		return 2;
	}
	/* ADDR:PORT, [v6]:PORT */
	char host[256], port[16];
	const char *colon = strrchr(listen, ':');
	if (!colon || !colon[1] || (size_t)(colon - listen) >= sizeof host || strlen(colon + 1) >= sizeof port) {
		srv_log(LOGLINE_ERROR, "--listen %s: give ADDR:PORT (127.0.0.1:8080, [::1]:8080)", listen);
		return 2;
	}
	snprintf(host, sizeof host, "%.*s", (int)(colon - listen), listen);
	snprintf(port, sizeof port, "%s", colon + 1);
	if (host[0] == '[' && host[strlen(host) - 1] == ']') memmove(host, host + 1, strlen(host)), host[strlen(host) - 1] = 0;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE }, *ai;
	int g = getaddrinfo(host, port, &hints, &ai);
	if (g) {
		srv_log(LOGLINE_ERROR, "--listen %s: %s (give a numeric address and port: 127.0.0.1:8080)", listen,
		        gai_strerror(g));
		return 2;
	}
	if (!authf && !loopback(ai->ai_addr)) {
		srv_log(LOGLINE_ERROR, "--listen %s: without --auth, serve listens on loopback only (127.0.0.1, ::1): "
		        "give --auth FILE (lines name:HASH:role; 'ejobctl serve --hash-password' makes a HASH), or listen on "
		        "127.0.0.1:%s", listen, port);
		freeaddrinfo(ai);
		return 2;
	}
	if (authf && !(SRV.users = srv_users_load(authf))) {
		freeaddrinfo(ai);
		return 2;
	}
	if (auditf && srv_audit_open(auditf)) {
		freeaddrinfo(ai);
		return 2;
	}
	char *certpem = NULL, *keypem = NULL;
	if (cert) {
		if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
			srv_log(LOGLINE_ERROR, "this libmicrohttpd was built without TLS: --tls-cert cannot be served");
			return 2;
		}
		if (!(certpem = read_file("--tls-cert", cert)) || !(keypem = read_file("--tls-key", key))) return 2;
		/* what libmicrohttpd would refuse with only "cannot listen": said here, naming the file */
		if (!strstr(certpem, "-----BEGIN CERTIFICATE-----")) {
			srv_log(LOGLINE_ERROR, "--tls-cert %s: no PEM certificate in it (-----BEGIN CERTIFICATE-----): "
			        "give the server's certificate (chain) in PEM", cert);
			return 2;
		}
		if (!strstr(keypem, "-----BEGIN ") || !strstr(keypem, "PRIVATE KEY-----")) {
			srv_log(LOGLINE_ERROR, "--tls-key %s: no PEM private key in it (-----BEGIN ... PRIVATE KEY-----, "
			        "unencrypted): give the key of --tls-cert's certificate", key);
			return 2;
		}
		SRV.tls = 1;
	}
	/* the strings of -c FILE outlive a session that ctl_connect closes */
	CTL_NEED(c->hosts = strdup(c->hosts));
	CTL_NEED(c->ns = strdup(c->ns));
	if (c->digest) CTL_NEED(c->digest = strdup(c->digest));
	conf_free(c->conf);
	c->conf = NULL;
	c->kept = 1;
	c->ns_may_be_new = 1;       /* serve answers on an empty cluster; the first job's PUT makes it */
	/* Blocked before any thread starts (the ZooKeeper client's, the model's, MHD's): each inherits
	 * the mask. Blocked later, a SIGHUP could land on a ZooKeeper client thread that does not block
	 * it and end the process (t/123, under load: killed by SIGHUP). */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);   /* `kill -HUP` (a reload by habit) must not end it: said and ignored below */
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	char why[1024];
	if (!srv_session_ok(why, sizeof why))
		srv_log(LOGLINE_WARN, "%s; serving anyway (503 until it answers)", why);
	if (!no_model && (!(SRV.changes = changes_new()) || !(SRV.model = model_start(c, changes_job, SRV.changes)))) {
		srv_log(LOGLINE_ERROR, "cannot start the model's thread: %s", strerror(errno));
		return 1;
	}

	signal(SIGPIPE, SIG_IGN);
	/* a thread per connection: a read from the model never waits behind a command on ZooKeeper */
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0) |
	                 (SRV.tls ? MHD_USE_TLS : 0);
	struct MHD_Daemon *d;
	errno = 0;                  /* what the session's calls left is not the daemon's reason */
	if (SRV.tls)
		d = MHD_start_daemon(flags, 0, NULL, NULL, srv_on_request, NULL, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
		                     MHD_OPTION_NOTIFY_COMPLETED, srv_on_done, NULL, MHD_OPTION_CONNECTION_TIMEOUT, 30u,
		                     MHD_OPTION_HTTPS_MEM_CERT, certpem, MHD_OPTION_HTTPS_MEM_KEY, keypem, MHD_OPTION_END);
	else
		d = MHD_start_daemon(flags, 0, NULL, NULL, srv_on_request, NULL, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
		                     MHD_OPTION_NOTIFY_COMPLETED, srv_on_done, NULL, MHD_OPTION_CONNECTION_TIMEOUT, 30u,
		                     MHD_OPTION_END);
	struct sockaddr_storage self;
	socklen_t selflen = ai->ai_addrlen <= sizeof self ? (socklen_t)ai->ai_addrlen : 0;
	memcpy(&self, ai->ai_addr, selflen);
	freeaddrinfo(ai);
	if (!d) {
		/* libmicrohttpd printed its reason (a TLS setup's, GnuTLS's) above; errno may say nothing */
		const char *reason = errno ? strerror(errno) : "libmicrohttpd's reason above";
		if (SRV.tls)
			srv_log(LOGLINE_ERROR, "cannot listen on %s with --tls-cert %s --tls-key %s: %s (is the key the "
			        "certificate's?)", listen, cert, key, reason);
		else
			srv_log(LOGLINE_ERROR, "cannot listen on %s: %s", listen, reason);
		return 1;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	/* on stdout (scripts read the port there); under journald with its priority as the log's lines */
	printf("%sejobctl serve: listening on %s://%s%s%s:%u (namespace /%s at %s)\n", logline_journal(1) ? "<6>" : "",
	       SRV.tls ? "https" : "http",
	       strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "", di ? di->port : 0, c->ns, c->hosts);
	fflush(stdout);

	/* systemd (Type=notify): ready once the daemon listens; the watchdog pinged from here, at half
	 * its interval, only when the daemon answered a request of ours (serving() above), so a daemon
	 * that stopped answering is restarted; STOPPING=1 at SIGINT/SIGTERM. Without $NOTIFY_SOCKET,
	 * sd_notify does nothing. */
	uint16_t bound = di ? di->port : 0;
	if (self.ss_family == AF_INET) ((struct sockaddr_in *)&self)->sin_port = htons(bound);
	else if (self.ss_family == AF_INET6) ((struct sockaddr_in6 *)&self)->sin6_port = htons(bound);
	uint64_t wd_usec = 0;
	int wd = sd_watchdog_enabled(0, &wd_usec) > 0 && wd_usec >= 2000;
	sd_notifyf(0, "READY=1\nSTATUS=serving on %s (namespace /%s at %s)", listen, c->ns, c->hosts);
	struct timespec tick = { .tv_sec = (time_t)(wd_usec / 2 / 1000000), .tv_nsec = (long)(wd_usec / 2 % 1000000) * 1000 };
	int probe_ms = wd_usec / 4 / 1000 > 5000 ? 5000 : (int)(wd_usec / 4 / 1000);
	int missed = 0;
	for (;;) {
		int sig = sigtimedwait(&sigs, NULL, wd ? &tick : NULL);
		if (sig == SIGINT || sig == SIGTERM) break;
		if (sig == SIGHUP) {
			srv_log(LOGLINE_WARN, "SIGHUP ignored: serve reads its files (-c, --auth, --tls-*) when it starts; "
			        "restart it to read them again");
			continue;
		}
		if (sig >= 0 || errno != EAGAIN) continue;        /* EINTR */
		char probe[256];
		if (serving(&self, selflen, SRV.tls, probe_ms, probe, sizeof probe) == 0) {
			sd_notify(0, "WATCHDOG=1");
			if (missed) srv_log(LOGLINE_INFO, "answering again; the watchdog is pinged");
			missed = 0;
		} else if (!missed++) {
			srv_log(LOGLINE_WARN, "the watchdog is not pinged: %s", probe);
		}
	}
	sd_notify(0, "STOPPING=1");
	MHD_stop_daemon(d);
	model_stop(SRV.model);
	changes_free(SRV.changes);
	if (c->zh) zookeeper_close(c->zh);
	srv_users_free(SRV.users);
	free(certpem);
	free(keypem);
	return 0;
}
