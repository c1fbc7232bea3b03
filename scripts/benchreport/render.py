"""Formats the summarized numbers as the Markdown of Docs/benchmarks.md, and places a report's text
between its markers in that document. Nothing here reads a file or the clock: the moment and the
machine of a run come in as an Environment."""

from dataclasses import dataclass
from datetime import date, datetime

from bench_stats import cell
from benchreport import FLOORS, INSTRUCTION_GROUPS, is_publish, tool_name


@dataclass(frozen=True)
class Environment:
    """When and where the run was measured: `now` in UTC, `today` the local date (the room and
    instruction reports show a date only), `machine` cores, CPU and kernel, `versions` the peers'."""

    now: datetime
    today: date
    machine: str
    versions: str = ""


def number(value, digits=2, missing="n/a"):
    return missing if value is None else f"{value:.{digits}f}"


def percentiles_cell(medians, digits=1):
    """p50 / p99 / max (summarize.percentiles); `?` for one no run had, `n/a` for none at all."""
    if medians is None:
        return "n/a"
    return " / ".join(number(value, digits, "?") for value in medians)


# --- macro ---

MACRO_PROSE = (
    "Medians over the runs, range in parentheses; ⚠ marks a range wider than 25 % of the median "
    "(a neighbour was busy: compare rows of this run only). CPU is user+sys of the whole process "
    "(`/usr/bin/time`) per frame encoded: the 300 input frames, or fewer when paced rtc-publish dropped "
    "some (frames at sink counts the video RTP marker bits the sink saw). fps is frames over wall time, "
    "start-up and shutdown included (rtc-publish waits 0.2 s before its RTCP BYE, so that the BYE does not "
    "overtake the last media packets at the receiver: no CPU, but a fifth of a second of wall time). "
    "Latency is rtc-publish's own (frame in -> last packet of the frame sent); encode "
    "is the encoder call alone (for the x264 + Opus floor, x264's, then Opus's per 20 ms frame). Both floors "
    "run unpaced only, with nothing else (no mixer, RTP, SRTP or sockets): the H264Encoder floor encodes the "
    "video alone, the x264 + Opus floor the same frames and the 10 s of audio (our OpusEncoder, same settings, "
    "500 frames of 20 ms interleaved with the video by capture time). rtc-publish's unpaced ratio to the first "
    "counts audio and the rest of the pipeline on top of x264, to the second only what lies beyond the two "
    "encoders; the paced rows' ratios to them include pacing as well."
)
MACRO_HEADER = (
    "| row | runs ok | CPU ms/frame | CPU % of one core | fps | peak RSS MB | latency p50/p99/max ms "
    "| encode p50/p99/max ms | frames at sink |"
)


def macro_row(row):
    tool, mode = row["tool"], row["mode"]
    name = f"{tool_name(tool)}, {mode}" if tool not in FLOORS else tool_name(tool)
    if row.get("missing"):
        return f"| {name} | n/a (this rtc-publish has no --unpaced) | n/a | n/a | n/a | n/a | n/a | n/a | n/a |"
    if not row["ok"]:
        return f"| {name} | 0/{row['runs']}: failed ({row['error']}) | | | | | | | |"
    percent = cell(row["cpu_percent"], 1) if mode == "paced" else "—"
    fps = cell(row["fps"], 0) if mode == "unpaced" else "—"
    sink = "/".join(str(s) for s in row["sink_frames"]) if row["sink_frames"] else "—"
    latency = percentiles_cell(row["latency"]) if is_publish(tool) else "—"
    encode = percentiles_cell(row["encode"]) if is_publish(tool) or tool in FLOORS else "—"
    if tool == "floor-av":
        encode += f"; Opus {percentiles_cell(row['audio_encode'], 2)}"
    return (
        f"| {name} | {row['ok']}/{row['runs']} | {cell(row['cpu'])} | {percent} | {fps} | {cell(row['rss'], 0)} | "
        f"{latency} | {encode} | {sink} |"
    )


