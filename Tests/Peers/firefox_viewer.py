"""Headless Firefox ESR as a real viewer of rtc-signal's viewer page (GET /rooms/ROOM).

Starts Debian's `firefox-esr --headless` on a fresh temporary profile (../shared/field-notes.md,
"Firefox ESR as a viewer"), drives it over WebDriver BiDi (no geckodriver), lets the page join the
room and play, and records what each tab shows:

    firefox_viewer.py --url http://127.0.0.1:PORT/rooms/123456 --seconds 10 --out DIR [--prefs h264] \
        [--second-tab-at S] [--close-tab-at S] [--screenshot FILE] [--region X,Y,W,H] [--deadline S]

The options, the measuring window and DIR/summary.json are chromium_viewer.py's (viewer_page.py,
shared): per tab, frames, fps and freezes from the page's requestVideoFrameCallback times (Firefox's
getVideoPlaybackQuality() stays 0 for WebRTC video: `playbackQuality` holds what it says), audio
arrival, the timecodes and their order, first-frame times, glass-to-glass, the negotiated video
codec (`videoCodec`, the inbound-rtp's codec mimeType) and the page's overlay text. A page that
stops in its `error` state before its first frame (e.g. the publisher refused the offer) ends the
run: `error` says why, and `pages` holds the page's status and events.

Preferences (user.js): the media ones of the field notes (autoplay, loopback ICE, host addresses
unobfuscated), and nothing that reaches beyond loopback: no first-run pages, telemetry, studies,
updates, remote settings, safe browsing, captive-portal or connectivity checks, prefetching, DoH;
any other connection is sent to a SOCKS proxy on a closed loopback port, names unresolved.
`--prefs stock` (default) is the media codecs a Debian user's Firefox offers: VP8, VP9, AV1.
`--prefs h264` adds the three preferences that make it offer H.264 too (decoded by the system
FFmpeg). A permissions file grants camera and microphone to the page's origin: without it Firefox
gathers host candidates only on the default-route interface, none in a loopback-only namespace.
Nothing is captured: the page asks for neither.

Python 3.11, standard library plus `websockets` (out/venv). Every wait is bounded; the run ends
non-zero with one line on failure; Firefox is killed on every exit. DIR/firefox.log and
DIR/tabN-console.log keep the noise.
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
import urllib.parse

from websockets.asyncio.client import connect

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import viewer_page  # noqa: E402
from viewer_page import DOM_TIMEOUT, VIEWPORT, Failure, PageTab  # noqa: E402

PROG = "firefox_viewer"
FIREFOX_START_TIMEOUT = 30  # until WebDriverBiDiServer.json names the port (a cold start on a busy host)
BIDI_TIMEOUT = 10  # any WebDriver BiDi command

# What the page needs to play, unattended, on loopback.
MEDIA_PREFS = {
    "media.autoplay.default": 0,  # allowed, sound included
    "media.peerconnection.ice.loopback": True,
    "media.peerconnection.ice.obfuscate_host_addresses": False,  # 127.0.0.1, not an mDNS name
}
# Firefox offers H.264 only with these (field notes): "hardware" H.264, allowed without a GPU,
# the blocklist that would forbid it off. It then decodes through the system FFmpeg.
H264_PREFS = {
    "media.webrtc.hw.h264.enabled": True,
    "gfx.blacklist.webrtc.hw.acceleration.h264": 1,  # FEATURE_STATUS_OK
    "extensions.blocklist.enabled": False,
}
# Nothing reaches beyond loopback: no first run, telemetry, studies, updates or downloads.
QUIET_PREFS = {
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.startup.page": 0,
    "browser.startup.homepage": "about:blank",
    "startup.homepage_welcome_url": "",
    "startup.homepage_welcome_url.additional": "",
    "startup.homepage_override_url": "",
    "browser.aboutwelcome.enabled": False,
    "browser.newtabpage.enabled": False,
    "browser.newtabpage.activity-stream.feeds.section.topstories": False,
    "browser.newtabpage.activity-stream.feeds.topsites": False,
    "browser.newtabpage.activity-stream.feeds.telemetry": False,
    "browser.newtabpage.activity-stream.telemetry": False,
    "browser.newtabpage.activity-stream.showSponsored": False,
    "browser.newtabpage.activity-stream.showSponsoredTopSites": False,
    "browser.topsites.contile.enabled": False,
    "browser.sessionstore.resume_from_crash": False,
    "browser.tabs.warnOnClose": False,
    "browser.uitour.enabled": False,
    "browser.discovery.enabled": False,
    "browser.translations.enable": False,
    "browser.ml.enable": False,
    "extensions.pocket.enabled": False,
    "identity.fxaccounts.enabled": False,
    "toolkit.startup.max_resumed_crashes": -1,
    "datareporting.policy.dataSubmissionEnabled": False,
    "datareporting.healthreport.uploadEnabled": False,
    "datareporting.usage.uploadEnabled": False,
    "toolkit.telemetry.enabled": False,
    "toolkit.telemetry.unified": False,
    "toolkit.telemetry.archive.enabled": False,
    "toolkit.telemetry.server": "data:,",
    "toolkit.telemetry.shutdownPingSender.enabled": False,
    "toolkit.telemetry.firstShutdownPing.enabled": False,
    "toolkit.telemetry.newProfilePing.enabled": False,
    "toolkit.telemetry.updatePing.enabled": False,
    "toolkit.telemetry.bhrPing.enabled": False,
    "app.normandy.enabled": False,
    "app.normandy.api_url": "",
    "app.shield.optoutstudies.enabled": False,
    "messaging-system.rsexperimentloader.enabled": False,
    "app.update.disabledForTesting": True,
    "app.update.auto": False,
    "app.update.checkInstallTime": False,
    "extensions.update.enabled": False,
    "extensions.getAddons.cache.enabled": False,
    "extensions.systemAddon.update.enabled": False,
    "extensions.systemAddon.update.url": "",
    "browser.search.update": False,
    "browser.region.network.url": "",
    "browser.region.update.enabled": False,
    "geo.enabled": False,
    "geo.provider.network.url": "",
    "services.settings.server": "data:,#remote-settings-dummy/v1",
    "security.remote_settings.crlite_filters.enabled": False,
    "security.remote_settings.intermediates.enabled": False,
    "security.OCSP.enabled": 0,
    "security.certerrors.mitm.priming.enabled": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "browser.safebrowsing.downloads.enabled": False,
    "browser.safebrowsing.blockedURIs.enabled": False,
    "browser.safebrowsing.provider.google.updateURL": "",
    "browser.safebrowsing.provider.google.gethashURL": "",
    "browser.safebrowsing.provider.google4.updateURL": "",
    "browser.safebrowsing.provider.google4.gethashURL": "",
    "browser.safebrowsing.provider.mozilla.updateURL": "",
    "browser.safebrowsing.provider.mozilla.gethashURL": "",
    "media.gmp-manager.url": "data:,",
    "media.gmp-manager.updateEnabled": False,
    "media.gmp-gmpopenh264.autoupdate": False,
    "media.gmp-widevinecdm.enabled": False,
    "media.gmp-widevinecdm.autoupdate": False,
    "media.eme.enabled": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "network.dns.disablePrefetch": True,
    "network.prefetch-next": False,
    "network.predictor.enabled": False,
    "network.http.speculative-parallel-limit": 0,
    "network.trr.mode": 5,  # no DNS over HTTPS
    "network.dns.native-is-localhost": True,  # every name Firefox itself resolves is 127.0.0.1
    # Whatever else tries to connect goes to a SOCKS proxy on a closed loopback port, its name
    # unresolved; loopback itself is never proxied.
    "network.proxy.type": 1,
    "network.proxy.socks": "127.0.0.1",
    "network.proxy.socks_port": 9,
    "network.proxy.socks_version": 5,
    "network.proxy.socks_remote_dns": True,
    "network.proxy.no_proxies_on": "localhost, 127.0.0.1, [::1]",
    "network.proxy.failover_direct": False,
}


def browser_options(parser):
    parser.add_argument("--firefox", default=shutil.which("firefox-esr") or "firefox-esr", help="browser binary")
    parser.add_argument(
        "--prefs",
        choices=["stock", "h264"],
        default="stock",
        help="stock: the codecs a user's Firefox offers (VP8, VP9, AV1); h264: H.264 offered too",
    )


def origin(url):
    """scheme://host[:port] of the page: what the permissions file grants."""
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"


