/// When to send the next compound RTCP packet: the RFC 3550 §6.3.1 interval (Appendix A.7's
/// `rtcp_interval`), computed for us as a sender.
///
/// The deterministic interval is `avg_rtcp_size × n / rtcp_bw`, where RTCP gets 5 % of the
/// session bandwidth and senders a quarter of that while they are at most a quarter of the
/// members, raised to the minimum interval; it is then multiplied by a random factor in
/// [0.5, 1.5) so that participants do not synchronize, and divided by e − 3/2 ≈ 1.21828 to
/// compensate for the timer reconsideration algorithm's tendency to send late (§6.3.1).
///
/// Minimum interval: RFC 3550 recommends 5 s but lets senders go lower (§6.2: the minimum
/// may be scaled to 360 / session kbit/s, and the reduced minimum may be used by senders).
/// We use 1 s, as libwebrtc does for video: receivers get the NTP ↔ RTP pairing for lip sync
/// within about a second of joining, and RTT measurements stay fresh. With our two streams
/// and ~100-byte reports this costs well under 1 kbit/s. After randomization and
/// compensation the gaps fall in 0.41–1.23 s, about one report a second.
public struct RTCPSenderSchedule<Generator: RandomNumberGenerator> {
    /// RFC 3550 §6.3.1: e − 3/2.
    public static var compensation: Double { 1.21828 }

    public let configuration: RTCPIntervalConfiguration
    /// Members of the session, us included (a publisher and its receiver: 2).
    public var members: Int
    /// Members that sent RTP recently, us included.
    public var senders: Int
    /// Whether we sent RTP since the second-to-last report (RFC 3550 A.7 `we_sent`).
    public var weSent: Bool
    /// Running average of the compound packets' size in bytes, UDP and IP headers included
    /// (RFC 3550 §6.3.3 `avg_rtcp_size`).
    public private(set) var averagePacketSize: Double
    private var generator: Generator

    /// `initialPacketSize` is the expected size of our first compound packet (SR + SDES with
    /// 28 bytes of UDP/IPv4 header: about 100 bytes).
    public init(
        configuration: RTCPIntervalConfiguration,
        members: Int = 2,
        senders: Int = 1,
        initialPacketSize: Double = 100,
        generator: Generator
    ) throws(RTPError) {
        guard configuration.sessionBandwidth > 0, configuration.sessionBandwidth.isFinite,
            configuration.rtcpFraction > 0, configuration.rtcpFraction <= 1,
            configuration.minimumInterval > 0
        else {
            throw RTPError(
                .invalidConfiguration,
                "RTCP schedule needs a positive session bandwidth, an RTCP fraction in (0, 1] and a positive minimum"
            )
        }
        guard members >= 1, senders >= 0, senders <= members, initialPacketSize > 0 else {
            throw RTPError(.invalidConfiguration, "RTCP schedule with \(members) members and \(senders) senders")
        }
        self.configuration = configuration
        self.members = members
        self.senders = senders
        self.weSent = true
        self.averagePacketSize = initialPacketSize
        self.generator = generator
    }

    /// The deterministic interval of RFC 3550 A.7 in seconds, before randomization.
    public var deterministicInterval: Double {
        var bandwidth = configuration.sessionBandwidth * configuration.rtcpFraction / 8  // bytes per second
        var participants = Double(max(members, 1))
        if Double(senders) <= Double(members) * 0.25 {
            if weSent {
                bandwidth *= 0.25
                participants = Double(max(senders, 1))
            } else {
                bandwidth *= 0.75
                participants = Double(max(members - senders, 1))
            }
        }
        let minimum = Double(configuration.minimumInterval) / 1e9
        return max(averagePacketSize * participants / bandwidth, minimum)
    }

    /// A randomized interval in nanoseconds: deterministic × U[0.5, 1.5) / 1.21828.
    public mutating func nextInterval() -> UInt64 {
        let factor = Double.random(in: 0.5..<1.5, using: &generator)
        let seconds = deterministicInterval * factor / Self.compensation
        return UInt64((seconds * 1e9).rounded())
    }

    /// When to send the next report, given the monotonic time (ns) the last one went out.
    /// Send the first report with the first media packets; ask this after each one.
    public mutating func nextSendTime(after lastSend: UInt64) -> UInt64 {
        lastSend &+ nextInterval()
    }

    /// Folds the size of a compound packet just sent (bytes, with UDP/IP headers) into the
    /// average, weight 1/16 (RFC 3550 §6.3.3).
    public mutating func recordSent(packetSize: Int) {
        averagePacketSize += (Double(packetSize) - averagePacketSize) / 16
    }
}

extension RTCPSenderSchedule where Generator == SystemRandomNumberGenerator {
    /// A schedule randomized from the system generator.
    public init(configuration: RTCPIntervalConfiguration, members: Int = 2, senders: Int = 1) throws(RTPError) {
        try self.init(
            configuration: configuration,
            members: members,
            senders: senders,
            generator: SystemRandomNumberGenerator()
        )
    }
}

extension RTCPSenderSchedule: Sendable where Generator: Sendable {}

/// The inputs of the RTCP interval that do not change per report.
public struct RTCPIntervalConfiguration: Sendable, Hashable {
    /// Session bandwidth in bits per second (the media's bitrate).
    public var sessionBandwidth: Double
    /// Share of the session bandwidth for RTCP (RFC 3550 §6.2: 5 %).
    public var rtcpFraction: Double
    /// Minimum deterministic interval in nanoseconds (1 s; `RTCPSenderSchedule` says why).
    public var minimumInterval: UInt64

    public init(sessionBandwidth: Double, rtcpFraction: Double = 0.05, minimumInterval: UInt64 = 1_000_000_000) {
        self.sessionBandwidth = sessionBandwidth
        self.rtcpFraction = rtcpFraction
        self.minimumInterval = minimumInterval
    }
}
