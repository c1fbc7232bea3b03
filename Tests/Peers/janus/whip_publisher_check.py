#!/usr/bin/python3
"""Checks the WHIP harness with a WHIP publisher that is not ours: GStreamer's webrtcbin (1.22).

Runs inside the harness's namespace, with the system Python (python3-gst-1.0):
    ip netns exec NS /usr/bin/python3 Tests/Peers/janus/whip_publisher_check.py \
        --whip http://127.0.0.1:7080/whip/endpoint/rtc --janus http://127.0.0.1:8088/janus \
        --room 1234 [--janus-b http://127.0.0.1:8089/janus] [--seconds 5]

It POSTs a complete webrtcbin offer (videotestsrc ! openh264enc, or vp8enc, + Opus) to the WHIP
endpoint, applies the 201 answer, streams --seconds, and meanwhile asks Janus's VideoRoom for
its participants and runs janus_subscriber.py (aiortc, out/venv) against Janus (and Janus B when
given), then DELETEs the WHIP resource and checks the publisher is gone. Prints JSON lines;
exit status 0 when every subscriber decoded video.

--publish-only: a stand-in for rtc-publish in the harness's own checks: it only publishes for
--seconds (no participants, no subscribers), or until SIGINT/SIGTERM, then DELETEs the resource.
--nack: webrtcbin offers RTX and answers NACKs with retransmissions on the video (do-nack), as
a WebRTC publisher does: needed to see Janus repair loss on the publisher's leg.
"""

import sys

sys.dont_write_bytecode = True  # keep Tests/Peers free of __pycache__

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import urllib.parse  # noqa: E402
import urllib.request  # noqa: E402

import gi  # noqa: E402

gi.require_version("Gst", "1.0")
gi.require_version("GstSdp", "1.0")
gi.require_version("GstWebRTC", "1.0")
gi.require_version("Nice", "0.1")
from gi.repository import Gst, GstSdp, GstWebRTC, Nice  # noqa: E402

from janus_api import Janus  # noqa: E402 (this folder)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def emit(obj):
    print(json.dumps(obj), flush=True)


def janus_participants(base, room):
    janus = Janus(base)
    try:
        return janus.participants(room)
    finally:
        janus.destroy()


