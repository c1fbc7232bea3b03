"""What the two WebRTC subscriber peers share: arguments, the rtc-signal client, the recording
of what was received (DIR/summary.json, DIR/video.gray, DIR/offer.sdp, DIR/answer.sdp), and the
run itself, from joining the room to leaving it, under one global deadline.

Standard library only: aiortc_subscriber.py runs it in out/venv, webrtcbin_subscriber.py in the
system Python (python3-gi). Each script supplies a *peer* (see `Peer` below) that makes the
offer, applies the answer and hands decoded frames to the `Recorder`.

Protocol: Docs/signaling.md (rtc-signal version 1, newline-delimited JSON over TCP).
"""

import argparse
import asyncio
import itertools
import json
import os
import re
import sys
import threading
import time
import urllib.error
import urllib.request

# Room names and uids: 1-64 of [A-Za-z0-9_-] (Docs/signaling.md, "Names").
NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

# Bounded waits, in seconds. Every await of the run has one of these or the global deadline.
CONNECT_TIMEOUT = 5  # TCP connection to rtc-signal
REPLY_TIMEOUT = 5  # any reply but the subscribe's
GATHER_TIMEOUT = 10  # ICE gathering of our offer
ANSWER_TIMEOUT = 10  # from subscribe sent to subscribed (or error) received
APPLY_TIMEOUT = 5  # setting the answer as remote description
CONNECTED_TIMEOUT = 15  # from the answer applied to ICE + DTLS connected
FIRST_FRAME_TIMEOUT = 10  # from connected to the first decoded video frame
CLOSE_TIMEOUT = 5  # closing the peer connection at the end


class Failure(Exception):
    """A failure with a message fit for one line: the run ends non-zero with it."""


def parse_arguments(peer_name):
    """Parses and checks the command line; bad arguments exit 2 with one line, before anything."""
    parser = argparse.ArgumentParser(
        prog=peer_name,
        description="A WebRTC subscriber in an rtc-signal room: offers recvonly audio + video, "
        "receives the publisher's answer and records what it decodes.",
    )
    parser.add_argument("--signal", required=True, metavar="HOST:PORT", help="rtc-signal address")
    parser.add_argument("--room", required=True)
    parser.add_argument("--uid", required=True, help="this subscriber's uid")
    parser.add_argument("--publisher", required=True, metavar="UID", help="the publisher's uid")
    parser.add_argument("--token", help="join token, when the server has a secret")
    parser.add_argument(
        "--seconds",
        type=float,
        required=True,
        help="how long to receive, counted from the first decoded video frame",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="output directory (created)")
    parser.add_argument(
        "--ice-address",
        default="127.0.0.1",
        metavar="ADDR",
        help="the only local address ICE gathers host candidates on (default 127.0.0.1)",
    )
    parser.add_argument(
        "--send-pli-at",
        type=float,
        metavar="SECONDS",
        help="send one RTCP PLI this long after the first decoded video frame",
    )
    parser.add_argument(
        "--kill-after",
        type=float,
        metavar="SECONDS",
        help="this long after the first decoded video frame, write the summary and exit at once "
        "(os._exit: no BYE, no DTLS close, no unsubscribe, no leave)",
    )
    parser.add_argument(
        "--drop-media-after",
        type=float,
        metavar="SECONDS",
        help="this long after the first decoded video frame, close the ICE sockets (no DTLS close, "
        "signaling stays up) and wait for the publisher to end the session (consent freshness)",
    )
    parser.add_argument(
        "--wrong-fingerprint",
        action="store_true",
        help="send the offer with its a=fingerprint digests changed: the publisher must refuse DTLS",
    )
    parser.add_argument(
        "--expect-reject",
        action="store_true",
        help="subscribe at once (without waiting for the publisher's stream) and exit 0 when the "
        "reply is an error, printing it; an answer is then a failure",
    )
    parser.add_argument(
        "--wait-publisher",
        type=float,
        default=20,
        metavar="SECONDS",
        help="how long to wait for the publisher's stream to be published (default 20)",
    )
    parser.add_argument(
        "--whep",
        metavar="URL",
        help="subscribe over WHEP instead of the room's protocol: POST the offer to URL "
        "(http://HOST:PORT/rooms/ROOM/whep/PUBLISHER), DELETE the session at the end",
    )
    parser.add_argument(
        "--video-codec",
        choices=("h264", "vp8", "vp9"),
        help="offer only this video codec (and its RTX), as a browser without H.264 does; "
        "default: the stack's own list",
    )
    parser.add_argument(
        "--first-frame-timeout",
        type=float,
        default=FIRST_FRAME_TIMEOUT,
        metavar="SECONDS",
        help=f"how long, once connected, to wait for the first decoded video frame (default {FIRST_FRAME_TIMEOUT})",
    )
    parser.add_argument(
        "--deadline",
        type=float,
        metavar="SECONDS",
        help="global deadline for the whole run; default: every step's own limit added up",
    )
    args = parser.parse_args()

    def bad(message):
        print(f"{peer_name}: {message}", file=sys.stderr)
        sys.exit(2)

    host, _, port = args.signal.rpartition(":")
    if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        bad(f"--signal '{args.signal}' is not HOST:PORT")
    args.signal_host, args.signal_port = host.strip("[]"), int(port)
    for option, value in (("--room", args.room), ("--uid", args.uid), ("--publisher", args.publisher)):
        if not NAME.match(value):
            bad(f"{option} '{value}' is not 1-64 characters of A-Z a-z 0-9 _ -")
    if args.seconds <= 0:
        bad("--seconds must be positive")
    if args.first_frame_timeout <= 0:
        bad("--first-frame-timeout must be positive")
    for option, value in (("--send-pli-at", args.send_pli_at), ("--kill-after", args.kill_after)):
        if value is not None and value < 0:
            bad(f"{option} must not be negative")
    if args.deadline is None:
        args.deadline = (
            CONNECT_TIMEOUT
            + 2 * REPLY_TIMEOUT
            + (0 if args.expect_reject else args.wait_publisher)
            + GATHER_TIMEOUT
            + ANSWER_TIMEOUT
            + APPLY_TIMEOUT
            + CONNECTED_TIMEOUT
            + args.first_frame_timeout
            + args.seconds
            + CLOSE_TIMEOUT
            + 3 * REPLY_TIMEOUT
        )
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as error:
        bad(f"cannot create --out '{args.out}': {error}")
    return args


