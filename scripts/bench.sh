#!/usr/bin/env bash
# `make bench`: the same job done four ways, measured in one interleaved run.
#
# The job: 10 s of 1280x720 30 fps screen-like I420 (rtc-encode generate: the synthetic screen
# source, fresh into out/bench/) plus 10 s of 48 kHz stereo PCM -> H.264 (libx264) + Opus
# (libopus) -> RTP -> SRTP AES_CM_128_HMAC_SHA1_80 -> UDP on loopback, drained by a sink.
# Rows: rtc-publish, FFmpeg, GStreamer (each paced as a live source would be, and unpaced), and
# two floors, unpaced only: floor (our H264Encoder alone, no audio, RTP, SRTP or sockets) and
# floor-av (H264Encoder and our OpusEncoder on in.wav, 20 ms frames in capture-time order between
# the video frames, still no mixer, RTP, SRTP or sockets); and the second encoders' floors,
# floor-vp8 and floor-vp9 (libvpx through our VPXEncoder on the same frames at the same bitrate
# and key-frame period: what a viewer without H.264 adds). Same x264 settings
# everywhere: tune=zerolatency, constrained baseline, 2500 kbit/s, VBV 2500k/1500k, key frame
# every 60 (rtc-publish's --to receiver cannot ask for key frames, so it gets an intra-refresh
# wave every 60 pictures instead: Docs/cadence.md), no scene cut. Each run is measured with /usr/bin/time (user+sys CPU, wall, peak RSS).
# Rounds are interleaved (A B C D ... A B C D ...) so a noisy neighbour hits every row alike.
#
# Environment:
#   BENCH_RUNS=3          runs of each row (at least 1; 3 or more gives medians and ranges)
#   BENCH_MATRIX=full     x264 preset x threads: full = ultrafast and veryfast, each with 1 and
#                         2 threads (about 10 minutes with 3 runs); quick = ultrafast/1 and veryfast/1
#   BENCH_MICRO=0         1: also build and run the micro-benchmarks in Benchmarks/
#   BENCH_MACRO=1         0: skip the end-to-end rows (with BENCH_MICRO=1: micro only)
#   BENCH_PORT=25004      first of the four loopback ports (video RTP/RTCP, audio RTP/RTCP)
#   BENCH_INSTRUCTIONS=1  0: skip the instruction counts (callgrind: the unpaced ultrafast 1-thread job of
#                         each row once under valgrind, about 4 minutes; a count does not move with a
#                         busy neighbour, so it settles what the noisy CPU-time ratios cannot)
#   BENCH_ROOM=100        subscribers in the room row: rtc-publish (paced, ultrafast, 1 thread) to
#                         that many SRTP destinations at once, drained by `rtc-encode sink`; 0 skips it
#   BENCH_ROOM_PORT=26000 first port of the room's blocks of four
#   BENCH_OPUS_COMPLEXITY=10  Opus complexity of every row (0..10; 10 is libopus's default and
#                         the product's): a lower value shows what a cheaper Opus buys, same for all
#   BENCH_BROWSER=1       0: skip glass-to-glass in headless Chromium (rtc-signal's page, 20 s a run)
#   BENCH_BASELINE=REV    a git revision (anything `git rev-parse --verify` takes) to compare with,
#                         before and after in one run: its rtc-publish (a detached worktree in
#                         out/bench/baseline/SHORT-SHA, kept and reused, `swift build -c release
#                         --product rtc-publish` there) gets rows "rtc-publish @SHA, paced/unpaced"
#                         in every round, right after this tree's, same job and arguments; ratios
#                         "vs @SHA" (medians and round by round) and, with BENCH_INSTRUCTIONS=1, its
#                         instruction count; with BENCH_MICRO=1 its own Benchmarks/ runs too, and a
#                         table shows each micro-benchmark before and after. Unset: none of this
#   BENCH_DOC=Docs/benchmarks.md  where the tables go (a marked section is rewritten)
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${BENCH_RUNS:-3}
MATRIX=${BENCH_MATRIX:-full}
MICRO=${BENCH_MICRO:-0}
MACRO=${BENCH_MACRO:-1}
INSTRUCTIONS=${BENCH_INSTRUCTIONS:-1}
PORT=${BENCH_PORT:-25004}
ROOM=${BENCH_ROOM:-100}
ROOM_PORT=${BENCH_ROOM_PORT:-26000}
DOC=${BENCH_DOC:-Docs/benchmarks.md}
OPUS_COMPLEXITY=${BENCH_OPUS_COMPLEXITY:-10}
BASELINE=${BENCH_BASELINE:-}
OUT=out/bench
BIN=.build/release
COMMAND="BENCH_RUNS=$RUNS BENCH_MATRIX=$MATRIX BENCH_MICRO=$MICRO BENCH_MACRO=$MACRO BENCH_INSTRUCTIONS=$INSTRUCTIONS BENCH_ROOM=$ROOM BENCH_OPUS_COMPLEXITY=$OPUS_COMPLEXITY scripts/bench.sh"
MICRO_COMMAND="BENCH_MICRO=1 BENCH_MACRO=$MACRO scripts/bench.sh"

