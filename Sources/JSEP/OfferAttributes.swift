import SDP

/// Attributes RFC 8839, RFC 8122, RFC 8842, RFC 8840 and RFC 8285 allow at session level and in
/// m-sections; a section's own value wins over the session's.
struct CommonAttributes {
    var iceUfrag: String?
    var icePassword: String?
    var iceOptions: [String]?
    var fingerprints: [CertificateFingerprint] = []
    var setup: ConnectionSetup?
    var endOfCandidates = false
    var allowsMixedHeaderExtensions = false
    var headerExtensionLines: [(HeaderExtensionMapping, OfferLine)] = []

    var headerExtensions: [HeaderExtensionMapping] { headerExtensionLines.map(\.0) }

    /// Returns false when `name` is not one of these attributes.
    mutating func add(_ name: Substring, _ value: Substring?, _ line: OfferLine) throws -> Bool {
        switch name {
        case "ice-ufrag":
            let value = try Attribute.value(value, line)
            try Attribute.first(iceUfrag == nil, line)
            if let problem = ICECredentials.problem(
                with: value,
                name: "ice-ufrag",
                lengths: ICECredentials.ufragLengths
            ) {
                throw line.error(problem)
            }
            iceUfrag = String(value)
        case "ice-pwd":
            let value = try Attribute.value(value, line)
            try Attribute.first(icePassword == nil, line)
            if let problem = ICECredentials.problem(
                with: value,
                name: "ice-pwd",
                lengths: ICECredentials.passwordLengths
            ) {
                throw line.error(problem)
            }
            icePassword = String(value)
        case "ice-options":
            let value = try Attribute.value(value, line)
            try Attribute.first(iceOptions == nil, line)
            let tags = value.split(separator: " ", omittingEmptySubsequences: false)
            guard tags.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(ICECredentials.isICEChar) }) else {
                throw line.error("a=ice-options tags are ice-chars separated by single spaces (RFC 8839 section 5.6)")
            }
            iceOptions = tags.map(String.init)
        case "fingerprint":
            do {
                fingerprints.append(try CertificateFingerprint(attributeValue: try Attribute.value(value, line)))
            } catch let error as FingerprintSyntaxError {
                throw line.error(error.problem)
            }
        case "setup":
            let value = try Attribute.value(value, line)
            try Attribute.first(setup == nil, line)
            guard let role = ConnectionSetup(rawValue: String(value)) else {
                throw line.error("a=setup is not active, passive, actpass or holdconn")
            }
            setup = role
        case "end-of-candidates":
            try Attribute.noValue(value, line)
            endOfCandidates = true
        case "extmap-allow-mixed":
            try Attribute.noValue(value, line)
            allowsMixedHeaderExtensions = true
        case "extmap":
            let mapping: HeaderExtensionMapping
            do {
                mapping = try HeaderExtensionMapping(attributeValue: try Attribute.value(value, line))
            } catch let error as ExtmapSyntaxError {
                throw line.error(error.problem)
            }
            guard !headerExtensionLines.contains(where: { $0.0.id == mapping.id }) else {
                throw line.error("a second a=extmap with id \(mapping.id) at this level")
            }
            headerExtensionLines.append((mapping, line))
        default:
            return false
        }
        return true
    }
}

/// The session level: common attributes plus the ones only a session may have.
struct SessionAttributes {
    var common = CommonAttributes()
    var groups: [(MediaGroup, OfferLine)] = []
    var msidSemantic: MSIDSemantic?
    var isICELite = false

    mutating func add(_ name: Substring, _ value: Substring?, _ line: OfferLine) throws {
        if try common.add(name, value, line) { return }
        switch name {
        case "group":
            // RFC 5888 §5: a=group:<semantics> *(SP identification-tag).
            let fields = try Attribute.value(value, line).split(separator: " ", omittingEmptySubsequences: false)
            guard fields.allSatisfy(Token.isToken) else {
                throw line.error("a=group is '<semantics> <mid> ...', tokens separated by single spaces")
            }
            groups.append((MediaGroup(semantics: String(fields[0]), mids: fields.dropFirst().map(String.init)), line))
        case "msid-semantic":
            // Chromium writes "a=msid-semantic: WMS", with a space first.
            let value = try Attribute.value(value, line)
            let fields = value.split(separator: " ", omittingEmptySubsequences: true)
            guard let semantic = fields.first, fields.allSatisfy(Token.isVisible) else {
                throw line.error("a=msid-semantic needs a semantic token")
            }
            try Attribute.first(msidSemantic == nil, line)
            msidSemantic = MSIDSemantic(semantic: String(semantic), identifiers: fields.dropFirst().map(String.init))
        case "ice-lite":
            try Attribute.noValue(value, line)
            isICELite = true
        case "candidate", "rtcp-rsize", "bundle-only", "mid", "msid":
            throw line.error("a=\(name) belongs in an m-section, not at session level")
        default:
            break
        }
    }
}

/// One m-section's WebRTC attributes, before session defaults are folded in.
struct SectionAttributes {
    let mLine: OfferLine
    var common = CommonAttributes()
    var midLine: OfferLine?
    var rtcpReducedSize = false
    var bundleOnly = false
    var candidates: [ICECandidate] = []
    var skippedCandidates: [ICECandidate] = []

    init(mLine: OfferLine) { self.mLine = mLine }

    mutating func add(_ name: Substring, _ value: Substring?, _ line: OfferLine) throws {
        if try common.add(name, value, line) { return }
        switch name {
        case "mid":
            midLine = line
        case "rtcp-rsize":
            try Attribute.noValue(value, line)
            rtcpReducedSize = true
        case "bundle-only":
            try Attribute.noValue(value, line)
            bundleOnly = true
        case "candidate":
            let candidate: ICECandidate
            do {
                candidate = try ICECandidate(attributeValue: try Attribute.value(value, line))
            } catch let error as CandidateSyntaxError {
                throw line.error(error.problem)
            }
            if case .ip = candidate.address {
                candidates.append(candidate)
            } else {
                skippedCandidates.append(candidate)
            }
        case "group", "msid-semantic", "ice-lite":
            throw line.error("a=\(name) is a session-level attribute, not one of an m-section")
        default:
            break
        }
    }
}

/// Checks shared by the attribute readers.
enum Attribute {
    static func value(_ value: Substring?, _ line: OfferLine) throws -> Substring {
        guard let value, !value.isEmpty else { throw line.error("a=\(line.attribute.name) needs a value") }
        return value
    }

    static func noValue(_ value: Substring?, _ line: OfferLine) throws {
        guard value == nil else { throw line.error("a=\(line.attribute.name) takes no value") }
    }

    static func first(_ isFirst: Bool, _ line: OfferLine) throws {
        guard isFirst else { throw line.error("a second a=\(line.attribute.name) at this level") }
    }
}
