/* t/40-shard.c: the sharding strategies (supervisor/coord/shard.h) against ElasticJob.
 *
 * First the facts: ElasticJob's worked example (docs/design.md), the cases of ElasticJob
 * 3.0.4's own unit tests for the three strategies, Java's String.hashCode and compareTo on
 * non-ASCII and invalid UTF-8, and the edges (one instance, more instances than items, a hash
 * of Integer.MIN_VALUE, bad arguments). Then a differential test: Java itself
 * (t/java/ShardOracle.java: String.hashCode, compareTo, Math.abs and ElasticJob's arithmetic)
 * answers a few thousand random questions, and shard.c must give the same answers. Without
 * `java` on PATH those comparisons are skipped, saying so; any other oracle failure fails.
 *
 * EJOB_SHARD_RANDOM=n and EJOB_SHARD_SEED=s make a soak of it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/coord/shard.h"
#include "t/lib/oracle.h"
#include "t/tap.h"

#define ORACLE "t/java/ShardOracle.java"
#define NRANDOM 4000 /* random shardings; as many hash and compare questions */
#define NORACLE_CHECKS 7

static const conf_strategy_t strategies[] = {
	CONF_STRATEGY_AVG_ALLOCATION, CONF_STRATEGY_ODEVITY, CONF_STRATEGY_ROUND_ROBIN,
	CONF_STRATEGY_SINGLE_SHARDING_BALANCE
};
#define NSTRATEGIES (sizeof strategies / sizeof *strategies)

/* ---- helpers ---------------------------------------------------------------------------- */

/* "a=[0,1,6] b=[2,3,7] c=[4,5]": each instance's items, instances in the order given. */
static void render(char *out, size_t cap, const char *const *names, size_t n, const uint32_t *owner,
                   uint32_t total)
{
	uint32_t items[256];
	size_t o = 0;
	out[0] = '\0';
	for (size_t k = 0; k < n && o < cap; k++) {
		uint32_t c = shard_items_of(owner, total, k, items);
		o += (size_t)snprintf(out + o, cap - o, "%s%s=[", k ? " " : "", names[k]);
		for (uint32_t i = 0; i < c && o < cap; i++)
			o += (size_t)snprintf(out + o, cap - o, "%s%" PRIu32, i ? "," : "", items[i]);
		if (o < cap)
			o += (size_t)snprintf(out + o, cap - o, "]");
	}
}

static void check_assign_at(conf_strategy_t s, const char *job, int64_t ms, const char *const *names, size_t n,
                            uint32_t total, const char *want)
{
	uint32_t owner[256];
	char got[1024];
	if (!ok(shard_assign(s, job, ms, names, n, total, owner) == 0, "%s, job '%s', %zu instances, %" PRIu32
	        " items: no error", conf_strategy_name(s), job, n, total))
		return;
	render(got, sizeof got, names, n, owner, total);
	is_str(got, want, "%s, job '%s', %" PRIu32 " items", conf_strategy_name(s), job, total);
}

static void check_assign(conf_strategy_t s, const char *job, const char *const *names, size_t n, uint32_t total,
                         const char *want)
{
	check_assign_at(s, job, 0, names, n, total, want);
}

/* The strategy alone on an ordered list (ElasticJob's unit tests). */
static void check_ordered(conf_strategy_t s, const char *job, const char *const *names, size_t n, uint32_t total,
                          const char *want, const char *what)
{
	uint32_t owner[256];
	char got[1024];
	if (!ok(shard_assign_ordered(s, job, 0, n, total, owner) == 0, "%s: no error", what))
		return;
	render(got, sizeof got, names, n, owner, total);
	is_str(got, want, "%s", what);
}

/* A name with the given hashCode: prefix, then seven characters 'A'..'_' that are the base-31
 * digits of what the hash still needs (31^7 > 2^32, so any target is reachable). */
static void name_with_hash(char *out, size_t cap, const char *prefix, int32_t target)
{
	uint32_t p7 = 1, ones = 0;
	for (int i = 0; i < 7; i++) {
		ones += p7;
		p7 *= 31;
	}
	uint32_t need = (uint32_t)target - (uint32_t)shard_java_hash(prefix) * p7 - 'A' * ones;
	char digits[8];
	for (int i = 6; i >= 0; i--) {
		digits[i] = (char)('A' + need % 31);
		need /= 31;
	}
	digits[7] = '\0';
	snprintf(out, cap, "%s%s", prefix, digits);
}

/* ---- facts ------------------------------------------------------------------------------ */

