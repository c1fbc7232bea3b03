import Benchmark
import Media

/// The per-frame steps before the packets: mixing the two audio sources, converting and scaling
/// what a capture process delivers, and (for reference) the Opus encode of one 20 ms frame and
/// the H.264 encode of one 720p frame.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 5,
        maxDuration: .seconds(1),
        maxIterations: 10_000
    )

    // What the harness itself costs per iteration (its own mallocs included): the report
    // subtracts it, so the other rows count only the code under test.
    Benchmark("Harness: empty iteration") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(benchmark.currentIteration) }
    }

    Benchmark("Audio mixer: 20 ms of app 44.1 kHz stereo + mic 32 kHz mono -> 48 kHz stereo") { benchmark, state in
        for _ in benchmark.scaledIterations { blackHole(state.mixNext()) }
    } setup: {
        try MixerState()
    }

    Benchmark("Convert: 886x1920 full-range NV12 -> 590x1280 I420 (portrait phone)") { benchmark, state in
        for _ in benchmark.scaledIterations { blackHole(state.convert()) }
    } setup: {
        try ConvertState(width: 886, height: 1920, outputWidth: 590, outputHeight: 1280)
    }

    Benchmark("Convert: 1920x1080 full-range NV12 -> 1280x720 I420") { benchmark, state in
        for _ in benchmark.scaledIterations { blackHole(state.convert()) }
    } setup: {
        try ConvertState(width: 1920, height: 1080, outputWidth: 1280, outputHeight: 720)
    }

    // libopus 1.3.1 codes this input bit for bit alike at complexity 8, 9 and 10 (CELT at
    // 96 kbit/s); below 7 it drops the tonality analysis. 10 is the product's default.
    for complexity in [10, 6, 0] {
        Benchmark("Opus encode: 20 ms of 48 kHz stereo, 96 kbps, complexity \(complexity)") { benchmark, state in
            for _ in benchmark.scaledIterations { blackHole(state.encodeNext()) }
        } setup: {
            try OpusState(complexity: complexity)
        }
    }

    for preset in ["ultrafast", "veryfast"] {
        Benchmark(
            "H.264 encode: one 1280x720 screen frame, \(preset), 1 thread, 2500 kbps",
            configuration: .init(
                metrics: [.wallClock, .cpuTotal, .mallocCountTotal],
                warmupIterations: 30,
                maxDuration: .seconds(2),
                maxIterations: 1_000
            )
        ) { benchmark, state in
            for _ in benchmark.scaledIterations { blackHole(state.encodeNext()) }
        } setup: {
            try EncodeState(preset: preset)
        }
    }
}
