"""Turns the parsed runs into the numbers the tables show: medians with ranges (bench_stats.summary),
ratios, percentiles. Nothing here formats text; a missing number is None."""

import os
import re
import statistics

from bench_stats import summary
from benchreport import FLOORS, INPUT_FRAMES, INSTRUCTION_GROUPS, INSTRUCTION_TOOLS, baseline_of, is_publish, macro_rows


def percentiles(runs, key):
    """[p50, p99, max] of a per-run JSON block, each the median over the runs (None where no run
    has it), or None when no run has the block at all."""
    blocks = [r.get(key) for r in runs if isinstance(r.get(key), dict)]
    if not blocks:
        return None
    medians = []
    for name in ("p50", "p99", "max"):
        values = [b[name] for b in blocks if isinstance(b.get(name), (int, float))]
        medians.append(statistics.median(values) if values else None)
    return medians


# --- macro ---

# The peers' rows that rtc-publish's row of the same mode is compared with (None: the same mode);
# the floors run unpaced only. A run without a row (an older manifest has no floor-av) has None.
# A baseline revision's rtc-publish (BENCH_BASELINE) comes last in both, same mode.
AGAINST = [("ffmpeg", None), ("gstreamer", None), ("floor", "unpaced"), ("floor-av", "unpaced")]
RSS_AGAINST = ("ffmpeg", "gstreamer")


def macro(runs):
    """The end-to-end tables: for each x264 configuration its rows, then the ratios of medians and
    the round-by-round CPU ratios of rtc-publish to the other rows (a baseline's rtc-publish too)."""
    configs = []
    for r in runs:
        key = (r["preset"], r["threads"])
        if key not in configs:
            configs.append(key)
    baselines = [tool for tool in dict.fromkeys(r["tool"] for r in runs) if baseline_of(tool) is not None]
    against = AGAINST + [(tool, None) for tool in baselines]
    rss_against = RSS_AGAINST + tuple(baselines)
    tables = []
    medians = {}
    # CPU per frame by row and round: rows of one round ran minutes apart at most, so a
    # neighbour's load hits them alike, and their ratio round by round cancels much of it.
    per_round = {}
    for preset, threads in configs:
        rows = []
        for tool, mode in macro_rows(baselines):
            mine = [
                r for r in runs if (r["tool"], r["mode"], r["preset"], r["threads"]) == (tool, mode, preset, threads)
            ]
            if not mine:
                continue
            row = {"tool": tool, "mode": mode, "runs": len(mine)}
            rows.append(row)
            if all(r.get("missing") for r in mine):
                row["missing"] = True
                continue
            ok = [r for r in mine if r.get("rc") == 0]
            failed = [r for r in mine if r.get("rc") not in (0, None)]
            row["ok"] = len(ok)
            if not ok:
                row["error"] = failed[0].get("error", "") if failed else ""
                continue
            for r in ok:
                per_round.setdefault((preset, threads, tool, mode), {})[r["run"]] = r["cpu_ms_per_frame"]
            row["cpu"] = summary([r["cpu_ms_per_frame"] for r in ok])
            row["rss"] = summary([r["rss_mb"] for r in ok])
            medians[(preset, threads, tool, mode)] = {"cpu": row["cpu"]["median"], "rss": row["rss"]["median"]}
            row["cpu_percent"] = summary([r["cpu_percent"] for r in ok]) if mode == "paced" else None
            row["fps"] = summary([r["fps"] for r in ok]) if mode == "unpaced" else None
            row["sink_frames"] = sorted({r["sink_frames"] for r in ok if "sink_frames" in r})
            row["latency"] = percentiles(ok, "latency") if is_publish(tool) else None
            row["encode"] = percentiles(ok, "encode") if is_publish(tool) or tool in FLOORS else None
            if tool == "floor-av":
                row["audio_encode"] = percentiles(ok, "audio_encode")
        tables.append({"preset": preset, "threads": threads, "rows": rows})

    def ratio(preset, threads, mode, other_tool, other_mode, what):
        mine = medians.get((preset, threads, "rtc-publish", mode))
        other = medians.get((preset, threads, other_tool, other_mode))
        if not mine or not other or other[what] <= 0:
            return None
        return mine[what] / other[what]

    def paired(preset, threads, mode, other_tool, other_mode):
        mine = per_round.get((preset, threads, "rtc-publish", mode), {})
        other = per_round.get((preset, threads, other_tool, other_mode), {})
        return summary([mine[run] / other[run] for run in mine if run in other and other[run] > 0])

    ratios, rounds = [], []
    for preset, threads in configs:
        for mode in ("paced", "unpaced"):
            ratios.append(
                {
                    "preset": preset,
                    "threads": threads,
                    "mode": mode,
                    "cpu": [ratio(preset, threads, mode, tool, other or mode, "cpu") for tool, other in against],
                    "rss": [ratio(preset, threads, mode, tool, mode, "rss") for tool in rss_against],
                }
            )
            rounds.append(
                {
                    "preset": preset,
                    "threads": threads,
                    "mode": mode,
                    "cpu": [paired(preset, threads, mode, tool, other or mode) for tool, other in against],
                }
            )
    return {
        "runs": max((r["run"] for r in runs), default=0),
        "baselines": [baseline_of(tool) for tool in baselines],
        "tables": tables,
        "ratios": ratios,
        "rounds": rounds,
    }


