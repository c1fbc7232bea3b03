#!/usr/bin/env bash
# Installs what the Janus/WHIP harness (Tests/Peers/janus/janus_room.py) needs, only when missing:
#  - Debian `janus` and `janus-tools` (1.1.2) through apt-get, never left running as a service;
#  - Meetecho's simple-whip-server with its node-* dependencies, unpacked (apt-get download +
#    dpkg-deb -x) into out/janus/whip-prefix: `apt-get install` of it fails, its `nodejs`
#    dependency conflicts with the preinstalled Node.js 20 (shared/field-notes.md, "WHIP here").
# Safe to run twice: the second run finds everything present and does nothing. Prints one line.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
PREFIX="$ROOT/out/janus/whip-prefix"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
done_parts=()

missing=()
for p in janus janus-tools; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
updated=0
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  # No package starts a service while this installs (as scripts/setup.sh does for coturn):
  # Debian's policy-rc.d hook, exit 101 = "action forbidden", unless the machine has one already.
  policy=/usr/sbin/policy-rc.d
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# janus/install.sh: no service starts while it installs packages\nexit 101\n' \
      | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
    trap '$SUDO rm -f "$policy"' EXIT
  fi
  $SUDO apt-get update -qq; updated=1
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # ... and not at the next boot either: the harness starts janus itself, in a namespace.
  if [ -d /run/systemd/system ]; then
    $SUDO systemctl disable --now janus >/dev/null 2>&1 || true
  else
    $SUDO update-rc.d janus disable >/dev/null 2>&1 || true
    $SUDO service janus stop >/dev/null 2>&1 || true
  fi
  done_parts+=("installed ${missing[*]}")
else
  done_parts+=("janus $(dpkg-query -W -f='${Version}' janus) present")
fi

SERVER="$PREFIX/usr/share/simple-whip-server/src/server.js"
if [ ! -f "$SERVER" ] || [ ! -f "$PREFIX/.complete" ]; then
  [ "$updated" = 1 ] || $SUDO apt-get update -qq
  # simple-whip-server and everything it depends on that is a JavaScript package (node-*,
  # libjs-*), recursively; nodejs itself is the preinstalled one.
  mapfile -t pkgs < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
      --no-breaks --no-replaces --no-enhances --no-pre-depends simple-whip-server 2>/dev/null \
    | grep -E '^(node-|libjs-|simple-whip-server$)' | sort -u)
  debs="$ROOT/out/janus/debs"
  rm -rf "$debs" "$PREFIX"; mkdir -p "$debs" "$PREFIX"
  (cd "$debs" && apt-get download -qq "${pkgs[@]}" >/dev/null 2>&1) \
    || (cd "$debs" && apt-get download "${pkgs[@]}" >/dev/null)
  for d in "$debs"/*.deb; do dpkg-deb -x "$d" "$PREFIX"; done
  [ -f "$SERVER" ] || { echo "janus/install: $SERVER missing after unpacking" >&2; exit 1; }
  touch "$PREFIX/.complete"
  done_parts+=("simple-whip-server unpacked (${#pkgs[@]} packages) into out/janus/whip-prefix")
else
  done_parts+=("simple-whip-server present")
fi

(IFS=';'; echo "janus/install: ${done_parts[*]}" | sed 's/;/; /g')
