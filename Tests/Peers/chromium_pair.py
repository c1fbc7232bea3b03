"""Chromium as the SENDER through a real bottleneck, Chromium as the receiver: GCC's reference run.

    chromium_pair.py --out DIR [--seconds 60] [--schedule 0:3000,20:1000,40:3000] [--settle 5]
        [--queue-bytes N] [--netns rtc-pair-PID] [--codec h264|vp8] [--max-bitrate-kbps 5000]
        [--content-hint detail] [--size 1280x720] [--audio] [--no-bottleneck]

One command: it creates the network namespace (lo only; deleted on every exit), serves
chromium_pair.html on 127.0.0.1 inside it, starts bottleneck.py there (`run --start-on-match`),
and one headless Chromium (flags: ../shared/field-notes.md, plus the fake camera). The page's pcA
sends getUserMedia's fake 30 fps camera at --size (default 1280x720) (H.264 preferred through setCodecPreferences,
VP8 when the sender has no H.264; the encoding's maxBitrate at --max-bitrate-kbps so the encoder
is not the limit) to pcB, which plays it into a <video>. Once both are connected and the first
frame shows, pcA's selected candidate pair names its local port; `udp sport PORT` goes into the
bottleneck's match file and the bottleneck's clock (its schedule) starts. For --seconds, every
second: pcA's outbound-rtp (bytesSent, targetBitrate, retransmittedBytesSent, ...) and the
pair's availableOutgoingBitrate, pcB's inbound-rtp (bytesReceived, framesDecoded, freezeCount,
totalFreezesDuration, framesDropped, jitter buffer, keyFramesDecoded), and the <video>'s
requestVideoFrameCallback gaps (a freeze = no new frame for > 500 ms).

DIR/summary.json (and stdout's last line): codec and encoder, per phase of the schedule the
received and sent rates over the settled part, target and available bitrate, freezes; totals;
the per-second series; and the bottleneck's own summary under "bottleneck". DIR also keeps
bottleneck.json, bottleneck-samples.jsonl, chromium.log and tab1-console.log.

Python 3.11 + `websockets` (out/venv); reuses chromium_viewer.py's Browser and Tab. Run as root.
"""

import argparse
import asyncio
import http.server
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bottleneck  # noqa: E402
from chromium_viewer import Browser, Tab  # noqa: E402
from chromium_viewer import Failure as ViewerFailure  # noqa: E402

PROG = "chromium_pair"
CONNECT_TIMEOUT = 30  # from startPair to connected + first frame
READY_TIMEOUT = 10  # bottleneck.py's "ready" and "start"
FREEZE_MS = 500
FAKE_FLAGS = ["--use-fake-device-for-media-stream=fps=30", "--use-fake-ui-for-media-stream"]


class Failure(Exception):
    pass