# --- micro ---


def micro(results):
    """The micro-benchmark table's rows (wall time, mallocs net of the harness, per packet), and
    the cost of an extra subscriber: SDES destinations 1 -> 100, WebRTC viewers against SDES 1 -> 10."""
    names = sorted({(target, name) for target, name, _ in results}, key=lambda k: (k[0] != "PacketBenchmarks", k[1]))
    harness = {
        target: results.get((target, "Harness: empty iteration", "mallocCountTotal"), {}).get("p50", 0.0)
        for target, _ in names
    }
    rows = []
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
        if destinations:
            fan_out[int(destinations.group(1))] = (wall["p50"], net)
        if viewers:
            webrtc.setdefault(viewers.group(2), {})[int(viewers.group(1))] = (wall["p50"], net)
        per_packet = None
        if count:
            per_packet = {"us": wall["p50"] / count, "mallocs": net / count if net is not None else None}
        rows.append({"name": name, "wall": wall, "mallocs": net, "per_packet": per_packet})

    def per_extra(rows, first, last):
        """(time, allocations) per extra subscriber and packet from `first` to `last` subscribers."""
        (t1, m1), (tn, mn) = rows[first], rows[last]
        allocations = (mn - m1) / (last - first) if m1 is not None and mn is not None else None
        return (tn - t1) / (last - first), allocations

    subscriber = per_extra(fan_out, 1, 100) if 1 in fan_out and 100 in fan_out else None
    # Issue 17: an extra WebRTC viewer against an extra SDES destination, both over 1 -> 10.
    viewers = None
    if 1 in fan_out and 10 in fan_out and webrtc:
        sdes = per_extra(fan_out, 1, 10)
        suites = []
        for suite, suite_rows in sorted(webrtc.items(), key=lambda item: not item[0].startswith("AES-CM")):
            if 1 not in suite_rows or 10 not in suite_rows:
                continue
            cost, allocations = per_extra(suite_rows, 1, 10)
            suites.append(
                {
                    "suite": suite,
                    "cost": cost,
                    "allocations": allocations,
                    "ratio": cost / sdes[0] if sdes[0] > 0 else None,
                }
            )
        viewers = {"sdes": sdes, "suites": suites}
    return {
        "targets": len(names),
        "harness": harness,
        "rows": rows,
        "extra_subscriber": subscriber,
        "extra_viewer": viewers,
    }


def micro_measures(results):
    """(target, name) -> (wall {p50, p99} µs, mallocs p50 less the target's empty harness iteration,
    or None) of each benchmark in one run's results."""
    harness = {
        target: values["p50"]
        for (target, name, metric), values in results.items()
        if name == "Harness: empty iteration" and metric == "mallocCountTotal"
    }
    measures = {}
    for target, name, metric in results:
        if metric != "wallClock" or name.startswith("Harness"):
            continue
        mallocs = results.get((target, name, "mallocCountTotal"))
        net = max(0.0, mallocs["p50"] - harness.get(target, 0.0)) if mallocs else None
        measures[(target, name)] = (results[(target, name, metric)], net)
    return measures


