"""scripts/benchreport on a small recorded `make bench` run: parse -> summarize -> render.

The fixture (fixtures/bench-report/out/bench) is the tree bench.sh leaves under out/bench, trimmed:
the manifest and run directories of 3 rounds of the x264 ultrafast 1-thread rows (one GStreamer
run failed: its socket was taken), 3 room runs (the third killed by its timeout), a few
micro-benchmark results, callgrind counts (the floor's run failed) and 3 browser runs (the third
had no picture). fixtures/bench-report/expected holds what scripts/bench-report.py printed on it
before it was split into parse, summarize and render, with the clock and machine below.

fixtures/bench-baseline/out/bench is a made-up run with BENCH_BASELINE=abc1234: 2 rounds of this
tree's rtc-publish, the baseline's and FFmpeg, paced and unpaced; callgrind counts of rtc-publish,
the baseline's and GStreamer; the micro-benchmarks of both trees (micro, micro-abc1234), each with
a benchmark the other lacks.

Run: out/venv/bin/python -m unittest discover -s scripts/tests (make test does).
"""

import datetime
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
sys.path.insert(0, SCRIPTS)

import benchreport  # noqa: E402
from benchreport import INSTRUCTION_TOOLS, parse, render, summarize  # noqa: E402

FIXTURE = os.path.join(HERE, "fixtures", "bench-report")
BENCH = os.path.join(FIXTURE, "out", "bench")
BASELINE_FIXTURE = os.path.join(HERE, "fixtures", "bench-baseline")
BASELINE_BENCH = os.path.join(BASELINE_FIXTURE, "out", "bench")
ENV = render.Environment(
    now=datetime.datetime(2026, 11, 29, 1, 23, 45, tzinfo=datetime.timezone.utc),
    today=datetime.date(2026, 11, 29),
    machine="2 cores, AMD EPYC 7B13, 6.1.0-28-amd64",
    versions="ffmpeg version 5.1.6-0+deb12u1 Copyright (c) 2000-2024 the FFmpeg developers; GStreamer 1.22.0; "
    "libx264-164 2:0.164.3095+gitbaee400-3; Swift version 6.3.1 (swift-6.3.1-RELEASE)",
)


def expected(name):
    """What the single-file bench-report.py printed (print adds the last newline)."""
    with open(os.path.join(FIXTURE, "expected", name + ".md")) as handle:
        return handle.read().removesuffix("\n")


def row(text, first_cell):
    """The table line of `text` whose first cell is `first_cell`."""
    lines = [line for line in text.splitlines() if line.startswith(f"| {first_cell} |")]
    if len(lines) != 1:
        raise AssertionError(f"{len(lines)} rows start with {first_cell!r}")
    return lines[0]


