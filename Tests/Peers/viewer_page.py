"""What the browser harnesses of rtc-signal's viewer page share (chromium_viewer.py, firefox_viewer.py).

Each harness supplies a *browser* (how to start, drive and stop it) and its *tabs*; this module has
the rest: the command line, the JavaScript that reads the page's `window.viewer` (Signaling/ViewerPage),
the measuring run (tab 1's window from its first frame, an optional second tab), the per-tab
summary and its one line, and `main`, which writes DIR/summary.json whatever happens.

A browser has `NAME` ("chromium", "firefox"), `version` (after `start`), `tabs`, `FRAMES_FROM`
("playbackQuality": the `<video>`'s own counters count frames; "callbacks": they stay 0, the
page's requestVideoFrameCallback counts them), and the methods `async start()`, `new_tab(number)`
and `stop()` (kills it, whatever happened; never raises). A tab is a `PageTab` with `async
open(url)`, `async evaluate(expression)` (the value, JSON-like), `async screenshot(path)` and
`async close()`, and `is_open` while it can be evaluated.

Standard library only.
"""

import argparse
import asyncio
import itertools
import json
import os
import signal
import sys
import time
import traceback

DOM_TIMEOUT = 15  # from navigate to DOMContentLoaded
FIRST_FRAME_TIMEOUT = 30  # from navigate to the page's first video frame
ERROR_GRACE = 2  # seconds the page may stay in its `error` state before the wait gives up
FREEZE_MS = 500  # no new frame for longer than this while playing is a freeze
VIEWPORT = (1280, 800)

# One call per poll: small numbers only (no lists), cheap enough every second.
LIGHT = """(() => {
  const v = document.querySelector("video"), w = window.viewer, o = document.getElementById("overlay");
  const q = v && v.getVideoPlaybackQuality ? v.getVideoPlaybackQuality() : null;
  // A new source (another session) restarts the <video>'s counters; the page keeps the old ones.
  const b = (w && w.playbackBase) || { totalVideoFrames: 0, droppedVideoFrames: 0, currentTime: 0 };
  return { now: performance.now(), currentTime: v ? b.currentTime + v.currentTime : null, paused: v ? v.paused : null,
    totalVideoFrames: q ? b.totalVideoFrames + q.totalVideoFrames : null,
    droppedVideoFrames: q ? b.droppedVideoFrames + q.droppedVideoFrames : null,
    state: w ? w.state : null, status: w ? w.status : null, framesShown: w ? w.framesShown : 0,
    firstFrameMs: w ? w.firstFrameMs : null, counts: w ? w.counts : null, stats: w ? w.stats : null,
    lastTimecode: w && w.timecodes.length ? w.timecodes[w.timecodes.length - 1] : null,
    width: w ? w.width : 0, height: w ? w.height : 0, overlay: o ? o.textContent : null };
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
# When the run fails: what the page was doing (its state, why it stopped, what it said).
FAILED = """(() => {
  const w = window.viewer, o = document.getElementById("overlay");
  return w ? { state: w.state, status: w.status, counts: w.counts, stats: w.stats, events: w.events,
    overlay: o ? o.textContent : null } : null;
})()"""


class Failure(Exception):
    """Ends the run non-zero with this one line."""


def parse_arguments(prog, description, start_timeout, browser_options):
    """The options every harness takes; `browser_options(parser)` adds the browser's own."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
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
    browser_options(parser)
    args = parser.parse_args()

    def bad(message):
        print(f"{prog}: {message}", file=sys.stderr)
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
        waits = start_timeout + 2 * (DOM_TIMEOUT + FIRST_FRAME_TIMEOUT)
        args.deadline = waits + args.warmup + args.seconds + 30
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as error:
        bad(f"cannot create --out '{args.out}': {error}")
    return args


class PageTab:
    """What every tab does with the page, through its browser's `evaluate`."""

    def __init__(self, number):
        self.number = number
        self.page_errors = []
        self.opened_at = None  # time.monotonic() at navigate
        self.first = self.start = self.end = None  # snapshots: first frame, window start and end
        self.region_first = self.region_end = None  # mean RGB of --region then
        self.closed = False

    @property
    def is_open(self):
        raise NotImplementedError

    async def wait_first_frame(self, deadline):
        """Polls until the page shows its first frame; the snapshot then opens the tab's window.
        A page that stays in `error` (a refused subscribe, a refused join) ends the wait early."""
        last = None
        error_since = None
        while time.monotonic() < deadline:
            last = await self.evaluate(LIGHT)
            if last and last["framesShown"] and last["counts"] and last["counts"]["frames"]:
                self.first = last
                return
            if last and last["state"] == "error":
                error_since = error_since or time.monotonic()
                if time.monotonic() - error_since >= ERROR_GRACE:
                    raise Failure(f"tab {self.number}: the page stopped before its first frame: {last['status']}")
            else:
                error_since = None
            await asyncio.sleep(0.1)
        state = last["status"] if last else "no page state"
        raise Failure(f"tab {self.number}: no video frame within {FIRST_FRAME_TIMEOUT} s of opening ({state})")

    async def region(self, region):
        return await self.evaluate(f"{REGION}({','.join(str(v) for v in region)})") if region else None


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
        "videoCodec": s1.get("videoCodec"),
        "overlay": end.get("overlay"),
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
            # When each began, ms into the window: a freeze to place against the sender's log.
            "gapsOver500MsAtMs": [round(a - start["now"]) for a, b in gaps],
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


