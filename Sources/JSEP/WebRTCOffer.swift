import SDP

/// A JSEP offer (RFC 8829) as a WebRTC peer sends it: the strict RFC 8866 parse, plus the
/// attributes WebRTC adds, each read against its RFC grammar and resolved per m-section.
///
/// Session-level defaults (Firefox writes `a=fingerprint` there, some stacks `a=ice-ufrag`) are
/// folded into each section, so `sections[i]` holds what applies to that m-section. Parsing
/// checks syntax and internal consistency only (unique mids, BUNDLE groups naming existing
/// mids, limits); whether we can serve the offer is `WebRTCAnswer`'s question.
///
/// Any description parses, not only offers: an answer we wrote reads back here too, which the
/// tests use to check answers.
public struct WebRTCOffer: Sendable, Equatable {
    /// Bounds on what an offer may hold, checked before or while it is read; a real browser
    /// offer is 3–8 KiB with 2–4 m-sections, 30–60 formats in total and a handful of candidates.
    public struct Limits: Sendable, Equatable {
        /// Whole offer in bytes (also `SDPParser`'s line count and length limits apply).
        public var maximumBytes: Int
        public var maximumMediaSections: Int
        /// Format tokens on one m= line. RTP sections cannot exceed 128 (distinct payload
        /// types 0–127); this bounds other transports' lists.
        public var maximumFormatsPerSection: Int
        /// `a=candidate` lines in the whole offer, mDNS ones included.
        public var maximumCandidates: Int

        public init(
            maximumBytes: Int = 64 * 1024,
            maximumMediaSections: Int = 16,
            maximumFormatsPerSection: Int = 256,
            maximumCandidates: Int = 64
        ) {
            self.maximumBytes = maximumBytes
            self.maximumMediaSections = maximumMediaSections
            self.maximumFormatsPerSection = maximumFormatsPerSection
            self.maximumCandidates = maximumCandidates
        }
    }

    /// One m-section with the WebRTC attributes that apply to it.
    public struct MediaSection: Sendable, Equatable {
        /// 0-based position among the m-sections.
        public var index: Int
        /// 1-based line of its `m=` line, for messages.
        public var line: Int
        /// The strict parse: formats with rtpmap and fmtp, rtcp-fb, ssrc, mid, rtcp-mux, and the
        /// attributes without a typed field.
        public var media: MediaDescription
        /// Its own direction, else the session's, else sendrecv (RFC 8866 §6.7).
        public var direction: SDPDirection
        /// ufrag and password, each from this section or else the session level.
        public var iceUfrag: String?
        public var icePassword: String?
        /// `a=ice-options` tags (`trickle`, …), this section's or else the session's.
        public var iceOptions: [String]
        /// This section's `a=fingerprint` lines, or the session's when it has none.
        public var fingerprints: [CertificateFingerprint]
        public var setup: ConnectionSetup?
        /// RFC 5506 `a=rtcp-rsize`: the offerer accepts reduced-size RTCP.
        public var rtcpReducedSize: Bool
        /// RFC 8843 `a=bundle-only`: port 0 here does not reject the section.
        public var bundleOnly: Bool
        /// Session-level mappings first, then this section's.
        public var headerExtensions: [HeaderExtensionMapping]
        /// Candidates on IP literals, in order.
        public var candidates: [ICECandidate]
        /// Candidates on host names (mDNS `.local` or other names); not resolved, not used.
        public var skippedCandidates: [ICECandidate]
        /// RFC 8840 `a=end-of-candidates`, here or at session level.
        public var endOfCandidates: Bool

        public var kind: SDPMediaKind { media.kind }
        public var mid: String? { media.mid }

        /// The ICE credentials when both halves are present.
        public var iceCredentials: ICECredentials? {
            guard let iceUfrag, let icePassword else { return nil }
            return ICECredentials(unchecked: iceUfrag, icePassword)
        }

        /// RFC 3264 §6: port 0 rejects (or, in an offer, disables) the section, unless RFC 8843's
        /// bundle-only says it rides on the bundle's transport.
        public var isDisabled: Bool { media.port == 0 && !bundleOnly }

        /// The RTX payload type the offer pairs with `payloadType` through `apt` (RFC 4588 §8.1).
        public func retransmissionPayloadType(for payloadType: UInt8) -> UInt8? {
            media.retransmissionFormat(for: payloadType)?.payloadType
        }
    }

    public var description: SessionDescription
    public var sections: [MediaSection]
    /// Every `a=group` line, in order.
    public var groups: [MediaGroup]
    public var msidSemantic: MSIDSemantic?
    /// RFC 8445 §2.5 / RFC 8839 §5.3 `a=ice-lite`: the offerer only answers checks.
    public var isICELite: Bool
    /// RFC 8285 §6 `a=extmap-allow-mixed` (session level or any section).
    public var allowsMixedHeaderExtensions: Bool

    /// Parses `text`; every syntax error names its line (`JSEPError.line`).
    public init(parsing text: String, limits: Limits = Limits()) throws {
        guard text.utf8.count <= limits.maximumBytes else {
            throw JSEPError(
                code: .offerTooLarge,
                reason: "the offer has \(text.utf8.count) bytes, more than the limit of \(limits.maximumBytes)"
            )
        }
        try self.init(parsing: Array(text.utf8), limits: limits)
    }

    public init(parsing bytes: [UInt8], limits: Limits = Limits()) throws {
        self = try WebRTCOfferParser.parse(bytes, limits: limits)
    }

    init(
        description: SessionDescription,
        sections: [MediaSection],
        groups: [MediaGroup],
        msidSemantic: MSIDSemantic?,
        isICELite: Bool,
        allowsMixedHeaderExtensions: Bool
    ) {
        self.description = description
        self.sections = sections
        self.groups = groups
        self.msidSemantic = msidSemantic
        self.isICELite = isICELite
        self.allowsMixedHeaderExtensions = allowsMixedHeaderExtensions
    }

    /// The first `a=group:BUNDLE` (JSEP offers have at most one; RFC 8829 §5.2.1).
    public var bundleGroup: MediaGroup? { groups.first(where: \.isBundle) }

    public func section(mid: String) -> MediaSection? { sections.first { $0.mid == mid } }
}
