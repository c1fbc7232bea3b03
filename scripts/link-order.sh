#!/usr/bin/env bash
# `make link-order`: rewrites scripts/rtc-publish.order, the list of functions rtc-publish runs,
# which its release link (Package.swift, `linkOrder`) places side by side at the front of .text.
#
# Why: a page fault on program text maps the 64 KB around it (the kernel's fault-around), so
# 2,500 functions scattered over 14 MB of text kept about 7.5 MB of it resident. Packed together
# they fit in under 1 MB, and peak RSS drops by about 2.5 MB (Docs/benchmarks.md). A stale list
# costs only that saving: a name the binary no longer has is ignored, a new function is simply
# placed where it would be without the list.
#
# How: valgrind's callgrind runs a copy of the release rtc-publish (without debug info, which
# this valgrind cannot read) on the usual jobs, and every function of the binary it saw execute
# is kept, by its linkage name:
#   1. file inputs (.y4m + .wav) to a static SRTP destination, as `make bench` runs it;
#   2. the built-in test source into a room on a real rtc-signal, with the local preview;
#   3. a capture process (rtc-capture-sim) over the ingest socket.
# Needs a release build (`make link-order` makes one); `scripts/setup.sh bench` installs valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=.build/release
OUT=out/link-order
ORDER=scripts/rtc-publish.order
PORT=${LINK_ORDER_PORT:-27100}

fail() { echo "link-order: $*" >&2; exit 1; }
for tool in rtc-publish rtc-signal rtc-encode rtc-capture-sim; do
  [ -x "$BIN/$tool" ] || fail "$BIN/$tool is missing: run 'make release' first"
done
bash scripts/setup.sh bench

rm -rf "$OUT"
mkdir -p "$OUT"
cp "$BIN/rtc-publish" "$OUT/rtc-publish"
strip --strip-debug "$OUT/rtc-publish"
"$BIN/rtc-encode" generate --seconds 2 --size 1280x720 --fps 30 --out "$OUT" >/dev/null

PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

python3 scripts/bench-sink.py --ports "$PORT,$((PORT + 1)),$((PORT + 2)),$((PORT + 3))" \
  --out "$OUT/sink.json" >"$OUT/sink.log" 2>&1 &
PIDS+=($!)
"$BIN/rtc-signal" --port "$((PORT + 10))" >"$OUT/rtc-signal.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do grep -q listening "$OUT/rtc-signal.log" && break; sleep 0.1; done
grep -q listening "$OUT/rtc-signal.log" || fail "rtc-signal did not start (see $OUT/rtc-signal.log)"

profile() {
  local name=$1
  shift
  echo "link-order: profiling $name"
  valgrind --tool=callgrind --demangle=no --callgrind-out-file="$OUT/$name.callgrind" \
    "$OUT/rtc-publish" "$@" >"$OUT/$name.log" 2>&1 || fail "the $name run failed (see $OUT/$name.log)"
}

profile files --no-signal --no-preview --room bench --uid bench \
  --video "$OUT/in.y4m" --audio "$OUT/in.wav" --to "127.0.0.1:$PORT" \
  --srtp-suite AES_CM_128_HMAC_SHA1_80 --mtu 1200 --preset ultrafast --threads 1 \
  --video-bitrate 2500 --audio-bitrate 96000 --keyint 60 --duration 3 --stats-json "$OUT/stats.jsonl"
profile room --room 123456 --uid alice_sub --signal "127.0.0.1:$((PORT + 10))" \
  --preview "127.0.0.1:$PORT" --sdp "$OUT/alice_sub.sdp" --duration 3
INGEST="unix:$(pwd)/$OUT/ingest.sock"
# The capture process connects once rtc-publish, slowed down by valgrind, has bound the socket.
(
  for _ in $(seq 300); do [ -S "$OUT/ingest.sock" ] && break; sleep 0.1; done
  "$BIN/rtc-capture-sim" --ingest "$INGEST" --duration 3 >"$OUT/capture.log" 2>&1
) &
PIDS+=($!)
profile ingest --no-signal --room bench --uid bench --ingest "$INGEST" \
  --preview "127.0.0.1:$PORT" --sdp "$OUT/ingest.sdp" --duration 8

python3 - "$OUT" "$ORDER" <<'EOF'
import re, sys
out, order = sys.argv[1], sys.argv[2]
jobs = {}
for job in ("files", "room", "ingest"):
    names, objects, functions, current = set(), {}, {}, None
    for line in open(f"{out}/{job}.callgrind", encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        m = re.match(r"^(c?ob)=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3):
                objects[m.group(2)] = m.group(3)
            if m.group(1) == "ob":
                current = objects.get(m.group(2), "")
            continue
        m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3):
                functions[m.group(2)] = m.group(3)
            if m.group(1) == "fn" and current.endswith("/rtc-publish") and m.group(2) in functions:
                # callgrind marks recursion cycles with 'N; the linkage name is before it.
                names.add(re.sub(r"'\d+$", "", functions[m.group(2)]))
    names.discard("")
    jobs[job] = names
every = set().union(*jobs.values())
if len(every) < 1000:
    sys.exit(f"link-order: only {len(every)} functions seen; the runs did not do their jobs")


# Grouped by the jobs that run them, the file job's first (the benchmarked one): each job's
# functions then sit in one run of text, not spread among the others' (a fault maps 64 KB).
def key(name):
    return (name not in jobs["files"], name not in jobs["room"], name not in jobs["ingest"], name)


with open(order, "w") as handle:
    handle.write("\n".join(sorted(every, key=key)) + "\n")
print(f"link-order: {len(every)} functions written to {order}, the file job's {len(jobs['files'])} first")
EOF

# SwiftPM does not know the link reads the list: relink rtc-publish with the new one.
rm -f "$BIN/rtc-publish"
swift build -c release --static-swift-stdlib --product rtc-publish