class Recorder:
    """Everything the run records. Thread-safe: GStreamer hands frames over on its own threads.

    summary.json (written at the end, also on errors and at the global deadline):
      peer, versions, room, uid, publisher, ok, error, rejected {code, message} or null,
      endReason, killed, seconds (requested), times {event: seconds since start},
      states [{t, what, state}], pli [{t, sent, detail}],
      video {frames, width, height, grayFile, timestampSource, frameTimes [{rtp, arrival,
             width, height}], packets, packetsLost, sequence, keyFrames, payloadBytes,
             payloadBytesBySecond},
      audio {frames, sampleRate, channels, samples, seconds, packets, packetsLost, payloadBytes,
             payloadBytesBySecond}
    video.gray: each decoded picture's luma plane, width*height bytes, no padding, in decoding
    order; a picture's size is its entry in frameTimes (the stream may change size).
    frameTimes[i].rtp: RTP time of picture i in 90 kHz ticks since the first decoded picture
    (timestamps unwrapped); arrival: seconds since the start of the run when it was decoded.
    payloadBytes: the RTP payload bytes of every packet of the kind that arrived (RTX ones too),
    and payloadBytesBySecond[i] those that arrived in second i of the run (peers that see
    packets: aiortc; null for the others): the viewer's received rate, whatever it decoded.
    """

    def __init__(self, peer_name, args):
        self.start = time.monotonic()
        self.lock = threading.Lock()
        self.out = args.out
        self.summary = {
            "peer": peer_name,
            "versions": {},
            "room": args.room,
            "uid": args.uid,
            "publisher": args.publisher,
            "ok": False,
            "error": None,
            "rejected": None,
            "endReason": None,
            "killed": False,
            "seconds": args.seconds,
            # time.monotonic() at start (CLOCK_MONOTONIC, seconds): the origin of every time
            # below, so a test can put arrivals on the sender's clock (same host).
            "monotonicStart": self.start,
            "times": {},
            "states": [],
            "pli": [],
            "video": {
                "frames": 0,
                "width": None,
                "height": None,
                "grayFile": "video.gray",
                "timestampSource": None,
                "frameTimes": [],
                "packets": None,
                "packetsLost": None,
                "sequence": None,
                "keyFrames": [],
                "payloadBytes": None,
                "payloadBytesBySecond": None,
            },
            "audio": {
                "frames": 0,
                "sampleRate": None,
                "channels": None,
                "samples": 0,
                "seconds": 0.0,
                "packets": None,
                "packetsLost": None,
                "payloadBytes": None,
                "payloadBytesBySecond": None,
            },
        }
        self.first_video_frame = threading.Event()
        self._first_rtp = None
        self._last_rtp = None
        self._rtp_unwrapped = 0
        # Video RTP sequence numbers, extended past 16 bits: those that came as sent, and those
        # that came back in RTX (the original sequence number, RFC 4588 §4). Peers that see
        # packets (aiortc) fill them; the others leave summary["video"]["sequence"] null.
        self._sequence_base = None
        self._received = set()
        self._retransmitted = set()
        self._key_frame_starts = set()
        # RTP payload bytes per second of the run, per kind, as the packets arrived.
        self._payload_by_second = {"video": [], "audio": []}
        # Created now, so a reader finds the file even when nothing was decoded.
        self.gray = open(os.path.join(self.out, "video.gray"), "wb")
        # Set by the final summary: frames a library still delivers after it are not recorded,
        # so video.gray always holds exactly the pictures frameTimes lists.
        self.closed = False

    def now(self):
        return round(time.monotonic() - self.start, 4)

    def mark(self, event):
        """Remembers when `event` first happened (joined, offerSent, answer, connected, ...)."""
        with self.lock:
            self.summary["times"].setdefault(event, self.now())

    def state(self, what, state):
        """A state change of the ICE agent, DTLS transport, peer connection, ..."""
        with self.lock:
            states = [s for s in self.summary["states"] if s["what"] == what]
            if states and states[-1]["state"] == state:
                return
            self.summary["states"].append({"t": self.now(), "what": what, "state": state})
        print(f"[{self.now():7.2f}] {what}: {state}", file=sys.stderr, flush=True)

    def last_state(self, what):
        with self.lock:
            states = [s["state"] for s in self.summary["states"] if s["what"] == what]
        return states[-1] if states else "-"

    def video_frame(self, width, height, luma, rtp_timestamp, timestamp_source):
        """One decoded picture: `luma` is its packed luma plane (width*height bytes).

        `rtp_timestamp` is a 32-bit RTP timestamp (unwrapped here) or, for peers that already give
        ticks since the first frame, any increasing 90 kHz count.
        """
        assert len(luma) == width * height, (len(luma), width, height)
        with self.lock:
            if self.closed:
                return
            video = self.summary["video"]
            if self._first_rtp is None:
                self._first_rtp = rtp_timestamp
                self._last_rtp = rtp_timestamp
            # Unwrap 32-bit RTP time: a step is the signed 32-bit difference from the last one.
            step = (rtp_timestamp - self._last_rtp + (1 << 31)) % (1 << 32) - (1 << 31)
            self._rtp_unwrapped += step
            self._last_rtp = rtp_timestamp
            video["frames"] += 1
            if video["width"] is None:
                video["width"], video["height"] = width, height
                video["timestampSource"] = timestamp_source
                self.summary["times"].setdefault("firstVideoFrame", self.now())
            video["frameTimes"].append(
                {"rtp": self._rtp_unwrapped, "arrival": self.now(), "width": width, "height": height}
            )
            self.gray.write(luma)
        self.first_video_frame.set()

    def audio_frame(self, samples, sample_rate, channels):
        """One decoded audio frame of `samples` samples per channel."""
        with self.lock:
            if self.closed:
                return
            audio = self.summary["audio"]
            if audio["frames"] == 0:
                self.summary["times"].setdefault("firstAudioFrame", self.now())
            audio["frames"] += 1
            audio["sampleRate"], audio["channels"] = sample_rate, channels
            audio["samples"] += samples
            audio["seconds"] = round(audio["samples"] / sample_rate, 4) if sample_rate else 0.0

    def rtp_payload(self, kind, size):
        """An RTP packet of `kind` ("video", its RTX too, or "audio") arrived with `size` bytes
        of payload: counted in the second of the run it arrived in."""
        with self.lock:
            if self.closed:
                return
            second = int(time.monotonic() - self.start)
            by_second = self._payload_by_second[kind]
            by_second.extend([0] * (second + 1 - len(by_second)))
            by_second[second] += size

    def video_packet(self, sequence, retransmitted, key_frame_start):
        """One video RTP packet as it arrived: its 16-bit sequence number (for RTX, the original
        one it carries), whether it came in RTX, and whether it starts a key frame (IDR)."""
        with self.lock:
            if self.closed:
                return
            if self._sequence_base is None:
                self._sequence_base = sequence
            # Extend relative to the newest packet as sent: the signed 16-bit step from it.
            base = self._sequence_base
            extended = base + (sequence - base + (1 << 15)) % (1 << 16) - (1 << 15)
            if retransmitted:
                self._retransmitted.add(extended)
            else:
                self._received.add(extended)
                self._sequence_base = max(base, extended)
            if key_frame_start and extended not in self._key_frame_starts:
                self._key_frame_starts.add(extended)
                self.summary["video"]["keyFrames"].append({"t": self.now(), "sequence": extended})

    def _sequence_summary(self, tail=20):
        """Packets missing as sent between the first and last seen (the last `tail` left out:
        too late to be repaired before the run ended), and how many of those RTX repaired."""
        if not self._received:
            return None
        first, last = min(self._received), max(self._received) - tail
        span = range(first, last + 1)
        missing = [s for s in span if s not in self._received]
        repaired = [s for s in missing if s in self._retransmitted]
        return {
            "first": first,
            "last": last,
            "tailLeftOut": tail,
            "received": sum(1 for s in span if s in self._received),
            "missing": len(missing),
            "repaired": len(repaired),
            "retransmitted": len(self._retransmitted),
            "unrepaired": [s for s in missing if s not in self._retransmitted][:50],
        }

    def packets(self, kind, received, lost):
        with self.lock:
            self.summary[kind]["packets"] = received
            self.summary[kind]["packetsLost"] = lost

    def pli(self, sent, detail):
        with self.lock:
            self.summary["pli"].append({"t": self.now(), "sent": sent, "detail": detail})

    def fail(self, message):
        """Records the first error (later ones are consequences) and prints it."""
        with self.lock:
            if self.summary["error"] is None:
                self.summary["error"] = message
        print(f"{self.summary['peer']}: error: {message}", file=sys.stderr, flush=True)

    def set(self, key, value):
        with self.lock:
            self.summary[key] = value

    def write_file(self, name, text):
        with open(os.path.join(self.out, name), "w", encoding="utf-8", newline="") as file:
            file.write(text)

    def progress(self, peer_states):
        with self.lock:
            video, audio = self.summary["video"], self.summary["audio"]
            size = f"{video['width']}x{video['height']}" if video["width"] else "-"
            line = (
                f"[{self.now():7.2f}] {peer_states} | video {video['frames']} frames {size} "
                f"packets {video['packets']} | audio {audio['frames']} frames {audio['seconds']:.2f} s "
                f"packets {audio['packets']}"
            )
        print(line, file=sys.stderr, flush=True)

    def write_summary(self):
        """Writes summary.json (atomically: a reader never sees half a file) and closes the
        recording. Safe to repeat."""
        with self.lock:
            if not self.closed and self._received:
                # Counted from the packets themselves, as libwebrtc counts them: a packet RTX
                # brought back is received, only those never repaired are lost.
                sequence = self._sequence_summary()
                self.summary["video"]["sequence"] = sequence
                self.summary["video"]["packets"] = sequence["received"] + sequence["repaired"]
                self.summary["video"]["packetsLost"] = sequence["missing"] - sequence["repaired"]
            for kind, by_second in self._payload_by_second.items():
                if not self.closed and by_second:
                    self.summary[kind]["payloadBytes"] = sum(by_second)
                    self.summary[kind]["payloadBytesBySecond"] = list(by_second)
            self.closed = True
            self.summary["ok"] = self.summary["error"] is None
            self.summary["times"].setdefault("end", self.now())
            self.gray.flush()
            path = os.path.join(self.out, "summary.json")
            with open(path + ".tmp", "w", encoding="utf-8") as file:
                json.dump(self.summary, file, indent=1)
                file.write("\n")
            os.replace(path + ".tmp", path)

    def one_line(self):
        with self.lock:
            s = self.summary
            video, audio = s["video"], s["audio"]
            fps = ""
            times = video["frameTimes"]
            if len(times) > 1 and times[-1]["rtp"] > times[0]["rtp"]:
                fps = f", {(len(times) - 1) * 90000 / (times[-1]['rtp'] - times[0]['rtp']):.2f} fps by RTP time"
            size = f" {video['width']}x{video['height']}" if video["width"] else ""
            format = f", {audio['sampleRate']} Hz x{audio['channels']}" if audio["sampleRate"] else ""
            return (
                f"{s['peer']}: {'ok' if s['error'] is None else 'FAILED: ' + s['error']} | video "
                f"{video['frames']} frames{size}{fps} | audio {audio['frames']} frames, "
                f"{audio['seconds']:.2f} s{format}"
            )


