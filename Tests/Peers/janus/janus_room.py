#!/usr/bin/env python3
"""A Janus 1.1.2 VideoRoom with a WHIP front (simple-whip-server), inside a network namespace.

Python 3 standard library only; run as root (it creates a network namespace). scripts/setup.sh
installs what it needs (janus, and simple-whip-server unpacked into out/janus/whip-prefix).

It creates the namespace NS (`ip netns add`): lo up, IPv6 off, and a veth pair whose one end
carries 127.0.0.2/32 (Janus never gathers on a loopback interface, see shared/field-notes.md,
"Janus 1.1.2"). No address outside 127.0.0.0/8 is ever configured or contacted. Inside it:
  - Janus "A": HTTP API on 127.0.0.1:8088/janus, WebSocket API on 127.0.0.1:8188, ICE only on
    127.0.0.2 (`ice_enforce_list`) and on UDP ports 20000-20999 (`rtp_port_range`), no STUN; a
    VideoRoom (ROOM) created through the HTTP API for our stream: H.264 (profile-level-id
    42e01f preferred) and Opus, RTCP NACK (RTX) and PLI as every Janus publisher gets them, no
    periodic key-frame requests (`fir_freq` 0: a key frame comes only when asked for);
  - simple-whip-server on port 7080 (it binds all addresses of the namespace), talking to A over
    WebSocket, and one WHIP endpoint created with `POST /whip/create`;
  - with --cascade, Janus "B" (HTTP on 127.0.0.1:8089/janus, ICE on UDP 21000-21999) with the
    same room, and every publisher that appears in A's room is cascaded to B as a remote
    publisher (`add_remote_publisher` on B, then `publish_remotely` on A, plain RTP over
    127.0.0.1); a JSON line {"event": "cascaded", ...} is printed for each.

The namespace's nftables: the guard table `inet rtcguard` (nothing leaves 127.0.0.0/8; counted)
and an empty table `inet rtc_loss` whose chain `output` (output hook, before the guard) a test
fills at run time, e.g. 3 % random loss on the publisher -> Janus A leg only:
    ip netns exec NS nft add rule inet rtc_loss output ip daddr 127.0.0.2 udp dport 20000-20999 \
        udp length '>' 300 numgen random mod 100 '<' 3 counter name dropped drop
    ip netns exec NS nft list counter inet rtc_loss dropped      # sends dropped so far
    ip netns exec NS nft flush chain inet rtc_loss output        # loss off
(UDP to A's ICE ports longer than 300 bytes is the publisher's video and its retransmissions:
STUN, RTCP and Opus are shorter, A's answers to subscribers go to their ports, and A's cascade
to B goes to B's remote-publisher ports.)

It prints one JSON line when ready:
  {"event": "ready", "ns": NS, "whip": URL, "whip_server": URL, "janus": URL, "janus_b": URL|null,
   "room": ROOM, "ice_address": "127.0.0.2", "rtp_ports": {"a": "20000-20999", "b": ...},
   "loss": {"family": "inet", "table": "rtc_loss", "chain": "output", "counter": "dropped"}, ...}
then {"event": "cascaded"|"uncascaded", ...} lines, and runs until SIGINT/SIGTERM or until its
parent process is gone (a test run that was killed), then stops every process it started and
deletes the namespace. One instance can serve a whole test suite: publishers come and go, each
is cascaded while it lasts. Clients must run inside the namespace too (`ip netns exec NS ...`)
and gather on 127.0.0.2.
"""

import sys

sys.dont_write_bytecode = True  # keep Tests/Peers free of __pycache__

import argparse  # noqa: E402
import ctypes  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import urllib.error  # noqa: E402
import urllib.request  # noqa: E402