def macro(summary, env, command, load, matrix, commands=""):
    lines = [
        f"Measured {env.now:%Y-%m-%d %H:%M} UTC on {env.machine}; load average {load} (before -> after).  ",
        f"Versions: {env.versions}.  ",
        f"Command: `{command}` ({summary['runs']} interleaved runs of each row, matrix `{matrix}`).",
        "",
        MACRO_PROSE,
        "",
    ]
    for table in summary["tables"]:
        threads = table["threads"]
        lines += [
            f"#### x264 {table['preset']}, {threads} thread{'s' if threads > 1 else ''}",
            "",
            MACRO_HEADER,
            "|---|---|---|---|---|---|---|---|---|",
        ]
        lines += [macro_row(row) for row in table["rows"]]
        lines.append("")
    baselines = [f"vs @{revision}" for revision in summary.get("baselines", [])]
    cpu_columns = ["CPU/frame vs FFmpeg", "vs GStreamer", "vs floor", "vs floor (x264 + Opus)"] + baselines
    rss_columns = ["peak RSS vs FFmpeg", "vs GStreamer"] + baselines
    lines += [
        "#### Ratios (medians of this run; below 1 means rtc-publish is cheaper)",
        "",
        "| x264 | mode | " + " | ".join(cpu_columns + rss_columns) + " |",
        "|---|---|" + "---|" * len(cpu_columns + rss_columns),
    ]
    for r in summary["ratios"]:
        cells = [number(value) for value in r["cpu"] + r["rss"]]
        lines.append(f"| {r['preset']}, {r['threads']}t | {r['mode']} | {' | '.join(cells)} |")
    lines += [
        "",
        "#### CPU ratios round by round (the median of each round's ratio, range in parentheses)",
        "",
        "Each round runs every row once, back to back, so a busy neighbour slows the rows of one round "
        "alike; the ratio within a round cancels much of that, where a ratio of medians over the whole run "
        "does not. The floors have no paced row: the paced ratio to them is against their unpaced runs.",
        "",
        "| x264 | mode | " + " | ".join(["vs FFmpeg"] + cpu_columns[1:]) + " |",
        "|---|---|" + "---|" * len(cpu_columns),
    ]
    for r in summary["rounds"]:
        cells = [cell(stat) for stat in r["cpu"]]
        lines.append(f"| {r['preset']}, {r['threads']}t | {r['mode']} | {' | '.join(cells)} |")
    for revision in summary.get("baselines", []):
        lines += [
            "",
            f"rtc-publish @{revision} is rtc-publish built from revision {revision} (`BENCH_BASELINE`, in "
            f"out/bench/baseline/{revision}), doing the same job with the same arguments in every round, right "
            f"after this tree's row of the same mode. The vs @{revision} columns are this tree's rtc-publish over "
            "it: above 1 means this tree costs more than the baseline.",
        ]
    if commands:
        lines += [
            "",
            "<details><summary>Exact commands of each row (run 1)</summary>",
            "",
            "```",
            commands,
            "```",
            "",
            "</details>",
        ]
    return "\n".join(lines)


# --- micro ---


def micro(summary, env, command, comparison=None, baseline=None):
    harness = ", ".join(f"{target} {value:.0f}" for target, value in sorted(summary["harness"].items()))
    lines = [
        f"Measured {env.now:%Y-%m-%d %H:%M} UTC on {env.machine} with "
        f"ordo-one/benchmark 1.38.1 (release build, malloc counts from its MallocInterposer).  ",
        f"Command: `{command}` (in Benchmarks/: `swift package benchmark run --format histogramPercentiles`).",
        "",
        "Wall time is per iteration (p50 and p99 over the iterations). Mallocs are per iteration (p50), "
        f"less what an empty iteration of the harness allocates ({harness or 'none measured'}), so they count "
        "the code under test alone. Per packet divides by the packets one iteration sends.",
        "",
        "| benchmark | wall p50 µs | wall p99 µs | mallocs | per packet: µs / mallocs |",
        "|---|---|---|---|---|",
    ]
    for row in summary["rows"]:
        wall = row["wall"]
        per_packet = "—"
        if row["per_packet"]:
            per_packet = f"{row['per_packet']['us']:.3f} / {number(row['per_packet']['mallocs'])}"
        digits = 3 if wall["p50"] < 10 else 1
        lines.append(
            f"| {row['name']} | {wall['p50']:.{digits}f} | {wall['p99']:.{digits}f} | "
            f"{number(row['mallocs'], 0)} | {per_packet} |"
        )
    if summary["extra_subscriber"]:
        extra, allocations = summary["extra_subscriber"]
        lines += [
            "",
            f"Each extra subscriber costs {extra:.2f} µs per packet (copy + SRTP protect + sendto: "
            f"(t100 − t1) / 99) and {number(allocations)} allocations per packet ((mallocs100 − mallocs1) / 99).",
        ]
    if summary["extra_viewer"]:
        sdes, sdes_allocations = summary["extra_viewer"]["sdes"]
        lines += [
            "",
            "Per extra subscriber and packet, (t10 − t1) / 9 (issue 17: a WebRTC viewer at most 1.1 × an SDES "
            "destination):",
            "",
            f"- SDES destination (AES-CM-128 + HMAC-SHA1-80): {sdes:.2f} µs, {number(sdes_allocations)} allocations",
        ]
        for suite in summary["extra_viewer"]["suites"]:
            ratio = f"{suite['ratio']:.2f} ×" if suite["ratio"] is not None else "n/a"
            lines.append(
                f"- WebRTC viewer ({suite['suite']}): {suite['cost']:.2f} µs ({ratio}), "
                f"{number(suite['allocations'])} allocations"
            )
    if not summary["targets"]:
        lines.append("| (no results found) | | | | |")
    if comparison is not None:
        lines += ["", micro_compare(comparison, baseline)]
    return "\n".join(lines)


