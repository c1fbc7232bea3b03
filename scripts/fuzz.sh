#!/usr/bin/env bash
# Builds every libFuzzer target in Fuzz/ and runs each for ${FUZZ_SECONDS:-60} seconds.
# Exits non-zero if a target fails to build, lacks coverage instrumentation, or finds a crash;
# crash inputs stay in Fuzz/.build/fuzz-artifacts/<target>/ (replay them as unit tests).
# Each run starts from the checked-in seeds (Fuzz/Corpus/<target>/) plus what earlier runs grew
# (Fuzz/.build/fuzz-corpus/<target>/); new inputs go to the latter.
set -euo pipefail
# The Swift runtime's crash backtracer fights ASan and can hang; libFuzzer reports crashes itself.
export SWIFT_BACKTRACE=enable=no

cd "$(dirname "$0")/../Fuzz"
SECONDS_PER_TARGET="${FUZZ_SECONDS:-60}"
# FUZZ_TARGETS is a list separated by blanks ("FuzzSDP FuzzRTCP"); without it, every Sources/ entry.
if [ -n "${FUZZ_TARGETS:-}" ]; then
  read -r -d '' -a TARGETS <<<"$FUZZ_TARGETS" || true # read -d '' ends at end of input: status 1
else
  mapfile -t TARGETS < <(ls Sources)
fi
# swift-driver keeps only the last -sanitize= it is given, and SwiftPM passes its --sanitize list
# in no fixed order, so with those alone the Swift code gets coverage *or* ASan at random. The
# combined -Xswiftc flag comes last and carries both; --sanitize stays for linking the runtimes.
BUILD_FLAGS=(-c release --sanitize=fuzzer --sanitize=address
  -Xswiftc '-sanitize=fuzzer,address' -Xswiftc -parse-as-library)

for target in "${TARGETS[@]}"; do
  echo "fuzz: building $target"
  swift build "${BUILD_FLAGS[@]}" --product "$target"
done
BIN="$(swift build "${BUILD_FLAGS[@]}" --show-bin-path)"

failed=()
for target in "${TARGETS[@]}"; do
  corpus=".build/fuzz-corpus/$target"
  artifacts=".build/fuzz-artifacts/$target"
  mkdir -p "$corpus" "$artifacts"
  if [[ "$("$BIN/$target" -runs=0 "Corpus/$target" 2>&1)" != *"cov: "* ]]; then
    echo "fuzz: $target has no coverage instrumentation" >&2
    exit 1
  fi
  # A browser's offer is 3-8 KiB (the JSEP seeds are whole offers); other inputs fit in 4 KiB.
  max_len=4096
  if [[ "$target" == FuzzJSEP || "$target" == FuzzWHIPAnswer ]]; then max_len=16384; fi
  echo "fuzz: running $target for ${SECONDS_PER_TARGET}s"
  if ! "$BIN/$target" -max_total_time="$SECONDS_PER_TARGET" -max_len="$max_len" -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$corpus" "Corpus/$target"; then
    failed+=("$target")
  fi
done

if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: crashes found in: ${failed[*]} (inputs under Fuzz/.build/fuzz-artifacts/)" >&2
  exit 1
fi
echo "fuzz: ${#TARGETS[@]} targets ran ${SECONDS_PER_TARGET}s each, no crash"
