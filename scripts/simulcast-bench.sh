#!/usr/bin/env bash
# `make bench`, simulcast: what the lower layers cost the publisher (issue: "Publisher CPU with
# and without --simulcast (same source, same top-layer settings) and the bytes per layer; a row
# against OBS-style three-resolution simulcast cost").
#
# The job: rtc-publish's synthetic moving screen (--video test, its timecode strip) at 1280x720
# 30 fps, no audio, published over WHIP into a private Janus 1.1.2 VideoRoom behind
# simple-whip-server (Tests/Peers/janus/janus_room.py: a network namespace of its own, nothing
# leaves 127/8, Janus started once for every run). The lower layers are encoded only while a
# destination takes every layer, which is what Janus does when it answers with a=simulcast; no
# viewer subscribes, so nothing but Janus' own feedback (REMB, transport-cc, its first PLIs)
# comes back. Rows, interleaved (A B C A B C ...), each a fresh WHIP endpoint and a fresh process:
#   single     no --simulcast: one stream, the top layer alone
#   simulcast  --simulcast, the defaults (Sources/MediaPipeline/SimulcastEncoding.swift):
#              f 1280x720 30 fps, q 640x360 15 fps 400 kbit/s, l 1280x720 5 fps 250 kbit/s
#   obs3       --simulcast-layers f:1:30:TOP,h:2:30:TOP*2/3,q:4:30:TOP/3: three resolutions, all at
#              the full rate, bitrates as OBS 32 splits them (OBS WHIP simulcast: layers at 2/3
#              and 1/3 of the size, bitrate steps of 1/3; our scales are 1, 2 and 4, so 640x360
#              and 320x180 where OBS has 852x480 and 426x240)
# Same top layer in every row: x264 --preset/--threads as below, and the same bitrate target.
# rtc-publish's video target is 95 % of its estimate (decision D23, Docs/congestion.md; the
# estimate starts at, and never exceeds, --video-bitrate), and layer 0 gets that target less
# what the watched lower layers take (VideoPath.applyBitrate; the KBPS of the first
# --simulcast-layers item is not read). So each row's --video-bitrate is TOP plus its lower
# layers' sum / 0.95: layer 0's target is 0.95 x TOP in every row (1140 kbit/s at the default
# TOP, 1200), and the report shows it as measured. The largest, obs3's 2464 at TOP 1200, stays
# under the room's 2.5 Mbit/s, which Janus sends back as REMB.
# Measured per run, over a window of BENCH_SIMULCAST_SECONDS that starts 2 s after the launch
# (WHIP, ICE, DTLS and the first IDRs are behind it): the publisher's CPU (utime + stime from
# /proc/PID/stat, % of one core) and Janus's; and from --stats-json, over the records inside
# the window, each layer's frames/s and encoded bytes/s (layer 0: totals.framesOut and
# totals.videoBytes; the others: totals.layers[].frames and .bytes) and its encode time (the
# lower layers: .encodeNanoseconds / frames, a mean; layer 0: the final record's encodeMs.p50,
# a median over the run; both wall time on the media thread).
#
# Environment:
#   BENCH_RUNS=3                  rounds (at least 1; 3 or more gives medians and ranges)
#   BENCH_SIMULCAST_SECONDS=18    seconds measured per run (each run lasts 3 s more)
#   BENCH_SIMULCAST_TOP_KBPS=1200 the top layer's bitrate in every row, kbit/s (150..5000; from
#                                 about 1230 obs3's --video-bitrate passes Janus' 2.5 Mbit/s REMB
#                                 and its top layer gets less: the report's "top target" shows it)
#   BENCH_SIMULCAST_PRESET=veryfast  x264 preset of every layer (rtc-publish's default)
#   BENCH_SIMULCAST_THREADS=1     x264 threads of every layer (rtc-publish's default)
#   BENCH_DOC=Docs/benchmarks.md  where the tables go (between <!-- simulcast-bench:begin -->
#                                 and <!-- simulcast-bench:end -->, appended when absent)
# Needs root (ip netns), `make setup` (janus, simple-whip-server in out/janus/whip-prefix) and a
# release rtc-publish (built when missing). Everything stays in out/simulcast-bench/ (per run:
# stats.jsonl, stdout.txt, stderr.txt; room.jsonl and room.log; manifest.tsv; commands.txt).
# About 3.5 minutes with the defaults (9 runs of 21 s, Janus's start, the endpoints).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${BENCH_RUNS:-3}
SECS=${BENCH_SIMULCAST_SECONDS:-18}
TOP=${BENCH_SIMULCAST_TOP_KBPS:-1200}
PRESET=${BENCH_SIMULCAST_PRESET:-veryfast}
THREADS=${BENCH_SIMULCAST_THREADS:-1}
DOC=${BENCH_DOC:-Docs/benchmarks.md}
SIZE=1280x720
FPS=30
WARM=2 # seconds from the launch to the window
OUT=out/simulcast-bench
BIN=.build/release
MODES=(single simulcast obs3)
# The lower layers' sum, kbit/s: the defaults' at 1280x720 (SimulcastEncoding.defaults: q 400,
# l 250) and obs3's (set below).
DEFAULT_LOWER_KBPS=650
COMMAND="BENCH_RUNS=$RUNS BENCH_SIMULCAST_SECONDS=$SECS BENCH_SIMULCAST_TOP_KBPS=$TOP BENCH_SIMULCAST_PRESET=$PRESET BENCH_SIMULCAST_THREADS=$THREADS scripts/simulcast-bench.sh"

