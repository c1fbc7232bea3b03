/// Checks a description before it is written: each field must be something `SDPParser` reads back
/// as the same value. The rules mirror the parser's (`SDPSyntax`, `SDPAttributeNames`).
enum SDPDescriptionValidator {
    static func validate(_ description: SessionDescription) throws {
        let origin = description.origin
        try require(
            SDPSyntax.isVisible(origin.username),
            "origin username \(quoted(origin.username)) must be non-empty without spaces"
        )
        try require(
            SDPSyntax.isVisible(origin.unicastAddress),
            "origin address \(quoted(origin.unicastAddress)) must be non-empty without spaces"
        )
        try require(SDPSyntax.isText(description.sessionName), "session name must not contain line breaks or NUL")
        try validate(description.attributes, reserved: SDPAttributeNames.sessionTyped, level: "session")
        for (index, media) in description.media.enumerated() {
            try validate(media, number: index + 1)
        }
    }

    private static func validate(_ media: MediaDescription, number: Int) throws {
        let section = "media section \(number)"
        try require(
            SDPSyntax.isToken(media.kind.rawValue),
            "\(section): media kind \(quoted(media.kind.rawValue)) is not a token"
        )
        try require(
            SDPSyntax.isProtocol(media.transport.rawValue),
            "\(section): transport \(quoted(media.transport.rawValue)) is not a protocol name"
        )
        if media.transport.carriesRTP {
            try require(!media.formats.isEmpty, "\(section): an RTP m= line needs at least one payload type")
            try require(media.otherFormats.isEmpty, "\(section): an RTP transport takes formats, not otherFormats")
            var seen = Set<UInt8>()
            for format in media.formats {
                try validate(format, section: section)
                try require(
                    seen.insert(format.payloadType).inserted,
                    "\(section): payload type \(format.payloadType) listed twice"
                )
            }
        } else {
            try require(media.formats.isEmpty, "\(section): a non-RTP transport takes otherFormats, not formats")
            try require(!media.otherFormats.isEmpty, "\(section): the m= line needs at least one format")
            for format in media.otherFormats {
                try require(
                    SDPSyntax.isVisible(format),
                    "\(section): format \(quoted(format)) must not be empty or contain spaces"
                )
            }
        }
        if let mid = media.mid {
            try require(SDPSyntax.isToken(mid), "\(section): mid \(quoted(mid)) is not a token")
        }
        for crypto in media.crypto {
            try validate(crypto, section: section)
        }
        for ssrc in media.ssrcAttributes {
            try require(
                SDPSyntax.isToken(ssrc.name),
                "\(section): ssrc attribute name \(quoted(ssrc.name)) is not a token"
            )
            try require(
                ssrc.value.map(SDPSyntax.isText) ?? true,
                "\(section): ssrc \(ssrc.name) value contains a line break"
            )
        }
        for group in media.ssrcGroups {
            try require(
                SDPSyntax.isToken(group.semantics),
                "\(section): ssrc-group semantics \(quoted(group.semantics)) is not a token"
            )
            try require(!group.ssrcs.isEmpty, "\(section): ssrc-group \(group.semantics) lists no SSRC")
        }
        try require(
            media.rtcpFeedback.isEmpty || media.transport.carriesRTP,
            "\(section): a=rtcp-fb needs an RTP transport"
        )
        for feedback in media.rtcpFeedback {
            try validate(feedback, in: media, section: section)
        }
        try validateSimulcast(media, section: section)
        let reserved = media.transport.carriesRTP ? SDPAttributeNames.rtpMediaTyped : SDPAttributeNames.mediaTyped
        try validate(media.attributes, reserved: reserved, level: section)
    }

    private static func validate(_ format: SDPRTPFormat, section: String) throws {
        let pt = format.payloadType
        try require(pt <= 127, "\(section): payload type \(pt) is above 127")
        if let map = format.rtpmap {
            try require(
                SDPSyntax.isToken(map.encodingName),
                "\(section): encoding name \(quoted(map.encodingName)) is not a token"
            )
            try require(map.clockRate > 0, "\(section): payload type \(pt) has clock rate 0")
            try require(map.channels != 0, "\(section): payload type \(pt) has 0 channels")
        }
        for parameter in format.parameters {
            try require(
                SDPSyntax.isFormatParameterName(parameter.name),
                "\(section): fmtp parameter name \(quoted(parameter.name)) must be non-empty without spaces, ';' or '='"
            )
            if let value = parameter.value {
                try require(
                    SDPSyntax.isFormatParameterValue(value),
                    "\(section): fmtp \(parameter.name) value must not contain ';' or line breaks, nor start or end with a space"
                )
            }
        }
    }

    private static func validate(_ feedback: SDPRTCPFeedback, in media: MediaDescription, section: String) throws {
        if let payloadType = feedback.payloadType {
            try require(
                media.format(payloadType: payloadType) != nil,
                "\(section): a=rtcp-fb for payload type \(payloadType), which the m= line does not list"
            )
        }
        try require(
            SDPSyntax.isToken(feedback.type),
            "\(section): rtcp-fb type \(quoted(feedback.type)) is not a token"
        )
        if let parameter = feedback.parameter {
            try require(
                SDPAttributeParser.isFeedbackParameter(Substring(parameter)),
                "\(section): rtcp-fb parameter \(quoted(parameter)) is not visible words separated by single spaces"
            )
        }
    }

