#!/usr/bin/env python3
"""A real bottleneck on `lo` inside a network namespace: htb + bfifo, fed by an nftables rule.

    bottleneck.py selftest [--netns rtc-NAME]
    bottleneck.py run --netns rtc-NAME --schedule 0:3000,20:1000,40:3000 \
        (--match 'udp sport 40000-40999' | --match-file FILE) [--start-on-match | --start-on-traffic] \
        [--duration S] [--settle 5] [--queue-bytes N] [--interval 0.05] [--out FILE] [--samples FILE]

What it sets up on the namespace's `lo` (this kernel: htb, tbf, bfifo, nftables; no netem):
  - root `htb` 1: with default class 1:20 (10 Gbit/s, 1 MB bursts, pfifo leaf of 10000 packets):
    signalling, STUN, RTCP feedback and everything else stay unshaped;
  - the shaped class 1:10, rate = ceil = the schedule's capacity, leaf `bfifo` 10: of
    --queue-bytes (default: 250 ms at the highest capacity of the schedule);
  - table `inet rtc_bottleneck`, chain `output` (type filter, hook output, priority mangle), rule
    `<MATCH> counter name "offered" meta mark set 0x10 meta priority set 1:10`, and, where the kernel
    has it, `tc filter ... handle 0x10 fw flowid 1:10`. This kernel has no cls_fw (and u32 ignores
    `match mark`: it has no CLS_U32_MARK, so such a filter would match everything); htb then
    classifies by skb->priority, which the same rule sets to the class id 1:10.

`run` follows the schedule (`tc class change`), samples the bfifo leaf (`tc -s -j qdisc show dev
lo`: this iproute2 prints htb *class* statistics only as text; the leaf's counters are the class's)
every --interval, and the nftables counter every 500 ms, and at the end writes one JSON summary
(the last line of stdout, and --out): per phase the delivered rate, utilisation, queueing delay
(backlog bytes x 8 / capacity) p50/p95/max over the settled part (phase start + --settle to its
end) and drops; the offered rate per 500 ms window (delivered + dropped + backlog change; the
dropped bytes are the drops times the window's mean packet size, so a dropped GSO batch counts as
one packet) and, as a cross-check, the bytes the nftables rule counted (IP bytes at the output
hook); per step the tracking time (see tracking()); overall queueing-delay percentiles after the
first settle. Raw samples go to --samples (JSON lines).

It prints `{"event":"ready",...}` once shaping is in place, `{"event":"match",...}` when the rule
is (re)installed and `{"event":"start","monotonic":T}` when the schedule's clock starts (at once,
with --start-on-match once the match is known, or with --start-on-traffic at the first packet
the rule counts, polled every --interval; T is CLOCK_MONOTONIC, shared by all processes).
SIGINT/SIGTERM end it early; it still writes the summary. The qdisc and the table are removed on
every exit.

Safety: it only ever configures a namespace named rtc-* that exists in /run/netns (created by the
caller), never the namespace it was started in unless that is such a namespace. Python 3.11
standard library only (setns through ctypes); run as root.
"""

import argparse
import ctypes
import itertools
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

PROG = "bottleneck"
MARK = 0x10
SHAPED = "1:10"
DEFAULT_CLASS = "1:20"
LEAF = "10:"
TABLE = "rtc_bottleneck"
WINDOW = 0.5  # offered-rate window, seconds
BAND = (0.85, 1.10)  # tracking band, x capacity
HOLD = 2.0  # seconds the 1-s average must stay in the band
MATCH_CHARS = re.compile(r"^[A-Za-z0-9 .:,{}/_\-!=<>]+$")
CLONE_NEWNET = 0x40000000


class Failure(Exception):
    """Ends the command non-zero with this one line."""


# ---------------------------------------------------------------------------------------------
# Namespaces


def netns_inode(path):
    return os.stat(path).st_ino


