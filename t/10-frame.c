/* t/10-frame.c: frame codec: CRC-32C, round trips, and every rejection path. */
#include <errno.h>
#include <msgpack.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/crc32c.h"
#include "ipc/frame.h"
#include "t/tap.h"

/* ---- building hostile frames by hand ------------------------------------------------------- */

static unsigned char frame[1 << 16];

static void le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16); p[3] = (unsigned char)(v >> 24);
}

/* header + payload with a correct length and checksum */
static size_t wrap(unsigned type, const void *payload, size_t plen)
{
	le32(frame, (uint32_t)(FRAME_HDR_LEN + plen));
	frame[4] = (unsigned char)type;
	frame[5] = FRAME_VERSION;
	frame[6] = frame[7] = 0;
	memcpy(frame + FRAME_HDR_LEN, payload, plen);
	uint32_t c = crc32c_extend(crc32c_extend(0, frame, 8), frame + FRAME_HDR_LEN, plen);
	le32(frame + 8, c);
	return FRAME_HDR_LEN + plen;
}

static void rewrap_crc(size_t len)
{
	uint32_t c = crc32c_extend(crc32c_extend(0, frame, 8), frame + FRAME_HDR_LEN, len - FRAME_HDR_LEN);
	le32(frame + 8, c);
}

/* A submit payload: the valid fields, with one of them replaced, dropped or doubled. */
enum { M_NONE, M_DROP, M_DUP, M_STR, M_UINT, M_NEG };
struct mut {
	const char *key;
	int how;
	const char *s;
	uint64_t u;
	int64_t i;
};

static void pack_key(msgpack_packer *pk, const char *k)
{
	msgpack_pack_str_with_body(pk, k, strlen(k));
}

static void pack_val(msgpack_packer *pk, const char *key, const struct mut *m)
{
	if (m && m->how == M_STR) { msgpack_pack_str_with_body(pk, m->s, strlen(m->s)); return; }
	if (m && m->how == M_UINT) { msgpack_pack_uint64(pk, m->u); return; }
	if (m && m->how == M_NEG) { msgpack_pack_int64(pk, m->i); return; }
	static const struct { const char *k; const char *s; uint64_t u; } good[] = {
		{ "xid", NULL, 77 }, { "fire", NULL, 5 }, { "epoch", NULL, 0x100000002ULL },
		{ "deadline", NULL, 0 }, { "item", NULL, 1 }, { "total", NULL, 4 }, { "attempt", NULL, 1 },
		{ "job", "hello", 0 }, { "task", "hello@-@0,1@-@READY@-@127.0.0.1@-@4242", 0 },
		{ "iparam", "b", 0 }, { "jparam", "", 0 },
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		if (strcmp(good[i].k, key)) continue;
		if (good[i].s) msgpack_pack_str_with_body(pk, good[i].s, strlen(good[i].s));
		else msgpack_pack_uint64(pk, good[i].u);
		return;
	}
}

static const char *const submit_keys[] = {
	"xid", "fire", "epoch", "deadline", "item", "total", "attempt", "job", "task", "iparam", "jparam",
};
#define NKEYS (sizeof submit_keys / sizeof submit_keys[0])

static size_t submit_payload(const struct mut *m, msgpack_sbuffer *sb)
{
	msgpack_sbuffer_init(sb);
	msgpack_packer pk;
	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	size_t n = NKEYS;
	if (m && m->how == M_DROP) n--;
	if (m && m->how == M_DUP) n++;
	msgpack_pack_map(&pk, n);
	for (size_t i = 0; i < NKEYS; i++) {
		const char *k = submit_keys[i];
		int hit = m && !strcmp(m->key, k);
		if (hit && m->how == M_DROP) continue;
		pack_key(&pk, k);
		pack_val(&pk, k, hit && m->how != M_DUP ? m : NULL);
		if (hit && m->how == M_DUP) { pack_key(&pk, k); pack_val(&pk, k, NULL); }
	}
	return sb->size;
}

