import Glibc
import SRTP

/// libFuzzer entry for SRTP. Every input is
///  1. unprotected as SRTP and as SRTCP by fixed-key receiving sessions of every suite: it must
///     only throw (or, for a genuine packet, succeed), never crash;
///  2. taken as a plain RTP and RTCP packet, protected by a sending session and unprotected by a
///     receiving one that have never seen its SSRC (so libsrtp gives it a fresh stream, as a new
///     session would): if protect succeeds, unprotect must return the original bytes.
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
    roundTrip(input, suite: suite, rtcp: false)
    roundTrip(input, suite: suite, rtcp: true)
    return 0
}

private func roundTrip(_ input: UnsafeRawBufferPointer, suite: SRTPSuite, rtcp: Bool) {
    var plain = Array(input)
    plain[0] = 0x80 | (plain[0] & 0x3F)  // version 2, as every sender writes
    // The SSRC: bytes 8-11 of an RTP header, 4-7 of an RTCP one (the input has at least 12).
    let ssrcOffset = rtcp ? 4 : 8
    let ssrc = plain[ssrcOffset..<ssrcOffset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    let (sender, receiver) = Fixture.sessions(suite, rtcp: rtcp, newTo: ssrc)
    let room = rtcp ? sender.rtcpTrailerLength : sender.rtpTrailerLength
    let page = GuardedPage.shared
    let protected: [UInt8]
    do {
        protected = try plain.withUnsafeBytes { bytes in
            try page.withPacket(bytes, room: room) { buffer in
                let length =
                    try rtcp
                    ? sender.protectRTCP(buffer: buffer, length: bytes.count)
                    : sender.protect(buffer: buffer, length: bytes.count)
                guard length == bytes.count + room else {
                    fatalError("protect returned \(length) for \(bytes.count) + \(room)")
                }
                return Array(UnsafeRawBufferPointer(rebasing: buffer[..<length]))
            }
        }
    } catch {
        return  // libsrtp refused the header (for example a CSRC count longer than the packet).
    }
    do {
        let restored = try protected.withUnsafeBytes { bytes in
            try page.withPacket(bytes, room: 0) { buffer in
                let length =
                    try rtcp
                    ? receiver.unprotectRTCP(buffer: buffer, length: bytes.count)
                    : receiver.unprotect(buffer: buffer, length: bytes.count)
                return Array(UnsafeRawBufferPointer(rebasing: buffer[..<length]))
            }
        }
        guard restored == plain else { fatalError("unprotect(protect(x)) != x (\(suite), rtcp: \(rtcp))") }
    } catch {
        fatalError("unprotect of our own protected packet failed: \(error) (\(suite), rtcp: \(rtcp))")
    }
}

/// Fixed keys and long-lived sessions. libFuzzer calls the entry point from one thread only, which
/// is what makes the unchecked global state safe here.
enum Fixture {
    /// A sending and a receiving session for the round trips of one suite and packet kind, and the
    /// SSRCs they have been given.
    final class SessionPair {
        let sender: SRTPSession
        let receiver: SRTPSession
        var ssrcs: Set<UInt32> = []

        init(_ suite: SRTPSuite) {
            guard let sender = try? SRTPSession(keys: keys(suite), direction: .outbound),
                let receiver = try? SRTPSession(keys: keys(suite), direction: .inbound)
            else { fatalError("fixed-key sessions must be creatable") }
            self.sender = sender
            self.receiver = receiver
        }
    }

    struct PairKey: Hashable {
        let suite: SRTPSuite
        let rtcp: Bool
    }

    /// Creating a session derives its keys and makes a few dozen allocations; four new sessions
    /// per input were half of this target's time. libsrtp keeps state per SSRC only (a stream with
    /// its rollover counter and replay windows, cloned from the session's template on the SSRC's
    /// first packet), so a pair is reused for SSRCs it has not seen: the packet then meets a fresh
    /// stream, as in a new session. A repeated SSRC, or more than `streamsPerPair`, gets a new pair.
    nonisolated(unsafe) private static var pairs: [PairKey: SessionPair] = [:]
    private static let streamsPerPair = 64
    nonisolated(unsafe) static var created = 0
    nonisolated(unsafe) static var calls = 0

    static func sessions(_ suite: SRTPSuite, rtcp: Bool, newTo ssrc: UInt32) -> (SRTPSession, SRTPSession) {
        let key = PairKey(suite: suite, rtcp: rtcp)
        calls += 1
        if let pair = pairs[key], pair.ssrcs.count < streamsPerPair, pair.ssrcs.insert(ssrc).inserted {
            return (pair.sender, pair.receiver)
        }
        let pair = SessionPair(suite)
        created += 1
        if created % 4096 == 0 { print("pairs created: \(created) calls: \(calls)") }
        pair.ssrcs.insert(ssrc)
        pairs[key] = pair
        return (pair.sender, pair.receiver)
    }

    static func keys(_ suite: SRTPSuite) -> SRTPKeyMaterial {
        guard let keys = try? SRTPKeyMaterial(suite: suite, keyAndSalt: Array(0..<UInt8(suite.keyMaterialLength)))
        else {
            fatalError("fixed key material has the suite's length")
        }
        return keys
    }

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
