#!/usr/bin/env python3
"""Janus's HTTP API for the harness scripts (standard library only, so both the system Python and
out/venv import it): a session with a VideoRoom handle, synchronous requests, and the long-poll
for asynchronous events (a `join`'s answer, a subscriber's offer).

Also a small command line for tests, run inside the harness's namespace (janus_room.py):
    python3 janus_api.py participants --janus http://127.0.0.1:8088/janus --room 1234
        prints the room's participants as one JSON list ([{"id", "display", "publisher", ...}]);
    python3 janus_api.py whip-endpoint --whip-server http://127.0.0.1:7080 --id ID --room 1234
        [--token T]
        creates a WHIP endpoint on simple-whip-server (`POST /whip/create`) that publishes into
        the room and prints {"whip": URL}.
Exit status 1 with one line on stderr when Janus or the WHIP server refuses or does not answer.
"""

import sys

sys.dont_write_bytecode = True  # keep Tests/Peers free of __pycache__

import argparse  # noqa: E402
import json  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import urllib.error  # noqa: E402
import urllib.request  # noqa: E402
import uuid  # noqa: E402


class JanusError(RuntimeError):
    pass


def http_json(url, body=None, timeout=10):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        url, data=data, method="GET" if body is None else "POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read().decode())


class Janus:
    """A session with one VideoRoom handle (more with `attach`). `lock` is re-entrant: a caller
    may hold it across a request and the event it waits for, as other threads share the session."""

    def __init__(self, base):
        self.base = base
        self.lock = threading.RLock()
        self.session = self._janus(base, {"janus": "create"})["data"]["id"]
        self.handle = self.attach()

    def _janus(self, url, body):
        body = dict(body, transaction=uuid.uuid4().hex[:12])
        reply = http_json(url, body)
        if reply.get("janus") == "error":
            raise JanusError(reply["error"])
        return reply

    def attach(self):
        return self._janus(
            "%s/%d" % (self.base, self.session), {"janus": "attach", "plugin": "janus.plugin.videoroom"}
        )["data"]["id"]

    def detach(self, handle):
        self._janus("%s/%d/%d" % (self.base, self.session, handle), {"janus": "detach"})

    def request(self, body, handle=None, jsep=None):
        """A VideoRoom request (create, listparticipants, join, start, ...): its synchronous data
        ({} for an asynchronous one, whose result comes as an event)."""
        message = {"janus": "message", "body": body}
        if jsep:
            message["jsep"] = jsep
        with self.lock:
            reply = self._janus("%s/%d/%d" % (self.base, self.session, handle or self.handle), message)
        data = reply.get("plugindata", {}).get("data", {})
        if "error" in data:
            raise JanusError("%s: %s" % (body.get("request"), data["error"]))
        return data

    def participants(self, room):
        return self.request({"request": "listparticipants", "room": room})["participants"]

    def keepalive(self):
        with self.lock:
            self._janus("%s/%d" % (self.base, self.session), {"janus": "keepalive"})

    def event(self, handle=None, timeout=10):
        """The next plugin event of `handle` (default ours) and its jsep, if any."""
        handle = handle or self.handle
        deadline = time.time() + timeout
        while time.time() < deadline:
            ev = http_json("%s/%d?maxev=1" % (self.base, self.session), timeout=40)
            if ev.get("sender") == handle and ev.get("janus") == "event":
                data = ev["plugindata"]["data"]
                if "error" in data:
                    raise JanusError("videoroom: %s" % data["error"])
                return data, ev.get("jsep")
        raise JanusError("no event for handle %d within %d s" % (handle, timeout))

    def destroy(self):
        try:
            self._janus("%s/%d" % (self.base, self.session), {"janus": "destroy"})
        except Exception:
            pass


def create_whip_endpoint(server, endpoint_id, room, token=None, label="rtc-publish"):
    """A WHIP endpoint on simple-whip-server at `server` (http://HOST:PORT) publishing into the
    VideoRoom `room`; returns its URL."""
    body = {"id": endpoint_id, "room": room, "label": label}
    if token:
        body["token"] = token
    req = urllib.request.Request(
        server + "/whip/create",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=5) as r:
        if r.status != 200:
            raise JanusError("POST /whip/create: %d" % r.status)
    return "%s/whip/endpoint/%s" % (server, endpoint_id)


def main():
    ap = argparse.ArgumentParser(description="Janus VideoRoom and simple-whip-server requests")
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("participants", help="print the room's participants as a JSON list")
    p.add_argument("--janus", required=True, help="Janus HTTP API, e.g. http://127.0.0.1:8088/janus")
    p.add_argument("--room", type=int, required=True)
    w = sub.add_parser("whip-endpoint", help="create a WHIP endpoint into the room")
    w.add_argument("--whip-server", required=True, help="e.g. http://127.0.0.1:7080")
    w.add_argument("--id", required=True)
    w.add_argument("--room", type=int, required=True)
    w.add_argument("--token")
    args = ap.parse_args()
    try:
        if args.command == "participants":
            janus = Janus(args.janus)
            try:
                print(json.dumps(janus.participants(args.room)), flush=True)
            finally:
                janus.destroy()
        else:
            url = create_whip_endpoint(args.whip_server, args.id, args.room, args.token)
            print(json.dumps({"whip": url}), flush=True)
    except (JanusError, urllib.error.URLError, OSError, ValueError, KeyError) as e:
        print("janus_api: %s: %s" % (args.command, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
