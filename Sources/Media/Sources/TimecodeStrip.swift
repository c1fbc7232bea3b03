/// A row of black and white blocks across the top of every synthetic frame that tells a receiver,
/// from the decoded picture alone, which frame it is and when it was captured.
///
/// Layout, left to right, one bit per square block (`blockSize` = width/80 rounded down to even,
/// 16 px at 1280 wide, so each block is one macroblock and survives compression):
/// two sync blocks (white, black), 24 bits of frame number, 32 bits of capture time in
/// milliseconds on the sender's monotonic clock (mod 2³²), and a CRC-8 (polynomial 0x07) over
/// those 7 bytes. Most significant bit first; white = 1. 66 blocks in all.
public enum TimecodeStrip {
    public struct Value: Sendable, Equatable {
        /// Frame number modulo 2²⁴.
        public var frame: UInt32
        /// Capture time in ms on the sender's monotonic clock, modulo 2³².
        public var timeMs: UInt32
        public init(frame: UInt32, timeMs: UInt32) {
            self.frame = frame & 0xFF_FFFF
            self.timeMs = timeMs
        }
    }

    static let blockCount = 2 + 24 + 32 + 8
    static let white: UInt8 = 235
    static let black: UInt8 = 16

    /// Block edge in pixels for a picture `width` wide.
    public static func blockSize(width: Int) -> Int { max(2, (width / 80) & ~1) }

    static func bits(of value: Value) -> [Bool] {
        let payload: [UInt8] = [
            UInt8(value.frame >> 16 & 0xFF), UInt8(value.frame >> 8 & 0xFF), UInt8(value.frame & 0xFF),
            UInt8(value.timeMs >> 24), UInt8(value.timeMs >> 16 & 0xFF),
            UInt8(value.timeMs >> 8 & 0xFF), UInt8(value.timeMs & 0xFF),
        ]
        var bits: [Bool] = [true, false]
        for byte in payload + [crc8(payload)] {
            for i in (0..<8).reversed() { bits.append(byte >> UInt8(i) & 1 == 1) }
        }
        return bits
    }

    /// Draws the strip into a luma plane (chroma under it should be neutral).
    static func draw(_ value: Value, into y: UnsafeMutablePointer<UInt8>, width: Int, height: Int, stride: Int) {
        let b = blockSize(width: width)
        for (i, bit) in bits(of: value).enumerated() {
            let x0 = i * b
            guard x0 + b <= width else { break }
            for row in 0..<min(b, height) {
                (y + row * stride + x0).update(repeating: bit ? white : black, count: b)
            }
        }
    }

    /// Reads the strip back from a decoded luma plane; `nil` when the sync blocks or the CRC do
    /// not match (not a synthetic frame, or too damaged to trust).
    ///
    /// `sourceWidth` is the width the strip was drawn at when the picture has been scaled since
    /// (a phone's 886 px scaled to 590): the blocks then have a fractional pitch, which the
    /// reader follows instead of assuming the blocks of a picture drawn at `width`.
    public static func decode(
        luma: UnsafeBufferPointer<UInt8>,
        width: Int,
        height: Int,
        stride: Int,
        sourceWidth: Int? = nil
    ) -> Value? {
        let pitch =
            sourceWidth.map { Double(blockSize(width: $0)) * Double(width) / Double(max($0, 1)) }
            ?? Double(blockSize(width: width))
        let b = Int(pitch)
        guard b >= 2, Double(blockCount) * pitch <= Double(width), b <= height,
            luma.count >= stride * (b - 1) + width
        else { return nil }
        var bits: [Bool] = []
        bits.reserveCapacity(blockCount)
        for i in 0..<blockCount {
            // Average the centre of the block, away from edges that ringing and scaling blur.
            let left = Int((Double(i) * pitch).rounded(.up))
            var sum = 0
            var n = 0
            for row in (b / 4)..<(b - b / 4) {
                for col in (left + b / 4)..<(left + b - b / 4) {
                    sum += Int(luma[row * stride + col])
                    n += 1
                }
            }
            bits.append(sum / max(n, 1) > 126)
        }
        guard bits[0], !bits[1] else { return nil }
        var bytes: [UInt8] = []
        for k in 0..<8 {
            var byte: UInt8 = 0
            for j in 0..<8 where bits[2 + k * 8 + j] { byte |= 1 << UInt8(7 - j) }
            bytes.append(byte)
        }
        guard crc8(Array(bytes[0..<7])) == bytes[7] else { return nil }
        let frame = UInt32(bytes[0]) << 16 | UInt32(bytes[1]) << 8 | UInt32(bytes[2])
        let time = UInt32(bytes[3]) << 24 | UInt32(bytes[4]) << 16 | UInt32(bytes[5]) << 8 | UInt32(bytes[6])
        return Value(frame: frame, timeMs: time)
    }

    /// Convenience for a tightly packed plane.
    public static func decode(luma: [UInt8], width: Int, height: Int) -> Value? {
        luma.withUnsafeBufferPointer { decode(luma: $0, width: width, height: height, stride: width) }
    }

    /// CRC-8, polynomial x⁸+x²+x+1 (0x07), initial value 0.
    static func crc8(_ bytes: [UInt8]) -> UInt8 {
        var crc: UInt8 = 0
        for byte in bytes {
            crc ^= byte
            for _ in 0..<8 { crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x07 : crc << 1 }
        }
        return crc
    }
}
