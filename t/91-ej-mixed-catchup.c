/* t/91-ej-mixed-catchup.c: a catch-up in a mixed cluster stands for every missed fire at once.
 *
 * Two real ElasticJob-Lite 3.0.4 instances (t/lib/tej: the first leads) and two ejob supervisors
 * share a 6-item job firing every 3 s (failover on; each run takes 2 s). The second ElasticJob
 * instance is killed (-9) while its items run; its session (5.3 s) ends shortly before a fire
 * (F2). ElasticJob's leader takes the crashed item over and runs it across F2, so its F2 trigger
 * misfires (it flags sharding/{i}/misfire on the items it owned then) and nobody shards until a
 * later fire Fr: F3 on a quiet machine, later when the leader is slow (seen in CI: ~6 s late).
 * ejob's F2 waits for the reshard and runs after it with the new assignment; the fires that came
 * while it waited or ran (F3 .. Fr, and any a run spills into) are missed, and one catch-up stands
 * for all of them (ElasticJob's misfire flag is a boolean: one run again for any number). The
 * reshard gives ejob items with the leader's flags on them: the catch-up stands for the flag's
 * fire too. On the code before issue 24's fix, ejob ran such an item for F2, for its catch-up
 * and once more for the flag, then again each time that extra run spilled into the next fire.
 *
 * The test does not assume a timeline: it reads which one happened (the reshard's time from the
 * sharding nodes' mtime, the assignment each ejob run ran under from its history record's epoch)
 * and judges every run by what it stands for. An ejob run names its fires in the history; an
 * ElasticJob run (its record: start, end, instance) is a take-over of a crashed item (another
 * instance's item, before the reshard: it stands for a fire before the kill), a run again for
 * misfires (it starts as the same instance's run of the item ends, no fire in between), or the
 * run of the fire it started in. A run again (ElasticJob's, or an ejob run for a misfire flag)
 * stands for the fires of its item that nothing else ran before it, at least one. Then, per item:
 * each fire from the one its owner after the reshard answers for (ejob: F2 when its F2 waited for
 * the reshard; ElasticJob: Fr) stands with exactly one run (nothing lost, nothing run twice),
 * fires before that with at most one, and no run stands for no missed fire.
 *
 * T91_STALL_MS=N stops ElasticJob's leader (SIGSTOP) for N ms from just before F3, so that it
 * reshards late: the CI timeline, on demand (1200 gives a reshard at F4; from about 2000 its
 * client times the connection out and it loses its session: ejob's leader reshards, twice). */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t/lib/tej.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/tap.h"

#define ITEMS 6
#define PERIOD_MS 3000
#define SESSION_MS 5300   /* expires ~0.4 s before a fire: the failover run spans it */
#define NS "t91"
#define JOB "mix"
#define CRON "0/3 * * * * ?"

static const char job_sh[] =
    "#!/bin/sh\n"
    "# the sharding context JSON is the last argument, on both sides\n"
    "for ctx; do :; done\n"
    "item=${ctx#*\\\"shardingItem\\\":}; item=${item%%%%[,\\}]*}\n"
    "task=${ctx#*\\\"taskId\\\":\\\"}; task=${task%%%%\\\"*}\n"
    "echo \"$(date +%%s%%N) $item ${EJOB_FIRE_ID:-0} $task $$\" >> %s/runs\n"
    "sleep 2\n"
    "echo \"$(date +%%s%%N) end $$\" >> %s/runs\n";

static zhandle_t *zh;

static int instances(void)
{
	struct String_vector v = { 0 };
	if (zoo_get_children(zh, "/" NS "/" JOB "/instances", 0, &v) != ZOK) return -1;
	int n = v.count;
	deallocate_String_vector(&v);
	return n;
}

/* the assignment: each item's owner, and its commit (the highest mzxid: ejob's epoch) and when */
struct assign {
	char owner[ITEMS][64];
	int64_t zxid, mtime_ms;
};

static void read_assign(struct assign *a)
{
	memset(a, 0, sizeof *a);
	for (int i = 0; i < ITEMS; i++) {
		char p[128];
		struct Stat st;
		int len = (int)sizeof a->owner[i] - 1;
		snprintf(p, sizeof p, "/" NS "/" JOB "/sharding/%d/instance", i);
		if (zoo_get(zh, p, 0, a->owner[i], &len, &st) != ZOK || len < 0) len = 0;
		a->owner[i][len] = '\0';
		if (len && st.mzxid > a->zxid) a->zxid = st.mzxid;
		if (len && st.mtime > a->mtime_ms) a->mtime_ms = st.mtime;
	}
}

