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
import urllib.request
import uuid

import aioice.ice
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError


def http_json(url, body=None, timeout=10):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="GET" if body is None else "POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read().decode())


class Janus:
    def __init__(self, base):
        self.base = base
        self.session = self.call(base, {"janus": "create"})["data"]["id"]
        self.handle = self.call("%s/%d" % (base, self.session),
                                {"janus": "attach", "plugin": "janus.plugin.videoroom"})["data"]["id"]
        self.url = "%s/%d/%d" % (base, self.session, self.handle)

    def call(self, url, body):
        reply = http_json(url, dict(body, transaction=uuid.uuid4().hex[:12]))
        if reply.get("janus") == "error":
            raise RuntimeError("janus: %s" % reply["error"])
        return reply

    def message(self, body, jsep=None):
        msg = {"janus": "message", "body": body}
        if jsep:
            msg["jsep"] = jsep
        reply = self.call(self.url, msg)
        data = reply.get("plugindata", {}).get("data", {})
        if "error" in data:
            raise RuntimeError("videoroom %s: %s" % (body["request"], data["error"]))
        return data

    def event(self, timeout=10):
        """The next plugin event of our handle (with its jsep, if any)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            ev = http_json("%s/%d?maxev=1" % (self.base, self.session), timeout=40)
            if ev.get("sender") == self.handle and ev.get("janus") == "event":
                data = ev["plugindata"]["data"]
                if "error" in data:
                    raise RuntimeError("videoroom: %s" % data["error"])
                return data, ev.get("jsep")
        raise RuntimeError("no event from Janus within %d s" % timeout)

    def destroy(self):
        try:
            self.call("%s/%d" % (self.base, self.session), {"janus": "destroy"})
        except Exception:
            pass


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
            participants = (await run(None, janus.message, {"request": "listparticipants",
                                                            "room": args.room}))["participants"]
            publishers = [p for p in participants if p.get("publisher")]
            if not publishers:
                raise RuntimeError("no publisher in room %d: %s" % (args.room, participants))
            feed = publishers[0]["id"]
        result["feed"] = feed
        await run(None, janus.message, {"request": "join", "ptype": "subscriber",
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
        await run(None, janus.message, {"request": "start", "room": args.room},
                  {"type": "answer", "sdp": pc.localDescription.sdp})
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