def micro_compare(comparison, baseline):
    """One table of a baseline revision's micro-benchmarks and this tree's (summarize.micro_compare)."""

    def wall(value):
        return "—" if value is None else f"{value:.{3 if value < 10 else 1}f}"

    lines = [
        f"#### Before and after: @{baseline} and this tree",
        "",
        f"The micro-benchmarks of revision {baseline} (`BENCH_BASELINE`: the `Benchmarks/` package of "
        f"out/bench/baseline/{baseline}, built against that revision's sources) and of this tree, run one after "
        "the other in this run. Wall time is the p50 per iteration in µs (after / before above 1: this tree is "
        "slower); mallocs are per iteration (p50), less each one's harness. —: not in that revision's benchmarks.",
        "",
        f"| benchmark | before (@{baseline}) µs | after µs | after / before | mallocs before / after |",
        "|---|---|---|---|---|",
    ]
    for row in comparison["rows"]:
        ratio = number(row["ratio"], 2, "—")
        mallocs = f"{number(row['mallocs_before'], 0, '—')} / {number(row['mallocs_after'], 0, '—')}"
        lines.append(f"| {row['name']} | {wall(row['before'])} | {wall(row['after'])} | {ratio} | {mallocs} |")
    if not comparison["before_found"]:
        lines.append(f"- no results from @{baseline}'s benchmarks (see out/bench/micro-{baseline}.log)")
    if not comparison["after_found"]:
        lines.append("- no results from this tree's benchmarks (see out/bench/micro.log)")
    return "\n".join(lines)


# --- room ---


def room(summary, env, subscribers, command, publish, sink):
    s = summary
    lines = [
        f"Run {env.today.isoformat()} on {env.machine}; {s['good']} of {s['runs']} runs ended cleanly.",
        "",
        f"Publisher: `{publish}`",
        f"Receivers: `{sink}` (one process, {subscribers} blocks of four ports)",
        "",
        "| subscribers | CPU % of one core | user s | sys s | frames in / sent / dropped "
        "| fewest / most frames a subscriber got | frame in → last packet out p50 / p99 / max (ms) "
        "| encoder p50 / p99 / max (ms) | deepest send queue | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|---|---|",
        f"| {subscribers} | {cell(s['cpu_percent'], 0)} | {cell(s['user'])} | {cell(s['system'])} "
        f"| {cell(s['frames_in'], 0)} / {cell(s['frames_out'], 0)} / {cell(s['dropped'], 0)} "
        f"| {cell(s['sink_fewest'], 0)} / {cell(s['sink_most'], 0)} | {percentiles_cell(s['latency'])} "
        f"| {percentiles_cell(s['encode'])} | {cell(s['deepest'], 0)} | {cell(s['rss_mb'], 1)} |",
        "",
        "Cells are medians over the runs with (min–max); a subscriber's frames are counted by the",
        'marker bit on its video port, so "fewest" equal to "sent" means every subscriber got every frame.',
        "Frame latencies land in 10 µs buckets up to 100 ms (`LatencyHistogram`): a p99 of 100.0 means",
        "at least 100 ms; the maximum is exact.",
        f"Command: `{command}`",
    ]
    for failed in s["failed"]:
        lines.append(f"- run in {failed['dir']} failed (exit {failed['rc']}): see its stderr.txt")
    return "\n".join(lines)


# --- instructions ---


