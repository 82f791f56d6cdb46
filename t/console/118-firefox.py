"""t/console/118-firefox.py: the driver of t/118-console-firefox.c (read its header first): the console
in headless Firefox ESR through Marionette (t/console/marionette.py; Debian has no geckodriver)."""
import os

import tconsole
from marionette import ELEMENT, Marionette
from tconsole import SHOTS, TMP, URL, check, diag, jobs_doc, job_doc, ok, run, wait

# what the page reports as an error after the hook is in: uncaught errors, rejected promises,
# console.error, Content-Security-Policy violations (kept in sessionStorage: a reload keeps them)
HOOK = """
if (!window.__errs) {
  window.__errs = [];
  const keep = (m) => window.__errs.push(String(m));
  window.addEventListener('error', (e) => keep('error: ' + e.message + ' at ' + e.filename + ':' + e.lineno));
  window.addEventListener('unhandledrejection', (e) => keep('unhandled rejection: ' + (e.reason && e.reason.stack || e.reason)));
  document.addEventListener('securitypolicyviolation', (e) => keep('CSP: ' + e.violatedDirective + ' ' + e.blockedURI));
  const ce = console.error;
  console.error = function (...a) { keep('console.error: ' + a.join(' ')); return ce.apply(this, a); };
}
return true;
"""


class Firefox:
    """one headless Firefox ESR (its own profile under the test's tmpdir) at a laptop's size"""

    def __init__(self, name="ff"):
        self.prof = os.path.join(TMP, f"firefox-{name}")
        self.m = Marionette(self.prof)
        self.name = name
        tconsole.browsers.append(self)

    def quit(self):
        self.m.quit()

    def load(self, route="/"):
        self.m.get(f"{URL}/#{route}")
        self.m.js(HOOK)

    def go(self, route):
        self.m.js("location.hash = arguments[0]", route)

    def js(self, script, *args):
        return self.m.js(script, *args)

    def find(self, css, within=None):
        return self.m.find(css, within)

    def finds(self, css, within=None):
        return self.m.finds(css, within)

    def has(self, css):
        return len(self.finds(css)) > 0

    def text(self, css="main", within=None):
        return self.m.text(self.find(css, within))

    def attr(self, el, name):
        return self.m.attr(el, name)

    def h1(self):
        return wait(lambda: self.text("main h1"), 10, "the page's title")

    def type(self, css, text, enter=False):
        e = self.find(css)
        self.m.js("arguments[0].value = ''", e)   # Marionette's clear would not fire 'input'
        self.m.send_keys(e, text + ("\ue007" if enter else ""))   # U+E007: WebDriver's Enter
        return e

    def click(self, css):
        self.m.click(wait(lambda: self.finds(css), 10, f"{css} to click")[0])

    def shot(self, name):
        os.makedirs(SHOTS, exist_ok=True)
        self.m.screenshot(os.path.join(SHOTS, f"{name}.png"))

    def dump(self, name):
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:80]
        try:
            self.shot(safe)
            diag(f"  page {self.m.url()}, screenshot {SHOTS}/{safe}.png; its text:")
            diag("    " + self.text("body").replace("\n", "\n    ")[:3000])
        except Exception as e:
            diag(f"  (no page to show: {e})")

    def errors(self):
        """the page's errors that the hook caught"""
        return list(self.m.js("return window.__errs || []"))

    def logged_errors(self):
        """the errors of the console's pages that Firefox printed to its log (the pref
        devtools.console.stdout.content: also those before the hook was in, a module that failed);
        Firefox flushes its log when it ends: read it after quit()"""
        errs = []
        with open(os.path.join(self.prof, "firefox.log"), errors="replace") as f:
            for l in f:
                if (l.startswith("JavaScript error: ") or l.startswith("JavaScript warning: ")) and URL in l:
                    errs.append(l.strip())
        return errs


