import SDP

/// Why an offer could not be read or cannot be served, in words fit for a `subscribe-reject`.
///
/// Two families share this type because the caller does the same with both (reject the
/// subscribe, log one line): offers that do not parse (`malformedOffer`, `offerTooLarge`; `line`
/// names the offending line, and `reason` starts with it) and offers that parse but ask for
/// something this publisher cannot do (`noH264`, `noFingerprint`, …; `line` is nil). A third,
/// `invalidConfiguration`, is our own mistake: the answer's inputs were not usable.
///
/// `reason` is at most `maximumReasonBytes` of printable ASCII, so it fits the signaling
/// protocol's 512-byte `reason` without further checks, and never carries terminal escapes from
/// the offer.
public struct JSEPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem; compare codes, not reason texts, in code. New codes may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String

        init(_ name: String) { self.name = name }

        public var description: String { name }

        /// The offer breaks the SDP grammar (RFC 8866) or a WebRTC attribute's grammar, or is
        /// inconsistent in itself (a mid used twice, a BUNDLE group naming an unknown mid).
        public static let malformedOffer = Code("malformed_offer")
        /// The offer exceeds `WebRTCOffer.Limits` (bytes, lines, m-sections, formats, candidates).
        public static let offerTooLarge = Code("offer_too_large")
        /// No a=group:BUNDLE, or a section we need is outside it or has no a=mid.
        public static let notBundleable = Code("not_bundleable")
        /// We send video, and the offer has no video m-section that can receive it.
        public static let noVideo = Code("no_video")
        /// The video m-section offers no H.264 with packetization-mode=1.
        public static let noH264 = Code("no_h264")
        /// H.264 with packetization-mode=1 is offered, but no profile our stream satisfies.
        public static let h264ProfileMismatch = Code("h264_profile_mismatch")
        /// The offer's video section has none of the codecs we send (`--codecs`).
        public static let noCommonVideoCodec = Code("no_common_video_codec")
        /// We send audio, and the offer has no audio m-section that can receive it.
        public static let noAudio = Code("no_audio")
        /// The audio m-section offers no opus/48000/2.
        public static let noOpus = Code("no_opus")
        /// A media section we would answer is not DTLS-SRTP (`UDP/TLS/RTP/SAVPF`).
        public static let unsupportedTransport = Code("unsupported_transport")
        /// A media section we would answer lacks a=rtcp-mux; we send RTCP only on the RTP flow.
        public static let noRTCPMux = Code("no_rtcp_mux")
        /// No a=ice-ufrag or no a=ice-pwd for the bundled transport.
        public static let noICECredentials = Code("no_ice_credentials")
        /// No a=fingerprint, or none with a hash function we check.
        public static let noFingerprint = Code("no_fingerprint")
        /// No a=setup, or one that leaves us no DTLS role (holdconn).
        public static let unsupportedSetup = Code("unsupported_setup")
        /// A WHIP endpoint's answer breaks the SDP grammar or a WebRTC attribute's (as
        /// `malformedOffer` for offers; `line` names the line).
        public static let malformedAnswer = Code("malformed_answer")
        /// A WHIP endpoint's answer parses but does not answer our offer: other m-sections or
        /// mids, payload types we did not offer, our video rejected, no usable direction.
        public static let answerMismatch = Code("answer_mismatch")
        /// The answer's own inputs (ICE credentials, fingerprint, SSRCs, names) are unusable.
        public static let invalidConfiguration = Code("invalid_configuration")
    }

    /// Every reason fits in this many bytes (the signaling protocol allows 512).
    public static let maximumReasonBytes = 480

    public var code: Code
    /// 1-based line of the offer for parse errors; nil for rejections of a well-formed offer.
    public var line: Int?
    /// One sentence for the subscriber; parse errors read `line N (<excerpt>): <problem>`.
    public var reason: String

    public init(code: Code, line: Int? = nil, reason: String) {
        self.code = code
        self.line = line
        self.reason = Self.bounded(reason)
    }

    public var description: String { "JSEPError(\(code.name)): \(reason)" }

    /// Printable ASCII only, cut to `maximumReasonBytes`: the reason goes to another client and
    /// into logs, and may quote the offer.
    private static func bounded(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            guard out.utf8.count < maximumReasonBytes - 3 else { return out + "..." }
            out.unicodeScalars.append((0x20..<0x7F).contains(scalar.value) ? scalar : "?")
        }
        return out
    }
}