def promise(webrtc, signal, *args):
    p = Gst.Promise.new()
    webrtc.emit(signal, *args, p)
    if p.wait() != Gst.PromiseResult.REPLIED:
        raise RuntimeError("webrtcbin %s did not reply" % signal)
    return p.get_reply()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--whip", required=True)
    ap.add_argument("--janus", required=True)
    ap.add_argument("--janus-b")
    ap.add_argument("--room", type=int, required=True)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--ice-address", default="127.0.0.2")
    ap.add_argument("--token")
    ap.add_argument("--codec", choices=["h264", "vp8"], default=None)
    ap.add_argument(
        "--publish-only", action="store_true", help="only publish for --seconds (or until SIGINT/SIGTERM), then DELETE"
    )
    ap.add_argument("--nack", action="store_true", help="RTX: answer NACKs on the video")
    args = ap.parse_args()
    if args.publish_only:
        # A parent may have blocked SIGINT and SIGTERM (Swift Testing's runner threads do, and a
        # child inherits the mask): unblock them before GStreamer's threads start.
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        stop = []  # a plain flag: the handler must take no lock (see janus_room.py)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.append(True))

    Gst.init(None)
    codec = args.codec or ("h264" if Gst.ElementFactory.find("openh264enc") else "vp8")
    if codec == "h264":
        venc = (
            "openh264enc bitrate=1500000 gop-size=30 complexity=low ! h264parse ! "
            "rtph264pay config-interval=-1 pt=96 aggregate-mode=zero-latency ! "
            "application/x-rtp,media=video,encoding-name=H264,payload=96,clock-rate=90000"
        )
    else:
        venc = (
            "vp8enc deadline=1 keyframe-max-dist=30 target-bitrate=1500000 ! rtpvp8pay pt=96 ! "
            "application/x-rtp,media=video,encoding-name=VP8,payload=96,clock-rate=90000"
        )
    pipeline = Gst.parse_launch(
        "webrtcbin name=w bundle-policy=max-bundle "
        "videotestsrc is-live=true pattern=ball ! video/x-raw,width=640,height=360,framerate=30/1 ! "
        "videoconvert ! video/x-raw,format=I420 ! " + venc + " ! w. "
        "audiotestsrc is-live=true wave=sine ! audioconvert ! audioresample ! opusenc ! "
        "rtpopuspay pt=111 ! application/x-rtp,media=audio,encoding-name=OPUS,payload=111,"
        "clock-rate=48000 ! w."
    )
    webrtc = pipeline.get_by_name("w")
    ice = webrtc.get_property("ice-agent")  # kept referenced for the process's life
    ice.set_property("ice-tcp", False)
    # libnice's UPnP would send SSDP to its multicast group: nothing may leave 127.0.0.0/8.
    ice.get_property("agent").set_property("upnp", False)
    address = Nice.Address.new()
    if not address.set_from_string(args.ice_address) or not ice.get_property("agent").add_local_address(address):
        raise SystemExit("libnice refuses %s" % args.ice_address)
    candidates = []
    webrtc.connect("on-ice-candidate", lambda _w, m, c: candidates.append((m, c)))

    needed = threading.Event()
    webrtc.connect("on-negotiation-needed", lambda _w: needed.set())
    t0 = time.time()
    pipeline.set_state(Gst.State.PLAYING)
    if not needed.wait(5):
        raise SystemExit("webrtcbin never asked for negotiation")
    # sendonly: WHIP publishes.
    for i in range(2):
        tr = webrtc.emit("get-transceiver", i)
        if tr is not None:
            tr.set_property("direction", GstWebRTC.WebRTCRTPTransceiverDirection.SENDONLY)
            if args.nack and i == 0:
                tr.set_property("do-nack", True)
    reply = promise(webrtc, "create-offer", None)
    offer = reply.get_value("offer") if reply and reply.has_field("offer") else None
    if offer is None:
        raise SystemExit("webrtcbin made no offer: %s" % (reply.to_string() if reply else None))
    promise(webrtc, "set-local-description", offer)
    deadline = time.time() + 5
    while webrtc.get_property("ice-gathering-state") != GstWebRTC.WebRTCICEGatheringState.COMPLETE:
        if time.time() > deadline:
            raise SystemExit("ICE gathering did not complete")
        time.sleep(0.01)
    sdp = webrtc.get_property("local-description").sdp.as_text()
    lines = [line for line in sdp.replace("\r\n", "\n").strip().split("\n") if line != "a=ice-options:trickle"]
    ms = [i for i, line in enumerate(lines) if line.startswith("m=")]
    end = ms[1] if len(ms) > 1 else len(lines)
    extra = ["a=" + c for m, c in candidates if m == 0 and "a=" + c not in lines[ms[0] : end]]
    lines[end:end] = extra + ["a=end-of-candidates"]
    offer_sdp = "\r\n".join(lines) + "\r\n"
    t_offer = time.time()

    headers = {"Content-Type": "application/sdp"}
    if args.token:
        headers["Authorization"] = "Bearer " + args.token
    req = urllib.request.Request(args.whip, data=offer_sdp.encode(), headers=headers, method="POST")
    t_post = time.time()
    with urllib.request.urlopen(req, timeout=10) as r:
        status, answer, hdrs = r.status, r.read().decode(), dict(r.headers)
    t_answer = time.time()
    location = urllib.parse.urljoin(args.whip, hdrs.get("Location", ""))
    emit(
        {
            "event": "whip_answer",
            "status": status,
            "location": location,
            "etag": hdrs.get("ETag"),
            "accept_patch": hdrs.get("Accept-Patch"),
            "link": hdrs.get("Link"),
            "codec": codec,
            "offer_s": round(t_offer - t0, 3),
            "answer_ms": round((t_answer - t_post) * 1000, 1),
            "answer_candidates": [line for line in answer.splitlines() if line.startswith("a=candidate")],
            "answer_setup": sorted({line for line in answer.splitlines() if line.startswith("a=setup")}),
        }
    )
    _, msg = GstSdp.SDPMessage.new_from_text(answer)
    promise(
        webrtc, "set-remote-description", GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.ANSWER, msg)
    )

    deadline = time.time() + 5
    while webrtc.get_property("connection-state") != GstWebRTC.WebRTCPeerConnectionState.CONNECTED:
        if time.time() > deadline:
            raise SystemExit(
                "not connected: ice %s, connection %s"
                % (webrtc.get_property("ice-connection-state"), webrtc.get_property("connection-state"))
            )
        time.sleep(0.005)
    t_conn = time.time()
    emit({"event": "connected", "after_answer_ms": round((t_conn - t_answer) * 1000, 1)})

    if args.publish_only:
        # Polled: the signal may reach one of GStreamer's threads, and Python runs its handler
        # on the main thread only when that one executes bytecode.
        end = time.time() + args.seconds
        while not stop and time.time() < end:
            time.sleep(0.05)
        t_del = time.time()
        dreq = urllib.request.Request(location, method="DELETE", headers=headers)
        with urllib.request.urlopen(dreq, timeout=5) as r:
            emit(
                {
                    "event": "stopped",
                    "delete_status": r.status,
                    "delete_ms": round((time.time() - t_del) * 1000, 1),
                    "signalled": bool(stop),
                }
            )
        pipeline.set_state(Gst.State.NULL)
        os._exit(0)

    time.sleep(1.0)  # let Janus see the first key frame and negotiate the room's streams
    parts = janus_participants(args.janus, args.room)
    emit({"event": "participants", "janus": args.janus, "participants": parts})
    subs = []
    out = {}
    py = os.path.join(ROOT, "out", "venv", "bin", "python")
    sub_seconds = max(1.0, args.seconds - 1.5)
    for name, base in (("A", args.janus), ("B", args.janus_b)):
        if base:

            def go(name=name, base=base):
                p = subprocess.run(
                    [
                        py,
                        os.path.join(HERE, "janus_subscriber.py"),
                        "--janus",
                        base,
                        "--room",
                        str(args.room),
                        "--seconds",
                        str(sub_seconds),
                        "--ice-address",
                        args.ice_address,
                    ],
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                out[name] = (p.returncode, p.stdout.strip(), p.stderr.strip()[-2000:])

            th = threading.Thread(target=go)
            th.start()
            subs.append(th)
    time.sleep(max(0, args.seconds - (time.time() - t_conn)))
    for th in subs:
        th.join()
    ok = True
    for name, (rc, stdout, stderr) in sorted(out.items()):
        emit(
            {
                "event": "subscriber",
                "janus": name,
                "rc": rc,
                "result": json.loads(stdout) if stdout.startswith("{") else stdout,
                "stderr": stderr[-3000:] if rc else "",
            }
        )
        ok = ok and rc == 0

    stats = promise(webrtc, "get-stats", None).to_string()
    if os.environ.get("DUMP_STATS"):
        print(stats, file=sys.stderr)
    sent = []
    for part in stats.replace("\\", "").split('(structure)"')[1:]:
        if part.startswith("outbound-rtp,"):
            ssrc = re.search(r"ssrc=\(uint\)(\d+)", part)
            packets = re.search(r"packets-sent=\(guint64\)(\d+)", part)
            if ssrc and packets:
                sent.append({"ssrc": int(ssrc.group(1)), "packets": int(packets.group(1))})
    t_del = time.time()
    dreq = urllib.request.Request(location, method="DELETE", headers=headers)
    with urllib.request.urlopen(dreq, timeout=5) as r:
        dstatus = r.status
    time.sleep(0.5)
    parts_after = janus_participants(args.janus, args.room)
    emit(
        {
            "event": "stopped",
            "sent": sent,
            "delete_status": dstatus,
            "delete_ms": round((time.time() - t_del - 0.5) * 1000, 1),
            "participants_after_delete": parts_after,
        }
    )
    pipeline.set_state(Gst.State.NULL)
    os._exit(0 if ok else 1)


if __name__ == "__main__":
    main()