static size_t submit_frame(const struct mut *m)
{
	msgpack_sbuffer sb;
	submit_payload(m, &sb);
	size_t n = wrap(FRAME_SUBMIT, sb.data, sb.size);
	msgpack_sbuffer_destroy(&sb);
	return n;
}

static frame_decoder_t *dec;

/* decode frame[0..len) as a submission; expect failure with code, and message if given */
static void rejects(size_t len, enum frame_errc code, const char *msg, const char *name)
{
	struct frame_submit f;
	struct frame_err err = { 0 };
	int r = frame_decode_submit(dec, frame, len, &f, &err);
	if (!ok(r == -1 && err.code == code, "rejects %s (%s)", name, frame_errc_name(code)))
		diag("  got r=%d code=%s msg='%s'", r, frame_errc_name(err.code), err.msg);
	if (msg) is_str(err.msg, msg, "  message for %s", name);
}

static void accepts(size_t len, const char *name)
{
	struct frame_submit f;
	struct frame_err err = { 0 };
	int r = frame_decode_submit(dec, frame, len, &f, &err);
	if (!ok(r == 0, "accepts %s", name))
		diag("  %s: %s", frame_errc_name(err.code), err.msg);
}

static void mut_rejects(struct mut m, enum frame_errc code, const char *msg, const char *name)
{
	rejects(submit_frame(&m), code, msg, name);
}

/* ---- tests ------------------------------------------------------------------------------- */

static void test_crc(void)
{
	is_int(crc32c_extend(0, "123456789", 9), 0xe3069283u, "crc32c check value");
	is_int(crc32c_extend_sw(0, "123456789", 9), 0xe3069283u, "crc32c table check value");
	is_int(crc32c_extend(crc32c_extend(0, "1234", 4), "56789", 5), 0xe3069283u, "crc32c extends");
	unsigned char buf[1027];
	srand(7);
	for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)rand();
	int same = 1;
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0; len + off <= sizeof buf; len += 37)
			same &= crc32c_extend(0, buf + off, len) == crc32c_extend_sw(0, buf + off, len);
	ok(same, "hardware and table crc32c agree at every offset and length");
}

static void test_roundtrip(void)
{
	unsigned char buf[4096];
	struct frame_submit s = {
		.xid = 0xfedcba9876543210ULL, .fire_id = 42, .epoch = 0x1000000ffULL, .deadline_ms = 1790000000123ULL,
		.item = 3, .total = 4, .attempt = 2, .kind = FRAME_KIND_SCRIPT,
		.job = "hello", .task_id = "hello@-@2,3@-@READY@-@127.0.0.1@-@4242", .item_param = "d=\"x\"",
		.job_param = "p\xc3\xa9", .cmd = "examples/hello.sh --flag 'a b'", .lib = NULL, .sym = NULL,
	};
	long n = frame_encode_submit(&s, buf, sizeof buf);
	ok(n > (long)FRAME_HDR_LEN, "encode submit (%ld bytes)", n);
	is_int(frame_peek_type(buf, (size_t)n), FRAME_SUBMIT, "peek type");
	struct frame_submit d;
	struct frame_err err;
	int r = frame_decode_submit(dec, buf, (size_t)n, &d, &err);
	if (!ok(r == 0, "decode submit")) diag("%s", err.msg);
	ok(d.xid == s.xid && d.fire_id == 42 && d.epoch == s.epoch && d.deadline_ms == s.deadline_ms,
	   "u64 fields survive");
	ok(d.item == 3 && d.total == 4 && d.attempt == 2 && d.kind == FRAME_KIND_SCRIPT, "u32 fields survive");
	is_str(d.job, "hello", "job");
	is_str(d.task_id, s.task_id, "task id");
	is_str(d.item_param, "d=\"x\"", "item parameter");
	is_str(d.job_param, "p\xc3\xa9", "job parameter (UTF-8)");
	is_str(d.cmd, s.cmd, "cmd");
	ok(d.lib == NULL && d.sym == NULL, "absent optional fields decode as NULL");

	struct frame_complete c = {
		.xid = 9, .fire_id = 42, .epoch = 7, .duration_us = 1234567, .item = 3, .attempt = 1,
		.status = FRAME_ST_CRASHED, .exit_code = -1, .signal = 9, .job = "hello", .task_id = "t",
		.error = "killed by signal 9",
	};
	n = frame_encode_complete(&c, buf, sizeof buf);
	ok(n > 0, "encode complete");
	struct frame_complete cd;
	r = frame_decode_complete(dec, buf, (size_t)n, &cd, &err);
	if (!ok(r == 0, "decode complete")) diag("%s", err.msg);
	ok(cd.xid == 9 && cd.fire_id == 42 && cd.epoch == 7 && cd.duration_us == 1234567 && cd.item == 3 &&
	   cd.attempt == 1 && cd.status == FRAME_ST_CRASHED && cd.exit_code == -1 && cd.signal == 9,
	   "completion numbers survive (negative code too)");
	is_str(cd.error, "killed by signal 9", "error text");
	ok(cd.output == NULL, "no output sent: output NULL");
	is_str(frame_status_name(cd.status), "crashed", "status name");
	c.output = "last line\n";
	n = frame_encode_complete(&c, buf, sizeof buf);
	r = frame_decode_complete(dec, buf, (size_t)n, &cd, &err);
	ok(r == 0 && cd.output && !strcmp(cd.output, "last line\n"), "the output tail survives");

	/* a completion is not a submission */
	r = frame_decode_submit(dec, buf, (size_t)n, &d, &err);
	ok(r == -1 && err.code == FRAME_E_TYPE, "a completion frame is refused as a submission");
	is_str(err.msg, "frame type 2, expected 1 (submit)", "  message");
}

