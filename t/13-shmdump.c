/* t/13-shmdump.c: tools/shmdump against a live segment (found by pid) and against copies of it
 * that are corrupt, truncated or foreign: exact output, one-line reasons, exit 2, no crash. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/frame.h"
#include "ipc/ring.h"
#include "ipc/seg.h"
#include "t/lib/tlib.h"
#include "t/tap.h"

static char *out, *err;
static char path[400];

static int run2(const char *a1, const char *a2)
{
	const char *argv[] = { BUILT("tools/shmdump"), a1, a2, NULL };
	free(out);
	free(err);
	return tlib_run(argv, &out, &err);
}

static int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; p && *p; ) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		if (l == n && !memcmp(p, line, n)) return 1;
		p = nl ? nl + 1 : NULL;
	}
	return 0;
}

static int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++) n += *s == '\n';
	return n;
}

#define LINE(text, want, name) do { \
	if (!ok(has_line(text, want), "%s", name)) diag("  wanted line: '%s'\n  output:\n%s", want, text); } while (0)

static seg_t *s;

static void publish(uint64_t xid, uint32_t item, const char *iparam)
{
	struct frame_submit f = {
		.xid = xid, .fire_id = 7, .epoch = 42, .item = item, .total = 4, .attempt = 1, .kind = FRAME_KIND_SCRIPT,
		.job = "dumpjob", .task_id = "dumpjob@-@0,1,2@-@READY@-@127.0.0.1@-@99", .item_param = iparam,
		.job_param = "", .cmd = "/bin/true",
	};
	unsigned char b[512];
	long n = frame_encode_submit(&f, b, sizeof b);
	if (n < 0 || ring_publish(s, b, (uint32_t)n) < 0) BAIL_OUT("publish failed");
}

/* a perl one-liner: parse stdin as JSON and print the given expression */
static char *perl_json(const char *json, const char *expr)
{
	char file[600];
	snprintf(file, sizeof file, "%s/doc.json", tlib_tmpdir());
	tlib_write_file(file, json, strlen(json));
	char prog[1024];
	snprintf(prog, sizeof prog,
	         "use JSON::PP; local $/; open my $f, '<', '%s' or die; my $d = decode_json(<$f>); print %s;",
	         file, expr);
	const char *argv[] = { "/usr/bin/perl", "-e", prog, NULL };
	char *o, *e;
	int st = tlib_run(argv, &o, &e);
	if (st != 0) diag("perl: %s", e);
	free(e);
	return o;
}

