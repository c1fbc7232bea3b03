"""Records what a real libwebrtc sender (headless Chromium) puts on the wire for VP8 and VP9, and
turns the recording into the table vectors of Tests/RTPTests/LibWebRTCVectorsTests.swift.

    capture_libwebrtc_vpx.py capture --codec vp8|vp9 --out FILE.json [--size 320x180] [--seconds 2]
        [--content-hint detail] [--chromium chromium] [--no-netns]
    capture_libwebrtc_vpx.py vectors FILE.json [--keep 16] [--delta-frames 3] [--whole-up-to 300]

capture: one headless Chromium (flags: ../shared/field-notes.md; Browser and Tab from
chromium_viewer.py) opens a page served on 127.0.0.1 that draws a screen-like canvas (text lines,
a moving box, a frame counter) at --size, 30 fps, and sends its captureStream() with only the
chosen codec (VP9: profile-id=0) and RTX left in setCodecPreferences. The receiver is an aiortc
RTCPeerConnection in this process (VP8 as aiortc ships it; VP9 added to its codec list with a
decoder that decodes nothing, since aiortc has none); SDP goes both ways through DevTools'
Runtime.evaluate, with every candidate in the SDP. Loopback only: the run moves into a network
namespace of its own with nothing but lo (root; --no-netns stays put, and Chromium then sends from
another interface's address to 127.0.0.1), aiortc gathers 127.0.0.1 alone (aioice's host-address
list replaced; no ICE servers) and Chromium's offer is cut to its 127.0.0.1 candidates, so both
ends of the media path are 127.0.0.1 (getStats' selected pair is recorded). Every RTP packet is
recorded right after SRTP decryption (aiortc's RTCDtlsTransport._handle_rtp_data, aiortc 1.16
pinned in scripts/setup.sh) for --seconds from the first video packet. FILE.json gets the packets
(header fields, header-extension elements, payload) and the run's facts: capture time, Chromium's
version, the command, the negotiated payload types and extensions, the sender's getStats (size,
key frames, scalability mode, media path). Each frame is also put together here and decoded with
PyAV (FFmpeg's vp8/vp9), so the recording is known to hold real, decodable frames.

vectors: prints, as Swift, the first key frame's packets and the next --delta-frames frames: each
RTP packet whole up to the payload descriptor plus --keep bytes of the VP8/VP9 frame (enough for
the frame tag and key-frame size, or VP9's uncompressed header); a frame whose every packet is at
most --whole-up-to bytes of payload is kept whole.

Python 3.11 with aiortc, av and websockets (out/venv); `capture` runs as root. Every wait is bounded; Chromium is killed
on every exit; the run ends non-zero with one line on failure.
"""

import sys

sys.dont_write_bytecode = True  # keep Tests/Peers free of __pycache__

import argparse  # noqa: E402
import asyncio  # noqa: E402
import ctypes  # noqa: E402
import datetime  # noqa: E402
import http.server  # noqa: E402
import importlib.metadata  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import shlex  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from chromium_viewer import Browser, Tab  # noqa: E402
from chromium_viewer import Failure as ViewerFailure  # noqa: E402

try:
    import aioice.ice
    import av
    from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription, rtcrtpreceiver
    from aiortc import codecs as aiortc_codecs
    from aiortc.codecs.base import Decoder
    from aiortc.rtcdtlstransport import RTCDtlsTransport
    from aiortc.rtcrtpparameters import RTCRtcpFeedback, RTCRtpCodecParameters
except ImportError as error:
    print(
        f"capture_libwebrtc_vpx: {error}: run it with out/venv/bin/python (scripts/setup.sh makes it)", file=sys.stderr
    )
    sys.exit(2)

PROG = "capture_libwebrtc_vpx"
LOOPBACK = "127.0.0.1"
CONNECT_TIMEOUT = 20  # from the answer to the first video packet
FAKE_PERMISSION_FLAGS = ["--use-fake-ui-for-media-stream"]
CLONE_NEWNET = 0x40000000

