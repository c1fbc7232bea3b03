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
end, and the page's events. DIR/chromium.log and DIR/tabN-console.log keep the noise.

Python 3.11, standard library plus `websockets` (out/venv). Every wait is bounded; the run ends
non-zero with one line on failure; Chromium is killed on every exit.
"""

import argparse
import asyncio
import base64
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

from websockets.asyncio.client import connect

PROG = "chromium_viewer"
CHROMIUM_START_TIMEOUT = 15  # until DevToolsActivePort names the port
CDP_TIMEOUT = 10  # any DevTools command
DOM_TIMEOUT = 15  # from navigate to DOMContentLoaded
FIRST_FRAME_TIMEOUT = 30  # from navigate to the page's first video frame
FREEZE_MS = 500  # no new frame for longer than this while playing is a freeze
VIEWPORT = (1280, 800)

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

# One call per poll: small numbers only (no lists), cheap enough every second.
LIGHT = """(() => {
  const v = document.querySelector("video"), w = window.viewer;
  const q = v && v.getVideoPlaybackQuality ? v.getVideoPlaybackQuality() : null;
  // A new source (another session) restarts the <video>'s counters; the page keeps the old ones.
  const b = (w && w.playbackBase) || { totalVideoFrames: 0, droppedVideoFrames: 0, currentTime: 0 };
  return { now: performance.now(), currentTime: v ? b.currentTime + v.currentTime : null, paused: v ? v.paused : null,
    totalVideoFrames: q ? b.totalVideoFrames + q.totalVideoFrames : null,
    droppedVideoFrames: q ? b.droppedVideoFrames + q.droppedVideoFrames : null,
    state: w ? w.state : null, status: w ? w.status : null, framesShown: w ? w.framesShown : 0,
    firstFrameMs: w ? w.firstFrameMs : null, counts: w ? w.counts : null, stats: w ? w.stats : null,
    lastTimecode: w && w.timecodes.length ? w.timecodes[w.timecodes.length - 1] : null,
    width: w ? w.width : 0, height: w ? w.height : 0 };
})()"""
# The mean RGB of a region of the <video>'s picture (picture pixels), or null before a picture.
REGION = """((x, y, w, h) => {
  const v = document.querySelector("video");
  if (!v || !v.videoWidth || x + w > v.videoWidth || y + h > v.videoHeight) return null;
  const c = document.createElement("canvas");
  c.width = w; c.height = h;
  const g = c.getContext("2d", { willReadFrequently: true });
  g.drawImage(v, x, y, w, h, 0, 0, w, h);
  const d = g.getImageData(0, 0, w, h).data, sum = [0, 0, 0];
  for (let i = 0; i < d.length; i += 4) { sum[0] += d[i]; sum[1] += d[i + 1]; sum[2] += d[i + 2]; }
  return sum.map((t) => Math.round((10 * t) / (w * h)) / 10);
})"""
# At the end of a tab's window: everything, lists included.
FULL = LIGHT.replace("return {", "return { viewer: w ? JSON.parse(JSON.stringify(w)) : null,", 1)


class Failure(Exception):
    """Ends the run non-zero with this one line."""


def parse_arguments():
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the viewer page, http://127.0.0.1:PORT/rooms/ROOM[?…]")
    parser.add_argument("--seconds", type=float, required=True, help="measuring window, from the first frame")
    parser.add_argument(
        "--warmup",
        type=float,
        default=0,
        metavar="S",
        help="start the window S s after the first frame (a link's estimate settling first)",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="output directory (created)")
    parser.add_argument("--second-tab-at", type=float, metavar="S", help="open a second tab S s into the window")
    parser.add_argument("--close-tab-at", type=float, metavar="S", help="close the second tab S s into the window")
    parser.add_argument("--screenshot", metavar="FILE", help="PNG of the first tab at the end of the window")
    parser.add_argument(
        "--region",
        metavar="X,Y,W,H",
        help="report the mean RGB of this region of the picture (picture pixels) at each tab's first frame and end",
    )
    parser.add_argument("--deadline", type=float, metavar="S", help="global limit (default: every wait added up)")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium", help="browser binary")
    parser.add_argument(
        "--trust-spki",
        metavar="HASH",
        help="trust the server certificate whose public key has this base64 SHA-256 (a test's own "
        "self-signed certificate, for https/wss), and no other exception",
    )
    args = parser.parse_args()

    def bad(message):
        print(f"{PROG}: {message}", file=sys.stderr)
        sys.exit(2)

    if not args.url.startswith(("http://", "https://")):
        bad(f"--url '{args.url}' is not an http(s) address")
    if args.seconds <= 0:
        bad("--seconds must be positive")
    if args.warmup < 0:
        bad("--warmup must not be negative")
    for option, value in (("--second-tab-at", args.second_tab_at), ("--close-tab-at", args.close_tab_at)):
        if value is not None and not 0 <= value <= args.seconds:
            bad(f"{option} must be within 0..--seconds")
    if args.close_tab_at is not None and (args.second_tab_at is None or args.close_tab_at <= args.second_tab_at):
        bad("--close-tab-at closes the second tab: it needs --second-tab-at before it")
    if args.region is not None:
        try:
            args.region = [int(v) for v in args.region.split(",")]
        except ValueError:
            args.region = None
        if args.region is None or len(args.region) != 4 or min(args.region) < 0 or 0 in args.region[2:]:
            bad("--region must be X,Y,W,H: four integers, width and height positive")
    if args.deadline is None:
        waits = CHROMIUM_START_TIMEOUT + 2 * (DOM_TIMEOUT + FIRST_FRAME_TIMEOUT)
        args.deadline = waits + args.warmup + args.seconds + 30
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as error:
        bad(f"cannot create --out '{args.out}': {error}")
    return args


class Browser:
    """The Chromium process and one DevTools connection to it (flattened sessions, one per tab)."""

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


class Tab:
    """One viewer tab: its session, console log, and the snapshots that bound its window."""

    def __init__(self, browser, number, out):
        self.browser, self.number = browser, number
        self.console = open(os.path.join(out, f"tab{number}-console.log"), "w")
        self.session = self.target = None
        self.dom_loaded = asyncio.get_running_loop().create_future()
        self.crashed = None
        self.page_errors = []
        self.opened_at = None  # time.monotonic() at navigate
        self.first = self.start = self.end = None  # snapshots: first frame, window start and end
        self.region_first = self.region_end = None  # mean RGB of --region then
        self.closed = False

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

    async def wait_first_frame(self, deadline):
        """Polls until the page shows its first frame; the snapshot then opens the tab's window."""
        last = None
        while time.monotonic() < deadline:
            last = await self.evaluate(LIGHT)
            if last and last["framesShown"] and last["counts"] and last["counts"]["frames"]:
                self.first = last
                return
            await asyncio.sleep(0.1)
        state = last["status"] if last else "no page state"
        raise Failure(f"tab {self.number}: no video frame within {FIRST_FRAME_TIMEOUT} s of opening ({state})")

    async def region(self, region):
        return await self.evaluate(f"{REGION}({','.join(str(v) for v in region)})") if region else None

    async def screenshot(self, path):
        data = await self.browser.call("Page.captureScreenshot", {"format": "png"}, self.session, timeout=20)
        with open(path, "wb") as file:
            file.write(base64.b64decode(data["data"]))

    async def close(self):
        if not self.closed:
            self.closed = True
            await self.browser.call("Target.closeTarget", {"targetId": self.target})
        self.console.close()


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] if ordered else None


