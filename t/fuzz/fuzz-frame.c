/* t/fuzz/fuzz-frame.c: libFuzzer harness for the frame decoder.
 *
 * Byte 0 picks the mode: even = the rest is a whole frame (header, crc and all); odd = the
 * rest is a payload, wrapped in a correct header and checksum whose type is (byte0 >> 1) % 5 + 1
 * (submit, complete, hello, welcome, refuse), so the fuzzer reaches the msgpack walk and the
 * field checks. Every accepted frame must encode again and decode to the same values. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/crc32c.h"
#include "ipc/frame.h"

static frame_decoder_t *dec, *dec2;
static unsigned char buf[FRAME_MAX_LEN], again[FRAME_MAX_LEN];

static void le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16); p[3] = (unsigned char)(v >> 24);
}

#define SAME_STR(a, b) ((a) == (b) || ((a) && (b) && !strcmp((a), (b))))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dec) {
		dec = frame_decoder_new(FRAME_MAX_LEN);
		dec2 = frame_decoder_new(FRAME_MAX_LEN);
	}
	if (size < 1 || size > FRAME_MAX_LEN - FRAME_HDR_LEN) return 0;
	unsigned mode = data[0];
	data++;
	size--;
	size_t len;
	if (mode & 1) {
		len = FRAME_HDR_LEN + size;
		le32(buf, (uint32_t)len);
		buf[4] = (unsigned char)((mode >> 1) % 5 + 1);
		buf[5] = FRAME_VERSION;
		buf[6] = buf[7] = 0;
		memcpy(buf + FRAME_HDR_LEN, data, size);
		le32(buf + 8, crc32c_extend(crc32c_extend(0, buf, 8), buf + FRAME_HDR_LEN, size));
	} else {
		len = size;
		memcpy(buf, data, size);
	}

	struct frame_err err;
	struct frame_submit s, s2;
	if (frame_decode_submit(dec, buf, len, &s, &err) == 0) {
		long n = frame_encode_submit(&s, again, sizeof again);
		if (n < 0) abort();                     /* what we accept, we can write */
		if (frame_decode_submit(dec2, again, (size_t)n, &s2, &err) != 0) abort();
		if (s.xid != s2.xid || s.fire_id != s2.fire_id || s.epoch != s2.epoch || s.deadline_ms != s2.deadline_ms ||
		    s.item != s2.item || s.total != s2.total || s.attempt != s2.attempt || s.kind != s2.kind ||
		    !SAME_STR(s.job, s2.job) || !SAME_STR(s.task_id, s2.task_id) || !SAME_STR(s.item_param, s2.item_param) ||
		    !SAME_STR(s.job_param, s2.job_param) || !SAME_STR(s.cmd, s2.cmd) || !SAME_STR(s.lib, s2.lib) ||
		    !SAME_STR(s.sym, s2.sym) || !SAME_STR(s.uri, s2.uri) || !SAME_STR(s.method, s2.method) ||
		    !SAME_STR(s.data, s2.data) || !SAME_STR(s.ctype, s2.ctype) || !SAME_STR(s.ca_file, s2.ca_file) ||
		    s.connect_ms != s2.connect_ms || s.read_ms != s2.read_ms || s.flow != s2.flow ||
		    s.batch_max != s2.batch_max || !SAME_STR(s.fetch, s2.fetch) || !SAME_STR(s.process, s2.process))
			abort();
	} else if (err.code == FRAME_OK || !err.msg[0]) {
		abort();                                /* every rejection says why */
	}
	struct frame_complete c, c2;
	if (frame_decode_complete(dec, buf, len, &c, &err) == 0) {
		long n = frame_encode_complete(&c, again, sizeof again);
		if (n < 0) abort();
		if (frame_decode_complete(dec2, again, (size_t)n, &c2, &err) != 0) abort();
		if (c.xid != c2.xid || c.status != c2.status || c.exit_code != c2.exit_code || c.signal != c2.signal ||
		    c.duration_us != c2.duration_us || !SAME_STR(c.job, c2.job) || !SAME_STR(c.error, c2.error) ||
		    !SAME_STR(c.task_id, c2.task_id))
			abort();
	}
	struct frame_hello h, h2;
	if (frame_decode_hello(dec, buf, len, &h, &err) == 0) {
		long n = frame_encode_hello(&h, again, sizeof again);
		if (n < 0 || frame_decode_hello(dec2, again, (size_t)n, &h2, &err) != 0) abort();
		if (h.version != h2.version || h.pid != h2.pid || h.slots != h2.slots || !SAME_STR(h.name, h2.name) ||
		    h.jobs.n != h2.jobs.n)
			abort();
		for (uint32_t k = 0; k < h.jobs.n; k++)
			if (!SAME_STR(h.jobs.v[k], h2.jobs.v[k])) abort();
	}
	struct frame_welcome w;
	struct frame_refuse r;
	(void)frame_decode_welcome(dec, buf, len, &w, &err);
	(void)frame_decode_refuse(dec, buf, len, &r, &err);
	return 0;
}
