#!/usr/bin/env bash
# `make test-busy`: `make test` while BUSY_CORES (default 1) busy loops share the machine, as a
# neighbour on a shared CI host does. The loops are bounded (BUSY_SECONDS, default 3600) and end
# with the run whatever its outcome. Tests must pass here too: they assert what the design
# guarantees under load (order, accounting, clocks), not throughput, which `make bench` measures.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
cores=${BUSY_CORES:-1}
seconds=${BUSY_SECONDS:-3600}
hogs=()
for _ in $(seq 1 "$cores"); do
    timeout "$seconds" bash -c 'while :; do :; done' &
    hogs+=($!)
done
echo "test-busy: $cores busy loop(s) for at most $seconds s (pids ${hogs[*]})"
trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
start=$(date +%s)
make --no-print-directory test
status=$?
echo "test-busy: make test exited $status after $(($(date +%s) - start)) s beside $cores busy loop(s)"
exit "$status"
