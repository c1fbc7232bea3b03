#!/usr/bin/env bash
# Installs what `make bench` needs beyond `make setup`, and only what is missing: the peers the
# benchmark compares against (FFmpeg, GStreamer with the elements named below), GNU time, and
# python3 for the UDP sink and the report. Safe to run twice: a second run installs nothing.
set -euo pipefail

PACKAGES=(
  time                          # /usr/bin/time: CPU, wall and peak RSS of each run
  python3                       # the UDP sink and the report
  ffmpeg                        # peer: libx264, libopus, RTP muxer with SRTP
  gstreamer1.0-tools            # gst-launch-1.0, gst-inspect-1.0
  libgstreamer1.0-0             # filesrc, clocksync (coreelements)
  gstreamer1.0-plugins-base     # rawvideoparse, rawaudioparse, opusenc
  gstreamer1.0-plugins-good     # rtph264pay, rtpopuspay, udpsink
  gstreamer1.0-plugins-bad      # srtpenc, audiobuffersplit
  gstreamer1.0-plugins-ugly     # x264enc
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-bench: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup-bench: need root or sudo to install: ${missing[*]}" >&2; exit 1
  fi
fi
echo "setup-bench: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup-bench: done"
