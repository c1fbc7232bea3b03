import Testing

@testable import RTP

@Suite("NTP time, RTCP interval and sender reports")
struct RTCPTimingTests {
    @Test("NTP timestamps from wall-clock nanoseconds")
    func ntpFromUnix() {
        let epoch = NTPTimestamp(unixNanoseconds: 0)
        #expect(epoch.seconds == 2_208_988_800)
        #expect(epoch.fraction == 0)
        let half = NTPTimestamp(unixNanoseconds: 1_500_000_000)
        #expect(half.seconds == 2_208_988_801)
        #expect(half.fraction == 0x8000_0000)
        #expect(half.middle32 == UInt32(truncatingIfNeeded: 2_208_988_801 << 16) | 0x8000)
        #expect(NTPTimestamp(seconds: 0x0001_0002, fraction: 0x0003_0004).middle32 == 0x0002_0003)
    }

    @Test("the NTP clock maps the monotonic clock through one anchor")
    func ntpClock() {
        let clock = NTPClock(monotonicReference: 10_000_000_000, unixNanosecondsReference: 1_700_000_000_000_000_000)
        #expect(
            clock.timestamp(atMonotonic: 10_250_000_000) == NTPTimestamp(unixNanoseconds: 1_700_000_000_250_000_000)
        )
        #expect(
            clock.timestamp(atMonotonic: 9_000_000_000) == NTPTimestamp(unixNanoseconds: 1_699_999_999_000_000_000)
        )
        let system = NTPClock.system()
        #expect(system.unixNanosecondsReference > 1_600_000_000_000_000_000)
    }

    @Test("round-trip time from LSR and DLSR (RFC 3550 §6.4.1)")
    func roundTrip() {
        let arrival = NTPTimestamp(seconds: 5, fraction: 0x8000_0000)  // middle 32 bits 0x0005_8000
        var report = RTCPReceptionReport(ssrc: 1, lastSenderReport: 0x0005_0000, delaySinceLastSenderReport: 0x4000)
        #expect(report.roundTripTime(arrival: arrival) == 250_000_000)
        report.delaySinceLastSenderReport = 0x1_0000
        #expect(report.roundTripTime(arrival: arrival) == nil)  // negative
        report.lastSenderReport = 0
        #expect(report.roundTripTime(arrival: arrival) == nil)  // no SR received yet
    }

    static let oneSecond = RTCPIntervalConfiguration(sessionBandwidth: 2_000_000)

    @Test("interval: 1 s minimum × [0.5, 1.5) / 1.21828, pinned by the injected generator")
    func intervalBounds() throws {
        // Word 0 draws the factor 0.5; the largest word whose draw stays below 1.5 draws 1.5 − 2⁻⁵².
        // (UInt64.max itself rounds to 1.5, which the standard library redraws forever.)
        var low = try RTCPSenderSchedule(configuration: Self.oneSecond, generator: ScriptedGenerator(words: [0]))
        #expect(low.deterministicInterval == 1.0)
        #expect(low.nextInterval() == UInt64((0.5 / 1.21828 * 1e9).rounded()))
        var high = try RTCPSenderSchedule(
            configuration: Self.oneSecond,
            generator: ScriptedGenerator(words: [.max - 2048])
        )
        let top = high.nextInterval()
        #expect(top <= UInt64((1.5 / 1.21828 * 1e9).rounded()))
        #expect(top > UInt64((1.4999 / 1.21828 * 1e9).rounded()))
        #expect(high.nextSendTime(after: 5_000_000_000) == 5_000_000_000 + top)
    }

    @Test("seeded schedules replay and average about 0.82 s")
    func seeded() throws {
        var first = try RTCPSenderSchedule(configuration: Self.oneSecond, generator: SeededGenerator(seed: 5))
        var second = try RTCPSenderSchedule(configuration: Self.oneSecond, generator: SeededGenerator(seed: 5))
        var total: UInt64 = 0
        for _ in 0..<1000 {
            let interval = first.nextInterval()
            #expect(interval == second.nextInterval())
            #expect(interval >= 410_000_000 && interval <= 1_232_000_000)
            total += interval
        }
        let mean = Double(total) / 1000 / 1e9
        #expect(abs(mean - 1 / 1.21828) < 0.03)
    }

    @Test("low bandwidth stretches the interval as RFC 3550 A.7 computes it")
    func bandwidthLimited() throws {
        // 8 kbit/s session: RTCP gets 50 B/s. One sender of two members is more than a
        // quarter, so both share it: 2 × 100 B / 50 B/s = 4 s.
        let configuration = RTCPIntervalConfiguration(sessionBandwidth: 8_000)
        var schedule = try RTCPSenderSchedule(configuration: configuration, generator: SeededGenerator(seed: 1))
        #expect(schedule.deterministicInterval == 4.0)
        // One sender of eight: senders get a quarter, 12.5 B/s, for 1 sender: 8 s.
        schedule.members = 8
        #expect(schedule.deterministicInterval == 8.0)
        schedule.weSent = false
        schedule.members = 4
        // Receivers share three quarters among the 3 non-senders: 300 B / 37.5 B/s.
        #expect(schedule.deterministicInterval == 8.0)
        schedule.recordSent(packetSize: 260)
        #expect(schedule.averagePacketSize == 110)
        #expect(throws: RTPError.self) {
            try RTCPSenderSchedule(configuration: .init(sessionBandwidth: 0), generator: SeededGenerator(seed: 1))
        }
        _ = try RTCPSenderSchedule(configuration: .init(sessionBandwidth: 1_000_000))
    }

    static func builder() throws -> SenderReportBuilder {
        let origin: UInt64 = 20_000_000_000
        return try SenderReportBuilder(
            ssrc: 0x1122_3344,
            cname: "alice",
            rtpClock: RTPClock(clockRate: 90_000, origin: origin, timestampBase: 1000),
            ntpClock: NTPClock(monotonicReference: origin, unixNanosecondsReference: 1_700_000_000_000_000_000)
        )
    }

    @Test("a sender report pairs NTP and RTP time of the same capture-clock instant")
    func senderReportPairing() throws {
        var builder = try Self.builder()
        builder.recordPacketSent(payloadLength: 1000)
        builder.recordPacketSent(payloadLength: 500)
        builder.recordPacketSent(payloadLength: 10)
        let report = builder.senderReport(at: 22_500_000_000)
        #expect(report.ntpTimestamp == NTPTimestamp(unixNanoseconds: 1_700_000_002_500_000_000))
        #expect(report.rtpTimestamp == 1000 + 225_000)
        #expect(report.packetCount == 3)
        #expect(report.octetCount == 1510)
        #expect(report.ssrc == 0x1122_3344)
    }

    @Test("writeCompound writes SR + SDES byte-identical to the value API")
    func writeCompound() throws {
        var builder = try Self.builder()
        builder.recordPacketSent(payloadLength: 1200)
        let buffer = try RTPPacketBuffer(capacity: 300)
        try builder.writeCompound(at: 21_000_000_000, into: buffer)
        let packets = builder.compound(at: 21_000_000_000)
        #expect(buffer.copyBytes() == (try RTCPPacket.serialize(packets)))
        #expect(try RTCPPacket.parseCompound(buffer.copyBytes()) == packets)
        #expect(buffer.count == 28 + 16)
        #expect(
            Array(buffer.copyBytes()[28...]) == [
                0x81, 0xCA, 0x00, 0x03, 0x11, 0x22, 0x33, 0x44, 0x01, 0x05, 0x61, 0x6C, 0x69, 0x63, 0x65, 0x00,
            ]
        )
    }

    @Test("goodbye: SR + SDES + BYE with the reason")
    func goodbye() throws {
        let builder = try Self.builder()
        let buffer = try RTPPacketBuffer(capacity: 300)
        try builder.writeGoodbye(at: 21_000_000_000, reason: "stream ended", into: buffer)
        let parsed = try RTCPPacket.parseCompound(buffer.copyBytes())
        #expect(parsed == builder.goodbyeCompound(at: 21_000_000_000, reason: "stream ended"))
        #expect(parsed.last == .goodbye(RTCPGoodbye(sources: [0x1122_3344], reason: "stream ended")))
        let small = try RTPPacketBuffer(capacity: 40)
        let error = #expect(throws: RTPError.self) { try builder.writeCompound(at: 0, into: small) }
        #expect(error?.code == .bufferTooSmall)
    }

    @Test("rejects empty and overlong CNAMEs")
    func cname() throws {
        let clock = try RTPClock(clockRate: 90_000, origin: 0, timestampBase: 0)
        let ntp = NTPClock(monotonicReference: 0, unixNanosecondsReference: 0)
        #expect(throws: RTPError.self) { try SenderReportBuilder(ssrc: 1, cname: "", rtpClock: clock, ntpClock: ntp) }
        #expect(throws: RTPError.self) {
            try SenderReportBuilder(ssrc: 1, cname: String(repeating: "c", count: 256), rtpClock: clock, ntpClock: ntp)
        }
    }
}
