# rtc-publisher: the two commands a newcomer needs are `make demo` and `make test`.
SHELL := /bin/bash
SWIFT ?= swift
# Each test run keeps its log in out/test-logs and repeats its failures at the end.
TEST_RUN := SWIFT=$(SWIFT) bash scripts/test-run.sh
FORMAT_DIRS := $(wildcard Sources Tests Signaling Fuzz/Sources Benchmarks)
# What `make lint` checks beyond the Swift: the viewer page's script (node --check), every shell
# script (shellcheck) and the Python (ruff, pinned in out/venv by scripts/setup.sh; ruff.toml).
VIEWER_JS := Signaling/ViewerPage/Resources/viewer.js
SHELL_SCRIPTS = $(wildcard scripts/*.sh) .ci/run $(shell find Tests -name '*.sh')
PYTHON_DIRS := scripts Tests
RUFF := out/venv/bin/ruff
PYTHON := out/venv/bin/python

.PHONY: all setup build release lint test test-busy demo fuzz bench link-order clean

all: build

## setup: install the Debian packages the build, tests and demo need (only those missing)
setup:
	@bash scripts/setup.sh

## build: debug build of every target
build: setup
	$(SWIFT) build

## release: optimised binaries in .build/release
release: setup
	$(SWIFT) build -c release --static-swift-stdlib

## lint: swift-format in strict mode over all sources, as SwiftNIO's CI does; then node --check on
## the viewer page's script, shellcheck on the shell scripts, ruff (check and format) on the Python.
## Any finding fails it. Needs what `make setup` installs (node, shellcheck, out/venv's ruff).
lint:
	$(SWIFT) format lint --strict --recursive $(FORMAT_DIRS)
	for js in $(VIEWER_JS); do node --check "$$js" || exit 1; done
	shellcheck $(SHELL_SCRIPTS)
	@test -x $(RUFF) || { echo "lint: $(RUFF) is missing: run make setup" >&2; exit 1; }
	$(RUFF) check $(PYTHON_DIRS)
	$(RUFF) format --check $(PYTHON_DIRS)
	python3 scripts/check-architecture.py

## test: setup, build, lint, then every test (unit, real libraries, real ffmpeg, real sockets), the
## Python ones of scripts/tests (bench-report on a recorded run) first
# Separate runs: Swift Testing runs every test on the cooperative pool (two threads on a 2-core
# host). The media tests block it (x264 encodes, waiting on ffmpeg), which starves the in-process
# signaling server's actor for seconds and trips its liveness timers; the feedback tests
# time NACK round trips through a lossy relay (against our receiver, then GStreamer); and the ingest and
# end-to-end suites stream in real time (a capture simulator, the real executables), as do the
# capture tests (private Xvfb and PulseAudio servers, X clients painting at 30 fps), which must
# not fight the unit tests for the two cores. Each gets a run of its own; nothing is skipped.
test: setup
	$(SWIFT) build --build-tests
	$(MAKE) --no-print-directory lint
	$(PYTHON) -m unittest discover -s scripts/tests
	$(TEST_RUN) --skip '^(SignalingTests|IngestTests|FeedbackTests|PeerFeedbackTests|CaptureTests|SystemAudioTests|EndToEndTests)\.'
	$(TEST_RUN) --filter '^SignalingTests\.'
	$(TEST_RUN) --filter '^FeedbackTests\.'
	$(TEST_RUN) --filter '^PeerFeedbackTests\.'
	$(TEST_RUN) --filter '^IngestTests\.'
	$(TEST_RUN) --filter '^(CaptureTests|SystemAudioTests)\.'
	$(TEST_RUN) --filter '^EndToEndTests\.'

## test-busy: make test beside BUSY_CORES (default 1) busy loops, as on a shared CI host; tests assert
## what holds under load (order, accounting, clocks), make bench measures throughput
test-busy:
	@bash scripts/test-busy.sh

## demo: encode the built-in test source, decode it with ffmpeg, show what came back
demo: release
	@bash scripts/demo.sh

## fuzz: build the libFuzzer targets and run each for FUZZ_SECONDS (default 60)
fuzz: setup
	@bash scripts/fuzz.sh

## bench: rtc-publish vs FFmpeg vs GStreamer vs the bare encoder, one interleaved run, then one publisher to BENCH_ROOM=100 subscribers (BENCH_RUNS=3, BENCH_MATRIX=full|quick, BENCH_MICRO=1 adds the micro-benchmarks, BENCH_BASELINE=REV adds REV's rtc-publish and micro-benchmarks beside this tree's), then Chromium's GCC and ours through a 3 -> 1 -> 3 Mbit/s bottleneck at 720p and 1080p (scripts/cc-bench.sh), the X11 capture against FFmpeg and GStreamer (scripts/capture-bench.sh), a scripted 60 s screen session (still, typing, scrolling) against FFmpeg, GStreamer and Chromium's getDisplayMedia (scripts/screen-session-bench.sh), and the publisher's CPU and bytes per layer with and without --simulcast and with OBS-style three-size simulcast, over WHIP into a private Janus (scripts/simulcast-bench.sh)
bench: release
	@bash scripts/bench.sh
	@bash scripts/cc-bench.sh
	@bash scripts/cc-bench.sh --size 1920x1080
	@bash scripts/capture-bench.sh
	@bash scripts/screen-session-bench.sh
	@bash scripts/simulcast-bench.sh

## link-order: profile rtc-publish under callgrind and rewrite scripts/rtc-publish.order, the hot functions its release link packs together
link-order: release
	@bash scripts/link-order.sh

clean:
	rm -rf .build Fuzz/.build Benchmarks/.build out