class Signaling:
    """A minimal rtc-signal client: requests with ids and their replies, events in a queue."""

    def __init__(self, recorder):
        self.recorder = recorder
        self.ids = itertools.count(1)
        self.pending = {}
        self.events = asyncio.Queue()
        self.reader = self.writer = None
        self.reader_task = None
        self.idle_timeout = 30

    async def connect(self, host, port):
        try:
            self.reader, self.writer = await asyncio.wait_for(
                # Lines are at most 64 KiB; the limit only needs to be above that.
                asyncio.open_connection(host, port, limit=1 << 20),
                CONNECT_TIMEOUT,
            )
        except (OSError, asyncio.TimeoutError) as error:
            raise Failure(f"cannot connect to rtc-signal at {host}:{port}: {error or 'timed out'}") from error
        self.reader_task = asyncio.ensure_future(self._read())

    async def _read(self):
        try:
            while True:
                line = await self.reader.readline()
                if not line:
                    break
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(message, dict):
                    continue
                future = self.pending.pop(message.get("id"), None) if "id" in message else None
                if future is not None and not future.done():
                    future.set_result(message)
                else:
                    await self.events.put(message)
        except (OSError, ValueError) as error:
            await self.events.put({"type": "connection-lost", "message": str(error)})
            return
        await self.events.put({"type": "connection-lost", "message": "rtc-signal closed the connection"})
        for future in self.pending.values():
            if not future.done():
                future.set_result({"type": "connection-lost"})

    async def send(self, message):
        """Sends a request and returns the future of its reply."""
        message = dict(message, id=next(self.ids))
        future = asyncio.get_running_loop().create_future()
        self.pending[message["id"]] = future
        self.writer.write((json.dumps(message, separators=(",", ":")) + "\n").encode())
        await self.writer.drain()
        return future

    async def request(self, message, timeout=REPLY_TIMEOUT):
        future = await self.send(message)
        try:
            return await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            raise Failure(f"no reply to {message['type']} from rtc-signal in {timeout:g} s") from None

    async def keep_alive(self):
        """Pings at a third of the server's idle timeout, as the client library does."""
        while True:
            await asyncio.sleep(max(1.0, self.idle_timeout / 3))
            try:
                await self.send({"type": "ping"})
            except OSError:
                return

    async def close(self):
        if self.reader_task:
            self.reader_task.cancel()
        if self.writer:
            self.writer.close()