/* a new assignment, whole, and no reshard under way */
static int resharded(const struct assign *before, struct assign *after)
{
	read_assign(after);
	if (after->zxid == before->zxid) return 0;
	for (int i = 0; i < ITEMS; i++)
		if (!after->owner[i][0]) return 0;
	return zoo_exists(zh, "/" NS "/" JOB "/leader/sharding/necessary", 0, NULL) == ZNONODE &&
	       zoo_exists(zh, "/" NS "/" JOB "/leader/sharding/processing", 0, NULL) == ZNONODE;
}

struct run {
	long long start_ms, end_ms, fire;   /* fire: ejob's fire id (0: an ElasticJob run); end_ms 0: not seen */
	int item, pid;
	char who[64];                       /* the instance (from the taskId) */
};

static int read_runs(const char *path, struct run *r, int max)
{
	char *t = tsup_slurp(path);
	int n = 0;
	for (char *l = t ? strtok(t, "\n") : NULL; l; l = strtok(NULL, "\n")) {
		long long ns, fire;
		int item, pid;
		char task[200];
		if (sscanf(l, "%lld end %d", &ns, &pid) == 2) {
			for (int a = n - 1; a >= 0; a--)
				if (r[a].pid == pid && !r[a].end_ms) {
					r[a].end_ms = ns / 1000000;
					break;
				}
			continue;
		}
		if (n == max || sscanf(l, "%lld %d %lld %199s %d", &ns, &item, &fire, task, &pid) != 5) continue;
		const char *w = strstr(task, "@-@READY@-@");
		r[n].start_ms = ns / 1000000;
		r[n].end_ms = 0;
		r[n].fire = fire;
		r[n].item = item;
		r[n].pid = pid;
		snprintf(r[n].who, sizeof r[n].who, "%s", w ? w + 11 : "?");
		n++;
	}
	free(t);
	return n;
}

/* ---- what each run stands for ------------------------------------------------------------------- */

enum { MAXF = 32, MAXAGAIN = 256 };

struct tally {
	long long f0;               /* the first fire counted: the kill's */
	int n;                      /* fires counted */
	int cnt[ITEMS][MAXF];       /* runs standing for each fire */
	long long from, to;         /* runs again from F2 to the last fire counted */
	int extra[ITEMS];           /* runs again between from and to that found no fire left unrun */
	struct again { long long start; int item; } again[MAXAGAIN];
	int nagain;
};

static void stand(struct tally *t, int item, long long fire)
{
	if (item < 0 || item >= ITEMS || fire < t->f0 || (fire - t->f0) % PERIOD_MS) return;
	long long k = (fire - t->f0) / PERIOD_MS;
	if (k < t->n) t->cnt[item][k]++;
}

static void run_again(struct tally *t, int item, long long start)
{
	if (item < 0 || item >= ITEMS || start < t->f0) return;
	if (t->nagain < MAXAGAIN) t->again[t->nagain++] = (struct again){ start, item };
}

