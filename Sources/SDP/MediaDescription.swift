/// One RFC 8866 §5.14 media section: the `m=` line and the lines up to the next `m=`.
public struct MediaDescription: Sendable, Equatable {
    public var kind: SDPMediaKind
    public var port: UInt16
    /// The optional `/<number of ports>` after the port.
    public var portCount: UInt16?
    public var transport: SDPTransport
    /// Payload formats for RTP transports, in `m=` line order (the first is preferred), each with
    /// its `a=rtpmap` and `a=fmtp`.
    public var formats: [SDPRTPFormat]
    /// The `m=` format tokens of a non-RTP transport (for example `webrtc-datachannel`); empty for
    /// RTP transports. Their attributes are kept in `attributes`.
    public var otherFormats: [String]
    /// Media-level `c=`, overriding the session's.
    public var connection: SDPAddress?
    public var direction: SDPDirection?
    /// RFC 5888 `a=mid`.
    public var mid: String?
    /// RFC 3605 `a=rtcp`: where RTCP goes when not RTP port + 1.
    public var rtcp: SDPRTCPAttribute?
    /// RFC 5761 `a=rtcp-mux`: RTCP shares the RTP port.
    public var rtcpMux: Bool
    /// RFC 4568 `a=crypto` lines. They must sit in the media section: ffmpeg ignores a session-level
    /// one and then feeds ciphertext to the decoder.
    public var crypto: [SDPCrypto]
    /// RFC 5576 `a=ssrc` lines.
    public var ssrcAttributes: [SDPSSRCAttribute]
    /// RFC 5576 §4.2 `a=ssrc-group` lines (`FID` pairs a stream with its RTX stream).
    public var ssrcGroups: [SDPSSRCGroup]
    /// RFC 4585 §4.2 `a=rtcp-fb` lines, in order.
    public var rtcpFeedback: [SDPRTCPFeedback]
    /// RFC 8851 `a=rid` lines of an RTP section, in order (each rid-id once).
    public var rids: [SDPRID]
    /// RFC 8853 `a=simulcast` of an RTP section (at most one).
    public var simulcast: SDPSimulcast?
    /// Every other media-level attribute, written after the typed ones, in order.
    public var attributes: [SDPAttribute]

    public init(
        kind: SDPMediaKind,
        port: UInt16,
        portCount: UInt16? = nil,
        transport: SDPTransport,
        formats: [SDPRTPFormat] = [],
        otherFormats: [String] = [],
        connection: SDPAddress? = nil,
        direction: SDPDirection? = nil,
        mid: String? = nil,
        rtcp: SDPRTCPAttribute? = nil,
        rtcpMux: Bool = false,
        crypto: [SDPCrypto] = [],
        ssrcAttributes: [SDPSSRCAttribute] = [],
        ssrcGroups: [SDPSSRCGroup] = [],
        rtcpFeedback: [SDPRTCPFeedback] = [],
        rids: [SDPRID] = [],
        simulcast: SDPSimulcast? = nil,
        attributes: [SDPAttribute] = []
    ) {
        self.kind = kind
        self.port = port
        self.portCount = portCount
        self.transport = transport
        self.formats = formats
        self.otherFormats = otherFormats
        self.connection = connection
        self.direction = direction
        self.mid = mid
        self.rtcp = rtcp
        self.rtcpMux = rtcpMux
        self.crypto = crypto
        self.ssrcAttributes = ssrcAttributes
        self.ssrcGroups = ssrcGroups
        self.rtcpFeedback = rtcpFeedback
        self.rids = rids
        self.simulcast = simulcast
        self.attributes = attributes
    }

    /// The format with this payload type, if the `m=` line lists it.
    public func format(payloadType: UInt8) -> SDPRTPFormat? {
        formats.first { $0.payloadType == payloadType }
    }
}

/// RFC 8866 §5.14 `<media>`: `audio`, `video`, `application`, ... (extensible).
public struct SDPMediaKind: RawRepresentable, Sendable, Hashable {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let audio = SDPMediaKind(rawValue: "audio")
    public static let video = SDPMediaKind(rawValue: "video")
    public static let application = SDPMediaKind(rawValue: "application")
}

/// RFC 8866 §5.14 `<proto>` (extensible).
public struct SDPTransport: RawRepresentable, Sendable, Hashable {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// RFC 3551 plain RTP: what we write when the stream is not encrypted.
    public static let rtpAVP = SDPTransport(rawValue: "RTP/AVP")
    /// RFC 3711 SRTP with keys in `a=crypto`.
    public static let rtpSAVP = SDPTransport(rawValue: "RTP/SAVP")
    /// RFC 4585 / RFC 5124 with RTCP feedback.
    public static let rtpAVPF = SDPTransport(rawValue: "RTP/AVPF")
    public static let rtpSAVPF = SDPTransport(rawValue: "RTP/SAVPF")
    /// WebRTC's DTLS-SRTP profile (RFC 5764).
    public static let udpTLSRTPSAVPF = SDPTransport(rawValue: "UDP/TLS/RTP/SAVPF")

    /// `RTP/SAVP` when the stream is encrypted, `RTP/AVP` when not.
    public static func rtp(encrypted: Bool) -> SDPTransport { encrypted ? .rtpSAVP : .rtpAVP }

    /// Whether the format list holds RTP payload type numbers (any profile containing `RTP/`).
    public var carriesRTP: Bool { rawValue.contains("RTP/") }
}