static void test_java_strings(void)
{
	is_int(shard_java_hash(""), 0, "hash of \"\"");
	is_int(shard_java_hash("job1"), 3267604, "hash of \"job1\" (even)");
	is_int(shard_java_hash("Aa"), shard_java_hash("BB"), "\"Aa\" and \"BB\" collide, as in Java");
	is_int(shard_java_hash("polygenelubricants"), INT32_MIN, "\"polygenelubricants\" hashes to Integer.MIN_VALUE");
	is_int(shard_java_hash("\xe4\xbd\x9c\xe4\xb8\x9a"), 649790, "hash of \"作业\" (two BMP units)");
	is_int(shard_java_hash("\xf0\x9f\x98\x80"), 1772899, "U+1F600 hashes as its surrogate pair");
	is_int(shard_java_hash("\xc0\xaf"), 31 * 0xfffd + 0xfffd, "overlong C0 AF: two U+FFFD");
	is_int(shard_java_hash("\xed\xa0\x80"), 0xfffd, "an encoded surrogate: one U+FFFD for three bytes");
	is_int(shard_java_hash("\xe4\xbd"), 0xfffd, "a sequence cut short by the end: one U+FFFD");
	is_int(shard_java_hash("\xe4\xbdx"), 31 * 0xfffd + 'x', "... cut short by 'x': U+FFFD, then 'x'");

	ok(shard_java_cmp("a", "b") < 0 && shard_java_cmp("b", "a") > 0, "compareTo: a < b");
	ok(shard_java_cmp("", "a") < 0 && shard_java_cmp("ab", "abc") < 0, "compareTo: a prefix comes first");
	is_int(shard_java_cmp("x\xe4\xbd\x9c", "x\xe4\xbd\x9c"), 0, "compareTo: equal strings");
	ok(shard_java_cmp("\xf0\x90\x80\x80", "\xee\x80\x80") < 0,
	   "compareTo: U+10000 (surrogates D800 DC00) sorts before U+E000, unlike strcmp");
	ok(strcmp("\xf0\x90\x80\x80", "\xee\x80\x80") > 0, "... which strcmp orders the other way");
	is_int(shard_java_cmp("\x80", "\xff"), 0, "compareTo: two invalid bytes are both U+FFFD");
}

static const char *const ips[] = { "192.168.0.1", "192.168.0.2", "192.168.0.3" };

static void test_worked_example(void)
{
	const char *const shuffled[] = { "192.168.0.2", "192.168.0.3", "192.168.0.1" };
	check_assign(CONF_STRATEGY_AVG_ALLOCATION, "job1", ips, 3, 8,
	             "192.168.0.1=[4,5] 192.168.0.2=[2,3,7] 192.168.0.3=[0,1,6]");
	check_assign(CONF_STRATEGY_ODEVITY, "job1", ips, 3, 8,
	             "192.168.0.1=[0,1,6] 192.168.0.2=[2,3,7] 192.168.0.3=[4,5]");
	check_assign(CONF_STRATEGY_ROUND_ROBIN, "job1", ips, 3, 8,
	             "192.168.0.1=[2,3,7] 192.168.0.2=[0,1,6] 192.168.0.3=[4,5]");
	check_assign(CONF_STRATEGY_ROUND_ROBIN, "job1", shuffled, 3, 8,
	             "192.168.0.2=[0,1,6] 192.168.0.3=[4,5] 192.168.0.1=[2,3,7]");
	/* 3.0.5's SINGLE_SHARDING_BALANCE: the rotation is abs(3267604 + (int) millis) % 3, so
	 * ROUND_ROBIN's at a millisecond that adds a multiple of 3, another start at the next */
	check_assign_at(CONF_STRATEGY_SINGLE_SHARDING_BALANCE, "job1", 3, ips, 3, 8,
	                "192.168.0.1=[2,3,7] 192.168.0.2=[0,1,6] 192.168.0.3=[4,5]");
	check_assign_at(CONF_STRATEGY_SINGLE_SHARDING_BALANCE, "job1", 1, ips, 3, 8,
	                "192.168.0.1=[0,1,6] 192.168.0.2=[4,5] 192.168.0.3=[2,3,7]");
	check_assign_at(CONF_STRATEGY_SINGLE_SHARDING_BALANCE, "job1", 2, ips, 3, 8,
	                "192.168.0.1=[4,5] 192.168.0.2=[2,3,7] 192.168.0.3=[0,1,6]");
	/* only the low 32 bits of the time count (Long.intValue) */
	check_assign_at(CONF_STRATEGY_SINGLE_SHARDING_BALANCE, "job1", 1 + (7LL << 32), ips, 3, 8,
	                "192.168.0.1=[0,1,6] 192.168.0.2=[4,5] 192.168.0.3=[2,3,7]");
	uint32_t owner[8];
	errno = 0;
	ok(shard_assign(CONF_STRATEGY_SINGLE_SHARDING_BALANCE, "job1", (int64_t)((uint32_t)INT32_MIN - 3267604u), ips, 3, 8,
	                owner) == -1 && errno == EDOM,
	   "SINGLE_SHARDING_BALANCE at the millisecond that makes the sum Integer.MIN_VALUE: EDOM (ElasticJob throws)");
}