def user_js(prefs):
    return "".join(f"user_pref({json.dumps(name)}, {json.dumps(value)});\n" for name, value in prefs.items())


class Browser:
    """The Firefox process and one WebDriver BiDi session with it (one browsing context per tab)."""

    NAME = "firefox"
    FRAMES_FROM = "callbacks"

    def __init__(self, binary, out, url, h264=False):
        self.binary, self.out = binary, out
        self.profile = tempfile.mkdtemp(prefix="firefox-viewer-")
        permissions = os.path.join(self.profile, "viewer-permissions.txt")
        with open(permissions, "w") as file:
            # The page's origin may use camera and microphone: Firefox then gathers every host
            # candidate, loopback included (it asks for neither; nothing is captured).
            for name in ("camera", "microphone"):
                file.write(f"origin\t{name}\t1\t{origin(url)}\n")
        prefs = {**QUIET_PREFS, **MEDIA_PREFS, "permissions.manager.defaultsUrl": f"file://{permissions}"}
        if h264:
            prefs.update(H264_PREFS)
        with open(os.path.join(self.profile, "user.js"), "w") as file:
            file.write(user_js(prefs))
        self.process = None
        self.ws = None
        self.next_id = 1
        self.replies = {}  # id -> future
        self.listeners = {}  # browsing context -> callable(method, params)
        self.reader = None
        self.version = None
        self.tabs = []
        self.first_context = None  # the window Firefox opened with: tab 1's

    async def start(self):
        log = open(os.path.join(self.out, "firefox.log"), "wb")
        environment = {
            **os.environ,
            "MOZ_CRASHREPORTER_DISABLE": "1",
            # Release builds take services.settings.server (above) only with this set.
            "MOZ_REMOTE_SETTINGS_DEVTOOLS": "1",
            # Firefox's own sockets refuse any address but loopback (as in its test harnesses).
            "MOZ_DISABLE_NONLOCAL_CONNECTIONS": "1",
        }
        self.process = subprocess.Popen(
            [self.binary, "--headless", "--remote-debugging-port=0", "--no-remote", "--profile", self.profile],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=environment,
        )
        log.close()
        port_file = os.path.join(self.profile, "WebDriverBiDiServer.json")
        limit = time.monotonic() + FIREFOX_START_TIMEOUT
        while True:
            if self.process.poll() is not None:
                raise Failure(f"firefox exited with {self.process.returncode} at start (see firefox.log)")
            try:
                with open(port_file) as file:
                    port = json.load(file)["ws_port"]
                break
            except (FileNotFoundError, ValueError, KeyError):
                pass
            if time.monotonic() > limit:
                raise Failure(f"firefox wrote no WebDriverBiDiServer.json within {FIREFOX_START_TIMEOUT} s")
            await asyncio.sleep(0.1)
        url = f"ws://127.0.0.1:{port}/session"
        self.ws = await asyncio.wait_for(connect(url, max_size=None, ping_interval=None), BIDI_TIMEOUT)
        self.reader = asyncio.create_task(self._read())
        # Firefox answers once its first window is up: on a busy host, seconds after the port.
        session = await self.call("session.new", {"capabilities": {}}, timeout=FIREFOX_START_TIMEOUT)
        capabilities = session.get("capabilities", {})
        self.version = f"{capabilities.get('browserName', 'firefox')}/{capabilities.get('browserVersion', '?')}"
        await self.call("session.subscribe", {"events": ["log.entryAdded", "browsingContext.domContentLoaded"]})
        tree = await self.call("browsingContext.getTree", {"maxDepth": 0})
        contexts = tree.get("contexts", [])
        if not contexts:
            raise Failure("firefox has no browsing context to open the page in")
        self.first_context = contexts[0]["context"]

    async def _read(self):
        try:
            async for raw in self.ws:
                message = json.loads(raw)
                if message.get("type") == "event":
                    params = message.get("params", {})
                    context = params.get("context") or params.get("source", {}).get("context")
                    if (listener := self.listeners.get(context)) is not None:
                        listener(message["method"], params)
                elif "id" in message:
                    future = self.replies.pop(message["id"], None)
                    if future and not future.done():
                        future.set_result(message)
        finally:
            for future in self.replies.values():
                if not future.done():
                    future.set_exception(Failure("the WebDriver BiDi connection closed (firefox died?)"))

    async def call(self, method, params=None, timeout=BIDI_TIMEOUT):
        if self.reader is not None and self.reader.done():
            raise Failure(f"{method}: the WebDriver BiDi connection is closed (firefox died?)")
        message_id, self.next_id = self.next_id, self.next_id + 1
        future = asyncio.get_running_loop().create_future()
        self.replies[message_id] = future
        await self.ws.send(json.dumps({"id": message_id, "method": method, "params": params or {}}))
        try:
            reply = await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise Failure(f"WebDriver BiDi {method} got no reply within {timeout} s") from None
        finally:
            self.replies.pop(message_id, None)
        if reply.get("type") == "error":
            raise Failure(f"WebDriver BiDi {method}: {reply.get('error')}: {reply.get('message')}")
        return reply.get("result", {})

    def new_tab(self, number):
        return Tab(self, number, self.out)

    def stop(self):
        """Kills Firefox and its content processes (its own process group), whatever happened."""
        if self.process is not None and self.process.poll() is None:
            for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 3)):
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
            # Content processes may outlive the parent by a moment.
            limit = time.monotonic() + 3
            while time.monotonic() < limit:
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    break
                time.sleep(0.05)
        shutil.rmtree(self.profile, ignore_errors=True)


