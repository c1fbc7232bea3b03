#!/usr/bin/env python3
"""A WHIP endpoint that misbehaves on purpose, for the WHIP client's error tests (Python 3
standard library only). An HTTP/1.1 server on 127.0.0.1 (never another address):

    python3 Tests/Peers/whip_bad_endpoint.py --port 0

It prints one JSON line when listening, {"event": "ready", "port": PORT} (--port 0: a free port
the kernel chose), then one JSON line per request as soon as it has read the request's body:
    {"event": "request", "t": seconds since start, "method": "POST", "path": "/500",
     "query": "", "has_authorization": bool, "authorization_scheme": "Bearer"|null,
     "content_type": "application/sdp"|null, "body_bytes": 1234}
and a line {"event": "closed", "path": "/silent", ...} when a client gives up on /silent.

Paths (any method but DELETE unless said otherwise):
  /401            401, `WWW-Authenticate: Bearer`
  /404            404
  /500            500, every time
  /malformed      201, `Location: /resource/x`, `Content-Type: application/sdp`, and a body that
                  is not SDP; DELETE /resource/x then answers 200
  /loop-a         307 to /loop-b, which answers 307 to /loop-a: a redirect loop
  /silent         reads the whole request and never answers; the connection stays open until the
                  client closes it
  /redirect-to?target=URL-ENCODED   307 to that target (relative or absolute)
  anything else   404; DELETE of anything but /resource/x: 404
Every answer has a Content-Length; connections stay open between requests (HTTP/1.1).
Runs until SIGINT/SIGTERM.
"""

import sys

sys.dont_write_bytecode = True  # keep Tests/Peers free of __pycache__

import argparse  # noqa: E402
import http.server  # noqa: E402
import json  # noqa: E402
import select  # noqa: E402
import signal  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import urllib.parse  # noqa: E402

START = time.monotonic()
PRINT = threading.Lock()

NOT_SDP = b"<html><body>This is not a session description.</body></html>\r\n"


def emit(obj):
    with PRINT:
        print(json.dumps(obj), flush=True)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "whip-bad-endpoint/1"

    def log_message(self, format, *args):  # the JSON lines are the log
        pass

    def _read(self):
        """Reads the body and prints the request's line; returns (path, query)."""
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        url = urllib.parse.urlsplit(self.path)
        authorization = self.headers.get("Authorization")
        emit(
            {
                "event": "request",
                "t": round(time.monotonic() - START, 3),
                "method": self.command,
                "path": url.path,
                "query": url.query,
                "has_authorization": authorization is not None,
                "authorization_scheme": authorization.split(" ", 1)[0] if authorization else None,
                "content_type": self.headers.get("Content-Type"),
                "body_bytes": len(body),
            }
        )
        return url.path, url.query

    def _answer(self, status, headers=(), body=b""):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def _silent(self, path):
        """Never answers: waits until the client closes its end (or the server stops)."""
        self.close_connection = True
        connection = self.connection
        while not self.server.stopping.is_set():
            readable, _, _ = select.select([connection], [], [], 0.2)
            if readable:
                try:
                    data = connection.recv(4096)
                except OSError:
                    data = b""
                if not data:
                    emit({"event": "closed", "t": round(time.monotonic() - START, 3), "path": path})
                    return

    def _route(self):
        path, query = self._read()
        if self.command == "DELETE":
            if path == "/resource/x":
                return self._answer(200)
            return self._answer(404, [("Content-Type", "text/plain")], b"no such resource\n")
        if path == "/401":
            return self._answer(
                401, [("WWW-Authenticate", "Bearer"), ("Content-Type", "text/plain")], b"unauthorized\n"
            )
        if path == "/404":
            return self._answer(404, [("Content-Type", "text/plain")], b"no such endpoint\n")
        if path == "/500":
            return self._answer(500, [("Content-Type", "text/plain")], b"internal error\n")
        if path == "/malformed":
            return self._answer(201, [("Location", "/resource/x"), ("Content-Type", "application/sdp")], NOT_SDP)
        if path == "/loop-a":
            return self._answer(307, [("Location", "/loop-b")])
        if path == "/loop-b":
            return self._answer(307, [("Location", "/loop-a")])
        if path == "/silent":
            return self._silent(path)
        if path == "/redirect-to":
            target = urllib.parse.parse_qs(query).get("target", [None])[0]
            if not target:
                return self._answer(400, [("Content-Type", "text/plain")], b"target missing\n")
            return self._answer(307, [("Location", target)])
        return self._answer(404, [("Content-Type", "text/plain")], b"no such endpoint\n")

    do_POST = do_GET = do_PUT = do_PATCH = do_OPTIONS = do_HEAD = do_DELETE = _route


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, *args):
        self.stopping = threading.Event()
        super().__init__(*args)


def main():
    ap = argparse.ArgumentParser(description="a WHIP endpoint that misbehaves, per path")
    ap.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: any free)")
    args = ap.parse_args()
    # A parent may have blocked SIGINT and SIGTERM (Swift Testing's runner threads do, and a
    # child inherits the mask): unblock them, so the handlers below run.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    server = Server(("127.0.0.1", args.port), Handler)
    emit({"event": "ready", "port": server.server_address[1]})

    def stop(*_):
        server.stopping.set()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    server.serve_forever(poll_interval=0.2)
    server.server_close()


if __name__ == "__main__":
    main()