/* ElasticJob 3.0.4's AverageAllocation-, OdevitySortByName- and RotateServerByName-
 * JobShardingStrategyTest: the strategy called on host0, host1, host2 in that order. */
static void test_elasticjob_unit_tests(void)
{
	const char *const h[] = { "host0@-@0", "host1@-@0", "host2@-@0" };
	const conf_strategy_t avg = CONF_STRATEGY_AVG_ALLOCATION, odd = CONF_STRATEGY_ODEVITY,
	                      rr = CONF_STRATEGY_ROUND_ROBIN;
	check_ordered(avg, "test_job", h, 1, 3, "host0@-@0=[0,1,2]", "AVG: shardingForOneServer");
	check_ordered(avg, "test_job", h, 3, 2, "host0@-@0=[0] host1@-@0=[1] host2@-@0=[]",
	              "AVG: shardingForServersMoreThanShardingCount");
	check_ordered(avg, "test_job", h, 3, 9, "host0@-@0=[0,1,2] host1@-@0=[3,4,5] host2@-@0=[6,7,8]",
	              "AVG: shardingForServersLessThanShardingCountAliquot");
	check_ordered(avg, "test_job", h, 3, 8, "host0@-@0=[0,1,6] host1@-@0=[2,3,7] host2@-@0=[4,5]",
	              "AVG: ...AliquantFor8ShardingCountAnd3Servers");
	check_ordered(avg, "test_job", h, 3, 10, "host0@-@0=[0,1,2,9] host1@-@0=[3,4,5] host2@-@0=[6,7,8]",
	              "AVG: ...AliquantFor10ShardingCountAnd3Servers");
	check_ordered(odd, "1", h, 3, 2, "host0@-@0=[0] host1@-@0=[1] host2@-@0=[]",
	              "ODEVITY: assertShardingByAsc (job \"1\", odd)");
	check_ordered(odd, "0", h, 3, 2, "host0@-@0=[] host1@-@0=[1] host2@-@0=[0]",
	              "ODEVITY: assertShardingByDesc (job \"0\", even)");
	check_ordered(rr, "1", h, 3, 2, "host0@-@0=[] host1@-@0=[0] host2@-@0=[1]",
	              "ROUND_ROBIN: assertSharding1 (job \"1\")");
	check_ordered(rr, "2", h, 3, 2, "host0@-@0=[1] host1@-@0=[] host2@-@0=[0]",
	              "ROUND_ROBIN: assertSharding2 (job \"2\")");
	check_ordered(rr, "3", h, 3, 2, "host0@-@0=[0] host1@-@0=[1] host2@-@0=[]",
	              "ROUND_ROBIN: assertSharding3 (job \"3\")");
	/* shardingForZeroServer: ElasticJob returns an empty map; here that is EINVAL. */
	errno = 0;
	ok(shard_assign_ordered(avg, "test_job", 0, 0, 3, (uint32_t[3]){ 0 }) == -1 && errno == EINVAL,
	   "no instances: EINVAL (ElasticJob: an empty map)");
}

