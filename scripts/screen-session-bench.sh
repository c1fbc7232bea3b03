#!/usr/bin/env bash
# `make bench`, a screen session (issue 37, "Static screens cost nothing"): the same scripted 60 s
# on a private Xvfb shared four ways, one after the other: still document, typing, scrolling.
#
# The session (scripts/screen-session.py plays it for each row, with fresh X clients): two
# full-screen xterms on a private Xvfb (1280x720x24, its own display number, never the user's), a
# long text in `less` and a terminal running `cat`; after the sender has sent for
# BENCH_SESSION_WARMUP seconds the clock starts:
#   still      the document turns a page at 0 s, then nothing moves for the phase;
#   typing     the terminal is mapped, prose is typed into it (`xdotool type`, a word at a time,
#              6 characters a second on average);
#   scrolling  the terminal is unmapped, the document scrolls down 8 lines a second.
# Rows, at 30 fps, pointer drawn, 2500 kbit/s:
#   rtc-publish  --video x11::N --audio none --no-signal --preview 127.0.0.1:PORT (its default
#                content hint, detail; SDES preview: intra-refresh waves, Docs/cadence.md)
#   FFmpeg       x11grab + libx264, GStreamer ximagesrc + x264enc, x264 as in capture-bench.sh
#                (BENCH_SESSION_PRESET, 1 thread, tune=zerolatency, constrained baseline, VBV
#                2500k/1500k, key frame every 60, no scene cut); these three send RTP under SRTP
#                AES_CM_128_HMAC_SHA1_80 to loopback ports scripts/bench-sink.py drains and records
#   Chromium     headed on the same display, getDisplayMedia of the entire screen (picked by
#                --auto-select-desktop-capture-source), H.264 to a headless Chromium on this host
# Per row and phase: the sender's CPU (/proc, all its processes), the X server's, the bytes it
# sent, the pictures; for the still phase also its converged part (from 1 s after the page turn)
# and the text quality of its last picture (luma PSNR against the screen). Targets (reported,
# never enforced: timing never fails this script): still and converged <= 1 % of a core and
# <= 10 kbit/s; whole session CPU <= 0.5 x every peer's; bytes <= 0.7 x Chromium's at equal or
# better text PSNR.
#
# Environment:
#   BENCH_RUNS=1                   rounds (rows interleaved: A B C D A B C D ...)
#   BENCH_SESSION_SECONDS=20       seconds of each phase (the session is three of them)
#   BENCH_SESSION_WARMUP=5         seconds each sender sends before the clock starts
#   BENCH_SESSION_PRESET=veryfast  x264 preset of the rtc-publish, FFmpeg and GStreamer rows
#                                  (veryfast is rtc-publish's default)
#   BENCH_SESSION_ROWS="rtc-publish ffmpeg gstreamer chromium"   the rows, in this order
#   BENCH_SESSION_PORT=25304       first of the four loopback ports the sink drains
#   BENCH_SHARED_NOTE=TEXT         a sentence on what else ran on the machine (default: what the
#                                  script saw: other compilers running, the machine's busy share)
#   BENCH_DOC=Docs/benchmarks.md   where the tables go (between <!-- screen-session-bench:begin -->
#                                  and <!-- screen-session-bench:end -->, appended when absent)
# Everything else stays in out/screen-session-bench/ (per row: row.json, the two pictures
# compared, the sender's logs, rtc-publish's stats.jsonl, the sink's record wire.bin;
# commands.txt with the exact commands, keys masked).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${BENCH_RUNS:-1}
SECS=${BENCH_SESSION_SECONDS:-20}
WARMUP=${BENCH_SESSION_WARMUP:-5}
PRESET=${BENCH_SESSION_PRESET:-veryfast}
ROWS=${BENCH_SESSION_ROWS:-rtc-publish ffmpeg gstreamer chromium}
PORT=${BENCH_SESSION_PORT:-25304}
DOC=${BENCH_DOC:-Docs/benchmarks.md}
SIZE=1280x720
FPS=30
THREADS=1
OUT=out/screen-session-bench
BIN=.build/release
PYTHON=out/venv/bin/python
CHROMIUM=/usr/lib/chromium/chromium
COMMAND="BENCH_RUNS=$RUNS BENCH_SESSION_SECONDS=$SECS BENCH_SESSION_WARMUP=$WARMUP BENCH_SESSION_PRESET=$PRESET scripts/screen-session-bench.sh"

fail() { echo "screen-session-bench: $*" >&2; exit 1; }
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || fail "BENCH_RUNS='$RUNS' must be a positive whole number"
if ! [[ "$SECS" =~ ^[1-9][0-9]*$ ]] || (( SECS < 5 || SECS > 300 )); then
  fail "BENCH_SESSION_SECONDS='$SECS' must be a whole number within 5..300"