fail() { echo "simulcast-bench: $*" >&2; exit 1; }
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || fail "BENCH_RUNS='$RUNS' must be a positive whole number"
if ! [[ "$SECS" =~ ^[1-9][0-9]*$ ]] || (( SECS < 5 || SECS > 600 )); then
  fail "BENCH_SIMULCAST_SECONDS='$SECS' must be a whole number within 5..600"
fi
if ! [[ "$TOP" =~ ^[1-9][0-9]*$ ]] || (( TOP < 150 || TOP > 5000 )); then
  fail "BENCH_SIMULCAST_TOP_KBPS='$TOP' must be a whole number within 150..5000"
fi
[[ "$THREADS" =~ ^[1-9][0-9]?$ ]] || fail "BENCH_SIMULCAST_THREADS='$THREADS' must be a whole number within 1..99"
case "$PRESET" in
  ultrafast | superfast | veryfast | faster | fast | medium) ;;
  *) fail "BENCH_SIMULCAST_PRESET='$PRESET' is not an x264 preset from ultrafast to medium" ;;
esac
[ "$(id -u)" = 0 ] || fail "needs root: Janus runs in a network namespace of its own (ip netns)"
H_KBPS=$((TOP * 2 / 3))
Q_KBPS=$((TOP / 3))
(( Q_KBPS >= 50 )) || fail "BENCH_SIMULCAST_TOP_KBPS='$TOP' leaves obs3's smallest layer under 50 kbit/s"
OBS_LAYERS="f:1:$FPS:$TOP,h:2:$FPS:$H_KBPS,q:4:$FPS:$Q_KBPS"
OBS_LOWER_KBPS=$((H_KBPS + Q_KBPS))
# --video-bitrate for lower layers of SUM kbit/s: 0.95 x it, less SUM, is 0.95 x TOP (rounded up).
video_bitrate() { echo $((TOP + ($1 * 100 + 94) / 95)); } # SUM
(( $(video_bitrate "$OBS_LOWER_KBPS") <= 50000 )) || fail "BENCH_SIMULCAST_TOP_KBPS='$TOP' is too high for obs3"

bash scripts/setup.sh
if [ ! -x "$BIN/rtc-publish" ]; then
  echo "simulcast-bench: building rtc-publish (release)"
  swift build -c release --static-swift-stdlib --product rtc-publish
