"""t/console/tconsole.py: what the console's browser drivers share (t/lib/tbrowser.h runs them).

A driver uses the page as a user does (clicks, types, keys) in Debian's headless Chromium through
chromedriver, asserts what a user sees (text in the page, controls there or not), and confirms the
effects through the API or `ejobctl --json`, never by reading ZooKeeper itself. It prints TAP
lines ("ok - ...", "not ok - ...", "ok - ... # SKIP why") on stdout, which the C test relays as its
own checks; its diagnostics go to stderr. "@ WORDS" on stdout asks the C test to act (kill a
supervisor, stop ZooKeeper): the answer comes on stdin.

Environment (the C test's): EJOB_URL (serve), EJOB_USERS ("name:password:role ..."), EJOB_CTL
(tools/ejobctl), EJOB_ZK, EJOB_NS; and tbrowser's EJOB_SHOTS, EJOB_TMP.
"""
import base64
import gzip
import json
import os
import subprocess
import sys
import time
import traceback
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

URL = os.environ.get("EJOB_URL", "http://127.0.0.1:8080")
SHOTS = os.environ.get("EJOB_SHOTS", "build/screenshots")
TMP = os.environ.get("EJOB_TMP", "/tmp")
CTL = os.environ.get("EJOB_CTL", "tools/ejobctl")
ZK = os.environ.get("EJOB_ZK", "")
NS = os.environ.get("EJOB_NS", "")
USERS = {}
ROLE_OF = {}
for u in os.environ.get("EJOB_USERS", "").split():
    name, pw, role = u.split(":", 2)
    USERS[name] = pw
    ROLE_OF[role] = name

failed = 0
browsers = []


class Timeout(Exception):
    pass


# ---- TAP ----------------------------------------------------------------------------------

def diag(msg):
    for line in str(msg).splitlines() or [""]:
        sys.stderr.write(f"# {line}\n")
    sys.stderr.flush()


def ok(cond, name):
    global failed
    print(f"{'ok' if cond else 'not ok'} - {name}", flush=True)
    if not cond:
        failed += 1
        fr = traceback.extract_stack()[-2]
        diag(f"  Failed '{name}'\n  at {os.path.basename(fr.filename)} line {fr.lineno}")
    return bool(cond)


def skip(name, why):
    print(f"ok - {name} # SKIP {why}", flush=True)


def check(name, fn, browser=None):
    """fn() is truthy: a passed check; false or an exception (said on stderr): a failed one, with
    the page's text and a screenshot (FAIL-...) of the browser given."""
    try:
        r = fn()
        why = None
    except Exception as e:   # a failed wait, a missing element: the check fails, the run goes on
        r, why = False, f"{type(e).__name__}: {e}"
    good = ok(bool(r), name)
    if not good:
        if why:
            diag(f"  {why}")
        if browser:
            browser.dump(f"FAIL-{name}")
    return r if good else None


def act(cmd):
    """ask the C test to do something with the processes it owns; its one-line answer"""
    print(f"@ {cmd}", flush=True)
    return sys.stdin.readline().strip()


def done():
    for b in browsers:
        b.quit()
    sys.exit(min(failed, 254))


def run(main):
    """main(), then done(); an exception that escapes it (a wait that gave up outside a check) is a
    failed check naming it, with the trace and each browser's page"""
    try:
        main()
    except Exception as e:
        ok(False, f"the driver ran to its end ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})")
        diag(traceback.format_exc())
        for b in browsers:
            b.dump("FAIL-driver")
    done()


def wait(fn, timeout=10, what="the condition", every=0.1):
    """poll fn() until it returns something truthy (its value); Timeout after timeout s, with
    the last value or exception"""
    end = time.time() + timeout
    last = None
    while True:
        try:
            v = fn()
            if v:
                return v
            last = v
        except (WebDriverException, LookupError, ValueError, TypeError, AttributeError) as e:
            last = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        if time.time() >= end:
            raise Timeout(f"{what}: not within {timeout} s (last: {last!r})")
        time.sleep(every)


# ---- the API and ejobctl (to confirm what the page did) ------------------------------------

