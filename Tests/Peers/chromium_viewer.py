"""Headless Chromium as a real viewer of rtc-signal's viewer page (GET /rooms/ROOM).

Starts Debian's `chromium` (flags: ../shared/field-notes.md, "Headless Chromium"), drives its tabs
over the DevTools protocol, lets the page join the room and play, and records what each tab shows:

    chromium_viewer.py --url http://127.0.0.1:PORT/rooms/123456 --seconds 10 --out DIR \
        [--second-tab-at S] [--close-tab-at S] [--screenshot FILE] [--region X,Y,W,H] [--deadline S]

The measuring window starts at the first tab's first video frame and lasts --seconds;
--second-tab-at / --close-tab-at are seconds into that window (open, then close, a second tab).
DIR/summary.json holds, per tab: the <video>'s getVideoPlaybackQuality() totals and fps over the
tab's window, currentTime progress, freezes (no new frame for > 500 ms while playing, from the
page's requestVideoFrameCallback times), audio arrival (inbound-rtp audio via the page), the decoded
timecodes and whether they are in order, the first-frame time after the tab opened (and after the
page started its media session, and after the publisher's answer arrived), glass-to-glass p50/p95,
the round trip of the selected candidate pair, the time the page spent in `still` (the publisher's
picture did not move), the mean colour of --region of the picture at the first frame and at the
end, the negotiated video codec, the page's overlay text, and the page's events. A page that stops
in its `error` state before its first frame ends the run (`error` says why; `pages` has its status).
DIR/chromium.log and DIR/tabN-console.log keep the noise.

The command line, the page's JavaScript, the run and the summary are viewer_page.py's, shared with
firefox_viewer.py; this file is Chromium and its DevTools protocol.

Python 3.11, standard library plus `websockets` (out/venv). Every wait is bounded; the run ends
non-zero with one line on failure; Chromium is killed on every exit.
"""

import asyncio
import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from websockets.asyncio.client import connect

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import viewer_page  # noqa: E402
from viewer_page import DOM_TIMEOUT, VIEWPORT, Failure, PageTab  # noqa: E402

PROG = "chromium_viewer"
CHROMIUM_START_TIMEOUT = 15  # until DevToolsActivePort names the port
CDP_TIMEOUT = 10  # any DevTools command

CHROMIUM_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--remote-debugging-port=0",
    "--allow-loopback-in-peer-connection",
    "--autoplay-policy=no-user-gesture-required",
    "--disable-features=WebRtcHideLocalIpsWithMdns,Translate,OptimizationHints,MediaRouter",
    # Nothing but loopback: no background services, no name resolves except to nothing.
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--no-pings",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1, EXCLUDE [::1]",
    # Tabs other than the focused one must not be throttled: each tab is a viewer.
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
]


def browser_options(parser):
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium", help="browser binary")
    parser.add_argument(
        "--trust-spki",
        metavar="HASH",
        help="trust the server certificate whose public key has this base64 SHA-256 (a test's own "
        "self-signed certificate, for https/wss), and no other exception",
    )