fi
PUBLISH=$(cd "$BIN" && pwd)/rtc-publish
# Read whole first: grep -q would stop reading early, and the pipe's SIGPIPE fail the check.
[[ "$("$PUBLISH" --help 2>&1)" == *--simulcast-layers* ]] || fail "$BIN/rtc-publish has no --simulcast-layers: rebuild it"

rm -rf "$OUT"
mkdir -p "$OUT"
MANIFEST="$OUT/manifest.tsv"
: >"$MANIFEST"
: >"$OUT/commands.txt"
NS="rtcsimul$$"

# What this script started, stopped on every exit: the publisher of the moment (SIGTERM, SIGKILL
# after 3 s), then the room (SIGINT: janus_room.py stops Janus and the WHIP server and deletes
# the namespace).
ROOM_PID="" PUBLISHER_PID=""
stop_pid() { # PID
  [ -n "$1" ] || return 0
  kill -TERM "$1" 2>/dev/null || return 0
  for _ in $(seq 30); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() {
  stop_pid "$PUBLISHER_PID"
  if [ -n "$ROOM_PID" ]; then
    kill -INT "$ROOM_PID" 2>/dev/null || true
    wait "$ROOM_PID" 2>/dev/null || true
  fi
}
trap cleanup EXIT
trap 'echo "simulcast-bench: interrupted" >&2; exit 130' INT
trap 'echo "simulcast-bench: terminated" >&2; exit 143' TERM

# CPU clock ticks (user + system) a process has used so far; empty once it is gone.
ticks_of() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || true; }
now() { date +%s.%N; }

python3 Tests/Peers/janus/janus_room.py --ns "$NS" >"$OUT/room.jsonl" 2>"$OUT/room.log" &
ROOM_PID=$!
for _ in $(seq 600); do
  grep -q '"event": "\(ready\|error\|stopped\)"' "$OUT/room.jsonl" 2>/dev/null && break
  kill -0 "$ROOM_PID" 2>/dev/null || break
  sleep 0.1
done
grep -q '"event": "ready"' "$OUT/room.jsonl" || fail "the Janus room did not start: $(tail -3 "$OUT/room.log")"
field() { python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$(grep '"event": "ready"' "$OUT/room.jsonl")" "$1"; }
WHIP_SERVER=$(field whip_server)
JANUS=$(field janus)
ROOM=$(field room)
ICE=$(field ice_address)
WORKDIR=$(field workdir)
JANUS_PID=$(pgrep -f -- "^janus -F $WORKDIR/A " | head -1 || true)
[ -n "$JANUS_PID" ] || fail "cannot find Janus's process (janus -F $WORKDIR/A)"
echo "simulcast-bench: Janus $(field janus) up in namespace $NS (pid $JANUS_PID), room $ROOM"

in_ns() { ip netns exec "$NS" "$@"; }

# Waits (at most 15 s) until the room has no publisher: the last run's has left.
await_empty_room() {
  local list
  for _ in $(seq 150); do
    list=$(in_ns python3 Tests/Peers/janus/janus_api.py participants --janus "$JANUS" --room "$ROOM" 2>/dev/null) || list=""
    if [ -n "$list" ] && python3 -c 'import json, sys; sys.exit(any(p.get("publisher") for p in json.loads(sys.argv[1])))' "$list"; then
      return 0
    fi
    sleep 0.1
  done
  fail "a publisher is still in room $ROOM after 15 s: $list"
}

# Prints the row's extra arguments and --video-bitrate, one argument per line.
mode_args() { # MODE
  case "$1" in
    single) printf '%s\n' --video-bitrate "$TOP" ;;
    simulcast) printf '%s\n' --video-bitrate "$(video_bitrate "$DEFAULT_LOWER_KBPS")" --simulcast ;;
    obs3) printf '%s\n' --video-bitrate "$(video_bitrate "$OBS_LOWER_KBPS")" --simulcast-layers "$OBS_LAYERS" ;;
  esac
}

