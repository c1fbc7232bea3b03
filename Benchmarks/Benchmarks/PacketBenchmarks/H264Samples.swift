/// Access-unit parts of realistic sizes for the payloader benchmarks: x264's SPS and PPS for
/// 1280x720 constrained baseline, and slices of pseudo-random bytes (entropy-coded data looks
/// random) behind a real NAL header.
enum H264Samples {
    static let sps: [UInt8] = [
        0x67, 0x42, 0xC0, 0x1F, 0xDA, 0x01, 0x40, 0x16, 0xEC, 0x04, 0x40, 0x00, 0x00, 0x03, 0x00, 0x40,
    ]
    static let pps: [UInt8] = [0x68, 0xCE, 0x0F, 0x2C, 0x80]

    /// A slice NAL unit of `type` (1 non-IDR, 5 IDR) and `bytes` total length, NRI 3.
    static func slice(type: UInt8, bytes: Int) -> [UInt8] {
        var generator = SplitMix64(seed: UInt64(type) << 32 | UInt64(bytes))
        var nal = [UInt8](repeating: 0, count: bytes)
        nal[0] = 0x60 | type
        for index in 1..<bytes { nal[index] = UInt8(truncatingIfNeeded: generator.next()) }
        return nal
    }
}

/// A fixed-seed generator, so every run payloads the same bytes.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