def one_line(prog, tabs, frames_from="playbackQuality"):
    """The run in one line; frames as `frames_from` counts them (see the module's docstring)."""
    parts = []
    for t in tabs:
        g, f, q = t["glassToGlassMs"], t["frames"], t["playbackQuality"]
        tc = t["timecodes"]
        if frames_from == "playbackQuality":
            counted = f"{q['framesInWindow']} frames {q['fps']} fps {q['droppedInWindow']} dropped"
        else:
            counted = f"{f['callbacks']} frame callbacks {f['fps']} fps"
        codec = f" {t['videoCodec'].removeprefix('video/')}" if t.get("videoCodec") else ""
        parts.append(
            f"tab{t['tab']} {t['state']}{codec} {t['width']}x{t['height']} {counted}, "
            f"{f['freezes']} freezes (max gap {f['maxGapMs']} ms), "
            f"audio {'yes' if t['audio']['arriving'] else 'NO'}, timecodes {tc['count']} "
            f"{'in order' if tc['inOrder'] else 'OUT OF ORDER'} ({tc['skipped']} skipped), "
            f"g2g p50 {g['p50']} p95 {g['p95']} ms, first frame {t['firstFrameMs']} ms"
        )
    return f"{prog}: " + "; ".join(parts)


async def run(prog, args, browser, summary):
    """Tab 1 from its first frame for --warmup + --seconds, a second tab if asked; the summary."""
    started = time.monotonic()
    await browser.start()
    summary["startSeconds"] = round(time.monotonic() - started, 3)
    summary["browser"] = summary[browser.NAME] = browser.version
    tabs = browser.tabs
    tabs.append(browser.new_tab(1))
    await tabs[0].open(args.url)
    await tabs[0].wait_first_frame(time.monotonic() + FIRST_FRAME_TIMEOUT)
    tabs[0].start = tabs[0].first
    if args.warmup > 0:
        await asyncio.sleep(args.warmup)
        tabs[0].start = await tabs[0].evaluate(LIGHT)
    tabs[0].region_first = await tabs[0].region(args.region)
    window_start = time.monotonic()
    print(
        f"{prog}: tab 1 shows frames ({tabs[0].first['width']}x{tabs[0].first['height']}), measuring {args.seconds} s",
        file=sys.stderr,
        flush=True,
    )

    async def second_tab():
        await asyncio.sleep(args.second_tab_at)
        tab = browser.new_tab(2)
        tabs.append(tab)
        await tab.open(args.url)
        await tab.wait_first_frame(time.monotonic() + FIRST_FRAME_TIMEOUT)
        tab.start = tab.first
        tab.region_first = await tab.region(args.region)
        print(f"{prog}: tab 2 shows frames after {tab.first['firstFrameMs']:.0f} ms", file=sys.stderr, flush=True)
        if args.close_tab_at is not None:
            await asyncio.sleep(max(0, window_start + args.close_tab_at - time.monotonic()))
            tab.end = await tab.evaluate(FULL)
            tab.region_end = await tab.region(args.region)
            await tab.close()
            print(f"{prog}: tab 2 closed", file=sys.stderr, flush=True)

    helper = asyncio.create_task(second_tab()) if args.second_tab_at is not None else None
    try:
        while (left := window_start + args.seconds - time.monotonic()) > 0:
            await asyncio.sleep(min(1, left))
            for tab in tabs:
                if tab.is_open:
                    light = await tab.evaluate(LIGHT)
                    print(
                        f"{prog}: [{time.monotonic() - window_start:5.1f}] tab {tab.number} {light['status']}, "
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


async def run_bounded(prog, args, browser, summary):
    """`run` under --deadline; on failure, what each page was doing goes into summary["pages"]."""
    try:
        async with asyncio.timeout(args.deadline):
            return await run(prog, args, browser, summary)
    except (Failure, TimeoutError) as error:
        # Bounded, best effort: a page that cannot answer adds nothing.
        for tab in browser.tabs:
            if tab.is_open:
                try:
                    state = await asyncio.wait_for(tab.evaluate(FAILED), 3)
                    summary["pages"].append({"tab": tab.number, "pageErrors": tab.page_errors, **(state or {})})
                except (Failure, TimeoutError, OSError):
                    pass
        if isinstance(error, TimeoutError):
            doing = "; ".join(f"tab {p['tab']}: {p.get('status')}" for p in summary["pages"])
            raise Failure(f"deadline of {args.deadline:g} s passed" + (f" ({doing})" if doing else "")) from None
        raise


def main(prog, args, browser):
    """Runs, prints one line (the summary's, or the error's), writes DIR/summary.json, stops the
    browser on every exit; returns the exit status."""
    summary = {
        "url": args.url,
        "seconds": args.seconds,
        "ok": False,
        "error": None,
        "browser": None,  # name and version
        browser.NAME: None,  # the same, under the browser's own key
        "startSeconds": None,  # from starting the browser to its protocol answering
        "tabs": [],  # per tab, over its window (see summarize)
        "pages": [],  # on failure: what each page was doing
    }

    def terminate(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, terminate)
    code = 0
    try:
        asyncio.run(run_bounded(prog, args, browser, summary))
        summary["ok"] = True
        print(one_line(prog, summary["tabs"], browser.FRAMES_FROM), flush=True)
    except (Failure, OSError) as error:
        summary["error"] = str(error)
        code = 1
    except KeyboardInterrupt as error:
        summary["error"] = f"interrupted ({error or 'SIGINT'})"
        code = 1
    except Exception as error:  # a bug or an unforeseen protocol answer: still one line, and the trace
        summary["error"] = f"{type(error).__name__}: {error}"
        with open(os.path.join(args.out, "traceback.txt"), "w") as file:
            traceback.print_exc(file=file)
        code = 1
    finally:
        browser.stop()
        with open(os.path.join(args.out, "summary.json"), "w") as file:
            json.dump(summary, file, indent=1)
    if code:
        print(f"{prog}: error: {summary['error']}", flush=True)
    return code
