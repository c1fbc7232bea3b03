#!/usr/bin/env python3
"""An aiortc subscriber to a Janus VideoRoom publisher, through Janus's HTTP API: records what it
receives and decodes and prints one JSON summary line at the end.

Run inside the harness's namespace (janus_room.py), with the aiortc environment (scripts/setup.sh):
    ip netns exec NS out/venv/bin/python Tests/Peers/janus/janus_subscriber.py \\
        --janus http://127.0.0.1:8088/janus --room 1234 [--feed ID] [--wait-publisher 15] \\
        [--seconds 8] [--pli-at 6] [--out DIR]

Without --feed it takes the first publisher `listparticipants` reports, waiting up to
--wait-publisher seconds for one to appear. Janus offers (it is the subscriber's offerer); we
answer recvonly. Janus's ICE runs on 127.0.0.2 only (see janus_room.py); aioice never gathers
loopback, so its host-address list is replaced by --ice-address (default 127.0.0.2), and no STUN
server is configured.

It reuses the room peers' code (Tests/Peers): room.Recorder records states, decoded pictures and
audio frames, key frames and the PLI; aiortc_subscriber.py's AiortcPeer consumes the tracks,
watches every video RTP packet (media and RTX) before aiortc uses it and sends the PLI. Receiving
lasts --seconds from the first decoded video frame ("the window"). With --out DIR the room peers'
files are written there too (summary.json, video.gray: see room.Recorder), readable by the Swift
tests' WebRTCReceived; without it no picture is kept.

The JSON line (also when it fails: "ok" false and "error"); times are seconds since the start:
  ok, error           true when it ran to the end and decoded video; else the first error
  janus, room, feed   where it subscribed
  codecs              the codecs of Janus's offer among H264/90000, VP8/90000, opus/48000/2
  ice, connection     aiortc's ICE and peer-connection states at the end
  times               {published, offer, connected, firstVideoFrame, firstAudioFrame, end}
  window_s            how long it received, from the first decoded video frame to the end
  video: frames       pictures decoded in the window (and before it: none, the window starts
                      at the first)
         width, height  the first picture's size; sizes: every size seen ("640x360")
         fps          frames / window_s
         fps_rtp      pictures after the first over the RTP time they span
         largest_gap_s  the longest arrival gap between consecutive decoded pictures
         sequence     the video RTP sequence numbers of the media SSRC (extended past 16 bits)
                      between the first and the last received, the last `tail_left_out` (20)
                      left out, too late to be repaired before the end:
                        first, last, tail_left_out,
                        received  sequence numbers that arrived in the media stream
                        late      of those, arrived after a higher one had (reordered, or lost
                                  upstream and repaired: Janus forwards what the publisher
                                  retransmits as ordinary packets)
                        rtx       original sequence numbers (OSN, RFC 4588) that came in RTX
                        missing   never arrived in any form (gaps that never filled)
                        gaps      runs of consecutive missing ones (a dropped UDP send can take
                                  several packets: GSO)
                        unrepaired  the first 50 missing
                      null when no video packet arrived
         key_frames   [{t, sequence}]: where each key frame (IDR) started arriving
         timecodes    the synthetic screen's timecode strip (Sources/Media/Sources/
                      TimecodeStrip.swift) read from every decoded picture, in decoding order:
                        pictures, readable, first, last (frame numbers), in_order (true when no
                        frame number went back or repeated), out_of_order, repeated, missing
                        (numbers between first and last never shown), capture_fps (frames
                        advanced over capture time advanced)
  audio: frames       Opus frames decoded; seconds (samples / rate), sample_rate, channels
  pli                 null without --pli-at; else {at (seconds after the first decoded picture
                      it was due), t (sent at, seconds since the start), sent, detail,
                      key_frame_t (the first key frame starting after it, or null),
                      key_frame_after_ms}
Exit status: 0 when ok, 1 otherwise, 2 for bad arguments.
"""

import sys

sys.dont_write_bytecode = True  # keep Tests/Peers free of __pycache__

import argparse  # noqa: E402
import asyncio  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # Tests/Peers: room.py, aiortc_subscriber.py

import room  # noqa: E402
from janus_api import Janus  # noqa: E402 (this folder)