class Peer:
    """What each script implements (all awaitables are bounded by the caller)."""

    name = "peer"

    def versions(self):  # {"aiortc": "1.16.0", ...}
        raise NotImplementedError

    async def make_offer(self):  # the complete offer, gathering done, candidates inside
        raise NotImplementedError

    async def apply_answer(self, sdp):
        raise NotImplementedError

    def connected(self):  # ICE and DTLS connected
        raise NotImplementedError

    def failure(self):  # a text when ICE or DTLS failed (or the connection closed), else None
        raise NotImplementedError

    def states(self):  # one short line of current states for the progress line
        raise NotImplementedError

    async def update_stats(self):  # puts packet counts into the recorder
        raise NotImplementedError

    async def drop_media(self):  # closes the ICE sockets without a word (consent freshness)
        raise Failure(f"{self.name} cannot drop its media")

    async def send_pli(self):  # returns (sent, detail)
        raise NotImplementedError

    async def close(self):
        raise NotImplementedError


def start_watchdog(recorder, seconds):
    """The global deadline: whatever hangs (a library, a lost reply), the process ends on time,
    with summary.json written."""

    def expire():
        recorder.fail(f"global deadline of {seconds:g} s passed")
        try:
            recorder.write_summary()
        finally:
            print(recorder.one_line(), flush=True)
            os._exit(1)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()
    return timer