def enter_netns(name):
    """Moves this process (its calling thread, and every child started after) into /run/netns/NAME."""
    if not re.fullmatch(r"rtc-[A-Za-z0-9_.-]{1,40}", name or ""):
        raise Failure(f"namespace '{name}' is not named rtc-*: only our own namespaces are configured")
    path = f"/run/netns/{name}"
    if not os.path.exists(path):
        raise Failure(f"no network namespace '{name}' (create it first: ip netns add {name})")
    if netns_inode(path) == netns_inode("/proc/self/ns/net"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise Failure(f"setns({path}): {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)


def check_own_netns():
    """True when this process's network namespace is one of /run/netns/rtc-*."""
    here = netns_inode("/proc/self/ns/net")
    try:
        names = os.listdir("/run/netns")
    except FileNotFoundError:
        return False
    return any(n.startswith("rtc-") and netns_inode(f"/run/netns/{n}") == here for n in names)


def create_netns(name):
    """Creates an rtc-* namespace with lo up (the caller deletes it: delete_netns)."""
    if not name.startswith("rtc-"):
        raise Failure(f"namespace '{name}' is not named rtc-*")
    run(["ip", "netns", "add", name])
    run(["ip", "-n", name, "link", "set", "lo", "up"])


def delete_netns(name):
    """Kills what still runs in the namespace (our own children) and deletes it; best effort."""
    if not name.startswith("rtc-") or not os.path.exists(f"/run/netns/{name}"):
        return
    pids = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True).stdout.split()
    for pid in pids:
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
    subprocess.run(["ip", "netns", "del", name], capture_output=True)


# ---------------------------------------------------------------------------------------------
# tc and nft


def run(argv, check=True, input=None):
    result = subprocess.run(argv, capture_output=True, text=True, input=input)
    if check and result.returncode != 0:
        raise Failure(f"{' '.join(argv)}: {(result.stderr or result.stdout).strip()}")
    return result


def kbit(k):
    return f"{int(round(k))}kbit"


class Bottleneck:
    """The shaping of one namespace's lo. Call from a process that is inside that namespace."""

    def __init__(self, capacity_kbps, queue_bytes):
        if not check_own_netns():
            raise Failure("refusing to shape: this process is not inside an rtc-* namespace of /run/netns")
        self.capacity = capacity_kbps
        self.queue_bytes = int(queue_bytes)
        self.match = None
        self.classifier = None
        self.installed = False

    def setup(self):
        self.teardown()
        tc = ["tc"]
        run(tc + ["qdisc", "add", "dev", "lo", "root", "handle", "1:", "htb", "default", "20"])
        run(
            tc
            + [
                "class",
                "add",
                "dev",
                "lo",
                "parent",
                "1:",
                "classid",
                DEFAULT_CLASS,
                "htb",
                "rate",
                "10gbit",
                "ceil",
                "10gbit",
                "burst",
                "1mb",
                "cburst",
                "1mb",
                "quantum",
                "200000",
            ]
        )
        run(tc + ["qdisc", "add", "dev", "lo", "parent", DEFAULT_CLASS, "handle", "20:", "pfifo", "limit", "10000"])
        run(
            tc
            + [
                "class",
                "add",
                "dev",
                "lo",
                "parent",
                "1:",
                "classid",
                SHAPED,
                "htb",
                "rate",
                kbit(self.capacity),
                "ceil",
                kbit(self.capacity),
            ]
        )
        run(
            tc
            + ["qdisc", "add", "dev", "lo", "parent", SHAPED, "handle", LEAF, "bfifo", "limit", str(self.queue_bytes)]
        )
        fw = run(
            tc
            + [
                "filter",
                "add",
                "dev",
                "lo",
                "parent",
                "1:",
                "protocol",
                "all",
                "prio",
                "1",
                "handle",
                hex(MARK),
                "fw",
                "flowid",
                SHAPED,
            ],
            check=False,
        )
        if fw.returncode == 0:
            self.classifier = "fw (mark 0x10)"
        else:
            reason = (fw.stderr.strip().splitlines() or ["?"])[0]
            self.classifier = f"skb priority 1:10, set by the same nft rule (tc's fw filter: {reason})"
        run(
            ["nft", "-f", "-"],
            input=(
                f"table inet {TABLE} {{\n"
                "  counter offered { }\n"
                "  chain output { type filter hook output priority mangle; policy accept; }\n"
                "}\n"
            ),
        )
        self.installed = True

    def set_match(self, match):
        """(Re)installs the mark rule; an empty MATCH removes it."""
        match = (match or "").strip()
        if match and not MATCH_CHARS.match(match):
            raise Failure(f"MATCH '{match}' has characters an nft match does not need")
        run(["nft", "flush", "chain", "inet", TABLE, "output"])
        if match:
            run(
                [
                    "nft",
                    f'add rule inet {TABLE} output {match} counter name "offered" '
                    f"meta mark set {hex(MARK)} meta priority set {SHAPED}",
                ]
            )
        self.match = match or None

    def set_capacity(self, capacity_kbps):
        run(
            [
                "tc",
                "class",
                "change",
                "dev",
                "lo",
                "parent",
                "1:",
                "classid",
                SHAPED,
                "htb",
                "rate",
                kbit(capacity_kbps),
                "ceil",
                kbit(capacity_kbps),
            ]
        )
        self.capacity = capacity_kbps

    def leaf_stats(self):
        """The bfifo leaf's counters: bytes/packets sent, drops, backlog bytes, qlen."""
        out = run(["tc", "-s", "-j", "qdisc", "show", "dev", "lo"]).stdout
        for q in json.loads(out):
            if q.get("handle") == LEAF:
                return {k: q.get(k, 0) for k in ("bytes", "packets", "drops", "backlog", "qlen", "overlimits")}
        raise Failure("the bfifo leaf 10: is gone")

    def class_stats_text(self):
        return run(["tc", "-s", "class", "show", "dev", "lo"]).stdout

    def offered_counter(self):
        """Bytes and packets the mark rule has seen (IP bytes at the output hook)."""
        out = run(["nft", "-j", "list", "counter", "inet", TABLE, "offered"]).stdout
        for item in json.loads(out).get("nftables", []):
            if "counter" in item:
                return item["counter"]["bytes"], item["counter"]["packets"]
        return 0, 0

    def teardown(self):
        run(["tc", "qdisc", "del", "dev", "lo", "root"], check=False)
        run(["nft", "delete", "table", "inet", TABLE], check=False)
        self.installed = False


# ---------------------------------------------------------------------------------------------
# Schedule and summary


def parse_schedule(text):
    steps = []
    for part in text.split(","):
        try:
            at, rate = part.split(":")
            steps.append((float(at), float(rate)))
        except ValueError:
            raise Failure(f"schedule entry '{part}' is not SECONDS:KBITPS") from None
    if not steps or steps[0][0] != 0 or any(b[0] <= a[0] for a, b in itertools.pairwise(steps)):
        raise Failure("the schedule must start at 0 and its times must increase")
    if any(rate <= 0 for _, rate in steps):
        raise Failure("every capacity must be positive")
    return steps


def percentile(values, p):
    if not values:
        return None
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100
    lo, hi = math.floor(k), math.ceil(k)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def r(value, digits=1):
    return None if value is None else round(value, digits)


def at_or_before(samples, t):
    """The last sample at or before t (samples sorted by t), or None."""
    best = None
    for s in samples:
        if s["t"] <= t + 1e-9:
            best = s
        else:
            break
    return best


def delay_ms(sample):
    return sample["backlog"] * 8 / (sample["capacity"] * 1000) * 1000


def offered_windows(samples, counters, end):
    """Offered rate per 500 ms window [k*0.5, (k+1)*0.5) of the schedule clock, from t = 0."""
    windows = []
    k = 0
    while (k + 1) * WINDOW <= end + 1e-6:
        a, b = at_or_before(samples, k * WINDOW), at_or_before(samples, (k + 1) * WINDOW)
        k += 1
        if a is None or b is None or b["t"] <= a["t"]:
            continue
        dt = b["t"] - a["t"]
        sent, packets = b["bytes"] - a["bytes"], b["packets"] - a["packets"]
        drops = b["drops"] - a["drops"]
        mean = sent / packets if packets > 0 else (b["bytes"] / b["packets"] if b["packets"] else 1200)
        dropped = drops * mean
        offered = sent + dropped + (b["backlog"] - a["backlog"])
        w = {
            "t": r((k - 1) * WINDOW, 2),
            "end": r(k * WINDOW, 2),
            "capacity": a["capacity"],
            "deliveredKbps": r(sent * 8 / dt / 1000),
            "offeredKbps": r(offered * 8 / dt / 1000),
            "drops": drops,
        }
        ca, cb = at_or_before(counters, k * WINDOW - WINDOW), at_or_before(counters, k * WINDOW)
        if ca is not None and cb is not None and cb["t"] > ca["t"]:
            w["offeredNftKbps"] = r((cb["bytes"] - ca["bytes"]) * 8 / (cb["t"] - ca["t"]) / 1000)
        windows.append(w)
    return windows


def tracking(windows, step_at, capacity, phase_end):
    """Seconds from the step at `step_at` to the end of the first 1-s window (two 500 ms windows)
    whose offered average is within BAND x capacity and every 1-s average after it, for HOLD
    seconds, too; None if that never happens before the phase ends. The minimum is 1.0 s: the
    first 1-s window that lies wholly after the step ends 1 s after it."""
    by_end = {round(w["end"], 2): w for w in windows}
    ends = sorted(e for e in by_end if step_at + 1.0 - 1e-6 <= e <= phase_end + 1e-6)

    def average(e):
        w1, w0 = by_end.get(round(e, 2)), by_end.get(round(e - WINDOW, 2))
        if w1 is None or w0 is None or w0["t"] < step_at - 1e-6:
            return None
        return (w1["offeredKbps"] + w0["offeredKbps"]) / 2

    def inside(e):
        a = average(e)
        return a is not None and BAND[0] * capacity <= a <= BAND[1] * capacity

    for e in ends:
        if e + HOLD > phase_end + 1e-6:
            break
        hold = [x for x in ends if e <= x <= e + HOLD + 1e-6]
        if len(hold) >= int(HOLD / WINDOW) + 1 and all(inside(x) for x in hold):
            return r(e - step_at, 2)
    return None


def summarize(schedule, samples, counters, settle, end, extra):
    """The summary over samples on the schedule clock (t = seconds since start)."""
    phases = []
    for i, (at, capacity) in enumerate(schedule):
        if at >= end:
            break
        until = min(schedule[i + 1][0] if i + 1 < len(schedule) else end, end)
        settled = [s for s in samples if at + settle <= s["t"] <= until]
        phase = {"capacityKbps": capacity, "start": at, "end": r(until, 2), "settledFrom": at + settle}
        inside = [s for s in samples if at <= s["t"] <= until]
        if inside:
            phase["drops"] = inside[-1]["drops"] - inside[0]["drops"]
        if len(settled) >= 2 and settled[-1]["t"] > settled[0]["t"]:
            a, b = settled[0], settled[-1]
            delivered = (b["bytes"] - a["bytes"]) * 8 / (b["t"] - a["t"]) / 1000
            delays = [delay_ms(s) for s in settled]
            phase.update(
                {
                    "deliveredKbps": r(delivered),
                    "utilisation": r(delivered / capacity, 3),
                    "queueDelayMs": {
                        "p50": r(percentile(delays, 50)),
                        "p95": r(percentile(delays, 95)),
                        "max": r(max(delays)),
                    },
                    "settledDrops": b["drops"] - a["drops"],
                    "settledSeconds": r(b["t"] - a["t"], 2),
                }
            )
        else:
            phase.update(
                {
                    "deliveredKbps": None,
                    "utilisation": None,
                    "queueDelayMs": {"p50": None, "p95": None, "max": None},
                    "settledDrops": None,
                }
            )
        phases.append(phase)
    windows = offered_windows(samples, counters, end)
    steps = []
    for i, (at, capacity) in enumerate(schedule):
        if at >= end:
            break
        until = min(schedule[i + 1][0] if i + 1 < len(schedule) else end, end)
        steps.append(
            {
                "at": at,
                "fromKbps": schedule[i - 1][1] if i else None,
                "toKbps": capacity,
                "trackingSeconds": tracking(windows, at, capacity, until),
            }
        )
    after = [delay_ms(s) for s in samples if s["t"] >= settle]
    return {
        **extra,
        "schedule": [{"at": a, "kbps": k} for a, k in schedule],
        "settleSeconds": settle,
        "seconds": r(end, 2),
        "samples": len(samples),
        "phases": phases,
        "steps": steps,  # the first is the ramp-up from the start of the clock
        "queueDelayMs": {
            "p50": r(percentile(after, 50)),
            "p95": r(percentile(after, 95)),
            "max": r(max(after)) if after else None,
        },
        "drops": samples[-1]["drops"] - samples[0]["drops"] if samples else None,
        "offered": windows,
        "trackingBand": list(BAND),
        "trackingHoldSeconds": HOLD,
    }


# ---------------------------------------------------------------------------------------------
# run


def emit(obj):
    print(json.dumps(obj), flush=True)


def command_run(args):
    if args.netns:
        enter_netns(args.netns)
    schedule = parse_schedule(args.schedule)
    top = max(k for _, k in schedule)
    queue = args.queue_bytes or int(top * 1000 / 8 * 0.25)
    duration = args.duration if args.duration is not None else schedule[-1][0] + 20
    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    # A parent that blocks them (a Swift test process: its dispatch signal sources) passes the
    # mask on through exec: unblocked here, or SIGINT would never end the run early.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})

    shaper = Bottleneck(schedule[0][1], queue)
    samples, counters, events = [], [], []
    samples_file = open(args.samples, "w") if args.samples else None
    t0 = None
    summary = None
    code = 0
    try:
        shaper.setup()
        emit(
            {
                "event": "ready",
                "netns": args.netns,
                "queueBytes": queue,
                "classifier": shaper.classifier,
                "monotonic": time.monotonic(),
            }
        )
        match_mtime = None

        def poll_match():
            nonlocal match_mtime
            if not args.match_file:
                return False
            try:
                st = os.stat(args.match_file)
            except FileNotFoundError:
                return False
            stamp = (st.st_mtime_ns, st.st_size)
            if stamp == match_mtime:
                return False
            match_mtime = stamp
            text = open(args.match_file).read().strip()
            if text == (shaper.match or ""):
                return False
            shaper.set_match(text)
            return True

        if args.match:
            shaper.set_match(args.match)
            emit({"event": "match", "match": shaper.match, "monotonic": time.monotonic()})
        else:
            poll_match() and emit({"event": "match", "match": shaper.match, "monotonic": time.monotonic()})

        def may_start():
            if args.start_on_traffic:
                return bool(shaper.match) and shaper.offered_counter()[1] > 0
            return bool(shaper.match) if args.start_on_match else True

        step = 0
        next_sample = time.monotonic()
        next_counter = 0.0
        while not stop.is_set():
            now = time.monotonic()
            if poll_match():
                events.append({"t": r(now - t0, 3) if t0 else None, "match": shaper.match})
                emit({"event": "match", "match": shaper.match, "monotonic": now})
            if t0 is None and may_start():
                t0 = now
                emit({"event": "start", "monotonic": t0})
            if t0 is not None:
                rel = now - t0
                if rel >= duration:
                    break
                while step + 1 < len(schedule) and rel >= schedule[step + 1][0]:
                    step += 1
                    shaper.set_capacity(schedule[step][1])
                    events.append({"t": r(rel, 3), "capacityKbps": schedule[step][1]})
                before = time.monotonic()
                stats = shaper.leaf_stats()
                after = time.monotonic()
                sample = {"t": round((before + after) / 2 - t0, 4), "capacity": shaper.capacity, **stats}
                samples.append(sample)
                if samples_file:
                    samples_file.write(json.dumps(sample) + "\n")
                if rel >= next_counter:
                    b, p = shaper.offered_counter()
                    counters.append({"t": round(time.monotonic() - t0, 4), "bytes": b, "packets": p})
                    next_counter += WINDOW
            next_sample += args.interval
            delay = next_sample - time.monotonic()
            if delay > 0:
                stop.wait(delay)
            else:
                next_sample = time.monotonic()
        end = min(duration, samples[-1]["t"]) if samples else 0
        summary = summarize(
            schedule,
            samples,
            counters,
            args.settle,
            end,
            {
                "ok": True,
                "interrupted": stop.is_set(),
                "queueBytes": queue,
                "classifier": shaper.classifier,
                "match": shaper.match,
                "startMonotonic": t0,
                "events": events,
                "intervalSeconds": args.interval,
            },
        )
    except Failure as error:
        code = 1
        summary = {"ok": False, "error": str(error), "startMonotonic": t0, "samples": len(samples)}
    finally:
        try:
            shaper.teardown()
        except Exception:
            pass
        if samples_file:
            samples_file.close()
    if args.out:
        with open(args.out, "w") as file:
            json.dump(summary, file, indent=1)
    print(json.dumps(summary), flush=True)
    return code


# ---------------------------------------------------------------------------------------------
# selftest


def blast(sport, dport, kbps, seconds, payload=1172):
    """Sends UDP from 127.0.0.1:sport to 127.0.0.1:dport at kbps for seconds; returns datagrams sent."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    s.bind(("127.0.0.1", sport))
    data = b"x" * payload
    interval = payload * 8 / (kbps * 1000)
    start = time.monotonic()
    sent = 0
    while time.monotonic() - start < seconds:
        try:
            s.sendto(data, ("127.0.0.1", dport))
            sent += 1
        except OSError:
            pass
        delay = start + sent * interval - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    s.close()
    return sent


class Sink(threading.Thread):
    def __init__(self, port):
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.bind(("127.0.0.1", port))
        self.sock.settimeout(0.2)
        self.bytes = 0
        self.running = True

    def run(self):
        while self.running:
            try:
                self.bytes += len(self.sock.recv(65536))
            except (socket.timeout, OSError):
                pass

    def stop(self):
        self.running = False
        self.join(1)
        self.sock.close()


def command_selftest(args):
    name = args.netns or f"rtc-bnself-{os.getpid()}"
    own = args.netns is None
    report = {"netns": name}
    try:
        if own:
            create_netns(name)
        enter_netns(name)
        # Part 1: 10 Mbit/s from a marked port into a 1 Mbit/s class, 10 Mbit/s unmarked beside it.
        capacity, seconds, offered = 1000, 2.0, 10000
        queue = int(capacity * 1000 / 8 * 0.25)
        shaper = Bottleneck(capacity, queue)
        try:
            shaper.setup()
            shaper.set_match("udp sport 51234")
            sinks = {p: Sink(p) for p in (51300, 51301)}
            for s in sinks.values():
                s.start()
            threads = [
                threading.Thread(target=blast, args=(51234, 51300, offered, seconds)),
                threading.Thread(target=blast, args=(51235, 51301, offered, seconds)),
            ]
            t = time.monotonic()
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            elapsed = time.monotonic() - t
            leaf = shaper.leaf_stats()
            nft_bytes, nft_packets = shaper.offered_counter()
            text = shaper.class_stats_text()
            time.sleep(0.3)
            for s in sinks.values():
                s.stop()
            expected = capacity * 1000 / 8 * elapsed
            default_sent = re.search(r"class htb 1:20 .*?\n Sent (\d+) bytes (\d+) pkt", text, re.S)
            part1 = {
                "capacityKbps": capacity,
                "offeredKbps": offered,
                "seconds": round(elapsed, 3),
                "queueBytes": queue,
                "classifier": shaper.classifier,
                "shaped": {
                    "sentBytes": leaf["bytes"],
                    "expectedBytes": round(expected),
                    "ratio": round(leaf["bytes"] / expected, 3),
                    "deliveredKbps": round(leaf["bytes"] * 8 / elapsed / 1000, 1),
                    "packets": leaf["packets"],
                    "drops": leaf["drops"],
                    "backlogBytes": leaf["backlog"],
                    "qlen": leaf["qlen"],
                    "nftOfferedBytes": nft_bytes,
                    "nftOfferedPackets": nft_packets,
                    "receivedBytes": sinks[51300].bytes,
                },
                "unmarked": {
                    "receivedBytes": sinks[51301].bytes,
                    "receivedKbps": round(sinks[51301].bytes * 8 / elapsed / 1000, 1),
                    "defaultClassSentBytes": int(default_sent.group(1)) if default_sent else None,
                },
            }
        finally:
            shaper.teardown()
        ok1 = (
            0.85 <= part1["shaped"]["ratio"] <= 1.2
            and part1["shaped"]["drops"] > 0
            and part1["shaped"]["backlogBytes"] > 0.5 * queue
            and part1["unmarked"]["receivedKbps"] > 0.8 * offered
        )
        part1["ok"] = ok1
        report["direct"] = part1
        # Part 2: `run` as a background process: match file written late, schedule 2000 -> 1000
        # kbit/s, a constant 3 Mbit/s offered from the marked port.
        with tempfile.TemporaryDirectory(prefix="bottleneck-selftest-") as tmp:
            match_file = os.path.join(tmp, "match")
            proc = subprocess.Popen(
                [
                    sys.executable,
                    os.path.abspath(__file__),
                    "run",
                    "--netns",
                    name,
                    "--schedule",
                    "0:2000,3:1000",
                    "--duration",
                    "6",
                    "--settle",
                    "1",
                    "--match-file",
                    match_file,
                    "--start-on-match",
                    "--out",
                    os.path.join(tmp, "summary.json"),
                    "--samples",
                    os.path.join(tmp, "samples.jsonl"),
                ],
                stdout=subprocess.PIPE,
                text=True,
            )
            line = proc.stdout.readline()
            if '"ready"' not in line:
                proc.kill()
                raise Failure(f"run did not say ready: {line.strip()}")
            sink = Sink(51302)
            sink.start()
            sender = threading.Thread(target=blast, args=(51236, 51302, 3000, 8.0))
            sender.start()
            time.sleep(0.5)
            with open(match_file, "w") as f:
                f.write("udp sport 51236\n")
            out, _ = proc.communicate(timeout=20)
            sender.join()
            sink.stop()
            summary = json.loads(out.strip().splitlines()[-1])
            samples = sum(1 for _ in open(os.path.join(tmp, "samples.jsonl")))
        p = summary.get("phases", [])
        part2 = {
            "phases": [
                {k: ph.get(k) for k in ("capacityKbps", "deliveredKbps", "utilisation", "queueDelayMs", "settledDrops")}
                for ph in p
            ],
            "steps": summary.get("steps"),
            "samples": samples,
            "queueBytes": summary.get("queueBytes"),
            "offeredKbpsMedian": percentile([w["offeredKbps"] for w in summary.get("offered", [])], 50),
            "offeredNftKbpsMedian": percentile(
                [w["offeredNftKbps"] for w in summary.get("offered", []) if "offeredNftKbps" in w], 50
            ),
        }
        ok2 = (
            len(p) == 2
            and all(ph["utilisation"] and 0.9 <= ph["utilisation"] <= 1.1 for ph in p)
            and p[1]["queueDelayMs"]["p50"] > 300
        )  # 62500 bytes at 1 Mbit/s = 500 ms, full
        part2["ok"] = ok2
        report["run"] = part2
        report["ok"] = ok1 and ok2
    except Failure as error:
        report["ok"] = False
        report["error"] = str(error)
    finally:
        if own:
            delete_netns(name)
    print(json.dumps(report, indent=1))
    return 0 if report["ok"] else 1


def main():
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    st = sub.add_parser("selftest", help="check that marked UDP on 127.0.0.1 is shaped (own namespace)")
    st.add_argument("--netns", help="an existing rtc-* namespace (default: a fresh one, deleted after)")
    rp = sub.add_parser("run", help="shape lo by a schedule, sample, summarise")
    rp.add_argument(
        "--netns",
        help="the rtc-* namespace (in /run/netns) to shape; default: the one this "
        "process runs in, which must be such a namespace",
    )
    rp.add_argument("--schedule", default="0:3000,20:1000,40:3000", help="SECONDS:KBITPS,... (default %(default)s)")
    rp.add_argument("--queue-bytes", type=int, help="bfifo limit (default: 250 ms at the top capacity)")
    rp.add_argument("--settle", type=float, default=5.0, help="seconds after each phase start left out (default 5)")
    rp.add_argument("--duration", type=float, help="seconds on the schedule's clock (default: last step + 20)")
    rp.add_argument("--interval", type=float, default=0.05, help="sampling interval, seconds (default 0.05)")
    rp.add_argument("--match", help="nft match of the shaped packets, e.g. 'udp sport 40000-40999'")
    rp.add_argument("--match-file", help="a file holding the match; polled, the rule follows its changes")
    start = rp.add_mutually_exclusive_group()
    start.add_argument(
        "--start-on-match", action="store_true", help="start the schedule's clock once the match is known"
    )
    start.add_argument(
        "--start-on-traffic", action="store_true", help="start the schedule's clock at the first packet the rule counts"
    )
    rp.add_argument("--out", help="write the summary JSON here too")
    rp.add_argument("--samples", help="raw samples, JSON lines")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print(f"{PROG}: needs root (tc, nft, namespaces)", file=sys.stderr)
        return 2
    try:
        if args.command == "selftest":
            return command_selftest(args)
        return command_run(args)
    except Failure as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