def parse_arguments():
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--seconds", type=float, default=60, help="measuring window from the clock start (default 60)")
    p.add_argument("--schedule", default="0:3000,20:1000,40:3000", help="bottleneck schedule SECONDS:KBITPS,...")
    p.add_argument("--settle", type=float, default=5.0, help="seconds left out after each phase start (default 5)")
    p.add_argument("--queue-bytes", type=int, help="bottleneck bfifo limit (default: 250 ms at the top capacity)")
    p.add_argument("--netns", help="name of the namespace to create (default rtc-pair-PID)")
    p.add_argument("--no-bottleneck", action="store_true", help="no shaping (a baseline run)")
    p.add_argument("--codec", choices=("h264", "vp8"), default="h264", help="preferred codec (default h264)")
    p.add_argument("--max-bitrate-kbps", type=int, default=5000, help="the encoding's maxBitrate (default 5000)")
    p.add_argument(
        "--content-hint",
        choices=("", "motion", "detail", "text"),
        default="",
        help="the track's contentHint (default none: a camera)",
    )
    p.add_argument(
        "--degradation",
        choices=("", "balanced", "maintain-framerate", "maintain-resolution"),
        default="",
        help="the sender's degradationPreference (default: Chromium's own)",
    )
    p.add_argument(
        "--size", default="1280x720", help="the camera's WIDTHxHEIGHT asked of getUserMedia (default 1280x720)"
    )
    p.add_argument("--audio", action="store_true", help="also send the fake microphone (Opus)")
    p.add_argument("--fake-video-file", help="a .y4m/.mjpeg for --use-file-for-fake-video-capture")
    p.add_argument("--chromium", default="chromium")
    args = p.parse_args()
    if args.seconds <= 0:
        p.error("--seconds must be positive")
    size = re.fullmatch(r"([1-9][0-9]{1,3})x([1-9][0-9]{1,3})", args.size)
    if not size:
        p.error(f"--size '{args.size}' is not WIDTHxHEIGHT")
    args.width, args.height = int(size.group(1)), int(size.group(2))
    args.netns = args.netns or f"rtc-pair-{os.getpid()}"
    if not args.netns.startswith("rtc-"):
        p.error("--netns must be named rtc-*")
    args.schedule_steps = bottleneck.parse_schedule(args.schedule)
    os.makedirs(args.out, exist_ok=True)
    return args


def serve_page():
    """A tiny http.server on 127.0.0.1 (a secure context for getUserMedia) serving the page."""
    page = open(os.path.join(HERE, "chromium_pair.html"), "rb").read()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path.split("?")[0] not in ("/", "/pair"):
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class BottleneckProcess:
    """bottleneck.py run in the background: its JSON event lines, and its summary at the end.
    A plain subprocess with a reader thread, so an interrupted event loop leaves nothing behind."""

    def __init__(self, args):
        self.args = args
        self.match_file = os.path.join(args.out, "match")
        self.out_file = os.path.join(args.out, "bottleneck.json")
        self.process = None
        self.events = []
        self.ready, self.started, self.ended = threading.Event(), threading.Event(), threading.Event()
        self.start_monotonic = None

    async def start(self):
        if os.path.exists(self.match_file):
            os.unlink(self.match_file)
        argv = [
            sys.executable,
            os.path.join(HERE, "bottleneck.py"),
            "run",
            "--netns",
            self.args.netns,
            "--schedule",
            self.args.schedule,
            "--settle",
            str(self.args.settle),
            "--duration",
            str(self.args.seconds),
            "--match-file",
            self.match_file,
            "--start-on-match",
            "--out",
            self.out_file,
            "--samples",
            os.path.join(self.args.out, "bottleneck-samples.jsonl"),
        ]
        if self.args.queue_bytes:
            argv += ["--queue-bytes", str(self.args.queue_bytes)]
        with open(os.path.join(self.args.out, "bottleneck.log"), "wb") as log:
            self.process = subprocess.Popen(
                argv, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL, text=True, start_new_session=True
            )
        threading.Thread(target=self._read, daemon=True).start()
        await self._wait(
            self.ready, READY_TIMEOUT, f"bottleneck.py did not say ready within {READY_TIMEOUT} s (see bottleneck.log)"
        )

    def _read(self):
        for line in self.process.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            self.events.append(event)
            kind = event.get("event")
            if kind == "ready":
                self.ready.set()
            elif kind == "start":
                self.start_monotonic = event["monotonic"]
                self.started.set()
        self.ended.set()

    async def _wait(self, flag, timeout, message):
        limit = time.monotonic() + timeout
        while not flag.is_set():
            if self.ended.is_set():
                raise Failure("bottleneck.py ended early (see bottleneck.log)")
            if time.monotonic() > limit:
                raise Failure(message)
            await asyncio.sleep(0.02)

    def set_match(self, match):
        tmp = self.match_file + ".tmp"
        with open(tmp, "w") as file:
            file.write(match + "\n")
        os.replace(tmp, self.match_file)

    async def wait_start(self):
        await self._wait(
            self.started, READY_TIMEOUT, "bottleneck.py did not start its clock after the match was written"
        )
        return self.start_monotonic

    async def finish(self, timeout):
        """Waits for its own end (its --duration), else SIGTERM; returns its summary."""
        limit = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < limit:
            await asyncio.sleep(0.1)
        self.stop()
        try:
            return json.load(open(self.out_file))
        except (OSError, ValueError):
            return None

    def stop(self):
        """SIGTERM (it then removes its qdisc and table and writes its summary), SIGKILL after 10 s."""
        if self.process is None or self.process.poll() is not None:
            return
        try:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        except ProcessLookupError:
            pass