static void test_live(void)
{
	char e[256];
	struct seg_params p = { .nworkers = 3, .sub_slots = 8, .sub_slot_size = 512, .comp_slots = 4, .name = "pool" };
	if (seg_create(&p, &s, e, sizeof e) < 0) BAIL_OUT("seg_create: %s", e);
	seg_t *w0, *w1;
	seg_attach(seg_memfd(s), -1, &w0, e, sizeof e);
	seg_attach(seg_memfd(s), -1, &w1, e, sizeof e);
	struct shm_worker *e0 = seg_worker(s, 0), *e1 = seg_worker(s, 1);
	atomic_store(&e0->gen, 1); atomic_store(&e0->pid, 4001);
	atomic_store(&e1->gen, 2); atomic_store(&e1->pid, 4002);
	ring_bind(w0, 0);
	ring_bind(w1, 1);

	publish(100, 0, "a");
	publish(101, 1, "b=\"q\"");
	publish(102, 2, "c\"\t");
	unsigned char b[512];
	ring_claim(w0, b, sizeof b);              /* worker 0 runs xid 100 */
	ring_heartbeat(w0, WRK_BUSY);
	ring_claim(w1, b, sizeof b);              /* worker 1 ran xid 101, failed */
	struct frame_complete c = { .xid = 101, .fire_id = 7, .epoch = 42, .item = 1, .attempt = 1,
	                            .status = FRAME_ST_FAILED, .exit_code = 3, .duration_us = 1500, .job = "dumpjob",
	                            .task_id = "t", .error = "exit 3" };
	long cn = frame_encode_complete(&c, b, sizeof b);
	ring_complete(w1, b, (uint32_t)cn);
	ring_heartbeat(w1, WRK_IDLE);

	char pid[32];
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	int st = run2(pid, NULL);
	is_int(st, 0, "shmdump PID exits 0");
	char want[512];
	snprintf(want, sizeof want, "segment /proc/%d/fd/%d (pool)", (int)getpid(), seg_memfd(s));
	LINE(out, want, "segment found by pid through /proc/PID/fd");
	LINE(out, "  submission ring: 8 slots x 512 bytes, head 3, tail 2, sleepers 0, wakes 0", "submission ring summary");
	LINE(out, "  completion ring: 4 slots x 512 bytes, head 1, tail 0, supervisor sleeping no, wakes 0",
	     "completion ring summary");
	LINE(out, "workers: 3", "worker count");
	ok(strstr(out, "\n  0    4001     1     busy      0.0") != NULL, "worker 0: pid, gen, busy, fresh heartbeat");
	LINE(out, "  2    0        0     empty     never      0       -", "worker 2: empty, never heard from");
	const char *row0 = strstr(out, "\n  0    4001");
	ok(row0 && strstr(row0, "pos 0: submit xid=100 job=\"dumpjob\" item=0/4 attempt=1 fire=7 epoch=42 deadline=0 "
	                        "task=\"dumpjob@-@0,1,2@-@READY@-@127.0.0.1@-@99\" iparam=\"a\" jparam=\"\" kind=script "
	                        "cmd=\"/bin/true\"\n"),
	   "worker 0's held item decoded in full");
	ok(strstr(out, "\n  1    4002     2     idle      0.0") && strstr(out, " 1       -\n"),
	   "worker 1: idle, 1 item done, nothing held");
	LINE(out, "  slot 0    free    seq 8", "submission slot 0: claimed and freed for the next lap");
	LINE(out, "  slot 2    ready   seq 2 len 161: submit xid=102 job=\"dumpjob\" item=2/4 attempt=1 fire=7 epoch=42 "
	          "deadline=0 task=\"dumpjob@-@0,1,2@-@READY@-@127.0.0.1@-@99\" iparam=\"c\\\"\\t\" jparam=\"\" kind=script "
	          "cmd=\"/bin/true\"", "submission slot 2: published frame decoded, quote and tab escaped");
	LINE(out, "  slot 3    free    seq 3", "submission slot 3: free");
	ok(strstr(out, "completion ring:\n  slot 0    ready   seq 0 by worker 1 gen 2 for pos 1 len ") &&
	   strstr(out, ": complete xid=101 job=\"dumpjob\" item=1 attempt=1 fire=7 epoch=42 task=\"t\" status=failed "
	               "code=3 signal=0 dur=1500us err=\"exit 3\"\n"),
	   "completion slot 0: owner, position and decoded result");
	is_int(count_lines(out), 5 + 2 + 3 + 1 + 8 + 1 + 4, "one line per header field, worker and slot");


	/* JSON, parsed by an independent parser */
	st = run2("--json", pid);
	is_int(st, 0, "--json exits 0");
	char *v = perl_json(out, "scalar(@{$d->{segments}}), ' ', $d->{segments}[0]{header}{nworkers}, ' ', "
	                         "$d->{segments}[0]{workers}[0]{state}, ' ', $d->{segments}[0]{workers}[0]{held}{frame}{xid}, ' ', "
	                         "($d->{segments}[0]{submission}[2]{frame}{iparam} eq qq(c\"\t) ? 'c-quote-tab' : 'wrong'), ' ', $d->{segments}[0]{completion}[0]{frame}{status}, ' ', "
	                         "$d->{segments}[0]{completion}[0]{worker}, ' ', "
	                         "(defined $d->{segments}[0]{workers}[2]{heartbeat_age_ms} ? 'def' : 'null')");
	is_str(v, "1 3 busy 100 c-quote-tab failed 1 null", "JSON parses and carries the same facts");
	free(v);

	/* read-only: the segment is byte-for-byte the same after a dump */
	unsigned char *before = malloc(seg_size(s));
	memcpy(before, seg_header(s), seg_size(s));
	run2(pid, NULL);
	ok(!memcmp(before, seg_header(s), seg_size(s)), "dumping changed nothing in the segment");
	free(before);

	/* save a copy for the corruption tests */
	snprintf(path, sizeof path, "%s/seg.copy", tlib_tmpdir());
	tlib_write_file(path, seg_header(s), seg_size(s));
	st = run2(path, NULL);
	is_int(st, 0, "a saved copy dumps");
	snprintf(want, sizeof want, "segment %s (pool)", path);
	LINE(out, want, "  named by its path");
	seg_close(w0);
	seg_close(w1);
}