static void test_edges(void)
{
	const char *const one[] = { "10.0.0.1@-@1" };
	const char *const five[] = { "a", "b", "c", "d", "e" };
	uint32_t owner[64];
	char name[64];
	for (size_t s = 0; s < NSTRATEGIES; s++) {
		check_assign(strategies[s], "job1", one, 1, 5, "10.0.0.1@-@1=[0,1,2,3,4]");
		check_assign(strategies[s], "polygenelubricants", one, 1, 3, "10.0.0.1@-@1=[0,1,2]");
	}
	check_assign(CONF_STRATEGY_AVG_ALLOCATION, "j", five, 5, 3, "a=[] b=[] c=[2] d=[1] e=[0]");
	check_assign(CONF_STRATEGY_AVG_ALLOCATION, "j", five, 5, 1, "a=[] b=[] c=[] d=[] e=[0]");
	check_assign(CONF_STRATEGY_ODEVITY, "0", five, 5, 1, "a=[0] b=[] c=[] d=[] e=[]");
	check_assign(CONF_STRATEGY_ODEVITY, "1", five, 5, 1, "a=[] b=[] c=[] d=[] e=[0]");
	/* "j" hashes to 106: e d c b a rotated left by 106 % 5 = 1 is d c b a e */
	check_assign(CONF_STRATEGY_ROUND_ROBIN, "j", five, 5, 7, "a=[3] b=[2] c=[1,6] d=[0,5] e=[4]");
	ok(shard_assign(CONF_STRATEGY_AVG_ALLOCATION, "j", 0, five, 5, 0, NULL) == 0, "no items: 0, owner may be NULL");

	/* Odd and even hashes, negative ones too: ODEVITY reverses on even (Java's long % 2). */
	static const int32_t hashes[] = { -1, -2, INT32_MIN + 1, INT32_MAX, INT32_MIN };
	for (size_t i = 0; i < sizeof hashes / sizeof hashes[0]; i++) {
		name_with_hash(name, sizeof name, "job-", hashes[i]);
		is_int(shard_java_hash(name), hashes[i], "'%s' hashes to %" PRId32, name, hashes[i]);
		check_assign(CONF_STRATEGY_ODEVITY, name, five, 5, 2,
		             hashes[i] % 2 ? "a=[] b=[] c=[] d=[1] e=[0]" : "a=[0] b=[1] c=[] d=[] e=[]");
	}

	/* Integer.MIN_VALUE: Math.abs leaves it negative. ElasticJob rotates by MIN_VALUE % n,
	 * which is 0 for n a power of two and negative otherwise (then get() throws). */
	const char *pg = "polygenelubricants";
	const char *const four[] = { "a", "b", "c", "d" };
	check_assign(CONF_STRATEGY_ROUND_ROBIN, pg, four, 4, 4, "a=[3] b=[2] c=[1] d=[0]");
	check_assign(CONF_STRATEGY_ROUND_ROBIN, pg, four, 2, 4, "a=[2,3] b=[0,1]");
	check_assign(CONF_STRATEGY_ODEVITY, pg, four, 4, 4, "a=[0] b=[1] c=[2] d=[3]");
	memset(owner, 0xaa, sizeof owner);
	errno = 0;
	ok(shard_assign(CONF_STRATEGY_ROUND_ROBIN, pg, 0, five, 3, 4, owner) == -1 && errno == EDOM,
	   "ROUND_ROBIN, hash MIN_VALUE, 3 instances: EDOM (ElasticJob throws IndexOutOfBounds)");
	ok(owner[0] == 0xaaaaaaaau && owner[3] == 0xaaaaaaaau, "... owner untouched");
	const char *const dup3[] = { "a", "b", "a" };
	errno = 0;
	ok(shard_assign(CONF_STRATEGY_ROUND_ROBIN, pg, 0, dup3, 3, 4, owner) == -1 && errno == EINVAL,
	   "... but a duplicate instance is EINVAL first");
	errno = 0;
	ok(shard_assign_ordered(CONF_STRATEGY_ROUND_ROBIN, pg, 0, 5, 4, owner) == -1 && errno == EDOM,
	   "... and 5 instances, ordered too");
	name_with_hash(name, sizeof name, "\xe4\xbd\x9c\xe4\xb8\x9a\xf0\x9f\x98\x80", INT32_MIN);
	errno = 0;
	ok(shard_java_hash(name) == INT32_MIN &&
	   shard_assign(CONF_STRATEGY_ROUND_ROBIN, name, 0, five, 5, 4, owner) == -1 && errno == EDOM,
	   "a non-ASCII name hashing to MIN_VALUE: EDOM over 5");

	/* The result depends on the names, not on the order given. */
	const char *const u1[] = { "10.0.0.9@-@7", "\xee\x80\x80", "10.0.0.10@-@7", "\xf0\x90\x80\x80", "b" };
	const char *const u2[] = { "\xf0\x90\x80\x80", "b", "10.0.0.10@-@7", "\xee\x80\x80", "10.0.0.9@-@7" };
	/* descending in UTF-16: U+E000, U+10000 (D800 DC00), "b", "10.0.0.9@-@7", "10.0.0.10@-@7" */
	check_assign(CONF_STRATEGY_AVG_ALLOCATION, "x", u1, 5, 7,
	             "10.0.0.9@-@7=[3] \xee\x80\x80=[0,5] 10.0.0.10@-@7=[4] \xf0\x90\x80\x80=[1,6] b=[2]");
	check_assign(CONF_STRATEGY_AVG_ALLOCATION, "x", u2, 5, 7,
	             "\xf0\x90\x80\x80=[1,6] b=[2] 10.0.0.10@-@7=[4] \xee\x80\x80=[0,5] 10.0.0.9@-@7=[3]");
}

static int err_of(int r)
{
	return r == -1 ? errno : 0;
}

