#!/usr/bin/env bash
# Where rtc-publish's resident memory goes in the paced 720p benchmark job: runs the job of
# bench.sh's "rtc-publish, paced" row (x264 ultrafast, 2 threads) against a UDP sink, reads
# /proc/PID/smaps 6 s in and prints resident KB per part (anonymous, the binary, each library
# chain), with the peak from /usr/bin/time. Usage: scripts/memory-breakdown.sh [BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.build/release/rtc-publish}
ENCODE=$(dirname "$BIN")/rtc-encode
OUT=out/memory
PORT=${MEMORY_PORT:-25204}
mkdir -p "$OUT"
[ -x "$BIN" ] || { echo "memory-breakdown: $BIN is not built (make release)" >&2; exit 2; }
[ -f "$OUT/in.y4m" ] || "$ENCODE" generate --seconds 10 --size 1280x720 --fps 30 --out "$OUT" >/dev/null
python3 scripts/bench-sink.py --ports "$PORT,$((PORT + 1)),$((PORT + 2)),$((PORT + 3))" \
  --out "$OUT/sink.json" >"$OUT/sink.log" 2>&1 &
SINK=$!
trap 'kill "$SINK" 2>/dev/null || true' EXIT
sleep 1
/usr/bin/time -f %M -o "$OUT/peak.txt" "$BIN" --no-signal --no-preview --room bench --uid bench \
  --video "$OUT/in.y4m" --audio "$OUT/in.wav" --to "127.0.0.1:$PORT" --srtp-suite AES_CM_128_HMAC_SHA1_80 \
  --mtu 1200 --preset ultrafast --threads 2 --video-bitrate 2500 --audio-bitrate 96000 --keyint 60 \
  --duration 10 >"$OUT/publish.log" 2>&1 &
TIMED=$!
sleep 6
PID=$(pgrep -P "$TIMED" | head -n 1)
cat "/proc/$PID/smaps" >"$OUT/smaps.txt"
wait "$TIMED"
echo "peak RSS: $(cat "$OUT/peak.txt") KB"
python3 - "$OUT/smaps.txt" <<'PY'
import collections
import os
import re
import sys

chains = {
    "OpenSSL": ["libcrypto", "libssl.so"],
    "libnice chain": ["libnice", "libglib", "libgobject", "libgio", "libgmodule", "libgupnp", "libgssdp", "libsoup",
                      "libxml2", "libicu", "libsqlite", "libkrb5", "libk5crypto", "libgssapi", "libgnutls", "libp11",
                      "libtasn1", "libhogweed", "libgmp", "libunistring", "libidn2", "libpsl", "libnghttp2",
                      "libbrotli", "libkeyutils", "libcom_err", "libffi", "libpcre2", "libmount", "libblkid",
                      "libselinux", "libresolv"],
    "libpulse chain": ["libpulse", "libsndfile", "libvorbis", "libogg", "libFLAC", "libmpg123", "libmp3lame",
                       "libdbus", "libsystemd", "libasyncns", "libapparmor", "libX11", "libXau", "libXdmcp", "libbsd",
                       "libmd", "libcap", "libgcrypt", "libgpg-error", "liblz4", "libzstd"],
    "NSS": ["libnss", "libnspr", "libplc", "libplds", "libsmime", "libssl3", "libsoftokn", "libfreebl"],
}
resident = collections.Counter()
name = None
for line in open(sys.argv[1]):
    mapping = re.match(r"^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$", line)
    if mapping:
        name = mapping.group(1) or "[anon]"
    elif line.startswith("Rss:"):
        resident[name] += int(line.split()[1])
parts = collections.Counter()
for path, kb in resident.items():
    base = os.path.basename(path)
    part = next((chain for chain, prefixes in chains.items() if any(base.startswith(p) for p in prefixes)), None)
    if part is None:
        part = "anonymous and heap" if path in ("[anon]", "[heap]") else (
            "rtc-publish binary" if base == "rtc-publish" else "other libraries and mappings")
    parts[part] += kb
for part, kb in parts.most_common():
    print(f"{kb:8d} KB  {part}")
print(f"{sum(parts.values()):8d} KB  resident at 6 s")
PY
