"""t/console/117-history.py: the driver of t/117-console-history.c (read its header first)."""
import os
import time

from tconsole import Browser, Keys, api, check, diag, http, ok, run, skip, wait

BASE = int(os.environ["EJOB_OLD_BASE"])   # old's row i started at BASE + i minutes


def page_rows(b):
    """the result table as a user reads it: each row's cells by their column's title, and its id"""
    heads = [th.text for th in b.finds("#hist-rows thead th")]
    out = []
    for tr in b.finds("#hist-rows tbody tr"):
        cells = [td.text for td in b.finds("td", tr)]
        out.append({"id": tr.get_attribute("data-key"), **dict(zip(heads, cells))})
    return out


def ids(b):
    return [r["id"] for r in page_rows(b)]


def api_pages(path):
    pages, cursor = [], None
    while True:
        d = api(path + (f"&cursor={cursor}" if cursor else ""), "view")
        pages.append([r["id"] for r in d["rows"]])
        cursor = d["next"]
        if not cursor or len(pages) > 20:
            return pages


def typed(ms):
    """what a user types into Chrome's datetime-local (en-US) for the local time ms: MMDDYYYY, hhmm, AM/PM"""
    t = time.localtime(ms / 1000)
    return time.strftime("%m%d%Y", t), time.strftime("%I%M", t), time.strftime("%p", t)


def search(b):
    b.click("#h-search")


