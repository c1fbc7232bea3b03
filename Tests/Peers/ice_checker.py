#!/usr/bin/env python3
"""An ICE peer that starts checking and never finishes (Python 3 standard library only), for
the publisher's connect-timeout test: its side of ICE has begun, so the publisher must keep it
for the whole connect timeout, not drop it as a viewer that never checked.

    python3 Tests/Peers/ice_checker.py --port PORT --ufrag U --pwd P --local-ufrag L --seconds S

Every 500 ms for S seconds it sends an RFC 8445 connectivity check (a STUN Binding request with
USERNAME "U:L", PRIORITY, ICE-CONTROLLING, MESSAGE-INTEGRITY keyed with P, FINGERPRINT) from one
socket on 127.0.0.1 to 127.0.0.1:PORT, and never reads that socket: the publisher's responses
and its own checks go unanswered, so no pair ever succeeds on its side. Prints one JSON line
per second: {"event": "checking", "sent": N}; and {"event": "done", "sent": N} at the end.
"""

import argparse
import hashlib
import hmac
import json
import os
import socket
import struct
import sys
import time
import zlib

MAGIC = 0x2112A442


def attribute(kind, value):
    padding = (4 - len(value) % 4) % 4
    return struct.pack("!HH", kind, len(value)) + value + b"\x00" * padding


def binding_request(username, password, tie_breaker):
    transaction = os.urandom(12)
    body = attribute(0x0006, username.encode())  # USERNAME
    body += attribute(0x0024, struct.pack("!I", 1853824767))  # PRIORITY (prflx, as browsers send)
    body += attribute(0x802A, struct.pack("!Q", tie_breaker))  # ICE-CONTROLLING
    # MESSAGE-INTEGRITY over the message with the length counting the attribute itself.
    header = struct.pack("!HHI", 0x0001, len(body) + 24, MAGIC) + transaction
    mac = hmac.new(password.encode(), header + body, hashlib.sha1).digest()
    body += attribute(0x0008, mac)
    # FINGERPRINT: CRC-32 of everything before it, with the length counting it, XOR "STUN".
    header = struct.pack("!HHI", 0x0001, len(body) + 8, MAGIC) + transaction
    crc = (zlib.crc32(header + body) & 0xFFFFFFFF) ^ 0x5354554E
    body += attribute(0x8028, struct.pack("!I", crc))
    return struct.pack("!HHI", 0x0001, len(body), MAGIC) + transaction + body


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ufrag", required=True, help="the publisher's ice-ufrag")
    parser.add_argument("--pwd", required=True, help="the publisher's ice-pwd")
    parser.add_argument("--local-ufrag", required=True, help="our ice-ufrag (from our offer)")
    parser.add_argument("--seconds", type=float, default=40)
    arguments = parser.parse_args()
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sender.bind(("127.0.0.1", 0))
    tie_breaker = int.from_bytes(os.urandom(8), "big")
    username = arguments.ufrag + ":" + arguments.local_ufrag
    sent = 0
    end = time.monotonic() + arguments.seconds
    next_report = time.monotonic()
    while time.monotonic() < end:
        sender.sendto(binding_request(username, arguments.pwd, tie_breaker), ("127.0.0.1", arguments.port))
        sent += 1
        if time.monotonic() >= next_report:
            print(json.dumps({"event": "checking", "sent": sent}), flush=True)
            next_report += 1
        time.sleep(0.5)
    print(json.dumps({"event": "done", "sent": sent}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
