/* t/fuzz/fuzz-lastrun.c: libFuzzer harness for an item's last execution record (ipc/lastrun.h),
 * the data of sharding/{i}/last that anyone with write access to ZooKeeper may have written.
 *
 * Any bytes are a node's data. lastrun_parse must not crash or trip ASan/UBSan; what it accepts
 * keeps to the record's limits (error at most LASTRUN_ERROR_MAX bytes, tail LASTRUN_TAIL_MAX, no
 * NUL inside), and written again with lastrun_fmt it fits LASTRUN_MAX (when its fixed strings need
 * no escaping) and reads back the same, field by field. `make fuzz` runs it. */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "ipc/lastrun.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int plain(const char *s)
{
	for (; *s; s++)
		if (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20) return 0;
	return 1;
}

static int same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lastrun r, back;
	int got = lastrun_parse((const char *)data, size, &r);
	assert(got >= -1 && got <= 1);
	if (got != 1) {
		assert(!r.error && !r.tail);
		return 0;
	}
	assert(!r.error || (*r.error && strlen(r.error) <= LASTRUN_ERROR_MAX));
	assert(!r.tail || (*r.tail && strlen(r.tail) <= LASTRUN_TAIL_MAX));
	static char buf[LASTRUN_MAX];
	int n = lastrun_fmt(&r, buf, sizeof buf);
	if (plain(r.outcome) && plain(r.instance) && plain(r.source)) assert(n > 0);
	if (n > 0) {
		assert(lastrun_parse(buf, (size_t)n, &back) == 1);
		assert(back.fire_id == r.fire_id && back.end_ms == r.end_ms && back.attempt == r.attempt &&
		       back.failures == r.failures && back.ok_ms == r.ok_ms);
		assert(!strcmp(back.outcome, r.outcome) && !strcmp(back.instance, r.instance) && !strcmp(back.source, r.source));
		assert(same(back.error, r.error) && same(back.tail, r.tail));
		lastrun_clear(&back);
	}
	lastrun_clear(&r);
	return 0;
}