fi
if ! [[ "$WARMUP" =~ ^[0-9]+$ ]] || (( WARMUP > 60 )); then
  fail "BENCH_SESSION_WARMUP='$WARMUP' must be a whole number within 0..60"
fi
case "$PRESET" in
  ultrafast | superfast | veryfast | faster | fast | medium) ;;
  *) fail "BENCH_SESSION_PRESET='$PRESET' is not an x264 preset from ultrafast to medium" ;;
esac
if ! [[ "$PORT" =~ ^[0-9]+$ ]] || (( PORT < 1024 || PORT > 65530 )); then
  fail "BENCH_SESSION_PORT='$PORT' must be within 1024..65530"
fi
read -r -a ROW_LIST <<<"$ROWS"
[ "${#ROW_LIST[@]}" -gt 0 ] || fail "BENCH_SESSION_ROWS is empty"
for tool in "${ROW_LIST[@]}"; do
  case "$tool" in
    rtc-publish | ffmpeg | gstreamer | chromium) ;;
    *) fail "BENCH_SESSION_ROWS: '$tool' is not one of rtc-publish ffmpeg gstreamer chromium" ;;
  esac
done

bash scripts/setup.sh bench
for element in ximagesrc videoconvert x264enc rtph264pay srtpenc udpsink; do
  gst-inspect-1.0 --exists "$element" || fail "GStreamer element '$element' is missing (scripts/setup.sh bench installs it)"
done
ffmpeg -hide_banner -h demuxer=x11grab 2>/dev/null | grep -q 'x11grab' || fail "this ffmpeg has no x11grab input"
for program in Xvfb xterm xdotool less; do
  command -v "$program" >/dev/null || fail "$program is missing (scripts/setup.sh installs it)"
done
[ -x "$CHROMIUM" ] || fail "$CHROMIUM is missing (scripts/setup.sh installs chromium)"
[ -x "$PYTHON" ] || fail "$PYTHON is missing (scripts/setup.sh makes out/venv)"
fc-list 2>/dev/null | grep -q 'DejaVu Sans Mono' || fail "the font DejaVu Sans Mono is missing (scripts/setup.sh bench installs fonts-dejavu-core)"

PUBLISH=$(pwd)/$BIN/rtc-publish
CURSOR=()
if [[ " ${ROW_LIST[*]} " == *" rtc-publish "* ]]; then
  if [ ! -x "$PUBLISH" ]; then
    echo "screen-session-bench: building rtc-publish (release)"
    swift build -c release --static-swift-stdlib --product rtc-publish
  fi
  # Every row draws the pointer: rtc-publish's --cursor is on by default; named when it has one.
  "$PUBLISH" --help 2>/dev/null | grep -- '--cursor' >/dev/null && CURSOR=(--cursor on)
fi

rm -rf "$OUT"
mkdir -p "$OUT"
MANIFEST="$OUT/manifest.tsv"
: >"$MANIFEST"
: >"$OUT/commands.txt"
# The document: four licence texts from base-files, about 1700 lines.
DOCUMENT="$(pwd)/$OUT/document.txt"
cat /usr/share/common-licenses/GPL-3 /usr/share/common-licenses/GPL-2 /usr/share/common-licenses/Apache-2.0 \
  /usr/share/common-licenses/LGPL-2.1 >"$DOCUMENT"

