"""t/console/marionette.py: a headless Firefox (Debian's firefox-esr) driven through Marionette,
its own remote protocol, with no geckodriver (Debian has none) and the standard library only.

Marionette: a TCP connection to 127.0.0.1:marionette.port; each message is "LEN:JSON" (LEN the
JSON's bytes, in decimal). The server speaks first: {"applicationType":"gecko",
"marionetteProtocol":3}. A command is [0, id, "Name", {params}], its answer [1, id, error, result]
(error null, or {"error", "message", "stacktrace"}). The commands are WebDriver's (WebDriver:Navigate,
WebDriver:ExecuteScript, WebDriver:FindElement ...) and Marionette's own (Marionette:Quit).

Firefox runs with a fresh profile under dir (its user.js sets the port and quiets the first-run
pages and the background traffic); it is in the driver's process group, so the C test kills it
with the driver on a failure or a timeout (t/lib/tbrowser)."""
import json
import os
import socket
import subprocess
import time

FIREFOX = "/usr/bin/firefox-esr"
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"   # WebDriver's key of an element reference

PREFS = {
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.startup.page": 0,
    "startup.homepage_welcome_url": "about:blank",
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "app.update.auto": False,
    "app.update.enabled": False,
    "extensions.update.enabled": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "browser.aboutwelcome.enabled": False,
    "intl.accept_languages": "en-US",
    "devtools.console.stdout.content": True,   # the page's errors in firefox.log
    "messaging-system.rsexperimentloader.enabled": False,
    # no slow-script watchdog: on a loaded CI machine a starved page's 2 s timer ran past it and
    # Firefox logged "Script terminated by timeout" (t/118), which says nothing of the page
    "dom.max_script_run_time": 0,
    "dom.max_chrome_script_run_time": 0,
}


class MarionetteError(LookupError):
    """an error answer (no such element, a script error ...): a lookup that failed, so tconsole's
    wait() retries it as it does a WebDriver exception"""

    def __init__(self, cmd, err):
        self.kind = err.get("error", "?")
        super().__init__(f"{cmd}: {self.kind}: {(err.get('message') or '').strip()[:300]}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Marionette:
    def __init__(self, profile, width=1366, height=768, timeout=30):
        os.makedirs(profile, exist_ok=True)
        self.port = free_port()
        prefs = dict(PREFS, **{"marionette.port": self.port})
        with open(os.path.join(profile, "user.js"), "w") as f:
            for k, v in prefs.items():
                f.write(f"user_pref({json.dumps(k)}, {json.dumps(v)});\n")
        env = dict(os.environ, MOZ_HEADLESS="1", MOZ_CRASHREPORTER_DISABLE="1",
                   MOZ_HEADLESS_WIDTH=str(width), MOZ_HEADLESS_HEIGHT=str(height))
        self.log = open(os.path.join(profile, "firefox.log"), "w")
        self.proc = subprocess.Popen([FIREFOX, "--headless", "--marionette", "--no-remote", "--profile", profile,
                                      "about:blank"], env=env, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        self.id = 0
        self.sock = None
        end = time.time() + timeout
        while self.sock is None:
            try:
                self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=2)
            except OSError:
                if self.proc.poll() is not None or time.time() > end:
                    raise RuntimeError(f"{FIREFOX} did not open Marionette on port {self.port} within {timeout} s "
                                       f"(exit {self.proc.poll()}; its log: {profile}/firefox.log)")
                time.sleep(0.2)
        self.sock.settimeout(60)
        self.buf = b""
        hello = self._read()
        if hello.get("marionetteProtocol") != 3:
            raise RuntimeError(f"Marionette's handshake: {hello}")
        self.caps = self.cmd("WebDriver:NewSession", {"capabilities": {"alwaysMatch": {
            "timeouts": {"script": 30000, "pageLoad": 30000, "implicit": 0}}}})
        self.cmd("WebDriver:SetWindowRect", {"width": width, "height": height})

    # -- the protocol --
    def _read(self):
        while b":" not in self.buf:
            self._more()
        n, _, rest = self.buf.partition(b":")
        n = int(n)
        while len(rest) < n:
            self._more()
            rest = self.buf.partition(b":")[2]
        self.buf = rest[n:]
        return json.loads(rest[:n])

    def _more(self):
        k = self.sock.recv(65536)
        if not k:
            raise ConnectionError("Marionette closed the connection")
        self.buf += k

    def cmd(self, name, params=None):
        self.id += 1
        b = json.dumps([0, self.id, name, params or {}]).encode()
        self.sock.sendall(str(len(b)).encode() + b":" + b)
        while True:
            m = self._read()
            if m[0] == 1 and m[1] == self.id:
                break
        if m[2]:
            raise MarionetteError(name, m[2])
        r = m[3]
        return r.get("value", r) if isinstance(r, dict) and set(r) == {"value"} else r

    # -- WebDriver's commands --
    def get(self, url):
        self.cmd("WebDriver:Navigate", {"url": url})

    def url(self):
        return self.cmd("WebDriver:GetCurrentURL")

    def js(self, script, *args):
        return self.cmd("WebDriver:ExecuteScript", {"script": script, "args": list(args)})

    def find(self, css, within=None):
        p = {"using": "css selector", "value": css}
        if within:
            p["element"] = within[ELEMENT]
        return self.cmd("WebDriver:FindElement", p)

    def finds(self, css, within=None):
        p = {"using": "css selector", "value": css}
        if within:
            p["element"] = within[ELEMENT]
        return self.cmd("WebDriver:FindElements", p)

    def click(self, el):
        self.cmd("WebDriver:ElementClick", {"id": el[ELEMENT]})

    def send_keys(self, el, text):
        self.cmd("WebDriver:ElementSendKeys", {"id": el[ELEMENT], "text": text})

    def text(self, el):
        return self.cmd("WebDriver:GetElementText", {"id": el[ELEMENT]})

    def attr(self, el, name):
        return self.cmd("WebDriver:GetElementAttribute", {"id": el[ELEMENT], "name": name})

    def screenshot(self, path):
        import base64
        with open(path, "wb") as f:
            f.write(base64.b64decode(self.cmd("WebDriver:TakeScreenshot", {"full": False})))

    def quit(self):
        try:
            self.cmd("Marionette:Quit", {"flags": ["eForceQuit"]})
        except Exception:   # gone already
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