def instructions(summary, env, command):
    baseline = summary.get("baseline")
    header = (
        ["row", "instructions (billions)", "per frame (millions)"]
        + [n for n, _ in INSTRUCTION_GROUPS]
        + ["the rest (the program, its other libraries)", "vs GStreamer", "vs floor"]
        + ([f"vs @{baseline}"] if baseline else [])
    )
    lines = [
        f"Counted {env.today.isoformat()} on {env.machine} with valgrind's callgrind, each row's "
        "unpaced x264 ultrafast 1-thread job once (the same 300 frames and 10 s of audio as above).",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for tool, row in summary["rows"].items():
        cells = [tool_name(tool), f"{row['total'] / 1e9:.2f}", f"{row['per_frame'] / 1e6:.2f}"]
        cells += [f"{row['groups'][n] / 1e9:.2f}" for n, _ in INSTRUCTION_GROUPS]
        cells += [f"{row['rest'] / 1e9:.2f}", number(row["vs_gstreamer"], 2, "—"), number(row["vs_floor"], 2, "—")]
        if baseline:
            cells.append(number(row["vs_baseline"], 3, "—"))
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "An instruction count does not move with a busy neighbour (two counts of rtc-publish's row differed",
        "by 0.01 %). It is not time (a cache miss costs many instructions' worth): it settles how much work",
        "a row does, the CPU-time tables above what that work cost on this machine during the run.",
        'FFmpeg does SRTP with its own AES and HMAC (libavformat, libavutil: "the rest"); GStreamer uses',
        "Debian's libsrtp2, whose crypto is NSS's; rtc-publish uses that libsrtp2 with its AES-CM and",
        "HMAC-SHA1 on Nettle (NSS still runs libsrtp's start-up self-tests). valgrind hides the CPU's SHA",
        "instructions, so SHA-1 counts here as Nettle's portable code (about 20,000 instructions a packet).",
        f"Command: `{command}` (in out/bench/instructions/ROW: `valgrind --tool=callgrind` + the row's unpaced "
        "command).",
    ]
    if baseline:
        lines.append(
            f"rtc-publish @{baseline} is rtc-publish built from revision {baseline} (`BENCH_BASELINE`), counted on "
            f"the same job; vs @{baseline} is each row's count over its count."
        )
    if summary["missing"]:
        missing = ", ".join(tool_name(t) for t in summary["missing"])
        lines.append(f"- no count for: {missing} (see its stderr.txt under out/bench/instructions)")
    return "\n".join(lines)


# --- browser ---


def browser(summary, command, size):
    chromium = f" {summary['chromium']}" if summary["chromium"] else ""
    lines = [
        "### Glass-to-glass in a browser",
        "",
        f"rtc-publish (synthetic screen {size}, 30 fps, ultrafast, 1 thread, the default 1800 kbit/s) →"
        f" loopback → headless Chromium{chromium} on rtc-signal's viewer page. Glass-to-glass per picture:"
        " its expected display time in the browser minus its capture time read from the picture's timecode,"
        " both on this machine's CLOCK_MONOTONIC (Docs/web.md). Target: p95 ≤ 80 ms on loopback.",
        "",
        "| run | pictures measured | fps (`<video>`) | dropped | freezes | first frame ms | p50 ms | p95 ms | max ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for number_, r in enumerate(summary["runs"], 1):
        if "tab" not in r:
            lines.append(f"| {number_} | failed: {r['error']} | | | | | | | |")
            continue
        t = r["tab"]
        g = t["glassToGlassMs"]
        lines.append(
            f"| {number_} | {g['count']} | {t['playbackQuality']['fps']} | {t['playbackQuality']['droppedInWindow']} |"
            f" {t['frames']['freezes']} | {t['firstFrameMs']} | {g['p50']} | {g['p95']} | {g['max']} |"
        )
    pooled = summary["pooled"]
    if pooled:
        verdict = "met" if pooled["met"] else "not met"
        lines += [
            "",
            f"All runs pooled: {pooled['count']} pictures, p50 {pooled['p50']} ms, p95 {pooled['p95']} ms ({verdict}).",
        ]
    lines += ["", f"Command: `{command}` (out/bench/browser/rN: the logs and Chromium's summary.json)."]
    return "\n".join(lines)


# --- the document ---


def place_section(content, section, text):
    """`content` (Docs/benchmarks.md, or None for no document yet) with `text` between the section's
    markers, replacing what was there, or appended with new markers; prose outside them is kept."""
    if content is None:
        content = "# Benchmarks\n"
    begin, end = f"<!-- bench:{section}:begin -->", f"<!-- bench:{section}:end -->"
    block = f"{begin}\n<!-- Written by scripts/bench.sh; edits inside these markers are overwritten. -->\n{text}\n{end}"
    if begin in content and end in content:
        head, rest = content.split(begin, 1)
        _, tail = rest.split(end, 1)
        return head + block + tail
    return content.rstrip("\n") + "\n\n" + block + "\n"