async def wait_for_publisher(signaling, joined, publisher, seconds, recorder):
    """Returns the publisher's stream once it is published: in `joined`, or a later event."""
    for stream in joined.get("streams", []):
        if stream.get("uid") == publisher:
            return stream
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise Failure(f"'{publisher}' published no stream within {seconds:g} s")
        try:
            event = await asyncio.wait_for(signaling.events.get(), left)
        except asyncio.TimeoutError:
            continue
        kind = event.get("type")
        if kind == "stream-published" and event.get("stream", {}).get("uid") == publisher:
            return event["stream"]
        if kind in ("goodbye", "connection-lost"):
            raise Failure(f"rtc-signal ended the connection: {event.get('reason', '')} {event.get('message', '')}")


class WhepSession:
    """A WHEP session (draft-ietf-wish-whep) as any WHEP player runs it: POST the offer as
    application/sdp, 201 with Location and the answer, DELETE the Location at the end. Standard
    library HTTP, run off the event loop. `events` stays empty: WHEP has no events."""

    def __init__(self, url, token):
        self.url = url
        self.token = token
        self.location = None
        self.events = asyncio.Queue()

    def _post(self, offer):
        request = urllib.request.Request(self.url, data=offer.encode(), method="POST")
        request.add_header("Content-Type", "application/sdp")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=ANSWER_TIMEOUT) as response:
                return response.status, dict(response.headers), response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read().decode(errors="replace")

    def _delete(self):
        base = self.url.split("/rooms/", 1)[0]
        request = urllib.request.Request(base + self.location, method="DELETE")
        try:
            with urllib.request.urlopen(request, timeout=REPLY_TIMEOUT) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    async def post(self, offer):
        return await asyncio.get_running_loop().run_in_executor(None, self._post, offer)

    async def delete(self):
        return await asyncio.get_running_loop().run_in_executor(None, self._delete)


