"""One row of scripts/screen-session-bench.sh (a scripted screen session), and its report.

    screen-session.py run --tool rtc-publish|ffmpeg|gstreamer|chromium --display :N --xvfb-pid PID
        --out DIR --document FILE [--phase-seconds 20] [--warmup 5] [--port 25304] [--size 1280x720]
        [--srtp-key BASE64] [--max-bitrate-kbps 2500] [--chromium BINARY] [-- COMMAND ...]
    screen-session.py report --manifest FILE --doc Docs/benchmarks.md --command TEXT [...]

`run` plays one session on the private X display the bench started and measures the sender:
  - the desktop: two full-screen xterms (DejaVu Sans Mono 10, black on white). The document one
    shows FILE in `less`; the typing one runs `cat >/dev/null` and starts unmapped. The pointer
    rests in the bottom-right corner. Both are fresh for every row.
  - the sender: for rtc-publish, FFmpeg and GStreamer COMMAND (started in DIR, stopped with SIGINT),
    sending to the loopback ports PORT..PORT+3 that scripts/bench-sink.py drains and records
    (--record); for chromium a headed Chromium on the display shares the entire screen with
    getDisplayMedia (picked by --auto-select-desktop-capture-source) and sends H.264 to a second,
    headless Chromium (scripts/screen-session.html in both, the offer and answer relayed over the
    DevTools protocol; Tests/Peers/chromium_viewer.py's Browser and Tab).
  - once it sends: --warmup seconds, then the clock starts (t = 0) and three phases of
    --phase-seconds each follow:
      still:     at t = 0 the document turns a page (`less`: space), then nothing moves;
      typing:    the typing xterm is mapped and focused, and `xdotool type` types prose into it,
                 a word at a time, at a human rate (6 characters a second on average);
      scrolling: the typing xterm is unmapped, and the document scrolls down 8 lines a second
                 (`xdotool key --repeat 8 --repeat-delay 100 Down`, once a second).
  - at each boundary (and at t = 1 s, after which the still phase counts as converged) the
    sender's CPU: utime + stime from /proc of its process and all its descendants (every process
    of the sharing Chromium: browser, GPU, renderer, utilities; not the receiving one), and the X
    server's; the bytes on the wire (the sink's record: every UDP datagram the sender sent, RTP and
    RTCP; Chromium: its transport's bytesSent, so SRTP, RTCP, DTLS and STUN alike); the pictures
    sent (RTP marker bits; Chromium: framesEncoded); rtc-publish's --stats-json counters.
  - the text quality at the end of the still phase: the X server's screen grabbed by ffmpeg
    x11grab 3 s before the phase ends (the reference), and the receiver's last picture 0.5 s
    before it ends: for the RTP rows the recorded stream up to then (SRTP removed with the
    row's key, depacketized to Annex B, decoded by ffmpeg), for Chromium the receiving <video>
    drawn on a canvas (PNG over CDP). Luma PSNR by ffmpeg's psnr filter, both pictures through
    the same RGB -> YUV 4:4:4 conversion: the screen but its rightmost 64 px (the pointer's corner),
    and the text's half (left 640 px).
  DIR/row.json holds the results; DIR keeps the pictures, logs and the raw record.

`report` reads the manifest (one line per row: tool, round, exit status, directory) and writes the
tables between <!-- screen-session-bench:begin --> and <!-- screen-session-bench:end --> in --doc.

Runs under out/venv's Python (websockets, pylibsrtp). Every wait is bounded.
"""

import argparse
import asyncio
import base64
import glob
import http.server
import json
import os
import re
import signal
import struct
import subprocess
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "Tests", "Peers"))

from bench_stats import cell, summary  # noqa: E402

PROG = "screen-session"
TICK = os.sysconf("SC_CLK_TCK")
FONT = ["-fa", "DejaVu Sans Mono", "-fs", "10"]
START_TIMEOUT = 30  # a sender's first packets, Chromium's connection and first frame
STOP_TIMEOUT = 15  # a sender's exit after SIGINT
CONVERGED_AFTER = 1.0  # the still phase counts as converged from this long after the change
SNAPSHOT_BEFORE_END = 0.5  # the still phase's last picture: this long before the phase ends
REFERENCE_BEFORE_END = 3.0  # the screen grabbed from this long before the still phase ends
TYPING_CPS = 6  # characters typed a second, on average: a human rate
TYPING_DELAY_MS = 80  # xdotool type --delay within a word (about 50 ms a character here)
SCROLL_REPEAT, SCROLL_DELAY_MS = 8, 100  # lines per xdotool call, once a second
PHASES = ("still", "typing", "scrolling")
PROSE = (
    "The quarterly report is attached. Revenue grew in every region except the north, where the "
    "new distributor took longer than planned to reach the smaller shops. Costs stayed flat. "
    "Next quarter we expect the north to catch up, and we will hire two more engineers for the "
    "support team, which has been short of people since the spring. Please send comments by "
    "Friday so that the board sees the final version on Monday morning. Thanks to everyone who "
    "helped with the numbers this time; the new spreadsheet saved us days of work. "
) * 4


class Failure(Exception):
    """Ends the row with this one line."""


# ---------------------------------------------------------------------------------------------
# /proc


