#!/usr/bin/env bash
# make demo: the whole product on one machine. Starts rtc-signal on 8443, shares an X display
# into room 123456 as alice_sub (rtc-publish --video x11), subscribes a viewer through the room,
# lets a stock ffmpeg play the viewer's SDP, and opens the room's page in headless Chromium
# (WebRTC): prints what each received and saves a decoded picture and a screenshot of the page.
# The display is a private Xvfb with real X clients on it (the timecode window, rtc-testscreen,
# under a terminal with text); a user's own desktop is shared only when asked: DEMO_DISPLAY=:0.
# Stops everything it started. ICE stays on loopback (the browser runs on this machine).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.build/release
OUT=${OUT:-out/demo}
PORT=${DEMO_SIGNAL_PORT:-8443}
SECONDS_TO_RUN=${DEMO_SECONDS:-10}
rm -rf "$OUT" && mkdir -p "$OUT"
OUT_ABS=$(cd "$OUT" && pwd)

pids=()
cleanup() { for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

if (exec 3<>/dev/tcp/127.0.0.1/"$PORT") 2>/dev/null; then
  echo "demo: something already listens on 127.0.0.1:$PORT; stop it or run with DEMO_SIGNAL_PORT=<free port>" >&2
  exit 1
fi

if [ -n "${DEMO_DISPLAY:-}" ]; then
  DISPLAY_TO_SHARE=$DEMO_DISPLAY
  echo "== sharing your display $DISPLAY_TO_SHARE (DEMO_DISPLAY)"
else
  # A private X server on a free display number, never a user's.
  number=$((200 + RANDOM % 800))
  while [ -e "/tmp/.X$number-lock" ]; do number=$((number + 1)); done
  DISPLAY_TO_SHARE=":$number"
  echo "== Xvfb $DISPLAY_TO_SHARE 1280x720, with the timecode window and a terminal on it"
  Xvfb "$DISPLAY_TO_SHARE" -screen 0 1280x720x24 -nolisten tcp -noreset > "$OUT/Xvfb.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 50); do [ -e "/tmp/.X11-unix/X$number" ] && break; sleep 0.1; done
  "$BIN/rtc-testscreen" --display "$DISPLAY_TO_SHARE" --size 1280x720 > "$OUT/rtc-testscreen.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 50); do grep -q "^window" "$OUT/rtc-testscreen.log" && break; sleep 0.1; done
  DISPLAY="$DISPLAY_TO_SHARE" xterm -geometry 64x14+700+440 -fa Monospace -fs 10 -T "make demo" \
    -e sh -c 'printf "rtc-publish --video x11 shares this X display.\n\n"; head -11 README.md; sleep 3600' \
    > "$OUT/xterm.log" 2>&1 &
  pids+=($!)
  sleep 1
fi

echo "== rtc-signal --port $PORT"
"$BIN/rtc-signal" --port "$PORT" > "$OUT/rtc-signal.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do grep -q listening "$OUT/rtc-signal.log" && break; sleep 0.1; done

echo "== rtc-publish --room 123456 --uid alice_sub --video x11:$DISPLAY_TO_SHARE --audio test   (30 fps + test tone)"
(cd "$OUT" && exec "../../$BIN/rtc-publish" --room 123456 --uid alice_sub --signal "127.0.0.1:$PORT" \
  --video "x11:$DISPLAY_TO_SHARE" --audio test \
  --ice-address 127.0.0.1 --duration $((SECONDS_TO_RUN + 20))) > "$OUT/rtc-publish.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q "signaling in room" "$OUT/rtc-publish.log" && break; sleep 0.1; done
head -1 "$OUT/rtc-publish.log"

echo "== headless Chromium on http://127.0.0.1:$PORT/rooms/123456   (the viewer page, WebRTC)"
out/venv/bin/python Tests/Peers/chromium_viewer.py --url "http://127.0.0.1:$PORT/rooms/123456" \
  --seconds "$SECONDS_TO_RUN" --out "$OUT/browser" --screenshot "$OUT/browser.png" \
  > "$OUT/browser.log" 2>&1 &
browser=$!

echo "== rtc-subscribe --room 123456 --uid viewer --from alice_sub   (ffmpeg plays the SDP it receives)"
# The player keeps: the timecode strip rows of every picture (to read frame numbers back), the
# frame timestamps (to measure the frame rate a receiver sees), the audio, and one picture.
PLAY="ffmpeg -hide_banner -nostdin -v error -protocol_whitelist file,udp,rtp -i {sdp} \
 -map 0:v -vsync passthrough -vf crop=1280:16:0:0 -f rawvideo -pix_fmt gray $OUT_ABS/strip.gray \
 -map 0:v -vsync passthrough -f framecrc $OUT_ABS/frames.crc \
 -map 0:a -f s16le -ac 2 -ar 48000 $OUT_ABS/audio.pcm \
 -map 0:v -ss 3 -frames:v 1 -update 1 $OUT_ABS/viewer-frame.png"
"$BIN/rtc-subscribe" --room 123456 --uid viewer --from alice_sub --signal "127.0.0.1:$PORT" \
  --sdp "$OUT/viewer.sdp" --duration "$SECONDS_TO_RUN" --play "$PLAY" | sed 's/^/   /'

echo
echo "== What the viewer's ffmpeg received in ${SECONDS_TO_RUN} s"
# "#tb 0: 1/30" or "1001/30000": ticks per second is den/num.
awk -F', *' '/^#tb 0:/ { sub(/^#tb 0: */, ""); split($0, a, "/"); rate = a[2] / a[1] }
  !/^#/ && $1 == 0 { n++; if (n == 1) first = $3; last = $3 }
  END { if (n > 1 && rate > 0) printf "video: %d frames, %.2f fps by RTP timestamps\n", n, (n - 1) / ((last - first) / rate);
        else print "video: no frames" }' "$OUT/frames.crc"
"$BIN/rtc-encode" read-timecodes --size 1280x16 < "$OUT/strip.gray" | sed 's/^/video: /'
bytes=$(stat -c %s "$OUT/audio.pcm" 2>/dev/null || echo 0)
awk -v b="$bytes" 'BEGIN { printf "audio: %.2f s of 48 kHz stereo Opus decoded\n", b / 192000 }'
echo "picture: $OUT/viewer-frame.png (a decoded frame, 3 s in)"
echo
echo "== What headless Chromium showed on the room's page"
if wait "$browser"; then
  out/venv/bin/python - "$OUT/browser/summary.json" <<'PY'
import json, sys
tab = json.load(open(sys.argv[1]))["tabs"][0]
q, g, t = tab["playbackQuality"], tab["glassToGlassMs"], tab["timecodes"]
print(f"browser: {q['framesInWindow']} frames decoded in {tab['windowSeconds']:.1f} s, {q['fps']} fps, "
      f"{q['droppedInWindow']} dropped, {tab['frames']['freezes']} freezes, {tab['width']}x{tab['height']}")
print(f"browser: timecodes {t['count']} read, {'in order' if t['inOrder'] else 'OUT OF ORDER'}; "
      f"glass-to-glass p50 {g['p50']} ms, p95 {g['p95']} ms; audio {'arriving' if tab['audio']['arriving'] else 'MISSING'}")
PY
  echo "screenshot: $OUT/browser.png"
else
  echo "browser: failed: $(tail -1 "$OUT/browser.log")"
fi
echo "publisher's last status: $(grep '^fps' "$OUT/rtc-publish.log" | tail -1)"
echo
echo "With a display, watch it live while rtc-publish runs:"
echo "   open http://127.0.0.1:$PORT/rooms/123456 in a browser on this machine   (start rtc-publish"
echo "     with --ice-address set to an address the browser reaches; for 127.0.0.1, Chromium needs"
echo "     --allow-loopback-in-peer-connection)"
echo "   ffplay -protocol_whitelist file,udp,rtp -i $OUT/alice_sub.sdp        (the local preview)"
echo "   rtc-subscribe --room 123456 --uid bob --from alice_sub --play ffplay   (as a viewer in the room)"
