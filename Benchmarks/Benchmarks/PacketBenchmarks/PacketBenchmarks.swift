import Benchmark
import Media
import RTP
import SRTP
import SendEngine
import Transport

/// The per-packet steps of the media path: payloading (RFC 6184, RFC 7587), SRTP protect
/// (RFC 3711) and the fan-out to N destinations. Each benchmark counts mallocs, so the table
/// states allocations per packet as well as time.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 10,
        maxDuration: .seconds(1),
        maxIterations: 100_000
    )

    // What the harness itself costs per iteration (its own mallocs included): the report
    // subtracts it, so the other rows count only the code under test.
    Benchmark("Harness: empty iteration") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(benchmark.currentIteration) }
    }

    // The packet count goes into the name, so the report can state the cost per packet.
    let frames = [
        ("100 KB IDR with SPS+PPS", [H264Samples.sps, H264Samples.pps, H264Samples.slice(type: 5, bytes: 100_000)]),
        ("9 KB P frame", [H264Samples.slice(type: 1, bytes: 9_000)]),
    ]
    for (what, nalUnits) in frames {
        let packets = (try? H264PayloadState(nalUnits: nalUnits).packetCount()) ?? 0
        Benchmark("H.264 payload: \(what), MTU 1200 (\(packets) packets)") { benchmark, state in
            for _ in benchmark.scaledIterations { blackHole(state.packetize()) }
        } setup: {
            try H264PayloadState(nalUnits: nalUnits)
        }
    }

    Benchmark("Opus payload: one 20 ms packet of 240 B (1 packet)") { benchmark, state in
        for _ in benchmark.scaledIterations { blackHole(state.packetize()) }
    } setup: {
        try OpusPayloadState()
    }

    Benchmark("SRTP protect: one 1200-byte packet, AES-CM-128 + HMAC-SHA1-80 (1 packet)") { benchmark, state in
        for _ in benchmark.scaledIterations { blackHole(state.protectNext()) }
    } setup: {
        try ProtectState(clearLength: 1200 - SRTPSuite.aesCM128HmacSHA1_80.rtpTrailerLength)
    }

    Benchmark("SRTP protect: one 1200-byte packet, AEAD-AES-128-GCM (1 packet)") { benchmark, state in
        for _ in benchmark.scaledIterations { blackHole(state.protectNext()) }
    } setup: {
        try ProtectState(clearLength: 1200 - SRTPSuite.aeadAES128GCM.rtpTrailerLength, suite: .aeadAES128GCM)
    }

    // A key frame as the publisher sends it: per subscriber, its packets protected back to back
    // and sent as runs of equal size in one segmented sendmsg each (UDP GSO).
    let keyFrame = [H264Samples.sps, H264Samples.pps, H264Samples.slice(type: 5, bytes: 100_000)]
    let keyFramePackets = (try? H264PayloadState(nalUnits: keyFrame).packetCount()) ?? 0
    for subscribers in [1, 10] {
        let packets = keyFramePackets * subscribers
        Benchmark(
            "Key-frame fan-out: 100 KB IDR, \(subscribers) subscriber(s), copy + protect + segmented send (\(packets) packets)"
        ) { benchmark, state in
            state.measure(benchmark)
        } setup: {
            try FanOutState(destinations: subscribers, nalUnits: keyFrame)
        }
    }

    // SDES destinations, each with keys of the sender's default suite, AES_CM_128_HMAC_SHA1_80.
    for destinations in [1, 10, 100] {
        let noun = destinations == 1 ? "destination" : "destinations"
        Benchmark("Fan-out: one 1100 B video packet to \(destinations) \(noun), copy + protect + sendto each") {
            benchmark,
            state in
            state.measure(benchmark)
        } setup: {
            try FanOutState(destinations: destinations)
        }
    }

    // The same fan-out to WebRTC viewers (issue 17: an extra one may cost at most 1.1 × an extra
    // SDES destination per packet). AES-CM is the SDES rows' suite, the like-for-like comparison;
    // AEAD_AES_128_GCM is what our DTLS offers first (DTLSSRTPProfile.defaultOffer), so what a
    // viewer whose stack supports it gets.
    let webRTCSuites: [(name: String, suite: SRTPSuite)] = [
        ("AES-CM-128 + HMAC-SHA1-80", .aesCM128HmacSHA1_80),
        ("AEAD-AES-128-GCM", .aeadAES128GCM),
    ]
    for (suiteName, suite) in webRTCSuites {
        for viewers in [1, 10] {
            let noun = viewers == 1 ? "viewer" : "viewers"
            Benchmark(
                "Fan-out: one 1100 B video packet to \(viewers) WebRTC \(noun), PT rewrite + copy + protect + sendto each, \(suiteName)"
            ) { benchmark, state in
                state.measure(benchmark)
            } setup: {
                try FanOutState(destinations: viewers, viewers: .webRTC(suite))
            }
        }
    }
}