# What this script started, stopped on every exit (SIGTERM, then SIGKILL after 3 s).
XVFB_PID="" ROW_PID=""
stop_pid() { # PID
  [ -n "$1" ] || return 0
  kill -TERM "$1" 2>/dev/null || return 0
  for _ in $(seq 30); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() {
  stop_pid "$ROW_PID" # the helper stops its sender, sink, browsers and X clients on SIGTERM
  stop_pid "$XVFB_PID"
}
trap cleanup EXIT
trap 'echo "screen-session-bench: interrupted" >&2; exit 130' INT
trap 'echo "screen-session-bench: terminated" >&2; exit 143' TERM

# A private Xvfb on a free display number from 200 (never the user's).
start_screen() { # DIR
  local dir=$1 number tries
  number=$((200 + RANDOM % 800))
  for tries in $(seq 20); do
    while [ -e "/tmp/.X$number-lock" ] || [ -e "/tmp/.X11-unix/X$number" ]; do number=$((number + 1)); done
    Xvfb ":$number" -screen 0 "${SIZE}x24" -nolisten tcp -noreset >"$dir/Xvfb.log" 2>&1 &
    XVFB_PID=$!
    for _ in $(seq 100); do
      [ -S "/tmp/.X11-unix/X$number" ] && kill -0 "$XVFB_PID" 2>/dev/null && break
      kill -0 "$XVFB_PID" 2>/dev/null || break
      sleep 0.05
    done
    if kill -0 "$XVFB_PID" 2>/dev/null && [ -S "/tmp/.X11-unix/X$number" ]; then
      break
    fi
    wait "$XVFB_PID" 2>/dev/null || true # display taken between the check and the start: next one
    XVFB_PID=""
    number=$((number + 1))
    [ "$tries" -lt 20 ] || fail "Xvfb did not start in 20 tries: $(tail -3 "$dir/Xvfb.log")"
  done
  SCREEN=":$number"
}

# Fresh SRTP master key + salt (30 bytes) for the peers: base64 for FFmpeg, hex for GStreamer.
# rtc-publish draws its own and writes it into its SDP file, where the helper reads it.
KEY_B64=$(head -c 30 /dev/urandom | base64 -w0)
KEY_HEX=$(printf '%s' "$KEY_B64" | base64 -d | od -An -tx1 | tr -d ' \n')
LONGEST=$((WARMUP + 3 * SECS + 60)) # every sender's own limit, should the helper not stop it

# Prints the sender's command for one row, one argument per line (the row's directory is the cwd).
command_for() { # TOOL
  case "$1" in
    rtc-publish)
      printf '%s\n' "$PUBLISH" --no-signal --room bench --uid bench --video "x11:$SCREEN" "${CURSOR[@]}" \
        --audio none --size "$SIZE" --fps "$FPS" --preview "127.0.0.1:$PORT" \
        --srtp-suite AES_CM_128_HMAC_SHA1_80 --mtu 1200 --preset "$PRESET" --threads "$THREADS" \
        --video-bitrate 2500 --keyint 60 --duration "$LONGEST" --stats-json stats.jsonl
      ;;
    ffmpeg)
      printf '%s\n' ffmpeg -nostdin -hide_banner -loglevel error \
        -f x11grab -framerate "$FPS" -video_size "$SIZE" -draw_mouse 1 -i "$SCREEN" -t "$LONGEST" \
        -map 0:v -pix_fmt yuv420p -fps_mode passthrough \
        -c:v libx264 -preset "$PRESET" -tune zerolatency -profile:v baseline \
        -g 60 -sc_threshold 0 -b:v 2500k -maxrate 2500k -bufsize 1500k -threads "$THREADS" \
        -f rtp -payload_type 96 -srtp_out_suite AES_CM_128_HMAC_SHA1_80 -srtp_out_params "$KEY_B64" \
        "srtp://127.0.0.1:$PORT?pkt_size=1200" -sdp_file peer.sdp
      ;;
    gstreamer)
      local srtp="key=$KEY_HEX rtp-cipher=aes-128-icm rtp-auth=hmac-sha1-80 rtcp-cipher=aes-128-icm rtcp-auth=hmac-sha1-80"
      # SIGINT from the helper: gst-launch -e turns it into EOS, the encoder drains, exit 0.
      # shellcheck disable=SC2086 # $srtp is a list of properties
      printf '%s\n' gst-launch-1.0 -q -e \
        ximagesrc display-name="$SCREEN" use-damage=false show-pointer=true '!' \
        "video/x-raw,framerate=$FPS/1" '!' videoconvert '!' video/x-raw,format=I420 '!' \
        x264enc tune=zerolatency speed-preset="$PRESET" bitrate=2500 key-int-max=60 threads="$THREADS" \
        option-string=scenecut=0 '!' video/x-h264,profile=constrained-baseline '!' \
        rtph264pay mtu=1200 config-interval=-1 pt=96 '!' srtpenc $srtp '!' \
        udpsink host=127.0.0.1 port="$PORT" sync=false async=false
      ;;
    chromium)
      # The helper drives it; this line is what it starts (plus the DevTools flags).
      printf '%s\n' "DISPLAY=$SCREEN" "$CHROMIUM" --no-sandbox \
        '--auto-select-desktop-capture-source="Entire screen"' "--window-position=$((${SIZE%x*} + 100)),0" \
        "# getDisplayMedia({video: {frameRate: 30}}), H.264 by setCodecPreferences, maxBitrate 2500000"
      ;;
  esac
}

