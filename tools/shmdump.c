/* tools/shmdump.c: show what is in an ejob shared-memory segment.
 *
 * It reads a snapshot with pread (never mmap, never a write), so a live segment is left
 * untouched and a file that shrinks under it cannot crash it. Everything in the snapshot is
 * untrusted: geometry is checked with seg_check, every length is clamped, every frame decoded
 * with the same checks the supervisor applies. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ipc/frame.h"
#include "ipc/json.h"
#include "ipc/seg.h"
#include "ipc/shm.h"
#include "ipc/version.h"
#include "ipc/wait.h"

static const char usage_text[] =
"usage: shmdump [--json] SEGMENT\n"
"\n"
"Print an ejob shared-memory segment: header, worker table (pid, generation, state,\n"
"heartbeat age, held item) and every ring slot with its state and decoded frame.\n"
"Read-only: it never writes to the segment.\n"
"\n"
"SEGMENT is one of:\n"
"  PID        an ejob-supervisor's process id: every ejob segment it holds\n"
"             (memfds named ejob:*, found through /proc/PID/fd; same user or root)\n"
"  PATH       a segment file: /proc/PID/fd/N, or a copy saved with cp\n"
"\n"
"  --json     one JSON document: {\"segments\":[...]}\n"
"  --version  print \"ejob X.Y.Z\"\n"
"  --help     this text\n"
"\n"
"Exit status: 0 shown; 2 not a readable ejob segment (the reason is printed), or bad usage.\n";

struct dump {
	int json;
	frame_decoder_t *dec;
	json_buf_t out;      /* --json document */
	int nseg;
	uint64_t now_ns;
};

static const char *worker_state_name(uint32_t s)
{
	static const char *const n[] = { "empty", "starting", "idle", "busy", "stopping", "dead" };
	return s < sizeof n / sizeof n[0] ? n[s] : "?";
}

static const char *slot_state_name(unsigned st, int comp)
{
	switch (st) {
	case SLOT_FREE: return "free";
	case SLOT_READY: return "ready";
	case SLOT_CLAIMED: return comp ? "writing" : "claimed";
	default: return "skip";
	}
}

/* ---- frames: one text line, or one JSON object ----------------------------------------------- */

static void qstr(json_buf_t *b, const char *k, const char *v)
{
	json_raw(b, " ");
	json_raw(b, k);
	json_raw(b, "=");
	json_cstr(b, v, JSON_PLAIN);
}

static void num(json_buf_t *b, const char *k, uint64_t v)
{
	char t[64];
	snprintf(t, sizeof t, " %s=%" PRIu64, k, v);
	json_raw(b, t);
}

static void jnum(json_buf_t *b, const char *k, uint64_t v, int *first)
{
	json_key(b, k, *first);
	*first = 0;
	json_u64(b, v);
}

static void jstr(json_buf_t *b, const char *k, const char *v, int *first)
{
	json_key(b, k, *first);
	*first = 0;
	json_cstr(b, v, JSON_PLAIN);
}

