#!/usr/bin/env bash
# Builds and runs each fuzz target for a bounded time (default 60 s each; pass seconds as $1).
# New inputs go to .build/fuzz-corpus/<target>; the hand-made seeds in Corpus/<target> stay
# untouched. A crash leaves crash-*/leak-*/timeout-* files in .build/fuzz-artifacts/.
set -euo pipefail
cd "$(dirname "$0")"
# The Swift runtime backtracer and ASan step on each other; libFuzzer reports crashes itself.
export SWIFT_BACKTRACE=enable=no
SECONDS_EACH="${1:-60}"
for target in FuzzSDP FuzzSRTPUnprotect; do
  # swift-driver keeps only the LAST -sanitize= flag it is given, and SwiftPM passes its
  # --sanitize list in no fixed order: with the two flags alone the Swift code gets either
  # coverage or ASan, at random. The combined -Xswiftc flag comes last and carries both; the
  # --sanitize flags stay for linking the runtimes.
  scratch=".build/fuzz-build-$target"
  swift build -c release --scratch-path "$scratch" --sanitize=fuzzer --sanitize=address \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library --product "$target"
  binary="$scratch/release/$target"
  seeds_run="$("$binary" -runs=0 "Corpus/$target" 2>&1)"
  if [[ "$seeds_run" != *"cov: "* ]]; then
    echo "run-fuzz: $target has no coverage instrumentation" >&2
    exit 1
  fi
  mkdir -p ".build/fuzz-corpus/$target" .build/fuzz-artifacts
  "$binary" ".build/fuzz-corpus/$target" "Corpus/$target" \
    -max_total_time="$SECONDS_EACH" -max_len=4096 -print_final_stats=1 \
    -artifact_prefix=".build/fuzz-artifacts/$target-"
done
