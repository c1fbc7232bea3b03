#!/usr/bin/env python3
"""An aiortc subscriber to a Janus VideoRoom publisher, through Janus's HTTP API: counts the
decoded video and audio frames and prints one JSON line.

Run inside the harness's namespace, with the aiortc environment (scripts/setup.sh):
    ip netns exec NS out/venv/bin/python Tests/Peers/janus/janus_subscriber.py \
        --janus http://127.0.0.1:8088/janus --room 1234 [--feed ID] [--seconds 4]

Without --feed it takes the first publisher `listparticipants` reports. Janus's ICE runs on
127.0.0.2 only (see janus_room.py); aioice never gathers loopback, so its host-address list is
replaced by --ice-address (default 127.0.0.2), and no STUN server is configured.
"""

import argparse
import asyncio
import json
import sys
import time

import aioice.ice
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError

from janus_api import Janus  # this folder


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--janus", required=True)
    ap.add_argument("--room", type=int, required=True)
    ap.add_argument("--feed", type=int)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--ice-address", default="127.0.0.2")
    args = ap.parse_args()
    address = args.ice_address
    aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: [address]
    run = asyncio.get_running_loop().run_in_executor

    t0 = time.time()
    janus = await run(None, Janus, args.janus)
    result = {"janus": args.janus, "room": args.room}
    pc = None
    try:
        feed = args.feed
        if feed is None:
            participants = await run(None, janus.participants, args.room)
            publishers = [p for p in participants if p.get("publisher")]
            if not publishers:
                raise RuntimeError("no publisher in room %d: %s" % (args.room, participants))
            feed = publishers[0]["id"]
        result["feed"] = feed
        await run(None, janus.request, {"request": "join", "ptype": "subscriber",
                                        "room": args.room, "streams": [{"feed": feed}]})
        data, jsep = await run(None, janus.event)
        if not jsep:
            raise RuntimeError("Janus's 'attached' event has no offer: %s" % data)
        pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        counts = {"video": 0, "audio": 0}
        first = {}
        sizes = set()
        tasks = []

        async def consume(track):
            while True:
                try:
                    frame = await track.recv()
                except MediaStreamError:
                    return
                counts[track.kind] += 1
                first.setdefault(track.kind, time.time() - t0)
                if track.kind == "video":
                    sizes.add("%dx%d" % (frame.width, frame.height))

        pc.on("track", lambda track: tasks.append(asyncio.ensure_future(consume(track))))
        try:
            await pc.setRemoteDescription(RTCSessionDescription(jsep["sdp"], jsep["type"]))
        except Exception:
            print("Janus's offer:\n" + jsep["sdp"], file=sys.stderr)
            raise
        await pc.setLocalDescription(await pc.createAnswer())
        await run(None, lambda: janus.request({"request": "start", "room": args.room},
                                              jsep={"type": "answer", "sdp": pc.localDescription.sdp}))
        t_media = time.time()
        await asyncio.sleep(args.seconds)
        result.update({
            "codecs": sorted({line.split()[1] for line in jsep["sdp"].splitlines()
                              if line.startswith("a=rtpmap:")} & {"H264/90000", "VP8/90000",
                                                                   "opus/48000/2"}),
            "ice": pc.iceConnectionState, "connection": pc.connectionState,
            "video_frames": counts["video"], "audio_frames": counts["audio"],
            "video_sizes": sorted(sizes), "seconds": args.seconds,
            "video_fps": round(counts["video"] / args.seconds, 1),
            "first_frame_s": {k: round(v, 3) for k, v in first.items()},
            "setup_s": round(t_media - t0, 3)})
        for t in tasks:
            t.cancel()
    finally:
        if pc:
            await pc.close()
        await run(None, janus.destroy)
    print(json.dumps(result), flush=True)
    return 0 if result.get("video_frames") else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