def delta(a, b, key, sub=None):
    x = (a.get(sub) or {}) if sub else a
    y = (b.get(sub) or {}) if sub else b
    if key in x and key in y:
        return y[key] - x[key]
    return None


def rate_kbps(a, b, keys, sub):
    """kbit/s between two polls over the sum of keys (bytes) of sub."""
    total = 0
    for key in keys:
        d = delta(a, b, key, sub)
        if d is None:
            return None
        total += d
    dt = b["t"] - a["t"]
    return round(total * 8 / dt / 1000, 1) if dt > 0 else None


def mean(values):
    values = [v for v in values if v is not None]
    return round(sum(values) / len(values), 1) if values else None


def summarize(args, polls, final, offset_ms, t0, bn):
    """polls: [{t (s since the clock start), ...page poll}], final: the last full poll."""
    series = []
    for a, b in itertools.pairwise(polls):
        row = {
            "t": round(b["t"], 2),
            "receivedKbps": rate_kbps(a, b, ("bytesReceived", "headerBytesReceived"), "inbound"),
            "sentKbps": rate_kbps(a, b, ("bytesSent", "headerBytesSent"), "outbound"),
            "retransmittedKbps": rate_kbps(a, b, ("retransmittedBytesSent",), "outbound"),
            "targetKbps": round(b["outbound"]["targetBitrate"] / 1000)
            if (b.get("outbound") or {}).get("targetBitrate") is not None
            else None,
            "availableOutgoingKbps": round(b["pairA"]["availableOutgoingBitrate"] / 1000)
            if (b.get("pairA") or {}).get("availableOutgoingBitrate") is not None
            else None,
            "rttMs": round(b["pairA"]["currentRoundTripTime"] * 1000, 1)
            if (b.get("pairA") or {}).get("currentRoundTripTime") is not None
            else None,
            "fps": (b.get("inbound") or {}).get("framesPerSecond"),
            "size": f"{(b.get('outbound') or {}).get('frameWidth')}x{(b.get('outbound') or {}).get('frameHeight')}",
            "qualityLimitation": (b.get("outbound") or {}).get("qualityLimitationReason"),
            "framesDecoded": delta(a, b, "framesDecoded", "inbound"),
            "packetsLost": delta(a, b, "packetsLost", "inbound"),
        }
        jd, jc = delta(a, b, "jitterBufferDelay", "inbound"), delta(a, b, "jitterBufferEmittedCount", "inbound")
        row["jitterBufferMs"] = round(jd / jc * 1000, 1) if jd is not None and jc else None
        series.append(row)
    # Freezes from the <video>'s frame callbacks, within the window, on the clock's time.
    gaps = [{"t": round((g["at"] + offset_ms) / 1000 - t0, 3), "ms": g["ms"]} for g in final.get("gaps", [])]
    window_gaps = [g for g in gaps if 0 <= g["t"] <= args.seconds]
    end = polls[-1]["t"] if polls else 0
    trailing = None
    if final.get("lastFrameAt") is not None:
        trailing = final["now"] - final["lastFrameAt"]
        if trailing > FREEZE_MS:
            window_gaps.append(
                {"t": round((final["lastFrameAt"] + offset_ms) / 1000 - t0, 3), "ms": round(trailing), "open": True}
            )
    phases = []
    for i, (at, capacity) in enumerate(args.schedule_steps):
        if at >= end:
            break
        until = min(args.schedule_steps[i + 1][0] if i + 1 < len(args.schedule_steps) else end, end)
        settled = [p for p in polls if at + args.settle - 0.5 <= p["t"] <= until + 0.5]
        rows = [s for s in series if at + args.settle < s["t"] <= until + 0.5]
        phase = {"capacityKbps": capacity, "start": at, "end": round(until, 2), "settledFrom": at + args.settle}
        if len(settled) >= 2:
            a, b = settled[0], settled[-1]
            phase["receivedKbps"] = rate_kbps(a, b, ("bytesReceived", "headerBytesReceived"), "inbound")
            phase["sentKbps"] = rate_kbps(a, b, ("bytesSent", "headerBytesSent"), "outbound")
            phase["retransmittedKbps"] = rate_kbps(a, b, ("retransmittedBytesSent",), "outbound")
            phase["packetsLost"] = delta(a, b, "packetsLost", "inbound")
        phase["targetKbpsMean"] = mean([s["targetKbps"] for s in rows])
        phase["availableOutgoingKbpsMean"] = mean([s["availableOutgoingKbps"] for s in rows])
        phase["rttMsMean"] = mean([s["rttMs"] for s in rows])
        phase["jitterBufferMsMean"] = mean([s["jitterBufferMs"] for s in rows])
        in_phase = [g for g in window_gaps if at <= g["t"] < until]
        phase["freezes"] = len(in_phase)
        phase["longestFreezeMs"] = max((g["ms"] for g in in_phase), default=0)
        phases.append(phase)
    first = polls[0] if polls else {}
    last = final
    inbound0, inbound1 = first.get("inbound") or {}, last.get("inbound") or {}
    outbound1 = last.get("outbound") or {}
    summary = {
        "ok": True,
        "seconds": args.seconds,
        "netns": args.netns,
        "codec": last.get("codec"),
        "encoderImplementation": outbound1.get("encoderImplementation"),
        "decoderImplementation": inbound1.get("decoderImplementation"),
        "source": final.get("source"),
        "maxBitrateKbps": args.max_bitrate_kbps,
        "contentHint": args.content_hint or None,
        "degradationPreference": None,
        "path": {"local": final.get("local"), "remote": final.get("remote")},
        "phases": phases,
        "freezes": {
            "count": len(window_gaps),
            "longestMs": max((g["ms"] for g in window_gaps), default=0),
            "list": window_gaps,
            "statsFreezeCount": delta(first, last, "freezeCount", "inbound"),
            "statsTotalFreezesSeconds": round(delta(first, last, "totalFreezesDuration", "inbound") or 0, 3),
        },
        "totals": {
            "framesDecoded": delta(first, last, "framesDecoded", "inbound"),
            "framesDropped": delta(first, last, "framesDropped", "inbound"),
            "keyFramesDecoded": delta(first, last, "keyFramesDecoded", "inbound"),
            "keyFramesDecodedSinceStart": inbound1.get("keyFramesDecoded"),
            "keyFramesEncoded": delta(first, last, "keyFramesEncoded", "outbound"),
            "packetsLost": delta(first, last, "packetsLost", "inbound"),
            "nackCount": delta(first, last, "nackCount", "inbound"),
            "pliCount": delta(first, last, "pliCount", "inbound"),
            "retransmittedBytesSent": delta(first, last, "retransmittedBytesSent", "outbound"),
            "receivedKbps": rate_kbps(first, last, ("bytesReceived", "headerBytesReceived"), "inbound")
            if first and last.get("t")
            else None,
            "jitterBufferMs": round(
                delta(first, last, "jitterBufferDelay", "inbound")
                / delta(first, last, "jitterBufferEmittedCount", "inbound")
                * 1000,
                1,
            )
            if inbound0.get("jitterBufferEmittedCount") is not None
            and delta(first, last, "jitterBufferEmittedCount", "inbound")
            else None,
        },
        # Seconds the encoder sent under 80 % of its own target: then the encoder (content, its
        # rate control), not the congestion control, set the rate.
        "encoderLimitedSeconds": sum(
            1 for s in series if s["targetKbps"] and s["sentKbps"] is not None and s["sentKbps"] < 0.8 * s["targetKbps"]
        ),
        "availableOutgoingKbps": [s["availableOutgoingKbps"] for s in series],
        "targetKbps": [s["targetKbps"] for s in series],
        "series": series,
        "bottleneck": bn,
    }
    return summary