/* An HTTP item's request travels in optional fields; a timeout of 0 (no limit) is left out and
 * decodes as 0; an empty method is refused both ways. */
static void test_http_fields(void)
{
	unsigned char buf[4096];
	struct frame_submit s = {
		.item = 1, .total = 2, .attempt = 1, .kind = FRAME_KIND_HTTP, .job = "h", .task_id = "h@-@1@-@READY@-@x",
		.item_param = "", .job_param = "", .uri = "https://example.com/run?a=1", .method = "POST",
		.data = "x=1&y=\xc3\xa9", .ctype = "application/json", .ca_file = "/etc/ejob/ca.pem", .connect_ms = 3000,
		.read_ms = 0,
	};
	long n = frame_encode_submit(&s, buf, sizeof buf);
	struct frame_submit d;
	struct frame_err err;
	int r = n > 0 ? frame_decode_submit(dec, buf, (size_t)n, &d, &err) : -1;
	if (!ok(r == 0, "an http submission encodes and decodes")) diag("%s", n > 0 ? err.msg : "encode failed");
	if (r == 0) {
		ok(d.kind == FRAME_KIND_HTTP && !strcmp(d.uri, s.uri) && !strcmp(d.method, "POST") && !strcmp(d.data, s.data) &&
		   !strcmp(d.ctype, s.ctype) && !strcmp(d.ca_file, s.ca_file), "  uri, method, data, ctype, cafile survive");
		ok(d.connect_ms == 3000 && d.read_ms == 0, "  timeouts survive (0: no limit)");
		ok(!d.cmd && !d.lib && !d.sym, "  no script or native fields");
	}
	is_str(frame_kind_name(FRAME_KIND_HTTP), "http", "kind name");
	struct frame_submit b = s;
	b.method = "";
	errno = 0;
	ok(frame_encode_submit(&b, buf, sizeof buf) == -1 && errno == EINVAL, "an empty method is refused");
	b.method = "GETGETGETGETGETGE";
	ok(frame_encode_submit(&b, buf, sizeof buf) == -1 && errno == EINVAL, "a 17-byte method is refused");
	b = s;
	b.read_ms = (uint32_t)INT32_MAX + 1u;
	ok(frame_encode_submit(&b, buf, sizeof buf) == -1 && errno == EINVAL, "a read timeout past INT32_MAX is refused");
	b = s;
	b.kind = FRAME_KIND_HTTP + 1;
	ok(frame_encode_submit(&b, buf, sizeof buf) == -1 && errno == EINVAL, "kind 5 is refused");
}