run_row() { # MODE RUN
  local mode=$1 run=$2
  local dir="$OUT/$mode-r$run" id="$mode$run" url
  mkdir -p "$dir"
  await_empty_room
  url=$(in_ns python3 Tests/Peers/janus/janus_api.py whip-endpoint --whip-server "$WHIP_SERVER" --id "$id" --room "$ROOM" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["whip"])') || fail "cannot create the WHIP endpoint $id"
  local extra=()
  mapfile -t extra < <(mode_args "$mode")
  local cmd=("$PUBLISH" --room simulcast --uid bench_sub --no-signal --no-preview --whip "$url" --ice-address "$ICE"
    --video test --size "$SIZE" --fps "$FPS" --audio none --preset "$PRESET" --threads "$THREADS"
    --duration $((WARM + SECS + 1)) --stats-json stats.jsonl "${extra[@]}")
  if [ "$run" = 1 ]; then
    local shown="${cmd[*]}"
    printf '# %s, in %s\n%s\n' "$mode" "$dir" "${shown//"$PUBLISH"/$BIN/rtc-publish}" >>"$OUT/commands.txt"
  fi
  local t0 t1 p0 p1 j0 j1 rc=0
  # ip netns exec execs rtc-publish itself: $! is the publisher.
  (cd "$dir" && exec ip netns exec "$NS" "${cmd[@]}" >stdout.txt 2>stderr.txt) &
  PUBLISHER_PID=$!
  sleep "$WARM"
  p0=$(ticks_of "$PUBLISHER_PID"); j0=$(ticks_of "$JANUS_PID"); t0=$(now)
  sleep "$SECS"
  p1=$(ticks_of "$PUBLISHER_PID"); j1=$(ticks_of "$JANUS_PID"); t1=$(now)
  wait "$PUBLISHER_PID" || rc=$?
  PUBLISHER_PID=""
  if [ "$rc" = 0 ] && { [ -z "$p0" ] || [ -z "$p1" ]; }; then rc=-1; fi # gone before the window closed
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$run" "$rc" "$dir" "$t0" "$t1" \
    "${p0:-0}" "${p1:-0}" "${j0:-0}" "${j1:-0}" >>"$MANIFEST"
  printf 'simulcast-bench: run %s/%s  %-9s exit %s  publisher %s ticks, Janus %s ticks in %.1f s\n' "$run" "$RUNS" \
    "$mode" "$rc" $(( ${p1:-0} - ${p0:-0} )) $(( ${j1:-0} - ${j0:-0} )) "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
  kill -0 "$ROOM_PID" 2>/dev/null || fail "the Janus room stopped during the $mode row: $(tail -3 "$OUT/room.log")"
}

START=$(date +%s)
DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
echo "simulcast-bench: $RUNS round(s) of ${MODES[*]}, $SECS s measured each, top layer $TOP kbit/s, x264 $PRESET/$THREADS"
for run in $(seq "$RUNS"); do
  for mode in "${MODES[@]}"; do
    run_row "$mode" "$run"
  done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
echo "simulcast-bench: all rows took $(($(date +%s) - START)) s"

VERSIONS="Janus $(dpkg-query -W -f='${Version}' janus 2>/dev/null); $(dpkg-query -W -f='${Package} ${Version}' 'libx264-1*' 2>/dev/null | head -1)"
MACHINE="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -r)"
REVISION="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift 2>/dev/null || echo '+changes')"

BENCH_SCRIPTS="$(cd "$(dirname "$0")" && pwd)" python3 - "$MANIFEST" "$DOC" "$COMMAND" "$DATE" "$MACHINE" \
  "$LOAD_BEFORE -> $LOAD_AFTER" "$VERSIONS" "$REVISION" "$SECS" "$WARM" "$TOP" "$PRESET" "$THREADS" "$OBS_LAYERS" \
  "$DEFAULT_LOWER_KBPS" "$OBS_LOWER_KBPS" "$(video_bitrate "$DEFAULT_LOWER_KBPS")" "$(video_bitrate "$OBS_LOWER_KBPS")" \
  "$OUT/commands.txt" <<'PY'
import json, os, re, sys

sys.path.insert(0, os.environ["BENCH_SCRIPTS"])
from bench_stats import cell as shared_cell, summary  # noqa: E402