fail() { echo "bench: $*" >&2; exit 1; }
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || fail "BENCH_RUNS='$RUNS' must be a positive whole number"
{ [[ "$PORT" =~ ^[0-9]+$ ]] && (( PORT >= 1024 && PORT <= 65530 )); } || fail "BENCH_PORT='$PORT' must be within 1024..65530"
case "$MATRIX" in
  full) CONFIGS=("ultrafast 1" "ultrafast 2" "veryfast 1" "veryfast 2") ;;
  quick) CONFIGS=("ultrafast 1" "veryfast 1") ;;
  *) fail "BENCH_MATRIX='$MATRIX' is neither 'full' nor 'quick'" ;;
esac
[[ "$OPUS_COMPLEXITY" =~ ^([0-9]|10)$ ]] || fail "BENCH_OPUS_COMPLEXITY='$OPUS_COMPLEXITY' must be a whole number within 0..10"
[[ "$INSTRUCTIONS" =~ ^[01]$ ]] || fail "BENCH_INSTRUCTIONS='$INSTRUCTIONS' must be 0 or 1"
{ [[ "$ROOM" =~ ^[0-9]+$ ]] && (( ROOM <= 1000 )); } || fail "BENCH_ROOM='$ROOM' must be a whole number within 0..1000"
{ [[ "$ROOM_PORT" =~ ^[0-9]+$ ]] && (( ROOM_PORT >= 1024 && ROOM_PORT % 2 == 0 && ROOM_PORT + 4 * ROOM <= 65536 )); } ||
  fail "BENCH_ROOM_PORT='$ROOM_PORT' must be even, from 1024, with room for $ROOM blocks of four ports"
# The baseline revision: its full and short commit, the worktree it is built in, and its rows' tool.
BASE_SHA='' BASE_SHORT='' BASE_DIR='' BASE_TOOL='' BASE_PUBLISH='' BASE_UNPACED_FLAG=0
if [ -n "$BASELINE" ]; then
  { [[ "$BASELINE" != -* ]] && BASE_SHA=$(git rev-parse --verify --quiet "$BASELINE^{commit}"); } ||
    fail "BENCH_BASELINE='$BASELINE' is not a commit of this repository (git rev-parse --verify '$BASELINE^{commit}' fails)"
  BASE_SHORT=$(git rev-parse --short "$BASE_SHA")
  BASE_DIR=$OUT/baseline/$BASE_SHORT
  BASE_TOOL=rtc-publish@$BASE_SHORT
  COMMAND="BENCH_BASELINE=$BASE_SHORT $COMMAND"
  MICRO_COMMAND="BENCH_BASELINE=$BASE_SHORT $MICRO_COMMAND"
fi

bash scripts/setup.sh bench
for element in filesrc rawvideoparse rawaudioparse audiobuffersplit clocksync x264enc rtph264pay \
  srtpenc udpsink opusenc rtpopuspay; do
  gst-inspect-1.0 --exists "$element" || fail "GStreamer element '$element' is missing (scripts/setup.sh bench installs it)"
done

