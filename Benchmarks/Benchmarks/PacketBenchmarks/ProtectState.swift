import SRTP

/// An outbound SRTP session protecting one packet after another in a reused buffer, each with
/// the next sequence number, as a destination does (copy in from the clear packet, protect in
/// place).
final class ProtectState {
    private let session: SRTPSession
    private let clear: [UInt8]
    private let buffer: UnsafeMutableRawBufferPointer
    private var sequence: UInt16 = 0

    /// `suite`: AES-CM (SDES receivers and the default) or AES-GCM (what our DTLS offers WebRTC
    /// viewers first), so the fan-out rows' difference per suite can be read against protect alone.
    init(clearLength: Int, suite: SRTPSuite = .aesCM128HmacSHA1_80) throws {
        session = try SRTPSession(keys: SRTPKeyMaterial.random(for: suite), direction: .outbound)
        var packet = H264Samples.slice(type: 1, bytes: clearLength)
        // RTP header (RFC 3550 §5.1): V=2, PT 96, timestamp 0, SSRC 0x01020304.
        packet.replaceSubrange(0..<12, with: [0x80, 96, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4])
        clear = packet
        buffer = .allocate(byteCount: 2048, alignment: 8)
    }

    deinit { buffer.deallocate() }

    /// Returns the protected length (clear length + the suite's tag: 10 bytes, 16 for GCM).
    func protectNext() -> Int {
        sequence &+= 1
        clear.withUnsafeBytes { bytes in
            guard let source = bytes.baseAddress else { return }
            buffer.baseAddress?.copyMemory(from: source, byteCount: bytes.count)
        }
        buffer[2] = UInt8(sequence >> 8)
        buffer[3] = UInt8(truncatingIfNeeded: sequence)
        return (try? session.protect(buffer: buffer, length: clear.count)) ?? 0
    }
}