/* Decode a frame copied out of the snapshot into b: text or JSON. type 0: from the header. */
static void frame_out(struct dump *d, json_buf_t *b, const unsigned char *data, uint32_t len)
{
	struct frame_err fe;
	unsigned type = frame_peek_type(data, len);
	if (type == FRAME_SUBMIT) {
		struct frame_submit f;
		if (frame_decode_submit(d->dec, data, len, &f, &fe) == 0) {
			if (d->json) {
				int first = 1;
				json_raw(b, "{");
				jstr(b, "type", "submit", &first);
				jnum(b, "xid", f.xid, &first);
				jstr(b, "job", f.job, &first);
				jnum(b, "item", f.item, &first);
				jnum(b, "total", f.total, &first);
				jnum(b, "attempt", f.attempt, &first);
				jnum(b, "fire", f.fire_id, &first);
				jnum(b, "epoch", f.epoch, &first);
				jnum(b, "deadline", f.deadline_ms, &first);
				jstr(b, "task", f.task_id, &first);
				jstr(b, "iparam", f.item_param, &first);
				jstr(b, "jparam", f.job_param, &first);
				if (f.kind) jstr(b, "kind", frame_kind_name(f.kind), &first);
				if (f.cmd) jstr(b, "cmd", f.cmd, &first);
				if (f.lib) jstr(b, "lib", f.lib, &first);
				if (f.sym) jstr(b, "sym", f.sym, &first);
				if (f.method) jstr(b, "method", f.method, &first);
				if (f.uri) jstr(b, "uri", f.uri, &first);
				json_raw(b, "}");
			} else {
				json_raw(b, "submit");
				num(b, "xid", f.xid);
				qstr(b, "job", f.job);
				char t[64];
				snprintf(t, sizeof t, " item=%" PRIu32 "/%" PRIu32, f.item, f.total);
				json_raw(b, t);
				num(b, "attempt", f.attempt);
				num(b, "fire", f.fire_id);
				num(b, "epoch", f.epoch);
				num(b, "deadline", f.deadline_ms);
				qstr(b, "task", f.task_id);
				qstr(b, "iparam", f.item_param);
				qstr(b, "jparam", f.job_param);
				if (f.kind) { json_raw(b, " kind="); json_raw(b, frame_kind_name(f.kind)); }
				if (f.cmd) qstr(b, "cmd", f.cmd);
				if (f.lib) qstr(b, "lib", f.lib);
				if (f.sym) qstr(b, "sym", f.sym);
				if (f.method) qstr(b, "method", f.method);
				if (f.uri) qstr(b, "uri", f.uri);
			}
			return;
		}
	} else if (type == FRAME_COMPLETE) {
		struct frame_complete f;
		if (frame_decode_complete(d->dec, data, len, &f, &fe) == 0) {
			if (d->json) {
				int first = 1;
				json_raw(b, "{");
				jstr(b, "type", "complete", &first);
				jnum(b, "xid", f.xid, &first);
				jstr(b, "job", f.job, &first);
				jnum(b, "item", f.item, &first);
				jnum(b, "attempt", f.attempt, &first);
				jnum(b, "fire", f.fire_id, &first);
				jnum(b, "epoch", f.epoch, &first);
				jstr(b, "task", f.task_id, &first);
				jstr(b, "status", frame_status_name(f.status), &first);
				json_key(b, "code", 0);
				json_i64(b, f.exit_code);
				jnum(b, "signal", (uint64_t)f.signal, &first);
				jnum(b, "dur_us", f.duration_us, &first);
				jstr(b, "err", f.error, &first);
				json_raw(b, "}");
			} else {
				json_raw(b, "complete");
				num(b, "xid", f.xid);
				qstr(b, "job", f.job);
				num(b, "item", f.item);
				num(b, "attempt", f.attempt);
				num(b, "fire", f.fire_id);
				num(b, "epoch", f.epoch);
				qstr(b, "task", f.task_id);
				json_raw(b, " status=");
				json_raw(b, frame_status_name(f.status));
				char t[96];
				snprintf(t, sizeof t, " code=%" PRId32 " signal=%" PRId32 " dur=%" PRIu64 "us",
				         f.exit_code, f.signal, f.duration_us);
				json_raw(b, t);
				qstr(b, "err", f.error);
			}
			return;
		}
	} else {
		fe.code = FRAME_E_TYPE;
		snprintf(fe.msg, sizeof fe.msg, len < FRAME_HDR_LEN ? "%u bytes, no frame header" : "unknown frame type %u",
		         len < FRAME_HDR_LEN ? len : type);
	}
	if (d->json) {
		json_raw(b, "{\"error\":");
		char t[240];
		snprintf(t, sizeof t, "%s: %s", frame_errc_name(fe.code), fe.msg);
		json_cstr(b, t, JSON_PLAIN);
		json_raw(b, "}");
	} else {
		json_raw(b, "undecodable (");
		json_raw(b, frame_errc_name(fe.code));
		json_raw(b, "): ");
		json_raw(b, fe.msg);
	}
}

/* ---- one segment ---------------------------------------------------------------------------- */

static void fmt_age(char *t, size_t n, uint64_t now, uint64_t then)
{
	if (!then) snprintf(t, n, "never");
	else if (then > now) snprintf(t, n, "in the future");
	else snprintf(t, n, "%.3fs", (double)(now - then) / 1e9);
}

