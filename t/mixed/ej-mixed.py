#!/usr/bin/python3
"""t/mixed/ej-mixed.py: ejob supervisors and real ElasticJob-Lite 3.0.4 instances on one job.

Not part of `prove t/` (it needs a build of ElasticJob and takes about 2 minutes); run it by hand
after a change to coordination:

    /usr/bin/python3 t/mixed/ej-mixed.py ZK_HOST:PORT [NAMESPACE] [FAILOVER] [STRATEGY]

ZooKeeper must allow a 6 s session (maxSessionTimeout >= 6000). ElasticJob's launcher is
$EJOB_ELASTICJOB (default ../shared/elasticjob/run.sh from the repository). Needs kazoo
(python3-kazoo). 2 ejob supervisors and 2 ElasticJob instances share a 6-item job firing every
3 s (its script records each run and sleeps 1 s); then ElasticJob's leader is killed (-9, while
its items run), an ejob supervisor is killed, an ejob supervisor replaces the last ElasticJob
instance, an ElasticJob instance joins while ejob leads, and that leader is killed. After each
step it prints the leader, the instances online (and any live instance whose node is missing)
and the owners, then every fire: who ran which item. Runs that start more than 0.4 s after the
fire second are marked late (failover and catch-up runs). Fires between a kill -9 and the end
of the killed session miss the dead instance's items on both implementations. docs/design.md
("Mixed clusters") has a run's results. Exit 1 if an item ran twice in one fire or a live
instance's node went missing."""
import json, os, signal, subprocess, sys, tempfile, time
from kazoo.client import KazooClient

if len(sys.argv) < 2:
    sys.exit(__doc__)
ZK = sys.argv[1]
NS = sys.argv[2] if len(sys.argv) > 2 else "ejmixed%d" % os.getpid()
FAILOVER = sys.argv[3] if len(sys.argv) > 3 else "true"
# a strategy other than the default, on both sides (t/93 checks the assignment it gives)
STRATEGY = sys.argv[4] if len(sys.argv) > 4 else "ROUND_ROBIN"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUP = ROOT + "/build/supervisor/ejob-supervisor"
EJ = os.environ.get("EJOB_ELASTICJOB", os.path.join(ROOT, "..", "shared", "elasticjob", "run.sh"))
D = tempfile.mkdtemp(prefix="ej-mixed.")
bad = 0
RUNS = D + "/runs"
open(RUNS, "w").close()
with open(D + "/job.sh", "w") as f:
    f.write('#!/bin/sh\necho "$(date +%%s.%%N) ${EJOB_INSTANCE_ID:-EJ} $*" >> %s\nsleep 1\n' % RUNS)
os.chmod(D + "/job.sh", 0o755)
with open(D + "/sup.yaml", "w") as f:
    f.write('regCenter: {serverLists: "%s", namespace: %s, sessionTimeoutMilliseconds: 6000}\n'
            'supervisor: {workers: 4}\njobs:\n  mixjob:\n    type: script\n    cron: "0/3 * * * * ?"\n'
            '    shardingTotalCount: 6\n    failover: %s\n    overwrite: false\n'
            '    jobShardingStrategyType: %s\n'
            '    props: {script.command.line: "%s/job.sh"}\n' % (ZK, NS, FAILOVER, STRATEGY, D))

procs = {}
zk = KazooClient(hosts=ZK)
zk.start()
J = "/%s/mixjob" % NS


def ej(name, ip):
    log = open("%s/%s.log" % (D, name), "w")
    p = subprocess.Popen([EJ, ZK, NS, "mixjob", "0/3 * * * * ?", "6", FAILOVER,
                          D + "/job.sh", "6000", STRATEGY, "ip=" + ip], stdout=log, stderr=log)
    procs[name] = (p, ip)
    for _ in range(300):
        if "EJRUN ready" in open("%s/%s.log" % (D, name)).read():
            return
        time.sleep(0.1)
    print("!! %s not ready" % name)