(manifest, doc, command, date, machine, load, versions, revision, secs, warm, top, preset, threads, obs_layers,
 default_lower, obs_lower, default_rate, obs_rate, commands) = sys.argv[1:20]
secs, warm, top = float(secs), float(warm), int(top)
TICK = os.sysconf("SC_CLK_TCK")
NAMES = {
    "single": "no --simulcast",
    "simulcast": "--simulcast (f, q, l)",
    "obs3": "OBS-style, 3 sizes at 30 fps",
}
LOWER = {"single": 0, "simulcast": int(default_lower), "obs3": int(obs_lower)}
# The lower layers' own bitrates (kbit/s): the defaults' (SimulcastEncoding.defaults), obs3's as given.
LAYER_KBPS = {("simulcast", "q"): 400, ("simulcast", "l"): 250}
LAYER_RATE = {("simulcast", "q"): 15, ("simulcast", "l"): 5}
for item in obs_layers.split(",")[1:]:
    rid, _, fps, kbps = item.split(":")
    LAYER_KBPS[("obs3", rid)] = int(kbps)
    LAYER_RATE[("obs3", rid)] = int(fps)


def cell(stat, digits=1):
    return shared_cell(stat, digits, missing="–")


def records(path):
    found = []
    try:
        with open(path) as handle:
            for line in handle:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict):
                    found.append(record)
    except OSError:
        pass
    return found


