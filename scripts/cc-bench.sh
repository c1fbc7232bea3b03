#!/usr/bin/env bash
# Congestion control (issue 20): Chromium's own GCC as a sender and rtc-publish, each through the
# same real bottleneck, side by side.
#
#   scripts/cc-bench.sh [--seconds 60] [--schedule 0:3000,20:1000,40:3000] [--settle 5]
#                       [--queue-bytes N] [--only chromium|ours] [--chromium-codec vp8|h264]
#                       [--size 1280x720]  (both senders' synthetic screen; 1920x1080 gets its own table)
#                       [--our-start 1000] [--our-min 150] [--our-max 4000] [--no-doc]
#                       [--our-args "--pacing-burst-ms 0 ..."]  (more rtc-publish options, for A/B runs)
#                       [--port-from-log]  (match the port from the log even with --ice-ports)
#                       [--report-only]    (only rewrite the table from out/cc-bench's last run)
#
# Each run gets a fresh network namespace (rtc-ccb-*, lo only, deleted on every exit) with
# Tests/Peers/bottleneck.py shaping lo: htb, the shaped class rate = ceil = the schedule's capacity
# with a bfifo of 250 ms at the top capacity, fed by an nftables rule on the sender's UDP port; the
# schedule's clock starts when that rule goes in, once the sender's ICE has connected.
#   (a) Tests/Peers/chromium_pair.py: Chromium sends to Chromium (pcA -> pcB in one page), camera
#       = the same synthetic screen our publisher draws (rtc-encode generate, fed through
#       --use-file-for-fake-video-capture), degradationPreference maintain-resolution (--size
#       throughout, as our screen share), maxBitrate 5 Mbit/s, VP8 (--chromium-codec h264 for
#       H.264: this Chromium encodes it with OpenH264, which on this content sends about 1 Mbit/s
#       whatever its target, so the encoder and not the congestion control sets the rate; the
#       fake camera's own pattern is cheaper still, 0.2-0.5 Mbit/s).
#   (b) rtc-signal + rtc-publish (synthetic screen --size, 30 fps, ultrafast, 1 thread, video
#       from --our-start kbit/s within --our-min..--our-max) to headless Chromium on rtc-signal's
#       viewer page (Tests/Peers/chromium_viewer.py), as the browser row of scripts/bench.sh runs
#       them. With `rtc-publish --ice-ports` the rule matches `udp sport 40000-40999` (the
#       namespace's ephemeral ports are moved to 50000-60999 so Chromium's never fall in it);
#       without it, the port named by its log line "WebRTC subscriber UID connected: 127.0.0.1:PORT".
# The table goes to stdout and, between <!-- cc-bench:start --> and <!-- cc-bench:end -->, into
# Docs/benchmarks.md (appended when absent). Everything else stays in out/cc-bench/. Another
# --size has its own markers and folder: cc-bench-1920x1080.
set -euo pipefail
cd "$(dirname "$0")/.."

SECS=60
SCHEDULE=0:3000,20:1000,40:3000
SETTLE=5
QUEUE_BYTES=
ONLY=
DOC=Docs/benchmarks.md
WRITE_DOC=1
OUR_START=1000
OUR_MIN=150
OUR_MAX=4000
OUR_ARGS=
ICE_PORTS=40000-40999
SIZE=1280x720
CHROMIUM_CODEC=vp8
PORT_FROM_LOG=0
REPORT_ONLY=0
ARGS_SHOWN="$*"

fail() { echo "cc-bench: $*" >&2; exit 1; }
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECS=${2:?}; shift 2 ;;
    --schedule) SCHEDULE=${2:?}; shift 2 ;;
    --settle) SETTLE=${2:?}; shift 2 ;;
    --queue-bytes) QUEUE_BYTES=${2:?}; shift 2 ;;
    --only) ONLY=${2:?}; shift 2 ;;
    --chromium-codec) CHROMIUM_CODEC=${2:?}; shift 2 ;;
    --size) SIZE=${2:?}; shift 2 ;;
    --our-start) OUR_START=${2:?}; shift 2 ;;
    --our-min) OUR_MIN=${2:?}; shift 2 ;;
    --our-max) OUR_MAX=${2:?}; shift 2 ;;
    --our-args) OUR_ARGS=${2:?}; shift 2 ;;
    --no-doc) WRITE_DOC=0; shift ;;
    --port-from-log) PORT_FROM_LOG=1; shift ;;
    --report-only) REPORT_ONLY=1; shift ;;
    -h | --help) usage 0 ;;
    *) echo "cc-bench: unknown argument '$1'" >&2; usage 2 ;;
  esac
