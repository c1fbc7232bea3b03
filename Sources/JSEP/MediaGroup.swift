/// RFC 5888 §5 `a=group:<semantics> *(SP <mid>)`: m-sections that belong together. With
/// `BUNDLE` (RFC 8843) they share one transport: one ICE session, one DTLS handshake, one
/// 5-tuple. The first mid names the offerer-tagged m-section, whose transport attributes
/// (ICE credentials, fingerprint, setup) are the bundle's.
public struct MediaGroup: Sendable, Hashable {
    /// `BUNDLE`, `LS`, `FID`, … (a token; compared case-sensitively, as RFC 5888 registers them).
    public var semantics: String
    public var mids: [String]

    public init(semantics: String, mids: [String]) {
        self.semantics = semantics
        self.mids = mids
    }

    public static func bundle(_ mids: [String]) -> MediaGroup { MediaGroup(semantics: "BUNDLE", mids: mids) }

    public var isBundle: Bool { semantics == "BUNDLE" }

    /// The value after `a=group:`.
    public var attributeValue: String { ([semantics] + mids).joined(separator: " ") }
}

/// `a=msid-semantic:<semantic> *(SP <id>)` (draft-ietf-mmusic-msid before RFC 8830 dropped it;
/// Chromium writes `WMS` with no id, Firefox `WMS *`). Recorded so the answer can speak it back
/// to offerers that use it.
public struct MSIDSemantic: Sendable, Hashable {
    public var semantic: String
    public var identifiers: [String]

    public init(semantic: String, identifiers: [String] = []) {
        self.semantic = semantic
        self.identifiers = identifiers
    }
}
