#!/usr/bin/env bash
# Installs the Debian packages the build, the tests and the demo need, and only those missing.
# `setup.sh bench` adds what `make bench` needs beyond that (the peers' remaining elements, GNU
# time). Safe to run twice: a second run finds everything present and installs nothing.
set -euo pipefail

PACKAGES=(
  pkg-config
  libx264-dev      # H.264 encoder (GPL-2.0-or-later)
  libopus-dev      # Opus encoder/decoder
  libsrtp2-dev     # SRTP / SRTCP
  libnice-dev      # libnice 0.1.21: the ICE agent (RFC 8445, RFC 7675 consent) under DTLS-SRTP
  libssl-dev       # OpenSSL 3: DTLS 1.2 with use_srtp and the key exporter for DTLS-SRTP (WebRTC)
  nettle-dev       # AES-CTR and HMAC-SHA1 for libsrtp2 (Debian builds it on NSS, five times slower)
  libyuv-dev       # pixel-format conversion and scaling
  libspeexdsp-dev  # audio resampling
  ffmpeg           # the real receiver the tests decode our output with
  python3-cryptography  # the independent RFC 3711 reference the SRTP tests cross-check libsrtp with
  python3          # runs that reference
  openssl          # the openssl CLI: the real DTLS peer of the DTLS tests (s_server, s_client)
  gstreamer1.0-tools         # gst-launch-1.0: the real RTCP feedback peer (NACK, PLI, RR)
  gstreamer1.0-plugins-base  # its basic elements
  gstreamer1.0-plugins-good  # rtpbin, rtph264depay, udpsrc/udpsink
  gstreamer1.0-plugins-bad   # srtpdec/srtpenc
  gstreamer1.0-libav         # avdec_h264
)

if [ "${1:-}" = "bench" ]; then
  PACKAGES+=(
    time                       # /usr/bin/time: CPU, wall and peak RSS of each benchmark run
    libgstreamer1.0-0          # filesrc, clocksync (coreelements)
    gstreamer1.0-plugins-ugly  # x264enc, the GStreamer peer's encoder
    valgrind                   # callgrind: the functions scripts/link-order.sh lists
  )
elif [ -n "${1:-}" ]; then
  echo "setup: unknown package group '$1' (only 'bench')" >&2; exit 2
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1
  fi
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
