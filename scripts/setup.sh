#!/usr/bin/env bash
# Installs the Debian packages the build, the tests and the demo need, and only those missing,
# then the Python virtual environment of the aiortc test peer (out/venv), when it is missing, and
# Meetecho's simple-whip-server for the WHIP tests (out/janus/whip-prefix), when it is missing.
# `setup.sh bench` adds what `make bench` needs beyond that (the peers' remaining elements, GNU
# time). Safe to run twice: a second run finds everything present and installs nothing.
set -euo pipefail

PACKAGES=(
  pkg-config
  libc6-dev        # C and kernel headers: the Swift toolchain's Glibc module, and prctl for Sources/CLinux
  libx264-dev      # H.264 encoder (GPL-2.0-or-later)
  libvpx-dev       # VP8 and VP9 encoders for viewers without H.264 (the tests decode with it too)
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
  gstreamer1.0-nice          # libnice's GStreamer plugin, webrtcbin's ICE (the webrtcbin test peer)
  python3-gst-1.0            # GStreamer from the system Python (Tests/Peers/webrtcbin_subscriber.py)
  gir1.2-gst-plugins-bad-1.0 # GstWebRTC and GstSdp introspection: webrtcbin's offer, answer, stats
  gir1.2-nice-0.1            # NiceAgent introspection: the webrtcbin peer adds 127.0.0.1 to its agent
  python3-venv               # out/venv, the aiortc test peer's environment (below)
  coturn                     # turnserver, the TURN relay a test starts by hand (never as a service)
  iproute2                   # ip netns: the network namespaces the loss test makes for itself
  nftables                   # nft: random loss inside that namespace (this kernel has no netem)
  procps                     # sysctl: cc-bench moves a namespace's ephemeral ports off the shaped range
  chromium                   # headless Chromium: the real browser the viewer-page tests drive
  firefox-esr                # headless Firefox ESR: the second real browser on the viewer page
  janus                      # Janus 1.1.2, the VideoRoom the WHIP tests publish into (Tests/Peers/janus;
                             # the tests start it in a namespace, never as a service)
  janus-tools                # janus-pp-rec: Janus's recordings to files ffprobe reads
  libxcb1-dev                # XCB: the X11 screen capture (Sources/Capture), with its extensions:
  libxcb-shm0-dev            #   MIT-SHM, the grab into one shared segment
  libxcb-xfixes0-dev         #   XFIXES, the cursor's image and its regions
  libxcb-randr0-dev          #   RandR 1.5 monitors (--capture-monitor)
  libxcb-damage0-dev         #   DAMAGE, the hint of what changed
  xvfb                       # Xvfb: the private X server the capture tests and the demo start
  xdotool                    # moves the pointer and windows the capture tests check
  x11-xserver-utils          # xrandr --setmonitor: two monitors on one Xvfb screen
  x11-utils                  # xwininfo: window ids of the X clients the tests start
  xterm                      # the terminal with text on the demo's private X display
  libpulse-dev               # libpulse: system audio (the default output's monitor, the microphone)
  pulseaudio                 # the private sound server the audio capture tests start (never a user's)
  pulseaudio-utils           # pactl, paplay: null sinks and tones in those tests
  pipewire                   # PipeWire 0.3.65: the private PipeWire the PipeWire audio tests start
  pipewire-pulse             # its pulse server, the one those tests capture from (never a user's)
  wireplumber                # its session manager: links their streams to the null sinks
  dbus-daemon                # the private session bus WirePlumber needs (never a user's)
  shellcheck                 # make lint: every shell script (scripts/*.sh, .ci/run)
)
# nodejs: simple-whip-server (below) runs on `node`, and make lint checks the viewer page's
# script with `node --check`. Any Node.js does (this machine may have its own, e.g. Node.js 20
# from NodeSource, which Debian's nodejs would conflict with); only without one, Debian's.
command -v node >/dev/null 2>&1 || PACKAGES+=(nodejs)

if [ "${1:-}" = "bench" ]; then
  PACKAGES+=(
    time                       # /usr/bin/time: CPU, wall and peak RSS of each benchmark run
    libgstreamer1.0-0          # filesrc, clocksync (coreelements)
    gstreamer1.0-plugins-ugly  # x264enc, the GStreamer peer's encoder
    valgrind                   # callgrind: the functions scripts/link-order.sh lists
    fonts-dejavu-core          # DejaVu Sans Mono: the xterms' font in scripts/screen-session-bench.sh
    less                       # the pager its document is shown and scrolled in
  )
elif [ -n "${1:-}" ]; then
  echo "setup: unknown package group '$1' (only 'bench')" >&2; exit 2
fi