    /// `a=rid` and `a=simulcast` go through the parser's own grammar: what is written is what
    /// the parser reads back, or the writer refuses.
    private static func validateSimulcast(_ media: MediaDescription, section: String) throws {
        try require(
            (media.rids.isEmpty && media.simulcast == nil) || media.transport.carriesRTP,
            "\(section): a=rid and a=simulcast need an RTP transport"
        )
        try require(
            media.rids.count <= SDPRID.maximumPerSection,
            "\(section): \(media.rids.count) a=rid lines; at most \(SDPRID.maximumPerSection)"
        )
        var ids: Set<String> = []
        for rid in media.rids {
            try require(ids.insert(rid.id).inserted, "\(section): a=rid \(quoted(rid.id)) is listed twice")
            try require(
                SDPRID.isValidID(rid.id),
                "\(section): a=rid id \(quoted(rid.id)) is not 1-\(SDPRID.maximumIDLength) letters, digits, "
                    + "'-' and '_' (RFC 8851 section 10)"
            )
            try readsBack(
                rid,
                as: SDPAttributeParser.rid,
                text: rid.attributeValue,
                what: "a=rid \(quoted(rid.id))",
                section
            )
            for payloadType in rid.payloadTypes ?? [] {
                try require(
                    media.format(payloadType: payloadType) != nil,
                    "\(section): a=rid \(quoted(rid.id)) restricts to payload type \(payloadType), which the m= line "
                        + "does not list"
                )
            }
        }
        if let simulcast = media.simulcast {
            try require(
                !simulcast.send.isEmpty || !simulcast.receive.isEmpty,
                "\(section): a=simulcast lists no stream in either direction"
            )
            try readsBack(
                simulcast,
                as: SDPAttributeParser.simulcast,
                text: simulcast.attributeValue,
                what: "a=simulcast",
                section
            )
        }
    }

    private static func readsBack<Value: Equatable>(
        _ value: Value,
        as parse: (Substring) throws(SDPGrammarProblem) -> Value,
        text: String,
        what: String,
        _ section: String
    ) throws {
        let parsed: Value
        do {
            parsed = try parse(Substring(text))
        } catch {
            throw SDPError.invalid("\(section): \(error.text)")
        }
        try require(parsed == value, "\(section): \(what) would not read back as written")
    }

    private static func validate(_ crypto: SDPCrypto, section: String) throws {
        try require(crypto.tag <= 999_999_999, "\(section): crypto tag \(crypto.tag) has more than 9 digits")
        try require(
            SDPSyntax.isCryptoSuite(crypto.suite),
            "\(section): crypto suite \(quoted(crypto.suite)) is not letters, digits and '_'"
        )
        try require(!crypto.keys.isEmpty, "\(section): crypto tag \(crypto.tag) has no key")
        for key in crypto.keys {
            try require(!key.keySalt.isEmpty, "\(section): crypto tag \(crypto.tag) has an empty key")
            if let lifetime = key.lifetime {
                try require(
                    SDPSyntax.isKeyLifetime(lifetime),
                    "\(section): key lifetime \(quoted(lifetime)) is not [2^]digits"
                )
            }
            if let mki = key.mki {
                try require(SDPSyntax.isMKI(mki), "\(section): MKI \(quoted(mki)) is not value:length")
            }
        }
        for parameter in crypto.sessionParameters {
            try require(
                SDPSyntax.isVisible(parameter),
                "\(section): crypto session parameter \(quoted(parameter)) contains spaces"
            )
        }
    }

    private static func validate(_ attributes: [SDPAttribute], reserved: Set<String>, level: String) throws {
        for attribute in attributes {
            try require(
                SDPSyntax.isToken(attribute.name),
                "\(level): attribute name \(quoted(attribute.name)) is not a token"
            )
            try require(
                !reserved.contains(attribute.name),
                "\(level): a=\(attribute.name) has a typed field; set that instead of a generic attribute"
            )
            try require(
                attribute.value.map(SDPSyntax.isText) ?? true,
                "\(level): a=\(attribute.name) value contains a line break"
            )
        }
    }

    private static func require(_ condition: Bool, _ problem: @autoclosure () -> String) throws {
        guard condition else { throw SDPError.invalid(problem()) }
    }
}

/// Attribute names the model keeps in typed fields, per level.
enum SDPAttributeNames {
    static let directions: Set<String> = Set(SDPDirection.allCases.map(\.rawValue))
    static let sessionTyped: Set<String> = directions
    /// Typed in every media section.
    static let mediaTyped: Set<String> = directions.union(["mid", "rtcp", "rtcp-mux", "crypto", "ssrc", "ssrc-group"])
    /// Typed in RTP media sections, where rtpmap and fmtp belong to `SDPRTPFormat`, rtcp-fb
    /// to `SDPRTCPFeedback`, rid to `SDPRID` and simulcast to `SDPSimulcast`.
    static let rtpMediaTyped: Set<String> = mediaTyped.union(["rtpmap", "fmtp", "rtcp-fb", "rid", "simulcast"])
}