def one_line(s):
    parts = [f"{PROG}: {s['codec']} ({s['encoderImplementation']})"]
    for p in s["phases"]:
        b = None
        if s.get("bottleneck") and s["bottleneck"].get("phases"):
            b = next((x for x in s["bottleneck"]["phases"] if x["start"] == p["start"]), None)
        q = (b or {}).get("queueDelayMs", {})
        parts.append(
            f"{p['capacityKbps']:g}k: rx {p.get('receivedKbps')} kbit/s"
            + (f" util {b['utilisation']} q p50/p95 {q.get('p50')}/{q.get('p95')} ms" if b else "")
            + f" freezes {p['freezes']}"
        )
    parts.append(f"freezes {s['freezes']['count']} longest {s['freezes']['longestMs']} ms")
    return "; ".join(parts)


async def run(args, browser, state):
    server = serve_page()
    state["server"] = server
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    bn = None
    if not args.no_bottleneck:
        bn = state["bottleneck"] = BottleneckProcess(args)
        await bn.start()
    await browser.start()
    state["summary"]["chromium"] = browser.version
    tab = Tab(browser, 1, args.out)
    browser.tabs = [tab]
    await tab.open(url)
    options = {
        "codec": args.codec,
        "maxBitrate": args.max_bitrate_kbps * 1000,
        "contentHint": args.content_hint,
        "degradation": args.degradation,
        "audio": args.audio,
        "width": args.width,
        "height": args.height,
    }
    started = await tab.evaluate(f"startPair({json.dumps(options)})")
    print(
        f"{PROG}: negotiated {started['codec']}"
        + (f" ({started['codecFallback']})" if started.get("codecFallback") else "")
        + f", source {started['source']}",
        file=sys.stderr,
        flush=True,
    )
    limit = time.monotonic() + CONNECT_TIMEOUT
    poll = None
    while time.monotonic() < limit:
        poll = await tab.evaluate("pollPair(false)")
        if poll.get("a") == "connected" and poll.get("frames", 0) > 0 and poll.get("local"):
            break
        await asyncio.sleep(0.1)
    else:
        raise Failure(
            f"no connection and first frame within {CONNECT_TIMEOUT} s "
            f"(pcA {poll and poll.get('a')}, frames {poll and poll.get('frames')})"
        )
    port = poll["local"]["port"]
    print(f"{PROG}: connected, pcA {poll['local']} -> {poll.get('remote')}", file=sys.stderr, flush=True)
    if bn:
        bn.set_match(f"udp sport {port}")
        t0 = await bn.wait_start()
    else:
        t0 = time.monotonic()
    state["t0"] = t0
    polls = []
    offset_ms = None
    k = 0
    while True:
        before = time.monotonic()
        p = await tab.evaluate("pollPair(false)")
        after = time.monotonic()
        p["t"] = round((before + after) / 2 - t0, 3)
        if offset_ms is None:
            offset_ms = (before + after) / 2 * 1000 - p["now"]
        polls.append(p)
        if p.get("local") and p["local"]["port"] != port:  # ICE moved: follow it
            port = p["local"]["port"]
            if bn:
                bn.set_match(f"udp sport {port}")
            print(f"{PROG}: pcA's local port changed to {port}", file=sys.stderr, flush=True)
        if p["t"] >= args.seconds:
            break
        if k % 10 == 0:
            print(
                f"{PROG}: [{p['t']:5.1f}] sent {(p.get('outbound') or {}).get('bytesSent')} B, target "
                f"{(p.get('outbound') or {}).get('targetBitrate')}, available "
                f"{(p.get('pairA') or {}).get('availableOutgoingBitrate')}, frames {p['frames']}",
                file=sys.stderr,
                flush=True,
            )
        k += 1
        await asyncio.sleep(max(0, t0 + k - time.monotonic()))
    final = await tab.evaluate("pollPair(true)")
    final["t"] = polls[-1]["t"]
    with open(os.path.join(args.out, "polls.jsonl"), "w") as file:
        for p in polls:
            file.write(json.dumps(p) + "\n")
    with open(os.path.join(args.out, "offer.sdp"), "w") as file:
        file.write(final.get("sdpA") or "")
    final.pop("sdpA", None)
    summary_bn = await bn.finish(15) if bn else None
    summary = summarize(args, polls, final, offset_ms, t0, summary_bn)
    summary["chromium"] = browser.version
    summary["events"] = final.get("events")
    summary["senderCodecs"] = started.get("senderCodecs")
    summary["codecFallback"] = started.get("codecFallback")
    summary["degradationPreference"] = started.get("degradation")
    state["summary"] = summary
    await tab.close()
    return summary


