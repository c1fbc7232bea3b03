#!/usr/bin/env python3
"""What WebRTC viewers cost a running rtc-publish: threads, descriptors and resident memory, read
from /proc/PID, with none, with N aiortc viewers connected (ICE + DTLS done, media flowing), and
for a while after they all left. Run in out/venv (aiortc), against a publisher and rtc-signal on
this host:

    out/venv/bin/python scripts/viewer-cost.py --signal 127.0.0.1:8443 --room 123456 \
        --publisher alice_sub --pid $(pgrep -n rtc-publish) --viewers 50 --hold 10 --after 20

Each viewer is its own rtc-signal member (uid costNNN_sub) on its own TCP connection, offering
recvonly video and audio from one aiortc RTCPeerConnection; frames are received and dropped. They
join in batches of --batch. Prints one JSON line per sample:
    {"phase": "before"|"connected"|"left", "t": s, "viewers": connected, "threads": n,
     "fds": n, "rssKiB": n}
and a summary line {"phase": "summary", ...} with the per-viewer differences. All viewers but one
leave first ("one-left"), then the last ("left"): rtc-publish returns freed memory to the system
when its last viewer has gone, so the two show what glibc keeps without and with that.
"""

import argparse
import asyncio
import json
import os
import sys
import time

from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.rtcconfiguration import RTCBundlePolicy


def sample(pid):
    threads = rss = 0
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("Threads:"):
                threads = int(line.split()[1])
            elif line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    return {"threads": threads, "fds": len(os.listdir(f"/proc/{pid}/fd")), "rssKiB": rss}


class Viewer:
    def __init__(self, index, args):
        self.uid = f"cost{index:03d}_sub"
        self.args = args
        self.pc = None
        self.writer = None
        self.tasks = []
        self.connected = asyncio.Event()
        self.ids = 0

    async def request(self, reader, message):
        self.ids += 1
        message = dict(message, id=self.ids)
        self.writer.write((json.dumps(message, separators=(",", ":")) + "\n").encode())
        await self.writer.drain()
        while True:
            line = await asyncio.wait_for(reader.readline(), 20)
            if not line:
                raise RuntimeError(f"{self.uid}: rtc-signal closed the connection")
            reply = json.loads(line)
            if reply.get("id") == self.ids:
                return reply

    async def start(self):
        host, port = self.args.signal.rsplit(":", 1)
        reader, self.writer = await asyncio.open_connection(host, int(port), limit=1 << 20)
        joined = await self.request(
            reader, {"type": "join", "version": 1, "room": self.args.room, "uid": self.uid, "role": "subscriber"}
        )
        if joined.get("type") != "joined":
            raise RuntimeError(f"{self.uid}: join refused: {joined}")
        self.pc = RTCPeerConnection(RTCConfiguration(iceServers=[], bundlePolicy=RTCBundlePolicy.MAX_BUNDLE))

        @self.pc.on("connectionstatechange")
        def _state():
            if self.pc.connectionState == "connected":
                self.connected.set()

        @self.pc.on("track")
        def _track(track):
            self.tasks.append(asyncio.ensure_future(self.consume(track)))

        self.pc.addTransceiver("video", direction="recvonly")
        self.pc.addTransceiver("audio", direction="recvonly")
        await self.pc.setLocalDescription(await self.pc.createOffer())
        reply = await self.request(
            reader,
            {"type": "subscribe", "publisher": self.args.publisher, "receive": {"offer": self.pc.localDescription.sdp}},
        )
        if reply.get("type") != "subscribed":
            raise RuntimeError(f"{self.uid}: subscribe refused: {reply}")
        await self.pc.setRemoteDescription(RTCSessionDescription(sdp=reply["sdp"], type="answer"))
        self.tasks.append(asyncio.ensure_future(self.drain(reader)))
        await asyncio.wait_for(self.connected.wait(), 30)

    async def drain(self, reader):
        """Reads (and drops) what the server sends; pings so the connection stays."""
        last_ping = time.monotonic()
        while True:
            try:
                line = await asyncio.wait_for(reader.readline(), 5)
            except asyncio.TimeoutError:
                line = b"-"
            if not line:
                return
            if time.monotonic() - last_ping > 8:
                self.ids += 1
                self.writer.write((json.dumps({"type": "ping", "id": self.ids}) + "\n").encode())
                last_ping = time.monotonic()

    async def consume(self, track):
        while True:
            try:
                await track.recv()
            except Exception:
                return

    async def stop(self):
        for task in self.tasks:
            task.cancel()
        if self.pc:
            await self.pc.close()
        if self.writer:
            self.writer.close()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--signal", required=True)
    parser.add_argument("--room", required=True)
    parser.add_argument("--publisher", required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--viewers", type=int, default=50)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--hold", type=float, default=10)
    parser.add_argument("--after", type=float, default=20)
    args = parser.parse_args()
    start = time.monotonic()

    def report(phase, viewers, extra=None):
        line = {"phase": phase, "t": round(time.monotonic() - start, 1), "viewers": viewers} | sample(args.pid)
        print(json.dumps(line | (extra or {})), flush=True)
        return line

    before = report("before", 0)
    viewers = []
    failures = 0
    for first in range(0, args.viewers, args.batch):
        batch = [Viewer(index, args) for index in range(first, min(first + args.batch, args.viewers))]
        results = await asyncio.gather(*(viewer.start() for viewer in batch), return_exceptions=True)
        for viewer, result in zip(batch, results, strict=True):
            if isinstance(result, Exception):
                failures += 1
                print(json.dumps({"phase": "failed", "uid": viewer.uid, "error": str(result)}), flush=True)
                await viewer.stop()
            else:
                viewers.append(viewer)
        report("connecting", len(viewers))
    await asyncio.sleep(args.hold)
    connected = report("connected", len(viewers))
    # All but one leave first: rtc-publish gives freed memory back (malloc_trim) only when the
    # last viewer has gone, so this shows what glibc keeps without it.
    for viewer in viewers[1:]:
        await viewer.stop()
    one_left = None
    end = time.monotonic() + args.after / 2
    while time.monotonic() < end:
        await asyncio.sleep(2)
        one_left = report("one-left", min(len(viewers), 1))
    for viewer in viewers[:1]:
        await viewer.stop()
    left = None
    end = time.monotonic() + args.after / 2
    while time.monotonic() < end:
        await asyncio.sleep(2)
        left = report("left", 0)
    count = max(len(viewers), 1)
    print(
        json.dumps(
            {
                "phase": "summary",
                "viewers": len(viewers),
                "failed": failures,
                "threadsPerViewer": round((connected["threads"] - before["threads"]) / count, 2),
                "fdsPerViewer": round((connected["fds"] - before["fds"]) / count, 2),
                "rssKiBPerViewer": round((connected["rssKiB"] - before["rssKiB"]) / count),
                "rssKiBBefore": before["rssKiB"],
                "rssKiBConnected": connected["rssKiB"],
                "rssKiBOneLeft": one_left["rssKiB"] if one_left else None,
                "rssKiBAfterLeft": left["rssKiB"] if left else None,
                "threadsAfterLeft": left["threads"] if left else None,
                "fdsAfterLeft": left["fds"] if left else None,
            }
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