# A detached worktree of the baseline in out/bench/baseline/SHORT (git-ignored, and spared when
# out/bench is emptied below): made once, then reused while it is still at that commit, unchanged.
# Its builds resolve the dependencies as this tree's did: base_pin copies this tree's (ignored)
# Package.resolved there first, when it has none, so that only the project's own code differs.
base_pin() { # FILE: Package.resolved or Benchmarks/Package.resolved
  if [ -f "$1" ] && [ ! -e "$BASE_DIR/$1" ]; then cp "$1" "$BASE_DIR/$1"; fi
}
if [ -n "$BASELINE" ]; then
  if [ -e "$BASE_DIR" ]; then
    { [ "$(git -C "$BASE_DIR" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$BASE_DIR" && pwd -P)" ] &&
      [ "$(git -C "$BASE_DIR" rev-parse HEAD)" = "$BASE_SHA" ] &&
      [ -z "$(git -C "$BASE_DIR" status --porcelain --untracked-files=no)" ]; } ||
      fail "$BASE_DIR is not an unchanged worktree at $BASE_SHORT: remove it (git worktree remove --force $BASE_DIR)"
    echo "bench: baseline $BASE_SHORT: reusing the worktree $BASE_DIR"
  else
    echo "bench: baseline $BASE_SHORT: making a detached worktree in $BASE_DIR"
    mkdir -p "$OUT/baseline"
    git worktree prune # a worktree once there and deleted since (make clean) is still registered
    git worktree add --quiet --detach "$BASE_DIR" "$BASE_SHA"
  fi
fi