PAGE = """<!doctype html>
<!-- capture_libwebrtc_vpx.py's page: a screen-like canvas, sent with one codec to the answerer. -->
<html><head><meta charset="utf-8"><title>libwebrtc capture</title></head>
<body style="margin:0;background:#000"><canvas id="c"></canvas>
<script>
"use strict";
const cap = window.cap = { events: [] };
function draw(g, w, h, n) {
  g.fillStyle = "#f4f4f4"; g.fillRect(0, 0, w, h);
  g.fillStyle = "#20409a"; g.fillRect(0, 0, w, Math.round(h / 10));
  g.fillStyle = "#222"; g.font = `${Math.max(8, Math.round(h / 18))}px monospace`;
  for (let i = 0; i < 6; i++) g.fillText(`line ${i}: the quick brown fox ${i * 7}`, 6, Math.round(h / 5) + i * h / 9);
  g.fillStyle = "#d03020"; g.fillRect((n * 4) % (w - 20), h - 24, 16, 16);
  g.fillStyle = "#000"; g.fillText(`frame ${n}`, w - 80, h - 10);
}
async function start(opts) {
  const canvas = document.getElementById("c");
  canvas.width = opts.width; canvas.height = opts.height;
  const g = canvas.getContext("2d");
  let n = 0;
  draw(g, opts.width, opts.height, n);
  cap.timer = setInterval(() => draw(g, opts.width, opts.height, ++n), 33);
  const stream = canvas.captureStream(30);
  const track = stream.getVideoTracks()[0];
  if (opts.contentHint) track.contentHint = opts.contentHint;
  const pc = cap.pc = new RTCPeerConnection({ iceServers: [], bundlePolicy: "max-bundle", rtcpMuxPolicy: "require" });
  pc.onconnectionstatechange = () => cap.events.push(`pc ${pc.connectionState}`);
  const transceiver = cap.transceiver = pc.addTransceiver(track, { direction: "sendonly", streams: [stream] });
  const all = RTCRtpSender.getCapabilities("video").codecs;
  const wanted = all.filter(c => c.mimeType.toLowerCase() === `video/${opts.codec}` &&
    (opts.codec !== "vp9" || /profile-id=0/.test(c.sdpFmtpLine || "")));
  if (!wanted.length) throw new Error(`the sender has no ${opts.codec}`);
  transceiver.setCodecPreferences([...wanted, ...all.filter(c => c.mimeType.toLowerCase() === "video/rtx")]);
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise((resolve, reject) => {
    if (pc.iceGatheringState === "complete") return resolve();
    const timer = setTimeout(() => reject(new Error("ICE gathering did not complete in 10 s")), 10000);
    pc.onicegatheringstatechange = () => {
      if (pc.iceGatheringState === "complete") { clearTimeout(timer); resolve(); }
    };
  });
  return pc.localDescription.sdp;
}
async function accept(sdp) { await cap.pc.setRemoteDescription({ type: "answer", sdp }); }
async function senderStats() {
  const out = { events: cap.events, connection: cap.pc.connectionState };
  (await cap.pc.getStats()).forEach(s => {
    if (s.type === "outbound-rtp" && s.kind === "video") {
      for (const k of ["encoderImplementation", "frameWidth", "frameHeight", "framesEncoded", "keyFramesEncoded",
                       "packetsSent", "bytesSent", "targetBitrate", "scalabilityMode", "qualityLimitationReason"])
        if (s[k] !== undefined) out[k] = s[k];
    }
    if (s.type === "candidate-pair" && s.nominated && s.state === "succeeded") out.pair = s;
  });
  if (out.pair) {  // the path the media took: both ends must be 127.0.0.1
    const stats = await cap.pc.getStats(), at = id => stats.get(id) || {};
    out.path = `${at(out.pair.localCandidateId).address}:${at(out.pair.localCandidateId).port} -> ` +
      `${at(out.pair.remoteCandidateId).address}:${at(out.pair.remoteCandidateId).port}`;
    delete out.pair;
  }
  return out;
}
</script></body></html>
"""


