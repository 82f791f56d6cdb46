/* t/fuzz/fuzz-trigdata.c: libFuzzer harness for a trigger node's data (ipc/trigdata.h), which
 * anyone with write access to ZooKeeper (an operator, ElasticJob's console, another ejob) writes.
 *
 * Any bytes are a node's data. A refusal must say why and leave nothing; an accepted one must
 * give a parameter without a NUL of at most TRIGDATA_PARAM_MAX bytes, and a run and a root only
 * together (a root without '/'); made again with trigdata_make_run, it must read back the same
 * (where the text is UTF-8: JSON's writer replaces what is not).
 * `make fuzz` runs it. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/trigdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* s is UTF-8 (no overlong forms, no surrogates) */
static int utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		unsigned c = *p, n = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : 9;
		if (n == 9 || (n == 1 && c < 0xc2) || c > 0xf4) return 0;
		unsigned v = n ? c & (0x3f >> n) : c;
		for (unsigned i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80) return 0;
			v = v << 6 | (p[i] & 0x3f);
		}
		if ((n == 2 && v < 0x800) || (n == 3 && (v < 0x10000 || v > 0x10ffff)) || (v >= 0xd800 && v < 0xe000)) return 0;
		p += n + 1;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trigdata t, u;
	char why[200];
	why[0] = 0;
	if (trigdata_parse_all((const char *)data, size, &t, why, sizeof why) < 0) {
		assert(why[0] && !t.param && !t.root && !t.run);
		return 0;
	}
	assert(!t.param || strlen(t.param) <= TRIGDATA_PARAM_MAX);
	assert(!t.run == !t.root);
	assert(!t.root || (t.root[0] && !strchr(t.root, '/')));
	if ((t.param && !utf8(t.param)) || (t.root && !utf8(t.root))) {
		trigdata_free(&t);
		return 0;
	}
	char *again = trigdata_make_run(t.param, t.run, t.root);
	assert(again);
	int rc = trigdata_parse_all(again, strlen(again), &u, why, sizeof why);
	assert(rc == 0);
	assert(u.run == t.run);
	assert(!u.param == !t.param && (!u.param || !strcmp(u.param, t.param)));
	assert(!u.root == !t.root && (!u.root || !strcmp(u.root, t.root)));
	trigdata_free(&u);
	trigdata_free(&t);
	free(again);
	return 0;
}