if [ "$MACRO" = 1 ]; then
  if [ ! -x "$BIN/rtc-publish" ] || [ ! -x "$BIN/rtc-encode" ]; then
    echo "bench: building release binaries"
    swift build -c release
  fi
  "$BIN/rtc-encode" generate --help >/dev/null 2>&1 || fail "$BIN/rtc-encode has no 'generate' subcommand: rebuild (swift build -c release)"
  [[ "$("$BIN/rtc-encode" floor --help 2>&1)" == *"--audio "* ]] ||
    fail "$BIN/rtc-encode floor has no --audio (the floor-av row): rebuild (swift build -c release)"

  # The baseline's release rtc-publish, linked as this tree's was (`make release` links the Swift
  # runtime statically), built once and reused while the flags are the same.
  if [ -n "$BASELINE" ]; then
    base_flags=(-c release --product rtc-publish)
    [[ "$(ldd "$BIN/rtc-publish")" == *libswiftCore* ]] || base_flags+=(--static-swift-stdlib)
    BASE_PUBLISH=$(cd "$BASE_DIR" && pwd)/.build/release/rtc-publish
    if [ -x "$BASE_PUBLISH" ] && [ "$(cat "$BASE_DIR/.build/bench-flags" 2>/dev/null)" = "${base_flags[*]}" ]; then
      echo "bench: baseline $BASE_SHORT: reusing its release rtc-publish ($BASE_DIR/.build/release)"
    else
      echo "bench: baseline $BASE_SHORT: building its release rtc-publish (swift build ${base_flags[*]}, in $BASE_DIR)"
      base_pin Package.resolved
      (cd "$BASE_DIR" && swift build "${base_flags[@]}") || fail "the baseline's build failed (in $BASE_DIR)"
      echo "${base_flags[*]}" >"$BASE_DIR/.build/bench-flags"
    fi
  fi

  # out/bench afresh, but for the baseline worktrees.
  if [ -d "$OUT" ]; then find "$OUT" -mindepth 1 -maxdepth 1 ! -name baseline -exec rm -rf {} +; fi
  mkdir -p "$OUT/runs"
  "$BIN/rtc-encode" generate --seconds 10 --size 1280x720 --fps 30 --out "$OUT"
  IN=$(cd "$OUT" && pwd)
  PUBLISH=$(cd "$BIN" && pwd)/rtc-publish
  ENCODE=$(cd "$BIN" && pwd)/rtc-encode
  SINK=$(pwd)/scripts/bench-sink.py

  # Sinks run in the background, started as `... & SINK_PID=$!`, print a line of their own once
  # bound into DIR/sink.log ("ready", or "rtc-encode sink: ready on ..."), and are stopped with
  # SIGTERM once the datagrams in flight have landed. The match is anchored: "Address already in
  # use" also contains "ready".
  SINK_READY='^(ready|rtc-encode sink: ready on .*)$'
  await_sink() { # DIR WHAT
    for _ in $(seq 50); do grep -qE "$SINK_READY" "$1/sink.log" 2>/dev/null && break; sleep 0.1; done
    grep -qE "$SINK_READY" "$1/sink.log" || { kill "$SINK_PID" 2>/dev/null; fail "$2 did not start: $(cat "$1/sink.log")"; }
  }
  start_udp_sink() { # DIR: bench-sink.py on the four ports of the end-to-end rows
    python3 "$SINK" --ports "$SINK_PORTS" --out "$1/sink.json" >"$1/sink.log" 2>&1 &
    SINK_PID=$!
    await_sink "$1" "UDP sink"
  }
  stop_sink() { # SECONDS to let the last datagrams land
    sleep "$1"
    kill -TERM "$SINK_PID" 2>/dev/null || true
    wait "$SINK_PID" || true
  }
  UNPACED_FLAG=0
  "$PUBLISH" --help 2>/dev/null | grep -- '--unpaced' >/dev/null && UNPACED_FLAG=1
  [ "$UNPACED_FLAG" = 1 ] || echo "bench: this rtc-publish has no --unpaced flag: its unpaced rows are n/a"

  # Fresh SRTP master key + salt (30 bytes) for the peers: base64 for FFmpeg, hex for GStreamer.
  # rtc-publish draws its own from the system CSPRNG.
  KEY_B64=$(head -c 30 /dev/urandom | base64 -w0)
  KEY_HEX=$(printf '%s' "$KEY_B64" | base64 -d | od -An -tx1 | tr -d ' \n')
  VPORT=$PORT
  APORT=$((PORT + 2))
  SINK_PORTS="$VPORT,$((VPORT + 1)),$APORT,$((APORT + 1))"

  MANIFEST="$OUT/manifest.tsv"
  : >"$MANIFEST"
  : >"$OUT/commands.txt"

  # Prints the command for one row, one argument per line (the run directory is the cwd).
  command_for() {
    local tool=$1 mode=$2 preset=$3 threads=$4
    case "$tool" in
      rtc-publish | rtc-publish@*)
        local program=$PUBLISH
        [ "$tool" = rtc-publish ] || program=$BASE_PUBLISH
        printf '%s\n' "$program" --no-signal --no-preview --room bench --uid bench \
          --video "$IN/in.y4m" --audio "$IN/in.wav" --to "127.0.0.1:$VPORT" \
          --srtp-suite AES_CM_128_HMAC_SHA1_80 --mtu 1200 --preset "$preset" --threads "$threads" \
          --video-bitrate 2500 --audio-bitrate 96000 --audio-complexity "$OPUS_COMPLEXITY" --keyint 60 \
          --duration 10 --stats-json stats.jsonl
        [ "$mode" = unpaced ] && printf '%s\n' --unpaced
        ;;
      ffmpeg)
        local re=()
        [ "$mode" = paced ] && re=(-re)
        printf '%s\n' ffmpeg -nostdin -hide_banner -loglevel error \
          "${re[@]}" -f rawvideo -pix_fmt yuv420p -s 1280x720 -framerate 30 -i "$IN/in.yuv" \
          "${re[@]}" -f s16le -ar 48000 -ac 2 -i "$IN/in.pcm" \
          -map 0:v -c:v libx264 -preset "$preset" -tune zerolatency -profile:v baseline \
          -g 60 -sc_threshold 0 -b:v 2500k -maxrate 2500k -bufsize 1500k -threads "$threads" \
          -f rtp -payload_type 96 -srtp_out_suite AES_CM_128_HMAC_SHA1_80 -srtp_out_params "$KEY_B64" \
          "srtp://127.0.0.1:$VPORT?pkt_size=1200" \
          -map 1:a -c:a libopus -b:a 96000 -frame_duration 20 -application audio \
          -compression_level "$OPUS_COMPLEXITY" \
          -f rtp -payload_type 97 -srtp_out_suite AES_CM_128_HMAC_SHA1_80 -srtp_out_params "$KEY_B64" \
          "srtp://127.0.0.1:$APORT?pkt_size=1200" -sdp_file peer.sdp
        ;;
      gstreamer)
        local sync=() srtp
        [ "$mode" = paced ] && sync=(clocksync '!')
        srtp="key=$KEY_HEX rtp-cipher=aes-128-icm rtp-auth=hmac-sha1-80 rtcp-cipher=aes-128-icm rtcp-auth=hmac-sha1-80"
        # With 2 threads x264 cuts each frame into 2 slices, and config-interval=-1 would put
        # SPS/PPS before each IDR slice (ffmpeg then decodes half pictures): take x264's own
        # in-band parameter sets, once per access unit, instead.
        local h264caps="video/x-h264,profile=constrained-baseline" interval=-1
        if [ "$threads" != 1 ]; then
          h264caps="video/x-h264,profile=constrained-baseline,stream-format=byte-stream"
          interval=0
        fi
        # shellcheck disable=SC2086 # $srtp is a list of properties
        printf '%s\n' gst-launch-1.0 -q -e \
          filesrc location="$IN/in.yuv" blocksize=1382400 '!' \
          rawvideoparse width=1280 height=720 format=i420 framerate=30/1 '!' "${sync[@]}" \
          x264enc tune=zerolatency speed-preset="$preset" bitrate=2500 key-int-max=60 threads="$threads" \
          option-string=scenecut=0 '!' "$h264caps" '!' \
          rtph264pay mtu=1200 config-interval=$interval pt=96 '!' srtpenc $srtp '!' \
          udpsink host=127.0.0.1 port="$VPORT" sync=false async=false \
          filesrc location="$IN/in.pcm" blocksize=3840 '!' \
          rawaudioparse use-sink-caps=false format=pcm pcm-format=s16le sample-rate=48000 num-channels=2 '!' \
          audiobuffersplit output-buffer-duration=1/50 '!' "${sync[@]}" \
          opusenc bitrate=96000 frame-size=20 complexity="$OPUS_COMPLEXITY" '!' rtpopuspay pt=97 '!' srtpenc $srtp '!' \
          udpsink host=127.0.0.1 port="$APORT" sync=false async=false
        ;;
      floor)
        printf '%s\n' "$ENCODE" floor --video "$IN/in.y4m" --preset "$preset" --threads "$threads" \
          --video-bitrate 2500 --keyint 60
        ;;
      floor-vp8 | floor-vp9)
        printf '%s\n' "$ENCODE" floor --video "$IN/in.y4m" --codec "${tool#floor-}" --threads "$threads" \
          --video-bitrate 2500 --keyint 60
        ;;
      floor-av)
        printf '%s\n' "$ENCODE" floor --video "$IN/in.y4m" --preset "$preset" --threads "$threads" \
          --video-bitrate 2500 --keyint 60 --audio "$IN/in.wav" --audio-bitrate 96000 \
          --audio-complexity "$OPUS_COMPLEXITY"
        ;;
    esac
  }

  # The baseline's rtc-publish must take every option of the job (same job, same arguments).
  if [ -n "$BASELINE" ]; then
    base_help=$("$BASE_PUBLISH" --help 2>&1) || true
    mapfile -t base_args < <(command_for "$BASE_TOOL" paced ultrafast 1)
    base_missing=()
    for arg in "${base_args[@]}"; do
      if [[ "$arg" == --* ]] && ! [[ "$base_help" =~ (^|[^a-z-])"$arg"([^a-z-]|$) ]]; then base_missing+=("$arg"); fi
    done
    [ "${#base_missing[@]}" = 0 ] ||
      fail "the baseline's rtc-publish ($BASE_SHORT) has no ${base_missing[*]}: it cannot do the same job"
    [[ "$base_help" =~ (^|[^a-z-])--unpaced([^a-z-]|$) ]] && BASE_UNPACED_FLAG=1
    [ "$BASE_UNPACED_FLAG" = 1 ] || echo "bench: the baseline's rtc-publish has no --unpaced flag: its unpaced rows are n/a"
  fi

  # Runs one row once in its own directory under /usr/bin/time, with a sink for network rows.
  TOOL_WIDTH=$(( ${#BASE_TOOL} > 11 ? ${#BASE_TOOL} : 11 )) # the progress lines' first column
  run_row() {
    local tool=$1 mode=$2 preset=$3 threads=$4 run=$5
    local dir="$OUT/runs/$tool-$mode-$preset-t$threads-r$run"
    mkdir -p "$dir"
    local unpaced=$UNPACED_FLAG
    [ "$tool" = "$BASE_TOOL" ] && unpaced=$BASE_UNPACED_FLAG
    if [[ "$tool" == rtc-publish* ]] && [ "$mode" = unpaced ] && [ "$unpaced" = 0 ]; then
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$mode" "$preset" "$threads" "$run" "missing" "$dir" >>"$MANIFEST"
      return
    fi
    local cmd=()
    mapfile -t cmd < <(command_for "$tool" "$mode" "$preset" "$threads")
    if [ "$run" = 1 ]; then # keys masked, paths relative to the repository
      local shown="${cmd[*]}"
      shown=${shown//"$KEY_B64"/KEY40}
      shown=${shown//"$KEY_HEX"/HEX60}
      [ -z "$BASE_PUBLISH" ] || shown=${shown//"$BASE_PUBLISH"/$BASE_DIR/.build/release/rtc-publish}
      shown=${shown//"$IN/"/$OUT/}
      shown=${shown//"$PUBLISH"/$BIN/rtc-publish}
      shown=${shown//"$ENCODE"/$BIN/rtc-encode}
      printf '# %s %s, %s, %s thread(s), in %s\n%s\n' "$tool" "$mode" "$preset" "$threads" "$dir" "$shown" >>"$OUT/commands.txt"
    fi
    case "$tool" in floor*) ;; *) start_udp_sink "$dir" ;; esac
    local rc=0
    (cd "$dir" && timeout 120 /usr/bin/time -o time.txt -f '%e %U %S %M' "${cmd[@]}" >stdout.txt 2>stderr.txt) || rc=$?
    case "$tool" in floor*) ;; *) stop_sink 0.2 ;; esac
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$mode" "$preset" "$threads" "$run" "$rc" "$dir" >>"$MANIFEST"
    local summary
    summary=$(tail -1 "$dir/time.txt" 2>/dev/null)
    printf 'bench: run %s/%s  %-*s %-7s %-9s t%s  exit %s  wall/user/sys/maxrssKB: %s\n' \
      "$run" "$RUNS" "$TOOL_WIDTH" "$tool" "$mode" "$preset" "$threads" "$rc" "$summary"
  }

  START=$(date +%s)
  LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
  for run in $(seq "$RUNS"); do
    for config in "${CONFIGS[@]}"; do
      read -r preset threads <<<"$config"
      for row in "rtc-publish paced" ${BASE_TOOL:+"$BASE_TOOL paced"} "ffmpeg paced" "gstreamer paced" \
        "rtc-publish unpaced" ${BASE_TOOL:+"$BASE_TOOL unpaced"} "ffmpeg unpaced" "gstreamer unpaced" \
        "floor unpaced" "floor-av unpaced" "floor-vp8 unpaced" "floor-vp9 unpaced"; do
        read -r tool mode <<<"$row"
        run_row "$tool" "$mode" "$preset" "$threads" "$run"
      done
    done
  done
  LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
  echo "bench: end-to-end rows took $(( $(date +%s) - START )) s"

  python3 scripts/bench-report.py macro --manifest "$MANIFEST" --doc "$DOC" --command "$COMMAND" \
    --commands "$OUT/commands.txt" --load "$LOAD_BEFORE -> $LOAD_AFTER" --matrix "$MATRIX"

  # The room: one publisher, ROOM subscribers, each with its own SRTP keys (so each packet is
  # protected and sent ROOM times), paced at 30 fps as a live screen share is.
  if [ "$ROOM" -gt 0 ]; then
    for run in $(seq "$RUNS"); do
      dir="$OUT/room/r$run"
      mkdir -p "$dir"
      for i in $(seq 0 $((ROOM - 1))); do echo "127.0.0.1:$((ROOM_PORT + 4 * i))"; done >"$dir/to.txt"
      "$ENCODE" sink --base-port "$ROOM_PORT" --blocks "$ROOM" --seconds 60 >"$dir/sink.json" 2>"$dir/sink.log" &
      SINK_PID=$!
      await_sink "$dir" "room sink"
      room_cmd=("$PUBLISH" --no-signal --no-preview --room bench --uid bench --video "$IN/in.y4m" --audio "$IN/in.wav"
        --to-file to.txt --srtp-suite AES_CM_128_HMAC_SHA1_80 --mtu 1200 --preset ultrafast --threads 1
        --video-bitrate 2500 --audio-bitrate 96000 --audio-complexity "$OPUS_COMPLEXITY" --keyint 60 --duration 10
        --stats-json stats.jsonl)
      rc=0
      (cd "$dir" && timeout 120 /usr/bin/time -o time.txt -f '%e %U %S %M' "${room_cmd[@]}" >stdout.txt 2>stderr.txt) || rc=$?
      stop_sink 0.3
      echo "$rc" >"$dir/rc"
      printf 'bench: room run %s/%s  %s subscribers  exit %s  wall/user/sys/maxrssKB: %s\n' \
        "$run" "$RUNS" "$ROOM" "$rc" "$(tail -1 "$dir/time.txt" 2>/dev/null)"
    done
    room_shown="${room_cmd[*]}"
    room_shown=${room_shown//"$IN/"/$OUT/}
    room_shown=${room_shown//"$PUBLISH"/$BIN/rtc-publish}
    python3 scripts/bench-report.py room --dir "$OUT/room" --subscribers "$ROOM" --doc "$DOC" \
      --command "$COMMAND" --publish "$room_shown" \
      --sink "$BIN/rtc-encode sink --base-port $ROOM_PORT --blocks $ROOM"
  fi

  # Glass-to-glass: rtc-publish's synthetic screen through rtc-signal to headless Chromium on the
  # room's page, which reads each picture's timecode (capture time) at its display time.
  if [ "${BENCH_BROWSER:-1}" = 1 ]; then
    rm -rf "$OUT/browser"
    for run in $(seq "$RUNS"); do
      dir="$OUT/browser/r$run"
      mkdir -p "$dir"
      bport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
      "$BIN/rtc-signal" --port "$bport" >"$dir/rtc-signal.log" 2>&1 &
      signal_pid=$!
      for _ in $(seq 50); do grep -q listening "$dir/rtc-signal.log" && break; sleep 0.1; done
      (cd "$dir" && exec "$PUBLISH" --room bench --uid alice_sub --signal "127.0.0.1:$bport" --no-preview \
        --ice-address 127.0.0.1 --size 1280x720 --preset ultrafast --threads 1 --duration 45 \
        --stats-json stats.jsonl) >"$dir/rtc-publish.log" 2>&1 &
      publish_pid=$!
      for _ in $(seq 100); do grep -q "signaling in room" "$dir/rtc-publish.log" && break; sleep 0.1; done
      rc=0
      out/venv/bin/python Tests/Peers/chromium_viewer.py --url "http://127.0.0.1:$bport/rooms/bench" \
        --seconds 20 --out "$dir/chromium" >"$dir/chromium.log" 2>&1 || rc=$?
      kill -INT "$publish_pid" "$signal_pid" 2>/dev/null || true
      wait "$publish_pid" "$signal_pid" 2>/dev/null || true
      echo "bench: browser run $run/$RUNS exit $rc: $(tail -1 "$dir/chromium.log")"
    done
    python3 scripts/bench-report.py browser --dir "$OUT/browser" --doc "$DOC" --command "$COMMAND"
  fi

  # Instructions: each row's unpaced ultrafast 1-thread job once under callgrind, which counts
  # executed instructions per library. rtc-publish and the floor run from copies without debug
  # info (this valgrind cannot read the Swift toolchain's DWARF).
  if [ "$INSTRUCTIONS" = 1 ]; then
    command -v valgrind >/dev/null || fail "valgrind is missing (scripts/setup.sh bench installs it)"
    rm -rf "$OUT/instructions"
    mkdir -p "$OUT/instructions/bin"
    cp "$PUBLISH" "$ENCODE" "$OUT/instructions/bin/"
    strip --strip-debug "$OUT/instructions/bin/rtc-publish" "$OUT/instructions/bin/rtc-encode"
    FULL_PUBLISH=$PUBLISH FULL_ENCODE=$ENCODE FULL_BASE_PUBLISH=$BASE_PUBLISH
    PUBLISH=$(cd "$OUT/instructions/bin" && pwd)/rtc-publish
    ENCODE=$(cd "$OUT/instructions/bin" && pwd)/rtc-encode
    if [ -n "$BASELINE" ]; then # the baseline's rtc-publish, stripped alike
      mkdir -p "$OUT/instructions/bin-$BASE_SHORT"
      cp "$BASE_PUBLISH" "$OUT/instructions/bin-$BASE_SHORT/"
      strip --strip-debug "$OUT/instructions/bin-$BASE_SHORT/rtc-publish"
      BASE_PUBLISH=$(cd "$OUT/instructions/bin-$BASE_SHORT" && pwd)/rtc-publish
    fi
    for tool in rtc-publish $BASE_TOOL ffmpeg gstreamer floor; do
      dir="$OUT/instructions/$tool"
      mkdir -p "$dir"
      mapfile -t cmd < <(command_for "$tool" unpaced ultrafast 1)
      if [ "$tool" != floor ]; then start_udp_sink "$dir"; fi
      rc=0
      (cd "$dir" && timeout 900 valgrind --tool=callgrind --callgrind-out-file=callgrind.out \
        "${cmd[@]}" >stdout.txt 2>stderr.txt) || rc=$?
      if [ "$tool" != floor ]; then stop_sink 0.2; fi
      echo "$rc" >"$dir/rc"
      echo "bench: instructions of $tool (callgrind) exit $rc"
    done
    PUBLISH=$FULL_PUBLISH ENCODE=$FULL_ENCODE BASE_PUBLISH=$FULL_BASE_PUBLISH
    python3 scripts/bench-report.py instructions --dir "$OUT/instructions" --doc "$DOC" --command "$COMMAND"
  fi
fi

if [ "$MICRO" = 1 ]; then
  rm -rf "$OUT/micro"
  mkdir -p "$OUT/micro"
  echo "bench: building and running the micro-benchmarks (Benchmarks/, release)"
  (cd Benchmarks && swift package --allow-writing-to-directory "../$OUT/micro" benchmark run \
    --format histogramPercentiles --path "../$OUT/micro" --no-progress) | tee "$OUT/micro.log"
  # The baseline's own Benchmarks/ (its Package.swift takes the package above it, `..`: the
  # baseline's sources), results beside this tree's; a failure leaves its column empty.
  micro_baseline=()
  if [ -n "$BASELINE" ]; then
    rm -rf "$OUT/micro-$BASE_SHORT"
    mkdir -p "$OUT/micro-$BASE_SHORT"
    base_results=$(cd "$OUT/micro-$BASE_SHORT" && pwd)
    echo "bench: building and running the baseline's micro-benchmarks ($BASE_DIR/Benchmarks/, release)"
    base_pin Benchmarks/Package.resolved
    if ! (cd "$BASE_DIR/Benchmarks" && swift package --allow-writing-to-directory "$base_results" benchmark run \
      --format histogramPercentiles --path "$base_results" --no-progress) | tee "$OUT/micro-$BASE_SHORT.log"; then
      echo "bench: the baseline's micro-benchmarks failed (see $OUT/micro-$BASE_SHORT.log): no before column" >&2
    fi
    micro_baseline=(--baseline "$BASE_SHORT" --baseline-dir "$OUT/micro-$BASE_SHORT")
  fi
  python3 scripts/bench-report.py micro --results-dir "$OUT/micro" "${micro_baseline[@]}" --doc "$DOC" \
    --command "$MICRO_COMMAND"
fi
