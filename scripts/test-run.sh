#!/usr/bin/env bash
# One `swift test` run (arguments passed through), its whole output shown as it goes and kept in
# out/test-logs/. When the run fails, the issues it recorded are printed again at the very end,
# so whoever reads only the last lines of a CI log still sees which test failed and why.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p out/test-logs
log="out/test-logs/$(date +%Y%m%d-%H%M%S)-$$.log"
"${SWIFT:-swift}" test --skip-build "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
    echo
    echo "==== swift test $* failed (exit $status); the issues it recorded (whole log: $log) ===="
    # Swift Testing: '✘ Test x() recorded an issue at File.swift:L:C: ...' and the indented lines
    # after it; XCTest: 'error:' lines. A crash leaves neither, so the log's last lines follow.
    grep -n -A12 -E '✘ Test .*recorded an issue|: error: |Fatal error|Crash' "$log" | head -200
    echo "---- last 15 lines ----"
    tail -15 "$log"
fi
exit "$status"
