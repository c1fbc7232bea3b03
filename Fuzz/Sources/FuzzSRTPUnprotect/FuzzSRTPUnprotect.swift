import Glibc
import SRTP

/// libFuzzer entry for SRTP. Every input is
///  1. unprotected as SRTP and as SRTCP by fixed-key receiving sessions of every suite: it must
///     only throw (or, for a genuine packet, succeed), never crash;
///  2. taken as a plain RTP and RTCP packet, protected by a fresh sending session and unprotected
///     by a fresh receiving one: if protect succeeds, unprotect must return the original bytes.
///     The RTP and the RTCP round trip of one input share the two sessions: libsrtp keeps a
///     stream's RTP and RTCP state apart (index, rollover counter, replay windows), so the RTCP
///     packet meets the state a new session would give it, and each input creates two sessions,
///     not four. (Sessions are not kept across inputs: every input frees what it allocates, which
///     keeps libFuzzer's per-input leak check on.)
/// Packets sit at the very end of a page followed by an inaccessible page, so a read or write past
/// the packet (or past the trailer room) by libsrtp faults instead of going unnoticed.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSRTPUnprotect(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = UnsafeRawBufferPointer(start: data, count: min(size, GuardedPage.capacity - 64))
    for receiver in Fixture.receivers {
        _ = try? GuardedPage.shared.withPacket(input, room: 0) {
            try receiver.unprotect(buffer: $0, length: input.count)
        }
        _ = try? GuardedPage.shared.withPacket(input, room: 0) {
            try receiver.unprotectRTCP(buffer: $0, length: input.count)
        }
    }
    guard input.count >= 12 else { return 0 }
    let suite = SRTPSuite.allCases[Int(input[1]) % SRTPSuite.allCases.count]
    guard let sender = try? SRTPSession(keys: Fixture.keys(suite), direction: .outbound),
        let receiver = try? SRTPSession(keys: Fixture.keys(suite), direction: .inbound)
    else { fatalError("fixed-key sessions must be creatable") }
    roundTrip(input, sender: sender, receiver: receiver, rtcp: false)
    roundTrip(input, sender: sender, receiver: receiver, rtcp: true)
    return 0
}

private func roundTrip(_ input: UnsafeRawBufferPointer, sender: SRTPSession, receiver: SRTPSession, rtcp: Bool) {
    var plain = Array(input)
    plain[0] = 0x80 | (plain[0] & 0x3F)  // version 2, as every sender writes
    let room = rtcp ? sender.rtcpTrailerLength : sender.rtpTrailerLength
    plain.withUnsafeBytes { bytes in
        // The protected packet fills the whole buffer, so it too ends at the guard page, and it
        // is unprotected in place, where a received packet would sit.
        _ = try? GuardedPage.shared.withPacket(bytes, room: room) { buffer in
            let length: Int
            do {
                length =
                    try rtcp
                    ? sender.protectRTCP(buffer: buffer, length: bytes.count)
                    : sender.protect(buffer: buffer, length: bytes.count)
            } catch {
                return  // libsrtp refused the header (for example a CSRC count longer than the packet).
            }
            guard length == bytes.count + room else {
                fatalError("protect returned \(length) for \(bytes.count) + \(room)")
            }
            let restored: Int
            do {
                restored =
                    try rtcp
                    ? receiver.unprotectRTCP(buffer: buffer, length: length)
                    : receiver.unprotect(buffer: buffer, length: length)
            } catch {
                fatalError("unprotect of our own protected packet failed: \(error) (\(sender.suite), rtcp: \(rtcp))")
            }
            guard UnsafeRawBufferPointer(rebasing: buffer[..<restored]).elementsEqual(bytes) else {
                fatalError("unprotect(protect(x)) != x (\(sender.suite), rtcp: \(rtcp))")
            }
        }
    }
}

/// Fixed keys and long-lived receiving sessions. libFuzzer calls the entry point from one thread
/// only, which is what makes the unchecked global state safe here.
enum Fixture {
    static func keys(_ suite: SRTPSuite) -> SRTPKeyMaterial {
        guard let keys = material[suite] else { fatalError("every suite has fixed key material") }
        return keys
    }

    private static let material: [SRTPSuite: SRTPKeyMaterial] = Dictionary(
        uniqueKeysWithValues: SRTPSuite.allCases.map { suite in
            guard
                let keys = try? SRTPKeyMaterial(suite: suite, keyAndSalt: Array(0..<UInt8(suite.keyMaterialLength)))
            else {
                fatalError("fixed key material has the suite's length")
            }
            return (suite, keys)
        }
    )

    nonisolated(unsafe) static let receivers: [SRTPSession] = SRTPSuite.allCases.map { suite in
        guard let session = try? SRTPSession(keys: keys(suite), direction: .inbound) else {
            fatalError("fixed-key session must be creatable")
        }
        return session
    }
}

/// Two pages: the first readable and writable, the second `PROT_NONE`.
final class GuardedPage {
    static let capacity = 4096
    nonisolated(unsafe) static let shared = GuardedPage()
    private let base: UnsafeMutableRawPointer

    private init() {
        guard let mapped = mmap(nil, 2 * Self.capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            mapped != MAP_FAILED, mprotect(mapped + Self.capacity, Self.capacity, PROT_NONE) == 0
        else { fatalError("cannot map the guard pages") }
        base = mapped
    }

    deinit { munmap(base, 2 * Self.capacity) }

    /// Copies `packet` so that it plus `room` spare bytes end exactly at the guard page.
    func withPacket<T>(
        _ packet: UnsafeRawBufferPointer,
        room: Int,
        _ body: (UnsafeMutableRawBufferPointer) throws -> T
    ) throws -> T {
        let start = base + (Self.capacity - packet.count - room)
        let buffer = UnsafeMutableRawBufferPointer(start: start, count: packet.count + room)
        if let source = packet.baseAddress { buffer.baseAddress?.copyMemory(from: source, byteCount: packet.count) }
        return try body(buffer)
    }
}