def window_slice(full, name, count_name, start):
    """The list's entries pushed since the `start` snapshot (the page keeps at most 3000)."""
    new = full["counts"][count_name] - start["counts"][count_name]
    values = full["viewer"][name]
    return values[-new:] if new > 0 else [], new > len(values)


def order(timecodes):
    """In order = each frame number greater than the one before (mod 2^24 wrap)."""
    backwards = repeats = skipped = 0
    for a, b in itertools.pairwise(timecodes):
        step = (b - a) % (1 << 24)
        if step == 0:
            repeats += 1
        elif step >= 1 << 23:
            backwards += 1
        else:
            skipped += step - 1
    in_order = backwards == 0 and repeats == 0
    return {"inOrder": in_order, "backwards": backwards, "repeats": repeats, "skipped": skipped}


def summarize(tab):
    """Per-tab summary over its window: from `start` (first frame, or window start) to `end`."""
    start, end = tab.start, tab.end
    seconds = (end["now"] - start["now"]) / 1000
    frames = (end["totalVideoFrames"] or 0) - (start["totalVideoFrames"] or 0)
    dropped = (end["droppedVideoFrames"] or 0) - (start["droppedVideoFrames"] or 0)
    frame_times, _ = window_slice(end, "frameTimes", "frames", start)
    times = [start["now"]] + frame_times + [end["now"]] if frame_times else []
    gaps = [(a, b) for a, b in itertools.pairwise(times) if b - a > FREEZE_MS]
    states = end["viewer"]["states"]  # [{t, state}], page time in ms

    def playing_throughout(a, b):  # "playing" at a, and no state change until b (so never "still")
        before = [s for s in states if s["t"] <= a]
        return bool(before) and before[-1]["state"] == "playing" and not any(a < s["t"] <= b for s in states)

    freezes = [round(b - a) for a, b in gaps if playing_throughout(a, b)]
    still_ms = 0.0  # time in "still" within the window
    for here, after in itertools.pairwise([*states, {"t": end["now"], "state": None}]):
        if here["state"] == "still":
            still_ms += max(0.0, min(after["t"], end["now"]) - max(here["t"], start["now"]))
    # From the page starting its (last) media session before the first frame to that frame.
    first_ms = end["viewer"]["firstFrameMs"]
    media_starts = [s["t"] for s in states if s["state"] == "connecting media" and first_ms is not None]
    media_starts = [t for t in media_starts if t <= first_ms]
    rtt, _ = window_slice(end, "rttMs", "rtt", start)
    max_gap = max((b - a for a, b in itertools.pairwise(times)), default=None)
    timecodes, truncated = window_slice(end, "timecodes", "timecodes", start)
    g2g, _ = window_slice(end, "glassToGlassMs", "glassToGlass", start)
    s0, s1 = start["stats"] or {}, end["stats"] or {}
    stats_freezes = s1["freezes"] - (s0.get("freezes") or 0) if isinstance(s1.get("freezes"), (int, float)) else None
    samples = (s1.get("audioSamples") or 0) - (s0.get("audioSamples") or 0)
    audio_bytes = (s1.get("audioBytes") or 0) - (s0.get("audioBytes") or 0)
    viewer = end["viewer"]
    return {
        "tab": tab.number,
        "uid": viewer["uid"],
        "publisher": viewer["publisher"],
        "state": end["state"],
        "status": end["status"],
        "width": end["width"],
        "height": end["height"],
        "windowSeconds": round(seconds, 3),
        "firstFrameMs": round(viewer["firstFrameMs"]) if viewer["firstFrameMs"] is not None else None,
        "firstFrameAfterMediaStartMs": round(first_ms - media_starts[-1]) if media_starts else None,
        "firstFrameAfterAnswerMs": (
            round(first_ms - viewer["answeredMs"])
            if first_ms is not None and viewer.get("answeredMs") is not None and viewer["answeredMs"] <= first_ms
            else None
        ),
        "stillSeconds": round(still_ms / 1000, 3),
        "timecodeAtStart": start.get("lastTimecode"),
        "regionFirst": tab.region_first,
        "regionEnd": tab.region_end,
        "playbackQuality": {
            "totalVideoFrames": end["totalVideoFrames"],
            "droppedVideoFrames": end["droppedVideoFrames"],
            "framesInWindow": frames,
            "droppedInWindow": dropped,
            "fps": round(frames / seconds, 2) if seconds > 0 else None,
        },
        "currentTime": {
            "start": start["currentTime"],
            "end": end["currentTime"],
            "progress": round((end["currentTime"] or 0) - (start["currentTime"] or 0), 3),
            "paused": end["paused"],
        },
        "frames": {
            "callbacks": len(frame_times),
            "fps": round(len(frame_times) / seconds, 2) if seconds > 0 else None,
            "freezes": len(freezes),
            "freezeGapsMs": freezes,
            "maxGapMs": round(max_gap) if max_gap else None,
            "gapsOver500Ms": [round(b - a) for a, b in gaps],
            "statsFreezeCount": s1.get("freezes"),
            "statsFreezeCountInWindow": stats_freezes,
            "pageFreezesInWindow": end["counts"].get("freezes", 0) - start["counts"].get("freezes", 0),
        },
        "audio": {
            "arriving": samples > 0 or audio_bytes > 0,
            "samplesInWindow": samples,
            "bytesInWindow": audio_bytes,
            "audioLevel": s1.get("audioLevel"),
            "concealedSamples": s1.get("concealedSamples"),
            "totalSamplesReceived": s1.get("audioSamples"),
        },
        "timecodes": {
            "count": len(timecodes),
            "truncated": truncated,
            **order(timecodes),
            "misreadsDropped": end["counts"]["misreads"] - start["counts"]["misreads"],
            "shownAgain": end["counts"].get("shownAgain", 0) - start["counts"].get("shownAgain", 0),
            "stillRepeats": end["counts"].get("stillRepeats", 0) - start["counts"].get("stillRepeats", 0),
            "list": timecodes,
        },
        "rttMs": {
            "count": len(rtt),
            "p50": percentile(rtt, 50),
            "p95": percentile(rtt, 95),
            "max": max(rtt) if rtt else None,
        },
        "glassToGlassMs": {
            "count": len(g2g),
            "p50": percentile(g2g, 50),
            "p95": percentile(g2g, 95),
            "min": min(g2g) if g2g else None,
            "max": max(g2g) if g2g else None,
            "clockOffsetMs": viewer["clockOffsetMs"],
            "list": g2g,
        },
        "stats": s1,
        # The state in force when the window opened, then each change in it.
        "states": [s for s in states if s["t"] < start["now"] - 1][-1:]
        + [s for s in states if s["t"] >= start["now"] - 1],
        "pageErrors": tab.page_errors,
        "events": viewer["events"],
    }


