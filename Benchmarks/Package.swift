// swift-tools-version: 6.1
// Micro-benchmarks of the media path's hot steps (payloading, SRTP, fan-out, mixing, conversion,
// encoding) with ordo-one/benchmark. A package of its own, like Fuzz/, so `make test` never
// builds it; `BENCH_MICRO=1 scripts/bench.sh` runs it: `swift package benchmark` in this folder.
import Foundation
import PackageDescription

/// SwiftPM names a path dependency after its folder, and a clone may be called anything.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "rtc-publisher-benchmarks",
    dependencies: [
        .package(path: ".."),
        // MallocInterposer alone: its malloc counters give allocations per packet; the default
        // RuntimeInterposer trait (ARC counters) is left off.
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "PacketBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "RTP", package: root),
                .product(name: "SRTP", package: root),
                .product(name: "Media", package: root),
                .product(name: "SendEngine", package: root),
                .product(name: "Transport", package: root),
            ],
            path: "Benchmarks/PacketBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "MediaBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Media", package: root),
            ],
            path: "Benchmarks/MediaBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