class Failure(Exception):
    pass


class NoVideoDecoder(Decoder):
    """aiortc has no VP9 decoder; the capture decodes its frames itself (PyAV) afterwards."""

    def decode(self, encoded_frame):
        return []


def add_vp9_to_aiortc():
    """VP9 (profile 0) and its RTX in aiortc's codec list, on payload types aiortc does not use;
    the answer takes the offer's payload types anyway."""
    video = aiortc_codecs.CODECS["video"]
    if any(c.mimeType.lower() == "video/vp9" for c in video):
        return
    used = {c.payloadType for c in video}
    pt = next(p for p in range(110, 128) if p not in used and p + 1 not in used)
    video += [
        RTCRtpCodecParameters(
            mimeType="video/VP9",
            clockRate=90000,
            payloadType=pt,
            rtcpFeedback=[RTCRtcpFeedback(type="nack"), RTCRtcpFeedback(type="nack", parameter="pli")],
            parameters={"profile-id": 0},
        ),
        RTCRtpCodecParameters(mimeType="video/rtx", clockRate=90000, payloadType=pt + 1, parameters={"apt": pt}),
    ]
    original = rtcrtpreceiver.get_decoder
    rtcrtpreceiver.get_decoder = lambda codec: (
        NoVideoDecoder() if codec.mimeType.lower() == "video/vp9" else original(codec)
    )


def record_rtp(sink):
    """Hands every decrypted RTP datagram to sink(bytes, monotonic seconds), then to aiortc."""
    handle = RTCDtlsTransport._handle_rtp_data

    async def recorded(transport, data, arrival_time_ms):
        sink(bytes(data), time.monotonic())
        await handle(transport, data, arrival_time_ms)

    RTCDtlsTransport._handle_rtp_data = recorded


def parse_rtp(data):
    """RFC 3550 §5.1 header, RFC 8285 extension elements (one- and two-byte forms), padding."""
    if len(data) < 12 or data[0] >> 6 != 2:
        raise ValueError("not an RTP packet")
    csrc_count, offset = data[0] & 0x0F, 12
    packet = {
        "marker": bool(data[1] & 0x80),
        "pt": data[1] & 0x7F,
        "seq": int.from_bytes(data[2:4], "big"),
        "ts": int.from_bytes(data[4:8], "big"),
        "ssrc": int.from_bytes(data[8:12], "big"),
        "csrcs": [int.from_bytes(data[12 + 4 * i : 16 + 4 * i], "big") for i in range(csrc_count)],
        "extensionProfile": None,
        "extensions": [],
    }
    offset += 4 * csrc_count
    if data[0] & 0x10:
        profile = int.from_bytes(data[offset : offset + 2], "big")
        words = int.from_bytes(data[offset + 2 : offset + 4], "big")
        block = data[offset + 4 : offset + 4 + 4 * words]
        packet["extensionProfile"] = f"0x{profile:04X}"
        packet["extensions"] = extension_elements(profile, block)
        offset += 4 + 4 * words
    padding = data[-1] if data[0] & 0x20 else 0
    packet["padding"] = padding
    packet["header"] = data[:offset].hex()
    packet["payload"] = data[offset : len(data) - padding].hex()
    return packet


def extension_elements(profile, block):
    elements, i = [], 0
    one_byte = profile == 0xBEDE
    while i < len(block):
        if block[i] == 0:  # padding between elements
            i += 1
            continue
        if one_byte:
            ident, length = block[i] >> 4, (block[i] & 0x0F) + 1
            if ident == 15:
                break
            i += 1
        else:
            ident, length = block[i], block[i + 1]
            i += 2
        elements.append([ident, block[i : i + length].hex()])
        i += length
    return elements


