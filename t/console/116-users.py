"""t/console/116-users.py: the driver of t/116-console-users.c (read its header first)."""
import os

from tconsole import Browser, act, api, check, ctl, diag, http, job_doc, ok, run, skip, wait

IDS = os.environ["EJOB_IDS"].split()   # the instances of s0 (127.0.0.1) and s1 (127.0.0.2)
WRITES = "main [data-action], #job-ops, #server-ops, #cfg-edit, #cfg-editor, #op-trigger, #op-remove, main button.danger"


def loaded(b, route):
    """the page at route, with its data shown"""
    b.go(route)
    ready = {"/": "#ov-jobs-table tbody tr", "/jobs": "#jobs-table tr.row", "/jobs/web": "#job-items tbody tr",
             "/servers": "#servers-table tbody tr", "/servers/127.0.0.1": "#server-jobs tbody tr", "/history": "#hist-form"}
    css = ready.get(route, "#instance-jobs tbody tr")
    return wait(lambda: b.finds(css), 15, f"{route}'s data")


def forged(b, method, path, body=None):
    """the request a viewer's page could make itself, with its own session: [status, error]"""
    return b.d.execute_async_script("""
        const [method, path, body, done] = arguments;
        fetch(path, {method, credentials: 'same-origin', headers: {'X-Requested-With': 'x'}, body: body || undefined})
          .then(r => r.json().then(j => done([r.status, j.error || ''])), e => done([0, String(e)]));""", method, path, body)


