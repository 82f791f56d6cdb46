"""t/console/136-workflow.py: the driver of t/136-console-workflow.c (read its header first)."""
import os

from tconsole import Browser, api, check, ctl, diag, ok, run, wait

OLD = os.environ["EJOB_RUN_OLD"]
NEW = os.environ["EJOB_RUN_NEW"]
WANT_NEW = {"A": "ok", "B": "running", "C": "failed", "D": "skipped", "E": "waiting"}
EDGES = {("A", "B"), ("A", "C"), ("B", "D"), ("C", "D"), ("B", "E")}


def nodes(b):
    """each box of the graph: its job's state, and its rect's fill, stroke and dash as the page draws them"""
    return b.js("""
        const out = {};
        for (const g of document.querySelectorAll('#wf-graph .wf-node')) {
          const r = g.querySelector('rect'), cs = getComputedStyle(r);
          out[g.dataset.job] = {state: g.dataset.state, fill: cs.fill, dash: cs.strokeDasharray,
                                x: r.x.baseVal.value, y: r.y.baseVal.value, text: g.textContent};
        }
        return out;""")


def states(b):
    return {k: v["state"] for k, v in nodes(b).items()}


def rgb(s):
    """'rgb(227, 245, 234)' as (227, 245, 234)"""
    return tuple(int(x) for x in s[s.index("(") + 1:s.index(")")].split(",")[:3])


def main():
    b = Browser(name="viewer")
    b.login("view")

    # ---- the list -------------------------------------------------------------------------------
    b.click('#nav a[data-nav="workflows"]')
    check("the Workflows page lists A and X (GET /api/v1/workflows)",
          lambda: wait(lambda: [r.get_attribute("data-root") for r in b.finds("#wf-list tbody tr")] == ["A", "X"], 10, "A and X"), b)
    check("A's row: its jobs, and its latest run failed",
          lambda: wait(lambda: "A, B, C, D, E" in b.text('#wf-list tr[data-root="A"]')
                       and b.find('#wf-list tr[data-root="A"] .badge').get_attribute("data-state") == "failed", 10, "A's row"), b)
    check("X's row: no run yet", lambda: wait(lambda: "none yet" in b.text('#wf-list tr[data-root="X"]'), 10, "X's row"), b)
    b.shot("workflows")

    # ---- A's graph, coloured by the newest run --------------------------------------------------
    b.click('#wf-list a[href="#/workflows/A"]')
    check("A's page: an SVG with one box per job of the workflow",
          lambda: wait(lambda: sorted(nodes(b)) == ["A", "B", "C", "D", "E"], 10, "five boxes"), b)
    doc = api("/api/v1/workflows/A/runs", "view")
    ok(doc["runs"][0]["run"] == NEW and doc == ctl("runs", "A"), "the API's newest run is " + NEW + ", as ejobctl runs A --json")
    want = {j: s["state"] for j, s in doc["runs"][0]["jobs"].items()}
    ok(want == WANT_NEW, f"the API's states of the newest run: {want}")
    check(f"each box has its job's state in the newest run: {WANT_NEW}",
          lambda: wait(lambda: states(b) == want and b.find("#wf-graph").get_attribute("data-run") == NEW, 10, "the states"), b)
    n = nodes(b)
    fill = {j: rgb(v["fill"]) for j, v in n.items()}
    diag(f"fills: {fill}")
    ok(fill["A"][1] > fill["A"][0] and fill["A"][1] > fill["A"][2], f"ok (A) is green: {n['A']['fill']}")
    ok(fill["B"][2] > fill["B"][0] and fill["B"][2] > fill["B"][1], f"running (B) is blue: {n['B']['fill']}")
    ok(fill["C"][0] > fill["C"][1] and fill["C"][0] > fill["C"][2], f"failed (C) is red: {n['C']['fill']}")
    ok(max(fill["E"]) - min(fill["E"]) < 16, f"waiting (E) is grey: {n['E']['fill']}")
    ok(n["D"]["dash"] not in ("none", "") and all(n[j]["dash"] in ("none", "") for j in "ABCE"),
       f"skipped (D) alone is dashed: {n['D']['dash']}")
    ok(len(set(n[j]["fill"] for j in "ABCE")) == 4, "the four other states have four fills")
    ok("running 1/2" in n["B"]["text"] and "failed 2/2" in n["C"]["text"], "each box says its state and items: " +
       f"B '{n['B']['text']}', C '{n['C']['text']}'")
    x = {j: v["x"] for j, v in n.items()}
    ok(x["A"] < x["B"] == x["C"] < x["D"] == x["E"], f"laid out by depth from the root, left to right: {x}")
    edges = {(e.get_attribute("data-from"), e.get_attribute("data-to")) for e in b.finds("#wf-graph .wf-edge")}
    ok(edges == EDGES, f"an arrow per dependsOn: {sorted(edges)}")
    check("the run's jobs below: C's failure and why D is skipped",
          lambda: "item 1 on 127.0.0.2@-@202: failed (exit 3)" in b.text('#wf-jobs tr[data-job="C"]')
          and "C item 1 failed" in b.text('#wf-jobs tr[data-job="D"]'), b)
    check("the latest runs: the newest first, then the older",
          lambda: [r.get_attribute("data-run") for r in b.finds("#wf-runs tbody tr")] == [NEW, OLD], b)
    b.shot("workflow-A")

    # ---- the older run --------------------------------------------------------------------------
    b.click(f'#wf-runs button[data-run="{OLD}"]')
    check("a click on the older run: every box ok",
          lambda: wait(lambda: set(states(b).values()) == {"ok"} and b.find("#wf-graph").get_attribute("data-run") == OLD, 10, "all ok"), b)
    check("  its row is the one shown", lambda: b.find(f'#wf-runs tr[data-run="{OLD}"]').get_attribute("aria-current") == "true", b)
    check("  it stays shown across the page's refresh (5 s)",
          lambda: wait(lambda: b.js("return performance.getEntriesByType('resource').filter(e => e.name.includes('/runs?limit=10')).length") >= 2, 10, "a refresh")
          and b.find("#wf-graph").get_attribute("data-run") == OLD, b)
    b.shot("workflow-A-older")
    b.click('#wf-graph-card button[data-action="latest"]')
    check("'show the newest': the newest run's colours again",
          lambda: wait(lambda: states(b) == WANT_NEW, 10, "the newest's states"), b)

    # ---- not a root -----------------------------------------------------------------------------
    b.go("/workflows/B")
    check("a job that is not a root: the page says why, and links back",
          lambda: b.wait_text("job 'B' is not a workflow's root: it runs after A") and b.has('main a[href="#/workflows"]'), b)

    errs = b.console_errors()
    ok(not errs, f"no error in the page's console: {errs}")


run(main)
