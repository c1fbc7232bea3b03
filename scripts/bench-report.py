#!/usr/bin/env python3
"""Turns one `scripts/bench.sh` run into Markdown tables, prints them and rewrites the marked
sections of Docs/benchmarks.md (prose outside the markers is kept).

  macro: the end-to-end rows (manifest of runs: /usr/bin/time output, sink counts, JSON lines;
         a baseline revision's rtc-publish rows are its tool "rtc-publish@SHA")
  micro: the ordo-one/benchmark results (histogramPercentiles TSV files), and with --baseline a
         baseline revision's beside them (--baseline-dir), before and after in one table
  room:  one publisher to many subscribers (runs under out/bench/room/rN)
  instructions: callgrind's instruction counts of each row's unpaced ultrafast job, per library
  browser: glass-to-glass in headless Chromium (runs under out/bench/browser/rN)

Each report is parsed, summarized and rendered by scripts/benchreport (parse.py, summarize.py,
render.py); this file reads the arguments, the clock and the machine, and writes the document.
"""

import argparse
import datetime
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchreport import parse, render, summarize  # noqa: E402


def environment(with_versions=False):
    """The moment and the machine of this run (and the peers' versions, which only macro shows)."""
    return render.Environment(
        now=datetime.datetime.now(datetime.timezone.utc),
        today=datetime.date.today(),
        machine=parse.machine(),
        versions=parse.versions() if with_versions else "",
    )


def macro(args):
    summary = summarize.macro(parse.manifest(args.manifest))
    text = render.macro(
        summary, environment(with_versions=True), args.command, args.load, args.matrix, parse.text(args.commands)
    )
    print(text)
    write_section(args.doc, "macro", text)


def micro(args):
    results = parse.micro_results(args.results_dir)
    comparison = None
    if args.baseline:
        comparison = summarize.micro_compare(parse.micro_results(args.baseline_dir), results)
    text = render.micro(summarize.micro(results), environment(), args.command, comparison, args.baseline)
    print(text)
    write_section(args.doc, "micro", text)


def room(args):
    summary = summarize.room(parse.room_runs(args.dir))
    text = render.room(summary, environment(), args.subscribers, args.command, args.publish, args.sink)
    print(text)
    write_section(args.doc, "room", text)


def instructions(args):
    summary = summarize.instructions(parse.instruction_totals(args.dir), parse.instruction_tools(args.dir))
    text = render.instructions(summary, environment(), args.command)
    print(text)
    write_section(args.doc, "instructions", text)


def browser(args):
    """Glass-to-glass in a real browser: each run's Chromium summary (Tests/Peers/chromium_viewer.py)
    and the publisher's stats, as one row per run and the pooled percentiles."""
    text = render.browser(summarize.browser(parse.browser_runs(args.dir)), args.command, args.size)
    print(text)
    write_section(args.doc, "browser", text)


def write_section(doc, section, text):
    try:
        with open(doc) as handle:
            content = handle.read()
    except FileNotFoundError:
        content = None
    with open(doc, "w") as handle:
        handle.write(render.place_section(content, section, text))
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
    u.add_argument("--baseline", default="", help="a baseline revision's short sha (BENCH_BASELINE)")
    u.add_argument("--baseline-dir", default="", help="that revision's results, as --results-dir")
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
    {"macro": macro, "micro": micro, "room": room, "instructions": instructions, "browser": browser}[args.what](args)


if __name__ == "__main__":
    main()
