"""Janus's HTTP API for the harness scripts (standard library only, so both the system Python and
out/venv import it): a session with a VideoRoom handle, synchronous requests, and the long-poll
for asynchronous events (a `join`'s answer, a subscriber's offer)."""

import json
import threading
import time
import urllib.request
import uuid


class JanusError(RuntimeError):
    pass


def http_json(url, body=None, timeout=10):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="GET" if body is None else "POST",
                                 headers={"Content-Type": "application/json"})
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
        return self._janus("%s/%d" % (self.base, self.session),
                           {"janus": "attach", "plugin": "janus.plugin.videoroom"})["data"]["id"]

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