# Runs one row once in its own directory: the helper plays the session and measures.
run_row() { # TOOL RUN
  local tool=$1 run=$2
  local dir="$OUT/$tool-r$run"
  mkdir -p "$dir"
  local cmd=() key=()
  mapfile -t cmd < <(command_for "$tool")
  if [ "$run" = 1 ]; then # keys masked, paths relative to the repository
    local shown="${cmd[*]}"
    shown=${shown//"$KEY_B64"/KEY40}
    shown=${shown//"$KEY_HEX"/HEX60}
    shown=${shown//"$PUBLISH"/$BIN/rtc-publish}
    printf '# %s (display %s), in %s\n%s\n' "$tool" "$SCREEN" "$dir" "$shown" >>"$OUT/commands.txt"
  fi
  case "$tool" in
    ffmpeg | gstreamer) key=(--srtp-key "$KEY_B64") ;;
  esac
  local helper=("$PYTHON" scripts/screen-session.py run --tool "$tool" --display "$SCREEN" --xvfb-pid "$XVFB_PID"
    --out "$dir" --document "$DOCUMENT" --phase-seconds "$SECS" --warmup "$WARMUP" --port "$PORT" --size "$SIZE"
    --chromium "$CHROMIUM" "${key[@]}")
  [ "$tool" = chromium ] || helper+=(-- "${cmd[@]}")
  local rc=0
  # In the background so that a signal to this script is handled at once.
  "${helper[@]}" >"$dir/helper.log" 2>&1 &
  ROW_PID=$!
  wait "$ROW_PID" || rc=$?
  ROW_PID=""
  printf '%s\t%s\t%s\t%s\n' "$tool" "$run" "$rc" "$dir" >>"$MANIFEST"
  printf 'screen-session-bench: round %s/%s %-11s exit %s  %s\n' "$run" "$RUNS" "$tool" "$rc" \
    "$(tail -1 "$dir/helper.log" | sed 's/^screen-session: [a-z-]*: //')"
  kill -0 "$XVFB_PID" 2>/dev/null || fail "Xvfb $SCREEN died during the $tool row: $(tail -3 "$OUT/Xvfb.log")"
}

# What else the machine did meanwhile: its CPU busy share over the rows (/proc/stat, all cores)
# and any compiler running at the start or the end (another engineer's build).
cpu_jiffies() { awk '/^cpu / { busy = $2 + $3 + $4 + $7 + $8 + $9; print busy, busy + $5 + $6 }' /proc/stat; }
compilers() { pgrep -c -x 'swift-frontend|swift-build|clang|clang\+\+|cc1|cc1plus|ld|ld.lld|swiftc' 2>/dev/null || true; }
START=$(date +%s)
read -r BUSY_BEFORE TOTAL_BEFORE < <(cpu_jiffies)
COMPILERS_BEFORE=$(compilers)
DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
start_screen "$OUT"
echo "screen-session-bench: Xvfb $SCREEN ($SIZE); $RUNS round(s) of ${ROW_LIST[*]}; phases of $SECS s after $WARMUP s"
for run in $(seq "$RUNS"); do
  for tool in "${ROW_LIST[@]}"; do
    run_row "$tool" "$run"
  done
done
stop_pid "$XVFB_PID"
XVFB_PID=""
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
read -r BUSY_AFTER TOTAL_AFTER < <(cpu_jiffies)
COMPILERS_AFTER=$(compilers)
BUSY=$(( (BUSY_AFTER - BUSY_BEFORE) * 100 / (TOTAL_AFTER - TOTAL_BEFORE > 0 ? TOTAL_AFTER - TOTAL_BEFORE : 1) ))
echo "screen-session-bench: all rows took $(($(date +%s) - START)) s"

VERSIONS="$(ffmpeg -version | head -1 | cut -d' ' -f1-3); $(gst-launch-1.0 --version | sed -n 2p); $(dpkg-query -W -f='${Package} ${Version}' 'libx264-1*' 2>/dev/null | head -1); $("$CHROMIUM" --version 2>/dev/null | head -1 | sed 's/ *$//'); Xvfb $(dpkg-query -W -f='${Version}' xvfb 2>/dev/null); xterm $(dpkg-query -W -f='${Version}' xterm 2>/dev/null)"
MACHINE="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -r)"
SEEN="The machine was $BUSY % busy over the rows (all cores, the bench's own work included)"
if [ "${COMPILERS_BEFORE:-0}" -gt 0 ] || [ "${COMPILERS_AFTER:-0}" -gt 0 ]; then
  SEEN="$SEEN, and compiler processes of another build ran beside it ($COMPILERS_BEFORE at the start, $COMPILERS_AFTER at the end)"
fi
SHARED="${BENCH_SHARED_NOTE:+$BENCH_SHARED_NOTE }$SEEN: the machine is shared, so compare rows within this run only."

"$PYTHON" scripts/screen-session.py report --manifest "$MANIFEST" --doc "$DOC" --command "$COMMAND" \
  --commands "$OUT/commands.txt" --date "$DATE" --machine "$MACHINE" --load "$LOAD_BEFORE -> $LOAD_AFTER" \
  --versions "$VERSIONS" --shared "$SHARED" --size "$SIZE" --preset "$PRESET" --threads "$THREADS" \
  --warmup "$WARMUP" --phase-seconds "$SECS"