static void test_errors(void)
{
	const char *const names[] = { "a", "b", "a" };
	const char *const java_equal[] = { "x\x80", "x\xff" };
	const char *const with_null[] = { "a", NULL };
	uint32_t owner[8];
	const conf_strategy_t avg = CONF_STRATEGY_AVG_ALLOCATION;
	const struct {
		int err;
		const char *what;
	} cases[] = {
		{ err_of(shard_assign(avg, "j", 0, names, 0, 3, owner)), "no instances" },
		{ err_of(shard_assign(avg, "j", 0, names, 3, 3, owner)), "a duplicate name" },
		{ err_of(shard_assign(avg, "j", 0, java_equal, 2, 3, owner)), "names equal as Java strings (x\\x80, x\\xff)" },
		{ err_of(shard_assign(avg, "j", 0, with_null, 2, 3, owner)), "a NULL name" },
		{ err_of(shard_assign(avg, "j", 0, NULL, 2, 3, owner)), "instances NULL" },
		{ err_of(shard_assign(avg, NULL, 0, names, 2, 3, owner)), "job NULL" },
		{ err_of(shard_assign(avg, "j", 0, names, 2, 3, NULL)), "owner NULL with items to place" },
		{ err_of(shard_assign((conf_strategy_t)7, "j", 0, names, 2, 3, owner)), "an unknown strategy" },
		{ err_of(shard_assign(avg, "j", 0, names, 2, (uint32_t)INT32_MAX + 1, owner)), "total above INT32_MAX" },
		{ err_of(shard_assign_ordered(avg, "j", 0, (size_t)INT32_MAX + 1, 3, owner)), "n above INT32_MAX" },
		{ err_of(shard_assign_ordered(avg, "j", 0, 0, 3, owner)), "ordered, no instances" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		is_int(cases[i].err, EINVAL, "%s: EINVAL", cases[i].what);
	is_int(err_of(shard_assign(avg, "j", 0, names, 2, 3, owner)), 0, "the first two names alone: fine");
	uint32_t items[8];
	/* descending: b, a; one item each, the third to b */
	is_int(shard_items_of(owner, 3, 1, items), 2, "shard_items_of: b has two items");
	ok(items[0] == 0 && items[1] == 2, "... 0 and 2");
	is_int(shard_items_of(owner, 3, 5, items), 0, "... an index past the instances has none");
}

/* ---- random questions for Java ---------------------------------------------------------- */

static uint64_t rng = 0x2545F4914F6CDD1Du;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t rn(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

struct str {
	char s[512];
	size_t n;
};

static void put_bytes(struct str *b, const void *p, size_t len)
{
	if (b->n + len >= sizeof b->s)
		return;
	memcpy(b->s + b->n, p, len);
	b->n += len;
	b->s[b->n] = '\0';
}

static void put_cp(struct str *b, uint32_t cp)
{
	unsigned char u[4];
	size_t len;
	if (cp < 0x80) {
		u[0] = (unsigned char)cp;
		len = 1;
	} else if (cp < 0x800) {
		u[0] = (unsigned char)(0xc0 | cp >> 6);
		u[1] = (unsigned char)(0x80 | (cp & 0x3f));
		len = 2;
	} else if (cp < 0x10000) {
		u[0] = (unsigned char)(0xe0 | cp >> 12);
		u[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		u[2] = (unsigned char)(0x80 | (cp & 0x3f));
		len = 3;
	} else {
		u[0] = (unsigned char)(0xf0 | cp >> 18);
		u[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
		u[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		u[3] = (unsigned char)(0x80 | (cp & 0x3f));
		len = 4;
	}
	put_bytes(b, u, len);
}

/* Ill-formed UTF-8, one of the kinds Java's decoder tells apart. */
static const char *const invalid[] = {
	"\x80", "\xbf", "\xc0\xaf", "\xc1\xbf", "\xc2", "\xdf", "\xe0\x80\x80", "\xe0\x9f\xbf", "\xe0\xa0",
	"\xe4\xbd", "\xe4", "\xed\xa0\x80", "\xed\xbf\xbf", "\xed\xa0", "\xef\xbf", "\xf0\x80\x80\x80",
	"\xf0\x8f\xbf\xbf", "\xf0\x9f\x98", "\xf0\x9f", "\xf0", "\xf4\x90\x80\x80", "\xf4\x8f\xbf",
	"\xf5\x80\x80\x80", "\xf7\xbf\xbf\xbf", "\xf8\x88\x80\x80\x80", "\xfc", "\xfe", "\xff",
	"\xf4\x80", "\xf1\x80\x80", "\xe1\x80",
};

/* A random code point of the given kind: 0 ASCII, 1 two bytes, 2 three, 3 four. */
static uint32_t rand_cp(int kind)
{
	static const uint32_t edges[] = { 0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xfffd, 0xffff,
		                          0x10000, 0x1f600, 0x10ffff, 0xff21, 0x4f5c, 0xe9 };
	if (rn(8) == 0)
		return edges[rn(sizeof edges / sizeof edges[0])];
	switch (kind) {
	case 0: return 0x20 + rn(0x5f);
	case 1: return 0x80 + rn(0x780);
	case 2: {
		uint32_t cp = rn(3) ? 0x800 + rn(0xd000) : 0xe000 + rn(0x2000);
		return cp >= 0xd800 && cp < 0xe000 ? cp + 0x800 : cp;
	}
	default: return 0x10000 + rn(0x100000);
	}
}

/* Random text of len pieces, each bad with probability bad_pct %. */
static void rand_text(struct str *b, unsigned len, unsigned bad_pct)
{
	for (unsigned i = 0; i < len; i++) {
		if (rn(100) < bad_pct) {
			const char *x = invalid[rn(sizeof invalid / sizeof invalid[0])];
			put_bytes(b, x, strlen(x));
		} else {
			uint32_t r = rn(10);
			put_cp(b, rand_cp(r < 5 ? 0 : r < 7 ? 1 : r < 9 ? 2 : 3));
		}
	}
}

/* Bytes from the ones that matter to a UTF-8 decoder. */
static void rand_bytes(struct str *b, unsigned len)
{
	static const unsigned char pick[] = { 'a', 'Z', 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1,
		                              0xc2, 0xdf, 0xe0, 0xe1, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf4,
		                              0xf5, 0xf7, 0xf8, 0xff };
	for (unsigned i = 0; i < len; i++) {
		unsigned char c = rn(4) ? pick[rn(sizeof pick)] : (unsigned char)(1 + rn(255));
		put_bytes(b, &c, 1);
	}
}

static void rand_job(struct str *b)
{
	uint32_t r = rn(100);
	b->n = 0;
	b->s[0] = '\0';
	if (r < 25) {
		static const char *const words[] = { "job", "order-sync", "report_daily", "ejob.demo", "x", "" };
		snprintf(b->s, sizeof b->s, "%s%u", words[rn(6)], rn(3) ? rn(100000) : 0);
		b->n = strlen(b->s);
	} else if (r < 75) {
		rand_text(b, rn(25), 0);
	} else if (r < 85) {
		rand_text(b, 1 + rn(12), 20);
	} else {
		/* Integer.MIN_VALUE, for ROUND_ROBIN's Math.abs */
		struct str p = { .n = 0 };
		rand_text(&p, rn(6), 0);
		name_with_hash(b->s, sizeof b->s, p.s, INT32_MIN);
		b->n = strlen(b->s);
	}
}

static void rand_instance(struct str *b)
{
	b->n = 0;
	b->s[0] = '\0';
	if (rn(100) < 85) {
		snprintf(b->s, sizeof b->s, "10.0.%u.%u@-@%u", rn(4), rn(256), 1 + rn(99999));
		b->n = strlen(b->s);
	} else { /* a common prefix, so that compareTo reaches the interesting part */
		put_bytes(b, "10.0.0.1@-@", 11);
		rand_text(b, 1 + rn(4), rn(4) ? 0 : 15);
	}
}

/* Growing text for one question. */
struct line {
	char *s;
	size_t n, cap;
};

static void add(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct line *l, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int k = vsnprintf(l->s ? l->s + l->n : NULL, l->s ? l->cap - l->n : 0, fmt, ap);
		va_end(ap);
		if (k < 0)
			BAIL_OUT("vsnprintf failed");
		if (l->s && l->n + (size_t)k < l->cap) {
			l->n += (size_t)k;
			return;
		}
		size_t cap = l->cap ? l->cap * 2 : 256;
		while (cap < l->n + (size_t)k + 1)
			cap *= 2;
		char *ns = realloc(l->s, cap);
		if (!ns)
			BAIL_OUT("out of memory");
		l->s = ns;
		l->cap = cap;
	}
}

static void add_hex(struct line *l, const char *s)
{
	if (!*s) {
		add(l, " -");
		return;
	}
	add(l, " ");
	for (; *s; s++)
		add(l, "%02x", (unsigned char)*s);
}

/* What shard.c answers, in the oracle's words. */
static void our_answer(struct line *l, int r, int err, const uint32_t *owner, uint32_t total)
{
	if (r == 0) {
		add(l, "OK");
		for (uint32_t i = 0; i < total; i++)
			add(l, " %" PRIu32, owner[i]);
	} else if (err == EDOM) {
		add(l, "EXC IndexOutOfBoundsException");
	} else if (err == EINVAL) {
		add(l, "DUP");
	} else {
		add(l, "ERR %s", strerror(err));
	}
}

enum qkind { Q_HASH, Q_CMP, Q_ASSIGN, Q_ORDERED, Q_KINDS };
static const char *const qkind_name[] = { "hashCode", "compareTo", "sharding", "ordered sharding" };

struct question {
	enum qkind kind;
	char *q, *ours;
	bool min_hash;   /* Q_HASH: a name made to hash to MIN_VALUE */
	bool java_equal; /* Q_CMP: different bytes */
};

static void make_hash_q(struct question *x, const char *s, bool min_hash)
{
	struct line q = { 0 }, a = { 0 };
	add(&q, "H");
	add_hex(&q, s);
	add(&a, "%" PRId32, shard_java_hash(s));
	*x = (struct question){ Q_HASH, q.s, a.s, min_hash, false };
}

static void make_cmp_q(struct question *x, const char *s, const char *t)
{
	struct line q = { 0 }, a = { 0 };
	add(&q, "C");
	add_hex(&q, s);
	add_hex(&q, t);
	int c = shard_java_cmp(s, t);
	add(&a, "%d", c < 0 ? -1 : c > 0);
	*x = (struct question){ Q_CMP, q.s, a.s, false, c == 0 && strcmp(s, t) != 0 };
}

/* The time of a sharding, for SINGLE_SHARDING_BALANCE: around now, any 64-bit value, or one that
 * makes hashCode + (int) millis Integer.MIN_VALUE (ElasticJob throws). */
static int64_t rand_millis(const char *job)
{
	uint32_t r = rn(10);
	if (r < 6) return 1700000000000LL + (int64_t)rn(1u << 30) * 256 + rn(256);
	if (r < 8) return (int64_t)(((uint64_t)rn(0xffffffffu) << 32) | rn(0xffffffffu));
	uint32_t low = (uint32_t)INT32_MIN - (uint32_t)shard_java_hash(job);
	return (int64_t)(((uint64_t)rn(1u << 11) << 32) | low);
}

static void make_assign_q(struct question *x)
{
	conf_strategy_t st = strategies[rn(NSTRATEGIES)];
	uint32_t total = 1 + rn(100), n = 1 + rn(20), owner[100];
	static struct str ids[20];
	const char *names[20];
	struct str job;
	rand_job(&job);
	for (uint32_t i = 0; i < n; i++) {
		rand_instance(&ids[i]);
		names[i] = ids[i].s;
	}
	if (n > 1 && rn(40) == 0) /* a duplicate */
		ids[rn(n)] = ids[rn(n)];
	struct line q = { 0 }, a = { 0 };
	int64_t ms = rand_millis(job.s);
	add(&q, "S %s %" PRIu32 " %" PRId64, conf_strategy_name(st), total, ms);
	add_hex(&q, job.s);
	for (uint32_t i = 0; i < n; i++)
		add_hex(&q, names[i]);
	errno = 0;
	int r = shard_assign(st, job.s, ms, names, n, total, owner);
	our_answer(&a, r, errno, owner, total);
	*x = (struct question){ Q_ASSIGN, q.s, a.s, false, false };
}

static void make_ordered_q(struct question *x)
{
	conf_strategy_t st = strategies[rn(NSTRATEGIES)];
	uint32_t total = rn(120), n = 1 + rn(40), owner[120];
	struct str job;
	rand_job(&job);
	struct line q = { 0 }, a = { 0 };
	int64_t ms = rand_millis(job.s);
	add(&q, "O %s %" PRIu32 " %" PRIu32 " %" PRId64, conf_strategy_name(st), total, n, ms);
	add_hex(&q, job.s);
	errno = 0;
	int r = shard_assign_ordered(st, job.s, ms, n, total, owner);
	our_answer(&a, r, errno, owner, total);
	*x = (struct question){ Q_ORDERED, q.s, a.s, false, false };
}

static void test_against_java(size_t nrandom)
{
	size_t cap = 4 * nrandom + 64, nq = 0;
	struct question *qs = calloc(cap, sizeof *qs);
	char **questions = calloc(cap, sizeof *questions);
	if (!qs || !questions)
		BAIL_OUT("out of memory");

	/* the fixed facts, once more, from Java's side */
	make_hash_q(&qs[nq++], "job1", false);
	make_hash_q(&qs[nq++], "polygenelubricants", true);
	make_hash_q(&qs[nq++], "\xe4\xbd\x9c\xe4\xb8\x9a", false);
	make_cmp_q(&qs[nq++], "\xf0\x90\x80\x80", "\xee\x80\x80");
	for (size_t i = 0; i < nrandom; i++) {
		struct str s = { .n = 0 }, t = { .n = 0 };
		/* hashCode: decoder-shaped bytes, random text, and names made to hash to MIN_VALUE */
		uint32_t r = rn(10);
		if (r < 5) {
			rand_bytes(&s, rn(10));
			make_hash_q(&qs[nq++], s.s, false);
		} else if (r < 9) {
			rand_text(&s, rn(20), rn(3) ? 0 : 10);
			make_hash_q(&qs[nq++], s.s, false);
		} else {
			char name[600];
			rand_text(&s, rn(6), 5);
			name_with_hash(name, sizeof name, s.s, INT32_MIN);
			make_hash_q(&qs[nq++], name, true);
		}
		/* compareTo: a string and a near copy of it */
		s.n = 0;
		s.s[0] = '\0';
		if (rn(2))
			rand_bytes(&s, rn(8));
		else
			rand_text(&s, rn(8), rn(2) ? 0 : 15);
		memcpy(&t, &s, sizeof s);
		switch (rn(4)) {
		case 0: /* cut */
			t.n = t.n ? rn((uint32_t)t.n + 1) : 0;
			t.s[t.n] = '\0';
			break;
		case 1: /* a different tail */
			t.n = t.n ? rn((uint32_t)t.n + 1) : 0;
			t.s[t.n] = '\0';
			if (rn(2))
				rand_bytes(&t, 1 + rn(4));
			else
				rand_text(&t, 1 + rn(3), 10);
			break;
		case 2: /* one byte changed */
			if (t.n)
				t.s[rn((uint32_t)t.n)] = (char)(0x80 + rn(0x80));
			break;
		default: /* unrelated */
			t.n = 0;
			t.s[0] = '\0';
			rand_text(&t, rn(8), 5);
			break;
		}
		make_cmp_q(&qs[nq++], s.s, t.s);
		make_assign_q(&qs[nq++]);
		if (i % 4 == 0)
			make_ordered_q(&qs[nq++]);
	}
	for (size_t i = 0; i < nq; i++)
		questions[i] = qs[i].q;

	char why[600];
	char **ans = oracle_java(ORACLE, NULL, questions, nq, why, sizeof why);
	if (!ans) {
		if (errno == ENOENT)
			skip(NORACLE_CHECKS, why);
		else
			for (int i = 0; i < NORACLE_CHECKS; i++)
				fail("ask Java (%s): %s", ORACLE, why);
	} else {
		size_t asked[Q_KINDS] = { 0 }, wrong[Q_KINDS] = { 0 }, shown = 0;
		size_t min_hash = 0, min_ok = 0, java_equal = 0, exc = 0, dup = 0;
		for (size_t i = 0; i < nq; i++) {
			struct question *x = &qs[i];
			asked[x->kind]++;
			if (strcmp(ans[i], x->ours) != 0) {
				wrong[x->kind]++;
				if (shown++ < 10)
					diag("MISMATCH %s\n  java: %s\n  ejob: %s", x->q, ans[i], x->ours);
			}
			if (x->min_hash) {
				min_hash++;
				min_ok += atoll(ans[i]) == INT32_MIN;
			}
			java_equal += x->java_equal && !strcmp(ans[i], "0");
			exc += !strncmp(ans[i], "EXC", 3);
			dup += !strcmp(ans[i], "DUP");
		}
		for (int k = 0; k < Q_KINDS; k++)
			ok(wrong[k] == 0, "%zu %s questions: Java and ejob agree (%zu differ)", asked[k], qkind_name[k],
			   wrong[k]);
		is_int(min_ok, min_hash, "Java: all %zu names made to hash to MIN_VALUE do", min_hash);
		ok(java_equal > 0 && exc > 0, "covered: %zu different byte strings Java sees as equal, %zu cases "
		   "where ElasticJob throws (MIN_VALUE)", java_equal, exc);
		ok(dup > 0, "covered: %zu shardings with a duplicate instance", dup);
		if (!getenv("EJOB_SHARD_QUIET"))
			note("%zu questions to Java", nq);
		oracle_free(ans, nq);
	}
	for (size_t i = 0; i < nq; i++) {
		free(qs[i].q);
		free(qs[i].ours);
	}
	free(qs);
	free(questions);
}

int main(void)
{
	size_t nrandom = getenv("EJOB_SHARD_RANDOM") ? strtoul(getenv("EJOB_SHARD_RANDOM"), NULL, 10) : NRANDOM;
	if (getenv("EJOB_SHARD_SEED")) { /* another sequence; the state must not be 0 */
		rng = (strtoull(getenv("EJOB_SHARD_SEED"), NULL, 0) + 1) * 0x9E3779B97F4A7C15u;
		rng += !rng;
	}
	test_java_strings();
	test_worked_example();
	test_elasticjob_unit_tests();
	test_edges();
	test_errors();
	test_against_java(nrandom);
	return done_testing();
}