done
[[ "$SECS" =~ ^[1-9][0-9]*$ ]] || fail "--seconds '$SECS' must be a positive whole number"
[[ "$SCHEDULE" =~ ^0:[0-9]+(,[0-9]+(\.[0-9]+)?:[0-9]+)*$ ]] || fail "--schedule '$SCHEDULE' is not 0:KBPS,SECONDS:KBPS,..."
[[ "$SETTLE" =~ ^[0-9]+(\.[0-9]+)?$ ]] || fail "--settle '$SETTLE' must be a number of seconds"
[ -z "$QUEUE_BYTES" ] || [[ "$QUEUE_BYTES" =~ ^[1-9][0-9]*$ ]] || fail "--queue-bytes must be a positive whole number"
[[ "$SIZE" =~ ^[1-9][0-9]{2,3}x[1-9][0-9]{2,3}$ ]] || fail "--size '$SIZE' is not WIDTHxHEIGHT"
case "$CHROMIUM_CODEC" in h264 | vp8) ;; *) fail "--chromium-codec is 'h264' or 'vp8'" ;; esac
case "$ONLY" in "" | chromium | ours) ;; *) fail "--only is 'chromium' or 'ours'" ;; esac
[[ "$OUR_ARGS" =~ ^[A-Za-z0-9\ ._:/=-]*$ ]] || fail "--our-args '$OUR_ARGS' has characters other than options and values"
read -r -a EXTRA_ARGS <<<"$OUR_ARGS"
for v in OUR_START OUR_MIN OUR_MAX; do [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || fail "--${v,,} must be kbit/s"; done
# The first size keeps the plain names (its table in Docs/benchmarks.md has been there longest).
OUT=out/cc-bench
MARK=cc-bench
if [ "$SIZE" != 1280x720 ]; then OUT=out/cc-bench-$SIZE; MARK=cc-bench-$SIZE; fi
if [ "$REPORT_ONLY" = 0 ]; then
[ "$(id -u)" = 0 ] || fail "needs root (network namespaces, tc, nftables)"
PY=out/venv/bin/python
[ -x "$PY" ] || fail "$PY is missing (scripts/setup.sh creates the venv with websockets)"
command -v chromium >/dev/null || fail "chromium is missing"

# Binaries as scripts/bench.sh finds them: .build/release (out/release when a build put them there).
BIN=.build/release
[ -x out/release/rtc-publish ] && [ -x out/release/rtc-signal ] && BIN=out/release
if [ "$ONLY" != chromium ]; then
  if [ ! -x "$BIN/rtc-publish" ] || [ ! -x "$BIN/rtc-signal" ] || [ ! -x "$BIN/rtc-encode" ]; then
    pgrep -f 'ci/run' >/dev/null && fail "release binaries missing and a .ci/run is building: try again after it"
    echo "cc-bench: building release binaries"
    swift build -c release
  fi
fi
[ -x "$BIN/rtc-encode" ] || fail "$BIN/rtc-encode is missing (swift build -c release)"

mkdir -p "$OUT"
rm -rf "$OUT/chromium" "$OUT/ours" "$OUT/run.env"
# The synthetic screen as a file for Chromium's fake camera (it loops the file), kept between runs.
SRC=$OUT/source
if [ ! -s "$SRC/in.y4m" ] && [ "$ONLY" != ours ]; then
  "$BIN/rtc-encode" generate --seconds 10 --size "$SIZE" --fps 30 --out "$SRC" >/dev/null
  rm -f "$SRC/in.yuv" "$SRC/in.pcm"
fi
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
DATE=$(date -u '+%Y-%m-%d %H:%M UTC')

# Our own namespaces and the processes started in them go on every exit.
NAMESPACES=()
PIDS=()
cleanup() {
  local pid ns
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  sleep 0.3
  for ns in "${NAMESPACES[@]}"; do
    [ -e "/run/netns/$ns" ] || continue
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
}
trap cleanup EXIT
stop_pid() { # PID: SIGINT (as scripts/bench.sh stops them), SIGKILL after 5 s
  kill -INT "$1" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
trap 'exit 130' INT TERM

BN_ARGS=(--schedule "$SCHEDULE" --settle "$SETTLE")
[ -n "$QUEUE_BYTES" ] && BN_ARGS+=(--queue-bytes "$QUEUE_BYTES")

# --- (a) Chromium -> Chromium ------------------------------------------------------------------
CHROMIUM_RC=skipped
if [ "$ONLY" != ours ]; then
  dir=$OUT/chromium
  mkdir -p "$dir"
  ns=rtc-ccb-chr-$$
  NAMESPACES+=("$ns")
  echo "cc-bench: (a) Chromium -> Chromium through the bottleneck, $SECS s, schedule $SCHEDULE"
  CHROMIUM_RC=0
  timeout $((SECS + 150)) "$PY" Tests/Peers/chromium_pair.py --out "$dir" --seconds "$SECS" "${BN_ARGS[@]}" \
    --netns "$ns" --fake-video-file "$SRC/in.y4m" --codec "$CHROMIUM_CODEC" --degradation maintain-resolution \
    --max-bitrate-kbps 5000 --size "$SIZE" \
    >"$dir/stdout.json" 2>"$dir/run.log" || CHROMIUM_RC=$?
  echo "cc-bench: (a) exit $CHROMIUM_RC: $(grep -v '^{' "$dir/run.log" | tail -1)"
fi

# --- (b) rtc-publish -> Chromium viewer --------------------------------------------------------
OURS_RC=skipped
OURS_MODE=
if [ "$ONLY" != chromium ]; then
  dir=$OUT/ours
  mkdir -p "$dir"
  ns=rtc-ccb-our-$$
  NAMESPACES+=("$ns")
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  ip netns exec "$ns" sysctl -qw net.ipv4.ip_local_port_range="50000 60999"
  PUBLISH=$(cd "$BIN" && pwd)/rtc-publish
  ICE_FLAG=()
  if [ "$PORT_FROM_LOG" = 0 ] && "$PUBLISH" --help 2>/dev/null | grep -- '--ice-ports' >/dev/null; then
    ICE_FLAG=(--ice-ports "$ICE_PORTS")
    OURS_MODE="udp sport $ICE_PORTS (rtc-publish --ice-ports)"
  else
    OURS_MODE="udp sport PORT from rtc-publish's 'connected' log line"
    if [ "$PORT_FROM_LOG" = 1 ]; then OURS_MODE+=" (--port-from-log)"; else OURS_MODE+=" (this rtc-publish has no --ice-ports)"; fi
  fi
  echo "cc-bench: (b) rtc-publish -> Chromium viewer through the bottleneck, $SECS s; match: $OURS_MODE"

  python3 Tests/Peers/bottleneck.py run --netns "$ns" "${BN_ARGS[@]}" --duration "$SECS" \
    --match-file "$dir/match" --start-on-match --out "$dir/bottleneck.json" \
    --samples "$dir/bottleneck-samples.jsonl" >"$dir/bottleneck.out" 2>"$dir/bottleneck.log" &
  bn_pid=$!
  PIDS+=("$bn_pid")
  for _ in $(seq 100); do grep -q '"ready"' "$dir/bottleneck.out" 2>/dev/null && break; sleep 0.1; done
  grep -q '"ready"' "$dir/bottleneck.out" || fail "bottleneck.py did not start: $(cat "$dir/bottleneck.log")"

  bport=$(ip netns exec "$ns" python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  ip netns exec "$ns" "$BIN/rtc-signal" --port "$bport" >"$dir/rtc-signal.log" 2>&1 &
  signal_pid=$!
  PIDS+=("$signal_pid")
  for _ in $(seq 50); do grep -q listening "$dir/rtc-signal.log" && break; sleep 0.1; done
  (cd "$dir" && exec ip netns exec "$ns" "$PUBLISH" --room ccbench --uid alice_sub --signal "127.0.0.1:$bport" \
    --no-preview --ice-address 127.0.0.1 "${ICE_FLAG[@]}" --size "$SIZE" --fps 30 --preset ultrafast --threads 1 --keyint 1800 \
    --video-bitrate "$OUR_START" --min-video-bitrate "$OUR_MIN" --max-video-bitrate "$OUR_MAX" \
    --duration $((SECS + 90)) --stats-json stats.jsonl "${EXTRA_ARGS[@]}") >"$dir/rtc-publish.log" 2>&1 &
  publish_pid=$!
  PIDS+=("$publish_pid")
  for _ in $(seq 100); do grep -q "signaling in room" "$dir/rtc-publish.log" 2>/dev/null && break; sleep 0.1; done
  grep -q "signaling in room" "$dir/rtc-publish.log" || fail "rtc-publish did not join: $(tail -3 "$dir/rtc-publish.log")"

  # The match: the port range at once when connected, or each port the log names (ICE may move).
  (
    last=
    while kill -0 "$publish_pid" 2>/dev/null; do
      port=$(grep -aoE '(connected: |ICE switched to )127\.0\.0\.1:[0-9]+' "$dir/rtc-publish.log" 2>/dev/null | tail -1 |
        sed 's/.*://') || true
      if [ -n "$port" ]; then
        if [ ${#ICE_FLAG[@]} -gt 0 ]; then match="udp sport $ICE_PORTS"; else match="udp sport $port"; fi
        if [ "$match" != "$last" ]; then
          echo "$match" >"$dir/match.tmp" && mv "$dir/match.tmp" "$dir/match"
          echo "$(date +%T.%N) $match (log port $port)" >>"$dir/match.log"
          last=$match
        fi
      fi
      sleep 0.1
    done
  ) &
  PIDS+=("$!")

  OURS_RC=0
  timeout $((SECS + 120)) ip netns exec "$ns" "$PY" Tests/Peers/chromium_viewer.py \
    --url "http://127.0.0.1:$bport/rooms/ccbench" --seconds $((SECS + 2)) --out "$dir/chromium" \
    >"$dir/chromium.log" 2>&1 || OURS_RC=$?
  # The bottleneck ends by itself SECS after its clock started; then the publisher and server.
  for _ in $(seq 100); do kill -0 "$bn_pid" 2>/dev/null || break; sleep 0.1; done
  kill -TERM "$bn_pid" 2>/dev/null || true
  wait "$bn_pid" 2>/dev/null || true
  stop_pid "$publish_pid"
  stop_pid "$signal_pid"
  echo "cc-bench: (b) exit $OURS_RC: $(tail -1 "$dir/chromium.log")"
fi
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
# The command that measured (--no-doc and --report-only only decide where the table goes).
ARGS_SHOWN=$(sed -E 's/(^| )--(no-doc|report-only)( |$)/ /g; s/  +/ /g; s/^ //; s/ $//' <<<"$ARGS_SHOWN")
SHOWN="scripts/cc-bench.sh${ARGS_SHOWN:+ $ARGS_SHOWN}"
LOAD="$LOAD_BEFORE -> $LOAD_AFTER"
OUR_RATES="$OUR_START/$OUR_MIN/$OUR_MAX"
declare -p SHOWN DATE LOAD CHROMIUM_RC OURS_RC OURS_MODE OUR_RATES >"$OUT/run.env"
else
  [ -s "$OUT/run.env" ] || fail "--report-only: no $OUT/run.env from an earlier run"
  # shellcheck disable=SC1091 # written by the run above
  source "$OUT/run.env"
fi

# --- the table ---------------------------------------------------------------------------------
python3 - "$OUT" "$DOC" "$WRITE_DOC" "$SHOWN" "$DATE" "$LOAD" "$CHROMIUM_RC" "$OURS_RC" \
  "$OURS_MODE" "$OUR_RATES" "$SIZE" "$MARK" <<'EOF'
import json, os, re, sys

out, doc, write_doc, shown, date, load, chromium_rc, ours_rc, ours_mode, our_rates, size, mark = sys.argv[1:]


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def fmt(v, spec="{:.0f}"):
    return "–" if v is None else spec.format(v)


def mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


pair = load_json(f"{out}/chromium/summary.json")
viewer = load_json(f"{out}/ours/chromium/summary.json")
senders = []
if chromium_rc != "skipped":
    s = {"name": "Chromium", "rc": chromium_rc, "bn": (pair or {}).get("bottleneck"), "freezes": None,
         "phaseFreezes": {}}
    if pair and pair.get("ok"):
        s["freezes"] = (pair["freezes"]["count"], pair["freezes"]["longestMs"])
        s["phaseFreezes"] = {p["start"]: (p["freezes"], p["longestFreezeMs"]) for p in pair["phases"]}
    senders.append(s)
if ours_rc != "skipped":
    s = {"name": "rtc-publish", "rc": ours_rc, "bn": load_json(f"{out}/ours/bottleneck.json"), "freezes": None,
         "phaseFreezes": {}}
    if viewer and viewer.get("ok") and viewer.get("tabs"):
        frames = viewer["tabs"][0]["frames"]
        s["freezes"] = (frames["freezes"], max(frames["freezeGapsMs"], default=0))
    senders.append(s)

schedule = next((s["bn"]["schedule"] for s in senders if s["bn"] and s["bn"].get("schedule")), [])
rows = ["| phase | capacity kbit/s | sender | delivered kbit/s | utilisation | queue delay p50 / p95 / max ms "
        "| drops | tracking s | freezes > 500 ms (longest ms) |",
        "|---|---|---|---|---|---|---|---|---|"]
for i, step in enumerate(schedule):
    for j, s in enumerate(senders):
        phases, steps = (s["bn"] or {}).get("phases") or [], (s["bn"] or {}).get("steps") or []
        ph = phases[i] if i < len(phases) else None
        st = steps[i] if i < len(steps) else None
        if ph is None:
            continue
        q = ph.get("queueDelayMs") or {}
        tracking = "never" if st and st.get("trackingSeconds") is None else fmt((st or {}).get("trackingSeconds"), "{:.1f}")
        frz = s["phaseFreezes"].get(ph["start"])
        label = f"{ph['start']:g}–{ph['end']:g} s" if j == 0 else ""
        cap = f"{ph['capacityKbps']:g}" if j == 0 else ""
        rows.append(f"| {label} | {cap} | {s['name']} | {fmt(ph.get('deliveredKbps'))} | "
                    f"{fmt(ph.get('utilisation'), '{:.0%}')} | {fmt(q.get('p50'))} / {fmt(q.get('p95'))} / "
                    f"{fmt(q.get('max'))} | {fmt(ph.get('settledDrops'), '{}')} | {tracking} | "
                    f"{'%d (%d)' % frz if frz else '–'} |")
for j, s in enumerate(senders):
    bn = s["bn"] or {}
    q = bn.get("queueDelayMs") or {}
    frz = s["freezes"]
    rows.append(f"| {'whole run' if j == 0 else ''} | | {s['name']} | | | {fmt(q.get('p50'))} / {fmt(q.get('p95'))} / "
                f"{fmt(q.get('max'))} | {fmt(bn.get('drops'), '{}')} | | {'%d (%d)' % frz if frz else '–'} |")

notes = []
if pair and pair.get("ok"):
    per = ", ".join(f"{p['capacityKbps']:g}: {fmt(p.get('sentKbps'))} / {fmt(p.get('targetKbpsMean'))} / "
                    f"{fmt(p.get('availableOutgoingKbpsMean'))}" for p in pair["phases"])
    t = pair["totals"]
    notes.append(
        f"Chromium ({pair.get('chromium')}): {pair.get('codec')} by {pair.get('encoderImplementation')}, "
        f"source {pair['source']['width']}x{pair['source']['height']} {pair['source']['frameRate']} fps "
        f"(the synthetic screen), degradationPreference {pair.get('degradationPreference')}, contentHint "
        f"{pair.get('contentHint') or 'none'}, maxBitrate {pair.get('maxBitrateKbps')} kbit/s. Per phase (settled), kbit/s: "
        f"sent / mean targetBitrate / mean availableOutgoingBitrate = {per}. Seconds the encoder sent < 80 % of its "
        f"target: {pair.get('encoderLimitedSeconds')}. Packets lost {t.get('packetsLost')}, NACKs {t.get('nackCount')}, "
        f"PLIs {t.get('pliCount')}, key frames decoded {t.get('keyFramesDecoded')} in the window "
        f"({t.get('keyFramesDecodedSinceStart')} in all), <video> freezes by getStats {pair['freezes']['statsFreezeCount']}.")
elif chromium_rc != "skipped":
    notes.append(f"Chromium run failed (exit {chromium_rc}): {(pair or {}).get('error')}")
if ours_rc != "skipped":
    ours = next(s for s in senders if s["name"] == "rtc-publish")
    if viewer and viewer.get("ok") and viewer.get("tabs"):
        tab = viewer["tabs"][0]
        # Our target and estimate per phase: stats.jsonl's "time" counts from the publisher's start;
        # its first line with the viewer connected marks the clock's start (within its 1 s lines).
        per = ""
        try:
            lines = [json.loads(l) for l in open(f"{out}/ours/stats.jsonl") if l.strip()]
            lines = [l for l in lines if "time" in l and not l.get("final")]
            first = next(l["time"] for l in lines
                         if any(v.get("state") == "connected" for v in (l["totals"].get("webRTCViewers") or {}).values()))
            bn = ours["bn"] or {}
            parts = []
            for ph in bn.get("phases") or []:
                sel = [l for l in lines if ph["settledFrom"] <= l["time"] - first <= ph["end"]]
                target = mean([l["totals"].get("videoBitrateTargetKbps") for l in sel])
                est = mean([mean([f.get("bitrateEstimate") for f in (l["totals"].get("feedback") or {}).values()
                                  if isinstance(f, dict)]) for l in sel])
                video = mean([l.get("videoKbps") for l in sel])
                parts.append(f"{ph['capacityKbps']:g}: {fmt(video)} / {fmt(target)} / {fmt(est and est / 1000)}")
            per = (" Per phase (settled, aligned within 1 s), kbit/s: video sent / mean target / mean estimate = "
                   + ", ".join(parts) + ".")
        except (OSError, ValueError, StopIteration, KeyError, TypeError):
            pass
        notes.append(
            f"rtc-publish: synthetic screen {size} 30 fps, x264 ultrafast, video start/min/max {our_rates} kbit/s, "
            f"Opus 96 kbit/s on the same 5-tuple; shaped by {ours_mode}.{per} Viewer "
            f"({viewer.get('chromium')}, rtc-signal's page): {tab['playbackQuality']['fps']} fps shown, "
            f"{tab['playbackQuality']['droppedInWindow']} dropped, max frame gap {tab['frames']['maxGapMs']} ms, "
            f"glass-to-glass p50 {tab['glassToGlassMs']['p50']} / p95 {tab['glassToGlassMs']['p95']} ms.")
    else:
        notes.append(f"rtc-publish run failed (exit {ours_rc}): {(viewer or {}).get('error')}")

table = "\n".join(rows)
print()
print(table)
for n in notes:
    print("\n" + n)

if write_doc == "1":
    bn_any = next((s["bn"] for s in senders if s["bn"] and s["bn"].get("ok")), {}) or {}
    section = "\n".join([
        f"<!-- {mark}:start -->",
        "<!-- Written by scripts/cc-bench.sh; edits inside these markers are overwritten. -->",
        f"### Congestion control: Chromium's GCC and rtc-publish through one bottleneck ({size})",
        "",
        "Each sender in a network namespace of its own, through the same shaping of its `lo` "
        "(Tests/Peers/bottleneck.py): htb, shaped class rate = ceil = the capacity, bfifo of "
        f"{bn_any.get('queueBytes')} bytes (250 ms at the top capacity); the nft rule marks the sender's "
        f"packets and sets their skb priority to the class 1:10, which htb classifies by "
        f"({'this kernel has no cls_fw for a mark filter' if 'fw filter' in str(bn_any.get('classifier')) or 'no cls_fw' in str(bn_any.get('classifier')) else bn_any.get('classifier')}). The schedule's clock starts when the sender's ICE has connected. "
        f"Delivered rate, utilisation, queueing delay (backlog × 8 / capacity) and drops over each phase "
        f"after its first {bn_any.get('settleSeconds')} s. Tracking: seconds from the step to the end of the "
        "first 1-s window whose offered rate (delivered + dropped + backlog change) is within 0.85–1.10 × "
        "the new capacity and stays there for 2 s (at least 1.0; 'never' within the phase); the first "
        "phase's is the ramp-up from the start. Freezes: the receiving `<video>` shows no new frame for "
        "> 500 ms (per phase for Chromium's pair; the viewer of rtc-publish reports whole runs only).",
        "",
        table,
        "",
        *[n + "\n" for n in notes],
        f"Command: `{shown}`, {date}, load {load} ({out}: the summaries, per-second series and "
        "raw bottleneck samples).",
        f"<!-- {mark}:end -->",
    ])
    text = open(doc).read() if os.path.exists(doc) else ""
    pattern = re.compile(rf"<!-- {re.escape(mark)}:start -->.*?<!-- {re.escape(mark)}:end -->", re.S)
    if pattern.search(text):
        text = pattern.sub(lambda m: section, text)
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    with open(doc, "w") as f:
        f.write(text)
    print(f"\ncc-bench: wrote the table into {doc}")
EOF
[ "$CHROMIUM_RC" = 0 ] || [ "$CHROMIUM_RC" = skipped ] || exit 1
[ "$OURS_RC" = 0 ] || [ "$OURS_RC" = skipped ] || exit 1