static void dump_text(struct dump *d, const char *src, const unsigned char *base, size_t size)
{
	const struct shm_header *h = (const void *)base;
	json_buf_t b;
	json_init(&b);
	char t[512], age[96];
	time_t ct = (time_t)(h->created_ns / 1000000000u);
	struct tm tm;
	char when[64] = "?";
	if (gmtime_r(&ct, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	char name[sizeof h->name + 1];
	memcpy(name, h->name, sizeof h->name);
	name[sizeof h->name] = '\0';

	printf("segment %s (%s)\n", src, name);
	printf("  version %" PRIu32 ", %zu bytes, owner pid %" PRId32 " uid %" PRIu32 ", created %s\n", h->version, size,
	       h->owner_pid, h->owner_uid, when);
	uint64_t lease = atomic_load(&h->lease_deadline_ns);
	if (!lease) snprintf(age, sizeof age, "none");
	else if (lease > d->now_ns) snprintf(age, sizeof age, "%.3fs left", (double)(lease - d->now_ns) / 1e9);
	else snprintf(age, sizeof age, "expired %.3fs ago", (double)(d->now_ns - lease) / 1e9);
	uint64_t kill_ns = atomic_load(&h->lease_kill_ns);
	if (lease && kill_ns) {
		size_t l = strlen(age);
		if (kill_ns > d->now_ns)
			snprintf(age + l, sizeof age - l, " (kill in %.3fs)", (double)(kill_ns - d->now_ns) / 1e9);
		else
			snprintf(age + l, sizeof age - l, " (kill %.3fs ago)", (double)(d->now_ns - kill_ns) / 1e9);
	}
	char hb[64];
	fmt_age(hb, sizeof hb, d->now_ns, atomic_load(&h->sup_heartbeat_ns));
	printf("  generation %" PRIu64 ", lease %s, shutdown %s, supervisor heartbeat %s\n", atomic_load(&h->generation),
	       age, atomic_load(&h->shutdown) ? "yes" : "no", hb);
	printf("  submission ring: %" PRIu32 " slots x %" PRIu32 " bytes, head %" PRIu64 ", tail %" PRIu64
	       ", sleepers %" PRIu32 ", wakes %" PRIu64 "\n", h->sub_slots, h->sub_slot_size, atomic_load(&h->sub_head),
	       atomic_load(&h->sub_tail), atomic_load(&h->sub_sleepers), atomic_load(&h->sub_wakes));
	printf("  completion ring: %" PRIu32 " slots x %" PRIu32 " bytes, head %" PRIu64 ", tail %" PRIu64
	       ", supervisor sleeping %s, wakes %" PRIu64 "\n", h->comp_slots, h->comp_slot_size,
	       atomic_load(&h->comp_head), atomic_load(&h->comp_tail), atomic_load(&h->comp_sleeping) ? "yes" : "no",
	       atomic_load(&h->comp_wakes));

	printf("workers: %" PRIu32 "\n", h->nworkers);
	printf("  %-4s %-8s %-5s %-9s %-10s %-7s %s\n", "#", "pid", "gen", "state", "heartbeat", "items", "held");
	const struct shm_worker *w = (const void *)(base + h->workers_off);
	uint32_t held_max = h->sub_slot_size - SHM_SLOT_HDR;
	for (uint32_t i = 0; i < h->nworkers; i++) {
		fmt_age(age, sizeof age, d->now_ns, atomic_load(&w[i].heartbeat_ns));
		uint64_t hp = atomic_load(&w[i].held_pos);
		b.len = 0;
		if (hp) {
			uint32_t hl = atomic_load(&w[i].held_len);
			if (hl > held_max) hl = held_max;
			snprintf(t, sizeof t, "pos %" PRIu64 ": ", hp - 1);
			json_raw(&b, t);
			frame_out(d, &b, base + h->held_off + (uint64_t)i * h->sub_slot_size, hl);
		} else {
			json_raw(&b, "-");
		}
		uint32_t cancel = atomic_load(&w[i].cancel);
		printf("  %-4" PRIu32 " %-8" PRId32 " %-5" PRIu32 " %-9s %-10s %-7" PRIu32 " %s%s\n", i, atomic_load(&w[i].pid),
		       atomic_load(&w[i].gen), worker_state_name(atomic_load(&w[i].state)), age, atomic_load(&w[i].items),
		       cancel ? "[cancel requested] " : "", b.p ? b.p : "");
	}

	for (int comp = 0; comp <= 1; comp++) {
		uint32_t n = comp ? h->comp_slots : h->sub_slots;
		uint32_t cap = (comp ? h->comp_slot_size : h->sub_slot_size) - SHM_SLOT_HDR;
		printf("%s ring:\n", comp ? "completion" : "submission");
		for (uint32_t i = 0; i < n; i++) {
			const struct shm_slot *sl = seg_slot_at(base, comp, i);
			uint64_t c = atomic_load(&sl->ctl);
			unsigned st = SLOT_STATE(c);
			printf("  slot %-4" PRIu32 " %-7s seq %" PRIu32, i, slot_state_name(st, comp), SLOT_SEQ(c));
			if (st == SLOT_CLAIMED || (comp && st == SLOT_READY))
				printf(" by worker %u gen %u", SLOT_OWNER(c), SLOT_GEN(c));
			if (st == SLOT_READY || st == SLOT_CLAIMED) {
				uint32_t len = sl->len;
				if (comp && sl->ref) printf(" for pos %" PRIu64, sl->ref - 1);
				if (len > cap) {
					printf(" len %" PRIu32 " exceeds the slot's %" PRIu32 " bytes", len, cap);
				} else if (st == SLOT_READY || !comp) {
					b.len = 0;
					frame_out(d, &b, sl->data, len);
					printf(" len %" PRIu32 ": %s", len, b.p ? b.p : "");
				}
			}
			printf("\n");
		}
	}
	json_free(&b);
}

static void dump_json(struct dump *d, const char *src, const unsigned char *base, size_t size)
{
	const struct shm_header *h = (const void *)base;
	json_buf_t *b = &d->out;
	int first = 1;
	if (d->nseg++) json_raw(b, ",");
	json_raw(b, "{");
	jstr(b, "source", src, &first);
	char name[sizeof h->name + 1];
	memcpy(name, h->name, sizeof h->name);
	name[sizeof h->name] = '\0';
	json_key(b, "header", 0);
	first = 1;
	json_raw(b, "{");
	jstr(b, "name", name, &first);
	jnum(b, "version", h->version, &first);
	jnum(b, "size", size, &first);
	jnum(b, "owner_pid", (uint64_t)h->owner_pid, &first);
	jnum(b, "owner_uid", h->owner_uid, &first);
	jnum(b, "created_ns", h->created_ns, &first);
	jnum(b, "generation", atomic_load(&h->generation), &first);
	jnum(b, "lease_deadline_ns", atomic_load(&h->lease_deadline_ns), &first);
	jnum(b, "lease_kill_ns", atomic_load(&h->lease_kill_ns), &first);
	jnum(b, "shutdown", atomic_load(&h->shutdown), &first);
	jnum(b, "nworkers", h->nworkers, &first);
	jnum(b, "sub_slots", h->sub_slots, &first);
	jnum(b, "sub_slot_size", h->sub_slot_size, &first);
	jnum(b, "sub_head", atomic_load(&h->sub_head), &first);
	jnum(b, "sub_tail", atomic_load(&h->sub_tail), &first);
	jnum(b, "sub_sleepers", atomic_load(&h->sub_sleepers), &first);
	jnum(b, "sub_wakes", atomic_load(&h->sub_wakes), &first);
	jnum(b, "comp_slots", h->comp_slots, &first);
	jnum(b, "comp_slot_size", h->comp_slot_size, &first);
	jnum(b, "comp_head", atomic_load(&h->comp_head), &first);
	jnum(b, "comp_tail", atomic_load(&h->comp_tail), &first);
	jnum(b, "comp_sleeping", atomic_load(&h->comp_sleeping), &first);
	jnum(b, "comp_wakes", atomic_load(&h->comp_wakes), &first);
	json_raw(b, "}");

	json_key(b, "workers", 0);
	json_raw(b, "[");
	const struct shm_worker *w = (const void *)(base + h->workers_off);
	uint32_t held_max = h->sub_slot_size - SHM_SLOT_HDR;
	for (uint32_t i = 0; i < h->nworkers; i++) {
		if (i) json_raw(b, ",");
		first = 1;
		json_raw(b, "{");
		jnum(b, "index", i, &first);
		json_key(b, "pid", 0);
		json_i64(b, atomic_load(&w[i].pid));
		jnum(b, "gen", atomic_load(&w[i].gen), &first);
		jstr(b, "state", worker_state_name(atomic_load(&w[i].state)), &first);
		uint64_t hb = atomic_load(&w[i].heartbeat_ns);
		json_key(b, "heartbeat_age_ms", 0);
		if (!hb || hb > d->now_ns) json_raw(b, "null");
		else json_u64(b, (d->now_ns - hb) / 1000000);
		jnum(b, "items", atomic_load(&w[i].items), &first);
		jnum(b, "cancel", atomic_load(&w[i].cancel), &first);
		uint64_t hp = atomic_load(&w[i].held_pos);
		json_key(b, "held", 0);
		if (hp) {
			uint32_t hl = atomic_load(&w[i].held_len);
			if (hl > held_max) hl = held_max;
			json_raw(b, "{\"pos\":");
			json_u64(b, hp - 1);
			json_raw(b, ",\"frame\":");
			frame_out(d, b, base + h->held_off + (uint64_t)i * h->sub_slot_size, hl);
			json_raw(b, "}");
		} else {
			json_raw(b, "null");
		}
		json_raw(b, "}");
	}
	json_raw(b, "]");

	for (int comp = 0; comp <= 1; comp++) {
		uint32_t n = comp ? h->comp_slots : h->sub_slots;
		uint32_t cap = (comp ? h->comp_slot_size : h->sub_slot_size) - SHM_SLOT_HDR;
		json_key(b, comp ? "completion" : "submission", 0);
		json_raw(b, "[");
		for (uint32_t i = 0; i < n; i++) {
			const struct shm_slot *sl = seg_slot_at(base, comp, i);
			uint64_t c = atomic_load(&sl->ctl);
			unsigned st = SLOT_STATE(c);
			if (i) json_raw(b, ",");
			first = 1;
			json_raw(b, "{");
			jnum(b, "slot", i, &first);
			jstr(b, "state", slot_state_name(st, comp), &first);
			jnum(b, "seq", SLOT_SEQ(c), &first);
			if (st == SLOT_CLAIMED || (comp && st == SLOT_READY)) {
				jnum(b, "worker", SLOT_OWNER(c), &first);
				jnum(b, "worker_gen", SLOT_GEN(c), &first);
			}
			if (st == SLOT_READY || st == SLOT_CLAIMED) {
				uint32_t len = sl->len;
				jnum(b, "len", len, &first);
				if (comp && sl->ref) jnum(b, "for_pos", sl->ref - 1, &first);
				if (len > cap) {
					jstr(b, "error", "length exceeds the slot", &first);
				} else if (st == SLOT_READY || !comp) {
					json_key(b, "frame", 0);
					frame_out(d, b, sl->data, len);
				}
			}
			json_raw(b, "}");
		}
		json_raw(b, "]");
	}
	json_raw(b, "}");
}

/* Read a whole segment file into memory; 0, or -1 with a one-line reason. */
static int snapshot(const char *path, unsigned char **buf, size_t *size, char *why, size_t wl)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, wl, "cannot open: %s%s", strerror(errno),
		         errno == EACCES ? " (run as the supervisor's user, or root)" : "");
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, wl, "not a regular file or memfd");
		close(fd);
		return -1;
	}
	if (st.st_size < (off_t)SHM_HDR_SIZE) {
		snprintf(why, wl, "truncated: %lld bytes is smaller than a segment header (%u)", (long long)st.st_size,
		         SHM_HDR_SIZE);
		close(fd);
		return -1;
	}
	if ((uint64_t)st.st_size > SEG_MAX_SIZE) {
		snprintf(why, wl, "%lld bytes is larger than any segment (%llu)", (long long)st.st_size, SEG_MAX_SIZE);
		close(fd);
		return -1;
	}
	size_t n = (size_t)st.st_size, got = 0;
	unsigned char *p = malloc(n);
	if (!p) {
		snprintf(why, wl, "out of memory for %zu bytes", n);
		close(fd);
		return -1;
	}
	while (got < n) {
		ssize_t r = pread(fd, p + got, n - got, (off_t)got);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) break;
		got += (size_t)r;
	}
	close(fd);
	*buf = p;
	*size = got;   /* a file that shrank while read is judged by what was read */
	return 0;
}