class Macro(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.runs = parse.manifest(os.path.join(BENCH, "manifest.tsv"), root=FIXTURE)
        cls.summary = summarize.macro(cls.runs)
        cls.text = render.macro(
            cls.summary,
            ENV,
            "BENCH_RUNS=3 scripts/bench.sh",
            "0.5 0.4 0.3 -> 1.1 0.7 0.5",
            "quick",
            parse.text(os.path.join(BENCH, "commands.txt")),
        )

    def test_parse_reads_every_run_of_the_manifest(self):
        self.assertEqual(len(self.runs), 24)  # 8 rows x 3 rounds
        first = self.runs[0]
        self.assertEqual((first["tool"], first["mode"], first["run"], first["rc"]), ("rtc-publish", "paced", 1, 0))
        self.assertEqual(first["wall"], 10.31)
        self.assertAlmostEqual(first["cpu"], 1.52 + 0.14)
        self.assertEqual(first["rss_mb"], 35840 / 1024)
        self.assertEqual(first["latency"], {"p50": 4.7, "p99": 8.1, "max": 8.7})
        self.assertEqual((first["sink_frames"], first["sink_packets"]), (300, 1188 + 4 + 500 + 3))
        # Round 2 of paced rtc-publish dropped 2 frames: CPU per frame counts the 298 it sent.
        dropped = self.runs[8]
        self.assertEqual((dropped["run"], dropped["frames"], dropped["sink_frames"]), (2, 298, 298))
        self.assertAlmostEqual(dropped["cpu_ms_per_frame"], (1.43 + 0.17) * 1000 / 298)
        floor_av = self.runs[7]
        self.assertEqual(floor_av["audio_encode"], {"p50": 0.21, "p99": 0.38, "max": 0.95})
        failed = [r for r in self.runs if r.get("rc") != 0]
        self.assertEqual([(r["tool"], r["mode"], r["run"], r["rc"]) for r in failed], [("gstreamer", "unpaced", 3, 1)])
        self.assertTrue(failed[0]["error"].endswith("bind: Address already in use"))

    def test_summarize_takes_medians_and_ratios(self):
        (table,) = self.summary["tables"]
        self.assertEqual((table["preset"], table["threads"], self.summary["runs"]), ("ultrafast", 1, 3))
        rows = {(r["tool"], r["mode"]): r for r in table["rows"]}
        self.assertEqual(len(rows), 8)
        paced = rows[("rtc-publish", "paced")]
        self.assertAlmostEqual(paced["cpu"]["median"], 1.66 * 1000 / 300)
        self.assertAlmostEqual(paced["cpu"]["max"], 1.91 * 1000 / 300)
        self.assertEqual(paced["sink_frames"], [298, 300])
        self.assertEqual(paced["latency"], [4.7, 8.1, 8.8])
        gst = rows[("gstreamer", "unpaced")]
        self.assertEqual((gst["ok"], gst["runs"]), (2, 3))
        ffmpeg_paced = rows[("ffmpeg", "paced")]["cpu"]["median"]
        ratios = {r["mode"]: r for r in self.summary["ratios"]}
        self.assertAlmostEqual(ratios["paced"]["cpu"][0], paced["cpu"]["median"] / ffmpeg_paced)
        self.assertAlmostEqual(ratios["paced"]["cpu"][0], 0.7793, places=4)
        # Round by round: rtc-publish unpaced / GStreamer unpaced, rounds 1 and 2 only (3 failed).
        rounds = {r["mode"]: r for r in self.summary["rounds"]}
        by_gst = rounds["unpaced"]["cpu"][1]
        self.assertAlmostEqual(by_gst["min"], (1.34 / 1.42))
        self.assertAlmostEqual(by_gst["max"], (1.47 / 1.42))

    def test_render_prints_the_rows(self):
        self.assertIn("Measured 2026-11-29 01:23 UTC on 2 cores, AMD EPYC 7B13, 6.1.0-28-amd64;", self.text)
        self.assertEqual(
            row(self.text, "rtc-publish, paced"),
            "| rtc-publish, paced | 3/3 | 5.53 (5.37–6.37) | 16.1 (15.5–18.5) | — | 35 (35–35) "
            "| 4.7 / 8.1 / 8.8 | 4.5 / 7.3 / 8.6 | 298/300 |",
        )
        self.assertEqual(
            row(self.text, "GStreamer, unpaced"),
            "| GStreamer, unpaced | 2/3 | 4.73 (4.73–4.73) | — | 220 (208–233) | 37 (37–37) | — | — | 300 |",
        )
        self.assertIn("| floor (x264 + Opus alone) | 3/3 | 4.50 (4.40–4.70) | — | 213 (204–217) |", self.text)
        self.assertIn("; Opus 0.21 / 0.38 / 0.95 | — |", row(self.text, "floor (x264 + Opus alone)"))
        self.assertIn("| ultrafast, 1t | paced | 0.78 | 0.83 | 1.46 | 1.23 | 0.38 | 0.95 |", self.text)
        self.assertIn("| ultrafast, 1t | unpaced | 0.88 (0.73–1.20) ⚠ | 0.99 (0.94–1.04) |", self.text)
        self.assertTrue(self.text.endswith("```\n\n</details>"))

    def test_output_is_what_the_single_file_script_printed(self):
        self.assertEqual(self.text, expected("macro"))


class Micro(unittest.TestCase):
    def test_parse_summarize_render(self):
        results = parse.micro_results(os.path.join(BENCH, "micro"))
        # 9 benchmarks x (wall clock, mallocs); throughput is parsed but not shown.
        self.assertEqual(len(results), 19)
        self.assertAlmostEqual(results[("PacketBenchmarks", "Fan-out to 10 destinations", "wallClock")]["p50"], 9.31)
        summary = summarize.micro(results)
        self.assertEqual(summary["harness"], {"PacketBenchmarks": 2.0, "MediaBenchmarks": 1.0})
        extra, allocations = summary["extra_subscriber"]
        self.assertAlmostEqual(extra, (92.5 - 1.02) / 99)
        self.assertAlmostEqual(allocations, (301 - 4) / 99)
        (viewer,) = summary["extra_viewer"]["suites"]
        self.assertEqual(viewer["suite"], "AES-CM-128")
        text = render.micro(summary, ENV, "BENCH_MICRO=1 scripts/bench.sh")
        self.assertEqual(
            row(text, "Fan-out to 10 destinations"),
            "| Fan-out to 10 destinations | 9.310 | 13.034 | 31 | 0.931 / 3.10 |",
        )
        self.assertIn("the harness allocates (MediaBenchmarks 1, PacketBenchmarks 2)", text)
        self.assertIn("- WebRTC viewer (AES-CM-128): 0.99 µs (1.08 ×), 4.00 allocations", text)
        self.assertEqual(text, expected("micro"))

    def test_no_results(self):
        text = render.micro(summarize.micro(parse.micro_results(os.path.join(BENCH, "nothing"))), ENV, "c")
        self.assertTrue(text.endswith("|---|---|---|---|---|\n| (no results found) | | | | |"))
        self.assertIn("allocates (none measured)", text)


class Room(unittest.TestCase):
    def test_parse_summarize_render(self):
        runs = parse.room_runs(os.path.join(BENCH, "room"))
        self.assertEqual([r["rc"] for r in runs], [0, 0, 124])
        summary = summarize.room(runs)
        self.assertEqual((summary["good"], summary["runs"]), (2, 3))
        self.assertEqual((summary["sink_fewest"]["min"], summary["sink_fewest"]["max"]), (299, 300))
        self.assertEqual(summary["deepest"]["median"], 213.5)
        text = render.room(summary, ENV, 100, "c", "rtc-publish ...", "rtc-encode sink ...")
        self.assertIn("Run 2026-11-29 on 2 cores, AMD EPYC 7B13, 6.1.0-28-amd64; 2 of 3 runs ended cleanly.", text)
        self.assertEqual(
            row(text, "100"),
            "| 100 | 58 (58–58) | 4.13 (4.05–4.21) | 1.90 (1.87–1.93) | 300 / 300 / 0 | 300 (299–300) / 300 "
            "| 6.2 / 11.3 / 15.7 | 4.4 / 7.8 / 10.6 | 214 (213–214) | 40.3 (40.2–40.4) |",
        )
        failed = os.path.join(BENCH, "room", "r3")
        self.assertTrue(text.endswith(f"- run in {failed} failed (exit 124): see its stderr.txt"))
        self.assertEqual(text, expected("room").replace("out/bench/room/r3", failed))


class Instructions(unittest.TestCase):
    def test_parse_summarize_render(self):
        found = parse.instruction_totals(os.path.join(BENCH, "instructions"))
        self.assertEqual(list(found), ["rtc-publish", "ffmpeg", "gstreamer"])  # the floor's run failed
        # Self costs only: the inclusive cost after each calls= line is not counted.
        self.assertEqual(found["rtc-publish"]["/usr/lib/x86_64-linux-gnu/libx264.so.164"], 3_720_000_000)
        summary = summarize.instructions(found)
        publish = summary["rows"]["rtc-publish"]
        self.assertEqual(publish["total"], 5_977_000_000)
        self.assertEqual(publish["groups"]["SRTP and its crypto"], 91_000_000 + 287_000_000)
        self.assertEqual(summary["missing"], ["floor"])
        text = render.instructions(summary, ENV, "c")
        self.assertEqual(
            row(text, "rtc-publish"),
            "| rtc-publish | 5.98 | 19.92 | 3.72 | 0.40 | 0.38 | 0.15 | 0.01 | 1.31 | 1.10 | — |",
        )
        self.assertIn("- no count for: floor (H264Encoder alone)", text)
        self.assertEqual(text, expected("instructions"))


class Browser(unittest.TestCase):
    def test_parse_summarize_render(self):
        runs = parse.browser_runs(os.path.join(BENCH, "browser"))
        self.assertEqual(len(runs), 3)
        summary = summarize.browser(runs)
        self.assertEqual(summary["chromium"], "chromium 131.0.6778.139")
        self.assertEqual(summary["pooled"], {"count": 80, "p50": 52.0, "p95": 67.2, "met": True})
        text = render.browser(summary, "c", "1280x720")
        self.assertEqual(row(text, "1"), "| 1 | 40 | 29.95 | 0 | 0 | 412 | 50.0 | 60.3 | 60.9 |")
        self.assertEqual(row(text, "3"), "| 3 | failed: tab 1: no frame within 10 s | | | | | | | |")
        self.assertIn("All runs pooled: 80 pictures, p50 52.0 ms, p95 67.2 ms (met).", text)
        self.assertEqual(text, expected("browser"))


class BaselineMacro(unittest.TestCase):
    """BENCH_BASELINE: the baseline's rtc-publish rows (tool rtc-publish@abc1234) beside this tree's."""

    @classmethod
    def setUpClass(cls):
        cls.runs = parse.manifest(os.path.join(BASELINE_BENCH, "manifest.tsv"), root=BASELINE_FIXTURE)
        cls.summary = summarize.macro(cls.runs)
        cls.text = render.macro(cls.summary, ENV, "BENCH_BASELINE=abc1234 scripts/bench.sh", "0 -> 0", "quick")

    def test_names(self):
        self.assertEqual(benchreport.baseline_of("rtc-publish@abc1234"), "abc1234")
        self.assertIsNone(benchreport.baseline_of("rtc-publish"))
        self.assertTrue(benchreport.is_publish("rtc-publish@abc1234"))
        self.assertFalse(benchreport.is_publish("ffmpeg"))
        self.assertEqual(benchreport.tool_name("rtc-publish@abc1234"), "rtc-publish @abc1234")
        self.assertEqual(benchreport.macro_rows(), benchreport.MACRO_ROWS)
        self.assertEqual(
            benchreport.macro_rows(["rtc-publish@abc1234"])[:5],
            [
                ("rtc-publish", "paced"),
                ("rtc-publish@abc1234", "paced"),
                ("ffmpeg", "paced"),
                ("gstreamer", "paced"),
                ("rtc-publish", "unpaced"),
            ],
        )

    def test_parse_reads_the_baseline_as_rtc_publish(self):
        self.assertEqual(len(self.runs), 12)  # 6 rows x 2 rounds
        baseline = self.runs[1]
        self.assertEqual((baseline["tool"], baseline["mode"], baseline["run"]), ("rtc-publish@abc1234", "paced", 1))
        self.assertAlmostEqual(baseline["cpu_ms_per_frame"], 1.65 * 1000 / 300)
        self.assertEqual(baseline["latency"], {"p50": 5.0, "p99": 8.0, "max": 9.0})  # its stats.jsonl

    def test_summarize_compares_this_tree_with_the_baseline(self):
        self.assertEqual(self.summary["baselines"], ["abc1234"])
        (table,) = self.summary["tables"]
        self.assertEqual(
            [(r["tool"], r["mode"]) for r in table["rows"]],
            [
                ("rtc-publish", "paced"),
                ("rtc-publish@abc1234", "paced"),
                ("ffmpeg", "paced"),
                ("rtc-publish", "unpaced"),
                ("rtc-publish@abc1234", "unpaced"),
                ("ffmpeg", "unpaced"),
            ],
        )
        ratios = {r["mode"]: r for r in self.summary["ratios"]}
        # Medians: this tree 5.50 ms a frame paced (5.00, 6.00), the baseline 5.25 (5.50, 5.00).
        self.assertEqual(len(ratios["paced"]["cpu"]), 5)  # FFmpeg, GStreamer, the floors, the baseline
        self.assertAlmostEqual(ratios["paced"]["cpu"][4], 5.50 / 5.25)
        self.assertAlmostEqual(ratios["paced"]["rss"][2], 36 / 40)
        self.assertAlmostEqual(ratios["unpaced"]["rss"][2], 36.5 / 40)
        # Round by round: 5.00 / 5.50 and 6.00 / 5.00.
        paced = {r["mode"]: r for r in self.summary["rounds"]}["paced"]["cpu"][4]
        self.assertAlmostEqual(paced["min"], 5.00 / 5.50)
        self.assertAlmostEqual(paced["max"], 6.00 / 5.00)
        self.assertTrue(paced["noisy"])

    def test_render_shows_the_rows_and_the_ratios(self):
        self.assertEqual(
            row(self.text, "rtc-publish @abc1234, paced"),
            "| rtc-publish @abc1234, paced | 2/2 | 5.25 (5.00–5.50) | 15.3 (14.6–16.0) | — | 40 "
            "| 5.0 / 8.0 / 9.0 | 3.5 / 6.0 / 7.0 | — |",
        )
        self.assertIn(
            "| x264 | mode | CPU/frame vs FFmpeg | vs GStreamer | vs floor | vs floor (x264 + Opus) | vs @abc1234 "
            "| peak RSS vs FFmpeg | vs GStreamer | vs @abc1234 |\n|---|---|---|---|---|---|---|---|---|---|\n"
            "| ultrafast, 1t | paced | 0.73 | n/a | n/a | n/a | 1.05 | 0.40 | n/a | 0.90 |",
            self.text,
        )
        self.assertIn(
            "| x264 | mode | vs FFmpeg | vs GStreamer | vs floor | vs floor (x264 + Opus) | vs @abc1234 |\n"
            "|---|---|---|---|---|---|---|\n"
            "| ultrafast, 1t | paced | 0.73 (0.71–0.75) | n/a | n/a | n/a | 1.05 (0.91–1.20) ⚠ |\n"
            "| ultrafast, 1t | unpaced | 0.80 | n/a | n/a | n/a | 0.98 (0.95–1.00) |",
            self.text,
        )
        self.assertIn("rtc-publish @abc1234 is rtc-publish built from revision abc1234 (`BENCH_BASELINE`", self.text)

    def test_without_a_baseline_nothing_is_added(self):
        text = expected("macro")
        self.assertNotIn("@", text.split("<details>")[0])
        self.assertIn("| x264 | mode | vs FFmpeg | vs GStreamer | vs floor | vs floor (x264 + Opus) |\n", text)


class BaselineInstructions(unittest.TestCase):
    def test_the_baseline_is_counted_and_compared(self):
        directory = os.path.join(BASELINE_BENCH, "instructions")
        tools = parse.instruction_tools(directory)
        self.assertEqual(tools, ["rtc-publish", "rtc-publish@abc1234", "ffmpeg", "gstreamer", "floor"])
        self.assertEqual(parse.instruction_tools(os.path.join(BENCH, "instructions")), list(INSTRUCTION_TOOLS))
        summary = summarize.instructions(parse.instruction_totals(directory), tools)
        self.assertEqual(summary["baseline"], "abc1234")
        self.assertEqual(list(summary["rows"]), ["rtc-publish", "rtc-publish@abc1234", "gstreamer"])
        self.assertAlmostEqual(summary["rows"]["rtc-publish"]["vs_baseline"], 5.0 / 5.1)
        self.assertEqual(summary["missing"], ["ffmpeg", "floor"])
        text = render.instructions(summary, ENV, "c")
        self.assertIn("| the rest (the program, its other libraries) | vs GStreamer | vs floor | vs @abc1234 |", text)
        self.assertEqual(
            row(text, "rtc-publish"),
            "| rtc-publish | 5.00 | 16.67 | 3.70 | 0.00 | 0.00 | 0.10 | 0.00 | 1.20 | 1.00 | — | 0.980 |",
        )
        self.assertEqual(
            row(text, "rtc-publish @abc1234"),
            "| rtc-publish @abc1234 | 5.10 | 17.00 | 3.70 | 0.00 | 0.00 | 0.10 | 0.00 | 1.30 | 1.02 | — | 1.000 |",
        )
        self.assertIn("- no count for: FFmpeg, floor (H264Encoder alone)", text)

    def test_a_failed_baseline_count_is_listed(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "rtc-publish@abc1234"))  # no rc, no callgrind.out
            tools = parse.instruction_tools(tmp)
            summary = summarize.instructions(parse.instruction_totals(tmp), tools)
            self.assertEqual(summary["baseline"], "abc1234")
            self.assertIn("rtc-publish@abc1234", summary["missing"])
            self.assertIn("rtc-publish @abc1234", render.instructions(summary, ENV, "c"))