def vp8_descriptor_length(payload):
    """RFC 7741 §4.2: X, then I (M: 15 bits), L, T/K."""
    length = 1
    if payload[0] & 0x80:
        flags, length = payload[1], 2
        if flags & 0x80:
            length += 2 if payload[2] & 0x80 else 1
        if flags & 0x40:
            length += 1
        if flags & 0x30:
            length += 1
    return length


def vp9_descriptor_length(payload):
    """RFC 9628 §4.2: I (M), L (+TL0PICIDX when F=0), P_DIFFs when F and P, SS when V."""
    first, length = payload[0], 1
    if first & 0x80:
        length += 2 if payload[1] & 0x80 else 1
    if first & 0x20:
        length += 1 if first & 0x10 else 2
    if first & 0x10 and first & 0x40:
        while True:
            diff = payload[length]
            length += 1
            if not diff & 1:
                break
    if first & 0x02:
        header = payload[length]
        length += 1
        layers = (header >> 5) + 1
        if header & 0x10:
            length += 4 * layers
        if header & 0x08:
            groups = payload[length]
            length += 1
            for _ in range(groups):
                length += 1 + (payload[length] >> 2 & 0x03)
    return length


DESCRIPTOR_LENGTH = {"VP8": vp8_descriptor_length, "VP9": vp9_descriptor_length}


def frames_of(capture):
    """The media packets grouped by RTP timestamp, in sequence order: [(timestamp, [packet])]."""
    frames = {}
    for packet in capture["packets"]:
        frames.setdefault(packet["ts"], []).append(packet)
    ordered = sorted(frames.values(), key=lambda ps: ps[0]["seq"])
    return [(ps[0]["ts"], ps) for ps in ordered]


def decode_check(capture):
    """Each frame (timestamp) put together and decoded with PyAV: what came out, per frame."""
    codec = capture["codec"]
    decoder = av.CodecContext.create(codec.lower(), "r")
    results = []
    for timestamp, packets in frames_of(capture):
        payloads = [bytes.fromhex(p["payload"]) for p in packets]
        data = b"".join(p[DESCRIPTOR_LENGTH[codec](p) :] for p in payloads)
        seqs = [p["seq"] for p in packets]
        contiguous = all((b - a) & 0xFFFF == 1 for a, b in zip(seqs, seqs[1:], strict=False))
        row = {"ts": timestamp, "packets": len(packets), "bytes": len(data), "contiguous": contiguous}
        row["marker"] = packets[-1]["marker"]
        try:
            pictures = decoder.decode(av.Packet(data))
            row["decoded"] = [f"{p.width}x{p.height}" for p in pictures]
            row["key"] = bool(pictures and pictures[0].key_frame)
        except av.FFmpegError as error:
            row["error"] = str(error)
        results.append(row)
    return results


def sdp_lines_for_loopback(sdp):
    """The offer with only its 127.0.0.1 candidates (UDP), so nothing but loopback is tried."""
    kept = []
    for line in sdp.splitlines():
        if line.startswith("a=candidate:"):
            parts = line.split()
            if len(parts) < 8 or parts[4] != LOOPBACK or parts[2].lower() != "udp":
                continue
        kept.append(line)
    return "\r\n".join(kept) + "\r\n"


def rtpmap(sdp):
    """{payload type: (encoding name, fmtp)} and {extension id: uri} of an SDP's video section."""
    codecs, fmtp, extensions = {}, {}, {}
    for line in sdp.splitlines():
        if m := re.match(r"a=rtpmap:(\d+) ([^/]+)/", line):
            codecs[int(m.group(1))] = m.group(2)
        elif m := re.match(r"a=fmtp:(\d+) (.*)", line):
            fmtp[int(m.group(1))] = m.group(2)
        elif m := re.match(r"a=extmap:(\d+)(?:/\w+)? (\S+)", line):
            extensions[int(m.group(1))] = m.group(2)
    return {pt: (name, fmtp.get(pt, "")) for pt, name in codecs.items()}, extensions


