/// What a WHIP endpoint's "201 Created" gave (RFC 9725 §4.2): the session resource for PATCH and
/// DELETE, the SDP answer, and what the headers offered.
public struct WHIPSession: Sendable, Equatable {
    /// The WHIP session URL: the Location header resolved against the URL that answered.
    public var resource: WHIPURL
    /// The URL that answered 201, after any 307/308 redirects (RFC 9725 §4.5).
    public var endpoint: WHIPURL
    /// The SDP answer (application/sdp).
    public var answer: String
    /// The entity-tag of the ICE session (RFC 9725 §4.3.1), sent back in If-Match with each PATCH.
    public var etag: String?
    /// The Accept-Patch header lists application/trickle-ice-sdpfrag (RFC 8840): the session takes
    /// trickled candidates and ICE restarts by PATCH.
    public var acceptsTrickle: Bool
    /// STUN and TURN servers from `Link: <...>; rel="ice-server"` headers (RFC 9725 §4.6).
    public var iceServers: [WHIPICEServer]
    /// Link values not used, each "<target>: reason" (for a debug log).
    public var ignoredLinks: [String]

    public init(
        resource: WHIPURL,
        endpoint: WHIPURL,
        answer: String,
        etag: String? = nil,
        acceptsTrickle: Bool = false,
        iceServers: [WHIPICEServer] = [],
        ignoredLinks: [String] = []
    ) {
        self.resource = resource
        self.endpoint = endpoint
        self.answer = answer
        self.etag = etag
        self.acceptsTrickle = acceptsTrickle
        self.iceServers = iceServers
        self.ignoredLinks = ignoredLinks
    }
}