async def run_whep(peer, args, recorder):
    """The WHEP flow: offer, POST, answer, receive, DELETE; returns the exit code."""
    session = WhepSession(args.whep, args.token)
    whep = {"url": args.whep, "status": None, "location": None, "deleteStatus": None}
    recorder.set("whep", whep)
    try:
        try:
            offer = await asyncio.wait_for(peer.make_offer(), GATHER_TIMEOUT)
        except asyncio.TimeoutError:
            raise Failure(f"ICE gathering did not complete in {GATHER_TIMEOUT} s") from None
        recorder.write_file("offer.sdp", offer)
        recorder.mark("offerSent")
        status, headers, body = await session.post(offer)
        whep["status"] = status
        whep["contentType"] = headers.get("Content-Type")
        whep["location"] = session.location = headers.get("Location")
        if status != 201:
            recorder.set("rejected", {"code": str(status), "message": body.strip()})
            if args.expect_reject:
                recorder.set("endReason", "rejected as expected")
                return 0
            raise Failure(f"WHEP POST got {status}: {body.strip()[:300]}")
        if not session.location:
            raise Failure("WHEP 201 without a Location")
        recorder.mark("answer")
        recorder.write_file("answer.sdp", body)
        await asyncio.wait_for(peer.apply_answer(body), APPLY_TIMEOUT)
        recorder.mark("answerApplied")
        await wait_until(peer, recorder, session, CONNECTED_TIMEOUT, peer.connected, "ICE + DTLS connected")
        recorder.mark("connected")
        await wait_until(
            peer,
            recorder,
            session,
            args.first_frame_timeout,
            recorder.first_video_frame.is_set,
            "a decoded video frame",
        )
        await receive(peer, args, recorder, session)
        return 0 if recorder.summary["error"] is None else 1
    except Failure as failure:
        recorder.fail(str(failure))
        return 1
    finally:
        await update_stats_quietly(peer)
        if session.location:
            whep["deleteStatus"] = await session.delete()
        try:
            await asyncio.wait_for(peer.close(), CLOSE_TIMEOUT)
        except Exception as error:
            print(f"{peer.name}: closing the peer connection: {error!r}", file=sys.stderr)