# Root for apt-get: ourselves, or sudo (checked only when something is to be installed).
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
need_root() {
  if [ -n "$SUDO" ] && ! command -v sudo >/dev/null 2>&1; then
    echo "setup: need root or sudo to $1" >&2; exit 1
  fi
}
apt_updated=0

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  debian="all ${#PACKAGES[@]} packages present"
else
  need_root "install: ${missing[*]}"
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # On a systemd machine, installing coturn starts turnserver on every address (port 3478) and
  # enables it at boot (its unit ignores TURNSERVER_ENABLED in /etc/default/coturn, which only
  # the SysV script reads); janus likewise starts its HTTP, WebSocket and RTP ports. Debian's
  # policy-rc.d hook (exit 101: "action forbidden") stops any package from starting a service
  # during this install, unless the machine has a policy already.
  policy=/usr/sbin/policy-rc.d
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# setup.sh: no service starts while it installs packages\nexit 101\n' \
      | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
    trap '$SUDO rm -f "$policy"' EXIT
  fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  apt_updated=1
  for service in coturn janus; do
    if [[ " ${missing[*]} " == *" $service "* ]]; then
      # ... and not at the next boot either: the tests start turnserver and janus themselves.
      if [ -d /run/systemd/system ]; then
        $SUDO systemctl disable --now "$service" >/dev/null 2>&1 || true
      else
        $SUDO update-rc.d "$service" disable >/dev/null 2>&1 || true
      fi
    fi
  done
  # A sound server this install brought starts at nobody's login either: Debian enables its user
  # units for every user (systemctl --global), and two sound servers on one desktop fight over
  # $XDG_RUNTIME_DIR/pulse/native. The tests start private ones themselves. One the machine had
  # before (its users' own) is left as it was.
  units=()
  [[ " ${missing[*]} " == *" pulseaudio "* ]] && units+=(pulseaudio.socket pulseaudio.service)
  [[ " ${missing[*]} " == *" pipewire "* ]] && units+=(pipewire.socket pipewire.service)
  [[ " ${missing[*]} " == *" pipewire-pulse "* ]] && units+=(pipewire-pulse.socket pipewire-pulse.service)
  [[ " ${missing[*]} " == *" wireplumber "* ]] && units+=(wireplumber.service)
  if [ ${#units[@]} -gt 0 ]; then
    $SUDO systemctl --global disable "${units[@]}" >/dev/null 2>&1 || true
  fi
  debian="installed ${#missing[@]} of ${#PACKAGES[@]} packages"
fi

# The aiortc test peer (Tests/Peers/aiortc_subscriber.py) runs in out/venv, made from the system
# Python with exact versions, so every machine runs the same peer. aioice is pinned too: the
# peer replaces its host-address list to gather on 127.0.0.1, which the listed version has.
# make lint's Python linter lives there too, pinned so that every machine finds the same things.
VENV_PACKAGES=(
  aiortc==1.16.0  # WebRTC: JSEP offer, ICE (aioice), DTLS-SRTP, H.264 and Opus decoding
  aioice==0.13.0  # aiortc's ICE agent
  av==18.1.0      # PyAV (FFmpeg's decoders, in its own wheel), aiortc's media
  websockets==15.0.1  # the DevTools / WebDriver BiDi connection of Tests/Peers/chromium_viewer.py, firefox_viewer.py
  ruff==0.17.6    # make lint: `ruff check` and `ruff format --check` of scripts/ and Tests/ (ruff.toml)
)
VENV="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/out/venv"
have=$("$VENV/bin/python" -m pip freeze 2>/dev/null || true)
venv_missing=()
for p in "${VENV_PACKAGES[@]}"; do
  grep -qixF "$p" <<<"$have" || venv_missing+=("$p")
done
if [ ${#venv_missing[@]} -eq 0 ]; then
  venv="out/venv has ${VENV_PACKAGES[*]}"
else
  echo "setup: installing ${venv_missing[*]} into out/venv"
  # The system Python (Debian's, with python3-venv), not whatever python3 comes first in PATH.
  [ -x "$VENV/bin/python" ] || /usr/bin/python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "${VENV_PACKAGES[@]}"
  venv="out/venv made with ${VENV_PACKAGES[*]}"
fi
# The WHIP server in front of Janus (Tests/Peers/janus/janus_room.py): Debian's
# simple-whip-server, unpacked (apt-get download + dpkg-deb -x) with the node-* and libjs-*
# packages it depends on into out/janus/whip-prefix, never installed: its `nodejs` dependency
# conflicts with a Node.js that is not Debian's (shared/field-notes.md, "WHIP here"). `node`
# runs it with NODE_PATH pointing into the prefix. .complete marks a finished unpacking.
WHIP_PREFIX="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/out/janus/whip-prefix"
if [ -f "$WHIP_PREFIX/usr/share/simple-whip-server/src/server.js" ] && [ -f "$WHIP_PREFIX/.complete" ]; then
  whip="simple-whip-server in out/janus/whip-prefix"
else
  echo "setup: unpacking simple-whip-server into out/janus/whip-prefix"
  if [ "$apt_updated" != 1 ]; then
    need_root "run apt-get update"
    $SUDO apt-get update -qq
  fi
  # It and, recursively, every JavaScript package it depends on; nodejs itself is whichever the
  # machine has (above).
  mapfile -t whip_packages < <(apt-cache depends --recurse --no-recommends --no-suggests \
      --no-conflicts --no-breaks --no-replaces --no-enhances --no-pre-depends simple-whip-server \
      2>/dev/null | grep -E '^(node-|libjs-|simple-whip-server$)' | sort -u)
  if [[ " ${whip_packages[*]} " != *" simple-whip-server "* ]]; then
    echo "setup: apt-cache knows no simple-whip-server (Debian 12 main has it)" >&2; exit 1
  fi
  debs="$(dirname "$WHIP_PREFIX")/debs"
  rm -rf "$debs" "$WHIP_PREFIX"
  mkdir -p "$debs" "$WHIP_PREFIX"
  # As root, apt-get download warns that it cannot drop privileges to _apt here: quiet first,
  # and only a failure shows its messages.
  (cd "$debs" && apt-get download -qq "${whip_packages[@]}" >/dev/null 2>&1) \
    || (cd "$debs" && apt-get download "${whip_packages[@]}" >/dev/null)
  for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$WHIP_PREFIX"; done
  rm -rf "$debs"
  if [ ! -f "$WHIP_PREFIX/usr/share/simple-whip-server/src/server.js" ]; then
    echo "setup: simple-whip-server's server.js missing after unpacking" >&2; exit 1
  fi
  touch "$WHIP_PREFIX/.complete"
  whip="simple-whip-server unpacked (${#whip_packages[@]} packages) into out/janus/whip-prefix"
fi
echo "setup: $debian; $venv; $whip"