class Browser:
    """The Chromium process and one DevTools connection to it (flattened sessions, one per tab)."""

    NAME = "chromium"
    FRAMES_FROM = "playbackQuality"

    def __init__(self, binary, out, trust_spki=None):
        self.binary, self.out = binary, out
        # The flags and environment it starts with: a caller may drop --headless=new (a headed
        # browser on a private X display, DISPLAY in env) or add its own flags.
        self.flags = list(CHROMIUM_FLAGS)
        self.env = None
        self.extra_flags = [f"--ignore-certificate-errors-spki-list={trust_spki}"] if trust_spki else []
        self.process = None
        self.profile = tempfile.mkdtemp(prefix="chromium-viewer-")
        self.ws = None
        self.next_id = 1
        self.replies = {}  # id -> future
        self.listeners = {}  # sessionId -> callable(method, params)
        self.reader = None
        self.version = None
        self.tabs = []

    async def start(self):
        log = open(os.path.join(self.out, "chromium.log"), "wb")
        self.process = subprocess.Popen(
            [self.binary, *self.flags, *self.extra_flags, f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        limit = time.monotonic() + CHROMIUM_START_TIMEOUT
        while True:
            if self.process.poll() is not None:
                raise Failure(f"chromium exited with {self.process.returncode} at start (see chromium.log)")
            try:
                lines = open(port_file).read().split("\n")
                if len(lines) >= 2 and lines[0].isdigit() and lines[1].startswith("/devtools/"):
                    break
            except FileNotFoundError:
                pass
            if time.monotonic() > limit:
                raise Failure(f"chromium wrote no DevToolsActivePort within {CHROMIUM_START_TIMEOUT} s")
            await asyncio.sleep(0.1)
        url = f"ws://127.0.0.1:{lines[0]}{lines[1]}"
        self.ws = await asyncio.wait_for(connect(url, max_size=None, ping_interval=None), CDP_TIMEOUT)
        self.reader = asyncio.create_task(self._read())
        self.version = (await self.call("Browser.getVersion")).get("product")

    async def _read(self):
        try:
            async for raw in self.ws:
                message = json.loads(raw)
                if "id" in message:
                    future = self.replies.pop(message["id"], None)
                    if future and not future.done():
                        future.set_result(message)
                elif (listener := self.listeners.get(message.get("sessionId"))) is not None:
                    listener(message["method"], message.get("params", {}))
        finally:
            for future in self.replies.values():
                if not future.done():
                    future.set_exception(Failure("the DevTools connection closed (chromium died?)"))

    async def call(self, method, params=None, session=None, timeout=CDP_TIMEOUT):
        if self.reader is not None and self.reader.done():
            raise Failure(f"{method}: the DevTools connection is closed (chromium died?)")
        message_id, self.next_id = self.next_id, self.next_id + 1
        message = {"id": message_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        future = asyncio.get_running_loop().create_future()
        self.replies[message_id] = future
        await self.ws.send(json.dumps(message))
        try:
            reply = await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise Failure(f"DevTools {method} got no reply within {timeout} s") from None
        finally:
            self.replies.pop(message_id, None)
        if "error" in reply:
            raise Failure(f"DevTools {method}: {reply['error'].get('message')}")
        return reply.get("result", {})

    def new_tab(self, number):
        return Tab(self, number, self.out)

    def stop(self):
        """Kills Chromium and its children (its own process group), whatever happened."""
        if self.process is not None and self.process.poll() is None:
            for sig, wait in ((signal.SIGTERM, 3), (signal.SIGKILL, 3)):
                try:
                    os.killpg(self.process.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.process.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        if self.process is not None:
            # Renderers and helpers may outlive the browser process by a moment.
            limit = time.monotonic() + 3
            while time.monotonic() < limit:
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    break
                time.sleep(0.05)
        shutil.rmtree(self.profile, ignore_errors=True)


class Tab(PageTab):
    """One viewer tab: its session, console log, and the snapshots that bound its window."""

    def __init__(self, browser, number, out):
        super().__init__(number)
        self.browser = browser
        self.console = open(os.path.join(out, f"tab{number}-console.log"), "w")
        self.session = self.target = None
        self.dom_loaded = asyncio.get_running_loop().create_future()
        self.crashed = None

    @property
    def is_open(self):
        return self.session is not None and not self.closed

    def on_event(self, method, params):
        if method == "Page.domContentEventFired" and not self.dom_loaded.done():
            self.dom_loaded.set_result(True)
        elif method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            self.console.write(f"{params.get('type')}: {text}\n")
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text", "?")
            self.page_errors.append(text.split("\n")[0])
            self.console.write(f"EXCEPTION: {text}\n")
        elif method == "Inspector.targetCrashed":
            self.crashed = "the tab's renderer crashed"

    async def open(self, url):
        browser = self.browser
        # Its own window: a tab behind another is hidden, and a hidden tab neither paints nor
        # calls requestVideoFrameCallback (its frames count as dropped).
        created = await browser.call("Target.createTarget", {"url": "about:blank", "newWindow": True})
        self.target = created["targetId"]
        attached = await browser.call("Target.attachToTarget", {"targetId": self.target, "flatten": True})
        self.session = attached["sessionId"]
        browser.listeners[self.session] = self.on_event
        for method in ("Page.enable", "Runtime.enable", "Inspector.enable"):
            await browser.call(method, session=self.session)
        width, height = VIEWPORT
        await browser.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            self.session,
        )
        self.opened_at = time.monotonic()
        navigation = await browser.call("Page.navigate", {"url": url}, self.session)
        if navigation.get("errorText"):
            raise Failure(f"tab {self.number}: cannot load {url}: {navigation['errorText']}")
        try:
            await asyncio.wait_for(asyncio.shield(self.dom_loaded), DOM_TIMEOUT)
        except TimeoutError:
            raise Failure(f"tab {self.number}: no DOMContentLoaded within {DOM_TIMEOUT} s") from None

    async def evaluate(self, expression):
        if self.crashed:
            raise Failure(f"tab {self.number}: {self.crashed}")
        result = await self.browser.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}, self.session
        )
        if "exceptionDetails" in result:
            raise Failure(f"tab {self.number}: evaluation failed: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    async def screenshot(self, path):
        data = await self.browser.call("Page.captureScreenshot", {"format": "png"}, self.session, timeout=20)
        with open(path, "wb") as file:
            file.write(base64.b64decode(data["data"]))

    async def close(self):
        if not self.closed:
            self.closed = True
            await self.browser.call("Target.closeTarget", {"targetId": self.target})
        self.console.close()


def main():
    args = viewer_page.parse_arguments(PROG, __doc__.split("\n\n")[0], CHROMIUM_START_TIMEOUT, browser_options)
    return viewer_page.main(PROG, args, Browser(args.chromium, args.out, args.trust_spki))


if __name__ == "__main__":
    sys.exit(main())