def main():
    args = parse_arguments()
    if os.geteuid() != 0:
        print(f"{PROG}: needs root (namespaces, tc, nft)", file=sys.stderr)
        return 2
    state = {"summary": {"ok": False, "error": None}, "server": None, "bottleneck": None}

    def terminate(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGINT, terminate)  # also when started with SIGINT ignored (a background job)
    code = 0
    browser = None
    created = False
    try:
        bottleneck.create_netns(args.netns)
        created = True
        bottleneck.enter_netns(args.netns)
        browser = Browser(args.chromium, args.out)
        browser.extra_flags += FAKE_FLAGS
        if args.fake_video_file:
            browser.extra_flags.append(f"--use-file-for-fake-video-capture={os.path.abspath(args.fake_video_file)}")
        deadline = READY_TIMEOUT + 15 + CONNECT_TIMEOUT + args.seconds + 60

        async def bounded():
            async with asyncio.timeout(deadline):
                return await run(args, browser, state)

        summary = asyncio.run(bounded())
        print(one_line(summary), file=sys.stderr, flush=True)
    except (Failure, ViewerFailure, bottleneck.Failure, OSError, TimeoutError) as error:
        state["summary"]["error"] = str(error) or type(error).__name__
        state["summary"]["ok"] = False
        code = 1
    except KeyboardInterrupt as error:
        state["summary"]["error"] = f"interrupted ({error or 'SIGINT'})"
        state["summary"]["ok"] = False
        code = 1
    except Exception as error:
        state["summary"]["error"] = f"{type(error).__name__}: {error}"
        state["summary"]["ok"] = False
        with open(os.path.join(args.out, "traceback.txt"), "w") as file:
            traceback.print_exc(file=file)
        code = 1
    finally:
        if browser is not None:
            browser.stop()
        if state["bottleneck"] is not None:
            state["bottleneck"].stop()
            if state["summary"].get("bottleneck") is None:
                try:
                    state["summary"]["bottleneck"] = json.load(open(state["bottleneck"].out_file))
                except (OSError, ValueError):
                    pass
        if state["server"] is not None:
            state["server"].shutdown()
        if created:
            bottleneck.delete_netns(args.netns)
        with open(os.path.join(args.out, "summary.json"), "w") as file:
            json.dump(state["summary"], file, indent=1)
    if code:
        print(f"{PROG}: error: {state['summary']['error']}", file=sys.stderr, flush=True)
    print(json.dumps({k: v for k, v in state["summary"].items() if k not in ("series",)}), flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