static void test_dataflow_fields(void)
{
	unsigned char buf[4096];
	struct frame_submit s = {
		.item = 0, .total = 1, .attempt = 1, .kind = FRAME_KIND_NATIVE, .job = "d", .task_id = "d@-@0@-@READY@-@x",
		.item_param = "", .job_param = "", .lib = "/opt/libd.so", .fetch = "d_fetch", .process = "d_process",
		.flow = 2, .batch_max = FRAME_BATCH_MAX,
	};
	long n = frame_encode_submit(&s, buf, sizeof buf);
	struct frame_submit d;
	struct frame_err err;
	int r = n > 0 ? frame_decode_submit(dec, buf, (size_t)n, &d, &err) : -1;
	if (!ok(r == 0, "a dataflow submission encodes and decodes")) diag("%s", n > 0 ? err.msg : "encode failed");
	if (r == 0)
		ok(d.flow == 2 && d.batch_max == FRAME_BATCH_MAX && !strcmp(d.fetch, "d_fetch") &&
		   !strcmp(d.process, "d_process") && !d.sym, "  flow, bmax, fetch, proc survive");
	struct frame_submit b = s;
	b.flow = FRAME_FLOW_MAX + 1;
	ok(frame_encode_submit(&b, buf, sizeof buf) == -1 && errno == EINVAL, "flow 3 is refused");
	b = s;
	b.batch_max = FRAME_BATCH_MAX + 1;
	ok(frame_encode_submit(&b, buf, sizeof buf) == -1 && errno == EINVAL, "a batch bound past 64 MiB is refused");
	b = s;
	b.fetch = "";
	ok(frame_encode_submit(&b, buf, sizeof buf) == -1 && errno == EINVAL, "an empty fetch symbol is refused");
}

static void test_encode_refusals(void)
{
	unsigned char buf[4096];
	struct frame_submit s = { .item = 0, .total = 1, .attempt = 1, .job = "j", .task_id = "t",
	                          .item_param = "", .job_param = "" };
	ok(frame_encode_submit(&s, buf, sizeof buf) > 0, "minimal submission encodes");
	struct frame_submit b = s;
	b.job = "";
	errno = 0;
	ok(frame_encode_submit(&b, buf, sizeof buf) == -1 && errno == EINVAL, "empty job refused (EINVAL)");
	char longjob[300];
	memset(longjob, 'j', 256);
	longjob[256] = '\0';
	b = s; b.job = longjob;
	ok(frame_encode_submit(&b, buf, sizeof buf) == -1 && errno == EINVAL, "256-byte job refused");
	b = s; b.item = 1;
	ok(frame_encode_submit(&b, buf, sizeof buf) == -1 && errno == EINVAL, "item == total refused");
	b = s; b.attempt = 0;
	ok(frame_encode_submit(&b, buf, sizeof buf) == -1 && errno == EINVAL, "attempt 0 refused");
	b = s; b.task_id = NULL;
	ok(frame_encode_submit(&b, buf, sizeof buf) == -1 && errno == EINVAL, "missing task refused");
	errno = 0;
	ok(frame_encode_submit(&s, buf, 30) == -1 && errno == EMSGSIZE, "too small a buffer: EMSGSIZE");
	long full = frame_encode_submit(&s, buf, sizeof buf);
	ok(frame_encode_submit(&s, buf, (size_t)full) == full, "exactly enough room encodes");
	ok(frame_encode_submit(&s, buf, (size_t)full - 1) == -1 && errno == EMSGSIZE, "one byte short: EMSGSIZE");
	char longerr[600];
	memset(longerr, 'e', 513);
	longerr[513] = '\0';
	struct frame_complete c = { .attempt = 1, .job = "j", .task_id = "t", .error = longerr };
	ok(frame_encode_complete(&c, buf, sizeof buf) == -1 && errno == EINVAL, "513-byte error text refused");
	char longout[1100];
	memset(longout, 'o', 1025);
	longout[1025] = '\0';
	c.error = "";
	c.output = longout;
	ok(frame_encode_complete(&c, buf, sizeof buf) == -1 && errno == EINVAL, "1025 bytes of output refused");
	longout[1024] = '\0';
	ok(frame_encode_complete(&c, buf, sizeof buf) > 0, "1024 bytes of output encode");
}

