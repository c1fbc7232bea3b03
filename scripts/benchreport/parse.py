"""Reads what one `scripts/bench.sh` run left on disk, and the machine it ran on. Nothing here
computes a statistic: each function returns the records as found, one per run."""

import glob
import json
import os
import re
import subprocess

from benchreport import BASELINE_PREFIX, FLOORS, INPUT_FRAMES, INSTRUCTION_TOOLS, is_publish


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


def read_time(directory):
    """wall, user, sys (s) and peak RSS (KiB) from `/usr/bin/time -f '%e %U %S %M'` (its last line)."""
    with open(os.path.join(directory, "time.txt")) as handle:
        wall, user, system, rss = handle.read().split()[-4:]
    return float(wall), float(user), float(system), int(rss)


# --- macro: the end-to-end rows ---


def read_run(tool, mode, preset, threads, run, rc, directory):
    """One manifest line's run: exit status, /usr/bin/time, the tool's own JSON, the sink's counts."""
    row = {"tool": tool, "mode": mode, "preset": preset, "threads": int(threads), "run": int(run)}
    if rc == "missing":
        row["missing"] = True
        return row
    row["rc"] = int(rc)
    try:
        wall, user, system, rss = read_time(directory)
        row.update(wall=wall, cpu=user + system, rss_mb=rss / 1024)
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
    if is_publish(tool):
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


def manifest(path, root=None):
    """Every run bench.sh listed in its manifest (tool, mode, preset, threads, run, exit status or
    `missing`, directory: tab-separated). Relative directories are read from `root` when given
    (bench.sh writes them relative to the repository, where it runs)."""
    runs = []
    with open(path) as handle:
        for line in handle:
            fields = line.rstrip("\n").split("\t")
            if len(fields) == 7:
                if root is not None:
                    fields[6] = os.path.join(root, fields[6])
                runs.append(read_run(*fields))
    return runs


def text(path):
    """A whole file without its trailing blank lines, or "" when there is none (no path, unreadable)."""
    try:
        with open(path) as handle:
            return handle.read().rstrip()
    except OSError:
        return ""


# --- micro: the ordo-one/benchmark results ---

MICRO_SCALE = {"ns": 1e-3, "μs": 1.0, "us": 1.0, "ms": 1e3, "s": 1e6, "K": 1e3, "M": 1e6, "G": 1e9}


def micro_results(directory):
    """(target, name, metric) -> {p50, p99} (µs, or counts) from the histogramPercentiles TSV files."""
    results = {}
    for path in glob.glob(os.path.join(directory, "*.histogram.percentiles.tsv")):
        base = os.path.basename(path)[: -len(".histogram.percentiles.tsv")]
        stem, _, metric = base.rpartition(".")
        match = re.search(r"\.(PacketBenchmarks|MediaBenchmarks)\.", stem)
        if not match:
            continue
        name = stem[match.end() :].replace("_", " ")
        with open(path) as handle:
            header = handle.readline()
            values = dict(line.split("\t") for line in handle if "\t" in line)
        unit = re.search(r"\((ns|μs|us|ms|s|K|M|G)\)", header)
        factor = MICRO_SCALE[unit.group(1)] if unit else 1.0
        try:
            results[(match.group(1), name, metric)] = {
                "p50": float(values["50"]) * factor,
                "p99": float(values["99"]) * factor,
            }
        except (KeyError, ValueError):
            continue
    return results


# --- room: one publisher to many subscribers ---


def room_runs(directory):
    """Each run under DIR/rN: exit status, /usr/bin/time, rtc-publish's final totals and timings,
    `rtc-encode sink`'s counts."""
    runs = []
    for run_dir in sorted(glob.glob(os.path.join(directory, "r*"))):
        run = {"dir": run_dir}
        try:
            with open(os.path.join(run_dir, "rc")) as handle:
                run["rc"] = int(handle.read().strip() or "-1")
            wall, user, system, rss = read_time(run_dir)
            run.update(wall=wall, user=user, system=system, rss_mb=rss / 1024)
        except (OSError, ValueError):
            run["rc"] = run.get("rc", -1) or -1
        final = last_json_line(os.path.join(run_dir, "stats.jsonl"), lambda r: r.get("final") is True)
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
        sink = last_json_line(os.path.join(run_dir, "sink.json"), lambda r: "blocks" in r)
        if sink:
            run.update(
                sink_fewest=sink.get("framesFewest"),
                sink_most=sink.get("framesMost"),
                sink_datagrams=sink.get("datagrams"),
            )
        runs.append(run)
    return runs


# --- instructions: callgrind's counts ---


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


def instruction_tools(directory):
    """The rows callgrind was to count: INSTRUCTION_TOOLS, and after rtc-publish each baseline's
    (BENCH_BASELINE: a directory DIR/rtc-publish@SHA)."""
    baselines = sorted(
        os.path.basename(path)
        for path in glob.glob(os.path.join(directory, glob.escape(BASELINE_PREFIX) + "*"))
        if os.path.isdir(path)
    )
    tools = []
    for tool in INSTRUCTION_TOOLS:
        tools.append(tool)
        if tool == "rtc-publish":
            tools += baselines
    return tools


def instruction_totals(directory):
    """tool -> {object file: instructions} for each row under DIR/TOOL that exited 0 with counts."""
    found = {}
    for tool in instruction_tools(directory):
        tool_dir = os.path.join(directory, tool)
        try:
            with open(os.path.join(tool_dir, "rc")) as handle:
                rc = int(handle.read().strip() or "-1")
            totals = callgrind_totals(os.path.join(tool_dir, "callgrind.out"))
        except (OSError, ValueError):
            continue
        if rc != 0 or not totals:
            continue
        found[tool] = totals
    return found


# --- browser: glass-to-glass in headless Chromium ---


def browser_runs(directory):
    """Each run's Chromium summary (Tests/Peers/chromium_viewer.py) under DIR/rN/chromium: its
    first tab and Chromium's version, or what went wrong. Runs without a summary are left out."""
    runs = []
    for run_dir in sorted(glob.glob(os.path.join(directory, "r*"))):
        try:
            with open(os.path.join(run_dir, "chromium", "summary.json")) as handle:
                summary = json.load(handle)
        except (OSError, ValueError):
            continue
        if not summary.get("ok") or not summary.get("tabs"):
            runs.append({"dir": run_dir, "error": summary.get("error") or "no tab"})
            continue
        runs.append({"dir": run_dir, "tab": summary["tabs"][0], "chromium": summary.get("chromium")})
    return runs