async def run(peer, args, recorder):
    """Join, subscribe with the offer, apply the answer, receive; returns the exit code."""
    if args.whep:
        return await run_whep(peer, args, recorder)
    signaling = Signaling(recorder)
    keep_alive = None
    try:
        await signaling.connect(args.signal_host, args.signal_port)
        join = {"type": "join", "version": 1, "room": args.room, "uid": args.uid, "role": "subscriber"}
        if args.token:
            join["token"] = args.token
        joined = await signaling.request(join)
        if joined.get("type") != "joined":
            raise Failure(f"join refused: {joined.get('code')}: {joined.get('message')}")
        signaling.idle_timeout = float(joined.get("idleTimeout", 30))
        keep_alive = asyncio.ensure_future(signaling.keep_alive())
        recorder.mark("joined")
        print(f"{peer.name}: joined room {args.room} as {args.uid}", flush=True)

        kind = None
        if not args.expect_reject:
            stream = await wait_for_publisher(signaling, joined, args.publisher, args.wait_publisher, recorder)
            kind = stream.get("kind")
            recorder.mark("published")

        try:
            offer = await asyncio.wait_for(peer.make_offer(), GATHER_TIMEOUT)
        except asyncio.TimeoutError:
            raise Failure(f"ICE gathering did not complete in {GATHER_TIMEOUT} s") from None
        recorder.write_file("offer.sdp", offer)
        if f" {args.ice_address} " not in offer:
            raise Failure(f"the offer has no candidate on {args.ice_address} (see offer.sdp)")

        if args.wrong_fingerprint:
            offer = wrong_fingerprints(offer)
            recorder.write_file("offer-sent.sdp", offer)
        subscribe = {"type": "subscribe", "publisher": args.publisher, "receive": {"offer": offer}}
        if kind:
            subscribe["kind"] = kind
        reply = await signaling.send(subscribe)
        recorder.mark("offerSent")
        try:
            reply = await asyncio.wait_for(reply, ANSWER_TIMEOUT)
        except asyncio.TimeoutError:
            raise Failure(f"no answer to subscribe in {ANSWER_TIMEOUT} s") from None
        if reply.get("type") == "error":
            rejected = {"code": reply.get("code"), "message": reply.get("message")}
            recorder.set("rejected", rejected)
            if args.expect_reject:
                print(f"{peer.name}: rejected: {rejected['code']}: {rejected['message']}", flush=True)
                recorder.set("endReason", "rejected as expected")
                return 0
            raise Failure(f"subscribe rejected: {rejected['code']}: {rejected['message']}")
        if reply.get("type") != "subscribed" or not isinstance(reply.get("sdp"), str):
            raise Failure(f"unexpected reply to subscribe: {json.dumps(reply)[:300]}")
        recorder.mark("answer")
        recorder.write_file("answer.sdp", reply["sdp"])
        if args.expect_reject:
            raise Failure("expected the subscribe to be rejected, but the publisher answered")

        try:
            await asyncio.wait_for(peer.apply_answer(reply["sdp"]), APPLY_TIMEOUT)
        except asyncio.TimeoutError:
            raise Failure(f"applying the answer took more than {APPLY_TIMEOUT} s") from None
        recorder.mark("answerApplied")

        await wait_until(peer, recorder, signaling, CONNECTED_TIMEOUT, peer.connected, "ICE + DTLS connected")
        recorder.mark("connected")
        await wait_until(
            peer,
            recorder,
            signaling,
            args.first_frame_timeout,
            recorder.first_video_frame.is_set,
            "a decoded video frame",
        )
        await receive(peer, args, recorder, signaling)
        return 0 if recorder.summary["error"] is None else 1
    except Failure as failure:
        recorder.fail(str(failure))
        return 1
    finally:
        if keep_alive:
            keep_alive.cancel()
        try:
            await asyncio.wait_for(peer.update_stats(), REPLY_TIMEOUT)
        except Exception as error:  # the stats are a bonus; never let them hide the result
            print(f"{peer.name}: no final stats: {error!r}", file=sys.stderr)
        try:
            await asyncio.wait_for(peer.close(), CLOSE_TIMEOUT)
        except Exception as error:
            print(f"{peer.name}: closing the peer connection: {error!r}", file=sys.stderr)
        if signaling.writer and not signaling.writer.is_closing():
            for message in ({"type": "unsubscribe", "publisher": args.publisher}, {"type": "leave"}):
                try:
                    await signaling.request(message, timeout=2)
                except (Failure, OSError):
                    pass  # not subscribed (rejected), or the server is gone: nothing to undo
        await signaling.close()


async def wait_until(peer, recorder, signaling, seconds, condition, what):
    """Polls `condition` every 20 ms for at most `seconds`, printing progress each second."""
    deadline = time.monotonic() + seconds
    next_progress = time.monotonic() + 1
    while not condition():
        reason = peer.failure()
        if reason:
            raise Failure(f"{reason} while waiting for {what}")
        ended = check_events(signaling)
        if ended:
            raise Failure(f"{ended} while waiting for {what}")
        if time.monotonic() > deadline:
            raise Failure(f"no {what} within {seconds:g} s ({peer.states()})")
        if time.monotonic() >= next_progress:
            next_progress += 1
            recorder.progress(peer.states())
        await asyncio.sleep(0.02)


