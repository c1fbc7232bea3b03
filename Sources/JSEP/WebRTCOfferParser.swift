import SDP

/// Reads an offer in two passes: `SDPParser` checks RFC 8866 and types the generic media
/// attributes (rtpmap, fmtp, rtcp-fb, ssrc, mid, rtcp-mux, direction); then the lines are walked
/// again (`OfferLine`) to read the WebRTC attributes with their line numbers and resolve them
/// per m-section.
enum WebRTCOfferParser {
    static func parse(_ bytes: [UInt8], limits: WebRTCOffer.Limits) throws -> WebRTCOffer {
        guard bytes.count <= limits.maximumBytes else {
            throw JSEPError(
                code: .offerTooLarge,
                reason: "the offer has \(bytes.count) bytes, more than the limit of \(limits.maximumBytes)"
            )
        }
        let description: SessionDescription
        do {
            description = try SDPParser.parse(bytes: bytes, limits: SDPParser.Limits(maximumBytes: limits.maximumBytes))
        } catch let error as SDPError {
            throw Self.error(from: error, in: bytes)
        }
        var session = SessionAttributes()
        var sections: [SectionAttributes] = []
        var candidateLines = 0
        for line in OfferLine.lines(of: bytes) {
            if line.type == "m" {
                guard sections.count < limits.maximumMediaSections else {
                    throw line.error(
                        "more than \(limits.maximumMediaSections) m-sections",
                        code: .offerTooLarge
                    )
                }
                let media = description.media[sections.count]
                guard media.formats.count + media.otherFormats.count <= limits.maximumFormatsPerSection else {
                    throw line.error(
                        "more than \(limits.maximumFormatsPerSection) formats on one m= line",
                        code: .offerTooLarge
                    )
                }
                sections.append(SectionAttributes(mLine: line))
                continue
            }
            guard line.type == "a" else { continue }
            let (name, value) = line.attribute
            if name == "candidate" {
                candidateLines += 1
                guard candidateLines <= limits.maximumCandidates else {
                    throw line.error("more than \(limits.maximumCandidates) a=candidate lines", code: .offerTooLarge)
                }
            }
            if sections.isEmpty {
                try session.add(name, value, line)
            } else {
                try sections[sections.count - 1].add(name, value, line)
            }
        }
        return try build(description, session: session, sections: sections)
    }

    /// Resolves session defaults into each section and checks mids and groups.
    private static func build(
        _ description: SessionDescription,
        session: SessionAttributes,
        sections: [SectionAttributes]
    ) throws -> WebRTCOffer {
        var result: [WebRTCOffer.MediaSection] = []
        var midLines: [String: Int] = [:]
        let common = session.common
        for (index, attributes) in sections.enumerated() {
            let media = description.media[index]
            if let mid = media.mid, let midLine = attributes.midLine {
                guard midLines[mid] == nil else {
                    throw midLine.error("mid \(Excerpt.quoted(mid)) is already used by another m-section")
                }
                midLines[mid] = midLine.number
            }
            var extensions = common.headerExtensions
            for (mapping, line) in attributes.common.headerExtensionLines {
                if let earlier = extensions.first(where: { $0.id == mapping.id }) {
                    guard earlier == mapping else {
                        throw line.error("extmap id \(mapping.id) is already mapped at session level")
                    }
                    continue
                }
                extensions.append(mapping)
            }
            let own = attributes.common
            result.append(
                WebRTCOffer.MediaSection(
                    index: index,
                    line: attributes.mLine.number,
                    media: media,
                    direction: media.direction ?? description.direction ?? .sendrecv,
                    iceUfrag: own.iceUfrag ?? common.iceUfrag,
                    icePassword: own.icePassword ?? common.icePassword,
                    iceOptions: own.iceOptions ?? common.iceOptions ?? [],
                    fingerprints: own.fingerprints.isEmpty ? common.fingerprints : own.fingerprints,
                    setup: own.setup ?? common.setup,
                    rtcpReducedSize: attributes.rtcpReducedSize,
                    bundleOnly: attributes.bundleOnly,
                    headerExtensions: extensions,
                    candidates: attributes.candidates,
                    skippedCandidates: attributes.skippedCandidates,
                    endOfCandidates: own.endOfCandidates || common.endOfCandidates
                )
            )
        }
        var bundled: Set<String> = []
        for (group, line) in session.groups {
            var seen: Set<String> = []
            for mid in group.mids {
                guard midLines[mid] != nil else {
                    throw line.error(
                        "a=group:\(group.semantics) names mid \(Excerpt.quoted(mid)), which no m-section has"
                    )
                }
                guard seen.insert(mid).inserted else {
                    throw line.error("a=group:\(group.semantics) names mid \(Excerpt.quoted(mid)) twice")
                }
                if group.isBundle {
                    guard bundled.insert(mid).inserted else {
                        throw line.error("mid \(Excerpt.quoted(mid)) is in two BUNDLE groups (RFC 8843 section 7.1)")
                    }
                }
            }
        }
        return WebRTCOffer(
            description: description,
            sections: result,
            groups: session.groups.map(\.0),
            msidSemantic: session.msidSemantic,
            isICELite: session.isICELite,
            allowsMixedHeaderExtensions: common.allowsMixedHeaderExtensions
                || sections.contains { $0.common.allowsMixedHeaderExtensions }
        )
    }

    /// An `SDPError` as a `JSEPError`: the same line, now with an excerpt of it.
    private static func error(from error: SDPError, in bytes: [UInt8]) -> JSEPError {
        let code: JSEPError.Code =
            switch error.code {
            case .tooLarge, .tooManyLines, .lineTooLong: .offerTooLarge
            default: .malformedOffer
            }
        guard let number = error.line else {
            return JSEPError(code: code, reason: "the offer is not valid SDP: \(error.message)")
        }
        let prefix = "line \(number): "
        let problem = error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message
        let raw = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        var excerpt = ""
        if number >= 1, number <= raw.count {
            var content = raw[raw.startIndex + number - 1]
            if content.last == 0x0D { content = content.dropLast() }
            excerpt = Excerpt.of(String(decoding: content, as: UTF8.self), limit: 60)
            if excerpt.hasPrefix("a=ice-pwd:") { excerpt = "a=ice-pwd:<redacted>" }
        }
        return JSEPError(code: code, line: number, reason: "line \(number) (\(excerpt)): \(problem)")
    }
}