def read_ticks(pid):
    """utime + stime of one process, in clock ticks; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            fields = file.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


def process_tree(root):
    """root and every descendant, by parent pid."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as file:
                ppid = int(file.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def process_kind(pid):
    """The Chromium process type (browser, renderer, gpu-process, utility NAME, zygote), else the name.
    Chromium rewrites its command line (one string, spaces for NULs), so both forms are read."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            text = file.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "gone"
    kind = re.search(r"--type=(\S+)", text)
    if not kind:
        first = text.split(" ", 1)[0]
        return "browser" if "chromium" in first else os.path.basename(first) or "?"
    if kind.group(1) == "utility":
        sub = re.search(r"--utility-sub-type=(\S+)", text)
        return "utility " + (sub.group(1).rsplit(".", 1)[-1] if sub else "?")
    return kind.group(1)


def tree_ticks(root):
    """{pid: ticks} for root and its descendants."""
    ticks = {}
    for pid in process_tree(root):
        value = read_ticks(pid)
        if value is not None:
            ticks[pid] = value
    return ticks


def ticks_between(before, after):
    """CPU ticks between two tree samples: each process's growth (a new one from zero)."""
    return sum(max(0, value - before.get(pid, 0)) for pid, value in after.items())


# ---------------------------------------------------------------------------------------------
# The desktop: two xterms on the private display, driven with xdotool


class Desktop:
    def __init__(self, display, out, document, width, height):
        self.env = dict(os.environ, DISPLAY=display)
        self.out, self.document = out, document
        self.width, self.height = width, height
        self.processes = []
        self.document_window = self.typing_window = None
        self.typed = 0
        self.scrolled = 0

    def xdo(self, *args, timeout=10):
        result = subprocess.run(
            ["xdotool", *args], env=self.env, capture_output=True, text=True, timeout=timeout, check=False
        )
        if result.returncode != 0:
            raise Failure(f"xdotool {' '.join(args)}: {result.stderr.strip() or result.returncode}")
        return result.stdout

    def xterm(self, title, command):
        log = open(os.path.join(self.out, f"xterm-{title}.log"), "wb")
        process = subprocess.Popen(
            ["xterm", "-title", title, *FONT, "-geometry", "80x24+0+0", "-e", *command],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        self.processes.append(process)
        window = self.xdo("search", "--sync", "--onlyvisible", "--name", f"^{title}$", timeout=15).split()[0]
        self.xdo("windowsize", "--sync", window, str(self.width), str(self.height))
        return window

    def start(self):
        self.document_window = self.xterm("session-document", ["less", "-S", self.document])
        self.typing_window = self.xterm("session-typing", ["sh", "-c", "cat >/dev/null"])
        self.xdo("windowunmap", "--sync", self.typing_window)
        for _ in range(50):
            if not self.visible("session-typing") and self.visible("session-document"):
                break
            time.sleep(0.1)
        else:
            raise Failure("the desktop did not settle: the typing xterm stays mapped or the document is not")
        self.xdo("mousemove", str(self.width - 1), str(self.height - 1))

    def visible(self, title):
        result = subprocess.run(
            ["xdotool", "search", "--onlyvisible", "--name", f"^{title}$"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        return bool(result.stdout.split())

    def turn_page(self):
        self.xdo("windowfocus", "--sync", self.document_window, "key", "space")

    def begin_typing(self):
        self.xdo("windowmap", "--sync", self.typing_window)
        self.xdo("windowfocus", "--sync", self.typing_window)

    async def type_until(self, deadline):
        """Types PROSE a word at a time, TYPING_CPS characters a second on average (each word at
        xdotool's pace, then a pause until the average is back on schedule), until the next word
        would pass the deadline."""
        words = PROSE.split(" ")
        began = time.monotonic()
        column, per_char, index = 0, TYPING_DELAY_MS / 1000, 0
        while index < len(words):
            word = words[index] + " "
            if column + len(word) > 72:
                word = "\n" + word
                column = 0
            column += len(word.lstrip("\n"))
            start = max(time.monotonic(), began + self.typed / TYPING_CPS)
            if start + len(word) * per_char * 1.2 + 0.1 > deadline:
                break
            await asyncio.sleep(start - time.monotonic())
            at = time.monotonic()
            await asyncio.to_thread(self.xdo, "type", "--delay", str(TYPING_DELAY_MS), word)
            per_char = max(per_char, (time.monotonic() - at) / len(word))
            self.typed += len(word)
            index += 1
        await asyncio.sleep(max(0, deadline - time.monotonic()))

    def begin_scrolling(self):
        self.xdo("windowunmap", "--sync", self.typing_window)
        self.xdo("windowfocus", "--sync", self.document_window)

    async def scroll_until(self, deadline):
        """SCROLL_REPEAT lines down once a second (a line about every 115 ms, then a pause)."""
        while time.monotonic() + 1.0 <= deadline:
            began = time.monotonic()
            await asyncio.to_thread(
                self.xdo, "key", "--repeat", str(SCROLL_REPEAT), "--repeat-delay", str(SCROLL_DELAY_MS), "Down"
            )
            self.scrolled += SCROLL_REPEAT
            await asyncio.sleep(max(0, began + 1.0 - time.monotonic()))
        await asyncio.sleep(max(0, deadline - time.monotonic()))

    def grab(self, path):
        """The screen as the X server has it, pointer drawn as the senders draw it."""
        width, height = self.width, self.height
        result = subprocess.run(
            ["ffmpeg", "-nostdin", "-loglevel", "error", "-f", "x11grab", "-draw_mouse", "1"]
            + ["-video_size", f"{width}x{height}", "-i", self.env["DISPLAY"], "-frames:v", "1", "-y", path],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
        if result.returncode != 0 or not os.path.exists(path):
            raise Failure(f"grabbing the screen failed: {result.stderr.strip()[-200:]}")
        if os.path.getsize(path) < 20000:  # a page of text is about 60 kB as PNG, a blank screen 5
            raise Failure(f"the document is not on the screen at the end of the still phase (see {path})")

    def windows_on_screen(self, *searches):
        """Visible windows found by any of the xdotool searches (e.g. ("--class", "chromium")) that
        overlap the screen: [(id, x, y)]."""
        ids = []
        for search in searches:
            result = subprocess.run(
                ["xdotool", "search", "--onlyvisible", *search],
                env=self.env,
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
            ids += [w for w in result.stdout.split() if w not in ids]
        found = []
        for window in ids:
            try:
                shell = self.xdo("getwindowgeometry", "--shell", window)
            except Failure:
                continue
            values = dict(line.split("=", 1) for line in shell.split() if "=" in line)
            x, y, w, h = (int(values.get(k, 0)) for k in ("X", "Y", "WIDTH", "HEIGHT"))
            if x < self.width and y < self.height and x + w > 0 and y + h > 0:
                found.append((window, x, y))
        return found

    def stop(self):
        for process in self.processes:
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                    process.wait(5)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    try:
                        os.killpg(process.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass


# ---------------------------------------------------------------------------------------------
# The RTP senders: rtc-publish, FFmpeg, GStreamer


class RtpSender:
    """COMMAND in DIR, sending to the ports bench-sink.py drains and records."""

    def __init__(self, args):
        self.args = args
        self.process = self.sink = None
        self.record = os.path.join(args.out, "wire.bin")

    async def start(self):
        args = self.args
        ports = ",".join(str(args.port + i) for i in range(4))
        sink_log = open(os.path.join(args.out, "sink.log"), "w")
        self.sink = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "bench-sink.py"), "--ports", ports]
            + ["--out", os.path.join(args.out, "sink.json"), "--record", self.record],
            stdout=subprocess.PIPE,
            stderr=sink_log,
            text=True,
            start_new_session=True,
        )
        sink_log.close()
        ready = await asyncio.wait_for(asyncio.to_thread(self.sink.stdout.readline), 10)
        if ready.strip() != "ready":
            raise Failure(f"bench-sink.py did not start: {open(os.path.join(args.out, 'sink.log')).read()[-300:]}")
        stdout = open(os.path.join(args.out, "stdout.txt"), "wb")
        stderr = open(os.path.join(args.out, "stderr.txt"), "wb")
        self.process = subprocess.Popen(
            args.command, cwd=args.out, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, start_new_session=True
        )
        stdout.close()
        stderr.close()
        await asyncio.sleep(1.5)
        if self.process.poll() is not None:
            raise Failure(f"the sender exited with {self.process.returncode} at start: {self.stderr_tail()}")

    def stderr_tail(self):
        try:
            return " ".join(open(os.path.join(self.args.out, "stderr.txt"), errors="replace").read().split())[-300:]
        except OSError:
            return ""

    @property
    def pid(self):
        return self.process.pid

    async def counters(self):
        """rtc-publish's --stats-json totals as they stand (written once a second)."""
        path = os.path.join(self.args.out, "stats.jsonl")
        last = None
        try:
            with open(path) as file:
                for line in file:
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(record, dict) and "totals" in record:
                        last = record
        except OSError:
            return None
        if not last:
            return None
        totals = last["totals"]
        keys = (
            "framesIn",
            "framesOut",
            "framesStill",
            "refreshes",
            "idleRepeats",
            "keyFrames",
            "refreshWaves",
            "videoBytes",
            "quantizerSum",
            "framesGoverned",
        )
        return {"time": last.get("time"), "cadence": totals.get("cadence"), **{k: totals.get(k) for k in keys}}

    async def stop(self):
        """SIGINT (rtc-publish leaves cleanly, ffmpeg ends, gst-launch -e sends EOS), then SIGKILL."""
        rc = None
        if self.process is not None:
            if self.process.poll() is None:
                try:
                    self.process.send_signal(signal.SIGINT)
                except ProcessLookupError:
                    pass
            try:
                rc = await asyncio.to_thread(self.process.wait, STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                rc = await asyncio.to_thread(self.process.wait)
        if self.sink is not None and self.sink.poll() is None:
            await asyncio.sleep(0.3)  # the last datagrams land
            self.sink.send_signal(signal.SIGTERM)
            try:
                await asyncio.to_thread(self.sink.wait, 10)
            except subprocess.TimeoutExpired:
                self.sink.kill()
        return rc

    def kill(self):
        for process in (self.process, self.sink):
            if process is not None and process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


def read_record(path):
    """bench-sink.py's --record: [(monotonic time, port, datagram)]."""
    packets = []
    with open(path, "rb") as file:
        data = file.read()
    offset = 0
    while offset + 12 <= len(data):
        at, port, length = struct.unpack_from("<dHH", data, offset)
        offset += 12
        packets.append((at, port, data[offset : offset + length]))
        offset += length
    return packets


def srtp_key(args):
    """The row's SRTP master key + salt: given, or from the SDP file the sender wrote in DIR."""
    if args.srtp_key:
        return base64.b64decode(args.srtp_key)
    for path in sorted(glob.glob(os.path.join(args.out, "*.sdp"))):
        match = re.search(r"a=crypto:\d+ AES_CM_128_HMAC_SHA1_80 inline:([A-Za-z0-9+/=]+)", open(path).read())
        if match:
            return base64.b64decode(match.group(1))
    raise Failure("no SRTP key: none given and no SDP file with a=crypto in the row's directory")


def sprop_sets(out):
    """SPS and PPS from an SDP's sprop-parameter-sets (FFmpeg's peer.sdp), as Annex B."""
    for path in sorted(glob.glob(os.path.join(out, "*.sdp"))):
        match = re.search(r"sprop-parameter-sets=([A-Za-z0-9+/=,]+)", open(path).read())
        if match:
            return b"".join(b"\0\0\0\1" + base64.b64decode(p) for p in match.group(1).split(",") if p)
    return b""


def annex_b(rtp_packets):
    """H.264 RTP (RFC 6184: single NAL units, STAP-A, FU-A) -> Annex B, whole access units only.
    Returns (bytes, access units)."""
    out = bytearray()
    complete, units = 0, 0
    for packet in rtp_packets:
        if len(packet) < 12 or packet[0] >> 6 != 2:
            continue
        header = 12 + 4 * (packet[0] & 0x0F)
        if packet[0] & 0x10:
            header += 4 + 4 * struct.unpack_from("!H", packet, header + 2)[0]
        end = len(packet) - (packet[-1] if packet[0] & 0x20 else 0)
        payload = packet[header:end]
        if not payload:
            continue
        kind = payload[0] & 0x1F
        if 1 <= kind <= 23:
            out += b"\0\0\0\1" + payload
        elif kind == 24:  # STAP-A
            at = 1
            while at + 2 <= len(payload):
                size = struct.unpack_from("!H", payload, at)[0]
                out += b"\0\0\0\1" + payload[at + 2 : at + 2 + size]
                at += 2 + size
        elif kind == 28 and len(payload) >= 2:  # FU-A
            if payload[1] & 0x80:
                out += b"\0\0\0\1" + bytes([(payload[0] & 0xE0) | (payload[1] & 0x1F)])
            out += payload[2:]
        if packet[1] & 0x80:  # the access unit's last packet
            complete, units = len(out), units + 1
    return bytes(out[:complete]), units


def decode_last_picture(args, packets, until, path):
    """The last picture a receiver of the recorded stream had at `until`, as a PNG."""
    from pylibsrtp import Policy, Session

    policy = Policy(
        key=srtp_key(args), ssrc_type=Policy.SSRC_ANY_INBOUND, srtp_profile=Policy.SRTP_PROFILE_AES128_CM_SHA1_80
    )
    session = Session(policy=policy)
    clear, failed = [], 0
    for at, port, data in packets:
        if port != args.port or at > until or len(data) < 12 or data[1] & 0x7F != 96:
            continue
        try:
            clear.append(session.unprotect(data))
        except Exception:  # pylibsrtp.Error: authentication or replay
            failed += 1
    stream, units = annex_b(clear)
    stream = sprop_sets(args.out) + stream
    h264 = os.path.join(args.out, "still.h264")
    with open(h264, "wb") as file:
        file.write(stream)
    bmp = os.path.join(args.out, "still-last.bmp")
    result = subprocess.run(
        ["ffmpeg", "-nostdin", "-loglevel", "error", "-threads", "1", "-f", "h264", "-i", h264]
        + ["-f", "image2", "-update", "1", "-c:v", "bmp", "-y", bmp],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if result.returncode != 0 or not os.path.exists(bmp):
        raise Failure(f"decoding the recorded stream failed: {result.stderr.strip()[-300:]}")
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", bmp, "-y", path], check=True, timeout=60)
    os.unlink(bmp)
    return {"accessUnits": units, "srtpFailures": failed, "decodeErrors": result.stderr.strip()[-300:] or None}


# ---------------------------------------------------------------------------------------------
# Chromium: a headed sharer on the display, a headless receiver


class ChromiumSender:
    def __init__(self, args, desktop):
        self.args, self.desktop = args, desktop
        self.server = self.sender = self.receiver = None
        self.send_tab = self.receive_tab = None
        self.info = {}

    def serve(self):
        page = open(os.path.join(HERE, "screen-session.html"), "rb").read()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(page)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    async def start(self):
        from chromium_viewer import Browser, Tab

        args = self.args
        origin = self.serve()
        for name in ("sender", "receiver"):
            os.makedirs(os.path.join(args.out, name), exist_ok=True)
        self.sender = Browser(args.chromium, os.path.join(args.out, "sender"))
        # Headed on the bench's display, its windows right of the screen (outside the capture).
        self.sender.flags = [f for f in self.sender.flags if not f.startswith("--headless")]
        self.sender.extra_flags += [
            "--auto-select-desktop-capture-source=Entire screen",
            f"--window-position={self.desktop.width + 100},0",
            "--window-size=800,600",
        ]
        self.sender.env = dict(os.environ, DISPLAY=args.display)
        self.receiver = Browser(args.chromium, os.path.join(args.out, "receiver"))
        await self.sender.start()
        await self.receiver.start()
        self.info["chromium"] = self.sender.version
        for browser in (self.sender, self.receiver):
            # Loopback candidates appear only with camera/microphone permission (field notes).
            await browser.call(
                "Browser.grantPermissions", {"origin": origin, "permissions": ["videoCapture", "audioCapture"]}
            )
        self.send_tab = Tab(self.sender, 1, os.path.join(args.out, "sender"))
        self.sender.tabs = [self.send_tab]
        await self.send_tab.open(origin + "/")
        self.receive_tab = Tab(self.receiver, 1, os.path.join(args.out, "receiver"))
        self.receiver.tabs = [self.receive_tab]
        await self.receive_tab.open(origin + "/")
        options = {"maxBitrate": args.max_bitrate_kbps * 1000, "frameRate": 30}
        reply = await self.sender.call(
            "Runtime.evaluate",
            {
                "expression": f"startSender({json.dumps(options)})",
                "returnByValue": True,
                "awaitPromise": True,
                "userGesture": True,
            },
            self.send_tab.session,
            timeout=START_TIMEOUT,
        )
        if "exceptionDetails" in reply:
            details = reply["exceptionDetails"]
            raise Failure(f"getDisplayMedia: {details.get('exception', {}).get('description') or details.get('text')}")
        offer = reply["result"]["value"]
        self.info["source"] = offer["source"]
        answer = await self.receive_tab.evaluate(f"startReceiver({json.dumps(offer['sdp'])})")
        self.info["sender"] = await self.send_tab.evaluate(
            f"finishSender({json.dumps(answer)}, {args.max_bitrate_kbps * 1000})"
        )
        limit = time.monotonic() + START_TIMEOUT
        while True:
            polled = await self.receive_tab.evaluate("pollSession()")
            if polled.get("state") == "connected" and polled.get("frames", 0) > 0:
                break
            if time.monotonic() > limit:
                raise Failure(f"Chromium's pair: no connection and first frame in {START_TIMEOUT} s ({polled})")
            await asyncio.sleep(0.2)
        await asyncio.sleep(1)
        self.clear_screen()

    def clear_screen(self):
        """Moves every Chromium window on the captured screen (the "… is sharing your screen" bar)
        off it, and gives the keyboard back to the document (Chromium takes it at start)."""
        moved = []
        # Its browser windows have WM_CLASS chromium; the bar has none, only its name.
        searches = (("--class", "chromium"), ("--name", "is sharing your screen"))
        for window, x, y in self.desktop.windows_on_screen(*searches):
            self.desktop.xdo("windowmove", "--sync", window, str(self.desktop.width + 100), str(self.desktop.height))
            moved.append({"window": window, "x": x, "y": y})
        self.info.setdefault("movedWindows", []).extend(moved)
        self.desktop.xdo("windowfocus", "--sync", self.desktop.document_window)

    @property
    def pid(self):
        return self.sender.process.pid

    async def counters(self):
        sent = await self.send_tab.evaluate("pollSession()")
        received = await self.receive_tab.evaluate("pollSession()")
        outbound, inbound = sent.get("outbound") or {}, received.get("inbound") or {}
        return {
            "bytesSent": (sent.get("transport") or {}).get("bytesSent"),
            "packetsSent": (sent.get("transport") or {}).get("packetsSent"),
            "framesEncoded": outbound.get("framesEncoded"),
            "keyFramesEncoded": outbound.get("keyFramesEncoded"),
            "qpSum": outbound.get("qpSum"),
            "totalEncodeTime": outbound.get("totalEncodeTime"),
            "frameSize": f"{outbound.get('frameWidth')}x{outbound.get('frameHeight')}",
            "encoderImplementation": outbound.get("encoderImplementation"),
            "qualityLimitationReason": outbound.get("qualityLimitationReason"),
            "targetBitrate": outbound.get("targetBitrate"),
            "codec": sent.get("codec"),
            "framesDecoded": inbound.get("framesDecoded"),
            "bytesReceived": inbound.get("bytesReceived"),
        }

    async def keep_picture(self):
        """The receiving <video>'s picture now, kept in the page (the PNG comes later)."""
        kept = await self.receive_tab.evaluate("keepPicture()")
        if not kept:
            raise Failure("the receiving <video> has no picture to draw")
        return {"width": kept["width"], "height": kept["height"]}

    async def save_picture(self, path):
        shot = await self.receive_tab.evaluate("keptPicture()")
        with open(path, "wb") as file:
            file.write(base64.b64decode(shot["png"].split(",", 1)[1]))

    def process_kinds(self):
        return {pid: process_kind(pid) for pid in process_tree(self.pid)}

    async def stop(self):
        self.kill()
        return 0

    def kill(self):
        for browser in (self.sender, self.receiver):
            if browser is not None:
                browser.stop()
        if self.server is not None:
            self.server.shutdown()
            self.server = None


# ---------------------------------------------------------------------------------------------
# One row


def luma_psnr(picture, reference, out, crop=None):
    """ffmpeg's psnr filter, luma: both pictures through the same RGB -> YUV 4:4:4 conversion; a
    picture of another size is scaled (bicubic) to the reference's first."""
    size = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height"]
        + ["-of", "csv=p=0", reference],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout.strip()
    width, height = (int(v) for v in size.split(","))
    trim = f",crop={crop}" if crop else ""
    graph = f"[0:v]scale={width}:{height}:flags=bicubic,format=yuv444p{trim}[a];[1:v]format=yuv444p{trim}[b];[a][b]psnr"
    result = subprocess.run(
        ["ffmpeg", "-nostdin", "-hide_banner", "-i", picture, "-i", reference, "-lavfi", graph, "-f", "null", "-"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    match = re.search(r"PSNR y:(\S+)", result.stderr)
    if not match:
        raise Failure(f"no PSNR from ffmpeg: {result.stderr.strip()[-200:]}")
    return 99.0 if match.group(1) == "inf" else float(match.group(1))


class Sampler:
    """CPU of the sender's process tree and of the X server, at the moments asked for, and once a
    second in the background (the still phase's series)."""

    def __init__(self, root, xvfb_pid):
        self.root, self.xvfb_pid = root, xvfb_pid
        self.series = []
        self.stopping = threading.Event()
        self.thread = None

    def now(self):
        return {"t": time.monotonic(), "tree": tree_ticks(self.root), "xvfb": read_ticks(self.xvfb_pid) or 0}

    def start(self, t0):
        def loop():
            k = 0
            while not self.stopping.is_set():
                sample = self.now()
                self.series.append({"t": round(sample["t"] - t0, 3), "cpu": sum(sample["tree"].values())})
                k += 1
                self.stopping.wait(max(0, t0 + k - time.monotonic()))

        self.thread = threading.Thread(target=loop, daemon=True)
        self.thread.start()

    def stop(self):
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(5)


async def sleep_until(moment):
    await asyncio.sleep(max(0, moment - time.monotonic()))


async def play(args, row, desktop, result):
    phase = args.phase_seconds
    await row.start()
    await asyncio.sleep(args.warmup)
    if isinstance(row, ChromiumSender):
        row.clear_screen()  # a window Chromium mapped since
    sampler = Sampler(row.pid, args.xvfb_pid)
    marks = {}

    async def mark(name):
        sample = sampler.now()
        sample["counters"] = await row.counters()
        marks[name] = sample

    t0 = time.monotonic()
    sampler.start(t0)
    await mark("start")
    desktop.turn_page()
    marks["start"]["change"] = time.monotonic()
    await sleep_until(t0 + CONVERGED_AFTER)
    await mark("converged")
    await sleep_until(t0 + phase - REFERENCE_BEFORE_END)

    def grab():
        desktop.grab(os.path.join(args.out, "still-screen.png"))
        return time.monotonic() - t0

    grabbing = asyncio.create_task(asyncio.to_thread(grab))  # beside the clock: it may take a while
    await sleep_until(t0 + phase - SNAPSHOT_BEFORE_END)
    result["snapshotAt"] = round(time.monotonic() - t0, 3)
    if isinstance(row, ChromiumSender):
        result["picture"] = await row.keep_picture()
    await sleep_until(t0 + phase)
    await mark("still")
    result["referenceGrabbedBy"] = round(await grabbing, 3)
    if result["referenceGrabbedBy"] > phase:  # the typing would be in it
        raise Failure(f"the screen's grab took until {result['referenceGrabbedBy']} s, past the still phase")
    desktop.begin_typing()
    await desktop.type_until(t0 + 2 * phase)
    await mark("typing")
    desktop.begin_scrolling()
    await desktop.scroll_until(t0 + 3 * phase)
    await mark("scrolling")
    sampler.stop()
    if isinstance(row, ChromiumSender):
        await row.save_picture(os.path.join(args.out, "still-picture.png"))
        kinds = row.process_kinds()
        by_kind = {}
        for pid, ticks in ticks_by_pid(marks["start"]["tree"], marks["scrolling"]["tree"]).items():
            kind = kinds.get(pid, "gone")
            by_kind[kind] = by_kind.get(kind, 0) + ticks
        result["cpuByProcess"] = {k: round(v / TICK / (3 * phase) * 100, 2) for k, v in sorted(by_kind.items())}
        result["chromium"] = row.info
    result["rc"] = await row.stop()
    return t0, marks, sampler.series


def ticks_by_pid(before, after):
    return {pid: max(0, value - before.get(pid, 0)) for pid, value in after.items()}


def summarize(args, t0, marks, series, result):
    phase = args.phase_seconds
    bounds = {
        "still": ("start", "still"),
        "converged": ("converged", "still"),
        "typing": ("still", "typing"),
        "scrolling": ("typing", "scrolling"),
        "session": ("start", "scrolling"),
    }
    packets = read_record(os.path.join(args.out, "wire.bin")) if args.tool != "chromium" else None
    phases = {}
    for name, (a, b) in bounds.items():
        first, last = marks[a], marks[b]
        seconds = last["t"] - first["t"]
        entry = {
            "seconds": round(seconds, 3),
            "cpuPercent": round(ticks_between(first["tree"], last["tree"]) / TICK / seconds * 100, 2),
            "xvfbPercent": round((last["xvfb"] - first["xvfb"]) / TICK / seconds * 100, 2),
        }
        c0, c1 = first.get("counters") or {}, last.get("counters") or {}
        if packets is not None:
            inside = [(port, data) for at, port, data in packets if first["t"] < at <= last["t"]]
            entry["bytes"] = sum(len(data) for _, data in inside)
            entry["pictures"] = sum(
                1 for port, data in inside if port == args.port and len(data) > 1 and data[1] & 0x80
            )
        else:
            if c0.get("bytesSent") is not None and c1.get("bytesSent") is not None:
                entry["bytes"] = c1["bytesSent"] - c0["bytesSent"]
            if c0.get("framesEncoded") is not None and c1.get("framesEncoded") is not None:
                entry["pictures"] = c1["framesEncoded"] - c0["framesEncoded"]
                if c1.get("qpSum") is not None and entry["pictures"]:
                    entry["meanQP"] = round((c1["qpSum"] - c0["qpSum"]) / entry["pictures"], 1)
        if "bytes" in entry:
            entry["kbps"] = round(entry["bytes"] * 8 / seconds / 1000, 2)
        if args.tool == "rtc-publish" and c0 and c1:
            stats = {k: c1[k] - c0[k] for k in c1 if isinstance(c1.get(k), int) and isinstance(c0.get(k), int)}
            if stats.get("framesOut"):
                stats["meanQP"] = round(stats.get("quantizerSum", 0) / stats["framesOut"], 1)
            entry["stats"] = stats
            entry["cadenceAtEnd"] = c1.get("cadence")
        phases[name] = entry
    result["phases"] = phases
    result["changeAt"] = round(marks["start"]["change"] - t0, 3)
    if args.tool == "chromium":
        result["counters"] = marks["scrolling"].get("counters")
    # The still phase second by second: what went out and the sender's CPU.
    seconds = []
    for k in range(int(phase)):
        lo, hi = t0 + k, t0 + k + 1
        entry = {"second": k}
        if packets is not None:
            inside = [data for at, _, data in packets if lo < at <= hi]
            entry["kbps"] = round(sum(len(d) for d in inside) * 8 / 1000, 2)
        a = next((s for s in series if s["t"] >= k - 0.05), None)
        b = next((s for s in series if s["t"] >= k + 1 - 0.05), None)
        if a and b and b["t"] > a["t"]:
            entry["cpuPercent"] = round((b["cpu"] - a["cpu"]) / TICK / (b["t"] - a["t"]) * 100, 1)
        seconds.append(entry)
    result["stillSeconds"] = seconds
    # Quiet: from when on every whole second of the still phase stayed within 10 kbit/s.
    if packets is not None:
        quiet = None
        for entry in reversed(seconds):
            if entry["kbps"] > 10:
                break
            quiet = entry["second"]
        result["quietFromSecond"] = quiet
    # Text quality.
    reference = os.path.join(args.out, "still-screen.png")
    picture = os.path.join(args.out, "still-picture.png")
    if packets is not None:
        result["decode"] = decode_last_picture(args, packets, t0 + result["snapshotAt"], picture)
    probe = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height", "-of", "csv=p=0"]
        + [picture],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    result["pictureSize"] = probe.stdout.strip().replace(",", "x")
    # The pointer rests in the bottom-right corner, and each sender draws it its own way (GStreamer's
    # differs from x11grab's by 25 dB there): the rightmost 64 px, white page otherwise, are left out.
    result["psnr"] = luma_psnr(picture, reference, args.out, crop=f"{args.width - 64}:{args.height}:0:0")
    result["psnrText"] = luma_psnr(picture, reference, args.out, crop=f"640:{args.height}:0:0")


async def run_row(args):
    result = {"tool": args.tool, "ok": False, "phaseSeconds": args.phase_seconds, "warmup": args.warmup}
    desktop = Desktop(args.display, args.out, args.document, args.width, args.height)
    row = None
    try:
        desktop.start()
        row = ChromiumSender(args, desktop) if args.tool == "chromium" else RtpSender(args)
        deadline = START_TIMEOUT * 3 + args.warmup + 3 * args.phase_seconds + 60
        async with asyncio.timeout(deadline):
            t0, marks, series = await play(args, row, desktop, result)
        result["typedCharacters"] = desktop.typed
        result["scrolledLines"] = desktop.scrolled
        # ffmpeg ends with 255 after a SIGINT ("received signal 2"), its normal way out of a live input.
        if args.tool != "chromium" and result["rc"] not in (0, None) and (args.tool, result["rc"]) != ("ffmpeg", 255):
            raise Failure(f"the sender exited with {result['rc']}: {row.stderr_tail()}")
        summarize(args, t0, marks, series, result)
        result["ok"] = True
    except (Failure, TimeoutError, OSError, subprocess.SubprocessError) as error:
        result["error"] = str(error) or type(error).__name__
    except Exception as error:  # anything else: the traceback in DIR
        result["error"] = f"{type(error).__name__}: {error}"
        with open(os.path.join(args.out, "traceback.txt"), "w") as file:
            traceback.print_exc(file=file)
    finally:
        if row is not None:
            row.kill()
        desktop.stop()
    with open(os.path.join(args.out, "row.json"), "w") as file:
        json.dump(result, file, indent=1)
    return result


def run_main(args):
    size = re.fullmatch(r"([1-9][0-9]{2,3})x([1-9][0-9]{2,3})", args.size)
    if not size:
        print(f"{PROG}: --size '{args.size}' is not WIDTHxHEIGHT", file=sys.stderr)
        return 2
    args.width, args.height = int(size.group(1)), int(size.group(2))
    if args.tool != "chromium" and not args.command:
        print(f"{PROG}: --tool {args.tool} needs the sender's command after --", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)

    def terminate(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, terminate)
    result = asyncio.run(run_row(args))
    line = f"{PROG}: {args.tool}: "
    if not result["ok"]:
        print(line + f"failed: {result.get('error')}", file=sys.stderr)
        return 1
    parts = []
    for name in ("still", "converged", "typing", "scrolling", "session"):
        p = result["phases"][name]
        parts.append(f"{name} {p['cpuPercent']:.1f} % CPU {p.get('kbps', 0):.1f} kbit/s")
    print(line + "; ".join(parts) + f"; still PSNR {result['psnr']:.2f} dB", flush=True)
    return 0


# ---------------------------------------------------------------------------------------------
# The report

NAMES = {
    "rtc-publish": "rtc-publish --video x11",
    "ffmpeg": "FFmpeg x11grab + libx264",
    "gstreamer": "GStreamer ximagesrc + x264enc",
    "chromium": "Chromium getDisplayMedia (H.264)",
}
STILL_CPU_TARGET, STILL_KBPS_TARGET, CPU_RATIO_TARGET, BYTES_RATIO_TARGET = 1.0, 10.0, 0.5, 0.7


def quiet_seconds(row):
    """The converged part's whole seconds split into those within the kbit/s target and the rest."""
    converged = [e for e in row.get("stillSeconds", []) if e["second"] >= CONVERGED_AFTER and "kbps" in e]
    quiet = [e for e in converged if e["kbps"] <= STILL_KBPS_TARGET]
    loud = [e for e in converged if e["kbps"] > STILL_KBPS_TARGET]
    if not converged:
        return ""

    def mean(entries, key):
        values = [e.get(key) for e in entries if e.get(key) is not None]
        return sum(values) / len(values) if values else 0

    text = (
        f"Of the converged part's {len(converged)} whole seconds, {len(quiet)} stayed within "
        f"{STILL_KBPS_TARGET:g} kbit/s (mean {mean(quiet, 'kbps'):.2f} kbit/s, {mean(quiet, 'cpuPercent'):.1f} % "
        "of a core)"
    )
    if loud:
        kilobytes = sum(e["kbps"] for e in loud) / 8
        text += (
            f"; the other {len(loud)} (seconds {', '.join(str(e['second']) for e in loud)}) carried "
            f"{kilobytes:.0f} kB at {mean(loud, 'cpuPercent'):.1f} % of a core on average"
        )
    quiet_from = row.get("quietFromSecond")
    return text + (f"; every second from second {quiet_from} on stayed within it." if quiet_from is not None else ".")


def report_main(args):
    rows = []
    with open(args.manifest) as handle:
        for line in handle:
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 4:
                continue
            tool, run, rc, directory = fields
            try:
                row = json.load(open(os.path.join(directory, "row.json")))
            except (OSError, ValueError):
                row = {"tool": tool, "ok": False, "error": f"no row.json (exit {rc})"}
            row["run"], row["dir"] = int(run), directory
            rows.append(row)
    tools = [t for t in NAMES if any(r["tool"] == t for r in rows)]
    runs = max((r["run"] for r in rows), default=0)
    good = {t: [r for r in rows if r["tool"] == t and r.get("ok")] for t in tools}
    notes = [
        f"{NAMES[r['tool']]} round {r['run']} failed: {r.get('error') or 'no message'}" for r in rows if not r.get("ok")
    ]

    def stat(tool, path, digits=2):
        values = []
        for r in good.get(tool, []):
            value = r
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            values.append(value)
        return summary(values)

    def show(tool, path, digits=2):
        return cell(stat(tool, path), digits, missing="–")

    secs = args.phase_seconds
    out = ["### A scripted screen session: still, typing, scrolling (issue 37)", ""]
    out.append(f"Measured {args.date} on {args.machine}; load average {args.load} (before -> after). {args.shared}  ")
    out.append(f"Versions: {args.versions}.")
    out.append("")
    if runs == 1:
        out.append(
            "**One round** (BENCH_RUNS=1, the default here): no ranges; a cell is one measurement, and "
            "on this shared machine a second run can move the CPU figures by 10 % or more."
        )
        out.append("")
    out.append(
        f"The session, the same for every row and played once per row: a private Xvfb {args.size}x24 "
        "with two full-screen xterms (DejaVu Sans Mono 10, black on white): a long text (four licence "
        "texts) in `less`, and a terminal running `cat` that starts unmapped. After the sender has sent "
        f"for {args.warmup:g} s, the clock starts: **still** ({secs} s): the document turns a page at "
        f"0 s (`less`: space) and nothing moves after it; **typing** ({secs} s): the terminal is "
        "mapped and prose is typed into it a word at a time (`xdotool type --delay "
        f"{TYPING_DELAY_MS}` within a word, {TYPING_CPS} characters a second on average); **scrolling** "
        f"({secs} s): the terminal is unmapped and the document scrolls down 8 lines a second (`xdotool key --repeat 8 "
        "--repeat-delay 100 Down` once a second). The pointer rests in the bottom-right corner."
    )
    out.append("")
    out.append(
        f"The senders, at {args.size} and 30 fps, pointer drawn, 2500 kbit/s: rtc-publish `--video x11` "
        f"(content hint `detail`, its default for a screen) to its preview (SDES: an intra-refresh wave "
        f"every 60 pictures while the screen moves, every 10 s while it is still; Docs/cadence.md); "
        f"FFmpeg `x11grab` and GStreamer `ximagesrc` (use-damage=false) with libx264 as in "
        f"capture-bench: {args.preset}, {args.threads} thread(s), tune=zerolatency, constrained "
        "baseline, VBV 2500k/1500k, key frame every 60, no scene cut (rtc-publish opens the same x264 "
        "without adaptive quantization and psy-rd for screen content; the peers keep x264's defaults); "
        "these three send RTP (MTU 1200) under SRTP AES_CM_128_HMAC_SHA1_80 to loopback ports that "
        "scripts/bench-sink.py drains and records. Chromium: a headed Chromium on the same display "
        "shares the entire screen with `getDisplayMedia` (`--auto-select-desktop-capture-source="
        '"Entire screen"`, its windows moved off the screen), H.264 first by setCodecPreferences, '
        "maxBitrate 2500 kbit/s, to a second, headless Chromium on this host (WebRTC: ICE, DTLS-SRTP)."
    )
    out.append("")
    out.append(
        "Measured per phase: **CPU** = utime + stime from /proc of the sender's processes over the "
        "phase, in % of one core (Chromium: every process of the sharing browser: the browser process "
        "that grabs the screen, the renderer that encodes, the GPU process and the utilities; the "
        "receiving browser is not counted, as the sink is not for the others); **X server** = Xvfb's "
        "own CPU over the same time (its share of the grabs, plus the xterms' drawing, which is the "
        "same in every row); **kbit/s** = every UDP payload byte the sender sent in the phase (RTP and "
        "RTCP at the sink; Chromium: its transport's bytesSent, so SRTP, RTCP, DTLS and STUN alike); "
        "**pictures** = RTP marker bits at the sink (Chromium: framesEncoded). **Converged** = the "
        f"still phase from {CONVERGED_AFTER:g} s after the page turn to its end. **Text PSNR** = luma "
        "PSNR (ffmpeg's psnr filter, both pictures through the same RGB -> YUV 4:4:4 conversion) of "
        f"the receiver's picture {SNAPSHOT_BEFORE_END:g} s before the still phase ends against the X "
        f"server's screen grabbed (x11grab, pointer drawn) {REFERENCE_BEFORE_END:g} s before it ends: "
        "for the RTP rows the recorded stream up to then, SRTP removed with the row's key, "
        "depacketized and decoded by ffmpeg; for Chromium the receiving `<video>` drawn on a canvas. "
        "The screen but its rightmost 64 px (where the pointer rests: each sender draws it its own way), "
        "and in brackets the left 640 px, where the text is. "
        + ("Medians, with the range over rounds in brackets." if runs > 1 else "")
    )
    out.append("")

    out.append(f"#### Still ({secs} s; converged: its last {secs - CONVERGED_AFTER:g} s)")
    out.append("")
    out.append(
        "| row | CPU % | kbit/s | pictures | converged CPU % | converged kbit/s | converged pictures "
        "| X server CPU % | text PSNR dB (text half) |"
    )
    out.append("|---|---|---|---|---|---|---|---|---|")
    for tool in tools:
        if not good[tool]:
            out.append(f"| {NAMES[tool]} | failed | | | | | | | |")
            continue
        out.append(
            f"| {NAMES[tool]} | {show(tool, ('phases', 'still', 'cpuPercent'))} "
            f"| {show(tool, ('phases', 'still', 'kbps'), 1)} | {show(tool, ('phases', 'still', 'pictures'), 0)} "
            f"| {show(tool, ('phases', 'converged', 'cpuPercent'))} "
            f"| {show(tool, ('phases', 'converged', 'kbps'), 2)} "
            f"| {show(tool, ('phases', 'converged', 'pictures'), 0)} "
            f"| {show(tool, ('phases', 'still', 'xvfbPercent'), 1)} "
            f"| {show(tool, ('psnr',))} ({show(tool, ('psnrText',))}) |"
        )
    out.append("")
    for name, title in (("typing", "Typing"), ("scrolling", "Scrolling"), ("session", "Whole session")):
        seconds = secs * (3 if name == "session" else 1)
        out.append(f"#### {title} ({seconds} s)")
        out.append("")
        extra = " rtc-publish's CPU and bytes over this row's |" if name == "session" else ""
        out.append(f"| row | CPU % | kbit/s | pictures | X server CPU % |{extra}")
        out.append("|---|---|---|---|---|" + ("---|" if extra else ""))
        for tool in tools:
            if not good[tool]:
                out.append(f"| {NAMES[tool]} | failed | | | |" + (" |" if extra else ""))
                continue
            line = (
                f"| {NAMES[tool]} | {show(tool, ('phases', name, 'cpuPercent'))} "
                f"| {show(tool, ('phases', name, 'kbps'), 1)} | {show(tool, ('phases', name, 'pictures'), 0)} "
                f"| {show(tool, ('phases', name, 'xvfbPercent'), 1)} |"
            )
            if extra:
                ours, theirs = (
                    stat("rtc-publish", ("phases", name, "cpuPercent")),
                    stat(tool, ("phases", name, "cpuPercent")),
                )
                ob, tb = stat("rtc-publish", ("phases", name, "bytes")), stat(tool, ("phases", name, "bytes"))
                if tool == "rtc-publish" or not (ours and theirs and ob and tb):
                    line += " |"
                else:
                    cpu_ratio = ours["median"] / theirs["median"] if theirs["median"] else float("inf")
                    bytes_ratio = ob["median"] / tb["median"] if tb["median"] else float("inf")
                    line += f" {cpu_ratio:.2f}, {bytes_ratio:.2f} |"
            out.append(line)
        out.append("")

    # rtc-publish's still phase, in detail.
    ours = good.get("rtc-publish") or []
    if ours:
        r = ours[0]
        still, converged = r["phases"]["still"], r["phases"]["converged"]
        s = still.get("stats") or {}
        c = converged.get("stats") or {}
        per_second = ", ".join(f"{e['kbps']:g}" for e in r.get("stillSeconds", []))
        cpu_second = ", ".join(f"{e.get('cpuPercent', 0):g}" for e in r.get("stillSeconds", []))
        out.append(
            f"rtc-publish's still phase (round {r['run']}): {still.get('pictures')} pictures sent "
            f"({still.get('bytes')} bytes), {converged.get('pictures')} of them in the converged part "
            f"({converged.get('bytes')} bytes). Its --stats-json counters over the phase (written once a "
            f"second, so each boundary is up to 1 s late): {s.get('framesOut')} encoded, "
            f"{s.get('refreshes')} refreshes, {s.get('idleRepeats')} idle repeats, {s.get('framesStill')} "
            f"grabs neither converted nor encoded, {s.get('refreshWaves')} refresh wave(s), "
            f"{s.get('keyFrames')} key frame(s), mean QP {s.get('meanQP')}; in the converged part "
            f"{c.get('framesOut')} encoded ({c.get('refreshes')} refreshes, {c.get('idleRepeats')} idle "
            f"repeats, {c.get('refreshWaves')} wave(s)); cadence at the phase's end: "
            f"{still.get('cadenceAtEnd')}. kbit/s in each second after the page turn: {per_second}. "
            f"CPU % of a core in each second: {cpu_second}. " + quiet_seconds(r)
        )
        out.append("")
    chromium = good.get("chromium") or []
    if chromium:
        r = chromium[0]
        info, counters = r.get("chromium") or {}, r.get("counters") or {}
        source = info.get("source") or {}
        qps = ", ".join(
            f"{name} {r['phases'][name].get('meanQP')}" for name in ("still", "converged", "typing", "scrolling")
        )
        out.append(
            f"Chromium (round {r['run']}, {info.get('chromium')}): {counters.get('codec')} by "
            f"{counters.get('encoderImplementation')}, source {source.get('width')}x{source.get('height')} "
            f"{source.get('displaySurface')}, sent {counters.get('frameSize')}, degradationPreference "
            f"{(info.get('sender') or {}).get('degradationPreference') or 'unset'}, quality limitation at the end "
            f"{counters.get('qualityLimitationReason')}, targetBitrate at the end "
            f"{round((counters.get('targetBitrate') or 0) / 1000)} kbit/s; mean QP per phase: {qps}. Its CPU over the "
            "session by process, % of a core: "
            + ", ".join(f"{k} {v:g}" for k, v in (r.get("cpuByProcess") or {}).items())
            + f". The picture compared: {r.get('pictureSize')}."
        )
        out.append("")
    typed = [r.get("typedCharacters") for r in rows if r.get("ok")]
    scrolled = [r.get("scrolledLines") for r in rows if r.get("ok")]
    if typed:
        out.append(
            f"Input per row: {min(typed)}–{max(typed)} characters typed, {min(scrolled)}–{max(scrolled)} "
            "lines scrolled."
        )
        out.append("")

    # Targets.
    targets = []
    if ours:
        cpu = stat("rtc-publish", ("phases", "converged", "cpuPercent"))
        kbps = stat("rtc-publish", ("phases", "converged", "kbps"))
        targets.append(
            (
                f"still, converged (from {CONVERGED_AFTER:g} s after the last change): CPU ≤ {STILL_CPU_TARGET:g} % "
                "of a core",
                f"{cpu['median']:.2f} %",
                "met" if cpu["median"] <= STILL_CPU_TARGET else "not met",
            )
        )
        targets.append(
            (
                f"still, converged: ≤ {STILL_KBPS_TARGET:g} kbit/s",
                f"{kbps['median']:.2f} kbit/s",
                "met" if kbps["median"] <= STILL_KBPS_TARGET else "not met",
            )
        )
        ours_cpu = stat("rtc-publish", ("phases", "session", "cpuPercent"))
        ratios = {}
        for tool in tools:
            theirs = stat(tool, ("phases", "session", "cpuPercent"))
            if tool != "rtc-publish" and theirs and theirs["median"]:
                ratios[tool] = ours_cpu["median"] / theirs["median"]
        if ratios:
            worst = max(ratios, key=ratios.get)
            met = all(v <= CPU_RATIO_TARGET for v in ratios.values()) and len(ratios) == len(tools) - 1
            targets.append(
                (
                    f"whole session CPU ≤ {CPU_RATIO_TARGET:g} × every peer's",
                    ", ".join(f"{NAMES[t].split(' ')[0]} {v:.3f}" for t, v in ratios.items())
                    + f" (highest: {NAMES[worst].split(' ')[0]})",
                    "met" if met else "not met",
                )
            )
        else:
            targets.append((f"whole session CPU ≤ {CPU_RATIO_TARGET:g} × every peer's", "n/a", "not measured"))
        theirs_bytes = stat("chromium", ("phases", "session", "bytes")) if "chromium" in good else None
        ours_bytes = stat("rtc-publish", ("phases", "session", "bytes"))
        if theirs_bytes and ours_bytes and good.get("chromium"):
            ratio = ours_bytes["median"] / theirs_bytes["median"]
            our_psnr, their_psnr = stat("rtc-publish", ("psnr",)), stat("chromium", ("psnr",))
            equal = our_psnr["median"] >= their_psnr["median"]
            targets.append(
                (
                    f"session bytes ≤ {BYTES_RATIO_TARGET:g} × Chromium's at equal or better text PSNR",
                    f"{ratio:.3f} × at {our_psnr['median']:.2f} dB against {their_psnr['median']:.2f} dB",
                    "met" if ratio <= BYTES_RATIO_TARGET and equal else "not met",
                )
            )
        else:
            targets.append(
                (
                    f"session bytes ≤ {BYTES_RATIO_TARGET:g} × Chromium's at equal or better text PSNR",
                    "n/a",
                    "not measured",
                )
            )
    out.append("Targets (issue 37; stated, not enforced: timing never fails the script):")
    out.append("")
    out.append("| target | measured | |")
    out.append("|---|---|---|")
    for name, value, verdict in targets:
        out.append(f"| {name} | {value} | {verdict} |")
    out.append("")
    if notes:
        out.extend(f"- {note}" for note in notes)
        out.append("")
    if args.commands and os.path.exists(args.commands):
        shown = [line.rstrip("\n") for line in open(args.commands) if line.strip() and not line.startswith("#")]
        if shown:
            out.append("The senders' commands (first round):")
            out.append("")
            out.append("```")
            out.extend(shown)
            out.append("```")
            out.append("")
    out.append(
        f"Command: `{args.command}`, {args.date} (out/screen-session-bench: per row its row.json, the "
        "pictures compared, the sender's logs and stats, the sink's record of every datagram)."
    )
    text = "\n".join(out)
    print()
    print(text)
    mark = "screen-session-bench"
    section = "\n".join(
        [
            f"<!-- {mark}:begin -->",
            "<!-- Written by scripts/screen-session-bench.sh; edits inside these markers are overwritten. -->",
            text,
            f"<!-- {mark}:end -->",
        ]
    )
    try:
        existing = open(args.doc).read()
    except OSError:
        existing = ""
    pattern = re.compile(rf"<!-- {re.escape(mark)}:begin -->.*?<!-- {re.escape(mark)}:end -->", re.S)
    if pattern.search(existing):
        updated = pattern.sub(lambda _: section, existing, count=1)
    else:
        updated = existing.rstrip("\n") + "\n\n" + section + "\n"
    with open(args.doc, "w") as handle:
        handle.write(updated)
    print(f"\n{PROG}: tables written to {args.doc}")
    return 0


def main():
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    run = sub.add_parser("run", help="one row")
    run.add_argument("--tool", required=True, choices=("rtc-publish", "ffmpeg", "gstreamer", "chromium"))
    run.add_argument("--display", required=True)
    run.add_argument("--xvfb-pid", type=int, required=True)
    run.add_argument("--out", required=True)
    run.add_argument("--document", required=True)
    run.add_argument("--phase-seconds", type=float, default=20)
    run.add_argument("--warmup", type=float, default=5)
    run.add_argument("--port", type=int, default=25304)
    run.add_argument("--size", default="1280x720")
    run.add_argument("--srtp-key", help="base64 master key + salt (30 bytes) of the FFmpeg/GStreamer rows")
    run.add_argument("--max-bitrate-kbps", type=int, default=2500)
    run.add_argument("--chromium", default="/usr/lib/chromium/chromium")
    run.add_argument("command", nargs=argparse.REMAINDER, help="-- the sender's command (RTP rows)")
    report = sub.add_parser("report", help="the tables")
    report.add_argument("--manifest", required=True)
    report.add_argument("--doc", required=True)
    report.add_argument("--command", required=True)
    report.add_argument("--commands", help="the senders' commands, to list")
    report.add_argument("--date", default="")
    report.add_argument("--machine", default="")
    report.add_argument("--load", default="")
    report.add_argument("--versions", default="")
    report.add_argument("--shared", default="")
    report.add_argument("--size", default="1280x720")
    report.add_argument("--preset", default="veryfast")
    report.add_argument("--threads", default="1")
    report.add_argument("--warmup", type=float, default=5)
    report.add_argument("--phase-seconds", type=float, default=20)
    args = parser.parse_args()
    if args.what == "run":
        if args.command and args.command[0] == "--":
            args.command = args.command[1:]
        return run_main(args)
    args.phase_seconds = (
        int(args.phase_seconds) if args.phase_seconds == int(args.phase_seconds) else args.phase_seconds
    )
    return report_main(args)


if __name__ == "__main__":
    sys.exit(main())