def wrong_fingerprints(offer):
    """The offer with the first byte of every a=fingerprint digest changed (still well formed)."""
    lines = []
    for line in offer.split("\r\n"):
        if line.startswith("a=fingerprint:") and " " in line:
            name, digest = line.split(" ", 1)
            first = "00" if not digest.startswith("00") else "FF"
            line = f"{name} {first}{digest[2:]}"
        lines.append(line)
    return "\r\n".join(lines)


def check_events(signaling):
    """Raises on events that end the subscription; returns the reason for `unsubscribed`, or the
    publisher's `signal` that it ended the WebRTC session."""
    while not signaling.events.empty():
        event = signaling.events.get_nowait()
        kind = event.get("type")
        payload = event.get("payload") if kind == "signal" else None
        if isinstance(payload, dict) and payload.get("event") == "webrtc-ended":
            return f"the publisher ended the WebRTC session: {payload.get('reason')}"
        if kind in ("goodbye", "connection-lost"):
            raise Failure(f"rtc-signal ended the connection: {event.get('reason', '')} {event.get('message', '')}")
        if kind == "unsubscribed":
            return f"unsubscribed: {event.get('reason')}"
    return None


async def receive(peer, args, recorder, signaling):
    """Receives for --seconds from the first decoded video frame; PLI and kill on schedule."""
    anchor = time.monotonic()
    pli_due = None if args.send_pli_at is None else anchor + args.send_pli_at
    kill_due = None if args.kill_after is None else anchor + args.kill_after
    drop_due = None if args.drop_media_after is None else anchor + args.drop_media_after
    dropped = False
    end = anchor + args.seconds
    next_progress = anchor
    while time.monotonic() < end:
        now = time.monotonic()
        if kill_due is not None and now >= kill_due:
            # The consent-freshness case: gone without a word. Write what we have, then vanish.
            recorder.set("killed", True)
            recorder.set("endReason", f"killed after {args.kill_after:g} s")
            await update_stats_quietly(peer)
            recorder.write_summary()
            print(recorder.one_line(), flush=True)
            os._exit(0)
        if drop_due is not None and now >= drop_due:
            drop_due = None
            dropped = True
            await peer.drop_media()
            recorder.mark("mediaDropped")
            print(f"{peer.name}: media dropped (ICE sockets closed, signaling kept)", file=sys.stderr, flush=True)
        if pli_due is not None and now >= pli_due:
            pli_due = None
            sent, detail = await peer.send_pli()
            recorder.pli(sent, detail)
            print(f"{peer.name}: PLI {'sent' if sent else 'NOT sent'}: {detail}", file=sys.stderr)
        reason = None if dropped else peer.failure()
        if reason:
            raise Failure(f"{reason} while receiving")
        ended = check_events(signaling)
        if ended:
            recorder.mark("ended")
            recorder.set("endReason", ended)
            print(f"{peer.name}: {ended}", file=sys.stderr)
            return
        if now >= next_progress:
            next_progress += 1
            await update_stats_quietly(peer)
            recorder.progress(peer.states())
        await asyncio.sleep(0.02)
    recorder.set("endReason", f"received for {args.seconds:g} s")


async def update_stats_quietly(peer):
    try:
        await asyncio.wait_for(peer.update_stats(), 1)
    except Exception:
        pass


def main(peer_name, make_peer):
    """The whole program: arguments, the deadline, the run, summary.json, the exit code."""
    args = parse_arguments(peer_name)
    recorder = Recorder(peer_name, args)
    start_watchdog(recorder, args.deadline)
    code = 1
    try:
        peer = make_peer(args, recorder)
        recorder.set("versions", peer.versions())
        code = asyncio.run(run(peer, args, recorder))
    except Failure as failure:
        recorder.fail(str(failure))
    except Exception as error:  # a bug or a library error: still a summary and a clear line
        recorder.fail(f"{type(error).__name__}: {error}")
    finally:
        if recorder.summary["error"] is not None:
            code = 1
        recorder.write_summary()
        print(recorder.one_line(), flush=True)
    # os._exit: no interpreter teardown, which can hang in native threads (GStreamer, libnice).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
