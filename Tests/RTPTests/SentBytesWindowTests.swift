import RTP
import Testing

/// `SentBytesWindow`: the video bytes of the last half second, which a receiver that never
/// reported may have a share of resent.
@Suite("Sent bytes over a sliding window")
struct SentBytesWindowTests {
    static let ms: UInt64 = 1_000_000

    @Test("bytes count for one window, leave slot by slot, and a long pause empties it")
    func slidingWindow() {
        var window = SentBytesWindow(window: 500 * Self.ms)
        let start: UInt64 = 10_000 * Self.ms
        // 1200 bytes every 10 ms for 500 ms: 50 packets.
        for index in 0..<50 { window.add(1200, at: start + UInt64(index) * 10 * Self.ms) }
        #expect(window.bytes(at: start + 490 * Self.ms) == 60_000)
        // 500 kbit over 0.5 s is 960 kbit/s.
        #expect(window.bitsPerSecond(at: start + 490 * Self.ms) == 960_000)
        // 100 ms later the first two 50 ms slots have left (10 packets).
        #expect(window.bytes(at: start + 590 * Self.ms) == 48_000)
        // Time going back (another thread's older `now`) changes nothing.
        #expect(window.bytes(at: start) == 48_000)
        // A pause longer than the window leaves nothing.
        #expect(window.bytes(at: start + 2_000 * Self.ms) == 0)
        window.add(500, at: start + 2_001 * Self.ms)
        #expect(window.bytes(at: start + 2_002 * Self.ms) == 500)
    }
}