try:
    from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription  # noqa: E402
    from aiortc.rtcconfiguration import RTCBundlePolicy  # noqa: E402

    import aiortc_subscriber  # noqa: E402 (Tests/Peers)
except ImportError as error:
    print(f"janus_subscriber: {error}: run it with out/venv/bin/python (scripts/setup.sh)", file=sys.stderr)
    sys.exit(2)

TAIL = 20  # sequence numbers at the end left out of the gap count: too late to be repaired


# --- the synthetic screen's timecode (a port of TimecodeStrip.decode, no scaling) -------------

BLOCKS = 2 + 24 + 32 + 8


def crc8(data):
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


def read_timecode(luma, width, height):
    """(frame, time_ms) from the strip across the top of a packed luma plane, or None when the
    sync blocks or the CRC-8 do not match. Same rule as TimecodeStrip.decode: block edge
    width/80 rounded down to even, each block's centre averaged, white above 126."""
    b = max(2, (width // 80) & ~1)
    if BLOCKS * b > width or b > height or len(luma) < width * height:
        return None
    bits = []
    rows = range(b // 4, b - b // 4)
    for i in range(BLOCKS):
        left = i * b
        total = n = 0
        for row in rows:
            start = row * width + left + b // 4
            segment = luma[start : start + b - 2 * (b // 4)]
            total += sum(segment)
            n += len(segment)
        bits.append(total // max(n, 1) > 126)
    if not bits[0] or bits[1]:
        return None
    data = []
    for k in range(8):
        byte = 0
        for j in range(8):
            if bits[2 + k * 8 + j]:
                byte |= 1 << (7 - j)
        data.append(byte)
    if crc8(data[:7]) != data[7]:
        return None
    frame = data[0] << 16 | data[1] << 8 | data[2]
    time_ms = data[3] << 24 | data[4] << 16 | data[5] << 8 | data[6]
    return frame, time_ms


class JanusRecorder(room.Recorder):
    """room.Recorder, plus what a subscriber behind Janus needs: every picture's timecode, late
    video packets (Janus forwards what its publisher retransmits as ordinary packets, late), and
    no picture kept unless asked for."""

    def __init__(self, args, keep_pictures):
        super().__init__("janus_subscriber", args)
        if not keep_pictures:
            self.gray.close()
            self.gray = open(os.devnull, "wb")
        self.timecodes = []  # (frame, time_ms) or None, per decoded picture
        self.arrivals = []
        self._late = set()
        self._sizes = set()
        self._by_size = {}

    def video_frame(self, width, height, luma, rtp_timestamp, timestamp_source):
        if self.closed:
            return
        value = read_timecode(luma, width, height)
        self.timecodes.append(value)
        self.arrivals.append(self.now())
        size = "%dx%d" % (width, height)
        self._sizes.add(size)
        counts = self._by_size.setdefault(size, {"pictures": 0, "readable": 0})
        counts["pictures"] += 1
        counts["readable"] += value is not None
        super().video_frame(width, height, luma, rtp_timestamp, timestamp_source)

    def video_packet(self, sequence, retransmitted, key_frame_start):
        # aiortc hands packets over on its event loop's thread only: no race with the base.
        base = self._sequence_base
        if not retransmitted and base is not None:
            extended = base + (sequence - base + (1 << 15)) % (1 << 16) - (1 << 15)
            if extended < base:
                self._late.add(extended)
        super().video_packet(sequence, retransmitted, key_frame_start)

    def sequence_summary(self):
        if not self._received:
            return None
        first, last = min(self._received), max(self._received) - TAIL
        span = range(first, last + 1)
        seen = self._received | self._retransmitted
        missing = [s for s in span if s not in seen]
        gaps = sum(1 for s in missing if s - 1 not in missing)  # runs; missing is sorted
        return {
            "first": first,
            "last": last,
            "tail_left_out": TAIL,
            "received": sum(1 for s in span if s in self._received),
            "late": sum(1 for s in span if s in self._late),
            "rtx": sum(1 for s in span if s in self._retransmitted),
            "missing": len(missing),
            "gaps": gaps,
            "unrepaired": missing[:50],
        }

    def timecode_summary(self):
        values = [v for v in self.timecodes if v is not None]
        out_of_order = repeated = 0
        for (f0, _), (f1, _) in itertools.pairwise(values):
            if f1 == f0:
                repeated += 1
            elif f1 < f0:
                out_of_order += 1
        first = values[0] if values else None
        last = values[-1] if values else None
        missing = 0
        capture_fps = None
        if first and last and last[0] >= first[0]:
            missing = max(0, last[0] - first[0] + 1 - (len(values) - repeated))
            if last[1] > first[1]:
                capture_fps = round((last[0] - first[0]) / ((last[1] - first[1]) / 1000), 2)
        return {
            "pictures": len(self.timecodes),
            "readable": len(values),
            "first": first[0] if first else None,
            "last": last[0] if last else None,
            "in_order": out_of_order == 0 and repeated == 0,
            "out_of_order": out_of_order,
            "repeated": repeated,
            "missing": missing,
            "capture_fps": capture_fps,
            # Per picture size: a simulcast viewer may get a smaller layer's pictures, whose
            # timecode strip is too small to read, on its way to the layer it asked for.
            "by_size": self._by_size,
        }


def parse_arguments():
    ap = argparse.ArgumentParser(description="aiortc subscriber of a Janus VideoRoom publisher")
    ap.add_argument("--janus", required=True, help="Janus HTTP API, e.g. http://127.0.0.1:8088/janus")
    ap.add_argument("--room", type=int, required=True)
    ap.add_argument("--feed", type=int, help="the publisher's id (default: the first publisher)")
    ap.add_argument(
        "--wait-publisher",
        type=float,
        default=0,
        metavar="SECONDS",
        help="wait this long for a publisher to appear in the room (default: none)",
    )
    ap.add_argument(
        "--seconds", type=float, default=4.0, help="how long to receive, from the first decoded video frame"
    )
    ap.add_argument(
        "--pli-at",
        type=float,
        metavar="SECONDS",
        help="send one RTCP PLI for the video's media SSRC this long after the first "
        "decoded video frame, and report how long until the next key frame",
    )
    ap.add_argument(
        "--substream",
        type=int,
        choices=(0, 1, 2),
        help="a simulcast publisher's layer to receive (Janus's substream: 0 is the lowest); "
        "sent as a configure request once the peer connection is up",
    )
    ap.add_argument(
        "--switch-substream",
        metavar="N@SECONDS",
        help="then move to substream N this long after the first decoded video frame",
    )
    ap.add_argument("--ice-address", default="127.0.0.2")
    ap.add_argument("--out", metavar="DIR", help="also write summary.json and video.gray there")
    args = ap.parse_args()
    args.switch = None
    if args.switch_substream:
        layer, _, at = args.switch_substream.partition("@")
        try:
            args.switch = (int(layer), float(at))
        except ValueError:
            print(f"janus_subscriber: --switch-substream {args.switch_substream!r} is not N@SECONDS", file=sys.stderr)
            sys.exit(2)
        if args.switch[0] not in (0, 1, 2) or args.switch[1] < 0:
            print("janus_subscriber: --switch-substream: N is 0-2, SECONDS not negative", file=sys.stderr)
            sys.exit(2)
    if args.seconds <= 0 or args.wait_publisher < 0 or (args.pli_at is not None and args.pli_at < 0):
        print(
            "janus_subscriber: --seconds must be positive, --wait-publisher and --pli-at not negative", file=sys.stderr
        )
        sys.exit(2)
    return args


async def find_feed(janus, args, recorder, run):
    if args.feed is not None:
        return args.feed
    deadline = time.monotonic() + args.wait_publisher
    while True:
        participants = await run(None, janus.participants, args.room)
        publishers = [p for p in participants if p.get("publisher")]
        if publishers:
            recorder.mark("published")
            return publishers[0]["id"]
        if time.monotonic() >= deadline:
            raise room.Failure(
                "no publisher in room %d within %g s: %s" % (args.room, args.wait_publisher, participants)
            )
        await asyncio.sleep(0.1)


async def subscribe(args, recorder, result):
    run = asyncio.get_running_loop().run_in_executor
    janus = await run(None, Janus, args.janus)
    peer = aiortc_subscriber.AiortcPeer(args, recorder)  # ICE on --ice-address, packets watched
    try:
        feed = await find_feed(janus, args, recorder, run)
        result["feed"] = feed
        await run(
            None,
            janus.request,
            {"request": "join", "ptype": "subscriber", "room": args.room, "streams": [{"feed": feed}]},
        )
        data, jsep = await run(None, janus.event)
        if not jsep:
            raise room.Failure("Janus's 'attached' event has no offer: %s" % data)
        recorder.mark("offer")
        if args.out:
            recorder.write_file("offer.sdp", jsep["sdp"])
        result["codecs"] = sorted(
            {line.split()[1] for line in jsep["sdp"].splitlines() if line.startswith("a=rtpmap:")}
            & {"H264/90000", "VP8/90000", "opus/48000/2"}
        )
        peer.pc = RTCPeerConnection(RTCConfiguration(iceServers=[], bundlePolicy=RTCBundlePolicy.MAX_BUNDLE))
        peer._watch()
        try:
            await peer.pc.setRemoteDescription(RTCSessionDescription(jsep["sdp"], jsep["type"]))
        except Exception as error:
            print("Janus's offer:\n" + jsep["sdp"], file=sys.stderr)
            raise room.Failure("aiortc refuses Janus's offer: %r" % error) from error
        for transceiver in peer.pc.getTransceivers():
            if transceiver.kind == "video":
                peer.video_receiver = transceiver.receiver
                result["videoMid"] = transceiver.mid
        await peer.pc.setLocalDescription(await peer.pc.createAnswer())
        if args.out:
            recorder.write_file("answer.sdp", peer.pc.localDescription.sdp)
        await run(
            None,
            lambda: janus.request(
                {"request": "start", "room": args.room}, jsep={"type": "answer", "sdp": peer.pc.localDescription.sdp}
            ),
        )
        await room.wait_until(peer, recorder, NoEvents, room.CONNECTED_TIMEOUT, peer.connected, "ICE + DTLS connected")
        recorder.mark("connected")
        if args.substream is not None:
            await choose_substream(janus, args, result, args.substream)
        await room.wait_until(
            peer,
            recorder,
            NoEvents,
            room.FIRST_FRAME_TIMEOUT,
            recorder.first_video_frame.is_set,
            "a decoded video frame",
        )
        await receive(peer, args, recorder, result, janus)
    finally:
        result["ice"] = peer.pc.iceConnectionState if peer.pc else None
        result["connection"] = peer.pc.connectionState if peer.pc else None
        try:
            await asyncio.wait_for(peer.close(), room.CLOSE_TIMEOUT)
        except Exception as error:
            print(f"janus_subscriber: closing the peer connection: {error!r}", file=sys.stderr)
        await run(None, janus.destroy)


class NoEvents:
    """room.wait_until checks a signaling connection's events; Janus's come by long-poll."""

    class events:
        @staticmethod
        def empty():
            return True


async def choose_substream(janus, args, result, substream):
    """Janus VideoRoom's `configure` for a subscriber: the simulcast layer of the video stream
    (by its mid in Janus's offer); the switch happens at the layer's next key frame."""
    mid = result.get("videoMid")
    await asyncio.get_running_loop().run_in_executor(
        None,
        janus.request,
        {"request": "configure", "streams": [{"mid": mid, "substream": substream}]},
    )
    result.setdefault("substreams", []).append({"substream": substream, "t": round(time.monotonic(), 3)})
    print(f"janus_subscriber: substream {substream} asked for (mid {mid})", file=sys.stderr, flush=True)


async def receive(peer, args, recorder, result, janus):
    anchor = time.monotonic()
    recorder.window_start = recorder.now()
    pli_due = None if args.pli_at is None else anchor + args.pli_at
    switch_due = None if args.switch is None else anchor + args.switch[1]
    end = anchor + args.seconds
    next_progress = anchor + 1
    next_keepalive = anchor + 20
    while time.monotonic() < end:
        now = time.monotonic()
        if pli_due is not None and now >= pli_due:
            pli_due = None
            sent, detail = await peer.send_pli()
            recorder.pli(sent, detail)
            print(f"janus_subscriber: PLI {'sent' if sent else 'NOT sent'}: {detail}", file=sys.stderr, flush=True)
        if switch_due is not None and now >= switch_due:
            switch_due = None
            recorder.mark("switch")
            await choose_substream(janus, args, result, args.switch[0])
        reason = peer.failure()
        if reason:
            raise room.Failure(f"{reason} while receiving")
        if now >= next_progress:
            next_progress += 1
            recorder.progress(peer.states())
        if now >= next_keepalive:
            next_keepalive += 20
            await asyncio.get_running_loop().run_in_executor(None, janus.keepalive)
        await asyncio.sleep(0.02)
    recorder.window_end = recorder.now()
    recorder.set("endReason", f"received for {args.seconds:g} s")


def summarize(args, recorder, result):
    with recorder.lock:
        recorder.closed = True  # frames a library still delivers are not counted
    s = recorder.summary
    video, audio = s["video"], s["audio"]
    start = getattr(recorder, "window_start", None)
    end = getattr(recorder, "window_end", None) or recorder.now()
    window = round(end - start, 3) if start is not None else 0.0
    frames = video["frames"]
    times = video["frameTimes"]
    fps_rtp = None
    if len(times) > 1 and times[-1]["rtp"] > times[0]["rtp"]:
        fps_rtp = round((len(times) - 1) * 90000 / (times[-1]["rtp"] - times[0]["rtp"]), 2)
    arrivals = recorder.arrivals
    gap = max((b - a for a, b in itertools.pairwise(arrivals)), default=0.0)
    pli = None
    if args.pli_at is not None:
        sent = s["pli"][0] if s["pli"] else None
        pli = {
            "at": args.pli_at,
            "t": sent and sent["t"],
            "sent": bool(sent and sent["sent"]),
            "detail": sent and sent["detail"],
            "key_frame_t": None,
            "key_frame_after_ms": None,
        }
        if sent and sent["sent"]:
            after = [k["t"] for k in video["keyFrames"] if k["t"] >= sent["t"]]
            if after:
                pli["key_frame_t"] = after[0]
                pli["key_frame_after_ms"] = round((after[0] - sent["t"]) * 1000, 1)
    error = s["error"]
    if error is None and frames == 0:
        error = "no video frame decoded"
    result.update(
        {
            "ok": error is None,
            "error": error,
            "times": dict(s["times"], end=recorder.now()),
            "window_s": window,
            "video": {
                "frames": frames,
                "width": video["width"],
                "height": video["height"],
                "sizes": sorted(recorder._sizes),
                "fps": round(frames / window, 2) if window > 0 else None,
                "fps_rtp": fps_rtp,
                "largest_gap_s": round(gap, 3),
                "sequence": recorder.sequence_summary(),
                "key_frames": video["keyFrames"],
                "timecodes": recorder.timecode_summary(),
            },
            "audio": {
                "frames": audio["frames"],
                "seconds": audio["seconds"],
                "sample_rate": audio["sampleRate"],
                "channels": audio["channels"],
            },
            "pli": pli,
        }
    )
    return result


def finish(args, recorder, result, keep, out):
    summarize(args, recorder, result)
    if keep:
        recorder.write_summary()
    else:
        recorder.gray.close()
        shutil.rmtree(out, ignore_errors=True)
    print(json.dumps(result), flush=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0 if result["ok"] else 1)  # no interpreter teardown (native threads)


def start_watchdog(args, recorder, result, seconds):
    """Whatever hangs (a library, a lost reply), the process ends on time with its JSON line."""

    def expire():
        recorder.fail(f"global deadline of {seconds:g} s passed")
        finish(args, recorder, result, args.keep, args.out)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()


def main():
    args = parse_arguments()
    keep = args.out is not None
    out = args.out or tempfile.mkdtemp(prefix="janus-subscriber-")
    os.makedirs(out, exist_ok=True)
    # What room.Recorder and AiortcPeer read from the room peers' arguments.
    args.out, args.uid, args.publisher, args.keep = out, "janus_subscriber", "feed", keep
    recorder = JanusRecorder(args, keep)
    recorder.summary["room"] = str(args.room)  # summary.json as the room peers write it
    result = {"janus": args.janus, "room": args.room, "feed": args.feed, "codecs": []}
    start_watchdog(args, recorder, result, args.wait_publisher + args.seconds + 45)
    try:
        asyncio.run(subscribe(args, recorder, result))
    except room.Failure as failure:
        recorder.fail(str(failure))
    except Exception as error:  # a bug or a library error: still a summary line
        recorder.fail(f"{type(error).__name__}: {error}")
    finish(args, recorder, result, keep, out)


if __name__ == "__main__":
    main()