static int by_start(const void *a, const void *b)
{
	const struct again *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

/* A run again stands for every fire of its item up to its start that nothing else ran (one run
 * for any number of misfires), and for at least one: from F2 on (before, ElasticJob's instance
 * runs its own items again as it likes: a take-over's trigger that finds no take-over ready runs
 * them, seen under load; not ejob's doing); one that starts after the fires counted may stand
 * for a later one. */
static void settle_again(struct tally *t)
{
	qsort(t->again, (size_t)t->nagain, sizeof t->again[0], by_start);
	for (int a = 0; a < t->nagain; a++) {
		int it = t->again[a].item, found = 0;
		for (int k = 0; k < t->n && t->f0 + (long long)k * PERIOD_MS <= t->again[a].start; k++)
			if (!t->cnt[it][k]) t->cnt[it][k] = found = 1;
		if (!found && t->again[a].start >= t->from && t->again[a].start < t->to) t->extra[it]++;
	}
}

/* ejob's runs from both histories ("epoch": "0x..."): a run names its fires, a failover's and a misfire flag's name
 * none (a take-over stands for the crashed run's fire, before the kill; a flag's run is a run
 * again). *old: a run of F2 ran an assignment before the reshard's; *named_f2: one ran F2. */
static void tally_ejob(struct tally *t, const char *path, long long f2, int64_t epoch, int *old, int *named_f2)
{
	char *text = tsup_slurp(path);
	for (char *l = text ? strtok(text, "\n") : NULL; l; l = strtok(NULL, "\n")) {
		char item[16], fin[8], src[32], fid[32], ep[32];
		if (!tlib_json_field(l, "item", item, sizeof item) || !tlib_json_field(l, "final", fin, sizeof fin) ||
		    strcmp(fin, "true"))
			continue;
		int it = atoi(item);
		const char *fs = strstr(l, "\"fires\":");
		if (fs && fs[8] == '[') {
			for (const char *q = fs + 9; *q && *q != ']';) {
				char *e;
				long long f = strtoll(q, &e, 10);
				if (e == q) break;
				stand(t, it, f);
				if (f == f2) {
					*named_f2 = 1;
					if (tlib_json_field(l, "epoch", ep, sizeof ep) && strtoll(ep + (*ep == '"'), NULL, 0) != epoch) *old = 1;
				}
				q = *e == ',' ? e + 1 : e;
			}
			continue;
		}
		if (tlib_json_field(l, "source", src, sizeof src) && !strcmp(src, "\"FAILOVER\"")) continue;
		if (tlib_json_field(l, "fireId", fid, sizeof fid)) run_again(t, it, atoll(fid));
	}
	free(text);
}

/* ElasticJob's runs (no fire id): a take-over, a run again, or the run of the fire it started in */
static const char *tally_ej(struct tally *t, const struct run *r, int n, int a, long long resharded,
                            const struct assign *before)
{
	const struct run *x = &r[a];
	if (x->start_ms < t->f0 || x->item < 0 || x->item >= ITEMS) return "";
	if (x->start_ms < resharded && strcmp(x->who, before->owner[x->item])) return " (a take-over)";
	for (int b = 0; b < n; b++) {
		const struct run *q = &r[b];
		if (b == a || q->fire || q->item != x->item || strcmp(q->who, x->who) || !q->end_ms) continue;
		if (q->end_ms > x->start_ms + 20 || x->start_ms - q->end_ms > 1000) continue;
		/* a fire between the end and the start: the thread was free at it, its own run */
		if ((x->start_ms / PERIOD_MS) * PERIOD_MS > q->end_ms) continue;
		run_again(t, x->item, x->start_ms);
		return " (a run again)";
	}
	stand(t, x->item, (x->start_ms / PERIOD_MS) * PERIOD_MS);
	return "";
}

static const char *side(const char *owner, const struct tej *ej1)
{
	return !strcmp(owner, ej1->id) ? "ElasticJob" : owner[0] ? "ejob" : "nobody";
}

int main(void)
{
	tlib_init(240);
	const char *run = tej_launcher();
	if (!run) {
		struct tej none;
		ok(tej_start(&none, "none", "", "", "", "", 0, 0, "", 0, NULL, NULL) == 0,
		   "ElasticJob-Lite 3.0.4's launcher is there (this test needs the real ElasticJob)");
		return done_testing();
	}
	struct tzk_server zk;
	if (tzk_start(&zk, "zk", &(struct tzk_opts){ .tick_ms = 200, .max_session_ms = 10000 }, 30000) < 0) BAIL_OUT("cannot start ZooKeeper");
	zh = tzk_connect(zk.connect, 10000, NULL, 10000);
	if (!zh) BAIL_OUT("cannot connect to ZooKeeper");
	char sh[600], runs[600], cmd[700];
	snprintf(runs, sizeof runs, "%s/runs", tlib_tmpdir());
	char body[1024];
	snprintf(body, sizeof body, job_sh, tlib_tmpdir(), tlib_tmpdir());
	tlib_script(sh, sizeof sh, "job.sh", body);
	snprintf(cmd, sizeof cmd, "%s", sh);

	/* ElasticJob first: it publishes the config and leads */
	struct tej ej1, ej2;
	const char *o1[] = { "ip=127.0.0.11", NULL }, *o2[] = { "ip=127.0.0.12", NULL };
	if (tej_start(&ej1, "ej1", zk.connect, NS, JOB, CRON, ITEMS, 1, cmd, SESSION_MS, NULL, o1) < 0)
		BAIL_OUT("cannot start ElasticJob instance ej1");
	if (tej_start(&ej2, "ej2", zk.connect, NS, JOB, CRON, ITEMS, 1, cmd, SESSION_MS, NULL, o2) < 0)
		BAIL_OUT("cannot start ElasticJob instance ej2");
	char yaml[2048];
	snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"%s\", namespace: " NS ", sessionTimeoutMilliseconds: %d}\n"
	         "supervisor: {workers: 4, attachSocket: \"@SOCK@\", history: {file: \"@DIR@/history.jsonl\"}}\n"
	         "jobs:\n  " JOB ":\n    type: script\n    cron: \"" CRON "\"\n    shardingTotalCount: %d\n"
	         "    failover: true\n    overwrite: false\n    props: {script.command.line: \"%s\"}\n",
	         zk.connect, SESSION_MS, ITEMS, cmd);
	static struct tsup s[2];
	const char *ips[2] = { "127.0.0.2", "127.0.0.3" };
	for (int k = 0; k < 2; k++) {
		char name[8];
		snprintf(name, sizeof name, "s%d", k);
		tsup_config(&s[k], name, yaml);
		const char *args[] = { "--ip", ips[k], NULL };
		if (tsup_start(&s[k], args) <= 0) BAIL_OUT("cannot start supervisor %d", k);
	}
	uint64_t end = tlib_now_ms() + 30000;
	while (instances() != 4 && tlib_now_ms() < end) usleep(100000);
	is_int(instances(), 4, "two ElasticJob instances and two ejob supervisors on one job");

	/* steady: a fire whose 6 items all ran, after everyone is there */
	long long joined = tlib_wall_ns() / 1000000;
	end = tlib_now_ms() + 30000;
	int steady = 0;
	while (!steady && tlib_now_ms() < end) {
		struct run r[512];
		int n = read_runs(runs, r, 512);
		for (int a = 0; a < n && !steady; a++) {
			long long f = r[a].start_ms / PERIOD_MS;
			int seen[ITEMS] = { 0 }, all = 1;
			if (r[a].start_ms < joined + PERIOD_MS) continue;
			for (int b = 0; b < n; b++)
				if (r[b].start_ms / PERIOD_MS == f && r[b].item >= 0 && r[b].item < ITEMS) seen[r[b].item]++;
			for (int i = 0; i < ITEMS; i++) all &= seen[i] == 1;
			steady = all;
		}
		usleep(200000);
	}
	ok(steady, "steady: a fire runs each of the 6 items once, on both sides");
	struct assign before, after;
	read_assign(&before);

	/* kill ej2 while its items of a fire run */
	long long now = tlib_wall_ns() / 1000000;
	long long at = (now / PERIOD_MS + 1) * PERIOD_MS + 400;
	usleep((useconds_t)((at - now) * 1000));
	tej_kill(&ej2);
	long long killed = tlib_wall_ns() / 1000000;
	end = tlib_now_ms() + 20000;
	while (instances() != 3 && tlib_now_ms() < end) usleep(50000);
	long long expired = tlib_wall_ns() / 1000000;
	is_int(instances(), 3, "its session expires (%lld ms after the kill)", expired - killed);
	long long f2 = (expired / PERIOD_MS + 1) * PERIOD_MS;
	const char *stall = getenv("T91_STALL_MS");
	if (stall && atoi(stall) > 0) {
		now = tlib_wall_ns() / 1000000;
		if (f2 + PERIOD_MS - 200 > now) usleep((useconds_t)((f2 + PERIOD_MS - 200 - now) * 1000));
		diag("T91_STALL_MS: ElasticJob's leader stopped for %d ms from F3 - 200 ms", atoi(stall));
		kill(ej1.pid, SIGSTOP);
		usleep((useconds_t)atoi(stall) * 1000u);
		kill(ej1.pid, SIGCONT);
	}
	/* the reshard (whenever it comes: ElasticJob's deletes the owners, then writes them in one
	 * transaction), then the fires after it and their catch-ups */
	end = tlib_now_ms() + 30000;
	while (!resharded(&before, &after) && tlib_now_ms() < end) usleep(100000);
	long long fr = (after.mtime_ms / PERIOD_MS) * PERIOD_MS;
	int late = (int)((fr - f2) / PERIOD_MS);
	ok(after.zxid != before.zxid && fr >= f2, "ElasticJob's leader reshards at a fire after the expiry: F2+%d (%lld ms "
	   "after its time)%s", late, after.mtime_ms - fr, late == 1 ? ", as on a quiet machine" : late > 1 ? ", late" : "");
	usleep(6u * PERIOD_MS * 1000u);
	long long upto = tlib_wall_ns() / 1000000;
	/* ElasticJob's leader resharded once; or it lost its session meanwhile (a pause longer than its
	 * client's read timeout, 2/3 of the session), ejob's leader resharded and again when it came back */
	struct assign last;
	read_assign(&last);
	long long fl = (last.mtime_ms / PERIOD_MS) * PERIOD_MS;

	/* the fires judged: from the kill's on, those whose runs (a catch-up comes a run later) are over */
	static struct tally t;
	t.f0 = (killed / PERIOD_MS) * PERIOD_MS;
	long long we = f2 + ((upto - 2 * PERIOD_MS - f2) / PERIOD_MS) * PERIOD_MS;
	if (we < f2 + PERIOD_MS) we = f2 + PERIOD_MS;
	t.n = (int)((we - t.f0) / PERIOD_MS);
	if (t.n > MAXF) t.n = MAXF;
	we = t.f0 + (long long)t.n * PERIOD_MS;
	t.from = f2;
	t.to = we;
	int old = 0, named_f2 = 0;
	for (int k = 0; k < 2; k++) {
		char p[700];
		snprintf(p, sizeof p, "%s/history.jsonl", s[k].dir);
		tally_ejob(&t, p, f2, after.zxid, &old, &named_f2);
	}
	static struct run r[1024];
	int n = read_runs(runs, r, 1024);
	for (int a = 0; a < n; a++) {
		const char *what = r[a].fire ? "" : tally_ej(&t, r, n, a, after.mtime_ms, &before);
		if (r[a].start_ms >= killed - PERIOD_MS)
			diag("run: +%lld ms item %d fire %lld on %s%s", r[a].start_ms - killed, r[a].item, r[a].fire, r[a].who, what);
	}
	settle_again(&t);

	/* what the owner after the reshard answers for: ElasticJob from its reshard's fire on (after a
	 * reshard of ejob's, from the fire after: ElasticJob's follower may run that one with its old
	 * items, docs/design.md); ejob from F2 on when its F2 waited for the reshard, else from the
	 * reshard's fire on */
	long long ws_ej = fl == fr ? fr : fl + PERIOD_MS, ws_ejob = old ? fr : f2;
	if (ws_ej < f2) ws_ej = f2;
	if (ws_ejob < f2) ws_ejob = f2;
	if (last.zxid != after.zxid)
		diag("resharded again at F2%+d: ElasticJob's leader lost its session (ejob's leader resharded without it, "
		     "then with it back)", (int)((fl - f2) / PERIOD_MS));
	diag("timeline: ej2 killed at F0+%lld ms, its session expired %lld ms before F2; ElasticJob's leader resharded "
	     "at F2+%d; ejob's F2 %s", killed - t.f0, f2 - expired, late,
	     old ? "ran the assignment before it (the resharding flag came after its time)"
	         : named_f2 ? "waited for it and ran the new one" : "was named by no run");
	for (int k = 0; k < t.n; k++) {
		char line[128] = "";
		for (int i = 0; i < ITEMS; i++) snprintf(line + strlen(line), sizeof line - strlen(line), " %d", t.cnt[i][k]);
		diag("fire %lld (F2%+d): runs standing for it per item:%s", t.f0 + k * PERIOD_MS,
		     (int)((t.f0 + k * PERIOD_MS - f2) / PERIOD_MS), line);
	}
	diag("owners before the kill: %s %s %s %s %s %s", before.owner[0], before.owner[1], before.owner[2],
	     before.owner[3], before.owner[4], before.owner[5]);
	diag("owners after the reshard: %s %s %s %s %s %s", last.owner[0], last.owner[1], last.owner[2],
	     last.owner[3], last.owner[4], last.owner[5]);
	int ours = 0;
	for (int i = 0; i < ITEMS; i++) {
		int ej = !strcmp(last.owner[i], ej1.id);
		ours += !ej && last.owner[i][0];
		long long ws = ej ? ws_ej : ws_ejob;
		char got[160] = "";
		int good = t.extra[i] == 0 && last.owner[i][0];
		for (long long f = f2; f < we; f += PERIOD_MS) {
			int c = t.cnt[i][(f - t.f0) / PERIOD_MS];
			good &= f < ws ? c <= 1 : c == 1;
			snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s%d", f == f2 ? "" : " ", f == ws ? "| " : "", c);
		}
		ok(good, "item %d (%s's): runs standing for each fire F2 .. F2%+d: %s (from | on exactly 1, before at most 1), "
		   "and %d run%s again for no unrun fire", i, side(last.owner[i], &ej1), (int)((we - f2) / PERIOD_MS) - 1, got,
		   t.extra[i], t.extra[i] == 1 ? "" : "s");
	}
	ok(ours >= 2, "ejob runs %d of the items after the reshard", ours);

	for (int k = 0; k < 2; k++) tsup_stop(&s[k], SIGTERM, 10000);
	tej_stop(&ej1, 10000);
	tej_stop(&ej2, 10000);
	zookeeper_close(zh);
	tzk_stop(&zk, SIGKILL, 5000);
	return done_testing();
}