static void test_header_rejections(void)
{
	size_t n = submit_frame(NULL);
	accepts(n, "the hand-built valid frame");
	rejects(11, FRAME_E_SHORT, "11 bytes is shorter than a frame header (12)", "11 bytes");
	rejects(n - 1, FRAME_E_SHORT, NULL, "a frame cut one byte short");

	le32(frame, (uint32_t)n - 1);
	rejects(n, FRAME_E_LENGTH, NULL, "length field smaller than the bytes");
	le32(frame, (uint32_t)n);

	frame_decoder_t *small = frame_decoder_new(64);
	struct frame_submit f;
	struct frame_err err;
	ok(frame_decode_submit(small, frame, n, &f, &err) == -1 && err.code == FRAME_E_LENGTH,
	   "frame larger than the decoder's limit: length");
	frame_decoder_free(small);

	frame[5] = 2;
	rejects(n, FRAME_E_VERSION, "frame version 2 flags 0x0000, this build reads version 1 flags 0", "version 2");
	frame[5] = FRAME_VERSION;
	frame[6] = 1;
	rejects(n, FRAME_E_VERSION, NULL, "non-zero flags");
	frame[6] = 0;
	frame[4] = 9;
	rejects(n, FRAME_E_TYPE, NULL, "type 9");
	frame[4] = FRAME_SUBMIT;

	frame[n - 1] ^= 0x20;
	rejects(n, FRAME_E_CRC, NULL, "one flipped payload bit");
	frame[n - 1] ^= 0x20;
	frame[2] ^= 1;   /* length field's high byte: caught as a length mismatch first */
	rejects(n, FRAME_E_SHORT, NULL, "a flipped length bit");
	frame[2] ^= 1;
	frame[8] ^= 1;
	rejects(n, FRAME_E_CRC, NULL, "a flipped checksum bit");
	frame[8] ^= 1;
	accepts(n, "the frame once restored");
}

