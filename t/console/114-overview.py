"""t/console/114-overview.py: the driver of t/114-console-overview.c (read its header first)."""
from tconsole import Browser, Keys, check, diag, gunzip, http, jobs_doc, ok, run, skip, wait

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


def main():
    # ---- the console as served: no credentials, the headers ----------------------------------------
    s, body, h = http("GET", "/", raw=True)
    ok(s == 200 and b"/assets/app.js" in body and h["Content-Type"].startswith("text/html"),
       "GET / with no credentials: the console's page (200, text/html) while serve has --auth")
    ok(h["Content-Security-Policy"] == CSP and h["X-Content-Type-Options"] == "nosniff" and h["Referrer-Policy"] == "no-referrer",
       "its Content-Security-Policy allows its own files only; nosniff; no referrer")
    ok(h["Cache-Control"] == "no-cache" and (h["ETag"] or "").startswith('"'), "Cache-Control: no-cache and a strong ETag: revalidated at every use")
    s2, b2, h2 = http("GET", "/", headers={"If-None-Match": h["ETag"]}, raw=True)
    ok(s2 == 304 and not b2 and h2["ETag"] == h["ETag"], "If-None-Match with its ETag: 304, no body")
    s3, b3, h3 = http("GET", "/assets/app.js", headers={"Accept-Encoding": "gzip, deflate"}, raw=True)
    _, plain, hp = http("GET", "/assets/app.js", raw=True)
    ok(s3 == 200 and h3["Content-Encoding"] == "gzip" and gunzip(b3) == plain and h3["Vary"] == "Accept-Encoding"
       and h3["ETag"] != hp["ETag"] and hp["Content-Type"].startswith("text/javascript") and h3["Content-Security-Policy"] == CSP,
       f"/assets/app.js: JavaScript, gzip'd when asked ({len(b3)} of {len(plain)} bytes), the same bytes, its own ETag")
    s4, _, h4 = http("GET", "/assets/nope.js", raw=True)
    s5, _, h5 = http("POST", "/", body="x", raw=True)
    ok(s4 == 404 and s5 == 405 and "GET" in (h5["Allow"] or ""), "an unknown file: 404; POST /: 405 (Allow: GET, HEAD)")
    s6, _, h6 = http("GET", "/api/v1/jobs")
    s7, _, h7 = http("GET", "/api/v1/jobs", headers={"X-Requested-With": "ejob-console"})
    ok(s6 == 401 and "Basic" in (h6["WWW-Authenticate"] or "") and s7 == 401 and h7["WWW-Authenticate"] is None,
       "the API without credentials: 401, with a Basic challenge, but none to the console's script (X-Requested-With: "
       "the browser would open its own login dialog)")

    # the cluster as the API says it, once fails has failed
    want = wait(lambda: (lambda d: d if d["fails"]["health"] == "FAILING" and d["ok1"]["lastSuccessMs"] else None)(jobs_doc()),
                30, "fails FAILING and ok1 run, in GET /api/v1/jobs")
    failing_known = isinstance(want["fails"].get("failing"), list)

    b = Browser(name="admin")

    # ---- logging in ------------------------------------------------------------------------------
    b.load("/")
    check("opened with no session, the console shows its login form", lambda: b.wait_css("#login-form") and "Log in" in b.h1(), b)
    b.shot("login")
    b.type("#login-user", "adm")
    b.type("#login-password", "wrong", enter=True)
    check("a wrong password: 'Wrong user or password', still the form", lambda: b.wait_text("Wrong user or password") and b.has("#login-form"), b)
    b.type("#login-password", "adm-pass", enter=True)
    check("logged in with Enter: the overview, the user and role in the header",
          lambda: wait(lambda: b.h1() == "Overview" and "adm" in b.text("#who") and "admin" in b.text("#who"), 10, "the overview"), b)


    # ---- the overview: every job with its health ------------------------------------------------------
    def overview_jobs():
        return {r.get_attribute("data-job"): b.find("td:nth-child(2)", r).text for r in b.finds("#ov-jobs-table tbody tr")}


    def same_as_api():
        api_jobs = {n: j["health"] for n, j in jobs_doc().items()}
        page = overview_jobs()
        return page if page == api_jobs else None


    got = check("the overview lists every job of the cluster with its health, as GET /api/v1/jobs says",
                lambda: wait(same_as_api, 10, "the overview's jobs = the API's"), b)
    if got:
        diag(f"  overview: {got}")
    order = [r.get_attribute("data-job") for r in b.finds("#ov-jobs-table tbody tr")]
    check("failing first: fails heads the list", lambda: order and order[0] == "fails", b)
    tiles = {t.get_attribute("data-health"): t.find_element("css selector", ".n").text for t in b.finds("#ov-tiles li[data-health]")}
    check("the counts by health add up: FAILING 1, DISABLED 1", lambda: tiles.get("FAILING") == "1" and tiles.get("DISABLED") == "1", b)
    check("instances online per server: 127.0.0.1 and 127.0.0.2, one instance each",
          lambda: wait(lambda: all(f"{ip} 1 instance online" in b.text("#ov-servers") for ip in ("127.0.0.1", "127.0.0.2")), 15, "the servers"), b)
    check("the leaders: the instances that lead the jobs", lambda: wait(lambda: "leads" in b.text("#ov-leaders"), 5, "leaders"), b)
    b.shot("overview")

    # the failing item, its cause and what it printed last (jobs[].failing: the 'last' branch)
    if failing_known:
        def fail_item():
            li = b.finds('#ov-fails li[data-job="fails"][data-item="1"]')
            return li and "failed (exit 3)" in li[0].text and 'ERROR: relation "bills" does not exist' in b.find("pre.tail", li[0]).text
        check("a failing item shows as failing with its cause and output tail (fails item 1: exit 3, its last line)",
              lambda: wait(fail_item, 10, "fails item 1 in Last failures"), b)
    else:
        skip("a failing item shows as failing with its output tail", "GET /api/v1/jobs has no jobs[].failing yet (the 'last' branch)")
        check("until then, the failing job and why", lambda: "fails" in b.text("#ov-fails") and "item 1 failed" in b.text("#ov-fails"), b)

    # the README's picture (docs/console-overview.png is a copy of it): a laptop's window, the top
    b.d.set_window_size(1200, 800)
    b.js("window.scrollTo(0, 0)")
    b.shot("console-overview")
    b.d.set_window_size(1366, 768)

    # ---- it updates itself: no reload, the scroll position kept ------------------------------------
    b.d.set_window_size(1366, 600)
    b.js("window.__stay = 42; window.scrollTo(0, 300)")
    y0 = b.js("return window.scrollY")
    s, _, _ = http("POST", "/api/v1/jobs/ok1/disable", "oper")
    ok(s == 200, "the operator disables ok1 through the API (not the page)")
    check("the overview shows ok1 DISABLED by itself, without a reload, at the same scroll position",
          lambda: wait(lambda: overview_jobs().get("ok1") == "DISABLED", 10, "ok1 DISABLED")
          and b.js("return window.__stay") == 42 and abs(b.js("return window.scrollY") - y0) < 2, b)
    check("'what changed' has the write: POST /api/v1/jobs/ok1/disable (200) by oper",
          lambda: wait(lambda: "POST /api/v1/jobs/ok1/disable (200)" in b.text("#ov-changes") and "oper" in b.text("#ov-changes"), 10, "the write"), b)
    s, chg, _ = http("GET", "/api/v1/changes?limit=100", "view")
    if s == 200:
        check("and the feed's own change: ok1 disabled", lambda: wait(lambda: "disabled" in b.text("#ov-changes") and "ok1" in b.text("#ov-changes"), 10, "disabled"), b)
    else:
        skip("the changes feed's own kinds (disabled, health) in 'what changed'", "GET /api/v1/changes answers 404 (the 'api' branch)")
    http("POST", "/api/v1/jobs/ok1/enable", "oper")
    b.js("window.scrollTo(0, 0)")

    # ---- the jobs table ---------------------------------------------------------------------------------
    b.go("/jobs")
    check("Jobs: a table of every job", lambda: wait(lambda: len(b.finds("#jobs-table tr.row")) == 4, 10, "4 rows"), b)


    def rows():
        return [r.get_attribute("data-job") for r in b.finds("#jobs-table tr.row")]


    b.find("#jobs-q").click()
    b.type("#jobs-q", "two seconds")
    check("typing 'two seconds' in the filter (it searches descriptions too): ok1 alone, '1 of 4 jobs'",
          lambda: wait(lambda: rows() == ["ok1"] and "1 of 4 jobs" in b.text("#jobs-count"), 5, "ok1 alone"), b)
    b.type("#jobs-q", "")
    b.choose("#jobs-health", "FAILING")
    check("the health select, FAILING: fails alone", lambda: wait(lambda: rows() == ["fails"], 5, "fails alone"), b)
    b.choose("#jobs-health", "any health")
    wait(lambda: len(rows()) == 4, 5, "4 rows again")
    # sort by name with the keyboard: Tab from the health select reaches the first header's button
    b.js("document.getElementById('jobs-health').focus()")
    b.keys(Keys.TAB)
    name_btn = b.focused()
    check("Tab from the filters reaches the Name column's sort button", lambda: "Name" in name_btn.text, b)
    name_btn.send_keys(Keys.ENTER)
    check("Enter on it: sorted by name", lambda: wait(lambda: rows() == ["fails", "nightly", "off", "ok1"], 5, "by name"), b)
    b.focused().send_keys(Keys.ENTER)
    check("Enter again: by name, descending (aria-sort says so)",
          lambda: wait(lambda: rows() == ["ok1", "off", "nightly", "fails"], 5, "descending")
          and b.find("#jobs-table th.c-name").get_attribute("aria-sort") == "descending", b)
    check("the filter and sort are in the address (a link keeps them)", lambda: "sort=name" in b.d.current_url and "dir=desc" in b.d.current_url, b)
    b.shot("jobs")

    # ---- a phone's width ---------------------------------------------------------------------------------
    p = Browser(390, 844, phone=True, name="phone")
    p.login("view")
    check("on a phone (390x844): the overview, no sideways scrolling",
          lambda: wait(lambda: p.h1() == "Overview" and len(p.finds("#ov-jobs-table tbody tr")) == 4, 10, "the overview")
          and p.js("return document.documentElement.scrollWidth") <= 391, p)
    p.shot("overview-phone")
    p.click("#menu")
    p.click('#nav a[data-nav="jobs"]')
    check("the menu button opens the pages; Jobs on a phone fits too",
          lambda: wait(lambda: len(p.finds("#jobs-table tr.row")) == 4, 10, "4 rows") and p.js("return document.documentElement.scrollWidth") <= 391, p)
    p.shot("jobs-phone")

    errs = b.console_errors() + p.console_errors()
    ok(not errs, "no script error and no Content-Security-Policy violation in the browsers' consoles")
    for e in errs:
        diag(f"  console: {e}")

    # ---- logout -----------------------------------------------------------------------------------------
    cookie = b.d.get_cookie("ejob_session")
    b.go("/")
    b.click("#logout")
    check("Log out: the login form again", lambda: b.wait_css("#login-form"), b)
    s, _, _ = http("GET", "/api/v1/jobs", headers={"Cookie": f"ejob_session={cookie['value']}"} if cookie else {})
    ok(cookie and cookie.get("httpOnly") and s == 401, "the session cookie was HttpOnly, and after the logout it is refused (401)")


run(main)