def read_text(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return ""


def layer_counters(totals):
    """Per layer, highest first: rid, frames, bytes, encode ns (None for layer 0), size, paused."""
    layers = [{"rid": "0", "frames": totals.get("framesOut", 0), "bytes": totals.get("videoBytes", 0),
               "encode_ns": None, "size": None, "paused": False}]
    for layer in totals.get("layers") or []:
        layers.append({
            "rid": layer.get("rid", "?"), "frames": layer.get("frames", 0), "bytes": layer.get("bytes", 0),
            "encode_ns": layer.get("encodeNanoseconds", 0),
            "size": f"{layer.get('width', 0)}x{layer.get('height', 0)}" if layer.get("width") else None,
            "paused": layer.get("paused", False),
        })
    return layers


def read_run(mode, run, rc, directory, t0, t1, p0, p1, j0, j1):
    row = {"mode": mode, "run": int(run), "rc": int(rc)}
    span = float(t1) - float(t0)
    row["cpu"] = (int(p1) - int(p0)) / TICK / span * 100
    row["janus"] = (int(j1) - int(j0)) / TICK / span * 100
    lines = records(os.path.join(directory, "stats.jsonl"))
    periodic = [r for r in lines if "time" in r and "totals" in r]
    final = next((r for r in reversed(lines) if r.get("final") is True), None)
    if row["rc"] != 0 or not periodic:
        error = " ".join(read_text(os.path.join(directory, "stderr.txt")).split())[-300:]
        row["error"] = error or "no stats records"
        row["rc"] = row["rc"] or -1
        return row
    # The records inside the window: `time` counts seconds from the publisher's start.
    start = periodic[0]["time"] - 1 if periodic[0]["time"] > 1e9 else 0.0
    inside = [r for r in periodic if warm - 0.6 <= r["time"] - start <= warm + secs + 0.6]
    if len(inside) < 2:
        inside = periodic
    first, last = inside[0], inside[-1]
    seconds = max(last["time"] - first["time"], 1e-3)
    before, after = layer_counters(first["totals"]), layer_counters(last["totals"])
    layers = []
    for index, now in enumerate(after):
        was = before[index] if index < len(before) else {"frames": 0, "bytes": 0, "encode_ns": 0}
        frames = now["frames"] - was["frames"]
        entry = {
            "rid": now["rid"], "size": now["size"], "paused": now["paused"],
            "fps": frames / seconds, "kbps": (now["bytes"] - was["bytes"]) * 8 / seconds / 1000,
            "kBps": (now["bytes"] - was["bytes"]) / seconds / 1000,
        }
        if now["encode_ns"] is not None and frames > 0:
            entry["encode_ms"] = (now["encode_ns"] - (was["encode_ns"] or 0)) / frames / 1e6
        layers.append(entry)
    if final and final.get("encodeMs"):
        layers[0]["encode_ms"] = final["encodeMs"].get("p50")
    layers[0]["size"] = None
    row["layers"] = layers
    row["window"] = seconds
    totals = last["totals"]
    row["dropped"] = totals.get("framesDropped", 0) - first["totals"].get("framesDropped", 0)
    row["held"] = totals.get("framesHeldByPacer", 0) - first["totals"].get("framesHeldByPacer", 0)
    row["target"] = totals.get("videoBitrateTargetKbps")
    remb = [f.get("receiverEstimatedMaximumBitrate") for f in (totals.get("feedback") or {}).values()]
    remb = [r for r in remb if r]
    row["remb"] = min(remb) / 1000 if remb else None
    out = read_text(os.path.join(directory, "stdout.txt")) + read_text(os.path.join(directory, "stderr.txt"))
    taken = re.search(r"WHIP: simulcast layers ([^\n]*) taken by the endpoint", out)
    row["taken"] = taken.group(1) if taken else None
    return row


rows = []
with open(manifest) as handle:
    for line in handle:
        fields = line.rstrip("\n").split("\t")
        if len(fields) == 10:
            rows.append(read_run(*fields))
runs = max((r["run"] for r in rows), default=0)
good = {mode: [r for r in rows if r["mode"] == mode and r["rc"] == 0] for mode in NAMES}
notes = []
for r in rows:
    if r["rc"] != 0:
        notes.append(f"{NAMES[r['mode']]} round {r['run']} failed (exit {r['rc']}): {r.get('error') or 'no message'}")
    elif r["mode"] != "single" and (not r["taken"] or any(layer["paused"] for layer in r["layers"][1:])):
        notes.append(f"{NAMES[r['mode']]} round {r['run']}: the endpoint did not take every layer "
                     f"(taken: {r['taken']}); its lower layers were not (all) encoded")
    if r["rc"] == 0 and r["dropped"]:
        notes.append(f"{NAMES[r['mode']]} round {r['run']}: {r['dropped']} captured frames dropped in the window "
                     "(the media thread fell behind)")
    if r["rc"] == 0 and r["held"]:
        notes.append(f"{NAMES[r['mode']]} round {r['run']}: {r['held']} frames held back by the pacer in the window")

# Lower layers that coded fewer pictures than their rate allows (the capture gives 30 a second).
for (mode, rid), rate in LAYER_RATE.items():
    got = summary([layer["fps"] for r in good.get(mode, []) for layer in r["layers"][1:] if layer["rid"] == rid])
    if got and got["median"] < 0.97 * rate:
        notes.append(f"{NAMES[mode]}: layer {rid} coded {cell(got)} pictures a second of its {rate}")

out = []
out.append("### Simulcast: what the lower layers cost the publisher")
out.append("")
out.append(
    f"Measured {date} on {machine}; load average {load} (before -> after); rtc-publish at {revision}. "
    "The machine is shared (other engineers build and test on it): compare rows within this run only, "
    "and read a cell flagged ⚠ (its range is wider than 25 % of its median) with care.  "
)
out.append(f"Versions: {versions}.")
out.append("")
if runs == 1:
    out.append("**One round only** (BENCH_RUNS=1): no ranges; a trial, not a result. `make bench` runs 3.")
    out.append("")
out.append(
    f"The job, the same for every row: rtc-publish's synthetic moving screen (`--video test`) at 1280x720 "
    f"30 fps, no audio, over WHIP into a private Janus 1.1.2 VideoRoom (simple-whip-server in front, "
    f"Tests/Peers/janus/janus_room.py, started once for all runs), no viewer. x264 {preset}, {threads} "
    f"thread(s) on every layer, and the same bitrate target for the top layer in every row: rtc-publish's "
    "video target is 95 % of its estimate (decision D23, Docs/congestion.md), which starts at and never "
    "exceeds `--video-bitrate`, and layer 0 gets the target less the lower layers' rates; so each row's "
    f"`--video-bitrate` is {top} plus the lower layers' sum / 0.95 ({top}, {default_rate}, {obs_rate}) and "
    f"layer 0's target is 95 % of {top} (the table's \"top target\", as measured). Rows: no `--simulcast`; "
    "`--simulcast` with its defaults (f full size 30 fps, q half size 15 fps 400 kbit/s, l full size "
    f"5 fps 250 kbit/s); OBS-style `--simulcast-layers {obs_layers}` (three sizes at the full rate, "
    "OBS 32's 1/3 bitrate steps; OBS's sizes are 2/3 and 1/3 of the picture, ours 1/2 and 1/4). "
    f"{secs:.0f} s measured per run, from {warm:.0f} s after the launch (WHIP, ICE, DTLS behind it); "
    f"{runs} round(s), interleaved (A B C A B C …), each run a fresh process and WHIP endpoint. "
    "CPU: utime + stime from /proc over the window, % of one core; Janus's likewise. Per layer, from "
    "`--stats-json` over the records in the window: frames/s and encoded bytes/s (as kbit/s: H.264 "
    "payload, before RTP and SRTP); encode time per frame, wall time on the media thread (lower layers: "
    "the window's mean; layer 0: the median over the run, `encodeMs.p50`). Medians, with the range over "
    "rounds in brackets."
)
out.append("")
out.append(
    "| row | publisher CPU % of a core | vs no --simulcast | Janus CPU % | top target kbit/s "
    "| video kbit/s, all layers | layers taken |"
)
out.append("|---|---|---|---|---|---|---|")
stats = {}
for mode, name in NAMES.items():
    mine = good[mode]
    if not mine:
        out.append(f"| {name} | failed | | | | | |")
        continue
    cpu = summary([r["cpu"] for r in mine])
    janus = summary([r["janus"] for r in mine])
    total = summary([sum(layer["kbps"] for layer in r["layers"]) for r in mine])
    stats[mode] = cpu
    base = stats.get("single")
    if mode == "single" or not base:
        versus = "–"
    else:
        # Round by round: each round's row over that round's single row.
        single = {r["run"]: r["cpu"] for r in good["single"]}
        ratios = summary([r["cpu"] / single[r["run"]] for r in mine if single.get(r["run"])])
        versus = f"+{cpu['median'] - base['median']:.1f} points; × {cell(ratios, 2)} round by round"
    taken = sorted({r["taken"] or "–" for r in mine})
    # Layer 0's share of the target at the end of the window: the target less the lower layers'.
    share = summary([r["target"] - LOWER[mode] if r["target"] else None for r in mine])
    out.append(f"| {name} | {cell(cpu)} | {versus} | {cell(janus)} | {cell(share, 0)} | {cell(total, 0)} "
               f"| {', '.join(taken)} |")
out.append("")
out.append("Per layer (layer 0 is the top one, the main encoder's counters):")
out.append("")
out.append("| row | layer | size | fps | kbit/s | its target kbit/s | kB/s | encode ms/frame | encode ms per second |")
out.append("|---|---|---|---|---|---|---|---|---|")
encode_per_second = {}
for mode, name in NAMES.items():
    mine = good[mode]
    if not mine:
        continue
    count = max(len(r["layers"]) for r in mine)
    for index in range(count):
        have = [r["layers"][index] for r in mine if index < len(r["layers"])]
        rid = have[0]["rid"]
        label = "0 (top)" if index == 0 else rid
        size = "1280x720" if index == 0 else (have[0]["size"] or "–")
        fps = summary([layer["fps"] for layer in have])
        kbps = summary([layer["kbps"] for layer in have])
        kBps = summary([layer["kBps"] for layer in have])
        enc = summary([layer.get("encode_ms") for layer in have])
        per_second = summary([layer["encode_ms"] * layer["fps"] for layer in have if layer.get("encode_ms")])
        encode_per_second[(mode, rid if index else "0")] = per_second
        if index == 0:
            target = summary([r["target"] - LOWER[mode] if r["target"] else None for r in mine])
            target = f"{target['median']:.0f}" if target else "–"
        else:
            target = str(LAYER_KBPS.get((mode, rid), "–"))
        out.append(f"| {name} | {label} | {size} | {cell(fps)} | {cell(kbps, 0)} | {target} | {cell(kBps)} "
                   f"| {cell(enc, 2)} | {cell(per_second, 0)} |")
out.append("")
targets = sorted({(r["target"], r["remb"]) for rs in good.values() for r in rs}, key=str)
out.append(
    "Rate control at the end of each run (target kbit/s, Janus's REMB kbit/s): "
    + "; ".join(f"{NAMES[m]} " + ", ".join(sorted({f'{r["target"]}/{r["remb"]:.0f}' if r["remb"] else f'{r["target"]}/–'
                                                   for r in good[m]})) for m in NAMES if good[m]) + "."
)
# The computed reading: what the lower layers add, and l's encode against the top layer's.
sentences = []
if "single" in stats:
    for mode in ("simulcast", "obs3"):
        if mode in stats:
            mine, base = stats[mode]["median"], stats["single"]["median"]
            sentences.append(
                f"{NAMES[mode]} adds {mine - base:.1f} points of a core to one stream's {base:.1f} "
                f"(medians: × {mine / base:.2f})."
            )
top_s = encode_per_second.get(("simulcast", "0"))
for rid, what in (("l", "l (full size, 5 fps)"), ("q", "q (half size, 15 fps)")):
    layer = encode_per_second.get(("simulcast", rid))
    if top_s and layer and top_s["median"]:
        sentences.append(
            f"Encoding {what} takes {layer['median']:.0f} ms per second against the top layer's "
            f"{top_s['median']:.0f} (1/{top_s['median'] / layer['median']:.1f} of it)."
        )
top_o = encode_per_second.get(("obs3", "0"))
for rid, what in (("h", "h (half size, 30 fps)"), ("q", "q (quarter size, 30 fps)")):
    layer = encode_per_second.get(("obs3", rid))
    if top_o and layer and top_o["median"]:
        sentences.append(
            f"OBS-style {what}: {layer['median']:.0f} ms per second "
            f"(1/{top_o['median'] / layer['median']:.1f} of the top's)."
        )
if sentences:
    out.append("")
    out.append("In numbers: " + " ".join(sentences))
if notes:
    out.append("")
    out.extend(f"- {note}" for note in notes)
out.append("")
shown = []
try:
    with open(commands) as handle:
        shown = [line.rstrip("\n") for line in handle if not line.startswith("#")]
except OSError:
    pass
if shown:
    out.append("The commands (round 1; URL is that run's WHIP endpoint, inside the room's namespace):")
    out.append("")
    out.append("```")
    out.extend(re.sub(r"http://\S+/whip/endpoint/\S+", "URL", line) for line in shown)
    out.append("```")
    out.append("")
out.append(f"Command: `make bench` (`{command}`), {date} (out/simulcast-bench: per run its stats.jsonl and logs).")
text = "\n".join(out)
print()
print(text)

mark = "simulcast-bench"
section = "\n".join([
    f"<!-- {mark}:begin -->",
    "<!-- Written by scripts/simulcast-bench.sh; edits inside these markers are overwritten. -->",
    text,
    f"<!-- {mark}:end -->",
])
try:
    with open(doc) as handle:
        existing = handle.read()
except OSError:
    existing = ""
pattern = re.compile(rf"<!-- {re.escape(mark)}:begin -->.*?<!-- {re.escape(mark)}:end -->", re.S)
if pattern.search(existing):
    updated = pattern.sub(lambda _: section, existing, count=1)
else:
    updated = existing.rstrip("\n") + "\n\n" + section + "\n"
with open(doc, "w") as handle:
    handle.write(updated)
print(f"\nsimulcast-bench: tables written to {doc}")
PY
