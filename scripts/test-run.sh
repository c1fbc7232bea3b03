#!/usr/bin/env bash
# One `swift test` run (arguments passed through), its whole output shown as it goes and kept in
# out/test-logs/. When the run fails, the issues it recorded are printed again at the very end,
# so whoever reads only the last lines of a CI log still sees which test failed and why.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
mkdir -p out/test-logs
log="out/test-logs/$(date +%Y%m%d-%H%M%S)-$$.log"
"${SWIFT:-swift}" test --skip-build "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
    echo
    echo "==== swift test $* failed (exit $status); whole log: $log ===="
    echo "---- last 10 lines ----"
    tail -10 "$log" | cut -c1-300
    # Swift Testing: '✘ Test x() recorded an issue at File.swift:L:C: ...' and the indented lines
    # after it; XCTest: 'error:' lines; a crash: swift test's 'signal code' line (the log's last
    # lines come first, they show what ran last).
    # The issues come last and short: a CI report that keeps only the end of the output keeps them.
    echo "---- the issues it recorded ----"
    grep -A6 -E '✘ Test .*recorded an issue|: error: |Fatal error|Crash|signal code' "$log" | cut -c1-400 | head -60
    echo "---- failed: $(grep -E '^✘ Test .* failed after' "$log" | sed -E 's/^✘ Test (.*) failed after.*/\1/' | sort -u | tr '\n' ' ')"
fi
exit "$status"
