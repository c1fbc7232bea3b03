@testable import RTP

/// SplitMix64: a tiny seeded generator so that "random" tests replay exactly.
struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { self.state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A generator that returns the given words in turn (then repeats the last), to pin exact
/// random draws in tests.
struct ScriptedGenerator: RandomNumberGenerator, Sendable {
    var words: [UInt64]
    var index = 0

    mutating func next() -> UInt64 {
        defer { index += 1 }
        return words[min(index, words.count - 1)]
    }
}

/// Bytes 0, 1, 2, … (mod 251, a prime, so fragment boundaries never line up with a pattern).
func patternBytes(_ count: Int, header: UInt8, seed: Int = 0) -> [UInt8] {
    guard count > 0 else { return [] }
    var bytes = [header]
    bytes.reserveCapacity(count)
    for index in 1..<count {
        bytes.append(UInt8((index + seed) % 251))
    }
    return bytes
}

/// Runs the hot-path payloader and returns every packet it emitted, parsed.
func packetizeAll(
    _ payloader: inout H264Payloader,
    _ accessUnit: [[UInt8]],
    timestamp: UInt32,
    stream: inout RTPStreamState
) throws -> [RTPPacket] {
    let buffer = RTPPacketBuffer(budget: payloader.budget)
    var packets: [RTPPacket] = []
    try payloader.packetize(
        accessUnit: accessUnit.map { $0[...] },
        timestamp: timestamp,
        stream: &stream,
        into: buffer
    ) { buffer in
        packets.append(try RTPPacket.parse(buffer.copyBytes()))
    }
    return packets
}

func makeStream(
    payloadType: UInt8 = 96,
    clockRate: UInt32 = 90_000,
    sequenceNumber: UInt16 = 1000,
    ssrc: UInt32 = 0x1234_5678
) throws -> RTPStreamState {
    try RTPStreamState(
        ssrc: ssrc,
        payloadType: payloadType,
        clockRate: clockRate,
        initialSequenceNumber: sequenceNumber,
        timestampBase: 0
    )
}