def one_line(tabs):
    parts = []
    for t in tabs:
        g, f, q = t["glassToGlassMs"], t["frames"], t["playbackQuality"]
        tc = t["timecodes"]
        parts.append(
            f"tab{t['tab']} {t['state']} {t['width']}x{t['height']} {q['framesInWindow']} frames "
            f"{q['fps']} fps {q['droppedInWindow']} dropped, {f['freezes']} freezes (max gap {f['maxGapMs']} ms), "
            f"audio {'yes' if t['audio']['arriving'] else 'NO'}, timecodes {tc['count']} "
            f"{'in order' if tc['inOrder'] else 'OUT OF ORDER'} ({tc['skipped']} skipped), "
            f"g2g p50 {g['p50']} p95 {g['p95']} ms, first frame {t['firstFrameMs']} ms"
        )
    return f"{PROG}: " + "; ".join(parts)


async def run(args, browser, summary):
    await browser.start()
    summary["chromium"] = browser.version
    tabs = browser.tabs = [Tab(browser, 1, args.out)]
    await tabs[0].open(args.url)
    await tabs[0].wait_first_frame(time.monotonic() + FIRST_FRAME_TIMEOUT)
    tabs[0].start = tabs[0].first
    if args.warmup > 0:
        await asyncio.sleep(args.warmup)
        tabs[0].start = await tabs[0].evaluate(LIGHT)
    tabs[0].region_first = await tabs[0].region(args.region)
    window_start = time.monotonic()
    print(
        f"{PROG}: tab 1 shows frames ({tabs[0].first['width']}x{tabs[0].first['height']}), measuring {args.seconds} s",
        file=sys.stderr,
        flush=True,
    )

    async def second_tab():
        await asyncio.sleep(args.second_tab_at)
        tab = Tab(browser, 2, args.out)
        tabs.append(tab)
        await tab.open(args.url)
        await tab.wait_first_frame(time.monotonic() + FIRST_FRAME_TIMEOUT)
        tab.start = tab.first
        tab.region_first = await tab.region(args.region)
        print(f"{PROG}: tab 2 shows frames after {tab.first['firstFrameMs']:.0f} ms", file=sys.stderr, flush=True)
        if args.close_tab_at is not None:
            await asyncio.sleep(max(0, window_start + args.close_tab_at - time.monotonic()))
            tab.end = await tab.evaluate(FULL)
            tab.region_end = await tab.region(args.region)
            await tab.close()
            print(f"{PROG}: tab 2 closed", file=sys.stderr, flush=True)

    helper = asyncio.create_task(second_tab()) if args.second_tab_at is not None else None
    try:
        while (left := window_start + args.seconds - time.monotonic()) > 0:
            await asyncio.sleep(min(1, left))
            for tab in tabs:
                if not tab.closed and tab.session:
                    light = await tab.evaluate(LIGHT)
                    print(
                        f"{PROG}: [{time.monotonic() - window_start:5.1f}] tab {tab.number} {light['status']}, "
                        f"{light['framesShown']} frames",
                        file=sys.stderr,
                        flush=True,
                    )
            if helper and helper.done() and helper.exception():
                raise helper.exception()
        if helper:
            await asyncio.wait_for(helper, FIRST_FRAME_TIMEOUT + DOM_TIMEOUT)
    finally:
        if helper and not helper.done():
            helper.cancel()
    for tab in tabs:
        if tab.end is None and tab.start is not None:
            tab.end = await tab.evaluate(FULL)
            tab.region_end = await tab.region(args.region)
    if args.screenshot:
        await tabs[0].screenshot(args.screenshot)
    summary["tabs"] = [summarize(tab) for tab in tabs if tab.start is not None]
    for tab in tabs:
        if not tab.closed:
            await tab.close()
    return summary