def main():
    b = Browser(name="viewer")
    b.login("view")
    b.go("/history")
    b.wait_css("#hist-form")

    # ---- paging ------------------------------------------------------------------------------
    pages = api_pages("/api/v1/jobs/old/history?limit=20")
    ok(len(pages) == 3 and sum(len(p) for p in pages) == 60, f"the API pages old's 60 rows by 20: {[len(p) for p in pages]}")
    b.type("#h-job", "old")
    b.choose("#h-limit", "20")
    search(b)
    check("search old, 20 rows a page: page 1 is the API's first page, newest first",
          lambda: wait(lambda: ids(b) == pages[0], 10, "page 1") and "page 1, 20 rows" in b.text(".pager"), b)
    b.shot("history-old")
    b.click("#h-older")
    check("Older: page 2, the API's (its cursor)", lambda: wait(lambda: ids(b) == pages[1], 10, "page 2"), b)
    b.click("#h-older")
    check("Older: page 3, the last: no Older any more",
          lambda: wait(lambda: ids(b) == pages[2], 10, "page 3") and not b.find("#h-older").is_enabled(), b)
    b.click("#h-newer")
    check("Newer: back to page 2", lambda: wait(lambda: ids(b) == pages[1] and "page 2" in b.text(".pager"), 10, "page 2 again"), b)

    # ---- filters -------------------------------------------------------------------------------
    b.choose("#h-outcome", "failed")
    search(b)
    want = [r["id"] for r in api("/api/v1/jobs/old/history?outcome=failed&limit=20", "view")["rows"]]
    check(f"outcome failed: the API's {len(want)} rows, each failed",
          lambda: wait(lambda: ids(b) == want, 10, "the failed rows") and all(r["Outcome"] == "failed" for r in page_rows(b)), b)
    b.choose("#h-outcome", "any")
    b.type("#h-item", "1")
    b.type("#h-ip", "10.0.0.2")
    search(b)
    want = [r["id"] for r in api("/api/v1/jobs/old/history?item=1&ip=10.0.0.2&limit=20", "view")["rows"]]
    check(f"item 1 on 10.0.0.2: the API's {len(want)} rows, each of item 1 on 10.0.0.2",
          lambda: wait(lambda: ids(b) == want, 10, "those rows") and want and all(r["Item"] == "1" and r["On"] == "10.0.0.2" for r in page_rows(b)), b)
    b.type("#h-item", "")
    b.type("#h-ip", "")
    # a time range, typed as a user types it: Tab from the ip field into the date's fields
    since, until = BASE + 10 * 60000, BASE + 20 * 60000
    b.find("#h-ip").click()
    d1, t1, p1 = typed(since)
    d2, t2, p2 = typed(until)
    b.keys(Keys.TAB)
    for k in (d1, Keys.TAB, t1, p1):   # Tab goes from the date's part to the time's
        b.keys(k)
    for _ in range(3):                 # and on (the calendar button) to Until
        if b.focused().get_attribute("id") == "h-until":
            break
        b.keys(Keys.TAB)
    for k in (d2, Keys.TAB, t2, p2):
        b.keys(k)
    diag(f"  typed: since {b.find('#h-since').get_attribute('value')}, until {b.find('#h-until').get_attribute('value')}")
    search(b)
    want = [f"old-{i:02d}" for i in range(19, 9, -1)]
    check("a time range typed into Since and Until (rows 10 to 19 of old): those 10 rows, as the API's since/until give",
          lambda: wait(lambda: ids(b) == want, 10, "rows 10-19")
          and want == [r["id"] for r in api(f"/api/v1/jobs/old/history?since={since}&until={until}&limit=50", "view")["rows"]], b)
    check("the range is in the address (a link keeps it)", lambda: f"since={since}" in b.d.current_url and f"until={until}" in b.d.current_url, b)

    # ---- a failed row's cause and output ----------------------------------------------------------
    b.go("/history?job=flaky&outcome=failed")
    check("flaky's failed runs: each item 1", lambda: wait(lambda: page_rows(b) and all(r["Item"] == "1" and r["Outcome"] == "failed" for r in page_rows(b)), 10, "failed rows"), b)
    first = b.finds("#hist-rows tbody tr")[0]
    b.find("td.cause summary", first).click()
    check("its cause and what the item printed last, opened from the row",
          lambda: "failed (exit 2)" in first.text and "ERROR: disk full on /var" in b.find("td.cause details", first).text
          and "copying /var/spool/in" in b.find("td.cause details", first).text, b)
    b.shot("history-failed-output")

    # ---- the chart of a job ------------------------------------------------------------------------
    b.go("/history?job=flaky")
    rows = api("/api/v1/jobs/flaky/history?limit=500", "view")["rows"]
    nok = sum(1 for r in rows if r["outcome"] == "ok")
    nbad = sum(1 for r in rows if r["outcome"] == "failed")
    check(f"flaky's chart: a dot per run ({len(rows)}), the counts the API's (ok {nok}, failed {nbad})",
          lambda: wait(lambda: len(b.finds("#hist-chart svg .dot")) == len(rows), 10, "the dots")
          and f"ok {nok}" in b.text("#hist-chart figcaption") and f"failed {nbad}" in b.text("#hist-chart figcaption")
          and len(b.finds("#hist-chart svg circle.o-failed")) == nbad, b)
    b.shot("history-chart")

    # ---- every job at once ---------------------------------------------------------------------------
    s, d, _ = http("GET", "/api/v1/history?limit=50", "view")
    if s == 200:
        b.go("/history?limit=50")
        check("no job named: every job's rows (GET /api/v1/history), the Job column shows each",
              lambda: wait(lambda: ids(b) == [r["id"] for r in d["rows"]], 10, "every job's rows")
              and {r["Job"] for r in page_rows(b)} <= {"old", "flaky"}, b)
    else:
        skip("every job's history at once in the page", f"GET /api/v1/history answers {s} (the 'api' branch)")
        b.go("/history")
        check("until then the page asks for a job", lambda: b.wait_text("name a job", "#hist-rows"), b)

    # ---- a job's page: its last runs and chart ---------------------------------------------------------
    b.go("/jobs/flaky")
    check("flaky's page: its history, the chart and its last 10 runs",
          lambda: wait(lambda: b.finds("#job-history svg") and len(b.finds("#job-history tbody tr")) == 10, 15, "the history"), b)
    errs = b.console_errors()
    ok(not errs, "no script error and no Content-Security-Policy violation in the browser's console")
    for e in errs:
        diag(f"  console: {e}")


run(main)
