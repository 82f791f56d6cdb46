/* t/fuzz/fuzz-cron.c: libFuzzer harness for the cron parser and the next-fire search.
 *
 * Any bytes are an expression. A refusal must come with a column inside the expression (or
 * just past its end) and a message; an accepted expression must give, in a few zones and from
 * a few instants, fire times strictly after the start (or -1), the same from cron_after(),
 * and must not crash or trip ASan/UBSan on the way; checked with the fixed year limit and
 * moved to another (cron_with_max_year), it must be what parsing with that limit makes.
 * `make fuzz` runs it.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cron/cron.h"
#include "cron/tz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const zone_names[] = { "UTC", "America/New_York", "Australia/Lord_Howe",
	                                  "Pacific/Apia", "Europe/London" };
#define NZONES (sizeof zone_names / sizeof zone_names[0])

static const int64_t starts[] = {
	-2208988800, /* 1900-01-01 */
	0,
	1710053999,  /* 2024-03-10T06:59:59Z: New York springs forward next second */
	1730611800,  /* 2024-11-03T05:30:00Z: New York's first 01:30 */
	4102444799,  /* 2099-12-31T23:59:59Z */
	7258118400,  /* 2200-01-01: past the zone tables */
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static tz_t *zones[NZONES];
	if (!zones[0])
		for (size_t i = 0; i < NZONES; i++) {
			zones[i] = tz_load(zone_names[i], NULL);
			if (!zones[i])
				zones[i] = tz_fixed("UTC", 0); /* zoneinfo missing: still fuzz */
		}
	if (size > 4096)
		return 0;
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	size_t len = strlen(s);

	cron_err_t err, err2;
	cron_t *c = cron_parse_max_year(s, 2126, &err);
	/* the same expression checked with the fixed limit, then moved to 2126: the same verdict */
	cron_t *base = cron_parse(s, NULL);
	cron_t *moved = base ? cron_with_max_year(base, 2126, &err2) : NULL;
	if (base) {
		assert(!moved == !c);
		assert(c || (err2.column == err.column && !strcmp(err2.msg, err.msg)));
	}
	cron_free(base);
	if (!c) {
		assert(err.column >= 1 && (size_t)err.column <= len + 1);
		assert(err.msg[0] != '\0' && memchr(err.msg, '\0', sizeof err.msg));
		free(s);
		return 0;
	}
	assert(strcmp(cron_expr(c), s) == 0);
	unsigned pick = size ? data[0] : 0;
	for (size_t k = 0; k < 3; k++) {
		const tz_t *tz = zones[(pick + k) % NZONES];
		int64_t after = starts[(pick / 8 + k * 2) % (sizeof starts / sizeof starts[0])];
		int64_t t = cron_next(c, tz, after);
		assert(t == -1 || t > after);
		if (t > 0) {
			int64_t u = cron_next(c, tz, t);
			assert(u == -1 || u > t);
		}
		int64_t v;
		int found = cron_after(c, tz, after, &v);
		assert(found ? (v == t || (t == -1 && v == -1)) : t == -1);
		assert(!moved || cron_next(moved, tz, after) == t);
	}
	cron_free(moved);
	cron_free(c);
	free(s);
	return 0;
}