static void test_msgpack_rejections(void)
{
	/* a map that promises more than it has */
	unsigned char p[64] = { 0x8c, 0xa3, 'x', 'i', 'd', 0x01 };
	rejects(wrap(FRAME_SUBMIT, p, 6), FRAME_E_MSGPACK, "msgpack container of 24 objects at byte 1 overruns the frame",
	        "a map promising more entries than bytes");
	unsigned char p2[] = { 0x82, 0xa3, 'x', 'i', 'd', 0x01, 0xa1 };
	rejects(wrap(FRAME_SUBMIT, p2, sizeof p2), FRAME_E_MSGPACK, "msgpack value of 1 bytes at byte 7 overruns the frame", "a map cut mid-key");

	/* the reserved byte */
	unsigned char r[] = { 0x81, 0xa1, 'a', 0xc1 };
	rejects(wrap(FRAME_SUBMIT, r, sizeof r), FRAME_E_MSGPACK, "reserved msgpack byte 0xc1 at byte 3", "byte 0xc1");

	/* a str32 claiming 4 GiB */
	unsigned char s32[] = { 0x81, 0xa1, 'a', 0xdb, 0xff, 0xff, 0xff, 0xff, 'x' };
	rejects(wrap(FRAME_SUBMIT, s32, sizeof s32), FRAME_E_MSGPACK,
	        "msgpack value of 4294967295 bytes at byte 8 overruns the frame", "str32 of 4 GiB");

	/* an array32 claiming 4 billion elements: the allocation a sender must never size */
	unsigned char a32[] = { 0x81, 0xa1, 'a', 0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0, 0xc0 };
	rejects(wrap(FRAME_SUBMIT, a32, sizeof a32), FRAME_E_MSGPACK,
	        "msgpack container of 4294967295 objects at byte 8 overruns the frame", "array32 of 4 billion");

	/* map32 as the root, claiming 2^31 entries */
	unsigned char m32[] = { 0xdf, 0x80, 0x00, 0x00, 0x00, 0xc0, 0xc0 };
	rejects(wrap(FRAME_SUBMIT, m32, sizeof m32), FRAME_E_MSGPACK, NULL, "map32 of 2^31 entries");

	/* ext32 overrun */
	unsigned char e32[] = { 0x81, 0xa1, 'a', 0xc9, 0x7f, 0xff, 0xff, 0xff, 0x01 };
	rejects(wrap(FRAME_SUBMIT, e32, sizeof e32), FRAME_E_MSGPACK, NULL, "ext32 overrun");

	/* trailing bytes after a valid frame */
	msgpack_sbuffer sb;
	submit_payload(NULL, &sb);
	unsigned char big[4096];
	memcpy(big, sb.data, sb.size);
	big[sb.size] = 0xc0;
	rejects(wrap(FRAME_SUBMIT, big, sb.size + 1), FRAME_E_TRAILING, "1 trailing bytes after the msgpack map",
	        "one trailing byte");

	/* too deep: a valid frame whose unknown key holds 9 nested arrays */
	memcpy(big, sb.data, sb.size);
	big[0]++;   /* fixmap count + 1: NKEYS < 15 */
	size_t n = sb.size;
	big[n++] = 0xa1; big[n++] = 'z';
	for (int i = 0; i < 8; i++) big[n++] = 0x91;
	big[n++] = 0xc0;
	rejects(wrap(FRAME_SUBMIT, big, n), FRAME_E_LIMIT, "msgpack nested deeper than 8", "9 levels deep");
	n -= 2;
	big[n++] = 0xc0;  /* 7 nested arrays under the root map: depth 8 in all, allowed */
	accepts(wrap(FRAME_SUBMIT, big, n), "an unknown key nested 8 deep");

	/* too many objects: an unknown key holding an array of 600 nils */
	memcpy(big, sb.data, sb.size);
	big[0]++;
	n = sb.size;
	big[n++] = 0xa1; big[n++] = 'z';
	big[n++] = 0xdc; big[n++] = 600 >> 8; big[n++] = 600 & 0xff;
	for (int i = 0; i < 600; i++) big[n++] = 0xc0;
	rejects(wrap(FRAME_SUBMIT, big, n), FRAME_E_LIMIT, "more than 512 msgpack objects", "600 objects");

	/* too many keys */
	n = 0;
	big[n++] = 0xde; big[n++] = 0; big[n++] = 65;
	for (int i = 0; i < 65; i++) { big[n++] = 0xa2; big[n++] = 'k'; big[n++] = (unsigned char)('0' + i); big[n++] = 0xc0; }
	rejects(wrap(FRAME_SUBMIT, big, n), FRAME_E_LIMIT, "map of 65 keys (limit 64)", "65 keys");
	msgpack_sbuffer_destroy(&sb);

	/* not a map */
	unsigned char arr[] = { 0x91, 0x01 };
	rejects(wrap(FRAME_SUBMIT, arr, sizeof arr), FRAME_E_NOTMAP, "payload is a msgpack array, not a map", "an array");
	unsigned char ik[] = { 0x81, 0x01, 0x02 };
	rejects(wrap(FRAME_SUBMIT, ik, sizeof ik), FRAME_E_NOTMAP, "map key 0 is a uint, not a string", "an integer key");
	unsigned char empty[] = { 0x80 };
	rejects(wrap(FRAME_SUBMIT, empty, 1), FRAME_E_MISSING, "required field 'xid' is missing", "an empty map");
	rejects(wrap(FRAME_SUBMIT, empty, 0), FRAME_E_MSGPACK, NULL, "an empty payload");
}