def http(method, path, user=None, body=None, headers=None, raw=False):
    """(status, body as JSON (or bytes with raw, or text), headers)"""
    h = dict(headers or {})
    if user:
        h["Authorization"] = "Basic " + base64.b64encode(f"{user}:{USERS[user]}".encode()).decode()
    data = None
    if body is not None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    req = urllib.request.Request(URL + path, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, b, hd = r.status, r.read(), r.headers
    except urllib.error.HTTPError as e:
        status, b, hd = e.code, e.read(), e.headers
    if raw:
        return status, b, hd
    try:
        return status, json.loads(b) if b else None, hd
    except ValueError:
        return status, b.decode("utf-8", "replace"), hd


def api(path, user=None):
    """GET path as user (the admin by default): its JSON, or LookupError"""
    s, b, _ = http("GET", path, user or ROLE_OF.get("admin"))
    if s != 200:
        raise LookupError(f"GET {path}: {s} {b}")
    return b


def job_doc(name):
    return api(f"/api/v1/jobs/{name}")


def jobs_doc():
    return {j["name"]: j for j in api("/api/v1/jobs")["jobs"]}


def ctl(*args):
    """tools/ejobctl ARGS --json on the test's cluster: its document"""
    r = subprocess.run([CTL, *args, "--zk", ZK, "--namespace", NS, "--json"], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise LookupError(f"ejobctl {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def gunzip(b):
    return gzip.decompress(b)


# ---- the browser ---------------------------------------------------------------------------

class Browser:
    """one headless Chromium (its own profile: its own cookies) at a laptop's size, or a phone's"""

    def __init__(self, width=1366, height=768, phone=False, name="b"):
        o = webdriver.ChromeOptions()
        o.binary_location = "/usr/bin/chromium"
        prof = os.path.join(TMP, f"chromium-{name}-{len(browsers)}")
        for a in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--disable-crash-reporter",
                  "--disable-breakpad", "--no-first-run", "--disable-extensions", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--lang=en-US", f"--user-data-dir={prof}",
                  f"--window-size={width},{height}"]:
            o.add_argument(a)
        o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
        self.d.set_page_load_timeout(30)
        self.d.set_script_timeout(30)
        if phone:
            self.d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                   {"width": width, "height": height, "deviceScaleFactor": 2, "mobile": True})
        self.logs = []
        browsers.append(self)

    def quit(self):
        try:
            self.d.quit()
        except Exception:   # already gone: its group is killed anyway
            pass

    # -- where and what --
    def go(self, route):
        """the console at #route; a new page load only when not on the console yet"""
        if self.d.current_url.startswith(URL + "/"):
            self.d.execute_script("location.hash = arguments[0]", route)
        else:
            self.d.get(f"{URL}/#{route}")

    def load(self, route="/"):
        self.d.get(f"{URL}/#{route}")

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def find(self, css, within=None):
        return (within or self.d).find_element(By.CSS_SELECTOR, css)

    def finds(self, css, within=None):
        return (within or self.d).find_elements(By.CSS_SELECTOR, css)

    def has(self, css):
        return len(self.finds(css)) > 0

    def text(self, css="main"):
        return self.find(css).text

    def visible(self, css):
        """the elements css that a user sees (displayed)"""
        return [e for e in self.finds(css) if e.is_displayed()]

    def wait_text(self, needle, css="main", timeout=10):
        return wait(lambda: needle in self.text(css), timeout, f"'{needle}' in {css}")

    def wait_css(self, css, timeout=10):
        return wait(lambda: self.finds(css), timeout, f"an element {css}")

    def h1(self):
        return wait(lambda: self.find("main h1").text, 10, "the page's title")

    # -- the user's hands --
    def type(self, css, text, clear=True, enter=False):
        e = self.find(css)
        if clear:
            e.send_keys(Keys.CONTROL, "a")
            e.send_keys(Keys.DELETE)
        e.send_keys(text)
        if enter:
            e.send_keys(Keys.ENTER)
        return e

    def choose(self, css, text):
        """pick an option of a select by its text, as a user does"""
        Select(self.find(css)).select_by_visible_text(text)

    def click(self, css):
        e = wait(lambda: [x for x in self.finds(css) if x.is_displayed() and x.is_enabled()], 10, f"{css} to click")[0]
        self.js("arguments[0].scrollIntoView({block: 'center'})", e)
        e.click()
        return e

    def keys(self, *k):
        """keys to whatever has the focus"""
        self.d.switch_to.active_element.send_keys(*k)

    def focused(self):
        return self.d.switch_to.active_element

    def login(self, user, expect_ok=True):
        self.load("/login")
        wait(lambda: self.finds("#login-user"), 10, "the login form")
        self.type("#login-user", user)
        self.type("#login-password", USERS[user], enter=True)
        if expect_ok:
            wait(lambda: self.finds("#who .user") and user in self.text("#who"), 10, f"{user} logged in")

    # -- what is left --
    def shot(self, name):
        os.makedirs(SHOTS, exist_ok=True)
        self.d.save_screenshot(os.path.join(SHOTS, f"{name}.png"))

    def full_shot(self, name):
        """the whole page, not just the window"""
        os.makedirs(SHOTS, exist_ok=True)
        h = self.js("return Math.max(document.body.scrollHeight, document.documentElement.scrollHeight)")
        w = self.js("return document.documentElement.clientWidth")
        self.d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": w, "height": min(h, 4000), "deviceScaleFactor": 1, "mobile": False})
        self.d.save_screenshot(os.path.join(SHOTS, f"{name}.png"))
        self.d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    def dump(self, name):
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:80]
        try:
            self.shot(safe)
            diag(f"  page {self.d.current_url}, screenshot {SHOTS}/{safe}.png; its text:")
            diag("    " + self.text("body").replace("\n", "\n    ")[:3000])
        except Exception as e:
            diag(f"  (no page to show: {e})")

    def console_errors(self, allow=()):
        """what the page logged as an error (script errors, CSP violations), but the failed
        requests the test made on purpose (allow: substrings)"""
        self.logs += self.d.get_log("browser")
        bad = []
        for l in self.logs:
            if l.get("level") != "SEVERE":
                continue
            m = l.get("message", "")
            # an API answer of 4xx/5xx is the page's business (it shows it), not an error of the page
            if "Failed to load resource: the server responded with a status of" in m and ("/api/v1/" in m or "/healthz" in m):
                continue
            if any(a in m for a in allow):
                continue
            bad.append(m)
        return bad
