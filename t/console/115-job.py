"""t/console/115-job.py: the driver of t/115-console-job.c (read its header first)."""
from tconsole import Browser, Keys, act, check, ctl, diag, http, job_doc, ok, run, wait


def rows(b):
    return {int(r.get_attribute("data-item")): r for r in b.finds("#job-items tbody tr[data-item]")}


def fire_of(b, item):
    e = b.finds(f'#job-items tr[data-item="{item}"] .last')
    return int(e[0].get_attribute("data-fire")) if e else None


def main():
    b = Browser(name="admin")
    b.login("adm")

    # ---- trigger from the page: its run appears ------------------------------------------------------
    b.go("/jobs/op")
    check("op's page: its two items, never run (its cron is in 2099)",
          lambda: wait(lambda: len(rows(b)) == 2 and all("never ran" in r.text for r in rows(b).values()), 10, "2 items, never ran"), b)
    b.js("window.__stay = 1")
    b.type("#op-param", "p=42", enter=True)
    check("Trigger with a parameter (Enter in its field): the page says it triggered op with p=42",
          lambda: b.wait_text('Triggered op with parameter "p=42"', "#flash"), b)
    check("its new run appears in the page by itself: each item's last run, no reload",
          lambda: wait(lambda: fire_of(b, 0) and fire_of(b, 1), 15, "both items' last run") and b.js("return window.__stay") == 1, b)
    d = job_doc("op")
    fires = [i["last"]["fireId"] if i["last"] else None for i in d["items"]]
    ok(fires == [fire_of(b, 0), fire_of(b, 1)] and d["lastFireMs"] == max(fires),
       f"the API says the same: each item's last fire {fires} (each instance fires a trigger of its own)")
    rec = act("runs op")
    ok(rec.endswith(" p=42"), f"the triggered fire ran with the parameter: its record says '{rec}'")
    b.shot("job-op-triggered")

    # ---- disable an item: it is skipped ------------------------------------------------------------
    b.go("/jobs/tick")
    wait(lambda: len(rows(b)) == 3 and all(fire_of(b, i) for i in range(3)), 15, "tick's 3 items with a last run")
    b.click('#job-items button[data-action="item-disable"][data-item="1"]')
    check("Disable item 1: the page says item 1 is disabled, its button now enables it",
          lambda: wait(lambda: "disabled" in b.find('#job-items tr[data-item="1"] td.state').text
                       and b.has('#job-items button[data-action="item-enable"][data-item="1"]'), 10, "item 1 disabled"), b)
    ok(ctl("status", "tick")["items"][1]["disabled"], "ejobctl status tick --json: item 1 disabled")
    f1 = fire_of(b, 1)
    check("at the next fires item 1 is skipped: the page says so, its last run stays while item 0's moves on",
          lambda: wait(lambda: "skipped since (disabled)" in b.find('#job-items tr[data-item="1"]').text
                       and fire_of(b, 0) > f1 and fire_of(b, 1) == f1, 15, "item 1 skipped"), b)
    d = job_doc("tick")
    ok(d["items"][1]["last"]["fireId"] == f1 < d["items"][0]["last"]["fireId"],
       f"the API says the same: item 1's last fire {f1}, item 0's {d['items'][0]['last']['fireId']}")
    b.shot("job-tick-item-disabled")
    b.click('#job-items button[data-action="item-enable"][data-item="1"]')
    check("Enable item 1: enabled again (ejobctl status --json)",
          lambda: wait(lambda: not ctl("status", "tick")["items"][1]["disabled"]
                       and b.has('#job-items button[data-action="item-disable"][data-item="1"]'), 10, "item 1 enabled"), b)

    # ---- edit the cron: a bad one, a good one --------------------------------------------------------
    b.go("/jobs/edit")
    b.wait_css("#cfg-edit")
    v0 = job_doc("edit")["configVersion"]
    b.click("#cfg-edit")
    check("Edit config: the form holds the config's cron", lambda: b.find("#cfg-f-cron").get_attribute("value") == "0 0 3 * * ?", b)
    b.type("#cfg-f-cron", "0 0 25 * * ?")
    b.click("#cfg-save-form")
    check("a bad cron (hours 25): the check's message under the cron field, the field marked",
          lambda: wait(lambda: "hours: value 25 out of range 0-23" in b.text("#cfg-f-cron-err"), 10, "the message")
          and b.find("#cfg-f-cron").get_attribute("aria-invalid") == "true", b)
    d = job_doc("edit")
    ok(d["cron"] == "0 0 3 * * ?" and d["configVersion"] == v0, "and nothing written: the API's cron and version are as before")
    b.shot("job-config-form-error")

    b.click("#cfg-tab-text")
    ta = b.find("#cfg-yaml")
    text = ta.get_attribute("value")
    lines = text.split("\n")
    n = next(i for i, l in enumerate(lines) if l.startswith("cron:")) + 1
    lines[n - 1] = "cron: 0 0 25 * * ?"
    ta.send_keys(Keys.CONTROL, "a")
    ta.send_keys(Keys.DELETE)
    ta.send_keys("\n".join(lines))
    b.click("#cfg-save-text")
    check(f"the same in the YAML editor: the message at its line ({n}), in the list, the gutter and beside the line",
          lambda: wait(lambda: f"Line {n}, column" in b.text("#cfg-yaml-errs") and "hours: value 25 out of range 0-23" in b.text("#cfg-yaml-errs"), 10, "the list")
          and b.has(f'.code-gutter span.err[data-line="{n}"]') and "hours: value 25" in b.find(f'.code-back .err-line[data-line="{n}"]').text, b)
    b.shot("job-config-yaml-error")
    b.click("#cfg-yaml-errs button")
    caret = b.js("const t = document.getElementById('cfg-yaml'); return t.value.slice(0, t.selectionStart).split('\\n').length")
    ok(caret == n and b.focused().get_attribute("id") == "cfg-yaml", f"the message moves the caret to line {n} (it is on {caret})")

    b.click("#cfg-tab-form")
    b.type("#cfg-f-cron", "0 30 4 * * ?")
    b.click("#cfg-save-form")
    check("a good cron: saved (version +1, cron changed)",
          lambda: b.wait_text(f"Saved edit's config (version {v0 + 1}): changed cron", "#flash"), b)
    d = wait(lambda: (lambda x: x if x["cron"] == "0 30 4 * * ?" else None)(job_doc("edit")), 5, "the API's cron")
    check(f"the page shows the new next fire, as the API computes it ({d['nextFire']})",
          lambda: wait(lambda: b.find("#job-next").get_attribute("data-epoch") == str(d["nextFireEpoch"]) and "04:30:00" in b.text("#job-next"), 10, "the next fire"), b)

    # ---- a change made meanwhile --------------------------------------------------------------------
    b.click("#cfg-edit")
    b.type("#cfg-f-description", "mine")
    cur = job_doc("edit")
    theirs = "\n".join("description: theirs" if l.startswith("description:") else l for l in cur["config"].split("\n"))
    s, _, _ = http("PUT", "/api/v1/jobs/edit", "adm", body=theirs, headers={"If-Match": f'"{cur["configVersion"]}"'})
    ok(s == 200, "meanwhile someone else changes the description through the API")
    check("the open editor says the config changed on the server", lambda: b.wait_text("changed on the server", "#cfg-editor"), b)
    b.click("#cfg-save-form")
    check("Save is refused: someone changed it since the editor opened (409), with Reload offered",
          lambda: b.wait_text("Someone changed edit's config since you opened the editor", "#cfg-editor") and b.has("#cfg-reload"), b)
    ok(job_doc("edit")["description"] == "theirs", "their change stands (the API)")
    b.click("#cfg-reload")
    check("Reload: the editor holds theirs", lambda: wait(lambda: b.find("#cfg-f-description").get_attribute("value") == "theirs", 10, "theirs"), b)
    b.find("#cfg-f-description").send_keys(Keys.ESCAPE)
    check("Escape closes the editor", lambda: wait(lambda: not b.find("#cfg-editor").is_displayed(), 5, "closed"), b)

    # ---- shutdown, after a confirmation; keyboard only in the dialog --------------------------------
    b.go("/jobs/op")
    ids = job_doc("op")["instances"]
    gone = ids[-1]
    b.wait_css(f'#op-where option[value="instance:{gone}"]')
    b.choose("#op-where", f"instance {gone} (shutdown only)")
    b.click("#op-shutdown")
    check("Shut down…: a dialog that names what happens, the focus on Cancel",
          lambda: b.wait_css("dialog.dlg[open]") and gone in b.text("dialog.dlg") and "until its supervisor restarts" in b.text("dialog.dlg")
          and b.focused().get_attribute("id") == "dlg-cancel", b)
    b.shot("job-shutdown-dialog")
    b.keys(Keys.ESCAPE)
    check("Escape: the dialog closes, nothing done (op still has both instances)",
          lambda: wait(lambda: not b.has("dialog.dlg"), 5, "closed") and job_doc("op")["instances"] == ids, b)
    b.click("#op-shutdown")
    b.wait_css("dialog.dlg[open]")
    b.keys(Keys.TAB)
    ok(b.focused().get_attribute("id") == "dlg-ok", "Tab goes to 'Shut down'")
    b.keys(Keys.ENTER)
    check(f"Enter: op shut down on {gone} (the API's instances lose it; the page too)",
          lambda: wait(lambda: job_doc("op")["instances"] == ids[:-1], 10, "the API")
          and wait(lambda: gone not in b.text('main dl dd[data-k="Instances online"]'), 10, "the page's instances online"), b)

    # ---- remove, after typing its name --------------------------------------------------------------
    s, _, _ = http("PUT", "/api/v1/jobs/tmp", "adm", body={"type": "script", "cron": "0 0 3 * * ?", "shardingTotalCount": 1,
                                                        "label": "nobody", "props": {"script.command.line": "/bin/true"}})
    ok(s == 201, "a job tmp made through the API (a label no supervisor has)")
    b.go("/jobs/tmp")
    b.click("#op-remove")
    check("Remove job…: a dialog; its Remove button waits for the job's name",
          lambda: b.wait_css("dialog.dlg[open]") and not b.find("#dlg-ok").is_enabled() and b.focused().get_attribute("id") == "dlg-name", b)
    b.keys("tmp")
    b.keys(Keys.ENTER)
    check("the name typed and Enter: removed; the jobs list, and the message",
          lambda: wait(lambda: b.d.current_url.endswith("#/jobs"), 10, "#/jobs") and b.wait_text("Removed tmp.", "#flash"), b)
    ok(http("GET", "/api/v1/jobs/tmp", "adm")[0] == 404, "the API: no job tmp")

    # ---- a phone's width ----------------------------------------------------------------------------
    p = Browser(390, 844, phone=True, name="phone")
    p.login("adm")
    p.go("/jobs/tick")
    check("on a phone (390x844) a job's page fits: no sideways scrolling (its items table scrolls in its card)",
          lambda: wait(lambda: len(rows(p)) == 3, 10, "tick's items") and p.js("return document.documentElement.scrollWidth") <= 391, p)
    p.shot("job-phone")

    errs = b.console_errors() + p.console_errors()
    ok(not errs, "no script error and no Content-Security-Policy violation in the browser's console")
    for e in errs:
        diag(f"  console: {e}")


run(main)