def main():
    want = wait(lambda: (lambda d: d if d["fails"]["health"] == "FAILING" and d["ok1"]["lastSuccessMs"] else None)(jobs_doc()),
                30, "fails FAILING and ok1 run, in GET /api/v1/jobs")
    b = Firefox()
    diag(f"  {b.m.caps.get('capabilities', {}).get('browserName')} {b.m.caps.get('capabilities', {}).get('browserVersion')}")

    # ---- it loads: the app's root, its modules ran ---------------------------------------------------
    b.load("/")
    check("Firefox ESR loads the console: its root (#main) and the login form the modules drew",
          lambda: b.js("return !!document.querySelector('#main')") and wait(lambda: b.has("#login-form"), 15, "the login form")
          and "Log in" in b.h1(), b)

    # ---- logging in ----------------------------------------------------------------------------------
    b.type("#login-user", "adm")
    b.type("#login-password", "wrong", enter=True)
    check("a wrong password: 'Wrong user or password', still the form",
          lambda: wait(lambda: "Wrong user or password" in b.text("main") and b.has("#login-form"), 10, "the refusal"), b)
    b.type("#login-password", "adm-pass", enter=True)
    check("logged in with the form: the overview, the user and role in the header",
          lambda: wait(lambda: b.h1() == "Overview" and "adm" in b.text("#who") and "admin" in b.text("#who"), 10, "the overview"), b)

    # ---- the overview: every job with its health, as the API says -------------------------------------
    def overview_jobs():
        return {b.attr(r, "data-job"): b.text("td:nth-child(2)", r) for r in b.finds("#ov-jobs-table tbody tr")}

    def same_as_api():
        api_jobs = {n: j["health"] for n, j in jobs_doc().items()}
        page = overview_jobs()
        return page if page == api_jobs else None

    got = check("the overview lists every job of the cluster with its health, as GET /api/v1/jobs says",
                lambda: wait(same_as_api, 10, "the overview's jobs = the API's"), b)
    if got:
        diag(f"  overview: {got}")
    b.shot("firefox-overview")

    # ---- the jobs table filters ------------------------------------------------------------------------
    def rows():
        return [b.attr(r, "data-job") for r in b.finds("#jobs-table tr.row")]

    b.go("/jobs")
    check("Jobs: a table of every job", lambda: wait(lambda: len(rows()) == len(want), 10, f"{len(want)} rows"), b)
    b.type("#jobs-q", "two seconds")
    check("typing 'two seconds' in the filter: ok1 alone, '1 of 4 jobs'",
          lambda: wait(lambda: rows() == ["ok1"] and "1 of 4 jobs" in b.text("#jobs-count"), 5, "ok1 alone"), b)
    b.type("#jobs-q", "fa")
    check("typing 'fa': fails alone", lambda: wait(lambda: rows() == ["fails"], 5, "fails alone"), b)
    b.shot("firefox-jobs")

    # ---- a job's page: its items ---------------------------------------------------------------------
    b.click('#jobs-table tr.row[data-job="fails"] a')
    items = job_doc("fails")["items"]

    def page_items():
        got = {int(b.attr(r, "data-item")): b.m.text(r) for r in b.finds("#job-items tbody tr[data-item]")}
        return got if len(got) == len(items) else None
    got = check(f"a click on fails opens its page: its {len(items)} items, as GET /api/v1/jobs/fails has them",
                lambda: wait(lambda: "fails" in b.h1() and "#/jobs/fails" in b.m.url() and page_items(), 10, "fails's items"), b)
    if got:
        check("item 0's row says ok, item 1's failed; and the page has why: 'Item 1: failed (exit 3)'",
              lambda: wait(lambda: " ok " in page_items()[0] and " failed " in page_items()[1]
                           and "Item 1: failed (exit 3)" in b.text("main"), 10, "item 1 failed"), b)
        check("its last fire says failed: an item of that fire failed (not the outcome of whichever item ended last)",
              lambda: wait(lambda: "failed" in b.text("#job-last-fire"), 10, "last fire failed"), b)
    b.shot("firefox-job")

    errs = b.errors()
    ok(not errs, "no script error, rejected promise, console.error or CSP violation while it was used (the hook's)")
    for e in errs:
        diag(f"  page: {e}")
    b.quit()
    errs = b.logged_errors()
    ok(not errs, "none in Firefox's own console either, from the page's load on (its log, read once it quit)")
    for e in errs:
        diag(f"  firefox: {e}")


run(main)
