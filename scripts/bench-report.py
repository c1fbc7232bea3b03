#!/usr/bin/env python3
"""Turns one `scripts/bench.sh` run into Markdown tables, prints them and rewrites the marked
sections of Docs/benchmarks.md (prose outside the markers is kept).

  macro: the end-to-end rows (manifest of runs: /usr/bin/time output, sink counts, JSON lines)
  micro: the ordo-one/benchmark results (histogramPercentiles TSV files)
  room:  one publisher to many subscribers (runs under out/bench/room/rN)
  instructions: callgrind's instruction counts of each row's unpaced ultrafast job, per library
"""
import argparse
import datetime
import glob
import json
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_stats import NOISY, cell, summary  # noqa: E402

INPUT_FRAMES = 300  # 10 s at 30 fps, what `rtc-encode generate` writes
TOOLS = {"rtc-publish": "rtc-publish", "ffmpeg": "FFmpeg", "gstreamer": "GStreamer", "floor": "floor (H264Encoder alone)",
         "floor-av": "floor (x264 + Opus alone)"}
FLOORS = ("floor", "floor-av")  # `rtc-encode floor` without and with --audio: unpaced only, no sink


def shell(command):
    try:
        return subprocess.run(command, shell=True, capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine():
    model = shell("lscpu | sed -n 's/^Model name: *//p' | head -1") or "unknown CPU"
    return f"{shell('nproc') or '?'} cores, {model}, {shell('uname -r')}"


def versions():
    ffmpeg = shell("ffmpeg -hide_banner -version | head -1")
    gst = shell("gst-launch-1.0 --version | sed -n 2p")
    x264 = shell("dpkg-query -W -f='${Package} ${Version}' 'libx264-[0-9]*' 2>/dev/null | head -1")
    swift = shell("swift --version 2>/dev/null | head -1")
    return "; ".join(v for v in (ffmpeg, gst, x264, swift) if v)


def last_json_line(path, predicate):
    try:
        with open(path) as handle:
            lines = [line for line in handle if line.strip().startswith("{")]
    except OSError:
        return None
    for line in reversed(lines):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if predicate(record):
            return record
    return None


def read_run(tool, mode, preset, threads, run, rc, directory):
    row = {"tool": tool, "mode": mode, "preset": preset, "threads": int(threads), "run": int(run)}
    if rc == "missing":
        row["missing"] = True
        return row
    row["rc"] = int(rc)
    try:
        with open(os.path.join(directory, "time.txt")) as handle:
            wall, user, system, rss = handle.read().split()[-4:]
        row.update(wall=float(wall), cpu=float(user) + float(system), rss_mb=int(rss) / 1024)
    except (OSError, ValueError):
        row["rc"] = row["rc"] or -1
    if row["rc"] != 0:
        try:
            with open(os.path.join(directory, "stderr.txt")) as handle:
                row["error"] = " ".join(handle.read().split())[-160:]
        except OSError:
            row["error"] = ""
        return row
    frames = INPUT_FRAMES
    if tool == "rtc-publish":
        final = last_json_line(os.path.join(directory, "stats.jsonl"), lambda r: r.get("final") is True)
        if final:
            frames = final.get("frames", frames)
            row["latency"] = final.get("frameLatencyMs")
            row["encode"] = final.get("encodeMs")
        else:
            status = last_json_line(os.path.join(directory, "stats.jsonl"), lambda r: "totals" in r)
            if status:
                frames = status["totals"].get("framesIn", frames) or frames
    elif tool in FLOORS:
        final = last_json_line(os.path.join(directory, "stdout.txt"), lambda r: r.get("final") is True)
        if final:
            frames = final.get("frames", frames)
            row["encode"] = final.get("encodeMs")
            row["audio_encode"] = final.get("audioEncodeMs")
    try:
        with open(os.path.join(directory, "sink.json")) as handle:
            sink = json.load(handle)
        video = min(sink, key=int)  # the first port is video RTP
        row["sink_frames"] = sink[video]["markers"]
        row["sink_packets"] = sum(port["packets"] for port in sink.values())
    except (OSError, ValueError, KeyError):
        pass
    row["frames"] = frames
    row["cpu_ms_per_frame"] = row["cpu"] * 1000 / max(frames, 1)
    row["cpu_percent"] = row["cpu"] / max(row["wall"], 1e-3) * 100
    row["fps"] = frames / max(row["wall"], 1e-3)
    return row


def percentiles_cell(runs, key, digits=1):
    """p50/p99/max of a per-run JSON block, as medians over the runs."""
    blocks = [r.get(key) for r in runs if isinstance(r.get(key), dict)]
    if not blocks:
        return "n/a"
    parts = []
    for name in ("p50", "p99", "max"):
        values = [b[name] for b in blocks if isinstance(b.get(name), (int, float))]
        parts.append(f"{statistics.median(values):.{digits}f}" if values else "?")
    return " / ".join(parts)


def macro(args):
    runs = []
    with open(args.manifest) as handle:
        for line in handle:
            fields = line.rstrip("\n").split("\t")
            if len(fields) == 7:
                runs.append(read_run(*fields))
    configs = []
    for r in runs:
        key = (r["preset"], r["threads"])
        if key not in configs:
            configs.append(key)
    order = [("rtc-publish", "paced"), ("ffmpeg", "paced"), ("gstreamer", "paced"),
             ("rtc-publish", "unpaced"), ("ffmpeg", "unpaced"), ("gstreamer", "unpaced"), ("floor", "unpaced"),
             ("floor-av", "unpaced")]
    count = max((r["run"] for r in runs), default=0)
    lines = [
        f"Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC on {machine()}; "
        f"load average {args.load} (before -> after).  ",
        f"Versions: {versions()}.  ",
        f"Command: `{args.command}` ({count} interleaved runs of each row, matrix `{args.matrix}`).",
        "",
        "Medians over the runs, range in parentheses; ⚠ marks a range wider than 25 % of the median "
        "(a neighbour was busy: compare rows of this run only). CPU is user+sys of the whole process "
        "(`/usr/bin/time`) per frame encoded: the 300 input frames, or fewer when paced rtc-publish dropped "
        "some (frames at sink counts the video RTP marker bits the sink saw). fps is frames over wall time, "
        "start-up and shutdown included (rtc-publish waits 0.2 s before its RTCP BYE, so that the BYE does not "
        "overtake the last media packets at the receiver: no CPU, but a fifth of a second of wall time). Latency is rtc-publish's own (frame in -> last packet of the frame sent); encode "
        "is the encoder call alone (for the x264 + Opus floor, x264's, then Opus's per 20 ms frame). Both floors "
        "run unpaced only, with nothing else (no mixer, RTP, SRTP or sockets): the H264Encoder floor encodes the "
        "video alone, the x264 + Opus floor the same frames and the 10 s of audio (our OpusEncoder, same settings, "
        "500 frames of 20 ms interleaved with the video by capture time). rtc-publish's unpaced ratio to the first "
        "counts audio and the rest of the pipeline on top of x264, to the second only what lies beyond the two "
        "encoders; the paced rows' ratios to them include pacing as well.",
        "",
    ]
    medians = {}
    # CPU per frame by row and round: rows of one round ran minutes apart at most, so a
    # neighbour's load hits them alike, and their ratio round by round cancels much of it.
    per_round = {}
    for preset, threads in configs:
        lines += [
            f"#### x264 {preset}, {threads} thread{'s' if threads > 1 else ''}",
            "",
            "| row | runs ok | CPU ms/frame | CPU % of one core | fps | peak RSS MB | latency p50/p99/max ms | encode p50/p99/max ms | frames at sink |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for tool, mode in order:
            mine = [r for r in runs if (r["tool"], r["mode"], r["preset"], r["threads"]) == (tool, mode, preset, threads)]
            if not mine:
                continue
            name = f"{TOOLS[tool]}, {mode}" if tool not in FLOORS else TOOLS[tool]
            if all(r.get("missing") for r in mine):
                lines.append(f"| {name} | n/a (this rtc-publish has no --unpaced) | n/a | n/a | n/a | n/a | n/a | n/a | n/a |")
                continue
            ok = [r for r in mine if r.get("rc") == 0]
            failed = [r for r in mine if r.get("rc") not in (0, None)]
            if not ok:
                reason = failed[0].get("error", "") if failed else ""
                lines.append(f"| {name} | 0/{len(mine)}: failed ({reason}) | | | | | | | |")
                continue
            for r in ok:
                per_round.setdefault((preset, threads, tool, mode), {})[r["run"]] = r["cpu_ms_per_frame"]
            cpu = summary([r["cpu_ms_per_frame"] for r in ok])
            rss = summary([r["rss_mb"] for r in ok])
            medians[(preset, threads, tool, mode)] = {"cpu": cpu["median"], "rss": rss["median"]}
            percent = cell(summary([r["cpu_percent"] for r in ok]), 1) if mode == "paced" else "—"
            fps = cell(summary([r["fps"] for r in ok]), 0) if mode == "unpaced" else "—"
            sink = sorted({r["sink_frames"] for r in ok if "sink_frames" in r})
            sink_text = "/".join(str(s) for s in sink) if sink else "—"
            latency = percentiles_cell(ok, "latency") if tool == "rtc-publish" else "—"
            encode = percentiles_cell(ok, "encode") if tool in ("rtc-publish",) + FLOORS else "—"
            if tool == "floor-av":
                encode += f"; Opus {percentiles_cell(ok, 'audio_encode', 2)}"
            lines.append(
                f"| {name} | {len(ok)}/{len(mine)} | {cell(cpu)} | {percent} | {fps} | {cell(rss, 0)} | "
                f"{latency} | {encode} | {sink_text} |"
            )
        lines.append("")
    lines += [
        "#### Ratios (medians of this run; below 1 means rtc-publish is cheaper)",
        "",
        "| x264 | mode | CPU/frame vs FFmpeg | vs GStreamer | vs floor | vs floor (x264 + Opus) | peak RSS vs FFmpeg | vs GStreamer |",
        "|---|---|---|---|---|---|---|---|",
    ]

    def ratio(preset, threads, mode, other_tool, other_mode, what):
        mine = medians.get((preset, threads, "rtc-publish", mode))
        other = medians.get((preset, threads, other_tool, other_mode))
        if not mine or not other or other[what] <= 0:
            return "n/a"
        return f"{mine[what] / other[what]:.2f}"

    # The peers' rows against rtc-publish's row of the same mode; the floors run unpaced only.
    # A run without a row (an older manifest has no floor-av) gives n/a in its column.
    against = [("ffmpeg", None), ("gstreamer", None), ("floor", "unpaced"), ("floor-av", "unpaced")]

    def ratio_rows(columns):
        """One line per configuration and mode; `columns(preset, threads, mode)` gives the cells."""
        for preset, threads in configs:
            for mode in ("paced", "unpaced"):
                lines.append(f"| {preset}, {threads}t | {mode} | {' | '.join(columns(preset, threads, mode))} |")

    ratio_rows(lambda preset, threads, mode: [
        ratio(preset, threads, mode, tool, other or mode, "cpu") for tool, other in against
    ] + [ratio(preset, threads, mode, tool, mode, "rss") for tool in ("ffmpeg", "gstreamer")])
    lines += [
        "",
        "#### CPU ratios round by round (the median of each round's ratio, range in parentheses)",
        "",
        "Each round runs every row once, back to back, so a busy neighbour slows the rows of one round "
        "alike; the ratio within a round cancels much of that, where a ratio of medians over the whole run "
        "does not. The floors have no paced row: the paced ratio to them is against their unpaced runs.",
        "",
        "| x264 | mode | vs FFmpeg | vs GStreamer | vs floor | vs floor (x264 + Opus) |",
        "|---|---|---|---|---|---|",
    ]

    def paired(preset, threads, mode, other_tool, other_mode):
        mine = per_round.get((preset, threads, "rtc-publish", mode), {})
        other = per_round.get((preset, threads, other_tool, other_mode), {})
        ratios = [mine[run] / other[run] for run in mine if run in other and other[run] > 0]
        return cell(summary(ratios))

    ratio_rows(lambda preset, threads, mode: [
        paired(preset, threads, mode, tool, other or mode) for tool, other in against
    ])
    try:
        with open(args.commands) as handle:
            commands = handle.read().rstrip()
    except OSError:
        commands = ""
    if commands:
        lines += ["", "<details><summary>Exact commands of each row (run 1)</summary>", "", "```", commands, "```", "", "</details>"]
    text = "\n".join(lines)
    print(text)
    write_section(args.doc, "macro", text)


def micro_results(directory):
    """(target, name, metric) -> {p50, p99, unit} from the histogramPercentiles TSV files."""
    results = {}
    scale = {"ns": 1e-3, "μs": 1.0, "us": 1.0, "ms": 1e3, "s": 1e6, "K": 1e3, "M": 1e6, "G": 1e9}
    for path in glob.glob(os.path.join(directory, "*.histogram.percentiles.tsv")):
        base = os.path.basename(path)[: -len(".histogram.percentiles.tsv")]
        stem, _, metric = base.rpartition(".")
        match = re.search(r"\.(PacketBenchmarks|MediaBenchmarks)\.", stem)
        if not match:
            continue
        name = stem[match.end():].replace("_", " ")
        with open(path) as handle:
            header = handle.readline()
            values = dict(line.split("\t") for line in handle if "\t" in line)
        unit = re.search(r"\((ns|μs|us|ms|s|K|M|G)\)", header)
        factor = scale[unit.group(1)] if unit else 1.0
        try:
            results[(match.group(1), name, metric)] = {
                "p50": float(values["50"]) * factor,
                "p99": float(values["99"]) * factor,
            }
        except (KeyError, ValueError):
            continue
    return results


def micro(args):
    results = micro_results(args.results_dir)
    names = sorted({(target, name) for target, name, _ in results}, key=lambda k: (k[0] != "PacketBenchmarks", k[1]))
    lines = [
        f"Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC on {machine()} with "
        f"ordo-one/benchmark 1.38.1 (release build, malloc counts from its MallocInterposer).  ",
        f"Command: `{args.command}` (in Benchmarks/: `swift package benchmark run --format histogramPercentiles`).",
        "",
        "Wall time is per iteration (p50 and p99 over the iterations). Mallocs are per iteration (p50), "
        "less what an empty iteration of the harness allocates ({harness}), so they count the code under "
        "test alone. Per packet divides by the packets one iteration sends.",
        "",
        "| benchmark | wall p50 µs | wall p99 µs | mallocs | per packet: µs / mallocs |",
        "|---|---|---|---|---|",
    ]
    harness = {
        target: results.get((target, "Harness: empty iteration", "mallocCountTotal"), {}).get("p50", 0.0)
        for target, _ in names
    }
    lines[3] = lines[3].format(
        harness=", ".join(f"{target} {value:.0f}" for target, value in sorted(harness.items())) or "none measured"
    )
    fan_out = {}
    # WebRTC viewers' fan-out rows, by the suite their name ends with: {suite: {viewers: (p50, mallocs)}}.
    webrtc = {}
    for target, name in names:
        wall = results.get((target, name, "wallClock"))
        mallocs = results.get((target, name, "mallocCountTotal"))
        if not wall or name.startswith("Harness"):
            continue
        net = max(0.0, mallocs["p50"] - harness.get(target, 0.0)) if mallocs else None
        packets = re.search(r"\((\d+) packets?\)", name)
        destinations = re.search(r"to (\d+) destinations?", name)
        viewers = re.search(r"to (\d+) WebRTC viewers?,.*, ([^,]+)$", name)
        per_row = destinations or viewers
        count = int(packets.group(1)) if packets else int(per_row.group(1)) if per_row else None
        per_packet = "—"
        if count:
            per_malloc = f"{net / count:.2f}" if net is not None else "n/a"
            per_packet = f"{wall['p50'] / count:.3f} / {per_malloc}"
        if destinations:
            fan_out[int(destinations.group(1))] = (wall["p50"], net)
        if viewers:
            webrtc.setdefault(viewers.group(2), {})[int(viewers.group(1))] = (wall["p50"], net)
        malloc_text = f"{net:.0f}" if net is not None else "n/a"
        digits = 3 if wall["p50"] < 10 else 1
        lines.append(
            f"| {name} | {wall['p50']:.{digits}f} | {wall['p99']:.{digits}f} | {malloc_text} | {per_packet} |"
        )
    if 1 in fan_out and 100 in fan_out:
        (t1, m1), (t100, m100) = fan_out[1], fan_out[100]
        extra = (t100 - t1) / 99
        allocations = f"{(m100 - m1) / 99:.2f}" if m1 is not None and m100 is not None else "n/a"
        lines += [
            "",
            f"Each extra subscriber costs {extra:.2f} µs per packet (copy + SRTP protect + sendto: "
            f"(t100 − t1) / 99) and {allocations} allocations per packet ((mallocs100 − mallocs1) / 99).",
        ]
    # Issue 17: an extra WebRTC viewer against an extra SDES destination, both over 1 -> 10.
    if 1 in fan_out and 10 in fan_out and webrtc:
        def per_extra(rows):
            (t1, m1), (t10, m10) = rows[1], rows[10]
            allocations = f"{(m10 - m1) / 9:.2f}" if m1 is not None and m10 is not None else "n/a"
            return (t10 - t1) / 9, allocations

        sdes, sdes_allocations = per_extra(fan_out)
        lines += [
            "",
            "Per extra subscriber and packet, (t10 − t1) / 9 (issue 17: a WebRTC viewer at most 1.1 × an SDES "
            "destination):",
            "",
            f"- SDES destination (AES-CM-128 + HMAC-SHA1-80): {sdes:.2f} µs, {sdes_allocations} allocations",
        ]
        for suite, rows in sorted(webrtc.items(), key=lambda item: not item[0].startswith("AES-CM")):
            if 1 not in rows or 10 not in rows:
                continue
            cost, allocations = per_extra(rows)
            ratio = f"{cost / sdes:.2f} ×" if sdes > 0 else "n/a"
            lines.append(f"- WebRTC viewer ({suite}): {cost:.2f} µs ({ratio}), {allocations} allocations")
    if not names:
        lines.append("| (no results found) | | | | |")
    text = "\n".join(lines)
    print(text)
    write_section(args.doc, "micro", text)


def room(args):
    runs = []
    for directory in sorted(glob.glob(os.path.join(args.dir, "r*"))):
        run = {"dir": directory}
        try:
            with open(os.path.join(directory, "rc")) as handle:
                run["rc"] = int(handle.read().strip() or "-1")
            with open(os.path.join(directory, "time.txt")) as handle:
                wall, user, system, rss = handle.read().split()[-4:]
            run.update(wall=float(wall), user=float(user), system=float(system), rss_mb=int(rss) / 1024)
        except (OSError, ValueError):
            run["rc"] = run.get("rc", -1) or -1
        final = last_json_line(os.path.join(directory, "stats.jsonl"), lambda r: r.get("final") is True)
        if final:
            totals = final.get("totals", {})
            run.update(
                frames_in=totals.get("framesIn"),
                frames_out=totals.get("framesOut"),
                dropped=totals.get("framesDropped"),
                deepest=totals.get("sendQueueDeepest"),
                packets=totals.get("packetsSent"),
                latency=final.get("frameLatencyMs"),
                encode=final.get("encodeMs"),
            )
        sink = last_json_line(os.path.join(directory, "sink.json"), lambda r: "blocks" in r)
        if sink:
            run.update(sink_fewest=sink.get("framesFewest"), sink_most=sink.get("framesMost"),
                       sink_datagrams=sink.get("datagrams"))
        runs.append(run)
    good = [r for r in runs if r.get("rc") == 0 and "wall" in r]

    def stat(key, scale=1.0):
        return summary([r[key] * scale for r in good if isinstance(r.get(key), (int, float))])

    cpu = summary([(r["user"] + r["system"]) / max(r["wall"], 1e-3) * 100 for r in good])
    user = stat("user")
    system = stat("system")
    lines = [
        f"Run {datetime.date.today().isoformat()} on {machine()}; {len(good)} of {len(runs)} runs ended cleanly.",
        "",
        f"Publisher: `{args.publish}`",
        f"Receivers: `{args.sink}` (one process, {args.subscribers} blocks of four ports)",
        "",
        "| subscribers | CPU % of one core | user s | sys s | frames in / sent / dropped | fewest / most frames a subscriber got |"
        " frame in → last packet out p50 / p99 / max (ms) | encoder p50 / p99 / max (ms) | deepest send queue | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|---|---|",
        "| {n} | {cpu} | {user} | {system} | {fin} / {fout} / {drop} | {few} / {most} | {lat} | {enc} | {deep} | {rss} |".format(
            n=args.subscribers,
            cpu=cell(cpu, 0),
            user=cell(user),
            system=cell(system),
            fin=cell(stat("frames_in"), 0),
            fout=cell(stat("frames_out"), 0),
            drop=cell(stat("dropped"), 0),
            few=cell(stat("sink_fewest"), 0),
            most=cell(stat("sink_most"), 0),
            lat=percentiles_cell(good, "latency"),
            enc=percentiles_cell(good, "encode"),
            deep=cell(stat("deepest"), 0),
            rss=cell(stat("rss_mb"), 1),
        ),
        "",
        "Cells are medians over the runs with (min–max); a subscriber's frames are counted by the",
        "marker bit on its video port, so \"fewest\" equal to \"sent\" means every subscriber got every frame.",
        "Frame latencies land in 10 µs buckets up to 100 ms (`LatencyHistogram`): a p99 of 100.0 means",
        "at least 100 ms; the maximum is exact.",
        f"Command: `{args.command}`",
    ]
    for r in runs:
        if r.get("rc") != 0:
            lines.append(f"- run in {r['dir']} failed (exit {r.get('rc')}): see its stderr.txt")
    text = "\n".join(lines)
    print(text)
    write_section(args.doc, "room", text)


# Which library an instruction was executed in, grouped by the job's stages.
INSTRUCTION_GROUPS = [
    ("x264", ("libx264",)),
    ("Opus", ("libopus",)),
    ("SRTP and its crypto", ("libsrtp", "libnettle", "libnss3", "libnssutil3", "libsoftokn3", "libfreeblpriv3",
                             "libnspr4", "libplc4", "libplds4", "libgstsrtp")),
    ("libc", ("libc.so",)),
    ("start-up (dynamic loader)", ("ld-linux",)),
]


def callgrind_totals(path):
    """Instructions per object file: the self cost lines of a callgrind output (calls' inclusive
    costs, the line after each `calls=`, are skipped)."""
    names, current, skip, totals = {}, None, False, {}
    with open(path, errors="replace") as handle:
        for line in handle:
            if line.startswith(("ob=", "cob=")):
                m = re.match(r"c?ob=\((\d+)\)(?: (.*))?", line.strip())
                if m and m.group(2):
                    names[m.group(1)] = m.group(2)
                if m and line.startswith("ob="):
                    current = names.get(m.group(1), "?")
                continue
            if line.startswith("calls="):
                skip = True
                continue
            if line[:1].isdigit() or line[:1] in "+-*":
                if skip:
                    skip = False
                    continue
                parts = line.split()
                if len(parts) >= 2 and current is not None:
                    totals[current] = totals.get(current, 0) + int(parts[1])
    return totals


def instructions(args):
    rows = {}
    for tool in ("rtc-publish", "ffmpeg", "gstreamer", "floor"):
        directory = os.path.join(args.dir, tool)
        try:
            with open(os.path.join(directory, "rc")) as handle:
                rc = int(handle.read().strip() or "-1")
            totals = callgrind_totals(os.path.join(directory, "callgrind.out"))
        except (OSError, ValueError):
            continue
        if rc != 0 or not totals:
            continue
        groups = {name: 0 for name, _ in INSTRUCTION_GROUPS}
        rest = 0
        for obj, count in totals.items():
            base = os.path.basename(obj)
            for name, prefixes in INSTRUCTION_GROUPS:
                if base.startswith(prefixes):
                    groups[name] += count
                    break
            else:
                rest += count
        rows[tool] = {"total": sum(totals.values()), "groups": groups, "rest": rest}
    header = ["row", "instructions (billions)", "per frame (millions)"] + [n for n, _ in INSTRUCTION_GROUPS] + [
        "the rest (the program, its other libraries)", "vs GStreamer", "vs floor"]
    lines = [
        f"Counted {datetime.date.today().isoformat()} on {machine()} with valgrind's callgrind, each row's "
        "unpaced x264 ultrafast 1-thread job once (the same 300 frames and 10 s of audio as above).",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    gst = rows.get("gstreamer", {}).get("total")
    floor = rows.get("floor", {}).get("total")
    for tool, row in rows.items():
        cells = [TOOLS[tool], f"{row['total'] / 1e9:.2f}", f"{row['total'] / INPUT_FRAMES / 1e6:.2f}"]
        cells += [f"{row['groups'][n] / 1e9:.2f}" for n, _ in INSTRUCTION_GROUPS]
        cells += [f"{row['rest'] / 1e9:.2f}",
                  f"{row['total'] / gst:.2f}" if gst else "—",
                  f"{row['total'] / floor:.2f}" if floor else "—"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "An instruction count does not move with a busy neighbour (two counts of rtc-publish's row differed",
        "by 0.01 %). It is not time (a cache miss costs many instructions' worth): it settles how much work",
        "a row does, the CPU-time tables above what that work cost on this machine during the run.",
        "FFmpeg does SRTP with its own AES and HMAC (libavformat, libavutil: \"the rest\"); GStreamer uses",
        "Debian's libsrtp2, whose crypto is NSS's; rtc-publish uses that libsrtp2 with its AES-CM and",
        "HMAC-SHA1 on Nettle (NSS still runs libsrtp's start-up self-tests). valgrind hides the CPU's SHA",
        "instructions, so SHA-1 counts here as Nettle's portable code (about 20,000 instructions a packet).",
        f"Command: `{args.command}` (in out/bench/instructions/ROW: `valgrind --tool=callgrind` + the row's unpaced command).",
    ]
    missing = [TOOLS[t] for t in ("rtc-publish", "ffmpeg", "gstreamer", "floor") if t not in rows]
    if missing:
        lines.append(f"- no count for: {', '.join(missing)} (see its stderr.txt under out/bench/instructions)")
    text = "\n".join(lines)
    print(text)
    write_section(args.doc, "instructions", text)


def browser(args):
    """Glass-to-glass in a real browser: each run's Chromium summary (Tests/Peers/chromium_viewer.py)
    and the publisher's stats, as one row per run and the pooled percentiles."""
    runs = []
    for run_dir in sorted(glob.glob(os.path.join(args.dir, "r*"))):
        try:
            with open(os.path.join(run_dir, "chromium", "summary.json")) as handle:
                summary = json.load(handle)
        except (OSError, ValueError):
            continue
        if not summary.get("ok") or not summary.get("tabs"):
            runs.append({"dir": run_dir, "error": summary.get("error") or "no tab"})
            continue
        runs.append({"dir": run_dir, "tab": summary["tabs"][0], "chromium": summary.get("chromium")})
    good = [r for r in runs if "tab" in r]
    pooled = [v for r in good for v in r["tab"]["glassToGlassMs"].get("list", [])]
    lines = [
        "### Glass-to-glass in a browser",
        "",
        f"rtc-publish (synthetic screen {args.size}, 30 fps, ultrafast, 1 thread, the default 1800 kbit/s) →"
        " loopback → headless Chromium"
        + (f" {good[0]['chromium'].split('/')[-1]}" if good and good[0].get("chromium") else "")
        + " on rtc-signal's viewer page. Glass-to-glass per picture: its expected display time in the browser"
        " minus its capture time read from the picture's timecode, both on this machine's CLOCK_MONOTONIC"
        " (Docs/web.md). Target: p95 ≤ 80 ms on loopback.",
        "",
        "| run | pictures measured | fps (`<video>`) | dropped | freezes | first frame ms | p50 ms | p95 ms | max ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for number, r in enumerate(runs, 1):
        if "tab" not in r:
            lines.append(f"| {number} | failed: {r['error']} | | | | | | | |")
            continue
        t = r["tab"]
        g = t["glassToGlassMs"]
        lines.append(
            f"| {number} | {g['count']} | {t['playbackQuality']['fps']} | {t['playbackQuality']['droppedInWindow']} |"
            f" {t['frames']['freezes']} | {t['firstFrameMs']} | {g['p50']} | {g['p95']} | {g['max']} |"
        )
    if pooled:
        pooled.sort()
        def pct(p):
            return round(pooled[min(len(pooled) - 1, int(p / 100 * len(pooled)))], 1)
        verdict = "met" if pct(95) <= 80 else "not met"
        lines += ["", f"All runs pooled: {len(pooled)} pictures, p50 {pct(50)} ms, p95 {pct(95)} ms ({verdict})."]
    lines += ["", f"Command: `{args.command}` (out/bench/browser/rN: the logs and Chromium's summary.json)."]
    text = "\n".join(lines)
    print(text)
    write_section(args.doc, "browser", text)


def write_section(doc, section, text):
    begin, end = f"<!-- bench:{section}:begin -->", f"<!-- bench:{section}:end -->"
    try:
        with open(doc) as handle:
            content = handle.read()
    except FileNotFoundError:
        content = "# Benchmarks\n"
    block = f"{begin}\n<!-- Written by scripts/bench.sh; edits inside these markers are overwritten. -->\n{text}\n{end}"
    if begin in content and end in content:
        head, rest = content.split(begin, 1)
        _, tail = rest.split(end, 1)
        content = head + block + tail
    else:
        content = content.rstrip("\n") + "\n\n" + block + "\n"
    with open(doc, "w") as handle:
        handle.write(content)
    print(f"bench: wrote the {section} tables into {doc}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description="Benchmark tables for Docs/benchmarks.md.")
    sub = parser.add_subparsers(dest="what", required=True)
    m = sub.add_parser("macro")
    m.add_argument("--manifest", required=True)
    m.add_argument("--doc", required=True)
    m.add_argument("--command", required=True)
    m.add_argument("--commands", default="")
    m.add_argument("--load", default="?")
    m.add_argument("--matrix", default="full")
    u = sub.add_parser("micro")
    u.add_argument("--results-dir", required=True)
    u.add_argument("--doc", required=True)
    u.add_argument("--command", required=True)
    r = sub.add_parser("room")
    r.add_argument("--dir", required=True)
    r.add_argument("--subscribers", required=True, type=int)
    r.add_argument("--doc", required=True)
    r.add_argument("--command", required=True)
    r.add_argument("--publish", required=True)
    r.add_argument("--sink", required=True)
    i = sub.add_parser("instructions")
    i.add_argument("--dir", required=True)
    i.add_argument("--doc", required=True)
    i.add_argument("--command", required=True)
    b = sub.add_parser("browser")
    b.add_argument("--dir", required=True)
    b.add_argument("--doc", required=True)
    b.add_argument("--command", required=True)
    b.add_argument("--size", default="1280x720")
    args = parser.parse_args()
    {"macro": macro, "micro": micro, "room": room, "instructions": instructions, "browser": browser}[args.what](
        args
    )


if __name__ == "__main__":
    main()