from janus_api import Janus, JanusError, create_whip_endpoint  # noqa: E402 (this folder)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
PREFIX = os.path.join(ROOT, "out", "janus", "whip-prefix")
JANUS_LIB = "/usr/lib/x86_64-linux-gnu/janus"
ICE_ADDRESS = "127.0.0.2"
# Fixed and distinct, so a test can tell the legs apart: UDP to A's range is the publisher's (and
# A's subscribers' RTCP); B's remote publishers get ports from the VideoRoom's own range (10000+).
RTP_RANGE_A = "20000-20999"
RTP_RANGE_B = "21000-21999"
WHIP_PORT = 7080

# Everything but the VideoRoom and the HTTP/WebSocket transports stays unloaded.
OTHER_PLUGINS = [
    "audiobridge",
    "duktape",
    "echotest",
    "lua",
    "nosip",
    "recordplay",
    "sip",
    "streaming",
    "textroom",
    "videocall",
    "voicemail",
]
OTHER_TRANSPORTS = ["mqtt", "nanomsg", "pfunix", "rabbitmq"]


def log(*args):
    print("janus_room:", *args, file=sys.stderr, flush=True)


def emit(obj):
    print(json.dumps(obj), flush=True)


def run(*cmd, check=True):
    return subprocess.run(cmd, check=check, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


# --- the network namespace --------------------------------------------------------------------


def make_namespace(ns):
    run("ip", "netns", "add", ns)
    try:
        run("ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1")
        run("ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv6.conf.default.disable_ipv6=1")
        run("ip", "-n", ns, "link", "set", "lo", "up")
        run("ip", "-n", ns, "link", "add", "jv0", "type", "veth", "peer", "name", "jv1")
        run("ip", "-n", ns, "addr", "add", ICE_ADDRESS + "/32", "dev", "jv0")
        run("ip", "-n", ns, "link", "set", "jv0", "up")
        run("ip", "-n", ns, "link", "set", "jv1", "up")
        # Guard: nothing leaves 127.0.0.0/8 (counted, then dropped; read at teardown). And the
        # empty loss chain tests add their rules to.
        subprocess.run(
            ["ip", "netns", "exec", ns, "nft", "-f", "-"],
            check=True,
            text=True,
            input=NFT_GUARD + NFT_LOSS,
            stderr=subprocess.PIPE,
        )
    except BaseException:
        run("ip", "netns", "del", ns, check=False)
        raise


NFT_GUARD = """
table inet rtcguard {
    chain out {
        type filter hook output priority 0; policy accept;
        meta nfproto ipv6 counter drop comment "ipv6"
        ip daddr != 127.0.0.0/8 counter drop comment "outside"
    }
}
"""

LOSS = {"family": "inet", "table": "rtc_loss", "chain": "output", "counter": "dropped"}
NFT_LOSS = """
table inet rtc_loss {
    counter dropped {
    }
    chain output {
        type filter hook output priority -10; policy accept;
    }
}
"""


def guard_counts(ns):
    """Packets the guard dropped: {"ipv6": n, "outside": n}."""
    out = subprocess.run(
        ["ip", "netns", "exec", ns, "nft", "-j", "list", "table", "inet", "rtcguard"], capture_output=True, text=True
    ).stdout
    counts = {}
    try:
        for item in json.loads(out)["nftables"]:
            rule = item.get("rule")
            if rule:
                n = [e["counter"]["packets"] for e in rule["expr"] if "counter" in e]
                counts[rule.get("comment", "?")] = n[0] if n else None
    except (ValueError, KeyError):
        pass
    return counts


def enter_namespace(ns):
    """This process's own HTTP calls go to the namespace's 127.0.0.1 (Python 3.11: no os.setns)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open("/run/netns/" + ns, os.O_RDONLY)
    try:
        if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
            raise OSError(ctypes.get_errno(), "setns " + ns)
    finally:
        os.close(fd)


def delete_namespace(ns):
    pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
    for pid in pids:  # only ours can be there: the namespace is ours (this process is in it too)
        if pid == str(os.getpid()):
            continue
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass
    run("ip", "netns", "del", ns, check=False)


# --- Janus configuration ----------------------------------------------------------------------


def write_janus_config(folder, http_port, admin_port, ws_port, rtp_range, debug_level):
    os.makedirs(folder, exist_ok=True)
    disable_plugins = ",".join("libjanus_%s.so" % p for p in OTHER_PLUGINS)
    transports = list(OTHER_TRANSPORTS) + ([] if ws_port else ["websockets"])
    disable_transports = ",".join("libjanus_%s.so" % t for t in transports)
    files = {
        "janus.jcfg": f"""
general: {{
    configs_folder = "{folder}"
    plugins_folder = "{JANUS_LIB}/plugins"
    transports_folder = "{JANUS_LIB}/transports"
    events_folder = "{JANUS_LIB}/events"
    loggers_folder = "{JANUS_LIB}/loggers"
    debug_level = {debug_level}
    debug_timestamps = true
    session_timeout = 60
    server_name = "rtc-test-{os.path.basename(folder)}"
}}
certificates: {{
}}
media: {{
    ipv6 = false
    rtp_port_range = "{rtp_range}"
}}
nat: {{
    # No stun_server, no turn_server, no nat_1_1_mapping: Janus never contacts STUN/TURN.
    nice_debug = false
    ignore_mdns = true
    full_trickle = false
    # Janus skips loopback interfaces before this list: 127.0.0.2 sits on a veth (jv0).
    ice_enforce_list = "{ICE_ADDRESS}"
}}
plugins: {{
    disable = "{disable_plugins}"
}}
transports: {{
    disable = "{disable_transports}"
}}
loggers: {{
    disable = "libjanus_jsonlog.so"
}}
events: {{
    broadcast = false
}}
""",
        "janus.transport.http.jcfg": f"""
general: {{
    json = "indented"
    base_path = "/janus"
    http = true
    port = {http_port}
    ip = "127.0.0.1"
    https = false
}}
admin: {{
    admin_base_path = "/admin"
    admin_http = true
    admin_port = {admin_port}
    admin_ip = "127.0.0.1"
    admin_https = false
}}
cors: {{
}}
""",
        "janus.plugin.videoroom.jcfg": """
general: {
    # No admin_key: create, rtp_forward, add_remote_publisher and publish_remotely need none.
}
""",
    }
    if ws_port:
        files["janus.transport.websockets.jcfg"] = f"""
general: {{
    json = "indented"
    ws = true
    ws_port = {ws_port}
    ws_ip = "127.0.0.1"
    wss = false
}}
admin: {{
    admin_ws = false
    admin_wss = false
}}
"""
    for name, text in files.items():
        with open(os.path.join(folder, name), "w") as f:
            f.write(text.lstrip())
    return os.path.join(folder, "janus.jcfg")


# --- Janus HTTP API ---------------------------------------------------------------------------


def create_room(j, room, publishers=16):
    """The room our publisher's stream fits (Janus 1.1.2 VideoRoom `create`): H.264 only, the
    constrained-baseline profile-level-id 42e01f preferred, Opus with in-band FEC. NACK and PLI
    need no setting: Janus answers `nack`, `nack pli` and `ccm fir` feedback (and RTX) to every
    video publisher that offers them, NACKs the gaps in what it receives (it forwards the
    retransmissions to subscribers as ordinary packets) and passes subscribers' PLIs on to the
    publisher. `fir_freq` 0: no periodic key-frame requests, so a key
    frame after a subscriber's PLI is the publisher's answer to it. The header extensions Janus
    can use with a publisher (transport-wide CC, audio level, video orientation, playout delay)
    are allowed: each is used only when the publisher's offer has it."""
    body = {
        "request": "create",
        "room": room,
        "permanent": False,
        "description": "rtc-test %d" % room,
        "publishers": publishers,
        "videocodec": "h264",
        "h264_profile": "42e01f",
        "audiocodec": "opus",
        "opus_fec": True,
        "bitrate": 2500000,
        "fir_freq": 0,
        "notify_joining": True,
        "transport_wide_cc_ext": True,
        "audiolevel_ext": True,
        "videoorient_ext": True,
        "playoutdelay_ext": True,
    }
    return j.request(body)


def list_participants(j, room):
    return j.request({"request": "listparticipants", "room": room})["participants"]


def publisher_streams(j, room, publisher_id):
    """The streams of a publisher (type, mindex, mid, codec...), as a participant sees them:
    join as a (non-publishing) publisher, read the 'publishers' list, leave."""
    handle = j.attach()
    try:
        with j.lock:
            j.request(
                {"request": "join", "ptype": "publisher", "room": room, "display": "cascade-probe"}, handle=handle
            )
            data, _ = j.event(handle)
        for p in data.get("publishers", []):
            if p["id"] == publisher_id:
                return p
        raise JanusError("publisher %d not in room %d" % (publisher_id, room))
    finally:
        try:
            j.detach(handle)
        except Exception:
            pass


def add_remote_publisher(jb, room, display, streams, iface="127.0.0.1"):
    """On B: a remote publisher whose RTP arrives on B's returned ip/port (and RTCP on rtcp_port)."""
    keep = (
        "type",
        "mindex",
        "mid",
        "codec",
        "disabled",
        "description",
        "stereo",
        "fec",
        "dtx",
        "h264-profile",
        "vp9-profile",
        "simulcast",
        "svc",
        "audiolevel_ext_id",
        "videoorient_ext_id",
        "playoutdelay_ext_id",
    )
    clean = []
    for s in streams:
        c = {k: s[k] for k in keep if k in s}
        # Without "h264-profile" B offers H.264 with no fmtp at all (so packetization-mode 0),
        # which aiortc refuses ("Failed to set remote video description send parameters").
        if c.get("codec") == "h264" and "h264-profile" not in c:
            c["h264-profile"] = s.get("h264_profile") or "42e01f"
        clean.append(c)
    return jb.request(
        {
            "request": "add_remote_publisher",
            "room": room,
            "display": display,
            "iface": iface,
            "port": 0,
            "streams": clean,
        }
    )


def publish_remotely(ja, room, publisher_id, remote_id, host, port, rtcp_port):
    """On A: forward the publisher's RTP to B's remote publisher (plain RTP; RTCP back to A)."""
    return ja.request(
        {
            "request": "publish_remotely",
            "room": room,
            "publisher_id": publisher_id,
            "remote_id": remote_id,
            "host": host,
            "host_family": "ipv4",
            "port": port,
            "rtcp_port": rtcp_port,
        }
    )


def remove_remote_publisher(jb, room, remote_publisher_id):
    return jb.request({"request": "remove_remote_publisher", "room": room, "id": remote_publisher_id})


# --- processes --------------------------------------------------------------------------------


def wait_http(url, proc, what, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("%s exited with %s" % (what, proc.returncode))
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                return r.read()
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.05)
    raise RuntimeError("%s did not answer %s within %d s" % (what, url, timeout))


def start_janus(ns, folder, name, http_port, admin_port, ws_port, rtp_range, debug_level):
    conf = write_janus_config(folder, http_port, admin_port, ws_port, rtp_range, debug_level)
    logfile = os.path.join(folder, "janus.log")
    t0 = time.time()
    out = open(os.path.join(folder, "janus.stdout"), "w")
    proc = subprocess.Popen(
        ["ip", "netns", "exec", ns, "janus", "-F", folder, "-C", conf, "-o", "-N", "-L", logfile],
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = "http://127.0.0.1:%d/janus" % http_port
    info = json.loads(wait_http(base + "/info", proc, "janus " + name))
    took = time.time() - t0
    log("janus %s %s up in %.2f s (log %s)" % (name, info.get("version_string"), took, logfile))
    return proc, base, took


def start_whip_server(ns, folder, port, janus_ws):
    os.makedirs(folder, exist_ok=True)
    src = os.path.join(PREFIX, "usr", "share", "simple-whip-server", "src")
    for f in ("server.js", "whip-janus.js"):
        shutil.copy(os.path.join(src, f), os.path.join(folder, f))
    with open(os.path.join(folder, "config.js"), "w") as f:  # the package's is a link to /etc
        f.write(
            "module.exports = %s;\n"
            % json.dumps(
                {
                    "janus": {"address": janus_ws},
                    "port": port,
                    "rest": "/whip",
                    "allowTrickle": True,
                    "strictETags": False,
                    "iceServers": [],
                },
                indent=1,
            )
        )
    env = dict(
        os.environ,
        NODE_PATH=":".join(
            [
                os.path.join(PREFIX, "usr", "share", "nodejs"),
                os.path.join(PREFIX, "usr", "lib", "x86_64-linux-gnu", "nodejs"),
            ]
        ),
        # Its log (whip/whip.log) names each endpoint's requests and sessions: "[ID] Publishing
        # to WHIP endpoint", "[ID] Terminating WHIP session" (a DELETE), "[ID] PeerConnection
        # detected as closed" (Janus hung up), and the offers it got.
        NODE_ENV="production",
        DEBUG="whip:*",
        DEBUG_COLORS="no",
    )
    out = open(os.path.join(folder, "whip.log"), "w")
    proc = subprocess.Popen(
        ["ip", "netns", "exec", ns, "node", "server.js"],
        cwd=folder,
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    wait_http("http://127.0.0.1:%d/whip/healthcheck" % port, proc, "simple-whip-server")
    # It answers before its Janus WebSocket session exists: wait for "[ 'Janus OK', ... ]".
    deadline = time.time() + 10
    while "'Janus OK'" not in open(os.path.join(folder, "whip.log")).read():
        if time.time() > deadline or proc.poll() is not None:
            raise RuntimeError("simple-whip-server never connected to Janus (see %s)" % out.name)
        time.sleep(0.05)
    return proc


def stop(proc, name):
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        log("%s ignored SIGTERM, killing" % name)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        pass


# --- main -------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ns", default="rtcjanus%d" % os.getpid())
    ap.add_argument("--room", type=int, default=1234)
    ap.add_argument("--endpoint", default="rtc", help="WHIP endpoint id")
    ap.add_argument("--token", default=None, help="WHIP bearer token the endpoint requires")
    ap.add_argument("--cascade", action="store_true", help="also Janus B, cascaded from A")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--debug-level", type=int, default=4)
    args = ap.parse_args()
    # A parent may have blocked signals (Swift Testing's runner threads block SIGINT and SIGTERM,
    # and a child inherits the mask): unblock them, for our handlers and for Janus's and node's.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    # ip and nft live in sbin, which a test runner's PATH may lack.
    path = os.environ.get("PATH", "").split(":")
    os.environ["PATH"] = ":".join(path + [d for d in ("/usr/sbin", "/sbin", "/usr/bin", "/bin") if d not in path])
    if os.geteuid() != 0:
        sys.exit("janus_room: needs root (ip netns)")
    if (
        not os.path.exists(os.path.join(PREFIX, "usr/share/simple-whip-server/src/server.js"))
        or shutil.which("janus") is None
    ):
        sys.exit("janus_room: janus or simple-whip-server missing: run scripts/setup.sh first")

    workdir = args.workdir or os.path.join(ROOT, "out", "janus", "run-" + args.ns)
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    # A plain flag, not a threading.Event: the handler runs on the main thread between two
    # bytecodes, possibly inside Event.wait holding the Event's lock, and Event.set would then
    # wait for that lock forever.
    stopping = []
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, lambda *_: stopping.append(True))

    parent = os.getppid()
    procs = []  # (name, Popen), stopped in reverse order
    ja = jb = None
    t_start = time.time()
    make_namespace(args.ns)
    try:
        enter_namespace(args.ns)
        pa, base_a, took_a = start_janus(
            args.ns, os.path.join(workdir, "A"), "A", 8088, 7088, 8188, RTP_RANGE_A, args.debug_level
        )
        procs.append(("janus A", pa))
        ja = Janus(base_a)
        create_room(ja, args.room)
        base_b = took_b = None
        if args.cascade:
            pb, base_b, took_b = start_janus(
                args.ns, os.path.join(workdir, "B"), "B", 8089, 7089, None, RTP_RANGE_B, args.debug_level
            )
            procs.append(("janus B", pb))
            jb = Janus(base_b)
            create_room(jb, args.room)
        pw = start_whip_server(args.ns, os.path.join(workdir, "whip"), WHIP_PORT, "ws://127.0.0.1:8188")
        procs.append(("simple-whip-server", pw))
        whip_server = "http://127.0.0.1:%d" % WHIP_PORT
        whip = create_whip_endpoint(whip_server, args.endpoint, args.room, args.token)
        emit(
            {
                "event": "ready",
                "ns": args.ns,
                "whip": whip,
                "whip_server": whip_server,
                "janus": base_a,
                "janus_b": base_b,
                "room": args.room,
                "ice_address": ICE_ADDRESS,
                "rtp_ports": {"a": RTP_RANGE_A, "b": RTP_RANGE_B if args.cascade else None},
                "loss": LOSS,
                "workdir": workdir,
                "janus_start_s": round(took_a, 3),
                "janus_b_start_s": None if took_b is None else round(took_b, 3),
                "ready_s": round(time.time() - t_start, 3),
            }
        )

        cascaded = {}  # A publisher id -> B remote publisher id
        last_keepalive = time.time()
        while not stopping:
            if os.getppid() != parent:
                log("parent process %d is gone: stopping" % parent)
                break
            for name, p in procs:
                if p.poll() is not None:
                    raise RuntimeError("%s exited with %s" % (name, p.returncode))
            if time.time() - last_keepalive > 20:
                ja.keepalive()
                if jb:
                    jb.keepalive()
                last_keepalive = time.time()
            if jb:
                present = {p["id"]: p for p in list_participants(ja, args.room) if p.get("publisher")}
                for pid, p in present.items():
                    if pid in cascaded:
                        continue
                    info = publisher_streams(ja, args.room, pid)
                    if not any(s.get("codec") for s in info.get("streams", [])):
                        continue  # not negotiated yet
                    t0 = time.time()
                    rb = add_remote_publisher(jb, args.room, p.get("display", "remote"), info["streams"])
                    publish_remotely(ja, args.room, pid, "B-%d" % pid, rb["ip"], rb["port"], rb["rtcp_port"])
                    cascaded[pid] = rb["id"]
                    emit(
                        {
                            "event": "cascaded",
                            "publisher_a": pid,
                            "publisher_b": rb["id"],
                            "b_ip": rb["ip"],
                            "b_port": rb["port"],
                            "b_rtcp_port": rb["rtcp_port"],
                            "streams": info["streams"],
                            "took_s": round(time.time() - t0, 3),
                        }
                    )
                for pid in [pid for pid in cascaded if pid not in present]:
                    try:
                        remove_remote_publisher(jb, args.room, cascaded[pid])
                    except JanusError as e:
                        log("remove_remote_publisher:", e)
                    emit({"event": "uncascaded", "publisher_a": pid, "publisher_b": cascaded.pop(pid)})
            time.sleep(0.3)
    except Exception as e:
        log("error:", e)
        emit({"event": "error", "error": str(e)})
        status = 1
    else:
        status = 0
    finally:
        for j in (jb, ja):
            if j:
                j.destroy()
        for name, p in reversed(procs):
            stop(p, name)
        emit({"event": "stopped", "guard_dropped": guard_counts(args.ns)})
        delete_namespace(args.ns)
        log("stopped; namespace %s deleted" % args.ns)
    sys.exit(status)


if __name__ == "__main__":
    main()