class Tab(PageTab):
    """One viewer tab: its browsing context (a window of its own), console log, and snapshots."""

    def __init__(self, browser, number, out):
        super().__init__(number)
        self.browser = browser
        self.console = open(os.path.join(out, f"tab{number}-console.log"), "w")
        self.context = None
        self.dom_loaded = asyncio.get_running_loop().create_future()

    @property
    def is_open(self):
        return self.context is not None and not self.closed

    def on_event(self, method, params):
        if method == "browsingContext.domContentLoaded" and params.get("url", "").startswith("http"):
            if not self.dom_loaded.done():
                self.dom_loaded.set_result(True)
        elif method == "log.entryAdded":
            text = params.get("text") or ""
            if params.get("type") == "javascript":  # an uncaught exception
                self.page_errors.append(text.split("\n")[0])
                self.console.write(f"EXCEPTION: {text}\n")
            else:
                self.console.write(f"{params.get('method', params.get('level'))}: {text}\n")

    async def open(self, url):
        browser = self.browser
        # Tab 1 takes the window Firefox opened with; any other gets a window of its own, as in
        # chromium_viewer.py (a tab behind another is hidden, and a hidden tab does not paint).
        if self.number == 1 and browser.first_context is not None:
            self.context, browser.first_context = browser.first_context, None
        else:
            self.context = (await browser.call("browsingContext.create", {"type": "window"}))["context"]
        browser.listeners[self.context] = self.on_event
        width, height = VIEWPORT
        await browser.call(
            "browsingContext.setViewport", {"context": self.context, "viewport": {"width": width, "height": height}}
        )
        self.opened_at = time.monotonic()
        try:
            await browser.call(
                "browsingContext.navigate",
                {"context": self.context, "url": url, "wait": "interactive"},
                timeout=DOM_TIMEOUT,
            )
        except Failure as error:
            raise Failure(f"tab {self.number}: cannot load {url}: {error}") from None
        try:
            await asyncio.wait_for(asyncio.shield(self.dom_loaded), DOM_TIMEOUT)
        except TimeoutError:
            raise Failure(f"tab {self.number}: no DOMContentLoaded within {DOM_TIMEOUT} s") from None

    async def evaluate(self, expression):
        # The value as JSON text: BiDi's own serialization of objects is a tree of typed nodes.
        wrapped = f"Promise.resolve({expression}).then((v) => JSON.stringify(v === undefined ? null : v))"
        result = await self.browser.call(
            "script.evaluate",
            {
                "expression": wrapped,
                "target": {"context": self.context},
                "awaitPromise": True,
                "resultOwnership": "none",
            },
        )
        if result.get("type") == "exception":
            details = result.get("exceptionDetails", {})
            raise Failure(f"tab {self.number}: evaluation failed: {details.get('text')}")
        value = result.get("result", {})
        if value.get("type") != "string":
            raise Failure(f"tab {self.number}: evaluation gave {value.get('type')}, not JSON text")
        return json.loads(value["value"])

    async def screenshot(self, path):
        data = await self.browser.call("browsingContext.captureScreenshot", {"context": self.context}, timeout=20)
        with open(path, "wb") as file:
            file.write(base64.b64decode(data["data"]))

    async def close(self):
        if not self.closed:
            self.closed = True
            # Leaving the page ends its media session (its pagehide closes the peer connection:
            # DTLS close_notify); tab 1's window stays, the last one Firefox has.
            if self.number == 1:
                await self.browser.call(
                    "browsingContext.navigate", {"context": self.context, "url": "about:blank", "wait": "complete"}
                )
            else:
                await self.browser.call("browsingContext.close", {"context": self.context})
        self.console.close()


def main():
    args = viewer_page.parse_arguments(PROG, __doc__.split("\n\n")[0], FIREFOX_START_TIMEOUT, browser_options)
    browser = Browser(args.firefox, args.out, args.url, h264=args.prefs == "h264")
    return viewer_page.main(PROG, args, browser)


if __name__ == "__main__":
    sys.exit(main())