async def main_async(args, browser, summary):
    try:
        async with asyncio.timeout(args.deadline):
            return await run(args, browser, summary)
    except (Failure, TimeoutError) as error:
        # What each page was doing when the run failed, for the summary (bounded, best effort).
        for tab in browser.tabs:
            if tab.session and not tab.closed:
                try:
                    expression = (
                        "window.viewer && {status: viewer.status, counts: viewer.counts, events: viewer.events}"
                    )
                    state = await asyncio.wait_for(tab.evaluate(expression), 3)
                    summary["pages"].append({"tab": tab.number, "pageErrors": tab.page_errors, **(state or {})})
                except (Failure, TimeoutError, OSError):
                    pass
        if isinstance(error, TimeoutError):
            doing = "; ".join(f"tab {p['tab']}: {p.get('status')}" for p in summary["pages"])
            raise Failure(f"deadline of {args.deadline:g} s passed" + (f" ({doing})" if doing else "")) from None
        raise


def main():
    args = parse_arguments()
    browser = Browser(args.chromium, args.out, args.trust_spki)
    summary = {
        "url": args.url,
        "seconds": args.seconds,
        "ok": False,
        "error": None,
        "chromium": None,
        "tabs": [],  # per tab, over its window (see summarize)
        "pages": [],  # on failure: what each page was doing
    }

    def terminate(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, terminate)
    code = 0
    try:
        asyncio.run(main_async(args, browser, summary))
        summary["ok"] = True
        print(one_line(summary["tabs"]), flush=True)
    except (Failure, OSError) as error:
        summary["error"] = str(error)
        code = 1
    except KeyboardInterrupt as error:
        summary["error"] = f"interrupted ({error or 'SIGINT'})"
        code = 1
    except Exception as error:  # a bug or an unforeseen DevTools answer: still one line, and the trace
        summary["error"] = f"{type(error).__name__}: {error}"
        with open(os.path.join(args.out, "traceback.txt"), "w") as file:
            traceback.print_exc(file=file)
        code = 1
    finally:
        browser.stop()
        with open(os.path.join(args.out, "summary.json"), "w") as file:
            json.dump(summary, file, indent=1)
    if code:
        print(f"{PROG}: error: {summary['error']}", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