static void test_field_rejections(void)
{
	mut_rejects((struct mut){ "item", M_STR, "1", 0, 0 }, FRAME_E_FIELDTYPE,
	            "field 'item': expected uint, got str", "item as a string");
	mut_rejects((struct mut){ "job", M_UINT, NULL, 5, 0 }, FRAME_E_FIELDTYPE,
	            "field 'job': expected str, got uint", "job as a number");
	mut_rejects((struct mut){ "xid", M_NEG, NULL, 0, -1 }, FRAME_E_FIELDTYPE,
	            "field 'xid': expected uint, got int", "negative xid");
	mut_rejects((struct mut){ "task", M_DROP, NULL, 0, 0 }, FRAME_E_MISSING,
	            "required field 'task' is missing", "missing task");
	mut_rejects((struct mut){ "item", M_DUP, NULL, 0, 0 }, FRAME_E_DUP, "field 'item' appears twice", "item twice");
	mut_rejects((struct mut){ "item", M_UINT, NULL, 4, 0 }, FRAME_E_RANGE,
	            "field 'item': 4 is not below 'total' 4", "item == total");
	mut_rejects((struct mut){ "total", M_UINT, NULL, 0, 0 }, FRAME_E_RANGE,
	            "field 'total': 0 is out of range 1..1000000", "total 0");
	mut_rejects((struct mut){ "total", M_UINT, NULL, 1ULL << 40, 0 }, FRAME_E_RANGE, NULL, "total 2^40");
	mut_rejects((struct mut){ "attempt", M_UINT, NULL, 0, 0 }, FRAME_E_RANGE, NULL, "attempt 0");
	mut_rejects((struct mut){ "job", M_STR, "", 0, 0 }, FRAME_E_RANGE,
	            "field 'job': length 0 is out of range 1..255", "empty job");
	char longjob[300];
	memset(longjob, 'a', 256);
	longjob[256] = '\0';
	mut_rejects((struct mut){ "job", M_STR, longjob, 0, 0 }, FRAME_E_RANGE, NULL, "256-byte job");
	longjob[255] = '\0';
	accepts(submit_frame(&(struct mut){ "job", M_STR, longjob, 0, 0 }), "255-byte job");

	/* a NUL inside a string (packed by hand: strlen would stop at it) */
	msgpack_sbuffer sb;
	submit_payload(&(struct mut){ "iparam", M_STR, "abc", 0, 0 }, &sb);
	unsigned char *q = memmem(sb.data, sb.size, "\xa3" "abc", 4);
	q[2] = '\0';
	rejects(wrap(FRAME_SUBMIT, sb.data, sb.size), FRAME_E_RANGE, "field 'iparam': contains a NUL byte", "NUL in a string");
	msgpack_sbuffer_destroy(&sb);

	/* unknown keys are ignored */
	submit_payload(NULL, &sb);
	unsigned char big[4096];
	memcpy(big, sb.data, sb.size);
	big[0]++;
	size_t n = sb.size;
	const unsigned char extra[] = { 0xa5, 'l', 'a', 't', 'e', 'r', 0x92, 0xcb, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0xc3 };
	memcpy(big + n, extra, sizeof extra);
	n += sizeof extra;
	accepts(wrap(FRAME_SUBMIT, big, n), "an unknown key (array of float and bool)");
	msgpack_sbuffer_destroy(&sb);

	/* completion-specific ranges */
	unsigned char buf[1024];
	struct frame_complete c = { .attempt = 1, .job = "j", .task_id = "t", .error = "" };
	long len = frame_encode_complete(&c, buf, sizeof buf);
	struct frame_complete cd;
	struct frame_err err;
	ok(frame_decode_complete(dec, buf, (size_t)len, &cd, &err) == 0, "minimal completion decodes");
	/* status 9: patch the encoded positive fixint after "status" */
	unsigned char *st = memmem(buf, (size_t)len, "\xa6status", 7);
	st[7] = 9;
	memcpy(frame, buf, (size_t)len);
	rewrap_crc((size_t)len);
	ok(frame_decode_complete(dec, frame, (size_t)len, &cd, &err) == -1 && err.code == FRAME_E_RANGE,
	   "status 9 out of range");
	is_str(err.msg, "field 'status': 9 is out of range 0..5", "  message");
}

