"""Headless Chromium (Debian's `chromium`) driven through the DevTools protocol: what
scripts/browser-check.py (the map page's tests) and Benchmarks/map-page.py (its speed) share.

    chromium = Chromium(1200, 800)
    chromium.call("Page.navigate", url="http://127.0.0.1:8080/")
    chromium.evaluate("document.title")
    chromium.close()

Needs: chromium, and the websocket-client package (pip install websocket-client)."""
import json, os, shutil, subprocess, sys, tempfile, time, urllib.request

import websocket  # websocket-client


class Chromium:
    def __init__(self, width=1200, height=800, timeout=30):
        browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
        if not browser:
            sys.exit("devtools: no chromium on PATH (apt install chromium)")
        self.profile = tempfile.mkdtemp(prefix="trafficgeo-chromium-")
        self.proc = subprocess.Popen([browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                      "--no-first-run", "--disable-extensions", "--disable-background-networking",
                                      f"--window-size={width},{height}", "--remote-debugging-port=0",
                                      f"--user-data-dir={self.profile}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.counter = 0
        self.ws = None
        try:
            port_file = os.path.join(self.profile, "DevToolsActivePort")
            deadline = time.time() + timeout
            while not os.path.exists(port_file) or not open(port_file).read().strip():
                if time.time() > deadline or self.proc.poll() is not None:
                    sys.exit("devtools: chromium did not start its DevTools endpoint")
                time.sleep(0.1)
            port = int(open(port_file).read().split()[0])
            targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
            page = next(t for t in targets if t.get("type") == "page")
            self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=timeout)
        except BaseException:
            self.close()
            raise

    def call(self, method, **params):
        """A DevTools command; its result (events that arrive meanwhile are dropped)."""
        self.counter += 1
        self.ws.send(json.dumps({"id": self.counter, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.counter:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page."""
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return r.get("result", {}).get("value")

    def close(self):
        if self.ws is not None:
            try:
                self.ws.close()
            except Exception:
                pass
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)