def serve_page():
    page = PAGE.encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path.split("?")[0] != "/":
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

    server = http.server.ThreadingHTTPServer((LOOPBACK, 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


async def capture(args, browser, workdir):
    aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: [LOOPBACK]
    add_vp9_to_aiortc()
    datagrams = []
    record_rtp(lambda data, at: datagrams.append((at, data)))

    server = serve_page()
    try:
        await browser.start()
        tab = Tab(browser, 1, workdir)
        browser.tabs = [tab]
        url = f"http://{LOOPBACK}:{server.server_address[1]}/"
        await tab.open(url)
        # Camera and microphone permission for the page's origin: Chromium gathers loopback
        # candidates only then (field notes), though nothing is captured from a device.
        await browser.call(
            "Browser.grantPermissions", {"origin": url.rstrip("/"), "permissions": ["videoCapture", "audioCapture"]}
        )
        options = {"codec": args.codec, "width": args.width, "height": args.height, "contentHint": args.content_hint}
        offer = await tab.evaluate(f"start({json.dumps(options)})")
        loopback_offer = sdp_lines_for_loopback(offer)
        if "a=candidate:" not in loopback_offer:
            raise Failure("Chromium's offer has no 127.0.0.1 candidate (--allow-loopback-in-peer-connection?)")

        pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        tracks = []

        @pc.on("track")
        def on_track(track):
            async def drain():
                try:
                    while True:
                        await track.recv()
                except Exception:  # the track ended
                    pass

            tracks.append(asyncio.ensure_future(drain()))

        try:
            await pc.setRemoteDescription(RTCSessionDescription(sdp=loopback_offer, type="offer"))
            await pc.setLocalDescription(await pc.createAnswer())
            answer = pc.localDescription.sdp
            codecs, extensions = rtpmap(answer)
            media = [pt for pt, (name, _) in codecs.items() if name.upper() == args.codec.upper()]
            rtx = [pt for pt, (name, fmtp) in codecs.items() if name.lower() == "rtx"]
            if not media:
                raise Failure(f"the answer has no {args.codec.upper()}: {sorted(codecs.values())}")
            media_pt = media[0]
            await tab.evaluate(f"accept({json.dumps(answer)})")

            limit = time.monotonic() + CONNECT_TIMEOUT
            first = None
            while True:
                first = next((at for at, data in datagrams if len(data) > 1 and data[1] & 0x7F == media_pt), None)
                if first is not None:
                    break
                if time.monotonic() > limit:
                    state = await tab.evaluate("senderStats()")
                    raise Failure(f"no {args.codec.upper()} packet within {CONNECT_TIMEOUT} s (sender: {state})")
                await asyncio.sleep(0.05)
            await asyncio.sleep(max(0.0, first + args.seconds - time.monotonic()))
            sender = await tab.evaluate("senderStats()")
            recorded = list(datagrams)
        finally:
            await pc.close()
            for task in tracks:
                task.cancel()
    finally:
        server.shutdown()

    packets, other = [], {}
    for at, data in recorded:
        try:
            packet = parse_rtp(data)
        except ValueError:
            continue
        if packet["pt"] == media_pt and at <= first + args.seconds:
            packet["t"] = round((at - first) * 1000, 1)
            packets.append(packet)
        else:
            other[packet["pt"]] = other.get(packet["pt"], 0) + 1
    return {
        "tool": f"Tests/Peers/{os.path.basename(__file__)}",
        "captured": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "chromium": browser.version,
        "aiortc": importlib.metadata.version("aiortc"),
        "command": " ".join(shlex.quote(a) for a in ["out/venv/bin/python", *sys.argv]),
        "codec": args.codec.upper(),
        "payloadType": media_pt,
        "rtxPayloadTypes": rtx,
        "fmtp": codecs[media_pt][1],
        "extensions": {str(k): v for k, v in sorted(extensions.items())},
        "size": f"{args.width}x{args.height}",
        "contentHint": args.content_hint or None,
        "sender": sender,
        "otherPackets": {str(k): v for k, v in sorted(other.items())},
        "offer": offer,
        "answer": answer,
        "packets": packets,
    }


def isolate_network():
    """Moves this process into a network namespace of its own with nothing but lo (it goes away
    with the process), so neither Chromium nor aiortc has any address but 127.0.0.1: with
    another interface up, Chromium sends from that interface's address even to a 127.0.0.1
    candidate. Called before any thread starts; needs root."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        raise Failure(f"unshare(CLONE_NEWNET): {os.strerror(ctypes.get_errno())} (run as root, or --no-netns)")
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)


def run_capture(args):
    if not args.no_netns:
        try:
            isolate_network()
        except (Failure, OSError, subprocess.CalledProcessError) as error:
            print(f"{PROG}: error: {error}", file=sys.stderr)
            return 1
    workdir = tempfile.mkdtemp(prefix="capture-libwebrtc-")
    browser = Browser(args.chromium, workdir)
    browser.extra_flags += FAKE_PERMISSION_FLAGS
    try:

        async def bounded():
            async with asyncio.timeout(60 + args.seconds):
                return await capture(args, browser, workdir)

        result = asyncio.run(bounded())
    except (Failure, ViewerFailure, OSError, TimeoutError) as error:
        print(
            f"{PROG}: error: {error or type(error).__name__} (Chromium's log: {workdir}/chromium.log)", file=sys.stderr
        )
        return 1
    finally:
        browser.stop()
    result["frames"] = decode_check(result)
    with open(args.out, "w") as file:
        json.dump(result, file, indent=1)
    shutil.rmtree(workdir, ignore_errors=True)
    keys = sum(1 for f in result["frames"] if f.get("key"))
    errors = [f for f in result["frames"] if "error" in f]
    print(
        f"{PROG}: {result['chromium']}, {result['codec']} pt {result['payloadType']}: "
        f"{len(result['packets'])} packets, "
        f"{len(result['frames'])} frames ({keys} key, {len(errors)} undecodable), encoder "
        f"{result['sender'].get('encoderImplementation')} {result['sender'].get('frameWidth')}x"
        f"{result['sender'].get('frameHeight')} -> {args.out}",
        file=sys.stderr,
    )
    return 1 if errors or not keys else 0


def swift_bytes(data, indent):
    """A Swift [UInt8] literal, 16 bytes a line."""
    lines = []
    for i in range(0, len(data), 16):
        lines.append(indent + "    " + ", ".join(f"0x{b:02X}" for b in data[i : i + 16]) + ",")
    return "[\n" + "\n".join(lines) + "\n" + indent + "]"


def run_vectors(args):
    capture = json.load(open(args.file))
    codec = capture["codec"]
    frames = frames_of(capture)
    keys = {f["ts"] for f in capture["frames"] if f.get("key")}
    start = next((i for i, (timestamp, _) in enumerate(frames) if timestamp in keys), None)
    if start is None:
        print(f"{PROG}: no key frame in {args.file}", file=sys.stderr)
        return 1
    chosen = frames[start : start + 1 + args.delta_frames]
    hint = f"content hint {capture['contentHint']!r}" if capture["contentHint"] else "no content hint"
    script = "out/venv/bin/python Tests/Peers/capture_libwebrtc_vpx.py"
    capture_args = capture["command"].split(" capture ", 1)[1]
    vector_args = " ".join(shlex.quote(a) for a in sys.argv[sys.argv.index("vectors") :])
    sender = capture["sender"]
    path = " -> ".join(end.rsplit(":", 1)[0] for end in sender.get("path", "? -> ?").split(" -> "))
    names = {"abs-send-time": "abs-send-time", "sdes:mid": "mid", "transport-wide-cc": "transport-cc"}
    extensions = ", ".join(
        f"{next((n for k, n in names.items() if k in uri), uri)} = {ident}"
        for ident, uri in capture["extensions"].items()
    )
    print(f"    /// {codec}, a {capture['size']} canvas with {hint}: {capture['chromium']} sending (libwebrtc),")
    print(f"    /// aiortc {capture['aiortc']} receiving; captured {capture['captured']} by")
    print(f"    ///     {script} \\")
    print(f"    ///         capture {capture_args}")
    print(f"    ///     {script} \\")
    print(f"    ///         {vector_args}")
    print(
        f"    /// The sender's getStats: {sender.get('scalabilityMode')}, {sender.get('frameWidth')}x"
        f"{sender.get('frameHeight')}, {sender.get('keyFramesEncoded')} key frame in "
        f"{sender.get('framesEncoded')}, {path}."
    )
    print(f"    /// Header extensions: {extensions}.")
    print(f"    static let {args.name} = LibWebRTCCapture(")
    print(f'        name: "{codec}, {hint}",')
    print(f"        codec: .{codec.lower()},")
    print("        packets: [")
    indent = " " * 12
    for _, packets in chosen:
        whole = all(len(p["payload"]) // 2 <= args.whole_up_to for p in packets)
        for packet in packets:
            payload = bytes.fromhex(packet["payload"])
            keep = len(payload) if whole else min(len(payload), DESCRIPTOR_LENGTH[codec](payload) + args.keep)
            if packet["padding"]:
                print(f"{PROG}: packet {packet['seq']} has padding; not a vector", file=sys.stderr)
                return 1
            header = bytes.fromhex(packet["header"])
            print(f"{indent}.init(")
            print(f"{indent}    payloadLength: {len(payload)},")
            print(f"{indent}    bytes: {swift_bytes(header + payload[:keep], indent + '    ')}")
            print(f"{indent}),")
    print("        ]")
    print("    )")
    return 0


def main():
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    cap = commands.add_parser("capture", help="record a libwebrtc VP8/VP9 stream into FILE.json")
    cap.add_argument("--codec", choices=("vp8", "vp9"), required=True)
    cap.add_argument("--out", required=True, metavar="FILE.json")
    cap.add_argument("--size", default="320x180", help="the canvas' WIDTHxHEIGHT (default 320x180)")
    cap.add_argument("--seconds", type=float, default=2.0, help="recorded from the first video packet (default 2)")
    cap.add_argument("--content-hint", choices=("", "motion", "detail", "text"), default="")
    cap.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    cap.add_argument(
        "--no-netns", action="store_true", help="stay in this network namespace (other interfaces stay visible)"
    )
    vec = commands.add_parser("vectors", help="print a capture's vectors as Swift")
    vec.add_argument("file", metavar="FILE.json")
    vec.add_argument("--name", default="capture", help="the Swift constant's name")
    vec.add_argument("--keep", type=int, default=16, help="frame bytes kept after the descriptor (default 16)")
    vec.add_argument("--delta-frames", type=int, default=3, help="frames after the key frame (default 3)")
    vec.add_argument("--whole-up-to", type=int, default=300, help="keep frames whose payloads are this small whole")
    args = parser.parse_args()
    if args.command == "vectors":
        return run_vectors(args)
    size = re.fullmatch(r"([1-9][0-9]{1,3})x([1-9][0-9]{1,3})", args.size)
    if not size:
        parser.error(f"--size '{args.size}' is not WIDTHxHEIGHT")
    args.width, args.height = int(size.group(1)), int(size.group(2))
    return run_capture(args)


if __name__ == "__main__":
    sys.exit(main())
