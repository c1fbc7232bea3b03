/// Where and how a subscriber wants a publisher to send media: the subscriber's half of the
/// negotiation, passed to the publisher verbatim in `subscribe-request`. Either ports and SRTP
/// suites (SDES: the answer carries the keys), or a WebRTC offer (`offer`: ICE and DTLS-SRTP;
/// the answer is the publisher's JSEP answer) and nothing else.
public struct ReceiveDescription: Hashable, Sendable, Codable {
    public static let maxAddressBytes = 253
    public static let maxCryptoSuites = 8
    public static let maxCryptoSuiteBytes = 64

    /// An IPv4 or IPv6 literal or a host name the publisher sends RTP to; empty with an offer.
    public var address: String
    public var videoPort: Int?
    public var audioPort: Int?
    /// True when the subscriber wants RTCP on the RTP port (RFC 5761) instead of port + 1.
    public var rtcpMux: Bool
    /// SRTP suites the subscriber accepts, most preferred first, e.g. `AES_CM_128_HMAC_SHA1_80`
    /// (RFC 4568 §6.2 names). Empty means the subscriber only takes unencrypted RTP.
    public var cryptoSuites: [String]
    /// A WebRTC offer (JSEP, RFC 8829: recvonly audio and video, BUNDLE, ICE and DTLS), starting
    /// with `v=0`, at most `SignalingProtocol.maxSDPBytes`. The server does not read it further.
    public var offer: String?

    public init(address: String, videoPort: Int?, audioPort: Int?, rtcpMux: Bool, cryptoSuites: [String]) {
        self.address = address
        self.videoPort = videoPort
        self.audioPort = audioPort
        self.rtcpMux = rtcpMux
        self.cryptoSuites = cryptoSuites
        self.offer = nil
    }

    /// A WebRTC subscriber's: the offer says where and how (ICE candidates, DTLS fingerprint).
    public init(offer: String) {
        self.address = ""
        self.videoPort = nil
        self.audioPort = nil
        self.rtcpMux = true
        self.cryptoSuites = []
        self.offer = offer
    }

    enum CodingKeys: String, CodingKey {
        case address, videoPort, audioPort, rtcpMux, cryptoSuites, offer
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if let offer {
            try container.encode(offer, forKey: .offer)
            return
        }
        try container.encode(address, forKey: .address)
        try container.encodeIfPresent(videoPort, forKey: .videoPort)
        try container.encodeIfPresent(audioPort, forKey: .audioPort)
        try container.encode(rtcpMux, forKey: .rtcpMux)
        try container.encode(cryptoSuites, forKey: .cryptoSuites)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let path = container.codingPath
        if container.contains(.offer) {
            // Ports and suites belong to the SDES way; with an offer they would be ignored, and
            // a client that sends both has misunderstood one of the two.
            for key in [CodingKeys.address, .videoPort, .audioPort, .rtcpMux, .cryptoSuites]
            where container.contains(key) {
                throw SignalingError(
                    .invalidField,
                    "field \(fieldPath(path + [key])) is not allowed with \"offer\" (the offer says where to send)"
                )
            }
            let offer = try container.decode(String.self, forKey: .offer)
            self.init(offer: try FieldRules.sdp(offer, at: path + [CodingKeys.offer]))
            return
        }
        let address = try container.decode(String.self, forKey: .address)
        guard Self.isPlausibleAddress(address) else {
            throw SignalingError(
                .invalidField,
                "field \(fieldPath(path + [CodingKeys.address])): \(quoted(address)) is not an IP address or host name"
            )
        }
        let videoPort = try Self.port(container, .videoPort)
        let audioPort = try Self.port(container, .audioPort)
        guard videoPort != nil || audioPort != nil else {
            throw SignalingError(
                .missingField,
                "field \(fieldPath(path)) needs \"videoPort\", \"audioPort\" or both"
            )
        }
        let rtcpMux = try container.decode(Bool.self, forKey: .rtcpMux)
        let suites = try FieldRules.list(
            try container.decode([String].self, forKey: .cryptoSuites),
            maxCount: Self.maxCryptoSuites,
            allowEmpty: true,
            at: path + [CodingKeys.cryptoSuites]
        )
        for (index, suite) in suites.enumerated() {
            _ = try FieldRules.text(
                suite,
                maxBytes: Self.maxCryptoSuiteBytes,
                at: path + [CodingKeys.cryptoSuites, PathKey(intValue: index) ?? PathKey("\(index)")]
            )
        }
        self.init(address: address, videoPort: videoPort, audioPort: audioPort, rtcpMux: rtcpMux, cryptoSuites: suites)
    }

    private static func port(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> Int? {
        guard let port = try container.decodeIntegerIfPresent(forKey: key) else { return nil }
        guard (1...65_535).contains(port) else {
            throw SignalingError(
                .invalidField,
                "field \(fieldPath(container.codingPath + [key])): \(port) is not a port number 1–65535"
            )
        }
        return port
    }

    /// Accepts the characters of IPv4/IPv6 literals (with an optional `%zone`) and DNS names.
    /// The publisher resolves and validates further; this only keeps junk out of its SDP.
    static func isPlausibleAddress(_ address: String) -> Bool {
        let bytes = address.utf8
        guard (1...maxAddressBytes).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: ":"),
                UInt8(ascii: "-"), UInt8(ascii: "%"), UInt8(ascii: "_"):
                return true
            default:
                return false
            }
        }
    }
}
