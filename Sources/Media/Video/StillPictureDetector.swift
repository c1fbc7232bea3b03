/// Tells whether an I420 picture is the same as the one before, for inputs that do not say what
/// changed (the test source, `.y4m` files, capture processes): `FrameCadence` then leaves a still
/// picture unencoded. The X11 capture reports its changed area and needs none of this.
///
/// Keeps a 64-bit fingerprint of the last picture's samples, not a copy: a copy of a 720p
/// picture is 1.4 MB resident and a `memcpy` per changed picture, where the fingerprint reads the
/// picture once (word at a time) and holds 16 bytes. Two different pictures with the same
/// fingerprint would make a change wait for the next one; at 2⁻⁶⁴ a pair that is not crafted,
/// and a crafted pair can only hold back the crafter's own picture.
public final class StillPictureDetector {
    private var last: (width: Int, height: Int, fingerprint: UInt64)?

    public init() {}

    /// True when `frame` has the last picture's size and samples; else remembers it and returns
    /// false. The first picture is always a change.
    public func isUnchanged(_ frame: VideoFrame) -> Bool {
        var hash = Fingerprint()
        hash.add(frame.y, stride: frame.strideY, width: frame.width, rows: frame.height)
        hash.add(frame.u, stride: frame.strideU, width: frame.chromaWidth, rows: frame.chromaHeight)
        hash.add(frame.v, stride: frame.strideV, width: frame.chromaWidth, rows: frame.chromaHeight)
        let now = (frame.width, frame.height, hash.value)
        defer { last = now }
        guard let last else { return false }
        return last == now
    }

    /// Forgets the last picture: the next one counts as a change.
    public func reset() { last = nil }
}

/// A 64-bit hash of plane rows, eight bytes at a time (multiply, rotate, multiply, as the
/// xxHash family mixes its lanes), with each row's length mixed in so that moving bytes between
/// rows changes it.
struct Fingerprint {
    private(set) var value: UInt64 = 0x27D4_EB2F_1656_67C5
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F

    mutating func add(_ plane: [UInt8], stride: Int, width: Int, rows: Int) {
        plane.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress, rows > 0, width > 0,
                (rows - 1) * stride + width <= bytes.count
            else { return }
            for row in 0..<rows {
                let start = base + row * stride
                var offset = 0
                while offset + 8 <= width {
                    mix(start.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                    offset += 8
                }
                var tail: UInt64 = 0
                while offset < width {
                    tail = tail << 8 | UInt64(start.load(fromByteOffset: offset, as: UInt8.self))
                    offset += 1
                }
                mix(tail ^ UInt64(width) << 56)
            }
        }
    }

    private mutating func mix(_ word: UInt64) {
        var lane = word &* Self.prime2
        lane = (lane << 31) | (lane >> 33)
        lane = lane &* Self.prime1
        value ^= lane
        value = ((value << 27) | (value >> 37)) &* Self.prime1 &+ 0x85EB_CA77_C2B2_AE63
    }
}