def sup(name, ip):
    log = open("%s/%s.log" % (D, name), "w")
    p = subprocess.Popen([SUP, "-c", D + "/sup.yaml", "--ip", ip, "--socket", "%s/%s.sock" % (D, name)],
                         stdout=log, stderr=log)
    procs[name] = (p, ip)
    time.sleep(1.5)


def kill(name, sig=signal.SIGKILL):
    if sig == signal.SIGKILL:
        while abs(time.time() % 3 - 0.5) > 0.05:   # while the fire's items run
            time.sleep(0.01)
    p, ip = procs.pop(name)
    p.send_signal(sig)
    p.wait()


def idof(name):
    p, ip = procs[name]
    return "%s@-@%d" % (ip, p.pid)    # run.sh execs java: the same pid


def state(label):
    try:
        leader = zk.get(J + "/leader/election/instance")[0].decode()
    except Exception:
        leader = "-"
    inst = sorted(zk.get_children(J + "/instances"))
    want = sorted(idof(n) for n in procs)
    owners = []
    for i in range(6):
        try:
            owners.append(zk.get(J + "/sharding/%d/instance" % i)[0].decode())
        except Exception:
            owners.append("?")
    names = {idof(n): n for n in procs}
    gone = [names[x] for x in want if x not in inst]
    if gone:
        global bad
        bad = 1
    print("[%s] leader=%s instances=%s missing=%s" % (label, names.get(leader, leader), [names.get(x, x) for x in inst],
                                                     gone))
    print("    owners: %s" % [names.get(o, o) for o in owners])
    return names


marks = []


def phase(label, secs):
    t0 = time.time()
    time.sleep(secs)
    marks.append((label, t0, time.time(), state(label)))


def runs():
    out = []
    for l in open(RUNS):
        parts = l.split(" ", 2)
        try:
            ctx = json.loads(parts[2])
        except Exception:
            continue
        tid = ctx["taskId"].split("@-@")
        t = float(parts[0])
        out.append((t, ctx["shardingItem"], tid[3] + ("/late" if t % 3 > 0.4 else "")))
    return out


try:
    ej("ej1", "127.0.0.9")
    phase("ej1 alone (leads)", 4)
    sup("a", "127.0.0.2")
    sup("b", "127.0.0.3")
    ej("ej2", "127.0.0.10")
    phase("4 up, ElasticJob leads", 12)
    kill("ej1")
    phase("kill -9 ej1 (the leader)", 15)
    kill("a")
    phase("kill -9 ejob a", 15)
    sup("c", "127.0.0.4")
    kill("ej2", signal.SIGTERM)
    phase("rolling: c up, ej2 stopped: all ejob", 15)
    ej("ej3", "127.0.0.11")
    phase("ej3 joins while ejob leads", 12)
    names = marks[-1][3]
    lead = zk.get(J + "/leader/election/instance")[0].decode()
    ln = names.get(lead)
    if ln:
        kill(ln)
        phase("kill -9 the leader %s" % ln, 15)
    phase("steady", 9)
finally:
    for n in list(procs):
        kill(n, signal.SIGTERM)

R = runs()
names = {}
for label, t0, t1, nm in marks:
    print("== %s" % label)
    slots = {}
    for t, item, ip in R:
        if t0 <= t < t1:
            slots.setdefault(int(t) // 3, []).append((item, ip))
    for s in sorted(slots):
        items = sorted(i for i, ip in slots[s] if not ip.endswith("/late"))
        dup = sorted(set(i for i in items if items.count(i) > 1))
        miss = [i for i in range(6) if i not in items]
        by = {}
        for i, ip in slots[s]:
            by.setdefault(ip, []).append(i)
        flag = "" if not dup and not miss else "  <-- missing %s dup %s" % (miss, dup)
        if dup:
            bad = 1
        print("  fire %d: %s%s" % (s * 3 % 60, " ".join("%s:%s" % (ip.split('.')[-1], sorted(v)) for ip, v in sorted(by.items())), flag))
zk.stop()
print("logs and runs in %s" % D)
sys.exit(bad)