static int dump_one(struct dump *d, const char *path)
{
	unsigned char *buf = NULL;
	size_t size = 0;
	char why[256];
	if (snapshot(path, &buf, &size, why, sizeof why) < 0 || seg_check(buf, size, why, sizeof why) < 0) {
		fprintf(stderr, "shmdump: %s: %s\n", path, why);
		free(buf);
		return 2;
	}
	if (d->json) dump_json(d, path, buf, size);
	else dump_text(d, path, buf, size);
	free(buf);
	return 0;
}

static int by_pid(struct dump *d, const char *pidstr)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%s/fd", pidstr);
	DIR *dp = opendir(dir);
	if (!dp) {
		fprintf(stderr, "shmdump: process %s: %s%s\n", pidstr, errno == ENOENT ? "no such process" : strerror(errno),
		        errno == EACCES ? " (run as the supervisor's user, or root)" : "");
		return 2;
	}
	/* collect fd numbers in order */
	static int fds[4096];
	int n = 0;
	struct dirent *de;
	while ((de = readdir(dp)) && n < 4096) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9') continue;
		char link[512], target[256];
		if ((size_t)snprintf(link, sizeof link, "%s/%s", dir, de->d_name) >= sizeof link) continue;
		ssize_t l = readlink(link, target, sizeof target - 1);
		if (l <= 0) continue;
		target[l] = '\0';
		if (!strncmp(target, "/memfd:" SEG_MEMFD_PREFIX, 7 + strlen(SEG_MEMFD_PREFIX)))
			fds[n++] = atoi(de->d_name);
	}
	closedir(dp);
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			int t = fds[j]; fds[j] = fds[j - 1]; fds[j - 1] = t;
		}
	if (!n) {
		fprintf(stderr, "shmdump: process %s holds no ejob segments (is it an ejob-supervisor?)\n", pidstr);
		return 2;
	}
	int rc = 0;
	for (int i = 0; i < n; i++) {
		char path[128];
		snprintf(path, sizeof path, "%s/%d", dir, fds[i]);
		if (dump_one(d, path)) rc = 2;
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct dump d = { 0 };
	const char *seg = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) d.json = 1;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { fputs(usage_text, stdout); return 0; }
		else if (!strcmp(argv[i], "--version")) { printf("ejob %s\n", EJOB_VERSION); return 0; }
		else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "shmdump: unknown option '%s'; see shmdump --help\n", argv[i]);
			return 2;
		} else if (seg) {
			fprintf(stderr, "shmdump: one SEGMENT only; see shmdump --help\n");
			return 2;
		} else seg = argv[i];
	}
	if (!seg) {
		fputs(usage_text, stderr);
		return 2;
	}
	d.dec = frame_decoder_new(FRAME_MAX_LEN);
	if (!d.dec) {
		fprintf(stderr, "shmdump: out of memory\n");
		return 1;
	}
	d.now_ns = wait_now_ns();
	json_init(&d.out);
	if (d.json) json_raw(&d.out, "{\"segments\":[");

	int rc;
	if (strspn(seg, "0123456789") == strlen(seg)) rc = by_pid(&d, seg);
	else rc = dump_one(&d, seg);

	if (d.json && d.nseg) {
		json_raw(&d.out, "]}\n");
		if (d.out.oom) {
			fprintf(stderr, "shmdump: out of memory\n");
			rc = 1;
		} else {
			fputs(d.out.p, stdout);
		}
	}
	json_free(&d.out);
	frame_decoder_free(d.dec);
	return rc;
}