class BaselineMicro(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.after = parse.micro_results(os.path.join(BASELINE_BENCH, "micro"))
        cls.before = parse.micro_results(os.path.join(BASELINE_BENCH, "micro-abc1234"))

    def test_summarize_pairs_the_benchmarks(self):
        comparison = summarize.micro_compare(self.before, self.after)
        self.assertTrue(comparison["before_found"] and comparison["after_found"])
        rows = {r["name"]: r for r in comparison["rows"]}
        self.assertEqual(
            [r["name"] for r in comparison["rows"]],
            [
                "Fan-out to 1 WebRTC viewer, paced, AES-CM-128",
                "Fan-out to 1 destination",
                "SRTP protect (100 packets)",
                "I420 to NV12 1280x720",
            ],
        )
        srtp = rows["SRTP protect (100 packets)"]
        self.assertAlmostEqual(srtp["before"], 95.0)
        self.assertAlmostEqual(srtp["after"], 91.4)
        self.assertAlmostEqual(srtp["ratio"], 91.4 / 95.0)
        # Each side less its own harness: 203 - 3 before, 102 - 2 after.
        self.assertEqual((srtp["mallocs_before"], srtp["mallocs_after"]), (200, 100))
        only_after = rows["Fan-out to 1 WebRTC viewer, paced, AES-CM-128"]
        self.assertEqual((only_after["before"], only_after["ratio"], only_after["mallocs_before"]), (None, None, None))
        self.assertIsNone(rows["Fan-out to 1 destination"]["after"])

    def test_render_one_table_with_both(self):
        comparison = summarize.micro_compare(self.before, self.after)
        text = render.micro(summarize.micro(self.after), ENV, "c", comparison, "abc1234")
        self.assertTrue(text.startswith(render.micro(summarize.micro(self.after), ENV, "c")))
        self.assertIn("| benchmark | before (@abc1234) µs | after µs | after / before | mallocs before / after |", text)
        self.assertIn("| SRTP protect (100 packets) | 95.0 | 91.4 | 0.96 | 200 / 100 |", text)
        self.assertIn("| Fan-out to 1 WebRTC viewer, paced, AES-CM-128 | — | 1.105 | — | — / 6 |", text)
        self.assertIn("| Fan-out to 1 destination | 1.020 | — | — | 4 / — |", text)
        self.assertIn("| I420 to NV12 1280x720 | 200.0 | 212.0 | 1.06 | 0 / 0 |", text)

    def test_a_baseline_without_results(self):
        comparison = summarize.micro_compare({}, self.after)
        self.assertFalse(comparison["before_found"])
        text = render.micro_compare(comparison, "abc1234")
        self.assertIn("| SRTP protect (100 packets) | — | 91.4 | — | — / 100 |", text)
        self.assertTrue(text.endswith("- no results from @abc1234's benchmarks (see out/bench/micro-abc1234.log)"))

    def test_the_command_line_takes_the_baseline(self):
        with tempfile.TemporaryDirectory() as tmp:
            doc = os.path.join(tmp, "benchmarks.md")
            result = subprocess.run(
                [
                    sys.executable,
                    os.path.join(SCRIPTS, "bench-report.py"),
                    "micro",
                    "--results-dir",
                    "out/bench/micro",
                    "--baseline",
                    "abc1234",
                    "--baseline-dir",
                    "out/bench/micro-abc1234",
                    "--doc",
                    doc,
                    "--command",
                    "BENCH_BASELINE=abc1234 BENCH_MICRO=1 scripts/bench.sh",
                ],
                cwd=BASELINE_FIXTURE,
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            )
            self.assertIn("| SRTP protect (100 packets) | 95.0 | 91.4 | 0.96 | 200 / 100 |", result.stdout)
            with open(doc) as handle:
                self.assertIn("#### Before and after: @abc1234 and this tree", handle.read())


class Document(unittest.TestCase):
    def test_a_section_is_replaced_and_the_prose_kept(self):
        doc = "# Benchmarks\n\nprose\n\n<!-- bench:room:begin -->\nold\n<!-- bench:room:end -->\n\ntail\n"
        new = render.place_section(doc, "room", "new table")
        self.assertEqual(
            new,
            "# Benchmarks\n\nprose\n\n<!-- bench:room:begin -->\n"
            "<!-- Written by scripts/bench.sh; edits inside these markers are overwritten. -->\n"
            "new table\n<!-- bench:room:end -->\n\ntail\n",
        )
        self.assertEqual(render.place_section(new, "room", "new table"), new)

    def test_a_missing_section_is_appended(self):
        self.assertEqual(
            render.place_section(None, "micro", "t"),
            "# Benchmarks\n\n<!-- bench:micro:begin -->\n"
            "<!-- Written by scripts/bench.sh; edits inside these markers are overwritten. -->\nt\n"
            "<!-- bench:micro:end -->\n",
        )

    def test_the_command_line_writes_the_document(self):
        """bench-report.py as bench.sh runs it: from the directory the manifest's paths start at."""
        with tempfile.TemporaryDirectory() as tmp:
            doc = os.path.join(tmp, "benchmarks.md")
            with open(doc, "w") as handle:
                handle.write("# Benchmarks\n\nkept\n")
            result = subprocess.run(
                [
                    sys.executable,
                    os.path.join(SCRIPTS, "bench-report.py"),
                    "macro",
                    "--manifest",
                    "out/bench/manifest.tsv",
                    "--doc",
                    doc,
                    "--command",
                    "BENCH_RUNS=3 scripts/bench.sh",
                ],
                cwd=FIXTURE,
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            )
            self.assertIn(row(expected("macro"), "FFmpeg, unpaced"), result.stdout)
            self.assertEqual(result.stderr, f"bench: wrote the macro tables into {doc}\n")
            with open(doc) as handle:
                content = handle.read()
            self.assertTrue(content.startswith("# Benchmarks\n\nkept\n\n<!-- bench:macro:begin -->\n"))
            self.assertIn(row(expected("macro"), "rtc-publish, unpaced"), content)


if __name__ == "__main__":
    unittest.main()