def micro_compare(before, after):
    """Before and after (BENCH_BASELINE): a baseline revision's Benchmarks/ results and this tree's,
    one row per benchmark in either, in the micro table's order. Each side's wall p50 (µs) and
    mallocs, and after / before; None where that side has no such benchmark."""
    mine, theirs = micro_measures(after), micro_measures(before)
    rows = []
    for key in sorted(set(mine) | set(theirs), key=lambda k: (k[0] != "PacketBenchmarks", k[1])):
        wall_before, mallocs_before = theirs.get(key, (None, None))
        wall_after, mallocs_after = mine.get(key, (None, None))
        before_us = wall_before["p50"] if wall_before else None
        after_us = wall_after["p50"] if wall_after else None
        rows.append(
            {
                "name": key[1],
                "before": before_us,
                "after": after_us,
                "ratio": after_us / before_us if before_us and after_us is not None else None,
                "mallocs_before": mallocs_before,
                "mallocs_after": mallocs_after,
            }
        )
    return {"rows": rows, "before_found": bool(theirs), "after_found": bool(mine)}


# --- room ---


def room(runs):
    """Medians and ranges over the room's runs that ended cleanly; the runs that did not."""
    good = [r for r in runs if r.get("rc") == 0 and "wall" in r]

    def stat(key, scale=1.0):
        return summary([r[key] * scale for r in good if isinstance(r.get(key), (int, float))])

    return {
        "runs": len(runs),
        "good": len(good),
        "cpu_percent": summary([(r["user"] + r["system"]) / max(r["wall"], 1e-3) * 100 for r in good]),
        "user": stat("user"),
        "system": stat("system"),
        "frames_in": stat("frames_in"),
        "frames_out": stat("frames_out"),
        "dropped": stat("dropped"),
        "sink_fewest": stat("sink_fewest"),
        "sink_most": stat("sink_most"),
        "latency": percentiles(good, "latency"),
        "encode": percentiles(good, "encode"),
        "deepest": stat("deepest"),
        "rss_mb": stat("rss_mb"),
        "failed": [{"dir": r["dir"], "rc": r.get("rc")} for r in runs if r.get("rc") != 0],
    }


# --- instructions ---


def instructions(found, tools=INSTRUCTION_TOOLS):
    """Each counted row's total, its instructions by library group and the rest, and the rows
    it is compared with (a baseline revision's rtc-publish, when counted, is one); the rows of
    `tools` without a count. Rows come in the order of `tools`, then any other counted."""
    rows = {}
    for tool in sorted(found, key=lambda t: tools.index(t) if t in tools else len(tools)):
        totals = found[tool]
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
        total = sum(totals.values())
        rows[tool] = {"total": total, "per_frame": total / INPUT_FRAMES, "groups": groups, "rest": rest}
    gst = rows.get("gstreamer", {}).get("total")
    floor = rows.get("floor", {}).get("total")
    baseline = next((t for t in list(tools) + list(found) if baseline_of(t) is not None), None)
    before = rows.get(baseline, {}).get("total") if baseline else None
    for row in rows.values():
        row["vs_gstreamer"] = row["total"] / gst if gst else None
        row["vs_floor"] = row["total"] / floor if floor else None
        if baseline:
            row["vs_baseline"] = row["total"] / before if before else None
    return {
        "rows": rows,
        "baseline": baseline_of(baseline) if baseline else None,
        "missing": [t for t in tools if t not in rows],
    }


# --- browser ---


def browser(runs):
    """Each run's row as Chromium measured it, and the glass-to-glass times of all runs pooled."""
    good = [r for r in runs if "tab" in r]
    pooled = sorted(v for r in good for v in r["tab"]["glassToGlassMs"].get("list", []))
    result = {
        "chromium": good[0]["chromium"].split("/")[-1] if good and good[0].get("chromium") else None,
        "runs": runs,
        "pooled": None,
    }
    if pooled:

        def pct(p):
            return round(pooled[min(len(pooled) - 1, int(p / 100 * len(pooled)))], 1)

        result["pooled"] = {"count": len(pooled), "p50": pct(50), "p95": pct(95), "met": pct(95) <= 80}
    return result
