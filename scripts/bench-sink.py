#!/usr/bin/env python3
"""Drains the loopback UDP ports a benchmark run sends to, so no send ever fails.

Binds every port given on 127.0.0.1 (RTP and RTCP of both streams), reads until SIGTERM or
SIGINT, then writes one JSON object to --out: per port the datagrams, bytes and (for RTP) how
many carried the marker bit. RTP headers stay clear under SRTP (RFC 3711 section 3.1), so
marker bits on the video port count the frames that went out, whoever sent them.

--record FILE also keeps every datagram, as it arrives: a 12-byte record header (little-endian
float64 CLOCK_MONOTONIC seconds, uint16 port, uint16 length) followed by the datagram
(scripts/screen-session.py reads it: bytes per phase, and the stream it decodes).
"""

import argparse
import json
import selectors
import signal
import socket
import struct
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ports", required=True, help="comma-separated UDP ports to drain")
    parser.add_argument("--out", required=True, help="file for the JSON summary")
    parser.add_argument("--record", help="also write every datagram, with its arrival time, to this file")
    args = parser.parse_args()
    try:
        ports = [int(p) for p in args.ports.split(",") if p]
    except ValueError:
        print(f"bench-sink: --ports '{args.ports}' is not a list of numbers", file=sys.stderr)
        return 2
    if not ports or any(not 1 <= p <= 65535 for p in ports):
        print(f"bench-sink: --ports '{args.ports}' needs ports within 1..65535", file=sys.stderr)
        return 2

    selector = selectors.DefaultSelector()
    counts = {}
    for port in ports:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        # A large receive buffer keeps unpaced bursts from being dropped here (root may force it).
        for option in (getattr(socket, "SO_RCVBUFFORCE", None), socket.SO_RCVBUF):
            if option is None:
                continue
            try:
                sock.setsockopt(socket.SOL_SOCKET, option, 8 << 20)
                break
            except OSError:
                continue
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as error:
            print(f"bench-sink: cannot bind 127.0.0.1:{port}: {error.strerror}", file=sys.stderr)
            return 1
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ, port)
        counts[port] = {"packets": 0, "bytes": 0, "markers": 0}

    record = open(args.record, "wb", buffering=1 << 20) if args.record else None
    stopping = False

    def stop(_signum, _frame):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print("ready", flush=True)

    buffer = bytearray(65536)
    view = memoryview(buffer)
    while not stopping:
        for key, _ in selector.select(timeout=0.2):
            entry = counts[key.data]
            while True:
                try:
                    length = key.fileobj.recv_into(view)
                except (BlockingIOError, InterruptedError):
                    break
                entry["packets"] += 1
                entry["bytes"] += length
                if record is not None:
                    record.write(struct.pack("<dHH", time.monotonic(), key.data, length))
                    record.write(view[:length])
                if length >= 12 and buffer[0] >> 6 == 2 and buffer[1] & 0x80:
                    entry["markers"] += 1

    if record is not None:
        record.close()
    with open(args.out, "w") as out:
        json.dump({str(port): entry for port, entry in counts.items()}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