static void test_attach_frames(void)
{
	unsigned char buf[8192];
	struct frame_hello h = { .version = 1, .pid = 4321, .slots = 4, .name = "resizer",
	                         .jobs = { 2, { "resize", "thumbs" } } };
	long n = frame_encode_hello(&h, buf, sizeof buf);
	ok(n > 0, "encode hello");
	struct frame_hello d;
	struct frame_err err;
	int r = frame_decode_hello(dec, buf, (size_t)n, &d, &err);
	if (!ok(r == 0, "decode hello")) diag("%s", err.msg);
	ok(d.version == 1 && d.pid == 4321 && d.slots == 4 && d.jobs.n == 2, "hello numbers and job count");
	is_str(d.name, "resizer", "hello name");
	ok(d.jobs.n == 2 && !strcmp(d.jobs.v[0], "resize") && !strcmp(d.jobs.v[1], "thumbs"), "hello job list");

	struct frame_hello b = h;
	b.jobs.n = 0;
	ok(frame_encode_hello(&b, buf, sizeof buf) == -1 && errno == EINVAL, "hello without jobs refused");
	b = h;
	b.slots = 65;
	ok(frame_encode_hello(&b, buf, sizeof buf) == -1 && errno == EINVAL, "hello with 65 slots refused");

	/* a list entry that is not a string */
	unsigned char p[] = { 0x85, 0xa7, 'v', 'e', 'r', 's', 'i', 'o', 'n', 0x01, 0xa3, 'p', 'i', 'd', 0x05,
	                      0xa5, 's', 'l', 'o', 't', 's', 0x01, 0xa4, 'n', 'a', 'm', 'e', 0xa1, 'x',
	                      0xa4, 'j', 'o', 'b', 's', 0x92, 0xa1, 'a', 0x07 };
	size_t len = wrap(FRAME_HELLO, p, sizeof p);
	ok(frame_decode_hello(dec, frame, len, &d, &err) == -1 && err.code == FRAME_E_FIELDTYPE, "a job list with a number in it");
	is_str(err.msg, "field 'jobs': entry 1 is a uint, not a str", "  message");
	p[sizeof p - 4] = 0x90;   /* an empty array, and the frame ends there */
	ok(frame_decode_hello(dec, frame, wrap(FRAME_HELLO, p, sizeof p - 3), &d, &err) == -1 &&
	   err.code == FRAME_E_RANGE, "an empty job list");
	is_str(err.msg, "field 'jobs': 0 entries, allowed 1..64", "  message");

	struct frame_welcome w = { .version = 1, .slots = 4, .supervisor = 77, .heartbeat_ms = 1000 }, wd;
	n = frame_encode_welcome(&w, buf, sizeof buf);
	ok(n > 0 && frame_decode_welcome(dec, buf, (size_t)n, &wd, &err) == 0 && wd.slots == 4 && wd.supervisor == 77 &&
	   wd.heartbeat_ms == 1000, "welcome round trip");
	struct frame_refuse rf = { .error = "uid 1001 may not attach: add it to supervisor.attachAllowUids" }, rd;
	n = frame_encode_refuse(&rf, buf, sizeof buf);
	ok(n > 0 && frame_decode_refuse(dec, buf, (size_t)n, &rd, &err) == 0, "refuse round trip");
	is_str(rd.error, rf.error, "  its text");
	ok(frame_decode_hello(dec, buf, (size_t)n, &d, &err) == -1 && err.code == FRAME_E_TYPE, "a refuse is not a hello");
}

int main(void)
{
	plan(133);
	dec = frame_decoder_new(FRAME_MAX_LEN);
	if (!dec) BAIL_OUT("frame_decoder_new failed");
	test_crc();
	test_roundtrip();
	test_http_fields();
	test_dataflow_fields();
	test_encode_refusals();
	test_header_rejections();
	test_msgpack_rejections();
	test_field_rejections();
	test_attach_frames();
	frame_decoder_free(dec);
	return done_testing();
}
