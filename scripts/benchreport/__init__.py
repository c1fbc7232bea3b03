"""The tables `scripts/bench.sh` writes into Docs/benchmarks.md, in three steps for each report
(macro, micro, room, instructions, browser):

  parse      reads what one run left on disk (out/bench/...) and the machine it ran on
  summarize  turns that into numbers: medians and ranges, ratios, percentiles
  render     formats those numbers as the Markdown text, and places it in the document

scripts/bench-report.py is the command line; scripts/tests/test_bench_report.py runs the steps
on a small recorded run (scripts/tests/fixtures/bench-report) and on a made-up one with a baseline
revision (fixtures/bench-baseline, BENCH_BASELINE).
"""

INPUT_FRAMES = 300  # 10 s at 30 fps, what `rtc-encode generate` writes
TOOLS = {
    "rtc-publish": "rtc-publish",
    "ffmpeg": "FFmpeg",
    "gstreamer": "GStreamer",
    "floor": "floor (H264Encoder alone)",
    "floor-av": "floor (x264 + Opus alone)",
    "floor-vp8": "second encoder: VP8 alone (libvpx)",
    "floor-vp9": "second encoder: VP9 alone (libvpx)",
}
# A baseline revision's rtc-publish (BENCH_BASELINE): its rows' tool is "rtc-publish@<short sha>",
# built from that revision in out/bench/baseline/<short sha> and run beside this tree's.
BASELINE_PREFIX = "rtc-publish@"
# `rtc-encode floor` without and with --audio, and with --codec vp8|vp9 (the encoder viewers
# without H.264 add): unpaced only, no sink.
FLOORS = ("floor", "floor-av", "floor-vp8", "floor-vp9")
# The macro table's rows, in order.
MACRO_ROWS = [
    ("rtc-publish", "paced"),
    ("ffmpeg", "paced"),
    ("gstreamer", "paced"),
    ("rtc-publish", "unpaced"),
    ("ffmpeg", "unpaced"),
    ("gstreamer", "unpaced"),
    ("floor", "unpaced"),
    ("floor-av", "unpaced"),
    ("floor-vp8", "unpaced"),
    ("floor-vp9", "unpaced"),
]
# The rows whose instructions callgrind counts.
INSTRUCTION_TOOLS = ("rtc-publish", "ffmpeg", "gstreamer", "floor")
# Which library an instruction was executed in, grouped by the job's stages.
INSTRUCTION_GROUPS = [
    ("x264", ("libx264",)),
    ("Opus", ("libopus",)),
    (
        "SRTP and its crypto",
        (
            "libsrtp",
            "libnettle",
            "libnss3",
            "libnssutil3",
            "libsoftokn3",
            "libfreeblpriv3",
            "libnspr4",
            "libplc4",
            "libplds4",
            "libgstsrtp",
        ),
    ),
    ("libc", ("libc.so",)),
    ("start-up (dynamic loader)", ("ld-linux",)),
]


def baseline_of(tool):
    """The revision of a baseline's rtc-publish row ("rtc-publish@bf14f3c" -> "bf14f3c"), else None."""
    return tool[len(BASELINE_PREFIX) :] if tool.startswith(BASELINE_PREFIX) else None


def is_publish(tool):
    """rtc-publish's rows: this tree's and a baseline revision's (the same program, stats and latency)."""
    return tool == "rtc-publish" or baseline_of(tool) is not None


def tool_name(tool):
    """A row's name in the tables: "rtc-publish @bf14f3c" for a baseline's."""
    revision = baseline_of(tool)
    return f"rtc-publish @{revision}" if revision is not None else TOOLS[tool]


def macro_rows(baselines=()):
    """MACRO_ROWS with each baseline's rtc-publish row right after this tree's of the same mode."""
    rows = []
    for tool, mode in MACRO_ROWS:
        rows.append((tool, mode))
        if tool == "rtc-publish":
            rows += [(baseline, mode) for baseline in baselines]
    return rows
