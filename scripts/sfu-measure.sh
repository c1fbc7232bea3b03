#!/usr/bin/env bash
# Measures the SFU path of Docs/sfu.md: rtc-publish --whip into Janus A (simple-whip-server in
# front), the cascade to Janus B, and SUBSCRIBERS aiortc viewers on each instance; reports the
# WHIP setup times, the publisher's uplink, the viewers' frame rates and each process's CPU over a
# 20 s window. Everything runs in a network namespace of its own (Tests/Peers/janus/janus_room.py:
# 127.0.0.2 on a veth, nothing leaves 127/8). Needs root, `make setup` and a release build.
#   SUBSCRIBERS=2 SIZE=1280x720 bash scripts/sfu-measure.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SUBSCRIBERS="${SUBSCRIBERS:-2}"
SIZE="${SIZE:-1280x720}"
NS="rtcsfu$$"
OUT="out/sfu-measure"
PUBLISH=".build/release/rtc-publish"
[ -x "$PUBLISH" ] || PUBLISH=".build/debug/rtc-publish"
rm -rf "$OUT"; mkdir -p "$OUT"

python3 Tests/Peers/janus/janus_room.py --cascade --ns "$NS" >"$OUT/room.jsonl" 2>"$OUT/room.log" &
room=$!
cleanup() { kill -INT "$room" 2>/dev/null || true; wait "$room" 2>/dev/null || true; }
trap cleanup EXIT
for _ in $(seq 1 300); do grep -q '"ready"' "$OUT/room.jsonl" 2>/dev/null && break; sleep 0.1; done
ready="$(grep '"ready"' "$OUT/room.jsonl")"
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$ready" "$1"; }
WHIP="$(field whip)"; JANUS_A="$(field janus)"; JANUS_B="$(field janus_b)"; ROOM="$(field room)"

ip netns exec "$NS" "$PUBLISH" --room sfu --uid alice_sub --no-signal --no-preview --whip "$WHIP" \
  --ice-address 127.0.0.2 --video test --size "$SIZE" --duration 40 --stats-json "$OUT/publish.jsonl" \
  >"$OUT/publish.log" 2>&1 &
publisher=$!
subscribers=()
for i in $(seq 1 "$SUBSCRIBERS"); do
  for side in A B; do
    url="$JANUS_A"; [ "$side" = B ] && url="$JANUS_B"
    ip netns exec "$NS" out/venv/bin/python Tests/Peers/janus/janus_subscriber.py --janus "$url" \
      --room "$ROOM" --wait-publisher 20 --seconds 24 >"$OUT/sub-$side-$i.json" 2>"$OUT/sub-$side-$i.log" &
    subscribers+=($!)
  done
done

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
pid_of() { pgrep -f "janus -F .*run-$NS/$1" | head -1; }
sleep 12
a="$(pid_of A)"; b="$(pid_of B)"; p="$(pgrep -f "^$PUBLISH --room sfu" | head -1)"
a0=$(cpu "$a"); b0=$(cpu "$b"); p0=$(cpu "$p"); t0=$(date +%s.%N)
sleep 20
a1=$(cpu "$a"); b1=$(cpu "$b"); p1=$(cpu "$p"); t1=$(date +%s.%N)
for s in "${subscribers[@]}"; do wait "$s" || true; done
wait "$publisher" || true
tick=$(getconf CLK_TCK)
python3 - "$OUT" "$SUBSCRIBERS" "$SIZE" "$tick" "$t0" "$t1" "$a0" "$a1" "$b0" "$b1" "$p0" "$p1" <<'PY'
import glob, json, sys
out, n, size, tick, t0, t1 = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
a0, a1, b0, b1, p0, p1 = map(int, sys.argv[7:13])
span = t1 - t0
pct = lambda x0, x1: 100.0 * (x1 - x0) / tick / span
lines = [json.loads(l) for l in open(f"{out}/publish.jsonl") if l.strip()]
rates = [l["videoKbps"] + l["audioKbps"] for l in lines if "videoKbps" in l][10:30]
whip = [l["totals"].get("whip") or {} for l in lines if "totals" in l]
live = next((w for w in whip if w.get("setupMs")), {})
print(f"sfu-measure: {size}, {n} aiortc viewer(s) on Janus A and {n} on Janus B (through the cascade)")
print(f"  WHIP: POST -> 201 {live.get('answerMs', 0):.1f} ms, POST -> media flowing {live.get('setupMs', 0):.1f} ms, attempts {whip[-1].get('attempts')}")
print(f"  publisher uplink: {sum(rates) / max(len(rates), 1):.0f} kbit/s (video + audio, whatever the viewer count)")
print(f"  CPU over {span:.0f} s (% of one core): rtc-publish {pct(p0, p1):.1f}, Janus A {pct(a0, a1):.1f}, Janus B {pct(b0, b1):.1f}")
for path in sorted(glob.glob(f"{out}/sub-*.json")):
    try:
        s = json.loads(open(path).read().strip().splitlines()[-1])
        v = s["video"]
        print(f"  {path.split('/')[-1][:-5]}: {v['frames']} frames in {s['window_s']:.1f} s, {v['fps']:.2f} fps, {v['width']}x{v['height']}, largest gap {v['largest_gap_s']:.2f} s")
    except Exception as error:
        print(f"  {path}: no summary ({error})")
PY