def main():
    v = Browser(name="viewer")
    v.login("view")
    # ---- a viewer: no write control anywhere ---------------------------------------------------------
    for route in ["/", "/jobs", "/jobs/web", "/servers", "/servers/127.0.0.1", f"/instances/{IDS[0]}", "/history"]:
        check(f"the viewer on {route}: its data, and no write control (none in the page, not just disabled)",
              lambda: loaded(v, route) and not [diag(f"  a write control: {e.get_attribute('outerHTML')[:200]}") for e in v.finds(WRITES)], v)
        if route == "/jobs/web":
            v.shot("job-as-viewer")
    before = job_doc("web")["configVersion"]
    for method, path, body in (("POST", "/api/v1/jobs/web/trigger", None), ("POST", "/api/v1/jobs/web/disable", None),
                               ("PUT", "/api/v1/jobs/web", "cron: 0 0 3 * * ?\n"), ("DELETE", "/api/v1/jobs/web", None),
                               ("POST", "/api/v1/servers/127.0.0.1/disable", None)):
        st, err = forged(v, method, path, body)
        role = "admin" if method in ("PUT", "DELETE") else "operator or admin"
        ok(st == 403 and f"user 'view' is viewer: {method} {path} needs {role}" in err,
           f"a {method} {path} forged from the viewer's page (its session): 403, '{err}'")
    d = job_doc("web")
    srv = ctl("servers")["servers"]
    ok(d["configVersion"] == before and not d["disabled"] and d["status"] != "DISABLED" and all(x["disabledJobsNum"] == 0 for x in srv),
       "nothing written: web's config version, not disabled, no server disabled (the API, ejobctl servers --json)")
    audit = api("/api/v1/audit?limit=5")
    ok(len(audit) == 5 and all(a["user"] == "view" and a["status"] == 403 for a in audit), "each is an audit line: user view, status 403")

    # ---- an operator: operations, not the config nor remove; the servers ---------------------------------
    o = Browser(name="operator")
    o.login("oper")
    check("the operator on a job: its operations, but neither the config's editor nor Remove",
          lambda: loaded(o, "/jobs/web") and o.has("#op-trigger") and o.has("#op-shutdown") and not o.has("#cfg-edit") and not o.has("#op-remove"), o)
    check("Servers: both servers, both instances",
          lambda: loaded(o, "/servers") and wait(lambda: {r.get_attribute("data-server") for r in o.finds("#servers-table tbody tr")} == {"127.0.0.1", "127.0.0.2"}
                                                 and {r.get_attribute("data-instance") for r in o.finds("#instances-table tbody tr")} == set(IDS), 10, "the tables"), o)
    o.shot("servers")
    o.click('#servers-table a[href="#/servers/127.0.0.2"]')
    check("a server's page: its jobs here", lambda: wait(lambda: len(o.finds("#server-jobs tbody tr")) == 2, 10, "2 jobs"), o)
    o.click("#srv-disable")
    check("Disable all: every job disabled on 127.0.0.2 (ejobctl servers --json), the page says 2 disabled here",
          lambda: wait(lambda: [x for x in ctl("servers")["servers"] if x["ip"] == "127.0.0.2"][0]["disabledJobsNum"] == 2, 10, "disabled")
          and wait(lambda: "2 disabled here" in o.text("main"), 10, "the page"), o)
    o.shot("server")
    o.click("#srv-enable")
    check("Enable all: none disabled again",
          lambda: wait(lambda: [x for x in ctl("servers")["servers"] if x["ip"] == "127.0.0.2"][0]["disabledJobsNum"] == 0, 10, "enabled")
          and wait(lambda: "0 disabled here" in o.text("main"), 10, "the page"), o)
    check("an instance's page: its jobs, which it leads",
          lambda: loaded(o, f"/instances/{IDS[0]}") and wait(lambda: {r.get_attribute("data-job") for r in o.finds("#instance-jobs tbody tr")} == {"long", "web"}, 10, "its jobs"), o)
    o.shot("instance")

    # ---- a supervisor killed: the page shows the failover ------------------------------------------------
    s, _, _ = http("POST", "/api/v1/jobs/long/trigger", "oper")
    ok(s == 200, "long triggered (its items run 20 s)")
    wait(lambda: all(i["running"] for i in job_doc("long")["items"]), 15, "both items of long running")
    o.go("/jobs/long")
    wait(lambda: len([r for r in o.finds("#job-items td.state") if r.text.startswith("running")]) == 2, 10, "both running in the page")
    taken = [i["item"] for i in job_doc("long")["items"] if i["owner"] == IDS[1]]
    ok(act("kill s1") == "ok", f"s1 ({IDS[1]}) killed with its workers while it runs long's item {taken}")
    check(f"the page shows item {taken[0]} taken over: failover to {IDS[0]}, its owner offline",
          lambda: wait(lambda: f"failover to {IDS[0]}" in o.find(f'#job-items tr[data-item="{taken[0]}"]').text
                       and "(offline)" in o.find(f'#job-items tr[data-item="{taken[0]}"]').text, 30, "the failover"), o)
    ok(job_doc("long")["items"][taken[0]]["failover"] == IDS[0], "the API says the same (items[].failover)")
    o.shot("job-failover")
    o.go("/")
    check("the overview: 127.0.0.2 has no instance online", lambda: wait(lambda: "127.0.0.2 0 instances online" in o.text("#ov-servers"), 15, "0 instances"), o)
    s, _, _ = http("GET", "/api/v1/changes", "view")
    if s == 200:
        check("what changed: the failover and the instance gone",
              lambda: wait(lambda: "failover" in o.text("#ov-changes") and "instance down" in o.text("#ov-changes"), 10, "the changes"), o)
    else:
        skip("what changed: the failover and the instance gone", "GET /api/v1/changes answers 404 (the 'api' branch)")

    # ---- ZooKeeper away, then back --------------------------------------------------------------------
    loaded(o, "/jobs/web")
    ok(act("zk-stop") == "ok", "ZooKeeper stopped")
    check("a banner: ZooKeeper is unreachable; the page keeps what it showed",
          lambda: wait(lambda: o.find("#banner").is_displayed() and "ZooKeeper is unreachable" in o.text("#banner"), 15, "the banner")
          and o.h1() == "web" and o.finds("#job-items tbody tr"), o)
    o.shot("banner-zookeeper")
    ok(act("zk-start") == "ok", "ZooKeeper started again")
    last = int(o.find("#job-last-fire").get_attribute("data-ms") or 0)
    check("the banner goes, and the page follows the cluster again (web's last fire moves on)",
          lambda: wait(lambda: not o.find("#banner").is_displayed(), 30, "no banner")
          and wait(lambda: int(o.find("#job-last-fire").get_attribute("data-ms") or 0) > last, 30, "a newer fire"), o)

    # ---- serve away, then back -----------------------------------------------------------------------
    ok(act("serve-stop") == "ok", "ejobctl serve stopped")
    check("a banner: serve does not answer", lambda: wait(lambda: "ejobctl serve does not answer" in o.text("#banner"), 15, "the banner"), o)
    o.shot("banner-serve")
    ok(act("serve-start") == "ok", "serve started again on the same port")
    check("the banner goes; its sessions were in memory: the login form",
          lambda: wait(lambda: not o.find("#banner").is_displayed() and o.has("#login-form"), 20, "the login form"), o)
    o.login("oper")
    check("logged in again: the page it was on", lambda: wait(lambda: o.h1() == "web", 10, "web"), o)

    allow = ("ERR_CONNECTION_REFUSED", "ERR_CONNECTION_RESET", "ERR_EMPTY_RESPONSE", "/healthz")
    errs = v.console_errors(allow) + o.console_errors(allow)
    ok(not errs, "no script error and no Content-Security-Policy violation in the browsers' consoles")
    for e in errs:
        diag(f"  console: {e}")


run(main)