static void corrupt(const char *name, size_t off, const void *bytes, size_t n, long newsize, const char *why)
{
	size_t size = seg_size(s);
	unsigned char *img = malloc(size);
	memcpy(img, seg_header(s), size);
	if (bytes) memcpy(img + off, bytes, n);
	char p[600];
	snprintf(p, sizeof p, "%s/%s", tlib_tmpdir(), name);
	tlib_write_file(p, img, newsize >= 0 ? (size_t)newsize : size);
	free(img);
	int st = run2(p, NULL);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 2, "%s: exit 2", name);
	char want[800];
	snprintf(want, sizeof want, "shmdump: %s: %s\n", p, why);
	is_str(err, want, "  one-line reason");
	is_str(out, "", "  nothing on stdout");
}

static void test_corrupt(void)
{
	size_t size = seg_size(s);
	char t[200];
	snprintf(t, sizeof t, "truncated: header says %zu bytes, the segment has %zu", size, size / 2);
	corrupt("half", 0, NULL, 0, (long)(size / 2), t);
	corrupt("empty", 0, NULL, 0, 0, "truncated: 0 bytes is smaller than a segment header (4096)");
	uint64_t magic = 0x4c45464f4d4f4f46ULL;
	corrupt("foreign", 0, &magic, 8, -1, "not an ejob segment (magic 0x4c45464f4d4f4f46)");
	uint32_t v = 1;
	corrupt("version", offsetof(struct shm_header, version), &v, 4, -1,
	        "segment layout version 1, this build reads version 2: use binaries from the same ejob release as the supervisor");
	v = 3;
	corrupt("slots", offsetof(struct shm_header, sub_slots), &v, 4, -1,
	        "ring slot counts 3/4 must be powers of two up to 65536");
	uint64_t off = 1ull << 40;
	snprintf(t, sizeof t, "corrupt geometry: regions at 4096/8192/%llu/16384 do not fit in order in %zu bytes",
	         (unsigned long long)off, size);
	corrupt("geometry", offsetof(struct shm_header, sub_off), &off, 8, -1, t);

	char d[600];
	snprintf(d, sizeof d, "%s/adir", tlib_tmpdir());
	mkdir(d, 0700);
	int st = run2(d, NULL);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 2 && count_lines(err) == 1 && strstr(err, "not a regular file"),
	   "a directory: exit 2, one line");

	/* garbage in every slot and the worker table, valid header: shown, never a crash */
	unsigned char *img = malloc(size);
	memcpy(img, seg_header(s), size);
	srand(99);
	for (size_t i = SHM_HDR_SIZE; i < size; i++) img[i] = (unsigned char)rand();
	char p[600];
	snprintf(p, sizeof p, "%s/garbage", tlib_tmpdir());
	tlib_write_file(p, img, size);
	st = run2(p, NULL);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "random slots and workers under a valid header: exit 0");
	ok(strstr(out, "undecodable") || strstr(out, "exceeds the slot"), "  bad frames are reported as such");
	st = run2("--json", p);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "  also with --json");
	char *pv = perl_json(out, "scalar(@{$d->{segments}[0]{submission}})");
	is_str(pv, "8", "  and the JSON stays valid");
	free(pv);

	/* random damage anywhere, 300 times: exit 0 or 2, never a signal */
	int crashes = 0, other = 0;
	for (int k = 0; k < 300; k++) {
		memcpy(img, seg_header(s), size);
		int nbytes = 1 + rand() % 8;
		for (int j = 0; j < nbytes; j++) {
			size_t at = (size_t)rand() % (k % 3 == 0 ? 256 : size);
			img[at] = (unsigned char)rand();
		}
		size_t len = k % 5 == 0 ? (size_t)rand() % size : size;
		tlib_write_file(p, img, len);
		st = run2(k % 2 ? "--json" : p, k % 2 ? p : NULL);
		if (WIFSIGNALED(st)) crashes++;
		else if (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 2) other++;
	}
	is_int(crashes, 0, "300 random corruptions: no crash");
	is_int(other, 0, "300 random corruptions: exit status always 0 or 2");
	free(img);
}

static void test_usage(void)
{
	int st = run2("--help", NULL);
	ok(st == 0 && strstr(out, "usage: shmdump [--json] SEGMENT"), "--help");
	st = run2(NULL, NULL);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 2, "no argument: exit 2");
	st = run2("--bogus", "x");
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 2, "unknown option: exit 2");
	is_str(err, "shmdump: unknown option '--bogus'; see shmdump --help\n", "  saying so");
	st = run2("1", NULL);   /* init: not ours */
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 2 && count_lines(err) == 1, "pid 1: exit 2, one line: %s", err);
}

int main(void)
{
	tlib_init(120);
	plan(49);
	test_live();
	test_corrupt();
	test_usage();
	seg_close(s);
	free(out);
	free(err);
	return done_testing();
}
