import SDP

/// An `application/trickle-ice-sdpfrag` body (RFC 8840 §9), as WHIP sends it in PATCH requests
/// and answers to an ICE restart (RFC 9725 §4.3.2): ICE credentials and candidates, outside a
/// full description. We write ours and read the endpoint's.
public struct TrickleFragment: Sendable, Equatable {
    /// The most candidates a fragment we read may carry (as an offer's limit).
    public static let maximumCandidates = 64
    /// The longest fragment we read, in bytes.
    public static let maximumBytes = 16 * 1024

    public var credentials: ICECredentials?
    public var candidates: [ICECandidate]
    public var endOfCandidates: Bool

    public init(credentials: ICECredentials?, candidates: [ICECandidate], endOfCandidates: Bool) {
        self.credentials = credentials
        self.candidates = candidates
        self.endOfCandidates = endOfCandidates
    }

    /// RFC 8840 §9 / RFC 9725 §4.3.2 layout: the BUNDLE group, the first (tagged) m-section with
    /// its mid, then the credentials, every candidate and end-of-candidates when given.
    public func text(bundle: [String], firstMedia: String) -> String {
        var lines = ["a=group:BUNDLE \(bundle.joined(separator: " "))", "m=\(firstMedia)"]
        if let mid = bundle.first { lines.append("a=mid:\(mid)") }
        if let credentials {
            lines += ["a=ice-ufrag:\(credentials.ufrag)", "a=ice-pwd:\(credentials.password)"]
        }
        lines += candidates.map { "a=candidate:\($0.attributeValue)" }
        if endOfCandidates { lines.append("a=end-of-candidates") }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// Reads a fragment from a peer: `a=ice-ufrag` and `a=ice-pwd` (both or neither, each once),
    /// `a=candidate` lines (RFC 8839 grammar), `a=end-of-candidates`; other lines (group, m=,
    /// mid, ice-options) are skipped. Errors name the line.
    public init(parsing text: String) throws {
        guard text.utf8.count <= Self.maximumBytes else {
            throw JSEPError(
                code: .offerTooLarge,
                reason: "the fragment has \(text.utf8.count) bytes, more than \(Self.maximumBytes)"
            )
        }
        var ufrag: String?
        var password: String?
        var candidates: [ICECandidate] = []
        var end = false
        // Bytes, not Characters: "\r\n" is one Character.
        for (index, raw) in Array(text.utf8).split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            let bytes = raw.last == 0x0D ? raw.dropLast() : raw[...]
            let line = String(decoding: bytes, as: UTF8.self)
            func failure(_ problem: String) -> JSEPError {
                JSEPError(
                    code: .malformedAnswer,
                    line: index + 1,
                    reason: "line \(index + 1) (\(Excerpt.of(line))): \(problem)"
                )
            }
            if let value = line.value(after: "a=ice-ufrag:") {
                guard ufrag == nil else { throw failure("a second a=ice-ufrag") }
                ufrag = value
            } else if let value = line.value(after: "a=ice-pwd:") {
                guard password == nil else { throw failure("a second a=ice-pwd") }
                password = value
            } else if let value = line.value(after: "a=candidate:") {
                guard candidates.count < Self.maximumCandidates else {
                    throw failure("more than \(Self.maximumCandidates) candidates")
                }
                do {
                    candidates.append(try ICECandidate(attributeValue: value))
                } catch {
                    throw failure(error.problem)
                }
            } else if line == "a=end-of-candidates" {
                end = true
            }
        }
        switch (ufrag, password) {
        case (nil, nil):
            credentials = nil
        case (let ufrag?, let password?):
            do {
                credentials = try ICECredentials(ufrag: ufrag, password: password)
            } catch {
                throw JSEPError(code: .malformedAnswer, reason: "the fragment's ICE credentials: \(error.message)")
            }
        default:
            throw JSEPError(code: .noICECredentials, reason: "the fragment has only one of a=ice-ufrag and a=ice-pwd")
        }
        self.candidates = candidates
        endOfCandidates = end
    }
}

extension String {
    fileprivate func value(after prefix: String) -> String? {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : nil
    }
}
