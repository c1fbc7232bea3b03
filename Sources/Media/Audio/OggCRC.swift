/// The Ogg page checksum (RFC 3533 §6, "CRC_checksum"): CRC-32 with generator polynomial
/// 0x04C11DB7, initial value 0, no bit reflection and no final XOR, computed over the whole page
/// with the checksum field set to zero. (Not zlib's CRC-32, which is reflected and inverted.)
public enum OggCRC {
    static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index) << 24
        for _ in 0..<8 {
            value = value & 0x8000_0000 != 0 ? (value << 1) ^ 0x04C1_1DB7 : value << 1
        }
        return value
    }

    /// Continues `crc` over `bytes`; start with 0.
    public static func update(_ crc: UInt32, _ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        var crc = crc
        table.withUnsafeBufferPointer { table in
            for byte in bytes {
                crc = (crc << 8) ^ table[Int((crc >> 24) ^ UInt32(byte))]
            }
        }
        return crc
    }

    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { update(0, $0) }
    }
}
