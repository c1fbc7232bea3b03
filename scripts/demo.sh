#!/usr/bin/env bash
# make demo: encode the built-in synthetic screen (video + audio) with our encoders, decode the
# result with a stock ffmpeg, and show what came back: frame count, frame rate, timecodes,
# audio duration, and one decoded picture saved as a PNG.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out/demo}
SECONDS_TO_ENCODE=${DEMO_SECONDS:-5}
mkdir -p "$OUT"
BIN=.build/release

echo "== Encoding ${SECONDS_TO_ENCODE}s of the synthetic screen source (1280x720 @ 30 fps, 48 kHz stereo)"
"$BIN/rtc-encode" --seconds "$SECONDS_TO_ENCODE" --out "$OUT"

echo
echo "== What a stock decoder (ffmpeg $(ffmpeg -version | head -1 | awk '{print $3}')) gets back"
frames=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames \
  -of csv=p=0 "$OUT/video.h264")
profile=$(ffprobe -v error -select_streams v:0 -show_entries stream=profile,width,height \
  -of csv=p=0 "$OUT/video.h264")
echo "video: $frames frames decoded, $profile"
audio=$(ffprobe -v error -show_entries stream=codec_name,sample_rate,channels:format=duration \
  -of default=nw=1 "$OUT/audio.opus" | tr '\n' ' ')
echo "audio: $audio"
# Frame 45 is 1.5 s in: text, the scrolling panel, the moving window and the cursor are all visible.
ffmpeg -v error -y -i "$OUT/video.h264" -vf "select=eq(n\,45)" -frames:v 1 "$OUT/frame45.png"
echo "picture: $OUT/frame45.png (decoded frame 45)"
# The timecode strip in each decoded picture tells which frame it is and when it was captured.
ffmpeg -v error -i "$OUT/video.h264" -f rawvideo -pix_fmt gray - | "$BIN/rtc-encode" read-timecodes --size 1280x720
echo
echo "Play it yourself (needs a display): ffplay $OUT/video.h264   ·   ffplay $OUT/audio.opus"
